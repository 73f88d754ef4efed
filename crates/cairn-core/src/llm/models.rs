//! What a server's `GET /models` answer says of the model a setup names, and what a setup does
//! with it: the one reading and the one rule ([`EndpointCheck::rule`]) both `cairn insights
//! setup` and `cairn recall extract setup` (and extraction's doctor) follow, in the same words.
//!
//! The answer comes from a server a person named, which may be anything: ids are cleaned (no
//! control or bidirectional characters) and cut, at most [`SHOWN`] of them are kept for a
//! message, and an answer that is not a list of models is a check that could not be made,
//! never a failure of its own.

use serde::Serialize;

use super::LlmError;

/// At most this many of a server's models are named in a message.
pub const SHOWN: usize = 10;

/// How much of one model's id a message shows.
const ID_CHARS: usize = 120;

/// Whether the server lists the model a setup names.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum ModelListing {
    /// It lists the model.
    Listed,
    /// It answered with no models at all (some servers list none): the first request decides.
    NoneListed,
    /// It lists models, not this one: `shown` names the first few, cleaned, of `total`.
    Unlisted { shown: Vec<String>, total: u32 },
    /// It answered, but not with a list (an error status, a `/models` it does not serve, not
    /// JSON): `why`, cleaned. Nothing is known of the model.
    Unchecked { why: String },
    /// It could not be reached: no connection, or no answer in time (`why`, cleaned, says
    /// which). Nothing is known of the model, and a request to it would fare no better.
    Unreachable { why: String },
    /// It refused the key (HTTP 401 or 403): every request would be refused too.
    KeyRefused { why: String },
}

impl ModelListing {
    /// The reading of `answer` (a `/models` call) for `model`, compared as typed, trimmed.
    pub fn of(answer: Result<Vec<String>, LlmError>, model: &str) -> ModelListing {
        let model = model.trim();
        let why = |e: &LlmError| crate::text::one_line(&e.to_string(), 300);
        match answer {
            Err(e @ LlmError::Unreachable(_)) => ModelListing::Unreachable { why: why(&e) },
            Err(
                e @ LlmError::Rejected {
                    status: 401 | 403, ..
                },
            ) => ModelListing::KeyRefused { why: why(&e) },
            Err(e) => ModelListing::Unchecked { why: why(&e) },
            Ok(ids) if ids.is_empty() => ModelListing::NoneListed,
            Ok(ids) if ids.iter().any(|m| m == model) => ModelListing::Listed,
            Ok(ids) => ModelListing::Unlisted {
                total: u32::try_from(ids.len()).unwrap_or(u32::MAX),
                shown: ids
                    .iter()
                    .take(SHOWN)
                    .map(|m| crate::text::one_line(m, ID_CHARS))
                    .collect(),
            },
        }
    }

    /// The server's models as a message names them: the first few, and how many more.
    pub fn named(shown: &[String], total: u32) -> String {
        let more = (total as usize).saturating_sub(shown.len());
        let mut s = shown.join(", ");
        if more > 0 {
            s.push_str(&format!(" and {more} more"));
        }
        s
    }

    /// One sentence on `model` (cleaned here); unless the server lists it, ending in who decides
    /// instead (`decider`: "the probe", "the first report").
    pub fn sentence(&self, model: &str, decider: &str) -> String {
        let model = crate::text::one_line(model.trim(), ID_CHARS);
        match self {
            ModelListing::Listed => format!("the server lists {model}"),
            ModelListing::NoneListed => {
                format!("the server lists no models (some servers do not); {decider} decides")
            }
            ModelListing::Unlisted { shown, total } => format!(
                "the server does not list {model} (it lists {}); {decider} decides",
                Self::named(shown, *total)
            ),
            ModelListing::Unchecked { why } => {
                format!("the server's model list could not be read ({why}); {decider} decides")
            }
            ModelListing::Unreachable { why } => {
                format!("the server could not be reached ({why}); {decider} decides")
            }
            ModelListing::KeyRefused { why } => format!("the server refused the key: {why}"),
        }
    }

    /// Whether the server answered at all: a further request (extraction's probe) is worth
    /// sending only then.
    pub fn reached(&self) -> bool {
        !matches!(self, ModelListing::Unreachable { .. })
    }
}

/// What a setup learnt of an endpoint before saving it: its `/models` answer read for the model
/// it names (a check of the llm floor: config, below it, keeps only what is written).
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct EndpointCheck {
    /// The base URL, redacted as every endpoint is shown.
    pub endpoint: String,
    pub model: String,
    /// Whether the server lists `model`, and what it lists instead.
    pub listing: ModelListing,
}

impl EndpointCheck {
    /// The one rule both setups (`cairn recall extract setup`, `cairn insights setup`) save an
    /// endpoint by, so the same server and model are saved by both or by neither:
    ///
    /// - a model the server's list does not name is refused unless `model_unlisted`: a typo
    ///   would otherwise surface only at the first pass or report, and a server that answers
    ///   to a name it does not list (a proxy's fallback, a default model) may be answering
    ///   with another model than the one a generation or a report is then said to be from;
    /// - a key the server refuses is refused: every request would be too;
    /// - a list that could not be read, or a server that could not be reached, does not stop
    ///   the save: the person named everything a request needs, and a server that is down
    ///   now (not started yet, another machine asleep) is no reason to type it all again.
    ///   [`EndpointCheck::note`] says what went unchecked.
    pub fn rule(&self, model_unlisted: bool) -> crate::Result<()> {
        match &self.listing {
            ModelListing::Unlisted { shown, total } if !model_unlisted => {
                Err(crate::Error::Invalid(format!(
                    "--model: {} does not list {} (it lists {}); nothing was saved: name one it lists, or pass --model-unlisted to save it anyway",
                    self.endpoint,
                    crate::text::one_line(self.model.trim(), ID_CHARS),
                    ModelListing::named(shown, *total)
                )))
            }
            ModelListing::KeyRefused { why } => {
                Err(crate::Error::External(format!("{why}; nothing was saved")))
            }
            _ => Ok(()),
        }
    }

    /// What a setup that saves says of its check, `None` when the server lists the model;
    /// `decider` is what tells whether the model answers ("the test request", "the first
    /// report"), `recheck` what checks a server that could not be reached once it answers
    /// ("`cairn recall extract doctor` checks it").
    pub fn note(&self, decider: &str, recheck: &str) -> Option<String> {
        let model = crate::text::one_line(self.model.trim(), ID_CHARS);
        match &self.listing {
            ModelListing::Listed => None,
            ModelListing::Unlisted { .. } => Some(format!(
                "{}; saved as --model-unlisted asks",
                self.listing.sentence(&self.model, decider)
            )),
            ModelListing::Unchecked { why } => Some(format!(
                "{model} is saved unchecked: the server's model list could not be read ({why}); {decider} decides"
            )),
            ModelListing::Unreachable { why } => Some(format!(
                "{model} is saved unchecked: {why}; once the server answers, {recheck}"
            )),
            other => Some(other.sentence(&self.model, decider)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hostile_ids_are_cleaned_and_at_most_ten_are_kept() {
        let mut ids: Vec<String> = (0..10_000).map(|i| format!("m{i}")).collect();
        ids[0] = "evil\u{1b}[31m\u{202e}txt.exe".into();
        let listing = ModelListing::of(Ok(ids), "nothere");
        let ModelListing::Unlisted { shown, total } = &listing else {
            panic!("{listing:?}");
        };
        assert_eq!((shown.len(), *total), (SHOWN, 10_000_u32));
        let said = listing.sentence("nothere", "the first report");
        assert!(
            !said.contains('\u{1b}') && !said.contains('\u{202e}'),
            "{said:?}"
        );
        assert!(said.contains("and 9990 more"), "{said}");
        assert!(said.len() < 2_000, "{}", said.len());
    }

    #[test]
    fn a_listed_model_an_empty_list_and_no_answer_are_told_apart() {
        let ids = || Ok(vec!["a".to_owned(), "b".to_owned()]);
        assert_eq!(ModelListing::of(ids(), " b "), ModelListing::Listed);
        assert_eq!(
            ModelListing::of(Ok(Vec::new()), "b"),
            ModelListing::NoneListed
        );
        let failed = ModelListing::of(Err(LlmError::Config("no\u{7}".into())), "b");
        assert!(
            matches!(&failed, ModelListing::Unchecked { why } if !why.contains('\u{7}')),
            "{failed:?}"
        );
    }

    fn check(listing: ModelListing) -> EndpointCheck {
        EndpointCheck {
            endpoint: "http://127.0.0.1:9/v1".into(),
            model: "m".into(),
            listing,
        }
    }

    /// The rule both setups save by: an unlisted model only when asked for, a refused key
    /// never, a list that could not be read or a server that could not be reached saved with
    /// a note saying so.
    #[test]
    fn the_setup_rule_refuses_an_unlisted_model_and_a_refused_key_only() {
        let unlisted = check(ModelListing::Unlisted {
            shown: vec!["a".into()],
            total: 1,
        });
        let err = unlisted.rule(false).unwrap_err();
        assert_eq!(err.kind(), crate::ErrorKind::Invalid);
        let said = err.to_string();
        assert!(
            said.contains("does not list m (it lists a)") && said.contains("--model-unlisted"),
            "{said}"
        );
        assert!(unlisted.rule(true).is_ok());
        assert!(unlisted.note("the first report", "").is_some());
        let refused = check(ModelListing::of(
            Err(LlmError::Rejected {
                status: 401,
                endpoint: "http://127.0.0.1:9/v1".into(),
                detail: "bad key".into(),
            }),
            "m",
        ));
        assert!(matches!(refused.listing, ModelListing::KeyRefused { .. }));
        for allowed in [false, true] {
            let err = refused.rule(allowed).unwrap_err().to_string();
            assert!(err.contains("nothing was saved"), "{err}");
        }
        let down = check(ModelListing::of(
            Err(LlmError::Unreachable("could not connect".into())),
            "m",
        ));
        assert!(!down.listing.reached());
        assert!(down.rule(false).is_ok());
        let note = down
            .note("the first report", "the first report tells")
            .unwrap_or_default();
        assert!(
            note.contains("saved unchecked") && note.contains("could not connect"),
            "{note}"
        );
        let broken = check(ModelListing::of(
            Err(LlmError::Busy {
                status: 500,
                endpoint: "http://127.0.0.1:9/v1".into(),
                detail: "boom".into(),
            }),
            "m",
        ));
        assert!(broken.listing.reached() && broken.rule(false).is_ok());
        assert!(check(ModelListing::Listed).note("x", "y").is_none());
    }
}

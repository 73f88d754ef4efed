//! What a server's `GET /models` answer says of the model a setup names: the one reading both
//! `cairn insights setup` and extraction's check (`recall extract doctor`, and so `recall
//! extract setup`'s test) make, in the same words.
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
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum ModelListing {
    /// It lists the model.
    Listed,
    /// It answered with no models at all (some servers list none): the first request decides.
    NoneListed,
    /// It lists models, not this one: `shown` names the first few, cleaned, of `total`.
    Unlisted { shown: Vec<String>, total: usize },
    /// `/models` did not answer with a list (unreachable, an error status, not JSON): `why`,
    /// cleaned. Nothing is known of the model.
    Unchecked { why: String },
}

impl ModelListing {
    /// The reading of `answer` (a `/models` call) for `model`, compared as typed, trimmed.
    pub fn of(answer: Result<Vec<String>, LlmError>, model: &str) -> ModelListing {
        let model = model.trim();
        match answer {
            Err(e) => ModelListing::Unchecked {
                why: crate::text::one_line(&e.to_string(), 300),
            },
            Ok(ids) if ids.is_empty() => ModelListing::NoneListed,
            Ok(ids) if ids.iter().any(|m| m == model) => ModelListing::Listed,
            Ok(ids) => ModelListing::Unlisted {
                total: ids.len(),
                shown: ids
                    .iter()
                    .take(SHOWN)
                    .map(|m| crate::text::one_line(m, ID_CHARS))
                    .collect(),
            },
        }
    }

    /// The server's models as a message names them: the first few, and how many more.
    pub fn named(shown: &[String], total: usize) -> String {
        let more = total.saturating_sub(shown.len());
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
        }
    }
}

/// What `cairn insights setup` learnt of an endpoint before saving it (a check of the llm floor:
/// config, below it, keeps only what is written).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct InsightsEndpointCheck {
    /// The base URL, redacted as every endpoint is shown.
    pub endpoint: String,
    pub model: String,
    /// Whether the server lists `model`, and what it lists instead.
    pub listing: ModelListing,
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
        assert_eq!((shown.len(), *total), (SHOWN, 10_000));
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
}

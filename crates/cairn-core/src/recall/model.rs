//! The Recall entry model (AgentsView's, §1 of its reference): entries with type, scope, status,
//! review state and provenance; evidence anchored to record ordinals of the source session.
//! Every enum is validated here and by CHECK constraints in the schema.

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

macro_rules! string_enum {
    ($(#[$meta:meta])* $name:ident { $($variant:ident => $text:literal),+ $(,)? }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
        #[cfg_attr(feature = "specta", derive(specta::Type))]
        #[serde(rename_all = "snake_case")]
        pub enum $name { $($variant),+ }

        impl $name {
            pub const ALL: &'static [$name] = &[$($name::$variant),+];
            /// The wire strings, in [`Self::ALL`]'s order (what a front door offers).
            pub const NAMES: &'static [&'static str] = &[$($text),+];

            pub fn as_str(self) -> &'static str {
                match self { $($name::$variant => $text),+ }
            }

            /// Parse, or an error that lists the valid values.
            pub fn parse(s: &str) -> Result<$name> {
                match s.trim() {
                    $($text => Ok($name::$variant),)+
                    other => Err(Error::Invalid(format!(
                        "unknown {} {other:?}; expected one of: {}",
                        words(stringify!($name)),
                        [$($text),+].join(", ")
                    ))),
                }
            }
        }

        /// Compares by the wire string (`entry.lifecycle() == "active"`).
        impl PartialEq<&str> for $name {
            fn eq(&self, other: &&str) -> bool {
                self.as_str() == *other
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}

/// A type's name as words: `EntryType` → `entry type` (what an error calls the field).
fn words(name: &str) -> String {
    let mut out = String::new();
    for (i, c) in name.chars().enumerate() {
        if c.is_uppercase() && i > 0 {
            out.push(' ');
        }
        out.extend(c.to_lowercase());
    }
    out
}

string_enum!(
    /// What kind of knowledge an entry holds.
    EntryType {
        Fact => "fact",
        Decision => "decision",
        Procedure => "procedure",
        DebuggingMethod => "debugging_method",
        Warning => "warning",
        Preference => "preference",
        OpenQuestion => "open_question",
    }
);

string_enum!(
    /// Where an entry applies.
    Scope {
        Global => "global",
        Project => "project",
        Repository => "repository",
        Branch => "branch",
        File => "file",
        Tool => "tool",
        Agent => "agent",
    }
);

string_enum!(
    /// `accepted` entries are served; `archived` ones (rejected, superseded, retired) are not.
    Status {
        Accepted => "accepted",
        Archived => "archived",
    }
);

string_enum!(
    /// Trust provenance. Only a person reviewing an entry (the inbox, or a reviewed import)
    /// makes it `human_reviewed`; extraction always writes `unreviewed_auto`.
    ReviewState {
        HumanReviewed => "human_reviewed",
        UnreviewedAuto => "unreviewed_auto",
        CalibratedAuto => "calibrated_auto",
        EvalRaw => "eval_raw",
    }
);

string_enum!(
    /// AgentsView's lifecycle bucket of an entry: what supersedes what.
    Lifecycle {
        Active => "active",
        Superseded => "superseded",
        Replacement => "replacement",
        ReplacementSuperseded => "replacement_superseded",
    }
);

impl Lifecycle {
    /// The bucket of an entry that supersedes another (`supersedes`), is superseded
    /// (`superseded_by`), and is archived or not.
    pub fn of(supersedes: bool, superseded_by: bool, archived: bool) -> Lifecycle {
        match (supersedes, superseded_by) {
            (true, true) => Lifecycle::ReplacementSuperseded,
            (true, false) => Lifecycle::Replacement,
            (false, true) => Lifecycle::Superseded,
            (false, false) if archived => Lifecycle::Superseded,
            _ => Lifecycle::Active,
        }
    }
}

string_enum!(
    /// Which door asked Recall, as the ledger records it.
    Surface {
        Query => "query",
        Brief => "brief",
        Ui => "ui",
    }
);

/// Why a query answered nothing useful, as the ledger records it and `QueryResponse` says.
/// (The bindings carry it as a string: specta cannot name the empty variant.)
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum MissReason {
    /// It answered (serialised as the empty string, as before the type).
    #[default]
    #[serde(rename = "")]
    None,
    /// No entry matched.
    #[serde(rename = "no_results")]
    NoResults,
    /// Entries matched but none fit the context budget.
    #[serde(rename = "context_empty")]
    ContextEmpty,
}

impl MissReason {
    pub fn as_str(self) -> &'static str {
        match self {
            MissReason::None => "",
            MissReason::NoResults => "no_results",
            MissReason::ContextEmpty => "context_empty",
        }
    }

    pub fn is_miss(self) -> bool {
        self != MissReason::None
    }
}

impl PartialEq<&str> for MissReason {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl std::fmt::Display for MissReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The closed sets a front door offers as choices (the UI's type and scope pickers), so that no
/// door lists them again.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct Vocabulary {
    pub entry_types: Vec<EntryType>,
    pub scopes: Vec<Scope>,
}

impl Vocabulary {
    pub fn get() -> Vocabulary {
        Vocabulary {
            entry_types: EntryType::ALL.to_vec(),
            scopes: Scope::ALL.to_vec(),
        }
    }
}

/// One distilled entry.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct Entry {
    pub id: String,
    #[serde(rename = "type")]
    pub entry_type: EntryType,
    pub scope: Scope,
    pub status: Status,
    pub review_state: ReviewState,
    pub title: String,
    pub body: String,
    pub trigger: String,
    pub confidence: Option<f64>,
    pub uncertainty: String,
    pub project: String,
    pub cwd: String,
    pub git_branch: String,
    pub agent: String,
    /// The session the entry was distilled from (`session_key`).
    pub source_session_key: Option<String>,
    pub source_episode_id: String,
    pub source_run_id: String,
    pub extractor_method: String,
    pub model: String,
    pub transferable: bool,
    pub provenance_ok: bool,
    /// [`Entry::is_trusted`], decided by the core when the entry is read: the front doors show
    /// it and never decide trust themselves.
    #[serde(default)]
    pub trusted: bool,
    /// Why provenance was revoked, when it was.
    pub provenance_note: Option<String>,
    /// Files the evidence cites changed after it was recorded: needs re-review.
    pub stale: bool,
    pub stale_note: Option<String>,
    pub supersedes_entry_id: String,
    pub superseded_by_entry_id: String,
    pub created_at: String,
    pub updated_at: String,
    pub reviewed_at: Option<String>,
    pub evidence: Vec<Evidence>,
}

impl Entry {
    /// The trusted-only predicate: accepted, human reviewed, transferable, provenance intact,
    /// and not stale. A stale entry (a file its evidence cites changed in a later commit) is
    /// back in the review inbox, and PRODUCT.md's "surfaces in the inbox for re-review" means
    /// nobody has vouched for it as it stands: no reader serves it as trusted until a person
    /// accepts it again (which clears the flag). Every reader decides trust here or through
    /// [`TRUSTED_SQL`], its SQL twin.
    pub fn is_trusted(&self) -> bool {
        self.status == Status::Accepted
            && self.review_state == ReviewState::HumanReviewed
            && self.transferable
            && self.provenance_ok
            && !self.stale
    }

    /// AgentsView's lifecycle bucket.
    pub fn lifecycle(&self) -> Lifecycle {
        Lifecycle::of(
            !self.supersedes_entry_id.is_empty(),
            !self.superseded_by_entry_id.is_empty(),
            self.status == Status::Archived,
        )
    }
}

/// A range of records of the source session that supports an entry.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct Evidence {
    pub session_key: String,
    /// The agent of the session it cites (the entry's agent badges), when read from the archive.
    #[serde(default)]
    pub agent: Option<crate::archive::Agent>,
    pub ordinal_start: u32,
    pub ordinal_end: u32,
    /// Stable identities of the first and last record (`<record_hash>#<block>`), used to find
    /// the records again if ordinals ever shift.
    pub start_record: String,
    pub end_record: String,
    /// SHA-256 over the records' content (not their positions): a changed record revokes.
    pub content_digest: String,
    pub tool_use_id: Option<String>,
    pub snippet: String,
    /// Repo-relative files the evidence cites (edits in range): what staleness watches.
    pub files: Vec<String>,
}

/// SQL predicate of the trusted-only filter over `recall_entries e`: [`Entry::is_trusted`].
/// Migration 17's partial index `recall_entries_trusted` holds the rows of every term but
/// `stale = 0` (added later; stale entries are few), so a read through it still tests that one.
pub const TRUSTED_SQL: &str = "e.status = 'accepted' AND e.review_state = 'human_reviewed' AND e.transferable = 1 AND e.provenance_ok = 1 AND e.stale = 0";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn enums_parse_and_reject_with_the_valid_values() {
        assert_eq!(
            EntryType::parse("debugging_method").unwrap(),
            EntryType::DebuggingMethod
        );
        let err = ReviewState::parse("trusted").unwrap_err().to_string();
        assert!(
            err.contains("unknown review state \"trusted\"") && err.contains("human_reviewed"),
            "{err}"
        );
        assert_eq!(Scope::ALL.len(), 7);
        assert_eq!(
            serde_json::to_string(&EntryType::OpenQuestion).unwrap(),
            "\"open_question\""
        );
    }
}

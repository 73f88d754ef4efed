//! The outbound guard: every piece of text the client sends passes here first.
//!
//! 1. [`Redactor::outbound_text`] removes secrets and absolute paths (paths under the session's
//!    repository become repo-relative; any other deep, home or `~` path becomes
//!    `[REDACTED:path]`).
//! 2. The result is scanned again — secrets *and* paths — and any hit refuses the request
//!    ([`LlmError::Refused`]): the guard fails closed rather than trusting step 1.
//!
//! [`check_joined`] covers what per-string scanning cannot see: a secret split across two
//! transcript records. It scans the pieces concatenated without separators; [`joined_secrets`]
//! is that scan, saying where each secret's pieces lie, for a caller that marks them instead of
//! refusing (an export, `views::export`).

use crate::archive::redact::{Confidence, Redactor};

use super::LlmError;

/// Where text is going out from: decides which absolute paths become relative.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Outbound {
    /// The repository (or working directory) of the session the text came from.
    pub repo_root: Option<String>,
    /// The user's home directory (`~/…` and anything below it is always removed).
    pub home: Option<String>,
}

impl Outbound {
    /// Text from a session rooted at `repo_root` (None: no path is kept).
    pub fn for_root(repo_root: Option<&str>) -> Outbound {
        Outbound {
            repo_root: repo_root.map(str::to_owned),
            home: dirs::home_dir().map(|h| h.to_string_lossy().into_owned()),
        }
    }

    /// Redact `text` for sending, then re-scan the result; any remaining secret or absolute
    /// path refuses it.
    pub fn clean(&self, text: &str) -> Result<String, LlmError> {
        let r = Redactor::global();
        let mut found = Vec::new();
        let out = r.outbound_text(
            text,
            self.repo_root.as_deref(),
            self.home.as_deref(),
            &mut found,
        );
        self.rescan(&out)?;
        Ok(out)
    }

    /// Text coming back from a model, redacted as outgoing text is (secrets, and absolute
    /// paths but those under the session's repository): the model was only ever shown text
    /// this redactor had passed, so a secret or a home path in its answer was decoded or made
    /// up, and is no more fit to be stored or shown than one in a transcript would be sent.
    /// Never refuses: the answer is kept, with markers where the redactor found something.
    pub fn redact_answer(&self, text: &str) -> String {
        Redactor::global().outbound_text(
            text,
            self.repo_root.as_deref(),
            self.home.as_deref(),
            &mut Vec::new(),
        )
    }

    /// The final check on text about to leave: it must come back from the outbound redactor
    /// unchanged, with no finding.
    pub fn rescan(&self, text: &str) -> Result<(), LlmError> {
        let r = Redactor::global();
        if let Some(f) = r.scan_text(text).first() {
            return Err(LlmError::Refused(format!(
                "the outbound re-scan still found a secret (rule {}) after redaction",
                f.rule
            )));
        }
        let mut again = Vec::new();
        r.outbound_text(
            text,
            self.repo_root.as_deref(),
            self.home.as_deref(),
            &mut again,
        );
        if let Some(f) = again.first() {
            return Err(LlmError::Refused(format!(
                "the outbound re-scan still found {} after redaction",
                if f.rule == crate::archive::redact::PATH {
                    "an absolute path".to_owned()
                } else {
                    format!("a secret (rule {})", f.rule)
                }
            )));
        }
        Ok(())
    }
}

/// A definite secret found in pieces joined as [`check_joined`] joins them, and where it lies.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JoinedSecret {
    /// The rule that found it (`aws-access-key`, …).
    pub rule: &'static str,
    /// Each piece holding part of it: the index of the piece in the `parts` given and the byte
    /// range within that piece (as given, before trimming). Two or more for a secret split
    /// across pieces; one for a secret a single piece holds whole.
    pub pieces: Vec<(usize, std::ops::Range<usize>)>,
}

/// Scan `parts` joined with no separator (each trimmed, as a reader running one record's text
/// into the next would see them): every definite secret, in the order the scanner finds them,
/// with the pieces it lies in. The one scan behind [`check_joined`] and an export's marking.
pub fn joined_secrets(parts: &[&str]) -> Vec<JoinedSecret> {
    let mut joined = String::new();
    // For each part: where its trimmed text starts in `joined`, how much it lost in front, and
    // its trimmed length.
    let mut placed = Vec::with_capacity(parts.len());
    for p in parts {
        let kept = p.trim();
        placed.push((joined.len(), p.len() - p.trim_start().len(), kept.len()));
        joined.push_str(kept);
    }
    Redactor::global()
        .scan_text(&joined)
        .into_iter()
        .filter(|f| f.confidence == Confidence::Definite)
        .map(|f| JoinedSecret {
            rule: f.rule,
            pieces: placed
                .iter()
                .enumerate()
                .filter_map(|(i, &(at, front, len))| {
                    let (start, end) = (f.start.max(at), f.end.min(at + len));
                    (start < end).then(|| (i, start - at + front..end - at + front))
                })
                .collect(),
        })
        .collect()
}

/// Scan `parts` joined with no separator: a definite secret split across two pieces (two
/// records of a transcript) shows up here although neither piece holds it. Fails closed.
pub fn check_joined(parts: &[&str]) -> Result<(), LlmError> {
    match joined_secrets(parts).first() {
        Some(f) => Err(LlmError::Refused(format!(
            "a secret (rule {}) spans two transcript records; redact it in the transcript or leave this session out",
            f.rule
        ))),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ob() -> Outbound {
        Outbound {
            repo_root: Some("/home/ann/repo".into()),
            home: Some("/home/ann".into()),
        }
    }

    #[test]
    fn clean_redacts_secrets_and_paths() {
        let out = ob()
            .clean("edit /home/ann/repo/src/a.rs with key ghp_EXAMPLE00000000000000000000000000000 then cat /home/ann/.aws/credentials")
            .unwrap();
        assert_eq!(
            out,
            "edit src/a.rs with key [REDACTED:github-pat] then cat [REDACTED:path]"
        );
        ob().rescan(&out).unwrap();
    }

    #[test]
    fn an_answer_is_redacted_as_a_request_is() {
        let out = ob().redact_answer(
            "use ghp_EXAMPLE00000000000000000000000000000 from /home/ann/.aws/x, see /home/ann/repo/src/a.rs",
        );
        assert_eq!(
            out,
            "use [REDACTED:github-pat] from [REDACTED:path], see src/a.rs"
        );
    }

    #[test]
    fn rescan_refuses_what_is_left() {
        let err = ob()
            .rescan("token ghp_EXAMPLE00000000000000000000000000000")
            .unwrap_err();
        assert!(matches!(err, LlmError::Refused(_)), "{err}");
        assert!(!err.to_string().contains("ghp_"), "{err}");
        assert!(ob().rescan("see /home/ann/notes/x.md").is_err());
        assert!(ob().rescan("see src/x.md and /tmp").is_ok());
    }

    #[test]
    fn joined_pieces_catch_a_split_secret() {
        assert!(
            check_joined(&["the key is ghp_EXAMPLE0000000000", "0000000000000000000"]).is_err()
        );
        assert!(check_joined(&["first message", "second message"]).is_ok());
    }

    #[test]
    fn a_split_secret_is_found_in_each_of_its_pieces_as_given() {
        let parts = [
            "no secret here",
            "  the id begins AKIAZ7Q4N2M8 \n",
            "",
            "\tK3T6W1XR ends it",
        ];
        let found = joined_secrets(&parts);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].rule, "aws-access-key");
        let pieces: Vec<&str> = found[0]
            .pieces
            .iter()
            .map(|(i, r)| &parts[*i][r.clone()])
            .collect();
        assert_eq!(pieces, ["AKIAZ7Q4N2M8", "K3T6W1XR"]);
        assert_eq!(found[0].pieces[0].0, 1);
        assert_eq!(found[0].pieces[1].0, 3);
        assert!(joined_secrets(&["first message", "second message"]).is_empty());
    }
}

//! Identity keys, byte-for-byte compatible with agentlog where agentlog defines them.
//!
//! * `session_key` / `source_key`: `sha256-` + hex of the first 16 bytes of
//!   SHA-256(`agent` + NUL + identity). The identity of a session is the provider's session id
//!   (the transcript path when the transcript has none); the identity of a source is its
//!   canonical path as raw OS bytes.
//! * `record_hash`: `sha256:` (colon) + the full hex SHA-256 of the raw line with trailing ASCII
//!   whitespace trimmed, for every line redaction leaves alone. A line redaction changed is keyed
//!   by its *redacted* form instead ([`redacted_record_hash`], Cairn's own): the archive keeps the
//!   redacted line, so a hash of the raw one would let anyone test guesses of what was removed
//!   (put a guess where the marker is, hash, compare).
//! * `turn_key`: Cairn's own. A turn is a conversation turn, keyed by the session and the record
//!   hash of the line that opened it, so the key is stable while the turn grows.

use sha2::{Digest, Sha256};
use std::path::Path;

use crate::agent::Agent;

/// `sha256-` + 32 hex chars over the given parts joined by NUL.
fn short_key(parts: &[&[u8]]) -> String {
    let mut hasher = Sha256::new();
    for (i, part) in parts.iter().enumerate() {
        if i > 0 {
            hasher.update([0u8]);
        }
        hasher.update(part);
    }
    let digest = hasher.finalize();
    format!("sha256-{}", hex::encode(&digest[..16]))
}

/// The key of a session: provider session id when known, else the transcript path.
pub fn session_key(agent: Agent, identity: &[u8]) -> String {
    short_key(&[agent.as_str().as_bytes(), identity])
}

/// The key of one source file of a session.
pub fn source_key(agent: Agent, canonical_path: &Path) -> String {
    short_key(&[
        agent.as_str().as_bytes(),
        path_bytes(canonical_path).as_ref(),
    ])
}

/// The hash of one raw transcript line (trailing ASCII whitespace ignored).
pub fn record_hash(raw_line: &[u8]) -> String {
    let trimmed = trim_ascii_end(raw_line);
    format!("sha256:{}", hex::encode(Sha256::digest(trimmed)))
}

/// The key of a line redaction changed: SHA-256 over a domain tag and the redacted line
/// (trailing ASCII whitespace ignored), written like a record hash. It says nothing the stored
/// redacted line does not, and is the same every time the line is read with the same rules. The
/// tag keeps it from ever equalling the agentlog hash of a raw line that happens to read like
/// a redacted one.
pub fn redacted_record_hash(redacted_line: &[u8]) -> String {
    let mut hasher = Sha256::new();
    hasher.update(b"cairn/redacted-line/v1\0");
    hasher.update(trim_ascii_end(redacted_line));
    format!("sha256:{}", hex::encode(hasher.finalize()))
}

/// The hash of a keyed record: which record (`key`) of which unit (`unit`, the agent's own id
/// of a message) it is, independent of its content, so a unit the agent rewrites updates its
/// records instead of adding new ones. Scoped to the session by the records table.
pub fn keyed_record_hash(agent: Agent, unit: &str, key: &str) -> String {
    let mut hasher = Sha256::new();
    hasher.update(b"cairn-record\0");
    hasher.update(agent.as_str().as_bytes());
    hasher.update(b"\0");
    hasher.update(unit.as_bytes());
    hasher.update(b"\0");
    hasher.update(key.as_bytes());
    format!("sha256:{}", hex::encode(hasher.finalize()))
}

/// The hash of a record identified by its position: the line's own key (`line_hash`, never the
/// raw line, so no secret is hashed) with its number among the file's lines. Stable for
/// append-only files, where a line never moves.
pub fn record_hash_at(line_hash: &str, line_no: u64) -> String {
    let mut hasher = Sha256::new();
    hasher.update(b"cairn-line-at\0");
    hasher.update(line_no.to_string().as_bytes());
    hasher.update(b"\0");
    hasher.update(line_hash.as_bytes());
    format!("sha256:{}", hex::encode(hasher.finalize()))
}

/// Stable key of a conversation turn: session key and the record hash of its opening line.
pub fn turn_key(session_key: &str, opening_record_hash: &str) -> String {
    short_key(&[session_key.as_bytes(), opening_record_hash.as_bytes()])
}

/// agentlog's path fingerprint: first 16 bytes of SHA-256 of a repo-relative path, no prefix.
pub fn path_fingerprint(repo_relative: &str) -> String {
    hex::encode(&Sha256::digest(repo_relative.as_bytes())[..16])
}

/// A short digest of a list of fields, each absent or some bytes: every field is framed by
/// its presence and length, so no two lists share a digest by moving bytes from one field to
/// the next. Fed to the hash as they are (no serialising, no copying).
pub fn fields_digest(fields: &[Option<&[u8]>]) -> String {
    let mut hasher = Sha256::new();
    hasher.update(b"cairn-fields\0");
    for field in fields {
        match field {
            None => hasher.update([0u8]),
            Some(bytes) => {
                hasher.update([1u8]);
                hasher.update((bytes.len() as u64).to_le_bytes());
                hasher.update(bytes);
            }
        }
    }
    let mut d = hex::encode(hasher.finalize());
    d.truncate(32);
    d
}

/// Full SHA-256 hex of some bytes, used for content digests.
pub fn digest_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

pub(crate) fn trim_ascii_end(bytes: &[u8]) -> &[u8] {
    let mut end = bytes.len();
    while end > 0 && bytes[end - 1].is_ascii_whitespace() {
        end -= 1;
    }
    &bytes[..end]
}

#[cfg(unix)]
fn path_bytes(path: &Path) -> std::borrow::Cow<'_, [u8]> {
    use std::os::unix::ffi::OsStrExt;
    std::borrow::Cow::Borrowed(path.as_os_str().as_bytes())
}

#[cfg(not(unix))]
fn path_bytes(path: &Path) -> std::borrow::Cow<'_, [u8]> {
    std::borrow::Cow::Owned(path.to_string_lossy().into_owned().into_bytes())
}

#[cfg(test)]
mod tests {

    use super::*;

    #[test]
    fn fields_digest_frames_every_field() {
        let s = |t: &'static str| Some(t.as_bytes());
        let d = fields_digest;
        assert_eq!(d(&[s("a"), None]).len(), 32);
        assert_eq!(d(&[s("x"), None]), d(&[s("x"), None]));
        assert_ne!(d(&[s("ab"), s("")]), d(&[s("a"), s("b")]));
        assert_ne!(d(&[None]), d(&[s("")]));
        assert_ne!(d(&[None, s("x")]), d(&[s("x"), None]));
    }

    // Golden values from agentlog's formulas (reference/agentlog.md §2 and §13).
    #[test]
    fn session_keys_match_agentlog() {
        assert_eq!(
            session_key(Agent::Codex, b"session-1"),
            "sha256-6cd272dd886b6129c5dd7f2144b048d0"
        );
        assert_eq!(
            session_key(Agent::Claude, b"claude-session-1"),
            "sha256-8eac385275627b730d7145fbfb213204"
        );
    }

    #[test]
    fn record_hash_matches_agentlog_and_ignores_trailing_whitespace() {
        let line = br#"{"timestamp":"2026-05-07T09:00:01Z","type":"response_item","payload":{"type":"message","content":"hello"}}"#;
        let expected = "sha256:e59331e82654cba858b48550e848eaf09b9615a2fa58177f58fa0c09d7d4e593";
        assert_eq!(record_hash(line), expected);
        let mut padded = line.to_vec();
        padded.extend_from_slice(b" \r\n");
        assert_eq!(record_hash(&padded), expected);
    }

    #[test]
    fn redacted_lines_are_keyed_apart_from_raw_lines() {
        let line = br#"{"a":"[REDACTED:github-pat]"}"#;
        let key = redacted_record_hash(line);
        assert!(key.starts_with("sha256:") && key.len() == 7 + 64);
        assert_ne!(key, record_hash(line));
        assert_eq!(key, redacted_record_hash(&[&line[..], b"\n"].concat()));
    }

    #[test]
    fn path_fingerprint_matches_agentlog() {
        assert_eq!(
            path_fingerprint("src/lib.rs"),
            "b1a35a68f14e696205874893c07fd24f"
        );
    }

    #[test]
    fn turn_key_depends_on_session_and_opening_record() {
        let a = turn_key("sha256-1", "sha256:aa");
        assert_eq!(a, turn_key("sha256-1", "sha256:aa"));
        assert_ne!(a, turn_key("sha256-2", "sha256:aa"));
        assert_ne!(a, turn_key("sha256-1", "sha256:ab"));
        assert!(a.starts_with("sha256-") && a.len() == 7 + 32);
    }
}

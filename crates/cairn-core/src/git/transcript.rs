//! The full published session: what `cairn publish --full` writes beside `session.json` as
//! `transcript.json.zst` (a zstd-compressed JSON envelope around the session's ATIF trajectory,
//! the same one `cairn export --format atif` writes), and what `cairn pull` accepts of it.
//!
//! Leaving: the trajectory is built from the archive's redacted records, then every string of it
//! goes through the outbound redactor ([`outbound`]: paths under the repository made relative,
//! other absolute paths removed, escape sequences out), and a final scan refuses to write a
//! session in which a secret is still found. Sizes are capped before compression
//! ([`limits::JSON_BYTES`]) and after ([`limits::COMPRESSED_BYTES`]).
//!
//! Arriving: the compressed size is read before the blob is ([`super::publish`]); decompression
//! stops at [`limits::JSON_BYTES`] and a frame asking for a window above 16 MiB is refused; the
//! envelope's schema is read first, so an unknown version is refused with what to do; then the
//! envelope is parsed strictly and checked ([`PublishedTranscript::check`]). What passes is
//! captured like `cairn import` captures an ATIF file: through the inbound redactor, as a
//! session of agent `atif` whose key is derived from the publisher's, so it can never take the
//! place of a session this machine captured.

use std::io::Read;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::document::is_key;
use crate::archive::redact::{self, Redactor};
use crate::text::{is_bidi_control, one_line, printable};

/// Schema of the envelope.
pub const TRANSCRIPT_SCHEMA: &str = "cairn.published-transcript.v1";
/// Its file name in a published commit's tree.
pub const TRANSCRIPT_FILE: &str = "transcript.json.zst";

/// What a transcript may hold. Publishing refuses a session over them (the metadata document is
/// still written); pulling refuses the transcript whole.
pub mod limits {
    /// Bytes of `transcript.json.zst` as stored in git.
    pub const COMPRESSED_BYTES: u64 = 8 * 1024 * 1024;
    /// Bytes of the envelope once decompressed.
    pub const JSON_BYTES: u64 = 32 * 1024 * 1024;
    /// Characters of the publisher's name.
    pub const PUBLISHER_CHARS: usize = 200;
    /// Steps of a trajectory (as `cairn import` allows).
    pub const STEPS: usize = 100_000;
    /// The largest zstd window a frame may ask for (log2): 16 MiB of decoder memory.
    pub const WINDOW_LOG: u32 = 24;
}

/// The envelope.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PublishedTranscript {
    pub schema: String,
    /// The publisher's session key: the ref's own.
    pub session_key: String,
    /// Who published it, as their git config names them (`Name <email>`): a claim.
    pub publisher: String,
    pub published_at: String,
    /// An ATIF trajectory whose `session_id` is `session_key`.
    pub trajectory: Value,
}

/// Why a transcript was refused: one line, nothing of the document in it but what was checked
/// to be harmless, or cleaned and cut.
pub type Refusal = String;

/// A publisher name Cairn accepts: printable, not blank, bounded.
pub fn publisher_ok(s: &str) -> bool {
    !s.trim().is_empty()
        && s.chars().count() <= limits::PUBLISHER_CHARS
        && !s.chars().any(|c| c.is_control() || is_bidi_control(c))
}

impl PublishedTranscript {
    /// Every check a teammate's transcript must pass for the ref keyed `ref_key`.
    pub fn check(&self, ref_key: &str) -> Result<(), Refusal> {
        if self.schema != TRANSCRIPT_SCHEMA {
            return Err(format!("transcript schema is not {TRANSCRIPT_SCHEMA}"));
        }
        if !is_key(&self.session_key) {
            return Err("the transcript's session_key is not sha256- and 32 hex digits".to_owned());
        }
        if self.session_key != ref_key {
            return Err(format!(
                "the transcript's session_key {} is not the ref's own key",
                self.session_key
            ));
        }
        if !publisher_ok(&self.publisher) {
            return Err(format!(
                "the publisher is not a printable name of at most {} characters",
                limits::PUBLISHER_CHARS
            ));
        }
        if crate::text::parse_rfc3339(&self.published_at).is_none() {
            return Err("the transcript's published_at is not an RFC 3339 timestamp".to_owned());
        }
        let Some(t) = self.trajectory.as_object() else {
            return Err("the trajectory is not a JSON object".to_owned());
        };
        match t.get("schema_version").and_then(Value::as_str) {
            Some(v) if v.starts_with("ATIF-v") && v.len() <= 32 => {}
            _ => return Err("the trajectory has no ATIF schema_version".to_owned()),
        }
        // The agent that ran it shows beside the session: a plain name, or none at all.
        match t.get("agent").and_then(|a| a.get("name")) {
            None | Some(Value::Null) => {}
            Some(Value::String(name)) if name == "atif" || crate::agent::ran_by(name).is_some() => {
            }
            Some(_) => {
                return Err(format!(
                    "the trajectory's agent name is not a plain name of at most {} letters, digits, spaces or -_./",
                    crate::agent::MAX_RAN_BY_CHARS
                ));
            }
        }
        if t.get("session_id").and_then(Value::as_str) != Some(self.session_key.as_str()) {
            return Err("the trajectory's session_id is not the ref's own key".to_owned());
        }
        match t.get("steps").and_then(Value::as_array) {
            Some(steps) if !steps.is_empty() && steps.len() <= limits::STEPS => {}
            Some(steps) if !steps.is_empty() => {
                return Err(format!(
                    "{} steps, more than {}",
                    steps.len(),
                    limits::STEPS
                ));
            }
            _ => return Err("the trajectory has no steps".to_owned()),
        }
        Ok(())
    }
}

/// The envelope as `publish` writes it: JSON, compressed. Refused (the reason) over a limit.
pub fn encode(t: &PublishedTranscript) -> Result<Vec<u8>, String> {
    let json = serde_json::to_vec(t).map_err(|e| format!("cannot serialise: {e}"))?;
    if json.len() as u64 > limits::JSON_BYTES {
        return Err(format!(
            "its transcript has {} bytes, more than the {} a published transcript may have",
            json.len(),
            limits::JSON_BYTES
        ));
    }
    let packed = zstd::bulk::compress(&json, 9).map_err(|e| format!("cannot compress: {e}"))?;
    if packed.len() as u64 > limits::COMPRESSED_BYTES {
        return Err(format!(
            "its compressed transcript has {} bytes, more than the {} one may have",
            packed.len(),
            limits::COMPRESSED_BYTES
        ));
    }
    Ok(packed)
}

/// Decompress, parse and check the bytes of a teammate's `transcript.json.zst` for the ref keyed
/// `ref_key`. The publisher is cleaned and the time normalised when it passes.
pub fn decode(bytes: &[u8], ref_key: &str) -> Result<PublishedTranscript, Refusal> {
    if bytes.len() as u64 > limits::COMPRESSED_BYTES {
        return Err(format!(
            "{TRANSCRIPT_FILE} has {} bytes, more than the {} one may have",
            bytes.len(),
            limits::COMPRESSED_BYTES
        ));
    }
    let mut decoder = zstd::stream::read::Decoder::with_buffer(bytes)
        .map_err(|_| format!("{TRANSCRIPT_FILE} is not zstd-compressed"))?;
    decoder
        .window_log_max(limits::WINDOW_LOG)
        .map_err(|_| format!("{TRANSCRIPT_FILE} cannot be read"))?;
    let mut json = Vec::new();
    decoder
        .take(limits::JSON_BYTES + 1)
        .read_to_end(&mut json)
        .map_err(|_| {
            format!(
                "{TRANSCRIPT_FILE} is not a zstd stream Cairn reads (corrupt, or a window over {} MiB)",
                (1u64 << limits::WINDOW_LOG) >> 20
            )
        })?;
    if json.len() as u64 > limits::JSON_BYTES {
        return Err(format!(
            "{TRANSCRIPT_FILE} decompresses to more than the {} bytes a transcript may have",
            limits::JSON_BYTES
        ));
    }
    let text = std::str::from_utf8(&json).map_err(|_| "the transcript is not UTF-8".to_owned())?;
    // The schema first: a newer Cairn's transcript is refused with what to do, not a parse error.
    let value: Value = serde_json::from_str(text).map_err(|e| {
        format!(
            "the transcript is not JSON: {}",
            one_line(&e.to_string(), 120)
        )
    })?;
    match value.get("schema").and_then(Value::as_str) {
        Some(TRANSCRIPT_SCHEMA) => {}
        Some(other) if other.starts_with("cairn.published-transcript.") => {
            return Err(format!(
                "the transcript's schema {} is one this Cairn cannot read (it reads {TRANSCRIPT_SCHEMA}): update Cairn to pull it",
                one_line(other, 60)
            ));
        }
        _ => {
            return Err(format!(
                "not a Cairn transcript (no schema {TRANSCRIPT_SCHEMA})"
            ));
        }
    }
    let t: PublishedTranscript = serde_json::from_value(value).map_err(|e| {
        // serde names the offending field: the teammate's text, so cleaned and bounded.
        format!("not a Cairn transcript: {}", one_line(&e.to_string(), 160))
    })?;
    t.check(ref_key)?;
    Ok(PublishedTranscript {
        publisher: printable(t.publisher.trim()),
        published_at: crate::text::rfc3339(&t.published_at)
            .map(|t| t.into_owned())
            .unwrap_or_default(),
        ..t
    })
}

/// Every string of `trajectory` through the outbound redactor (`root`: the repository's root,
/// whose paths become relative; `home`: removed), then the final scan: `Err` names the rule
/// still found after redaction.
pub fn outbound(
    mut trajectory: Value,
    root: &str,
    home: Option<&str>,
) -> Result<Value, &'static str> {
    let r = Redactor::global();
    let mut findings = Vec::new();
    walk_strings(&mut trajectory, &mut |s| {
        r.outbound_text(s, Some(root), home, &mut findings)
    });
    let text = serde_json::to_string(&trajectory).unwrap_or_default();
    match r
        .scan_text(&text)
        .into_iter()
        .find(|f| f.rule != redact::PATH)
    {
        Some(f) => Err(f.rule),
        None => Ok(trajectory),
    }
}

/// Replace every string value (not keys) of `v` by `f` of it.
fn walk_strings(v: &mut Value, f: &mut dyn FnMut(&str) -> String) {
    match v {
        Value::String(s) => *s = f(s),
        Value::Array(items) => items.iter_mut().for_each(|i| walk_strings(i, f)),
        Value::Object(map) => map.values_mut().for_each(|i| walk_strings(i, f)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const KEY: &str = "sha256-0123456789abcdef0123456789abcdef";

    fn envelope() -> PublishedTranscript {
        PublishedTranscript {
            schema: TRANSCRIPT_SCHEMA.to_owned(),
            session_key: KEY.to_owned(),
            publisher: "Ann <ann@example.com>".to_owned(),
            published_at: "2026-03-01T10:00:00Z".to_owned(),
            trajectory: json!({
                "schema_version": "ATIF-v1.4", "session_id": KEY,
                "agent": {"name": "claude", "version": "1"},
                "steps": [{"step_id": 1, "source": "user", "message": "add login"}]
            }),
        }
    }

    fn packed(v: &Value) -> Vec<u8> {
        zstd::bulk::compress(v.to_string().as_bytes(), 3).unwrap()
    }

    #[test]
    fn what_publish_writes_is_read_back() {
        let t = envelope();
        let back = decode(&encode(&t).unwrap(), KEY).unwrap();
        assert_eq!(back, t);
    }

    /// Each hostile change is refused for its own reason, with no control character in it.
    #[test]
    fn hostile_envelopes_are_refused_each_for_its_reason() {
        let base = serde_json::to_value(envelope()).unwrap();
        let other = "sha256-ffffffffffffffffffffffffffffffff";
        let cases: Vec<(&str, Value)> = vec![
            (
                "cannot read",
                json!({"schema": "cairn.published-transcript.v2"}),
            ),
            (
                "not a Cairn transcript",
                json!({"schema": "\u{1b}]52;c;x\u{7}"}),
            ),
            ("not a Cairn transcript", json!({"extra\u{1b}[2J": 1})),
            ("not the ref's own key", json!({"session_key": other})),
            ("publisher", json!({"publisher": "Ann\u{1b}]0;pwned\u{7}"})),
            ("publisher", json!({"publisher": "Ann \u{202e}moc.elpmaxe"})),
            ("publisher", json!({"publisher": "x".repeat(201)})),
            ("publisher", json!({"publisher": "  "})),
            ("RFC 3339", json!({"published_at": "yesterday"})),
            (
                "session_id",
                json!({"trajectory": {"schema_version": "ATIF-v1.4", "session_id": other, "steps": [{}]}}),
            ),
            (
                "no steps",
                json!({"trajectory": {"schema_version": "ATIF-v1.4", "session_id": KEY, "steps": []}}),
            ),
            (
                "ATIF",
                json!({"trajectory": {"session_id": KEY, "steps": [{}]}}),
            ),
            ("not a JSON object", json!({"trajectory": "x"})),
            (
                "agent name",
                json!({"trajectory": {"schema_version": "ATIF-v1.4", "session_id": KEY,
                    "agent": {"name": "claude\u{1b}]0;pwned\u{7}"}, "steps": [{}]}}),
            ),
            (
                "agent name",
                json!({"trajectory": {"schema_version": "ATIF-v1.4", "session_id": KEY,
                    "agent": {"name": ["claude"]}, "steps": [{}]}}),
            ),
        ];
        for (why, change) in cases {
            let mut v = base.clone();
            for (k, val) in change.as_object().unwrap() {
                v[k] = val.clone();
            }
            let refusal = decode(&packed(&v), KEY).unwrap_err();
            assert!(refusal.contains(why), "{change}: {refusal}");
            assert!(
                !refusal
                    .chars()
                    .any(|c| c.is_control() || is_bidi_control(c)),
                "{refusal:?}"
            );
        }
        assert!(
            decode(b"not zstd at all", KEY)
                .unwrap_err()
                .contains("zstd")
        );
    }

    /// A bomb (a small blob that inflates past the limit) stops at the limit.
    #[test]
    fn a_compressed_bomb_stops_at_the_limit() {
        let mut v = serde_json::to_value(envelope()).unwrap();
        v["trajectory"]["notes"] = Value::String("a".repeat(limits::JSON_BYTES as usize + 10));
        let bomb = packed(&v);
        assert!((bomb.len() as u64) < limits::COMPRESSED_BYTES);
        let refusal = decode(&bomb, KEY).unwrap_err();
        assert!(refusal.contains("decompresses to more than"), "{refusal}");
        assert!(encode(&serde_json::from_value(v).unwrap()).is_err());
    }

    #[test]
    fn outbound_makes_repo_paths_relative_and_refuses_a_leftover_secret() {
        let t = json!({"steps": [{"message": "edited /work/app/src/login.rs and /etc/passwd"}]});
        let out = outbound(t, "/work/app", None).unwrap().to_string();
        assert!(
            out.contains("src/login.rs") && !out.contains("/work/app"),
            "{out}"
        );
        assert!(!out.contains("/etc/passwd"), "{out}");
    }
}

//! The Document read kind: a JSON document the agent rewrites in place (Gemini CLI's legacy
//! `session-*.json`). It is read when its size or mtime moved, and only when its bytes changed,
//! one level deep ([`Shallow`]: each unit parsed as it is taken); its units (messages) are keyed
//! by the agent's own ids, and only units whose redacted content changed since the last read go
//! to the parser and to the retained copy. A unit gone from the document is retracted. So
//! reading the same document twice stores nothing twice, and a rewrite stores exactly what
//! changed.
//!
//! Redaction comes before parsing, as for lines: the header and every unit are walked with
//! [`Redactor::redact_json`] first. A document that does not parse (half-written by an agent
//! that rewrites it) is skipped with a warning in the report and read again next time; nothing
//! of the last good read is lost.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::io::Read as _;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{
    Base, Batch, Msg, SourceState, Warning, file_warning, finish_batch, is_full, locate, new_batch,
    take_output, take_unread,
};
use crate::archive::discover::FoundFile;
use crate::archive::json_text;
use crate::archive::redact::{Finding, Redactor};
use crate::archive::sources::{
    DocumentParser, LineOutput, Shallow, UnitParser, document_parser_for_file, with_sidecars,
};
use crate::keys;

/// Documents larger than this are not read (a warning says so).
pub(crate) const MAX_DOCUMENT_BYTES: u64 = 128 * 1024 * 1024;

/// What the store keeps of a document between reads (`sources.parser_state`).
#[derive(Debug, Default, Clone, Serialize, Deserialize)]
struct Cursor {
    /// SHA-256 of the document's bytes at the last read.
    doc: String,
    /// Revision of the redacted header at the last read.
    header: String,
    /// Revision of each unit's redacted content, by unit key.
    units: BTreeMap<String, String>,
    /// The parser's own state (what it learnt of the session).
    parser: Value,
}

/// Read the changed units of one document and hand them to `emit` in batches of about a
/// capture's size (2,000 records or 4 MiB of retained rows: [`super::is_full`]). Every batch
/// but the last stores the cursor the read started from with its document digest emptied, and
/// no size or mtime a file has: a read cut short after any batch is made again whole (the
/// units it takes again are stored as they were).
pub(super) fn read_document(
    file: &FoundFile,
    prior: Option<&SourceState>,
    force: bool,
    emit: &mut dyn FnMut(Msg) -> bool,
) {
    let warn = |message: String| file_warning(file, message);
    let Some((canonical, size, mtime_ns)) = locate(file, emit) else {
        return;
    };
    // A file read beside it that changed (a Cline task's metadata) changes the document: its
    // newest time is the document's.
    let mtime_ns = crate::archive::sources::sidecars(file)
        .iter()
        .filter_map(|p| fs::metadata(p).ok())
        .map(|m| super::mtime_ns(&m))
        .fold(mtime_ns, i64::max);
    if let Some(p) = prior
        && !force
        && p.size == size
        && p.mtime_ns == mtime_ns
    {
        return;
    }
    if size > MAX_DOCUMENT_BYTES {
        emit(warn(format!(
            "document of {size} bytes skipped (longer than the 128 MiB limit)"
        )));
        return;
    }
    // Its size (at most the limit, checked above) reserved at once: grown by doubling, the
    // buffer of a long document would reach twice its length.
    let mut bytes = Vec::with_capacity(usize::try_from(size).unwrap_or(0).saturating_add(1));
    let read = fs::File::open(&canonical)
        .and_then(|f| f.take(MAX_DOCUMENT_BYTES + 1).read_to_end(&mut bytes));
    if let Err(e) = read {
        emit(warn(format!("cannot read: {e}")));
        return;
    }
    let generation = match prior {
        Some(p) if force => p.generation + 1,
        Some(p) => p.generation,
        None => 0,
    };
    // A forced re-read starts a new retained copy, so every unit is written to it again.
    let cursor: Cursor = prior
        .filter(|_| !force)
        .and_then(|p| p.parser_state.as_deref())
        .and_then(|s| serde_json::from_str(s).ok())
        .unwrap_or_default();
    let base = Base {
        existed: prior.is_some(),
        byte_offset: prior.map_or(0, |p| p.byte_offset),
        generation: prior.map_or(0, |p| p.generation),
    };
    let line_start = prior.filter(|_| !force).map_or(0, |p| p.line_count);
    let saved = (!cursor.parser.is_null()).then_some(&cursor.parser);
    let mut parser = match document_parser_for_file(file, saved) {
        Ok(p) => p,
        // A state written by an incompatible build: read the document again from scratch.
        Err(_) if !force => return read_document(file, prior, true, emit),
        Err(e) => {
            emit(warn(format!("cannot read: {e}")));
            return;
        }
    };
    let digest = keys::digest_hex(&bytes);
    let readable = json_text::readable(&bytes);
    // As in a line, what is not UTF-8 is read as U+FFFD (and said, below).
    let (text, lossy) = match std::str::from_utf8(&readable) {
        Ok(text) => (std::borrow::Cow::Borrowed(text), false),
        Err(_) => (String::from_utf8_lossy(&readable), true),
    };
    // Read down to its units only: each is parsed as it is taken.
    let Shallow { doc, units } = match Shallow::read(&text, parser.units_at()) {
        Ok(doc) => doc,
        Err(e) => {
            emit(warn(format!(
                "not a complete JSON document (the agent may be rewriting it); read again on the next sync: {e}"
            )));
            return;
        }
    };
    // The files kept beside it (small; read with it, redacted with it), and then part of what
    // tells a changed document from a touched one.
    let doc = with_sidecars(file, doc);
    let digest = if crate::archive::sources::sidecars(file).is_empty() {
        digest
    } else {
        keys::digest_hex(format!("{digest} {doc}").as_bytes())
    };
    let doc = Shallow { doc, units };
    let path_str = canonical.to_string_lossy().into_owned();
    let source_key = prior
        .map(|p| p.source_key.clone())
        .unwrap_or_else(|| crate::archive::store::source_key(file.agent, &canonical));
    let mut batch = new_batch(file, &path_str, &source_key, base, generation);
    let mut next = Cursor {
        doc: digest,
        ..Cursor::default()
    };
    let mut line_no = line_start;
    let mut handed = 0usize;
    if next.doc != cursor.doc || prior.is_none() {
        // Said when its bytes changed, not when it was only touched.
        if lossy && !emit(warn("invalid UTF-8 replaced with U+FFFD".to_owned())) {
            return;
        }
        let restart = serde_json::to_string(&Cursor {
            doc: String::new(),
            ..cursor.clone()
        })
        .unwrap_or_default();
        // A full batch goes to the writer as the units are read; the next one chains on to
        // it by the count of units it leaves read.
        let mut hand = |batch: &mut Batch, parser: &dyn DocumentParser, taken: u64, line_no| {
            handed += 1;
            let meta = (parser.meta().clone(), restart.clone());
            let full = take_unread(batch, file, &canonical, meta, taken, line_no);
            emit(Msg::Batch(Box::new(full)))
        };
        let going = read_units(
            &mut batch,
            &mut *parser,
            doc,
            &cursor,
            &mut next,
            &mut line_no,
            &mut hand,
        );
        if !going {
            return;
        }
    } else {
        // Touched but not changed (the same bytes written again).
        next.header = cursor.header.clone();
        next.units = cursor.units.clone();
    }
    if prior.is_none() && handed == 0 && batch.records.is_empty() {
        // Nothing to keep yet (a document without messages): no empty session; it is read
        // again when it changes. What the parser could not read is said: a document of
        // another shape (the agent changed its format) would otherwise be passed over in
        // silence, sync after sync.
        let unread = &parser.meta().unknown_types;
        if !unread.is_empty() {
            let kinds: Vec<String> = unread.iter().map(|(k, n)| format!("{k} ×{n}")).collect();
            emit(Msg::Warning(Warning::of_file(
                &file.path,
                format!(
                    "nothing read: not the shape Cairn reads ({}); read again when it changes",
                    kinds.join(", ")
                ),
            )));
        }
        return;
    }
    next.parser = parser.save();
    let state = serde_json::to_string(&next).unwrap_or_default();
    let last = finish_batch(
        batch,
        file,
        &canonical,
        (parser.meta().clone(), state),
        size,
        mtime_ns,
        size,
        line_no,
        &None,
        &None,
        base.byte_offset.min(size),
    );
    emit(Msg::Batch(Box::new(last)));
}

/// Redact the document's header and units, and parse those that changed since `prior`, giving
/// `hand` each batch that fills up (with the units taken so far and the line number reached);
/// `false` when `hand` said to stop.
fn read_units(
    batch: &mut Batch,
    parser: &mut dyn DocumentParser,
    doc: Shallow<'_>,
    prior: &Cursor,
    next: &mut Cursor,
    line_no: &mut u64,
    hand: &mut dyn FnMut(&mut Batch, &dyn DocumentParser, u64, u64) -> bool,
) -> bool {
    let (header, units) = parser.split(doc);
    next.header = take_header(batch, parser, header, &prior.header, line_no);
    let mut seen = BTreeSet::new();
    for (key, value) in units {
        let mut unit = ReadUnit::new(&key, value, None);
        // Two units under one id (a damaged document) are told apart by their order.
        let mut n = 1;
        while seen.contains(&unit.key) {
            n += 1;
            unit.key = format!("{}#{n}", unit.key);
        }
        seen.insert(unit.key.clone());
        let known = prior.units.get(&unit.key).map(String::as_str);
        let (key, rev) = take_unit(batch, parser, unit, known, line_no);
        next.units.insert(key, rev);
        if is_full(batch) && !hand(batch, parser, next.units.len() as u64, *line_no) {
            return false;
        }
    }
    let gone: Vec<String> = prior
        .units
        .keys()
        .filter(|k| !next.units.contains_key(*k))
        .cloned()
        .collect();
    retract(batch, gone, *line_no);
    true
}

/// Redact a header (a document without its units, a session row), retain it when its revision
/// moved, and give it to the parser: on every read, since it names the session. Any record it
/// yields is keyed under the empty unit id no message has. Returns its revision.
pub(super) fn take_header(
    batch: &mut Batch,
    parser: &mut dyn UnitParser,
    mut header: Value,
    prior: &str,
    line_no: &mut u64,
) -> String {
    let mut findings = Vec::new();
    let text = redacted(&mut header, None, &mut findings);
    let rev = revision(&text);
    if rev != prior {
        retain(batch, None, &rev, &text);
        batch
            .findings
            .extend(findings.into_iter().map(|f| (*line_no, f)));
        *line_no += 1;
    }
    let mut out = LineOutput::default();
    parser.header(&header, &mut out);
    key_records(&mut out, "");
    let agent = batch.agent;
    take_output(batch, agent, line_no.saturating_sub(1), "", &mut out);
    rev
}

/// A unit as its source read it, before redaction of its value: its id redacted already (the
/// id's findings are reported with the value's).
pub(super) struct ReadUnit {
    /// The redacted id, which keys the unit's records.
    pub key: String,
    value: Value,
    /// The value's text as serde_json writes it, when the source has it.
    text: Option<String>,
    findings: Vec<Finding>,
}

impl ReadUnit {
    pub fn new(key: &str, value: Value, text: Option<String>) -> ReadUnit {
        let mut findings = Vec::new();
        let key = redacted_key(key, &mut findings);
        ReadUnit {
            key,
            value,
            text,
            findings,
        }
    }
}

/// A unit's id as it may be stored and shown.
pub(super) fn redacted_key(key: &str, findings: &mut Vec<Finding>) -> String {
    Redactor::global()
        .redact_text(key, "unit id", findings)
        .into_owned()
}

/// Redact one unit; unless its redacted revision is `known` (read before), retain it and parse
/// it, its records keyed by its id. Returns its id and revision.
pub(super) fn take_unit(
    batch: &mut Batch,
    parser: &mut dyn UnitParser,
    unit: ReadUnit,
    known: Option<&str>,
    line_no: &mut u64,
) -> (String, String) {
    let ReadUnit {
        key,
        mut value,
        text,
        mut findings,
    } = unit;
    let text = redacted(&mut value, text, &mut findings);
    let rev = revision(&text);
    if known == Some(rev.as_str()) {
        return (key, rev);
    }
    retain(batch, Some(&key), &rev, &text);
    batch
        .findings
        .extend(findings.into_iter().map(|f| (*line_no, f)));
    let mut out = LineOutput::default();
    parser.unit(&key, &value, &mut out);
    key_records(&mut out, &key);
    let agent = batch.agent;
    take_output(batch, agent, *line_no, "", &mut out);
    *line_no += 1;
    (key, rev)
}

/// Retract the units a read no longer found.
pub(super) fn retract(batch: &mut Batch, gone: Vec<String>, line_no: u64) {
    if gone.is_empty() {
        return;
    }
    let mut out = LineOutput {
        retract_units: gone,
        ..LineOutput::default()
    };
    let agent = batch.agent;
    take_output(batch, agent, line_no, "", &mut out);
}

/// Key every record of a unit by it, whatever the parser filled in.
pub(super) fn key_records(out: &mut LineOutput, unit: &str) {
    for (i, r) in out.records.iter_mut().enumerate() {
        r.unit = Some(unit.to_owned());
        if r.key.is_none() {
            r.key = Some(format!("r{i}"));
        }
    }
}

/// Redact `v` in place as a line is redacted ([`Redactor::redact_line`]): its serialised text
/// goes through the one-pass gate, and only a value the gate cannot clear is walked string by
/// string ([`Redactor::redact_json`]). Returns the redacted value's serialised text, serialised
/// once for its revision and its retained line alike; `text`, when the source has it, is `v`'s
/// text as serde_json writes it (see [`crate::archive::json_text`]), so a value that held no
/// secret is not serialised at all.
fn redacted(v: &mut Value, text: Option<String>, findings: &mut Vec<Finding>) -> String {
    let redactor = Redactor::global();
    let text = text.unwrap_or_else(|| v.to_string());
    if !redactor.might_contain_secret(&text) || !redactor.redact_json(v, findings) {
        return text;
    }
    v.to_string()
}

/// A short digest of a redacted value's serialised text.
pub(super) fn revision(text: &str) -> String {
    let mut d = keys::digest_hex(text.as_bytes());
    d.truncate(32);
    d
}

/// One line of the retained copy: the unit (or a database's row) as the parser saw it (so a
/// reindex replays it), `{"u": unit, "r": revision, "v": value}` with the value's text as
/// serialised already.
fn retain(batch: &mut Batch, unit: Option<&str>, rev: &str, text: &str) {
    unit_line(&mut batch.retained, unit, rev, text);
    batch.retained.push(b'\n');
}

/// The retained line of a unit, without its line end (what [`retain`] writes, and a reindex
/// writes again when today's rules redact more of the value).
pub(super) fn unit_line(out: &mut Vec<u8>, unit: Option<&str>, rev: &str, text: &str) {
    let unit = serde_json::to_string(&unit).unwrap_or_else(|_| "null".to_owned());
    let rev = serde_json::to_string(rev).unwrap_or_else(|_| "\"\"".to_owned());
    out.extend_from_slice(b"{\"u\":");
    out.extend_from_slice(unit.as_bytes());
    out.extend_from_slice(b",\"r\":");
    out.extend_from_slice(rev.as_bytes());
    out.extend_from_slice(b",\"v\":");
    out.extend_from_slice(text.as_bytes());
    out.push(b'}');
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::archive::capture::UNREAD_MTIME;
    use crate::archive::capture::testing::{assert_resumes, batches_of, state_after};
    use serde_json::json;

    /// Where a legacy Gemini session named `name` goes under `home` (its folder made).
    fn gemini_document(home: &std::path::Path, name: &str) -> std::path::PathBuf {
        let chats = home.join(".gemini/tmp/p/chats");
        fs::create_dir_all(&chats).unwrap();
        chats.join(format!("session-2026-01-01T00-00-{name}.json"))
    }

    /// Every batch a read of `file` hands over, with `prior` as its stored position.
    fn batches(file: &FoundFile, prior: Option<&SourceState>) -> Vec<Batch> {
        batches_of(|emit| read_document(file, prior, false, emit))
    }

    /// A long document is handed over in batches of a capture's size, each chained to the one
    /// before; until the last is stored, its position matches no file (read again next
    /// time). Killed after the first batch, the next read is the first made again, and the
    /// two store what one read stores.
    #[test]
    fn a_long_document_is_read_in_batches_that_resume() {
        let dir = tempfile::tempdir().unwrap();
        let path = gemini_document(dir.path(), "long");
        let messages: Vec<Value> = (0..4_500)
            .map(|i| {
                let kind = if i % 2 == 0 { "user" } else { "gemini" };
                json!({"id": format!("m{i}"), "timestamp": "2026-01-01T00:00:01Z",
                    "type": kind, "content": format!("message {i}")})
            })
            .collect();
        let doc = json!({"sessionId": "long-1", "projectHash": "00",
            "startTime": "2026-01-01T00:00:00Z", "lastUpdated": "2026-01-01T00:10:00Z",
            "messages": messages});
        fs::write(&path, doc.to_string()).unwrap();
        let file = crate::archive::sources::gemini::classify(&path).unwrap();
        let size = fs::metadata(&path).unwrap().len();

        let whole = batches(&file, None);
        assert!(whole.len() >= 3, "{} batches", whole.len());
        let (last, partial) = whole.split_last().unwrap();
        for b in partial {
            assert!(b.records.len() >= crate::archive::capture::BATCH_RECORDS);
            assert_eq!(
                (b.size, b.mtime_ns),
                (0, UNREAD_MTIME),
                "no file's position"
            );
        }
        assert_eq!((last.size, last.byte_offset), (size, size));
        // Killed after the first batch was stored: read again, whole.
        let resumed = batches(&file, Some(&state_after(&whole[0])));
        assert_resumes(
            &whole.iter().collect::<Vec<_>>(),
            &resumed.iter().collect::<Vec<_>>(),
        );

        // Once the last batch is stored, the same document is not read again.
        assert!(batches(&file, Some(&state_after(last))).is_empty());
    }

    /// A message whose text is JSON but no value holds (a number past `f64`'s range) costs
    /// that message only: read whole, the document was refused on every sync.
    #[test]
    fn a_message_no_value_holds_costs_only_itself() {
        let dir = tempfile::tempdir().unwrap();
        let path = gemini_document(dir.path(), "big");
        let message = |id: &str, content: &str| {
            format!(
                r#"{{"id": "{id}", "timestamp": "2026-01-01T00:00:01Z", "type": "user", "content": {content}}}"#
            )
        };
        let text = format!(
            r#"{{"sessionId": "big-1", "projectHash": "00", "startTime": "2026-01-01T00:00:00Z", "messages": [{}, {}, {}]}}"#,
            message("a", r#""before""#),
            message("b", "1e400"),
            message("c", r#""after""#),
        );
        assert!(serde_json::from_str::<Value>(&text).is_err());
        fs::write(&path, text).unwrap();
        let file = crate::archive::sources::gemini::classify(&path).unwrap();
        let read = batches(&file, None);
        let texts: Vec<&str> = read
            .iter()
            .flat_map(|b| &b.records)
            .filter_map(|r| r.record.text.as_deref())
            .collect();
        assert_eq!(texts, ["before", "after"]);
        let last = read.last().unwrap();
        assert_eq!(
            last.meta.unknown_types.get("gemini:message-not-an-object"),
            Some(&1)
        );
    }

    /// A byte that is not UTF-8 is read as U+FFFD, as in a line, with a warning: read whole,
    /// the document was refused on every sync.
    #[test]
    fn a_byte_that_is_not_utf8_is_read_as_a_replacement() {
        let dir = tempfile::tempdir().unwrap();
        let path = gemini_document(dir.path(), "bytes");
        let mut bytes = br#"{"sessionId": "bytes-1", "projectHash": "00", "startTime": "2026-01-01T00:00:00Z", "messages": [{"id": "a", "timestamp": "2026-01-01T00:00:01Z", "type": "user", "content": "caf"#.to_vec();
        bytes.extend_from_slice(b"\xe9 au lait\"}]}".as_slice());
        fs::write(&path, &bytes).unwrap();
        let file = crate::archive::sources::gemini::classify(&path).unwrap();
        let read_with = |prior: Option<&SourceState>| {
            let (mut batches, mut warnings) = (Vec::new(), Vec::new());
            read_document(&file, prior, false, &mut |msg| {
                match msg {
                    Msg::Batch(b) => batches.push(*b),
                    Msg::Warning(w) => warnings.push(w.message),
                }
                true
            });
            (batches, warnings)
        };
        let (read, warnings) = read_with(None);
        let texts: Vec<&str> = read
            .iter()
            .flat_map(|b| &b.records)
            .filter_map(|r| r.record.text.as_deref())
            .collect();
        assert_eq!(texts, ["caf\u{fffd} au lait"]);
        assert_eq!(warnings, ["invalid UTF-8 replaced with U+FFFD"]);
        // Touched, the same bytes: nothing said again.
        let later = std::time::SystemTime::now() + std::time::Duration::from_secs(5);
        fs::File::options()
            .write(true)
            .open(&path)
            .unwrap()
            .set_modified(later)
            .unwrap();
        let (_, warnings) = read_with(Some(&state_after(read.last().unwrap())));
        assert!(warnings.is_empty(), "{warnings:?}");
    }

    /// The gated redaction gives what walking every string gives, whether the secret is in a
    /// nested string, an object key, behind a `\u` escape or a control character, or absent.
    #[test]
    fn gated_redaction_is_the_full_walk() {
        let values = [
            json!({"id": "m1", "parts": [{"type": "text", "data": {"text": "plain words"}}]}),
            json!({"parts": [{"data": {"text": "key AKIAZ7QW3RT5YU8IOP2L here"}}], "n": 3}),
            json!({"ghp_R7sT2vX9kL4mN8qP1wZ5yB3cD6fH0jK2aE4gQ": true}),
            json!({"t": "esc \u{1b}[2J and ghp_R7sT2vX9kL4mN8qP1wZ5yB3cD6fH0jK2aE4gQ"}),
            json!({"t": "quote \" slash \\ and é", "null": null, "f": 1.5}),
            json!({"password": "hunter2-but-longer", "x": ["a", {"token": "abc"}]}),
            // Go's escapes quoted inside a string (a Crush tool's input): `\\u003c` printed.
            json!({"input": "{\"content\":\"\\u003cfile\\u003e\"}"}),
            json!({"input": "{\"c\":\"\\u003c ghp_R7sT2vX9kL4mN8qP1wZ5yB3cD6fH0jK2aE4gQ\"}"}),
        ];
        for v in values {
            let mut walked = v.clone();
            let mut want = Vec::new();
            Redactor::global().redact_json(&mut walked, &mut want);
            let mut gated = v.clone();
            let mut got = Vec::new();
            let text = redacted(&mut gated, None, &mut got);
            // The same from the value's own text.
            let mut spliced = v.clone();
            let mut again = Vec::new();
            let from_text = redacted(&mut spliced, Some(v.to_string()), &mut again);
            assert_eq!(spliced, walked, "{v}");
            assert_eq!(from_text, text);
            assert_eq!(again.len(), want.len(), "{v}");
            assert_eq!(gated, walked, "{v}");
            assert_eq!(text, walked.to_string());
            assert_eq!(got.len(), want.len(), "{v}");
        }
    }

    /// The retained line written by hand is the JSON object `{"u", "r", "v"}`.
    #[test]
    fn a_retained_line_is_its_json_object() {
        let v = json!({"a": "é \" \\ \n", "b": [1, null]});
        for unit in [None, Some("m-1\"odd\u{7}")] {
            let mut batch = super::super::new_batch(
                &crate::archive::discover::FoundFile {
                    agent: crate::archive::Agent::Crush,
                    role: crate::archive::sources::FileRole::Main,
                    path: "/x".into(),
                    parent_hint: None,
                    agent_id: None,
                },
                "/x",
                "k",
                super::super::Base {
                    existed: false,
                    byte_offset: 0,
                    generation: 0,
                },
                0,
            );
            retain(&mut batch, unit, "r1", &v.to_string());
            let line = String::from_utf8(batch.retained).unwrap();
            assert_eq!(line, format!("{}\n", json!({"u": unit, "r": "r1", "v": v})));
        }
    }
}

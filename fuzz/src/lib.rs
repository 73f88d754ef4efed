//! The bodies of Cairn's fuzz targets. Each takes arbitrary bytes, runs them through one
//! input-facing part of `cairn-core`, and panics when an invariant breaks (a panic inside the
//! library is a finding too). Both front ends call these: libFuzzer (`fuzz_targets/`, via
//! `cargo fuzz`) and the stable in-process driver (`src/bin/drive.rs`).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::borrow::Cow;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use cairn_core::Cairn;
use cairn_core::archive::Agent;
use cairn_core::archive::capture::Quiet;
use cairn_core::archive::discover::FoundFile;
use cairn_core::archive::jsonl::{Line, LineReader};
use cairn_core::archive::redact::{PATH, Redactor};
use cairn_core::archive::sources::{
    FileRole, LineOutput, Shallow, document_parser_for, lines_are_json, parser_for,
};
use cairn_core::recall::analyze::{self, Analyzer, MAX_QUERY_TERMS};

/// A target body: arbitrary bytes in, a panic when an invariant breaks.
pub type Target = fn(&[u8]);

/// The targets, by name (the names of the libFuzzer binaries and of the seed folders).
pub const TARGETS: &[(&str, Target)] = &[
    ("claude", claude),
    ("codex", codex),
    ("copilot", copilot),
    ("qwen", qwen),
    ("droid", droid),
    ("kimi", kimi),
    ("pi", pi),
    ("grok", grok),
    ("antigravity", antigravity),
    ("vibe", vibe),
    ("gptme", gptme),
    ("posit", posit),
    ("iflow", iflow),
    ("gemini", gemini),
    ("gemini_document", gemini_document),
    ("cline_document", cline_document),
    ("hermes_document", hermes_document),
    ("qwenpaw_document", qwenpaw_document),
    ("vscopilot_traces", vscopilot_traces),
    ("cursor", cursor),
    ("aider", aider),
    ("database_units", database_units),
    ("redact", redact),
    ("analyze", analyze),
    ("import", import),
    ("settings", settings),
    ("model_answer", model_answer),
    ("retained_copy", retained_copy),
    ("published_document", published_document),
    ("ai_note", ai_note),
];

/// The repository's fixtures (seeds, and the archive the import target imports into).
pub fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures")
}

/// A Claude Code transcript, read and parsed as capture does it.
pub fn claude(data: &[u8]) {
    transcript(Agent::Claude, data);
}

/// A Codex rollout, read and parsed as capture does it.
pub fn codex(data: &[u8]) {
    transcript(Agent::Codex, data);
}

/// A GitHub Copilot CLI session, read and parsed as capture does it.
pub fn copilot(data: &[u8]) {
    transcript(Agent::Copilot, data);
}

/// A Qwen session, read and parsed as capture does it.
pub fn qwen(data: &[u8]) {
    transcript(Agent::Qwen, data);
}

/// A Droid session, read and parsed as capture does it.
pub fn droid(data: &[u8]) {
    transcript(Agent::Droid, data);
}

/// A Kimi session, read and parsed as capture does it.
pub fn kimi(data: &[u8]) {
    transcript(Agent::Kimi, data);
}

/// A session in Pi's format (Pi's, or OpenClaw's: the same parser), read and parsed as capture
/// does it.
pub fn pi(data: &[u8]) {
    transcript(Agent::Pi, data);
}

/// An iFlow CLI session, read and parsed as capture does it.
pub fn iflow(data: &[u8]) {
    transcript(Agent::Iflow, data);
}

/// A gptme conversation (its answers' code blocks and native call lines read as calls), read
/// and parsed as capture does it.
pub fn gptme(data: &[u8]) {
    transcript(Agent::Gptme, data);
}

/// A Posit Assistant conversation's model messages, read and parsed as capture does it.
pub fn posit(data: &[u8]) {
    transcript(Agent::Posit, data);
}

/// A Mistral Vibe conversation, read and parsed as capture does it.
pub fn vibe(data: &[u8]) {
    transcript(Agent::Vibe, data);
}

/// An Antigravity CLI step transcript, read and parsed as capture does it.
pub fn antigravity(data: &[u8]) {
    transcript(Agent::Antigravity, data);
}

/// A Grok Build conversation (either of its line formats), read and parsed as capture does it.
pub fn grok(data: &[u8]) {
    transcript(Agent::Grok, data);
}

/// A Gemini CLI JSONL session (keyed lines, `$set`, `$rewindTo`), read and parsed as capture
/// does it.
pub fn gemini(data: &[u8]) {
    transcript(Agent::Gemini, data);
}

/// A Cursor agent transcript, read and parsed as capture does it.
pub fn cursor(data: &[u8]) {
    transcript(Agent::Cursor, data);
}

/// An Aider chat history (Markdown lines), read and parsed as capture does it. Invariants beyond
/// every transcript's: every record is keyed by its block, and no text passes the block caps.
pub fn aider(data: &[u8]) {
    transcript(Agent::Aider, data);
}

/// `text` (`data` with what is not UTF-8 read as U+FFFD) read as the document reader reads it,
/// down to the list of units at `path` (`None` when it is not one JSON value). A document that
/// parses whole reads shallowly as the same value: its other members as they are, its units
/// the list's elements.
fn shallow<'d>(text: &'d str, data: &[u8], path: &[&str]) -> Option<Shallow<'d>> {
    let read = Shallow::read(text, path).ok();
    if let Ok(mut whole) = serde_json::from_slice::<serde_json::Value>(data) {
        let read = read
            .as_ref()
            .expect("a document that parses whole reads shallowly");
        let pointer: String = path
            .iter()
            .map(|p| format!("/{}", p.replace('~', "~0").replace('/', "~1")))
            .collect();
        let list = match whole.pointer_mut(&pointer) {
            Some(list @ serde_json::Value::Array(_)) => Some(list.take()),
            _ => None,
        };
        assert_eq!(read.doc, whole, "the document around its units");
        let units = read
            .units
            .clone()
            .map(|u| serde_json::Value::from(u.collect::<Vec<_>>()));
        assert_eq!(units, list, "the units");
    }
    read
}

/// A Gemini CLI legacy session document, read as [`document`] reads one.
pub fn gemini_document(data: &[u8]) {
    document(Agent::Gemini, data);
}

/// A Hermes Agent session document, read as [`document`] reads one.
pub fn hermes_document(data: &[u8]) {
    document(Agent::Hermes, data);
}

/// A QwenPaw agent's saved state: its memory's messages as units.
pub fn qwenpaw_document(data: &[u8]) {
    document(Agent::Qwenpaw, data);
}

/// A session document of `agent`: split into header and keyed units, each redacted and parsed
/// as the document reader does, the state saved and resumed between units. Invariants: every
/// record of a unit is keyed, a resumed parser knows what the saved one knew, and a redacted
/// unit is still JSON.
fn document(agent: Agent, data: &[u8]) {
    let mut parser = document_parser_for(agent, None).expect("a fresh parser");
    let text = String::from_utf8_lossy(data);
    let Some(doc) = shallow(&text, data, parser.units_at()) else {
        return;
    };
    let redactor = Redactor::global();
    let (mut header, units) = parser.split(doc);
    redactor.redact_json(&mut header, &mut Vec::new());
    let mut out = LineOutput::default();
    parser.header(&header, &mut out);
    for (i, (key, mut unit)) in units.into_iter().enumerate() {
        redactor.redact_json(&mut unit, &mut Vec::new());
        assert!(serde_json::to_string(&unit).is_ok());
        parser.unit(&key, &unit, &mut out);
        for r in out.records.drain(..) {
            assert!(!r.source_event_kind.is_empty());
            assert!(r.key.is_some(), "an unkeyed record from a document unit");
        }
        out.usage.clear();
        if i % 2 == 1 {
            let saved = parser.save();
            let resumed = document_parser_for(agent, Some(&saved)).expect("resumes");
            assert_eq!(resumed.meta(), parser.meta(), "state lost across resume");
            parser = resumed;
        }
    }
}

/// A Cline / Roo / Kilo task log (`ui_messages.json`) with its sidecars, split into keyed
/// entries (results paired with their calls), each redacted and parsed as the document reader
/// does, the state saved and resumed between entries. Invariants: unit keys are unique (a
/// result's call names one of them), every record is keyed, a resumed parser knows what the
/// saved one knew, and a redacted entry is still JSON.
pub fn cline_document(data: &[u8]) {
    // Shaped like a task folder: the log, or an object already holding it with its sidecars.
    let holds_log = serde_json::from_slice::<serde_json::Value>(data)
        .is_ok_and(|doc| doc.get("ui_messages").is_some());
    let text = String::from_utf8_lossy(data);
    let path: &[&str] = if holds_log { &["ui_messages"] } else { &[] };
    let Some(mut doc) = shallow(&text, data, path) else {
        return;
    };
    if !holds_log {
        doc.doc = serde_json::json!({ "ui_messages": doc.doc });
    }
    let redactor = Redactor::global();
    let agent = Agent::Roo;
    let mut parser = document_parser_for(agent, None).expect("a fresh parser");
    let (mut header, units) = parser.split(doc);
    let units: Vec<_> = units.collect();
    let keys: std::collections::BTreeSet<&str> = units.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(keys.len(), units.len(), "two entries under one key");
    for (_, unit) in &units {
        if let Some(call) = unit.get("cairn:call").and_then(|c| c.as_str()) {
            assert!(keys.contains(call), "a result names no entry");
        }
    }
    redactor.redact_json(&mut header, &mut Vec::new());
    let mut out = LineOutput::default();
    parser.header(&header, &mut out);
    for (i, (key, mut unit)) in units.into_iter().enumerate() {
        redactor.redact_json(&mut unit, &mut Vec::new());
        assert!(serde_json::to_string(&unit).is_ok());
        parser.unit(&key, &unit, &mut out);
        for r in out.records.drain(..) {
            assert!(!r.source_event_kind.is_empty());
            assert!(r.key.is_some(), "an unkeyed record from a task entry");
        }
        out.usage.clear();
        if i % 2 == 1 {
            let saved = parser.save();
            let resumed = document_parser_for(agent, Some(&saved)).expect("resumes");
            assert_eq!(resumed.meta(), parser.meta(), "state lost across resume");
            parser = resumed;
        }
    }
}

/// Visual Studio's trace file: any bytes, loaded as the reader loads one (into a database in
/// memory), then every conversation listed, its header and its units read and parsed: nothing
/// panics, every unit read is one `unit_keys` names, and a conversation counts its spans once.
pub fn vscopilot_traces(data: &[u8]) {
    use cairn_core::archive::sources::database::DatabaseSource as _;
    use cairn_core::archive::sources::vscopilot::VsCopilot;
    let dir = tempfile::tempdir().expect("a temporary folder");
    let path = dir.path().join("x_VSGitHubCopilot_traces.jsonl");
    std::fs::write(&path, data).expect("written");
    let Ok(conn) = VsCopilot.open(&path) else {
        return;
    };
    VsCopilot
        .check(&conn)
        .expect("the loaded file has the tables it is read by");
    let sessions = VsCopilot.sessions(&conn).expect("listed");
    let redactor = Redactor::global();
    for session in &sessions {
        let mut parser = VsCopilot.parser(&path, None).expect("a fresh parser");
        let mut out = LineOutput::default();
        if let Some(mut header) = VsCopilot.header(&conn, session).expect("a header") {
            redactor.redact_json(&mut header, &mut Vec::new());
            parser.header(&header, &mut out);
        }
        let keys = VsCopilot.unit_keys(&conn, session).expect("keys");
        assert_eq!(keys.len() as u64, session.count);
        VsCopilot
            .units(&conn, session, None, &mut |unit| {
                assert!(keys.contains(&unit.key), "{} not listed", unit.key);
                if let Some(mut v) = unit.value {
                    redactor.redact_json(&mut v, &mut Vec::new());
                    parser.unit(&unit.key, &v, &mut out);
                }
                for r in out.records.drain(..) {
                    assert!(r.key.is_some(), "an unkeyed record from a span");
                }
                true
            })
            .expect("read");
        let saved = parser.save();
        VsCopilot.parser(&path, Some(&saved)).expect("resumes");
    }
}

/// The rows a database source hands its parser (Crush's, OpenCode's, Cursor's IDE store, Kiro's or
/// Visual Studio's, by the first byte): the rest is JSON lines, the first a session row, each other
/// a unit (a Crush message row, an OpenCode `{"info", "parts"}`, a Cursor bubble, a Kiro history
/// entry, a span), each redacted and parsed as the database reader does, the state saved and resumed between
/// units. Invariants: a row's own text, where `json_text::serde_form` takes it, is its value's
/// serde_json text; every record is keyed, a redacted row is still JSON, and a resumed parser
/// knows what the saved one knew.
pub fn database_units(data: &[u8]) {
    let Some((&which, rest)) = data.split_first() else {
        return;
    };
    let agent = match which % 5 {
        0 => Agent::Crush,
        1 => Agent::Opencode,
        2 => Agent::Cursor,
        3 => Agent::Kiro,
        _ => Agent::Vscopilot,
    };
    let source = cairn_core::archive::sources::database::source_for(agent).expect("a database");
    let path = Path::new("/p/.crush/crush.db");
    let redactor = Redactor::global();
    let mut parser = source.parser(path, None).expect("a fresh parser");
    let mut out = LineOutput::default();
    for (i, line) in rest.split(|&b| b == b'\n').enumerate() {
        let Ok(mut row) = serde_json::from_slice::<serde_json::Value>(line) else {
            continue;
        };
        // A row's own text stands for its value only in the value's exact serde_json form.
        if let Some(text) = std::str::from_utf8(line)
            .ok()
            .and_then(|raw| cairn_core::archive::json_text::serde_form(raw, &row))
        {
            assert_eq!(
                text,
                row.to_string(),
                "serde_form of {:?}",
                String::from_utf8_lossy(line)
            );
        }
        redactor.redact_json(&mut row, &mut Vec::new());
        assert!(serde_json::to_string(&row).is_ok());
        if i == 0 {
            parser.header(&row, &mut out);
        } else {
            parser.unit(&format!("u{i}"), &row, &mut out);
        }
        for r in out.records.drain(..) {
            assert!(!r.source_event_kind.is_empty());
            assert!(r.key.is_some(), "an unkeyed record from a database row");
        }
        out.usage.clear();
        if i % 3 == 2 {
            let saved = parser.save();
            let resumed = source.parser(path, Some(&saved)).expect("resumes");
            assert_eq!(resumed.meta(), parser.meta(), "state lost across resume");
            parser = resumed;
        }
    }
}

/// Line reader → ingest redactor → adapter, with the parser's state saved and resumed every few
/// lines (as capture does between runs). Invariants: the reader never hands out more bytes than
/// it was given, offsets only grow, a resumed parser knows exactly what the saved one knew, and
/// every line the redactor changed is still JSON if it was JSON.
fn transcript(agent: Agent, data: &[u8]) {
    let role = if data.len().is_multiple_of(2) {
        FileRole::Main
    } else {
        FileRole::Subagent
    };
    let redactor = Redactor::global();
    let mut parser = parser_for(agent, role, None).expect("a fresh parser");
    let mut out = LineOutput::default();
    let mut reader = LineReader::new(data, 0);
    if !lines_are_json(agent) {
        reader = reader.whole_lines_only();
    }
    let mut last_offset = 0;
    let mut lines = 0usize;
    loop {
        let line = match reader.next_line() {
            Ok(Some(line)) => line,
            Ok(None) => break,
            Err(e) => panic!("reading from memory failed: {e}"),
        };
        if let Line::Complete { bytes, start } = line {
            assert!(start as usize + bytes.len() <= data.len());
            let text = String::from_utf8_lossy(bytes);
            let mut findings = Vec::new();
            let clean = redactor.redact_line(&text, &mut findings);
            if matches!(clean, Cow::Owned(_)) && is_json(&text) {
                assert!(is_json(&clean), "redaction broke a JSON line: {clean}");
            }
            let _ = parser.parse_line(&clean, &mut out);
            check_records(agent, &mut out);
            out.usage.clear();
            lines += 1;
            if lines.is_multiple_of(3) {
                let saved = parser.save();
                let resumed = parser_for(agent, role, Some(&saved)).expect("a saved state resumes");
                assert_eq!(resumed.meta(), parser.meta(), "state lost across resume");
                parser = resumed;
            }
        }
        let offset = reader.offset();
        assert!(offset >= last_offset && offset as usize <= data.len());
        last_offset = offset;
    }
    parser.flush(&mut out);
    check_records(agent, &mut out);
}

/// What a parser made of a line (or flushed at the end) holds to the invariants.
fn check_records(agent: Agent, out: &mut LineOutput) {
    assert!(
        out.closing <= out.records.len(),
        "more closing records than records"
    );
    for r in out.records.drain(..) {
        assert!(!r.source_event_kind.is_empty());
        if agent == Agent::Aider {
            assert!(
                r.unit.is_some() && r.key.is_some(),
                "an unkeyed block: {r:?}"
            );
            let cap = cairn_core::archive::sources::aider::MAX_REPLY_BYTES;
            assert!(
                r.text.as_ref().is_none_or(|t| t.len() <= cap),
                "past the cap"
            );
        }
    }
    out.closing = 0;
    out.closing_back = 0;
}

fn is_json(s: &str) -> bool {
    serde_json::from_str::<serde_json::Value>(s).is_ok()
}

/// The redactor on arbitrary text. Invariants: every finding is a range of the input on char
/// boundaries; redaction is idempotent (a second pass finds nothing and changes nothing); the
/// result never holds a finding's text; a JSON line stays JSON; the outbound redactor leaves no
/// secret the scanner recognises and is idempotent too.
pub fn redact(data: &[u8]) {
    let s = String::from_utf8_lossy(data);
    let r = Redactor::global();
    let mut found = Vec::new();
    let once = r.redact_text(&s, "", &mut found);
    for f in &found {
        assert!(
            f.start < f.end && f.end <= s.len(),
            "{f:?} outside the text"
        );
        assert!(s.is_char_boundary(f.start) && s.is_char_boundary(f.end));
    }
    let mut again = Vec::new();
    let twice = r.redact_text(&once, "", &mut again);
    assert_eq!(twice, once, "redact_text is not idempotent");
    assert!(again.is_empty(), "a second pass still finds {again:?}");
    assert!(once.len() <= s.len() + found.len() * 64);

    let mut line_found = Vec::new();
    let line = r.redact_line(&s, &mut line_found);
    if matches!(line, Cow::Owned(_)) && is_json(&s) {
        assert!(is_json(&line), "redact_line broke JSON: {line}");
        assert!(!line.contains('\n'));
    }
    let mut line_again = Vec::new();
    let line_twice = r.redact_line(&line, &mut line_again);
    assert_eq!(line_twice, line, "redact_line is not idempotent");
    // The line's cheap gate never clears a JSON line the structural walk would change.
    if let Ok(mut v) = serde_json::from_str::<serde_json::Value>(&s)
        && r.redact_json(&mut v, &mut Vec::new())
    {
        assert!(
            matches!(line, Cow::Owned(_)),
            "the gate cleared a line the walk changes: {s}"
        );
    }

    let out = r.outbound_text(&s, Some("/work/repo"), Some("/home/dev"), &mut Vec::new());
    let left: Vec<_> = r
        .scan_text(&out)
        .into_iter()
        .filter(|f| f.rule != PATH)
        .collect();
    assert!(left.is_empty(), "outbound text still holds {left:?}: {out}");
    assert!(!out.contains("/home/dev/"), "a home path left: {out}");
    let out_twice = r.outbound_text(&out, Some("/work/repo"), Some("/home/dev"), &mut Vec::new());
    assert_eq!(out_twice, out, "outbound_text is not idempotent");
    assert!(
        !out.contains('\u{1b}') && !out.contains('\u{9b}'),
        "an escape sequence left in outbound text: {out:?}"
    );

    // The same bytes as base64 (a long run the redactor decodes and scans again): the decoder
    // agrees with an encoder, and redaction of the run keeps its invariants.
    encoded(data);
    let wrapped = format!("BLOB={} end", base64(data));
    let once = r.redact_text(&wrapped, "", &mut Vec::new());
    let mut again = Vec::new();
    assert_eq!(
        r.redact_text(&once, "", &mut again),
        once,
        "base64: not idempotent"
    );
    assert!(
        again.is_empty(),
        "base64: a second pass still finds {again:?}"
    );
}

/// Standard base64 with padding.
fn base64(data: &[u8]) -> String {
    const A: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(data.len().div_ceil(3) * 4);
    for chunk in data.chunks(3) {
        let mut acc = 0u32;
        for (i, &c) in chunk.iter().enumerate() {
            acc |= u32::from(c) << (16 - 8 * i);
        }
        for i in 0..4 {
            out.push(if i <= chunk.len() {
                A[((acc >> (18 - 6 * i)) & 63) as usize] as char
            } else {
                '='
            });
        }
    }
    out
}

/// `encoded::inspect` on the input as a run, and on its encoding. Invariants: never a panic;
/// decoded text is text (no control characters but tab, newline, carriage return) and, for the
/// encoding of a text, is that text.
fn encoded(data: &[u8]) {
    use cairn_core::archive::encoded::{Content, inspect};
    let is_text = |t: &str| {
        t.chars()
            .all(|c| !c.is_control() || matches!(c, '\t' | '\n' | '\r'))
    };
    if let Some(Content::Text(t)) = inspect(data) {
        assert!(is_text(&t), "decoded text has control characters: {t:?}");
    }
    let enc = base64(data);
    match (std::str::from_utf8(data), inspect(enc.as_bytes())) {
        (Ok(text), Some(Content::Text(t))) => assert_eq!(t, text, "decoded text differs"),
        (Ok(text), Some(Content::Binary)) if !text.is_empty() && is_text(text) => {
            panic!("text decoded as binary: {text:?}")
        }
        _ => {}
    }
}

/// Recall's analyzer. Invariants: terms are non-empty single tokens of bounded length, the
/// analysis is deterministic, and a query's terms are the text's distinct terms in first-seen
/// order, capped.
pub fn analyze(data: &[u8]) {
    let s = String::from_utf8_lossy(data);
    let a = Analyzer::global();
    let terms = a.terms(&s);
    for t in &terms {
        assert!(!t.is_empty(), "empty term from {s:?}");
        assert!(!t.chars().any(char::is_whitespace), "{t:?} has whitespace");
        assert!(t.chars().count() <= 64, "{t:?} is too long");
    }
    assert_eq!(a.terms(&s), terms, "the analyzer is not deterministic");
    let mut distinct: Vec<String> = Vec::new();
    for t in &terms {
        if !distinct.contains(t) && distinct.len() < MAX_QUERY_TERMS {
            distinct.push(t.clone());
        }
    }
    assert_eq!(a.query_terms(&s), distinct);
    let folded = analyze::fold(&s);
    assert_eq!(analyze::fold(&folded), folded, "fold is not idempotent");
}

struct ImportArchive {
    _dir: tempfile::TempDir,
    cairn: Cairn,
}

/// An archive holding the fixture session the seed entries cite, built once per process.
fn import_archive() -> &'static ImportArchive {
    static ARCHIVE: OnceLock<ImportArchive> = OnceLock::new();
    ARCHIVE.get_or_init(|| {
        let dir = tempfile::tempdir().expect("a temp dir");
        let cairn = Cairn::open(dir.path().join("data")).expect("open an archive");
        let file = FoundFile {
            agent: Agent::Claude,
            role: FileRole::Main,
            path: fixtures().join("claude/ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl"),
            parent_hint: None,
            agent_id: None,
        };
        cairn
            .capture_paths(&[file], &Quiet)
            .expect("capture the fixture");
        ImportArchive { _dir: dir, cairn }
    })
}

/// Reviewed-JSONL import, as a dry run. Invariants: no input makes it fail as a whole (bad
/// lines are reported by number), every non-blank line is accounted for at most once, and a dry
/// run writes nothing.
pub fn import(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let archive = import_archive();
    let before = archive
        .cairn
        .recall_stats(&Default::default())
        .expect("stats")
        .count;
    let report = archive
        .cairn
        .recall_import(&text, true)
        .expect("an import fails line by line, never as a whole");
    let lines = text.lines().filter(|l| !l.trim().is_empty()).count();
    let accounted = report.imported as usize + report.skipped.len() + report.errors.len();
    assert!(accounted <= lines, "{accounted} outcomes for {lines} lines");
    assert_eq!(report.items.len(), report.imported as usize);
    for e in &report.errors {
        assert!(e.line >= 1 && e.line as usize <= text.lines().count());
    }
    let after = archive
        .cairn
        .recall_stats(&Default::default())
        .expect("stats")
        .count;
    assert_eq!(before, after, "a dry run wrote entries");
}

/// An agent's settings file or MCP config, as `hooks install` and `mcp install|uninstall` edit
/// it (the pure text edits of `hooks::mcp_config::internals`: nothing is written). The first
/// byte picks the agents, the memory hook and the `cairn` path; the rest is the file. Invariants:
/// `json_text::parse` takes only JSON (serde_json's grammar) and every node's span is a JSON
/// value, a string's decoding serde_json's; each edit refuses with an error naming the file, or
/// gives JSON (TOML) where Cairn's hook or server runs, that a second edit leaves alone and from
/// which taking it off again gives back the bytes it started from (where the modules promise
/// it); what a diff shows keeps the line count.
pub fn settings(data: &[u8]) {
    use cairn_core::hooks::mcp_config::internals as edit;
    let Some((&which, rest)) = data.split_first() else {
        return;
    };
    let text = String::from_utf8_lossy(rest);
    let cli = [
        "/usr/bin/cairn",
        "/home/a b/it's/cairn",
        "/opt/é 漢/cairn",
        "/old/bin/cairn",
    ][usize::from((which >> 2) & 3)];

    if let Ok(root) = edit::parse(&text) {
        assert!(is_json_grammar(&text), "json_text took what is not JSON");
        json_spans(&text, &root);
    }
    let agent = if which & 1 == 0 {
        Agent::Claude
    } else {
        Agent::Codex
    };
    hooks_edit(&text, agent, cli, which & 2 == 0);
    let mcp_agent =
        [Agent::Claude, Agent::Copilot, Agent::Gemini, Agent::Kimi][usize::from((which >> 4) & 3)];
    mcp_json_edit(&text, mcp_agent, cli);
    mcp_toml_edit(&text, cli);
    for hidden in [edit::hide_secrets(&text), edit::hide_toml_secrets(&text)] {
        assert_eq!(
            hidden.lines().count(),
            text.lines().count(),
            "a hidden text lost lines: {hidden:?}"
        );
    }
}

/// JSON as serde_json's grammar has it (any number, a lone surrogate), without its data model.
fn is_json_grammar(text: &str) -> bool {
    serde_json::from_str::<&serde_json::value::RawValue>(text).is_ok()
}

fn json_spans(text: &str, node: &cairn_core::hooks::mcp_config::internals::Node) {
    use cairn_core::hooks::mcp_config::internals::Kind;
    let span = &text[node.start..node.end];
    assert!(
        is_json_grammar(span) && span.trim() == span,
        "a span that is not one JSON value: {span:?}"
    );
    match &node.kind {
        Kind::Object(members) => {
            for (key, key_start, value) in members {
                let raw = serde_json::Deserializer::from_str(&text[*key_start..])
                    .into_iter::<&serde_json::value::RawValue>()
                    .next();
                let decoded = raw
                    .and_then(Result::ok)
                    .and_then(|r| serde_json::from_str::<String>(r.get()).ok());
                assert_eq!(decoded.as_ref(), Some(key), "a key read otherwise");
                json_spans(text, value);
            }
        }
        Kind::Array(items) => items.iter().for_each(|i| json_spans(text, i)),
        Kind::String => assert_eq!(
            node.as_str(text),
            serde_json::from_str::<String>(span).ok(),
            "a string decoded otherwise"
        ),
        Kind::Scalar => {}
    }
}

/// Whether the text holds an empty container with whitespace inside (an insert replaces it).
fn blank_empty(text: &str) -> bool {
    let b = text.as_bytes();
    b.iter().enumerate().any(|(i, c)| {
        matches!(c, b'{' | b'[') && {
            let rest = &b[i + 1..];
            let n = rest.iter().take_while(|c| c.is_ascii_whitespace()).count();
            n > 0 && matches!(rest.get(n), Some(b'}' | b']'))
        }
    })
}

fn hooks_edit(text: &str, agent: Agent, cli: &str, memory: bool) {
    use cairn_core::hooks::mcp_config::internals as edit;
    use cairn_core::hooks::{hook_command, is_cairn_hook_command};
    let path = Path::new("/home/u/.claude/settings.json");
    // An archive elsewhere (its folder in the command) half the time.
    let elsewhere = cli.len() % 2 == 1;
    let command = hook_command(
        Path::new(cli),
        agent,
        elsewhere.then_some(Path::new("/srv/cairn data")),
    );
    let capture: &[&str] = if agent == Agent::Claude {
        &["Stop", "SessionEnd"]
    } else {
        &["Stop"]
    };
    let with = |text: &str, on: bool| {
        let (mut wanted, mut drop) = (capture.to_vec(), Vec::new());
        if on {
            wanted.push("SessionStart");
        } else {
            drop.push("SessionStart");
        }
        (
            edit::with_hook(path, text, agent, &command, &wanted, &drop),
            wanted,
        )
    };
    let (after, wanted) = with(text, memory);
    let after = match after {
        Err(e) => {
            assert!(e.to_string().contains("settings.json"), "{e}");
            return;
        }
        Ok(None) => return,
        Ok(Some(after)) => after,
    };
    assert!(
        is_json_grammar(&after),
        "not JSON after the install: {after:?}"
    );
    assert!(
        edit::runs(path, &after, &wanted, |c| c == command),
        "the hook does not run: {after:?}"
    );
    assert!(
        memory
            || !edit::runs(path, &after, &["SessionStart"], |c| is_cairn_hook_command(
                c, agent
            )),
        "the memory hook is still on: {after:?}"
    );
    assert_eq!(
        with(&after, memory).0.expect("installed settings"),
        None,
        "a second install changed {after:?}"
    );
    // Memory on, then off again: the bytes with it off (but for an empty `SessionStart` list,
    // which goes with Cairn's group).
    let off = if memory {
        with(&after, false).0.expect("off").unwrap_or(after)
    } else {
        after
    };
    let Ok(on) = with(&off, true).0 else {
        return;
    };
    let on = on.unwrap_or(off.clone());
    let back = with(&on, false).0.expect("off again").unwrap_or(on);
    let empty_list = edit::parse(&off).ok().is_some_and(|root| {
        root.get("hooks")
            .and_then(|h| h.get("SessionStart"))
            .and_then(|g| g.elements())
            .is_some_and(<[_]>::is_empty)
    });
    if !empty_list {
        assert_eq!(back, off, "memory on then off changed the settings");
    }
}

fn mcp_json_edit(text: &str, agent: Agent, cli: &str) {
    use cairn_core::hooks::mcp_config::internals::{self as edit, Kind};
    let path = Path::new("/home/u/.claude.json");
    let install = edit::json_edit(agent, path, text, Some(cli));
    let uninstall = edit::json_edit(agent, path, text, None);
    for result in [&install, &uninstall] {
        if let Err(e) = result {
            assert!(e.to_string().contains(".claude.json"), "{e}");
        }
    }
    if let Ok(Some(gone)) = &uninstall {
        assert!(
            is_json_grammar(gone),
            "not JSON after an uninstall: {gone:?}"
        );
        assert_eq!(
            edit::json_edit(agent, path, gone, None).expect("uninstalled"),
            None
        );
    }
    let Ok(Some(after)) = install else {
        return;
    };
    assert!(
        is_json_grammar(&after),
        "not JSON after the install: {after:?}"
    );
    assert_eq!(
        edit::json_edit(agent, path, &after, Some(cli)).expect("installed"),
        None,
        "a second install changed {after:?}"
    );
    let gone = match edit::json_edit(agent, path, &after, None) {
        Ok(Some(gone)) => gone,
        Ok(None) => panic!("the server installed is not found: {after:?}"),
        // `cairn` named twice: taking the last off would uncover the other.
        Err(e) => return assert!(e.to_string().contains("by hand"), "{e}"),
    };
    assert!(
        is_json_grammar(&gone),
        "not JSON after an uninstall: {gone:?}"
    );
    // When the install only added the server: the bytes before, but for an emptied
    // `mcpServers` (it goes) and an empty container's whitespace.
    let emptied = edit::parse(text).ok().is_some_and(|root| {
        matches!(root.get("mcpServers").map(|s| &s.kind), Some(Kind::Object(m)) if m.is_empty())
    });
    if matches!(uninstall, Ok(None)) && !text.trim().is_empty() && !emptied && !blank_empty(text) {
        assert_eq!(gone, text, "uninstall after install");
    }
}

fn mcp_toml_edit(text: &str, cli: &str) {
    use cairn_core::hooks::mcp_config::internals as edit;
    let path = Path::new("/home/u/.codex/config.toml");
    let install = edit::toml_edit(path, text, Some(cli));
    let uninstall = edit::toml_edit(path, text, None);
    for result in [&install, &uninstall] {
        if let Err(e) = result {
            assert!(e.to_string().contains("config.toml"), "{e}");
        }
    }
    if let Ok(Some(gone)) = &uninstall {
        assert_eq!(
            edit::toml_edit(path, gone, None).expect("uninstalled"),
            None
        );
    }
    let Ok(Some(after)) = install else {
        return;
    };
    assert_eq!(
        edit::toml_edit(path, &after, Some(cli)).expect("installed"),
        None,
        "a second install changed {after:?}"
    );
    let gone = edit::toml_edit(path, &after, None)
        .unwrap_or_else(|e| panic!("uninstall refused {after:?}: {e}"))
        .expect("the server installed is not found");
    assert_eq!(
        edit::toml_edit(path, &gone, None).expect("uninstalled"),
        None
    );
    // When the install only appended: the bytes before, but for an emptied `[mcp_servers]`
    // (it goes) and a missing final newline (one is added).
    if matches!(uninstall, Ok(None)) && text.ends_with('\n') && !text.contains("mcp_servers") {
        assert_eq!(gone, text, "uninstall after install");
    }
}

/// A model's answer to an extraction request (`recall::extract::output`), hostile as any: the
/// bytes (lossy UTF-8) as an endpoint's reply, and as an agent CLI's once `unfence` took it out of
/// its code fence. Invariants: `unfence` gives a trimmed piece of its input and is idempotent;
/// `parse` refuses with a protocol error whose message is one bounded line, or accepts only JSON
/// whose `entries` it returns one for one (none lost, none invented), each of a known type, with
/// its ordinals exactly as written (no wrap), a confidence in 0..=1 and text fields that are
/// printable, trimmed and within their caps (title and body not blank, entities distinct and not
/// empty); whitespace around the answer changes nothing; `evidence_range` gives, for a unit
/// `start..=end`, the citation as written when it lies inside the unit in order, else nothing
/// (the pass binds such an entry to the whole unit with a note).
pub fn model_answer(data: &[u8]) {
    use cairn_core::llm::generator::unfence;
    let text = String::from_utf8_lossy(data);
    let inner = unfence(&text);
    let (at, len) = (inner.as_ptr() as usize, inner.len());
    let (base, whole) = (text.as_ptr() as usize, text.len());
    assert!(
        at >= base && at + len <= base + whole,
        "unfence gave text that is not the answer's"
    );
    assert_eq!(inner.trim(), inner, "unfence left whitespace");
    assert_eq!(unfence(inner), inner, "unfence is not idempotent");
    let seed = data.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
    });
    model_reply(&text, seed);
    if inner != text.as_ref() {
        model_reply(inner, seed);
    }
}

fn model_reply(content: &str, seed: u64) {
    use cairn_core::llm::LlmError;
    use cairn_core::recall::extract::output;
    use cairn_core::recall::extract::prompt::MAX_ENTRIES;
    let parsed = output::parse(content);
    let padded = output::parse(&format!(" \n\t{content}\r\n "));
    match (&parsed, &padded) {
        (Ok(a), Ok(b)) => assert_eq!(a, b, "whitespace around the answer changed its entries"),
        (Err(_), Err(_)) => {}
        _ => panic!("whitespace around the answer changed whether it is taken"),
    }
    let entries = match parsed {
        Err(e) => {
            // Every answer the parser refuses is the schema's refusal: it fails the unit asked
            // about, never the pass.
            assert!(
                matches!(e, LlmError::Schema(_)),
                "not a schema error: {e:?}"
            );
            let m = e.to_string();
            assert!(
                !m.is_empty() && m.chars().count() <= 1_000,
                "an unbounded message: {m:?}"
            );
            assert!(
                !m.chars().any(char::is_control),
                "a message that is not one printable line: {m:?}"
            );
            return;
        }
        Ok(entries) => entries,
    };
    // As `parse` reads it: a byte-order mark before the JSON is no part of it.
    let json = content.trim().trim_start_matches('\u{feff}').trim();
    let reply: serde_json::Value = serde_json::from_str(json).expect("an accepted answer is JSON");
    let all = reply["entries"]
        .as_array()
        .expect("an accepted answer has entries");
    // The same entry twice in one answer (its type, and its title and body as read, case and
    // spacing aside) is kept once, the first time it is said.
    let said = |item: &serde_json::Value, k: &str| {
        cairn_core::text::folded(cairn_core::text::printable(item[k].as_str().unwrap_or("")).trim())
    };
    let mut seen = std::collections::HashSet::new();
    let items: Vec<&serde_json::Value> = all
        .iter()
        .filter(|item| {
            seen.insert((
                item["type"].as_str().unwrap_or("").to_owned(),
                said(item, "title"),
                said(item, "body"),
            ))
        })
        .collect();
    assert_eq!(items.len(), entries.len(), "entries lost or invented");
    assert!(entries.len() <= MAX_ENTRIES);
    for (i, (e, item)) in entries.iter().zip(items).enumerate() {
        model_entry(e, item);
        let h = seed.rotate_left((i as u32 * 7) % 64);
        let (x, y) = (h as u32, (h >> 32) as u32);
        let near = |n: i64| u32::try_from(n.clamp(0, i64::from(u32::MAX))).unwrap_or(u32::MAX);
        let mut units = vec![
            (0, 0),
            (0, u32::MAX),
            (u32::MAX, u32::MAX),
            (x.min(y), x.max(y)),
            (x, y),
            (near(e.first), near(e.last)),
            (
                near(e.first.saturating_add(1)),
                near(e.last.saturating_sub(1)),
            ),
        ];
        units.push((units[5].0.min(units[5].1), units[5].0.max(units[5].1)));
        for (start, end) in units {
            cited_range(e, start, end);
        }
    }
}

/// One accepted entry against what the answer held for it.
fn model_entry(e: &cairn_core::recall::extract::output::RawEntry, item: &serde_json::Value) {
    use cairn_core::recall::extract::prompt::{
        MAX_BODY, MAX_ENTITIES, MAX_ENTITY, MAX_TITLE, MAX_TRIGGER, TYPES,
    };
    use cairn_core::text::printable;
    assert!(
        TYPES.contains(&e.entry_type),
        "an unknown type {:?}",
        e.entry_type
    );
    assert_eq!(item["type"].as_str(), Some(e.entry_type.as_str()));
    let field = |value: &str, max: usize, blank_ok: bool, what: &str| {
        assert!(value.chars().count() <= max, "{what} past its cap");
        assert!(blank_ok || !value.is_empty(), "a blank {what}");
        assert_eq!(value.trim(), value, "{what} not trimmed");
        assert_eq!(
            printable(value),
            value,
            "{what} holds what is not printable: {value:?}"
        );
    };
    field(&e.title, MAX_TITLE, false, "title");
    field(&e.body, MAX_BODY, false, "body");
    field(&e.trigger, MAX_TRIGGER, true, "trigger");
    for (k, v) in [
        ("title", &e.title),
        ("body", &e.body),
        ("trigger", &e.trigger),
    ] {
        let written = item[k].as_str().expect("a text field");
        assert_eq!(printable(written).trim(), v, "{k} is not what was written");
    }
    assert!(
        e.confidence.is_finite() && (0.0..=1.0).contains(&e.confidence),
        "confidence {}",
        e.confidence
    );
    assert_eq!(item["confidence"].as_f64(), Some(e.confidence));
    assert!(e.entities.len() <= MAX_ENTITIES);
    for (j, x) in e.entities.iter().enumerate() {
        field(x, MAX_ENTITY, false, "entity");
        assert!(!e.entities[..j].contains(x), "entity {x:?} twice");
    }
    assert_eq!(
        item["evidence"]["first"].as_i64(),
        Some(e.first),
        "first is not as written"
    );
    assert_eq!(
        item["evidence"]["last"].as_i64(),
        Some(e.last),
        "last is not as written"
    );
}

/// `evidence_range` for the unit `start..=end`: the citation as written when it lies inside the
/// unit in order, and nothing otherwise (outside, negative, reversed: never repaired).
fn cited_range(e: &cairn_core::recall::extract::output::RawEntry, start: u32, end: u32) {
    let got = cairn_core::recall::extract::output::evidence_range(e, start, end);
    let inside = i64::from(start) <= e.first && e.first <= e.last && e.last <= i64::from(end);
    let want = inside.then(|| (e.first, e.last));
    assert_eq!(
        got.map(|(a, b)| (i64::from(a), i64::from(b))),
        want,
        "evidence {}..{} in unit {start}..{end}",
        e.first,
        e.last
    );
}

/// A retained copy's bytes as a reindex reads them (`Retained::lines`): a copy damaged on disk
/// is an error naming it, never a panic. The first byte picks the first line number and a
/// committed length (a share of the rest). Invariants: the lines are numbered one after
/// another from the first; read whole and streamed they are the same lines, or both fail; a
/// committed length reads the copy's first bytes only, so it never gives more lines; and a
/// copy this reader could read gives back, written again whole, the same lines.
pub fn retained_copy(data: &[u8]) {
    use cairn_core::archive::retain::{Retained, RetainedLine};
    static DIR: OnceLock<tempfile::TempDir> = OnceLock::new();
    let Some((&which, copy)) = data.split_first() else {
        return;
    };
    let dir = DIR
        .get_or_init(|| tempfile::tempdir().expect("a temporary dir"))
        .path();
    let retained = Retained::new(dir);
    let path = dir.join("copy.jsonl.zst");
    std::fs::write(&path, copy).expect("the copy written");
    let first = u64::from(which & 0x0f);
    let committed = (copy.len() as u64 * u64::from(which >> 4)) / 16;
    let whole = retained.read_committed(&path, first, 0);
    let streamed: Option<Vec<RetainedLine>> = retained
        .lines(&path, first, 0)
        .ok()
        .and_then(|lines| lines.collect::<Result<_, _>>().ok());
    assert_eq!(
        whole.as_ref().ok(),
        streamed.as_ref(),
        "whole and streamed differ"
    );
    // A rebuild's read past damage reads any bytes without failing, and a copy a strict read
    // takes (no damage in it) as that read does.
    let past: Vec<RetainedLine> = retained
        .lines_past_damage(&path, first, 0)
        .expect("a copy opens")
        .collect::<Result<_, _>>()
        .expect("a read past damage never fails");
    if let Ok(whole) = &whole {
        assert_eq!(&past, whole, "a sound copy reads differently past damage");
    }
    let Ok(lines) = whole else {
        return;
    };
    for (i, line) in lines.iter().enumerate() {
        assert_eq!(line.line_no, first + i as u64, "lines out of order");
    }
    if committed > 0
        && let Ok(cut) = retained.read_committed(&path, first, committed)
    {
        assert!(
            cut.len() <= lines.len(),
            "a committed length gave more lines"
        );
    }
    let len = retained
        .write_scrubbed(&path, lines.iter().cloned().map(Ok))
        .expect("a copy written again");
    assert!(retained.swap_in(&path).expect("put in place"));
    assert_eq!(std::fs::metadata(&path).map(|m| m.len()).ok(), Some(len));
    let again = retained.read(&path, first).expect("a rewritten copy reads");
    assert_eq!(again, lines, "a rewritten copy reads differently");
}

/// The session key of the published documents the `published_document` seeds hold.
pub const DOC_KEY: &str = "sha256-0123456789abcdef0123456789abcdef";

/// Text a reader is handed: no control character but newline and tab, no bidi control.
fn shown(what: &str, text: &str) {
    assert!(
        !text
            .chars()
            .any(|c| (c.is_control() && c != '\n' && c != '\t')
                || cairn_core::text::is_bidi_control(c)),
        "{what} holds a control character: {text:?}"
    );
}

/// A teammate's published `session.json` (`git::document::read`, what `cairn pull` checks each
/// fetched document with), under its own ref key or another (the first byte's low bit): a
/// refusal is one printable line of bounded length; a document read passes its checks again,
/// is its own cleaning (cleaning it again changes nothing), writes out and parses back as
/// itself, holds no control character in any text, and shows as a skim session whose agent is
/// one of Cairn's, or `atif` with a plain name it was published under.
pub fn published_document(data: &[u8]) {
    use cairn_core::git::document::{self, DocAgent, PublishedSession};
    use cairn_core::views::skim::SkimSession;
    let Some((&which, bytes)) = data.split_first() else {
        return;
    };
    let key = if which & 1 == 0 {
        DOC_KEY
    } else {
        "sha256-ffffffffffffffffffffffffffffffff"
    };
    let doc = match document::read(bytes, key) {
        Err(refusal) => {
            assert!(
                !refusal.is_empty() && refusal.chars().count() <= 1_000,
                "an unbounded refusal: {refusal:?}"
            );
            assert!(!refusal.contains('\n'), "a refusal of more than one line");
            shown("a refusal", &refusal);
            return;
        }
        Ok(doc) => doc,
    };
    assert_eq!(doc.session.session_key, key, "a document under another key");
    assert!(
        doc.check(key).is_ok(),
        "a document read fails its own checks"
    );
    assert_eq!(
        doc.clone().normalised(),
        doc,
        "cleaning a clean document changed it"
    );
    let written = serde_json::to_vec(&doc).expect("a document writes");
    let mut back: PublishedSession =
        serde_json::from_slice(&written).expect("a written document parses");
    // serde_json reads some decimals back one unit in the last place away (without its
    // `float_roundtrip` feature): a confidence may move that much, nothing else.
    for (b, d) in back
        .session
        .why_related
        .iter_mut()
        .zip(&doc.session.why_related)
    {
        assert!(
            (b.confidence - d.confidence).abs() <= 1e-12,
            "a confidence moved"
        );
        b.confidence = d.confidence;
    }
    assert_eq!(back, doc, "a document does not read back as itself");
    let s = &doc.session;
    for text in [&s.title, &s.project].into_iter().flatten() {
        shown("a title or project", text);
    }
    for t in s
        .previews
        .iter()
        .chain(s.why_related.iter().map(|w| &w.reason))
    {
        shown("a preview or reason", t);
    }
    for t in &s.turns {
        t.tool_names
            .iter()
            .chain(&t.previews)
            .for_each(|x| shown("a turn's text", x));
    }
    let agent = s.agent.clone();
    let card = SkimSession::from_published(doc, "origin");
    match (&agent, card.ran_by.as_deref()) {
        (DocAgent::Known(a), None) => assert_eq!(card.agent, *a),
        (DocAgent::Named(name), Some(by)) => {
            assert_eq!(card.agent, Agent::Atif);
            assert_eq!(by, name);
            assert!(Agent::parse(by).is_none(), "{by} is one of Cairn's agents");
            assert!(
                // `agent::MAX_RAN_BY_CHARS`.
                by.len() <= 40
                    && by.bytes().all(|b| b.is_ascii_lowercase()
                        || b.is_ascii_digit()
                        || b" -_./".contains(&b)),
                "{by:?} is not a plain name"
            );
        }
        other => panic!("a skim card that disagrees with its document: {other:?}"),
    }
}

/// A Git AI authorship log (`git::notes::parse`, what `why` reads from `refs/notes/ai`, another
/// machine's text): read or not, never a panic; a log read names each file's sessions by 7 to 16
/// hex digits with ascending ranges from line 1, and counting a session's lines or asking for
/// any line stays in bounds (counts stop at `u32::MAX`).
pub fn ai_note(data: &[u8]) {
    use cairn_core::git::notes;
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Some(log) = notes::parse(text) else {
        return;
    };
    for (path, entries) in &log.files {
        for (hash, ranges) in entries {
            assert!(
                (7..=16).contains(&hash.len()) && hash.bytes().all(|b| b.is_ascii_hexdigit()),
                "{hash:?} is not a session hash"
            );
            for &(a, b) in ranges {
                assert!(a >= 1 && b >= a, "range {a}-{b}");
                assert!(log.attributes(path, a, hash) && log.attributes(path, b, hash));
            }
            let (count, paths) = log.line_count(hash);
            assert!(
                paths.contains(path),
                "{path:?} not among the files of {hash}"
            );
            let least = ranges.iter().map(|(a, b)| b - a + 1).max().unwrap_or(0);
            assert!(
                count >= least,
                "{hash} counted {count} lines, fewer than one range's {least}"
            );
        }
    }
    for s in &log.sessions {
        let _ = log.line_count(&s.hash);
    }
}

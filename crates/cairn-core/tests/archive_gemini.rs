//! Gemini CLI, and the two source-model kinds it is the first user of: keyed records (a
//! message the agent rewrites updates its records in place, keeping their ordinals; a dropped
//! one is retracted) and the Document read kind (a JSON document rewritten in place, re-read
//! when it changes, diffed by message id).
//!
//! Fixtures: `tests/fixtures/gemini/` (two REAL legacy sessions, CC0; a small document and the
//! JSONL sample, MIT) and `tests/fixtures/agentsview/gemini/` (MIT); see their SOURCES.md. The
//! JSONL cases for `$rewindTo`, `$set.messages` and a re-appended message are hand-written
//! here (synthetic: no public sample has them).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use std::io::Write as _;
use std::path::{Path, PathBuf};

use cairn_core::Cairn;
use cairn_core::archive::Agent;
use cairn_core::archive::capture::{Quiet, SyncReport};
use cairn_core::archive::discover::{self, DirOrigin, FoundFile, SourceDir};
use cairn_core::views::sessions::SessionQuery;
use proptest::prelude::*;
use serde_json::{Value, json};

fn file(path: &Path) -> FoundFile {
    support::main_file(Agent::Gemini, path)
}

/// Every record of the archive: (session id, ordinal, key-ish, kind, text, retracted).
fn records(data: &Path) -> Vec<(String, i64, String, Option<String>, bool)> {
    let conn = rusqlite::Connection::open(data.join("cairn.db")).unwrap();
    let mut stmt = conn
        .prepare(
            "SELECT coalesce(s.session_id, ''), r.ordinal, r.kind, r.text, r.retracted_at IS NOT NULL
             FROM records r JOIN sessions s ON s.id = r.session_id ORDER BY s.session_id, r.ordinal",
        )
        .unwrap();
    stmt.query_map([], |r| {
        Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
    })
    .unwrap()
    .map(Result::unwrap)
    .collect()
}

/// The live (not retracted) records as (kind, text), in ordinal order.
fn live(data: &Path) -> Vec<(String, Option<String>)> {
    records(data)
        .into_iter()
        .filter(|r| !r.4)
        .map(|r| (r.2, r.3))
        .collect()
}

fn pinned(data: &Path, cairn: &Cairn, report: &SyncReport) -> Value {
    let sessions = cairn.sessions(&SessionQuery::default()).unwrap();
    let mut all = Vec::new();
    for s in &sessions {
        let d = cairn.session(&s.session_key).unwrap();
        all.push(json!({
            "agent": d.agent, "session_id": d.session_id, "title": d.title, "cwd": d.cwd,
            "model": d.model, "started_at": d.started_at, "updated_at": d.updated_at,
            "turns": d.turn_count, "records": d.record_count, "kinds": d.kinds, "tools": d.tools,
            "edited_paths": d.edited_paths, "tokens": d.tokens, "unknown_types": d.unknown_types,
            "first_prompt": s.first_prompt,
        }));
    }
    all.sort_by_key(|v| v["session_id"].to_string());
    let conn = rusqlite::Connection::open(data.join("cairn.db")).unwrap();
    let tools: Vec<String> = conn
        .prepare(
            "SELECT r.kind, r.tool_name, r.tool_kind, r.outcome, r.exit_code, r.file_paths
             FROM records r JOIN sessions s ON s.id = r.session_id
             WHERE r.kind IN ('tool_call', 'tool_result') ORDER BY s.session_id, r.ordinal",
        )
        .unwrap()
        .query_map([], |r| {
            Ok(format!(
                "{} {} {} {} {:?} {}",
                r.get::<_, String>(0)?,
                r.get::<_, Option<String>>(1)?.unwrap_or_default(),
                r.get::<_, Option<String>>(2)?.unwrap_or_default(),
                r.get::<_, Option<String>>(3)?.unwrap_or_default(),
                r.get::<_, Option<i64>>(4)?,
                r.get::<_, Option<String>>(5)?.unwrap_or_default(),
            ))
        })
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let mut warnings: Vec<String> = report
        .warnings
        .iter()
        .map(|w| {
            format!(
                "{}: {}",
                w.path.rsplit('/').next().unwrap_or_default(),
                w.message
            )
        })
        .collect();
    warnings.sort();
    support::assert_ordinals_dense(data);
    json!({"sessions": all, "tool_records": tools, "warnings": warnings})
}

#[test]
fn gemini_fixture_sessions_are_pinned() {
    let data = tempfile::tempdir().unwrap();
    let cairn = Cairn::open(data.path()).unwrap();
    let mut files = support::found(Agent::Gemini, &support::fixtures().join("gemini"));
    assert_eq!(files.len(), 4, "{files:?}");
    let agentsview = support::fixtures().join("agentsview/gemini");
    let mut docs: Vec<PathBuf> = std::fs::read_dir(&agentsview)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    docs.sort();
    files.extend(docs.iter().map(|p| file(p)));
    let report = cairn.capture_paths(&files, &Quiet).unwrap();
    assert_eq!(report.records_updated, 0);
    insta::assert_json_snapshot!("gemini", pinned(data.path(), &cairn, &report));

    // Read again: nothing new, nothing updated, the archive unchanged.
    let before = support::dump(data.path());
    let again = cairn.capture_paths(&files, &Quiet).unwrap();
    assert_eq!(
        (
            again.records_added,
            again.records_updated,
            again.sessions_added,
            again.sessions_updated
        ),
        (0, 0, 0, 0)
    );
    assert_eq!(support::dump(data.path()), before);
}

/// The real session's edits: every `write_file`/`replace` call is a file edit naming its
/// path, every shell call an exec, and the one failed call is Failed.
#[test]
fn real_sessions_keep_their_edits_commands_and_failures() {
    let data = tempfile::tempdir().unwrap();
    let cairn = Cairn::open(data.path()).unwrap();
    support::capture(
        &cairn,
        &support::found(Agent::Gemini, &support::fixtures().join("gemini/m-gemini")),
    );
    let conn = rusqlite::Connection::open(data.path().join("cairn.db")).unwrap();
    let count = |sql: &str| -> i64 { conn.query_row(sql, [], |r| r.get(0)).unwrap() };
    assert_eq!(
        count(
            "SELECT count(*) FROM records WHERE kind = 'tool_call' AND tool_kind = 'file_edit' AND file_paths IS NOT NULL"
        ),
        11 + 3 + 5 + 1
    );
    assert_eq!(
        count("SELECT count(*) FROM records WHERE kind = 'tool_call' AND tool_kind = 'exec'"),
        3 + 4
    );
    assert!(
        count("SELECT count(*) FROM records WHERE kind = 'tool_result' AND outcome = 'failed'")
            >= 1
    );
    // Tokens: `cached` is part of `input`, so it is not counted twice.
    let (input, cached, total): (i64, i64, i64) = conn
        .query_row(
            "SELECT sum(input), sum(cache_read), sum(input + output + cache_read + reasoning) FROM token_usage",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .unwrap();
    assert!(input > 0 && cached > 0 && total > input);
}

/// A minimal legacy document with `messages`.
fn doc(messages: &[Value]) -> String {
    serde_json::to_string_pretty(&json!({
        "sessionId": "doc-1", "projectHash": "00", "startTime": "2026-01-01T00:00:00Z",
        "lastUpdated": "2026-01-01T00:10:00Z", "messages": messages,
    }))
    .unwrap()
}

fn user(id: &str, text: &str) -> Value {
    json!({"id": id, "timestamp": "2026-01-01T00:00:01Z", "type": "user", "content": text})
}

fn gemini(id: &str, text: &str, status: Option<&str>) -> Value {
    let mut call = json!({"id": format!("run-{id}"), "name": "run_shell_command",
        "args": {"command": "cargo test"}, "timestamp": "2026-01-01T00:00:03Z"});
    if let Some(s) = status {
        call["status"] = json!(s);
        call["result"] = json!([{"functionResponse": {"id": format!("run-{id}"), "name": "run_shell_command",
            "response": {"output": format!("Exit Code: {}", if s == "success" {0} else {1})}}}]);
    }
    json!({"id": id, "timestamp": "2026-01-01T00:00:02Z", "type": "gemini", "content": text,
        "model": "gemini-2.5-pro", "toolCalls": [call],
        "tokens": {"input": 100, "output": 10, "cached": 40, "thoughts": 5, "total": 115}})
}

fn session_dir(root: &Path) -> PathBuf {
    let dir = root.join("proj/chats");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The CLI rewrites its document after every step: a message that gains its tool result
/// updates its records in place (same ordinals), a new message appends, a message gone from
/// the document is retracted (kept, marked), and nothing is ever stored twice.
#[test]
fn a_rewritten_document_updates_in_place_appends_and_retracts() {
    let src = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let path = session_dir(src.path()).join("session-2026-01-01T00-00-doc1.json");
    let cairn = Cairn::open(data.path()).unwrap();
    let f = file(&path);

    std::fs::write(
        &path,
        doc(&[user("u1", "run the tests"), gemini("g1", "Running.", None)]),
    )
    .unwrap();
    let first = support::capture(&cairn, std::slice::from_ref(&f));
    assert_eq!(first.records_added, 3, "prompt, text, call (no result yet)");
    // Still running (a status, no output yet): no result either, not an empty one.
    let mut running = gemini("g1", "Running.", None);
    running["toolCalls"][0]["status"] = json!("executing");
    std::fs::write(&path, doc(&[user("u1", "run the tests"), running])).unwrap();
    let still = support::capture(&cairn, std::slice::from_ref(&f));
    assert_eq!(
        (still.records_added, still.records_updated),
        (0, 0),
        "a call still running made a result"
    );
    let before = records(data.path());

    // The call finished (a result arrives, the text changes) and a new prompt follows.
    std::fs::write(
        &path,
        doc(&[
            user("u1", "run the tests"),
            gemini("g1", "Ran them.", Some("error")),
            user("u2", "fix it"),
        ]),
    )
    .unwrap();
    let second = support::capture(&cairn, std::slice::from_ref(&f));
    assert_eq!(
        (second.records_added, second.records_updated),
        (2, 1),
        "{second:?}"
    );
    let after = records(data.path());
    // Same ordinals for what was there; the text updated in place.
    for (old, new) in before.iter().zip(&after) {
        assert_eq!(old.1, new.1);
    }
    assert!(after.iter().any(|r| r.3.as_deref() == Some("Ran them.")));
    assert!(!after.iter().any(|r| r.3.as_deref() == Some("Running.")));
    let conn = rusqlite::Connection::open(data.path().join("cairn.db")).unwrap();
    let failures: i64 = conn
        .query_row("SELECT sum(failure_count) FROM turns", [], |r| r.get(0))
        .unwrap();
    assert_eq!(failures, 1, "the updated turn's counters are recomputed");
    // The full-text index follows the update.
    let hits: i64 = conn
        .query_row(
            "SELECT count(*) FROM records_fts WHERE records_fts MATCH 'Running'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(hits, 0);
    let hits: i64 = conn
        .query_row(
            "SELECT count(*) FROM records_fts WHERE records_fts MATCH 'Ran'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(hits, 1);

    // The agent drops the last message (a rewind): it is retracted, not deleted.
    std::fs::write(
        &path,
        doc(&[
            user("u1", "run the tests"),
            gemini("g1", "Ran them.", Some("error")),
        ]),
    )
    .unwrap();
    let third = support::capture(&cairn, std::slice::from_ref(&f));
    assert_eq!((third.records_added, third.records_updated), (0, 0));
    let retracted: Vec<_> = records(data.path()).into_iter().filter(|r| r.4).collect();
    assert_eq!(retracted.len(), 1);
    assert_eq!(retracted[0].3.as_deref(), Some("fix it"));
    // Shown and found, but marked: the views never pass it off as part of the conversation.
    let shown = cairn.records("doc-1", 0, 100).unwrap();
    let marked: Vec<_> = shown
        .iter()
        .filter(|r| r.retracted_at.is_some())
        .map(|r| r.text.as_deref())
        .collect();
    assert_eq!(marked, [Some("fix it")]);
    let hits = cairn
        .search(&cairn_core::views::search::SearchQuery {
            text: "fix".into(),
            ..Default::default()
        })
        .unwrap();
    assert_eq!(hits.len(), 1, "{hits:?}");
    assert!(hits[0].retracted_at.is_some(), "{hits:?}");
    let hits = cairn
        .search(&cairn_core::views::search::SearchQuery {
            text: "tests".into(),
            ..Default::default()
        })
        .unwrap();
    assert!(hits.iter().all(|h| h.retracted_at.is_none()), "{hits:?}");

    // It comes back (the same message rewritten): live again, same ordinal.
    std::fs::write(
        &path,
        doc(&[
            user("u1", "run the tests"),
            gemini("g1", "Ran them.", Some("error")),
            user("u2", "fix it"),
        ]),
    )
    .unwrap();
    support::capture(&cairn, std::slice::from_ref(&f));
    let back = records(data.path());
    assert!(back.iter().all(|r| !r.4));
    let shown = cairn.records("doc-1", 0, 100).unwrap();
    assert!(shown.iter().all(|r| r.retracted_at.is_none()));
    assert_eq!(back.len(), after.len());
    support::assert_ordinals_dense(data.path());
}

/// A tool call removed from a message that stays: only that call's records are retracted.
#[test]
fn a_record_gone_from_a_kept_message_is_retracted() {
    let src = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let path = session_dir(src.path()).join("session-2026-01-01T00-00-doc2.json");
    let cairn = Cairn::open(data.path()).unwrap();
    let f = file(&path);
    std::fs::write(
        &path,
        doc(&[user("u1", "go"), gemini("g1", "On it.", Some("success"))]),
    )
    .unwrap();
    support::capture(&cairn, std::slice::from_ref(&f));
    let mut g = gemini("g1", "On it.", None);
    g.as_object_mut().unwrap().remove("toolCalls");
    std::fs::write(&path, doc(&[user("u1", "go"), g])).unwrap();
    support::capture(&cairn, std::slice::from_ref(&f));
    let kinds: Vec<(String, bool)> = records(data.path())
        .into_iter()
        .map(|r| (r.2, r.4))
        .collect();
    assert_eq!(
        kinds,
        [
            ("message".to_owned(), false),
            ("message".to_owned(), false),
            ("tool_call".to_owned(), true),
            ("tool_result".to_owned(), true),
        ]
    );
}

/// The same document read twice (touched, or rewritten with the same bytes) adds nothing.
#[test]
fn the_same_document_read_twice_adds_nothing() {
    let src = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let path = support::copy_into(
        &support::fixtures().join("gemini/m-gemini/chats/session-2026-01-10T01-55-ac6d3016.json"),
        src.path(),
        "p/chats/session-2026-01-10T01-55-ac6d3016.json",
    );
    let cairn = Cairn::open(data.path()).unwrap();
    let f = file(&path);
    let first = support::capture(&cairn, std::slice::from_ref(&f));
    assert!(first.records_added > 40);
    let before = support::dump(data.path());
    // Same bytes, new mtime: read, found identical, nothing stored.
    let bytes = std::fs::read(&path).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(20));
    std::fs::write(&path, &bytes).unwrap();
    let again = support::capture(&cairn, std::slice::from_ref(&f));
    assert_eq!((again.records_added, again.records_updated), (0, 0));
    // Reformatted (the same JSON, other whitespace): nothing either, the units are the same.
    let v: Value = serde_json::from_slice(&bytes).unwrap();
    std::fs::write(&path, serde_json::to_vec(&v).unwrap()).unwrap();
    let third = support::capture(&cairn, std::slice::from_ref(&f));
    assert_eq!((third.records_added, third.records_updated), (0, 0));
    assert_eq!(support::dump(data.path()), before);
}

/// A document caught half-written (the CLI killed mid-write, or read while it writes) is a
/// warning in the report, stores nothing and keeps what the last good read stored; the next
/// complete version is read normally.
#[test]
fn a_half_written_or_corrupt_document_loses_nothing() {
    let src = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let path = session_dir(src.path()).join("session-2026-01-01T00-00-doc3.json");
    let cairn = Cairn::open(data.path()).unwrap();
    let f = file(&path);
    let good = doc(&[user("u1", "one"), gemini("g1", "two", Some("success"))]);
    std::fs::write(&path, &good).unwrap();
    support::capture(&cairn, std::slice::from_ref(&f));
    let before = support::dump(data.path());

    let next = doc(&[
        user("u1", "one"),
        gemini("g1", "two", Some("success")),
        user("u2", "three"),
    ]);
    for broken in [
        next[..next.len() / 2].to_owned(),
        String::new(),
        "{\"messages\": [".to_owned(),
        "\u{0}\u{1}garbage".to_owned(),
    ] {
        std::fs::write(&path, &broken).unwrap();
        let r = support::capture(&cairn, std::slice::from_ref(&f));
        assert_eq!(r.records_added, 0);
        assert!(
            r.warnings
                .iter()
                .any(|w| w.message.contains("not a complete JSON document")),
            "{r:?}"
        );
        assert_eq!(
            support::dump(data.path()),
            before,
            "a broken read changed the archive"
        );
    }
    std::fs::write(&path, &next).unwrap();
    let r = support::capture(&cairn, std::slice::from_ref(&f));
    assert_eq!((r.records_added, r.records_updated), (1, 0));
}

/// Hostile documents: control sequences, a huge value, wrong types everywhere, a deep nest,
/// ids that collide. Nothing fails, good messages are kept, huge text is capped.
#[test]
fn hostile_documents_are_read_or_warned_never_fatal() {
    let src = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let dir = session_dir(src.path());
    let cairn = Cairn::open(data.path()).unwrap();
    let huge = "y".repeat(2 << 20);
    let messages = vec![
        user("u1", "esc \u{1b}[2J\u{1b}]0;title\u{7} bidi \u{202e}evil"),
        json!({"id": 5, "type": ["user"], "content": {"x": 1}}),
        json!({"id": "w", "type": "gemini", "toolCalls": "not a list", "thoughts": 7, "tokens": "many"}),
        json!({"id": "w2", "type": "gemini", "toolCalls": [1, null, {"id": 3, "name": 4, "args": "x", "result": {"a": 1}}]}),
        json!("a bare string"),
        json!(null),
        user("dup", "first of two"),
        user("dup", "second of two"),
        user("big", &huge),
        json!({"id": "unknown-type", "type": "telemetry"}),
        user("last", "last"),
    ];
    let text = serde_json::to_string(
        &json!({"sessionId": ["wrong"], "projectHash": 7, "messages": messages}),
    )
    .unwrap();
    std::fs::write(dir.join("session-2026-01-01T00-00-hostile.json"), text).unwrap();
    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    std::fs::write(dir.join("session-2026-01-01T00-00-deep.json"), deep).unwrap();
    std::fs::write(dir.join("session-2026-01-01T00-00-array.json"), "[1, 2, 3]").unwrap();
    let files = support::found(Agent::Gemini, src.path());
    assert_eq!(files.len(), 3);
    let report = support::capture(&cairn, &files);
    let texts: Vec<String> = live(data.path()).into_iter().filter_map(|r| r.1).collect();
    assert!(
        texts.iter().any(|t| t.starts_with("esc \u{1b}[2J")),
        "{texts:?}"
    );
    assert!(texts.iter().any(|t| t == "last"));
    assert!(
        texts.iter().any(|t| t == "first of two") && texts.iter().any(|t| t == "second of two")
    );
    let big = texts
        .iter()
        .find(|t| t.starts_with("yyyy"))
        .expect("the huge prompt");
    assert!(big.len() < huge.len() / 4, "the huge prompt is not capped");
    assert!(
        report
            .warnings
            .iter()
            .any(|w| w.path.ends_with("deep.json")),
        "{:?}",
        report.warnings
    );
    // Read again: still nothing twice.
    let again = support::capture(&cairn, &files);
    assert_eq!((again.records_added, again.records_updated), (0, 0));
}

/// A `session-*.json` symlink pointing out of the source dir is not read.
#[test]
fn a_document_symlinked_from_outside_is_not_read() {
    let src = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let secret = outside.path().join("secret.json");
    std::fs::write(&secret, doc(&[user("u1", "private")])).unwrap();
    let dir = session_dir(src.path());
    std::os::unix::fs::symlink(&secret, dir.join("session-2026-01-01T00-00-link.json")).unwrap();
    let sd = SourceDir {
        agent: Agent::Gemini,
        path: src.path().to_owned(),
        origin: DirOrigin::Env,
    };
    let mut warnings = Vec::new();
    assert!(discover::walk(&sd, &mut warnings).is_empty());
    assert_eq!(warnings.len(), 1);
}

/// A secret in a document never reaches the archive or the retained copy.
#[test]
fn secrets_in_a_document_are_redacted_before_parsing() {
    let src = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let path = session_dir(src.path()).join("session-2026-01-01T00-00-secret.json");
    let key = "ghp_abcdefghijklmnopqrstuvwxyz0123456789";
    let mut g = gemini("g1", &format!("token {key}"), Some("success"));
    g["toolCalls"][0]["args"]["command"] = json!(format!("curl -H 'Authorization: token {key}'"));
    std::fs::write(&path, doc(&[user("u1", &format!("use {key}")), g])).unwrap();
    let cairn = Cairn::open(data.path()).unwrap();
    let r = support::capture(&cairn, &[file(&path)]);
    assert!(r.records_added >= 4);
    for entry in walkdir::WalkDir::new(data.path()) {
        let entry = entry.unwrap();
        if !entry.file_type().is_file() {
            continue;
        }
        let bytes = std::fs::read(entry.path()).unwrap();
        let plain = if entry.path().extension().is_some_and(|e| e == "zst") {
            zstd::decode_all(&bytes[..]).unwrap_or_default()
        } else {
            bytes
        };
        assert!(
            !plain.windows(key.len()).any(|w| w == key.as_bytes()),
            "{} holds the secret",
            entry.path().display()
        );
    }
    let conn = rusqlite::Connection::open(data.path().join("cairn.db")).unwrap();
    let findings: i64 = conn
        .query_row("SELECT count(*) FROM secret_findings", [], |r| r.get(0))
        .unwrap();
    assert!(findings >= 3);
}

// ---- JSONL: keyed lines -------------------------------------------------------------------------

fn jsonl_header() -> Value {
    json!({"sessionId": "jl-1", "projectHash": "00", "startTime": "2026-01-01T00:00:00Z",
        "lastUpdated": "2026-01-01T00:00:00Z", "kind": "main"})
}

fn append(path: &Path, lines: &[Value]) {
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .unwrap();
    for l in lines {
        writeln!(f, "{l}").unwrap();
    }
}

/// Synthetic (no public sample): a message re-appended with its tool result updates its
/// records in place; `$rewindTo` retracts that message and every later one; `$set.messages`
/// replaces the history (upserts every message, retracts the rest).
#[test]
fn jsonl_reappends_rewinds_and_snapshots_update_in_place() {
    let src = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let path = session_dir(src.path()).join("session-2026-01-01T00-00-jl1.jsonl");
    let cairn = Cairn::open(data.path()).unwrap();
    let f = file(&path);
    append(
        &path,
        &[
            jsonl_header(),
            user("u1", "run the tests"),
            gemini("g1", "Running.", None),
        ],
    );
    let first = support::capture(&cairn, std::slice::from_ref(&f));
    assert_eq!(first.records_added, 3);
    let ordinals: Vec<i64> = records(data.path()).iter().map(|r| r.1).collect();

    append(
        &path,
        &[
            gemini("g1", "Ran.", Some("success")),
            json!({"$set": {"lastUpdated": "2026-01-01T00:05:00Z", "summary": "Tests"}}),
        ],
    );
    fts_ok(data.path());
    let second = support::capture(&cairn, std::slice::from_ref(&f));
    fts_ok(data.path());
    assert_eq!(
        (second.records_added, second.records_updated),
        (1, 1),
        "{second:?}"
    );
    let now = records(data.path());
    assert_eq!(
        now.iter().take(3).map(|r| r.1).collect::<Vec<_>>(),
        ordinals
    );
    assert_eq!(now.len(), 4);
    let d = cairn.sessions(&SessionQuery::default()).unwrap();
    assert_eq!(d[0].title.as_deref(), Some("Tests"));

    append(
        &path,
        &[
            user("u2", "and lint"),
            user("u3", "and fmt"),
            json!({"$rewindTo": "u2"}),
        ],
    );
    let third = support::capture(&cairn, std::slice::from_ref(&f));
    fts_ok(data.path());
    assert_eq!(third.records_added, 2);
    let retracted: Vec<String> = records(data.path())
        .into_iter()
        .filter(|r| r.4)
        .filter_map(|r| r.3)
        .collect();
    assert_eq!(retracted, ["and lint", "and fmt"]);

    // A whole-history rewrite keeps u1 and g1, brings nothing back, adds u4.
    append(
        &path,
        &[
            json!({"$set": {"messages": [user("u1", "run the tests"), gemini("g1", "Ran.", Some("success")), user("u4", "ship it")]}}),
        ],
    );
    let fourth = support::capture(&cairn, std::slice::from_ref(&f));
    assert_eq!(
        (fourth.records_added, fourth.records_updated),
        (1, 0),
        "{fourth:?}"
    );
    let live: Vec<String> = live(data.path()).into_iter().filter_map(|r| r.1).collect();
    assert_eq!(live, ["run the tests", "Ran.", "Exit Code: 0", "ship it"]);
    support::assert_ordinals_dense(data.path());

    // The whole file read again from scratch (a new archive) gives the same live records.
    let fresh = tempfile::tempdir().unwrap();
    let c2 = Cairn::open(fresh.path()).unwrap();
    support::capture(&c2, std::slice::from_ref(&f));
    let again: Vec<String> = self::live(fresh.path())
        .into_iter()
        .filter_map(|r| r.1)
        .collect();
    fts_ok(fresh.path());
    assert_eq!(again, live);
}

/// A message stored by one capture and updated twice by the next (re-appended twice) is updated
/// in place in the full-text index both times: the index stays whole and finds the final text.
#[test]
fn a_message_updated_twice_in_one_capture_keeps_the_index_whole() {
    let src = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let path = session_dir(src.path()).join("session-2026-01-01T00-00-jl2.jsonl");
    let cairn = Cairn::open(data.path()).unwrap();
    let f = file(&path);
    append(&path, &[jsonl_header(), gemini("g1", "first", None)]);
    support::capture(&cairn, std::slice::from_ref(&f));
    append(
        &path,
        &[
            gemini("g1", "second", None),
            gemini("g1", "third zanzibar", None),
        ],
    );
    let again = support::capture(&cairn, std::slice::from_ref(&f));
    assert_eq!((again.records_added, again.records_updated), (0, 2));
    fts_ok(data.path());
    let hits: i64 = support::count(
        data.path(),
        "SELECT count(*) FROM records_fts WHERE records_fts MATCH 'zanzibar'",
    );
    assert_eq!(hits, 1);
}

/// The full-text index agrees with the records table.
fn fts_ok(data: &Path) {
    let conn = rusqlite::Connection::open(data.join("cairn.db")).unwrap();
    conn.execute(
        "INSERT INTO records_fts (records_fts, rank) VALUES ('integrity-check', 1)",
        [],
    )
    .unwrap();
}

// ---- properties -------------------------------------------------------------------------------

/// One version of a document: which of a fixed pool of messages it holds, and with which text.
fn version() -> impl Strategy<Value = Vec<(u8, u8)>> {
    prop::collection::vec((0u8..8, 0u8..3), 0..8)
}

fn render(v: &[(u8, u8)]) -> String {
    let mut seen = std::collections::BTreeSet::new();
    let messages: Vec<Value> = v
        .iter()
        .filter(|(id, _)| seen.insert(*id))
        .map(|(id, text)| {
            if id % 2 == 0 {
                user(&format!("m{id}"), &format!("prompt {id} v{text}"))
            } else {
                gemini(
                    &format!("m{id}"),
                    &format!("answer {id} v{text}"),
                    (text % 2 == 0).then_some("success"),
                )
            }
        })
        .collect();
    doc(&messages)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: support::proptest_cases(24), ..ProptestConfig::default() })]

    /// Whatever sequence of rewrites the agent makes, the live records after reading each
    /// version equal those of a fresh archive that read only the last one (as sets: ordinals
    /// follow first appearance), ordinals stay dense, and a re-read changes nothing.
    #[test]
    fn any_rewrite_sequence_ends_like_a_fresh_read(versions in prop::collection::vec(version(), 1..5)) {
        let src = tempfile::tempdir().unwrap();
        let path = session_dir(src.path()).join("session-2026-01-01T00-00-prop.json");
        let f = file(&path);
        let data = tempfile::tempdir().unwrap();
        let cairn = Cairn::open(data.path()).unwrap();
        for (i, v) in versions.iter().enumerate() {
            std::fs::write(&path, render(v)).unwrap();
            // Quick rewrites can share an mtime tick: give each version its own mtime so the
            // test is about content, not the file system's clock.
            let when = std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_000_000 + i as u64);
            std::fs::File::options().write(true).open(&path).unwrap().set_modified(when).unwrap();
            support::capture(&cairn, std::slice::from_ref(&f));
        }
        let again = support::capture(&cairn, std::slice::from_ref(&f));
        prop_assert_eq!((again.records_added, again.records_updated), (0, 0));
        support::assert_ordinals_dense(data.path());
        let fresh = tempfile::tempdir().unwrap();
        let c2 = Cairn::open(fresh.path()).unwrap();
        support::capture(&c2, std::slice::from_ref(&f));
        let mut a = live(data.path());
        let mut b = live(fresh.path());
        a.sort();
        b.sort();
        prop_assert_eq!(a, b);
    }
}

/// A document of another shape (what a change of Gemini's format would give) is no session and
/// no failure, but never silent: a warning names the file and what was not read. One with no
/// messages yet is passed over quietly, as before.
#[test]
fn a_document_of_another_shape_is_a_warning() {
    let src = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let cairn = Cairn::open(data.path()).unwrap();
    let dir = session_dir(src.path());
    for (name, text, says) in [
        ("a", "[]", Some("document-not-an-object")),
        (
            "b",
            r#"{"sessionId": 5, "messages": "x"}"#,
            Some("messages-not-a-list"),
        ),
        (
            "c",
            r#"{"sessionId": "s", "messages": [null, 5]}"#,
            Some("message-not-an-object ×2"),
        ),
        ("d", r#"{"sessionId": "s", "messages": []}"#, None),
    ] {
        let path = dir.join(format!("session-2026-01-01T00-00-{name}.json"));
        std::fs::write(&path, text).unwrap();
        let report = support::capture(&cairn, &[file(&path)]);
        assert_eq!(report.sessions_added, 0, "{name}");
        match says {
            Some(kind) => assert!(
                report.warnings.len() == 1
                    && report.warnings[0].message.starts_with("nothing read")
                    && report.warnings[0].message.contains(kind)
                    && report.warnings[0].path.ends_with(&format!("-{name}.json")),
                "{name}: {:?}",
                report.warnings
            ),
            None => assert!(report.warnings.is_empty(), "{name}: {:?}", report.warnings),
        }
    }
}

// ---- rewinds ----------------------------------------------------------------------------------

/// What a session counts, as every view shows it: the sessions row (turns, records, tokens,
/// kinds, tools) and each turn holding a record the agent kept, with its counters.
fn counts(data: &Path, cairn: &Cairn) -> Value {
    let sessions = cairn.sessions(&SessionQuery::default()).unwrap();
    assert_eq!(sessions.len(), 1, "{sessions:?}");
    let d = cairn.session(&sessions[0].session_key).unwrap();
    let conn = rusqlite::Connection::open(data.join("cairn.db")).unwrap();
    let turns: Vec<Value> = conn
        .prepare(
            "SELECT turn_index, record_count, tool_call_count, edit_count, exec_count,
                    failure_count, preview, assistant_preview
             FROM turns WHERE record_count > 0 ORDER BY turn_index",
        )
        .unwrap()
        .query_map([], |r| {
            Ok(json!([
                r.get::<_, i64>(0)?,
                r.get::<_, i64>(1)?,
                r.get::<_, i64>(2)?,
                r.get::<_, i64>(3)?,
                r.get::<_, i64>(4)?,
                r.get::<_, i64>(5)?,
                r.get::<_, Option<String>>(6)?,
                r.get::<_, Option<String>>(7)?,
            ]))
        })
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let live = live(data).len();
    json!({
        "turns": d.turn_count, "records": d.record_count, "live_records": live,
        "tokens": d.tokens, "kinds": d.kinds, "tools": d.tools,
        "edited_paths": d.edited_paths, "listed_turns": sessions[0].turn_count,
        "listed_records": sessions[0].record_count, "turn_rows": turns,
    })
}

/// A rewound chat (Gemini CLI's rewind: a legacy document written again without its last
/// turns, or `{"$rewindTo": id}` appended to the JSONL log) counts what it still holds: read
/// over its earlier version, the session's turns, records, tokens, kinds and tools are those
/// of a fresh read of the rewound file, which are those of the messages it keeps. The rewound
/// copies are `tests/fixtures/gemini-rewound/` (see its SOURCES.md).
#[test]
fn a_rewound_chat_counts_only_what_it_keeps() {
    let fixtures = support::fixtures();
    for (rel, kept) in [
        // The real session: 28 messages, its fifth prompt and the 10 messages after it dropped.
        (
            "m-gemini/chats/session-2025-12-24T06-40-c330aea9.json",
            (4, 17),
        ),
        // The JSONL sample: its last answer (and its tokens) rewound.
        (
            "stage0/chats/session-2026-04-29T21-39-gemini_s.jsonl",
            (1, 2),
        ),
    ] {
        let src = tempfile::tempdir().unwrap();
        let path = src.path().join("proj").join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let f = file(&path);

        // Read before and after the rewind.
        let data = tempfile::tempdir().unwrap();
        let cairn = Cairn::open(data.path()).unwrap();
        std::fs::copy(fixtures.join("gemini").join(rel), &path).unwrap();
        support::capture(&cairn, std::slice::from_ref(&f));
        let before = counts(data.path(), &cairn);
        std::fs::copy(fixtures.join("gemini-rewound").join(rel), &path).unwrap();
        // A later mtime: the rewrite is told by content, not by the file system's clock.
        let later = std::time::SystemTime::now() + std::time::Duration::from_secs(5);
        std::fs::File::options()
            .write(true)
            .open(&path)
            .unwrap()
            .set_modified(later)
            .unwrap();
        support::capture(&cairn, std::slice::from_ref(&f));
        let resynced = counts(data.path(), &cairn);
        assert_ne!(resynced, before, "{rel}: the rewind changed nothing");

        // Read once, rewound.
        let fresh = tempfile::tempdir().unwrap();
        let c2 = Cairn::open(fresh.path()).unwrap();
        support::capture(&c2, std::slice::from_ref(&f));
        let fresh_counts = counts(fresh.path(), &c2);
        assert_eq!(resynced, fresh_counts, "{rel}: re-read vs fresh read");

        // What the rewound file keeps: its prompts' turns and its messages' records alone.
        let (turns, messages) = kept;
        assert_eq!(fresh_counts["turns"], turns, "{rel}: {fresh_counts}");
        assert_eq!(fresh_counts["listed_turns"], turns, "{rel}");
        assert_eq!(
            fresh_counts["records"], fresh_counts["live_records"],
            "{rel}: {fresh_counts}"
        );
        let rows = fresh_counts["turn_rows"].as_array().unwrap();
        assert_eq!(rows.len(), turns, "{rel}");
        let in_turns: u64 = rows.iter().map(|t| t[1].as_u64().unwrap()).sum();
        assert_eq!(fresh_counts["records"], in_turns, "{rel}");
        let doc = std::fs::read_to_string(fixtures.join("gemini-rewound").join(rel)).unwrap();
        let kept_ids = kept_messages(&doc);
        assert_eq!(kept_ids.len(), messages, "{rel}");
        let (input, output) = kept_tokens(&doc, &kept_ids);
        let tokens = &fresh_counts["tokens"];
        assert_eq!(
            (
                tokens["input"].as_u64().unwrap() + tokens["cache_read"].as_u64().unwrap(),
                tokens["output"].as_u64().unwrap()
            ),
            (input, output),
            "{rel}: {tokens}"
        );
        insta::assert_json_snapshot!(
            format!("gemini_rewound_{}", rel.split('/').next().unwrap()),
            fresh_counts
        );

        // An archive an older Cairn counted this way (its dropped turns and records counted)
        // is offered a reindex, which counts what the rewound file keeps.
        let db = rusqlite::Connection::open(data.path().join("cairn.db")).unwrap();
        db.execute(
            "UPDATE sessions SET read_by = ?1, record_count = ?2, turn_count = ?3",
            rusqlite::params![
                cairn_core::archive::sources::unchanged_since(Agent::Gemini) - 1,
                before["records"].as_i64().unwrap(),
                before["turns"].as_i64().unwrap()
            ],
        )
        .unwrap();
        assert_eq!(cairn.sessions_read_before().unwrap(), 1, "{rel}");
        let request = cairn_core::ReindexRequest {
            outdated: true,
            ..Default::default()
        };
        cairn.reindex(&request, &Quiet).unwrap();
        assert_eq!(
            counts(data.path(), &cairn),
            fresh_counts,
            "{rel}: reindexed"
        );
    }
}

/// The ids of the messages a Gemini file holds at its end: a document's `messages`, or a log's
/// messages up to its last `$rewindTo`.
fn kept_messages(text: &str) -> Vec<String> {
    if let Ok(doc) = serde_json::from_str::<Value>(text) {
        return doc["messages"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["id"].as_str().unwrap().to_owned())
            .collect();
    }
    let mut ids: Vec<String> = Vec::new();
    for line in text.lines() {
        let v: Value = serde_json::from_str(line).unwrap();
        if let Some(to) = v["$rewindTo"].as_str() {
            let at = ids.iter().position(|id| id == to).unwrap();
            ids.truncate(at);
        } else if let Some(id) = v["id"].as_str()
            && !ids.iter().any(|i| i == id)
        {
            ids.push(id.to_owned());
        }
    }
    ids
}

/// The input and output tokens of the messages `ids` (each message's last version).
fn kept_tokens(text: &str, ids: &[String]) -> (u64, u64) {
    let messages: Vec<Value> = match serde_json::from_str::<Value>(text) {
        Ok(doc) => doc["messages"].as_array().unwrap().clone(),
        Err(_) => text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect(),
    };
    let mut last = std::collections::BTreeMap::new();
    for m in messages {
        if let Some(id) = m["id"].as_str()
            && ids.iter().any(|i| i == id)
        {
            last.insert(id.to_owned(), m["tokens"].clone());
        }
    }
    last.values().fold((0, 0), |(i, o), t| {
        (
            i + t["input"].as_u64().unwrap_or(0),
            o + t["output"].as_u64().unwrap_or(0),
        )
    })
}

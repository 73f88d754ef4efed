//! QwenPaw's session documents (`~/.copaw/workspaces/<agent>/sessions/…json`, the Document read
//! kind): golden over AgentsView's fixtures (`tests/fixtures/qwenpaw/`, see SOURCES.md), a
//! session rewritten with more messages, and one caught half-written.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use cairn_core::Cairn;
use cairn_core::archive::Agent;
use cairn_core::archive::capture::Quiet;
use serde_json::{Value, json};

/// QwenPaw writes its local time without a zone: read as this machine's. The test checks one
/// such reading and pins every time as the wall clock wrote it, so it holds in any zone.
#[test]
fn qwenpaw_fixture_sessions_are_pinned() {
    let data = tempfile::tempdir().unwrap();
    let cairn = Cairn::open(data.path()).unwrap();
    let files = support::found(Agent::Qwenpaw, &support::fixtures().join("qwenpaw"));
    assert_eq!(files.len(), 5, "{files:?}");
    let report = cairn.capture_paths(&files, &Quiet).unwrap();
    let mut pinned = crate::archive_golden_agents::pinned(data.path(), &cairn, &report);
    let zone = jiff::tz::TimeZone::system();
    let main = pinned["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["session_id"] == "default/main_main")
        .unwrap();
    assert_eq!(
        main["started_at"].as_str(),
        cairn_core::text::local_rfc3339("2026-03-16 09:00:00.000", &zone).as_deref()
    );
    for session in pinned["sessions"].as_array_mut().unwrap() {
        for key in ["started_at", "updated_at"] {
            let at: jiff::Timestamp = session[key].as_str().unwrap().parse().unwrap();
            let wall = zone.to_datetime(at);
            session[key] = json!(
                wall.strftime("%Y-%m-%dT%H:%M:%S%.3f (wall clock)")
                    .to_string()
            );
        }
    }
    insta::assert_json_snapshot!("qwenpaw", pinned);
    let again = support::capture(&cairn, &files);
    assert_eq!((again.records_added, again.records_updated), (0, 0));
}

/// QwenPaw rewrites the whole document as the session goes on: a rewrite with a new exchange
/// adds its records alone; one caught half-written is a warning, nothing read or lost, and the
/// finished document is read once it is whole.
#[test]
fn a_session_rewritten_and_one_caught_half_written() {
    let src = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let path = support::copy_into(
        &support::fixtures().join("qwenpaw/default/sessions/main_main.json"),
        src.path(),
        "default/sessions/main_main.json",
    );
    let cairn = Cairn::open(data.path()).unwrap();
    let files = support::found(Agent::Qwenpaw, src.path());
    let first = support::capture(&cairn, &files);
    assert_eq!(first.records_added, 4, "{first:?}");

    let mut doc: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    let messages = doc["agent"]["memory"]["content"].as_array_mut().unwrap();
    messages.push(json!([{"id": "msg_0011", "role": "user", "content": [{"type": "text", "text": "And the tests?"}],
        "timestamp": "2026-03-16 09:01:00.000"}, []]));
    messages.push(json!([{"id": "aID2", "role": "assistant", "content": [{"type": "tool_use", "id": "c9",
        "name": "execute_shell_command", "input": {"command": "pytest"}}], "timestamp": "2026-03-16 09:01:01.000"}, []]));
    support::torn_then_whole(&cairn, data.path(), &files, &path, &doc, 2);
    let calls = support::count(
        data.path(),
        "SELECT count(*) FROM records WHERE kind = 'tool_call' AND tool_kind = 'exec'",
    );
    assert_eq!(calls, 1);
}

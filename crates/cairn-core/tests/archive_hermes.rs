//! Hermes Agent's session documents (`~/.hermes/sessions/session_<id>.json`, the Document read
//! kind): golden over the real fixtures (`tests/fixtures/hermes/`, see SOURCES.md), a session
//! rewritten with more messages, and one caught half-written.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use cairn_core::Cairn;
use cairn_core::archive::Agent;
use cairn_core::archive::capture::Quiet;
use serde_json::{Value, json};

/// The schema-drift session's times are Python's `isoformat()` of a local time, without a zone:
/// read as this machine's, and the gateway session's folder is written from the home (`~/…`):
/// under this machine's. The test checks both readings and pins them as written, so it holds on
/// any machine.
#[test]
fn hermes_fixture_sessions_are_pinned() {
    let data = tempfile::tempdir().unwrap();
    let cairn = Cairn::open(data.path()).unwrap();
    let files = support::found(Agent::Hermes, &support::fixtures().join("hermes"));
    assert_eq!(files.len(), 3, "{files:?}");
    let report = cairn.capture_paths(&files, &Quiet).unwrap();
    let mut pinned = crate::archive_golden_agents::pinned(data.path(), &cairn, &report);
    let zone = jiff::tz::TimeZone::system();
    let drift = session(&mut pinned, "20260429_hermes_schema_drift");
    for (key, wrote) in [
        ("started_at", "2026-04-29T20:10:00"),
        ("updated_at", "2026-04-29T20:10:08"),
    ] {
        let read = drift[key].as_str().unwrap();
        assert_eq!(
            Some(read),
            cairn_core::text::local_rfc3339(wrote, &zone).as_deref()
        );
        let wall = zone.to_datetime(read.parse().unwrap());
        drift[key] = json!(wall.strftime("%Y-%m-%dT%H:%M:%S (wall clock)").to_string());
    }
    // The gateway session names its folder from the home: it is this machine's, pinned as `~`.
    let home = dirs::home_dir().unwrap();
    let large = session(&mut pinned, "20260429_hermes_large");
    let cwd = large["cwd"].as_str().unwrap();
    assert_eq!(cwd, home.join("Repository/Codex-History").to_str().unwrap());
    large["cwd"] = json!("~/Repository/Codex-History (under this machine's home)");
    // In the order of their ids: where the drift session falls among the others depends on
    // the zone.
    pinned["sessions"]
        .as_array_mut()
        .unwrap()
        .sort_by_key(|s| s["session_id"].to_string());
    insta::assert_json_snapshot!("hermes", pinned);
    let again = support::capture(&cairn, &files);
    assert_eq!((again.records_added, again.records_updated), (0, 0));
    assert!(again.warnings.is_empty(), "{:?}", again.warnings);
}

/// The pinned session whose agent id is `id`.
fn session<'a>(pinned: &'a mut Value, id: &str) -> &'a mut Value {
    pinned["sessions"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|s| s["session_id"] == id)
        .unwrap()
}

/// Hermes rewrites the whole document as the session goes on: a rewrite with a new exchange
/// adds its records alone; one caught half-written is a warning, nothing read or lost, and the
/// finished document is read once it is whole.
#[test]
fn a_session_rewritten_and_one_caught_half_written() {
    let src = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let path = support::copy_into(
        &support::fixtures().join("hermes/session_20260429_hermes_small.json"),
        src.path(),
        "session_20260429_hermes_small.json",
    );
    let cairn = Cairn::open(data.path()).unwrap();
    let files = support::found(Agent::Hermes, src.path());
    let first = support::capture(&cairn, &files);
    assert_eq!(first.records_added, 2, "{first:?}");

    let mut doc: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    let messages = doc["messages"].as_array_mut().unwrap();
    messages.push(json!({"role": "user", "content": "And the tests?"}));
    messages.push(
        json!({"role": "assistant", "content": "", "tool_calls": [{"id": "c1", "type": "function",
        "function": {"name": "terminal", "arguments": "{\"command\":\"pytest\"}"}}]}),
    );
    doc["last_updated"] = json!("2026-04-29T20:01:00Z");
    support::torn_then_whole(&cairn, data.path(), &files, &path, &doc, 2);
    let calls = support::count(
        data.path(),
        "SELECT count(*) FROM records WHERE kind = 'tool_call' AND tool_kind = 'exec'",
    );
    assert_eq!(calls, 1);
}

/// A rewrite that drops the first messages (a compressed context) takes those back and keeps
/// what they said, and every other record stays as it was: keyed by place, each later message
/// was written over the one before it and the first prompt was lost.
#[test]
fn a_rewrite_that_drops_the_first_messages_loses_nothing() {
    let src = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let path = support::copy_into(
        &support::fixtures().join("hermes/session_20260429_hermes_large.json"),
        src.path(),
        "session_20260429_hermes_large.json",
    );
    let cairn = Cairn::open(data.path()).unwrap();
    let files = support::found(Agent::Hermes, src.path());
    let first = support::capture(&cairn, &files);
    let records = first.records_added;
    assert!(records >= 4, "{first:?}");
    let texts = |sql: &str| support::count(data.path(), sql);
    let prompt = "SELECT count(*) FROM records WHERE text = 'Check the current directory.'";
    assert_eq!(texts(prompt), 1);

    let mut doc: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    let messages = doc["messages"].as_array_mut().unwrap();
    messages.drain(..2);
    let at = messages.len() - 1;
    messages.insert(at, json!({"role": "user", "content": "LATER prompt"}));
    messages.insert(
        at + 1,
        json!({"role": "assistant", "content": "LATER answer"}),
    );
    std::fs::write(&path, serde_json::to_vec(&doc).unwrap()).unwrap();
    let again = support::capture(&cairn, &files);
    assert_eq!(
        again.records_added, 2,
        "the two new messages alone: {again:?}"
    );
    assert_eq!(texts(prompt), 1, "the first prompt is kept");
    assert_eq!(
        texts(
            "SELECT count(*) FROM records WHERE text = 'Check the current directory.' AND retracted_at IS NOT NULL"
        ),
        1,
        "taken back by the agent"
    );
    assert_eq!(
        texts("SELECT count(*) FROM records WHERE text = 'I will inspect the directory.'"),
        1
    );
    assert_eq!(
        texts(
            "SELECT count(*) FROM records WHERE retracted_at IS NULL AND text LIKE 'The current directory is%'"
        ),
        1,
        "a message kept by the rewrite is not written over"
    );
    assert_eq!(
        texts("SELECT count(*) FROM records"),
        i64::from(records) + 2
    );
}

//! GitHub Copilot in Visual Studio: its OpenTelemetry trace files (a Database source loaded from
//! the file): golden over AgentsView's redacted samples (`tests/fixtures/vscopilot/`, see
//! SOURCES.md), one conversation carried over four files and a second one sharing the last; a
//! request read before its `invoke_agent` was written; an unchanged file not loaded again; and
//! hostile lines.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::Write as _;
use std::path::Path;

use crate::support;

use cairn_core::Cairn;
use cairn_core::archive::Agent;
use cairn_core::archive::capture::Quiet;
use serde_json::{Value, json};

const CONVERSATION: &str = "4a8f63f6-7626-4416-a874-fc7bd2c3f005";

/// (session id, kind, tool name, text) of every live record, in the order stored.
fn records(data: &Path) -> Vec<(String, String, String, String)> {
    let conn = rusqlite::Connection::open(data.join("cairn.db")).unwrap();
    let mut stmt = conn
        .prepare(
            "SELECT s.session_id, r.kind, coalesce(r.tool_name, ''), coalesce(r.text, '')
             FROM records r JOIN sessions s ON s.id = r.session_id
             WHERE r.retracted_at IS NULL ORDER BY s.session_id, r.ordinal",
        )
        .unwrap();
    stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

#[test]
fn vscopilot_fixture_conversations_are_pinned() {
    let data = tempfile::tempdir().unwrap();
    let cairn = Cairn::open(data.path()).unwrap();
    let files = support::found(Agent::Vscopilot, &support::fixtures().join("vscopilot"));
    assert_eq!(files.len(), 4, "{files:?}");
    let report = cairn.capture_paths(&files, &Quiet).unwrap();
    assert!(report.warnings.is_empty(), "{:?}", report.warnings);
    let pinned = crate::archive_golden_agents::pinned(data.path(), &cairn, &report);
    insta::assert_json_snapshot!("vscopilot", pinned);

    // One session per conversation, whatever the number of files: the first holds a request
    // from each of the four files, in the order they ran, each its own turn.
    assert_eq!(
        support::count(data.path(), "SELECT count(*) FROM sessions"),
        2
    );
    assert_eq!(
        support::count(
            data.path(),
            &format!(
                "SELECT count(*) FROM sources s JOIN sessions x ON x.id = s.session_id
                 WHERE x.session_id = '{CONVERSATION}'"
            )
        ),
        4
    );
    let tools: Vec<String> = records(data.path())
        .into_iter()
        .filter(|r| r.0 == CONVERSATION && r.1 == "tool_call")
        .map(|r| r.2)
        .collect();
    assert_eq!(
        tools,
        [
            "get_file",
            "apply_patch",
            "run_build",
            "code_search",
            "create_file",
            "run_build",
            "run_command_in_terminal",
            "get_errors",
            "apply_patch",
            "run_build"
        ]
    );

    let again = support::capture(&cairn, &files);
    assert_eq!((again.records_added, again.records_updated), (0, 0));
    assert!(again.warnings.is_empty(), "{:?}", again.warnings);
}

/// One OTLP export line holding `spans` (each `(span id, parent, name, attributes)`).
fn export(spans: &[(&str, &str, &str, Value)], start_s: i64) -> String {
    let spans: Vec<Value> = spans
        .iter()
        .enumerate()
        .map(|(i, (id, parent, name, attrs))| {
            let attributes: Vec<Value> = attrs
                .as_object()
                .unwrap()
                .iter()
                .map(|(k, v)| match v {
                    Value::Number(n) => json!({"key": k, "value": {"intValue": n.to_string()}}),
                    other => json!({"key": k, "value": {"stringValue": other}}),
                })
                .collect();
            let start = (start_s + i as i64) * 1_000_000_000;
            json!({"traceId": "ab", "spanId": id, "parentSpanId": parent, "name": name,
                "startTimeUnixNano": start.to_string(), "endTimeUnixNano": (start + 500_000_000).to_string(),
                "attributes": attributes})
        })
        .collect();
    let line = json!({"resourceSpans": [{"resource": {"attributes": [
        {"key": "service.version", "value": {"stringValue": "18.6.1"}}]},
        "scopeSpans": [{"scope": {}, "spans": spans}]}]});
    format!("{line}\n")
}

fn append(path: &Path, text: &str) {
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .create(true)
        .open(path)
        .unwrap();
    f.write_all(text.as_bytes()).unwrap();
}

/// Visual Studio writes a span when it ends, so a sync may read a request's tools before its
/// `invoke_agent`: they open the request's turn, and the `invoke_agent` read later gives that
/// turn its prompt instead of opening another. A model call's answer and tokens are read.
#[test]
fn a_request_read_before_its_invoke_agent_stays_one_turn() {
    let src = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let path = src
        .path()
        .join("20261201T090000_0001_VSGitHubCopilot_traces.jsonl");
    let conv = json!("c-1");
    append(
        &path,
        &export(
            &[(
                "0000000000000002",
                "0000000000000001",
                "execute_tool run_command_in_terminal",
                json!({"gen_ai.conversation.id": conv, "gen_ai.operation.name": "execute_tool",
                    "gen_ai.tool.name": "run_command_in_terminal", "gen_ai.tool.call.id": "call_1",
                    "gen_ai.tool.call.arguments": "{\"command\":\"dotnet test\"}",
                    "gen_ai.tool.call.result": "Failed! - Failed: 2, Passed: 10.",
                    "error.type": "ToolError"}),
            )],
            1_790_000_001,
        ),
    );
    let cairn = Cairn::open(data.path()).unwrap();
    let files = support::found(Agent::Vscopilot, src.path());
    let first = support::capture(&cairn, &files);
    assert_eq!(first.records_added, 3, "{first:?}");
    assert_eq!(support::count(data.path(), "SELECT count(*) FROM turns"), 1);

    append(
        &path,
        &export(
            &[
                (
                    "0000000000000003",
                    "0000000000000001",
                    "chat gpt-5.5",
                    json!({"gen_ai.conversation.id": conv, "gen_ai.operation.name": "chat",
                        "gen_ai.response.model": "gpt-5.5-2026-03-05",
                        "gen_ai.usage.input_tokens": 1200, "gen_ai.usage.output_tokens": 80,
                        "gen_ai.output.messages": "[{\"role\":\"assistant\",\"parts\":[{\"type\":\"text\",\"content\":\"Two tests fail in Parser.\"}]}]"}),
                ),
                (
                    "0000000000000001",
                    "",
                    "invoke_agent GitHub Copilot",
                    json!({"gen_ai.conversation.id": conv, "gen_ai.operation.name": "invoke_agent",
                        "gen_ai.request.model": "gpt-5.5",
                        "gen_ai.input.messages": "[{\"role\":\"user\",\"parts\":[{\"type\":\"text\",\"content\":\"Why do the tests fail?\"}]}]"}),
                ),
            ],
            1_790_000_000,
        ),
    );
    let second = support::capture(&cairn, &files);
    assert_eq!(
        second.records_added,
        2,
        "{second:?} {:?}",
        records(data.path())
    );
    assert_eq!(support::count(data.path(), "SELECT count(*) FROM turns"), 1);
    let turn = cairn.sessions(&Default::default()).unwrap();
    assert_eq!(
        turn[0].first_prompt.as_deref(),
        Some("Why do the tests fail?")
    );
    let detail = cairn.session(&turn[0].session_key).unwrap();
    assert_eq!(detail.model.as_deref(), Some("gpt-5.5-2026-03-05"));
    assert_eq!(detail.tokens.input, 1200);
    assert_eq!(
        support::count(
            data.path(),
            "SELECT count(*) FROM records WHERE kind = 'tool_result' AND outcome = 'failed'"
        ),
        1
    );
    let texts: Vec<String> = records(data.path()).into_iter().map(|r| r.3).collect();
    assert!(
        texts.iter().any(|t| t == "Two tests fail in Parser."),
        "{texts:?}"
    );

    // Another conversation goes on in the same file: read alone, the first one stamped as
    // read with the file as it is now.
    append(
        &path,
        &export(
            &[(
                "0000000000000010",
                "",
                "invoke_agent GitHub Copilot",
                json!({"gen_ai.conversation.id": "c-2", "gen_ai.operation.name": "invoke_agent"}),
            )],
            1_790_000_100,
        ),
    );
    let other = support::capture(&cairn, &files);
    assert_eq!(
        (other.records_added, other.sessions_added),
        (1, 1),
        "{other:?}"
    );

    // Unchanged since every conversation of it was read: not loaded again. The file's spans
    // moved to another conversation without moving its size or mtime show it (a load would
    // list that conversation and read it).
    let third = support::capture(&cairn, &files);
    assert_eq!((third.records_added, third.records_updated), (0, 0));
    let mtime = std::fs::metadata(&path).unwrap().modified().unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, text.replace("\"c-1\"", "\"c-9\"")).unwrap();
    std::fs::File::options()
        .write(true)
        .open(&path)
        .unwrap()
        .set_modified(mtime)
        .unwrap();
    let skipped = support::capture(&cairn, &files);
    assert!(skipped.warnings.is_empty(), "{:?}", skipped.warnings);
    assert_eq!((skipped.records_added, skipped.records_updated), (0, 0));
}

/// A line cut short (Visual Studio writing it) waits for its end; a line that is not JSON, or
/// JSON of another shape, is said and skipped; spans of no conversation and control characters
/// in names are read without harm; a file over the limit is refused by name.
#[test]
fn hostile_and_torn_lines() {
    let src = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let path = src.path().join("x_VSGitHubCopilot_traces.jsonl");
    let good = export(
        &[(
            "00000000000000a1",
            "",
            "invoke_agent GitHub Copilot",
            json!({"gen_ai.conversation.id": "c-2", "gen_ai.operation.name": "invoke_agent"}),
        )],
        1_790_000_000,
    );
    let tool = export(
        &[(
            "00000000000000a2",
            "00000000000000a1",
            "execute_tool \u{1b}[31mevil",
            json!({"gen_ai.conversation.id": "c-2", "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": "evil\u{1b}[2J\u{7}", "gen_ai.tool.call.arguments": "not json {"}),
        )],
        1_790_000_001,
    );
    let orphan = export(
        &[(
            "00000000000000b1",
            "",
            "chat",
            json!({"gen_ai.operation.name": "chat"}),
        )],
        1_790_000_002,
    );
    let torn = &tool[..tool.len() / 2];
    std::fs::write(
        &path,
        format!("{good}not json\n[1,2]\n{{\"resourceSpans\": \"no\"}}\n{orphan}{torn}"),
    )
    .unwrap();
    let cairn = Cairn::open(data.path()).unwrap();
    let files = support::found(Agent::Vscopilot, src.path());
    let first = support::capture(&cairn, &files);
    assert_eq!(first.warnings.len(), 1, "{:?}", first.warnings);
    assert!(
        first.warnings[0].message.contains("line 2"),
        "{:?}",
        first.warnings
    );
    assert_eq!(
        support::count(data.path(), "SELECT count(*) FROM sessions"),
        1
    );
    let before = support::count(data.path(), "SELECT count(*) FROM records");

    // The torn line finished: read, nothing lost, nothing twice.
    std::fs::write(
        &path,
        format!("{good}not json\n[1,2]\n{{\"resourceSpans\": \"no\"}}\n{orphan}{tool}"),
    )
    .unwrap();
    let grown = support::capture(&cairn, &files);
    assert_eq!(grown.records_added, 1, "{grown:?}");
    assert_eq!(
        support::count(data.path(), "SELECT count(*) FROM records"),
        before + 1
    );
    let name: String = rusqlite::Connection::open(data.path().join("cairn.db"))
        .unwrap()
        .query_row(
            "SELECT tool_name FROM records WHERE kind = 'tool_call'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    // Stored as written; every printed field goes through the one cleaning function.
    assert_eq!(cairn_core::text::printable(&name), "evil");

    let big = src.path().join("big_VSGitHubCopilot_traces.jsonl");
    std::fs::File::create(&big)
        .unwrap()
        .set_len(cairn_core::archive::sources::vscopilot::MAX_TRACE_BYTES + 1)
        .unwrap();
    let files = support::found(Agent::Vscopilot, src.path());
    let report = support::capture(&cairn, &files);
    assert!(
        report
            .warnings
            .iter()
            .any(|w| w.path.ends_with("big_VSGitHubCopilot_traces.jsonl")
                && w.message.contains("longer than the 512 MiB")),
        "{:?}",
        report.warnings
    );
}

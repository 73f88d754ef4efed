//! Cline, Roo Code and Kilo Code task folders (the Document read kind): golden over schema
//! samples of each (`tests/fixtures/cline/`, see SOURCES.md: no real task could be copied), a
//! task log rewritten in place (an entry completed, one updated, one removed), and hostile task
//! folders never fatal.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use std::path::{Path, PathBuf};
use support::count;

use cairn_core::Cairn;
use cairn_core::archive::Agent;
use cairn_core::archive::capture::Quiet;
use rusqlite::Connection;
use serde_json::{Value, json};

const CLINE_TASK: &str = "saoudrizwan.claude-dev/tasks/1754331000000";

fn fixtures() -> PathBuf {
    support::fixtures().join("cline")
}

/// (unit, kind, text) of every live record of `session`, in order.
fn records(data: &Path, session: &str) -> Vec<(String, String, String)> {
    let conn = Connection::open(data.join("cairn.db")).unwrap();
    let mut stmt = conn
        .prepare(
            "SELECT coalesce(r.unit, ''), r.kind, coalesce(r.text, '') FROM records r
             JOIN sessions s ON s.id = r.session_id
             WHERE s.session_id = ?1 AND r.retracted_at IS NULL ORDER BY r.ordinal",
        )
        .unwrap();
    stmt.query_map([session], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

#[test]
fn cline_roo_and_kilo_tasks_are_pinned() {
    let data = tempfile::tempdir().unwrap();
    let cairn = Cairn::open(data.path()).unwrap();
    let mut all = Vec::new();
    for (agent, ext) in [
        (Agent::Cline, "saoudrizwan.claude-dev"),
        (Agent::Roo, "rooveterinaryinc.roo-cline"),
        (Agent::Kilo, "kilocode.kilo-code"),
    ] {
        let files = support::found(agent, &fixtures().join(ext));
        assert!(files.iter().all(|f| f.agent == agent), "{files:?}");
        all.extend(files);
    }
    assert_eq!(all.len(), 4, "{all:?}");
    let report = cairn.capture_paths(&all, &Quiet).unwrap();
    assert!(report.warnings.is_empty(), "{:?}", report.warnings);
    assert_eq!((report.sessions_added, report.subagents_added), (3, 1));

    let keys = support::session_keys(data.path(), "session_id");
    let mut sessions = Vec::new();
    for key in &keys {
        let d = cairn.session(key).unwrap();
        sessions.push(json!({
            "agent": d.agent, "id": d.session_id, "title": d.title, "model": d.model,
            "cwd": d.cwd, "relation": d.relation, "has_parent": d.parent_key.is_some(),
            "turns": d.turn_count, "records": d.record_count, "kinds": d.kinds, "tools": d.tools,
            "edited_paths": d.edited_paths, "unknown_types": d.unknown_types,
            "started_at": d.started_at, "updated_at": d.updated_at,
        }));
    }
    // Cline: two prompts (the task, then feedback) open two turns; the failing and the passing
    // test run each have their output; the edit carries its diff; tokens of three requests.
    assert_eq!(
        count(
            data.path(),
            "SELECT count(*) FROM turns t JOIN sessions s ON s.id = t.session_id WHERE s.session_id = '1754331000000'"
        ),
        2
    );
    assert_eq!(
        count(
            data.path(),
            "SELECT count(*) FROM records r JOIN records c ON c.call_id = r.call_id AND c.kind = 'tool_call'
             WHERE r.kind = 'tool_result' AND r.tool_kind = 'exec' AND c.tool_input LIKE '%npm test%'"
        ),
        2
    );
    assert_eq!(
        count(
            data.path(),
            "SELECT count(*) FROM records WHERE kind = 'tool_call' AND tool_kind = 'file_edit' AND tool_input LIKE '%password.length === 0%'"
        ),
        1
    );
    assert_eq!(
        count(
            data.path(),
            "SELECT sum(u.input) FROM token_usage u JOIN sessions s ON s.id = u.session_id WHERE s.session_id = '1754331000000'"
        ),
        9800 + 10400 + 10900 + 11600 + 12000
    );
    // The entry still streaming is not read yet.
    assert!(
        !records(data.path(), "1754331000000")
            .iter()
            .any(|r| r.2.starts_with("Trimming"))
    );
    // Roo's sub-task hangs off the task that started it; its prompt was the parent's, not a
    // person's.
    assert_eq!(
        count(
            data.path(),
            "SELECT count(*) FROM sessions c JOIN sessions p ON p.session_key = c.parent_key
             WHERE c.session_id = '1754400005000' AND p.session_id = '1754400000000' AND c.relation = 'subagent'"
        ),
        1
    );
    assert_eq!(
        count(
            data.path(),
            "SELECT count(*) FROM records r JOIN sessions s ON s.id = r.session_id
             WHERE s.session_id = '1754400005000' AND r.prompt_source = 'spawned_agent'"
        ),
        1
    );
    // Roo's condensation keeps the summary that replaced the context.
    assert_eq!(
        count(
            data.path(),
            "SELECT count(*) FROM records WHERE is_compaction = 1 AND text = 'Flush fix applied.'"
        ),
        1
    );
    support::assert_ordinals_dense(data.path());
    insta::assert_json_snapshot!("cline", json!({"sessions": sessions}));

    // Read again: nothing new, nothing changed.
    let before = support::dump(data.path());
    let again = cairn.capture_paths(&all, &Quiet).unwrap();
    assert_eq!((again.records_added, again.records_updated), (0, 0));
    assert!(again.warnings.is_empty(), "{:?}", again.warnings);
    assert_eq!(support::dump(data.path()), before);
}

/// A copy of the Cline task under `<tmp>/saoudrizwan.claude-dev/tasks/<id>/`.
fn cline_copy(root: &Path) -> PathBuf {
    for name in [
        "ui_messages.json",
        "task_metadata.json",
        "api_conversation_history.json",
    ] {
        support::copy_into(
            &fixtures().join(CLINE_TASK).join(name),
            root,
            &format!("{CLINE_TASK}/{name}"),
        );
    }
    root.join(CLINE_TASK).join("ui_messages.json")
}

fn entries(log: &Path) -> Vec<Value> {
    serde_json::from_slice(&std::fs::read(log).unwrap()).unwrap()
}

fn write(log: &Path, entries: &[Value]) {
    std::fs::write(log, serde_json::to_vec(entries).unwrap()).unwrap();
}

/// Roo rewrites a task's `history_item.json` (its title, here) without touching the task log:
/// the next sync reads the task again, and the watcher maps the sidecar to its log. The new
/// sidecar starts with a byte-order mark (as a Windows editor saves it), read like a log's.
#[test]
fn a_sidecar_changed_without_its_log_is_read() {
    let src = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let task = "rooveterinaryinc.roo-cline/tasks/1754400000000";
    for name in ["ui_messages.json", "history_item.json"] {
        support::copy_into(
            &fixtures().join(task).join(name),
            src.path(),
            &format!("{task}/{name}"),
        );
    }
    let log = src.path().join(task).join("ui_messages.json");
    let item = src.path().join(task).join("history_item.json");
    let cairn = Cairn::open(data.path()).unwrap();
    let files = support::found(Agent::Roo, &src.path().join("rooveterinaryinc.roo-cline"));
    assert_eq!(files.len(), 1, "{files:?}");
    support::capture(&cairn, &files);
    let title = |data: &Path| {
        Connection::open(data.join("cairn.db"))
            .unwrap()
            .query_row(
                "SELECT title FROM sessions WHERE session_id = '1754400000000'",
                [],
                |r| r.get::<_, Option<String>>(0),
            )
            .unwrap()
    };
    assert_eq!(
        title(data.path()).as_deref(),
        Some("Split the report exporter into CSV and PDF writers.")
    );

    let mut v: Value = serde_json::from_slice(&std::fs::read(&item).unwrap()).unwrap();
    v["task"] = json!("Split the exporter, then add an XLSX writer.");
    let mut with_bom = b"\xef\xbb\xbf".to_vec();
    with_bom.extend(serde_json::to_vec(&v).unwrap());
    std::fs::write(&item, with_bom).unwrap();
    let later =
        std::fs::metadata(&log).unwrap().modified().unwrap() + std::time::Duration::from_secs(5);
    std::fs::File::options()
        .write(true)
        .open(&item)
        .unwrap()
        .set_modified(later)
        .unwrap();
    let r = support::capture(&cairn, &files);
    assert!(r.warnings.is_empty(), "{:?}", r.warnings);
    assert_eq!(
        title(data.path()).as_deref(),
        Some("Split the exporter, then add an XLSX writer.")
    );
    // Read once: a third sync finds nothing changed.
    let r = support::capture(&cairn, &files);
    assert_eq!(
        (r.records_added, r.records_updated, r.sessions_updated),
        (0, 0, 0)
    );

    let mapped =
        cairn_core::archive::discover::transcript_of_change(Agent::Roo, &item).map(|f| f.path);
    assert_eq!(mapped, Some(log.clone()));
    std::fs::remove_file(&log).unwrap();
    assert_eq!(
        cairn_core::archive::discover::transcript_of_change(Agent::Roo, &item),
        None,
        "a sidecar without its log is nothing"
    );
}

/// Cline rewrites the whole log on every event: the entry that was streaming completes, a
/// request's tokens are filled in, an entry is dropped (a checkpoint restore). Each sync stores
/// just that, and a half-written log is a warning that loses nothing.
#[test]
fn a_task_log_rewritten_in_place() {
    let src = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let log = cline_copy(src.path());
    let cairn = Cairn::open(data.path()).unwrap();
    let files = support::found(Agent::Cline, &src.path().join("saoudrizwan.claude-dev"));
    support::capture(&cairn, &files);
    let before = records(data.path(), "1754331000000");
    let completion_ordinal = count(
        data.path(),
        "SELECT ordinal FROM records WHERE unit = '1754331028000'",
    );

    let mut e = entries(&log);
    let last = e.len() - 1;
    e[last]["partial"] = json!(false);
    e[last]["text"] = json!("Trimming before the check now.");
    // The completion's text edited in place.
    let done = e
        .iter()
        .position(|m| m["say"] == "completion_result")
        .unwrap();
    e[done]["text"] = json!("The form refuses an empty password; a test covers it.");
    // The MCP response removed.
    e.retain(|m| m["say"] != "mcp_server_response");
    write(&log, &e);
    let r = support::capture(&cairn, &files);
    assert!(r.warnings.is_empty(), "{:?}", r.warnings);
    assert_eq!((r.records_added, r.records_updated), (1, 1), "{r:?}");
    let after = records(data.path(), "1754331000000");
    assert_eq!(after.len(), before.len(), "one added, one retracted");
    assert_eq!(after.last().unwrap().2, "Trimming before the check now.");
    let ordinal = || {
        count(
            data.path(),
            "SELECT ordinal FROM records WHERE unit = '1754331028000' AND retracted_at IS NULL",
        )
    };
    assert_eq!(
        ordinal(),
        completion_ordinal,
        "an edited entry keeps its place"
    );
    assert_eq!(
        count(
            data.path(),
            "SELECT count(*) FROM records WHERE retracted_at IS NOT NULL AND text = 'No issues found.'"
        ),
        1
    );

    // Half-written: a warning, nothing lost, the next complete write is read.
    let bytes = std::fs::read(&log).unwrap();
    std::fs::write(&log, &bytes[..bytes.len() / 2]).unwrap();
    let r = support::capture(&cairn, &files);
    assert!(
        r.warnings
            .iter()
            .any(|w| w.message.contains("not a complete JSON document")),
        "{:?}",
        r.warnings
    );
    assert_eq!(records(data.path(), "1754331000000"), after);
    std::fs::write(&log, &bytes).unwrap();
    let r = support::capture(&cairn, &files);
    assert_eq!((r.records_added, r.records_updated), (0, 0));
    assert!(r.warnings.is_empty(), "{:?}", r.warnings);
}

/// Logs and sidecars of every wrong shape: a log that is an object, entries of wrong types, a
/// sidecar that is not JSON or too long, control sequences in text. Nothing fails the sync;
/// unknown shapes are counted.
#[test]
fn hostile_task_folders_are_read_or_counted() {
    let src = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let tasks = src.path().join("rooveterinaryinc.roo-cline/tasks");
    let put = |task: &str, name: &str, bytes: &[u8]| {
        let dir = tasks.join(task);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(name), bytes).unwrap();
    };
    put("1", "ui_messages.json", br#"{"not": "an array"}"#);
    put(
        "2",
        "ui_messages.json",
        serde_json::to_string(&json!([
            {"ts": "soon", "type": "say", "say": "task", "text": "\u{1b}]0;title\u{7}fix \u{1b}[31mred\u{1b}[0m"},
            {"ts": 5, "type": 3, "say": ["task"]},
            {"ts": 6, "type": "say", "say": "tool", "text": "{not json"},
            {"ts": 7, "type": "ask", "ask": "command_output", "text": 42},
            {"ts": 8, "type": "say", "say": "api_req_started", "text": "{\"tokensIn\": -4, \"tokensOut\": \"many\"}"},
            7,
            null,
        ]))
        .unwrap()
        .as_bytes(),
    );
    put("2", "history_item.json", b"{\"task\": ");
    put(
        "2",
        "task_metadata.json",
        &[
            b"{\"model_usage\": [{\"model_id\": \"".as_slice(),
            &vec![b'm'; 9 << 20],
            b"\"}]}",
        ]
        .concat(),
    );
    let cairn = Cairn::open(data.path()).unwrap();
    let files = support::found(Agent::Roo, &src.path().join("rooveterinaryinc.roo-cline"));
    assert_eq!(files.len(), 2);
    let r = support::capture(&cairn, &files);
    // The object log has no entries: no session, and a warning saying what was not read (a
    // format Cairn does not know is never passed over in silence). The other has its one
    // prompt, its odd entries counted.
    assert!(
        r.warnings.len() == 1
            && r.warnings[0].path.ends_with("tasks/1/ui_messages.json")
            && r.warnings[0].message.contains("roo:log-not-an-array"),
        "{:?}",
        r.warnings
    );
    assert_eq!(r.sessions_added, 1);
    let rows = records(data.path(), "2");
    let prompts: Vec<_> = rows.iter().filter(|r| r.1 == "message").collect();
    assert_eq!(prompts.len(), 1, "{rows:?}");
    let (unknown, model): (String, Option<String>) = Connection::open(data.path().join("cairn.db"))
        .unwrap()
        .query_row(
            "SELECT unknown_types, model FROM sessions WHERE session_id = '2'",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    for k in ["roo:tool-not-json", "roo:entry-not-an-object", "roo:entry:"] {
        assert!(unknown.contains(k), "{k}: {unknown}");
    }
    assert_eq!(model, None, "the oversized sidecar is not read");
}

/// Cline 4.x and the Cline CLI keep a session in `~/.cline/data/sessions/<id>/`: its messages
/// (rewritten whole after every model round), its manifest, a sub-agent's messages beside them
/// (`tests/fixtures/cline/sdk`, a schema sample). Read with the manifest's cwd and model; a
/// rewrite adds only its new message; a torn write is left for the next sync.
#[test]
fn a_cline_sdk_session_and_its_sub_agent_are_read() {
    let src = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let dir = "1784094124598_rruoq";
    let from = fixtures().join("sdk/sessions").join(dir);
    for name in [
        format!("{dir}.json"),
        format!("{dir}.messages.json"),
        "agent_7.messages.json".to_owned(),
    ] {
        support::copy_into(
            &from.join(&name),
            src.path(),
            &format!(".cline/data/sessions/{dir}/{name}"),
        );
    }
    let files = support::found(Agent::Cline, &src.path().join(".cline/data"));
    assert_eq!(
        files.len(),
        2,
        "the two messages files, not the manifest: {files:?}"
    );
    let cairn = Cairn::open(data.path()).unwrap();
    let r = support::capture(&cairn, &files);
    assert!(r.warnings.is_empty(), "{:?}", r.warnings);
    assert_eq!(r.sessions_added, 2, "{r:?}");

    let conn = Connection::open(data.path().join("cairn.db")).unwrap();
    let rows = |relation: &str| -> Vec<String> {
        conn.prepare(
            "SELECT r.kind || ' ' || coalesce(r.prompt_source, r.tool_name, '') || ' '
                    || coalesce(r.exit_code, '') || ' ' || coalesce(r.outcome, '') || ' '
                    || coalesce(r.text, '') || coalesce(r.file_paths, '')
             FROM records r JOIN sessions s ON s.id = r.session_id
             WHERE coalesce(s.relation, 'main') = ?1 AND r.retracted_at IS NULL ORDER BY r.ordinal",
        )
        .unwrap()
        .query_map([relation], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect()
    };
    assert_eq!(
        rows("main"),
        [
            "message human   Make the login test pass",
            "reasoning    Run the test first.",
            "message    Running the test.",
            "tool_call run_commands   ",
            "tool_result run_commands 1 failed 1 failing\nexit code 1",
            "tool_call editor   [\"/work/shop/login.js\"]",
            "tool_call spawn_agent   ",
            "tool_result editor  succeeded Edited /work/shop/login.js",
            "tool_result spawn_agent  succeeded The other login tests pass.",
            "event    Summary: the login check was fixed and the tests pass.",
            "message    The login test passes now.",
        ]
    );
    assert_eq!(
        rows("subagent"),
        [
            "message spawned_agent   Check the other login tests",
            "tool_call read_files   ",
            "tool_result read_files  succeeded test('login', ...)",
            "message    The other login tests pass.",
        ]
    );
    let main: (String, String, String, String) = conn
        .query_row(
            "SELECT cwd, model, title, started_at FROM sessions WHERE relation IS NULL",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
        )
        .unwrap();
    assert_eq!(
        main,
        (
            "/work/shop".into(),
            "claude-sonnet-4-5".into(),
            "Make the login test pass".into(),
            "2026-07-15T05:41:08.600Z".into()
        )
    );
    // Cline counts cached tokens in its input: 35912 - 34332 - 100.
    assert_eq!(
        count(
            data.path(),
            "SELECT input FROM token_usage WHERE message_id = 'msg_a1'"
        ),
        1480
    );
    assert_eq!(
        count(
            data.path(),
            "SELECT count(*) FROM sessions WHERE relation = 'subagent' AND parent_key IS NOT NULL"
        ),
        1
    );

    // A model round later Cline rewrites the whole file with one more message.
    let path = src
        .path()
        .join(format!(".cline/data/sessions/{dir}/{dir}.messages.json"));
    let mut doc: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    doc["messages"]
        .as_array_mut()
        .unwrap()
        .push(json!({"id": "msg_u2", "role": "user",
        "ts": 1784094200000_i64, "content": "Thanks, commit it."}));
    let whole = serde_json::to_vec(&doc).unwrap();
    // Caught mid-write (Cline writes in place, not atomically): nothing read, nothing lost.
    std::fs::write(&path, &whole[..whole.len() / 2]).unwrap();
    let r = support::capture(&cairn, &files);
    assert_eq!((r.records_added, r.records_updated), (0, 0), "{r:?}");
    std::fs::write(&path, &whole).unwrap();
    let r = support::capture(&cairn, &files);
    assert_eq!((r.records_added, r.records_updated), (1, 0), "{r:?}");
    let r = support::capture(&cairn, &files);
    assert_eq!((r.records_added, r.records_updated), (0, 0), "{r:?}");
}

/// Cline 3.6x's sub-agents in a task log: the prompts it hands them (a call), the status entry
/// it rewrites until they end (partial entries skipped; the final one's results are the
/// call's result), their summed tokens; and entry kinds of 2026 that carry nothing to keep.
#[test]
fn sub_agents_of_a_cline_task_are_a_call_and_its_result() {
    let src = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let log = src.path().join(CLINE_TASK).join("ui_messages.json");
    std::fs::create_dir_all(log.parent().unwrap()).unwrap();
    let status = |state: &str, partial: bool| {
        json!({"ts": 1754331003000_i64, "type": "say", "say": "subagent", "partial": partial,
            "text": json!({"status": state, "total": 2, "items": [
                {"index": 1, "prompt": "Find auth code", "status": state, "result": "Auth is in src/auth.ts"},
                {"index": 2, "prompt": "List tests", "status": state, "error": "no tests found"}]}).to_string()})
    };
    let entries = |last: Value| {
        json!([
            {"ts": 1754331000000_i64, "type": "say", "say": "task", "text": "Audit the auth code"},
            {"ts": 1754331001000_i64, "type": "say", "say": "use_subagents",
             "text": "{\"prompts\":[\"Find auth code\",\"List tests\"]}"},
            {"ts": 1754331002000_i64, "type": "say", "say": "hook_output_stream", "text": "[global stdout x/hook.sh] ok"},
            last,
            {"ts": 1754331004000_i64, "type": "say", "say": "subagent_usage",
             "text": "{\"source\":\"subagents\",\"tokensIn\":900,\"tokensOut\":80,\"cacheWrites\":0,\"cacheReads\":10,\"cost\":0.02}"}
        ])
    };
    std::fs::write(&log, entries(status("running", true)).to_string()).unwrap();
    let cairn = Cairn::open(data.path()).unwrap();
    let files = support::found(Agent::Cline, &src.path().join("saoudrizwan.claude-dev"));
    let r = support::capture(&cairn, &files);
    assert!(r.warnings.is_empty(), "{:?}", r.warnings);
    let kinds = |data: &Path| -> Vec<String> {
        records(data, "1754331000000")
            .into_iter()
            .map(|(_, kind, text)| format!("{kind} {text}"))
            .collect()
    };
    assert_eq!(
        kinds(data.path()),
        ["message Audit the auth code", "tool_call "],
        "still running: no result yet"
    );
    std::fs::write(&log, entries(status("completed", false)).to_string()).unwrap();
    let later = std::time::SystemTime::now() + std::time::Duration::from_secs(5);
    std::fs::File::options()
        .write(true)
        .open(&log)
        .unwrap()
        .set_modified(later)
        .unwrap();
    support::capture(&cairn, &files);
    assert_eq!(
        kinds(data.path()),
        [
            "message Audit the auth code",
            "tool_call ",
            "tool_result Auth is in src/auth.ts\n\nno tests found",
        ]
    );
    let (call_kind, paired): (String, i64) = Connection::open(data.path().join("cairn.db"))
        .unwrap()
        .query_row(
            "SELECT c.tool_kind, (SELECT count(*) FROM records r WHERE r.kind = 'tool_result' AND r.call_id = c.call_id)
             FROM records c WHERE c.kind = 'tool_call'",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!((call_kind.as_str(), paired), ("sub_agent", 1));
    assert_eq!(
        count(
            data.path(),
            "SELECT input + output + cache_read FROM token_usage"
        ),
        990
    );
    let unknown: String = Connection::open(data.path().join("cairn.db"))
        .unwrap()
        .query_row("SELECT unknown_types FROM sessions", [], |r| r.get(0))
        .unwrap();
    assert_eq!(unknown, "{}");
}

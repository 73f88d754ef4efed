//! OpenCode's `opencode.db` (the Database read kind). There is no real database with a licence
//! that lets it be copied (see tests/fixtures/opencode/SOURCES.md): each test builds one from
//! OpenCode's documented schema (drizzle tables `session`, `message`, `part`, JSON in `data`,
//! times in epoch milliseconds), with message and part shapes taken from the real-shaped
//! storage fixtures.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use std::path::{Path, PathBuf};
use support::count;

use cairn_core::Cairn;
use cairn_core::archive::Agent;
use cairn_core::archive::discover::FoundFile;
use rusqlite::Connection;
use serde_json::json;
use tempfile::TempDir;

use support::opencode_db::{Db, T0};

/// A session like the storage fixture's `s_stage0_large`, and a child the `task` tool started.
fn build(dir: &Path) -> (PathBuf, Db) {
    let path = dir.join("opencode.db");
    let db = Db::create(&path);
    db.session("ses_main", None, "OpenCode Large");
    db.session("ses_child", Some("ses_main"), "Explore the repo");
    db.message(
        "msg_u1",
        "ses_main",
        T0 + 1000,
        &json!({"role": "user", "time": {"created": T0 + 1000},
        "agent": "build", "model": {"providerID": "openai", "modelID": "gpt-4o-mini"}}),
    );
    db.part(
        "prt_u1",
        "msg_u1",
        "ses_main",
        T0 + 1000,
        &json!({"type": "text", "text": "Run ls and fix the log"}),
    );
    db.message("msg_a1", "ses_main", T0 + 2000, &json!({"role": "assistant", "time": {"created": T0 + 2000},
        "modelID": "gpt-4o-mini", "providerID": "openai", "path": {"cwd": "/work/app", "root": "/work/app"},
        "tokens": {"input": 120, "output": 16, "reasoning": 4, "cache": {"read": 30, "write": 0}}, "finish": "stop"}));
    db.part(
        "prt_a1",
        "msg_a1",
        "ses_main",
        T0 + 2001,
        &json!({"type": "step-start", "snapshot": "abc"}),
    );
    db.part(
        "prt_a2",
        "msg_a1",
        "ses_main",
        T0 + 2002,
        &json!({"type": "reasoning", "text": "list first"}),
    );
    db.part("prt_a3", "msg_a1", "ses_main", T0 + 2003, &json!({"type": "tool", "callID": "call_1", "tool": "bash",
        "state": {"status": "completed", "input": {"command": "ls /nope"}, "output": "ls: /nope: No such file or directory\n",
        "metadata": {"exit": 1}, "time": {"start": T0 + 2003, "end": T0 + 2100}}}));
    db.part("prt_a4", "msg_a1", "ses_main", T0 + 2200, &json!({"type": "tool", "callID": "call_2", "tool": "edit",
        "state": {"status": "completed", "input": {"filePath": "/work/app/error.log", "oldString": "a", "newString": "b"},
        "output": "", "metadata": {}, "time": {"start": T0 + 2200, "end": T0 + 2300}}}));
    db.part("prt_a5", "msg_a1", "ses_main", T0 + 2400, &json!({"type": "tool", "callID": "call_3", "tool": "task",
        "state": {"status": "running", "input": {"description": "Explore", "prompt": "look around"}}}));
    db.part(
        "prt_a6",
        "msg_a1",
        "ses_main",
        T0 + 2500,
        &json!({"type": "step-finish", "reason": "tool-calls",
        "tokens": {"input": 120, "output": 16}, "cost": 0.001}),
    );
    db.message(
        "msg_c1",
        "ses_child",
        T0 + 2401,
        &json!({"role": "user", "time": {"created": T0 + 2401}}),
    );
    db.part(
        "prt_c1",
        "msg_c1",
        "ses_child",
        T0 + 2401,
        &json!({"type": "text", "text": "look around"}),
    );
    (path, db)
}

#[test]
fn an_opencode_database_is_read_and_follows_its_parts() {
    let src = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let (_, db) = build(src.path());
    let cairn = Cairn::open(data.path()).unwrap();
    let files = support::found(Agent::Opencode, src.path());
    assert_eq!(files.len(), 1);
    let r = support::capture(&cairn, &files);
    assert!(r.warnings.is_empty(), "{:?}", r.warnings);
    // main: prompt, reasoning, bash call and result, edit call and result, the running task;
    // child: its prompt.
    assert_eq!(
        (r.sessions_added, r.subagents_added, r.records_added),
        (1, 1, 8),
        "{r:?}"
    );
    let main: (String, String, String, String) = Connection::open(data.path().join("cairn.db"))
        .unwrap()
        .query_row(
            "SELECT model, cwd, title, started_at FROM sessions WHERE session_id = 'ses_main'",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
        )
        .unwrap();
    assert_eq!(
        main,
        (
            "gpt-4o-mini".into(),
            "/work/app".into(),
            "OpenCode Large".into(),
            "2024-10-27T03:35:00Z".into()
        )
    );
    assert_eq!(
        count(
            data.path(),
            "SELECT count(*) FROM sessions WHERE relation = 'subagent' AND parent_key IS NOT NULL"
        ),
        1
    );
    assert_eq!(
        count(
            data.path(),
            "SELECT exit_code FROM records WHERE kind = 'tool_result' AND tool_name = 'bash'"
        ),
        1
    );
    assert_eq!(
        count(
            data.path(),
            "SELECT count(*) FROM records WHERE file_paths LIKE '%error.log%' AND kind = 'tool_call'"
        ),
        1
    );
    assert_eq!(
        count(
            data.path(),
            "SELECT input + output + cache_read FROM token_usage WHERE message_id = 'msg_a1'"
        ),
        166
    );
    // The running task ends: only its part moved. Its result is added and its call, which now
    // has its start time, is updated in place; nothing else changes.
    db.part("prt_a5", "msg_a1", "ses_main", T0 + 9000, &json!({"type": "tool", "callID": "call_3", "tool": "task",
        "state": {"status": "completed", "input": {"description": "Explore", "prompt": "look around"},
        "output": "found it", "time": {"start": T0 + 2400, "end": T0 + 9000}}}));
    let r = support::capture(&cairn, &files);
    assert_eq!((r.records_added, r.records_updated), (1, 1), "{r:?}");
    assert_eq!(
        count(
            data.path(),
            "SELECT count(*) FROM records WHERE call_id = 'call_3'"
        ),
        2
    );
    let r = support::capture(&cairn, &files);
    assert_eq!((r.records_added, r.records_updated), (0, 0));
}

#[test]
fn an_opencode_database_of_another_shape_is_a_warning() {
    let src = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let path = src.path().join("opencode.db");
    Connection::open(&path)
        .unwrap()
        .execute_batch(
            "CREATE TABLE session (id TEXT, time_updated INTEGER);
             CREATE TABLE message (id TEXT, session_id TEXT, role TEXT, content TEXT, time_created INTEGER, time_updated INTEGER);
             CREATE TABLE part (id TEXT);",
        )
        .unwrap();
    let cairn = Cairn::open(data.path()).unwrap();
    let r = support::capture(&cairn, &support::found(Agent::Opencode, src.path()));
    assert_eq!(r.sessions_added, 0);
    assert!(
        r.warnings
            .iter()
            .any(|w| w.message.contains("table `message` has no column `data`")),
        "{:?}",
        r.warnings
    );

    // 2.x tables half there: what is missing of them is named.
    let src = tempfile::tempdir().unwrap();
    Connection::open(src.path().join("opencode.db"))
        .unwrap()
        .execute_batch(
            "CREATE TABLE session_v2 (id TEXT, time_created INTEGER, time_updated INTEGER);
             CREATE TABLE session_message (id TEXT, session_id TEXT, type TEXT, time_updated INTEGER, data TEXT);",
        )
        .unwrap();
    let r = support::capture(&cairn, &support::found(Agent::Opencode, src.path()));
    assert_eq!(r.sessions_added, 0);
    assert!(
        r.warnings.iter().any(|w| w
            .message
            .contains("table `session_message` has no column `seq`")),
        "{:?}",
        r.warnings
    );
}

/// An OpenCode 2.x session as its writer's schema shapes it (`session_message` rows: the type
/// in its column, the content inline, tool output in `state.content`), and a sub-agent's.
fn build_v2(db: &Db) {
    db.session_v2("ses_v2", None, "Fix the flaky test");
    db.session_v2("ses_v2_child", Some("ses_v2"), "Look for other flakes");
    db.message_v2(
        "msg_1",
        "ses_v2",
        1,
        "user",
        T0 + 1000,
        &json!({"time": {"created": T0 + 1000}, "text": "Fix the flaky login test",
        "files": [{"uri": "file:///work/app/shot.png", "mime": "image/png"}]}),
    );
    db.message_v2("msg_2", "ses_v2", 2, "synthetic", T0 + 1001,
        &json!({"time": {"created": T0 + 1001}, "text": "<system-reminder>Plan mode is off.</system-reminder>"}));
    db.message_v2("msg_3", "ses_v2", 4, "assistant", T0 + 2000, &json!({
        "time": {"created": T0 + 2000, "completed": T0 + 3000}, "agent": "build",
        "model": {"id": "gpt-5", "providerID": "openai"}, "finish": "tool-calls",
        "tokens": {"input": 200, "output": 20, "reasoning": 5, "cache": {"read": 40, "write": 0}},
        "content": [
            {"type": "reasoning", "text": "run the test first"},
            {"type": "text", "text": "Running the test."},
            {"type": "tool", "id": "call_1", "name": "shell",
             "state": {"status": "completed", "input": {"command": "npm test"},
                       "content": [{"type": "text", "text": "1 failing"}], "metadata": {"exit": 1}},
             "time": {"created": T0 + 2100, "completed": T0 + 2500}},
            {"type": "tool", "id": "call_2", "name": "edit",
             "state": {"status": "completed", "input": {"path": "/work/app/login.test.js", "oldString": "a", "newString": "b"},
                       "content": [{"type": "text", "text": "Edited."}]},
             "time": {"created": T0 + 2600, "completed": T0 + 2700}},
            {"type": "tool", "id": "call_3", "name": "patch",
             "state": {"status": "error", "input": {"patchText": "*** Begin Patch\n*** Update File: src/login.js\n@@\n-a\n+b\n*** End Patch"},
                       "error": {"type": "invalid", "message": "patch did not apply"}},
             "time": {"created": T0 + 2800, "completed": T0 + 2850}},
            {"type": "tool", "id": "call_4", "name": "subagent",
             "state": {"status": "running", "input": {"agent": "explore", "description": "Look for other flakes", "prompt": "look"}},
             "time": {"created": T0 + 2900}},
            {"type": "hologram", "text": "?"}
        ]}));
    db.message_v2("msg_4", "ses_v2", 7, "shell", T0 + 4000, &json!({
        "time": {"created": T0 + 4000, "completed": T0 + 4100}, "shellID": "sh_1", "command": "git status",
        "status": "exited", "exit": 0, "output": {"output": "clean", "cursor": 5, "size": 5, "truncated": false}}));
    db.message_v2("msg_5", "ses_v2", 8, "compaction", T0 + 5000, &json!({
        "time": {"created": T0 + 5000}, "status": "completed", "reason": "auto", "summary": "Fixed the login test."}));
    db.message_v2(
        "msg_6",
        "ses_v2",
        9,
        "idle",
        T0 + 5001,
        &json!({"time": {"created": T0 + 5001}, "outcome": "succeeded"}),
    );
    db.message_v2(
        "msg_7",
        "ses_v2",
        10,
        "teleported",
        T0 + 5002,
        &json!({"time": {"created": T0 + 5002}}),
    );
    db.message_v2(
        "msg_c1",
        "ses_v2_child",
        1,
        "user",
        T0 + 2901,
        &json!({"time": {"created": T0 + 2901}, "text": "look"}),
    );
}

/// (kind, tool name, text, exit code, file paths) of every record of `session`, in order.
fn records_of(data: &Path, session: &str) -> Vec<(String, String, String, Option<i64>, String)> {
    let conn = Connection::open(data.join("cairn.db")).unwrap();
    let mut stmt = conn
        .prepare(
            "SELECT r.kind, coalesce(r.tool_name, ''), coalesce(r.text, ''), r.exit_code,
                    coalesce(r.file_paths, '')
             FROM records r JOIN sessions s ON s.id = r.session_id
             WHERE s.session_id = ?1 AND r.retracted_at IS NULL ORDER BY r.ordinal",
        )
        .unwrap();
    stmt.query_map([session], |r| {
        Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
    })
    .unwrap()
    .map(Result::unwrap)
    .collect()
}

/// A fresh OpenCode 2.x install has no `message` or `part` table: its sessions are read from
/// `session_v2` and `session_message`, a row written again while it streams is read again, and
/// a message type Cairn does not know is counted.
#[test]
fn an_opencode_2_database_is_read_and_follows_its_rows() {
    let src = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let db = Db::create_v2(&src.path().join("opencode.db"));
    build_v2(&db);
    let cairn = Cairn::open(data.path()).unwrap();
    let files = support::found(Agent::Opencode, src.path());
    assert_eq!(files.len(), 1, "{files:?}");
    let r = support::capture(&cairn, &files);
    assert!(r.warnings.is_empty(), "{:?}", r.warnings);
    assert_eq!((r.sessions_added, r.subagents_added), (1, 1), "{r:?}");
    let row = |kind: &str, tool: &str, text: &str, exit: Option<i64>, paths: &str| {
        (
            kind.to_owned(),
            tool.to_owned(),
            text.to_owned(),
            exit,
            paths.to_owned(),
        )
    };
    assert_eq!(
        records_of(data.path(), "ses_v2"),
        vec![
            row("message", "", "Fix the flaky login test", None, ""),
            row(
                "message",
                "",
                "<system-reminder>Plan mode is off.</system-reminder>",
                None,
                ""
            ),
            row("reasoning", "", "run the test first", None, ""),
            row("message", "", "Running the test.", None, ""),
            row("tool_call", "shell", "", None, ""),
            row("tool_result", "shell", "1 failing", Some(1), ""),
            row(
                "tool_call",
                "edit",
                "",
                None,
                r#"["/work/app/login.test.js"]"#
            ),
            row(
                "tool_result",
                "edit",
                "Edited.",
                None,
                r#"["/work/app/login.test.js"]"#
            ),
            row("tool_call", "patch", "", None, r#"["src/login.js"]"#),
            row(
                "tool_result",
                "patch",
                "patch did not apply",
                None,
                r#"["src/login.js"]"#
            ),
            row("tool_call", "subagent", "", None, ""),
            row("tool_call", "shell", "", None, ""),
            row("tool_result", "shell", "clean", Some(0), ""),
            row("event", "", "Fixed the login test.", None, ""),
        ]
    );
    let (model, cwd, title, human, injected): (String, String, String, i64, i64) =
        Connection::open(data.path().join("cairn.db"))
            .unwrap()
            .query_row(
                "SELECT s.model, s.cwd, s.title,
                    (SELECT count(*) FROM records r WHERE r.session_id = s.id AND r.prompt_source = 'human'),
                    (SELECT count(*) FROM records r WHERE r.session_id = s.id AND r.prompt_source = 'system_injected')
                 FROM sessions s WHERE s.session_id = 'ses_v2'",
                [],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?)),
            )
            .unwrap();
    assert_eq!(
        (
            model.as_str(),
            cwd.as_str(),
            title.as_str(),
            human,
            injected
        ),
        ("gpt-5", "/work/app", "Fix the flaky test", 1, 1)
    );
    assert_eq!(
        count(
            data.path(),
            "SELECT input + output + reasoning + cache_read FROM token_usage WHERE message_id = 'msg_3'"
        ),
        265
    );
    assert_eq!(
        count(
            data.path(),
            "SELECT count(*) FROM sessions WHERE relation = 'subagent' AND parent_key IS NOT NULL"
        ),
        1
    );
    let unknown: String = Connection::open(data.path().join("cairn.db"))
        .unwrap()
        .query_row(
            "SELECT unknown_types FROM sessions WHERE session_id = 'ses_v2'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert!(
        unknown.contains("opencode:message:teleported")
            && unknown.contains("opencode:content:hologram"),
        "{unknown}"
    );

    // The sub-agent ends: OpenCode writes its message row again. Its result is added; its call
    // and everything else in the row read the same, so nothing is rewritten.
    let mut done: serde_json::Value = serde_json::from_str(
        &db.conn
            .query_row(
                "SELECT data FROM session_message WHERE id = 'msg_3'",
                [],
                |r| r.get::<_, String>(0),
            )
            .unwrap(),
    )
    .unwrap();
    done["content"][5]["state"] = json!({"status": "completed",
        "input": {"agent": "explore", "description": "Look for other flakes", "prompt": "look"},
        "content": [{"type": "text", "text": "no other flakes"}], "metadata": {"sessionID": "ses_v2_child"}});
    done["content"][5]["time"]["completed"] = json!(T0 + 6000);
    db.message_v2("msg_3", "ses_v2", 4, "assistant", T0 + 6000, &done);
    let r = support::capture(&cairn, &files);
    assert_eq!((r.records_added, r.records_updated), (1, 0), "{r:?}");
    assert_eq!(
        count(
            data.path(),
            "SELECT count(*) FROM records WHERE call_id = 'call_4' AND kind = 'tool_result' AND text = 'no other flakes'"
        ),
        1
    );
    let r = support::capture(&cairn, &files);
    assert_eq!((r.records_added, r.records_updated), (0, 0), "{r:?}");
}

/// An upgraded install keeps its 1.x tables frozen and copies their sessions into `session_v2`
/// under the same ids: a copied session is read once, from the 2.x tables; one only the 1.x
/// tables hold is read from them.
#[test]
fn an_upgraded_opencode_database_reads_each_session_once() {
    let src = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let (_, db) = build(src.path());
    db.upgrade();
    db.session_v2("ses_main", None, "OpenCode Large");
    db.message_v2(
        "evt_legacy_backfill_m_1",
        "ses_main",
        1,
        "user",
        T0 + 1000,
        &json!({"time": {"created": T0 + 1000}, "text": "Run ls and fix the log"}),
    );
    db.message_v2(
        "msg_new",
        "ses_main",
        2,
        "user",
        T0 + 9000,
        &json!({"time": {"created": T0 + 9000}, "text": "and now in 2.x"}),
    );
    let cairn = Cairn::open(data.path()).unwrap();
    let r = support::capture(&cairn, &support::found(Agent::Opencode, src.path()));
    assert!(r.warnings.is_empty(), "{:?}", r.warnings);
    assert_eq!(
        (r.sessions_added, r.subagents_added),
        (1, 1),
        "ses_main once, ses_child from 1.x: {r:?}"
    );
    let texts: Vec<String> = records_of(data.path(), "ses_main")
        .into_iter()
        .map(|r| r.2)
        .collect();
    assert_eq!(texts, ["Run ls and fix the log", "and now in 2.x"]);
    assert_eq!(records_of(data.path(), "ses_child").len(), 1);
}

#[test]
fn a_build_outside_the_release_channels_names_its_database_by_channel() {
    use cairn_core::archive::sources::opencode::is_database;
    for (name, is) in [
        ("opencode.db", true),
        ("opencode-local.db", true),
        ("opencode-dev_2.1.db", true),
        ("opencode-.db", false),
        ("opencode-a b.db", false),
        ("opencode-local.db-wal", false),
        ("not-opencode-local.db", false),
    ] {
        assert_eq!(is_database(Path::new(name)), is, "{name}");
    }
}

/// A copy of the storage-tree fixtures (`v2` per-message part folders, `legacy` flat parts) in
/// `root`, laid out as OpenCode does (`<data>/storage/…`).
fn storage_copy(root: &Path) {
    for layout in ["v2", "legacy"] {
        let from = support::fixtures().join("opencode").join(layout);
        for entry in walkdir::WalkDir::new(&from) {
            let entry = entry.unwrap();
            if entry.file_type().is_file() {
                let rel = entry.path().strip_prefix(&from).unwrap();
                support::copy_into(entry.path(), &root.join(layout), rel.to_str().unwrap());
            }
        }
    }
}

/// The storage-tree fixtures copied and read once: their folder, the data dir, the archive and
/// the session files it reads.
fn storage_read() -> (TempDir, TempDir, Cairn, Vec<FoundFile>) {
    let src = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    storage_copy(src.path());
    let cairn = Cairn::open(data.path()).unwrap();
    let files = support::found(Agent::Opencode, src.path());
    support::capture(&cairn, &files);
    (src, data, cairn, files)
}

fn texts(data: &Path) -> Vec<(String, String, String)> {
    let conn = Connection::open(data.join("cairn.db")).unwrap();
    let mut stmt = conn
        .prepare(
            "SELECT s.session_id, r.kind, coalesce(r.text, r.tool_name, '') FROM records r
             JOIN sessions s ON s.id = r.session_id WHERE r.retracted_at IS NULL
             ORDER BY s.session_id, r.ordinal",
        )
        .unwrap();
    stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

/// The storage tree (the Tree read kind), both layouts: sessions, their messages and parts
/// read per file, pinned.
#[test]
fn the_storage_tree_fixtures_are_pinned() {
    let src = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    storage_copy(src.path());
    let cairn = Cairn::open(data.path()).unwrap();
    let files = support::found(Agent::Opencode, src.path());
    assert_eq!(files.len(), 3, "{files:?}");
    let r = support::capture(&cairn, &files);
    assert!(r.warnings.is_empty(), "{:?}", r.warnings);
    // small: prompt, bash call and result, reply; large: prompt, bash call and result (exit 1),
    // synthetic text, reasoning, compaction, the aborted-message error, prompt, reply; legacy
    // (flat parts): bash call and result ("success"), reply; its prompt has no part.
    assert_eq!((r.sessions_added, r.records_added), (3, 16), "{r:?}");
    let sessions: Vec<(String, String, String)> = {
        let conn = Connection::open(data.path().join("cairn.db")).unwrap();
        let mut stmt = conn
            .prepare("SELECT session_id, coalesce(model, ''), coalesce(cwd, '') FROM sessions ORDER BY session_id")
            .unwrap();
        stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .unwrap()
            .map(Result::unwrap)
            .collect()
    };
    insta::assert_json_snapshot!(
        "opencode_storage",
        json!({"sessions": sessions, "records": texts(data.path())})
    );
    let again = support::capture(&cairn, &files);
    assert_eq!((again.records_added, again.records_updated), (0, 0));
}

/// The flat layout's `part/` listing is kept between reads (listing it for every session made
/// a sync quadratic): a part added to the folder after a read is read on the next one, and a
/// half-written one is read once it is whole, though completing it in place does not move the
/// folder's mtime.
#[test]
fn flat_parts_added_or_completed_after_a_read_are_read() {
    let (src, data, cairn, files) = storage_read();
    let part = |id: &str, text: &str| {
        json!({"messageID": "m_assistant_drift", "id": id, "type": "text", "text": text,
               "time": {"start": 1730000203200_u64}})
        .to_string()
    };
    let flat = src.path().join("legacy/storage/part");
    std::fs::write(
        flat.join("prt_0003.json"),
        part("prt_text_2", "Then the licence."),
    )
    .unwrap();
    let r = support::capture(&cairn, &files);
    assert_eq!((r.records_added, r.records_updated), (1, 0), "{r:?}");
    let whole = part("prt_text_3", "And the changelog.");
    std::fs::write(flat.join("prt_0004.json"), &whole[..whole.len() / 2]).unwrap();
    let r = support::capture(&cairn, &files);
    assert_eq!((r.records_added, r.records_updated), (0, 0), "{r:?}");
    let mtime = std::fs::metadata(&flat).unwrap().modified().unwrap();
    std::fs::write(flat.join("prt_0004.json"), &whole).unwrap();
    assert_eq!(std::fs::metadata(&flat).unwrap().modified().unwrap(), mtime);
    let r = support::capture(&cairn, &files);
    assert_eq!((r.records_added, r.records_updated), (1, 0), "{r:?}");
    let drift: Vec<String> = texts(data.path())
        .into_iter()
        .filter(|t| t.0 == "s_stage0_drift")
        .map(|t| t.2)
        .collect();
    assert!(
        drift.iter().any(|t| t == "Then the licence.")
            && drift.iter().any(|t| t == "And the changelog."),
        "{drift:?}"
    );
}

/// A part whose text OpenCode cut inside an emoji holds the kept half as a lone `\ud83d`
/// escape (JavaScript writes it so), which serde_json refuses: the part was held back as one
/// being written, then dropped with a warning a minute later. It reads as U+FFFD, as the
/// same escape in a line file or a document does.
#[test]
fn a_part_with_a_lone_surrogate_escape_is_read() {
    let (src, data, cairn, files) = storage_read();
    let parts = src.path().join("v2/storage/part/m_assistant_small");
    std::fs::write(
        parts.join("003.json"),
        r#"{"id":"p_text_2","type":"text","text":"cut at \ud83d here"}"#,
    )
    .unwrap();
    let r = support::capture(&cairn, &files);
    assert_eq!((r.records_added, r.warnings.len()), (1, 0), "{r:?}");
    assert!(
        texts(data.path())
            .iter()
            .any(|t| t.2 == "cut at \u{fffd} here"),
        "{:?}",
        texts(data.path())
    );
}

/// A part written into a message's folder re-reads that message only; a message file removed
/// is retracted; a half-written part is read once it is whole.
#[test]
fn the_storage_tree_is_read_per_file() {
    let (src, data, cairn, files) = storage_read();
    let parts = src.path().join("v2/storage/part/m_assistant_small");
    std::fs::write(parts.join("003.json"), "{\"id\":\"p_text_2\",\"type\":\"te").unwrap();
    let r = support::capture(&cairn, &files);
    assert_eq!((r.records_added, r.records_updated), (0, 0), "{r:?}");
    std::fs::write(
        parts.join("003.json"),
        json!({"id": "p_text_2", "type": "text", "text": "And a third."}).to_string(),
    )
    .unwrap();
    let r = support::capture(&cairn, &files);
    assert_eq!((r.records_added, r.records_updated), (1, 0), "{r:?}");
    std::fs::remove_file(
        src.path()
            .join("v2/storage/message/s_stage0_small/msg_0002.json"),
    )
    .unwrap();
    support::capture(&cairn, &files);
    let small: Vec<_> = texts(data.path())
        .into_iter()
        .filter(|t| t.0 == "s_stage0_small")
        .collect();
    assert_eq!(small.len(), 1, "only the prompt is live: {small:?}");
    let r = support::capture(&cairn, &files);
    assert_eq!((r.records_added, r.records_updated), (0, 0));
}

/// A byte that is not UTF-8 in a part is read as U+FFFD, as in a line, with a warning naming
/// the file (it was left out of its message as broken); the next sync, with nothing moved,
/// says nothing again.
#[test]
fn a_byte_that_is_not_utf8_in_a_part_is_read_as_a_replacement() {
    let src = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    storage_copy(src.path());
    let part = src.path().join("v2/storage/part/m_user_small/001.json");
    let text = std::fs::read(&part).unwrap();
    let at = memchr::memmem::find(&text, b"Hello").unwrap();
    let mut bytes = text[..at].to_vec();
    bytes.extend_from_slice(b"Hel\xfflo");
    bytes.extend_from_slice(&text[at + 5..]);
    std::fs::write(&part, bytes).unwrap();
    let cairn = Cairn::open(data.path()).unwrap();
    let files = support::found(Agent::Opencode, src.path());
    let r = support::capture(&cairn, &files);
    let said: Vec<&str> = r.warnings.iter().map(|w| w.message.as_str()).collect();
    assert_eq!(said, ["001.json: invalid UTF-8 replaced with U+FFFD"]);
    let small: Vec<String> = texts(data.path())
        .into_iter()
        .filter(|t| t.0 == "s_stage0_small")
        .map(|t| t.2)
        .collect();
    assert_eq!(small[0], "Hel\u{fffd}lo");
    let again = support::capture(&cairn, &files);
    assert!(again.warnings.is_empty(), "{:?}", again.warnings);
    assert_eq!((again.records_added, again.records_updated), (0, 0));
}

/// A part OpenCode is writing (it does not parse yet) holds back its message and every message
/// after it, as a half-written last line does; read once whole, the session is what a read of
/// the finished tree gives, in the order it was written. A part broken for good (unchanged for
/// over a minute) is left out with a warning naming it, and the rest of its message is read.
#[test]
fn a_part_being_written_holds_back_its_message_and_the_ones_after() {
    let small = |data: &Path| -> Vec<(String, String, String)> {
        texts(data)
            .into_iter()
            .filter(|t| t.0 == "s_stage0_small")
            .collect()
    };
    let whole = {
        let (_src, data, _cairn, _files) = storage_read();
        small(data.path())
    };
    assert!(whole.len() > 2 && whole[0].2 == "Hello", "{whole:?}");

    let src = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    storage_copy(src.path());
    let part = src.path().join("v2/storage/part/m_user_small/001.json");
    let finished = std::fs::read(&part).unwrap();
    std::fs::write(&part, "{\"id\":").unwrap();
    let cairn = Cairn::open(data.path()).unwrap();
    let files = support::found(Agent::Opencode, src.path());
    let r = support::capture(&cairn, &files);
    assert_eq!(
        small(data.path()),
        [],
        "read before its first message was whole"
    );
    assert!(r.warnings.is_empty(), "{:?}", r.warnings);
    std::fs::write(&part, &finished).unwrap();
    support::capture(&cairn, &files);
    assert_eq!(small(data.path()), whole);

    // Broken for good: an hour old.
    let src = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    storage_copy(src.path());
    let part = src.path().join("v2/storage/part/m_user_small/001.json");
    std::fs::write(&part, "{\"id\":").unwrap();
    std::fs::File::options()
        .write(true)
        .open(&part)
        .unwrap()
        .set_modified(std::time::SystemTime::now() - std::time::Duration::from_secs(3600))
        .unwrap();
    let cairn = Cairn::open(data.path()).unwrap();
    let files = support::found(Agent::Opencode, src.path());
    let r = support::capture(&cairn, &files);
    assert!(
        r.warnings
            .iter()
            .any(|w| w.message.contains("001.json") && w.message.contains("read without it")),
        "{:?}",
        r.warnings
    );
    let read = small(data.path());
    assert_eq!(read, whole[1..].to_vec(), "all but the broken part");
}

/// Kilo Code rebuilt on OpenCode keeps its sessions in `kilo.db`, OpenCode's schema: read by
/// the same reader, as Kilo's sessions.
#[test]
fn kilo_s_database_is_read_as_kilo_s() {
    let src = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let db = Db::create(&src.path().join("kilo/kilo.db"));
    db.session("ses_k", None, "Kilo task");
    db.message(
        "msg_k1",
        "ses_k",
        T0 + 1000,
        &json!({"role": "user", "time": {"created": T0 + 1000}}),
    );
    db.part(
        "prt_k1",
        "msg_k1",
        "ses_k",
        T0 + 1000,
        &json!({"type": "text", "text": "tidy the imports"}),
    );
    // OpenCode's own database is not Kilo's.
    Db::create(&src.path().join("kilo/opencode.db"));
    let files = support::found(Agent::Kilo, &src.path().join("kilo"));
    assert_eq!(files.len(), 1, "{files:?}");
    assert_eq!(files[0].agent, Agent::Kilo);
    let cairn = Cairn::open(data.path()).unwrap();
    let r = support::capture(&cairn, &files);
    assert!(r.warnings.is_empty(), "{:?}", r.warnings);
    assert_eq!((r.sessions_added, r.records_added), (1, 1), "{r:?}");
    let (agent, title): (String, String) = Connection::open(data.path().join("cairn.db"))
        .unwrap()
        .query_row("SELECT agent, title FROM sessions", [], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })
        .unwrap();
    assert_eq!((agent.as_str(), title.as_str()), ("kilo", "Kilo task"));
    let env = |k: &str| (k == "KILO_DIR").then(|| PathBuf::from("/k"));
    assert_eq!(
        cairn_core::archive::sources::opencode::kilo_locations(env, None)[0].0,
        Path::new("/k")
    );
}

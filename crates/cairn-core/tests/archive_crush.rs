//! Crush's SQLite database (the Database read kind): golden over the real database
//! (`tests/fixtures/crush/`, see SOURCES.md), incremental reads while the agent writes (new,
//! updated and deleted messages, a WAL writer holding its transaction), and hostile databases
//! never fatal. Every test reads a copy in a temporary project: a reader of a WAL database may
//! create its `-wal`/`-shm` files, and the fixture stays as it was committed.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use std::path::{Path, PathBuf};
use support::count;

use cairn_core::Cairn;
use cairn_core::archive::Agent;
use cairn_core::archive::capture::Quiet;
use cairn_core::views::sessions::SessionQuery;
use rusqlite::Connection;
use serde_json::json;

const PROJECT: &str = "Starmel-OpenSuperWhisper";

/// A copy of the real database at `<tmp>/<project>/.crush/crush.db`.
fn project_copy(root: &Path) -> PathBuf {
    support::copy_into(
        &support::fixtures()
            .join("crush")
            .join(PROJECT)
            .join(".crush/crush.db"),
        root,
        &format!("{PROJECT}/.crush/crush.db"),
    )
}

#[test]
fn crush_fixture_database_is_pinned() {
    let src = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    project_copy(src.path());
    let cairn = Cairn::open(data.path()).unwrap();
    let files = support::found(Agent::Crush, src.path());
    assert_eq!(files.len(), 1, "{files:?}");
    let report = cairn.capture_paths(&files, &Quiet).unwrap();
    assert!(report.warnings.is_empty(), "{:?}", report.warnings);
    assert_eq!((report.sessions_added, report.subagents_added), (1, 2));

    let listed = cairn.sessions(&SessionQuery::default()).unwrap();
    assert_eq!(
        listed.len(),
        1,
        "the sub-agents are listed under their parent"
    );
    let keys = support::session_keys(data.path(), "started_at, session_key");
    let mut sessions = Vec::new();
    for key in &keys {
        let d = cairn.session(key).unwrap();
        sessions.push(json!({
            "id": d.session_id, "title": d.title, "model": d.model, "relation": d.relation,
            "has_parent": d.parent_key.is_some(), "turns": d.turn_count, "records": d.record_count,
            "kinds": d.kinds, "tools": d.tools, "edited_paths": d.edited_paths,
            "unknown_types": d.unknown_types,
            "cwd_is_project": d.cwd.as_deref().is_some_and(|c| c.ends_with(PROJECT)),
            "started_at": d.started_at, "updated_at": d.updated_at,
        }));
    }
    // Exact counts from the database itself (sqlite3 over the fixture): 132 messages; parts
    // text 36 (19 from the user), tool_call 48 (edit 7, multiedit 4, write 6), tool_result 47
    // (one call never answered), finish 131 of which 1 canceled.
    assert_eq!(count(data.path(), "SELECT count(*) FROM sessions"), 3);
    assert_eq!(
        count(
            data.path(),
            "SELECT count(*) FROM records WHERE kind = 'tool_call'"
        ),
        48
    );
    assert_eq!(
        count(
            data.path(),
            "SELECT count(*) FROM records WHERE kind = 'tool_result'"
        ),
        47
    );
    assert_eq!(
        count(
            data.path(),
            "SELECT count(*) FROM records WHERE kind = 'message' AND prompt_source IS NOT NULL"
        ),
        19
    );
    assert_eq!(
        count(
            data.path(),
            "SELECT count(*) FROM records WHERE kind = 'message'"
        ),
        36
    );
    assert_eq!(
        count(
            data.path(),
            "SELECT count(*) FROM records WHERE source_event_kind = 'crush:finish:canceled'"
        ),
        1
    );
    assert_eq!(
        count(
            data.path(),
            "SELECT count(*) FROM records WHERE tool_kind = 'file_edit' AND kind = 'tool_call'"
        ),
        17
    );
    // The two sub-agent sessions hang off the main one, started by its two `agent` calls.
    assert_eq!(
        count(
            data.path(),
            "SELECT count(*) FROM sessions c JOIN sessions p ON p.session_key = c.parent_key
             WHERE c.relation = 'subagent' AND c.session_id IN (
                SELECT call_id FROM records WHERE tool_name = 'agent' AND session_id = p.id)"
        ),
        2
    );
    support::assert_ordinals_dense(data.path());
    insta::assert_json_snapshot!("crush", json!({"sessions": sessions}));

    // Read again: nothing new, nothing changed.
    let before = support::dump(data.path());
    let again = cairn.capture_paths(&files, &Quiet).unwrap();
    assert_eq!((again.records_added, again.records_updated), (0, 0));
    assert!(again.warnings.is_empty(), "{:?}", again.warnings);
    assert_eq!(support::dump(data.path()), before);
}

/// The agent's side: a connection that writes the way Crush does.
fn agent(db: &Path) -> Connection {
    let conn = Connection::open(db).unwrap();
    conn.busy_timeout(std::time::Duration::from_secs(5))
        .unwrap();
    conn
}

fn add_message(conn: &Connection, id: &str, session: &str, role: &str, parts: &str, at: i64) {
    conn.execute(
        "INSERT INTO messages (id, session_id, role, parts, model, created_at, updated_at)
         VALUES (?1, ?2, ?3, ?4, 'm', ?5, ?5)",
        rusqlite::params![id, session, role, parts, at],
    )
    .unwrap();
}

const MAIN: &str = "9ffe03d9-8440-498b-a7d0-015281c1d74b";

/// New messages are read by the cursor, a message Crush rewrites (its parts grow as it streams)
/// is updated in place, a deleted one is retracted: each read stores only what changed, and a
/// writer holding an open WAL transaction never stops the read (it sees the last commit).
#[test]
fn messages_added_rewritten_and_deleted_while_the_agent_writes() {
    let src = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let db = project_copy(src.path());
    let cairn = Cairn::open(data.path()).unwrap();
    let files = support::found(Agent::Crush, src.path());
    support::capture(&cairn, &files);
    let base = support::live_records(data.path()).len();

    let w = agent(&db);
    let now = 1_754_400_000;
    add_message(
        &w,
        "new-1",
        MAIN,
        "user",
        r#"[{"type":"text","data":{"text":"one more thing"}}]"#,
        now,
    );
    // An uncommitted write of the agent is not seen, and does not block the read.
    w.execute_batch("BEGIN IMMEDIATE").unwrap();
    add_message(
        &w,
        "pending",
        MAIN,
        "user",
        r#"[{"type":"text","data":{"text":"not yet"}}]"#,
        now + 1,
    );
    let r = support::capture(&cairn, &files);
    assert!(r.warnings.is_empty(), "{:?}", r.warnings);
    assert_eq!((r.records_added, r.records_updated), (1, 0));
    w.execute_batch("COMMIT").unwrap();
    let r = support::capture(&cairn, &files);
    assert_eq!((r.records_added, r.records_updated), (1, 0));

    // Streaming: the assistant message is inserted, then rewritten with more parts.
    add_message(
        &w,
        "reply",
        MAIN,
        "assistant",
        r#"[{"type":"text","data":{"text":"Work"}}]"#,
        now + 2,
    );
    assert_eq!(support::capture(&cairn, &files).records_added, 1);
    w.execute(
        "UPDATE messages SET parts = ?1 WHERE id = 'reply'",
        [r#"[{"type":"text","data":{"text":"Working on it"}},{"type":"tool_call","data":{"id":"c9","name":"bash","input":"{\"command\":\"ls\"}"}}]"#],
    )
    .unwrap();
    let r = support::capture(&cairn, &files);
    assert_eq!((r.records_added, r.records_updated), (1, 1), "{r:?}");
    let texts: Vec<String> = support::live_records(data.path())
        .into_iter()
        .filter(|r| r.2 == "reply")
        .map(|r| r.3)
        .collect();
    assert_eq!(texts, vec!["Working on it".to_owned(), String::new()]);

    // Deleted by the agent: retracted, not deleted.
    w.execute("DELETE FROM messages WHERE id = 'pending'", [])
        .unwrap();
    support::capture(&cairn, &files);
    assert!(
        !support::live_records(data.path())
            .iter()
            .any(|r| r.3 == "not yet")
    );
    assert_eq!(
        count(
            data.path(),
            "SELECT count(*) FROM records WHERE retracted_at IS NOT NULL"
        ),
        1
    );
    assert_eq!(support::live_records(data.path()).len(), base + 3);
    let r = support::capture(&cairn, &files);
    assert_eq!((r.records_added, r.records_updated), (0, 0));
}

/// Crush is Go: the JSON of a tool's input, quoted in `parts`, carries `<`, `>` and `&` as
/// `\u003c`, `\u003e`, `\u0026`, which glue themselves to a secret's edge in the quoted text
/// (`\u003csk-ant-…`, `\u0026mysql -p…`). A file written with keys in it (an XML config) and a
/// shell line joined by `&&` leave none of them anywhere under the data dir; the stored input is
/// the call's JSON as serde_json writes it.
#[test]
fn secrets_in_a_go_quoted_tool_input_never_reach_the_data_dir() {
    let src = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let db = project_copy(src.path());
    let secrets = [
        "sk-ant-api03-Q7vX2mL9kR4tW8nB3cD6fH1jK5pS0yZ4aE7gU2iO9qT6wR3eY8uI1oP5aS2dF7gH4jK9lZ0xC3vB6nM1qW-AbCdEfGh",
        "xoxb-123456789012-1234567890123-Q7vX2mL9kR4tW8nB3cD6fH1j",
        "AKIAZ7QW3RT5YU8IOP2L",
        "Hunter2Hunter2",
    ];
    let content = format!(
        "<settings><api_key>{}</api_key><slack>{}</slack></settings>",
        secrets[0], secrets[1]
    );
    let input = json!({"file_path": "settings.xml", "content": content}).to_string();
    let shell = json!({"command": format!(
        "cd app&&echo &{}>key.txt&&mysql -u root -p{} appdb<seed.sql",
        secrets[2], secrets[3]
    )})
    .to_string();
    let go = |t: &str| {
        t.replace('<', "\\u003c")
            .replace('>', "\\u003e")
            .replace('&', "\\u0026")
    };
    let parts = json!([
        {"type": "tool_call", "data": {"id": "w1", "name": "write", "input": go(&input)}},
        {"type": "tool_call", "data": {"id": "b1", "name": "bash", "input": go(&shell)}},
    ])
    .to_string();
    assert!(
        parts.contains("\\\\u003capi_key\\\\u003esk-ant-"),
        "{parts}"
    );
    add_message(
        &agent(&db),
        "go-quoted",
        MAIN,
        "assistant",
        &parts,
        1_754_400_000,
    );

    let cairn = Cairn::open(data.path()).unwrap();
    support::capture(&cairn, &support::found(Agent::Crush, src.path()));
    let leaked: Vec<String> = support::every_byte_under(data.path())
        .iter()
        .flat_map(|(name, bytes)| {
            secrets
                .iter()
                .filter(|s| memchr::memmem::find(bytes, s.as_bytes()).is_some())
                .map(move |s| format!("{}… in {name}", &s[..8]))
        })
        .collect();
    assert!(leaked.is_empty(), "leaked:\n{}", leaked.join("\n"));
    let conn = Connection::open(data.path().join("cairn.db")).unwrap();
    let input = |call: &str| -> String {
        conn.query_row(
            "SELECT tool_input FROM records WHERE call_id = ?1 AND kind = 'tool_call'",
            [call],
            |r| r.get(0),
        )
        .unwrap()
    };
    let write = input("w1");
    assert!(write.contains("settings.xml"), "{write}");
    assert!(write.contains("<api_key>[REDACTED:"), "{write}");
    let bash = input("b1");
    assert!(bash.contains("cd app&&echo &"), "{bash}");
}

/// Reading in pieces (after every message) ends where one read of the whole database ends.
#[test]
fn a_database_read_as_it_grows_equals_one_read() {
    let src = tempfile::tempdir().unwrap();
    let db = project_copy(src.path());
    // The database as it was at the first message, grown one message at a time.
    let grow = tempfile::tempdir().unwrap();
    let grown = support::copy_into(&db, grow.path(), &format!("{PROJECT}/.crush/crush.db"));
    let full = Connection::open(&db).unwrap();
    let rows: Vec<Vec<rusqlite::types::Value>> = {
        let mut stmt = full
            .prepare("SELECT id, session_id, role, parts, model, created_at, updated_at FROM messages ORDER BY rowid")
            .unwrap();
        stmt.query_map([], |r| (0..7).map(|i| r.get(i)).collect())
            .unwrap()
            .map(Result::unwrap)
            .collect()
    };
    let w = agent(&grown);
    // Triggers would stamp the time of this run; the copy keeps the fixture's own.
    w.execute_batch(
        "DROP TRIGGER update_messages_updated_at; DROP TRIGGER update_sessions_updated_at;
         DELETE FROM messages;",
    )
    .unwrap();
    let data_pieces = tempfile::tempdir().unwrap();
    let pieces = Cairn::open(data_pieces.path()).unwrap();
    let files = support::found(Agent::Crush, grow.path());
    for (i, row) in rows.iter().enumerate() {
        w.execute(
            "INSERT INTO messages (id, session_id, role, parts, model, created_at, updated_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            rusqlite::params_from_iter(row),
        )
        .unwrap();
        if i % 7 == 0 || i + 1 == rows.len() {
            support::capture(&pieces, &files);
        }
    }
    drop(w);
    let data_once = tempfile::tempdir().unwrap();
    let once = Cairn::open(data_once.path()).unwrap();
    support::capture(&once, &support::found(Agent::Crush, grow.path()));
    assert_eq!(
        support::live_records(data_pieces.path()),
        support::live_records(data_once.path())
    );
    assert_eq!(
        count(data_pieces.path(), "SELECT sum(record_count) FROM sessions"),
        count(data_once.path(), "SELECT sum(record_count) FROM sessions")
    );
}

/// A message rewritten within the second of the last read, its update time unchanged (Crush's
/// times are whole seconds): the marker cannot tell, so that second is read again.
#[test]
fn an_update_in_the_second_of_the_last_read_is_not_missed() {
    let src = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let db = project_copy(src.path());
    let w = agent(&db);
    w.execute_batch("DROP TRIGGER update_messages_updated_at")
        .unwrap();
    // Stamped a minute ahead: every read happens "in" (before the end of) its second.
    let soon = jiff::Timestamp::now().as_second() + 60;
    add_message(
        &w,
        "late",
        MAIN,
        "assistant",
        r#"[{"type":"text","data":{"text":"first"}}]"#,
        soon,
    );
    let cairn = Cairn::open(data.path()).unwrap();
    let files = support::found(Agent::Crush, src.path());
    support::capture(&cairn, &files);
    w.execute(
        "UPDATE messages SET parts = ?1 WHERE id = 'late'",
        [r#"[{"type":"text","data":{"text":"first, then more"}}]"#],
    )
    .unwrap();
    let r = support::capture(&cairn, &files);
    assert_eq!((r.records_added, r.records_updated), (0, 1));
    assert!(
        support::live_records(data.path())
            .iter()
            .any(|r| r.3 == "first, then more")
    );
}

/// Records stored by a build that digested their fields in another form (each keyed record's
/// revision changed with it): a re-read stores nothing while no message changed, and a message
/// the agent rewrites updates its records in place once, each under its key, never twice.
#[test]
fn records_under_an_older_revision_form_are_rewritten_in_place_once() {
    let src = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let db = project_copy(src.path());
    let cairn = Cairn::open(data.path()).unwrap();
    let files = support::found(Agent::Crush, src.path());
    support::capture(&cairn, &files);
    let all = count(data.path(), "SELECT count(*) FROM records");
    Connection::open(data.path().join("cairn.db"))
        .unwrap()
        .execute(
            "UPDATE records SET revision = 'older-form:' || revision WHERE revision IS NOT NULL",
            [],
        )
        .unwrap();

    let r = support::capture(&cairn, &files);
    assert_eq!((r.records_added, r.records_updated), (0, 0));

    // The agent rewrites one message with records: one part more.
    let w = agent(&db);
    let (id, newest): (String, i64) = w
        .query_row(
            "SELECT id, (SELECT max(updated_at) FROM messages) FROM messages
             WHERE session_id = ?1 AND role = 'assistant' AND parts LIKE '%\"text\"%'
             ORDER BY created_at, rowid LIMIT 1",
            [MAIN],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    let of_it = count(
        data.path(),
        &format!("SELECT count(*) FROM records WHERE unit = '{id}'"),
    );
    assert!(of_it > 0);
    w.execute(
        "UPDATE messages SET parts = json_insert(parts, '$[#]', json(?2)), updated_at = ?3
         WHERE id = ?1",
        rusqlite::params![
            id,
            r#"{"type":"text","data":{"text":"one more part"}}"#,
            newest + 10
        ],
    )
    .unwrap();
    let r = support::capture(&cairn, &files);
    assert!(r.warnings.is_empty(), "{:?}", r.warnings);
    assert_eq!(
        (r.records_added, r.records_updated as i64),
        (1, of_it),
        "the new part added, the message's records rewritten once"
    );
    assert_eq!(count(data.path(), "SELECT count(*) FROM records"), all + 1);
    assert_eq!(
        count(
            data.path(),
            "SELECT count(*) FROM records WHERE revision LIKE 'older-form:%'"
        ),
        all - of_it
    );
    assert_eq!(
        count(
            data.path(),
            "SELECT count(*) FROM records WHERE retracted_at IS NOT NULL"
        ),
        0
    );
    let r = support::capture(&cairn, &files);
    assert_eq!((r.records_added, r.records_updated), (0, 0));
}

/// A new Crush database beside `root/<project>/.crush/` built from `sql`.
fn database(root: &Path, sql: &str) -> PathBuf {
    let db = root.join("p/.crush/crush.db");
    std::fs::create_dir_all(db.parent().unwrap()).unwrap();
    Connection::open(&db).unwrap().execute_batch(sql).unwrap();
    db
}

const SCHEMA: &str = "
    CREATE TABLE sessions (id TEXT PRIMARY KEY, parent_session_id TEXT, title TEXT NOT NULL,
        message_count INTEGER NOT NULL DEFAULT 0, prompt_tokens INTEGER NOT NULL DEFAULT 0,
        completion_tokens INTEGER NOT NULL DEFAULT 0, cost REAL NOT NULL DEFAULT 0.0,
        updated_at INTEGER NOT NULL, created_at INTEGER NOT NULL, summary_message_id TEXT);
    CREATE TABLE messages (id TEXT PRIMARY KEY, session_id TEXT NOT NULL, role TEXT NOT NULL,
        parts TEXT NOT NULL default '[]', model TEXT, created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL, finished_at INTEGER, provider TEXT);
    INSERT INTO sessions (id, title, updated_at, created_at) VALUES ('s1', 'hostile', 1754331191, 1754331191);";

fn warnings_of(report: &cairn_core::archive::capture::SyncReport) -> String {
    report
        .warnings
        .iter()
        .map(|w| w.message.clone())
        .collect::<Vec<_>>()
        .join("\n")
}

/// Files named crush.db that are not Crush's database: a warning naming the problem, nothing
/// stored, never a failed sync.
#[test]
fn a_file_that_is_not_crush_s_database_is_a_warning() {
    let src = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let cairn = Cairn::open(data.path()).unwrap();
    let not_sqlite = src.path().join("a/.crush/crush.db");
    std::fs::create_dir_all(not_sqlite.parent().unwrap()).unwrap();
    std::fs::write(&not_sqlite, "{\"sessions\": []}\n").unwrap();
    // A newer schema: the parts column renamed.
    let newer = src.path().join("b/.crush/crush.db");
    std::fs::create_dir_all(newer.parent().unwrap()).unwrap();
    Connection::open(&newer)
        .unwrap()
        .execute_batch(
            "CREATE TABLE sessions (id TEXT, title TEXT, updated_at INTEGER, created_at INTEGER);
             CREATE TABLE messages (id TEXT, session_id TEXT, role TEXT, content TEXT, created_at INTEGER, updated_at INTEGER);
             INSERT INTO sessions VALUES ('s', 't', 1, 1);",
        )
        .unwrap();
    // Another program's database under the same name.
    let foreign = src.path().join("c/.crush/crush.db");
    std::fs::create_dir_all(foreign.parent().unwrap()).unwrap();
    Connection::open(&foreign)
        .unwrap()
        .execute_batch("CREATE TABLE notes (x TEXT)")
        .unwrap();
    let r = support::capture(&cairn, &support::found(Agent::Crush, src.path()));
    let w = warnings_of(&r);
    assert!(w.contains("not a SQLite database"), "{w}");
    assert!(w.contains("table `messages` has no column `parts`"), "{w}");
    assert!(w.contains("no `sessions` table"), "{w}");
    assert_eq!(r.sessions_added, 0);
    // The database was only read.
    let n: i64 = Connection::open(&newer)
        .unwrap()
        .query_row("SELECT count(*) FROM sqlite_schema", [], |r| r.get(0))
        .unwrap();
    assert_eq!(n, 2);
}

/// Wrong types everywhere SQLite lets them in (it does not enforce declared types): parts that
/// are not JSON, not an array, a number; times as text or blobs; a huge text. Every message is
/// read or counted, none fatal, and the huge one is capped in the index.
#[test]
fn wrong_types_and_huge_text_are_read_or_counted() {
    let src = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let db = database(src.path(), SCHEMA);
    let w = agent(&db);
    let huge = "x".repeat(3 << 20);
    let huge_parts = json!([{"type": "text", "data": {"text": huge}}]).to_string();
    for (id, parts, created) in [
        (
            "m1",
            "not json at all",
            rusqlite::types::Value::Integer(1754331192),
        ),
        (
            "m2",
            "{\"type\": \"text\"}",
            rusqlite::types::Value::Text("yesterday".into()),
        ),
        (
            "m3",
            "[{\"type\":\"text\",\"data\":{\"text\":\"typed by a person\"}}]",
            rusqlite::types::Value::Integer(1754331194),
        ),
        (
            "m4",
            "[{\"type\":\"tool_call\",\"data\":{\"id\":7,\"name\":[1],\"input\":{\"a\":1}}}]",
            rusqlite::types::Value::Blob(vec![0, 1]),
        ),
        (
            "m5",
            huge_parts.as_str(),
            rusqlite::types::Value::Integer(1754331196),
        ),
    ] {
        w.execute(
            "INSERT INTO messages (id, session_id, role, parts, created_at, updated_at) VALUES (?1, 's1', 'user', ?2, ?3, 5)",
            rusqlite::params![id, parts, created],
        )
        .unwrap();
    }
    w.execute("UPDATE messages SET parts = 42 WHERE id = 'm1'", [])
        .unwrap();
    let cairn = Cairn::open(data.path()).unwrap();
    let r = support::capture(&cairn, &support::found(Agent::Crush, src.path()));
    assert!(r.warnings.is_empty(), "{:?}", r.warnings);
    let texts: Vec<String> = support::live_records(data.path())
        .into_iter()
        .map(|r| r.3)
        .collect();
    assert_eq!(
        texts.len(),
        3,
        "{:?}",
        texts.iter().map(|t| t.len()).collect::<Vec<_>>()
    );
    assert_eq!(texts[0], "typed by a person");
    let capped = texts.iter().find(|t| t.starts_with("xxx")).unwrap();
    assert!(capped.len() < huge.len() && capped.contains("truncated"));
    let unknown: String = Connection::open(data.path().join("cairn.db"))
        .unwrap()
        .query_row("SELECT unknown_types FROM sessions", [], |r| r.get(0))
        .unwrap();
    assert!(unknown.contains("crush:parts-not-an-array"), "{unknown}");
    // The call with a number for its id and a list for its name is still a call.
    assert_eq!(
        count(
            data.path(),
            "SELECT count(*) FROM records WHERE kind = 'tool_call' AND tool_name = 'unknown'"
        ),
        1
    );
}

/// A database deleted between discovery and the read, and one held by a writer in rollback
/// mode (an exclusive lock): a warning each, the next sync reads what is there.
#[test]
fn a_deleted_or_locked_database_is_read_next_time() {
    let src = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let db = database(src.path(), SCHEMA);
    let w = agent(&db);
    add_message(
        &w,
        "m1",
        "s1",
        "user",
        r#"[{"type":"text","data":{"text":"hello"}}]"#,
        1754331192,
    );
    let cairn = Cairn::open(data.path()).unwrap();
    let files = support::found(Agent::Crush, src.path());

    w.execute_batch("PRAGMA journal_mode = DELETE; BEGIN EXCLUSIVE;")
        .unwrap();
    add_message(
        &w,
        "m2",
        "s1",
        "user",
        r#"[{"type":"text","data":{"text":"again"}}]"#,
        1754331193,
    );
    let r = support::capture(&cairn, &files);
    assert!(warnings_of(&r).contains("locked by its agent"), "{r:?}");
    assert_eq!(r.records_added, 0);
    w.execute_batch("COMMIT").unwrap();
    let r = support::capture(&cairn, &files);
    assert!(r.warnings.is_empty(), "{:?}", r.warnings);
    assert_eq!(r.records_added, 2);
    drop(w);

    std::fs::remove_file(&db).unwrap();
    let r = support::capture(&cairn, &files);
    assert!(warnings_of(&r).contains("cannot read"), "{r:?}");
    assert_eq!(support::live_records(data.path()).len(), 2, "nothing lost");
}

/// Forgetting one session of a database tombstones that session's source: the next sync reads
/// the database (its other sessions may grow) and never imports the forgotten one again.
#[test]
fn a_forgotten_session_of_a_database_stays_forgotten() {
    let src = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    project_copy(src.path());
    let cairn = Cairn::open(data.path()).unwrap();
    let files = support::found(Agent::Crush, src.path());
    support::capture(&cairn, &files);
    let child: String = Connection::open(data.path().join("cairn.db"))
        .unwrap()
        .query_row(
            "SELECT session_key FROM sessions WHERE session_id = 'fae7104b-4a0f-43cd-b283-4c0a1d63fe0e'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    cairn
        .forget(&cairn_core::ForgetRequest {
            session: Some(child),
            ..Default::default()
        })
        .unwrap();
    assert_eq!(count(data.path(), "SELECT count(*) FROM sessions"), 2);
    let r = support::capture(&cairn, &files);
    assert_eq!((r.sessions_added, r.records_added), (0, 0), "{r:?}");
    assert_eq!(count(data.path(), "SELECT count(*) FROM sessions"), 2);
}

//! The databases of agents Cairn reads whose samples are built by the tests: Cursor's IDE chat
//! store from its SQL fixture (a schema sample) and kiro-cli's database from AgentsView's
//! payloads (see each fixture's SOURCES.md). Shared by each agent's tests and the mixed corpus.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};

use rusqlite::Connection;

/// `<root>/User/globalStorage/state.vscdb` built from `tests/fixtures/cursor/vscdb/state.sql`:
/// chats `c-agent` (11 messages as rows), `c-legacy` (inline) and `c-empty`.
pub fn cursor_ide_store(root: &Path) -> PathBuf {
    let db = root.join("User/globalStorage/state.vscdb");
    std::fs::create_dir_all(db.parent().unwrap()).unwrap();
    let sql = std::fs::read_to_string(super::fixtures().join("cursor/vscdb/state.sql")).unwrap();
    Connection::open(&db).unwrap().execute_batch(&sql).unwrap();
    db
}

/// Insert or replace one `cursorDiskKV` row of a Cursor IDE store.
pub fn cursor_ide_set(db: &Path, key: &str, value: &str) {
    Connection::open(db)
        .unwrap()
        .execute(
            "INSERT INTO cursorDiskKV (key, value) VALUES (?1, ?2)",
            [key, value],
        )
        .unwrap();
}

/// A payload of `tests/fixtures/kiro/`.
pub fn kiro_payload(name: &str) -> String {
    std::fs::read_to_string(super::fixtures().join("kiro").join(name)).unwrap()
}

/// `<root>/kiro-cli/data.sqlite3` holding the fixture's three conversations.
pub fn kiro_database(root: &Path) -> PathBuf {
    let db = root.join("kiro-cli/data.sqlite3");
    std::fs::create_dir_all(db.parent().unwrap()).unwrap();
    let conn = Connection::open(&db).unwrap();
    conn.execute_batch(
        "CREATE TABLE conversations_v2 (key TEXT NOT NULL, conversation_id TEXT NOT NULL,
            value TEXT NOT NULL, created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL,
            PRIMARY KEY (key, conversation_id));",
    )
    .unwrap();
    for (cwd, id, file, at) in [
        (
            "/home/user/code/kiro-app",
            "sqlite-session",
            "standard_payload.json",
            1779012000000_i64,
        ),
        (
            "/home/user/code/current-kiro",
            "overlap-session",
            "overlap_payload.json",
            1779015600000,
        ),
        (
            "/home/dev/api",
            "cairn-kiro-tools",
            "tools_payload.json",
            1779094800000,
        ),
    ] {
        conn.execute(
            "INSERT INTO conversations_v2 VALUES (?1, ?2, ?3, ?4, ?5)",
            rusqlite::params![cwd, id, kiro_payload(file), at, at + 60_000],
        )
        .unwrap();
    }
    db
}

/// Rewrite kiro-cli's `overlap-session` with one more turn (a prompt and its answer), as
/// kiro-cli rewrites a conversation's whole value on every turn.
pub fn kiro_add_turn(db: &Path) {
    let mut v: serde_json::Value =
        serde_json::from_str(&kiro_payload("overlap_payload.json")).unwrap();
    v["history"].as_array_mut().unwrap().push(serde_json::json!({
        "user": {"content": {"Prompt": {"prompt": "And the old store?"}}, "timestamp": "2026-05-17T11:05:00Z"},
        "assistant": {"Response": {"message_id": "assistant-overlap-2", "content": "It is read too."}},
    }));
    Connection::open(db)
        .unwrap()
        .execute(
            "UPDATE conversations_v2 SET value = ?1, updated_at = updated_at + 1000 WHERE conversation_id = 'overlap-session'",
            [v.to_string()],
        )
        .unwrap();
}

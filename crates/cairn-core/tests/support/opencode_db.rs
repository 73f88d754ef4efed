//! OpenCode's `opencode.db` built from its documented schema (there is no real database with a
//! licence that lets it be copied; see tests/fixtures/opencode/SOURCES.md).
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use rusqlite::{Connection, params};
use serde_json::Value;

/// OpenCode's tables as its 1.2+ migrations create them (the columns Cairn reads and a few it
/// does not).
pub const SCHEMA: &str = "
    CREATE TABLE session (id TEXT PRIMARY KEY, project_id TEXT NOT NULL, parent_id TEXT,
        slug TEXT NOT NULL, directory TEXT NOT NULL, title TEXT NOT NULL, version TEXT NOT NULL,
        share_url TEXT, summary_additions INTEGER, summary_deletions INTEGER, summary_files INTEGER,
        summary_diffs TEXT, revert TEXT, permission TEXT, time_created INTEGER NOT NULL,
        time_updated INTEGER NOT NULL, time_compacting INTEGER, time_archived INTEGER);
    CREATE TABLE message (id TEXT PRIMARY KEY, session_id TEXT NOT NULL REFERENCES session(id) ON DELETE CASCADE,
        time_created INTEGER NOT NULL, time_updated INTEGER NOT NULL, data TEXT NOT NULL);
    CREATE INDEX message_session_time_created_id_idx ON message (session_id, time_created, id);
    CREATE TABLE part (id TEXT PRIMARY KEY, message_id TEXT NOT NULL REFERENCES message(id) ON DELETE CASCADE,
        session_id TEXT NOT NULL, time_created INTEGER NOT NULL, time_updated INTEGER NOT NULL, data TEXT NOT NULL);
    CREATE INDEX part_message_id_id_idx ON part (message_id, id);
    CREATE INDEX part_session_idx ON part (session_id);
    PRAGMA journal_mode = WAL;";

pub const T0: i64 = 1_730_000_100_000;

pub struct Db {
    pub conn: Connection,
}

impl Db {
    pub fn create(path: &Path) -> Db {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let conn = Connection::open(path).unwrap();
        conn.execute_batch(SCHEMA).unwrap();
        Db { conn }
    }

    pub fn session(&self, id: &str, parent: Option<&str>, title: &str) {
        self.conn
            .execute(
                "INSERT INTO session (id, project_id, parent_id, slug, directory, title, version, time_created, time_updated)
                 VALUES (?1, 'proj', ?2, 'slug', '/work/app', ?3, '1.3.17', ?4, ?4)",
                params![id, parent, title, T0],
            )
            .unwrap();
    }

    pub fn message(&self, id: &str, session: &str, at: i64, data: &Value) {
        self.conn
            .execute(
                "INSERT INTO message (id, session_id, time_created, time_updated, data) VALUES (?1, ?2, ?3, ?3, ?4)",
                params![id, session, at, data.to_string()],
            )
            .unwrap();
    }

    pub fn part(&self, id: &str, message: &str, session: &str, at: i64, data: &Value) {
        self.conn
            .execute(
                "INSERT INTO part (id, message_id, session_id, time_created, time_updated, data) VALUES (?1, ?2, ?3, ?4, ?4, ?5)
                 ON CONFLICT (id) DO UPDATE SET data = excluded.data, time_updated = excluded.time_updated",
                params![id, message, session, at, data.to_string()],
            )
            .unwrap();
    }
}

/// The tables OpenCode 2.x writes sessions to (its migration `loose_psylocke` and the 2.0.26
/// schema: the columns Cairn reads and a few it does not). A fresh 2.x install has these and
/// no `message` or `part` table.
pub const SCHEMA_V2: &str = "
    CREATE TABLE project (id TEXT PRIMARY KEY, worktree TEXT NOT NULL, vcs TEXT, name TEXT,
        time_created INTEGER NOT NULL, time_updated INTEGER NOT NULL, sandboxes TEXT NOT NULL);
    CREATE TABLE session_v2 (id TEXT PRIMARY KEY, project_id TEXT NOT NULL, workspace_id TEXT,
        parent_id TEXT, slug TEXT NOT NULL, directory TEXT NOT NULL, path TEXT, title TEXT,
        version TEXT NOT NULL, cost REAL DEFAULT 0 NOT NULL, tokens_input INTEGER DEFAULT 0 NOT NULL,
        tokens_output INTEGER DEFAULT 0 NOT NULL, agent TEXT, model TEXT,
        time_created INTEGER NOT NULL, time_updated INTEGER NOT NULL, time_idle INTEGER);
    CREATE TABLE session_message (id TEXT PRIMARY KEY,
        session_id TEXT NOT NULL REFERENCES session_v2(id) ON DELETE CASCADE,
        type TEXT NOT NULL, seq INTEGER NOT NULL, time_created INTEGER NOT NULL,
        time_updated INTEGER NOT NULL, data TEXT NOT NULL);
    CREATE UNIQUE INDEX session_message_session_seq_idx ON session_message (session_id, seq);
    PRAGMA journal_mode = WAL;";

impl Db {
    /// A fresh OpenCode 2.x database: the 2.x tables only.
    pub fn create_v2(path: &Path) -> Db {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let conn = Connection::open(path).unwrap();
        conn.execute_batch(SCHEMA_V2).unwrap();
        Db { conn }
    }

    /// A 1.x database upgraded in place: the 2.x tables beside the frozen 1.x ones.
    pub fn upgrade(&self) {
        self.conn.execute_batch(SCHEMA_V2).unwrap();
    }

    pub fn session_v2(&self, id: &str, parent: Option<&str>, title: &str) {
        self.conn
            .execute(
                "INSERT INTO session_v2 (id, project_id, parent_id, slug, directory, title, version, model, time_created, time_updated)
                 VALUES (?1, 'proj', ?2, 'slug', '/work/app', ?3, '2.0.26', '{\"id\":\"gpt-5\",\"providerID\":\"openai\"}', ?4, ?4)",
                params![id, parent, title, T0],
            )
            .unwrap();
    }

    /// A message row, written again (as OpenCode does while it streams) when its id exists.
    pub fn message_v2(&self, id: &str, session: &str, seq: i64, kind: &str, at: i64, data: &Value) {
        self.conn
            .execute(
                "INSERT INTO session_message (id, session_id, type, seq, time_created, time_updated, data)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?5, ?6)
                 ON CONFLICT (id) DO UPDATE SET data = excluded.data, time_updated = excluded.time_updated",
                params![id, session, kind, seq, at, data.to_string()],
            )
            .unwrap();
    }
}

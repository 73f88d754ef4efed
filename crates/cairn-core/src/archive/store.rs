//! The archive's own tables (`sources`, `sessions`, `records`, `turns`, captures, findings,
//! warnings; created by `archive/migrations/`): what the rest of the archive reads and writes
//! through the store floor's connection ([`crate::store`]).
//!
//! One file per kind of read; every item is re-exported here, so callers name
//! `archive::store::X` whatever file holds it.

mod fts;
mod records;
mod redacted;
mod search;
mod sessions;
mod skim;
mod slices;
mod sources;
mod team;
mod turns;
mod vocab;
mod warnings;

pub use crate::store::{DB_FILE, Store};

/// The SQL of a session's title when its agent gave none: the preview of its first turn a person
/// asked, skipping turns that open with harness text ([`super::sources::HARNESS_PREFIXES`]: a
/// `<system-reminder>`, an `<environment_context>`, a compaction summary), else its first turn's.
/// `session_id` is the SQL expression of the session's row id; the subqueries' alias is `ft`.
pub(crate) fn first_request_sql(session_id: &str) -> String {
    let harness: Vec<String> = super::sources::HARNESS_PREFIXES
        .iter()
        .map(|p| {
            format!(
                "substr(ltrim(ft.preview), 1, {}) = '{}'",
                p.chars().count(),
                p.replace('\'', "''")
            )
        })
        .collect();
    format!(
        "COALESCE((SELECT ft.preview FROM turns ft WHERE ft.session_id = {session_id} AND NOT ({}) \
         ORDER BY ft.turn_index LIMIT 1), (SELECT ft.preview FROM turns ft WHERE ft.session_id = \
         {session_id} ORDER BY ft.turn_index LIMIT 1))",
        harness.join(" OR ")
    )
}
pub use fts::*;
pub use records::*;
pub(crate) use redacted::*;
pub use search::*;
pub use sessions::*;
pub use skim::*;
pub use slices::*;
pub use sources::*;
pub use team::*;
pub use turns::*;
pub use vocab::*;
pub use warnings::*;

/// A stored count as a `u32` (negative as 0, too large as `u32::MAX`).
pub(crate) fn count(v: i64) -> u32 {
    u32::try_from(v.max(0)).unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests {
    use rusqlite::{Connection, params};

    use super::*;
    use crate::schema::MIGRATIONS;

    /// Timestamps an archive kept before they were read strictly become unknown; RFC 3339
    /// ones stay as they were.
    #[test]
    fn junk_timestamps_from_older_archives_become_unknown() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(DB_FILE);
        {
            let conn = Connection::open(&path).unwrap();
            for step in &MIGRATIONS[..11] {
                conn.execute_batch(step.sql).unwrap();
            }
            conn.pragma_update(None, "user_version", 11).unwrap();
            conn.execute_batch(
                "INSERT INTO sessions (id, session_key, agent, captured_at, started_at, updated_at)
                   VALUES (1, 'k', 'claude', 'now', '2026-01-01T00:00:00Z', '2099-01-01é000000');
                 INSERT INTO sources (id, source_key, session_id, agent, role, path, updated_at)
                   VALUES (1, 's', 1, 'claude', 'main', '/p', 'now');",
            )
            .unwrap();
            conn.execute(
                "INSERT INTO turns (id, session_id, turn_index, turn_key, opening_ordinal, first_ordinal,
                   last_ordinal, started_at, ended_at) VALUES (1, 1, 0, 't', 0, 0, 1, ?1, ?2)",
                params![
                    "2026-01-01T00:00:00\u{1b}]0;x\u{7}",
                    "2026-01-01T00:00:01.5+02:00"
                ],
            )
            .unwrap();
            for (ordinal, ts) in [
                (0, "2026-01-01T00:00:00.123Z"),
                (1, "2026-01-01"),
                (2, "2026-01-01T00:00:00Z\u{202e}"),
                (3, "2026-01-01 00:00:00Z"),
            ] {
                conn.execute(
                    "INSERT INTO records (session_id, ordinal, source_id, line_no, block, record_hash, kind,
                       source_event_kind, timestamp) VALUES (1, ?1, 1, ?1, 0, ?1, 'message', 'x', ?2)",
                    params![ordinal, ts],
                )
                .unwrap();
            }
        }
        let store = Store::open(&path).unwrap();
        let conn = store.conn();
        let records: Vec<Option<String>> = conn
            .prepare("SELECT timestamp FROM records ORDER BY ordinal")
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap();
        assert_eq!(
            records,
            [
                Some("2026-01-01T00:00:00.123Z".to_owned()),
                None,
                None,
                None
            ]
        );
        let session: (Option<String>, Option<String>) = conn
            .query_row("SELECT started_at, updated_at FROM sessions", [], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })
            .unwrap();
        assert_eq!(session, (Some("2026-01-01T00:00:00Z".to_owned()), None));
        let turn: (Option<String>, Option<String>) = conn
            .query_row("SELECT started_at, ended_at FROM turns", [], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })
            .unwrap();
        assert_eq!(turn, (None, Some("2026-01-01T00:00:01.5+02:00".to_owned())));
    }

    /// An archive written when only Claude and Codex were read keeps its sessions and takes
    /// sessions of the agents read since; an empty agent name is still refused.
    #[test]
    fn sessions_of_newer_agents_fit_an_older_archive() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(DB_FILE);
        {
            let conn = Connection::open(&path).unwrap();
            for step in &MIGRATIONS[..15] {
                conn.execute_batch(step.sql).unwrap();
            }
            conn.pragma_update(None, "user_version", 15).unwrap();
            conn.execute(
                "INSERT INTO sessions (session_key, agent, captured_at) VALUES ('old', 'claude', 'now')",
                [],
            )
            .unwrap();
            let refused = conn.execute(
                "INSERT INTO sessions (session_key, agent, captured_at) VALUES ('new', 'copilot', 'now')",
                [],
            );
            assert!(refused.is_err(), "the old CHECK lists two agents");
        }
        let store = Store::open(&path).unwrap();
        let conn = store.conn();
        conn.execute(
            "INSERT INTO sessions (session_key, agent, captured_at) VALUES ('new', 'copilot', 'now')",
            [],
        )
        .unwrap();
        let empty = conn.execute(
            "INSERT INTO sessions (session_key, agent, captured_at) VALUES ('bad', '', 'now')",
            [],
        );
        assert!(empty.is_err());
        let agents: Vec<String> = conn
            .prepare("SELECT agent FROM sessions ORDER BY session_key")
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .map(Result::unwrap)
            .collect();
        assert_eq!(agents, ["copilot", "claude"]);
    }

    #[test]
    fn check_constraints_reject_unknown_values() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join(DB_FILE)).unwrap();
        // Which names are agents is `Agent::parse`'s to say (0016); the table refuses no name.
        let bad = store.conn().execute(
            "INSERT INTO sessions (session_key, agent, captured_at) VALUES ('k', '', 'now')",
            [],
        );
        assert!(bad.is_err());
    }

    /// The capture writer's inserts check their enumerated columns without building a
    /// temporary B-tree per row, and the rewritten constraints still accept and refuse the
    /// same values, in a new database and in one migrated with rows already stored.
    #[test]
    fn hot_inserts_check_enumerations_without_temporary_tables() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(DB_FILE);
        {
            let conn = Connection::open(&path).unwrap();
            for step in &MIGRATIONS[..8] {
                conn.execute_batch(step.sql).unwrap();
            }
            conn.pragma_update(None, "user_version", 8).unwrap();
            conn.execute_batch(
                "INSERT INTO sessions (id, session_key, agent, captured_at) VALUES (1, 'k', 'claude', 'now');
                 INSERT INTO sources (id, source_key, session_id, agent, role, path, updated_at)
                   VALUES (1, 's', 1, 'claude', 'main', '/p', 'now');
                 INSERT INTO records (session_id, ordinal, source_id, line_no, block, record_hash, kind,
                   source_event_kind, tool_kind, outcome, prompt_source)
                   VALUES (1, 0, 1, 0, 0, 'h0', 'tool_call', 'x', 'exec', 'failed', NULL);",
            )
            .unwrap();
        }
        let store = Store::open(&path).unwrap();
        let conn = store.conn();
        for (table, insert) in [
            (
                "records",
                "INSERT INTO records (session_id, ordinal, source_id, line_no, block, record_hash, kind, \
                 source_event_kind, tool_kind, outcome, prompt_source) \
                 VALUES (1, 7, 1, 0, 0, 'h7', 'message', 'x', 'exec', 'failed', 'human')",
            ),
            (
                "captures",
                "INSERT INTO captures (session_id, source_id, capture_kind, trigger, captured_at, records_added) \
                 VALUES (1, 1, 'backfill', 'sync', 'now', 1)",
            ),
            (
                "secret_findings",
                "INSERT INTO secret_findings (session_id, source_id, line_no, field, rule, confidence, start_byte) \
                 VALUES (1, 1, 0, '', 'r', 'definite', 0)",
            ),
        ] {
            let sql: String = conn
                .query_row(
                    "SELECT sql FROM sqlite_schema WHERE type = 'table' AND name = ?1",
                    [table],
                    |r| r.get(0),
                )
                .unwrap();
            assert!(!sql.contains(" IN ("), "{table}: {sql}");
            let ops: Vec<String> = conn
                .prepare(&format!("EXPLAIN {insert}"))
                .unwrap()
                .query_map([], |r| r.get::<_, String>(1))
                .unwrap()
                .collect::<rusqlite::Result<_>>()
                .unwrap();
            assert!(
                !ops.iter().any(|op| op == "OpenEphemeral"),
                "{table}: {ops:?}"
            );
        }
        let insert = |ordinal: i64,
                      kind: &str,
                      tool_kind: Option<&str>,
                      outcome: Option<&str>,
                      source: Option<&str>| {
            conn.execute(
                "INSERT INTO records (session_id, ordinal, source_id, line_no, block, record_hash, kind, \
                 source_event_kind, tool_kind, outcome, prompt_source) \
                 VALUES (1, ?1, 1, 0, 0, ?1, ?2, 'x', ?3, ?4, ?5)",
                params![ordinal, kind, tool_kind, outcome, source],
            )
        };
        for kind in ["message", "tool_call", "tool_result", "reasoning", "event"] {
            insert(conn.last_insert_rowid() + 10, kind, None, None, None).unwrap();
        }
        insert(
            100,
            "message",
            Some("web_search"),
            Some("could_not_execute"),
            Some("spawned_agent"),
        )
        .unwrap();
        assert!(insert(101, "note", None, None, None).is_err());
        assert!(insert(102, "message", Some("shell"), None, None).is_err());
        assert!(insert(103, "message", None, Some("ok"), None).is_err());
        assert!(insert(104, "message", None, None, Some("bot")).is_err());
        assert!(
            conn.execute(
                "INSERT INTO captures (session_id, source_id, capture_kind, trigger, captured_at, records_added) \
                 VALUES (1, 1, 'backfill', 'cron', 'now', 1)",
                [],
            )
            .is_err()
        );
        let kept: String = conn
            .query_row(
                "SELECT kind FROM records WHERE record_hash = 'h0'",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(kept, "tool_call");
        let ok: String = conn
            .query_row("PRAGMA integrity_check", [], |r| r.get(0))
            .unwrap();
        assert_eq!(ok, "ok");
    }

    /// A teammate's session is marked by capture's own insert of its source (the pull recorded
    /// the file first), and then neither the team push nor Recall's extraction reads it.
    #[test]
    fn a_pulled_session_is_marked_at_capture_and_never_read_as_this_archives_own() {
        let conn = Connection::open_in_memory().unwrap();
        for step in MIGRATIONS {
            conn.execute_batch(step.sql).unwrap();
        }
        let by = PublishedBy {
            publisher: "Ann <ann@example.invalid>".into(),
            published_at: Some("2026-03-01T10:00:00Z".into()),
            pulled_from: "origin".into(),
        };
        mark_pulled(&conn, "/data/pulled/k2.atif.json", &by).unwrap();
        for (id, key, path) in [
            (1, "k1", "/home/me/.claude/p/s.jsonl"),
            (2, "k2", "/data/pulled/k2.atif.json"),
        ] {
            conn.execute(
                "INSERT INTO sessions (id, session_key, agent, captured_at, record_count) VALUES (?1, ?2, 'atif', 'now', 3)",
                params![id, key],
            )
            .unwrap();
            conn.execute(
                "INSERT INTO sources (source_key, session_id, agent, role, path, updated_at) VALUES (?1, ?2, 'atif', 'main', ?3, 'now')",
                params![key, id, path],
            )
            .unwrap();
        }
        assert_eq!(session_origin(&conn, "k1").unwrap(), Some(None));
        assert_eq!(session_origin(&conn, "k2").unwrap(), Some(Some(by.clone())));
        assert_eq!(published_by_of(&conn, 2).unwrap(), Some(by));
        assert_eq!(session_origin(&conn, "k3").unwrap(), None);
        let marks: Vec<String> = team_marks(&conn)
            .unwrap()
            .into_iter()
            .map(|m| m.session_key)
            .collect();
        assert_eq!(marks, ["k1"]);
        let stories: Vec<String> = story_sessions(&conn, StoryFilter::default())
            .unwrap()
            .into_iter()
            .map(|s| s.key)
            .collect();
        assert_eq!(stories, ["k1"]);
    }
}

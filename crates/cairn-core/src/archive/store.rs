//! The archive's own tables (`sources`, `sessions`, `records`, `turns`, captures, findings,
//! warnings; created by `archive/migrations/`): what the rest of the archive reads and writes
//! through the store floor's connection ([`crate::store`]).

use rusqlite::{Connection, OptionalExtension, params};

use crate::error::Result;
/// The facade still names the error mapping here.
pub(crate) use crate::store::db_err;
pub use crate::store::{DB_FILE, Store};

impl Store {
    /// The persisted reading position of one source file.
    pub fn source_state(&self, path: &str) -> Result<Option<SourceState>> {
        self.conn()
            .query_row(
                &format!("SELECT {SOURCE_COLUMNS} FROM sources WHERE path = ?1"),
                params![path],
                SourceState::from_row,
            )
            .optional()
            .map_err(|e| self.err(e))
    }

    /// Every source's reading position, keyed by path (a sync plans all files from one read).
    pub fn all_source_states(&self) -> Result<Vec<SourceState>> {
        let mut stmt = self
            .conn()
            .prepare(&format!("SELECT {SOURCE_COLUMNS} FROM sources"))
            .map_err(|e| self.err(e))?;
        let rows = stmt
            .query_map([], SourceState::from_row)
            .map_err(|e| self.err(e))?;
        rows.collect::<rusqlite::Result<Vec<_>>>()
            .map_err(|e| self.err(e))
    }

    /// Map none of the file (a writer reads only the pages its inserts walk, which its page
    /// cache holds), keeping the page cache as it is.
    pub(crate) fn unmapped(&self) -> Result<()> {
        self.conn()
            .execute_batch("PRAGMA mmap_size = 0;")
            .map_err(|e| self.err(e))
    }
}

/// A stored record, as a session's records are read by the rooms above (extraction segments
/// them): the columns they need, enumerations as stored.
#[derive(Debug, Clone)]
pub struct RecordRow {
    pub ordinal: u32,
    pub kind: String,
    pub role: Option<String>,
    pub prompt_source: Option<String>,
    pub is_sidechain: bool,
    pub is_compaction: bool,
    pub text: Option<String>,
    pub tool_name: Option<String>,
    pub tool_input: Option<String>,
    pub outcome: Option<String>,
}

/// The records of `session`, in order.
pub fn records_of_session(conn: &Connection, session: i64) -> rusqlite::Result<Vec<RecordRow>> {
    let mut stmt = conn.prepare_cached(
        "SELECT ordinal, kind, role, prompt_source, is_sidechain, is_compaction, text, tool_name, tool_input, outcome
         FROM records WHERE session_id = ?1 ORDER BY ordinal",
    )?;
    let rows = stmt.query_map([session], |r| {
        Ok(RecordRow {
            ordinal: r.get(0)?,
            kind: r.get(1)?,
            role: r.get(2)?,
            prompt_source: r.get(3)?,
            is_sidechain: r.get(4)?,
            is_compaction: r.get(5)?,
            text: r.get(6)?,
            tool_name: r.get(7)?,
            tool_input: r.get(8)?,
            outcome: r.get(9)?,
        })
    })?;
    rows.collect()
}

/// Whether this archive captured the session keyed `session_key`.
pub fn captured(conn: &Connection, session_key: &str) -> rusqlite::Result<bool> {
    conn.prepare_cached("SELECT 1 FROM sessions WHERE session_key = ?1")?
        .query_row([session_key], |_| Ok(()))
        .optional()
        .map(|found| found.is_some())
}

/// Mark the session keyed `session_key` published at `now` (what `publish` wrote to its ref).
pub fn mark_published(conn: &Connection, session_key: &str, now: &str) -> rusqlite::Result<()> {
    conn.prepare_cached("UPDATE sessions SET published_at = ?2 WHERE session_key = ?1")?
        .execute(params![session_key, now])?;
    Ok(())
}

/// A stored record in the shape git's evidence scan reads it (`git::evidence`): edits need
/// only their paths, an exec call its input, an event its text.
#[derive(Debug, Clone, Default)]
pub struct EvidenceRecord {
    pub ordinal: i64,
    pub turn_index: i64,
    pub kind: String,
    pub tool_name: Option<String>,
    pub tool_kind: Option<String>,
    pub call_id: Option<String>,
    pub text: Option<String>,
    pub tool_input: Option<String>,
    pub file_paths: Vec<String>,
    pub git_branch: Option<String>,
    pub cwd: Option<String>,
    pub timestamp: Option<String>,
    pub source_event_kind: String,
}

fn evidence_record(r: &rusqlite::Row<'_>) -> rusqlite::Result<EvidenceRecord> {
    let paths: Option<String> = r.get(8)?;
    Ok(EvidenceRecord {
        ordinal: r.get(0)?,
        turn_index: r.get(1)?,
        kind: r.get(2)?,
        tool_name: r.get(3)?,
        tool_kind: r.get(4)?,
        call_id: r.get(5)?,
        text: r.get(6)?,
        tool_input: r.get(7)?,
        file_paths: paths
            .and_then(|p| serde_json::from_str(&p).ok())
            .unwrap_or_default(),
        git_branch: None,
        cwd: r.get(9)?,
        timestamp: r.get(10)?,
        source_event_kind: r.get(11)?,
    })
}

/// The last ordinal stored for `session`.
pub fn last_ordinal(conn: &Connection, session: i64) -> rusqlite::Result<i64> {
    conn.prepare_cached("SELECT next_ordinal - 1 FROM sessions WHERE id = ?1")?
        .query_row([session], |r| r.get(0))
}

/// The records of `session` in `(after, last]` evidence can come from: exec and edit calls and
/// PR links. The WHERE clause repeats the `records_evidence` partial index's, so SQLite uses it.
/// Edits need only their paths; the text and input of an edit (whole file contents) are not read.
pub fn evidence_candidates(
    conn: &Connection,
    session: i64,
    after: i64,
    last: i64,
) -> rusqlite::Result<Vec<EvidenceRecord>> {
    conn.prepare_cached(
        "SELECT r.ordinal, COALESCE(t.turn_index, 0), r.kind, r.tool_name, r.tool_kind, r.call_id,
                CASE WHEN r.kind = 'event' THEN r.text END,
                CASE WHEN r.tool_kind = 'exec' THEN r.tool_input END,
                r.file_paths, r.cwd, r.timestamp, r.source_event_kind
         FROM records r LEFT JOIN turns t ON t.id = r.turn_id
         WHERE r.session_id = ?1 AND r.ordinal > ?2 AND r.ordinal <= ?3
           AND ((r.kind = 'tool_call' AND r.tool_kind IN ('exec', 'file_edit'))
             OR (r.kind = 'event' AND r.source_event_kind = 'claude:pr-link'))",
    )?
    .query_map(params![session, after, last], evidence_record)?
    .collect()
}

/// The results of call `call_id` of `session` stored in `(after, last]` (through `records_call`).
pub fn tool_results(
    conn: &Connection,
    session: i64,
    call_id: &str,
    after: i64,
    last: i64,
) -> rusqlite::Result<Vec<EvidenceRecord>> {
    conn.prepare_cached(
        "SELECT r.ordinal, COALESCE(t.turn_index, 0), r.kind, r.tool_name, r.tool_kind, r.call_id, r.text,
                r.tool_input, r.file_paths, r.cwd, r.timestamp, r.source_event_kind
         FROM records r LEFT JOIN turns t ON t.id = r.turn_id
         WHERE r.session_id = ?1 AND r.call_id = ?2 AND r.kind = 'tool_result'
           AND r.ordinal > ?3 AND r.ordinal <= ?4",
    )?
    .query_map(params![session, call_id, after, last], evidence_record)?
    .collect()
}

/// The first record of each branch `session` recorded in `(after, last]` (`session_branches`),
/// as `branch` records whose turn is the turn of that record.
pub fn branch_firsts(
    conn: &Connection,
    session: i64,
    after: i64,
    last: i64,
) -> rusqlite::Result<Vec<EvidenceRecord>> {
    conn.prepare_cached(
        "SELECT b.first_ordinal, b.git_branch,
                (SELECT COALESCE(t.turn_index, 0) FROM records x LEFT JOIN turns t ON t.id = x.turn_id
                 WHERE x.session_id = b.session_id AND x.ordinal = b.first_ordinal)
         FROM session_branches b WHERE b.session_id = ?1 AND b.first_ordinal > ?2 AND b.first_ordinal <= ?3",
    )?
    .query_map(params![session, after, last], |r| {
        Ok(EvidenceRecord {
            ordinal: r.get(0)?,
            turn_index: r.get::<_, Option<i64>>(2)?.unwrap_or(0),
            kind: "branch".to_owned(),
            git_branch: r.get(1)?,
            ..EvidenceRecord::default()
        })
    })?
    .collect()
}

const SOURCE_COLUMNS: &str = "id, source_key, session_id, path, size, mtime_ns, byte_offset, \
     line_count, first_line_hash, last_line_start, last_line_hash, parser_state, generation, \
     retained_len";

/// Where reading a source file stopped, and how to check the file is still the same file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceState {
    pub id: i64,
    pub source_key: String,
    pub session_id: i64,
    pub path: String,
    pub size: u64,
    pub mtime_ns: i64,
    pub byte_offset: u64,
    pub line_count: u64,
    pub first_line_hash: Option<String>,
    pub last_line_start: Option<u64>,
    pub last_line_hash: Option<String>,
    pub parser_state: Option<String>,
    pub generation: u32,
    pub retained_len: u64,
}

impl SourceState {
    fn from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<SourceState> {
        Ok(SourceState {
            id: r.get(0)?,
            source_key: r.get(1)?,
            session_id: r.get(2)?,
            path: r.get(3)?,
            size: r.get::<_, i64>(4)?.max(0) as u64,
            mtime_ns: r.get(5)?,
            byte_offset: r.get::<_, i64>(6)?.max(0) as u64,
            line_count: r.get::<_, i64>(7)?.max(0) as u64,
            first_line_hash: r.get(8)?,
            last_line_start: r.get::<_, Option<i64>>(9)?.map(|v| v.max(0) as u64),
            last_line_hash: r.get(10)?,
            parser_state: r.get(11)?,
            generation: r.get::<_, i64>(12)?.clamp(0, u32::MAX as i64) as u32,
            retained_len: r.get::<_, i64>(13)?.max(0) as u64,
        })
    }
}

/// True when no session was ever captured (the desktop's first-run page).
pub(crate) fn is_empty(conn: &Connection) -> rusqlite::Result<bool> {
    conn.query_row("SELECT NOT EXISTS (SELECT 1 FROM sessions)", [], |r| {
        r.get(0)
    })
}

/// The index of the turn holding record `ordinal` of session row `session`.
pub(crate) fn turn_of_record(
    conn: &Connection,
    session: i64,
    ordinal: u32,
) -> rusqlite::Result<Option<i64>> {
    conn.query_row(
        "SELECT t.turn_index FROM records r JOIN turns t ON t.id = r.turn_id WHERE r.session_id = ?1 AND r.ordinal = ?2",
        rusqlite::params![session, ordinal],
        |r| r.get(0),
    )
    .optional()
}

/// What the archive holds, for `cairn doctor`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Counts {
    pub sessions: i64,
    pub records: i64,
    pub warnings: i64,
    pub secrets: i64,
}

pub(crate) fn counts(conn: &Connection) -> rusqlite::Result<Counts> {
    conn.query_row(
        "SELECT (SELECT COUNT(*) FROM sessions), (SELECT COUNT(*) FROM records),
                (SELECT COUNT(*) FROM warnings), (SELECT COUNT(*) FROM secret_findings)",
        [],
        |r| {
            Ok(Counts {
                sessions: r.get(0)?,
                records: r.get(1)?,
                warnings: r.get(2)?,
                secrets: r.get(3)?,
            })
        },
    )
}

impl Store {
    /// Bound the memory this connection keeps for reads: at most `mmap_bytes` of the file
    /// mapped (0: none) and a page cache of at most `cache_kib` KiB.
    pub(crate) fn limit_read_memory(&self, mmap_bytes: u64, cache_kib: u32) -> Result<()> {
        self.conn()
            .execute_batch(&format!(
                "PRAGMA mmap_size = {mmap_bytes}; PRAGMA cache_size = -{cache_kib};"
            ))
            .map_err(|e| self.err(e))
    }
}

/// What another room needs to know of a session: its row id, key, project, cwd, branch and agent
/// (empty strings for the unknown ones).
#[derive(Debug, Clone)]
pub struct SessionFacts {
    pub id: i64,
    pub key: String,
    pub project: String,
    pub cwd: String,
    pub branch: String,
    pub agent: String,
}

/// The session named by its key or its agent's session id (the key wins; of several with the
/// same agent id, the newest).
pub fn session_facts(conn: &Connection, key_or_id: &str) -> rusqlite::Result<Option<SessionFacts>> {
    conn.prepare_cached(
        "SELECT id, session_key, COALESCE(project, ''), COALESCE(cwd, ''), COALESCE(git_branch, ''), agent
         FROM sessions WHERE session_key = ?1 OR session_id = ?1
         ORDER BY (session_key = ?1) DESC, updated_at DESC LIMIT 1",
    )?
    .query_row([key_or_id], |r| {
        Ok(SessionFacts {
            id: r.get(0)?,
            key: r.get(1)?,
            project: r.get(2)?,
            cwd: r.get(3)?,
            branch: r.get(4)?,
            agent: r.get(5)?,
        })
    })
    .optional()
}

/// The first record of a turn of session row `session`, the turn named by its key or by
/// `#index` / `index`.
pub fn first_ordinal_of_turn(
    conn: &Connection,
    session: i64,
    turn: &str,
) -> rusqlite::Result<Option<u32>> {
    let by_key: Option<i64> = conn
        .prepare_cached("SELECT id FROM turns WHERE session_id = ?1 AND turn_key = ?2")?
        .query_row(params![session, turn], |r| r.get(0))
        .optional()?;
    let turn_id = match by_key {
        Some(id) => Some(id),
        None => match turn.trim_start_matches('#').parse::<i64>() {
            Ok(index) => conn
                .prepare_cached("SELECT id FROM turns WHERE session_id = ?1 AND turn_index = ?2")?
                .query_row(params![session, index], |r| r.get(0))
                .optional()?,
            Err(_) => None,
        },
    };
    let Some(turn_id) = turn_id else {
        return Ok(None);
    };
    conn.prepare_cached("SELECT MIN(ordinal) FROM records WHERE turn_id = ?1")?
        .query_row([turn_id], |r| r.get(0))
}

#[cfg(test)]
mod tests {
    use rusqlite::Connection;

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
}

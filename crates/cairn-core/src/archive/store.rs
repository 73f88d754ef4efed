//! The SQLite store: one database per data dir, WAL, foreign keys on, versioned migrations.
//!
//! Schema changes only ever happen here, as numbered SQL files applied in order inside a
//! transaction each; `PRAGMA user_version` records how far a database has come. A database
//! from a newer Cairn is refused rather than guessed at.

use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::{Connection, OpenFlags, OptionalExtension, params};

use crate::error::{Error, Result};

/// One schema step: SQL, then, for the few that need it, Rust code in the same transaction
/// (given the data dir, for steps that must read the retained copies).
pub(crate) struct Migration {
    pub sql: &'static str,
    pub then: Option<fn(&rusqlite::Transaction<'_>, &Path) -> Result<()>>,
}

const fn sql(sql: &'static str) -> Migration {
    Migration { sql, then: None }
}

/// Migrations in order; the index + 1 is the schema version they produce.
const MIGRATIONS: &[Migration] = &[
    sql(include_str!("store/0001_archive.sql")),
    sql(include_str!("store/0002_git.sql")),
    sql(include_str!("store/0003_publish.sql")),
    sql(include_str!("store/0004_recall.sql")),
    sql(include_str!("store/0005_extract.sql")),
    sql(include_str!("store/0006_vectors.sql")),
    sql(include_str!("store/0007_insights.sql")),
    sql(include_str!("store/0008_association.sql")),
    sql(include_str!("store/0009_checks.sql")),
    sql(include_str!("store/0010_incremental_links.sql")),
    sql(include_str!("store/0011_link_pending.sql")),
    sql(include_str!("store/0012_unknown_timestamps.sql")),
    sql(include_str!("store/0013_published_remotes.sql")),
    Migration {
        sql: include_str!("store/0014_rekey_redacted_lines.sql"),
        then: Some(super::rekey::migrate),
    },
    sql(include_str!("store/0015_more_agents.sql")),
];

/// The schema version this build writes.
pub const SCHEMA_VERSION: i64 = MIGRATIONS.len() as i64;

/// File name of the database inside the data dir.
pub const DB_FILE: &str = "cairn.db";

/// An open database connection with Cairn's settings applied.
pub struct Store {
    conn: Connection,
    path: PathBuf,
}

impl Store {
    /// Open (creating and migrating if needed) the database at `path`.
    ///
    /// A new database file is created 0600 before SQLite opens it: SQLite creates the `-wal` and
    /// `-shm` files with the database file's mode, so they are private too, whatever the umask.
    ///
    /// Only a missing file is created here, never an existing one opened: POSIX record locks
    /// belong to the process, and closing any descriptor of the file drops all of them, so the
    /// process's other connections would lose theirs. Another process closing next would take
    /// itself for the last connection and delete the WAL those connections still write to.
    pub fn open(path: &Path) -> Result<Store> {
        match crate::private::open_options()
            .write(true)
            .create_new(true)
            .open(path)
        {
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(Error::write_in(path.parent().unwrap_or(path), path, e)),
        }
        let conn = Connection::open(path).map_err(|e| db_err(path, e))?;
        let mut store = Store {
            conn,
            path: path.to_owned(),
        };
        store.configure(false)?;
        store.conn.set_prepared_statement_cache_capacity(64);
        store.migrate()?;
        let data_dir = store.path.parent().unwrap_or(Path::new("")).to_owned();
        super::rekey::finish(&mut store.conn, &data_dir)?;
        Ok(store)
    }

    /// Open an existing database without ever writing to it (a read-only data dir, say).
    ///
    /// A WAL database cleanly closed has no `-shm` file, and a read-only connection cannot
    /// create one in a read-only directory: the first read then fails. In that case the file is
    /// opened as immutable instead (nothing can write to that directory, and a clean close has
    /// checkpointed the WAL into the main file, so nothing is missed).
    pub fn open_read_only(path: &Path) -> Result<Store> {
        match Store::open_read_only_with(path, false) {
            Ok(store) => Ok(store),
            Err(first) => Store::open_read_only_with(path, true).map_err(|_| first),
        }
    }

    fn open_read_only_with(path: &Path, immutable: bool) -> Result<Store> {
        let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn = if immutable {
            Connection::open_with_flags(immutable_uri(path), flags | OpenFlags::SQLITE_OPEN_URI)
        } else {
            Connection::open_with_flags(path, flags)
        }
        .map_err(|e| db_err(path, e))?;
        let store = Store {
            conn,
            path: path.to_owned(),
        };
        store.configure(true)?;
        let version = store.schema_version()?;
        if version > SCHEMA_VERSION {
            return Err(Error::SchemaTooNew {
                path: path.to_owned(),
                found: version,
                known: SCHEMA_VERSION,
            });
        }
        Ok(store)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn conn(&self) -> &Connection {
        &self.conn
    }

    pub fn conn_mut(&mut self) -> &mut Connection {
        &mut self.conn
    }

    /// Map a rusqlite error to one that names this database.
    pub fn err(&self, e: rusqlite::Error) -> Error {
        db_err(&self.path, e)
    }

    pub fn schema_version(&self) -> Result<i64> {
        self.conn
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .map_err(|e| self.err(e))
    }

    fn configure(&self, read_only: bool) -> Result<()> {
        // A busy timeout instead of "database is locked": writers queue behind each other.
        self.conn
            .busy_timeout(Duration::from_secs(30))
            .map_err(|e| self.err(e))?;
        let pragmas = if read_only {
            "PRAGMA foreign_keys = ON; PRAGMA query_only = ON;"
        } else {
            // WAL + synchronous=NORMAL: a committed transaction survives a process crash; a power
            // loss can only lose the last transactions, never corrupt the file.
            "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON;
             PRAGMA temp_store = MEMORY; PRAGMA cache_size = -32768;
             PRAGMA wal_autocheckpoint = 8192; PRAGMA mmap_size = 268435456;"
        };
        self.conn.execute_batch(pragmas).map_err(|e| self.err(e))
    }

    fn migrate(&mut self) -> Result<()> {
        let current = self.schema_version()?;
        if current > SCHEMA_VERSION {
            return Err(Error::SchemaTooNew {
                path: self.path.clone(),
                found: current,
                known: SCHEMA_VERSION,
            });
        }
        let data_dir = self.path.parent().unwrap_or(Path::new("")).to_owned();
        for (index, step) in MIGRATIONS.iter().enumerate().skip(current as usize) {
            let version = index as i64 + 1;
            let path = self.path.clone();
            let tx = self
                .conn
                .transaction_with_behavior(rusqlite::TransactionBehavior::Exclusive)
                .map_err(|e| db_err(&path, e))?;
            // Another process may have migrated while we waited for the lock.
            let now: i64 = tx
                .query_row("PRAGMA user_version", [], |r| r.get(0))
                .map_err(|e| db_err(&path, e))?;
            if now >= version {
                continue;
            }
            tx.execute_batch(step.sql).map_err(|e| db_err(&path, e))?;
            if let Some(then) = step.then {
                then(&tx, &data_dir)?;
            }
            tx.pragma_update(None, "user_version", version)
                .map_err(|e| db_err(&path, e))?;
            tx.commit().map_err(|e| db_err(&path, e))?;
        }
        Ok(())
    }

    /// The persisted reading position of one source file.
    pub fn source_state(&self, path: &str) -> Result<Option<SourceState>> {
        self.conn
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
            .conn
            .prepare(&format!("SELECT {SOURCE_COLUMNS} FROM sources"))
            .map_err(|e| self.err(e))?;
        let rows = stmt
            .query_map([], SourceState::from_row)
            .map_err(|e| self.err(e))?;
        rows.collect::<rusqlite::Result<Vec<_>>>()
            .map_err(|e| self.err(e))
    }
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

/// `file:` URI of `path` opened immutable, with the characters URIs reserve percent-encoded.
fn immutable_uri(path: &Path) -> String {
    let mut uri = String::from("file:");
    for b in path.as_os_str().as_encoded_bytes() {
        match b {
            b'/' | b'-' | b'_' | b'.' | b'~' => uri.push(char::from(*b)),
            b if b.is_ascii_alphanumeric() => uri.push(char::from(*b)),
            b => uri.push_str(&format!("%{b:02X}")),
        }
    }
    uri.push_str("?immutable=1");
    uri
}

/// Name the database in a SQLite error; a write that found no room becomes
/// [`Error::DiskFull`] naming the data dir.
pub(crate) fn db_err(path: &Path, source: rusqlite::Error) -> Error {
    match crate::error::NoRoom::of_db(path, &source) {
        Some(why) => Error::DiskFull {
            dir: path.parent().unwrap_or(path).to_owned(),
            file: path.to_owned(),
            why,
        },
        None => Error::Db {
            path: path.to_owned(),
            source,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn immutable_uris_escape_what_uris_reserve() {
        assert_eq!(
            immutable_uri(Path::new("/data/my dir/a?b#c%d.db")),
            "file:/data/my%20dir/a%3Fb%23c%25d.db?immutable=1"
        );
    }

    #[test]
    fn migrates_a_new_database_and_reopens_idempotently() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(DB_FILE);
        let store = Store::open(&path).unwrap();
        assert_eq!(store.schema_version().unwrap(), SCHEMA_VERSION);
        let mode: String = store
            .conn()
            .query_row("PRAGMA journal_mode", [], |r| r.get(0))
            .unwrap();
        assert_eq!(mode, "wal");
        drop(store);
        let again = Store::open(&path).unwrap();
        assert_eq!(again.schema_version().unwrap(), SCHEMA_VERSION);
    }

    /// Every earlier schema version migrates to the current one.
    #[test]
    fn migrates_from_every_earlier_version() {
        for start in 0..SCHEMA_VERSION {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join(DB_FILE);
            {
                let conn = Connection::open(&path).unwrap();
                for step in &MIGRATIONS[..start as usize] {
                    conn.execute_batch(step.sql).unwrap();
                }
                conn.pragma_update(None, "user_version", start).unwrap();
            }
            let store = Store::open(&path).unwrap();
            assert_eq!(
                store.schema_version().unwrap(),
                SCHEMA_VERSION,
                "from {start}"
            );
        }
    }

    /// An archive written when only Claude and Codex were read keeps its sessions and takes
    /// sessions of the agents read since; an empty agent name is still refused.
    #[test]
    fn sessions_of_newer_agents_fit_an_older_archive() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(DB_FILE);
        {
            let conn = Connection::open(&path).unwrap();
            for step in &MIGRATIONS[..14] {
                conn.execute_batch(step.sql).unwrap();
            }
            conn.pragma_update(None, "user_version", 14).unwrap();
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

    /// The database is created 0600 and SQLite gives its `-wal` and `-shm` the same mode (the
    /// CLI's `a_fresh_data_dir_is_private_under_any_umask` checks it under umask 000).
    #[cfg(unix)]
    #[test]
    fn the_database_and_its_wal_and_shm_are_private() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(DB_FILE);
        let store = Store::open(&path).unwrap();
        store
            .conn()
            .execute_batch("CREATE TABLE t (x); INSERT INTO t VALUES (1);")
            .unwrap();
        for name in ["cairn.db", "cairn.db-wal", "cairn.db-shm"] {
            let mode = std::fs::metadata(dir.path().join(name))
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o600, "{name}: {mode:o}");
        }
    }

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

    #[test]
    fn refuses_a_newer_schema() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(DB_FILE);
        Connection::open(&path)
            .unwrap()
            .pragma_update(None, "user_version", 999)
            .unwrap();
        let err = Store::open(&path).err().unwrap();
        assert!(err.to_string().contains("newer Cairn"), "{err}");
    }

    #[test]
    fn check_constraints_reject_unknown_values() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join(DB_FILE)).unwrap();
        // Which names are agents is `Agent::parse`'s to say (0015); the table refuses no name.
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

//! Where capture stands: each source file's reading position, the captures it made and the
//! snapshots they recorded, and what the archive holds in all.

use std::borrow::Cow;
use std::collections::HashMap;

use rusqlite::{Connection, OptionalExtension, params};

use crate::archive::redact::Redactor;
use crate::error::Result;
use crate::store::Store;

/// A source's path as the archive keeps it (`sources.path`, `warnings.path`,
/// `pulled_sources.path`): as found, except that a part of it (a folder or file name, a
/// database's session id after `#`) in which the ingest redaction rules find a secret is kept
/// redacted, the separators and every other part as they were. No byte of a secret is written
/// under the data dir, a folder named after a token included, and nothing kept is derived from
/// the secret's bytes ([`source_key`] is the kept path's too), so no stored value confirms a
/// guess of it. The same path always comes out the same, so a path as found is looked up by
/// this; a kept path comes out as it went in. Two paths that differ only inside a secret are
/// kept as one (one source: read as the same file rewritten), a price paid for the guess no
/// hash of the secret would allow. A kept path with a marker names no file: its source is
/// read again only where discovery finds it.
pub fn at_rest(found: &str) -> Cow<'_, str> {
    match redacted_parts(found) {
        None => Cow::Borrowed(found),
        Some(kept) => Cow::Owned(kept),
    }
}

/// The key of the source found at `path` (canonical): agentlog's [`crate::keys::source_key`]
/// of the path, or of the path as kept ([`at_rest`]) when a part of it held a secret.
pub fn source_key(agent: crate::archive::Agent, path: &std::path::Path) -> String {
    match path.to_str().map(at_rest) {
        Some(Cow::Owned(kept)) => crate::keys::source_key(agent, std::path::Path::new(&kept)),
        _ => crate::keys::source_key(agent, path),
    }
}

/// Whether `kept` is a path [`at_rest`] redacted a part of: it names no file to look for.
pub fn is_sealed(kept: &str) -> bool {
    crate::archive::redact::has_marker(kept)
}

/// Keep the paths an older build stored as found as [`at_rest`] keeps them (migration 0045's
/// Rust half): those of sources, warnings and pulled transcripts. A source's key, a hash of the
/// path as found, becomes the kept path's, and its retained copies under `data_dir` are renamed
/// to it; a source whose kept path or key another already has is left as it was (two paths
/// apart only inside a secret). Returns how many rows it changed.
pub(crate) fn seal_kept_paths(
    conn: &Connection,
    data_dir: &std::path::Path,
) -> rusqlite::Result<usize> {
    // The pages a path as found leaves are zeroed, not left free with it.
    conn.pragma_update(None, "secure_delete", true)?;
    let sealed = seal_kept_paths_in(conn, data_dir);
    conn.pragma_update(None, "secure_delete", false)?;
    sealed
}

fn seal_kept_paths_in(conn: &Connection, data_dir: &std::path::Path) -> rusqlite::Result<usize> {
    let retained = crate::archive::retain::Retained::new(data_dir);
    let mut sealed = 0;
    let sources = conn
        .prepare("SELECT id, agent, source_key, path, generation FROM sources")?
        .query_map([], |r| {
            Ok((
                r.get::<_, i64>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, String>(2)?,
                r.get::<_, String>(3)?,
                r.get::<_, i64>(4)?,
            ))
        })?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    for (id, agent, old_key, path, generation) in sources {
        let (Cow::Owned(kept), Some(agent)) =
            (at_rest(&path), crate::archive::Agent::parse(&agent))
        else {
            continue;
        };
        let new_key = crate::keys::source_key(agent, std::path::Path::new(&kept));
        let taken: bool = conn.query_row(
            "SELECT EXISTS (SELECT 1 FROM sources WHERE id <> ?1 AND (path = ?2 OR source_key = ?3))",
            params![id, kept, new_key],
            |r| r.get(0),
        )?;
        if taken {
            continue;
        }
        for g in 0..=u32::try_from(generation.max(0)).unwrap_or(0) {
            let from = retained.path(agent, &old_key, g);
            if from.exists() {
                // A copy that cannot be renamed stays: the next read finds it short and reads
                // the transcript again into a new generation.
                let _ = std::fs::rename(&from, retained.path(agent, &new_key, g));
            }
        }
        sealed += conn.execute(
            "UPDATE sources SET path = ?2, source_key = ?3 WHERE id = ?1",
            params![id, kept, new_key],
        )?;
    }
    for table in ["warnings", "pulled_sources"] {
        let paths = conn
            .prepare(&format!("SELECT DISTINCT path FROM {table}"))?
            .query_map([], |r| r.get::<_, String>(0))?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        for path in paths {
            if let Cow::Owned(kept) = at_rest(&path) {
                // A warning already said of the kept path (UNIQUE with its line and message)
                // is said once.
                sealed += conn.execute(
                    &format!("UPDATE OR IGNORE {table} SET path = ?2 WHERE path = ?1"),
                    params![path, kept],
                )?;
                conn.execute(&format!("DELETE FROM {table} WHERE path = ?1"), [&path])?;
            }
        }
    }
    Ok(sealed)
}

/// `path` with what the rules find definite in each part between `/` and `#` redacted (the
/// separators kept as they are), when they find anything. Only definite findings: folder and
/// file names are full of ids, hashes and dates that read as random (a checkpoint folder
/// `1-6_checkpoint-rewind-20260715T143349`, a temp folder), which the entropy test would take
/// for secrets, and a path kept redacted names no file.
fn redacted_parts(path: &str) -> Option<String> {
    let redactor = Redactor::global();
    let mut out = String::with_capacity(path.len());
    let mut changed = false;
    let mut rest = path;
    while !rest.is_empty() {
        let end = rest.find(['/', '#']).unwrap_or(rest.len());
        let (part, tail) = rest.split_at(end);
        let kept = redactor.redact_definite(part);
        changed |= matches!(kept, Cow::Owned(_));
        out.push_str(&kept);
        let sep = tail.chars().next().map_or(0, char::len_utf8);
        out.push_str(&tail[..sep]);
        rest = &tail[sep..];
    }
    changed.then_some(out)
}

/// The stored reading positions, keyed by path as kept ([`at_rest`]) and looked up by the path
/// as found.
#[derive(Debug, Default, Clone)]
pub struct Positions(HashMap<String, SourceState>);

impl Positions {
    /// The position of the source found at `path`: kept as [`at_rest`] keeps it, or as found
    /// when it was stored before the rules saw a secret in it (the writer keeps it anew).
    pub fn get(&self, path: &str) -> Option<&SourceState> {
        self.0
            .get(at_rest(path).as_ref())
            .or_else(|| self.0.get(path))
    }

    /// Every position.
    pub fn values(&self) -> impl Iterator<Item = &SourceState> {
        self.0.values()
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The positions of the sessions of the database found at `db` (`<db>#<session>`).
    pub fn sessions_of(&self, db: &str) -> Vec<&SourceState> {
        let prefix = database_prefix(db);
        self.0
            .iter()
            .filter(|(path, _)| path.starts_with(prefix.as_str()))
            .map(|(_, s)| s)
            .collect()
    }
}

impl FromIterator<SourceState> for Positions {
    fn from_iter<I: IntoIterator<Item = SourceState>>(states: I) -> Self {
        Positions(states.into_iter().map(|s| (s.path.clone(), s)).collect())
    }
}

/// What every kept path of a session of the database found at `db` begins with.
fn database_prefix(db: &str) -> String {
    let mut prefix = redacted_parts(db).unwrap_or_else(|| db.to_owned());
    prefix.push('#');
    prefix
}

impl Store {
    /// The persisted reading position of the source file found at `path`.
    pub fn source_state(&self, path: &str) -> Result<Option<SourceState>> {
        // As kept, else as found: stored before the rules saw a secret in it (see
        // [`Positions::get`]).
        self.conn()
            .query_row(
                &format!(
                    "SELECT {SOURCE_COLUMNS} FROM sources WHERE path IN (?1, ?2) ORDER BY path = ?1 DESC LIMIT 1"
                ),
                params![at_rest(path), path],
                SourceState::from_row,
            )
            .optional()
            .map_err(|e| self.err(e))
    }

    /// Every source's reading position, keyed by path (a sync plans and reads all files from
    /// one read).
    pub fn all_source_states(&self) -> Result<Positions> {
        self.source_states(&format!("SELECT {SOURCE_COLUMNS} FROM sources"), [])
    }

    /// Every source's reading position without its parser's state (`parser_state` is `None`):
    /// what the retention check compares files with. The state is left where it is: a long
    /// database session's holds a revision of every unit.
    pub fn all_source_positions(&self) -> Result<Positions> {
        let columns = SOURCE_COLUMNS.replace("parser_state", "NULL");
        self.source_states(&format!("SELECT {columns} FROM sources"), [])
    }

    /// The reading positions, parser state and all, of the sessions read from the database
    /// found at `db` (each source's path is `<db>#<session>`).
    pub fn database_source_states(&self, db: &str) -> Result<Positions> {
        // The paths from `<db>#` up to, not including, `<db>$`: those that begin `<db>#`.
        let from = database_prefix(db);
        let to = format!("{}$", &from[..from.len() - 1]);
        self.source_states(
            &format!("SELECT {SOURCE_COLUMNS} FROM sources WHERE path >= ?1 AND path < ?2"),
            [from, to],
        )
    }

    fn source_states(&self, sql: &str, params: impl rusqlite::Params) -> Result<Positions> {
        let mut stmt = self.conn().prepare(sql).map_err(|e| self.err(e))?;
        let rows = stmt
            .query_map(params, SourceState::from_row)
            .map_err(|e| self.err(e))?;
        rows.collect::<rusqlite::Result<Positions>>()
            .map_err(|e| self.err(e))
    }

    /// Remember that the file at `path` was found empty; `true` when it was not remembered
    /// already. An empty file is said once, not at every sync: there is nothing in it to read or
    /// to mend, and no session to hang the warning on, so it is kept without one (until
    /// [`Store::forget_filled_empty_files`]).
    pub(crate) fn note_empty_file(&self, path: &str, now: &str) -> Result<bool> {
        let e = |e| self.err(e);
        let path = at_rest(path);
        let known: bool = self
            .conn()
            .query_row(
                "SELECT EXISTS (SELECT 1 FROM warnings WHERE session_id IS NULL AND path = ?1 \
                 AND line IS NULL AND message = ?2)",
                params![path, EMPTY_FILE],
                |r| r.get(0),
            )
            .map_err(e)?;
        if !known {
            self.conn()
                .execute(
                    "INSERT INTO warnings (session_id, path, line, message, created_at) \
                     VALUES (NULL, ?1, NULL, ?2, ?3)",
                    params![path, EMPTY_FILE, now],
                )
                .map_err(e)?;
        }
        Ok(!known)
    }

    /// Forget the empty files remembered whose file is gone or has content now: one that is
    /// empty again later (made anew) is said again.
    pub(crate) fn forget_filled_empty_files(&self) -> Result<()> {
        let e = |e| self.err(e);
        let mut stmt = self
            .conn()
            .prepare(
                "SELECT id, path FROM warnings WHERE session_id IS NULL AND line IS NULL \
                 AND message = ?1",
            )
            .map_err(e)?;
        let noted = stmt
            .query_map([EMPTY_FILE], |r| {
                Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?))
            })
            .map_err(e)?
            .collect::<rusqlite::Result<Vec<_>>>()
            .map_err(e)?;
        // A sealed path names no file: its note stays (the file is said empty once).
        for (id, path) in noted.into_iter().filter(|(_, p)| !is_sealed(p)) {
            if std::fs::metadata(&path).map_or(true, |m| m.len() > 0) {
                self.conn()
                    .execute("DELETE FROM warnings WHERE id = ?1", [id])
                    .map_err(e)?;
            }
        }
        Ok(())
    }

    /// Map none of the file (a writer reads only the pages its inserts walk, which its page
    /// cache holds), keeping the page cache as it is.
    pub(crate) fn unmapped(&self) -> Result<()> {
        self.conn()
            .execute_batch("PRAGMA mmap_size = 0;")
            .map_err(|e| self.err(e))
    }
}

/// Whether this archive holds the session keyed `session_key` (a teammate's pulled in full has a
/// key of its own, derived from the publisher's: see `git::publish::admit`).
pub fn captured(conn: &Connection, session_key: &str) -> rusqlite::Result<bool> {
    conn.prepare_cached("SELECT 1 FROM sessions WHERE session_key = ?1")?
        .query_row([session_key], |_| Ok(()))
        .optional()
        .map(|found| found.is_some())
}

/// The files the session keyed `session_key` was read from as its main transcript.
pub fn main_source_paths(conn: &Connection, session_key: &str) -> rusqlite::Result<Vec<String>> {
    conn.prepare_cached(
        "SELECT s.path FROM sources s JOIN sessions x ON x.id = s.session_id
         WHERE x.session_key = ?1 AND s.role = 'main' ORDER BY s.id",
    )?
    .query_map([session_key], |r| r.get(0))?
    .collect()
}

/// Mark the session keyed `session_key` published at `now` (what `publish` wrote to its ref).
pub fn mark_published(conn: &Connection, session_key: &str, now: &str) -> rusqlite::Result<()> {
    conn.prepare_cached("UPDATE sessions SET published_at = ?2 WHERE session_key = ?1")?
        .execute(params![session_key, now])?;
    Ok(())
}

/// The warning about a file found empty (nothing to read yet).
pub(crate) const EMPTY_FILE: &str = "empty file skipped";

pub(crate) const SOURCE_COLUMNS: &str = "id, source_key, session_id, path, size, mtime_ns, byte_offset, \
     line_count, first_line_hash, last_line_start, last_line_hash, parser_state, generation, \
     retained_len, sidecar_mtime_ns";

/// How many columns [`SOURCE_COLUMNS`] names: a query that selects more after them reads those
/// from this index on.
pub(crate) const SOURCE_COLUMN_COUNT: usize = 15;

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
    /// The newest mtime of the files read beside a line transcript when it was last read
    /// ([`crate::archive::sources::sidecars`]); 0 for a source without them.
    pub sidecar_mtime_ns: i64,
}

impl SourceState {
    pub(crate) fn from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<SourceState> {
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
            sidecar_mtime_ns: r.get(14)?,
        })
    }
}

/// True when no session was ever captured (the desktop's first-run page).
pub(crate) fn is_empty(conn: &Connection) -> rusqlite::Result<bool> {
    conn.query_row("SELECT NOT EXISTS (SELECT 1 FROM sessions)", [], |r| {
        r.get(0)
    })
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
                (SELECT COUNT(*) FROM warnings WHERE session_id IS NOT NULL), (SELECT COUNT(*) FROM secret_findings)",
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

/// The captures of `session` after capture `after` that have no snapshot (`snapshot_id`, the git
/// room's), in order.
pub fn captures_without_snapshot(
    conn: &Connection,
    session: i64,
    after: i64,
) -> rusqlite::Result<Vec<i64>> {
    conn.prepare_cached(
        "SELECT c.id FROM captures c
         WHERE c.session_id = ?1 AND c.snapshot_id IS NULL AND c.id > ?2
         ORDER BY c.id",
    )?
    .query_map(params![session, after], |r| r.get(0))?
    .collect()
}

/// Attach the snapshot `snapshot` to capture `capture` if it is one of `session`'s: whether it was.
pub fn attach_snapshot(
    conn: &Connection,
    capture: i64,
    session: i64,
    snapshot: i64,
) -> rusqlite::Result<bool> {
    Ok(conn
        .prepare_cached("UPDATE captures SET snapshot_id = ?1 WHERE id = ?2 AND session_id = ?3")?
        .execute(params![snapshot, capture, session])?
        > 0)
}

/// A capture of a session that recorded a git snapshot, as association compares them.
#[derive(Debug, Clone)]
pub struct SnapshotCapture {
    pub id: i64,
    pub snapshot_id: i64,
    /// The turn the capture ended in (the last turn starting at or before its last record).
    pub turn_index: Option<i64>,
    pub last_ordinal: Option<i64>,
    pub captured_at: String,
    /// The time of the last record it read that has one (none: it read none with a time).
    pub last_record_at: Option<String>,
}

/// Whether `session` ran on another machine, as far as Cairn knows: an imported trajectory
/// (agent `atif`) or a teammate's session pulled in full (it has a publisher).
pub fn ran_elsewhere(conn: &Connection, session: i64) -> rusqlite::Result<bool> {
    conn.prepare_cached(
        "SELECT agent = 'atif' OR publisher IS NOT NULL FROM sessions WHERE id = ?1",
    )?
    .query_row([session], |r| r.get(0))
    .optional()
    .map(|v| v.unwrap_or(false))
}

/// When `session` was first read: its first capture's time and the time of the last record
/// that capture read (none: it read none with a time), if it was ever captured.
pub fn first_capture(
    conn: &Connection,
    session: i64,
) -> rusqlite::Result<Option<(String, Option<String>)>> {
    conn.prepare_cached(
        "SELECT c.captured_at,
                (SELECT r.timestamp FROM records r WHERE r.session_id = c.session_id
                   AND r.ordinal BETWEEN c.first_ordinal AND c.last_ordinal
                   AND r.timestamp IS NOT NULL
                 ORDER BY r.ordinal DESC LIMIT 1)
         FROM captures c WHERE c.session_id = ?1 ORDER BY c.id LIMIT 1",
    )?
    .query_row([session], |r| Ok((r.get(0)?, r.get(1)?)))
    .optional()
}

/// The captures of `session` after capture `after` that recorded a snapshot, in order.
pub fn snapshot_captures(
    conn: &Connection,
    session: i64,
    after: i64,
) -> rusqlite::Result<Vec<SnapshotCapture>> {
    conn.prepare_cached(
        "SELECT c.id, c.snapshot_id, (SELECT t.turn_index FROM turns t WHERE t.session_id = c.session_id
                                AND t.first_ordinal <= c.last_ordinal ORDER BY t.turn_index DESC LIMIT 1),
                c.last_ordinal, c.captured_at,
                (SELECT r.timestamp FROM records r WHERE r.session_id = c.session_id
                   AND r.ordinal BETWEEN c.first_ordinal AND c.last_ordinal
                   AND r.timestamp IS NOT NULL
                 ORDER BY r.ordinal DESC LIMIT 1)
         FROM captures c WHERE c.session_id = ?1 AND c.id > ?2 AND c.snapshot_id IS NOT NULL ORDER BY c.id",
    )?
    .query_map(params![session, after], |r| {
        Ok(SnapshotCapture {
            id: r.get(0)?,
            snapshot_id: r.get(1)?,
            turn_index: r.get(2)?,
            last_ordinal: r.get(3)?,
            captured_at: r.get(4)?,
            last_record_at: r.get(5)?,
        })
    })?
    .collect()
}

/// What tells whether a capture that read no record with a time was made while its session
/// was written (`git::associate` weighs it): whether a hook made it, when the session's last
/// capture by an earlier run was made (batches of the same run share its snapshot), and the
/// session's end as its agent's own metadata gives it.
#[derive(Debug, Clone, Default)]
pub struct CaptureWord {
    pub by_hook: bool,
    pub earlier_run_at: Option<String>,
    pub session_ended_at: Option<String>,
}

/// [`CaptureWord`] of capture `capture` (none when there is no such capture).
pub fn capture_word(conn: &Connection, capture: i64) -> rusqlite::Result<Option<CaptureWord>> {
    conn.prepare_cached(
        "SELECT c.trigger = 'hook',
                (SELECT p.captured_at FROM captures p
                  WHERE p.session_id = c.session_id AND p.id < c.id
                    AND p.snapshot_id IS NOT c.snapshot_id
                  ORDER BY p.id DESC LIMIT 1),
                (SELECT s.updated_at FROM sessions s WHERE s.id = c.session_id)
           FROM captures c WHERE c.id = ?1",
    )?
    .query_row([capture], |r| {
        Ok(CaptureWord {
            by_hook: r.get(0)?,
            earlier_run_at: r.get(1)?,
            session_ended_at: r.get(2)?,
        })
    })
    .optional()
}

/// Name `session` for the next relink (in the capture's transaction): a process that dies
/// before that relink leaves it on `link_pending` for the one after (migration 0011).
/// `changed_from`: the lowest ordinal the capture rewrote, retracted or brought back in place
/// (migration 0051), None when it only added records. The queue keeps the lowest it was told
/// of since the last relink: a capture that only grows the session after one that rewrote a
/// record must not make the rewrite look like growth.
pub(crate) fn queue_link(
    conn: &Connection,
    session: i64,
    changed_from: Option<i64>,
) -> rusqlite::Result<()> {
    conn.prepare_cached(
        "INSERT INTO link_pending (session_id, changed_from) VALUES (?1, ?2)
         ON CONFLICT (session_id) DO UPDATE SET changed_from = CASE
             WHEN changed_from IS NULL THEN excluded.changed_from
             WHEN excluded.changed_from IS NULL THEN changed_from
             ELSE min(changed_from, excluded.changed_from) END",
    )?
    .execute(params![session, changed_from])
    .map(drop)
}

/// The lowest ordinal of `session` a capture rewrote, retracted or brought back in place since
/// its last relink ([`queue_link`]); None when it only grew, or is not queued.
pub fn changed_from(conn: &Connection, session: i64) -> rusqlite::Result<Option<i64>> {
    conn.prepare_cached("SELECT changed_from FROM link_pending WHERE session_id = ?1")?
        .query_row([session], |r| r.get(0))
        .optional()
        .map(Option::flatten)
}

/// Migration 0051: `link_pending` gains `changed_from`, unless it holds it already (an archive
/// wound back to an older version by hand keeps its tables as they were).
pub(crate) fn add_changed_from(conn: &Connection) -> rusqlite::Result<()> {
    let has: bool = conn.query_row(
        "SELECT EXISTS (SELECT 1 FROM pragma_table_info('link_pending')
                        WHERE name = 'changed_from')",
        [],
        |r| r.get(0),
    )?;
    if !has {
        conn.execute_batch("ALTER TABLE link_pending ADD COLUMN changed_from INTEGER")?;
    }
    Ok(())
}

/// Name every session for the next relink (a migration that changed what association derives).
pub fn queue_every_link(conn: &Connection) -> rusqlite::Result<()> {
    conn.prepare_cached("INSERT OR IGNORE INTO link_pending (session_id) SELECT id FROM sessions")?
        .execute([])
        .map(drop)
}

/// Sessions a capture stored records for that no relink has taken up since: their capture
/// committed, then the process died or the relink failed.
pub fn pending_links(conn: &Connection) -> rusqlite::Result<Vec<i64>> {
    conn.prepare_cached("SELECT session_id FROM link_pending ORDER BY session_id")?
        .query_map([], |r| r.get(0))?
        .collect()
}

/// A relink took `session` up: it leaves `link_pending`.
pub fn link_done(conn: &Connection, session: i64) -> rusqlite::Result<()> {
    conn.prepare_cached("DELETE FROM link_pending WHERE session_id = ?1")?
        .execute([session])
        .map(drop)
}

/// A relink failed: count an attempt against every pending session and give up those that
/// reached `max_attempts`. Returns how many were given up.
pub fn link_failed(conn: &Connection, max_attempts: i64) -> rusqlite::Result<usize> {
    conn.prepare_cached("UPDATE link_pending SET attempts = attempts + 1")?
        .execute([])?;
    conn.prepare_cached("DELETE FROM link_pending WHERE attempts >= ?1")?
        .execute([max_attempts])
}

/// The archive's revision, which moves whenever capture stores anything and at each reindex:
/// the newest capture batch's id (0 before the first) plus the reindexes run.
pub fn revision(conn: &Connection) -> rusqlite::Result<i64> {
    conn.prepare_cached(
        "SELECT (SELECT COALESCE(MAX(id), 0) FROM captures) + (SELECT COUNT(*) FROM reindexes)",
    )?
    .query_row([], |r| r.get(0))
}

/// Record a reindex run (migration 0033), which moves the archive's [`revision`].
pub fn log_reindex(
    conn: &Connection,
    now: &str,
    sessions: u64,
    records_before: u64,
    records_after: u64,
) -> rusqlite::Result<()> {
    let n = |v: u64| i64::try_from(v).unwrap_or(i64::MAX);
    conn.prepare_cached(
        "INSERT INTO reindexes (reindexed_at, sessions, records_before, records_after)
         VALUES (?1, ?2, ?3, ?4)",
    )?
    .execute(params![
        now,
        n(sessions),
        n(records_before),
        n(records_after)
    ])
    .map(drop)
}

#[cfg(test)]
mod tests {
    use crate::store::Store;

    #[test]
    fn the_source_columns_are_as_many_as_counted() {
        assert_eq!(
            super::SOURCE_COLUMNS.split(',').count(),
            super::SOURCE_COLUMN_COUNT
        );
    }

    /// A database's sessions are the sources under `<db>#`, not those of a database whose name
    /// begins with its name, nor the database file's own; positions come without the state.
    #[test]
    fn a_database_s_sessions_are_its_own_and_positions_leave_the_state() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("cairn.db")).unwrap();
        let paths = [
            "/a/x.db#s1",
            "/a/x.db#s2",
            "/a/x.db",
            "/a/x.db2#s3",
            "/a/x.db$#s4",
            "/a/x.dbz",
            "/a/w.db#s5",
        ];
        store
            .conn()
            .execute(
                "INSERT INTO sessions (id, session_key, agent, captured_at) VALUES (1, 'k', 'opencode', 'now')",
                [],
            )
            .unwrap();
        for (i, path) in paths.iter().enumerate() {
            store
                .conn()
                .execute(
                    "INSERT INTO sources (source_key, session_id, agent, role, path, updated_at, parser_state)
                     VALUES (?1, 1, 'opencode', 'main', ?2, 'now', '{}')",
                    rusqlite::params![format!("k{i}"), path],
                )
                .unwrap();
        }
        let mut found: Vec<String> = store
            .database_source_states("/a/x.db")
            .unwrap()
            .values()
            .map(|s| {
                assert_eq!(s.parser_state.as_deref(), Some("{}"));
                s.path.clone()
            })
            .collect();
        found.sort();
        assert_eq!(found, ["/a/x.db#s1", "/a/x.db#s2"]);
        let all = store.all_source_positions().unwrap();
        assert_eq!(all.len(), paths.len());
        assert!(all.values().all(|s| s.parser_state.is_none()));
        assert!(
            store
                .all_source_states()
                .unwrap()
                .values()
                .all(|s| s.parser_state.is_some())
        );
    }

    const TOKEN: &str = "ghp_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8";

    /// A folder or session id holding a token is kept without it, the rest of the path (its
    /// separators included) as found; kept once, a path is kept the same again; and nothing
    /// kept is derived from the token: paths apart only in it are kept, and keyed, as one.
    #[test]
    fn a_path_is_kept_without_the_secret_in_it() {
        use super::{at_rest, source_key};
        use crate::archive::Agent;
        let found = format!("/home/me/.claude/projects/-home-me-{TOKEN}/s1.jsonl");
        let kept = at_rest(&found).into_owned();
        assert!(!kept.contains(TOKEN), "{kept}");
        assert!(
            kept.starts_with("/home/me/.claude/projects/-home-me-[REDACTED:")
                && kept.ends_with("]/s1.jsonl"),
            "{kept}"
        );
        assert!(super::is_sealed(&kept) && !super::is_sealed(&found));
        assert_eq!(at_rest(&kept), kept, "kept again, the same");
        assert_eq!(at_rest(&found), kept, "the same path, the same");
        let other = found.replace("a1B2", "z9Y8");
        assert_eq!(at_rest(&other), kept, "no trace of which token it was");
        let key = source_key(Agent::Claude, std::path::Path::new(&found));
        assert_eq!(key, source_key(Agent::Claude, std::path::Path::new(&other)));
        assert_eq!(
            key,
            crate::keys::source_key(Agent::Claude, std::path::Path::new(&kept))
        );
        let plain = "/home/me/.claude/projects/-home-me-src/s1.jsonl";
        assert_eq!(
            source_key(Agent::Claude, std::path::Path::new(plain)),
            crate::keys::source_key(Agent::Claude, std::path::Path::new(plain)),
            "agentlog's key where nothing is kept out"
        );
        let db = format!("/home/me/.local/share/opencode/{TOKEN}/opencode.db#ses_1");
        assert!(!at_rest(&db).contains(TOKEN));
        assert!(at_rest(&db).ends_with("]/opencode.db#ses_1"));
        let id = format!("/home/me/.local/share/opencode/opencode.db#{TOKEN}");
        let kept_id = at_rest(&id);
        assert!(
            kept_id.starts_with("/home/me/.local/share/opencode/opencode.db#[REDACTED:"),
            "{kept_id}"
        );
    }

    /// The paths agents keep transcripts at (the fixtures', with ids, hashes and dates in them)
    /// are kept as found.
    #[test]
    fn ordinary_transcript_paths_are_kept_as_found() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures");
        let mut seen = 0;
        let mut stack = vec![root];
        while let Some(dir) = stack.pop() {
            for entry in std::fs::read_dir(&dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    stack.push(path.clone());
                }
                let path = path.to_string_lossy().into_owned();
                assert_eq!(super::at_rest(&path), path.as_str());
                seen += 1;
            }
        }
        assert!(seen > 100, "{seen} fixture paths");
        for path in [
            "/home/me/.claude/projects/-home-me-src-cairn/0f8e2a1c-5b7d-4e3f-9a6b-1c2d3e4f5a6b.jsonl",
            "/home/me/.gemini/tmp/9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08/chats/session-2026-01-02T10-11-12-ab12cd34.json",
            "/home/me/.codex/sessions/2026/01/02/rollout-2026-01-02T10-11-12-0194f1e2-3c4d-7e5f-8a9b-0c1d2e3f4a5b.jsonl",
            "/home/me/.local/share/opencode/opencode.db#ses_3f2a1b0c9d8e7f6a5b4c3d2e1f",
        ] {
            assert_eq!(super::at_rest(path), path);
        }
    }

    /// Migration 45: the paths an older build kept as found are kept without the secret, the
    /// others left; a source's key becomes the kept path's and its retained copies follow it; a
    /// second pass changes nothing.
    #[test]
    fn kept_paths_with_a_secret_are_sealed_once() {
        use crate::archive::Agent;
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("cairn.db")).unwrap();
        let with = format!("/home/me/-home-me-{TOKEN}/s.jsonl");
        let old_key = crate::keys::source_key(Agent::Claude, std::path::Path::new(&with));
        let retained = crate::archive::retain::Retained::new(dir.path());
        let copy = retained.path(Agent::Claude, &old_key, 0);
        std::fs::create_dir_all(copy.parent().unwrap()).unwrap();
        std::fs::write(&copy, b"copy").unwrap();
        store
            .conn()
            .execute_batch(&format!(
                "INSERT INTO sessions (id, session_key, agent, captured_at) VALUES (1, 'k', 'claude', 'now');
                 INSERT INTO sources (source_key, session_id, agent, role, path, updated_at)
                   VALUES ('{old_key}', 1, 'claude', 'main', '{with}', 'now'), ('b', 1, 'claude', 'main', '/home/me/s.jsonl', 'now');
                 INSERT INTO warnings (session_id, path, line, message, created_at)
                   VALUES (NULL, '{with}', NULL, 'empty file skipped', 'now');
                 INSERT INTO pulled_sources (path, publisher, pulled_from) VALUES ('{with}', 'bo', 'origin');"
            ))
            .unwrap();
        assert_eq!(super::seal_kept_paths(store.conn(), dir.path()).unwrap(), 3);
        assert_eq!(super::seal_kept_paths(store.conn(), dir.path()).unwrap(), 0);
        let paths: Vec<String> = store
            .conn()
            .prepare(
                "SELECT path FROM sources UNION ALL SELECT path FROM warnings
                 UNION ALL SELECT path FROM pulled_sources",
            )
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap();
        let kept = super::at_rest(&with).into_owned();
        assert_eq!(paths, [kept.as_str(), "/home/me/s.jsonl", &kept, &kept]);
        let state = store.source_state(&with).unwrap().unwrap();
        let new_key = super::source_key(Agent::Claude, std::path::Path::new(&with));
        assert_eq!(state.source_key, new_key);
        assert!(!copy.exists());
        assert_eq!(
            std::fs::read(retained.path(Agent::Claude, &new_key, 0)).unwrap(),
            b"copy"
        );
    }

    /// A path stored as found before the rules saw a secret in it is still found by it.
    #[test]
    fn a_path_stored_before_the_rules_saw_its_secret_is_found() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("cairn.db")).unwrap();
        let with = format!("/home/me/-home-me-{TOKEN}/s.jsonl");
        store
            .conn()
            .execute_batch(&format!(
                "INSERT INTO sessions (id, session_key, agent, captured_at) VALUES (1, 'k', 'claude', 'now');
                 INSERT INTO sources (source_key, session_id, agent, role, path, updated_at)
                   VALUES ('raw-key', 1, 'claude', 'main', '{with}', 'now');"
            ))
            .unwrap();
        assert_eq!(
            store.source_state(&with).unwrap().unwrap().source_key,
            "raw-key"
        );
        assert_eq!(
            store
                .all_source_states()
                .unwrap()
                .get(&with)
                .unwrap()
                .source_key,
            "raw-key"
        );
    }

    /// A database's sessions are found by the path as found, its folder holding a token.
    #[test]
    fn a_database_s_sessions_are_found_where_its_path_was_sealed() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("cairn.db")).unwrap();
        let db = format!("/a/{TOKEN}/x.db");
        store
            .conn()
            .execute(
                "INSERT INTO sessions (id, session_key, agent, captured_at) VALUES (1, 'k', 'opencode', 'now')",
                [],
            )
            .unwrap();
        for (i, id) in ["s1", "s2"].iter().enumerate() {
            let kept = super::at_rest(&format!("{db}#{id}")).into_owned();
            assert!(!kept.contains(TOKEN));
            store
                .conn()
                .execute(
                    "INSERT INTO sources (source_key, session_id, agent, role, path, updated_at)
                     VALUES (?1, 1, 'opencode', 'main', ?2, 'now')",
                    rusqlite::params![format!("k{i}"), kept],
                )
                .unwrap();
        }
        let found = store.database_source_states(&db).unwrap();
        assert_eq!(found.len(), 2);
        assert!(found.get(&format!("{db}#s1")).is_some());
        assert!(found.get(&format!("{db}#s3")).is_none());
        let all = store.all_source_states().unwrap();
        assert_eq!(all.sessions_of(&db).len(), 2);
        assert!(all.sessions_of("/a/x.db").is_empty());
    }

    /// The relink queue keeps the lowest record changed in place since the last relink: a
    /// capture that only grew the session after one that rewrote a record leaves the rewrite's
    /// ordinal, and a lower rewrite after a higher one lowers it.
    #[test]
    fn the_relink_queue_keeps_the_lowest_record_changed_in_place() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("cairn.db")).unwrap();
        let conn = store.conn();
        conn.execute(
            "INSERT INTO sessions (id, session_key, agent, captured_at) VALUES (1, 'k', 'gemini', 'now')",
            [],
        )
        .unwrap();
        let queued = || super::changed_from(conn, 1).unwrap();
        super::queue_link(conn, 1, None).unwrap();
        assert_eq!(queued(), None);
        super::queue_link(conn, 1, Some(7)).unwrap();
        assert_eq!(queued(), Some(7));
        super::queue_link(conn, 1, None).unwrap();
        assert_eq!(queued(), Some(7), "growth erased the rewrite");
        super::queue_link(conn, 1, Some(9)).unwrap();
        assert_eq!(queued(), Some(7));
        super::queue_link(conn, 1, Some(3)).unwrap();
        assert_eq!(queued(), Some(3));
        super::link_done(conn, 1).unwrap();
        assert_eq!(queued(), None);
    }
}

//! The Database read kind, the reader's side: an agent's SQLite database holding many sessions
//! (see [`crate::archive::sources::database`] for how it is opened without locking the agent
//! out). Each session is a source of its own, at `<database path>#<session id>`, with its own
//! reading position, retained copy and session row, so the writer stores it as it stores a file.
//!
//! A session is read again only when its change marker moved (or the last read fell in the
//! second of its newest update, which a marker in whole seconds cannot tell apart). Then its
//! header row and its units updated since the cursor (the newest update time read, in seconds)
//! are fetched, each row redacted as JSON before it is parsed; a unit whose redacted content is
//! the one already read is skipped, so a re-read stores nothing twice and a message the agent
//! rewrote updates its records in place. Units the agent deleted are retracted. The retained
//! copy holds the rows Cairn read (redacted, compressed), never the database file.
//!
//! Units are read one at a time (`DatabaseSource::units` hands each over as it steps its rows)
//! and go to the writer in batches: while the read goes on in a WAL database (a reader holds no
//! writer up there), after it ends in a rollback-journal one (where a reader's lock keeps the
//! agent from committing). So a long session's first read holds a batch of it, not all of it,
//! where the agent keeps its database in WAL mode, as Crush does.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::document::{ReadUnit, redacted_key, retract, take_header, take_unit};
use super::{Base, Msg, SourceState, file_warning, finish_batch, locate, new_batch, take_full};
use crate::archive::discover::FoundFile;
use crate::archive::sources::database::{self, DatabaseSource, DbSession, UnitParser};
use crate::keys;

/// What the store keeps of one session between reads (`sources.parser_state`).
#[derive(Debug, Default, Clone, Serialize, Deserialize)]
struct Cursor {
    /// The session's change marker at the last read.
    marker: String,
    /// The newest unit update time read, in the agent's own unit (units updated at or after it
    /// are fetched next time).
    since: Option<i64>,
    /// When the last read happened (seconds since the epoch).
    read_at: i64,
    /// Revision of the redacted header at the last read.
    header: String,
    /// Revision of each unit's redacted content, by unit key.
    units: BTreeMap<String, String>,
    /// The parser's own state.
    parser: Value,
}

/// The part of a stored [`Cursor`] that holds the parser's state (its map of unit revisions
/// skipped over, not built).
#[derive(Deserialize)]
struct CursorParser {
    #[serde(default)]
    parser: Value,
}

/// The part of a stored [`Cursor`] that says whether its session changed since.
#[derive(Deserialize)]
struct CursorHead {
    marker: String,
    read_at: i64,
}

/// The source path of one session of a database. A session id that is not a plain token (it
/// could hold anything) is replaced by its digest, so the path stays printable.
pub(crate) fn session_path(db: &str, session: &str) -> String {
    let plain = !session.is_empty()
        && session.len() <= 128
        && session
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b':'));
    if plain {
        format!("{db}#{session}")
    } else {
        let mut d = keys::digest_hex(session.as_bytes());
        d.truncate(32);
        format!("{db}#{d}")
    }
}

/// Read the changed sessions of one database and hand each to `emit` in batches of at most
/// [`super::BATCH_RECORDS`] records (plus the last unit's).
pub(super) fn read_database<'s>(
    file: &FoundFile,
    prior_of: &dyn Fn(&str) -> Option<&'s SourceState>,
    sessions_of: &dyn Fn(&str) -> Vec<&'s SourceState>,
    force: bool,
    emit: &mut dyn FnMut(Msg) -> bool,
) {
    let Some(source) = database::source_for(file.agent) else {
        emit(file_warning(
            file,
            format!("{} keeps no database", file.agent),
        ));
        return;
    };
    read_database_in(
        file,
        source,
        prior_of,
        sessions_of,
        force,
        super::BATCH_RECORDS,
        emit,
    );
}

/// [`read_database`] through `source`, with batches of `batch_records` records.
#[allow(clippy::too_many_arguments)]
fn read_database_in<'s>(
    file: &FoundFile,
    source: &dyn DatabaseSource,
    prior_of: &dyn Fn(&str) -> Option<&'s SourceState>,
    sessions_of: &dyn Fn(&str) -> Vec<&'s SourceState>,
    mut force: bool,
    batch_records: usize,
    emit: &mut dyn FnMut(Msg) -> bool,
) {
    let warn = |message: String| file_warning(file, message);
    let Some((canonical, size, mtime_ns)) = locate(file, emit) else {
        return;
    };
    // A file loaded whole is loaded only when it moved since each of its sessions was read
    // (every read stamps them all, below), and read anew when it grew shorter (rewritten).
    if source.loaded() && !force {
        let known = sessions_of(&canonical.to_string_lossy());
        if !known.is_empty()
            && known
                .iter()
                .all(|s| s.size == size && s.mtime_ns == mtime_ns)
        {
            return;
        }
        force = known.iter().any(|s| s.size > size);
    }
    let conn = match source.open(&canonical) {
        Ok(c) => c,
        Err(e) => {
            emit(warn(format!("cannot read: {e}")));
            return;
        }
    };
    if let Err(missing) = source.check(&conn) {
        emit(warn(format!(
            "not read: {missing} (a {} database of another version?)",
            file.agent
        )));
        return;
    }
    let sessions = match source.sessions(&conn) {
        Ok(s) => s,
        Err(e) => {
            emit(warn(format!("cannot read: {}", database::describe(&e))));
            return;
        }
    };
    // In a WAL database a reader holds no writer up, so a session's batches go to the writer
    // while its read goes on and a long session is never held whole. A rollback-journal
    // database is locked against its agent's writes while it is read: there each session's
    // batches wait for its read to end.
    let wal = conn
        .query_row("PRAGMA journal_mode", [], |r| r.get::<_, String>(0))
        .is_ok_and(|mode| mode.eq_ignore_ascii_case("wal"));
    let db = canonical.to_string_lossy().into_owned();
    for session in &sessions {
        let path = session_path(&db, &session.id);
        let prior = prior_of(&path);
        let read = ReadSession {
            source,
            file,
            db: &canonical,
            path: &path,
            session,
            prior,
            force,
            size,
            mtime_ns,
            stamp_all: source.loaded(),
        };
        // One read transaction per session: its header and units are one snapshot, and the
        // agent's checkpoints wait at most for one session's read.
        let mut held = Vec::new();
        let mut going = true;
        let result = conn.execute_batch("BEGIN").and_then(|()| {
            read.run(&conn, batch_records, &mut |batch| {
                if wal {
                    going = emit(Msg::Batch(Box::new(batch)));
                } else {
                    held.push(batch);
                }
                going
            })?;
            conn.execute_batch("COMMIT")
        });
        match result {
            Ok(()) => {
                for batch in held {
                    if !emit(Msg::Batch(Box::new(batch))) {
                        return;
                    }
                }
                if !going {
                    return;
                }
            }
            Err(e) => {
                let _ = conn.execute_batch("ROLLBACK");
                emit(warn(format!(
                    "reading session {} stopped: {}",
                    crate::text::one_line(&session.id, 80),
                    database::describe(&e)
                )));
                return;
            }
        }
    }
}

struct ReadSession<'a> {
    source: &'a dyn DatabaseSource,
    file: &'a FoundFile,
    db: &'a Path,
    path: &'a str,
    session: &'a DbSession,
    prior: Option<&'a SourceState>,
    force: bool,
    size: u64,
    mtime_ns: i64,
    /// Whether an unchanged session is stamped with the file's size and mtime all the same (a
    /// loaded file: see [`DatabaseSource::loaded`]).
    stamp_all: bool,
}

impl ReadSession<'_> {
    /// Hand `hand` the batches of what changed in the session (none when nothing did), each
    /// ending after the unit that brings it to `batch_records` records, until it returns
    /// `false`. Every batch but the last carries the cursor this read started from, its marker
    /// emptied: a read cut short after any batch is made again from where it started, so
    /// nothing is lost, and the units it takes again are stored as they were (a unit's records
    /// are keyed by it and carry its revision: the same revision changes nothing). That cursor
    /// is written once a read; one listing every unit taken so far, as each batch used to
    /// carry, made a long session's first read quadratic (half its CPU at 70 MB) and held a
    /// copy of it in every batch on its way to the writer.
    fn run(
        &self,
        conn: &rusqlite::Connection,
        batch_records: usize,
        hand: &mut dyn FnMut(super::Batch) -> bool,
    ) -> rusqlite::Result<()> {
        let (prior, force) = (self.prior, self.force);
        let state = prior
            .filter(|_| !force)
            .and_then(|p| p.parser_state.as_deref());
        // Unchanged since it was read: told from the cursor's head alone, its map of unit
        // revisions (a long session's is megabytes) skipped over, not built.
        let head = state.and_then(|s| serde_json::from_str::<CursorHead>(s).ok());
        if head.is_some_and(|h| {
            !h.marker.is_empty()
                && h.marker == self.session.marker
                && h.read_at > self.session.newest
        }) {
            self.stamp(prior, hand);
            return Ok(());
        }
        let cursor: Cursor = state
            .and_then(|s| serde_json::from_str(s).ok())
            .unwrap_or_default();
        let known = prior.is_some() && !force && !cursor.marker.is_empty();
        let read_at = jiff::Timestamp::now().as_second();
        let saved = (!cursor.parser.is_null()).then_some(&cursor.parser);
        let mut parser = match self.source.parser(self.db, saved) {
            Ok(p) => p,
            // A state of an incompatible build: this session is read again from scratch.
            Err(_) => self
                .source
                .parser(self.db, None)
                .map_err(|e| rusqlite::Error::ToSqlConversionFailure(Box::new(e)))?,
        };
        let generation = match prior {
            Some(p) if force => p.generation + 1,
            Some(p) => p.generation,
            None => 0,
        };
        let base = Base {
            existed: prior.is_some(),
            byte_offset: prior.map_or(0, |p| p.byte_offset),
            generation: prior.map_or(0, |p| p.generation),
        };
        let source_key = prior.map(|p| p.source_key.clone()).unwrap_or_else(|| {
            crate::archive::store::source_key(self.file.agent, Path::new(self.path))
        });
        let mut batch = new_batch(self.file, self.path, &source_key, base, generation);
        let mut handed = 0usize;
        let mut going = true;
        let mut line_no = prior.filter(|_| !force).map_or(0, |p| p.line_count);
        let mut next = Cursor {
            marker: self.session.marker.clone(),
            since: cursor.since,
            read_at,
            units: cursor.units.clone(),
            ..Cursor::default()
        };
        let mut bytes = 0u64;
        let restart = serde_json::to_string(&Cursor {
            marker: String::new(),
            read_at,
            ..cursor.clone()
        })
        .unwrap_or_default();

        let Some(header) = self.source.header(conn, self.session)? else {
            return Ok(()); // deleted since it was listed
        };
        next.header = take_header(
            &mut batch,
            &mut *parser,
            header,
            &cursor.header,
            &mut line_no,
        );

        let since = if known { cursor.since } else { None };
        self.source.units(conn, self.session, since, &mut |unit| {
            bytes += unit.bytes;
            next.since = Some(next.since.unwrap_or(i64::MIN).max(unit.updated));
            let Some(value) = unit.value else {
                let key = redacted_key(&unit.key, &mut Vec::new());
                batch.warnings.push((
                    Some(line_no),
                    format!(
                        "message {} of {} bytes skipped (longer than the {} MiB limit)",
                        crate::text::one_line(&key, 80),
                        unit.bytes,
                        database::MAX_COLUMN_BYTES >> 20
                    ),
                ));
                return true;
            };
            let read_unit = ReadUnit::new(&unit.key, value, unit.text);
            // The cursor's own second is read again: a unit read then is skipped here.
            let read = next.units.get(&read_unit.key).cloned();
            let at = line_no;
            let (key, rev) = take_unit(
                &mut batch,
                &mut *parser,
                read_unit,
                read.as_deref(),
                &mut line_no,
            );
            // Said when the unit is taken (a new revision), as a line's is when it is read.
            if unit.lossy && line_no != at {
                batch.warnings.push((
                    Some(at),
                    format!(
                        "message {}: invalid UTF-8 replaced with U+FFFD",
                        crate::text::one_line(&key, 80)
                    ),
                ));
            }
            next.units.insert(key, rev);
            if batch.records.len() < batch_records {
                return true;
            }
            let offset = next.units.len() as u64;
            let full = take_full(&mut batch, offset);
            handed += 1;
            going = hand(self.finish(
                full,
                &*parser,
                restart.clone(),
                offset,
                line_no,
                std::mem::take(&mut bytes),
            ));
            going
        })?;
        if !going {
            return Ok(());
        }
        // Units the agent deleted (a count that no longer adds up).
        if self.session.count != next.units.len() as u64 {
            let live: std::collections::BTreeSet<String> = self
                .source
                .unit_keys(conn, self.session)?
                .iter()
                .map(|k| redacted_key(k, &mut Vec::new()))
                .collect();
            let gone: Vec<String> = next
                .units
                .keys()
                .filter(|k| !live.contains(*k))
                .cloned()
                .collect();
            for k in &gone {
                next.units.remove(k);
            }
            retract(&mut batch, gone, line_no);
        }
        if prior.is_none() && handed == 0 && batch.records.is_empty() {
            // A session without messages yet: no empty session; read again when it changes.
            return Ok(());
        }
        next.parser = parser.save();
        let state = serde_json::to_string(&next).unwrap_or_default();
        let offset = next.units.len() as u64;
        hand(self.finish(batch, &*parser, state, offset, line_no, bytes));
        Ok(())
    }

    /// Hand a batch that only stamps an unchanged session with the file's size and mtime, when
    /// the file is loaded whole and the stamp moved: a file is loaded again only when one of its
    /// sessions' stamps is not the file's.
    fn stamp(&self, prior: Option<&SourceState>, hand: &mut dyn FnMut(super::Batch) -> bool) {
        let Some(p) =
            prior.filter(|p| self.stamp_all && (p.size, p.mtime_ns) != (self.size, self.mtime_ns))
        else {
            return;
        };
        let Some(state) = p.parser_state.clone() else {
            return;
        };
        let saved = serde_json::from_str::<CursorParser>(&state)
            .ok()
            .map(|c| c.parser)
            .filter(|v| !v.is_null());
        let Ok(parser) = self.source.parser(self.db, saved.as_ref()) else {
            return;
        };
        let base = Base {
            existed: true,
            byte_offset: p.byte_offset,
            generation: p.generation,
        };
        let batch = new_batch(self.file, self.path, &p.source_key, base, p.generation);
        hand(self.finish(batch, &*parser, state, p.byte_offset, p.line_count, 0));
    }

    /// Close `batch` with the reading position `state` (a [`Cursor`]'s text) after `offset`
    /// units.
    fn finish(
        &self,
        batch: super::Batch,
        parser: &dyn UnitParser,
        state: String,
        offset: u64,
        line_no: u64,
        bytes: u64,
    ) -> super::Batch {
        let mut done = finish_batch(
            batch,
            self.file,
            Path::new(self.path),
            (parser.meta().clone(), state),
            self.size,
            self.mtime_ns,
            offset,
            line_no,
            &None,
            &None,
            offset,
        );
        done.bytes = bytes;
        done
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;
    use std::fs;

    use super::*;
    use crate::archive::capture::Batch;
    use crate::archive::capture::testing::{assert_resumes, batches_of, state_after, stored};

    /// Every batch a read of `file` hands over, with `prior` as the stored positions.
    fn batches(file: &FoundFile, prior: &HashMap<String, SourceState>, bound: usize) -> Vec<Batch> {
        let source = database::source_for(file.agent).unwrap();
        batches_of(|emit| {
            read_database_in(
                file,
                source,
                &|p| prior.get(p),
                &|_| Vec::new(),
                false,
                bound,
                emit,
            )
        })
    }

    fn of<'a>(bs: &'a [Batch], path: &str) -> Vec<&'a Batch> {
        bs.iter().filter(|b| b.path == path).collect()
    }

    fn hashes<'a>(bs: impl IntoIterator<Item = &'a Batch>) -> Vec<(u64, String)> {
        bs.into_iter()
            .flat_map(|b| b.records.iter().map(|r| (r.line_no, r.hash.clone())))
            .collect()
    }

    /// A long session is handed over in batches of the bound (each ends after the unit that
    /// reaches it), chained base to base; cut short after its first batch, the next read makes
    /// the cut read again from its start, and the two store what one read stores.
    #[test]
    fn a_long_session_is_read_in_bounded_batches_that_resume() {
        let dir = tempfile::tempdir().unwrap();
        let file = crush_copy(dir.path(), "wal");
        let whole = batches(&file, &HashMap::new(), usize::MAX);
        let bounded = batches(&file, &HashMap::new(), 20);
        let main = whole
            .iter()
            .max_by_key(|b| b.records.len())
            .unwrap()
            .path
            .clone();
        assert_eq!(of(&whole, &main).len(), 1, "unbounded: one batch a session");
        let parts = of(&bounded, &main);
        assert!(parts.len() > 2, "{} batches", parts.len());
        assert_eq!(hashes(parts.iter().copied()), hashes(of(&whole, &main)));
        assert!(
            parts[..parts.len() - 1]
                .iter()
                .all(|b| b.records.len() >= 20)
        );
        assert!(stored(&parts).len() > 40);
        // Killed after the first batch was committed: the next read is made again from where
        // the killed one started.
        let prior = HashMap::from([(main.clone(), state_after(parts[0]))]);
        let resumed = batches(&file, &prior, 20);
        assert_resumes(&parts, &of(&resumed, &main));

        // Once the last batch is stored, nothing is read again.
        let done = HashMap::from([(main.clone(), state_after(parts[parts.len() - 1]))]);
        assert!(of(&batches(&file, &done, 20), &main).is_empty());
    }

    /// Crush's source, counting the units it has handed over of the session read last.
    struct Counting {
        read: std::sync::atomic::AtomicUsize,
    }

    impl DatabaseSource for Counting {
        fn agent(&self) -> crate::archive::Agent {
            crate::archive::sources::crush::Crush.agent()
        }
        fn check(&self, conn: &rusqlite::Connection) -> Result<(), String> {
            crate::archive::sources::crush::Crush.check(conn)
        }
        fn sessions(&self, conn: &rusqlite::Connection) -> rusqlite::Result<Vec<DbSession>> {
            crate::archive::sources::crush::Crush.sessions(conn)
        }
        fn header(
            &self,
            conn: &rusqlite::Connection,
            session: &DbSession,
        ) -> rusqlite::Result<Option<Value>> {
            crate::archive::sources::crush::Crush.header(conn, session)
        }
        fn units(
            &self,
            conn: &rusqlite::Connection,
            session: &DbSession,
            since: Option<i64>,
            each: &mut dyn FnMut(database::DbUnit) -> bool,
        ) -> rusqlite::Result<()> {
            self.read.store(0, std::sync::atomic::Ordering::SeqCst);
            crate::archive::sources::crush::Crush.units(conn, session, since, &mut |u| {
                self.read.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                each(u)
            })
        }
        fn unit_keys(
            &self,
            conn: &rusqlite::Connection,
            session: &DbSession,
        ) -> rusqlite::Result<std::collections::BTreeSet<String>> {
            crate::archive::sources::crush::Crush.unit_keys(conn, session)
        }
        fn parser(
            &self,
            path: &Path,
            saved: Option<&Value>,
        ) -> Result<Box<dyn UnitParser>, serde_json::Error> {
            crate::archive::sources::crush::Crush.parser(path, saved)
        }
    }

    /// The fixture database copied to a folder of its own, in the journal mode `mode`.
    fn crush_copy(dir: &Path, mode: &str) -> FoundFile {
        let db = dir.join("p/.crush/crush.db");
        fs::create_dir_all(db.parent().unwrap()).unwrap();
        fs::copy(
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../../tests/fixtures/crush/Starmel-OpenSuperWhisper/.crush/crush.db"),
            &db,
        )
        .unwrap();
        let conn = rusqlite::Connection::open(&db).unwrap();
        let set: String = conn
            .query_row(&format!("PRAGMA journal_mode = {mode}"), [], |r| r.get(0))
            .unwrap();
        assert_eq!(set, mode);
        crate::archive::sources::crush::classify(&db).unwrap()
    }

    /// Whether another connection can write the database now, without waiting (the agent
    /// saving a message while Cairn's writer stores a batch).
    fn agent_can_write(db: &Path) -> bool {
        let conn = rusqlite::Connection::open(db).unwrap();
        conn.busy_timeout(std::time::Duration::ZERO).unwrap();
        conn.execute_batch(
            "BEGIN IMMEDIATE; CREATE TABLE IF NOT EXISTS t (x); INSERT INTO t VALUES (1); COMMIT",
        )
        .is_ok()
    }

    /// In a WAL database a long session's batches reach the writer while its read goes on:
    /// when the first is handed over, only its own units have been read (a session is never
    /// held whole), and the agent can write meanwhile. In a rollback-journal database, where
    /// a reader locks the agent's writes out, the batches wait for the read to end, so the
    /// agent can write while Cairn's writer stores them. Stopped after the first batch, the
    /// read goes no further in either.
    #[test]
    fn a_wal_session_is_handed_over_while_it_is_read() {
        for (mode, streamed) in [("wal", true), ("delete", false)] {
            let dir = tempfile::tempdir().unwrap();
            let file = crush_copy(dir.path(), mode);
            let whole = batches(&file, &HashMap::new(), usize::MAX);
            let longest = whole.iter().map(|b| b.records.len()).max().unwrap();
            let units_of = |b: &Batch| {
                b.records
                    .iter()
                    .filter_map(|r| r.record.unit.clone())
                    .collect::<std::collections::BTreeSet<_>>()
                    .len()
            };
            let source = Counting {
                read: Default::default(),
            };
            let mut first: Option<(usize, usize, bool)> = None;
            read_database_in(
                &file,
                &source,
                &|_| None,
                &|_| Vec::new(),
                false,
                20,
                &mut |m| {
                    let Msg::Batch(b) = m else { return true };
                    if b.records.len() < 20 {
                        return true; // a short session, whole in one batch
                    }
                    let read = source.read.load(std::sync::atomic::Ordering::SeqCst);
                    first = Some((read, units_of(&b), agent_can_write(&file.path)));
                    false
                },
            );
            let (read, taken, writable) = first.expect("a session of more than 20 records");
            assert!(longest > 40, "{longest}");
            let all: usize = whole.iter().map(units_of).sum();
            if streamed {
                assert!(
                    read <= taken + 1 && read < all,
                    "{mode}: {read} read, {taken} taken"
                );
            } else {
                assert!(read > taken, "{mode}: {read} read, {taken} taken");
            }
            assert!(writable, "{mode}: the agent is locked out");
        }
    }

    #[test]
    fn a_session_path_stays_printable() {
        assert_eq!(
            session_path("/p/.crush/crush.db", "abc-1"),
            "/p/.crush/crush.db#abc-1"
        );
        let odd = session_path("/db", "a\u{1b}[31m/../x");
        assert!(odd.starts_with("/db#") && odd.len() == 4 + 32, "{odd}");
        assert_eq!(session_path("/db", "").len(), 4 + 32);
    }
}

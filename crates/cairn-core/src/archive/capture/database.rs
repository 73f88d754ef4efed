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

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::document::{ReadUnit, redacted_key, retract, take_header, take_unit};
use super::{Base, Msg, SourceState, Warning, finish_batch, new_batch};
use crate::archive::discover::FoundFile;
use crate::archive::sources::database::{self, DatabaseSource, DbSession, UnitParser};
use crate::keys;

/// What the store keeps of one session between reads (`sources.parser_state`).
#[derive(Debug, Default, Serialize, Deserialize)]
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

/// A session's read is handed to the writer in batches of about this many records (a batch
/// ends after the unit that reaches it), so one long session is never one unbounded commit.
pub(crate) const BATCH_RECORDS: usize = 2_000;

/// Read the changed sessions of one database and hand each to `emit` in batches of at most
/// [`BATCH_RECORDS`] records (plus the last unit's).
pub(super) fn read_database<'s>(
    file: &FoundFile,
    prior_of: &dyn Fn(&str) -> Option<&'s SourceState>,
    force: bool,
    emit: &mut dyn FnMut(Msg) -> bool,
) {
    read_database_in(file, prior_of, force, BATCH_RECORDS, emit);
}

/// [`read_database`] with batches of `batch_records` records.
fn read_database_in<'s>(
    file: &FoundFile,
    prior_of: &dyn Fn(&str) -> Option<&'s SourceState>,
    force: bool,
    batch_records: usize,
    emit: &mut dyn FnMut(Msg) -> bool,
) {
    let warn = |message: String| {
        Msg::Warning(Warning {
            path: file.path.display().to_string(),
            line: None,
            message,
        })
    };
    let Some(source) = database::source_for(file.agent) else {
        emit(warn(format!("{} keeps no database", file.agent)));
        return;
    };
    let canonical = match fs::canonicalize(&file.path) {
        Ok(p) => p,
        Err(e) => {
            emit(warn(format!("cannot read: {e}")));
            return;
        }
    };
    let (size, mtime_ns) = match fs::metadata(&canonical) {
        Ok(m) => (m.len(), super::mtime_ns(&m)),
        Err(e) => {
            emit(warn(format!("cannot read: {e}")));
            return;
        }
    };
    let conn = match database::open_read_only(&canonical) {
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
        };
        // One read transaction per session: its header and units are one snapshot, and the
        // agent's checkpoints wait at most for one session's read.
        // Its batches are handed over after the read ends, so the agent is never held up by
        // Cairn's writer.
        let result = conn
            .execute_batch("BEGIN")
            .and_then(|()| read.run(&conn, batch_records))
            .and_then(|batches| conn.execute_batch("COMMIT").map(|()| batches));
        match result {
            Ok(batches) => {
                for batch in batches {
                    if !emit(Msg::Batch(Box::new(batch))) {
                        return;
                    }
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
    source: &'static dyn DatabaseSource,
    file: &'a FoundFile,
    db: &'a Path,
    path: &'a str,
    session: &'a DbSession,
    prior: Option<&'a SourceState>,
    force: bool,
    size: u64,
    mtime_ns: i64,
}

impl ReadSession<'_> {
    /// The batches of what changed in the session (none when nothing did), each ending after
    /// the unit that brings it to `batch_records` records. Every batch but the last carries a
    /// cursor that reads the session again from where this read started (its marker empty),
    /// skipping the units already taken by their revision: a read cut short after any batch
    /// resumes where it stopped, nothing twice and nothing lost.
    fn run(
        &self,
        conn: &rusqlite::Connection,
        batch_records: usize,
    ) -> rusqlite::Result<Vec<super::Batch>> {
        let (prior, force) = (self.prior, self.force);
        let cursor: Cursor = prior
            .filter(|_| !force)
            .and_then(|p| p.parser_state.as_deref())
            .and_then(|s| serde_json::from_str(s).ok())
            .unwrap_or_default();
        let known = prior.is_some() && !force && !cursor.marker.is_empty();
        if known && cursor.marker == self.session.marker && cursor.read_at > self.session.newest {
            return Ok(Vec::new());
        }
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
        let source_key = prior
            .map(|p| p.source_key.clone())
            .unwrap_or_else(|| keys::source_key(self.file.agent, Path::new(self.path)));
        let mut batch = new_batch(self.file, self.path, &source_key, base, generation);
        let mut batches = Vec::new();
        let mut line_no = prior.filter(|_| !force).map_or(0, |p| p.line_count);
        let mut next = Cursor {
            marker: self.session.marker.clone(),
            since: cursor.since,
            read_at,
            units: cursor.units.clone(),
            ..Cursor::default()
        };
        let mut bytes = 0u64;

        let Some(header) = self.source.header(conn, self.session)? else {
            return Ok(Vec::new()); // deleted since it was listed
        };
        next.header = take_header(
            &mut batch,
            &mut *parser,
            header,
            &cursor.header,
            &mut line_no,
        );

        let since = if known { cursor.since } else { None };
        for unit in self.source.units(conn, self.session, since)? {
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
                continue;
            };
            let read_unit = ReadUnit::new(&unit.key, value, unit.text);
            // The cursor's own second is read again: a unit read then is skipped here.
            let read = next.units.get(&read_unit.key).cloned();
            let (key, rev) = take_unit(
                &mut batch,
                &mut *parser,
                read_unit,
                read.as_deref(),
                &mut line_no,
            );
            next.units.insert(key, rev);
            if batch.records.len() >= batch_records {
                let partial = Cursor {
                    marker: String::new(),
                    since: cursor.since,
                    read_at,
                    header: next.header.clone(),
                    units: next.units.clone(),
                    parser: parser.save(),
                };
                let offset = next.units.len() as u64;
                let full = std::mem::replace(
                    &mut batch,
                    new_batch(
                        self.file,
                        self.path,
                        &source_key,
                        Base {
                            existed: true,
                            byte_offset: offset,
                            generation,
                        },
                        generation,
                    ),
                );
                batches.push(self.finish(
                    full,
                    &*parser,
                    &partial,
                    line_no,
                    std::mem::take(&mut bytes),
                ));
            }
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
        if prior.is_none() && batches.is_empty() && batch.records.is_empty() {
            // A session without messages yet: no empty session; read again when it changes.
            return Ok(Vec::new());
        }
        next.parser = parser.save();
        batches.push(self.finish(batch, &*parser, &next, line_no, bytes));
        Ok(batches)
    }

    /// Close `batch` with the reading position `cursor` (the units it counts are the offset).
    fn finish(
        &self,
        batch: super::Batch,
        parser: &dyn UnitParser,
        cursor: &Cursor,
        line_no: u64,
        bytes: u64,
    ) -> super::Batch {
        let state = serde_json::to_string(cursor).unwrap_or_default();
        let offset = cursor.units.len() as u64;
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

    use super::*;
    use crate::archive::capture::Batch;

    /// Every batch a read of `file` hands over, with `prior` as the stored positions.
    fn batches(file: &FoundFile, prior: &HashMap<String, SourceState>, bound: usize) -> Vec<Batch> {
        let mut out = Vec::new();
        read_database_in(file, &|p| prior.get(p), false, bound, &mut |m| {
            if let Msg::Batch(b) = m {
                out.push(*b);
            }
            true
        });
        out
    }

    /// The stored position a committed batch leaves.
    fn state_after(b: &Batch) -> SourceState {
        SourceState {
            id: 1,
            source_key: b.source_key.clone(),
            session_id: 1,
            path: b.path.clone(),
            size: b.size,
            mtime_ns: b.mtime_ns,
            byte_offset: b.byte_offset,
            line_count: b.line_count,
            first_line_hash: None,
            last_line_start: None,
            last_line_hash: None,
            parser_state: Some(b.parser_state.clone()),
            generation: b.generation,
            retained_len: 0,
        }
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
    /// reaches it), chained base to base; cut short after its first batch, the next read
    /// resumes from that batch's cursor and adds exactly the rest.
    #[test]
    fn a_long_session_is_read_in_bounded_batches_that_resume() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("p/.crush/crush.db");
        fs::create_dir_all(db.parent().unwrap()).unwrap();
        fs::copy(
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../../tests/fixtures/crush/Starmel-OpenSuperWhisper/.crush/crush.db"),
            &db,
        )
        .unwrap();
        let file = crate::archive::sources::crush::classify(&db).unwrap();
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
        for pair in parts.windows(2) {
            assert!(pair[0].records.len() >= 20);
            assert_eq!(
                (pair[1].base.existed, pair[1].base.byte_offset),
                (true, pair[0].byte_offset),
                "each batch starts where the one before ends"
            );
        }
        assert!(parts[0].byte_offset < parts[parts.len() - 1].byte_offset);

        // Killed after the first batch was committed: the next read takes up the rest.
        let prior = HashMap::from([(main.clone(), state_after(parts[0]))]);
        let resumed = batches(&file, &prior, 20);
        let rest = of(&resumed, &main);
        assert_eq!(rest[0].base.byte_offset, parts[0].byte_offset);
        let mut all = hashes([parts[0]]);
        all.extend(hashes(rest.iter().copied()));
        assert_eq!(
            all,
            hashes(of(&whole, &main)),
            "nothing twice, nothing lost"
        );

        // Once the last batch is stored, nothing is read again.
        let done = HashMap::from([(main.clone(), state_after(parts[parts.len() - 1]))]);
        assert!(of(&batches(&file, &done, 20), &main).is_empty());
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

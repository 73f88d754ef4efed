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

use super::document::{retract, take_header, take_unit};
use super::{Base, Msg, SourceState, Warning, finish_batch, new_batch};
use crate::archive::discover::FoundFile;
use crate::archive::redact::Redactor;
use crate::archive::sources::database::{self, DatabaseSource, DbSession};
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

/// Read the changed sessions of one database and hand each to `emit` as one batch.
pub(super) fn read_database<'s>(
    file: &FoundFile,
    prior_of: &dyn Fn(&str) -> Option<&'s SourceState>,
    force: bool,
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
        let result = conn
            .execute_batch("BEGIN")
            .and_then(|()| read.run(&conn))
            .and_then(|batch| conn.execute_batch("COMMIT").map(|()| batch));
        match result {
            Ok(Some(batch)) => {
                if !emit(Msg::Batch(Box::new(batch))) {
                    return;
                }
            }
            Ok(None) => {}
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
    /// The batch of what changed in the session, `None` when nothing did.
    fn run(&self, conn: &rusqlite::Connection) -> rusqlite::Result<Option<super::Batch>> {
        let (prior, force) = (self.prior, self.force);
        let cursor: Cursor = prior
            .filter(|_| !force)
            .and_then(|p| p.parser_state.as_deref())
            .and_then(|s| serde_json::from_str(s).ok())
            .unwrap_or_default();
        let known = prior.is_some() && !force && !cursor.marker.is_empty();
        if known && cursor.marker == self.session.marker && cursor.read_at > self.session.newest {
            return Ok(None);
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
        let mut line_no = prior.filter(|_| !force).map_or(0, |p| p.line_count);
        let mut next = Cursor {
            marker: self.session.marker.clone(),
            since: cursor.since,
            read_at,
            units: cursor.units.clone(),
            ..Cursor::default()
        };
        let redactor = Redactor::global();
        let mut bytes = 0u64;

        let Some(header) = self.source.header(conn, &self.session.id)? else {
            return Ok(None); // deleted since it was listed
        };
        next.header = take_header(
            &mut batch,
            &mut *parser,
            header,
            &cursor.header,
            &mut line_no,
        );

        let since = if known { cursor.since } else { None };
        for unit in self.source.units(conn, &self.session.id, since)? {
            bytes += unit.bytes;
            next.since = Some(next.since.unwrap_or(i64::MIN).max(unit.updated));
            let mut findings = Vec::new();
            let key = redactor
                .redact_text(&unit.key, "unit id", &mut findings)
                .into_owned();
            let Some(value) = unit.value else {
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
            // The cursor's own second is read again: a unit read then is skipped here.
            let read = next.units.get(&key).cloned();
            let rev = take_unit(
                &mut batch,
                &mut *parser,
                &key,
                value,
                findings,
                read.as_deref(),
                &mut line_no,
            );
            next.units.insert(key, rev);
        }
        // Units the agent deleted (a count that no longer adds up).
        if self.session.count != next.units.len() as u64 {
            let live: std::collections::BTreeSet<String> = self
                .source
                .unit_keys(conn, &self.session.id)?
                .iter()
                .map(|k| {
                    redactor
                        .redact_text(k, "unit id", &mut Vec::new())
                        .into_owned()
                })
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
        if prior.is_none() && batch.records.is_empty() {
            // A session without messages yet: no empty session; read again when it changes.
            return Ok(None);
        }
        next.parser = parser.save();
        let state = serde_json::to_string(&next).unwrap_or_default();
        let offset = next.units.len() as u64;
        let mut last = finish_batch(
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
        last.bytes = bytes;
        Ok(Some(last))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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

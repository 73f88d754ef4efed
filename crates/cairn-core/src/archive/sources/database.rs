//! The Database read kind, the agent's side: a SQLite database the agent owns and keeps writing
//! (Crush's `.crush/crush.db`, OpenCode's `opencode.db`). One database holds many sessions; each
//! is read as its own source (see `capture::database`) by an update-time cursor, its rows handed
//! over as JSON values that are redacted before any record is built.
//!
//! Opening never locks the agent out: the file is opened read-only (`SQLITE_OPEN_READ_ONLY`, what
//! the URI `mode=ro` sets) with `query_only` on and a short busy timeout, never `immutable=1`
//! (the agent may be writing it: an immutable open would read torn pages). A WAL database is
//! read through its `-wal` like any reader, so a session the agent is in the middle of shows its
//! last committed messages. Each agent names the tables and columns it reads; a database without
//! them (a newer or older schema, not the agent's file) is reported and skipped, never guessed.

use std::collections::BTreeSet;
use std::path::Path;
use std::time::Duration;

use rusqlite::types::ValueRef;
use rusqlite::{Connection, OpenFlags};
use serde_json::Value;

use super::{LineOutput, SessionMeta};
use crate::archive::Agent;

/// How long a read waits for a writer that holds the database (a rollback-journal database
/// being written); past it the database is read on the next sync.
pub const BUSY_TIMEOUT: Duration = Duration::from_secs(2);

/// The longest JSON column read (a message's parts); a longer one is skipped with a warning.
pub const MAX_COLUMN_BYTES: i64 = 64 * 1024 * 1024;

/// How much of an agent's database is read through a memory map.
const MMAP_BYTES: i64 = 256 * 1024 * 1024;

/// The first bytes of every SQLite 3 database file.
const MAGIC: &[u8; 16] = b"SQLite format 3\0";

/// One session in an agent's database, with what says whether it changed since the last read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DbSession {
    /// The agent's id of the session.
    pub id: String,
    /// A digest-able summary of the session's rows (update times, counts): equal markers mean
    /// nothing changed, provided the last read came after the newest update time (see
    /// [`DbSession::newest`]).
    pub marker: String,
    /// The newest update time of the session's units, in seconds since the epoch.
    pub newest: i64,
    /// How many units the session holds.
    pub count: u64,
    /// Where the session's row is (its rowid), for a source whose sessions cannot be found by
    /// an index on their id (kiro-cli's table is keyed by folder and id): read by it instead of
    /// scanning the table once per session.
    pub row: Option<i64>,
}

/// One unit (a message) read from the database.
#[derive(Debug, Clone)]
pub struct DbUnit {
    /// The agent's stable id of the unit.
    pub key: String,
    /// Its update time, in the agent's own unit (the cursor compares it with the column).
    pub updated: i64,
    /// The row as JSON (JSON columns parsed); `None` when a column was over
    /// [`MAX_COLUMN_BYTES`] (its length says how long).
    pub value: Option<Value>,
    /// `value`'s text as serde_json writes it, when the source could put it together from the
    /// columns' own text ([`RowText`]); `None` has it serialised.
    pub text: Option<String>,
    /// The length in bytes of the row's JSON columns.
    pub bytes: u64,
    /// Whether a byte of it that is not UTF-8 was read as U+FFFD (the read says so).
    pub lossy: bool,
}

impl DbUnit {
    /// A unit whose value the source took out of a row it parsed (not a row's columns):
    /// serialised once here, for its length and as its text. `row_lossy` says a byte of that
    /// row was not UTF-8: the units of it holding a U+FFFD are the ones that may have had it.
    pub fn serialised(key: String, updated: i64, value: Value, row_lossy: bool) -> DbUnit {
        let text = serde_json::to_string(&value).ok();
        DbUnit {
            key,
            updated,
            bytes: text.as_ref().map_or(0, |s| s.len() as u64),
            lossy: row_lossy && text.as_ref().is_some_and(|t| t.contains('\u{fffd}')),
            value: Some(value),
            text,
        }
    }
}

/// One agent's parser of the units of a session (messages), given one at a time after they
/// were redacted. The same shape the Document kind's parsers have, without a document to split.
pub trait UnitParser: Send {
    /// Read the (redacted) header: session identity and times.
    fn header(&mut self, header: &Value, out: &mut LineOutput);
    /// Parse one (redacted) unit that is new or changed.
    fn unit(&mut self, key: &str, unit: &Value, out: &mut LineOutput);
    fn meta(&self) -> &SessionMeta;
    /// The state to persist between reads (serde JSON).
    fn save(&self) -> Value;
}

/// One agent's reading of its database: which sessions there are, a session's header row and
/// its units changed since a cursor.
pub trait DatabaseSource: Sync {
    fn agent(&self) -> Agent;
    /// Open the database at `path` for reading: the agent's own SQLite file, read-only
    /// ([`open_read_only`]). A source whose sessions are kept in another form (Visual Studio's
    /// trace files) loads the file into a database in memory instead ([`Self::loaded`]).
    fn open(&self, path: &Path) -> Result<Connection, OpenError> {
        open_read_only(path)
    }
    /// Whether [`Self::open`] loads the whole file: such a file is loaded only when its size or
    /// mtime moved since each of its sessions was last read, and one grown shorter is read anew.
    fn loaded(&self) -> bool {
        false
    }
    /// Whether the database holds the tables and columns this source reads; the error says
    /// what is missing.
    fn check(&self, conn: &Connection) -> Result<(), String>;
    /// Every session, with its change marker.
    fn sessions(&self, conn: &Connection) -> rusqlite::Result<Vec<DbSession>>;
    /// The session's own row as JSON (`None`: gone since it was listed).
    fn header(&self, conn: &Connection, session: &DbSession) -> rusqlite::Result<Option<Value>>;
    /// The units of a session updated at or after `since` (all of them for `None`), oldest
    /// first, each handed to `each` as it is read, so a long session is never held whole;
    /// `each` returning `false` ends the read there.
    fn units(
        &self,
        conn: &Connection,
        session: &DbSession,
        since: Option<i64>,
        each: &mut dyn FnMut(DbUnit) -> bool,
    ) -> rusqlite::Result<()>;
    /// The ids of every unit of a session (to notice units the agent deleted).
    fn unit_keys(
        &self,
        conn: &Connection,
        session: &DbSession,
    ) -> rusqlite::Result<BTreeSet<String>>;
    /// A parser for the units of a session of the database at `path`, resumed from its state.
    fn parser(
        &self,
        path: &Path,
        saved: Option<&Value>,
    ) -> Result<Box<dyn UnitParser>, serde_json::Error>;
}

/// Whether `path` is named `file` and, given `folder`, lies in a folder of that name: how
/// every database source recognises its file (by its name for a walk, by its place too where
/// the name alone is not the agent's).
pub fn is_named(path: &Path, file: &str, folder: Option<&str>) -> bool {
    path.file_name().is_some_and(|n| n == file)
        && folder.is_none_or(|f| {
            path.parent()
                .and_then(Path::file_name)
                .is_some_and(|n| n == f)
        })
}

/// The database source of `agent`, if it keeps one.
pub fn source_for(agent: Agent) -> Option<&'static dyn DatabaseSource> {
    match agent {
        Agent::Crush => Some(&super::crush::Crush),
        Agent::Opencode => Some(&super::opencode::OPENCODE),
        Agent::Kilo => Some(&super::opencode::KILO),
        Agent::Cursor => Some(&super::cursor_ide::CursorIde),
        Agent::Kiro => Some(&super::kiro::Kiro),
        Agent::Vscopilot => Some(&super::vscopilot::VsCopilot),
        _ => None,
    }
}

/// Why a database could not be read.
#[derive(Debug)]
pub enum OpenError {
    /// The file is not a SQLite database (its first bytes say so).
    NotSqlite,
    /// A file loaded whole ([`DatabaseSource::loaded`]) longer than the source reads.
    TooLong {
        size: u64,
        limit: u64,
    },
    Io(std::io::Error),
    Sqlite(rusqlite::Error),
}

impl std::fmt::Display for OpenError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            OpenError::NotSqlite => f.write_str("not a SQLite database"),
            OpenError::TooLong { size, limit } => write!(
                f,
                "{size} bytes, longer than the {} MiB this source reads",
                limit >> 20
            ),
            OpenError::Io(e) => write!(f, "{e}"),
            OpenError::Sqlite(e) => write!(f, "{}", describe(e)),
        }
    }
}

/// A SQLite error as a person reads it: a database another process holds says so.
pub fn describe(e: &rusqlite::Error) -> String {
    match e.sqlite_error_code() {
        Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked) => {
            "locked by its agent (a write in progress); read again on the next sync".to_owned()
        }
        Some(rusqlite::ErrorCode::NotADatabase) => "not a SQLite database".to_owned(),
        Some(rusqlite::ErrorCode::DatabaseCorrupt) => "the database file is damaged".to_owned(),
        _ => e.to_string(),
    }
}

/// Open an agent's database for reading without ever writing to it or holding the agent up.
pub fn open_read_only(path: &Path) -> Result<Connection, OpenError> {
    use std::io::Read as _;
    let mut head = [0u8; 16];
    let n = std::fs::File::open(path)
        .and_then(|f| f.take(16).read(&mut head))
        .map_err(OpenError::Io)?;
    if n < 16 || &head != MAGIC {
        return Err(OpenError::NotSqlite);
    }
    let conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(OpenError::Sqlite)?;
    conn.busy_timeout(BUSY_TIMEOUT).map_err(OpenError::Sqlite)?;
    conn.pragma_update(None, "query_only", true)
        .map_err(OpenError::Sqlite)?;
    // Pages are read from a mapping rather than one `pread` each (every page of a session's
    // rows is read twice, by the listing and by the read: ~2 system calls a page otherwise).
    // The locks are the same as without it, and what the agent writes meanwhile goes to its
    // WAL, read as before. (SQLite's documented cost: a file cut short under the map by
    // another program, not by SQLite's own locking writers, would fault the process.)
    conn.pragma_update(None, "mmap_size", MMAP_BYTES)
        .map_err(OpenError::Sqlite)?;
    // Reading the schema is the first touch of the file's pages: a damaged or foreign file
    // fails here rather than halfway through a session.
    conn.query_row("SELECT count(*) FROM sqlite_schema", [], |r| {
        r.get::<_, i64>(0)
    })
    .map_err(OpenError::Sqlite)?;
    Ok(conn)
}

/// The columns of `table` (empty when there is no such table).
pub fn columns(conn: &Connection, table: &str) -> rusqlite::Result<BTreeSet<String>> {
    let mut stmt = conn.prepare_cached("SELECT name FROM pragma_table_info(?1)")?;
    let names = stmt.query_map([table], |r| r.get::<_, String>(0))?;
    names.collect()
}

/// Check that `table` has every column in `needed`; the error names the table and the
/// columns missing.
pub fn require(conn: &Connection, table: &str, needed: &[&str]) -> Result<(), String> {
    let have = columns(conn, table).map_err(|e| describe(&e))?;
    if have.is_empty() {
        return Err(format!("no `{table}` table"));
    }
    let missing: Vec<&str> = needed
        .iter()
        .copied()
        .filter(|c| !have.contains(*c))
        .collect();
    if missing.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "table `{table}` has no column {}",
            missing
                .iter()
                .map(|c| format!("`{c}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ))
    }
}

/// The row of `table` (a name from the source's code, never from the file) whose `id` is `id`,
/// every column as JSON ([`json_of`]): columns a newer agent added come along.
pub fn row_as_json(conn: &Connection, table: &str, id: &str) -> rusqlite::Result<Option<Value>> {
    let table = table.replace('"', "\"\"");
    let mut stmt = conn.prepare_cached(&format!("SELECT * FROM \"{table}\" WHERE id = ?1"))?;
    let names: Vec<String> = stmt.column_names().map(str::to_owned).collect();
    let mut rows = stmt.query([id])?;
    let Some(row) = rows.next()? else {
        return Ok(None);
    };
    let mut obj = serde_json::Map::new();
    for (i, name) in names.iter().enumerate() {
        obj.insert(name.clone(), json_of(row.get_ref(i)?));
    }
    Ok(Some(Value::Object(obj)))
}

/// The text values of the one column `sql` selects for the session id `?1`: the unit ids of
/// sources whose units are rows keyed by a text id (ids stored as another type are not ids).
pub fn text_ids(
    conn: &Connection,
    sql: &str,
    session: &DbSession,
) -> rusqlite::Result<BTreeSet<String>> {
    let mut stmt = conn.prepare_cached(sql)?;
    let ids = stmt.query_map([session.id.as_str()], |r| Ok(json_of(r.get_ref(0)?)))?;
    let mut out = BTreeSet::new();
    for id in ids {
        if let Value::String(s) = id? {
            out.insert(s);
        }
    }
    Ok(out)
}

/// A column's value as JSON, whatever type SQLite holds it as (SQLite does not enforce the
/// declared type): integers and reals as numbers, text as a string (lossy when not UTF-8),
/// a blob as null.
pub fn json_of(v: ValueRef<'_>) -> Value {
    match v {
        ValueRef::Null | ValueRef::Blob(_) => Value::Null,
        ValueRef::Integer(i) => Value::from(i),
        ValueRef::Real(f) => serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number),
        ValueRef::Text(t) => Value::String(String::from_utf8_lossy(t).into_owned()),
    }
}

/// A column holding JSON text, parsed (a byte that is not UTF-8 read as U+FFFD, as in a line),
/// with whether one was (the unit's [`DbUnit::lossy`]); text that is not JSON stays a string
/// (the parser counts it as an unknown shape), anything else is null.
pub fn json_column(v: ValueRef<'_>) -> (Value, bool) {
    let ValueRef::Text(t) = v else {
        return (json_of(v), false);
    };
    crate::archive::json_text::parse_lossy(t).unwrap_or_else(|_| {
        let text = String::from_utf8_lossy(t);
        let lossy = matches!(text, std::borrow::Cow::Owned(_));
        (Value::String(text.into_owned()), lossy)
    })
}

/// A row's JSON text put together beside its value, column by column in the order they are
/// inserted into the value's object, in the form serde_json writes the object: a JSON column's
/// own text is taken when it can be written in that form
/// ([`crate::archive::json_text::serde_form`]), so the largest column of a row is not
/// serialised again.
pub struct RowText(String);

impl RowText {
    pub fn new() -> RowText {
        RowText(String::from("{"))
    }

    fn key(&mut self, name: &str) {
        if self.0.len() > 1 {
            self.0.push(',');
        }
        push_serialised(&mut self.0, name);
        self.0.push(':');
    }

    /// A column whose value is `v`.
    pub fn value(&mut self, name: &str, v: &Value) {
        self.key(name);
        push_serialised(&mut self.0, v);
    }

    /// A JSON column read as `raw`, whose value is `v` ([`json_column`] of it).
    pub fn json(&mut self, name: &str, raw: ValueRef<'_>, v: &Value) {
        let own = match (raw, v) {
            // A column that did not parse is a string in the value.
            (_, Value::String(_)) => None,
            (ValueRef::Text(t), _) => std::str::from_utf8(t)
                .ok()
                .and_then(|raw| crate::archive::json_text::serde_form(raw, v)),
            _ => None,
        };
        match own {
            Some(text) => {
                self.key(name);
                self.0.push_str(&text);
            }
            None => self.value(name, v),
        }
    }

    /// The row's text.
    pub fn finish(mut self) -> String {
        self.0.push('}');
        self.0
    }
}

impl Default for RowText {
    fn default() -> RowText {
        RowText::new()
    }
}

fn push_serialised<T: serde::Serialize + ?Sized>(out: &mut String, v: &T) {
    // Writing a string or a value into a String cannot fail.
    if let Ok(text) = serde_json::to_string(v) {
        out.push_str(&text);
    }
}

/// An integer column read leniently: an integer, a real cut to an integer, text holding an
/// integer; anything else is 0.
pub fn int_of(v: ValueRef<'_>) -> i64 {
    match v {
        ValueRef::Integer(i) => i,
        ValueRef::Real(f) if f.is_finite() => f as i64,
        ValueRef::Text(t) => std::str::from_utf8(t)
            .ok()
            .and_then(|s| s.trim().parse().ok())
            .unwrap_or(0),
        _ => 0,
    }
}

/// A time the agent stored as a number since the epoch, in seconds or milliseconds (Crush's
/// schema says milliseconds, its triggers write seconds), as Cairn stores times. A number too
/// small or too large to be a time of this era is unknown.
pub fn epoch_time(n: i64) -> Option<String> {
    let ts = if n >= 100_000_000_000 {
        jiff::Timestamp::from_millisecond(n).ok()?
    } else {
        jiff::Timestamp::from_second(n).ok()?
    };
    of_this_era(ts)
}

/// A time as Cairn stores it, when it falls in this era: one before 2001 or after 2100 is not a
/// time an agent wrote.
pub fn of_this_era(ts: jiff::Timestamp) -> Option<String> {
    (978_307_200..4_102_444_800)
        .contains(&ts.as_second())
        .then(|| ts.to_string())
}

/// An epoch number in seconds, whether the agent wrote seconds or milliseconds.
pub fn epoch_seconds(n: i64) -> i64 {
    if n >= 100_000_000_000 { n / 1000 } else { n }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_database_is_named_and_placed() {
        let p = Path::new("/p/.crush/crush.db");
        assert!(is_named(p, "crush.db", None));
        assert!(is_named(p, "crush.db", Some(".crush")));
        assert!(!is_named(p, "crush.db", Some("kiro-cli")));
        assert!(!is_named(
            Path::new("/p/crush.db"),
            "crush.db",
            Some(".crush")
        ));
        assert!(!is_named(Path::new("crush.db"), "crush.db", Some(".crush")));
        assert!(!is_named(Path::new("/"), "crush.db", None));
    }

    #[test]
    fn epoch_times_in_seconds_or_milliseconds() {
        assert_eq!(
            epoch_time(1_754_331_191).as_deref(),
            Some("2025-08-04T18:13:11Z")
        );
        assert_eq!(
            epoch_time(1_754_331_191_500).as_deref(),
            Some("2025-08-04T18:13:11.5Z")
        );
        assert_eq!(epoch_time(0), None);
        assert_eq!(epoch_time(-5), None);
        assert_eq!(epoch_time(i64::MAX), None);
        assert_eq!(epoch_seconds(1_754_331_191_500), 1_754_331_191);
    }

    #[test]
    fn a_file_that_is_not_sqlite_is_named_so() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("crush.db");
        std::fs::write(&p, "{\"not\": \"a database\"}").unwrap();
        assert!(matches!(open_read_only(&p), Err(OpenError::NotSqlite)));
        std::fs::write(&p, "").unwrap();
        assert!(matches!(open_read_only(&p), Err(OpenError::NotSqlite)));
        // The magic and then garbage: SQLite itself refuses it.
        let mut bytes = MAGIC.to_vec();
        bytes.extend(std::iter::repeat_n(0xAB, 4096));
        std::fs::write(&p, bytes).unwrap();
        assert!(open_read_only(&p).is_err());
    }

    #[test]
    fn columns_of_any_type_read_leniently() {
        assert_eq!(int_of(ValueRef::Text(b" 42 ")), 42);
        assert_eq!(int_of(ValueRef::Real(3.9)), 3);
        assert_eq!(int_of(ValueRef::Blob(b"x")), 0);
        assert_eq!(
            json_column(ValueRef::Text(b"[1]")),
            (serde_json::json!([1]), false)
        );
        assert_eq!(
            json_column(ValueRef::Text(b"[1")),
            (Value::String("[1".into()), false)
        );
        assert_eq!(
            json_column(ValueRef::Text(b"{\"t\": \"caf\xe9\"}")),
            (serde_json::json!({"t": "caf\u{fffd}"}), true)
        );
        assert_eq!(
            json_column(ValueRef::Text(b"[1, \xff")),
            (Value::String("[1, \u{fffd}".into()), true)
        );
        assert_eq!(json_column(ValueRef::Blob(b"[1]")), (Value::Null, false));
        assert_eq!(json_of(ValueRef::Blob(b"x")), Value::Null);
    }
}

//! The store floor: the one SQLite database of a data dir. It owns the connection and its real
//! path, the settings every connection gets (WAL, foreign keys, a busy timeout), how migrations
//! run, and how a SQLite error names the database.
//!
//! Schema changes only ever happen through migrations: numbered SQL files kept beside the room
//! whose tables they change (`archive/migrations/`, `git/migrations/`, …), gathered in one
//! ordered list ([`crate::schema`]) and applied in order inside a transaction each;
//! `PRAGMA user_version` records how far a database has come. A database from a newer Cairn is
//! refused rather than guessed at.
//!
//! Each room keeps the SQL of its own tables in its own `store.rs`; this floor holds none.
//!
//! A connection stays on the file it opened, whatever later takes its name: a rebuild
//! (`cairn reindex --from-copies`) renames a new database over `cairn.db`, and a process that
//! had the old one open would go on writing into the file moved aside. So a store knows which
//! file it opened ([`Opened`]), every write transaction checks that the name still leads to it
//! before it commits (a commit hook: one `stat` per commit, refused as [`Error::Rebuilt`]), and
//! a long-lived process opens the new file in its place ([`Store::reopened`]).

use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::{Connection, OpenFlags};

use crate::error::{Error, Result};

/// How long a statement waits for another writer's lock before it fails: writers queue.
const BUSY_TIMEOUT: Duration = Duration::from_secs(30);

pub(crate) mod rank;

/// One schema step: SQL, then, for the few that need it, Rust code in the same transaction
/// (given the data dir, for steps that must read the retained copies).
pub(crate) struct Migration {
    pub sql: &'static str,
    pub then: Option<fn(&rusqlite::Transaction<'_>, &Path) -> Result<()>>,
}

/// A migration that is SQL only.
pub(crate) const fn sql(sql: &'static str) -> Migration {
    Migration { sql, then: None }
}

/// Every migration in order (the index + 1 is the schema version each produces), and what runs
/// after them on every writable open (given the connection and the data dir).
pub(crate) struct Schema {
    pub steps: &'static [Migration],
    pub after_open: fn(&mut Connection, &Path) -> Result<()>,
}

impl Schema {
    /// The schema version these migrations produce.
    pub const fn version(&self) -> i64 {
        self.steps.len() as i64
    }
}

/// File name of the database inside the data dir.
pub const DB_FILE: &str = "cairn.db";

/// An open database connection with Cairn's settings applied.
pub struct Store {
    conn: Connection,
    path: PathBuf,
    opened: Opened,
}

/// A file's identity on its file system: device and inode.
type FileId = (u64, u64);

/// The file `path` names now (`None` when nothing is there, or where the platform gives no
/// such number: on Windows SQLite opens the database without letting it be renamed, so a
/// swap cannot happen under an open connection there).
#[cfg(unix)]
fn file_id(path: &Path) -> Option<FileId> {
    use std::os::unix::fs::MetadataExt as _;
    std::fs::metadata(path).ok().map(|m| (m.dev(), m.ino()))
}

#[cfg(not(unix))]
fn file_id(_path: &Path) -> Option<FileId> {
    None
}

/// Which file a connection opened, to tell when its name leads elsewhere: the database was
/// rebuilt and swapped in by another process ([`crate::store::finish_swap`]).
#[derive(Debug, Clone)]
pub(crate) struct Opened {
    path: PathBuf,
    /// `None` for a database in memory, and where files have no identity to compare.
    id: Option<FileId>,
}

impl Opened {
    /// True when `path` no longer names the file opened (another is in its place, or none).
    pub(crate) fn moved(&self) -> bool {
        self.id.is_some() && file_id(&self.path) != self.id
    }

    /// [`Error::Rebuilt`] when the file opened is no longer the archive's: what it was about to
    /// do must not be done there. Sound only while the rebuild cannot swap meanwhile: under the
    /// capture lock, which a rebuild holds across its swap.
    pub(crate) fn still_current(&self) -> Result<()> {
        if self.moved() {
            return Err(Error::Rebuilt {
                dir: self.path.parent().unwrap_or(&self.path).to_owned(),
            });
        }
        Ok(())
    }
}

/// Open `path` with `open`, knowing which file the connection has: SQLite opens the file
/// itself, so the name is looked at before and after, and an open a swap came between is
/// made again. After three such (a swap is rare, and never three in a row), the connection is
/// kept without an identity and nothing is refused for it, as before this check existed.
fn open_known(
    path: &Path,
    open: impl Fn() -> rusqlite::Result<Connection>,
) -> Result<(Connection, Opened)> {
    let mut tries = 0;
    loop {
        let before = file_id(path);
        let conn = open().map_err(|e| db_err(path, e))?;
        let after = file_id(path);
        tries += 1;
        if before == after || tries == 3 {
            let id = if before == after { after } else { None };
            let opened = Opened {
                path: path.to_owned(),
                id,
            };
            return Ok((conn, opened));
        }
    }
}

impl Store {
    /// Open (creating and migrating if needed) the database at `path` to `schema`.
    ///
    /// A new database file is created 0600 before SQLite opens it: SQLite creates the `-wal` and
    /// `-shm` files with the database file's mode, so they are private too, whatever the umask.
    pub(crate) fn open_with(path: &Path, schema: &Schema) -> Result<Store> {
        // A rebuild stopped while it put a new database in place finishes first.
        if path.file_name().is_some_and(|n| n == DB_FILE)
            && let Some(dir) = path.parent()
        {
            finish_swap(dir).map_err(|e| Error::write_in(dir, &dir.join(SWAP_MARK), e))?;
        }
        // Only a missing file is created here, never an existing one opened: POSIX record locks
        // belong to the process, and closing any descriptor of the file drops all of them, so
        // the process's other connections would lose theirs. Another process closing next would
        // take itself for the last connection and delete the WAL those connections still write to.
        match crate::private::open_options()
            .write(true)
            .create_new(true)
            .open(path)
        {
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(Error::write_in(path.parent().unwrap_or(path), path, e)),
        }
        let (mut conn, opened) = open_known(path, || Connection::open(path))?;
        // Every commit, the migrations' too, refuses to land in a file moved aside.
        let check = opened.clone();
        conn.commit_hook(Some(move || check.moved()))
            .map_err(|e| db_err(path, e))?;
        let mut store = Store {
            conn,
            path: path.to_owned(),
            opened,
        };
        store.configure(false)?;
        store.conn.set_prepared_statement_cache_capacity(64);
        store.migrate(schema)?;
        let data_dir = store.data_dir();
        (schema.after_open)(&mut store.conn, &data_dir)?;
        Ok(store)
    }

    /// True for a database kept in memory ([`Store::empty_in_memory`]).
    pub(crate) fn in_memory(&self) -> bool {
        self.conn.path().is_none_or(str::is_empty)
    }

    /// An empty database to `schema`, in memory, named as if it were `path`: what a command
    /// that must not create an archive (`doctor` on a data dir that holds none) reads instead.
    /// Nothing on disk is touched; what `after_open` would finish there is left alone.
    pub(crate) fn empty_in_memory(path: &Path, schema: &Schema) -> Result<Store> {
        let conn = Connection::open_in_memory().map_err(|e| db_err(path, e))?;
        let mut store = Store {
            conn,
            path: path.to_owned(),
            opened: Opened {
                path: path.to_owned(),
                id: None,
            },
        };
        store.configure(false)?;
        store.migrate(schema)?;
        Ok(store)
    }

    /// Open an existing database without ever writing to it (a read-only data dir, say); one
    /// newer than `known` is refused.
    ///
    /// A WAL database cleanly closed has no `-shm` file, and a read-only connection cannot
    /// create one in a read-only directory: the first read then fails. In that case the file is
    /// opened as immutable instead (nothing can write to that directory, and a clean close has
    /// checkpointed the WAL into the main file, so nothing is missed).
    ///
    /// It waits at most `busy` for a lock, then fails (a hook must not hold up its agent).
    pub(crate) fn open_read_only_known(path: &Path, known: i64, busy: Duration) -> Result<Store> {
        match Store::open_read_only_with(path, known, false, busy) {
            Ok(store) => Ok(store),
            Err(first) => Store::open_read_only_with(path, known, true, busy).map_err(|_| first),
        }
    }

    fn open_read_only_with(
        path: &Path,
        known: i64,
        immutable: bool,
        busy: Duration,
    ) -> Result<Store> {
        let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let (conn, opened) = open_known(path, || {
            if immutable {
                Connection::open_with_flags(immutable_uri(path), flags | OpenFlags::SQLITE_OPEN_URI)
            } else {
                Connection::open_with_flags(path, flags)
            }
        })?;
        let store = Store {
            conn,
            path: path.to_owned(),
            opened,
        };
        store.configure(true)?;
        store.conn.busy_timeout(busy).map_err(|e| store.err(e))?;
        let version = store.schema_version()?;
        if version > known {
            return Err(Error::SchemaTooNew {
                path: path.to_owned(),
                found: version,
                known,
            });
        }
        Ok(store)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Which file this connection opened ([`Opened::still_current`] checks it is still the
    /// archive's), for code that holds it while the store is borrowed elsewhere.
    pub(crate) fn opened(&self) -> Opened {
        self.opened.clone()
    }

    /// True when this connection's file is no longer the one its path names: the database was
    /// rebuilt and swapped in by another process. Reads here see the old archive, and every
    /// commit is refused ([`Error::Rebuilt`]); [`Store::reopened`] opens the new one.
    pub(crate) fn moved(&self) -> bool {
        self.opened.moved()
    }

    /// [`Opened::still_current`] for this connection.
    pub(crate) fn still_current(&self) -> Result<()> {
        self.opened.still_current()
    }

    /// A connection to the file the path names now, opened as this one was (writable, or
    /// read-only) and set as this one is (`query_only`, the memory map, the page cache, the
    /// busy timeout): what a long-lived process (the desktop app, `cairn mcp`) puts in place of a
    /// connection left on a database a rebuild moved aside.
    pub(crate) fn reopened(&self) -> Result<Store> {
        let setting = |name: &str| -> Result<i64> {
            self.conn
                .query_row(&format!("PRAGMA {name}"), [], |r| r.get(0))
                .map_err(|e| self.err(e))
        };
        let query_only = setting("query_only")?;
        let mmap = setting("mmap_size")?;
        let cache = setting("cache_size")?;
        let busy = setting("busy_timeout")?;
        let read_only = self
            .conn
            .is_readonly(rusqlite::MAIN_DB)
            .map_err(|e| self.err(e))?;
        let fresh = if read_only {
            Store::open_read_only_waiting(&self.path, Duration::from_millis(busy.max(0) as u64))?
        } else {
            Store::open(&self.path)?
        };
        fresh
            .conn
            .execute_batch(&format!(
                "PRAGMA query_only = {query_only}; PRAGMA mmap_size = {mmap};
                 PRAGMA cache_size = {cache}; PRAGMA busy_timeout = {busy};"
            ))
            .map_err(|e| fresh.err(e))?;
        Ok(fresh)
    }

    /// The data dir holding the database.
    fn data_dir(&self) -> PathBuf {
        self.path.parent().unwrap_or(Path::new("")).to_owned()
    }

    /// The raw connection: the rooms' own SQL only. Front doors never see it; the crate's
    /// integration tests and benchmarks reach it through the `internals` feature.
    #[cfg(feature = "internals")]
    pub fn conn(&self) -> &Connection {
        &self.conn
    }

    #[cfg(not(feature = "internals"))]
    pub(crate) fn conn(&self) -> &Connection {
        &self.conn
    }

    /// [`Store::conn`], to write.
    #[cfg(feature = "internals")]
    pub fn conn_mut(&mut self) -> &mut Connection {
        &mut self.conn
    }

    #[cfg(not(feature = "internals"))]
    pub(crate) fn conn_mut(&mut self) -> &mut Connection {
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

    /// Run `f` on this connection waiting at most `wait` for another writer's lock (a write
    /// that may be skipped, such as a ledger line, need not queue behind a long sync).
    pub fn waiting_at_most<T>(&self, wait: Duration, f: impl FnOnce(&Connection) -> T) -> T {
        let _ = self.conn.busy_timeout(wait);
        let out = f(&self.conn);
        let _ = self.conn.busy_timeout(BUSY_TIMEOUT);
        out
    }

    fn configure(&self, read_only: bool) -> Result<()> {
        rank::register(&self.conn).map_err(|e| self.err(e))?;
        // A busy timeout instead of "database is locked": writers queue behind each other.
        self.conn
            .busy_timeout(BUSY_TIMEOUT)
            .map_err(|e| self.err(e))?;
        let pragmas = if read_only {
            "PRAGMA foreign_keys = ON; PRAGMA query_only = ON;"
        } else {
            // WAL + synchronous=NORMAL: a committed transaction survives a process crash; a power
            // loss can only lose the last transactions, never corrupt the file. The WAL grows to
            // about 32 MiB between checkpoints (fewer, larger ones for a bulk sync); once one
            // resets it, it is cut back to 8 MiB, not kept at its largest while the app or an
            // MCP server stays open (it filled a small disk Cairn's own archive was on).
            "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON;
             PRAGMA temp_store = MEMORY; PRAGMA cache_size = -32768;
             PRAGMA wal_autocheckpoint = 8192; PRAGMA journal_size_limit = 8388608;
             PRAGMA mmap_size = 268435456;"
        };
        self.conn.execute_batch(pragmas).map_err(|e| self.err(e))
    }

    fn migrate(&mut self, schema: &Schema) -> Result<()> {
        let current = self.schema_version()?;
        if current > schema.version() {
            return Err(Error::SchemaTooNew {
                path: self.path.clone(),
                found: current,
                known: schema.version(),
            });
        }
        let data_dir = self.data_dir();
        for (index, step) in schema.steps.iter().enumerate().skip(current as usize) {
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
}

/// Beside `cairn.db` while a rebuilt database takes its place (`cairn reindex --from-copies`):
/// from then on the old database, its `-wal` and `-shm` have their names aside too.
pub(crate) const SWAP_MARK: &str = "cairn.db.swap";
/// The rebuilt database, whole, waiting to take `cairn.db`'s place.
pub(crate) const REBUILT: &str = "cairn.db.rebuilt";

/// Put a whole rebuilt database ([`REBUILT`]) in `cairn.db`'s place in `dir`, the old one's
/// names already given aside ([`SWAP_MARK`] says so). Two names cannot change at once: the
/// old `-wal` must go before the new database takes the name (SQLite would read it into the new
/// one), and a stop between the two leaves the mark, so whoever opens the archive next finishes
/// the swap here. Without the mark, nothing is done.
pub(crate) fn finish_swap(dir: &Path) -> std::io::Result<()> {
    let mark = dir.join(SWAP_MARK);
    if !mark.exists() {
        return Ok(());
    }
    let rebuilt = dir.join(REBUILT);
    if rebuilt.exists() {
        for side in ["-wal", "-shm"] {
            match std::fs::remove_file(dir.join(format!("{DB_FILE}{side}"))) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
                _ => {}
            }
        }
        std::fs::rename(&rebuilt, dir.join(DB_FILE))?;
        sync_dir(dir);
    }
    std::fs::remove_file(&mark)
}

/// Make the renames in `dir` survive a power cut, where the file system can (some network
/// file systems cannot sync a directory, and have done what they can).
pub(crate) fn sync_dir(dir: &Path) {
    if let Ok(d) = std::fs::File::open(dir) {
        let _ = d.sync_all();
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
/// [`Error::DiskFull`] naming the data dir. A statement SQLite would not prepare keeps its
/// message and code, not its text: rusqlite's message quotes the whole statement (kilobytes of
/// SQL for a long search), which tells a person nothing.
pub(crate) fn db_err(path: &Path, source: rusqlite::Error) -> Error {
    let source = match source {
        rusqlite::Error::SqlInputError { error, msg, .. } => {
            rusqlite::Error::SqliteFailure(error, Some(msg))
        }
        other => other,
    };
    if let rusqlite::Error::SqliteFailure(failure, _) = &source
        && failure.extended_code == rusqlite::ffi::SQLITE_CONSTRAINT_COMMITHOOK
    {
        // The only commit hook is the one that refuses a file moved aside ([`Opened`]).
        return Error::Rebuilt {
            dir: path.parent().unwrap_or(path).to_owned(),
        };
    }
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

/// The database file `conn` has open, for code that holds a connection rather than the
/// [`Store`] (SQLite's own name, `:memory:`, for a database in memory).
pub(crate) fn path_of(conn: &Connection) -> PathBuf {
    PathBuf::from(conn.path().filter(|p| !p.is_empty()).unwrap_or(":memory:"))
}

/// [`db_err`] naming the database at `path` (from [`path_of`]), as a function to `map_err` with:
/// for code that needs the connection mutably while it maps errors.
pub(crate) fn err_at(path: &Path) -> impl Fn(rusqlite::Error) -> Error + Copy + '_ {
    move |e| db_err(path, e)
}

/// [`db_err`] naming the database `conn` has open, as a function to `map_err` with.
pub(crate) fn err_in(conn: &Connection) -> impl Fn(rusqlite::Error) -> Error + Copy + '_ {
    move |e| db_err(&path_of(conn), e)
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

    /// The WAL a checkpoint reset is cut back to `journal_size_limit`: it stayed at its largest
    /// (32 MiB and more) while a connection stayed open.
    #[test]
    fn a_reset_wal_is_cut_back() {
        fn nothing(_: &mut Connection, _: &Path) -> Result<()> {
            Ok(())
        }
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(DB_FILE);
        let schema = Schema {
            steps: &[],
            after_open: nothing,
        };
        let store = Store::open_with(&path, &schema).unwrap();
        let conn = store.conn();
        conn.execute_batch("CREATE TABLE filler (x BLOB)").unwrap();
        let wal = dir.path().join(format!("{DB_FILE}-wal"));
        // 48 MiB in 1 MiB commits: past the 8,192-page autocheckpoint, which resets the WAL.
        let sizes: Vec<u64> = (0..48)
            .map(|_| {
                conn.execute("INSERT INTO filler (x) VALUES (randomblob(1048576))", [])
                    .unwrap();
                std::fs::metadata(&wal).unwrap().len()
            })
            .collect();
        let peak = (0..sizes.len()).max_by_key(|&i| sizes[i]).unwrap();
        assert!(sizes[peak] > 30 << 20, "the WAL grew to {sizes:?} only");
        let after = sizes[peak..].iter().min().unwrap();
        assert!(*after <= 10 << 20, "the WAL was never cut back: {sizes:?}");
    }

    /// A new database renamed over the one a connection has open, as a rebuild's swap does: the
    /// connection sees it moved, its commits are refused as [`Error::Rebuilt`] (the old file
    /// unchanged), and [`Store::reopened`] opens the new one, set as the old connection was.
    #[test]
    fn a_commit_into_a_database_moved_aside_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(DB_FILE);
        let old = Store::open(&path).unwrap();
        old.conn()
            .execute_batch("CREATE TABLE t (x INTEGER); INSERT INTO t VALUES (1);")
            .unwrap();
        old.conn()
            .execute_batch(
                "PRAGMA query_only = ON; PRAGMA mmap_size = 0; PRAGMA cache_size = -1024;",
            )
            .unwrap();
        // What a rebuild does: the new database whole as `cairn.db.rebuilt`, the old one's
        // names aside, the mark, then the swap.
        let rebuilt = dir.path().join(REBUILT);
        Store::open(&rebuilt)
            .unwrap()
            .conn()
            .execute_batch("CREATE TABLE t (x INTEGER); PRAGMA wal_checkpoint(TRUNCATE);")
            .unwrap();
        for side in ["", "-wal", "-shm"] {
            std::fs::hard_link(
                dir.path().join(format!("{DB_FILE}{side}")),
                dir.path().join(format!("aside{side}")),
            )
            .unwrap();
        }
        assert!(!old.moved());
        std::fs::write(dir.path().join(SWAP_MARK), "aside").unwrap();
        finish_swap(dir.path()).unwrap();
        assert!(old.moved());

        old.conn()
            .execute_batch("PRAGMA query_only = OFF;")
            .unwrap();
        let e = old
            .conn()
            .execute("INSERT INTO t VALUES (2)", [])
            .unwrap_err();
        let e = db_err(&path, e);
        assert!(matches!(e, Error::Rebuilt { .. }), "{e:?}");
        assert!(old.still_current().is_err());
        old.conn().execute_batch("PRAGMA query_only = ON;").unwrap();
        let rows = |conn: &Connection| -> i64 {
            conn.query_row("SELECT COUNT(*) FROM t", [], |r| r.get(0))
                .unwrap()
        };
        assert_eq!(rows(old.conn()), 1);

        let fresh = old.reopened().unwrap();
        assert!(!fresh.moved());
        assert_eq!(rows(fresh.conn()), 0);
        let setting = |name: &str| -> i64 {
            fresh
                .conn()
                .query_row(&format!("PRAGMA {name}"), [], |r| r.get(0))
                .unwrap()
        };
        assert_eq!(
            (
                setting("query_only"),
                setting("mmap_size"),
                setting("cache_size")
            ),
            (1, 0, -1024)
        );
    }

    /// An error from a bare connection names the database file it has open, never a made-up
    /// name.
    #[test]
    fn a_connections_error_names_its_database_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(DB_FILE);
        let conn = Connection::open(&path).unwrap();
        let e = conn.execute("SELECT * FROM nowhere", []).unwrap_err();
        match err_in(&conn)(e) {
            Error::Db { path: named, .. } => {
                assert_eq!(named.canonicalize().unwrap(), path.canonicalize().unwrap())
            }
            other => panic!("{other:?}"),
        }
        let memory = Connection::open_in_memory().unwrap();
        let e = memory.execute("SELECT * FROM nowhere", []).unwrap_err();
        let named = err_in(&memory)(e).to_string();
        assert!(named.starts_with("database :memory:"), "{named}");
    }
}

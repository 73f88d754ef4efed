//! Typed errors of the library. Each variant carries the path, key or line that failed and
//! its Display says what to do next.

use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("cannot read {path}: {source}")]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot write {path}: {source}")]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A write into the data dir found no room: the disk is full, a quota is used up, or a file
    /// reached the process's file-size limit. Cairn's writes are transactions (SQLite) or
    /// appends cut back to their committed length, so what was stored before is intact.
    #[error(
        "cannot write to the data dir {}: {why} (writing {}). {}, then run the command again \
         (or move the data dir elsewhere: CAIRN_DATA_DIR or --data-dir); nothing stored before \
         this was lost",
        dir.display(),
        file.display(),
        why.fix()
    )]
    DiskFull {
        dir: PathBuf,
        file: PathBuf,
        why: NoRoom,
    },
    #[error("database {path}: {source}")]
    Db {
        path: PathBuf,
        #[source]
        source: rusqlite::Error,
    },
    #[error(
        "database {path} was written by a newer Cairn (schema {found}, this build knows {known}); upgrade Cairn"
    )]
    SchemaTooNew {
        path: PathBuf,
        found: i64,
        known: i64,
    },
    #[error("config {path}: {message}")]
    Config { path: PathBuf, message: String },
    #[error("{}: {message}", dir.display())]
    Git { dir: PathBuf, message: String },
    #[error(
        "the embedding model (all-MiniLM-L6-v2) is not installed; looked in: {}. Fetch it with \
         `scripts/fetch-model.sh` (or `make app`) in a source checkout, or point CAIRN_MODEL_DIR at a \
         folder holding config.json, tokenizer.json and model.safetensors. Lexical search \
         (--mode lexical) works without it",
        looked.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", ")
    )]
    ModelMissing { looked: Vec<PathBuf> },
    #[error(
        "embedding model {path}: {message}; run `scripts/fetch-model.sh` to restore the model files"
    )]
    Model { path: PathBuf, message: String },
    /// The `[embeddings]` endpoint failed or is misconfigured; `endpoint` is the base URL
    /// without credentials.
    #[error("embeddings endpoint {endpoint}: {message}")]
    Endpoint { endpoint: String, message: String },
    #[error("semantic search unavailable: {reason}. Refresh with `{fix}`, or use --mode lexical")]
    VectorsStale {
        store: String,
        reason: String,
        fix: String,
    },
    /// A report generator (an agent CLI or an endpoint) failed; `what` names it.
    #[error("{what}: {message}")]
    Generator { what: String, message: String },
    /// The team archive (PostgreSQL) failed. `server` is its address without credentials
    /// (`team::Server::display`) and `message` went through `team::Server::scrub`.
    #[error("team archive {server}: {message}")]
    Team {
        server: String,
        message: String,
        kind: ErrorKind,
        hint: Option<String>,
        /// The SQL that clears the refusal, whole, to copy (the hint says who runs it): a
        /// front door shows it as data, never by reading the hint's wording.
        sql: Option<String>,
    },
    /// Input the user can fix (a flag, a field, a name): the message says how.
    #[error("{0}")]
    Invalid(String),
    /// The archive's state forbids the action (an entry already reviewed, a generation
    /// already active); the message says what would allow it.
    #[error("{0}")]
    Conflict(String),
    #[error("not found: {0}")]
    NotFound(String),
    /// A write was asked of an archive opened read-only.
    /// Said for every change (a capture, a review, a link, a forget), not only a capture's.
    #[error("{} is read-only: Cairn can read the archive there but not change it", dir.display())]
    ReadOnly { dir: PathBuf },
    /// Another process holds a lock this action needs (`what` runs there).
    #[error("{what} is running on {} (it holds {})", dir.display(), path.display())]
    Locked {
        what: String,
        dir: PathBuf,
        path: PathBuf,
    },
    /// The archive's database was rebuilt (`cairn reindex --from-copies`) by another process
    /// while this one had it open: the file this one holds is the old one, moved aside, and
    /// what it was about to write was not written there (nor anywhere).
    #[error(
        "the archive in {} was rebuilt by another process (cairn reindex --from-copies) while this one had it open; this change was not stored",
        dir.display()
    )]
    Rebuilt { dir: PathBuf },
    /// A file Cairn wrote does not read back as it should.
    #[error("{}: {what}", path.display())]
    Corrupt { path: PathBuf, what: String },
    /// Something outside Cairn failed or answered out of contract (an embedder, a thread).
    #[error("{0}")]
    External(String),
    /// The outbound scan still finds a secret: nothing left the machine.
    #[error("{0}")]
    Refused(String),
    /// Neither `$HOME` nor the platform knows the home directory.
    #[error("cannot find the home directory")]
    NoHome,
    /// `cairn hook` was given a transcript path Cairn does not read (see
    /// [`crate::hooks::accept_transcript`]); nothing was read or stored.
    #[error("not capturing {}: {reason}", path.display())]
    HookRefused { path: PathBuf, reason: String },
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

/// What went wrong, as a front door tells it apart: the desktop picks how to show an error by
/// it, a script by its JSON name. A closed set; the serialised names are stable.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub enum ErrorKind {
    /// No such session, turn, entry, report or file.
    NotFound,
    /// Input the user can correct.
    Invalid,
    /// The archive's state forbids the action.
    Conflict,
    /// The archive was opened read-only.
    ReadOnly,
    /// Another process holds a lock the action needs.
    Locked,
    /// The database is busy with another writer.
    Busy,
    /// No room left to write.
    NoRoom,
    /// Reading or writing a file failed.
    Io,
    /// Stored data does not read back.
    Corrupt,
    /// The archive was written by a newer Cairn.
    TooNew,
    /// `config.toml` or the environment needs a change.
    Config,
    /// A feature's prerequisite is missing (the embedding model, fresh vectors).
    Unavailable,
    /// A program or server outside Cairn failed (git, an endpoint, an agent CLI).
    External,
    /// Cairn refused on purpose (a transcript path out of bounds, a secret still present).
    Refused,
    /// A bug in Cairn (a panic on a worker thread).
    Internal,
}

impl Error {
    /// The kind of this error.
    pub fn kind(&self) -> ErrorKind {
        match self {
            Error::Read { source, .. } | Error::Write { source, .. } => io_kind(source),
            Error::DiskFull { .. } => ErrorKind::NoRoom,
            Error::Db { source, .. } => db_kind(source),
            Error::SchemaTooNew { .. } => ErrorKind::TooNew,
            Error::Config { .. } | Error::NoHome => ErrorKind::Config,
            Error::Git { .. }
            | Error::Endpoint { .. }
            | Error::Generator { .. }
            | Error::External(_) => ErrorKind::External,
            Error::ModelMissing { .. } | Error::Model { .. } | Error::VectorsStale { .. } => {
                ErrorKind::Unavailable
            }
            Error::Invalid(_) => ErrorKind::Invalid,
            Error::Conflict(_) => ErrorKind::Conflict,
            Error::NotFound(_) => ErrorKind::NotFound,
            Error::ReadOnly { .. } => ErrorKind::ReadOnly,
            Error::Locked { .. } => ErrorKind::Locked,
            Error::Rebuilt { .. } => ErrorKind::Conflict,
            Error::Corrupt { .. } => ErrorKind::Corrupt,
            Error::HookRefused { .. } | Error::Refused(_) => ErrorKind::Refused,
            Error::Team { kind, .. } => *kind,
        }
    }

    /// What to do about it, when the message does not already say: one sentence a front door
    /// shows below the message (`hint: …` on the CLI's stderr, under the error in the window).
    pub fn hint(&self) -> Option<String> {
        match self {
            Error::ReadOnly { .. } => {
                Some("pass --data-dir or set CAIRN_DATA_DIR to a directory you can write".into())
            }
            Error::Locked { .. } => Some("wait for it to finish, then try again".into()),
            Error::Rebuilt { .. } => {
                Some("run the command again: it opens the rebuilt archive".into())
            }
            Error::NoHome => Some("set HOME to your home directory".into()),
            Error::Read { path, source } | Error::Write { path, source }
                if source.kind() == std::io::ErrorKind::PermissionDenied =>
            {
                Some(format!(
                    "check that your user may read and write {}",
                    path.display()
                ))
            }
            // A full disk and a read-only mount both stop a write; their fixes differ.
            Error::Read { source, .. } | Error::Write { source, .. }
                if NoRoom::of_io(source).is_some() =>
            {
                NoRoom::of_io(source)
                    .map(|why| format!("{why} (disk full): {}, then try again", why.fix()))
            }
            Error::Read { path, source } | Error::Write { path, source }
                if source.kind() == std::io::ErrorKind::ReadOnlyFilesystem =>
            {
                Some(format!(
                    "the file system holding {} is mounted read-only (it is not full): remount it writable, then try again",
                    path.display()
                ))
            }
            Error::Db { path, source } => match db_kind(source) {
                ErrorKind::Busy => {
                    Some("another Cairn is writing to the archive; try again in a moment".into())
                }
                // No check can open it: say the way back, not `cairn doctor`.
                ErrorKind::Corrupt
                    if source.sqlite_error_code() == Some(rusqlite::ErrorCode::NotADatabase) =>
                {
                    Some(format!(
                        "{} is no SQLite database: run `cairn reindex --from-copies` to rebuild the archive from the retained copies (it moves the file and its -wal and -shm aside), then `cairn sync` for what the transcripts gained since. What only the database held (Recall's entries and your reviews, forget tombstones, your links) a rebuild carries over where SQLite still reads the old file; it cannot read this one, so they stay behind in the file moved aside",
                        path.display()
                    ))
                }
                ErrorKind::Corrupt => Some(format!(
                    "run `cairn doctor` to see what is damaged in {}",
                    path.display()
                )),
                ErrorKind::ReadOnly => Some(format!(
                    "make {} and its folder writable for your user (chmod u+w), or use another data dir (--data-dir, CAIRN_DATA_DIR)",
                    path.display()
                )),
                _ => None,
            },
            Error::Corrupt { .. } => {
                Some("run `cairn doctor` to check the archive and its files".into())
            }
            Error::Team { hint, .. } => hint.clone(),
            _ => None,
        }
    }
}

fn io_kind(e: &std::io::Error) -> ErrorKind {
    match e.kind() {
        std::io::ErrorKind::NotFound => ErrorKind::NotFound,
        std::io::ErrorKind::ReadOnlyFilesystem => ErrorKind::ReadOnly,
        _ if NoRoom::of_io(e).is_some() => ErrorKind::NoRoom,
        _ => ErrorKind::Io,
    }
}

fn db_kind(e: &rusqlite::Error) -> ErrorKind {
    use rusqlite::ErrorCode;
    match e.sqlite_error_code() {
        Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked) => ErrorKind::Busy,
        Some(ErrorCode::DatabaseCorrupt | ErrorCode::NotADatabase) => ErrorKind::Corrupt,
        Some(ErrorCode::DiskFull) => ErrorKind::NoRoom,
        Some(ErrorCode::ReadOnly) => ErrorKind::ReadOnly,
        _ => ErrorKind::Io,
    }
}

/// An error as it crosses to a front door that cannot hold [`Error`] itself (the desktop's IPC,
/// a `--json` consumer): its kind, its message, and the fix when there is one.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct ErrorReport {
    pub kind: ErrorKind,
    pub message: String,
    pub hint: Option<String>,
}

impl ErrorReport {
    /// A front door's own error of `kind` (no core error behind it).
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> ErrorReport {
        ErrorReport {
            kind,
            message: message.into(),
            hint: None,
        }
    }

    pub fn with_hint(mut self, hint: impl Into<String>) -> ErrorReport {
        self.hint = Some(hint.into());
        self
    }
}

impl From<&Error> for ErrorReport {
    fn from(e: &Error) -> ErrorReport {
        ErrorReport {
            kind: e.kind(),
            message: e.to_string(),
            hint: e.hint(),
        }
    }
}

impl From<Error> for ErrorReport {
    fn from(e: Error) -> ErrorReport {
        ErrorReport::from(&e)
    }
}

impl std::fmt::Display for ErrorReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

/// Why a write found no room.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoRoom {
    /// No space left on the device (ENOSPC, SQLITE_FULL).
    DiskFull,
    /// The user's disk quota is used up (EDQUOT).
    Quota,
    /// A file reached this process's file-size limit (EFBIG: RLIMIT_FSIZE, `ulimit -f`).
    FileSizeLimit,
}

impl std::fmt::Display for NoRoom {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            NoRoom::DiskFull => "the disk is full",
            NoRoom::Quota => "the disk quota is used up",
            NoRoom::FileSizeLimit => "a file reached this process's file-size limit (ulimit -f)",
        })
    }
}

impl NoRoom {
    /// What the user can do about it.
    pub fn fix(self) -> &'static str {
        match self {
            NoRoom::DiskFull => "Free space on that disk",
            NoRoom::Quota => "Free space within your quota (or have it raised)",
            NoRoom::FileSizeLimit => "Raise the file-size limit (ulimit -f) or free space",
        }
    }

    /// The kind of `e` when it means "no room" (ENOSPC, EDQUOT, EFBIG).
    pub fn of_io(e: &std::io::Error) -> Option<NoRoom> {
        use std::io::ErrorKind;
        match e.kind() {
            ErrorKind::StorageFull => Some(NoRoom::DiskFull),
            ErrorKind::QuotaExceeded => Some(NoRoom::Quota),
            ErrorKind::FileTooLarge => Some(NoRoom::FileSizeLimit),
            _ => None,
        }
    }

    /// The kind of a SQLite error on the database at `db` when it means "no room".
    ///
    /// SQLite reports ENOSPC on a write as `SQLITE_FULL`, but EFBIG and EDQUOT (and ENOSPC while
    /// growing the `-shm` file) only as an I/O error without the errno (rusqlite does not expose
    /// it). For those, the cause is looked up: a finite file-size limit, or almost no free space
    /// on the disk holding the database.
    pub fn of_db(db: &Path, e: &rusqlite::Error) -> Option<NoRoom> {
        use rusqlite::ffi;
        let rusqlite::Error::SqliteFailure(failure, _) = e else {
            return None;
        };
        if failure.code == rusqlite::ErrorCode::DiskFull {
            return Some(NoRoom::DiskFull);
        }
        let write = matches!(
            failure.extended_code,
            ffi::SQLITE_IOERR_WRITE | ffi::SQLITE_IOERR_SHMSIZE | ffi::SQLITE_IOERR_TRUNCATE
        );
        if !write {
            return None;
        }
        probe(db.parent().unwrap_or(db))
    }
}

/// After a write failed without an errno: a finite file-size limit (SQLite turns EFBIG into a
/// plain write error), or less than 1 MiB free for this user on `dir`'s file system.
#[cfg(unix)]
fn probe(dir: &Path) -> Option<NoRoom> {
    use rustix::process::{Resource, getrlimit};
    if getrlimit(Resource::Fsize).current.is_some() {
        return Some(NoRoom::FileSizeLimit);
    }
    let stat = rustix::fs::statvfs(dir).ok()?;
    (stat.f_bavail.saturating_mul(stat.f_frsize) < 1 << 20).then_some(NoRoom::DiskFull)
}

#[cfg(not(unix))]
fn probe(_dir: &Path) -> Option<NoRoom> {
    None
}

impl Error {
    /// A failed write of `file` inside the data dir `dir`: [`Error::DiskFull`] when there was no
    /// room, else [`Error::Write`].
    pub fn write_in(dir: &Path, file: &Path, source: std::io::Error) -> Error {
        match NoRoom::of_io(&source) {
            Some(why) => Error::DiskFull {
                dir: dir.to_owned(),
                file: file.to_owned(),
                why,
            },
            None => Error::Write {
                path: file.to_owned(),
                source,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(target_os = "linux")]
    #[test]
    fn no_room_errnos_become_disk_full_naming_the_data_dir_and_the_fix() {
        for (errno, why) in [
            (28, NoRoom::DiskFull),
            (122, NoRoom::Quota),
            (27, NoRoom::FileSizeLimit),
        ] {
            let err = Error::write_in(
                Path::new("/data"),
                Path::new("/data/retained/x.zst"),
                std::io::Error::from_raw_os_error(errno),
            );
            assert!(
                matches!(&err, Error::DiskFull { why: w, .. } if *w == why),
                "{errno}: {err:?}"
            );
            let text = err.to_string();
            assert!(text.contains("data dir /data") && text.contains("/data/retained/x.zst"));
            assert!(text.to_lowercase().contains("free space"), "{text}");
        }
        let other = Error::write_in(
            Path::new("/data"),
            Path::new("/data/f"),
            std::io::Error::from_raw_os_error(13),
        );
        assert!(matches!(other, Error::Write { .. }), "{other:?}");
    }

    /// A write that met ENOSPC or EDQUOT outside `write_in` (a lock file, an export) still
    /// says disk full and the fix; one that met EROFS says read-only, never full.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_failed_write_says_disk_full_or_read_only_by_its_errno() {
        let write = |errno| Error::Write {
            path: PathBuf::from("/data/capture.lock"),
            source: std::io::Error::from_raw_os_error(errno),
        };
        for errno in [28, 122] {
            let err = write(errno);
            assert_eq!(err.kind(), ErrorKind::NoRoom, "{errno}");
            let hint = err.hint().unwrap_or_default();
            assert!(
                hint.contains("disk full") && hint.contains("Free space"),
                "{errno}: {hint}"
            );
        }
        let rofs = write(30);
        assert_eq!(rofs.kind(), ErrorKind::ReadOnly);
        let hint = rofs.hint().unwrap_or_default();
        assert!(
            hint.contains("mounted read-only") && !hint.contains("Free space"),
            "{hint}"
        );
        // `write_in` keeps a read-only mount a write error, not a full disk.
        let err = Error::write_in(
            Path::new("/data"),
            Path::new("/data/cairn.db"),
            std::io::Error::from_raw_os_error(30),
        );
        assert!(matches!(err, Error::Write { .. }), "{err:?}");
        assert_eq!(err.kind(), ErrorKind::ReadOnly);
    }

    #[test]
    fn sqlite_full_is_disk_full_and_other_sqlite_errors_are_not() {
        use rusqlite::ffi;
        let failure = |code| rusqlite::Error::SqliteFailure(ffi::Error::new(code), None);
        let db = Path::new("/data/cairn.db");
        assert_eq!(
            NoRoom::of_db(db, &failure(ffi::SQLITE_FULL)),
            Some(NoRoom::DiskFull)
        );
        assert_eq!(NoRoom::of_db(db, &failure(ffi::SQLITE_CONSTRAINT)), None);
        assert_eq!(NoRoom::of_db(db, &failure(ffi::SQLITE_IOERR_READ)), None);
        let err = crate::store::db_err(db, failure(ffi::SQLITE_FULL));
        assert!(
            err.to_string()
                .starts_with("cannot write to the data dir /data: the disk is full"),
            "{err}"
        );
    }

    #[test]
    fn each_error_has_a_kind_and_a_report_of_the_same_shape() {
        use rusqlite::ffi;
        let db = |code| Error::Db {
            path: PathBuf::from("/data/cairn.db"),
            source: rusqlite::Error::SqliteFailure(ffi::Error::new(code), None),
        };
        assert_eq!(db(ffi::SQLITE_BUSY).kind(), ErrorKind::Busy);
        assert_eq!(db(ffi::SQLITE_CORRUPT).kind(), ErrorKind::Corrupt);
        assert_eq!(db(ffi::SQLITE_NOTADB).kind(), ErrorKind::Corrupt);
        assert_eq!(db(ffi::SQLITE_CONSTRAINT).kind(), ErrorKind::Io);
        assert!(db(ffi::SQLITE_BUSY).hint().unwrap().contains("try again"));
        assert!(
            db(ffi::SQLITE_CORRUPT)
                .hint()
                .unwrap()
                .contains("cairn doctor")
        );
        let read_only_db = db(ffi::SQLITE_READONLY);
        assert_eq!(read_only_db.kind(), ErrorKind::ReadOnly);
        assert!(
            read_only_db
                .hint()
                .unwrap()
                .contains("writable for your user (chmod u+w)"),
            "{:?}",
            read_only_db.hint()
        );
        let missing = Error::Read {
            path: PathBuf::from("/x"),
            source: std::io::Error::from(std::io::ErrorKind::NotFound),
        };
        assert_eq!(missing.kind(), ErrorKind::NotFound);

        let read_only = Error::ReadOnly {
            dir: PathBuf::from("/data"),
        };
        let report = serde_json::to_value(ErrorReport::from(&read_only)).unwrap();
        assert_eq!(
            report,
            serde_json::json!({
                "kind": "read_only",
                "message": "/data is read-only: Cairn can read the archive there but not change it",
                "hint": "pass --data-dir or set CAIRN_DATA_DIR to a directory you can write",
            })
        );
        let plain = serde_json::to_value(ErrorReport::from(Error::NotFound("x".into()))).unwrap();
        assert_eq!(plain["kind"], "not_found");
        assert_eq!(plain["hint"], serde_json::Value::Null);
    }

    /// A lock another open file description holds is `Locked` (with the fix), never a wait.
    #[test]
    fn a_held_lock_is_locked_and_says_to_wait() {
        use crate::archive::capture::CaptureLock;
        let dir = tempfile::tempdir().unwrap();
        let first = CaptureLock::open_named(dir.path(), "extract.lock").unwrap();
        let held = first
            .try_lock(dir.path(), "another extraction pass")
            .unwrap();
        let second = CaptureLock::open_named(dir.path(), "extract.lock").unwrap();
        let err = second
            .try_lock(dir.path(), "another extraction pass")
            .err()
            .unwrap();
        assert_eq!(err.kind(), ErrorKind::Locked);
        assert!(
            err.to_string()
                .starts_with("another extraction pass is running on")
        );
        assert!(err.hint().unwrap().contains("wait"));
        drop(held);
        assert!(second.try_lock(dir.path(), "x").is_ok());
    }
}

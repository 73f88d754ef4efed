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
    #[error("{0}")]
    Invalid(String),
    #[error("not found: {0}")]
    NotFound(String),
    /// `cairn hook` was given a transcript path Cairn does not read (see
    /// [`crate::hooks::accept_transcript`]); nothing was read or stored.
    #[error("not capturing {}: {reason}", path.display())]
    HookRefused { path: PathBuf, reason: String },
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

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
}

//! Typed errors of the library. Each variant carries the path, key or line that failed and
//! its Display says what to do next.

use std::path::PathBuf;

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
    /// A report generator (an agent CLI or an endpoint) failed; `what` names it.
    #[error("{what}: {message}")]
    Generator { what: String, message: String },
    #[error("{0}")]
    Invalid(String),
    #[error("not found: {0}")]
    NotFound(String),
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

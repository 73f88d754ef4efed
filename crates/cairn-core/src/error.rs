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
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

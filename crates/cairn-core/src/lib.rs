//! Cairn's core: everything the CLI, the hook and the desktop app do, with no UI in it.
//!
//! Data flows one way: transcript file → [`archive::redact`] (every line, before it is parsed)
//! → [`archive::sources`] (one adapter per agent) → records → [`archive::capture`] →
//! [`archive::store`] (SQLite + FTS5) → views. The [`Cairn`] facade (its methods in `facade/`,
//! one file per room) is the only entry point the front doors use; errors reach them with an
//! [`ErrorKind`] and a hint ([`Error::hint`]).

#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used))]

mod agent;
pub mod archive;
pub(crate) mod atomic;
mod clock;
pub mod config;
pub mod doctor;
pub mod error;
mod facade;
pub mod git;
pub mod hooks;
pub mod insights;
pub mod keys;
pub mod llm;
pub(crate) mod private;
pub mod recall;
mod schema;
pub mod semantic;
mod store;
pub mod team;
pub mod text;
pub mod views;

pub use error::{Error, ErrorKind, ErrorReport, Result};
pub use facade::forget::{
    ForgetEntry, ForgetPlan, ForgetReport, ForgetRequest, ForgetSession, ForgetSetAside, Forgotten,
    LiftRequest, Lifted, SetAsideFate,
};
pub use facade::import::Imported;
pub use facade::mcp::AgentWriter;
pub use facade::memory::SessionStartBrief;
pub use facade::rebuild::{RebuildCarried, RebuildReport, RebuildSkip};
pub use facade::reindex::{ReindexChange, ReindexReport, ReindexRequest, ReindexSkip};

use std::path::PathBuf;
use std::sync::Mutex;

use archive::Agent;
use archive::store::Store;
use config::Config;

/// The facade every front door uses: one per data dir.
pub struct Cairn {
    data_dir: PathBuf,
    config: Config,
    store: Mutex<Store>,
    read_only: bool,
    /// Why a writable open failed for lack of room (the archive is then opened read-only, so
    /// reads still work and writes say what to free).
    no_room: Option<(PathBuf, error::NoRoom)>,
    semantic: semantic::Runtime,
}

/// The privacy preview: text as the outbound redactor lets it leave the machine.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct OutboundPreview {
    pub text: String,
    /// What was removed: the rule and the byte range in the original text.
    pub removed: Vec<Removed>,
}

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct Removed {
    pub rule: String,
    pub start: u32,
    pub end: u32,
}

/// Which agents a sync covers (empty = every enabled agent).
#[derive(Debug, Clone, Default)]
pub struct SyncOptions {
    pub agents: Vec<Agent>,
}

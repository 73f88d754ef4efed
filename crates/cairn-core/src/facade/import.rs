//! The [`Cairn`] facade's import: an ATIF trajectory (a teammate's export, another tool's run)
//! read as a session of agent `atif`, through capture like any transcript (redacted, retained,
//! keyed by step, so a second import of the same file stores nothing twice).

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::archive::Agent;
use crate::archive::atif;
use crate::archive::capture::Quiet;
use crate::archive::discover::FoundFile;
use crate::archive::sources::FileRole;
use crate::{Cairn, Error, Result, keys};

/// What `cairn import` did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct Imported {
    pub session_key: String,
    /// The trajectory's own `session_id`.
    pub session_id: String,
    pub turns: u32,
    pub records_added: u32,
    pub records_updated: u32,
    /// Nothing was new: the same trajectory was imported before.
    pub already_imported: bool,
}

impl Cairn {
    /// Import the ATIF trajectory at `path` as a session of agent `atif`. The file is checked
    /// first ([`atif::check_file`]: a regular file, size, JSON, schema version, session id,
    /// steps); a trajectory Cairn refuses is an `invalid` error naming the file and why.
    pub fn import_atif(&self, path: &Path) -> Result<Imported> {
        self.writable()?;
        let checked = atif::check_file(path)?;
        let file = FoundFile {
            agent: Agent::Atif,
            role: FileRole::Main,
            path: checked.path.clone(),
            parent_hint: None,
            agent_id: None,
        };
        let report = self.capture_paths(&[file], &Quiet)?;
        let session_key = keys::session_key(Agent::Atif, checked.session_id.as_bytes());
        let detail = self.session(&session_key).map_err(|_| {
            let why = report
                .warnings
                .first()
                .map(|w| crate::text::one_line(&w.message, 200))
                .unwrap_or_else(|| "capture stored no session".to_owned());
            Error::Invalid(format!(
                "cannot import {}: {why}",
                crate::text::one_line(&path.display().to_string(), 200)
            ))
        })?;
        Ok(Imported {
            session_key,
            session_id: checked.session_id,
            turns: detail.turn_count,
            records_added: report.records_added,
            records_updated: report.records_updated,
            already_imported: !report.changed(),
        })
    }
}

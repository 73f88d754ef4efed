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
    /// The session keys of its embedded sub-agent trajectories, each imported as a sub-agent
    /// session of this one.
    pub subagents: Vec<String>,
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
        // The session is keyed by its id as stored: redacted, like every byte of the file (an
        // id holding a key was stored, then reported as not imported).
        let stored_id = crate::archive::redact::Redactor::global()
            .redact_text(&checked.session_id, "session_id", &mut Vec::new())
            .into_owned();
        let session_key = keys::session_key(Agent::Atif, stored_id.as_bytes());
        self.one_file_per_trajectory(&checked, &stored_id, &session_key)?;
        let mut report = self.capture_paths(&[file], &Quiet)?;
        let mut subagents = Vec::new();
        if !checked.subagents.is_empty() {
            let (sub_report, keys) = self.import_subagents(&checked, &stored_id)?;
            report.records_added += sub_report.records_added;
            report.records_updated += sub_report.records_updated;
            report.sessions_added += sub_report.sessions_added;
            report.subagents_added += sub_report.subagents_added;
            report.sessions_updated += sub_report.sessions_updated;
            subagents = keys;
        }
        let detail = self.session(&session_key).map_err(|_| {
            let forgotten = {
                let store = self.store();
                let path = std::fs::canonicalize(&checked.path).unwrap_or(checked.path.clone());
                let source = crate::archive::store::source_key(Agent::Atif, &path);
                crate::archive::forget::is_forgotten(store.conn(), &source).unwrap_or(false)
            };
            let why = if forgotten {
                "it was forgotten (`cairn forget`), and Cairn does not read a forgotten session again, from this file or a copy of it".to_owned()
            } else {
                report
                    .warnings
                    .first()
                    .map(|w| crate::text::one_line(&w.message, 200))
                    .unwrap_or_else(|| "capture stored no session".to_owned())
            };
            Error::Invalid(format!(
                "cannot import {}: {why}",
                crate::text::one_line(&path.display().to_string(), 200)
            ))
        })?;
        Ok(Imported {
            session_key,
            session_id: stored_id,
            turns: detail.turn_count,
            records_added: report.records_added,
            records_updated: report.records_updated,
            already_imported: !report.changed(),
            subagents,
        })
    }

    /// Refuse a second file holding a trajectory already imported from another file that is
    /// still there: both keyed by step under one session, their steps would mix (the same step
    /// number rewritten by the other file's). Importing the same file again, or one that took
    /// the place of a file gone since, reads as an update.
    fn one_file_per_trajectory(
        &self,
        checked: &atif::Checked,
        stored_id: &str,
        session_key: &str,
    ) -> Result<()> {
        let paths = {
            let store = self.store();
            crate::archive::store::main_source_paths(store.conn(), session_key)
                .map_err(|e| store.err(e))?
        };
        let Some(other) = paths
            .iter()
            .map(Path::new)
            .find(|p| *p != checked.path && p.exists())
        else {
            return Ok(());
        };
        let shown = |p: &Path| crate::text::one_line(&p.display().to_string(), 200);
        // By its id unless a captured session answers to that id first (then `forget` by the
        // id would list that one): by its key.
        let name = match self.session(stored_id) {
            Ok(s) if s.session_key == session_key => crate::text::one_line(stored_id, 100),
            _ => session_key.to_owned(),
        };
        Err(Error::Conflict(format!(
            "cannot import {}: session {} was imported from {}, and two files of one session would mix their steps; import that file again, or forget the session first (`cairn forget {name}`)",
            shown(&checked.path),
            crate::text::one_line(stored_id, 100),
            shown(other),
        )))
    }

    /// Capture each embedded sub-agent trajectory (nested ones too) as a sub-agent session of the
    /// imported one:
    /// written (with the parent's `session_id`, so it is keyed under it) to a scratch file in
    /// the data dir at a path that stays the same for the same file, captured like the
    /// parent, then removed (capture keeps its redacted copy).
    fn import_subagents(
        &self,
        checked: &atif::Checked,
        stored_id: &str,
    ) -> Result<(crate::archive::capture::SyncReport, Vec<String>)> {
        use sha2::{Digest, Sha256};
        let short = |text: &[u8]| hex::encode(&Sha256::digest(text)[..8]);
        let dir = self
            .data_dir
            .join("import-scratch")
            .join(short(checked.path.as_os_str().as_encoded_bytes()));
        std::fs::create_dir_all(&dir).map_err(|e| Error::Write {
            path: dir.clone(),
            source: e,
        })?;
        let mut files = Vec::new();
        let mut keys = Vec::new();
        for (id, doc) in &checked.subagents {
            let mut doc = doc.clone();
            if let Some(o) = doc.as_object_mut() {
                o.insert(
                    "session_id".into(),
                    serde_json::Value::String(checked.session_id.clone()),
                );
            }
            let path = dir.join(format!("{}.atif.json", short(id.as_bytes())));
            let text = serde_json::to_vec(&doc)
                .map_err(|e| Error::Invalid(format!("cannot prepare a sub-agent: {e}")))?;
            std::fs::write(&path, text).map_err(|e| Error::Write {
                path: path.clone(),
                source: e,
            })?;
            let identity = format!("{stored_id}/subagents/agent-{id}");
            keys.push(keys::session_key(Agent::Atif, identity.as_bytes()));
            files.push(FoundFile {
                agent: Agent::Atif,
                role: FileRole::Subagent,
                path,
                parent_hint: Some(stored_id.to_owned()),
                agent_id: Some(id.clone()),
            });
        }
        let report = self.capture_paths(&files, &Quiet);
        if let Err(e) = std::fs::remove_dir_all(&dir) {
            tracing::warn!("removing {} failed: {e}", dir.display());
        }
        Ok((report?, keys))
    }
}

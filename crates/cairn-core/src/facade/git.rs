//! The [`Cairn`] facade, git: publishing, pushing and pulling sessions, the targets a directory
//! implies, and a person's corrections of a session's links.

use std::path::Path;

use crate::{Cairn, Error, Result};
use crate::{git, views};

impl Cairn {
    /// Publish the redacted metadata of the sessions related to `target` under `refs/cairn/` in
    /// the repository at `dir`.
    /// With `full`, each session's redacted transcript too (`cairn publish --full`).
    pub fn publish(
        &self,
        dir: &Path,
        target: &git::targets::Target,
        full: bool,
        dry_run: bool,
    ) -> Result<git::publish::PublishReport> {
        let repo = git::repo::Repo::discover(dir)?;
        let store = self.store();
        let now = crate::clock::now();
        // `main` of every repository is one branch key: only this repository's sessions.
        let views::skim::Publishable {
            sessions,
            weak_left_out,
            unplaced_left_out,
            unplaced_redacted,
        } = views::skim::publishable(store.conn(), target, &repo).map_err(|e| store.err(e))?;
        let full = match full {
            false => None,
            true => {
                let mut trajectories = std::collections::BTreeMap::new();
                for (s, _) in &sessions {
                    let row = self.session_row(&store, &s.session_key)?;
                    trajectories.insert(
                        s.session_key.clone(),
                        views::export::trajectory_value(store.conn(), row, &s.session_key, |e| {
                            store.err(e)
                        })?,
                    );
                }
                Some(git::publish::Full {
                    publisher: git::publish::publisher(&repo),
                    trajectories,
                })
            }
        };
        let mut report =
            git::publish::publish(store.conn(), &repo, target, sessions, full, dry_run, &now)?;
        report.weak_left_out = weak_left_out;
        report.unplaced_left_out = unplaced_left_out;
        report.unplaced_redacted = unplaced_redacted;
        Ok(report)
    }

    /// Record the line attribution `why` finds for each commit of `range` as Git AI authorship
    /// notes (`refs/notes/ai`) in the repository at `dir`; with `dry_run`, only say what would be
    /// written. See [`views::why::notes`].
    pub fn write_notes(
        &self,
        dir: &Path,
        range: &str,
        with_messages: bool,
        dry_run: bool,
    ) -> Result<views::why::notes::NotesReport> {
        let repo = git::repo::Repo::discover(dir)?;
        let store = self.store();
        views::why::notes::write_notes(store.conn(), &repo, range, with_messages, dry_run)
    }

    /// Push this machine's own published refs (`refs/cairn/sessions/*` of sessions this
    /// archive captured) of the repository at `dir` to `remote`: a configured remote's name, a
    /// URL or a path, checked as [`Cairn::pull`] checks it.
    pub fn push(&self, dir: &Path, remote: &str) -> Result<git::publish::PushReport> {
        let repo = git::repo::Repo::discover(dir)?;
        let store = self.store();
        git::publish::push(store.conn(), &repo, remote)
    }

    /// Fetch the published documents of `remote` (a configured remote's name, a URL or a
    /// path, as `git fetch` takes them; never an option or a command-running transport) and
    /// import those that pass the checks (the others are listed in the report).
    /// A document's full transcript (`publish --full`) becomes a session of this archive, of
    /// agent `atif`, marked with its publisher (see [`git::publish::admit`]).
    pub fn pull(&self, dir: &Path, remote: &str) -> Result<git::publish::PullReport> {
        self.writable()?;
        let repo = git::repo::Repo::discover(dir)?;
        let (mut report, transcripts, withdrawn) = {
            let store = self.store();
            git::publish::pull(store.conn(), &repo, remote, &crate::clock::now())?
        };
        for key in withdrawn {
            self.drop_withdrawn(&key)?;
        }
        for pending in transcripts {
            let t = &pending.transcript;
            let refname = format!("{}{}", git::publish::REF_PREFIX, t.session_key);
            let admitted = {
                let store = self.store();
                git::publish::admit(store.conn(), t, &report.remote).map_err(|e| store.err(e))?
            };
            match admitted {
                Ok((file_name, by)) => {
                    let local = crate::keys::session_key(
                        crate::archive::Agent::Atif,
                        t.session_key.as_bytes(),
                    );
                    match self.capture_pulled(&repo, &local, &file_name, &t.trajectory, &by) {
                        Ok(()) => report.transcripts_imported += 1,
                        // The transcript itself is refused: the same bytes are refused again,
                        // so the document is done (said once, not tried again until its
                        // publisher publishes it again).
                        Err(e) if e.kind() == crate::error::ErrorKind::Invalid => {
                            report.skip(
                                &refname,
                                git::publish::transcript_refused(&format!(
                                    "{} (not tried again until it is published again)",
                                    crate::text::one_line(&e.to_string(), 200)
                                )),
                            );
                        }
                        // A capture that failed here (a full disk, the archive busy) stays
                        // pending: the next pull tries it again.
                        Err(e) => {
                            report.skip(
                                &refname,
                                git::publish::transcript_refused(&format!(
                                    "{}; the next pull tries again",
                                    crate::text::one_line(&e.to_string(), 200)
                                )),
                            );
                            continue;
                        }
                    }
                }
                // Refused: as a refused document, skipped until the ref changes.
                Err(why) => report.skip(&refname, git::publish::transcript_refused(&why)),
            }
            let store = self.store();
            git::publish::transcript_done(store.conn(), &pending).map_err(|e| store.err(e))?;
        }
        Ok(report)
    }

    /// A teammate's session pulled from document `key`, which its remote no longer has: gone
    /// from this archive (rows, index, its copy under `pulled/`), unless another remote still
    /// holds the document. No tombstone: published again, it is pulled again.
    fn drop_withdrawn(&self, key: &str) -> Result<()> {
        let local = crate::keys::session_key(crate::archive::Agent::Atif, key.as_bytes());
        let pulled = {
            let store = self.store();
            let conn = store.conn();
            let elsewhere = git::publish::pulled_anywhere(conn, key).map_err(|e| store.err(e))?;
            let origin =
                crate::archive::store::session_origin(conn, &local).map_err(|e| store.err(e))?;
            !elsewhere && matches!(origin, Some(Some(_)))
        };
        if !pulled {
            return Ok(());
        }
        self.forget(&crate::ForgetRequest {
            session: Some(local.clone()),
            allow_reimport: true,
            ..Default::default()
        })?;
        let copy = self
            .data_dir
            .join(PULLED_DIR)
            .join(format!("{local}.atif.json"));
        match std::fs::remove_file(&copy) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(source) => Err(Error::Write { path: copy, source }),
        }
    }

    /// The teammates' trajectories kept under `pulled/`, redacted again with today's rules (a
    /// reindex's sweep: a pull by an older build redacted them with its rules). Each that changes
    /// is replaced whole, atomically, unless `dry`. Returns how many held something.
    pub(crate) fn redact_pulled(&self, dry: bool) -> Result<u32> {
        let dir = self.data_dir.join(PULLED_DIR);
        let entries = match std::fs::read_dir(&dir) {
            Ok(entries) => entries,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(0),
            Err(source) => return Err(Error::Read { path: dir, source }),
        };
        let mut changed = 0;
        for entry in entries.flatten() {
            let path = entry.path();
            if path.extension().is_none_or(|e| e != "json") {
                continue;
            }
            // Written by `capture_pulled` after its checks; one that no longer parses is left
            // for its capture to report.
            let read = std::fs::read(&path).ok();
            let Some(mut trajectory) =
                read.and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
            else {
                continue;
            };
            if !redact_trajectory(&mut trajectory) {
                continue;
            }
            changed += 1;
            if !dry {
                write_pulled(&path, &trajectory)?;
            }
        }
        Ok(changed)
    }

    /// Store a teammate's trajectory, redacted, as `pulled/<file_name>` under the data dir, record its
    /// publisher, and capture it like `cairn import` does; then place it in `repo`, the
    /// repository the pull ran in, whose refs carried its document (its folder on the
    /// publisher's machine is not sent, so the session could not be placed otherwise, and the
    /// branch list showed it under "(no repository)").
    fn capture_pulled(
        &self,
        repo: &git::repo::Repo,
        local_key: &str,
        file_name: &str,
        trajectory: &serde_json::Value,
        by: &crate::archive::store::PublishedBy,
    ) -> Result<()> {
        use crate::archive::capture::Quiet;
        use crate::archive::discover::FoundFile;
        let dir = self.data_dir.join(PULLED_DIR);
        std::fs::create_dir_all(&dir).map_err(|e| Error::Write {
            path: dir.clone(),
            source: e,
        })?;
        let path = dir.join(file_name);
        // Kept under the data dir, where no secret is written: redacted before it lands (the
        // capture below redacts what it reads again, which changes nothing then).
        let mut trajectory = trajectory.clone();
        redact_trajectory(&mut trajectory);
        // Checked beside its place first: a refused transcript neither stays under `pulled/`
        // nor replaces the one an earlier pull captured.
        let trial = dir.join(format!("{file_name}.checking"));
        write_pulled(&trial, &trajectory)?;
        let checked = crate::archive::atif::check_file(&trial).map_err(|e| {
            let _ = std::fs::remove_file(&trial);
            without_file(e, &trial)
        })?;
        std::fs::rename(&trial, &path).map_err(|source| {
            let _ = std::fs::remove_file(&trial);
            Error::Write {
                path: path.clone(),
                source,
            }
        })?;
        let real = checked.path.with_file_name(file_name);
        {
            let store = self.store();
            crate::archive::store::mark_pulled(store.conn(), &real.to_string_lossy(), by)
                .map_err(|e| store.err(e))?;
        }
        let file = FoundFile {
            agent: crate::archive::Agent::Atif,
            role: crate::archive::sources::FileRole::Main,
            path: real,
            parent_hint: None,
            agent_id: None,
        };
        let report = self.capture_paths(&[file], &Quiet)?;
        if let Some(w) = report
            .warnings
            .first()
            .filter(|_| report.records_added == 0)
        {
            return Err(Error::Invalid(format!(
                "its transcript could not be read: {}",
                crate::text::one_line(&w.message, 160)
            )));
        }
        let store = self.store();
        let conn = store.conn();
        let placed = (|| -> rusqlite::Result<()> {
            let Some(row) = crate::archive::store::resolve_session(conn, local_key)? else {
                return Ok(());
            };
            if crate::archive::store::session_repo(conn, row)?.is_none() {
                let repo_row = git::snapshot::repo_id(conn, repo, &crate::clock::now())?;
                crate::archive::store::set_session_repo(conn, row, repo_row)?;
            }
            // Listed under the repository it was pulled into, as the publisher's own list
            // has it under theirs.
            let project = crate::archive::project::of_root(&repo.root);
            crate::archive::store::set_missing_project(conn, row, &project)?;
            Ok(())
        })();
        placed.map_err(|e| store.err(e))
    }

    /// The target `skim` uses when none is given: the branch checked out in `dir` (the applied
    /// branch of a GitButler workspace when exactly one is applied).
    pub fn default_target(&self, dir: &Path) -> Result<git::targets::Target> {
        let repo = git::repo::Repo::discover(dir)?;
        git::targets::checked_out(&repo)
    }

    /// A person's word on session `key_or_id` and `target` (`cairn link` / `cairn unlink`,
    /// the skim timeline's "belongs here" / "not related"): a link with evidence `person` that
    /// every relink keeps, or an unlink that association never overrides. Under the capture
    /// lock, as a forget is: a rebuild from the copies carries the corrections it read from the
    /// old database, so one said there after that read would be lost in the new one; this
    /// waits for the rebuild's swap instead and is said in the new database. With `waiting`
    /// (the CLI's stderr) the wait is told and lasts as long as the other process's work;
    /// without (the desktop), it ends after `PERSON_LOCK_WAIT` in [`crate::Error::Locked`].
    pub fn correct_link(
        &self,
        key_or_id: &str,
        target: &git::targets::Target,
        action: git::correct::CorrectionAction,
        reason: Option<&str>,
        waiting: Option<&dyn crate::archive::capture::Progress>,
    ) -> Result<git::correct::LinkCorrection> {
        self.writable()?;
        target.check()?;
        let lock = crate::archive::capture::CaptureLock::open(&self.data_dir)?;
        let _held = lock.lock_for_person(
            &self.data_dir,
            waiting,
            crate::facade::forget::PERSON_LOCK_WAIT,
        )?;
        let mut store = self.store();
        let row = self.session_row(&store, key_or_id)?;
        let by = git::correct::person();
        let now = crate::clock::now();
        let path = crate::store::path_of(store.conn());
        let db = crate::store::err_at(&path);
        let tx = store
            .conn_mut()
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(db)?;
        let correction = git::correct::correct(&tx, row, target, action, &by, reason, &now)?;
        tx.commit().map_err(db)?;
        Ok(correction)
    }

    /// The cwd, branch and worktree root of `dir`, for `--current-*` filters.
    pub fn current_context(&self, dir: &Path) -> Result<(String, Option<String>, Option<String>)> {
        let cwd = std::fs::canonicalize(dir).map_err(|e| Error::Read {
            path: dir.to_owned(),
            source: e,
        })?;
        let repo = git::repo::Repo::discover(&cwd).ok();
        let branch = repo.as_ref().and_then(|r| match r.head().ok()? {
            git::repo::Head::Branch { name, .. } => Some(name),
            git::repo::Head::Detached { .. } => None,
        });
        Ok((
            cwd.to_string_lossy().into_owned(),
            branch,
            repo.map(|r| r.root.to_string_lossy().into_owned()),
        ))
    }
}

/// Where teammates' trajectories are kept under the data dir.
const PULLED_DIR: &str = "pulled";

/// A refusal of the trial copy at `path` without the copy's path (removed, and never the
/// person's to look at): only why the transcript is refused.
fn without_file(e: Error, path: &std::path::Path) -> Error {
    match e {
        Error::Invalid(m) => {
            let shown = crate::text::one_line(&path.display().to_string(), 200);
            let why = m
                .strip_prefix(&format!("cannot import {shown}: "))
                .map(str::to_owned)
                .unwrap_or(m);
            Error::Invalid(why)
        }
        other => other,
    }
}

/// A teammate's trajectory redacted in place; whether anything changed.
fn redact_trajectory(trajectory: &mut serde_json::Value) -> bool {
    crate::archive::redact::Redactor::global().redact_json(trajectory, &mut Vec::new())
}

/// A teammate's trajectory written whole, owner-only, replacing what was there atomically.
fn write_pulled(path: &std::path::Path, trajectory: &serde_json::Value) -> Result<()> {
    let bytes = serde_json::to_vec(trajectory).unwrap_or_default();
    crate::atomic::replace(path, &bytes, 0o600)
        .map(drop)
        .map_err(|f| Error::Write {
            path: f.path,
            source: f.source,
        })
}

//! The [`Cairn`] facade, capture: discovering transcripts, syncing them, the source dirs and the
//! outbound preview.

use crate::archive::Agent;
use crate::archive::capture::{self, Progress, SyncReport, Trigger};
use crate::archive::discover::{self, FoundFile};
use crate::archive::store::Store;
use crate::config;
use crate::{Cairn, OutboundPreview, Removed, Result, SyncOptions};
use crate::{archive, git, recall};

impl Cairn {
    /// The transcript files a sync would read, and problems met finding them: those under each
    /// agent's source dirs, and for the agents that keep their transcript in the repository
    /// (Aider, Crush) those in every repository the archive knows. A file found both ways is
    /// read once.
    pub fn discover(&self, opts: &SyncOptions) -> (Vec<FoundFile>, Vec<capture::Warning>) {
        let in_repositories = self
            .wanted(opts)
            .any(|a| discover::in_repository(a, std::path::Path::new("")).is_some());
        let repositories = if in_repositories {
            self.known_repositories()
        } else {
            Vec::new()
        };
        self.discover_among(opts, &repositories)
    }

    /// [`Cairn::discover`] with `repositories` as the repositories the archive knows.
    fn discover_among(
        &self,
        opts: &SyncOptions,
        repositories: &[std::path::PathBuf],
    ) -> (Vec<FoundFile>, Vec<capture::Warning>) {
        let mut files = Vec::new();
        let mut warnings = Vec::new();
        for agent in self.wanted(opts) {
            for dir in discover::source_dirs(&self.config, agent) {
                let mut walk_warnings = Vec::new();
                files.extend(discover::walk(&dir, &mut walk_warnings));
                warnings.extend(
                    walk_warnings
                        .into_iter()
                        .map(|w| capture::Warning::of_file(&w.path, w.message)),
                );
            }
        }
        // The same file through two roots (a symlinked path, a configured folder that is also
        // a known repository): one reader.
        let mut seen = std::collections::HashSet::new();
        files.retain(|f| {
            seen.insert(std::fs::canonicalize(&f.path).unwrap_or_else(|_| f.path.clone()))
        });
        let in_repositories =
            self.discover_in_repositories(opts, repositories, &files, &mut warnings);
        files.extend(in_repositories);
        (files, warnings)
    }

    /// The agents `opts` asks for: those named, else every agent the config enables.
    fn wanted(&self, opts: &SyncOptions) -> impl Iterator<Item = Agent> {
        Agent::ALL.into_iter().filter(move |agent| {
            if opts.agents.is_empty() {
                self.config.agent_enabled(*agent)
            } else {
                opts.agents.contains(agent)
            }
        })
    }

    /// The transcripts of the agents `opts` asks for that keep theirs in the repository (Aider,
    /// Crush) in `roots` only, less those in `read`, with the problems met finding them.
    fn discover_in_repositories(
        &self,
        opts: &SyncOptions,
        roots: &[std::path::PathBuf],
        read: &[FoundFile],
        warnings: &mut Vec<capture::Warning>,
    ) -> Vec<FoundFile> {
        let canonical =
            |f: &FoundFile| std::fs::canonicalize(&f.path).unwrap_or_else(|_| f.path.clone());
        let mut seen: std::collections::HashSet<std::path::PathBuf> =
            read.iter().map(canonical).collect();
        let mut files = Vec::new();
        for agent in self.wanted(opts) {
            if discover::in_repository(agent, std::path::Path::new("")).is_none() {
                continue;
            }
            let mut walk_warnings = Vec::new();
            files.extend(discover::in_repositories(agent, roots, &mut walk_warnings));
            warnings.extend(
                walk_warnings
                    .into_iter()
                    .map(|w| capture::Warning::of_file(&w.path, w.message)),
            );
        }
        files.retain(|f| seen.insert(canonical(f)));
        files
    }

    /// The folders live capture watches: every agent's source dirs (whole trees), and for the
    /// agents that keep their transcript in the repository they work in (Aider, Crush), the
    /// folder holding it in every repository the archive knows, as [`Cairn::discover`] reads
    /// them (that folder alone: the repository's tree is never watched).
    pub fn watch_dirs(&self) -> Vec<discover::WatchDir> {
        let mut dirs: Vec<discover::WatchDir> = Agent::ALL
            .iter()
            .flat_map(|a| discover::source_dirs(&self.config, *a))
            .map(|d| discover::WatchDir {
                agent: d.agent,
                path: d.path,
                recursive: true,
            })
            .collect();
        let mut repositories: Option<Vec<std::path::PathBuf>> = None;
        for agent in Agent::ALL {
            if !self.config.agent_enabled(agent)
                || discover::in_repository(agent, std::path::Path::new("")).is_none()
            {
                continue;
            }
            let roots = repositories.get_or_insert_with(|| self.known_repositories());
            dirs.extend(roots.iter().filter_map(|root| {
                let file = discover::in_repository(agent, root)?;
                Some(discover::WatchDir {
                    agent,
                    path: file.parent()?.to_path_buf(),
                    recursive: false,
                })
            }));
        }
        dirs
    }

    /// The roots of the repositories the archive knows (where captured sessions ran).
    pub(super) fn known_repositories(&self) -> Vec<std::path::PathBuf> {
        match git::store::repo_places(self.store().conn()) {
            Ok(places) => {
                let mut roots: Vec<std::path::PathBuf> = places
                    .into_values()
                    .map(|p| std::path::PathBuf::from(p.root))
                    .collect();
                roots.sort();
                roots.dedup();
                roots
            }
            Err(e) => {
                tracing::warn!("reading the known repositories failed: {e}");
                Vec::new()
            }
        }
    }

    /// Discover every transcript under the source dirs and ingest what is new.
    pub fn sync(&self, opts: &SyncOptions, progress: &dyn Progress) -> Result<SyncReport> {
        self.writable()?;
        let known_before = self.known_repositories();
        let (files, mut warnings) = self.discover_among(opts, &known_before);
        let mut store = self.writer()?;
        let (mut report, touched) =
            capture::capture_many(&mut store, &self.data_dir, &files, Trigger::Sync, progress)?;
        self.link(&mut store, &touched, None, usize::MAX);
        // The repositories this sync's sessions ran in that the archive did not know before
        // it: their Aider and Crush transcripts are read now (a first sync would otherwise
        // leave them to the second).
        let learnt: Vec<std::path::PathBuf> = self
            .known_repositories()
            .into_iter()
            .filter(|r| !known_before.contains(r))
            .collect();
        if !learnt.is_empty() {
            let more = self.discover_in_repositories(opts, &learnt, &files, &mut warnings);
            if !more.is_empty() {
                let (found, touched) = capture::capture_many(
                    &mut store,
                    &self.data_dir,
                    &more,
                    Trigger::Sync,
                    progress,
                )?;
                self.link(&mut store, &touched, None, usize::MAX);
                report.absorb(found);
            }
        }
        // A forget killed after its commit left retained copies of what it forgot.
        if let Err(e) = self.sweep_forgotten_copies(&store) {
            tracing::warn!("sweeping the copies of forgotten transcripts failed: {e}");
        }
        report.stale_flagged = Self::check_stale(&mut store);
        warnings.append(&mut report.warnings);
        report.warnings = warnings;
        drop(store);
        report.retention = self.retention();
        report.retention_warning = crate::archive::retention::warning(&report.retention);
        Ok(report)
    }

    /// Capture specific transcript files (parallel parse, like a sync).
    pub fn capture_paths(
        &self,
        files: &[FoundFile],
        progress: &dyn Progress,
    ) -> Result<SyncReport> {
        self.writable()?;
        let mut store = self.writer()?;
        let (mut report, touched) =
            capture::capture_many(&mut store, &self.data_dir, files, Trigger::Sync, progress)?;
        self.link(&mut store, &touched, None, usize::MAX);
        report.stale_flagged = Self::check_stale(&mut store);
        Ok(report)
    }

    /// Snapshot the repositories of freshly captured sessions and relink them. Capture has
    /// already succeeded: a failure here is logged, never lost work.
    pub(crate) fn link(
        &self,
        store: &mut Store,
        touched: &capture::Touched,
        prefetch: Option<git::snapshot::Prefetch>,
        backlog: usize,
    ) {
        // Evidence anchored in these sessions must still say what it said: the touched ones,
        // and those an earlier capture stored but never relinked (it died first). Verified
        // before the relink, which is what takes a session off the pending list. The pending
        // list holds every session whose records changed, in the capture's own transaction:
        // grown, or holding a keyed record rewritten in place (same ordinal, so the session's
        // records end where they did).
        let sessions = git::sessions_to_relink(store.conn(), &touched.sessions, backlog)
            .unwrap_or_else(|e| {
                tracing::warn!("reading the sessions left to relink failed: {e}");
                touched.sessions.clone()
            });
        let now = crate::clock::now();
        for &session in &sessions {
            if let Err(e) = recall::evidence::verify_session(store.conn(), session, &now) {
                tracing::warn!("verifying recall evidence failed: {e}");
            }
            // What extraction's status kept of where the session has something to read is
            // trusted while its records end where they did when read, which a record rewritten
            // in place does not move (a blank answer given its words): read it again. What a
            // pass read is read again only from the lowest record changed in place, which the
            // queue row says until the relink below deletes it (None: the session only grew).
            let changed_from =
                archive::store::changed_from(store.conn(), session).unwrap_or_else(|e| {
                    // Unknown: as if every record changed (a unit read again, not one kept
                    // that no longer stands).
                    tracing::warn!("reading where a session changed failed: {e}");
                    Some(0)
                });
            if let Err(e) =
                recall::extract::store::forget_readable(store.conn(), session, changed_from)
            {
                tracing::warn!("forgetting where a session has something to read failed: {e}");
            }
        }
        match git::after_capture(store.conn_mut(), touched, prefetch, backlog) {
            Ok(stats) => tracing::debug!(
                sessions = stats.sessions,
                rebuilt = stats.rebuilt,
                records = stats.records_scanned,
                captures = stats.captures_compared,
                links = stats.links_written,
                "relinked"
            ),
            Err(e) => {
                tracing::warn!("linking sessions to git failed: {e}");
                match git::relink_failed(store.conn()) {
                    Ok(0) => {}
                    Ok(n) => tracing::warn!(
                        "{} failed to relink {} times; each is left as it is until it next changes",
                        crate::text::plural(n, "session"),
                        git::MAX_LINK_ATTEMPTS
                    ),
                    Err(e) => tracing::warn!("counting the failed relink failed: {e}"),
                }
            }
        }
    }

    /// After a sync's (or the watcher's) capture and link: a commit since the last check may
    /// have changed a file an accepted entry cites, found now rather than when someone thinks
    /// to ask, since a stale entry is served by no one. Cheap when no HEAD moved (one `git
    /// rev-parse` per repository). Not run by a hook, which an agent waits on every turn.
    /// What it flagged, if anything; a failure is logged and leaves each repository's place
    /// in its history as it was, for the next sync.
    fn check_stale(store: &mut Store) -> Option<recall::stale::Flagged> {
        match recall::stale::check_now(store.conn_mut()) {
            Ok(flagged) => (flagged.total() > 0).then_some(flagged),
            Err(e) => {
                tracing::warn!("checking recall entries for staleness failed: {e}");
                None
            }
        }
    }

    /// Where each agent's transcripts are read from, and whether those directories exist.
    pub fn source_dirs(&self) -> Vec<(discover::SourceDir, bool)> {
        Agent::ALL
            .iter()
            .flat_map(|a| discover::source_dirs(&self.config, *a))
            .map(|d| {
                let exists = d.path.is_dir();
                (d, exists)
            })
            .collect()
    }

    /// Set the source dirs of an agent in `config.toml` (an empty list restores the default),
    /// comments and every other key kept ([`Cairn::edit_config`]). Each must be an existing
    /// absolute directory outside the data dir, without control characters
    /// ([`config::check_source_dir`]); nothing is saved when one is not. Takes effect the next
    /// time the archive is opened.
    pub fn set_source_dirs(&self, agent: Agent, dirs: Vec<String>) -> Result<()> {
        self.writable()?;
        for dir in &dirs {
            config::check_source_dir(dir, &self.data_dir)?;
        }
        self.edit_config(
            |text| config::write_source_dirs(text, agent, &dirs),
            |_| Ok(()),
        )
        .map(|_| ())
    }

    /// What the outbound redactor makes of `text` (the privacy preview): the text as it would
    /// leave this machine, and what was removed.
    pub fn outbound_preview(&self, text: &str, repo_root: Option<&str>) -> OutboundPreview {
        let home = dirs::home_dir().map(|h| h.to_string_lossy().into_owned());
        let mut findings = Vec::new();
        let out = archive::redact::Redactor::global().outbound_text(
            text,
            repo_root,
            home.as_deref(),
            &mut findings,
        );
        OutboundPreview {
            text: out,
            removed: findings
                .into_iter()
                .map(|f| Removed {
                    rule: f.rule.to_owned(),
                    start: f.start as u32,
                    end: f.end as u32,
                })
                .collect(),
        }
    }
}

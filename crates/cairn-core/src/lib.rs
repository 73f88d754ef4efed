//! Cairn's core: everything the CLI, the hook and the desktop app do, with no UI in it.
//!
//! Data flows one way: transcript file → [`archive::sources`] (one adapter per agent) →
//! records → [`archive::redact`] → [`archive::store`] (SQLite + FTS5) → views. The [`Cairn`]
//! facade is the only entry point the front doors use.

#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used))]

pub mod archive;
pub mod atomic;
pub mod config;
pub mod doctor;
pub mod error;
pub mod git;
pub mod hooks;
pub mod insights;
mod insights_facade;
pub mod keys;
pub mod llm;
pub mod private;
pub mod recall;
pub mod semantic;
pub mod text;
pub mod views;

pub use error::{Error, Result};

use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

use archive::Agent;
use archive::capture::{self, Progress, SyncReport, Trigger};
use archive::discover::{self, FoundFile};
use archive::store::{DB_FILE, Store};
use config::Config;
use doctor::{Check, DoctorReport, Status};
use semantic::vectors::VectorStore;
use views::search::{SearchHit, SearchQuery};
use views::sessions::{SessionQuery, SessionSummary};

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

impl Cairn {
    /// Open (creating if needed) the archive in `data_dir`. A data dir that cannot be written
    /// is opened read-only when it already holds an archive.
    ///
    /// The data dir is the user's alone ([`private`]): created 0700, and on a writable open
    /// what is in it is tightened (its top level every time; everything below when the dir or
    /// the database was open to others, as an older Cairn left them).
    pub fn open(data_dir: impl Into<PathBuf>) -> Result<Cairn> {
        let data_dir = data_dir.into();
        let config = Config::load(&data_dir)?;
        let db = data_dir.join(DB_FILE);
        let real = private::resolved(&data_dir);
        let loose = private::is_open(&real) || private::is_open(&real.join(DB_FILE));
        let created = private::create_dir_all(&data_dir);
        let mut no_room = None;
        let (store, read_only) = match created
            .map_err(|e| Error::write_in(&data_dir, &data_dir, e))
            .and_then(|_| Store::open(&db))
        {
            Ok(store) => (store, false),
            Err(err) if db.exists() => match Store::open_read_only(&db) {
                Ok(store) => {
                    if let Error::DiskFull { file, why, .. } = &err {
                        no_room = Some((file.clone(), *why));
                    }
                    (store, true)
                }
                Err(_) => return Err(err),
            },
            Err(err) => return Err(err),
        };
        if !read_only {
            for (path, e) in private::tighten_data_dir(&data_dir, loose) {
                tracing::warn!("cannot make {} private: {e}", path.display());
            }
        }
        let semantic = semantic::Runtime::new(&config.embeddings, &data_dir);
        Ok(Cairn {
            data_dir,
            config,
            store: Mutex::new(store),
            read_only,
            no_room,
            semantic,
        })
    }

    /// `$CAIRN_DATA_DIR`, else the platform data dir (`~/.local/share/cairn` on Linux).
    pub fn default_data_dir() -> Option<PathBuf> {
        match std::env::var_os("CAIRN_DATA_DIR") {
            Some(dir) if !dir.is_empty() => Some(PathBuf::from(dir)),
            _ => dirs::data_dir().map(|d| d.join("cairn")),
        }
    }

    pub fn data_dir(&self) -> &Path {
        &self.data_dir
    }

    pub fn config(&self) -> &Config {
        &self.config
    }

    pub fn is_read_only(&self) -> bool {
        self.read_only
    }

    fn store(&self) -> MutexGuard<'_, Store> {
        // A panic while holding the lock leaves SQLite consistent (transactions roll back).
        self.store
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// A connection of its own for a long write (a sync, the watcher's capture), so the
    /// shared one stays free for reads meanwhile: WAL lets readers see the last committed
    /// batch while the writer works. Concurrent writers queue on the capture lock.
    fn writer(&self) -> Result<Store> {
        let store = Store::open(&self.data_dir.join(DB_FILE))?;
        // The writer reads only the B-tree pages its inserts walk, which its page cache holds;
        // a memory map of the whole file made a 1 GB sync's resident size grow with the
        // database (up to the 256 MB window) for no speed.
        store
            .conn()
            .execute_batch("PRAGMA mmap_size = 0;")
            .map_err(|e| store.err(e))?;
        Ok(store)
    }

    /// Bound the memory the shared connection keeps for reads: at most `mmap_bytes` of the
    /// archive mapped (0: none, every page is read into the page cache instead) and a page
    /// cache of at most `cache_kib` KiB.
    ///
    /// For a long-lived front door that reads a little at a time (the desktop window): every
    /// mapped page it ever touched counts in its resident size for as long as it runs, while
    /// the operating system's file cache keeps those pages at hand anyway. The CLI keeps the
    /// defaults (a 256 MB map, a 32 MB cache), which suit one big read and exit.
    pub fn limit_read_memory(&self, mmap_bytes: u64, cache_kib: u32) -> Result<()> {
        let store = self.store();
        store
            .conn()
            .execute_batch(&format!(
                "PRAGMA mmap_size = {mmap_bytes}; PRAGMA cache_size = -{cache_kib};"
            ))
            .map_err(|e| store.err(e))
    }

    /// True when nothing has been captured yet (the desktop's first-run page).
    pub fn is_empty(&self) -> Result<bool> {
        let store = self.store();
        store
            .conn()
            .query_row("SELECT NOT EXISTS (SELECT 1 FROM sessions)", [], |r| {
                r.get(0)
            })
            .map_err(|e| store.err(e))
    }

    fn writable(&self) -> Result<()> {
        if let Some((file, why)) = &self.no_room {
            return Err(Error::DiskFull {
                dir: self.data_dir.clone(),
                file: file.clone(),
                why: *why,
            });
        }
        if self.read_only {
            return Err(Error::Invalid(format!(
                "{} is read-only: capture needs a writable data dir (pass --data-dir or set CAIRN_DATA_DIR)",
                self.data_dir.display()
            )));
        }
        Ok(())
    }

    /// The transcript files a sync would read, and problems met finding them.
    pub fn discover(&self, opts: &SyncOptions) -> (Vec<FoundFile>, Vec<capture::Warning>) {
        let mut files = Vec::new();
        let mut warnings = Vec::new();
        for agent in Agent::ALL {
            let wanted = if opts.agents.is_empty() {
                self.config.agent_enabled(agent)
            } else {
                opts.agents.contains(&agent)
            };
            if !wanted {
                continue;
            }
            for dir in discover::source_dirs(&self.config, agent) {
                let mut walk_warnings = Vec::new();
                files.extend(discover::walk(&dir, &mut walk_warnings));
                warnings.extend(walk_warnings.into_iter().map(|w| capture::Warning {
                    path: w.path.display().to_string(),
                    line: None,
                    message: w.message,
                }));
            }
        }
        (files, warnings)
    }

    /// Discover every transcript under the source dirs and ingest what is new.
    pub fn sync(&self, opts: &SyncOptions, progress: &dyn Progress) -> Result<SyncReport> {
        self.writable()?;
        let (files, mut warnings) = self.discover(opts);
        let mut store = self.writer()?;
        let (mut report, touched) =
            capture::capture_many(&mut store, &self.data_dir, &files, Trigger::Sync, progress)?;
        self.link(&mut store, &touched, None);
        warnings.append(&mut report.warnings);
        report.warnings = warnings;
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
        let (report, touched) =
            capture::capture_many(&mut store, &self.data_dir, files, Trigger::Sync, progress)?;
        self.link(&mut store, &touched, None);
        Ok(report)
    }

    /// The agent hook: `input` is the hook JSON the agent wrote on stdin. Relative transcript
    /// paths resolve against the payload's `cwd`, else `base_dir`. Returns `None` when the
    /// payload names no transcript (nothing to do).
    pub fn hook(
        &self,
        input: &str,
        agent: Option<Agent>,
        base_dir: &Path,
    ) -> Result<Option<SyncReport>> {
        self.hook_parsed(hooks::HookInput::parse(input)?, agent, base_dir)
    }

    /// [`Cairn::hook`] with the payload parsed beforehand: a front door parses it before
    /// opening the archive so that the git reads it starts overlap the opening too.
    pub fn hook_parsed(
        &self,
        input: hooks::HookInput,
        agent: Option<Agent>,
        base_dir: &Path,
    ) -> Result<Option<SyncReport>> {
        let hooks::HookInput { payload, prefetch } = input;
        let Some(transcript) = payload
            .get("transcript_path")
            .and_then(|v| v.as_str())
            .filter(|s| !s.is_empty())
        else {
            return Ok(None);
        };
        self.writable()?;
        let base = payload
            .get("cwd")
            .and_then(|v| v.as_str())
            .filter(|s| !s.is_empty())
            .map_or_else(|| base_dir.to_owned(), PathBuf::from);
        let (agent, path) = hooks::accept_transcript(&self.config, &base.join(transcript), agent)?;
        let mut files: Vec<FoundFile> = discover::classify(agent, &path).into_iter().collect();
        if files.is_empty() {
            files.push(FoundFile {
                agent,
                role: archive::sources::FileRole::Main,
                path: path.clone(),
                parent_hint: None,
                agent_id: None,
            });
        }
        if agent == Agent::Claude && files[0].role == archive::sources::FileRole::Main {
            // Its sub-agents' files, held to the same rule (`subagents/` could be a symlink).
            let dirs = discover::source_dirs(&self.config, agent);
            files.extend(
                discover::claude_subagent_files(&path)
                    .into_iter()
                    .filter(|f| dirs.iter().any(|d| discover::holds(&d.path, &f.path))),
            );
        }
        let mut store = self.store();
        let (report, touched) =
            capture::capture_files(&mut store, &self.data_dir, &files, Trigger::Hook)?;
        self.link(&mut store, &touched, prefetch);
        Ok(Some(report))
    }

    /// Snapshot the repositories of freshly captured sessions and relink them. Capture has
    /// already succeeded: a failure here is logged, never lost work.
    fn link(
        &self,
        store: &mut Store,
        touched: &capture::Touched,
        prefetch: Option<git::snapshot::Prefetch>,
    ) {
        // Evidence anchored in these sessions must still say what it said: the touched ones,
        // and those an earlier capture stored but never relinked (it died first). Verified
        // before the relink, which is what takes a session off the pending list.
        let sessions =
            git::sessions_to_relink(store.conn(), &touched.sessions).unwrap_or_else(|e| {
                tracing::warn!("reading the sessions left to relink failed: {e}");
                touched.sessions.clone()
            });
        let now = capture::now();
        for &session in &sessions {
            if let Err(e) = recall::evidence::verify_session(store.conn(), session, &now) {
                tracing::warn!("verifying recall evidence failed: {e}");
            }
        }
        match git::after_capture(store.conn_mut(), touched, prefetch) {
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
                        "{n} session(s) failed to relink {} times and are left as they are until they next change",
                        git::MAX_LINK_ATTEMPTS
                    ),
                    Err(e) => tracing::warn!("counting the failed relink failed: {e}"),
                }
            }
        }
    }

    /// Top-level sessions, newest first.
    pub fn sessions(&self, query: &SessionQuery) -> Result<Vec<SessionSummary>> {
        let store = self.store();
        views::sessions::list(store.conn(), query).map_err(|e| store.err(e))
    }

    /// Publish the redacted metadata of the sessions related to `target` under `refs/cairn/` in
    /// the repository at `dir`.
    pub fn publish(
        &self,
        dir: &Path,
        target: &git::targets::Target,
        dry_run: bool,
    ) -> Result<git::publish::PublishReport> {
        let repo = git::repo::Repo::discover(dir)?;
        let store = self.store();
        let now = capture::now();
        git::publish::publish(store.conn(), &repo, target, dry_run, &now)
    }

    /// Push this machine's own published refs (`refs/cairn/sessions/*` of sessions this
    /// archive captured) of the repository at `dir` to `remote`.
    pub fn push(&self, dir: &Path, remote: &str) -> Result<git::publish::PushReport> {
        let repo = git::repo::Repo::discover(dir)?;
        let store = self.store();
        git::publish::push(store.conn(), &repo, remote)
    }

    /// Fetch `remote`'s published documents into `refs/cairn/remotes/<remote>/` and import
    /// those that pass the checks (the others are listed in the report).
    pub fn pull(&self, dir: &Path, remote: &str) -> Result<git::publish::PullReport> {
        self.writable()?;
        let repo = git::repo::Repo::discover(dir)?;
        let store = self.store();
        git::publish::pull(store.conn(), &repo, remote, &capture::now())
    }

    /// One session in detail, by `session_key` or the agent's own session id.
    pub fn session(&self, key_or_id: &str) -> Result<views::session::SessionDetail> {
        let store = self.store();
        let id = views::session::resolve(store.conn(), key_or_id)
            .map_err(|e| store.err(e))?
            .ok_or_else(|| {
                Error::NotFound(format!(
                    "session {key_or_id:?}; list sessions with `cairn sessions`"
                ))
            })?;
        views::session::detail(store.conn(), id).map_err(|e| store.err(e))
    }

    /// The target `skim` uses when none is given: the branch checked out in `dir` (the applied
    /// branch of a GitButler workspace when exactly one is applied).
    pub fn default_target(&self, dir: &Path) -> Result<git::targets::Target> {
        let repo = git::repo::Repo::discover(dir)?;
        match repo.head()? {
            git::repo::Head::Branch { name, .. } if !name.starts_with("gitbutler/") => {
                Ok(git::targets::Target::branch(&name))
            }
            git::repo::Head::Branch { .. } => Err(Error::Invalid(format!(
                "{} is a GitButler workspace with several branches; pass one: cairn skim branch <name>",
                repo.root.display()
            ))),
            git::repo::Head::Detached { commit } => Err(Error::Invalid(format!(
                "HEAD is detached at {} in {}; pass a target: cairn skim branch <name>",
                &commit[..commit.len().min(7)],
                repo.root.display()
            ))),
        }
    }

    /// Every session related to a target, and every turn, abbreviated.
    /// With `published_in`, sessions teammates published in that directory's repository are
    /// listed too (a directory outside any repository lists none).
    pub fn skim(&self, query: &views::skim::SkimQuery) -> Result<views::skim::SkimView> {
        let published = query
            .published_in
            .as_deref()
            .and_then(|d| git::repo::Repo::discover(Path::new(d)).ok())
            .map(|r| r.common_dir.to_string_lossy().into_owned());
        let store = self.store();
        views::skim::skim(store.conn(), query, published.as_deref()).map_err(|e| store.err(e))
    }

    fn session_row(&self, store: &Store, key_or_id: &str) -> Result<i64> {
        views::session::resolve(store.conn(), key_or_id)
            .map_err(|e| store.err(e))?
            .ok_or_else(|| {
                Error::NotFound(format!(
                    "session {key_or_id:?}; find sessions with `cairn sessions` or `cairn skim`"
                ))
            })
    }

    /// A session's last `limit` turns.
    pub fn show_session(
        &self,
        key_or_id: &str,
        limit: u32,
    ) -> Result<views::show::SessionTimeline> {
        let store = self.store();
        let row = self.session_row(&store, key_or_id)?;
        views::show::timeline(store.conn(), row, limit).map_err(|e| store.err(e))
    }

    /// The last `limit` records of one turn (by turn key or index).
    pub fn show_turn(
        &self,
        key_or_id: &str,
        turn: &str,
        limit: u32,
    ) -> Result<views::show::TurnRecords> {
        let store = self.store();
        let row = self.session_row(&store, key_or_id)?;
        let (turn_id, _, _) = views::show::resolve_turn(store.conn(), row, turn)
            .map_err(|e| store.err(e))?
            .ok_or_else(|| Error::NotFound(format!("turn {turn:?} in session {key_or_id:?}; list turns with `cairn show {key_or_id}`")))?;
        views::show::turn_records(store.conn(), row, turn_id, limit).map_err(|e| store.err(e))
    }

    /// Records of a session by ordinal range (anchors of evidence links).
    pub fn records(
        &self,
        key_or_id: &str,
        from: u32,
        to: u32,
    ) -> Result<Vec<views::show::RecordView>> {
        let store = self.store();
        let row = self.session_row(&store, key_or_id)?;
        views::show::records_range(store.conn(), row, from, to).map_err(|e| store.err(e))
    }

    // ---- Recall ---------------------------------------------------------------------------

    /// Entries passing the filters, most recently updated first.
    pub fn recall_list(
        &self,
        filters: &recall::store::Filters,
    ) -> Result<Vec<recall::model::Entry>> {
        let store = self.store();
        recall::store::list(store.conn(), filters)
    }

    /// One entry, any status.
    pub fn recall_get(&self, id: &str) -> Result<recall::model::Entry> {
        let store = self.store();
        recall::store::get(store.conn(), id)
            .map_err(|e| store.err(e))?
            .ok_or_else(|| {
                Error::NotFound(format!(
                    "recall entry {id:?}; list entries with `cairn recall list`"
                ))
            })
    }

    /// Aggregates over the entries passing the filters.
    pub fn recall_stats(&self, filters: &recall::store::Filters) -> Result<recall::RecallStats> {
        let store = self.store();
        recall::stats(store.conn(), filters)
    }

    /// Ranked retrieval. Recorded in the ledger (surface `query`, `brief` or `ui`) unless the
    /// data dir is read-only; the response carries the query id when it was recorded.
    pub fn recall_query(
        &self,
        req: &recall::QueryRequest,
        surface: &str,
    ) -> Result<recall::QueryResponse> {
        let store = self.store();
        let now = jiff::Timestamp::now();
        let mut resp = if req.mode.is_semantic() && !req.text.trim().is_empty() {
            let matrix = self.fresh_matrix(&store, VectorStore::Recall)?;
            let pending = recall::hybrid::PendingQuery {
                matrix: &matrix,
                embed: Box::new(|| self.semantic.embed_query(&req.text)),
            };
            recall::query(store.conn(), req, now.as_second(), Some(pending))?
        } else {
            recall::query(store.conn(), req, now.as_second(), None)?
        };
        if !self.read_only {
            let packed: Vec<String> = resp
                .context
                .as_ref()
                .map(|c| c.entry_ids.clone())
                .unwrap_or_default();
            let event = recall::ledger::Event {
                surface,
                query: &req.text,
                mode: req.mode.as_str(),
                filters_json: serde_json::to_string(&req.filters).unwrap_or_else(|_| "{}".into()),
                trusted_only: req.filters.trusted_only,
                policy: recall::policy(req.mode),
                ranked: &resp.results,
                packed: &packed,
                miss_reason: &resp.miss_reason,
                session_key: req.session_key.as_deref(),
            };
            match recall::ledger::record(store.conn(), &event, &capture::now()) {
                Ok(id) => resp.query_id = Some(id),
                Err(e) => tracing::warn!("recall ledger: {e}"),
            }
        }
        Ok(resp)
    }

    /// Ranked entries without recording the query (browsing, not asking).
    pub fn recall_rank(&self, req: &recall::QueryRequest) -> Result<Vec<recall::rank::Ranked>> {
        let store = self.store();
        recall::rank::rank(
            store.conn(),
            &req.text,
            &req.filters,
            jiff::Timestamp::now().as_second(),
        )
    }

    /// Import reviewed JSONL. Atomic: nothing is written when any line has an error, or in a
    /// dry run.
    pub fn recall_import(&self, text: &str, dry_run: bool) -> Result<recall::import::ImportReport> {
        self.writable()?;
        let mut store = self.store();
        let path = store.path().to_owned();
        let tx = store
            .conn_mut()
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(|e| archive::store::db_err(&path, e))?;
        let report = recall::import::apply(&tx, text, dry_run, &capture::now())?;
        if dry_run || !report.errors.is_empty() {
            tx.rollback()
                .map_err(|e| archive::store::db_err(&path, e))?;
        } else {
            tx.commit().map_err(|e| archive::store::db_err(&path, e))?;
            self.refresh_on_write(&mut store);
        }
        Ok(report)
    }

    /// Run a review action in one transaction.
    fn review<T>(&self, f: impl FnOnce(&rusqlite::Connection, &str) -> Result<T>) -> Result<T> {
        self.writable()?;
        let mut store = self.store();
        let path = store.path().to_owned();
        let tx = store
            .conn_mut()
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(|e| archive::store::db_err(&path, e))?;
        let out = f(&tx, &capture::now())?;
        tx.commit().map_err(|e| archive::store::db_err(&path, e))?;
        self.refresh_on_write(&mut store);
        Ok(out)
    }

    /// The review inbox: unreviewed, stale and provenance-revoked entries.
    pub fn recall_inbox(&self, limit: u32) -> Result<Vec<recall::review::InboxItem>> {
        let store = self.store();
        recall::review::queue(store.conn(), limit)
    }

    /// Accept an entry (editing it first when `edit` is given): it becomes human reviewed.
    pub fn recall_accept(
        &self,
        id: &str,
        edit: Option<&recall::review::Edit>,
    ) -> Result<recall::model::Entry> {
        self.review(|c, now| recall::review::accept(c, id, edit, now))
    }

    /// Reject an entry: archived.
    pub fn recall_reject(&self, id: &str) -> Result<recall::model::Entry> {
        self.review(|c, now| recall::review::reject(c, id, now))
    }

    /// Replace `old` with `new`.
    pub fn recall_supersede(&self, old: &str, new: &str) -> Result<()> {
        self.review(|c, now| recall::review::supersede(c, old, new, now))
    }

    /// Merge `duplicate` into `keep`.
    pub fn recall_merge(&self, duplicate: &str, keep: &str) -> Result<recall::model::Entry> {
        self.review(|c, now| recall::review::merge(c, duplicate, keep, now))
    }

    /// Flag entries whose cited files changed in later commits; returns how many.
    pub fn recall_check_stale(&self) -> Result<u32> {
        self.review(|c, now| {
            recall::stale::check(c, &mut git::associate::RepoCache::default(), now)
        })
    }

    /// Entries whose evidence lies in a session (the session's Recall panel).
    pub fn recall_for_session(&self, key_or_id: &str) -> Result<Vec<recall::model::Entry>> {
        let store = self.store();
        let row = self.session_row(&store, key_or_id)?;
        let ids: Vec<String> = store
            .conn()
            .prepare_cached("SELECT DISTINCT entry_id FROM recall_evidence WHERE session_id = ?1")
            .and_then(|mut s| s.query_map([row], |r| r.get(0))?.collect())
            .map_err(|e| store.err(e))?;
        let mut out = Vec::new();
        for id in ids {
            if let Some(e) = recall::store::get(store.conn(), &id).map_err(|e| store.err(e))? {
                out.push(e);
            }
        }
        out.sort_by(|a, b| b.updated_at.cmp(&a.updated_at));
        Ok(out)
    }

    // ---- Recall extraction ----------------------------------------------------------------

    /// `<data dir>/config.toml`, named by configuration errors.
    pub fn config_path(&self) -> PathBuf {
        self.data_dir.join(config::CONFIG_FILE)
    }

    /// `[recall.extract]`, validated. Errors name the config file and the key to fix.
    pub fn extract_settings(&self) -> Result<recall::extract::Settings> {
        self.config.recall.extract.resolve(&self.config_path())
    }

    /// A client for the configured extraction server (reads the API key variable now).
    fn extract_client(&self, settings: &recall::extract::Settings) -> Result<llm::Client> {
        let (name, server) = settings.runnable()?;
        llm::Client::new(server).map_err(|e| Error::Config {
            path: self.config_path(),
            message: format!("recall.extract.servers.{name}.api_key_env: {e}"),
        })
    }

    /// Size and cost of what `recall_extract_run` with `scope` would send. Nothing is sent, and
    /// extraction need not be enabled.
    pub fn recall_extract_preview(
        &self,
        scope: &recall::extract::Scope,
    ) -> Result<recall::extract::Preview> {
        let settings = self.extract_settings()?;
        let store = self.store();
        recall::extract::preview(store.conn(), &settings, scope, &capture::now())
    }

    /// One extraction pass over the sessions in scope (see [`recall::extract::run`]). One pass
    /// at a time per data dir (`extract.lock`); `progress` receives events from worker threads.
    pub fn recall_extract_run(
        &self,
        opts: &recall::extract::RunOptions,
        progress: &dyn recall::extract::ExtractProgress,
    ) -> Result<recall::extract::RunReport> {
        self.writable()?;
        opts.scope.validate()?;
        let settings = self.extract_settings()?;
        let client = self.extract_client(&settings)?;
        let identity = settings.identity().ok_or_else(|| Error::Config {
            path: self.config_path(),
            message: "recall.extract.model: is required; name the model the server serves".into(),
        })?;
        let lock_path = self.data_dir.join("extract.lock");
        let lock = private::open_options()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock_path)
            .map_err(|e| Error::Write {
                path: lock_path.clone(),
                source: e,
            })?;
        match lock.try_lock() {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) => {
                return Err(Error::Invalid(format!(
                    "another extraction pass is running on {} (it holds {}); wait for it to finish",
                    self.data_dir.display(),
                    lock_path.display()
                )));
            }
            Err(std::fs::TryLockError::Error(e)) => {
                return Err(Error::Write {
                    path: lock_path,
                    source: e,
                });
            }
        }
        let pass = recall::extract::run::Pass {
            db: &self.store,
            settings: &settings,
            identity: &identity,
            client: &client,
            progress,
            now: capture::now(),
        };
        let report = pass.run(opts);
        let _ = lock.unlock();
        report
    }

    /// Where extraction stands: the configured generation, coverage, all generations, the last
    /// pass, recent failures. Read-only; works with extraction disabled.
    pub fn recall_extract_status(&self) -> Result<recall::extract::ExtractStatus> {
        let settings = self.extract_settings()?;
        let store = self.store();
        recall::extract::status(store.conn(), &settings)
    }

    /// Every generation, newest first, with counts (the configured one is marked).
    pub fn recall_extract_generations(&self) -> Result<Vec<recall::extract::Generation>> {
        let settings = self.extract_settings()?;
        let store = self.store();
        recall::extract::store::generations(store.conn(), settings.fingerprint().as_deref())
    }

    /// Coverage of each project by the configured generation (empty without a model).
    pub fn recall_extract_coverage(&self) -> Result<Vec<recall::extract::ProjectCoverage>> {
        let settings = self.extract_settings()?;
        let Some(fp) = settings.fingerprint() else {
            return Ok(Vec::new());
        };
        let store = self.store();
        recall::extract::store::coverage(store.conn(), &fp)
    }

    /// Activate the configured generation: serve its entries, retire the active one.
    pub fn recall_extract_activate(&self) -> Result<recall::extract::Lifecycle> {
        let settings = self.extract_settings()?;
        let fp = settings.fingerprint().ok_or_else(|| Error::Config {
            path: self.config_path(),
            message: "recall.extract.model: no model is configured, so there is no generation to activate".into(),
        })?;
        let cutoff = recall::extract::ts_minus(&capture::now(), settings.quiet_period_ms);
        self.review(|c, now| recall::extract::store::activate(c, &fp, &cutoff, now))
    }

    /// Retire a generation (by fingerprint or a unique prefix of at least 6 characters): its
    /// unreviewed entries are archived. The active generation needs `force`.
    pub fn recall_extract_retire(
        &self,
        fingerprint: &str,
        force: bool,
    ) -> Result<recall::extract::Lifecycle> {
        self.review(|c, now| recall::extract::store::retire(c, fingerprint, force, now))
    }

    /// Check the extraction setup with real calls: `/models` and one tiny extraction.
    /// Doesn't need `enabled`: checking the server is how one decides to enable it.
    pub fn recall_extract_doctor(&self) -> Result<recall::extract::ExtractDoctor> {
        let mut settings = self.extract_settings()?;
        if settings.model.is_empty() {
            return Err(Error::Config {
                path: self.config_path(),
                message: "recall.extract.model: is required; name the model the server serves"
                    .into(),
            });
        }
        settings.enabled = true;
        let client = self.extract_client(&settings)?;
        Ok(recall::extract::doctor(&settings, &client))
    }

    /// The scheduling policy of the configured extraction (for a daemon's
    /// [`recall::extract::schedule::Scheduler`]); `None` when extraction is disabled.
    pub fn recall_extract_schedule_policy(
        &self,
    ) -> Result<Option<recall::extract::schedule::Policy>> {
        let settings = self.extract_settings()?;
        Ok(settings
            .enabled
            .then(|| recall::extract::schedule::Policy::from_settings(&settings)))
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

    // ---- Semantic search ------------------------------------------------------------------

    /// Also look for the embedding model under `dir` (the desktop passes its resource dir).
    pub fn set_resource_dir(&self, dir: &Path) {
        self.semantic.set_resource_dir(dir.to_owned());
    }

    /// Use `embedder` instead of the configured one (tests, or a front door with its own).
    pub fn set_embedder(&self, embedder: std::sync::Arc<dyn semantic::embed::Embedder>) {
        self.semantic.set_embedder(embedder);
    }

    /// The fresh matrix of `store` and the embedding of `text`, or the typed error saying why
    /// semantic search cannot run (model missing, vectors stale).
    fn semantic_query(
        &self,
        store: &Store,
        which: VectorStore,
        text: &str,
    ) -> Result<(
        std::sync::Arc<semantic::vectors::Matrix>,
        std::sync::Arc<[f32]>,
    )> {
        let matrix = self.fresh_matrix(store, which)?;
        let query = self.semantic.embed_query(text)?;
        Ok((matrix, query))
    }

    /// The fresh matrix of `store`, or the typed error saying why semantic search cannot run.
    fn fresh_matrix(
        &self,
        store: &Store,
        which: VectorStore,
    ) -> Result<std::sync::Arc<semantic::vectors::Matrix>> {
        let fingerprint = self.semantic.store_fingerprint(which)?;
        let state = semantic::vectors::check_fresh(store.conn(), which, &fingerprint)?;
        self.semantic.cache.get(store.conn(), &state)
    }

    /// Forget the cached query embeddings (the next query of each text runs the model again).
    pub fn clear_query_cache(&self) {
        self.semantic.clear_query_cache();
    }

    /// After a write to Recall: embed what changed, when the embedder refreshes on write (the
    /// local model) and the change is small enough not to stall the write
    /// ([`semantic::REFRESH_ON_WRITE_MAX`]; larger ones wait for `cairn embeddings build`). The
    /// write has succeeded either way: a failure here only leaves vector search refusing until
    /// a build, and is logged.
    fn refresh_on_write(&self, store: &mut Store) {
        if !self.semantic.refreshes_on_write() {
            return;
        }
        let result = (|| -> Result<Option<semantic::vectors::BuildReport>> {
            let fingerprint = match self.semantic.store_fingerprint(VectorStore::Recall) {
                Ok(f) => f,
                // No model: lexical search is unaffected; vector search says what to do.
                Err(Error::ModelMissing { .. }) => return Ok(None),
                Err(e) => return Err(e),
            };
            let state = semantic::vectors::state(store.conn(), VectorStore::Recall)?;
            if state.is_fresh(&fingerprint) {
                return Ok(None);
            }
            let pending =
                semantic::vectors::pending_count(store.conn(), VectorStore::Recall, &fingerprint)?;
            if pending > semantic::REFRESH_ON_WRITE_MAX {
                tracing::info!(
                    "{pending} recall entries need vectors: more than a write refreshes; run `cairn embeddings build --store recall`"
                );
                return Ok(None);
            }
            let embedder = self.semantic.embedder()?;
            semantic::vectors::build(
                store.conn_mut(),
                VectorStore::Recall,
                &*embedder,
                false,
                &|_, _| {},
            )
            .map(Some)
        })();
        if let Err(e) = result {
            tracing::warn!("refreshing recall vectors after a write failed: {e}");
        }
    }

    /// Embed what lacks a current vector in `store` (everything, with `force`). This is the
    /// consent to send the text to a configured endpoint (redacted); the local model sends
    /// nothing anywhere.
    pub fn embeddings_build(
        &self,
        which: VectorStore,
        force: bool,
        progress: &dyn Fn(u64, u64),
    ) -> Result<semantic::vectors::BuildReport> {
        self.writable()?;
        let embedder = self.semantic.embedder()?;
        let mut store = self.store();
        semantic::vectors::build(store.conn_mut(), which, &*embedder, force, progress)
    }

    /// The embedder and the freshness of each vector store. Never loads the model.
    pub fn embeddings_status(&self) -> Result<semantic::EmbeddingsStatus> {
        let store = self.store();
        let fingerprint = self.semantic.embedder_fingerprint();
        let mut stores = Vec::new();
        for which in VectorStore::ALL {
            let state = semantic::vectors::state(store.conn(), which)?;
            let (fresh, vectors, pending) = match &fingerprint {
                Ok(fp) => {
                    let sfp = semantic::vectors::store_fingerprint(which, fp);
                    (
                        state.is_fresh(&sfp),
                        semantic::vectors::vector_count(store.conn(), which, &sfp)?,
                        Some(semantic::vectors::pending_count(store.conn(), which, &sfp)?),
                    )
                }
                Err(_) => (
                    false,
                    semantic::vectors::vector_count(store.conn(), which, &state.fingerprint)?,
                    None,
                ),
            };
            stores.push(semantic::StoreStatus {
                store: which,
                fresh,
                vectors: vectors as u32,
                pending: pending.map(|p| p as u32),
                built_fingerprint: state.fingerprint,
                built_at: state.built_at,
                build_command: which.build_command(),
            });
        }
        Ok(semantic::EmbeddingsStatus {
            provider: match self.semantic.provider() {
                config::EmbeddingsProvider::Local => "local".into(),
                config::EmbeddingsProvider::Endpoint => "endpoint".into(),
            },
            refresh_on_write: self.semantic.refreshes_on_write(),
            fingerprint: fingerprint.as_ref().ok().cloned(),
            problem: fingerprint.err().map(|e| e.to_string()),
            model_candidates: self
                .semantic
                .model_candidates()
                .iter()
                .map(|p| p.display().to_string())
                .collect(),
            stores,
        })
    }

    /// Repositories and branches with agent activity.
    pub fn branches(&self) -> Result<Vec<views::branches::RepoBranches>> {
        let store = self.store();
        views::branches::list(store.conn()).map_err(|e| store.err(e))
    }

    /// The index of the turn holding record `ordinal` of a session (for record anchors).
    pub fn turn_of_record(&self, key_or_id: &str, ordinal: u32) -> Result<Option<u32>> {
        let store = self.store();
        let row = self.session_row(&store, key_or_id)?;
        store
            .conn()
            .query_row(
                "SELECT t.turn_index FROM records r JOIN turns t ON t.id = r.turn_id WHERE r.session_id = ?1 AND r.ordinal = ?2",
                rusqlite::params![row, ordinal],
                |r| r.get::<_, i64>(0),
            )
            .map(|i| Some(views::sessions::count(i)))
            .or_else(|e| if matches!(e, rusqlite::Error::QueryReturnedNoRows) { Ok(None) } else { Err(store.err(e)) })
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

    /// Set the source dirs of an agent in `config.toml` (an empty list restores the default).
    /// Each must be an existing absolute directory outside the data dir, without control
    /// characters ([`config::check_source_dir`]); nothing is saved when one is not.
    /// Takes effect the next time the archive is opened.
    pub fn set_source_dirs(&self, agent: Agent, dirs: Vec<String>) -> Result<()> {
        self.writable()?;
        for dir in &dirs {
            config::check_source_dir(dir, &self.data_dir)?;
        }
        let mut config = Config::load(&self.data_dir)?;
        config.set_source_dirs(agent, dirs);
        config.save(&self.data_dir)
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

    /// Search the archive: full text over records (lexical), or by meaning over turns (vector,
    /// hybrid; needs the `sessions` vectors, see [`Cairn::embeddings_build`]).
    pub fn search(&self, query: &SearchQuery) -> Result<Vec<SearchHit>> {
        let store = self.store();
        let found = if query.mode.is_semantic() && !query.text.trim().is_empty() {
            let (matrix, vector) =
                self.semantic_query(&store, VectorStore::Sessions, &query.text)?;
            views::search::semantic(store.conn(), query, &matrix, &vector)
        } else {
            views::search::search(store.conn(), query)
        };
        found.map_err(|e| match e {
            rusqlite::Error::SqliteFailure(_, Some(msg)) if query.text.trim_start().starts_with('"') || msg.contains("fts5") => Error::Invalid(format!(
                "cannot search for {:?}: {msg}; drop the leading quote to search for plain words",
                query.text
            )),
            other => store.err(other),
        })
    }

    /// Add Cairn's capture hook (running `command`) to an agent's settings.
    pub fn install_hook(
        &self,
        agent: Agent,
        command: &str,
        dry_run: bool,
    ) -> Result<hooks::HookInstall> {
        let home = dirs::home_dir()
            .ok_or_else(|| Error::Invalid("cannot find the home directory (set HOME)".into()))?;
        hooks::install(agent, &home, command, dry_run)
    }

    /// Install Cairn's skill (how to catch up: skim, then show) for an agent.
    pub fn install_skill(&self, agent: Agent, dry_run: bool) -> Result<hooks::SkillInstall> {
        let home = dirs::home_dir()
            .ok_or_else(|| Error::Invalid("cannot find the home directory (set HOME)".into()))?;
        hooks::install_skill(agent, &home, dry_run)
    }

    /// Whether each agent's settings run Cairn's hook.
    pub fn hook_status(&self) -> Vec<hooks::HookStatus> {
        dirs::home_dir()
            .map(|home| {
                hooks::HOOKED
                    .iter()
                    .map(|a| hooks::status(*a, &home))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Health checks: data dir, database (its counts and `quick_check`), who can read the data
    /// dir, source dirs, retention, hooks.
    pub fn doctor(&self) -> DoctorReport {
        let mut checks = vec![Check {
            name: "data dir".into(),
            status: if self.read_only {
                Status::Warn
            } else {
                Status::Ok
            },
            detail: if self.read_only {
                format!(
                    "{} (read-only: reading works, capture does not)",
                    self.data_dir.display()
                )
            } else {
                self.data_dir.display().to_string()
            },
        }];
        // Checked on a connection of its own, before the shared one is taken: reads go on.
        let damage = doctor::damage(&self.data_dir.join(DB_FILE));
        {
            let store = self.store();
            let stats = store.conn().query_row(
                "SELECT (SELECT COUNT(*) FROM sessions), (SELECT COUNT(*) FROM records),
                        (SELECT COUNT(*) FROM warnings), (SELECT COUNT(*) FROM secret_findings)",
                [],
                |r| {
                    Ok((
                        r.get::<_, i64>(0)?,
                        r.get::<_, i64>(1)?,
                        r.get::<_, i64>(2)?,
                        r.get::<_, i64>(3)?,
                    ))
                },
            );
            checks.push(match (stats, damage) {
                (_, Some(problems)) => doctor::damaged(store.path(), &problems),
                (Ok((sessions, records, warnings, secrets)), None) => Check {
                    name: "archive".into(),
                    status: Status::Ok,
                    detail: format!(
                        "{} (schema {}): {sessions} sessions, {records} records, {warnings} parse warnings, {secrets} secrets redacted",
                        store.path().display(),
                        store.schema_version().unwrap_or(0)
                    ),
                },
                (Err(e), None) => Check { name: "archive".into(), status: Status::Fail, detail: store.err(e).to_string() },
            });
        }
        checks.push(doctor::permissions(&self.data_dir));
        checks.extend(doctor::environment_checks(
            &self.config,
            dirs::home_dir().as_deref(),
        ));
        DoctorReport { checks }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pragma(cairn: &Cairn, name: &str) -> i64 {
        cairn
            .store()
            .conn()
            .query_row(&format!("PRAGMA {name}"), [], |r| r.get(0))
            .unwrap()
    }

    /// The desktop's bounded reader: no map, a small page cache, and reads still answer, on a
    /// writable archive and on one only readable (a `query_only` connection).
    #[test]
    fn read_memory_can_be_bounded_on_writable_and_read_only_archives() {
        let dir = tempfile::tempdir().unwrap();
        let cairn = Cairn::open(dir.path()).unwrap();
        assert_eq!(pragma(&cairn, "mmap_size"), 268_435_456);
        cairn.limit_read_memory(0, 2048).unwrap();
        assert_eq!(pragma(&cairn, "mmap_size"), 0);
        assert_eq!(pragma(&cairn, "cache_size"), -2048);
        assert!(cairn.is_empty().unwrap());
        drop(cairn);

        let read_only = Cairn {
            store: Mutex::new(Store::open_read_only(&dir.path().join(DB_FILE)).unwrap()),
            read_only: true,
            ..Cairn::open(dir.path()).unwrap()
        };
        read_only.limit_read_memory(1 << 20, 1024).unwrap();
        assert_eq!(pragma(&read_only, "mmap_size"), 1 << 20);
        assert_eq!(pragma(&read_only, "cache_size"), -1024);
        assert!(read_only.is_empty().unwrap());
    }
}

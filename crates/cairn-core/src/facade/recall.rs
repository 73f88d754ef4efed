//! The [`Cairn`] facade, recall: listing, querying, importing and reviewing entries.

use std::path::Path;

use crate::archive::store::Store;
use crate::recall;
use crate::semantic::vectors::VectorStore;
use crate::{Cairn, Error, Result};

impl Cairn {
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

    /// The whole id of the entry a person named by its id or the unique start of it, at least
    /// [`recall::store::ID_PREFIX_MIN`] characters (see [`recall::store::resolve_entry_id`]).
    /// The CLI resolves what it is given through here; the other methods take whole ids, as
    /// the MCP tools and the window pass them.
    pub fn recall_entry_id(&self, given: &str) -> Result<String> {
        recall::store::resolve_entry_id(self.store().conn(), given)
    }

    /// `filters` narrowed to `dir` as `here` asks: its canonical path as the cwd, the branch checked
    /// out there, or its worktree (the root as the cwd, and the branch). Asking for a branch in a
    /// detached checkout, or a worktree outside git, is an error that names `dir`.
    pub fn recall_filters_here(
        &self,
        mut filters: recall::store::Filters,
        dir: &Path,
        here: recall::store::Here,
    ) -> Result<recall::store::Filters> {
        if !here.any() {
            return Ok(filters);
        }
        let (cwd, branch, root) = self.current_context(dir)?;
        if here.cwd {
            filters.cwd = Some(cwd);
        }
        if here.git_branch || here.worktree {
            filters.git_branch =
                Some(branch.ok_or_else(|| {
                    Error::Invalid(format!("{} is not on a branch", dir.display()))
                })?);
        }
        if here.worktree {
            filters.cwd = Some(root.ok_or_else(|| {
                Error::Invalid(format!("{} is not in a git worktree", dir.display()))
            })?);
        }
        Ok(filters)
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
        surface: recall::model::Surface,
    ) -> Result<recall::QueryResponse> {
        let store = self.store();
        let mut resp = self.recall_answer(&store, req)?;
        self.record_answer(&store, req, &mut resp, surface);
        Ok(resp)
    }

    /// Record `resp` in the query ledger as `surface` unless the data dir is read-only; the
    /// response carries the query id when it was recorded (a failure is logged, not returned:
    /// the answer stands without it).
    fn record_answer(
        &self,
        store: &Store,
        req: &recall::QueryRequest,
        resp: &mut recall::QueryResponse,
        surface: recall::model::Surface,
    ) {
        if self.read_only {
            return;
        }
        match recall::ledger::record_response(
            store.conn(),
            req,
            resp,
            surface,
            "",
            &crate::clock::now(),
        ) {
            Ok(id) => resp.query_id = Some(id),
            Err(e) => tracing::warn!("recall ledger: {e}"),
        }
    }

    /// A brief for a task asked at `dir` (`cairn recall brief`): [`Cairn::recall_query`]'s
    /// answer, packed, of only the entries that apply on the branch ([`recall::memory::applies`],
    /// the rule the session-start brief and the MCP tools read): the `git_branch` filter's when
    /// one is given, else the branch checked out at `dir` (none outside a repository or when
    /// detached, so no branch-scoped entry then). An entry scoped to another branch is never
    /// packed, whatever else matches. Asked inside a repository with no `project` (or that
    /// repository's) and no `cwd` filter, the brief is that repository's, by the rule the
    /// session-start brief and MCP read: its project's entries learnt in it
    /// ([`recall::memory::recorded_here`]; how many another repository's were left out is said
    /// in `left_out`), then other projects' global ones; asked for another project, the branch
    /// is only the `git_branch` filter's. Recorded in the ledger as `surface` (what was packed).
    ///
    /// The rule needs the entry's scope, which the ranking does not filter on, so the ranking is
    /// read as deep as a query may go ([`recall::store::MAX_LIMIT`]) and cut to the limit after.
    pub fn recall_brief(
        &self,
        req: &recall::QueryRequest,
        dir: &Path,
        surface: recall::model::Surface,
    ) -> Result<recall::QueryResponse> {
        let want = req.filters.limit() as usize;
        let mut wide = req.clone();
        wide.context = false;
        wide.filters.limit = Some(recall::store::MAX_LIMIT);
        // A brief that names no project or folder is for the repository it was asked in, as
        // the session-start brief and MCP are: its own entries (not those of another repository
        // of the same name), then other projects' global ones. Else a branch-scoped entry of
        // any repository with a branch of this name would apply here.
        let place = recall::memory::place(dir).filter(|p| {
            wide.filters.cwd.is_none()
                && wide
                    .filters
                    .project
                    .as_ref()
                    .is_none_or(|n| *n == p.project)
        });
        // The branch checked out here is the brief's only when the brief is this repository's:
        // asked for another project, only `--git-branch` names one.
        let branch = req
            .filters
            .git_branch
            .as_deref()
            .map(str::trim)
            .filter(|b| !b.is_empty())
            .map(str::to_owned)
            .or_else(|| place.as_ref().and_then(|p| p.branch.clone()));
        let branch = branch.as_deref();
        let mut here = None;
        if let Some(p) = &place {
            wide.filters.project = Some(p.project.clone());
            here = Some(recall::memory::origin::Here::new(&p.root));
        }
        let store = self.store();
        let mut resp = self.recall_answer(&store, &wide)?;
        resp.results
            .retain(|r| recall::memory::applies(&r.entry, branch));
        let elsewhere = match here.as_mut() {
            Some(here) => recall::memory::keep_recorded_here(
                store.conn(),
                &mut resp.results,
                |r| &r.entry,
                here,
            )?,
            None => 0,
        };
        resp.left_out = place.as_ref().and_then(|p| {
            recall::memory::LeftOut {
                elsewhere,
                stopped_after: None,
            }
            .line(&p.project)
        });
        resp.results.truncate(want);
        resp.untrusted_matches = 0;
        if resp.results.is_empty() && req.filters.trusted_only {
            // What a review would add: the untrusted entries that match and apply here.
            let mut open = wide.clone();
            open.filters.trusted_only = false;
            let mut untrusted = recall::rank::rank(
                store.conn(),
                &open.text,
                &open.filters,
                jiff::Timestamp::now().as_second(),
            )?;
            untrusted
                .retain(|r| !r.entry.is_trusted() && recall::memory::applies(&r.entry, branch));
            if let Some(here) = here.as_mut() {
                recall::memory::keep_recorded_here(
                    store.conn(),
                    &mut untrusted,
                    |r| &r.entry,
                    here,
                )?;
            }
            resp.untrusted_matches = u32::try_from(untrusted.len()).unwrap_or(u32::MAX);
        }
        let packed = recall::brief::pack(
            &recall::memory::global::labelled(&resp.results, wide.filters.project.as_deref()),
            req.max_bytes
                .map_or(recall::brief::DEFAULT_MAX_BYTES, |b| b as usize),
            req.max_tokens.map(|t| t as usize),
        );
        resp.miss_reason = if resp.results.is_empty() {
            recall::model::MissReason::NoResults
        } else if packed.entry_ids.is_empty() {
            recall::model::MissReason::ContextEmpty
        } else {
            recall::model::MissReason::None
        };
        resp.context = Some(packed);
        self.record_answer(&store, req, &mut resp, surface);
        Ok(resp)
    }

    /// A query's answer, unrecorded: the entries passing the filters, then, when they ask for
    /// one project as a place, the trusted global entries of every other project after them,
    /// within the limit ([`recall::memory::global`]: the rule the session-start brief and the
    /// MCP tools read too). The CLI's `recall query` and `brief` and the window's queries come
    /// through here.
    pub(crate) fn recall_answer(
        &self,
        store: &Store,
        req: &recall::QueryRequest,
    ) -> Result<recall::QueryResponse> {
        let mut resp = self.recall_answer_exact(store, req)?;
        if let Some(global) = recall::memory::global::request(req) {
            let more = self.recall_answer_exact(store, &global)?;
            recall::memory::global::join(&mut resp, more.results, req);
        }
        Ok(resp)
    }

    /// A query's answer, unrecorded, of exactly the entries passing the filters.
    pub(crate) fn recall_answer_exact(
        &self,
        store: &Store,
        req: &recall::QueryRequest,
    ) -> Result<recall::QueryResponse> {
        let now = jiff::Timestamp::now();
        if req.mode.is_semantic() && !req.text.trim().is_empty() {
            // While vectors catch up, the entries that have one are searched by meaning and the
            // rest by words only (hybrid's lexical leg); the response says how many wait.
            let (matrix, waiting) = self.usable_matrix(store, VectorStore::Recall)?;
            let pending = recall::hybrid::PendingQuery {
                matrix: &matrix,
                embed: Box::new(|| {
                    Ok(recall::hybrid::Embedded {
                        vector: self.semantic.embed_query(&req.text)?,
                        floor: self.semantic.embedder()?.similarity_floor(),
                    })
                }),
            };
            let mut resp = recall::query(store.conn(), req, now.as_second(), Some(pending))?;
            resp.vectors_pending = u32::try_from(waiting).unwrap_or(u32::MAX);
            Ok(resp)
        } else {
            recall::query(store.conn(), req, now.as_second(), None)
        }
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

    /// Import the reviewed JSONL file at `path`, read by [`recall::import::read_file`] (a
    /// regular file of at most 64 MiB), as [`Cairn::recall_import`] does.
    pub fn recall_import_file(
        &self,
        path: &std::path::Path,
        dry_run: bool,
    ) -> Result<recall::import::ImportReport> {
        self.writable()?;
        let text = recall::import::read_file(path)?;
        self.recall_import(&text, dry_run)
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
            .map_err(|e| crate::store::db_err(&path, e))?;
        let mut report = recall::import::apply(&tx, text, dry_run, &crate::clock::now())?;
        if dry_run || !report.errors.is_empty() {
            tx.rollback().map_err(|e| crate::store::db_err(&path, e))?;
            if !dry_run {
                // All or nothing: a report of what was written says nothing was.
                report.imported = 0;
                report.items.clear();
            }
        } else {
            tx.commit().map_err(|e| crate::store::db_err(&path, e))?;
            self.refresh_on_write(&mut store, &[]);
        }
        Ok(report)
    }

    /// Run a review action in one transaction.
    /// `touched`: the entries whose text it may change (their vectors are made at once, even
    /// while an extraction pass runs; see [`Cairn::refresh_on_write`]).
    pub(crate) fn review<T>(
        &self,
        touched: &[&str],
        f: impl FnOnce(&rusqlite::Connection, &str) -> Result<T>,
    ) -> Result<T> {
        self.writable()?;
        let mut store = self.store();
        let path = store.path().to_owned();
        let tx = store
            .conn_mut()
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(|e| crate::store::db_err(&path, e))?;
        let out = f(&tx, &crate::clock::now())?;
        tx.commit().map_err(|e| crate::store::db_err(&path, e))?;
        self.refresh_on_write(&mut store, touched);
        Ok(out)
    }

    /// The review inbox: unreviewed, stale and provenance-revoked entries.
    pub fn recall_inbox(&self, limit: u32) -> Result<Vec<recall::review::InboxItem>> {
        let store = self.store();
        recall::review::queue(store.conn(), limit)
    }

    /// How many entries the review inbox holds, whatever [`Cairn::recall_inbox`]'s limit.
    pub fn recall_inbox_len(&self) -> Result<u64> {
        recall::review::queue_len(self.store().conn())
    }

    /// One entry laid out for review: why it is in the inbox, its evidence quoted from the
    /// archive and checked now, and near-duplicates among the accepted entries (by vectors too,
    /// when the entry has one from the configured embedder; the model is never loaded for it).
    pub fn recall_proposal(&self, id: &str) -> Result<recall::proposal::Proposal> {
        let store = self.store();
        let fingerprint = self.semantic.store_fingerprint(VectorStore::Recall).ok();
        recall::proposal::proposal(
            store.conn(),
            id,
            fingerprint.as_deref(),
            jiff::Timestamp::now().as_second(),
        )
    }

    /// Accept an entry (editing it first when `edit` is given): it becomes human reviewed.
    pub fn recall_accept(
        &self,
        id: &str,
        edit: Option<&recall::review::Edit>,
    ) -> Result<recall::model::Entry> {
        self.review(&[id], |c, now| recall::review::accept(c, id, edit, now))
    }

    /// Take an accept back (the window's Undo): the entry is back in the inbox, in the review
    /// state `previous` it had before the accept (see [`recall::review::unaccept`]).
    pub fn recall_unaccept(
        &self,
        id: &str,
        previous: recall::model::ReviewState,
    ) -> Result<recall::model::Entry> {
        self.review(&[], |c, now| recall::review::unaccept(c, id, previous, now))
    }

    /// Take an accept back, and say which entry serves again in its place when it was a
    /// replacement the rules no longer let replace it (see
    /// [`recall::review::unaccept_handing_back`]).
    pub fn recall_unaccept_handing_back(
        &self,
        id: &str,
        previous: recall::model::ReviewState,
    ) -> Result<recall::review::Unaccepted> {
        self.review(&[], |c, now| {
            recall::review::unaccept_handing_back(c, id, previous, now)
        })
    }

    /// Reject an entry: archived. A replacement hands its place back to the entry it replaced
    /// (see [`Cairn::recall_reject_handing_back`], which says which).
    pub fn recall_reject(&self, id: &str) -> Result<recall::model::Entry> {
        self.review(&[], |c, now| recall::review::reject(c, id, now))
    }

    /// Reject an entry, and say which entry serves again in its place when it was the served
    /// replacement (see [`recall::review::hand_back`]; a rejected link inside a chain reinstates
    /// nothing, [`recall::review::reject_handing_back`]).
    pub fn recall_reject_handing_back(&self, id: &str) -> Result<recall::review::Rejected> {
        self.review(&[], |c, now| {
            recall::review::reject_handing_back(c, id, now)
        })
    }

    /// Take a rejection back: the entry is where it was before it was rejected (see
    /// [`recall::review::restore`]).
    pub fn recall_restore(&self, id: &str) -> Result<recall::model::Entry> {
        self.review(&[id], |c, now| recall::review::restore(c, id, now))
    }

    /// Take a rejection back, and say which entry it replaces again (see
    /// [`recall::review::restore_replacing`]).
    pub fn recall_restore_replacing(&self, id: &str) -> Result<recall::review::Restored> {
        self.review(&[id], |c, now| {
            recall::review::restore_replacing(c, id, now)
        })
    }

    /// Replace `old` with `new`.
    pub fn recall_supersede(&self, old: &str, new: &str) -> Result<()> {
        self.review(&[], |c, now| recall::review::supersede(c, old, new, now))
    }

    /// Merge `duplicate` into `keep`: its evidence joins `keep`, it is archived; no trust changes.
    pub fn recall_merge(&self, duplicate: &str, keep: &str) -> Result<recall::model::Entry> {
        self.review(&[], |c, now| recall::review::merge(c, duplicate, keep, now))
    }

    /// The verdicts agents gave (MCP `recall_feedback`) on one entry, or on every entry with
    /// `None`.
    pub fn recall_feedback(&self, id: Option<&str>) -> Result<recall::agents::FeedbackCounts> {
        recall::agents::feedback_counts(self.store().conn(), id)
    }

    /// Flag entries whose cited files changed in later commits; says how many, apart: the
    /// trusted ones taken out of service and back in the inbox, and those already waiting.
    /// The check every sync runs ([`recall::stale`]): only the commits since the last one.
    pub fn recall_check_stale(&self) -> Result<recall::stale::Flagged> {
        self.review(&[], recall::stale::check)
    }

    /// Entries whose evidence lies in a session (the session's Recall panel).
    pub fn recall_for_session(&self, key_or_id: &str) -> Result<Vec<recall::model::Entry>> {
        let store = self.store();
        let row = self.session_row(&store, key_or_id)?;
        recall::store::for_session(store.conn(), row).map_err(|e| store.err(e))
    }
}

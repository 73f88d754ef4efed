//! The [`Cairn`] facade, semantic search: the embedder, the vector stores and their freshness.

use std::path::Path;

use crate::archive::store::Store;
use crate::config;
use crate::semantic;
use crate::semantic::corpus::Corpus;
use crate::semantic::vectors::VectorStore;
use crate::{Cairn, Error, Result};

/// The corpus a vector store embeds: Recall's entries (above semantic, handed down from here)
/// or the archive's turns.
pub(crate) fn corpus(which: VectorStore) -> &'static dyn Corpus {
    match which {
        VectorStore::Recall => &crate::recall::corpus::Entries,
        VectorStore::Sessions => &semantic::corpus::Turns,
    }
}

impl Cairn {
    /// Also look for the embedding model under `dir` (the desktop passes its resource dir).
    pub fn set_resource_dir(&self, dir: &Path) {
        self.semantic.set_resource_dir(dir.to_owned());
    }

    /// Use `embedder` instead of the configured one (tests, or a front door with its own).
    pub fn set_embedder(&self, embedder: std::sync::Arc<dyn semantic::embed::Embedder>) {
        self.semantic.set_embedder(embedder);
    }

    /// The matrix a query of `store` scores against and how many documents still wait for their
    /// vector: the fresh matrix, or while vectors catch up (a capture or a Recall write since the
    /// last build), the current ones, the pending documents left to the lexical leg; kept in
    /// memory either way and brought up to date from the change log. The typed error when there
    /// is nothing to score against (see [`semantic::vectors::check_usable`]).
    pub(crate) fn usable_matrix(
        &self,
        store: &Store,
        which: VectorStore,
    ) -> Result<(std::sync::Arc<semantic::vectors::Matrix>, u64)> {
        let fingerprint = self.semantic.store_fingerprint(which)?;
        let state = semantic::vectors::check_usable(store.conn(), corpus(which), &fingerprint)?;
        let cache = &self.semantic.cache;
        if state.is_fresh(&fingerprint) {
            return Ok((cache.get(store.conn(), &state, corpus(which))?, 0));
        }
        cache.get_catching_up(store.conn(), &state, corpus(which))
    }

    /// (matrices read whole, kept matrices brought up to date from the change log) since this
    /// `Cairn` was opened: what a benchmark reports beside its timings.
    pub fn matrix_counts(&self) -> (u64, u64) {
        self.semantic.cache.counts()
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
    ///
    /// While an extraction pass runs, a write embeds only the entries it `touched` (an edit's
    /// new text): what else waits is mostly the pass's own entries, which its refresher embeds
    /// (a review click embedded them all, on the connection the window reads through, and
    /// waited seconds); the refresher takes the rest when the pass ends.
    pub(crate) fn refresh_on_write(&self, store: &mut Store, touched: &[&str]) {
        if !self.extraction_running() {
            self.refresh_pending(store);
            return;
        }
        if touched.is_empty() || !self.semantic.refreshes_on_write() {
            return;
        }
        let ids: Vec<String> = touched.iter().map(|&id| id.to_owned()).collect();
        match self.embed_entries(store, &ids) {
            Ok(_) | Err(Error::ModelMissing { .. }) => {}
            Err(e) => tracing::warn!("refreshing recall vectors after a write failed: {e}"),
        }
    }

    /// Embed the Recall entries `ids` on `store` (each stored only if its text is still what
    /// was embedded; see [`semantic::vectors::embed_docs`]).
    fn embed_entries(&self, store: &mut Store, ids: &[String]) -> Result<u32> {
        let embedder = self.semantic.embedder()?;
        semantic::vectors::embed_docs(
            store.conn_mut(),
            corpus(VectorStore::Recall),
            &*embedder,
            ids,
        )
    }

    /// Whether an extraction pass holds this data dir's `extract.lock` (this process's or
    /// another's); a lock that cannot be opened counts as none (no pass could take it either).
    /// The look takes the lock for an instant; a pass starting then waits it out.
    fn extraction_running(&self) -> bool {
        crate::archive::capture::CaptureLock::open_named(
            &self.data_dir,
            super::extract::EXTRACT_LOCK,
        )
        .is_ok_and(|lock| {
            matches!(
                lock.try_lock(&self.data_dir, "an extraction pass"),
                Err(Error::Locked { .. })
            )
        })
    }

    /// [`Cairn::refresh_on_write`] whether or not a pass runs (its refresher's last step).
    fn refresh_pending(&self, store: &mut Store) {
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
            let entries = corpus(VectorStore::Recall);
            let state = semantic::vectors::state(store.conn(), entries)?;
            if state.is_fresh(&fingerprint) {
                return Ok(None);
            }
            let pending = semantic::vectors::pending_count(store.conn(), entries, &fingerprint)?;
            if pending > semantic::REFRESH_ON_WRITE_MAX {
                tracing::info!(
                    "{pending} recall entries need vectors: more than a write refreshes; run `cairn embeddings build --store recall`"
                );
                return Ok(None);
            }
            let embedder = self.semantic.embedder()?;
            semantic::vectors::build(store.conn_mut(), entries, &*embedder, false, &|_, _| {})
                .map(Some)
        })();
        if let Err(e) = result {
            tracing::warn!("refreshing recall vectors after a write failed: {e}");
        }
    }

    /// An extraction pass's vector refresher (see [`Cairn::recall_extract_run`]): embeds each
    /// batch of entries the pass committed as it arrives, on a connection of its own, so the
    /// pass's commits and the readers never wait on the model; when the pass is over (the
    /// channel closed), it embeds whatever else waits and marks the store complete
    /// ([`Cairn::refresh_on_write`]). Nothing happens when writes do not refresh (an endpoint
    /// embedder: sending the text takes `cairn embeddings build`). A failure is logged and
    /// leaves the entries pending, as after a crash: hybrid scores the others meanwhile.
    pub(crate) fn refresh_as_committed(&self, committed: &std::sync::mpsc::Receiver<Vec<String>>) {
        if !self.semantic.refreshes_on_write() {
            return;
        }
        let mut store: Option<Store> = None;
        let mut failed = false;
        while let Ok(mut ids) = committed.recv() {
            while let Ok(more) = committed.try_recv() {
                ids.extend(more);
            }
            if failed {
                continue;
            }
            let result = (|| -> Result<u32> {
                let store = match &mut store {
                    Some(s) => s,
                    None => store.insert(self.writer()?),
                };
                self.embed_entries(store, &ids)
            })();
            match result {
                Ok(_) => {}
                // No model: lexical search is unaffected; vector search says what to do.
                Err(Error::ModelMissing { .. }) => failed = true,
                Err(e) => {
                    tracing::warn!("embedding the entries an extraction pass wrote failed: {e}");
                    failed = true;
                }
            }
        }
        let store = match store {
            Some(s) => Ok(s),
            None => self.writer(),
        };
        match store {
            Ok(mut store) => self.refresh_pending(&mut store),
            Err(e) => tracing::warn!("refreshing recall vectors after a pass: {e}"),
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
        // A connection of its own: a build of a large archive runs for a long time, and the
        // shared one must stay free for reads (the desktop builds while a person searches).
        let mut store = self.writer()?;
        semantic::vectors::build(store.conn_mut(), corpus(which), &*embedder, force, progress)
    }

    /// The configured embedder's fingerprint, or the typed error saying why it cannot run here
    /// (the model is missing: where it was looked for and how to install it). Never loads the
    /// model.
    pub fn embedder_fingerprint(&self) -> Result<String> {
        self.semantic.embedder_fingerprint()
    }

    /// Whether the configured embedder runs on this machine (the local model); an `[embeddings]`
    /// endpoint is sent text only by `cairn embeddings build`, never by a window or a write.
    pub fn embeds_locally(&self) -> bool {
        self.semantic.refreshes_on_write()
    }

    /// The state row of `which` against the present corpus, with the shared connection released
    /// before a caller works out a fingerprint; `None` when it cannot be read (a yes/no question
    /// then answers no).
    fn store_state(&self, which: VectorStore) -> Option<semantic::vectors::State> {
        semantic::vectors::state(self.store().conn(), corpus(which)).ok()
    }

    /// Whether new documents of `which` are embedded as they arrive: the embedder runs on this
    /// machine ([`Cairn::embeds_locally`]) and the store holds vectors it made, so a person chose
    /// to build them once. The desktop then builds after each sync.
    pub fn embeds_as_captured(&self, which: VectorStore) -> bool {
        self.embeds_locally() && self.searches_by_meaning(which)
    }

    /// Whether a search of `which` runs by meaning now: the configured embedder made its vectors,
    /// complete for the present corpus or catching up with it (what a capture added since the
    /// last build waits for its vectors and is found by words meanwhile: see
    /// [`Cairn::search_answer`]). One single-row read once the embedder is known; the desktop
    /// asks before each search and searches by words alone otherwise.
    pub fn searches_by_meaning(&self, which: VectorStore) -> bool {
        let Some(state) = self.store_state(which) else {
            return false;
        };
        // Never built: no fingerprint to work out (before the model is loaded that reads its
        // files).
        state.dims > 0
            && !state.fingerprint.is_empty()
            && self
                .semantic
                .store_fingerprint(which)
                .is_ok_and(|fp| fp == state.fingerprint)
    }

    /// The embedder and the freshness of each vector store. Never loads the model.
    pub fn embeddings_status(&self) -> Result<semantic::EmbeddingsStatus> {
        let store = self.store();
        let fingerprint = self.semantic.embedder_fingerprint();
        let mut stores = Vec::new();
        for which in VectorStore::ALL {
            let state = semantic::vectors::state(store.conn(), corpus(which))?;
            let (fresh, vectors, pending) = match &fingerprint {
                Ok(fp) => {
                    let sfp = semantic::vectors::store_fingerprint(which, fp);
                    // As a query judges it: an empty store never built is complete too.
                    let fresh =
                        match semantic::vectors::check_fresh(store.conn(), corpus(which), &sfp) {
                            Ok(_) => true,
                            Err(Error::VectorsStale { .. }) => false,
                            Err(e) => return Err(e),
                        };
                    (
                        fresh,
                        semantic::vectors::vector_count(store.conn(), which, &sfp)?,
                        Some(semantic::vectors::pending_count(
                            store.conn(),
                            corpus(which),
                            &sfp,
                        )?),
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
}

//! Semantic search: sentence embeddings of Recall entries and session turns, stored beside them,
//! searched by cosine similarity and fused with the lexical rankers.
//!
//! [`embed`] turns text into L2-normalised vectors: the built-in local model (all-MiniLM-L6-v2,
//! run in-process on the CPU, no network) or, by config, an OpenAI-compatible `/embeddings`
//! endpoint. [`vectors`] stores them (f32 BLOBs with the embedding fingerprint and a content
//! hash), refreshes them, refuses to serve stale ones (fail closed), and keeps a contiguous
//! in-memory matrix for brute-force search. [`fusion`] is Reciprocal Rank Fusion.
//!
//! Lexical search never depends on any of this: a missing model or stale vectors only make the
//! vector and hybrid modes refuse, with an error that says how to fix it.

pub mod carry;
pub mod corpus;
pub mod digest;
pub mod embed;
pub mod endpoint;
pub mod forget;
pub mod fusion;
pub mod vectors;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// Retrieval modes, shared by Recall queries, briefs and the archive search.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    #[default]
    Lexical,
    Vector,
    Hybrid,
}

impl Mode {
    pub fn parse(s: &str) -> Result<Mode> {
        match s.trim() {
            "lexical" => Ok(Mode::Lexical),
            "vector" => Ok(Mode::Vector),
            "hybrid" => Ok(Mode::Hybrid),
            other => Err(Error::Invalid(format!(
                "unknown mode {other:?}; expected lexical, vector or hybrid"
            ))),
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Lexical => "lexical",
            Mode::Vector => "vector",
            Mode::Hybrid => "hybrid",
        }
    }

    /// Whether this mode needs embeddings.
    pub fn is_semantic(self) -> bool {
        self != Mode::Lexical
    }
}

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

use crate::config::{EmbeddingsConfig, EmbeddingsProvider};
use embed::{Embedder, ModelSearch};
use vectors::{MatrixCache, VectorStore};

/// The embedder a data dir uses, loaded on first need, and the vector matrices in memory.
pub struct Runtime {
    config: EmbeddingsConfig,
    /// The data dir's `config.toml`, named in configuration errors.
    config_path: PathBuf,
    search: Mutex<ModelSearch>,
    embedder: Mutex<Option<Arc<dyn Embedder>>>,
    pub cache: MatrixCache,
    queries: Mutex<QueryCache>,
}

/// Query embeddings kept for repeated queries (a desktop search box re-runs the same text as
/// filters change; an agent repeats its question). Keyed by embedder fingerprint and the exact
/// text, so a different model never serves another's vector.
pub const QUERY_CACHE_SIZE: usize = 64;

/// A small least-recently-used map: text → query vector. A linear scan over at most
/// [`QUERY_CACHE_SIZE`] keys costs far less than one forward pass of the model.
#[derive(Default)]
pub struct QueryCache {
    /// Most recently used last.
    slots: Vec<(String, String, Arc<[f32]>)>,
    hits: u64,
    misses: u64,
}

impl QueryCache {
    pub fn get(&mut self, fingerprint: &str, text: &str) -> Option<Arc<[f32]>> {
        let Some(i) = self
            .slots
            .iter()
            .position(|(f, t, _)| f == fingerprint && t == text)
        else {
            self.misses += 1;
            return None;
        };
        let slot = self.slots.remove(i);
        let v = Arc::clone(&slot.2);
        self.slots.push(slot);
        self.hits += 1;
        Some(v)
    }

    pub fn put(&mut self, fingerprint: &str, text: &str, v: Arc<[f32]>) {
        self.slots
            .retain(|(f, t, _)| !(f == fingerprint && t == text));
        if self.slots.len() >= QUERY_CACHE_SIZE {
            self.slots.remove(0);
        }
        self.slots
            .push((fingerprint.to_owned(), text.to_owned(), v));
    }

    pub fn clear(&mut self) {
        self.slots.clear();
    }

    pub fn len(&self) -> usize {
        self.slots.len()
    }

    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    /// (hits, misses) since the cache was made.
    pub fn counts(&self) -> (u64, u64) {
        (self.hits, self.misses)
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl Runtime {
    pub fn new(config: &EmbeddingsConfig, data_dir: &Path) -> Runtime {
        let mut search = ModelSearch::for_process(data_dir);
        search.config_dir = config.model_dir();
        Runtime {
            config: config.clone(),
            config_path: data_dir.join(crate::config::CONFIG_FILE),
            search: Mutex::new(search),
            embedder: Mutex::new(None),
            cache: MatrixCache::default(),
            queries: Mutex::new(QueryCache::default()),
        }
    }

    pub fn provider(&self) -> EmbeddingsProvider {
        self.config.provider
    }

    /// Also look for the model under `dir` (an installed bundle's resource dir).
    pub fn set_resource_dir(&self, dir: PathBuf) {
        lock(&self.search).resource_dir = Some(dir);
    }

    /// Where the local model is looked for, in order.
    pub fn model_candidates(&self) -> Vec<PathBuf> {
        lock(&self.search).candidates()
    }

    /// Use `embedder` instead of the configured one (tests; front doors that bring their own).
    pub fn set_embedder(&self, embedder: Arc<dyn Embedder>) {
        *lock(&self.embedder) = Some(embedder);
        lock(&self.queries).clear();
    }

    /// The embedding of a query, from the cache when the same text was asked before.
    pub fn embed_query(&self, text: &str) -> Result<Arc<[f32]>> {
        let embedder = self.embedder()?;
        let fingerprint = embedder.fingerprint();
        if let Some(v) = lock(&self.queries).get(fingerprint, text) {
            return Ok(v);
        }
        let v: Arc<[f32]> = embedder.embed(&[text], embed::InputKind::Query)?.into();
        lock(&self.queries).put(fingerprint, text, Arc::clone(&v));
        Ok(v)
    }

    /// Forget cached query embeddings (benchmarks time the uncached path with it).
    pub fn clear_query_cache(&self) {
        lock(&self.queries).clear();
    }

    /// (hits, misses) of the query-embedding cache.
    pub fn query_cache_counts(&self) -> (u64, u64) {
        lock(&self.queries).counts()
    }

    /// Whether writes refresh the Recall vectors at once.
    pub fn refreshes_on_write(&self) -> bool {
        match lock(&self.embedder).as_ref() {
            Some(e) => e.refresh_on_write(),
            None => self.config.provider == EmbeddingsProvider::Local,
        }
    }

    /// The configured embedder's fingerprint, without loading a model.
    pub fn embedder_fingerprint(&self) -> Result<String> {
        if let Some(e) = lock(&self.embedder).as_ref() {
            return Ok(e.fingerprint().to_owned());
        }
        match self.config.provider {
            EmbeddingsProvider::Local => {
                let dir = lock(&self.search).locate()?;
                Ok(embed::local_fingerprint(&dir)?.0)
            }
            EmbeddingsProvider::Endpoint => Ok(endpoint_fingerprint(&self.config)),
        }
    }

    /// The fingerprint vectors of `store` must carry to be served.
    pub fn store_fingerprint(&self, store: VectorStore) -> Result<String> {
        Ok(vectors::store_fingerprint(
            store,
            &self.embedder_fingerprint()?,
        ))
    }

    /// The embedder, loaded on first use.
    pub fn embedder(&self) -> Result<Arc<dyn Embedder>> {
        let mut slot = lock(&self.embedder);
        if let Some(e) = slot.as_ref() {
            return Ok(Arc::clone(e));
        }
        let e: Arc<dyn Embedder> = match self.config.provider {
            EmbeddingsProvider::Local => {
                let dir = lock(&self.search).locate()?;
                Arc::new(embed::LocalModel::load(
                    &dir,
                    self.config.threads.unwrap_or(0),
                )?)
            }
            EmbeddingsProvider::Endpoint => Arc::new(endpoint::EndpointEmbedder::connect(
                &self.config,
                &self.config_path,
            )?),
        };
        *slot = Some(Arc::clone(&e));
        Ok(e)
    }
}

/// Vectors from an endpoint are identified by the model name and requested dimensions.
pub fn endpoint_fingerprint(config: &EmbeddingsConfig) -> String {
    format!(
        "endpoint/{}/d{}",
        config.model.as_deref().unwrap_or("").trim(),
        config
            .dimensions
            .map_or_else(|| "native".to_owned(), |d| d.to_string())
    )
}

/// A write refreshes Recall's vectors itself when at most this many entries need one; a larger
/// change (a big import into a never-embedded archive) is left to `cairn embeddings build`, so a
/// review click never waits minutes.
pub const REFRESH_ON_WRITE_MAX: u64 = 2000;

/// What `cairn embeddings status` shows.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct EmbeddingsStatus {
    /// `local` or `endpoint`.
    pub provider: String,
    pub refresh_on_write: bool,
    /// The configured embedder's fingerprint, when it can be had (the model is installed).
    pub fingerprint: Option<String>,
    /// Why it cannot (the model-missing message, with the fix).
    pub problem: Option<String>,
    /// Where the local model is looked for, in order.
    pub model_candidates: Vec<String>,
    pub stores: Vec<StoreStatus>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct StoreStatus {
    pub store: VectorStore,
    /// Vector and hybrid searches of this store run.
    pub fresh: bool,
    /// Vectors stored under the configured fingerprint.
    pub vectors: u32,
    /// Documents without a current vector (unknown when the model is missing).
    pub pending: Option<u32>,
    /// The fingerprint of the last completed build.
    pub built_fingerprint: String,
    pub built_at: Option<String>,
    pub build_command: String,
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// Counts the texts it embeds; the vector is the text's length.
    struct Counting {
        fingerprint: &'static str,
        calls: AtomicUsize,
    }

    impl Embedder for Counting {
        fn fingerprint(&self) -> &str {
            self.fingerprint
        }
        fn dims(&self) -> usize {
            1
        }
        fn embed(&self, texts: &[&str], _kind: embed::InputKind) -> Result<Vec<f32>> {
            self.calls.fetch_add(texts.len(), Ordering::SeqCst);
            Ok(texts.iter().map(|t| t.len() as f32).collect())
        }
        fn refresh_on_write(&self) -> bool {
            false
        }
        fn describe(&self) -> String {
            "counting".into()
        }
    }

    #[test]
    fn repeated_queries_are_embedded_once_per_embedder() {
        let rt = Runtime::new(&EmbeddingsConfig::default(), Path::new("/nonexistent"));
        let a = Arc::new(Counting {
            fingerprint: "a",
            calls: AtomicUsize::new(0),
        });
        rt.set_embedder(a.clone());
        assert_eq!(&*rt.embed_query("tracing").unwrap(), &[7.0]);
        assert_eq!(&*rt.embed_query("tracing").unwrap(), &[7.0]);
        assert_eq!(a.calls.load(Ordering::SeqCst), 1);
        rt.embed_query("where").unwrap();
        assert_eq!(a.calls.load(Ordering::SeqCst), 2);
        assert_eq!(rt.query_cache_counts(), (1, 2));
        // Another embedder never gets the first one's vectors.
        let b = Arc::new(Counting {
            fingerprint: "b",
            calls: AtomicUsize::new(0),
        });
        rt.set_embedder(b.clone());
        rt.embed_query("tracing").unwrap();
        assert_eq!(b.calls.load(Ordering::SeqCst), 1);
        rt.clear_query_cache();
        rt.embed_query("tracing").unwrap();
        assert_eq!(b.calls.load(Ordering::SeqCst), 2);
    }

    #[test]
    fn the_query_cache_evicts_the_least_recently_used() {
        let mut c = QueryCache::default();
        let v: Arc<[f32]> = Arc::from(vec![1.0f32]);
        for i in 0..QUERY_CACHE_SIZE {
            c.put("f", &format!("q{i}"), Arc::clone(&v));
        }
        // Touch q0, then one more text: q1 (now the oldest) goes, q0 stays.
        assert!(c.get("f", "q0").is_some());
        c.put("f", "new", Arc::clone(&v));
        assert_eq!(c.len(), QUERY_CACHE_SIZE);
        assert!(c.get("f", "q1").is_none());
        assert!(c.get("f", "q0").is_some());
        assert!(c.get("f", "new").is_some());
        assert!(c.get("other", "q0").is_none());
    }
}

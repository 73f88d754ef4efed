//! Stored vectors: two stores, `recall` (one vector per entry) and `sessions` (one per turn of
//! the archive), in the tables of migration 6.
//!
//! Freshness is a constant-time check. Each store has a corpus revision (Recall's moves with
//! every insert, delete or text edit of an entry, by trigger; the archive's is the newest
//! capture batch id) and records the revision and embedder fingerprint its vectors were complete
//! for. A search runs only when both match the present; otherwise [`check_fresh`] returns
//! [`Error::VectorsStale`], which says what is stale and the command that refreshes it.
//!
//! A build embeds only what lacks a vector under the current fingerprint (a text edit drops
//! the entry's vector; a turn that grew no longer matches its recorded extent), in chunks each
//! committed on its own, so a long build never holds the write lock for long and an interrupted
//! one resumes where it stopped. It marks the store complete only after checking, in one
//! transaction, that nothing is left.

use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::corpus::{Corpus, Doc};
use super::embed::{Embedder, InputKind};
use crate::error::{Error, Result};

/// Documents embedded per committed chunk.
const CHUNK: usize = 256;
/// Rounds of "embed what is missing, then check" before a build gives up on a corpus that
/// keeps changing under it.
const ROUNDS: usize = 4;

/// Which vectors.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "lowercase")]
pub enum VectorStore {
    Recall,
    Sessions,
}

impl VectorStore {
    pub const ALL: [VectorStore; 2] = [VectorStore::Recall, VectorStore::Sessions];

    pub fn as_str(self) -> &'static str {
        match self {
            VectorStore::Recall => "recall",
            VectorStore::Sessions => "sessions",
        }
    }

    pub fn parse(s: &str) -> Result<VectorStore> {
        match s.trim() {
            "recall" => Ok(VectorStore::Recall),
            "sessions" => Ok(VectorStore::Sessions),
            other => Err(Error::Invalid(format!(
                "unknown vector store {other:?}; expected recall or sessions"
            ))),
        }
    }

    /// What one vector stands for.
    pub fn unit(self) -> &'static str {
        match self {
            VectorStore::Recall => "entries",
            VectorStore::Sessions => "turns",
        }
    }

    /// `n` of what it holds, in words: "1 turn", "3 entries".
    pub fn count(self, n: impl TryInto<i128>) -> String {
        crate::text::plural(
            n,
            match self {
                VectorStore::Recall => "entry",
                VectorStore::Sessions => "turn",
            },
        )
    }

    /// How documents are made from rows; part of the fingerprint, so changing it invalidates.
    fn doc_scheme(self) -> &'static str {
        match self {
            VectorStore::Recall => "recall-entry-v1",
            // v2: the turn digest (request, outcome, files, commands); v1 was the two previews.
            VectorStore::Sessions => "session-turn-v2",
        }
    }

    /// The command that refreshes this store.
    pub fn build_command(self) -> String {
        format!("cairn embeddings build --store {}", self.as_str())
    }
}

/// The fingerprint vectors of `store` carry when made by an embedder with `embedder_fp`.
pub fn store_fingerprint(store: VectorStore, embedder_fp: &str) -> String {
    format!("{embedder_fp}|{}", store.doc_scheme())
}

/// The text embedded for a Recall entry.
pub fn recall_doc(title: &str, body: &str, trigger: &str) -> String {
    let mut doc = format!("{}\n\n{}", title.trim(), body.trim());
    if !trigger.trim().is_empty() {
        doc.push_str("\n\n");
        doc.push_str(trigger.trim());
    }
    doc
}

pub fn content_hash(doc: &str) -> String {
    hex::encode(Sha256::digest(doc.as_bytes()))
}

pub fn to_blob(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

pub fn from_blob(b: &[u8]) -> Vec<f32> {
    b.chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

/// What a store's vectors are complete for, against the present.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct State {
    pub store: VectorStore,
    /// The corpus as it is now.
    pub corpus_revision: i64,
    /// The corpus revision the vectors were complete for (None: never built, or reset).
    pub built_revision: Option<i64>,
    /// Fingerprint of the embedder and document recipe that made them.
    pub fingerprint: String,
    pub dims: u32,
    pub generation: i64,
    pub built_at: Option<String>,
}

impl State {
    pub fn is_fresh(&self, fingerprint: &str) -> bool {
        self.built_revision == Some(self.corpus_revision) && self.fingerprint == fingerprint
    }
}

/// The store's state row with the present corpus revision.
pub fn state(conn: &Connection, corpus: &dyn Corpus) -> Result<State> {
    let db = crate::store::err_in(conn);
    let store = corpus.store();
    let mut s = conn
        .prepare_cached(
            "SELECT corpus_revision, built_revision, fingerprint, dims, generation, built_at
             FROM embedding_state WHERE store = ?1",
        )
        .and_then(|mut st| {
            st.query_row([store.as_str()], |r| {
                Ok(State {
                    store,
                    corpus_revision: r.get(0)?,
                    built_revision: r.get(1)?,
                    fingerprint: r.get(2)?,
                    dims: r.get(3)?,
                    generation: r.get(4)?,
                    built_at: r.get(5)?,
                })
            })
        })
        .map_err(db)?;
    if let Some(revision) = corpus.revision(conn).map_err(db)? {
        s.corpus_revision = revision;
    }
    Ok(s)
}

/// Ok when the store's vectors are complete for the present corpus under `fingerprint` (the
/// store fingerprint, see [`store_fingerprint`]); otherwise the typed error saying why.
pub fn check_fresh(conn: &Connection, corpus: &dyn Corpus, fingerprint: &str) -> Result<State> {
    let s = state(conn, corpus)?;
    if s.is_fresh(fingerprint) {
        return Ok(s);
    }
    let store = corpus.store();
    let never_built = s.built_revision.is_none() && s.fingerprint.is_empty();
    if never_built
        && corpus
            .index(conn)
            .map_err(crate::store::err_in(conn))?
            .is_empty()
    {
        // Nothing to embed: an empty corpus is complete under any embedder, and a search by
        // meaning over it finds nothing, as one by words does. Its first document makes it
        // stale (or, written with the local model, takes its vector at once).
        return Ok(State {
            built_revision: Some(s.corpus_revision),
            fingerprint: fingerprint.to_owned(),
            ..s
        });
    }
    let reason = if never_built {
        format!("no {} vectors have been built yet", store.as_str())
    } else if s.fingerprint != fingerprint && same_embedder(&s.fingerprint, fingerprint) {
        // The same model, another document recipe (a new release changed what is embedded).
        let n = pending_count(conn, corpus, fingerprint)?;
        format!(
            "the {} vectors were made from an older recipe of their documents ({}; now {}): {} to embed again (a build resumes where an interrupted one stopped)",
            store.as_str(),
            recipe(&s.fingerprint),
            recipe(fingerprint),
            store.count(n)
        )
    } else if s.fingerprint != fingerprint {
        format!(
            "the {} vectors were made by another embedder ({}; configured: {})",
            store.as_str(),
            if s.fingerprint.is_empty() {
                "none"
            } else {
                &s.fingerprint
            },
            fingerprint
        )
    } else {
        let n = pending_count(conn, corpus, fingerprint)?;
        format!(
            "{} changed since the {} vectors were last built",
            store.count(n),
            store.as_str()
        )
    };
    Err(Error::VectorsStale {
        store: store.as_str().to_owned(),
        reason,
        fix: store.build_command(),
    })
}

/// What a query may score against while the vectors catch up with the corpus: the store's
/// state. Usable when the configured embedder made the store's vectors, complete or not: each
/// stored vector under that fingerprint is current (a Recall entry's is deleted when its text
/// changes; a turn's carries the extent it was made from, which [`Matrix::load`] checks), so a
/// search over them scores no stale vector and leaves the pending documents to the lexical leg
/// ([`MatrixCache::get_catching_up`] counts them). Never built, or built by another embedder:
/// the error of [`check_fresh`].
pub fn check_usable(conn: &Connection, corpus: &dyn Corpus, fingerprint: &str) -> Result<State> {
    let s = state(conn, corpus)?;
    if s.is_fresh(fingerprint) {
        return Ok(s);
    }
    if s.fingerprint != fingerprint || s.dims == 0 {
        return check_fresh(conn, corpus, fingerprint);
    }
    Ok(s)
}

/// The document recipe part of a store fingerprint (see [`store_fingerprint`]).
fn recipe(fingerprint: &str) -> &str {
    fingerprint.rsplit_once('|').map_or("", |(_, r)| r)
}

/// Whether two store fingerprints name the same embedder (they may differ in recipe).
fn same_embedder(a: &str, b: &str) -> bool {
    match (a.rsplit_once('|'), b.rsplit_once('|')) {
        (Some((a, _)), Some((b, _))) => a == b,
        _ => false,
    }
}

/// The version each document's stored vector under `fingerprint` was made from, by id.
fn stored_versions(
    conn: &Connection,
    store: VectorStore,
    fingerprint: &str,
) -> Result<HashMap<String, i64>> {
    let db = crate::store::err_in(conn);
    let sql = match store {
        VectorStore::Recall => "SELECT entry_id, 0 FROM recall_vectors WHERE fingerprint = ?1",
        VectorStore::Sessions => {
            "SELECT CAST(turn_id AS TEXT), last_ordinal FROM turn_vectors WHERE fingerprint = ?1"
        }
    };
    conn.prepare_cached(sql)
        .and_then(|mut s| {
            s.query_map([fingerprint], |r| Ok((r.get(0)?, r.get(1)?)))?
                .collect()
        })
        .map_err(db)
}

/// How many documents lack a current vector.
pub fn pending_count(conn: &Connection, corpus: &dyn Corpus, fingerprint: &str) -> Result<u64> {
    let db = crate::store::err_in(conn);
    let stored = stored_versions(conn, corpus.store(), fingerprint)?;
    let index = corpus.index(conn).map_err(db)?;
    Ok(index
        .iter()
        .filter(|(id, _, version)| stored.get(id) != Some(version))
        .count() as u64)
}

/// How many documents have an empty vector under `fingerprint` (nothing to embed) made from
/// the version they are at now: few, read through migration 0031's partial index, each checked
/// through [`Corpus::current`] (the corpus's table is its room's to read).
fn current_empties(conn: &Connection, corpus: &dyn Corpus, fingerprint: &str) -> Result<u64> {
    let db = crate::store::err_in(conn);
    let sql = match corpus.store() {
        VectorStore::Recall => {
            "SELECT entry_id, 0 FROM recall_vectors WHERE fingerprint = ?1 AND length(vector) = 0"
        }
        VectorStore::Sessions => {
            "SELECT CAST(turn_id AS TEXT), last_ordinal FROM turn_vectors
             WHERE fingerprint = ?1 AND length(vector) = 0"
        }
    };
    let empty: Vec<(String, i64)> = conn
        .prepare_cached(sql)
        .and_then(|mut s| {
            s.query_map([fingerprint], |r| Ok((r.get(0)?, r.get(1)?)))?
                .collect()
        })
        .map_err(db)?;
    let mut current = 0;
    for (id, made_from) in empty {
        if corpus
            .current(conn, &id)
            .map_err(db)?
            .is_some_and(|(_, now)| now == made_from)
        {
            current += 1;
        }
    }
    Ok(current)
}

/// The version of document `key` in `extents` (sorted by key, see [`Corpus::extents`]).
fn version_in(extents: &[(i64, i64)], key: i64) -> Option<i64> {
    extents
        .binary_search_by_key(&key, |&(k, _)| k)
        .ok()
        .map(|i| extents[i].1)
}

/// Vectors stored under `fingerprint`.
pub fn vector_count(conn: &Connection, store: VectorStore, fingerprint: &str) -> Result<u64> {
    let db = crate::store::err_in(conn);
    let sql = match store {
        VectorStore::Recall => "SELECT COUNT(*) FROM recall_vectors WHERE fingerprint = ?1",
        // Both counts from the indexes of migration 31, never the blobs.
        VectorStore::Sessions => {
            "SELECT (SELECT COUNT(*) FROM turn_vectors WHERE fingerprint = ?1)
                  - (SELECT COUNT(*) FROM turn_vectors WHERE fingerprint = ?1 AND length(vector) = 0)"
        }
    };
    conn.prepare_cached(sql)
        .and_then(|mut s| s.query_row([fingerprint], |r| r.get::<_, i64>(0)))
        .map(|n| n.max(0) as u64)
        .map_err(db)
}

/// The ids of the documents waiting for their vector, read without their text.
fn pending_ids(conn: &Connection, corpus: &dyn Corpus, fingerprint: &str) -> Result<Vec<String>> {
    let db = crate::store::err_in(conn);
    let stored = stored_versions(conn, corpus.store(), fingerprint)?;
    Ok(corpus
        .index(conn)
        .map_err(db)?
        .into_iter()
        .filter(|(id, _, version)| stored.get(id) != Some(version))
        .map(|(id, _, _)| id)
        .collect())
}

/// Documents `ids` as they are now (those still there), each with the hash of its text.
fn docs_of(conn: &Connection, corpus: &dyn Corpus, ids: &[String]) -> Result<Vec<(Doc, String)>> {
    let db = crate::store::err_in(conn);
    let mut docs = Vec::with_capacity(ids.len());
    for id in ids {
        if let Some(d) = corpus.document(conn, id).map_err(db)? {
            let hash = content_hash(&d.text);
            docs.push((d, hash));
        }
    }
    Ok(docs)
}

/// Store the vectors of `docs` whose text is still what was embedded.
fn write_chunk(
    conn: &mut Connection,
    corpus: &dyn Corpus,
    fingerprint: &str,
    docs: &[(Doc, String)],
    vectors: &[f32],
    dims: usize,
) -> Result<u32> {
    let path = crate::store::path_of(conn);
    let db = crate::store::err_at(&path);
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(db)?;
    let mut written = 0;
    for (i, (d, hash)) in docs.iter().enumerate() {
        let v = &vectors[i * dims..(i + 1) * dims];
        let blob = if d.text.is_empty() {
            Vec::new()
        } else {
            to_blob(v)
        };
        let still = corpus
            .document(&tx, &d.id)
            .map_err(db)?
            .is_some_and(|now| now.version == d.version && content_hash(&now.text) == *hash);
        if !still {
            continue;
        }
        match corpus.store() {
            VectorStore::Recall => tx
                .prepare_cached(
                    "INSERT OR REPLACE INTO recall_vectors (entry_id, fingerprint, content_hash, vector)
                     VALUES (?1, ?2, ?3, ?4)",
                )
                .and_then(|mut s| s.execute(params![d.id, fingerprint, hash, blob])),
            VectorStore::Sessions => tx
                .prepare_cached(
                    "INSERT OR REPLACE INTO turn_vectors (turn_id, last_ordinal, fingerprint, content_hash, vector)
                     VALUES (?1, ?2, ?3, ?4, ?5)",
                )
                .and_then(|mut s| s.execute(params![d.key, d.version, fingerprint, hash, blob])),
        }
        .map_err(db)?;
        written += 1;
    }
    tx.commit().map_err(db)?;
    Ok(written)
}

/// Embed `docs` and store their vectors (see [`write_chunk`]).
fn embed_chunk(
    conn: &mut Connection,
    corpus: &dyn Corpus,
    embedder: &dyn Embedder,
    fingerprint: &str,
    docs: &[(Doc, String)],
) -> Result<u32> {
    let dims = embedder.dims();
    let texts: Vec<&str> = docs.iter().map(|(d, _)| d.text.as_str()).collect();
    let vectors = embedder.embed(&texts, InputKind::Document)?;
    if vectors.len() != docs.len() * dims {
        return Err(Error::External(format!(
            "the embedder returned {} floats for {} texts of {dims} dims",
            vectors.len(),
            docs.len()
        )));
    }
    write_chunk(conn, corpus, fingerprint, docs, &vectors, dims)
}

/// What a build did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct BuildReport {
    pub store: VectorStore,
    /// Documents embedded by this build.
    pub embedded: u32,
    /// Vectors stored under the fingerprint when the build finished.
    pub vectors: u32,
    pub fingerprint: String,
    pub seconds: f64,
}

/// Embed whatever lacks a current vector in `store`, then mark the store complete. With
/// `force`, every vector of the store is dropped first. `progress(done, total)` is called after
/// each chunk.
pub fn build(
    conn: &mut Connection,
    corpus: &dyn Corpus,
    embedder: &dyn Embedder,
    force: bool,
    progress: &dyn Fn(u64, u64),
) -> Result<BuildReport> {
    let path = crate::store::path_of(conn);
    let db = crate::store::err_at(&path);
    let started = Instant::now();
    let store = corpus.store();
    let fingerprint = store_fingerprint(store, embedder.fingerprint());
    let dims = embedder.dims();
    if force {
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(db)?;
        let table = match store {
            VectorStore::Recall => "recall_vectors",
            VectorStore::Sessions => "turn_vectors",
        };
        tx.execute(&format!("DELETE FROM {table}"), [])
            .map_err(db)?;
        tx.execute(
            "UPDATE embedding_state SET built_revision = NULL WHERE store = ?1",
            [store.as_str()],
        )
        .map_err(db)?;
        tx.commit().map_err(db)?;
    }
    let mut embedded = 0u32;
    for _ in 0..ROUNDS {
        // Ids first and each chunk's text when its turn comes: finding nothing to do reads no
        // document, and a long build holds one chunk's text at a time.
        let ids = pending_ids(conn, corpus, &fingerprint)?;
        let total = ids.len() as u64;
        let mut done = 0u64;
        for chunk in ids.chunks(CHUNK) {
            let docs = docs_of(conn, corpus, chunk)?;
            embedded += embed_chunk(conn, corpus, embedder, &fingerprint, &docs)?;
            done += chunk.len() as u64;
            progress(done, total);
        }
        // Complete only if nothing is left, checked in the same transaction that records it.
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(db)?;
        let left = pending_count(&tx, corpus, &fingerprint)?;
        if left == 0 {
            let now = state(&tx, corpus)?;
            tx.execute(
                "UPDATE embedding_state SET built_revision = ?2, fingerprint = ?3, dims = ?4,
                    generation = generation + 1, built_at = ?5 WHERE store = ?1",
                params![
                    store.as_str(),
                    now.corpus_revision,
                    fingerprint,
                    dims as i64,
                    crate::clock::now()
                ],
            )
            .map_err(db)?;
            trim_changes(&tx, store).map_err(db)?;
            let vectors = vector_count(&tx, store, &fingerprint)? as u32;
            tx.commit().map_err(db)?;
            return Ok(BuildReport {
                store,
                embedded,
                vectors,
                fingerprint,
                seconds: started.elapsed().as_secs_f64(),
            });
        }
        drop(tx);
    }
    Err(Error::Conflict(format!(
        "the {} corpus kept changing while its vectors were built; run `{}` again",
        store.as_str(),
        store.build_command()
    )))
}

/// Embed the documents `ids` that lack a current vector (a writer's own, just committed: no read
/// of the whole corpus) and store them, each only if its text is still what was embedded. The
/// store is not marked complete (a [`build`] does that), but when it holds no vector of the
/// embedder it records (never built, or all dropped), it takes this embedder's fingerprint and
/// dims, so a query can score these vectors while the rest are pending (see [`check_usable`]).
/// Returns how many vectors were stored.
pub fn embed_docs(
    conn: &mut Connection,
    corpus: &dyn Corpus,
    embedder: &dyn Embedder,
    ids: &[String],
) -> Result<u32> {
    let path = crate::store::path_of(conn);
    let db = crate::store::err_at(&path);
    let store = corpus.store();
    let fingerprint = store_fingerprint(store, embedder.fingerprint());
    let dims = embedder.dims();
    let stored = stored_versions(conn, store, &fingerprint)?;
    let mut docs = docs_of(conn, corpus, ids)?;
    docs.retain(|(d, _)| stored.get(&d.id) != Some(&d.version));
    let mut written = 0;
    for chunk in docs.chunks(CHUNK) {
        written += embed_chunk(conn, corpus, embedder, &fingerprint, chunk)?;
    }
    if written > 0 {
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(db)?;
        let s = state(&tx, corpus)?;
        if s.fingerprint != fingerprint && vector_count(&tx, store, &s.fingerprint)? == 0 {
            tx.execute(
                "UPDATE embedding_state SET fingerprint = ?2, dims = ?3, built_revision = NULL
                 WHERE store = ?1",
                params![store.as_str(), fingerprint, dims as i64],
            )
            .map_err(db)?;
        }
        tx.commit().map_err(db)?;
    }
    Ok(written)
}

/// The stored vector of Recall entry `id` under `fingerprint`, unit length (`None` without one:
/// never built, or dropped when the entry's text changed).
pub fn recall_vector(conn: &Connection, id: &str, fingerprint: &str) -> Result<Option<Vec<f32>>> {
    let blob: Option<Vec<u8>> = conn
        .prepare_cached(
            "SELECT vector FROM recall_vectors WHERE entry_id = ?1 AND fingerprint = ?2",
        )
        .and_then(|mut s| s.query_row([id, fingerprint], |r| r.get(0)).optional())
        .map_err(crate::store::err_in(conn))?;
    Ok(blob.filter(|b| !b.is_empty()).map(|b| {
        let mut v = from_blob(&b);
        super::embed::normalize(&mut v);
        v
    }))
}

/// Every Recall entry's vector of `dims` under `fingerprint`, by entry id, unit length (which
/// entries count is Recall's to say).
pub fn recall_vectors(
    conn: &Connection,
    fingerprint: &str,
    dims: usize,
) -> Result<Vec<(String, Vec<f32>)>> {
    let db = crate::store::err_in(conn);
    let mut st = conn
        .prepare_cached("SELECT entry_id, vector FROM recall_vectors WHERE fingerprint = ?1")
        .map_err(db)?;
    let mut rows = st.query([fingerprint]).map_err(db)?;
    let mut out = Vec::new();
    while let Some(r) = rows.next().map_err(db)? {
        let blob: Vec<u8> = r.get(1).map_err(db)?;
        if blob.len() != dims * 4 {
            continue;
        }
        let mut v = from_blob(&blob);
        super::embed::normalize(&mut v);
        out.push((r.get(0).map_err(db)?, v));
    }
    Ok(out)
}

/// Every vector of a store under one fingerprint, in one contiguous row-major matrix, for
/// brute-force cosine search (vectors are unit length, so cosine is a dot product).
#[derive(Debug, Clone)]
pub struct Matrix {
    pub dims: usize,
    /// Entry rowid (recall) or turn id (sessions) of each row.
    pub keys: Vec<i64>,
    pub data: Vec<f32>,
    /// The document id of each row and the row of each document id: a change names its
    /// document by id, and a forgotten document has no key left to look up.
    ids: Vec<String>,
    rows: HashMap<String, usize>,
    /// The document version each row was made from (a turn's last ordinal).
    versions: Vec<i64>,
    fingerprint: String,
    built_revision: Option<i64>,
    generation: i64,
    /// The newest entry of `vector_changes` this matrix has taken in.
    seq: i64,
    /// The corpus revision its rows were last checked against the corpus's documents: a row
    /// whose document grew after that may be stale (see [`MatrixCache::get_catching_up`]).
    checked_revision: i64,
    /// While the store catches up: how many documents wait for their vector, counted at the
    /// corpus revision and change log entry given (both unmoved, the count holds).
    pending: Option<(u64, i64, i64)>,
}

/// The vectors a matrix holds: every vector of a store under a fingerprint (`?1`), or with
/// `?2`, the vector of one document; with the version each was made from.
fn vector_sql(store: VectorStore, one: bool) -> &'static str {
    match (store, one) {
        (VectorStore::Recall, false) => {
            "SELECT entry_id, vector, 0 FROM recall_vectors WHERE fingerprint = ?1"
        }
        (VectorStore::Recall, true) => {
            "SELECT entry_id, vector, 0 FROM recall_vectors WHERE fingerprint = ?1 AND entry_id = ?2"
        }
        (VectorStore::Sessions, false) => {
            "SELECT CAST(turn_id AS TEXT), vector, last_ordinal FROM turn_vectors
             WHERE fingerprint = ?1 AND length(vector) > 0"
        }
        (VectorStore::Sessions, true) => {
            "SELECT CAST(turn_id AS TEXT), vector, last_ordinal FROM turn_vectors
             WHERE fingerprint = ?1 AND length(vector) > 0 AND turn_id = CAST(?2 AS INTEGER)"
        }
    }
}

/// A stored vector's floats, unit length, after a check that it has `state.dims` of them.
fn row_of(
    r: &rusqlite::Row<'_>,
    state: &State,
    db: impl Fn(rusqlite::Error) -> Error,
) -> Result<Vec<f32>> {
    let blob = r.get_ref(1).map_err(&db)?.as_blob().map_err(|e| {
        db(rusqlite::Error::FromSqlConversionFailure(
            1,
            rusqlite::types::Type::Blob,
            Box::new(e),
        ))
    })?;
    let dims = state.dims as usize;
    if blob.len() != dims * 4 {
        return Err(Error::VectorsStale {
            store: state.store.as_str().to_owned(),
            reason: format!(
                "a stored vector has {} bytes where {dims} dims need {}",
                blob.len(),
                dims * 4
            ),
            fix: format!("{} --force", state.store.build_command()),
        });
    }
    let mut row = from_blob(blob);
    // Stored unit length already; normalising again costs nothing next to the read and keeps
    // cosine = dot even for vectors written by an older or foreign build.
    super::embed::normalize(&mut row);
    Ok(row)
}

/// The newest entry of the change log (0: none yet).
fn newest_change(conn: &Connection) -> rusqlite::Result<i64> {
    conn.prepare_cached("SELECT COALESCE(MAX(seq), 0) FROM vector_changes")?
        .query_row([], |r| r.get(0))
}

/// Most changes a kept matrix takes in one by one; past that it is loaded whole (each change
/// costs two point reads, the whole load one pass over the store's vectors). A completed build
/// also keeps this many entries of the log.
const KEPT_CHANGES: i64 = 4096;

/// The documents of `store` whose vector changed after log entry `seq`, each once, and the
/// newest entry read; `None` when the log no longer reaches back to `seq` or holds more than
/// [`KEPT_CHANGES`] (a whole load is then the cheaper read).
fn changes_since(
    conn: &Connection,
    store: VectorStore,
    seq: i64,
) -> Result<Option<(Vec<String>, i64)>> {
    let db = crate::store::err_in(conn);
    let trimmed: i64 = conn
        .prepare_cached("SELECT changes_trimmed FROM embedding_state WHERE store = ?1")
        .and_then(|mut st| st.query_row([store.as_str()], |r| r.get(0)))
        .map_err(db)?;
    if seq < trimmed {
        return Ok(None);
    }
    let mut st = conn
        .prepare_cached(
            "SELECT seq, doc_id FROM vector_changes WHERE seq > ?1 AND store = ?2
             ORDER BY seq LIMIT ?3",
        )
        .map_err(db)?;
    let mut rows = st
        .query(params![seq, store.as_str(), KEPT_CHANGES + 1])
        .map_err(db)?;
    let (mut ids, mut seen, mut newest) = (Vec::new(), std::collections::HashSet::new(), seq);
    let mut n = 0;
    while let Some(r) = rows.next().map_err(db)? {
        n += 1;
        if n > KEPT_CHANGES {
            return Ok(None);
        }
        newest = r.get(0).map_err(db)?;
        let id: String = r.get(1).map_err(db)?;
        if seen.insert(id.clone()) {
            ids.push(id);
        }
    }
    Ok(Some((ids, newest)))
}

/// Trim the change log of `store` to the newest [`KEPT_CHANGES`] entries (in the caller's
/// transaction), recording where it was cut.
fn trim_changes(conn: &Connection, store: VectorStore) -> rusqlite::Result<()> {
    let cut = newest_change(conn)? - KEPT_CHANGES;
    if cut <= 0 {
        return Ok(());
    }
    conn.prepare_cached("DELETE FROM vector_changes WHERE store = ?1 AND seq <= ?2")?
        .execute(params![store.as_str(), cut])?;
    conn.prepare_cached(
        "UPDATE embedding_state SET changes_trimmed = MAX(changes_trimmed, ?2) WHERE store = ?1",
    )?
    .execute(params![store.as_str(), cut])?;
    Ok(())
}

impl Matrix {
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// Load the current vectors of a store (see [`check_usable`]); `corpus` keys its documents.
    pub fn load(conn: &Connection, state: &State, corpus: &dyn Corpus) -> Result<Matrix> {
        let db = crate::store::err_in(conn);
        // Read first: a change landing during the load is taken in again by the next update,
        // which reads each changed document as it is then.
        let seq = newest_change(conn).map_err(db)?;
        // A vector whose document is gone has no key, and one made from an older version of its
        // document (a turn that grew since) is stale: both are left out.
        let keys_of: HashMap<String, (i64, i64)> = corpus
            .index(conn)
            .map_err(db)?
            .into_iter()
            .map(|(id, key, version)| (id, (key, version)))
            .collect();
        let mut m = Matrix {
            dims: state.dims as usize,
            keys: Vec::new(),
            data: Vec::new(),
            ids: Vec::new(),
            rows: HashMap::new(),
            versions: Vec::new(),
            fingerprint: state.fingerprint.clone(),
            built_revision: state.built_revision,
            generation: state.generation,
            seq,
            checked_revision: state.corpus_revision,
            pending: None,
        };
        let mut st = conn.prepare(vector_sql(state.store, false)).map_err(db)?;
        let mut rows = st.query([&state.fingerprint]).map_err(db)?;
        while let Some(r) = rows.next().map_err(db)? {
            let id: String = r.get(0).map_err(db)?;
            let version: i64 = r.get(2).map_err(db)?;
            let Some(&(key, _)) = keys_of.get(&id).filter(|(_, now)| *now == version) else {
                continue;
            };
            let row = row_of(r, state, db)?;
            m.put(id, key, version, &row);
        }
        Ok(m)
    }

    /// Set document `id`'s row (key `key`, made from `version`, floats `row`), adding it when new.
    fn put(&mut self, id: String, key: i64, version: i64, row: &[f32]) {
        if let Some(&i) = self.rows.get(&id) {
            self.keys[i] = key;
            self.versions[i] = version;
            self.data[i * self.dims..(i + 1) * self.dims].copy_from_slice(row);
            return;
        }
        self.rows.insert(id.clone(), self.keys.len());
        self.ids.push(id);
        self.keys.push(key);
        self.versions.push(version);
        self.data.extend_from_slice(row);
    }

    /// Drop document `id`'s row if it has one; the last row takes its place.
    fn remove(&mut self, id: &str) {
        let Some(i) = self.rows.remove(id) else {
            return;
        };
        let last = self.keys.len() - 1;
        if i != last {
            self.keys.swap(i, last);
            self.ids.swap(i, last);
            self.versions.swap(i, last);
            self.data
                .copy_within(last * self.dims..(last + 1) * self.dims, i * self.dims);
            self.rows.insert(self.ids[i].clone(), i);
        }
        self.keys.pop();
        self.ids.pop();
        self.versions.pop();
        self.data.truncate(last * self.dims);
    }

    /// Drop every row whose document is gone or has moved on from the version the row was made
    /// from (`extents`: the corpus's documents as they are now, see [`Corpus::extents`]). A key
    /// names one document while it exists; a document that went took its row with it through
    /// the change log (its vector's deletion is logged), so a key reused since keeps no row.
    fn keep_current(&mut self, extents: &[(i64, i64)]) {
        let stale: Vec<String> = (0..self.len())
            .filter(|&i| version_in(extents, self.keys[i]) != Some(self.versions[i]))
            .map(|i| self.ids[i].clone())
            .collect();
        for id in stale {
            self.remove(&id);
        }
    }

    /// How many of the `documents` of the corpus wait for their vector: all but those with a
    /// row here and the `current_empty` ones (see [`current_empties`]). Exact when the rows are
    /// the store's current vectors, as [`MatrixCache::get_catching_up`] keeps them (each row a
    /// present document, one per document, which has one vector: a row or an empty one).
    fn waiting(&self, documents: usize, current_empty: u64) -> u64 {
        (documents as u64).saturating_sub(self.len() as u64 + current_empty)
    }

    /// Take in documents `ids`, whose vectors changed, as they stand now: each row is what
    /// [`Matrix::load`] would read for it (the current vector under the fingerprint, made from
    /// the document's present version), or gone. `seq` is the newest log entry read; `state`
    /// gives the fingerprint and dims (which build it stands for is the caller's to record).
    fn update(
        &mut self,
        conn: &Connection,
        state: &State,
        corpus: &dyn Corpus,
        ids: &[String],
        seq: i64,
    ) -> Result<()> {
        let db = crate::store::err_in(conn);
        let mut st = conn
            .prepare_cached(vector_sql(state.store, true))
            .map_err(db)?;
        for id in ids {
            let now = corpus.current(conn, id).map_err(db)?;
            let mut rows = st.query(params![state.fingerprint, id]).map_err(db)?;
            let stored = match rows.next().map_err(db)? {
                Some(r) => Some((r.get::<_, i64>(2).map_err(db)?, row_of(r, state, db)?)),
                None => None,
            };
            match (now, stored) {
                (Some((key, version)), Some((made_from, row))) if version == made_from => {
                    self.put(id.clone(), key, version, &row);
                }
                _ => self.remove(id),
            }
        }
        self.seq = seq;
        Ok(())
    }

    /// Record that the rows are those of the build `state` describes, complete or not (`None`:
    /// a store catching up, which [`Matrix::matches`] never takes for a complete one).
    fn stand_for(&mut self, state: &State, built_revision: Option<i64>) {
        self.fingerprint.clone_from(&state.fingerprint);
        self.dims = state.dims as usize;
        self.built_revision = built_revision;
        self.generation = state.generation;
    }

    fn matches(&self, state: &State) -> bool {
        self.fingerprint == state.fingerprint
            && self.built_revision == state.built_revision
            && self.generation == state.generation
    }

    /// Cosine similarity of every row with `query` (unit length).
    pub fn scores(&self, query: &[f32]) -> Vec<f32> {
        if self.dims == 0 || query.len() != self.dims {
            return vec![0.0; self.keys.len()];
        }
        self.data
            .chunks_exact(self.dims)
            .map(|row| dot(row, query))
            .collect()
    }

    /// The `k` rows most similar to `query`, best first (ties by key), as (key, cosine).
    pub fn top(&self, query: &[f32], k: usize) -> Vec<(i64, f32)> {
        self.top_of(&self.scores(query), k)
    }

    /// [`Matrix::top`] from [`Matrix::scores`] already computed: a caller that widens `k`
    /// scans the matrix (15 MB at 10k entries, more than the caches hold) once.
    pub fn top_of(&self, scores: &[f32], k: usize) -> Vec<(i64, f32)> {
        let mut idx: Vec<u32> = (0..scores.len() as u32).collect();
        let better = |a: &u32, b: &u32| {
            scores[*b as usize]
                .total_cmp(&scores[*a as usize])
                .then_with(|| self.keys[*a as usize].cmp(&self.keys[*b as usize]))
        };
        if k < idx.len() {
            idx.select_nth_unstable_by(k, better);
            idx.truncate(k);
        }
        idx.sort_unstable_by(better);
        idx.into_iter()
            .map(|i| (self.keys[i as usize], scores[i as usize]))
            .collect()
    }
}

/// Dot product in eight independent lanes, which the compiler turns into SIMD.
pub fn dot(a: &[f32], b: &[f32]) -> f32 {
    let mut acc = [0f32; 8];
    let (ca, ra) = a.as_chunks::<8>();
    let (cb, rb) = b.as_chunks::<8>();
    for (x, y) in ca.iter().zip(cb) {
        for l in 0..8 {
            acc[l] += x[l] * y[l];
        }
    }
    let tail: f32 = ra.iter().zip(rb).map(|(x, y)| x * y).sum();
    acc.iter().sum::<f32>() + tail
}

/// The matrices of the stores, loaded once and reused until the store changes.
#[derive(Default)]
pub struct MatrixCache {
    slots: Mutex<HashMap<VectorStore, Arc<Matrix>>>,
    /// Matrices read whole, and kept ones brought up to date from the change log.
    loads: std::sync::atomic::AtomicU64,
    updates: std::sync::atomic::AtomicU64,
}

impl MatrixCache {
    /// The matrix for a fresh store's `state`, from memory when it is still current.
    pub fn get(
        &self,
        conn: &Connection,
        state: &State,
        corpus: &dyn Corpus,
    ) -> Result<Arc<Matrix>> {
        let mut slots = self.slots();
        if let Some(m) = slots.get(&state.store).filter(|m| m.matches(state)) {
            return Ok(Arc::clone(m));
        }
        let mut m = match self.updated(&mut slots, conn, state, corpus)? {
            Some(m) => m,
            None => self.loaded(conn, state, corpus)?,
        };
        if !m.matches(state) {
            Arc::make_mut(&mut m).stand_for(state, state.built_revision);
        }
        slots.insert(state.store, Arc::clone(&m));
        Ok(m)
    }

    /// The matrix for a store whose vectors are catching up with its corpus (usable, not
    /// complete: see [`check_usable`]), as [`Matrix::load`] would read it now, and how many
    /// documents wait for their vector: the kept one brought up to date from the change log and,
    /// when a capture moved the corpus on since its rows were last checked, rid of every row
    /// whose turn grew or went (one read of the corpus's keys and versions, not of its vectors or
    /// ids). The count is taken again only when the corpus or the log moved.
    pub fn get_catching_up(
        &self,
        conn: &Connection,
        state: &State,
        corpus: &dyn Corpus,
    ) -> Result<(Arc<Matrix>, u64)> {
        let mut slots = self.slots();
        let mut m = match self.updated(&mut slots, conn, state, corpus)? {
            Some(m) => m,
            None => self.loaded(conn, state, corpus)?,
        };
        // Matrices are copied only while a query still holds the old one, and touched only when
        // something changed: a query while nothing moves costs one read of the log.
        let mut extents = None;
        if m.checked_revision != state.corpus_revision {
            let now = corpus.extents(conn).map_err(crate::store::err_in(conn))?;
            let kept = Arc::make_mut(&mut m);
            kept.keep_current(&now);
            kept.checked_revision = state.corpus_revision;
            extents = Some(now);
        }
        if m.built_revision.is_some() {
            // Complete for no revision: [`MatrixCache::get`] takes it up through the change
            // log, never as it stands.
            Arc::make_mut(&mut m).stand_for(state, None);
        }
        let pending = match m.pending {
            Some((n, revision, seq)) if revision == state.corpus_revision && seq == m.seq => n,
            _ => {
                let extents = match extents {
                    Some(extents) => extents,
                    None => corpus.extents(conn).map_err(crate::store::err_in(conn))?,
                };
                let empty = current_empties(conn, corpus, &state.fingerprint)?;
                let n = m.waiting(extents.len(), empty);
                let kept = Arc::make_mut(&mut m);
                kept.pending = Some((n, state.corpus_revision, kept.seq));
                n
            }
        };
        slots.insert(state.store, Arc::clone(&m));
        Ok((m, pending))
    }

    fn slots(&self) -> std::sync::MutexGuard<'_, HashMap<VectorStore, Arc<Matrix>>> {
        self.slots
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The kept matrix of `state.store` with the changes a build (or a writer) logged since it
    /// was read, each row then what a whole load would read as of the update; `None` when none
    /// of this embedder is kept or the log no longer reaches back to it.
    fn updated(
        &self,
        slots: &mut HashMap<VectorStore, Arc<Matrix>>,
        conn: &Connection,
        state: &State,
        corpus: &dyn Corpus,
    ) -> Result<Option<Arc<Matrix>>> {
        // One appended turn is one row taken in, not 109k vectors read again. A matrix without
        // rows (an empty archive's, before its first build set the dims) takes any dims.
        let dims = state.dims as usize;
        let Some(mut m) = slots
            .remove(&state.store)
            .filter(|m| m.fingerprint == state.fingerprint && (m.dims == dims || m.is_empty()))
        else {
            return Ok(None);
        };
        let Some((ids, seq)) = changes_since(conn, state.store, m.seq)? else {
            return Ok(None);
        };
        if !ids.is_empty() || seq != m.seq || m.dims != dims {
            // Copied only while a query still holds the old one.
            let kept = Arc::make_mut(&mut m);
            kept.dims = dims;
            kept.update(conn, state, corpus, &ids, seq)?;
            self.updates.fetch_add(1, Ordering::Relaxed);
        }
        Ok(Some(m))
    }

    fn loaded(&self, conn: &Connection, state: &State, corpus: &dyn Corpus) -> Result<Arc<Matrix>> {
        let m = Arc::new(Matrix::load(conn, state, corpus)?);
        self.loads.fetch_add(1, Ordering::Relaxed);
        Ok(m)
    }

    /// (matrices read whole, kept matrices updated from the change log) since the cache was made.
    pub fn counts(&self) -> (u64, u64) {
        (
            self.loads.load(Ordering::Relaxed),
            self.updates.load(Ordering::Relaxed),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_store_counts_what_it_holds_in_words() {
        assert_eq!(VectorStore::Sessions.count(1), "1 turn");
        assert_eq!(VectorStore::Sessions.count(109_284), "109284 turns");
        assert_eq!(VectorStore::Recall.count(1), "1 entry");
        assert_eq!(VectorStore::Recall.count(0), "0 entries");
    }

    #[test]
    fn blobs_round_trip_and_dot_matches_the_naive_sum() {
        let v: Vec<f32> = (0..19).map(|i| i as f32 * 0.25 - 2.0).collect();
        assert_eq!(from_blob(&to_blob(&v)), v);
        let w: Vec<f32> = (0..19).map(|i| (i as f32).sin()).collect();
        let naive: f32 = v.iter().zip(&w).map(|(a, b)| a * b).sum();
        assert!((dot(&v, &w) - naive).abs() < 1e-4);
    }

    #[test]
    fn top_k_orders_by_score_then_key() {
        let mut m = Matrix {
            dims: 2,
            keys: Vec::new(),
            data: Vec::new(),
            ids: Vec::new(),
            rows: HashMap::new(),
            versions: Vec::new(),
            fingerprint: String::new(),
            built_revision: None,
            generation: 0,
            seq: 0,
            checked_revision: 0,
            pending: None,
        };
        for (key, row) in [
            (5, [1.0, 0.0]),
            (3, [0.0, 1.0]),
            (9, [1.0, 0.0]),
            (1, [0.6, 0.8]),
        ] {
            m.put(key.to_string(), key, 0, &row);
        }
        let top = m.top(&[1.0, 0.0], 3);
        let keys: Vec<i64> = top.iter().map(|t| t.0).collect();
        assert_eq!(keys, vec![5, 9, 1]);
        assert_eq!(m.top(&[0.0, 1.0], 10).len(), 4);
        assert_eq!(m.top(&[0.0, 1.0], 1)[0].0, 3);
    }

    /// Eight dims from the words' byte sums (no model to load), unit length.
    struct Words;

    impl Embedder for Words {
        fn fingerprint(&self) -> &str {
            "words/test"
        }
        fn dims(&self) -> usize {
            8
        }
        fn embed(&self, texts: &[&str], _kind: InputKind) -> Result<Vec<f32>> {
            Ok(texts
                .iter()
                .flat_map(|t| {
                    let mut v = vec![0.0f32; 8];
                    for w in t.split_whitespace() {
                        v[w.bytes().map(usize::from).sum::<usize>() % 8] += 1.0;
                    }
                    super::super::embed::normalize(&mut v);
                    v
                })
                .collect())
        }
        fn refresh_on_write(&self) -> bool {
            false
        }
        fn describe(&self) -> String {
            "words".into()
        }
    }

    /// An archive with one session and its source, migrated like a real one.
    fn archive() -> Connection {
        let conn = Connection::open_in_memory().unwrap();
        for step in crate::schema::MIGRATIONS {
            conn.execute_batch(step.sql).unwrap();
        }
        conn.execute_batch(
            "INSERT INTO sessions (id, session_key, agent, captured_at) VALUES (1, 's', 'claude', 'now');
             INSERT INTO sources (id, source_key, session_id, agent, role, path, updated_at)
             VALUES (1, 'k', 1, 'claude', 'main', '/t/s.jsonl', 'now');",
        )
        .unwrap();
        conn
    }

    /// What a capture leaves: turn rows changed and the corpus revision moved on.
    fn capture(conn: &Connection, sql: &str, params: impl rusqlite::Params) {
        conn.execute(sql, params).unwrap();
        conn.execute(
            "INSERT INTO captures (session_id, source_id, capture_kind, trigger, captured_at, records_added)
             VALUES (1, 1, 'incremental', 'hook', 'now', 1)",
            [],
        )
        .unwrap();
    }

    /// A matrix's rows by key, bit for bit; and its id index checked against its rows.
    fn rows(m: &Matrix) -> std::collections::BTreeMap<i64, Vec<u32>> {
        assert_eq!(m.rows.len(), m.keys.len());
        assert_eq!(m.ids.len(), m.keys.len());
        assert_eq!(m.data.len(), m.keys.len() * m.dims);
        for (i, id) in m.ids.iter().enumerate() {
            assert_eq!(m.rows[id], i, "{id}");
        }
        if m.dims == 0 {
            // An empty store never built: nothing to score.
            assert!(m.keys.is_empty());
            return std::collections::BTreeMap::new();
        }
        m.keys
            .iter()
            .zip(m.data.chunks_exact(m.dims))
            .map(|(k, row)| (*k, row.iter().map(|x| x.to_bits()).collect()))
            .collect()
    }

    #[derive(Debug, Clone)]
    enum Op {
        Add(String),
        Grow(usize, String),
        Forget(usize),
        EmbedOne(usize),
        Build { force: bool },
    }

    const WORDS: &[&str] = &["login", "retry", "cache", "parser", "sync", "export", "ui"];

    fn op() -> impl proptest::strategy::Strategy<Value = Op> {
        use proptest::prelude::*;
        let text =
            prop::collection::vec(prop::sample::select(WORDS), 1..5).prop_map(|w| w.join(" "));
        prop_oneof![
            4 => text.clone().prop_map(Op::Add),
            // A turn with nothing to embed: its vector is stored empty.
            1 => Just(Op::Add(String::new())),
            2 => (any::<usize>(), text).prop_map(|(i, t)| Op::Grow(i, t)),
            1 => any::<usize>().prop_map(Op::Forget),
            1 => any::<usize>().prop_map(Op::EmbedOne),
            3 => Just(Op::Build { force: false }),
            1 => Just(Op::Build { force: true }),
        ]
    }

    proptest::proptest! {
        /// Through any mix of turns added, grown and forgotten, single embeds and builds, the
        /// kept matrix holds exactly what a whole load reads, whether the store is fresh or its
        /// vectors are catching up with captures (no row of a turn that grew since its vector
        /// was made), and it is read whole only once: every later change reaches it through the
        /// change log or the corpus's index.
        #[test]
        fn a_kept_matrix_takes_in_changes_as_a_whole_load_would(
            ops in proptest::collection::vec(op(), 1..40)
        ) {
            let mut conn = archive();
            let turns = super::super::corpus::Turns;
            let fingerprint = store_fingerprint(VectorStore::Sessions, Words.fingerprint());
            let cache = MatrixCache::default();
            let mut live: Vec<i64> = Vec::new();
            let mut next = 0i64;
            for op in ops {
                match op {
                    Op::Add(text) => {
                        next += 1;
                        capture(
                            &conn,
                            "INSERT INTO turns (id, session_id, turn_index, turn_key, opening_ordinal,
                                 first_ordinal, last_ordinal, preview)
                             VALUES (?1, 1, ?1, 't' || ?1, 0, 0, 0, ?2)",
                            params![next, text],
                        );
                        live.push(next);
                    }
                    Op::Grow(i, text) if !live.is_empty() => capture(
                        &conn,
                        "UPDATE turns SET last_ordinal = last_ordinal + 1, preview = preview || ' ' || ?2
                         WHERE id = ?1",
                        params![live[i % live.len()], text],
                    ),
                    Op::Forget(i) if !live.is_empty() => {
                        let id = live.remove(i % live.len());
                        crate::semantic::forget::delete(&conn, &[id]).unwrap();
                        capture(&conn, "DELETE FROM turns WHERE id = ?1", [id]);
                    }
                    Op::EmbedOne(i) if !live.is_empty() => {
                        let id = live[i % live.len()].to_string();
                        embed_docs(&mut conn, &turns, &Words, &[id]).unwrap();
                    }
                    Op::Build { force } => {
                        build(&mut conn, &turns, &Words, force, &|_, _| {}).unwrap();
                    }
                    _ => {}
                }
                let Ok(now) = check_usable(&conn, &turns, &fingerprint) else {
                    continue;
                };
                let (kept, pending) = if now.is_fresh(&fingerprint) {
                    (cache.get(&conn, &now, &turns).unwrap(), 0)
                } else {
                    cache.get_catching_up(&conn, &now, &turns).unwrap()
                };
                proptest::prop_assert_eq!(pending, pending_count(&conn, &turns, &fingerprint).unwrap());
                let whole = Matrix::load(&conn, &now, &turns).unwrap();
                proptest::prop_assert_eq!(rows(&kept), rows(&whole));
                // Each turn is scored by its vector, or has an empty one (nothing to embed),
                // or waits for one: never two of these.
                let empty: i64 = conn
                    .query_row(
                        "SELECT COUNT(*) FROM turn_vectors v JOIN turns t ON t.id = v.turn_id
                         WHERE length(v.vector) = 0 AND v.last_ordinal = t.last_ordinal
                           AND v.fingerprint = ?1",
                        [&fingerprint],
                        |r| r.get(0),
                    )
                    .unwrap();
                proptest::prop_assert_eq!(kept.len() as u64 + empty as u64 + pending, live.len() as u64);
            }
            proptest::prop_assert!(cache.counts().0 <= 1, "{:?}", cache.counts());
        }
    }

    #[test]
    fn a_matrix_older_than_the_trimmed_log_is_read_whole() {
        let mut conn = archive();
        let turns = super::super::corpus::Turns;
        capture(
            &conn,
            "INSERT INTO turns (id, session_id, turn_index, turn_key, opening_ordinal, first_ordinal,
                 last_ordinal, preview) VALUES (1, 1, 0, 't1', 0, 0, 0, 'login retry')",
            [],
        );
        build(&mut conn, &turns, &Words, false, &|_, _| {}).unwrap();
        let cache = MatrixCache::default();
        cache
            .get(&conn, &state(&conn, &turns).unwrap(), &turns)
            .unwrap();
        capture(
            &conn,
            "INSERT INTO turns (id, session_id, turn_index, turn_key, opening_ordinal, first_ordinal,
                 last_ordinal, preview) VALUES (2, 1, 1, 't2', 0, 0, 0, 'cache parser')",
            [],
        );
        build(&mut conn, &turns, &Words, false, &|_, _| {}).unwrap();
        // The log was cut past what the kept matrix read.
        conn.execute(
            "UPDATE embedding_state SET changes_trimmed = 1000 WHERE store = 'sessions'",
            [],
        )
        .unwrap();
        let now = state(&conn, &turns).unwrap();
        let kept = cache.get(&conn, &now, &turns).unwrap();
        assert_eq!(cache.counts(), (2, 0));
        assert_eq!(
            rows(&kept),
            rows(&Matrix::load(&conn, &now, &turns).unwrap())
        );
        assert_eq!(kept.len(), 2);
    }

    #[test]
    fn a_completed_build_keeps_the_newest_changes_and_records_the_cut() {
        let conn = archive();
        let n = KEPT_CHANGES + 100;
        for i in 0..n {
            conn.execute(
                "INSERT INTO vector_changes (store, doc_id) VALUES (?1, ?2)",
                params![
                    if i % 2 == 0 { "sessions" } else { "recall" },
                    i.to_string()
                ],
            )
            .unwrap();
        }
        trim_changes(&conn, VectorStore::Sessions).unwrap();
        let left = |store: &str| -> (i64, i64) {
            conn.query_row(
                "SELECT COUNT(*), COALESCE(MIN(seq), 0) FROM vector_changes WHERE store = ?1",
                [store],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .unwrap()
        };
        // Only the sessions' entries at or below newest - KEPT_CHANGES (= 100) went.
        assert_eq!(left("sessions"), ((KEPT_CHANGES) / 2, 101));
        assert_eq!(left("recall").0, n / 2);
        let trimmed: i64 = conn
            .query_row(
                "SELECT changes_trimmed FROM embedding_state WHERE store = 'sessions'",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(trimmed, 100);
    }

    #[test]
    fn documents_are_built_as_documented() {
        assert_eq!(recall_doc("T", " b ", ""), "T\n\nb");
        assert_eq!(recall_doc("T", "b", "when"), "T\n\nb\n\nwhen");
    }
}

//! Vector and hybrid retrieval over Recall entries.
//!
//! * Vector (policy `cairn-vector-cosine-v1`): the query's embedding against every entry's,
//!   brute force over the in-memory matrix; the best `k = max(1.25 × limit, 200)` are filtered with
//!   the structured filters in SQL, doubling `k` until `limit` survive or the matrix is
//!   exhausted, when the nearest entry of all reaches the embedder's similarity floor
//!   ([`Embedder::similarity_floor`], the floor search and `why` use), else none: a question about
//!   nothing in Recall listed every entry. The floor judges the question, not each entry: an
//!   answer to a paraphrase can sit just under it (0.176, 0.198 on the fixtures), ranked below a
//!   nearer entry. Score = cosine; match reason `semantic`.
//! * Hybrid (policy `cairn-hybrid-rrf-v1`): the lexical ranking (top [`LEG`]) and the vector
//!   ranking (top [`LEG`], none when the question is under the floor), same filters, fused by Reciprocal Rank Fusion with k = 60; ties by
//!   entry id. Rows keep their lexical breakdown, gain the cosine and both ranks, and `semantic`
//!   joins their match reasons when the vector leg found them. Score = the fused score.
//!
//!   The lexical leg admits only entries matching at least [`MIN_COVERAGE`] of the query's IDF
//!   mass. Plain RRF rewards an entry for appearing in both legs at any depth, and the vector
//!   leg ranks every entry (on a small corpus, all of them): an entry sharing one incidental
//!   word with a natural-language question ("run", "code", "web") would otherwise collect a
//!   lexical rank on top of its (poor) vector rank and push the entry that answers the
//!   question, found by meaning alone, out of the top three. Measured on the paraphrased
//!   question set: top-3 9/16 without the gate, see docs/ARCHITECTURE.md for the figure with it.
//!
//! Freshness is the caller's: both run only on a matrix that [`crate::semantic::vectors`]
//! found complete for the present corpus.
//!
//! [`Embedder::similarity_floor`]: crate::semantic::embed::Embedder::similarity_floor

use std::collections::HashMap;
use std::sync::Arc;

use rusqlite::{Connection, params_from_iter};

use super::rank::{self, Ranked, ScoreBreakdown};
use super::store::Filters;
use crate::error::Result;
use crate::semantic::fusion;
use crate::semantic::vectors::Matrix;

pub const VECTOR_POLICY: &str = "cairn-vector-cosine-v1";
pub const HYBRID_POLICY: &str = "cairn-hybrid-rrf-v1";
/// Depth of each leg of a hybrid query.
pub const LEG: usize = 500;
/// The share of the query's IDF mass a lexical hit must match to enter hybrid's lexical leg.
pub const MIN_COVERAGE: f64 = 0.5;

/// The query side of a semantic search: the entries' vectors, the query's, and the least
/// cosine at which an entry counts as found.
pub struct SemanticQuery<'a> {
    pub matrix: &'a Matrix,
    pub query: &'a [f32],
    pub floor: f32,
}

/// A query's embedding and its embedder's [`Embedder::similarity_floor`]: the floor belongs to
/// the model that made the vector (an endpoint's cosines have a scale of their own).
///
/// [`Embedder::similarity_floor`]: crate::semantic::embed::Embedder::similarity_floor
pub struct Embedded {
    pub vector: Arc<[f32]>,
    pub floor: f32,
}

/// The query side before the query is embedded: the entries' vectors, and the work that embeds
/// the query. Hybrid runs that work on a thread of its own while the lexical leg reads the
/// index: the model's products on a short query keep one core busy, so on two cores the lexical
/// leg costs no wall time.
pub struct PendingQuery<'a> {
    pub matrix: &'a Matrix,
    pub embed: Box<dyn FnOnce() -> Result<Embedded> + Send + 'a>,
}

impl PendingQuery<'_> {
    /// Embed the query here, on the caller's thread.
    pub fn embed(self) -> Result<Embedded> {
        (self.embed)()
    }
}

/// The `limit` entries passing `filters` nearest to the query, when the nearest entry of all
/// reaches the floor (else none): (rowid, id, cosine), best first.
pub(crate) fn vector_leg(
    conn: &Connection,
    sem: &SemanticQuery<'_>,
    filters: &Filters,
    limit: usize,
) -> Result<Vec<(i64, String, f32)>> {
    let db = crate::store::err_in(conn);
    let (where_sql, args) = filters.sql(conn)?;
    // A quarter more than asked covers the usual filters (most entries are accepted); doubling
    // covers selective ones. (Hybrid's 500-deep leg used to start at 2000 rows to check.)
    let mut k = (limit + limit / 4).max(200);
    let scores = sem.matrix.scores(sem.query);
    // A question is about something in Recall when its nearest entry reaches the floor; then
    // its nearest entries are ranked as they are (an answer to a paraphrase can sit just under
    // the floor, ranked below a nearer one), else none counts as found by meaning.
    if !scores.iter().any(|&cos| cos >= sem.floor) {
        return Ok(Vec::new());
    }
    loop {
        let top = sem.matrix.top_of(&scores, k);
        let ids: String = top
            .iter()
            .map(|(rowid, _)| rowid.to_string())
            .collect::<Vec<_>>()
            .join(",");
        let mut passing: HashMap<i64, String> = HashMap::with_capacity(top.len());
        if !top.is_empty() {
            let sql = format!(
                "SELECT e.rowid, e.id FROM recall_entries e WHERE e.rowid IN ({ids}) AND {where_sql}"
            );
            let mut st = conn.prepare(&sql).map_err(db)?;
            let rows = st
                .query_map(params_from_iter(args.iter()), |r| {
                    Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?))
                })
                .map_err(db)?;
            for row in rows {
                let (rowid, id) = row.map_err(db)?;
                passing.insert(rowid, id);
            }
        }
        if passing.len() >= limit || k >= sem.matrix.len() {
            let mut out: Vec<(i64, String, f32)> = top
                .into_iter()
                .filter_map(|(rowid, cos)| passing.remove(&rowid).map(|id| (rowid, id, cos)))
                .collect();
            // Equal cosines: by entry id, as everywhere else.
            out.sort_by(|a, b| b.2.total_cmp(&a.2).then_with(|| a.1.cmp(&b.1)));
            out.truncate(limit);
            return Ok(out);
        }
        k = k.saturating_mul(2);
    }
}

/// Vector mode.
pub fn vector(
    conn: &Connection,
    sem: &SemanticQuery<'_>,
    filters: &Filters,
) -> Result<Vec<Ranked>> {
    let limit = filters.limit() as usize;
    let rows = vector_leg(conn, sem, filters, limit)?
        .into_iter()
        .enumerate()
        .map(|(i, (rowid, _, cos))| {
            let b = ScoreBreakdown {
                semantic: Some(f64::from(cos)),
                vector_rank: Some(i as u32 + 1),
                total: f64::from(cos),
                ..ScoreBreakdown::default()
            };
            (rowid, f64::from(cos), b, vec!["semantic".to_owned()])
        })
        .collect();
    rank::load(conn, rows)
}

/// Hybrid mode: the query is embedded (`pending`) while the lexical leg runs.
pub fn hybrid(
    conn: &Connection,
    text: &str,
    pending: PendingQuery<'_>,
    filters: &Filters,
    now_secs: i64,
) -> Result<Vec<Ranked>> {
    let PendingQuery { matrix, embed } = pending;
    let (lexical, query) = std::thread::scope(|s| {
        let embedding = std::thread::Builder::new()
            .name("cairn-query-embed".into())
            .spawn_scoped(s, embed);
        let lexical = rank::scored(conn, text, filters, now_secs, LEG);
        let query = match embedding {
            Ok(handle) => handle.join().unwrap_or_else(|_| {
                Err(crate::Error::External(
                    "the query's embedding failed (the model panicked); try --mode lexical".into(),
                ))
            }),
            // The work went with the thread that could not start.
            Err(e) => Err(crate::Error::External(format!(
                "could not start a thread to embed the query ({e}); try --mode lexical"
            ))),
        };
        (lexical, query)
    });
    let (lexical, query) = (lexical?, query?);
    let sem = SemanticQuery {
        matrix,
        query: &query.vector,
        floor: query.floor,
    };
    fuse(conn, lexical, &sem, filters)
}

/// Fuse the lexical leg with the vector leg of `sem`.
fn fuse(
    conn: &Connection,
    lexical: Vec<rank::Scored>,
    sem: &SemanticQuery<'_>,
    filters: &Filters,
) -> Result<Vec<Ranked>> {
    let limit = filters.limit() as usize;
    let vector = vector_leg(conn, sem, filters, LEG)?;
    let mut rowids: HashMap<String, i64> = HashMap::new();
    let mut breakdowns: HashMap<String, ScoreBreakdown> = HashMap::new();
    let mut cosines: HashMap<String, f32> = HashMap::new();
    let lexical_ids: Vec<String> = lexical
        .into_iter()
        .filter(|s| s.breakdown.coverage >= MIN_COVERAGE)
        .map(|s| {
            rowids.insert(s.id.clone(), s.rowid);
            breakdowns.insert(s.id.clone(), s.breakdown);
            s.id
        })
        .collect();
    let vector_ids: Vec<String> = vector
        .into_iter()
        .map(|(rowid, id, cos)| {
            rowids.insert(id.clone(), rowid);
            cosines.insert(id.clone(), cos);
            id
        })
        .collect();
    let fused = fusion::rrf(&[lexical_ids, vector_ids]);
    let rows = fused
        .into_iter()
        .take(limit)
        .filter_map(|f| {
            let rowid = *rowids.get(&f.key)?;
            let mut b = breakdowns.remove(&f.key).unwrap_or_default();
            let mut reasons = rank::lexical_reasons(&b);
            b.lexical_rank = f.ranks[0];
            b.vector_rank = f.ranks[1];
            if let Some(cos) = cosines.get(&f.key) {
                b.semantic = Some(f64::from(*cos));
                reasons.push("semantic".to_owned());
            }
            Some((rowid, f.score, b, reasons))
        })
        .collect();
    rank::load(conn, rows)
}

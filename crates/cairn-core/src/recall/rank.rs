//! Lexical ranking, policy `cairn-bm25f-v1`.
//!
//! 1. The query goes through the same analyzer as the index ([`super::analyze`]).
//! 2. Candidates: for each query term, the entries where it has the highest impact (the index
//!    keeps postings ordered by impact, see [`super::index`]), summed as `idf · impact`; the
//!    structured filters are applied; the best few hundred go on.
//! 3. Those are rescored exactly with BM25F over four fields and corpus-level statistics:
//!
//!    `tf~(t) = Σ_f w_f · tf_f(t) / (1 − b_f + b_f · len_f / avglen_f)`
//!    `bm25f = Σ_t idf(t) · tf~(t) / (k1 + tf~(t))`, `idf(t) = ln(1 + (N − df + ½) / (df + ½))`
//!
//!    with k1 = 1.2 and (w, b) = title (2.5, 0.3), trigger (2.0, 0.5), body (1.0, 0.75),
//!    evidence snippets (0.6, 0.75).
//! 4. Documented boosts, added to bm25f:
//!    * phrase: +0.4 for every pair of query terms that appears adjacent, in order, in a field;
//!    * recency: +0.5 · exp(−age in days / 90) from `updated_at`;
//!    * confidence: +0.3 · confidence when the entry has one;
//!    * review: +0.3 for human-reviewed entries;
//!    * penalty: −0.5 when provenance was revoked, −0.3 when the entry is stale.
//! 5. Order by score, then diversify: the best entry of each source session first, then the
//!    rest in score order.
//!
//! `ScoreBreakdown` carries every component so `--scores` can show how a score was made.

use std::collections::{HashMap, HashSet};

use rusqlite::{Connection, params_from_iter};
use serde::{Deserialize, Serialize};

use super::analyze::Analyzer;
use super::index::{self, B, FIELDS, K1, WEIGHTS};
use super::model::{Entry, ReviewState};
use super::store::{ENTRY_COLUMNS, Filters, complete, entry_from_row};
use crate::error::Result;

pub const POLICY: &str = "cairn-bm25f-v1";
/// Postings read per query term on the first pass.
const POSTINGS_PER_TERM: usize = 64;
/// Candidates rescored exactly.
const RESCORE: usize = 64;

/// How a score was made.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct ScoreBreakdown {
    pub bm25f: f64,
    /// Contribution of each field to bm25f (title, body, trigger, evidence), approximately:
    /// each term's score split in proportion to its weighted field frequencies.
    pub title: f64,
    pub body: f64,
    pub trigger: f64,
    pub evidence: f64,
    pub phrase: f64,
    pub recency: f64,
    pub confidence: f64,
    pub review: f64,
    pub penalty: f64,
    pub total: f64,
    pub matched_terms: Vec<String>,
    /// Share of the query's IDF mass the entry matched (0..=1): how much of the question it
    /// answers lexically, whatever the field weights. Hybrid mode admits only entries covering
    /// at least [`crate::recall::hybrid::MIN_COVERAGE`] into its lexical leg.
    #[serde(default)]
    pub coverage: f64,
    /// Cosine similarity to the query, when the vector leg found the entry.
    #[serde(default)]
    pub semantic: Option<f64>,
    /// 1-based rank in the lexical and vector legs (hybrid and vector modes).
    #[serde(default)]
    pub lexical_rank: Option<u32>,
    #[serde(default)]
    pub vector_rank: Option<u32>,
}

/// One ranked entry.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct Ranked {
    pub entry: Entry,
    pub score: f64,
    pub breakdown: ScoreBreakdown,
    /// Why it matched, in order: `keyword` (title, body or trigger terms), `evidence`
    /// (evidence snippet terms), `phrase` (adjacent query terms), `semantic` (the vector leg).
    #[serde(default)]
    pub match_reasons: Vec<String>,
}

/// A scored entry before it is loaded.
#[derive(Debug, Clone)]
pub(crate) struct Scored {
    pub rowid: i64,
    pub id: String,
    pub breakdown: ScoreBreakdown,
}

/// Rank entries passing `filters` for `query`. An empty query lists by recency (score 0).
pub fn rank(
    conn: &Connection,
    query: &str,
    filters: &Filters,
    now_secs: i64,
) -> Result<Vec<Ranked>> {
    let terms = Analyzer::global().query_terms(query);
    let limit = filters.limit() as usize;
    if terms.is_empty() {
        return Ok(super::store::list(conn, filters)?
            .into_iter()
            .map(|entry| Ranked {
                entry,
                score: 0.0,
                breakdown: ScoreBreakdown::default(),
                match_reasons: Vec::new(),
            })
            .collect());
    }
    let scored = scored(conn, query, filters, now_secs, limit)?;
    load(
        conn,
        scored
            .into_iter()
            .map(|s| {
                let reasons = lexical_reasons(&s.breakdown);
                (s.rowid, s.breakdown.total, s.breakdown, reasons)
            })
            .collect(),
    )
}

/// The lexical ranking without loading entries: at most `limit`, best first (diversified).
/// Empty when the query has no terms.
pub(crate) fn scored(
    conn: &Connection,
    query: &str,
    filters: &Filters,
    now_secs: i64,
    limit: usize,
) -> Result<Vec<Scored>> {
    let db = crate::store::err_in(conn);
    let terms = Analyzer::global().query_terms(query);
    if terms.is_empty() {
        return Ok(Vec::new());
    }
    let stats = index::stats(conn).map_err(db)?;
    let dfs = index::doc_freqs(conn, &terms).map_err(db)?;
    let n = stats.docs.max(1.0);
    let idf: HashMap<&str, f64> = terms
        .iter()
        .zip(&dfs)
        .map(|(t, df)| {
            (
                t.as_str(),
                (1.0 + (n - df + 0.5) / (df + 0.5)).ln().max(0.0),
            )
        })
        .collect();
    let mut per_term = POSTINGS_PER_TERM;
    let max_per_term = POSTINGS_PER_TERM * 64;
    let truncated_at = |per_term: usize| dfs.iter().any(|df| *df > per_term as f64);
    // A depth whose postings cannot add up to `limit` candidates would be widened below
    // anyway: skip it (hybrid's 500-deep leg starts at 512 a term instead of reading 64 first).
    let live_terms = dfs.iter().filter(|df| **df > 0.0).count();
    while live_terms * per_term < limit && truncated_at(per_term) && per_term < max_per_term {
        per_term *= 8;
    }
    loop {
        let passing = candidates(conn, &terms, &dfs, &idf, filters, per_term, limit)?;
        if passing.len() < limit && truncated_at(per_term) && per_term < max_per_term {
            // Selective filters left too few: read deeper into the postings.
            per_term *= 8;
            continue;
        }
        return rescore(conn, &terms, &idf, &stats, passing, limit, now_secs);
    }
}

/// The match reasons a lexical breakdown supports.
pub(crate) fn lexical_reasons(b: &ScoreBreakdown) -> Vec<String> {
    let mut r = Vec::new();
    if b.title + b.body + b.trigger > 0.0 {
        r.push("keyword".to_owned());
    }
    if b.evidence > 0.0 {
        r.push("evidence".to_owned());
    }
    if b.phrase > 0.0 {
        r.push("phrase".to_owned());
    }
    r
}

/// Load the entries of scored rows, keeping their order.
pub(crate) fn load(
    conn: &Connection,
    rows: Vec<(i64, f64, ScoreBreakdown, Vec<String>)>,
) -> Result<Vec<Ranked>> {
    let db = crate::store::err_in(conn);
    let mut out = Vec::with_capacity(rows.len());
    let mut stmt = conn
        .prepare_cached(&format!(
            "SELECT {ENTRY_COLUMNS} FROM recall_entries e WHERE e.rowid = ?1"
        ))
        .map_err(db)?;
    for (rowid, score, breakdown, match_reasons) in rows {
        let row = stmt.query_row([rowid], entry_from_row).map_err(db)?;
        let (entry, _) = complete(conn, row).map_err(db)?;
        out.push(Ranked {
            entry,
            score,
            breakdown,
            match_reasons,
        });
    }
    Ok(out)
}

/// Entries passing the filters among the best postings of each term, with their approximate
/// score (`Σ idf · impact`), best first, at most [`RESCORE`].
fn candidates(
    conn: &Connection,
    terms: &[String],
    dfs: &[f64],
    idf: &HashMap<&str, f64>,
    filters: &Filters,
    per_term: usize,
    limit: usize,
) -> Result<Vec<Meta>> {
    let db = crate::store::err_in(conn);
    let mut approx: HashMap<i64, f64> = HashMap::new();
    for (t, df) in terms.iter().zip(dfs) {
        if *df <= 0.0 {
            continue;
        }
        let w = idf.get(t.as_str()).copied().unwrap_or(0.0);
        for (rowid, impact) in index::top_postings(conn, t, per_term).map_err(db)? {
            *approx.entry(rowid).or_insert(0.0) += w * impact;
        }
    }
    if approx.is_empty() {
        return Ok(Vec::new());
    }
    // Only the best `want` passing candidates are kept, so the filters are checked on the best
    // by approximate score first, widening while too few pass. Every candidate tied with the
    // last one checked is checked too: whatever is left out scores strictly lower than all that
    // was checked, so once `want` pass, they are exactly the `want` best that pass.
    let want = RESCORE.max(limit);
    let mut ranked: Vec<(i64, f64)> = approx.into_iter().collect();
    ranked.sort_unstable_by(|a, b| b.1.total_cmp(&a.1));
    let mut n = (want + want / 4).min(ranked.len());
    loop {
        while n < ranked.len() && ranked[n].1 == ranked[n - 1].1 {
            n += 1;
        }
        let mut passing = passing_meta(conn, &ranked[..n], filters)?;
        if passing.len() >= want || n == ranked.len() {
            passing.sort_by(|a, b| b.approx.total_cmp(&a.approx).then_with(|| a.id.cmp(&b.id)));
            passing.truncate(want);
            return Ok(passing);
        }
        n = n.saturating_mul(2).min(ranked.len());
    }
}

/// The scoring metadata of the candidates (rowid, approximate score) passing `filters`.
fn passing_meta(
    conn: &Connection,
    candidates: &[(i64, f64)],
    filters: &Filters,
) -> Result<Vec<Meta>> {
    let db = crate::store::err_in(conn);
    let approx: HashMap<i64, f64> = candidates.iter().copied().collect();
    let (where_sql, filter_args) = filters.sql(conn)?;
    let ids: String = candidates
        .iter()
        .map(|(rowid, _)| rowid.to_string())
        .collect::<Vec<_>>()
        .join(",");
    let sql = format!(
        "SELECT e.rowid, e.id, e.updated_at, e.confidence, e.review_state, e.provenance_ok, e.stale,
                COALESCE(e.source_session_id, -e.rowid)
         FROM recall_entries e WHERE e.rowid IN ({ids}) AND {where_sql}"
    );
    let mut stmt = conn.prepare(&sql).map_err(db)?;
    let rows = stmt
        .query_map(params_from_iter(filter_args), |r| {
            let review: String = r.get(4)?;
            Ok(Meta {
                rowid: r.get(0)?,
                id: r.get(1)?,
                updated_at: r.get(2)?,
                confidence: r.get(3)?,
                human_reviewed: review == ReviewState::HumanReviewed.as_str(),
                provenance_ok: r.get(5)?,
                stale: r.get(6)?,
                source: r.get(7)?,
                approx: 0.0,
            })
        })
        .map_err(db)?;
    let mut passing: Vec<Meta> = Vec::new();
    for row in rows {
        let mut m = row.map_err(db)?;
        m.approx = approx.get(&m.rowid).copied().unwrap_or(0.0);
        passing.push(m);
    }
    Ok(passing)
}

/// Exact BM25F and boosts for the candidates, then order, diversify and load the entries.
fn rescore(
    conn: &Connection,
    terms: &[String],
    idf: &HashMap<&str, f64>,
    stats: &index::Stats,
    passing: Vec<Meta>,
    limit: usize,
    now_secs: i64,
) -> Result<Vec<Scored>> {
    let db = crate::store::err_in(conn);
    if passing.is_empty() {
        return Ok(Vec::new());
    }
    let ids: String = passing
        .iter()
        .map(|m| m.rowid.to_string())
        .collect::<Vec<_>>()
        .join(",");
    let mut stmt = conn
        .prepare(&format!("SELECT entry_rowid, title, body, trigger, evidence FROM recall_terms WHERE entry_rowid IN ({ids})"))
        .map_err(db)?;
    // Scored straight from SQLite's row buffers: hybrid's leg rescores 500 entries, and
    // copying their analysed fields out first cost as much as scoring them.
    let slot: HashMap<i64, usize> = passing
        .iter()
        .enumerate()
        .map(|(i, m)| (m.rowid, i))
        .collect();
    let mut breakdowns: Vec<Option<ScoreBreakdown>> = vec![None; passing.len()];
    let mut rows = stmt.query([]).map_err(db)?;
    while let Some(row) = rows.next().map_err(db)? {
        let rowid: i64 = row.get(0).map_err(db)?;
        let Some(&i) = slot.get(&rowid) else {
            continue;
        };
        let text = |c: usize| -> Result<&str> {
            let v = row
                .get_ref(c)
                .and_then(|v| v.as_str_or_null().map_err(Into::into));
            Ok(v.map_err(db)?.unwrap_or(""))
        };
        let fields = [text(1)?, text(2)?, text(3)?, text(4)?];
        breakdowns[i] = Some(score(
            terms,
            idf,
            &fields,
            &stats.avg_len,
            &passing[i],
            now_secs,
        ));
    }
    let mut scored: Vec<(Meta, ScoreBreakdown)> = Vec::new();
    for (meta, b) in passing.into_iter().zip(breakdowns) {
        let Some(b) = b else {
            continue;
        };
        if !b.matched_terms.is_empty() && b.total > 0.0 {
            scored.push((meta, b));
        }
    }
    scored.sort_by(|a, b| {
        b.1.total
            .total_cmp(&a.1.total)
            .then_with(|| a.0.id.cmp(&b.0.id))
    });
    // Only the entries shown are loaded in full (by the caller).
    Ok(diversify(scored, limit)
        .into_iter()
        .map(|(meta, breakdown)| Scored {
            rowid: meta.rowid,
            id: meta.id,
            breakdown,
        })
        .collect())
}

/// BM25F and the boosts for one candidate (its analysed fields).
fn score(
    terms: &[String],
    idf: &HashMap<&str, f64>,
    fields: &[&str; 4],
    avg_len: &[f64; 4],
    entry: &Meta,
    now_secs: i64,
) -> ScoreBreakdown {
    // One pass over each field: its length, each term's frequency, and which adjacent
    // query-term pairs occur in order.
    let mut len = [0usize; 4];
    let mut tf = vec![[0usize; 4]; terms.len()];
    let mut pair_found = vec![false; terms.len().saturating_sub(1)];
    for (i, field) in fields.iter().enumerate() {
        let mut prev: Option<&str> = None;
        for tok in field.split(' ').filter(|t| !t.is_empty()) {
            len[i] += 1;
            for (j, t) in terms.iter().enumerate() {
                if tok == t {
                    tf[j][i] += 1;
                }
            }
            if let Some(p) = prev {
                for (j, pair) in terms.windows(2).enumerate() {
                    if p == pair[0] && tok == pair[1] {
                        pair_found[j] = true;
                    }
                }
            }
            prev = Some(tok);
        }
    }
    let mut b = ScoreBreakdown::default();
    let mut per_field = [0.0f64; 4];
    let idf_of = |t: &str| idf.get(t).copied().unwrap_or(0.0);
    let query_mass: f64 = terms.iter().map(|t| idf_of(t)).sum();
    let mut matched_mass = 0.0;
    for (t, tf) in terms.iter().zip(&tf) {
        let mut weighted = [0.0f64; 4];
        for i in 0..4 {
            if tf[i] > 0 {
                let norm = 1.0 - B[i] + B[i] * (len[i] as f64 / avg_len[i]);
                weighted[i] = WEIGHTS[i] * tf[i] as f64 / norm.max(0.01);
            }
        }
        let tf_tilde: f64 = weighted.iter().sum();
        if tf_tilde <= 0.0 {
            continue;
        }
        b.matched_terms.push(t.clone());
        matched_mass += idf_of(t);
        let term_score = idf_of(t) * tf_tilde / (K1 + tf_tilde);
        b.bm25f += term_score;
        for i in 0..4 {
            per_field[i] += term_score * weighted[i] / tf_tilde;
        }
    }
    [b.title, b.body, b.trigger, b.evidence] = per_field;
    if query_mass > 0.0 {
        b.coverage = (matched_mass / query_mass).clamp(0.0, 1.0);
    }
    // Adjacent query-term pairs found in order in some field.
    let mut seen_pairs = HashSet::new();
    for (pair, hit) in terms.windows(2).zip(pair_found) {
        if hit && seen_pairs.insert((pair[0].as_str(), pair[1].as_str())) {
            b.phrase += 0.4;
        }
    }
    if let Ok(updated) = entry.updated_at.parse::<jiff::Timestamp>() {
        let age_days = ((now_secs - updated.as_second()).max(0) as f64) / 86_400.0;
        b.recency = 0.5 * (-age_days / 90.0).exp();
    }
    b.confidence = entry.confidence.map_or(0.0, |c| 0.3 * c.clamp(0.0, 1.0));
    b.review = if entry.human_reviewed { 0.3 } else { 0.0 };
    b.penalty = if entry.provenance_ok { 0.0 } else { -0.5 } + if entry.stale { -0.3 } else { 0.0 };
    if b.matched_terms.is_empty() {
        return b;
    }
    b.total = b.bm25f + b.phrase + b.recency + b.confidence + b.review + b.penalty;
    b
}

/// Best entry of each source session first (two entries from one session do not take the top
/// two places when another session matched), then the rest in score order; at most `limit`.
fn diversify(scored: Vec<(Meta, ScoreBreakdown)>, limit: usize) -> Vec<(Meta, ScoreBreakdown)> {
    let mut seen = HashSet::new();
    let (mut first, mut rest) = (Vec::new(), Vec::new());
    for item in scored {
        if seen.insert(item.0.source) {
            first.push(item);
        } else {
            rest.push(item);
        }
    }
    first.extend(rest);
    first.truncate(limit);
    first
}

/// What scoring needs of an entry (the full entry is loaded only for the results shown).
struct Meta {
    rowid: i64,
    id: String,
    updated_at: String,
    confidence: Option<f64>,
    human_reviewed: bool,
    provenance_ok: bool,
    stale: bool,
    /// The source session, or a value unique to the entry when it has none.
    source: i64,
    /// `Σ idf · impact` over the query terms whose postings named this entry.
    approx: f64,
}

/// Field names, for rendering breakdowns.
pub fn field_names() -> [&'static str; 4] {
    FIELDS
}

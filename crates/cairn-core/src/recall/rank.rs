//! Lexical ranking, policy `cairn-bm25f-v1`.
//!
//! 1. The query goes through the same analyzer as the index ([`super::analyze`]).
//! 2. Candidates: FTS5 over the analysed index, matching any query term whose document
//!    frequency is below a third of the corpus (very common terms still score, but do not
//!    enumerate half the corpus), filtered by the structured filters, at most 1 000.
//! 3. Score each candidate with BM25F over four fields, with corpus-level statistics:
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

use rusqlite::{Connection, params_from_iter, types::Value as SqlValue};
use serde::{Deserialize, Serialize};

use super::analyze::Analyzer;
use super::index::{self, FIELDS};
use super::model::{Entry, ReviewState};
use super::store::{ENTRY_COLUMNS, Filters, entry_from_row, evidence_of};
use crate::error::Result;

pub const POLICY: &str = "cairn-bm25f-v1";
const K1: f64 = 1.2;
const WEIGHTS: [f64; 4] = [2.5, 1.0, 2.0, 0.6];
const B: [f64; 4] = [0.3, 0.75, 0.5, 0.75];
const MAX_CANDIDATES: i64 = 1000;

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
}

/// One ranked entry.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct Ranked {
    pub entry: Entry,
    pub score: f64,
    pub breakdown: ScoreBreakdown,
}

fn db(e: rusqlite::Error) -> crate::Error {
    crate::archive::store::db_err(std::path::Path::new(":recall"), e)
}

/// Rank entries passing `filters` for `query`. An empty query lists by recency (score 0).
pub fn rank(
    conn: &Connection,
    query: &str,
    filters: &Filters,
    now_secs: i64,
) -> Result<Vec<Ranked>> {
    let terms = Analyzer::global().query_terms(query);
    let (where_sql, filter_args) = filters.sql()?;
    let limit = filters.limit() as usize;
    if terms.is_empty() {
        return Ok(super::store::list(conn, filters)?
            .into_iter()
            .map(|entry| Ranked {
                entry,
                score: 0.0,
                breakdown: ScoreBreakdown::default(),
            })
            .collect());
    }
    let stats = index::stats(conn).map_err(db)?;
    let dfs = index::doc_freqs(conn, &terms).map_err(db)?;
    let n = stats.docs.max(1.0);
    // Terms present in the corpus; the rare ones enumerate candidates.
    let present: Vec<(usize, f64)> = dfs
        .iter()
        .copied()
        .enumerate()
        .filter(|(_, df)| *df > 0.0)
        .collect();
    if present.is_empty() {
        return Ok(Vec::new());
    }
    let common_cut = (n / 3.0).max(50.0);
    let mut enumerating: Vec<String> = present
        .iter()
        .filter(|(_, df)| *df <= common_cut)
        .map(|(i, _)| terms[*i].clone())
        .collect();
    if enumerating.is_empty() {
        // Every term is common: use the rarest one.
        if let Some((i, _)) = present.iter().min_by(|a, b| a.1.total_cmp(&b.1)) {
            enumerating.push(terms[*i].clone());
        }
    }
    let sql = format!(
        "SELECT {ENTRY_COLUMNS}, f.title, f.body, f.trigger, f.evidence
         FROM (SELECT rowid, title, body, trigger, evidence FROM recall_fts WHERE recall_fts MATCH ?
               ORDER BY rank LIMIT {MAX_CANDIDATES}) f
         JOIN recall_entries e ON e.rowid = f.rowid
         WHERE {where_sql}"
    );
    let mut args = vec![SqlValue::Text(index::match_any(&enumerating))];
    args.extend(filter_args);
    let mut stmt = conn.prepare_cached(&sql).map_err(db)?;
    let rows = stmt
        .query_map(params_from_iter(args), |r| {
            let (entry, _) = entry_from_row(r)?;
            let fields: [String; 4] = [r.get(30)?, r.get(31)?, r.get(32)?, r.get(33)?];
            Ok((entry, fields))
        })
        .map_err(db)?;
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
    let mut ranked = Vec::new();
    for row in rows {
        let (entry, fields) = row.map_err(db)?;
        let b = score(&terms, &idf, &fields, &stats.avg_len, &entry, now_secs);
        if b.matched_terms.is_empty() || b.total <= 0.0 {
            continue;
        }
        ranked.push(Ranked {
            score: b.total,
            breakdown: b,
            entry,
        });
    }
    ranked.sort_by(|a, b| {
        b.score
            .total_cmp(&a.score)
            .then_with(|| a.entry.id.cmp(&b.entry.id))
    });
    let mut out = diversify(ranked);
    out.truncate(limit);
    for r in &mut out {
        r.entry.evidence = evidence_of(conn, &r.entry.id).map_err(db)?;
    }
    Ok(out)
}

/// BM25F and the boosts for one candidate (its analysed fields).
fn score(
    terms: &[String],
    idf: &HashMap<&str, f64>,
    fields: &[String; 4],
    avg_len: &[f64; 4],
    entry: &Entry,
    now_secs: i64,
) -> ScoreBreakdown {
    let tokens: Vec<Vec<&str>> = fields
        .iter()
        .map(|f| f.split(' ').filter(|t| !t.is_empty()).collect())
        .collect();
    let mut b = ScoreBreakdown::default();
    let mut per_field = [0.0f64; 4];
    for t in terms {
        let mut weighted = [0.0f64; 4];
        for (i, toks) in tokens.iter().enumerate() {
            let tf = toks.iter().filter(|x| **x == t.as_str()).count() as f64;
            if tf > 0.0 {
                let norm = 1.0 - B[i] + B[i] * (toks.len() as f64 / avg_len[i]);
                weighted[i] = WEIGHTS[i] * tf / norm.max(0.01);
            }
        }
        let tf_tilde: f64 = weighted.iter().sum();
        if tf_tilde <= 0.0 {
            continue;
        }
        b.matched_terms.push(t.clone());
        let term_score = idf.get(t.as_str()).copied().unwrap_or(0.0) * tf_tilde / (K1 + tf_tilde);
        b.bm25f += term_score;
        for i in 0..4 {
            per_field[i] += term_score * weighted[i] / tf_tilde;
        }
    }
    [b.title, b.body, b.trigger, b.evidence] = per_field;
    // Adjacent query-term pairs found in order in some field.
    let mut seen_pairs = HashSet::new();
    for pair in terms.windows(2) {
        let hit = tokens
            .iter()
            .any(|toks| toks.windows(2).any(|w| w[0] == pair[0] && w[1] == pair[1]));
        if hit && seen_pairs.insert((pair[0].clone(), pair[1].clone())) {
            b.phrase += 0.4;
        }
    }
    if let Ok(updated) = entry.updated_at.parse::<jiff::Timestamp>() {
        let age_days = ((now_secs - updated.as_second()).max(0) as f64) / 86_400.0;
        b.recency = 0.5 * (-age_days / 90.0).exp();
    }
    b.confidence = entry.confidence.map_or(0.0, |c| 0.3 * c.clamp(0.0, 1.0));
    b.review = if entry.review_state == ReviewState::HumanReviewed {
        0.3
    } else {
        0.0
    };
    b.penalty = if entry.provenance_ok { 0.0 } else { -0.5 } + if entry.stale { -0.3 } else { 0.0 };
    if b.matched_terms.is_empty() {
        return b;
    }
    b.total = b.bm25f + b.phrase + b.recency + b.confidence + b.review + b.penalty;
    b
}

/// Best entry of each source session first (two entries from one session do not take the top
/// two places when another session matched), then the rest in score order.
fn diversify(ranked: Vec<Ranked>) -> Vec<Ranked> {
    let mut seen = HashSet::new();
    let (mut first, mut rest) = (Vec::new(), Vec::new());
    for r in ranked {
        let key = r
            .entry
            .source_session_key
            .clone()
            .unwrap_or_else(|| r.entry.id.clone());
        if seen.insert(key) {
            first.push(r);
        } else {
            rest.push(r);
        }
    }
    first.extend(rest);
    first
}

/// Field names, for rendering breakdowns.
pub fn field_names() -> [&'static str; 4] {
    FIELDS
}

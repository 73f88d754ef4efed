//! Search over the archive (`cairn search`, the desktop's search): full text over record text
//! and tool input (lexical), or — with vectors built for the `sessions` store — by meaning over
//! turns (vector), or both fused by Reciprocal Rank Fusion (hybrid). A turn is embedded as its
//! opening prompt and the last thing the assistant said (see `semantic::vectors::turn_doc`).

use std::collections::HashMap;

use rusqlite::Connection;
use serde::{Deserialize, Serialize};

use crate::archive::Agent;
use crate::archive::store::{self as archive, RecordFilter};
pub use crate::archive::store::{MATCH_END, MATCH_START, SearchHit};
use crate::semantic::Mode;
use crate::semantic::fusion;
use crate::semantic::vectors::Matrix;

/// A search and its filters.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct SearchQuery {
    pub text: String,
    pub agent: Option<Agent>,
    pub branch: Option<String>,
    pub project: Option<String>,
    /// Only records at or after this time (RFC 3339 or `YYYY-MM-DD`).
    pub since: Option<String>,
    /// Only records before this time (RFC 3339 or `YYYY-MM-DD`).
    pub until: Option<String>,
    pub limit: Option<u32>,
    /// lexical (default), vector or hybrid.
    #[serde(default)]
    pub mode: Mode,
}

/// Turn what a person typed into an FTS5 query: every word must match (in any column), each
/// quoted so punctuation and FTS syntax characters are literal. A query that starts with `"`
/// is passed through as a raw FTS5 expression (phrases, OR, NEAR).
pub fn fts_query(input: &str) -> Option<String> {
    let trimmed = input.trim();
    if trimmed.starts_with('"') && trimmed.len() > 1 {
        return Some(trimmed.to_owned());
    }
    let terms: Vec<String> = trimmed
        .split_whitespace()
        .map(|t| format!("\"{}\"", t.replace('"', "\"\"")))
        .collect();
    (!terms.is_empty()).then(|| terms.join(" "))
}

pub fn search(conn: &Connection, q: &SearchQuery) -> rusqlite::Result<Vec<SearchHit>> {
    let Some(expr) = fts_query(&q.text) else {
        return Ok(Vec::new());
    };
    archive::search_records(conn, &expr, &filter(q), q.limit.unwrap_or(20))
}

/// The archive's side of a query: which records it keeps.
fn filter(q: &SearchQuery) -> RecordFilter<'_> {
    RecordFilter {
        agent: q.agent,
        branch: q.branch.as_deref(),
        project: q.project.as_deref(),
        since: q.since.as_deref().filter(|s| !s.is_empty()),
        until: q.until.as_deref().filter(|s| !s.is_empty()),
    }
}

/// Turns nearest to the query vector that pass the filters, best first, with their cosine.
fn vector_hits(
    conn: &Connection,
    q: &SearchQuery,
    matrix: &Matrix,
    query: &[f32],
    limit: usize,
) -> rusqlite::Result<Vec<(SearchHit, f64)>> {
    let mut k = (limit * 4).max(200);
    let scores = matrix.scores(query);
    loop {
        let top = matrix.top_of(&scores, k);
        let ids: Vec<i64> = top.iter().map(|(id, _)| *id).collect();
        let mut found = archive::turn_hits(conn, &ids, &filter(q))?;
        if found.len() >= limit || k >= matrix.len() {
            let mut out: Vec<(SearchHit, f64)> = top
                .into_iter()
                .filter_map(|(id, cos)| found.remove(&id).map(|h| (h, f64::from(cos))))
                .collect();
            out.truncate(limit);
            return Ok(out);
        }
        k = k.saturating_mul(2);
    }
}

/// Vector or hybrid search over turns. `matrix` holds the fresh `sessions` vectors and `query`
/// the embedding of `q.text`.
pub fn semantic(
    conn: &Connection,
    q: &SearchQuery,
    matrix: &Matrix,
    query: &[f32],
) -> rusqlite::Result<Vec<SearchHit>> {
    let limit = q.limit.unwrap_or(20) as usize;
    if q.mode == Mode::Vector {
        return Ok(vector_hits(conn, q, matrix, query, limit)?
            .into_iter()
            .map(|(mut h, cos)| {
                h.score = Some(cos);
                h
            })
            .collect());
    }
    // Hybrid: full-text hits ranked per turn (a turn's best record stands for it), fused with
    // the vector ranking of turns.
    let key = |h: &SearchHit| {
        h.turn_key
            .clone()
            .unwrap_or_else(|| format!("{}#{}", h.session_key, h.ordinal))
    };
    let mut lexical = q.clone();
    lexical.limit = Some(500);
    let mut hits: HashMap<String, SearchHit> = HashMap::new();
    let mut lexical_keys = Vec::new();
    for h in search(conn, &lexical)? {
        if let std::collections::hash_map::Entry::Vacant(slot) = hits.entry(key(&h)) {
            lexical_keys.push(slot.key().clone());
            slot.insert(h);
        }
    }
    let mut vector_keys = Vec::new();
    for (h, _) in vector_hits(conn, q, matrix, query, 500)? {
        let k = key(&h);
        vector_keys.push(k.clone());
        hits.entry(k)
            .and_modify(|lex| lex.match_reasons.push("semantic".to_owned()))
            .or_insert(h);
    }
    Ok(fusion::rrf(&[lexical_keys, vector_keys])
        .into_iter()
        .take(limit)
        .filter_map(|f| {
            let mut h = hits.remove(&f.key)?;
            h.score = Some(f.score);
            Some(h)
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queries_quote_every_word() {
        assert_eq!(fts_query("login bug").as_deref(), Some("\"login\" \"bug\""));
        assert_eq!(
            fts_query("src/a.rs OR").as_deref(),
            Some("\"src/a.rs\" \"OR\"")
        );
        assert_eq!(fts_query("say \"hi").as_deref(), Some("\"say\" \"\"\"hi\""));
        assert_eq!(
            fts_query("\"exact phrase\"").as_deref(),
            Some("\"exact phrase\"")
        );
        assert_eq!(fts_query("   "), None);
    }
}

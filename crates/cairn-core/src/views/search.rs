//! Search over the archive (`cairn search`, the desktop's search): full text over record text
//! and tool input (lexical), or — with vectors built for the `sessions` store — by meaning over
//! turns (vector), or both fused by Reciprocal Rank Fusion (hybrid). A turn is embedded as its
//! opening prompt and the last thing the assistant said (see `semantic::vectors::turn_doc`).

use std::collections::HashMap;

use rusqlite::{Connection, params_from_iter, types::Value as SqlValue};
use serde::{Deserialize, Serialize};

use super::sessions::count;
use crate::archive::Agent;
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

/// One matching record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct SearchHit {
    pub session_key: String,
    pub turn_key: Option<String>,
    pub ordinal: u32,
    pub kind: String,
    pub role: Option<String>,
    pub tool_name: Option<String>,
    pub timestamp: Option<String>,
    pub agent: Agent,
    /// The session's title, else its first prompt (most Claude sessions have no title).
    pub title: Option<String>,
    pub project: Option<String>,
    pub git_branch: Option<String>,
    /// The matching text with each match between [`MATCH_START`] and [`MATCH_END`] (a vector
    /// hit: the turn's prompt, unmarked).
    pub snippet: String,
    /// Vector: cosine similarity; hybrid: the fused score; lexical: none (and left out).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub score: Option<f64>,
    /// `keyword` (full-text match), `semantic` (the vector leg found the turn). Optional in
    /// the JSON so front doors written before semantic search keep working.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub match_reasons: Vec<String>,
}

/// Opens a match in [`SearchHit::snippet`]: a private-use character, so it never collides
/// with text (square brackets, which git and logs print, would).
pub const MATCH_START: char = '\u{E000}';
/// Closes a match in [`SearchHit::snippet`].
pub const MATCH_END: char = '\u{E001}';

/// Append the query's filters (agent, branch, project, date range) to a `WHERE` clause over
/// `sessions s` and `records r`; `time` is the SQL expression the date range applies to.
fn push_filters(sql: &mut String, args: &mut Vec<SqlValue>, q: &SearchQuery, time: &str) {
    if let Some(agent) = q.agent {
        sql.push_str(" AND s.agent = ?");
        args.push(SqlValue::Text(agent.as_str().to_owned()));
    }
    if let Some(branch) = &q.branch {
        sql.push_str(" AND COALESCE(r.git_branch, s.git_branch) = ?");
        args.push(SqlValue::Text(branch.clone()));
    }
    if let Some(project) = &q.project {
        sql.push_str(" AND s.project = ?");
        args.push(SqlValue::Text(project.clone()));
    }
    if let Some(since) = q.since.as_deref().filter(|s| !s.is_empty()) {
        sql.push_str(&format!(" AND {time} >= ?"));
        args.push(SqlValue::Text(since.to_owned()));
    }
    if let Some(until) = q.until.as_deref().filter(|s| !s.is_empty()) {
        sql.push_str(&format!(" AND {time} < ?"));
        args.push(SqlValue::Text(until.to_owned()));
    }
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
    let mut sql = String::from(
        "SELECT s.session_key, t.turn_key, r.ordinal, r.kind, r.role, r.tool_name, r.timestamp,
                s.agent,
                COALESCE(s.title, (SELECT ft.preview FROM turns ft WHERE ft.session_id = s.id ORDER BY ft.turn_index LIMIT 1)),
                s.project, COALESCE(r.git_branch, s.git_branch),
                snippet(records_fts, -1, char(57344), char(57345), '…', 16)
         FROM records_fts
         JOIN records r ON r.id = records_fts.rowid
         JOIN sessions s ON s.id = r.session_id
         LEFT JOIN turns t ON t.id = r.turn_id
         WHERE records_fts MATCH ?",
    );
    let mut args = vec![SqlValue::Text(expr)];
    push_filters(&mut sql, &mut args, q, "r.timestamp");
    sql.push_str(" ORDER BY bm25(records_fts) LIMIT ?");
    args.push(SqlValue::Integer(i64::from(q.limit.unwrap_or(20))));
    let mut stmt = conn.prepare_cached(&sql)?;
    let rows = stmt.query_map(params_from_iter(args), |r| {
        let agent: String = r.get(7)?;
        Ok(SearchHit {
            session_key: r.get(0)?,
            turn_key: r.get(1)?,
            ordinal: count(r.get(2)?),
            kind: r.get(3)?,
            role: r.get(4)?,
            tool_name: r.get(5)?,
            timestamp: r.get(6)?,
            agent: Agent::parse(&agent).unwrap_or(Agent::Claude),
            title: r.get(8)?,
            project: r.get(9)?,
            git_branch: r.get(10)?,
            snippet: r.get::<_, Option<String>>(11)?.unwrap_or_default(),
            score: None,
            match_reasons: vec!["keyword".to_owned()],
        })
    })?;
    rows.collect()
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
        let ids: String = top
            .iter()
            .map(|(id, _)| id.to_string())
            .collect::<Vec<_>>()
            .join(",");
        let mut sql = format!(
            "SELECT t.id, s.session_key, t.turn_key, t.opening_ordinal, COALESCE(r.kind, 'message'), r.role,
                    r.tool_name, COALESCE(r.timestamp, t.started_at), s.agent, s.title, s.project,
                    COALESCE(r.git_branch, s.git_branch), COALESCE(t.preview, t.assistant_preview, '')
             FROM turns t
             JOIN sessions s ON s.id = t.session_id
             LEFT JOIN records r ON r.session_id = t.session_id AND r.ordinal = t.opening_ordinal
             WHERE t.id IN ({ids})"
        );
        let mut args: Vec<SqlValue> = Vec::new();
        push_filters(
            &mut sql,
            &mut args,
            q,
            "COALESCE(r.timestamp, t.started_at)",
        );
        let mut found: HashMap<i64, SearchHit> = HashMap::new();
        if !top.is_empty() {
            let mut stmt = conn.prepare(&sql)?;
            let rows = stmt.query_map(params_from_iter(args), |r| {
                let agent: String = r.get(8)?;
                Ok((
                    r.get::<_, i64>(0)?,
                    SearchHit {
                        session_key: r.get(1)?,
                        turn_key: r.get(2)?,
                        ordinal: count(r.get(3)?),
                        kind: r.get(4)?,
                        role: r.get(5)?,
                        tool_name: r.get(6)?,
                        timestamp: r.get(7)?,
                        agent: Agent::parse(&agent).unwrap_or(Agent::Claude),
                        title: r.get(9)?,
                        project: r.get(10)?,
                        git_branch: r.get(11)?,
                        snippet: r.get(12)?,
                        score: None,
                        match_reasons: vec!["semantic".to_owned()],
                    },
                ))
            })?;
            for row in rows {
                let (id, hit) = row?;
                found.insert(id, hit);
            }
        }
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

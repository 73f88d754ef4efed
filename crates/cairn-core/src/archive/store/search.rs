//! Search's reads: records by full text, turns by id.

use std::borrow::Cow;

use rusqlite::{Connection, OptionalExtension, params_from_iter, types::Value as SqlValue};
use serde::{Deserialize, Serialize};

use super::count;
use crate::archive::Agent;

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
    /// When the agent took the matching record back (a rewind, a rewritten document): it
    /// happened, but is no longer part of the conversation the agent kept. Absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retracted_at: Option<String>,
    /// Who published the session, for a teammate's session pulled here (their claim, not
    /// verified): its text is theirs, not this machine's own.
    #[serde(default)]
    pub published_by: Option<String>,
}

/// Opens a match in [`SearchHit::snippet`]: a private-use character, so it never collides
/// with text (square brackets, which git and logs print, would).
pub const MATCH_START: char = '\u{E000}';
/// Closes a match in [`SearchHit::snippet`].
pub const MATCH_END: char = '\u{E001}';

/// Which records a search keeps (each bound present narrows it; empty bounds are absent).
#[derive(Debug, Clone, Copy, Default)]
pub struct RecordFilter<'a> {
    pub agent: Option<Agent>,
    pub branch: Option<&'a str>,
    pub project: Option<&'a str>,
    /// At or after this time (RFC 3339 or `YYYY-MM-DD`).
    pub since: Option<&'a str>,
    /// Before this time.
    pub until: Option<&'a str>,
}

impl RecordFilter<'_> {
    /// Whether it keeps every record.
    pub fn is_empty(&self) -> bool {
        self.agent.is_none()
            && self.branch.is_none()
            && self.project.is_none()
            && self.since.is_none()
            && self.until.is_none()
    }
}

/// Append `f` to a `WHERE` clause over `sessions s` and `records r`; `time` is the SQL
/// expression the date range applies to.
fn push_record_filter(
    sql: &mut String,
    args: &mut Vec<SqlValue>,
    f: &RecordFilter<'_>,
    time: &str,
) {
    if let Some(agent) = f.agent {
        sql.push_str(&format!(" AND {} = ?", super::agent_filter_sql()));
        args.push(SqlValue::Text(agent.as_str().to_owned()));
    }
    if let Some(branch) = f.branch {
        sql.push_str(" AND COALESCE(r.git_branch, s.git_branch) = ?");
        args.push(SqlValue::Text(branch.to_owned()));
    }
    if let Some(project) = f.project {
        sql.push_str(" AND s.project = ?");
        args.push(SqlValue::Text(project.to_owned()));
    }
    if let Some(since) = f.since {
        sql.push_str(&format!(" AND {time} >= ?"));
        args.push(SqlValue::Text(since.to_owned()));
    }
    if let Some(until) = f.until {
        sql.push_str(&format!(" AND {time} < ?"));
        args.push(SqlValue::Text(until.to_owned()));
    }
}

/// Records whose text matches the FTS5 expression `expr` and pass `f`, best first (bm25).
pub fn search_records(
    conn: &Connection,
    expr: &str,
    f: &RecordFilter<'_>,
    limit: u32,
) -> rusqlite::Result<Vec<SearchHit>> {
    let mut hits = ranked_records(conn, expr, f, limit)?;
    fill_snippets(conn, expr, &mut hits)?;
    Ok(hits)
}

/// [`search_records`] without the snippets: each hit's `snippet` is left empty, for
/// [`fill_snippets`] to fill on the few hits that are shown. FTS5 builds a snippet by reading
/// and tokenising the record's text again, and SQLite computes every selected column of every
/// matching row before it sorts them, so a snippet in the ranking query costs one per match
/// (hundreds of thousands for common words in a large archive), not one per hit kept.
pub fn ranked_records(
    conn: &Connection,
    expr: &str,
    f: &RecordFilter<'_>,
    limit: u32,
) -> rusqlite::Result<Vec<SearchHit>> {
    // The ranking reads only the match, its bm25 and what the filters need; the hit's columns
    // (and the session's first request, a subquery) are read for the `limit` rows kept. With no
    // filter it reads the index alone: two row lookups a match (its record, its session) cost
    // as much as its bm25 when common words match hundreds of thousands of records.
    //
    // Ranked by bm25, or, for the plain quoted phrases Cairn's own searches build, by
    // `cairn_bm25` given each phrase's record count, kept between queries (`phrase_rows`): the
    // same scores without bm25 visiting every record of every phrase on every query.
    // The counts are bound, the first parameters of the statement (its select list comes
    // first), so one statement serves every query of as many phrases.
    let mut args: Vec<SqlValue> = Vec::new();
    let rank = match crate::store::rank::phrases(expr) {
        Some(phrases) => {
            args.extend(
                super::phrase_rows(conn, &phrases)?
                    .into_iter()
                    .map(SqlValue::Integer),
            );
            format!(
                "{}(records_fts{})",
                crate::store::rank::NAME,
                ", ?".repeat(phrases.len())
            )
        }
        None => "bm25(records_fts)".to_owned(),
    };
    let mut inner = if f.is_empty() {
        format!(
            "SELECT rowid AS id, {rank} AS score
             FROM records_fts
             WHERE records_fts MATCH ?"
        )
    } else {
        format!(
            "SELECT records_fts.rowid AS id, {rank} AS score
             FROM records_fts
             JOIN records r ON r.id = records_fts.rowid
             JOIN sessions s ON s.id = r.session_id
             WHERE records_fts MATCH ?"
        )
    };
    args.push(SqlValue::Text(expr.to_owned()));
    push_record_filter(&mut inner, &mut args, f, "r.timestamp");
    inner.push_str(" ORDER BY score LIMIT ?");
    args.push(SqlValue::Integer(i64::from(limit)));
    let sql = format!(
        "WITH top(id, score) AS MATERIALIZED ({inner})
         SELECT s.session_key, t.turn_key, r.ordinal, r.kind, r.role, r.tool_name, r.timestamp,
                {},
                COALESCE(s.title, {}),
                s.project, COALESCE(r.git_branch, s.git_branch), r.retracted_at, s.publisher
         FROM top
         JOIN records r ON r.id = top.id
         JOIN sessions s ON s.id = r.session_id
         LEFT JOIN turns t ON t.id = r.turn_id
         ORDER BY top.score, top.id",
        super::RAN_AS_SQL,
        super::first_request_sql("s.id")
    );
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
            agent: crate::agent::stored(&agent, None).0,
            title: r.get(8)?,
            project: r.get(9)?,
            git_branch: r.get(10)?,
            snippet: String::new(),
            score: None,
            match_reasons: vec!["keyword".to_owned()],
            retracted_at: r.get(11)?,
            published_by: r.get(12)?,
        })
    })?;
    rows.collect()
}

/// Fill the empty snippet of each full-text hit in `hits` (one `keyword` among its reasons,
/// as [`ranked_records`] leaves it) with its record's matches for `expr` marked. A hit whose
/// record no longer matches keeps an empty snippet.
pub fn fill_snippets(
    conn: &Connection,
    expr: &str,
    hits: &mut [SearchHit],
) -> rusqlite::Result<()> {
    let mut id_of = conn.prepare_cached(
        "SELECT r.id FROM records r JOIN sessions s ON s.id = r.session_id
         WHERE s.session_key = ?1 AND r.ordinal = ?2",
    )?;
    // The best column's snippet, and the tool input's: when they are the same, the snippet is
    // of the stored JSON, whose escapes may be glued to a marked word.
    let mut snippet_of = conn.prepare_cached(
        "SELECT snippet(records_fts, -1, char(57344), char(57345), '…', 16),
                snippet(records_fts, 1, char(57344), char(57345), '…', 16)
         FROM records_fts WHERE records_fts MATCH ?1 AND rowid = ?2",
    )?;
    let mut sources_of =
        conn.prepare_cached("SELECT text, tool_input FROM records WHERE id = ?1")?;
    for hit in hits
        .iter_mut()
        .filter(|h| h.snippet.is_empty() && h.match_reasons.iter().any(|m| m == "keyword"))
    {
        let id: Option<i64> = id_of
            .query_row(rusqlite::params![hit.session_key, hit.ordinal], |r| {
                r.get(0)
            })
            .optional()?;
        let Some(id) = id else { continue };
        let mut snippet: Option<(Option<String>, Option<String>)> = snippet_of
            .query_row(rusqlite::params![expr, id], |r| Ok((r.get(0)?, r.get(1)?)))
            .optional()?;
        // Cut at its front, a snippet may start inside a path: it starts at the path's start.
        if let Some((best, input)) = &mut snippet
            && best.as_deref().is_some_and(|b| b.starts_with('…'))
        {
            let (text, tool_input): (Option<String>, Option<String>) =
                sources_of.query_row([id], |r| Ok((r.get(0)?, r.get(1)?)))?;
            let sources = [text.as_deref(), tool_input.as_deref()];
            let sources: Vec<&str> = sources.into_iter().flatten().collect();
            for s in [best, input].into_iter().flatten() {
                if let Cow::Owned(w) = super::fts::whole_first_word(s, &sources) {
                    *s = w;
                }
            }
        }
        hit.snippet = match snippet {
            Some((Some(best), input)) if input.as_ref() == Some(&best) => {
                super::fts::readable_input(&super::fts::unglued_marks(&best))
            }
            Some((best, _)) => best
                .map(|b| super::fts::unglued_text_marks(&b).into_owned())
                .unwrap_or_default(),
            None => String::new(),
        };
    }
    Ok(())
}

/// The turns among `ids` that pass `f`, each as a hit on its opening record (its prompt as the
/// snippet), keyed by turn id.
pub fn turn_hits(
    conn: &Connection,
    ids: &[i64],
    f: &RecordFilter<'_>,
) -> rusqlite::Result<std::collections::HashMap<i64, SearchHit>> {
    let mut found = std::collections::HashMap::new();
    if ids.is_empty() {
        return Ok(found);
    }
    let list = ids.iter().map(i64::to_string).collect::<Vec<_>>().join(",");
    let mut sql = format!(
        "SELECT t.id, s.session_key, t.turn_key, t.opening_ordinal, COALESCE(r.kind, 'message'), r.role,
                r.tool_name, COALESCE(r.timestamp, t.started_at), {ran_as},
                COALESCE(s.title, {first_request}), s.project,
                COALESCE(r.git_branch, s.git_branch), COALESCE(t.preview, t.assistant_preview, ''),
                r.retracted_at, s.publisher
         FROM turns t
         JOIN sessions s ON s.id = t.session_id
         LEFT JOIN records r ON r.session_id = t.session_id AND r.ordinal = t.opening_ordinal
         WHERE t.id IN ({list})",
        ran_as = super::RAN_AS_SQL,
        first_request = super::first_request_sql("s.id")
    );
    let mut args: Vec<SqlValue> = Vec::new();
    push_record_filter(
        &mut sql,
        &mut args,
        f,
        "COALESCE(r.timestamp, t.started_at)",
    );
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
                agent: crate::agent::stored(&agent, None).0,
                title: r.get(9)?,
                project: r.get(10)?,
                git_branch: r.get(11)?,
                snippet: r.get(12)?,
                score: None,
                match_reasons: vec!["semantic".to_owned()],
                retracted_at: r.get(13)?,
                published_by: r.get(14)?,
            },
        ))
    })?;
    for row in rows {
        let (id, hit) = row?;
        found.insert(id, hit);
    }
    Ok(found)
}

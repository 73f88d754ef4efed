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
    // first), so one statement serves every query of as many phrases; past
    // [`MAX_COUNTED_PHRASES`] (a pasted page), bm25 counts them itself: the same scores.
    //
    // The expression is first written in the index's terms (a CJK word as its character pairs,
    // an emoji as its term: `fts::in_index_terms`), and a phrase it repeats is asked once.
    let expr = super::fts::in_index_terms(expr);
    let expr = distinct_phrases(&expr);
    let expr: &str = &expr;
    let mut args: Vec<SqlValue> = Vec::new();
    let rank = match crate::store::rank::phrases(expr) {
        Some(phrases) if phrases.len() <= MAX_COUNTED_PHRASES => {
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
        _ => "bm25(records_fts)".to_owned(),
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

/// The most phrases a search ranks with `cairn_bm25` and the counts it keeps. Each count is an
/// argument of the function, and SQLite refuses a call of more than 1000 (its default
/// `SQLITE_MAX_FUNCTION_ARG`, the bundled build's): a query of a thousand words failed with the
/// statement's text as its message. A query of more phrases than this is a pasted text, not
/// words a person picked; bm25 ranks it alike, counting the phrases itself.
pub const MAX_COUNTED_PHRASES: usize = 256;

/// `expr` with each phrase it repeats asked once, when it is plain phrases all joined by spaces
/// (every one must match) or all by `OR` (any may): then a repeat (the same tokens, as
/// `fts::phrase_key` tells them, `"Login"` and `"login:"`) matches the same records and only
/// weighs its words twice. An expression mixing the two is left as it is (`"a" "b" OR "c" "a"`
/// asks `a` on both sides of the `OR`).
fn distinct_phrases(expr: &str) -> Cow<'_, str> {
    let Some(phrases) = crate::store::rank::phrases(expr) else {
        return Cow::Borrowed(expr);
    };
    let base = expr.as_ptr() as usize;
    let mut ors = 0;
    let mut last_end: Option<usize> = None;
    for p in &phrases {
        let at = p.as_ptr() as usize - base;
        if let Some(end) = last_end
            && expr[end..at].trim() == "OR"
        {
            ors += 1;
        }
        last_end = Some(at + p.len());
    }
    if ors != 0 && ors + 1 != phrases.len() {
        return Cow::Borrowed(expr);
    }
    let mut seen = std::collections::HashSet::new();
    let kept: Vec<&str> = phrases
        .iter()
        .copied()
        .filter(|p| seen.insert(super::fts::phrase_key(p)))
        .collect();
    if kept.len() == phrases.len() {
        return Cow::Borrowed(expr);
    }
    Cow::Owned(kept.join(if ors > 0 { " OR " } else { " " }))
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
    // A CJK word or an emoji is found by the terms after a record's own, which have no place
    // in its text (`fts::in_index_terms`): a record holding one has its snippet cut here, around
    // what the words find (`fts::Needles`).
    let needles = super::fts::Needles::of(expr);
    let expr = super::fts::in_index_terms(expr);
    let expr = distinct_phrases(&expr);
    let expr: &str = &expr;
    // The best column's snippet, and the tool input's: when they are the same, the snippet is
    // of the stored JSON, whose escapes may be glued to a marked word.
    let mut snippet_of = conn.prepare_cached(
        "SELECT snippet(records_fts, -1, char(57344), char(57345), '…', 16),
                snippet(records_fts, 1, char(57344), char(57345), '…', 16)
         FROM records_fts WHERE records_fts MATCH ?1 AND rowid = ?2",
    )?;
    let mut matches =
        conn.prepare_cached("SELECT 1 FROM records_fts WHERE records_fts MATCH ?1 AND rowid = ?2")?;
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
        let (text, tool_input): (Option<String>, Option<String>) = match sources_of
            .query_row([id], |r| Ok((r.get(0)?, r.get(1)?)))
            .optional()?
        {
            Some(sources) => sources,
            None => continue,
        };
        // A record with a tail: cut here, not by the index (whose snippet would read its text
        // again for nothing), when it still matches and the words find something in it.
        if needles.in_tail_of(text.as_deref(), tool_input.as_deref()) {
            if !matches.exists(rusqlite::params![expr, id])? {
                continue;
            }
            if let Some(s) = tail_snippet(&needles, text.as_deref(), tool_input.as_deref()) {
                hit.snippet = s;
                continue;
            }
        }
        let snippet: Option<(Option<String>, Option<String>)> = snippet_of
            .query_row(rusqlite::params![expr, id], |r| Ok((r.get(0)?, r.get(1)?)))
            .optional()?;
        let Some((mut best, mut input)) = snippet else {
            continue;
        };
        let sources = [text.as_deref(), tool_input.as_deref()];
        let sources: Vec<&str> = sources.into_iter().flatten().collect();
        // Cut at its front, a snippet may start inside a path: it starts at the path's start.
        if best.as_deref().is_some_and(|b| b.starts_with('…')) {
            for s in [&mut best, &mut input].into_iter().flatten() {
                if let Cow::Owned(w) = super::fts::whole_first_word(s, &sources) {
                    *s = w;
                }
            }
        }
        hit.snippet = match (best, input) {
            (Some(best), input) if input.as_ref() == Some(&best) => {
                super::fts::readable_input(&super::fts::unglued_marks(&best))
            }
            (best, _) => best
                .map(|b| super::fts::shown_snippet(&super::fts::unglued_text_marks(&b)))
                .unwrap_or_default(),
        };
    }
    Ok(())
}

/// The snippet of a record whose text or tool input has a tail (a CJK word, an emoji), cut here
/// from the column where the words of the search find the most (the text on a tie; a tool input
/// made readable as the index's snippets of one are), since the index cuts its snippets by
/// positions the tail has none of. `None`: the words find nothing (a prefix or another form FTS5
/// matches and they do not): the index's snippet.
fn tail_snippet(
    needles: &super::fts::Needles,
    text: Option<&str>,
    tool_input: Option<&str>,
) -> Option<String> {
    let (text, input) = (text.unwrap_or_default(), tool_input.unwrap_or_default());
    let sources = [text, input];
    let widened = |s: String| super::fts::whole_first_word(&s, &sources).into_owned();
    let (read_text, read_input) = (
        super::fts::indexed_text(text),
        super::fts::indexed_input(input),
    );
    match (
        needles.snippet(text, &read_text),
        needles.snippet(input, &read_input),
    ) {
        (Some((n, s)), Some((m, _))) if n >= m => Some(super::fts::shown_snippet(&widened(s))),
        (_, Some((_, s))) => Some(super::fts::readable_input(&widened(s))),
        (Some((_, s)), None) => Some(super::fts::shown_snippet(&widened(s))),
        (None, None) => None,
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_repeated_phrase_is_asked_once_when_every_one_or_any_must_match() {
        for (expr, want) in [
            ("\"a\" \"b\" \"a\"", "\"a\" \"b\""),
            ("\"a\" OR \"b\" OR \"A:\"", "\"a\" OR \"b\""),
            // `a` on both sides of an `OR` between two groups: left as it is.
            ("\"a\" \"b\" OR \"c\" \"a\"", "\"a\" \"b\" OR \"c\" \"a\""),
            // Other syntax, or nothing repeated: as written.
            ("\"a\" NOT \"a\"", "\"a\" NOT \"a\""),
            ("\"a b\" \"b a\"", "\"a b\" \"b a\""),
        ] {
            assert_eq!(distinct_phrases(expr), want, "{expr}");
        }
        let many = vec!["\"retry\""; 1200].join(" ");
        assert_eq!(distinct_phrases(&many), "\"retry\"");
    }
}

//! Search over the archive (`cairn search`, the desktop's search): full text over record text
//! and tool input (lexical), or — with vectors built for the `sessions` store — by meaning over
//! turns (vector), or both fused by Reciprocal Rank Fusion (hybrid). A turn is embedded as its
//! digest: the request, the outcome, the files touched and the commands run (see
//! `semantic::digest`).

use std::collections::HashMap;

use rusqlite::Connection;
use serde::{Deserialize, Serialize};

use crate::archive::Agent;
use crate::archive::store::{self as archive, RecordFilter};
pub use crate::archive::store::{MATCH_END, MATCH_START, SearchHit};
use crate::git::store as git;
use crate::semantic::Mode;
use crate::semantic::fusion;
use crate::semantic::vectors::Matrix;
use crate::store::rank;

mod common;
pub use common::COMMON_SHARE;

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

/// A search's hits and how they were found.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct SearchAnswer {
    pub hits: Vec<SearchHit>,
    /// The mode that ran: the one asked for (an empty query is searched by words).
    pub mode: Mode,
    /// Turns that wait for their vector (captured since the last build): a vector search did
    /// not consider them, a hybrid one found them by words alone. 0 by words.
    pub vectors_pending: u32,
}

/// A session-level search's sessions and how many turns wait for their vector (see
/// [`SearchAnswer::vectors_pending`]).
#[derive(Debug, Clone, PartialEq)]
pub struct SessionSearch {
    pub sessions: Vec<SessionHit>,
    pub vectors_pending: u32,
}

/// Turn what a person typed into an FTS5 query: every word must match (in any column), each
/// quoted so punctuation and FTS syntax characters are literal. A word the index reads nothing
/// in (`-`, `→`: neither [`rank::holds_token`] nor a tail term, [`archive::has_tail_terms`]: an
/// emoji is one) is left out, as the index left it out of every record. A query that starts with `"` is passed through as a raw FTS5 expression (phrases, OR,
/// NEAR). Control characters separate words, as the index's tokenizer reads them (a NUL would
/// end FTS5's reading of the query). `None`: nothing to look up.
pub fn fts_query(input: &str) -> Option<String> {
    let spaced: String = input
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    let trimmed = spaced.trim();
    if trimmed.starts_with('"') && trimmed.len() > 1 {
        return Some(trimmed.to_owned());
    }
    let terms: Vec<String> = trimmed
        .split_whitespace()
        .filter(|w| rank::holds_token(w) || archive::has_tail_terms(w))
        .map(quoted)
        .collect();
    (!terms.is_empty()).then(|| terms.join(" "))
}

/// `word` as an FTS5 string: literal, whatever its punctuation (a `"` doubled).
fn quoted(word: &str) -> String {
    format!("\"{}\"", word.replace('"', "\"\""))
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

/// Turns nearest to the query vector that pass the filters and whose cosine is at least
/// `floor`, best first, with their cosine; `scores` are the matrix's rows scored against it
/// ([`Matrix::scores`]).
fn vector_hits(
    conn: &Connection,
    q: &SearchQuery,
    matrix: &Matrix,
    scores: &[f32],
    limit: usize,
    floor: f32,
) -> rusqlite::Result<Vec<(SearchHit, f64)>> {
    // With no filter every turn passes, so the `limit` nearest are the answer; a filter may drop
    // turns, so a wider pool is read, and widened again until enough pass.
    let mut k = if filter(q).is_empty() {
        limit
    } else {
        (limit * 4).max(200)
    };
    loop {
        let mut top = matrix.top_of(scores, k);
        // Best first: once one falls under the floor, so does every turn a wider pool adds.
        let close = top.iter().take_while(|(_, cos)| *cos >= floor).count();
        let exhausted = close < top.len() || k >= matrix.len();
        top.truncate(close);
        let ids: Vec<i64> = top.iter().map(|(id, _)| *id).collect();
        let mut found = archive::turn_hits(conn, &ids, &filter(q))?;
        if found.len() >= limit || exhausted {
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

/// The full-text leg of a hybrid search: the records holding every word typed, ranked as
/// `search` ranks them, at most 500; none in vector mode. It needs no query vector, so a caller
/// can run it while the query is embedded.
pub fn lexical_leg(conn: &Connection, q: &SearchQuery) -> rusqlite::Result<Vec<SearchHit>> {
    match fts_query(&q.text) {
        Some(expr) if q.mode != Mode::Vector => {
            archive::ranked_records(conn, &expr, &filter(q), 500)
        }
        _ => Ok(Vec::new()),
    }
}

/// Vector or hybrid search over turns, best first: `matrix` holds the current `sessions`
/// vectors (every turn's, or while a capture's turns wait, the others'), `scores` its rows
/// scored against the embedding of `q.text` ([`Matrix::scores`]) and `lexical` the full-text
/// leg's hits ([`lexical_leg`]). A turn is found by meaning only when
/// its cosine is at least `floor` (the embedder's [`Embedder::similarity_floor`]); the words'
/// hits have no floor. The full-text hits' snippets are left empty (see
/// [`archive::ranked_records`]): the caller fills them for the turns it shows.
///
/// [`Embedder::similarity_floor`]: crate::semantic::embed::Embedder::similarity_floor
pub fn fuse(
    conn: &Connection,
    q: &SearchQuery,
    matrix: &Matrix,
    scores: &[f32],
    lexical: Vec<SearchHit>,
    floor: f32,
) -> rusqlite::Result<Vec<SearchHit>> {
    let limit = q.limit.unwrap_or(20) as usize;
    if q.mode == Mode::Vector {
        return Ok(vector_hits(conn, q, matrix, scores, limit, floor)?
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
    let mut hits: HashMap<String, SearchHit> = HashMap::new();
    let mut lexical_keys = Vec::new();
    for h in lexical {
        if let std::collections::hash_map::Entry::Vacant(slot) = hits.entry(key(&h)) {
            lexical_keys.push(slot.key().clone());
            slot.insert(h);
        }
    }
    let mut vector_keys = Vec::new();
    for (h, _) in vector_hits(conn, q, matrix, scores, 500, floor)? {
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

/// A session as a session-level search ranks it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct SessionHit {
    pub session_key: String,
    pub agent: Agent,
    /// The session's title, else its first prompt.
    pub title: Option<String>,
    pub project: Option<String>,
    pub started_at: Option<String>,
    /// The fused score (Reciprocal Rank Fusion of the legs that found it).
    pub score: f64,
    /// Which legs found it: `turns` (its best turns match the words, or their meaning),
    /// `paths` (a word names a file it edited), `links` (a word names a branch, review or
    /// commit it is strongly linked to).
    pub match_reasons: Vec<String>,
    /// Its best turns, best first (at most three).
    pub turns: Vec<SearchHit>,
    /// Edited paths a word matched.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub paths: Vec<String>,
    /// Link targets a word matched.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub links: Vec<String>,
}

/// Words too common to rank sessions by (FTS5's bm25 would give them little weight anyway,
/// but an any-word query over them reads half the index).
const STOPWORDS: &[&str] = &[
    "a", "an", "and", "are", "as", "at", "be", "by", "for", "from", "in", "is", "it", "of", "on",
    "or", "that", "the", "this", "to", "was", "with",
];

/// The words of a session query (split at whitespace and control characters, as
/// [`fts_query`] splits them): lowercased, outer punctuation trimmed, stopwords and one-letter
/// words left out (an emoji is a word of its own, as the index holds it), each once.
pub(crate) fn session_terms(text: &str) -> Vec<String> {
    let mut terms: Vec<String> = Vec::new();
    for w in text.split(|c: char| c.is_whitespace() || c.is_control()) {
        let w = w
            .trim_matches(|c: char| {
                !c.is_alphanumeric() && !archive::is_emoji_part(c) && !matches!(c, '_' | '/' | '.')
            })
            .trim_end_matches('.')
            .to_lowercase();
        let emoji = w.chars().any(archive::is_emoji_part);
        if (w.chars().count() < 2 && !emoji)
            || STOPWORDS.contains(&w.as_str())
            || terms.contains(&w)
        {
            continue;
        }
        terms.push(w);
    }
    terms
}

/// A word that may name a file, an identifier, a branch or a commit a session touched: it has
/// a path separator, a dot inside, an underscore, `::` or a dash inside, or is 7 to 40 hex
/// digits with a digit among them. A plain word never does: matched against every path and
/// branch it finds sessions by accident.
pub(crate) fn names_something(term: &str) -> bool {
    let inner = term.trim_matches(|c: char| !c.is_alphanumeric());
    inner.contains('/')
        || inner.contains('_')
        || inner.contains("::")
        || inner.contains('.')
        || inner.contains('-')
        || ((7..=40).contains(&inner.len())
            && inner.chars().all(|c| c.is_ascii_hexdigit())
            && inner.chars().any(|c| c.is_ascii_digit()))
}

/// Turns the full-text leg ranks: any word may match (bm25 weighs how many and how rare), a
/// turn ranked by its best record.
const TURN_POOL: u32 = 2000;
/// Best turns kept per session (the first counts most).
const TURNS_PER_SESSION: usize = 3;
/// Sessions the path and link legs take per word (the first by row id).
const TOUCHED_PER_WORD: usize = 500;

/// How many sessions `hits` come from.
fn sessions_among(hits: &[SearchHit]) -> usize {
    let mut seen = std::collections::HashSet::new();
    hits.iter()
        .filter(|h| seen.insert(h.session_key.as_str()))
        .count()
}

/// The session search's full-text turns: the records holding every word first (what `search`
/// finds), then any word by bm25; with the expression the shown snippets mark.
fn lexical_turns(
    conn: &Connection,
    q: &SearchQuery,
    terms: &[String],
    limit: usize,
) -> rusqlite::Result<(Vec<SearchHit>, Option<String>)> {
    let quoted_terms: Vec<String> = terms.iter().map(|t| quoted(t)).collect();
    let mut hits = archive::ranked_records(conn, &quoted_terms.join(" "), &filter(q), TURN_POOL)?;
    if terms.len() > 1 && sessions_among(&hits) < limit {
        // Then any word, by the words rare enough to tell records apart: bm25 scores every
        // match, and a word in a large share of the records brings hundreds of thousands of
        // them for almost no weight. Skipped when the all-words records already name `limit`
        // sessions: what it adds would rank after them.
        let any: Vec<String> = common::ranking_words(conn, terms)?
            .iter()
            .map(|w| quoted(w))
            .collect();
        hits.extend(archive::ranked_records(
            conn,
            &any.join(" OR "),
            &filter(q),
            TURN_POOL,
        )?);
    }
    Ok((hits, Some(quoted_terms.join(" OR "))))
}

/// Rank sessions for `q`: by their best turns (full text, or meaning when `semantic` holds
/// the ranked turn hits of a vector or hybrid search), the paths they edited and the targets
/// they are linked to; fused by Reciprocal Rank Fusion. Filters apply to the turns; the path
/// and link legs only reorder sessions the turns found when a filter is set.
pub fn sessions(
    conn: &Connection,
    q: &SearchQuery,
    semantic: Option<Vec<SearchHit>>,
) -> rusqlite::Result<Vec<SessionHit>> {
    let terms = session_terms(&q.text);
    let limit = q.limit.unwrap_or(20) as usize;
    // Leg 1: turns, each session by the rank of its best turn, with its next best ones; and
    // what the shown turns' snippets mark: the words the full-text leg searched for.
    let (ranked_turns, snippet_expr) = match semantic {
        Some(hits) => (hits, fts_query(&q.text)),
        None if terms.is_empty() => (Vec::new(), None),
        None => lexical_turns(conn, q, &terms, limit)?,
    };
    let mut by_session: HashMap<String, SessionHit> = HashMap::new();
    let mut turn_leg: Vec<String> = Vec::new();
    let mut seen_turns = std::collections::HashSet::new();
    for h in ranked_turns {
        let turn = h
            .turn_key
            .clone()
            .unwrap_or_else(|| format!("{}#{}", h.session_key, h.ordinal));
        if !seen_turns.insert(turn) {
            continue;
        }
        let hit = by_session.entry(h.session_key.clone()).or_insert_with(|| {
            turn_leg.push(h.session_key.clone());
            SessionHit {
                session_key: h.session_key.clone(),
                agent: h.agent,
                title: h.title.clone(),
                project: h.project.clone(),
                started_at: None,
                score: 0.0,
                match_reasons: vec!["turns".to_owned()],
                turns: Vec::new(),
                paths: Vec::new(),
                links: Vec::new(),
            }
        });
        if hit.turns.len() < TURNS_PER_SESSION {
            hit.turns.push(h);
        }
    }
    // Legs 2 and 3: what the session touched. Sessions matching more words rank first.
    let filtered = q.agent.is_some()
        || q.branch.is_some()
        || q.project.is_some()
        || q.since.as_deref().is_some_and(|s| !s.is_empty())
        || q.until.as_deref().is_some_and(|s| !s.is_empty());
    let naming: Vec<&str> = terms
        .iter()
        .map(String::as_str)
        .filter(|t| names_something(t))
        .collect();
    let mut touched: [HashMap<i64, (usize, Vec<String>)>; 2] = Default::default();
    let found = [
        git::sessions_editing_like(conn, &naming, TOUCHED_PER_WORD)?,
        git::sessions_linked_like(conn, &naming, TOUCHED_PER_WORD)?,
    ];
    for (leg, per_word) in touched.iter_mut().zip(found) {
        for (id, what) in per_word.into_iter().flatten() {
            let e = leg.entry(id).or_default();
            e.0 += 1;
            e.1.push(what);
        }
    }
    let mut legs = vec![turn_leg];
    for (leg, reason) in touched.into_iter().zip(["paths", "links"]) {
        let mut ranked: Vec<(i64, (usize, Vec<String>))> = leg.into_iter().collect();
        ranked.sort_by(|a, b| b.1.0.cmp(&a.1.0).then(a.0.cmp(&b.0)));
        let mut keys = Vec::new();
        for (id, (_, mut what)) in ranked {
            let Some(key) = archive::session_key_of(conn, id)? else {
                continue;
            };
            if filtered && !by_session.contains_key(&key) {
                continue;
            }
            let hit = match by_session.entry(key.clone()) {
                std::collections::hash_map::Entry::Occupied(o) => o.into_mut(),
                std::collections::hash_map::Entry::Vacant(v) => {
                    let card = archive::session_card(conn, id)?;
                    v.insert(SessionHit {
                        session_key: key.clone(),
                        agent: card.agent,
                        title: archive::session_heading(conn, id)?,
                        project: card.project,
                        started_at: None,
                        score: 0.0,
                        match_reasons: Vec::new(),
                        turns: Vec::new(),
                        paths: Vec::new(),
                        links: Vec::new(),
                    })
                }
            };
            hit.match_reasons.push(reason.to_owned());
            what.sort();
            what.dedup();
            what.truncate(5);
            if reason == "paths" {
                hit.paths = what;
            } else {
                hit.links = what;
            }
            keys.push(key);
        }
        legs.push(keys);
    }
    let mut out = Vec::new();
    for f in fusion::rrf(&legs).into_iter().take(limit) {
        if let Some(mut hit) = by_session.remove(&f.key) {
            hit.score = f.score;
            if let Some(expr) = &snippet_expr {
                archive::fill_snippets(conn, expr, &mut hit.turns)?;
            }
            if let Some(id) = archive::resolve_session(conn, &hit.session_key)? {
                hit.started_at = archive::session_card(conn, id)?.started_at;
                if hit.title.is_none() {
                    hit.title = archive::session_heading(conn, id)?;
                }
            }
            out.push(hit);
        }
    }
    Ok(out)
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
        // A NUL or another control character separates words; it never reaches FTS5.
        assert_eq!(
            fts_query("mix\0phx\u{1b}[2J").as_deref(),
            Some("\"mix\" \"phx\" \"[2J\"")
        );
        assert_eq!(fts_query("\0\u{7}"), None);
        assert_eq!(fts_query("\"a\0b\"").as_deref(), Some("\"a b\""));
    }

    #[test]
    fn session_terms_drop_stopwords_and_keep_paths() {
        assert_eq!(
            session_terms("Fix the login bug in src/auth.rs."),
            ["fix", "login", "bug", "src/auth.rs"]
        );
        assert_eq!(
            session_terms("a \"quoted\" (word) word"),
            ["quoted", "word"]
        );
        assert_eq!(
            session_terms("mix\0phx\u{1b}server"),
            ["mix", "phx", "server"]
        );
        assert!(names_something("src/auth.rs"));
        assert!(names_something("parse_config"));
        assert!(names_something("spotter-4te"));
        assert!(names_something("12e2d10"));
        assert!(!names_something("fix"));
        assert!(!names_something("bootstrap"));
        assert!(!names_something("defaced"));
    }
}

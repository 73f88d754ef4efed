//! The git room's own tables (`repos`, `links`, `git_prs`, …; created by `git/migrations/`):
//! typed reads for the rooms above, so they need not name them.

use rusqlite::{Connection, OptionalExtension, params};

/// A strong link of a session, as a report lists it.
#[derive(Debug, Clone)]
pub struct StrongLink {
    pub target_key: String,
    pub evidence: String,
    pub commit_id: Option<String>,
    pub pr_number: Option<i64>,
}

/// The strong links of `session`, most confident first.
pub fn strong_links(conn: &Connection, session: i64) -> rusqlite::Result<Vec<StrongLink>> {
    let mut stmt = conn.prepare_cached(
        "SELECT target_key, evidence, commit_id, pr_number FROM links
         WHERE session_id = ?1 AND strong = 1 ORDER BY confidence DESC, id",
    )?;
    stmt.query_map(params![session], |r| {
        Ok(StrongLink {
            target_key: r.get(0)?,
            evidence: r.get(1)?,
            commit_id: r.get(2)?,
            pr_number: r.get(3)?,
        })
    })?
    .collect()
}

/// The root of the repository with row id `repo`.
pub fn repo_root(conn: &Connection, repo: i64) -> rusqlite::Result<Option<String>> {
    conn.prepare_cached("SELECT root FROM repos WHERE id = ?1")?
        .query_row(params![repo], |r| r.get(0))
        .optional()
}

/// The commits `session` made (or whose edits it made), as its links name them.
pub fn session_commits(conn: &Connection, session: i64) -> rusqlite::Result<Vec<String>> {
    conn.prepare_cached(
        "SELECT DISTINCT commit_id FROM links WHERE session_id = ?1 AND commit_id IS NOT NULL",
    )?
    .query_map([session], |r| r.get(0))?
    .collect()
}

/// The targets the turn with row id `turn` is related to by strong evidence, as a JSON array.
pub fn strong_turn_targets(conn: &Connection, turn: i64) -> rusqlite::Result<Option<String>> {
    conn.prepare_cached(
        "SELECT json_group_array(DISTINCT l.target_key) FROM links l WHERE l.turn_id = ?1 AND l.strong = 1",
    )?
    .query_row([turn], |r| r.get(0))
}

/// The sessions (row ids) linked to `target_key` by strong evidence.
pub fn sessions_strongly_linked(conn: &Connection, target_key: &str) -> rusqlite::Result<Vec<i64>> {
    conn.prepare_cached(
        "SELECT DISTINCT session_id FROM links WHERE target_key = ?1 AND strong = 1 ORDER BY session_id",
    )?
    .query_map([target_key], |r| r.get(0))?
    .collect()
}

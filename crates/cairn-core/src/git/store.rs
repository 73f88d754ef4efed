//! The git room's own tables (`repos`, `links`, `git_prs`, …; created by `git/migrations/`):
//! typed reads for the rooms above, so they need not name them.

use rusqlite::{Connection, OptionalExtension, params, params_from_iter, types::Value as SqlValue};

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

/// The target keys of links to pull request `number`, and its head branch's key when known.
pub fn pr_target_keys(conn: &Connection, number: u32) -> rusqlite::Result<Vec<String>> {
    conn.prepare_cached(
        "SELECT DISTINCT target_key FROM links WHERE pr_number = ?1
         UNION SELECT DISTINCT 'ref:refs/heads/' || branch FROM git_prs WHERE number = ?1 AND branch != ''",
    )?
    .query_map([number], |r| r.get(0))?
    .collect()
}

/// The repositories (row ids) sharing a git common dir with the worktree at `root`: one
/// repository and all its worktrees.
pub fn repo_family(conn: &Connection, root: &str) -> rusqlite::Result<Vec<i64>> {
    conn.prepare_cached(
        "SELECT id FROM repos WHERE common_dir IN (SELECT common_dir FROM repos WHERE root = ?1) ORDER BY id",
    )?
    .query_map([root], |r| r.get(0))?
    .collect()
}

/// A link of a session to a target, as `skim` explains it.
#[derive(Debug, Clone)]
pub struct TargetLink {
    pub session_id: i64,
    pub evidence: String,
    pub strong: bool,
    pub confidence: f64,
    pub target_key: String,
    pub turn_id: Option<i64>,
    pub ordinal: Option<i64>,
    pub commit_id: Option<String>,
    pub detail: String,
}

/// The links to any of `keys` (or to pull request `pr_number`), most confident first; only
/// those of `sessions` when given.
pub fn target_links(
    conn: &Connection,
    keys: &[String],
    pr_number: Option<u32>,
    sessions: Option<&[i64]>,
) -> rusqlite::Result<Vec<TargetLink>> {
    let placeholders = vec!["?"; keys.len()].join(", ");
    let mut sql = format!(
        "SELECT session_id, evidence, strong, confidence, target_key, turn_id, ordinal, commit_id, detail
         FROM links WHERE (target_key IN ({placeholders})"
    );
    let mut args: Vec<SqlValue> = keys.iter().map(|k| SqlValue::Text(k.clone())).collect();
    if let Some(n) = pr_number {
        sql.push_str(" OR pr_number = ?");
        args.push(SqlValue::Integer(i64::from(n)));
    }
    sql.push(')');
    if let Some(ids) = sessions {
        let list = ids.iter().map(i64::to_string).collect::<Vec<_>>().join(",");
        sql.push_str(&format!(" AND session_id IN ({list})"));
    }
    sql.push_str(" ORDER BY confidence DESC, ordinal");
    let mut stmt = conn.prepare(&sql)?;
    stmt.query_map(params_from_iter(args), |r| {
        Ok(TargetLink {
            session_id: r.get(0)?,
            evidence: r.get(1)?,
            strong: r.get(2)?,
            confidence: r.get(3)?,
            target_key: r.get(4)?,
            turn_id: r.get(5)?,
            ordinal: r.get(6)?,
            commit_id: r.get(7)?,
            detail: r.get(8)?,
        })
    })?
    .collect()
}

/// A session's link to a branch: strong when any of its links to the branch is.
#[derive(Debug, Clone)]
pub struct BranchLink {
    pub session_id: i64,
    pub target_key: String,
    pub strong: bool,
}

/// Every (session, branch) pair the links make, in order of session and branch key.
pub fn branch_links(conn: &Connection) -> rusqlite::Result<Vec<BranchLink>> {
    conn.prepare_cached(
        "SELECT session_id, target_key, MAX(strong) FROM links WHERE target_kind = 'branch'
         GROUP BY session_id, target_key ORDER BY session_id, target_key",
    )?
    .query_map([], |r| {
        Ok(BranchLink {
            session_id: r.get(0)?,
            target_key: r.get(1)?,
            strong: r.get(2)?,
        })
    })?
    .collect()
}

/// Where a repository (one worktree of it) is.
#[derive(Debug, Clone)]
pub struct RepoPlace {
    pub root: String,
    /// The git common dir its worktrees share.
    pub common_dir: String,
}

/// Every known repository by row id.
pub fn repo_places(
    conn: &Connection,
) -> rusqlite::Result<std::collections::HashMap<i64, RepoPlace>> {
    conn.prepare_cached("SELECT id, root, common_dir FROM repos")?
        .query_map([], |r| {
            Ok((
                r.get(0)?,
                RepoPlace {
                    root: r.get(1)?,
                    common_dir: r.get(2)?,
                },
            ))
        })?
        .collect()
}

/// The repository (row id) snapshot `snapshot` was taken in, if the snapshot exists.
pub fn snapshot_repo(conn: &Connection, snapshot: i64) -> rusqlite::Result<Option<i64>> {
    conn.prepare_cached("SELECT repo_id FROM snapshots WHERE id = ?1")?
        .query_row([snapshot], |r| r.get(0))
        .optional()
}

/// The links naming commit `id` (a full id), most confident first.
pub fn commit_links(conn: &Connection, id: &str) -> rusqlite::Result<Vec<TargetLink>> {
    conn.prepare_cached(
        "SELECT session_id, evidence, strong, confidence, target_key, turn_id, ordinal, commit_id, detail
         FROM links WHERE commit_id = ?1 ORDER BY confidence DESC, session_id, ordinal",
    )?
    .query_map([id], |r| {
        Ok(TargetLink {
            session_id: r.get(0)?,
            evidence: r.get(1)?,
            strong: r.get(2)?,
            confidence: r.get(3)?,
            target_key: r.get(4)?,
            turn_id: r.get(5)?,
            ordinal: r.get(6)?,
            commit_id: r.get(7)?,
            detail: r.get(8)?,
        })
    })?
    .collect()
}

/// A link of a session, as `show` lists it.
#[derive(Debug, Clone)]
pub struct SessionLinkRow {
    pub target_kind: String,
    pub target_key: String,
    pub evidence: String,
    pub strong: bool,
    pub confidence: f64,
    pub commit_id: Option<String>,
    pub detail: String,
}

/// Every link of `session`, one per (target, evidence, commit), a person's first, then the most
/// confident.
pub fn session_links(conn: &Connection, session: i64) -> rusqlite::Result<Vec<SessionLinkRow>> {
    conn.prepare_cached(
        "SELECT target_kind, target_key, evidence, MAX(strong), MAX(confidence), commit_id,
                ifnull(MIN(detail), '')
         FROM links WHERE session_id = ?1
         GROUP BY target_key, evidence, commit_id
         ORDER BY evidence != 'person', MAX(confidence) DESC, target_key, MIN(id)",
    )?
    .query_map([session], |r| {
        Ok(SessionLinkRow {
            target_kind: r.get(0)?,
            target_key: r.get(1)?,
            evidence: r.get(2)?,
            strong: r.get(3)?,
            confidence: r.get(4)?,
            commit_id: r.get(5)?,
            detail: r.get(6)?,
        })
    })?
    .collect()
}

/// A link of a session as the team push sends it (every link, weak ones too).
#[derive(Debug, Clone)]
pub struct TeamLink {
    pub target_kind: String,
    pub target_key: String,
    pub pr_number: Option<i64>,
    pub evidence: String,
    pub strong: bool,
    pub confidence: f64,
    pub ordinal: Option<i64>,
    pub commit_id: Option<String>,
}

/// Every link of `session`, in a stable order.
pub fn team_links(conn: &Connection, session: i64) -> rusqlite::Result<Vec<TeamLink>> {
    let mut stmt = conn.prepare_cached(
        "SELECT target_kind, target_key, pr_number, evidence, strong, confidence, ordinal, commit_id
         FROM links WHERE session_id = ?1 ORDER BY id",
    )?;
    stmt.query_map([session], |r| {
        Ok(TeamLink {
            target_kind: r.get(0)?,
            target_key: r.get(1)?,
            pr_number: r.get(2)?,
            evidence: r.get(3)?,
            strong: r.get(4)?,
            confidence: r.get(5)?,
            ordinal: r.get(6)?,
            commit_id: r.get(7)?,
        })
    })?
    .collect()
}

/// The sessions (row ids) that edited a file whose path, as the agent wrote it, is `rel` or
/// ends in `/rel`, with that path.
pub fn sessions_editing(conn: &Connection, rel: &str) -> rusqlite::Result<Vec<(i64, String)>> {
    let escaped = like_literal(rel);
    conn.prepare_cached(
        "SELECT DISTINCT session_id, path FROM session_edits
         WHERE path = ?1 OR path LIKE '%/' || ?2 ESCAPE '\\' ORDER BY session_id",
    )?
    .query_map(params![rel, escaped], |r| Ok((r.get(0)?, r.get(1)?)))?
    .collect()
}

/// `%` and `_` (and the escape itself) taken literally in a `LIKE … ESCAPE '\'` pattern.
fn like_literal(text: &str) -> String {
    text.replace('\\', "\\\\")
        .replace('%', "\\%")
        .replace('_', "\\_")
}

/// Sessions (row ids) with an edited path containing `term` (case-insensitive for ASCII), and
/// the first such path; at most `limit`.
pub fn sessions_editing_like(
    conn: &Connection,
    term: &str,
    limit: u32,
) -> rusqlite::Result<Vec<(i64, String)>> {
    conn.prepare_cached(
        "SELECT session_id, MIN(path) FROM session_edits
         WHERE path LIKE '%' || ?1 || '%' ESCAPE '\\' GROUP BY session_id ORDER BY session_id LIMIT ?2",
    )?
    .query_map(params![like_literal(term), limit], |r| {
        Ok((r.get(0)?, r.get(1)?))
    })?
    .collect()
}

/// Sessions (row ids) strongly linked to a target whose key contains `term`, or to a commit
/// whose id starts with it; with the target key; at most `limit`.
pub fn sessions_linked_like(
    conn: &Connection,
    term: &str,
    limit: u32,
) -> rusqlite::Result<Vec<(i64, String)>> {
    conn.prepare_cached(
        "SELECT session_id, MIN(target_key) FROM links
         WHERE strong = 1 AND (target_key LIKE '%' || ?1 || '%' ESCAPE '\\' OR commit_id LIKE ?1 || '%' ESCAPE '\\')
         GROUP BY session_id ORDER BY session_id LIMIT ?2",
    )?
    .query_map(params![like_literal(term), limit], |r| {
        Ok((r.get(0)?, r.get(1)?))
    })?
    .collect()
}

/// What changes when `session`'s links do (they are rebuilt, so new rows get new ids): the
/// count and the highest row id.
pub fn links_mark(conn: &Connection, session: i64) -> rusqlite::Result<String> {
    conn.prepare_cached(
        "SELECT count(*) || ':' || coalesce(max(id), 0) FROM links WHERE session_id = ?1",
    )?
    .query_row([session], |r| r.get(0))
}

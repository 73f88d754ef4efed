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
/// repository and all its worktrees. A root no session ran in finds none: see [`family_of`]
/// for a repository on disk.
pub fn repo_family(conn: &Connection, root: &str) -> rusqlite::Result<Vec<i64>> {
    conn.prepare_cached(
        "SELECT id FROM repos WHERE common_dir IN (SELECT common_dir FROM repos WHERE root = ?1) ORDER BY id",
    )?
    .query_map([root], |r| r.get(0))?
    .collect()
}

/// The worktree roots of the repository of row `repo` (its own and its siblings'), the
/// shortest (usually the main worktree) first.
pub fn family_roots(conn: &Connection, repo: i64) -> rusqlite::Result<Vec<String>> {
    conn.prepare_cached(
        "SELECT root FROM repos WHERE common_dir = (SELECT common_dir FROM repos WHERE id = ?1)
         ORDER BY length(root), root",
    )?
    .query_map([repo], |r| r.get(0))?
    .collect()
}

/// The repositories (row ids) of `repo` as it is on disk: every worktree sharing its git
/// common dir, found by that dir or by the worktree's root (as git names it or resolved), so
/// a worktree no session ran in yet still finds its siblings'.
pub fn family_of(conn: &Connection, repo: &crate::git::repo::Repo) -> rusqlite::Result<Vec<i64>> {
    let root = repo.root.to_string_lossy();
    let resolved = std::fs::canonicalize(&repo.root)
        .map(|p| p.to_string_lossy().into_owned())
        .unwrap_or_else(|_| root.clone().into_owned());
    conn.prepare_cached(
        "SELECT id FROM repos
         WHERE common_dir = ?1 OR common_dir IN (SELECT common_dir FROM repos WHERE root IN (?2, ?3))
         ORDER BY id",
    )?
    .query_map(
        params![repo.common_dir.to_string_lossy(), root, resolved],
        |r| r.get(0),
    )?
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

/// The links to any of `keys` (or to pull request `pr_number`), most confident first.
pub fn target_links(
    conn: &Connection,
    keys: &[String],
    pr_number: Option<u32>,
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

/// For each of `terms`, the sessions (row ids, ascending) with an edited path containing it
/// (ignoring ASCII case, as `LIKE` does), each with the least such path; at most `limit` a
/// term. One pass over the edits for all the terms.
pub fn sessions_editing_like(
    conn: &Connection,
    terms: &[&str],
    limit: usize,
) -> rusqlite::Result<Vec<Vec<(i64, String)>>> {
    if terms.is_empty() {
        return Ok(Vec::new());
    }
    let any = any_of(terms.len(), |i| {
        format!("path LIKE '%' || ?{i} || '%' ESCAPE '\\'")
    });
    let mut found = PerTerm::new(terms, limit);
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT session_id, path FROM session_edits WHERE {any} ORDER BY session_id"
    ))?;
    let mut rows = stmt.query(params_from_iter(terms.iter().map(|t| like_literal(t))))?;
    while let Some(r) = rows.next()? {
        let (session, path): (i64, String) = (r.get(0)?, r.get(1)?);
        let folded = path.to_ascii_lowercase();
        if found.add(session, &path, |term| folded.contains(term)) {
            break;
        }
    }
    Ok(found.lists)
}

/// For each of `terms`, the sessions (row ids, ascending) strongly linked to a target whose
/// key contains it or to a commit whose id starts with it (ignoring ASCII case, as `LIKE`
/// does), each with the least such target key; at most `limit` a term. One pass over the links
/// for all the terms.
pub fn sessions_linked_like(
    conn: &Connection,
    terms: &[&str],
    limit: usize,
) -> rusqlite::Result<Vec<Vec<(i64, String)>>> {
    if terms.is_empty() {
        return Ok(Vec::new());
    }
    let any = any_of(terms.len(), |i| {
        format!(
            "target_key LIKE '%' || ?{i} || '%' ESCAPE '\\' OR commit_id LIKE ?{i} || '%' ESCAPE '\\'"
        )
    });
    let mut found = PerTerm::new(terms, limit);
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT session_id, target_key, commit_id FROM links
         WHERE strong = 1 AND ({any}) ORDER BY session_id"
    ))?;
    let mut rows = stmt.query(params_from_iter(terms.iter().map(|t| like_literal(t))))?;
    while let Some(r) = rows.next()? {
        let (session, key): (i64, String) = (r.get(0)?, r.get(1)?);
        let commit = r
            .get::<_, Option<String>>(2)?
            .map(|c| c.to_ascii_lowercase());
        let folded = key.to_ascii_lowercase();
        let matches = |term: &str| {
            folded.contains(term) || commit.as_deref().is_some_and(|c| c.starts_with(term))
        };
        if found.add(session, &key, matches) {
            break;
        }
    }
    Ok(found.lists)
}

/// `n` conditions joined by `OR`, the `i`th (from 1) written by `one(i)`.
fn any_of(n: usize, one: impl Fn(usize) -> String) -> String {
    (1..=n).map(one).collect::<Vec<_>>().join(" OR ")
}

/// What a one-pass `LIKE` over several terms has found so far: per term, its sessions in
/// ascending order with the least matching text of each, as `GROUP BY session_id` with `MIN`
/// and `LIMIT` would give for that term alone.
struct PerTerm {
    /// The terms, ASCII-lowercased (the rows' text is folded the same way before matching).
    folded: Vec<String>,
    lists: Vec<Vec<(i64, String)>>,
    /// Terms that have their `limit` sessions and have seen a row of a later one.
    done: Vec<bool>,
    limit: usize,
}

impl PerTerm {
    fn new(terms: &[&str], limit: usize) -> PerTerm {
        PerTerm {
            folded: terms.iter().map(|t| t.to_ascii_lowercase()).collect(),
            lists: vec![Vec::new(); terms.len()],
            done: vec![limit == 0; terms.len()],
            limit,
        }
    }

    /// Count a row of `session` (rows arrive in ascending session order) whose text is `text`
    /// for every term `matches`; true once every term is done.
    fn add(&mut self, session: i64, text: &str, matches: impl Fn(&str) -> bool) -> bool {
        for (i, term) in self.folded.iter().enumerate() {
            if self.done[i] || !matches(term) {
                continue;
            }
            let list = &mut self.lists[i];
            let full = list.len() == self.limit;
            match list.last_mut() {
                Some((last, least)) if *last == session => {
                    if text < least.as_str() {
                        *least = text.to_owned();
                    }
                }
                _ if full => self.done[i] = true,
                _ => list.push((session, text.to_owned())),
            }
        }
        self.done.iter().all(|d| *d)
    }
}

/// What changes when `session`'s links do (they are rebuilt, so new rows get new ids): the
/// count and the highest row id.
pub fn links_mark(conn: &Connection, session: i64) -> rusqlite::Result<String> {
    conn.prepare_cached(
        "SELECT count(*) || ':' || coalesce(max(id), 0) FROM links WHERE session_id = ?1",
    )?
    .query_row([session], |r| r.get(0))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The archive's tables, with sessions 1 to 11 and nothing else.
    fn archive() -> Connection {
        let conn = Connection::open_in_memory().unwrap();
        for step in crate::schema::MIGRATIONS {
            conn.execute_batch(step.sql).unwrap();
        }
        for id in 1..12 {
            conn.execute(
                "INSERT INTO sessions (id, session_key, agent, captured_at) VALUES (?1, ?2, 'claude', 'now')",
                params![id, format!("k{id}")],
            )
            .unwrap();
        }
        conn
    }

    /// What one `LIKE` query per term finds (the search's path and link legs before they became
    /// one pass): the reference the one pass must equal.
    fn per_term(
        conn: &Connection,
        sql: &str,
        terms: &[&str],
        limit: usize,
    ) -> Vec<Vec<(i64, String)>> {
        terms
            .iter()
            .map(|t| {
                conn.prepare(sql)
                    .unwrap()
                    .query_map(params![like_literal(t), limit as i64], |r| {
                        Ok((r.get(0)?, r.get(1)?))
                    })
                    .unwrap()
                    .collect::<rusqlite::Result<_>>()
                    .unwrap()
            })
            .collect()
    }

    /// Text from a few characters that `LIKE` treats specially (`%`, `_`, the escape), that
    /// differ only in ASCII case, or only in non-ASCII case (which `LIKE` does not fold).
    fn text(max: usize) -> impl Strategy<Value = String> {
        proptest::collection::vec(
            prop::sample::select(vec!['a', 'A', 'b', '_', '%', '\\', '/', '.', 'é', 'É', '1']),
            1..=max,
        )
        .prop_map(|cs| cs.into_iter().collect())
    }

    proptest! {
        #[test]
        fn one_pass_finds_what_a_like_per_term_finds(
            edits in proptest::collection::vec((1i64..12, text(6)), 0..40),
            links in proptest::collection::vec(
                (1i64..12, text(6), proptest::option::of(text(4)), any::<bool>()),
                0..40,
            ),
            terms in proptest::collection::vec(text(2), 0..4),
            limit in 0usize..5,
        ) {
            let conn = archive();
            for (session, path) in &edits {
                conn.execute(
                    "INSERT OR IGNORE INTO session_edits (session_id, path, ordinal, turn_index) VALUES (?1, ?2, 0, 0)",
                    params![session, path],
                )
                .unwrap();
            }
            for (session, key, commit, strong) in &links {
                conn.execute(
                    "INSERT OR IGNORE INTO links (session_id, target_kind, target_key, evidence, strong, confidence, commit_id)
                     VALUES (?1, 'branch', ?2, 'person', ?3, 1.0, ?4)",
                    params![session, key, strong, commit],
                )
                .unwrap();
            }
            let terms: Vec<&str> = terms.iter().map(String::as_str).collect();
            prop_assert_eq!(
                sessions_editing_like(&conn, &terms, limit).unwrap(),
                per_term(
                    &conn,
                    "SELECT session_id, MIN(path) FROM session_edits
                     WHERE path LIKE '%' || ?1 || '%' ESCAPE '\\' GROUP BY session_id ORDER BY session_id LIMIT ?2",
                    &terms,
                    limit,
                )
            );
            prop_assert_eq!(
                sessions_linked_like(&conn, &terms, limit).unwrap(),
                per_term(
                    &conn,
                    "SELECT session_id, MIN(target_key) FROM links
                     WHERE strong = 1 AND (target_key LIKE '%' || ?1 || '%' ESCAPE '\\' OR commit_id LIKE ?1 || '%' ESCAPE '\\')
                     GROUP BY session_id ORDER BY session_id LIMIT ?2",
                    &terms,
                    limit,
                )
            );
        }
    }
}

//! Repositories and their branches with agent activity (the desktop's Branches page).
//!
//! A repository is known from the cwds of captured sessions (see `git::associate`); a branch
//! shows when some session links to it. Counts separate sessions with evidence of work landing
//! on the branch from those that merely ran while it was checked out.

use std::collections::BTreeMap;

use rusqlite::Connection;
use serde::{Deserialize, Serialize};

use super::sessions::count;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct RepoBranches {
    /// A worktree root of the repository (the main one when sessions ran there; pass it as
    /// `SkimQuery::repo_root`); `None` groups sessions whose cwd is not (or no longer) a
    /// repository, by project.
    pub root: Option<String>,
    /// A short name: the root's last component, or the project name.
    pub name: String,
    pub session_count: u32,
    pub last_activity: Option<String>,
    pub branches: Vec<BranchActivity>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct BranchActivity {
    pub name: String,
    /// `ref:refs/heads/<name>`: the skim target key.
    pub key: String,
    /// Sessions with evidence of work landing on the branch.
    pub sessions: u32,
    /// Sessions that only ran while it was checked out.
    pub weak_sessions: u32,
    pub turns: u32,
    pub last_activity: Option<String>,
}

/// Every (repository, branch) with linked sessions, in one pass over the links. A repository
/// is its git common dir, so the worktrees of one repository are one entry.
pub fn list(conn: &Connection) -> rusqlite::Result<Vec<RepoBranches>> {
    let mut stmt = conn.prepare_cached(
        "WITH per_session AS (
             SELECT session_id, target_key, MAX(strong) AS strong
             FROM links WHERE target_kind = 'branch' GROUP BY session_id, target_key
         )
         SELECT COALESCE(r.common_dir, '') AS repo, MIN(r.root), s.project, p.target_key,
                SUM(p.strong), COUNT(*), MAX(s.updated_at), SUM(s.turn_count)
         FROM per_session p
         JOIN sessions s ON s.id = p.session_id
         LEFT JOIN repos r ON r.id = s.repo_id
         GROUP BY repo, CASE WHEN r.common_dir IS NULL THEN s.project END, p.target_key",
    )?;
    let rows = stmt.query_map([], |r| {
        Ok((
            r.get::<_, String>(0)?,
            r.get::<_, Option<String>>(1)?,
            r.get::<_, Option<String>>(2)?,
            r.get::<_, String>(3)?,
            r.get::<_, i64>(4)?,
            r.get::<_, i64>(5)?,
            r.get::<_, Option<String>>(6)?,
            r.get::<_, i64>(7)?,
        ))
    })?;
    let mut repos: BTreeMap<(String, Option<String>), RepoBranches> = BTreeMap::new();
    for row in rows {
        let (common_dir, root, project, key, strong, all, last, turns) = row?;
        let group = if common_dir.is_empty() {
            (common_dir, project.clone())
        } else {
            (common_dir, None)
        };
        let repo = repos.entry(group).or_insert_with(|| RepoBranches {
            name: root
                .as_deref()
                .and_then(|r| r.rsplit('/').next())
                .map(str::to_owned)
                .or_else(|| project.clone())
                .unwrap_or_else(|| "(no repository)".to_owned()),
            root: root.clone(),
            session_count: 0,
            last_activity: None,
            branches: Vec::new(),
        });
        // The shortest root of a repository's worktrees is usually the main one.
        if let Some(r) = &root
            && repo.root.as_ref().is_none_or(|cur| r.len() < cur.len())
        {
            repo.root = Some(r.clone());
            if let Some(name) = r.rsplit('/').next() {
                repo.name = name.to_owned();
            }
        }
        repo.last_activity = repo.last_activity.clone().max(last.clone());
        repo.branches.push(BranchActivity {
            name: key
                .strip_prefix("ref:refs/heads/")
                .unwrap_or(&key)
                .to_owned(),
            key,
            sessions: count(strong),
            weak_sessions: count(all - strong),
            turns: count(turns),
            last_activity: last,
        });
    }
    // Distinct sessions per repository (a session may be on several of its branches).
    let mut per_repo = conn.prepare_cached(
        "SELECT COALESCE(r.common_dir, ''), CASE WHEN r.common_dir IS NULL THEN s.project END, COUNT(DISTINCT s.id)
         FROM links l JOIN sessions s ON s.id = l.session_id LEFT JOIN repos r ON r.id = s.repo_id
         WHERE l.target_kind = 'branch' GROUP BY 1, 2",
    )?;
    let counts = per_repo.query_map([], |r| {
        Ok((
            r.get::<_, String>(0)?,
            r.get::<_, Option<String>>(1)?,
            r.get::<_, i64>(2)?,
        ))
    })?;
    for row in counts {
        let (common_dir, project, n) = row?;
        let project = if common_dir.is_empty() { project } else { None };
        if let Some(repo) = repos.get_mut(&(common_dir, project)) {
            repo.session_count = count(n);
        }
    }
    let mut out: Vec<RepoBranches> = repos.into_values().collect();
    for repo in &mut out {
        repo.branches.sort_by(|a, b| {
            b.last_activity
                .cmp(&a.last_activity)
                .then_with(|| a.name.cmp(&b.name))
        });
    }
    out.sort_by(|a, b| {
        b.last_activity
            .cmp(&a.last_activity)
            .then_with(|| a.name.cmp(&b.name))
    });
    Ok(out)
}

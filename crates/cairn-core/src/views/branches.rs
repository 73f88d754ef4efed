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
    /// The worktree root; `None` groups sessions whose cwd is not (or no longer) a repository.
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

pub fn list(conn: &Connection) -> rusqlite::Result<Vec<RepoBranches>> {
    let mut stmt = conn.prepare_cached(
        "SELECT r.root, s.project, l.target_key,
                COUNT(DISTINCT CASE WHEN l.strong = 1 THEN s.id END),
                COUNT(DISTINCT s.id),
                MAX(s.updated_at)
         FROM links l
         JOIN sessions s ON s.id = l.session_id
         LEFT JOIN repos r ON r.id = s.repo_id
         WHERE l.target_kind = 'branch'
         GROUP BY r.root, CASE WHEN r.root IS NULL THEN s.project END, l.target_key",
    )?;
    let rows = stmt.query_map([], |r| {
        Ok((
            r.get::<_, Option<String>>(0)?,
            r.get::<_, Option<String>>(1)?,
            r.get::<_, String>(2)?,
            r.get::<_, i64>(3)?,
            r.get::<_, i64>(4)?,
            r.get::<_, Option<String>>(5)?,
        ))
    })?;
    let mut repos: BTreeMap<(Option<String>, String), RepoBranches> = BTreeMap::new();
    for row in rows {
        let (root, project, key, strong, all, last) = row?;
        let name = root
            .as_deref()
            .and_then(|r| r.rsplit('/').next())
            .map(str::to_owned)
            .or(project)
            .unwrap_or_else(|| "(no repository)".to_owned());
        let repo = repos
            .entry((root.clone(), name.clone()))
            .or_insert_with(|| RepoBranches {
                root: root.clone(),
                name,
                session_count: 0,
                last_activity: None,
                branches: Vec::new(),
            });
        let branch = key
            .strip_prefix("ref:refs/heads/")
            .unwrap_or(&key)
            .to_owned();
        repo.last_activity = repo.last_activity.clone().max(last.clone());
        repo.branches.push(BranchActivity {
            name: branch,
            key,
            sessions: count(strong),
            weak_sessions: count(all - strong),
            turns: 0,
            last_activity: last,
        });
    }
    // Distinct sessions per repository and turns per branch.
    let mut out: Vec<RepoBranches> = repos.into_values().collect();
    for repo in &mut out {
        let sessions: i64 = match &repo.root {
            Some(root) => conn
                .prepare_cached("SELECT COUNT(*) FROM sessions s JOIN repos r ON r.id = s.repo_id WHERE r.root = ?1")?
                .query_row([root], |r| r.get(0))?,
            None => repo.branches.iter().map(|b| i64::from(b.sessions + b.weak_sessions)).max().unwrap_or(0),
        };
        repo.session_count = count(sessions);
        for b in &mut repo.branches {
            b.turns = conn
                .prepare_cached(
                    "SELECT COALESCE(SUM(s.turn_count), 0) FROM sessions s
                     WHERE s.id IN (SELECT session_id FROM links WHERE target_key = ?1)",
                )?
                .query_row([&b.key], |r| r.get::<_, i64>(0))
                .map(count)?;
        }
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

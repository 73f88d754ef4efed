//! Repositories and their branches with agent activity (the desktop's Branches page).
//!
//! A repository is known from the cwds of captured sessions (see `git::associate`); a branch
//! shows when some session links to it. Counts separate sessions with evidence of work landing
//! on the branch from those that merely ran while it was checked out.

use std::collections::{BTreeMap, BTreeSet};

use rusqlite::Connection;
use serde::{Deserialize, Serialize};

use super::sessions::count;
use crate::archive::Agent;
use crate::archive::store as archive;
use crate::git::store as git;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct RepoBranches {
    /// A worktree root of the repository (the main one when sessions ran there; pass it as
    /// `SkimQuery::repo_root`); `None` groups sessions whose cwd is not (or no longer) a
    /// repository, by project.
    pub root: Option<String>,
    /// A short name: the root's last component, or the project name.
    pub name: String,
    /// For a group without a root: the project its sessions share (none when they have none
    /// either); pass it as `SkimQuery::project` (empty for none), or the skim would list every
    /// repository's.
    pub project: Option<String>,
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
/// is its git common dir, so the worktrees of one repository are one entry. With `agent`, only
/// that agent's sessions count (and a branch none of them worked on is left out).
pub fn list(conn: &Connection, agent: Option<Agent>) -> rusqlite::Result<Vec<RepoBranches>> {
    let branch_links = git::branch_links(conn)?;
    let sessions = archive::session_places(
        conn,
        &branch_links
            .iter()
            .map(|l| l.session_id)
            .collect::<Vec<_>>(),
    )?;
    let repo_places = git::repo_places(conn)?;
    // Per (common dir or "", project when there is no repository, branch key): the rows the
    // links of one session to one branch make.
    #[derive(Default)]
    struct Row {
        root: Option<String>,
        project: Option<String>,
        strong: i64,
        all: i64,
        last: Option<String>,
        turns: i64,
    }
    type Group = (String, Option<String>);
    let mut rows: BTreeMap<(Group, String), Row> = BTreeMap::new();
    let mut distinct: BTreeMap<Group, BTreeSet<i64>> = BTreeMap::new();
    for link in &branch_links {
        let Some(session) = sessions
            .get(&link.session_id)
            .filter(|s| agent.is_none_or(|a| s.agent == a))
        else {
            continue;
        };
        let place = session.repo_id.and_then(|id| repo_places.get(&id));
        let group = match place {
            Some(p) => (p.common_dir.clone(), None),
            None => (
                String::new(),
                session.project.clone().filter(|p| !p.is_empty()),
            ),
        };
        distinct
            .entry(group.clone())
            .or_default()
            .insert(link.session_id);
        let row = rows.entry((group, link.target_key.clone())).or_default();
        if let Some(root) = place.map(|p| &p.root)
            && row.root.as_ref().is_none_or(|cur| root < cur)
        {
            row.root = Some(root.clone());
        }
        row.project = session.project.clone();
        row.strong += i64::from(link.strong);
        row.all += 1;
        row.last = row.last.clone().max(session.updated_at.clone());
        row.turns += session.turn_count;
    }
    let mut repos: BTreeMap<(String, Option<String>), RepoBranches> = BTreeMap::new();
    for ((group, key), row) in rows {
        let Row {
            root,
            project,
            strong,
            all,
            last,
            turns,
        } = row;
        let unplaced_project = group.1.clone();
        let repo = repos.entry(group).or_insert_with(|| RepoBranches {
            name: root
                .as_deref()
                .and_then(|r| r.rsplit('/').next())
                .map(str::to_owned)
                .or_else(|| project.clone())
                .unwrap_or_else(|| "(no repository)".to_owned()),
            project: unplaced_project,
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
    for (group, ids) in distinct {
        if let Some(repo) = repos.get_mut(&group) {
            repo.session_count = ids.len() as u32;
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

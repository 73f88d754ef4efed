//! Association: which branches, reviews and changes a session is related to, and why.
//!
//! Every link stores the kind of evidence it rests on, the turn and record it came from, the
//! commit when there is one, and a confidence. The kinds, strongest first:
//!
//! | evidence | strong | confidence | from |
//! |---|---|---|---|
//! | `commit_by_session` | yes | 1.0 | the session's own `git commit` output (`[branch sha]`) |
//! | `pr_created` | yes | 1.0 | a PR URL printed by `gh pr create` / recorded by Claude Code |
//! | `environment_promotion` | yes | 0.95 | a path dirty at one capture is in a new commit of the branch at the next (agentlog's rule, multi-branch guard included) |
//! | `pushed` | yes | 0.9 | the session's `git push` output (`local -> remote`) |
//! | `edit_committed` | yes | 0.9 | a path the session edited is in a commit on the branch made during or up to two days after the session |
//! | `change_committed` | yes | 0.9 | such a commit carries a change id (`Change-Id:` trailer, jj/GitButler header) |
//! | `direct_transition` | yes | 0.8 | the session switched to the branch (`git checkout -b`, or HEAD moved between captures) |
//! | `branch_recorded` | no | 0.5 | the agent recorded the branch on its records (Claude `gitBranch`, Codex `session_meta.git`) |
//! | `ran_on_branch` | no | 0.4 | the branch was checked out when a capture ran |
//!
//! Weak links only mean "ran while the branch was checked out"; skim shows them only when
//! asked. Links are recomputed from stored records, snapshots and the repository, so running
//! association again gives the same links.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use rusqlite::{Connection, OptionalExtension, params};
use serde::{Deserialize, Serialize};

use super::evidence::{self, EvidenceRecord, Found};
use super::repo::Repo;
use super::snapshot::{self, SnapshotStatus};
use super::targets::{Target, TargetKind};
use crate::error::Result;

/// How long after a session a commit of the files it edited still counts as its work.
const COMMIT_WINDOW_SECS: i64 = 2 * 24 * 3600;
/// Clock skew allowed between a transcript and git.
const SKEW_SECS: i64 = 3600;
/// How much later than a commit an edit may be timestamped and still count as part of it. Transcript and git
/// clocks are the same machine's, so this only absorbs write-order jitter; an edit made after the commit
/// was not committed in it.
const EDIT_ORDER_SKEW_SECS: i64 = 120;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "snake_case")]
pub enum Evidence {
    CommitBySession,
    PrCreated,
    EnvironmentPromotion,
    Pushed,
    EditCommitted,
    ChangeCommitted,
    DirectTransition,
    BranchRecorded,
    RanOnBranch,
}

impl Evidence {
    pub fn as_str(self) -> &'static str {
        match self {
            Evidence::CommitBySession => "commit_by_session",
            Evidence::PrCreated => "pr_created",
            Evidence::EnvironmentPromotion => "environment_promotion",
            Evidence::Pushed => "pushed",
            Evidence::EditCommitted => "edit_committed",
            Evidence::ChangeCommitted => "change_committed",
            Evidence::DirectTransition => "direct_transition",
            Evidence::BranchRecorded => "branch_recorded",
            Evidence::RanOnBranch => "ran_on_branch",
        }
    }

    pub fn parse(s: &str) -> Option<Evidence> {
        [
            Evidence::CommitBySession,
            Evidence::PrCreated,
            Evidence::EnvironmentPromotion,
            Evidence::Pushed,
            Evidence::EditCommitted,
            Evidence::ChangeCommitted,
            Evidence::DirectTransition,
            Evidence::BranchRecorded,
            Evidence::RanOnBranch,
        ]
        .into_iter()
        .find(|e| e.as_str() == s)
    }

    pub fn confidence(self) -> f64 {
        match self {
            Evidence::CommitBySession | Evidence::PrCreated => 1.0,
            Evidence::EnvironmentPromotion => 0.95,
            Evidence::Pushed | Evidence::EditCommitted | Evidence::ChangeCommitted => 0.9,
            Evidence::DirectTransition => 0.8,
            Evidence::BranchRecorded => 0.5,
            Evidence::RanOnBranch => 0.4,
        }
    }

    /// Evidence of work landing on the target, as opposed to merely running while it was
    /// checked out.
    pub fn is_strong(self) -> bool {
        !matches!(self, Evidence::BranchRecorded | Evidence::RanOnBranch)
    }
}

/// One link before it is stored.
#[derive(Debug, Clone, PartialEq)]
pub struct Link {
    pub target: Target,
    pub evidence: Evidence,
    pub turn_index: Option<i64>,
    pub ordinal: Option<i64>,
    pub commit_id: Option<String>,
    pub detail: String,
}

/// Repositories already opened, by directory (a sync touches many sessions of few repos).
#[derive(Default)]
pub struct RepoCache {
    by_dir: HashMap<PathBuf, Option<Repo>>,
    commits: HashMap<PathBuf, Vec<super::repo::CommitInfo>>,
}

impl RepoCache {
    pub fn repo_for(&mut self, dir: &Path) -> Option<Repo> {
        self.by_dir
            .entry(dir.to_owned())
            .or_insert_with(|| Repo::discover(dir).ok())
            .clone()
    }
}

fn db(e: rusqlite::Error) -> crate::Error {
    crate::archive::store::db_err(Path::new(":associate"), e)
}

/// Recompute the links of the given sessions.
pub fn associate(conn: &Connection, session_rows: &[i64], cache: &mut RepoCache) -> Result<usize> {
    let mut total = 0;
    for &row in session_rows {
        let links = compute(conn, row, cache)?;
        total += store(conn, row, &links)?;
    }
    Ok(total)
}

struct SessionFacts {
    cwd: Option<String>,
    started: Option<i64>,
    ended: Option<i64>,
}

fn epoch(ts: &str) -> Option<i64> {
    ts.parse::<jiff::Timestamp>().ok().map(|t| t.as_second())
}

fn load_records(conn: &Connection, row: i64) -> rusqlite::Result<Vec<EvidenceRecord>> {
    // Only the records evidence can come from: edits, git/gh commands and their results, PR
    // links, and the first record of each recorded branch.
    let mut stmt = conn.prepare_cached(
        "WITH calls AS (
            SELECT call_id FROM records
            WHERE session_id = ?1 AND kind = 'tool_call' AND tool_kind = 'exec' AND call_id IS NOT NULL
              AND (tool_input LIKE '%git%' OR tool_input LIKE '%gh %' OR tool_input LIKE '%glab%'))
         SELECT r.ordinal, COALESCE(t.turn_index, 0), r.kind, r.tool_name, r.tool_kind, r.call_id, r.text,
                r.tool_input, r.file_paths, NULL, r.cwd, r.timestamp, r.source_event_kind
         FROM records r LEFT JOIN turns t ON t.id = r.turn_id
         WHERE r.session_id = ?1 AND (
              (r.kind = 'tool_call' AND (r.tool_kind = 'file_edit' OR r.call_id IN (SELECT call_id FROM calls)))
           OR (r.kind = 'tool_result' AND r.call_id IN (SELECT call_id FROM calls))
           OR (r.kind = 'event' AND r.source_event_kind = 'claude:pr-link'))
         UNION ALL
         SELECT MIN(r.ordinal), 0, 'branch', NULL, NULL, NULL, NULL, NULL, NULL, r.git_branch, NULL, NULL, ''
         FROM records r WHERE r.session_id = ?1 AND r.git_branch IS NOT NULL GROUP BY r.git_branch
         ORDER BY 1",
    )?;
    let rows = stmt.query_map([row], |r| {
        let paths: Option<String> = r.get(8)?;
        Ok(EvidenceRecord {
            ordinal: r.get(0)?,
            turn_index: r.get(1)?,
            kind: r.get(2)?,
            tool_name: r.get(3)?,
            tool_kind: r.get(4)?,
            call_id: r.get(5)?,
            text: r.get(6)?,
            tool_input: r.get(7)?,
            file_paths: paths
                .and_then(|p| serde_json::from_str(&p).ok())
                .unwrap_or_default(),
            git_branch: r.get(9)?,
            cwd: r.get(10)?,
            timestamp: r.get(11)?,
            source_event_kind: r.get(12)?,
        })
    })?;
    let mut records: Vec<EvidenceRecord> = rows.collect::<rusqlite::Result<_>>()?;
    // A branch row's turn is the turn of its first record.
    for r in records.iter_mut().filter(|r| r.kind == "branch") {
        r.turn_index = conn
            .prepare_cached(
                "SELECT COALESCE(t.turn_index, 0) FROM records x LEFT JOIN turns t ON t.id = x.turn_id
                 WHERE x.session_id = ?1 AND x.ordinal = ?2",
            )?
            .query_row(params![row, r.ordinal], |q| q.get(0))
            .optional()?
            .unwrap_or(0);
    }
    Ok(records)
}

fn compute(conn: &Connection, row: i64, cache: &mut RepoCache) -> Result<Vec<Link>> {
    let facts = conn
        .prepare_cached("SELECT cwd, started_at, updated_at FROM sessions WHERE id = ?1")
        .map_err(db)?
        .query_row([row], |r| {
            let started: Option<String> = r.get(1)?;
            let ended: Option<String> = r.get(2)?;
            Ok(SessionFacts {
                cwd: r.get(0)?,
                started: started.as_deref().and_then(epoch),
                ended: ended.as_deref().and_then(epoch),
            })
        })
        .map_err(db)?;
    let records = load_records(conn, row).map_err(db)?;
    let found = evidence::scan(&records);
    let repo = facts
        .cwd
        .as_deref()
        .map(Path::new)
        .filter(|p| p.is_dir())
        .and_then(|p| cache.repo_for(p));
    if let Some(repo) = &repo {
        let now = crate::archive::capture::now();
        let repo_row = snapshot::repo_id(conn, repo, &now).map_err(db)?;
        conn.prepare_cached("UPDATE sessions SET repo_id = ?2 WHERE id = ?1")
            .map_err(db)?
            .execute(params![row, repo_row])
            .map_err(db)?;
    }

    let mut links = Vec::new();
    let mut own_commits: BTreeSet<String> = BTreeSet::new();
    // The branch the session was on at each point, for PRs (whose output names no branch).
    let mut current_branch: Option<String> = None;
    for f in &found {
        match f {
            Found::BranchRecorded {
                branch,
                ordinal,
                turn_index,
            } => {
                current_branch.get_or_insert_with(|| branch.clone());
                links.push(Link {
                    target: Target::branch(branch),
                    evidence: Evidence::BranchRecorded,
                    turn_index: Some(*turn_index),
                    ordinal: Some(*ordinal),
                    commit_id: None,
                    detail: format!("the agent recorded branch {branch}"),
                });
            }
            Found::Checkout {
                branch,
                ordinal,
                turn_index,
            } => {
                current_branch = Some(branch.clone());
                links.push(Link {
                    target: Target::branch(branch),
                    evidence: Evidence::DirectTransition,
                    turn_index: Some(*turn_index),
                    ordinal: Some(*ordinal),
                    commit_id: None,
                    detail: format!("created branch {branch}"),
                });
            }
            Found::Commit {
                branch,
                short_id,
                subject,
                ordinal,
                turn_index,
            } => {
                let full = repo.as_ref().and_then(|r| r.resolve_commit(short_id));
                let id = full.clone().unwrap_or_else(|| short_id.clone());
                own_commits.insert(id.clone());
                let branches = match (branch, &repo, &full) {
                    (Some(b), _, _) => vec![b.clone()],
                    (None, Some(r), Some(c)) => r.branches_containing(c),
                    _ => Vec::new(),
                };
                for b in branches {
                    current_branch = Some(b.clone());
                    links.push(Link {
                        target: Target::branch(&b),
                        evidence: Evidence::CommitBySession,
                        turn_index: Some(*turn_index),
                        ordinal: Some(*ordinal),
                        commit_id: Some(id.clone()),
                        detail: format!("committed {} \"{}\"", short(&id), cut(subject, 60)),
                    });
                }
                if let (Some(r), Some(c)) = (&repo, &full)
                    && let Some(change) = r
                        .commits(&[c], &[], None, Some(1))
                        .ok()
                        .and_then(|v| v.into_iter().next())
                        .and_then(|c| c.change_id)
                {
                    links.push(Link {
                        target: Target::change(&change),
                        evidence: Evidence::ChangeCommitted,
                        turn_index: Some(*turn_index),
                        ordinal: Some(*ordinal),
                        commit_id: Some(id.clone()),
                        detail: format!("committed change {change} in {}", short(&id)),
                    });
                }
            }
            Found::Push {
                branch,
                ordinal,
                turn_index,
            } => {
                current_branch = Some(branch.clone());
                links.push(Link {
                    target: Target::branch(branch),
                    evidence: Evidence::Pushed,
                    turn_index: Some(*turn_index),
                    ordinal: Some(*ordinal),
                    commit_id: None,
                    detail: format!("pushed {branch}"),
                });
            }
            Found::PullRequest {
                number,
                url,
                ordinal,
                turn_index,
            } => {
                let target = match &current_branch {
                    Some(b) => Target::pull_request(b, *number),
                    None => Target {
                        kind: TargetKind::Review,
                        key: format!("pull-request:#{number}"),
                        pr_number: Some(*number),
                    },
                };
                let branch = current_branch.clone().unwrap_or_default();
                conn.prepare_cached(
                    "INSERT INTO git_prs (repo_id, branch, number, url, source) VALUES
                     ((SELECT repo_id FROM sessions WHERE id = ?1), ?2, ?3, ?4, 'transcript')
                     ON CONFLICT (branch, number) DO UPDATE SET url = excluded.url",
                )
                .map_err(db)?
                .execute(params![row, branch, number, url])
                .map_err(db)?;
                links.push(Link {
                    target,
                    evidence: Evidence::PrCreated,
                    turn_index: Some(*turn_index),
                    ordinal: Some(*ordinal),
                    commit_id: None,
                    detail: format!("opened PR #{number}"),
                });
            }
            Found::Edit { .. } => {}
        }
    }

    // Files the session edited, repo-relative, with when each was first edited.
    let mut edits: BTreeMap<String, EditAt> = BTreeMap::new();
    if let Some(repo) = &repo {
        for f in &found {
            if let Found::Edit {
                path,
                cwd,
                ordinal,
                turn_index,
                timestamp,
            } = f
            {
                let abs = if Path::new(path).is_absolute() {
                    PathBuf::from(path)
                } else {
                    Path::new(cwd.as_deref().or(facts.cwd.as_deref()).unwrap_or(".")).join(path)
                };
                if let Some(rel) = repo.relative(&abs.to_string_lossy()) {
                    let when = timestamp.as_deref().and_then(epoch);
                    edits.entry(rel).or_insert(EditAt {
                        ordinal: *ordinal,
                        turn_index: *turn_index,
                        when,
                    });
                }
            }
        }
        links.extend(edit_commits(repo, &facts, &edits, &own_commits, cache));
    }
    let edited: BTreeSet<&String> = edits.keys().collect();
    links.extend(snapshot_links(conn, row, &edited)?);
    Ok(links)
}

/// Where a file was first edited in a session.
struct EditAt {
    ordinal: i64,
    turn_index: i64,
    /// Seconds since the epoch, when the record has a timestamp.
    when: Option<i64>,
}

/// Commits on local branches, made during or shortly after the session, that touch files the
/// session edited.
fn edit_commits(
    repo: &Repo,
    facts: &SessionFacts,
    edits: &BTreeMap<String, EditAt>,
    own: &BTreeSet<String>,
    cache: &mut RepoCache,
) -> Vec<Link> {
    let (Some(start), Some(end)) = (facts.started, facts.ended) else {
        return Vec::new();
    };
    if edits.is_empty() {
        return Vec::new();
    }
    let commits = cache.commits.entry(repo.root.clone()).or_insert_with(|| {
        // Recent history of every local branch; shared by all sessions of this repository.
        let since = jiff::Timestamp::now().as_second() - 90 * 24 * 3600;
        repo.commits(&["--branches"], &[], Some(since), Some(5000))
            .unwrap_or_default()
    });
    let mut links = Vec::new();
    for c in commits
        .iter()
        .filter(|c| c.time >= start - SKEW_SECS && c.time <= end + COMMIT_WINDOW_SECS)
    {
        if own.contains(&c.id) {
            continue;
        }
        let touched: Vec<(&String, &EditAt)> = c
            .files
            .iter()
            .filter_map(|f| edits.get_key_value(f))
            .filter(|(_, e)| e.when.is_none_or(|w| w <= c.time + EDIT_ORDER_SKEW_SECS))
            .collect();
        let Some((
            _,
            EditAt {
                ordinal,
                turn_index,
                ..
            },
        )) = touched.first()
        else {
            continue;
        };
        let names: Vec<&str> = touched.iter().take(3).map(|(p, _)| p.as_str()).collect();
        let more = if touched.len() > 3 {
            format!(" and {} more", touched.len() - 3)
        } else {
            String::new()
        };
        for branch in repo.branches_containing(&c.id) {
            links.push(Link {
                target: Target::branch(&branch),
                evidence: Evidence::EditCommitted,
                turn_index: Some(*turn_index),
                ordinal: Some(*ordinal),
                commit_id: Some(c.id.clone()),
                detail: format!(
                    "edited {}{more}, committed in {}",
                    names.join(", "),
                    short(&c.id)
                ),
            });
        }
        if let Some(change) = &c.change_id {
            links.push(Link {
                target: Target::change(change),
                evidence: Evidence::ChangeCommitted,
                turn_index: Some(*turn_index),
                ordinal: Some(*ordinal),
                commit_id: Some(c.id.clone()),
                detail: format!("edited {}, committed as change {change}", names.join(", ")),
            });
        }
    }
    links
}

/// Evidence from the environment snapshots taken at this session's captures: the branch that
/// was checked out (weak), a switch of branch (direct transition), and dirty files that became
/// a new commit of a branch by the next capture (promotion).
fn snapshot_links(conn: &Connection, row: i64, edited: &BTreeSet<&String>) -> Result<Vec<Link>> {
    let mut stmt = conn
        .prepare_cached(
            "SELECT c.snapshot_id, (SELECT t.turn_index FROM turns t WHERE t.session_id = c.session_id
                                    AND t.first_ordinal <= c.last_ordinal ORDER BY t.turn_index DESC LIMIT 1),
                    c.last_ordinal, s.repo_id
             FROM captures c JOIN snapshots s ON s.id = c.snapshot_id
             WHERE c.session_id = ?1 ORDER BY c.id",
        )
        .map_err(db)?;
    let rows: Vec<(i64, Option<i64>, Option<i64>, i64)> = stmt
        .query_map([row], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
        .map_err(db)?
        .collect::<rusqlite::Result<_>>()
        .map_err(db)?;
    let mut links = Vec::new();
    let mut prev: Option<snapshot::Snapshot> = None;
    let mut prev_repo = None;
    for (snapshot_id, turn_index, ordinal, repo_row) in rows {
        let Some(cur) = snapshot::load(conn, snapshot_id).map_err(db)? else {
            continue;
        };
        let applied: Vec<&snapshot::BranchState> =
            cur.branches.iter().filter(|b| b.applied).collect();
        for b in &applied {
            links.push(Link {
                target: Target::branch(&b.name),
                evidence: Evidence::RanOnBranch,
                turn_index,
                ordinal,
                commit_id: None,
                detail: format!("ran while {} was checked out", b.name),
            });
        }
        if let Some(p) = prev.as_ref().filter(|_| prev_repo == Some(repo_row)) {
            // Direct transition: the session moved onto a single branch.
            if cur.applied_count == 1
                && let Some(head) = cur.head_branch.as_ref()
                && p.head_branch.as_ref() != Some(head)
            {
                links.push(Link {
                    target: Target::branch(head),
                    evidence: Evidence::DirectTransition,
                    turn_index,
                    ordinal,
                    commit_id: None,
                    detail: format!("switched to {head}"),
                });
            }
            // Promotion: files dirty before are in a new commit of a branch now.
            let both_complete =
                p.status == SnapshotStatus::Complete && cur.status == SnapshotStatus::Complete;
            if both_complete && !p.dirty_files.is_empty() {
                let dirty: BTreeSet<&String> = p.dirty_files.iter().collect();
                for b in &cur.branches {
                    for commit in &b.new_commits {
                        let files = commit_files(conn, repo_row, commit).map_err(db)?;
                        let hit: Vec<&String> = files
                            .iter()
                            .filter(|f| {
                                dirty.contains(f) && (cur.applied_count <= 1 || edited.contains(f))
                            })
                            .collect();
                        if let Some(first) = hit.first() {
                            links.push(Link {
                                target: Target::branch(&b.name),
                                evidence: Evidence::EnvironmentPromotion,
                                turn_index,
                                ordinal,
                                commit_id: Some(commit.clone()),
                                detail: format!(
                                    "{first} was dirty, then committed in {}",
                                    short(commit)
                                ),
                            });
                            for pr in &b.prs {
                                links.push(Link {
                                    target: Target::pull_request(&b.name, *pr),
                                    evidence: Evidence::EnvironmentPromotion,
                                    turn_index,
                                    ordinal,
                                    commit_id: Some(commit.clone()),
                                    detail: format!(
                                        "{first} was dirty, then committed to PR #{pr}"
                                    ),
                                });
                            }
                        }
                    }
                }
            }
        }
        prev = Some(cur);
        prev_repo = Some(repo_row);
    }
    Ok(links)
}

fn commit_files(conn: &Connection, repo_row: i64, commit: &str) -> rusqlite::Result<Vec<String>> {
    let files: Option<String> = conn
        .prepare_cached("SELECT files FROM git_commits WHERE repo_id = ?1 AND commit_id = ?2")?
        .query_row(params![repo_row, commit], |r| r.get(0))
        .optional()?;
    Ok(files
        .and_then(|f| serde_json::from_str(&f).ok())
        .unwrap_or_default())
}

/// Replace the session's links.
fn store(conn: &Connection, row: i64, links: &[Link]) -> Result<usize> {
    conn.prepare_cached("DELETE FROM links WHERE session_id = ?1")
        .map_err(db)?
        .execute([row])
        .map_err(db)?;
    let mut insert = conn
        .prepare_cached(
            "INSERT OR IGNORE INTO links (session_id, target_kind, target_key, pr_number, evidence, strong, confidence,
                turn_id, ordinal, commit_id, detail)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7,
                (SELECT id FROM turns WHERE session_id = ?1 AND turn_index = ?8), ?9, ?10, ?11)",
        )
        .map_err(db)?;
    let mut n = 0;
    for l in links {
        n += insert
            .execute(params![
                row,
                l.target.kind.as_str(),
                l.target.key,
                l.target.pr_number,
                l.evidence.as_str(),
                l.evidence.is_strong(),
                l.evidence.confidence(),
                l.turn_index,
                l.ordinal,
                l.commit_id,
                l.detail,
            ])
            .map_err(db)?;
    }
    Ok(n)
}

fn short(id: &str) -> &str {
    &id[..id.len().min(7)]
}

fn cut(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_owned(),
    }
}

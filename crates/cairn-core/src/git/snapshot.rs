//! Environment snapshots: what the repository looked like when a capture batch was stored.
//!
//! A snapshot records the checked-out branch (or the applied GitButler branches), the dirty
//! paths (at most 256, repo-relative), and for every branch whose head moved since the previous
//! snapshot of this repository the commits that are new on it, with the paths they touched and
//! their change ids. Commits are immutable, so each is read from git once and kept; a long
//! branch is never "partial": only what is new is read (agentlog marks any branch with more than
//! 32 commits partial, which disables its promotion rule forever).
//!
//! Cost per hook: `git status` (dirty paths and HEAD in one call), `git for-each-ref` and one
//! `git config` for the branches' upstreams, run side by side ([`RepoReads`]) and, in a hook,
//! while the capture runs ([`Prefetch`]); a `git log` only when a head moved.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use rusqlite::{Connection, OptionalExtension, params};
use serde::{Deserialize, Serialize};

use super::repo::{BRANCHES_ARGS, CommitInfo, Repo, Running, parse_branches, start_git};
use crate::error::Result;

/// At most this many dirty paths are kept per snapshot (agentlog's limit).
pub const MAX_PATHS: usize = 256;
/// New commits read per moved branch per snapshot; older history is read by `associate`.
const MAX_NEW_COMMITS: usize = 500;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SnapshotStatus {
    Complete,
    Partial,
    Failed,
}

impl SnapshotStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            SnapshotStatus::Complete => "complete",
            SnapshotStatus::Partial => "partial",
            SnapshotStatus::Failed => "failed",
        }
    }
}

/// A branch as a snapshot saw it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BranchState {
    pub name: String,
    pub head: String,
    /// Commits new on this branch since the previous snapshot of the repository.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub new_commits: Vec<String>,
    /// Pull request numbers known for this branch.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub prs: Vec<u32>,
    /// Whether the branch is checked out (or applied in a GitButler workspace).
    #[serde(default)]
    pub applied: bool,
}

/// What one snapshot saw.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Snapshot {
    pub status: SnapshotStatus,
    pub error_kind: Option<String>,
    pub head_branch: Option<String>,
    pub head_commit: Option<String>,
    pub dirty_files: Vec<String>,
    pub dirty_count: usize,
    /// Branches that are applied or moved since the previous snapshot.
    pub branches: Vec<BranchState>,
    /// How many branches are applied at once (more than one only in a GitButler workspace).
    pub applied_count: usize,
}

/// What a snapshot reads from git that does not depend on the archive, read by three git
/// processes running side by side.
#[derive(Debug)]
pub struct RepoReads {
    /// `git status --porcelain=v2 --branch -z`: HEAD and the dirty paths.
    status: Result<String>,
    /// Local branches and their heads.
    heads: Result<Vec<(String, String)>>,
    /// `branch.<name>.merge` of every branch that has one.
    merges: HashMap<String, String>,
}

impl RepoReads {
    pub fn read(repo: &Repo) -> RepoReads {
        PendingReads::start(&repo.root).finish()
    }
}

/// [`RepoReads`] whose git processes are still running.
#[derive(Debug)]
struct PendingReads {
    status: Running,
    heads: Running,
    merges: Running,
}

impl PendingReads {
    /// Start the reads in `dir`, any directory of the worktree: status paths are relative to
    /// the worktree root wherever git runs.
    fn start(dir: &Path) -> PendingReads {
        PendingReads {
            status: start_git(
                dir,
                &[
                    "status",
                    "--porcelain=v2",
                    "--branch",
                    "-z",
                    "--untracked-files=normal",
                    "--no-renames",
                ],
            ),
            heads: start_git(dir, BRANCHES_ARGS),
            // Exits 1 when no branch has an upstream: no merges, not an error.
            merges: start_git(
                dir,
                &["config", "-z", "--get-regexp", r"^branch\..*\.merge$"],
            ),
        }
    }

    fn finish(self) -> RepoReads {
        RepoReads {
            status: self.status.finish(),
            heads: self.heads.finish().map(|out| parse_branches(&out)),
            merges: parse_merges(&self.merges.finish().unwrap_or_default()),
        }
    }
}

/// `git config -z --get-regexp`: `key\nvalue\0` entries; keys are `branch.<name>.merge`.
fn parse_merges(out: &str) -> HashMap<String, String> {
    out.split('\0')
        .filter_map(|entry| entry.split_once('\n'))
        .filter_map(|(key, value)| {
            let name = key.strip_prefix("branch.")?.strip_suffix(".merge")?;
            Some((name.to_owned(), value.to_owned()))
        })
        .collect()
}

/// A hook's [`RepoReads`] of the repository around its working directory, started on a thread
/// before the capture: in a large worktree `git status` is most of a hook's time, and it runs
/// while the transcript is read and stored instead of after.
#[derive(Debug)]
pub struct Prefetch {
    dir: PathBuf,
    /// The repository, sent as soon as it is found (before the reads end).
    found: std::sync::mpsc::Receiver<Option<Repo>>,
    /// What `found` delivered, once it has.
    repo: Option<Option<Repo>>,
    thread: std::thread::JoinHandle<Option<(Repo, RepoReads)>>,
}

impl Prefetch {
    /// Start reading the repository containing `dir`. `None` when no directory from `dir` up
    /// has a `.git` (no git process is started for a cwd outside every repository) or no thread
    /// can be started; the snapshot then reads what it needs itself.
    pub fn start(dir: &Path) -> Option<Prefetch> {
        if !super::repo::may_be_in_worktree(dir) {
            return None;
        }
        let owned = dir.to_owned();
        let (send, found) = std::sync::mpsc::sync_channel(1);
        let thread = std::thread::Builder::new()
            .name("cairn-git-prefetch".into())
            .spawn(move || {
                // The reads start with the discovery, not after it.
                let pending = PendingReads::start(&owned);
                let repo = Repo::discover(&owned).ok();
                let _ = send.send(repo.clone());
                let reads = pending.finish();
                Some((repo?, reads))
            })
            .ok()?;
        Some(Prefetch {
            dir: dir.to_owned(),
            found,
            repo: None,
            thread,
        })
    }

    /// The directory and its repository (`None` outside a worktree), as soon as the discovery
    /// is done: the reads may still be running.
    pub fn repo(&mut self) -> (PathBuf, Option<Repo>) {
        let found = &self.found;
        let repo = self
            .repo
            .get_or_insert_with(|| found.recv().ok().flatten())
            .clone();
        (self.dir.clone(), repo)
    }

    /// Wait for the reads: the directory, and its repository with the reads, or `None` when
    /// the directory is not in a worktree.
    pub fn finish(self) -> (PathBuf, Option<(Repo, RepoReads)>) {
        (self.dir, self.thread.join().ok().flatten())
    }
}

/// The repository row for a worktree, created on first sight.
pub fn repo_id(conn: &Connection, repo: &Repo, now: &str) -> rusqlite::Result<i64> {
    let root = repo.root.to_string_lossy();
    conn.prepare_cached(
        "INSERT INTO repos (root, common_dir, updated_at) VALUES (?1, ?2, ?3)
         ON CONFLICT (root) DO UPDATE SET updated_at = excluded.updated_at",
    )?
    .execute(params![root, repo.common_dir.to_string_lossy(), now])?;
    conn.prepare_cached("SELECT id FROM repos WHERE root = ?1")?
        .query_row([root], |r| r.get(0))
}

/// Take a snapshot of `repo`, store it with the commits it found new, and return its id.
pub fn take(conn: &Connection, repo: &Repo, now: &str, reads: RepoReads) -> Result<i64> {
    let db = crate::store::err_in(conn);
    let repo_row = repo_id(conn, repo, now).map_err(db)?;
    let snapshot = observe(conn, repo, repo_row, reads)?;
    conn.prepare_cached(
        "INSERT INTO snapshots (repo_id, taken_at, status, error_kind, head_branch, head_commit, dirty_files,
            dirty_count, branches, applied_count)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
    )
    .map_err(db)?
    .execute(params![
        repo_row,
        now,
        snapshot.status.as_str(),
        snapshot.error_kind,
        snapshot.head_branch,
        snapshot.head_commit,
        serde_json::to_string(&snapshot.dirty_files).unwrap_or_else(|_| "[]".into()),
        snapshot.dirty_count as i64,
        serde_json::to_string(&snapshot.branches).unwrap_or_else(|_| "[]".into()),
        snapshot.applied_count as i64,
    ])
    .map_err(db)?;
    Ok(conn.last_insert_rowid())
}

/// Read the repository's state, and store newly seen commits and heads.
fn observe(conn: &Connection, repo: &Repo, repo_row: i64, reads: RepoReads) -> Result<Snapshot> {
    let db = crate::store::err_in(conn);
    let mut status = SnapshotStatus::Complete;
    let mut error_kind = None;

    // One `git status` gives HEAD and the dirty paths.
    let (head_branch, head_commit, dirty) = match &reads.status {
        Ok(out) => parse_status(out),
        Err(_) => {
            status = SnapshotStatus::Partial;
            error_kind = Some("worktree_unavailable".to_owned());
            (None, None, Vec::new())
        }
    };
    let dirty_count = dirty.len();
    let dirty_files: Vec<String> = dirty.into_iter().take(MAX_PATHS).collect();

    let heads = match reads.heads {
        Ok(h) => h,
        Err(_) => {
            return Ok(Snapshot {
                status: SnapshotStatus::Failed,
                error_kind: Some("context_unavailable".to_owned()),
                head_branch,
                head_commit,
                dirty_files,
                dirty_count,
                branches: Vec::new(),
                applied_count: 1,
            });
        }
    };
    let workspace = gitbutler_workspace(repo);
    let known: HashMap<String, String> = {
        let mut stmt = conn
            .prepare_cached("SELECT branch, head FROM git_heads WHERE repo_id = ?1")
            .map_err(db)?;
        let rows = stmt
            .query_map([repo_row], |r| {
                Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?))
            })
            .map_err(db)?;
        rows.collect::<rusqlite::Result<_>>().map_err(db)?
    };
    let known_heads: Vec<String> = known.values().cloned().collect();
    let mut branches = Vec::new();
    for (name, head) in &heads {
        let applied = match &workspace {
            Some(ws) => ws.applied.contains_key(name),
            None => head_branch.as_deref() == Some(name.as_str()),
        };
        let moved = known.get(name) != Some(head);
        let mut new_commits = Vec::new();
        if moved {
            // New on this branch: not reachable from any head seen before.
            let excludes: Vec<&str> = match known.get(name) {
                Some(old) => vec![old.as_str()],
                None => known_heads.iter().map(String::as_str).collect(),
            };
            match repo.commits(&[head], &excludes, None, Some(MAX_NEW_COMMITS)) {
                Ok(commits) => {
                    store_commits(conn, repo_row, &commits).map_err(db)?;
                    new_commits = commits.into_iter().map(|c| c.id).collect();
                }
                Err(_) => {
                    status = SnapshotStatus::Partial;
                    error_kind = Some("diff_unavailable".to_owned());
                }
            }
            conn.prepare_cached(
                "INSERT INTO git_heads (repo_id, branch, head) VALUES (?1, ?2, ?3)
                 ON CONFLICT (repo_id, branch) DO UPDATE SET head = excluded.head",
            )
            .map_err(db)?
            .execute(params![repo_row, name, head])
            .map_err(db)?;
        }
        if applied || !new_commits.is_empty() {
            let mut prs = workspace
                .as_ref()
                .and_then(|w| w.applied.get(name).cloned())
                .unwrap_or_default();
            prs.extend(reads.merges.get(name).and_then(|m| pr_from_merge(m)));
            prs.sort_unstable();
            prs.dedup();
            branches.push(BranchState {
                name: name.clone(),
                head: head.clone(),
                new_commits,
                prs,
                applied,
            });
        }
    }
    let applied_count = workspace.as_ref().map_or(1, |w| w.applied.len().max(1));
    Ok(Snapshot {
        status,
        error_kind,
        head_branch,
        head_commit,
        dirty_files,
        dirty_count,
        branches,
        applied_count,
    })
}

/// Remember commits (immutable, so once).
pub(crate) fn store_commits(
    conn: &Connection,
    repo_row: i64,
    commits: &[CommitInfo],
) -> rusqlite::Result<()> {
    let mut stmt = conn.prepare_cached(
        "INSERT OR IGNORE INTO git_commits (repo_id, commit_id, time, change_id, files) VALUES (?1, ?2, ?3, ?4, ?5)",
    )?;
    for c in commits {
        stmt.execute(params![
            repo_row,
            c.id,
            c.time,
            c.change_id,
            serde_json::to_string(&c.files).unwrap_or_default()
        ])?;
    }
    Ok(())
}

/// `git status --porcelain=v2 --branch -z`: HEAD's branch and commit, and the dirty paths.
fn parse_status(out: &str) -> (Option<String>, Option<String>, Vec<String>) {
    let mut branch = None;
    let mut commit = None;
    let mut paths = Vec::new();
    for entry in out.split('\0').filter(|e| !e.is_empty()) {
        if let Some(rest) = entry.strip_prefix("# branch.head ") {
            branch = (rest != "(detached)").then(|| rest.to_owned());
        } else if let Some(rest) = entry.strip_prefix("# branch.oid ") {
            commit = (rest != "(initial)").then(|| rest.to_owned());
        } else if entry.starts_with('#') {
            continue;
        } else if let Some(path) = entry.strip_prefix("? ") {
            paths.push(path.to_owned());
        } else if entry.starts_with("1 ") {
            // `1 XY sub mH mI mW hH hI path`
            if let Some(path) = entry.splitn(9, ' ').nth(8) {
                paths.push(path.to_owned());
            }
        } else if entry.starts_with("u ")
            && let Some(path) = entry.splitn(11, ' ').nth(10)
        {
            paths.push(path.to_owned());
        }
    }
    paths.sort();
    paths.dedup();
    (branch, commit, paths)
}

/// The pull request number in a branch's `branch.<b>.merge` (`gh pr checkout` sets it to
/// `refs/pull/<n>/head`).
fn pr_from_merge(merge: &str) -> Option<u32> {
    merge
        .trim()
        .strip_prefix("refs/pull/")?
        .split('/')
        .next()?
        .parse()
        .ok()
}

/// The branches applied in a GitButler workspace, with their PR numbers.
#[derive(Debug, Default)]
struct Workspace {
    applied: BTreeMap<String, Vec<u32>>,
}

/// Read GitButler's `virtual_branches.toml` when the repository has one.
fn gitbutler_workspace(repo: &Repo) -> Option<Workspace> {
    let path = repo
        .common_dir
        .join("gitbutler")
        .join("virtual_branches.toml");
    let text = std::fs::read_to_string(path).ok()?;
    let doc: toml::Table = toml::from_str(&text).ok()?;
    let mut ws = Workspace::default();
    for branch in doc.get("branches")?.as_table()?.values() {
        let in_workspace = branch
            .get("in_workspace")
            .or_else(|| branch.get("applied"))
            .and_then(toml::Value::as_bool);
        if in_workspace != Some(true) {
            continue;
        }
        let pr = |v: &toml::Value| {
            v.get("pr_number")
                .and_then(toml::Value::as_integer)
                .and_then(|n| u32::try_from(n).ok())
        };
        match branch.get("heads").and_then(toml::Value::as_array) {
            Some(heads) => {
                for head in heads {
                    if let Some(name) = head.get("name").and_then(toml::Value::as_str) {
                        ws.applied
                            .entry(name.to_owned())
                            .or_default()
                            .extend(pr(head));
                    }
                }
            }
            None => {
                if let Some(name) = branch.get("name").and_then(toml::Value::as_str) {
                    ws.applied
                        .entry(name.to_owned())
                        .or_default()
                        .extend(pr(branch));
                }
            }
        }
    }
    (!ws.applied.is_empty()).then_some(ws)
}

/// Load a stored snapshot.
pub fn load(conn: &Connection, id: i64) -> rusqlite::Result<Option<Snapshot>> {
    conn.prepare_cached(
        "SELECT status, error_kind, head_branch, head_commit, dirty_files, dirty_count, branches, applied_count
         FROM snapshots WHERE id = ?1",
    )?
    .query_row([id], |r| {
        let status: String = r.get(0)?;
        let dirty: String = r.get(4)?;
        let branches: String = r.get(6)?;
        Ok(Snapshot {
            status: match status.as_str() {
                "complete" => SnapshotStatus::Complete,
                "partial" => SnapshotStatus::Partial,
                _ => SnapshotStatus::Failed,
            },
            error_kind: r.get(1)?,
            head_branch: r.get(2)?,
            head_commit: r.get(3)?,
            dirty_files: serde_json::from_str(&dirty).unwrap_or_default(),
            dirty_count: r.get::<_, i64>(5)?.max(0) as usize,
            branches: serde_json::from_str(&branches).unwrap_or_default(),
            applied_count: r.get::<_, i64>(7)?.max(1) as usize,
        })
    })
    .optional()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_v2_gives_head_and_paths() {
        let out = "# branch.oid 1111111111111111111111111111111111111111\0# branch.head main\0\
                   1 .M N... 100644 100644 100644 aaa bbb src/lib.rs\0? new file.txt\0";
        let (b, c, p) = parse_status(out);
        assert_eq!(b.as_deref(), Some("main"));
        assert_eq!(
            c.as_deref(),
            Some("1111111111111111111111111111111111111111")
        );
        assert_eq!(p, vec!["new file.txt", "src/lib.rs"]);
        let (b, c, _) = parse_status("# branch.oid (initial)\0# branch.head (detached)\0");
        assert_eq!((b, c), (None, None));
    }

    fn git(dir: &Path, args: &[&str]) {
        crate::git::repo::testing::git(dir, args, None);
    }

    /// The reads a hook starts before its capture see what a snapshot taken afterwards would:
    /// HEAD, dirty and untracked paths, every branch, and the pull request `gh pr checkout`
    /// recorded in a branch's upstream (one `git config` for all branches, names with dots and
    /// slashes included). A directory outside any repository prefetches nothing.
    #[test]
    fn prefetched_reads_give_the_snapshot_head_dirt_branches_and_prs() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("repo");
        std::fs::create_dir_all(root.join("src")).unwrap();
        git(&root, &["init", "-q", "-b", "main"]);
        std::fs::write(root.join("src/lib.rs"), "one\n").unwrap();
        git(&root, &["add", "-A"]);
        git(&root, &["commit", "-qm", "one"]);
        git(&root, &["branch", "feature/v1.2"]);
        git(&root, &["checkout", "-qb", "pr-42"]);
        git(
            &root,
            &["config", "branch.pr-42.merge", "refs/pull/42/head"],
        );
        git(
            &root,
            &["config", "branch.feature/v1.2.merge", "refs/pull/7/head"],
        );
        git(&root, &["config", "branch.main.merge", "refs/heads/main"]);
        std::fs::write(root.join("src/lib.rs"), "two\n").unwrap();
        std::fs::write(root.join("new.txt"), "new\n").unwrap();

        let (asked, found) = Prefetch::start(&root.join("src")).unwrap().finish();
        assert_eq!(asked, root.join("src"));
        let (repo, reads) = found.expect("a worktree");
        assert_eq!(repo, Repo::discover(&root).unwrap());
        let mut merges: Vec<(&str, Option<u32>)> = reads
            .merges
            .iter()
            .map(|(b, m)| (b.as_str(), pr_from_merge(m)))
            .collect();
        merges.sort();
        assert_eq!(
            merges,
            vec![
                ("feature/v1.2", Some(7)),
                ("main", None),
                ("pr-42", Some(42))
            ]
        );

        let store = crate::store::Store::open(&dir.path().join("cairn.db")).unwrap();
        let id = take(store.conn(), &repo, "2026-12-01T00:00:00Z", reads).unwrap();
        let snap = load(store.conn(), id).unwrap().unwrap();
        assert_eq!(snap.status, SnapshotStatus::Complete);
        assert_eq!(snap.head_branch.as_deref(), Some("pr-42"));
        assert_eq!(snap.dirty_files, vec!["new.txt", "src/lib.rs"]);
        let applied: Vec<(&str, &[u32])> = snap
            .branches
            .iter()
            .filter(|b| b.applied)
            .map(|b| (b.name.as_str(), b.prs.as_slice()))
            .collect();
        assert_eq!(applied, vec![("pr-42", &[42][..])]);

        // No `.git` above: nothing started. A `.git` that is no repository: no reads.
        let outside = tempfile::tempdir().unwrap();
        assert!(Prefetch::start(outside.path()).is_none());
        std::fs::create_dir(outside.path().join(".git")).unwrap();
        let (_, found) = Prefetch::start(outside.path()).unwrap().finish();
        assert!(found.is_none());
    }
}

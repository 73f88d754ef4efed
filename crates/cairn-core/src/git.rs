//! Git context: where a session's work landed.
//!
//! [`repo`] reads a repository through the `git` command; [`snapshot`] records the environment
//! at each capture batch; [`evidence`] reads commits, pushes, PRs, checkouts and edits out of the
//! transcript; [`associate`] turns all of that into links (session → branch/review/change, with
//! the evidence and a confidence); [`targets`] normalises what people type; [`publish`] shares
//! redacted session metadata through `refs/cairn/…`.
//!
//! This module reads records only through the store; it never parses transcripts.

pub mod associate;
pub mod evidence;
pub mod publish;
pub mod repo;
pub mod snapshot;
pub mod targets;

use std::collections::BTreeMap;
use std::path::Path;

use rusqlite::{Connection, params};

use crate::archive::capture::Touched;
use crate::error::Result;

/// After a capture: take one environment snapshot per repository the touched sessions ran in,
/// attach it to the capture batches, and bring those sessions' links up to date. One
/// transaction. `prefetch`: git reads a hook started before its capture, used for the
/// repository they turned out to be. Returns what the relink read.
pub fn after_capture(
    conn: &mut Connection,
    touched: &Touched,
    prefetch: Option<snapshot::Prefetch>,
) -> Result<associate::LinkStats> {
    if touched.sessions.is_empty() {
        return Ok(associate::LinkStats::default());
    }
    let db = |e| crate::archive::store::db_err(Path::new(":git"), e);
    let now = crate::archive::capture::now();
    let tx = conn
        .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
        .map_err(db)?;
    let mut cache = associate::RepoCache::default();
    let mut prefetched = None;
    if let Some(prefetch) = prefetch {
        let (dir, found) = prefetch.finish();
        cache.remember(dir, found.as_ref().map(|(repo, _)| repo.clone()));
        prefetched = found;
    }
    // Sessions grouped by the repository of their cwd.
    let mut by_repo: BTreeMap<std::path::PathBuf, (repo::Repo, Vec<i64>)> = BTreeMap::new();
    for &session in &touched.sessions {
        let cwd: Option<String> = tx
            .prepare_cached("SELECT cwd FROM sessions WHERE id = ?1")
            .map_err(db)?
            .query_row([session], |r| r.get(0))
            .map_err(db)?;
        let Some(repo) = cwd
            .as_deref()
            .map(Path::new)
            .filter(|p| p.is_dir())
            .and_then(|p| cache.repo_for(p))
        else {
            continue;
        };
        by_repo
            .entry(repo.root.clone())
            .or_insert_with(|| (repo, Vec::new()))
            .1
            .push(session);
    }
    for (repo, sessions) in by_repo.values() {
        let reads = match prefetched.take_if(|(r, _)| r.root == repo.root) {
            Some((_, reads)) => reads,
            None => snapshot::RepoReads::read(repo),
        };
        let snapshot_id = match snapshot::take(&tx, repo, &now, reads) {
            Ok(id) => id,
            Err(e) => {
                tracing::warn!("snapshot of {} failed: {e}", repo.root.display());
                continue;
            }
        };
        let mut attach = tx
            .prepare_cached(
                "UPDATE captures SET snapshot_id = ?1 WHERE id = ?2 AND session_id = ?3",
            )
            .map_err(db)?;
        for &capture in &touched.captures {
            for &session in sessions {
                if attach
                    .execute(params![snapshot_id, capture, session])
                    .map_err(db)?
                    > 0
                {
                    associate::snapshot_attached(&tx, session, capture).map_err(db)?;
                }
            }
        }
    }
    let stats = associate::associate(&tx, &touched.sessions, &mut cache)?;
    tx.commit().map_err(db)?;
    Ok(stats)
}

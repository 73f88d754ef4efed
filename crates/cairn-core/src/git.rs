//! Git context: where a session's work landed.
//!
//! [`repo`] reads a repository through the `git` command; [`snapshot`] records the environment
//! at each capture batch; [`evidence`] reads commits, pushes, PRs, checkouts and edits out of the
//! transcript; [`associate`] turns all of that into links (session → branch/review/change, with
//! the evidence and a confidence); [`targets`] normalises what people type; [`publish`] shares
//! redacted session metadata through `refs/cairn/…` as [`document`]s, checked when they arrive;
//! [`correct`] keeps a person's links and unlinks, which association never overrides.
//!
//! This module reads records only through the store; it never parses transcripts.

pub mod associate;
pub mod correct;
pub mod document;
pub mod evidence;
pub mod forget;
pub mod notes;
pub mod publish;
pub mod pull_from;
pub mod reflog;
pub mod repo;
pub mod snapshot;
pub mod store;
pub mod summary;
pub mod targets;
pub mod transcript;
pub mod written;

use std::collections::{BTreeMap, HashSet};
use std::path::Path;

use rusqlite::{Connection, OptionalExtension};

use crate::archive::capture::Touched;
use crate::error::Result;

pub use crate::archive::store::pending_links;

/// The sessions a relink after this capture takes up: the ones it touched, then at most
/// `backlog` of those an earlier capture left on `link_pending` (in that order, each once).
pub fn sessions_to_relink(
    conn: &Connection,
    touched: &[i64],
    backlog: usize,
) -> rusqlite::Result<Vec<i64>> {
    let mut sessions = touched.to_vec();
    let mut seen: HashSet<i64> = sessions.iter().copied().collect();
    sessions.extend(
        pending_links(conn)?
            .into_iter()
            .filter(|row| seen.insert(*row))
            .take(backlog),
    );
    Ok(sessions)
}

/// How many sessions of the relink backlog a hook takes up beside its own: an agent waits on
/// its hook, and a migration that queues every session for a relink (0023, 0038, 0039) would have the
/// first hook relink the whole archive. A sync takes up all of them.
pub const HOOK_BACKLOG: usize = 16;

/// Failed relinks a session stays on `link_pending` for. Then it is given up, and relinked
/// when it next changes: a session whose relink always fails must not take every later relink
/// down with it.
pub const MAX_LINK_ATTEMPTS: i64 = 3;

/// After a relink failed (its transaction rolled back): count an attempt against every pending
/// session and give up those that reached [`MAX_LINK_ATTEMPTS`]. Returns how many were given up.
pub fn relink_failed(conn: &Connection) -> rusqlite::Result<usize> {
    crate::archive::store::link_failed(conn, MAX_LINK_ATTEMPTS)
}

/// The captures of a session left on `link_pending` that no relink has compared yet and that
/// have no snapshot: they get the one this relink takes, as they would have had it had their
/// process lived (a rerun after a killed sync then ends as a clean sync).
fn unsnapshotted_captures(conn: &Connection, session: i64) -> rusqlite::Result<Vec<i64>> {
    let compared: i64 = conn
        .prepare_cached("SELECT last_capture_id FROM association_state WHERE session_id = ?1")?
        .query_row([session], |r| r.get(0))
        .optional()?
        .unwrap_or(0);
    crate::archive::store::captures_without_snapshot(conn, session, compared)
}

/// After a capture: take one environment snapshot per repository the touched sessions ran in,
/// attach it to the capture batches, and bring those sessions' links up to date, with those of
/// up to `backlog` sessions an earlier capture left unlinked ([`pending_links`]). One transaction, which
/// also clears what it relinked from `link_pending`. `prefetch`: git reads a hook started
/// before its capture, used for the repository they turned out to be; association reads the
/// records and history while they finish. Returns what the relink read.
pub fn after_capture(
    conn: &mut Connection,
    touched: &Touched,
    mut prefetch: Option<snapshot::Prefetch>,
    backlog: usize,
) -> Result<associate::LinkStats> {
    let path = crate::store::path_of(conn);
    let db = crate::store::err_at(&path);
    // Read first so that a capture with nothing to relink takes no write lock.
    if touched.sessions.is_empty() && pending_links(conn).map_err(db)?.is_empty() {
        return Ok(associate::LinkStats::default());
    }
    let now = crate::clock::now();
    let tx = conn
        .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
        .map_err(db)?;
    let sessions = sessions_to_relink(&tx, &touched.sessions, backlog).map_err(db)?;
    let mut captures = touched.captures.clone();
    for &row in &sessions[touched.sessions.len()..] {
        captures.extend(unsnapshotted_captures(&tx, row).map_err(db)?);
    }
    let mut cache = associate::RepoCache::default();
    if let Some(prefetch) = &mut prefetch {
        let (dir, repo) = prefetch.repo();
        cache.remember(dir, repo);
    }
    // The records' and edits' links first: the git reads they need (history, commit headers)
    // run while a hook's `git status` is still running. The snapshots are compared after.
    let begun = associate::begin(&tx, &sessions, &mut cache)?;
    let mut prefetched = prefetch.and_then(|p| p.finish().1);
    // Sessions grouped by the repository of their cwd.
    let mut by_repo: BTreeMap<std::path::PathBuf, (repo::Repo, Vec<i64>)> = BTreeMap::new();
    for &session in &sessions {
        let cwd = crate::archive::store::session_cwd(&tx, session).map_err(db)?;
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
        for &capture in &captures {
            for &session in sessions {
                if crate::archive::store::attach_snapshot(&tx, capture, session, snapshot_id)
                    .map_err(db)?
                {
                    associate::snapshot_attached(&tx, session, capture).map_err(db)?;
                }
            }
        }
    }
    let stats = associate::finish(&tx, begun, &mut cache)?;
    for &row in &sessions {
        crate::archive::store::link_done(&tx, row).map_err(db)?;
    }
    tx.commit().map_err(db)?;
    Ok(stats)
}

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
//! | `edit_committed` | yes | 0.9 | a commit on the branch made in the session's window (its start less the skew, to two days after its end) changed a path the session edited and added a line the session wrote there ([`super::written`]); 0.6, "by path and time only", when the session wrote nothing comparable to that path; a branch whose reflog says it was created from a commit already holding it did none of that work ([`super::reflog::created`]) |
//! | `change_committed` | yes | 0.9 | such a commit carries a change id (`Change-Id:` trailer, jj/GitButler header) |
//! | `direct_transition` | yes | 0.8 | the session switched to the branch (`git checkout -b`, or HEAD moved between captures) |
//! | `branch_recorded` | no | 0.5 | the agent recorded the branch on its records (Claude `gitBranch`, Codex `session_meta.git`) |
//! | `ran_on_branch` | no | 0.4 | the branch was checked out when a capture ran, within an hour of the last record it read; for what ran before a session's first capture when that came later, the worktree's HEAD reflog ([`super::reflog`]) |
//!
//! A person's word stands above all of these (`git/correct.rs`): a link they made has evidence
//! `person` (strong, confidence 1.0, listed first) and no relink removes it; a target they
//! unlinked gets no link from association again.
//!
//! A capture's snapshot (the branch checked out, a switch, dirty files promoted into a commit)
//! is evidence only when the capture ran while its session did ([`LIVE_CAPTURE_SECS`]): a first
//! `cairn sync` of a session long over says what is checked out today, not what it ran on. A
//! session whose agent writes no times (Cursor's agent transcripts, Aider) is taken as running
//! only on a capture's own word: a hook's, or one reading what was added since an earlier
//! capture within the hour; never on a first read by a sync.
//!
//! Weak links only mean "ran while the branch was checked out"; skim shows them only when
//! asked. Links are derived from stored records, snapshots and the repository, incrementally (see
//! [`associate`]): a relink reads what was captured since the last one, and rebuilding a session
//! from scratch gives the same links. What a relink evaluates once and keeps: the repository's
//! answer for a commit the session printed (its full id, change id, and for a commit on a detached
//! HEAD the branches containing it at the time), and the multi-branch promotion guard with the
//! paths the session had edited by that capture.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use rusqlite::{Connection, OptionalExtension, params};
use serde::{Deserialize, Serialize};

use super::evidence::{self, EvidenceRecord, Found};
use super::reflog::{self, HeadLog};
use super::repo::Repo;
use super::snapshot::{self, SnapshotStatus};
use super::store as git;
use super::targets::{Target, TargetKind};
use super::written;
use crate::archive::store as archive;
use crate::error::Result;

/// How long after a session a commit of the files it edited still counts as its work.
const COMMIT_WINDOW_SECS: i64 = 2 * 24 * 3600;
/// Clock skew allowed between a transcript and git.
const SKEW_SECS: i64 = 3600;
/// How long after a session's last record a capture's snapshot still tells what it ran on (the
/// branch checked out, a switch, files promoted into a commit): a hook's or the watcher's
/// capture comes within seconds; a later `cairn sync` of a session long over is not evidence.
const LIVE_CAPTURE_SECS: i64 = 3600;
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
    /// A person said so (`cairn link`, "belongs here"): see `git/correct.rs`.
    Person,
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
            Evidence::Person => "person",
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
            Evidence::Person,
        ]
        .into_iter()
        .find(|e| e.as_str() == s)
    }

    pub fn confidence(self) -> f64 {
        match self {
            Evidence::Person | Evidence::CommitBySession | Evidence::PrCreated => 1.0,
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
    /// Below the evidence's own confidence when the evidence is weaker than its kind usually is
    /// (an edit matched to a commit by path and time only); `None`: the evidence's own.
    pub confidence: Option<f64>,
    pub turn_index: Option<i64>,
    pub ordinal: Option<i64>,
    pub commit_id: Option<String>,
    pub detail: String,
}

/// Repositories already opened, by directory (a sync touches many sessions of few repos).
#[derive(Default)]
pub struct RepoCache {
    by_dir: HashMap<PathBuf, Option<Repo>>,
    /// The history of every local branch within a span of time, per repository and span.
    commits: HashMap<(PathBuf, Span), Vec<super::repo::CommitInfo>>,
    /// The time spans the sessions being associated need history of: their windows, those that
    /// overlap or nearly touch merged (see [`spans`]).
    spans: Vec<Span>,
    /// The keys of the distinctive lines a commit added to a path ([`written::key`]), by
    /// (commit, path): shared by the sessions whose edits it may carry.
    added: HashMap<(String, String), BTreeSet<u64>>,
    /// One session is being associated (a hook): its history is read for its edited paths only.
    single_session: bool,
    /// Each worktree's HEAD reflog, by its git dir, read once per association.
    head_logs: HashMap<PathBuf, Option<std::rc::Rc<HeadLog>>>,
    /// Where and when each branch was created, and what those points hold ([`Births`]).
    births: Births,
}

/// Seconds since the epoch, from..=to.
type Span = (i64, i64);

/// Sessions' windows closer than this are read as one span of history (one `git log` instead of
/// two), unless the span would grow past [`MAX_SPAN_SECS`].
const SPAN_GAP_SECS: i64 = COMMIT_WINDOW_SECS;
const MAX_SPAN_SECS: i64 = 14 * 24 * 3600;

/// The window of history in which a commit may carry the work of a session that ran from
/// `start` to `end`: from its start (less the clock skew allowed) to the commit window after
/// its end. It follows the session's own time, not today's date: last year's session reads
/// last year's history.
fn window(start: i64, end: i64) -> Span {
    (start - SKEW_SECS, end.max(start) + COMMIT_WINDOW_SECS)
}

/// The windows, merged where they overlap or nearly touch (each span at most
/// [`MAX_SPAN_SECS`] unless one window alone is longer), sorted.
fn spans(mut windows: Vec<Span>) -> Vec<Span> {
    windows.sort_unstable();
    let mut out: Vec<Span> = Vec::new();
    for w in windows {
        match out.last_mut() {
            Some(last)
                if w.0 <= last.1 + SPAN_GAP_SECS
                    && w.1.max(last.1) - last.0 <= MAX_SPAN_SECS.max(w.1 - w.0) =>
            {
                last.1 = last.1.max(w.1);
            }
            _ => out.push(w),
        }
    }
    out
}

/// A single session with at most this many edited paths reads only the history of those paths
/// (in a large repository, listing every file of every recent commit was most of a hook's git
/// time); more paths, or many sessions, read the whole recent history once and share it.
const PATHSPEC_MAX: usize = 64;

impl RepoCache {
    pub fn repo_for(&mut self, dir: &Path) -> Option<Repo> {
        self.by_dir
            .entry(dir.to_owned())
            .or_insert_with(|| {
                super::repo::may_be_in_worktree(dir)
                    .then(|| Repo::discover(dir).ok())
                    .flatten()
            })
            .clone()
    }

    /// The HEAD reflog of `repo`'s worktree ([`HeadLog::read`]), read once.
    fn head_log(&mut self, repo: &Repo) -> Option<std::rc::Rc<HeadLog>> {
        self.head_logs
            .entry(repo.git_dir.clone())
            .or_insert_with(|| HeadLog::read(repo).map(std::rc::Rc::new))
            .clone()
    }

    /// Record what is already known of `dir` (a hook's [`snapshot::Prefetch`]).
    pub fn remember(&mut self, dir: PathBuf, repo: Option<Repo>) {
        self.by_dir.insert(dir, repo);
    }
}

/// What a relink read: it follows what the capture added, not the length of the session.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct LinkStats {
    /// Sessions relinked.
    pub sessions: usize,
    /// Sessions rebuilt from scratch (first relink, after an upgrade, or after a capture's
    /// snapshot arrived out of order).
    pub rebuilt: usize,
    /// Evidence records read from the store.
    pub records_scanned: usize,
    /// Captures whose environment snapshot was compared with the previous capture's.
    pub captures_compared: usize,
    /// Links written.
    pub links_written: usize,
}

/// Bring the links of the given sessions up to date with what was captured since their last
/// relink.
///
/// Links are kept by origin (migration `0010_incremental_links`): those a transcript record
/// gives are stored once when the record is first seen, those a capture's snapshot gives once
/// when the capture is first seen, and only the links from the session's edits against git
/// history (which moves on without the transcript) are recomputed every time. The result is
/// the same as rebuilding every link from all records and snapshots, which is what a session
/// without stored state gets.
pub fn associate(
    conn: &Connection,
    session_rows: &[i64],
    cache: &mut RepoCache,
) -> Result<LinkStats> {
    let begun = begin(conn, session_rows, cache)?;
    finish(conn, begun, cache)
}

/// [`associate`] up to the snapshots: the records' links and the edits' links (the git reads
/// association does itself) of every session. [`finish`] then compares the captures'
/// snapshots; in between, the caller may take and attach the snapshots of this capture (a
/// hook's `git status` runs while association reads history).
pub fn begin(conn: &Connection, session_rows: &[i64], cache: &mut RepoCache) -> Result<Begun> {
    let db = crate::store::err_in(conn);
    // The history to read is each session's own window, whatever today's date (a hook
    // associates one live session; a backfill, last year's sessions): sessions close in time
    // share one read.
    let mut windows = Vec::new();
    for &row in session_rows {
        let Some(times) = archive::session_times(conn, row).map_err(db)? else {
            continue;
        };
        let start = times.started.as_deref().and_then(epoch);
        let end = times.updated.as_deref().and_then(epoch);
        if let (Some(start), Some(end)) = (start, end) {
            windows.push(window(start, end));
        }
    }
    cache.spans = spans(windows);
    cache.single_session = session_rows.len() == 1;
    let mut stats = LinkStats::default();
    let mut sessions = Vec::with_capacity(session_rows.len());
    for &row in session_rows {
        sessions.push(relink_begin(conn, row, cache, &mut stats)?);
    }
    Ok(Begun { sessions, stats })
}

/// The rest of [`associate`] after [`begin`]: each session's new captures compared with the
/// one before, and what carries over stored. A session whose state a snapshot attached since
/// [`begin`] dropped (it arrived after a later capture was compared) is rebuilt.
pub fn finish(conn: &Connection, begun: Begun, cache: &mut RepoCache) -> Result<LinkStats> {
    let db = crate::store::err_in(conn);
    let Begun {
        sessions,
        mut stats,
    } = begun;
    for session in sessions {
        if session.had_state && State::load(conn, session.row).map_err(db)?.is_none() {
            relink(conn, session.row, cache, &mut stats)?;
        } else {
            relink_finish(conn, session, cache, &mut stats)?;
        }
    }
    Ok(stats)
}

/// Sessions [`begin`] relinked up to their snapshots.
#[derive(Debug)]
pub struct Begun {
    sessions: Vec<SessionBegun>,
    stats: LinkStats,
}

/// One session's relink between [`relink_begin`] and [`relink_finish`].
#[derive(Debug)]
struct SessionBegun {
    row: i64,
    state: State,
    /// The session had stored state when the relink began.
    had_state: bool,
    /// Repo-relative paths the session edited.
    edited: BTreeSet<String>,
    records: usize,
    /// The worktree the session ran in, and when (first and last record), for its reflog.
    repo: Option<Repo>,
    span: Option<Span>,
}

/// Forget what association carried over for a session, so its next relink rebuilds every link.
pub fn reset(conn: &Connection, row: i64) -> rusqlite::Result<()> {
    conn.prepare_cached("DELETE FROM association_state WHERE session_id = ?1")?
        .execute([row])?;
    Ok(())
}

/// A capture of `row` got its snapshot: when association already compared captures after it
/// (another process relinked first), the session is rebuilt so its snapshots are compared in
/// capture order.
pub(crate) fn snapshot_attached(conn: &Connection, row: i64, capture: i64) -> rusqlite::Result<()> {
    conn.prepare_cached(
        "DELETE FROM association_state WHERE session_id = ?1 AND last_capture_id >= ?2",
    )?
    .execute(params![row, capture])?;
    Ok(())
}

/// Git exec calls kept waiting for their result at most (a call whose result never comes, an
/// interrupted turn, must not make the state grow without bound).
const MAX_PENDING_CALLS: usize = 256;

/// What association carries from one relink of a session to the next.
#[derive(Debug, Default)]
struct State {
    /// Records up to this ordinal have been scanned (-1: none).
    scanned_ordinal: i64,
    current_branch: Option<String>,
    /// Git exec calls (call id, command) whose result was not stored yet.
    pending_calls: Vec<(String, String)>,
    own_commits: BTreeSet<String>,
    last_capture_id: i64,
    prev_snapshot_id: Option<i64>,
    prev_repo_id: Option<i64>,
}

impl State {
    fn fresh() -> State {
        State {
            scanned_ordinal: -1,
            ..State::default()
        }
    }

    fn load(conn: &Connection, row: i64) -> rusqlite::Result<Option<State>> {
        conn.prepare_cached(
            "SELECT scanned_ordinal, current_branch, pending_calls, own_commits, last_capture_id,
                    prev_snapshot_id, prev_repo_id
             FROM association_state WHERE session_id = ?1",
        )?
        .query_row([row], |r| {
            let pending: String = r.get(2)?;
            let own: String = r.get(3)?;
            Ok(State {
                scanned_ordinal: r.get(0)?,
                current_branch: r.get(1)?,
                pending_calls: serde_json::from_str(&pending).unwrap_or_default(),
                own_commits: serde_json::from_str(&own).unwrap_or_default(),
                last_capture_id: r.get(4)?,
                prev_snapshot_id: r.get(5)?,
                prev_repo_id: r.get(6)?,
            })
        })
        .optional()
    }

    fn save(
        &self,
        conn: &Connection,
        row: i64,
        records: usize,
        captures: usize,
    ) -> rusqlite::Result<()> {
        conn.prepare_cached(
            "INSERT INTO association_state (session_id, scanned_ordinal, current_branch, pending_calls,
                own_commits, last_capture_id, prev_snapshot_id, prev_repo_id, records_scanned, captures_compared)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)
             ON CONFLICT (session_id) DO UPDATE SET scanned_ordinal = excluded.scanned_ordinal,
                current_branch = excluded.current_branch, pending_calls = excluded.pending_calls,
                own_commits = excluded.own_commits, last_capture_id = excluded.last_capture_id,
                prev_snapshot_id = excluded.prev_snapshot_id, prev_repo_id = excluded.prev_repo_id,
                records_scanned = excluded.records_scanned, captures_compared = excluded.captures_compared",
        )?
        .execute(params![
            row,
            self.scanned_ordinal,
            self.current_branch,
            serde_json::to_string(&self.pending_calls).unwrap_or_else(|_| "[]".into()),
            serde_json::to_string(&self.own_commits).unwrap_or_else(|_| "[]".into()),
            self.last_capture_id,
            self.prev_snapshot_id,
            self.prev_repo_id,
            records as i64,
            captures as i64,
        ])?;
        Ok(())
    }
}

/// Bring one session's links up to date.
fn relink(conn: &Connection, row: i64, cache: &mut RepoCache, stats: &mut LinkStats) -> Result<()> {
    let session = relink_begin(conn, row, cache, stats)?;
    relink_finish(conn, session, cache, stats)
}

/// A relink up to the snapshots: the session's repository, its new records' links and its
/// edits' links.
fn relink_begin(
    conn: &Connection,
    row: i64,
    cache: &mut RepoCache,
    stats: &mut LinkStats,
) -> Result<SessionBegun> {
    let db = crate::store::err_in(conn);
    let times = archive::session_times(conn, row)
        .map_err(db)?
        .ok_or_else(|| db(rusqlite::Error::QueryReturnedNoRows))?;
    let facts = SessionFacts {
        cwd: times.cwd,
        started: times.started.as_deref().and_then(epoch),
        ended: times.updated.as_deref().and_then(epoch),
    };
    let repo = facts
        .cwd
        .as_deref()
        .map(Path::new)
        .filter(|p| p.is_dir())
        .and_then(|p| cache.repo_for(p));
    if let Some(repo) = &repo {
        let now = crate::clock::now();
        let repo_row = snapshot::repo_id(conn, repo, &now).map_err(db)?;
        archive::set_session_repo(conn, row, repo_row).map_err(db)?;
    }
    let loaded = State::load(conn, row).map_err(db)?;
    let had_state = loaded.is_some();
    let mut state = match loaded {
        Some(state) => state,
        None => {
            // Nothing carried over: every link is rebuilt from every record and snapshot (a
            // person's links are theirs, not association's).
            for sql in [
                "DELETE FROM links WHERE session_id = ?1 AND origin IS NOT 'person'",
                "DELETE FROM session_edits WHERE session_id = ?1",
            ] {
                conn.prepare_cached(sql)
                    .map_err(db)?
                    .execute([row])
                    .map_err(db)?;
            }
            stats.rebuilt += 1;
            State::fresh()
        }
    };
    stats.sessions += 1;

    // 1. The records captured since the last relink.
    let (records, pending, last_ordinal) =
        load_records(conn, row, state.scanned_ordinal, &state.pending_calls).map_err(db)?;
    let mut commands: HashMap<String, String> = std::mem::take(&mut state.pending_calls)
        .into_iter()
        .collect();
    let found = evidence::scan_with(&records, &mut commands);
    state.pending_calls = pending
        .into_iter()
        .filter_map(|id| commands.get(&id).map(|c| (id, c.clone())))
        .collect();
    if state.pending_calls.len() > MAX_PENDING_CALLS {
        let extra = state.pending_calls.len() - MAX_PENDING_CALLS;
        state.pending_calls.drain(..extra);
    }
    state.scanned_ordinal = state.scanned_ordinal.max(last_ordinal);
    let links = record_links(conn, row, &found, repo.as_ref(), &mut state)?;
    stats.records_scanned += records.len();
    stats.links_written += insert_links(conn, row, &links, Some("record"))?;

    // 2. Edits against git history: recomputed, git moves on without the transcript.
    conn.prepare_cached("DELETE FROM links WHERE session_id = ?1 AND origin IS NULL")
        .map_err(db)?
        .execute([row])
        .map_err(db)?;
    let mut edits: BTreeMap<String, EditAt> = BTreeMap::new();
    if let Some(repo) = &repo {
        edits = session_edits(conn, row, repo, facts.cwd.as_deref()).map_err(db)?;
        let links = edit_commits(repo, &facts, &edits, &state.own_commits, cache);
        stats.links_written += insert_links(conn, row, &links, None)?;
    }

    Ok(SessionBegun {
        row,
        state,
        had_state,
        edited: edits.into_keys().collect(),
        records: records.len(),
        span: facts.started.zip(facts.ended),
        repo,
    })
}

/// The rest of a relink: the snapshots of the captures since the last relink, each against the
/// one before; when none taken while the session ran said what it ran on, the reflog's word;
/// then the state stored.
fn relink_finish(
    conn: &Connection,
    session: SessionBegun,
    cache: &mut RepoCache,
    stats: &mut LinkStats,
) -> Result<()> {
    let db = crate::store::err_in(conn);
    let SessionBegun {
        row,
        mut state,
        edited,
        records,
        repo,
        span,
        ..
    } = session;
    let edited: BTreeSet<&String> = edited.iter().collect();
    let (links, compared) = snapshot_links(conn, row, &edited, &mut state)?;
    stats.captures_compared += compared;
    stats.links_written += insert_links(conn, row, &links, Some("snapshot"))?;
    // What ran before the session was first read, when that was after it ended: no capture's
    // snapshot saw it, the worktree's reflog did (this machine's: not for a session that ran on
    // another, whose folder may have the same path here).
    let first_read = match archive::ran_elsewhere(conn, row).map_err(db)? {
        true => None,
        false => archive::first_capture(conn, row).map_err(db)?,
    };
    if let (Some(repo), Some((start, _)), Some(unseen_until)) = (
        repo,
        span,
        first_read.and_then(|(at, last)| read_late(&at, last.as_deref())),
    ) {
        let links = reflog_links(conn, row, cache, &repo, (start, unseen_until)).map_err(db)?;
        stats.links_written += insert_links(conn, row, &links, None)?;
    }

    state.save(conn, row, records, compared).map_err(db)?;
    Ok(())
}

struct SessionFacts {
    cwd: Option<String>,
    started: Option<i64>,
    ended: Option<i64>,
}

fn epoch(ts: &str) -> Option<i64> {
    ts.parse::<jiff::Timestamp>().ok().map(|t| t.as_second())
}

/// The evidence records of session `row` stored after ordinal `after`, in record order; the
/// git calls among `pending` (scanned before) and among the new records whose result is not
/// stored yet; and the last ordinal stored.
#[allow(clippy::type_complexity)]
fn load_records(
    conn: &Connection,
    row: i64,
    after: i64,
    pending: &[(String, String)],
) -> rusqlite::Result<(Vec<EvidenceRecord>, Vec<String>, i64)> {
    // Only the records evidence can come from: edits, git/gh commands and their results, PR
    // links, and the first record of each recorded branch. Each is found through an index
    // (`records_evidence`, `records_call`, `session_branches`) from `after` on, so the cost
    // follows what was captured since the last relink, not the length of the session. A call's
    // results are its own, not every result of its id (`archive::tool_results`).
    let last = archive::last_ordinal(conn, row)?;
    let candidates = archive::evidence_candidates(conn, row, after, last)?;
    // Exec calls count when they run git, gh or glab (as `LIKE`, ignoring ASCII case).
    let is_git = |input: &str| {
        let lower = input.to_ascii_lowercase();
        lower.contains("git") || lower.contains("gh ") || lower.contains("glab")
    };
    let mut records = Vec::with_capacity(candidates.len());
    let mut waiting = Vec::new();
    // Results of calls scanned before that were still waiting for theirs.
    for (call_id, _) in pending {
        let before = records.len();
        records.extend(archive::tool_results(
            conn, row, call_id, after, after, last,
        )?);
        if records.len() == before {
            waiting.push(call_id.clone());
        }
    }
    for r in candidates {
        if r.kind == "tool_call" && r.tool_kind.as_deref() == Some("exec") {
            let Some(call_id) = r.call_id.clone() else {
                continue;
            };
            if !r.tool_input.as_deref().is_some_and(is_git) {
                continue;
            }
            let before = records.len();
            records.extend(archive::tool_results(
                conn,
                row,
                &call_id,
                r.ordinal,
                i64::MIN,
                last,
            )?);
            if records.len() == before {
                waiting.push(call_id);
            }
        }
        records.push(r);
    }
    // The first record of each recorded branch; its turn is the turn of that record.
    let mut all = archive::branch_firsts(conn, row, after, last)?;
    all.append(&mut records);
    // Record order; at one ordinal the branch row comes first (a stable sort keeps it there).
    all.sort_by_key(|r| r.ordinal);
    Ok((all, waiting, last.max(after)))
}

/// Links from newly scanned transcript evidence; edits are kept in `session_edits`. Carries the
/// session's current branch and own commits in `state`.
fn record_links(
    conn: &Connection,
    row: i64,
    found: &[Found],
    repo: Option<&Repo>,
    state: &mut State,
) -> Result<Vec<Link>> {
    let db = crate::store::err_in(conn);
    let state_commits = &mut state.own_commits;
    let mut links = Vec::new();
    // The branch the session was on at each point, for PRs (whose output names no branch).
    let current_branch = &mut state.current_branch;
    let repo = repo.cloned();
    for f in found {
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
                    confidence: None,
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
                *current_branch = Some(branch.clone());
                links.push(Link {
                    target: Target::branch(branch),
                    evidence: Evidence::DirectTransition,
                    confidence: None,
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
                state_commits.insert(id.clone());
                let branches = match (branch, &repo, &full) {
                    (Some(b), _, _) => vec![b.clone()],
                    (None, Some(r), Some(c)) => r.branches_containing(c),
                    _ => Vec::new(),
                };
                for b in branches {
                    *current_branch = Some(b.clone());
                    links.push(Link {
                        target: Target::branch(&b),
                        evidence: Evidence::CommitBySession,
                        confidence: None,
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
                        confidence: None,
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
                *current_branch = Some(branch.clone());
                links.push(Link {
                    target: Target::branch(branch),
                    evidence: Evidence::Pushed,
                    confidence: None,
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
                let target = match current_branch.as_ref() {
                    Some(b) => Target::pull_request(b, *number),
                    None => Target {
                        kind: TargetKind::Review,
                        key: format!("pull-request:#{number}"),
                        pr_number: Some(*number),
                    },
                };
                let branch = current_branch.clone().unwrap_or_default();
                let repo = archive::session_repo(conn, row).map_err(db)?;
                conn.prepare_cached(
                    "INSERT INTO git_prs (repo_id, branch, number, url, source) VALUES
                     (?1, ?2, ?3, ?4, 'transcript')
                     ON CONFLICT (branch, number) DO UPDATE SET url = excluded.url",
                )
                .map_err(db)?
                .execute(params![repo, branch, number, url])
                .map_err(db)?;
                links.push(Link {
                    target,
                    evidence: Evidence::PrCreated,
                    confidence: None,
                    turn_index: Some(*turn_index),
                    ordinal: Some(*ordinal),
                    commit_id: None,
                    detail: format!("opened PR #{number}"),
                });
            }
            Found::Edit {
                path,
                cwd,
                ordinal,
                turn_index,
                timestamp,
                written,
            } => {
                // Kept as the agent wrote them; made repo-relative at each relink.
                conn.prepare_cached(
                    "INSERT OR IGNORE INTO session_edits (session_id, path, cwd, ordinal, turn_index, timestamp)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                )
                .map_err(db)?
                .execute(params![row, path, cwd, ordinal, turn_index, timestamp])
                .map_err(db)?;
                add_written(conn, row, path, cwd.as_deref(), written).map_err(db)?;
            }
        }
    }

    Ok(links)
}

/// Lines of one path a session wrote, kept at most (the latest): enough to recognise its work in
/// a commit, bounded for a session that rewrites a large file again and again.
const MAX_WRITTEN_KEYS: usize = 2048;

/// Add the keys of lines an edit wrote to `path` to what the session wrote there.
fn add_written(
    conn: &Connection,
    row: i64,
    path: &str,
    cwd: Option<&str>,
    written: &[u64],
) -> rusqlite::Result<()> {
    if written.is_empty() {
        return Ok(());
    }
    let old: Option<String> = conn
        .prepare_cached(
            "SELECT written FROM session_edits
             WHERE session_id = ?1 AND path = ?2 AND ifnull(cwd, char(0)) = ifnull(?3, char(0))",
        )?
        .query_row(params![row, path, cwd], |r| r.get(0))
        .optional()?;
    let mut keys: Vec<u64> = old
        .and_then(|o| serde_json::from_str(&o).ok())
        .unwrap_or_default();
    let mut seen: std::collections::HashSet<u64> = keys.iter().copied().collect();
    keys.extend(written.iter().filter(|k| seen.insert(**k)));
    if keys.len() > MAX_WRITTEN_KEYS {
        keys.drain(..keys.len() - MAX_WRITTEN_KEYS);
    }
    conn.prepare_cached(
        "UPDATE session_edits SET written = ?4
         WHERE session_id = ?1 AND path = ?2 AND ifnull(cwd, char(0)) = ifnull(?3, char(0))",
    )?
    .execute(params![
        row,
        path,
        cwd,
        serde_json::to_string(&keys).unwrap_or_else(|_| "[]".to_owned())
    ])?;
    Ok(())
}

/// The files session `row` edited, repo-relative, each with its first edit and what the
/// session wrote to it.
fn session_edits(
    conn: &Connection,
    row: i64,
    repo: &Repo,
    session_cwd: Option<&str>,
) -> rusqlite::Result<BTreeMap<String, EditAt>> {
    let mut stmt = conn.prepare_cached(
        "SELECT path, cwd, ordinal, turn_index, timestamp, written FROM session_edits
         WHERE session_id = ?1 ORDER BY ordinal, rowid",
    )?;
    let rows = stmt.query_map([row], |r| {
        Ok((
            r.get::<_, String>(0)?,
            r.get::<_, Option<String>>(1)?,
            r.get::<_, i64>(2)?,
            r.get::<_, i64>(3)?,
            r.get::<_, Option<String>>(4)?,
            r.get::<_, String>(5)?,
        ))
    })?;
    let mut edits: BTreeMap<String, EditAt> = BTreeMap::new();
    for r in rows {
        let (path, cwd, ordinal, turn_index, timestamp, written) = r?;
        let abs = if Path::new(&path).is_absolute() {
            PathBuf::from(&path)
        } else {
            Path::new(cwd.as_deref().or(session_cwd).unwrap_or(".")).join(&path)
        };
        if let Some(rel) = repo.relative(&abs.to_string_lossy()) {
            let when = timestamp.as_deref().and_then(epoch);
            let written: Vec<u64> = serde_json::from_str(&written).unwrap_or_default();
            edits
                .entry(rel)
                .or_insert(EditAt {
                    ordinal,
                    turn_index,
                    when,
                    written: BTreeSet::new(),
                })
                .written
                .extend(written);
        }
    }
    Ok(edits)
}

/// Where a file was first edited in a session.
struct EditAt {
    ordinal: i64,
    turn_index: i64,
    /// Seconds since the epoch, when the record has a timestamp.
    when: Option<i64>,
    /// Keys of the distinctive lines the session wrote to the file ([`written::key`]).
    written: BTreeSet<u64>,
}

/// Commits on local branches, made within the session's window, that carry what the session
/// wrote to a file it edited: the commit's change to that path contains one of the distinctive
/// lines the session wrote there ([`written`]). A commit that touched such a path but carries
/// none of what the session wrote there is not its work (a repository's initial commit dated
/// after the edit by a disagreeing clock); one that touched a path the session wrote nothing
/// comparable to (only deleted lines, only `}`) is linked by path and time only, at
/// [`PATH_ONLY_CONFIDENCE`], and its evidence says so.
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
    let window = window(start, end);
    // Only the commits touching this session's edits can give a link, each with only the edited
    // files among its own: the same links as from the whole history. Not kept in the cache,
    // which other sessions share.
    let own_history;
    let commits: &[super::repo::CommitInfo] = if cache.single_session && edits.len() <= PATHSPEC_MAX
    {
        let paths: Vec<&str> = edits.keys().map(String::as_str).collect();
        own_history = repo
            .commits_touching(
                &["--branches"],
                &[],
                (Some(window.0), Some(window.1)),
                Some(5000),
                &paths,
            )
            .unwrap_or_default();
        &own_history
    } else {
        edit_history(repo, window, &cache.spans, &mut cache.commits)
    };
    let mut candidates: Vec<(&super::repo::CommitInfo, Vec<(&String, &EditAt)>)> = Vec::new();
    for c in commits
        .iter()
        .filter(|c| c.time >= window.0 && c.time <= window.1)
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
        if !touched.is_empty() {
            candidates.push((c, touched));
        }
    }
    let added = &mut cache.added;
    added_keys(repo, &candidates, added);
    let mut links = Vec::new();
    for (c, touched) in &candidates {
        // The paths whose change carries lines the session wrote there, with how many; and
        // those the session wrote nothing comparable to.
        let mut carried: Vec<(&String, &EditAt, usize)> = Vec::new();
        let mut uncompared: Vec<(&String, &EditAt)> = Vec::new();
        for &(path, e) in touched {
            if e.written.is_empty() {
                uncompared.push((path, e));
                continue;
            }
            let n = added
                .get(&(c.id.clone(), path.clone()))
                .map_or(0, |keys| e.written.intersection(keys).count());
            if n > 0 {
                carried.push((path, e, n));
            }
        }
        let short_id = short(&c.id);
        let (first, names, confidence, detail) = if let Some(&(_, e, _)) = carried.first() {
            let names: Vec<&str> = carried.iter().map(|(p, _, _)| p.as_str()).collect();
            let wrote: Vec<String> = carried
                .iter()
                .take(3)
                .map(|(p, _, n)| format!("{n} line{} of {p}", if *n == 1 { "" } else { "s" }))
                .collect();
            let detail = format!(
                "wrote {}{}, committed in {short_id}",
                wrote.join(", "),
                more(carried.len())
            );
            (e, names, None, detail)
        } else if let Some(&(_, e)) = uncompared.first() {
            let names: Vec<&str> = uncompared.iter().map(|(p, _)| p.as_str()).collect();
            let detail = format!(
                "edited {}{}, committed in {short_id} (by path and time only: the session wrote no line there to compare)",
                names.iter().take(3).copied().collect::<Vec<_>>().join(", "),
                more(names.len())
            );
            (e, names, Some(PATH_ONLY_CONFIDENCE), detail)
        } else {
            continue;
        };
        for branch in cache.births.holding_their_own(repo, c) {
            links.push(Link {
                target: Target::branch(&branch),
                evidence: Evidence::EditCommitted,
                confidence,
                turn_index: Some(first.turn_index),
                ordinal: Some(first.ordinal),
                commit_id: Some(c.id.clone()),
                detail: detail.clone(),
            });
        }
        if let Some(change) = &c.change_id {
            let names = names.iter().take(3).copied().collect::<Vec<_>>().join(", ");
            links.push(Link {
                target: Target::change(change),
                evidence: Evidence::ChangeCommitted,
                confidence,
                turn_index: Some(first.turn_index),
                ordinal: Some(first.ordinal),
                commit_id: Some(c.id.clone()),
                detail: format!("edited {names}, committed as change {change}"),
            });
        }
    }
    links
}

/// Where and when the branches of the repositories association reads were created, and which
/// commits those creation points hold, each read once per association.
#[derive(Default)]
struct Births {
    /// What each branch's reflog says of its creation ([`reflog::created`]), by common dir and
    /// name.
    created: HashMap<(PathBuf, String), Option<reflog::Created>>,
    /// Whether a commit (first) is an ancestor of another, by common dir.
    ancestry: HashMap<(PathBuf, String, String), bool>,
}

impl Births {
    /// The branches holding commit `c` that hold it as their own work: all of them, less those
    /// whose reflog says they were created from a commit already holding it (a branch forked
    /// from `main` after the work landed there) when another branch holds it still. A branch
    /// whose creation is not known holds its own work; and when every branch holding the commit
    /// forked after it (the branch it was made on reset or deleted), they all keep it.
    fn holding_their_own(&mut self, repo: &Repo, c: &super::repo::CommitInfo) -> Vec<String> {
        let all = repo.branches_containing(&c.id);
        let own: Vec<String> = all
            .iter()
            .filter(|b| !self.inherited(repo, b, c))
            .cloned()
            .collect();
        if own.is_empty() { all } else { own }
    }

    fn inherited(&mut self, repo: &Repo, branch: &str, c: &super::repo::CommitInfo) -> bool {
        let created = self
            .created
            .entry((repo.common_dir.clone(), branch.to_owned()))
            .or_insert_with(|| reflog::created(repo, branch))
            .clone();
        // A branch created before the commit was made cannot have been created from it.
        let Some(b) = created.filter(|b| b.at >= c.time) else {
            return false;
        };
        *self
            .ancestry
            .entry((repo.common_dir.clone(), c.id.clone(), b.commit.clone()))
            .or_insert_with(|| repo.is_ancestor(&c.id, &b.commit))
    }
}

/// The confidence of an edit linked to a commit by path and time only (below
/// `edit_committed`'s 0.9, above a weak link's).
const PATH_ONLY_CONFIDENCE: f64 = 0.6;

/// " and N more" for a list of `n` of which three are named.
fn more(n: usize) -> String {
    if n > 3 {
        format!(" and {} more", n - 3)
    } else {
        String::new()
    }
}

/// Read into the cache what each candidate commit added to the paths of its that the session
/// wrote lines to and that the cache does not know yet: one `git log` for all of them.
fn added_keys(
    repo: &Repo,
    candidates: &[(&super::repo::CommitInfo, Vec<(&String, &EditAt)>)],
    added: &mut HashMap<(String, String), BTreeSet<u64>>,
) {
    let mut ids: Vec<&str> = Vec::new();
    let mut paths: BTreeSet<&str> = BTreeSet::new();
    for (c, touched) in candidates {
        let mut wanted = false;
        for (path, e) in touched {
            if !e.written.is_empty() && !added.contains_key(&(c.id.clone(), (*path).clone())) {
                paths.insert(path.as_str());
                wanted = true;
            }
        }
        if wanted {
            ids.push(&c.id);
        }
    }
    if ids.is_empty() {
        return;
    }
    let paths: Vec<&str> = paths.into_iter().collect();
    let Ok(by_commit) = repo.added_lines_of(&ids, &paths) else {
        return;
    };
    for id in ids {
        // A path the commit added no line to (it only deleted) carries nothing: an empty set.
        for path in &paths {
            added
                .entry((id.to_owned(), (*path).to_owned()))
                .or_default();
        }
        for (path, lines) in by_commit.get(id).into_iter().flatten() {
            let keys = added.entry((id.to_owned(), path.clone())).or_default();
            keys.extend(
                lines
                    .iter()
                    .map(|l| written::normalise(l))
                    .filter(|l| written::distinctive(l))
                    .map(|l| written::key(&l)),
            );
        }
    }
}

/// The history of every local branch of `repo` in the span of time that holds `window`, read
/// once per association and shared by the sessions in that span.
fn edit_history<'c>(
    repo: &Repo,
    window: Span,
    spans: &[Span],
    commits: &'c mut HashMap<(PathBuf, Span), Vec<super::repo::CommitInfo>>,
) -> &'c [super::repo::CommitInfo] {
    let span = spans
        .iter()
        .copied()
        .find(|s| s.0 <= window.0 && window.1 <= s.1)
        .unwrap_or(window);
    commits.entry((repo.root.clone(), span)).or_insert_with(|| {
        repo.commits_touching(
            &["--branches"],
            &[],
            (Some(span.0), Some(span.1)),
            Some(5000),
            &[],
        )
        .unwrap_or_default()
    })
}

/// Whether capture `c` ran while its session was active: within [`LIVE_CAPTURE_SECS`] of the
/// last record it read (a hook's or the watcher's capture), not a first read of a session long
/// over. A capture that read no record with a time goes by how it was made ([`written_live`]).
fn while_active(conn: &Connection, c: &archive::SnapshotCapture) -> rusqlite::Result<bool> {
    match c.last_record_at.as_deref().and_then(epoch) {
        Some(_) => Ok(read_late(&c.captured_at, c.last_record_at.as_deref()).is_none()),
        None => written_live(conn, c),
    }
}

/// Whether capture `c`, which read no record with a time (Cursor's agent transcripts and
/// Aider's history carry none), was made while its session was being written. A hook's was:
/// the agent ran it as it wrote. So was one that read what the agent added since an earlier
/// run's capture of the session at most [`LIVE_CAPTURE_SECS`] before (the desktop's watcher
/// as a session goes on, or two syncs an hour apart): the file grew in between. So was one at
/// most that long after the session's end as the agent's own metadata gives it (Vibe's
/// `meta.json`), or before it. Anything else is not: a first read by a sync or the watcher may
/// come months after the session, and what is checked out then says nothing of it.
///
/// The file's modification time is not asked: the archive keeps only its latest, which a
/// later write moves, so a rebuild would link otherwise. Earlier batches of the same run (a
/// long transcript is committed in several) share its snapshot and are no earlier run.
fn written_live(conn: &Connection, c: &archive::SnapshotCapture) -> rusqlite::Result<bool> {
    let word = archive::capture_word(conn, c.id)?.unwrap_or_default();
    let Some(at) = epoch(&c.captured_at) else {
        return Ok(word.by_hook);
    };
    let within = |t: Option<&str>| {
        t.and_then(epoch)
            .is_some_and(|t| at - t <= LIVE_CAPTURE_SECS)
    };
    Ok(word.by_hook
        || within(word.earlier_run_at.as_deref())
        || within(word.session_ended_at.as_deref()))
}

/// The time of the last record a capture made at `captured_at` read, when the capture came
/// more than [`LIVE_CAPTURE_SECS`] after it (the session was over when it was read); none when
/// it came while the session ran, or the times do not tell.
fn read_late(captured_at: &str, last_record_at: Option<&str>) -> Option<i64> {
    let last = last_record_at.and_then(epoch)?;
    (epoch(captured_at)? - last > LIVE_CAPTURE_SECS).then_some(last)
}

/// At most this many branches are linked from one session's span of the reflog (a session left
/// open for a week while its folder went through every branch says little of any).
const REFLOG_BRANCHES_MAX: usize = 8;

/// `ran_on_branch` links from the reflog of the worktree the session ran in: the branches HEAD
/// was on over `span` (from the session's first record to the last one its first capture
/// read), each on the turn that was running when HEAD came to it (the first turn for the
/// branch it began on). Recomputed at every relink (their origin is none); only the part of a
/// session no capture saw while it ran, so they never stand for what a snapshot said.
fn reflog_links(
    conn: &Connection,
    row: i64,
    cache: &mut RepoCache,
    repo: &Repo,
    (start, end): Span,
) -> rusqlite::Result<Vec<Link>> {
    let Some(log) = cache.head_log(repo) else {
        return Ok(Vec::new());
    };
    let on = log.on_between(start, end);
    if on.is_empty() {
        return Ok(Vec::new());
    }
    let turns: Vec<(i64, Option<i64>)> = archive::turn_starts(conn, row)?
        .into_iter()
        .map(|(index, started)| (index, started.as_deref().and_then(epoch)))
        .collect();
    let turn_at = |at: i64| {
        turns
            .iter()
            .take_while(|(_, started)| started.is_none_or(|s| s <= at))
            .last()
            .or(turns.first())
            .map(|(index, _)| *index)
    };
    Ok(on
        .into_iter()
        .take(REFLOG_BRANCHES_MAX)
        .map(|(branch, at)| Link {
            target: Target::branch(&branch),
            evidence: Evidence::RanOnBranch,
            confidence: None,
            turn_index: turn_at(at),
            ordinal: None,
            commit_id: None,
            detail: format!("{branch} was checked out while it ran (HEAD reflog)"),
        })
        .collect())
}

/// A capture's snapshot: (snapshot id, turn index, last ordinal, repository row, capture id).
type CaptureSnapshot = (i64, Option<i64>, Option<i64>, i64, i64);

/// Evidence from the environment snapshots taken at this session's captures since the last
/// relink, each compared with the one before (carried in `state`): the branch that was checked
/// out (weak), a switch of branch (direct transition), and dirty files that became a new commit
/// of a branch by the next capture (promotion). Returns the links and how many captures were
/// compared.
fn snapshot_links(
    conn: &Connection,
    row: i64,
    edited: &BTreeSet<&String>,
    state: &mut State,
) -> Result<(Vec<Link>, usize)> {
    let db = crate::store::err_in(conn);
    let mut rows: Vec<CaptureSnapshot> = Vec::new();
    let mut repo_of: BTreeMap<i64, Option<i64>> = BTreeMap::new();
    for c in archive::snapshot_captures(conn, row, state.last_capture_id).map_err(db)? {
        state.last_capture_id = state.last_capture_id.max(c.id);
        if !while_active(conn, &c).map_err(db)? {
            // What was checked out when a session long over was first read says nothing of it.
            continue;
        }
        let repo = match repo_of.get(&c.snapshot_id) {
            Some(repo) => *repo,
            None => {
                let repo = git::snapshot_repo(conn, c.snapshot_id).map_err(db)?;
                repo_of.insert(c.snapshot_id, repo);
                repo
            }
        };
        // A capture whose snapshot row is gone pairs with nothing (as the join it replaces).
        if let Some(repo) = repo {
            rows.push((c.snapshot_id, c.turn_index, c.last_ordinal, repo, c.id));
        }
    }
    let compared = rows.len();
    let mut links = Vec::new();
    let mut prev: Option<snapshot::Snapshot> =
        match state.prev_snapshot_id.filter(|_| !rows.is_empty()) {
            Some(id) => snapshot::load(conn, id).map_err(db)?,
            None => None,
        };
    let mut prev_repo = state.prev_repo_id;
    // A commit's files, decoded once per association: every branch of every snapshot can list
    // the same commits, and a commit can list thousands of files (in a large repository this
    // was most of a hook's time, growing with the session's number of captures).
    let mut files_of: HashMap<(i64, String), std::rc::Rc<Vec<String>>> = HashMap::new();
    for (snapshot_id, turn_index, ordinal, repo_row, capture) in rows {
        state.last_capture_id = state.last_capture_id.max(capture);
        let Some(cur) = snapshot::load(conn, snapshot_id).map_err(db)? else {
            continue;
        };
        let applied: Vec<&snapshot::BranchState> =
            cur.branches.iter().filter(|b| b.applied).collect();
        for b in &applied {
            links.push(Link {
                target: Target::branch(&b.name),
                evidence: Evidence::RanOnBranch,
                confidence: None,
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
                    confidence: None,
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
                // The first promoted file of each commit (the same for every branch listing it).
                let mut first_hit: HashMap<&str, Option<String>> = HashMap::new();
                for b in &cur.branches {
                    for commit in &b.new_commits {
                        let first = match first_hit.get(commit.as_str()) {
                            Some(hit) => hit.clone(),
                            None => {
                                let key = (repo_row, commit.clone());
                                let files = match files_of.get(&key) {
                                    Some(f) => f.clone(),
                                    None => {
                                        let f = std::rc::Rc::new(
                                            commit_files(conn, repo_row, commit).map_err(db)?,
                                        );
                                        files_of.insert(key, f.clone());
                                        f
                                    }
                                };
                                let hit = files
                                    .iter()
                                    .find(|f| {
                                        dirty.contains(f)
                                            && (cur.applied_count <= 1 || edited.contains(f))
                                    })
                                    .cloned();
                                first_hit.insert(commit.as_str(), hit.clone());
                                hit
                            }
                        };
                        if let Some(first) = first {
                            links.push(Link {
                                target: Target::branch(&b.name),
                                evidence: Evidence::EnvironmentPromotion,
                                confidence: None,
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
                                    confidence: None,
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
        state.prev_snapshot_id = Some(snapshot_id);
        state.prev_repo_id = Some(repo_row);
    }
    Ok((links, compared))
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

/// Add links of one origin (`None`: recomputed on every relink) to the session's, except those
/// to a target a person unlinked.
fn insert_links(
    conn: &Connection,
    row: i64,
    links: &[Link],
    origin: Option<&str>,
) -> Result<usize> {
    let db = crate::store::err_in(conn);
    let mut insert = conn
        .prepare_cached(
            "INSERT OR IGNORE INTO links (session_id, target_kind, target_key, pr_number, evidence, strong, confidence,
                turn_id, ordinal, commit_id, detail, origin)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
        )
        .map_err(db)?;
    let mut n = 0;
    for l in links {
        if super::correct::hidden(conn, row, &l.target.key, l.target.pr_number).map_err(db)? {
            continue;
        }
        n += insert
            .execute(params![
                row,
                l.target.kind.as_str(),
                l.target.key,
                l.target.pr_number,
                l.evidence.as_str(),
                l.evidence.is_strong(),
                l.confidence.unwrap_or_else(|| l.evidence.confidence()),
                match l.turn_index {
                    Some(index) => archive::turn_at(conn, row, index).map_err(db)?,
                    None => None,
                },
                l.ordinal,
                l.commit_id,
                l.detail,
                origin,
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

#[cfg(test)]
mod tests {
    use super::*;

    const DAY: i64 = 24 * 3600;

    #[test]
    fn a_window_follows_the_session_not_today() {
        let year_ago = 1_700_000_000;
        assert_eq!(
            window(year_ago, year_ago + 600),
            (year_ago - SKEW_SECS, year_ago + 600 + COMMIT_WINDOW_SECS)
        );
        // An end before the start (a disagreeing clock) still covers the start.
        assert_eq!(window(100, 50).1, 100 + COMMIT_WINDOW_SECS);
    }

    #[test]
    fn windows_close_in_time_share_a_span_and_far_ones_do_not() {
        let a = (0, 3 * DAY);
        let b = (4 * DAY, 6 * DAY);
        let far = (400 * DAY, 402 * DAY);
        assert_eq!(spans(vec![far, b, a]), vec![(0, 6 * DAY), far]);
        // Daily sessions for a month are read in spans of at most two weeks, not one.
        let daily: Vec<Span> = (0..30).map(|d| (d * DAY, d * DAY + 3 * DAY)).collect();
        let merged = spans(daily.clone());
        assert!(merged.len() > 1, "{merged:?}");
        assert!(merged.iter().all(|s| s.1 - s.0 <= MAX_SPAN_SECS));
        // Every window lies inside one span.
        for w in daily {
            assert!(merged.iter().any(|s| s.0 <= w.0 && w.1 <= s.1), "{w:?}");
        }
        // One window longer than a span is its own span.
        assert_eq!(spans(vec![(0, 60 * DAY)]), vec![(0, 60 * DAY)]);
    }
}

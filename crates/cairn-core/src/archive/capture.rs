//! The one capture pipeline behind `cairn hook`, `cairn sync` and the desktop watcher.
//!
//! Reading and writing are split. A *reader* ([`read_file`]) decides how much of a file is new
//! (unchanged / append from the stored byte offset / re-read because the file was truncated or
//! rewritten), redacts each new line, parses it with the agent's adapter and emits [`Batch`]es
//! of bounded size. The *writer* ([`Writer::commit`]) stores one batch in one transaction:
//! records (deduplicated by record hash), turns, token usage, findings, warnings, the retained
//! copy and the new reading position, all or nothing.
//!
//! Several processes may capture at once (a hook per agent turn, a sync, the desktop app). Every
//! commit happens under the cross-process capture lock and checks that the file's stored
//! position is still the one the batch was read from; a batch that lost that race is dropped
//! and the file is read again. So a capture killed at any point leaves the archive as if the
//! last committed batch was the end of the file, and the next run carries on from there.
//!
//! Here: the batch and its parts, the capture lock (`holder`: who holds it), and the
//! orchestration (readers in parallel, one writer, group commit). Each read kind has its file
//! (`lines`, `document`, `tree`, `database`, with `batch` for what they share and `keyed` for
//! keyed units); the writer is `write`, the turns it builds `turns`; `reindex` reads the
//! retained copies again.

mod batch;
mod database;
mod document;
mod holder;
mod keyed;
mod lines;
pub(crate) mod reindex;
#[cfg(test)]
mod testing;
mod tree;
mod turns;
mod write;

use std::collections::{BTreeMap, HashSet};
use std::fs::{self, File};
use std::path::{Path, PathBuf};
use std::sync::mpsc;

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use super::discover::FoundFile;
use super::redact::Finding;
use super::retain::Retained;
use super::sources::{FileRole, LineOutput, SessionMeta};
use super::store::{Positions, SourceState, Store};
use super::{Agent, Record, TokenUsage};
use crate::error::{Error, Result};

pub(crate) use batch::mtime_ns;
use batch::{
    file_warning, finish_batch, is_full, locate, new_batch, revision_of, take_full, take_unread,
};
pub use holder::LockHolder;
use lines::{parse_into, read_file, take_output};
use turns::{TurnWriter, preview_of, prompt_preview};
use write::{Commit, Writer, commit_in};

/// A batch is committed once it holds this many bytes of input.
const BATCH_BYTES: u64 = 4 * 1024 * 1024;
/// A read by units (a database session, a document, a tree) hands a batch to the writer after
/// the unit that brings it to this many records or [`BATCH_BYTES`] of retained rows, so one
/// long session is never one unbounded commit.
const BATCH_RECORDS: usize = 2_000;
/// The mtime the reading position of a document or a tree session says while a read of it is
/// under way (a batch but the last stores it, with size 0): no file has it, so the next sync
/// reads the source again and retention does not count the file as captured.
const UNREAD_MTIME: i64 = i64::MIN;
/// A sync commits what the readers have queued, up to this many bytes of input, at once.
const GROUP_BYTES: u64 = 32 * 1024 * 1024;
/// A sync's group holds at least this many bytes of input while the readers still send. Each
/// commit writes the full-text index's pending terms as a new segment, and segments are merged
/// as they pile up: committing every small batch on arrival (each session of a database, many
/// small files) made the index's flushing and merging half of the writer's work.
const MIN_GROUP_BYTES: u64 = 8 * 1024 * 1024;
/// Stored turn previews are cut here (agentlog's stored preview length).
const PREVIEW_CHARS: usize = 320;

/// What started a capture (recorded on each capture batch).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Trigger {
    Hook,
    Sync,
    /// A reindex stores again, from the retained copies, what captures stored before: it
    /// records no capture batch of its own (a batch is what an environment snapshot is
    /// attached to, and none was taken when those lines were written).
    Reindex,
}

impl Trigger {
    fn as_str(self) -> &'static str {
        match self {
            Trigger::Hook => "hook",
            Trigger::Sync | Trigger::Reindex => "sync",
        }
    }
}

/// A problem with one file or line. Reported, never fatal to the rest of the capture.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct Warning {
    pub path: String,
    /// 1-based line number in the file, when the problem is a line.
    pub line: Option<u32>,
    pub message: String,
}

impl Warning {
    /// A warning about the file at `path` as a whole, the path as the archive keeps it
    /// ([`super::store::at_rest`]: a secret in a folder's name is not printed either).
    pub(crate) fn of_file(path: &Path, message: String) -> Warning {
        Warning {
            path: super::store::at_rest(&path.display().to_string()).into_owned(),
            line: None,
            message,
        }
    }
}

/// What a sync or hook did.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct SyncReport {
    pub files_scanned: u32,
    /// Transcript files found that a forget keeps out (a tombstone): not read, though they
    /// are still on disk and may have grown.
    pub forgotten_skipped: u32,
    /// New sessions as `cairn sessions` lists them: sub-agents and compactions are not.
    pub sessions_added: u32,
    /// New sub-agent and compaction sessions (listed under their parent).
    pub subagents_added: u32,
    pub sessions_updated: u32,
    pub records_added: u32,
    /// Keyed records whose content changed in place (an agent rewrote a message).
    pub records_updated: u32,
    /// A count (a number in TypeScript, exact below 2^53).
    #[cfg_attr(feature = "specta", specta(type = f64))]
    pub bytes_read: u64,
    pub warnings: Vec<Warning>,
    /// The agents that delete their own transcripts, as the sync left them (a sync only).
    pub retention: Vec<crate::archive::retention::RetentionCheck>,
    /// One line when any of them deletes transcripts Cairn has not captured within 7 days,
    /// with the command that captures them ([`crate::archive::retention::warning`]).
    pub retention_warning: Option<String>,
    /// The files read for the first time that hold no record Cairn reads (`{}` alone, a
    /// summary line alone), as the archive keeps their paths: their sessions are in no list,
    /// so they are named here rather than counted as new.
    pub nothing_to_read: Vec<String>,
    /// The counts above by agent (as the lists name it), one per agent the sync changed
    /// anything of, by agent name.
    pub agents: Vec<AgentSync>,
    /// What the staleness check run after the capture flagged (Recall entries citing a file a
    /// commit since changed); absent when it flagged nothing.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stale_flagged: Option<StaleFlagged>,
}

/// What a staleness check flagged (the Recall room's check, which the facade runs after a
/// sync's capture and reports here; defined on this floor so the report it rides in needs
/// nothing above it), by what each entry was before: a trusted entry flagged stale leaves
/// service and waits for a person again, while one nobody had vouched for yet was in the inbox
/// already and only gains the mark. Said apart, so "3 flagged" never hides that a served note
/// was taken back (or that none was).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename = "Flagged")]
pub struct StaleFlagged {
    /// Entries that were trusted (served to agents): no longer served, back in the inbox.
    pub trusted: u32,
    /// Entries already waiting for review (unreviewed, or reviewed but not trusted), now
    /// marked stale too.
    pub untrusted: u32,
}

/// What a sync changed of one agent's sessions: its part of [`SyncReport`]'s counts.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct AgentSync {
    pub agent: Agent,
    pub sessions_added: u32,
    pub subagents_added: u32,
    pub sessions_updated: u32,
    pub records_added: u32,
    pub records_updated: u32,
}

impl AgentSync {
    fn new(agent: Agent) -> AgentSync {
        AgentSync {
            agent,
            sessions_added: 0,
            subagents_added: 0,
            sessions_updated: 0,
            records_added: 0,
            records_updated: 0,
        }
    }

    fn absorb(&mut self, more: &AgentSync) {
        self.sessions_added += more.sessions_added;
        self.subagents_added += more.subagents_added;
        self.sessions_updated += more.sessions_updated;
        self.records_added += more.records_added;
        self.records_updated += more.records_updated;
    }
}

impl SyncReport {
    /// Add what a further capture of the same sync read (its counts and warnings).
    pub fn absorb(&mut self, more: SyncReport) {
        self.files_scanned += more.files_scanned;
        self.forgotten_skipped += more.forgotten_skipped;
        self.sessions_added += more.sessions_added;
        self.subagents_added += more.subagents_added;
        self.sessions_updated += more.sessions_updated;
        self.records_added += more.records_added;
        self.records_updated += more.records_updated;
        self.bytes_read += more.bytes_read;
        self.warnings.extend(more.warnings);
        self.nothing_to_read.extend(more.nothing_to_read);
        for theirs in more.agents {
            match self.agents.iter_mut().find(|a| a.agent == theirs.agent) {
                Some(ours) => ours.absorb(&theirs),
                None => self.agents.push(theirs),
            }
        }
        self.agents.sort_by_key(|a| a.agent.as_str());
    }

    /// Whether the archive changed: a session or a record arrived, or a session grew.
    pub fn changed(&self) -> bool {
        self.records_added > 0
            || self.records_updated > 0
            || self.sessions_added > 0
            || self.subagents_added > 0
            || self.sessions_updated > 0
    }
}

/// Progress of a long capture, reported in bytes of transcript read.
pub trait Progress: Sync {
    fn start(&self, _files: u64, _bytes: u64) {}
    fn advance(&self, _bytes: u64) {}
    fn finish(&self) {}
    /// Another process holds the capture lock (`lock`, the file; [`LockHolder::of`] names
    /// that process where the system says): the work waits for it
    /// ([`CaptureLock::lock_telling`]). Said before each wait, so a wait is never silent.
    fn waiting(&self, _lock: &Path) {}
}

/// No progress reporting.
pub struct Quiet;
impl Progress for Quiet {}

/// The cross-process capture lock: `<data>/capture.lock`, an advisory exclusive file lock.
/// Other one-at-a-time work of a data dir takes a lock file of its own the same way
/// ([`CaptureLock::open_named`]: `extract.lock`).
pub struct CaptureLock {
    file: File,
    path: PathBuf,
}

impl CaptureLock {
    pub fn open(data_dir: &Path) -> Result<CaptureLock> {
        CaptureLock::open_named(data_dir, "capture.lock")
    }

    /// The lock file `name` in `data_dir` (created 0600 when missing).
    pub(crate) fn open_named(data_dir: &Path, name: &str) -> Result<CaptureLock> {
        let path = data_dir.join(name);
        let file = crate::private::open_options()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(|e| Error::write_in(data_dir, &path, e))?;
        Ok(CaptureLock { file, path })
    }

    /// Block until this process holds the lock; released when the guard drops.
    pub fn lock(&self) -> Result<LockGuard<'_>> {
        self.file.lock().map_err(|e| Error::Write {
            path: self.path.clone(),
            source: e,
        })?;
        Ok(LockGuard { file: &self.file })
    }

    /// [`Self::lock`], telling `progress` first when another process holds the lock (a sync
    /// stopped with Ctrl-Z holds it until it goes on or ends: a person waits for something named).
    pub fn lock_telling(&self, progress: &dyn Progress) -> Result<LockGuard<'_>> {
        match self.file.try_lock() {
            Ok(()) => return Ok(LockGuard { file: &self.file }),
            Err(std::fs::TryLockError::WouldBlock) => progress.waiting(&self.path),
            Err(std::fs::TryLockError::Error(e)) => {
                return Err(Error::Write {
                    path: self.path.clone(),
                    source: e,
                });
            }
        }
        self.lock()
    }

    /// Take the lock, waiting at most `wait` for another process to release it, else
    /// [`Error::Locked`] saying `what` is running there. The wait is the kernel's (a thread
    /// blocks on a second handle of the file), so waiters take turns as with [`Self::lock`]; a
    /// lock that thread gets after the wait ended is let go at once.
    pub(crate) fn lock_within(
        &self,
        data_dir: &Path,
        what: &str,
        wait: std::time::Duration,
    ) -> Result<LockGuard<'_>> {
        let write_err = |e| Error::Write {
            path: self.path.clone(),
            source: e,
        };
        let handle = self.file.try_clone().map_err(write_err)?;
        // A rendezvous: the lock is handed over only to a waiter still there.
        let (tx, rx) = std::sync::mpsc::sync_channel::<std::io::Result<()>>(0);
        std::thread::spawn(move || {
            let taken = handle.lock();
            let ok = taken.is_ok();
            if tx.send(taken).is_err() && ok {
                let _ = handle.unlock();
            }
        });
        match rx.recv_timeout(wait) {
            Ok(taken) => {
                taken.map_err(write_err)?;
                Ok(LockGuard { file: &self.file })
            }
            Err(_) => Err(Error::Locked {
                what: what.to_owned(),
                dir: data_dir.to_owned(),
                path: self.path.clone(),
            }),
        }
    }

    /// The lock for a person's write that a rebuild from the copies must neither lose nor
    /// undo (a forget, a lift of its tombstones, a link correction): the rebuild holds it from
    /// its first read of the old database to its swap, so the write lands before the rebuild
    /// reads or after the swap, in the new database. With `waiting` to tell, the wait lasts as
    /// long as the other process's work and is said first ([`Self::lock_telling`]); without
    /// (a front door with no stream to say it on), it ends after `wait` in [`Error::Locked`]
    /// naming what holds the lock, never a silent hang.
    pub(crate) fn lock_for_person(
        &self,
        data_dir: &Path,
        waiting: Option<&dyn Progress>,
        wait: std::time::Duration,
    ) -> Result<LockGuard<'_>> {
        match waiting {
            Some(progress) => self.lock_telling(progress),
            None => self.lock_within(data_dir, "a capture or a reindex", wait),
        }
    }

    /// Take the lock if no other process holds it, else [`Error::Locked`] saying `what` is
    /// running there.
    pub(crate) fn try_lock(&self, data_dir: &Path, what: &str) -> Result<LockGuard<'_>> {
        match self.file.try_lock() {
            Ok(()) => Ok(LockGuard { file: &self.file }),
            Err(std::fs::TryLockError::WouldBlock) => Err(Error::Locked {
                what: what.to_owned(),
                dir: data_dir.to_owned(),
                path: self.path.clone(),
            }),
            Err(std::fs::TryLockError::Error(e)) => Err(Error::Write {
                path: self.path.clone(),
                source: e,
            }),
        }
    }
}

pub struct LockGuard<'a> {
    file: &'a File,
}

impl Drop for LockGuard<'_> {
    fn drop(&mut self) {
        let _ = self.file.unlock();
    }
}

// ---- reading -----------------------------------------------------------------------------------

/// What the store held for a file when the batch was read: the writer checks it still does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Base {
    existed: bool,
    byte_offset: u64,
    generation: u32,
}

#[derive(Debug)]
struct LineRecord {
    line_no: u64,
    hash: String,
    /// A keyed record's digest of its stored fields (see [`revision_of`]); `None` for records
    /// identified by their line.
    revision: Option<String>,
    record: Record,
    /// `record.tool_input` and `record.file_paths` as stored JSON (serialised by the reader).
    tool_input: Option<String>,
    file_paths: Option<String>,
}

/// Who a batch's session is.
#[derive(Debug, Clone)]
struct Identity {
    session_key: String,
    session_id: Option<String>,
    parent_key: Option<String>,
    relation: Option<String>,
    agent_id: Option<String>,
}

/// A bounded slice of one file, read and parsed, ready to commit.
#[derive(Debug)]
pub(crate) struct Batch {
    agent: Agent,
    role: FileRole,
    path: String,
    source_key: String,
    base: Base,
    generation: u32,
    retained: Vec<u8>,
    changed: Vec<(u64, String)>,
    /// `retained` and `changed` encoded for the retained copy (done by the reader).
    encoded: Vec<u8>,
    records: Vec<LineRecord>,
    /// What happened to keyed units, in order with the records: each applies before the
    /// record at its index (`records.len()` at the time it was read).
    unit_events: Vec<(usize, UnitEvent)>,
    usage: Vec<(String, TokenUsage)>,
    findings: Vec<(u64, Finding)>,
    warnings: Vec<(Option<u64>, String)>,
    identity: Identity,
    meta: SessionMeta,
    project: Option<String>,
    size: u64,
    mtime_ns: i64,
    /// The newest mtime of the files read beside a line transcript ([`SourceState`]'s), when
    /// this read looked at them; `None` keeps the stored one.
    sidecar_mtime_ns: Option<i64>,
    byte_offset: u64,
    line_count: u64,
    first_line_hash: Option<String>,
    last_line_start: Option<u64>,
    last_line_hash: Option<String>,
    parser_state: String,
    bytes: u64,
}

/// A change to a keyed unit that is not one of its records.
#[derive(Debug)]
enum UnitEvent {
    /// The agent dropped the unit (a rewind, a message gone from a rewritten document).
    Retract(String),
    /// The unit was read whole: its records not among these hashes are gone from it.
    Version(String, Vec<String>),
}

/// What a reader sends to the writer.
pub(crate) enum Msg {
    Batch(Box<Batch>),
    Warning(Warning),
}

/// Read what is new in one source, by its read kind, and hand its batches to `emit` (which
/// returns `false` to stop). `prior_of` gives the stored reading position of a source path: the
/// file's own, or for a database, each of its sessions' ([`database::session_path`]).
pub(crate) fn read_source<'s>(
    file: &FoundFile,
    prior_of: &dyn Fn(&str) -> Option<&'s SourceState>,
    sessions_of: &dyn Fn(&str) -> Vec<&'s SourceState>,
    force_reread: bool,
    emit: &mut dyn FnMut(Msg) -> bool,
) {
    use super::sources::ReadKind;
    let own = || {
        fs::canonicalize(&file.path)
            .ok()
            .and_then(|p| prior_of(p.to_string_lossy().as_ref()))
    };
    match super::sources::read_kind(file) {
        ReadKind::Lines => read_file(file, own(), force_reread, emit),
        ReadKind::Document => document::read_document(file, own(), force_reread, emit),
        ReadKind::Tree => tree::read_tree(file, own(), force_reread, emit),
        ReadKind::Database => {
            database::read_database(file, prior_of, sessions_of, force_reread, emit)
        }
    }
}

/// The stored reading positions `file` needs: its own, or every session's of a database.
fn prior_states(store: &Store, file: &FoundFile) -> Result<Positions> {
    let Ok(canonical) = fs::canonicalize(&file.path) else {
        return Ok(Positions::default());
    };
    let key = canonical.to_string_lossy().into_owned();
    if super::sources::read_kind(file) == super::sources::ReadKind::Database {
        return store.database_source_states(&key);
    }
    Ok(store.source_state(&key)?.into_iter().collect())
}

// ---- orchestration -----------------------------------------------------------------------------

/// Sessions a capture added records to, and the capture batches it stored: what the git
/// snapshot is attached to and association is recomputed for.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Touched {
    pub sessions: Vec<i64>,
    pub captures: Vec<i64>,
}

/// Accumulates a report over many commits. Sessions are told apart by their row, not their
/// key: a file read before it names its session (a first line skipped as too long) makes a
/// session keyed by its path, which the commit that reads the name re-keys in place; by key,
/// that one new session counted as an added sub-agent and an updated session.
#[derive(Default)]
struct Tally {
    report: SyncReport,
    added: HashSet<i64>,
    updated: HashSet<i64>,
    /// Records added and updated, by session row: summed by agent at the end.
    records: BTreeMap<i64, (u32, u32)>,
    touched: Touched,
}

impl Tally {
    fn commit(&mut self, c: Commit, bytes: u64) {
        if let Commit::Done {
            session_key: _,
            session_row,
            session_created,
            first_records,
            records_added,
            records_updated,
            new_warnings,
            capture_id,
        } = c
        {
            if let Some(id) = capture_id {
                self.touched.captures.push(id);
                if !self.touched.sessions.contains(&session_row) {
                    self.touched.sessions.push(session_row);
                }
            }
            self.report.records_added += records_added;
            self.report.records_updated += records_updated;
            let of_row = self.records.entry(session_row).or_default();
            of_row.0 += records_added;
            of_row.1 += records_updated;
            self.report.bytes_read += bytes;
            self.report.warnings.extend(new_warnings);
            // A session that had held no record is new to a person when its first arrive
            // (its file was first read empty, in an earlier sync or this one): the lists
            // showed nothing of it before.
            if session_created || first_records {
                self.updated.remove(&session_row);
                self.added.insert(session_row);
            } else if (records_added > 0 || records_updated > 0)
                && !self.added.contains(&session_row)
            {
                self.updated.insert(session_row);
            }
        }
    }

    /// The report of `files` read, `forgotten` more found and kept out by a forget.
    fn finish(
        mut self,
        conn: &rusqlite::Connection,
        files: usize,
        forgotten: usize,
    ) -> Result<(SyncReport, Touched)> {
        self.report.files_scanned = u32::try_from(files).unwrap_or(u32::MAX);
        self.report.forgotten_skipped = u32::try_from(forgotten).unwrap_or(u32::MAX);
        // Counted once every file is in: a sub-agent read before its parent is listed on its
        // own until then. A session added and then folded into the one its file named is
        // gone, and not counted; one that holds no record is listed nowhere, and its file is
        // named instead.
        let db = crate::store::err_in(conn);
        let listed = super::store::count_listed(conn, self.added.iter().copied()).map_err(&db)?;
        let count = |rows: &[i64]| u32::try_from(rows.len()).unwrap_or(u32::MAX);
        self.report.sessions_added = count(&listed.listed);
        self.report.subagents_added = count(&listed.others);
        self.report.sessions_updated = u32::try_from(self.updated.len()).unwrap_or(u32::MAX);
        self.report.nothing_to_read = listed.empty;
        // By agent: every row that changed, under the agent the lists name it by.
        let rows: Vec<i64> = self.records.keys().copied().collect();
        let agents = super::store::listed_agents(conn, &rows).map_err(&db)?;
        let mut by_agent: BTreeMap<&'static str, AgentSync> = BTreeMap::new();
        let mut add = |row: i64, count: &dyn Fn(&mut AgentSync)| {
            if let Some(&agent) = agents.get(&row) {
                count(
                    by_agent
                        .entry(agent.as_str())
                        .or_insert_with(|| AgentSync::new(agent)),
                );
            }
        };
        for &row in &listed.listed {
            add(row, &|a| a.sessions_added += 1);
        }
        for &row in &listed.others {
            add(row, &|a| a.subagents_added += 1);
        }
        for &row in &self.updated {
            add(row, &|a| a.sessions_updated += 1);
        }
        for (&row, &(added, updated)) in &self.records {
            add(row, &|a| {
                a.records_added += added;
                a.records_updated += updated;
            });
        }
        self.report.agents = by_agent
            .into_values()
            .filter(|a| {
                a.sessions_added
                    + a.subagents_added
                    + a.sessions_updated
                    + a.records_added
                    + a.records_updated
                    > 0
            })
            .collect();
        // In the files' order, not the parallel readers' (a stable sort keeps a file's own).
        self.report
            .warnings
            .sort_by(|a, b| (&a.path, a.line).cmp(&(&b.path, b.line)));
        Ok((self.report, self.touched))
    }
}

/// How long a hook waits for other captures (hooks of other sessions, a sync's commits) to
/// let it have the lock: the agent waits on its hook. A capture the hook gives up is made by
/// the next hook or sync (the file stays).
const HOOK_LOCK_WAIT: std::time::Duration = std::time::Duration::from_secs(10);

/// Capture a few files in this thread, holding the lock throughout (the hook path, which
/// waits at most [`HOOK_LOCK_WAIT`] for it: [`Error::Locked`] after that).
pub(crate) fn capture_files(
    store: &mut Store,
    data_dir: &Path,
    files: &[FoundFile],
    trigger: Trigger,
) -> Result<(SyncReport, Touched)> {
    let lock = CaptureLock::open(data_dir)?;
    let _guard = match trigger {
        Trigger::Hook => lock.lock_within(data_dir, "another capture", HOOK_LOCK_WAIT)?,
        Trigger::Sync | Trigger::Reindex => lock.lock()?,
    };
    // A rebuild swapped a new database in while this one waited for the lock (it holds the
    // lock across its swap): nothing has been read from this connection yet, so the capture
    // carries on in the new one.
    if store.moved() {
        *store = store.reopened()?;
    }
    let mut tally = Tally::default();
    let kept = super::forget::not_forgotten(store.conn(), files).map_err(|e| store.err(e))?;
    for file in &kept {
        capture_one_locked(store, data_dir, file, trigger, &mut tally)?;
    }
    tally.finish(store.conn(), kept.len(), files.len() - kept.len())
}

fn capture_one_locked(
    store: &mut Store,
    data_dir: &Path,
    file: &FoundFile,
    trigger: Trigger,
    tally: &mut Tally,
) -> Result<()> {
    let mut force = false;
    // Under the lock a conflict can only come from a writer that ignores it; retry a few times.
    for _ in 0..3 {
        let states = prior_states(store, file)?;
        let mut writer = Writer::new(store, data_dir, trigger);
        let mut outcome: Result<Option<Commit>> = Ok(None);
        // `states` holds this file's positions alone (every session's, for a database).
        let sessions_of = |_: &str| states.values().collect::<Vec<_>>();
        read_source(
            file,
            &|p| states.get(p),
            &sessions_of,
            force,
            &mut |msg| match msg {
                Msg::Warning(w) => {
                    if writer.is_news(&w) {
                        tally.report.warnings.push(w);
                    }
                    true
                }
                Msg::Batch(batch) => match writer.commit(&batch) {
                    Ok(c @ (Commit::Conflict | Commit::Reread)) => {
                        outcome = Ok(Some(c));
                        false
                    }
                    Ok(done) => {
                        tally.commit(done, batch.bytes);
                        true
                    }
                    Err(err) => {
                        outcome = Err(err);
                        false
                    }
                },
            },
        );
        match outcome? {
            None => return Ok(()),
            Some(Commit::Reread) => force = true,
            Some(_) => {}
        }
    }
    Ok(())
}

/// The files of a sync as the readers take them, each job read by one reader in its order: a
/// file alone, except the files of an agent whose conversation goes on from one file into the
/// next (a source that loads its file whole: Visual Studio's traces, one file per run of the
/// IDE), read one after the other in the order of their names (which begin with the run's time),
/// so a conversation's records are stored in the order it had them.
fn reading_jobs(files: &[FoundFile]) -> Vec<Vec<usize>> {
    let mut chained: BTreeMap<Agent, Vec<usize>> = BTreeMap::new();
    let mut jobs = Vec::new();
    for (i, file) in files.iter().enumerate() {
        let loaded = super::sources::read_kind(file) == super::sources::ReadKind::Database
            && super::sources::database::source_for(file.agent).is_some_and(|s| s.loaded());
        if loaded {
            chained.entry(file.agent).or_default().push(i);
        } else {
            jobs.push(vec![i]);
        }
    }
    for mut job in chained.into_values() {
        job.sort_by(|a, b| files[*a].path.cmp(&files[*b].path));
        // First, so the longest job does not start last.
        jobs.insert(0, job);
    }
    jobs
}

/// Capture many files: parsed in parallel, committed by this thread in file order per file.
pub fn capture_many(
    store: &mut Store,
    data_dir: &Path,
    files: &[FoundFile],
    trigger: Trigger,
    progress: &dyn Progress,
) -> Result<(SyncReport, Touched)> {
    let kept = super::forget::not_forgotten(store.conn(), files).map_err(|e| store.err(e))?;
    let forgotten = files.len() - kept.len();
    let files = kept.as_slice();
    let states = store.all_source_states()?;
    let total_bytes: u64 = files
        .iter()
        .map(|f| {
            let size = fs::metadata(&f.path).map_or(0, |m| m.len());
            let done = fs::canonicalize(&f.path)
                .ok()
                .and_then(|p| {
                    states
                        .get(p.to_string_lossy().as_ref())
                        .map(|s| s.byte_offset)
                })
                .unwrap_or(0);
            size.saturating_sub(done)
        })
        .sum();
    progress.start(files.len() as u64, total_bytes);

    store.forget_filled_empty_files()?;
    let lock = CaptureLock::open(data_dir)?;
    let mut tally = Tally::default();
    let mut retry: Vec<FoundFile> = Vec::new();
    let (tx, rx) = mpsc::sync_channel::<(usize, Msg)>(16);
    let mut first_error: Option<Error> = None;
    // The positions of a database's sessions (`<database>#<session>`), asked for by a source
    // that loads its file whole; a scan, made once per such file.
    let sessions_of = |db: &str| states.sessions_of(db);
    std::thread::scope(|scope| {
        let states = &states;
        let sessions_of = &sessions_of;
        let jobs = reading_jobs(files);
        scope.spawn(move || {
            jobs.par_iter().for_each_with(tx, |tx, job| {
                for &i in job {
                    let mut going = true;
                    read_source(
                        &files[i],
                        &|p| states.get(p),
                        sessions_of,
                        false,
                        &mut |msg| {
                            going = tx.send((i, msg)).is_ok();
                            going
                        },
                    );
                    if !going {
                        return;
                    }
                }
            });
        });
        // Freeing a committed group (its records, its retained bytes) is left to a thread of its
        // own: the writer bounds the sync's wall time, the other cores do not.
        let (done_tx, done_rx) = mpsc::sync_channel::<Vec<(usize, Box<Batch>)>>(2);
        scope.spawn(move || done_rx.into_iter().for_each(drop));
        // Checked under the lock before each group (a rebuild holds it across its swap): the
        // positions and sessions this sync read are the old database's, so a swap meanwhile
        // ends it with [`Error::Rebuilt`] before anything is written, and it is run again.
        let opened = store.opened();
        let mut writer = Writer::new(store, data_dir, trigger);
        let mut skip: HashSet<usize> = HashSet::new();
        // Group commit: take what the readers have queued (up to GROUP_BYTES of input) and
        // store it in one transaction.
        while let Ok(first) = rx.recv() {
            let mut group: Vec<(usize, Box<Batch>)> = Vec::new();
            let mut pending = Some(first);
            let mut bytes = 0u64;
            loop {
                match pending.take() {
                    Some((_, Msg::Warning(w))) if writer.is_news(&w) => {
                        tally.report.warnings.push(w);
                    }
                    Some((_, Msg::Warning(_))) | None => {}
                    Some((i, Msg::Batch(batch))) => {
                        progress.advance(batch.bytes);
                        bytes += batch.bytes;
                        if !skip.contains(&i) {
                            group.push((i, batch));
                        }
                    }
                }
                if bytes >= GROUP_BYTES {
                    break;
                }
                // Below MIN_GROUP_BYTES the group waits for the readers' next batch (until they
                // are done): see there.
                let next = if bytes < MIN_GROUP_BYTES {
                    rx.recv().ok()
                } else {
                    rx.try_recv().ok()
                };
                match next {
                    Some(next) => pending = Some(next),
                    None => break,
                }
            }
            if group.is_empty() || first_error.is_some() {
                continue;
            }
            let batches: Vec<&Batch> = group.iter().map(|(_, b)| b.as_ref()).collect();
            let committed = lock.lock_telling(progress).and_then(|_guard| {
                opened.still_current()?;
                writer.commit_group(&batches)
            });
            match committed {
                Ok(results) => {
                    for ((i, batch), result) in group.iter().zip(results) {
                        match result {
                            Commit::Conflict | Commit::Reread => {
                                if skip.insert(*i) {
                                    retry.push(files[*i].clone());
                                }
                            }
                            done => tally.commit(done, batch.bytes),
                        }
                    }
                }
                Err(err) => first_error = Some(err),
            }
            let _ = done_tx.send(group);
        }
    });
    if let Some(err) = first_error {
        return Err(err);
    }
    if !retry.is_empty() {
        let _guard = lock.lock_telling(progress)?;
        store.still_current()?;
        for file in &retry {
            capture_one_locked(store, data_dir, file, trigger, &mut tally)?;
        }
    }
    progress.finish();
    tally.finish(store.conn(), files.len(), forgotten)
}

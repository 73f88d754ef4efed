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

mod database;
mod document;
mod keyed;
pub(crate) mod reindex;
#[cfg(test)]
mod testing;
mod tree;

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::fs::{self, File};
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::mpsc;

use rayon::prelude::*;
use rusqlite::{OptionalExtension, TransactionBehavior, params};
use serde::{Deserialize, Serialize};

use super::discover::FoundFile;
use super::jsonl::{Line, LineReader};
use super::redact::{Finding, Redactor};
use super::retain::{Appended, Retained};
use super::sources::{FileRole, LineIdentity, LineOutput, SessionMeta, parser_for_file};
use super::store::{SourceState, Store};
use super::{Agent, PromptSource, Record, RecordKind, TokenUsage, ToolKind};
use crate::error::{Error, Result};
use crate::keys;
use crate::store::db_err;

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

/// What a sync or hook did.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct SyncReport {
    pub files_scanned: u32,
    pub sessions_added: u32,
    pub sessions_updated: u32,
    pub records_added: u32,
    /// Keyed records whose content changed in place (an agent rewrote a message).
    pub records_updated: u32,
    pub bytes_read: f64,
    pub warnings: Vec<Warning>,
    /// The agents that delete their own transcripts, as the sync left them (a sync only).
    pub retention: Vec<crate::archive::retention::RetentionCheck>,
    /// One line when any of them deletes transcripts Cairn has not captured within 7 days,
    /// with the command that captures them ([`crate::archive::retention::warning`]).
    pub retention_warning: Option<String>,
}

impl SyncReport {
    /// Whether the archive changed: a session or a record arrived, or a session grew.
    pub fn changed(&self) -> bool {
        self.records_added > 0
            || self.records_updated > 0
            || self.sessions_added > 0
            || self.sessions_updated > 0
    }
}

/// Progress of a long capture, reported in bytes of transcript read.
pub trait Progress: Sync {
    fn start(&self, _files: u64, _bytes: u64) {}
    fn advance(&self, _bytes: u64) {}
    fn finish(&self) {}
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

/// How much of a file must be read.
enum Plan {
    Unchanged,
    From {
        offset: u64,
        line_count: u64,
        state: Option<String>,
        generation: u32,
    },
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
fn prior_states(store: &Store, file: &FoundFile) -> Result<HashMap<String, SourceState>> {
    let Ok(canonical) = fs::canonicalize(&file.path) else {
        return Ok(HashMap::new());
    };
    let key = canonical.to_string_lossy().into_owned();
    if super::sources::read_kind(file) == super::sources::ReadKind::Database {
        return Ok(store
            .database_source_states(&key)?
            .into_iter()
            .map(|s| (s.path.clone(), s))
            .collect());
    }
    Ok(store
        .source_state(&key)?
        .map(|s| (s.path.clone(), s))
        .into_iter()
        .collect())
}

/// The most of a compressed rollout read (Codex's are far smaller; the rest is warned of).
const MAX_DECOMPRESSED: u64 = 4 << 30;

/// A reader that gives at most `left` bytes of `inner`, and marks `cut` when `inner` held more
/// (a few bytes of zstd can stand for terabytes).
struct Capped<R> {
    inner: R,
    left: u64,
    cut: std::rc::Rc<std::cell::Cell<bool>>,
}

impl<R: Read> Read for Capped<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.left == 0 {
            if !self.cut.get() && self.inner.read(&mut [0u8])? > 0 {
                self.cut.set(true);
            }
            return Ok(0);
        }
        let want = buf
            .len()
            .min(usize::try_from(self.left).unwrap_or(usize::MAX));
        let n = self.inner.read(&mut buf[..want])?;
        self.left -= n as u64;
        Ok(n)
    }
}

/// `bytes` for a person: whole GiB or MiB when it is one, else bytes.
fn size_text(bytes: u64) -> String {
    match bytes {
        b if b >= 1 << 30 && b % (1 << 30) == 0 => format!("{} GiB", b >> 30),
        b if b >= 1 << 20 && b % (1 << 20) == 0 => format!("{} MiB", b >> 20),
        b => crate::text::plural(b, "byte"),
    }
}

/// Read the new part of a line file and hand its batches to `emit` (which returns `false` to
/// stop). A compressed one (`.jsonl.zst`: Codex compresses a rollout a week old) is read whole
/// through its decoder, at most [`MAX_DECOMPRESSED`] of it.
fn read_file(
    file: &FoundFile,
    prior: Option<&SourceState>,
    force_reread: bool,
    emit: &mut dyn FnMut(Msg) -> bool,
) {
    read_lines(file, prior, force_reread, MAX_DECOMPRESSED, emit);
}

/// [`read_file`] reading at most `cap` bytes of a compressed file's content.
fn read_lines(
    file: &FoundFile,
    prior: Option<&SourceState>,
    force_reread: bool,
    cap: u64,
    emit: &mut dyn FnMut(Msg) -> bool,
) {
    let warn = |message: String| file_warning(file, message);
    let Some((canonical, size, mtime_ns)) = locate(file, emit) else {
        return;
    };
    let path_str = canonical.to_string_lossy().into_owned();
    // A compressed rollout is written once, whole: read it whole when it is new or changed.
    let compressed = super::sources::is_compressed(&canonical);
    if compressed
        && !force_reread
        && prior.is_some_and(|p| p.size == size && p.mtime_ns == mtime_ns)
    {
        return;
    }
    let force_reread = force_reread || (compressed && prior.is_some());
    let sidecar_mtime_ns = sidecar_stamp(file);
    let sidecars_moved =
        sidecar_mtime_ns.is_some_and(|s| prior.is_some_and(|p| p.sidecar_mtime_ns != s));
    let plan = match plan(
        &canonical,
        prior,
        (size, mtime_ns, sidecars_moved),
        force_reread,
    ) {
        Ok(p) => p,
        Err(e) => {
            emit(warn(format!("cannot read: {e}")));
            return;
        }
    };
    let Plan::From {
        offset,
        line_count,
        state,
        generation,
    } = plan
    else {
        return;
    };
    let base = Base {
        existed: prior.is_some(),
        byte_offset: prior.map_or(0, |p| p.byte_offset),
        generation: prior.map_or(0, |p| p.generation),
    };
    let saved = state.as_deref().and_then(|s| serde_json::from_str(s).ok());
    let mut parser = match parser_for_file(file, saved.as_ref()) {
        Ok(p) => p,
        // A state written by an incompatible build: read the file again from the start.
        Err(_) => {
            return read_lines(file, prior, true, cap, emit);
        }
    };
    let cut = std::rc::Rc::new(std::cell::Cell::new(false));
    let handle = File::open(&canonical).and_then(|mut f| -> std::io::Result<Box<dyn Read>> {
        if compressed {
            return Ok(Box::new(Capped {
                inner: zstd::stream::read::Decoder::new(f)?,
                left: cap,
                cut: cut.clone(),
            }));
        }
        f.seek(SeekFrom::Start(offset))?;
        Ok(Box::new(f))
    });
    let handle = match handle {
        Ok(h) => h,
        Err(e) => {
            emit(warn(format!("cannot read: {e}")));
            return;
        }
    };
    let source_key = prior
        .map(|p| p.source_key.clone())
        .unwrap_or_else(|| keys::source_key(file.agent, &canonical));
    let redactor = Redactor::global();
    let line_identity = super::sources::line_identity(file.agent);
    let mut reader = LineReader::new(handle, offset);
    if !super::sources::lines_are_json(file.agent) {
        reader = reader.whole_lines_only();
    }
    let mut line_no = line_count;
    let mut first_line_hash = if offset == 0 {
        None
    } else {
        prior.and_then(|p| p.first_line_hash.clone())
    };
    let mut last_line = prior
        .filter(|_| offset > 0)
        .and_then(|p| p.last_line_start.zip(p.last_line_hash.clone()));
    let mut batch_start = offset;
    let mut out = LineOutput::default();
    let mut batch = new_batch(file, &path_str, &source_key, base, generation);
    let mut base = base;

    loop {
        let line = match reader.next_line() {
            Ok(Some(line)) => line,
            Ok(None) => break,
            Err(e) if compressed => {
                // Said of the file: a damaged one may hold no session to say it of.
                emit(warn(format!(
                    "read stopped: the compressed file is damaged ({e}); what came before is kept"
                )));
                break;
            }
            Err(e) => {
                batch.warnings.push((None, format!("read stopped: {e}")));
                break;
            }
        };
        match line {
            Line::Oversized { len, .. } => {
                batch.warnings.push((
                    Some(line_no),
                    format!("line of {len} bytes skipped (longer than the 64 MiB limit)"),
                ));
                // An empty line in the copy holds its place, so the lines after it keep their
                // numbers when the copy is read again.
                batch.retained.push(b'\n');
                line_no += 1;
            }
            Line::Complete { bytes, start } => {
                if bytes.iter().all(u8::is_ascii_whitespace) {
                    continue;
                }
                let (text, lossy) = match std::str::from_utf8(bytes) {
                    Ok(s) => (std::borrow::Cow::Borrowed(s), false),
                    Err(_) => (String::from_utf8_lossy(bytes), true),
                };
                if lossy {
                    batch.warnings.push((
                        Some(line_no),
                        "invalid UTF-8 replaced with U+FFFD".to_owned(),
                    ));
                }
                let mut findings = Vec::new();
                let clean = redactor.redact_line(&text, &mut findings);
                let hash = record_key(bytes, &clean);
                if first_line_hash.is_none() {
                    first_line_hash = Some(hash.clone());
                }
                last_line = Some((start, hash.clone()));
                let changed = lossy || matches!(clean, std::borrow::Cow::Owned(_));
                batch.retained.extend_from_slice(clean.as_bytes());
                batch.retained.push(b'\n');
                if changed {
                    batch.changed.push((line_no, hash.clone()));
                }
                batch
                    .findings
                    .extend(findings.into_iter().map(|f| (line_no, f)));
                // The retained copy keeps the line as written; the parser reads it without a
                // byte-order mark (an editor's save, or files joined), and a lone surrogate's
                // escape as the replacement character.
                let readable = super::json_text::readable_str(&clean);
                parse_into(
                    &mut *parser,
                    &mut batch,
                    line_identity,
                    line_no,
                    &hash,
                    &readable,
                    &mut out,
                );
                line_no += 1;
            }
        }
        if reader.offset() - batch_start >= BATCH_BYTES {
            let mut next = finish_batch(
                batch,
                file,
                &canonical,
                (parser.meta().clone(), parser.save().to_string()),
                size,
                mtime_ns,
                reader.offset(),
                line_no,
                &first_line_hash,
                &last_line,
                batch_start,
            );
            next.sidecar_mtime_ns = sidecar_mtime_ns;
            if !emit(Msg::Batch(Box::new(next))) {
                return;
            }
            base = Base {
                existed: true,
                byte_offset: reader.offset(),
                generation,
            };
            batch_start = reader.offset();
            batch = new_batch(file, &path_str, &source_key, base, generation);
        }
    }
    if cut.get() {
        emit(warn(format!(
            "read stopped after {} of the compressed file's content, the most Cairn reads of one; \
             the rest is not read",
            size_text(cap)
        )));
    }
    if !base.existed && reader.offset() == 0 {
        // Nothing complete to read yet (an empty file, or a first line still being written).
        if size == 0 {
            emit(warn(super::store::EMPTY_FILE.to_owned()));
        }
        return;
    }
    // A unit the parser still holds open.
    parser.flush(&mut out);
    let last_hash = last_line.as_ref().map_or("", |(_, h)| h.as_str());
    take_output(&mut batch, file.agent, line_no, last_hash, &mut out);
    let mut last = finish_batch(
        batch,
        file,
        &canonical,
        (parser.meta().clone(), parser.save().to_string()),
        size,
        mtime_ns,
        reader.offset(),
        line_no,
        &first_line_hash,
        &last_line,
        batch_start,
    );
    last.sidecar_mtime_ns = sidecar_mtime_ns;
    emit(Msg::Batch(Box::new(last)));
}

/// Parse one redacted line (`readable`: without a byte-order mark, see
/// [`super::json_text::readable_str`]) keyed `hash` into `batch`: a line a crash or an
/// interrupted write cut in front of a whole record is read from that record, a line that does
/// not parse is a warning. What capture and a reindex both do with a line.
#[allow(clippy::too_many_arguments)]
fn parse_into(
    parser: &mut dyn super::sources::SourceParser,
    batch: &mut Batch,
    line_identity: LineIdentity,
    line_no: u64,
    hash: &str,
    readable: &str,
    out: &mut LineOutput,
) {
    let mut parsed = parser.parse_line(readable, out);
    if parsed.is_err()
        && let Some(whole) = super::json_text::record_after_cut(readable)
    {
        out.clear();
        parsed = parser.parse_line(whole, out);
        if parsed.is_ok() {
            let cut = &readable.as_bytes()[..readable.len() - whole.len()];
            let what = if cut.iter().all(|&b| b == 0) {
                format!("{} NUL bytes a crash left", cut.len())
            } else {
                format!(
                    "a record cut off by an interrupted write ({} bytes, kept only in the retained copy)",
                    cut.len()
                )
            };
            batch.warnings.push((
                Some(line_no),
                format!("{what}, then a whole record, which was read"),
            ));
        }
    }
    match parsed {
        Ok(()) => {
            let record_hash = match line_identity {
                LineIdentity::Content => Cow::Borrowed(hash),
                LineIdentity::Position => Cow::Owned(keys::record_hash_at(hash, line_no)),
            };
            let agent = batch.agent;
            take_output(batch, agent, line_no, &record_hash, out);
        }
        Err(e) => {
            out.clear();
            let what = if serde_json::from_str::<serde::de::IgnoredAny>(readable).is_ok() {
                "record of an unexpected shape kept only in the retained copy"
            } else {
                "malformed JSON skipped"
            };
            batch.warnings.push((Some(line_no), format!("{what}: {e}")));
        }
    }
}

/// Move what the parser made of one line (or one document unit) into the batch. A record the
/// parser keyed (`unit` and `key`) is identified by its key, not by the line's `hash`, and
/// carries a revision so a changed unit updates it in place.
fn take_output(batch: &mut Batch, agent: Agent, line_no: u64, hash: &str, out: &mut LineOutput) {
    let mut versions: Vec<(String, Vec<String>)> = Vec::new();
    for unit in out.retract_units.drain(..) {
        batch
            .unit_events
            .push((batch.records.len(), UnitEvent::Retract(unit)));
    }
    let closing = std::mem::take(&mut out.closing);
    let back = std::mem::take(&mut out.closing_back);
    for (i, mut record) in out.records.drain(..).enumerate() {
        bound_tool_name(&mut record);
        let line_no = if i < closing {
            line_no.saturating_sub(back)
        } else {
            line_no
        };
        let tool_input = record.tool_input.as_ref().map(ToString::to_string);
        let file_paths = (!record.file_paths.is_empty())
            .then(|| serde_json::to_string(&record.file_paths).unwrap_or_default());
        let (hash, revision) = match (&record.unit, &record.key) {
            (Some(unit), Some(key)) => {
                let keyed = keys::keyed_record_hash(agent, unit, key);
                match versions.iter_mut().find(|(u, _)| u == unit) {
                    Some((_, hashes)) => hashes.push(keyed.clone()),
                    None => versions.push((unit.clone(), vec![keyed.clone()])),
                }
                let revision = revision_of(&record, tool_input.as_deref(), file_paths.as_deref());
                (keyed, Some(revision))
            }
            _ => (hash.to_owned(), None),
        };
        batch.records.push(LineRecord {
            line_no,
            hash,
            revision,
            record,
            tool_input,
            file_paths,
        });
    }
    for (unit, hashes) in versions {
        batch
            .unit_events
            .push((batch.records.len(), UnitEvent::Version(unit, hashes)));
    }
    batch.usage.append(&mut out.usage);
    batch
        .warnings
        .extend(out.warnings.drain(..).map(|w| (Some(line_no), w)));
}

/// How long a tool's name may be: longer ones are cut, with an ellipsis.
const MAX_TOOL_NAME_CHARS: usize = 128;

/// A tool's name as every reader takes it from the transcript, made one printable line of bounded
/// length, so a hostile file cannot grow a turn's list of tools or a session's tally of them
/// without end (real names are short: `Bash`, `mcp__server__tool`).
fn bound_tool_name(record: &mut Record) {
    if let Some(name) = record.tool_name.as_mut()
        && (name.chars().count() > MAX_TOOL_NAME_CHARS
            || name.chars().any(|c| {
                c.is_control()
                    || (c.is_whitespace() && c != ' ')
                    || crate::text::is_bidi_control(c)
                    || crate::text::is_invisible_break(c)
            }))
    {
        *name = crate::text::one_line(name, MAX_TOOL_NAME_CHARS);
    }
}

/// The revision of a keyed record: a digest of every field the writer stores for it, so a
/// re-read of an unchanged unit is told apart from an update. The fields are hashed as they
/// are: serialising them first (the text escaped again, copied into a JSON value) cost more
/// than the hash itself.
fn revision_of(r: &Record, tool_input: Option<&str>, file_paths: Option<&str>) -> String {
    let exit_code = r.exit_code.map(|c| c.to_string());
    let flag = |b: bool| Some(if b { &b"1"[..] } else { &b"0"[..] });
    fn text(s: &Option<String>) -> Option<&[u8]> {
        s.as_deref().map(str::as_bytes)
    }
    keys::fields_digest(&[
        Some(r.kind().as_str().as_bytes()),
        text(&r.timestamp),
        text(&r.role),
        Some(r.source_event_kind.as_bytes()),
        text(&r.text),
        text(&r.tool_name),
        r.tool_kind.map(|k| k.as_str().as_bytes()),
        tool_input.map(str::as_bytes),
        text(&r.call_id),
        exit_code.as_deref().map(str::as_bytes),
        r.outcome.map(|o| o.as_str().as_bytes()),
        r.prompt_source.map(|p| p.as_str().as_bytes()),
        file_paths.map(str::as_bytes),
        flag(r.is_sidechain),
        flag(r.is_compaction),
        text(&r.message_id),
        text(&r.cwd),
        text(&r.git_branch),
    ])
}

/// Take `batch` whole for the writer, leaving in its place an empty batch of the same source
/// that chains on to it after `taken` units (what the taken batch stores as its position).
fn take_full(batch: &mut Batch, taken: u64) -> Batch {
    let chained = Base {
        existed: true,
        byte_offset: taken,
        generation: batch.generation,
    };
    let next = empty_batch(
        batch.agent,
        batch.role,
        &batch.path,
        &batch.source_key,
        chained,
        batch.generation,
    );
    std::mem::replace(batch, next)
}

/// Take the full `batch` of a document or tree read still under way, `taken` units and
/// `line_no` lines in: it stores `restart` (the cursor the read started from) and no file's
/// position (size 0, [`UNREAD_MTIME`]), so a sync cut short after it reads the source again.
fn take_unread(
    batch: &mut Batch,
    file: &FoundFile,
    canonical: &Path,
    (meta, restart): (SessionMeta, String),
    taken: u64,
    line_no: u64,
) -> Batch {
    let full = take_full(batch, taken);
    finish_batch(
        full,
        file,
        canonical,
        (meta, restart),
        0,
        UNREAD_MTIME,
        taken,
        line_no,
        &None,
        &None,
        taken,
    )
}

/// Whether a batch read by units is as large as a capture's batch gets ([`BATCH_RECORDS`]
/// records or [`BATCH_BYTES`] of retained rows).
fn is_full(batch: &Batch) -> bool {
    batch.records.len() >= BATCH_RECORDS || batch.retained.len() as u64 >= BATCH_BYTES
}

fn new_batch(file: &FoundFile, path: &str, source_key: &str, base: Base, generation: u32) -> Batch {
    empty_batch(file.agent, file.role, path, source_key, base, generation)
}

fn empty_batch(
    agent: Agent,
    role: FileRole,
    path: &str,
    source_key: &str,
    base: Base,
    generation: u32,
) -> Batch {
    Batch {
        agent,
        role,
        path: path.to_owned(),
        source_key: source_key.to_owned(),
        base,
        generation,
        retained: Vec::new(),
        changed: Vec::new(),
        encoded: Vec::new(),
        records: Vec::new(),
        unit_events: Vec::new(),
        usage: Vec::new(),
        findings: Vec::new(),
        warnings: Vec::new(),
        identity: Identity {
            session_key: String::new(),
            session_id: None,
            parent_key: None,
            relation: None,
            agent_id: None,
        },
        meta: SessionMeta::default(),
        project: None,
        size: 0,
        mtime_ns: 0,
        sidecar_mtime_ns: None,
        byte_offset: 0,
        line_count: 0,
        first_line_hash: None,
        last_line_start: None,
        last_line_hash: None,
        parser_state: String::new(),
        bytes: 0,
    }
}

#[allow(clippy::too_many_arguments)]
fn finish_batch(
    mut batch: Batch,
    file: &FoundFile,
    canonical: &Path,
    (meta, parser_state): (SessionMeta, String),
    size: u64,
    mtime_ns: i64,
    offset: u64,
    line_count: u64,
    first_line_hash: &Option<String>,
    last_line: &Option<(u64, String)>,
    batch_start: u64,
) -> Batch {
    batch.identity = identity(file, canonical, &meta);
    batch.project = meta.cwd.as_deref().map(project_of);
    batch.meta = meta;
    batch.parser_state = parser_state;
    batch.size = size;
    batch.mtime_ns = mtime_ns;
    batch.byte_offset = offset;
    batch.line_count = line_count;
    batch.first_line_hash = first_line_hash.clone();
    batch.last_line_start = last_line.as_ref().map(|(s, _)| *s);
    batch.last_line_hash = last_line.as_ref().map(|(_, h)| h.clone());
    batch.bytes = offset.saturating_sub(batch_start);
    match Retained::encode(&batch.retained, &batch.changed) {
        Ok(encoded) => batch.encoded = encoded,
        // Compression cannot fail on valid input; if it does, keep the copy uncompressed-free of
        // this batch and say so rather than lose the records.
        Err(e) => batch.warnings.push((
            None,
            format!("retained copy not written for this batch: {e}"),
        )),
    }
    batch.retained = Vec::new();
    batch
}

/// How much of the line file at `path` must be read, given its stored position (a known file is
/// checked to be still the same file): from the start (new, shorter, or changed where it was
/// read), from where the last read stopped (grown, or only the files read beside it moved:
/// `sidecars_moved`), or nothing.
fn plan(
    path: &Path,
    prior: Option<&SourceState>,
    (size, mtime_ns, sidecars_moved): (u64, i64, bool),
    force: bool,
) -> std::io::Result<Plan> {
    let Some(p) = prior else {
        return Ok(Plan::From {
            offset: 0,
            line_count: 0,
            state: None,
            generation: 0,
        });
    };
    let reread = Plan::From {
        offset: 0,
        line_count: 0,
        state: None,
        generation: p.generation + 1,
    };
    if force || size < p.byte_offset {
        return Ok(reread);
    }
    if size == p.size && mtime_ns == p.mtime_ns && size == p.byte_offset {
        if !sidecars_moved {
            return Ok(Plan::Unchanged);
        }
        // Only what describes the session changed: its lines are not read again; the read
        // takes up where it stopped and the parser, made anew, reads the files beside it.
        return Ok(Plan::From {
            offset: p.byte_offset,
            line_count: p.line_count,
            state: p.parser_state.clone(),
            generation: p.generation,
        });
    }
    // Written since, yet not a byte longer: a line was changed in place (an edit, a tool
    // rewriting the file), which the first and last lines' keys need not show. Read again
    // (rare: agents append, which moves the size).
    if size == p.size && size == p.byte_offset && mtime_ns != p.mtime_ns {
        return Ok(reread);
    }
    if p.byte_offset > 0 {
        let mut file = BufReader::new(File::open(path)?);
        let same_first = match &p.first_line_hash {
            Some(h) => first_line_hash(&mut file)?.as_ref() == Some(h),
            None => true,
        };
        let same_last = match (&p.last_line_hash, p.last_line_start) {
            (Some(h), Some(start)) => line_hash_at(&mut file, start)?.as_ref() == Some(h),
            _ => true,
        };
        if !(same_first && same_last) {
            return Ok(reread);
        }
    }
    Ok(Plan::From {
        offset: p.byte_offset,
        line_count: p.line_count,
        state: p.parser_state.clone(),
        generation: p.generation,
    })
}

/// The key of one raw line: agentlog's record hash, or, when redaction changed the line (an
/// owned result of [`Redactor::redact_line`]), the hash of its redacted form, so the archive
/// holds no hash of a secret (see [`keys::redacted_record_hash`]).
#[allow(clippy::ptr_arg)] // whether it is owned is the point
fn record_key(raw: &[u8], redacted: &std::borrow::Cow<'_, str>) -> String {
    if let std::borrow::Cow::Owned(r) = redacted {
        keys::redacted_record_hash(r.as_bytes())
    } else {
        keys::record_hash(raw)
    }
}

/// The key of the file's first line that is not blank: the reader skips blank lines, so that is
/// the line whose key it kept as the first (a Markdown history opens with an empty line).
fn first_line_hash(file: &mut BufReader<File>) -> std::io::Result<Option<String>> {
    file.seek(SeekFrom::Start(0))?;
    loop {
        let Some(line) = next_raw_line(file)? else {
            return Ok(None);
        };
        if !line.iter().all(u8::is_ascii_whitespace) {
            return Ok(Some(raw_line_key(&line)));
        }
    }
}

/// The key of the line starting at `start`, computed as the reader computes it.
fn line_hash_at(file: &mut BufReader<File>, start: u64) -> std::io::Result<Option<String>> {
    file.seek(SeekFrom::Start(start))?;
    Ok(next_raw_line(file)?.map(|line| raw_line_key(&line)))
}

/// The next line at the file's position, without its newline (`None` at the end).
fn next_raw_line(file: &mut BufReader<File>) -> std::io::Result<Option<Vec<u8>>> {
    let mut line = Vec::new();
    // Bounded: a rewritten file could put anything here.
    (&mut *file)
        .take(super::jsonl::MAX_LINE_BYTES as u64)
        .read_until(b'\n', &mut line)?;
    if line.is_empty() {
        return Ok(None);
    }
    // As the reader trims (`jsonl::trim_newline`): CR too, or a CRLF file would never match.
    while matches!(line.last(), Some(b'\n' | b'\r')) {
        line.pop();
    }
    Ok(Some(line))
}

/// A raw line's key, as the reader computes it.
fn raw_line_key(line: &[u8]) -> String {
    let text = String::from_utf8_lossy(line);
    let redacted = Redactor::global().redact_line(&text, &mut Vec::new());
    record_key(line, &redacted)
}

/// A warning about `file` as a whole (no line).
fn file_warning(file: &FoundFile, message: String) -> Msg {
    Msg::Warning(Warning {
        path: file.path.display().to_string(),
        line: None,
        message,
    })
}

/// The newest mtime of the files read beside a line transcript ([`sources::sidecars`]; 0 when
/// none is there yet), `None` for an agent that keeps none.
///
/// [`sources::sidecars`]: super::sources::sidecars
fn sidecar_stamp(file: &FoundFile) -> Option<i64> {
    let sidecars = super::sources::sidecars(file);
    (!sidecars.is_empty()).then(|| {
        sidecars
            .iter()
            .filter_map(|p| fs::metadata(p).ok())
            .map(|m| mtime_ns(&m))
            .fold(0, i64::max)
    })
}

/// Where `file` is (its canonical path), with its size and mtime; `None`, after a warning
/// naming it, when it is gone or cannot be read.
fn locate(file: &FoundFile, emit: &mut dyn FnMut(Msg) -> bool) -> Option<(PathBuf, u64, i64)> {
    let found = fs::canonicalize(&file.path).and_then(|p| {
        let m = fs::metadata(&p)?;
        Ok((p, m.len(), mtime_ns(&m)))
    });
    match found {
        Ok(found) => Some(found),
        Err(e) => {
            emit(file_warning(file, format!("cannot read: {e}")));
            None
        }
    }
}

pub(crate) fn mtime_ns(m: &fs::Metadata) -> i64 {
    m.modified()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| i64::try_from(d.as_nanos()).unwrap_or(i64::MAX))
}

/// The session a file belongs to. Sub-agent files are sessions of their own, keyed under the
/// parent's id so two sub-agents of one session never collide.
fn identity(file: &FoundFile, canonical: &Path, meta: &SessionMeta) -> Identity {
    let agent = file.agent;
    let provider_id = meta.session_id.clone().or_else(|| file.parent_hint.clone());
    match file.role {
        FileRole::Subagent => {
            let parent = provider_id.unwrap_or_else(|| canonical.to_string_lossy().into_owned());
            let agent_id = file
                .agent_id
                .clone()
                .or_else(|| meta.agent_id.clone())
                .unwrap_or_default();
            let identity = format!("{parent}/subagents/agent-{agent_id}");
            let relation = if agent_id.starts_with("acompact") {
                "compaction"
            } else {
                "subagent"
            };
            Identity {
                session_key: keys::session_key(agent, identity.as_bytes()),
                session_id: Some(parent.clone()),
                parent_key: Some(keys::session_key(agent, parent.as_bytes())),
                relation: Some(relation.to_owned()),
                agent_id: Some(agent_id),
            }
        }
        FileRole::Main => {
            // An agent that names its sessions only by folder (Kimi) gives the id as a hint.
            let key = match &provider_id {
                Some(id) => keys::session_key(agent, id.as_bytes()),
                None => keys::session_key(agent, canonical.as_os_str().as_encoded_bytes()),
            };
            Identity {
                session_key: key,
                session_id: provider_id,
                parent_key: meta
                    .parent_session_id
                    .as_ref()
                    .map(|p| keys::session_key(agent, p.as_bytes())),
                relation: meta.relation.clone(),
                agent_id: None,
            }
        }
    }
}

/// A session's project: the name of the git repository around its cwd, else the cwd's name.
fn project_of(cwd: &str) -> String {
    let path = Path::new(cwd);
    let root = path
        .ancestors()
        .find(|a| a.join(".git").exists())
        .unwrap_or(path);
    root.file_name()
        .map_or_else(|| cwd.to_owned(), |n| n.to_string_lossy().into_owned())
}

// ---- writing -----------------------------------------------------------------------------------

/// Result of committing one batch.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Commit {
    Done {
        session_key: String,
        session_row: i64,
        session_created: bool,
        records_added: u32,
        records_updated: u32,
        new_warnings: Vec<Warning>,
        /// The capture batch row, when records were added.
        capture_id: Option<i64>,
    },
    /// Another capture moved this file on since the batch was read: read it again.
    Conflict,
    /// The retained copy is shorter than recorded (lost or deleted): re-read the whole file.
    Reread,
    /// The source was forgotten and may not be imported again: nothing written.
    Forgotten,
}

/// Commits batches into the store under the capture lock.
pub(crate) struct Writer<'a> {
    store: &'a mut Store,
    retained: Retained,
    trigger: Trigger,
    now: String,
}

impl<'a> Writer<'a> {
    pub(crate) fn new(store: &'a mut Store, data_dir: &Path, trigger: Trigger) -> Writer<'a> {
        Writer {
            store,
            retained: Retained::new(data_dir),
            trigger,
            now: crate::clock::now(),
        }
    }

    /// Whether a reader's warning about a whole file belongs in this report: all do but one
    /// said at an earlier sync of a file still empty ([`Store::note_empty_file`]). When the
    /// archive cannot tell, it is said.
    fn is_news(&self, w: &Warning) -> bool {
        w.message != super::store::EMPTY_FILE
            || w.line.is_some()
            || self
                .store
                .note_empty_file(&w.path, &self.now)
                .unwrap_or(true)
    }

    /// Commit one batch in its own transaction.
    pub(crate) fn commit(&mut self, batch: &Batch) -> Result<Commit> {
        let mut results = self.commit_group(std::slice::from_ref(batch))?;
        Ok(results.pop().unwrap_or(Commit::Conflict))
    }

    /// Commit several batches in one transaction (far cheaper than one each during a bulk
    /// sync). A batch that lost a race is detected before it writes anything and skipped.
    /// No savepoints: they make FTS5 flush its pending index on every batch.
    /// When the transaction fails (a full disk, say), the retained copies it appended to are
    /// cut back to the lengths the store still records.
    pub(crate) fn commit_group<B: std::borrow::Borrow<Batch>>(
        &mut self,
        batches: &[B],
    ) -> Result<Vec<Commit>> {
        let result = self.try_commit_group(batches);
        if result.is_err() {
            self.discard_uncommitted(batches);
        }
        result
    }

    /// After a rolled-back group: each batch's retained copy back to its committed length. A
    /// copy of an older generation than the store's is left alone (it holds committed lines).
    fn discard_uncommitted<B: std::borrow::Borrow<Batch>>(&self, batches: &[B]) {
        for batch in batches {
            let batch = batch.borrow();
            let committed = self
                .store
                .conn()
                .query_row(
                    "SELECT generation, retained_len FROM sources WHERE path = ?1",
                    [&batch.path],
                    |r| Ok((r.get::<_, i64>(0)?, r.get::<_, i64>(1)?)),
                )
                .optional();
            let len = match committed {
                Ok(Some((generation, len))) if generation == i64::from(batch.generation) => {
                    len.max(0) as u64
                }
                Ok(Some((generation, _))) if generation > i64::from(batch.generation) => continue,
                Ok(_) => 0,
                Err(_) => continue, // the next append cuts it instead
            };
            let path = self
                .retained
                .path(batch.agent, &batch.source_key, batch.generation);
            self.retained.discard_uncommitted(&path, len);
        }
    }

    fn try_commit_group<B: std::borrow::Borrow<Batch>>(
        &mut self,
        batches: &[B],
    ) -> Result<Vec<Commit>> {
        let path = self.store.path().to_owned();
        let e = |err| db_err(&path, err);
        let tx = self
            .store
            .conn_mut()
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(e)?;
        let mut results = Vec::with_capacity(batches.len());
        // Rows written by the group are indexed only when it ends (see below).
        let mut indexed = Vec::new();
        for batch in batches {
            results.push(commit_in(
                &tx,
                &self.retained,
                self.trigger,
                &self.now,
                batch.borrow(),
                &path,
                &mut indexed,
            )?);
        }
        // Index the new records after every other write of the group, from the text already in
        // memory (reading it back from the records table cost as much as a tenth of the
        // writer's time). FTS5 writes its pending index out at every statement savepoint, so
        // these single-row inserts (which open none) must not be interleaved with statements
        // that do.
        for (rowid, text, tool_input) in indexed {
            super::store::index_record(&tx, rowid, text, tool_input).map_err(e)?;
        }
        tx.commit().map_err(e)?;
        Ok(results)
    }
}

/// Store one batch inside an open transaction. Returns `Conflict`/`Reread` before writing
/// anything when the batch cannot be applied.
#[allow(clippy::too_many_arguments)]
fn commit_in<'b>(
    tx: &rusqlite::Connection,
    retained: &Retained,
    trigger: Trigger,
    now: &str,
    batch: &'b Batch,
    path: &Path,
    indexed: &mut Vec<(i64, Option<&'b str>, Option<&'b str>)>,
) -> Result<Commit> {
    let e = |err| db_err(path, err);
    {
        let current = tx
            .prepare_cached("SELECT id, session_id, byte_offset, generation, retained_len FROM sources WHERE path = ?1")
            .map_err(e)?
            .query_row(
                params![batch.path],
                |r| Ok((r.get::<_, i64>(0)?, r.get::<_, i64>(1)?, r.get::<_, i64>(2)?, r.get::<_, i64>(3)?, r.get::<_, i64>(4)?)),
            )
            .optional()
            .map_err(e)?;
        let base_ok = match (current, batch.base.existed) {
            (None, false) => true,
            (Some((_, _, offset, generation, _)), true) => {
                offset as u64 == batch.base.byte_offset
                    && generation as u32 == batch.base.generation
            }
            _ => false,
        };
        if !base_ok {
            return Ok(Commit::Conflict);
        }
        // A session of a database is a source of its own, which a forget tombstones by itself
        // (the database file is not forgotten, so discovery keeps it).
        if current.is_none() && super::forget::is_forgotten(tx, &batch.source_key).map_err(e)? {
            return Ok(Commit::Forgotten);
        }

        // The retained copy must hold what the store says it holds; if not, the whole file is
        // read again into a new generation. Checked before writing anything.
        let expected_len = match current {
            Some((.., generation, len)) if generation as u32 == batch.generation => len as u64,
            _ => 0,
        };
        let retained_path = retained.path(batch.agent, &batch.source_key, batch.generation);
        if let Some((source_row, .., generation, _)) = current
            && generation as u32 == batch.generation
        {
            super::swaps::finish_source(
                tx,
                retained,
                &retained_path,
                source_row,
                batch.generation,
            )?;
        }
        if retained.is_short(&retained_path, expected_len) {
            return Ok(Commit::Reread);
        }

        // The session: fixed by the source once known, else by the batch's identity.
        let (session_row, session_created) = match current {
            Some((source_row, session_id, ..)) => (
                adopt_named_identity(tx, session_id, source_row, batch).map_err(e)?,
                false,
            ),
            None => upsert_session(tx, batch, now).map_err(e)?,
        };
        let session_key: String = tx
            .prepare_cached("SELECT session_key FROM sessions WHERE id = ?1")
            .map_err(e)?
            .query_row([session_row], |r| r.get(0))
            .map_err(e)?;
        update_session_meta(tx, session_row, batch, now).map_err(e)?;
        if batch.agent == Agent::Atif {
            super::store::set_ran_as(tx, session_row).map_err(e)?;
        }
        let source_row = match current {
            Some((id, ..)) => id,
            None => {
                tx.prepare_cached(
                    "INSERT INTO sources (source_key, session_id, agent, role, path, updated_at)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                )
                .map_err(e)?
                .execute(params![
                    batch.source_key,
                    session_row,
                    batch.agent.as_str(),
                    role_str(batch.role),
                    batch.path,
                    now
                ])
                .map_err(e)?;
                tx.last_insert_rowid()
            }
        };

        let retained_len = match retained.append(&retained_path, expected_len, &batch.encoded)? {
            Appended::Ok(len) => len,
            // Checked before any write (see above), so nothing to undo here.
            Appended::Short { .. } => return Ok(Commit::Reread),
        };

        let (records_before, mut next_ordinal): (i64, i64) = tx
            .prepare_cached("SELECT record_count, next_ordinal FROM sessions WHERE id = ?1")
            .map_err(e)?
            .query_row([session_row], |r| Ok((r.get(0)?, r.get(1)?)))
            .map_err(e)?;
        let first_ordinal = next_ordinal;
        let mut turns = if records_before == 0 {
            // A session without records has no turns yet.
            TurnWriter::new(session_row, &session_key)
        } else {
            TurnWriter::load(tx, session_row, &session_key).map_err(e)?
        };
        let mut added: u32 = 0;
        let mut keyed = keyed::KeyedWriter::default();
        // A session holding no record yet holds none of a unit's but those this batch adds:
        // the first version of each unit read here retracts nothing, so it is not applied (a
        // statement a unit, about as costly as inserting a record, on every first read).
        let mut fresh_units: Option<std::collections::HashSet<&str>> = (records_before == 0
            && !keyed::session_has_records(tx, session_row).map_err(e)?)
        .then(std::collections::HashSet::new);
        {
            let mut insert = tx
                .prepare_cached(
                    "INSERT OR IGNORE INTO records (session_id, ordinal, turn_id, source_id, line_no, block,
                        record_hash, timestamp, kind, role, source_event_kind, text, tool_name, tool_kind,
                        tool_input, call_id, exit_code, outcome, prompt_source, file_paths, is_sidechain,
                        is_compaction, message_id, cwd, git_branch, unit, revision)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18,
                        ?19, ?20, ?21, ?22, ?23, ?24, ?25, ?26, ?27)",
                )
                .map_err(e)?;
            let mut set_turn = tx
                .prepare_cached("UPDATE records SET turn_id = ?1 WHERE id = ?2")
                .map_err(e)?;
            // The first record of each branch the agent recorded (what association reads).
            let mut add_branch = tx
                .prepare_cached(
                    "INSERT OR IGNORE INTO session_branches (session_id, git_branch, first_ordinal)
                     VALUES (?1, ?2, ?3)",
                )
                .map_err(e)?;
            let mut last_branch: Option<&str> = None;
            let mut events = batch.unit_events.iter().peekable();
            for (i, lr) in batch.records.iter().enumerate() {
                while let Some((_, event)) = events.next_if(|(at, _)| *at <= i) {
                    if !first_version(&mut fresh_units, event) {
                        keyed.apply(tx, session_row, event, now).map_err(e)?;
                    }
                }
                let r = &lr.record;
                let opens = turns.opens_turn(r, &lr.hash);
                let (tool_input, file_paths) = (&lr.tool_input, &lr.file_paths);
                let changed = insert
                    .execute(params![
                        session_row,
                        next_ordinal,
                        if opens { None } else { turns.current_id() },
                        source_row,
                        lr.line_no as i64,
                        r.block,
                        lr.hash,
                        r.timestamp,
                        r.kind().as_str(),
                        r.role,
                        r.source_event_kind,
                        r.text,
                        r.tool_name,
                        r.tool_kind.map(ToolKind::as_str),
                        tool_input,
                        r.call_id,
                        r.exit_code,
                        r.outcome.map(|o| o.as_str()),
                        r.prompt_source.map(PromptSource::as_str),
                        file_paths,
                        r.is_sidechain,
                        r.is_compaction,
                        r.message_id,
                        r.cwd,
                        r.git_branch,
                        r.unit,
                        lr.revision,
                    ])
                    .map_err(e)?;
                if changed == 0 {
                    // Already stored: the same line read again, or a keyed record the agent
                    // may have rewritten since.
                    if lr.revision.is_some() {
                        keyed.update(tx, session_row, lr, indexed).map_err(e)?;
                    }
                    continue;
                }
                let rowid = tx.last_insert_rowid();
                if r.text.is_some() || tool_input.is_some() {
                    indexed.push((rowid, r.text.as_deref(), tool_input.as_deref()));
                }
                if opens {
                    let turn_id = turns.open(tx, next_ordinal, &lr.hash, r).map_err(e)?;
                    set_turn.execute(params![turn_id, rowid]).map_err(e)?;
                }
                if let Some(branch) = r.git_branch.as_deref()
                    && last_branch != Some(branch)
                {
                    add_branch
                        .execute(params![session_row, branch, next_ordinal])
                        .map_err(e)?;
                    last_branch = Some(branch);
                }
                turns.add(next_ordinal, r);
                next_ordinal += 1;
                added += 1;
            }
            for (_, event) in events {
                if !first_version(&mut fresh_units, event) {
                    keyed.apply(tx, session_row, event, now).map_err(e)?;
                }
            }
        }
        turns.flush(tx).map_err(e)?;
        keyed.recount_turns(tx).map_err(e)?;

        for (message_id, u) in &batch.usage {
            tx.prepare_cached(
                "INSERT INTO token_usage (session_id, message_id, input, output, cache_creation, cache_read, reasoning)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
                 ON CONFLICT (session_id, message_id) DO UPDATE SET input = excluded.input,
                   output = excluded.output, cache_creation = excluded.cache_creation,
                   cache_read = excluded.cache_read, reasoning = excluded.reasoning",
            )
            .map_err(e)?
            .execute(params![session_row, message_id, u.input as i64, u.output as i64, u.cache_creation as i64, u.cache_read as i64, u.reasoning as i64])
            .map_err(e)?;
        }
        let mut new_findings = 0;
        for (line_no, f) in &batch.findings {
            new_findings += tx
                .prepare_cached(
                    "INSERT OR IGNORE INTO secret_findings (session_id, source_id, line_no, field, rule, confidence, start_byte, generation)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                )
                .map_err(e)?
                // Rule and position only: the secret's length would narrow a guess.
                .execute(params![session_row, source_row, *line_no as i64, f.field, f.rule, f.confidence.as_str(), f.start as i64, batch.generation])
                .map_err(e)?;
        }
        let mut new_warnings = Vec::new();
        for (line_no, message) in &batch.warnings {
            let line = line_no.map(|l| l as i64 + 1);
            let n = tx
                .prepare_cached(
                    "INSERT OR IGNORE INTO warnings (session_id, path, line, message, created_at) VALUES (?1, ?2, ?3, ?4, ?5)",
                )
                .map_err(e)?
                .execute(params![session_row, batch.path, line, message, now])
                .map_err(e)?;
            if n > 0 {
                new_warnings.push(Warning {
                    path: batch.path.clone(),
                    line: line.map(|l| u32::try_from(l).unwrap_or(u32::MAX)),
                    message: message.clone(),
                });
            }
        }
        tx.prepare_cached(
            "UPDATE sessions SET record_count = record_count + ?2, next_ordinal = ?3, turn_count = ?4,
                warning_count = warning_count + ?5, secret_count = secret_count + ?6
             WHERE id = ?1",
        )
        .map_err(e)?
        .execute(params![session_row, added, next_ordinal, turns.count(), new_warnings.len() as i64, new_findings as i64])
        .map_err(e)?;
        let mut capture_id = None;
        if added > 0 && trigger != Trigger::Reindex {
            tx.prepare_cached(
                "INSERT INTO captures (session_id, source_id, capture_kind, trigger, captured_at, first_ordinal, last_ordinal, records_added)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
            )
            .map_err(e)?
            .execute(params![
                    session_row,
                    source_row,
                    if records_before == 0 { "backfill" } else { "incremental" },
                    trigger.as_str(),
                    now,
                    first_ordinal,
                    next_ordinal - 1,
                    added
                ])
            .map_err(e)?;
            capture_id = Some(tx.last_insert_rowid());
            // Relinked after this transaction; named here so that a process that dies before
            // then leaves the session for the next relink (migration 0011).
            crate::archive::store::queue_link(tx, session_row).map_err(e)?;
        } else if keyed.updated > 0 {
            // Rewritten records can name other files or commands: relink the session too.
            crate::archive::store::queue_link(tx, session_row).map_err(e)?;
        }
        tx.prepare_cached(
            "UPDATE sources SET size = ?2, mtime_ns = ?3, byte_offset = ?4, line_count = ?5, first_line_hash = ?6,
                last_line_start = ?7, last_line_hash = ?8, parser_state = ?9, generation = ?10, retained_len = ?11,
                missing_since = NULL, updated_at = ?12, sidecar_mtime_ns = COALESCE(?13, sidecar_mtime_ns)
             WHERE id = ?1",
        )
        .map_err(e)?
        .execute(params![
                source_row,
                batch.size as i64,
                batch.mtime_ns,
                batch.byte_offset as i64,
                batch.line_count as i64,
                batch.first_line_hash,
                batch.last_line_start.map(|v| v as i64),
                batch.last_line_hash,
                batch.parser_state,
                batch.generation,
                retained_len as i64,
                now,
                batch.sidecar_mtime_ns
            ])
        .map_err(e)?;
        Ok(Commit::Done {
            session_key,
            session_row,
            session_created,
            records_added: added,
            records_updated: keyed.updated,
            new_warnings,
            capture_id,
        })
    }
}

/// Whether `event` is the first version of its unit in a batch of a session that held no
/// record before it (`fresh`: the units versioned so far, `None` when the session held
/// records). Such a version can retract nothing: every record of its unit stored so far came
/// with it. A unit versioned again in the batch (a line source's unit spread over lines) is
/// applied as always.
fn first_version<'b>(
    fresh: &mut Option<std::collections::HashSet<&'b str>>,
    event: &'b UnitEvent,
) -> bool {
    match (fresh, event) {
        (Some(seen), UnitEvent::Version(unit, _)) => seen.insert(unit.as_str()),
        _ => false,
    }
}

fn role_str(role: FileRole) -> &'static str {
    match role {
        FileRole::Main => "main",
        FileRole::Subagent => "subagent",
    }
}

/// Insert the batch's session if it is new; returns its row id and whether it was created.
fn upsert_session(
    tx: &rusqlite::Connection,
    batch: &Batch,
    now: &str,
) -> rusqlite::Result<(i64, bool)> {
    let id = &batch.identity;
    let inserted = tx
        .prepare_cached(
            "INSERT OR IGNORE INTO sessions (session_key, agent, session_id, parent_key, relation, agent_id, captured_at, read_by)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
        )?
        .execute(params![id.session_key, batch.agent.as_str(), id.session_id, id.parent_key, id.relation, id.agent_id, now,
            super::sources::PARSERS_REVISION])?;
    let row = tx
        .prepare_cached("SELECT id FROM sessions WHERE session_key = ?1")?
        .query_row([&id.session_key], |r| r.get(0))?;
    Ok((row, inserted > 0))
}

/// A transcript's first lines may not name its session (file snapshots, summaries), so a file
/// first read that far got a session keyed by its path. When a later batch names the session,
/// that placeholder (still without records) takes the real identity, or, if another file already
/// holds the named session, hands its source over to it: reading a file in pieces ends where
/// reading it at once does. Returns the session row the batch belongs to.
fn adopt_named_identity(
    tx: &rusqlite::Connection,
    session_row: i64,
    source_row: i64,
    batch: &Batch,
) -> rusqlite::Result<i64> {
    let id = &batch.identity;
    if batch.role != FileRole::Main || id.session_id.is_none() {
        return Ok(session_row);
    }
    let (key, named, records): (String, bool, i64) = tx
        .prepare_cached(
            "SELECT session_key, session_id IS NOT NULL, record_count FROM sessions WHERE id = ?1",
        )?
        .query_row([session_row], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?;
    if key == id.session_key || named || records > 0 {
        return Ok(session_row);
    }
    let holder: Option<i64> = tx
        .prepare_cached("SELECT id FROM sessions WHERE session_key = ?1")?
        .query_row([&id.session_key], |r| r.get(0))
        .optional()?;
    let Some(holder) = holder else {
        tx.prepare_cached(
            "UPDATE sessions SET session_key = ?2, parent_key = COALESCE(parent_key, ?3),
                relation = COALESCE(relation, ?4)
             WHERE id = ?1",
        )?
        .execute(params![
            session_row,
            id.session_key,
            id.parent_key,
            id.relation
        ])?;
        return Ok(session_row);
    };
    tx.prepare_cached("UPDATE sources SET session_id = ?2 WHERE id = ?1")?
        .execute([source_row, holder])?;
    for table in ["warnings", "secret_findings"] {
        tx.prepare_cached(&format!(
            "UPDATE {table} SET session_id = ?2 WHERE session_id = ?1"
        ))?
        .execute([session_row, holder])?;
    }
    tx.prepare_cached(
        "DELETE FROM sessions WHERE id = ?1 AND NOT EXISTS (SELECT 1 FROM sources WHERE session_id = ?1)",
    )?
    .execute([session_row])?;
    Ok(holder)
}

/// How far past the capture a session's time may be (clocks disagree a little).
const CLOCK_SLACK: jiff::SignedDuration = jiff::SignedDuration::from_hours(24);

/// A time the session row may hold, captured at `now`: a time more than [`CLOCK_SLACK`] ahead
/// (a machine with a wrong clock, a hostile file dated 2999) would sort the session above
/// every other for years and keep it from ever looking idle, so it counts as `now`. Its
/// records keep what they say.
fn not_ahead<'t>(ts: Option<&'t str>, now: &'t str) -> Option<&'t str> {
    let latest = now
        .parse::<jiff::Timestamp>()
        .ok()
        .and_then(|t| t.checked_add(CLOCK_SLACK).ok());
    ts.map(|t| match (t.parse::<jiff::Timestamp>(), latest) {
        (Ok(at), Some(latest)) if at > latest => now,
        _ => t,
    })
}

/// Fold what the batch learned about the session into its row.
fn update_session_meta(
    tx: &rusqlite::Connection,
    session_row: i64,
    batch: &Batch,
    now: &str,
) -> rusqlite::Result<()> {
    let m = &batch.meta;
    // Sub-agent files carry the parent's metadata too; their own title stays empty.
    let usage = m
        .cumulative_usage
        .map(|u| serde_json::to_string(&u).unwrap_or_default());
    tx.prepare_cached(
        "UPDATE sessions SET
            session_id = COALESCE(session_id, ?2),
            title = COALESCE(?3, title),
            project = COALESCE(project, ?4),
            cwd = COALESCE(cwd, ?5),
            git_branch = COALESCE(git_branch, ?6),
            git_commit = COALESCE(git_commit, ?7),
            repository_url = COALESCE(repository_url, ?8),
            model = COALESCE(?9, model),
            provider = COALESCE(provider, ?10),
            tool_version = COALESCE(tool_version, ?11),
            thread_source = COALESCE(thread_source, ?12),
            started_at = CASE WHEN started_at IS NULL OR ?13 < started_at THEN COALESCE(?13, started_at) ELSE started_at END,
            updated_at = CASE WHEN updated_at IS NULL OR ?14 > updated_at THEN COALESCE(?14, updated_at) ELSE updated_at END,
            unknown_types = ?15,
            cumulative_usage = COALESCE(?16, cumulative_usage)
         WHERE id = ?1",
    )?
    .execute(params![
            session_row,
            batch.identity.session_id,
            m.title,
            batch.project,
            m.cwd,
            m.git_branch,
            m.git_commit,
            m.repository_url,
            m.model,
            m.provider,
            m.tool_version,
            m.thread_source,
            not_ahead(m.started_at.as_deref(), now),
            not_ahead(m.updated_at.as_deref(), now),
            serde_json::to_string(&m.unknown_types).unwrap_or_else(|_| "{}".to_owned()),
            usage,
        ])?;
    Ok(())
}

/// Tracks the session's open turn while records are added, and writes its counters back.
struct TurnWriter<'b> {
    session_row: i64,
    session_key: String,
    count: i64,
    current: Option<TurnAcc>,
    /// The open turn's latest assistant text, made into its preview only when the turn is
    /// written (a turn can hold hundreds of assistant messages; only the last one shows).
    last_assistant: Option<&'b str>,
}

#[derive(Debug, Default)]
struct TurnAcc {
    id: i64,
    opening_hash: String,
    first_ordinal: i64,
    last_ordinal: i64,
    record_count: i64,
    tool_call_count: i64,
    edit_count: i64,
    exec_count: i64,
    failure_count: i64,
    started_at: Option<String>,
    ended_at: Option<String>,
    preview: Option<String>,
    assistant_preview: Option<String>,
    tool_names: Vec<String>,
}

impl<'b> TurnWriter<'b> {
    fn new(session_row: i64, session_key: &str) -> TurnWriter<'b> {
        TurnWriter {
            session_row,
            session_key: session_key.to_owned(),
            count: 0,
            current: None,
            last_assistant: None,
        }
    }

    fn load(
        tx: &rusqlite::Connection,
        session_row: i64,
        session_key: &str,
    ) -> rusqlite::Result<TurnWriter<'b>> {
        let count: i64 = tx
            .prepare_cached("SELECT COUNT(*) FROM turns WHERE session_id = ?1")?
            .query_row([session_row], |r| r.get(0))?;
        let current = tx
            .prepare_cached(
                "SELECT t.id, r.record_hash, t.first_ordinal, t.last_ordinal, t.record_count, t.tool_call_count,
                        t.edit_count, t.exec_count, t.failure_count, t.started_at, t.ended_at, t.preview,
                        t.assistant_preview, t.tool_names
                 FROM turns t JOIN records r ON r.session_id = t.session_id AND r.ordinal = t.opening_ordinal
                 WHERE t.session_id = ?1 ORDER BY t.turn_index DESC LIMIT 1",
            )?
            .query_row(
                [session_row],
                |r| {
                    Ok(TurnAcc {
                        id: r.get(0)?,
                        opening_hash: r.get(1)?,
                        first_ordinal: r.get(2)?,
                        last_ordinal: r.get(3)?,
                        record_count: r.get(4)?,
                        tool_call_count: r.get(5)?,
                        edit_count: r.get(6)?,
                        exec_count: r.get(7)?,
                        failure_count: r.get(8)?,
                        started_at: r.get(9)?,
                        ended_at: r.get(10)?,
                        preview: r.get(11)?,
                        assistant_preview: r.get(12)?,
                        tool_names: serde_json::from_str(&r.get::<_, String>(13)?).unwrap_or_default(),
                    })
                },
            )
            .optional()?;
        Ok(TurnWriter {
            session_row,
            session_key: session_key.to_owned(),
            count,
            current,
            last_assistant: None,
        })
    }

    fn current_id(&self) -> Option<i64> {
        self.current.as_ref().map(|t| t.id)
    }

    fn count(&self) -> i64 {
        self.count
    }

    /// A human prompt opens a turn; so does the first record of a session. Two human text
    /// blocks of one line belong to one turn.
    fn opens_turn(&self, r: &Record, hash: &str) -> bool {
        match &self.current {
            None => true,
            Some(t) => {
                r.kind() == RecordKind::Message
                    && r.prompt_source == Some(PromptSource::Human)
                    && !r.is_sidechain
                    && t.opening_hash != hash
            }
        }
    }

    fn open(
        &mut self,
        tx: &rusqlite::Connection,
        ordinal: i64,
        hash: &str,
        r: &Record,
    ) -> rusqlite::Result<i64> {
        self.flush(tx)?;
        let turn_key = keys::turn_key(&self.session_key, hash);
        tx.prepare_cached(
            "INSERT INTO turns (session_id, turn_index, turn_key, opening_ordinal, first_ordinal, last_ordinal, started_at)
             VALUES (?1, ?2, ?3, ?4, ?4, ?4, ?5)",
        )?
        .execute(params![self.session_row, self.count, turn_key, ordinal, r.timestamp])?;
        let id = tx.last_insert_rowid();
        self.count += 1;
        self.current = Some(TurnAcc {
            id,
            opening_hash: hash.to_owned(),
            first_ordinal: ordinal,
            last_ordinal: ordinal,
            ..TurnAcc::default()
        });
        Ok(id)
    }

    fn add(&mut self, ordinal: i64, r: &'b Record) {
        let Some(t) = self.current.as_mut() else {
            return;
        };
        t.last_ordinal = t.last_ordinal.max(ordinal);
        t.record_count += 1;
        if r.kind() == RecordKind::ToolCall {
            t.tool_call_count += 1;
            if let Some(name) = &r.tool_name
                && !t.tool_names.contains(name)
            {
                t.tool_names.push(name.clone());
            }
            match r.tool_kind {
                Some(ToolKind::FileEdit) => t.edit_count += 1,
                Some(ToolKind::Exec) => t.exec_count += 1,
                _ => {}
            }
        }
        if matches!(
            r.outcome,
            Some(super::Outcome::Failed | super::Outcome::CouldNotExecute)
        ) {
            t.failure_count += 1;
        }
        if let Some(ts) = &r.timestamp {
            if t.started_at.as_deref().is_none_or(|s| ts.as_str() < s) {
                t.started_at = Some(ts.clone());
            }
            if t.ended_at.as_deref().is_none_or(|s| ts.as_str() > s) {
                t.ended_at = Some(ts.clone());
            }
        }
        if r.kind() == RecordKind::Message
            && r.role.as_deref() == Some("assistant")
            && let Some(text) = r.text.as_deref().filter(|t| !t.trim().is_empty())
        {
            self.last_assistant = Some(text);
        }
        let human = r.prompt_source == Some(PromptSource::Human);
        // The turn's prompt, as every view labels it: never the agent's own words (a
        // transcript may open with the assistant speaking).
        if (t.preview.is_none() || (human && ordinal == t.first_ordinal))
            && r.kind() == RecordKind::Message
            && r.role.as_deref() != Some("assistant")
            && let Some(text) = &r.text
        {
            t.preview = Some(prompt_preview(text));
        }
    }

    fn flush(&mut self, tx: &rusqlite::Connection) -> rusqlite::Result<()> {
        let Some(t) = &mut self.current else {
            return Ok(());
        };
        if let Some(text) = self.last_assistant.take() {
            t.assistant_preview = Some(preview_of(text));
        }
        tx.prepare_cached(
            "UPDATE turns SET first_ordinal = ?2, last_ordinal = ?3, record_count = ?4, tool_call_count = ?5,
                edit_count = ?6, exec_count = ?7, failure_count = ?8, started_at = ?9, ended_at = ?10, preview = ?11,
                assistant_preview = ?12, tool_names = ?13
             WHERE id = ?1",
        )?
        .execute(params![
                t.id, t.first_ordinal, t.last_ordinal, t.record_count, t.tool_call_count, t.edit_count,
                t.exec_count, t.failure_count, t.started_at, t.ended_at, t.preview, t.assistant_preview,
                serde_json::to_string(&t.tool_names).unwrap_or_else(|_| "[]".to_owned())
            ])?;
        Ok(())
    }
}

/// First line-ish of a text, whitespace collapsed, cut at [`PREVIEW_CHARS`].
pub fn preview_of(text: &str) -> String {
    crate::text::excerpt(text, PREVIEW_CHARS)
}

/// A turn's preview of its first message: a slash command as the person typed it.
fn prompt_preview(text: &str) -> String {
    preview_of(&super::sources::display_prompt(text))
}

// ---- orchestration -----------------------------------------------------------------------------

/// Sessions a capture added records to, and the capture batches it stored: what the git
/// snapshot is attached to and association is recomputed for.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Touched {
    pub sessions: Vec<i64>,
    pub captures: Vec<i64>,
}

/// Accumulates a report over many commits.
#[derive(Default)]
struct Tally {
    report: SyncReport,
    added: HashSet<String>,
    updated: HashSet<String>,
    touched: Touched,
}

impl Tally {
    fn commit(&mut self, c: Commit, bytes: u64) {
        if let Commit::Done {
            session_key,
            session_row,
            session_created,
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
            self.report.bytes_read += bytes as f64;
            self.report.warnings.extend(new_warnings);
            if session_created {
                self.added.insert(session_key);
            } else if (records_added > 0 || records_updated > 0)
                && !self.added.contains(&session_key)
            {
                self.updated.insert(session_key);
            }
        }
    }

    fn finish(mut self, files: usize) -> (SyncReport, Touched) {
        self.report.files_scanned = u32::try_from(files).unwrap_or(u32::MAX);
        self.report.sessions_added = self.added.len() as u32;
        self.report.sessions_updated = self.updated.len() as u32;
        // In the files' order, not the parallel readers' (a stable sort keeps a file's own).
        self.report
            .warnings
            .sort_by(|a, b| (&a.path, a.line).cmp(&(&b.path, b.line)));
        (self.report, self.touched)
    }
}

/// Capture a few files in this thread, holding the lock throughout (the hook path).
pub(crate) fn capture_files(
    store: &mut Store,
    data_dir: &Path,
    files: &[FoundFile],
    trigger: Trigger,
) -> Result<(SyncReport, Touched)> {
    let lock = CaptureLock::open(data_dir)?;
    let _guard = lock.lock()?;
    let mut tally = Tally::default();
    let kept = super::forget::not_forgotten(store.conn(), files).map_err(|e| store.err(e))?;
    for file in &kept {
        capture_one_locked(store, data_dir, file, trigger, &mut tally)?;
    }
    Ok(tally.finish(files.len()))
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
    let files = kept.as_slice();
    let states: HashMap<String, SourceState> = store
        .all_source_states()?
        .into_iter()
        .map(|s| (s.path.clone(), s))
        .collect();
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
    let sessions_of = |db: &str| {
        states
            .iter()
            .filter(|(path, _)| {
                path.strip_prefix(db)
                    .is_some_and(|rest| rest.starts_with('#'))
            })
            .map(|(_, s)| s)
            .collect::<Vec<_>>()
    };
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
            let committed = lock.lock().and_then(|_guard| writer.commit_group(&batches));
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
        let _guard = lock.lock()?;
        for file in &retry {
            capture_one_locked(store, data_dir, file, trigger, &mut tally)?;
        }
    }
    progress.finish();
    Ok(tally.finish(files.len()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A compressed rollout read under a cap: cut past the cap with a warning naming it, read
    /// whole and without one when its content is exactly the cap.
    #[test]
    fn a_compressed_file_is_read_up_to_the_cap_and_the_cut_is_said() {
        let plain = fs::read(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/codex/small.jsonl"),
        )
        .expect("fixture");
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir
            .path()
            .join("rollout-2026-08-03T10-48-56-019fc8be-3658-7ca3-9e29-000000000000.jsonl.zst");
        fs::write(&path, zstd::encode_all(&plain[..], 3).expect("compress")).expect("write");
        let file = FoundFile::main(Agent::Codex, &path);
        let read = |cap: u64| {
            let (mut records, mut warnings, mut offset) = (0, Vec::new(), 0);
            read_lines(&file, None, false, cap, &mut |msg| {
                match msg {
                    Msg::Batch(b) => {
                        records += b.records.len();
                        offset = b.byte_offset;
                    }
                    Msg::Warning(w) => warnings.push(w.message),
                }
                true
            });
            (records, warnings, offset)
        };
        let len = plain.len() as u64;
        let (whole, warned, offset) = read(len);
        assert!(warned.is_empty(), "{warned:?}");
        assert!(whole > 0);
        assert_eq!(offset, len);
        let (cut, warned, offset) = read(len / 2);
        assert!(cut > 0 && cut < whole, "{cut} of {whole}");
        assert!(offset <= len / 2, "{offset}");
        assert_eq!(
            warned,
            [format!(
                "read stopped after {} of the compressed file's content, the most Cairn reads \
                 of one; the rest is not read",
                crate::text::plural(len / 2, "byte")
            )]
        );
        assert_eq!(read(len - 1).1.len(), 1, "one byte past the cap is a cut");
    }

    #[test]
    fn sizes_are_said_in_the_largest_whole_unit() {
        assert_eq!(size_text(MAX_DECOMPRESSED), "4 GiB");
        assert_eq!(size_text(3 << 20), "3 MiB");
        assert_eq!(size_text((1 << 20) + 1), "1048577 bytes");
        assert_eq!(size_text(1), "1 byte");
    }
}

//! Typed events the shell sends to the window (tauri-specta derives their names and the
//! TypeScript listeners): sync progress, "the archive changed", how live capture is going, a
//! report's generation phases, and a link handed over by a second launch (or why it was refused).

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use cairn_core::archive::capture::Progress;
use cairn_core::{Error, ErrorKind, ErrorReport};
use serde::{Deserialize, Serialize};
use tauri::{AppHandle, Runtime};
use tauri_specta::Event;

/// Where a running sync is. Byte counts are `f64` so they cross to TypeScript as numbers.
#[derive(Debug, Clone, Serialize, Deserialize, specta::Type, Event)]
pub struct SyncProgress {
    pub phase: SyncPhase,
    /// Transcript files the sync will read.
    pub files: u32,
    pub bytes_total: f64,
    pub bytes_done: f64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "lowercase")]
pub enum SyncPhase {
    Start,
    Advance,
    Finish,
}

/// The archive changed (a sync or the watcher brought records, a forget removed sessions, a
/// person corrected a link, a reindex read sessions differently): open views reload. Sent as `archive-changed`.
#[derive(Debug, Clone, Serialize, Deserialize, specta::Type, Event)]
pub struct ArchiveChanged {
    pub cause: ChangeCause,
    pub sessions_added: u32,
    pub sessions_updated: u32,
    pub records_added: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "lowercase")]
pub enum ChangeCause {
    Sync,
    Watch,
    /// Sessions were forgotten (the counts are 0: nothing was added).
    Forget,
    /// A person linked or unlinked a session.
    Correct,
    /// Teammates' published sessions were pulled (`pull_teammates`).
    Pull,
    /// Sessions were read again from their retained copies (`sessions_updated` of them read
    /// differently).
    Reindex,
}

/// The part of live capture a [`LiveCapture`] is about. A problem of one is cleared only by that
/// same part going well: a capture that stored what an agent wrote says nothing of a folder
/// that could not be watched.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "lowercase")]
pub enum LiveStep {
    /// Capturing the transcripts that changed (it waits while another process holds the
    /// capture lock).
    Capture,
    /// Watching the agents' folders, and reading one that just appeared.
    Watch,
}

/// Live capture went wrong, or went well again after the window was told it went wrong. The
/// watcher retries at every change an agent writes, so a failure that lasts (a full disk) is
/// sent once per burst of writes: the window shows it once, with how often it came. Sent as
/// `live-capture`.
#[derive(Debug, Clone, Serialize, Deserialize, specta::Type, Event)]
pub struct LiveCapture {
    pub step: LiveStep,
    /// What went wrong, in the window's words ([`live_problem`]); null when `step` went well.
    pub problem: Option<ErrorReport>,
}

/// The longest message a [`LiveCapture`] carries, in characters; a hint may be as long. An error
/// may quote a path or an OS message of any length: the status area shows a few lines.
pub const LIVE_MESSAGE_MAX: usize = 400;

/// `e` as the window is told it after a live capture: the window's wording
/// ([`crate::report::report`]), each part one line, cleaned of what a reader must not be handed
/// and cut to [`LIVE_MESSAGE_MAX`] characters.
pub fn live_problem(e: &Error) -> ErrorReport {
    bounded(crate::report::report(e))
}

/// `report` as a [`LiveCapture`] carries it: cleaned and cut.
pub fn bounded(report: ErrorReport) -> ErrorReport {
    ErrorReport {
        kind: report.kind,
        message: cairn_core::text::one_line(&report.message, LIVE_MESSAGE_MAX),
        hint: report
            .hint
            .map(|h| cairn_core::text::one_line(&h, LIVE_MESSAGE_MAX))
            .filter(|h| !h.is_empty()),
    }
}

/// Another process holds the capture lock `lock`, so live capture waits: who holds it
/// (`holder`: its command line and pid, and whether it is stopped, when the system says) and
/// that capture goes on by itself once it lets go.
pub fn waiting_problem(lock: &std::path::Path, holder: Option<&LockHolder>) -> ErrorReport {
    let lock = lock.display();
    let (message, hint) = match holder {
        Some(h) if h.stopped => (
            format!(
                "Live capture is waiting: `{}` (process {}) holds the capture lock ({lock}) and is stopped",
                h.command, h.pid
            ),
            "Capture resumes by itself when it goes on or ends: continue it (`fg` in its terminal) or end it.".to_owned(),
        ),
        Some(h) => (
            format!(
                "Live capture is waiting: `{}` (process {}) holds the capture lock ({lock})",
                h.command, h.pid
            ),
            "Capture resumes by itself when it finishes.".to_owned(),
        ),
        None => (
            format!(
                "Live capture is waiting: another Cairn capture (a sync or a reindex) holds the capture lock ({lock})"
            ),
            "Capture resumes by itself when it finishes; a `cairn sync` stopped with Ctrl-Z holds it until it goes on (`fg`) or ends.".to_owned(),
        ),
    };
    bounded(ErrorReport::new(ErrorKind::Locked, message).with_hint(hint))
}

/// The process that holds a lock, as the system names it (its command line redacted and cut
/// by the core; cleaned again by [`bounded`]).
pub use cairn_core::archive::capture::LockHolder;

/// What to tell the window after `step` ran: its problem each time it has one (the window
/// coalesces repeats), and that it went well only when the window was told of a problem
/// (`troubled`) and has not heard since. `None`: nothing to say.
pub fn after_step(
    step: LiveStep,
    outcome: Option<ErrorReport>,
    troubled: bool,
) -> Option<LiveCapture> {
    match outcome {
        Some(problem) => Some(LiveCapture {
            step,
            problem: Some(problem),
        }),
        None if troubled => Some(LiveCapture {
            step,
            problem: None,
        }),
        None => None,
    }
}

/// A report generation moved to a new phase (reading the sessions, a saved report answers it,
/// the generator is writing, saving). Sent as `insight-progress`; `run` is the number the
/// window gave the generation when it asked for it.
#[derive(Debug, Clone, Serialize, Deserialize, specta::Type, Event)]
pub struct InsightProgress {
    pub run: u32,
    pub phase: cairn_core::insights::Phase,
}

/// A second launch of the app handed over a `cairn://` link (already checked by
/// [`crate::links::validate`]; the window's router validates its parameters): open it. Sent as
/// `open-link`.
#[derive(Debug, Clone, Serialize, Deserialize, specta::Type, Event)]
pub struct OpenLink {
    pub link: String,
}

/// A second launch of the app passed a link the shell refused ([`crate::links::validate`]): the
/// window says why, in `reason` ("it names no place in Cairn"), never repeating the link, which
/// may hold anything. Sent as `link-refused`.
#[derive(Debug, Clone, Serialize, Deserialize, specta::Type, Event)]
pub struct LinkRefused {
    pub reason: String,
}

/// A sync's progress turned into [`SyncProgress`] events, at most one `advance` per
/// [`Emitter::INTERVAL_MS`] so a fast sync does not flood the IPC channel.
pub struct Emitter<R: Runtime> {
    app: AppHandle<R>,
    epoch: Instant,
    files: AtomicU64,
    total: AtomicU64,
    done: AtomicU64,
    last_emit_ms: AtomicU64,
}

impl<R: Runtime> Emitter<R> {
    const INTERVAL_MS: u64 = 80;

    pub fn new(app: AppHandle<R>) -> Emitter<R> {
        Emitter {
            app,
            epoch: Instant::now(),
            files: AtomicU64::new(0),
            total: AtomicU64::new(0),
            done: AtomicU64::new(0),
            last_emit_ms: AtomicU64::new(0),
        }
    }

    fn send(&self, phase: SyncPhase) {
        let event = SyncProgress {
            phase,
            files: u32::try_from(self.files.load(Ordering::Relaxed)).unwrap_or(u32::MAX),
            bytes_total: self.total.load(Ordering::Relaxed) as f64,
            bytes_done: self.done.load(Ordering::Relaxed) as f64,
        };
        // A window that is gone cannot show progress; the sync itself goes on.
        let _ = event.emit(&self.app);
    }
}

impl<R: Runtime> Progress for Emitter<R> {
    fn start(&self, files: u64, bytes: u64) {
        self.files.store(files, Ordering::Relaxed);
        self.total.store(bytes, Ordering::Relaxed);
        self.done.store(0, Ordering::Relaxed);
        self.send(SyncPhase::Start);
    }

    fn advance(&self, bytes: u64) {
        self.done.fetch_add(bytes, Ordering::Relaxed);
        let now = u64::try_from(self.epoch.elapsed().as_millis()).unwrap_or(u64::MAX);
        let last = self.last_emit_ms.load(Ordering::Relaxed);
        if now.saturating_sub(last) >= Self::INTERVAL_MS
            && self
                .last_emit_ms
                .compare_exchange(last, now, Ordering::AcqRel, Ordering::Relaxed)
                .is_ok()
        {
            self.send(SyncPhase::Advance);
        }
    }

    fn finish(&self) {
        self.send(SyncPhase::Finish);
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use cairn_core::error::NoRoom;

    use super::*;

    /// A capture that failed for want of room is said in the window's words, one line, cleaned
    /// of control characters a path may hold, and cut; a repeat is said again (the window
    /// coalesces), and the step's next success is said once.
    #[test]
    fn a_failed_live_capture_is_told_cleaned_and_its_end_once() {
        let dir = PathBuf::from(format!("/data/\u{1b}[31mred/{}", "deep/".repeat(200)));
        let e = Error::DiskFull {
            dir: dir.clone(),
            file: dir.join("cairn.db"),
            why: NoRoom::DiskFull,
        };
        let problem = live_problem(&e);
        assert_eq!(problem.kind, ErrorKind::NoRoom);
        assert!(
            problem
                .message
                .starts_with("cannot write to the data dir /data/red/deep/"),
            "{}",
            problem.message
        );
        assert!(!problem.message.contains('\u{1b}'));
        assert!(problem.message.chars().count() <= LIVE_MESSAGE_MAX + 1);
        assert!(problem.message.ends_with('…'));
        let hint = problem.hint.clone().expect("the fix");
        assert!(!hint.contains("--data-dir"), "{hint}");

        let told = after_step(LiveStep::Capture, Some(problem.clone()), false).unwrap();
        assert_eq!(told.problem.as_ref(), Some(&problem));
        let again = after_step(LiveStep::Capture, Some(problem), true).unwrap();
        assert!(again.problem.is_some());
        let cleared = after_step(LiveStep::Capture, None, true).unwrap();
        assert_eq!(cleared.step, LiveStep::Capture);
        assert!(cleared.problem.is_none());
        assert!(after_step(LiveStep::Capture, None, false).is_none());
    }

    /// A wait for the capture lock names who holds it, says a stopped one is stopped, and
    /// that capture goes on by itself.
    #[test]
    fn a_wait_for_the_lock_names_its_holder_and_that_capture_resumes() {
        let lock = PathBuf::from("/data/capture.lock");
        let stopped = LockHolder {
            pid: 4242,
            command: "cairn sync".into(),
            stopped: true,
        };
        let said = waiting_problem(&lock, Some(&stopped));
        assert_eq!(said.kind, ErrorKind::Locked);
        assert!(
            said.message.contains("`cairn sync` (process 4242)"),
            "{}",
            said.message
        );
        assert!(said.message.contains("is stopped"), "{}", said.message);
        let hint = said.hint.unwrap();
        assert!(hint.contains("resumes by itself"), "{hint}");
        assert!(hint.contains("`fg`"), "{hint}");

        let unknown = waiting_problem(&lock, None);
        assert!(
            unknown.message.contains("another Cairn capture"),
            "{}",
            unknown.message
        );
        assert!(unknown.hint.unwrap().contains("resumes by itself"));
    }
}

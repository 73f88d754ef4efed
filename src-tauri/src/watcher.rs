//! Live capture: watch the agents' source dirs and capture the transcripts that change.
//!
//! Event-driven end to end, so an idle window costs no CPU: notify's inotify thread sleeps in
//! the kernel, and the debounce thread blocks on its channel with no timeout until the first
//! event of a burst arrives. It then collects the burst (quiet for [`QUIET`], or at most
//! [`MAX_BATCH`] while an agent keeps writing), maps the changed `.jsonl` and `.json` paths
//! (Gemini CLI's session documents, Cline-family task logs), Aider's Markdown histories and
//! agents' databases (`.db`, `.vscdb`, `.sqlite3`, written directly or through their `-wal`) to
//! transcript files with the
//! core's own `transcript_of_change` (a changed OpenCode part file is its session's), captures
//! only those, and tells the window through
//! [`ArchiveChanged`].
//!
//! What is watched is the core's [`Cairn::watch_dirs`](cairn_core::Cairn::watch_dirs): the source
//! dirs' trees, and in every repository the archive knows the folder of Aider's history and of
//! Crush's database (alone, not the repository's tree), as the core's [`WatchPlan`] lays them
//! out: a folder that does not exist yet (a repository's `.crush` before Crush first runs
//! there, an agent installed after the window opened) is waited for from its nearest existing
//! ancestor, watched alone; when it appears, the plan is made again, the folder is watched,
//! and what the agent already wrote in it is captured. A watched folder that is deleted or moved
//! away (with its watch) makes the plan again too, so it is waited for the same way and watched
//! again when it comes back.
//!
//! What goes wrong is told to the window as a [`LiveCapture`] event, never only on stderr: a
//! capture that failed (a full disk, a database that cannot be written), a wait for the capture
//! lock that lasts (who holds it, and that capture goes on by itself), a folder that cannot be
//! watched. Each failure is sent as it happens (the window coalesces repeats), and the step's
//! next success is sent once, so the window clears what it showed.
//!
//! Dropping the [`Watch`] drops the notify watcher (the thread holds it only weakly, for the
//! moment it adds a folder), which closes the channel and ends the thread.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::{Duration, Instant};

use cairn_core::archive::capture::Progress;
use cairn_core::archive::discover::{
    FoundFile, WatchDir, WatchPlan, holds, present, transcript_of_change,
};
use cairn_core::archive::sources::aider;
use cairn_core::archive::{Agent, recognise};
use cairn_core::{ErrorKind, ErrorReport};
use notify::{EventKind, RecommendedWatcher, RecursiveMode, Watcher as _};
use tauri::{AppHandle, Manager, Runtime};
use tauri_specta::Event as _;

use crate::backend::Backend;
use crate::events::{
    ArchiveChanged, ChangeCause, LiveStep, LockHolder, after_step, bounded, live_problem,
    waiting_problem,
};

/// A burst is over after this long without events.
const QUIET: Duration = Duration::from_millis(400);
/// A burst is captured at least this often while an agent keeps writing.
const MAX_BATCH: Duration = Duration::from_secs(2);
/// A wait for the capture lock is told to the window only when it lasts this long: an agent's
/// hook (`cairn hook`) holds the lock for a moment at every turn, which is no problem to show.
const WAIT_UNSAID: Duration = Duration::from_secs(3);

/// A running watch. Dropping it stops watching.
pub struct Watch {
    _watcher: Arc<Mutex<RecommendedWatcher>>,
    /// The source folders watched from the start (those that existed).
    pub dirs: Vec<PathBuf>,
}

type Events = mpsc::Receiver<notify::Result<notify::Event>>;

/// Watch `dirs` (each with the agent whose transcripts it holds) for the window `app`.
pub fn start<R: Runtime>(app: AppHandle<R>, dirs: Vec<WatchDir>) -> Result<Watch, String> {
    let (tx, rx) = mpsc::channel::<notify::Result<notify::Event>>();
    let watcher = notify::recommended_watcher(tx)
        .map_err(|e| format!("cannot watch the source dirs: {e}"))?;
    let watcher = Arc::new(Mutex::new(watcher));
    let plan = WatchPlan::new(&dirs);
    let (watching, failed) = apply(&watcher, &WatchPlan::default(), &plan);
    let mut started: Vec<PathBuf> = Vec::new();
    for dir in &dirs {
        if watching.iter().any(|(p, _)| *p == dir.path) && !started.contains(&dir.path) {
            started.push(dir.path.clone());
        }
    }
    let weak = Arc::downgrade(&watcher);
    let told = Arc::new(Told::new(app));
    // A new watch (Settings changed the folders) starts from what this one found: the window
    // forgets a problem of the watch before it, or hears this one's.
    told.tell(LiveStep::Watch, watch_problem(&failed));
    std::thread::Builder::new()
        .name("cairn-watch".into())
        .spawn(move || debounce_loop(&told, &weak, &dirs, plan, &rx))
        .map_err(|e| format!("cannot start the watcher thread: {e}"))?;
    Ok(Watch {
        _watcher: watcher,
        dirs: started,
    })
}

/// Move the watches from plan `from` to plan `to`; the watches added (those the system took),
/// and why the others were not.
fn apply(
    watcher: &Mutex<RecommendedWatcher>,
    from: &WatchPlan,
    to: &WatchPlan,
) -> (Vec<(PathBuf, bool)>, Vec<WatchFailure>) {
    let (dropped, added) = from.changes(to);
    let mut watcher = watcher.lock().unwrap_or_else(PoisonError::into_inner);
    for path in dropped {
        // A folder that went away took its watch with it: nothing to undo.
        let _ = watcher.unwatch(&path);
    }
    let mut watching = Vec::new();
    let mut failed = Vec::new();
    for (path, recursive) in added {
        let mode = if recursive {
            RecursiveMode::Recursive
        } else {
            RecursiveMode::NonRecursive
        };
        match watcher.watch(&path, mode) {
            Ok(()) => watching.push((path, recursive)),
            Err(e) => failed.push(WatchFailure::of(&path, &e)),
        }
    }
    (watching, failed)
}

/// A folder live capture cannot follow: one the system would not watch, or one that appeared
/// and could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
struct WatchFailure {
    message: String,
    /// The system's limit on watches is reached (on Linux, `fs.inotify.max_user_watches`).
    limit: bool,
}

impl WatchFailure {
    fn of(path: &Path, e: &notify::Error) -> WatchFailure {
        // inotify says its limit as ENOSPC, "No space left on device", which reads as a full
        // disk: it is said as the limit it is.
        let limit = match &e.kind {
            notify::ErrorKind::MaxFilesWatch => true,
            notify::ErrorKind::Io(io) => io.kind() == std::io::ErrorKind::StorageFull,
            _ => false,
        };
        let why = if limit {
            "the system's limit on watched folders is reached".to_owned()
        } else {
            e.to_string()
        };
        WatchFailure {
            message: format!("cannot watch {}: {why}", path.display()),
            limit,
        }
    }
}

/// One problem for the folders live capture cannot follow (none: it follows them all).
fn watch_problem(failed: &[WatchFailure]) -> Option<ErrorReport> {
    let first = failed.first()?;
    let message = match failed.len() {
        1 => format!(
            "{}: new transcripts there are captured only by a sync",
            first.message
        ),
        n => format!(
            "{n} folders cannot be followed live, so their new transcripts are captured only by a sync; the first: {}",
            first.message
        ),
    };
    let hint = if failed.iter().any(|f| f.limit) {
        "Raise the limit (`sudo sysctl fs.inotify.max_user_watches=524288`), then change the folders in Settings or reopen the window; press Sync meanwhile."
    } else {
        "Press Sync to capture what agents wrote there; this clears once the folders can be followed again."
    };
    Some(bounded(
        ErrorReport::new(ErrorKind::Io, message).with_hint(hint),
    ))
}

/// What the window was told of each step, and the way to tell it. A step starts as troubled, so
/// its first success after a watch began clears what an earlier watch left on screen.
struct Told<R: Runtime> {
    app: AppHandle<R>,
    capture: AtomicBool,
    watch: AtomicBool,
    /// Captures ended, bumped as the end is told: a wait for the lock in a capture that has
    /// ended is not told (held while a wait is told, so the two cannot cross).
    captures: Mutex<u64>,
}

impl<R: Runtime> Told<R> {
    fn new(app: AppHandle<R>) -> Told<R> {
        Told {
            app,
            capture: AtomicBool::new(true),
            watch: AtomicBool::new(true),
            captures: Mutex::new(0),
        }
    }

    fn troubled(&self, step: LiveStep) -> &AtomicBool {
        match step {
            LiveStep::Capture => &self.capture,
            LiveStep::Watch => &self.watch,
        }
    }

    fn ended(&self) -> std::sync::MutexGuard<'_, u64> {
        self.captures.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Tell the window how `step` went (`problem`: what went wrong), when there is news.
    fn tell(&self, step: LiveStep, problem: Option<ErrorReport>) {
        let troubled = self
            .troubled(step)
            .swap(problem.is_some(), Ordering::AcqRel);
        if let Some(event) = after_step(step, problem, troubled) {
            // A window that is gone hears nothing; capture goes on.
            let _ = event.emit(&self.app);
        }
    }
}

/// The capture's progress as the watcher hears it: only a wait for the capture lock, told when
/// it lasts [`WAIT_UNSAID`] (the capture has not ended by then).
struct Waits<R: Runtime> {
    told: Arc<Told<R>>,
}

impl<R: Runtime> Progress for Waits<R> {
    fn waiting(&self, lock: &Path) {
        let holder = LockHolder::of(lock);
        // The window's own sync holds it (the Sync button): live capture follows it, as the
        // window shows.
        if holder.as_ref().is_some_and(|h| h.pid == std::process::id()) {
            return;
        }
        let problem = waiting_problem(lock, holder.as_ref());
        let told = Arc::clone(&self.told);
        let during = *told.ended();
        let _ = std::thread::Builder::new()
            .name("cairn-watch-wait".into())
            .spawn(move || {
                std::thread::sleep(WAIT_UNSAID);
                let ended = told.ended();
                if *ended == during {
                    told.tell(LiveStep::Capture, Some(problem));
                }
            });
    }
}

fn debounce_loop<R: Runtime>(
    told: &Arc<Told<R>>,
    watcher: &Weak<Mutex<RecommendedWatcher>>,
    watch_dirs: &[WatchDir],
    mut plan: WatchPlan,
    rx: &Events,
) {
    let dirs: Vec<(Agent, PathBuf)> = watch_dirs
        .iter()
        .map(|d| (d.agent, d.path.clone()))
        .collect();
    // Blocks without a timeout while idle: no wake-ups, no polling.
    while let Ok(first) = rx.recv() {
        let mut seen = Seen::default();
        collect(first, &mut seen);
        let burst = Instant::now();
        loop {
            let left = MAX_BATCH.saturating_sub(burst.elapsed());
            if left.is_zero() {
                break;
            }
            match rx.recv_timeout(QUIET.min(left)) {
                Ok(event) => collect(event, &mut seen),
                Err(RecvTimeoutError::Timeout) => break,
                Err(RecvTimeoutError::Disconnected) => return,
            }
        }
        let mut files = transcripts(&dirs, &seen.changed);
        if seen.created.iter().any(|p| plan.awaits(p)) || seen.gone.iter().any(|p| plan.lost(p)) {
            // The watch was dropped meanwhile: the thread ends with the channel.
            let Some(strong) = watcher.upgrade() else {
                return;
            };
            let next = WatchPlan::new(watch_dirs);
            let (added, mut failed) = apply(&strong, &plan, &next);
            drop(strong);
            plan = next;
            files.extend(appeared(watch_dirs, &added, &mut failed));
            told.tell(LiveStep::Watch, watch_problem(&failed));
            files.sort_by(|a, b| a.path.cmp(&b.path));
            files.dedup_by(|a, b| a.path == b.path);
        }
        if !files.is_empty() {
            capture(told, &files);
        }
    }
}

/// The transcripts already in the source folders that just began to be watched; a folder among
/// them that cannot be read is added to `failed`.
fn appeared(
    watch_dirs: &[WatchDir],
    added: &[(PathBuf, bool)],
    failed: &mut Vec<WatchFailure>,
) -> Vec<FoundFile> {
    let mut warnings = Vec::new();
    let files = watch_dirs
        .iter()
        .filter(|d| added.iter().any(|(p, _)| *p == d.path))
        .flat_map(|d| present(d, &mut warnings))
        .collect();
    failed.extend(warnings.into_iter().map(|w| WatchFailure {
        message: format!("{}: {}", w.path.display(), w.message),
        limit: false,
    }));
    files
}

/// What a burst of events touched.
#[derive(Debug, Default)]
struct Seen {
    /// Paths written: the transcripts among them are captured.
    changed: BTreeSet<PathBuf>,
    /// Paths that appeared (created or moved in): a folder the plan waits for may be one.
    created: BTreeSet<PathBuf>,
    /// Paths removed or moved away: a watched folder may be one.
    gone: BTreeSet<PathBuf>,
}

/// Keep the paths of events that can mean new transcript content (`changed`), of every path
/// that appeared (`created`) and of every path removed or moved away (`gone`). Reads (our own
/// capture opens the files) and metadata-only changes are ignored, so capturing never triggers
/// itself.
fn collect(event: notify::Result<notify::Event>, seen: &mut Seen) {
    let Ok(event) = event else { return };
    if matches!(
        event.kind,
        EventKind::Create(_)
            | EventKind::Modify(notify::event::ModifyKind::Name(_))
            | EventKind::Any
    ) {
        seen.created.extend(event.paths.iter().cloned());
    }
    if matches!(
        event.kind,
        EventKind::Remove(_)
            | EventKind::Modify(notify::event::ModifyKind::Name(
                notify::event::RenameMode::From
                    | notify::event::RenameMode::Both
                    | notify::event::RenameMode::Any
            ))
    ) {
        seen.gone.extend(event.paths.iter().cloned());
    }
    let relevant = matches!(
        event.kind,
        EventKind::Create(_)
            | EventKind::Modify(
                notify::event::ModifyKind::Data(_)
                    | notify::event::ModifyKind::Name(_)
                    | notify::event::ModifyKind::Any
            )
            | EventKind::Any
    );
    if !relevant {
        return;
    }
    // An agent's database (Crush's `crush.db`) changes through its write-ahead log: a write to
    // `<db>-wal` is a change of `<db>`. Only a data write counts there: a reader (our capture)
    // may create an empty `-wal`, and its `-shm` is never looked at.
    let data_write = matches!(
        event.kind,
        EventKind::Modify(notify::event::ModifyKind::Data(_) | notify::event::ModifyKind::Any)
    );
    for path in event.paths {
        match path.extension().and_then(|e| e.to_str()) {
            // Cursor's IDE store is `state.vscdb`, kiro-cli's `data.sqlite3`.
            Some("jsonl" | "json" | "db" | "vscdb" | "sqlite3") => {
                seen.changed.insert(path);
            }
            Some("md") if aider::is_history(&path) => {
                seen.changed.insert(path);
            }
            Some("db-wal" | "vscdb-wal" | "sqlite3-wal") if data_write => {
                let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
                if let Some(db) = name.as_deref().and_then(|n| n.strip_suffix("-wal")) {
                    seen.changed.insert(path.with_file_name(db));
                }
            }
            _ => {}
        }
    }
}

/// The changed paths that are transcripts, classified by the agent whose source dir holds them
/// (the most specific dir wins). As in a sync, a symlink is followed only to a file inside that
/// source dir.
pub fn transcripts(dirs: &[(Agent, PathBuf)], changed: &BTreeSet<PathBuf>) -> Vec<FoundFile> {
    changed
        .iter()
        .filter(|path| path.is_file())
        .filter_map(|path| {
            let (agent, dir) =
                recognise::holder(dirs.iter().map(|(a, d)| (*a, d.as_path())), path)?;
            if !holds(dir, path) {
                eprintln!(
                    "cairn-desktop: {} points outside {}: not read",
                    path.display(),
                    dir.display()
                );
                return None;
            }
            // A message or part file of OpenCode's storage tree is read through its session
            // file, which must lie in the same source dir.
            transcript_of_change(agent, path).filter(|found| holds(dir, &found.path))
        })
        .collect()
}

fn capture<R: Runtime>(told: &Arc<Told<R>>, files: &[FoundFile]) {
    let app = &told.app;
    let backend = app.state::<Backend>();
    let Ok(cairn) = backend.cairn() else { return };
    let waits = Waits {
        told: Arc::clone(told),
    };
    let mut result = cairn.capture_paths(files, &waits);
    // A rebuild in another process swapped a new database in while this capture ran: it wrote
    // nothing, and capturing again opens the new one.
    if matches!(result, Err(cairn_core::Error::Rebuilt { .. })) {
        result = cairn.capture_paths(files, &waits);
    }
    {
        let mut ended = told.ended();
        *ended += 1;
        told.tell(LiveStep::Capture, result.as_ref().err().map(live_problem));
    }
    match result {
        Ok(report) => {
            if report.changed() {
                backend.sync_completed();
                crate::meaning::after_capture(app);
                let _ = ArchiveChanged {
                    cause: ChangeCause::Watch,
                    sessions_added: report.sessions_added,
                    sessions_updated: report.sessions_updated,
                    records_added: report.records_added,
                }
                .emit(app);
            }
        }
        // Told to the window above; kept on stderr too, for a bug report.
        Err(e) => eprintln!(
            "cairn-desktop: live capture failed: {}",
            cairn_core::text::printable(&e.to_string())
        ),
    }
}

/// The directories to watch: the archive's effective source dirs and the folders of the
/// in-repository transcripts of the repositories it knows.
pub fn source_dirs(cairn: &cairn_core::Cairn) -> Vec<WatchDir> {
    cairn.watch_dirs()
}

#[cfg(test)]
mod tests {
    use super::*;
    use notify::event::{CreateKind, DataChange, ModifyKind, RemoveKind, RenameMode};

    fn seen_by(kind: EventKind, paths: &[&str]) -> Seen {
        let mut seen = Seen::default();
        let mut event = notify::Event::new(kind);
        for p in paths {
            event = event.add_path(PathBuf::from(p));
        }
        collect(Ok(event), &mut seen);
        seen
    }

    fn changed_by(kind: EventKind, paths: &[&str]) -> Vec<PathBuf> {
        seen_by(kind, paths).changed.into_iter().collect()
    }

    /// A folder deleted, or moved away (both names of a rename within one watch: the old one
    /// went), is gone; a created one appeared; neither is a transcript change by itself.
    #[test]
    fn a_removed_or_moved_folder_is_gone() {
        let removed = seen_by(
            EventKind::Remove(RemoveKind::Folder),
            &["/h/.claude/projects"],
        );
        assert_eq!(
            removed.gone.into_iter().collect::<Vec<_>>(),
            [PathBuf::from("/h/.claude/projects")]
        );
        assert!(removed.changed.is_empty() && removed.created.is_empty());
        let moved = seen_by(
            EventKind::Modify(ModifyKind::Name(RenameMode::From)),
            &["/h/.codex/sessions"],
        );
        assert_eq!(
            moved.gone.into_iter().collect::<Vec<_>>(),
            [PathBuf::from("/h/.codex/sessions")]
        );
        let created = seen_by(EventKind::Create(CreateKind::Folder), &["/h/.claude"]);
        assert!(created.gone.is_empty());
        assert_eq!(created.created.len(), 1);
        let written = seen_by(
            EventKind::Modify(ModifyKind::Data(DataChange::Content)),
            &["/h/.claude/projects/p/s.jsonl"],
        );
        assert!(written.gone.is_empty() && written.created.is_empty());
    }

    /// A folder the system will not watch for its limit is said as that limit, not as a full
    /// disk (inotify's ENOSPC), with the way to raise it; several are said as one problem.
    #[test]
    fn a_folder_that_cannot_be_watched_is_one_problem_with_the_fix() {
        let full = notify::Error::io(std::io::Error::from(std::io::ErrorKind::StorageFull));
        let limit = WatchFailure::of(Path::new("/h/.claude/projects"), &full);
        assert!(limit.limit);
        assert!(!limit.message.contains("No space"), "{}", limit.message);
        let other = WatchFailure::of(
            Path::new("/h/.codex/sessions"),
            &notify::Error::generic("gone"),
        );
        let problem = watch_problem(&[limit, other]).unwrap();
        assert!(
            problem.message.starts_with("2 folders cannot be followed"),
            "{}",
            problem.message
        );
        assert!(problem.hint.unwrap().contains("max_user_watches"));
        assert!(watch_problem(&[]).is_none());
    }

    /// An agent writes its database through the WAL: that is a change of the database. The
    /// files a reader may create (an empty `-wal`, the `-shm`) never trigger a capture, so
    /// capturing a database does not trigger itself. Aider appends to its Markdown history.
    #[test]
    fn a_write_to_a_database_s_wal_or_a_history_is_a_change() {
        let write = EventKind::Modify(ModifyKind::Data(DataChange::Content));
        assert_eq!(
            changed_by(write, &["/p/.crush/crush.db-wal", "/p/.crush/crush.db-shm"]),
            [PathBuf::from("/p/.crush/crush.db")]
        );
        assert_eq!(
            changed_by(
                EventKind::Create(CreateKind::File),
                &["/p/.crush/crush.db-wal"]
            ),
            Vec::<PathBuf>::new()
        );
        assert_eq!(
            changed_by(EventKind::Create(CreateKind::File), &["/p/.crush/crush.db"]),
            [PathBuf::from("/p/.crush/crush.db")]
        );
        // Aider's history is Markdown; other Markdown is not a transcript.
        assert_eq!(
            changed_by(write, &["/r/.aider.chat.history.md", "/r/README.md"]),
            [PathBuf::from("/r/.aider.chat.history.md")]
        );
        // Cursor's IDE store (rollback journal: the file itself is written) and kiro-cli's.
        assert_eq!(
            changed_by(
                write,
                &[
                    "/u/Cursor/User/globalStorage/state.vscdb",
                    "/h/kiro-cli/data.sqlite3-wal",
                    "/u/Cursor/User/globalStorage/state.vscdb-journal",
                ]
            ),
            [
                PathBuf::from("/h/kiro-cli/data.sqlite3"),
                PathBuf::from("/u/Cursor/User/globalStorage/state.vscdb"),
            ]
        );
    }
}

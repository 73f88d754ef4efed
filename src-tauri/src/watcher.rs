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
//! Dropping the [`Watch`] drops the notify watcher (the thread holds it only weakly, for the
//! moment it adds a folder), which closes the channel and ends the thread.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::{Duration, Instant};

use cairn_core::archive::capture::Quiet;
use cairn_core::archive::discover::{
    FoundFile, WatchDir, WatchPlan, holds, present, transcript_of_change,
};
use cairn_core::archive::sources::aider;
use cairn_core::archive::{Agent, recognise};
use notify::{EventKind, RecommendedWatcher, RecursiveMode, Watcher as _};
use tauri::{AppHandle, Manager, Runtime};
use tauri_specta::Event as _;

use crate::backend::Backend;
use crate::events::{ArchiveChanged, ChangeCause};

/// A burst is over after this long without events.
const QUIET: Duration = Duration::from_millis(400);
/// A burst is captured at least this often while an agent keeps writing.
const MAX_BATCH: Duration = Duration::from_secs(2);

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
    let watching = apply(&watcher, &WatchPlan::default(), &plan);
    let mut started: Vec<PathBuf> = Vec::new();
    for dir in &dirs {
        if watching.iter().any(|(p, _)| *p == dir.path) && !started.contains(&dir.path) {
            started.push(dir.path.clone());
        }
    }
    let weak = Arc::downgrade(&watcher);
    std::thread::Builder::new()
        .name("cairn-watch".into())
        .spawn(move || debounce_loop(&app, &weak, &dirs, plan, &rx))
        .map_err(|e| format!("cannot start the watcher thread: {e}"))?;
    Ok(Watch {
        _watcher: watcher,
        dirs: started,
    })
}

/// Move the watches from plan `from` to plan `to`; the watches added (those the system took).
fn apply(
    watcher: &Mutex<RecommendedWatcher>,
    from: &WatchPlan,
    to: &WatchPlan,
) -> Vec<(PathBuf, bool)> {
    let (dropped, added) = from.changes(to);
    let mut watcher = watcher.lock().unwrap_or_else(PoisonError::into_inner);
    for path in dropped {
        // A folder that went away took its watch with it: nothing to undo.
        let _ = watcher.unwatch(&path);
    }
    let mut watching = Vec::new();
    for (path, recursive) in added {
        let mode = if recursive {
            RecursiveMode::Recursive
        } else {
            RecursiveMode::NonRecursive
        };
        match watcher.watch(&path, mode) {
            Ok(()) => watching.push((path, recursive)),
            Err(e) => eprintln!(
                "cairn-desktop: cannot watch {}: {}",
                cairn_core::text::printable(&path.display().to_string()),
                cairn_core::text::printable(&e.to_string())
            ),
        }
    }
    watching
}

fn debounce_loop<R: Runtime>(
    app: &AppHandle<R>,
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
            let added = apply(&strong, &plan, &next);
            drop(strong);
            plan = next;
            files.extend(appeared(watch_dirs, &added));
            files.sort_by(|a, b| a.path.cmp(&b.path));
            files.dedup_by(|a, b| a.path == b.path);
        }
        if !files.is_empty() {
            capture(app, &files);
        }
    }
}

/// The transcripts already in the source folders that just began to be watched.
fn appeared(watch_dirs: &[WatchDir], added: &[(PathBuf, bool)]) -> Vec<FoundFile> {
    let mut warnings = Vec::new();
    let files = watch_dirs
        .iter()
        .filter(|d| added.iter().any(|(p, _)| *p == d.path))
        .flat_map(|d| present(d, &mut warnings))
        .collect();
    for w in warnings {
        eprintln!(
            "cairn-desktop: {}: {}",
            cairn_core::text::printable(&w.path.display().to_string()),
            cairn_core::text::printable(&w.message)
        );
    }
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

fn capture<R: Runtime>(app: &AppHandle<R>, files: &[FoundFile]) {
    let backend = app.state::<Backend>();
    let Ok(cairn) = backend.cairn() else { return };
    match cairn.capture_paths(files, &Quiet) {
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
        Err(e) => eprintln!("cairn-desktop: live capture failed: {e}"),
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

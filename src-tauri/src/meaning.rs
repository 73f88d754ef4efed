//! Search by meaning over the archive's turns, from the window: what Settings shows
//! ([`meaning_status`]), the build a person starts there ([`meaning_build`]), and the catch-up
//! after each sync, live capture or pull ([`after_capture`]) once a person has built the
//! vectors. With an `[embeddings]` endpoint configured the window never builds: that would send
//! the turns' text off the machine, which only `cairn embeddings build` may do.
//!
//! A build runs on a thread of its own with a connection of its own (the core's
//! `embeddings_build`), in committed chunks, so the window keeps reading meanwhile and a build
//! stopped by quitting resumes where it stopped. One build at a time: a capture arriving during
//! one asks for another pass when it ends. [`MeaningProgress`] and [`MeaningFinished`] tell the
//! window. Search and Why use meaning once the vectors are built (`Cairn::searches_by_meaning`;
//! turns captured since wait for the catch-up and are found by words meanwhile), and words
//! alone otherwise.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use cairn_core::semantic::vectors::VectorStore;
use cairn_core::{Cairn, ErrorKind, ErrorReport};
use serde::{Deserialize, Serialize};
use tauri::{AppHandle, Manager, Runtime, State};
use tauri_specta::Event as _;

use crate::backend::Backend;
use crate::commands::with_cairn;

/// Where a running build of the turns' vectors is: `done` of `total` turns embedded. Sent as
/// `meaning-progress`.
#[derive(Debug, Clone, Serialize, Deserialize, specta::Type, tauri_specta::Event)]
pub struct MeaningProgress {
    pub done: u32,
    pub total: u32,
}

/// A build of the turns' vectors ended. Sent as `meaning-finished`.
#[derive(Debug, Clone, Serialize, Deserialize, specta::Type, tauri_specta::Event)]
pub struct MeaningFinished {
    /// Turns embedded by this build.
    pub embedded: u32,
    /// Why it stopped short (the model is missing, the disk is full…), with its hint.
    pub error: Option<ErrorReport>,
}

/// Search by meaning, as Settings shows it.
#[derive(Debug, Clone, Serialize, Deserialize, specta::Type)]
pub struct MeaningStatus {
    /// Why it cannot run on this machine (the model is missing), with the fix; `None` when it can.
    pub problem: Option<String>,
    /// Turns with a vector made by the configured model.
    pub vectors: u32,
    /// Turns waiting for theirs (`None` while the model cannot be found).
    pub waiting: Option<u32>,
    /// Search and Why use meaning now: every turn has its vector.
    pub ready: bool,
    /// New turns get their vectors after each sync (a person built them once, with the local
    /// model).
    pub after_sync: bool,
    /// A build is running.
    pub building: bool,
    /// The last build's failure, until the next one starts.
    pub last_error: Option<ErrorReport>,
}

/// The window's one build and what the last one said.
#[derive(Default)]
pub struct Builds {
    running: AtomicBool,
    /// A capture arrived while a build ran: build once more when it ends.
    again: AtomicBool,
    last_error: Mutex<Option<ErrorReport>>,
}

impl Builds {
    fn last_error(&self) -> Option<ErrorReport> {
        self.last_error
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    fn set_last_error(&self, e: Option<ErrorReport>) {
        *self
            .last_error
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = e;
    }

    /// Claim the one build; `false` (and another pass asked for) when one runs.
    fn begin(&self) -> bool {
        let claimed = self
            .running
            .compare_exchange(false, true, Ordering::AcqRel, Ordering::Acquire)
            .is_ok();
        if !claimed {
            self.again.store(true, Ordering::Release);
        }
        claimed
    }

    /// The build ended: `true` when another pass is due (and claimed), `false` when the builder
    /// may stop.
    fn end(&self) -> bool {
        if self.again.swap(false, Ordering::AcqRel) {
            return true;
        }
        self.running.store(false, Ordering::Release);
        // A capture between the swap and the store found the build still running and asked for
        // another pass: take it, unless a new build already claimed it.
        self.again.load(Ordering::Acquire) && self.begin()
    }

    pub fn running(&self) -> bool {
        self.running.load(Ordering::Acquire)
    }
}

fn status(cairn: &Cairn, builds: &Builds) -> cairn_core::Result<MeaningStatus> {
    let all = cairn.embeddings_status()?;
    let turns = all.stores.iter().find(|s| s.store == VectorStore::Sessions);
    Ok(MeaningStatus {
        problem: all.problem,
        vectors: turns.map_or(0, |s| s.vectors),
        waiting: turns.and_then(|s| s.pending),
        ready: turns.is_some_and(|s| s.fresh),
        after_sync: cairn.embeds_as_captured(VectorStore::Sessions),
        building: builds.running(),
        last_error: builds.last_error(),
    })
}

/// Start a build on its own thread unless one runs (which then runs once more). The thread
/// holds the archive it started with; a reopen (new source dirs) does not change where vectors
/// live.
fn start<R: Runtime>(app: &AppHandle<R>, cairn: Arc<Cairn>) -> Result<(), ErrorReport> {
    let builds = &app.state::<Backend>().meaning;
    if !builds.begin() {
        return Ok(());
    }
    builds.set_last_error(None);
    let app = app.clone();
    let spawned = std::thread::Builder::new()
        .name("cairn-vectors".into())
        .spawn(move || {
            let builds = &app.state::<Backend>().meaning;
            loop {
                let progress = |done: u64, total: u64| {
                    let _ = MeaningProgress {
                        done: u32::try_from(done).unwrap_or(u32::MAX),
                        total: u32::try_from(total).unwrap_or(u32::MAX),
                    }
                    .emit(&app);
                };
                // A panic in the model would leave the build marked running for good: it ends
                // this pass with an error instead.
                let built = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    cairn.embeddings_build(VectorStore::Sessions, false, &progress)
                }));
                let (embedded, error) = match built {
                    Ok(Ok(report)) => (report.embedded, None),
                    Ok(Err(e)) => (0, Some(crate::report::report(&e))),
                    Err(_) => (
                        0,
                        Some(ErrorReport::new(
                            ErrorKind::Internal,
                            "computing the vectors failed (the model panicked); what was stored is kept",
                        )),
                    ),
                };
                builds.set_last_error(error.clone());
                // Ended before it is said: the window reads the status on this event, and a
                // status still saying "building" would keep its panel on "Computing vectors"
                // with no event left to move it. Another pass sends an event of its own.
                let again = builds.end();
                let _ = MeaningFinished { embedded, error }.emit(&app);
                if !again {
                    break;
                }
            }
        });
    if let Err(e) = spawned {
        builds.running.store(false, Ordering::Release);
        return Err(ErrorReport::new(
            ErrorKind::Internal,
            format!("could not start a thread to compute the vectors: {e}"),
        ));
    }
    Ok(())
}

/// After a sync, live capture or pull that brought records: embed the new turns, when a person
/// built the vectors once (`Cairn::embeds_as_captured`).
pub fn after_capture<R: Runtime>(app: &AppHandle<R>) {
    let Ok(cairn) = app.state::<Backend>().cairn() else {
        return;
    };
    if cairn.embeds_as_captured(VectorStore::Sessions)
        && let Err(e) = start(app, cairn)
    {
        eprintln!("cairn-desktop: {e}");
    }
}

/// Search by meaning: whether it runs, the turns with and without vectors, a build under way.
#[tauri::command]
#[specta::specta]
pub async fn meaning_status(backend: State<'_, Backend>) -> Result<MeaningStatus, ErrorReport> {
    let builds = backend.meaning_builds();
    with_cairn(&backend, move |c| status(c, &builds)).await
}

/// Compute the vectors of every turn that lacks one, in the background (progress in
/// `meaning-progress`, the end in `meaning-finished`); returns the status with the build under
/// way. Refused when the model cannot be found, with the fix.
#[tauri::command]
#[specta::specta]
pub async fn meaning_build<R: Runtime>(
    app: AppHandle<R>,
    backend: State<'_, Backend>,
) -> Result<MeaningStatus, ErrorReport> {
    let cairn = backend.cairn()?;
    if !cairn.embeds_locally() {
        // What the window promises: from here, text never leaves the machine.
        return Err(ErrorReport::new(
            ErrorKind::Refused,
            "search by meaning is set to an [embeddings] endpoint in config.toml, and the window never sends text to one",
        )
        .with_hint(
            "run `cairn embeddings build --store sessions` to send the turns' redacted digests there, or remove the endpoint to use the built-in model",
        ));
    }
    // Refused here, with where the model was looked for and how to install it, rather than
    // from the thread a moment later.
    with_cairn(&backend, |c| c.embedder_fingerprint().map(drop)).await?;
    start(&app, Arc::clone(&cairn))?;
    let builds = backend.meaning_builds();
    crate::commands::blocking(move || status(&cairn, &builds)).await
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One build at a time; a capture during one asks for exactly one more pass, and one that
    /// lands as the builder stops is not lost.
    #[test]
    fn a_capture_during_a_build_runs_one_more_pass() {
        let builds = Builds::default();
        assert!(builds.begin());
        assert!(builds.running());
        // Two captures during the build: one more pass, not two.
        assert!(!builds.begin());
        assert!(!builds.begin());
        assert!(builds.end(), "the pass asked for");
        assert!(builds.running());
        assert!(!builds.end(), "nothing more was asked for");
        assert!(!builds.running());
        assert!(builds.begin(), "a new build may start");
        assert!(!builds.end());
    }
}

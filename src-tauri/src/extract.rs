//! Recall extraction in the background: one thread owns the core's pass
//! [`Scheduler`](cairn_core::recall::extract::schedule::Scheduler), hears about finished syncs
//! (the Sync button and live capture), and runs passes when they fall due, telling the window
//! with [`ExtractProgress`] and [`ExtractFinished`] events so the Recall inbox reloads.
//!
//! Idle costs no CPU: the thread blocks on a condition variable until the next pass is due (or
//! forever when nothing is scheduled), and a sync or [`Daemon::stop`] wakes it. It starts only
//! when `[recall.extract]` is enabled in `config.toml`; the policy is read once, when the window
//! is ready.
//!
//! Typed commands: [`extract_status`] (coverage, generations, the last pass) and
//! [`extract_doctor`] (real calls to the configured server).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::Instant;

use cairn_core::ErrorReport;
use cairn_core::recall::extract::schedule::{Outcome, PassKind, Policy, Scheduler};
use cairn_core::recall::extract::{
    Event, ExtractDoctor, ExtractStatus, RunOptions, RunReport, Scope,
};
use serde::{Deserialize, Serialize};
use tauri::{AppHandle, Manager, Runtime, State};
use tauri_specta::Event as _;

use crate::backend::Backend;
use crate::commands::with_cairn;

/// Where a running extraction pass is. Sent as `extract-progress`.
#[derive(Debug, Clone, Serialize, Deserialize, specta::Type, tauri_specta::Event)]
pub struct ExtractProgress {
    pub event: Event,
}

/// An extraction pass ended (its entries wait in the Recall inbox). Sent as `extract-finished`.
#[derive(Debug, Clone, Serialize, Deserialize, specta::Type, tauri_specta::Event)]
pub struct ExtractFinished {
    pub kind: PassKind,
    /// What the pass did, when it ran.
    pub report: Option<RunReport>,
    /// Why it could not run (configuration, lock, database).
    pub error: Option<ErrorReport>,
}

#[derive(Default)]
struct Signals {
    /// Syncs finished since the thread last looked.
    syncs: u32,
    stop: bool,
}

struct Shared {
    signals: Mutex<Signals>,
    wake: Condvar,
    /// Set by [`Daemon::stop`]: the running pass stops after the units in flight.
    cancel: Arc<AtomicBool>,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, Signals> {
        self.signals.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The handle on the scheduler thread. Dropping it does not stop the thread; [`Daemon::stop`]
/// does.
pub struct Daemon {
    shared: Arc<Shared>,
    thread: Mutex<Option<std::thread::JoinHandle<()>>>,
}

impl Daemon {
    /// Start the thread: `run_pass` runs one pass of the given kind (with the cancel flag) and
    /// says how it ended. The startup full pass is due at once.
    pub fn spawn<F>(policy: Policy, run_pass: F) -> std::io::Result<Daemon>
    where
        F: FnMut(PassKind, Arc<AtomicBool>) -> Outcome + Send + 'static,
    {
        let shared = Arc::new(Shared {
            signals: Mutex::new(Signals::default()),
            wake: Condvar::new(),
            cancel: Arc::new(AtomicBool::new(false)),
        });
        let worker = Arc::clone(&shared);
        let thread = std::thread::Builder::new()
            .name("cairn-extract".into())
            .spawn(move || schedule_loop(&worker, policy, run_pass))?;
        Ok(Daemon {
            shared,
            thread: Mutex::new(Some(thread)),
        })
    }

    /// A sync (or a live capture) finished.
    pub fn sync_completed(&self) {
        self.shared.lock().syncs += 1;
        self.shared.wake.notify_one();
    }

    /// Stop the thread (cancelling a running pass) and wait for it.
    pub fn stop(&self) {
        self.shared.lock().stop = true;
        self.shared.cancel.store(true, Ordering::Release);
        self.shared.wake.notify_one();
        let thread = self
            .thread
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Some(thread) = thread {
            let _ = thread.join();
        }
    }
}

fn schedule_loop<F>(shared: &Shared, policy: Policy, mut run_pass: F)
where
    F: FnMut(PassKind, Arc<AtomicBool>) -> Outcome,
{
    let mut scheduler = Scheduler::new(policy, Instant::now());
    let mut signals = shared.lock();
    loop {
        if signals.stop {
            return;
        }
        let now = Instant::now();
        for _ in 0..std::mem::take(&mut signals.syncs) {
            scheduler.sync_completed(now);
        }
        if let Some(kind) = scheduler.poll(now) {
            drop(signals);
            let outcome = run_pass(kind, Arc::clone(&shared.cancel));
            scheduler.finished(Instant::now(), outcome);
            signals = shared.lock();
            continue;
        }
        signals = match scheduler.next_due() {
            Some((at, _)) => {
                let wait = at.saturating_duration_since(now);
                shared
                    .wake
                    .wait_timeout(signals, wait)
                    .unwrap_or_else(PoisonError::into_inner)
                    .0
            }
            None => shared
                .wake
                .wait(signals)
                .unwrap_or_else(PoisonError::into_inner),
        };
    }
}

/// Start the scheduler for the window `app` if extraction is enabled and it is not running yet.
pub fn start<R: Runtime>(app: &AppHandle<R>, backend: &Backend) {
    if backend.extract.get().is_some() {
        return;
    }
    let policy = match backend.cairn().map(|c| c.recall_extract_schedule_policy()) {
        Ok(Ok(Some(policy))) => policy,
        Ok(Ok(None)) | Err(_) => return,
        Ok(Err(e)) => {
            eprintln!("cairn-desktop: recall extraction is not scheduled: {e}");
            return;
        }
    };
    let handle = app.clone();
    match Daemon::spawn(policy, move |kind, cancel| run(&handle, kind, cancel)) {
        Ok(daemon) => {
            if let Err(daemon) = backend.extract.set(daemon) {
                daemon.stop();
            }
        }
        Err(e) => eprintln!("cairn-desktop: cannot start the extraction thread: {e}"),
    }
}

struct Forward<'a, R: Runtime>(&'a AppHandle<R>);

impl<R: Runtime> cairn_core::recall::extract::ExtractProgress for Forward<'_, R> {
    fn event(&self, event: &Event) {
        let _ = ExtractProgress {
            event: event.clone(),
        }
        .emit(self.0);
    }
}

fn run<R: Runtime>(app: &AppHandle<R>, kind: PassKind, cancel: Arc<AtomicBool>) -> Outcome {
    let backend = app.state::<Backend>();
    let result = backend.cairn().and_then(|cairn| {
        let opts = RunOptions {
            scope: Scope::default(),
            cancel: Some(cancel),
        };
        let result = cairn.recall_extract_run(&opts, &Forward(app));
        let outcome = Outcome::of(&result);
        result.map(|r| (r, outcome)).map_err(ErrorReport::from)
    });
    let (event, outcome) = match result {
        Ok((report, outcome)) => (
            ExtractFinished {
                kind,
                report: Some(report),
                error: None,
            },
            outcome,
        ),
        Err(error) => (
            ExtractFinished {
                kind,
                report: None,
                error: Some(error),
            },
            Outcome::EndpointFailed,
        ),
    };
    if let Some(error) = &event.error {
        eprintln!("cairn-desktop: extraction pass failed: {error}");
    }
    let _ = event.emit(app);
    outcome
}

/// Where extraction stands: enabled or not, coverage, generations, the last pass, failures.
#[tauri::command]
#[specta::specta]
pub async fn extract_status(backend: State<'_, Backend>) -> Result<ExtractStatus, ErrorReport> {
    with_cairn(&backend, |c| c.recall_extract_status()).await
}

/// Check the configured extraction server with real calls (`/models`, one tiny extraction).
#[tauri::command]
#[specta::specta]
pub async fn extract_doctor(backend: State<'_, Backend>) -> Result<ExtractDoctor, ErrorReport> {
    with_cairn(&backend, |c| c.recall_extract_doctor()).await
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;
    use std::time::Duration;

    /// Passes due now or in an hour: the test never waits for a timer to fire.
    fn policy() -> Policy {
        Policy {
            debounce: Duration::ZERO,
            quiet_period: Duration::from_secs(3600),
            backstop: Some(Duration::from_secs(3600)),
            failure_backoff: Duration::from_secs(3600),
        }
    }

    /// The longest the test waits for the thread before calling it stuck (not a timing claim).
    const STUCK: Duration = Duration::from_secs(30);

    #[test]
    fn the_thread_runs_the_startup_pass_then_one_pass_per_sync_and_stops() {
        let (tx, rx) = mpsc::channel();
        let daemon = Daemon::spawn(policy(), move |kind, _| {
            let _ = tx.send(kind);
            Outcome::Completed
        })
        .unwrap();
        assert_eq!(rx.recv_timeout(STUCK).unwrap(), PassKind::Full);
        daemon.sync_completed();
        assert_eq!(rx.recv_timeout(STUCK).unwrap(), PassKind::Incremental);
        daemon.stop();
        // Nothing else was due: the thread slept until stopped, then ended.
        assert!(rx.try_recv().is_err());
        assert!(matches!(
            rx.recv_timeout(STUCK),
            Err(mpsc::RecvTimeoutError::Disconnected)
        ));
    }

    #[test]
    fn a_failed_pass_holds_the_next_one_and_stop_cancels() {
        let (tx, rx) = mpsc::channel();
        let daemon = Daemon::spawn(policy(), move |kind, cancel| {
            let _ = tx.send((kind, cancel.load(Ordering::Acquire)));
            Outcome::EndpointFailed
        })
        .unwrap();
        assert_eq!(rx.recv_timeout(STUCK).unwrap(), (PassKind::Full, false));
        // The endpoint failed: a sync does not start a pass before the hour-long backoff.
        daemon.sync_completed();
        daemon.stop();
        assert!(matches!(
            rx.recv_timeout(STUCK),
            Err(mpsc::RecvTimeoutError::Disconnected)
        ));
        assert!(daemon.shared.cancel.load(Ordering::Acquire));
    }
}

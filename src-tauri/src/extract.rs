//! Recall extraction in the background: one thread owns the core's pass
//! [`Scheduler`](cairn_core::recall::extract::schedule::Scheduler), hears about finished syncs
//! (the Sync button and live capture), and runs passes when they fall due, telling the window
//! with [`ExtractProgress`] and [`ExtractFinished`] events so the Recall inbox reloads.
//!
//! Idle costs no CPU: the thread blocks on a condition variable until the next pass is due (or
//! forever when nothing is scheduled), and a sync, [`Daemon::run_now`] or [`Daemon::stop`] wakes
//! it. It runs while `[recall.extract]` is enabled; `schedule` says when passes start on their
//! own: after syncs (the pass [`Scheduler`]), nightly (around 03:00 local time) or never
//! (`manual`: only the Run button). Saving the Settings form replaces the thread, so a new setup
//! applies without a restart.
//!
//! Typed commands: [`extract_status`] (coverage, generations, the last pass), [`extract_doctor`]
//! (real calls to the configured generator), and the Settings form's [`extract_detect`],
//! [`extract_setup`], [`extract_test`], [`extract_preview`], [`extract_save`], [`extract_start`]
//! and [`extract_stop`].

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::Instant;

use cairn_core::config::{ExtractSetup, Schedule};
use cairn_core::llm::detect::DetectedGenerator;
use cairn_core::recall::extract::schedule::{Outcome, PassKind, Policy, Scheduler};
use cairn_core::recall::extract::{
    Event, ExtractDoctor, ExtractStatus, Preview, RunOptions, RunReport, Scope,
};
use cairn_core::{ErrorKind, ErrorReport};
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
    /// A pass was asked for by hand.
    run_now: bool,
    stop: bool,
}

struct Shared {
    signals: Mutex<Signals>,
    wake: Condvar,
    /// Set by [`Daemon::stop`] and [`Daemon::cancel_pass`]: the running pass stops after the
    /// units in flight. Cleared when the next pass starts.
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
    pub fn spawn<F>(policy: Policy, schedule: Schedule, run_pass: F) -> std::io::Result<Daemon>
    where
        F: FnMut(PassKind, Arc<AtomicBool>) -> Outcome + Send + 'static,
    {
        Daemon::spawn_with_nights(
            policy,
            schedule,
            move |now| next_night(schedule, now),
            run_pass,
        )
    }

    /// [`Daemon::spawn`] with `nights` saying when the next nightly pass is due after a moment
    /// (the wall clock's 03:00, or a test's).
    fn spawn_with_nights<N, F>(
        policy: Policy,
        schedule: Schedule,
        nights: N,
        run_pass: F,
    ) -> std::io::Result<Daemon>
    where
        N: FnMut(Instant) -> Option<Instant> + Send + 'static,
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
            .spawn(move || schedule_loop(&worker, policy, schedule, nights, run_pass))?;
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

    /// Run a full pass now (after the running one, if any).
    pub fn run_now(&self) {
        self.shared.lock().run_now = true;
        self.shared.wake.notify_one();
    }

    /// Stop the running pass after the units in flight; the schedule goes on.
    pub fn cancel_pass(&self) {
        self.shared.cancel.store(true, Ordering::Release);
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

fn schedule_loop<N, F>(
    shared: &Shared,
    policy: Policy,
    schedule: Schedule,
    mut nights: N,
    mut run_pass: F,
) where
    N: FnMut(Instant) -> Option<Instant>,
    F: FnMut(PassKind, Arc<AtomicBool>) -> Outcome,
{
    let mut scheduler = Scheduler::new(policy, Instant::now());
    let mut night = nights(Instant::now());
    let mut signals = shared.lock();
    loop {
        if signals.stop {
            return;
        }
        let now = Instant::now();
        let syncs = std::mem::take(&mut signals.syncs);
        let asked = std::mem::take(&mut signals.run_now);
        let mut scheduled = false;
        let due = if asked {
            Some(PassKind::Full)
        } else {
            match schedule {
                Schedule::AfterSync => {
                    for _ in 0..syncs {
                        scheduler.sync_completed(now);
                    }
                    scheduled = true;
                    scheduler.poll(now)
                }
                Schedule::Nightly if night.is_some_and(|at| at <= now) => {
                    night = nights(now);
                    Some(PassKind::Full)
                }
                Schedule::Nightly | Schedule::Manual => None,
            }
        };
        if let Some(kind) = due {
            drop(signals);
            shared.cancel.store(false, Ordering::Release);
            let outcome = run_pass(kind, Arc::clone(&shared.cancel));
            if scheduled {
                scheduler.finished(Instant::now(), outcome);
            }
            signals = shared.lock();
            continue;
        }
        let next = match schedule {
            Schedule::AfterSync => scheduler.next_due().map(|(at, _)| at),
            Schedule::Nightly => night,
            Schedule::Manual => None,
        };
        signals = match next {
            Some(at) => {
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

/// When the next nightly pass is due (`None` unless the schedule is nightly).
fn next_night(schedule: Schedule, now: Instant) -> Option<Instant> {
    (schedule == Schedule::Nightly)
        .then(cairn_core::recall::extract::schedule::until_next_night)
        .flatten()
        .map(|wait| now + wait)
}

/// Start the scheduler for the window `app` if extraction is enabled and it is not running yet.
pub fn start<R: Runtime>(app: &AppHandle<R>, backend: &Backend) {
    let mut slot = backend.extract_daemon();
    if slot.is_some() {
        return;
    }
    let settings = match backend.cairn().map(|c| c.extract_settings()) {
        Ok(Ok(settings)) if settings.enabled => settings,
        Ok(Ok(_)) | Err(_) => return,
        Ok(Err(e)) => {
            eprintln!("cairn-desktop: recall extraction is not scheduled: {e}");
            return;
        }
    };
    let policy = Policy::from_settings(&settings);
    let handle = app.clone();
    match Daemon::spawn(policy, settings.schedule, move |kind, cancel| {
        run(&handle, kind, cancel)
    }) {
        Ok(daemon) => *slot = Some(daemon),
        Err(e) => eprintln!("cairn-desktop: cannot start the extraction thread: {e}"),
    }
}

/// Stop the scheduler (cancelling a running pass) and start it again as the config now says.
fn restart<R: Runtime>(app: &AppHandle<R>, backend: &Backend) {
    let old = backend.extract_daemon().take();
    if let Some(daemon) = old {
        daemon.stop();
    }
    start(app, backend);
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
        result
            .map(|r| (r, outcome))
            .map_err(|e| crate::report::report(&e))
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

/// The generators at hand: agent CLIs on PATH, local servers, API-key variables (by name).
/// Nothing leaves loopback.
#[tauri::command]
#[specta::specta]
pub async fn extract_detect(
    backend: State<'_, Backend>,
) -> Result<Vec<DetectedGenerator>, ErrorReport> {
    with_cairn(&backend, |c| Ok(c.recall_extract_detect())).await
}

/// The Settings form's values: `[recall.extract]` as it is on disk.
#[tauri::command]
#[specta::specta]
pub async fn extract_setup(backend: State<'_, Backend>) -> Result<ExtractSetup, ErrorReport> {
    with_cairn(&backend, |c| c.recall_extract_setup()).await
}

/// One tiny extraction through the form's setup (nothing saved): request, answer, time. The
/// server's model list is shown, not enforced: the form's Save sends nothing, so a model the
/// list does not name is said in the test's `models` check and the probe decides.
#[tauri::command]
#[specta::specta]
pub async fn extract_test(
    backend: State<'_, Backend>,
    setup: ExtractSetup,
) -> Result<ExtractDoctor, ErrorReport> {
    with_cairn(&backend, move |c| c.recall_extract_test(&setup, true)).await
}

/// What a pass would send now: sessions, units, estimated tokens, time and cost.
#[tauri::command]
#[specta::specta]
pub async fn extract_preview(backend: State<'_, Backend>) -> Result<Preview, ErrorReport> {
    with_cairn(&backend, |c| c.recall_extract_preview(&Scope::default())).await
}

/// Write the form's setup into `config.toml` and apply it: the scheduler restarts with it (or
/// stops, when extraction is off).
#[tauri::command]
#[specta::specta]
pub async fn extract_save<R: Runtime>(
    app: AppHandle<R>,
    backend: State<'_, Backend>,
    setup: ExtractSetup,
) -> Result<ExtractSetup, ErrorReport> {
    let saved = with_cairn(&backend, move |c| c.save_recall_extract_setup(&setup)).await?;
    restart(&app, &backend);
    Ok(saved)
}

/// Run a full pass now. Extraction must be on (saved with `enabled`).
#[tauri::command]
#[specta::specta]
pub async fn extract_start<R: Runtime>(
    app: AppHandle<R>,
    backend: State<'_, Backend>,
) -> Result<(), ErrorReport> {
    start(&app, &backend);
    match backend.extract_daemon().as_ref() {
        Some(daemon) => {
            daemon.run_now();
            Ok(())
        }
        None => Err(ErrorReport::new(
            ErrorKind::Invalid,
            "extraction is off: choose a generator, turn it on and save first",
        )
        .with_hint("Settings → Recall extraction")),
    }
}

/// Stop the running pass after the units in flight (what it wrote stays; the next pass
/// resumes). The schedule goes on.
#[tauri::command]
#[specta::specta]
pub async fn extract_stop(backend: State<'_, Backend>) -> Result<(), ErrorReport> {
    if let Some(daemon) = backend.extract_daemon().as_ref() {
        daemon.cancel_pass();
    }
    Ok(())
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
        let daemon = Daemon::spawn(policy(), Schedule::AfterSync, move |kind, _| {
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
    fn a_manual_schedule_runs_only_when_asked() {
        let (tx, rx) = mpsc::channel();
        let daemon = Daemon::spawn(policy(), Schedule::Manual, move |kind, _| {
            let _ = tx.send(kind);
            Outcome::Completed
        })
        .unwrap();
        // No startup pass and no pass after a sync; one when asked.
        daemon.sync_completed();
        daemon.run_now();
        assert_eq!(rx.recv_timeout(STUCK).unwrap(), PassKind::Full);
        daemon.stop();
        assert!(matches!(
            rx.recv_timeout(STUCK),
            Err(mpsc::RecvTimeoutError::Disconnected)
        ));
    }

    #[test]
    fn a_nightly_schedule_runs_when_the_night_comes_and_not_after_syncs() {
        let (tx, rx) = mpsc::channel();
        // The first night is due at once, the second a moment later, then no more.
        let mut nights = 0;
        let daemon = Daemon::spawn_with_nights(
            policy(),
            Schedule::Nightly,
            move |now| {
                nights += 1;
                (nights <= 2).then_some(now)
            },
            move |kind, _| {
                let _ = tx.send(kind);
                Outcome::Completed
            },
        )
        .unwrap();
        assert_eq!(rx.recv_timeout(STUCK).unwrap(), PassKind::Full);
        assert_eq!(rx.recv_timeout(STUCK).unwrap(), PassKind::Full);
        // No startup pass besides the nights, and a sync starts none.
        daemon.sync_completed();
        daemon.stop();
        assert!(matches!(
            rx.recv_timeout(STUCK),
            Err(mpsc::RecvTimeoutError::Disconnected)
        ));
    }

    #[test]
    fn the_next_night_is_within_a_day() {
        let now = Instant::now();
        assert_eq!(next_night(Schedule::Manual, now), None);
        let at = next_night(Schedule::Nightly, now).unwrap();
        assert!(at > now && at <= now + Duration::from_secs(25 * 3600));
    }

    #[test]
    fn a_failed_pass_holds_the_next_one_and_stop_cancels() {
        let (tx, rx) = mpsc::channel();
        let daemon = Daemon::spawn(policy(), Schedule::AfterSync, move |kind, cancel| {
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

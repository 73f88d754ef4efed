//! Typed events the shell sends to the window (tauri-specta derives their names and the
//! TypeScript listeners): sync progress, "the archive changed", a report's generation phases,
//! and a link handed over by a second launch (or why it was refused).

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use cairn_core::archive::capture::Progress;
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

//! Reading the archive again from Settings › Data and retention: the same core call as
//! `cairn reindex`, dry first (what would change) and then for real, with the sync's progress
//! events (a reindex and a sync never run at once from the window).

use cairn_core::{ErrorKind, ErrorReport, ReindexReport, ReindexRequest};
use tauri::{AppHandle, Runtime, State};
use tauri_specta::Event;

use crate::backend::Backend;
use crate::commands::blocking;
use crate::events::{ArchiveChanged, ChangeCause, Emitter};

/// Read the sessions `request` names again from their retained copies (`dry_run`: say what
/// would change, change nothing). Sends `sync-progress` while it reads and, when records
/// changed, `archive-changed` so open views reload.
#[tauri::command]
#[specta::specta]
pub async fn reindex_archive<R: Runtime>(
    app: AppHandle<R>,
    backend: State<'_, Backend>,
    request: ReindexRequest,
) -> Result<ReindexReport, ErrorReport> {
    let cairn = backend.cairn()?;
    if !backend.begin_sync() {
        return Err(ErrorReport::new(ErrorKind::Busy, "a sync is running")
            .with_hint("wait for it to finish"));
    }
    let progress = Emitter::new(app.clone());
    let result = blocking(move || cairn.reindex(&request, &progress)).await;
    backend.end_sync();
    let report = result?;
    if !report.dry_run && report.sessions_changed > 0 {
        // The rebuilt turns need their vectors again.
        crate::meaning::after_capture(&app);
        let _ = ArchiveChanged {
            cause: ChangeCause::Reindex,
            sessions_added: 0,
            sessions_updated: report.sessions_changed,
            records_added: 0,
        }
        .emit(&app);
    }
    Ok(report)
}

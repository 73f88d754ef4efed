//! Correcting a link from the skim timeline ("belongs here", "not related"): the core's
//! `correct_link`, the one `cairn link` / `cairn unlink` call, then `archive-changed`.

use cairn_core::ErrorReport;
use cairn_core::git::correct::{CorrectionAction, LinkCorrection};
use cairn_core::git::targets::Target;
use tauri::{AppHandle, Runtime, State};
use tauri_specta::Event;

use crate::backend::Backend;
use crate::commands::with_cairn;
use crate::events::{ArchiveChanged, ChangeCause};

/// A person's word on session `session_key` and `target`; the core checks the target (it
/// arrives from the webview) and keeps the correction across every relink.
#[tauri::command]
#[specta::specta]
pub async fn correct_link<R: Runtime>(
    app: AppHandle<R>,
    backend: State<'_, Backend>,
    session_key: String,
    target: Target,
    action: CorrectionAction,
    reason: Option<String>,
) -> Result<LinkCorrection, ErrorReport> {
    let correction = with_cairn(&backend, move |c| {
        // No stream to say a wait on: bounded, then `Locked` (the app shows the error).
        c.correct_link(&session_key, &target, action, reason.as_deref(), None)
    })
    .await?;
    let _ = ArchiveChanged {
        cause: ChangeCause::Correct,
        sessions_added: 0,
        sessions_updated: 1,
        records_added: 0,
    }
    .emit(&app);
    Ok(correction)
}

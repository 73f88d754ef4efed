//! Forgetting from the session page: the same list `cairn forget` prints (`forget_preview`),
//! shown before the destructive button, then the core's forget of exactly that list
//! (`forget_sessions`, given the plan the window showed back).

use cairn_core::{ErrorReport, ForgetPlan, ForgetRequest, Forgotten};
use tauri::{AppHandle, Runtime, State};
use tauri_specta::Event;

use crate::backend::Backend;
use crate::commands::with_cairn;
use crate::events::{ArchiveChanged, ChangeCause};

/// Exactly what forgetting `request` would remove; changes nothing.
#[tauri::command]
#[specta::specta]
pub async fn forget_preview(
    backend: State<'_, Backend>,
    request: ForgetRequest,
) -> Result<ForgetPlan, ErrorReport> {
    with_cairn(&backend, move |c| c.forget_preview(&request)).await
}

/// Forget what `plan` lists, the list `forget_preview` of `request` gave and the window showed,
/// and nothing else: a session a sync added since, or a database a rebuild set aside since,
/// is left as no one was asked about it (as `cairn forget` does). The window then says the
/// session is gone, and `archive-changed` makes the other places reload.
#[tauri::command]
#[specta::specta]
pub async fn forget_sessions<R: Runtime>(
    app: AppHandle<R>,
    backend: State<'_, Backend>,
    request: ForgetRequest,
    plan: ForgetPlan,
) -> Result<Forgotten, ErrorReport> {
    let forgotten = with_cairn(&backend, move |c| c.forget_as_planned(&request, &plan)).await?;
    if !forgotten.removed.sessions.is_empty() {
        let _ = ArchiveChanged {
            cause: ChangeCause::Forget,
            sessions_added: 0,
            sessions_updated: 0,
            records_added: 0,
        }
        .emit(&app);
    }
    Ok(forgotten)
}

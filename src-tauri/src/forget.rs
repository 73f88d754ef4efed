//! Forgetting from the session page: the same list `cairn forget` prints (`forget_preview`),
//! shown before the destructive button, then the core's forget (`forget_sessions`).

use cairn_core::{ErrorReport, ForgetPlan, ForgetRequest, Forgotten};
use tauri::State;

use crate::backend::Backend;
use crate::commands::with_cairn;

/// Exactly what forgetting `request` would remove; changes nothing.
#[tauri::command]
#[specta::specta]
pub async fn forget_preview(
    backend: State<'_, Backend>,
    request: ForgetRequest,
) -> Result<ForgetPlan, ErrorReport> {
    with_cairn(&backend, move |c| c.forget_preview(&request)).await
}

/// Forget what `request` names (the window showed `forget_preview`'s list first); the window
/// then says the session is gone.
#[tauri::command]
#[specta::specta]
pub async fn forget_sessions(
    backend: State<'_, Backend>,
    request: ForgetRequest,
) -> Result<Forgotten, ErrorReport> {
    with_cairn(&backend, move |c| c.forget(&request)).await
}

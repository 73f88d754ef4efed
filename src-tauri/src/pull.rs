//! "Pull teammates' sessions" in the branch view: the core's `pull` (the one `cairn pull`
//! calls) in a repository the archive knows, then `archive-changed` when anything arrived.

use cairn_core::ErrorReport;
use cairn_core::git::publish::PullReport;
use tauri::{AppHandle, Runtime, State};
use tauri_specta::Event;

use crate::backend::Backend;
use crate::commands::with_cairn;
use crate::events::{ArchiveChanged, ChangeCause};

/// Fetch what teammates published on `remote` (default `origin`) of the repository at
/// `repo_root` and import what passes the checks. `repo_root` comes from the webview: the core
/// refuses a root the archive does not list, and checks the remote as `cairn pull` does.
#[tauri::command]
#[specta::specta]
pub async fn pull_teammates<R: Runtime>(
    app: AppHandle<R>,
    backend: State<'_, Backend>,
    repo_root: String,
    remote: Option<String>,
) -> Result<PullReport, ErrorReport> {
    let report = with_cairn(&backend, move |c| {
        c.known_repo(&repo_root)?;
        c.pull(
            std::path::Path::new(&repo_root),
            remote.as_deref().unwrap_or("origin"),
        )
    })
    .await?;
    if report.sessions_imported > 0 || report.transcripts_imported > 0 {
        crate::meaning::after_capture(&app);
        let _ = ArchiveChanged {
            cause: ChangeCause::Pull,
            sessions_added: report.transcripts_imported,
            sessions_updated: 0,
            records_added: 0,
        }
        .emit(&app);
    }
    Ok(report)
}

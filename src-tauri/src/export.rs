//! The session page's export: one session (or a turn range) as Markdown, one HTML page, JSON or
//! an ATIF trajectory, written by the core (`Cairn::export_session_into`) into the Downloads
//! folder (else `<data dir>/exports/`) under a name that never replaces a file.

use cairn_core::ErrorReport;
use cairn_core::views::export::{ExportOptions, LeftOut};
use serde::Serialize;
use tauri::State;

use crate::backend::Backend;
use crate::commands::with_cairn;
use crate::insights::export_dir;

/// Where a session export was written, and what it left out.
#[derive(Debug, Clone, Serialize, specta::Type)]
pub struct ExportedSession {
    pub path: String,
    pub file_name: String,
    pub bytes: f64,
    pub left_out: LeftOut,
    /// The same in one sentence, for the window to show.
    pub left_out_text: String,
}

#[tauri::command]
#[specta::specta]
pub async fn session_export(
    backend: State<'_, Backend>,
    key: String,
    options: ExportOptions,
) -> Result<ExportedSession, ErrorReport> {
    let chosen = backend.export_dir().cloned();
    with_cairn(&backend, move |c| {
        let dir = chosen.unwrap_or_else(|| export_dir(dirs::download_dir(), c.data_dir()));
        let (path, export) = c.export_session_into(&key, &options, &dir, None)?;
        Ok(ExportedSession {
            file_name: path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default(),
            path: path.display().to_string(),
            bytes: export.text.len() as f64,
            left_out_text: export.left_out.sentence(),
            left_out: export.left_out,
        })
    })
    .await
}

//! Generated-insights commands: templates, the preview of what the next report reads, the
//! generation itself (with `InsightProgress` events), saved reports and their exports.
//!
//! Generation runs an agent CLI or an endpoint for minutes. It runs on the blocking pool like
//! every other command, and the core holds its store lock only while reading the material and
//! saving the report, so the window's other commands keep answering meanwhile.
//!
//! The webview has no file system access: an export is written here, into the user's Downloads
//! folder (else `<data dir>/exports/`), under a name that never replaces an existing file.

use std::path::{Path, PathBuf};

use cairn_core::ErrorReport;
use cairn_core::insights::render::ExportFormat;
use cairn_core::insights::{
    GenerateRequest, Generated, Insight, InsightSummary, Preview, Template,
};
use serde::Serialize;
use tauri::{AppHandle, Runtime, State};
use tauri_specta::Event as _;

use crate::backend::Backend;
use crate::commands::{blocking, with_cairn};
use crate::events::InsightProgress;

/// The built-in report templates and the user's own.
#[tauri::command]
#[specta::specta]
pub async fn insight_templates(backend: State<'_, Backend>) -> Result<Vec<Template>, ErrorReport> {
    with_cairn(&backend, |c| c.insight_templates()).await
}

/// What a report over `request` would read and send, without sending anything: the slice,
/// the sessions, the prompt's size and text, the redactions, and a saved report that already
/// answers it.
#[tauri::command]
#[specta::specta]
pub async fn insight_preview(
    backend: State<'_, Backend>,
    request: GenerateRequest,
) -> Result<Preview, ErrorReport> {
    with_cairn(&backend, move |c| c.insight_preview(&request)).await
}

/// Generate a report (or return the saved one that answers the same request, unless
/// `request.force`). Sends `InsightProgress { run, phase }` as it goes; `run` is the caller's
/// own number for this generation, so several can run at once.
#[tauri::command]
#[specta::specta]
pub async fn insight_generate<R: Runtime>(
    app: AppHandle<R>,
    backend: State<'_, Backend>,
    run: u32,
    request: GenerateRequest,
) -> Result<Generated, ErrorReport> {
    let cairn = backend.cairn()?;
    blocking(move || {
        cairn.insight_generate(&request, &|phase| {
            // A window that is gone cannot show progress; the generation goes on.
            let _ = InsightProgress { run, phase }.emit(&app);
        })
    })
    .await
}

/// Saved reports, newest first: `search` words must all appear in the title or the report.
#[tauri::command]
#[specta::specta]
pub async fn insight_list(
    backend: State<'_, Backend>,
    search: Option<String>,
    starred: bool,
    limit: u32,
) -> Result<Vec<InsightSummary>, ErrorReport> {
    with_cairn(&backend, move |c| {
        c.insight_list(search.as_deref(), starred, limit)
    })
    .await
}

/// One saved report with its slice, generator and sessions.
#[tauri::command]
#[specta::specta]
pub async fn insight_get(backend: State<'_, Backend>, id: i64) -> Result<Insight, ErrorReport> {
    with_cairn(&backend, move |c| c.insight_get(id)).await
}

/// A report's Markdown rendered by the core as safe HTML: raw HTML escaped, links only
/// `http(s)`, `mailto`, `cairn` and in-page, images reduced to their alt text.
#[tauri::command]
#[specta::specta]
pub async fn insight_html(backend: State<'_, Backend>, id: i64) -> Result<String, ErrorReport> {
    with_cairn(&backend, move |c| c.insight_html(id)).await
}

#[tauri::command]
#[specta::specta]
pub async fn insight_star(
    backend: State<'_, Backend>,
    id: i64,
    starred: bool,
) -> Result<(), ErrorReport> {
    with_cairn(&backend, move |c| c.insight_star(id, starred)).await
}

#[tauri::command]
#[specta::specta]
pub async fn insight_rename(
    backend: State<'_, Backend>,
    id: i64,
    title: String,
) -> Result<(), ErrorReport> {
    with_cairn(&backend, move |c| c.insight_rename(id, &title)).await
}

#[tauri::command]
#[specta::specta]
pub async fn insight_delete(backend: State<'_, Backend>, id: i64) -> Result<(), ErrorReport> {
    with_cairn(&backend, move |c| c.insight_delete(id)).await
}

/// Where an export was written.
#[derive(Debug, Clone, Serialize, specta::Type)]
pub struct ExportedReport {
    /// The file written.
    pub path: String,
    pub file_name: String,
    /// Its size in bytes.
    pub bytes: f64,
}

/// Write a report as Markdown, standalone HTML or JSON (through the core's outbound redactor)
/// into the Downloads folder, else `<data dir>/exports/`; returns the file written.
#[tauri::command]
#[specta::specta]
pub async fn insight_export(
    backend: State<'_, Backend>,
    id: i64,
    format: ExportFormat,
) -> Result<ExportedReport, ErrorReport> {
    let chosen = backend.export_dir().cloned();
    with_cairn(&backend, move |c| {
        let dir = chosen.unwrap_or_else(|| export_dir(dirs::download_dir(), c.data_dir()));
        let (path, bytes) = c.insight_export_into(id, format, &dir, None)?;
        Ok(ExportedReport {
            file_name: path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default(),
            path: path.display().to_string(),
            bytes: bytes as f64,
        })
    })
    .await
}

/// The Downloads folder when the desktop has one, else the data dir's `exports/`.
pub fn export_dir(downloads: Option<PathBuf>, data_dir: &Path) -> PathBuf {
    downloads
        .filter(|d| d.is_dir())
        .unwrap_or_else(|| data_dir.join("exports"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exports_go_to_downloads_when_it_exists() {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("data");
        assert_eq!(export_dir(None, &data), data.join("exports"));
        assert_eq!(
            export_dir(Some(dir.path().join("missing")), &data),
            data.join("exports")
        );
        assert_eq!(
            export_dir(Some(dir.path().to_owned()), &data),
            dir.path().to_owned()
        );
    }
}

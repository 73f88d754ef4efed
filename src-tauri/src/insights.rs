//! Generated-insights commands: templates, the preview of what the next report reads, the
//! generation itself (with `InsightProgress` events), saved reports and their exports.
//!
//! Generation runs an agent CLI or an endpoint for minutes. It runs on the blocking pool like
//! every other command, and the core holds its store lock only while reading the material and
//! saving the report, so the window's other commands keep answering meanwhile.
//!
//! The webview has no file system access: an export is written here, into the user's Downloads
//! folder (else `<data dir>/exports/`), under a name that never replaces an existing file.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use cairn_core::Error;
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
        let (text, name) = c.insight_export(id, format)?;
        let dir = chosen.unwrap_or_else(|| export_dir(dirs::download_dir(), c.data_dir()));
        let path = write_new(&dir, &name, text.as_bytes())?;
        Ok(ExportedReport {
            file_name: path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or(name),
            path: path.display().to_string(),
            bytes: text.len() as f64,
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

/// Write `bytes` to `dir/name`, or `dir/<stem> (2).<ext>` and so on when that exists: an
/// export never replaces a file. Creates `dir` if needed (0700); the export is 0600.
pub fn write_new(dir: &Path, name: &str, bytes: &[u8]) -> cairn_core::Result<PathBuf> {
    let write_err = |path: &Path, source| Error::Write {
        path: path.to_owned(),
        source,
    };
    cairn_core::private::create_dir_all(dir).map_err(|e| write_err(dir, e))?;
    let (stem, ext) = match name.rsplit_once('.') {
        Some((stem, ext)) if !stem.is_empty() => (stem, Some(ext)),
        _ => (name, None),
    };
    for n in 1..=999u32 {
        let candidate = match (n, ext) {
            (1, _) => name.to_owned(),
            (_, Some(ext)) => format!("{stem} ({n}).{ext}"),
            (_, None) => format!("{stem} ({n})"),
        };
        let path = dir.join(candidate);
        // `create_new` fails when the file exists, so two exports never race onto one name.
        match cairn_core::private::open_options()
            .write(true)
            .create_new(true)
            .open(&path)
        {
            Ok(mut file) => {
                file.write_all(bytes).map_err(|e| write_err(&path, e))?;
                return Ok(path);
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(write_err(&path, e)),
        }
    }
    Err(Error::Invalid(format!(
        "{} already holds 999 exports named {name}; move some away and export again",
        dir.display()
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exports_never_replace_a_file() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("new");
        let first = write_new(&out, "insight-1-weekly.md", b"one").unwrap();
        let second = write_new(&out, "insight-1-weekly.md", b"two").unwrap();
        assert_eq!(first, out.join("insight-1-weekly.md"));
        assert_eq!(second, out.join("insight-1-weekly (2).md"));
        assert_eq!(std::fs::read_to_string(&first).unwrap(), "one");
        assert_eq!(std::fs::read_to_string(&second).unwrap(), "two");
        // A report holds transcript text: private, like the data dir it may be written into.
        use std::os::unix::fs::PermissionsExt;
        let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&second), 0o600);
        assert_eq!(mode(&out), 0o700);
    }

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

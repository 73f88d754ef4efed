//! The typed commands the webview may call. Each one is a call into the `cairn-core` facade
//! plus a conversion of its error to the one-line message the UI shows; nothing else.
//!
//! Core calls are blocking SQLite reads, so they run on the blocking pool
//! ([`tauri::async_runtime::spawn_blocking`]) and never on the thread that drives the window.

use std::sync::Arc;

use cairn_core::Cairn;
use cairn_core::views::sessions::{SessionQuery, SessionSummary};
use serde::Serialize;
use tauri::State;

/// What the window holds on to: the archive, or why it could not be opened.
///
/// A failed open does not stop the window from starting; every command answers with the
/// reason instead, so the user sees it in the UI (with a retry) rather than a dead process.
pub struct Backend {
    data_dir: Option<std::path::PathBuf>,
    cairn: Result<Arc<Cairn>, String>,
}

impl Backend {
    /// Open the archive in `CAIRN_DATA_DIR`, else the platform data dir.
    pub fn from_env() -> Backend {
        match Cairn::default_data_dir() {
            Some(dir) => Backend::open(dir),
            None => Backend {
                data_dir: None,
                cairn: Err(
                    "no data directory: set CAIRN_DATA_DIR to the folder Cairn should use"
                        .to_owned(),
                ),
            },
        }
    }

    /// Open (creating if needed) the archive in `data_dir`.
    pub fn open(data_dir: std::path::PathBuf) -> Backend {
        let cairn = Cairn::open(data_dir.clone())
            .map(Arc::new)
            .map_err(|e| e.to_string());
        Backend {
            data_dir: Some(data_dir),
            cairn,
        }
    }

    fn cairn(&self) -> Result<Arc<Cairn>, String> {
        self.cairn.clone()
    }
}

/// Run a core call on the blocking pool and flatten both failure layers into the UI's message.
async fn blocking<T, F>(f: F) -> Result<T, String>
where
    T: Send + 'static,
    F: FnOnce() -> cairn_core::Result<T> + Send + 'static,
{
    match tauri::async_runtime::spawn_blocking(f).await {
        Ok(result) => result.map_err(|e| e.to_string()),
        Err(join) => Err(format!("internal error while reading the archive: {join}")),
    }
}

/// Sessions in the archive, newest first, filtered by `query`.
#[tauri::command]
#[specta::specta]
pub async fn list_sessions(
    backend: State<'_, Backend>,
    query: SessionQuery,
) -> Result<Vec<SessionSummary>, String> {
    let cairn = backend.cairn()?;
    blocking(move || cairn.sessions(&query)).await
}

/// Facts about the running app, for the window's footer and for bug reports.
#[derive(Debug, Clone, Serialize, specta::Type)]
pub struct AppInfo {
    /// The data directory in use (empty when none could be determined).
    pub data_dir: String,
    /// The desktop app's version.
    pub version: String,
}

/// Which data directory and version this window runs with.
#[tauri::command]
#[specta::specta]
pub fn app_info(backend: State<'_, Backend>) -> AppInfo {
    AppInfo {
        data_dir: backend
            .data_dir
            .as_ref()
            .map(|d| d.display().to_string())
            .unwrap_or_default(),
        version: env!("CARGO_PKG_VERSION").to_owned(),
    }
}

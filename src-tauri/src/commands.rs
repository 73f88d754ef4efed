//! The typed commands the webview may call. Each one is a call into the `cairn-core` facade
//! plus a conversion of its error to the one-line message the UI shows; nothing else.
//!
//! Core calls are blocking SQLite reads, so they run on the blocking pool
//! ([`tauri::async_runtime::spawn_blocking`]) and never on the thread that drives the window.

use std::path::PathBuf;
use std::sync::Arc;

use cairn_core::archive::Agent;
use cairn_core::archive::capture::SyncReport;
use cairn_core::archive::discover::DirOrigin;
use cairn_core::doctor::DoctorReport;
use cairn_core::git::targets::{Target, TargetKind};
use cairn_core::hooks::{HookInstall, HookStatus};
use cairn_core::views::branches::RepoBranches;
use cairn_core::views::search::{SearchHit, SearchQuery};
use cairn_core::views::session::SessionDetail;
use cairn_core::views::sessions::{SessionQuery, SessionSummary};
use cairn_core::views::show::{SessionTimeline, TurnRecords};
use cairn_core::views::skim::{SkimQuery, SkimView};
use cairn_core::{Cairn, OutboundPreview, SyncOptions};
use serde::{Deserialize, Serialize};
use tauri::{AppHandle, Runtime, State};
use tauri_specta::Event as _;

pub use crate::backend::Backend;
use crate::events::{ArchiveChanged, ChangeCause, Emitter};
use crate::watcher;

/// Run a core call on the blocking pool and flatten both failure layers into the UI's message.
pub(crate) async fn blocking<T, F>(f: F) -> Result<T, String>
where
    T: Send + 'static,
    F: FnOnce() -> cairn_core::Result<T> + Send + 'static,
{
    match tauri::async_runtime::spawn_blocking(f).await {
        Ok(result) => result.map_err(|e| e.to_string()),
        Err(join) => Err(format!("internal error while reading the archive: {join}")),
    }
}

/// [`blocking`] for a call on the opened archive.
pub(crate) async fn with_cairn<T, F>(backend: &Backend, f: F) -> Result<T, String>
where
    T: Send + 'static,
    F: FnOnce(&Cairn) -> cairn_core::Result<T> + Send + 'static,
{
    let cairn = backend.cairn()?;
    blocking(move || f(&cairn)).await
}

/// A full turn or timeline: the views are windowed ("the last N"), the window wants all of it
/// and virtualises the rendering instead.
const ALL: u32 = u32::MAX;

/// Sessions in the archive, newest first, filtered by `query`.
#[tauri::command]
#[specta::specta]
pub async fn list_sessions(
    backend: State<'_, Backend>,
    query: SessionQuery,
) -> Result<Vec<SessionSummary>, String> {
    with_cairn(&backend, move |c| c.sessions(&query)).await
}

/// Repositories and their branches with agent activity, most recently active first.
#[tauri::command]
#[specta::specta]
pub async fn list_branches(backend: State<'_, Backend>) -> Result<Vec<RepoBranches>, String> {
    with_cairn(&backend, Cairn::branches).await
}

/// The skim timeline of a branch, given its target key (`ref:refs/heads/<name>`). With
/// `include_weak`, sessions that only ran while the branch was checked out come last. With
/// `repo_root` (a root from `list_branches`), only that repository's sessions: `main` of two
/// repositories is one branch key.
#[tauri::command]
#[specta::specta]
pub async fn skim_branch(
    backend: State<'_, Backend>,
    target_key: String,
    include_weak: bool,
    repo_root: Option<String>,
) -> Result<SkimView, String> {
    with_cairn(&backend, move |c| {
        let target = Target::parse(TargetKind::Branch, &target_key)?;
        c.skim(&SkimQuery {
            target,
            include_weak,
            limit: None,
            repo_root,
            published_in: None,
        })
    })
    .await
}

/// One session's metadata, token usage, model, sub-agents and parse warnings.
#[tauri::command]
#[specta::specta]
pub async fn session_detail(
    backend: State<'_, Backend>,
    session_key: String,
) -> Result<SessionDetail, String> {
    with_cairn(&backend, move |c| c.session(&session_key)).await
}

/// Every turn of a session, in order.
#[tauri::command]
#[specta::specta]
pub async fn session_timeline(
    backend: State<'_, Backend>,
    session_key: String,
) -> Result<SessionTimeline, String> {
    with_cairn(&backend, move |c| c.show_session(&session_key, ALL)).await
}

/// Every record of one turn, in order.
#[tauri::command]
#[specta::specta]
pub async fn turn_records(
    backend: State<'_, Backend>,
    session_key: String,
    turn_index: u32,
) -> Result<TurnRecords, String> {
    with_cairn(&backend, move |c| {
        c.show_turn(&session_key, &turn_index.to_string(), ALL)
    })
    .await
}

/// The index of the turn holding record `ordinal` (a record anchor), or `null` when the
/// session has no such record.
#[tauri::command]
#[specta::specta]
pub async fn record_turn(
    backend: State<'_, Backend>,
    session_key: String,
    ordinal: u32,
) -> Result<Option<u32>, String> {
    with_cairn(&backend, move |c| c.turn_of_record(&session_key, ordinal)).await
}

/// Full-text search over the archive.
#[tauri::command]
#[specta::specta]
pub async fn search_archive(
    backend: State<'_, Backend>,
    query: SearchQuery,
) -> Result<Vec<SearchHit>, String> {
    with_cairn(&backend, move |c| c.search(&query)).await
}

/// Import every new transcript from the source dirs, sending `SyncProgress` events while it
/// runs and `ArchiveChanged` when something arrived.
#[tauri::command]
#[specta::specta]
pub async fn sync_archive<R: Runtime>(
    app: AppHandle<R>,
    backend: State<'_, Backend>,
) -> Result<SyncReport, String> {
    let cairn = backend.cairn()?;
    if !backend.begin_sync() {
        return Err("a sync is already running; wait for it to finish".to_owned());
    }
    let progress = Emitter::new(app.clone());
    let result = blocking(move || cairn.sync(&SyncOptions::default(), &progress)).await;
    backend.end_sync();
    let report = result?;
    backend.sync_completed();
    if report.records_added > 0 || report.sessions_added > 0 || report.sessions_updated > 0 {
        let _ = ArchiveChanged {
            cause: ChangeCause::Sync,
            sessions_added: report.sessions_added,
            sessions_updated: report.sessions_updated,
            records_added: report.records_added,
        }
        .emit(&app);
    }
    Ok(report)
}

/// One source dir of an agent, as Settings shows it.
#[derive(Debug, Clone, Serialize, specta::Type)]
pub struct SourceDirStatus {
    pub agent: Agent,
    pub path: String,
    /// Where the setting came from: `config.toml`, an environment variable, or the default.
    pub origin: DirOrigin,
    pub exists: bool,
}

fn source_dir_statuses(cairn: &Cairn) -> Vec<SourceDirStatus> {
    cairn
        .source_dirs()
        .into_iter()
        .map(|(dir, exists)| SourceDirStatus {
            agent: dir.agent,
            path: dir.path.display().to_string(),
            origin: dir.origin,
            exists,
        })
        .collect()
}

/// Where each agent's transcripts are read from, and whether those folders exist.
#[tauri::command]
#[specta::specta]
pub async fn source_dirs(backend: State<'_, Backend>) -> Result<Vec<SourceDirStatus>, String> {
    with_cairn(&backend, |c| Ok(source_dir_statuses(c))).await
}

/// Save an agent's source dirs in `config.toml` (an empty list restores the default), reopen
/// the archive so they take effect, and watch the new folders.
#[tauri::command]
#[specta::specta]
pub async fn set_source_dirs<R: Runtime>(
    app: AppHandle<R>,
    backend: State<'_, Backend>,
    agent: Agent,
    dirs: Vec<String>,
) -> Result<Vec<SourceDirStatus>, String> {
    with_cairn(&backend, move |c| c.set_source_dirs(agent, dirs)).await?;
    let cairn = backend.reopen()?;
    restart_watch(&app, &backend, &cairn);
    Ok(source_dir_statuses(&cairn))
}

/// The `cairn` command line tool the hooks run, and whether it was found.
#[derive(Debug, Clone, Serialize, specta::Type)]
pub struct HooksOverview {
    pub hooks: Vec<HookStatus>,
    /// The `cairn` executable the hook would run.
    pub cli: Option<String>,
    /// Why hooks cannot be installed from here, when `cli` is missing.
    pub cli_problem: Option<String>,
}

/// The `cairn` CLI next to this executable, else on `PATH`.
fn find_cli() -> Result<PathBuf, String> {
    let name = if cfg!(windows) { "cairn.exe" } else { "cairn" };
    let beside = std::env::current_exe()
        .ok()
        .and_then(|exe| exe.parent().map(|dir| dir.join(name)))
        .filter(|p| p.is_file());
    let on_path = || {
        std::env::var_os("PATH").and_then(|paths| {
            std::env::split_paths(&paths)
                .map(|dir| dir.join(name))
                .find(|p| p.is_file())
        })
    };
    beside.or_else(on_path).ok_or_else(|| {
        "cannot find the `cairn` command next to cairn-desktop or on PATH; build it with \
         `cargo build --release -p cairn-cli` (or install it on PATH) and reopen Settings"
            .to_owned()
    })
}

/// Whether each agent's settings run Cairn's capture hook, and which `cairn` would run.
#[tauri::command]
#[specta::specta]
pub async fn hook_overview(backend: State<'_, Backend>) -> Result<HooksOverview, String> {
    with_cairn(&backend, |c| {
        let cli = find_cli();
        Ok(HooksOverview {
            hooks: c.hook_status(),
            cli: cli.as_ref().ok().map(|p| p.display().to_string()),
            cli_problem: cli.err(),
        })
    })
    .await
}

/// Add the capture hook to an agent's settings (`dry_run`: only show the diff).
#[tauri::command]
#[specta::specta]
pub async fn install_hook(
    backend: State<'_, Backend>,
    agent: Agent,
    dry_run: bool,
) -> Result<HookInstall, String> {
    let cli = find_cli()?;
    with_cairn(&backend, move |c| {
        c.install_hook(
            agent,
            &cairn_core::hooks::hook_command(&cli, agent),
            dry_run,
        )
    })
    .await
}

/// What the outbound redactor lets leave this machine for `text`.
#[tauri::command]
#[specta::specta]
pub async fn privacy_preview(
    backend: State<'_, Backend>,
    text: String,
) -> Result<OutboundPreview, String> {
    with_cairn(&backend, move |c| Ok(c.outbound_preview(&text, None))).await
}

/// Health checks: data dir, archive, source dirs, the agents' retention settings, hooks.
#[tauri::command]
#[specta::specta]
pub async fn doctor(backend: State<'_, Backend>) -> Result<DoctorReport, String> {
    with_cairn(&backend, |c| Ok(c.doctor())).await
}

/// Facts about the running app, for the window's footer and for bug reports.
#[derive(Debug, Clone, Serialize, specta::Type)]
pub struct AppInfo {
    /// The data directory in use (empty when none could be determined).
    pub data_dir: String,
    /// The desktop app's version.
    pub version: String,
    /// The archive can be read but not written (capture and sync are off).
    pub read_only: bool,
    /// The `cairn://` link the app was started with, to open first.
    pub launch_link: Option<String>,
}

/// Which data directory and version this window runs with.
#[tauri::command]
#[specta::specta]
pub fn app_info(backend: State<'_, Backend>) -> AppInfo {
    AppInfo {
        data_dir: backend
            .data_dir()
            .map(|d| d.display().to_string())
            .unwrap_or_default(),
        version: env!("CARGO_PKG_VERSION").to_owned(),
        read_only: backend.cairn().is_ok_and(|c| c.is_read_only()),
        launch_link: backend.launch_link().map(str::to_owned),
    }
}

/// What the live watcher covers.
#[derive(Debug, Clone, Serialize, specta::Type)]
pub struct LiveStatus {
    /// Source dirs being watched (those that exist).
    pub watching: Vec<String>,
    /// Why nothing is watched, when that is the case.
    pub problem: Option<String>,
}

fn restart_watch<R: Runtime>(app: &AppHandle<R>, backend: &Backend, cairn: &Cairn) -> LiveStatus {
    let mut slot = backend.watch();
    // Stop the old watch first, so a folder is never captured twice.
    *slot = None;
    if cairn.is_read_only() {
        return LiveStatus {
            watching: Vec::new(),
            problem: Some("the archive is read-only, so new transcripts cannot be captured".into()),
        };
    }
    match watcher::start(app.clone(), watcher::source_dirs(cairn)) {
        Ok(watch) => {
            let watching: Vec<String> =
                watch.dirs.iter().map(|d| d.display().to_string()).collect();
            let problem = watching
                .is_empty()
                .then(|| "none of the source folders exists yet".to_owned());
            *slot = Some(watch);
            LiveStatus { watching, problem }
        }
        Err(problem) => LiveStatus {
            watching: Vec::new(),
            problem: Some(problem),
        },
    }
}

/// A moment of the UI's start-up, in wall-clock milliseconds since the Unix epoch.
#[derive(Debug, Clone, Deserialize, specta::Type)]
pub struct UiMilestone {
    pub name: String,
    pub at_ms: f64,
}

/// The window has rendered its first screen: start watching the source dirs (once) and say
/// what is watched. With `CAIRN_STARTUP_TRACE` set, prints the UI's milestones and the time of
/// this call on stderr, for `scripts/measure-startup.sh`.
#[tauri::command]
#[specta::specta]
pub async fn app_ready<R: Runtime>(
    app: AppHandle<R>,
    backend: State<'_, Backend>,
    milestones: Vec<UiMilestone>,
) -> Result<LiveStatus, String> {
    if std::env::var_os("CAIRN_STARTUP_TRACE").is_some() {
        for m in &milestones {
            eprintln!("cairn-desktop: ui {} at {:.0} ms", m.name, m.at_ms);
        }
    }
    crate::startup_trace("ready");
    let cairn: Arc<Cairn> = backend.cairn()?;
    crate::extract::start(&app, &backend);
    if let Some(watch) = backend.watch().as_ref() {
        return Ok(LiveStatus {
            watching: watch.dirs.iter().map(|d| d.display().to_string()).collect(),
            problem: None,
        });
    }
    Ok(restart_watch(&app, &backend, &cairn))
}

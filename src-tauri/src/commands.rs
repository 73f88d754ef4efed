//! The typed commands the webview may call. Each one is a call into the `cairn-core` facade
//! plus a conversion of its error to the one-line message the UI shows; nothing else.
//!
//! Core calls are blocking SQLite reads, so they run on the blocking pool
//! ([`tauri::async_runtime::spawn_blocking`]) and never on the thread that drives the window.

use std::path::PathBuf;
use std::sync::Arc;

use cairn_core::archive::Agent;
use cairn_core::archive::capture::SyncReport;
use cairn_core::archive::discover::{self, DirAccess, DirOrigin, SourceDir};
use cairn_core::doctor::{Check, DoctorReport, Status};
use cairn_core::git::targets::{Target, TargetKind};
use cairn_core::hooks::{HookInstall, HookStatus};
use cairn_core::semantic::Mode;
use cairn_core::semantic::vectors::VectorStore;
use cairn_core::views::branches::RepoBranches;
use cairn_core::views::search::{SearchAnswer, SearchQuery};
use cairn_core::views::session::SessionDetail;
use cairn_core::views::sessions::{AgentCount, SessionQuery, SessionSummary};
use cairn_core::views::show::{SessionTimeline, TurnRecords};
use cairn_core::views::skim::{SkimQuery, SkimView};
use cairn_core::views::why::{WhyAnswer, WhyPlace, WhyQuery};
use cairn_core::{Cairn, ErrorKind, ErrorReport, OutboundPreview, SyncOptions};
use serde::{Deserialize, Serialize};
use tauri::{AppHandle, Runtime, State};
use tauri_specta::Event as _;

pub use crate::backend::Backend;
use crate::events::{ArchiveChanged, ChangeCause, Emitter};
use crate::watcher;

/// Run a core call on the blocking pool; both failure layers reach the UI as an [`ErrorReport`]
/// (a core error in the window's words: [`crate::report`]).
pub(crate) async fn blocking<T, F>(f: F) -> Result<T, ErrorReport>
where
    T: Send + 'static,
    F: FnOnce() -> cairn_core::Result<T> + Send + 'static,
{
    match tauri::async_runtime::spawn_blocking(f).await {
        Ok(result) => result.map_err(|e| crate::report::report(&e)),
        Err(join) => Err(ErrorReport::new(
            ErrorKind::Internal,
            format!("internal error while reading the archive: {join}"),
        )),
    }
}

/// [`blocking`] for a call on the opened archive.
pub(crate) async fn with_cairn<T, F>(backend: &Backend, f: F) -> Result<T, ErrorReport>
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
) -> Result<Vec<SessionSummary>, ErrorReport> {
    with_cairn(&backend, move |c| c.sessions(&query)).await
}

/// The agents with sessions in the archive, most sessions first: the agent filters offer these.
#[tauri::command]
#[specta::specta]
pub async fn agent_counts(backend: State<'_, Backend>) -> Result<Vec<AgentCount>, ErrorReport> {
    with_cairn(&backend, Cairn::agent_counts).await
}

/// Repositories and their branches with agent activity, most recently active first; with
/// `agent`, only that agent's sessions count.
#[tauri::command]
#[specta::specta]
pub async fn list_branches(
    backend: State<'_, Backend>,
    agent: Option<Agent>,
) -> Result<Vec<RepoBranches>, ErrorReport> {
    with_cairn(&backend, move |c| c.branches(agent)).await
}

/// The skim timeline of a branch, given its target key (`ref:refs/heads/<name>`). With
/// `include_weak`, sessions that only ran while the branch was checked out come last. With
/// `repo_root` (a root from `list_branches`), only that repository's sessions: `main` of two
/// repositories is one branch key; and the sessions teammates published there that `cairn pull`
/// fetched (marked untrusted, with their publisher). Without it, with `project` (a group of
/// `list_branches` without a root), only the sessions of no repository of that project (empty:
/// of no project either). With `agent`, only that agent's sessions.
#[tauri::command]
#[specta::specta]
pub async fn skim_branch(
    backend: State<'_, Backend>,
    target_key: String,
    include_weak: bool,
    repo_root: Option<String>,
    project: Option<String>,
    agent: Option<Agent>,
) -> Result<SkimView, ErrorReport> {
    with_cairn(&backend, move |c| {
        let target = Target::parse(TargetKind::Branch, &target_key)?;
        // The root may come from a cairn:// link: git runs only where agents worked.
        if let Some(root) = &repo_root {
            c.known_repo(root)?;
        }
        c.skim(&SkimQuery {
            target,
            include_weak,
            limit: None,
            published_in: repo_root.clone(),
            repo_root,
            // Listed under their project in the branch list, not under every repository.
            unplaced: false,
            project,
            agent,
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
) -> Result<SessionDetail, ErrorReport> {
    with_cairn(&backend, move |c| c.session(&session_key)).await
}

/// The command that continues a session in its agent, in its folder (the session page shows
/// it to copy; the window never runs it).
#[tauri::command]
#[specta::specta]
pub async fn session_resume(
    backend: State<'_, Backend>,
    session_key: String,
) -> Result<cairn_core::views::resume::ResumeCommand, ErrorReport> {
    with_cairn(&backend, move |c| c.resume_command(&session_key)).await
}

/// Every turn of a session, in order.
#[tauri::command]
#[specta::specta]
pub async fn session_timeline(
    backend: State<'_, Backend>,
    session_key: String,
) -> Result<SessionTimeline, ErrorReport> {
    with_cairn(&backend, move |c| c.show_session(&session_key, ALL)).await
}

/// Every record of one turn, in order.
#[tauri::command]
#[specta::specta]
pub async fn turn_records(
    backend: State<'_, Backend>,
    session_key: String,
    turn_index: u32,
) -> Result<TurnRecords, ErrorReport> {
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
) -> Result<Option<u32>, ErrorReport> {
    with_cairn(&backend, move |c| c.turn_of_record(&session_key, ordinal)).await
}

/// Search the archive: by meaning and words once the turns' vectors are built, else by words;
/// the answer says which ran and how many turns wait for their vector.
#[tauri::command]
#[specta::specta]
pub async fn search_archive(
    backend: State<'_, Backend>,
    query: SearchQuery,
) -> Result<SearchAnswer, ErrorReport> {
    with_cairn(&backend, move |c| {
        by_meaning_when_ready(c, |mode| {
            c.search_answer(&SearchQuery {
                mode,
                ..query.clone()
            })
        })
    })
    .await
}

/// The window's searches run by meaning and words once the turns' vectors are built (a person
/// built them in Settings; turns captured since are found by words until the catch-up embeds
/// them), and by words alone otherwise, or when meaning turns out unavailable after all (the
/// model went missing).
fn by_meaning_when_ready<T>(
    cairn: &Cairn,
    run: impl Fn(Mode) -> cairn_core::Result<T>,
) -> cairn_core::Result<T> {
    if cairn.searches_by_meaning(VectorStore::Sessions) {
        match run(Mode::Hybrid) {
            Err(e) if e.kind() == ErrorKind::Unavailable => {}
            answer => return answer,
        }
    }
    run(Mode::Lexical)
}

/// Why is this here: the sessions and turns behind a commit, a file's lines or a description,
/// ranked, with their evidence, traced at `place` (git runs only in a repository the archive
/// knows: `Cairn::why_at`).
#[tauri::command]
#[specta::specta]
pub async fn why(
    backend: State<'_, Backend>,
    target: String,
    place: WhyPlace,
) -> Result<WhyAnswer, ErrorReport> {
    with_cairn(&backend, move |c| {
        by_meaning_when_ready(c, |mode| {
            let query = WhyQuery {
                target: target.clone(),
                limit: Some(20),
                mode,
            };
            c.why_at(&place, &query)
        })
    })
    .await
}

/// Import every new transcript from the source dirs, sending `SyncProgress` events while it
/// runs and `ArchiveChanged` when something arrived.
#[tauri::command]
#[specta::specta]
pub async fn sync_archive<R: Runtime>(
    app: AppHandle<R>,
    backend: State<'_, Backend>,
) -> Result<SyncReport, ErrorReport> {
    let cairn = backend.cairn()?;
    if !backend.begin_sync() {
        return Err(
            ErrorReport::new(ErrorKind::Busy, "a sync is already running")
                .with_hint("wait for it to finish"),
        );
    }
    let progress = Emitter::new(app.clone());
    let result = blocking(move || cairn.sync(&SyncOptions::default(), &progress)).await;
    backend.end_sync();
    let mut report = result?;
    backend.sync_completed();
    // Paths and messages come from file names and transcripts: shown as the CLI prints them.
    for w in &mut report.warnings {
        w.path = cairn_core::text::printable(&w.path);
        w.message = cairn_core::text::printable(&w.message);
    }
    if report.changed() {
        crate::meaning::after_capture(&app);
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
    /// Its transcripts can be read: a folder this user can list (for Aider and Crush, which
    /// keep theirs in repositories, a history file named directly too).
    pub exists: bool,
    /// The system refused to show it (a folder this user may not read, or one on its way):
    /// never said of a folder that is not there.
    pub unreadable: Option<SourceUnreadable>,
}

/// Why a source dir cannot be read, as a sync's warning and doctor's check say it.
#[derive(Debug, Clone, Serialize, specta::Type)]
pub struct SourceUnreadable {
    /// Permission denied: the folder (or one on its way) is not this user's to read.
    pub denied: bool,
    /// What is lost and the fix (`sudo chown …` for a folder left owned by root), cleaned.
    pub message: String,
}

/// `dir` as Settings shows it, given what the file system said of it (`access`).
fn source_dir_status(dir: &SourceDir, access: &DirAccess) -> SourceDirStatus {
    let in_repositories = matches!(dir.agent, Agent::Aider | Agent::Crush);
    SourceDirStatus {
        agent: dir.agent,
        path: dir.path.display().to_string(),
        origin: dir.origin,
        exists: match access {
            DirAccess::Dir => true,
            DirAccess::File => in_repositories,
            DirAccess::Absent | DirAccess::Unreadable(_) => false,
        },
        unreadable: match access {
            DirAccess::Unreadable(why) => Some(SourceUnreadable {
                denied: why.denied,
                message: cairn_core::text::printable(&why.message(dir.agent, &dir.path)),
            }),
            _ => None,
        },
    }
}

fn source_dir_statuses(cairn: &Cairn) -> Vec<SourceDirStatus> {
    cairn
        .source_dirs()
        .into_iter()
        .map(|(dir, _)| source_dir_status(&dir, &discover::access(&dir.path)))
        .collect()
}

/// Where each agent's transcripts are read from, and whether those folders can be read: found,
/// not there, or refused by the system (told apart, as doctor does: an unreadable folder hides
/// every transcript in it and is never said as missing).
#[tauri::command]
#[specta::specta]
pub async fn source_dirs(backend: State<'_, Backend>) -> Result<Vec<SourceDirStatus>, ErrorReport> {
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
) -> Result<Vec<SourceDirStatus>, ErrorReport> {
    with_cairn(&backend, move |c| c.set_source_dirs(agent, dirs)).await?;
    let cairn = backend.reopen()?;
    restart_watch(&app, &backend, &cairn);
    Ok(source_dir_statuses(&cairn))
}

/// The `cairn` command line tool the hooks run, and whether it was found.
#[derive(Debug, Clone, Serialize, specta::Type)]
pub struct HooksOverview {
    pub hooks: Vec<HookStatus>,
    /// The `cairn` executable the hook would run: an absolute, canonical path.
    pub cli: Option<String>,
    /// Where it was found: next to cairn-desktop, or in which `PATH` directory.
    pub cli_origin: Option<String>,
    /// Why hooks cannot be installed from here, when `cli` is missing.
    pub cli_problem: Option<String>,
}

/// The `cairn` an agent's hook will run, and where it was found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FoundCli {
    /// Absolute and canonical (symlinks resolved), so the hook runs the same file whatever the
    /// agent's working directory and `PATH`.
    pub path: PathBuf,
    /// `next to cairn-desktop`, or `on PATH in <dir>`.
    pub origin: String,
}

/// The `cairn` CLI next to this executable, else in the first absolute `PATH` directory that
/// has one.
pub(crate) fn find_cli() -> Result<FoundCli, String> {
    find_cli_in(
        std::env::current_exe().ok().as_deref(),
        std::env::var_os("PATH").as_deref(),
    )
}

/// [`find_cli`] for a given executable and `PATH`. A relative `PATH` entry (`.`, `bin`, the
/// empty entry that means the working directory) is skipped: a hook holding `./cairn` or
/// `bin/cairn` would run whatever file of that name sits in the directory the agent happens to
/// run in.
pub fn find_cli_in(
    exe: Option<&std::path::Path>,
    path_var: Option<&std::ffi::OsStr>,
) -> Result<FoundCli, String> {
    let name = if cfg!(windows) { "cairn.exe" } else { "cairn" };
    let usable = |candidate: PathBuf| -> Option<PathBuf> {
        let canonical = std::fs::canonicalize(candidate).ok()?;
        (canonical.is_absolute() && is_executable_file(&canonical)).then_some(canonical)
    };
    let beside = exe
        .and_then(|exe| std::fs::canonicalize(exe).ok())
        .and_then(|exe| exe.parent().map(|dir| dir.join(name)))
        .and_then(usable)
        .map(|path| FoundCli {
            path,
            origin: "next to cairn-desktop".to_owned(),
        });
    let on_path = || {
        std::env::split_paths(path_var?)
            .filter(|dir| dir.is_absolute())
            .find_map(|dir| {
                usable(dir.join(name)).map(|path| FoundCli {
                    path,
                    origin: format!("on PATH in {}", dir.display()),
                })
            })
    };
    beside.or_else(on_path).ok_or_else(|| {
        "cannot find the `cairn` command next to cairn-desktop or in an absolute PATH directory \
         (relative PATH entries are not used); build it with `cargo build --release -p cairn-cli` \
         (or install it on PATH) and reopen Settings"
            .to_owned()
    })
}

fn is_executable_file(path: &std::path::Path) -> bool {
    let Ok(meta) = std::fs::metadata(path) else {
        return false;
    };
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        meta.is_file() && meta.permissions().mode() & 0o111 != 0
    }
    #[cfg(not(unix))]
    {
        meta.is_file()
    }
}

/// Whether each agent's settings run Cairn's capture hook, and which `cairn` would run.
#[tauri::command]
#[specta::specta]
pub async fn hook_overview(backend: State<'_, Backend>) -> Result<HooksOverview, ErrorReport> {
    with_cairn(&backend, |c| {
        let (cli, cli_origin, cli_problem) = match find_cli() {
            Ok(found) => (
                Some(found.path.display().to_string()),
                Some(found.origin),
                None,
            ),
            Err(problem) => (None, None, Some(problem)),
        };
        Ok(HooksOverview {
            hooks: c.hook_status(),
            cli,
            cli_origin,
            cli_problem,
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
) -> Result<HookInstall, ErrorReport> {
    let cli = find_cli()
        .map_err(|problem| ErrorReport::new(ErrorKind::NotFound, problem))?
        .path;
    with_cairn(&backend, move |c| {
        c.install_hooks(agent, &c.hook_command(&cli, agent), true, dry_run)
    })
    .await
}

/// Take Cairn's hooks out of an agent's settings (`dry_run`: only show the diff).
#[tauri::command]
#[specta::specta]
pub async fn uninstall_hook(
    backend: State<'_, Backend>,
    agent: Agent,
    dry_run: bool,
) -> Result<HookInstall, ErrorReport> {
    with_cairn(&backend, move |c| c.uninstall_hooks(agent, dry_run)).await
}

/// What the outbound redactor lets leave this machine for `text`.
#[tauri::command]
#[specta::specta]
pub async fn privacy_preview(
    backend: State<'_, Backend>,
    text: String,
) -> Result<OutboundPreview, ErrorReport> {
    with_cairn(&backend, move |c| Ok(c.outbound_preview(&text, None))).await
}

/// Health checks: data dir, archive, source dirs, the agents' retention settings, hooks. They
/// run on an archive that did not open too (`Cairn::doctor_at`, which creates nothing): the
/// checks that need no archive still say what they find, and the archive's check says why it
/// did not open (see [`unopened`]).
#[tauri::command]
#[specta::specta]
pub async fn doctor(backend: State<'_, Backend>) -> Result<DoctorReport, ErrorReport> {
    match (backend.cairn(), backend.data_dir()) {
        (Ok(cairn), _) => blocking(move || Ok(cairn.doctor())).await,
        (Err(why), Some(dir)) => {
            let dir = dir.clone();
            blocking(move || Cairn::doctor_at(dir).map(|report| unopened(report, &why))).await
        }
        (Err(why), None) => Err(why),
    }
}

/// Doctor's report on a data dir whose archive did not open, with the archive's check saying
/// why. Doctor says it itself for a `config.toml` that does not load (its first check) and for
/// a database too damaged to open (the archive's check, with the recovery recipe); for any
/// other reason (a folder the user may not write, a newer schema, a lock) its archive check
/// would say only that no archive is there, so the reason the window got takes its place.
pub fn unopened(mut report: DoctorReport, why: &ErrorReport) -> DoctorReport {
    if matches!(why.kind, ErrorKind::Config | ErrorKind::Corrupt) {
        return report;
    }
    let failed = Check {
        name: "archive".into(),
        status: Status::Fail,
        detail: match &why.hint {
            Some(hint) => format!("did not open: {}. {hint}", why.message),
            None => format!("did not open: {}", why.message),
        },
    };
    match report.checks.iter_mut().find(|c| c.name == "archive") {
        Some(check) => *check = failed,
        None => {
            let at = usize::from(report.checks.first().is_some_and(|c| c.name == "config"));
            report.checks.insert(at, failed);
        }
    }
    report
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
    /// Why it is read-only, as the file system says (the database or its folder this user may
    /// not write); null when it is not, or when neither is at fault (the disk is full).
    pub read_only_why: Option<String>,
    /// The `cairn://` link to open first: the one the app was started with, or the last one a
    /// second launch handed over.
    pub launch_link: Option<String>,
    /// Why the link the app was started with (or the last one a second launch handed over) was
    /// not opened ("it names no place in Cairn"); never the link itself.
    pub launch_refused: Option<String>,
    /// Sessions an older Cairn's parsers read (0 when none, or unknown): reading them again
    /// (Settings › Data and retention) may put right what those parsers misread.
    pub sessions_read_before: u32,
}

/// Which data directory and version this window runs with.
#[tauri::command]
#[specta::specta]
pub fn app_info(backend: State<'_, Backend>) -> AppInfo {
    let launch = backend.launch();
    AppInfo {
        data_dir: backend
            .data_dir()
            .map(|d| d.display().to_string())
            .unwrap_or_default(),
        version: env!("CARGO_PKG_VERSION").to_owned(),
        read_only: backend.cairn().is_ok_and(|c| c.is_read_only()),
        read_only_why: backend
            .cairn()
            .ok()
            .filter(|c| c.is_read_only())
            .and_then(|c| read_only_why(c.data_dir())),
        launch_link: launch.link().map(str::to_owned),
        launch_refused: launch.refusal().map(|why| why.to_string()),
        sessions_read_before: backend
            .cairn()
            .ok()
            .and_then(|c| c.sessions_read_before().ok())
            .unwrap_or(0),
    }
}

/// Why the archive in `dir` opened read-only, asked of the file system: its database cannot be
/// opened for writing (nothing is written: an append that writes nothing), or its folder has no
/// write permission (SQLite makes its journal files there). `None` when neither: the core also
/// opens read-only on a full disk, which its errors then name.
fn read_only_why(dir: &std::path::Path) -> Option<String> {
    let db = dir.join(cairn_core::archive::store::DB_FILE);
    if let Err(e) = std::fs::OpenOptions::new().append(true).open(&db) {
        return Some(format!("{} cannot be written ({e})", db.display()));
    }
    let folder = std::fs::metadata(dir).ok()?;
    folder
        .permissions()
        .readonly()
        .then(|| format!("the folder {} is not writable", dir.display()))
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
) -> Result<LiveStatus, ErrorReport> {
    if std::env::var_os("CAIRN_STARTUP_TRACE").is_some() {
        for m in &milestones {
            eprintln!("cairn-desktop: ui {} at {:.0} ms", m.name, m.at_ms);
        }
    }
    crate::startup_trace("ready");
    let cairn: Arc<Cairn> = backend.cairn()?;
    Ok(go_live(&app, &backend, &cairn))
}

/// Try again to open an archive that could not be opened (the person has corrected
/// `config.toml`, freed the disk, made the data dir writable, closed what held the lock), or
/// one opened read-only for writing, and go live as [`app_ready`] does once it opens. An archive
/// open for writing is kept as it is, and a read-only one whose folder is still read-only:
/// only its live status is returned (`app_info` says whether it is read-only now).
#[tauri::command]
#[specta::specta]
pub async fn reopen_archive<R: Runtime>(
    app: AppHandle<R>,
    backend: State<'_, Backend>,
) -> Result<LiveStatus, ErrorReport> {
    let cairn = match backend.cairn() {
        Ok(_) => backend.reopen_writable()?,
        Err(_) => backend.reopen()?,
    };
    Ok(go_live(&app, &backend, &cairn))
}

/// Start what runs beside an open archive (the extraction scheduler, the source-dir watcher),
/// once: a watch already running is kept and reported.
fn go_live<R: Runtime>(app: &AppHandle<R>, backend: &Backend, cairn: &Cairn) -> LiveStatus {
    crate::extract::start(app, backend);
    if let Some(watch) = backend.watch().as_ref() {
        return LiveStatus {
            watching: watch.dirs.iter().map(|d| d.display().to_string()).collect(),
            problem: None,
        };
    }
    restart_watch(app, backend, cairn)
}

#[cfg(test)]
mod tests {
    use std::ffi::OsString;
    use std::os::unix::fs::PermissionsExt as _;
    use std::path::{Path, PathBuf};

    use super::find_cli_in;

    fn cairn_in(dir: &Path) -> PathBuf {
        std::fs::create_dir_all(dir).unwrap();
        let file = dir.join("cairn");
        std::fs::write(&file, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o755)).unwrap();
        file
    }

    /// `dir` as a path relative to this process's working directory (which the test leaves
    /// alone): a relative `PATH` entry that really resolves to `dir` here.
    fn relative(dir: &Path) -> PathBuf {
        let cwd = std::env::current_dir().unwrap();
        let up = cwd.components().count() - 1;
        let mut rel: PathBuf = std::iter::repeat_n("..", up).collect();
        rel.push(dir.strip_prefix("/").unwrap());
        assert!(rel.is_relative() && rel.join("cairn").is_file());
        rel
    }

    fn path_of(dirs: &[&Path]) -> OsString {
        std::env::join_paths(dirs).unwrap()
    }

    #[test]
    fn a_relative_path_entry_is_never_put_into_a_hook() {
        let tmp = tempfile::tempdir().unwrap();
        let rel_dir = tmp.path().join("rel-bin");
        cairn_in(&rel_dir);
        let abs_dir = tmp.path().join("abs-bin");
        cairn_in(&abs_dir);
        let rel = relative(&rel_dir);

        // `bin`-style entry first, an absolute one after: the absolute one is chosen.
        let path = path_of(&[Path::new(""), Path::new("."), &rel, &abs_dir]);
        let found = find_cli_in(None, Some(&path)).unwrap();
        assert_eq!(
            found.path,
            std::fs::canonicalize(abs_dir.join("cairn")).unwrap()
        );
        assert!(found.path.is_absolute());
        assert_eq!(found.origin, format!("on PATH in {}", abs_dir.display()));

        // Only relative entries: nothing is chosen, and the message says why.
        let path = path_of(&[&rel, Path::new("./rel-bin")]);
        let problem = find_cli_in(None, Some(&path)).unwrap_err();
        assert!(problem.contains("relative PATH entries"), "{problem}");
    }

    #[test]
    fn the_cli_beside_the_app_wins_and_is_canonical() {
        let tmp = tempfile::tempdir().unwrap();
        let app_dir = tmp.path().join("opt/cairn");
        let real = cairn_in(&app_dir);
        std::fs::write(app_dir.join("cairn-desktop"), "").unwrap();
        // Started through a symlinked directory: the hook gets the real file.
        let link = tmp.path().join("linked");
        std::os::unix::fs::symlink(&app_dir, &link).unwrap();
        let on_path = tmp.path().join("usr-bin");
        cairn_in(&on_path);
        let found = find_cli_in(
            Some(&link.join("cairn-desktop")),
            Some(&path_of(&[&on_path])),
        )
        .unwrap();
        assert_eq!(found.path, std::fs::canonicalize(real).unwrap());
        assert_eq!(found.origin, "next to cairn-desktop");
    }

    #[test]
    fn a_file_that_cannot_run_is_skipped() {
        let tmp = tempfile::tempdir().unwrap();
        let plain = tmp.path().join("a");
        std::fs::create_dir_all(plain.join("cairn")).unwrap(); // a directory named cairn
        let data = tmp.path().join("b");
        let file = cairn_in(&data);
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
        let good = tmp.path().join("c");
        cairn_in(&good);
        let found = find_cli_in(None, Some(&path_of(&[&plain, &data, &good]))).unwrap();
        assert_eq!(found.origin, format!("on PATH in {}", good.display()));
    }

    /// A folder the system will not show is said as unreadable, with doctor's fix, and never
    /// as missing; one that is not there is missing, with nothing to fix. Built from what the
    /// file system answers (`DirAccess`): root, which runs the tests here, reads a folder of
    /// mode 000.
    #[test]
    fn an_unreadable_source_dir_is_not_said_as_missing() {
        use cairn_core::archive::Agent;
        use cairn_core::archive::discover::{DirAccess, DirOrigin, SourceDir, Unreadable};

        use super::source_dir_status;

        let dir = SourceDir {
            agent: Agent::Claude,
            path: PathBuf::from("/home/dev/.claude/projects"),
            origin: DirOrigin::Default,
        };
        let denied = source_dir_status(
            &dir,
            &DirAccess::Unreadable(Unreadable {
                blocked: PathBuf::from("/home/dev/.claude"),
                denied: true,
                error: "Permission denied (os error 13)".into(),
            }),
        );
        assert!(!denied.exists);
        let why = denied.unreadable.expect("unreadable, not missing");
        assert!(why.denied);
        assert!(
            why.message
                .contains("sudo chown -R $USER '/home/dev/.claude'"),
            "{}",
            why.message
        );

        let missing = source_dir_status(&dir, &DirAccess::Absent);
        assert!(!missing.exists && missing.unreadable.is_none());
        let found = source_dir_status(&dir, &DirAccess::Dir);
        assert!(found.exists && found.unreadable.is_none());
        // Aider's history named directly is a source; a file where Claude's folder should be
        // is not.
        assert!(!source_dir_status(&dir, &DirAccess::File).exists);
        let aider = SourceDir {
            agent: Agent::Aider,
            ..dir
        };
        assert!(source_dir_status(&aider, &DirAccess::File).exists);
    }
}

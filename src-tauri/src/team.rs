//! The team archive (PostgreSQL) in the desktop: Settings → Team (`team_setup`, `team_save`,
//! `team_test`, `team_status`, `team_push` with `team-push-progress` events, `team_remember`,
//! `team_forget`, and the administrator's `team_init`, `team_grant`, `team_revoke`) and the Team view's read-only reads of the team archive as a second archive
//! (`team_search`, `team_skim`, `team_show`). The server is the one `[team]` in `config.toml`
//! names (or `CAIRN_TEAM_URL`); its password comes from the variable `[team]` names, else from the
//! OS keyring, where "Remember in the keyring" puts what the window sends (the only time a
//! password crosses the IPC boundary, towards the keyring only: never written to the data dir,
//! never sent back). Every message shows the address without credentials (the core scrubs them).

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use cairn_core::config::TeamConfig;
use cairn_core::team::members::AdminError;
use cairn_core::team::{
    KeyringState, LastPush, TeamCheck, TeamInit, TeamMembership, TeamPushReport, TeamRemembered,
    TeamSearchHit, TeamShow, TeamSkim,
};
use cairn_core::{Cairn, ErrorReport};
use serde::{Deserialize, Serialize};
use tauri::{AppHandle, Runtime, State};
use tauri_specta::Event;

use crate::backend::Backend;
use crate::commands::with_cairn;

/// What Settings → Team shows besides the form: the last push, and what overrides the form.
#[derive(Debug, Clone, Serialize, Deserialize, specta::Type)]
pub struct TeamStatus {
    pub setup: TeamConfig,
    /// `CAIRN_TEAM_URL` is set in the app's environment: it wins over the form.
    pub env_url_set: bool,
    /// Whether the variable the form names holds a value (its value is never sent).
    pub password_set: bool,
    /// The variable the password is read from.
    pub password_var: String,
    /// What the OS keyring holds for the saved server (`None` when none is set up).
    pub keyring: Option<KeyringState>,
    pub last_push: Option<LastPush>,
}

/// Where a "Push now" is: sessions sent (or found unchanged) of those to look at. Sent as
/// `team-push-progress`, at most one per [`PUSH_EVENT_MS`] besides the first and the last.
#[derive(Debug, Clone, Serialize, Deserialize, specta::Type, Event)]
pub struct TeamPushProgress {
    pub done: u32,
    pub total: u32,
}

/// The least time between two progress events of one push.
const PUSH_EVENT_MS: u64 = 80;

/// `[team]` as it is on disk, and the last push.
#[tauri::command]
#[specta::specta]
pub async fn team_status(backend: State<'_, Backend>) -> Result<TeamStatus, ErrorReport> {
    with_cairn(&backend, |c| {
        let setup = c.team_setup()?;
        let var = setup.password_var().to_owned();
        let keyring = if setup.is_empty() {
            None
        } else {
            c.team_server_of(&setup).ok().map(|s| c.team_keyring(&s))
        };
        Ok(TeamStatus {
            keyring,
            env_url_set: std::env::var_os(cairn_core::team::server::URL_VAR)
                .is_some_and(|v| !v.is_empty()),
            password_set: std::env::var_os(&var).is_some_and(|v| !v.is_empty()),
            password_var: var,
            last_push: c.team_last_push(None)?,
            setup,
        })
    })
    .await
}

/// Write the form into `[team]` of `config.toml` (comments and other keys kept).
#[tauri::command]
#[specta::specta]
pub async fn team_save(
    backend: State<'_, Backend>,
    setup: TeamConfig,
) -> Result<TeamConfig, ErrorReport> {
    with_cairn(&backend, move |c| c.save_team_setup(&setup)).await
}

/// "Test connection" with the form as it stands (nothing saved).
#[tauri::command]
#[specta::specta]
pub async fn team_test(
    backend: State<'_, Backend>,
    setup: TeamConfig,
) -> Result<TeamCheck, ErrorReport> {
    with_cairn(&backend, move |c| c.team_check(&setup)).await
}

/// Push this archive to the configured team archive now, its progress as `team-push-progress`.
#[tauri::command]
#[specta::specta]
pub async fn team_push<R: Runtime>(
    app: AppHandle<R>,
    backend: State<'_, Backend>,
) -> Result<TeamPushReport, ErrorReport> {
    with_cairn(&backend, move |c| {
        let epoch = Instant::now();
        let last = AtomicU64::new(0);
        c.team_push(&c.team_server(None)?, &mut |done, total| {
            let now = u64::try_from(epoch.elapsed().as_millis()).unwrap_or(u64::MAX);
            let edge = done == 0 || done >= total;
            if edge || now.saturating_sub(last.load(Ordering::Relaxed)) >= PUSH_EVENT_MS {
                last.store(now, Ordering::Relaxed);
                // A window that is gone cannot show progress; the push itself goes on.
                let _ = TeamPushProgress { done, total }.emit(&app);
            }
        })
    })
    .await
}

/// "Remember in the keyring": keep `password` in the OS keyring for the server the form names
/// (tried against the server first; a refused password is not kept), replacing one kept before.
#[tauri::command]
#[specta::specta]
pub async fn team_remember(
    backend: State<'_, Backend>,
    setup: TeamConfig,
    password: String,
) -> Result<TeamRemembered, ErrorReport> {
    with_cairn(&backend, move |c| {
        c.team_remember(&c.team_server_of(&setup)?, &password, true)
    })
    .await
}

/// "Forget": remove the password the OS keyring keeps for the server the form names; whether
/// there was one.
#[tauri::command]
#[specta::specta]
pub async fn team_forget(
    backend: State<'_, Backend>,
    setup: TeamConfig,
) -> Result<bool, ErrorReport> {
    with_cairn(&backend, move |c| c.team_forget(&c.team_server_of(&setup)?)).await
}

/// An administrator's command on the saved server: its refusal as [`AdminError`], whose `sql`
/// is the statement that clears it (the core's typed field; the window never reads the hint's
/// wording for it).
async fn as_admin<T, F>(backend: &Backend, f: F) -> Result<T, AdminError>
where
    T: Send + 'static,
    F: FnOnce(&Cairn) -> cairn_core::Result<T> + Send + 'static,
{
    match with_cairn(backend, move |c| Ok(f(c).map_err(AdminError::from))).await {
        Ok(done) => done,
        Err(report) => Err(AdminError::from(report)),
    }
}

/// "Set up or bring up" (`cairn team init`), as the saved server's user, who must be the
/// database's owner or a superuser: the team's role, whether this run made it, its members and
/// the roles that may connect but are not in it. When the team's role is missing and this user
/// may not create roles, the error's `sql` is what an administrator runs.
#[tauri::command]
#[specta::specta]
pub async fn team_init(backend: State<'_, Backend>) -> Result<TeamInit, AdminError> {
    as_admin(&backend, |c| c.team_init(&c.team_server(None)?)).await
}

/// "Add to the team" (`cairn team grant`): make `role` a member of the team's role, as the saved
/// server's user (an administrator); the result's `push_url` is what the teammate pushes to.
/// Refused for want of the right, the error's `sql` is the GRANT an administrator runs.
#[tauri::command]
#[specta::specta]
pub async fn team_grant(
    backend: State<'_, Backend>,
    role: String,
) -> Result<TeamMembership, AdminError> {
    as_admin(&backend, move |c| {
        c.team_grant(&c.team_server(None)?, &role)
    })
    .await
}

/// "Take out of the team" (`cairn team revoke`): what the role pushed stays (the result says how
/// much, and the SQL a superuser runs to delete it).
#[tauri::command]
#[specta::specta]
pub async fn team_revoke(
    backend: State<'_, Backend>,
    role: String,
) -> Result<TeamMembership, AdminError> {
    as_admin(&backend, move |c| {
        c.team_revoke(&c.team_server(None)?, &role)
    })
    .await
}

/// Records across the team matching `query` (web-search syntax), best first.
#[tauri::command]
#[specta::specta]
pub async fn team_search(
    backend: State<'_, Backend>,
    query: String,
    limit: u32,
) -> Result<Vec<TeamSearchHit>, ErrorReport> {
    with_cairn(&backend, move |c| {
        // The Team view says what the archive's own warnings say from a skim or a session.
        c.team_search(&c.team_server(None)?, &query, limit)
            .map(|read| read.rows)
    })
    .await
}

/// A branch or PR (`#123`, a PR URL) across everyone who pushed: the most recent sessions after
/// the `skip` most recent, at most [`cairn_core::team::read::MAX_LIMIT`], and how many earlier
/// ones were left out. With `repo_root` (a root from `list_branches`), only the sessions pushed
/// from that repository's clones and those with none known; without, every repository's.
#[tauri::command]
#[specta::specta]
pub async fn team_skim(
    backend: State<'_, Backend>,
    target: String,
    skip: Option<u32>,
    repo_root: Option<String>,
) -> Result<TeamSkim, ErrorReport> {
    with_cairn(&backend, move |c| {
        // The root may come from the webview: git runs only where agents worked.
        if let Some(root) = &repo_root {
            c.known_repo(root)?;
        }
        c.team_skim(
            &c.team_server(None)?,
            &target,
            cairn_core::team::read::MAX_LIMIT,
            skip.unwrap_or(0),
            repo_root.as_deref().map(std::path::Path::new),
        )
    })
    .await
}

/// A teammate's session, read-only, with its publisher.
#[tauri::command]
#[specta::specta]
pub async fn team_show(
    backend: State<'_, Backend>,
    session: String,
    publisher: Option<String>,
) -> Result<TeamShow, ErrorReport> {
    with_cairn(&backend, move |c| {
        c.team_show(&c.team_server(None)?, &session, publisher.as_deref())
    })
    .await
}

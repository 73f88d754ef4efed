//! The team archive (PostgreSQL) in the desktop: Settings → Team (`team_setup`, `team_save`,
//! `team_test`, `team_status`, `team_push`) and the Team view's read-only reads of the team
//! archive as a second archive (`team_search`, `team_skim`, `team_show`). The server is the one
//! `[team]` in `config.toml` names (or `CAIRN_TEAM_URL`); its password comes from the variable
//! `[team]` names, never from the window, and never lands in the data dir. Every message shows the
//! address without credentials (the core scrubs them).

use cairn_core::ErrorReport;
use cairn_core::config::TeamConfig;
use cairn_core::team::{LastPush, TeamCheck, TeamPushReport, TeamSearchHit, TeamShow, TeamSkim};
use serde::{Deserialize, Serialize};
use tauri::State;

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
    pub last_push: Option<LastPush>,
}

/// `[team]` as it is on disk, and the last push.
#[tauri::command]
#[specta::specta]
pub async fn team_status(backend: State<'_, Backend>) -> Result<TeamStatus, ErrorReport> {
    with_cairn(&backend, |c| {
        let setup = c.team_setup()?;
        let var = setup.password_var().to_owned();
        Ok(TeamStatus {
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

/// Push this archive to the configured team archive now.
#[tauri::command]
#[specta::specta]
pub async fn team_push(backend: State<'_, Backend>) -> Result<TeamPushReport, ErrorReport> {
    with_cairn(&backend, |c| {
        c.team_push(&c.team_server(None)?, &mut |_, _| {})
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
        c.team_search(&c.team_server(None)?, &query, limit)
    })
    .await
}

/// A branch or PR (`#123`, a PR URL) across everyone who pushed.
#[tauri::command]
#[specta::specta]
pub async fn team_skim(
    backend: State<'_, Backend>,
    target: String,
) -> Result<TeamSkim, ErrorReport> {
    with_cairn(&backend, move |c| {
        c.team_skim(&c.team_server(None)?, &target)
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

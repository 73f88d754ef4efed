//! Cairn's MCP server in the agents' configs, from Settings: its status per agent, and an install
//! or uninstall that the window first runs as a dry run to show the exact change.

use cairn_core::archive::Agent;
use cairn_core::hooks::mcp_config::{McpInstall, McpStatus};
use cairn_core::{ErrorKind, ErrorReport};
use tauri::State;

use crate::backend::Backend;
use crate::commands::{find_cli, with_cairn};

/// Whether each agent's user config registers Cairn's MCP server.
#[tauri::command]
#[specta::specta]
pub async fn mcp_overview(backend: State<'_, Backend>) -> Result<Vec<McpStatus>, ErrorReport> {
    with_cairn(&backend, |c| Ok(c.mcp_status())).await
}

/// Register the `cairn` CLI (found as the hooks find it) as an agent's MCP server in its user
/// config (`dry_run`: only the diff).
#[tauri::command]
#[specta::specta]
pub async fn install_mcp(
    backend: State<'_, Backend>,
    agent: Agent,
    dry_run: bool,
) -> Result<McpInstall, ErrorReport> {
    let cli = find_cli()
        .map_err(|problem| ErrorReport::new(ErrorKind::NotFound, problem))?
        .path;
    with_cairn(&backend, move |c| c.mcp_install(agent, None, &cli, dry_run)).await
}

/// Take Cairn's MCP server out of an agent's user config (`dry_run`: only the diff).
#[tauri::command]
#[specta::specta]
pub async fn uninstall_mcp(
    backend: State<'_, Backend>,
    agent: Agent,
    dry_run: bool,
) -> Result<McpInstall, ErrorReport> {
    with_cairn(&backend, move |c| c.mcp_uninstall(agent, None, dry_run)).await
}

//! `cairn mcp install|uninstall`: register Cairn's MCP server in an agent's config, or take it
//! out, with the care `cairn hooks install` takes (dry run, backup, nothing else changed).

use std::io::Write;
use std::path::Path;

use anyhow::{Context, Result};
use cairn_core::Cairn;
use cairn_core::archive::Agent;
use cairn_core::hooks::mcp_config::McpInstall;
use clap::Subcommand;

use crate::McpAgentArg;
use crate::render::{self, clean};

#[derive(Subcommand)]
pub enum McpCommand {
    /// Register `cairn mcp` (this binary, by its absolute path; with `--data-dir <dir>` when the
    /// archive is not at its default place) as the `cairn` MCP server in the agent's config:
    /// Claude Code's ~/.claude.json, Codex's ~/.codex/config.toml, Gemini CLI's
    /// ~/.gemini/settings.json, Cursor's ~/.cursor/mcp.json, Copilot CLI's
    /// ~/.copilot/mcp-config.json, Qwen Code's ~/.qwen/settings.json, Factory Droid's
    /// ~/.factory/mcp.json, Kimi CLI's ~/.kimi/mcp.json; with --project, the repository's
    /// .mcp.json, .codex/config.toml, .gemini/settings.json, .cursor/mcp.json,
    /// .qwen/settings.json or .factory/mcp.json (one that links out of the repository is
    /// refused). Idempotent; keeps a backup (a project's in .git/cairn-backups/); changes
    /// nothing else in the file, follows its symlink, keeps its mode.
    Install {
        #[arg(long, value_enum)]
        agent: McpAgentArg,
        /// The project config of the repository of -C instead of the user's.
        #[arg(long)]
        project: bool,
        /// Show the change without writing it.
        #[arg(long)]
        dry_run: bool,
    },
    /// Take Cairn's MCP server out of the agent's config: the rest of the file stays byte for
    /// byte (a server list left empty goes; a file left empty is removed).
    Uninstall {
        #[arg(long, value_enum)]
        agent: McpAgentArg,
        /// The project config of the repository of -C instead of the user's.
        #[arg(long)]
        project: bool,
        /// Show the change without writing it.
        #[arg(long)]
        dry_run: bool,
    },
}

pub fn run(
    command: McpCommand,
    cairn: &Cairn,
    json: bool,
    dir: &Path,
    out: &mut impl Write,
) -> Result<()> {
    let result = match command {
        McpCommand::Install {
            agent,
            project,
            dry_run,
        } => {
            // The agent starts the server by this path, so it is the real file, not a link
            // that may move.
            let exe = std::env::current_exe()
                .and_then(std::fs::canonicalize)
                .context("cannot find the cairn executable to register")?;
            cairn.mcp_install(Agent::from(agent), project.then_some(dir), &exe, dry_run)?
        }
        McpCommand::Uninstall {
            agent,
            project,
            dry_run,
        } => cairn.mcp_uninstall(Agent::from(agent), project.then_some(dir), dry_run)?,
    };
    if json {
        render::json(out, &result)?;
    } else {
        render_change(out, &result)?;
    }
    Ok(())
}

fn render_change(out: &mut impl Write, r: &McpInstall) -> Result<()> {
    let path = clean(&r.path.display().to_string());
    let agent = r.agent;
    match (r.changed, r.dry_run, r.removed) {
        (false, _, false) => writeln!(out, "Cairn's MCP server is already in {path} ({agent}).")?,
        (false, _, true) => writeln!(out, "Cairn's MCP server is not in {path} ({agent}).")?,
        (true, true, removed) => {
            let what = match (removed, r.replaced) {
                (true, _) => "remove",
                (false, true) => "update",
                (false, false) => "add",
            };
            writeln!(
                out,
                "Would {what} Cairn's MCP server in {path} ({agent}; dry run, nothing written):"
            )?;
            write!(out, "{}", clean(&r.diff))?;
        }
        (true, false, removed) => {
            let what = match (removed, r.replaced) {
                (true, _) => "Removed",
                (false, true) => "Updated",
                (false, false) => "Added",
            };
            writeln!(out, "{what} Cairn's MCP server in {path} ({agent}).")?;
            render::backup(out, r.backup.as_deref())?;
        }
    }
    for note in &r.notes {
        writeln!(out, "Note: {}", clean(note))?;
    }
    Ok(())
}

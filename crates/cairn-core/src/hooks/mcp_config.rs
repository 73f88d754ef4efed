//! Registering `cairn mcp` as an MCP server in an agent's config, and taking it off again.
//!
//! Codex keeps its servers under `[mcp_servers.<name>]` in `~/.codex/config.toml`
//! (`$CODEX_HOME`) or a project's `.codex/config.toml`; Claude Code, Copilot CLI, Qwen Code,
//! Factory Droid and Kimi CLI under `mcpServers` in a JSON file ([`config_path`] names each).
//! Cairn's entry is named `cairn` and runs `<absolute path>/cairn mcp`, or
//! `<absolute path>/cairn --data-dir <dir> mcp` for an archive away from its default place.
//!
//! These files are the user's (`~/.claude.json` is also Claude Code's own state), so they get
//! the care the hook settings get: edited as text so nothing else changes (JSON through
//! [`super::json_text`]; TOML by whole lines, found where toml_edit's parser places the table;
//! both checked by parsing the result), written
//! through a symlink with the mode kept ([`crate::atomic::replace`]), a backup beside them, and a
//! diff that hides secrets. An entry named `cairn` that is not Cairn's server is refused, never
//! overwritten.

use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::{Value, json};

use super::json_text::{self, Syntax};
use crate::archive::Agent;
use crate::error::{Error, Result};

/// The server's name in every agent's config.
pub const SERVER: &str = "cairn";

/// What an install or uninstall did (or, with `dry_run`, would do).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct McpInstall {
    pub agent: Agent,
    /// True for an uninstall.
    pub removed: bool,
    pub changed: bool,
    /// An install that pointed Cairn's existing entry at this binary or archive.
    pub replaced: bool,
    pub path: PathBuf,
    pub backup: Option<PathBuf>,
    pub dry_run: bool,
    /// Unified diff of the config file, secrets hidden.
    pub diff: String,
    /// Things the person still has to do.
    pub notes: Vec<String>,
}

/// Whether an agent's config registers Cairn's MCP server.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct McpStatus {
    pub agent: Agent,
    pub path: PathBuf,
    pub installed: bool,
    /// The `cairn` the entry runs, when installed.
    pub command: Option<String>,
    /// The archive the entry names (`--data-dir`); `None` for the default place.
    pub data_dir: Option<PathBuf>,
    /// Installed, but for another archive than the one asked about: the agent's queries
    /// would not reach this one.
    pub other_archive: bool,
    /// Why the config could not be read, when it could not.
    pub problem: Option<String>,
}

/// The agents whose MCP config Cairn edits: each one Cairn reads that takes stdio MCP servers
/// in a config file its makers document.
pub const MCP_AGENTS: [Agent; 8] = [
    Agent::Claude,
    Agent::Codex,
    Agent::Gemini,
    Agent::Cursor,
    Agent::Copilot,
    Agent::Qwen,
    Agent::Droid,
    Agent::Kimi,
];

/// Where the agent's MCP servers are configured: the user's config, or the project's in
/// `project` (a repository root). An error for an agent without a project config, or one
/// outside [`MCP_AGENTS`].
///
/// - Claude Code: `~/.claude.json` (`$CLAUDE_CONFIG_DIR`), a project's `.mcp.json`;
/// - Codex: `~/.codex/config.toml` (`$CODEX_HOME`), a project's `.codex/config.toml`;
/// - Gemini CLI: `~/.gemini/settings.json` (`$GEMINI_CLI_HOME/.gemini/…` when set), a
///   project's `.gemini/settings.json`;
/// - Cursor: `~/.cursor/mcp.json`, a project's `.cursor/mcp.json`;
/// - Copilot CLI: `~/.copilot/mcp-config.json` (`$COPILOT_HOME/…` when set);
/// - Qwen Code: `~/.qwen/settings.json` (`$QWEN_HOME/…` when set), a project's
///   `.qwen/settings.json`;
/// - Factory Droid: `~/.factory/mcp.json`, a project's `.factory/mcp.json`;
/// - Kimi CLI: `~/.kimi/mcp.json` (`$KIMI_SHARE_DIR/…` when set).
pub fn config_path(agent: Agent, home: &Path, project: Option<&Path>) -> Result<PathBuf> {
    supported(agent)?;
    let env = |name: &str| {
        std::env::var_os(name)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    Ok(match (agent, project) {
        (Agent::Claude, Some(dir)) => dir.join(".mcp.json"),
        (Agent::Claude, None) => env("CLAUDE_CONFIG_DIR")
            .unwrap_or_else(|| home.to_owned())
            .join(".claude.json"),
        (Agent::Codex, Some(dir)) => dir.join(".codex").join("config.toml"),
        (Agent::Codex, None) => env("CODEX_HOME")
            .unwrap_or_else(|| home.join(".codex"))
            .join("config.toml"),
        (Agent::Gemini, Some(dir)) => dir.join(".gemini").join("settings.json"),
        // Where the CLI reads it: under `$GEMINI_CLI_HOME` when a profile sets it.
        (Agent::Gemini, None) => env(crate::archive::sources::gemini::ENV_HOME)
            .unwrap_or_else(|| home.to_owned())
            .join(".gemini")
            .join("settings.json"),
        (Agent::Cursor, Some(dir)) => dir.join(".cursor").join("mcp.json"),
        (Agent::Cursor, None) => home.join(".cursor").join("mcp.json"),
        // Each under the folder the agent's own variable names, when set.
        (Agent::Copilot, None) => env("COPILOT_HOME")
            .unwrap_or_else(|| home.join(".copilot"))
            .join("mcp-config.json"),
        (Agent::Qwen, Some(dir)) => dir.join(".qwen").join("settings.json"),
        (Agent::Qwen, None) => env("QWEN_HOME")
            .unwrap_or_else(|| home.join(".qwen"))
            .join("settings.json"),
        (Agent::Droid, Some(dir)) => dir.join(".factory").join("mcp.json"),
        (Agent::Droid, None) => home.join(".factory").join("mcp.json"),
        (Agent::Kimi, None) => env("KIMI_SHARE_DIR")
            .unwrap_or_else(|| home.join(".kimi"))
            .join("mcp.json"),
        (Agent::Copilot | Agent::Kimi, Some(_)) => {
            return Err(Error::Invalid(format!(
                "{agent} has no project MCP config Cairn knows; run the command without --project to register the server for your user"
            )));
        }
        // Outside MCP_AGENTS: `supported` refused it already.
        (
            Agent::Aider
            | Agent::Crush
            | Agent::Opencode
            | Agent::Atif
            | Agent::Cline
            | Agent::Roo
            | Agent::Kilo
            | Agent::Kiro
            | Agent::Pi
            | Agent::Openclaw
            | Agent::Grok
            | Agent::Hermes
            | Agent::Antigravity
            | Agent::Vibe
            | Agent::Iflow
            | Agent::Traex
            | Agent::Gptme
            | Agent::Posit
            | Agent::Qwenpaw
            | Agent::Vscopilot,
            _,
        ) => {
            return Err(Error::Invalid(format!(
                "{agent} takes no MCP servers Cairn can register"
            )));
        }
    })
}

/// Whether the agent's config is TOML (Codex) rather than JSON with an `mcpServers` object.
fn is_toml(agent: Agent) -> bool {
    agent == Agent::Codex
}

/// How the agent reads its JSON config: Gemini CLI and Qwen Code strip `//` and `/* */`
/// comments from `settings.json` before `JSON.parse` (`strip-json-comments`), so a person's
/// commented settings are theirs to keep; the others read plain JSON.
fn syntax(agent: Agent) -> Syntax {
    match agent {
        Agent::Gemini | Agent::Qwen => Syntax::Jsonc,
        _ => Syntax::Json,
    }
}

/// How an agent starts Cairn's server: the program and its arguments, `mcp` alone or
/// `--data-dir <dir> mcp`.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Launch {
    command: String,
    args: Vec<String>,
}

impl Launch {
    /// `cli mcp`, with `--data-dir <dir>` first when `data_dir` is given.
    fn new(cli: &str, data_dir: Option<&str>) -> Self {
        let mut args = Vec::new();
        if let Some(dir) = data_dir {
            args.extend(["--data-dir".to_owned(), dir.to_owned()]);
        }
        args.push("mcp".to_owned());
        Launch {
            command: cli.to_owned(),
            args,
        }
    }

    /// The archive it names, when not the default one.
    fn data_dir(&self) -> Option<&str> {
        match self.args.as_slice() {
            [_, dir, _] => Some(dir),
            _ => None,
        }
    }

    /// The entry's launch when it is Cairn's server: a program named `cairn` (any path) run
    /// with exactly `mcp`, or `--data-dir <dir> mcp`.
    fn ours(command: Option<&str>, args: Option<Vec<String>>) -> Option<Self> {
        let command = command.filter(|c| Path::new(c).file_name().is_some_and(|n| n == "cairn"))?;
        let args = args?;
        let shape = match args.as_slice() {
            [mcp] => mcp == "mcp",
            [flag, dir, mcp] => flag == "--data-dir" && !dir.is_empty() && mcp == "mcp",
            _ => false,
        };
        shape.then(|| Launch {
            command: command.to_owned(),
            args,
        })
    }
}

/// Register `cli mcp` as the `cairn` server in the agent's config (`project`: a repository
/// root, for the project's config), `cli --data-dir <data_dir> mcp` when the archive is not at
/// its default place. Idempotent; a `cairn` entry pointing at a moved binary or another archive
/// is pointed at `cli` and `data_dir`.
pub fn install(
    agent: Agent,
    home: &Path,
    project: Option<&Path>,
    cli: &Path,
    data_dir: Option<&Path>,
    dry_run: bool,
) -> Result<McpInstall> {
    // Cairn knows its entry by a program named `cairn`: one registered under another name
    // could never be found again (the install refused with "could not change … without
    // changing the rest of it", an uninstall with "not Cairn's server").
    if cli.file_name().is_none_or(|n| n != "cairn") {
        return Err(Error::Invalid(format!(
            "{} is not named `cairn`, the name Cairn knows its MCP server by; run the install from a binary named `cairn`",
            cli.display()
        )));
    }
    let dir = data_dir.map(|d| d.to_string_lossy());
    let launch = Launch::new(&cli.to_string_lossy(), dir.as_deref());
    change(agent, home, project, Some(&launch), dry_run)
}

/// Take Cairn's server out of the agent's config; what is left is the file as it was before
/// the install.
pub fn uninstall(
    agent: Agent,
    home: &Path,
    project: Option<&Path>,
    dry_run: bool,
) -> Result<McpInstall> {
    change(agent, home, project, None, dry_run)
}

/// Refuse a project config that leads out of the repository at `root`: a link committed in
/// the repository (`.mcp.json -> ~/.claude.json`) made `--project` edit the user's own config
/// and copy it, secrets and all, into the work tree as a backup.
fn inside_project(path: &Path, root: &Path) -> Result<()> {
    let target = crate::atomic::resolve(path).map_err(|e| Error::Read {
        path: path.to_owned(),
        source: e,
    })?;
    // The file may not exist yet; its folder, as far as it exists, says where it lies.
    let mut dir = target.parent().map(Path::to_path_buf);
    while let Some(d) = &dir {
        if let Ok(real) = std::fs::canonicalize(d) {
            let root = std::fs::canonicalize(root).unwrap_or_else(|_| root.to_owned());
            if real.starts_with(&root) {
                return Ok(());
            }
            break;
        }
        dir = d.parent().map(Path::to_path_buf);
    }
    Err(Error::Invalid(format!(
        "{} leads outside the repository (to {}); Cairn edits a project's config only inside it: remove the link, or run without --project",
        path.display(),
        target.display()
    )))
}

/// An error for an agent outside [`MCP_AGENTS`].
fn supported(agent: Agent) -> Result<()> {
    if MCP_AGENTS.contains(&agent) {
        return Ok(());
    }
    Err(Error::Invalid(format!(
        "Cairn does not know where {agent} keeps its MCP servers: add `cairn mcp` to {agent}'s MCP settings by hand"
    )))
}

fn change(
    agent: Agent,
    home: &Path,
    project: Option<&Path>,
    cli: Option<&Launch>,
    dry_run: bool,
) -> Result<McpInstall> {
    let path = config_path(agent, home, project)?;
    if let Some(root) = project {
        inside_project(&path, root)?;
    }
    super::unraced(&path, || change_once(agent, &path, project, cli, dry_run))
}

/// Where a project's backups go: where `git add -A` does not see them, in the git dir of the
/// worktree at `project`, not in its work tree. That is `.git` itself, or the folder a `.git`
/// file names (a linked worktree's `<common>/worktrees/<name>`, a submodule's
/// `modules/<name>`). The worktree's own git dir rather than the common one: backups of the
/// same file in two worktrees stay apart, and a backup (which may hold a secret) goes with its
/// worktree when git removes it. `None`: beside the file (the user's config).
fn backup_dir(project: Option<&Path>) -> Option<PathBuf> {
    project
        .and_then(crate::archive::project::git_dir_of)
        .map(|git| git.join("cairn-backups"))
}

/// Whether the JSON config at `path` held a server list (`mcpServers`, maybe empty) before
/// Cairn's install put its server in it, as the install's backup of the file says: the newest
/// backup without Cairn's server in it (a later one was taken with it in, by an uninstall or
/// another install) is the file as it was before. Without one, the install made the file, or
/// the backups are gone: the list is taken for the install's.
fn list_before_install(agent: Agent, path: &Path, project: Option<&Path>) -> bool {
    let dir = backup_dir(project).or_else(|| path.parent().map(Path::to_path_buf));
    let (Some(dir), Some(name)) = (dir, path.file_name()) else {
        return false;
    };
    let prefix = format!("{}.cairn-backup-", name.to_string_lossy());
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return false;
    };
    // `<name>.cairn-backup-<YYYYmmddTHHMMSS>[-n]`, the n-th of one second: newest first.
    let mut backups: Vec<(String, u32, String)> = entries
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter_map(|name| {
            let rest = name.strip_prefix(&prefix)?;
            let (stamp, n) = match rest.split_once('-') {
                Some((stamp, n)) => (stamp.to_owned(), n.parse().ok()?),
                None => (rest.to_owned(), 1),
            };
            Some((stamp, n, name))
        })
        .collect();
    backups.sort_unstable_by(|a, b| b.cmp(a));
    let syntax = syntax(agent);
    backups
        .iter()
        .filter_map(|(_, _, name)| super::settings::read_text(&dir.join(name)).ok())
        .find(|text| matches!(json_entry(path, text, syntax), Ok(None)))
        .and_then(|text| super::settings::parse_settings_as(path, &text, syntax).ok())
        .flatten()
        .is_some_and(|root| root.get("mcpServers").is_some())
}

/// One try of [`change`]: `None` when the file changed between the read and the write.
fn change_once(
    agent: Agent,
    path: &Path,
    project: Option<&Path>,
    cli: Option<&Launch>,
    dry_run: bool,
) -> Result<Option<McpInstall>> {
    let path = path.to_owned();
    let before = super::settings::read_text(&path)?;
    let after = if is_toml(agent) {
        toml_edit(&path, &before, cli)?
    } else {
        // An uninstall that leaves the server list empty keeps it when it was in the file
        // before Cairn's install: a person's own list, empty or not, is theirs.
        let keep_list = cli.is_none() && list_before_install(agent, &path, project);
        json_edit_keeping(agent, &path, &before, cli, keep_list)?
    };
    let hide = |text: &str| {
        if is_toml(agent) {
            hide_toml_secrets(text)
        } else {
            super::settings::hide_secrets(text)
        }
    };
    let diff = match &after {
        Some(after) => super::unified_diff(&path, &hide(&before), &hide(after)),
        None => String::new(),
    };
    let mut notes = Vec::new();
    if after.is_some() && cli.is_some() {
        notes.push(match (agent, project) {
            (Agent::Claude, Some(_)) => "Claude Code asks once whether to trust the servers of a project's .mcp.json; start a new session and approve `cairn`".to_owned(),
            (Agent::Codex, Some(_)) => "Codex reads a project's .codex/config.toml only in a project you trusted; start a new session".to_owned(),
            _ => "start a new agent session to load the server".to_owned(),
        });
    }
    if let (Some(launch), Some(_), Some(_)) = (cli, project, &after) {
        // The entry names this machine's paths, in a file a team commits: a teammate's agent
        // would start a program that is not there.
        // `--data-dir <dir>` when the archive is away from its default place.
        let data_dir = launch
            .args
            .iter()
            .position(|a| a == "--data-dir")
            .and_then(|i| launch.args.get(i + 1))
            .map(|dir| format!(" and its archive ({dir})"))
            .unwrap_or_default();
        notes.push(format!(
            "{} names this machine's cairn ({}){data_dir}: a teammate runs `cairn mcp install --agent {agent} --project` on their own machine, which repoints it, or the file stays out of the commit",
            path.display(),
            launch.command
        ));
    }
    // A file that held nothing but Cairn's server (install created it) goes, rather than
    // staying behind as an empty document; a linked one stays, its target being the user's.
    let linked = std::fs::symlink_metadata(&path).is_ok_and(|m| m.file_type().is_symlink());
    let delete = cli.is_none() && !linked && after.as_deref().is_some_and(super::empty_document);
    if delete {
        let verb = if dry_run { "would be" } else { "is" };
        notes.push(format!(
            "{} held nothing else, so it {verb} removed",
            path.display()
        ));
    }
    let mut backup = None;
    if let Some(after) = after.as_deref().filter(|_| !dry_run) {
        super::not_protected(&path)?;
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|e| Error::Write {
                path: dir.to_owned(),
                source: e,
            })?;
        }
        if !before.is_empty() {
            backup = Some(super::write_backup_in(
                &path,
                &before,
                backup_dir(project).as_deref(),
            )?);
        }
        if !super::unchanged_since(&path, &before)? {
            if let Some(b) = &backup {
                let _ = std::fs::remove_file(b);
            }
            return Ok(None);
        }
        // A project's config is shared with the team and holds no secret; the user's may.
        let mode = if project.is_some() {
            0o644
        } else {
            crate::private::FILE_MODE
        };
        if delete {
            std::fs::remove_file(&path).map_err(|e| Error::Write {
                path: path.clone(),
                source: e,
            })?;
        } else {
            crate::atomic::replace(&path, after.as_bytes(), mode).map_err(|e| Error::Write {
                path: e.path,
                source: e.source,
            })?;
        }
    }
    let present = if is_toml(agent) {
        toml_entry(&path, &before)?.is_some()
    } else {
        json_entry(&path, &before, syntax(agent))?.is_some()
    };
    Ok(Some(McpInstall {
        agent,
        removed: cli.is_none(),
        changed: after.is_some(),
        replaced: cli.is_some() && after.is_some() && present,
        path,
        backup,
        dry_run,
        diff,
        notes,
    }))
}

/// The entry in an agent's user config, as [`McpStatus`], against the archive in `archive`
/// (its real path when not at its default place, as `Cairn::data_dir_elsewhere` gives it).
pub fn status(
    agent: Agent,
    home: &Path,
    project: Option<&Path>,
    archive: Option<&Path>,
) -> McpStatus {
    let entry = |path: &Path| {
        let text = super::settings::read_text(path)?;
        if is_toml(agent) {
            toml_entry(path, &text)
        } else {
            json_entry(path, &text, syntax(agent)).map(|e| e.map(|(_, launch)| launch))
        }
    };
    let (path, found) = match config_path(agent, home, project) {
        Ok(path) => {
            let found = entry(&path);
            (path, found)
        }
        Err(e) => (PathBuf::new(), Err(e)),
    };
    let (launch, problem) = match found {
        Ok(launch) => (launch, None),
        Err(e) => (None, Some(e.to_string())),
    };
    let data_dir = launch
        .as_ref()
        .and_then(Launch::data_dir)
        .map(PathBuf::from);
    // A path a person wrote by hand may name the same dir another way.
    let served = data_dir
        .as_deref()
        .map(|d| std::fs::canonicalize(d).unwrap_or_else(|_| d.to_owned()));
    McpStatus {
        agent,
        path,
        installed: launch.is_some(),
        other_archive: launch.is_some() && served.as_deref() != archive,
        // Shown as they are read from a file anyone may have written: cleaned.
        data_dir: data_dir.map(|d| crate::text::printable(&d.to_string_lossy()).into()),
        command: launch.map(|l| crate::text::printable(&l.command)),
        problem,
    }
}

// ---- JSON: `mcpServers` (every agent but Codex) --------------------------------------------

/// `mcpServers.cairn` in the JSON config `text`: `None` when absent, its node and how it starts
/// the server when it is Cairn's, an error naming the file when it is someone else's or the
/// file is not a JSON object of the right shape.
fn json_entry(
    path: &Path,
    text: &str,
    syntax: Syntax,
) -> Result<Option<(json_text::Node, Launch)>> {
    let Some(root) = super::settings::parse_settings_as(path, text, syntax)? else {
        return Ok(None);
    };
    let Some(servers) = root.get("mcpServers") else {
        return Ok(None);
    };
    if !servers.is_object() {
        return Err(Error::Invalid(format!(
            "`mcpServers` in {} must be an object; fix it, then run the command again",
            path.display()
        )));
    }
    let Some(entry) = servers.get(SERVER) else {
        return Ok(None);
    };
    // A comment a person wrote in the entry is no part of it.
    let value: Option<Value> =
        serde_json::from_str(&json_text::blank(&text[entry.start..entry.end])).ok();
    let command = value
        .as_ref()
        .and_then(|v| v.get("command"))
        .and_then(Value::as_str);
    let args: Option<Vec<String>> = value
        .as_ref()
        .and_then(|v| v.get("args"))
        .and_then(|a| serde_json::from_value(a.clone()).ok());
    match Launch::ours(command, args) {
        Some(launch) => Ok(Some((entry.clone(), launch))),
        None => Err(Error::Invalid(format!(
            "`mcpServers.{SERVER}` in {} is not Cairn's server (it does not run `cairn mcp`); rename or remove it, then run the command again",
            path.display()
        ))),
    }
}

/// Cairn's entry in `agent`'s `mcpServers`, in the shape its makers document.
fn json_server(agent: Agent, launch: &Launch) -> Value {
    let (command, args) = (&launch.command, &launch.args);
    match agent {
        Agent::Claude | Agent::Droid => {
            json!({"type": "stdio", "command": command, "args": args})
        }
        // Copilot CLI names stdio `local` and loads only the tools an entry lists.
        Agent::Copilot => {
            json!({"type": "local", "command": command, "args": args, "tools": ["*"]})
        }
        _ => json!({"command": command, "args": args}),
    }
}

/// `text` with the server started by `launch` (or, for `None`, without Cairn's server), or
/// `None` when it is that way already. (The tests' and the `internals` feature's: the install
/// itself says whether an emptied list stays, [`json_edit_keeping`].)
#[cfg(any(test, feature = "internals"))]
fn json_edit(
    agent: Agent,
    path: &Path,
    text: &str,
    launch: Option<&Launch>,
) -> Result<Option<String>> {
    json_edit_keeping(agent, path, text, launch, false)
}

/// [`json_edit`]; taking Cairn's server out of a list that holds nothing else takes the list
/// too (an install added it), unless `keep_list` (the list was there before the install).
fn json_edit_keeping(
    agent: Agent,
    path: &Path,
    text: &str,
    launch: Option<&Launch>,
    keep_list: bool,
) -> Result<Option<String>> {
    let syntax = syntax(agent);
    let entry = json_entry(path, text, syntax)?;
    let after = match (launch, entry) {
        (Some(c), Some((_, present))) if present == *c => return Ok(None),
        (None, None) => return Ok(None),
        (Some(c), Some((node, present))) => {
            // Only the values that differ are rewritten; the rest of the entry, its layout
            // and any keys a person added, stays.
            let entry = json_text::parse_as(&text[node.start..node.end], syntax).ok();
            let field = |key: &str| entry.as_ref().and_then(|n| n.get(key));
            let (Some(command_node), Some(args_node)) = (field("command"), field("args")) else {
                return Err(Error::Invalid(format!(
                    "cannot find the command of `mcpServers.{SERVER}` in {}",
                    path.display()
                )));
            };
            let string = |s: &str| Value::String(s.to_owned()).to_string();
            let mut edits = Vec::new();
            if present.command != c.command {
                edits.push(json_text::Edit {
                    start: node.start + command_node.start,
                    end: node.start + command_node.end,
                    with: string(&c.command),
                });
            }
            match &args_node.kind {
                // As many arguments: only those that differ, so the array keeps its layout.
                json_text::Kind::Array(items) if items.len() == c.args.len() => {
                    for ((item, was), want) in items.iter().zip(&present.args).zip(&c.args) {
                        if was != want {
                            edits.push(json_text::Edit {
                                start: node.start + item.start,
                                end: node.start + item.end,
                                with: string(want),
                            });
                        }
                    }
                }
                _ => edits.push(json_text::Edit {
                    start: node.start + args_node.start,
                    end: node.start + args_node.end,
                    with: format!(
                        "[{}]",
                        c.args
                            .iter()
                            .map(|a| string(a))
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                }),
            }
            json_text::apply(text, edits)
        }
        (Some(c), None) => {
            let servers = || {
                let mut m = serde_json::Map::new();
                m.insert(SERVER.to_owned(), json_server(agent, c));
                Value::Object(m)
            };
            match super::settings::parse_settings_as(path, text, syntax)? {
                None => format!(
                    "{}\n",
                    serde_json::to_string_pretty(&json!({ "mcpServers": servers() }))
                        .unwrap_or_default()
                ),
                Some(root) => {
                    let edit = match root.get("mcpServers") {
                        Some(s) => {
                            json_text::insert_members(text, s, &[(SERVER, json_server(agent, c))])
                        }
                        None => {
                            json_text::insert_members(text, &root, &[("mcpServers", servers())])
                        }
                    };
                    json_text::apply(text, vec![edit])
                }
            }
        }
        (None, Some(_)) => {
            let Some(root) = super::settings::parse_settings_as(path, text, syntax)? else {
                return Ok(None);
            };
            let index = |node: &json_text::Node, key: &str| match &node.kind {
                json_text::Kind::Object(m) => m.iter().rposition(|(k, _, _)| k == key),
                _ => None,
            };
            let servers = root.get("mcpServers");
            // A repeated `mcpServers` stays: taking the last off would uncover the one before.
            let once = matches!(&root.kind, json_text::Kind::Object(m)
                if m.iter().filter(|(k, _, _)| k == "mcpServers").count() == 1);
            let edit = match servers {
                // Cairn's was the only server: the whole `mcpServers` goes, as install added it.
                Some(s)
                    if once
                        && !keep_list
                        && matches!(&s.kind, json_text::Kind::Object(m) if m.len() == 1) =>
                {
                    index(&root, "mcpServers").and_then(|i| json_text::remove(&root, i))
                }
                Some(s) => index(s, SERVER).and_then(|i| json_text::remove(s, i)),
                None => None,
            };
            match edit {
                // A person's comments in what goes stay.
                Some(edit) => json_text::apply(text, vec![json_text::keeping_comments(text, edit)]),
                None => return Ok(None),
            }
        }
    };
    // The result must parse and hold exactly the server wanted, or nothing is written.
    let check = json_entry(path, &after, syntax);
    let ok = match (launch, check) {
        (Some(c), Ok(Some((_, present)))) => present == *c,
        (None, Ok(None)) => true,
        _ => false,
    };
    if !ok {
        return Err(Error::Invalid(format!(
            "could not change `mcpServers.{SERVER}` in {} without changing the rest of it; edit it by hand",
            path.display()
        )));
    }
    Ok(Some(after))
}

// ---- Codex: TOML --------------------------------------------------------------------------

/// The parsed TOML document, or an error naming the file.
fn parse_toml(path: &Path, text: &str) -> Result<toml::Table> {
    text.parse::<toml::Table>().map_err(|e| {
        Error::Invalid(format!(
            "{} is not valid TOML ({}); fix it or move it aside, then run the command again",
            path.display(),
            e.message()
        ))
    })
}

/// How `[mcp_servers.cairn]` starts the server when it is Cairn's; an error when the entry is
/// someone else's or the tables have the wrong types.
fn toml_entry(path: &Path, text: &str) -> Result<Option<Launch>> {
    let doc = parse_toml(path, text)?;
    let Some(servers) = doc.get("mcp_servers") else {
        return Ok(None);
    };
    let Some(servers) = servers.as_table() else {
        return Err(Error::Invalid(format!(
            "`mcp_servers` in {} must be a table; fix it, then run the command again",
            path.display()
        )));
    };
    let Some(entry) = servers.get(SERVER) else {
        return Ok(None);
    };
    let command = entry.get("command").and_then(toml::Value::as_str);
    let args: Option<Vec<String>> = entry.get("args").and_then(|a| {
        a.as_array()?
            .iter()
            .map(|v| v.as_str().map(str::to_owned))
            .collect()
    });
    match Launch::ours(command, args) {
        Some(launch) => Ok(Some(launch)),
        None => Err(Error::Invalid(format!(
            "[mcp_servers.{SERVER}] in {} is not Cairn's server (it does not run `cairn mcp`); rename or remove it, then run the command again",
            path.display()
        ))),
    }
}

/// A table header's dotted key, its parts unquoted and trimmed (`[ "mcp_servers" . cairn ]` →
/// `["mcp_servers", "cairn"]`); `None` for any other line.
fn header(line: &str) -> Option<Vec<String>> {
    let line = line.trim();
    let line = line.split_once('#').map_or(line, |(h, _)| h).trim_end();
    let inner = line
        .strip_prefix("[[")
        .and_then(|l| l.strip_suffix("]]"))
        .or_else(|| line.strip_prefix('[').and_then(|l| l.strip_suffix(']')))?;
    Some(
        inner
            .split('.')
            .map(|p| p.trim().trim_matches(|c| c == '"' || c == '\'').to_owned())
            .collect(),
    )
}

/// A table header of a TOML document as its parser reads it.
struct Header {
    /// Where the header lies (`[a.b]`, `[[a]]`).
    span: std::ops::Range<usize>,
    /// Its key path, parts unquoted.
    key: Vec<String>,
    /// Where the comment lines written above it begin (`span.start` when there are none): they
    /// belong to it, not to the table before.
    lead: usize,
}

/// Every table header of a TOML document, in text order, as TOML's own parser reads them (not
/// lines inside a multi-line string or array, nor a quoted key holding a dot); and where the
/// comment lines after the last table begin (the text's end when there are none).
fn toml_headers(text: &str) -> Option<(Vec<Header>, usize)> {
    fn lead(text: &str, table: &toml_edit::Table, at: usize) -> usize {
        let prefix = table.decor().prefix().and_then(toml_edit::RawString::span);
        prefix.map_or(at, |p| first_comment(text, p))
    }
    fn walk(text: &str, table: &toml_edit::Table, path: &mut Vec<String>, out: &mut Vec<Header>) {
        for (key, item) in table.iter() {
            path.push(key.to_owned());
            let tables: Vec<&toml_edit::Table> = match item {
                toml_edit::Item::Table(t) => vec![t],
                toml_edit::Item::ArrayOfTables(a) => a.iter().collect(),
                _ => Vec::new(),
            };
            for t in tables {
                if let Some(span) = t.span().filter(|_| !t.is_implicit() && !t.is_dotted()) {
                    out.push(Header {
                        lead: lead(text, t, span.start),
                        span,
                        key: path.clone(),
                    });
                }
                walk(text, t, path, out);
            }
            path.pop();
        }
    }
    let doc = toml_edit::Document::parse(text).ok()?;
    let mut out = Vec::new();
    walk(text, doc.as_table(), &mut Vec::new(), &mut out);
    out.sort_by_key(|h| h.span.start);
    let tail = doc
        .trailing()
        .span()
        .map_or(text.len(), |t| first_comment(text, t));
    Some((out, tail))
}

/// Where the first comment line of the whitespace and comments in `span` begins (blank lines
/// before it are the space after the table before), or the span's end.
fn first_comment(text: &str, span: std::ops::Range<usize>) -> usize {
    let mut start = span.start;
    for line in text[span.clone()].split_inclusive('\n') {
        if line.trim_start().starts_with('#') {
            return start;
        }
        start += line.len();
    }
    span.end
}

/// The index of the line holding byte `at`.
fn line_of(text: &str, at: usize) -> usize {
    text[..at].matches('\n').count()
}

/// How many lines start before byte `at`: the index of the line starting there, or the
/// number of lines (a last one without its line break counted) for the text's end.
fn lines_before(text: &str, at: usize) -> usize {
    text[..at].split_inclusive('\n').count()
}

/// The lines of `[mcp_servers.cairn]` and its sub-tables, wherever each lies: ranges of line
/// indices, in order. Each ends where the comment lines above the next table (or at the end of
/// the file) begin: a person wrote those, not Cairn.
fn toml_blocks(text: &str) -> Option<Vec<(usize, usize)>> {
    let (headers, tail) = toml_headers(text)?;
    let ours = |key: &[String]| key.len() >= 2 && key[0] == "mcp_servers" && key[1] == SERVER;
    let mut blocks: Vec<(usize, usize)> = Vec::new();
    for (i, h) in headers.iter().enumerate().filter(|(_, h)| ours(&h.key)) {
        let start = line_of(text, h.span.start);
        let end = lines_before(text, headers.get(i + 1).map_or(tail, |n| n.lead));
        match blocks.last_mut() {
            // A sub-table right after: one block.
            Some(last) if last.1 >= start => last.1 = end,
            _ => blocks.push((start, end)),
        }
    }
    (!blocks.is_empty()).then_some(blocks)
}

fn toml_string(s: &str) -> String {
    toml::Value::String(s.to_owned()).to_string()
}

fn toml_strings(items: &[String]) -> String {
    toml::Value::Array(items.iter().cloned().map(toml::Value::String).collect()).to_string()
}

/// `text` with the server started by `launch` (or, for `None`, without it), or `None` when it
/// is that way already.
fn toml_edit(path: &Path, text: &str, launch: Option<&Launch>) -> Result<Option<String>> {
    let present = toml_entry(path, text)?;
    if present.as_ref() == launch {
        return Ok(None);
    }
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let by_hand = || {
        Error::Invalid(format!(
            "could not change [mcp_servers.{SERVER}] in {} without changing the rest of it; edit it by hand",
            path.display()
        ))
    };
    // Lines added end as the file's own do.
    let eol = super::json_text::line_ending(text);
    let after = match launch {
        Some(c) if present.is_none() => {
            // A blank line before the table, even after one the file ends with: an uninstall
            // takes one off with the table, and gives the file back as it was.
            let sep = match text {
                "" => String::new(),
                t if t.ends_with('\n') => eol.to_owned(),
                _ => eol.repeat(2),
            };
            format!(
                "{text}{sep}[mcp_servers.{SERVER}]{eol}command = {}{eol}args = {}{eol}",
                toml_string(&c.command),
                toml_strings(&c.args)
            )
        }
        Some(c) => {
            // Point the existing entry's `command` and `args` at this binary and archive;
            // nothing else in it changes, their comments included.
            let doc = toml_edit::Document::parse(text).map_err(|_| by_hand())?;
            let span = |key: &str| doc.get("mcp_servers")?.get(SERVER)?.get(key)?.span();
            let present = present.as_ref().ok_or_else(by_hand)?;
            let mut edits = Vec::new();
            if present.command != c.command {
                edits.push((
                    span("command").ok_or_else(by_hand)?,
                    toml_string(&c.command),
                ));
            }
            if present.args != c.args {
                edits.push((span("args").ok_or_else(by_hand)?, toml_strings(&c.args)));
            }
            edits.sort_by_key(|(span, _)| std::cmp::Reverse(span.start));
            let mut after = text.to_owned();
            for (span, with) in edits {
                after.replace_range(span, &with);
            }
            after
        }
        None => {
            let blocks = toml_blocks(text).ok_or_else(by_hand)?;
            let mut head = String::new();
            let mut from = 0;
            for (start, end) in blocks {
                head.push_str(&lines[from..start].concat());
                from = end;
            }
            let tail: String = lines[from..].concat();
            // The blank line install put before the table goes with it.
            if tail.is_empty() && head.ends_with(&eol.repeat(2)) {
                head.truncate(head.len() - eol.len());
            }
            // An `[mcp_servers]` header left with nothing under it stays: install writes
            // none (its table is `[mcp_servers.cairn]`), so it is the person's.
            head + &tail
        }
    };
    // The result must parse, hold exactly the server wanted, and keep everything else.
    let strip = |t: &str| -> Result<toml::Table> {
        let mut doc = parse_toml(path, t)?;
        let empty = match doc
            .get_mut("mcp_servers")
            .and_then(toml::Value::as_table_mut)
        {
            Some(servers) => {
                servers.remove(SERVER);
                servers.is_empty()
            }
            None => false,
        };
        if empty {
            doc.remove("mcp_servers");
        }
        Ok(doc)
    };
    let same_rest = matches!((strip(text), strip(&after)), (Ok(a), Ok(b)) if same_table(&a, &b));
    if !same_rest || toml_entry(path, &after).ok().flatten().as_ref() != launch {
        return Err(by_hand());
    }
    Ok(Some(after))
}

/// Whether two documents hold the same values, a `nan` being the same as a `nan` (TOML's own
/// equality, IEEE's, says it is not, which refused every config holding one).
fn same_table(a: &toml::Table, b: &toml::Table) -> bool {
    a.len() == b.len()
        && a.iter()
            .all(|(k, v)| b.get(k).is_some_and(|w| same_value(v, w)))
}

fn same_value(a: &toml::Value, b: &toml::Value) -> bool {
    use toml::Value::{Array, Float, Table};
    match (a, b) {
        (Float(x), Float(y)) => x == y || (x.is_nan() && y.is_nan()),
        (Array(x), Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(v, w)| same_value(v, w))
        }
        (Table(x), Table(y)) => same_table(x, y),
        _ => a == b,
    }
}

/// What a person may see of a TOML config: the values of keys in `env` and `*headers` tables
/// (and of secret-sounding keys anywhere) replaced by a marker, then the rest through the
/// redactor. Lines keep their count.
///
/// The values are found as TOML's parser reads them, so none hides behind a dotted key
/// (`env.TOKEN = …`), in an inline table (`db = { env = { … } }`) or on the lines after its key
/// (a multi-line string, array or inline table); text that is not TOML is read line by line.
pub(super) fn hide_toml_secrets(text: &str) -> String {
    use toml_edit::{Item, Value};

    fn rule(key: &str) -> Option<&'static str> {
        if key.eq_ignore_ascii_case("env") || key.to_ascii_lowercase().contains("headers") {
            Some("env")
        } else if crate::archive::redact::is_sensitive_key(key) {
            Some(crate::archive::redact::SENSITIVE_KEY)
        } else {
            None
        }
    }
    /// Where each hidden value lies, and why it is hidden.
    type Found = Vec<(std::ops::Range<usize>, &'static str)>;
    fn value(v: &Value, hidden: Option<&'static str>, out: &mut Found) {
        match v {
            Value::Array(items) => {
                let mut after_flag = false;
                for v in items.iter() {
                    let why = hidden.or(after_flag.then_some(super::settings::SECRET_ARGUMENT));
                    value(v, why, out);
                    after_flag = v.as_str().is_some_and(super::settings::names_a_secret);
                }
            }
            Value::InlineTable(t) => {
                for (k, v) in t.iter() {
                    value(v, hidden.or_else(|| rule(k)), out);
                }
            }
            leaf => {
                if let (Some(why), Some(span)) = (hidden, leaf.span()) {
                    out.push((span, why));
                }
            }
        }
    }
    fn item(i: &Item, hidden: Option<&'static str>, out: &mut Found) {
        let tables: Vec<&toml_edit::Table> = match i {
            Item::Table(t) => vec![t],
            Item::ArrayOfTables(a) => a.iter().collect(),
            Item::Value(v) => return value(v, hidden, out),
            Item::None => Vec::new(),
        };
        for t in tables {
            for (k, i) in t.iter() {
                item(i, hidden.or_else(|| rule(k)), out);
            }
        }
    }
    let out = match toml_edit::Document::parse(text) {
        Ok(doc) => {
            let mut found = Vec::new();
            item(doc.as_item(), None, &mut found);
            let edits = found
                .into_iter()
                .map(|(span, why)| {
                    let marker = crate::archive::redact::marker(why);
                    // A string over several lines stays one, over as many lines.
                    let breaks = text[span.clone()].matches('\n').count();
                    json_text::Edit {
                        with: match breaks {
                            0 => format!("\"{marker}\""),
                            n => format!("\"\"\"{marker}{}\"\"\"", "\n".repeat(n)),
                        },
                        start: span.start,
                        end: span.end,
                    }
                })
                .collect();
            json_text::apply(text, edits)
        }
        Err(_) => hide_toml_lines(text),
    };
    let mut findings = Vec::new();
    crate::archive::redact::Redactor::global()
        .redact_text(&out, "", &mut findings)
        .into_owned()
}

/// [`hide_toml_secrets`] for text that is not TOML: keys of `env` tables and secret-sounding
/// keys, line by line.
fn hide_toml_lines(text: &str) -> String {
    let mut in_env = false;
    let mut out = String::with_capacity(text.len());
    for line in text.split_inclusive('\n') {
        if let Some(key) = header(line) {
            in_env = key
                .last()
                .is_some_and(|k| k.eq_ignore_ascii_case("env") || k.contains("headers"));
            out.push_str(line);
            continue;
        }
        let hidden = line.split_once('=').and_then(|(key, _)| {
            let key = key.trim().trim_matches(|c| c == '"' || c == '\'');
            let rule = if in_env || key.eq_ignore_ascii_case("env") {
                "env"
            } else if crate::archive::redact::is_sensitive_key(key) {
                crate::archive::redact::SENSITIVE_KEY
            } else {
                return None;
            };
            Some((key.to_owned(), rule))
        });
        match hidden {
            Some((key, rule)) => {
                let eol = if line.ends_with('\n') { "\n" } else { "" };
                out.push_str(&format!(
                    "{key} = \"{}\"{eol}",
                    crate::archive::redact::marker(rule)
                ));
            }
            None => out.push_str(line),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn usr_bin() -> Launch {
        Launch::new("/usr/bin/cairn", None)
    }

    /// What the status reads from a config (a file anyone may have written) is shown cleaned.
    #[test]
    fn a_status_shows_the_entry_cleaned() {
        let home = tempfile::tempdir().unwrap();
        let text = r#"{"mcpServers": {"cairn": {"command": "/opt/\u202ex/cairn", "args": ["--data-dir", "/d/\u001b]0;pwned\u0007a", "mcp"]}}}"#;
        std::fs::write(home.path().join(".claude.json"), text).unwrap();
        let s = status(Agent::Claude, home.path(), None, None);
        assert_eq!(s.command.as_deref(), Some("/opt/x/cairn"));
        assert_eq!(s.data_dir.as_deref(), Some(Path::new("/d/a")));
        assert!(s.other_archive);
    }

    /// A binary not named `cairn` is refused before anything is read or written: the entry it
    /// would write is one Cairn cannot recognise as its own again.
    #[test]
    fn a_binary_not_named_cairn_is_refused() {
        let home = tempfile::tempdir().unwrap();
        let err = install(
            Agent::Claude,
            home.path(),
            None,
            Path::new("/opt/cairn-dev"),
            None,
            false,
        )
        .unwrap_err();
        assert!(err.to_string().contains("not named `cairn`"), "{err}");
        assert_eq!(std::fs::read_dir(home.path()).unwrap().count(), 0);
    }

    /// An archive away from its default place is named in the entry (`--data-dir <dir> mcp`):
    /// the agent starts the server without the person's environment, so without it the server
    /// read the default archive. Moving the archive or the binary rewrites only what changed.
    #[test]
    fn an_archive_elsewhere_is_named_in_the_entry() {
        let elsewhere = Launch::new("/usr/bin/cairn", Some("/data/my archive"));
        let moved = Launch::new("/usr/bin/cairn", Some("/data/other"));
        let json = Path::new("/h/.claude.json");
        let before = "{\n  \"theme\": \"dark\"\n}\n";
        let on = json_edit(Agent::Claude, json, before, Some(&elsewhere))
            .unwrap()
            .unwrap();
        let args: Value = serde_json::from_str(&on).unwrap();
        assert_eq!(
            args["mcpServers"]["cairn"]["args"],
            json!(["--data-dir", "/data/my archive", "mcp"])
        );
        assert_eq!(
            json_entry(json, &on, Syntax::Json).unwrap().unwrap().1,
            elsewhere
        );
        assert_eq!(
            json_edit(Agent::Claude, json, &on, Some(&elsewhere)).unwrap(),
            None
        );
        let again = json_edit(Agent::Claude, json, &on, Some(&moved))
            .unwrap()
            .unwrap();
        assert_eq!(
            again,
            on.replace(r#""/data/my archive""#, r#""/data/other""#)
        );
        // Back at the default place: the flag goes; the uninstall gives the file back.
        let home = json_edit(Agent::Claude, json, &again, Some(&usr_bin()))
            .unwrap()
            .unwrap();
        assert!(home.contains(r#""args": ["mcp"]"#), "{home}");
        assert_eq!(
            json_edit(Agent::Claude, json, &again, None)
                .unwrap()
                .unwrap(),
            before
        );

        let toml = Path::new("/h/.codex/config.toml");
        let before = "model = \"x\"\n";
        let on = toml_edit(toml, before, Some(&elsewhere)).unwrap().unwrap();
        assert!(
            on.ends_with("args = [\"--data-dir\", \"/data/my archive\", \"mcp\"]\n"),
            "{on}"
        );
        let again = toml_edit(toml, &on, Some(&moved)).unwrap().unwrap();
        assert_eq!(again, on.replace("/data/my archive", "/data/other"));
        let both = Launch::new("/opt/cairn", Some("/data/my archive"));
        let back = toml_edit(toml, &again, Some(&both)).unwrap().unwrap();
        assert_eq!(back, on.replace("\"/usr/bin/cairn\"", "\"/opt/cairn\""));
        assert_eq!(toml_edit(toml, &back, None).unwrap().unwrap(), before);

        // Anything else after `cairn` is still someone else's entry.
        for args in [
            r#"["--data-dir", "", "mcp"]"#,
            r#"["--verbose", "x", "mcp"]"#,
            r#"["mcp", "x"]"#,
        ] {
            let text = format!(
                r#"{{"mcpServers": {{"cairn": {{"command": "/usr/bin/cairn", "args": {args}}}}}}}"#
            );
            let e = json_edit(Agent::Claude, json, &text, None).unwrap_err();
            assert!(e.to_string().contains("not Cairn's server"), "{args}: {e}");
        }
    }

    /// Lines that look like `[mcp_servers.cairn]` without being it, or hide it from a reader of
    /// lines: install and uninstall leave every other byte as it was.
    #[test]
    fn codex_tables_are_found_as_toml_reads_them() {
        let path = Path::new("/h/.codex/config.toml");
        for before in [
            // An odd `"""` in a comment made every later line look like part of a string:
            // install added the table, uninstall then refused to find it.
            "# use \"\"\" for long text\nmodel = \"x\"\n",
            "model = 'a \"\"\" b'\n",
            // A table whose quoted name holds a dot, and an array holding such a name: both
            // were taken for Cairn's table, and the install refused.
            "[\"mcp_servers.cairn\"]\ncommand = \"/usr/bin/cairn\"\nargs = [\"mcp\"]\n",
            "list = [\n  [\"mcp_servers.cairn\"]\n]\n",
            "notes = \"\"\"\n[mcp_servers.cairn]\n\"\"\"\n",
            // A `nan` (no float equal to itself) made the "rest unchanged" check refuse.
            "temperature = nan\n[tui]\nlimits = [1.5, -nan, { x = +nan }]\n",
        ] {
            let after = toml_edit(path, before, Some(&usr_bin()))
                .unwrap_or_else(|e| panic!("{before:?}: {e}"))
                .unwrap();
            assert!(after.starts_with(before), "{after}");
            let back = toml_edit(path, &after, None)
                .unwrap_or_else(|e| panic!("{after:?}: {e}"))
                .unwrap();
            assert_eq!(back, before);
        }
        // A file ending with a blank line keeps it.
        for before in ["model = \"x\"\n\n", "model = \"x\"\r\n\r\n", "\n\n"] {
            let after = toml_edit(path, before, Some(&usr_bin())).unwrap().unwrap();
            assert_eq!(toml_edit(path, &after, None).unwrap().unwrap(), before);
        }
        // A file written on Windows gets Cairn's table in CRLF lines, and back byte for byte.
        for before in [
            "model = \"x\"\r\n",
            "model = \"x\"\r\n[tui]\r\nx = 1\r\n",
            "a = 1\r\n\r\n",
        ] {
            let after = toml_edit(path, before, Some(&usr_bin())).unwrap().unwrap();
            assert!(
                !after.replace("\r\n", "").contains('\n'),
                "a bare line feed in {after:?}"
            );
            assert_eq!(toml_edit(path, &after, None).unwrap().unwrap(), before);
        }
        // A moved Cairn is repointed with the command's comment kept.
        let moved =
            "[mcp_servers.cairn]\ncommand = \"/old/bin/cairn\"  # moved\nargs = [\"mcp\"]\n";
        assert_eq!(
            toml_edit(path, moved, Some(&usr_bin())).unwrap().unwrap(),
            moved.replace("/old/bin/", "/usr/bin/")
        );
    }

    /// The comment a person wrote above the table after Cairn's belongs to that table: an
    /// uninstall took it away with Cairn's lines. Blank lines between stay with Cairn's table.
    #[test]
    fn uninstall_keeps_the_comment_above_the_next_table() {
        let path = Path::new("/h/.codex/config.toml");
        let cases = [
            (
                "[mcp_servers.cairn]\ncommand = \"/usr/bin/cairn\"\nargs = [\"mcp\"]\n\n# the database, for tests\n# (local only)\n[mcp_servers.db]\ncommand = \"pg\"\n",
                "# the database, for tests\n# (local only)\n[mcp_servers.db]\ncommand = \"pg\"\n",
            ),
            (
                "model = \"x\"\n\n[mcp_servers.cairn]\ncommand = \"/usr/bin/cairn\"\nargs = [\"mcp\"]\n  # indented, then blank\n\n[tui]\nx = 1\n",
                "model = \"x\"\n\n  # indented, then blank\n\n[tui]\nx = 1\n",
            ),
            // `[mcp_servers]` left empty stays (install writes none: it is the person's); so
            // does the comment above the next table.
            (
                "[mcp_servers]\n\n[mcp_servers.cairn]\ncommand = \"/usr/bin/cairn\"\nargs = [\"mcp\"]\n\n# settings of the terminal UI\n[tui]\nx = 1\n",
                "[mcp_servers]\n\n# settings of the terminal UI\n[tui]\nx = 1\n",
            ),
            // A sub-table of Cairn's written after other tables goes too (it was left, and the
            // entry it left was no server).
            (
                "[mcp_servers.cairn]\ncommand = \"/usr/bin/cairn\"\nargs = [\"mcp\"]\n\n[features]\nx = true\n\n[mcp_servers.cairn.env]\nX = \"y\"\n\n[tui]\n",
                "[features]\nx = true\n\n[tui]\n",
            ),
            // Comments after Cairn's table at the end of the file are kept too.
            (
                "a = 1\n\n[mcp_servers.cairn]\ncommand = \"/usr/bin/cairn\"\nargs = [\"mcp\"]\n# [mcp_servers.old]\n# command = \"x\"",
                "a = 1\n\n# [mcp_servers.old]\n# command = \"x\"",
            ),
            // A comment inside Cairn's table, before a key of it, goes with the table.
            (
                "[mcp_servers.cairn]\n# ours\ncommand = \"/usr/bin/cairn\"\nargs = [\"mcp\"]\n[tui]\n",
                "[tui]\n",
            ),
        ];
        for (before, want) in cases {
            let after = toml_edit(path, before, None)
                .unwrap_or_else(|e| panic!("{before:?}: {e}"))
                .unwrap();
            assert_eq!(after, want, "{before:?}");
        }
    }

    /// The argument after a secret's flag is hidden in a Codex config's diff too.
    #[test]
    fn a_toml_diff_hides_a_flags_secret_argument() {
        let toml = "[mcp_servers.db]\ncommand = \"pg\"\nargs = [\"--password\", \"Zq1plain\", \"-v\", \"kept\"]\n";
        let hidden = hide_toml_secrets(toml);
        assert!(
            !hidden.contains("Zq1") && hidden.contains("\"kept\""),
            "{hidden}"
        );
    }

    /// What a diff shows of a Codex config hides every env value and secret, however it is
    /// written: a dotted key, a multi-line inline table, string or array (their later lines were
    /// shown), an inline table inside another key's value.
    #[test]
    fn a_toml_diff_hides_every_env_value_and_secret() {
        let secrets = "[mcp_servers.a]\nenv.X = \"Zq1\"\n\n[mcp_servers.b]\nenv = {\n  Y = \"Zq2\",\n}\n\n[mcp_servers.c.env]\nPASSWORD = \"\"\"\nZq3\n\"\"\"\nN = [\n  'Zq4',\n]\n\n[mcp_servers.d]\ncommand = \"pg\"\nclient_secret = '''\nZq5'''\nhttp_headers = { Authorization = \"Bearer Zq6\" }\n\n[mcp_servers]\ne = { command = \"x\", env = { Z = \"Zq7\" } }\n";
        let hidden = hide_toml_secrets(secrets);
        assert!(!hidden.contains("Zq"), "{hidden}");
        assert_eq!(hidden.lines().count(), secrets.lines().count());
        assert!(hidden.contains("command = \"pg\"\n"), "{hidden}");
        let last = "client_secret = '''\nZq5\n'''";
        assert_eq!(hide_toml_secrets(last).lines().count(), 3);
    }

    /// `mcpServers` named twice: agents read the last; taking it off whole when Cairn's server
    /// was its only one made the first (servers the agent did not start) the one read.
    #[test]
    fn uninstall_leaves_a_repeated_servers_key() {
        let path = Path::new("/h/.claude.json");
        let text = r#"{"mcpServers": {"db": {"command": "pg"}}, "mcpServers": {"cairn": {"command": "/usr/bin/cairn", "args": ["mcp"]}}}"#;
        let after = json_edit(Agent::Claude, path, text, None).unwrap().unwrap();
        assert_eq!(
            after,
            r#"{"mcpServers": {"db": {"command": "pg"}}, "mcpServers": {}}"#
        );
    }

    /// A project config's backup (the file before the install, which may hold a teammate's
    /// server with its password) lands in the git dir of the worktree it was taken in, never
    /// in a work tree where `git status` shows it and `git add -A` commits it: a linked
    /// worktree's and a separated repository's `.git` is a file naming that dir (a
    /// submodule's is the same), not a folder.
    #[test]
    fn a_worktrees_backup_lands_in_its_git_dir_not_its_work_tree() {
        use crate::git::repo::testing::git;
        let tmp = tempfile::tempdir().unwrap();
        let top = std::fs::canonicalize(tmp.path()).unwrap();
        let (main, linked, separated) =
            (top.join("main"), top.join("linked"), top.join("separated"));
        std::fs::create_dir_all(&main).unwrap();
        git(&main, &["init", "-q", "-b", "main"], None);
        git(
            &main,
            &["commit", "-q", "--allow-empty", "-m", "init"],
            None,
        );
        let wt = linked.to_string_lossy().into_owned();
        git(&main, &["worktree", "add", "-q", "-b", "wt", &wt], None);
        // `git init --separate-git-dir` leaves the `gitdir:` file a submodule's work tree has.
        let modules = top.join("super/.git/modules/sub");
        std::fs::create_dir_all(top.join("super/.git/modules")).unwrap();
        let (sep, modules_arg) = (
            separated.to_string_lossy().into_owned(),
            modules.to_string_lossy().into_owned(),
        );
        git(
            &top,
            &["init", "-q", "--separate-git-dir", &modules_arg, &sep],
            None,
        );
        for (root, git_dir) in [
            (&linked, main.join(".git/worktrees/linked")),
            (&separated, modules),
            (&main, main.join(".git")),
        ] {
            let before = r#"{"mcpServers": {"db": {"command": "pg-mcp", "env": {"PGPASSWORD": "hunter2"}}}}"#;
            std::fs::write(root.join(".mcp.json"), before).unwrap();
            let done = install(
                Agent::Claude,
                &top.join("home"),
                Some(root),
                Path::new("/usr/bin/cairn"),
                None,
                false,
            )
            .unwrap();
            let backup = done.backup.unwrap();
            assert!(
                backup.starts_with(git_dir.join("cairn-backups")),
                "{}: {}",
                root.display(),
                backup.display()
            );
            assert_eq!(std::fs::read_to_string(&backup).unwrap(), before);
            let untracked = git(
                root,
                &["status", "--porcelain", "--untracked-files=all"],
                None,
            );
            assert_eq!(untracked, "?? .mcp.json", "{}", root.display());
        }
    }
}

/// The text edits behind `hooks install` and `mcp install|uninstall`, as pure functions of a
/// file's text, for the property tests and fuzz targets only (the `internals` feature; the front
/// doors never enable it). Nothing here touches a file.
#[cfg(feature = "internals")]
#[doc(hidden)]
pub mod internals {
    use std::path::Path;

    use crate::archive::Agent;
    use crate::error::Result;

    pub use crate::hooks::json_text::{
        Edit, Kind, Node, Syntax, apply, insert_members, keeping_comments, parse, parse_as,
        push_element, remove, replace,
    };

    /// `settings::with_hook`: the settings text with Cairn's hook on `events` and off `drop`.
    pub fn with_hook(
        path: &Path,
        text: &str,
        agent: Agent,
        command: &str,
        events: &[&str],
        drop: &[&str],
    ) -> Result<Option<String>> {
        crate::hooks::settings::with_hook(path, text, agent, command, events, drop)
    }

    /// `settings::runs`: whether the settings run, on each of `events`, a command `is` accepts.
    pub fn runs(path: &Path, text: &str, events: &[&str], is: impl Fn(&str) -> bool) -> bool {
        crate::hooks::settings::runs(path, text, events, is)
    }

    /// `settings::hide_secrets`: a settings text as a diff shows it.
    pub fn hide_secrets(text: &str) -> String {
        crate::hooks::settings::hide_secrets(text)
    }

    /// The JSON config text with Cairn's server running `command` (`None`: without it).
    pub fn json_edit(
        agent: Agent,
        path: &Path,
        text: &str,
        command: Option<&str>,
    ) -> Result<Option<String>> {
        let launch = command.map(|c| super::Launch::new(c, None));
        super::json_edit(agent, path, text, launch.as_ref())
    }

    /// Codex's TOML config text with Cairn's server running `command` (`None`: without it).
    pub fn toml_edit(path: &Path, text: &str, command: Option<&str>) -> Result<Option<String>> {
        let launch = command.map(|c| super::Launch::new(c, None));
        super::toml_edit(path, text, launch.as_ref())
    }

    /// A TOML config text as a diff shows it.
    pub fn hide_toml_secrets(text: &str) -> String {
        super::hide_toml_secrets(text)
    }
}

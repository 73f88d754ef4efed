//! `cairn doctor`: is capture set up, and is anything about to lose history?

use std::path::Path;

use serde::Serialize;

use crate::archive::Agent;
use crate::archive::discover::{self, DirOrigin};
use crate::config::Config;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Ok,
    Warn,
    Fail,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct Check {
    pub name: String,
    pub status: Status,
    pub detail: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct DoctorReport {
    pub checks: Vec<Check>,
}

impl DoctorReport {
    pub fn worst(&self) -> Status {
        if self.checks.iter().any(|c| c.status == Status::Fail) {
            Status::Fail
        } else if self.checks.iter().any(|c| c.status == Status::Warn) {
            Status::Warn
        } else {
            Status::Ok
        }
    }
}

fn check(name: impl Into<String>, status: Status, detail: impl Into<String>) -> Check {
    Check {
        name: name.into(),
        status,
        detail: detail.into(),
    }
}

/// Checks that need no database: source dirs, agent settings, hooks.
pub(crate) fn environment_checks(config: &Config, home: Option<&Path>) -> Vec<Check> {
    let mut checks = Vec::new();
    for agent in Agent::ALL {
        if !config.agent_enabled(agent) {
            checks.push(check(
                format!("{agent} sources"),
                Status::Ok,
                "disabled in config.toml",
            ));
            continue;
        }
        let dirs = discover::source_dirs(config, agent);
        // Aider and Crush keep their files in each repository, not under the home dir.
        let in_repositories = match agent {
            Agent::Aider => Some((
                crate::archive::sources::aider::ENV_DIRS,
                ".aider.chat.history.md",
            )),
            Agent::Crush => Some((crate::archive::sources::crush::ENV_DIRS, ".crush/crush.db")),
            _ => None,
        };
        if dirs.is_empty()
            && let Some((var, file)) = in_repositories
        {
            checks.push(check(
                format!("{agent} sources"),
                Status::Ok,
                format!(
                    "none set: name your repositories (or folders of them) in ${var} or [sources.{agent}] dirs to read their {file}"
                ),
            ));
        }
        for dir in dirs {
            let origin = match dir.origin {
                DirOrigin::Config => "config.toml",
                DirOrigin::Env => "environment",
                DirOrigin::Default => "default",
            };
            let (status, detail) =
                if dir.path.is_dir() || (in_repositories.is_some() && dir.path.is_file()) {
                    (Status::Ok, format!("{} ({origin})", dir.path.display()))
                } else if dir.origin == DirOrigin::Default {
                    (
                        Status::Ok,
                        format!(
                            "{} not present: {agent} not used on this machine? ({origin})",
                            dir.path.display()
                        ),
                    )
                } else {
                    (
                        Status::Warn,
                        format!(
                            "{} does not exist ({origin}); fix the path or remove the setting",
                            dir.path.display()
                        ),
                    )
                };
            checks.push(check(format!("{agent} source dir"), status, detail));
        }
    }
    if let Some(home) = home {
        checks.push(claude_retention(home));
        for agent in crate::hooks::HOOKED {
            checks.push(hook_check(&crate::hooks::status(agent, home)));
        }
        for agent in crate::hooks::mcp_config::MCP_AGENTS {
            checks.push(mcp_check(&crate::hooks::mcp_config::status(
                agent, home, None,
            )));
        }
    }
    checks
}

/// Claude Code deletes transcripts older than `cleanupPeriodDays` (30 by default).
fn claude_retention(home: &Path) -> Check {
    let path = home.join(".claude/settings.json");
    let days = std::fs::read_to_string(&path)
        .ok()
        .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
        .and_then(|v| {
            v.get("cleanupPeriodDays")
                .and_then(serde_json::Value::as_i64)
        });
    let days_text = days.map_or_else(|| "30 (the default)".to_owned(), |d| d.to_string());
    check(
        "claude retention",
        Status::Warn,
        format!(
            "Claude Code deletes transcripts after {days_text} days; Cairn keeps redacted copies of what it captured, so run `cairn sync` (or keep the app or hook running) more often than that, or raise cleanupPeriodDays in {}",
            path.display()
        ),
    )
}

/// Whether the agent's user config registers Cairn's MCP server (`cairn mcp install`).
fn mcp_check(status: &crate::hooks::mcp_config::McpStatus) -> Check {
    let agent = status.agent;
    let path = status.path.display();
    match (&status.problem, &status.command) {
        (Some(problem), _) => check(format!("{agent} mcp"), Status::Warn, problem.clone()),
        (None, Some(command)) => check(
            format!("{agent} mcp"),
            Status::Ok,
            format!("the `cairn` server in {path} runs {command} mcp"),
        ),
        (None, None) => check(
            format!("{agent} mcp"),
            Status::Ok,
            format!(
                "not registered in {path}; the agent can query Cairn itself once you run `cairn mcp install --agent {agent}`"
            ),
        ),
    }
}

fn hook_check(status: &crate::hooks::HookStatus) -> Check {
    let agent = status.agent;
    if status.installed {
        let memory = if status.memory {
            "with memory at session start"
        } else {
            "memory at session start is off (`cairn hooks install` turns it on)"
        };
        check(
            format!("{agent} hook"),
            Status::Ok,
            format!("installed in {}; {memory}", status.path.display()),
        )
    } else {
        check(
            format!("{agent} hook"),
            Status::Warn,
            format!(
                "not installed in {}; sessions are captured only by `cairn sync` (run `cairn hooks install --agent {agent}`)",
                status.path.display()
            ),
        )
    }
}

/// What `PRAGMA quick_check` finds wrong in the database at `db` (on a connection of its own, so
/// a long check holds up no other reader), `None` when nothing. It reads every page: a
/// damaged one can sit unnoticed for months in a part of the archive that is seldom read.
pub(crate) fn damage(db: &Path) -> Option<String> {
    let store = match crate::store::Store::open_read_only(db) {
        Ok(s) => s,
        Err(e) => return Some(e.to_string()),
    };
    let problems: rusqlite::Result<Vec<String>> = store
        .conn()
        .prepare("PRAGMA quick_check(20)")
        .and_then(|mut s| s.query_map([], |r| r.get(0))?.collect());
    match problems {
        Ok(p) if p.len() == 1 && p[0] == "ok" => None,
        Ok(p) => Some(p.join("; ")),
        Err(e) => Some(e.to_string()),
    }
}

/// The archive check's failure when the database is damaged: what was found, and the fix.
pub(crate) fn damaged(db: &Path, problems: &str) -> Check {
    let dir = db.parent().unwrap_or(db);
    check(
        "archive",
        Status::Fail,
        format!(
            "{} is damaged (quick_check: {}). Stop Cairn (the app and running syncs) and copy the data dir aside first (`cp -a {} {}`), then either recover what SQLite still can read (`sqlite3 {} .recover | sqlite3 recovered.db`, then put recovered.db in place of cairn.db and delete cairn.db-wal and cairn.db-shm) or move cairn.db, cairn.db-wal and cairn.db-shm aside and run `cairn sync` to index the transcripts still on disk again (Recall reviews live only in the database)",
            db.display(),
            crate::text::excerpt(problems, 400),
            quoted(dir),
            quoted(Path::new(&format!("{}.bak", dir.display()))),
            quoted(db),
        ),
    )
}

/// Files and directories under the data dir that group or others can read: the archive holds
/// every transcript Cairn captured. A writable open tightens them; what is left is what could
/// not be (owned by someone else, a read-only data dir).
pub(crate) fn permissions(data_dir: &Path) -> Check {
    let loose = crate::private::loose_entries(data_dir);
    if loose.is_empty() {
        return check(
            "data dir permissions",
            Status::Ok,
            format!("{} and everything in it: owner only", data_dir.display()),
        );
    }
    let shown: Vec<String> = loose
        .iter()
        .take(5)
        .map(|(path, mode)| format!("{} (mode {mode:o})", path.display()))
        .collect();
    let more = match loose.len() {
        n if n > shown.len() => format!(" and {} more", n - shown.len()),
        _ => String::new(),
    };
    check(
        "data dir permissions",
        Status::Warn,
        format!(
            "readable by other users: {}{more}; the archive holds every captured transcript. Fix: `chmod -R go-rwx {}`",
            shown.join(", "),
            quoted(&crate::private::resolved(data_dir))
        ),
    )
}

/// `path` quoted for a POSIX shell, for the commands a fix suggests.
fn quoted(path: &Path) -> String {
    format!("'{}'", path.display().to_string().replace('\'', "'\\''"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Aider has no home folder: with no repositories named, doctor says how to name them; a
    /// history file named directly is a source that exists.
    #[test]
    fn aider_without_sources_says_how_to_name_them() {
        let config = Config::default();
        if std::env::var_os(crate::archive::sources::aider::ENV_DIRS).is_some() {
            return; // the machine names its own; nothing to check
        }
        let checks = environment_checks(&config, None);
        let aider = checks
            .iter()
            .find(|c| c.name == "aider sources")
            .expect("a line for aider");
        assert!(
            aider.detail.contains("AIDER_HISTORY_DIRS"),
            "{}",
            aider.detail
        );
    }
}

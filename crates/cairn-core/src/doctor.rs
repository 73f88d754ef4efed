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
        for dir in discover::source_dirs(config, agent) {
            let origin = match dir.origin {
                DirOrigin::Config => "config.toml",
                DirOrigin::Env => "environment",
                DirOrigin::Default => "default",
            };
            let (status, detail) = if dir.path.is_dir() {
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
        for agent in Agent::ALL {
            checks.push(hook_check(&crate::hooks::status(agent, home)));
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

fn hook_check(status: &crate::hooks::HookStatus) -> Check {
    let agent = status.agent;
    if status.installed {
        check(
            format!("{agent} hook"),
            Status::Ok,
            format!("installed in {}", status.path.display()),
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

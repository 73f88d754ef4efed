//! Installing Cairn's capture hook into an agent's settings, and reading what the hook is given.
//!
//! Claude Code reads hooks from `~/.claude/settings.json` (`$CLAUDE_CONFIG_DIR` moves it), Codex
//! from `~/.codex/hooks.json` (`$CODEX_HOME`). Both use the same shape: event → matcher groups →
//! `{type: "command", command}` handlers. Installing is idempotent (an existing Cairn hook is
//! left alone), keeps a backup of the file it changes, writes atomically, and can show the diff
//! without writing anything.

use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::{Map, Value, json};

use crate::archive::Agent;
use crate::error::{Error, Result};

/// The JSON an agent's hook writes on stdin (`transcript_path`, `cwd`, …), parsed.
///
/// Parsing also starts reading the git repository around the payload's `cwd` on a thread
/// ([`crate::git::snapshot::Prefetch`]): in a large worktree `git status` is most of a hook's
/// time, and it then runs while the archive is opened and the transcript captured.
#[derive(Debug)]
pub struct HookInput {
    pub(crate) payload: Value,
    pub(crate) prefetch: Option<crate::git::snapshot::Prefetch>,
}

impl HookInput {
    pub fn parse(input: &str) -> Result<HookInput> {
        let payload: Value = serde_json::from_str(input)
            .map_err(|e| Error::Invalid(format!("failed to parse agent hook input: {e}")))?;
        let names_transcript = payload
            .get("transcript_path")
            .and_then(Value::as_str)
            .is_some_and(|s| !s.is_empty());
        let prefetch = payload
            .get("cwd")
            .and_then(Value::as_str)
            .map(Path::new)
            .filter(|dir| names_transcript && dir.is_absolute() && dir.is_dir())
            .and_then(crate::git::snapshot::Prefetch::start);
        Ok(HookInput { payload, prefetch })
    }
}

/// What an install did (or, with `dry_run`, would do).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct HookInstall {
    pub agent: Agent,
    pub changed: bool,
    pub path: PathBuf,
    pub backup: Option<PathBuf>,
    pub dry_run: bool,
    /// Unified diff of the settings file.
    pub diff: String,
    /// Things the person still has to do.
    pub notes: Vec<String>,
}

/// Whether an agent's settings already run Cairn's hook.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct HookStatus {
    pub agent: Agent,
    pub path: PathBuf,
    pub installed: bool,
}

/// The events each agent's hook is installed on: after every turn, and at session end.
fn events(agent: Agent) -> &'static [&'static str] {
    match agent {
        Agent::Claude => &["Stop", "SessionEnd"],
        Agent::Codex => &["Stop"],
    }
}

/// The settings file that holds an agent's hooks.
/// The hook command line for the `cairn` binary at `cli`: `<cli> hook --agent <agent>`, the
/// path quoted for a POSIX shell when it needs it (the agents run hooks through `sh -c`).
pub fn hook_command(cli: &Path, agent: Agent) -> String {
    let path = cli.to_string_lossy();
    let plain = !path.is_empty()
        && path
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+".contains(c));
    let quoted = if plain {
        path.into_owned()
    } else {
        format!("'{}'", path.replace('\'', "'\\''"))
    };
    format!("{quoted} hook --agent {agent}")
}

pub fn settings_path(agent: Agent, home: &Path) -> PathBuf {
    let env = |name: &str| {
        std::env::var_os(name)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    match agent {
        Agent::Claude => env("CLAUDE_CONFIG_DIR")
            .unwrap_or_else(|| home.join(".claude"))
            .join("settings.json"),
        Agent::Codex => env("CODEX_HOME")
            .unwrap_or_else(|| home.join(".codex"))
            .join("hooks.json"),
    }
}

fn is_cairn_hook(handler: &Value) -> bool {
    handler
        .get("command")
        .and_then(Value::as_str)
        .is_some_and(|c| c.contains("cairn") && c.contains(" hook"))
}

fn read_settings(path: &Path) -> Result<(String, Value)> {
    match std::fs::read_to_string(path) {
        Ok(text) if text.trim().is_empty() => Ok((text, json!({}))),
        Ok(text) => {
            let value: Value = serde_json::from_str(&text).map_err(|e| {
                Error::Invalid(format!(
                    "{} is not valid JSON ({e}); fix it or move it aside, then install again",
                    path.display()
                ))
            })?;
            if !value.is_object() {
                return Err(Error::Invalid(format!(
                    "{} must hold a JSON object",
                    path.display()
                )));
            }
            Ok((text, value))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok((String::new(), json!({}))),
        Err(e) => Err(Error::Read {
            path: path.to_owned(),
            source: e,
        }),
    }
}

pub fn status(agent: Agent, home: &Path) -> HookStatus {
    let path = settings_path(agent, home);
    let installed = read_settings(&path).is_ok_and(|(_, v)| {
        events(agent).iter().all(|event| {
            v.pointer(&format!("/hooks/{event}"))
                .and_then(Value::as_array)
                .is_some_and(|groups| groups.iter().any(group_has_cairn))
        })
    });
    HookStatus {
        agent,
        path,
        installed,
    }
}

fn group_has_cairn(group: &Value) -> bool {
    group
        .get("hooks")
        .and_then(Value::as_array)
        .is_some_and(|hs| hs.iter().any(is_cairn_hook))
}

/// Add `command` as the capture hook for `agent`.
pub fn install(agent: Agent, home: &Path, command: &str, dry_run: bool) -> Result<HookInstall> {
    let path = settings_path(agent, home);
    let (before_text, mut settings) = read_settings(&path)?;
    let root = settings
        .as_object_mut()
        .ok_or_else(|| Error::Invalid(format!("{} must hold a JSON object", path.display())))?;
    let hooks = root
        .entry("hooks")
        .or_insert_with(|| Value::Object(Map::new()));
    let hooks = hooks.as_object_mut().ok_or_else(|| {
        Error::Invalid(format!("`hooks` in {} must be an object", path.display()))
    })?;
    let mut changed = false;
    for event in events(agent) {
        let groups = hooks
            .entry(event.to_string())
            .or_insert_with(|| Value::Array(Vec::new()));
        let groups = groups.as_array_mut().ok_or_else(|| {
            Error::Invalid(format!(
                "`hooks.{event}` in {} must be an array",
                path.display()
            ))
        })?;
        if groups.iter().any(group_has_cairn) {
            continue;
        }
        groups.push(json!({"hooks": [{"type": "command", "command": command}]}));
        changed = true;
    }
    let after_text = format!(
        "{}\n",
        serde_json::to_string_pretty(&settings).unwrap_or_default()
    );
    let diff = if changed {
        similar::TextDiff::from_lines(&before_text, &after_text)
            .unified_diff()
            .header(
                &format!("{} (before)", path.display()),
                &format!("{} (after)", path.display()),
            )
            .to_string()
    } else {
        String::new()
    };
    let mut notes = Vec::new();
    if agent == Agent::Codex {
        let config = path.with_file_name("config.toml");
        let enabled = std::fs::read_to_string(&config).is_ok_and(|t| {
            t.lines().any(|l| {
                let l = l.split('#').next().unwrap_or("").replace(' ', "");
                l == "codex_hooks=true"
            })
        });
        if !enabled {
            notes.push(format!(
                "Codex runs hooks only when `codex_hooks = true` is set under [features] in {}",
                config.display()
            ));
        }
    }
    let mut backup = None;
    if changed && !dry_run {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|e| Error::Write {
                path: dir.to_owned(),
                source: e,
            })?;
        }
        if !before_text.is_empty() {
            let stamp = jiff::Timestamp::now().strftime("%Y%m%dT%H%M%S").to_string();
            let b = path.with_file_name(format!(
                "{}.cairn-backup-{stamp}",
                path.file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default()
            ));
            std::fs::copy(&path, &b).map_err(|e| Error::Write {
                path: b.clone(),
                source: e,
            })?;
            backup = Some(b);
        }
        let tmp = path.with_extension("json.cairn-tmp");
        std::fs::write(&tmp, &after_text).map_err(|e| Error::Write {
            path: tmp.clone(),
            source: e,
        })?;
        std::fs::rename(&tmp, &path).map_err(|e| Error::Write {
            path: path.clone(),
            source: e,
        })?;
    }
    Ok(HookInstall {
        agent,
        changed,
        path,
        backup,
        dry_run,
        diff,
        notes,
    })
}

/// The skill that teaches an agent to catch up with Cairn (skim first, show to drill down).
pub const SKILL: &str = include_str!("skill.md");

/// What a skill install did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct SkillInstall {
    pub agent: Agent,
    pub path: PathBuf,
    pub changed: bool,
    pub dry_run: bool,
}

/// Where an agent looks for skills.
pub fn skill_path(agent: Agent, home: &Path) -> PathBuf {
    let env = |name: &str| {
        std::env::var_os(name)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    let base = match agent {
        Agent::Claude => env("CLAUDE_CONFIG_DIR").unwrap_or_else(|| home.join(".claude")),
        Agent::Codex => env("CODEX_HOME").unwrap_or_else(|| home.join(".codex")),
    };
    base.join("skills").join("cairn").join("SKILL.md")
}

/// Write (or refresh) Cairn's skill for `agent`. Idempotent.
pub fn install_skill(agent: Agent, home: &Path, dry_run: bool) -> Result<SkillInstall> {
    let path = skill_path(agent, home);
    let changed = std::fs::read_to_string(&path).map_or(true, |existing| existing != SKILL);
    if changed && !dry_run {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|e| Error::Write {
                path: dir.to_owned(),
                source: e,
            })?;
        }
        std::fs::write(&path, SKILL).map_err(|e| Error::Write {
            path: path.clone(),
            source: e,
        })?;
    }
    Ok(SkillInstall {
        agent,
        path,
        changed,
        dry_run,
    })
}

#[cfg(test)]
mod tests {

    #[test]
    fn hook_commands_quote_unusual_paths() {
        assert_eq!(
            hook_command(Path::new("/usr/local/bin/cairn"), Agent::Claude),
            "/usr/local/bin/cairn hook --agent claude"
        );
        assert_eq!(
            hook_command(Path::new("/home/a b/it's/cairn"), Agent::Codex),
            r"'/home/a b/it'\''s/cairn' hook --agent codex"
        );
    }

    use super::*;

    #[test]
    fn install_is_idempotent_keeps_other_hooks_and_backs_up() {
        let home = tempfile::tempdir().unwrap();
        let path = home.path().join(".claude/settings.json");
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, r#"{"model":"opus","hooks":{"Stop":[{"hooks":[{"type":"command","command":"notify-send done"}]}]}}"#).unwrap();

        let dry = install(
            Agent::Claude,
            home.path(),
            "/usr/bin/cairn hook --agent claude",
            true,
        )
        .unwrap();
        assert!(dry.changed && dry.backup.is_none());
        assert!(dry.diff.contains("+") && dry.diff.contains("cairn hook"));
        assert!(
            !std::fs::read_to_string(&path).unwrap().contains("cairn"),
            "dry run wrote"
        );

        let first = install(
            Agent::Claude,
            home.path(),
            "/usr/bin/cairn hook --agent claude",
            false,
        )
        .unwrap();
        assert!(first.changed);
        let backup = first.backup.unwrap();
        assert!(
            std::fs::read_to_string(backup)
                .unwrap()
                .contains("notify-send")
        );
        let after: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(after["model"], "opus");
        assert_eq!(after["hooks"]["Stop"].as_array().unwrap().len(), 2);
        assert!(status(Agent::Claude, home.path()).installed);

        let second = install(
            Agent::Claude,
            home.path(),
            "/usr/bin/cairn hook --agent claude",
            false,
        )
        .unwrap();
        assert!(!second.changed && second.diff.is_empty() && second.backup.is_none());
    }

    #[test]
    fn invalid_settings_are_an_error_naming_the_file() {
        let home = tempfile::tempdir().unwrap();
        let path = home.path().join(".codex/hooks.json");
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, "{not json").unwrap();
        let err = install(Agent::Codex, home.path(), "cairn hook", false)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("hooks.json") && err.contains("not valid JSON"),
            "{err}"
        );
    }

    #[test]
    fn skill_install_is_idempotent() {
        let home = tempfile::tempdir().unwrap();
        assert!(
            install_skill(Agent::Claude, home.path(), true)
                .unwrap()
                .changed
        );
        assert!(!skill_path(Agent::Claude, home.path()).exists());
        assert!(
            install_skill(Agent::Claude, home.path(), false)
                .unwrap()
                .changed
        );
        let text = std::fs::read_to_string(skill_path(Agent::Claude, home.path())).unwrap();
        assert!(text.starts_with("---\nname: cairn") && text.contains("cairn skim"));
        assert!(
            !install_skill(Agent::Claude, home.path(), false)
                .unwrap()
                .changed
        );
    }

    #[test]
    fn codex_install_notes_the_feature_flag() {
        let home = tempfile::tempdir().unwrap();
        let r = install(Agent::Codex, home.path(), "cairn hook --agent codex", false).unwrap();
        assert!(r.changed && r.backup.is_none());
        assert!(r.notes.iter().any(|n| n.contains("codex_hooks = true")));
    }
}

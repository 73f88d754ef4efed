//! Installing Cairn's capture hook into an agent's settings, and reading what the hook is given.
//!
//! Claude Code reads hooks from `~/.claude/settings.json` (`$CLAUDE_CONFIG_DIR` moves it), Codex
//! from `~/.codex/hooks.json` (`$CODEX_HOME`). Both use the same shape: event → matcher groups →
//! `{type: "command", command}` handlers. Installing is idempotent (an existing Cairn hook is
//! left alone), keeps a backup of the file it changes, and can show the diff without writing
//! anything. The settings file is the user's: it is edited as text so nothing else in it changes
//! ([`json_text`]), written through its symlink with its mode kept ([`crate::atomic`]), and shown
//! with its secrets hidden.
//!
//! The hook's own input is hostile too: the transcript path it names is read only when it is a
//! regular file inside that agent's source dirs ([`accept_transcript`]).

mod codex_feature;
mod input;
mod json_text;
pub mod mcp_config;
mod settings;
mod stdin;

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::archive::Agent;
use crate::error::{Error, Result};

pub(crate) use input::files_to_capture;
pub use input::{HookInput, accept_transcript};
pub use stdin::{HOOK_INPUT_WAIT, HookStdin, MAX_HOOK_INPUT, read_hook_input};

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
    /// What the change does to the capture hook.
    pub capture: HookChange,
    /// What the change does to the session-start hook (memory).
    pub memory: HookChange,
    /// Things the person still has to do.
    pub notes: Vec<String>,
    /// Why the agent will not run the hook as it stands (Codex's config unreadable, its
    /// `codex_hooks` feature off); none when it will. Not said of a dry run.
    pub not_running: Option<String>,
}

/// What an install does to one of Cairn's hooks in the settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "snake_case")]
pub enum HookChange {
    /// As it was: there and running this `cairn`, or absent and not wanted.
    Unchanged,
    Added,
    /// There, now pointed at this `cairn` (the binary moved).
    Updated,
    Removed,
}

impl HookChange {
    /// The change between `before` and `after` for a hook on `events`: `ours` recognises any
    /// Cairn hook command, `this` the one being installed.
    fn between(
        path: &Path,
        before: &str,
        after: Option<&str>,
        events: &[&str],
        ours: impl Fn(&str) -> bool + Copy,
        this: impl Fn(&str) -> bool + Copy,
    ) -> Self {
        let Some(after) = after else {
            return Self::Unchanged;
        };
        // On every event (installed), or on any (a removal takes a half-installed hook too).
        let on = |text: &str, every: bool| {
            let one = |e: &&str| settings::runs(path, text, std::slice::from_ref(e), ours);
            if every {
                events.iter().all(one)
            } else {
                events.iter().any(one)
            }
        };
        if on(before, false) && !on(after, false) {
            return Self::Removed;
        }
        let was = on(before, true);
        let is = on(after, true);
        match (was, is) {
            (false, true) => Self::Added,
            (true, true)
                if !settings::runs(path, before, events, this)
                    && settings::runs(path, after, events, this) =>
            {
                Self::Updated
            }
            _ => Self::Unchanged,
        }
    }
}

/// Whether an agent's settings already run Cairn's hook.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct HookStatus {
    pub agent: Agent,
    pub path: PathBuf,
    /// The capture hook runs on every event it needs.
    pub installed: bool,
    /// The session-start hook (memory) runs too.
    pub memory: bool,
    /// Installed, but capturing into another archive than the one asked about.
    pub other_archive: bool,
    /// Why the settings file could not be read (not JSON, not UTF-8, not a file), when it
    /// could not: an install would fail the same way.
    pub problem: Option<String>,
    /// Why the agent will not run the hook although it is installed (Codex with its hooks
    /// feature off), when it will not.
    #[serde(default)]
    pub not_running: Option<String>,
}

/// The agents Cairn installs its hook and skill for. The others have no hook spec Cairn has
/// verified: `cairn sync` and the desktop's watcher capture them.
pub const HOOKED: [Agent; 2] = [Agent::Claude, Agent::Codex];

/// An error for an agent outside [`HOOKED`].
fn require_hook(agent: Agent) -> Result<()> {
    if HOOKED.contains(&agent) {
        return Ok(());
    }
    Err(Error::Invalid(format!(
        "Cairn installs no hook or skill for {agent}: its sessions are captured by `cairn sync` and the desktop's watcher"
    )))
}

/// The events each agent's hook is installed on: after every turn, and at session end.
fn events(agent: Agent) -> &'static [&'static str] {
    match agent {
        Agent::Claude => &["Stop", "SessionEnd"],
        Agent::Codex => &["Stop"],
        // Outside HOOKED: no hook.
        _ => &[],
    }
}

/// The event on which an agent runs hooks as a session starts: the one memory uses (both
/// agents call it `SessionStart`).
pub const SESSION_START: &str = "SessionStart";

/// Whether a hook payload is the one an agent sends as a session starts
/// (`"hook_event_name": "SessionStart"`).
pub fn is_session_start(input: &str) -> bool {
    serde_json::from_str::<serde_json::Value>(input).is_ok_and(|v| {
        v.get("hook_event_name").and_then(serde_json::Value::as_str) == Some(SESSION_START)
    })
}

/// The hook command line for the `cairn` binary at `cli`: `<cli> hook --agent <agent>`, with
/// `--data-dir <dir>` before `hook` when the archive is not at its default place
/// ([`crate::Cairn::hook_command`] decides), each path quoted for a POSIX shell when it needs
/// it (the agents run hooks through `sh -c`).
pub fn hook_command(cli: &Path, agent: Agent, data_dir: Option<&Path>) -> String {
    let dir = data_dir
        .map(|d| format!(" --data-dir {}", shell_quoted(&d.to_string_lossy())))
        .unwrap_or_default();
    format!(
        "{}{dir} hook --agent {agent}",
        shell_quoted(&cli.to_string_lossy())
    )
}

/// `text` as one word for a POSIX shell: as it is when plain, else single-quoted.
fn shell_quoted(text: &str) -> String {
    let plain = !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+".contains(c));
    if plain {
        text.to_owned()
    } else {
        format!("'{}'", text.replace('\'', "'\\''"))
    }
}

/// The settings file that holds an agent's hooks.
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
        // Outside HOOKED: never read or written (status is asked of HOOKED, install refuses).
        other => home.join(format!(".{other}")).join("settings.json"),
    }
}

/// Whether `command` is Cairn's capture hook for `agent`: exactly what [`hook_command`] writes
/// (`<path>/cairn [--data-dir <dir>] hook --agent <agent>`, each path plain or single-quoted,
/// the data dir absolute), whatever the paths. Other commands that mention cairn and a hook
/// (`notify-send 'cairn hook done'`, `cairn-hook-helper`) are the user's own.
pub fn is_cairn_hook_command(command: &str, agent: Agent) -> bool {
    hook_archive(command, agent).is_some()
}

/// The archive Cairn's hook `command` captures into: `Some(None)` for the default place,
/// `Some(Some(dir))` for `--data-dir <dir>`; `None` when it is not Cairn's hook for `agent`.
fn hook_archive(command: &str, agent: Agent) -> Option<Option<PathBuf>> {
    let (path, rest) = shell_word(command)?;
    let (dir, rest) = match rest.strip_prefix(" --data-dir ").map(shell_word) {
        None => (None, rest),
        Some(Some((dir, after))) if Path::new(&dir).is_absolute() => (Some(dir.into()), after),
        Some(_) => return None,
    };
    (rest == format!(" hook --agent {agent}")
        && Path::new(&path).file_name().is_some_and(|n| n == "cairn"))
    .then_some(dir)
}

/// The first word of a command line as [`hook_command`] writes it (plain, or single-quoted with
/// `'\''` for a quote), and the rest of the line.
fn shell_word(command: &str) -> Option<(String, &str)> {
    let Some(mut rest) = command.strip_prefix('\'') else {
        let end = command.find(' ').unwrap_or(command.len());
        return Some((command[..end].to_owned(), &command[end..]));
    };
    let mut word = String::new();
    loop {
        let close = rest.find('\'')?;
        word.push_str(&rest[..close]);
        rest = &rest[close + 1..];
        match rest.strip_prefix("\\''") {
            Some(more) => {
                word.push('\'');
                rest = more;
            }
            None => return Some((word, rest)),
        }
    }
}

/// Whether `agent`'s settings under `home` run Cairn's hook, and into the archive in `archive`
/// (its real path when not at its default place, as `Cairn::data_dir_elsewhere` gives it).
pub fn status(agent: Agent, home: &Path, archive: Option<&Path>) -> HookStatus {
    let path = settings_path(agent, home);
    let read = settings::read_text(&path)
        .and_then(|text| settings::parse_settings(&path, &text).map(|_| text));
    let (text, problem) = match read {
        Ok(text) => (text, None),
        Err(e) => (String::new(), Some(e.to_string())),
    };
    let ours = |c: &str| is_cairn_hook_command(c, agent);
    let here = |c: &str| {
        hook_archive(c, agent).is_some_and(|dir| {
            // A path a person wrote by hand may name the same dir another way.
            let dir = dir.map(|d| std::fs::canonicalize(&d).unwrap_or(d));
            dir.as_deref() == archive
        })
    };
    let installed = settings::runs(&path, &text, events(agent), ours);
    HookStatus {
        agent,
        installed,
        memory: settings::runs(&path, &text, &[SESSION_START], ours),
        other_archive: installed && !settings::runs(&path, &text, events(agent), here),
        not_running: (installed && agent == Agent::Codex)
            .then(|| codex_feature::not_running(&path.with_file_name("config.toml")))
            .flatten(),
        path,
        problem,
    }
}

/// Add `command` as the capture hook for `agent`.
///
/// The settings file is edited as text ([`json_text`]): numbers, key order and layout stay as
/// they were. A symlinked file is written through to its target and keeps its mode
/// ([`crate::atomic::replace`]); a backup of the old content sits beside it. The diff (for
/// `--dry-run` and the desktop) never shows `env` values or other secrets
/// ([`settings::hide_secrets`]).
///
/// With memory (what `cairn hooks install` does unless told `--no-memory`) the same command
/// also runs on [`SESSION_START`], where it prints the brief of trusted Recall entries; without,
/// Cairn's session-start hook is taken off if it was there, capture left as it is.
pub fn install(
    agent: Agent,
    home: &Path,
    command: &str,
    memory: bool,
    dry_run: bool,
) -> Result<HookInstall> {
    require_hook(agent)?;
    let path = settings_path(agent, home);
    let mut done = unraced(&path, || {
        install_once(agent, &path, command, memory, dry_run)
    })?;
    if agent == Agent::Codex {
        let config = path.with_file_name("config.toml");
        if let Some(change) = unraced(&config, || codex_hooks_on(&config, dry_run))? {
            done.notes.push(change.note);
            // One preview of both files: the hook's settings, then the config.
            done.changed |= !change.diff.is_empty();
            done.diff.push_str(&change.diff);
        }
        if !dry_run {
            done.not_running = codex_feature::not_running(&config);
            // Said once, as why the hook will not run.
            let why = done.not_running.clone();
            done.notes.retain(|n| Some(n) != why.as_ref());
        }
    }
    Ok(done)
}

/// What an install did (or would do) to Codex's config beside its hooks: a note for the
/// person, and the diff when the config changes.
struct FeatureChange {
    note: String,
    diff: String,
}

/// Turn Codex's hooks feature on in its config at `config` when it is not set, or say why it
/// stays off; nothing when it is on. A config Cairn cannot edit is a note, not a failure: the
/// hook is installed either way. `None` when the file changed between the read and the write
/// ([`unraced`]).
fn codex_hooks_on(config: &Path, dry_run: bool) -> Result<Option<Option<FeatureChange>>> {
    use codex_feature::Feature;
    let say = |note: String| {
        Ok(Some(Some(FeatureChange {
            note,
            diff: String::new(),
        })))
    };
    let before = match settings::read_text(config) {
        Ok(text) => text,
        Err(e) => {
            return say(format!(
                "Codex runs hooks only with `codex_hooks = true` under [features]: {e}"
            ));
        }
    };
    let feature = codex_feature::state(config, &before);
    if feature != Feature::Unset {
        return match codex_feature::why_not(config, &feature) {
            Some(why) => say(why),
            None => Ok(Some(None)),
        };
    }
    let after = match codex_feature::turned_on(config, &before) {
        Ok(after) => after,
        Err(e) => return say(e.to_string()),
    };
    let hide = mcp_config::hide_toml_secrets;
    let diff = unified_diff(config, &hide(&before), &hide(&after));
    if dry_run {
        return Ok(Some(Some(FeatureChange {
            note: format!(
                "would turn on `codex_hooks` under [features] in {} (Codex runs hooks only then)",
                config.display()
            ),
            diff,
        })));
    }
    // A config its owner protected is theirs to change: the hook is in place all the same,
    // and the install says what to set (it fails, as the hook will not run until then).
    if let Err(e) = not_protected(config) {
        return say(format!(
            "{e} (Cairn would set `codex_hooks = true` under [features] there)"
        ));
    }
    let Some(backup) = write_edit(config, &before, &after)? else {
        return Ok(None);
    };
    Ok(Some(Some(FeatureChange {
        note: format!(
            "turned on `codex_hooks` under [features] in {} (Codex runs hooks only then){}",
            config.display(),
            backup.map_or_else(String::new, |b| format!("; backup at {}", b.display()))
        ),
        diff,
    })))
}

/// At most this many tries of an edit whose file changed between Cairn's read and its write.
const TRIES: usize = 5;

/// `edit` (which reads the file at `path`, and gives `None` when it changed before the write,
/// see [`unchanged_since`]) again until it finds the file still, [`TRIES`] times at most.
fn unraced<T>(path: &Path, mut edit: impl FnMut() -> Result<Option<T>>) -> Result<T> {
    for _ in 0..TRIES {
        if let Some(done) = edit()? {
            return Ok(done);
        }
    }
    Err(Error::Invalid(format!(
        "{} kept changing while Cairn edited it (an agent writing it?); run the command again, or close the agent first",
        path.display()
    )))
}

/// Whether the file at `path` still holds `before`. An agent rewrites its own config between
/// Cairn's read and its write (Claude Code writes `~/.claude.json` often): writing then would
/// undo the agent's change, so the edit is done again on what is there now.
fn unchanged_since(path: &Path, before: &str) -> Result<bool> {
    Ok(settings::read_text(path)? == before)
}

/// Take Cairn's hooks (capture and the session-start brief) out of `agent`'s settings: what
/// [`install`] added, with the same backup, diff and retry when the agent writes the file
/// meanwhile. Other hooks, and Cairn's hook for another agent, stay; settings without Cairn's
/// hooks (or no settings file) are left as they are.
///
/// What the install added goes with it: a `hooks` object left empty, and the file itself when
/// nothing else is in it (`{}`; not a symlink, whose target is the person's). For Codex, the
/// `codex_hooks` feature Cairn turned on is turned back when no hook is left to need it; else
/// a note says why it stays.
pub fn uninstall(agent: Agent, home: &Path, dry_run: bool) -> Result<HookInstall> {
    require_hook(agent)?;
    let path = settings_path(agent, home);
    let (mut done, left) = unraced(&path, || {
        let before = settings::read_text(&path)?;
        let mut all = events(agent).to_vec();
        all.push(SESSION_START);
        let after = settings::without_hooks(&path, &before, agent, &all)?;
        let after = settings::without_emptied_hooks(&path, &before, after)?;
        let after = (after != before).then(|| after.into_owned());
        if let Some(after) = &after {
            let left = all.iter().any(|event| {
                settings::runs(&path, after, &[event], |c| is_cairn_hook_command(c, agent))
            });
            if left {
                return Err(Error::Invalid(format!(
                    "could not take Cairn's hook out of {} without changing the rest of it; remove the `hook --agent {agent}` commands from its hooks by hand",
                    path.display()
                )));
            }
        }
        let gone = after.as_deref().is_some_and(empty_document) && !is_link(&path);
        let left = after
            .as_deref()
            .is_some_and(|a| settings::any_hook(&path, a));
        Ok(
            settle(agent, &path, before, after, |_| false, dry_run, gone)?.map(|mut done| {
                if gone {
                    let verb = if dry_run { "would be" } else { "is" };
                    done.notes.push(format!(
                        "{} held nothing else, so it {verb} removed",
                        done.path.display()
                    ));
                }
                (done, left)
            }),
        )
    })?;
    if agent == Agent::Codex && done.changed {
        let config = path.with_file_name("config.toml");
        if let Some(change) = unraced(&config, || codex_hooks_back(&config, &path, left, dry_run))?
        {
            done.notes.push(change.note);
            done.diff.push_str(&change.diff);
        }
    }
    Ok(done)
}

/// Whether `path` is a symlink: a file it leads to is the person's, never removed.
fn is_link(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink())
}

/// Whether a settings file's or config's text holds nothing: blank, or a JSON object without
/// members (and without comments).
pub(super) fn empty_document(text: &str) -> bool {
    let text = text.trim();
    text.is_empty()
        || serde_json::from_str::<serde_json::Value>(text)
            .is_ok_and(|v| v.as_object().is_some_and(serde_json::Map::is_empty))
}

/// After an uninstall took Cairn's hooks out of Codex's `hooks` (at `hooks`; `left`: other
/// hooks are still in it), take back the `codex_hooks = true` Cairn set in its config at
/// `config`, or say why it stays on. Nothing when the feature is not on. `None` when the file
/// changed between the read and the write ([`unraced`]).
fn codex_hooks_back(
    config: &Path,
    hooks: &Path,
    left: bool,
    dry_run: bool,
) -> Result<Option<Option<FeatureChange>>> {
    use codex_feature::Feature;
    let say = |note: String| {
        Ok(Some(Some(FeatureChange {
            note,
            diff: String::new(),
        })))
    };
    let Ok(before) = settings::read_text(config) else {
        return Ok(Some(None));
    };
    if codex_feature::state(config, &before) != Feature::On {
        return Ok(Some(None));
    }
    let on = format!(
        "`codex_hooks = true` under [features] in {}",
        config.display()
    );
    if !codex_feature::set_by_cairn(&before) {
        return say(format!(
            "{on} stays: Cairn did not set it (or set it before it marked what it set), and other hooks may need it; take it out by hand if none does"
        ));
    }
    if left {
        return say(format!(
            "{on}, which Cairn set, stays: other hooks in {} need it",
            hooks.display()
        ));
    }
    let after = match codex_feature::turned_off(config, &before) {
        Ok(after) => after,
        Err(e) => return say(e.to_string()),
    };
    let hide = mcp_config::hide_toml_secrets;
    let diff = unified_diff(config, &hide(&before), &hide(&after));
    let gone = after.trim().is_empty() && !is_link(config);
    let emptied = if gone {
        format!("; {} held nothing else, so it", config.display())
    } else {
        String::new()
    };
    if dry_run {
        let emptied = if gone {
            format!("{emptied} would be removed")
        } else {
            emptied
        };
        return Ok(Some(Some(FeatureChange {
            note: format!(
                "would take back {on}, which Cairn set (no hook is left to need it){emptied}"
            ),
            diff,
        })));
    }
    if let Err(e) = not_protected(config) {
        return say(format!("{e} (Cairn would take back {on}, which it set)"));
    }
    let written = if gone {
        remove_edit(config, &before)?
    } else {
        write_edit(config, &before, &after)?
    };
    let Some(backup) = written else {
        return Ok(None);
    };
    let emptied = if gone {
        format!("{emptied} is removed")
    } else {
        emptied
    };
    Ok(Some(Some(FeatureChange {
        note: format!(
            "took back {on}, which Cairn set (no hook is left to need it){emptied}{}",
            backup.map_or_else(String::new, |b| format!("; backup at {}", b.display()))
        ),
        diff,
    })))
}

fn install_once(
    agent: Agent,
    path: &Path,
    command: &str,
    memory: bool,
    dry_run: bool,
) -> Result<Option<HookInstall>> {
    let before = settings::read_text(path)?;
    let mut wanted = events(agent).to_vec();
    let mut drop = Vec::new();
    if memory {
        wanted.push(SESSION_START);
    } else {
        drop.push(SESSION_START);
    }
    let after = settings::with_hook(path, &before, agent, command, &wanted, &drop)?;
    if let Some(after) = &after {
        // The edit must leave valid JSON that runs the hook where wanted and nowhere else, or
        // nothing is written.
        let check = settings::runs(path, after, &wanted, |c| c == command)
            && (memory || !settings::runs(path, after, &drop, |c| is_cairn_hook_command(c, agent)));
        if !check {
            return Err(Error::Invalid(format!(
                "could not change the hooks in {} without changing the rest of it; add `{command}` to hooks.{} by hand",
                path.display(),
                wanted.join(" and hooks.")
            )));
        }
    }
    settle(agent, path, before, after, |c| c == command, dry_run, false)
}

/// Report the change from `before` to `after` (`None`: no change) to `agent`'s settings at
/// `path`, and unless `dry_run` write it, after a backup of `before` (`gone`: the file is
/// removed instead, `after` holding nothing). `this` recognises the hook command being
/// installed (none when uninstalling). `None` when the file changed since `before` was read:
/// the caller reads it again ([`unraced`]).
fn settle(
    agent: Agent,
    path: &Path,
    before: String,
    after: Option<String>,
    this: impl Fn(&str) -> bool + Copy,
    dry_run: bool,
    gone: bool,
) -> Result<Option<HookInstall>> {
    let path = path.to_owned();
    let diff = match &after {
        Some(after) => unified_diff(
            &path,
            &settings::hide_secrets(&before),
            &settings::hide_secrets(after),
        ),
        None => String::new(),
    };
    let ours = |c: &str| is_cairn_hook_command(c, agent);
    let capture = HookChange::between(&path, &before, after.as_deref(), events(agent), ours, this);
    let memory = HookChange::between(
        &path,
        &before,
        after.as_deref(),
        &[SESSION_START],
        ours,
        this,
    );
    let mut backup = None;
    if let Some(after) = after.as_deref().filter(|_| !dry_run) {
        let written = if gone {
            remove_edit(&path, &before)?
        } else {
            write_edit(&path, &before, after)?
        };
        match written {
            Some(kept) => backup = kept,
            None => return Ok(None),
        }
    }
    Ok(Some(HookInstall {
        agent,
        changed: after.is_some(),
        path,
        backup,
        dry_run,
        diff,
        capture,
        memory,
        notes: Vec::new(),
        not_running: None,
    }))
}

/// A unified diff of a file's text from `before` to `after` (both with their secrets hidden
/// already), headed by its path.
fn unified_diff(path: &Path, before: &str, after: &str) -> String {
    similar::TextDiff::from_lines(before, after)
        .unified_diff()
        .header(
            &format!("{} (before)", path.display()),
            &format!("{} (after)", path.display()),
        )
        .to_string()
}

/// Write `after` over the user's file at `path`, which held `before` when it was read: its
/// folder made, a backup of `before` kept (none when it was empty), the file replaced whole
/// with the owner's mode. The backup, or `None` when the file changed since it was read (the
/// caller reads it again, [`unraced`]; nothing is written).
fn write_edit(path: &Path, before: &str, after: &str) -> Result<Option<Option<PathBuf>>> {
    not_protected(path)?;
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| Error::Write {
            path: dir.to_owned(),
            source: e,
        })?;
    }
    let Some(backup) = backed_up_unchanged(path, before)? else {
        return Ok(None);
    };
    crate::atomic::replace(path, after.as_bytes(), crate::private::FILE_MODE).map_err(|e| {
        Error::Write {
            path: e.path,
            source: e.source,
        }
    })?;
    Ok(Some(backup))
}

/// Remove the user's file at `path`, which held `before` when it was read and is left with
/// nothing in it: a backup of `before` kept first. As [`write_edit`], `None` when the file
/// changed since it was read (nothing is removed).
fn remove_edit(path: &Path, before: &str) -> Result<Option<Option<PathBuf>>> {
    not_protected(path)?;
    let Some(backup) = backed_up_unchanged(path, before)? else {
        return Ok(None);
    };
    match std::fs::remove_file(path) {
        Ok(()) => Ok(Some(backup)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Some(backup)),
        Err(e) => Err(Error::Write {
            path: path.to_owned(),
            source: e,
        }),
    }
}

/// Before an edit of the user's file at `path`, which held `before` when it was read: a backup
/// of `before` kept (none when it was empty), then `Some(backup)` when the file still holds
/// `before`, else `None` with the backup taken back (the caller reads the file again).
fn backed_up_unchanged(path: &Path, before: &str) -> Result<Option<Option<PathBuf>>> {
    let backup = if before.is_empty() {
        None
    } else {
        Some(write_backup(path, before)?)
    };
    if !unchanged_since(path, before)? {
        if let Some(b) = &backup {
            let _ = std::fs::remove_file(b);
        }
        return Ok(None);
    }
    Ok(Some(backup))
}

/// Refuse to edit a file its owner made read-only (`chmod a-w`): a person saying "leave this
/// as it is". The edit replaces the file by a rename, which its folder allows whatever the
/// file's own mode, so without this check a protected file was replaced all the same. Refuse
/// too, saying why and what to do, a symlink whose target's folder does not exist (dotfiles
/// not checked out yet): the write through it fails naming only that folder.
fn not_protected(path: &Path) -> Result<()> {
    if std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink())
        && let Ok(target) = crate::atomic::resolve(path)
        && let Some(dir) = target.parent().filter(|d| !d.as_os_str().is_empty())
        && !dir.is_dir()
    {
        return Err(Error::Invalid(format!(
            "{} is a symlink to {}, whose folder does not exist, so Cairn cannot write it: create the folder (mkdir -p {}) and run the command again, or replace the link by a file of its own (rm {}, then run the command again)",
            path.display(),
            target.display(),
            shell_quoted(&dir.to_string_lossy()),
            shell_quoted(&path.to_string_lossy()),
        )));
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        if let Ok(meta) = std::fs::metadata(path)
            && meta.is_file()
            && meta.permissions().mode() & 0o200 == 0
        {
            return Err(Error::Invalid(format!(
                "{} is read-only (mode {:o}), so Cairn leaves it as it is; make it writable (chmod u+w), then run the command again, or make the change by hand",
                path.display(),
                meta.permissions().mode() & 0o777
            )));
        }
    }
    #[cfg(not(unix))]
    if std::fs::metadata(path).is_ok_and(|m| m.permissions().readonly()) {
        return Err(Error::Invalid(format!(
            "{} is read-only, so Cairn leaves it as it is; make it writable, then run the command again, or make the change by hand",
            path.display()
        )));
    }
    Ok(())
}

/// Keep `text` (the settings before an install) in a new file beside `path`,
/// `<name>.cairn-backup-<time>`, with the settings file's mode: it holds the same secrets. The
/// text is written and synced under a temporary name first, so a backup by its own name is
/// always whole (a kill mid-write left a cut one that looked like any other).
fn write_backup(path: &Path, text: &str) -> Result<PathBuf> {
    write_backup_in(path, text, None)
}

/// [`write_backup`], in the folder `into` instead of beside `path` when given.
fn write_backup_in(original: &Path, text: &str, into: Option<&Path>) -> Result<PathBuf> {
    use std::io::Write;
    let path = &into.map_or_else(
        || original.to_owned(),
        |dir| dir.join(original.file_name().unwrap_or_default()),
    );
    if let Some(dir) = into {
        std::fs::create_dir_all(dir).map_err(|e| Error::Write {
            path: dir.to_owned(),
            source: e,
        })?;
    }
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let stamp = jiff::Timestamp::now().strftime("%Y%m%dT%H%M%S").to_string();
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
        let mode = std::fs::metadata(original).map_or(crate::private::FILE_MODE, |m| {
            m.permissions().mode() & 0o777
        });
        options.mode(mode);
    }
    let tmp = path.with_file_name(format!(".{name}.cairn-backup-{}.tmp", std::process::id()));
    let write_err = |at: &Path| {
        let at = at.to_owned();
        move |e| Error::Write {
            path: at,
            source: e,
        }
    };
    let _ = std::fs::remove_file(&tmp);
    let written = options.open(&tmp).and_then(|mut file| {
        file.write_all(text.as_bytes())?;
        file.sync_all()
    });
    if let Err(e) = written {
        let _ = std::fs::remove_file(&tmp);
        return Err(write_err(&tmp)(e));
    }
    let mut n = 1;
    loop {
        let suffix = if n == 1 {
            String::new()
        } else {
            format!("-{n}")
        };
        let backup = path.with_file_name(format!("{name}.cairn-backup-{stamp}{suffix}"));
        // A link takes the name only if it is free; the temporary name then goes.
        match std::fs::hard_link(&tmp, &backup) {
            Ok(()) => {
                let _ = std::fs::remove_file(&tmp);
                return Ok(backup);
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && n < 100 => n += 1,
            // A file system without hard links: the name checked, then taken by a rename.
            Err(_) if !backup.exists() => {
                return match std::fs::rename(&tmp, &backup) {
                    Ok(()) => Ok(backup),
                    Err(e) => {
                        let _ = std::fs::remove_file(&tmp);
                        Err(write_err(&backup)(e))
                    }
                };
            }
            Err(e) => {
                let _ = std::fs::remove_file(&tmp);
                return Err(write_err(&backup)(e));
            }
        }
    }
}

/// The skill that teaches an agent to catch up with Cairn (skim first, show to drill down).
pub const SKILL: &str = include_str!("skill.md");

/// How each command in the skill starts (in a code span), before [`skill_text`] names an
/// archive in it.
const SKILL_COMMAND: &str = "`cairn ";

/// The skill as written for the archive in `data_dir` (`None`: the default place, [`SKILL`]).
/// An agent reads the skill without this process's flags or environment, so every command in
/// it names the archive (`cairn --data-dir <dir> skim`, the dir quoted for a POSIX shell as
/// the hook's is), and a paragraph says why; else the agent's `cairn skim` read the default
/// archive, empty or another one. A dir a code span cannot show (a backtick, a line break or
/// another control character, bytes that are not UTF-8) is an error naming it.
pub fn skill_text(data_dir: Option<&Path>) -> Result<String> {
    let Some(dir) = data_dir else {
        return Ok(SKILL.to_owned());
    };
    let shown = dir
        .to_str()
        .filter(|d| !d.chars().any(|c| c == '`' || c.is_control()));
    let Some(shown) = shown else {
        return Err(Error::Invalid(format!(
            "the archive's folder {} has a character the skill cannot show in a command (a backtick, a line break, bytes that are not UTF-8); move the archive to a plain path (or pass --data-dir with one), then install the skill again",
            crate::text::printable(&dir.to_string_lossy())
        )));
    };
    let prefix = format!("`cairn --data-dir {} ", shell_quoted(shown));
    let body = SKILL.replace(SKILL_COMMAND, &prefix);
    let note = format!(
        "This archive is not at Cairn's default place: every command below names it with\n`--data-dir {}` right after `cairn`. Keep that in each `cairn` command you run, or\nCairn reads another archive, which may be empty.\n\n",
        shell_quoted(shown)
    );
    // Before the steps, after the paragraph that says what Cairn is.
    let at = body.find("1. **").unwrap_or(body.len());
    Ok(format!("{}{note}{}", &body[..at], &body[at..]))
}

/// Whether `text` is a skill Cairn wrote, for the default archive or another one: an
/// uninstall keeps a copy of anything else (the person's edits).
fn is_cairns_skill(text: &str) -> bool {
    if text == SKILL {
        return true;
    }
    let named = format!("{SKILL_COMMAND}--data-dir ");
    let Some(at) = text.find(&named) else {
        return false;
    };
    shell_word(&text[at + named.len()..])
        .is_some_and(|(dir, _)| skill_text(Some(Path::new(&dir))).is_ok_and(|skill| skill == text))
}

/// What a skill install did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct SkillInstall {
    pub agent: Agent,
    pub path: PathBuf,
    pub changed: bool,
    pub dry_run: bool,
    /// Where the file it replaced was kept, when there was one.
    pub backup: Option<PathBuf>,
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
        // Outside HOOKED: never written (install_skill refuses first).
        other => home.join(format!(".{other}")),
    };
    base.join("skills").join("cairn").join("SKILL.md")
}

/// Write (or refresh) Cairn's skill for `agent`, its commands naming the archive in `data_dir`
/// when it is not at the default place ([`skill_text`]). Idempotent; written like the settings
/// file (a symlink's target, its mode kept; a new file is 0644: it holds no secret).
pub fn install_skill(
    agent: Agent,
    home: &Path,
    data_dir: Option<&Path>,
    dry_run: bool,
) -> Result<SkillInstall> {
    require_hook(agent)?;
    let skill = skill_text(data_dir)?;
    let path = skill_path(agent, home);
    let existing = settings::read_text(&path)?;
    let changed = existing != skill;
    let mut backup = None;
    if changed && !dry_run {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|e| Error::Write {
                path: dir.to_owned(),
                source: e,
            })?;
        }
        // A skill the person edited (or an older Cairn's) is kept beside the new one.
        if !existing.is_empty() {
            backup = Some(write_backup(&path, &existing)?);
        }
        crate::atomic::replace(&path, skill.as_bytes(), 0o644).map_err(|e| Error::Write {
            path: e.path,
            source: e.source,
        })?;
    }
    Ok(SkillInstall {
        agent,
        path,
        changed,
        dry_run,
        backup,
    })
}

/// Take Cairn's skill away from where `agent` looks for skills: the file goes (a link, not
/// what it points at), a copy kept beside it first when it is not the text Cairn writes (the
/// person edited it), and its folder too when that is left empty. No skill there: no change.
pub fn uninstall_skill(agent: Agent, home: &Path, dry_run: bool) -> Result<SkillInstall> {
    require_hook(agent)?;
    let path = skill_path(agent, home);
    let there = std::fs::symlink_metadata(&path).is_ok();
    let mut backup = None;
    if there && !dry_run {
        // Read first: a FIFO or a device in its place is refused, not removed.
        let existing = settings::read_text(&path)?;
        if !is_cairns_skill(&existing) && !existing.is_empty() {
            backup = Some(write_backup(&path, &existing)?);
        }
        std::fs::remove_file(&path).map_err(|e| Error::Write {
            path: path.clone(),
            source: e,
        })?;
        if let Some(dir) = path.parent() {
            // Fails, as it should, when anything else is in it.
            let _ = std::fs::remove_dir(dir);
        }
    }
    Ok(SkillInstall {
        agent,
        path,
        changed: there,
        dry_run,
        backup,
    })
}

#[cfg(test)]
mod tests {
    use serde_json::Value;

    /// An edit that finds its file changed before the write (an agent rewrote it) is done
    /// again on what is there now, and gives up after a few tries naming the file; an edit
    /// written over an agent's change undid it (a hostile run saw 32 of 152 installs do so).
    #[test]
    fn an_edit_raced_by_another_writer_is_done_again_or_refused() {
        let path = Path::new("/h/.claude.json");
        let mut tries = 0;
        let done = unraced(path, || {
            tries += 1;
            Ok((tries == 3).then_some("written"))
        })
        .unwrap();
        assert_eq!((done, tries), ("written", 3));
        let err = unraced(path, || Ok(None::<()>)).unwrap_err();
        assert!(
            err.to_string().contains("/h/.claude.json kept changing"),
            "{err}"
        );

        let home = tempfile::tempdir().unwrap();
        let file = home.path().join("settings.json");
        std::fs::write(&file, "{}").unwrap();
        assert!(unchanged_since(&file, "{}").unwrap());
        std::fs::write(&file, "{\"numStartups\": 2}").unwrap();
        assert!(!unchanged_since(&file, "{}").unwrap());
    }

    /// A FIFO or a device where a settings file, an MCP config or the skill should be is
    /// refused at once with its name: reading one hung `doctor` waiting for a writer, and
    /// `/dev/zero` filled the memory.
    #[test]
    fn a_settings_path_that_is_no_regular_file_is_refused_not_read() {
        let home = tempfile::tempdir().unwrap();
        let settings = settings_path(Agent::Claude, home.path());
        std::fs::create_dir_all(settings.parent().unwrap()).unwrap();
        let made = std::process::Command::new("mkfifo")
            .arg(&settings)
            .status()
            .unwrap();
        assert!(made.success());
        let s = status(Agent::Claude, home.path(), None);
        assert!(!s.installed);
        // The status says why, not "run hooks install", which would fail the same way.
        assert!(
            s.problem
                .as_deref()
                .is_some_and(|p| p.contains("not a regular file")),
            "{s:?}"
        );
        let codex = settings_path(Agent::Codex, home.path());
        std::fs::create_dir_all(codex.parent().unwrap()).unwrap();
        std::fs::write(&codex, "{\"hooks\": {},}").unwrap();
        let s = status(Agent::Codex, home.path(), None);
        assert!(
            s.problem
                .as_deref()
                .is_some_and(|p| p.contains("is not valid JSON")),
            "{s:?}"
        );
        let err = install(
            Agent::Claude,
            home.path(),
            "/usr/bin/cairn hook --agent claude",
            true,
            false,
        )
        .unwrap_err();
        assert!(err.to_string().contains("not a regular file"), "{err}");
        let claude_json = home.path().join(".claude.json");
        std::os::unix::fs::symlink("/dev/zero", &claude_json).unwrap();
        let mcp = mcp_config::status(Agent::Claude, home.path(), None, None);
        assert!(
            mcp.problem
                .as_deref()
                .is_some_and(|p| p.contains("not a regular file")),
            "{mcp:?}"
        );
        let skill = skill_path(Agent::Claude, home.path());
        std::fs::create_dir_all(skill.parent().unwrap()).unwrap();
        std::os::unix::fs::symlink("/dev/zero", &skill).unwrap();
        assert!(install_skill(Agent::Claude, home.path(), None, false).is_err());
    }

    /// A skill the person edited is kept in a backup, whole, before Cairn's replaces it; no
    /// temporary file stays behind.
    #[test]
    fn an_edited_skill_is_backed_up_before_it_is_replaced() {
        let home = tempfile::tempdir().unwrap();
        let skill = skill_path(Agent::Claude, home.path());
        std::fs::create_dir_all(skill.parent().unwrap()).unwrap();
        std::fs::write(&skill, "my own notes\n").unwrap();
        let done = install_skill(Agent::Claude, home.path(), None, false).unwrap();
        let backup = done.backup.expect("a backup");
        assert_eq!(std::fs::read_to_string(&backup).unwrap(), "my own notes\n");
        assert_eq!(std::fs::read_to_string(&skill).unwrap(), SKILL);
        let names: Vec<String> = std::fs::read_dir(skill.parent().unwrap())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names.len(), 2, "{names:?}");
        let again = install_skill(Agent::Claude, home.path(), None, false).unwrap();
        assert!(!again.changed && again.backup.is_none());
    }

    /// An uninstall takes the skill Cairn wrote and its folder; an edited one is kept in a copy
    /// first (and the folder, holding it, stays); none there is no change.
    #[test]
    fn a_skill_uninstall_removes_what_cairn_wrote_and_keeps_edits() {
        let home = tempfile::tempdir().unwrap();
        let skill = skill_path(Agent::Codex, home.path());
        assert!(
            !uninstall_skill(Agent::Codex, home.path(), false)
                .unwrap()
                .changed
        );
        install_skill(Agent::Codex, home.path(), None, false).unwrap();
        let dry = uninstall_skill(Agent::Codex, home.path(), true).unwrap();
        assert!(dry.changed && skill.exists());
        let done = uninstall_skill(Agent::Codex, home.path(), false).unwrap();
        assert!(done.changed && done.backup.is_none());
        assert!(!skill.exists() && !skill.parent().unwrap().exists());
        assert!(skill.parent().unwrap().parent().unwrap().exists());

        install_skill(Agent::Codex, home.path(), None, false).unwrap();
        std::fs::write(&skill, "my own notes\n").unwrap();
        let done = uninstall_skill(Agent::Codex, home.path(), false).unwrap();
        let backup = done.backup.expect("a copy of the edited skill");
        assert_eq!(std::fs::read_to_string(&backup).unwrap(), "my own notes\n");
        assert!(!skill.exists() && backup.starts_with(skill.parent().unwrap()));
        assert!(uninstall_skill(Agent::Gemini, home.path(), false).is_err());
    }

    /// Agents without a verified hook spec get an error that says how they are captured, and
    /// nothing is written under the home dir.
    #[test]
    fn agents_without_a_hook_are_refused_and_nothing_is_written() {
        let home = tempfile::tempdir().unwrap();
        for agent in Agent::ALL.into_iter().filter(|a| !HOOKED.contains(a)) {
            let err = install(agent, home.path(), "cairn hook", true, false).unwrap_err();
            assert!(err.to_string().contains("cairn sync"), "{err}");
            assert!(install_skill(agent, home.path(), None, false).is_err());
        }
        assert_eq!(std::fs::read_dir(home.path()).unwrap().count(), 0);
    }

    #[test]
    fn hook_commands_quote_unusual_paths() {
        assert_eq!(
            hook_command(Path::new("/usr/local/bin/cairn"), Agent::Claude, None),
            "/usr/local/bin/cairn hook --agent claude"
        );
        assert_eq!(
            hook_command(Path::new("/home/a b/it's/cairn"), Agent::Codex, None),
            r"'/home/a b/it'\''s/cairn' hook --agent codex"
        );
        let custom = hook_command(
            Path::new("/usr/bin/cairn"),
            Agent::Claude,
            Some(Path::new("/data/my archive")),
        );
        assert_eq!(
            custom,
            "/usr/bin/cairn --data-dir '/data/my archive' hook --agent claude"
        );
        assert!(is_cairn_hook_command(&custom, Agent::Claude));
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
            true,
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
        assert!(status(Agent::Claude, home.path(), None).installed);

        let second = install(
            Agent::Claude,
            home.path(),
            "/usr/bin/cairn hook --agent claude",
            true,
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
        let err = install(Agent::Codex, home.path(), "cairn hook", true, false)
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
            install_skill(Agent::Claude, home.path(), None, true)
                .unwrap()
                .changed
        );
        assert!(!skill_path(Agent::Claude, home.path()).exists());
        assert!(
            install_skill(Agent::Claude, home.path(), None, false)
                .unwrap()
                .changed
        );
        let text = std::fs::read_to_string(skill_path(Agent::Claude, home.path())).unwrap();
        assert!(text.starts_with("---\nname: cairn") && text.contains("cairn skim"));
        assert!(
            !install_skill(Agent::Claude, home.path(), None, false)
                .unwrap()
                .changed
        );
    }

    #[test]
    fn memory_is_added_on_session_start_and_taken_off_to_the_byte() {
        let home = tempfile::tempdir().unwrap();
        let path = settings_path(Agent::Claude, home.path());
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let cmd = "/usr/bin/cairn hook --agent claude";
        let user = r#"{"hooks": {"SessionStart": [{"matcher": "startup", "hooks": [{"type": "command", "command": "echo hi"}]}]}, "n": 18446744073709551617}"#;
        std::fs::write(&path, user).unwrap();
        install(Agent::Claude, home.path(), cmd, false, false).unwrap();
        let capture_only = std::fs::read_to_string(&path).unwrap();
        let s = status(Agent::Claude, home.path(), None);
        assert!(s.installed && !s.memory);

        let r = install(Agent::Claude, home.path(), cmd, true, false).unwrap();
        assert!(r.changed && r.diff.contains("SessionStart"), "{}", r.diff);
        let s = status(Agent::Claude, home.path(), None);
        assert!(s.installed && s.memory);
        let v: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(v["hooks"]["SessionStart"].as_array().unwrap().len(), 2);
        assert_eq!(
            v["hooks"]["SessionStart"][0]["hooks"][0]["command"],
            "echo hi"
        );
        assert!(
            !install(Agent::Claude, home.path(), cmd, true, false)
                .unwrap()
                .changed
        );

        let r = install(Agent::Claude, home.path(), cmd, false, false).unwrap();
        assert!(r.changed);
        assert_eq!(std::fs::read_to_string(&path).unwrap(), capture_only);
        let s = status(Agent::Claude, home.path(), None);
        assert!(s.installed && !s.memory);

        // A file where SessionStart was Cairn's alone loses the event, and nothing else.
        let home = tempfile::tempdir().unwrap();
        let codex = settings_path(Agent::Codex, home.path());
        std::fs::create_dir_all(codex.parent().unwrap()).unwrap();
        std::fs::write(&codex, "{\n  \"hooks\": {\n    \"Stop\": []\n  }\n}\n").unwrap();
        install(
            Agent::Codex,
            home.path(),
            "cairn hook --agent codex",
            false,
            false,
        )
        .unwrap();
        let before = std::fs::read_to_string(&codex).unwrap();
        install(
            Agent::Codex,
            home.path(),
            "cairn hook --agent codex",
            true,
            false,
        )
        .unwrap();
        assert!(status(Agent::Codex, home.path(), None).memory);
        install(
            Agent::Codex,
            home.path(),
            "cairn hook --agent codex",
            false,
            false,
        )
        .unwrap();
        assert_eq!(std::fs::read_to_string(&codex).unwrap(), before);
    }

    /// Codex runs hooks only with its feature on: an install turns it on (a dry run says it
    /// would), keeps the rest of the config and a backup, and leaves a person's `false` alone;
    /// the status says when an installed hook does not run.
    #[test]
    fn codex_install_turns_the_hooks_feature_on_unless_a_person_turned_it_off() {
        let home = tempfile::tempdir().unwrap();
        let config = home.path().join(".codex/config.toml");
        let install_codex = |dry_run| {
            install(
                Agent::Codex,
                home.path(),
                "cairn hook --agent codex",
                true,
                dry_run,
            )
            .unwrap()
        };
        let dry = install_codex(true);
        assert!(
            dry.notes
                .iter()
                .any(|n| n.starts_with("would turn on `codex_hooks`")),
            "{:?}",
            dry.notes
        );
        assert!(!config.exists());

        let r = install_codex(false);
        assert!(r.changed && r.backup.is_none());
        assert!(
            r.notes
                .iter()
                .any(|n| n.starts_with("turned on `codex_hooks`")),
            "{:?}",
            r.notes
        );
        assert_eq!(
            codex_feature::state(&config, &std::fs::read_to_string(&config).unwrap()),
            codex_feature::Feature::On
        );
        assert_eq!(status(Agent::Codex, home.path(), None).not_running, None);
        let again = install_codex(false);
        assert!(
            again.notes.is_empty() && !again.changed,
            "on already: nothing to do"
        );

        // A person's `false` stays; the install and the status say the hook will not run.
        let mine = "model = \"o3\" # mine\n[features]\ncodex_hooks = false\n";
        std::fs::write(&config, mine).unwrap();
        let r = install_codex(false);
        assert_eq!(std::fs::read_to_string(&config).unwrap(), mine);
        assert!(
            r.not_running
                .as_deref()
                .is_some_and(|w| w.contains("switched off")),
            "{r:?}"
        );
        let s = status(Agent::Codex, home.path(), None);
        assert!(s.installed && s.not_running.is_some_and(|w| w.contains("switched off")));

        // Unset in a config of the person's own: turned on, the rest kept, a backup made.
        let theirs = "model = \"o3\" # mine\n\n[mcp_servers.db]\ncommand = \"pg\"\n";
        std::fs::write(&config, theirs).unwrap();
        assert!(
            install_codex(true).changed,
            "the hook is in, the config is not"
        );
        let r = install_codex(false);
        assert!(r.changed);
        let after = std::fs::read_to_string(&config).unwrap();
        assert!(after.starts_with(theirs), "{after}");
        assert!(
            after.contains("[features]\ncodex_hooks = true # set by `cairn hooks install`"),
            "{after}"
        );
        let backup = r
            .notes
            .iter()
            .find(|n| n.contains("backup at"))
            .expect("a backup");
        let path = backup.rsplit("backup at ").next().unwrap();
        assert_eq!(std::fs::read_to_string(path).unwrap(), theirs);
        assert!(
            r.diff.contains("+codex_hooks = true"),
            "the preview shows the config: {}",
            r.diff
        );

        // A config Cairn cannot edit leaves the hook installed and says why it will not run.
        std::fs::remove_file(home.path().join(".codex/hooks.json")).unwrap();
        let odd = "features = \"all\"\n";
        std::fs::write(&config, odd).unwrap();
        let r = install_codex(false);
        assert!(status(Agent::Codex, home.path(), None).installed);
        assert_eq!(std::fs::read_to_string(&config).unwrap(), odd);
        assert!(
            r.not_running
                .as_deref()
                .is_some_and(|w| w.contains("is not a table")),
            "{r:?}"
        );
    }
}

/// Settings files are the user's: what `hooks install` must never do to them (issue 14).
#[cfg(test)]
mod settings_tests {
    use super::settings::hide_secrets;
    use super::*;
    use serde_json::Value;

    const CMD: &str = "/usr/bin/cairn hook --agent claude";

    /// A hook on only some of its events (a hand edit, an older Cairn) is taken off whole, and
    /// the change says it was removed; the user's own hook on the same event stays.
    #[test]
    fn an_uninstall_takes_a_half_installed_hook_and_says_so() {
        let home = tempfile::tempdir().unwrap();
        let text = format!(
            r#"{{"hooks": {{"Stop": [{{"hooks": [{{"type": "command", "command": "{CMD}"}}, {{"type": "command", "command": "say done"}}]}}]}}}}"#
        );
        let path = claude_settings(home.path(), &text);
        let done = uninstall(Agent::Claude, home.path(), false).unwrap();
        assert!(done.changed);
        assert_eq!(
            (done.capture, done.memory),
            (HookChange::Removed, HookChange::Unchanged)
        );
        let after = std::fs::read_to_string(&path).unwrap();
        assert!(
            !after.contains(CMD) && after.contains("say done"),
            "{after}"
        );
        let again = uninstall(Agent::Claude, home.path(), false).unwrap();
        assert!(!again.changed && again.backup.is_none());
    }

    fn claude_settings(home: &Path, text: &str) -> PathBuf {
        let path = home.join(".claude/settings.json");
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
        path
    }

    #[test]
    fn install_changes_nothing_but_what_it_adds() {
        let home = tempfile::tempdir().unwrap();
        let before = "{\n  \"zeta\": 18446744073709551617,\n  \"alpha\": [1.50, -0, 1e400],\n  \"hooks\": {\n    \"PreToolUse\": []\n  },\n  \"mid\": {\"b\": 2, \"a\": 1}\n}\n";
        let path = claude_settings(home.path(), before);
        let r = install(Agent::Claude, home.path(), CMD, false, false).unwrap();
        assert!(r.changed);
        let handler = |indent: &str| {
            let lines = [
                "[",
                "  {",
                "    \"hooks\": [",
                "      {",
                "        \"type\": \"command\",",
                "        \"command\": \"/usr/bin/cairn hook --agent claude\"",
                "      }",
                "    ]",
                "  }",
                "]",
            ];
            lines.join(&format!("\n{indent}"))
        };
        let expected = format!(
            "{{\n  \"zeta\": 18446744073709551617,\n  \"alpha\": [1.50, -0, 1e400],\n  \"hooks\": {{\n    \"PreToolUse\": [],\n    \"Stop\": {},\n    \"SessionEnd\": {}\n  }},\n  \"mid\": {{\"b\": 2, \"a\": 1}}\n}}\n",
            handler("    "),
            handler("    ")
        );
        assert_eq!(std::fs::read_to_string(&path).unwrap(), expected);
        assert!(status(Agent::Claude, home.path(), None).installed);
        assert!(
            !install(Agent::Claude, home.path(), CMD, false, false)
                .unwrap()
                .changed
        );

        // A file without `hooks`, on one line: one member added at its end, in its style.
        let path = claude_settings(home.path(), r#"{"n":18446744073709551617,"b":true}"#);
        install(Agent::Claude, home.path(), CMD, false, false).unwrap();
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            format!(
                r#"{{"n":18446744073709551617,"b":true,"hooks":{{"Stop":[{{"hooks":[{{"type":"command","command":"{CMD}"}}]}}],"SessionEnd":[{{"hooks":[{{"type":"command","command":"{CMD}"}}]}}]}}}}"#
            )
        );
    }

    #[cfg(unix)]
    #[test]
    fn install_writes_through_a_symlink_and_keeps_the_mode() {
        use std::os::unix::fs::PermissionsExt;
        let root = tempfile::tempdir().unwrap();
        let home = root.path().join("home");
        let dotfiles = root.path().join("dotfiles");
        std::fs::create_dir_all(home.join(".claude")).unwrap();
        std::fs::create_dir_all(&dotfiles).unwrap();
        let real = dotfiles.join("claude.json");
        std::fs::write(&real, "{\"model\": \"opus\"}\n").unwrap();
        std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o600)).unwrap();
        let link = home.join(".claude/settings.json");
        std::os::unix::fs::symlink("../../dotfiles/claude.json", &link).unwrap();

        let r = install(Agent::Claude, &home, CMD, true, false).unwrap();
        assert!(
            std::fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink(),
            "the link was replaced by a file"
        );
        assert!(std::fs::read_to_string(&real).unwrap().contains(CMD));
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&real), 0o600);
        let backup = r.backup.unwrap();
        assert_eq!(mode(&backup), 0o600, "the backup holds the same secrets");
        assert_eq!(
            std::fs::read_to_string(&backup).unwrap(),
            "{\"model\": \"opus\"}\n"
        );
        for dir in [&dotfiles, &home.join(".claude")] {
            let temps: Vec<_> = std::fs::read_dir(dir)
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .filter(|n| n.ends_with(".tmp"))
                .collect();
            assert!(temps.is_empty(), "{temps:?}");
        }
        assert!(status(Agent::Claude, &home, None).installed);
    }

    #[test]
    fn the_diff_never_shows_env_values_or_other_secrets() {
        let home = tempfile::tempdir().unwrap();
        let secrets = [
            "Summer2024!",
            "sk-ant-api03-Xq3v9Lr2mTz8Kp4Wn6Yb1Hc5Jd7Fg0Se2Ua4Ro6Ti8Ow",
            "5432",
            "hunter2",
            "ghp_R7mK2pX9vL4qT8wN3sB6yH1cJ5fD0gA2eZ4u",
        ];
        let before = format!(
            "{{\n  \"env\": {{\n    \"DB_PASS\": \"{}\",\n    \"ANTHROPIC_API_KEY\": \"{}\",\n    \"PGPORT\": {}\n  }},\n  \"hooks\": {{}},\n  \"mcp\": {{\"db\": {{\"env\": {{\"X\": \"{}\"}}}}}},\n  \"statusLine\": {{\"command\": \"curl -H 'Authorization: token {}' x\"}}\n}}\n",
            secrets[0], secrets[1], secrets[2], secrets[3], secrets[4]
        );
        let path = claude_settings(home.path(), &before);
        for dry_run in [true, false] {
            let r = install(Agent::Claude, home.path(), CMD, true, dry_run).unwrap();
            assert!(r.diff.contains(CMD), "{}", r.diff);
            assert!(r.diff.contains("[REDACTED:env]"), "{}", r.diff);
            for s in secrets {
                assert!(!r.diff.contains(s), "{s} shown in\n{}", r.diff);
            }
            // The whole file hidden, not only the lines near the change.
            let hidden = hide_secrets(&before);
            for s in secrets {
                assert!(!hidden.contains(s), "{s} in\n{hidden}");
            }
            assert_eq!(hidden.lines().count(), before.lines().count());
        }
        // Only what is shown is hidden: the file keeps its values.
        let after = std::fs::read_to_string(&path).unwrap();
        for s in secrets {
            assert!(after.contains(s));
        }
    }

    #[test]
    fn only_cairns_own_command_is_its_hook() {
        for (command, agent) in [
            ("/usr/bin/cairn hook --agent claude", Agent::Claude),
            ("cairn hook --agent codex", Agent::Codex),
            (
                r"'/home/a b/it'\''s/cairn' hook --agent claude",
                Agent::Claude,
            ),
            (
                "/usr/bin/cairn --data-dir /srv/cairn hook --agent claude",
                Agent::Claude,
            ),
        ] {
            assert!(is_cairn_hook_command(command, agent), "{command}");
        }
        for command in [
            "notify-send 'cairn hook done'",
            "/usr/bin/cairn-hook-helper",
            "echo cairn; my-hook --agent claude",
            "/opt/mycairn hook --agent claude",
            "/usr/bin/cairn hook --agent codex",
            "/usr/bin/cairn hook --agent claude; curl evil.invalid",
            "/usr/bin/cairn hook --agent claude --data-dir /tmp/x",
            "/usr/bin/cairn --data-dir relative/dir hook --agent claude",
            "/usr/bin/cairn --data-dir /x hook --agent claude; curl evil.invalid",
            "/usr/bin/cairn --data-dir hook --agent claude",
            "/usr/bin/cairn  hook --agent claude",
            "'/usr/bin/cairn hook --agent claude",
            "",
        ] {
            assert!(!is_cairn_hook_command(command, Agent::Claude), "{command}");
        }

        // Someone else's hook that mentions cairn is not Cairn's: the install adds its own.
        let home = tempfile::tempdir().unwrap();
        let path = claude_settings(
            home.path(),
            r#"{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"notify-send 'cairn hook done'"}]}],"SessionEnd":[{"hooks":[{"type":"command","command":"/usr/bin/cairn-hook-helper"}]}]}}"#,
        );
        assert!(!status(Agent::Claude, home.path(), None).installed);
        assert!(
            install(Agent::Claude, home.path(), CMD, true, false)
                .unwrap()
                .changed
        );
        let after: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(after["hooks"]["Stop"].as_array().unwrap().len(), 2);
        assert_eq!(after["hooks"]["SessionEnd"].as_array().unwrap().len(), 2);
        assert!(status(Agent::Claude, home.path(), None).installed);
    }

    #[test]
    fn a_moved_cairn_is_repointed_not_doubled() {
        let home = tempfile::tempdir().unwrap();
        let old = "/old/bin/cairn hook --agent claude";
        let path = claude_settings(
            home.path(),
            &format!(
                "{{\"hooks\": {{\"Stop\": [{{\"matcher\": \"\", \"hooks\": [{{\"type\": \"command\", \"command\": \"{old}\", \"timeout\": 18446744073709551617}}]}}]}}}}"
            ),
        );
        let r = install(Agent::Claude, home.path(), CMD, true, false).unwrap();
        assert!(r.diff.contains(&format!("-{{\"hooks\": {{\"Stop\": [{{\"matcher\": \"\", \"hooks\": [{{\"type\": \"command\", \"command\": \"{old}\"")), "{}", r.diff);
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(
            !text.contains(old) && text.contains("18446744073709551617"),
            "{text}"
        );
        let after: Value = serde_json::from_str(&text).unwrap();
        for event in ["Stop", "SessionEnd"] {
            let commands: Vec<&str> = after["hooks"][event]
                .as_array()
                .unwrap()
                .iter()
                .flat_map(|g| g["hooks"].as_array().unwrap())
                .map(|h| h["command"].as_str().unwrap())
                .collect();
            assert_eq!(commands, [CMD], "{event}");
        }
    }

    #[cfg(unix)]
    #[test]
    fn new_files_are_private_and_a_linked_skill_keeps_its_link_and_mode() {
        use std::os::unix::fs::PermissionsExt;
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        let home = tempfile::tempdir().unwrap();
        install(Agent::Claude, home.path(), CMD, true, false).unwrap();
        assert_eq!(mode(&settings_path(Agent::Claude, home.path())), 0o600);
        install_skill(Agent::Codex, home.path(), None, false).unwrap();
        assert_eq!(mode(&skill_path(Agent::Codex, home.path())), 0o644);

        let skill = skill_path(Agent::Claude, home.path());
        std::fs::create_dir_all(skill.parent().unwrap()).unwrap();
        let real = home.path().join("my-skill.md");
        std::fs::write(&real, "an older skill").unwrap();
        std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o640)).unwrap();
        std::os::unix::fs::symlink(&real, &skill).unwrap();
        assert!(
            install_skill(Agent::Claude, home.path(), None, false)
                .unwrap()
                .changed
        );
        assert!(
            std::fs::symlink_metadata(&skill)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(std::fs::read_to_string(&real).unwrap(), SKILL);
        assert_eq!(mode(&real), 0o640);
    }

    #[test]
    fn settings_that_are_not_an_object_of_the_right_shape_are_refused_untouched() {
        let home = tempfile::tempdir().unwrap();
        for text in [
            "[1, 2]",
            r#"{"hooks": []}"#,
            r#"{"hooks": {"Stop": {}}}"#,
            r#"{"a": 1,}"#,
            "{\"a\": NaN}",
        ] {
            let path = claude_settings(home.path(), text);
            let err = install(Agent::Claude, home.path(), CMD, true, false).unwrap_err();
            assert!(err.to_string().contains("settings.json"), "{err}");
            assert_eq!(std::fs::read_to_string(&path).unwrap(), text);
        }
    }
}

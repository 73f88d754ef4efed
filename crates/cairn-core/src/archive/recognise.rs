//! Which agent a transcript belongs to, or which agent runs this process: the one recogniser
//! every door uses (the hook, the CLI's `cairn hook` without `--agent`, the desktop's watcher).
//!
//! The clues, strongest first: the source dir holding the file ([`holder`]), the agent's own
//! environment ([`by_env`], for a hook run by the agent), the file's path ([`by_path`]), its
//! first line ([`by_first_line`]).

use std::ffi::OsString;
use std::path::Path;

use super::Agent;

/// The source dir holding `path` and its agent; the most specific dir wins when they nest
/// (`~/.claude` and `~/.claude/projects/x`). Says nothing of symlinks: see
/// [`super::discover::holds`] for whether a file inside may be read.
pub fn holder<'a>(
    dirs: impl IntoIterator<Item = (Agent, &'a Path)>,
    path: &Path,
) -> Option<(Agent, &'a Path)> {
    dirs.into_iter()
        .filter(|(_, dir)| path.starts_with(dir))
        .max_by_key(|(_, dir)| dir.components().count())
}

/// The agent whose process environment this is: the variables Codex and Claude Code set for
/// the commands they run, else `AI_AGENT` or `AGENT` naming one. `var` reads a variable (the
/// process's own: `|name| std::env::var_os(name)`).
pub fn by_env(var: impl Fn(&str) -> Option<OsString>) -> Option<Agent> {
    let set = |name: &str| var(name).is_some_and(|v| !v.is_empty());
    let named = |name: &str| {
        var(name)
            .and_then(|v| v.into_string().ok())
            .and_then(|v| Agent::parse(&v))
    };
    if [
        "CODEX_SANDBOX",
        "CODEX_CI",
        "CODEX_THREAD_ID",
        "CODEX_SHELL",
    ]
    .iter()
    .any(|v| set(v))
    {
        return Some(Agent::Codex);
    }
    if ["CLAUDE_CODE_IS_COWORK", "CLAUDE_CODE", "CLAUDECODE"]
        .iter()
        .any(|v| set(v))
    {
        return Some(Agent::Claude);
    }
    named("AI_AGENT").or_else(|| named("AGENT"))
}

/// The agent a transcript's path suggests: the agent's home dir in it, a Claude sub-agent
/// folder, a Codex `rollout-*` file name, else what each other agent's source file says it owns.
pub fn by_path(path: &Path) -> Option<Agent> {
    let s = path.to_string_lossy();
    if s.contains("/.claude/") || s.contains("/subagents/") {
        Some(Agent::Claude)
    } else if super::sources::traex::owns_path(path) {
        Some(Agent::Traex)
    } else if s.contains("/.codex/")
        || path
            .file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with("rollout-"))
    {
        Some(Agent::Codex)
    } else if super::sources::copilot::owns_path(path) {
        Some(Agent::Copilot)
    } else if super::sources::qwen::owns_path(path) {
        Some(Agent::Qwen)
    } else if super::sources::droid::owns_path(path) {
        Some(Agent::Droid)
    } else if super::sources::kimi::owns_path(path) {
        Some(Agent::Kimi)
    } else if super::sources::pi::owns_path(path) {
        Some(Agent::Pi)
    } else if super::sources::openclaw::owns_path(path) {
        Some(Agent::Openclaw)
    } else if super::sources::grok::owns_path(path) {
        Some(Agent::Grok)
    } else if super::sources::hermes::owns_path(path) {
        Some(Agent::Hermes)
    } else if super::sources::antigravity::owns_path(path) {
        Some(Agent::Antigravity)
    } else if super::sources::vibe::owns_path(path) {
        Some(Agent::Vibe)
    } else if super::sources::iflow::owns_path(path) {
        Some(Agent::Iflow)
    } else if super::sources::gptme::owns_path(path) {
        Some(Agent::Gptme)
    } else if super::sources::posit::owns_path(path) {
        Some(Agent::Posit)
    } else if super::sources::qwenpaw::owns_path(path) {
        Some(Agent::Qwenpaw)
    } else if super::sources::vscopilot::owns_path(path) {
        Some(Agent::Vscopilot)
    } else if super::sources::gemini::owns_path(path) {
        Some(Agent::Gemini)
    } else if super::sources::cursor::owns_path(path) || super::sources::cursor_ide::owns_path(path)
    {
        Some(Agent::Cursor)
    } else if super::sources::aider::owns_path(path) {
        Some(Agent::Aider)
    } else if super::sources::crush::owns_path(path) {
        Some(Agent::Crush)
    } else if super::sources::opencode::owns_path(path) {
        Some(Agent::Opencode)
    } else if super::sources::kiro::owns_path(path)
        || super::sources::kiro_sessions::owns_path(path)
    {
        Some(Agent::Kiro)
    } else {
        super::sources::cline::owner(path)
    }
}

/// Tell Claude from Codex by the first line of a transcript (at most 1 MiB of it is read).
pub fn by_first_line(path: &Path) -> Option<Agent> {
    use std::io::{BufRead, Read};
    let file = std::fs::File::open(path).ok()?;
    let mut first = String::new();
    std::io::BufReader::new(file)
        .take(1 << 20)
        .read_line(&mut first)
        .ok()?;
    let v: serde_json::Value =
        serde_json::from_str(&super::json_text::readable_str(first.trim())).ok()?;
    if v.get("payload").is_some() || v.get("record_type").is_some() {
        Some(Agent::Codex)
    } else if super::sources::gemini::sniff(&v) {
        Some(Agent::Gemini)
    } else if v.get("sessionId").is_some()
        || v.get("uuid").is_some()
        || v.get("parentUuid").is_some()
    {
        Some(Agent::Claude)
    } else {
        None
    }
}

/// The agent of a transcript found outside any one agent's dir (a dir shared by several): its
/// path, else its first line.
pub fn of_file(path: &Path) -> Option<Agent> {
    by_path(path).or_else(|| by_first_line(path))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    #[test]
    fn the_environment_names_the_agent_the_hook_runs_under() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |name: &str| {
                pairs
                    .iter()
                    .find(|(k, _)| *k == name)
                    .map(|(_, v)| OsString::from(v))
            }
        };
        assert_eq!(by_env(env(&[("CODEX_THREAD_ID", "t")])), Some(Agent::Codex));
        assert_eq!(by_env(env(&[("CLAUDECODE", "1")])), Some(Agent::Claude));
        assert_eq!(by_env(env(&[("CLAUDECODE", "")])), None);
        assert_eq!(by_env(env(&[("AI_AGENT", "codex")])), Some(Agent::Codex));
        assert_eq!(by_env(env(&[("AGENT", "vim")])), None);
        assert_eq!(by_env(env(&[])), None);
    }

    #[test]
    fn the_most_specific_source_dir_holds_a_path() {
        let dirs = [
            (Agent::Claude, PathBuf::from("/h/.shared")),
            (Agent::Codex, PathBuf::from("/h/.shared/codex")),
        ];
        let of = |p: &str| holder(dirs.iter().map(|(a, d)| (*a, d.as_path())), Path::new(p));
        assert_eq!(
            of("/h/.shared/codex/x.jsonl").map(|h| h.0),
            Some(Agent::Codex)
        );
        assert_eq!(of("/h/.shared/x.jsonl").map(|h| h.0), Some(Agent::Claude));
        assert_eq!(of("/h/.sharedx/x.jsonl"), None);
    }

    #[test]
    fn a_path_or_a_first_line_tells_claude_from_codex() {
        assert_eq!(
            by_path(Path::new("/h/.codex/sessions/a.jsonl")),
            Some(Agent::Codex)
        );
        assert_eq!(by_path(Path::new("/x/rollout-1.jsonl")), Some(Agent::Codex));
        // TRAE CLI's rollouts carry Codex's name: its folder is asked first.
        assert_eq!(
            by_path(Path::new(
                "/h/.trae/cli/sessions/2026/08/01/rollout-1.jsonl"
            )),
            Some(Agent::Traex)
        );
        for (path, agent) in [
            (
                "/h/.local/share/gptme/logs/c/conversation.jsonl",
                Agent::Gptme,
            ),
            (
                "/h/.posit/assistant/workspaces/w/c/lm-messages.jsonl",
                Agent::Posit,
            ),
            ("/h/.copaw/workspaces/a/sessions/s.json", Agent::Qwenpaw),
            (
                "/h/.cache/VSGitHubCopilotLogs/traces/20260611T145205_ab12_VSGitHubCopilot_traces.jsonl",
                Agent::Vscopilot,
            ),
        ] {
            assert_eq!(by_path(Path::new(path)), Some(agent), "{path}");
        }
        assert_eq!(
            by_path(Path::new("/x/s/subagents/a.jsonl")),
            Some(Agent::Claude)
        );
        assert_eq!(by_path(Path::new("/x/a.jsonl")), None);
        let dir = tempfile::tempdir().unwrap();
        let write = |name: &str, text: &str| {
            let p = dir.path().join(name);
            std::fs::write(&p, text).unwrap();
            p
        };
        let codex = write("a.jsonl", "{\"type\":\"session_meta\",\"payload\":{}}\n");
        let claude = write("b.jsonl", "{\"sessionId\":\"s\",\"uuid\":\"u\"}\n");
        let neither = write("c.jsonl", "not json\n");
        assert_eq!(of_file(&codex), Some(Agent::Codex));
        assert_eq!(of_file(&claude), Some(Agent::Claude));
        assert_eq!(of_file(&neither), None);
        assert_eq!(of_file(&dir.path().join("missing.jsonl")), None);
    }
}

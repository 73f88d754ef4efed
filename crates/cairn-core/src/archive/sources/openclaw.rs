//! OpenClaw (the personal agent gateway, once Clawdbot): each of its agents keeps one JSONL
//! file a session under `~/.openclaw/agents/<agent>/sessions/` (`$OPENCLAW_STATE_DIR` moves
//! `~/.openclaw`; a pre-rename install has `~/.clawdbot`), in Pi's session format, read by
//! [`PiParser`](super::pi::PiParser). Beside the sessions lie files that are not: `*.jsonl.lock`
//! (a writer's lock), `*.jsonl.deleted.<time>` (a session deleted), and `*.trajectory.jsonl`
//! (a run's trace, which repeats the session's turns): only the sessions are read.

use std::path::{Path, PathBuf};

use crate::archive::Agent;
use crate::archive::discover::{DirOrigin, FoundFile};

/// The variable naming OpenClaw's agents folder (AgentsView's name).
pub const ENV_DIR: &str = "OPENCLAW_DIR";

/// OpenClaw's own variable for its state folder (`~/.openclaw`), which holds `agents/`; and
/// Clawdbot's, from before the rename.
pub const STATE_DIR: &str = "OPENCLAW_STATE_DIR";
const CLAWDBOT_STATE_DIR: &str = "CLAWDBOT_STATE_DIR";

/// Where OpenClaw's agents keep their sessions (the same on Linux and macOS): `$OPENCLAW_DIR`
/// when set, else `$OPENCLAW_STATE_DIR/agents` or `~/.openclaw/agents`, and the older
/// `$CLAWDBOT_STATE_DIR/agents` or `~/.clawdbot/agents`.
pub fn locations(
    env: impl Fn(&str) -> Option<PathBuf>,
    home: Option<&Path>,
) -> Vec<(PathBuf, DirOrigin)> {
    crate::archive::discover::env_or_agent_home(
        env,
        ENV_DIR,
        "",
        home,
        &[
            (".openclaw/agents", STATE_DIR, "agents"),
            (".clawdbot/agents", CLAWDBOT_STATE_DIR, "agents"),
        ],
    )
}

/// A `.jsonl` under OpenClaw's agents folder is a session, unless it is a run's trajectory.
pub fn classify(path: &Path) -> Option<FoundFile> {
    let stem = path.file_stem()?.to_str()?;
    (!stem.ends_with(".trajectory")).then(|| FoundFile::main(Agent::Openclaw, path))
}

/// Whether a transcript's path is OpenClaw's (for the hook, given only a path).
pub fn owns_path(path: &Path) -> bool {
    let s = path.to_string_lossy();
    (s.contains("/.openclaw/agents/") || s.contains("/.clawdbot/agents/"))
        && s.contains("/sessions/")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sessions_are_found_and_trajectories_left_out() {
        let home = Path::new("/h");
        let none = |_: &str| None;
        assert_eq!(
            locations(none, Some(home)),
            [
                (PathBuf::from("/h/.openclaw/agents"), DirOrigin::Default),
                (PathBuf::from("/h/.clawdbot/agents"), DirOrigin::Default)
            ]
        );
        let state = |v: &str| (v == STATE_DIR).then(|| PathBuf::from("/s"));
        assert_eq!(
            locations(state, Some(home)),
            [
                (PathBuf::from("/s/agents"), DirOrigin::Env),
                (PathBuf::from("/h/.clawdbot/agents"), DirOrigin::Default)
            ]
        );
        let named = |v: &str| (v == ENV_DIR || v == STATE_DIR).then(|| PathBuf::from("/a"));
        assert_eq!(
            locations(named, Some(home)),
            [(PathBuf::from("/a"), DirOrigin::Env)]
        );
        let session = Path::new("/h/.openclaw/agents/main/sessions/abc.jsonl");
        assert_eq!(classify(session).map(|f| f.agent), Some(Agent::Openclaw));
        assert!(owns_path(session));
        assert!(
            classify(Path::new(
                "/h/.openclaw/agents/main/sessions/abc.trajectory.jsonl"
            ))
            .is_none()
        );
        assert!(!owns_path(Path::new("/h/.openclaw/workspace/notes.jsonl")));
    }
}

//! TRAE CLI (`traex`, ByteDance's fork of Codex): rollouts byte for byte in Codex's format,
//! read by [`CodexParser`](super::codex::CodexParser), kept apart from Codex's under
//! `~/.trae/cli/sessions/YYYY/MM/DD/rollout-*.jsonl`, and `~/.trae/cli/archived_sessions/`
//! where `traex archive` moves one. It is its own agent, not a Codex folder: its sessions reopen
//! with `traex resume`, never `codex resume`. Beside the sessions TRAE CLI keeps SQLite files
//! of its own, which are not transcripts.

use std::path::{Path, PathBuf};

use crate::archive::Agent;
use crate::archive::discover::{DirOrigin, FoundFile};

/// The variable naming TRAE CLI's sessions folder (AgentsView's name): it replaces both
/// defaults.
pub const ENV_DIR: &str = "TRAEX_SESSIONS_DIR";

/// Where TRAE CLI keeps rollouts (the same on Linux and macOS): `$TRAEX_SESSIONS_DIR`, else
/// `~/.trae/cli/sessions` and `~/.trae/cli/archived_sessions`.
pub fn locations(
    env: impl Fn(&str) -> Option<PathBuf>,
    home: Option<&Path>,
) -> Vec<(PathBuf, DirOrigin)> {
    crate::archive::discover::env_or_home(
        env,
        ENV_DIR,
        "",
        home,
        &[".trae/cli/sessions", ".trae/cli/archived_sessions"],
    )
}

/// A rollout under TRAE CLI's folders is a session (the index files Codex keeps are not).
pub fn classify(path: &Path) -> Option<FoundFile> {
    let stem = path.file_stem()?.to_str()?;
    (!matches!(stem, "history" | "session_index")).then(|| FoundFile::main(Agent::Traex, path))
}

/// Whether a transcript's path is TRAE CLI's (for the hook, given only a path): it is looked at
/// before Codex's `rollout-` name, which TRAE CLI's files share.
pub fn owns_path(path: &Path) -> bool {
    path.to_string_lossy().contains("/.trae/cli/")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rollouts_are_found_in_both_folders_or_where_the_variable_says() {
        let home = Path::new("/h");
        assert_eq!(
            locations(|_| None, Some(home)),
            [
                (PathBuf::from("/h/.trae/cli/sessions"), DirOrigin::Default),
                (
                    PathBuf::from("/h/.trae/cli/archived_sessions"),
                    DirOrigin::Default
                )
            ]
        );
        let named = |v: &str| (v == ENV_DIR).then(|| PathBuf::from("/t"));
        assert_eq!(
            locations(named, Some(home)),
            [(PathBuf::from("/t"), DirOrigin::Env)]
        );
        let rollout =
            Path::new("/h/.trae/cli/sessions/2026/08/01/rollout-2026-08-01T18-07-03-x.jsonl");
        assert_eq!(classify(rollout).map(|f| f.agent), Some(Agent::Traex));
        assert!(owns_path(rollout));
        assert!(classify(Path::new("/h/.trae/cli/session_index.jsonl")).is_none());
        assert!(!owns_path(Path::new("/h/.codex/sessions/rollout-1.jsonl")));
    }
}

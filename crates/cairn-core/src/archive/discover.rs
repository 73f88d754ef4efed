//! Finding transcript files: which directories to look in, and which files there are whose.
//!
//! Source dirs come from, in order: the config file (`[sources.<agent>] dirs`), the environment
//! variables AgentsView also honours (`CLAUDE_PROJECTS_DIR`, `CODEX_SESSIONS_DIR`, and the agents'
//! own `CLAUDE_CONFIG_DIR` / `CODEX_HOME`), then each agent's default location.
//! Walking never follows directory symlinks (no loops), follows a `*.jsonl` symlink only to a
//! file inside the same source dir (one pointing elsewhere is a warning, never read), and reports
//! unreadable entries as warnings instead of failing.

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::Agent;
use super::sources::FileRole;
use crate::config::Config;

/// Where a source dir came from, for `doctor` and the settings page.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "snake_case")]
pub enum DirOrigin {
    Config,
    Env,
    Default,
}

/// Which of the platform's per-user application folders an agent keeps its data in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AppFolder {
    /// `$XDG_CONFIG_HOME` or `~/.config` on Linux.
    Config,
    /// `$XDG_DATA_HOME` or `~/.local/share` on Linux.
    Data,
}

/// The per-user application folder of the platform: `~/Library/Application Support` on macOS
/// (for both kinds); on Linux the XDG variable when it holds an absolute path (the XDG rule:
/// a relative one is ignored), else its default under the home folder. `None` without a home.
pub fn app_folder(
    env: &impl Fn(&str) -> Option<PathBuf>,
    home: Option<&Path>,
    macos: bool,
    kind: AppFolder,
) -> Option<PathBuf> {
    if macos {
        return home.map(|h| h.join("Library/Application Support"));
    }
    let (var, default) = match kind {
        AppFolder::Config => ("XDG_CONFIG_HOME", ".config"),
        AppFolder::Data => ("XDG_DATA_HOME", ".local/share"),
    };
    env(var)
        .filter(|p| p.is_absolute())
        .or_else(|| home.map(|h| h.join(default)))
}

/// One directory to scan for an agent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct SourceDir {
    pub agent: Agent,
    pub path: PathBuf,
    pub origin: DirOrigin,
}

/// A transcript file found on disk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FoundFile {
    pub agent: Agent,
    pub role: FileRole,
    pub path: PathBuf,
    /// For a Claude sub-agent file: the parent session id taken from the directory layout.
    pub parent_hint: Option<String>,
    /// For a Claude sub-agent file: the sub-agent id from `agent-<id>.jsonl`.
    pub agent_id: Option<String>,
}

impl FoundFile {
    /// A session file of `agent` at `path`, with no sub-agent hints: what every source but
    /// Claude's sub-agent layout finds.
    pub fn main(agent: Agent, path: &Path) -> FoundFile {
        FoundFile {
            agent,
            role: FileRole::Main,
            path: path.to_owned(),
            parent_hint: None,
            agent_id: None,
        }
    }

    /// A session of `agent` that is the file `name` in a folder of its own, the session named
    /// by that folder (Grok's, Vibe's, gptme's, Posit Assistant's); `None` for any other file.
    pub fn named_by_folder(agent: Agent, path: &Path, name: &str) -> Option<FoundFile> {
        if path.file_name()? != name {
            return None;
        }
        let folder = path.parent()?.file_name()?.to_str()?;
        Some(FoundFile {
            parent_hint: Some(folder.to_owned()),
            ..FoundFile::main(agent, path)
        })
    }
}

/// A problem met while walking a source dir.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WalkWarning {
    pub path: PathBuf,
    pub message: String,
}

/// The directories to scan for `agent`, most specific source first.
pub fn source_dirs(config: &Config, agent: Agent) -> Vec<SourceDir> {
    let dir = |path: PathBuf, origin| SourceDir {
        agent,
        path,
        origin,
    };
    let configured = config.source_dirs(agent);
    if !configured.is_empty() {
        return configured
            .into_iter()
            .map(|p| dir(p, DirOrigin::Config))
            .collect();
    }
    let env = |name: &str| {
        std::env::var_os(name)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    // The agents after Claude and Codex say where they live in their own source file.
    let located = |found: Vec<(PathBuf, DirOrigin)>| {
        found
            .into_iter()
            .map(|(p, origin)| dir(p, origin))
            .collect()
    };
    match agent {
        Agent::Claude => {
            if let Some(p) = env("CLAUDE_PROJECTS_DIR") {
                return vec![dir(p, DirOrigin::Env)];
            }
            if let Some(p) = env("CLAUDE_CONFIG_DIR") {
                return vec![dir(p.join("projects"), DirOrigin::Env)];
            }
            home()
                .map(|h| vec![dir(h.join(".claude/projects"), DirOrigin::Default)])
                .unwrap_or_default()
        }
        Agent::Codex => {
            if let Some(p) = env("CODEX_SESSIONS_DIR") {
                return vec![dir(p, DirOrigin::Env)];
            }
            let base = match env("CODEX_HOME") {
                Some(p) => Some((p, DirOrigin::Env)),
                None => home().map(|h| (h.join(".codex"), DirOrigin::Default)),
            };
            base.map(|(b, origin)| {
                vec![
                    dir(b.join("sessions"), origin),
                    dir(b.join("archived_sessions"), origin),
                ]
            })
            .unwrap_or_default()
        }
        Agent::Copilot => located(super::sources::copilot::locations(env, home().as_deref())),
        Agent::Qwen => located(super::sources::qwen::locations(env, home().as_deref())),
        Agent::Droid => located(super::sources::droid::locations(env, home().as_deref())),
        Agent::Kimi => located(super::sources::kimi::locations(env, home().as_deref())),
        Agent::Pi => located(super::sources::pi::locations(env, home().as_deref())),
        Agent::Openclaw => located(super::sources::openclaw::locations(env, home().as_deref())),
        Agent::Grok => located(super::sources::grok::locations(env, home().as_deref())),
        Agent::Hermes => located(super::sources::hermes::locations(env, home().as_deref())),
        Agent::Vibe => located(super::sources::vibe::locations(env, home().as_deref())),
        Agent::Iflow => located(super::sources::iflow::locations(env, home().as_deref())),
        Agent::Traex => located(super::sources::traex::locations(env, home().as_deref())),
        Agent::Gptme => located(super::sources::gptme::locations(env, home().as_deref())),
        Agent::Posit => located(super::sources::posit::locations(env, home().as_deref())),
        Agent::Qwenpaw => located(super::sources::qwenpaw::locations(env, home().as_deref())),
        Agent::Vscopilot => located(super::sources::vscopilot::locations(env, home().as_deref())),
        Agent::Antigravity => located(super::sources::antigravity::locations(
            env,
            home().as_deref(),
        )),
        Agent::Gemini => located(super::sources::gemini::locations(env, home().as_deref())),
        Agent::Cursor => {
            let mut dirs = super::sources::cursor::locations(env, home().as_deref());
            dirs.extend(super::sources::cursor_ide::locations(
                env,
                home().as_deref(),
            ));
            located(dirs)
        }
        Agent::Aider => located(super::sources::aider::locations(env, home().as_deref())),
        Agent::Crush => located(super::sources::crush::locations(env, home().as_deref())),
        Agent::Opencode => located(super::sources::opencode::locations(env, home().as_deref())),
        Agent::Kiro => {
            let mut dirs = super::sources::kiro::locations(env, home().as_deref());
            dirs.extend(super::sources::kiro_sessions::locations(
                env,
                home().as_deref(),
            ));
            located(dirs)
        }
        Agent::Kilo => {
            let mut dirs = super::sources::cline::locations(agent, env, home().as_deref());
            dirs.extend(super::sources::opencode::kilo_locations(
                env,
                home().as_deref(),
            ));
            located(dirs)
        }
        Agent::Cline | Agent::Roo => located(super::sources::cline::locations(
            agent,
            env,
            home().as_deref(),
        )),
        // Imported one file at a time (`cairn import`), never discovered.
        Agent::Atif => Vec::new(),
    }
}

fn home() -> Option<PathBuf> {
    dirs::home_dir()
}

/// What a source dir is to the user running Cairn, told apart by what the OS said when asked:
/// a folder that can be listed, a file, nothing there at all, or a place it refused to show.
/// An unreadable folder is never taken for a missing one: a `~/.claude` left owned by root
/// after an agent ran with sudo hides every transcript in it, and "not present" would say all
/// is well.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DirAccess {
    /// A folder this user can list.
    Dir,
    /// A file (a source that names one file: Aider's history named directly).
    File,
    /// Nothing there: the OS said no such file (or a file where a folder on the way should be).
    Absent,
    /// The OS refused to say or to list.
    Unreadable(Unreadable),
}

/// A place the OS refused to show.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unreadable {
    /// The folder that refused: the dir itself when it cannot be listed, else the nearest
    /// folder on its path that cannot be searched (a `~/.claude` of mode 000 blocks
    /// `~/.claude/projects`).
    pub blocked: PathBuf,
    /// Permission denied, which giving the folder back to the user fixes; else another
    /// error, said as the OS said it.
    pub denied: bool,
    /// The OS's words.
    pub error: String,
}

impl Unreadable {
    fn of(blocked: &Path, e: &std::io::Error) -> Unreadable {
        Unreadable {
            blocked: blocked.to_owned(),
            denied: e.kind() == std::io::ErrorKind::PermissionDenied,
            error: e.to_string(),
        }
    }

    /// What is lost and the fix, for a sync's warning and doctor's check alike: `path` is the
    /// folder whose `agent` transcripts cannot be read.
    pub fn message(&self, agent: Agent, path: &Path) -> String {
        self.message_for(agent, path, home().as_deref())
    }

    /// [`Unreadable::message`] for the user whose home folder is `home`. Giving a folder to
    /// the user (`chown`) is the fix inside that home, where a folder left root's by an agent
    /// run with sudo was theirs. Outside it the folder may be another user's on purpose: the
    /// command is offered for that folder alone, if it is theirs; a system folder or another
    /// user's home (`/root`, `/srv`, `/home/bob`) blocking the way is never given away.
    fn message_for(&self, agent: Agent, path: &Path, home: Option<&Path>) -> String {
        let at = if self.blocked == path {
            String::new()
        } else {
            format!(" (blocked at {})", self.blocked.display())
        };
        if !self.denied {
            return format!(
                "cannot read {}{at}: {}, so the {agent} transcripts there are not captured; mend the folder, or name another in config.toml's [sources.{agent}] dirs",
                path.display(),
                self.error
            );
        }
        let lost = format!(
            "cannot read {}{at}: permission denied, so the {agent} transcripts there are not captured",
            path.display()
        );
        let chown = format!("sudo chown -R $USER {}", shell_quoted(&self.blocked));
        let blocked = self.blocked.as_path();
        let in_home = home.is_some_and(|h| blocked.starts_with(h) && blocked != h);
        if in_home {
            return format!(
                "{lost}; if an agent run with sudo left it owned by root, give it back to your user: `{chown}`"
            );
        }
        // `/`, a folder at the top (`/root`, `/srv`), a home (this user's, another's in the
        // folder of homes: `/home/bob`) or a folder above this user's: not an agent's folder,
        // whoever owns it.
        let depth = |p: &Path| {
            p.components()
                .filter(|c| matches!(c, std::path::Component::Normal(_)))
                .count()
        };
        let mut homes = home
            .and_then(Path::parent)
            .filter(|h| depth(h) == 1)
            .into_iter()
            .chain([Path::new("/home"), Path::new("/Users")]);
        let a_home = home.is_some_and(|h| h.starts_with(blocked))
            || homes.any(|h| blocked.parent() == Some(h));
        if depth(blocked) < 2 || a_home {
            return format!(
                "{lost}; {} is not the agent's folder but a system folder or a user's home, so do not give it away: run cairn as the user who can read {}, or name a folder you can read in config.toml's [sources.{agent}] dirs",
                blocked.display(),
                path.display()
            );
        }
        format!(
            "{lost}; it is outside your home folder, so it may be another user's on purpose: run cairn as that user, or, if the folder is yours (an agent run with sudo left it owned by root), take it back: `{chown}`"
        )
    }
}

/// `path` quoted for a POSIX shell, for a command a fix suggests.
fn shell_quoted(path: &Path) -> String {
    format!("'{}'", path.display().to_string().replace('\'', "'\\''"))
}

/// What `path` is to this user ([`DirAccess`]), asking the file system.
pub fn access(path: &Path) -> DirAccess {
    access_with(path, &|p| std::fs::metadata(p).map(|m| m.is_dir()), &|p| {
        std::fs::read_dir(p).map(drop)
    })
}

/// [`access`] over the two questions put to the file system, so that a test can give the
/// answers root never gets (root reads a folder of mode 000): `is_dir` follows links as
/// `metadata` does, `list` opens a folder for listing.
pub fn access_with(
    path: &Path,
    is_dir: &dyn Fn(&Path) -> std::io::Result<bool>,
    list: &dyn Fn(&Path) -> std::io::Result<()>,
) -> DirAccess {
    use std::io::ErrorKind;
    match is_dir(path) {
        Ok(true) => match list(path) {
            Ok(()) => DirAccess::Dir,
            Err(e) => DirAccess::Unreadable(Unreadable::of(path, &e)),
        },
        Ok(false) => DirAccess::File,
        // A file where a folder on the way should be: nothing can be below it.
        Err(e) if matches!(e.kind(), ErrorKind::NotFound | ErrorKind::NotADirectory) => {
            DirAccess::Absent
        }
        Err(e) => {
            // Permission denied on the path means a folder on the way cannot be searched: the
            // nearest one that can itself be looked at. Any other error is the first place on
            // the way that cannot be looked at.
            let mut blocked = path;
            for ancestor in path.ancestors().skip(1) {
                if ancestor.as_os_str().is_empty() || is_dir(ancestor).is_ok() {
                    if e.kind() == ErrorKind::PermissionDenied && !ancestor.as_os_str().is_empty() {
                        blocked = ancestor;
                    }
                    break;
                }
                blocked = ancestor;
            }
            DirAccess::Unreadable(Unreadable::of(blocked, &e))
        }
    }
}

/// Every transcript file under `dir`.
pub fn walk(dir: &SourceDir, warnings: &mut Vec<WalkWarning>) -> Vec<FoundFile> {
    let mut out = Vec::new();
    match access(&dir.path) {
        DirAccess::Dir | DirAccess::File => {}
        DirAccess::Absent => {
            // An agent's default folder is missing where the agent is not used, and one under a
            // variable's home (`$CODEX_HOME/archived_sessions`) until the agent writes it; one a
            // person named in config.toml is a mistake to say at every sync, not only in `doctor`.
            if dir.origin == DirOrigin::Config {
                warnings.push(WalkWarning {
                    path: dir.path.clone(),
                    message: format!(
                        "this {} source dir, named in config.toml's [sources.{}] dirs, does not exist: fix the path or remove it",
                        dir.agent, dir.agent
                    ),
                });
            }
            return out;
        }
        // Said at every sync, whatever named the folder: its transcripts are lost in silence
        // otherwise.
        DirAccess::Unreadable(why) => {
            warnings.push(WalkWarning {
                path: why.blocked.clone(),
                message: why.message(dir.agent, &dir.path),
            });
            return out;
        }
    }
    // What the walk's own symlinks may point into: the source dir, resolved once.
    let root = std::fs::canonicalize(&dir.path).ok();
    // Aider's and Crush's sources are repositories (or folders of them): their files sit at (or
    // just below) a repository's root, so the walk stays shallow and never enters a
    // repository's own trees.
    let skipped: Option<fn(&std::ffi::OsStr) -> bool> = match dir.agent {
        Agent::Aider => Some(super::sources::aider::is_skipped_dir),
        Agent::Crush => Some(super::sources::crush::is_skipped_dir),
        _ => None,
    };
    let max_depth = match dir.agent {
        Agent::Aider => super::sources::aider::MAX_DEPTH,
        Agent::Crush => super::sources::crush::MAX_DEPTH,
        _ => 8,
    };
    let walker = walkdir::WalkDir::new(&dir.path)
        .follow_links(false)
        .max_depth(max_depth)
        .into_iter()
        .filter_entry(|e| match skipped {
            Some(skipped) => e.depth() == 0 || !e.file_type().is_dir() || !skipped(e.file_name()),
            None => true,
        });
    for entry in walker {
        let entry = match entry {
            Ok(e) => e,
            Err(e) => {
                let path = e
                    .path()
                    .map(Path::to_path_buf)
                    .unwrap_or_else(|| dir.path.clone());
                // A folder inside the source dir that cannot be listed: named, with the fix.
                let message = match e.io_error() {
                    Some(io) => Unreadable::of(&path, io).message(dir.agent, &path),
                    None => format!("cannot read: {e}"),
                };
                warnings.push(WalkWarning { path, message });
                continue;
            }
        };
        let path = entry.path();
        // A linked folder is never entered (it could be any folder the user can read), but one
        // holding this agent's transcripts is said, not passed over: a person who moved a
        // project's folder elsewhere and linked it back would otherwise lose it in silence.
        if entry.path_is_symlink()
            && entry.depth() > 0
            && path.is_dir()
            && !root
                .as_deref()
                .is_some_and(|root| std::fs::canonicalize(path).is_ok_and(|p| p.starts_with(root)))
            && holds_transcripts(dir.agent, path)
        {
            warnings.push(WalkWarning {
                path: path.to_owned(),
                message: format!(
                    "a link to a folder outside {} holding {} transcripts: not read (add the folder it points to as a {} source dir, in Settings or config.toml's [sources.{}] dirs, to read them)",
                    dir.path.display(),
                    dir.agent,
                    dir.agent,
                    dir.agent
                ),
            });
            continue;
        }
        if !is_transcript_name(dir.agent, path) {
            continue;
        }
        let file_type = entry.file_type();
        // Symlinked directories are never entered; a symlink to a file is followed only when
        // the file lies inside this source dir (anything else could be any file the user can
        // read: a key, another archive).
        if file_type.is_symlink() {
            if !path.is_file() {
                continue;
            }
            if !root
                .as_deref()
                .is_some_and(|root| holds_resolved(root, path))
            {
                warnings.push(WalkWarning {
                    path: path.to_owned(),
                    message: format!(
                        "a symlink to a file outside {}: not read (add the directory it points into as a source dir to read it)",
                        dir.path.display()
                    ),
                });
                continue;
            }
        } else if !file_type.is_file() {
            continue;
        }
        if let Some(found) = classify(dir.agent, path) {
            out.push(found);
        }
    }
    out.sort_by(|a, b| a.path.cmp(&b.path));
    out
}

/// Whether a file's name can be a transcript of `agent`: `*.jsonl` for every agent, and the
/// `*.json` documents of the agents that write them (which files exactly is `classify`'s call);
/// for Aider, only its `.aider.chat.history.md`; for Crush and OpenCode, their databases.
pub fn is_transcript_name(agent: Agent, path: &Path) -> bool {
    if agent == Agent::Aider {
        return super::sources::aider::is_history(path);
    }
    if agent == Agent::Crush {
        return super::sources::crush::is_database(path);
    }
    if super::sources::cline::is_cline_family(agent) {
        return path
            .file_name()
            .is_some_and(|n| n == super::sources::cline::UI_MESSAGES)
            || (agent == Agent::Cline && super::sources::cline_sdk::is_messages_file(path))
            || (agent == Agent::Kilo && super::sources::opencode::is_kilo_database(path));
    }
    if agent == Agent::Hermes {
        return super::sources::hermes::is_session_file(path);
    }
    if agent == Agent::Qwenpaw {
        return super::sources::qwenpaw::is_session_file(path);
    }
    if agent == Agent::Kiro {
        return super::sources::kiro::is_database(path)
            || super::sources::kiro_sessions::is_session_file(path);
    }
    if agent == Agent::Cursor && super::sources::cursor_ide::is_database(path) {
        return true;
    }
    if agent == Agent::Opencode {
        return super::sources::opencode::is_database(path)
            || super::sources::opencode::is_session_file(path);
    }
    match path.extension().and_then(|e| e.to_str()) {
        Some("jsonl") => true,
        Some("json") => agent == Agent::Gemini,
        Some("zst") => {
            matches!(agent, Agent::Codex | Agent::Traex) && super::sources::is_compressed(path)
        }
        _ => false,
    }
}

/// Whether `path`, with every symlink and `..` resolved, lies inside the directory `dir` (resolved
/// too). False when either cannot be resolved.
pub fn holds(dir: &Path, path: &Path) -> bool {
    std::fs::canonicalize(dir).is_ok_and(|root| holds_resolved(&root, path))
}

/// [`holds`] with the directory resolved already.
/// Whether the folder `dir` (a link's target) holds a transcript of `agent` near its top: a
/// look at its first few hundred entries, three levels down at most, links not followed.
fn holds_transcripts(agent: Agent, dir: &Path) -> bool {
    walkdir::WalkDir::new(dir)
        .follow_root_links(true)
        .follow_links(false)
        .max_depth(3)
        .into_iter()
        .take(500)
        .filter_map(Result::ok)
        .any(|e| e.file_type().is_file() && is_transcript_name(agent, e.path()))
}

fn holds_resolved(root: &Path, path: &Path) -> bool {
    std::fs::canonicalize(path).is_ok_and(|p| p != root && p.starts_with(root))
}

/// Decide what a file under an agent's dir is, or `None` if it is not a transcript.
pub fn classify(agent: Agent, path: &Path) -> Option<FoundFile> {
    if !is_transcript_name(agent, path) {
        return None;
    }
    let stem = path.file_stem()?.to_str()?;
    match agent {
        Agent::Claude => {
            // `<session>/subagents/[workflows/<wf>/]agent-<id>.jsonl`
            let in_subagents = path
                .ancestors()
                .skip(1)
                .find(|a| a.file_name().is_some_and(|n| n == "subagents"));
            if let Some(subagents) = in_subagents {
                let agent_id = stem.strip_prefix("agent-")?;
                let parent = subagents.parent()?.file_name()?.to_str()?.to_owned();
                return Some(FoundFile {
                    agent,
                    role: FileRole::Subagent,
                    path: path.to_owned(),
                    parent_hint: Some(parent),
                    agent_id: Some(agent_id.to_owned()),
                });
            }
            // Side files that are not transcripts.
            if matches!(stem, "history" | "journal") {
                return None;
            }
            // Some 2.0-era builds wrote a sub-agent as `agent-<id>.jsonl` beside the session
            // files; its lines name the parent's `sessionId`, which keys it as the nested
            // layout does (read as a main file, its records and turn were folded into its
            // parent).
            if let Some(agent_id) = stem.strip_prefix("agent-").filter(|id| !id.is_empty()) {
                return Some(FoundFile {
                    agent,
                    role: FileRole::Subagent,
                    path: path.to_owned(),
                    parent_hint: None,
                    agent_id: Some(agent_id.to_owned()),
                });
            }
            Some(FoundFile {
                agent,
                role: FileRole::Main,
                path: path.to_owned(),
                parent_hint: None,
                agent_id: None,
            })
        }
        Agent::Codex => {
            if matches!(stem, "history" | "session_index") {
                return None;
            }
            Some(FoundFile {
                agent,
                role: FileRole::Main,
                path: path.to_owned(),
                parent_hint: None,
                agent_id: None,
            })
        }
        Agent::Copilot => super::sources::copilot::classify(path),
        Agent::Qwen => super::sources::qwen::classify(path),
        Agent::Droid => super::sources::droid::classify(path),
        Agent::Kimi => super::sources::kimi::classify(path),
        Agent::Pi => super::sources::pi::classify(path),
        Agent::Openclaw => super::sources::openclaw::classify(path),
        Agent::Grok => super::sources::grok::classify(path),
        Agent::Hermes => super::sources::hermes::classify(path),
        Agent::Antigravity => super::sources::antigravity::classify(path),
        Agent::Vibe => super::sources::vibe::classify(path),
        Agent::Iflow => super::sources::iflow::classify(path),
        Agent::Traex => super::sources::traex::classify(path),
        Agent::Gptme => super::sources::gptme::classify(path),
        Agent::Posit => super::sources::posit::classify(path),
        Agent::Qwenpaw => super::sources::qwenpaw::classify(path),
        Agent::Vscopilot => super::sources::vscopilot::classify(path),
        Agent::Gemini => super::sources::gemini::classify(path),
        Agent::Cursor => super::sources::cursor_ide::classify(path)
            .or_else(|| super::sources::cursor::classify(path)),
        Agent::Aider => super::sources::aider::classify(path),
        Agent::Crush => super::sources::crush::classify(path),
        Agent::Opencode => super::sources::opencode::classify(path),
        Agent::Cline => super::sources::cline::classify(agent, path)
            .or_else(|| super::sources::cline_sdk::classify(path)),
        Agent::Roo => super::sources::cline::classify(agent, path),
        Agent::Kilo => super::sources::cline::classify(agent, path).or_else(|| {
            super::sources::opencode::is_kilo_database(path)
                .then(|| FoundFile::main(Agent::Kilo, path))
        }),
        Agent::Kiro => super::sources::kiro::classify(path)
            .or_else(|| super::sources::kiro_sessions::classify(path)),
        Agent::Atif => None,
    }
}

/// The transcript a changed file is part of, for the watcher: the file itself when it is one
/// ([`classify`]), else, for OpenCode's storage tree, the session file its message or part
/// file belongs to ([`opencode::session_file_of`](super::sources::opencode::session_file_of)),
/// for a Cline-family task's sidecar, the task's log, and for the file beside a line transcript
/// that describes its session, that transcript
/// ([`transcript_of_sidecar`](super::sources::transcript_of_sidecar)).
pub fn transcript_of_change(agent: Agent, path: &Path) -> Option<FoundFile> {
    classify(agent, path).or_else(|| match agent {
        Agent::Opencode => super::sources::opencode::session_file_of(path)
            .and_then(|session| classify(agent, &session)),
        // A Cline-family task's sidecar: its task log, when there is one.
        _ if super::sources::cline::is_cline_family(agent) => {
            super::sources::cline::log_of_sidecar(path)
                .filter(|log| log.is_file())
                .and_then(|log| classify(agent, &log))
        }
        // A file that describes a line transcript's session (its title, folder).
        _ => super::sources::transcript_of_sidecar(agent, path)
            .filter(|t| t.is_file())
            .and_then(|t| classify(agent, &t)),
    })
}

/// A folder live capture watches, with the agent whose transcripts it holds: a source dir
/// (its whole tree), or the folder of a repository that holds an in-repository transcript
/// ([`in_repository`]), watched alone so a repository's tree is never watched.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WatchDir {
    pub agent: Agent,
    pub path: PathBuf,
    pub recursive: bool,
}

/// What live capture watches for a set of [`WatchDir`]s, now. A folder that exists is watched
/// as asked. A folder that does not exist yet (a repository's `.crush` before Crush first runs
/// there, an agent's folder before the agent is installed) is waited for: its nearest existing
/// ancestor is watched alone, never its tree, so the folder's appearance is an event; then the
/// plan is made again ([`WatchPlan::awaits`]) and the folder itself is watched.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WatchPlan {
    /// The folders to watch, each once (recursively when any [`WatchDir`] there asks it).
    pub watch: Vec<(PathBuf, bool)>,
    /// The folders waited for, each with the existing ancestor watched for it.
    pub waiting: Vec<(PathBuf, PathBuf)>,
}

impl WatchPlan {
    /// The plan for `dirs` as the file system is now.
    pub fn new(dirs: &[WatchDir]) -> WatchPlan {
        let mut plan = WatchPlan::default();
        for dir in dirs {
            if dir.path.is_dir() {
                plan.add(&dir.path, dir.recursive);
                continue;
            }
            // The file system's root is never watched: a folder with no other existing
            // ancestor has no home to appear in.
            let ancestor = dir
                .path
                .ancestors()
                .skip(1)
                .filter(|a| !a.as_os_str().is_empty() && a.parent().is_some())
                .find(|a| a.is_dir());
            if let Some(ancestor) = ancestor {
                plan.add(ancestor, false);
                if !plan.waiting.iter().any(|(f, _)| *f == dir.path) {
                    plan.waiting
                        .push((dir.path.clone(), ancestor.to_path_buf()));
                }
            }
        }
        plan
    }

    fn add(&mut self, path: &Path, recursive: bool) {
        match self.watch.iter_mut().find(|(p, _)| p == path) {
            Some((_, r)) => *r |= recursive,
            None => self.watch.push((path.to_path_buf(), recursive)),
        }
    }

    /// Whether `created`, a path that just appeared (created or moved in), is a folder this plan
    /// waits for or one on the way to it: the plan is then due again.
    pub fn awaits(&self, created: &Path) -> bool {
        self.waiting
            .iter()
            .any(|(folder, ancestor)| folder.starts_with(created) && created.starts_with(ancestor))
    }

    /// Whether `gone`, a path that was just removed or moved away, is a folder this plan watches
    /// or one of its ancestors: the watch went with it (a source folder deleted and made again,
    /// a repository's `.crush` cleaned), so the plan is due again and waits for the folder
    /// from its nearest existing ancestor, as for one that never existed.
    pub fn lost(&self, gone: &Path) -> bool {
        self.watch
            .iter()
            .any(|(watched, _)| watched.starts_with(gone))
    }

    /// What changes from this plan to `next`: the watches to drop (an ancestor no longer waited
    /// from, a folder whose mode changed) and the watches to add.
    pub fn changes(&self, next: &WatchPlan) -> (Vec<PathBuf>, Vec<(PathBuf, bool)>) {
        let dropped = self
            .watch
            .iter()
            .filter(|w| !next.watch.contains(w))
            .map(|(p, _)| p.clone())
            .collect();
        let added = next
            .watch
            .iter()
            .filter(|w| !self.watch.contains(w))
            .cloned()
            .collect();
        (dropped, added)
    }
}

/// The transcripts already in a watched folder (those written before its watch began, as when
/// an agent creates its folder and its first file at once), as a sync would find them there:
/// the folder's tree for a recursive [`WatchDir`], else only its own files.
pub fn present(dir: &WatchDir, warnings: &mut Vec<WalkWarning>) -> Vec<FoundFile> {
    let source = SourceDir {
        agent: dir.agent,
        path: dir.path.clone(),
        origin: DirOrigin::Default,
    };
    let mut found = walk(&source, warnings);
    if !dir.recursive {
        found.retain(|f| f.path.parent() == Some(dir.path.as_path()));
    }
    found
}

/// Where an agent that keeps its transcript inside the repository it works in keeps it, below
/// that repository's root: Aider's history, Crush's database. `None` for the other agents.
pub fn in_repository(agent: Agent, root: &Path) -> Option<PathBuf> {
    match agent {
        Agent::Aider => Some(root.join(super::sources::aider::FILE_NAME)),
        Agent::Crush => Some(
            root.join(super::sources::crush::DATA_DIR)
                .join(super::sources::crush::FILE_NAME),
        ),
        _ => None,
    }
}

/// The transcripts of `agent` kept in the repositories at `roots` (those Cairn knows from the
/// sessions it captured): each root's own file ([`in_repository`]), looked at directly, never
/// walked. As in [`walk`], a symlink is followed only to a file inside its repository.
pub fn in_repositories(
    agent: Agent,
    roots: &[PathBuf],
    warnings: &mut Vec<WalkWarning>,
) -> Vec<FoundFile> {
    let mut out = Vec::new();
    for root in roots {
        let Some(path) = in_repository(agent, root) else {
            break;
        };
        let meta = match std::fs::symlink_metadata(&path) {
            Ok(meta) => meta,
            // A repository without the file (or gone) holds none of this agent's; one the
            // OS will not show is said, as a source dir is.
            Err(_) => {
                if let DirAccess::Unreadable(why) = access(&path) {
                    warnings.push(WalkWarning {
                        path: why.blocked.clone(),
                        message: why.message(agent, &path),
                    });
                }
                continue;
            }
        };
        if meta.file_type().is_symlink() {
            if !path.is_file() {
                continue;
            }
            if !holds(root, &path) {
                warnings.push(WalkWarning {
                    path: path.clone(),
                    message: format!(
                        "a symlink to a file outside the repository {}: not read",
                        root.display()
                    ),
                });
                continue;
            }
        } else if !meta.is_file() {
            continue;
        }
        out.extend(classify(agent, &path));
    }
    out
}

/// The sub-agent files that belong to a Claude session transcript (for the hook, which is
/// given only the main transcript path).
pub fn claude_subagent_files(main: &Path) -> Vec<FoundFile> {
    let (Some(dir), Some(stem)) = (main.parent(), main.file_stem()) else {
        return Vec::new();
    };
    let sub = SourceDir {
        agent: Agent::Claude,
        path: dir.join(stem).join("subagents"),
        origin: DirOrigin::Default,
    };
    let mut ignored = Vec::new();
    walk(&sub, &mut ignored)
        .into_iter()
        .filter(|f| f.role == FileRole::Subagent)
        .collect()
}

/// An agent's source dirs: `sub` below the dir its override variable `var` names when that is
/// set (`sub` empty: that dir itself), else each of `defaults` under the home dir.
pub(crate) fn env_or_home(
    env: impl Fn(&str) -> Option<PathBuf>,
    var: &str,
    sub: &str,
    home: Option<&Path>,
    defaults: &[&str],
) -> Vec<(PathBuf, DirOrigin)> {
    match env(var) {
        Some(dir) if sub.is_empty() => vec![(dir, DirOrigin::Env)],
        Some(dir) => vec![(dir.join(sub), DirOrigin::Env)],
        None => home
            .map(|h| {
                defaults
                    .iter()
                    .map(|d| (h.join(d), DirOrigin::Default))
                    .collect()
            })
            .unwrap_or_default(),
    }
}

/// [`env_or_home`] for an agent whose own variable moves its folder: each default
/// `(under home, the agent's variable, under that)` is `$variable/…` when the agent's variable
/// is set (`COPILOT_HOME` for `~/.copilot`), else `~/…`.
pub(crate) fn env_or_agent_home(
    env: impl Fn(&str) -> Option<PathBuf>,
    var: &str,
    sub: &str,
    home: Option<&Path>,
    defaults: &[(&str, &str, &str)],
) -> Vec<(PathBuf, DirOrigin)> {
    if env(var).is_some() {
        return env_or_home(env, var, sub, home, &[]);
    }
    defaults
        .iter()
        .filter_map(|(rel, own, under)| match env(own) {
            Some(dir) => Some((dir.join(under), DirOrigin::Env)),
            None => home.map(|h| (h.join(rel), DirOrigin::Default)),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The agents' own variables for their folders move where Cairn looks, after Cairn's
    /// (AgentsView's) variable and before the home directory.
    #[test]
    fn an_agents_own_folder_variable_moves_its_sessions() {
        use crate::archive::sources::{copilot, kimi, qwen};
        let home = Some(Path::new("/home/ann"));
        let with = |vars: &'static [(&'static str, &'static str)]| {
            move |name: &str| {
                vars.iter()
                    .find(|(k, _)| *k == name)
                    .map(|(_, v)| PathBuf::from(v))
            }
        };
        let places = |found: Vec<(PathBuf, DirOrigin)>| -> Vec<String> {
            found
                .into_iter()
                .map(|(p, o)| format!("{} {o:?}", p.display()))
                .collect()
        };
        assert_eq!(
            places(copilot::locations(with(&[]), home)),
            ["/home/ann/.copilot/session-state Default"]
        );
        assert_eq!(
            places(copilot::locations(with(&[("COPILOT_HOME", "/c")]), home)),
            ["/c/session-state Env"]
        );
        assert_eq!(
            places(copilot::locations(
                with(&[("COPILOT_HOME", "/c"), ("COPILOT_DIR", "/d")]),
                home
            )),
            ["/d/session-state Env"]
        );
        assert_eq!(
            places(kimi::locations(with(&[("KIMI_SHARE_DIR", "/k")]), home)),
            ["/home/ann/.kimi-code/sessions Default", "/k/sessions Env"]
        );
        assert_eq!(
            places(qwen::locations(with(&[("QWEN_HOME", "/q")]), home)),
            ["/q/projects Env"]
        );
        assert_eq!(
            places(qwen::locations(
                with(&[("QWEN_HOME", "/q"), ("QWEN_RUNTIME_DIR", "/r")]),
                home
            )),
            ["/r/projects Env"]
        );
        assert_eq!(
            places(qwen::locations(with(&[]), home)),
            ["/home/ann/.qwen/projects Default"]
        );
    }

    /// What the OS says of a source dir decides what is said of it: "no such file" is an agent
    /// not used here; permission denied, on the dir or on a folder on its way, is a folder whose
    /// transcripts cannot be read, named where it is blocked, with the fix. The answers are
    /// given here (as root, a folder of mode 000 reads as any other); `an_unreadable_*` in
    /// tests/cli runs the same as a user the OS refuses.
    #[test]
    fn a_folder_the_os_will_not_show_is_not_taken_for_a_missing_one() {
        use std::io::{Error, ErrorKind};
        let claude = Path::new("/home/ann/.claude");
        let projects = claude.join("projects");
        // `~/.claude` of mode 000: its children cannot be looked at, it can.
        let locked_parent = |p: &Path| {
            if p.starts_with(claude) && p != claude {
                Err(Error::from(ErrorKind::PermissionDenied))
            } else {
                Ok(true)
            }
        };
        let listed = |_: &Path| Ok(());
        let DirAccess::Unreadable(why) = access_with(&projects, &locked_parent, &listed) else {
            panic!("a folder behind a locked one read as readable or absent");
        };
        assert_eq!(why.blocked, claude);
        assert!(why.denied);
        let ann = Some(Path::new("/home/ann"));
        let said = why.message_for(Agent::Claude, &projects, ann);
        assert!(
            said.contains("cannot read /home/ann/.claude/projects")
                && said.contains("blocked at /home/ann/.claude")
                && said.contains("not captured")
                && said.contains("sudo chown -R $USER '/home/ann/.claude'"),
            "{said}"
        );

        // The dir itself cannot be listed (`~/.codex/sessions` of mode 000).
        let sessions = Path::new("/home/ann/.codex/sessions");
        let refused = |_: &Path| Err(Error::from(ErrorKind::PermissionDenied));
        let DirAccess::Unreadable(why) = access_with(sessions, &|_| Ok(true), &refused) else {
            panic!("a folder that cannot be listed read as readable or absent");
        };
        assert_eq!(why.blocked, sessions);
        let said = why.message_for(Agent::Codex, sessions, ann);
        assert!(!said.contains("blocked at"), "{said}");
        assert!(
            said.contains("sudo chown -R $USER '/home/ann/.codex/sessions'"),
            "{said}"
        );

        // Another error names the first place that cannot be looked at, without the
        // permission fix.
        let looped = |p: &Path| {
            if p.starts_with(claude) {
                Err(Error::other("too many levels of symbolic links"))
            } else {
                Ok(true)
            }
        };
        let DirAccess::Unreadable(why) = access_with(&projects, &looped, &listed) else {
            panic!("an error read as readable or absent");
        };
        assert_eq!((why.blocked.as_path(), why.denied), (claude, false));
        assert!(!why.message(Agent::Claude, &projects).contains("chown"));

        // Missing, or below a file: absent. There and listable: a folder; a file: a file.
        let missing = |_: &Path| Err(Error::from(ErrorKind::NotFound));
        assert_eq!(access_with(&projects, &missing, &listed), DirAccess::Absent);
        let below_file = |_: &Path| Err(Error::from(ErrorKind::NotADirectory));
        assert_eq!(
            access_with(&projects, &below_file, &listed),
            DirAccess::Absent
        );
        assert_eq!(
            access_with(&projects, &|_| Ok(true), &listed),
            DirAccess::Dir
        );
        assert_eq!(
            access_with(&projects, &|_| Ok(false), &listed),
            DirAccess::File
        );
    }

    /// The owner command names the folder that refuses only where giving it to the user is
    /// the fix: inside their home. A folder of the agent's elsewhere (`CLAUDE_CONFIG_DIR=
    /// /srv/claude`) gets it offered for that folder, if it is theirs; a system folder or a
    /// home on the way (`/root`, `/srv`, another user's) is never named in a `chown`.
    #[test]
    fn the_owner_command_fits_where_the_folder_is() {
        let ann = Some(Path::new("/home/ann"));
        let refused = |blocked: &str| Unreadable {
            blocked: PathBuf::from(blocked),
            denied: true,
            error: "permission denied".into(),
        };
        let said = |blocked: &str, path: &str| {
            refused(blocked).message_for(Agent::Claude, Path::new(path), ann)
        };
        // Outside the home: the agent's own folder, offered if it is the user's.
        let srv = said("/srv/claude", "/srv/claude/projects");
        assert!(
            srv.contains("blocked at /srv/claude")
                && srv.contains("outside your home folder")
                && srv.contains("sudo chown -R $USER '/srv/claude'")
                && !srv.contains("give it back"),
            "{srv}"
        );
        // A system folder or a home on the way: never given away.
        for (blocked, path) in [
            ("/root", "/root/.claude/projects"),
            ("/srv", "/srv/claude/projects"),
            ("/home/bob", "/home/bob/.claude/projects"),
            ("/home", "/home/bob/.claude/projects"),
            ("/", "/claude/projects"),
        ] {
            let s = said(blocked, path);
            assert!(
                !s.contains("chown") && s.contains("run cairn as the user who can read"),
                "{blocked}: {s}"
            );
        }
        // Without a home known, a folder elsewhere is still offered only as "if it is yours".
        let none = refused("/srv/claude").message_for(
            Agent::Claude,
            Path::new("/srv/claude/projects"),
            None,
        );
        assert!(none.contains("if the folder is yours"), "{none}");
        // Inside the home: given back.
        let home = said("/home/ann/.claude", "/home/ann/.claude/projects");
        assert!(
            home.contains("give it back to your user: `sudo chown -R $USER '/home/ann/.claude'`"),
            "{home}"
        );
    }

    #[test]
    fn classifies_claude_layout() {
        let main = classify(Agent::Claude, Path::new("/p/-home-x/abc.jsonl")).unwrap();
        assert_eq!(main.role, FileRole::Main);
        let sub = classify(
            Agent::Claude,
            Path::new("/p/-home-x/abc/subagents/agent-a1.jsonl"),
        )
        .unwrap();
        assert_eq!(sub.role, FileRole::Subagent);
        assert_eq!(sub.parent_hint.as_deref(), Some("abc"));
        assert_eq!(sub.agent_id.as_deref(), Some("a1"));
        let wf = classify(
            Agent::Claude,
            Path::new("/p/x/abc/subagents/workflows/w/agent-b.jsonl"),
        )
        .unwrap();
        assert_eq!(wf.parent_hint.as_deref(), Some("abc"));
        assert!(
            classify(
                Agent::Claude,
                Path::new("/p/x/abc/subagents/workflows/w/journal.jsonl")
            )
            .is_none()
        );
        // Beside the session files (2.0-era builds): its parent comes from its lines.
        let beside = classify(Agent::Claude, Path::new("/p/-home-x/agent-c2.jsonl")).unwrap();
        assert_eq!(
            (beside.role, beside.agent_id.as_deref(), beside.parent_hint),
            (FileRole::Subagent, Some("c2"), None)
        );
    }

    /// A repository's `.crush` that appears after the watch began: first its repository is
    /// watched alone for it, then the folder itself, and what Crush wrote there before the
    /// folder's own watch began is found. An agent's folder two levels down moves the waiting
    /// ancestor down as each level appears.
    #[test]
    fn a_folder_that_does_not_exist_yet_is_waited_for_from_its_nearest_ancestor() {
        let tmp = tempfile::tempdir().unwrap();
        let repo = tmp.path().join("repo");
        std::fs::create_dir_all(&repo).unwrap();
        let crush = WatchDir {
            agent: Agent::Crush,
            path: repo.join(".crush"),
            recursive: false,
        };
        let gemini = WatchDir {
            agent: Agent::Gemini,
            path: tmp.path().join("home/.gemini/tmp"),
            recursive: true,
        };
        let claude = WatchDir {
            agent: Agent::Claude,
            path: tmp.path().join("claude"),
            recursive: true,
        };
        std::fs::create_dir_all(&claude.path).unwrap();
        let dirs = [crush.clone(), gemini.clone(), claude.clone()];

        let before = WatchPlan::new(&dirs);
        assert_eq!(
            before.watch,
            [
                (repo.clone(), false),
                (tmp.path().to_path_buf(), false),
                (claude.path.clone(), true)
            ]
        );
        assert_eq!(
            before.waiting,
            [
                (crush.path.clone(), repo.clone()),
                (gemini.path.clone(), tmp.path().to_path_buf())
            ]
        );
        assert!(before.awaits(&crush.path));
        assert!(before.awaits(&tmp.path().join("home")));
        // Anything else that appears beside them is not waited for.
        assert!(!before.awaits(&repo.join("src")));
        assert!(!before.awaits(&claude.path.join("p")));

        // Crush starts in the repository: the folder and its database at once.
        std::fs::create_dir_all(&crush.path).unwrap();
        std::fs::write(
            crush.path.join(super::super::sources::crush::FILE_NAME),
            b"",
        )
        .unwrap();
        let after = WatchPlan::new(&dirs);
        let (dropped, added) = before.changes(&after);
        assert_eq!(
            dropped,
            std::slice::from_ref(&repo),
            "the repository is no longer watched for it"
        );
        assert_eq!(added, [(crush.path.clone(), false)]);
        let mut warnings = Vec::new();
        let found = present(&crush, &mut warnings);
        assert_eq!(
            found.iter().map(|f| f.path.clone()).collect::<Vec<_>>(),
            [crush.path.join(super::super::sources::crush::FILE_NAME)]
        );
        assert!(warnings.is_empty(), "{warnings:?}");

        // Gemini: `home` appears, then `.gemini`, then `tmp`.
        std::fs::create_dir_all(tmp.path().join("home/.gemini")).unwrap();
        let step = WatchPlan::new(&dirs);
        assert_eq!(
            step.waiting,
            [(gemini.path.clone(), tmp.path().join("home/.gemini"))]
        );
        assert!(step.awaits(&gemini.path));
        std::fs::create_dir_all(&gemini.path).unwrap();
        let done = WatchPlan::new(&dirs);
        assert!(done.waiting.is_empty());
        let (dropped, added) = step.changes(&done);
        assert_eq!(dropped, [tmp.path().join("home/.gemini")]);
        assert_eq!(added, [(gemini.path.clone(), true)]);

        // A watched folder deleted (or an ancestor of one) is lost; a folder inside a watched
        // tree, or beside it, is not.
        assert!(done.lost(&claude.path));
        assert!(done.lost(&tmp.path().join("home")));
        assert!(!done.lost(&claude.path.join("p")));
        assert!(!done.lost(&tmp.path().join("elsewhere")));
        // Deleted: the new plan waits for it from its parent and drops its watch; made again,
        // that wait is what brings it back.
        std::fs::remove_dir_all(&claude.path).unwrap();
        let gone = WatchPlan::new(&dirs);
        assert!(
            gone.waiting
                .contains(&(claude.path.clone(), tmp.path().to_path_buf()))
        );
        let (dropped, _) = done.changes(&gone);
        assert_eq!(dropped, std::slice::from_ref(&claude.path));
        assert!(gone.awaits(&claude.path));
        std::fs::create_dir_all(&claude.path).unwrap();
        let back = WatchPlan::new(&dirs);
        assert_eq!(back, done, "watched as before");
    }

    #[test]
    fn walks_without_following_directory_symlink_loops() {
        let dir = tempfile::tempdir().unwrap();
        let proj = dir.path().join("proj");
        std::fs::create_dir_all(&proj).unwrap();
        std::fs::write(proj.join("s1.jsonl"), "{}\n").unwrap();
        #[cfg(unix)]
        std::os::unix::fs::symlink(dir.path(), proj.join("loop")).unwrap();
        let sd = SourceDir {
            agent: Agent::Claude,
            path: dir.path().to_owned(),
            origin: DirOrigin::Env,
        };
        let mut warnings = Vec::new();
        let files = walk(&sd, &mut warnings);
        assert_eq!(files.len(), 1);
        assert!(warnings.is_empty(), "{warnings:?}");
    }

    /// A link to a folder elsewhere holding transcripts is not entered, and said; one to a
    /// folder holding none (gptme's `workspace` link to a project) is passed over quietly.
    #[cfg(unix)]
    #[test]
    fn a_linked_folder_of_transcripts_is_said_not_read() {
        let dir = tempfile::tempdir().unwrap();
        let projects = dir.path().join("projects");
        let moved = dir.path().join("elsewhere/-tmp-b");
        let project = dir.path().join("code");
        for d in [&projects, &moved, &project] {
            std::fs::create_dir_all(d).unwrap();
        }
        std::fs::write(moved.join("s1.jsonl"), "{}\n").unwrap();
        std::fs::write(project.join("main.rs"), "fn main() {}\n").unwrap();
        std::os::unix::fs::symlink(&moved, projects.join("-tmp-b")).unwrap();
        std::os::unix::fs::symlink(&project, projects.join("workspace")).unwrap();
        let sd = SourceDir {
            agent: Agent::Claude,
            path: projects.clone(),
            origin: DirOrigin::Env,
        };
        let mut warnings = Vec::new();
        assert!(walk(&sd, &mut warnings).is_empty());
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert_eq!(warnings[0].path, projects.join("-tmp-b"));
        assert!(
            warnings[0].message.contains("not read") && warnings[0].message.contains("source dir"),
            "{}",
            warnings[0].message
        );
    }
}

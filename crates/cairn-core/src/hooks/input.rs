//! What a hook is given: the agent's JSON on stdin, and the transcript path in it, which is read
//! only when it is a regular file inside that agent's source dirs ([`accept_transcript`]).

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::archive::discover::FoundFile;
use crate::archive::sources::FileRole;
use crate::archive::{Agent, discover, recognise};
use crate::config::Config;
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
        Self::parse_for(input, None)
    }

    /// [`HookInput::parse`] for the hook of `agent` (from `--agent`, or recognised from the
    /// environment the agent runs its hooks in): input that is no payload is refused saying
    /// what was expected and how to check the installed hook, since whoever reads the error
    /// ran `cairn hook` by hand or wired it to the wrong event.
    pub fn parse_for(input: &str, agent: Option<Agent>) -> Result<HookInput> {
        let payload: Value = serde_json::from_str(input)
            .map_err(|e| not_a_payload(&json_fault(input, &e), agent))?;
        // Read as a payload what is one; anything else is said, not taken for "nothing to
        // capture" (a hook wired to the wrong command, a payload of another shape).
        let Some(fields) = payload.as_object() else {
            return Err(not_a_payload("it is not a JSON object", agent));
        };
        for name in ["transcript_path", "cwd"] {
            if fields
                .get(name)
                .is_some_and(|v| !v.is_string() && !v.is_null())
            {
                return Err(Error::Invalid(format!(
                    "failed to parse agent hook input: `{name}` is not a string"
                )));
            }
        }
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

    /// The transcript the payload names (`transcript_path`), a relative one joined to the
    /// payload's `cwd`, else to `base_dir`; `None` when it names none (nothing to do).
    pub(crate) fn transcript(&self, base_dir: &Path) -> Option<PathBuf> {
        let field = |name: &str| {
            self.payload
                .get(name)
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
        };
        let transcript = field("transcript_path")?;
        let base = field("cwd").map_or_else(|| base_dir.to_owned(), PathBuf::from);
        Some(base.join(transcript))
    }
}

/// What is wrong with hook input that does not parse as JSON, in words (serde's "expected
/// ident at line 1 column 2" names a grammar rule, not the problem).
fn json_fault(input: &str, e: &serde_json::Error) -> String {
    use serde_json::error::Category;
    let at = format!("line {} column {}", e.line(), e.column());
    match e.classify() {
        Category::Eof if input.trim().is_empty() => "stdin was empty".to_owned(),
        Category::Eof => format!("the JSON on stdin ends too soon ({at})"),
        _ => format!("stdin is not JSON ({at})"),
    }
}

/// Hook input refused as no agent's payload (`what`: why), saying what `cairn hook` reads, for
/// which agent, and how to check and put back that agent's hook.
fn not_a_payload(what: &str, agent: Option<Agent>) -> Error {
    let (command, sender, check) = match agent {
        Some(a) => (
            format!("cairn hook --agent {a}"),
            format!("{a} sends"),
            format!(
                "`cairn doctor` checks {a}'s installed hook and `cairn hooks install --agent {a}` puts it back"
            ),
        ),
        None => (
            "cairn hook".to_owned(),
            "an agent sends".to_owned(),
            "`cairn doctor` checks the agents' installed hooks and `cairn hooks install --agent <agent>` puts one back".to_owned(),
        ),
    };
    Error::Invalid(format!(
        "failed to parse agent hook input: {what}; `{command}` reads the JSON object {sender} its \
         hooks on stdin at each event (`hook_event_name`, `transcript_path`, `cwd`), so the \
         agent runs it, not a person; {check}"
    ))
}

/// What a hook captures for an accepted transcript `path` of `agent`: the file itself, and for
/// a Claude session its sub-agents' files, held to the same rule (`subagents/` could be a
/// symlink out of the source dirs).
pub(crate) fn files_to_capture(config: &Config, agent: Agent, path: &Path) -> Vec<FoundFile> {
    let mut files: Vec<FoundFile> = discover::classify(agent, path).into_iter().collect();
    if files.is_empty() {
        files.push(FoundFile {
            agent,
            role: FileRole::Main,
            path: path.to_owned(),
            parent_hint: None,
            agent_id: None,
        });
    }
    if agent == Agent::Claude && files[0].role == FileRole::Main {
        let dirs = discover::source_dirs(config, agent);
        files.extend(
            discover::claude_subagent_files(path)
                .into_iter()
                .filter(|f| dirs.iter().any(|d| discover::holds(&d.path, &f.path))),
        );
    }
    files
}

/// The transcript a hook payload names (`path`, joined to the payload's `cwd` already), if Cairn
/// may read it: with every symlink and `..` resolved, a regular `*.jsonl` file inside the source
/// dirs (configured or default, [`discover::source_dirs`]) of `agent`, or of the one agent whose
/// dirs hold it when none is given. Returns the agent and the resolved path.
///
/// Anything else is [`Error::HookRefused`], before a byte of it is read: a symlink or `..` path
/// to a file elsewhere (`~/.ssh/id_ed25519`, another user's transcript), a fifo or a device (a
/// read that never ends), a directory, a missing file.
pub fn accept_transcript(
    config: &Config,
    path: &Path,
    agent: Option<Agent>,
) -> Result<(Agent, PathBuf)> {
    let refuse = |reason: String| Error::HookRefused {
        path: path.to_owned(),
        reason,
    };
    let resolved =
        std::fs::canonicalize(path).map_err(|e| refuse(format!("cannot resolve it ({e})")))?;
    let meta = std::fs::metadata(&resolved).map_err(|e| refuse(format!("cannot read it ({e})")))?;
    if !meta.is_file() {
        return Err(refuse(format!(
            "{} is not a regular file",
            resolved.display()
        )));
    }
    if resolved.extension().is_none_or(|e| e != "jsonl") {
        return Err(refuse(format!(
            "{} is not a .jsonl transcript",
            resolved.display()
        )));
    }
    let agents: Vec<Agent> = match agent {
        Some(a) => vec![a],
        None => Agent::ALL.to_vec(),
    };
    let holders: Vec<Agent> = agents
        .iter()
        .copied()
        .filter(|a| {
            discover::source_dirs(config, *a)
                .iter()
                .any(|d| discover::holds(&d.path, &resolved))
        })
        .collect();
    match holders.as_slice() {
        [one] => Ok((*one, resolved)),
        [] => {
            let dirs: Vec<String> = agents
                .iter()
                .flat_map(|a| discover::source_dirs(config, *a))
                .map(|d| format!("{} ({})", d.path.display(), d.agent))
                .collect();
            Err(refuse(format!(
                "{} is outside the source dirs Cairn reads ({}); to capture transcripts kept elsewhere, add their directory to `[sources.<agent>] dirs` in config.toml",
                resolved.display(),
                if dirs.is_empty() {
                    "none".to_owned()
                } else {
                    dirs.join(", ")
                }
            )))
        }
        // One source dir shared by both agents: the path or the first line tells.
        _ => recognise::of_file(&resolved)
            .filter(|a| holders.contains(a))
            .map(|a| (a, resolved.clone()))
            .ok_or_else(|| {
                Error::Invalid(format!(
                    "agent is required for {}: pass --agent claude|codex",
                    resolved.display()
                ))
            }),
    }
}

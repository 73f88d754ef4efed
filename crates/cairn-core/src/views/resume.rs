//! `cairn resume`: the command that continues a session in its own agent, in the folder it ran
//! in, as each agent documents it. Cairn prints it; it runs it only when asked, never through a
//! shell, and only as the argument list below.
//!
//! | agent | command | documented by |
//! |---|---|---|
//! | claude | `claude --resume <id>` | Claude Code CLI reference |
//! | codex | `codex resume <id>` | Codex CLI |
//! | traex | `traex resume <id>` | TRAE CLI, a Codex fork (as AgentsView resumes it) |
//! | gemini | `gemini --resume <id>` | Gemini CLI, session management |
//! | copilot | `copilot --resume <id>` | Copilot CLI |
//! | qwen | `qwen --resume <id>` | Qwen Code, `--resume` |
//! | droid | `droid --resume <id>` | Factory CLI reference |
//! | kimi | `kimi --session <id>` | Kimi Code CLI, sessions |
//! | cursor (CLI) | `cursor-agent --resume <id>` | Cursor CLI parameters |
//! | cursor (editor chat) | none: open the folder in Cursor, pick the chat from its history | |
//! | opencode | `opencode --session <id>` | OpenCode CLI, TUI flags |
//! | aider | `aider --restore-chat-history` (the folder's history, not one session) | aider options |
//! | crush | none: no documented flag reopens one session by id | |
//! | cline, roo, kilo | none: VS Code extensions reopen a task from their history panel | |
//! | kiro | none: `kiro-cli chat --resume` takes a folder's latest conversation, not one by id | |
//! | atif | none: an imported trajectory has no agent here to continue it | |
//!
//! Where there is no command, `problem` says what to do instead; no command is ever offered
//! that could not reopen the session.

use serde::{Deserialize, Serialize};

use crate::archive::Agent;
use crate::archive::store::SessionDetail;

/// How to continue one session in its agent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct ResumeCommand {
    pub session_key: String,
    pub agent: Agent,
    /// The program and its arguments; empty when the session cannot be resumed.
    pub argv: Vec<String>,
    /// The folder to run it in (the session's cwd), when the transcript named one.
    pub cwd: Option<String>,
    /// Whether that folder exists on this machine now.
    pub cwd_exists: bool,
    /// One line to paste into a shell: `cd '<cwd>' && <command>`, every part quoted.
    pub shell: Option<String>,
    /// Why the session cannot be resumed (as is, or at all); none when it can.
    pub problem: Option<String>,
}

impl ResumeCommand {
    /// Whether the command can run here as it is.
    pub fn runnable(&self) -> bool {
        !self.argv.is_empty() && self.problem.is_none()
    }
}

/// The command that resumes `s`, and what stands in its way.
pub fn resume_command(s: &SessionDetail) -> ResumeCommand {
    let cwd = s.cwd.clone().filter(|c| !c.is_empty());
    let cwd_exists = cwd
        .as_deref()
        .is_some_and(|c| c.starts_with('/') && std::path::Path::new(c).is_dir());
    let id = s.session_id.as_deref().filter(|id| usable_id(id));
    let mut problem = no_command(s);
    let argv: Vec<String> = match (s.agent, id) {
        _ if problem.is_some() => Vec::new(),
        (Agent::Aider, _) => argv(&["aider", "--restore-chat-history"]),
        (_, None) => {
            problem = Some(match &s.session_id {
                Some(_) => "its session id does not look like one (control or invisible characters, white space, a leading '-' or over 256 characters), so Cairn will not pass it to the agent".to_owned(),
                None => "the transcript names no session id to resume".to_owned(),
            });
            Vec::new()
        }
        (agent, Some(id)) => match recipe(agent) {
            Some((program, flag)) => vec![program.to_owned(), flag.to_owned(), id.to_owned()],
            None => Vec::new(),
        },
    };
    if problem.is_none() && s.relation.as_deref() == Some("subagent") {
        problem = Some(
            "this is a sub-agent's session, which its agent resumes only through its parent session"
                .to_owned(),
        );
    }
    // The printed line must be what `--run` runs: a folder whose name holds what a reader does
    // not see (a zero-width space, a line break) would print as another folder's name, and a
    // relative one (`-P`) as an option of `cd`.
    let carried = cwd.as_deref().is_none_or(|c| {
        c.starts_with('/') && crate::text::unseen(c).is_empty() && !c.contains(['\n', '\t'])
    });
    if problem.is_none() && !argv.is_empty() && cwd_exists && !carried {
        problem = Some(format!(
            "the name of the folder it ran in, {}, holds characters a command line cannot show; open that folder yourself",
            crate::text::one_line(cwd.as_deref().unwrap_or_default(), 200)
        ));
    }
    if problem.is_none() && !argv.is_empty() && !cwd_exists {
        problem = Some(match &cwd {
            Some(c) => format!(
                "the folder it ran in, {}, is gone from this machine: make it again at that path (a clone of the project), then resume (agents find a session by the folder it ran in)",
                crate::text::one_line(c, 200)
            ),
            None => "the transcript names no folder it ran in".to_owned(),
        });
    }
    let shell = (!argv.is_empty() && carried).then(|| {
        let command = argv.iter().map(|a| quote(a)).collect::<Vec<_>>().join(" ");
        match &cwd {
            Some(c) => format!("cd {} && {command}", quote(c)),
            None => command,
        }
    });
    ResumeCommand {
        session_key: s.session_key.clone(),
        agent: s.agent,
        argv,
        cwd,
        cwd_exists,
        shell,
        problem,
    }
}

/// Why the agent cannot resume `s` though it has a command for it: the transcript it resumes
/// from, among `files` (where the session was read from), is gone from this machine (the
/// agent cleaned it up, or it moved). None while one of them is there, or when Cairn read
/// none (then it cannot tell).
pub fn transcript_gone(s: &SessionDetail, files: &[String]) -> Option<String> {
    // A database's session is named `<file>#<session>`-like by some sources: its file counts.
    // A path kept sealed names no file to look for: not said gone.
    let there = |f: &String| {
        let p = std::path::Path::new(f);
        crate::archive::store::is_sealed(f)
            || p.exists()
            || f.rsplit_once('#')
                .is_some_and(|(file, _)| std::path::Path::new(file).exists())
    };
    if files.is_empty() || files.iter().any(there) {
        return None;
    }
    Some(format!(
        "its transcript, {}, is gone from this machine (the agent cleaned it up, or it moved), so {} has nothing to resume; what Cairn kept of it is in `cairn show` and `cairn export`",
        crate::text::one_line(&files[0], 200),
        s.agent
    ))
}

/// Why a teammate's session pulled here (`publish --full`, then `cairn pull`) cannot be
/// resumed: it ran on their machine, and is here as its trajectory only.
pub fn pulled(by: &crate::archive::store::PublishedBy) -> String {
    format!(
        "it is a teammate's session, pulled from {} and published by {}: it ran on their machine, so no agent here can continue it; `cairn show` reads it, and its publisher can resume it",
        crate::text::one_line(&by.pulled_from, 80),
        crate::text::one_line(&by.publisher, 100)
    )
}

/// Why no command resumes `s`, and what to do instead; none when its agent has a command.
fn no_command(s: &SessionDetail) -> Option<String> {
    let place = match s.cwd.as_deref().filter(|c| !c.is_empty()) {
        Some(c) => format!("open {} in", crate::text::one_line(c, 200)),
        None => "open the project in".to_owned(),
    };
    // A name no agent of this build has: a newer Cairn's agent, or a foreign trajectory's.
    if s.agent == Agent::Atif
        && let Some(name) = s.ran_by.as_deref().filter(|n| Agent::parse(n).is_none())
    {
        return Some(format!(
            "this build of Cairn has no command for {name}: the session was imported as a trajectory, or captured by a newer Cairn that reads {name} (update Cairn to resume it there)"
        ));
    }
    Some(match s.agent {
        Agent::Atif => {
            "an imported ATIF trajectory has no agent on this machine to continue it".to_owned()
        }
        Agent::Cursor if s.thread_source.as_deref() == Some("ide") => format!(
            "a chat in the Cursor editor has no command that reopens it (cursor-agent resumes only its own chats): {place} Cursor and pick the chat from its chat history"
        ),
        Agent::Cline | Agent::Roo | Agent::Kilo => {
            let name = match s.agent {
                Agent::Cline => "Cline",
                Agent::Roo => "Roo Code",
                _ => "Kilo Code",
            };
            format!(
                "{name} runs inside VS Code and has no command that reopens a task: {place} VS Code and reopen the task from {name}'s task history"
            )
        }
        Agent::Crush => format!(
            "Crush has no flag that reopens one session: {} and pick the session from Crush's session list",
            run_in(s, "crush")
        ),
        Agent::Kiro => format!(
            "kiro-cli reopens only a folder's most recent conversation, not one by id: {} to continue that one",
            run_in(s, "kiro-cli chat --resume")
        ),
        // Agents that reopen a session from their own list of them, which Cairn cannot name.
        Agent::Pi => from_picker(s, "Pi", "pi --resume"),
        Agent::Iflow => from_picker(s, "iFlow", "iflow --resume"),
        Agent::Vibe => from_picker(s, "Vibe", "vibe"),
        Agent::Antigravity => from_picker(s, "Antigravity", "agy"),
        Agent::Hermes => from_picker(s, "Hermes", "hermes"),
        Agent::Grok => from_picker(s, "Grok", "grok"),
        Agent::Posit => format!(
            "Posit Assistant runs inside RStudio or Positron and has no command that reopens a conversation: {} there and pick the conversation from the assistant's history",
            match s.cwd.as_deref().filter(|c| !c.is_empty()) {
                Some(c) => format!("open {}", crate::text::one_line(c, 200)),
                None => "open the project it worked in".to_owned(),
            }
        ),
        Agent::Gptme => format!(
            "Cairn knows no gptme command that reopens one conversation by its id: {} and continue it from gptme's own list of conversations",
            run_in(s, "gptme")
        ),
        Agent::Vscopilot => {
            "a Copilot conversation in Visual Studio has no command that reopens it: open the solution in Visual Studio and pick the thread from Copilot Chat's history"
                .to_owned()
        }
        Agent::Qwenpaw => {
            "a QwenPaw session goes on in the console or chat channel it belongs to: continue it there"
                .to_owned()
        }
        Agent::Openclaw => {
            "an OpenClaw session goes on in the chat or channel it belongs to: continue it there"
                .to_owned()
        }
        _ => return None,
    })
}

/// What to do for an agent that reopens a session only from its own list of them.
fn from_picker(s: &SessionDetail, agent: &str, command: &str) -> String {
    format!(
        "{agent} has no command Cairn knows that reopens one session by its id: {} and pick this one from its sessions",
        run_in(s, command)
    )
}

/// "run `<command>` in <folder>" (or "in its folder" when the transcript names none).
fn run_in(s: &SessionDetail, command: &str) -> String {
    match s.cwd.as_deref().filter(|c| !c.is_empty()) {
        Some(c) => format!("run `{command}` in {}", crate::text::one_line(c, 200)),
        None => format!("run `{command}` in the folder it ran in"),
    }
}

fn argv(parts: &[&str]) -> Vec<String> {
    parts.iter().map(|p| (*p).to_owned()).collect()
}

/// The program, and the argument before the session id, of agents that resume one session.
fn recipe(agent: Agent) -> Option<(&'static str, &'static str)> {
    Some(match agent {
        Agent::Claude => ("claude", "--resume"),
        Agent::Codex => ("codex", "resume"),
        Agent::Traex => ("traex", "resume"),
        Agent::Gemini => ("gemini", "--resume"),
        Agent::Copilot => ("copilot", "--resume"),
        Agent::Qwen => ("qwen", "--resume"),
        Agent::Droid => ("droid", "--resume"),
        Agent::Kimi => ("kimi", "--session"),
        // The CLI's chats; an editor chat has none (`no_command`).
        Agent::Cursor => ("cursor-agent", "--resume"),
        // OpenCode's TUI: `-s, --session <id>`, the session id to continue.
        Agent::Opencode => ("opencode", "--session"),
        // Said by `no_command`, and Aider's is not by id.
        Agent::Aider
        | Agent::Crush
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
        | Agent::Gptme
        | Agent::Posit
        | Agent::Qwenpaw
        | Agent::Vscopilot => return None,
    })
}

/// An id an agent's command line may take as its argument: printable, no white space, not an
/// option (a leading `-`), at most 256 characters.
fn usable_id(id: &str) -> bool {
    !id.is_empty()
        && !id.starts_with('-')
        && id.chars().count() <= 256
        && !id.chars().any(|c| c.is_control() || c.is_whitespace())
        // Nothing a reader does not see: the id printed is the id passed.
        && crate::text::unseen(id).is_empty()
}

/// `text` as one POSIX shell word: single-quoted unless it is plainly safe, control characters
/// dropped (they cannot be pasted safely).
fn quote(text: &str) -> String {
    let text = crate::text::printable(text).replace(['\n', '\t'], " ");
    let plain = !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./:=@%+,".contains(c));
    if plain {
        text
    } else {
        format!("'{}'", text.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_are_quoted_for_a_shell() {
        assert_eq!(quote("abc-123"), "abc-123");
        assert_eq!(quote("/home/a b"), "'/home/a b'");
        assert_eq!(quote("it's"), r"'it'\''s'");
        assert_eq!(quote("$(rm -rf ~)"), "'$(rm -rf ~)'");
        assert_eq!(quote("a\u{1b}[2Jb"), "ab");
        assert_eq!(quote(""), "''");
    }

    #[test]
    fn ids_that_could_be_options_or_tricks_are_not_used() {
        for bad in [
            "",
            "--dangerously-skip-permissions",
            "a b",
            "a\nb",
            "x\u{202e}y",
            // Printed without it, passed with it (found by a hostile run).
            "rm-id\u{200b}",
            "a\u{200d}b",
        ] {
            assert!(!usable_id(bad), "{bad:?}");
        }
        assert!(!usable_id(&"a".repeat(257)));
        assert!(usable_id("55604662-cf2a-4331-851a-ec234028f8ca"));
    }

    /// The line printed is the line `--run` runs: a folder whose name a reader cannot see whole
    /// (a zero-width space, a line break) or that reads as an option (`-P`) gets no line, and
    /// says why (`cd '…/nl b'` was printed for `…/nl\nb`, another folder).
    #[test]
    fn a_folder_a_command_line_cannot_carry_gets_no_line() {
        let tmp = tempfile::tempdir().unwrap();
        for name in ["nl\nb", "zw\u{200b}dir", "tab\tdir"] {
            let dir = tmp.path().join(name);
            std::fs::create_dir_all(&dir).unwrap();
            let mut s = session(Agent::Claude, None);
            s.cwd = Some(dir.to_string_lossy().into_owned());
            let r = resume_command(&s);
            assert_eq!(r.shell, None, "{name:?}");
            assert!(
                r.problem
                    .as_deref()
                    .is_some_and(|p| p.contains("cannot show")),
                "{name:?}: {r:?}"
            );
        }
        for relative in ["-P", "-"] {
            let mut s = session(Agent::Claude, None);
            s.cwd = Some(relative.into());
            let r = resume_command(&s);
            assert_eq!(r.shell, None, "{relative}");
            assert!(r.problem.is_some());
        }
        let r = resume_command(&session(Agent::Claude, None));
        assert_eq!(r.shell.as_deref(), Some("cd / && claude --resume abc-123"));
    }

    fn session(agent: Agent, thread_source: Option<&str>) -> SessionDetail {
        SessionDetail {
            session_key: "sha256-k".into(),
            agent,
            ran_by: None,
            session_id: Some("abc-123".into()),
            relation: None,
            parent_key: None,
            title: None,
            project: None,
            // A folder that exists here, so only the agent decides.
            cwd: Some("/".into()),
            git_branch: None,
            git_commit: None,
            model: None,
            provider: None,
            tool_version: None,
            thread_source: thread_source.map(str::to_owned),
            started_at: None,
            updated_at: None,
            turn_count: 1,
            record_count: 2,
            kinds: Default::default(),
            tools: Default::default(),
            edited_paths: Vec::new(),
            tokens: Default::default(),
            unknown_types: Default::default(),
            secrets_redacted: 0,
            warnings: Vec::new(),
            subagents: Vec::new(),
        }
    }

    #[test]
    fn every_agent_gets_its_documented_command_or_says_what_to_do_instead() {
        let by_id = |p: &str, f: &str| Some(vec![p.to_owned(), f.to_owned(), "abc-123".to_owned()]);
        for agent in Agent::EVERY {
            let r = resume_command(&session(agent, Some("cli")));
            let expected = match agent {
                Agent::Claude => by_id("claude", "--resume"),
                Agent::Codex => by_id("codex", "resume"),
                Agent::Traex => by_id("traex", "resume"),
                Agent::Gemini => by_id("gemini", "--resume"),
                Agent::Copilot => by_id("copilot", "--resume"),
                Agent::Qwen => by_id("qwen", "--resume"),
                Agent::Droid => by_id("droid", "--resume"),
                Agent::Kimi => by_id("kimi", "--session"),
                Agent::Cursor => by_id("cursor-agent", "--resume"),
                Agent::Opencode => by_id("opencode", "--session"),
                Agent::Aider => Some(argv(&["aider", "--restore-chat-history"])),
                Agent::Crush
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
                | Agent::Gptme
                | Agent::Posit
                | Agent::Qwenpaw
                | Agent::Vscopilot
                | Agent::Atif => None,
            };
            match expected {
                Some(argv) => {
                    assert_eq!(r.argv, argv, "{agent}");
                    assert!(r.runnable(), "{agent}: {r:?}");
                }
                None => {
                    // Nothing to run, nothing to paste, and a reason with the way out.
                    assert!(r.argv.is_empty() && r.shell.is_none(), "{agent}: {r:?}");
                    let why = r.problem.unwrap_or_default();
                    assert!(!why.is_empty(), "{agent} says nothing");
                    let hint = match agent {
                        Agent::Crush => "run `crush` in /",
                        Agent::Cline => "open / in VS Code",
                        Agent::Roo => "Roo Code's task history",
                        Agent::Kilo => "Kilo Code's task history",
                        Agent::Kiro => "`kiro-cli chat --resume` in /",
                        Agent::Pi => "`pi --resume` in /",
                        Agent::Openclaw => "the chat or channel it belongs to",
                        Agent::Grok => "run `grok` in /",
                        Agent::Hermes => "run `hermes` in /",
                        Agent::Antigravity => "run `agy` in /",
                        Agent::Vibe => "run `vibe` in /",
                        Agent::Iflow => "`iflow --resume` in /",
                        Agent::Gptme => "run `gptme` in /",
                        Agent::Posit => "open / there",
                        Agent::Qwenpaw => "the console or chat channel it belongs to",
                        Agent::Vscopilot => "Copilot Chat's history",
                        _ => "imported",
                    };
                    assert!(why.contains(hint), "{agent}: {why}");
                }
            }
        }
    }

    #[test]
    fn a_cursor_editor_chat_is_never_offered_the_cli_resume() {
        let r = resume_command(&session(Agent::Cursor, Some("ide")));
        assert!(r.argv.is_empty() && r.shell.is_none(), "{r:?}");
        assert!(!r.runnable());
        let why = r.problem.unwrap();
        assert!(
            why.contains("Cursor editor") && why.contains("open / in Cursor"),
            "{why}"
        );
        // With no folder recorded it still says what to do.
        let mut s = session(Agent::Cursor, Some("ide"));
        s.cwd = None;
        let why = resume_command(&s).problem.unwrap();
        assert!(why.contains("open the project in Cursor"), "{why}");
    }
}

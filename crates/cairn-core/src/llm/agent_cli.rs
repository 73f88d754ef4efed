//! A local agent CLI as a report generator: `claude -p`, `codex exec`, `gemini`, `copilot`.
//!
//! The prompt holds transcript text, which may carry instructions planted by whatever an agent
//! read (prompt injection), so the agent runs as a plain text-in, text-out model call, as far as
//! each CLI allows:
//!
//! - the prompt goes on stdin, never on the command line (where `ps` shows it and Linux refuses
//!   an argument over 128 KiB);
//! - the user's MCP servers, settings, hooks and extensions are not loaded, and tools are off
//!   (the flags per agent are in [`isolation`], with the CLI version each comes from);
//! - it runs in a fresh empty directory (0700, removed afterwards) with a minimal environment
//!   (`PATH`, `HOME`, locale, temp dir, and the variables that agent needs to authenticate, plus
//!   any listed under `[agent.<name>] env`), so nothing of Cairn's own environment (such as
//!   `CAIRN_DATA_DIR`) leaks into it;
//! - it leads its own process group, and a timeout kills the group (a wrapper script's real
//!   agent too); its output is captured (bounded), and waited for no longer than the timeout.
//!
//! What each agent can still reach is listed in docs/SECURITY.md ("Generators"). The unit is
//! [`run`]: a prompt in, the agent's answer out.

use std::ffi::OsString;
use std::io::{Read, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc::Receiver;
use std::time::{Duration, Instant};

use super::LlmError;
use crate::config::AgentCliConfig;
use crate::error::{Error, Result};

/// Output past this is cut (a report is far smaller).
const MAX_OUTPUT: usize = 4 << 20;
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(600);

/// The variables every agent gets, when set.
const BASE_ENV: [&str; 10] = [
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "LANG",
    "LC_ALL",
    "TMPDIR",
    "XDG_CONFIG_HOME",
    "XDG_DATA_HOME",
    "XDG_CACHE_HOME",
];

/// The MCP configuration Claude is given instead of the user's: no servers.
const EMPTY_MCP_CONFIG: &str = r#"{"mcpServers":{}}"#;

/// A server name no one configures: Gemini then connects none of the user's MCP servers.
const NO_MCP_SERVER: &str = "cairn-allows-no-mcp-server";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AgentKind {
    Claude,
    Codex,
    Gemini,
    Copilot,
}

impl AgentKind {
    pub fn parse(s: &str) -> Option<AgentKind> {
        match s {
            "claude" => Some(AgentKind::Claude),
            "codex" => Some(AgentKind::Codex),
            "gemini" => Some(AgentKind::Gemini),
            "copilot" => Some(AgentKind::Copilot),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            AgentKind::Claude => "claude",
            AgentKind::Codex => "codex",
            AgentKind::Gemini => "gemini",
            AgentKind::Copilot => "copilot",
        }
    }

    /// What each agent needs to find its credentials and settings.
    fn auth_env(self) -> &'static [&'static str] {
        match self {
            AgentKind::Claude => &[
                "ANTHROPIC_API_KEY",
                "ANTHROPIC_BASE_URL",
                "ANTHROPIC_MODEL",
                "CLAUDE_CONFIG_DIR",
                "CLAUDE_CODE_USE_BEDROCK",
                "CLAUDE_CODE_USE_VERTEX",
            ],
            AgentKind::Codex => &["OPENAI_API_KEY", "OPENAI_BASE_URL", "CODEX_HOME"],
            AgentKind::Gemini => &[
                "GEMINI_API_KEY",
                "GOOGLE_API_KEY",
                "GOOGLE_CLOUD_PROJECT",
                "GOOGLE_APPLICATION_CREDENTIALS",
                // The profile (home) the CLI keeps its login in, when one is chosen.
                "GEMINI_CLI_HOME",
            ],
            AgentKind::Copilot => &["GH_TOKEN", "GITHUB_TOKEN", "COPILOT_GITHUB_TOKEN"],
        }
    }
}

/// What the agent wrote.
#[derive(Debug, Clone, PartialEq)]
pub struct AgentOutput {
    pub text: String,
    pub model: Option<String>,
}

/// Run `kind` on `prompt` (sent on stdin) and return its answer. An answer longer than
/// [`MAX_OUTPUT`] fails this prompt ([`LlmError::TooLarge`]: another may be answered well);
/// anything else that goes wrong fails the agent ([`LlmError::Generator`], or
/// [`LlmError::Config`] for a setting Cairn refuses).
pub fn run(
    kind: AgentKind,
    config: Option<&AgentCliConfig>,
    prompt: &str,
) -> std::result::Result<AgentOutput, LlmError> {
    let default = AgentCliConfig::default();
    let config = config.unwrap_or(&default);
    let binary = config
        .binary
        .clone()
        .unwrap_or_else(|| kind.as_str().to_owned());
    let what = format!("{} ({binary})", kind.as_str());
    let failed = |e: Error| match e {
        Error::Generator { what, message } => LlmError::Generator { what, message },
        Error::Invalid(m) => LlmError::Config(m),
        other => LlmError::Generator {
            what: what.clone(),
            message: other.to_string(),
        },
    };
    // tempfile makes the directory 0700; it and everything in it go when `workdir` drops.
    let workdir = tempfile::tempdir()
        .map_err(|e| Error::Write {
            path: std::env::temp_dir(),
            source: e,
        })
        .map_err(failed)?;
    let invocation = isolation(kind, config, workdir.path()).map_err(failed)?;
    let mut cmd = Command::new(&binary);
    cmd.current_dir(workdir.path())
        .env_clear()
        .args(&invocation.args);
    for var in BASE_ENV
        .iter()
        .copied()
        .chain(kind.auth_env().iter().copied())
        .chain(config.env.iter().map(String::as_str))
    {
        if let Some(v) = std::env::var_os(var) {
            cmd.env(var, v);
        }
    }
    cmd.env("NO_COLOR", "1").env("TERM", "dumb");
    for (name, value) in &invocation.env {
        cmd.env(name, value);
    }
    let timeout = config
        .timeout_secs
        // At most a day: a larger value (u64::MAX) would overflow the deadline and panic.
        .map_or(DEFAULT_TIMEOUT, |s| {
            Duration::from_secs(s).min(super::endpoint::MAX_TIMEOUT)
        });
    let (status, stdout, stderr) =
        spawn_and_wait(&mut cmd, kind.as_str(), &binary, prompt, timeout).map_err(failed)?;
    // Checked before the exit status: an agent whose output was cut may die writing the rest.
    if stdout.len() >= MAX_OUTPUT {
        return Err(LlmError::TooLarge {
            limit: MAX_OUTPUT as u64,
        });
    }
    if !status.success() {
        return Err(LlmError::Generator {
            what,
            message: format!(
                "exited with {}: {}{}",
                status
                    .code()
                    .map_or("a signal".to_owned(), |c| format!("code {c}")),
                last_lines(&stderr),
                outdated_hint(kind, &stderr)
            ),
        });
    }
    let stdout = String::from_utf8_lossy(&stdout).into_owned();
    let parsed = match kind {
        AgentKind::Claude => parse_claude(&stdout),
        AgentKind::Codex => {
            let last = std::fs::read_to_string(workdir.path().join(CODEX_LAST_MESSAGE)).ok();
            parse_codex(&stdout, last)
        }
        AgentKind::Gemini => parse_gemini(&stdout),
        AgentKind::Copilot => Ok(AgentOutput {
            text: stdout.trim().to_owned(),
            model: None,
        }),
    }
    .map_err(|message| LlmError::Generator {
        what: what.clone(),
        message,
    })?;
    if parsed.text.trim().is_empty() {
        return Err(LlmError::Generator {
            what,
            message: format!("answered with no text; stderr: {}", last_lines(&stderr)),
        });
    }
    Ok(parsed)
}

/// Where `codex exec --output-last-message` writes the answer, inside the work dir.
const CODEX_LAST_MESSAGE: &str = "last-message.txt";

/// How an agent is started: its arguments (never the prompt) and extra environment.
struct Invocation {
    args: Vec<OsString>,
    env: Vec<(&'static str, String)>,
}

/// The arguments that make `kind` a text-in, text-out call. Claude's empty MCP configuration is
/// written into `workdir` (0600).
fn isolation(kind: AgentKind, config: &AgentCliConfig, workdir: &Path) -> Result<Invocation> {
    let mut env = Vec::new();
    let args: Vec<OsString> = match kind {
        // Claude Code, flags as of 2.1.240 (its CHANGELOG): `-p` reads the prompt from stdin.
        // `--strict-mcp-config` + `--mcp-config <file>` (0.2.75): only the servers in the file,
        // none. `--setting-sources ""` (1.0.122): no user, project or local settings, so none of
        // their hooks, permissions, plugins or CLAUDE.md; managed policy still applies.
        // `--tools ""`: no built-in tool (no Bash, Read, WebFetch...), in print mode.
        AgentKind::Claude => {
            let mcp = workdir.join("mcp.json");
            write_private(&mcp, EMPTY_MCP_CONFIG.as_bytes())?;
            let mut args = os_args(&[
                "-p",
                "--output-format",
                "json",
                "--no-session-persistence",
                "--strict-mcp-config",
                "--mcp-config",
            ]);
            args.push(mcp.into_os_string());
            args.extend(os_args(&["--setting-sources", "", "--tools", ""]));
            args
        }
        // Codex CLI: `exec -` reads the prompt from stdin. `--ignore-user-config` and
        // `--ignore-rules` (openai/codex#18646, in the `codex exec` guide since April 2026): no
        // `$CODEX_HOME/config.toml` (so none of its MCP servers, hooks or profiles; the login in
        // `$CODEX_HOME` still works) and no execpolicy rules. `--disable shell_tool`
        // (openai/codex#6481): no shell tool, so no command runs at all; the read-only sandbox
        // stays as a second wall. `web_search = "disabled"`: no web search tool.
        AgentKind::Codex => {
            let mut args = os_args(&[
                "exec",
                "--json",
                "--sandbox",
                "read-only",
                "--skip-git-repo-check",
                "--ephemeral",
                "--ignore-user-config",
                "--ignore-rules",
                "--disable",
                "shell_tool",
                "-c",
                "web_search=\"disabled\"",
                "--output-last-message",
            ]);
            args.push(workdir.join(CODEX_LAST_MESSAGE).into_os_string());
            args.push("-".into());
            args
        }
        // Gemini CLI (docs/cli/cli-reference.md): piped stdin is the prompt and runs it
        // non-interactively, where tools that need approval (shell, edits) are not offered.
        // `--extensions none`: no extension (they bring MCP servers and context files);
        // `--allowed-mcp-server-names <a name no one uses>`: none of the user's MCP servers.
        // Gemini has no flag to skip `~/.gemini/settings.json` (hooks): hence the sandbox.
        AgentKind::Gemini => {
            match (&config.sandbox, config.allow_unsafe) {
                (Some(s), _) => env.push(("GEMINI_SANDBOX", s.clone())),
                (None, true) => {}
                (None, false) => {
                    return Err(Error::Invalid(
                        "gemini runs tools without a sandbox by default: set `[agent.gemini] sandbox = \"docker\"` (or `allow_unsafe = true`) in config.toml".to_owned(),
                    ));
                }
            }
            os_args(&[
                "--output-format",
                "json",
                "--approval-mode",
                "default",
                "--extensions",
                "none",
                "--allowed-mcp-server-names",
                NO_MCP_SERVER,
            ])
        }
        // GitHub Copilot CLI: without `-p` it reads the prompt from piped stdin (1.0.82 says so
        // when none arrives). No custom instructions, no questions, no built-in GitHub MCP
        // server; the shell and file writes are denied outright (in prompt mode every other
        // tool needing approval is refused anyway).
        AgentKind::Copilot => os_args(&[
            "--silent",
            "--no-custom-instructions",
            "--no-ask-user",
            "--disable-builtin-mcps",
            "--deny-tool",
            "shell",
            "--deny-tool",
            "write",
        ]),
    };
    Ok(Invocation { args, env })
}

fn os_args(args: &[&str]) -> Vec<OsString> {
    args.iter().map(OsString::from).collect()
}

/// Create `path` (which must not exist) readable by the owner only, with `bytes`.
fn write_private(path: &Path, bytes: &[u8]) -> Result<()> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt as _;
        options.mode(0o600);
    }
    options
        .open(path)
        .and_then(|mut file| file.write_all(bytes))
        .map_err(|source| Error::Write {
            path: path.to_path_buf(),
            source,
        })
}

/// A CLI older than the flags above refuses them: say so, with the fix.
fn outdated_hint(kind: AgentKind, stderr: &[u8]) -> String {
    let text = String::from_utf8_lossy(stderr).to_lowercase();
    let refused = [
        "unknown option",
        "unexpected argument",
        "unknown argument",
        "unrecognized",
    ]
    .iter()
    .any(|needle| text.contains(needle));
    if refused {
        format!(
            " (this {} is older than the flags Cairn isolates it with: update it)",
            kind.as_str()
        )
    } else {
        String::new()
    }
}

type Finished = (std::process::ExitStatus, Vec<u8>, Vec<u8>);

fn spawn_and_wait(
    cmd: &mut Command,
    agent: &str,
    binary: &str,
    stdin: &str,
    timeout: Duration,
) -> Result<Finished> {
    cmd.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    // Its own process group: what it starts (a wrapper script's real agent, a helper) is
    // killed with it.
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt as _;
        cmd.process_group(0);
    }
    let mut child = cmd.spawn().map_err(|e| Error::Generator {
        what: binary.to_owned(),
        message: if e.kind() == std::io::ErrorKind::NotFound {
            format!(
                "not found on PATH: install it, or set `[agent.{agent}] binary = \"/path/to/{binary}\"` in the data dir's config.toml, or choose another generator (`cairn recall extract doctor` lists those at hand)"
            )
        } else {
            format!("cannot start: {e}")
        },
    })?;
    let writer = child.stdin.take().map(|mut pipe| {
        let text = stdin.to_owned();
        // A closed pipe (the agent exited early) is reported by its exit status instead. The
        // pipe closes when the thread ends, so the agent sees the end of the prompt.
        std::thread::spawn(move || {
            let _ = pipe.write_all(text.as_bytes());
        })
    });
    let out = read_bounded(
        child
            .stdout
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let err = read_bounded(
        child
            .stderr
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let start = Instant::now();
    let timed_out = || Error::Generator {
        what: binary.to_owned(),
        message: format!(
            "no answer within {} s: killed (raise `[agent.{agent}] timeout_secs` for long reports)",
            timeout.as_secs()
        ),
    };
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if start.elapsed() >= timeout => {
                kill_tree(&mut child);
                let _ = child.wait();
                return Err(timed_out());
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(50)),
            Err(e) => {
                kill_tree(&mut child);
                return Err(Error::Generator {
                    what: binary.to_owned(),
                    message: format!("waiting for it failed: {e}"),
                });
            }
        }
    };
    // The agent has exited, but something it started may still hold its output open: wait for
    // the output only until the deadline, then kill what is left of its group (a group with a
    // process left keeps the agent's id, so no other group is hit).
    let by_deadline = |rx: &Receiver<Vec<u8>>| {
        rx.recv_timeout(timeout.saturating_sub(start.elapsed()))
            .ok()
    };
    let (mut stdout, mut stderr) = (by_deadline(&out), by_deadline(&err));
    if stdout.is_none() || stderr.is_none() {
        kill_group(child.id());
        stdout = stdout.or_else(|| out.recv_timeout(AFTER_KILL).ok());
        stderr = stderr.or_else(|| err.recv_timeout(AFTER_KILL).ok());
    }
    let (Some(stdout), Some(stderr)) = (stdout, stderr) else {
        return Err(timed_out());
    };
    // The writer is not waited for: the agent has exited, and a process that escaped its group
    // could hold the prompt's pipe open forever; the thread ends when the pipe closes.
    drop(writer);
    Ok((status, stdout, stderr))
}

/// How long output may take to close once the agent's group was killed.
const AFTER_KILL: Duration = Duration::from_secs(2);

/// Read `pipe` to its end (at most [`MAX_OUTPUT`]) on a thread; the bytes arrive on the
/// receiver once it closes, so a caller can stop waiting for a pipe something keeps open.
fn read_bounded(pipe: Option<Box<dyn Read + Send>>) -> Receiver<Vec<u8>> {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut buf = Vec::new();
        if let Some(p) = pipe {
            let _ = p.take(MAX_OUTPUT as u64).read_to_end(&mut buf);
        }
        let _ = tx.send(buf);
    });
    rx
}

/// Kill the agent and every process of its group (it leads one: see [`spawn_and_wait`]), before
/// it is reaped, so the group id is still its own.
fn kill_tree(child: &mut std::process::Child) {
    kill_group(child.id());
    let _ = child.kill();
}

/// SIGKILL to the process group `leader` leads. A group with no process left is no error.
fn kill_group(leader: u32) {
    #[cfg(unix)]
    if let Some(pid) = i32::try_from(leader)
        .ok()
        .and_then(rustix::process::Pid::from_raw)
    {
        let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
    }
    #[cfg(not(unix))]
    let _ = leader;
}

/// The end of stderr, printable (no control sequences) and redacted, for error messages.
fn last_lines(stderr: &[u8]) -> String {
    let text = String::from_utf8_lossy(stderr);
    let clean = super::redacted(&text);
    let lines: Vec<&str> = clean.lines().filter(|l| !l.trim().is_empty()).collect();
    let tail = lines[lines.len().saturating_sub(5)..].join(" | ");
    if tail.is_empty() {
        "(no stderr)".to_owned()
    } else {
        crate::text::excerpt(&tail, 600)
    }
}

/// Longest model name taken from an agent's output; a longer one is no model's name.
const MAX_MODEL_NAME: usize = 200;

/// The model an agent says answered, as it is stored with a report and shown: printable, one
/// line, redacted (it is whatever the agent's JSON holds: a hostile or broken agent can put an
/// escape sequence or a token there). `None` when empty or absurdly long (the configured model
/// then stands).
fn model_name(raw: &str) -> Option<String> {
    let one = crate::text::one_line(raw, MAX_MODEL_NAME + 1);
    if one.is_empty() || one.chars().count() > MAX_MODEL_NAME {
        return None;
    }
    Some(super::redacted(&one))
}

/// `claude -p --output-format json`: one object with `result` (and `is_error`).
fn parse_claude(stdout: &str) -> std::result::Result<AgentOutput, String> {
    let v: serde_json::Value = serde_json::from_str(stdout.trim())
        .map_err(|e| format!("expected one JSON object from `--output-format json`: {e}"))?;
    if v.get("is_error").and_then(serde_json::Value::as_bool) == Some(true) {
        return Err(format!(
            "reported an error: {}",
            super::told(
                v.get("result")
                    .and_then(|r| r.as_str())
                    .unwrap_or("(no detail)"),
                600
            )
        ));
    }
    let text = v
        .get("result")
        .and_then(|r| r.as_str())
        .ok_or("the JSON has no `result` text")?;
    let model = v
        .get("modelUsage")
        .and_then(|m| m.as_object())
        .and_then(|m| m.keys().next().cloned())
        .or_else(|| v.get("model").and_then(|m| m.as_str()).map(str::to_owned))
        .and_then(|m| model_name(&m));
    Ok(AgentOutput {
        text: text.to_owned(),
        model,
    })
}

/// `codex exec --json`: events, one per line; the answer is the last `agent_message` (or the
/// `--output-last-message` file).
fn parse_codex(stdout: &str, last: Option<String>) -> std::result::Result<AgentOutput, String> {
    let mut from_events = None;
    let mut model = None;
    for line in stdout.lines() {
        let Ok(v) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        if let Some(m) = v.get("model").and_then(|m| m.as_str()) {
            model = model_name(m);
        }
        let item = v.get("item").unwrap_or(&serde_json::Value::Null);
        if v.get("type").and_then(|t| t.as_str()) == Some("item.completed")
            && item.get("type").and_then(|t| t.as_str()) == Some("agent_message")
            && let Some(t) = item.get("text").and_then(|t| t.as_str())
        {
            from_events = Some(t.to_owned());
        }
    }
    last.filter(|t| !t.trim().is_empty())
        .or(from_events)
        .map(|text| AgentOutput { text, model })
        .ok_or_else(|| "no agent message in its output".to_owned())
}

/// `gemini --output-format json`: one object with `response`.
fn parse_gemini(stdout: &str) -> std::result::Result<AgentOutput, String> {
    let v: serde_json::Value = serde_json::from_str(stdout.trim())
        .map_err(|e| format!("expected one JSON object from `--output-format json`: {e}"))?;
    let text = v
        .get("response")
        .and_then(|r| r.as_str())
        .ok_or("the JSON has no `response` text")?;
    Ok(AgentOutput {
        text: text.to_owned(),
        model: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_each_agents_output() {
        let c = parse_claude(r##"{"type":"result","is_error":false,"result":"# Report","modelUsage":{"claude-x":{}}}"##)
            .unwrap();
        assert_eq!(
            (c.text.as_str(), c.model.as_deref()),
            ("# Report", Some("claude-x"))
        );
        assert!(
            parse_claude(r#"{"is_error":true,"result":"quota"}"#)
                .unwrap_err()
                .contains("quota")
        );
        assert!(parse_claude("not json").is_err());
        let codex = "{\"type\":\"thread.started\"}\n{\"type\":\"item.completed\",\"item\":{\"type\":\"agent_message\",\"text\":\"draft\"}}\n{\"type\":\"item.completed\",\"item\":{\"type\":\"agent_message\",\"text\":\"# From events\"}}\n";
        assert_eq!(parse_codex(codex, None).unwrap().text, "# From events");
        assert_eq!(
            parse_codex(codex, Some("# From file".into())).unwrap().text,
            "# From file"
        );
        assert!(parse_codex("{}", None).is_err());
        assert_eq!(parse_gemini(r#"{"response":"hi"}"#).unwrap().text, "hi");
    }

    #[test]
    fn a_model_name_is_cleaned_redacted_and_bounded() {
        let claude = |model: &str| {
            let v = serde_json::json!({"result": "# R", "modelUsage": {model: {}}});
            parse_claude(&v.to_string()).unwrap().model
        };
        assert_eq!(
            claude("\u{1b}]0;pwned\u{7}claude-x\u{1b}[31m").as_deref(),
            Some("claude-x")
        );
        let token = "ghp_EXAMPLE00000000000000000000000000000";
        let named = claude(&format!("claude {token}")).unwrap();
        assert!(
            !named.contains(token) && named.contains("[REDACTED:"),
            "{named}"
        );
        assert_eq!(claude(&"m".repeat(MAX_MODEL_NAME + 1)), None);
        assert_eq!(claude("\u{1b}[2J"), None);
        let codex = format!("{{\"model\":\"{}\"}}\n", "m".repeat(5_000));
        assert_eq!(parse_codex(&codex, Some("# R".into())).unwrap().model, None);
    }
}

//! The agent-CLI generator against stand-in `claude`, `codex`, `gemini` and `copilot` scripts
//! that record their arguments, stdin, environment, working directory and the files they were
//! pointed at: the prompt never reaches the command line, each agent gets its isolation flags,
//! a 200 KiB prompt works, and nothing is left behind.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};

use cairn_core::config::AgentCliConfig;
use cairn_core::insights::agent_cli::{AgentKind, run};
use cairn_core::llm::{LlmError, Scope};

/// In every line of the prompt, so any argument carrying part of it is found.
const MARKER: &str = "PROMPT-MARKER-7f3a";

/// A prompt of `bytes` bytes that a shell would love to interpret: quotes, `$(…)`, an option,
/// an escape sequence and a NUL.
fn prompt(bytes: usize) -> String {
    let mut text = String::from(
        "--help\n$(touch /tmp/cairn-pwned) `id` \"quoted\" 'single'\n\u{1b}]0;title\u{7}\u{0}\n",
    );
    let mut n = 0;
    while text.len() < bytes {
        text.push_str(&format!(
            "{MARKER} line {n}: the agent read a file and ran the tests.\n"
        ));
        n += 1;
    }
    text
}

/// A stand-in for `name` in `dir` that records what it was given under `log` and then runs
/// `answer` (a shell fragment writing the agent's reply).
fn stub(dir: &Path, name: &str, answer: &str) -> (PathBuf, PathBuf) {
    let log = dir.join(format!("{name}-log"));
    std::fs::create_dir_all(&log).unwrap();
    let bin = dir.join(name);
    let script = format!(
        r#"#!/bin/sh
log='{log}'
cat > "$log/stdin"
for a in "$@"; do printf '<%s>\n' "$a"; done > "$log/argv"
env > "$log/env"
pwd > "$log/pwd"
for a in "$@"; do
  if [ -f "$a" ]; then printf '%s %s\n' "$(stat -c %a "$a")" "$a" >> "$log/files"; cat "$a" >> "$log/contents"; fi
done
{answer}
"#,
        log = log.display()
    );
    std::fs::write(&bin, script).unwrap();
    std::fs::set_permissions(&bin, std::fs::Permissions::from_mode(0o755)).unwrap();
    (bin, log)
}

fn read(log: &Path, name: &str) -> String {
    std::fs::read_to_string(log.join(name)).unwrap_or_default()
}

/// The arguments as the agent saw them, one per entry.
fn argv(log: &Path) -> Vec<String> {
    read(log, "argv")
        .lines()
        .map(|l| {
            l.strip_prefix('<')
                .and_then(|l| l.strip_suffix('>'))
                .unwrap()
                .to_owned()
        })
        .collect()
}

fn has_run(args: &[String], run: &[&str]) -> bool {
    args.windows(run.len())
        .any(|w| w.iter().zip(run).all(|(a, b)| a == b))
}

/// What a stub was given, and the directory holding its records.
struct Seen {
    args: Vec<String>,
    log: PathBuf,
    _dir: tempfile::TempDir,
}

/// Run `kind` through its stub on a 200 KiB prompt and check what every agent must get.
fn run_isolated(kind: AgentKind, answer: &str, config: AgentCliConfig) -> Seen {
    let dir = tempfile::tempdir().unwrap();
    let (bin, log) = stub(dir.path(), kind.as_str(), answer);
    let config = AgentCliConfig {
        binary: Some(bin.display().to_string()),
        ..config
    };
    let prompt = prompt(200 * 1024);
    let out = run(kind, Some(&config), &prompt).unwrap();
    assert_eq!(out.text.trim(), "# Answer", "{kind:?}");

    // The whole prompt arrived on stdin, byte for byte; no argument carries any of it.
    assert_eq!(std::fs::read(log.join("stdin")).unwrap(), prompt.as_bytes());
    let args = argv(&log);
    assert!(!args.is_empty(), "{kind:?} got no arguments");
    for arg in &args {
        assert!(
            !arg.contains(MARKER) && !arg.contains("cairn-pwned") && arg.len() < 1024,
            "{kind:?}: prompt text on the command line: {:.200}",
            arg
        );
    }
    // Only the variables it needs: nothing of Cairn's (or this test's) environment.
    let allowed = [
        "PATH",
        "HOME",
        "USER",
        "LOGNAME",
        "LANG",
        "LC_ALL",
        "TMPDIR",
        "NO_COLOR",
        "TERM",
        "XDG_CONFIG_HOME",
        "XDG_DATA_HOME",
        "XDG_CACHE_HOME",
        "GEMINI_SANDBOX", // set by us
        "PWD",
        "OLDPWD",
        "SHLVL",
        "_", // set by the shell itself
    ];
    for line in read(&log, "env").lines() {
        let name = line.split('=').next().unwrap();
        assert!(allowed.contains(&name), "{kind:?} was given {name}");
    }
    // It ran in a private directory that is gone now, with everything Cairn wrote into it.
    let pwd = PathBuf::from(read(&log, "pwd").trim());
    assert!(pwd.starts_with(std::env::temp_dir()), "{}", pwd.display());
    assert!(!pwd.exists(), "{kind:?}: the work dir is left behind");
    Seen {
        args,
        log,
        _dir: dir,
    }
}

#[test]
fn claude_gets_no_mcp_servers_no_settings_no_tools() {
    let answer = r##"printf '%s' '{"type":"result","is_error":false,"result":"# Answer"}'"##;
    let Seen { args, log, _dir } =
        run_isolated(AgentKind::Claude, answer, AgentCliConfig::default());
    assert_eq!(
        args[..4],
        ["-p", "--output-format", "json", "--no-session-persistence"]
    );
    assert!(has_run(&args, &["--setting-sources", ""]), "{args:?}");
    assert!(has_run(&args, &["--tools", ""]), "{args:?}");
    assert!(args.iter().any(|a| a == "--strict-mcp-config"), "{args:?}");
    // The MCP configuration is a file of the run's own, owner-only, with no server in it.
    let at = args.iter().position(|a| a == "--mcp-config").unwrap();
    let file = Path::new(&args[at + 1]);
    assert_eq!(
        read(&log, "files").trim(),
        format!("600 {}", file.display())
    );
    assert_eq!(read(&log, "contents"), r#"{"mcpServers":{}}"#);
    assert!(!file.exists(), "the MCP config is deleted afterwards");
}

#[test]
fn codex_runs_without_user_config_rules_shell_or_web_search() {
    let answer = r##"while [ $# -gt 0 ]; do if [ "$1" = --output-last-message ]; then shift; printf '# Answer' > "$1"; fi; shift; done
echo '{"type":"turn.completed"}'"##;
    let Seen { args, _dir, .. } = run_isolated(AgentKind::Codex, answer, AgentCliConfig::default());
    assert_eq!(args[0], "exec");
    for run in [
        &["--sandbox", "read-only"][..],
        &["--ignore-user-config"],
        &["--ignore-rules"],
        &["--disable", "shell_tool"],
        &["-c", "web_search=\"disabled\""],
        &["--ephemeral"],
    ] {
        assert!(has_run(&args, run), "{run:?} missing: {args:?}");
    }
    assert_eq!(args.last().unwrap(), "-", "the prompt is read from stdin");
}

#[test]
fn gemini_gets_no_extensions_and_no_mcp_servers_in_its_sandbox() {
    let answer = r##"printf '%s' '{"response":"# Answer"}'"##;
    let config = AgentCliConfig {
        sandbox: Some("docker".into()),
        ..AgentCliConfig::default()
    };
    let Seen { args, log, _dir } = run_isolated(AgentKind::Gemini, answer, config);
    assert!(has_run(&args, &["--extensions", "none"]), "{args:?}");
    assert!(has_run(&args, &["--approval-mode", "default"]), "{args:?}");
    let at = args
        .iter()
        .position(|a| a == "--allowed-mcp-server-names")
        .unwrap();
    assert!(args[at + 1].starts_with("cairn-"), "{args:?}");
    assert!(read(&log, "env").contains("GEMINI_SANDBOX=docker\n"));
}

/// Copilot used to get the whole prompt as `-p <prompt>`: visible in `ps`, and refused by the
/// kernel (E2BIG) past 128 KiB.
#[test]
fn copilot_reads_the_prompt_from_stdin_with_shell_and_writes_denied() {
    let Seen { args, _dir, .. } = run_isolated(
        AgentKind::Copilot,
        "printf '# Answer'",
        AgentCliConfig::default(),
    );
    assert!(
        !args.iter().any(|a| a == "-p" || a == "--prompt"),
        "{args:?}"
    );
    for run in [
        &["--deny-tool", "shell"][..],
        &["--deny-tool", "write"],
        &["--disable-builtin-mcps"],
        &["--no-custom-instructions"],
        &["--no-ask-user"],
    ] {
        assert!(has_run(&args, run), "{run:?} missing: {args:?}");
    }
}

/// An agent too old for an isolation flag fails with a message that says to update it.
#[test]
fn an_agent_refusing_a_flag_is_told_to_update() {
    let dir = tempfile::tempdir().unwrap();
    let (bin, _) = stub(
        dir.path(),
        "claude",
        "echo \"error: unknown option '--setting-sources'\" >&2; exit 1",
    );
    let config = AgentCliConfig {
        binary: Some(bin.display().to_string()),
        ..AgentCliConfig::default()
    };
    let err = run(AgentKind::Claude, Some(&config), "hi")
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("--setting-sources") && err.contains("update it"),
        "{err}"
    );
}

/// `timeout_secs = 9223372036854775807` (or any wait past a day) is a day: the deadline it makes
/// no longer overflows the clock and panics.
#[test]
fn an_absurd_timeout_is_a_day_not_a_panic() {
    let seen = run_isolated(
        AgentKind::Claude,
        r##"printf '%s' '{"type":"result","is_error":false,"result":"# Answer"}'"##,
        AgentCliConfig {
            timeout_secs: Some(u64::MAX),
            ..AgentCliConfig::default()
        },
    );
    assert!(!seen.args.is_empty());
}

/// Whether process `pid` is gone (or a zombie nobody reaped: it runs no more).
fn gone(pid: &str) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|stat| {
            stat.rsplit_once(')')
                .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z'))
        })
        .unwrap_or(true)
}

/// A wrapper script that runs the real agent as its child (no `exec`, as installers write
/// them): at the timeout the whole process group is killed, the agent under the wrapper too.
#[test]
fn a_timeout_kills_what_the_agent_started_too() {
    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("grandchild.pid");
    let (bin, _) = stub(
        dir.path(),
        "claude",
        &format!("sh -c 'echo $$ > {}; exec sleep 60'", pid_file.display()),
    );
    let config = AgentCliConfig {
        binary: Some(bin.display().to_string()),
        timeout_secs: Some(1),
        ..AgentCliConfig::default()
    };
    let err = run(AgentKind::Claude, Some(&config), "hi")
        .unwrap_err()
        .to_string();
    assert!(err.contains("no answer within 1 s"), "{err}");
    let pid = std::fs::read_to_string(&pid_file).unwrap();
    let pid = pid.trim();
    for _ in 0..40 {
        if gone(pid) {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    panic!("the agent's child {pid} outlived the timeout");
}

/// An agent that answers and exits, leaving a process that holds its output open: the call
/// returns the answer at the timeout (the leftover killed), not when the leftover ends.
#[test]
fn a_leftover_process_holding_the_output_does_not_hold_the_call() {
    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("leftover.pid");
    let (bin, _) = stub(
        dir.path(),
        "claude",
        &format!(
            r##"printf '%s' '{{"type":"result","is_error":false,"result":"# Answer"}}'; sleep 100000 & echo $! > {}"##,
            pid_file.display()
        ),
    );
    let config = AgentCliConfig {
        binary: Some(bin.display().to_string()),
        timeout_secs: Some(2),
        ..AgentCliConfig::default()
    };
    // The leftover never ends on its own: a call that waited for it would not return, and
    // once it has returned the leftover is gone (killed, not outlived).
    let out = run(AgentKind::Claude, Some(&config), "hi").unwrap();
    assert_eq!(out.text, "# Answer");
    let pid = std::fs::read_to_string(&pid_file).unwrap();
    assert!(
        (0..40).any(|_| {
            let done = gone(pid.trim());
            if !done {
                std::thread::sleep(std::time::Duration::from_millis(50));
            }
            done
        }),
        "the leftover {pid} outlived the call"
    );
}

/// An agent that writes more than Cairn reads (4 MiB) fails the question it was asked, not the
/// agent: a pass goes on with the next session instead of stopping for the back-off. The agent
/// may die of the closed pipe or exit cleanly; either way the answer is too long.
#[test]
fn an_answer_past_the_cap_fails_the_question_not_the_agent() {
    for tail in ["", "; exit 3"] {
        let dir = tempfile::tempdir().unwrap();
        let (bin, _) = stub(
            dir.path(),
            "claude",
            &format!("head -c 5000000 /dev/zero | tr '\\0' a{tail}"),
        );
        let config = AgentCliConfig {
            binary: Some(bin.display().to_string()),
            ..AgentCliConfig::default()
        };
        let err = run(AgentKind::Claude, Some(&config), "hi").unwrap_err();
        assert!(
            matches!(err, LlmError::TooLarge { limit } if limit == 4 << 20),
            "{err:?}"
        );
        assert_eq!(err.scope(), Scope::Input);
    }
    // Just under the cap is read (and then judged as an answer: here, not Claude's JSON).
    let dir = tempfile::tempdir().unwrap();
    let (bin, _) = stub(
        dir.path(),
        "claude",
        "head -c 4000000 /dev/zero | tr '\\0' a",
    );
    let config = AgentCliConfig {
        binary: Some(bin.display().to_string()),
        ..AgentCliConfig::default()
    };
    let err = run(AgentKind::Claude, Some(&config), "hi").unwrap_err();
    assert!(matches!(err, LlmError::Generator { .. }), "{err:?}");
}

//! Source dirs the OS will not show: a sync says so and doctor fails, in the same words, naming
//! the folder that refuses and the fix. Never "not present", never silence.

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;
use std::process::{Command, Output, Stdio};

use crate::support::{Env, check, fixtures};

/// The uid and gid of `nobody`, whom the OS refuses what its permissions refuse (root it does
/// not).
const NOBODY: u32 = 65534;

/// `cairn args` as a user the file system's permissions apply to: this user when not root, else
/// `nobody` (through util-linux's `setpriv`). A run that cannot drop root fails the test: as
/// root a folder of mode 000 reads as any other, and the test would pass without reaching what
/// it checks (`discover`'s unit test covers the same answers given, as root).
fn run_refused(env: &Env, as_root: bool, args: &[&str]) -> Output {
    let plain = env.command();
    if !as_root {
        let mut cmd = env.command();
        return cmd.args(args).output().unwrap();
    }
    let mut cmd = Command::new("setpriv");
    cmd.args([
        format!("--reuid={NOBODY}"),
        format!("--regid={NOBODY}"),
        "--clear-groups".to_owned(),
    ])
    .arg(plain.get_program())
    .args(args)
    .current_dir(env.root.path())
    .env_clear()
    .stdin(Stdio::null());
    for (k, v) in plain.get_envs() {
        if let Some(v) = v {
            cmd.env(k, v);
        }
    }
    let out = cmd
        .output()
        .expect("setpriv (util-linux) runs this test as `nobody` when it runs as root");
    assert!(
        out.status.code().is_some(),
        "setpriv could not run cairn as nobody: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn set_mode(path: &Path, mode: u32) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

/// `~/.claude` of mode 000 (left by an agent run with sudo) hides its projects folder; a
/// project folder inside a readable one cannot be listed; Codex's sessions folder itself cannot
/// be listed. Each is a sync warning naming the folder that refuses and `chown`, and the two
/// source dirs fail doctor with the same words; the readable transcript is captured.
#[test]
fn an_unreadable_source_dir_is_said_by_sync_and_fails_doctor() {
    let env = Env::new();
    let as_root = std::fs::metadata(env.root.path()).unwrap().uid() == 0;
    let locked = env.root.path().join("dot-claude");
    let projects = locked.join("projects");
    let readable = env.root.path().join("claude-readable");
    std::fs::create_dir_all(projects.join("-ok")).unwrap();
    std::fs::create_dir_all(readable.join("-ok")).unwrap();
    std::fs::create_dir_all(readable.join("-locked")).unwrap();
    let short = fixtures().join("claude/short.jsonl");
    std::fs::copy(&short, projects.join("-ok/ok.jsonl")).unwrap();
    std::fs::copy(&short, readable.join("-ok/ok.jsonl")).unwrap();
    std::fs::copy(
        fixtures().join("claude/small.jsonl"),
        readable.join("-locked/x.jsonl"),
    )
    .unwrap();
    std::fs::create_dir_all(env.codex().join("2026/01/01")).unwrap();
    std::fs::copy(
        fixtures().join("codex/small.jsonl"),
        env.codex()
            .join("2026/01/01/rollout-2026-01-01T00-00-00-x.jsonl"),
    )
    .unwrap();
    // Two Claude dirs (the locked one, the readable one) through config.toml.
    std::fs::write(
        env.data().join("config.toml"),
        format!(
            "[sources.claude]\ndirs = [{:?}, {:?}]\n",
            projects.display().to_string(),
            readable.display().to_string()
        ),
    )
    .unwrap();
    if as_root {
        // `nobody` may walk to everything, and owns the data dir it writes.
        set_mode(env.root.path(), 0o755);
        for dir in [env.data(), env.home()] {
            std::os::unix::fs::chown(&dir, Some(NOBODY), Some(NOBODY)).unwrap();
        }
        std::os::unix::fs::chown(env.data().join("config.toml"), Some(NOBODY), Some(NOBODY))
            .unwrap();
    }
    set_mode(&locked, 0o000);
    set_mode(&readable.join("-locked"), 0o000);
    set_mode(&env.codex(), 0o000);
    let sync = run_refused(&env, as_root, &["--json", "sync"]);
    let doctor = run_refused(&env, as_root, &["--json", "doctor"]);
    for dir in [&locked, &readable.join("-locked"), &env.codex()] {
        set_mode(dir, 0o755);
    }

    assert!(
        sync.status.success(),
        "{}",
        String::from_utf8_lossy(&sync.stderr)
    );
    let report: serde_json::Value = serde_json::from_slice(&sync.stdout).unwrap();
    assert_eq!(
        report["sessions_added"], 1,
        "the readable transcript: {report}"
    );
    let warning = |path: &Path| -> String {
        let found = report["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .find(|w| w["path"] == path.display().to_string())
            .unwrap_or_else(|| panic!("no warning for {}: {report}", path.display()));
        found["message"].as_str().unwrap().to_owned()
    };
    let chown = |path: &Path| format!("sudo chown -R $USER '{}'", path.display());
    let behind = warning(&locked);
    assert!(
        behind.contains(&format!("cannot read {}", projects.display()))
            && behind.contains("permission denied")
            && behind.contains("not captured")
            && behind.contains(&chown(&locked)),
        "{behind}"
    );
    let inside = warning(&readable.join("-locked"));
    assert!(
        inside.contains(&chown(&readable.join("-locked"))),
        "{inside}"
    );
    let codex = warning(&env.codex());
    assert!(codex.contains(&chown(&env.codex())), "{codex}");

    // Doctor: a failure (exit 1), each source dir's check in the sync's words.
    assert_eq!(
        doctor.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&doctor.stderr)
    );
    let doctor: serde_json::Value = serde_json::from_slice(&doctor.stdout).unwrap();
    let checks: Vec<&serde_json::Value> = doctor["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["name"] == "claude source dir")
        .collect();
    assert_eq!(checks.len(), 2, "{doctor}");
    assert_eq!(checks[0]["status"], "fail", "{}", checks[0]);
    assert!(
        checks[0]["detail"].as_str().unwrap().starts_with(&behind),
        "{}",
        checks[0]
    );
    assert_eq!(checks[1]["status"], "ok", "{}", checks[1]);
    let codex_check = check(&doctor, "codex source dir");
    assert_eq!(codex_check["status"], "fail", "{codex_check}");
    assert!(
        codex_check["detail"].as_str().unwrap().starts_with(&codex),
        "{codex_check}"
    );
}

/// A folder's name cannot forge a line of a sync's output: one named `evil\nFAKE: ok` holding
/// a transcript with a line that does not parse, and one beside it the OS will not list, are
/// each a warning of one line, the newline and escapes in their names shown as `\n` and
/// `\u{1b}`; doctor's check and `show`'s parse warning print them so too.
#[test]
fn a_folder_name_cannot_forge_a_warning_line() {
    let env = Env::new();
    let as_root = std::fs::metadata(env.root.path()).unwrap().uid() == 0;
    let evil = env.claude().join("evil\nFAKE: ok\u{1b}[2J");
    let locked = env.claude().join("locked\nFAKE: all captured");
    std::fs::create_dir_all(&evil).unwrap();
    std::fs::create_dir_all(&locked).unwrap();
    let good = std::fs::read_to_string(fixtures().join("claude/short.jsonl")).unwrap();
    std::fs::write(
        evil.join("s.jsonl"),
        format!("{{\"type\": \"user\", oops\n{good}"),
    )
    .unwrap();
    // A source dir of its own, named in config.toml, that the OS will not list: doctor's check.
    let refusing = env.root.path().join("src\nFAKE: doctor ok");
    std::fs::create_dir_all(&refusing).unwrap();
    std::fs::write(
        env.data().join("config.toml"),
        format!(
            "[sources.claude]\ndirs = [{:?}, {:?}]\n",
            env.claude().display().to_string(),
            refusing.display().to_string()
        ),
    )
    .unwrap();
    if as_root {
        set_mode(env.root.path(), 0o755);
        for dir in [env.data(), env.home()] {
            std::os::unix::fs::chown(&dir, Some(NOBODY), Some(NOBODY)).unwrap();
        }
    }
    set_mode(&locked, 0o000);
    set_mode(&refusing, 0o000);
    let sync = run_refused(&env, as_root, &["sync"]);
    let doctor = run_refused(&env, as_root, &["doctor"]);
    set_mode(&locked, 0o755);
    set_mode(&refusing, 0o755);
    let human = crate::support::succeeded(sync, "cairn sync");
    let lines: Vec<&str> = human.lines().collect();
    assert!(
        lines.iter().all(|l| !l.starts_with("FAKE")),
        "a folder's name printed a line of its own: {human}"
    );
    assert!(!human.contains('\u{1b}'), "{human:?}");
    let said = |name: &str| {
        lines
            .iter()
            .find(|l| l.contains(name))
            .unwrap_or_else(|| panic!("no warning names {name}: {human}"))
            .to_string()
    };
    let parse = said("evil\\nFAKE: ok\\u{1b}[2J/s.jsonl:1:");
    assert!(parse.starts_with("  "), "{parse}");
    for name in ["locked\\nFAKE: all captured", "src\\nFAKE: doctor ok"] {
        let refused = said(name);
        assert!(refused.contains("permission denied"), "{refused}");
    }

    // Doctor names the refusing source dir so in its check.
    let doctor = String::from_utf8_lossy(&doctor.stdout).into_owned();
    assert!(
        doctor.lines().all(|l| !l.starts_with("FAKE")) && doctor.contains("src\\nFAKE: doctor ok"),
        "{doctor}"
    );

    // `show` prints the session's parse warning the same way.
    let session = env.json(&["sessions"])[0]["session_key"]
        .as_str()
        .unwrap()
        .to_owned();
    let shown = env.ok(&["show", &session]);
    assert!(
        shown.lines().all(|l| !l.starts_with("FAKE")) && shown.contains("evil\\nFAKE: ok"),
        "{shown}"
    );
}

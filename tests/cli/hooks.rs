//! What an agent's hook payload and an agent's settings file can make Cairn do (issue 14): read
//! only transcripts inside the agent's source dirs, and change nothing in a settings file but
//! the hook it adds.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::{Value, json};

use crate::support::{Env, fed, fixtures};

/// `cairn hook [--agent agent]` with `payload` on stdin.
fn hook(env: &Env, agent: Option<&str>, payload: &Value) -> Output {
    let mut cmd = env.command();
    cmd.arg("hook");
    if let Some(agent) = agent {
        cmd.args(["--agent", agent]);
    }
    fed(cmd, payload.to_string().as_bytes())
}

/// While another process holds the capture past the hook's wait, the hook does not keep the
/// agent waiting: it says so and exits 0, and the next hook captures the turn.
#[test]
fn a_hook_does_not_wait_without_end_and_the_next_one_reads_the_turn() {
    let env = Env::new();
    let outside = transcript_outside(&env);
    let project = env.claude().join("-home-USER-p");
    std::fs::create_dir_all(&project).unwrap();
    let inside = project.join("1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl");
    std::fs::copy(&outside, &inside).unwrap();
    std::fs::create_dir_all(env.data()).unwrap();
    let held = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(env.data().join("capture.lock"))
        .unwrap();
    held.lock().unwrap();
    let payload = json!({"transcript_path": inside, "cwd": env.root.path()});
    let out = hook(&env, None, &payload);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("captured by the next hook or sync"),
        "{stderr}"
    );
    assert_eq!(env.json(&["sessions"]), json!([]));
    held.unlock().unwrap();
    let out = hook(&env, None, &payload);
    assert!(out.status.success() && out.stderr.is_empty(), "{out:?}");
    assert_eq!(env.json(&["sessions"]).as_array().unwrap().len(), 1);
}

/// Every file under `dir` (none when it does not exist).
fn files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_owned()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push(p);
            }
        }
    }
    out
}

/// A real transcript kept outside every source dir: what a hostile payload points at.
fn transcript_outside(env: &Env) -> PathBuf {
    let elsewhere = env.root.path().join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    let path = elsewhere.join("not-yours.jsonl");
    std::fs::copy(
        fixtures().join("claude/1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl"),
        &path,
    )
    .unwrap();
    path
}

#[test]
fn the_hook_reads_only_regular_files_inside_the_agents_source_dirs() {
    let env = Env::new();
    let outside = transcript_outside(&env);
    let project = env.claude().join("-home-USER-p");
    std::fs::create_dir_all(&project).unwrap();
    std::os::unix::fs::symlink(&outside, project.join("link.jsonl")).unwrap();
    std::os::unix::fs::symlink("/dev/zero", project.join("zero.jsonl")).unwrap();
    std::fs::create_dir_all(project.join("dir.jsonl")).unwrap();
    let fifo = project.join("fifo.jsonl");
    crate::support::mkfifo(&fifo);
    let inside = project.join("1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl");
    std::fs::copy(&outside, &inside).unwrap();

    let root = env.root.path();
    let cases: Vec<(&str, Value, Option<&str>)> = vec![
        (
            "a symlink to a file outside",
            json!({"transcript_path": project.join("link.jsonl")}),
            Some("claude"),
        ),
        (
            "an absolute `..` path",
            json!({"transcript_path": format!("{}/../elsewhere/not-yours.jsonl", env.claude().display())}),
            Some("claude"),
        ),
        (
            "a relative `..` path",
            json!({"transcript_path": "../../elsewhere/not-yours.jsonl", "cwd": project}),
            Some("claude"),
        ),
        (
            "a file outside, no agent given",
            json!({"transcript_path": outside}),
            None,
        ),
        (
            "a symlink to a device",
            json!({"transcript_path": project.join("zero.jsonl")}),
            Some("claude"),
        ),
        (
            "a device",
            json!({"transcript_path": "/dev/zero"}),
            Some("claude"),
        ),
        ("a fifo", json!({"transcript_path": fifo}), Some("claude")),
        (
            "a directory",
            json!({"transcript_path": project.join("dir.jsonl")}),
            Some("claude"),
        ),
        (
            "a missing file",
            json!({"transcript_path": project.join("gone.jsonl")}),
            Some("claude"),
        ),
        (
            "another agent's source dir",
            json!({"transcript_path": inside, "cwd": root}),
            Some("codex"),
        ),
    ];
    for (what, payload, agent) in &cases {
        let out = hook(&env, *agent, payload);
        let stderr = String::from_utf8_lossy(&out.stderr);
        // Refused with a message, and exit 0: the agent is never blocked by a bad payload.
        assert_eq!(out.status.code(), Some(0), "{what}: {stderr}");
        assert!(
            stderr.starts_with("cairn: not capturing "),
            "{what}: {stderr}"
        );
        assert_eq!(stderr.lines().count(), 1, "{what}: {stderr}");
        assert!(
            files(&env.data().join("retained")).is_empty(),
            "{what}: copied into retained/"
        );
        assert_eq!(env.json(&["sessions"]), json!([]), "{what}: recorded");
    }
    let out = hook(&env, None, &json!({"transcript_path": outside}));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("is outside the source dirs Cairn reads")
            && stderr.contains(&env.claude().display().to_string())
            && stderr.contains("[sources.<agent>] dirs"),
        "{stderr}"
    );

    // The transcript inside the source dir is captured, its agent found from the dir.
    let out = hook(&env, None, &json!({"transcript_path": inside, "cwd": root}));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(env.json(&["sessions"]).as_array().unwrap().len(), 1);
    assert_eq!(files(&env.data().join("retained")).len(), 1);
}

#[test]
fn sync_never_follows_a_transcript_symlink_out_of_the_source_dirs() {
    let env = Env::new();
    let outside = transcript_outside(&env);
    let project = env.claude().join("-home-USER-p");
    std::fs::create_dir_all(&project).unwrap();
    std::os::unix::fs::symlink(&outside, project.join("link.jsonl")).unwrap();
    // A link to a file inside the source dir is read (once: it is the same file).
    let inside = project.join("1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl");
    std::fs::copy(&outside, &inside).unwrap();
    std::os::unix::fs::symlink(&inside, project.join("alias.jsonl")).unwrap();

    let report = env.json(&["sync"]);
    let warnings = report["warnings"].as_array().unwrap();
    assert!(
        warnings
            .iter()
            .any(|w| w["path"].as_str().unwrap().ends_with("link.jsonl")
                && w["message"]
                    .as_str()
                    .unwrap()
                    .contains("a symlink to a file outside")),
        "{report}"
    );
    let sessions = env.json(&["sessions"]);
    assert_eq!(sessions.as_array().unwrap().len(), 1, "{sessions}");
    let sources: Vec<String> = rusqlite::Connection::open(env.data().join("cairn.db"))
        .unwrap()
        .prepare("SELECT path FROM sources")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<rusqlite::Result<_>>()
        .unwrap();
    let inside = std::fs::canonicalize(&inside).unwrap();
    assert_eq!(sources, [inside.display().to_string()]);
}

#[test]
fn hooks_install_keeps_a_linked_private_settings_file_whole_and_shows_no_secret() {
    let env = Env::new();
    let dotfiles = env.root.path().join("dotfiles");
    std::fs::create_dir_all(&dotfiles).unwrap();
    std::fs::create_dir_all(env.home().join(".claude")).unwrap();
    let real = dotfiles.join("claude-settings.json");
    let secret = "sk-ant-api03-Zq8vN2rLmX5tKp7Wc3Yb9Hd1Jf4Gs6Ae0Uo2Ri8Tw";
    let before = format!(
        "{{\n  \"env\": {{\n    \"ANTHROPIC_API_KEY\": \"{secret}\",\n    \"DB_PASS\": \"Summer2024!\"\n  }},\n  \"cleanupPeriodDays\": 18446744073709551617,\n  \"hooks\": {{\n    \"Stop\": [\n      {{\"hooks\": [{{\"type\": \"command\", \"command\": \"notify-send 'cairn hook done'\"}}]}}\n    ]\n  }}\n}}\n"
    );
    std::fs::write(&real, &before).unwrap();
    std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o600)).unwrap();
    let link = env.home().join(".claude/settings.json");
    std::os::unix::fs::symlink(&real, &link).unwrap();

    let dry = env.json(&["hooks", "install", "--agent", "claude", "--dry-run"]);
    let diff = dry["diff"].as_str().unwrap();
    assert!(diff.contains("hook --agent claude"), "{diff}");
    for hidden in [secret, "Summer2024!"] {
        assert!(!diff.contains(hidden), "{hidden} in\n{diff}");
    }
    assert_eq!(
        std::fs::read_to_string(&real).unwrap(),
        before,
        "a dry run wrote"
    );

    env.ok(&["hooks", "install", "--agent", "claude"]);
    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    let after = std::fs::read_to_string(&real).unwrap();
    let mode = std::fs::metadata(&real).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    // Everything that was there is there, byte for byte; the user's own hook is kept beside ours.
    let first_group_end = before.find("done'\"}]}").unwrap() + "done'\"}]}".len();
    assert!(after.starts_with(&before[..first_group_end]), "{after}");
    assert!(after.ends_with(&before[first_group_end..]), "{after}");
    let settings: Value = serde_json::from_str(&after).unwrap();
    assert_eq!(settings["hooks"]["Stop"].as_array().unwrap().len(), 2);
    let status = env.json(&["doctor"]);
    let hook = status["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "claude hook")
        .unwrap();
    assert_eq!(hook["status"], "ok", "{hook}");

    // Uninstalled: first as a dry run (nothing written), then for real, the file is what it
    // was before the install, through the same symlink with the same mode; the user's own
    // hook stays. A second uninstall has nothing to do.
    let dry = env.json(&["hooks", "uninstall", "--agent", "claude", "--dry-run"]);
    assert_eq!(
        (&dry["changed"], &dry["capture"]),
        (&json!(true), &json!("removed")),
        "{dry}"
    );
    assert!(!dry["diff"].as_str().unwrap().contains(secret), "{dry}");
    assert_eq!(
        std::fs::read_to_string(&real).unwrap(),
        after,
        "a dry run wrote"
    );
    let said = env.ok(&["hooks", "uninstall", "--agent", "claude"]);
    assert!(said.contains("Removed Cairn's claude hooks"), "{said}");
    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(std::fs::read_to_string(&real).unwrap(), before);
    assert_eq!(
        std::fs::metadata(&real).unwrap().permissions().mode() & 0o777,
        0o600
    );
    let again = env.json(&["hooks", "uninstall", "--agent", "claude"]);
    assert_eq!(again["changed"], false, "{again}");
}

/// Uninstalling where nothing was installed writes nothing (no settings file is made), and
/// Cairn's hook for the other agent stays.
#[test]
fn uninstalling_a_hook_that_is_not_there_changes_nothing() {
    let env = Env::new();
    let said = env.ok(&["hooks", "uninstall", "--agent", "codex"]);
    assert!(said.contains("nothing to remove"), "{said}");
    assert!(!env.home().join(".codex/hooks.json").exists());
    env.ok(&["hooks", "install", "--agent", "claude"]);
    let settings = env.home().join(".claude/settings.json");
    let installed = std::fs::read_to_string(&settings).unwrap();
    let r = env.json(&["hooks", "uninstall", "--agent", "codex"]);
    assert_eq!(r["changed"], false, "{r}");
    assert_eq!(std::fs::read_to_string(&settings).unwrap(), installed);
    // An agent Cairn has no hook for is a usage error naming those it has.
    for verb in ["install", "uninstall"] {
        let usage = env.run(&["hooks", verb, "--agent", "gemini"]);
        assert_eq!(usage.status.code(), Some(2));
        assert!(
            String::from_utf8_lossy(&usage.stderr).contains("[possible values: claude, codex]"),
            "{usage:?}"
        );
    }
    let usage = env.run(&["mcp", "install", "--agent", "pi"]);
    assert_eq!(usage.status.code(), Some(2));
    let usage = env.run(&["hook", "--agent", "atif"]);
    assert_eq!(usage.status.code(), Some(2));
}

/// Installed for an archive that is not at the default place, the hook names it: run as the
/// agent runs it (`sh -c`, no `CAIRN_DATA_DIR` in its environment), it captures into that
/// archive, not into a default one beside it.
#[test]
fn a_hook_installed_for_an_archive_elsewhere_captures_into_it() {
    let env = Env::new().with_fixtures();
    env.ok(&["hooks", "install", "--agent", "claude"]);
    let settings: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(env.home().join(".claude/settings.json")).unwrap(),
    )
    .unwrap();
    let command = settings["hooks"]["Stop"][0]["hooks"][0]["command"]
        .as_str()
        .unwrap()
        .to_owned();
    let data = env.data();
    assert!(
        command.contains(&format!("--data-dir {}", data.display()))
            || command.contains(&format!("--data-dir '{}'", data.display())),
        "{command}"
    );
    let transcript = env.claude().join("-home-USER-projects-spotter/small.jsonl");
    let payload = serde_json::json!({"session_id": "s", "transcript_path": transcript,
        "cwd": env.root.path(), "hook_event_name": "Stop"});
    let mut sh = std::process::Command::new("sh");
    sh.arg("-c")
        .arg(&command)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", env.home())
        .env("CLAUDE_PROJECTS_DIR", env.claude());
    let ran = fed(sh, payload.to_string().as_bytes());
    assert!(
        ran.status.success(),
        "{}",
        String::from_utf8_lossy(&ran.stderr)
    );
    let sessions = env.json(&["sessions"]);
    assert_eq!(sessions.as_array().unwrap().len(), 1, "{sessions}");
    assert!(
        !env.home().join(".local/share/cairn").exists(),
        "a default archive was made"
    );

    // Asked from another archive, doctor says the hook captures elsewhere and how to fix it;
    // installing from there points the hook at it.
    let other = env.root.path().join("other archive");
    let on_other = |args: &[&str]| {
        env.command()
            .env("CAIRN_DATA_DIR", &other)
            .args(args)
            .output()
            .unwrap()
    };
    let hook_check = |report: &[u8]| {
        let report: serde_json::Value = serde_json::from_slice(report).unwrap();
        report["checks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["name"] == "claude hook")
            .cloned()
            .unwrap()
    };
    let check = hook_check(&on_other(&["doctor", "--json"]).stdout);
    assert_eq!(check["status"], "warn", "{check}");
    assert!(
        check["detail"]
            .as_str()
            .unwrap()
            .contains("captures into another archive"),
        "{check}"
    );
    assert!(
        on_other(&["hooks", "install", "--agent", "claude"])
            .status
            .success()
    );
    let settings = std::fs::read_to_string(env.home().join(".claude/settings.json")).unwrap();
    assert!(
        settings.contains("other archive")
            && !settings.contains(&format!("{}'", data.display()))
            && !settings.contains(&format!("{} ", data.display())),
        "{settings}"
    );
    assert_eq!(
        hook_check(&on_other(&["doctor", "--json"]).stdout)["status"],
        "ok"
    );
    // And from the first archive it is now the other way round.
    assert_eq!(
        hook_check(
            &env.command()
                .args(["doctor", "--json"])
                .output()
                .unwrap()
                .stdout
        )["status"],
        "warn"
    );
}

/// `skills uninstall` takes away what `skills install` wrote, for both agents by default, and
/// says so; a second time there is nothing to remove.
#[test]
fn skills_uninstall_takes_back_what_install_wrote() {
    let env = Env::new();
    env.ok(&["skills", "install"]);
    let skills = [
        ".claude/skills/cairn/SKILL.md",
        ".codex/skills/cairn/SKILL.md",
    ];
    assert!(skills.iter().all(|s| env.home().join(s).exists()));
    let dry = env.json(&["skills", "uninstall", "--dry-run"]);
    assert_eq!(dry[0]["changed"], true, "{dry}");
    assert!(skills.iter().all(|s| env.home().join(s).exists()));
    let said = env.ok(&["skills", "uninstall"]);
    assert_eq!(said.matches("skill removed").count(), 2, "{said}");
    assert!(skills.iter().all(|s| !env.home().join(s).exists()));
    let again = env.ok(&["skills", "uninstall", "--agent", "claude"]);
    assert!(again.contains("nothing to remove"), "{again}");
}

/// A hook not installed is a warning for an agent used here, and no warning for one whose
/// transcripts are nowhere on this machine (the desktop showed a warning for Codex to people
/// who never ran it).
#[test]
fn doctor_warns_of_a_missing_hook_only_for_an_agent_used_here() {
    let env = Env::new();
    std::fs::remove_dir_all(env.codex()).unwrap();
    // The status of an agent's hook check, and whether its detail says `said`.
    let hook = |agent: &str, said: &str| {
        let doctor = env.json(&["doctor"]);
        let check = doctor["checks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["name"] == format!("{agent} hook"))
            .cloned()
            .unwrap_or_else(|| panic!("no {agent} hook check: {doctor}"));
        let detail = check["detail"].as_str().unwrap();
        (
            check["status"].as_str().unwrap().to_owned(),
            detail.contains(said),
        )
    };
    let claude = hook("claude", "cairn hooks install --agent claude");
    assert_eq!(claude, ("warn".to_owned(), true));
    let codex = hook(
        "codex",
        "no transcript folder of it was found on this machine",
    );
    assert_eq!(codex, ("ok".to_owned(), true));

    // Claude turned off in config.toml: its missing hook is no warning either, and says why.
    std::fs::write(
        env.data().join("config.toml"),
        "[sources.claude]\nenabled = false\n",
    )
    .unwrap();
    let claude = hook("claude", "disabled in config.toml");
    assert_eq!(claude, ("ok".to_owned(), true));
}

/// A settings file its owner made read-only is left as it is (the edit is a rename, which
/// the folder allows whatever the file's mode): refused, naming the file and the way on.
#[cfg(unix)]
#[test]
fn a_read_only_settings_file_is_refused_not_replaced() {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let env = Env::new();
    for (args, file) in [
        (
            &["hooks", "install", "--agent", "claude"][..],
            ".claude/settings.json",
        ),
        (&["mcp", "install", "--agent", "claude"][..], ".claude.json"),
    ] {
        let path = env.home().join(file);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, "{\"model\": \"opus\"}\n").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o444)).unwrap();
        let inode = std::fs::metadata(&path).unwrap().ino();
        let out = env.run(args);
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains(file) && err.contains("read-only") && err.contains("chmod u+w"),
            "{err}"
        );
        assert_eq!(std::fs::metadata(&path).unwrap().ino(), inode);
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "{\"model\": \"opus\"}\n"
        );
    }
}

/// Codex runs hooks only with its feature on: an install it cannot turn on (a config that is
/// not TOML, the feature switched off) puts the hook in place but fails, saying why once.
#[test]
fn a_codex_hook_that_will_not_run_fails_the_install() {
    let env = Env::new();
    let config = env.home().join(".codex/config.toml");
    std::fs::create_dir_all(config.parent().unwrap()).unwrap();
    for (text, says) in [
        ("model = \"gpt-5\"\n[features\nx=1\n", "is not valid TOML"),
        ("[features]\ncodex_hooks = false\n", "switched off"),
    ] {
        std::fs::write(&config, text).unwrap();
        let out = env.run(&["hooks", "install", "--agent", "codex"]);
        assert_eq!(out.status.code(), Some(1), "{text}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("will not run it") && err.contains(says),
            "{err}"
        );
        let said = String::from_utf8_lossy(&out.stdout);
        assert!(!said.contains(says), "said twice: {said}");
        // The config is the person's to mend: left as it was.
        assert_eq!(std::fs::read_to_string(&config).unwrap(), text);
    }
    // A config its owner made read-only: the hook is in place, the install says what to set
    // there and fails, as the hook will not run until then.
    std::fs::write(&config, "model = \"gpt-5\"\n").unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&config, std::fs::Permissions::from_mode(0o444)).unwrap();
        let out = env.run(&["hooks", "install", "--agent", "codex"]);
        assert_eq!(out.status.code(), Some(1));
        let said = String::from_utf8_lossy(&out.stdout);
        assert!(
            said.contains("read-only") && said.contains("codex_hooks = true"),
            "{said}"
        );
        assert!(String::from_utf8_lossy(&out.stderr).contains("will not run it"));
        std::fs::set_permissions(&config, std::fs::Permissions::from_mode(0o644)).unwrap();
    }
    env.ok(&["hooks", "install", "--agent", "codex"]);
}

#[test]
fn a_settings_file_with_a_byte_order_mark_is_named_for_it() {
    let env = Env::new();
    let path = env.home().join(".claude/settings.json");
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, "\u{feff}{\"model\": \"opus\"}\n").unwrap();
    let out = env.run(&["hooks", "install", "--agent", "claude"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("byte-order mark"), "{err}");
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        "\u{feff}{\"model\": \"opus\"}\n"
    );
}

/// An uninstall takes back what the install added, not only the hooks: a `hooks` object left
/// empty goes (`"hooks": {}` stayed behind), a settings file the install made goes, and Codex's
/// `codex_hooks` feature Cairn turned on is turned back once no hook needs it (it stayed on,
/// unsaid). A feature a person set, or one another hook still needs, stays, and the uninstall
/// says why.
#[test]
fn hooks_uninstall_takes_back_what_the_install_added() {
    let env = Env::new();
    let claude = env.home().join(".claude/settings.json");
    std::fs::create_dir_all(claude.parent().unwrap()).unwrap();
    let before = "{\n  \"model\": \"opus\"\n}\n";
    std::fs::write(&claude, before).unwrap();
    env.ok(&["hooks", "install", "--agent", "claude"]);
    env.ok(&["hooks", "uninstall", "--agent", "claude"]);
    assert_eq!(std::fs::read_to_string(&claude).unwrap(), before);
    std::fs::remove_file(&claude).unwrap();
    env.ok(&["hooks", "install", "--agent", "claude"]);
    let said = env.ok(&["hooks", "uninstall", "--agent", "claude"]);
    assert!(
        said.contains("held nothing else, so it is removed"),
        "{said}"
    );
    assert!(!claude.exists());

    // Codex from nothing: its hooks.json and the config holding only the feature go.
    let hooks = env.home().join(".codex/hooks.json");
    let config = env.home().join(".codex/config.toml");
    env.ok(&["hooks", "install", "--agent", "codex"]);
    assert!(
        std::fs::read_to_string(&config)
            .unwrap()
            .contains("codex_hooks = true")
    );
    let dry = env.ok(&["hooks", "uninstall", "--agent", "codex", "--dry-run"]);
    assert!(
        dry.contains("would take back `codex_hooks = true`"),
        "{dry}"
    );
    assert!(config.exists() && hooks.exists(), "a dry run wrote");
    let said = env.ok(&["hooks", "uninstall", "--agent", "codex"]);
    assert!(said.contains("took back `codex_hooks = true`"), "{said}");
    assert!(!hooks.exists() && !config.exists(), "{said}");

    // A config of the person's own comes back byte for byte.
    let own = "# mine\nmodel = \"o3\"\n\n[features]\nweb_search = true # on\n\n[mcp_servers.x]\ncommand = \"x\"\n";
    std::fs::write(&config, own).unwrap();
    env.ok(&["hooks", "install", "--agent", "codex"]);
    env.ok(&["hooks", "uninstall", "--agent", "codex"]);
    assert_eq!(std::fs::read_to_string(&config).unwrap(), own);

    // Another hook still needs the feature: it stays, and the uninstall says so.
    std::fs::write(
        &hooks,
        "{\"hooks\": {\"Stop\": [{\"hooks\": [{\"type\": \"command\", \"command\": \"notify-send done\"}]}]}}\n",
    )
    .unwrap();
    env.ok(&["hooks", "install", "--agent", "codex"]);
    let said = env.ok(&["hooks", "uninstall", "--agent", "codex"]);
    assert!(said.contains("stays: other hooks in"), "{said}");
    assert!(
        std::fs::read_to_string(&config)
            .unwrap()
            .contains("codex_hooks = true")
    );
    assert!(
        std::fs::read_to_string(&hooks)
            .unwrap()
            .contains("notify-send")
    );

    // Set by the person: theirs, left on.
    std::fs::remove_file(&hooks).unwrap();
    let theirs = "[features]\ncodex_hooks = true\n";
    std::fs::write(&config, theirs).unwrap();
    env.ok(&["hooks", "install", "--agent", "codex"]);
    let said = env.ok(&["hooks", "uninstall", "--agent", "codex"]);
    assert!(said.contains("stays: Cairn did not set it"), "{said}");
    assert_eq!(std::fs::read_to_string(&config).unwrap(), theirs);
}

/// A skill installed for an archive away from its default place names it in every command, so
/// an agent following it reads that archive (it was the default one's skill, and `cairn skim`
/// there found nothing); the dir is one shell word however it is spelled. Uninstalled, it is
/// known as Cairn's and no copy is kept.
#[test]
fn a_skill_installed_for_an_archive_elsewhere_sends_the_agent_there() {
    let env = Env::new().with_fixtures();
    let data = env.root.path().join("it's my archive");
    let run = |args: &[&str]| {
        let out = env
            .command()
            .env_remove("CAIRN_DATA_DIR")
            .arg("--data-dir")
            .arg(&data)
            .args(args)
            .output()
            .unwrap();
        assert!(out.status.success(), "{args:?}: {out:?}");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    run(&["sync"]);
    run(&["skills", "install", "--agent", "claude"]);
    let skill = std::fs::read_to_string(env.home().join(".claude/skills/cairn/SKILL.md")).unwrap();
    let commands: Vec<&str> = skill
        .split('`')
        .skip(1)
        .step_by(2)
        .filter(|span| span.starts_with("cairn "))
        .collect();
    assert!(commands.len() >= 8, "{skill}");
    let real = std::fs::canonicalize(&data).unwrap();
    for command in &commands {
        // As the agent's shell splits it: the archive is the word after --data-dir.
        let words = std::process::Command::new("sh")
            .arg("-c")
            .arg(format!(
                "printf '%s\\n' {}",
                // `<name>` stands for a word the agent fills in.
                command.replacen("cairn", "", 1).replace(['<', '>'], "_")
            ))
            .output()
            .unwrap();
        let words = String::from_utf8_lossy(&words.stdout).into_owned();
        let words: Vec<&str> = words.lines().collect();
        assert_eq!(
            words[..2],
            ["--data-dir", real.to_str().unwrap()],
            "{command}"
        );
    }
    // The agent runs the skill's command (a shell, no CAIRN_DATA_DIR): it finds the sessions.
    let skim = commands.iter().find(|c| c.ends_with(" skim")).unwrap();
    let sessions = skim.replacen("cairn", &format!("'{}'", env!("CARGO_BIN_EXE_cairn")), 1);
    let sessions = format!("{} --json sessions", sessions.trim_end_matches(" skim"));
    let out = std::process::Command::new("sh")
        .arg("-c")
        .arg(&sessions)
        .env_clear()
        .env("HOME", env.home())
        .output()
        .unwrap();
    let listed: Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
    assert!(
        listed.as_array().is_some_and(|s| !s.is_empty()),
        "{sessions}: {out:?}"
    );
    let said = run(&["skills", "uninstall", "--agent", "claude"]);
    assert!(
        said.contains("skill removed") && !said.contains("Backup"),
        "{said}"
    );
}

/// `cairn hook` given what no agent sends (run by hand, or wired to the wrong command): one line
/// saying what was wrong in words, what the hook reads and for which agent, and how to check the
/// installed hook, where it said serde's "expected ident at line 1 column 2" alone.
#[test]
fn hook_input_that_is_no_payload_says_what_the_hook_reads_and_how_to_check_it() {
    let env = Env::new();
    let run = |agent: Option<&str>, input: &[u8]| {
        let mut cmd = env.command();
        cmd.arg("hook");
        if let Some(agent) = agent {
            cmd.args(["--agent", agent]);
        }
        let out = fed(cmd, input);
        assert_eq!(out.status.code(), Some(1), "{input:?}");
        let err = String::from_utf8(out.stderr).unwrap();
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(!err.contains("expected ident"), "{err}");
        err
    };
    let err = run(Some("claude"), b"not json\n");
    for said in [
        "failed to parse agent hook input: stdin is not JSON (line 1 column 2)",
        "`cairn hook --agent claude` reads the JSON object claude sends its hooks on stdin",
        "`transcript_path`",
        "`cairn doctor` checks claude's installed hook",
        "`cairn hooks install --agent claude` puts it back",
    ] {
        assert!(err.contains(said), "{said}: {err}");
    }
    let err = run(Some("codex"), b"");
    assert!(err.contains("stdin was empty"), "{err}");
    assert!(err.contains("`cairn hooks install --agent codex`"), "{err}");
    let err = run(None, b"{\"hook_event_name\": \"Stop\", ");
    assert!(err.contains("the JSON on stdin ends too soon"), "{err}");
    assert!(
        err.contains("`cairn hooks install --agent <agent>` puts one back"),
        "{err}"
    );
    // Nothing was made: the input was refused before the archive was opened.
    assert!(!env.data().join("cairn.db").exists());
}

//! `cairn resume`: the command that continues a session in its agent, printed by default and
//! run (as an argument list, in the session's folder) only with --run.

use std::os::unix::fs::PermissionsExt;

use crate::branch::{Transcript, key_of, repo};
use crate::export::{CODEX, SMALL, synced};
use crate::support::Env;

#[test]
fn each_session_names_its_agents_resume_command_and_what_stands_in_its_way() {
    let env = synced();
    let claude = env.json(&["resume", SMALL]);
    assert_eq!(
        claude["argv"],
        serde_json::json!(["claude", "--resume", SMALL])
    );
    // The fixture ran on another machine: its folder is not here.
    assert_eq!(claude["cwd_exists"], false);
    assert!(
        claude["problem"].as_str().unwrap().contains("is gone"),
        "{claude}"
    );
    assert!(
        claude["shell"]
            .as_str()
            .unwrap()
            .ends_with(&format!("&& claude --resume {SMALL}")),
        "{claude}"
    );
    // Printed: the command alone on stdout, what stands in its way on stderr.
    let out = env.run(&["resume", SMALL]);
    assert_eq!(out.status.code(), Some(0));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(stdout.lines().count(), 1, "{stdout}");
    assert!(
        stdout
            .trim_end()
            .ends_with(&format!("claude --resume {SMALL}")),
        "{stdout}"
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("note: "));
    let codex = env.json(&["resume", CODEX]);
    assert_eq!(codex["argv"], serde_json::json!(["codex", "resume", CODEX]));
    // --run refuses what cannot run, and says why.
    let out = env.run(&["resume", SMALL, "--run"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!("cannot resume {SMALL}: ")) && err.contains("is gone"),
        "named as the person typed it, not by its key: {err}"
    );
    assert!(!err.contains("sha256-"), "{err}");
}

#[test]
fn run_starts_the_agent_in_the_sessions_folder_with_the_id_as_one_argument() {
    let env = Env::new();
    let repo = repo(env.root.path());
    let mut t = Transcript::new(&env, "s-resume-1", &repo, "main");
    t.user("hello");
    t.say("hi");
    t.hook(&env);
    // A stand-in `claude` that records where it ran and what it was given.
    let bin = env.root.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let log = env.root.path().join("claude.log");
    let script = bin.join("claude");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\npwd > {0}\nfor a in \"$@\"; do echo \"[$a]\" >> {0}; done\nexit 7\n",
            log.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap());
    let human = env.ok(&["resume", "s-resume-1"]);
    assert_eq!(
        human.trim(),
        format!("cd {} && claude --resume s-resume-1", repo.display())
    );
    let out = env
        .command()
        .env("PATH", &path)
        .args(["resume", "s-resume-1", "--run"])
        .output()
        .unwrap();
    // The agent's exit code is the command's.
    assert_eq!(out.status.code(), Some(7));
    let ran = std::fs::read_to_string(&log).unwrap();
    assert_eq!(
        ran,
        format!("{}\n[--resume]\n[s-resume-1]\n", repo.display())
    );
    // The agent resumes from its transcript: once it is gone (the agent cleaned it up), there
    // is no command to offer, and --run says why instead of starting an agent that fails.
    std::fs::remove_file(env.claude().join("-repo/s-resume-1.jsonl")).unwrap();
    let v = env.json(&["resume", "s-resume-1"]);
    assert!(
        v["problem"]
            .as_str()
            .is_some_and(|p| p.contains("s-resume-1.jsonl") && p.contains("is gone")),
        "{v}"
    );
    std::fs::remove_file(&log).unwrap();
    let out = env
        .command()
        .env("PATH", &path)
        .args(["resume", "s-resume-1", "--run"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(!log.exists(), "the agent was started");
}

#[test]
fn an_id_that_could_be_an_option_and_an_imported_trajectory_are_not_resumed() {
    let env = Env::new();
    let repo = repo(env.root.path());
    let mut t = Transcript::new(&env, "--dangerously-skip-permissions", &repo, "main");
    t.user("hello");
    t.say("hi");
    t.hook(&env);
    let key = key_of(&env, "--dangerously-skip-permissions");
    let v = env.json(&["resume", &key]);
    assert_eq!(v["argv"], serde_json::json!([]), "{v}");
    assert!(
        v["problem"].as_str().unwrap().contains("leading '-'"),
        "{v}"
    );
    for args in [&["resume", &key, "--run"][..], &["resume", &key][..]] {
        let out = env.run(args);
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        assert!(out.stdout.is_empty(), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("cannot resume") && err.contains("leading '-'"),
            "{err}"
        );
    }

    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("t.atif.json");
    std::fs::write(
        &file,
        r#"{"schema_version":"ATIF-v1.4","session_id":"imp-1","agent":{"name":"x","version":"1"},"steps":[{"step_id":1,"source":"user","message":"hi"}]}"#,
    )
    .unwrap();
    let imported = env.json(&["import", file.to_str().unwrap()]);
    let v = env.json(&["resume", imported["session_key"].as_str().unwrap()]);
    assert!(v["problem"].as_str().unwrap().contains("imported"), "{v}");
    assert!(v["shell"].is_null());
}

//! The first minutes with Recall extraction and reports: before anything is set up, after a
//! setup saved off, with a plain-HTTP server on another machine, with a key pasted where its
//! variable's name goes. Each message points at the command (or the desktop's Settings) that
//! does it, never at a hand edit of a config.toml that may not exist, and nothing it refuses
//! leaves a word of what it refused.

use std::process::Output;

use crate::fake_llm::FakeLlm;
use crate::support::Env;

const MINE: &str = "# my Cairn settings\n[recall]\nsession_start_tokens = 900\n";

/// `cairn` with no agent CLI on PATH, no terminal, and `MY_KEY_2` set (to a key no test needs).
fn cairn(env: &Env, args: &[&str]) -> Output {
    env.command()
        .env("PATH", "/usr/bin:/bin")
        .env("MY_KEY_2", "unused")
        .args(args)
        .output()
        .unwrap()
}

fn ok(env: &Env, args: &[&str]) -> String {
    let out = cairn(env, args);
    assert!(
        out.status.success(),
        "cairn {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// Exit 1 and stderr.
fn refused(env: &Env, args: &[&str]) -> String {
    let out = cairn(env, args);
    assert_eq!(out.status.code(), Some(1), "cairn {args:?}");
    String::from_utf8(out.stderr).unwrap()
}

fn config_text(env: &Env) -> String {
    std::fs::read_to_string(env.data().join("config.toml")).unwrap_or_default()
}

#[test]
fn before_setup_and_after_setup_off_run_and_status_point_at_setup() {
    let env = Env::new().with_fixtures();
    env.ok(&["sync"]);
    let points_at_setup = |text: &str| {
        text.contains("`cairn recall extract setup`")
            && text.contains("Settings → Recall extraction")
            && !text.contains("enabled = true")
            && !text.contains("[recall.extract] model")
    };
    let err = refused(&env, &["recall", "extract", "run"]);
    assert!(
        points_at_setup(&err) && err.contains("not set up") && !err.contains("config.toml"),
        "{err}"
    );
    assert!(!env.data().join("config.toml").exists());
    let status = ok(&env, &["recall", "extract", "status"]);
    assert!(
        status.contains("Model: not configured") && points_at_setup(&status),
        "{status}"
    );

    let fake = FakeLlm::start(None);
    let url = fake.url();
    ok(
        &env,
        &[
            "recall",
            "extract",
            "setup",
            "--endpoint",
            &url,
            "--model",
            "m",
            "--off",
            "--no-test",
        ],
    );
    let err = refused(&env, &["recall", "extract", "run"]);
    assert!(points_at_setup(&err) && err.contains("is off"), "{err}");
}

#[test]
fn a_plain_http_server_on_another_machine_takes_allow_http_and_a_refusal_drops_nothing() {
    let env = Env::new().with_fixtures();
    std::fs::create_dir_all(env.data()).unwrap();
    std::fs::write(env.data().join("config.toml"), MINE).unwrap();
    let setup = |endpoint: &str, extra: &[&str]| {
        let mut args = vec![
            "recall",
            "extract",
            "setup",
            "--endpoint",
            endpoint,
            "--model",
            "m",
            "--no-test",
        ];
        args.extend_from_slice(extra);
        args.into_iter().map(str::to_owned).collect::<Vec<_>>()
    };
    let run = |args: Vec<String>| cairn(&env, &args.iter().map(String::as_str).collect::<Vec<_>>());
    // A key variable saved for a server on this machine.
    let saved = run(setup(
        "http://127.0.0.1:9/v1",
        &["--api-key-env", "MY_KEY_2"],
    ));
    assert!(saved.status.success());
    let before = config_text(&env);
    assert!(
        before.contains("MY_KEY_2") && !before.contains("allow_http"),
        "{before}"
    );

    // Plain HTTP to another machine: refused by the flag that allows it, and nothing changed,
    // so nothing is said to have been dropped.
    let out = run(setup("http://10.0.0.5:8080/v1", &[]));
    assert_eq!(out.status.code(), Some(1));
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(
        stderr.contains("--allow-http") && !stderr.contains("allow_http = true"),
        "{stderr}"
    );
    assert!(!stdout.contains("dropped"), "{stdout}");
    assert_eq!(config_text(&env), before);

    // Allowed by the flag: saved with the server, and the dropped key variable said after.
    let out = run(setup("http://10.0.0.5:8080/v1", &["--allow-http"]));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let (saved_at, dropped_at) = (
        stdout.find("Saved [recall.extract]"),
        stdout.find("api_key_env MY_KEY_2 dropped"),
    );
    assert!(
        saved_at.is_some() && dropped_at.is_some() && saved_at < dropped_at,
        "{stdout}"
    );
    let text = config_text(&env);
    assert!(
        text.contains("allow_http = true") && !text.contains("MY_KEY_2"),
        "{text}"
    );
    assert!(text.starts_with("# my Cairn settings\n"), "{text}");
    // A new server starts without it; another choice for the same server keeps it.
    let out = run(setup("http://10.0.0.6:8080/v1", &[]));
    assert_eq!(out.status.code(), Some(1));
    let out = cairn(
        &env,
        &["recall", "extract", "setup", "--model", "m2", "--no-test"],
    );
    assert!(out.status.success());
    assert!(config_text(&env).contains("allow_http = true"));
    let out = run(setup("https://llm.example.com/v1", &[]));
    assert!(out.status.success());
    assert!(
        !config_text(&env).contains("allow_http"),
        "{}",
        config_text(&env)
    );
}

#[test]
fn a_key_where_its_variable_name_goes_is_refused_and_a_name_is_kept() {
    let env = Env::new().with_fixtures();
    env.ok(&["sync"]);
    let key_shaped = "abcdEFGH1234ijklMNOP5678qrst";
    for command in [&["recall", "extract"][..], &["insights"][..]] {
        let mut args = command.to_vec();
        args.extend_from_slice(&[
            "setup",
            "--endpoint",
            "http://127.0.0.1:9/v1",
            "--model",
            "m",
            "--no-test",
            "--api-key-env",
        ]);
        let mut pasted = args.clone();
        pasted.push(key_shaped);
        let err = refused(&env, &pasted);
        assert!(
            err.contains("--api-key-env") && err.contains("looks like a key"),
            "{err}"
        );
        assert!(!err.contains("5678qrst"), "{err}");
        assert!(!config_text(&env).contains("5678qrst"));
        args.push("MY_KEY_2");
        ok(&env, &args);
        assert!(config_text(&env).contains("MY_KEY_2"));
    }
}

#[test]
fn a_first_report_with_nothing_set_up_points_at_insights_setup() {
    let env = Env::new().with_fixtures();
    env.ok(&["sync"]);
    let err = refused(
        &env,
        &[
            "insights",
            "generate",
            "--since",
            "2020-01-01",
            "--until",
            "2030-01-01",
        ],
    );
    assert!(
        err.contains("`cairn insights setup --endpoint <url> --model <model>`")
            && err.contains("not on PATH")
            && !err.contains("[agent.claude] binary")
            && !err.contains("recall extract doctor"),
        "{err}"
    );
}

//! `cairn recall extract setup` and `cairn insights setup`: a generator chosen and saved from the
//! command line, tested against a loopback OpenAI-compatible server the test starts, written
//! into a `config.toml` a person already keeps comments in; and doctor's example, which follows
//! what it detected.

use std::process::Output;

use serde_json::Value;

use crate::fake_llm::{FakeLlm, Reply};
use crate::support::Env;

const KEY_VAR: &str = "CAIRN_TEST_LLM_KEY";
const KEY: &str = "test-key-3f9a1c";
/// A key as a person pastes it where the variable's name goes (Anthropic's shape).
const PASTED: &str =
    "sk-ant-api03-Zq8wX2vB7nR4tY6uI1oP3aS5dF9gH0jK2lL4zX6cV8bN1mQ3wE5rT7yU9iO1pA3sD5fG7hJ9kL";

/// A config.toml a person wrote: comments before a table, before a key and after a value.
const MINE: &str = "# my Cairn settings\n[recall]\n# a roomy brief\nsession_start_tokens = 900 # tried 600 first\n";

fn config_text(env: &Env) -> String {
    std::fs::read_to_string(env.data().join("config.toml")).unwrap_or_default()
}

fn synced() -> Env {
    let env = Env::new().with_fixtures();
    env.ok(&["sync"]);
    std::fs::write(env.data().join("config.toml"), MINE).unwrap();
    env
}

/// `cairn` with the key's variable set, `PATH` holding no agent CLI, no terminal on stdin.
fn cairn(env: &Env, args: &[&str]) -> Output {
    env.command()
        .env(KEY_VAR, KEY)
        .env("PATH", "/usr/bin:/bin")
        .args(args)
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap()
}

fn ok(env: &Env, args: &[&str]) -> String {
    let out = cairn(env, args);
    assert!(
        out.status.success(),
        "cairn {args:?} failed ({}): {}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr),
        String::from_utf8_lossy(&out.stdout)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn json(env: &Env, args: &[&str]) -> Value {
    let mut all = vec!["--json"];
    all.extend_from_slice(args);
    serde_json::from_str(&ok(env, &all)).unwrap()
}

/// A refused command: exit 1, nothing on stdout that reads as saved, stderr returned.
fn refused(env: &Env, args: &[&str]) -> String {
    let out = cairn(env, args);
    assert_eq!(out.status.code(), Some(1), "{args:?}: {out:?}");
    String::from_utf8(out.stderr).unwrap()
}

#[test]
fn setup_with_flags_tests_then_writes_what_status_and_preview_read() {
    let fake = FakeLlm::start(Some(KEY));
    let env = synced();
    let url = fake.url();
    let out = ok(
        &env,
        &[
            "recall",
            "extract",
            "setup",
            "--endpoint",
            &url,
            "--model",
            "test-model",
            "--api-key-env",
            KEY_VAR,
            "--schedule",
            "nightly",
        ],
    );
    // The desktop's Test: the models, then one tiny extraction, before anything is written.
    assert!(out.contains("ok   models: test-model is served"), "{out}");
    assert!(
        out.contains("ok   probe: a strict-schema extraction"),
        "{out}"
    );
    assert_eq!(fake.chats().len(), 1);
    assert!(fake.chats()[0].user().contains("port 4173"));
    assert!(
        out.contains(&format!(
            "Saved [recall.extract] in {}",
            env.data().join("config.toml").display()
        )),
        "{out}"
    );
    assert!(out.contains(&format!("generator: endpoint {url} (key in ${KEY_VAR})")));
    assert!(out.contains("schedule: nightly"), "{out}");
    assert!(out.contains("`cairn recall extract preview`"), "{out}");
    let text = config_text(&env);
    for kept in [
        "# my Cairn settings",
        "# a roomy brief",
        "session_start_tokens = 900 # tried 600 first",
    ] {
        assert!(text.contains(kept), "{kept} lost:\n{text}");
    }
    assert!(!text.contains(KEY), "{text}");
    // What status and preview read is what setup wrote.
    let status = json(&env, &["recall", "extract", "status"]);
    assert_eq!(
        (
            status["enabled"].as_bool(),
            status["model"].as_str(),
            status["endpoint"].as_str()
        ),
        (Some(true), Some("test-model"), Some(url.as_str())),
        "{status}"
    );
    let preview = json(&env, &["recall", "extract", "preview"]);
    assert!(preview["fingerprint"].is_string(), "{preview}");
    assert!(preview["sessions"].as_u64().unwrap() > 0, "{preview}");
    // A second setup changes one choice and keeps the generator it does not name.
    let again = json(
        &env,
        &[
            "recall",
            "extract",
            "setup",
            "--schedule",
            "manual",
            "--no-test",
        ],
    );
    assert_eq!(again["setup"]["schedule"], "manual", "{again}");
    assert_eq!(again["setup"]["model"], "test-model", "{again}");
    assert_eq!(fake.chats().len(), 1, "--no-test sent nothing");
    assert!(config_text(&env).contains("# a roomy brief"));
}

#[test]
fn setup_json_says_what_was_tested_and_saved_and_what_comes_next() {
    let fake = FakeLlm::start(None);
    let env = synced();
    let v = json(
        &env,
        &[
            "recall",
            "extract",
            "setup",
            "--endpoint",
            &fake.url(),
            "--model",
            "test-model",
            "--off",
        ],
    );
    assert_eq!(v["saved"], true, "{v}");
    assert_eq!(v["setup"]["generator"], "endpoint", "{v}");
    assert_eq!(v["setup"]["enabled"], false, "{v}");
    assert_eq!(v["setup"]["schedule"], "after_sync", "{v}");
    assert!(v["test"]["checks"].as_array().unwrap().len() >= 2, "{v}");
    assert_eq!(v["next"][0], "cairn recall extract preview", "{v}");
    assert_eq!(
        v["config"].as_str().map(std::path::PathBuf::from),
        Some(env.data().join("config.toml"))
    );
    // Saved off: run refuses, and says why.
    let run = cairn(&env, &["recall", "extract", "run"]);
    assert!(!run.status.success());
}

#[test]
fn a_failing_test_request_saves_nothing() {
    let fake = FakeLlm::start(None);
    let env = synced();
    fake.fail_after(
        0,
        Some(Reply::json(401, serde_json::json!({"error": "nope"}))),
    );
    let args = [
        "recall",
        "extract",
        "setup",
        "--endpoint",
        &fake.url(),
        "--model",
        "test-model",
    ];
    let out = cairn(&env, &args);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("FAIL probe"), "{stdout}");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("nothing was saved"),
        "{out:?}"
    );
    assert_eq!(config_text(&env), MINE);
}

#[test]
fn a_pasted_key_is_refused_by_the_flag_and_never_repeated() {
    let env = synced();
    for args in [
        &[
            "recall",
            "extract",
            "setup",
            "--endpoint",
            "https://api.example.com/v1",
            "--model",
            "m",
            "--api-key-env",
            PASTED,
        ][..],
        &[
            "insights",
            "setup",
            "--endpoint",
            "https://api.example.com/v1",
            "--model",
            "m",
            "--api-key-env",
            PASTED,
        ][..],
    ] {
        for json in [false, true] {
            let mut all = Vec::new();
            if json {
                all.push("--json");
            }
            all.extend_from_slice(args);
            let err = refused(&env, &all);
            assert!(
                err.contains("--api-key-env") && err.contains("never the key itself"),
                "{err}"
            );
            assert!(!err.contains("Zq8wX2vB7nR4"), "{err}");
            assert_eq!(config_text(&env), MINE);
        }
    }
}

/// Keys as people paste them where a model's name or a server's URL goes: OpenAI's project
/// key, a GitHub token, an AWS key pair (the id and the secret, one argument).
const OPENAI: &str = "sk-proj-Abc123Def456Ghi789Jkl012Mno345Pqr678Stu901Vwx";
const GITHUB: &str = "ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789";
const AWS_PAIR: &str = "AKIAIOSFODNN7EXAMPLE wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY";
/// What of each key must never come back: a run from inside it.
const NEEDLES: [&str; 4] = [
    "Def456Ghi789",
    "HiJkLmNoPqRs",
    "IOSFODNN7EXA",
    "UtnFEMI/K7MD",
];

#[test]
fn a_key_in_the_model_or_the_endpoint_is_refused_by_its_flag_and_never_repeated() {
    let fake = FakeLlm::start(Some(KEY));
    let env = synced();
    let url = fake.url();
    let host = url.trim_end_matches("/v1").to_owned();
    let mut cases: Vec<(String, String, &str)> = [OPENAI, GITHUB, AWS_PAIR]
        .into_iter()
        .map(|key| (url.clone(), key.to_owned(), "--model"))
        .collect();
    for endpoint in [
        format!("{url}?key={GITHUB}"),
        format!("{url}?api-version=2024-08-01-preview&token={OPENAI}"),
        format!("{host}/{OPENAI}/v1"),
        host.replace("://", &format!("://user:{GITHUB}@")),
    ] {
        cases.push((endpoint, "test-model".to_owned(), "--endpoint"));
    }
    let before = std::fs::read(env.data().join("config.toml")).unwrap();
    for (endpoint, model, flag) in &cases {
        let recall = |extra: &[&'static str]| {
            let mut args = vec![
                "recall",
                "extract",
                "setup",
                "--endpoint",
                endpoint.as_str(),
                "--model",
                model.as_str(),
            ];
            args.extend_from_slice(extra);
            args
        };
        let mut runs = vec![
            recall(&[]),
            recall(&["--no-test"]),
            recall(&["--api-key-env", KEY_VAR]),
            vec![
                "insights",
                "setup",
                "--endpoint",
                endpoint,
                "--model",
                model,
            ],
            vec![
                "insights",
                "setup",
                "--endpoint",
                endpoint,
                "--model",
                model,
                "--no-test",
            ],
        ];
        if *flag == "--model" {
            runs.push(vec![
                "recall",
                "extract",
                "setup",
                "--agent-cli",
                "claude",
                "--model",
                model,
                "--no-test",
            ]);
        }
        for args in runs {
            for json in [false, true] {
                let mut all = if json { vec!["--json"] } else { Vec::new() };
                all.extend_from_slice(&args);
                let out = cairn(&env, &all);
                let stdout = String::from_utf8_lossy(&out.stdout);
                let stderr = String::from_utf8_lossy(&out.stderr);
                assert_eq!(out.status.code(), Some(1), "{all:?}: {stdout}\n{stderr}");
                assert!(
                    stderr.contains(&format!("{flag}: "))
                        && stderr.contains("never the key itself"),
                    "{all:?}: {stderr}"
                );
                for needle in NEEDLES {
                    assert!(
                        !stdout.contains(needle) && !stderr.contains(needle),
                        "{all:?} repeated the key: {stdout}\n{stderr}"
                    );
                }
                assert_eq!(
                    std::fs::read(env.data().join("config.toml")).unwrap(),
                    before,
                    "{all:?}"
                );
            }
        }
    }
    // Nothing went out: neither the test request nor the models list.
    assert!(fake.requests().is_empty(), "{:?}", fake.requests());
}

/// `--endpoint` names a server anew: the key variable saved for the one before is dropped, and
/// the output says so and how to keep it.
#[test]
fn a_new_endpoint_drops_the_saved_key_variable_and_says_so() {
    let fake = FakeLlm::start(None);
    let env = synced();
    let url = fake.url();
    let base = [
        "recall",
        "extract",
        "setup",
        "--endpoint",
        url.as_str(),
        "--model",
        "test-model",
        "--no-test",
    ];
    let mut first = base.to_vec();
    first.extend_from_slice(&["--api-key-env", KEY_VAR]);
    ok(&env, &first);
    assert!(config_text(&env).contains(KEY_VAR));
    let out = ok(&env, &base);
    assert!(
        out.contains(&format!(
            "api_key_env {KEY_VAR} dropped: it was meant for the server saved before, and --endpoint names one anew; pass --api-key-env {KEY_VAR} to keep it."
        )),
        "{out}"
    );
    assert!(
        !config_text(&env).contains(KEY_VAR),
        "{}",
        config_text(&env)
    );
    // Named again, it is kept, and nothing is said.
    let out = ok(&env, &first);
    assert!(!out.contains("dropped"), "{out}");
    assert!(config_text(&env).contains(KEY_VAR));
}

#[test]
fn without_a_terminal_or_a_choice_setup_names_the_flags() {
    let env = synced();
    for args in [
        &["recall", "extract", "setup"][..],
        &["--json", "recall", "extract", "setup"][..],
        // A schedule alone, with no generator saved to keep.
        &["recall", "extract", "setup", "--schedule", "nightly"][..],
    ] {
        let err = refused(&env, args);
        for flag in ["--generator", "--agent-cli", "--endpoint"] {
            assert!(err.contains(flag), "{args:?}: {err}");
        }
        assert_eq!(config_text(&env), MINE);
    }
}

#[test]
fn hostile_values_are_refused_and_leave_the_file() {
    let fake = FakeLlm::start(None);
    let env = synced();
    let newline_url = format!("{}\n[sources.claude]\ndirs = [\"/\"]", fake.url());
    let huge = "m".repeat(100_000);
    for (endpoint, model, says) in [
        (newline_url.as_str(), "test-model", "control character"),
        (
            "http://127.0.0.1:1/v1\u{1b}[2J",
            "test-model",
            "control character",
        ),
        (fake.url().as_str(), huge.as_str(), "longer than 200"),
        // Plain HTTP off this machine, as the config's own check refuses it.
        (
            "http://10.1.2.3:8080/v1",
            "test-model",
            "plain HTTP to a host that is not",
        ),
    ] {
        for no_test in [false, true] {
            let mut args = vec![
                "recall",
                "extract",
                "setup",
                "--endpoint",
                endpoint,
                "--model",
                model,
            ];
            if no_test {
                args.push("--no-test");
            }
            let err = refused(&env, &args);
            assert!(err.contains(says), "{says}: {err}");
            assert!(!err.contains('\u{1b}'), "{err:?}");
            assert!(err.len() < 2_000, "{}", err.len());
            assert_eq!(config_text(&env), MINE);
        }
        let err = refused(
            &env,
            &[
                "insights",
                "setup",
                "--endpoint",
                endpoint,
                "--model",
                model,
            ],
        );
        assert!(err.contains(says), "{says}: {err}");
        assert_eq!(config_text(&env), MINE);
    }
    assert!(fake.requests().is_empty(), "{:?}", fake.requests());
}

#[test]
fn the_insights_endpoint_is_set_then_cleared() {
    let fake = FakeLlm::start(Some(KEY));
    let env = synced();
    let url = fake.url();
    let out = ok(
        &env,
        &[
            "insights",
            "setup",
            "--endpoint",
            &url,
            "--model",
            "test-model",
            "--api-key-env",
            KEY_VAR,
        ],
    );
    assert!(
        out.contains(&format!("Test: {url} answers and lists test-model")),
        "{out}"
    );
    assert!(out.contains("Saved [insights]"), "{out}");
    // One request, the model list, carrying the key from the variable.
    let asked = fake.requests();
    assert_eq!(asked.len(), 1, "{asked:?}");
    assert!(asked[0].path.ends_with("/models"));
    assert_eq!(
        asked[0].header("authorization"),
        Some(format!("Bearer {KEY}").as_str())
    );
    let text = config_text(&env);
    assert!(text.contains("# a roomy brief") && text.contains("[insights]"));
    assert!(!text.contains(KEY), "{text}");
    // Reports now go to the endpoint by default.
    let dry = json(
        &env,
        &["insights", "generate", "--dry-run", "--since", "2020-01-01"],
    );
    assert_eq!(dry["generator"]["backend"], "endpoint", "{dry}");
    assert_eq!(dry["generator"]["model"], "test-model", "{dry}");
    let cleared = json(&env, &["insights", "setup", "--clear"]);
    assert!(cleared["endpoint"].is_null(), "{cleared}");
    let text = config_text(&env);
    assert!(
        !text.contains("endpoint") && !text.contains("test-model"),
        "{text}"
    );
    assert!(text.contains("session_start_tokens = 900 # tried 600 first"));
    let dry = json(
        &env,
        &["insights", "generate", "--dry-run", "--since", "2020-01-01"],
    );
    assert_eq!(dry["generator"]["backend"], "claude", "{dry}");
    // Neither a choice nor --clear: clap names both.
    let out = cairn(&env, &["insights", "setup"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--endpoint") && err.contains("--clear"),
        "{err}"
    );
}

/// Ollama moved to the fake server's port by its own `OLLAMA_HOST`, no agent CLI on `PATH`.
fn with_ollama(env: &Env, fake: &FakeLlm, args: &[&str]) -> Output {
    let host = fake.url().replace("http://", "").replace("/v1", "");
    env.command()
        .env("PATH", "/usr/bin:/bin")
        .env("OLLAMA_HOST", host)
        .args(args)
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap()
}

#[test]
fn doctor_suggests_the_local_server_it_found_and_setup_picks_it_by_name() {
    let fake = FakeLlm::start(None);
    let env = Env::new();
    std::fs::write(env.data().join("config.toml"), MINE).unwrap();
    let out = with_ollama(&env, &fake, &["recall", "extract", "doctor"]);
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8_lossy(&out.stdout);
    let port = fake
        .url()
        .replace("http://127.0.0.1:", "")
        .replace("/v1", "");
    assert!(
        text.contains(&format!(
            "1. server Ollama on port {port} {} models: test-model",
            fake.url()
        )),
        "{text}"
    );
    // The example is the server found, written as setup would write it; no agent that is not here.
    assert!(
        text.contains("cairn recall extract setup --generator ollama"),
        "{text}"
    );
    assert!(
        text.contains(&format!("  endpoint = \"{}\"", fake.url())),
        "{text}"
    );
    assert!(text.contains("  model = \"test-model\""), "{text}");
    assert!(!text.contains("claude\""), "{text}");
    assert!(fake.chats().is_empty(), "doctor sends nothing unconfigured");
    // The command it suggests does what it says: the same server, its first model.
    let out = with_ollama(
        &env,
        &fake,
        &[
            "--json",
            "recall",
            "extract",
            "setup",
            "--generator",
            "ollama",
        ],
    );
    assert!(out.status.success(), "{out:?}");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["setup"]["endpoint"], fake.url(), "{v}");
    assert_eq!(v["setup"]["model"], "test-model", "{v}");
    assert_eq!(fake.chats().len(), 1, "the test request");
    // By number too; a name nothing was found under is refused with what was found.
    let out = with_ollama(
        &env,
        &fake,
        &[
            "recall",
            "extract",
            "setup",
            "--generator",
            "1",
            "--no-test",
        ],
    );
    assert!(out.status.success(), "{out:?}");
    let out = with_ollama(
        &env,
        &fake,
        &["recall", "extract", "setup", "--generator", "claude"],
    );
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("found: 1 ollama") && err.contains("--agent-cli"),
        "{err}"
    );
}

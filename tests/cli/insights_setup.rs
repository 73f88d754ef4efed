//! `cairn insights setup` without a hand edit: plain HTTP to another machine allowed by
//! `--allow-http` (and dropped by the next endpoint named without it), a model the server does
//! not list refused unless `--model-unlisted`, and a hostile or absent `/models` answer that is
//! cleaned, bounded and never fatal. Against the loopback fake server.

use std::process::Output;

use serde_json::json;

use crate::fake_llm::{FakeLlm, Reply};
use crate::support::Env;

/// A config.toml a person wrote, comments and all.
const MINE: &str = "# my Cairn settings\n[insights]\n# slow box\ntimeout_secs = 600\n";

fn config_text(env: &Env) -> String {
    std::fs::read_to_string(env.data().join("config.toml")).unwrap_or_default()
}

fn env() -> Env {
    let env = Env::new();
    std::fs::create_dir_all(env.data()).unwrap();
    std::fs::write(env.data().join("config.toml"), MINE).unwrap();
    env
}

fn setup(env: &Env, args: &[&str]) -> Output {
    let mut all = vec!["insights", "setup"];
    all.extend_from_slice(args);
    env.command()
        .args(&all)
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap()
}

fn saved(env: &Env, args: &[&str]) -> String {
    let out = setup(env, args);
    assert!(out.status.success(), "{args:?}: {out:?}");
    String::from_utf8(out.stdout).unwrap()
}

/// Exit 1, the file as it was; stderr returned.
fn refused(env: &Env, args: &[&str]) -> String {
    let before = config_text(env);
    let out = setup(env, args);
    assert_eq!(out.status.code(), Some(1), "{args:?}: {out:?}");
    assert_eq!(config_text(env), before, "{args:?} wrote the file");
    String::from_utf8(out.stderr).unwrap()
}

#[test]
fn plain_http_to_another_machine_takes_allow_http_and_the_next_endpoint_drops_it() {
    let env = env();
    let far = "http://192.0.2.7:8080/v1";
    let err = refused(&env, &["--endpoint", far, "--model", "m", "--no-test"]);
    assert!(err.contains("--allow-http"), "{err}");
    assert!(!err.contains("allow_http = true"), "a hand edit: {err}");
    let out = saved(
        &env,
        &[
            "--endpoint",
            far,
            "--model",
            "m",
            "--no-test",
            "--allow-http",
        ],
    );
    assert!(out.contains("plain HTTP allowed"), "{out}");
    let text = config_text(&env);
    assert!(text.contains("allow_http = true"), "{text}");
    assert!(text.contains("# slow box") && text.contains("timeout_secs = 600"));
    // Reports read it as saved: the file loads, the endpoint is the one reports go to.
    let dry = env.json(&["insights", "generate", "--dry-run", "--since", "2020-01-01"]);
    assert_eq!(dry["generator"]["backend"], "endpoint", "{dry}");
    // Another endpoint named without the flag: plain HTTP is not carried over to it.
    let fake = FakeLlm::start(None);
    saved(&env, &["--endpoint", &fake.url(), "--model", "test-model"]);
    assert!(
        !config_text(&env).contains("allow_http"),
        "{}",
        config_text(&env)
    );
    // And a clear takes it out with the endpoint.
    saved(
        &env,
        &[
            "--endpoint",
            far,
            "--model",
            "m",
            "--no-test",
            "--allow-http",
        ],
    );
    saved(&env, &["--clear"]);
    assert!(
        !config_text(&env).contains("allow_http"),
        "{}",
        config_text(&env)
    );
}

#[test]
fn a_model_the_server_does_not_list_is_refused_unless_model_unlisted() {
    let fake = FakeLlm::start(None);
    let env = env();
    let url = fake.url();
    let err = refused(&env, &["--endpoint", &url, "--model", "nothere"]);
    for says in ["does not list nothere", "test-model", "--model-unlisted"] {
        assert!(err.contains(says), "{says}: {err}");
    }
    let out = saved(
        &env,
        &["--endpoint", &url, "--model", "nothere", "--model-unlisted"],
    );
    assert!(out.contains("does not list nothere"), "{out}");
    assert!(out.contains("--model-unlisted"), "{out}");
    assert!(config_text(&env).contains("model = \"nothere\""));
    // Listed: saved as before, no flag needed.
    let v = env.json(&[
        "insights",
        "setup",
        "--endpoint",
        &url,
        "--model",
        "test-model",
    ]);
    assert_eq!(v["test"]["listing"]["state"], "listed", "{v}");
    assert_eq!(v["model"], "test-model", "{v}");
}

#[test]
fn a_hostile_model_list_is_cleaned_and_bounded_and_none_at_all_is_not_fatal() {
    let fake = FakeLlm::start(None);
    let env = env();
    let url = fake.url();
    // 10,000 models, the first with an escape sequence and a right-to-left override.
    let mut data: Vec<serde_json::Value> = (0..10_000)
        .map(|i| json!({"id": format!("model-{i}")}))
        .collect();
    data[0] = json!({"id": "evil\u{1b}[31m\u{202e}gpj.exe"});
    fake.push(Reply::json(200, json!({"object": "list", "data": data})));
    let err = refused(&env, &["--endpoint", &url, "--model", "nothere"]);
    assert!(
        !err.contains('\u{1b}') && !err.contains('\u{202e}'),
        "{err:?}"
    );
    assert!(err.contains("and 9990 more"), "{err}");
    assert!(err.len() < 3_000, "{} bytes", err.len());
    // Not JSON at all: the list could not be read, so the model is saved unchecked.
    fake.push(Reply {
        status: 200,
        headers: vec![("Content-Type".into(), "text/html".into())],
        body: "<html>\u{1b}[2J hello</html>".into(),
    });
    let out = saved(&env, &["--endpoint", &url, "--model", "nothere"]);
    assert!(out.contains("could not be read"), "{out}");
    assert!(!out.contains('\u{1b}'), "{out:?}");
    assert!(config_text(&env).contains("model = \"nothere\""));
    // Nobody listening: saved, and said so.
    let closed = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let gone = format!("http://127.0.0.1:{closed}/v1");
    let out = saved(&env, &["--endpoint", &gone, "--model", "m"]);
    assert!(
        out.contains("saved unchecked") && out.contains("connection was refused"),
        "{out}"
    );
    assert!(config_text(&env).contains(&gone), "{}", config_text(&env));
}

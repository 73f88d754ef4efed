//! One rule for every model endpoint a setup names: `cairn recall extract setup` and `cairn
//! insights setup`, given the same server and model, save the same thing or refuse the same
//! way (the core's `EndpointCheck::rule`). A model the server does not list is refused unless
//! `--model-unlisted`; a server whose model list cannot be read, or that cannot be reached at
//! all, is saved with a note saying the model went unchecked. Against the loopback fake server
//! and a loopback port nobody listens on; nothing leaves this machine.

use std::process::Output;

use serde_json::json;

use crate::fake_llm::{FakeLlm, Reply};
use crate::support::Env;

/// The two setups, as a person types them, with the same endpoint flags after.
const SETUPS: [&[&str]; 2] = [&["recall", "extract", "setup"], &["insights", "setup"]];

/// An archive with nothing in it (extraction's setup opens one).
fn env() -> Env {
    let env = Env::new();
    env.ok(&["sync"]);
    env
}

fn config_text(env: &Env) -> String {
    std::fs::read_to_string(env.data().join("config.toml")).unwrap_or_default()
}

fn run(env: &Env, setup: &[&str], args: &[&str]) -> Output {
    let mut all = setup.to_vec();
    all.extend_from_slice(args);
    env.command()
        .args(&all)
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap()
}

/// What one setup came to: its exit code, whether the model is in config.toml after, and
/// what it said (stdout and stderr).
struct Outcome {
    code: Option<i32>,
    saved: bool,
    said: String,
}

fn outcome(setup: &[&str], args: &[&str], model: &str, before: impl Fn()) -> Outcome {
    let env = env();
    before();
    let out = run(&env, setup, args);
    Outcome {
        code: out.status.code(),
        saved: config_text(&env).contains(&format!("model = \"{model}\"")),
        said: format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ),
    }
}

/// A loopback port nobody listens on: a connection to it is refused at once.
fn closed_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port()
}

#[test]
fn both_setups_save_or_refuse_the_same_endpoint_alike() {
    let fake = FakeLlm::start(None);
    let url = fake.url();
    let gone = format!("http://127.0.0.1:{}/v1", closed_port());
    let broken = || {
        fake.push(Reply::json(
            500,
            json!({"error": {"message": "models are down"}}),
        ))
    };
    // (case, endpoint, model, extra flags, a /models that fails, exit code, saved)
    type Case<'a> = (&'a str, &'a str, &'a str, &'a [&'a str], bool, i32, bool);
    let cases: [Case; 5] = [
        ("listed", &url, "test-model", &[], false, 0, true),
        ("unlisted", &url, "nothere", &[], false, 1, false),
        (
            "unlisted, --model-unlisted",
            &url,
            "nothere",
            &["--model-unlisted"],
            false,
            0,
            true,
        ),
        (
            "/models answers 500",
            &url,
            "test-model",
            &[],
            true,
            0,
            true,
        ),
        ("unreachable", &gone, "test-model", &[], false, 0, true),
    ];
    for (case, endpoint, model, extra, fails, code, saved) in cases {
        let mut args = vec!["--endpoint", endpoint, "--model", model];
        args.extend_from_slice(extra);
        let got: Vec<Outcome> = SETUPS
            .iter()
            .map(|setup| {
                outcome(setup, &args, model, || {
                    if fails {
                        broken();
                    }
                })
            })
            .collect();
        for (setup, o) in SETUPS.iter().zip(&got) {
            let who = format!("{} ({case})", setup.join(" "));
            assert_eq!(o.code, Some(code), "{who}: {}", o.said);
            assert_eq!(o.saved, saved, "{who}: {}", o.said);
            match case {
                "unlisted" => {
                    for says in ["does not list nothere", "test-model", "--model-unlisted"] {
                        assert!(o.said.contains(says), "{who}: {says}: {}", o.said);
                    }
                }
                "unlisted, --model-unlisted" => {
                    assert!(
                        o.said.contains("saved as --model-unlisted asks"),
                        "{who}: {}",
                        o.said
                    );
                }
                "/models answers 500" => {
                    for says in ["saved unchecked", "could not be read", "HTTP 500"] {
                        assert!(o.said.contains(says), "{who}: {says}: {}", o.said);
                    }
                }
                "unreachable" => {
                    // The host and port, what happened and what to do, in one note.
                    let to = endpoint
                        .trim_start_matches("http://")
                        .trim_end_matches("/v1");
                    for says in [
                        "saved unchecked",
                        &format!("could not connect to {to}"),
                        "connection was refused",
                        "start the server",
                    ] {
                        assert!(o.said.contains(says), "{who}: {says}: {}", o.said);
                    }
                }
                _ => {}
            }
        }
    }
}

/// Extraction's test request is not sent to a server that could not be reached (it could
/// fare no better), and `--json` says which check went unchecked and that it was saved.
#[test]
fn an_unreachable_server_is_saved_unprobed_and_json_says_so() {
    let env = env();
    let gone = format!("http://127.0.0.1:{}/v1", closed_port());
    let v = env.json(&[
        "recall",
        "extract",
        "setup",
        "--endpoint",
        &gone,
        "--model",
        "m",
    ]);
    assert_eq!(v["saved"], true, "{v}");
    assert_eq!(
        v["test"]["models"]["listing"]["state"], "unreachable",
        "{v}"
    );
    let probe = v["test"]["checks"]
        .as_array()
        .and_then(|c| c.iter().find(|c| c["name"] == "probe"))
        .cloned()
        .unwrap_or_default();
    assert_eq!(probe["ok"], false, "{v}");
    assert!(
        probe["detail"]
            .as_str()
            .unwrap_or("")
            .starts_with("not sent"),
        "{v}"
    );
    let v = env.json(&["insights", "setup", "--endpoint", &gone, "--model", "m"]);
    assert_eq!(v["test"]["listing"]["state"], "unreachable", "{v}");
    assert_eq!(v["model"], "m", "{v}");
}

/// Both setups take the same flags: `--allow-http` and `--model-unlisted` on each.
#[test]
fn both_setups_take_the_same_flags() {
    let env = env();
    for setup in SETUPS {
        let mut help = setup.to_vec();
        help.push("--help");
        let text = env.ok(&help);
        for flag in [
            "--allow-http",
            "--model-unlisted",
            "--no-test",
            "--api-key-env",
        ] {
            assert!(text.contains(flag), "{}: {flag}", setup.join(" "));
        }
    }
}

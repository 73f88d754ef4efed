//! Detection of generators: stand-in agent CLIs on a temp `PATH`, a fake OpenAI-compatible
//! server on an ephemeral loopback port, a closed port, and a made-up environment. Hostile
//! versions and model names come back printable; nothing but loopback is contacted.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::fake_llm;

use std::os::unix::fs::PermissionsExt as _;
use std::path::Path;

use cairn_core::llm::detect::{DetectedKind, Probe, detect};
use fake_llm::{FakeLlm, Reply};
use serde_json::json;

fn script(dir: &Path, name: &str, body: &str) {
    let p = dir.join(name);
    std::fs::write(&p, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// A port nothing listens on (bound, then released).
fn closed_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port()
}

#[test]
fn finds_agents_servers_and_keys_without_sending_anything() {
    let bin = tempfile::tempdir().unwrap();
    script(bin.path(), "claude", "echo '2.1.3 (Claude Code)'");
    // A version line with a terminal title sequence and colours.
    script(
        bin.path(),
        "codex",
        "printf '\\033]0;pwned\\007\\033[31mcodex-cli 0.50.0\\033[0m\\n'",
    );
    script(bin.path(), "copilot", "exit 0");
    // Not executable: not an agent.
    std::fs::write(bin.path().join("gemini"), "#!/bin/sh\necho 1\n").unwrap();

    let fake = FakeLlm::start(None);
    fake.push(Reply::json(
        200,
        json!({"object": "list", "data": [{"id": "qwen3-8b"}, {"id": "bad\u{1b}[2Jname"}]}),
    ));
    let probe = Probe {
        path: std::env::join_paths([bin.path()]).unwrap(),
        servers: vec![
            ("ollama".into(), "Ollama".into(), fake.port),
            ("vllm".into(), "vLLM".into(), closed_port()),
        ],
        set_variables: vec!["OPENAI_API_KEY".into(), "SOME_OTHER_VAR".into()],
    };
    let found = detect(&probe);
    let names: Vec<(DetectedKind, &str)> =
        found.iter().map(|g| (g.kind, g.name.as_str())).collect();
    assert_eq!(
        names,
        [
            (DetectedKind::Agent, "claude"),
            (DetectedKind::Agent, "codex"),
            (DetectedKind::Agent, "copilot"),
            (DetectedKind::Server, "ollama"),
            (DetectedKind::Key, "OPENAI_API_KEY"),
        ]
    );
    assert_eq!(found[0].version.as_deref(), Some("2.1.3 (Claude Code)"));
    assert_eq!(found[0].label, "claude 2.1.3 (Claude Code)");
    assert_eq!(found[1].version.as_deref(), Some("codex-cli 0.50.0"));
    assert!(
        found[2]
            .problem
            .as_deref()
            .unwrap()
            .contains("printed nothing")
    );
    let server = &found[3];
    assert_eq!(server.endpoint.as_deref(), Some(fake.url().as_str()));
    assert_eq!(server.models, ["qwen3-8b", "badname"]);
    assert!(!server.paid && server.problem.is_none());
    let key = &found[4];
    assert!(key.paid);
    assert_eq!(key.api_key_env.as_deref(), Some("OPENAI_API_KEY"));
    // Only `/models` was asked, once, with no key.
    let reqs = fake.requests();
    assert_eq!(reqs.len(), 1);
    assert!(reqs[0].path.ends_with("/v1/models") && reqs[0].method == "GET");
    assert!(reqs[0].header("authorization").is_none());
}

#[test]
fn a_server_that_lists_nothing_or_fails_says_so() {
    let fake = FakeLlm::start(None);
    fake.push(Reply::json(200, json!({"object": "list", "data": []})));
    let probe = Probe {
        path: "".into(),
        servers: vec![("llamacpp".into(), "llama.cpp".into(), fake.port)],
        set_variables: vec![],
    };
    let found = detect(&probe);
    assert!(
        found[0]
            .problem
            .as_deref()
            .unwrap()
            .contains("lists no model")
    );
    fake.push(Reply::json(500, json!({"error": "\u{1b}[2Jboom"})));
    let found = detect(&probe);
    let problem = found[0].problem.clone().unwrap();
    assert!(
        problem.contains("/v1/models` failed") && !problem.contains('\u{1b}'),
        "{problem}"
    );
}

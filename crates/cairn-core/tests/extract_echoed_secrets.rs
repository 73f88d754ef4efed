//! A model that echoes a secret into the part of its answer that breaks the format (a type, a
//! key's name, a nested key, an evidence id, a finish reason): the failure it causes says what
//! broke without a byte of the secret, in the pass's report, its events, `extract status` and
//! the database file (its write-ahead log too), for extraction and for generated insights.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::fake_llm;
use crate::support;

use std::path::Path;
use std::sync::Mutex;
use std::time::Duration;

use cairn_core::Cairn;
use cairn_core::archive::Agent;
use cairn_core::insights::{Automation, GenerateRequest, SliceRequest};
use cairn_core::llm::{Client, EndpointGenerator, RetryPolicy};
use cairn_core::recall::extract::{Event, ExtractProgress, RunOptions, Scope};
use fake_llm::{FakeLlm, Reply};
use serde_json::{Value, json};

const GITHUB: &str = "ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8";
const AWS: &str = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEYZ";
/// `claude/tool_heavy.jsonl`'s session.
const SESSION: &str = "d6e0bada-1959-4eec-a9d2-0bfade768d8f";

/// Whether `text` holds any 10-byte run of either secret (past the token's public prefix).
fn leaks(text: &[u8]) -> Option<String> {
    [GITHUB, AWS].iter().find_map(|s| {
        let secret = &s.as_bytes()[4..];
        secret
            .windows(10)
            .find(|w| text.windows(10).any(|t| t == *w))
            .map(|w| String::from_utf8_lossy(w).into_owned())
    })
}

/// An answer that is one well-formed entry, changed by `edit`.
fn answer(edit: impl Fn(&mut serde_json::Map<String, Value>)) -> Reply {
    let mut e = json!({"type": "fact", "title": "Deps first", "body": "Run mix deps.get.",
        "trigger": "", "confidence": 0.5, "entities": [], "evidence": {"first": 0, "last": 0}});
    edit(e.as_object_mut().unwrap());
    Reply::chat(&json!({ "entries": [e] }).to_string(), "stop")
}

#[derive(Default)]
struct Events(Mutex<Vec<Event>>);
impl ExtractProgress for Events {
    fn event(&self, e: &Event) {
        self.0.lock().unwrap().push(e.clone());
    }
}

#[test]
fn a_secret_echoed_in_a_broken_extraction_answer_is_never_shown_or_stored() {
    let fake = FakeLlm::start(None);
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    std::fs::create_dir_all(&data).unwrap();
    std::fs::write(
        data.join("config.toml"),
        format!(
            "[recall.extract]\nenabled = true\nmodel = \"m\"\nconcurrency = 1\n\n[recall.extract.servers.local]\nendpoint = \"{}\"\n",
            fake.url()
        ),
    )
    .unwrap();
    let cairn = Cairn::open(&data).unwrap();
    let transcript = support::fixtures().join("claude/tool_heavy.jsonl");
    support::capture(&cairn, &[support::main_file(Agent::Claude, &transcript)]);

    let hostile: [(&str, Reply); 6] = [
        (
            "entries[0].type \"[REDACTED:",
            answer(|e| {
                e.insert("type".into(), json!(GITHUB));
            }),
        ),
        (
            "entries[0] has an unknown key \"[REDACTED:",
            answer(|e| {
                e.insert(AWS.into(), json!(1));
            }),
        ),
        (
            "entries[0].evidence has an unknown key \"[REDACTED:",
            answer(|e| {
                e.insert("evidence".into(), json!({"first": 0, "last": 0, GITHUB: 0}));
            }),
        ),
        (
            "entries[0].evidence.first is not an integer",
            answer(|e| {
                e.insert("evidence".into(), json!({"first": GITHUB, "last": 0}));
            }),
        ),
        (
            "the reply has an unknown key \"[REDACTED:",
            Reply::chat(&json!({"entries": [], AWS: true}).to_string(), "stop"),
        ),
        (
            "finish_reason \"[REDACTED:",
            Reply::chat(r#"{"entries": []}"#, GITHUB),
        ),
    ];
    let options = RunOptions {
        scope: Scope {
            session: Some(SESSION.into()),
            ..Scope::default()
        },
        ..RunOptions::default()
    };
    for (says, reply) in hostile {
        fake.fail_after(0, Some(reply));
        let events = Events::default();
        let r = cairn.recall_extract_run(&options, &events).unwrap();
        assert_eq!(r.failed, 1, "{says}: {r:?}");
        let error = &r.failures[0].error;
        assert!(error.contains(says), "{says}: {error}");
        let shown = format!("{r:?} {:?}", events.0.lock().unwrap());
        assert_eq!(leaks(shown.as_bytes()), None, "{shown}");
        let status = cairn.recall_extract_status().unwrap();
        let listed = serde_json::to_string(&status).unwrap();
        assert!(
            status.failures.iter().any(|f| f.error.contains(says)),
            "{says}: {listed}"
        );
        assert_eq!(leaks(listed.as_bytes()), None, "{listed}");
    }
    // Every byte Cairn keeps: the database and what its log has not yet moved into it.
    for file in ["cairn.db", "cairn.db-wal"] {
        if let Ok(bytes) = std::fs::read(data.join(file)) {
            assert_eq!(leaks(&bytes), None, "{file}");
        }
    }
}

#[test]
fn an_insights_answer_that_breaks_the_protocol_is_said_without_its_secret() {
    let fake = FakeLlm::start(None);
    let data = tempfile::tempdir().unwrap();
    let cairn = Cairn::open(data.path()).unwrap();
    let transcript = support::fixtures().join("claude/tool_heavy.jsonl");
    support::capture(&cairn, &[support::main_file(Agent::Claude, &transcript)]);
    let server = cairn_core::llm::ServerConfig {
        endpoint: fake.url(),
        ..Default::default()
    }
    .resolve(Path::new("config.toml"), "insights")
    .unwrap();
    let mut client = Client::new(&server).unwrap();
    client.retry = RetryPolicy {
        max_attempts: 1,
        base: Duration::from_millis(1),
        cap: Duration::from_millis(1),
    };
    let generator = EndpointGenerator::with_client(client, "m", "h".into());
    let req = GenerateRequest {
        slice: SliceRequest {
            since: Some("2000-01-01".into()),
            until: Some("2100-01-01".into()),
            automation: Automation::Include,
            ..SliceRequest::default()
        },
        template: "weekly-summary".into(),
        force: true,
        ..GenerateRequest::default()
    };
    let number = Reply::json(
        200,
        json!({"choices": [{"index": 0, "message": {"role": "assistant", "content": 42}, "finish_reason": "stop"}]}),
    );
    for (reply, says) in [
        (
            Reply::chat("# Report", &format!("stopped by {GITHUB}")),
            "finish_reason \"stopped by [REDACTED:",
        ),
        (number, "the model's content is a number, not text"),
    ] {
        fake.fail_after(0, Some(reply));
        let err = cairn
            .insight_generate_with(&req, &generator, &|_| {})
            .unwrap_err()
            .to_string();
        assert!(err.contains(says), "{err}");
        assert_eq!(leaks(err.as_bytes()), None, "{err}");
    }
}

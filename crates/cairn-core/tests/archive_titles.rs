//! A session is titled by its first real request: harness text an agent injects as a user
//! message (a `<system-reminder>`, Codex's `<environment_context>`) never titles it.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use cairn_core::Cairn;
use cairn_core::archive::Agent;
use cairn_core::archive::store::SessionQuery;
use support::{capture, main_file};

const CLAUDE: &str = r#"{"type":"user","sessionId":"11111111-2222-3333-4444-555555555555","uuid":"u1","timestamp":"2026-11-01T10:00:00Z","cwd":"/tmp/x","message":{"role":"user","content":"<system-reminder> PostToolUse:Write hook additional context: lint ok</system-reminder>"}}
{"type":"user","sessionId":"11111111-2222-3333-4444-555555555555","uuid":"u2","parentUuid":"u1","timestamp":"2026-11-01T10:00:01Z","cwd":"/tmp/x","message":{"role":"user","content":"Fix the flaky login test"}}
{"type":"assistant","sessionId":"11111111-2222-3333-4444-555555555555","uuid":"a1","parentUuid":"u2","timestamp":"2026-11-01T10:00:02Z","cwd":"/tmp/x","message":{"role":"assistant","model":"claude-x","content":[{"type":"text","text":"ok"}]}}
"#;

const CODEX: &str = r#"{"timestamp":"2026-11-01T10:00:00Z","type":"session_meta","payload":{"id":"0199aaaa-bbbb-7ccc-8ddd-eeeeeeeeeeee","timestamp":"2026-11-01T10:00:00Z","cwd":"/tmp/x","originator":"codex_cli_rs","cli_version":"0.50.0"}}
{"timestamp":"2026-11-01T10:00:01Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"<environment_context>\n  <cwd>/home/user/projects/x</cwd>\n</environment_context>"}]}}
{"timestamp":"2026-11-01T10:00:02Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"Rename the config loader"}]}}
"#;

/// Only harness text: the session keeps it as its title rather than none.
const ONLY_HARNESS: &str = r#"{"type":"user","sessionId":"66666666-2222-3333-4444-555555555555","uuid":"u1","timestamp":"2026-11-01T11:00:00Z","cwd":"/tmp/x","message":{"role":"user","content":"<system-reminder> nothing else</system-reminder>"}}
"#;

#[test]
fn harness_text_never_titles_a_session() {
    let data = tempfile::tempdir().unwrap();
    let src = tempfile::tempdir().unwrap();
    let claude = src
        .path()
        .join("11111111-2222-3333-4444-555555555555.jsonl");
    let codex = src
        .path()
        .join("rollout-2026-11-01T10-00-00-0199aaaa-bbbb-7ccc-8ddd-eeeeeeeeeeee.jsonl");
    let only = src
        .path()
        .join("66666666-2222-3333-4444-555555555555.jsonl");
    std::fs::write(&claude, CLAUDE).unwrap();
    std::fs::write(&codex, CODEX).unwrap();
    std::fs::write(&only, ONLY_HARNESS).unwrap();
    let cairn = Cairn::open(data.path()).unwrap();
    capture(
        &cairn,
        &[
            main_file(Agent::Claude, &claude),
            main_file(Agent::Codex, &codex),
            main_file(Agent::Claude, &only),
        ],
    );
    let listed = cairn.sessions(&SessionQuery::default()).unwrap();
    let first = |id: &str| {
        listed
            .iter()
            .find(|s| s.session_id.as_deref() == Some(id))
            .and_then(|s| s.first_prompt.clone())
            .unwrap_or_else(|| panic!("{id} not listed with a first prompt: {listed:?}"))
    };
    assert_eq!(
        first("11111111-2222-3333-4444-555555555555"),
        "Fix the flaky login test"
    );
    assert_eq!(
        first("0199aaaa-bbbb-7ccc-8ddd-eeeeeeeeeeee"),
        "Rename the config loader"
    );
    assert!(first("66666666-2222-3333-4444-555555555555").starts_with("<system-reminder>"));
}

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

/// Set `path`'s mtime `secs` seconds ahead of now: a later write than any before it, whatever
/// the file system's clock granularity.
fn touch_ahead(path: &std::path::Path, secs: u64) {
    let at = std::time::SystemTime::now() + std::time::Duration::from_secs(secs);
    std::fs::File::options()
        .write(true)
        .open(path)
        .unwrap()
        .set_modified(at)
        .unwrap();
}

/// The JSON file at `path` with the string at `keys` set to `value`.
fn set_json(path: &std::path::Path, keys: &[&str], value: &str) {
    let mut doc: serde_json::Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    let (last, parents) = keys.split_last().unwrap();
    let mut at = &mut doc;
    for k in parents {
        at = at.get_mut(*k).unwrap();
    }
    at[*last] = serde_json::Value::String(value.to_owned());
    std::fs::write(path, serde_json::to_vec_pretty(&doc).unwrap()).unwrap();
}

/// A title an agent writes into the file beside its transcript after the last message (Grok's
/// `summary.json`, Vibe's `meta.json`, gptme's `config.toml`, Posit Assistant's
/// `conversation.json`) is read by the next sync without the transcript's lines read again, and
/// the watcher takes a change to that file for a change of the transcript.
#[test]
fn a_title_written_beside_a_transcript_alone_is_read() {
    use cairn_core::archive::discover;
    let src = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let fixtures = support::fixtures();
    let grok_rel =
        "grok/%2Ftmp%2Fas-agent-lab%2Fgrok%2Fproject/019f6851-7ec4-7ef0-97d3-03f3eee38755";
    let gptme_rel = "gptme/2026-06-13-write-hello-world";
    let kiro_rel = "kiro/sessions/cli/4ee402eb-0bbe-44ef-92da-923291ef2206";
    // (agent, transcript, the file beside it, its fixture files)
    let cases = [
        (
            Agent::Grok,
            format!("{grok_rel}/chat_history.jsonl"),
            format!("{grok_rel}/summary.json"),
        ),
        (
            Agent::Vibe,
            "vibe/session_basic/messages.jsonl".to_owned(),
            "vibe/session_basic/meta.json".to_owned(),
        ),
        (
            Agent::Gptme,
            format!("{gptme_rel}/conversation.jsonl"),
            format!("{gptme_rel}/config.toml"),
        ),
        (
            Agent::Posit,
            "posit/a1b2c3d4/11111111/lm-messages.jsonl".to_owned(),
            "posit/a1b2c3d4/11111111/conversation.json".to_owned(),
        ),
        (
            Agent::Kiro,
            format!("{kiro_rel}.jsonl"),
            format!("{kiro_rel}.json"),
        ),
        (
            Agent::Droid,
            "droid/session_store_small.jsonl".to_owned(),
            "droid/session_store_small.settings.json".to_owned(),
        ),
    ];
    for (_, transcript, beside) in &cases {
        support::copy_into(&fixtures.join(transcript), src.path(), transcript);
        if fixtures.join(beside).exists() {
            support::copy_into(&fixtures.join(beside), src.path(), beside);
        }
    }
    let workspace = "posit/a1b2c3d4/workspace.json";
    support::copy_into(&fixtures.join(workspace), src.path(), workspace);
    let files: Vec<_> = cases
        .iter()
        .map(|(agent, transcript, _)| {
            discover::classify(*agent, &src.path().join(transcript)).unwrap()
        })
        .collect();
    let cairn = Cairn::open(data.path()).unwrap();
    assert!(capture(&cairn, &files).records_added > 0);
    // Each session's title, or for Droid (whose settings name no title) its model.
    let titles = |cairn: &Cairn| -> Vec<(Agent, Option<String>)> {
        let mut t: Vec<_> = cairn
            .sessions(&SessionQuery::default())
            .unwrap()
            .into_iter()
            .map(|s| match s.agent {
                Agent::Droid => (s.agent, s.model),
                _ => (s.agent, s.title),
            })
            .collect();
        t.sort();
        t
    };
    let before = titles(&cairn);
    assert_eq!(before.len(), cases.len(), "{before:?}");
    assert!(
        before.iter().all(|(_, t)| t.as_deref() != Some("Renamed")),
        "{before:?}"
    );
    let records = support::count(data.path(), "SELECT COUNT(*) FROM records");

    // Each agent names the session again, in the file beside the transcript alone (gptme's
    // `config.toml` and Droid's settings appear only now).
    set_json(
        &src.path().join(&cases[0].2),
        &["generated_title"],
        "Renamed",
    );
    set_json(&src.path().join(&cases[1].2), &["title"], "Renamed");
    std::fs::write(src.path().join(&cases[2].2), "[chat]\nname = \"Renamed\"\n").unwrap();
    set_json(&src.path().join(&cases[3].2), &["root", "title"], "Renamed");
    set_json(&src.path().join(&cases[4].2), &["title"], "Renamed");
    std::fs::write(src.path().join(&cases[5].2), r#"{"model": "Renamed"}"#).unwrap();
    for (_, _, beside) in &cases {
        touch_ahead(&src.path().join(beside), 5);
    }
    let again = capture(&cairn, &files);
    assert_eq!((again.records_added, again.records_updated), (0, 0));
    let after = titles(&cairn);
    assert_eq!(after.len(), before.len());
    for (agent, title) in &after {
        assert_eq!(title.as_deref(), Some("Renamed"), "{agent:?}: {after:?}");
    }
    // Nothing read twice: the same records, no source read again from its start.
    assert_eq!(
        support::count(data.path(), "SELECT COUNT(*) FROM records"),
        records
    );
    assert_eq!(
        support::count(data.path(), "SELECT MAX(generation) FROM sources"),
        0
    );
    // Read once: the next sync finds nothing to do, and the titles stay.
    let stamps = "SELECT SUM(sidecar_mtime_ns > 0) FROM sources";
    assert_eq!(support::count(data.path(), stamps), cases.len() as i64);
    capture(&cairn, &files);
    assert_eq!(titles(&cairn), after);

    // The watcher: the file beside a transcript stands for it; a workspace's `workspace.json`
    // (for every conversation in it) and an unrelated file for none.
    for ((agent, transcript, beside), file) in cases.iter().zip(&files) {
        let mapped = discover::transcript_of_change(*agent, &src.path().join(beside));
        assert_eq!(
            mapped.map(|f| f.path),
            Some(file.path.clone()),
            "{transcript}"
        );
    }
    assert!(discover::transcript_of_change(Agent::Posit, &src.path().join(workspace)).is_none());
    let stray = src.path().join(gptme_rel).join("notes.toml");
    std::fs::write(&stray, "x = 1\n").unwrap();
    assert!(discover::transcript_of_change(Agent::Gptme, &stray).is_none());
}

//! Cursor agent transcripts: golden over the fixtures (`tests/fixtures/cursor/`, see
//! SOURCES.md), records identified by position (lines repeat verbatim), sub-agents attached to
//! their parent, hostile lines never fatal.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use std::io::Write as _;
use std::path::Path;

use cairn_core::Cairn;
use cairn_core::archive::Agent;
use cairn_core::archive::capture::Quiet;
use cairn_core::views::sessions::SessionQuery;
use serde_json::{Value, json};

fn texts(data: &Path) -> Vec<String> {
    let conn = rusqlite::Connection::open(data.join("cairn.db")).unwrap();
    let mut stmt = conn
        .prepare("SELECT coalesce(text, '') FROM records ORDER BY session_id, ordinal")
        .unwrap();
    stmt.query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

#[test]
fn cursor_fixture_sessions_are_pinned() {
    let data = tempfile::tempdir().unwrap();
    let cairn = Cairn::open(data.path()).unwrap();
    let files = support::found(Agent::Cursor, &support::fixtures().join("cursor"));
    assert_eq!(files.len(), 7, "{files:?}");
    let report = cairn.capture_paths(&files, &Quiet).unwrap();
    let mut sessions = Vec::new();
    for s in cairn.sessions(&SessionQuery::default()).unwrap() {
        let d = cairn.session(&s.session_key).unwrap();
        sessions.push(json!({
            "session_id": d.session_id, "relation": d.relation, "model": d.model, "turns": d.turn_count,
            "records": d.record_count, "kinds": d.kinds, "tools": d.tools, "edited_paths": d.edited_paths,
            "unknown_types": d.unknown_types, "subagents": d.subagents.len(), "first_prompt": s.first_prompt,
        }));
    }
    sessions.sort_by_key(|v| format!("{}{}", v["session_id"], v["relation"]));
    let conn = rusqlite::Connection::open(data.path().join("cairn.db")).unwrap();
    let tools: Vec<String> = conn
        .prepare(
            "SELECT s.session_id, r.kind, r.tool_name, r.tool_kind, r.call_id, r.outcome, r.exit_code
             FROM records r JOIN sessions s ON s.id = r.session_id
             WHERE r.kind IN ('tool_call', 'tool_result') ORDER BY s.session_key, r.ordinal",
        )
        .unwrap()
        .query_map([], |r| {
            Ok(format!(
                "{} {} {} {} {} {} {:?}",
                r.get::<_, Option<String>>(0)?.unwrap_or_default(),
                r.get::<_, String>(1)?,
                r.get::<_, Option<String>>(2)?.unwrap_or_default(),
                r.get::<_, Option<String>>(3)?.unwrap_or_default(),
                r.get::<_, Option<String>>(4)?.unwrap_or_default(),
                r.get::<_, Option<String>>(5)?.unwrap_or_default(),
                r.get::<_, Option<i64>>(6)?,
            ))
        })
        .unwrap()
        .map(Result::unwrap)
        .collect();
    support::assert_ordinals_dense(data.path());
    assert!(report.warnings.is_empty(), "{:?}", report.warnings);
    insta::assert_json_snapshot!(
        "cursor",
        json!({"sessions": sessions, "tool_records": tools})
    );

    let before = support::dump(data.path());
    let again = cairn.capture_paths(&files, &Quiet).unwrap();
    assert_eq!((again.records_added, again.records_updated), (0, 0));
    assert_eq!(support::dump(data.path()), before);
}

/// Identical lines are different records: two "Thanks." prompts are two turns, and appending
/// the same line once more adds exactly one record.
#[test]
fn repeated_lines_are_kept_each_time() {
    let src = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let dir = src.path().join("-p/agent-transcripts");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("s1.jsonl");
    let thanks = json!({"role":"user","message":{"content":[{"type":"text","text":"<user_query>\nThanks.\n</user_query>"}]}});
    let ok = json!({"role":"assistant","message":{"content":[{"type":"text","text":"OK."}]}});
    let text: String = [&thanks, &ok, &thanks, &ok]
        .iter()
        .map(|l| format!("{l}\n"))
        .collect();
    std::fs::write(&path, text).unwrap();
    let cairn = Cairn::open(data.path()).unwrap();
    let files = support::found(Agent::Cursor, src.path());
    let first = support::capture(&cairn, &files);
    assert_eq!(first.records_added, 4);
    assert_eq!(texts(data.path()), ["Thanks.", "OK.", "Thanks.", "OK."]);
    let d = cairn.sessions(&SessionQuery::default()).unwrap();
    assert_eq!(d[0].session_id.as_deref(), Some("s1"));
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap();
    writeln!(f, "{thanks}").unwrap();
    let second = support::capture(&cairn, &files);
    assert_eq!(second.records_added, 1);
    let again = support::capture(&cairn, &files);
    assert_eq!(again.records_added, 0);
}

/// Control sequences, a huge prompt, wrong types, a deep nest and a half-written last line:
/// never fatal, the huge text capped, the half line read once complete.
#[test]
fn hostile_lines_are_warnings_or_stored_never_fatal() {
    let src = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let dir = src.path().join("-p/agent-transcripts");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("h.jsonl");
    let prompt = |t: &str| json!({"role":"user","message":{"content":[{"type":"text","text":t}]}});
    let huge = "y".repeat(2 << 20);
    let lines: Vec<Value> = vec![
        prompt("esc \u{1b}[2J\u{1b}]0;title\u{7} bidi \u{202e}evil"),
        json!({"role": ["user"], "message": 5}),
        json!({"role": "assistant", "message": {"content": [1, null, {"type": 3}, {"type": "tool_use", "name": {"x": 1}, "input": "s"}]}}),
        json!({"role": "user", "message": {"content": [{"type": "tool_result", "tool_use_id": 7, "content": {"a": 1}}]}}),
        json!({"role": "assistant", "message": {"content": "a bare string"}}),
        prompt(&huge),
        prompt("last"),
    ];
    let mut text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    text.push_str(&format!(
        "{{\"type\":{}{}}}\n",
        "[".repeat(100_000),
        "]".repeat(100_000)
    ));
    let half = prompt("half done").to_string();
    let (head, tail) = half.split_at(half.len() / 2);
    text.push_str(head);
    std::fs::write(&path, text).unwrap();
    let cairn = Cairn::open(data.path()).unwrap();
    let files = support::found(Agent::Cursor, src.path());
    support::capture(&cairn, &files);
    let stored = texts(data.path());
    assert!(
        stored.iter().any(|t| t.starts_with("esc \u{1b}[2J")),
        "{stored:?}"
    );
    assert!(stored.iter().any(|t| t == "last"));
    assert!(stored.iter().any(|t| t == "a bare string"));
    let big = stored.iter().find(|t| t.starts_with("yyyy")).unwrap();
    assert!(big.len() < huge.len() / 4);
    assert!(!stored.iter().any(|t| t.contains("half")));
    std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap()
        .write_all(format!("{tail}\n").as_bytes())
        .unwrap();
    let again = support::capture(&cairn, &files);
    assert_eq!(again.records_added, 1);
}

/// Cursor writes no cwd; its project's slug names the folder (every character that is not a
/// letter or digit written as `-`). The session is placed there when exactly one folder on disk
/// slugs so: not when two do (`my.app` and `my/app`), nor when none does.
#[test]
fn a_session_runs_in_the_one_folder_its_project_slug_names() {
    let root = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(root.path()).unwrap();
    let project = root.join("work").join("my.app");
    std::fs::create_dir_all(&project).unwrap();
    let slug_of = |p: &Path| -> String {
        p.to_str()
            .unwrap()
            .trim_start_matches('/')
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
            .collect()
    };
    let slug = slug_of(&project);
    let projects = root.join("home/.cursor/projects");
    let small = support::fixtures().join("cursor/-tmp-repo/agent-transcripts/small.jsonl");
    let put = |slug: &str, id: &str| {
        let dir = projects.join(slug).join("agent-transcripts");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::copy(&small, dir.join(format!("{id}.jsonl"))).unwrap();
    };
    put(&slug, "placed");
    // A folder that does not exist yet.
    let later = root.join("later");
    put(&slug_of(&later), "nowhere");
    let data = root.join("data");
    let cairn = Cairn::open(&data).unwrap();
    cairn
        .capture_paths(&support::found(Agent::Cursor, &projects), &Quiet)
        .unwrap();
    let cwd = |id: &str| cairn.session(id).unwrap().cwd;
    assert_eq!(cwd("placed"), Some(project.to_string_lossy().into_owned()));
    assert_eq!(cwd("nowhere"), None);

    // A second folder slugging alike makes the slug ambiguous: a new session is placed nowhere.
    std::fs::create_dir_all(root.join("work").join("my").join("app")).unwrap();
    put(&slug, "ambiguous");
    cairn
        .capture_paths(&support::found(Agent::Cursor, &projects), &Quiet)
        .unwrap();
    assert_eq!(cwd("ambiguous"), None);

    // Read again once its folder exists (made after the session was read): placed.
    std::fs::create_dir_all(&later).unwrap();
    cairn
        .reindex(
            &cairn_core::ReindexRequest {
                session: Some("nowhere".into()),
                ..Default::default()
            },
            &Quiet,
        )
        .unwrap();
    assert_eq!(cwd("nowhere"), Some(later.to_string_lossy().into_owned()));
}

/// A project folder named after a token: the session is placed there, its folder kept without
/// the token, and no byte of it (in the project slug's folder, the cwd, the project's name)
/// reaches the data dir.
#[test]
fn a_project_folder_named_after_a_token_is_placed_without_it() {
    let token = "ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8";
    let root = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(root.path()).unwrap();
    let project = root.join("work").join(token);
    std::fs::create_dir_all(&project).unwrap();
    let slug: String = project
        .to_str()
        .unwrap()
        .trim_start_matches('/')
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    let projects = root.join("home/.cursor/projects");
    let dir = projects.join(&slug).join("agent-transcripts");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(
        support::fixtures().join("cursor/-tmp-repo/agent-transcripts/small.jsonl"),
        dir.join("placed.jsonl"),
    )
    .unwrap();
    let data = root.join("data");
    let cairn = Cairn::open(&data).unwrap();
    cairn
        .capture_paths(&support::found(Agent::Cursor, &projects), &Quiet)
        .unwrap();
    let cwd = cairn.session("placed").unwrap().cwd.unwrap();
    assert!(cwd.contains("/work/[REDACTED:"), "{cwd}");
    let leaks: Vec<String> = support::every_byte_under(&data)
        .iter()
        .filter(|(_, bytes)| memchr::memmem::find(bytes, token.as_bytes()).is_some())
        .map(|(name, _)| name.clone())
        .collect();
    assert!(leaks.is_empty(), "the token reached: {leaks:?}");
}

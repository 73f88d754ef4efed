//! The turn digest the `sessions` vector store embeds, read from a real capture: a Claude Code
//! session (an edit, a command with a secret in it, a Codex-style argv) replayed into an archive.
//! The digest names the request, the outcome, the files and the commands, never the secret, and
//! an archive whose vectors were made from the previous recipe is told so, with the count and the
//! command that re-embeds it, resumably.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use cairn_core::Cairn;
use cairn_core::archive::Agent;
use cairn_core::archive::store::turn_text;
use cairn_core::semantic::digest::turn_digest;
use cairn_core::semantic::vectors::VectorStore;
use cairn_core::views::search::SearchQuery;
use serde_json::json;

const SECRET: &str = "ghp_R8x2Kq9ZtP4mVw7LbN3cY6dH1sJ0fA5gE2uQ";

fn transcript() -> String {
    let env = |i: usize, extra: serde_json::Value| {
        let mut v = json!({"sessionId": "digest-1", "cwd": "/home/dev/shop", "gitBranch": "main",
            "timestamp": format!("2026-03-01T10:{i:02}:00.000Z"), "uuid": format!("u-{i}")});
        v.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        v.to_string()
    };
    [
        env(0, json!({"type":"user","message":{"role":"user","content":"Make login accept any known user, with a test"}})),
        env(1, json!({"type":"assistant","message":{"id":"m1","role":"assistant","model":"claude-x","content":[
            {"type":"tool_use","id":"t1","name":"Edit","input":{"file_path":"/home/dev/shop/src/login.js","old_string":"return false;","new_string":"return user !== null;"}}
        ]}})),
        env(2, json!({"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"ok"}]}})),
        env(3, json!({"type":"assistant","message":{"id":"m2","role":"assistant","model":"claude-x","content":[
            {"type":"tool_use","id":"t2","name":"Bash","input":{"command":format!("GITHUB_TOKEN={SECRET} npm test -- login\nnpm run lint")}}
        ]}})),
        env(4, json!({"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t2","content":"test login ... ok"}]}})),
        env(5, json!({"type":"assistant","message":{"id":"m3","role":"assistant","model":"claude-x","content":[
            {"type":"text","text":"Implemented: login now accepts known users. The tests pass."}
        ]}})),
    ]
    .join("\n")
        + "\n"
}

fn archive() -> (tempfile::TempDir, Cairn) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("digest.jsonl");
    std::fs::write(&file, transcript()).unwrap();
    let cairn = Cairn::open(dir.path().join("data")).unwrap();
    support::capture(&cairn, &[support::main_file(Agent::Claude, &file)]);
    (dir, cairn)
}

#[test]
fn a_captured_turn_digests_to_request_outcome_files_and_commands_without_secrets() {
    let (dir, _cairn) = archive();
    let conn = rusqlite::Connection::open(dir.path().join("data/cairn.db")).unwrap();
    let ids: Vec<i64> = conn
        .prepare("SELECT id FROM turns")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<rusqlite::Result<_>>()
        .unwrap();
    assert_eq!(ids.len(), 1, "{ids:?}");
    let turn = turn_text(&conn, ids[0]).unwrap().unwrap();
    let digest = turn_digest(&turn);
    let lines: Vec<&str> = digest.lines().collect();
    assert_eq!(
        lines[0], "Make login accept any known user, with a test",
        "{digest}"
    );
    assert_eq!(
        lines[1], "Implemented: login now accepts known users. The tests pass.",
        "{digest}"
    );
    assert_eq!(lines[2], "files: src/login.js", "{digest}");
    assert!(
        lines[3].starts_with("ran: GITHUB_TOKEN=") && lines[3].ends_with("npm test -- login"),
        "only the command's first line: {digest}"
    );
    assert!(
        !digest.contains(SECRET),
        "the digest is made of redacted columns: {digest}"
    );
    assert!(!digest.contains("R8x2Kq9"), "{digest}");
}

#[test]
fn vectors_from_the_previous_recipe_are_refused_until_rebuilt_resumably() {
    support::ensure_model();
    let (dir, cairn) = archive();
    let search = |mode| {
        cairn.search(&SearchQuery {
            text: "which file holds the login check".into(),
            mode,
            limit: Some(5),
            ..Default::default()
        })
    };
    let report = cairn
        .embeddings_build(VectorStore::Sessions, false, &|_, _| {})
        .unwrap();
    assert_eq!(report.vectors, 1);
    assert!(
        report.fingerprint.ends_with("|session-turn-v2"),
        "{report:?}"
    );
    assert!(
        !search(cairn_core::semantic::Mode::Hybrid)
            .unwrap()
            .is_empty()
    );

    // What an archive built by the previous release holds: every vector and the state row under
    // the v1 recipe.
    let conn = rusqlite::Connection::open(dir.path().join("data/cairn.db")).unwrap();
    let old = report
        .fingerprint
        .replace("|session-turn-v2", "|session-turn-v1");
    conn.execute("UPDATE turn_vectors SET fingerprint = ?1", [&old])
        .unwrap();
    conn.execute(
        "UPDATE embedding_state SET fingerprint = ?1 WHERE store = 'sessions'",
        [&old],
    )
    .unwrap();
    let err = search(cairn_core::semantic::Mode::Hybrid).unwrap_err();
    let msg = err.to_string();
    assert!(
        msg.contains("older recipe") && msg.contains("1 turn to embed again"),
        "{msg}"
    );
    assert!(
        msg.contains("cairn embeddings build --store sessions"),
        "{msg}"
    );
    assert!(!msg.contains("another embedder"), "{msg}");
    // The status says so before any search is tried.
    let status = cairn.embeddings_status().unwrap();
    let sessions = status
        .stores
        .iter()
        .find(|s| s.store == VectorStore::Sessions)
        .unwrap();
    assert!(!sessions.fresh);
    assert_eq!(sessions.pending, Some(1));
    // The build re-embeds it (progress reported), then search runs again.
    let seen = std::sync::Mutex::new(Vec::new());
    let report = cairn
        .embeddings_build(VectorStore::Sessions, false, &|done, total| {
            seen.lock().unwrap().push((done, total))
        })
        .unwrap();
    assert_eq!(report.embedded, 1);
    assert_eq!(*seen.lock().unwrap(), vec![(1, 1)]);
    assert!(
        !search(cairn_core::semantic::Mode::Hybrid)
            .unwrap()
            .is_empty()
    );
}

//! `cairn sync` notices a commit that changed a file a trusted Recall entry cites: the entry
//! leaves service (the brief no longer serves it) without anyone running `--check-stale`, and
//! the sync says so in one line (and in `--json`, only then).

use serde_json::{Value, json};

use crate::support::{Env, git};

#[test]
fn a_commit_then_a_plain_sync_takes_a_stale_entry_out_of_the_brief() {
    let env = Env::new();
    let repo = env.root.path().join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    let repo = std::fs::canonicalize(repo).unwrap();
    git(&repo, &["init", "-q", "-b", "main"]);
    std::fs::write(repo.join("config.txt"), "port=4000\n").unwrap();
    std::fs::write(repo.join("notes.txt"), "nothing yet\n").unwrap();
    git(&repo, &["add", "."]);
    git(&repo, &["commit", "-q", "-m", "init"]);
    // A session that edited config.txt an hour ago (the commits below are later).
    let then = (jiff::Timestamp::now() - jiff::SignedDuration::from_hours(1))
        .strftime("%Y-%m-%dT%H:%M:%S%.3fZ")
        .to_string();
    let dir = env.claude().join("-repo");
    std::fs::create_dir_all(&dir).unwrap();
    let lines = [
        json!({"type":"user","sessionId":"s-sync","cwd":repo,"timestamp":then,
            "message":{"role":"user","content":"set the port"}}),
        json!({"type":"assistant","sessionId":"s-sync","cwd":repo,"timestamp":then,
            "message":{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"Edit",
                "input":{"file_path":repo.join("config.txt"),"old_string":"","new_string":"port=4000"}}]}}),
        json!({"type":"user","sessionId":"s-sync","cwd":repo,"timestamp":then,
            "message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"ok"}]}}),
    ];
    let text: Vec<String> = lines.iter().map(Value::to_string).collect();
    std::fs::write(dir.join("s-sync.jsonl"), text.join("\n") + "\n").unwrap();
    env.ok(&["sync"]);
    let file = env.root.path().join("e.jsonl");
    let line = json!({"candidate_id": "port", "session_id": "s-sync", "type": "fact",
        "scope": "project", "title": "The app listens on port 4000",
        "body": "config.txt sets port=4000", "transferable": true, "provenance_ok": true,
        "label": "correct",
        "evidence": {"ordinal_start": 0, "ordinal_end": 2, "snippets": ["port=4000"]}});
    std::fs::write(&file, format!("{line}\n")).unwrap();
    env.ok(&["recall", "import", file.to_str().unwrap(), "--yes"]);
    let served = |env: &Env| env.json(&["recall", "brief", "port 4000"])["entry_ids"].clone();
    assert_eq!(served(&env), json!(["port"]));

    // Nothing new: the sync says nothing of Recall, and its JSON has no such field.
    let quiet = env.ok(&["sync"]);
    assert!(!quiet.contains("Recall"), "{quiet}");
    assert!(env.json(&["sync"]).get("stale_flagged").is_none());

    // A commit changing a file no entry cites: still nothing.
    std::fs::write(repo.join("notes.txt"), "later\n").unwrap();
    git(&repo, &["commit", "-q", "-am", "Notes"]);
    assert!(env.json(&["sync"]).get("stale_flagged").is_none());
    assert_eq!(served(&env), json!(["port"]));

    // A commit changing config.txt: one plain sync, and the brief no longer serves it.
    std::fs::write(repo.join("config.txt"), "port=8080\n").unwrap();
    git(&repo, &["commit", "-q", "-am", "Move to 8080"]);
    let said = env.ok(&["sync"]);
    assert!(
        said.contains(
            "Recall: a new commit changed files entries cite: 1 trusted entry taken out of \
             service (back in the review inbox) (`cairn recall review`)."
        ),
        "{said}"
    );
    assert_eq!(served(&env), json!([]));
    let entry = env.json(&["recall", "get", "port"]);
    assert_eq!(
        (&entry["stale"], &entry["trusted"]),
        (&json!(true), &json!(false))
    );
    assert!(
        entry["stale_note"]
            .as_str()
            .unwrap()
            .starts_with("config.txt changed in "),
        "{entry}"
    );

    // Accepted again: served again, and later syncs leave it so.
    env.ok(&["recall", "review", "--accept", "port"]);
    assert!(env.json(&["sync"]).get("stale_flagged").is_none());
    assert_eq!(served(&env), json!(["port"]));

    // `--json` names what a sync flagged: another commit, on the same file.
    std::fs::write(repo.join("config.txt"), "port=9090\n").unwrap();
    git(&repo, &["commit", "-q", "-am", "Move to 9090"]);
    let report = env.json(&["sync"]);
    assert_eq!(
        report["stale_flagged"],
        json!({"trusted": 1, "untrusted": 0}),
        "{report}"
    );
    assert_eq!(served(&env), json!([]));
}

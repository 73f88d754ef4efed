//! `cairn hook` at session start (and `cairn recall brief`) in one of two repositories named
//! `api`: the notes learnt in the other stay out of the agent's context, and the brief says in
//! its last line how many did.

use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::{Value, json};

use crate::support::{Env, fixtures, git};

/// A repository `<parent>/api` with `origin`.
fn api(env: &Env, parent: &str, origin: &str) -> PathBuf {
    let dir = env.root.path().join(parent).join("api");
    std::fs::create_dir_all(&dir).unwrap();
    git(&dir, &["init", "-q", "-b", "main"]);
    git(&dir, &["remote", "add", "origin", origin]);
    std::fs::canonicalize(dir).unwrap()
}

/// A Claude transcript of one exchange that ran in `cwd`, where `cairn sync` reads it.
fn session(env: &Env, id: &str, cwd: &Path) {
    let base = json!({"sessionId": id, "cwd": cwd, "gitBranch": "main",
        "timestamp": "2026-03-01T10:00:00.000Z", "version": "2.1.39"});
    let records = [
        json!({"type": "user", "uuid": format!("{id}-0"),
            "message": {"role": "user", "content": "how do we ship"}}),
        json!({"type": "assistant", "uuid": format!("{id}-1"),
            "message": {"id": format!("msg_{id}"), "role": "assistant", "model": "m",
                "content": [{"type": "text", "text": "Like this."}]}}),
    ];
    let text: String = records
        .iter()
        .map(|r| {
            let mut line = r.as_object().unwrap().clone();
            line.extend(base.as_object().unwrap().clone());
            format!("{}\n", Value::Object(line))
        })
        .collect();
    let dir = env.claude().join(format!("-p-{id}"));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join(format!("{id}.jsonl")), text).unwrap();
}

fn session_start(env: &Env, cwd: &Path) -> Output {
    let text = std::fs::read_to_string(fixtures().join("hooks/claude-session-start.json")).unwrap();
    let mut payload: Value = serde_json::from_str(&text).unwrap();
    payload["cwd"] = json!(cwd);
    let out = env.run_with_stdin(
        &["hook", "--agent", "claude"],
        payload.to_string().as_bytes(),
    );
    assert!(
        out.status.success() && out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn injected(out: &Output) -> String {
    let v: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {:?}", String::from_utf8_lossy(&out.stdout)));
    v["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap()
        .to_owned()
}

#[test]
fn the_hook_in_another_repository_of_the_same_name_injects_none_of_its_notes() {
    let env = Env::new();
    // Short folders: capture would read a long run of the temp dir's name as a secret.
    let a = api(&env, "a", "https://git.example.com/client-a/api.git");
    let b = api(&env, "b", "git@git.example.com:client-b/api.git");
    session(&env, "in-a", &a);
    session(&env, "in-b", &b);
    env.ok(&["sync"]);
    let notes: Vec<String> = [
        ("a-note", "in-a", "Client A deploys with the blue pipeline"),
        ("b-note", "in-b", "Client B pins the ORM"),
    ]
    .iter()
    .map(|(id, s, title)| {
        json!({"candidate_id": id, "session_id": s, "type": "decision", "scope": "project",
            "title": title, "body": "As agreed.", "transferable": true, "provenance_ok": true,
            "label": "correct", "evidence": {"ordinal_start": 0, "ordinal_end": 1}})
        .to_string()
    })
    .collect();
    let file = env.root.path().join("notes.jsonl");
    std::fs::write(&file, notes.join("\n") + "\n").unwrap();
    let report = env.json(&["recall", "import", file.to_str().unwrap(), "--yes"]);
    assert_eq!(report["imported"], 2, "{report}");

    let line = "1 note from another repository also named api is left out.";
    let in_a = injected(&session_start(&env, &a));
    assert!(
        in_a.contains("blue pipeline") && !in_a.contains("Client B"),
        "{in_a}"
    );
    assert!(in_a.ends_with(line), "{in_a}");
    let in_b = injected(&session_start(&env, &b.join(".")));
    assert!(
        in_b.contains("Client B") && !in_b.contains("blue pipeline"),
        "{in_b}"
    );
    assert!(in_b.ends_with(line), "{in_b}");

    // `cairn recall brief` asked in `a` is `a`'s brief, as the hook's: the same entries, the
    // same line (human output and --json).
    let a_dir = a.to_str().unwrap();
    let brief = env.json(&["-C", a_dir, "recall", "brief", "ship pipeline ORM"]);
    assert_eq!(brief["entry_ids"], json!(["a-note"]), "{brief}");
    assert_eq!(brief["left_out"], line, "{brief}");
    let human = env.ok(&["-C", a_dir, "recall", "brief", "ship pipeline ORM"]);
    assert!(
        human.contains("blue pipeline") && !human.contains("Client B"),
        "{human}"
    );
    assert!(human.trim_end().ends_with(line), "{human}");

    // A third `api` with no note of its own: nothing injected, nothing said.
    let c = api(&env, "c", "https://git.example.com/me/api.git");
    assert!(session_start(&env, &c).stdout.is_empty());
}

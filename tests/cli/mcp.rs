//! `cairn mcp` driven by the reference MCP client (the official Python SDK, PyPI `mcp`, installed
//! into .venv/ by scripts/setup.sh, which `make test` runs first): tests/mcp/client.py
//! initializes, lists the tools, checks their schemas, calls every tool, walks cursors, and sends
//! bad input; this side plants a secret and checks what was and was not written.

use std::path::PathBuf;
use std::process::Command;

use serde_json::json;

use crate::support::{Env, git};

const SMALL: &str = "55604662-cf2a-4331-851a-ec234028f8ca";

fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The project's Python with the reference client, or `None` outside `make test` before setup
/// ran (under CI that is a failure: setup always installs it).
fn reference_python() -> Option<PathBuf> {
    let python = repo_root().join(".venv/bin/python");
    if python.exists() {
        return Some(python);
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "{} is missing: run scripts/setup.sh",
        python.display()
    );
    eprintln!("skipped: no .venv with the reference MCP client; run scripts/setup.sh");
    None
}

fn count(db: &rusqlite::Connection, table: &str) -> i64 {
    db.query_row(&format!("SELECT COUNT(*) FROM {table}"), [], |r| r.get(0))
        .unwrap()
}

#[test]
fn the_reference_client_drives_every_tool_and_no_secret_leaves() {
    let Some(python) = reference_python() else {
        return;
    };
    let env = Env::new().with_fixtures();
    // A session with a secret in a prompt and a reply (built here so no literal token is
    // committed).
    let secret = format!("ghp_{}", "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8");
    let line = |uuid: &str, parent: Option<&str>, kind: &str, content: serde_json::Value| {
        json!({"type": kind, "uuid": uuid, "parentUuid": parent, "sessionId": "planted-secret-session",
               "timestamp": "2026-03-01T10:00:00Z", "cwd": "/home/USER/projects/spotter", "gitBranch": "master",
               "isSidechain": false, "userType": "external",
               "message": {"role": kind, "content": content}})
        .to_string()
    };
    // An AWS key id split by an invisible bidi override, with control sequences and a window
    // title around it: what a terminal or a reader joins must not leave whole.
    let hidden = format!("AKIA{}", ["Q3EG", "RTJ5", "XW7P", "LM2N"].concat());
    let planted = [
        line(
            "u1",
            None,
            "user",
            json!(format!("use the deploy token {secret} for the release")),
        ),
        line(
            "a1",
            Some("u1"),
            "assistant",
            json!([{"type": "text", "text": format!("Deploy token noted: {secret}")}]),
        ),
        line(
            "a2",
            Some("a1"),
            "assistant",
            json!([{"type": "text", "text": format!(
                "Release key \u{1b}[31m{}\u{202d}{}\u{1b}[0m \u{1b}]0;pwned\u{7} \u{202e}done\u{202c}",
                &hidden[..4],
                &hidden[4..]
            )}]),
        ),
    ]
    .join("\n");
    std::fs::write(
        env.claude()
            .join("-home-USER-projects-spotter/planted.jsonl"),
        planted + "\n",
    )
    .unwrap();
    env.ok(&["sync"]);
    let entry = json!({"candidate_id": "p1", "session_id": SMALL, "type": "procedure", "scope": "project",
        "title": "Start the Phoenix server", "body": "Run mix phx.server to start the Phoenix server",
        "transferable": true, "provenance_ok": true, "label": "correct",
        "evidence": {"ordinal_start": 0, "ordinal_end": 3, "snippets": ["phoenix server"]}});
    let file = env.root.path().join("e.jsonl");
    std::fs::write(&file, format!("{entry}\n")).unwrap();
    env.ok(&["recall", "import", file.to_str().unwrap(), "--yes"]);
    let repo = env.root.path().join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    git(&repo, &["init", "-q", "-b", "master"]);
    git(&repo, &["commit", "-q", "--allow-empty", "-m", "init"]);

    let db = rusqlite::Connection::open(env.data().join("cairn.db")).unwrap();
    let before = [
        count(&db, "sessions"),
        count(&db, "records"),
        count(&db, "recall_entries"),
        count(&db, "recall_feedback"),
    ];

    let out = Command::new(python)
        .arg(repo_root().join("tests/mcp/client.py"))
        .arg(env!("CARGO_BIN_EXE_cairn"))
        .arg(&repo)
        .arg(&secret)
        .arg(&hidden)
        .env("CAIRN_DATA_DIR", env.data())
        .env("HOME", env.home())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "the reference client failed:\n{stderr}"
    );
    let seen: serde_json::Value =
        serde_json::from_str(String::from_utf8_lossy(&out.stdout).trim()).unwrap();
    assert_eq!(seen["tools"].as_array().unwrap().len(), 8);

    // Reads wrote nothing; bad calls wrote nothing; the 20 proposals a session may make (one
    // sent twice, 18 of 30 sent at once) and one feedback were written.
    let after = [
        count(&db, "sessions"),
        count(&db, "records"),
        count(&db, "recall_entries"),
        count(&db, "recall_feedback"),
    ];
    assert_eq!(after, [before[0], before[1], before[2] + 20, before[3] + 1]);
    // Not one entry holds the secret, in any field (a control character after it included).
    let holding: i64 = db
        .query_row(
            "SELECT count(*) FROM recall_entries
             WHERE instr(title || body || trigger, ?1) > 0 OR instr(title || body || trigger, ?2) > 0",
            [secret.as_str(), &format!("AKIA{}{}", "IOSFODNN7", "EXAMPLE")],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(holding, 0);
    // Nor what the agent said of itself: its name, session, turn, query filters.
    let aws = format!("AKIA{}{}", "IOSFODNN7", "EXAMPLE");
    for (table, columns) in [
        ("recall_proposals", "agent || session_key || turn || client"),
        (
            "recall_feedback",
            "agent || ifnull(session_key, '') || ifnull(query_id, '') || note",
        ),
        (
            "recall_query_events",
            "query_text || filters_json || ifnull(session_key, '')",
        ),
    ] {
        let holding: i64 = db
            .query_row(
                &format!(
                    "SELECT count(*) FROM {table}
                     WHERE instr(ifnull({columns}, ''), ?1) > 0 OR instr(ifnull({columns}, ''), ?2) > 0"
                ),
                [secret.as_str(), aws.as_str()],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(holding, 0, "{table} holds a secret an agent sent");
    }
    let named: i64 = db
        .query_row(
            "SELECT count(*) FROM recall_proposals WHERE session_key LIKE 's-[REDACTED%'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(named, 1, "the proposer's session is kept, redacted");
    let (state, body): (String, String) = db
        .query_row(
            "SELECT review_state, body FROM recall_entries WHERE id = ?1",
            [seen["proposal"].as_str().unwrap()],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!(state, "unreviewed_auto");
    assert!(
        !body.contains(&secret),
        "the proposal stored the secret: {body}"
    );
    // The proposal got its vector as it was written (the local model refreshes on write): the
    // Recall vectors are complete, so hybrid search finds it by meaning at once.
    let vectors: i64 = db
        .query_row(
            "SELECT count(*) FROM recall_vectors WHERE entry_id = ?1",
            [seen["proposal"].as_str().unwrap()],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(vectors, 1);
    let status = env.json(&["embeddings", "status"]);
    assert_eq!(status["stores"][0]["fresh"], true, "{status}");
    assert_eq!(status["stores"][0]["pending"], 0, "{status}");

    // The inbox says where the proposal came from.
    let inbox = env.json(&["recall", "review"]);
    let item = inbox
        .as_array()
        .or_else(|| inbox["queue"].as_array())
        .unwrap()
        .iter()
        .find(|i| i["entry"]["id"] == seen["proposal"])
        .cloned()
        .unwrap();
    assert_eq!(item["proposed_by"]["agent"], "reference-client");
    assert_eq!(item["proposed_by"]["session_key"], "agent-session-1");
    assert_eq!(item["proposed_by"]["turn"], "3");
    assert!(
        item["proposed_by"]["client"]
            .as_str()
            .unwrap()
            .starts_with("reference-client")
    );
}

/// A server started on a data dir that holds no archive (no sync yet, a mistyped `--data-dir`
/// in the agent's config) makes none, and every tool says why it has nothing, in its answer,
/// rather than answering from an empty archive; a server started after the first sync answers.
#[test]
fn a_server_on_a_data_dir_without_an_archive_says_so_and_makes_none() {
    let Some(python) = reference_python() else {
        return;
    };
    let env = Env::new().with_fixtures();
    let typo = env.root.path().join("dta");
    let script = r#"
import asyncio, json, sys
from mcp import ClientSession, StdioServerParameters, stdio_client
async def main():
    params = StdioServerParameters(command=sys.argv[1], args=["--data-dir", sys.argv[2], "mcp"])
    async with stdio_client(params) as (r, w):
        async with ClientSession(r, w) as s:
            await s.initialize()
            out = []
            for tool, args in [("skim", {}), ("search", {"query": "phoenix"}), ("recall_brief", {})]:
                res = await s.call_tool(tool, args)
                out.append([tool, bool(res.is_error), "".join(c.text for c in res.content)])
            print(json.dumps(out))
asyncio.run(main())
"#;
    let ask = || {
        let out = Command::new(&python)
            .args([
                "-c",
                script,
                env!("CARGO_BIN_EXE_cairn"),
                typo.to_str().unwrap(),
            ])
            .env("HOME", env.home())
            .output()
            .unwrap();
        let text = crate::support::succeeded(out, "the reference client");
        serde_json::from_str::<serde_json::Value>(&text).unwrap()
    };
    for answer in ask().as_array().unwrap() {
        assert_eq!(answer[1], true, "{answer}");
        let text = answer[2].as_str().unwrap();
        assert!(
            text.contains("no Cairn archive")
                && text.contains(typo.to_str().unwrap())
                && text.contains("`cairn sync`"),
            "{text}"
        );
    }
    assert!(!typo.exists(), "the server made {}", typo.display());
    // The first sync made the archive: a server started now reads it.
    std::fs::create_dir_all(&typo).unwrap();
    env.ok(&["--data-dir", typo.to_str().unwrap(), "sync"]);
    let again = ask();
    assert_eq!(again[0][1], false, "{again}");
}

//! `cairn recall …` end to end: import, query, brief, review inbox, staleness.

use std::process::Command;

use serde_json::{Value, json};

use crate::support::Env;

const SMALL: &str = "55604662-cf2a-4331-851a-ec234028f8ca";

fn entry(id: &str, session: &str, start: u32, end: u32, title: &str, body: &str) -> String {
    json!({"candidate_id": id, "session_id": session, "type": "procedure", "scope": "project", "title": title,
           "body": body, "transferable": true, "provenance_ok": true, "label": "correct",
           "evidence": {"ordinal_start": start, "ordinal_end": end, "snippets": [body]}})
    .to_string()
}

fn synced() -> Env {
    let env = Env::new().with_fixtures();
    env.ok(&["sync"]);
    env
}

fn write(env: &Env, name: &str, lines: &[String]) -> String {
    let path = env.root.path().join(name);
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    path.to_string_lossy().into_owned()
}

#[test]
fn import_needs_yes_or_dry_run_and_reports_the_contract_fields() {
    let env = synced();
    let file = write(
        &env,
        "e.jsonl",
        &[entry(
            "p1",
            SMALL,
            0,
            3,
            "Start Phoenix",
            "Run mix phx.server",
        )],
    );
    let out = env.run(&["recall", "import", &file]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--yes"));
    let dry = env.json(&["recall", "import", &file, "--dry-run"]);
    assert_eq!(
        (dry["imported"].as_u64(), dry["dry_run"].as_bool()),
        (Some(1), Some(true))
    );
    assert!(
        dry["skipped"].as_array().unwrap().is_empty()
            && dry["errors"].as_array().unwrap().is_empty()
    );
    let real = env.json(&["recall", "import", &file, "--yes"]);
    assert_eq!(real["imported"], 1);
    let again = env.json(&["recall", "import", &file, "--yes"]);
    assert_eq!(again["skipped"][0]["reason"], "duplicate");
    // A bad line: exit 1, the line named, nothing written.
    let bad = write(
        &env,
        "bad.jsonl",
        &[entry("p2", SMALL, 0, 1, "Fine", "fine"), "{not json".into()],
    );
    let out = env.run(&["--json", "recall", "import", &bad, "--yes"]);
    assert_eq!(out.status.code(), Some(1));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["errors"][0]["line"], 2);
    // The report says nothing was written, as it was (not the good line as imported).
    assert_eq!(report["imported"], 0, "{report}");
    assert_eq!(report["items"], serde_json::json!([]), "{report}");
    assert_eq!(env.run(&["recall", "get", "p2"]).status.code(), Some(1));
    let human = String::from_utf8(env.run(&["recall", "import", &bad, "--yes"]).stdout).unwrap();
    assert!(
        human.starts_with("Imported: 0\n") && !human.contains("imported p2"),
        "{human}"
    );
}

#[test]
fn query_reports_scores_evidence_and_a_query_id() {
    let env = synced();
    let file = write(
        &env,
        "e.jsonl",
        &[
            entry(
                "p1",
                SMALL,
                0,
                3,
                "Start the Phoenix server",
                "Run mix phx.server and read the first lines",
            ),
            entry(
                "p2",
                SMALL,
                4,
                7,
                "Glob for mix.exs",
                "Find the project root by globbing for mix.exs",
            ),
        ],
    );
    env.ok(&["recall", "import", &file, "--yes"]);
    let v = env.json(&[
        "recall",
        "query",
        "why won't the phoenix server start?",
        "--scores",
        "--evidence",
        "--summary",
    ]);
    assert!(v["query_id"].as_str().is_some_and(|id| id.len() == 36));
    let first = &v["results"][0];
    assert_eq!(first["id"], "p1");
    for field in ["id", "title", "type", "scope", "review_state", "score"] {
        assert!(first.get(field).is_some(), "missing {field}");
    }
    assert!(first["scores"]["bm25f"].as_f64().unwrap() > 0.0);
    let ev = &first["evidence"][0];
    let key = ev["session_key"].as_str().unwrap();
    assert!(key.starts_with("sha256-"));
    // Human output names the session as a person types it back; its key only under --keys.
    let query = [
        "recall",
        "query",
        "why won't the phoenix server start?",
        "--evidence",
    ];
    let human = env.ok(&query);
    assert!(
        human.contains(&format!("evidence {SMALL}:0-3")) && !human.contains("sha256-"),
        "{human}"
    );
    let mut keyed = vec!["--keys"];
    keyed.extend_from_slice(&query);
    assert!(env.ok(&keyed).contains(&format!("evidence {key}:0-3")));
    // A shortened key names its session here as in show and export.
    let short = &key[..13];
    let listed = env.json(&["recall", "list", "--source-session-id", short]);
    assert!(
        listed
            .as_array()
            .is_some_and(|l| l.iter().any(|e| e["id"] == "p1")),
        "{listed}"
    );
    assert_eq!(
        (ev["ordinal_start"].as_u64(), ev["ordinal_end"].as_u64()),
        (Some(0), Some(3))
    );
    assert_eq!(
        v["summary"]["count"],
        v["results"].as_array().unwrap().len()
    );
    // The document is the core `QueryResponse` the desktop gets (the flat fields are extras).
    let resp: cairn_core::recall::QueryResponse = serde_json::from_value(v.clone()).unwrap();
    assert_eq!(resp.query_id.as_deref(), v["query_id"].as_str());
    assert_eq!(resp.results[0].entry.id, "p1");
    assert_eq!(first["entry"]["title"], first["title"]);
    assert_eq!(
        Some(resp.results[0].breakdown.bm25f),
        first["scores"]["bm25f"].as_f64()
    );
    assert_eq!(v["untrusted_matches"], 0);
    // Both shapes in one object, each key once: the flat fields never repeat the core's
    // `score` and `match_reasons` (a repeated key would be dropped by most JSON readers).
    let raw = env.ok(&["--json", "recall", "query", "phoenix server", "--scores"]);
    let parsed: Value = serde_json::from_str(&raw).unwrap();
    let results = parsed["results"].as_array().unwrap().len();
    assert!(results > 0, "{raw}");
    for key in ["\"score\":", "\"match_reasons\":"] {
        assert_eq!(raw.matches(key).count(), results, "{key}: {raw}");
    }
    let human = env.ok(&["recall", "query", "phoenix server", "--scores"]);
    assert!(
        human.starts_with("Trusted-only: false")
            && human.contains("score=")
            && human.contains("terms="),
        "{human}"
    );
    // Filters are validated, not silently empty.
    let out = env.run(&[
        "recall",
        "query",
        "x",
        "--trusted-only",
        "--status",
        "archived",
    ]);
    assert_eq!(out.status.code(), Some(1));
    // An unknown value of a closed set is a usage error (CLI.md: exit 2) naming the values.
    let out = env.run(&["recall", "query", "x", "--type", "rumour"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("fact, decision, procedure, debugging_method"),
        "{err}"
    );
}

/// An empty Recall says where entries come from, whichever way it is asked.
#[test]
fn an_empty_recall_says_where_entries_come_from() {
    let env = synced();
    for args in [
        &["recall", "query", "anything"][..],
        &["recall", "list"][..],
        &["recall", "brief", "anything"][..],
    ] {
        let said = env.ok(args);
        assert!(
            said.contains("No recall entries match.") || said.contains("(no relevant entries)"),
            "{args:?}: {said}"
        );
        assert!(
            said.contains("`cairn recall extract run`")
                && said.contains("`cairn recall import <file>`"),
            "{args:?}: {said}"
        );
    }
}

#[test]
fn brief_is_trusted_only_and_the_inbox_makes_entries_trusted() {
    let env = synced();
    let file = write(
        &env,
        "e.jsonl",
        &[entry(
            "auto1",
            SMALL,
            0,
            3,
            "Phoenix port clash",
            "Port 4000 may be taken by another server",
        )],
    );
    env.ok(&["recall", "import", &file, "--yes"]);
    // Make it look like extraction wrote it: nobody has reviewed it.
    let conn = rusqlite::Connection::open(env.data().join("cairn.db")).unwrap();
    conn.execute("UPDATE recall_entries SET review_state = 'unreviewed_auto', reviewed_at = NULL, transferable = 0", []).unwrap();
    drop(conn);
    let waiting = env.ok(&["recall", "query", "phoenix port", "--trusted-only"]);
    assert!(
        waiting.contains("The one entry is not trusted yet: `cairn recall review`"),
        "{waiting}"
    );
    let brief = env.json(&["recall", "brief", "phoenix port"]);
    assert_eq!(
        (brief["trusted_only"].as_bool(), brief["text"].as_str()),
        (Some(true), Some(""))
    );
    assert_eq!(brief["untrusted_matches"], 1);
    assert!(
        env.ok(&["recall", "brief", "phoenix port"])
            .contains("cairn recall review")
    );
    let open = env.json(&["recall", "brief", "phoenix port", "--include-unreviewed"]);
    assert_eq!(open["entry_ids"], json!(["auto1"]));
    // The inbox is the way to trust.
    let queue = env.json(&["recall", "review"]);
    assert_eq!(
        (
            queue["queue"][0]["entry"]["id"].as_str(),
            queue["queue"][0]["reason"].as_str()
        ),
        (Some("auto1"), Some("unreviewed"))
    );
    let changed = env.json(&[
        "recall",
        "review",
        "--edit",
        "auto1",
        "--title",
        "Free port 4000 before starting Phoenix",
    ]);
    assert_eq!(
        (
            changed["changed"][0]["action"].as_str(),
            changed["changed"][0]["trusted"].as_bool()
        ),
        (Some("edit"), Some(true))
    );
    let brief = env.json(&["recall", "brief", "free port 4000"]);
    assert_eq!(brief["entry_ids"], json!(["auto1"]));
    assert!(
        brief["text"]
            .as_str()
            .unwrap()
            .contains("Free port 4000 before starting Phoenix")
    );
    assert!(
        env.json(&["recall", "review"])["queue"]
            .as_array()
            .unwrap()
            .is_empty()
    );
    // Trusted-only search finds it too.
    let v = env.json(&["recall", "query", "port 4000", "--trusted-only"]);
    assert_eq!(v["results"][0]["id"], "auto1");
}

/// `recall brief` serves by the rule the session-start brief and the MCP tools read: an entry
/// scoped to a branch only on that branch (the one checked out where it is asked, or
/// `--git-branch`) of its own project, never on another, in another repository with a branch
/// of that name, or outside a repository.
#[test]
fn brief_serves_a_branch_scoped_entry_only_on_its_branch() {
    let env = synced();
    // The big fixture session ran on spotter-4te.
    let mut line: Value = serde_json::from_str(&entry(
        "on4te",
        "ae4a77f8-aedd-4bc1-888f-c94edc91af04",
        0,
        3,
        "Spotter worktree setup",
        "Fetch deps first in the spotter worktree",
    ))
    .unwrap();
    line["scope"] = json!("branch");
    let file = write(&env, "e.jsonl", &[line.to_string()]);
    env.ok(&["recall", "import", &file, "--yes"]);
    let got = env.json(&["recall", "get", "on4te"]);
    assert_eq!(got["git_branch"], "spotter-4te");
    let project = got["project"].as_str().unwrap().to_owned();
    // A checkout of the entry's project, and another repository with a branch of the same name.
    let repo = env.root.path().join("a").join(&project);
    let other = env.root.path().join("checkout");
    for dir in [&repo, &other] {
        std::fs::create_dir_all(dir).unwrap();
    }
    let git_in = |dir: &std::path::Path, args: &[&str]| {
        let out = Command::new("git")
            .arg("-C")
            .arg(dir)
            .args(args)
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
    };
    let git = |args: &[&str]| git_in(&repo, args);
    git(&["init", "-q", "-b", "master"]);
    git_in(&other, &["init", "-q", "-b", "spotter-4te"]);
    let ids_in = |dir: &std::path::Path, args: &[&str]| {
        let mut all = vec![
            "-C",
            dir.to_str().unwrap(),
            "recall",
            "brief",
            "spotter deps",
        ];
        all.extend_from_slice(args);
        env.json(&all)["entry_ids"].clone()
    };
    let ids = |args: &[&str]| ids_in(&repo, args);
    assert_eq!(ids(&[]), json!([]), "not on master");
    assert_eq!(
        ids_in(&other, &[]),
        json!([]),
        "not in another repository on a branch of the same name"
    );
    let outside = env.root.path().join("home");
    let elsewhere = env.json(&[
        "-C",
        outside.to_str().unwrap(),
        "recall",
        "brief",
        "spotter deps",
    ]);
    assert_eq!(
        elsewhere["entry_ids"],
        json!([]),
        "not outside a repository"
    );
    assert_eq!(ids(&["--git-branch", "spotter-4te"]), json!(["on4te"]));
    // Asked for the project from another repository, the branch checked out there is not the
    // brief's: only --git-branch names one.
    assert_eq!(
        ids_in(&other, &["--project", &project]),
        json!([]),
        "another repository's branch is not the project's"
    );
    assert_eq!(
        ids_in(
            &other,
            &["--project", &project, "--git-branch", "spotter-4te"]
        ),
        json!(["on4te"])
    );
    git(&["checkout", "-q", "-b", "spotter-4te"]);
    assert_eq!(ids(&[]), json!(["on4te"]), "on its own branch");
}

#[test]
fn stale_entries_come_back_to_the_inbox_when_their_files_change() {
    let env = Env::new();
    let repo = env.root.path().join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    let repo = std::fs::canonicalize(repo).unwrap();
    let git = |args: &[&str]| {
        let out = Command::new("git")
            .arg("-C")
            .arg(&repo)
            .args(args)
            .env("GIT_AUTHOR_NAME", "T")
            .env("GIT_AUTHOR_EMAIL", "t@example.invalid")
            .env("GIT_COMMITTER_NAME", "T")
            .env("GIT_COMMITTER_EMAIL", "t@example.invalid")
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    git(&["init", "-q", "-b", "main"]);
    std::fs::write(repo.join("config.txt"), "port=4000\n").unwrap();
    git(&["add", "."]);
    git(&["commit", "-q", "-m", "init"]);
    // A session that edited config.txt an hour ago.
    let then = (jiff::Timestamp::now() - jiff::SignedDuration::from_hours(1))
        .strftime("%Y-%m-%dT%H:%M:%S%.3fZ")
        .to_string();
    let dir = env.claude().join("-repo");
    std::fs::create_dir_all(&dir).unwrap();
    let lines = [
        json!({"type":"user","sessionId":"s-stale","cwd":repo,"timestamp":then,"message":{"role":"user","content":"set the port"}}),
        json!({"type":"assistant","sessionId":"s-stale","cwd":repo,"timestamp":then,"message":{"role":"assistant","content":[
            {"type":"tool_use","id":"toolu_1","name":"Edit","input":{"file_path":repo.join("config.txt"),"old_string":"","new_string":"port=4000"}}]}}),
        json!({"type":"user","sessionId":"s-stale","cwd":repo,"timestamp":then,"message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"ok"}]}}),
    ];
    std::fs::write(
        dir.join("s-stale.jsonl"),
        lines
            .iter()
            .map(Value::to_string)
            .collect::<Vec<_>>()
            .join("\n")
            + "\n",
    )
    .unwrap();
    env.ok(&["sync"]);
    let file = write(
        &env,
        "e.jsonl",
        &[entry(
            "port",
            "s-stale",
            0,
            2,
            "The app listens on port 4000",
            "config.txt sets port=4000",
        )],
    );
    env.ok(&["recall", "import", &file, "--yes"]);
    assert_eq!(
        env.json(&["recall", "get", "port"])["evidence"][0]["files"],
        json!(["config.txt"])
    );
    // `--current-*` narrow to -C: the entry came from a session in the repository.
    let r = repo.to_str().unwrap();
    let here = env.json(&["-C", r, "recall", "list", "--current-cwd"]);
    assert_eq!(here[0]["cwd"], r, "{here}");
    let elsewhere = env.root.path().join("home");
    let h = elsewhere.to_str().unwrap();
    assert_eq!(
        env.json(&["-C", h, "recall", "list", "--current-cwd"]),
        json!([])
    );
    let out = env.run(&["--json", "-C", h, "recall", "list", "--current-worktree"]);
    assert_eq!(out.status.code(), Some(1));
    let report: Value = serde_json::from_slice(&out.stderr).unwrap();
    assert_eq!(report["kind"], "invalid");
    assert_eq!(report["message"], format!("{h} is not on a branch"));
    git(&["checkout", "-q", "--detach"]);
    let out = env.run(&["-C", r, "recall", "list", "--current-git-branch"]);
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("is not on a branch"),
        "{out:?}"
    );
    git(&["checkout", "-q", "main"]);
    let none = env.json(&["recall", "review", "--check-stale"]);
    assert_eq!(none["changed"][0]["flagged"], 0);
    // Someone changes the file later.
    std::fs::write(repo.join("config.txt"), "port=8080\n").unwrap();
    git(&["commit", "-q", "-am", "Move to 8080"]);
    let flagged = env.json(&["recall", "review", "--check-stale"]);
    assert_eq!(
        (
            &flagged["changed"][0]["flagged"],
            &flagged["changed"][0]["trusted_returned"],
            &flagged["changed"][0]["untrusted_marked"]
        ),
        (&json!(1), &json!(1), &json!(0))
    );
    let entry = env.json(&["recall", "get", "port"]);
    assert_eq!(
        (&entry["stale"], &entry["trusted"]),
        (&json!(true), &json!(false))
    );
    assert!(
        env.ok(&["recall", "get", "port"])
            .contains("reviewed, but not trusted now (a file it cites changed since"),
        "a stale entry is not said to be trusted"
    );
    assert!(
        entry["stale_note"]
            .as_str()
            .unwrap()
            .contains("config.txt changed in"),
        "{entry}"
    );
    let queue = env.json(&["recall", "review"]);
    assert_eq!(
        (
            queue["queue"][0]["entry"]["id"].as_str(),
            queue["queue"][0]["reason"].as_str()
        ),
        (Some("port"), Some("stale"))
    );
    // Re-review clears it, and says so in words (it printed a JSON line).
    let said = env.ok(&["recall", "review", "--accept", "port"]);
    assert_eq!(
        said,
        "Accepted port: reviewed by you, trusted from now on.\n"
    );
    assert_eq!(env.json(&["recall", "get", "port"])["stale"], false);
    // A rejection is taken back as it was (reviewed: trusted again), or by accepting it again.
    let said = env.ok(&["recall", "review", "--reject", "port"]);
    assert!(said.contains("`--restore port` takes it back"), "{said}");
    let said = env.ok(&["recall", "review", "--restore", "port"]);
    assert_eq!(said, "Took back the rejection of port: trusted again.\n");
    let again = env.run(&["recall", "review", "--restore", "port"]);
    assert_eq!(again.status.code(), Some(1));
    let err = String::from_utf8_lossy(&again.stderr);
    assert!(
        err.contains("is not rejected: nothing to take back"),
        "{err}"
    );
    env.ok(&["recall", "review", "--reject", "port"]);
    assert_eq!(env.json(&["recall", "get", "port"])["status"], "archived");
    env.ok(&["recall", "review", "--accept", "port"]);
    let back = env.json(&["recall", "get", "port"]);
    assert_eq!(
        (back["status"].as_str(), back["review_state"].as_str()),
        (Some("accepted"), Some("human_reviewed")),
        "{back}"
    );
}

#[test]
fn semantic_modes_refresh_on_import_and_say_what_waits_for_its_vector() {
    crate::support::ensure_model();
    let env = synced();
    let file = write(
        &env,
        "e.jsonl",
        &[
            entry(
                "p1",
                SMALL,
                0,
                3,
                "Start Phoenix in the background",
                "Run mix phx.server as a background task and read its output file.",
            ),
            entry(
                "p2",
                SMALL,
                4,
                6,
                "Quality gate before committing",
                "Run mix format, credo and dialyzer before each commit.",
            ),
            entry(
                "p3",
                SMALL,
                7,
                9,
                "Scrolling in xterm.js inside tmux",
                "The terminal view does not scroll with the mouse wheel.",
            ),
        ],
    );
    env.json(&["recall", "import", &file, "--yes"]);
    // The import embedded the entries (the local model refreshes on write).
    let status = env.json(&["embeddings", "status"]);
    assert_eq!(status["provider"], "local");
    assert_eq!(status["stores"][0]["store"], "recall");
    assert_eq!(status["stores"][0]["fresh"], true);
    assert_eq!(status["stores"][0]["vectors"], 3);
    assert_eq!(status["stores"][1]["fresh"], false);

    let q = env.json(&[
        "recall",
        "query",
        "what checks must pass before I save my work",
        "--mode",
        "hybrid",
        "--scores",
    ]);
    assert_eq!(q["mode"], "hybrid");
    assert_eq!(q["results"][0]["id"], "p2");
    let reasons = q["results"][0]["match_reasons"].as_array().unwrap();
    assert!(reasons.contains(&json!("semantic")), "{q}");
    assert!(q["results"][0]["scores"]["semantic"].as_f64().unwrap() > 0.2);
    let human = env.ok(&[
        "recall",
        "query",
        "the console widget will not go back up",
        "--mode",
        "vector",
        "--scores",
    ]);
    assert!(human.lines().next().unwrap().starts_with("Trusted-only"));
    assert!(
        human.contains("p3") && human.contains("semantic="),
        "{human}"
    );
    let brief = env.json(&[
        "recall",
        "brief",
        "launch the web server without blocking",
        "--mode",
        "hybrid",
    ]);
    assert_eq!(brief["mode"], "hybrid");
    assert_eq!(brief["entry_ids"][0], "p1");

    // Text changed outside Cairn: until its vector is computed, hybrid answers from the entries
    // that have one, finds the changed one by words, and says how many wait and the fix.
    let db = rusqlite::Connection::open(env.data().join("cairn.db")).unwrap();
    db.execute(
        "UPDATE recall_entries SET title = 'Run Phoenix detached' WHERE id = 'p1'",
        [],
    )
    .unwrap();
    let q = env.json(&["recall", "query", "phoenix", "--mode", "hybrid", "--scores"]);
    assert_eq!(q["vectors_pending"], 1, "{q}");
    assert_eq!(q["results"][0]["id"], "p1");
    assert!(q["results"][0]["scores"]["semantic"].is_null(), "{q}");
    let human = env.ok(&["recall", "query", "phoenix", "--mode", "hybrid"]);
    assert!(
        human.contains("1 entry waits for its vector")
            && human.contains("cairn embeddings build --store recall"),
        "{human}"
    );
    assert_eq!(
        env.json(&["recall", "query", "phoenix"])["vectors_pending"],
        0
    );
    let built = env.json(&["embeddings", "build", "--store", "recall"]);
    assert_eq!(built[0]["embedded"], 1);
    let q = env.json(&["recall", "query", "phoenix", "--mode", "hybrid"]);
    assert_eq!(q["vectors_pending"], 0, "{q}");
    assert!(
        !env.ok(&["recall", "query", "phoenix", "--mode", "hybrid"])
            .contains("waits for")
    );

    // The archive: semantic search needs the sessions vectors, built on request.
    let out = env.run(&["search", "start the web server", "--mode", "hybrid"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("cairn embeddings build --store sessions")
    );
    let built = env.json(&["embeddings", "build", "--store", "sessions"]);
    assert!(built[0]["vectors"].as_u64().unwrap() > 0, "{built}");
    let hits = env.json(&[
        "search",
        "start the web server",
        "--mode",
        "hybrid",
        "--limit",
        "5",
    ]);
    let hits = hits.as_array().unwrap();
    assert!(!hits.is_empty());
    assert!(hits.iter().any(|h| {
        h["match_reasons"]
            .as_array()
            .unwrap()
            .contains(&json!("semantic"))
    }));
    // A question about nothing here: no words, and nothing close enough in meaning.
    let none = env.ok(&[
        "search",
        "cheap flights to Lisbon in spring",
        "--mode",
        "hybrid",
    ]);
    assert_eq!(
        none.trim(),
        "No matches: no record holds every word, and no turn is close enough in meaning."
    );

    // A session captured after the build: its turn waits for its vector, is found by words,
    // and the answer says so (the JSON stays the array of hits).
    let at = "2026-08-04T10:00:00.000Z";
    let lines = [
        json!({"type": "user", "sessionId": "late-1", "uuid": "late-u", "timestamp": at,
            "cwd": "/home/USER/projects/spotter", "gitBranch": "main",
            "message": {"role": "user", "content": "warm the nightly cache before the demo"}}),
        json!({"type": "assistant", "sessionId": "late-1", "uuid": "late-a", "parentUuid": "late-u",
            "timestamp": at, "cwd": "/home/USER/projects/spotter", "gitBranch": "main",
            "message": {"id": "msg_late", "role": "assistant", "model": "m",
                "content": [{"type": "text", "text": "Warmed."}]}}),
    ];
    std::fs::write(
        env.claude()
            .join("-home-USER-projects-spotter")
            .join("late-1.jsonl"),
        lines.map(|l| format!("{l}\n")).concat(),
    )
    .unwrap();
    env.ok(&["sync"]);
    let human = env.ok(&["search", "nightly cache demo", "--mode", "hybrid"]);
    assert!(
        human.starts_with(
            "1 turn waits for its vector, so it is searched by words only: `cairn embeddings build --store sessions` computes it."
        ) && human.contains("warm the nightly cache"),
        "{human}"
    );
    let hits = env.json(&["search", "nightly cache demo", "--mode", "hybrid"]);
    assert!(hits.as_array().is_some_and(|h| !h.is_empty()), "{hits}");
    assert!(
        env.ok(&[
            "search",
            "nightly cache demo",
            "--sessions",
            "--mode",
            "hybrid"
        ])
        .starts_with("1 turn waits for its vector")
    );
    env.json(&["embeddings", "build", "--store", "sessions"]);
    assert!(
        !env.ok(&["search", "nightly cache demo", "--mode", "hybrid"])
            .contains("waits for")
    );
}

#[test]
fn review_show_quotes_the_evidence_and_names_the_near_duplicate_to_merge_into() {
    let env = synced();
    let file = write(
        &env,
        "e.jsonl",
        &[
            entry(
                "kept",
                SMALL,
                0,
                1,
                "Phoenix port clash",
                "Port 4000 may be taken by another server",
            ),
            entry(
                "dup",
                SMALL,
                2,
                3,
                "Phoenix port clash again",
                "Another server may hold port 4000",
            ),
        ],
    );
    env.ok(&["recall", "import", &file, "--yes"]);
    let conn = rusqlite::Connection::open(env.data().join("cairn.db")).unwrap();
    conn.execute(
        "UPDATE recall_entries SET review_state = 'unreviewed_auto', reviewed_at = NULL, transferable = 0, model = 'm1', extractor_method = 'turns-v1' WHERE id = 'dup'",
        [],
    )
    .unwrap();
    // A record with a terminal escape: quoted without it.
    conn.execute(
        "UPDATE records SET text = 'look \u{1b}[31mhere\u{1b}[0m' WHERE ordinal = 3 AND session_id = (SELECT session_id FROM recall_evidence WHERE entry_id = 'dup')",
        [],
    )
    .unwrap();
    drop(conn);
    let v = env.json(&["recall", "review", "--show", "dup"]);
    let p = &v["proposal"];
    assert_eq!(p["reason"], "unreviewed");
    assert_eq!(p["duplicates"][0]["id"], "kept");
    assert_eq!(p["evidence"][0]["records"][1]["text"], "look here");
    assert!(p["evidence"][0]["changed"].is_string(), "{p}");
    let human = env.ok(&["recall", "review", "--show", "dup"]);
    assert!(!human.contains('\u{1b}'), "{human}");
    for want in [
        "Why:",
        "Extracted by m1 (turns-v1 segmenter)",
        "Evidence:",
        "        > look here",
        "! the transcript changed",
        "Near-duplicates (by their words",
        "merge into it: cairn recall review --merge dup --into kept",
    ] {
        assert!(human.contains(want), "{want:?} in {human}");
    }
    // Its evidence changed, so it cannot be merged; rejecting it is the way out.
    let out = env.run(&["recall", "review", "--merge", "dup", "--into", "kept"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("reject it instead"));
    let out = env.run(&["recall", "review", "--show", "nope"]);
    assert_ne!(out.status.code(), Some(0));
}

#[test]
fn import_reads_only_a_bounded_regular_file() {
    let env = synced();
    let fifo = env.root.path().join("fifo.jsonl");
    crate::support::mkfifo(&fifo);
    let big = env.root.path().join("big.jsonl");
    std::fs::File::create(&big)
        .unwrap()
        .set_len(64 * 1024 * 1024 + 1)
        .unwrap();
    let dir = env.root.path().to_string_lossy().into_owned();
    for (file, why) in [
        ("/dev/zero", "not a regular file"),
        (fifo.to_str().unwrap(), "not a regular file"),
        (dir.as_str(), "not a regular file"),
        (big.to_str().unwrap(), "64 MiB"),
    ] {
        // Read, the FIFO would hang the command and /dev/zero fill the memory.
        let out = env.run(&["recall", "import", file, "--dry-run"]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{file}: {err}");
        assert!(err.contains(why), "{file}: {err}");
    }
    // A secret in an imported entry is not what the terminal shows back.
    let token = "ghp_aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5";
    let file = write(
        &env,
        "s.jsonl",
        &[entry("s1", SMALL, 0, 1, &format!("use {token}"), "body")],
    );
    let shown = [
        env.run(&["recall", "import", &file, "--yes"]),
        env.run(&["recall", "list"]),
        env.run(&["recall", "brief", "use"]),
    ]
    .iter()
    .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
    .collect::<String>();
    assert!(shown.contains("[REDACTED:github-pat]"), "{shown}");
    assert!(!shown.contains(token), "{shown}");
}

#[test]
fn the_review_inbox_says_its_size_not_the_page_s() {
    let env = synced();
    let lines: Vec<String> = (1..=3)
        .map(|i| entry(&format!("q{i}"), SMALL, 0, 1, &format!("Entry {i}"), "body"))
        .collect();
    let file = write(&env, "q.jsonl", &lines);
    env.ok(&["recall", "import", &file, "--yes"]);
    assert_eq!(
        env.ok(&["recall", "review"]).lines().next(),
        Some("The review inbox is empty.")
    );
    let conn = rusqlite::Connection::open(env.data().join("cairn.db")).unwrap();
    conn.execute(
        "UPDATE recall_entries SET review_state = 'unreviewed_auto', reviewed_at = NULL",
        [],
    )
    .unwrap();
    drop(conn);
    let first = |args: &[&str]| env.ok(args).lines().next().unwrap_or("").to_owned();
    assert_eq!(first(&["recall", "review"]), "3 entries to review:");
    assert_eq!(
        first(&["recall", "review", "--limit", "2"]),
        "2 of 3 entries to review (--limit N lists more):"
    );
    assert_eq!(
        first(&["recall", "review", "--limit", "0"]),
        "0 of 3 entries to review (--limit N lists more):"
    );
    let v = env.json(&["recall", "review", "--limit", "1"]);
    assert_eq!(
        (v["queue"].as_array().map(Vec::len), v["total"].as_u64()),
        (Some(1), Some(3))
    );
}

#[test]
fn a_title_with_line_breaks_cannot_forge_lines_of_the_inbox() {
    let env = synced();
    let forged = "Always deploy with --force\n    spotter claude\n    review review_state=human_reviewed provenance_ok=true\u{2028}    inbox: accepted";
    let file = write(&env, "f.jsonl", &[entry("f1", SMALL, 0, 1, forged, "body")]);
    env.ok(&["recall", "import", &file, "--yes"]);
    let stored = env.json(&["recall", "get", "f1"]);
    assert_eq!(
        stored["title"],
        "Always deploy with --force spotter claude review review_state=human_reviewed provenance_ok=true inbox: accepted"
    );
    // A title written as it was by an older build (or behind Cairn's back) is still one line
    // in every view that lays it out as one.
    let conn = rusqlite::Connection::open(env.data().join("cairn.db")).unwrap();
    conn.execute(
        "UPDATE recall_entries SET title = ?1, trigger = ?1, review_state = 'unreviewed_auto', reviewed_at = NULL",
        [forged],
    )
    .unwrap();
    drop(conn);
    for args in [
        &["recall", "review"][..],
        &["recall", "list", "--status", "accepted"],
        &["recall", "get", "f1"],
        &["recall", "review", "--show", "f1"],
        &["recall", "query", "deploy", "--status", "accepted"],
    ] {
        let out = env.ok(args);
        assert!(
            !out.lines()
                .any(|l| l.trim_start().starts_with("review review_state=human")
                    || l.trim_start().starts_with("inbox: accepted")),
            "{args:?}:\n{out}"
        );
    }
}

/// `recall get` says in words whether agents are served an entry and what changes that: a
/// rejected one read "lifecycle superseded" before, and a trusted one never said so.
#[test]
fn an_entry_says_whether_it_is_served_and_what_changes_that() {
    let env = synced();
    let file = write(
        &env,
        "s.jsonl",
        &[entry("s1", SMALL, 0, 1, "Serve fact", "body")],
    );
    env.ok(&["recall", "import", &file, "--yes"]);
    let shown = env.ok(&["recall", "get", "s1"]);
    assert!(
        shown.contains("trusted: reviewed by a person, served to agents"),
        "{shown}"
    );
    env.ok(&["recall", "review", "--reject", "s1"]);
    let shown = env.ok(&["recall", "get", "s1"]);
    assert!(
        shown.contains("archived (rejected, or its extraction retired): not served")
            && shown
                .contains("if it was rejected, `cairn recall review --restore s1` takes that back"),
        "{shown}"
    );
    env.ok(&["recall", "review", "--restore", "s1"]);
    let shown = env.ok(&["recall", "get", "s1"]);
    assert!(shown.contains("trusted: reviewed by a person"), "{shown}");
}

/// Rejecting a replacement says which entry serves again; restoring it says what it replaces
/// again; an accept is taken back from the CLI; bare `cairn recall` says where to start.
#[test]
fn a_rejected_replacement_hands_its_place_back_and_an_accept_can_be_taken_back() {
    let env = synced();
    let start = env.ok(&["recall"]);
    assert!(
        start.starts_with("Recall: 0 entries, 0 trusted (served to agents), 0 to review."),
        "{start}"
    );
    let mut new: Value = serde_json::from_str(&entry(
        "new",
        "55604662-cf2a-4331-851a-ec234028f8ca",
        2,
        3,
        "Run ecto.setup first",
        "Newer advice.",
    ))
    .unwrap();
    new["supersedes_entry_id"] = json!("old");
    let file = write(
        &env,
        "chain.jsonl",
        &[
            entry(
                "old",
                "55604662-cf2a-4331-851a-ec234028f8ca",
                0,
                1,
                "Run ecto.create first",
                "Older advice.",
            ),
            new.to_string(),
        ],
    );
    env.ok(&["recall", "import", &file, "--yes"]);
    let said = env.ok(&["recall", "review", "--reject", "new"]);
    assert!(
        said.contains("old, which it had replaced, is served in its place again"),
        "{said}"
    );
    assert_eq!(env.json(&["recall", "get", "old"])["trusted"], true);
    let said = env.ok(&["recall", "review", "--restore", "new"]);
    assert_eq!(
        said,
        "Took back the rejection of new: trusted again. It replaces old again, which is archived.\n"
    );
    let said = env.ok(&["recall", "review", "--unaccept", "new"]);
    assert!(
        said.starts_with("Took back the accept of new: unreviewed_auto")
            && said.contains(
                "old, which it had replaced, is served in its place again until new is accepted again."
            ),
        "{said}"
    );
    // Agents are still served the reviewed word.
    assert_eq!(env.json(&["recall", "get", "old"])["trusted"], true);
    let brief = env.json(&["recall", "brief", "ecto"]);
    assert!(
        brief["text"]
            .as_str()
            .unwrap()
            .contains("Run ecto.create first"),
        "{brief}"
    );
    let got = env.json(&["recall", "get", "new"]);
    assert_eq!(
        (got["trusted"].as_bool(), got["review_state"].as_str()),
        (Some(false), Some("unreviewed_auto"))
    );
    let show = env.ok(&["recall", "review", "--show", "new"]);
    assert!(show.contains("Agents' feedback: none yet"), "{show}");
    let start = env.ok(&["recall"]);
    assert!(
        start.contains("1 to review") && start.contains("`cairn recall review`"),
        "{start}"
    );
}

/// Rejecting the middle of a chain (`a` ← `b` ← `c`) leaves `c` the one entry served; the
/// JSON names no reinstated entry. Rejecting `c` then serves `a`, and restoring it says (from
/// the core) what it replaces again.
#[test]
fn rejecting_the_middle_of_a_chain_serves_only_its_leaf() {
    let env = synced();
    let mut b: Value =
        serde_json::from_str(&entry("b", SMALL, 2, 3, "Chain advice second", "Second.")).unwrap();
    b["supersedes_entry_id"] = json!("a");
    let mut c: Value =
        serde_json::from_str(&entry("c", SMALL, 4, 5, "Chain advice third", "Third.")).unwrap();
    c["supersedes_entry_id"] = json!("b");
    let file = write(
        &env,
        "chain3.jsonl",
        &[
            entry("a", SMALL, 0, 1, "Chain advice first", "First."),
            b.to_string(),
            c.to_string(),
        ],
    );
    env.ok(&["recall", "import", &file, "--yes"]);
    let served = || -> Vec<String> {
        let v = env.json(&["recall", "query", "chain advice", "--trusted-only"]);
        let mut ids: Vec<String> = v["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["id"].as_str().unwrap().to_owned())
            .collect();
        ids.sort();
        ids
    };
    assert_eq!(served(), ["c"]);
    let v = env.json(&["recall", "review", "--reject", "b"]);
    assert_eq!(
        v["changed"],
        json!([{"action": "reject", "id": "b", "status": "archived"}])
    );
    assert_eq!(served(), ["c"]);
    assert_eq!(env.json(&["recall", "get", "a"])["trusted"], false);
    let said = env.ok(&["recall", "review", "--reject", "c"]);
    assert!(
        said.contains("a, which it had replaced, is served in its place again"),
        "{said}"
    );
    assert_eq!(served(), ["a"]);
    let v = env.json(&["recall", "review", "--restore", "c"]);
    assert_eq!(v["changed"][0]["replaces"], "a", "{v}");
    assert_eq!(served(), ["c"]);
}

/// The commands that take an entry id take the unique start of one too, from 8 characters on,
/// as `cairn show` takes the start of a session key: a whole id wins over the longer ids it
/// starts, a start several ids share is refused naming them (each told apart, its title on the
/// line cleaned), and a shorter start is refused saying how much it takes.
#[test]
fn an_entry_is_named_by_the_unique_start_of_its_id() {
    let env = synced();
    let mut lines = vec![
        entry(
            "324cf25bb45f0a11",
            SMALL,
            0,
            1,
            "Start Phoenix",
            "Run mix phx.server",
        ),
        entry(
            "324cf25bb45f9d03",
            SMALL,
            1,
            2,
            "Free port \u{1b}[31m4000",
            "Stop the other server first",
        ),
        entry(
            "7be1d00c",
            SMALL,
            2,
            3,
            "Seed the database",
            "Run mix run priv/repo/seeds.exs",
        ),
        entry(
            "7be1d00c41aa5e62",
            SMALL,
            0,
            3,
            "Phoenix setup",
            "Run mix setup before the server",
        ),
    ];
    for n in 1..=7 {
        lines.push(entry(
            &format!("5eed0000a{n}"),
            SMALL,
            0,
            1,
            &format!("Seeded entry {n}"),
            &format!("Seeded body {n}"),
        ));
    }
    let file = write(&env, "ids.jsonl", &lines);
    assert_eq!(
        env.json(&["recall", "import", &file, "--yes"])["imported"],
        11
    );
    let conn = rusqlite::Connection::open(env.data().join("cairn.db")).unwrap();
    conn.execute(
        "UPDATE recall_entries SET review_state = 'unreviewed_auto', reviewed_at = NULL WHERE id = '7be1d00c41aa5e62'",
        [],
    )
    .unwrap();
    drop(conn);

    // A whole id names its entry, even when it starts a longer one.
    assert_eq!(
        env.json(&["recall", "get", "7be1d00c"])["title"],
        "Seed the database"
    );
    // A unique start names the one entry it starts, in every command taking an id.
    assert_eq!(
        env.json(&["recall", "get", "324cf25bb45f0"])["id"],
        "324cf25bb45f0a11"
    );
    let show = env.json(&["recall", "review", "--show", "7be1d00c41aa"]);
    assert_eq!(
        show["proposal"]["entry"]["id"], "7be1d00c41aa5e62",
        "{show}"
    );
    let accepted = env.json(&["recall", "review", "--accept", "7be1d00c41aa"]);
    assert_eq!(
        accepted["changed"][0]["id"], "7be1d00c41aa5e62",
        "{accepted}"
    );
    let said = env.ok(&["recall", "review", "--unaccept", "7be1d00c41a"]);
    assert!(
        said.starts_with("Took back the accept of 7be1d00c41aa5e62"),
        "{said}"
    );
    let edited = env.json(&[
        "recall",
        "review",
        "--edit",
        "7be1d00c41aa",
        "--title",
        "Run mix setup first",
    ]);
    assert_eq!(edited["changed"][0]["id"], "7be1d00c41aa5e62", "{edited}");
    let said = env.ok(&["recall", "review", "--reject", "324cf25bb45f9"]);
    assert!(said.starts_with("Rejected 324cf25bb45f9d03:"), "{said}");
    let said = env.ok(&["recall", "review", "--restore", "324cf25bb45f9"]);
    assert!(
        said.starts_with("Took back the rejection of 324cf25bb45f9d03"),
        "{said}"
    );
    let merged = env.json(&[
        "recall",
        "review",
        "--merge",
        "5eed0000a7",
        "--into",
        "5eed0000a6",
    ]);
    assert_eq!(
        (
            merged["changed"][0]["duplicate"].as_str(),
            merged["changed"][0]["kept"].as_str()
        ),
        (Some("5eed0000a7"), Some("5eed0000a6")),
        "{merged}"
    );
    let superseded = env.json(&[
        "recall",
        "review",
        "--supersede",
        "324cf25bb45f0",
        "--with",
        "7be1d00c41aa",
    ]);
    assert_eq!(
        (
            superseded["changed"][0]["old"].as_str(),
            superseded["changed"][0]["new"].as_str()
        ),
        (Some("324cf25bb45f0a11"), Some("7be1d00c41aa5e62")),
        "{superseded}"
    );

    // A shared start is refused, naming each entry it starts, told apart, with its title.
    let out = env.run(&["recall", "review", "--show", "324cf25bb45f"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("324cf25bb45f0 \"Start Phoenix\"")
            && err.contains("324cf25bb45f9 ")
            && err.contains("give more of the id")
            && !err.contains('\u{1b}')
            && err.lines().count() == 1,
        "{err}"
    );
    // Five at most are named, and the error says there are more.
    let out = env.run(&["recall", "get", "5eed0000"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert_eq!(err.matches("Seeded entry").count(), 5, "{err}");
    assert!(
        err.contains("5eed0000a1 ") && err.contains(", and more"),
        "{err}"
    );
    // A start shorter than 8 characters names nothing, and says so.
    let out = env.run(&["recall", "review", "--accept", "324cf25"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("not found: recall entry \"324cf25\"") && err.contains("from 8 characters on"),
        "{err}"
    );
    // A start no id has is not found.
    let out = env.run(&["recall", "get", "deadbeef00"]);
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("not found: recall entry \"deadbeef00\""),
        "{out:?}"
    );
}

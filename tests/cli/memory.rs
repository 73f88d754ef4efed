//! Memory at session start: what `cairn hook` prints when Claude Code or Codex starts a session
//! (issue 15), from the payloads they send (tests/fixtures/hooks).

use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::{Value, json};

use crate::support::{Env, fed, fixtures, git};

const SMALL: &str = "55604662-cf2a-4331-851a-ec234028f8ca";
const SECRET: &str = "ghp_R7mK2pX9vL4qT8wN3sB6yH1cJ5fD0gA2eZ4u";

fn entry(id: &str, scope: &str, project: &str, branch: &str, title: &str, body: &str) -> String {
    json!({"candidate_id": id, "session_id": SMALL, "type": "decision", "scope": scope,
           "project": project, "git_branch": branch, "title": title, "body": body,
           "transferable": true, "provenance_ok": true, "label": "correct",
           "evidence": {"ordinal_start": 0, "ordinal_end": 3}})
    .to_string()
}

/// A repository `shop` on branch `feat/cart`, and an archive holding entries for it and others.
fn setup() -> (Env, PathBuf) {
    let env = Env::new().with_fixtures();
    env.ok(&["sync"]);
    let repo = env.root.path().join("projects/shop");
    std::fs::create_dir_all(repo.join("src")).unwrap();
    git(&repo, &["init", "-q", "-b", "feat/cart"]);
    let lines = [
        entry(
            "cart-total",
            "project",
            "shop",
            "feat/cart",
            "Cart totals are computed in cents",
            &format!(
                "Integers only \u{1b}[31mred\u{1b}[0m \u{1b}]0;title\u{7} token {SECRET} here"
            ),
        ),
        entry(
            "branch-here",
            "branch",
            "shop",
            "feat/cart",
            "The cart branch keeps the old checkout",
            "Until the flag ships",
        ),
        entry(
            "branch-elsewhere",
            "branch",
            "shop",
            "feat/search",
            "Search branch only",
            "Elasticsearch stays pinned",
        ),
        entry(
            "repo-wide",
            "repository",
            "shop",
            "main",
            "Run the linter before pushing",
            "make lint",
        ),
        entry(
            "other-repo",
            "project",
            "garden",
            "feat/cart",
            "Another project entirely",
            "nothing to do with shop",
        ),
        entry(
            "rejected",
            "project",
            "shop",
            "feat/cart",
            "A rejected note",
            "was wrong",
        ),
        entry(
            "untrusted",
            "project",
            "shop",
            "feat/cart",
            "Nobody vouched for this",
            "unreviewed text",
        ),
    ];
    let file = env.root.path().join("entries.jsonl");
    std::fs::write(&file, lines.join("\n") + "\n").unwrap();
    let report = env.json(&["recall", "import", file.to_str().unwrap(), "--yes"]);
    assert_eq!(report["imported"], 7, "{report}");
    env.ok(&["recall", "review", "--reject", "rejected"]);
    // What extraction writes: accepted, but no person reviewed it.
    let db = rusqlite::Connection::open(env.data().join("cairn.db")).unwrap();
    db.execute(
        "UPDATE recall_entries SET review_state = 'unreviewed_auto' WHERE id = 'untrusted'",
        [],
    )
    .unwrap();
    drop(db);
    (env, repo)
}

/// `cairn hook --agent <agent>` with the agent's SessionStart fixture, `cwd` set to `cwd`.
fn session_start(env: &Env, agent: &str, cwd: &Path) -> Output {
    let text =
        std::fs::read_to_string(fixtures().join(format!("hooks/{agent}-session-start.json")))
            .unwrap();
    let mut payload: Value = serde_json::from_str(&text).unwrap();
    payload["cwd"] = json!(cwd);
    env.run_with_stdin(&["hook", "--agent", agent], payload.to_string().as_bytes())
}

/// The context a SessionStart hook's output gives the agent.
fn injected(out: &Output) -> String {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {:?}", String::from_utf8_lossy(&out.stdout)));
    assert_eq!(v["hookSpecificOutput"]["hookEventName"], "SessionStart");
    v["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap()
        .to_owned()
}

#[test]
fn a_session_starts_with_the_trusted_entries_of_its_repository_and_branch() {
    let (env, repo) = setup();
    for agent in ["claude", "codex"] {
        let text = injected(&session_start(&env, agent, &repo.join("src")));
        assert!(
            text.starts_with("Reviewed notes from past sessions in shop (branch feat/cart):\n"),
            "{text}"
        );
        for wanted in [
            "Cart totals are computed in cents",
            "The cart branch keeps the old checkout",
            "Run the linter before pushing",
        ] {
            assert!(text.contains(wanted), "{wanted} missing from\n{text}");
        }
        for unwanted in [
            "Search branch only",
            "Another project entirely",
            "A rejected note",
            "Nobody vouched for this",
        ] {
            assert!(!text.contains(unwanted), "{unwanted} in\n{text}");
        }
        // The branch's own entries come before the repository's.
        assert!(text.find("Run the linter").unwrap() > text.find("old checkout").unwrap());
        assert!(
            !text.contains(SECRET) && text.contains("[REDACTED:"),
            "{text}"
        );
        assert!(
            !text.contains('\u{1b}')
                && !text.contains('\u{7}')
                && text.contains("Integers only red"),
            "{text:?}"
        );
    }
}

#[test]
fn the_brief_reads_its_own_index_and_an_archive_before_it_gets_the_same_brief() {
    let (env, repo) = setup();
    let brief = injected(&session_start(&env, "claude", &repo));
    let path = env.data().join("cairn.db");
    let db = rusqlite::Connection::open(&path).unwrap();
    // Migration 17: the newest trusted entries of a project are one index range, already in
    // the brief's order (no sort, no visit to untrusted rows).
    let plan: Vec<String> = db
        .prepare(
            "EXPLAIN QUERY PLAN SELECT e.id FROM recall_entries e WHERE e.project = 'shop'
             AND e.status = 'accepted' AND e.review_state = 'human_reviewed'
             AND e.transferable = 1 AND e.provenance_ok = 1
             ORDER BY e.updated_at DESC, e.id LIMIT 50",
        )
        .unwrap()
        .query_map([], |r| r.get::<_, String>(3))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert!(
        plan.iter().any(|p| p.contains("recall_entries_trusted"))
            && !plan.iter().any(|p| p.contains("TEMP B-TREE")),
        "{plan:?}"
    );
    let indexed: i64 = db
        .query_row(
            "SELECT COUNT(*) FROM recall_entries INDEXED BY recall_entries_trusted
             WHERE project = 'shop' AND status = 'accepted' AND review_state = 'human_reviewed'
             AND transferable = 1 AND provenance_ok = 1",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(indexed, 4, "the trusted entries of shop");

    // The hook never migrates: an archive from before the index reads through the project
    // index and gives the same brief.
    db.execute_batch("DROP INDEX recall_entries_trusted; PRAGMA user_version = 16;")
        .unwrap();
    drop(db);
    assert_eq!(injected(&session_start(&env, "claude", &repo)), brief);
}

#[test]
fn the_brief_keeps_to_its_token_budget_and_can_be_turned_off() {
    let (env, repo) = setup();
    std::fs::write(
        env.data().join("config.toml"),
        "[recall]\nsession_start_tokens = 100\n",
    )
    .unwrap();
    let text = injected(&session_start(&env, "claude", &repo));
    assert!(text.len() <= 100 * 4, "{} bytes: {text}", text.len());
    // The branch's entries fill the budget; the repository-wide one is left out.
    assert!(
        text.contains("1. ") && !text.contains("Run the linter"),
        "{text}"
    );

    // Too small a budget for one note: nothing injected, and the hook says why on stderr.
    std::fs::write(
        env.data().join("config.toml"),
        "[recall]\nsession_start_tokens = 5\n",
    )
    .unwrap();
    let out = session_start(&env, "claude", &repo);
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success() && out.stdout.is_empty(), "{said}");
    assert!(
        said.contains("session_start_tokens = 5") && said.contains("raise it"),
        "{said}"
    );

    std::fs::write(
        env.data().join("config.toml"),
        "[recall]\nsession_start_tokens = 0\n",
    )
    .unwrap();
    let out = session_start(&env, "claude", &repo);
    assert!(out.status.success() && out.stdout.is_empty() && out.stderr.is_empty());
}

#[test]
fn nothing_is_injected_where_nothing_is_trusted() {
    let (env, _) = setup();
    let elsewhere = env.root.path().join("projects/unknown");
    std::fs::create_dir_all(&elsewhere).unwrap();
    git(&elsewhere, &["init", "-q", "-b", "main"]);
    let not_a_repo = env.root.path().join("plain");
    std::fs::create_dir_all(&not_a_repo).unwrap();
    for cwd in [&elsewhere, &not_a_repo] {
        for agent in ["claude", "codex"] {
            let out = session_start(&env, agent, cwd);
            assert!(out.status.success(), "{out:?}");
            assert!(
                out.stdout.is_empty(),
                "{:?}",
                String::from_utf8_lossy(&out.stdout)
            );
        }
    }
}

#[test]
fn a_broken_or_missing_archive_gives_an_empty_brief_and_exit_0() {
    let (env, repo) = setup();
    // Missing: an empty data dir is not created or migrated by the hook.
    let empty = env.root.path().join("no-archive");
    let out = session_start_with_data(&env, &empty, &repo);
    assert!(out.status.success() && out.stdout.is_empty(), "{out:?}");
    assert!(!empty.join("cairn.db").exists());

    // Broken: the database file overwritten with garbage; a config that does not parse.
    let db = env.data().join("cairn.db");
    for name in ["cairn.db-wal", "cairn.db-shm"] {
        let _ = std::fs::remove_file(env.data().join(name));
    }
    std::fs::write(&db, b"this is not a database, just bytes ".repeat(200)).unwrap();
    let out = session_start(&env, "codex", &repo);
    assert!(out.status.success() && out.stdout.is_empty(), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("no memory brief"));

    std::fs::write(env.data().join("config.toml"), "[recall\n").unwrap();
    let out = session_start(&env, "claude", &repo);
    assert!(out.status.success() && out.stdout.is_empty(), "{out:?}");
}

fn session_start_with_data(env: &Env, data: &Path, cwd: &Path) -> Output {
    let payload = json!({"session_id": "s", "transcript_path": null, "cwd": cwd,
                         "hook_event_name": "SessionStart", "source": "startup"});
    let mut cmd = env.command();
    cmd.env("CAIRN_DATA_DIR", data)
        .args(["hook", "--agent", "codex"]);
    fed(cmd, payload.to_string().as_bytes())
}

#[test]
fn hooks_install_runs_the_brief_at_session_start_and_no_memory_takes_it_off() {
    let (env, repo) = setup();
    let out = env.ok(&["hooks", "install", "--agent", "claude"]);
    assert!(
        out.contains("Added the claude capture hook to")
            && out.contains("Added the claude session-start brief to"),
        "{out}"
    );
    let path = env.home().join(".claude/settings.json");
    let settings: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let command = settings["hooks"]["SessionStart"][0]["hooks"][0]["command"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(command, settings["hooks"]["Stop"][0]["hooks"][0]["command"]);

    // What Claude Code does as a session starts: run the command through a shell, the payload
    // on stdin.
    let mut payload: Value = serde_json::from_str(
        &std::fs::read_to_string(fixtures().join("hooks/claude-session-start.json")).unwrap(),
    )
    .unwrap();
    payload["cwd"] = json!(repo);
    let mut sh = std::process::Command::new("sh");
    sh.env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", env.home())
        .env("CAIRN_DATA_DIR", env.data())
        .args(["-c", &command]);
    let text = injected(&fed(sh, payload.to_string().as_bytes()));
    assert!(text.contains("Cart totals are computed in cents"), "{text}");

    let doctor = env.json(&["doctor"]);
    let hook = |doctor: &Value| {
        doctor["checks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["name"] == "claude hook")
            .unwrap()["detail"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    assert!(
        hook(&doctor).contains("with memory at session start"),
        "{doctor}"
    );

    let out = env.ok(&["hooks", "install", "--agent", "claude", "--no-memory"]);
    assert!(
        out.contains("Removed the claude session-start brief from") && !out.contains("Added"),
        "{out}"
    );
    let again = env.ok(&["hooks", "install", "--agent", "claude", "--no-memory"]);
    assert!(
        again.contains("already installed") && again.contains("without the brief"),
        "{again}"
    );
    let settings: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert!(
        settings["hooks"].get("SessionStart").is_none(),
        "{settings}"
    );
    assert_eq!(
        settings["hooks"]["Stop"][0]["hooks"][0]["command"],
        command.as_str()
    );
    assert!(hook(&env.json(&["doctor"])).contains("memory at session start is off"));
}

/// A reviewer narrows an entry to its branch (`recall review --edit ID --scope branch`):
/// extraction writes every entry for the whole project, and a note true only on one branch was
/// packed into every other branch's brief. An entry with no branch cannot be narrowed to one.
#[test]
fn a_reviewer_narrows_an_entry_to_its_branch() {
    let (env, repo) = setup();
    let other = env.root.path().join("projects/shop-search");
    std::fs::create_dir_all(&other).unwrap();
    git(&repo, &["commit", "-q", "--allow-empty", "-m", "init"]);
    git(
        &repo,
        &[
            "worktree",
            "add",
            "-q",
            "-b",
            "feat/search",
            other.to_str().unwrap(),
        ],
    );
    let brief = |cwd: &Path| injected(&session_start(&env, "claude", cwd));
    assert!(brief(&other).contains("Cart totals are computed in cents"));

    let edited = env.json(&[
        "recall",
        "review",
        "--edit",
        "cart-total",
        "--scope",
        "branch",
        "--type",
        "warning",
    ]);
    assert!(edited.to_string().contains("cart-total"), "{edited}");
    let shown = env.json(&["recall", "get", "cart-total"]);
    assert_eq!(shown["scope"], "branch", "{shown}");
    assert_eq!(shown["type"], "warning", "{shown}");
    assert!(!brief(&other).contains("Cart totals are computed in cents"));
    assert!(brief(&repo).contains("Cart totals are computed in cents"));

    // No branch known: refused, nothing changed.
    let db = rusqlite::Connection::open(env.data().join("cairn.db")).unwrap();
    db.execute(
        "UPDATE recall_entries SET git_branch = '' WHERE id = 'repo-wide'",
        [],
    )
    .unwrap();
    drop(db);
    let out = env.run(&[
        "recall",
        "review",
        "--edit",
        "repo-wide",
        "--scope",
        "branch",
    ]);
    assert_ne!(out.status.code(), Some(0));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no branch is known for it"), "{err}");
    assert_eq!(
        env.json(&["recall", "get", "repo-wide"])["scope"],
        "repository"
    );
}

/// An agent that writes its SessionStart payload and keeps stdin open is answered all the
/// same: the hook reads to the payload's end, not the pipe's, so it never holds the agent's
/// start until the agent's own hook timeout.
#[test]
fn a_session_start_is_answered_while_stdin_stays_open() {
    use std::io::{Read as _, Write as _};
    let (env, repo) = setup();
    let text = std::fs::read_to_string(fixtures().join("hooks/claude-session-start.json")).unwrap();
    let mut payload: Value = serde_json::from_str(&text).unwrap();
    payload["cwd"] = json!(repo);
    let mut child = env
        .command()
        .args(["hook", "--agent", "claude"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    writeln!(stdin, "{payload}").unwrap();
    stdin.flush().unwrap();
    // Its whole stdout, which ends when the hook exits; stdin is still ours, and open.
    let mut stdout = child.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut out = Vec::new();
        let _ = stdout.read_to_end(&mut out);
        let _ = tx.send(out);
    });
    let answered = rx.recv_timeout(std::time::Duration::from_secs(120));
    if answered.is_err() {
        let _ = child.kill();
    }
    drop(stdin);
    let status = child.wait().unwrap();
    let out = answered.expect("no answer while stdin stayed open");
    assert!(status.success(), "{status:?}");
    let v: Value = serde_json::from_slice(&out)
        .unwrap_or_else(|e| panic!("{e}: {:?}", String::from_utf8_lossy(&out)));
    let context = v["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap();
    assert!(
        context.contains("Cart totals are computed in cents"),
        "{context}"
    );
}

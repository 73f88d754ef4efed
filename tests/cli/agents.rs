//! Every agent in the app: `--agent` on skim and Recall (one list of names, the core's), and
//! `resume` never offering a command that cannot reopen the session (a Cursor editor chat).

use serde_json::{Value, json};

use crate::branch::{Transcript, repo, sessions_of, skim};
use crate::support::Env;

const SMALL: &str = "55604662-cf2a-4331-851a-ec234028f8ca";
const CODEX: &str = "019fc8be-3658-7ca3-9e29-000000000000";

/// A Codex rollout of one exchange in `cwd` on `branch`, where a sync finds it.
fn codex_session(env: &Env, id: &str, cwd: &std::path::Path, branch: &str) {
    let now = jiff::Timestamp::now()
        .strftime("%Y-%m-%dT%H:%M:%S%.3fZ")
        .to_string();
    let lines = [
        json!({"timestamp": now, "type": "session_meta", "payload": {"id": id, "timestamp": now, "cwd": cwd,
            "originator": "codex_cli_rs", "cli_version": "0.146.0", "source": "cli", "git": {"branch": branch}}}),
        json!({"timestamp": now, "type": "event_msg", "payload": {"type": "user_message", "message": "look around"}}),
        json!({"timestamp": now, "type": "response_item", "payload": {"type": "message", "role": "user",
            "content": [{"type": "input_text", "text": "look around"}]}}),
        json!({"timestamp": now, "type": "response_item", "payload": {"type": "message", "role": "assistant",
            "content": [{"type": "output_text", "text": "Looked."}]}}),
    ];
    let dir = env.codex().join("2026/12/01");
    std::fs::create_dir_all(&dir).unwrap();
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(dir.join(format!("rollout-{id}.jsonl")), text).unwrap();
}

/// `skim branch main --include-weak --agent <agent>` in `dir`, as JSON.
fn skim_main_of(env: &Env, dir: &str, agent: &str) -> Value {
    skim(
        env,
        &[
            "-C",
            dir,
            "branch",
            "main",
            "--include-weak",
            "--agent",
            agent,
        ],
    )
}

fn agents_of(v: &Value) -> Vec<String> {
    let mut out: Vec<String> = v["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["agent"].as_str().unwrap().to_owned())
        .collect();
    out.sort();
    out
}

#[test]
fn skim_agent_keeps_only_that_agents_sessions_on_the_branch() {
    let env = Env::new();
    let repo = repo(env.root.path());
    let mut t = Transcript::new(&env, "s-claude-1", &repo, "main");
    t.user("hello");
    t.say("hi");
    t.hook(&env);
    codex_session(&env, "codex-on-main", &repo, "main");
    env.ok(&["sync"]);

    let dir = repo.to_str().unwrap();
    let all = skim(&env, &["-C", dir, "branch", "main", "--include-weak"]);
    assert_eq!(agents_of(&all), ["claude", "codex"], "{all}");
    let codex = skim_main_of(&env, dir, "codex");
    assert_eq!(agents_of(&codex), ["codex"], "{codex}");
    assert_eq!(codex["coverage"]["showing_sessions"], 1);
    let claude = skim_main_of(&env, dir, "claude");
    assert_eq!(sessions_of(&claude).len(), 1);
    assert_eq!(agents_of(&claude), ["claude"]);
    // An agent with nothing here: an empty skim, and hidden weak sessions of other agents are
    // not counted as its own.
    let gemini = skim(&env, &["-C", dir, "branch", "main", "--agent", "gemini"]);
    assert_eq!(gemini["sessions"], json!([]));
    assert_eq!(gemini["coverage"]["weak_sessions_hidden"], 0, "{gemini}");

    // The names are the core's: a wrong one is a usage error that lists them all.
    let out = env.run(&["skim", "branch", "main", "--agent", "claude-desktop"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    for name in ["claude", "opencode", "kiro", "atif"] {
        assert!(err.contains(name), "{err}");
    }
}

fn entry(id: &str, session: &str, agent: &str, title: &str) -> String {
    json!({"candidate_id": id, "session_id": session, "agent": agent, "type": "procedure", "scope": "project",
           "title": title, "body": title, "transferable": true, "provenance_ok": true, "label": "correct",
           "evidence": {"ordinal_start": 0, "ordinal_end": 1, "snippets": [title]}})
    .to_string()
}

fn ids(v: &Value, field: Option<&str>) -> Vec<String> {
    let list = match field {
        Some(f) => &v[f],
        None => v,
    };
    let mut out: Vec<String> = list
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["id"].as_str().unwrap().to_owned())
        .collect();
    out.sort();
    out
}

#[test]
fn recall_agent_follows_the_agents_of_an_entrys_evidence_sessions() {
    let env = Env::new().with_fixtures();
    env.ok(&["sync"]);
    // The second entry names Claude as its agent but its evidence is a Codex session: the
    // evidence decides.
    let file = env.root.path().join("e.jsonl");
    std::fs::write(
        &file,
        [
            entry("from-claude", SMALL, "claude", "Start the server with mix"),
            entry("from-codex", CODEX, "claude", "List the server files first"),
        ]
        .join("\n")
            + "\n",
    )
    .unwrap();
    let imported = env.json(&["recall", "import", file.to_str().unwrap(), "--yes"]);
    assert_eq!(imported["imported"], 2, "{imported}");

    let all = env.json(&["recall", "list"]);
    assert_eq!(ids(&all, None), ["from-claude", "from-codex"]);
    let codex = env.json(&["recall", "list", "--agent", "codex"]);
    assert_eq!(ids(&codex, None), ["from-codex"], "{codex}");
    let claude = env.json(&["recall", "list", "--agent", "claude"]);
    assert_eq!(ids(&claude, None), ["from-claude"], "{claude}");
    let none = env.json(&["recall", "list", "--agent", "gemini"]);
    assert_eq!(none, json!([]));
    let query = env.json(&["recall", "query", "server", "--agent", "codex"]);
    assert_eq!(ids(&query, Some("results")), ["from-codex"], "{query}");
    let out = env.run(&["recall", "list", "--agent", "nobody"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn a_cursor_editor_chat_says_to_open_cursor_and_offers_no_command() {
    let env = Env::new();
    let user = env.root.path().join("cursor-user");
    let db = user.join("globalStorage/state.vscdb");
    std::fs::create_dir_all(db.parent().unwrap()).unwrap();
    let sql = std::fs::read_to_string(
        crate::export::repo_root().join("tests/fixtures/cursor/vscdb/state.sql"),
    )
    .unwrap();
    rusqlite::Connection::open(&db)
        .unwrap()
        .execute_batch(&sql)
        .unwrap();
    let sync = |args: &[&str]| {
        let out = env
            .command()
            .env("CURSOR_USER_DIR", &user)
            .args(args)
            .output();
        crate::support::succeeded(out.unwrap(), "cairn with CURSOR_USER_DIR")
    };
    sync(&["sync", "--agent", "cursor"]);

    let v: Value = serde_json::from_str(&env.ok(&["--json", "resume", "c-agent"])).unwrap();
    assert_eq!(v["agent"], "cursor");
    assert_eq!(v["argv"], json!([]), "{v}");
    assert!(v["shell"].is_null(), "{v}");
    let problem = v["problem"].as_str().unwrap();
    assert!(
        problem.contains("Cursor editor") && problem.contains("in Cursor"),
        "{problem}"
    );
    assert!(!problem.contains("cursor-agent --resume"), "{problem}");
    // No command: printed or run, an error that says what to do instead.
    for args in [&["resume", "c-agent"][..], &["resume", "c-agent", "--run"]] {
        let out = env.run(args);
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        assert!(out.stdout.is_empty(), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("cannot resume c-agent")
                && err.contains("Cursor editor")
                && err.contains("pick the chat from its chat history"),
            "{err}"
        );
    }
}

#[test]
fn doctor_reports_every_agent_cairn_reads_found_or_not() {
    let env = Env::new();
    let doctor = env.json(&["doctor"]);
    let checks = doctor["checks"].as_array().unwrap();
    for agent in [
        "claude", "codex", "copilot", "qwen", "droid", "kimi", "gemini", "cursor", "aider",
        "crush", "opencode", "cline", "roo", "kilo", "kiro",
    ] {
        let mine: Vec<&Value> = checks
            .iter()
            .filter(|c| {
                let name = c["name"].as_str().unwrap();
                name == format!("{agent} source dir") || name == format!("{agent} sources")
            })
            .collect();
        assert!(!mine.is_empty(), "doctor says nothing of {agent}: {doctor}");
        // Found or not, each says which: the test's claude dir exists; the home is empty.
        for c in mine {
            let detail = c["detail"].as_str().unwrap();
            let found = agent == "claude" || agent == "codex";
            assert_eq!(
                !detail.contains("not present") && !detail.contains("none set"),
                found,
                "{agent}: {detail}"
            );
        }
    }
}

/// Hermes also keeps its sessions in `~/.hermes/state.db`, which Cairn does not read: doctor
/// counts the sessions there that no session document holds (those are not captured) and says
/// so, and is quiet about a database whose every session has a document.
#[test]
fn doctor_counts_the_hermes_sessions_only_its_state_db_holds() {
    let env = Env::new();
    let hermes = env.home().join(".hermes");
    let sessions = hermes.join("sessions");
    std::fs::create_dir_all(&sessions).unwrap();
    let db = rusqlite::Connection::open(hermes.join("state.db")).unwrap();
    db.execute_batch(
        "CREATE TABLE sessions (id TEXT PRIMARY KEY, source TEXT NOT NULL, started_at REAL NOT NULL);
         INSERT INTO sessions VALUES ('20260301_100000_aa', 'cli', 1772359200.5),
           ('20260301_110000_bb', 'telegram', 1772362800.0);",
    )
    .unwrap();
    std::fs::write(sessions.join("session_20260301_100000_aa.json"), "{}").unwrap();
    let state_db = || -> Value {
        env.json(&["doctor"])["checks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["name"] == "hermes state.db")
            .cloned()
            .unwrap_or(Value::Null)
    };
    let warned = state_db();
    assert_eq!(warned["status"], "warn", "{warned}");
    let detail = warned["detail"].as_str().unwrap();
    assert!(
        detail.contains("state.db: 1 of 2 sessions has no session document")
            && detail.contains("not captured"),
        "{detail}"
    );
    std::fs::write(sessions.join("session_20260301_110000_bb.json"), "{}").unwrap();
    let quiet = state_db();
    assert_eq!(quiet["status"], "ok", "{quiet}");
}

/// A data dir shared with a newer Cairn (the desktop app and the CLI built at different times)
/// may hold a session of an agent this build does not know. It is shown by that agent's name in
/// every list and never as Claude's (whose badge, filter and `claude --resume` would be wrong),
/// and resume says why it offers no command. Before, every such row read as a Claude session.
#[test]
fn a_session_of_an_agent_a_newer_cairn_reads_is_shown_by_its_name_never_as_claude() {
    let env = Env::new();
    let repo = repo(env.root.path());
    let mut t = Transcript::new(&env, "s-newer-agent", &repo, "main");
    t.user("tidy the readme");
    t.say("tidied");
    t.hook(&env);
    env.ok(&["sync"]);
    let key = crate::branch::key_of(&env, "s-newer-agent");
    let changed = env
        .whole_db()
        .execute(
            "UPDATE sessions SET agent = 'zed', ran_as = NULL WHERE session_key = ?1",
            [&key],
        )
        .unwrap();
    assert_eq!(changed, 1);

    let row = |v: &Value| -> Value {
        v.as_array()
            .unwrap()
            .iter()
            .find(|s| s["session_key"] == key.as_str())
            .cloned()
            .unwrap_or_else(|| panic!("{key} not in {v}"))
    };
    let listed = row(&env.json(&["sessions"]));
    assert_eq!(
        (&listed["agent"], &listed["ran_by"]),
        (&json!("atif"), &json!("zed"))
    );
    let shown = env.json(&["show", &key]);
    assert_eq!(
        (&shown["agent"], &shown["ran_by"]),
        (&json!("atif"), &json!("zed"))
    );
    let first = env.ok(&["show", &key]);
    assert!(
        first
            .lines()
            .next()
            .unwrap_or_default()
            .contains("of zed session"),
        "{first}"
    );
    let human = env.ok(&["sessions"]);
    let line = human
        .lines()
        .find(|l| l.contains("zed"))
        .unwrap_or_default();
    assert!(!line.contains("claude"), "{human}");

    let dir = repo.to_str().unwrap();
    let skimmed = skim(&env, &["-C", dir, "branch", "main", "--include-weak"]);
    let card = row(&skimmed["sessions"]);
    assert_eq!(
        (&card["agent"], &card["ran_by"]),
        (&json!("atif"), &json!("zed"))
    );
    let human = env.ok(&["-C", dir, "skim", "branch", "main", "--include-weak"]);
    assert!(human.contains("zed session"), "{human}");
    // No filter names it as Claude's.
    let claude = skim_main_of(&env, dir, "claude");
    assert_eq!(sessions_of(&claude), Vec::<String>::new(), "{claude}");
    // Every `--agent atif` finds it where it is badged; no other agent's filter does.
    let atif = skim_main_of(&env, dir, "atif");
    assert_eq!(sessions_of(&atif), std::slice::from_ref(&key), "{atif}");
    let keys = |v: &Value| -> Vec<String> {
        v.as_array()
            .unwrap()
            .iter()
            .map(|s| s["session_key"].as_str().unwrap_or_default().to_owned())
            .collect()
    };
    assert_eq!(
        keys(&env.json(&["sessions", "--agent", "atif"])),
        std::slice::from_ref(&key)
    );
    assert_eq!(
        keys(&env.json(&["sessions", "--agent", "claude"])),
        Vec::<String>::new()
    );
    let found = env.json(&["search", "readme", "--agent", "atif"]);
    assert!(keys(&found).contains(&key), "{found}");
    let found = env.json(&["search", "readme", "--agent", "claude"]);
    assert_eq!(keys(&found), Vec::<String>::new(), "{found}");

    let v = env.json(&["resume", &key]);
    assert_eq!(v["argv"], json!([]), "{v}");
    let problem = v["problem"].as_str().unwrap();
    assert!(
        problem.contains("no command for zed") && problem.contains("newer Cairn"),
        "{problem}"
    );
    assert!(!problem.contains("claude"), "{problem}");
}

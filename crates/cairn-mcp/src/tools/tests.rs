//! The tools called as the server calls them: the arguments object deserialized the way rmcp
//! does (`serde_json::from_value` into the tool's argument struct, a failure being the agent's
//! invalid-params error), then the tool method, then the text of its answer as JSON.
//!
//! The archive is built here: two Claude sessions and one Codex session on `main` of a fresh
//! repository, captured through the hook like a live agent's, and one reviewed Recall entry
//! whose evidence is in the Codex session.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

use cairn_core::Cairn;
use cairn_core::archive::Agent;
use rmcp::ErrorData;
use rmcp::handler::server::wrapper::Parameters;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use super::*;

mod brief_whole;
mod cursor_query;
mod damaged;
mod outside_git;
mod query_whole;
mod rebuilt;
mod same_name;
mod tool_input;

fn git(dir: &Path, args: &[&str]) {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
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
}

fn now() -> String {
    jiff::Timestamp::now()
        .strftime("%Y-%m-%dT%H:%M:%S%.3fZ")
        .to_string()
}

fn capture(cairn: &Cairn, agent: Agent, path: &Path, id: &str, cwd: &Path) {
    let input =
        json!({"session_id": id, "transcript_path": path, "cwd": cwd, "hook_event_name": "Stop"});
    cairn.hook(&input.to_string(), Some(agent), cwd).unwrap();
}

/// The tail of an AWS access key id ("AKIA" and 16 more) that a transcript hides behind an
/// invisible character (built here so no key-shaped literal is committed).
fn hidden_key_tail() -> String {
    ["Q3EG", "RTJ5", "XW7P", "LM2N"].concat()
}

/// What a terminal or a reader would act on, and a key split by a bidi override: the reply of
/// every Claude session in the fixture carries them, and long text a page must cut.
fn dirty_reply() -> String {
    format!(
        "Tidied. \u{1b}[31mred\u{1b}[0m \u{1b}]0;pwned\u{7} \u{202e}txet\u{202c} \u{9b}2J key AKIA\u{202d}{} {}",
        hidden_key_tail(),
        "and then some more words ".repeat(200)
    )
}

fn claude_session(cairn: &Cairn, dir: &Path, id: &str, cwd: &Path) {
    claude_session_with(cairn, dir, id, cwd, 1);
}

/// A Claude session of one prompt and `replies` assistant records, each [`dirty_reply`].
fn claude_session_with(cairn: &Cairn, dir: &Path, id: &str, cwd: &Path, replies: usize) {
    claude_session_replying(cairn, dir, id, cwd, &vec![dirty_reply(); replies]);
}

/// A Claude session of one prompt and an assistant record for each of `replies`.
fn claude_session_replying(cairn: &Cairn, dir: &Path, id: &str, cwd: &Path, replies: &[String]) {
    let base = json!({"sessionId": id, "cwd": cwd, "gitBranch": "main", "timestamp": now(), "version": "2.1.39"});
    let mut text = String::new();
    let prompt = json!({"type": "user", "message": {"role": "user", "content": format!("tidy the parser {id}")}});
    let reply = |(n, text): (usize, &String)| {
        json!({"type": "assistant", "message": {"id": format!("msg_{id}_{n}"), "role": "assistant", "model": "m",
            "content": [{"type": "text", "text": text}]}})
    };
    for (n, body) in std::iter::once(prompt)
        .chain(replies.iter().enumerate().map(reply))
        .enumerate()
    {
        let mut line = body.as_object().unwrap().clone();
        line.extend(base.as_object().unwrap().clone());
        line.insert("uuid".into(), json!(format!("{id}-{n}")));
        text.push_str(&format!("{}\n", Value::Object(line)));
    }
    let path = dir.join(format!("{id}.jsonl"));
    std::fs::write(&path, text).unwrap();
    capture(cairn, Agent::Claude, &path, id, cwd);
}

fn codex_session(cairn: &Cairn, dir: &Path, id: &str, cwd: &Path) {
    let t = now();
    let lines = [
        json!({"timestamp": t, "type": "session_meta", "payload": {"id": id, "timestamp": t, "cwd": cwd,
            "originator": "codex_cli_rs", "cli_version": "0.146.0", "source": "cli", "git": {"branch": "main"}}}),
        json!({"timestamp": t, "type": "event_msg", "payload": {"type": "user_message",
            "message": "how do we run the migrations"}}),
        json!({"timestamp": t, "type": "response_item", "payload": {"type": "message", "role": "assistant",
            "content": [{"type": "output_text", "text": "Run the migrations with make migrate."}]}}),
    ];
    let path = dir.join(format!("rollout-{id}.jsonl"));
    std::fs::write(&path, lines.map(|l| format!("{l}\n")).concat()).unwrap();
    capture(cairn, Agent::Codex, &path, id, cwd);
}

struct Fixture {
    _tmp: tempfile::TempDir,
    server: Server,
}

fn fixture() -> Fixture {
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    git(&repo, &["init", "-q", "-b", "main"]);
    git(&repo, &["commit", "-q", "--allow-empty", "-m", "init"]);
    let repo: PathBuf = std::fs::canonicalize(repo).unwrap();
    let data = tmp.path().join("data");
    let (claude, codex) = (tmp.path().join("claude"), tmp.path().join("codex"));
    std::fs::create_dir_all(&claude).unwrap();
    std::fs::create_dir_all(&codex).unwrap();
    {
        let setup = Cairn::open(&data).unwrap();
        setup
            .set_source_dirs(Agent::Claude, vec![claude.display().to_string()])
            .unwrap();
        setup
            .set_source_dirs(Agent::Codex, vec![codex.display().to_string()])
            .unwrap();
    }
    {
        // Opened again: the hook reads the source dirs from the configuration it opened with.
        let cairn = Cairn::open(&data).unwrap();
        claude_session(&cairn, &claude, "c1", &repo);
        claude_session(&cairn, &claude, "c2", &repo);
        codex_session(&cairn, &codex, "x1", &repo);
        let entry = json!({"candidate_id": "m1", "session_id": "x1", "type": "procedure",
            "scope": "project", "title": "Run the migrations", "body": "Run the migrations with make migrate",
            "transferable": true, "provenance_ok": true, "label": "correct",
            "evidence": {"ordinal_start": 0, "ordinal_end": 0, "snippets": ["migrations"]}});
        let report = cairn.recall_import(&format!("{entry}\n"), false).unwrap();
        assert_eq!(report.imported, 1, "{report:?}");
    }
    let cairn = Cairn::open_for_agents(&data).unwrap();
    Fixture {
        server: Server::new(Arc::new(crate::Session::new(cairn, &repo))),
        _tmp: tmp,
    }
}

/// The arguments as rmcp turns them into the tool's struct.
fn args<T: DeserializeOwned>(v: Value) -> Result<Parameters<T>, ErrorData> {
    serde_json::from_value(v).map(Parameters).map_err(|e| {
        ErrorData::invalid_params(format!("failed to deserialize parameters: {e}"), None)
    })
}

fn body(res: Res) -> Value {
    let res = res.unwrap();
    let text: String = res
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect();
    serde_json::from_str(&text).unwrap()
}

fn skim(server: &Server, v: Value) -> Res {
    server.skim(args(v)?)
}

fn agents_of(answer: &Value, key: &str) -> Vec<String> {
    let mut agents: Vec<String> = answer[key]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["agent"].as_str().unwrap().to_owned())
        .collect();
    agents.sort();
    agents
}

#[test]
fn skim_keeps_the_sessions_of_the_agent_asked_for() {
    let f = fixture();
    let all = body(skim(
        &f.server,
        json!({"target": "main", "include_weak": true}),
    ));
    assert_eq!(
        agents_of(&all, "sessions"),
        ["claude", "claude", "codex"],
        "{all}"
    );
    assert_eq!(all["agent"], Value::Null);

    let codex = body(skim(
        &f.server,
        json!({"target": "main", "include_weak": true, "agent": "codex"}),
    ));
    assert_eq!(agents_of(&codex, "sessions"), ["codex"], "{codex}");
    assert_eq!(codex["agent"], "codex");
    // The names the CLI takes, spelled as agents spell themselves.
    let claude = body(skim(
        &f.server,
        json!({"target": "main", "include_weak": true, "agent": "Claude-Code"}),
    ));
    assert_eq!(
        agents_of(&claude, "sessions"),
        ["claude", "claude"],
        "{claude}"
    );
    // An agent with no session on the branch: an empty page, not an error.
    let none = body(skim(
        &f.server,
        json!({"target": "main", "include_weak": true, "agent": "gemini"}),
    ));
    assert_eq!(agents_of(&none, "sessions"), Vec::<String>::new(), "{none}");
    // Blank is no filter.
    let blank = body(skim(
        &f.server,
        json!({"target": "main", "include_weak": true, "agent": "  "}),
    ));
    assert_eq!(agents_of(&blank, "sessions").len(), 3, "{blank}");
}

#[test]
fn skim_lists_the_sessions_of_the_repository_the_server_runs_in() {
    let tmp = tempfile::tempdir().unwrap();
    let repos: Vec<PathBuf> = ["one", "two"]
        .iter()
        .map(|name| {
            let repo = tmp.path().join(name);
            std::fs::create_dir_all(&repo).unwrap();
            git(&repo, &["init", "-q", "-b", "main"]);
            git(&repo, &["commit", "-q", "--allow-empty", "-m", "init"]);
            std::fs::canonicalize(repo).unwrap()
        })
        .collect();
    let (data, claude) = (tmp.path().join("data"), tmp.path().join("claude"));
    std::fs::create_dir_all(&claude).unwrap();
    Cairn::open(&data)
        .unwrap()
        .set_source_dirs(Agent::Claude, vec![claude.display().to_string()])
        .unwrap();
    {
        let cairn = Cairn::open(&data).unwrap();
        claude_session(&cairn, &claude, "in-one", &repos[0]);
        claude_session(&cairn, &claude, "in-two", &repos[1]);
    }
    for (repo, (id, other)) in repos
        .iter()
        .zip([("in-one", "in-two"), ("in-two", "in-one")])
    {
        let cairn = Cairn::open_for_agents(&data).unwrap();
        let server = Server::new(Arc::new(crate::Session::new(cairn, repo)));
        // `main` of both repositories is one branch name; each server sees its own.
        let page = body(skim(
            &server,
            json!({"target": "main", "include_weak": true}),
        ));
        let sessions = page["sessions"].as_array().unwrap();
        assert_eq!(sessions.len(), 1, "{page}");
        let text = page.to_string();
        assert!(text.contains(&format!("tidy the parser {id}")), "{page}");
        assert!(!text.contains(other), "{page}");
        assert_eq!(page["other_repo_sessions_hidden"], 1, "{page}");
    }
}

/// What a reader is not shown (a bidi override, a zero-width space) in a target or a filter
/// would make it read as a name it is not: refused, never cleaned into another name.
#[test]
fn an_argument_with_invisible_characters_is_refused() {
    let f = fixture();
    for target in ["ma\u{202e}in", "ma\u{200b}in", "main\u{2066}"] {
        let refused = skim(&f.server, json!({"target": target})).unwrap_err();
        assert!(
            refused.message.contains("invisible characters"),
            "{target:?}: {}",
            refused.message
        );
    }
    let branch = f
        .server
        .search(args(json!({"query": "parser", "branch": "ma\u{202e}in"})).unwrap())
        .unwrap_err();
    assert!(branch.message.contains("`branch`"), "{}", branch.message);
    let why = f
        .server
        .why(args(json!({"target": "src/lib.rs\u{202e}"})).unwrap())
        .unwrap_err();
    assert!(why.message.contains("invisible"), "{}", why.message);
}

/// A refusal tells an agent what to do with its tools, not with the CLI's commands.
#[test]
fn a_refusal_names_tools_not_cli_commands() {
    let f = fixture();
    let missing = f
        .server
        .show(
            args(json!({"address": "cairn://session/sha256-00000000000000000000000000000000"}))
                .unwrap(),
        )
        .unwrap_err();
    assert!(
        !missing.message.contains("cairn sessions"),
        "{}",
        missing.message
    );
    assert!(
        missing.message.contains("`skim` or `search` tool"),
        "{}",
        missing.message
    );
    for (core, agent) in [
        (
            "evidence range 9-10 is not in session abc (it has 3 of those records); list them with `cairn show abc --turn <n>`",
            "list them with `show` on the session's address (`cairn://session/<key>?turn=<n>`)",
        ),
        (
            "no git repository found here; use -C to choose a repository",
            "the server reads the repository it was started in",
        ),
        ("no vectors; use --mode lexical", "`\"mode\": \"lexical\"`"),
        (
            "HEAD is detached at abc1234 in /r; pass a target: cairn skim branch <name>",
            "pass `target` (a branch name",
        ),
    ] {
        let said = super::for_agents(core);
        assert!(said.contains(agent), "{said}");
        assert!(
            !said.contains("cairn show") && !said.contains("-C to") && !said.contains("cairn skim"),
            "{said}"
        );
    }
}

/// A repository given by its path finds what its directory name finds (a session's project is
/// that name).
#[test]
fn search_takes_a_repository_by_name_or_by_path() {
    let f = fixture();
    let hits = |repo: &str| {
        body(
            f.server
                .search(args(json!({"query": "tidied", "repo": repo})).unwrap()),
        )["hits"]
            .as_array()
            .unwrap()
            .len()
    };
    let repo = f._tmp.path().join("repo");
    let by_name = hits("repo");
    assert!(by_name > 0);
    assert_eq!(hits(&repo.to_string_lossy()), by_name);
    assert_eq!(hits(&format!("{}/", repo.display())), by_name);
    assert_eq!(hits("repo/"), by_name);
    assert_eq!(hits("elsewhere"), 0);
}

#[test]
fn a_snippet_never_starts_inside_a_path_the_answer_hides() {
    let f = fixture();
    let (repo, claude) = (f._tmp.path().join("repo"), f._tmp.path().join("claude"));
    let cairn = Cairn::open(f._tmp.path().join("data")).unwrap();
    // The index's snippet is 16 words ending at the text's end: it starts inside the path.
    let deep = "/srv/ledger/quarterly/board/minutes/draft/v2/alpha/beta/gamma/delta/epsilon/zeta/eta/theta/iota/kappa/plan.md";
    let reply = format!(
        "{} the figures are in {deep} zebrafish",
        "filler words ".repeat(40)
    );
    claude_session_replying(&cairn, &claude, "p1", &repo, &[reply]);
    let answer = body(
        f.server
            .search(args(json!({"query": "zebrafish"})).unwrap()),
    );
    let snippet = answer["hits"][0]["snippet"].as_str().unwrap();
    assert!(
        snippet.contains("[REDACTED:path] **zebrafish**"),
        "{snippet}"
    );
    for part in ["ledger", "minutes", "gamma", "plan.md"] {
        assert!(!snippet.contains(part), "{part} left in {snippet}");
    }
}

#[test]
fn a_hostile_agent_argument_is_refused_with_the_known_names() {
    let f = fixture();
    let unknown = skim(&f.server, json!({"agent": "nosuch"})).unwrap_err();
    assert_eq!(unknown.code, rmcp::model::ErrorCode::INVALID_PARAMS);
    assert!(
        unknown.message.contains("unknown agent \"nosuch\""),
        "{}",
        unknown.message
    );
    for name in Agent::EVERY.map(Agent::as_str) {
        assert!(
            unknown.message.contains(name),
            "{name} not named: {}",
            unknown.message
        );
    }
    // A control character is refused before any lookup; nothing of it comes back.
    let escape = skim(&f.server, json!({"agent": "claude\u{1b}[2J"})).unwrap_err();
    assert!(
        escape.message.contains("control or invisible characters"),
        "{}",
        escape.message
    );
    assert!(!escape.message.contains('\u{1b}'), "{}", escape.message);

    let wrong_type = skim(&f.server, json!({"agent": 42})).unwrap_err();
    assert!(
        wrong_type.message.contains("invalid type"),
        "{}",
        wrong_type.message
    );
    let list = skim(&f.server, json!({"agent": ["claude"]})).unwrap_err();
    assert!(list.message.contains("invalid type"), "{}", list.message);

    let huge = "claude".repeat(100_000);
    let long = skim(&f.server, json!({"agent": huge})).unwrap_err();
    assert!(long.message.contains("`agent`"), "{}", long.message);
    assert!(
        long.message.len() < 300,
        "the error echoes the argument: {} bytes",
        long.message.len()
    );

    // The same check guards every tool that takes an agent.
    let search = f
        .server
        .search(args(json!({"query": "parser", "agent": "nosuch"})).unwrap())
        .unwrap_err();
    assert!(
        search.message.contains("expected one of claude"),
        "{}",
        search.message
    );
    let recall = f
        .server
        .recall_query(args(json!({"query": "", "agent": "nosuch"})).unwrap())
        .unwrap_err();
    assert!(
        recall.message.contains("expected one of claude"),
        "{}",
        recall.message
    );
}

#[test]
fn recall_keeps_the_entries_of_the_agent_asked_for() {
    let f = fixture();
    let ids = |v: Value| -> Vec<String> {
        let answer = body(f.server.recall_query(args(v).unwrap()));
        answer["entries"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["title"].as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(ids(json!({"query": "migrations"})), ["Run the migrations"]);
    assert_eq!(
        ids(json!({"query": "migrations", "agent": "codex"})),
        ["Run the migrations"]
    );
    assert_eq!(
        ids(json!({"query": "migrations", "agent": "claude"})),
        Vec::<String>::new()
    );
    let packed = |agent: &str| {
        let answer = body(
            f.server
                .recall_brief(args(json!({"query": "migrations", "agent": agent})).unwrap()),
        );
        answer["entries"].as_array().unwrap().len()
    };
    assert_eq!((packed("codex"), packed("claude")), (1, 0));
}

/// The outcome as a client receives it: the text and whether it is marked as an error, or the
/// JSON-RPC error.
fn settled(res: Res) -> Result<(bool, String), ErrorData> {
    let res = settle(res, true)?;
    let text = res
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect();
    Ok((res.is_error == Some(true), text))
}

#[test]
fn what_the_archive_cannot_do_yet_is_the_tools_answer_not_a_protocol_error() {
    let f = fixture();
    // No vectors were ever built (and maybe no model is installed): the agent reads why and
    // what to use instead, in the tool's own answer.
    for mode in ["hybrid", "vector"] {
        let res = f
            .server
            .search(args(json!({"query": "parser", "mode": mode})).unwrap());
        let (is_error, text) = settled(res)
            .unwrap_or_else(|e| panic!("{mode}: a JSON-RPC error ({:?}): {}", e.code, e.message));
        assert!(is_error, "{mode}: not marked as an error: {text}");
        assert!(
            text.contains(r#"`"mode": "lexical"`"#) && !text.contains("--mode"),
            "{mode}: the answer does not say what to pass instead: {text}"
        );
    }
    // A wrong argument and a missing address are the tool's answer too (the spec's input
    // validation errors), so the model reads them and corrects its call.
    let (is_error, wrong) = settled(
        f.server
            .search(args(json!({"query": "parser", "agent": "nosuch"})).unwrap()),
    )
    .unwrap();
    assert!(is_error && wrong.contains("expected one of"), "{wrong}");
    let (is_error, gone) = settled(
        f.server
            .show(args(json!({"address": "cairn://session/nosuch"})).unwrap()),
    )
    .unwrap();
    assert!(is_error && gone.contains("nosuch"), "{gone}");
    // A tool the server does not have stays a JSON-RPC error.
    let unknown = settle::<CallToolResult>(
        Err(ErrorData::invalid_params("tool not found", None)),
        false,
    )
    .unwrap_err();
    assert_eq!(unknown.code, rmcp::model::ErrorCode::INVALID_PARAMS);
    // And a successful answer passes through unchanged.
    let (is_error, text) = settled(
        f.server
            .search(args(json!({"query": "parser", "mode": "lexical"})).unwrap()),
    )
    .unwrap();
    assert!(!is_error, "{text}");
    assert!(text.contains("tidy the parser"), "{text}");
}

/// The JSON schema a tool announces for its arguments.
fn schema<T: schemars::JsonSchema>() -> Value {
    serde_json::to_value(schemars::schema_for!(T)).unwrap()
}

/// What a generated argument is made from: a value of the property's own type, drawn from
/// these, or any value at all.
#[derive(Debug, Clone)]
struct Seed {
    typed: bool,
    text: String,
    n: u32,
    as_float: bool,
    b: bool,
    pick: proptest::sample::Index,
    any: Value,
}

/// A value for the property `prop` of `schema`: of its type (one of its enum's values, a
/// string, a count, a flag, a list of strings) when `seed.typed`, else the seed's any value.
fn fitting(schema: &Value, prop: &Value, seed: &Seed) -> Value {
    if !seed.typed {
        return seed.any.clone();
    }
    // Enum values and types, through `$ref`, `anyOf` and `oneOf`.
    fn walk(schema: &Value, s: &Value, values: &mut Vec<Value>, types: &mut Vec<String>) {
        if let Some(r) = s["$ref"].as_str() {
            let name = r.trim_start_matches("#/$defs/");
            walk(schema, &schema["$defs"][name], values, types);
        }
        for key in ["anyOf", "oneOf"] {
            for alt in s[key].as_array().into_iter().flatten() {
                walk(schema, alt, values, types);
            }
        }
        values.extend(s["enum"].as_array().into_iter().flatten().cloned());
        if let Some(c) = s.get("const") {
            values.push(c.clone());
        }
        match &s["type"] {
            Value::String(t) => types.push(t.clone()),
            Value::Array(ts) => {
                types.extend(ts.iter().filter_map(|t| t.as_str().map(str::to_owned)))
            }
            _ => {}
        }
    }
    let (mut values, mut types) = (Vec::new(), Vec::new());
    walk(schema, prop, &mut values, &mut types);
    if !values.is_empty() {
        return seed.pick.get(&values).clone();
    }
    match types
        .iter()
        .find(|t| t.as_str() != "null")
        .map(String::as_str)
    {
        Some("string") => Value::from(seed.text.clone()),
        Some("integer") if seed.as_float => Value::from(f64::from(seed.n)),
        Some("integer") => Value::from(seed.n),
        Some("boolean") => Value::from(seed.b),
        Some("array") => Value::from(vec![seed.text.clone()]),
        _ => seed.any.clone(),
    }
}

/// Whether `s` holds a character a terminal or a log could act on.
fn controls(s: &str) -> bool {
    s.chars().any(|c| {
        c.is_control() && c != '\n' && c != '\t'
            || ('\u{80}'..='\u{9f}').contains(&c)
            || cairn_core::text::is_bidi_control(c)
    })
}

/// Every string in `v` (keys too) that holds a control character.
fn dirty_strings(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::String(s) if controls(s) => out.push(s.clone()),
        Value::Array(items) => items.iter().for_each(|i| dirty_strings(i, out)),
        Value::Object(map) => {
            for (k, v) in map {
                if controls(k) {
                    out.push(k.clone());
                }
                dirty_strings(v, out);
            }
        }
        _ => {}
    }
}

/// What an agent (or what it read) may put in an argument: words and addresses of this
/// archive, control sequences, long text, numbers of every kind, and nested values.
fn hostile_value() -> impl proptest::strategy::Strategy<Value = Value> {
    use proptest::prelude::*;
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>().prop_map(Value::from),
        (0u32..200).prop_map(|n| Value::from(f64::from(n))),
        hostile_text().prop_map(Value::from),
    ];
    leaf.prop_recursive(2, 12, 4, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::from),
            proptest::collection::btree_map("[a-z_]{1,8}", inner, 0..3)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// Text an agent may send: words and addresses of this archive, control sequences, long text.
fn hostile_text() -> impl proptest::strategy::Strategy<Value = String> {
    use proptest::prelude::*;
    prop_oneof![
        Just("main".to_owned()),
        Just("parser".to_owned()),
        Just("migrations".to_owned()),
        Just("c1".to_owned()),
        Just("x1".to_owned()),
        Just("hybrid".to_owned()),
        Just("codex".to_owned()),
        Just("2026-01-01".to_owned()),
        Just("cairn://session/c1?record=0".to_owned()),
        Just("cairn://session/c1?turn=0".to_owned()),
        Just("skim.3".to_owned()),
        "\\PC{0,24}",
        "[a-z \u{1b}\u{7}\u{9b}\u{0}\r\n\\[\\];]{0,24}",
        (1usize..200_000).prop_map(|n| "\u{1b}]0;x".repeat(n / 5 + 1)),
    ]
}

/// Any arguments an agent may send to any tool that reads, as the client receives the outcome
/// ([`settle`]): never a panic; the answer is JSON within the byte budget with no control
/// character in any string, or a refusal of one clean line of at most [`MAX_ERROR`]
/// characters. Each tool's own property names are used with any values (a name no tool has
/// only now and then: it is refused before anything runs).
#[test]
fn any_arguments_get_a_clean_answer_or_a_clean_refusal() {
    use proptest::prelude::*;
    use proptest::test_runner::{Config, TestRunner};
    let f = fixture();
    type Call = fn(&Server, Value) -> Res;
    let tools: Vec<(&str, Value, Call)> = vec![
        ("skim", schema::<SkimArgs>(), |s, v| s.skim(args(v)?)),
        ("show", schema::<ShowArgs>(), |s, v| s.show(args(v)?)),
        ("search", schema::<SearchArgs>(), |s, v| s.search(args(v)?)),
        ("why", schema::<WhyArgs>(), |s, v| s.why(args(v)?)),
        ("recall_query", schema::<RecallQueryArgs>(), |s, v| {
            s.recall_query(args(v)?)
        }),
        ("recall_brief", schema::<RecallBriefArgs>(), |s, v| {
            s.recall_brief(args(v)?)
        }),
    ];
    let names: Vec<Vec<String>> = tools
        .iter()
        .map(|(_, schema, _)| {
            schema["properties"]
                .as_object()
                .unwrap()
                .keys()
                .cloned()
                .collect()
        })
        .collect();
    assert!(names.iter().all(|n| !n.is_empty()));
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(256);
    let mut runner = TestRunner::new(Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    });
    let strategy = (
        0..tools.len(),
        proptest::collection::vec(
            (
                any::<prop::sample::Index>(),
                (
                    proptest::bool::weighted(0.75),
                    hostile_text(),
                    0u32..300,
                    any::<bool>(),
                    any::<bool>(),
                    any::<prop::sample::Index>(),
                    hostile_value(),
                )
                    .prop_map(|(typed, text, n, as_float, b, pick, any)| Seed {
                        typed,
                        text,
                        n,
                        as_float,
                        b,
                        pick,
                        any,
                    }),
            ),
            0..5,
        ),
        // Now and then a property no tool has, named with control sequences or at length.
        proptest::option::weighted(
            0.2,
            (
                prop_oneof![
                    "[a-z\u{1b}\u{9b}\u{7}\\[\\];0-9]{1,12}",
                    (1usize..100_000).prop_map(|n| "k".repeat(n)),
                ],
                hostile_value(),
            ),
        ),
    );
    // How many calls were answered, not refused: the property must reach the tools' work.
    let answered = std::sync::atomic::AtomicU32::new(0);
    runner
        .run(&strategy, |(tool, fields, stranger)| {
            let (name, schema, call) = &tools[tool];
            let mut arguments: serde_json::Map<String, Value> = fields
                .into_iter()
                .map(|(i, seed)| {
                    let prop = i.get(&names[tool]);
                    let value = fitting(schema, &schema["properties"][prop], &seed);
                    (prop.clone(), value)
                })
                .collect();
            if let Some((key, value)) = stranger {
                arguments.insert(key, value);
            }
            let asked = Value::Object(arguments);
            match settle(call(&f.server, asked.clone()), true) {
                Ok(res) => {
                    answered.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    for c in &res.content {
                        let text = &c.as_text().expect("answers are text").text;
                        prop_assert!(
                            text.len() <= crate::bound::MAX_BYTES + 4096,
                            "{name}({asked}): {} bytes",
                            text.len()
                        );
                        // A tool's own refusal (`is_error`) may be prose; an answer is JSON.
                        let mut dirty = Vec::new();
                        match serde_json::from_str::<Value>(text) {
                            Ok(v) => dirty_strings(&v, &mut dirty),
                            Err(_) => prop_assert!(
                                res.is_error == Some(true),
                                "{name}({asked}): an answer that is no JSON: {text}"
                            ),
                        }
                        prop_assert!(
                            dirty.is_empty() && !controls(text),
                            "{name}({asked}): control characters in {dirty:?}"
                        );
                    }
                }
                Err(e) => prop_assert!(
                    !controls(&e.message) && e.message.chars().count() <= MAX_ERROR + 1,
                    "{name}({asked}): the refusal {:?}",
                    e.message
                ),
            }
            Ok(())
        })
        .unwrap();
    let answered = answered.into_inner();
    assert!(
        answered >= cases / 10,
        "{answered} of {cases} calls answered"
    );
}

/// Words hashed into 16 dimensions: vectors without a model to load.
struct Hashed;

impl cairn_core::semantic::embed::Embedder for Hashed {
    fn fingerprint(&self) -> &str {
        "hashed/mcp-test"
    }
    fn dims(&self) -> usize {
        16
    }
    fn embed(
        &self,
        texts: &[&str],
        _kind: cairn_core::semantic::embed::InputKind,
    ) -> cairn_core::Result<Vec<f32>> {
        Ok(texts
            .iter()
            .flat_map(|t| {
                let mut v = vec![0.0f32; 16];
                for w in t.split_whitespace() {
                    v[w.bytes().map(usize::from).sum::<usize>() % 16] += 1.0;
                }
                cairn_core::semantic::embed::normalize(&mut v);
                v
            })
            .collect())
    }
    fn refresh_on_write(&self) -> bool {
        false
    }
    fn describe(&self) -> String {
        "hashed".into()
    }
}

#[test]
fn a_search_by_meaning_after_a_hook_capture_answers_and_counts_the_turns_waiting() {
    let f = fixture();
    let cairn = &f.server.session.cairn;
    cairn.set_embedder(Arc::new(Hashed));
    cairn
        .embeddings_build(
            cairn_core::semantic::vectors::VectorStore::Sessions,
            false,
            &|_, _| {},
        )
        .unwrap();
    let ask = |mode: &str| -> Value {
        let (is_error, text) = settled(
            f.server
                .search(args(json!({"query": "tidy the parser", "mode": mode})).unwrap()),
        )
        .unwrap();
        assert!(!is_error, "{mode}: {text}");
        serde_json::from_str(&text).unwrap()
    };
    assert_eq!(ask("hybrid")["vectors_pending"], 0);
    // An agent's Stop hook (another process) captures one more session; no build runs.
    let repo = std::fs::canonicalize(f._tmp.path().join("repo")).unwrap();
    let hook = Cairn::open(f._tmp.path().join("data")).unwrap();
    claude_session(&hook, &f._tmp.path().join("claude"), "c3", &repo);
    let hybrid = ask("hybrid");
    assert_eq!(hybrid["mode"], "hybrid");
    assert_eq!(hybrid["vectors_pending"], 1, "{hybrid}");
    let titles: Vec<&str> = hybrid["hits"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|h| h["title"].as_str())
        .collect();
    assert!(
        titles.iter().any(|t| t.contains("c3")),
        "the new session is found by words: {hybrid}"
    );
    assert_eq!(ask("lexical")["vectors_pending"], 0);
}

/// Every string an answer carries, the items of its list too.
fn strings(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::String(s) => out.push(s.clone()),
        Value::Array(items) => items.iter().for_each(|i| strings(i, out)),
        Value::Object(map) => {
            for (k, v) in map {
                out.push(k.clone());
                strings(v, out);
            }
        }
        _ => {}
    }
}

/// The items of every list tool leave as its body does: no control sequence, no bidi
/// override, no key a hidden character split, no string longer than the cut.
#[test]
fn every_item_of_an_answer_is_cleaned_redacted_and_cut() {
    let f = fixture();
    let key = format!("AKIA{}", hidden_key_tail());
    let hits = body(
        f.server
            .search(args(json!({"query": "tidied", "limit": 5})).unwrap()),
    );
    let record = hits["hits"][0]["address"].as_str().unwrap().to_owned();
    let session = record.split('?').next().unwrap().to_owned();
    // Matches are marked as a model reads emphasis, not with the core's private-use marks.
    let snippet = hits["hits"][0]["snippet"].as_str().unwrap();
    assert!(snippet.contains("**Tidied**"), "{snippet}");
    assert!(!snippet.contains(['\u{e000}', '\u{e001}']), "{snippet}");
    let answers = [
        ("search", hits),
        (
            "show record",
            body(f.server.show(args(json!({"address": record})).unwrap())),
        ),
        (
            "show turn",
            body(
                f.server
                    .show(args(json!({"address": format!("{session}?turn=0")})).unwrap()),
            ),
        ),
        (
            "show session",
            body(f.server.show(args(json!({"address": session})).unwrap())),
        ),
        (
            "skim",
            body(skim(
                &f.server,
                json!({"target": "main", "include_weak": true}),
            )),
        ),
    ];
    for (what, answer) in answers {
        let mut all = Vec::new();
        strings(&answer, &mut all);
        let mut dirty = Vec::new();
        dirty_strings(&answer, &mut dirty);
        assert!(dirty.is_empty(), "{what}: control characters in {dirty:?}");
        for s in &all {
            assert!(!s.contains(&key), "{what}: the hidden key left: {s}");
            assert!(
                s.chars().count() <= crate::bound::MAX_STRING + 1,
                "{what}: a string of {} characters",
                s.chars().count()
            );
        }
    }
}

/// A record's address shows it in its turn with those around it, as `cairn show` does for the
/// same link: `limit` records (20 by default) of the turn, 9 before the cited one and 10 after,
/// the cited one marked, and whether the turn holds more before and after the window.
#[test]
fn a_record_address_shows_the_record_among_its_neighbours() {
    let f = fixture();
    let repo = std::fs::canonicalize(f._tmp.path().join("repo")).unwrap();
    let hook = Cairn::open(f._tmp.path().join("data")).unwrap();
    claude_session_with(&hook, &f._tmp.path().join("claude"), "window", &repo, 60);
    let hits = body(
        f.server
            .search(args(json!({"query": "tidy the parser window"})).unwrap()),
    );
    let session = hits["hits"][0]["address"].as_str().unwrap();
    let session = session.split('?').next().unwrap();
    let mut ordinals = Vec::new();
    let mut cited = Vec::new();
    let mut cursor: Option<String> = None;
    let mut first: Option<Value> = None;
    loop {
        let mut asked = json!({"address": format!("{session}?record=30")});
        if let Some(c) = &cursor {
            asked["cursor"] = json!(c);
        }
        let page = body(f.server.show(args(asked).unwrap()));
        for r in page["records"].as_array().unwrap() {
            ordinals.push(r["ordinal"].as_u64().unwrap());
            if r["cited"] == true {
                cited.push(r["ordinal"].as_u64().unwrap());
            }
        }
        cursor = page["next_cursor"].as_str().map(str::to_owned);
        first.get_or_insert(page);
        if cursor.is_none() {
            break;
        }
    }
    assert_eq!(ordinals, (21..=40).collect::<Vec<u64>>());
    assert_eq!(cited, [30]);
    let first = first.unwrap();
    assert_eq!(first["cited_records"], json!({"first": 30, "last": 30}));
    assert_eq!(
        (&first["has_more_before"], &first["has_more_after"]),
        (&json!(true), &json!(true))
    );
    assert_eq!(first["turn_address"], format!("{session}?turn=0").as_str());
}

/// A record range the byte budget cuts goes on from the cursor to its end, each record once.
#[test]
fn a_cut_record_range_pages_to_its_end() {
    let f = fixture();
    let repo = std::fs::canonicalize(f._tmp.path().join("repo")).unwrap();
    let hook = Cairn::open(f._tmp.path().join("data")).unwrap();
    claude_session_with(&hook, &f._tmp.path().join("claude"), "long", &repo, 60);
    let hits = body(
        f.server
            .search(args(json!({"query": "tidy the parser long"})).unwrap()),
    );
    let session = hits["hits"][0]["address"].as_str().unwrap();
    let session = session.split('?').next().unwrap();
    let range = format!("{session}?record=0-60");
    let mut ordinals = Vec::new();
    let mut cursor: Option<String> = None;
    let mut pages = 0;
    loop {
        pages += 1;
        assert!(pages <= 20, "the pages never end: {ordinals:?}");
        let mut asked = json!({"address": range, "limit": 100});
        if let Some(c) = &cursor {
            asked["cursor"] = json!(c);
        }
        let page = body(f.server.show(args(asked).unwrap()));
        ordinals.extend(
            page["records"]
                .as_array()
                .unwrap()
                .iter()
                .map(|r| r["ordinal"].as_u64().unwrap()),
        );
        match page["next_cursor"].as_str() {
            Some(next) => cursor = Some(next.to_owned()),
            None => break,
        }
    }
    assert!(pages > 1, "60 long records fit one page");
    let expected: Vec<u64> = (0..=60).collect();
    assert_eq!(ordinals, expected);
}

/// A record range longer than `limit` is paged, not refused: each answer holds `limit` of the
/// cited records, and `next_records` the address of the rest, which `show` takes back until
/// every cited record was shown once (`cairn show` prints the same range whole).
#[test]
fn a_record_range_longer_than_the_limit_comes_a_page_at_a_time() {
    let f = fixture();
    let repo = std::fs::canonicalize(f._tmp.path().join("repo")).unwrap();
    let hook = Cairn::open(f._tmp.path().join("data")).unwrap();
    let replies: Vec<String> = (0..40).map(|i| format!("reply {i}")).collect();
    claude_session_replying(
        &hook,
        &f._tmp.path().join("claude"),
        "paged",
        &repo,
        &replies,
    );
    let hits = body(
        f.server
            .search(args(json!({"query": "tidy the parser paged"})).unwrap()),
    );
    let session = hits["hits"][0]["address"].as_str().unwrap();
    let session = session.split('?').next().unwrap().to_owned();
    let mut address = format!("{session}?record=3-27");
    let mut cited = Vec::new();
    let mut answers = 0;
    loop {
        answers += 1;
        assert!(answers <= 10, "the pages never end: {cited:?}");
        let page = body(
            f.server
                .show(args(json!({"address": address, "limit": 10})).unwrap()),
        );
        let records = page["records"].as_array().unwrap();
        assert!(records.len() <= 10, "{page}");
        cited.extend(
            records
                .iter()
                .filter(|r| r["cited"] == true)
                .map(|r| r["ordinal"].as_u64().unwrap()),
        );
        let Some(next) = page["next_records"].as_object() else {
            break;
        };
        assert_eq!(next["last"], 27, "{page}");
        address = next["address"].as_str().unwrap().to_owned();
        assert!(address.starts_with(&session), "{address}");
    }
    assert_eq!(cited, (3..=27).collect::<Vec<u64>>());
    assert_eq!(answers, 3);
    // A range within the limit says nothing more to ask for.
    let whole = body(
        f.server
            .show(args(json!({"address": format!("{session}?record=3-12"), "limit": 10})).unwrap()),
    );
    assert_eq!(whole["next_records"], Value::Null, "{whole}");
}

/// An imported trajectory's session is named by the agent that ran it in `show`, as its
/// search hits name it (and `skim`), not as `atif`, the format it came in.
#[test]
fn an_imported_session_shows_the_agent_its_search_hits_name() {
    let f = fixture();
    let dir = f._tmp.path();
    let steps = json!([
        {"step_id": 1, "source": "user", "message": "wire the imported frobnicator"},
        {"step_id": 2, "source": "agent", "message": "Wired."}
    ]);
    for (id, name, agent, ran_by) in [
        ("imp-claude", "claude-code", "claude", Value::Null),
        ("imp-foreign", "OpenHands", "atif", json!("openhands")),
    ] {
        let file = dir.join(format!("{id}.atif.json"));
        let doc = json!({"schema_version": "ATIF-v1.4", "session_id": id,
            "agent": {"name": name, "version": "1"}, "steps": steps});
        std::fs::write(&file, doc.to_string()).unwrap();
        Cairn::open(dir.join("data"))
            .unwrap()
            .import_atif(&file)
            .unwrap();
        let server = Server::new(Arc::new(crate::Session::new(
            Cairn::open_for_agents(dir.join("data")).unwrap(),
            &std::fs::canonicalize(dir.join("repo")).unwrap(),
        )));
        let hits = body(
            server.search(args(json!({"query": "imported frobnicator", "limit": 50})).unwrap()),
        );
        let hit = hits["hits"]
            .as_array()
            .unwrap()
            .iter()
            .find(|h| {
                h["address"]
                    .as_str()
                    .unwrap()
                    .contains(&session_key_of(&server, id))
            })
            .unwrap_or_else(|| panic!("{id}: {hits}"))
            .clone();
        assert_eq!(hit["agent"], agent, "{hit}");
        let shown = body(server.show(args(json!({"address": id})).unwrap()));
        assert_eq!(shown["agent"], hit["agent"], "{id}: {shown}");
        assert_eq!(shown["ran_by"], ran_by, "{id}: {shown}");
    }
}

/// The key of the session the agent's id `id` names.
fn session_key_of(server: &Server, id: &str) -> String {
    let shown = body(server.show(args(json!({"address": id})).unwrap()));
    let address = shown["session_address"].as_str().unwrap();
    address.trim_start_matches("cairn://session/").to_owned()
}

/// rmcp answers arguments that do not deserialize with an `isError` result quoting what the
/// agent sent; the client receives it as one clean line.
#[test]
fn a_refusal_rmcp_makes_is_one_clean_line() {
    let quoted = format!(
        "failed to deserialize parameters: unknown field `\u{1b}]0;owned\u{7}{}`",
        "k".repeat(100_000)
    );
    let (is_error, text) =
        settled(Ok(CallToolResult::error(vec![ContentBlock::text(quoted)]))).unwrap();
    assert!(is_error);
    assert!(!controls(&text), "{text:?}");
    assert!(
        text.chars().count() <= MAX_ERROR + 1,
        "{} characters",
        text.chars().count()
    );
    assert!(
        text.starts_with("failed to deserialize parameters: unknown field"),
        "{text}"
    );
}

/// A skimmed session lists its related turns and its last ones, the latest work included even
/// when it is not related, and counts every turn it leaves out.
#[test]
fn skim_lists_related_turns_and_where_the_session_ended() {
    let turn = |i: u32, related: bool| cairn_core::views::skim::SkimTurn {
        turn_key: format!("t{i}"),
        turn_index: i,
        started_at: None,
        related,
        record_count: 1,
        tool_call_count: 0,
        tool_names: Vec::new(),
        labels: Vec::new(),
        previews: Vec::new(),
    };
    let indexes = |turns: &[cairn_core::views::skim::SkimTurn]| -> Vec<u32> {
        skim_turns(turns).iter().map(|t| t.turn_index).collect()
    };
    // Turn 0 related, turn 1 (the latest work) not: both listed.
    assert_eq!(indexes(&[turn(0, true), turn(1, false)]), vec![0, 1]);
    // Thirty turns, five related early on: those, then the last two; nothing else.
    let many: Vec<_> = (0..30).map(|i| turn(i, i % 3 == 0 && i < 15)).collect();
    assert_eq!(indexes(&many), vec![0, 3, 6, 9, 12, 28, 29]);
    // More related turns than fit: the most recent eight of what would be listed.
    let all: Vec<_> = (0..20).map(|i| turn(i, true)).collect();
    assert_eq!(indexes(&all), (12..20).collect::<Vec<_>>());
    assert!(indexes(&[]).is_empty());
}

/// An empty skim says why and what to call instead, so an agent does not read it as "nothing
/// happened here".
#[test]
fn an_empty_skim_says_why_and_what_to_call() {
    let f = fixture();
    let typo = body(skim(&f.server, json!({"target": "no-such-branch"})));
    assert!(typo["sessions"].as_array().unwrap().is_empty(), "{typo}");
    let hint = typo["hint"].as_str().unwrap();
    assert!(hint.contains("no branch named no-such-branch"), "{hint}");
    // The fixture's sessions only ran on `main`: hidden, and the hint says how to see them.
    let weak = body(skim(&f.server, json!({"target": "main"})));
    assert!(weak["sessions"].as_array().unwrap().is_empty(), "{weak}");
    assert!(weak["weak_sessions_hidden"].as_u64().unwrap() > 0, "{weak}");
    assert!(
        weak["hint"]
            .as_str()
            .unwrap()
            .contains("`include_weak: true`"),
        "{weak}"
    );
    let all = body(skim(
        &f.server,
        json!({"target": "main", "include_weak": true}),
    ));
    assert!(!all["sessions"].as_array().unwrap().is_empty(), "{all}");
    assert!(
        all["hint"].as_str().unwrap().starts_with("Abbreviated."),
        "{all}"
    );
}

/// Each tool's schema announces the range its `limit` (and the brief's `max_tokens`) takes, the
/// one the tool enforces: the least and the most are answered, one past either is refused.
#[test]
fn the_schemas_announce_the_ranges_the_tools_take() {
    use super::{
        BRIEF_TOKENS, RECALL_LIMIT, RecallBriefArgs, RecallQueryArgs, SEARCH_LIMIT, SHOW_LIMIT,
        SKIM_LIMIT, SearchArgs, ShowArgs, SkimArgs, WHY_LIMIT, WhyArgs,
    };
    let range = |schema: Value, field: &str| {
        let p = &schema["properties"][field];
        (p["minimum"].as_u64(), p["maximum"].as_u64())
    };
    for (tool, schema, field, (min, max)) in [
        ("skim", schema::<SkimArgs>(), "limit", (1u32, SKIM_LIMIT.1)),
        ("show", schema::<ShowArgs>(), "limit", (1, SHOW_LIMIT.1)),
        (
            "search",
            schema::<SearchArgs>(),
            "limit",
            (1, SEARCH_LIMIT.1),
        ),
        ("why", schema::<WhyArgs>(), "limit", (1, WHY_LIMIT.1)),
        (
            "recall_query",
            schema::<RecallQueryArgs>(),
            "limit",
            (1, RECALL_LIMIT.1),
        ),
        (
            "recall_brief",
            schema::<RecallBriefArgs>(),
            "max_tokens",
            (50, BRIEF_TOKENS.1),
        ),
    ] {
        assert_eq!(
            range(schema, field),
            (Some(u64::from(min)), Some(u64::from(max))),
            "{tool}.{field}"
        );
    }
    // The tools hold to them.
    let f = fixture();
    let limit = |n: u32| settled(skim(&f.server, json!({"target": "main", "limit": n})));
    assert!(!limit(1).unwrap().0 && !limit(SKIM_LIMIT.1).unwrap().0);
    assert!(limit(0).unwrap().0 && limit(SKIM_LIMIT.1 + 1).unwrap().0);
    let brief = |n: u32| {
        settled(args(json!({"max_tokens": n})).and_then(|a| f.server.recall_brief(a)))
            .unwrap()
            .0
    };
    assert!(!brief(50) && !brief(BRIEF_TOKENS.1));
    assert!(brief(49) && brief(BRIEF_TOKENS.1 + 1));
}

/// A brief whose budget holds none of the entries that matched says so and how to ask again,
/// rather than reading as "Recall knows nothing".
#[test]
fn a_brief_too_small_for_any_entry_says_so() {
    let f = fixture();
    // An entry of a long procedure, more than 50 tokens however it is packed (its title alone).
    let steps = "Stop the app, back up the database, run make migrate, check the schema version, start the app again. ".repeat(4);
    let entry = json!({"candidate_id": "m2", "session_id": "x1", "type": "procedure",
        "scope": "project", "title": format!("Run the migrations safely: {}", "stop, back up, migrate, check, start; ".repeat(4)), "body": steps,
        "transferable": true, "provenance_ok": true, "label": "correct",
        "evidence": {"ordinal_start": 0, "ordinal_end": 0, "snippets": ["migrations"]}});
    let report = Cairn::open(f._tmp.path().join("data"))
        .unwrap()
        .recall_import(&format!("{entry}\n"), false)
        .unwrap();
    assert_eq!(report.imported, 1, "{report:?}");
    let brief = |v: Value| body(f.server.recall_brief(args(v).unwrap()));
    let tight = brief(json!({"query": "safely", "max_tokens": 50}));
    assert!(tight["entries"].as_array().unwrap().is_empty(), "{tight}");
    assert!(tight["omitted"].as_u64().unwrap() >= 1, "{tight}");
    assert!(
        tight["hint"]
            .as_str()
            .unwrap()
            .contains("larger `max_tokens`"),
        "{tight}"
    );
    let roomy = brief(json!({"query": "safely"}));
    assert!(!roomy["entries"].as_array().unwrap().is_empty(), "{roomy}");
    assert!(roomy.get("hint").is_none(), "{roomy}");
}

/// Entries of the fixture's session `x1`, imported as a person's reviewed ones: `(id, scope,
/// project, branch)`.
fn import_entries(f: &Fixture, entries: &[(&str, &str, &str, &str)]) {
    let lines: String = entries
        .iter()
        .map(|(id, scope, project, branch)| {
            format!(
                "{}\n",
                json!({"candidate_id": id, "session_id": "x1", "type": "decision", "scope": scope,
                    "project": project, "git_branch": branch, "title": format!("Note {id}"),
                    "body": format!("The note called {id}"), "transferable": true,
                    "provenance_ok": true, "label": "correct",
                    "evidence": {"ordinal_start": 0, "ordinal_end": 0}})
            )
        })
        .collect();
    let report = Cairn::open(f._tmp.path().join("data"))
        .unwrap()
        .recall_import(&lines, false)
        .unwrap();
    assert_eq!(report.imported as usize, entries.len(), "{report:?}");
}

fn entry_ids(answer: &Value) -> Vec<String> {
    let mut ids: Vec<String> = answer["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["id"].as_str().unwrap().to_owned())
        .collect();
    ids.sort();
    ids
}

/// Recall answers for the repository the server runs in and the branch checked out there, by
/// the rule the session-start brief uses: another project's entries and those scoped to another
/// branch stay out, a repository-wide one recorded on another branch is in. Another place only
/// when asked, and then each entry says where it is from.
#[test]
fn recall_answers_for_the_repository_and_branch_the_server_runs_in() {
    let f = fixture();
    import_entries(
        &f,
        &[
            ("here-main", "branch", "repo", "main"),
            ("here-feat", "branch", "repo", "feat/x"),
            ("here-wide", "repository", "repo", "release"),
            ("garden", "project", "garden", "main"),
        ],
    );
    let query = |v: Value| body(f.server.recall_query(args(v).unwrap()));
    let brief = |v: Value| body(f.server.recall_brief(args(v).unwrap()));
    // The fixture's own entry (`m1`, project-wide) is here too.
    let here = ["here-main", "here-wide", "m1"];
    assert_eq!(entry_ids(&query(json!({}))), here);
    let b = brief(json!({}));
    assert_eq!(entry_ids(&b), here, "{b}");
    let text = b["text"].as_str().unwrap();
    assert!(
        text.starts_with("Reviewed notes from past sessions in repo (branch main):"),
        "{text}"
    );
    assert!(
        !text.contains("garden") && !text.contains("here-feat"),
        "{text}"
    );
    assert_eq!(b["scope"], json!({"repo": "repo", "branch": "main"}));
    // The same as the session-start brief serves in that repository.
    let hook = Cairn::session_start_brief(
        &f._tmp.path().join("data"),
        &json!({"cwd": f.server.session.cwd, "hook_event_name": "SessionStart"}).to_string(),
        &f.server.session.cwd,
    )
    .unwrap()
    .unwrap();
    let mut hook_ids = hook.entry_ids.clone();
    hook_ids.sort();
    assert_eq!(hook_ids, here);

    // Another branch of this repository: its own entries and the repository-wide ones.
    let on_feat = query(json!({"branch": "feat/x"}));
    assert_eq!(entry_ids(&on_feat), ["here-feat", "here-wide", "m1"]);
    assert_eq!(
        entry_ids(&brief(json!({"repo": "repo", "branch": "feat/x"}))),
        ["here-feat", "here-wide", "m1"]
    );
    // Another project, asked for: its entries, labelled.
    let garden = query(json!({"repo": "garden"}));
    assert_eq!(entry_ids(&garden), ["garden"]);
    assert_eq!(garden["entries"][0]["project"], "garden");
    assert!(
        brief(json!({"repo": "/somewhere/garden"}))["text"]
            .as_str()
            .unwrap()
            .starts_with("Reviewed notes from past sessions in garden:")
    );
    // Every project: each entry names its own.
    let all = query(json!({"all_repos": true, "branch": "main"}));
    assert_eq!(entry_ids(&all), ["garden", "here-main", "here-wide", "m1"]);
    assert!(
        all["entries"]
            .as_array()
            .unwrap()
            .iter()
            .all(|e| e["project"].is_string())
    );
    let (refused, both) = settled(
        f.server
            .recall_query(args(json!({"all_repos": true, "repo": "garden"})).unwrap()),
    )
    .unwrap();
    assert!(refused && both.contains("not both"), "{both}");
}

/// A server started outside any repository has no project to answer for: it says so, and how
/// to name one, rather than answering with every project's entries.
#[test]
fn recall_outside_a_repository_asks_for_one() {
    let f = fixture();
    let outside = f._tmp.path().join("elsewhere");
    std::fs::create_dir_all(&outside).unwrap();
    let cairn = Cairn::open_for_agents(f._tmp.path().join("data")).unwrap();
    let server = Server::new(Arc::new(crate::Session::new(cairn, &outside)));
    let answer = body(server.recall_query(args(json!({})).unwrap()));
    assert_eq!(answer["entries"], json!([]));
    assert!(
        answer["hint"].as_str().unwrap().contains("`repo`"),
        "{answer}"
    );
    let answer = body(server.recall_query(args(json!({"repo": "repo"})).unwrap()));
    assert_eq!(entry_ids(&answer), ["m1"]);
    // A brief too: it names `all_repos`, which briefs from every project.
    let brief = |v: Value| body(server.recall_brief(args(v).unwrap()));
    let none = brief(json!({}));
    assert_eq!(none["entries"], json!([]));
    assert!(
        none["hint"].as_str().unwrap().contains("`all_repos: true`"),
        "{none}"
    );
    let every = brief(json!({"all_repos": true}));
    assert_eq!(entry_ids(&every), ["m1"], "{every}");
    assert_eq!(every["scope"], json!({"repo": null, "branch": null}));
    let text = every["text"].as_str().unwrap();
    assert!(
        text.starts_with("Reviewed notes from past sessions in every project:"),
        "{text}"
    );
    let (refused, both) =
        settled(server.recall_brief(args(json!({"all_repos": true, "repo": "repo"})).unwrap()))
            .unwrap();
    assert!(refused && both.contains("not both"), "{both}");
    // A description is looked up everywhere from here, and an empty answer says so.
    let why = body(server.why(args(json!({"target": "qqqzzz wwwvvv"})).unwrap()));
    assert_eq!(why["sessions"], json!([]));
    let hint = why["hint"].as_str().unwrap();
    assert!(
        hint.contains("No session in the archive") && !hint.contains("of this repository"),
        "{hint}"
    );
}

/// An empty answer says what to try next, in every tool that can come back empty.
#[test]
fn an_empty_answer_says_what_to_try() {
    let f = fixture();
    let hint = |v: &Value| v["hint"].as_str().unwrap_or_default().to_owned();
    let search = body(f.server.search(args(json!({"query": "qqqzzz"})).unwrap()));
    assert_eq!(search["hits"], json!([]));
    assert!(hint(&search).contains("other words"), "{search}");
    let search = body(
        f.server
            .search(args(json!({"query": "qqqzzz", "agent": "claude"})).unwrap()),
    );
    assert!(hint(&search).contains("drop a filter"), "{search}");
    let brief = body(
        f.server
            .recall_brief(args(json!({"query": "qqqzzz"})).unwrap()),
    );
    assert_eq!(brief["text"], "");
    assert!(hint(&brief).contains("other words"), "{brief}");
    let query = body(
        f.server
            .recall_query(args(json!({"query": "qqqzzz"})).unwrap()),
    );
    assert!(hint(&query).contains("other words"), "{query}");
    // Nothing trusted on a branch of its own but a proposal: review is the way.
    let none = body(
        f.server
            .recall_query(args(json!({"repo": "nowhere"})).unwrap()),
    );
    assert!(hint(&none).contains("cairn recall review"), "{none}");
    let why = body(f.server.why(args(json!({"target": "HEAD"})).unwrap()));
    assert_eq!(why["sessions"], json!([]));
    assert!(hint(&why).contains("`search`"), "{why}");
    let why = body(
        f.server
            .why(args(json!({"target": "qqqzzz wwwvvv"})).unwrap()),
    );
    assert!(hint(&why).contains("of this repository"), "{why}");
    // An answer with items has no such hint.
    let found = body(f.server.search(args(json!({"query": "parser"})).unwrap()));
    assert!(found.get("hint").is_none(), "{found}");
}

/// Every wrong `limit`, below, above or not whole, gets one message with the real range.
#[test]
fn a_wrong_limit_names_the_one_range_the_tool_takes() {
    let f = fixture();
    for bad in [json!(-1), json!(0), json!(51), json!(2.5), json!("ten")] {
        let (refused, text) =
            settled(skim(&f.server, json!({"target": "main", "limit": bad}))).unwrap();
        assert!(refused, "{bad}: {text}");
        assert!(
            text.contains("`limit` to be a whole number from 1 to 50"),
            "{bad}: {text}"
        );
        assert!(!text.contains("4294967295"), "{bad}: {text}");
    }
}

/// A path out of the repository is refused naming the repository by what serves it, not as
/// `.` (the root every path in an answer is relative to).
#[test]
fn a_path_outside_the_repository_names_which_repository() {
    let f = fixture();
    let (refused, text) = settled(
        f.server
            .why(args(json!({"target": "/etc/passwd:1"})).unwrap()),
    )
    .unwrap();
    assert!(refused, "{text}");
    assert!(
        text.contains("outside this repository (the one `cairn mcp -C <dir>` serves)"),
        "{text}"
    );
    assert!(!text.contains(" at ."), "{text}");
}

/// Feedback on an entry a person rejected, which no agent is served, is refused and says so.
#[test]
fn feedback_on_a_rejected_entry_is_refused() {
    let f = fixture();
    import_entries(&f, &[("gone", "project", "repo", "main")]);
    Cairn::open(f._tmp.path().join("data"))
        .unwrap()
        .recall_reject("gone")
        .unwrap();
    let refusal = f.server.served("gone").unwrap_err();
    assert!(
        refusal.message.contains("archived") && refusal.message.contains("not recorded"),
        "{}",
        refusal.message
    );
    // Served entries, and ids the core refuses itself, pass.
    assert!(f.server.served("m1").is_ok() && f.server.served("nope").is_ok());
}

/// A search hit on a record the agent took back (a Gemini rewind: the real session's document
/// written again without its last eleven messages) says when, as `show` does, so an agent does
/// not take it for what the conversation holds; a live hit says `null`.
#[test]
fn a_search_hit_on_a_retracted_record_says_when_the_agent_took_it_back() {
    let f = fixture();
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures");
    let gemini = f._tmp.path().join("gemini");
    let rel = "m-gemini/chats/session-2025-12-24T06-40-c330aea9.json";
    let path = gemini.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    Cairn::open(f._tmp.path().join("data"))
        .unwrap()
        .set_source_dirs(Agent::Gemini, vec![gemini.display().to_string()])
        .unwrap();
    let cairn = Cairn::open(f._tmp.path().join("data")).unwrap();
    let sync = || {
        let only = cairn_core::SyncOptions {
            agents: vec![Agent::Gemini],
        };
        cairn
            .sync(&only, &cairn_core::archive::capture::Quiet)
            .unwrap();
    };
    std::fs::copy(fixtures.join("gemini").join(rel), &path).unwrap();
    sync();
    std::fs::copy(fixtures.join("gemini-rewound").join(rel), &path).unwrap();
    let later = std::time::SystemTime::now() + std::time::Duration::from_secs(5);
    std::fs::File::options()
        .write(true)
        .open(&path)
        .unwrap()
        .set_modified(later)
        .unwrap();
    sync();

    let hits = body(f.server.search(
        args(json!({"query": "install helium from downloads", "agent": "gemini"})).unwrap(),
    ));
    let hit = &hits["hits"][0];
    assert!(
        hit["retracted_at"].as_str().is_some_and(|t| t.len() >= 10),
        "{hits}"
    );
    // The same record through `show` gives the same time.
    let shown = body(
        f.server
            .show(args(json!({"address": hit["address"]})).unwrap()),
    );
    let cited = shown["records"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["address"] == hit["address"])
        .unwrap();
    assert_eq!(cited["retracted_at"], hit["retracted_at"], "{shown}");
    // A hit on what the conversation still holds is not retracted.
    let live = body(f.server.search(args(json!({"query": "parser"})).unwrap()));
    assert!(live["hits"][0].get("retracted_at").is_some(), "{live}");
    assert_eq!(live["hits"][0]["retracted_at"], Value::Null, "{live}");
}

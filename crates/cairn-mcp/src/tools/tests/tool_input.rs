//! A tool call's input leaves `show` as the JSON value it holds, each long string in it cut
//! (head and tail, with the marker), so an agent parses it whole however long the call was;
//! an input that holds no JSON object leaves as a string, cut as every text is.

use super::*;

/// The head and tail of the long text an Edit writes, told apart from its middle.
const HEAD_MARK: &str = "fn head_of_the_new_text() {}";
const TAIL_MARK: &str = "fn tail_of_the_new_text() {}";

/// A Claude session whose one reply calls each of `calls` (tool name, input).
fn claude_calls(f: &Fixture, id: &str, calls: &[(&str, Value)]) -> String {
    let repo = std::fs::canonicalize(f._tmp.path().join("repo")).unwrap();
    let dir = f._tmp.path().join("claude");
    let base = json!({"sessionId": id, "cwd": repo, "gitBranch": "main", "timestamp": now(), "version": "2.1.39"});
    let prompt = json!({"type": "user", "message": {"role": "user", "content": format!("edit the login {id}")}});
    let uses: Vec<Value> = calls
        .iter()
        .enumerate()
        .map(|(n, (name, input))| {
            json!({"type": "tool_use", "id": format!("toolu_{id}_{n}"), "name": name, "input": input})
        })
        .collect();
    let reply = json!({"type": "assistant", "message": {"id": format!("msg_{id}"), "role": "assistant",
        "model": "m", "content": uses}});
    let mut text = String::new();
    for (n, line) in [prompt, reply].into_iter().enumerate() {
        let mut line = line.as_object().unwrap().clone();
        line.extend(base.as_object().unwrap().clone());
        line.insert("uuid".into(), json!(format!("{id}-{n}")));
        text.push_str(&format!("{}\n", Value::Object(line)));
    }
    let path = dir.join(format!("{id}.jsonl"));
    std::fs::write(&path, text).unwrap();
    let hook = Cairn::open(f._tmp.path().join("data")).unwrap();
    capture(&hook, Agent::Claude, &path, id, &repo);
    repo.display().to_string()
}

/// The records of the first turn of the session whose text names `id`, as `show` sends them.
fn records(f: &Fixture, id: &str) -> Vec<Value> {
    let hits = body(
        f.server
            .search(args(json!({"query": format!("login {id}")})).unwrap()),
    );
    let session = hits["hits"][0]["address"]
        .as_str()
        .unwrap_or_else(|| panic!("{hits}"));
    let session = session.split('?').next().unwrap();
    let answer = body(
        f.server
            .show(args(json!({"address": format!("{session}?turn=0")})).unwrap()),
    );
    answer["records"].as_array().unwrap().clone()
}

fn input_of<'a>(records: &'a [Value], tool: &str) -> &'a Value {
    let r = records
        .iter()
        .find(|r| r["tool_name"] == tool)
        .unwrap_or_else(|| panic!("no {tool} record in {records:?}"));
    &r["tool_input"]
}

/// An Edit writing 10,000 characters arrives as JSON with every key: its path whole, its new
/// text cut between a head and a tail that say how much went between.
#[test]
fn a_long_edit_arrives_as_json_with_its_text_cut() {
    let f = fixture();
    let new = format!(
        "{HEAD_MARK}\n{}{TAIL_MARK}",
        "x".repeat(10_000 - HEAD_MARK.len() - TAIL_MARK.len() - 1)
    );
    assert_eq!(new.chars().count(), 10_000);
    let repo = claude_calls(
        &f,
        "edit",
        &[(
            "Edit",
            json!({"file_path": format!("{}/src/login.rs", f._tmp.path().join("repo").display()),
                "old_string": "fn login() {}", "new_string": new, "replace_all": false}),
        )],
    );
    let records = records(&f, "edit");
    let input = input_of(&records, "Edit");
    let map = input
        .as_object()
        .unwrap_or_else(|| panic!("not a JSON object: {input}"));
    let mut keys: Vec<&str> = map.keys().map(String::as_str).collect();
    keys.sort();
    assert_eq!(
        keys,
        ["file_path", "new_string", "old_string", "replace_all"]
    );
    let path = input["file_path"].as_str().unwrap();
    assert!(
        path.ends_with("src/login.rs") && !path.contains(&repo) && !path.contains("REDACTED"),
        "{path}"
    );
    assert_eq!(input["old_string"], "fn login() {}");
    assert_eq!(input["replace_all"], false);
    let cut = input["new_string"].as_str().unwrap();
    assert!(cut.starts_with(HEAD_MARK), "{cut}");
    assert!(cut.ends_with(TAIL_MARK), "{cut}");
    assert!(cut.contains("[… 8040 characters cut …]"), "{}", &cut[..200]);
    assert!(
        cut.chars().count() <= crate::bound::MAX_STRING,
        "{}",
        cut.len()
    );
}

/// A secret deep inside an input is redacted where it stands; a key with a hidden character
/// is written out, so it neither reads as nor replaces the key it imitates.
#[test]
fn a_nested_secret_is_redacted_and_a_disguised_key_stays_apart() {
    let f = fixture();
    let key = format!("AKIA{}", hidden_key_tail());
    claude_calls(
        &f,
        "nested",
        &[(
            "Bash",
            json!({"command": "deploy --prod",
                "comm\u{202e}and": "rm -rf /",
                "env": {"vars": [{"name": "AWS_ACCESS_KEY_ID", "value": key}]}}),
        )],
    );
    let records = records(&f, "nested");
    let input = input_of(&records, "Bash");
    assert!(input.is_object(), "not a JSON object: {input}");
    assert_eq!(input["command"], "deploy --prod");
    assert_eq!(input["comm[U+202E]and"], "rm -rf /", "{input}");
    let var = &input["env"]["vars"][0];
    assert_eq!(var["name"], "AWS_ACCESS_KEY_ID", "{input}");
    let value = var["value"].as_str().unwrap();
    assert!(
        !value.contains(&key) && value.contains("[REDACTED:"),
        "{value}"
    );
}

/// Arguments that were not JSON (Codex keeps them as the text the model wrote) leave as a
/// string, cut as any long text is.
#[test]
fn an_input_that_is_no_json_object_is_a_cut_string() {
    let f = fixture();
    let repo = std::fs::canonicalize(f._tmp.path().join("repo")).unwrap();
    let t = now();
    let args_text = format!("{{not json {}end of the arguments", "word ".repeat(2_000));
    let lines = [
        json!({"timestamp": t, "type": "session_meta", "payload": {"id": "nj", "timestamp": t, "cwd": repo,
            "originator": "codex_cli_rs", "cli_version": "0.146.0", "source": "cli", "git": {"branch": "main"}}}),
        json!({"timestamp": t, "type": "event_msg", "payload": {"type": "user_message",
            "message": "edit the login nojson"}}),
        json!({"timestamp": t, "type": "response_item", "payload": {"type": "function_call",
            "name": "shell", "call_id": "c1", "arguments": args_text}}),
        json!({"timestamp": t, "type": "response_item", "payload": {"type": "message", "role": "assistant",
            "content": [{"type": "output_text", "text": "Ran the login nojson."}]}}),
    ];
    let path = f._tmp.path().join("codex").join("rollout-nj.jsonl");
    std::fs::write(&path, lines.map(|l| format!("{l}\n")).concat()).unwrap();
    let hook = Cairn::open(f._tmp.path().join("data")).unwrap();
    capture(&hook, Agent::Codex, &path, "nj", &repo);
    let records = records(&f, "nojson");
    let input = input_of(&records, "shell");
    let text = input
        .as_str()
        .unwrap_or_else(|| panic!("not a string: {input}"));
    assert!(text.contains("{not json word"), "{}", &text[..100]);
    assert!(text.contains("characters cut …]"), "{text}");
    assert!(text.ends_with("end of the arguments\""), "{text}");
    assert!(text.chars().count() <= crate::bound::MAX_STRING);
}

//! `cairn import`: ATIF trajectories read back as sessions of agent `atif`: Cairn's own exports
//! (the same turns as the original), one written by ATIF's reference models, and hostile files.

use std::path::Path;
use std::process::Command;

use serde_json::{Value, json};

use crate::export::{
    CODEX, SMALL, STAGE0, WITH_SUBAGENT, export, reference_python, repo_root, synced,
};
use crate::support::{Env, rewound_gemini};

/// What `show` says of each turn, the part an import must give back unchanged.
fn turns_of(env: &Env, session: &str) -> Vec<Value> {
    let v = env.json(&["show", session, "--limit", "100000"]);
    v["turns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            json!([
                t["turn_index"],
                t["record_count"],
                t["tool_names"],
                t["user_preview"],
                t["assistant_preview"]
            ])
        })
        .collect()
}

fn import(env: &Env, file: &Path) -> Result<Value, Value> {
    let out = env
        .command()
        .args(["--json", "import"])
        .arg(file)
        .output()
        .unwrap();
    if out.status.success() {
        Ok(serde_json::from_slice(&out.stdout).unwrap())
    } else {
        Err(serde_json::from_slice(&out.stderr)
            .unwrap_or_else(|_| json!({"raw": String::from_utf8_lossy(&out.stderr)})))
    }
}

#[test]
fn an_atif_export_imports_back_with_the_same_turns_and_once() {
    let env = synced();
    let dir = tempfile::tempdir().unwrap();
    let mut imported_keys: Vec<Value> = Vec::new();
    for session in [SMALL, STAGE0, CODEX] {
        let file = dir.path().join(format!("{session}.atif.json"));
        export(
            &env,
            &[session, "--format", "atif", "-o", file.to_str().unwrap()],
        );
        let imported = import(&env, &file).unwrap();
        let key = imported["session_key"].as_str().unwrap().to_owned();
        imported_keys.push(json!(key));
        assert_eq!(imported["session_id"], session);
        assert_eq!(imported["already_imported"], false);
        assert_eq!(turns_of(&env, &key), turns_of(&env, session), "{session}");
        let detail = env.json(&["sessions"]);
        let row = detail
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["session_key"] == key.as_str())
            .unwrap();
        assert_eq!(row["agent"], "atif");
        // It shows the agent that ran it, which the export named.
        let ran = if session == CODEX { "codex" } else { "claude" };
        assert_eq!(row["ran_by"], ran, "{row}");
        assert_eq!(env.json(&["show", &key])["ran_by"], ran);
        // An export of the import names that agent again, not the format.
        let again_file = dir.path().join(format!("{session}.again.atif.json"));
        export(
            &env,
            &[&key, "--format", "atif", "-o", again_file.to_str().unwrap()],
        );
        let back: Value = serde_json::from_slice(&std::fs::read(&again_file).unwrap()).unwrap();
        assert_eq!(back["agent"]["name"], ran);
        // The same file again adds nothing.
        let again = import(&env, &file).unwrap();
        assert_eq!(again["session_key"], key.as_str());
        assert_eq!(again["already_imported"], true, "{again}");
        assert_eq!(again["records_added"], 0);
        // A person is told how to read it, by a name that leads to it (the trajectory's id is
        // shared with the session it came from, so here that is the key).
        let told = env.ok(&["import", file.to_str().unwrap()]);
        let handle = told
            .split("cairn show ")
            .nth(1)
            .and_then(|rest| rest.split('`').next())
            .unwrap_or_else(|| panic!("{told}"));
        assert_eq!(
            env.json(&["show", handle])["session_key"],
            key.as_str(),
            "{told}"
        );
    }
    // Every agent filter finds an imported session under the agent that ran it, not under
    // `atif` (each of these three names an agent Cairn knows).
    let listed = env.json(&["sessions", "--agent", "atif"]);
    assert_eq!(listed, json!([]), "{listed}");
    for (agent, imported) in [("claude", 2), ("codex", 1)] {
        let listed = env.json(&["sessions", "--agent", agent]);
        let listed = listed.as_array().unwrap();
        let stored_as_atif: Vec<&Value> = listed.iter().filter(|s| s["agent"] == "atif").collect();
        assert_eq!(stored_as_atif.len(), imported, "{agent}: {listed:?}");
        assert!(stored_as_atif.iter().all(|s| s["ran_by"] == agent));
    }
    let found = env.json(&["search", "spotter", "--agent", "claude", "--limit", "10000"]);
    let found = found.as_array().unwrap();
    assert!(found.iter().all(|h| h["agent"] == "claude"), "{found:?}");
    // `forget --agent` names what `sessions --agent` lists: the imports under the agent that
    // ran them.
    let forgets = |agent: &str| {
        let out = env
            .command()
            .args(["--json", "forget", "--agent", agent, "--dry-run"])
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        let plan: Value =
            serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {out:?}"));
        let mut keys: Vec<String> = plan["would_remove"]["sessions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["session_key"].as_str().unwrap().to_owned())
            .collect();
        keys.sort();
        keys
    };
    for agent in ["claude", "codex", "atif"] {
        let mut listed: Vec<String> = env
            .json(&["sessions", "--agent", agent])
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["session_key"].as_str().unwrap().to_owned())
            .collect();
        listed.sort();
        let forgotten = forgets(agent);
        assert!(
            listed.iter().all(|k| forgotten.contains(k)),
            "{agent}: listed {listed:?}, would forget {forgotten:?}"
        );
    }
    assert!(forgets("atif").is_empty());
    // Search reads imported sessions like any other, under the agent that ran them.
    let hits = env.json(&["search", "spotter", "--limit", "10000"]);
    let hits = hits.as_array().unwrap();
    assert!(
        hits.iter()
            .any(|h| imported_keys.contains(&h["session_key"])),
        "{hits:?}"
    );
    assert!(hits.iter().all(|h| h["agent"] != "atif"), "{hits:?}");
}

/// A session's sub-agents travel embedded in its trajectory and come back as sub-agent
/// sessions of the imported one, with the same turns.
#[test]
fn embedded_subagent_trajectories_import_as_subagent_sessions() {
    let env = synced();
    // The session detail (its sub-agents, its parent) as `--format json` exports it.
    let detail = |session: &str| -> Value {
        let doc: Value =
            serde_json::from_str(&export(&env, &[session, "--format", "json"])).unwrap();
        doc["session"].clone()
    };
    let original_sub = detail(WITH_SUBAGENT)["subagents"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["relation"] == "subagent")
        .unwrap()["session_key"]
        .as_str()
        .unwrap()
        .to_owned();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("with-subagent.atif.json");
    export(
        &env,
        &[
            WITH_SUBAGENT,
            "--format",
            "atif",
            "-o",
            file.to_str().unwrap(),
        ],
    );
    let imported = import(&env, &file).unwrap();
    let key = imported["session_key"].as_str().unwrap().to_owned();
    let subs = imported["subagents"].as_array().unwrap();
    // The sub-agent, then the compaction.
    assert_eq!(subs.len(), 2, "{imported}");
    let sub_key = subs[0].as_str().unwrap();
    assert!(!turns_of(&env, sub_key).is_empty());
    assert_eq!(turns_of(&env, sub_key), turns_of(&env, &original_sub));
    let parent = detail(&key);
    assert_eq!(parent["subagents"][0]["session_key"], sub_key, "{parent}");
    assert_eq!(parent["subagents"][0]["agent_id"], "aac57f5");
    let sub = detail(sub_key);
    assert_eq!(sub["parent_key"], key.as_str());
    assert_eq!(sub["relation"], "subagent");
    assert_eq!(detail(subs[1].as_str().unwrap())["relation"], "compaction");
    assert_eq!(parent["subagents"][1]["agent_id"], "acompact-946d2b");
    // Again: nothing new, and no scratch file is left in the data dir.
    let again = import(&env, &file).unwrap();
    assert_eq!(again["already_imported"], true, "{again}");
    assert!(
        !env.data()
            .join("import-scratch")
            .read_dir()
            .unwrap()
            .any(|_| true)
    );
}

#[test]
fn a_trajectory_written_by_the_reference_models_imports() {
    let Some(python) = reference_python() else {
        return;
    };
    let env = Env::new();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("harbor.atif.json");
    let status = Command::new(python)
        .arg(repo_root().join("tests/atif/sample.py"))
        .arg(&file)
        .status()
        .unwrap();
    assert!(status.success());
    let imported = import(&env, &file).unwrap();
    assert_eq!(imported["turns"], 2);
    let turn = env.json(&["show", "harbor-sample-1", "--turn", "0"]);
    let records: Vec<(String, String)> = turn["records"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["kind"].as_str().unwrap().to_owned(),
                r["text"].as_str().unwrap_or("").to_owned(),
            )
        })
        .collect();
    let kinds: Vec<&str> = records.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(
        kinds,
        [
            "message",
            "reasoning",
            "message",
            "tool_call",
            "tool_result",
            "message"
        ]
    );
    assert_eq!(records[4].1, "README.md\nsrc\n");
    assert_eq!(turn["records"][3]["tool_name"], "bash");
    // The result is named after the call it answers, as a transcript's is.
    assert_eq!(turn["records"][4]["tool_name"], "bash");
}

fn write(dir: &Path, name: &str, text: &str) -> std::path::PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

fn trajectory(steps: Value) -> String {
    json!({"schema_version": "ATIF-v1.4", "session_id": "hostile-1",
           "agent": {"name": "x", "version": "1"}, "steps": steps})
    .to_string()
}

/// A trajectory of one user step embedding `subs` as its sub-agents.
fn with_subs(subs: Value) -> String {
    json!({"schema_version": "ATIF-v1.7", "session_id": "hostile-subs",
           "agent": {"name": "x", "version": "1"}, "steps": [{"step_id": 1, "source": "user", "message": "hi"}],
           "subagent_trajectories": subs})
    .to_string()
}

/// A sub-agent trajectory `depth` levels deep: `n1` embeds `n2`, and so on.
fn nested(depth: usize) -> Value {
    let mut sub = Value::Null;
    for level in (1..=depth).rev() {
        let mut t = json!({"trajectory_id": format!("n{level}"), "agent": {"name": "x", "version": "1"},
                           "steps": [{"step_id": 1, "source": "agent", "message": format!("level {level} at work")}]});
        if !sub.is_null() {
            t["subagent_trajectories"] = json!([sub]);
        }
        sub = t;
    }
    sub
}

/// A sub-agent's own sub-agents are not dropped: every one in the file is a sub-agent session
/// of the imported one, under an id qualified by its parent's, with its own steps.
#[test]
fn nested_subagent_trajectories_are_all_imported() {
    let env = Env::new();
    let dir = tempfile::tempdir().unwrap();
    let file = write(
        dir.path(),
        "nested.atif.json",
        &with_subs(json!([nested(3)])),
    );
    let imported = import(&env, &file).unwrap();
    let subs = imported["subagents"].as_array().unwrap();
    assert_eq!(subs.len(), 3, "{imported}");
    for (sub, level) in subs.iter().zip(1..) {
        let turn = env.json(&["show", sub.as_str().unwrap(), "--turn", "0"]);
        assert_eq!(
            turn["records"][0]["text"],
            format!("level {level} at work"),
            "{turn}"
        );
    }
    let detail = |session: &str| -> Value {
        let doc: Value =
            serde_json::from_str(&export(&env, &[session, "--format", "json"])).unwrap();
        doc["session"].clone()
    };
    let key = imported["session_key"].as_str().unwrap();
    let parent = detail(key);
    let mut ids: Vec<&str> = parent["subagents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["agent_id"].as_str().unwrap())
        .collect();
    ids.sort_unstable();
    assert_eq!(ids, ["n1", "n1/n2", "n1/n2/n3"], "{parent}");
    assert_eq!(detail(subs[2].as_str().unwrap())["parent_key"], key);
    // Again: nothing new.
    assert_eq!(import(&env, &file).unwrap()["already_imported"], true);
}

/// Two files holding one session's trajectory (a teammate's export downloaded twice, edited
/// apart) are not mixed step by step into one session: the second is refused, naming the
/// first, while that one is there; the same file again is an update, and a file taking the
/// place of one gone since is read.
#[test]
fn a_second_file_with_the_same_session_is_refused_not_mixed_in() {
    let env = Env::new();
    let dir = tempfile::tempdir().unwrap();
    let doc = |text: &str| {
        json!({"schema_version": "ATIF-v1.4", "session_id": "twice", "agent": {"name": "x", "version": "1"},
               "steps": [{"step_id": 1, "source": "user", "message": text}]})
        .to_string()
    };
    let first = write(
        dir.path(),
        "first.atif.json",
        &doc("the first file's words"),
    );
    let second = write(
        dir.path(),
        "second.atif.json",
        &doc("the second file's words"),
    );
    let key = import(&env, &first).unwrap()["session_key"].clone();
    let err = import(&env, &second).unwrap_err();
    assert_eq!(err["kind"], "conflict", "{err}");
    let message = err["message"].as_str().unwrap();
    assert!(
        message.contains("first.atif.json") && message.contains("cairn forget twice"),
        "{message}"
    );
    let text =
        |env: &Env| env.json(&["show", "twice", "--turn", "0"])["records"][0]["text"].clone();
    assert_eq!(text(&env), "the first file's words");
    assert_eq!(import(&env, &first).unwrap()["already_imported"], true);
    // The first file gone (moved, cleaned up): the second is its successor.
    std::fs::remove_file(&first).unwrap();
    assert_eq!(import(&env, &second).unwrap()["session_key"], key);
    assert_eq!(text(&env), "the second file's words");
}

#[test]
fn hostile_trajectories_are_refused_whole_or_read_safely() {
    let env = Env::new();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let deep = format!(
        "{{\"schema_version\":\"ATIF-v1.4\",\"session_id\":\"d\",\"steps\":[{{\"source\":\"user\",\"message\":{}1{}}}]}}",
        "[".repeat(5000),
        "]".repeat(5000)
    );
    let refused = [
        ("not-json", write(d, "a.json", "not json at all")),
        ("array", write(d, "b.json", "[1,2]")),
        ("no version", write(d, "c.json", r#"{"session_id":"x","steps":[{"source":"user"}]}"#)),
        (
            "wrong version",
            write(d, "c2.json", r#"{"schema_version":"v1","session_id":"x","steps":[{"source":"user"}]}"#),
        ),
        (
            "numeric id",
            write(d, "e.json", r#"{"schema_version":"ATIF-v1.4","session_id":7,"steps":[{"source":"user"}]}"#),
        ),
        (
            "escape in id",
            write(
                d,
                "f.json",
                &json!({"schema_version": "ATIF-v1.4", "session_id": "a\u{1b}[2Jb", "steps": [{"source": "user"}]})
                    .to_string(),
            ),
        ),
        ("no steps", write(d, "g.json", &trajectory(json!([])))),
        ("steps not a list", write(d, "h.json", &trajectory(json!({"a": 1})))),
        ("step without source", write(d, "i.json", &trajectory(json!([{"message": "hi"}])))),
        ("deep nesting", write(d, "j.json", &deep)),
        ("sub-agents not a list", write(d, "k1.json", &with_subs(json!({"a": 1})))),
        ("sub-agent not an object", write(d, "k2.json", &with_subs(json!([7])))),
        (
            "sub-agent without an id",
            write(d, "k3.json", &with_subs(json!([{"steps": [{"source": "user"}]}]))),
        ),
        (
            "sub-agent id with an escape",
            write(d, "k4.json", &with_subs(json!([{"trajectory_id": "a\u{1b}]0;x\u{7}", "steps": [{"source": "user"}]}]))),
        ),
        (
            "sub-agent ids not unique",
            write(
                d,
                "k5.json",
                &with_subs(json!([
                    {"trajectory_id": "a", "steps": [{"source": "user"}]},
                    {"trajectory_id": "a", "steps": [{"source": "user"}]}
                ])),
            ),
        ),
        (
            "sub-agent without steps",
            write(d, "k6.json", &with_subs(json!([{"trajectory_id": "a", "steps": []}]))),
        ),
        (
            "sub-agent step without source",
            write(d, "k7.json", &with_subs(json!([{"trajectory_id": "a", "steps": [{"message": "x"}]}]))),
        ),
        (
            "nested sub-agent without an id",
            write(
                d,
                "k8.json",
                &with_subs(json!([{"trajectory_id": "a", "steps": [{"source": "user"}],
                    "subagent_trajectories": [{"steps": [{"source": "user"}]}]}])),
            ),
        ),
        (
            "a nested id that another sub-agent takes",
            write(
                d,
                "k9.json",
                &with_subs(json!([
                    {"trajectory_id": "a/b", "steps": [{"source": "user"}]},
                    {"trajectory_id": "a", "steps": [{"source": "user"}],
                     "subagent_trajectories": [{"trajectory_id": "b", "steps": [{"source": "user"}]}]}
                ])),
            ),
        ),
        ("sub-agents nested 17 deep", write(d, "k10.json", &with_subs(json!([nested(17)])))),
        ("a directory", d.to_path_buf()),
    ];
    for (what, path) in &refused {
        let err = import(&env, path).unwrap_err();
        assert_eq!(err["kind"], "invalid", "{what}: {err}");
        assert!(
            err["message"].as_str().unwrap().contains("cannot import"),
            "{what}: {err}"
        );
        assert!(!err.to_string().contains('\u{1b}'), "{what}");
    }
    // A session_id of another type is named as such, not as missing.
    let numeric = import(&env, &refused[4].1).unwrap_err();
    assert!(
        numeric["message"]
            .as_str()
            .unwrap()
            .contains("session_id is not a string"),
        "{numeric}"
    );
    let missing = import(&env, &d.join("nope.atif.json")).unwrap_err();
    assert_eq!(missing["kind"], "not_found", "{missing}");
    // Larger than the limit: refused by its size before a byte is parsed.
    let huge = d.join("huge.atif.json");
    std::fs::File::create(&huge)
        .unwrap()
        .set_len(65 * 1024 * 1024)
        .unwrap();
    let err = import(&env, &huge).unwrap_err();
    assert!(err["message"].as_str().unwrap().contains("64 MiB"), "{err}");
    assert!(env.json(&["sessions"]).as_array().unwrap().is_empty());

    // Wrong types inside steps read as absent; escapes never reach a terminal; secrets are
    // redacted; a foreign cwd that names no folder is not kept.
    let secret = format!("ghp_{}", "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8");
    let steps = json!([
        {"step_id": 1, "source": "user", "message": format!("use {secret} \u{1b}]0;pwned\u{7}now")},
        {"step_id": 2, "source": "agent", "message": 42, "timestamp": {"a": 1},
         "tool_calls": "not a list", "observation": {"results": [{"content": ["x", {"type": "text", "text": "ok"}]}]}},
        {"step_id": "3", "source": "robot", "message": "unknown source"},
        {"step_id": 4, "source": "agent", "message": "done", "extra": {"cairn": {"kind": "exploit", "role": "root", "exit_code": "x"}}}
    ]);
    let mut doc: Value = serde_json::from_str(&trajectory(steps)).unwrap();
    doc["extra"] = json!({"cairn": {"cwd": "../../etc", "title": "t\u{1b}[31mitle"}});
    let file = write(d, "ok.atif.json", &doc.to_string());
    let imported = import(&env, &file).unwrap();
    let key = imported["session_key"].as_str().unwrap();
    let records = env.json(&["show", key, "--turn", "0"]);
    let text = records.to_string();
    assert!(!text.contains(&secret), "{text}");
    let human = env.ok(&["show", key, "--turn", "0"]);
    assert!(
        !human.contains('\u{1b}') && !human.contains(&secret),
        "{human}"
    );
    let kinds: Vec<&str> = records["records"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["message", "tool_result", "message"], "{records}");
    assert_eq!(records["records"][2]["role"], "assistant");
    let detail = env.json(&["sessions"]);
    assert!(detail[0]["cwd"].is_null(), "{detail}");
}

/// The agent a trajectory names: one of Cairn's under its own name, a foreign agent's plain
/// name as it is, and a hostile name not at all (the session shows as `atif`); the list, `show`
/// and the human output agree.
#[test]
fn an_imported_session_shows_the_agent_that_ran_it() {
    let env = Env::new();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let cases = [
        ("claude-code", Some("claude")),
        ("gemini-cli", Some("gemini")),
        ("OpenHands", Some("openhands")),
        ("atif", None),
        ("claude\u{1b}]0;pwned\u{7}", None),
        ("\u{202e}edoc-edualc", None),
    ];
    for (i, (name, shown)) in cases.iter().enumerate() {
        let doc = json!({"schema_version": "ATIF-v1.4", "session_id": format!("ran-{i}"),
            "agent": {"name": name, "version": "1"},
            "steps": [{"step_id": 1, "source": "user", "message": format!("prompt {i}")}]});
        let file = write(d, &format!("ran-{i}.atif.json"), &doc.to_string());
        let key = import(&env, &file).unwrap()["session_key"]
            .as_str()
            .unwrap()
            .to_owned();
        let listed = env.json(&["sessions"]);
        let row = listed
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["session_key"] == key.as_str())
            .unwrap();
        assert_eq!(row["ran_by"].as_str(), *shown, "{name:?}: {row}");
        assert_eq!(env.json(&["show", &key])["ran_by"].as_str(), *shown);
        let human = env.ok(&["show", &key]);
        let first = human.lines().next().unwrap_or_default();
        assert!(
            first.contains(&format!("of {} session", shown.unwrap_or("atif"))),
            "{name:?}: {first}"
        );
        assert!(
            !human.contains('\u{1b}') && !human.contains('\u{202e}'),
            "{human}"
        );
    }
    let human = env.ok(&["sessions"]);
    assert!(human.contains("openhands"), "{human}");
    assert!(human.contains("gemini"), "{human}");
    // Said in words: one turn is "1 turn".
    let doc = json!({"schema_version": "ATIF-v1.4", "session_id": "ran-words",
        "agent": {"name": "x", "version": "1"},
        "steps": [{"step_id": 1, "source": "user", "message": "one prompt"}]});
    let file = write(d, "ran-words.atif.json", &doc.to_string());
    let said = env.ok(&["import", file.to_str().unwrap()]);
    assert!(said.contains(": 1 turn, 1 record."), "{said}");
    let again = env.ok(&["import", file.to_str().unwrap()]);
    assert!(again.contains("(1 turn); nothing new"), "{again}");
    env.ok(&["forget", "ran-words", "--yes"]);
    // Each is marked as imported, apart from a transcript of this machine.
    let rows = human.lines().filter(|l| !l.starts_with(' ')).count();
    assert_eq!(rows, cases.len(), "{human}");
    assert_eq!(
        human.lines().filter(|l| l.ends_with(", imported")).count(),
        cases.len(),
        "{human}"
    );
}

/// A trajectory whose `session_id` is a session of this machine (anyone can write any id into
/// a file) does not take that id over: `show`, `export`, `resume` and `forget` by the id still
/// name the captured session; the import is reached by its key. The newest took it: `forget
/// <id>` listed the stranger's trajectory, and `resume <id>` said it could not be resumed.
#[test]
fn an_import_naming_a_captured_sessions_id_does_not_take_it_over() {
    let env = synced();
    let captured = env.json(&["show", SMALL])["session_key"].clone();
    let dir = tempfile::tempdir().unwrap();
    let steps = json!([{"step_id": 1, "source": "user", "message": "impostor says hi",
                         "timestamp": "2999-01-01T00:00:00Z"}]);
    let mut doc: Value = serde_json::from_str(&trajectory(steps)).unwrap();
    doc["session_id"] = json!(SMALL);
    let file = write(dir.path(), "impostor.atif.json", &doc.to_string());
    let imported = import(&env, &file).unwrap();
    assert_ne!(imported["session_key"], captured);
    assert_eq!(env.json(&["show", SMALL])["session_key"], captured);
    let resume = env.json(&["resume", SMALL]);
    assert_eq!(resume["agent"], "claude", "{resume}");
    let listed = env.run(&["--json", "forget", SMALL]);
    let plan: Value = serde_json::from_slice(&listed.stdout).unwrap();
    assert_eq!(
        plan["would_remove"]["sessions"][0]["session_key"], captured,
        "{plan}"
    );
    let by_key = env.json(&["show", imported["session_key"].as_str().unwrap()]);
    assert_eq!(by_key["agent"], "atif");
    // A second file of the impostor's session is refused; the way out names it by its key, as
    // `forget` by the id would list the captured session.
    let second = write(
        dir.path(),
        "impostor-2.atif.json",
        &doc.to_string().replace("impostor says hi", "again"),
    );
    let err = import(&env, &second).unwrap_err();
    let message = err["message"].as_str().unwrap();
    assert!(
        message.contains(&format!(
            "`cairn forget {}`",
            imported["session_key"].as_str().unwrap()
        )),
        "{message}"
    );
}

/// A trajectory dated in the year 2999 (a machine with a wrong clock, or a file made to stay on
/// top) does not sort above every session for centuries, nor look busy for ever: the session
/// counts as captured now. A step dated a few hours ahead (clocks disagree) keeps its time.
#[test]
fn a_session_dated_far_ahead_counts_as_captured_now() {
    let env = synced();
    let dir = tempfile::tempdir().unwrap();
    let ahead = (jiff::Timestamp::now() + jiff::SignedDuration::from_hours(3))
        .strftime("%Y-%m-%dT%H:%M:%S%.3fZ")
        .to_string();
    for (id, when) in [
        ("far-ahead", "2999-01-01T00:00:00Z"),
        ("a-bit-ahead", ahead.as_str()),
    ] {
        let steps = json!([{"step_id": 1, "source": "user", "message": "hi", "timestamp": when}]);
        let mut doc: Value = serde_json::from_str(&trajectory(steps)).unwrap();
        doc["session_id"] = json!(id);
        import(
            &env,
            &write(dir.path(), &format!("{id}.atif.json"), &doc.to_string()),
        )
        .unwrap();
    }
    let before = jiff::Timestamp::now()
        .strftime("%Y-%m-%dT%H:%M:%S%.3fZ")
        .to_string();
    let sessions = env.json(&["sessions"]);
    let of = |id: &str| {
        sessions
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["session_id"] == id)
            .unwrap()
            .clone()
    };
    let far = of("far-ahead");
    for field in ["started_at", "updated_at"] {
        let t = far[field].as_str().unwrap();
        assert!(
            t.starts_with("20") && t < before.as_str() && !t.starts_with("2999"),
            "{far}"
        );
    }
    assert_eq!(of("a-bit-ahead")["updated_at"], ahead.as_str());
    // The newest is the one a bit ahead, then the one captured now; its step keeps its date.
    assert_eq!(sessions[0]["session_id"], "a-bit-ahead", "{sessions}");
    let turn = env.json(&["show", "far-ahead", "--turn", "0"]);
    assert!(turn.to_string().contains("2999-01-01"), "{turn}");
}

/// A trajectory whose id holds a secret is stored under the redacted id and reported as
/// imported (it was stored, then reported as "capture stored no session", exit 1); a file that
/// was forgotten is refused with that reason and a way forward.
#[test]
fn an_id_holding_a_secret_imports_and_a_forgotten_file_says_so() {
    let env = synced();
    let dir = tempfile::tempdir().unwrap();
    let key = format!("AKIA{}", "Q3EGRTJ5XW7PLM2N");
    let steps = json!([{"step_id": 1, "source": "user", "message": "hello"}]);
    let mut doc: Value = serde_json::from_str(&trajectory(steps)).unwrap();
    doc["session_id"] = json!(format!("sec-{key}"));
    let file = write(dir.path(), "secret-id.atif.json", &doc.to_string());
    let imported = import(&env, &file).unwrap();
    let id = imported["session_id"].as_str().unwrap();
    assert!(
        !id.contains(&key) && id.starts_with("sec-[REDACTED"),
        "{imported}"
    );
    assert_eq!(imported["turns"], 1, "{imported}");

    env.ok(&["forget", imported["session_key"].as_str().unwrap(), "--yes"]);
    let again = import(&env, &file).unwrap_err();
    let message = again.to_string();
    assert!(message.contains("was forgotten"), "{message}");
    // Forgotten is the session, not the file: a copy under another name stays out too.
    let copy = write(dir.path(), "copy.atif.json", &doc.to_string());
    assert!(import(&env, &copy).is_err());
    assert!(
        env.json(&["sessions"])
            .as_array()
            .unwrap()
            .iter()
            .all(|s| s["session_key"] != imported["session_key"])
    );
}

/// A trajectory saved by a Windows editor starts with a byte-order mark; it imports like any
/// other (it was refused as "not JSON").
#[test]
fn a_trajectory_with_a_byte_order_mark_imports() {
    let env = synced();
    let dir = tempfile::tempdir().unwrap();
    let steps = json!([{"step_id": 1, "source": "user", "message": "hello from windows"}]);
    let mut doc: Value = serde_json::from_str(&trajectory(steps)).unwrap();
    doc["session_id"] = json!("bom-1");
    let file = write(dir.path(), "bom.atif.json", &format!("\u{feff}{doc}"));
    let imported = import(&env, &file).unwrap();
    assert_eq!(imported["turns"], 1, "{imported}");
}

/// Each record of a session as its JSON export gives it: its kind, the start of its text (an
/// export cuts long tool output, so an import of it holds less), when it was retracted.
fn records_of(env: &Env, session: &str) -> Vec<Value> {
    let doc: Value = serde_json::from_str(&export(env, &[session, "--format", "json"])).unwrap();
    doc["turns"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|t| t["records"].as_array().unwrap())
        .map(|r| {
            let text: String = r["text"].as_str().unwrap_or("").chars().take(200).collect();
            json!([r["kind"], text, r["retracted_at"]])
        })
        .collect()
}

/// The records an agent took back (a rewind) come back taken back from Cairn's ATIF export, at
/// the time it says, and count as they did: an export imports with the same turns.
#[test]
fn an_export_imports_its_retracted_records_retracted() {
    let (env, id) = rewound_gemini();
    let original = records_of(&env, id);
    let retracted = original.iter().filter(|r| r[2].is_string()).count();
    assert!(retracted > 0 && retracted < original.len(), "{retracted}");
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("rewound.atif.json");
    export(
        &env,
        &[id, "--format", "atif", "-o", file.to_str().unwrap()],
    );
    let imported = import(&env, &file).unwrap();
    let key = imported["session_key"].as_str().unwrap();
    assert_eq!(records_of(&env, key), original);
    assert_eq!(turns_of(&env, key), turns_of(&env, id));
    let listed = |key: &str| {
        env.json(&["sessions"])
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["session_key"] == key || s["session_id"] == key)
            .map(|s| (s["turn_count"].clone(), s["record_count"].clone()))
            .unwrap()
    };
    assert_eq!(listed(key), listed(id));
    // The same file again stores nothing, and takes nothing back twice.
    let again = import(&env, &file).unwrap();
    assert_eq!(again["already_imported"], true, "{again}");
    assert_eq!(records_of(&env, key), original);
}

/// A `retracted_at` that is no time (another type, a word, a huge string) reads as absent: the
/// record imports as live, the file is not refused.
#[test]
fn a_retracted_at_that_is_no_time_reads_as_absent() {
    let d = tempfile::tempdir().unwrap();
    let env = Env::new();
    let marks = [
        json!(7),
        json!(true),
        json!({"at": "2026-01-01T00:00:00Z"}),
        json!(["2026-01-01T00:00:00Z"]),
        json!("yesterday"),
        json!(format!("2026-01-01T00:00:00{}Z", "0".repeat(1 << 20))),
        json!("2026-01-01T00:00:00Z"),
    ];
    let steps: Vec<Value> = marks
        .iter()
        .enumerate()
        .map(|(i, mark)| {
            json!({"step_id": i + 1, "source": "user", "message": format!("prompt {i}"),
                   "extra": {"cairn": {"kind": "message", "retracted_at": mark}}})
        })
        .collect();
    let file = write(d.path(), "marks.atif.json", &trajectory(json!(steps)));
    let imported = import(&env, &file).unwrap();
    let key = imported["session_key"].as_str().unwrap();
    let records = records_of(&env, key);
    assert_eq!(records.len(), marks.len(), "{records:?}");
    let taken_back: Vec<&Value> = records.iter().map(|r| &r[2]).collect();
    let mut expected = vec![&Value::Null; marks.len() - 1];
    let last = json!("2026-01-01T00:00:00Z");
    expected.push(&last);
    assert_eq!(taken_back, expected);
}

//! `show`'s human lines say what its JSON says: a failed command and its exit code, the
//! session's model and tokens; and a carriage return in a prompt parts its words in `show`
//! and `search` as it does in `sessions`.

use crate::support::Env;

/// The Claude fixture session whose record #231 is a `Bash` result that failed with exit 1.
const BIG: &str = "ae4a77f8-aedd-4bc1-888f-c94edc91af04";

/// A failed command's record says it failed and with what code, as its JSON's `outcome` and
/// `exit_code` do; a successful one says neither.
#[test]
fn a_failed_command_shows_as_failed_with_its_exit_code() {
    let env = Env::new().with_fixtures();
    env.ok(&["sync"]);
    let key = env.json(&["show", BIG, "--limit", "1"])["session_key"]
        .as_str()
        .unwrap()
        .to_owned();
    let link = format!("cairn://session/{key}?record=230-231");
    let json = env.json(&["show", &link, "--limit", "2"]);
    let failed = &json["records"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["ordinal"] == 231)
        .unwrap()
        .clone();
    assert_eq!(
        (failed["outcome"].as_str(), failed["exit_code"].as_i64()),
        (Some("failed"), Some(1))
    );
    let human = env.ok(&["show", &link, "--limit", "2"]);
    let line = human.lines().find(|l| l.starts_with("> #231 ")).unwrap();
    assert!(
        line.contains(" tool_result Bash failed (exit 1) "),
        "{human}"
    );
    let call = human.lines().find(|l| l.starts_with("> #230 ")).unwrap();
    assert!(
        !call.contains("failed") && !call.contains("exit"),
        "{human}"
    );
}

/// `show`'s session header gives the model and the token totals the session's detail and
/// export count, in its human lines and its JSON (`model`, `tokens`, as `export` names them).
#[test]
fn show_heads_a_session_with_its_model_and_tokens() {
    let env = Env::new().with_fixtures();
    env.ok(&["sync"]);
    let json = env.json(&["show", BIG, "--limit", "1"]);
    let exported: serde_json::Value =
        serde_json::from_str(&env.ok(&["export", BIG, "--format", "json"])).unwrap();
    assert_eq!(json["model"], "claude-opus-4-6", "{json}");
    assert_eq!(json["tokens"], exported["session"]["tokens"], "{json}");
    assert_eq!(json["tokens"]["output"], 49467, "{json}");
    let human = env.ok(&["show", BIG, "--limit", "1"]);
    assert_eq!(
        human.lines().nth(1),
        Some(
            "model claude-opus-4-6 · tokens 242 in, 49467 out, 16553628 cache read, 237121 cache write"
        ),
        "{human}"
    );
}

/// A prompt whose words a carriage return parts (`50%\rdone`, a progress line pasted in)
/// reads with a space there in `show` and `search`, as `sessions` previews it: not glued.
#[test]
fn a_carriage_return_parts_words_in_show_and_search() {
    let env = Env::new();
    let project = env.claude().join("-p");
    std::fs::create_dir_all(&project).unwrap();
    let prompt = serde_json::json!({
        "parentUuid": null, "isSidechain": false, "userType": "external", "cwd": "/tmp/x",
        "sessionId": "cr-1", "version": "2.1.38", "type": "user", "uuid": "u1",
        "timestamp": "2026-11-20T10:00:00.000Z",
        "message": {"role": "user", "content": "crtest progress 50%\rdone 100%"}
    });
    std::fs::write(project.join("cr.jsonl"), format!("{prompt}\n")).unwrap();
    env.ok(&["sync"]);
    let listed = env.ok(&["sessions"]);
    assert!(listed.contains("crtest progress 50% done 100%"), "{listed}");
    let shown = env.ok(&["show", "cr-1", "--turn", "0"]);
    assert!(shown.contains("crtest progress 50% done 100%"), "{shown}");
    let timeline = env.ok(&["show", "cr-1"]);
    assert!(
        timeline.contains("user: crtest progress 50% done 100%"),
        "{timeline}"
    );
    let found = env.ok(&["search", "crtest"]);
    assert!(found.contains("progress 50% done 100%"), "{found}");
    // The JSON's strings are cleaned by the same rule.
    let json = env.json(&["show", "cr-1", "--turn", "0"]);
    assert_eq!(json["records"][0]["text"], "crtest progress 50% done 100%");
}

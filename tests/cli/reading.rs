//! Reading the archive as a person does after a week of use: `show` on the `cairn://` links
//! reports and exports cite, the agent an imported session names, `sessions` over a time
//! window, and human output that names sessions without their internal keys.

use serde_json::json;

use crate::support::Env;

/// The fixtures' long Claude session: 411 records in its first turn.
const BIG: &str = "ae4a77f8-aedd-4bc1-888f-c94edc91af04";

fn synced() -> Env {
    let env = Env::new().with_fixtures();
    env.ok(&["sync"]);
    env
}

fn key_of(env: &Env, agent_id: &str) -> String {
    env.json(&["show", agent_id])["session_key"]
        .as_str()
        .unwrap()
        .to_owned()
}

/// A link to a record (as a report, an export or Recall evidence cites one) shows the turn
/// holding it, around it, the record marked; `?turn=` is `--turn`; the bare link is the
/// session. A malformed link, or a turn named twice, is a usage error; a record the session
/// lacks is not found.
#[test]
fn show_opens_the_links_reports_and_exports_cite() {
    let env = synced();
    let key = key_of(&env, BIG);
    let link = format!("cairn://session/{key}?record=40");

    let human = env.ok(&["show", &link]);
    let mut lines = human.lines();
    let head = lines.next().unwrap();
    assert!(
        head.starts_with("20 of 411 records of turn #0 of claude session")
            && head.ends_with("record #40 marked >"),
        "{human}"
    );
    let rows: Vec<&str> = lines
        .filter(|l| l.contains(" #") || l.starts_with('>'))
        .collect();
    let marked: Vec<&&str> = rows.iter().filter(|l| l.starts_with("> ")).collect();
    assert_eq!(marked.len(), 1, "{human}");
    assert!(marked[0].starts_with("> #40 "), "{human}");
    assert!(human.contains("(its first 31 records left out"), "{human}");
    assert!(human.contains("(and 360 records after these"), "{human}");
    assert!(!human.contains("sha256-"), "a key without --keys: {human}");

    let v = env.json(&["show", &link]);
    let ordinals: Vec<u64> = v["records"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["ordinal"].as_u64().unwrap())
        .collect();
    assert_eq!(ordinals, (31..51).collect::<Vec<u64>>(), "{v}");
    assert_eq!(
        (&v["turn_index"], &v["cited_records"], &v["has_more_after"]),
        (&json!(0), &json!({"first": 40, "last": 40}), &json!(true))
    );

    // `?turn=` and the bare link are what `--turn` and the key give.
    assert_eq!(
        env.json(&["show", &format!("cairn://session/{key}?turn=1")]),
        env.json(&["show", &key, "--turn", "1"])
    );
    assert_eq!(
        env.json(&["show", &format!("cairn://session/{key}")]),
        env.json(&["show", &key])
    );

    let code = |args: &[&str]| {
        let out = env.run(args);
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(!err.contains('\u{1b}'), "{err:?}");
        (out.status.code(), err)
    };
    for bad in [
        format!("cairn://session/{key}?record=9-3"),
        format!("cairn://session/{key}?evil=1"),
        "cairn://recall?tab=inbox".to_owned(),
        format!("cairn://session/{key}?record=1\u{1b}[2J"),
    ] {
        assert_eq!(code(&["show", &bad]).0, Some(2), "{bad:?}");
    }
    let (status, err) = code(&[
        "show",
        &format!("cairn://session/{key}?turn=1"),
        "--turn",
        "0",
    ]);
    assert_eq!(status, Some(2), "{err}");
    let (status, err) = code(&["show", &format!("cairn://session/{key}?record=99999")]);
    assert_eq!(status, Some(1), "{err}");
    assert!(err.contains("record 99999"), "{err}");
}

/// `show --help` says a key's prefix is taken, and it is.
#[test]
fn show_takes_a_unique_key_prefix_as_its_help_says() {
    let env = synced();
    let help = env.ok(&["show", "--help"]);
    assert!(
        help.contains("prefix") && help.contains("cairn://session/"),
        "{help}"
    );
    let key = key_of(&env, BIG);
    assert_eq!(env.json(&["show", &key[..15]])["session_key"], key.as_str());
}

/// A trajectory imported from another machine names the agent that ran it on each of `show`'s
/// pages, the turn's too.
#[test]
fn a_turn_of_an_imported_session_names_the_agent_that_ran_it() {
    let env = Env::new();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("ran.atif.json");
    let doc = json!({"schema_version": "ATIF-v1.4", "session_id": "ran-by-claude",
        "agent": {"name": "claude-code", "version": "1"},
        "steps": [{"step_id": 1, "source": "user", "message": "a prompt"}]});
    std::fs::write(&file, doc.to_string()).unwrap();
    env.ok(&["import", file.to_str().unwrap()]);
    for args in [
        &["show", "ran-by-claude"][..],
        &["show", "ran-by-claude", "--turn", "0"],
    ] {
        let human = env.ok(args);
        let head = human.lines().next().unwrap();
        assert!(head.contains("of claude session"), "{args:?}: {head}");
    }
}

/// `sessions --since/--until` keep the sessions active within the window (as an insights
/// slice picks them), read as `search` reads the same flags; an empty window is a usage error.
#[test]
fn sessions_lists_those_active_within_since_and_until() {
    let env = synced();
    let ids = |args: &[&str]| -> Vec<String> {
        let mut all = vec!["sessions"];
        all.extend_from_slice(args);
        let mut ids: Vec<String> = env
            .json(&all)
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["session_id"].as_str().unwrap_or_default().to_owned())
            .collect();
        ids.sort();
        ids
    };
    // Active after the 12th: the Codex session of August and the one updated in April.
    assert_eq!(
        ids(&["--since", "2026-02-13"]),
        ["019fc8be-3658-7ca3-9e29-000000000000", "ses_stage0_small"]
    );
    // Active on the 11th or 12th: the one that ran on the 12th, and the one begun in
    // December and updated in April.
    assert_eq!(
        ids(&["--since", "2026-02-11", "--until", "2026-02-12"]),
        [BIG, "ses_stage0_small"]
    );
    // Begun by the end of 2025.
    assert_eq!(
        ids(&["--until", "2025-12-31"]),
        [
            "1af7fc5e-8455-4414-9ccd-011d40f70b2a",
            "ses_stage0_small",
            "test-ratelimit-session"
        ]
    );
    let out = env.run(&["sessions", "--since", "2026-03-01", "--until", "2026-02-01"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("swap them"));
    let out = env.run(&["sessions", "--since", "last tuesday"]);
    assert_eq!(out.status.code(), Some(2));
    let none = env.ok(&["sessions", "--since", "2030-01-01"]);
    assert!(none.contains("No session matches these filters"), "{none}");
}

/// `recall extract preview` names sessions as a person types them back, the internal key only
/// under `--keys` (CLI.md).
#[test]
fn extract_preview_names_sessions_without_their_keys() {
    let env = synced();
    let plain = env.ok(&["recall", "extract", "preview", "--sessions"]);
    assert!(plain.contains(BIG), "{plain}");
    assert!(!plain.contains("sha256-"), "{plain}");
    let keyed = env.ok(&["--keys", "recall", "extract", "preview", "--sessions"]);
    assert!(keyed.contains(&key_of(&env, BIG)), "{keyed}");
}

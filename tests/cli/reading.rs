//! Reading the archive as a person does after a week of use: `show` on the `cairn://` links
//! reports and exports cite, the agent an imported session names, `sessions` over a time
//! window, and human output that names sessions without their internal keys.

use serde_json::json;

use crate::support::{Env, mcp_call};

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

/// Every page of the `show` tool's answer to `address` (a page the byte budget cut goes on
/// from its cursor): the first page, and the records of all of them.
fn mcp_records(env: &Env, address: &str) -> (serde_json::Value, Vec<serde_json::Value>) {
    let first = mcp_call(env, env.root.path(), "show", &json!({"address": address}));
    let mut records = first["records"].as_array().unwrap().clone();
    let mut page = first.clone();
    while let Some(cursor) = page["next_cursor"].as_str() {
        assert!(records.len() <= 100, "the pages never end");
        page = mcp_call(
            env,
            env.root.path(),
            "show",
            &json!({"address": address, "cursor": cursor}),
        );
        records.extend(page["records"].as_array().unwrap().iter().cloned());
    }
    (first, records)
}

fn ordinals(records: &serde_json::Value) -> Vec<u64> {
    records
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["ordinal"].as_u64().unwrap())
        .collect()
}

/// A link to records names the same records in `cairn show` and in the MCP server's `show`
/// tool (one window of the core's, default 20 on both): around one record, and for a range
/// that runs past its turn's end, the turn's last records with the rest left to the next turn.
#[test]
fn the_cli_and_the_mcp_server_show_the_same_records_for_a_link() {
    let env = synced();
    let key = key_of(&env, BIG);
    let turn_last =
        env.json(&["show", &key, "--turn", "0", "--limit", "1"])["records"][0]["ordinal"]
            .as_u64()
            .unwrap();
    for cited in [
        "40".to_owned(),
        "2-3".to_owned(),
        format!("{}-{}", turn_last - 3, turn_last + 4),
    ] {
        let link = format!("cairn://session/{key}?record={cited}");
        let cli = env.json(&["show", &link]);
        let (mcp, records) = mcp_records(&env, &link);
        let records = serde_json::Value::Array(records);
        assert_eq!(
            ordinals(&cli["records"]),
            ordinals(&records),
            "{link}: {mcp}"
        );
        assert_eq!(cli["cited_records"], mcp["cited_records"], "{link}");
        assert_eq!(cli["has_more_after"], mcp["has_more_after"], "{link}");
        assert_eq!(
            cli["cited_after_turn"]["first"], mcp["cited_after_turn"]["first"],
            "{link}"
        );
        let cited: Vec<u64> = records
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| r["cited"] == true)
            .map(|r| r["ordinal"].as_u64().unwrap())
            .collect();
        let (first, last) = (
            cli["cited_records"]["first"].as_u64().unwrap(),
            cli["cited_records"]["last"].as_u64().unwrap(),
        );
        assert_eq!(cited, (first..=last).collect::<Vec<u64>>(), "{link}");
    }
    // The range past the turn: the turn's last 20, the rest named with the next turn.
    let link = format!(
        "cairn://session/{key}?record={}-{}",
        turn_last - 3,
        turn_last + 4
    );
    let cli = env.json(&["show", &link]);
    assert_eq!(
        ordinals(&cli["records"]),
        (turn_last - 19..=turn_last).collect::<Vec<u64>>()
    );
    assert_eq!(
        cli["cited_after_turn"],
        json!({"first": turn_last + 1, "last": turn_last + 4})
    );
    let mcp = mcp_call(&env, env.root.path(), "show", &json!({"address": link}));
    assert_eq!(
        mcp["cited_after_turn"]["turn_address"],
        format!("cairn://session/{key}?turn=1").as_str()
    );
    let human = env.ok(&["show", &link]);
    assert!(
        human.contains(&format!(
            "(records {}-{} are in the turns after this one: --turn 1 shows the next)",
            turn_last + 1,
            turn_last + 4
        )),
        "{human}"
    );
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

/// A count of one is said in the singular wherever `show` counts (a session of one turn, a
/// turn of one record), never "1 turns" or "1 records".
#[test]
fn show_counts_one_in_the_singular() {
    let env = synced();
    let sessions = env.json(&["sessions"]);
    let one = sessions
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["turn_count"] == 1 && s["record_count"] == 1)
        .unwrap_or_else(|| panic!("no session of one record: {sessions}"));
    let key = one["session_key"].as_str().unwrap();
    let timeline = env.ok(&["show", key]);
    assert!(timeline.starts_with("1 of 1 turn of "), "{timeline}");
    let turn = env.ok(&["show", key, "--turn", "0"]);
    assert!(turn.starts_with("1 of 1 record of turn #0 of "), "{turn}");
    for said in [timeline, turn] {
        assert!(
            !said.contains("1 turns") && !said.contains("1 records"),
            "{said}"
        );
    }
}

/// A rewound Gemini chat (its last turns dropped by the agent): `show` counts and lists the
/// turns that stand, as `sessions` does, in text and JSON, and a window shorter than them
/// still says there are more before; the dropped turns are not listed as empty ones.
#[test]
fn show_counts_the_turns_a_rewind_left_as_sessions_does() {
    let (env, id) = crate::support::rewound_gemini();
    let sessions = env.json(&["sessions"]);
    let row = &sessions.as_array().unwrap()[0];
    let standing = row["turn_count"].as_u64().unwrap();
    let view = env.json(&["show", id]);
    let turns = view["turns"].as_array().unwrap();
    assert_eq!(view["coverage"]["total_turns"], standing, "{view}");
    assert_eq!(turns.len() as u64, standing, "{view}");
    assert!(
        turns.iter().all(|t| t["record_count"].as_u64() > Some(0)),
        "{view}"
    );
    let text = env.ok(&["show", id]);
    assert!(
        text.starts_with(&format!("{standing} of {standing} turns of ")),
        "{text}"
    );
    assert!(!text.contains("records=0"), "{text}");
    // The last two that stand, and more before them.
    let window = env.json(&["show", id, "--limit", "2"]);
    let shown: Vec<_> = window["turns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["turn_index"].clone())
        .collect();
    let last: Vec<_> = turns[turns.len() - 2..]
        .iter()
        .map(|t| t["turn_index"].clone())
        .collect();
    assert_eq!(shown, last, "{window}");
    assert_eq!(window["coverage"]["has_more_before"], true, "{window}");
    assert_eq!(window["coverage"]["total_turns"], standing, "{window}");
}

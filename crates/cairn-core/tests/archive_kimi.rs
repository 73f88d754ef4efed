//! kimi-cli (the Python CLI) sessions end to end over `tests/fixtures/kimi/cli` (a schema sample
//! written from the writer's types, see SOURCES.md): found under `~/.kimi/sessions`, their cwd
//! taken from `kimi.json`, a sub-agent's journal attached to its session.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use cairn_core::Cairn;
use cairn_core::archive::Agent;
use rusqlite::Connection;

const SESSION: &str =
    "sessions/7d3bc8c3c79adb12ac244d58560d89da/4f9c2d1e-0000-4000-8000-000000000001";

#[test]
fn a_kimi_cli_session_and_its_sub_agent_are_read_with_their_work_dir() {
    let home = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let fixture = support::fixtures().join("kimi/cli");
    let root = home.path().join(".kimi");
    for rel in [
        "kimi.json".to_owned(),
        format!("{SESSION}/wire.jsonl"),
        format!("{SESSION}/subagents/a1b2c3d4/wire.jsonl"),
    ] {
        support::copy_into(&fixture.join(&rel), &root, &rel);
    }
    // The session's folder is named by its work dir's md5.
    let hash = {
        use md5::Digest as _;
        hex::encode(md5::Md5::digest(b"/work/app"))
    };
    assert!(SESSION.contains(&hash));

    let files = support::found(Agent::Kimi, &root.join("sessions"));
    assert_eq!(files.len(), 2, "{files:?}");
    let cairn = Cairn::open(data.path()).unwrap();
    let r = support::capture(&cairn, &files);
    assert!(r.warnings.is_empty(), "{:?}", r.warnings);
    assert_eq!((r.sessions_added, r.subagents_added), (1, 1), "{r:?}");

    let conn = Connection::open(data.path().join("cairn.db")).unwrap();
    let records = |relation: &str| -> Vec<String> {
        conn.prepare(
            "SELECT r.kind || ' ' || coalesce(r.prompt_source, r.tool_name, '') || ' '
                    || coalesce(r.exit_code, '') || ' ' || coalesce(r.text, '')
             FROM records r JOIN sessions s ON s.id = r.session_id
             WHERE coalesce(s.relation, 'main') = ?1 ORDER BY r.ordinal",
        )
        .unwrap()
        .query_map([relation], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect()
    };
    assert_eq!(
        records("main"),
        [
            "message human  find the slow query",
            "reasoning   Profile first.",
            "tool_call Shell  ",
            "tool_result Shell 1 1 failed in 3.1s",
            "tool_call Agent  ",
            "tool_result Agent  agent_id: a1b2c3d4\nThe orders query scans the whole table.",
            "message human  and suggest an index",
            "message   The orders query scans the whole table; an index on (customer_id, created_at) fixes it.",
            "message human  /compact",
            "event   Conversation compacted",
            "message   The context has been compacted.",
        ]
    );
    assert_eq!(
        records("subagent"),
        [
            "message spawned_agent  profile the orders query",
            "tool_call ReadFile  ",
            "tool_result ReadFile  def orders(customer): ...",
            "message   The orders query scans the whole table.",
        ]
    );
    let (cwd, started, input, cache_read): (String, String, i64, i64) = conn
        .query_row(
            "SELECT s.cwd, s.started_at, (SELECT sum(input) FROM token_usage u WHERE u.session_id = s.id),
                    (SELECT sum(cache_read) FROM token_usage u WHERE u.session_id = s.id)
             FROM sessions s WHERE s.relation IS NULL",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
        )
        .unwrap();
    assert_eq!(
        (cwd.as_str(), started.as_str(), input, cache_read),
        ("/work/app", "2025-07-16T10:00:00.000Z", 5700, 5400)
    );
    assert_eq!(
        support::count(
            data.path(),
            "SELECT count(*) FROM sessions WHERE relation = 'subagent' AND parent_key IS NOT NULL"
        ),
        1
    );
    let r = support::capture(&cairn, &files);
    assert_eq!((r.records_added, r.records_updated), (0, 0));
}

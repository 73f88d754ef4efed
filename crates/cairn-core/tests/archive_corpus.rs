//! The mixed corpus: real fixtures of every agent Cairn reads (and the databases built where no
//! real one could be copied: OpenCode's, Cursor's IDE store, kiro-cli's), laid out as each agent
//! lays them out under a temporary home (and the project folders Aider and Crush write into), synced by
//! `Cairn::sync` through configured source dirs. Per agent, the sessions and turns are pinned; a
//! second sync adds nothing; then each kind of change an agent makes (a line appended, a
//! document rewritten, rows added to a database, a file added to a tree) is picked up exactly
//! once. A new agent is one row of [`CORPUS`] (or [`BUILT`]) and, for its change, one row of
//! [`changes`].
//!
//! Beside it: Aider's history and Crush's database are found in the repositories the archive
//! already knows, and a changed OpenCode message or part file is mapped back to its session.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use std::collections::BTreeMap;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use cairn_core::archive::Agent;
use cairn_core::archive::capture::{Quiet, SyncReport};
use cairn_core::archive::discover;
use cairn_core::{Cairn, SyncOptions};
use serde_json::json;
use support::agent_dbs;
use support::opencode_db::{Db, T0};

/// One fixture folder of an agent, where it goes under the temporary home, and the folder
/// configured as the agent's source dir (relative to the home).
struct Layout {
    agent: Agent,
    /// Under `tests/fixtures/`.
    fixture: &'static str,
    /// Where its contents are copied, under the home.
    at: &'static str,
    /// The source dir configured for the agent, under the home.
    root: &'static str,
}

/// Every agent's fixtures in its default-like layout. The databases with no real sample to copy
/// are built: see [`BUILT`].
const CORPUS: &[Layout] = &[
    Layout {
        agent: Agent::Claude,
        fixture: "claude",
        at: ".claude/projects/-home-dev-app",
        root: ".claude/projects",
    },
    Layout {
        agent: Agent::Codex,
        fixture: "codex",
        at: ".codex/sessions/2026/08/03",
        root: ".codex/sessions",
    },
    Layout {
        agent: Agent::Copilot,
        fixture: "copilot",
        at: ".copilot/session-state",
        root: ".copilot/session-state",
    },
    Layout {
        agent: Agent::Qwen,
        fixture: "qwen",
        at: ".qwen/projects/-tmp-q/chats",
        root: ".qwen/projects",
    },
    Layout {
        agent: Agent::Droid,
        fixture: "droid",
        at: ".factory/sessions/-tmp-d",
        root: ".factory/sessions",
    },
    Layout {
        agent: Agent::Kimi,
        fixture: "kimi/sessions",
        at: ".kimi/sessions",
        root: ".kimi/sessions",
    },
    // Legacy `session-*.json` documents and the newer `.jsonl`.
    Layout {
        agent: Agent::Gemini,
        fixture: "gemini",
        at: ".gemini/tmp",
        root: ".gemini/tmp",
    },
    Layout {
        agent: Agent::Cursor,
        fixture: "cursor",
        at: ".cursor/projects",
        root: ".cursor/projects",
    },
    Layout {
        agent: Agent::Aider,
        fixture: "aider/Aquaticat-Monochromatic",
        at: "code/aider-app",
        root: "code",
    },
    Layout {
        agent: Agent::Crush,
        fixture: "crush/Starmel-OpenSuperWhisper",
        at: "code/crush-app",
        root: "code",
    },
    // Each extension's storage folder (holding `tasks/`) in VS Code's globalStorage.
    Layout {
        agent: Agent::Cline,
        fixture: "cline/saoudrizwan.claude-dev",
        at: ".config/Code/User/globalStorage/saoudrizwan.claude-dev",
        root: ".config/Code/User/globalStorage/saoudrizwan.claude-dev",
    },
    Layout {
        agent: Agent::Roo,
        fixture: "cline/rooveterinaryinc.roo-cline",
        at: ".config/Code/User/globalStorage/rooveterinaryinc.roo-cline",
        root: ".config/Code/User/globalStorage/rooveterinaryinc.roo-cline",
    },
    Layout {
        agent: Agent::Kilo,
        fixture: "cline/kilocode.kilo-code",
        at: ".config/Code/User/globalStorage/kilocode.kilo-code",
        root: ".config/Code/User/globalStorage/kilocode.kilo-code",
    },
    Layout {
        agent: Agent::Pi,
        fixture: "pi",
        at: ".pi/agent/sessions/--tmp-as-agent-fixture-project--",
        root: ".pi/agent/sessions",
    },
    Layout {
        agent: Agent::Openclaw,
        fixture: "openclaw",
        at: ".openclaw/agents/main/sessions",
        root: ".openclaw/agents",
    },
    Layout {
        agent: Agent::Vscopilot,
        fixture: "vscopilot",
        at: ".cache/VSGitHubCopilotLogs/traces",
        root: ".cache/VSGitHubCopilotLogs/traces",
    },
    Layout {
        agent: Agent::Qwenpaw,
        fixture: "qwenpaw",
        at: ".copaw/workspaces",
        root: ".copaw/workspaces",
    },
    Layout {
        agent: Agent::Posit,
        fixture: "posit",
        at: ".posit/assistant/workspaces",
        root: ".posit/assistant/workspaces",
    },
    Layout {
        agent: Agent::Gptme,
        fixture: "gptme",
        at: ".local/share/gptme/logs",
        root: ".local/share/gptme/logs",
    },
    Layout {
        agent: Agent::Traex,
        fixture: "traex",
        at: ".trae/cli",
        root: ".trae/cli/sessions",
    },
    Layout {
        agent: Agent::Iflow,
        fixture: "iflow",
        at: ".iflow/projects",
        root: ".iflow/projects",
    },
    Layout {
        agent: Agent::Vibe,
        fixture: "vibe",
        at: ".vibe/logs/session",
        root: ".vibe/logs/session",
    },
    Layout {
        agent: Agent::Antigravity,
        fixture: "antigravity",
        at: ".gemini/antigravity-cli/brain",
        root: ".gemini/antigravity-cli/brain",
    },
    Layout {
        agent: Agent::Hermes,
        fixture: "hermes",
        at: ".hermes/sessions",
        root: ".hermes/sessions",
    },
    Layout {
        agent: Agent::Grok,
        fixture: "grok",
        at: ".grok/sessions",
        root: ".grok/sessions",
    },
    // The storage tree beside the database, and the older flat layout in a folder of its own.
    Layout {
        agent: Agent::Opencode,
        fixture: "opencode/v2/storage",
        at: ".local/share/opencode/storage",
        root: ".local/share/opencode",
    },
    Layout {
        agent: Agent::Opencode,
        fixture: "opencode/legacy/storage",
        at: "opencode-legacy/storage",
        root: "opencode-legacy",
    },
];

/// A database the test builds (no real file could be copied: a schema sample or an agent's
/// payloads, see each fixture's SOURCES.md).
struct Built {
    agent: Agent,
    /// The folder it is built in, under the home.
    at: &'static str,
    /// The source dir configured for the agent, under the home.
    root: &'static str,
    build: fn(&Path) -> PathBuf,
}

const BUILT: &[Built] = &[
    Built {
        agent: Agent::Opencode,
        at: ".local/share/opencode",
        root: ".local/share/opencode",
        build: opencode_db,
    },
    // Cursor's IDE chat store, beside its agent transcripts.
    Built {
        agent: Agent::Cursor,
        at: ".config/Cursor",
        root: ".config/Cursor/User",
        build: agent_dbs::cursor_ide_store,
    },
    Built {
        agent: Agent::Kiro,
        at: ".local/share",
        root: ".local/share/kiro-cli",
        build: agent_dbs::kiro_database,
    },
];

/// Per agent: (sessions, turns) after the first sync, sub-agent sessions included (the same
/// counts each agent's golden test pins over its fixtures).
fn expected() -> BTreeMap<Agent, (i64, i64)> {
    BTreeMap::from([
        (Agent::Claude, (8, 19)),
        (Agent::Codex, (2, 2)),
        (Agent::Copilot, (2, 4)),
        (Agent::Qwen, (1, 1)),
        (Agent::Droid, (6, 7)),
        (Agent::Kimi, (3, 12)),
        (Agent::Gemini, (4, 14)),
        // Agent transcripts 7/11, the IDE store's chats 2/3.
        (Agent::Cursor, (9, 14)),
        (Agent::Aider, (1, 27)),
        (Agent::Crush, (3, 19)),
        (Agent::Opencode, (4, 5)),
        (Agent::Cline, (1, 2)),
        (Agent::Roo, (2, 2)),
        (Agent::Kilo, (1, 1)),
        (Agent::Kiro, (3, 4)),
        (Agent::Pi, (2, 4)),
        (Agent::Openclaw, (3, 4)),
        (Agent::Grok, (4, 8)),
        (Agent::Hermes, (3, 3)),
        (Agent::Antigravity, (2, 3)),
        (Agent::Vibe, (2, 3)),
        (Agent::Iflow, (1, 1)),
        (Agent::Traex, (1, 1)),
        (Agent::Gptme, (1, 2)),
        (Agent::Posit, (3, 4)),
        (Agent::Qwenpaw, (4, 4)),
        // One conversation over four files, one sharing the fourth.
        (Agent::Vscopilot, (2, 5)),
    ])
}

/// What an agent does to its files between two syncs.
enum Change {
    /// A line appended to a line file (JSONL, Aider's Markdown).
    Append(&'static str, String),
    /// A JSON document rewritten in place with one more message.
    Rewrite(&'static str, serde_json::Value),
    /// Rows added to a database.
    Rows(&'static str, fn(&Path)),
    /// Files added to a tree.
    Files(Vec<(&'static str, serde_json::Value)>),
}

/// One change per kind and per agent that keeps files of that kind, each adding one prompt,
/// with the records it adds.
fn changes() -> Vec<(Agent, Change, i64)> {
    let prompt = "one more thing";
    vec![
        (Agent::Claude, Change::Append(".claude/projects/-home-dev-app/small.jsonl",
            json!({"type":"user","uuid":"u-new","parentUuid":null,"sessionId":"ses_stage0_small","cwd":"/tmp",
                   "timestamp":"2025-12-16T01:00:00.000Z","message":{"role":"user","content":prompt}}).to_string()), 1),
        (Agent::Codex, Change::Append(".codex/sessions/2026/08/03/small.jsonl",
            json!({"timestamp":"2026-08-03T11:00:00.000Z","type":"response_item","payload":{"type":"message","id":"msg-new","role":"user","content":[{"type":"input_text","text":prompt}]}}).to_string()), 1),
        (Agent::Copilot, Change::Append(".copilot/session-state/small.jsonl",
            json!({"type":"user.message","data":{"content":prompt},"id":"e-new","timestamp":"2026-03-26T18:00:00.000Z"}).to_string()), 1),
        (Agent::Qwen, Change::Append(".qwen/projects/-tmp-q/chats/019f0000-0000-7000-8000-000000000001.jsonl",
            json!({"uuid":"u-new","sessionId":"q-new","timestamp":"2026-08-17T13:00:00.000Z","type":"user","cwd":"/tmp/q","message":{"role":"user","parts":[{"text":prompt}]}}).to_string()), 1),
        (Agent::Droid, Change::Append(".factory/sessions/-tmp-d/session_store_small.jsonl",
            json!({"type":"message","id":"m-new","timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"user","content":[{"type":"text","text":prompt}]}}).to_string()), 1),
        (Agent::Pi, Change::Append(".pi/agent/sessions/--tmp-as-agent-fixture-project--/small.jsonl",
            json!({"type":"message","id":"n-new","parentId":"2c19d326","timestamp":"2026-05-12T01:03:00.000Z","message":{"role":"user","content":[{"type":"text","text":prompt}]}}).to_string()), 1),
        (Agent::Grok, Change::Append(".grok/sessions/%2Fworkspace%2Fagentsview/019f6000-0000-7000-8000-000000000002/chat_history.jsonl",
            json!({"role":"user","content":prompt}).to_string()), 1),
        (Agent::Openclaw, Change::Append(".openclaw/agents/main/sessions/small.jsonl",
            json!({"type":"message","id":"m-new","parentId":"m3","timestamp":"2026-02-24T09:01:00Z","message":{"role":"user","content":[{"type":"text","text":prompt}]}}).to_string()), 1),
        (Agent::Kimi, Change::Append(".kimi/sessions/wd_project_ac3bb318f98e/session_9eb1bf57-c1af-48a5-b658-0e8d9fe794f5/agents/main/wire.jsonl",
            json!({"type":"turn.prompt","input":[{"type":"text","text":prompt}],"origin":{"kind":"user"},"time":1785613809972_i64}).to_string()), 1),
        (Agent::Gemini, Change::Append(".gemini/tmp/stage0/chats/session-2026-04-29T21-39-gemini_s.jsonl",
            json!({"id":"g-user-new","timestamp":"2026-04-29T22:00:00.000Z","type":"user","content":[{"text":prompt}]}).to_string()), 1),
        (Agent::Gemini, Change::Rewrite(".gemini/tmp/m-gemini/chats/session-2025-12-24T06-40-c330aea9.json",
            json!({"id":"c330-new","timestamp":"2025-12-24T08:00:00.000Z","type":"user","content":prompt})), 1),
        (Agent::Iflow, Change::Append(".iflow/projects/C--exp-docker-image-retagger/session-5de701fc-7454-4858-a249-95cac4fd3b51.jsonl",
            json!({"uuid":"u-new","parentUuid":null,"sessionId":"session-5de701fc-7454-4858-a249-95cac4fd3b51","timestamp":"2026-01-21T07:00:00.000Z","type":"user","message":{"role":"user","content":prompt}}).to_string()), 1),
        (Agent::Posit, Change::Append(".posit/assistant/workspaces/default/33333333/lm-messages.jsonl",
            json!({"id":2,"message":{"role":"user","content":prompt,"providerOptions":{"providerMetadata":{"positai":{"timestamp":1735776002000_i64}}}}}).to_string()), 1),
        (Agent::Gptme, Change::Append(".local/share/gptme/logs/2026-06-13-write-hello-world/conversation.jsonl",
            json!({"role":"user","content":prompt,"timestamp":"2026-06-13T11:00:00.000000"}).to_string()), 1),
        (Agent::Traex, Change::Append(".trae/cli/sessions/2026/08/01/rollout-2026-08-01T18-07-03-019fbcca-9fd4-7d20-83dc-0762b2f839b3.jsonl",
            json!({"timestamp":"2026-08-01T19:00:00.000Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":prompt}]}}).to_string()), 1),
        (Agent::Vibe, Change::Append(".vibe/logs/session/session_basic/messages.jsonl",
            json!({"role":"user","content":prompt,"message_id":"msg_new"}).to_string()), 1),
        (Agent::Antigravity, Change::Append(".gemini/antigravity-cli/brain/cli-schema-drift/.system_generated/logs/transcript.jsonl",
            json!({"step_index":3,"source":"USER_EXPLICIT","type":"USER_INPUT","status":"DONE","created_at":"2026-06-26T21:17:00Z","content":format!("<USER_REQUEST>\n{prompt}\n</USER_REQUEST>")}).to_string()), 1),
        (Agent::Qwenpaw, Change::Rewrite(".copaw/workspaces/default/sessions/default_1700000000000.json",
            json!([{"id":"msg_new","role":"user","content":[{"type":"text","text":prompt}],"timestamp":"2026-03-15 11:00:00.000"},[]])), 1),
        (Agent::Vscopilot, Change::Append(".cache/VSGitHubCopilotLogs/traces/sample-4_VSGitHubCopilot_traces.jsonl",
            json!({"resourceSpans":[{"resource":{"attributes":[]},"scopeSpans":[{"scope":{},"spans":[{"traceId":"ee","spanId":"e5e5e5e5e5e5e5e5","parentSpanId":"","name":"invoke_agent GitHub Copilot","startTimeUnixNano":"1781296800000000000","endTimeUnixNano":"1781296810000000000","attributes":[
                {"key":"gen_ai.conversation.id","value":{"stringValue":"c0aca2e3-d1f2-4d28-bd5e-5dab29e2be28"}},
                {"key":"gen_ai.operation.name","value":{"stringValue":"invoke_agent"}},
                {"key":"gen_ai.input.messages","value":{"stringValue":json!([{"role":"user","parts":[{"type":"text","content":prompt}]}]).to_string()}}]}]}]}]}).to_string()), 1),
        (Agent::Hermes, Change::Rewrite(".hermes/sessions/session_20260429_hermes_small.json",
            json!({"role":"user","content":prompt})), 1),
        (Agent::Cline, Change::Rewrite(".config/Code/User/globalStorage/saoudrizwan.claude-dev/tasks/1754331000000/ui_messages.json",
            json!({"ts":1_754_331_100_000_i64,"type":"say","say":"user_feedback","text":prompt})), 1),
        (Agent::Cursor, Change::Append(".cursor/projects/-tmp-repo/agent-transcripts/small.jsonl",
            json!({"role":"user","message":{"content":[{"type":"text","text":prompt}]}}).to_string()), 1),
        (Agent::Cursor, Change::Rows(".config/Cursor/User/globalStorage/state.vscdb", |db| {
            let conn = rusqlite::Connection::open(db).unwrap();
            let mut chat: serde_json::Value = serde_json::from_str(
                &conn.query_row("SELECT value FROM cursorDiskKV WHERE key = 'composerData:c-agent'", [], |r| r.get::<_, String>(0)).unwrap(),
            ).unwrap();
            chat["fullConversationHeadersOnly"].as_array_mut().unwrap().push(json!({"bubbleId": "b13", "type": 1}));
            agent_dbs::cursor_ide_set(db, "composerData:c-agent", &chat.to_string());
            agent_dbs::cursor_ide_set(db, "bubbleId:c-agent:b13", &json!({"type": 1, "bubbleId": "b13", "text": "one more thing"}).to_string());
        }), 1),
        // kiro-cli rewrites the conversation's value with the new turn: a prompt and its answer.
        (Agent::Kiro, Change::Rows(".local/share/kiro-cli/data.sqlite3", agent_dbs::kiro_add_turn), 2),
        (Agent::Aider, Change::Append("code/aider-app/.aider.chat.history.md", format!("\n#### {prompt}  \n")), 1),
        (Agent::Crush, Change::Rows("code/crush-app/.crush/crush.db", |db| {
            let conn = rusqlite::Connection::open(db).unwrap();
            let session: String = conn
                .query_row("SELECT session_id FROM messages ORDER BY created_at LIMIT 1", [], |r| r.get(0))
                .unwrap();
            let parts = json!([{"type":"text","data":{"text":"one more thing"}}]).to_string();
            conn.execute(
                "INSERT INTO messages (id, session_id, role, parts, created_at, updated_at) VALUES ('m-new', ?1, 'user', ?2, 1760000000, 1760000000)",
                rusqlite::params![session, parts],
            )
            .unwrap();
        }), 1),
        (Agent::Opencode, Change::Rows(".local/share/opencode/opencode.db", |db| {
            let db = Db { conn: rusqlite::Connection::open(db).unwrap() };
            db.message("msg_new", "ses_corpus", T0 + 9000, &json!({"role": "user", "time": {"created": T0 + 9000}}));
            db.part("prt_new", "msg_new", "ses_corpus", T0 + 9000, &json!({"type": "text", "text": "one more thing"}));
        }), 1),
        (Agent::Opencode, Change::Files(vec![
            (".local/share/opencode/storage/message/s_stage0_small/msg_0009.json",
             json!({"id":"m_user_new","sessionID":"s_stage0_small","role":"user","time":{"created":1_730_000_009_000_i64}})),
            (".local/share/opencode/storage/part/m_user_new/001.json",
             json!({"id":"p_user_new","type":"text","text":prompt,"time":{"start":1_730_000_009_000_i64}})),
        ]), 1),
    ]
}

/// OpenCode's database in `dir`: one session of a prompt and an answer with a shell call.
fn opencode_db(dir: &Path) -> PathBuf {
    let path = dir.join("opencode.db");
    let db = Db::create(&path);
    db.session("ses_corpus", None, "Corpus");
    db.message(
        "msg_u1",
        "ses_corpus",
        T0 + 1000,
        &json!({"role": "user", "time": {"created": T0 + 1000}}),
    );
    db.part(
        "prt_u1",
        "msg_u1",
        "ses_corpus",
        T0 + 1000,
        &json!({"type": "text", "text": "Run ls"}),
    );
    db.message("msg_a1", "ses_corpus", T0 + 2000, &json!({"role": "assistant", "time": {"created": T0 + 2000},
        "modelID": "gpt-4o-mini", "providerID": "openai", "path": {"cwd": "/work/app", "root": "/work/app"}}));
    db.part("prt_a1", "msg_a1", "ses_corpus", T0 + 2001, &json!({"type": "tool", "callID": "call_1", "tool": "bash",
        "state": {"status": "completed", "input": {"command": "ls"}, "output": "a\nb\n", "metadata": {"exit": 0}}}));
    path
}

/// Sessions, turns and live records per agent.
fn counts(data: &Path) -> BTreeMap<Agent, (i64, i64, i64)> {
    let conn = rusqlite::Connection::open(data.join("cairn.db")).unwrap();
    let mut stmt = conn
        .prepare(
            "SELECT s.agent, count(*), sum(s.turn_count),
                    (SELECT count(*) FROM records r JOIN sessions t ON t.id = r.session_id
                     WHERE t.agent = s.agent AND r.retracted_at IS NULL)
             FROM sessions s GROUP BY s.agent",
        )
        .unwrap();
    stmt.query_map([], |r| {
        let agent: String = r.get(0)?;
        Ok((
            Agent::parse(&agent).unwrap(),
            (r.get(1)?, r.get(2)?, r.get(3)?),
        ))
    })
    .unwrap()
    .map(Result::unwrap)
    .collect()
}

fn copy_dir(from: &Path, to: &Path) {
    for entry in walkdir::WalkDir::new(from) {
        let entry = entry.unwrap();
        let dest = to.join(entry.path().strip_prefix(from).unwrap());
        if entry.file_type().is_dir() {
            std::fs::create_dir_all(&dest).unwrap();
        } else if entry.file_name() != "SOURCES.md" {
            std::fs::copy(entry.path(), &dest).unwrap();
        }
    }
}

/// A data dir whose every agent reads the corpus under `home` (and nothing of the real home).
fn open_on(home: &Path, data: &Path) -> Cairn {
    {
        let cairn = Cairn::open(data).unwrap();
        for agent in Agent::ALL {
            let mut dirs: Vec<String> = CORPUS
                .iter()
                .filter(|l| l.agent == agent)
                .map(|l| l.root)
                .chain(BUILT.iter().filter(|b| b.agent == agent).map(|b| b.root))
                .map(|root| home.join(root).display().to_string())
                .collect();
            dirs.sort();
            dirs.dedup();
            if dirs.is_empty() {
                // An agent without fixtures here reads an empty folder, never the real home.
                let empty = home.join("empty");
                std::fs::create_dir_all(&empty).unwrap();
                dirs.push(empty.display().to_string());
            }
            cairn.set_source_dirs(agent, dirs).unwrap();
        }
    }
    Cairn::open(data).unwrap()
}

fn sync(cairn: &Cairn) -> SyncReport {
    let report = cairn.sync(&SyncOptions::default(), &Quiet).unwrap();
    // Some fixtures had their timestamps trimmed by their source (see their SOURCES.md), and
    // AgentsView's Pi session holds a line that is not JSON, its Vibe sessions an empty one, on
    // purpose.
    assert!(
        report.warnings.iter().all(|w| {
            w.message.contains("is not RFC 3339")
                || (w.path.ends_with(
                    "/.pi/agent/sessions/--tmp-as-agent-fixture-project--/session.jsonl",
                ) && w.message.starts_with("malformed JSON skipped"))
                || (w.path.ends_with("/session_empty/messages.jsonl")
                    && w.message == "empty file skipped")
        }),
        "{:?}",
        report.warnings
    );
    report
}

#[test]
fn every_agent_in_one_corpus_syncs_resyncs_to_nothing_and_takes_each_change_once() {
    let home = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    for layout in CORPUS {
        copy_dir(
            &support::fixtures().join(layout.fixture),
            &home.path().join(layout.at),
        );
        std::fs::create_dir_all(home.path().join(layout.root)).unwrap();
    }
    for built in BUILT {
        (built.build)(&home.path().join(built.at));
    }
    let cairn = open_on(home.path(), data.path());

    let first = sync(&cairn);
    let after_first = counts(data.path());
    let got: BTreeMap<Agent, (i64, i64)> = after_first
        .iter()
        .map(|(a, (s, t, _))| (*a, (*s, *t)))
        .collect();
    assert_eq!(got, expected(), "sessions and turns per agent");
    // Every session row is new, listed on its own or under its parent.
    assert_eq!(
        (first.sessions_added + first.subagents_added) as i64,
        got.values().map(|(s, _)| s).sum::<i64>()
    );
    assert!(
        first.subagents_added > 0,
        "the corpus has sub-agents: {first:?}"
    );

    let before = support::dump(data.path());
    let again = sync(&cairn);
    assert_eq!(
        (
            again.records_added,
            again.records_updated,
            again.sessions_added,
            again.sessions_updated
        ),
        (0, 0, 0, 0),
        "a second sync adds nothing"
    );
    assert_eq!(support::dump(data.path()), before);

    let mut added: BTreeMap<Agent, i64> = BTreeMap::new();
    for (agent, change, records) in changes() {
        *added.entry(agent).or_default() += records;
        match change {
            Change::Append(rel, line) => {
                let mut f = std::fs::OpenOptions::new()
                    .append(true)
                    .open(home.path().join(rel))
                    .unwrap();
                writeln!(f, "{line}").unwrap();
            }
            Change::Rewrite(rel, message) => {
                let path = home.path().join(rel);
                let mut doc: serde_json::Value =
                    serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
                // Gemini's session document holds `messages`; a Cline task log is the array;
                // QwenPaw's agent state holds its messages in its memory.
                if let Some(log) = doc.as_array_mut() {
                    log.push(message);
                } else if let Some(memory) = doc.pointer_mut("/agent/memory/content") {
                    memory.as_array_mut().unwrap().push(message);
                } else {
                    doc["messages"].as_array_mut().unwrap().push(message);
                    doc["lastUpdated"] = json!("2025-12-24T08:00:00.000Z");
                }
                std::fs::write(&path, serde_json::to_vec_pretty(&doc).unwrap()).unwrap();
            }
            Change::Rows(rel, add) => add(&home.path().join(rel)),
            Change::Files(files) => {
                for (rel, value) in files {
                    let path = home.path().join(rel);
                    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
                    std::fs::write(path, value.to_string()).unwrap();
                }
            }
        }
    }
    let third = sync(&cairn);
    let after_changes = counts(data.path());
    let grew: BTreeMap<Agent, i64> = after_changes
        .iter()
        .map(|(a, (_, _, r))| (*a, r - after_first[a].2))
        .filter(|(_, n)| *n != 0)
        .collect();
    assert_eq!(grew, added, "records each change added, per agent");
    assert_eq!(third.sessions_added, 0);
    assert_eq!(third.records_added as i64, added.values().sum::<i64>());

    let fourth = sync(&cairn);
    assert_eq!(
        (
            fourth.records_added,
            fourth.records_updated,
            fourth.sessions_added
        ),
        (0, 0, 0),
        "each change is taken once"
    );
    support::assert_ordinals_dense(data.path());
}

/// Every agent Cairn discovers is in the mixed corpus, and named in the README's first lines.
#[test]
fn every_agent_is_in_the_corpus_and_named_in_the_readme() {
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../README.md"))
            .unwrap();
    let opening: String = readme
        .split("\n\n")
        .nth(1)
        .unwrap()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    for agent in Agent::ALL {
        // No wildcard: a new agent needs its name here.
        let name = match agent {
            Agent::Claude => "Claude Code",
            Agent::Codex => "Codex",
            Agent::Copilot => "GitHub Copilot CLI",
            Agent::Qwen => "Qwen Code",
            Agent::Droid => "Factory Droid",
            Agent::Kimi => "Kimi Code",
            Agent::Gemini => "Gemini CLI",
            Agent::Cursor => "Cursor",
            Agent::Aider => "Aider",
            Agent::Crush => "Crush",
            Agent::Opencode => "OpenCode",
            Agent::Cline => "Cline",
            Agent::Roo => "Roo Code",
            Agent::Kilo => "Kilo Code",
            Agent::Kiro => "Kiro CLI",
            Agent::Pi => "Pi",
            Agent::Openclaw => "OpenClaw",
            Agent::Grok => "Grok Build",
            Agent::Hermes => "Hermes Agent",
            Agent::Antigravity => "Antigravity",
            Agent::Vibe => "Mistral Vibe",
            Agent::Iflow => "iFlow CLI",
            Agent::Traex => "TRAE CLI",
            Agent::Gptme => "gptme",
            Agent::Posit => "Posit Assistant",
            Agent::Qwenpaw => "QwenPaw",
            Agent::Vscopilot => "Visual Studio",
            Agent::Atif => "ATIF",
        };
        assert!(
            opening.contains(name),
            "the README's opening does not name {name}"
        );
        assert!(
            CORPUS.iter().any(|l| l.agent == agent) || BUILT.iter().any(|b| b.agent == agent),
            "{agent:?} is not in the mixed corpus"
        );
        assert!(
            expected().contains_key(&agent),
            "{agent:?} has no pinned counts"
        );
    }
}

fn git(dir: &Path, args: &[&str]) {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// No folder is configured for Aider or Crush: once a Claude session ran in a repository, the
/// next sync finds the Aider history and the Crush database kept in that repository, and live
/// capture watches their folders. A
/// history there that is a symlink to a file outside the repository is a warning, never read.
#[test]
fn aider_and_crush_are_found_in_the_repositories_the_archive_knows() {
    let home = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let repo = home.path().join("work/app");
    std::fs::create_dir_all(&repo).unwrap();
    git(&repo, &["init", "-q", "-b", "main"]);
    git(
        &repo,
        &[
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "commit",
            "-q",
            "--allow-empty",
            "-m",
            "init",
        ],
    );
    let repo = std::fs::canonicalize(&repo).unwrap();
    let claude = home.path().join(".claude/projects/-work-app");
    std::fs::create_dir_all(&claude).unwrap();
    let line = json!({"type":"user","uuid":"u1","parentUuid":null,"sessionId":"s-app","cwd":repo,
        "timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"user","content":"hello"}});
    std::fs::write(claude.join("s-app.jsonl"), format!("{line}\n")).unwrap();
    let cairn = Cairn::open(data.path()).unwrap();
    cairn
        .set_source_dirs(
            Agent::Claude,
            vec![home.path().join(".claude/projects").display().to_string()],
        )
        .unwrap();
    let cairn = Cairn::open(data.path()).unwrap();
    let opts = SyncOptions {
        agents: vec![Agent::Claude, Agent::Aider, Agent::Crush],
    };
    let first = cairn.sync(&opts, &Quiet).unwrap();
    assert_eq!(first.sessions_added, 1);

    support::copy_into(
        &support::fixtures().join("aider/Aquaticat-Monochromatic/.aider.chat.history.md"),
        &repo,
        ".aider.chat.history.md",
    );
    copy_dir(
        &support::fixtures().join("crush/Starmel-OpenSuperWhisper/.crush"),
        &repo.join(".crush"),
    );
    let (files, warnings) = cairn.discover(&opts);
    assert!(warnings.is_empty(), "{warnings:?}");
    let agents: Vec<Agent> = files.iter().map(|f| f.agent).collect();
    assert_eq!(
        agents,
        vec![Agent::Claude, Agent::Aider, Agent::Crush],
        "{files:?}"
    );
    // Live capture watches the folder of each in-repository transcript, not the repository's
    // tree.
    let watched: Vec<discover::WatchDir> = cairn
        .watch_dirs()
        .into_iter()
        .filter(|d| !d.recursive)
        .collect();
    assert_eq!(
        watched,
        [
            discover::WatchDir {
                agent: Agent::Aider,
                path: repo.clone(),
                recursive: false
            },
            discover::WatchDir {
                agent: Agent::Crush,
                path: repo.join(".crush"),
                recursive: false
            },
        ]
    );
    let second = cairn.sync(&opts, &Quiet).unwrap();
    assert!(second.warnings.is_empty(), "{:?}", second.warnings);
    let found = counts(data.path());
    assert!(
        found[&Agent::Aider].0 >= 1 && found[&Agent::Crush].0 >= 1,
        "{found:?}"
    );

    // A history that points out of the repository is not read.
    let outside = home.path().join("secret.md");
    std::fs::write(&outside, "#### not this\n").unwrap();
    std::fs::remove_file(repo.join(".aider.chat.history.md")).unwrap();
    std::os::unix::fs::symlink(&outside, repo.join(".aider.chat.history.md")).unwrap();
    let (files, warnings) = cairn.discover(&opts);
    assert!(!files.iter().any(|f| f.agent == Agent::Aider), "{files:?}");
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(
        warnings[0].message.contains("outside the repository"),
        "{warnings:?}"
    );
}

/// The Aider history and the Crush database already in a repository are read by the sync that
/// first learns of the repository (a Claude session ran there), not left to the next: a first
/// sync is whole, and a second finds nothing new.
#[test]
fn the_first_sync_reads_the_repositories_it_learns_of() {
    let home = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let repo = home.path().join("work/app");
    std::fs::create_dir_all(&repo).unwrap();
    git(&repo, &["init", "-q", "-b", "main"]);
    let repo = std::fs::canonicalize(&repo).unwrap();
    support::copy_into(
        &support::fixtures().join("aider/Aquaticat-Monochromatic/.aider.chat.history.md"),
        &repo,
        ".aider.chat.history.md",
    );
    copy_dir(
        &support::fixtures().join("crush/Starmel-OpenSuperWhisper/.crush"),
        &repo.join(".crush"),
    );
    let claude = home.path().join(".claude/projects/-work-app");
    std::fs::create_dir_all(&claude).unwrap();
    let line = json!({"type":"user","uuid":"u1","parentUuid":null,"sessionId":"s-app","cwd":repo,
        "timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"user","content":"hello"}});
    std::fs::write(claude.join("s-app.jsonl"), format!("{line}\n")).unwrap();
    let cairn = Cairn::open(data.path()).unwrap();
    cairn
        .set_source_dirs(
            Agent::Claude,
            vec![home.path().join(".claude/projects").display().to_string()],
        )
        .unwrap();
    let cairn = Cairn::open(data.path()).unwrap();
    let opts = SyncOptions {
        agents: vec![Agent::Claude, Agent::Aider, Agent::Crush],
    };
    let first = cairn.sync(&opts, &Quiet).unwrap();
    assert_eq!(first.files_scanned, 3, "{first:?}");
    let found = counts(data.path());
    assert!(
        found[&Agent::Aider].0 >= 1 && found[&Agent::Crush].0 >= 1,
        "{found:?}"
    );
    let second = cairn.sync(&opts, &Quiet).unwrap();
    assert!(!second.changed(), "{second:?}");
    assert_eq!(counts(data.path()), found);
}

/// The watcher sees message and part files of OpenCode's storage tree change; each maps to the
/// session file that reads it, in the per-message and the flat layout. Files outside the tree's
/// shape, or naming a message or session that is not there, map to nothing.
#[test]
fn opencode_message_and_part_files_map_to_their_session() {
    let home = tempfile::tempdir().unwrap();
    let v2 = home.path().join("v2/storage");
    let legacy = home.path().join("legacy/storage");
    copy_dir(&support::fixtures().join("opencode/v2/storage"), &v2);
    copy_dir(
        &support::fixtures().join("opencode/legacy/storage"),
        &legacy,
    );
    let of = |p: PathBuf| discover::transcript_of_change(Agent::Opencode, &p).map(|f| f.path);
    let small = v2.join("session/proj_test/ses_s_stage0_small.json");
    let large = v2.join("session/proj_test/ses_s_stage0_large.json");
    let drift = legacy.join("session/proj_test/ses_s_stage0_drift.json");
    assert_eq!(
        of(small.clone()),
        Some(small.clone()),
        "a session file is itself"
    );
    assert_eq!(
        of(v2.join("message/s_stage0_small/msg_0002.json")),
        Some(small.clone())
    );
    assert_eq!(
        of(v2.join("part/m_user_small/001.json")),
        Some(small.clone())
    );
    assert_eq!(
        of(v2.join("part/m_assistant_large_1/008.json")),
        Some(large)
    );
    // The flat layout names the message inside the part.
    assert_eq!(of(legacy.join("part/prt_0001.json")), Some(drift));
    // A part of a message no session holds, a file beside the tree, a session id with a
    // separator, a part naming no message: nothing.
    std::fs::create_dir_all(v2.join("part/m_nobody")).unwrap();
    std::fs::write(v2.join("part/m_nobody/001.json"), "{}").unwrap();
    assert_eq!(of(v2.join("part/m_nobody/001.json")), None);
    assert_eq!(of(v2.join("migration")), None);
    std::fs::write(
        legacy.join("part/prt_odd.json"),
        r#"{"messageID": "../../x"}"#,
    )
    .unwrap();
    assert_eq!(of(legacy.join("part/prt_odd.json")), None);
    std::fs::write(legacy.join("part/prt_bad.json"), "not json").unwrap();
    assert_eq!(of(legacy.join("part/prt_bad.json")), None);
    assert_eq!(
        of(home.path().join("elsewhere/message/s_stage0_small/m.json")),
        None
    );
}

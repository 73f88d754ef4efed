//! Golden tests for the agents read after Claude Code and Codex, one test per agent over its
//! fixtures (`tests/fixtures/<agent>/`, see each SOURCES.md): sessions, turns, record kinds, tool
//! calls with Cairn's tool kinds, edited paths, models, tokens and unknown types are pinned in a
//! snapshot per agent. A mixed corpus of every agent syncs, re-syncs to nothing new and picks
//! up appends; a session links to the branch of its cwd's repository.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::{self, git};

use std::io::Write as _;
use std::path::Path;

use cairn_core::Cairn;
use cairn_core::archive::Agent;
use cairn_core::archive::capture::{Quiet, SyncReport};
use cairn_core::git::targets::Target;
use cairn_core::views::sessions::SessionQuery;
use cairn_core::views::skim::SkimQuery;
use serde_json::{Value, json};

/// The fixture folder of each agent this file covers, beside Claude's and Codex's.
const AGENTS: &[(Agent, &str)] = &[
    (Agent::Copilot, "copilot"),
    (Agent::Qwen, "qwen"),
    (Agent::Droid, "droid"),
    (Agent::Kimi, "kimi"),
    (Agent::Pi, "pi"),
    (Agent::Openclaw, "openclaw"),
    (Agent::Grok, "grok"),
    (Agent::Antigravity, "antigravity"),
    (Agent::Vibe, "vibe"),
    (Agent::Iflow, "iflow"),
    (Agent::Traex, "traex"),
    (Agent::Gptme, "gptme"),
    (Agent::Posit, "posit"),
];

/// Sync one agent's fixture folder into a new archive.
fn synced(agent: Agent, dir: &str) -> (tempfile::TempDir, Cairn, SyncReport) {
    let data = tempfile::tempdir().unwrap();
    let cairn = Cairn::open(data.path()).unwrap();
    let files = support::found(agent, &support::fixtures().join(dir));
    let report = cairn.capture_paths(&files, &Quiet).unwrap();
    (data, cairn, report)
}

/// Everything the golden snapshot pins for an archive (here and in Hermes's own test): each
/// session (with its sub-agents), its turns, and the warnings of the sync (file name and line).
pub(crate) fn pinned(data: &Path, cairn: &Cairn, report: &SyncReport) -> Value {
    let sessions = cairn.sessions(&SessionQuery::default()).unwrap();
    let mut all = Vec::new();
    for s in &sessions {
        let d = cairn.session(&s.session_key).unwrap();
        all.push(json!({
            "session_key": d.session_key, "agent": d.agent, "session_id": d.session_id, "title": d.title,
            "cwd": d.cwd, "git_branch": d.git_branch, "model": d.model, "tool_version": d.tool_version,
            "started_at": d.started_at, "updated_at": d.updated_at, "turns": d.turn_count,
            "records": d.record_count, "kinds": d.kinds, "tools": d.tools, "edited_paths": d.edited_paths,
            "tokens": d.tokens, "unknown_types": d.unknown_types, "subagents": d.subagents.len(),
            "first_prompt": s.first_prompt,
        }));
    }
    // The list's order (newest first), sessions of the same time by their key: the list breaks
    // such a tie by the order the sessions were stored in, which parallel reads do not fix.
    let newest = |v: &Value| v["updated_at"].as_str().map(str::to_owned);
    all.sort_by(|a, b| {
        (
            newest(a).is_none(),
            std::cmp::Reverse(newest(a)),
            a["session_key"].as_str(),
        )
            .cmp(&(
                newest(b).is_none(),
                std::cmp::Reverse(newest(b)),
                b["session_key"].as_str(),
            ))
    });
    let conn = rusqlite::Connection::open(data.join("cairn.db")).unwrap();
    let mut stmt = conn
        .prepare(
            "SELECT s.session_id, t.turn_index, t.record_count, t.tool_call_count, t.edit_count,
                    t.exec_count, t.failure_count, t.preview
             FROM turns t JOIN sessions s ON s.id = t.session_id
             ORDER BY s.session_id, s.session_key, t.turn_index",
        )
        .unwrap();
    let turns: Vec<String> = stmt
        .query_map([], |r| {
            Ok(format!(
                "{} #{} records={} tools={} edits={} execs={} failures={} {:?}",
                r.get::<_, Option<String>>(0)?.unwrap_or_default(),
                r.get::<_, i64>(1)?,
                r.get::<_, i64>(2)?,
                r.get::<_, i64>(3)?,
                r.get::<_, i64>(4)?,
                r.get::<_, i64>(5)?,
                r.get::<_, i64>(6)?,
                r.get::<_, Option<String>>(7)?
                    .map(|p| p.chars().take(60).collect::<String>()),
            ))
        })
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let mut tools: Vec<String> = conn
        .prepare(
            "SELECT r.kind, r.tool_name, r.tool_kind, r.outcome, r.file_paths
             FROM records r JOIN sessions s ON s.id = r.session_id
             WHERE r.kind IN ('tool_call', 'tool_result') ORDER BY s.session_id, s.session_key, r.ordinal",
        )
        .unwrap()
        .query_map([], |r| {
            Ok(format!(
                "{} {} {} {} {}",
                r.get::<_, String>(0)?,
                r.get::<_, Option<String>>(1)?.unwrap_or_default(),
                r.get::<_, Option<String>>(2)?.unwrap_or_default(),
                r.get::<_, Option<String>>(3)?.unwrap_or_default(),
                r.get::<_, Option<String>>(4)?.unwrap_or_default(),
            ))
        })
        .unwrap()
        .map(Result::unwrap)
        .collect();
    tools.dedup();
    let mut warnings: Vec<String> = report
        .warnings
        .iter()
        .map(|w| {
            format!(
                "{}:{:?} {}",
                w.path.rsplit('/').next().unwrap_or_default(),
                w.line,
                w.message
            )
        })
        .collect();
    warnings.sort();
    support::assert_ordinals_dense(data);
    json!({"sessions": all, "turns": turns, "tool_records": tools, "warnings": warnings})
}

#[test]
fn copilot_fixture_sessions_are_pinned() {
    let (data, cairn, report) = synced(Agent::Copilot, "copilot");
    assert_eq!(report.files_scanned, 2);
    insta::assert_json_snapshot!("copilot", pinned(data.path(), &cairn, &report));
}

#[test]
fn qwen_fixture_sessions_are_pinned() {
    let (data, cairn, report) = synced(Agent::Qwen, "qwen");
    assert_eq!(report.files_scanned, 1);
    insta::assert_json_snapshot!("qwen", pinned(data.path(), &cairn, &report));
}

#[test]
fn droid_fixture_sessions_are_pinned() {
    let (data, cairn, report) = synced(Agent::Droid, "droid");
    assert_eq!(report.files_scanned, 6);
    insta::assert_json_snapshot!("droid", pinned(data.path(), &cairn, &report));
}

#[test]
fn kimi_fixture_sessions_are_pinned() {
    let (data, cairn, report) = synced(Agent::Kimi, "kimi");
    // Kimi Code's three journals and kimi-cli's two.
    assert_eq!(report.files_scanned, 5);
    insta::assert_json_snapshot!("kimi", pinned(data.path(), &cairn, &report));
}

#[test]
fn pi_fixture_sessions_are_pinned() {
    let (data, cairn, report) = synced(Agent::Pi, "pi");
    assert_eq!(report.files_scanned, 2);
    insta::assert_json_snapshot!("pi", pinned(data.path(), &cairn, &report));
}

#[test]
fn openclaw_fixture_sessions_are_pinned() {
    let (data, cairn, report) = synced(Agent::Openclaw, "openclaw");
    assert_eq!(report.files_scanned, 3);
    insta::assert_json_snapshot!("openclaw", pinned(data.path(), &cairn, &report));
}

#[test]
fn grok_fixture_sessions_are_pinned() {
    let (data, cairn, report) = synced(Agent::Grok, "grok");
    // Two real sessions (a sub-agent's beside its parent's) and AgentsView's two formats; the
    // journals beside them are not sessions.
    assert_eq!(report.files_scanned, 4);
    insta::assert_json_snapshot!("grok", pinned(data.path(), &cairn, &report));
}

#[test]
fn antigravity_fixture_sessions_are_pinned() {
    let (data, cairn, report) = synced(Agent::Antigravity, "antigravity");
    assert_eq!(report.files_scanned, 2);
    insta::assert_json_snapshot!("antigravity", pinned(data.path(), &cairn, &report));
}

#[test]
fn vibe_fixture_sessions_are_pinned() {
    let (data, cairn, report) = synced(Agent::Vibe, "vibe");
    // The empty conversation is read and makes no session.
    assert_eq!(report.files_scanned, 3);
    insta::assert_json_snapshot!("vibe", pinned(data.path(), &cairn, &report));
}

#[test]
fn iflow_fixture_sessions_are_pinned() {
    let (data, cairn, report) = synced(Agent::Iflow, "iflow");
    assert_eq!(report.files_scanned, 1);
    insta::assert_json_snapshot!("iflow", pinned(data.path(), &cairn, &report));
}

/// TRAE CLI's rollouts are Codex's: read by Codex's parser, named TRAE CLI's sessions, a
/// sub-agent's spawn, wait and shell calls in Cairn's kinds.
#[test]
fn traex_fixture_sessions_are_pinned() {
    let (data, cairn, report) = synced(Agent::Traex, "traex");
    assert_eq!(report.files_scanned, 1);
    insta::assert_json_snapshot!("traex", pinned(data.path(), &cairn, &report));
}

/// gptme writes its local time without a zone: read as this machine's, so the snapshot pins the
/// times as UTC would read them and the test checks they are this machine's zone's reading.
#[test]
fn gptme_fixture_sessions_are_pinned() {
    let (data, cairn, report) = synced(Agent::Gptme, "gptme");
    assert_eq!(report.files_scanned, 1);
    let mut pinned = pinned(data.path(), &cairn, &report);
    let zone = jiff::tz::TimeZone::system();
    let local = |t: &str| {
        cairn_core::text::local_rfc3339(t, &zone)
            .unwrap()
            .into_owned()
    };
    let session = &mut pinned["sessions"][0];
    assert_eq!(session["started_at"], local("2026-06-13T10:00:00.000000"));
    assert_eq!(session["updated_at"], local("2026-06-13T10:00:13.000000"));
    session["started_at"] = json!("2026-06-13T10:00:00Z");
    session["updated_at"] = json!("2026-06-13T10:00:13Z");
    insta::assert_json_snapshot!("gptme", pinned);
}

/// Posit Assistant's conversations: the workspace's folder, the tree's title and branch, the
/// abandoned branch left out, the sub-agent run under its parent.
#[test]
fn posit_fixture_sessions_are_pinned() {
    let (data, cairn, report) = synced(Agent::Posit, "posit");
    assert_eq!(report.files_scanned, 3);
    insta::assert_json_snapshot!("posit", pinned(data.path(), &cairn, &report));
}

/// A sub-agent's rollout kept where its parent's is not (TRAE CLI's fixture is one) is listed,
/// counted and found by its id on its own, and goes under its parent once the parent is read.
#[test]
fn a_sub_agent_whose_parent_was_never_read_is_listed_until_it_is() {
    let src = tempfile::tempdir().unwrap();
    copy_dir(&support::fixtures().join("traex"), src.path());
    let data = tempfile::tempdir().unwrap();
    let cairn = Cairn::open(data.path()).unwrap();
    support::capture(&cairn, &support::found(Agent::Traex, src.path()));
    let child = "019fbcca-9fd4-7d20-83dc-0762b2f839b3";
    let listed = cairn.sessions(&SessionQuery::default()).unwrap();
    assert_eq!(
        listed
            .iter()
            .map(|s| s.session_id.as_deref())
            .collect::<Vec<_>>(),
        [Some(child)]
    );
    let counts = cairn.agent_counts().unwrap();
    assert_eq!(
        counts
            .iter()
            .map(|c| (c.agent, c.sessions))
            .collect::<Vec<_>>(),
        [(Agent::Traex, 1)]
    );
    assert_eq!(
        cairn.session(child).unwrap().session_id.as_deref(),
        Some(child)
    );

    let now = "2026-08-01T18:00:00.000Z";
    let parent = "019fbc4a-48b9-7472-a0da-6d92901383db";
    let lines = [
        json!({"timestamp":now,"type":"session_meta","payload":{"id":parent,"timestamp":now,"cwd":"/home/user/code/api","cli_version":"0.200.19"}}),
        json!({"timestamp":now,"type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"map the parser"}]}}),
    ];
    let path = src.path().join(format!(
        "sessions/2026/08/01/rollout-2026-08-01T18-00-00-{parent}.jsonl"
    ));
    std::fs::write(&path, lines.map(|l| format!("{l}\n")).concat()).unwrap();
    support::capture(&cairn, &support::found(Agent::Traex, src.path()));
    let listed = cairn.sessions(&SessionQuery::default()).unwrap();
    assert_eq!(
        listed
            .iter()
            .map(|s| (s.session_id.as_deref(), s.subagent_count))
            .collect::<Vec<_>>(),
        [(Some(parent), 1)]
    );
    assert_eq!(cairn.agent_counts().unwrap()[0].sessions, 1);
    assert_eq!(cairn.session(parent).unwrap().subagents.len(), 1);
}

/// Every fixture of every agent in one archive: a second sync adds nothing, and a line
/// appended to each agent's transcript is picked up as exactly its new records.
#[test]
fn a_mixed_corpus_syncs_resyncs_to_nothing_and_picks_up_appends() {
    let src = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let cairn = Cairn::open(data.path()).unwrap();
    // Gemini CLI and Cursor have golden tests of their own (`archive_gemini.rs`,
    // `archive_cursor.rs`); here they join the corpus.
    let all: Vec<(Agent, &str)> = [(Agent::Claude, "claude"), (Agent::Codex, "codex")]
        .into_iter()
        .chain(AGENTS.iter().copied())
        .chain([(Agent::Gemini, "gemini"), (Agent::Cursor, "cursor")])
        .collect();
    let mut files = Vec::new();
    for (agent, dir) in &all {
        copy_dir(&support::fixtures().join(dir), &src.path().join(dir));
        files.extend(support::found(*agent, &src.path().join(dir)));
    }
    let first = support::capture(&cairn, &files);
    assert!(first.records_added > 0);
    let agents: std::collections::BTreeSet<Agent> = cairn
        .sessions(&SessionQuery::default())
        .unwrap()
        .iter()
        .map(|s| s.agent)
        .collect();
    assert_eq!(agents.len(), all.len(), "{agents:?}");

    let before = support::dump(data.path());
    let again = support::capture(&cairn, &files);
    assert_eq!(
        (
            again.records_added,
            again.records_updated,
            again.sessions_added,
            again.sessions_updated
        ),
        (0, 0, 0, 0)
    );
    assert_eq!(support::dump(data.path()), before);

    let mut appended = 0;
    for (agent, line) in appended_lines() {
        let file = files
            .iter()
            .find(|f| f.agent == agent)
            .expect("a file of the agent");
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(&file.path)
            .unwrap();
        writeln!(f, "{line}").unwrap();
        appended += 1;
    }
    let third = support::capture(&cairn, &files);
    assert_eq!(third.records_added, appended);
    assert_eq!(third.sessions_added, 0);
    support::assert_ordinals_dense(data.path());
}

/// One line per agent that makes exactly one record.
fn appended_lines() -> Vec<(Agent, String)> {
    AGENTS
        .iter()
        .map(|(agent, _)| (*agent, prompt_line(*agent, "one more thing").to_string()))
        .collect()
}

/// A line in `agent`'s format holding a person's prompt `text` (one record).
fn prompt_line(agent: Agent, text: &str) -> Value {
    match agent {
        Agent::Copilot => {
            json!({"type":"user.message","data":{"content":text},"id":"e-new","timestamp":"2026-03-26T18:00:00.000Z"})
        }
        Agent::Qwen => {
            json!({"uuid":"u-new","sessionId":"q-new","timestamp":"2026-08-17T13:00:00.000Z","type":"user","cwd":"/tmp/q","message":{"role":"user","parts":[{"text":text}]}})
        }
        Agent::Droid => {
            json!({"type":"message","id":"m-new","timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"user","content":[{"type":"text","text":text}]}})
        }
        Agent::Kimi => {
            json!({"type":"turn.prompt","input":[{"type":"text","text":text}],"origin":{"kind":"user"},"time":1785613809972_i64})
        }
        Agent::Pi | Agent::Openclaw => {
            json!({"type":"message","id":"n-new","parentId":null,"timestamp":"2026-06-01T00:00:00.000Z","message":{"role":"user","content":[{"type":"text","text":text}]}})
        }
        Agent::Grok => json!({"type":"user","content":[{"type":"text","text":text}]}),
        Agent::Vibe => json!({"role":"user","content":text,"message_id":"msg_new"}),
        Agent::Iflow => {
            json!({"uuid":"u-new","parentUuid":null,"sessionId":"session-new","timestamp":"2026-01-21T07:00:00.000Z","type":"user","message":{"role":"user","content":text}})
        }
        Agent::Gptme => {
            json!({"role":"user","content":text,"timestamp":"2026-06-13T11:00:00.000000"})
        }
        Agent::Posit => {
            json!({"id":90,"message":{"role":"user","content":text,"providerOptions":{"providerMetadata":{"positai":{"timestamp":1735690000000_i64}}}}})
        }
        Agent::Traex => {
            json!({"timestamp":"2026-08-01T19:00:00.000Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":text}]}})
        }
        Agent::Antigravity => {
            json!({"step_index":90,"source":"USER_EXPLICIT","type":"USER_INPUT","status":"DONE","created_at":"2026-06-26T22:00:00Z","content":format!("<USER_REQUEST>\n{text}\n</USER_REQUEST>")})
        }
        other => unreachable!("no prompt line for {other}"),
    }
}

/// Each parser meets control sequences, a 2 MB prompt, wrong types, JSON nested 100,000 deep
/// and a half-written last line: the capture never fails, keeps every good line, caps the
/// huge one, and reads the half-written line once it is complete.
#[test]
fn hostile_lines_are_warnings_or_stored_never_fatal() {
    for (agent, _) in AGENTS {
        let agent = *agent;
        let src = tempfile::tempdir().unwrap();
        let data = tempfile::tempdir().unwrap();
        let path = src.path().join("hostile.jsonl");
        let huge = "y".repeat(2 << 20);
        let mut lines: Vec<String> = branch_sessions(Path::new("/tmp/hostile"))
            .into_iter()
            .find(|(a, _, _)| *a == agent)
            .map(|(_, _, lines)| lines.iter().map(Value::to_string).collect())
            .unwrap();
        lines.extend([
            prompt_line(agent, "esc \u{1b}[2J\u{1b}]0;title\u{7} bidi \u{202e}evil").to_string(),
            json!({"type": ["wrong"], "data": 5, "message": "x", "payload": null, "timestamp": 7})
                .to_string(),
            json!({"type": "user", "data": [1, {"content": {"deep": true}}], "message": [null]})
                .to_string(),
            format!(
                "{{\"type\":{}{}}}",
                "[".repeat(100_000),
                "]".repeat(100_000)
            ),
            prompt_line(agent, &huge).to_string(),
            prompt_line(agent, "last").to_string(),
        ]);
        let half = prompt_line(agent, "half done").to_string();
        let (head, tail) = half.split_at(half.len() / 2);
        std::fs::write(&path, lines.join("\n") + "\n" + head).unwrap();
        let cairn = Cairn::open(data.path()).unwrap();
        let file = support::main_file(agent, &path);
        support::capture(&cairn, std::slice::from_ref(&file));
        let stored = texts(data.path());
        assert!(
            stored.iter().any(|t| t.starts_with("esc \u{1b}[2J")),
            "{agent}: {stored:?}"
        );
        assert!(stored.iter().any(|t| t == "last"), "{agent}: {stored:?}");
        let big = stored
            .iter()
            .find(|t| t.starts_with("yyyy"))
            .expect("the huge prompt");
        assert!(
            big.len() < huge.len() / 4,
            "{agent}: the huge prompt is not capped"
        );
        assert!(
            !stored.iter().any(|t| t.contains("half")),
            "{agent}: a half line was read"
        );
        std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap()
            .write_all(format!("{tail}\n").as_bytes())
            .unwrap();
        let again = support::capture(&cairn, std::slice::from_ref(&file));
        assert_eq!(again.records_added, 1, "{agent}");
        assert!(
            texts(data.path()).iter().any(|t| t == "half done"),
            "{agent}"
        );
    }
}

fn texts(data: &Path) -> Vec<String> {
    let conn = rusqlite::Connection::open(data.join("cairn.db")).unwrap();
    let mut stmt = conn
        .prepare("SELECT coalesce(text, '') FROM records ORDER BY line_no, block")
        .unwrap();
    stmt.query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

fn copy_dir(from: &Path, to: &Path) {
    for entry in walkdir::WalkDir::new(from) {
        let entry = entry.unwrap();
        let rel = entry.path().strip_prefix(from).unwrap();
        let dest = to.join(rel);
        if entry.file_type().is_dir() {
            std::fs::create_dir_all(&dest).unwrap();
        } else {
            std::fs::copy(entry.path(), &dest).unwrap();
        }
    }
}

/// The agents whose transcripts name no working directory: their sessions link to no branch.
const NO_CWD: &[Agent] = &[Agent::Antigravity];

/// A session of each agent, synced (not hooked), is found on the branch its transcript names
/// in the repository of its cwd.
#[test]
fn sessions_link_to_the_branch_of_their_cwd() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    git(&repo, &["init", "-q", "-b", "main"]);
    std::fs::write(repo.join("README"), "hi\n").unwrap();
    git(&repo, &["add", "README"]);
    git(&repo, &["commit", "-q", "-m", "init"]);
    git(&repo, &["checkout", "-q", "-b", "feat/agents"]);
    let repo = std::fs::canonicalize(&repo).unwrap();
    let data = tmp.path().join("data");
    let cairn = Cairn::open(&data).unwrap();
    for (agent, file, lines) in branch_sessions(&repo) {
        if NO_CWD.contains(&agent) {
            continue;
        }
        let folder = tmp.path().join(agent.as_str());
        let path = folder.join(file);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
        std::fs::write(&path, text).unwrap();
        for (name, value) in sidecars(agent, &repo) {
            std::fs::write(path.with_file_name(name), value).unwrap();
        }
        support::capture(&cairn, &support::found(agent, &folder));
        let skim = cairn
            .skim(&SkimQuery {
                target: Target::branch("feat/agents"),
                include_weak: true,
                limit: None,
                repo_root: None,
                unplaced: false,
                project: None,
                published_in: None,
                agent: None,
            })
            .unwrap();
        assert!(
            skim.sessions.iter().any(|s| s.agent == agent),
            "{agent}: {:?}",
            skim.sessions
        );
    }
}

/// The files an agent keeps beside a session of [`branch_sessions`] that name its folder.
fn sidecars(agent: Agent, cwd: &Path) -> Vec<(&'static str, String)> {
    match agent {
        // Its messages carry no times; the metadata says when the session ran (just now).
        Agent::Vibe => {
            let now = jiff::Timestamp::now().to_string();
            vec![(
                "meta.json",
                json!({"session_id": "vb-branch", "environment": {"working_directory": cwd},
                       "start_time": now, "end_time": now})
                .to_string(),
            )]
        }
        // Its lines carry no times either; the summary beside them does.
        Agent::Grok => {
            let now = jiff::Timestamp::now().to_string();
            vec![(
                "summary.json",
                json!({"created_at": now, "updated_at": now}).to_string(),
            )]
        }
        Agent::Posit => vec![("../workspace.json", json!({"path": cwd}).to_string())],
        Agent::Gptme => vec![(
            "config.toml",
            format!("[chat]\nworkspace = \"{}\"\n", cwd.display()),
        )],
        _ => Vec::new(),
    }
}

/// A short session per agent in `cwd` on `feat/agents`, and where in its source dir it lives.
fn branch_sessions(cwd: &Path) -> Vec<(Agent, &'static str, Vec<Value>)> {
    // Every record written just now: a capture tells what a session ran on only while it runs.
    let now_ms = jiff::Timestamp::now().as_millisecond();
    let now = jiff::Timestamp::now()
        .strftime("%Y-%m-%dT%H:%M:%S%.3fZ")
        .to_string();
    vec![
        (
            Agent::Copilot,
            "s.jsonl",
            vec![
                json!({"type":"session.start","data":{"sessionId":"cp-branch","context":{"cwd":cwd,"branch":"feat/agents"}},"timestamp":now}),
                json!({"type":"user.message","data":{"content":"look around"},"timestamp":now}),
                json!({"type":"assistant.message","data":{"messageId":"m1","content":"Looked."},"timestamp":now}),
            ],
        ),
        (
            Agent::Qwen,
            "s.jsonl",
            vec![
                json!({"uuid":"q1","sessionId":"qw-branch","timestamp":now,"type":"user","cwd":cwd,"gitBranch":"feat/agents","message":{"role":"user","parts":[{"text":"look around"}]}}),
                json!({"uuid":"q2","sessionId":"qw-branch","timestamp":now,"type":"assistant","cwd":cwd,"gitBranch":"feat/agents","message":{"role":"model","parts":[{"text":"Looked."}]}}),
            ],
        ),
        (
            Agent::Droid,
            "s.jsonl",
            vec![
                json!({"type":"session_start","id":"dr-branch","cwd":cwd,"version":"0.81.0"}),
                json!({"type":"message","id":"m1","timestamp":now,"message":{"role":"user","content":[{"type":"text","text":"look around"}]}}),
            ],
        ),
        (
            Agent::Kimi,
            "session_kb/agents/main/wire.jsonl",
            vec![
                json!({"type":"config.update","cwd":cwd,"modelAlias":"kimi-k2","time":now_ms}),
                json!({"type":"turn.prompt","input":[{"type":"text","text":"look around"}],"origin":{"kind":"user"},"time":now_ms + 1}),
            ],
        ),
        (
            Agent::Pi,
            "--tmp--/2026-06-01T00-00-00-000Z_pi-branch.jsonl",
            vec![
                json!({"type":"session","version":3,"id":"pi-branch","timestamp":now,"cwd":cwd}),
                json!({"type":"message","id":"e1","parentId":null,"timestamp":now,"message":{"role":"user","content":[{"type":"text","text":"look around"}]}}),
            ],
        ),
        (
            Agent::Openclaw,
            "main/sessions/oc-branch.jsonl",
            vec![
                json!({"type":"session","version":3,"id":"oc-branch","timestamp":now,"cwd":cwd}),
                json!({"type":"message","id":"e1","parentId":"oc-branch","timestamp":now,"message":{"role":"user","content":[{"type":"text","text":"look around"}]}}),
            ],
        ),
        // Antigravity's transcript names no folder: it is here for the hostile lines, and
        // links to no branch (see `NO_CWD`).
        (
            Agent::Antigravity,
            "c-branch/.system_generated/logs/transcript.jsonl",
            vec![
                json!({"step_index":0,"source":"USER_EXPLICIT","type":"USER_INPUT","status":"DONE","created_at":now,"content":"<USER_REQUEST>\nlook around\n</USER_REQUEST>"}),
            ],
        ),
        (
            Agent::Iflow,
            "-repo/session-if-branch.jsonl",
            vec![
                json!({"uuid":"u1","parentUuid":null,"sessionId":"session-if-branch","timestamp":now,"type":"user","cwd":cwd,"message":{"role":"user","content":"look around"}}),
            ],
        ),
        (
            Agent::Traex,
            "2026/08/01/rollout-2026-08-01T00-00-00-tx-branch.jsonl",
            vec![
                json!({"timestamp":now,"type":"session_meta","payload":{"id":"tx-branch","timestamp":now,"cwd":cwd,"originator":"codex-tui","cli_version":"0.200.19"}}),
                json!({"timestamp":now,"type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"look around"}]}}),
            ],
        ),
        // gptme's folder is in the settings beside its conversation; its times have no zone.
        (
            Agent::Gptme,
            "2026-06-13-branch/conversation.jsonl",
            vec![
                json!({"role":"user","content":"look around","timestamp":jiff::Timestamp::now().strftime("%Y-%m-%dT%H:%M:%S%.6f").to_string()}),
            ],
        ),
        // Posit Assistant's folder is its workspace's, described above the conversation.
        (
            Agent::Posit,
            "ws/c-branch/lm-messages.jsonl",
            vec![
                json!({"id":0,"message":{"role":"user","content":"look around","providerOptions":{"providerMetadata":{"positai":{"timestamp":jiff::Timestamp::now().as_millisecond()}}}}}),
            ],
        ),
        // Vibe's folder is described by the metadata beside it.
        (
            Agent::Vibe,
            "session_1/messages.jsonl",
            vec![json!({"role":"user","content":"look around","message_id":"m1"})],
        ),
        // Grok's lines carry no cwd but in the environment it writes first.
        (
            Agent::Grok,
            "%2Frepo/gk-branch/chat_history.jsonl",
            vec![
                json!({"type":"user","content":[{"type":"text","text":format!("<user_info>\nWorkspace Path: {}\n</user_info>", cwd.display())}],"synthetic_reason":"environment_context"}),
                json!({"type":"user","content":[{"type":"text","text":"look around"}],"prompt_index":0}),
            ],
        ),
    ]
}

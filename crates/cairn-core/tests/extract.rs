//! Recall extraction end to end against an OpenAI-compatible server on loopback, started by the
//! test itself (`tests/support/fake_llm.rs`): request shape and bearer key, entries and their
//! evidence, generations and the commit guard, split recovery, the retry ladder, refused
//! redirects, the transport policy, and what may leave the machine.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::fake_llm;
use crate::support;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

use cairn_core::Cairn;
use cairn_core::archive::Agent;
use cairn_core::llm::{ChatMessage, ChatRequest, Client, LlmError, Outbound, RetryPolicy, Scope};
use cairn_core::recall::extract::segment::{self, Message, Role};
use cairn_core::recall::extract::{
    Event, ExtractProgress, GenState, RunOptions, Scope as RunScope,
};
use cairn_core::recall::model::{ReviewState, Status};
use cairn_core::recall::store::Filters;
use fake_llm::{FakeLlm, Reply};
use serde_json::{Value, json};

/// The key the server expects: cargo sets this variable for every test it runs, and the
/// workspace forbids the `unsafe` that setting a variable of our own would take.
fn key() -> String {
    std::env::var("CARGO_PKG_NAME").expect("run through cargo test (it sets CARGO_PKG_NAME)")
}

struct Env {
    dir: tempfile::TempDir,
}

impl Env {
    fn new() -> Env {
        Env {
            dir: tempfile::tempdir().unwrap(),
        }
    }
    fn data(&self) -> PathBuf {
        self.dir.path().join("data")
    }
    /// Write `config.toml` for the server at `url`, with `extra` lines under [recall.extract].
    fn config(&self, url: &str, extra: &str) {
        std::fs::create_dir_all(self.data()).unwrap();
        std::fs::write(
            self.data().join("config.toml"),
            format!(
                "[recall.extract]\nenabled = true\nmodel = \"test-model\"\n{extra}\n\
                 [recall.extract.servers.local]\nendpoint = \"{url}\"\napi_key_env = \"CARGO_PKG_NAME\"\ntimeout = \"20s\"\n"
            ),
        )
        .unwrap();
    }
    fn open(&self) -> Cairn {
        Cairn::open(self.data()).unwrap()
    }
    /// Write a Claude transcript and capture it.
    fn session(&self, cairn: &Cairn, sid: &str, lines: &[String]) -> PathBuf {
        let path = self.dir.path().join("src").join(format!("{sid}.jsonl"));
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, lines.join("\n") + "\n").unwrap();
        support::capture(cairn, &[support::main_file(Agent::Claude, &path)]);
        path
    }
}

/// A synthetic Claude transcript: per turn, a prompt, then assistant texts, then optionally a
/// Bash call and its output.
struct Transcript {
    sid: String,
    cwd: String,
    n: usize,
    lines: Vec<String>,
}

impl Transcript {
    fn new(sid: &str, cwd: &str) -> Transcript {
        Transcript {
            sid: sid.into(),
            cwd: cwd.into(),
            n: 0,
            lines: Vec::new(),
        }
    }
    fn line(&mut self, extra: Value) -> &mut Self {
        self.n += 1;
        let mut v = json!({"sessionId": self.sid, "cwd": self.cwd, "gitBranch": "main",
            "timestamp": format!("2026-03-01T10:{:02}:{:02}.000Z", self.n / 60, self.n % 60),
            "uuid": format!("{}-u{}", self.sid, self.n)});
        v.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        self.lines.push(v.to_string());
        self
    }
    fn user(&mut self, text: &str) -> &mut Self {
        self.line(json!({"type": "user", "message": {"role": "user", "content": text}}))
    }
    fn assistant(&mut self, text: &str) -> &mut Self {
        let id = format!("msg_{}_{}", self.sid, self.n);
        self.line(json!({"type": "assistant", "message": {"id": id, "role": "assistant", "model": "claude-x",
            "content": [{"type": "text", "text": text}]}}))
    }
    /// A line Claude Code writes for the model's context, not typed by anyone (`isMeta`):
    /// stored as a system-injected prompt, which a model is not shown.
    fn meta(&mut self, text: &str) -> &mut Self {
        self.line(
            json!({"type": "user", "isMeta": true, "message": {"role": "user", "content": text}}),
        )
    }
    /// The model's reasoning: stored, not shown to the extraction model.
    fn thinking(&mut self, text: &str) -> &mut Self {
        let id = format!("msg_{}_{}", self.sid, self.n);
        self.line(json!({"type": "assistant", "message": {"id": id, "role": "assistant", "model": "claude-x",
            "content": [{"type": "thinking", "thinking": text, "signature": "c2ln"}]}}))
    }
    fn bash(&mut self, command: &str, output: &str) -> &mut Self {
        let id = format!("toolu_{}_{}", self.sid, self.n);
        let msg = format!("msg_{}_{}", self.sid, self.n);
        self.line(json!({"type": "assistant", "message": {"id": msg, "role": "assistant", "model": "claude-x",
            "content": [{"type": "tool_use", "id": id, "name": "Bash", "input": {"command": command}}]}}));
        self.line(
            json!({"type": "user", "message": {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": id, "content": output}]}}),
        )
    }
}

fn two_sessions(env: &Env, cairn: &Cairn) {
    let mut a = Transcript::new("sess-a", "/work/proj");
    a.user("Please fix the flaky login test in tests/login.rs")
        .assistant("Looking at tests/login.rs first.")
        .bash(
            "cargo test login",
            "test login ... FAILED: timeout after 5s",
        )
        .assistant("The timeout was too short; raised it to 30s and the test passes.")
        .user("Now document the change in CHANGELOG.md")
        .assistant("Added a line under Unreleased.");
    env.session(cairn, "sess-a", &a.lines);
    let mut b = Transcript::new("sess-b", "/work/proj");
    b.user("Which port does the dev server use?")
        .bash("grep -rn PORT config/dev.toml", "PORT = 4173")
        .assistant("It listens on 4173, set in config/dev.toml.");
    env.session(cairn, "sess-b", &b.lines);
}

#[derive(Default)]
struct Events(Mutex<Vec<Event>>);
impl ExtractProgress for Events {
    fn event(&self, e: &Event) {
        self.0.lock().unwrap().push(e.clone());
    }
}

fn run(cairn: &Cairn) -> cairn_core::recall::extract::RunReport {
    cairn
        .recall_extract_run(&RunOptions::default(), &cairn_core::recall::extract::Silent)
        .unwrap()
}

fn machine_entries(cairn: &Cairn, status: Status) -> Vec<cairn_core::recall::model::Entry> {
    cairn
        .recall_list(&Filters {
            status: Some(status),
            review_state: Some(ReviewState::UnreviewedAuto),
            limit: Some(500),
            ..Default::default()
        })
        .unwrap()
}

// ---- segmentation -------------------------------------------------------------------------------

#[test]
fn turns_v1_matches_the_golden_cases() {
    let path = support::fixtures().join("agentsview/recall/turnsv1_golden.json");
    let golden: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let cases = golden.as_object().unwrap();
    assert!(cases.len() >= 5);
    for (name, case) in cases {
        let messages: Vec<Message> = case["messages"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| Message {
                ordinal: m["ordinal"].as_u64().unwrap() as u32,
                role: if m["role"] == "user" {
                    Role::User
                } else {
                    Role::Assistant
                },
                label: "ASSISTANT".into(),
                content: m["content"].as_str().unwrap().into(),
                hidden: m["is_system"].as_i64() == Some(1)
                    || !matches!(m["role"].as_str(), Some("user" | "assistant")),
            })
            .collect();
        let max = case["max_window_chars"].as_u64().unwrap() as usize;
        let got: Vec<Value> = segment::segment(&messages, max)
            .iter()
            .map(|u| {
                json!({"kind": u.kind.as_str(), "text": u.text, "ordinal_start": u.start, "ordinal_end": u.end})
            })
            .collect();
        assert_eq!(Value::Array(got), case["units"], "golden case {name}");
    }
}

// ---- end to end ---------------------------------------------------------------------------------

#[test]
fn a_pass_writes_unreviewed_entries_with_precise_evidence() {
    let fake = FakeLlm::start(Some(&key()));
    let env = Env::new();
    env.config(&fake.url(), "");
    let cairn = env.open();
    two_sessions(&env, &cairn);
    let events = Events::default();
    let report = cairn
        .recall_extract_run(&RunOptions::default(), &events)
        .unwrap();
    assert_eq!(fake.violations(), Vec::<String>::new());
    let chats = fake.chats();
    // sess-a: intent, action, intent, action; sess-b: intent, action.
    assert_eq!((report.sessions, report.failed, report.units), (2, 0, 6));
    assert_eq!(chats.len(), 6);
    assert_eq!(report.entries, 6);
    assert!(report.activated, "a complete first generation activates");
    assert_eq!(report.usage.prompt_tokens, 6 * 11);
    for c in &chats {
        let v = c.json();
        assert_eq!(v["model"], "test-model");
        assert_eq!(v["temperature"], 0.0);
        assert_eq!(v["max_tokens"], 4096);
        assert_eq!(
            v["response_format"]["json_schema"]["name"],
            "recall_entries"
        );
        assert_eq!(
            c.header("authorization").unwrap(),
            format!("Bearer {}", key())
        );
    }
    // Action units see the request they answered, as context only.
    let action = chats
        .iter()
        .find(|c| {
            c.user().contains("[3] TOOL RESULT (failed)") || c.user().contains("[2] TOOL CALL Bash")
        })
        .expect("the action unit of the first turn");
    assert!(action.user().starts_with("CONTEXT"), "{}", action.user());

    let status = cairn.recall_extract_status().unwrap();
    let fp = status.fingerprint.clone().unwrap();
    assert_eq!(status.state, Some(GenState::Active));
    assert_eq!((status.sessions_done, status.not_started), (2, 0));
    let entries = machine_entries(&cairn, Status::Accepted);
    assert_eq!(entries.len(), 6);
    let mut narrowed = 0;
    for e in &entries {
        assert_eq!(e.review_state, ReviewState::UnreviewedAuto);
        assert!(!e.transferable && e.provenance_ok && !e.is_trusted());
        assert_eq!(e.source_run_id, fp);
        assert_eq!(e.extractor_method, "turns-v1");
        assert_eq!(e.model, "test-model");
        assert_eq!(e.confidence, Some(0.75));
        assert!(
            e.trigger.starts_with("when revisiting record"),
            "{}",
            e.trigger
        );
        assert!(e.body.contains("Entities: record-"), "{}", e.body);
        assert_eq!(e.project, "proj");
        assert_eq!(e.evidence.len(), 1);
        let ev = &e.evidence[0];
        assert!(ev.content_digest.starts_with("sha256:") && !ev.start_record.is_empty());
        // The fake cites only the unit's first record: the evidence is that record alone.
        let first: u32 = e.title["Records ".len()..]
            .split('-')
            .next()
            .unwrap()
            .parse()
            .unwrap();
        assert_eq!(
            (ev.ordinal_start, ev.ordinal_end),
            (first, first),
            "{}",
            e.title
        );
        let (_, unit_end) = e
            .source_episode_id
            .split_once(':')
            .unwrap()
            .1
            .split_once('-')
            .unwrap();
        if unit_end.parse::<u32>().unwrap() > first {
            narrowed += 1;
        }
        assert!(!ev.snippet.is_empty());
    }
    assert!(
        narrowed >= 2,
        "evidence is narrower than the unit for multi-record units"
    );

    let ev = events.0.lock().unwrap();
    assert!(matches!(
        ev.first(),
        Some(Event::PassStarted { sessions: 2, .. })
    ));
    assert_eq!(
        ev.iter()
            .filter(|e| matches!(e, Event::UnitDone { .. }))
            .count(),
        6
    );
    assert_eq!(
        ev.iter()
            .filter(|e| matches!(e, Event::SessionDone { .. }))
            .count(),
        2
    );
    assert!(matches!(ev.last(), Some(Event::Activated { .. })));
    drop(ev);

    // Nothing left to do: a second pass sends nothing.
    fake.clear();
    let again = run(&cairn);
    assert_eq!((again.units, again.entries), (0, 0));
    assert!(fake.chats().is_empty());
}

/// Words hashed into 32 dimensions: enough for "the entries have vectors and hybrid uses them",
/// without loading the model.
struct Words;

impl cairn_core::semantic::embed::Embedder for Words {
    fn fingerprint(&self) -> &str {
        "words/test"
    }
    fn dims(&self) -> usize {
        32
    }
    fn embed(
        &self,
        texts: &[&str],
        _kind: cairn_core::semantic::embed::InputKind,
    ) -> cairn_core::Result<Vec<f32>> {
        Ok(crate::support::hashed_words(texts, 32))
    }
    fn refresh_on_write(&self) -> bool {
        true
    }
    fn describe(&self) -> String {
        "words".into()
    }
}

#[test]
fn a_pass_embeds_what_it_wrote_so_hybrid_serves_it_at_once() {
    let fake = FakeLlm::start(Some(&key()));
    let env = Env::new();
    env.config(&fake.url(), "");
    let cairn = env.open();
    cairn.set_embedder(std::sync::Arc::new(Words));
    two_sessions(&env, &cairn);
    assert!(run(&cairn).entries > 0);
    let recall = &cairn.embeddings_status().unwrap().stores[0];
    assert!(recall.fresh && recall.pending == Some(0), "{recall:?}");
    let entry = &machine_entries(&cairn, Status::Accepted)[0];
    let req = cairn_core::recall::QueryRequest {
        text: entry.title.clone(),
        mode: cairn_core::recall::Mode::Hybrid,
        ..Default::default()
    };
    let found = cairn
        .recall_query(&req, cairn_core::recall::model::Surface::Query)
        .unwrap();
    assert!(
        found
            .results
            .iter()
            .any(|r| r.entry.id == entry.id && r.match_reasons.contains(&"semantic".to_owned())),
        "{:?}",
        found.results
    );
}

/// A hybrid query with `filters`, checked: it answers (never "vectors stale"), and each semantic
/// score is the cosine of the entry's text as returned (no stale vector was scored). Returns the
/// response.
fn checked_query(
    cairn: &Cairn,
    text: &str,
    status: Option<Status>,
) -> cairn_core::recall::QueryResponse {
    use cairn_core::semantic::embed::{Embedder, InputKind};
    let req = cairn_core::recall::QueryRequest {
        text: text.into(),
        mode: cairn_core::recall::Mode::Hybrid,
        filters: Filters {
            status,
            limit: Some(100),
            ..Default::default()
        },
        ..Default::default()
    };
    let resp = cairn
        .recall_query(&req, cairn_core::recall::model::Surface::Query)
        .unwrap_or_else(|e| panic!("a query during a pass failed: {e}"));
    let q = Words.embed(&[text], InputKind::Query).unwrap();
    for r in &resp.results {
        let Some(cos) = r.breakdown.semantic else {
            continue;
        };
        let doc = cairn_core::semantic::vectors::recall_doc(
            &r.entry.title,
            &r.entry.body,
            &r.entry.trigger,
        );
        let d = Words.embed(&[doc.as_str()], InputKind::Document).unwrap();
        let want = cairn_core::semantic::vectors::dot(&d, &q);
        assert!(
            (f64::from(want) - cos).abs() < 1e-4,
            "entry {} scored {cos} by a vector of other text (its text now scores {want})",
            r.entry.id
        );
    }
    resp
}

/// The longest a test waits for the vector refresher before calling it stuck (not a timing claim).
const STUCK: Duration = Duration::from_secs(60);

/// A pass embeds each unit's entries as it goes, off its own path: by the time the next unit is
/// asked for, every entry written so far has a vector and a query scores it, with nothing
/// pending. Meanwhile a reader queries without pause and an entry is edited: no query fails and
/// none scores a stale vector; the pass ends with the vectors complete.
#[test]
fn a_pass_embeds_as_it_goes_while_readers_query_and_an_edit_lands() {
    use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
    let fake = FakeLlm::start(Some(&key()));
    let env = Env::new();
    env.config(&fake.url(), "concurrency = 1");
    let cairn = env.open();
    cairn.set_embedder(std::sync::Arc::new(Words));
    two_sessions(&env, &cairn);
    assert_eq!(run(&cairn).entries, 6);
    let accepted = machine_entries(&cairn, Status::Accepted);
    for (sid, topic) in [
        ("sess-c", "database migrations"),
        ("sess-d", "release notes"),
    ] {
        let mut t = Transcript::new(sid, "/work/proj");
        t.user(&format!("Sort out the {topic} before Friday"))
            .assistant(&format!("Reading the {topic} first."))
            .bash("ls docs", "migrations.md release.md")
            .assistant(&format!("The {topic} are done."))
            .user("Thanks, now run the tests")
            .assistant("All tests pass.");
        env.session(&cairn, sid, &t.lines);
    }

    struct MidPass<'a> {
        cairn: &'a Cairn,
        edit: &'a str,
        units: AtomicU32,
    }
    impl ExtractProgress for MidPass<'_> {
        fn event(&self, e: &Event) {
            let Event::UnitDone { .. } = e else {
                return;
            };
            if self.units.fetch_add(1, Ordering::SeqCst) == 0 {
                // A person edits an entry while the pass runs: its vector is made anew.
                let edit = cairn_core::recall::review::Edit {
                    body: Some("Migrations run before the release notes are written.".into()),
                    ..Default::default()
                };
                self.cairn.recall_accept(self.edit, Some(&edit)).unwrap();
            }
            // Before the pass asks about its next unit, what it wrote so far gets its vector.
            let waited = std::time::Instant::now();
            loop {
                let pending = self.cairn.embeddings_status().unwrap().stores[0].pending;
                if pending == Some(0) {
                    break;
                }
                assert!(
                    waited.elapsed() < STUCK,
                    "{pending:?} entries written by this pass still wait for their vector"
                );
                std::thread::sleep(Duration::from_millis(10));
            }
            for status in [None, Some(Status::Archived)] {
                let resp = checked_query(self.cairn, "database migrations release notes", status);
                assert_eq!(resp.vectors_pending, 0);
            }
        }
    }
    let progress = MidPass {
        cairn: &cairn,
        edit: &accepted[0].id,
        units: AtomicU32::new(0),
    };
    let done = AtomicBool::new(false);
    let report = std::thread::scope(|s| {
        let reader = s.spawn(|| {
            let mut queries = 0u32;
            loop {
                for status in [None, Some(Status::Archived)] {
                    checked_query(
                        &cairn,
                        "the login test timeout and the dev server port",
                        status,
                    );
                    queries += 1;
                }
                if done.load(Ordering::SeqCst) {
                    return queries;
                }
            }
        });
        // Stops the reader however the pass ends (a failed check panics through it).
        struct Done<'a>(&'a AtomicBool);
        impl Drop for Done<'_> {
            fn drop(&mut self) {
                self.0.store(true, Ordering::SeqCst);
            }
        }
        let report = {
            let _done = Done(&done);
            cairn.recall_extract_run(&RunOptions::default(), &progress)
        };
        assert!(reader.join().unwrap() > 0);
        report.unwrap()
    });
    assert!(report.units >= 4 && report.entries > 0, "{report:?}");
    assert_eq!(progress.units.load(Ordering::SeqCst), report.units);
    let recall = &cairn.embeddings_status().unwrap().stores[0];
    assert!(recall.fresh && recall.pending == Some(0), "{recall:?}");
    assert_eq!(recall.vectors, 6 + report.entries);
    // The edited entry is found by what it says now.
    let resp = checked_query(
        &cairn,
        "Migrations run before the release notes are written",
        None,
    );
    assert!(
        resp.results
            .iter()
            .any(|r| r.entry.id == accepted[0].id
                && r.match_reasons.contains(&"semantic".to_owned())),
        "{:?}",
        resp.results
    );
}

#[test]
fn the_preview_counts_exactly_what_a_run_sends() {
    let fake = FakeLlm::start(Some(&key()));
    let env = Env::new();
    env.config(&fake.url(), "");
    let cairn = env.open();
    two_sessions(&env, &cairn);
    let p = cairn.recall_extract_preview(&RunScope::default()).unwrap();
    assert!(fake.requests().is_empty(), "a preview sends nothing");
    assert_eq!((p.sessions, p.units), (2, 6));
    assert_eq!(p.max_output_tokens, 6 * 4096);
    assert!(p.estimated_input_tokens >= p.chars / 4);
    run(&cairn);
    let sent: u64 = fake
        .chats()
        .iter()
        .map(|c| {
            c.json()["messages"]
                .as_array()
                .unwrap()
                .iter()
                .map(|m| m["content"].as_str().unwrap().chars().count() as u64)
                .sum::<u64>()
        })
        .sum();
    assert_eq!(fake.chats().len() as u32, p.units);
    assert_eq!(sent, p.chars);
    let after = cairn.recall_extract_preview(&RunScope::default()).unwrap();
    assert_eq!((after.sessions, after.units), (0, 0));
    // Scoping by session.
    let one = cairn
        .recall_extract_preview(&RunScope {
            session: Some("sess-b".into()),
            ..Default::default()
        })
        .unwrap();
    assert_eq!(one.units, 0, "already read");
}

#[test]
fn concurrency_does_not_change_the_result() {
    let fake = FakeLlm::start(Some(&key()));
    let mut ids = Vec::new();
    for c in [1, 2] {
        let env = Env::new();
        env.config(&fake.url(), &format!("concurrency = {c}"));
        let cairn = env.open();
        two_sessions(&env, &cairn);
        run(&cairn);
        let set: BTreeSet<String> = machine_entries(&cairn, Status::Accepted)
            .into_iter()
            .map(|e| e.id)
            .collect();
        assert_eq!(set.len(), 6);
        ids.push(set);
    }
    assert_eq!(ids[0], ids[1]);
}

#[test]
fn a_grown_transcript_rereads_only_new_units() {
    let fake = FakeLlm::start(Some(&key()));
    let env = Env::new();
    env.config(&fake.url(), "");
    let cairn = env.open();
    let mut t = Transcript::new("grow", "/work/proj");
    t.user("Set up CI")
        .assistant("Added .github/workflows/ci.yml");
    env.session(&cairn, "grow", &t.lines);
    run(&cairn);
    let before: BTreeSet<String> = machine_entries(&cairn, Status::Accepted)
        .into_iter()
        .map(|e| e.id)
        .collect();
    assert_eq!(before.len(), 2);
    let coverage = |cairn: &Cairn| {
        let c = cairn.recall_extract_coverage().unwrap();
        assert_eq!(c.len(), 1, "{c:?}");
        (c[0].sessions, c[0].done, c[0].not_started, c[0].entries)
    };
    assert_eq!(coverage(&cairn), (1, 1, 0, 2));
    fake.clear();
    t.user("Also cache the cargo registry")
        .assistant("Added actions/cache for ~/.cargo/registry");
    env.session(&cairn, "grow", &t.lines);
    // Grown since it was read: no longer done until the next pass reads the new turn.
    assert_eq!(coverage(&cairn), (1, 0, 1, 2));
    let r = run(&cairn);
    assert_eq!(coverage(&cairn), (1, 1, 0, 4));
    assert_eq!(r.units, 2, "only the new turn is read");
    assert_eq!(fake.chats().len(), 2);
    let after: BTreeSet<String> = machine_entries(&cairn, Status::Accepted)
        .into_iter()
        .map(|e| e.id)
        .collect();
    assert!(before.is_subset(&after) && after.len() == 4);
}

/// A compaction sub-agent's session (its summary request and the summary, both hidden from the
/// model) has nothing to read: status counts it apart, neither read nor still to read, so its
/// counts are what `preview` and `run` count and coverage is whole once the session with
/// something to read is read, even by a pass scoped to that one session.
/// A real Claude session with its two sub-agents: a task (read through its parent, never on its
/// own) and a compaction, whose every record is hidden from the model.
const BIG: &str = "ae4a77f8-aedd-4bc1-888f-c94edc91af04";

fn big_session_and_its_compaction(env: &Env, cairn: &Cairn) {
    let claude = support::fixtures().join("claude");
    let dir = env.dir.path().join("claude");
    support::copy_into(
        &claude.join(format!("{BIG}.jsonl")),
        &dir,
        &format!("p/{BIG}.jsonl"),
    );
    for agent in ["agent-aac57f5", "agent-acompact-946d2b"] {
        let rel = format!("{BIG}/subagents/{agent}.jsonl");
        support::copy_into(&claude.join(&rel), &dir, &format!("p/{rel}"));
    }
    support::capture(cairn, &support::found(Agent::Claude, &dir));
}

/// A pass scoped to one session.
fn run_session(cairn: &Cairn, session: &str) -> cairn_core::recall::extract::RunReport {
    cairn
        .recall_extract_run(
            &RunOptions {
                scope: RunScope {
                    session: Some(session.into()),
                    ..Default::default()
                },
                cancel: None,
            },
            &cairn_core::recall::extract::Silent,
        )
        .unwrap()
}

#[test]
fn a_session_with_nothing_to_read_is_counted_apart() {
    let fake = FakeLlm::start(Some(&key()));
    let env = Env::new();
    env.config(&fake.url(), "");
    let cairn = env.open();
    big_session_and_its_compaction(&env, &cairn);

    let preview = cairn.recall_extract_preview(&RunScope::default()).unwrap();
    assert_eq!(preview.sessions, 1, "{preview:?}");
    let before = cairn.recall_extract_status().unwrap();
    assert_eq!(
        (before.not_started, before.sessions_empty),
        (preview.sessions, 1),
        "{before:?}"
    );

    let report = run_session(&cairn, BIG);
    assert_eq!((report.sessions, report.failed), (1, 0), "{report:?}");
    let after = cairn.recall_extract_status().unwrap();
    assert_eq!(
        (
            after.sessions_done,
            after.not_started,
            after.sessions_empty,
            after.units_done == after.units_total
        ),
        (report.sessions, 0, 1, true),
        "{after:?}"
    );
    let project = &after.coverage[0];
    assert_eq!(
        (project.sessions, project.done, project.empty),
        (1, 1, 1),
        "{project:?}"
    );
    assert_eq!(after.generations[0].sessions_done, report.sessions);

    // A full pass then marks the compaction done without a call: still counted apart.
    fake.clear();
    let again = run(&cairn);
    assert_eq!((again.sessions, again.calls), (0, 0), "{again:?}");
    assert!(fake.chats().is_empty());
    let last = cairn.recall_extract_status().unwrap();
    assert_eq!(
        (last.sessions_done, last.not_started, last.sessions_empty),
        (1, 0, 1)
    );
    assert_eq!(last.generations[0].sessions_done, 1);
}

/// A new generation that has read every session with something to read replaces the served
/// one at the end of its pass, even a pass scoped to one session: the compaction beside it,
/// which no pass of the new generation has looked at, is no work to wait for.
#[test]
fn a_generation_is_not_held_back_by_a_session_with_nothing_to_read() {
    let fake = FakeLlm::start(Some(&key()));
    let env = Env::new();
    env.config(&fake.url(), "");
    let cairn = env.open();
    big_session_and_its_compaction(&env, &cairn);
    let first = run(&cairn);
    assert!(first.activated, "{first:?}");
    // Another reply budget: a new generation, with no row yet for either session.
    env.config(&fake.url(), "max_tokens = 3000");
    let cairn = env.open();
    let before = cairn.recall_extract_status().unwrap();
    assert_eq!(
        (before.not_started, before.sessions_empty),
        (1, 1),
        "{before:?}"
    );
    let r = run_session(&cairn, BIG);
    assert_eq!((r.sessions, r.failed), (1, 0), "{r:?}");
    assert!(r.activated && !r.staged, "{r:?}");
    let after = cairn.recall_extract_status().unwrap();
    assert_eq!(after.state, Some(GenState::Active));
    assert_eq!(
        (after.sessions_done, after.not_started, after.sessions_empty),
        (1, 0, 1)
    );
}

/// A session read to its end and grown since only by records a model is not shown (a
/// system-injected prompt, reasoning) has nothing new to read: it stays read, a pass sends
/// nothing of it, and what it grows by next that a model is shown is read as before.
#[test]
fn a_session_grown_only_by_what_a_model_is_not_shown_stays_read() {
    let fake = FakeLlm::start(Some(&key()));
    let env = Env::new();
    env.config(&fake.url(), "");
    let cairn = env.open();
    let mut t = Transcript::new("noise", "/work/proj");
    t.user("Set up CI")
        .assistant("Added .github/workflows/ci.yml");
    env.session(&cairn, "noise", &t.lines);
    run(&cairn);
    let coverage = |cairn: &Cairn| {
        let st = cairn.recall_extract_status().unwrap();
        (
            st.sessions_done,
            st.not_started,
            st.sessions_empty,
            st.entries,
        )
    };
    assert_eq!(coverage(&cairn), (1, 0, 0, 2));
    t.meta("<local-command-caveat>Caveat: The messages below were generated by the user while running local commands.</local-command-caveat>")
        .thinking("The user may ask about caching next.");
    env.session(&cairn, "noise", &t.lines);
    assert_eq!(coverage(&cairn), (1, 0, 0, 2), "still read to its end");
    fake.clear();
    let r = run(&cairn);
    assert_eq!((r.sessions, r.units, r.calls), (0, 0, 0), "{r:?}");
    assert!(fake.chats().is_empty());
    // Then a turn a model is shown: to read, and only it is read.
    t.user("Also cache the cargo registry")
        .assistant("Added actions/cache for ~/.cargo/registry");
    env.session(&cairn, "noise", &t.lines);
    assert_eq!(coverage(&cairn), (0, 1, 0, 2));
    let r = run(&cairn);
    assert_eq!((r.sessions, r.units), (1, 2), "{r:?}");
    assert_eq!(coverage(&cairn), (1, 0, 0, 4));
}

/// The rows status keeps of where each session has something to read (migration 49).
fn readable_rows(env: &Env) -> Vec<(String, i64, Option<i64>)> {
    let conn = rusqlite::Connection::open(env.data().join("cairn.db")).unwrap();
    let mut stmt = conn
        .prepare(
            "SELECT s.session_id, r.read_through, r.last_visible FROM recall_extract_readable r
             JOIN sessions s ON s.id = r.session_id ORDER BY s.session_id",
        )
        .unwrap();
    stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .collect::<rusqlite::Result<_>>()
        .unwrap()
}

/// Status reads the records of a session no pass has covered once, keeps where it has
/// something to read, and answers from that until the records change: a capture that grows
/// the session, a reindex that reads them again. A forgotten session's row goes with it.
#[test]
fn status_reads_a_sessions_records_again_only_once_they_changed() {
    let fake = FakeLlm::start(Some(&key()));
    let env = Env::new();
    env.config(&fake.url(), "");
    let cairn = env.open();
    two_sessions(&env, &cairn);
    let counts = |cairn: &Cairn| {
        let st = cairn.recall_extract_status().unwrap();
        (st.not_started, st.sessions_empty)
    };
    assert_eq!(counts(&cairn), (2, 0));
    let kept = readable_rows(&env);
    assert_eq!(kept.len(), 2, "{kept:?}");
    assert!(
        kept.iter()
            .all(|(_, through, last)| last.is_some_and(|l| l < *through)),
        "{kept:?}"
    );
    // Answered from what was kept, not from the records: a row that said neither session has
    // anything to read is believed while the records stay as they were read.
    let conn = rusqlite::Connection::open(env.data().join("cairn.db")).unwrap();
    conn.execute("UPDATE recall_extract_readable SET last_visible = NULL", [])
        .unwrap();
    assert_eq!(counts(&cairn), (0, 2));
    // Grown: read again.
    let mut a = Transcript::new("sess-a", "/work/proj");
    a.user("Please fix the flaky login test in tests/login.rs")
        .assistant("Looking at tests/login.rs first.")
        .bash(
            "cargo test login",
            "test login ... FAILED: timeout after 5s",
        )
        .assistant("The timeout was too short; raised it to 30s and the test passes.")
        .user("Now document the change in CHANGELOG.md")
        .assistant("Added a line under Unreleased.")
        .user("Thanks");
    env.session(&cairn, "sess-a", &a.lines);
    assert_eq!(counts(&cairn), (1, 1));
    // Read again by a reindex: read again by status too.
    cairn
        .reindex(
            &cairn_core::ReindexRequest {
                session: Some("sess-b".into()),
                ..Default::default()
            },
            &cairn_core::archive::capture::Quiet,
        )
        .unwrap();
    assert_eq!(counts(&cairn), (2, 0));
    // Forgotten: its row goes with it.
    cairn
        .forget(&cairn_core::ForgetRequest {
            session: Some("sess-a".into()),
            ..Default::default()
        })
        .unwrap();
    assert_eq!(counts(&cairn), (1, 0));
    let kept = readable_rows(&env);
    assert_eq!(kept.len(), 1, "{kept:?}");
    assert_eq!(kept[0].0, "sess-b");
}

/// An archive written before migration 49 keeps nothing of where sessions have something to
/// read: opened by this build, it reports the counts it reported before, and keeps them from
/// then on.
#[test]
fn an_archive_from_before_migration_49_reports_the_same_counts() {
    let fake = FakeLlm::start(Some(&key()));
    let env = Env::new();
    env.config(&fake.url(), "");
    let counts = |cairn: &Cairn| {
        let st = cairn.recall_extract_status().unwrap();
        (
            st.sessions_done,
            st.sessions_partial,
            st.sessions_failed,
            st.not_started,
            st.sessions_empty,
            st.units_done,
            st.units_total,
            st.entries,
        )
    };
    let before = {
        let cairn = env.open();
        big_session_and_its_compaction(&env, &cairn);
        two_sessions(&env, &cairn);
        run_session(&cairn, "sess-b");
        counts(&cairn)
    };
    assert_eq!((before.0, before.3, before.4), (1, 2, 1), "{before:?}");
    // The archive as the build before wrote it: schema 48, no such table.
    {
        let conn = rusqlite::Connection::open(env.data().join("cairn.db")).unwrap();
        conn.execute_batch("DROP TABLE recall_extract_readable; PRAGMA user_version = 48;")
            .unwrap();
    }
    let cairn = env.open();
    assert_eq!(counts(&cairn), before);
    // Kept now for the sessions no pass covers: sess-a, the big one and its compaction.
    assert_eq!(readable_rows(&env).len(), 3, "{:?}", readable_rows(&env));
    assert_eq!(counts(&cairn), before);
}

/// A record a keyed source rewrites in place changes what a model is shown while the session's
/// records end where they did. Synthetic lines (no public Gemini sample re-appends a message; see
/// tests/fixtures/gemini/SOURCES.md): Gemini CLI's JSONL writes an answer blank, then again
/// under the same id with its words. Status, which had read that a pass has nothing to read in
/// the session, counts it to read at once, before any pass, as the preview does.
#[test]
fn a_record_rewritten_in_place_with_words_is_to_read() {
    let fake = FakeLlm::start(Some(&key()));
    let env = Env::new();
    env.config(&fake.url(), "");
    let cairn = env.open();
    let dir = env.dir.path().join("gemini/proj/chats");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("session-2026-03-01T10-00-keyed.jsonl");
    let answer = |text: &str| {
        json!({"id": "g1", "timestamp": "2026-03-01T10:00:02Z", "type": "gemini",
            "content": text, "model": "gemini-2.5-pro"})
        .to_string()
    };
    let header = json!({"sessionId": "keyed-1", "projectHash": "00",
        "startTime": "2026-03-01T10:00:00Z", "lastUpdated": "2026-03-01T10:00:00Z", "kind": "main"});
    std::fs::write(&path, format!("{header}\n{}\n", answer("\n"))).unwrap();
    let files = [support::main_file(Agent::Gemini, &path)];
    let first = support::capture(&cairn, &files);
    assert_eq!(first.records_added, 1, "{first:?}");
    let counts = |cairn: &Cairn| {
        let st = cairn.recall_extract_status().unwrap();
        (st.not_started, st.sessions_empty)
    };
    assert_eq!(counts(&cairn), (0, 1), "a blank answer: nothing to read");
    assert_eq!(readable_rows(&env).len(), 1, "{:?}", readable_rows(&env));

    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap();
    std::io::Write::write_all(
        &mut f,
        format!(
            "{}\n",
            answer("The login test timed out after 5s; raising the timeout to 30s fixes it.")
        )
        .as_bytes(),
    )
    .unwrap();
    drop(f);
    let second = support::capture(&cairn, &files);
    assert_eq!(
        (second.records_added, second.records_updated),
        (0, 1),
        "updated in place: {second:?}"
    );
    assert_eq!(counts(&cairn), (1, 0), "its words are to read");
    let preview = cairn.recall_extract_preview(&RunScope::default()).unwrap();
    assert_eq!(preview.sessions, 1, "{preview:?}");
}

// ---- generations --------------------------------------------------------------------------------

#[test]
fn generations_go_building_active_retired_and_never_show_half_written() {
    let fake = FakeLlm::start(Some(&key()));
    let env = Env::new();
    env.config(&fake.url(), "concurrency = 1");
    let cairn = env.open();
    two_sessions(&env, &cairn);
    run(&cairn);
    let gen_a = cairn.recall_extract_status().unwrap().fingerprint.unwrap();

    // A new configuration is a new generation. Its first pass dies after one unit.
    env.config(&fake.url(), "concurrency = 1\nmax_window_chars = 20000");
    let cairn = env.open();
    let st = cairn.recall_extract_status().unwrap();
    let gen_b = st.fingerprint.clone().unwrap();
    assert_ne!(gen_a, gen_b);
    assert_eq!(st.state, None, "not run yet");
    fake.fail_after(
        1,
        Some(Reply::json(
            401,
            json!({"error": {"message": "invalid key"}}),
        )),
    );
    let r = run(&cairn);
    assert!(
        r.aborted.as_deref().is_some_and(|e| e.contains("401")),
        "{r:?}"
    );
    assert!(!r.activated);
    let st = cairn.recall_extract_status().unwrap();
    assert_eq!(st.state, Some(GenState::Building));
    assert_eq!(
        st.sessions_failed, 0,
        "an endpoint failure is not the session's fault"
    );
    // Served entries are still generation A's only; B's first unit is staged, not visible.
    let served = machine_entries(&cairn, Status::Accepted);
    assert_eq!(served.len(), 6);
    assert!(served.iter().all(|e| e.source_run_id == gen_a));
    let staged: Vec<_> = machine_entries(&cairn, Status::Archived)
        .into_iter()
        .filter(|e| e.source_run_id == gen_b)
        .collect();
    assert_eq!(staged.len(), 1);
    assert!(
        cairn
            .recall_extract_activate()
            .unwrap_err()
            .to_string()
            .contains("half-read")
    );

    // The next pass resumes, finishes, and switches generations in one step.
    fake.fail_after(0, None);
    let r = run(&cairn);
    assert!(r.activated && r.aborted.is_none(), "{r:?}");
    let gens = cairn.recall_extract_generations().unwrap();
    let state = |fp: &str| gens.iter().find(|g| g.fingerprint == fp).unwrap().state;
    assert_eq!(
        (state(&gen_a), state(&gen_b)),
        (GenState::Retired, GenState::Active)
    );
    let served = machine_entries(&cairn, Status::Accepted);
    assert_eq!(served.len(), 6);
    assert!(served.iter().all(|e| e.source_run_id == gen_b));
    assert!(
        machine_entries(&cairn, Status::Archived)
            .iter()
            .filter(|e| e.source_run_id == gen_a)
            .count()
            == 6
    );

    // Retiring the active generation needs force; then nothing automatic is served.
    let err = cairn
        .recall_extract_retire(&gen_b[..10], false)
        .unwrap_err();
    assert!(err.to_string().contains("--force"), "{err}");
    let l = cairn.recall_extract_retire(&gen_b[..10], true).unwrap();
    assert_eq!((l.fingerprint.as_str(), l.archived), (gen_b.as_str(), 6));
    assert!(machine_entries(&cairn, Status::Accepted).is_empty());
    let err = cairn
        .recall_extract_run(&RunOptions::default(), &cairn_core::recall::extract::Silent)
        .unwrap_err();
    assert!(err.to_string().contains("retired"), "{err}");
}

#[test]
fn a_scoped_pass_is_activated_by_hand_and_later_sessions_publish_as_they_finish() {
    let fake = FakeLlm::start(Some(&key()));
    let env = Env::new();
    env.config(&fake.url(), "");
    let cairn = env.open();
    two_sessions(&env, &cairn);
    let sess_b = || {
        cairn
            .recall_extract_run(
                &RunOptions {
                    scope: RunScope {
                        session: Some("sess-b".into()),
                        ..Default::default()
                    },
                    ..Default::default()
                },
                &cairn_core::recall::extract::Silent,
            )
            .unwrap()
    };
    // The first generation replaces nothing: its first pass, however narrow, is served.
    let first = sess_b();
    assert!(first.activated && !first.staged, "{first:?}");
    assert_eq!(machine_entries(&cairn, Status::Accepted).len(), 2);
    // A new generation (another reply budget) replaces the served one only once it covers
    // every session, or by hand.
    env.config(&fake.url(), "max_tokens = 3000");
    let r = sess_b();
    assert_eq!((r.sessions, r.units), (1, 2));
    assert!(!r.activated && r.staged, "sess-a is not covered yet");
    let staged = machine_entries(&cairn, Status::Archived);
    assert_eq!(staged.len(), 2);
    // A reviewer rejects a staged entry and takes it back (Undo): staged again, not served
    // before its generation is; one rejected for good is not brought back by activation.
    cairn.recall_reject(&staged[1].id).unwrap();
    let back = cairn.recall_restore(&staged[1].id).unwrap();
    assert_eq!(back.status, Status::Archived, "served before activation");
    cairn.recall_reject(&staged[0].id).unwrap();
    let l = cairn.recall_extract_activate().unwrap();
    assert_eq!(l.published, 1);
    assert_eq!(
        cairn.recall_get(&staged[0].id).unwrap().status,
        Status::Archived
    );
    assert_eq!(machine_entries(&cairn, Status::Accepted).len(), 1);
    // The active generation serves sess-a's entries as soon as sess-a is finished.
    run(&cairn);
    assert_eq!(machine_entries(&cairn, Status::Accepted).len(), 5);
}

// ---- recovery -----------------------------------------------------------------------------------

#[test]
fn an_overflowing_unit_is_split_and_retried() {
    let fake = FakeLlm::start(Some(&key()));
    let env = Env::new();
    // Floor of the split: max_window_chars / 8 = 1000 characters.
    env.config(&fake.url(), "max_window_chars = 8000");
    let cairn = env.open();
    let mut t = Transcript::new("big", "/work/proj");
    t.user("Refactor the parser");
    for i in 0..6 {
        t.assistant(&format!(
            "Step {i}: {}",
            "reworked the tokenizer loop. ".repeat(20)
        ));
    }
    env.session(&cairn, "big", &t.lines);
    fake.set_max_user_chars(Some(1500));
    let r = run(&cairn);
    assert_eq!((r.failed, r.sessions), (0, 1), "{r:?}");
    let chats = fake.chats();
    let overflowed = chats
        .iter()
        .filter(|c| c.user().chars().count() > 1500)
        .count();
    assert!(overflowed >= 1);
    assert!(r.calls > r.units, "{r:?}");
    // Every block of the unit reached the model in some piece that fit.
    let fitted: String = chats
        .iter()
        .filter(|c| c.user().chars().count() <= 1500)
        .map(|c| c.user())
        .collect();
    for ord in 1..=6 {
        assert!(
            fitted.contains(&format!("[{ord}] ASSISTANT:")),
            "block {ord} was lost"
        );
    }
    let entries = machine_entries(&cairn, Status::Accepted);
    assert!(entries.len() >= 3, "{}", entries.len());
    // Evidence of pieces stays inside the unit.
    assert!(entries.iter().all(|e| e.evidence[0].ordinal_end <= 6));
}

#[test]
fn a_truncated_reply_splits_and_a_unit_too_big_even_split_fails_its_session() {
    let fake = FakeLlm::start(Some(&key()));
    let env = Env::new();
    env.config(&fake.url(), "max_window_chars = 8000");
    let cairn = env.open();
    let mut t = Transcript::new("trunc", "/work/proj");
    t.user("go");
    for i in 0..4 {
        t.assistant(&format!("Part {i}: {}", "x y z ".repeat(100)));
    }
    env.session(&cairn, "trunc", &t.lines);
    // Intent answered normally, then the action unit's reply is cut off.
    fake.push(Reply::chat(
        &fake_llm::answer("USER MESSAGE (ordinal 0):\ngo").to_string(),
        "stop",
    ));
    fake.push(Reply::chat("{\"entries\": [", "length"));
    let r = run(&cairn);
    assert_eq!((r.failed, r.sessions), (0, 1), "{r:?}");
    assert!(r.calls >= 4, "{r:?}");

    // A model whose context holds almost nothing: splitting stops at the floor and the
    // session fails, with the reason recorded.
    let env = Env::new();
    env.config(&fake.url(), "max_window_chars = 8000");
    let cairn = env.open();
    env.session(&cairn, "trunc", &t.lines);
    fake.set_max_user_chars(Some(50));
    let r = run(&cairn);
    assert_eq!(r.failed, 1);
    assert!(
        r.failures[0].error.contains("split down to 1000"),
        "{:?}",
        r.failures
    );
    let st = cairn.recall_extract_status().unwrap();
    assert_eq!(st.sessions_failed, 1);
    assert!(st.failures[0].error.contains("split"));
    assert!(st.failures[0].error.contains("max_window_chars"));

    // A reply cut off however small the transcript is: the reply's budget is what to raise.
    fake.set_max_user_chars(None);
    let env = Env::new();
    env.config(&fake.url(), "max_window_chars = 8000\nmax_tokens = 16");
    let cairn = env.open();
    let mut tiny = Transcript::new("tiny", "/work/proj");
    tiny.user("go");
    env.session(&cairn, "tiny", &tiny.lines);
    for _ in 0..4 {
        fake.push(Reply::chat("{\"entries\": [", "length"));
    }
    let r = run(&cairn);
    assert_eq!(r.failed, 1, "{r:?}");
    assert!(
        r.failures[0]
            .error
            .contains("raise [recall.extract] max_tokens"),
        "{:?}",
        r.failures
    );
}

#[test]
fn transient_errors_are_retried_through_a_pass() {
    let fake = FakeLlm::start(Some(&key()));
    let env = Env::new();
    env.config(&fake.url(), "concurrency = 1");
    let cairn = env.open();
    let mut t = Transcript::new("retry", "/work/proj");
    t.user("hello").assistant("hi");
    env.session(&cairn, "retry", &t.lines);
    fake.push(
        Reply::json(429, json!({"error": {"message": "slow down"}}))
            .with_header("Retry-After", "0"),
    );
    fake.push(Reply::json(502, json!({"error": "bad gateway"})).with_header("Retry-After", "0"));
    let r = run(&cairn);
    assert_eq!((r.units, r.entries, r.failed), (2, 2, 0), "{r:?}");
    assert_eq!(fake.chats().len(), 4, "two retried, two answered");
}

/// A model that answers one unit with prose: that unit's session fails (named, with the reason),
/// the pass goes on to the other sessions, the generation activates, and the next pass is not
/// held up by the failed session (it waits out its back-off).
#[test]
fn an_answer_that_is_not_json_fails_its_session_not_the_pass() {
    let fake = FakeLlm::start(Some(&key()));
    let env = Env::new();
    env.config(&fake.url(), "concurrency = 1");
    let cairn = env.open();
    two_sessions(&env, &cairn);
    fake.push(Reply::chat("I cannot comply with that request.", "stop"));
    let r = run(&cairn);
    assert!(r.aborted.is_none(), "{r:?}");
    assert_eq!((r.failed, r.sessions), (1, 1), "{r:?}");
    assert!(r.activated, "{r:?}");
    let failure = &r.failures[0];
    assert!(
        failure.session_key.starts_with("sha256-") && failure.error.contains("not JSON"),
        "{failure:?}"
    );
    assert!(!machine_entries(&cairn, Status::Accepted).is_empty());
    let st = cairn.recall_extract_status().unwrap();
    assert_eq!((st.sessions_failed, st.sessions_done), (1, 1), "{st:?}");
    assert!(st.last_run.unwrap().aborted.is_none());
    // The next pass neither stops on it nor asks about it again before its back-off.
    fake.clear();
    let again = run(&cairn);
    assert!(again.aborted.is_none() && again.failed == 0, "{again:?}");
    assert!(fake.chats().is_empty());

    // Failed 90 minutes ago, once: past the hour, it is asked again, and fails again.
    let failed_ago = |minutes: i64| {
        let conn = rusqlite::Connection::open(env.data().join("cairn.db")).unwrap();
        let at = jiff::Timestamp::now() - jiff::SignedDuration::from_mins(minutes);
        conn.execute(
            "UPDATE recall_extract_progress SET updated_at = ?1 WHERE state = 'failed'",
            [at.strftime("%Y-%m-%dT%H:%M:%S%.3fZ").to_string()],
        )
        .unwrap()
    };
    assert_eq!(failed_ago(90), 1);
    fake.push(Reply::chat("Still prose.", "stop"));
    let r = run(&cairn);
    assert_eq!((r.failed, fake.chats().len()), (1, 1), "{r:?}");
    // Twice in a row: an hour and a half is not enough, it waits two.
    fake.clear();
    failed_ago(90);
    let r = run(&cairn);
    assert_eq!((r.failed, r.sessions), (0, 0), "{r:?}");
    assert!(fake.chats().is_empty());
    failed_ago(121);
    let r = run(&cairn);
    assert_eq!((r.failed, r.sessions), (0, 1), "{r:?}");
    assert!(!fake.chats().is_empty());
    let st = cairn.recall_extract_status().unwrap();
    assert_eq!((st.sessions_failed, st.sessions_done), (0, 2), "{st:?}");
}

/// A server whose error body quotes a token (echoing the request, or its own configuration):
/// the token reaches neither the report nor `recall extract status`.
#[test]
fn a_token_in_a_servers_error_is_redacted_before_it_is_shown_or_stored() {
    let token = "ghp_EXAMPLE00000000000000000000000000000";
    let fake = FakeLlm::start(Some(&key()));
    let env = Env::new();
    env.config(&fake.url(), "");
    let cairn = env.open();
    two_sessions(&env, &cairn);
    for status in [429, 401] {
        fake.fail_after(
            0,
            Some(
                Reply::json(
                    status,
                    json!({"error": {"message": format!("slow down, holder of {token}")}}),
                )
                .with_header("Retry-After", "0"),
            ),
        );
        let r = run(&cairn);
        let aborted = r.aborted.clone().unwrap_or_default();
        assert!(aborted.contains(&format!("HTTP {status}")), "{r:?}");
        assert!(
            aborted.contains("slow down") && !aborted.contains(token),
            "{aborted}"
        );
        let stored = cairn.recall_extract_status().unwrap().last_run.unwrap();
        let stored = stored.aborted.unwrap_or_default();
        assert!(
            stored.contains("[REDACTED:") && !stored.contains(token),
            "{stored}"
        );
    }
}

fn client(fake: &FakeLlm) -> Client {
    let server = cairn_core::llm::ServerConfig {
        endpoint: fake.url(),
        api_key_env: "CARGO_PKG_NAME".into(),
        ..Default::default()
    }
    .resolve(Path::new("config.toml"), "test")
    .unwrap();
    let mut c = Client::new(&server).unwrap();
    c.retry = RetryPolicy {
        max_attempts: 3,
        base: Duration::from_millis(5),
        cap: Duration::from_millis(50),
    };
    c
}

fn chat_req() -> ChatRequest {
    ChatRequest {
        model: "test-model".into(),
        messages: vec![
            ChatMessage::system("extract"),
            ChatMessage::user("USER MESSAGE (ordinal 0):\nhi"),
        ],
        json_schema: Some((
            "recall_entries".into(),
            cairn_core::recall::extract::prompt::schema(),
        )),
        ..Default::default()
    }
}

#[test]
fn the_client_follows_the_retry_ladder() {
    let fake = FakeLlm::start(Some(&key()));
    let c = client(&fake);
    let ob = Outbound::default();
    // 429 then 503 then success: three attempts.
    fake.push(Reply::json(429, json!({})));
    fake.push(Reply::json(503, json!({})));
    let reply = c.chat(&chat_req(), &ob).unwrap();
    assert_eq!(reply.attempts, 3);
    // Three 500s: the ladder is exhausted; the endpoint is to blame.
    fake.clear();
    for _ in 0..3 {
        fake.push(Reply::json(
            500,
            json!({"error": {"message": "boom\u{1b}[2J"}}),
        ));
    }
    let err = c.chat(&chat_req(), &ob).unwrap_err();
    assert!(matches!(err, LlmError::Busy { status: 500, .. }), "{err}");
    assert_eq!(err.scope(), Scope::Endpoint);
    assert!(
        !err.to_string().contains('\u{1b}'),
        "control characters are stripped"
    );
    assert_eq!(fake.chats().len(), 3);
    // A server that quotes the key it was sent (a local server's key matches no secret rule):
    // the message says where it was, never the key.
    fake.clear();
    fake.push(Reply::json(
        401,
        json!({"error": {"message": format!("bad key {} for this model", key())}}),
    ));
    let err = c.chat(&chat_req(), &ob).unwrap_err().to_string();
    assert!(
        !err.contains(&key()) && err.contains("bad key [REDACTED:api-key] for"),
        "{err}"
    );
    // Quoted with JSON escapes (Go's encoder writes `&` as \u0026): scrubbed once decoded.
    fake.clear();
    let escaped = key().replace('-', "\\u002d");
    fake.push(Reply {
        body: format!(r#"{{"error": {{"message": "bad key {escaped}"}}}}"#),
        ..Reply::json(401, json!({}))
    });
    let err = c.chat(&chat_req(), &ob).unwrap_err().to_string();
    assert!(!err.contains(&key()), "{err}");
    // A model's answer is the server's to word: a key's text in it (a placeholder key such
    // as `ollama` is an ordinary word) is parsed as sent, not edited.
    fake.clear();
    fake.push(Reply::chat(&format!("run {} locally", key()), "stop"));
    let reply = c.chat(&chat_req(), &ob).unwrap();
    assert_eq!(reply.content, format!("run {} locally", key()));
    // Never retried: 501, 401, an ordinary 400, a malformed-schema 200.
    for (status, body) in [
        (501, json!({})),
        (401, json!({"error": {"message": "bad key"}})),
        (
            400,
            json!({"error": {"message": "temperature must be a number"}}),
        ),
    ] {
        fake.clear();
        fake.push(Reply::json(status, body));
        let err = c.chat(&chat_req(), &ob).unwrap_err();
        assert_eq!(fake.chats().len(), 1, "HTTP {status} is not retried");
        let want = if status == 400 {
            Scope::Input
        } else {
            Scope::Endpoint
        };
        assert_eq!(err.scope(), want, "{err}");
    }
    // A choiceless 200 is transient; an empty content is not.
    fake.clear();
    fake.push(Reply::json(200, json!({"choices": []})));
    assert!(c.chat(&chat_req(), &ob).is_ok());
    assert_eq!(fake.chats().len(), 2);
    fake.push(Reply::chat("  ", "stop"));
    assert!(matches!(c.chat(&chat_req(), &ob), Err(LlmError::Reply(_))));
    // 413 means: split.
    fake.push(Reply::json(413, json!({})));
    assert_eq!(c.chat(&chat_req(), &ob).unwrap_err().scope(), Scope::Split);
    // Models and embeddings share the client.
    assert_eq!(c.models().unwrap(), ["test-model"]);
    let v = c
        .embeddings("embed", &["a".to_owned(), "b".to_owned()])
        .unwrap();
    assert_eq!(v, vec![vec![0.0, 1.0, 0.5], vec![1.0, 1.0, 0.5]]);
    assert_eq!(fake.violations(), Vec::<String>::new());
}

#[test]
fn a_response_larger_than_the_cap_fails_the_request() {
    let fake = FakeLlm::start(Some(&key()));
    let mut c = client(&fake);
    c.max_response_bytes = 1024;
    fake.push(Reply::chat(&"x".repeat(4096), "stop"));
    let err = c.chat(&chat_req(), &Outbound::default()).unwrap_err();
    assert!(matches!(err, LlmError::TooLarge { limit: 1024 }), "{err}");
}

#[test]
fn redirects_are_refused_not_followed() {
    let fake = FakeLlm::start(Some(&key()));
    let elsewhere = FakeLlm::start(None);
    let location = format!("{}/chat/completions", elsewhere.url());
    fake.push(Reply::json(307, json!({})).with_header("Location", &location));
    let err = client(&fake)
        .chat(&chat_req(), &Outbound::default())
        .unwrap_err();
    assert!(
        matches!(err, LlmError::Redirect { status: 307, .. }),
        "{err}"
    );
    assert_eq!(err.scope(), Scope::Endpoint);
    // Through a pass: the pass stops, and nothing ever reaches the other server.
    let env = Env::new();
    env.config(&fake.url(), "");
    let cairn = env.open();
    two_sessions(&env, &cairn);
    fake.clear();
    fake.push(Reply::json(302, json!({})).with_header("Location", &location));
    fake.push(Reply::json(302, json!({})).with_header("Location", &location));
    let r = run(&cairn);
    assert!(
        r.aborted.as_deref().is_some_and(|e| e.contains("redirect")),
        "{r:?}"
    );
    assert!(elsewhere.requests().is_empty());
    assert_eq!(r.entries, 0);
}

#[test]
fn remote_plain_http_is_refused_by_config_validation() {
    let env = Env::new();
    env.config("http://llm.example.com/v1", "");
    let cairn = env.open();
    let err = cairn
        .recall_extract_run(&RunOptions::default(), &cairn_core::recall::extract::Silent)
        .unwrap_err()
        .to_string();
    let config = env.data().join("config.toml");
    assert!(err.contains(&config.display().to_string()), "{err}");
    assert!(
        err.contains("recall.extract.servers.local.endpoint") && err.contains("allow_http"),
        "{err}"
    );
    // A remote plain-HTTP server explicitly allowed validates (it is not contacted here).
    std::fs::write(
        env.data().join("config.toml"),
        "[recall.extract]\nmodel = \"m\"\n[recall.extract.servers.x]\nendpoint = \"http://llm.example.com/v1\"\nallow_http = true\n",
    )
    .unwrap();
    assert!(env.open().extract_settings().is_ok());
}

#[test]
fn a_missing_api_key_variable_is_a_config_error() {
    let env = Env::new();
    std::fs::create_dir_all(env.data()).unwrap();
    std::fs::write(
        env.data().join("config.toml"),
        "[recall.extract]\nenabled = true\nmodel = \"m\"\n[recall.extract.servers.x]\nendpoint = \"http://127.0.0.1:9/v1\"\napi_key_env = \"CAIRN_TEST_SURELY_UNSET_VARIABLE\"\n",
    )
    .unwrap();
    let err = env
        .open()
        .recall_extract_run(&RunOptions::default(), &cairn_core::recall::extract::Silent)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("config.toml")
            && err.contains("recall.extract.servers.x.api_key_env")
            && err.contains("CAIRN_TEST_SURELY_UNSET_VARIABLE"),
        "{err}"
    );
}

// ---- what leaves the machine ---------------------------------------------------------------------

#[test]
fn no_planted_secret_or_home_path_reaches_the_server() {
    let fake = FakeLlm::start(Some(&key()));
    let env = Env::new();
    env.config(&fake.url(), "");
    let cairn = env.open();
    let home = dirs::home_dir().unwrap().to_string_lossy().into_owned();
    assert!(home.len() > 1);
    let repo = format!("{home}/cairn-extract-test-repo");
    let redactor = cairn_core::archive::redact::Redactor::global();
    let mut secrets = Vec::new();
    let mut t = Transcript::new("planted", &repo);
    for rule in cairn_core::archive::secrets::rules() {
        for f in redactor.scan_text(rule.test_value) {
            secrets.push(rule.test_value[f.start..f.end].to_owned());
        }
        t.user(&format!(
            "use {} for {repo}/src/main.rs, not {home}/.ssh/id_ed25519",
            rule.test_value
        ))
        .bash(
            &format!(
                "cat {home}/.aws/credentials /etc/ssl/private/server.key && export K={}",
                rule.test_value
            ),
            &format!("{} written to {repo}/config/app.toml", rule.test_value),
        )
        .assistant(&format!("Stored it; see {repo}/src/main.rs line 3."));
    }
    assert!(secrets.len() >= 20);
    env.session(&cairn, "planted", &t.lines);
    // A secret split across two records: each half is harmless, the whole is not.
    let mut split = Transcript::new("split", "/work/proj");
    split
        .user("Rotate the access id")
        .assistant("The new id begins AKIAIOSFOD")
        .assistant("NN7EXAMPLE ends it");
    env.session(&cairn, "split", &split.lines);

    let r = run(&cairn);
    let chats = fake.chats();
    assert!(!chats.is_empty());
    for c in fake.requests() {
        for s in &secrets {
            assert!(!c.body.contains(s.as_str()), "a planted secret left: {s}");
        }
        assert!(!c.body.contains(&home), "the home path left: {}", c.body);
        assert!(
            !c.body.contains("/etc/ssl/private"),
            "an absolute path left"
        );
        assert!(
            !c.body.contains("AKIAIOSFOD"),
            "a half of the split secret left"
        );
    }
    // Paths inside the session's repository arrive repo-relative.
    assert!(chats.iter().any(|c| c.body.contains("src/main.rs")));
    // The session with findings is extracted (Cairn redacts instead of excluding)…
    assert!(r.entries > 0);
    let planted_entries = cairn
        .recall_list(&Filters {
            source_session: Some("planted".into()),
            status: Some(Status::Accepted),
            limit: Some(500),
            ..Default::default()
        })
        .unwrap();
    assert!(!planted_entries.is_empty(), "{r:?}");
    // …and the split secret fails its session closed, before any of its text is sent.
    assert_eq!(r.failed, 1, "{r:?}");
    assert!(
        r.failures[0].error.contains("spans two transcript records"),
        "{:?}",
        r.failures
    );
    assert!(
        !chats
            .iter()
            .any(|c| c.user().contains("Rotate the access id"))
    );
}

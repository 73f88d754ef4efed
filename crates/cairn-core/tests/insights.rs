//! Generated insights over real fixture sessions, with an in-process generator that records
//! its prompts: slices, material budgets, the cache key, and what reaches the generator.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use std::cell::RefCell;

use cairn_core::Cairn;
use cairn_core::archive::Agent;
use cairn_core::insights::{
    Automation, GenerateRequest, Generator, GeneratorIdentity, SliceRequest,
};
use cairn_core::llm::{Answer, Ask, LlmError, Outbound};
use serde_json::json;

struct Recorder {
    prompts: RefCell<Vec<String>>,
}

impl Generator for Recorder {
    fn identity(&self) -> GeneratorIdentity {
        GeneratorIdentity {
            backend: "test".into(),
            model: Some("recorder".into()),
            endpoint_hash: None,
        }
    }
    fn ask(&self, ask: &Ask<'_>, _: &Outbound) -> Result<Answer, LlmError> {
        assert!(ask.system.is_empty() && ask.schema.is_none());
        self.prompts.borrow_mut().push(ask.user.to_owned());
        Ok(Answer {
            content: format!("# Report {}\n", self.prompts.borrow().len()),
            ..Default::default()
        })
    }
}

fn recorder() -> Recorder {
    Recorder {
        prompts: RefCell::new(Vec::new()),
    }
}

fn request(template: &str) -> GenerateRequest {
    GenerateRequest {
        slice: SliceRequest {
            since: Some("2020-01-01".into()),
            until: Some("2030-01-01".into()),
            automation: Automation::Include,
            ..SliceRequest::default()
        },
        template: template.into(),
        ..GenerateRequest::default()
    }
}

/// The fixture sessions, plus a scripted Claude session (`claude -p`) and a `codex exec` one.
fn archive() -> (tempfile::TempDir, tempfile::TempDir, Cairn) {
    let data = tempfile::tempdir().unwrap();
    let src = tempfile::tempdir().unwrap();
    let cairn = Cairn::open(data.path()).unwrap();
    let mut files: Vec<_> = [
        "claude/small.jsonl",
        "claude/tool_heavy.jsonl",
        "claude/1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl",
    ]
    .iter()
    .map(|f| support::main_file(Agent::Claude, &support::fixtures().join(f)))
    .collect();
    files.push(support::main_file(
        Agent::Codex,
        &support::fixtures().join("codex/small.jsonl"),
    ));
    let sdk = src.path().join("sdk.jsonl");
    std::fs::write(
        &sdk,
        json!({"type":"user","sessionId":"scripted-1","entrypoint":"sdk-cli","timestamp":"2026-06-01T10:00:00.000Z",
               "uuid":"s1","message":{"role":"user","content":"summarise the changelog"}})
        .to_string()
            + "\n",
    )
    .unwrap();
    files.push(support::main_file(Agent::Claude, &sdk));
    let exec = src.path().join("exec.jsonl");
    std::fs::write(
        &exec,
        json!({"timestamp":"2026-06-02T10:00:00Z","type":"session_meta","payload":{"id":"exec-1","cwd":"/w","source":"exec","originator":"codex_exec"}}).to_string()
            + "\n"
            + &json!({"timestamp":"2026-06-02T10:00:01Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"bump the version"}]}}).to_string()
            + "\n",
    )
    .unwrap();
    files.push(support::main_file(Agent::Codex, &exec));
    support::capture(&cairn, &files);
    (data, src, cairn)
}

#[test]
fn slices_select_by_agent_time_and_automation() {
    let (_d, _s, cairn) = archive();
    let total = |f: &dyn Fn(&mut GenerateRequest)| {
        let mut req = request("weekly-summary");
        f(&mut req);
        let rec = recorder();
        cairn
            .insight_generate_with(&req, &rec, &|_| {})
            .map(|g| g.insight.sessions_total)
    };
    let all = total(&|_| {}).unwrap();
    assert_eq!(all, 6);
    assert_eq!(
        total(&|r| r.slice.automation = Automation::Only).unwrap(),
        2
    );
    assert_eq!(
        total(&|r| r.slice.automation = Automation::Exclude).unwrap(),
        4
    );
    assert_eq!(total(&|r| r.slice.agent = Some(Agent::Codex)).unwrap(), 2);
    assert_eq!(
        total(&|r| {
            r.slice.since = Some("2026-06-01".into());
            r.slice.until = Some("2026-06-01".into());
        })
        .unwrap(),
        1
    );
    let none = total(&|r| r.slice.project = Some("no-such-project".into())).unwrap_err();
    assert!(
        none.to_string().contains("no sessions in the slice"),
        "{none}"
    );
}

#[test]
fn templates_choose_the_material_and_the_budget_is_kept() {
    let (_d, _s, cairn) = archive();
    let rec = recorder();
    cairn
        .insight_generate_with(&request("failure-patterns"), &rec, &|_| {})
        .unwrap();
    cairn
        .insight_generate_with(&request("weekly-summary"), &rec, &|_| {})
        .unwrap();
    let prompts = rec.prompts.borrow();
    // Failures are listed with their command and a link to the failing record.
    assert!(prompts[0].contains("\nfailed tool calls: "));
    assert!(prompts[0].contains("?record="));
    assert!(
        !prompts[1].contains("\nfailed tool calls: "),
        "the weekly summary does not ask for failures"
    );
    assert!(prompts[1].contains("### Turn 1"));
    assert!(
        prompts[1].contains("by agent: claude 4, codex 2"),
        "aggregates"
    );
    // Scripted sessions are marked.
    assert!(prompts[1].contains("automated"));

    // A small budget: sessions beyond it are announced, never silently dropped.
    let small = cairn_core::insights::preview(
        &rusqlite::Connection::open(cairn.data_dir().join("cairn.db")).unwrap(),
        cairn.data_dir(),
        &request("weekly-summary"),
        rec.identity(),
        2_000,
        &jiff::ZonedDateTime::now(),
    )
    .unwrap();
    assert_eq!(small.sessions_total, 6);
    assert!(small.sessions_included < 6, "{small:?}");
    assert!(
        small.prompt.contains("material budget is spent"),
        "{}",
        small.prompt
    );
}

/// A trajectory imported as `atif` whose agent is Codex is sliced, counted and headed as Codex in
/// a report, as every list names it (`ran_as`), never as `atif`.
#[test]
fn an_imported_trajectory_is_reported_as_the_agent_it_ran_as() {
    let (_d, src, cairn) = archive();
    let file = src.path().join("teammate.atif.json");
    let trajectory = json!({
        "schema_version": "ATIF-v1.4",
        "session_id": "teammate-codex",
        "agent": {"name": "codex", "version": "1.0"},
        "steps": [
            {"step_id": 1, "source": "user", "message": "rename the flag", "timestamp": "2026-06-03T10:00:00Z"},
            {"step_id": 2, "source": "agent", "message": "Renamed.", "timestamp": "2026-06-03T10:00:30Z"}
        ]
    });
    std::fs::write(&file, trajectory.to_string()).unwrap();
    cairn.import_atif(&file).unwrap();
    let mut req = request("weekly-summary");
    req.slice.agent = Some(Agent::Codex);
    let rec = recorder();
    let generated = cairn.insight_generate_with(&req, &rec, &|_| {}).unwrap();
    assert_eq!(generated.insight.sessions_total, 3);
    let prompt = rec.prompts.borrow()[0].clone();
    assert!(prompt.contains("by agent: codex 3"), "{prompt}");
    assert!(prompt.contains("rename the flag"), "{prompt}");
    assert!(!prompt.contains("atif"), "{prompt}");
}

#[test]
fn the_cache_key_follows_the_material() {
    let (_d, src, cairn) = archive();
    let rec = recorder();
    let first = cairn
        .insight_generate_with(&request("decisions-log"), &rec, &|_| {})
        .unwrap();
    let again = cairn
        .insight_generate_with(&request("decisions-log"), &rec, &|_| {})
        .unwrap();
    assert!(again.cached && again.insight.id == first.insight.id);
    // A different focus is a different question.
    let mut focused = request("decisions-log");
    focused.focus = Some("database choices".into());
    assert!(
        !cairn
            .insight_generate_with(&focused, &rec, &|_| {})
            .unwrap()
            .cached
    );
    // New work in the slice changes the material, so the report is written again.
    let more = src.path().join("sdk.jsonl");
    let mut text = std::fs::read_to_string(&more).unwrap();
    text.push_str(
        &(json!({"type":"assistant","sessionId":"scripted-1","timestamp":"2026-06-01T10:00:09.000Z","uuid":"s2",
                 "message":{"id":"m9","role":"assistant","content":[{"type":"text","text":"We chose SQLite over Postgres."}]}})
        .to_string()
            + "\n"),
    );
    std::fs::write(&more, text).unwrap();
    support::capture(&cairn, &[support::main_file(Agent::Claude, &more)]);
    let after = cairn
        .insight_generate_with(&request("decisions-log"), &rec, &|_| {})
        .unwrap();
    assert!(!after.cached);
    assert!(
        rec.prompts
            .borrow()
            .last()
            .unwrap()
            .contains("We chose SQLite over Postgres.")
    );
    assert_eq!(rec.prompts.borrow().len(), 3);
}

/// A report's token figures add up each session's totals as the session's detail gives them:
/// Claude's usage per message, Codex's running total for the thread (which has no per-message
/// rows, and once read as none).
#[test]
fn a_slice_s_tokens_are_its_sessions_totals() {
    let (_d, _s, cairn) = archive();
    // The Codex fixture whose last running total is not trimmed to 0.
    support::capture(
        &cairn,
        &[support::main_file(
            Agent::Codex,
            &support::fixtures().join("codex/codex_053_rate_limit.jsonl"),
        )],
    );
    let tokens_of = |agent: Agent| {
        let mut req = request("weekly-summary");
        req.slice.agent = Some(agent);
        let rec = recorder();
        let generated = cairn.insight_generate_with(&req, &rec, &|_| {}).unwrap();
        let (mut input, mut output) = (0u64, 0u64);
        for key in &generated.insight.session_keys {
            let tokens = cairn.session(key).unwrap().tokens;
            input += tokens.input;
            output += tokens.output;
        }
        let prompt = rec.prompts.borrow()[0].clone();
        (input, output, prompt)
    };
    for agent in [Agent::Claude, Agent::Codex] {
        let (input, output, prompt) = tokens_of(agent);
        assert!(
            input > 0 && output > 0,
            "{agent:?}: the fixtures hold usage"
        );
        assert!(
            prompt.contains(&format!("\ntokens: {input} in, {output} out\n")),
            "{agent:?}: {input} in, {output} out expected in {prompt}"
        );
    }
}

/// A generator that answers every prompt with the same text.
struct Fixed(String);

impl Generator for Fixed {
    fn identity(&self) -> GeneratorIdentity {
        GeneratorIdentity {
            backend: "test".into(),
            model: Some("fixed".into()),
            endpoint_hash: None,
        }
    }
    fn ask(&self, _: &Ask<'_>, _: &Outbound) -> Result<Answer, LlmError> {
        Ok(Answer {
            content: self.0.clone(),
            ..Default::default()
        })
    }
}

/// A link the model wrote to a session the report did not read (forgotten before the report,
/// or made up) keeps its text but not its address, in the report as generated, as read back
/// and as exported; links to the report's own sessions stay as written. A report stored with
/// such a link by an older build reads the same.
#[test]
fn links_to_sessions_the_report_did_not_read_are_taken_out() {
    use cairn_core::ForgetRequest;
    use cairn_core::insights::render::{ExportFormat, UNREAD_SESSION};
    let (_d, _s, cairn) = archive();
    let mut codex = request("weekly-summary");
    codex.slice.agent = Some(Agent::Codex);
    let keys = cairn
        .insight_generate_with(&codex, &recorder(), &|_| {})
        .unwrap()
        .insight
        .session_keys;
    let (kept, gone) = (keys[0].clone(), keys[1].clone());
    cairn
        .forget(&ForgetRequest {
            session: Some(gone.clone()),
            ..Default::default()
        })
        .unwrap();
    let answer = format!(
        "# Week\n\nSee [the run](cairn://session/{kept}?record=2), \
         [the lost run](cairn://session/{gone}?record=1), [made up](CAIRN://session/sha256-nope) \
         and <cairn://session/{gone}>; also [the reference][r].\n\n[r]: cairn://session/{gone}\n"
    );
    let generated = cairn
        .insight_generate_with(&codex, &Fixed(answer.clone()), &|_| {})
        .unwrap()
        .insight;
    assert_eq!(generated.session_keys, vec![kept.clone()]);
    let check = |text: &str, what: &str| {
        assert!(!text.contains(&gone), "{what}: {text}");
        assert!(!text.contains("sha256-nope"), "{what}: {text}");
        assert!(
            text.contains(&format!("[the run](cairn://session/{kept}?record=2)")),
            "{what}: {text}"
        );
        for said in [
            format!("the lost run {UNREAD_SESSION}"),
            format!("made up {UNREAD_SESSION}"),
            format!("and {UNREAD_SESSION};"),
        ] {
            assert!(text.contains(&said), "{what}: `{said}` not in {text}");
        }
    };
    check(&generated.content, "generated");
    let id = generated.id;
    check(&cairn.insight_get(id).unwrap().content, "read back");
    for format in [ExportFormat::Md, ExportFormat::Json, ExportFormat::Html] {
        let (text, _) = cairn.insight_export(id, format).unwrap();
        assert!(!text.contains(&gone), "{format:?}: {text}");
        assert!(!text.contains("sha256-nope"), "{format:?}: {text}");
    }
    // What an older build stored, links and all, reads as a report made now.
    rusqlite::Connection::open(cairn.data_dir().join("cairn.db"))
        .unwrap()
        .execute(
            "UPDATE insights SET content = ?1 WHERE id = ?2",
            rusqlite::params![answer, id],
        )
        .unwrap();
    check(&cairn.insight_get(id).unwrap().content, "stored before");
}

//! An ATIF export imported into a fresh archive is the same session: the same turns and
//! records, the same token totals, the same sub-agents and compactions. Over real fixtures: the
//! Claude session with a sub-agent and a compaction (per-message usage with cache reads and
//! writes), Crush (session totals, two sub-agents) and the VS Copilot conversation whose
//! prompts carry no text. Then trajectories with hostile `metrics`, read without failing.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use cairn_core::Cairn;
use cairn_core::archive::{Agent, TokenUsage};
use cairn_core::views::export::{ExportOptions, SessionExportFormat};
use serde_json::{Value, json};

use crate::support;

const CLAUDE: &str = "ae4a77f8-aedd-4bc1-888f-c94edc91af04";
const CRUSH: &str = "9ffe03d9-8440-498b-a7d0-015281c1d74b";
const VSCOPILOT: &str = "4a8f63f6-7626-4416-a874-fc7bd2c3f005";

/// What a round trip must keep of one session or sub-agent: its relation to its parent, its
/// turns, its records and its token usage.
#[derive(Debug, PartialEq)]
struct Shape {
    relation: Option<String>,
    turns: u32,
    records: u32,
    tokens: TokenUsage,
}

/// A session and its sub-agents (in the order they started), with the sub-agents' agent ids.
type Family = (Vec<Shape>, Vec<Option<String>>);

fn shape(cairn: &Cairn, session: &str) -> Family {
    let detail = cairn.session(session).unwrap();
    let mut shapes = vec![Shape {
        relation: detail.relation.clone(),
        turns: detail.turn_count,
        records: detail.record_count,
        tokens: detail.tokens,
    }];
    for sub in &detail.subagents {
        let d = cairn.session(&sub.session_key).unwrap();
        shapes.push(Shape {
            relation: d.relation.clone(),
            turns: d.turn_count,
            records: d.record_count,
            tokens: d.tokens,
        });
    }
    let ids = detail
        .subagents
        .iter()
        .map(|s| s.agent_id.clone())
        .collect();
    (shapes, ids)
}

/// The archive of the three fixture sessions, captured as a sync reads them.
fn captured(data: &Path, sources: &Path) -> Cairn {
    let cairn = Cairn::open(data).unwrap();
    let claude = sources.join("claude");
    let fixtures = support::fixtures();
    support::copy_into(
        &fixtures.join(format!("claude/{CLAUDE}.jsonl")),
        &claude,
        &format!("{CLAUDE}.jsonl"),
    );
    for sub in ["agent-aac57f5.jsonl", "agent-acompact-946d2b.jsonl"] {
        let rel = format!("{CLAUDE}/subagents/{sub}");
        support::copy_into(&fixtures.join("claude").join(&rel), &claude, &rel);
    }
    let crush = sources.join("crush");
    let db = "Starmel-OpenSuperWhisper/.crush/crush.db";
    support::copy_into(&fixtures.join("crush").join(db), &crush, db);
    let mut files = support::found(Agent::Claude, &claude);
    files.extend(support::found(Agent::Crush, &crush));
    files.extend(support::found(
        Agent::Vscopilot,
        &fixtures.join("vscopilot"),
    ));
    let report = support::capture(&cairn, &files);
    assert!(report.warnings.is_empty(), "{:?}", report.warnings);
    cairn
}

fn export_atif(cairn: &Cairn, session: &str, dir: &Path) -> std::path::PathBuf {
    let options = ExportOptions {
        format: SessionExportFormat::Atif,
        turns: None,
        max_output_bytes: 0,
    };
    let (path, _) = cairn
        .export_session_into(
            session,
            &options,
            dir,
            Some(&format!("{session}.atif.json")),
        )
        .unwrap();
    path
}

#[test]
fn an_atif_export_imports_back_as_the_same_session() {
    let (data, sources, out, fresh) = (
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
    );
    let cairn = captured(data.path(), sources.path());
    let imported = Cairn::open(fresh.path()).unwrap();
    let (mut before, mut after) = (Vec::new(), Vec::new());
    for session in [CLAUDE, CRUSH, VSCOPILOT] {
        let file = export_atif(&cairn, session, out.path());
        let key = imported.import_atif(&file).unwrap().session_key;
        before.push((session, shape(&cairn, session)));
        after.push((session, shape(&imported, &key)));
    }
    // Each loss a round trip had shows here at once: token usage read back as none, the
    // compaction left out, the VS Copilot prompts without text dropped (their turns merged).
    let shapes = |v: &[(&str, Family)]| -> Vec<String> {
        v.iter()
            .map(|(s, (shape, _))| format!("{s}: {shape:?}"))
            .collect()
    };
    assert_eq!(shapes(&after), shapes(&before));
    // The fixtures hold what each fix is about, so the comparison above could fail.
    let (claude, claude_ids) = &before[0].1;
    assert!(claude[0].tokens.cache_read > 0 && claude[0].tokens.cache_creation > 0);
    assert_eq!(
        claude_ids,
        &[
            Some("aac57f5".to_owned()),
            Some("acompact-946d2b".to_owned())
        ]
    );
    assert_eq!(after[0].1.1, *claude_ids, "the agent ids come back too");
    assert!(
        before[1].1.0[0].tokens.input > 0,
        "Crush keeps session totals"
    );
    assert_eq!(before[2].1.0[0].turns, 4, "one turn per VS Copilot prompt");
}

/// The Markdown and HTML exports carry the compaction too, under its own heading.
#[test]
fn every_export_carries_the_compaction() {
    let (data, sources) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let cairn = captured(data.path(), sources.path());
    for format in [SessionExportFormat::Md, SessionExportFormat::Html] {
        let options = ExportOptions {
            format,
            turns: None,
            max_output_bytes: 0,
        };
        let export = cairn.export_session(CLAUDE, &options).unwrap();
        assert!(export.text.contains("Compaction: "), "{format:?}");
        assert!(export.text.contains("Sub-agent: "), "{format:?}");
        assert!(!export.text.contains("not in this export"), "{format:?}");
    }
    let options = ExportOptions {
        format: SessionExportFormat::Json,
        turns: None,
        max_output_bytes: 0,
    };
    let doc: Value =
        serde_json::from_str(&cairn.export_session(CLAUDE, &options).unwrap().text).unwrap();
    let relations: Vec<&Value> = doc["subagents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| &s["session"]["relation"])
        .collect();
    assert_eq!(relations, [&json!("subagent"), &json!("compaction")]);
}

fn import(steps: Value, final_metrics: Value) -> TokenUsage {
    let (dir, data) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let file = dir.path().join("t.atif.json");
    let doc = json!({
        "schema_version": "ATIF-v1.6",
        "session_id": "metrics-1",
        "agent": {"name": "harbor-agent", "version": "1"},
        "steps": steps,
        "final_metrics": final_metrics,
    });
    std::fs::write(&file, serde_json::to_vec(&doc).unwrap()).unwrap();
    let cairn = Cairn::open(data.path()).unwrap();
    let key = cairn.import_atif(&file).unwrap().session_key;
    cairn.session(&key).unwrap().tokens
}

/// A trajectory another tool wrote: each step's `metrics` are its model call's tokens, counted
/// where Cairn counts a message's; without them, the trajectory's `final_metrics`. ATIF's
/// prompt count includes the cached tokens, Cairn's input does not.
#[test]
fn step_metrics_and_final_metrics_are_read_as_token_usage() {
    let step = |id: u64, source: &str, metrics: Value| json!({"step_id": id, "source": source, "message": "m", "metrics": metrics});
    let steps = json!([
        step(1, "user", json!(null)),
        step(
            2,
            "agent",
            json!({"prompt_tokens": 100, "completion_tokens": 7, "cached_tokens": 40})
        ),
        step(
            3,
            "agent",
            json!({"prompt_tokens": 50, "completion_tokens": 3})
        ),
    ]);
    let finals = json!({"total_prompt_tokens": 9, "total_completion_tokens": 9});
    let want = TokenUsage {
        input: 110,
        output: 10,
        cache_read: 40,
        ..TokenUsage::default()
    };
    assert_eq!(import(steps, finals.clone()), want, "the steps' sum wins");
    let only_final = json!([step(1, "user", json!(null)), step(2, "agent", json!(null))]);
    let finals = json!({"total_prompt_tokens": 120, "total_completion_tokens": 9, "total_cached_tokens": 20});
    let want = TokenUsage {
        input: 100,
        output: 9,
        cache_read: 20,
        ..TokenUsage::default()
    };
    assert_eq!(import(only_final, finals), want);
}

/// Negative, fractional, huge and wrong-typed counts are no count or capped (so none wraps in
/// the store's 64-bit integers), never a failure.
#[test]
fn hostile_metrics_are_ignored_or_capped() {
    const CAP: u64 = cairn_core::archive::sources::atif::MAX_TOKENS;
    let step = |id: u64, metrics: Value| json!({"step_id": id, "source": "agent", "message": "m", "metrics": metrics});
    let steps = json!([
        step(
            1,
            json!({"prompt_tokens": u64::MAX, "completion_tokens": -5, "cached_tokens": "9"})
        ),
        step(
            2,
            json!({"prompt_tokens": 1e300, "completion_tokens": 2.5, "cached_tokens": [1]})
        ),
        step(3, json!("forty")),
        step(
            4,
            json!({"prompt_tokens": i64::MAX, "completion_tokens": u64::MAX})
        ),
    ]);
    let want = TokenUsage {
        input: 2 * CAP,
        output: CAP,
        ..TokenUsage::default()
    };
    assert_eq!(import(steps, json!({"total_prompt_tokens": -1})), want);
    // No step counts: the final metrics, each the same way; Cairn's own figures in `extra`
    // win over ATIF's totals when they hold a count.
    let plain = json!([{"step_id": 1, "source": "user", "message": "m"}]);
    for (finals, want) in [
        (json!("lots"), TokenUsage::default()),
        (
            json!({"total_prompt_tokens": -3, "total_completion_tokens": "7", "total_steps": -1}),
            TokenUsage::default(),
        ),
        (
            json!({"total_prompt_tokens": 5, "total_cached_tokens": u64::MAX}),
            TokenUsage {
                cache_read: CAP,
                ..TokenUsage::default()
            },
        ),
        (
            json!({"total_prompt_tokens": 5, "extra": {"cairn": {"tokens": {
                "input": 1, "output": -2, "cache_creation": u64::MAX, "cache_read": "x",
                "reasoning": 4}}}}),
            TokenUsage {
                input: 1,
                cache_creation: CAP,
                reasoning: 4,
                ..TokenUsage::default()
            },
        ),
        (
            json!({"total_prompt_tokens": 5, "extra": {"cairn": {"tokens": "none"}}}),
            TokenUsage {
                input: 5,
                ..TokenUsage::default()
            },
        ),
    ] {
        assert_eq!(import(plain.clone(), finals.clone()), want, "{finals}");
    }
}

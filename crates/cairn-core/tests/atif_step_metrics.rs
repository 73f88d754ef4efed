//! An ATIF export carries each model call's tokens on its step (`metrics`, exactly in
//! `metrics.extra.cairn.tokens`), and an import reads them back under the same steps: exported
//! again, every step has the same metrics, and the steps add up to the session's totals. The
//! trajectory writes no `null` for what Cairn does not know. Over the real Claude session with a
//! sub-agent and a compaction (per-message usage with cache reads and writes).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};

use cairn_core::Cairn;
use cairn_core::archive::{Agent, TokenUsage};
use cairn_core::views::export::{ExportOptions, SessionExportFormat};
use serde_json::Value;

use crate::support;

const CLAUDE: &str = "ae4a77f8-aedd-4bc1-888f-c94edc91af04";

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
    let report = support::capture(&cairn, &support::found(Agent::Claude, &claude));
    assert!(report.warnings.is_empty(), "{:?}", report.warnings);
    cairn
}

fn export(cairn: &Cairn, session: &str, dir: &Path, name: &str) -> PathBuf {
    let options = ExportOptions {
        format: SessionExportFormat::Atif,
        turns: None,
        max_output_bytes: 0,
    };
    let (path, _) = cairn
        .export_session_into(session, &options, dir, Some(name))
        .unwrap();
    path
}

/// Each trajectory of the file (the session's, then its sub-agents'), as its steps' ids with
/// their metrics (`None` for a step without).
fn step_metrics(doc: &Value) -> Vec<Vec<(u64, Option<Value>)>> {
    let one = |t: &Value| -> Vec<(u64, Option<Value>)> {
        t["steps"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| (s["step_id"].as_u64().unwrap(), s.get("metrics").cloned()))
            .collect()
    };
    let mut all = vec![one(doc)];
    for sub in doc["subagent_trajectories"]
        .as_array()
        .into_iter()
        .flatten()
    {
        all.push(one(sub));
    }
    all
}

/// Cairn's exact counts in a metrics object.
fn tokens(metrics: &Value) -> TokenUsage {
    serde_json::from_value(metrics["extra"]["cairn"]["tokens"].clone()).unwrap()
}

fn read(path: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

#[test]
fn step_metrics_are_written_and_read_back_step_by_step() {
    let (data, sources, out, fresh) = (
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
    );
    let cairn = captured(data.path(), sources.path());
    let first = read(&export(&cairn, CLAUDE, out.path(), "first.atif.json"));
    let before = step_metrics(&first);

    // Each trajectory's steps carry its model calls' tokens, which add up to its totals.
    let detail = cairn.session(CLAUDE).unwrap();
    let trajectories: Vec<&Value> = std::iter::once(&first)
        .chain(first["subagent_trajectories"].as_array().unwrap())
        .collect();
    for (t, steps) in trajectories.iter().zip(&before) {
        let with: Vec<&Value> = steps.iter().filter_map(|(_, m)| m.as_ref()).collect();
        assert!(!with.is_empty(), "{}", t["trajectory_id"]);
        let mut sum = TokenUsage::default();
        for m in &with {
            sum.add(&tokens(m));
            // ATIF's own fields, as `final_metrics` counts them.
            let t = tokens(m);
            assert_eq!(
                m["prompt_tokens"].as_u64().unwrap(),
                t.input + t.cache_read + t.cache_creation
            );
            assert_eq!(m["completion_tokens"].as_u64().unwrap(), t.output);
            assert_eq!(m["cached_tokens"].as_u64().unwrap(), t.cache_read);
        }
        let total: TokenUsage =
            serde_json::from_value(t["final_metrics"]["extra"]["cairn"]["tokens"].clone()).unwrap();
        assert_eq!(sum, total, "{}", t["trajectory_id"]);
    }
    assert_eq!(
        tokens(&first["final_metrics"]),
        detail.tokens,
        "the session's totals"
    );
    // The session's own steps split its usage over its many model calls.
    assert!(before[0].iter().filter(|(_, m)| m.is_some()).count() > 10);
    // Only agent steps carry metrics (ATIF's models refuse them elsewhere).
    for t in &trajectories {
        for s in t["steps"].as_array().unwrap() {
            if s.get("metrics").is_some() {
                assert_eq!(s["source"], "agent", "{s}");
            }
        }
    }

    // Imported into a fresh archive and exported again: the same steps, the same metrics.
    let imported = Cairn::open(fresh.path()).unwrap();
    let file = out.path().join("first.atif.json");
    let key = imported.import_atif(&file).unwrap().session_key;
    assert_eq!(imported.session(&key).unwrap().tokens, detail.tokens);
    let again = read(&export(&imported, &key, out.path(), "again.atif.json"));
    let after = step_metrics(&again);
    assert_eq!(after.len(), before.len());
    for (i, (a, b)) in after.iter().zip(&before).enumerate() {
        assert_eq!(a, b, "trajectory {i}: step by step");
    }
}

#[test]
fn the_trajectory_writes_no_null_for_what_cairn_does_not_know() {
    let (data, sources, out) = (
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
    );
    let cairn = captured(data.path(), sources.path());
    let doc = read(&export(&cairn, CLAUDE, out.path(), "t.atif.json"));
    let trajectories: Vec<&Value> = std::iter::once(&doc)
        .chain(doc["subagent_trajectories"].as_array().unwrap())
        .collect();
    // The fixture's session has no relation (a sub-agent's is `subagent`).
    assert!(
        doc["extra"]["cairn"].get("relation").is_none(),
        "{}",
        doc["extra"]
    );
    for t in trajectories {
        let cairn = t["extra"]["cairn"].as_object().unwrap();
        let nulls: Vec<&String> = cairn
            .iter()
            .filter(|(_, v)| v.is_null())
            .map(|(k, _)| k)
            .collect();
        assert!(nulls.is_empty(), "{nulls:?} in {}", t["extra"]);
        assert!(cairn.contains_key("session_key"));
    }
    // A sub-agent says what it is.
    assert_eq!(
        doc["subagent_trajectories"][0]["extra"]["cairn"]["relation"],
        "subagent"
    );
}

//! An export as an ATIF trajectory ([`crate::archive::atif`]): one step per record, a tool's
//! result joined to the step of its call, Cairn's own fields in `extra.cairn` (among them
//! `retracted_at`, for a record the agent took back, which ATIF has no field for), the
//! session's token usage in `final_metrics` (exactly in its `extra.cairn.tokens`), each model
//! call's on the step of its first agent record in that step's `metrics`.

use std::collections::HashMap;

use serde_json::{Map, Value, json};

use super::{Document, RecordView};
use crate::archive::TokenUsage;
use crate::archive::atif::{
    FinalMetrics, Metrics, Observation, ObservationResult, SCHEMA_VERSION,
    SUBAGENTS_SCHEMA_VERSION, Step, StepSource, ToolCall, Trajectory, TrajectoryAgent,
};

/// What ATIF has no field for, kept so the record reads back the same.
fn cairn_extra(r: &RecordView, turn_index: u32) -> Value {
    let mut m = Map::new();
    m.insert("turn_index".into(), json!(turn_index));
    m.insert("ordinal".into(), json!(r.ordinal));
    m.insert("kind".into(), json!(r.kind));
    m.insert("source_event_kind".into(), json!(r.source_event_kind));
    let mut opt = |k: &str, v: Value| {
        if !v.is_null() && v != json!(false) && v != json!([]) {
            m.insert(k.into(), v);
        }
    };
    opt("role", json!(r.role));
    opt("prompt_source", json!(r.prompt_source));
    opt("tool_name", json!(r.tool_name));
    opt("tool_kind", json!(r.tool_kind));
    opt("exit_code", json!(r.exit_code));
    opt("outcome", json!(r.outcome));
    opt("file_paths", json!(r.file_paths));
    opt("is_sidechain", json!(r.is_sidechain));
    opt("is_compaction", json!(r.is_compaction));
    opt("timestamp", json!(r.timestamp));
    // ATIF has no word for a step the agent took back (a rewind): when it did, and the
    // trajectory's notes say what the field means.
    opt("retracted_at", json!(r.retracted_at));
    Value::Object(m)
}

/// A tool input as ATIF's `arguments` object: the object itself, or `{"input": …}` around
/// anything else.
fn arguments(input: Option<&str>) -> Map<String, Value> {
    let Some(raw) = input else {
        return Map::new();
    };
    match serde_json::from_str::<Value>(raw) {
        Ok(Value::Object(m)) => m,
        Ok(Value::Null) => Map::new(),
        Ok(other) => Map::from_iter([("input".to_owned(), other)]),
        Err(_) => Map::from_iter([("input".to_owned(), Value::String(raw.to_owned()))]),
    }
}

/// ATIF timestamps are ISO 8601; a record's timestamp the store could not read stays out.
fn timestamp(r: &RecordView) -> Option<String> {
    r.timestamp
        .as_deref()
        .filter(|t| crate::text::parse_rfc3339(t).is_some())
        .map(str::to_owned)
}

/// The session as a trajectory, its sub-agents and compactions embedded as
/// `subagent_trajectories` (ATIF v1.7), each identified by its agent id (else its session key).
/// A compaction's id starts `acompact` (Claude's own, kept), which is how an import tells it
/// from a sub-agent.
pub fn trajectory(doc: &Document) -> Trajectory {
    let mut t = one(doc);
    if !doc.subagents.is_empty() {
        t.schema_version = SUBAGENTS_SCHEMA_VERSION.to_owned();
        let subs = doc
            .subagents
            .iter()
            .map(|sub| {
                let key = &sub.session.session_key;
                let id = doc
                    .session
                    .subagents
                    .iter()
                    .find(|s| &s.session_key == key)
                    .and_then(|s| s.agent_id.clone())
                    .filter(|a| !a.is_empty())
                    .unwrap_or_else(|| match sub.session.relation.as_deref() {
                        Some("compaction") => format!("acompact-{key}"),
                        _ => key.clone(),
                    });
                Trajectory {
                    schema_version: SUBAGENTS_SCHEMA_VERSION.to_owned(),
                    trajectory_id: Some(id),
                    ..one(sub)
                }
            })
            .collect();
        t.subagent_trajectories = Some(subs);
    }
    t
}

/// One session as a trajectory.
fn one(doc: &Document) -> Trajectory {
    let s = &doc.session;
    let mut steps: Vec<Step> = Vec::new();
    // call id → the step holding the call, for the result that answers it.
    let mut calls: HashMap<String, usize> = HashMap::new();
    // The model calls' tokens given to steps, summed.
    let mut split = TokenUsage::default();
    for t in &doc.turns {
        let turn = t.turn.turn_index;
        for r in &t.records {
            let text = r.text.clone().unwrap_or_default();
            let base = |source, message: String| Step {
                step_id: 0,
                timestamp: timestamp(r),
                source,
                model_name: None,
                message: Value::String(message),
                reasoning_content: None,
                tool_calls: None,
                observation: None,
                metrics: None,
                extra: Some(json!({ "cairn": cairn_extra(r, turn) })),
            };
            let step = match r.kind.as_str() {
                "message" => match r.role.as_deref() {
                    Some("user") => base(StepSource::User, text),
                    Some("assistant") => base(StepSource::Agent, text),
                    _ => base(StepSource::System, text),
                },
                "reasoning" => Step {
                    reasoning_content: Some(text),
                    ..base(StepSource::Agent, String::new())
                },
                "tool_call" => {
                    let id = r
                        .call_id
                        .clone()
                        .filter(|c| !c.is_empty())
                        .unwrap_or_else(|| format!("cairn-{}", r.ordinal));
                    calls.insert(id.clone(), steps.len());
                    Step {
                        tool_calls: Some(vec![ToolCall {
                            tool_call_id: id,
                            function_name: r.tool_name.clone().unwrap_or_else(|| "tool".to_owned()),
                            arguments: arguments(r.tool_input.as_deref()),
                        }]),
                        ..base(StepSource::Agent, text)
                    }
                }
                "tool_result" => {
                    let called = r
                        .call_id
                        .as_ref()
                        .and_then(|c| calls.get(c).map(|&i| (c, i)));
                    if let Some((call, i)) = called {
                        let step = &mut steps[i];
                        step.observation
                            .get_or_insert_with(|| Observation {
                                results: Vec::new(),
                            })
                            .results
                            .push(ObservationResult {
                                source_call_id: Some(call.clone()),
                                content: Some(Value::String(text)),
                            });
                        if let Some(Value::Object(extra)) = step.extra.as_mut() {
                            let results = extra
                                .entry("cairn_results")
                                .or_insert_with(|| Value::Array(Vec::new()));
                            if let Value::Array(list) = results {
                                list.push(cairn_extra(r, turn));
                            }
                        }
                        continue;
                    }
                    Step {
                        observation: Some(Observation {
                            results: vec![ObservationResult {
                                source_call_id: None,
                                content: Some(Value::String(text)),
                            }],
                        }),
                        ..base(StepSource::System, String::new())
                    }
                }
                _ => base(StepSource::System, text),
            };
            let mut step = step;
            if step.source == StepSource::Agent
                && let Some(tokens) = doc.step_tokens.get(&r.ordinal).filter(|t| !t.is_unknown())
            {
                step.metrics = Some(metrics(tokens));
                split.add(tokens);
            }
            steps.push(step);
        }
    }
    for (i, step) in steps.iter_mut().enumerate() {
        step.step_id = i as u64 + 1;
    }
    if steps.is_empty() {
        // ATIF asks for at least one step; a session with no records says so in one.
        steps.push(Step {
            step_id: 1,
            timestamp: None,
            source: StepSource::System,
            model_name: None,
            message: Value::String("(this session has no records to export)".to_owned()),
            reasoning_content: None,
            tool_calls: None,
            observation: None,
            metrics: None,
            extra: None,
        });
    }
    let tokens = &s.tokens;
    // The steps' usage is the session's, split: an import counts the steps' metrics instead of
    // the totals when any step has them. Where they do not add up to the totals (a turn range,
    // or a message none of whose records is an agent step), none is written, so the session's
    // usage still reads back exactly.
    if split != *tokens {
        for step in &mut steps {
            step.metrics = None;
        }
    }
    let known = !tokens.is_unknown();
    let total_steps = steps.len() as u64;
    Trajectory {
        schema_version: SCHEMA_VERSION.to_owned(),
        trajectory_id: None,
        subagent_trajectories: None,
        session_id: Some(
            s.session_id
                .clone()
                .unwrap_or_else(|| s.session_key.clone()),
        ),
        agent: TrajectoryAgent {
            // An imported or pulled session names the agent that ran it, not the format.
            name: s
                .ran_by
                .clone()
                .unwrap_or_else(|| s.agent.as_str().to_owned()),
            version: s
                .tool_version
                .clone()
                .unwrap_or_else(|| "unknown".to_owned()),
            model_name: s.model.clone(),
            extra: None,
        },
        steps,
        notes: Some(match doc.retracted_note() {
            Some(note) => format!(
                "Exported by Cairn. {} {note} Each such step has `extra.cairn.retracted_at`.",
                doc.left_out.sentence()
            ),
            None => format!("Exported by Cairn. {}", doc.left_out.sentence()),
        }),
        // Unknown usage is left out, not claimed as 0 tokens. ATIF's prompt total folds the
        // cache writes in and has no reasoning count: Cairn's own figures ride in `extra`, so
        // an import gives the session the same usage.
        final_metrics: Some(FinalMetrics {
            total_prompt_tokens: known
                .then(|| tokens.input + tokens.cache_read + tokens.cache_creation),
            total_completion_tokens: known.then_some(tokens.output),
            total_cached_tokens: known.then_some(tokens.cache_read),
            total_steps: Some(total_steps),
            extra: known.then(|| json!({ "cairn": { "tokens": tokens } })),
        }),
        extra: Some(json!({ "cairn": session_extra(doc) })),
    }
}

/// The session's own fields ATIF has none for, each only when Cairn knows it (an unknown one is
/// left out, not written as `null`).
fn session_extra(doc: &Document) -> Value {
    let s = &doc.session;
    let mut m = Map::new();
    m.insert("session_key".into(), json!(s.session_key));
    for (k, v) in [
        ("title", &s.title),
        ("project", &s.project),
        ("cwd", &s.cwd),
        ("git_branch", &s.git_branch),
        ("started_at", &s.started_at),
        ("relation", &s.relation),
    ] {
        if let Some(v) = v {
            m.insert(k.into(), json!(v));
        }
    }
    m.insert("left_out".into(), json!(doc.left_out));
    Value::Object(m)
}

/// A model call's tokens as ATIF's step `metrics` (its prompt count folds the cache reads and
/// writes in, as `final_metrics`' does), exactly in `extra.cairn.tokens`.
fn metrics(t: &TokenUsage) -> Metrics {
    Metrics {
        prompt_tokens: Some(t.input + t.cache_read + t.cache_creation),
        completion_tokens: Some(t.output),
        cached_tokens: Some(t.cache_read),
        extra: Some(json!({ "cairn": { "tokens": t } })),
    }
}

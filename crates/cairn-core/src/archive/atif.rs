//! The Agent Trajectory Interchange Format (ATIF, harbor RFC 0001): the document types Cairn
//! writes (`cairn export --format atif`) and reads back (`cairn import`). Only the fields Cairn
//! uses are typed; the rest of a foreign document is ignored on reading, never kept.
//!
//! Cairn writes one step per transcript record, except that a tool's result joins the step of
//! the call it answers (`observation.results[].source_call_id`). What ATIF has no field for
//! (the record's kind, its tool kind, an exit code) rides in `extra.cairn` of the step, so an
//! exported session imports back with the same turns.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The version Cairn writes. Cairn uses nothing newer than v1.4's fields, except for a session
/// with sub-agents ([`SUBAGENTS_SCHEMA_VERSION`]).
pub const SCHEMA_VERSION: &str = "ATIF-v1.4";
/// The version that embeds sub-agent trajectories (`subagent_trajectories`, each with its
/// `trajectory_id`).
pub const SUBAGENTS_SCHEMA_VERSION: &str = "ATIF-v1.7";
/// At most this many embedded sub-agent trajectories are imported from one file.
pub const MAX_SUBAGENTS: usize = 1_000;

fn is_none_or_empty(v: &Option<Value>) -> bool {
    v.as_ref()
        .is_none_or(|v| v.as_object().is_some_and(Map::is_empty))
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Trajectory {
    pub schema_version: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// This document's own id (v1.7); required on an embedded sub-agent trajectory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trajectory_id: Option<String>,
    pub agent: TrajectoryAgent,
    pub steps: Vec<Step>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub notes: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub final_metrics: Option<FinalMetrics>,
    #[serde(default, skip_serializing_if = "is_none_or_empty")]
    pub extra: Option<Value>,
    /// The session's sub-agents, each a whole trajectory of its own (v1.7).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subagent_trajectories: Option<Vec<Trajectory>>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TrajectoryAgent {
    pub name: String,
    pub version: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_name: Option<String>,
    #[serde(default, skip_serializing_if = "is_none_or_empty")]
    pub extra: Option<Value>,
}

/// `system`, `user` or `agent`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum StepSource {
    System,
    User,
    Agent,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Step {
    pub step_id: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<String>,
    pub source: StepSource,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_name: Option<String>,
    /// A string, or (v1.6) an array of content parts; Cairn writes strings and reads the text
    /// parts of an array.
    pub message: Value,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_content: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_calls: Option<Vec<ToolCall>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observation: Option<Observation>,
    /// The tokens of the model call the step records (an agent step only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metrics: Option<Metrics>,
    #[serde(default, skip_serializing_if = "is_none_or_empty")]
    pub extra: Option<Value>,
}

/// A step's `metrics`: its model call's tokens as ATIF counts them (`prompt_tokens` includes
/// the cached ones).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Metrics {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt_tokens: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completion_tokens: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cached_tokens: Option<u64>,
    /// Cairn's own counts in `cairn.tokens`, as in [`FinalMetrics::extra`]; read back on import.
    #[serde(default, skip_serializing_if = "is_none_or_empty")]
    pub extra: Option<Value>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    pub tool_call_id: String,
    pub function_name: String,
    pub arguments: Map<String, Value>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Observation {
    pub results: Vec<ObservationResult>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ObservationResult {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_call_id: Option<String>,
    /// A string, or (v1.6) an array of content parts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<Value>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct FinalMetrics {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total_prompt_tokens: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total_completion_tokens: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total_cached_tokens: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total_steps: Option<u64>,
    /// Cairn's own counts in `cairn.tokens` (input without cache reads, output, cache writes,
    /// cache reads, reasoning), which the totals above cannot tell apart; read back on import.
    #[serde(default, skip_serializing_if = "is_none_or_empty")]
    pub extra: Option<Value>,
}

/// The text of a message or an observation's content: the string, or the `text` of each text
/// part of an array joined by newlines; anything else is no text.
pub fn text_of(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Array(parts) => {
            let texts: Vec<&str> = parts
                .iter()
                .filter(|p| p.get("type").and_then(Value::as_str) == Some("text"))
                .filter_map(|p| p.get("text").and_then(Value::as_str))
                .collect();
            (!texts.is_empty()).then(|| texts.join("\n"))
        }
        _ => None,
    }
}

/// A trajectory file larger than this is not imported.
pub const MAX_IMPORT_BYTES: u64 = 64 * 1024 * 1024;

/// A trajectory file `cairn import` accepts, before capture reads it as a document.
#[derive(Debug, Clone, PartialEq)]
pub struct Checked {
    /// The file's real path (symlinks and `..` resolved).
    pub path: std::path::PathBuf,
    pub session_id: String,
    pub steps: usize,
    /// The embedded sub-agent trajectories, nested ones too: each one's id (a nested one's
    /// qualified by its parent's) and its document without its own sub-agents.
    pub subagents: Vec<(String, Value)>,
}

/// Check that `path` is a regular file of at most [`MAX_IMPORT_BYTES`] holding an ATIF
/// trajectory: a JSON object with an `ATIF-v…` `schema_version`, a `session_id` (a printable
/// string of at most 256 characters) and 1 to 100,000 `steps`, each an object with a `source`.
/// Everything else is read leniently by the parser; what fails here is refused whole, with the
/// file and the reason in the message.
pub fn check_file(path: &std::path::Path) -> crate::error::Result<Checked> {
    use crate::error::Error;
    let shown = crate::text::one_line(&path.display().to_string(), 200);
    let refuse = |why: String| Error::Invalid(format!("cannot import {shown}: {why}"));
    let real = std::fs::canonicalize(path).map_err(|e| Error::Read {
        path: path.to_owned(),
        source: e,
    })?;
    let bytes = crate::atomic::read_capped(&real, MAX_IMPORT_BYTES).map_err(|e| match e {
        crate::atomic::Unread::NotRegular => refuse("not a regular file".to_owned()),
        crate::atomic::Unread::TooLarge(n) => refuse(format!(
            "{n} bytes is more than the {} MiB an ATIF trajectory may have",
            MAX_IMPORT_BYTES / (1024 * 1024)
        )),
        crate::atomic::Unread::Missing => Error::Read {
            path: path.to_owned(),
            source: std::io::ErrorKind::NotFound.into(),
        },
        crate::atomic::Unread::Io(source) => Error::Read {
            path: path.to_owned(),
            source,
        },
    })?;
    // serde_json refuses nesting deeper than 128 levels, so a hostile document cannot exhaust
    // the stack.
    let readable = super::json_text::readable(&bytes);
    let doc: Value = serde_json::from_slice(&readable).map_err(|e| {
        refuse(format!(
            "not JSON ({})",
            crate::text::one_line(&e.to_string(), 120)
        ))
    })?;
    let Some(obj) = doc.as_object() else {
        return Err(refuse("an ATIF trajectory is a JSON object".to_owned()));
    };
    match obj.get("schema_version").and_then(Value::as_str) {
        Some(v) if v.starts_with("ATIF-v") && v.len() <= 32 => {}
        _ => {
            return Err(refuse(
                "no ATIF schema_version (\"ATIF-v1.4\", …); is this an ATIF trajectory?".to_owned(),
            ));
        }
    }
    let session_id = match obj.get("session_id").filter(|v| !v.is_null()) {
        Some(Value::String(id)) if printable_id(id) => id.clone(),
        Some(Value::String(_)) => {
            return Err(refuse(
                "its session_id is not a printable id of at most 256 characters".to_owned(),
            ));
        }
        Some(_) => {
            return Err(refuse(
                "its session_id is not a string (ATIF writes it as one)".to_owned(),
            ));
        }
        None => return Err(refuse("it has no session_id".to_owned())),
    };
    let steps = check_steps(obj, &refuse, "")?;
    let mut subagents = Vec::new();
    embedded(obj, "", 0, &refuse, &mut subagents)?;
    Ok(Checked {
        path: real,
        session_id,
        steps,
        subagents,
    })
}

/// How deep sub-agents may nest in one file (a sub-agent's sub-agent is depth 2).
const MAX_NESTING: usize = 16;

/// Check the sub-agent trajectories `obj` embeds, and theirs in turn, and add each to `out` as
/// (id, document). A nested one's id is its parent's, a slash, then its own, so every sub-agent
/// of the file is imported (each a sub-agent of the file's session) under an id no other takes.
fn embedded(
    obj: &Map<String, Value>,
    parent: &str,
    depth: usize,
    refuse: &dyn Fn(String) -> crate::error::Error,
    out: &mut Vec<(String, Value)>,
) -> crate::error::Result<()> {
    let Some(subs) = obj.get("subagent_trajectories").filter(|v| !v.is_null()) else {
        return Ok(());
    };
    let within = if parent.is_empty() {
        String::new()
    } else {
        format!("sub-agent {parent:?}: ")
    };
    let Some(subs) = subs.as_array() else {
        return Err(refuse(format!(
            "{within}its subagent_trajectories is not an array"
        )));
    };
    if depth == MAX_NESTING && !subs.is_empty() {
        return Err(refuse(format!(
            "{within}sub-agents nest deeper than the {MAX_NESTING} levels Cairn reads"
        )));
    }
    if out.len() + subs.len() > MAX_SUBAGENTS {
        return Err(refuse(format!(
            "more than the {MAX_SUBAGENTS} sub-agent trajectories Cairn reads"
        )));
    }
    for (i, sub) in subs.iter().enumerate() {
        let at = format!("{within}subagent_trajectories[{i}]: ");
        let Some(sub_obj) = sub.as_object() else {
            return Err(refuse(format!("{at}not an object")));
        };
        let id = match sub_obj.get("trajectory_id").and_then(Value::as_str) {
            Some(id) if printable_id(id) => id,
            _ => {
                return Err(refuse(format!(
                    "{at}no trajectory_id that is a printable id of at most 256 characters"
                )));
            }
        };
        let id = if parent.is_empty() {
            id.to_owned()
        } else {
            format!("{parent}/{id}")
        };
        if out.iter().any(|(seen, _)| *seen == id) {
            return Err(refuse(format!("{at}its trajectory_id is not unique")));
        }
        check_steps(sub_obj, refuse, &at)?;
        // Its own sub-agents are entries of their own, not copied into it once per level.
        let own = sub_obj
            .iter()
            .filter(|(k, _)| *k != "subagent_trajectories")
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        out.push((id.clone(), Value::Object(own)));
        embedded(sub_obj, &id, depth + 1, refuse, out)?;
    }
    Ok(())
}

fn printable_id(id: &str) -> bool {
    !id.trim().is_empty()
        && id.chars().count() <= 256
        && !id
            .chars()
            .any(|c| c.is_control() || crate::text::is_bidi_control(c))
}

/// A trajectory's `steps`: 1 to [`crate::archive::sources::atif::MAX_STEPS`] objects, each
/// with a `source`. Returns how many.
fn check_steps(
    obj: &Map<String, Value>,
    refuse: &dyn Fn(String) -> crate::error::Error,
    at: &str,
) -> crate::error::Result<usize> {
    let steps = match obj.get("steps").and_then(Value::as_array) {
        Some(steps) if !steps.is_empty() => steps,
        _ => return Err(refuse(format!("{at}it has no steps"))),
    };
    if steps.len() > crate::archive::sources::atif::MAX_STEPS {
        return Err(refuse(format!(
            "{at}{} steps is more than the {} Cairn reads",
            steps.len(),
            crate::archive::sources::atif::MAX_STEPS
        )));
    }
    if let Some(i) = steps
        .iter()
        .position(|s| s.get("source").and_then(Value::as_str).is_none())
    {
        return Err(refuse(format!(
            "{at}step {} has no source (user, agent or system)",
            i + 1
        )));
    }
    Ok(steps.len())
}

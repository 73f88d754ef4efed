//! ATIF trajectories (`cairn import <file.atif.json>`), read as the Document kind: the header is
//! the trajectory without its `steps`, each step a unit keyed by its `step_id`. So a second
//! import of the same file stores nothing twice, and one that grew adds only the new steps.
//!
//! Every field is read leniently (a value of the wrong type reads as absent) and every text is
//! capped, as for any agent; the reader has redacted the header and each step before they get
//! here. A step becomes records:
//! - `user` → a prompt (`human`, or `system_injected` by the usual markers);
//! - `agent` → its `reasoning_content`, its `message`, one `tool_call` per `tool_calls[]`;
//! - `system` → a system message;
//! - every `observation.results[]` → a `tool_result` answering `source_call_id`.
//!
//! What Cairn's own export keeps in `extra.cairn` (the record's kind, prompt source, tool kind,
//! exit code, outcome, edited paths, when the agent took it back; `extra.cairn_results` for the
//! joined results) is read back when its values are ones Cairn knows, so an exported session
//! imports with the same turns, its retracted records retracted.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{
    DocumentParser, KeyedUnits, LineOutput, MAX_INPUT_STRING_BYTES, MAX_TEXT_BYTES,
    MAX_TOOL_OUTPUT_BYTES, SessionMeta, Shallow, cap_json, cap_text, count_unknown,
    is_system_injected, line_timestamp, note_timestamp, set_latest, set_once, str_at,
};
use crate::archive::atif::text_of;
use crate::archive::{Outcome, PromptSource, Record, RecordKind, TokenUsage, ToolKind};

/// At most this many steps are read from one trajectory; the rest are counted as unknown.
pub const MAX_STEPS: usize = 100_000;
/// Tool calls or observation results read from one step.
const MAX_PARTS_PER_STEP: usize = 256;
/// A session id or step id longer than this is not an id.
const MAX_ID_CHARS: usize = 256;

#[derive(Debug, Default, Serialize, Deserialize)]
pub struct AtifParser {
    meta: SessionMeta,
}

impl AtifParser {
    pub fn resume(saved: Option<&Value>) -> Result<Self, serde_json::Error> {
        match saved {
            Some(state) => serde_json::from_value(state.clone()),
            None => Ok(AtifParser::default()),
        }
    }

    fn read_header(&mut self, h: &Value, out: &mut LineOutput) {
        set_once(&mut self.meta.session_id, id(h.get("session_id")));
        let agent = h.get("agent").unwrap_or(&Value::Null);
        set_latest(&mut self.meta.model, str_at(agent, &["model_name"]));
        set_once(&mut self.meta.tool_version, str_at(agent, &["version"]));
        set_once(&mut self.meta.provider, str_at(agent, &["name"]));
        let cairn = h
            .get("extra")
            .and_then(|e| e.get("cairn"))
            .unwrap_or(&Value::Null);
        set_latest(&mut self.meta.title, str_at(cairn, &["title"]));
        set_once(&mut self.meta.git_branch, str_at(cairn, &["git_branch"]));
        // A working directory is kept only when it is one: an absolute path of printable
        // characters (an export writes the home directory as `~`, which names no folder here).
        let cwd = str_at(cairn, &["cwd"])
            .filter(|c| c.starts_with('/') && !c.chars().any(char::is_control) && c.len() <= 4096);
        set_once(&mut self.meta.cwd, cwd);
        let ts = line_timestamp(&mut self.meta, str_at(cairn, &["started_at"]), out);
        note_timestamp(&mut self.meta, ts.as_deref());
        // The session's totals, kept as an agent's running total is: the store counts them
        // only when no step carried its own `metrics` (those are counted instead).
        if let Some(usage) = h.get("final_metrics").and_then(final_usage) {
            self.meta.cumulative_usage = Some(usage);
        }
    }

    fn step(&mut self, unit: &str, step: &Value, out: &mut LineOutput) {
        let ts = line_timestamp(&mut self.meta, str_at(step, &["timestamp"]), out)
            .map(|t| t.into_owned());
        note_timestamp(&mut self.meta, ts.as_deref());
        set_latest(&mut self.meta.model, str_at(step, &["model_name"]));
        let source = str_at(step, &["source"]).unwrap_or("");
        let extra = step.get("extra").unwrap_or(&Value::Null);
        let ours = extra.get("cairn").filter(|c| c.is_object());
        let base = Record {
            timestamp: ts,
            message_id: Some(unit.to_owned()),
            unit: Some(unit.to_owned()),
            source_event_kind: format!("atif:{}", printable_kind(source)),
            cwd: self.meta.cwd.clone(),
            ..Record::default()
        };
        let message = step
            .get("message")
            .and_then(text_of)
            .filter(|t| !t.is_empty());
        // Cairn's own export says which record the step was; else ATIF's fields decide.
        let kind = ours
            .and_then(|c| str_at(c, &["kind"]))
            .and_then(record_kind);
        match source {
            "user" | "agent" | "system" => {}
            other => {
                count_unknown(&mut self.meta, &format!("atif:{}", printable_kind(other)));
                return;
            }
        }
        // The tokens of the step's model call, where Cairn keeps a message's: under its id.
        if let Some(usage) = step.get("metrics").and_then(step_usage) {
            out.usage.push((unit.to_owned(), usage));
        }
        let calls: Vec<&Value> = step
            .get("tool_calls")
            .and_then(Value::as_array)
            .map(|c| c.iter().take(MAX_PARTS_PER_STEP).collect())
            .unwrap_or_default();
        let results = step
            .get("observation")
            .and_then(|o| o.get("results"))
            .and_then(Value::as_array);
        // A message with no text is still a record: a prompt without text (an agent that
        // keeps only its tool calls) opens its turn, as it did in the transcript exported.
        // A foreign user step holding nothing else (an image, say) is such a prompt too.
        let message = message.or_else(|| {
            let said = match kind {
                Some(k) => k == RecordKind::Message,
                None => source == "user" && calls.is_empty() && results.is_none_or(Vec::is_empty),
            };
            said.then(String::new)
        });
        if let Some(reasoning) = str_at(step, &["reasoning_content"]).filter(|r| !r.is_empty())
            && matches!(kind, None | Some(RecordKind::Reasoning))
        {
            let record = Record {
                kind: Some(RecordKind::Reasoning),
                key: Some("reasoning".to_owned()),
                role: Some("assistant".to_owned()),
                text: Some(cap_text(reasoning.to_owned(), MAX_TEXT_BYTES)),
                ..base.clone()
            };
            out.records.push(with_ours(record, ours));
        }
        match kind {
            // The step's record is a call or a result (below), or the reasoning (above).
            Some(RecordKind::Reasoning | RecordKind::ToolResult | RecordKind::ToolCall) => {}
            Some(RecordKind::Event) => out.records.push(Record {
                kind: Some(RecordKind::Event),
                key: Some("text".to_owned()),
                text: message.clone().map(|t| cap_text(t, MAX_TEXT_BYTES)),
                ..with_ours(base.clone(), ours)
            }),
            // A message; a foreign agent step that talks and calls tools gives its text, then
            // its calls.
            Some(RecordKind::Message) | None => {
                if let Some(text) = message.clone() {
                    let record = self.message(source, text, with_ours(base.clone(), ours));
                    out.records.push(record);
                }
            }
        }
        let call_text = message.filter(|_| kind == Some(RecordKind::ToolCall));
        for (i, call) in calls.iter().enumerate() {
            let call_id = id(call.get("tool_call_id")).map(str::to_owned);
            let name = str_at(call, &["function_name"]).map(|n| cap_text(n.to_owned(), 256));
            let mut input = call.get("arguments").cloned().unwrap_or(Value::Null);
            cap_json(&mut input, MAX_INPUT_STRING_BYTES);
            let record = Record {
                kind: Some(RecordKind::ToolCall),
                key: Some(format!("call:{i}")),
                role: Some("assistant".to_owned()),
                tool_kind: Some(ToolKind::Other),
                tool_name: name,
                tool_input: (!input.is_null()).then_some(input),
                call_id,
                text: if i == 0 { call_text.clone() } else { None },
                ..base.clone()
            };
            out.records.push(if i == 0 {
                with_ours(record, ours)
            } else {
                record
            });
        }
        let ours_results: Vec<&Value> = extra
            .get("cairn_results")
            .and_then(Value::as_array)
            .map(|r| r.iter().collect())
            .unwrap_or_default();
        for (i, result) in results
            .into_iter()
            .flatten()
            .take(MAX_PARTS_PER_STEP)
            .enumerate()
        {
            let text = result.get("content").and_then(text_of);
            let call_id = id(result.get("source_call_id")).map(str::to_owned);
            // A result answering a call of the same step is named after it (`show` then says
            // `Bash`, not `tool`, as it does for the transcript it was exported from).
            let tool_name = call_id.as_deref().and_then(|c| {
                calls
                    .iter()
                    .find(|call| id(call.get("tool_call_id")) == Some(c))
                    .and_then(|call| str_at(call, &["function_name"]))
                    .map(|n| cap_text(n.to_owned(), 256))
            });
            let mut record = Record {
                kind: Some(RecordKind::ToolResult),
                key: Some(format!("result:{i}")),
                role: Some("tool".to_owned()),
                tool_name,
                call_id,
                text: text.map(|t| cap_text(t, MAX_TOOL_OUTPUT_BYTES)),
                ..base.clone()
            };
            // A result joined to its call's step carries its own record's fields; an orphan
            // result is the step's own record.
            let own = if kind == Some(RecordKind::ToolResult) && i == 0 {
                ours
            } else {
                ours_results.get(i).copied().filter(|v| v.is_object())
            };
            if let Some(o) = own
                && let Some(ts) = str_at(o, &["timestamp"])
                && crate::text::parse_rfc3339(ts).is_some()
            {
                record.timestamp = Some(ts.to_owned());
            }
            out.records.push(with_ours(record, own));
        }
    }

    fn message(&self, source: &str, text: String, base: Record) -> Record {
        let (role, prompt) = match source {
            "user" => (
                "user",
                Some(if is_system_injected(&text) {
                    PromptSource::SystemInjected
                } else {
                    PromptSource::Human
                }),
            ),
            "agent" => ("assistant", None),
            _ => ("system", None),
        };
        Record {
            kind: Some(RecordKind::Message),
            key: Some("text".to_owned()),
            role: base.role.clone().or_else(|| Some(role.to_owned())),
            prompt_source: base.prompt_source.or(prompt),
            // An empty message is a record without text, as the one it was exported from.
            text: (!text.is_empty()).then(|| cap_text(text, MAX_TEXT_BYTES)),
            ..base
        }
    }
}

/// An id: a non-empty string of at most [`MAX_ID_CHARS`] printable characters, or a number.
fn id(v: Option<&Value>) -> Option<&str> {
    v.and_then(Value::as_str).filter(|s| {
        !s.is_empty() && s.chars().count() <= MAX_ID_CHARS && !s.chars().any(char::is_control)
    })
}

/// A source or kind name as it may appear in `source_event_kind` and the unknown-type counts.
fn printable_kind(s: &str) -> String {
    crate::text::one_line(s, 32)
}

fn record_kind(s: &str) -> Option<RecordKind> {
    serde_json::from_value(Value::String(s.to_owned())).ok()
}

/// The fields Cairn's export kept in `extra.cairn`, over `base`, for values Cairn knows.
fn with_ours(mut r: Record, ours: Option<&Value>) -> Record {
    let Some(o) = ours else { return r };
    let known = |k: &str| o.get(k).cloned();
    if let Some(role) =
        str_at(o, &["role"]).filter(|r| matches!(*r, "user" | "assistant" | "system" | "tool"))
    {
        r.role = Some(role.to_owned());
    }
    r.prompt_source = known("prompt_source")
        .and_then(|v| serde_json::from_value::<PromptSource>(v).ok())
        .or(r.prompt_source);
    r.tool_kind = known("tool_kind")
        .and_then(|v| serde_json::from_value::<ToolKind>(v).ok())
        .or(r.tool_kind);
    r.outcome = known("outcome")
        .and_then(|v| serde_json::from_value::<Outcome>(v).ok())
        .or(r.outcome);
    r.exit_code = o
        .get("exit_code")
        .and_then(Value::as_i64)
        .and_then(|c| i32::try_from(c).ok())
        .or(r.exit_code);
    if let Some(paths) = o.get("file_paths").and_then(Value::as_array) {
        r.file_paths = paths
            .iter()
            .filter_map(Value::as_str)
            .filter(|p| !p.chars().any(char::is_control))
            .take(MAX_PARTS_PER_STEP)
            .map(|p| cap_text(p.to_owned(), 4096))
            .collect();
    }
    r.is_sidechain = o
        .get("is_sidechain")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    r.is_compaction = o
        .get("is_compaction")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    // A record the agent took back (a rewind) before the export: it comes back taken back,
    // at the time the export says. A time that is none (a number, a word, a kilobyte of
    // digits) reads as absent, as every field of the wrong type does.
    r.retracted_at = str_at(o, &["retracted_at"])
        .filter(|t| t.len() <= MAX_TIME_BYTES && crate::text::parse_rfc3339(t).is_some())
        .map(str::to_owned)
        .or(r.retracted_at);
    r
}

/// The longest time read back: RFC 3339 with nanoseconds and an offset is 35 bytes.
const MAX_TIME_BYTES: usize = 64;

/// A token count above this is read as this. A trillion is far past any real session, and
/// keeps the store's sums within SQLite's 64-bit integers over every step of the largest file
/// Cairn imports (a few million steps at most in 64 MiB).
pub const MAX_TOKENS: u64 = 1_000_000_000_000;

/// A token count: a non-negative integer, capped at [`MAX_TOKENS`]. A negative, fractional or
/// non-numeric value is no count (0), as every field of the wrong type reads as absent.
fn token_count(v: Option<&Value>) -> u64 {
    v.and_then(Value::as_u64).map_or(0, |n| n.min(MAX_TOKENS))
}

/// Usage as ATIF counts it (`prompt` includes the `cached` tokens) in Cairn's terms (`input`
/// excludes the cache reads); `None` when no count is known.
fn usage_from(prompt: u64, completion: u64, cached: u64) -> Option<TokenUsage> {
    let usage = TokenUsage {
        input: prompt.saturating_sub(cached),
        output: completion,
        cache_read: cached,
        ..TokenUsage::default()
    };
    (!usage.is_unknown()).then_some(usage)
}

/// A step's `metrics`: the tokens of the model call it records, exactly from Cairn's own
/// `extra.cairn.tokens` when an export of Cairn's wrote them, else as ATIF counts them.
fn step_usage(m: &Value) -> Option<TokenUsage> {
    cairn_tokens(m).or_else(|| {
        usage_from(
            token_count(m.get("prompt_tokens")),
            token_count(m.get("completion_tokens")),
            token_count(m.get("cached_tokens")),
        )
    })
}

/// The counts Cairn's own export keeps in a metrics object's `extra.cairn.tokens` (ATIF has no
/// field for cache writes or reasoning tokens); `None` when there are none.
fn cairn_tokens(m: &Value) -> Option<TokenUsage> {
    let t = m.get("extra")?.get("cairn")?.get("tokens")?;
    let usage = TokenUsage {
        input: token_count(t.get("input")),
        output: token_count(t.get("output")),
        cache_creation: token_count(t.get("cache_creation")),
        cache_read: token_count(t.get("cache_read")),
        reasoning: token_count(t.get("reasoning")),
    };
    (!usage.is_unknown()).then_some(usage)
}

/// A trajectory's `final_metrics`: Cairn's own export keeps the session's usage exactly in
/// `extra.cairn.tokens`; else the totals ATIF defines.
fn final_usage(m: &Value) -> Option<TokenUsage> {
    if let Some(usage) = cairn_tokens(m) {
        return Some(usage);
    }
    usage_from(
        token_count(m.get("total_prompt_tokens")),
        token_count(m.get("total_completion_tokens")),
        token_count(m.get("total_cached_tokens")),
    )
}

impl DocumentParser for AtifParser {
    fn units_at(&self) -> &'static [&'static str] {
        &["steps"]
    }

    fn split<'d>(&self, doc: Shallow<'d>) -> (Value, KeyedUnits<'d>) {
        let Shallow { mut doc, units } = doc;
        if let Some(o) = doc.as_object_mut() {
            o.remove("steps");
            // Embedded sub-agents are sessions of their own (`cairn import` reads each one).
            o.remove("subagent_trajectories");
        }
        let units = units
            .into_iter()
            .flatten()
            .take(MAX_STEPS)
            .enumerate()
            .map(|(i, s)| {
                let key = match s.get("step_id") {
                    Some(Value::Number(n)) => format!("step:{n}"),
                    Some(Value::String(v)) if id(Some(&Value::String(v.clone()))).is_some() => {
                        format!("step:{v}")
                    }
                    _ => format!("index:{i}"),
                };
                (key, s)
            });
        (doc, Box::new(units))
    }
}

impl super::UnitParser for AtifParser {
    fn header(&mut self, header: &Value, out: &mut LineOutput) {
        if header.is_object() {
            self.read_header(header, out);
        } else {
            count_unknown(&mut self.meta, "atif:document-not-an-object");
        }
    }

    fn unit(&mut self, key: &str, unit: &Value, out: &mut LineOutput) {
        if unit.is_object() {
            self.step(key, unit, out);
        } else {
            count_unknown(&mut self.meta, "atif:step-not-an-object");
        }
    }

    fn meta(&self) -> &SessionMeta {
        &self.meta
    }

    fn save(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }
}

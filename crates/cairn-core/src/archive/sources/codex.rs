//! Codex CLI rollouts (`~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`).
//!
//! TRAE CLI (`traex`), a fork of Codex, writes the same rollouts (see [`traex`](super::traex)):
//! this parser reads both, under the agent it is made for.
//!
//! Current rollouts wrap every line as `{timestamp, type, payload}`; early Rust builds wrote bare
//! response items after a `{id, timestamp, instructions, git}` header. Both are read. User and
//! assistant text appears twice (a `response_item` message and an `event_msg`); only the
//! response item is used: it is what the model was sent, and Codex writes it for every input
//! it takes (a prompt, input injected mid-turn), the `user_message` event beside it (before or
//! after) being the same text for its UI. A `user_message` event with no response item beside
//! it is a piece of a rollout (the schema fixture's trimmed lines), not a prompt Codex kept
//! only there. `apply_patch` is recognised in all three of its forms: a function
//! call with `{"input"|"patch": …}`, a freeform custom tool call, and a heredoc inside a shell
//! command.

use std::collections::{BTreeMap, BTreeSet};

use std::borrow::Cow;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{
    LineOutput, MAX_INPUT_STRING_BYTES, MAX_TEXT_BYTES, MAX_TOOL_OUTPUT_BYTES, SessionMeta,
    SourceParser, cap_json, cap_text, count_unknown, exit_code_in, is_system_injected,
    line_timestamp, note_timestamp, outcome_for, patch_paths, set_latest, set_once, str_at,
    text_value, u64_at,
};
use crate::archive::{Agent, PromptSource, Record, RecordKind, TokenUsage, ToolKind};

/// Events read for nothing: the text of `user_message` and `agent_message` is read from the
/// response item Codex writes with each (see the module's note).
const KNOWN_SILENT_EVENTS: [&str; 12] = [
    "user_message",
    "agent_message",
    "agent_reasoning",
    "agent_reasoning_raw_content",
    "task_started",
    "task_complete",
    "turn_started",
    "turn_complete",
    "context_compacted",
    "exec_command_end",
    "patch_apply_end",
    "item_completed",
];

#[derive(Debug, Serialize, Deserialize)]
pub struct CodexParser {
    /// The agent whose rollouts these are (Codex or TRAE CLI): set at every resume, never saved.
    #[serde(skip, default = "codex")]
    agent: Agent,
    meta: SessionMeta,
    /// call id → tool name, for calls whose output has not been seen yet.
    pending_calls: BTreeMap<String, String>,
    /// Prompts handed to `spawn_agent`: the sub-agent's echo of them is not a human prompt.
    spawn_prompts: BTreeSet<String>,
    /// The cwd of the current turn (`turn_context` moves it); the session keeps its first.
    current_cwd: Option<String>,
}

fn codex() -> Agent {
    Agent::Codex
}

impl CodexParser {
    /// A parser of `agent`'s rollouts, resumed from its saved state.
    pub fn resume(agent: Agent, saved: Option<&Value>) -> Result<Self, serde_json::Error> {
        let mut parser = match saved {
            Some(state) => serde_json::from_value(state.clone())?,
            None => CodexParser {
                agent,
                meta: SessionMeta::default(),
                pending_calls: BTreeMap::new(),
                spawn_prompts: BTreeSet::new(),
                current_cwd: None,
            },
        };
        parser.agent = agent;
        Ok(parser)
    }

    /// The `<agent>:<kind>` every record of this parser names as its source.
    fn kind(&self, kind: &str) -> String {
        format!("{}:{kind}", self.agent)
    }

    fn is_subagent_thread(&self) -> bool {
        self.meta.thread_source.as_deref() == Some("subagent")
    }

    fn session_meta(&mut self, p: &Value) {
        // Rollouts can hold several meta lines (resumes, copied history); the first one speaks
        // for the thread.
        let first = self.meta.session_id.is_none();
        let m = &mut self.meta;
        set_once(
            &mut m.session_id,
            str_at(p, &["id"]).or_else(|| str_at(p, &["session_id"])),
        );
        set_once(&mut m.provider, str_at(p, &["model_provider"]));
        set_once(&mut m.tool_version, str_at(p, &["cli_version"]));
        set_once(&mut m.cwd, str_at(p, &["cwd"]));
        set_once(&mut m.git_branch, str_at(p, &["git", "branch"]));
        set_once(&mut m.git_commit, str_at(p, &["git", "commit_hash"]));
        set_once(&mut m.repository_url, str_at(p, &["git", "repository_url"]));
        let spawn_parent = str_at(
            p,
            &["source", "subagent", "thread_spawn", "parent_thread_id"],
        );
        let is_subagent = p.get("source").and_then(|s| s.get("subagent")).is_some();
        // How the thread was started: `cli`, `vscode`, `exec` (codex exec), `mcp`, or a sub-agent.
        let thread_source = str_at(p, &["thread_source"])
            .or(if is_subagent { Some("subagent") } else { None })
            .or_else(|| str_at(p, &["source"]));
        set_once(&mut m.thread_source, thread_source);
        // The envelope's own timestamp is the one reported when malformed.
        let ts = str_at(p, &["timestamp"]).and_then(crate::text::rfc3339);
        if !first {
            note_timestamp(m, ts.as_deref());
            return;
        }
        if is_subagent {
            set_once(&mut m.relation, Some("subagent"));
        } else if str_at(p, &["forked_from_id"]).is_some() {
            set_once(&mut m.relation, Some("fork"));
        }
        set_once(
            &mut m.parent_session_id,
            spawn_parent
                .or_else(|| str_at(p, &["parent_thread_id"]))
                .or_else(|| str_at(p, &["forked_from_id"])),
        );
        note_timestamp(m, ts.as_deref());
    }

    fn response_item(&mut self, p: &Value, base: Record, out: &mut LineOutput) {
        let item_type = str_at(p, &["type"]).unwrap_or("unknown");
        let mut rec = Record {
            source_event_kind: self.kind(&format!("response_item:{item_type}")),
            ..base
        };
        match item_type {
            "message" => {
                let role = str_at(p, &["role"]).unwrap_or("assistant");
                if matches!(role, "developer" | "system") {
                    return;
                }
                let Some(text) = p.get("content").and_then(text_value) else {
                    return;
                };
                rec.kind = Some(RecordKind::Message);
                rec.prompt_source = (role == "user").then(|| self.prompt_source(&text));
                rec.role = Some(role.to_owned());
                rec.text = Some(cap_text(text, MAX_TEXT_BYTES));
            }
            // Another agent's message to this one (multi-agent Codex: `author` → `recipient`),
            // a task from its parent or a child's report: input, never this agent's words. The
            // part in `encrypted_content` stays unread.
            "agent_message" => {
                let Some(text) = p.get("content").and_then(text_value) else {
                    return;
                };
                rec.kind = Some(RecordKind::Message);
                rec.role = Some("user".to_owned());
                rec.prompt_source = Some(if is_system_injected(&text) {
                    PromptSource::SystemInjected
                } else {
                    PromptSource::SpawnedAgent
                });
                rec.text = Some(cap_text(text, MAX_TEXT_BYTES));
            }
            "reasoning" => {
                let text = p
                    .get("summary")
                    .and_then(text_value)
                    .or_else(|| p.get("content").and_then(text_value));
                let Some(text) = text else { return };
                rec.kind = Some(RecordKind::Reasoning);
                rec.role = Some("assistant".to_owned());
                rec.text = Some(cap_text(text, MAX_TEXT_BYTES));
            }
            "function_call"
            | "custom_tool_call"
            | "local_shell_call"
            | "web_search_call"
            | "tool_search_call"
            | "image_generation_call" => {
                let name = match item_type {
                    "local_shell_call" => "local_shell",
                    "web_search_call" => "web_search_call",
                    "tool_search_call" => "tool_search",
                    "image_generation_call" => "image_generation",
                    _ => str_at(p, &["name"]).unwrap_or("unknown"),
                }
                .to_owned();
                let raw_input = ["arguments", "input", "action"]
                    .iter()
                    .find_map(|k| p.get(*k).filter(|v| !v.is_null()));
                let mut input = raw_input.map(|v| match v {
                    Value::String(s) => serde_json::from_str(s).unwrap_or_else(|_| v.clone()),
                    other => other.clone(),
                });
                let call_id = str_at(p, &["call_id"])
                    .or_else(|| str_at(p, &["id"]))
                    .map(str::to_owned);
                if let Some(id) = &call_id {
                    super::remember_call(&mut self.pending_calls, id.clone(), name.clone());
                }
                if name == "spawn_agent"
                    && let Some(prompt) = input.as_ref().and_then(|i| {
                        ["message", "prompt", "task"]
                            .iter()
                            .find_map(|k| str_at(i, &[k]))
                    })
                {
                    self.spawn_prompts.insert(prompt.trim().to_owned());
                }
                rec.file_paths = input
                    .as_ref()
                    .map(|i| edited_paths(&name, i))
                    .unwrap_or_default();
                if let Some(i) = input.as_mut() {
                    cap_json(i, MAX_INPUT_STRING_BYTES);
                }
                rec.kind = Some(RecordKind::ToolCall);
                rec.role = Some("assistant".to_owned());
                rec.tool_kind = Some(if !rec.file_paths.is_empty() {
                    ToolKind::FileEdit
                } else if is_code_mode_command(&name, input.as_ref()) {
                    ToolKind::Exec
                } else {
                    ToolKind::of(&name)
                });
                rec.tool_name = Some(name);
                rec.tool_input = input;
                rec.call_id = call_id;
            }
            "function_call_output" | "custom_tool_call_output" | "tool_search_output" => {
                let call_id = str_at(p, &["call_id"]).map(str::to_owned);
                let name = call_id
                    .as_ref()
                    .and_then(|id| self.pending_calls.remove(id));
                let (text, json_exit) = output_text(p.get("output"));
                rec.kind = Some(RecordKind::ToolResult);
                rec.exit_code = json_exit.or_else(|| text.as_deref().and_then(exit_code_in));
                rec.outcome = rec
                    .exit_code
                    .map(|code| outcome_for(code, text.as_deref().unwrap_or("")));
                rec.tool_kind = name.as_deref().map(ToolKind::of);
                rec.tool_name = name;
                rec.text = text.map(|t| cap_text(t, MAX_TOOL_OUTPUT_BYTES));
                rec.call_id = call_id;
            }
            "ghost_snapshot" | "compaction" => return,
            other => {
                count_unknown(&mut self.meta, &format!("response_item:{other}"));
                return;
            }
        }
        out.records.push(rec);
    }

    fn event_msg(&mut self, p: &Value, base: Record, out: &mut LineOutput) {
        let event = str_at(p, &["type"]).unwrap_or("unknown");
        let text = match event {
            "token_count" => {
                if let Some(total) = p.get("info").and_then(|i| i.get("total_token_usage")) {
                    self.meta.cumulative_usage = Some(TokenUsage {
                        input: u64_at(total, "input_tokens")
                            .saturating_sub(u64_at(total, "cached_input_tokens")),
                        output: u64_at(total, "output_tokens"),
                        cache_creation: u64_at(total, "cache_write_input_tokens"),
                        cache_read: u64_at(total, "cached_input_tokens"),
                        reasoning: u64_at(total, "reasoning_output_tokens"),
                    });
                }
                None
            }
            "thread_name_updated" => {
                set_latest(&mut self.meta.title, str_at(p, &["thread_name"]));
                None
            }
            "error" => str_at(p, &["message"])
                .or_else(|| str_at(p, &["error", "message"]))
                .map(|m| format!("error: {m}")),
            "turn_aborted" => Some(format!(
                "turn aborted: {}",
                str_at(p, &["reason"]).unwrap_or("unknown reason")
            )),
            e if KNOWN_SILENT_EVENTS.contains(&e) => None,
            other => {
                count_unknown(&mut self.meta, &format!("event_msg:{other}"));
                None
            }
        };
        if let Some(text) = text {
            out.records.push(Record {
                kind: Some(RecordKind::Event),
                source_event_kind: self.kind(&format!("event_msg:{event}")),
                text: Some(cap_text(text, MAX_TEXT_BYTES)),
                ..base
            });
        }
    }

    fn prompt_source(&mut self, text: &str) -> PromptSource {
        if is_system_injected(text) {
            PromptSource::SystemInjected
        } else if self.is_subagent_thread() || self.spawn_prompts.remove(text.trim()) {
            PromptSource::SpawnedAgent
        } else {
            PromptSource::Human
        }
    }
}

impl SourceParser for CodexParser {
    fn agent(&self) -> Agent {
        self.agent
    }

    fn meta(&self) -> &SessionMeta {
        &self.meta
    }

    fn save(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }

    fn parse_line(&mut self, raw: &str, out: &mut LineOutput) -> Result<(), serde_json::Error> {
        let line: Envelope<'_> = serde_json::from_str(raw)?;
        let timestamp = line_timestamp(&mut self.meta, line.timestamp.as_deref(), out);
        let timestamp = timestamp.as_deref();
        note_timestamp(&mut self.meta, timestamp);
        let base = Record {
            timestamp: timestamp.map(str::to_owned),
            cwd: self.current_cwd.clone().or_else(|| self.meta.cwd.clone()),
            git_branch: self.meta.git_branch.clone(),
            ..Record::default()
        };
        // Each payload is read into the smallest shape that holds what Cairn uses: a session
        // meta line carries the whole system prompt, a compaction the whole history.
        match (line.kind.as_deref(), line.payload) {
            (Some("session_meta"), Some(p)) => {
                let meta: Slim = serde_json::from_str(p.get())?;
                self.session_meta(&serde_json::to_value(meta)?);
            }
            (Some("turn_context"), Some(p)) => {
                let ctx: Slim = serde_json::from_str(p.get())?;
                set_latest(
                    &mut self.meta.model,
                    ctx.model.as_deref().or(ctx.model_slug.as_deref()),
                );
                set_once(&mut self.meta.cwd, ctx.cwd.as_deref());
                set_latest(&mut self.current_cwd, ctx.cwd.as_deref());
            }
            (Some("response_item"), Some(p)) => {
                let item: Value = serde_json::from_str(p.get())?;
                self.response_item(&item, base, out);
            }
            (Some("event_msg"), Some(p)) => {
                let event: Slim = serde_json::from_str(p.get())?;
                self.event_msg(&serde_json::to_value(event)?, base, out);
            }
            (Some("compacted"), Some(p)) => {
                let compacted: Slim = serde_json::from_str(p.get())?;
                let text = compacted
                    .message
                    .as_ref()
                    .and_then(Value::as_str)
                    .filter(|m| !m.is_empty());
                out.records.push(Record {
                    kind: Some(RecordKind::Event),
                    source_event_kind: self.kind("compacted"),
                    text: Some(cap_text(
                        text.unwrap_or("Conversation compacted").to_owned(),
                        MAX_TEXT_BYTES,
                    )),
                    is_compaction: true,
                    ..base
                });
            }
            // Another agent's message to this one, as multi-agent Codex persists it: the
            // receiving agent's input, read as an `agent_message` item is.
            (Some("inter_agent_communication"), Some(p)) => {
                let message: Value = serde_json::from_str(p.get())?;
                let item = serde_json::json!({
                    "type": "agent_message",
                    "content": message.get("content").cloned().unwrap_or(Value::Null),
                });
                let before = out.records.len();
                self.response_item(&item, base, out);
                let kind = self.kind("inter_agent_communication");
                for r in &mut out.records[before..] {
                    r.source_event_kind.clone_from(&kind);
                }
            }
            // Early Rust rollouts: bare response items after a header line.
            (Some(t), None) if is_response_item_type(t) => {
                let item: Value = serde_json::from_str(raw)?;
                self.response_item(&item, base, out);
            }
            (None, None) if line.record_type.as_deref() == Some("state") => {}
            (None, None) if line.id.is_some() => {
                let header: Slim = serde_json::from_str(raw)?;
                self.session_meta(&serde_json::to_value(header)?);
            }
            (Some(t), _) => count_unknown(&mut self.meta, t),
            (None, _) => count_unknown(&mut self.meta, "<untyped>"),
        }
        Ok(())
    }
}

/// The envelope of a rollout line; the payload stays unparsed until its type is known.
#[derive(Deserialize)]
struct Envelope<'a> {
    #[serde(borrow, default)]
    timestamp: Option<Cow<'a, str>>,
    #[serde(rename = "type", borrow, default)]
    kind: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    payload: Option<&'a serde_json::value::RawValue>,
    #[serde(borrow, default)]
    record_type: Option<Cow<'a, str>>,
    #[serde(default)]
    id: Option<Value>,
}

/// Every payload field Cairn reads from session meta, turn context, event and compaction
/// lines; the rest (system prompts, replacement histories, tool schemas) is skipped unread.
#[derive(Deserialize, Serialize, Default)]
struct Slim {
    #[serde(rename = "type", default, skip_serializing_if = "Option::is_none")]
    kind: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    session_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    timestamp: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    cwd: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    model: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    model_slug: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    model_provider: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    cli_version: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    thread_source: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    forked_from_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    parent_thread_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    git: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    source: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    info: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    thread_name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    message: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    error: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    reason: Option<String>,
}

fn is_response_item_type(t: &str) -> bool {
    matches!(
        t,
        "message"
            | "reasoning"
            | "function_call"
            | "function_call_output"
            | "custom_tool_call"
            | "custom_tool_call_output"
            | "local_shell_call"
            | "web_search_call"
    )
}

/// The text of a tool output and, for the older JSON form, its exit code.
fn output_text(output: Option<&Value>) -> (Option<String>, Option<i32>) {
    match output {
        Some(Value::String(s)) => {
            // Older builds: a JSON document `{"output": "...", "metadata": {"exit_code": 0}}`.
            if s.starts_with('{')
                && let Ok(doc) = serde_json::from_str::<Value>(s)
                && let Some(inner) = str_at(&doc, &["output"])
            {
                let code = doc
                    .get("metadata")
                    .and_then(|m| m.get("exit_code"))
                    .and_then(Value::as_i64)
                    .and_then(|c| i32::try_from(c).ok());
                return (Some(inner.to_owned()), code);
            }
            ((!s.is_empty()).then(|| s.clone()), None)
        }
        Some(Value::Object(_)) => (
            output.and_then(|o| str_at(o, &["text"])).map(str::to_owned),
            None,
        ),
        Some(v @ Value::Array(_)) => (text_value(v), None),
        _ => (None, None),
    }
}

/// Paths an `apply_patch` writes, in whichever of its three forms it came.
/// A code-mode program (Codex 0.144+: one `exec` tool whose input is JavaScript calling the
/// other tools) that runs a command.
fn is_code_mode_command(tool: &str, input: Option<&Value>) -> bool {
    tool == "exec"
        && matches!(input, Some(Value::String(js)) if js.contains("exec_command(") || js.contains("shell_command("))
}

fn edited_paths(tool: &str, input: &Value) -> Vec<String> {
    let patch = match (tool, input) {
        ("apply_patch", Value::String(s)) => Some(s.as_str()),
        ("apply_patch", obj) => str_at(obj, &["input"]).or_else(|| str_at(obj, &["patch"])),
        _ => None,
    };
    if let Some(patch) = patch {
        return patch_paths(patch);
    }
    // Code mode: a JavaScript program calling `tools.apply_patch(…)`, its patch a string
    // literal (line breaks escaped) or a template literal.
    if let ("exec", Value::String(js)) = (tool, input)
        && js.contains("apply_patch(")
    {
        return patch_paths(&js.replace("\\n", "\n"));
    }
    // A heredoc inside a shell command: `bash -lc "apply_patch <<'PATCH' ..."`.
    if matches!(ToolKind::of(tool), ToolKind::Exec) {
        let command = match input.get("command").or_else(|| input.get("cmd")) {
            Some(Value::String(s)) => s.clone(),
            Some(Value::Array(argv)) => argv
                .iter()
                .filter_map(Value::as_str)
                .collect::<Vec<_>>()
                .join(" "),
            _ => String::new(),
        };
        if command.contains("apply_patch") && command.contains("*** Begin Patch") {
            return patch_paths(&command);
        }
    }
    Vec::new()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parse(lines: &[Value]) -> (CodexParser, LineOutput) {
        let mut parser = CodexParser::resume(Agent::Codex, None).unwrap();
        let mut out = LineOutput::default();
        for line in lines {
            parser.parse_line(&line.to_string(), &mut out).unwrap();
        }
        (parser, out)
    }

    fn item(payload: Value) -> Value {
        json!({"timestamp":"2026-05-07T09:00:02Z","type":"response_item","payload":payload})
    }

    /// A prompt is stored once, from its response item, whichever of the two lines Codex
    /// wrote first: in the real rollout shapes of the fixture (`tests/fixtures/codex/small.jsonl`,
    /// Codex 0.146, the event before the item) and of TRAE CLI's (the item first). Reading the
    /// event too would store every prompt twice.
    #[test]
    fn a_prompt_is_one_record_from_its_response_item_not_its_event() {
        let fixtures =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures");
        for (rel, prompt) in [
            ("codex/small.jsonl", "List the files"),
            (
                "traex/sessions/2026/08/01/rollout-2026-08-01T18-07-03-019fbcca-9fd4-7d20-83dc-0762b2f839b3.jsonl",
                "Explore the parser package.",
            ),
        ] {
            let text = std::fs::read_to_string(fixtures.join(rel)).unwrap();
            let lines: Vec<Value> = text
                .lines()
                .map(|l| serde_json::from_str(l).unwrap())
                .collect();
            let events = lines
                .iter()
                .filter(|l| {
                    l["type"] == "event_msg"
                        && l["payload"]["type"] == "user_message"
                        && l["payload"]["message"] == prompt
                })
                .count();
            assert_eq!(events, 1, "{rel}: the fixture carries the prompt's event");
            let (_, out) = parse(&lines);
            let stored: Vec<&Record> = out
                .records
                .iter()
                .filter(|r| r.text.as_deref() == Some(prompt))
                .collect();
            assert_eq!(stored.len(), 1, "{rel}: {stored:?}");
            assert_eq!(stored[0].source_event_kind, "codex:response_item:message");
            assert_eq!(stored[0].role.as_deref(), Some("user"));
        }
    }

    #[test]
    fn apply_patch_in_all_three_forms() {
        let patch = "*** Begin Patch\n*** Update File: src/login.rs\n@@\n-a\n+b\n*** End Patch\n";
        let (_, out) = parse(&[
            item(
                json!({"type":"function_call","name":"apply_patch","call_id":"c1","arguments": json!({"input": patch}).to_string()}),
            ),
            item(
                json!({"type":"custom_tool_call","name":"apply_patch","call_id":"c2","input": patch}),
            ),
            item(
                json!({"type":"function_call","name":"shell","call_id":"c3","arguments": json!({"command":["bash","-lc", format!("apply_patch <<'PATCH'\n{patch}PATCH")]}).to_string()}),
            ),
        ]);
        for rec in &out.records {
            assert_eq!(
                rec.file_paths,
                vec!["src/login.rs"],
                "{:?}",
                rec.source_event_kind
            );
            assert_eq!(rec.tool_kind, Some(ToolKind::FileEdit));
        }
    }

    #[test]
    fn outputs_take_call_names_and_exit_codes() {
        let (_, out) = parse(&[
            item(
                json!({"type":"function_call","name":"exec_command","call_id":"call-1","arguments":"{\"cmd\":\"cargo test\"}"}),
            ),
            item(
                json!({"type":"function_call_output","call_id":"call-1","output":"Process exited with code 0"}),
            ),
            item(
                json!({"type":"function_call","name":"shell","call_id":"call-2","arguments":"{\"command\":[\"false\"]}"}),
            ),
            item(
                json!({"type":"function_call_output","call_id":"call-2","output":"{\"output\":\"boom\",\"metadata\":{\"exit_code\":1}}"}),
            ),
        ]);
        assert_eq!(out.records[0].tool_input, Some(json!({"cmd":"cargo test"})));
        assert_eq!(out.records[1].tool_name.as_deref(), Some("exec_command"));
        assert_eq!(out.records[1].exit_code, Some(0));
        assert_eq!(out.records[3].text.as_deref(), Some("boom"));
        assert_eq!(out.records[3].exit_code, Some(1));
    }

    #[test]
    fn prompt_sources_follow_agentlog() {
        let user = |text: &str| {
            item(
                json!({"type":"message","role":"user","content":[{"type":"input_text","text":text}]}),
            )
        };
        let (_, out) = parse(&[
            user(
                "# AGENTS.md instructions\n\n<INSTRUCTIONS>rules</INSTRUCTIONS>\n<environment_context>ctx</environment_context>",
            ),
            user("<environment_context>ctx</environment_context>"),
            item(
                json!({"type":"function_call","name":"spawn_agent","call_id":"s1","arguments":"{\"message\":\"Review tests only\"}"}),
            ),
            user("Review tests only"),
            user("Review tests only"),
            item(json!({"type":"message","role":"developer","content":"sys"})),
        ]);
        let sources: Vec<_> = out.records.iter().map(|r| r.prompt_source).collect();
        assert_eq!(
            sources,
            vec![
                Some(PromptSource::SystemInjected),
                Some(PromptSource::SystemInjected),
                None,
                Some(PromptSource::SpawnedAgent),
                Some(PromptSource::Human),
            ]
        );
    }

    /// Multi-agent Codex hands a task to a child, and a child's report to its parent, as an
    /// `agent_message` item: the receiving agent's input, not its own words.
    #[test]
    fn messages_between_agents_are_input_from_another_agent() {
        let (_, out) = parse(&[
            item(
                json!({"type":"agent_message","author":"/root","recipient":"/root/worker","content":[{"type":"input_text","text":"Task received from parent."},{"type":"encrypted_content","encrypted_content":"c2VhbGVk"}]}),
            ),
            item(
                json!({"type":"agent_message","author":"/root/worker","recipient":"/root","content":[{"type":"input_text","text":"Message Type: FINAL_ANSWER\nPayload:\nFound one allocation issue."}]}),
            ),
            item(json!({"type":"agent_message","author":"/root","content":[]})),
            json!({"timestamp":"2026-05-07T09:00:05Z","type":"inter_agent_communication","payload":{
                "author":"/root","recipient":"/root/worker","other_recipients":[],
                "content":"Also check the migrations.","trigger_turn":true}}),
        ]);
        let got: Vec<_> = out
            .records
            .iter()
            .map(|r| (r.role.as_deref(), r.prompt_source, r.text.as_deref()))
            .collect();
        assert_eq!(
            got,
            vec![
                (
                    Some("user"),
                    Some(PromptSource::SpawnedAgent),
                    Some("Task received from parent.")
                ),
                (
                    Some("user"),
                    Some(PromptSource::SpawnedAgent),
                    Some("Message Type: FINAL_ANSWER\nPayload:\nFound one allocation issue.")
                ),
                (
                    Some("user"),
                    Some(PromptSource::SpawnedAgent),
                    Some("Also check the migrations.")
                ),
            ]
        );
    }

    /// Multi-agent Codex's verbs that talk to agents already running are housekeeping; only
    /// spawning one is a sub-agent.
    #[test]
    fn talking_to_running_agents_is_housekeeping() {
        for name in [
            "send_input",
            "resume_agent",
            "interrupt_agent",
            "list_agents",
            "send_message",
            "followup_task",
            "wait_agent",
        ] {
            assert_eq!(ToolKind::of(name), ToolKind::Housekeeping, "{name}");
        }
        assert_eq!(ToolKind::of("spawn_agent"), ToolKind::SubAgent);
    }

    /// Code mode (Codex 0.144+) wraps the tools in one `exec` whose input is JavaScript: a patch
    /// inside it names its files, a command inside it makes it a command.
    #[test]
    fn code_mode_programs_are_edits_and_commands() {
        let exec = |js: &str| {
            item(json!({"type":"custom_tool_call","call_id":"c","name":"exec","input":js}))
        };
        let (_, out) = parse(&[
            exec(
                "await tools.apply_patch(\"*** Begin Patch\\n*** Update File: src/a.rs\\n@@\\n-a\\n+b\\n*** Add File: src/b.rs\\n+c\\n*** End Patch\\n\");",
            ),
            exec(
                "await tools.apply_patch(`*** Begin Patch\n*** Delete File: old.rs\n*** End Patch`);",
            ),
            exec("const r = await tools.exec_command({cmd: \"cargo test\"}); text(r);"),
            exec("text(1 + 1);"),
        ]);
        let got: Vec<_> = out
            .records
            .iter()
            .map(|r| (r.tool_kind, r.file_paths.clone()))
            .collect();
        assert_eq!(
            got,
            [
                (
                    Some(ToolKind::FileEdit),
                    vec!["src/a.rs".to_owned(), "src/b.rs".to_owned()]
                ),
                (Some(ToolKind::FileEdit), vec!["old.rs".to_owned()]),
                (Some(ToolKind::Exec), vec![]),
                (Some(ToolKind::Other), vec![]),
            ]
        );
    }

    #[test]
    fn subagent_threads_and_meta() {
        let (parser, out) = parse(&[
            json!({"timestamp":"2026-05-07T09:00:00Z","type":"session_meta","payload":{"id":"child","cli_version":"0.146.0","model_provider":"openai","git":{"branch":"feat/x","commit_hash":"abc"},"source":{"subagent":{"thread_spawn":{"parent_thread_id":"parent","depth":1}}}}}),
            json!({"timestamp":"2026-05-07T09:00:01Z","type":"turn_context","payload":{"model":"gpt-5.5","cwd":"/repo"}}),
            item(json!({"type":"message","role":"user","content":"do a thing"})),
            json!({"timestamp":"2026-05-07T09:00:03Z","type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":100,"cached_input_tokens":40,"output_tokens":7,"reasoning_output_tokens":2}}}}),
        ]);
        let m = parser.meta();
        assert_eq!(m.session_id.as_deref(), Some("child"));
        assert_eq!(m.parent_session_id.as_deref(), Some("parent"));
        assert_eq!(m.relation.as_deref(), Some("subagent"));
        assert_eq!(m.git_branch.as_deref(), Some("feat/x"));
        assert_eq!(m.model.as_deref(), Some("gpt-5.5"));
        assert_eq!(m.cwd.as_deref(), Some("/repo"));
        assert_eq!(
            out.records[0].prompt_source,
            Some(PromptSource::SpawnedAgent)
        );
        let usage = m.cumulative_usage.unwrap();
        assert_eq!(
            (usage.input, usage.cache_read, usage.output, usage.reasoning),
            (60, 40, 7, 2)
        );
    }

    #[test]
    fn legacy_bare_items() {
        let (parser, out) = parse(&[
            json!({"id":"old-1","timestamp":"2025-06-01T00:00:00Z","instructions":"","git":{"branch":"main"}}),
            json!({"type":"message","role":"user","content":[{"type":"input_text","text":"hello"}]}),
            json!({"record_type":"state"}),
        ]);
        assert_eq!(parser.meta().session_id.as_deref(), Some("old-1"));
        assert_eq!(out.records.len(), 1);
        assert!(parser.meta().unknown_types.is_empty());
    }
}

//! GitHub Copilot CLI sessions (`~/.copilot/session-state/<id>.jsonl`, and in newer builds
//! `~/.copilot/session-state/<id>/events.jsonl`).
//!
//! Every line is an event `{type, data, id, timestamp, parentId}`. `session.start` names the
//! session, its cwd, branch and model; `session.resume` moves the cwd and branch. A person's
//! prompt is `user.message`; `assistant.message` holds the reply text and its tool requests
//! (arguments an object or a JSON string); `tool.execution_complete` the result;
//! `tool.user_requested` a tool the person ran. Events with an `agentId` (Copilot CLI 1.0.32+)
//! or a `parentToolCallId` in their data (before) belong to an inline sub-agent and are
//! side-chain records. `session.context_changed` moves the cwd and branch. Tokens: each
//! assistant message reports its output tokens; `session.shutdown` the session's totals
//! (`tokenDetails`, else each model's `modelMetrics` usage).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::edited_path;
use super::{
    LineOutput, MAX_INPUT_STRING_BYTES, MAX_TEXT_BYTES, MAX_TOOL_OUTPUT_BYTES, SessionMeta,
    SourceParser, cap_json, cap_text, count_unknown, is_system_injected, line_timestamp,
    note_timestamp, set_latest, set_once, str_at, text_value, u64_at,
};
use crate::archive::discover::{DirOrigin, FoundFile};
use crate::archive::{Agent, Outcome, PromptSource, Record, RecordKind, TokenUsage, ToolKind};

/// The variable naming Copilot's home (AgentsView's name); sessions are in its `session-state`.
pub const ENV_DIR: &str = "COPILOT_DIR";

/// Where Copilot CLI keeps its sessions (the same on Linux and macOS): `$COPILOT_DIR/session-state`
/// when set, else under Copilot's own `$COPILOT_HOME` (which stands for `~/.copilot`), else
/// `~/.copilot/session-state`.
pub fn locations(
    env: impl Fn(&str) -> Option<PathBuf>,
    home: Option<&Path>,
) -> Vec<(PathBuf, DirOrigin)> {
    crate::archive::discover::env_or_agent_home(
        env,
        ENV_DIR,
        "session-state",
        home,
        &[(".copilot/session-state", "COPILOT_HOME", "session-state")],
    )
}

/// A `.jsonl` under a Copilot source dir is a session: `<id>.jsonl` (flat) or
/// `<id>/events.jsonl` (per directory). Nothing else Copilot writes there is JSONL.
pub fn classify(path: &Path) -> Option<FoundFile> {
    path.file_stem()?.to_str()?;
    Some(FoundFile::main(Agent::Copilot, path))
}

/// Whether a transcript's path is Copilot's (for the hook, given only a path).
pub fn owns_path(path: &Path) -> bool {
    path.to_string_lossy().contains("/.copilot/session-state/")
}

/// Event types that carry no record but are known (progress, routing, billing).
const KNOWN_SILENT_TYPES: [&str; 9] = [
    "tool.execution_start",
    "tool.execution_partial_result",
    "assistant.turn_start",
    "assistant.turn_end",
    "assistant.message_delta",
    "session.usage_checkpoint",
    "session.auto_mode_resolved",
    "hook.start",
    "hook.end",
];

#[derive(Debug, Default, Serialize, Deserialize)]
pub struct CopilotParser {
    meta: SessionMeta,
    /// call id → tool name, for requests whose result has not been seen yet.
    pending_calls: BTreeMap<String, String>,
    /// The cwd and branch of the latest start or resume; the session keeps its first.
    current_cwd: Option<String>,
    current_branch: Option<String>,
    /// Output tokens summed over assistant messages (the only per-message figure Copilot writes).
    output_tokens: u64,
    /// The totals of the latest `session.shutdown`.
    shutdown_usage: Option<TokenUsage>,
}

impl CopilotParser {
    pub fn resume(saved: Option<&Value>) -> Result<Self, serde_json::Error> {
        let mut parser = match saved {
            Some(state) => serde_json::from_value(state.clone())?,
            None => CopilotParser::default(),
        };
        parser
            .meta
            .provider
            .get_or_insert_with(|| "github".to_owned());
        Ok(parser)
    }

    fn context(&mut self, ctx: Option<&Value>) {
        let Some(ctx) = ctx else { return };
        let m = &mut self.meta;
        set_once(&mut m.cwd, str_at(ctx, &["cwd"]));
        set_once(&mut m.git_branch, str_at(ctx, &["branch"]));
        set_once(&mut m.git_commit, str_at(ctx, &["headCommit"]));
        if m.repository_url.is_none()
            && let (Some(host), Some(repo)) = (
                str_at(ctx, &["repositoryHost"]),
                str_at(ctx, &["repository"]),
            )
            && is_plain_name(host)
            && repo.split('/').count() == 2
            && repo.split('/').all(is_plain_name)
        {
            m.repository_url = Some(format!("https://{host}/{repo}"));
        }
        set_latest(&mut self.current_cwd, str_at(ctx, &["cwd"]));
        set_latest(&mut self.current_branch, str_at(ctx, &["branch"]));
    }

    fn refresh_usage(&mut self) {
        let mut usage = self.shutdown_usage.unwrap_or_default();
        usage.output = usage.output.max(self.output_tokens);
        self.meta.cumulative_usage = (usage != TokenUsage::default()).then_some(usage);
    }

    fn tool_call(&mut self, req: &Value, base: &Record) -> Record {
        let name = str_at(req, &["name"]).unwrap_or("unknown").to_owned();
        let mut input = req.get("arguments").map(|v| match v {
            Value::String(s) => serde_json::from_str(s).unwrap_or_else(|_| v.clone()),
            other => other.clone(),
        });
        let call_id = str_at(req, &["toolCallId"]).map(str::to_owned);
        if let Some(id) = &call_id {
            super::remember_call(&mut self.pending_calls, id.clone(), name.clone());
        }
        let kind = tool_kind(&name);
        let file_paths = edited_path(kind, input.as_ref(), &["path", "file_path", "filePath"]);
        if let Some(i) = input.as_mut() {
            cap_json(i, MAX_INPUT_STRING_BYTES);
        }
        Record {
            kind: Some(RecordKind::ToolCall),
            source_event_kind: "copilot:assistant.message:tool_request".to_owned(),
            role: Some("assistant".to_owned()),
            tool_kind: Some(kind),
            tool_name: Some(name),
            tool_input: input,
            call_id,
            file_paths,
            ..base.clone()
        }
    }

    fn event(&mut self, kind: &str, data: &Value, base: Record, out: &mut LineOutput) {
        let push = |out: &mut LineOutput, rec: Record| out.records.push(rec);
        let event_text = |text: String| Record {
            kind: Some(RecordKind::Event),
            source_event_kind: format!("copilot:{kind}"),
            text: Some(cap_text(text, MAX_TEXT_BYTES)),
            ..base.clone()
        };
        match kind {
            "session.start" => {
                let m = &mut self.meta;
                set_once(&mut m.session_id, str_at(data, &["sessionId"]));
                set_once(&mut m.tool_version, str_at(data, &["copilotVersion"]));
                set_latest(&mut m.model, str_at(data, &["selectedModel"]));
                let start = str_at(data, &["startTime"]).and_then(crate::text::rfc3339);
                note_timestamp(m, start.as_deref());
                self.context(data.get("context"));
            }
            "session.resume" => {
                set_latest(&mut self.meta.model, str_at(data, &["selectedModel"]));
                self.context(data.get("context"));
            }
            "session.model_change" => {
                set_latest(&mut self.meta.model, str_at(data, &["newModel"]));
            }
            "user.message" => {
                let Some(text) = data.get("content").and_then(text_value) else {
                    return;
                };
                // `source` names a message no person typed: `skill-…` a hidden skill injection,
                // `agent-…` another agent's prompt; autopilot writes its own continuations.
                let origin = str_at(data, &["source"]).unwrap_or("");
                let autopilot = data.get("isAutopilotContinuation").and_then(Value::as_bool);
                let source = if base.is_sidechain || origin.starts_with("agent-") {
                    PromptSource::SpawnedAgent
                } else if is_system_injected(&text)
                    || origin.starts_with("skill-")
                    || autopilot == Some(true)
                {
                    PromptSource::SystemInjected
                } else {
                    PromptSource::Human
                };
                push(
                    out,
                    Record {
                        kind: Some(RecordKind::Message),
                        source_event_kind: "copilot:user.message".to_owned(),
                        role: Some("user".to_owned()),
                        prompt_source: Some(source),
                        text: Some(cap_text(text, MAX_TEXT_BYTES)),
                        ..base
                    },
                );
            }
            "assistant.message" => {
                set_latest(&mut self.meta.model, str_at(data, &["model"]));
                let message_id = str_at(data, &["messageId"]).map(str::to_owned);
                let base = Record {
                    message_id: message_id.clone(),
                    ..base
                };
                if let Some(text) = data.get("content").and_then(text_value) {
                    push(
                        out,
                        Record {
                            kind: Some(RecordKind::Message),
                            source_event_kind: "copilot:assistant.message".to_owned(),
                            role: Some("assistant".to_owned()),
                            text: Some(cap_text(text, MAX_TEXT_BYTES)),
                            ..base.clone()
                        },
                    );
                }
                if let Some(reqs) = data.get("toolRequests").and_then(Value::as_array) {
                    for (i, req) in reqs.iter().enumerate() {
                        let mut rec = self.tool_call(req, &base);
                        rec.block = u32::try_from(i + 1).unwrap_or(u32::MAX);
                        push(out, rec);
                    }
                }
                self.output_tokens = self
                    .output_tokens
                    .saturating_add(u64_at(data, "outputTokens"));
                self.refresh_usage();
            }
            "assistant.reasoning" => {
                if let Some(text) = data.get("content").and_then(text_value) {
                    push(
                        out,
                        Record {
                            kind: Some(RecordKind::Reasoning),
                            source_event_kind: "copilot:assistant.reasoning".to_owned(),
                            role: Some("assistant".to_owned()),
                            text: Some(cap_text(text, MAX_TEXT_BYTES)),
                            ..base
                        },
                    );
                }
            }
            "tool.execution_complete" => {
                let call_id = str_at(data, &["toolCallId"]).map(str::to_owned);
                let name = call_id
                    .as_ref()
                    .and_then(|id| self.pending_calls.remove(id));
                let result = data.get("result");
                let text = result
                    .and_then(|r| r.get("content"))
                    .and_then(text_value)
                    .or_else(|| str_at(data, &["error", "message"]).map(str::to_owned));
                let outcome = match data.get("success").and_then(Value::as_bool) {
                    Some(true) => Some(Outcome::Succeeded),
                    Some(false) => Some(Outcome::Failed),
                    None => None,
                };
                push(
                    out,
                    Record {
                        kind: Some(RecordKind::ToolResult),
                        source_event_kind: "copilot:tool.execution_complete".to_owned(),
                        tool_kind: name.as_deref().map(tool_kind),
                        tool_name: name,
                        text: text.map(|t| cap_text(t, MAX_TOOL_OUTPUT_BYTES)),
                        call_id,
                        outcome,
                        ..base
                    },
                );
            }
            "subagent.started" | "subagent.completed" | "subagent.failed" => {
                let who = str_at(data, &["agentDisplayName"])
                    .or_else(|| str_at(data, &["agentName"]))
                    .unwrap_or("sub-agent");
                let what = kind.strip_prefix("subagent.").unwrap_or(kind);
                push(out, event_text(format!("{who} {what}")));
            }
            "session.truncation" => {
                let removed = u64_at(data, "messagesRemovedDuringTruncation");
                let mut rec = event_text(format!(
                    "Conversation truncated ({removed} messages removed)"
                ));
                rec.is_compaction = true;
                push(out, rec);
            }
            "session.compaction_complete" => {
                if data.get("success").and_then(Value::as_bool) == Some(false) {
                    let why = str_at(data, &["error"]).unwrap_or("unknown error");
                    push(out, event_text(format!("compaction failed: {why}")));
                    return;
                }
                let removed = u64_at(data, "messagesRemoved");
                let mut rec = event_text(match str_at(data, &["summaryContent"]) {
                    Some(summary) if !summary.is_empty() => summary.to_owned(),
                    _ => format!("Conversation compacted ({removed} messages removed)"),
                });
                rec.is_compaction = true;
                push(out, rec);
            }
            // The working directory or branch moved during the session.
            "session.context_changed" => self.context(Some(data)),
            // The agent's closing summary of what it did.
            "session.task_complete" => {
                if let Some(summary) = str_at(data, &["summary"]).filter(|s| !s.is_empty()) {
                    push(out, event_text(summary.to_owned()));
                }
            }
            // A tool the person ran themselves; its `tool.execution_complete` follows.
            "tool.user_requested" => {
                let req = serde_json::json!({
                    "name": data.get("toolName"),
                    "arguments": data.get("arguments"),
                    "toolCallId": data.get("toolCallId"),
                });
                let mut rec = self.tool_call(&req, &base);
                rec.role = Some("user".to_owned());
                rec.source_event_kind = "copilot:tool.user_requested".to_owned();
                push(out, rec);
            }
            "session.error" => {
                let msg = str_at(data, &["message"]).unwrap_or("unknown error");
                push(out, event_text(format!("error: {msg}")));
            }
            "abort" => {
                let reason = str_at(data, &["reason"]).unwrap_or("unknown reason");
                push(out, event_text(format!("aborted: {reason}")));
            }
            "session.info" | "session.warning" => {
                if let Some(msg) = str_at(data, &["message"]).filter(|m| !m.is_empty()) {
                    push(out, event_text(msg.to_owned()));
                }
            }
            "system.notification" => {
                if let Some(text) = data.get("content").and_then(text_value) {
                    push(out, event_text(text));
                }
            }
            // The system prompt: not part of the conversation.
            "system.message" => {}
            "session.shutdown" => {
                let details = data.get("tokenDetails");
                let count = |k: &str| {
                    details
                        .and_then(|d| d.get(k))
                        .map(|v| u64_at(v, "tokenCount"))
                        .unwrap_or(0)
                };
                if details.is_some() {
                    self.shutdown_usage = Some(TokenUsage {
                        input: count("input"),
                        output: count("output"),
                        cache_creation: count("cache_write"),
                        cache_read: count("cache_read"),
                        reasoning: 0,
                    });
                    self.refresh_usage();
                } else if let Some(models) = data.get("modelMetrics").and_then(Value::as_object) {
                    // Before `tokenDetails` (Copilot CLI 1.0.4x), each model's usage.
                    let mut total = TokenUsage::default();
                    for usage in models.values().filter_map(|m| m.get("usage")) {
                        total.input += u64_at(usage, "inputTokens");
                        total.output += u64_at(usage, "outputTokens");
                        total.cache_read += u64_at(usage, "cacheReadTokens");
                        total.cache_creation += u64_at(usage, "cacheWriteTokens");
                        total.reasoning += u64_at(usage, "reasoningTokens");
                    }
                    self.shutdown_usage = Some(total);
                    self.refresh_usage();
                }
                set_latest(&mut self.meta.model, str_at(data, &["currentModel"]));
            }
            k if KNOWN_SILENT_TYPES.contains(&k) => {}
            other => count_unknown(&mut self.meta, other),
        }
    }
}

impl SourceParser for CopilotParser {
    fn agent(&self) -> Agent {
        Agent::Copilot
    }

    fn meta(&self) -> &SessionMeta {
        &self.meta
    }

    fn save(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }

    fn parse_line(&mut self, raw: &str, out: &mut LineOutput) -> Result<(), serde_json::Error> {
        let line: Value = serde_json::from_str(raw)?;
        let Some(kind) = str_at(&line, &["type"]) else {
            count_unknown(&mut self.meta, "<untyped>");
            return Ok(());
        };
        let timestamp = line_timestamp(&mut self.meta, str_at(&line, &["timestamp"]), out)
            .map(std::borrow::Cow::into_owned);
        note_timestamp(&mut self.meta, timestamp.as_deref());
        let null = Value::Null;
        let data = line.get("data").filter(|d| d.is_object()).unwrap_or(&null);
        let base = Record {
            timestamp,
            cwd: self.current_cwd.clone().or_else(|| self.meta.cwd.clone()),
            git_branch: self
                .current_branch
                .clone()
                .or_else(|| self.meta.git_branch.clone()),
            is_sidechain: str_at(&line, &["agentId"]).is_some()
                || str_at(data, &["parentToolCallId"]).is_some(),
            ..Record::default()
        };
        self.event(kind, data, base, out);
        Ok(())
    }
}

/// Copilot CLI's tool names in Cairn's (agentlog's) kinds: reads and searches are housekeeping.
pub fn tool_kind(name: &str) -> ToolKind {
    match name {
        "bash" | "shell" | "powershell" | "write_bash" | "read_bash" => ToolKind::Exec,
        "edit" | "create" | "str_replace" | "str_replace_editor" | "write" | "apply_patch" => {
            ToolKind::FileEdit
        }
        "task" => ToolKind::SubAgent,
        "web_fetch" | "web_search" | "fetch" => ToolKind::WebSearch,
        "view" | "glob" | "grep" | "report_intent" | "update_todo" | "stop_bash" | "list_bash" => {
            ToolKind::Housekeeping
        }
        other => ToolKind::of(other),
    }
}

/// A host or owner/repo name that can go into a URL as it is.
fn is_plain_name(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 200
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parse(lines: &[Value]) -> (CopilotParser, LineOutput) {
        let mut parser = CopilotParser::resume(None).unwrap();
        let mut out = LineOutput::default();
        for line in lines {
            parser.parse_line(&line.to_string(), &mut out).unwrap();
        }
        (parser, out)
    }

    fn ev(kind: &str, data: Value) -> Value {
        json!({"type": kind, "data": data, "id": "e", "timestamp": "2026-03-26T17:50:35.000Z"})
    }

    #[test]
    fn requests_and_results_pair_up_with_kinds_and_paths() {
        let (parser, out) = parse(&[
            ev(
                "session.start",
                json!({"sessionId":"s1","copilotVersion":"1.0.11","context":{"cwd":"/r","branch":"feat/a","repository":"o/r","repositoryHost":"github.com"}}),
            ),
            ev("user.message", json!({"content":"fix it"})),
            ev(
                "assistant.message",
                json!({"messageId":"m1","content":"","outputTokens":7,"toolRequests":[
                    {"toolCallId":"c1","name":"edit","arguments":"{\"path\":\"/r/src/a.rs\",\"old_str\":\"a\",\"new_str\":\"b\"}"},
                    {"toolCallId":"c2","name":"bash","arguments":{"command":"cargo test"}}]}),
            ),
            ev(
                "tool.execution_complete",
                json!({"toolCallId":"c2","success":false,"result":{"content":"exit code 101"}}),
            ),
        ]);
        let m = parser.meta();
        assert_eq!(m.session_id.as_deref(), Some("s1"));
        assert_eq!(m.git_branch.as_deref(), Some("feat/a"));
        assert_eq!(m.repository_url.as_deref(), Some("https://github.com/o/r"));
        assert_eq!(m.cumulative_usage.unwrap().output, 7);
        let kinds: Vec<_> = out.records.iter().map(|r| (r.kind, r.tool_kind)).collect();
        assert_eq!(
            kinds,
            [
                (Some(RecordKind::Message), None),
                (Some(RecordKind::ToolCall), Some(ToolKind::FileEdit)),
                (Some(RecordKind::ToolCall), Some(ToolKind::Exec)),
                (Some(RecordKind::ToolResult), Some(ToolKind::Exec)),
            ]
        );
        assert_eq!(out.records[1].file_paths, ["/r/src/a.rs"]);
        assert_eq!(
            out.records[1].tool_input,
            Some(json!({"path":"/r/src/a.rs","old_str":"a","new_str":"b"}))
        );
        assert_eq!(out.records[3].outcome, Some(Outcome::Failed));
        assert_eq!(out.records[3].tool_name.as_deref(), Some("bash"));
        assert_eq!(out.records[0].prompt_source, Some(PromptSource::Human));
    }

    #[test]
    fn wrong_types_and_unknown_events_are_counted_not_fatal() {
        let (parser, out) = parse(&[
            json!({"type": 7, "data": "x"}),
            ev(
                "session.start",
                json!({"sessionId": ["not", "a", "string"], "context": 3}),
            ),
            ev("user.message", json!({"content": {"nested": true}})),
            ev(
                "assistant.message",
                json!({"toolRequests": "nope", "outputTokens": "many"}),
            ),
            ev(
                "tool.execution_complete",
                json!({"success": "yes", "result": 5}),
            ),
            ev("brand.new", json!({})),
            json!({"type": "assistant.message", "data": [1, 2]}),
        ]);
        assert_eq!(parser.meta().session_id, None);
        assert_eq!(parser.meta().unknown_types.get("brand.new"), Some(&1));
        assert_eq!(parser.meta().unknown_types.get("<untyped>"), Some(&1));
        // Only the result stands (no text, no outcome): nothing invented.
        assert_eq!(out.records.len(), 1);
        assert_eq!(out.records[0].outcome, None);
    }

    /// Events of Copilot CLI's schema that carry the conversation: a compaction's summary, a
    /// failed one, the closing summary, a tool the person ran, a move of the working directory,
    /// a sub-agent's event marked by `agentId`, and totals before `tokenDetails`.
    #[test]
    fn newer_events_are_read() {
        let (parser, out) = parse(&[
            ev(
                "session.start",
                json!({"sessionId":"s","context":{"cwd":"/r","branch":"main"}}),
            ),
            ev(
                "session.compaction_complete",
                json!({"success":true,"messagesRemoved":12,"summaryContent":"Fixed the parser; tests pass."}),
            ),
            ev(
                "session.compaction_complete",
                json!({"success":false,"error":"context too small"}),
            ),
            ev(
                "session.task_complete",
                json!({"summary":"Renamed the module.","success":true}),
            ),
            ev(
                "tool.user_requested",
                json!({"toolCallId":"u1","toolName":"bash","arguments":{"command":"make"}}),
            ),
            ev(
                "tool.execution_complete",
                json!({"toolCallId":"u1","success":true,"result":{"content":"ok"}}),
            ),
            ev(
                "session.context_changed",
                json!({"cwd":"/r/sub","branch":"feat/x"}),
            ),
            json!({"type":"user.message","agentId":"a1","timestamp":"2026-08-01T10:00:00Z","data":{"content":"look around"}}),
            ev(
                "session.shutdown",
                json!({"modelMetrics":{"gpt-5":{"usage":{"inputTokens":100,"outputTokens":10,"cacheReadTokens":40,"cacheWriteTokens":2}},"claude":{"usage":{"inputTokens":5,"outputTokens":1,"cacheReadTokens":0,"cacheWriteTokens":0}}}}),
            ),
        ]);
        let got: Vec<_> = out
            .records
            .iter()
            .map(|r| (r.kind, r.text.as_deref().unwrap_or(""), r.is_compaction))
            .collect();
        assert_eq!(
            got,
            [
                (
                    Some(RecordKind::Event),
                    "Fixed the parser; tests pass.",
                    true
                ),
                (
                    Some(RecordKind::Event),
                    "compaction failed: context too small",
                    false
                ),
                (Some(RecordKind::Event), "Renamed the module.", false),
                (Some(RecordKind::ToolCall), "", false),
                (Some(RecordKind::ToolResult), "ok", false),
                (Some(RecordKind::Message), "look around", false),
            ]
        );
        assert_eq!(out.records[3].role.as_deref(), Some("user"));
        assert_eq!(out.records[3].tool_kind, Some(ToolKind::Exec));
        assert_eq!(out.records[4].tool_name.as_deref(), Some("bash"));
        assert!(out.records[5].is_sidechain);
        assert_eq!(out.records[5].cwd.as_deref(), Some("/r/sub"));
        assert_eq!(out.records[5].git_branch.as_deref(), Some("feat/x"));
        let u = parser.meta().cumulative_usage.unwrap();
        assert_eq!(
            (u.input, u.output, u.cache_read, u.cache_creation),
            (105, 11, 40, 2)
        );
        assert!(parser.meta().unknown_types.is_empty());
    }

    /// A user message's `source` says when no person typed it.
    #[test]
    fn injected_and_agent_prompts_are_told_by_their_source() {
        let (_, out) = parse(&[
            ev(
                "user.message",
                json!({"content":"fix the build","source":"user"}),
            ),
            ev(
                "user.message",
                json!({"content":"Use the pdf skill.","source":"skill-pdf"}),
            ),
            ev(
                "user.message",
                json!({"content":"review this","source":"agent-7"}),
            ),
            ev(
                "user.message",
                json!({"content":"continue","isAutopilotContinuation":true}),
            ),
        ]);
        let sources: Vec<_> = out.records.iter().map(|r| r.prompt_source).collect();
        assert_eq!(
            sources,
            [
                Some(PromptSource::Human),
                Some(PromptSource::SystemInjected),
                Some(PromptSource::SpawnedAgent),
                Some(PromptSource::SystemInjected),
            ]
        );
    }

    #[test]
    fn sub_agent_events_are_side_chains_and_shutdown_gives_totals() {
        let (parser, out) = parse(&[
            ev(
                "user.message",
                json!({"content":"go","parentToolCallId":"t1"}),
            ),
            ev(
                "session.shutdown",
                json!({"tokenDetails":{"input":{"tokenCount":100},"output":{"tokenCount":15},"cache_read":{"tokenCount":5},"cache_write":{"tokenCount":1}}}),
            ),
        ]);
        assert!(out.records[0].is_sidechain);
        assert_eq!(
            out.records[0].prompt_source,
            Some(PromptSource::SpawnedAgent)
        );
        let u = parser.meta().cumulative_usage.unwrap();
        assert_eq!(
            (u.input, u.output, u.cache_read, u.cache_creation),
            (100, 15, 5, 1)
        );
    }

    #[test]
    fn repository_names_that_are_not_plain_make_no_url() {
        let (parser, _) = parse(&[ev(
            "session.start",
            json!({"context":{"repository":"o/r/../../x","repositoryHost":"evil.example\u{1b}[2J"}}),
        )]);
        assert_eq!(parser.meta().repository_url, None);
    }
}

//! Claude Code transcripts (`~/.claude/projects/<encoded-cwd>/<session>.jsonl`).
//!
//! Every content block of a line becomes its own record (agentlog keeps only the first, losing
//! parallel tool calls). Assistant responses are streamed as several lines sharing one
//! `message.id`; token usage is attributed once per id, the last line's figures winning.
//! Sub-agent files (`<session>/subagents/agent-<id>.jsonl`) are their own sessions, attached to
//! the parent; their prompts come from the parent agent, so they never open turns.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{
    FileRole, LineOutput, MAX_INPUT_STRING_BYTES, MAX_TEXT_BYTES, MAX_TOOL_OUTPUT_BYTES,
    SessionMeta, SourceParser, cap_json, cap_text, count_unknown, exit_code_in, is_system_injected,
    note_timestamp, outcome_for, set_latest, set_once, str_at, text_value, u64_at, valid_timestamp,
};
use crate::archive::{Agent, Outcome, PromptSource, Record, RecordKind, TokenUsage, ToolKind};

/// Line types that carry no record but are known (bookkeeping, UI state, progress streams).
const KNOWN_SILENT_TYPES: [&str; 16] = [
    "file-history-snapshot",
    "queue-operation",
    "progress",
    "attachment",
    "permission-mode",
    "mode",
    "agent-name",
    "last-prompt",
    "worktree-state",
    "started",
    "result",
    "relocated",
    "frame-link",
    "bridge-session",
    "atis-latch",
    "agent-setting",
];

#[derive(Debug, Default, Serialize, Deserialize)]
pub struct ClaudeParser {
    #[serde(skip)]
    role: FileRole,
    meta: SessionMeta,
    /// tool_use id → tool name, for calls whose result has not been seen yet.
    pending_tools: BTreeMap<String, String>,
    /// Title sources in order of preference: custom > ai > summary.
    custom_title: Option<String>,
    ai_title: Option<String>,
    summary_title: Option<String>,
}

impl ClaudeParser {
    pub fn resume(role: FileRole, saved: Option<&Value>) -> Result<Self, serde_json::Error> {
        let mut parser = match saved {
            Some(state) => serde_json::from_value(state.clone())?,
            None => ClaudeParser::default(),
        };
        parser.role = role;
        parser
            .meta
            .provider
            .get_or_insert_with(|| "anthropic".to_owned());
        Ok(parser)
    }

    fn is_subagent_file(&self) -> bool {
        self.role == FileRole::Subagent
    }

    fn refresh_title(&mut self) {
        self.meta.title = self
            .custom_title
            .clone()
            .or_else(|| self.ai_title.clone())
            .or_else(|| self.summary_title.clone());
    }

    fn message_line(&mut self, line: &Value, kind: &str, base: &Record, out: &mut LineOutput) {
        let message = line.get("message").unwrap_or(&Value::Null);
        let role = str_at(message, &["role"]).unwrap_or(kind).to_owned();
        if kind == "assistant"
            && let Some(model) = str_at(message, &["model"]).filter(|m| *m != "<synthetic>")
        {
            set_latest(&mut self.meta.model, Some(model));
        }
        let message_id = str_at(message, &["id"]).map(str::to_owned);
        if kind == "assistant"
            && let (Some(id), Some(usage)) = (&message_id, message.get("usage"))
        {
            out.usage.push((id.clone(), usage_of(usage)));
        }
        let is_meta = line.get("isMeta").and_then(Value::as_bool).unwrap_or(false);
        let is_compact_summary = line
            .get("isCompactSummary")
            .and_then(Value::as_bool)
            .unwrap_or(false);
        let base = Record {
            message_id,
            is_compaction: is_compact_summary,
            ..base.clone()
        };

        match message.get("content") {
            Some(Value::String(text)) => {
                let mut rec = Record {
                    kind: Some(RecordKind::Message),
                    role: Some(role.clone()),
                    source_event_kind: format!("claude:{kind}:text"),
                    text: Some(cap_text(text.clone(), MAX_TEXT_BYTES)),
                    ..base.clone()
                };
                rec.prompt_source = self.prompt_source(&rec, is_meta || is_compact_summary);
                out.records.push(rec);
            }
            Some(Value::Array(blocks)) => {
                for (i, block) in blocks.iter().enumerate() {
                    let block_type = str_at(block, &["type"]).unwrap_or("unknown");
                    let mut rec = Record {
                        block: i as u32,
                        source_event_kind: format!("claude:{kind}:{block_type}"),
                        ..base.clone()
                    };
                    match block_type {
                        "text" => {
                            let Some(text) = str_at(block, &["text"]) else {
                                continue;
                            };
                            rec.kind = Some(RecordKind::Message);
                            rec.role = Some(role.clone());
                            rec.text = Some(cap_text(text.to_owned(), MAX_TEXT_BYTES));
                            rec.prompt_source =
                                self.prompt_source(&rec, is_meta || is_compact_summary);
                        }
                        "thinking" => {
                            let Some(text) = str_at(block, &["thinking"]).filter(|t| !t.is_empty())
                            else {
                                continue;
                            };
                            rec.kind = Some(RecordKind::Reasoning);
                            rec.role = Some(role.clone());
                            rec.text = Some(cap_text(text.to_owned(), MAX_TEXT_BYTES));
                        }
                        "tool_use" | "server_tool_use" => {
                            let name = str_at(block, &["name"]).unwrap_or("unknown").to_owned();
                            let id = str_at(block, &["id"]).map(str::to_owned);
                            if let Some(id) = &id {
                                self.pending_tools.insert(id.clone(), name.clone());
                            }
                            let mut input = block.get("input").cloned();
                            rec.file_paths = edited_paths(&name, input.as_ref());
                            if let Some(input) = input.as_mut() {
                                cap_json(input, MAX_INPUT_STRING_BYTES);
                            }
                            rec.kind = Some(RecordKind::ToolCall);
                            rec.role = Some(role.clone());
                            rec.tool_kind = Some(ToolKind::of(&name));
                            rec.tool_name = Some(name);
                            rec.tool_input = input;
                            rec.call_id = id;
                        }
                        "tool_result" | "web_search_tool_result" => {
                            let id = str_at(block, &["tool_use_id"]).map(str::to_owned);
                            let name = id.as_ref().and_then(|id| self.pending_tools.remove(id));
                            let text = block
                                .get("content")
                                .and_then(text_value)
                                .or_else(|| str_at(block, &["text"]).map(str::to_owned));
                            let is_error = block
                                .get("is_error")
                                .and_then(Value::as_bool)
                                .unwrap_or(false);
                            rec.kind = Some(RecordKind::ToolResult);
                            rec.exit_code = text.as_deref().and_then(exit_code_in);
                            rec.outcome = match rec.exit_code {
                                Some(code) => {
                                    Some(outcome_for(code, text.as_deref().unwrap_or("")))
                                }
                                None if is_error => Some(Outcome::Failed),
                                None => None,
                            };
                            rec.tool_kind = name.as_deref().map(ToolKind::of);
                            rec.tool_name = name;
                            rec.text = text.map(|t| cap_text(t, MAX_TOOL_OUTPUT_BYTES));
                            rec.call_id = id;
                        }
                        _ => continue,
                    }
                    out.records.push(rec);
                }
            }
            _ => {}
        }
    }

    fn prompt_source(&self, rec: &Record, meta_line: bool) -> Option<PromptSource> {
        if rec.role.as_deref() != Some("user") {
            return None;
        }
        let text = rec.text.as_deref().unwrap_or("");
        Some(if meta_line || is_system_injected(text) {
            PromptSource::SystemInjected
        } else if rec.is_sidechain || self.is_subagent_file() {
            PromptSource::SpawnedAgent
        } else {
            PromptSource::Human
        })
    }
}

impl SourceParser for ClaudeParser {
    fn agent(&self) -> Agent {
        Agent::Claude
    }

    fn meta(&self) -> &SessionMeta {
        &self.meta
    }

    fn save(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }

    fn parse_line(&mut self, line: &Value, out: &mut LineOutput) {
        let Some(kind) = str_at(line, &["type"]) else {
            count_unknown(&mut self.meta, "<untyped>");
            return;
        };
        let kind = kind.to_owned();
        let timestamp = str_at(line, &["timestamp"]).filter(|t| valid_timestamp(t));
        note_timestamp(&mut self.meta, timestamp);
        set_once(&mut self.meta.session_id, str_at(line, &["sessionId"]));
        set_once(&mut self.meta.tool_version, str_at(line, &["version"]));
        set_once(&mut self.meta.cwd, str_at(line, &["cwd"]));
        if let Some(branch) = str_at(line, &["gitBranch"]) {
            set_once(&mut self.meta.git_branch, Some(branch));
        }
        if let Some(agent_id) = str_at(line, &["agentId"]) {
            set_once(&mut self.meta.agent_id, Some(agent_id));
        }

        let base = Record {
            timestamp: timestamp.map(str::to_owned),
            is_sidechain: line
                .get("isSidechain")
                .and_then(Value::as_bool)
                .unwrap_or(false),
            cwd: str_at(line, &["cwd"]).map(str::to_owned),
            git_branch: str_at(line, &["gitBranch"])
                .filter(|b| !b.is_empty())
                .map(str::to_owned),
            ..Record::default()
        };

        match kind.as_str() {
            "user" | "assistant" => self.message_line(line, &kind, &base, out),
            "system" => {
                let subtype = str_at(line, &["subtype"]).unwrap_or("unknown");
                let compaction = subtype == "compact_boundary";
                let text = line
                    .get("content")
                    .and_then(text_value)
                    .or_else(|| compaction.then(|| "Conversation compacted".to_owned()));
                if let Some(text) = text {
                    out.records.push(Record {
                        kind: Some(RecordKind::Event),
                        source_event_kind: format!("claude:system:{subtype}"),
                        text: Some(cap_text(text, MAX_TEXT_BYTES)),
                        is_compaction: compaction,
                        ..base
                    });
                }
            }
            "summary" => {
                set_latest(&mut self.summary_title, str_at(line, &["summary"]));
                self.refresh_title();
            }
            "custom-title" => {
                set_latest(&mut self.custom_title, str_at(line, &["customTitle"]));
                self.refresh_title();
            }
            "ai-title" => {
                set_latest(&mut self.ai_title, str_at(line, &["aiTitle"]));
                self.refresh_title();
            }
            "pr-link" => {
                // Claude records the PRs it opened: keep them searchable and linkable.
                let url = str_at(line, &["prUrl"]).unwrap_or("");
                let number = line.get("prNumber").and_then(Value::as_u64);
                let text = match number {
                    Some(n) => format!("PR #{n} {url}"),
                    None => format!("PR {url}"),
                };
                out.records.push(Record {
                    kind: Some(RecordKind::Event),
                    source_event_kind: "claude:pr-link".to_owned(),
                    text: Some(text.trim().to_owned()),
                    ..base
                });
            }
            other if KNOWN_SILENT_TYPES.contains(&other) => {}
            other => count_unknown(&mut self.meta, other),
        }
    }
}

/// Paths a Claude edit tool writes.
fn edited_paths(tool: &str, input: Option<&Value>) -> Vec<String> {
    let Some(input) = input else {
        return Vec::new();
    };
    let key = match tool {
        "Edit" | "MultiEdit" | "Write" => "file_path",
        "NotebookEdit" => "notebook_path",
        _ => return Vec::new(),
    };
    str_at(input, &[key])
        .map(|p| vec![p.to_owned()])
        .unwrap_or_default()
}

fn usage_of(usage: &Value) -> TokenUsage {
    TokenUsage {
        input: u64_at(usage, "input_tokens"),
        output: u64_at(usage, "output_tokens"),
        cache_creation: u64_at(usage, "cache_creation_input_tokens"),
        cache_read: u64_at(usage, "cache_read_input_tokens"),
        reasoning: 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parse(lines: &[Value], role: FileRole) -> (ClaudeParser, LineOutput) {
        let mut parser = ClaudeParser::resume(role, None).unwrap();
        let mut out = LineOutput::default();
        for line in lines {
            parser.parse_line(line, &mut out);
        }
        (parser, out)
    }

    #[test]
    fn every_tool_use_block_of_a_line_is_kept() {
        let line = json!({"type":"assistant","sessionId":"s","message":{"id":"msg_1","role":"assistant","model":"claude-opus-4-5","content":[
            {"type":"text","text":"Running both"},
            {"type":"tool_use","id":"toolu_1","name":"Bash","input":{"command":"ls"}},
            {"type":"tool_use","id":"toolu_2","name":"Edit","input":{"file_path":"/r/a.rs","old_string":"a","new_string":"b"}}
        ]}});
        let (parser, out) = parse(&[line], FileRole::Main);
        let kinds: Vec<_> = out
            .records
            .iter()
            .map(|r| (r.block, r.kind(), r.tool_name.clone()))
            .collect();
        assert_eq!(
            kinds,
            vec![
                (0, RecordKind::Message, None),
                (1, RecordKind::ToolCall, Some("Bash".into())),
                (2, RecordKind::ToolCall, Some("Edit".into())),
            ]
        );
        assert_eq!(out.records[2].file_paths, vec!["/r/a.rs"]);
        assert_eq!(out.records[2].tool_kind, Some(ToolKind::FileEdit));
        assert_eq!(parser.meta.model.as_deref(), Some("claude-opus-4-5"));
    }

    #[test]
    fn tool_results_take_the_name_of_their_call_and_an_outcome() {
        let call = json!({"type":"assistant","message":{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"false"}}]}});
        let result = json!({"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"Exit code 1","is_error":true}]}});
        let (_, out) = parse(&[call, result], FileRole::Main);
        let r = &out.records[1];
        assert_eq!(r.kind(), RecordKind::ToolResult);
        assert_eq!(r.tool_name.as_deref(), Some("Bash"));
        assert_eq!(r.exit_code, Some(1));
        assert_eq!(r.outcome, Some(Outcome::Failed));
        assert_eq!(r.role, None);
        assert_eq!(r.prompt_source, None);
    }

    #[test]
    fn prompt_sources() {
        let human = json!({"type":"user","message":{"role":"user","content":"fix the login bug"}});
        let meta =
            json!({"type":"user","isMeta":true,"message":{"role":"user","content":"Caveat: ..."}});
        let command = json!({"type":"user","message":{"role":"user","content":"<local-command-stdout>ok</local-command-stdout>"}});
        let side = json!({"type":"user","isSidechain":true,"message":{"role":"user","content":"search hex.pm"}});
        let (_, out) = parse(&[human, meta, command, side], FileRole::Main);
        let sources: Vec<_> = out.records.iter().map(|r| r.prompt_source).collect();
        assert_eq!(
            sources,
            vec![
                Some(PromptSource::Human),
                Some(PromptSource::SystemInjected),
                Some(PromptSource::SystemInjected),
                Some(PromptSource::SpawnedAgent),
            ]
        );
        let (_, sub) = parse(
            &[json!({"type":"user","message":{"role":"user","content":"do the subtask"}})],
            FileRole::Subagent,
        );
        assert_eq!(
            sub.records[0].prompt_source,
            Some(PromptSource::SpawnedAgent)
        );
    }

    #[test]
    fn usage_is_reported_per_message_id_and_titles_prefer_custom() {
        let a = json!({"type":"assistant","message":{"id":"m1","role":"assistant","content":[{"type":"text","text":"a"}],"usage":{"input_tokens":5,"output_tokens":1}}});
        let b = json!({"type":"assistant","message":{"id":"m1","role":"assistant","content":[{"type":"text","text":"b"}],"usage":{"input_tokens":5,"output_tokens":9}}});
        let summary = json!({"type":"summary","summary":"Summary title"});
        let custom = json!({"type":"custom-title","customTitle":"Custom"});
        let (parser, out) = parse(&[a, b, summary, custom], FileRole::Main);
        assert_eq!(out.usage.len(), 2);
        assert_eq!(out.usage[1].1.output, 9);
        assert_eq!(parser.meta.title.as_deref(), Some("Custom"));
    }

    #[test]
    fn unknown_types_are_counted_and_state_round_trips() {
        let (parser, out) = parse(&[json!({"type":"brand-new-thing"})], FileRole::Main);
        assert!(out.records.is_empty());
        assert_eq!(parser.meta.unknown_types.get("brand-new-thing"), Some(&1));
        let saved = parser.save();
        let resumed = ClaudeParser::resume(FileRole::Main, Some(&saved)).unwrap();
        assert_eq!(resumed.meta, parser.meta);
    }
}

//! Qwen Code sessions (`~/.qwen/projects/<sanitized cwd>/chats/<sessionId>.jsonl`).
//!
//! Every line is a ChatRecord `{uuid, parentUuid, sessionId, timestamp, type, subtype?, cwd,
//! version, gitBranch?, model?, message{role, parts[]}, usageMetadata?, toolCallResult?,
//! systemPayload?}`, Gemini's content shape: parts are `{text}`, `{text, thought: true}`,
//! `{functionCall{id, name, args}}` or `{functionResponse{id, name, response}}`. A person's
//! prompt reads best from `systemPayload.displayText` (the parts also carry hook context).
//! Tools are Gemini CLI's (`run_shell_command`, `replace`, `write_file`, `read_file`, …); an edit's
//! unified diff arrives with its result (`toolCallResult.resultDisplay.fileDiff`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{
    LineOutput, MAX_INPUT_STRING_BYTES, MAX_TEXT_BYTES, MAX_TOOL_OUTPUT_BYTES, SessionMeta,
    SourceParser, cap_json, cap_text, count_unknown, is_system_injected, line_timestamp,
    note_timestamp, set_latest, set_once, str_at, u64_at,
};
use crate::archive::discover::{DirOrigin, FoundFile};
use crate::archive::{Agent, Outcome, PromptSource, Record, RecordKind, TokenUsage, ToolKind};

/// The variable naming Qwen Code's projects folder (AgentsView's name).
pub const ENV_DIR: &str = "QWEN_PROJECTS_DIR";

/// Where Qwen Code keeps its sessions (the same on Linux and macOS): `$QWEN_PROJECTS_DIR` when
/// set, else the `projects` of Qwen's own runtime folder (`$QWEN_RUNTIME_DIR`, else
/// `$QWEN_HOME`, which stands for `~/.qwen`), else `~/.qwen/projects`.
pub fn locations(
    env: impl Fn(&str) -> Option<PathBuf>,
    home: Option<&Path>,
) -> Vec<(PathBuf, DirOrigin)> {
    let runtime = if env("QWEN_RUNTIME_DIR").is_some() {
        "QWEN_RUNTIME_DIR"
    } else {
        "QWEN_HOME"
    };
    crate::archive::discover::env_or_agent_home(
        env,
        ENV_DIR,
        "",
        home,
        &[(".qwen/projects", runtime, "projects")],
    )
}

/// A `.jsonl` under a Qwen projects folder is a session (`<project>/chats/<id>.jsonl`, archived
/// ones under `chats/archive/`).
pub fn classify(path: &Path) -> Option<FoundFile> {
    path.file_stem()?.to_str()?;
    Some(FoundFile::main(Agent::Qwen, path))
}

/// Whether a transcript's path is Qwen Code's (for the hook, given only a path).
pub fn owns_path(path: &Path) -> bool {
    path.to_string_lossy().contains("/.qwen/projects/")
}

/// The tag Qwen wraps hook context in when it adds it to a prompt's parts.
const HOOK_CONTEXT_TAG: &str = "<qwen:user-prompt-submit-context>";

/// `system` subtypes that carry nothing Cairn keeps.
const KNOWN_SILENT_SYSTEM: [&str; 6] = [
    "ui_telemetry",
    "file_history_snapshot",
    "parent_session",
    "custom_title",
    "slash_command",
    "at_command",
];

#[derive(Debug, Default, Serialize, Deserialize)]
pub struct QwenParser {
    meta: SessionMeta,
    /// call id → tool name, for calls whose result has not been seen yet.
    pending_calls: BTreeMap<String, String>,
}

impl QwenParser {
    pub fn resume(saved: Option<&Value>) -> Result<Self, serde_json::Error> {
        match saved {
            Some(state) => serde_json::from_value(state.clone()),
            None => Ok(QwenParser::default()),
        }
    }

    fn user(&mut self, line: &Value, subtype: Option<&str>, base: Record, out: &mut LineOutput) {
        let display = str_at(line, &["systemPayload", "displayText"]).filter(|t| !t.is_empty());
        let text = match display {
            Some(t) => Some(t.to_owned()),
            None => {
                let texts: Vec<&str> = parts(line)
                    .iter()
                    .filter(|p| p.get("thought").and_then(Value::as_bool) != Some(true))
                    .filter_map(|p| str_at(p, &["text"]))
                    .filter(|t| !t.trim_start().starts_with(HOOK_CONTEXT_TAG))
                    .collect();
                (!texts.is_empty()).then(|| texts.join("\n"))
            }
        };
        let Some(text) = text else { return };
        // A `mid_turn_user_message` is typed while the agent works; `provenance`, when written,
        // says whether a person typed it at all.
        let typed = str_at(line, &["provenance"]).is_none_or(|p| p == "real_user");
        let source = match subtype {
            None | Some("slash_command" | "at_command" | "mid_turn_user_message")
                if typed && !is_system_injected(&text) =>
            {
                PromptSource::Human
            }
            _ => PromptSource::SystemInjected,
        };
        out.records.push(Record {
            kind: Some(RecordKind::Message),
            source_event_kind: match subtype {
                Some(s) => format!("qwen:user:{s}"),
                None => "qwen:user".to_owned(),
            },
            role: Some("user".to_owned()),
            prompt_source: Some(source),
            text: Some(cap_text(text, MAX_TEXT_BYTES)),
            ..base
        });
    }

    fn assistant(&mut self, line: &Value, base: Record, out: &mut LineOutput) {
        set_latest(&mut self.meta.model, str_at(line, &["model"]));
        let message_id = str_at(line, &["uuid"]).map(str::to_owned);
        if let (Some(id), Some(u)) = (&message_id, line.get("usageMetadata")) {
            let cached = u64_at(u, "cachedContentTokenCount");
            out.usage.push((
                id.clone(),
                TokenUsage {
                    input: u64_at(u, "promptTokenCount").saturating_sub(cached),
                    output: u64_at(u, "candidatesTokenCount"),
                    cache_creation: 0,
                    cache_read: cached,
                    reasoning: u64_at(u, "thoughtsTokenCount"),
                },
            ));
        }
        let base = Record {
            role: Some("assistant".to_owned()),
            message_id,
            ..base
        };
        for (i, part) in parts(line).iter().enumerate() {
            let block = u32::try_from(i).unwrap_or(u32::MAX);
            if let Some(call) = part.get("functionCall").filter(|c| c.is_object()) {
                out.records.push(self.tool_call(call, block, &base));
            } else if let Some(text) = str_at(part, &["text"]).filter(|t| !t.is_empty()) {
                let thought = part.get("thought").and_then(Value::as_bool) == Some(true);
                out.records.push(Record {
                    block,
                    kind: Some(if thought {
                        RecordKind::Reasoning
                    } else {
                        RecordKind::Message
                    }),
                    source_event_kind: if thought {
                        "qwen:assistant:thought".to_owned()
                    } else {
                        "qwen:assistant:text".to_owned()
                    },
                    text: Some(cap_text(text.to_owned(), MAX_TEXT_BYTES)),
                    ..base.clone()
                });
            }
        }
    }

    fn tool_call(&mut self, call: &Value, block: u32, base: &Record) -> Record {
        let name = str_at(call, &["name"]).unwrap_or("unknown").to_owned();
        let call_id = str_at(call, &["id"]).map(str::to_owned);
        if let Some(id) = &call_id {
            super::remember_call(&mut self.pending_calls, id.clone(), name.clone());
        }
        let mut input = call.get("args").filter(|a| !a.is_null()).cloned();
        let kind = tool_kind(&name);
        let file_paths = match (kind, &input) {
            (ToolKind::FileEdit, Some(i)) => edited_path(i).into_iter().collect(),
            _ => Vec::new(),
        };
        if let Some(i) = input.as_mut() {
            cap_json(i, MAX_INPUT_STRING_BYTES);
        }
        Record {
            block,
            kind: Some(RecordKind::ToolCall),
            source_event_kind: "qwen:assistant:function_call".to_owned(),
            tool_kind: Some(kind),
            tool_name: Some(name),
            tool_input: input,
            call_id,
            file_paths,
            ..base.clone()
        }
    }

    fn tool_result(&mut self, line: &Value, base: Record, out: &mut LineOutput) {
        let result = line.get("toolCallResult").filter(|r| r.is_object());
        let responses: Vec<&Value> = parts(line)
            .iter()
            .filter_map(|p| p.get("functionResponse").filter(|r| r.is_object()))
            .collect();
        // A result line answers one call; its id is on the response part or the result.
        let response = responses.first().copied();
        let call_id = response
            .and_then(|r| str_at(r, &["id"]))
            .or_else(|| result.and_then(|r| str_at(r, &["callId"])))
            .map(str::to_owned);
        let name = call_id
            .as_ref()
            .and_then(|id| self.pending_calls.remove(id))
            .or_else(|| {
                response
                    .and_then(|r| str_at(r, &["name"]))
                    .map(str::to_owned)
            });
        let display = result.and_then(|r| r.get("resultDisplay"));
        let text = response
            .and_then(|r| {
                str_at(r, &["response", "output"]).or_else(|| str_at(r, &["response", "error"]))
            })
            .or_else(|| result.and_then(|r| str_at(r, &["error", "message"])))
            .or_else(|| display.and_then(Value::as_str))
            .map(str::to_owned);
        let diff = display
            .and_then(|d| str_at(d, &["fileDiff"]))
            .filter(|d| !d.is_empty());
        let file = display.and_then(|d| str_at(d, &["fileName"]));
        let outcome = match result.and_then(|r| str_at(r, &["status"])) {
            Some("success") => Some(Outcome::Succeeded),
            Some("error" | "cancelled") => Some(Outcome::Failed),
            _ if result
                .and_then(|r| r.get("error"))
                .is_some_and(|e| !e.is_null()) =>
            {
                Some(Outcome::Failed)
            }
            _ => None,
        };
        let mut input = diff.map(|d| serde_json::json!({ "diff": d }));
        if let Some(i) = input.as_mut() {
            cap_json(i, MAX_INPUT_STRING_BYTES);
        }
        out.records.push(Record {
            kind: Some(RecordKind::ToolResult),
            source_event_kind: "qwen:tool_result".to_owned(),
            tool_kind: name.as_deref().map(tool_kind),
            tool_name: name,
            tool_input: input,
            text: text.map(|t| cap_text(t, MAX_TOOL_OUTPUT_BYTES)),
            file_paths: match (diff, file) {
                (Some(_), Some(f)) => vec![f.to_owned()],
                _ => Vec::new(),
            },
            call_id,
            outcome,
            ..base
        });
    }

    fn system(&mut self, line: &Value, subtype: Option<&str>, base: Record, out: &mut LineOutput) {
        match subtype {
            Some("chat_compression") => out.records.push(Record {
                kind: Some(RecordKind::Event),
                source_event_kind: "qwen:system:chat_compression".to_owned(),
                text: Some("Conversation compressed".to_owned()),
                is_compaction: true,
                ..base
            }),
            Some("rewind") => out.records.push(Record {
                kind: Some(RecordKind::Event),
                source_event_kind: "qwen:system:rewind".to_owned(),
                text: Some("Conversation rewound".to_owned()),
                ..base
            }),
            Some("custom_title") => {
                let title = str_at(line, &["systemPayload", "title"])
                    .or_else(|| str_at(line, &["systemPayload", "customTitle"]));
                set_latest(&mut self.meta.title, title);
            }
            Some(s) if KNOWN_SILENT_SYSTEM.contains(&s) => {}
            Some(s) => count_unknown(&mut self.meta, &format!("system:{s}")),
            None => count_unknown(&mut self.meta, "system"),
        }
    }
}

impl SourceParser for QwenParser {
    fn agent(&self) -> Agent {
        Agent::Qwen
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
        let m = &mut self.meta;
        set_once(&mut m.session_id, str_at(&line, &["sessionId"]));
        set_once(&mut m.cwd, str_at(&line, &["cwd"]));
        set_once(&mut m.git_branch, str_at(&line, &["gitBranch"]));
        set_once(&mut m.tool_version, str_at(&line, &["version"]));
        let base = Record {
            timestamp,
            cwd: str_at(&line, &["cwd"])
                .map(str::to_owned)
                .or_else(|| m.cwd.clone()),
            git_branch: str_at(&line, &["gitBranch"])
                .filter(|b| !b.is_empty())
                .map(str::to_owned)
                .or_else(|| m.git_branch.clone()),
            ..Record::default()
        };
        let subtype = str_at(&line, &["subtype"]);
        match kind {
            "user" => self.user(&line, subtype, base, out),
            "assistant" => self.assistant(&line, base, out),
            "tool_result" => self.tool_result(&line, base, out),
            "system" => self.system(&line, subtype, base, out),
            other => count_unknown(&mut self.meta, other),
        }
        Ok(())
    }
}

/// The parts of a record's message (an empty slice when absent or not an array).
fn parts(line: &Value) -> &[Value] {
    line.get("message")
        .and_then(|m| m.get("parts"))
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

/// The file an edit tool's arguments name.
fn edited_path(args: &Value) -> Option<String> {
    ["file_path", "absolute_path", "path"]
        .iter()
        .find_map(|k| str_at(args, &[k]))
        .map(str::to_owned)
}

/// Qwen Code's (Gemini CLI's) tool names in Cairn's (agentlog's) kinds: reads and searches are
/// housekeeping.
pub fn tool_kind(name: &str) -> ToolKind {
    match name {
        "run_shell_command" | "shell" => ToolKind::Exec,
        "replace" | "edit" | "write_file" | "edit_file" => ToolKind::FileEdit,
        "task" | "agent" => ToolKind::SubAgent,
        "web_fetch" | "google_web_search" | "web_search" => ToolKind::WebSearch,
        "read_file"
        | "read_many_files"
        | "list_directory"
        | "glob"
        | "grep_search"
        | "search_file_content"
        | "save_memory"
        | "todo_write"
        | "exit_plan_mode" => ToolKind::Housekeeping,
        other => ToolKind::of(other),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parse(lines: &[Value]) -> (QwenParser, LineOutput) {
        let mut parser = QwenParser::resume(None).unwrap();
        let mut out = LineOutput::default();
        for line in lines {
            parser.parse_line(&line.to_string(), &mut out).unwrap();
        }
        (parser, out)
    }

    fn rec(kind: &str, extra: Value) -> Value {
        let mut v = json!({"uuid": "u", "sessionId": "q1", "timestamp": "2026-08-17T12:00:00.000Z",
            "type": kind, "cwd": "/r", "version": "0.21.13", "gitBranch": "feat/q"});
        v.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        v
    }

    #[test]
    fn edits_carry_their_path_and_the_result_its_diff() {
        let (parser, out) = parse(&[
            rec(
                "user",
                json!({"message":{"role":"user","parts":[{"text":"fix"},{"text":"<qwen:user-prompt-submit-context>\nhook\n</qwen:user-prompt-submit-context>"}]}}),
            ),
            rec(
                "assistant",
                json!({"uuid":"a1","model":"qwen3-coder","usageMetadata":{"promptTokenCount":100,"candidatesTokenCount":9,"cachedContentTokenCount":40,"thoughtsTokenCount":3},
                  "message":{"role":"model","parts":[{"text":"think","thought":true},{"functionCall":{"id":"c1","name":"replace","args":{"file_path":"/r/a.rs","old_string":"a","new_string":"b"}}}]}}),
            ),
            rec(
                "tool_result",
                json!({"message":{"role":"user","parts":[{"functionResponse":{"id":"c1","name":"replace","response":{"output":"ok"}}}]},
                  "toolCallResult":{"callId":"c1","status":"success","resultDisplay":{"fileDiff":"--- a\n+++ b\n-a\n+b\n","fileName":"a.rs"}}}),
            ),
        ]);
        assert_eq!(out.records[0].text.as_deref(), Some("fix"));
        assert_eq!(out.records[0].prompt_source, Some(PromptSource::Human));
        assert_eq!(out.records[1].kind, Some(RecordKind::Reasoning));
        let call = &out.records[2];
        assert_eq!(call.tool_kind, Some(ToolKind::FileEdit));
        assert_eq!(call.file_paths, ["/r/a.rs"]);
        let result = &out.records[3];
        assert_eq!(result.tool_name.as_deref(), Some("replace"));
        assert_eq!(result.outcome, Some(Outcome::Succeeded));
        assert_eq!(
            result.tool_input,
            Some(json!({"diff": "--- a\n+++ b\n-a\n+b\n"}))
        );
        let (id, usage) = &out.usage[0];
        assert_eq!(id, "a1");
        assert_eq!(
            (usage.input, usage.output, usage.cache_read, usage.reasoning),
            (60, 9, 40, 3)
        );
        let m = parser.meta();
        assert_eq!(m.model.as_deref(), Some("qwen3-coder"));
        assert_eq!(m.git_branch.as_deref(), Some("feat/q"));
    }

    #[test]
    fn wrong_types_and_unknown_records_are_counted_not_fatal() {
        let (parser, out) = parse(&[
            json!({"type": 3}),
            rec(
                "user",
                json!({"message": {"parts": "text"}, "systemPayload": 4}),
            ),
            rec(
                "assistant",
                json!({"message": {"parts": [7, {"functionCall": "x"}, {"text": 5}]}, "usageMetadata": "lots"}),
            ),
            rec(
                "tool_result",
                json!({"message": {"parts": [{"functionResponse": []}]}, "toolCallResult": "ok"}),
            ),
            rec("system", json!({"subtype": "brand_new"})),
            rec("mystery", json!({})),
        ]);
        let unknown = &parser.meta().unknown_types;
        assert_eq!(unknown.get("<untyped>"), Some(&1));
        assert_eq!(unknown.get("system:brand_new"), Some(&1));
        assert_eq!(unknown.get("mystery"), Some(&1));
        // Only the bare result stands: no text, no outcome, nothing invented.
        assert_eq!(out.records.len(), 1);
        assert_eq!(out.records[0].kind, Some(RecordKind::ToolResult));
        assert_eq!(out.records[0].outcome, None);
    }

    #[test]
    fn notifications_are_injected_and_compression_is_a_compaction() {
        let (_, out) = parse(&[
            rec(
                "user",
                json!({"subtype":"notification","systemPayload":{"displayText":"background done"},"message":{"parts":[{"text":"background done"}]}}),
            ),
            rec("system", json!({"subtype":"chat_compression"})),
        ]);
        assert_eq!(
            out.records[0].prompt_source,
            Some(PromptSource::SystemInjected)
        );
        assert!(out.records[1].is_compaction);
    }

    /// What a person types while the agent works is theirs; a record whose provenance says no
    /// person wrote it is not.
    #[test]
    fn a_message_typed_mid_turn_is_a_person_s() {
        let (_, out) = parse(&[
            rec(
                "user",
                json!({"subtype":"mid_turn_user_message","systemPayload":{"displayText":"also update the docs"},"message":{"parts":[{"text":"also update the docs"}]}}),
            ),
            rec(
                "user",
                json!({"provenance":"subagent","message":{"parts":[{"text":"scan the repo"}]}}),
            ),
        ]);
        let sources: Vec<_> = out.records.iter().map(|r| r.prompt_source).collect();
        assert_eq!(
            sources,
            [
                Some(PromptSource::Human),
                Some(PromptSource::SystemInjected)
            ]
        );
    }
}

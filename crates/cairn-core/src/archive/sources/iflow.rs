//! iFlow CLI (`iflow`): one JSONL file a session,
//! `~/.iflow/projects/<encoded cwd>/session-<id>.jsonl` (`$IFLOW_DIR` names the `projects`
//! folder, AgentsView's name), in Claude Code's line shape: `{uuid, parentUuid, sessionId,
//! timestamp, type, message, cwd, gitBranch, version}`, a `user` message's content a prompt or
//! `tool_result` blocks, an `assistant` message's `text`, `thinking` and `tool_use` blocks with
//! its `model` and `usage`. A result's `content` is Gemini's function response
//! (`responseParts.functionResponse.response.output` or `.error`), and the line's `toolUseResult`
//! says how the call went (`status`). iFlow writes a call again in the next assistant line beside
//! the new one: a call is taken once, by its id.

use std::collections::{BTreeMap, VecDeque};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::edited_path;
use super::prompt;
use super::{
    LineOutput, MAX_INPUT_STRING_BYTES, MAX_TEXT_BYTES, SessionMeta, SourceParser, ToolOutput,
    cap_json, cap_text, count_unknown, line_timestamp, note_timestamp, set_latest, set_once,
    str_at, text_value, u64_at,
};
use crate::archive::discover::{DirOrigin, FoundFile};
use crate::archive::{Agent, Record, RecordKind, TokenUsage, ToolKind};

/// The variable naming iFlow's projects folder (AgentsView's name).
pub const ENV_DIR: &str = "IFLOW_DIR";

/// How many of the latest call ids are remembered to take a repeated call once (iFlow repeats
/// a call only in the line after it).
const RECENT_CALLS: usize = 64;

/// Where iFlow keeps its sessions (the same on Linux and macOS): `$IFLOW_DIR` when set, else
/// `~/.iflow/projects`.
pub fn locations(
    env: impl Fn(&str) -> Option<PathBuf>,
    home: Option<&Path>,
) -> Vec<(PathBuf, DirOrigin)> {
    crate::archive::discover::env_or_home(env, ENV_DIR, "", home, &[".iflow/projects"])
}

/// A `session-<id>.jsonl` is a session.
pub fn classify(path: &Path) -> Option<FoundFile> {
    let name = path.file_name()?.to_str()?;
    (name.starts_with("session-") && name.ends_with(".jsonl"))
        .then(|| FoundFile::main(Agent::Iflow, path))
}

/// Whether a transcript's path is iFlow's (for the hook, given only a path).
pub fn owns_path(path: &Path) -> bool {
    path.to_string_lossy().contains("/.iflow/projects/") && classify(path).is_some()
}

#[derive(Debug, Default, Serialize, Deserialize)]
pub struct IflowParser {
    meta: SessionMeta,
    /// call id → tool name, for calls whose result has not been seen yet.
    pending_calls: BTreeMap<String, String>,
    /// The latest call ids taken, newest last.
    recent_calls: VecDeque<String>,
}

impl IflowParser {
    pub fn resume(saved: Option<&Value>) -> Result<Self, serde_json::Error> {
        match saved {
            Some(state) => serde_json::from_value(state.clone()),
            None => Ok(IflowParser::default()),
        }
    }

    fn user(&mut self, line: &Value, content: &Value, base: Record, out: &mut LineOutput) {
        let blocks: Vec<Value> = match content {
            Value::String(s) => vec![serde_json::json!({"type": "text", "text": s})],
            Value::Array(items) => items.clone(),
            _ => return,
        };
        for (i, block) in blocks.iter().enumerate() {
            let base = Record {
                block: u32::try_from(i).unwrap_or(u32::MAX),
                ..base.clone()
            };
            match str_at(block, &["type"]) {
                Some("text") => {
                    let Some(text) = str_at(block, &["text"]).filter(|t| !t.trim().is_empty())
                    else {
                        continue;
                    };
                    out.records
                        .push(prompt(text.to_owned(), "iflow:user:text", base));
                }
                Some("tool_result") => {
                    let call_id = str_at(block, &["tool_use_id"]);
                    let name = call_id.and_then(|id| self.pending_calls.remove(id));
                    let response = ["responseParts", "functionResponse", "response"];
                    let text = block.get("content").and_then(|c| {
                        text_value(c).or_else(|| {
                            let r = response.iter().try_fold(c, |v, k| v.get(k))?;
                            str_at(r, &["output"])
                                .or_else(|| str_at(r, &["error"]))
                                .map(str::to_owned)
                        })
                    });
                    let failed = block.get("is_error").and_then(Value::as_bool).or_else(|| {
                        str_at(line, &["toolUseResult", "status"]).map(|s| s != "success")
                    });
                    let output = ToolOutput {
                        name,
                        call_id: call_id.map(str::to_owned),
                        text,
                        failed,
                        ..ToolOutput::default()
                    };
                    out.records.push(output.record(
                        "iflow:user:tool_result".to_owned(),
                        tool_kind,
                        base,
                    ));
                }
                // A picture pasted into the prompt: nothing to read.
                Some("image") => {}
                Some(other) => count_unknown(&mut self.meta, &format!("content:{other}")),
                None => count_unknown(&mut self.meta, "content:<untyped>"),
            }
        }
    }

    fn assistant(&mut self, msg: &Value, base: Record, out: &mut LineOutput) {
        set_latest(&mut self.meta.model, str_at(msg, &["model"]));
        let message_id = str_at(msg, &["id"]).map(str::to_owned);
        if let (Some(id), Some(u)) = (&message_id, msg.get("usage").filter(|u| u.is_object())) {
            let usage = TokenUsage {
                input: u64_at(u, "input_tokens"),
                output: u64_at(u, "output_tokens"),
                cache_creation: u64_at(u, "cache_creation_input_tokens"),
                cache_read: u64_at(u, "cache_read_input_tokens"),
                reasoning: 0,
            };
            if usage != TokenUsage::default() {
                out.usage.push((id.clone(), usage));
            }
        }
        let base = Record {
            role: Some("assistant".to_owned()),
            message_id,
            ..base
        };
        let blocks = msg.get("content").and_then(Value::as_array);
        for (i, block) in blocks.into_iter().flatten().enumerate() {
            let base = Record {
                block: u32::try_from(i).unwrap_or(u32::MAX),
                ..base.clone()
            };
            match str_at(block, &["type"]) {
                Some(kind @ ("text" | "thinking")) => {
                    let Some(text) = str_at(block, &[kind]).filter(|t| !t.trim().is_empty()) else {
                        continue;
                    };
                    let (record_kind, event) = if kind == "text" {
                        (RecordKind::Message, "iflow:assistant:text")
                    } else {
                        (RecordKind::Reasoning, "iflow:assistant:thinking")
                    };
                    out.records.push(Record {
                        kind: Some(record_kind),
                        source_event_kind: event.to_owned(),
                        text: Some(cap_text(text.to_owned(), MAX_TEXT_BYTES)),
                        ..base
                    });
                }
                Some("tool_use") => {
                    if let Some(rec) = self.tool_use(block, base) {
                        out.records.push(rec);
                    }
                }
                Some(other) => count_unknown(&mut self.meta, &format!("content:{other}")),
                None => count_unknown(&mut self.meta, "content:<untyped>"),
            }
        }
    }

    /// A call, unless it was taken already (iFlow writes it again in the next line).
    fn tool_use(&mut self, block: &Value, base: Record) -> Option<Record> {
        let id = str_at(block, &["id"]);
        if let Some(id) = id {
            if self.recent_calls.iter().any(|c| c == id) {
                return None;
            }
            if self.recent_calls.len() == RECENT_CALLS {
                self.recent_calls.pop_front();
            }
            self.recent_calls.push_back(id.to_owned());
        }
        let name = str_at(block, &["name"]).unwrap_or("unknown").to_owned();
        if let Some(id) = id {
            super::remember_call(&mut self.pending_calls, id.to_owned(), name.clone());
        }
        let mut input = block.get("input").filter(|i| !i.is_null()).cloned();
        let kind = tool_kind(&name);
        let file_paths = edited_path(
            kind,
            input.as_ref(),
            &["file_path", "absolute_path", "path"],
        );
        if let Some(i) = input.as_mut() {
            cap_json(i, MAX_INPUT_STRING_BYTES);
        }
        Some(Record {
            kind: Some(RecordKind::ToolCall),
            source_event_kind: "iflow:assistant:tool_use".to_owned(),
            tool_kind: Some(kind),
            tool_name: Some(name),
            tool_input: input,
            call_id: id.map(str::to_owned),
            file_paths,
            ..base
        })
    }
}

impl SourceParser for IflowParser {
    fn agent(&self) -> Agent {
        Agent::Iflow
    }

    fn meta(&self) -> &SessionMeta {
        &self.meta
    }

    fn save(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }

    fn parse_line(&mut self, raw: &str, out: &mut LineOutput) -> Result<(), serde_json::Error> {
        let line: Value = serde_json::from_str(raw)?;
        let m = &mut self.meta;
        set_once(&mut m.session_id, str_at(&line, &["sessionId"]));
        set_latest(&mut m.cwd, str_at(&line, &["cwd"]));
        set_latest(&mut m.git_branch, str_at(&line, &["gitBranch"]));
        set_once(&mut m.tool_version, str_at(&line, &["version"]));
        let timestamp =
            line_timestamp(m, str_at(&line, &["timestamp"]), out).map(|t| t.into_owned());
        note_timestamp(m, timestamp.as_deref());
        let base = Record {
            timestamp,
            cwd: self.meta.cwd.clone(),
            git_branch: self.meta.git_branch.clone(),
            is_sidechain: line.get("isSidechain").and_then(Value::as_bool) == Some(true),
            ..Record::default()
        };
        let msg = line.get("message").unwrap_or(&Value::Null);
        match str_at(&line, &["type"]) {
            Some("user") => {
                let content = msg.get("content").unwrap_or(&Value::Null);
                self.user(&line, content, base, out);
            }
            Some("assistant") => self.assistant(msg, base, out),
            Some(other) => count_unknown(&mut self.meta, other),
            None => count_unknown(&mut self.meta, "<untyped>"),
        }
        Ok(())
    }
}

/// iFlow's tool names (Gemini CLI's) in Cairn's kinds.
pub fn tool_kind(name: &str) -> ToolKind {
    match name {
        "run_shell_command" => ToolKind::Exec,
        "replace" | "write_file" | "edit" | "multi_edit" => ToolKind::FileEdit,
        "task" => ToolKind::SubAgent,
        "web_fetch" | "google_web_search" | "web_search" => ToolKind::WebSearch,
        "read_file"
        | "read_many_files"
        | "list_directory"
        | "glob"
        | "search_file_content"
        | "todo_write"
        | "todo_read"
        | "save_memory" => ToolKind::Housekeeping,
        other => ToolKind::of(other),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::archive::Outcome;
    use serde_json::json;

    #[test]
    fn a_call_written_again_is_taken_once_and_its_result_names_it() {
        let mut parser = IflowParser::resume(None).unwrap();
        let mut out = LineOutput::default();
        let call = |id: &str, name: &str| json!({"type": "tool_use", "id": id, "name": name, "input": {"file_path": "/w/a.rs"}});
        for line in [
            json!({"type": "user", "sessionId": "s", "cwd": "/w", "gitBranch": "main", "timestamp": "2026-01-21T05:56:34.812Z",
                "message": {"role": "user", "content": "Fix it"}}),
            json!({"type": "assistant", "message": {"id": "r1", "model": "glm-4.7", "content": [
                {"type": "text", "text": "Looking."}, call("c1", "read_file")]}}),
            json!({"type": "assistant", "message": {"id": "r2", "content": [call("c1", "read_file"), call("c2", "replace")]}}),
            json!({"type": "user", "toolUseResult": {"toolName": "replace", "status": "success"},
                "message": {"content": [{"type": "tool_result", "tool_use_id": "c2", "content": {"callId": "c2",
                    "responseParts": {"functionResponse": {"id": "c2", "name": "replace", "response": {"output": "File modified"}}}}}]}}),
            json!({"type": "assistant", "message": {"id": "r3", "content": [call("c2", "replace"), call("c3", "run_shell_command")]}}),
            json!({"type": "user", "message": {"content": [{"type": "tool_result", "tool_use_id": "c3", "content": "Exit code: 1", "is_error": true}]}}),
            json!({"type": "summary"}),
        ] {
            parser.parse_line(&line.to_string(), &mut out).unwrap();
        }
        let calls: Vec<_> = out
            .records
            .iter()
            .filter(|r| r.kind == Some(RecordKind::ToolCall))
            .map(|r| r.call_id.clone().unwrap())
            .collect();
        assert_eq!(calls, ["c1", "c2", "c3"]);
        let edit = out
            .records
            .iter()
            .find(|r| r.call_id.as_deref() == Some("c2"))
            .unwrap();
        assert_eq!(edit.file_paths, ["/w/a.rs"]);
        let edited = out
            .records
            .iter()
            .find(|r| r.kind == Some(RecordKind::ToolResult) && r.call_id.as_deref() == Some("c2"))
            .unwrap();
        assert_eq!(
            (edited.text.as_deref(), edited.outcome),
            (Some("File modified"), Some(Outcome::Succeeded))
        );
        let last = out.records.last().unwrap();
        assert_eq!(
            (last.tool_name.as_deref(), last.exit_code, last.outcome),
            (Some("run_shell_command"), Some(1), Some(Outcome::Failed))
        );
        let m = parser.meta();
        assert_eq!(
            (
                m.session_id.as_deref(),
                m.cwd.as_deref(),
                m.git_branch.as_deref()
            ),
            (Some("s"), Some("/w"), Some("main"))
        );
        assert_eq!(m.unknown_types.keys().collect::<Vec<_>>(), ["summary"]);
        // The memory of calls taken is bounded.
        for i in 0..200 {
            parser
                .parse_line(
                    &json!({"type": "assistant", "message": {"content": [call(&format!("x{i}"), "read_file")]}}).to_string(),
                    &mut out,
                )
                .unwrap();
        }
        assert_eq!(parser.recent_calls.len(), RECENT_CALLS);
    }
}

//! Google Antigravity's CLI (`agy`): one step transcript a conversation,
//! `~/.gemini/antigravity-cli/brain/<conversation id>/.system_generated/logs/transcript.jsonl`
//! (`$ANTIGRAVITY_CLI_DIR` names the `antigravity-cli` folder), the conversation named by its
//! folder.
//!
//! A line is a step `{step_index, source, type, status, created_at, content, thinking,
//! tool_calls[{name, args}], truncated_fields}`: `source` is `USER_EXPLICIT`, `MODEL` or
//! `SYSTEM`; a `USER_INPUT` step holds the request in `<USER_REQUEST>` (and the settings the
//! person changed, the model among them, in `<USER_SETTINGS_CHANGE>`); a `PLANNER_RESPONSE`
//! holds the model's thinking, its text and the calls it makes, each argument a value written as
//! JSON text; the steps after it (`LIST_DIRECTORY`, `VIEW_FILE`, `RUN_COMMAND`, `CODE_ACTION`,
//! `SEARCH_WEB`, `GREP_SEARCH`, `GENERIC`, …) are what those calls did, in order, and carry no
//! call id: each answers the oldest call still open. `CHECKPOINT` marks a compaction,
//! `SYSTEM_MESSAGE` a note the harness sent, `CONVERSATION_HISTORY` the history replayed. The
//! transcript names no working directory. Steps of the same bytes may repeat (a trimmed one),
//! so a record is known by its line's place as well.

use std::collections::VecDeque;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::edited_path;
use super::{
    LineOutput, MAX_INPUT_STRING_BYTES, MAX_TEXT_BYTES, SessionMeta, SourceParser, ToolOutput,
    cap_json, cap_text, count_unknown, line_timestamp, note_timestamp, set_latest, str_at,
};
use crate::archive::discover::{DirOrigin, FoundFile};
use crate::archive::{Agent, PromptSource, Record, RecordKind, ToolKind};

/// The variable naming Antigravity's CLI folder (`~/.gemini/antigravity-cli`), which holds
/// `brain/`.
pub const ENV_DIR: &str = "ANTIGRAVITY_CLI_DIR";

/// A conversation's transcript, under its folder.
const TRANSCRIPT: &str = "transcript.jsonl";

/// Where the CLI keeps its conversations (the same on Linux and macOS):
/// `$ANTIGRAVITY_CLI_DIR/brain` when set, else `~/.gemini/antigravity-cli/brain`.
pub fn locations(
    env: impl Fn(&str) -> Option<PathBuf>,
    home: Option<&Path>,
) -> Vec<(PathBuf, DirOrigin)> {
    crate::archive::discover::env_or_home(
        env,
        ENV_DIR,
        "brain",
        home,
        &[".gemini/antigravity-cli/brain"],
    )
}

/// A conversation's `<id>/.system_generated/logs/transcript.jsonl`, named by its folder.
pub fn classify(path: &Path) -> Option<FoundFile> {
    if path.file_name()? != TRANSCRIPT {
        return None;
    }
    let logs = path.parent()?;
    let generated = logs.parent()?;
    if logs.file_name()? != "logs" || generated.file_name()? != ".system_generated" {
        return None;
    }
    let conversation = generated.parent()?.file_name()?.to_str()?;
    Some(FoundFile {
        parent_hint: Some(conversation.to_owned()),
        ..FoundFile::main(Agent::Antigravity, path)
    })
}

/// Whether a transcript's path is Antigravity's (for the hook, given only a path).
pub fn owns_path(path: &Path) -> bool {
    path.to_string_lossy().contains("/antigravity-cli/brain/") && classify(path).is_some()
}

#[derive(Debug, Default, Serialize, Deserialize)]
pub struct AntigravityParser {
    meta: SessionMeta,
    /// The calls of the last plans whose steps have not run yet, oldest first.
    pending: VecDeque<String>,
}

impl AntigravityParser {
    pub fn resume(saved: Option<&Value>) -> Result<Self, serde_json::Error> {
        let mut parser = match saved {
            Some(state) => serde_json::from_value(state.clone())?,
            None => AntigravityParser::default(),
        };
        parser
            .meta
            .provider
            .get_or_insert_with(|| "google".to_owned());
        Ok(parser)
    }

    /// A person's request: the text of `<USER_REQUEST>`, and the model they chose in
    /// `<USER_SETTINGS_CHANGE>`.
    fn user_input(&mut self, content: &str, base: Record, out: &mut LineOutput) {
        if let Some(model) = between(content, "<USER_SETTINGS_CHANGE>", "</USER_SETTINGS_CHANGE>")
            .and_then(|c| c.split("`Model Selection`").nth(1))
            .and_then(|c| c.split(" to ").nth(1))
            .map(|m| m.trim().trim_end_matches('.').trim())
        {
            set_latest(&mut self.meta.model, Some(model));
        }
        let text = between(content, "<USER_REQUEST>", "</USER_REQUEST>")
            .unwrap_or(content)
            .trim();
        if text.is_empty() {
            return;
        }
        out.records.push(Record {
            kind: Some(RecordKind::Message),
            source_event_kind: "antigravity:USER_INPUT".to_owned(),
            role: Some("user".to_owned()),
            prompt_source: Some(PromptSource::Human),
            text: Some(cap_text(text.to_owned(), MAX_TEXT_BYTES)),
            ..base
        });
    }

    fn plan(&mut self, step: &Value, base: Record, out: &mut LineOutput) {
        let base = Record {
            role: Some("assistant".to_owned()),
            ..base
        };
        if let Some(text) = str_at(step, &["thinking"]).filter(|t| !t.trim().is_empty()) {
            out.records.push(Record {
                kind: Some(RecordKind::Reasoning),
                source_event_kind: "antigravity:PLANNER_RESPONSE:thinking".to_owned(),
                text: Some(cap_text(text.to_owned(), MAX_TEXT_BYTES)),
                ..base.clone()
            });
        }
        if let Some(text) = str_at(step, &["content"]).filter(|t| !t.trim().is_empty()) {
            out.records.push(Record {
                block: 1,
                kind: Some(RecordKind::Message),
                source_event_kind: "antigravity:PLANNER_RESPONSE".to_owned(),
                text: Some(cap_text(text.to_owned(), MAX_TEXT_BYTES)),
                ..base.clone()
            });
        }
        let calls = step.get("tool_calls").and_then(Value::as_array);
        for (i, call) in calls.into_iter().flatten().enumerate() {
            let name = str_at(call, &["name"]).unwrap_or("unknown").to_owned();
            let mut input = call.get("args").map(decoded_args);
            let kind = tool_kind(&name);
            let file_paths = edited_path(
                kind,
                input.as_ref(),
                &["TargetFile", "AbsolutePath", "FilePath"],
            );
            if let Some(i) = input.as_mut() {
                cap_json(i, MAX_INPUT_STRING_BYTES);
            }
            self.pending.push_back(name.clone());
            out.records.push(Record {
                block: u32::try_from(i + 2).unwrap_or(u32::MAX),
                kind: Some(RecordKind::ToolCall),
                source_event_kind: "antigravity:PLANNER_RESPONSE:tool_call".to_owned(),
                tool_kind: Some(kind),
                tool_name: Some(name),
                tool_input: input,
                file_paths,
                ..base.clone()
            });
        }
    }

    /// A step a call ran: the oldest open call's result (named by the step's type when no
    /// call is open).
    fn tool_step(&mut self, kind: &str, step: &Value, base: Record, out: &mut LineOutput) {
        let name = self
            .pending
            .pop_front()
            .unwrap_or_else(|| kind.to_ascii_lowercase());
        let output = ToolOutput {
            name: Some(name),
            text: str_at(step, &["content"]).map(str::to_owned),
            failed: str_at(step, &["status"]).map(|s| s == "ERROR" || s == "FAILED"),
            ..ToolOutput::default()
        };
        out.records
            .push(output.record(format!("antigravity:{kind}"), tool_kind, base));
    }
}

impl SourceParser for AntigravityParser {
    fn agent(&self) -> Agent {
        Agent::Antigravity
    }

    fn meta(&self) -> &SessionMeta {
        &self.meta
    }

    fn save(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }

    fn parse_line(&mut self, raw: &str, out: &mut LineOutput) -> Result<(), serde_json::Error> {
        let step: Value = serde_json::from_str(raw)?;
        let Some(kind) = str_at(&step, &["type"]) else {
            count_unknown(&mut self.meta, "<untyped>");
            return Ok(());
        };
        let timestamp = line_timestamp(&mut self.meta, str_at(&step, &["created_at"]), out)
            .map(|t| t.into_owned());
        note_timestamp(&mut self.meta, timestamp.as_deref());
        let base = Record {
            timestamp,
            ..Record::default()
        };
        let content = str_at(&step, &["content"]).unwrap_or("");
        match (kind, str_at(&step, &["source"])) {
            ("USER_INPUT", _) => self.user_input(content, base, out),
            ("PLANNER_RESPONSE", _) => self.plan(&step, base, out),
            // The history replayed to the model: nothing new.
            ("CONVERSATION_HISTORY", _) => {}
            ("CHECKPOINT", _) => out.records.push(Record {
                kind: Some(RecordKind::Event),
                source_event_kind: "antigravity:CHECKPOINT".to_owned(),
                text: Some(cap_text(content.to_owned(), MAX_TEXT_BYTES)),
                is_compaction: true,
                ..base
            }),
            ("SYSTEM_MESSAGE", _) => out.records.push(Record {
                kind: Some(RecordKind::Event),
                source_event_kind: "antigravity:SYSTEM_MESSAGE".to_owned(),
                text: Some(cap_text(content.to_owned(), MAX_TEXT_BYTES)),
                ..base
            }),
            // What the model's calls did.
            (other, Some("MODEL")) => {
                let kind = crate::text::one_line(other, 40);
                self.tool_step(&kind, &step, base, out);
            }
            (other, _) => count_unknown(&mut self.meta, other),
        }
        Ok(())
    }
}

/// The text between `open` and `close` (to the end when `close` is missing).
fn between<'t>(text: &'t str, open: &str, close: &str) -> Option<&'t str> {
    let start = text.find(open)? + open.len();
    let rest = &text[start..];
    Some(rest.find(close).map_or(rest, |end| &rest[..end]))
}

/// A call's arguments with each value written as JSON text read as that value (a text that is
/// not JSON stays text).
fn decoded_args(args: &Value) -> Value {
    match args {
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| {
                    let v = match v {
                        Value::String(s) => {
                            serde_json::from_str(s).unwrap_or_else(|_| Value::String(s.clone()))
                        }
                        other => other.clone(),
                    };
                    (k.clone(), v)
                })
                .collect(),
        ),
        other => other.clone(),
    }
}

/// Antigravity's tool names in Cairn's kinds.
pub fn tool_kind(name: &str) -> ToolKind {
    match name {
        "run_command" | "send_command_input" => ToolKind::Exec,
        "write_file"
        | "write_to_file"
        | "replace_file_content"
        | "multi_replace_file_content"
        | "edit_file" => ToolKind::FileEdit,
        "search_web" | "read_url_content" => ToolKind::WebSearch,
        "browser_subagent" => ToolKind::SubAgent,
        "list_dir" | "view_file" | "view_file_outline" | "grep_search" | "find_by_name"
        | "codebase_search" | "command_status" => ToolKind::Housekeeping,
        other => ToolKind::of(other),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parse(lines: &[Value]) -> (AntigravityParser, LineOutput) {
        let mut parser = AntigravityParser::resume(None).unwrap();
        let mut out = LineOutput::default();
        for line in lines {
            parser.parse_line(&line.to_string(), &mut out).unwrap();
        }
        (parser, out)
    }

    #[test]
    fn steps_answer_the_calls_of_the_plan_before_them_in_order() {
        let (parser, out) = parse(&[
            json!({"step_index":0,"source":"USER_EXPLICIT","type":"USER_INPUT","created_at":"2026-06-26T21:16:16Z",
                "content":"<USER_REQUEST>\nFix it\n</USER_REQUEST>\n<USER_SETTINGS_CHANGE>\nThe user changed setting `Model Selection` from None to Gemini 3.5 Flash (Medium).\n</USER_SETTINGS_CHANGE>"}),
            json!({"step_index":1,"source":"MODEL","type":"PLANNER_RESPONSE","thinking":"write then run","tool_calls":[
                {"name":"write_file","args":{"TargetFile":"\"/w/a.md\""}},
                {"name":"run_command","args":{"CommandLine":"\"make\""}}]}),
            json!({"step_index":2,"source":"MODEL","type":"CODE_ACTION","status":"DONE","content":"Created file"}),
            json!({"step_index":3,"source":"MODEL","type":"RUN_COMMAND","status":"DONE","content":"Exit code: 2"}),
            json!({"step_index":4,"source":"MODEL","type":"BROWSER_NAVIGATE","content":"opened"}),
            json!({"step_index":5,"source":"SYSTEM","type":"HOLOGRAM"}),
        ]);
        let m = parser.meta();
        assert_eq!(m.model.as_deref(), Some("Gemini 3.5 Flash (Medium)"));
        assert_eq!(out.records[0].text.as_deref(), Some("Fix it"));
        let call = &out.records[2];
        assert_eq!(
            (call.tool_kind, call.file_paths.clone()),
            (Some(ToolKind::FileEdit), vec!["/w/a.md".to_owned()])
        );
        assert_eq!(call.tool_input, Some(json!({"TargetFile": "/w/a.md"})));
        let results: Vec<_> = out
            .records
            .iter()
            .filter(|r| r.kind == Some(RecordKind::ToolResult))
            .map(|r| (r.tool_name.clone().unwrap(), r.exit_code))
            .collect();
        assert_eq!(
            results,
            [
                ("write_file".to_owned(), None),
                ("run_command".to_owned(), Some(2)),
                ("browser_navigate".to_owned(), None)
            ]
        );
        assert_eq!(m.unknown_types.keys().collect::<Vec<_>>(), ["HOLOGRAM"]);
    }

    #[test]
    fn a_transcript_is_named_by_its_conversation_folder() {
        let path = Path::new(
            "/h/.gemini/antigravity-cli/brain/c-1/.system_generated/logs/transcript.jsonl",
        );
        let found = classify(path).unwrap();
        assert_eq!(found.parent_hint.as_deref(), Some("c-1"));
        assert!(owns_path(path));
        assert!(
            classify(Path::new(
                "/h/.gemini/antigravity-cli/brain/c-1/transcript.jsonl"
            ))
            .is_none()
        );
    }
}

//! Pi, the coding agent (`pi`), and the agents that write its session format: one JSONL file a
//! session under `~/.pi/agent/sessions/<encoded cwd>/<time>_<id>.jsonl` (`$PI_CODING_AGENT_DIR`
//! moves `~/.pi/agent`).
//!
//! Session format 3: a `session` header `{id, version, timestamp, cwd, branchedFrom?}` (the
//! last is the file of the session this one was forked from), then entries linked by `id` and
//! `parentId`: `message {message{role, content[]}}` where a user's content is text (and
//! images), an assistant's is `text`, `thinking` and `toolCall {id, name, arguments}` blocks
//! with its `model`, `provider` and `usage {input, output, cacheRead, cacheWrite}`, and a
//! `toolResult` message answers one call (`toolCallId`, `toolName`, `content`, `isError`);
//! `model_change {provider, modelId}`, `thinking_level_change`, `compaction {summary}`,
//! `branch_summary {summary}`, an extension's `custom {customType, data}` (its own state, never
//! sent to the model) and `custom_message {content, display}` (context an extension put before
//! a turn). A `/tree` jump back continues from an earlier entry: the file keeps every branch,
//! read in the order written.
//!
//! OpenClaw writes the same format for its agents' sessions (see
//! [`openclaw`](super::openclaw)): this parser reads both, under the agent it is made for.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{
    LineOutput, MAX_INPUT_STRING_BYTES, MAX_TEXT_BYTES, SessionMeta, SourceParser, ToolOutput,
    cap_json, cap_text, count_unknown, is_system_injected, line_timestamp, note_timestamp,
    patch_paths, set_latest, set_once, str_at, text_value, u64_at,
};
use crate::archive::discover::{DirOrigin, FoundFile};
use crate::archive::{Agent, PromptSource, Record, RecordKind, TokenUsage, ToolKind};

/// The variable naming Pi's sessions folder (AgentsView's name).
pub const ENV_DIR: &str = "PI_DIR";

/// Pi's own variable for its agent folder (`~/.pi/agent`), which holds `sessions/`.
pub const AGENT_DIR: &str = "PI_CODING_AGENT_DIR";

/// Where Pi keeps its sessions (the same on Linux and macOS): `$PI_DIR` when set, else
/// `$PI_CODING_AGENT_DIR/sessions`, else `~/.pi/agent/sessions`.
pub fn locations(
    env: impl Fn(&str) -> Option<PathBuf>,
    home: Option<&Path>,
) -> Vec<(PathBuf, DirOrigin)> {
    crate::archive::discover::env_or_agent_home(
        env,
        ENV_DIR,
        "",
        home,
        &[(".pi/agent/sessions", AGENT_DIR, "sessions")],
    )
}

/// A `.jsonl` under Pi's sessions folder is a session (a folder per working directory).
pub fn classify(path: &Path) -> Option<FoundFile> {
    path.file_stem()?.to_str()?;
    Some(FoundFile::main(Agent::Pi, path))
}

/// Whether a transcript's path is Pi's (for the hook, given only a path).
pub fn owns_path(path: &Path) -> bool {
    path.to_string_lossy().contains("/.pi/agent/sessions/")
}

/// The parser of Pi's session format, for Pi or an agent that writes it.
#[derive(Debug, Serialize, Deserialize)]
pub struct PiParser {
    #[serde(skip, default = "pi")]
    agent: Agent,
    meta: SessionMeta,
    /// call id → tool name, for calls whose result has not been seen yet.
    pending_calls: BTreeMap<String, String>,
}

fn pi() -> Agent {
    Agent::Pi
}

impl PiParser {
    /// A parser of `agent`'s sessions, resumed from its saved state.
    pub fn resume(agent: Agent, saved: Option<&Value>) -> Result<Self, serde_json::Error> {
        let mut parser = match saved {
            Some(state) => serde_json::from_value(state.clone())?,
            None => PiParser {
                agent,
                meta: SessionMeta::default(),
                pending_calls: BTreeMap::new(),
            },
        };
        parser.agent = agent;
        Ok(parser)
    }

    /// The `<agent>:<kind>` every record of this parser names as its source.
    fn kind(&self, kind: &str) -> String {
        format!("{}:{kind}", self.agent)
    }

    fn header(&mut self, line: &Value) {
        let m = &mut self.meta;
        set_once(&mut m.session_id, str_at(line, &["id"]));
        set_once(&mut m.cwd, str_at(line, &["cwd"]));
        // A fork names the file it was forked from: `<time>_<id>.jsonl`.
        if let Some(parent) = str_at(line, &["branchedFrom"])
            .and_then(|p| Path::new(p).file_stem()?.to_str())
            .map(|stem| stem.rsplit_once('_').map_or(stem, |(_, id)| id))
            .filter(|id| !id.is_empty())
        {
            set_once(&mut m.parent_session_id, Some(parent));
            set_once(&mut m.relation, Some("fork"));
        }
    }

    fn message(&mut self, line: &Value, msg: &Value, base: Record, out: &mut LineOutput) {
        let role = str_at(msg, &["role"]).unwrap_or("");
        match role {
            "user" => {
                let kind = self.kind("message:user");
                self.user(msg.get("content"), PromptSource::Human, kind, base, out);
            }
            "assistant" => self.assistant(line, msg, base, out),
            "toolResult" => {
                let rec = self.tool_result(msg, base);
                out.records.push(rec);
            }
            // OpenClaw's own notes to the model.
            "system" => {
                let kind = self.kind("message:system");
                self.user(
                    msg.get("content"),
                    PromptSource::SystemInjected,
                    kind,
                    base,
                    out,
                );
            }
            "" => count_unknown(&mut self.meta, "message:<no role>"),
            other => count_unknown(&mut self.meta, &format!("message:{other}")),
        }
    }

    /// A prompt: its text blocks joined (images left out); one a person did not type is
    /// marked injected.
    fn user(
        &mut self,
        content: Option<&Value>,
        source: PromptSource,
        kind: String,
        base: Record,
        out: &mut LineOutput,
    ) {
        let Some(text) = content.and_then(text_value) else {
            return;
        };
        let source = if source == PromptSource::Human && is_system_injected(&text) {
            PromptSource::SystemInjected
        } else {
            source
        };
        out.records.push(Record {
            kind: Some(RecordKind::Message),
            source_event_kind: kind,
            role: Some("user".to_owned()),
            prompt_source: Some(source),
            text: Some(cap_text(text, MAX_TEXT_BYTES)),
            ..base
        });
    }

    fn assistant(&mut self, line: &Value, msg: &Value, base: Record, out: &mut LineOutput) {
        set_latest(&mut self.meta.model, str_at(msg, &["model"]));
        set_latest(&mut self.meta.provider, str_at(msg, &["provider"]));
        if let Some(u) = msg.get("usage").filter(|u| u.is_object()) {
            let usage = TokenUsage {
                input: u64_at(u, "input"),
                output: u64_at(u, "output"),
                cache_creation: u64_at(u, "cacheWrite"),
                cache_read: u64_at(u, "cacheRead"),
                reasoning: 0,
            };
            let id = str_at(line, &["id"])
                .or_else(|| str_at(msg, &["responseId"]))
                .unwrap_or("message");
            if usage != TokenUsage::default() {
                out.usage.push((id.to_owned(), usage));
            }
        }
        let blocks: Vec<Value> = match msg.get("content") {
            Some(Value::String(s)) => vec![serde_json::json!({"type": "text", "text": s})],
            Some(Value::Array(items)) => items.clone(),
            _ => return,
        };
        for (i, block) in blocks.iter().enumerate() {
            let base = Record {
                block: u32::try_from(i).unwrap_or(u32::MAX),
                ..base.clone()
            };
            match str_at(block, &["type"]) {
                Some("text") => {
                    if let Some(text) = str_at(block, &["text"]).filter(|t| !t.is_empty()) {
                        out.records.push(Record {
                            kind: Some(RecordKind::Message),
                            source_event_kind: self.kind("message:assistant:text"),
                            role: Some("assistant".to_owned()),
                            text: Some(cap_text(text.to_owned(), MAX_TEXT_BYTES)),
                            ..base
                        });
                    }
                }
                // A redacted thought (its text withheld by the provider) has nothing to keep.
                Some("thinking") => {
                    if let Some(text) = str_at(block, &["thinking"]).filter(|t| !t.is_empty()) {
                        out.records.push(Record {
                            kind: Some(RecordKind::Reasoning),
                            source_event_kind: self.kind("message:assistant:thinking"),
                            role: Some("assistant".to_owned()),
                            text: Some(cap_text(text.to_owned(), MAX_TEXT_BYTES)),
                            ..base
                        });
                    }
                }
                Some("toolCall") => {
                    let rec = self.tool_call(block, base);
                    out.records.push(rec);
                }
                Some(other) => count_unknown(&mut self.meta, &format!("content:{other}")),
                None => count_unknown(&mut self.meta, "content:<untyped>"),
            }
        }
    }

    fn tool_call(&mut self, block: &Value, base: Record) -> Record {
        let name = str_at(block, &["name"]).unwrap_or("unknown").to_owned();
        let call_id = str_at(block, &["id"]);
        if let Some(id) = call_id {
            super::remember_call(&mut self.pending_calls, id.to_owned(), name.clone());
        }
        let mut input = block.get("arguments").filter(|a| !a.is_null()).cloned();
        let tool_kind = tool_kind(&name);
        let file_paths = match (tool_kind, &input) {
            (ToolKind::FileEdit, Some(i)) => edited_paths(i),
            _ => Vec::new(),
        };
        if let Some(i) = input.as_mut() {
            cap_json(i, MAX_INPUT_STRING_BYTES);
        }
        Record {
            kind: Some(RecordKind::ToolCall),
            source_event_kind: self.kind("message:assistant:toolCall"),
            role: Some("assistant".to_owned()),
            tool_kind: Some(tool_kind),
            tool_name: Some(name),
            tool_input: input,
            call_id: call_id.map(str::to_owned),
            file_paths,
            ..base
        }
    }

    fn tool_result(&mut self, msg: &Value, base: Record) -> Record {
        let call_id = str_at(msg, &["toolCallId"]);
        let output = ToolOutput {
            name: call_id
                .and_then(|id| self.pending_calls.remove(id))
                .or_else(|| str_at(msg, &["toolName"]).map(str::to_owned)),
            call_id: call_id.map(str::to_owned),
            text: msg.get("content").and_then(text_value),
            failed: msg.get("isError").and_then(Value::as_bool),
            ..ToolOutput::default()
        };
        output.record(self.kind("message:toolResult"), tool_kind, base)
    }

    /// A summary that stands in for what came before it (`compaction`) or for a branch left
    /// behind (`branch_summary`).
    fn summary(&self, line: &Value, kind: &str, compaction: bool, base: Record) -> Option<Record> {
        let text = str_at(line, &["summary"]).filter(|s| !s.is_empty())?;
        Some(Record {
            kind: Some(RecordKind::Event),
            source_event_kind: self.kind(kind),
            text: Some(cap_text(text.to_owned(), MAX_TEXT_BYTES)),
            is_compaction: compaction,
            ..base
        })
    }
}

impl SourceParser for PiParser {
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
        let line: Value = serde_json::from_str(raw)?;
        let Some(kind) = str_at(&line, &["type"]) else {
            count_unknown(&mut self.meta, "<untyped>");
            return Ok(());
        };
        let timestamp = line_timestamp(&mut self.meta, str_at(&line, &["timestamp"]), out)
            .map(|t| t.into_owned());
        note_timestamp(&mut self.meta, timestamp.as_deref());
        let base = Record {
            timestamp,
            cwd: self.meta.cwd.clone(),
            ..Record::default()
        };
        match kind {
            "session" => self.header(&line),
            "message" => match line.get("message").filter(|m| m.is_object()) {
                Some(msg) => self.message(&line, msg, base, out),
                None => count_unknown(&mut self.meta, "message:<empty>"),
            },
            "model_change" => {
                set_latest(&mut self.meta.model, str_at(&line, &["modelId"]));
                set_latest(&mut self.meta.provider, str_at(&line, &["provider"]));
            }
            // The session's settings and an extension's own state: nothing said or done.
            "thinking_level_change" | "custom" => {}
            // Context an extension sends the model: a prompt it did not type when the person
            // saw it in the session, else (`display: false`, such as OpenClaw's runtime context
            // before every turn) an event of the session, kept for search, never a turn's prompt.
            "custom_message" => {
                let kind = self.kind("custom_message");
                if line.get("display").and_then(Value::as_bool) == Some(false) {
                    if let Some(text) = line.get("content").and_then(text_value) {
                        out.records.push(Record {
                            kind: Some(RecordKind::Event),
                            source_event_kind: kind,
                            text: Some(cap_text(text, MAX_TEXT_BYTES)),
                            ..base
                        });
                    }
                } else {
                    self.user(
                        line.get("content"),
                        PromptSource::SystemInjected,
                        kind,
                        base,
                        out,
                    );
                }
            }
            "compaction" => out
                .records
                .extend(self.summary(&line, "compaction", true, base)),
            "branch_summary" => {
                out.records
                    .extend(self.summary(&line, "branch_summary", false, base));
            }
            other => count_unknown(&mut self.meta, other),
        }
        Ok(())
    }
}

/// The paths an edit names: `path` (Pi's `edit` and `write`), `file_path` or `filePath`, or
/// the files of an `apply_patch` text.
fn edited_paths(input: &Value) -> Vec<String> {
    if let Some(p) = ["path", "file_path", "filePath"]
        .iter()
        .find_map(|k| str_at(input, &[k]))
    {
        return vec![p.to_owned()];
    }
    ["input", "patch"]
        .iter()
        .find_map(|k| str_at(input, &[k]))
        .map(patch_paths)
        .unwrap_or_default()
}

/// Pi's and OpenClaw's tool names in Cairn's (agentlog's) kinds: reads, searches and session
/// bookkeeping are housekeeping.
pub fn tool_kind(name: &str) -> ToolKind {
    match name {
        "bash" | "exec" | "shell_exec" | "run_terminal" => ToolKind::Exec,
        "edit" | "write" | "apply_patch" | "edit_file" | "write_file" | "multi_edit" => {
            ToolKind::FileEdit
        }
        "sessions_spawn" => ToolKind::SubAgent,
        "web_search" | "web_fetch" => ToolKind::WebSearch,
        "read" | "grep" | "find" | "ls" | "process" | "memory_search" | "memory_get"
        | "sessions_list" | "sessions_history" => ToolKind::Housekeeping,
        other => ToolKind::of(other),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::archive::Outcome;
    use serde_json::json;

    fn parse(agent: Agent, lines: &[Value]) -> (PiParser, LineOutput) {
        let mut parser = PiParser::resume(agent, None).unwrap();
        let mut out = LineOutput::default();
        for line in lines {
            parser.parse_line(&line.to_string(), &mut out).unwrap();
        }
        (parser, out)
    }

    #[test]
    fn calls_pair_with_their_results_and_edits_name_their_files() {
        let (parser, out) = parse(
            Agent::Pi,
            &[
                json!({"type":"session","version":3,"id":"s1","timestamp":"2026-05-12T01:02:27.657Z","cwd":"/w"}),
                json!({"type":"message","id":"a","timestamp":"2026-05-12T01:02:28Z","message":{"role":"user","content":[{"type":"text","text":"Fix it"},{"type":"image","data":"AAAA","mimeType":"image/png"}]}}),
                json!({"type":"message","id":"b","timestamp":"2026-05-12T01:02:29Z","message":{"role":"assistant","model":"m","provider":"p",
                    "usage":{"input":10,"output":5,"cacheRead":3,"cacheWrite":2},
                    "content":[{"type":"thinking","thinking":"","redacted":true},
                        {"type":"toolCall","id":"c1","name":"edit","arguments":{"path":"/w/a.rs","oldText":"a","newText":"b"}},
                        {"type":"toolCall","id":"c2","name":"bash","arguments":{"command":"cargo test"}}]}}),
                json!({"type":"message","id":"c","timestamp":"2026-05-12T01:02:30Z","message":{"role":"toolResult","toolCallId":"c2","toolName":"bash",
                    "content":[{"type":"text","text":"error\n\nCommand exited with code 101"}],"isError":true}}),
            ],
        );
        let m = parser.meta();
        assert_eq!(
            (
                m.session_id.as_deref(),
                m.cwd.as_deref(),
                m.model.as_deref()
            ),
            (Some("s1"), Some("/w"), Some("m"))
        );
        let kinds: Vec<_> = out.records.iter().map(|r| r.kind).collect();
        assert_eq!(
            kinds,
            [
                Some(RecordKind::Message),
                Some(RecordKind::ToolCall),
                Some(RecordKind::ToolCall),
                Some(RecordKind::ToolResult)
            ]
        );
        assert_eq!(out.records[0].text.as_deref(), Some("Fix it"));
        assert_eq!(out.records[1].file_paths, ["/w/a.rs"]);
        assert_eq!(out.records[1].tool_kind, Some(ToolKind::FileEdit));
        let result = &out.records[3];
        assert_eq!(
            (
                result.tool_name.as_deref(),
                result.exit_code,
                result.outcome
            ),
            (Some("bash"), Some(101), Some(Outcome::Failed))
        );
        assert_eq!(out.usage[0].1.cache_read, 3);
        assert_eq!(out.records[0].source_event_kind, "pi:message:user");
    }

    /// A fork names its parent by the file it came from; OpenClaw's injected context and
    /// system notes are not prompts a person typed; an unknown record is counted.
    #[test]
    fn forks_injected_context_and_unknown_records_are_read() {
        let (parser, out) = parse(
            Agent::Openclaw,
            &[
                json!({"type":"session","version":3,"id":"s2","cwd":"/w",
                    "branchedFrom":"/h/.pi/agent/sessions/--w--/2025-01-01T09-00-00-000Z_parent-uuid.jsonl"}),
                json!({"type":"custom_message","customType":"ctx","content":"Injected.","display":true}),
                json!({"type":"custom_message","customType":"ctx","content":"Hidden.","display":false}),
                json!({"type":"message","message":{"role":"system","content":[{"type":"text","text":"note"}]}}),
                json!({"type":"compaction","summary":"Earlier work.","firstKeptEntryId":"x"}),
                json!({"type":"compact","note":"legacy"}),
                json!({"type":"message","message":{"role":"bashExecution","command":"ls"}}),
            ],
        );
        let m = parser.meta();
        assert_eq!(
            (m.parent_session_id.as_deref(), m.relation.as_deref()),
            (Some("parent-uuid"), Some("fork"))
        );
        let kinds: Vec<_> = out
            .records
            .iter()
            .map(|r| (r.kind, r.prompt_source))
            .collect();
        let injected = (
            Some(RecordKind::Message),
            Some(PromptSource::SystemInjected),
        );
        assert_eq!(
            kinds,
            [
                injected,
                (Some(RecordKind::Event), None),
                injected,
                (Some(RecordKind::Event), None)
            ]
        );
        assert_eq!(out.records[0].source_event_kind, "openclaw:custom_message");
        assert_eq!(out.records[1].text.as_deref(), Some("Hidden."));
        assert_eq!(out.records[2].source_event_kind, "openclaw:message:system");
        assert!(out.records[3].is_compaction);
        assert_eq!(
            m.unknown_types.keys().collect::<Vec<_>>(),
            ["compact", "message:bashExecution"]
        );
    }

    #[test]
    fn sessions_are_found_by_either_variable_or_in_the_home() {
        let home = Some(Path::new("/h"));
        let none = |_: &str| None;
        let own = |v: &str| (v == AGENT_DIR).then(|| PathBuf::from("/p"));
        let named = |v: &str| (v == ENV_DIR || v == AGENT_DIR).then(|| PathBuf::from("/s"));
        let first = |l: Vec<(PathBuf, DirOrigin)>| l.into_iter().next();
        assert_eq!(
            first(locations(none, home)),
            Some((PathBuf::from("/h/.pi/agent/sessions"), DirOrigin::Default))
        );
        assert_eq!(
            first(locations(own, home)),
            Some((PathBuf::from("/p/sessions"), DirOrigin::Env))
        );
        assert_eq!(
            first(locations(named, home)),
            Some((PathBuf::from("/s"), DirOrigin::Env))
        );
        assert_eq!(
            classify(Path::new("/h/.pi/agent/sessions/--w--/t_id.jsonl")).map(|f| f.agent),
            Some(Agent::Pi)
        );
        assert!(owns_path(Path::new(
            "/h/.pi/agent/sessions/--w--/t_id.jsonl"
        )));
    }

    #[test]
    fn a_resumed_parser_keeps_its_agent_and_pending_calls() {
        let (parser, _) = parse(
            Agent::Openclaw,
            &[
                json!({"type":"message","message":{"role":"assistant","content":[
                {"type":"toolCall","id":"c1","name":"exec","arguments":{"command":"ls"}}]}}),
            ],
        );
        let mut resumed = PiParser::resume(Agent::Openclaw, Some(&parser.save())).unwrap();
        let mut out = LineOutput::default();
        resumed
            .parse_line(
                &json!({"type":"message","message":{"role":"toolResult","toolCallId":"c1","content":"a\n"}})
                    .to_string(),
                &mut out,
            )
            .unwrap();
        assert_eq!(resumed.agent(), Agent::Openclaw);
        assert_eq!(out.records[0].tool_name.as_deref(), Some("exec"));
        assert_eq!(out.records[0].tool_kind, Some(ToolKind::Exec));
    }
}

//! Grok Build, xAI's coding agent CLI (`grok`): a folder a session under
//! `~/.grok/sessions/<percent-encoded cwd>/<session id>/` (`$GROK_HOME` moves `~/.grok`),
//! holding `chat_history.jsonl` (the conversation, read here), `summary.json` beside it (id,
//! cwd, title, model, branch, times, a sub-agent's kind and parent), and journals Cairn does
//! not read (`updates.jsonl`, `signals.json`).
//!
//! `chat_history.jsonl` lines carry no ids and no times. Format 1 types each line: `system`
//! (the system prompt), `user` (`content` blocks; `synthetic_reason` marks one Grok wrote:
//! the environment, project instructions; an `interjection` is a person's, typed while the
//! agent worked), `reasoning` (`summary[]` texts), `assistant` (`content`, `tool_calls[{id,
//! name, arguments}]` with the arguments as JSON text, `model_id`), `tool_result`
//! (`tool_call_id`, `content`) and `backend_tool_call` (a search xAI's side ran). Format 0 is
//! OpenAI's chat shape by `role` (`system`, `user`, `assistant` with `tool_calls[{id,
//! function{name, arguments}}]` and `reasoning_content`, `tool`). Two lines may be the same
//! bytes (a prompt said twice), so a record is known by its line's place as well
//! ([`LineIdentity::Position`](super::LineIdentity::Position)); the times are the summary's.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::chat::Chat;
use super::{
    LineOutput, MAX_INPUT_STRING_BYTES, MAX_TEXT_BYTES, SessionMeta, SourceParser, cap_json,
    cap_text, count_unknown, note_timestamp, set_latest, set_once, str_at, text_value,
};
use crate::archive::discover::{DirOrigin, FoundFile};
use crate::archive::{Agent, PromptSource, Record, RecordKind, ToolKind};

/// The variable naming Grok's home folder (`~/.grok`), which holds `sessions/`.
pub const ENV_DIR: &str = "GROK_HOME";

/// A session's conversation, in its folder.
pub const CHAT_HISTORY: &str = "chat_history.jsonl";

/// The session's summary beside its conversation.
pub(crate) const SUMMARY: &str = "summary.json";

/// The most of a summary read.
const MAX_SUMMARY_BYTES: u64 = 4 * 1024 * 1024;

/// Where Grok keeps its sessions (the same on Linux and macOS): `$GROK_HOME/sessions` when
/// set, else `~/.grok/sessions`.
pub fn locations(
    env: impl Fn(&str) -> Option<PathBuf>,
    home: Option<&Path>,
) -> Vec<(PathBuf, DirOrigin)> {
    crate::archive::discover::env_or_home(env, ENV_DIR, "sessions", home, &[".grok/sessions"])
}

/// A session's `chat_history.jsonl`, named by its folder (its lines name no session); the other
/// journals of the folder are not sessions.
pub fn classify(path: &Path) -> Option<FoundFile> {
    FoundFile::named_by_folder(Agent::Grok, path, CHAT_HISTORY)
}

/// Whether a transcript's path is Grok's (for the hook, given only a path).
pub fn owns_path(path: &Path) -> bool {
    path.to_string_lossy().contains("/.grok/sessions/")
        && path.file_name().is_some_and(|n| n == CHAT_HISTORY)
}

#[derive(Debug, Default, Serialize, Deserialize)]
pub struct GrokParser {
    meta: SessionMeta,
    /// call id → tool name, for calls whose result has not been seen yet.
    pending_calls: BTreeMap<String, String>,
}

impl GrokParser {
    pub fn resume(saved: Option<&Value>) -> Result<Self, serde_json::Error> {
        let mut parser = match saved {
            Some(state) => serde_json::from_value(state.clone())?,
            None => GrokParser::default(),
        };
        parser.meta.provider.get_or_insert_with(|| "xai".to_owned());
        Ok(parser)
    }

    /// The parser of `file`, resumed, with what the summary beside it says now (read again at
    /// every read: Grok rewrites it as the session goes on). A session without one is named
    /// by its folder ([`classify`]'s hint).
    pub fn for_file(file: &FoundFile, saved: Option<&Value>) -> Result<Self, serde_json::Error> {
        let mut parser = Self::resume(saved)?;
        let summary = file.path.with_file_name(SUMMARY);
        if let Some(s) = super::read_small_json(&summary, MAX_SUMMARY_BYTES) {
            parser.summary(&s);
        }
        Ok(parser)
    }

    fn summary(&mut self, s: &Value) {
        let m = &mut self.meta;
        set_once(&mut m.session_id, str_at(s, &["info", "id"]));
        set_once(&mut m.cwd, str_at(s, &["info", "cwd"]));
        set_latest(
            &mut m.title,
            str_at(s, &["generated_title"]).or_else(|| str_at(s, &["session_summary"])),
        );
        set_latest(&mut m.model, str_at(s, &["current_model_id"]));
        set_latest(&mut m.git_branch, str_at(s, &["head_branch"]));
        if let Some(parent) = str_at(s, &["parent_session_id"]) {
            set_once(&mut m.parent_session_id, Some(parent));
            let relation = if str_at(s, &["session_kind"]) == Some("subagent") {
                "subagent"
            } else {
                "fork"
            };
            set_once(&mut m.relation, Some(relation));
        }
        for key in ["created_at", "updated_at"] {
            let at = str_at(s, &[key]).and_then(crate::text::rfc3339);
            note_timestamp(m, at.as_deref());
        }
    }

    fn user(&mut self, line: &Value, format: &str, out: &mut LineOutput) {
        let Some(text) = line.get("content").and_then(text_value) else {
            return;
        };
        // What Grok wrote itself (the environment, project instructions), never shown as the
        // person's, is an event of the session, kept for search, never a turn's prompt; an
        // interjection is typed by a person while the agent works.
        let reason = str_at(line, &["synthetic_reason"]).filter(|r| *r != "interjection");
        if let Some(reason) = reason {
            // The environment names the workspace: the cwd of a session whose summary is gone
            // or not written yet.
            if reason == "environment_context" {
                let workspace = text
                    .lines()
                    .find_map(|l| l.trim().strip_prefix("Workspace Path:"))
                    .map(str::trim);
                set_once(&mut self.meta.cwd, workspace);
            }
            out.records.push(Record {
                kind: Some(RecordKind::Event),
                source_event_kind: format!("grok:{format}:user:{reason}"),
                text: Some(cap_text(text, MAX_TEXT_BYTES)),
                cwd: self.meta.cwd.clone(),
                ..Record::default()
            });
            return;
        }
        out.records.push(Record {
            kind: Some(RecordKind::Message),
            source_event_kind: format!("grok:{format}:user"),
            role: Some("user".to_owned()),
            prompt_source: Some(PromptSource::Human),
            text: Some(cap_text(text, MAX_TEXT_BYTES)),
            cwd: self.meta.cwd.clone(),
            ..Record::default()
        });
    }

    fn assistant(&mut self, line: &Value, out: &mut LineOutput) {
        set_latest(&mut self.meta.model, str_at(line, &["model_id"]));
        let base = Record {
            cwd: self.meta.cwd.clone(),
            ..Record::default()
        };
        CHAT.assistant(line, &mut self.pending_calls, base, &mut out.records);
    }

    fn tool_result(&mut self, line: &Value, out: &mut LineOutput) {
        let base = Record {
            cwd: self.meta.cwd.clone(),
            ..Record::default()
        };
        let result = CHAT.tool(line, &mut self.pending_calls, None, base);
        out.records.push(result);
    }

    /// A tool xAI's side ran (a web search): its call, with what it searched for.
    fn backend_call(&mut self, line: &Value, out: &mut LineOutput) {
        let kind = line.get("kind").unwrap_or(&Value::Null);
        let name = str_at(kind, &["tool_type"]).unwrap_or("backend_tool");
        let mut input = kind.get("action").cloned();
        if let Some(i) = input.as_mut() {
            cap_json(i, MAX_INPUT_STRING_BYTES);
        }
        out.records.push(Record {
            kind: Some(RecordKind::ToolCall),
            source_event_kind: "grok:backend_tool_call".to_owned(),
            role: Some("assistant".to_owned()),
            tool_kind: Some(tool_kind(name)),
            tool_name: Some(name.to_owned()),
            tool_input: input,
            call_id: str_at(kind, &["id"]).map(str::to_owned),
            cwd: self.meta.cwd.clone(),
            ..Record::default()
        });
    }
}

impl SourceParser for GrokParser {
    fn agent(&self) -> Agent {
        Agent::Grok
    }

    fn meta(&self) -> &SessionMeta {
        &self.meta
    }

    fn save(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }

    fn parse_line(&mut self, raw: &str, out: &mut LineOutput) -> Result<(), serde_json::Error> {
        let line: Value = serde_json::from_str(raw)?;
        let (kind, format) = match (str_at(&line, &["type"]), str_at(&line, &["role"])) {
            (Some(kind), _) => (kind, "v1"),
            (None, Some(role)) => (role, "v0"),
            (None, None) => {
                count_unknown(&mut self.meta, "<untyped>");
                return Ok(());
            }
        };
        match kind {
            // The system prompt: the agent's, the same in every session.
            "system" => {}
            "user" => self.user(&line, format, out),
            "reasoning" => {
                let text = line.get("summary").and_then(text_value);
                if let Some(text) = text {
                    out.records.push(Record {
                        kind: Some(RecordKind::Reasoning),
                        source_event_kind: "grok:v1:reasoning".to_owned(),
                        role: Some("assistant".to_owned()),
                        text: Some(cap_text(text, MAX_TEXT_BYTES)),
                        cwd: self.meta.cwd.clone(),
                        ..Record::default()
                    });
                }
            }
            "assistant" => self.assistant(&line, out),
            "tool_result" | "tool" => self.tool_result(&line, out),
            "backend_tool_call" => self.backend_call(&line, out),
            other => count_unknown(&mut self.meta, other),
        }
        Ok(())
    }
}

/// How Grok's assistant and tool lines read (both formats: OpenAI's chat shape).
const CHAT: Chat = Chat {
    agent: Agent::Grok,
    tool_kind,
};

/// Grok's tool names in Cairn's kinds: it names its tools as Cursor's editor does
/// (`read_file`, `run_terminal_cmd`, `edit_file`, `search_replace`, …).
pub fn tool_kind(name: &str) -> ToolKind {
    super::cursor_ide::tool_kind(name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parse(lines: &[Value]) -> (GrokParser, LineOutput) {
        let mut parser = GrokParser::resume(None).unwrap();
        let mut out = LineOutput::default();
        for line in lines {
            parser.parse_line(&line.to_string(), &mut out).unwrap();
        }
        (parser, out)
    }

    #[test]
    fn both_formats_pair_calls_with_results() {
        for lines in [
            vec![
                json!({"type":"user","content":[{"type":"text","text":"<user_info>\nOS Version: linux\nWorkspace Path: /w\n</user_info>"}],"synthetic_reason":"environment_context"}),
                json!({"type":"user","content":[{"type":"text","text":"Fix it"}],"prompt_index":0}),
                json!({"type":"assistant","content":"","model_id":"grok-4.5","tool_calls":[
                    {"id":"c1","name":"edit_file","arguments":"{\"target_file\":\"/w/a.rs\"}"},
                    {"id":"c2","name":"run_terminal_cmd","arguments":"{\"command\":\"make\"}"}]}),
                json!({"type":"tool_result","tool_call_id":"c2","content":"Exit code: 2"}),
            ],
            vec![
                json!({"role":"system","content":"You are Grok"}),
                json!({"role":"user","content":"Fix it"}),
                json!({"role":"assistant","content":null,"model_id":"grok-4.5","reasoning_content":"think","tool_calls":[
                    {"id":"c1","type":"function","function":{"name":"edit_file","arguments":"{\"target_file\":\"/w/a.rs\"}"}},
                    {"id":"c2","type":"function","function":{"name":"run_terminal_cmd","arguments":"{\"command\":\"make\"}"}}]}),
                json!({"role":"tool","tool_call_id":"c2","content":"Exit code: 2"}),
            ],
        ] {
            let (parser, out) = parse(&lines);
            let prompt = out
                .records
                .iter()
                .find(|r| r.kind == Some(RecordKind::Message))
                .unwrap();
            assert_eq!(
                (prompt.text.as_deref(), prompt.prompt_source),
                (Some("Fix it"), Some(PromptSource::Human))
            );
            let edit = out
                .records
                .iter()
                .find(|r| r.call_id.as_deref() == Some("c1"))
                .unwrap();
            assert_eq!(
                (edit.tool_kind, edit.file_paths.clone()),
                (Some(ToolKind::FileEdit), vec!["/w/a.rs".to_owned()])
            );
            let result = out.records.last().unwrap();
            assert_eq!(
                (
                    result.tool_name.as_deref(),
                    result.tool_kind,
                    result.exit_code
                ),
                (Some("run_terminal_cmd"), Some(ToolKind::Exec), Some(2))
            );
            assert_eq!(parser.meta().model.as_deref(), Some("grok-4.5"));
        }
        let (parser, _) = parse(&[
            json!({"type":"user","content":[{"type":"text","text":"<user_info>\nWorkspace Path: /w\n</user_info>"}],"synthetic_reason":"environment_context"}),
        ]);
        assert_eq!(parser.meta().cwd.as_deref(), Some("/w"));
    }

    /// The summary beside the conversation names the session, its times, branch and title; a
    /// sub-agent's names its parent; a folder without one names the session by itself.
    #[test]
    fn the_summary_beside_a_session_describes_it() {
        let dir = tempfile::tempdir().unwrap();
        let folder = dir.path().join("%2Fw/s-1");
        std::fs::create_dir_all(&folder).unwrap();
        let log = folder.join(CHAT_HISTORY);
        std::fs::write(&log, "").unwrap();
        let file = classify(&log).unwrap();
        assert_eq!(file.parent_hint.as_deref(), Some("s-1"));
        let bare = GrokParser::for_file(&file, None).unwrap();
        assert_eq!(bare.meta.session_id, None);
        std::fs::write(
            folder.join(SUMMARY),
            json!({"info":{"id":"s-1","cwd":"/w"},"generated_title":"Fix the build",
                "created_at":"2026-07-31T10:13:27.574131Z","updated_at":"2026-07-31T10:15:02Z",
                "current_model_id":"grok-4.5","head_branch":"main","session_kind":"subagent",
                "parent_session_id":"p-1"})
            .to_string(),
        )
        .unwrap();
        let p = GrokParser::for_file(&file, None).unwrap();
        let m = &p.meta;
        assert_eq!(
            (
                m.cwd.as_deref(),
                m.title.as_deref(),
                m.git_branch.as_deref()
            ),
            (Some("/w"), Some("Fix the build"), Some("main"))
        );
        assert_eq!(
            (m.parent_session_id.as_deref(), m.relation.as_deref()),
            (Some("p-1"), Some("subagent"))
        );
        assert_eq!(m.updated_at.as_deref(), Some("2026-07-31T10:15:02Z"));
        assert!(classify(&folder.join("updates.jsonl")).is_none());
    }
}

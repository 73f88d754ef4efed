//! Gemini CLI sessions (`~/.gemini/tmp/<project>/chats/`), in both of its formats:
//!
//! - legacy `session-<time>-<id8>.json`: one document `{sessionId, projectHash, startTime,
//!   lastUpdated, summary?, directories?, kind?, messages[]}` the CLI rewrites in place after
//!   every message (the [`ReadKind::Document`] kind: units are the messages, keyed by `id`);
//! - `.jsonl`: an event log whose first line is that header without `messages`, then message
//!   records appended, **re-appended with the same `id`** when tool results or tokens arrive
//!   (the last one wins), `{"$set": {…}}` header updates (`$set.messages` replaces the whole
//!   history) and `{"$rewindTo": "<id>"}` (that message and every later one are dropped).
//!
//! Either way a message is a unit and its records are keyed (`text`, `thought:<n>`,
//! `call:<id>`, `result:<id>`, `event`), so a message the CLI rewrites updates its records in
//! place and a dropped one is retracted. Messages: `user` (a person's prompt), `gemini` (text,
//! `thoughts[]`, `toolCalls[]` each with its `result[].functionResponse.response.output|error`
//! and `status`, `tokens`, `model`), `info|error|warning` (events).
//! cwd is not written: `directories[0]` when present, else the ancestor of an absolute path in
//! a tool argument whose SHA-256 is the session's `projectHash` (how the CLI names the folder).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

use super::{
    DocumentParser, KeyedUnits, LineOutput, MAX_INPUT_STRING_BYTES, MAX_TEXT_BYTES, ReadKind,
    SessionMeta, Shallow, SourceParser, ToolOutput, cap_json, cap_text, count_unknown,
    is_system_injected, line_timestamp, note_timestamp, set_latest, set_once, str_at, text_value,
    u64_at,
};
use crate::archive::discover::{DirOrigin, FoundFile};
use crate::archive::{Agent, PromptSource, Record, RecordKind, TokenUsage, ToolKind};

/// The variable naming Gemini CLI's folder (`.gemini`: AgentsView's name); sessions are under
/// its `tmp/`.
pub const ENV_DIR: &str = "GEMINI_DIR";

/// The variable Gemini CLI itself reads in place of the home directory (one profile per
/// account): its folder is then `$GEMINI_CLI_HOME/.gemini`.
pub const ENV_HOME: &str = "GEMINI_CLI_HOME";

/// Gemini CLI's folder: `$GEMINI_DIR`, else `$GEMINI_CLI_HOME/.gemini`, else `~/.gemini`.
pub fn folder(
    env: impl Fn(&str) -> Option<PathBuf>,
    home: Option<&Path>,
) -> Option<(PathBuf, DirOrigin)> {
    env(ENV_DIR)
        .map(|d| (d, DirOrigin::Env))
        .or_else(|| env(ENV_HOME).map(|h| (h.join(".gemini"), DirOrigin::Env)))
        .or_else(|| home.map(|h| (h.join(".gemini"), DirOrigin::Default)))
}

/// Where Gemini CLI keeps its sessions (the same on Linux and macOS): the `tmp/` of its
/// [`folder`].
pub fn locations(
    env: impl Fn(&str) -> Option<PathBuf>,
    home: Option<&Path>,
) -> Vec<(PathBuf, DirOrigin)> {
    folder(env, home)
        .map(|(dir, origin)| (dir.join("tmp"), origin))
        .into_iter()
        .collect()
}

/// A session file: `<project>/chats/session-*.json`, `<project>/chats/*.jsonl`, or a
/// sub-agent's `<project>/chats/<parent id>/<id>.jsonl`. Nothing else under `tmp/` (logs,
/// checkpoints, tool output) is a transcript.
pub fn classify(path: &Path) -> Option<FoundFile> {
    let name = path.file_name()?.to_str()?;
    let ext = path.extension()?.to_str()?;
    let in_chats = |p: Option<&Path>| p.and_then(Path::file_name).is_some_and(|n| n == "chats");
    let parent = path.parent();
    let ok = match ext {
        "json" => name.starts_with("session-") && in_chats(parent),
        "jsonl" => in_chats(parent) || in_chats(parent.and_then(Path::parent)),
        _ => false,
    };
    ok.then(|| FoundFile::main(Agent::Gemini, path))
}

/// Whether a transcript's path is Gemini CLI's (for the hook, given only a path).
pub fn owns_path(path: &Path) -> bool {
    path.to_string_lossy().contains("/.gemini/tmp/")
}

/// `.json` files are documents rewritten in place; `.jsonl` files are event logs.
pub fn read_kind(path: &Path) -> ReadKind {
    match path.extension().and_then(|e| e.to_str()) {
        Some("json") => ReadKind::Document,
        _ => ReadKind::Lines,
    }
}

/// Whether the first line of a transcript is a Gemini CLI header.
pub fn sniff(first: &Value) -> bool {
    first.get("projectHash").is_some() && first.get("sessionId").is_some()
}

#[derive(Debug, Default, Serialize, Deserialize)]
pub struct GeminiParser {
    meta: SessionMeta,
    project_hash: Option<String>,
    /// Message ids in order, for `$rewindTo` (JSONL only).
    ids: Vec<String>,
}

impl GeminiParser {
    pub fn resume(saved: Option<&Value>) -> Result<Self, serde_json::Error> {
        match saved {
            Some(state) => serde_json::from_value(state.clone()),
            None => Ok(GeminiParser::default()),
        }
    }

    /// The session header (the JSONL's first line, a document without its messages, or a
    /// `$set`).
    fn read_header(&mut self, h: &Value, out: &mut LineOutput) {
        set_once(&mut self.meta.session_id, str_at(h, &["sessionId"]));
        set_once(&mut self.project_hash, str_at(h, &["projectHash"]));
        set_latest(&mut self.meta.title, str_at(h, &["summary"]));
        if let Some(dir) = h
            .get("directories")
            .and_then(Value::as_array)
            .and_then(|d| d.first())
            .and_then(Value::as_str)
        {
            set_once(&mut self.meta.cwd, Some(dir));
        }
        if str_at(h, &["kind"]) == Some("subagent") {
            set_once(&mut self.meta.relation, Some("subagent"));
        }
        for key in ["startTime", "lastUpdated"] {
            let ts = line_timestamp(&mut self.meta, str_at(h, &[key]), out);
            note_timestamp(&mut self.meta, ts.as_deref());
        }
    }

    /// One message: its records, keyed within the unit `id`.
    fn message(&mut self, id: &str, m: &Value, out: &mut LineOutput) {
        let ts =
            line_timestamp(&mut self.meta, str_at(m, &["timestamp"]), out).map(|t| t.into_owned());
        note_timestamp(&mut self.meta, ts.as_deref());
        let kind = str_at(m, &["type"]).unwrap_or("");
        let base = Record {
            timestamp: ts.clone(),
            message_id: Some(id.to_owned()),
            unit: Some(id.to_owned()),
            ..Record::default()
        };
        match kind {
            "user" => {
                let text = m
                    .get("content")
                    .and_then(text_value)
                    .or_else(|| m.get("displayContent").and_then(text_value));
                let Some(text) = text else { return };
                let source = if is_system_injected(&text) {
                    PromptSource::SystemInjected
                } else {
                    PromptSource::Human
                };
                out.records.push(Record {
                    kind: Some(RecordKind::Message),
                    key: Some("text".to_owned()),
                    source_event_kind: "gemini:user".to_owned(),
                    role: Some("user".to_owned()),
                    prompt_source: Some(source),
                    text: Some(cap_text(text, MAX_TEXT_BYTES)),
                    cwd: self.meta.cwd.clone(),
                    ..base
                });
            }
            "gemini" => self.assistant(m, base, out),
            "info" | "error" | "warning" => {
                let text = m.get("content").and_then(text_value);
                out.records.push(Record {
                    kind: Some(RecordKind::Event),
                    key: Some("event".to_owned()),
                    source_event_kind: format!("gemini:{kind}"),
                    text: text.map(|t| cap_text(t, MAX_TEXT_BYTES)),
                    ..base
                });
            }
            other => count_unknown(&mut self.meta, &format!("gemini:{other}")),
        }
    }

    fn assistant(&mut self, m: &Value, base: Record, out: &mut LineOutput) {
        set_latest(&mut self.meta.model, str_at(m, &["model"]));
        if let Some(tokens) = m.get("tokens").filter(|t| t.is_object()) {
            // `cached` is part of `input` (input + output + thoughts = total).
            let input = u64_at(tokens, "input");
            let cached = u64_at(tokens, "cached");
            out.usage.push((
                base.unit.clone().unwrap_or_default(),
                TokenUsage {
                    input: input.saturating_sub(cached),
                    output: u64_at(tokens, "output"),
                    cache_read: cached,
                    reasoning: u64_at(tokens, "thoughts"),
                    cache_creation: 0,
                },
            ));
        }
        if let Some(thoughts) = m.get("thoughts").and_then(Value::as_array) {
            for (i, t) in thoughts.iter().enumerate() {
                let subject = str_at(t, &["subject"]).unwrap_or("");
                let description = str_at(t, &["description"]).unwrap_or("");
                let text = match (subject.is_empty(), description.is_empty()) {
                    (true, true) => continue,
                    (false, false) => format!("{subject}: {description}"),
                    (false, true) => subject.to_owned(),
                    (true, false) => description.to_owned(),
                };
                out.records.push(Record {
                    kind: Some(RecordKind::Reasoning),
                    key: Some(format!("thought:{i}")),
                    source_event_kind: "gemini:gemini:thought".to_owned(),
                    role: Some("assistant".to_owned()),
                    text: Some(cap_text(text, MAX_TEXT_BYTES)),
                    ..base.clone()
                });
            }
        }
        if let Some(text) = m.get("content").and_then(text_value) {
            out.records.push(Record {
                kind: Some(RecordKind::Message),
                key: Some("text".to_owned()),
                source_event_kind: "gemini:gemini".to_owned(),
                role: Some("assistant".to_owned()),
                text: Some(cap_text(text, MAX_TEXT_BYTES)),
                ..base.clone()
            });
        }
        let Some(calls) = m.get("toolCalls").and_then(Value::as_array) else {
            return;
        };
        for (i, call) in calls.iter().enumerate() {
            if !call.is_object() {
                count_unknown(&mut self.meta, "gemini:toolCall:not-an-object");
                continue;
            }
            let id = str_at(call, &["id"])
                .map(str::to_owned)
                .unwrap_or_else(|| format!("#{i}"));
            let name = str_at(call, &["name"]).unwrap_or("unknown").to_owned();
            let args = call.get("args").cloned().filter(|a| !a.is_null());
            self.find_cwd(args.as_ref());
            let class = tool_kind(&name);
            let paths = if class == ToolKind::FileEdit {
                edited_path(args.as_ref()).into_iter().collect()
            } else {
                Vec::new()
            };
            let call_ts = str_at(call, &["timestamp"])
                .and_then(crate::text::rfc3339)
                .map(|t| t.into_owned())
                .or_else(|| base.timestamp.clone());
            let mut input = args;
            if let Some(v) = input.as_mut() {
                cap_json(v, MAX_INPUT_STRING_BYTES);
            }
            out.records.push(Record {
                kind: Some(RecordKind::ToolCall),
                key: Some(format!("call:{id}")),
                source_event_kind: "gemini:gemini:tool_call".to_owned(),
                role: Some("assistant".to_owned()),
                tool_name: Some(name.clone()),
                tool_kind: Some(class),
                tool_input: input,
                call_id: Some(id.clone()),
                file_paths: paths.clone(),
                timestamp: call_ts.clone(),
                cwd: self.meta.cwd.clone(),
                ..base.clone()
            });
            let status = str_at(call, &["status"]);
            let output = result_text(call);
            // Not run yet, or still running (`scheduled`, `validating`, `awaiting_approval`,
            // `executing`): no result to record; the CLI rewrites the message when there is.
            let over = matches!(status, Some("success" | "error" | "cancelled"));
            if output.is_none() && !over {
                continue;
            }
            let result = ToolOutput {
                name: Some(name),
                call_id: Some(id.clone()),
                text: output.filter(|t| !t.is_empty()),
                failed: match status {
                    Some("success") => Some(false),
                    Some("error") => Some(true),
                    _ => None,
                },
                ..ToolOutput::default()
            };
            out.records.push(result.record(
                match status {
                    Some(s) => format!("gemini:gemini:tool_result:{s}"),
                    None => "gemini:gemini:tool_result".to_owned(),
                },
                tool_kind,
                Record {
                    key: Some(format!("result:{id}")),
                    role: Some("tool".to_owned()),
                    file_paths: paths,
                    timestamp: call_ts,
                    cwd: self.meta.cwd.clone(),
                    ..base.clone()
                },
            ));
        }
    }

    /// cwd from an absolute path in a tool's arguments: the ancestor whose SHA-256 is the
    /// session's `projectHash`. Pure computation: no file is touched.
    fn find_cwd(&mut self, args: Option<&Value>) {
        let (None, Some(hash), Some(args)) = (&self.meta.cwd, &self.project_hash, args) else {
            return;
        };
        for key in [
            "file_path",
            "absolute_path",
            "dir_path",
            "directory",
            "path",
        ] {
            let Some(p) = args.get(key).and_then(Value::as_str) else {
                continue;
            };
            if !p.starts_with('/') || p.len() > 4096 {
                continue;
            }
            for dir in Path::new(p).ancestors() {
                let s = dir.to_string_lossy();
                if hex::encode(Sha256::digest(s.as_bytes())) == *hash {
                    self.meta.cwd = Some(s.into_owned());
                    return;
                }
            }
        }
    }

    /// Records of a whole history (`$set.messages`): every message upserted, ids no longer in
    /// it retracted.
    fn snapshot(&mut self, messages: &[Value], out: &mut LineOutput) {
        let mut ids = Vec::new();
        for (i, m) in messages.iter().enumerate() {
            let id = message_id(m, i);
            self.message(&id, m, out);
            ids.push(id);
        }
        for old in &self.ids {
            if !ids.contains(old) {
                out.retract_units.push(old.clone());
            }
        }
        self.ids = ids;
    }
}

/// A message's id, or its position when it has none.
fn message_id(m: &Value, i: usize) -> String {
    str_at(m, &["id"])
        .filter(|s| !s.is_empty())
        .map_or_else(|| format!("#{i}"), str::to_owned)
}

/// The text of a tool call's result: its function responses' `output` or `error`, else the
/// displayed result when it is text.
fn result_text(call: &Value) -> Option<String> {
    let mut out = String::new();
    if let Some(parts) = call.get("result").and_then(Value::as_array) {
        for part in parts {
            let Some(resp) = part.get("functionResponse").and_then(|f| f.get("response")) else {
                continue;
            };
            let piece = resp
                .get("output")
                .or_else(|| resp.get("error"))
                .and_then(|v| match v {
                    Value::String(s) => Some(s.clone()),
                    Value::Null => None,
                    other => Some(other.to_string()),
                });
            if let Some(piece) = piece {
                if !out.is_empty() {
                    out.push('\n');
                }
                out.push_str(&piece);
            }
        }
    }
    if out.is_empty()
        && let Some(display) = str_at(call, &["resultDisplay"])
    {
        out.push_str(display);
    }
    if out.is_empty()
        && let Some(diff) = str_at(call, &["resultDisplay", "fileDiff"])
    {
        out.push_str(diff);
    }
    (!out.is_empty()).then_some(out)
}

/// Cairn's kind of a Gemini CLI tool.
fn tool_kind(name: &str) -> ToolKind {
    match name {
        "replace" | "write_file" | "edit" | "smart_edit" => ToolKind::FileEdit,
        "run_shell_command" => ToolKind::Exec,
        "invoke_agent" => ToolKind::SubAgent,
        "read_file"
        | "read_many_files"
        | "list_directory"
        | "glob"
        | "search_file_content"
        | "grep_search"
        | "save_memory"
        | "write_todos" => ToolKind::Housekeeping,
        "web_fetch" | "google_web_search" => ToolKind::WebSearch,
        _ => ToolKind::Other,
    }
}

/// The file an edit tool writes.
fn edited_path(args: Option<&Value>) -> Option<String> {
    let args = args?;
    ["file_path", "absolute_path", "path"]
        .iter()
        .find_map(|k| args.get(k).and_then(Value::as_str))
        .filter(|p| !p.is_empty())
        .map(str::to_owned)
}

impl SourceParser for GeminiParser {
    fn agent(&self) -> Agent {
        Agent::Gemini
    }

    fn parse_line(&mut self, line: &str, out: &mut LineOutput) -> Result<(), serde_json::Error> {
        let v: Value = serde_json::from_str(line)?;
        let Some(obj) = v.as_object() else {
            count_unknown(&mut self.meta, "gemini:not-an-object");
            return Ok(());
        };
        if let Some(set) = obj.get("$set") {
            self.read_header(set, out);
            if let Some(messages) = set.get("messages").and_then(Value::as_array) {
                self.snapshot(messages, out);
            }
        } else if let Some(to) = obj.get("$rewindTo") {
            let to = to.as_str().unwrap_or_default();
            match self.ids.iter().position(|id| id == to) {
                Some(at) => out.retract_units.extend(self.ids.drain(at..)),
                None => count_unknown(&mut self.meta, "gemini:$rewindTo:unknown-id"),
            }
        } else if obj.contains_key("type") {
            let id = message_id(&v, self.ids.len());
            if !self.ids.contains(&id) {
                self.ids.push(id.clone());
            }
            self.message(&id, &v, out);
        } else if obj.contains_key("sessionId") {
            self.read_header(&v, out);
        } else {
            count_unknown(&mut self.meta, "gemini:unknown");
        }
        Ok(())
    }

    fn meta(&self) -> &SessionMeta {
        &self.meta
    }

    fn save(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }
}

impl DocumentParser for GeminiParser {
    fn units_at(&self) -> &'static [&'static str] {
        &["messages"]
    }

    fn split<'d>(&self, doc: Shallow<'d>) -> (Value, KeyedUnits<'d>) {
        let Shallow { mut doc, units } = doc;
        // `messages` of another type stays in the header, which counts it as unknown.
        let Some(messages) = units else {
            return (doc, Box::new(std::iter::empty()));
        };
        if let Some(o) = doc.as_object_mut() {
            o.remove("messages");
        }
        let units = messages.enumerate().map(|(i, m)| (message_id(&m, i), m));
        (doc, Box::new(units))
    }
}

impl super::UnitParser for GeminiParser {
    fn header(&mut self, header: &Value, out: &mut LineOutput) {
        if header.is_object() {
            if header.get("messages").is_some() {
                count_unknown(&mut self.meta, "gemini:messages-not-a-list");
            }
            self.read_header(header, out);
        } else {
            count_unknown(&mut self.meta, "gemini:document-not-an-object");
        }
    }

    fn unit(&mut self, key: &str, unit: &Value, out: &mut LineOutput) {
        if unit.is_object() {
            self.message(key, unit, out);
        } else {
            count_unknown(&mut self.meta, "gemini:message-not-an-object");
        }
    }

    fn meta(&self) -> &SessionMeta {
        &self.meta
    }

    fn save(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sub_agent_call_is_classed_as_one() {
        assert_eq!(tool_kind("invoke_agent"), ToolKind::SubAgent);
        assert_eq!(tool_kind("run_shell_command"), ToolKind::Exec);
        assert_eq!(tool_kind("codebase_investigator"), ToolKind::Other);
    }

    /// `GEMINI_DIR` names the folder; Gemini CLI's own `GEMINI_CLI_HOME` (a profile per account)
    /// names the home it sits in; otherwise it is under the home directory.
    #[test]
    fn the_folder_follows_gemini_dir_then_the_clis_own_home_variable() {
        let home = Path::new("/home/ann");
        let vars = |dir: Option<&str>, cli_home: Option<&str>| {
            let (dir, cli_home) = (dir.map(PathBuf::from), cli_home.map(PathBuf::from));
            move |name: &str| match name {
                ENV_DIR => dir.clone(),
                ENV_HOME => cli_home.clone(),
                _ => None,
            }
        };
        assert_eq!(
            locations(vars(None, None), Some(home)),
            [(PathBuf::from("/home/ann/.gemini/tmp"), DirOrigin::Default)]
        );
        assert_eq!(
            locations(vars(None, Some("/p/work")), Some(home)),
            [(PathBuf::from("/p/work/.gemini/tmp"), DirOrigin::Env)]
        );
        assert_eq!(
            locations(vars(Some("/g"), Some("/p/work")), Some(home)),
            [(PathBuf::from("/g/tmp"), DirOrigin::Env)]
        );
        assert!(locations(vars(None, None), None).is_empty());
    }

    #[test]
    fn only_session_files_under_chats_are_transcripts() {
        let yes = [
            "/h/.gemini/tmp/abc/chats/session-2026-01-01T00-00-12345678.json",
            "/h/.gemini/tmp/abc/chats/session-2026-01-01T00-00-12345678.jsonl",
            "/h/.gemini/tmp/abc/chats/parent-id/child.jsonl",
        ];
        for p in yes {
            assert!(classify(Path::new(p)).is_some(), "{p}");
        }
        let no = [
            "/h/.gemini/tmp/abc/logs.json",
            "/h/.gemini/tmp/abc/checkpoint-x.json",
            "/h/.gemini/tmp/abc/chats/other.json",
            "/h/.gemini/tmp/abc/chats/session-x.txt",
        ];
        for p in no {
            assert!(classify(Path::new(p)).is_none(), "{p}");
        }
    }

    #[test]
    fn cwd_is_the_ancestor_that_hashes_to_the_project() {
        let root = "/work/proj";
        let hash = hex::encode(Sha256::digest(root.as_bytes()));
        let mut p = GeminiParser {
            project_hash: Some(hash),
            ..GeminiParser::default()
        };
        p.find_cwd(Some(
            &serde_json::json!({"file_path": "/work/proj/src/a.rs"}),
        ));
        assert_eq!(p.meta.cwd.as_deref(), Some(root));
    }

    #[test]
    fn rewind_retracts_the_message_and_every_later_one() {
        let mut p = GeminiParser::default();
        let mut out = LineOutput::default();
        for id in ["a", "b", "c"] {
            let line = format!(r#"{{"id":"{id}","type":"user","content":"hi {id}"}}"#);
            p.parse_line(&line, &mut out).unwrap();
        }
        p.parse_line(r#"{"$rewindTo":"b"}"#, &mut out).unwrap();
        assert_eq!(out.retract_units, ["b", "c"]);
        assert_eq!(p.ids, ["a"]);
    }
}

//! Cline 4.x and the Cline CLI (its SDK): sessions in `<data>/sessions/<id>/`, where `<data>`
//! is `$CLINE_DATA_DIR`, else `~/.cline/data`. Read as the
//! [`ReadKind::Document`](super::ReadKind::Document) kind: `<id>.messages.json` is rewritten
//! whole after every model round. Cline 4.x writes no `ui_messages.json` any more.
//!
//! The document is `{version, sessionId, agent, origin, messages: [{id, role, ts (epoch ms),
//! content, modelInfo?, metrics?, metadata?}]}`; a message is a keyed unit under its `id`.
//! Content is a string or Anthropic-style blocks: `text`, `thinking`, `tool_use{id, name,
//! input}`, `tool_result{tool_use_id, name, content, is_error}` (content a string, blocks, or
//! `[{query, result, success, error}]`, which the `editor` tool writes as JSON text), `image`,
//! `file`. `metrics` are one model request's tokens, `inputTokens` counting the cached ones. A
//! user message of `metadata.kind` `compaction` is the compaction's summary. A person's text can
//! come wrapped in `<user_input mode="…">`.
//!
//! Beside it, `<id>.json` is the session's manifest (`cwd`, `model`, `provider`, `started_at`,
//! `metadata.title`), read as a sidecar. A sub-agent's messages lie in its root session's
//! folder as `<agent id>.messages.json` (a teammate's `<agent id>__<task id>.messages.json`),
//! without a manifest. Shapes from cline/cline's SDK (`messages-contract-v1.md`,
//! `session-artifacts.ts`, Apache-2.0); no real session could be copied.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::database::epoch_time;
use super::{
    DocumentParser, FileRole, KeyedUnits, LineOutput, MAX_INPUT_STRING_BYTES, MAX_TEXT_BYTES,
    SessionMeta, Shallow, ToolOutput, UnitParser, cap_json, cap_text, count_unknown,
    is_system_injected, note_timestamp, patch_paths, set_latest, set_once, str_at, text_value,
    u64_at,
};
use crate::archive::discover::FoundFile;
use crate::archive::{Agent, PromptSource, Record, RecordKind, TokenUsage, ToolKind};

/// Cline's own variable for its data folder (`sessions/` and `tasks/` lie in it).
pub const ENV_DATA: &str = "CLINE_DATA_DIR";

const SUFFIX: &str = ".messages.json";

/// The most of a manifest read.
const MAX_MANIFEST_BYTES: u64 = 8 * 1024 * 1024;

/// The session id a messages file names (`<id>.messages.json`).
fn stem(path: &Path) -> Option<&str> {
    path.file_name()?
        .to_str()?
        .strip_suffix(SUFFIX)
        .filter(|s| !s.is_empty())
}

/// `…/sessions/<id>/<name>.messages.json`.
pub fn is_messages_file(path: &Path) -> bool {
    stem(path).is_some()
        && path
            .parent()
            .and_then(Path::parent)
            .and_then(Path::file_name)
            .is_some_and(|n| n == "sessions")
}

/// A session's messages (`<folder>.messages.json`), or a sub-agent's in its root's folder.
pub fn classify(path: &Path) -> Option<FoundFile> {
    if !is_messages_file(path) {
        return None;
    }
    let folder = path.parent()?.file_name()?.to_str()?;
    let name = stem(path)?;
    let sub = name != folder;
    Some(FoundFile {
        agent: Agent::Cline,
        role: if sub {
            FileRole::Subagent
        } else {
            FileRole::Main
        },
        path: path.to_owned(),
        parent_hint: Some(folder.to_owned()),
        agent_id: sub.then(|| name.to_owned()),
    })
}

/// The manifest beside a session's messages (`<folder>/<folder>.json`; a sub-agent has none of
/// its own: its root's says where it ran).
pub fn manifest_of(messages: &Path) -> Option<PathBuf> {
    let dir = messages.parent()?;
    let folder = dir.file_name()?.to_str()?;
    Some(dir.join(format!("{folder}.json")))
}

/// Cline SDK's tool names in Cairn's kinds.
pub fn tool_kind(name: &str) -> ToolKind {
    match name {
        "run_commands" | "execute_command" => ToolKind::Exec,
        "editor" | "apply_patch" | "write_to_file" | "replace_in_file" => ToolKind::FileEdit,
        "spawn_agent" | "use_subagents" => ToolKind::SubAgent,
        "fetch_web_content" | "web_search" => ToolKind::WebSearch,
        "read_files" | "search_codebase" | "skills" | "ask_question" | "submit_and_exit"
        | "switch_to_act_mode" => ToolKind::Housekeeping,
        other => ToolKind::of(other),
    }
}

/// The files an edit call names: the editor's `path`, a patch's files.
fn edited_paths(name: &str, input: &Value) -> Vec<String> {
    if let Some(patch) = str_at(input, &["input"]).filter(|_| name == "apply_patch") {
        return patch_paths(patch);
    }
    str_at(input, &["path"])
        .filter(|p| !p.is_empty())
        .map(|p| vec![p.to_owned()])
        .unwrap_or_default()
}

/// A person's text without the wrapper Cline puts around it (`<user_input mode="act">…`).
fn unwrapped(text: &str) -> &str {
    let t = text.trim();
    t.strip_prefix("<user_input")
        .and_then(|r| r.split_once('>'))
        .and_then(|(_, r)| r.strip_suffix("</user_input>"))
        .map_or(t, str::trim)
}

/// A tool result's text: a string, text blocks, or the SDK's `[{query, result, error}]` (which
/// the editor writes as JSON text).
fn result_text(content: &Value) -> Option<String> {
    let parsed;
    let content = match content {
        Value::String(s) if s.trim_start().starts_with('[') => {
            match serde_json::from_str::<Value>(s) {
                Ok(v) => {
                    parsed = v;
                    &parsed
                }
                Err(_) => return Some(s.clone()),
            }
        }
        other => other,
    };
    if let Value::Array(items) = content
        && items
            .iter()
            .any(|i| i.get("query").is_some() || i.get("result").is_some())
    {
        let texts: Vec<String> = items
            .iter()
            .filter_map(|i| {
                let result = i.get("result").and_then(text_value);
                let error = str_at(i, &["error"]).map(str::to_owned);
                match (result, error) {
                    (Some(r), Some(e)) => Some(format!("{r}\n{e}")),
                    (r, e) => r.or(e),
                }
            })
            .collect();
        return (!texts.is_empty()).then(|| texts.join("\n"));
    }
    text_value(content)
}

/// Whether any of the SDK's `[{query, result, success}]` results failed; `None` for any other
/// shape.
fn any_failed(content: &Value) -> Option<bool> {
    let parsed;
    let items = match content {
        Value::Array(items) => items,
        Value::String(s) => {
            parsed = serde_json::from_str::<Value>(s).ok()?;
            parsed.as_array()?
        }
        _ => return None,
    };
    let flags: Vec<bool> = items
        .iter()
        .filter_map(|i| i.get("success").and_then(Value::as_bool))
        .collect();
    (!flags.is_empty()).then(|| flags.contains(&false))
}

/// What the parser keeps between reads.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct ClineSdkParser {
    #[serde(skip)]
    role: FileRole,
    meta: SessionMeta,
}

impl ClineSdkParser {
    pub fn resume(role: FileRole, saved: Option<&Value>) -> Result<Self, serde_json::Error> {
        let mut p: ClineSdkParser = match saved {
            Some(state) => serde_json::from_value(state.clone())?,
            None => ClineSdkParser::default(),
        };
        p.role = role;
        Ok(p)
    }

    fn user(&mut self, m: &Value, base: &Record, out: &mut LineOutput) {
        let compaction = str_at(m, &["metadata", "kind"]) == Some("compaction");
        for (i, block) in blocks(m).iter().enumerate() {
            match (str_at(block, &["type"]), block) {
                (None, Value::String(_)) | (Some("text"), _) => {
                    let text = match block {
                        Value::String(s) => s.as_str(),
                        b => str_at(b, &["text"]).unwrap_or(""),
                    };
                    let text = unwrapped(text);
                    if text.is_empty() {
                        continue;
                    }
                    if compaction {
                        out.records.push(Record {
                            kind: Some(RecordKind::Event),
                            key: Some(format!("compaction:{i}")),
                            source_event_kind: "cline:compaction".to_owned(),
                            text: Some(cap_text(text.to_owned(), MAX_TEXT_BYTES)),
                            is_compaction: true,
                            ..base.clone()
                        });
                        continue;
                    }
                    let source = if is_system_injected(text) || text.starts_with("<mode_notice>") {
                        PromptSource::SystemInjected
                    } else if self.role == FileRole::Subagent {
                        PromptSource::SpawnedAgent
                    } else {
                        PromptSource::Human
                    };
                    out.records.push(Record {
                        kind: Some(RecordKind::Message),
                        key: Some(format!("text:{i}")),
                        source_event_kind: "cline:user".to_owned(),
                        role: Some("user".to_owned()),
                        prompt_source: Some(source),
                        text: Some(cap_text(text.to_owned(), MAX_TEXT_BYTES)),
                        ..base.clone()
                    });
                }
                (Some("tool_result"), _) => {
                    let output = ToolOutput {
                        name: str_at(block, &["name"]).map(str::to_owned),
                        call_id: str_at(block, &["tool_use_id"]).map(str::to_owned),
                        text: block
                            .get("content")
                            .and_then(result_text)
                            .filter(|t| !t.is_empty()),
                        failed: block
                            .get("is_error")
                            .and_then(Value::as_bool)
                            .or_else(|| block.get("content").and_then(any_failed)),
                        ..ToolOutput::default()
                    };
                    out.records.push(output.record(
                        "cline:tool_result".to_owned(),
                        tool_kind,
                        Record {
                            key: Some(format!("result:{i}")),
                            role: Some("tool".to_owned()),
                            ..base.clone()
                        },
                    ));
                }
                // Attachments: the file's or image's bytes are the person's, not the session's.
                (Some("image" | "file" | "media"), _) => {}
                (other, _) => count_unknown(
                    &mut self.meta,
                    &format!("cline:user:{}", other.unwrap_or("<untyped>")),
                ),
            }
        }
    }

    fn assistant(&mut self, key: &str, m: &Value, base: &Record, out: &mut LineOutput) {
        set_latest(&mut self.meta.model, str_at(m, &["modelInfo", "id"]));
        set_once(
            &mut self.meta.provider,
            str_at(m, &["modelInfo", "provider"]),
        );
        if let Some(metrics) = m.get("metrics").filter(|v| v.is_object()) {
            let cache_read = u64_at(metrics, "cacheReadTokens");
            let cache_creation = u64_at(metrics, "cacheWriteTokens");
            out.usage.push((
                key.to_owned(),
                TokenUsage {
                    // Cline's input count includes the cached tokens.
                    input: u64_at(metrics, "inputTokens")
                        .saturating_sub(cache_read)
                        .saturating_sub(cache_creation),
                    output: u64_at(metrics, "outputTokens"),
                    cache_read,
                    cache_creation,
                    reasoning: 0,
                },
            ));
        }
        let base = Record {
            role: Some("assistant".to_owned()),
            message_id: Some(key.to_owned()),
            ..base.clone()
        };
        for (i, block) in blocks(m).iter().enumerate() {
            match (str_at(block, &["type"]), block) {
                (None, Value::String(_)) | (Some("text"), _) => {
                    let text = match block {
                        Value::String(s) => s.as_str(),
                        b => str_at(b, &["text"]).unwrap_or(""),
                    };
                    if text.trim().is_empty() {
                        continue;
                    }
                    out.records.push(Record {
                        kind: Some(RecordKind::Message),
                        key: Some(format!("text:{i}")),
                        source_event_kind: "cline:assistant".to_owned(),
                        text: Some(cap_text(text.to_owned(), MAX_TEXT_BYTES)),
                        ..base.clone()
                    });
                }
                (Some("thinking"), _) => {
                    let Some(text) = str_at(block, &["thinking"]).filter(|t| !t.is_empty()) else {
                        continue;
                    };
                    out.records.push(Record {
                        kind: Some(RecordKind::Reasoning),
                        key: Some(format!("thinking:{i}")),
                        source_event_kind: "cline:thinking".to_owned(),
                        text: Some(cap_text(text.to_owned(), MAX_TEXT_BYTES)),
                        ..base.clone()
                    });
                }
                (Some("tool_use"), _) => {
                    let name = str_at(block, &["name"]).unwrap_or("unknown").to_owned();
                    let kind = tool_kind(&name);
                    let mut input = block.get("input").cloned().filter(|i| !i.is_null());
                    let file_paths = match (kind, input.as_ref()) {
                        (ToolKind::FileEdit, Some(i)) => edited_paths(&name, i),
                        _ => Vec::new(),
                    };
                    if let Some(v) = input.as_mut() {
                        cap_json(v, MAX_INPUT_STRING_BYTES);
                    }
                    out.records.push(Record {
                        kind: Some(RecordKind::ToolCall),
                        key: Some(format!("call:{i}")),
                        source_event_kind: "cline:tool_use".to_owned(),
                        tool_kind: Some(kind),
                        tool_name: Some(name),
                        tool_input: input,
                        call_id: str_at(block, &["id"]).map(str::to_owned),
                        file_paths,
                        ..base.clone()
                    });
                }
                (Some("redacted_thinking"), _) => {}
                (other, _) => count_unknown(
                    &mut self.meta,
                    &format!("cline:assistant:{}", other.unwrap_or("<untyped>")),
                ),
            }
        }
    }
}

/// A message's content as blocks (a string is one text block).
fn blocks(m: &Value) -> Vec<Value> {
    match m.get("content") {
        Some(Value::Array(items)) => items.clone(),
        Some(Value::String(s)) => vec![Value::String(s.clone())],
        _ => Vec::new(),
    }
}

impl UnitParser for ClineSdkParser {
    fn header(&mut self, h: &Value, _out: &mut LineOutput) {
        let manifest = h.get("manifest").unwrap_or(&Value::Null);
        let meta = &mut self.meta;
        set_once(
            &mut meta.session_id,
            str_at(h, &["sessionId"]).or_else(|| str_at(manifest, &["session_id"])),
        );
        set_once(
            &mut meta.cwd,
            str_at(manifest, &["cwd"]).or_else(|| str_at(manifest, &["workspace_root"])),
        );
        set_latest(
            &mut meta.title,
            str_at(manifest, &["metadata", "title"]).filter(|_| self.role == FileRole::Main),
        );
        set_once(&mut meta.model, str_at(manifest, &["model"]));
        set_once(&mut meta.provider, str_at(manifest, &["provider"]));
        set_once(&mut meta.thread_source, str_at(manifest, &["source"]));
        for key in ["started_at", "ended_at"] {
            let at = str_at(manifest, &[key]).and_then(crate::text::rfc3339);
            note_timestamp(meta, at.as_deref());
        }
        let at = str_at(h, &["updated_at"]).and_then(crate::text::rfc3339);
        note_timestamp(meta, at.as_deref());
        if self.role == FileRole::Subagent {
            set_once(&mut meta.relation, Some("subagent"));
        }
    }

    fn unit(&mut self, key: &str, m: &Value, out: &mut LineOutput) {
        if !m.is_object() {
            count_unknown(&mut self.meta, "cline:message-not-an-object");
            return;
        }
        let ts = m.get("ts").and_then(Value::as_i64).and_then(epoch_time);
        note_timestamp(&mut self.meta, ts.as_deref());
        let base = Record {
            timestamp: ts,
            cwd: self.meta.cwd.clone(),
            ..Record::default()
        };
        match str_at(m, &["role"]) {
            Some("user") => self.user(m, &base, out),
            Some("assistant") => self.assistant(key, m, &base, out),
            other => count_unknown(
                &mut self.meta,
                &format!("cline:role:{}", other.unwrap_or("<none>")),
            ),
        }
    }

    fn meta(&self) -> &SessionMeta {
        &self.meta
    }

    fn save(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }
}

impl DocumentParser for ClineSdkParser {
    /// The messages file's list; [`with_manifest`] files the rest under `messages_file`.
    fn units_at(&self) -> &'static [&'static str] {
        &["messages"]
    }

    fn split<'d>(&self, doc: Shallow<'d>) -> (Value, KeyedUnits<'d>) {
        let Shallow { doc, units } = doc;
        let Value::Object(mut outer) = doc else {
            return (Value::Null, Box::new(std::iter::empty()));
        };
        let manifest = outer.remove("manifest").unwrap_or(Value::Null);
        let mut header = match outer.remove("messages_file") {
            Some(Value::Object(map)) => map,
            _ => serde_json::Map::new(),
        };
        header.remove("messages");
        header.insert("manifest".to_owned(), manifest);
        let Some(messages) = units else {
            return (Value::Object(header), Box::new(std::iter::empty()));
        };
        let mut seen = std::collections::BTreeSet::new();
        let units = messages.enumerate().map(move |(i, m)| {
            let id = str_at(&m, &["id"])
                .filter(|id| seen.insert((*id).to_owned()))
                .map_or_else(|| format!("#{i}"), str::to_owned);
            (id, m)
        });
        (Value::Object(header), Box::new(units))
    }
}

/// The document to split: the messages file under `messages_file` and its session's manifest
/// under `manifest` (left out when missing, too long or not JSON).
pub fn with_manifest(messages: &Path, doc: Value) -> Value {
    let manifest = manifest_of(messages)
        .and_then(|p| super::read_small_json(&p, MAX_MANIFEST_BYTES))
        .unwrap_or(Value::Null);
    serde_json::json!({"messages_file": doc, "manifest": manifest})
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::archive::sources::document::split_value;
    use serde_json::json;

    #[test]
    fn messages_files_are_sessions_or_their_sub_agents() {
        let main = classify(Path::new(
            "/h/.cline/data/sessions/1784094124598_rruoq/1784094124598_rruoq.messages.json",
        ))
        .unwrap();
        assert_eq!(
            (main.role, main.parent_hint.as_deref(), main.agent_id),
            (FileRole::Main, Some("1784094124598_rruoq"), None)
        );
        let sub = classify(Path::new(
            "/h/.cline/data/sessions/1784094124598_rruoq/agent_7.messages.json",
        ))
        .unwrap();
        assert_eq!(
            (sub.role, sub.agent_id.as_deref()),
            (FileRole::Subagent, Some("agent_7"))
        );
        for not in [
            "/h/.cline/data/sessions/x/x.json",
            "/h/.cline/data/sessions/x/x.compaction.json",
            "/h/.cline/data/tasks/x/x.messages.json",
            "/h/.cline/data/sessions/x/.messages.json",
        ] {
            assert!(classify(Path::new(not)).is_none(), "{not}");
        }
    }

    /// Messages of every wrong shape: counted or skipped, never fatal, nothing invented.
    #[test]
    fn messages_of_unexpected_shapes_are_counted_never_fatal() {
        let mut p = ClineSdkParser::resume(FileRole::Main, None).unwrap();
        let mut out = LineOutput::default();
        let doc = json!({"messages_file": {"sessionId": 7,
            "messages": [5, {"id": 9, "role": "user", "content": 3},
                {"id": "m", "role": "robot"}, {"role": "assistant", "ts": "soon",
                 "content": [{"type": "tool_use"}, {"type": "hologram"}, {"type": "text", "text": 4}],
                 "metrics": "many", "modelInfo": []},
                {"id": "r", "role": "user", "content": [{"type": "tool_result", "content": {"x": 1}, "is_error": "yes"}]}]},
            "manifest": "not an object"});
        let (header, units) = split_value(&p, &doc, &["messages_file", "messages"]);
        p.header(&header, &mut out);
        for (key, unit) in &units {
            p.unit(key, unit, &mut out);
        }
        assert_eq!(units.len(), 5);
        let unknown = &p.meta().unknown_types;
        assert_eq!(unknown.get("cline:message-not-an-object"), Some(&1));
        assert_eq!(unknown.get("cline:role:robot"), Some(&1));
        assert_eq!(unknown.get("cline:assistant:hologram"), Some(&1));
        let kinds: Vec<_> = out
            .records
            .iter()
            .map(|r| (r.kind(), r.tool_name.clone()))
            .collect();
        assert_eq!(
            kinds,
            [
                (RecordKind::ToolCall, Some("unknown".to_owned())),
                (RecordKind::ToolResult, None),
            ]
        );
        assert_eq!(
            (out.records[1].text.as_deref(), out.records[1].outcome),
            (None, None)
        );
        assert_eq!(p.meta().session_id, None);
    }

    #[test]
    fn results_read_as_text_in_every_shape() {
        assert_eq!(result_text(&json!("done")).as_deref(), Some("done"));
        assert_eq!(
            result_text(&json!([{"type": "text", "text": "a"}])).as_deref(),
            Some("a")
        );
        assert_eq!(
            result_text(&json!([{"query": "ls", "result": "a.ts", "success": true},
                {"query": "cat x", "result": "", "error": "no such file", "success": false}]))
            .as_deref(),
            Some("a.ts\nno such file")
        );
        assert_eq!(
            result_text(&json!(
                "[{\"query\":\"edit a.ts\",\"result\":\"Edited a.ts\",\"success\":true}]"
            ))
            .as_deref(),
            Some("Edited a.ts")
        );
        assert_eq!(
            result_text(&json!("[not json")).as_deref(),
            Some("[not json")
        );
        assert_eq!(result_text(&json!(7)), None);
    }
}

//! QwenPaw (once CoPaw, an AgentScope assistant): one JSON document a session,
//! `~/.copaw/workspaces/<agent>/sessions/[<channel>/]<session>.json`, rewritten as the session
//! goes on, read as the [`ReadKind::Document`](super::ReadKind::Document) kind. The session is
//! named by its agent's folder and its place under `sessions/`.
//!
//! The document is the agent's saved state: `agent.memory.content[]` holds the messages, each a
//! pair `[message, marks]`, the message `{id, name, role, content[], metadata, timestamp}` with
//! Anthropic-style blocks: a `user`'s `text`; an `assistant`'s `text`, `thinking` and `tool_use
//! {id, name, input}`; a `system` message carrying `tool_result {id, name, output}` blocks (the
//! output a list of text blocks or a text). A message is a unit keyed by its id. Times are the
//! writer's local time without a zone (`2026-03-16 09:00:00.000`), read as this machine's. The
//! document names no working folder.

use std::path::{Component, Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::prompt;
use super::{
    DocumentParser, KeyedUnits, LineOutput, MAX_INPUT_STRING_BYTES, MAX_TEXT_BYTES, SessionMeta,
    Shallow, ToolOutput, cap_json, cap_text, count_unknown, edited_path, local_timestamp, set_once,
    str_at, text_value,
};
use crate::archive::discover::{DirOrigin, FoundFile};
use crate::archive::{Agent, Record, RecordKind, ToolKind};

/// The variable naming QwenPaw's workspaces folder (AgentsView's name).
pub const ENV_DIR: &str = "QWENPAW_DIR";

/// At most this many messages are read from one session; the rest are not.
const MAX_MESSAGES: usize = 100_000;

/// Where QwenPaw keeps its agents' sessions (the same on Linux and macOS): `$QWENPAW_DIR`,
/// else `~/.copaw/workspaces`.
pub fn locations(
    env: impl Fn(&str) -> Option<PathBuf>,
    home: Option<&Path>,
) -> Vec<(PathBuf, DirOrigin)> {
    crate::archive::discover::env_or_home(env, ENV_DIR, "", home, &[".copaw/workspaces"])
}

/// A session's name: its agent's folder and its place under that agent's `sessions/`
/// (`default/console/default_1700000000001`), for `<agent>/sessions/[<channel>/]<name>.json`.
fn session_name(path: &Path) -> Option<String> {
    if path.extension()? != "json" {
        return None;
    }
    let stem = path.file_stem()?.to_str()?;
    let mut dir = path.parent()?;
    let mut channel = None;
    if dir.file_name()? != "sessions" {
        channel = Some(dir.file_name()?.to_str()?);
        dir = dir.parent()?;
    }
    if dir.file_name()? != "sessions" {
        return None;
    }
    let agent = dir.parent()?.file_name()?.to_str()?;
    let parts = [Some(agent), channel, Some(stem)];
    let name: Vec<&str> = parts.into_iter().flatten().collect();
    // A name that is a folder's way out is no session's.
    name.iter()
        .all(|p| matches!(Path::new(p).components().next(), Some(Component::Normal(_))))
        .then(|| name.join("/"))
}

/// Whether `path` is a session document by its place: `<agent>/sessions/[<channel>/]<name>.json`.
pub fn is_session_file(path: &Path) -> bool {
    session_name(path).is_some()
}

/// A session document, named by its place.
pub fn classify(path: &Path) -> Option<FoundFile> {
    let name = session_name(path)?;
    Some(FoundFile {
        parent_hint: Some(name),
        ..FoundFile::main(Agent::Qwenpaw, path)
    })
}

/// Whether a transcript's path is QwenPaw's (for the hook, given only a path).
pub fn owns_path(path: &Path) -> bool {
    path.to_string_lossy().contains("/.copaw/workspaces/") && is_session_file(path)
}

#[derive(Debug, Serialize, Deserialize)]
pub struct QwenpawParser {
    meta: SessionMeta,
    /// The zone the session's times are read in: this machine's (set at every resume).
    #[serde(skip, default = "jiff::tz::TimeZone::system")]
    zone: jiff::tz::TimeZone,
}

impl QwenpawParser {
    pub fn resume(saved: Option<&Value>) -> Result<Self, serde_json::Error> {
        match saved {
            Some(state) => serde_json::from_value(state.clone()),
            None => Ok(QwenpawParser {
                meta: SessionMeta::default(),
                zone: jiff::tz::TimeZone::system(),
            }),
        }
    }

    /// One message's records, each keyed by its block (a unit is one message).
    fn message(&mut self, msg: &Value, out: &mut LineOutput) {
        let timestamp =
            local_timestamp(&mut self.meta, str_at(msg, &["timestamp"]), out, &self.zone);
        let base = Record {
            timestamp,
            ..Record::default()
        };
        let role = str_at(msg, &["role"]).unwrap_or("");
        if role == "user" {
            // Where the person wrote from: the console, or a chat channel.
            set_once(
                &mut self.meta.thread_source,
                str_at(msg, &["metadata", "source"]),
            );
        }
        let blocks: Vec<Value> = match msg.get("content") {
            Some(Value::String(s)) => vec![serde_json::json!({"type": "text", "text": s})],
            Some(Value::Array(blocks)) => blocks.clone(),
            _ => Vec::new(),
        };
        let from = out.records.len();
        for (i, block) in blocks.iter().enumerate() {
            let kind = str_at(block, &["type"]).unwrap_or("");
            let record = match (role, kind) {
                ("user", "text") => str_at(block, &["text"])
                    .filter(|t| !t.trim().is_empty())
                    .map(|t| prompt(t.to_owned(), "qwenpaw:user", base.clone())),
                ("assistant", "text" | "thinking") | ("system", "text") => {
                    let field = if kind == "thinking" {
                        "thinking"
                    } else {
                        "text"
                    };
                    str_at(block, &[field])
                        .filter(|t| !t.trim().is_empty())
                        .map(|t| Record {
                            kind: Some(match (role, kind) {
                                ("system", _) => RecordKind::Event,
                                (_, "thinking") => RecordKind::Reasoning,
                                _ => RecordKind::Message,
                            }),
                            source_event_kind: format!("qwenpaw:{role}:{kind}"),
                            role: (role == "assistant").then(|| role.to_owned()),
                            text: Some(cap_text(t.to_owned(), MAX_TEXT_BYTES)),
                            ..base.clone()
                        })
                }
                ("assistant", "tool_use") => Some(call(block, base.clone())),
                (_, "tool_result") => Some(result(block, base.clone())),
                _ => {
                    count_unknown(&mut self.meta, &format!("{role}:{kind}"));
                    None
                }
            };
            if let Some(r) = record {
                out.records.push(Record {
                    block: u32::try_from(i).unwrap_or(u32::MAX),
                    ..r
                });
            }
        }
        for r in &mut out.records[from..] {
            r.key = Some(format!("b{}", r.block));
        }
    }
}

/// A `tool_use` block as a call.
fn call(block: &Value, base: Record) -> Record {
    let name = str_at(block, &["name"]).unwrap_or("unknown").to_owned();
    let kind = tool_kind(&name);
    let mut input = block.get("input").cloned();
    let file_paths = edited_path(kind, input.as_ref(), &["file_path", "path"]);
    if let Some(i) = input.as_mut() {
        cap_json(i, MAX_INPUT_STRING_BYTES);
    }
    Record {
        kind: Some(RecordKind::ToolCall),
        source_event_kind: "qwenpaw:tool_use".to_owned(),
        role: Some("assistant".to_owned()),
        tool_kind: Some(kind),
        tool_name: Some(name),
        tool_input: input,
        call_id: str_at(block, &["id"]).map(str::to_owned),
        file_paths,
        ..base
    }
}

/// A `tool_result` block as a result (calls are answered in the same document, so the result
/// names its tool itself).
fn result(block: &Value, base: Record) -> Record {
    let output = ToolOutput {
        name: Some(str_at(block, &["name"]).unwrap_or("unknown").to_owned()),
        call_id: str_at(block, &["id"]).map(str::to_owned),
        text: Some(block.get("output").and_then(text_value).unwrap_or_default()),
        ..ToolOutput::default()
    };
    output.record("qwenpaw:tool_result".to_owned(), tool_kind, base)
}

impl DocumentParser for QwenpawParser {
    fn units_at(&self) -> &'static [&'static str] {
        &["agent", "memory", "content"]
    }

    fn split<'d>(&self, doc: Shallow<'d>) -> (Value, KeyedUnits<'d>) {
        let Shallow { doc, units } = doc;
        let units = units
            .into_iter()
            .flatten()
            .take(MAX_MESSAGES)
            .enumerate()
            .map(|(i, pair)| {
                // `[message, marks]`: the message is the unit, known by its id.
                let msg = match pair {
                    Value::Array(mut pair) if !pair.is_empty() => pair.swap_remove(0),
                    other => other,
                };
                let key =
                    str_at(&msg, &["id"]).map_or_else(|| format!("#{i}"), |id| format!("m{id}"));
                (key, msg)
            });
        (doc, Box::new(units))
    }
}

impl super::UnitParser for QwenpawParser {
    fn header(&mut self, header: &Value, _out: &mut LineOutput) {
        if !header.is_object() {
            count_unknown(&mut self.meta, "document-not-an-object");
        }
    }

    fn unit(&mut self, _key: &str, unit: &Value, out: &mut LineOutput) {
        if unit.is_object() {
            self.message(unit, out);
        } else {
            count_unknown(&mut self.meta, "message-not-an-object");
        }
    }

    fn meta(&self) -> &SessionMeta {
        &self.meta
    }

    fn save(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }
}

/// QwenPaw's tool names in Cairn's kinds.
pub fn tool_kind(name: &str) -> ToolKind {
    match name {
        "execute_shell_command" | "execute_python_code" => ToolKind::Exec,
        "write_file" | "edit_file" | "append_file" => ToolKind::FileEdit,
        "read_file" | "grep_search" | "glob_search" | "memory_search" | "get_current_time" => {
            ToolKind::Housekeeping
        }
        "browser_use" | "web_search" | "web_fetch" => ToolKind::WebSearch,
        other => ToolKind::of(other),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::archive::sources::UnitParser;
    use serde_json::json;

    fn read(doc: &Value) -> (QwenpawParser, Vec<String>, LineOutput) {
        let text = doc.to_string();
        let mut parser = QwenpawParser::resume(None).unwrap();
        parser.zone = jiff::tz::TimeZone::UTC;
        let (header, units) = parser.split(Shallow::read(&text, parser.units_at()).unwrap());
        let mut out = LineOutput::default();
        parser.header(&header, &mut out);
        let units: Vec<(String, Value)> = units.collect();
        for (key, unit) in &units {
            parser.unit(key, unit, &mut out);
        }
        (parser, units.into_iter().map(|(k, _)| k).collect(), out)
    }

    #[test]
    fn messages_are_units_by_id_and_results_ride_on_system_messages() {
        let (parser, keys, out) = read(&json!({"agent": {"name": "Friday", "memory": {"content": [
            [{"id": "u1", "role": "user", "content": [{"type": "text", "text": "Fix NOTES.md"}],
              "metadata": {"source": "im_wechat"}, "timestamp": "2026-03-16 09:00:00.000"}, []],
            [{"id": "a1", "role": "assistant", "content": [
                {"type": "thinking", "thinking": "read first"},
                {"type": "tool_use", "id": "c1", "name": "edit_file", "input": {"file_path": "NOTES.md"}},
                {"type": "tool_use", "id": "c2", "name": "execute_shell_command", "input": {"command": "make"}}],
              "timestamp": "2026-03-16 09:00:01.250"}, []],
            [{"id": "s1", "role": "system", "content": [
                {"type": "tool_result", "id": "c2", "name": "execute_shell_command", "output": [{"type": "text", "text": "exit code 2"}]},
                {"type": "audio", "data": "…"}], "timestamp": "2026-03-16T09:00:02"}, []],
            [{"role": "assistant", "content": "Done."}, []],
            "not a message"
        ]}}}));
        assert_eq!(keys, ["mu1", "ma1", "ms1", "#3", "#4"]);
        let got: Vec<_> = out
            .records
            .iter()
            .map(|r| (r.kind, r.tool_name.as_deref(), r.key.as_deref()))
            .collect();
        assert_eq!(
            got,
            [
                (Some(RecordKind::Message), None, Some("b0")),
                (Some(RecordKind::Reasoning), None, Some("b0")),
                (Some(RecordKind::ToolCall), Some("edit_file"), Some("b1")),
                (
                    Some(RecordKind::ToolCall),
                    Some("execute_shell_command"),
                    Some("b2")
                ),
                (
                    Some(RecordKind::ToolResult),
                    Some("execute_shell_command"),
                    Some("b0")
                ),
                (Some(RecordKind::Message), None, Some("b0")),
            ]
        );
        assert_eq!(out.records[2].file_paths, ["NOTES.md"]);
        assert_eq!(out.records[4].exit_code, Some(2));
        let m = parser.meta();
        assert_eq!(m.thread_source.as_deref(), Some("im_wechat"));
        assert_eq!(m.started_at.as_deref(), Some("2026-03-16T09:00:00Z"));
        assert_eq!(m.updated_at.as_deref(), Some("2026-03-16T09:00:02Z"));
        assert_eq!(
            m.unknown_types.keys().collect::<Vec<_>>(),
            ["message-not-an-object", "system:audio"]
        );
    }

    #[test]
    fn sessions_are_named_by_their_agent_and_place() {
        let root = Path::new("/h/.copaw/workspaces");
        let name = |rel: &str| classify(&root.join(rel)).and_then(|f| f.parent_hint);
        assert_eq!(
            name("default/sessions/main_main.json").as_deref(),
            Some("default/main_main")
        );
        assert_eq!(
            name("default/sessions/console/default_1.json").as_deref(),
            Some("default/console/default_1")
        );
        assert_eq!(
            name("keeper/sessions/user@example.com_2.json").as_deref(),
            Some("keeper/user@example.com_2")
        );
        assert_eq!(name("default/notes.json"), None);
        assert_eq!(name("default/sessions/a/b/c.json"), None);
        assert_eq!(name("default/sessions/main.jsonl"), None);
        assert!(owns_path(&root.join("default/sessions/main_main.json")));
        assert_eq!(
            locations(|_| None, Some(Path::new("/h"))),
            [(PathBuf::from("/h/.copaw/workspaces"), DirOrigin::Default)]
        );
    }
}

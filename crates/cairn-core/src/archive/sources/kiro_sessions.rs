//! kiro-cli 2.x's interactive sessions: `~/.kiro/sessions/cli/<session uuid>.jsonl`, an
//! append-only log, beside `<session uuid>.json`, its metadata rewritten every turn (the older
//! `data.sqlite3` of [`super::kiro`] keeps only non-interactive sessions since 2.x).
//!
//! Each line is `{version: "v1", kind, data}`: `Prompt` (the person's `content` blocks and
//! `meta.timestamp` in epoch seconds, the log's only time), `AssistantMessage` (`text`,
//! `thinking`, `toolUse{toolUseId, name, input}` blocks), `ToolResults` (`toolResult{toolUseId,
//! content: [{kind: text|json}], status}`), `Clear`, `Compaction{summary}`, `ResetTo`. A block's
//! text is its `data`. Rewinding re-appends the lines it keeps (the same message ids, the same
//! bytes): read once, as every line is identified by its content.
//!
//! The metadata gives what no line does: `cwd`, `title`, `created_at`/`updated_at`, the model
//! (`session_state.rts_model_state.model_info.model_id`) and `parent_session_id` for a session
//! another started. It is read whenever the log is (`for_file`): kiro-cli rewrites it after the
//! log's line, so a change to it alone (a new model) shows with the log's next line. Shapes
//! from real kiro-cli 2.6.0 logs (tests/fixtures/kiro/SOURCES.md).

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::database::epoch_time;
use super::{
    LineOutput, MAX_INPUT_STRING_BYTES, MAX_TEXT_BYTES, SessionMeta, SourceParser, ToolOutput,
    cap_json, cap_text, count_unknown, is_system_injected, line_timestamp, note_timestamp,
    set_latest, set_once, str_at,
};
use crate::archive::discover::{DirOrigin, FoundFile};
use crate::archive::{Agent, PromptSource, Record, RecordKind, ToolKind};

/// kiro-cli's own variable for its home (`~/.kiro`), where `sessions/cli` lies.
pub const ENV_HOME: &str = "KIRO_HOME";

/// Where the sessions lie under kiro-cli's home.
const SESSIONS: &str = "sessions/cli";

/// The most of a session's metadata read (it lists every turn's message ids).
const MAX_METADATA_BYTES: u64 = 16 * 1024 * 1024;

/// Where kiro-cli 2.x keeps its sessions: `$KIRO_HOME/sessions/cli`, else
/// `~/.kiro/sessions/cli` (the same on Linux and macOS).
pub fn locations(
    env: impl Fn(&str) -> Option<PathBuf>,
    home: Option<&Path>,
) -> Vec<(PathBuf, DirOrigin)> {
    match env(ENV_HOME) {
        Some(dir) => vec![(dir.join(SESSIONS), DirOrigin::Env)],
        None => home
            .map(|h| vec![(h.join(".kiro").join(SESSIONS), DirOrigin::Default)])
            .unwrap_or_default(),
    }
}

/// `…/sessions/cli/<id>.jsonl`, the id a uuid's letters.
pub fn is_session_file(path: &Path) -> bool {
    let in_sessions = path
        .parent()
        .filter(|d| d.file_name().is_some_and(|n| n == "cli"))
        .and_then(Path::parent)
        .is_some_and(|d| d.file_name().is_some_and(|n| n == "sessions"));
    in_sessions && path.extension().is_some_and(|e| e == "jsonl") && session_id(path).is_some()
}

fn session_id(path: &Path) -> Option<&str> {
    let stem = path.file_stem()?.to_str()?;
    (!stem.is_empty() && stem.bytes().all(|b| b.is_ascii_hexdigit() || b == b'-')).then_some(stem)
}

/// A session's log: its own session, named by its id.
pub fn classify(path: &Path) -> Option<FoundFile> {
    if !is_session_file(path) {
        return None;
    }
    Some(FoundFile {
        parent_hint: session_id(path).map(str::to_owned),
        ..FoundFile::main(Agent::Kiro, path)
    })
}

/// The file read beside a session's log: its `<session>.json` metadata (title, model, parent).
pub(crate) fn sidecars_of(log: &Path) -> Vec<PathBuf> {
    vec![log.with_extension("json")]
}

/// The session log a `<session>.json` describes.
pub(crate) fn transcript_of_sidecar(path: &Path) -> Option<PathBuf> {
    let log = path.with_extension("jsonl");
    (path.extension()? == "json" && is_session_file(&log)).then_some(log)
}

/// Whether a path is a kiro-cli session log (for the hook, given only a path).
pub fn owns_path(path: &Path) -> bool {
    is_session_file(path) && path.to_string_lossy().contains("/.kiro/")
}

#[derive(Debug, Default, Serialize, Deserialize)]
pub struct KiroSessionParser {
    meta: SessionMeta,
    /// call id → tool name, for calls whose result has not been seen yet.
    pending: BTreeMap<String, String>,
}

impl KiroSessionParser {
    pub fn resume(saved: Option<&Value>) -> Result<Self, serde_json::Error> {
        let mut parser = match saved {
            Some(state) => serde_json::from_value(state.clone())?,
            None => KiroSessionParser::default(),
        };
        parser
            .meta
            .provider
            .get_or_insert_with(|| "kiro".to_owned());
        Ok(parser)
    }

    /// The parser of `file`, resumed, with what the session's metadata says now.
    pub fn for_file(file: &FoundFile, saved: Option<&Value>) -> Result<Self, serde_json::Error> {
        let mut parser = Self::resume(saved)?;
        if let Some(m) =
            super::read_small_json(&file.path.with_extension("json"), MAX_METADATA_BYTES)
        {
            parser.metadata(&m);
        }
        Ok(parser)
    }

    fn metadata(&mut self, m: &Value) {
        let meta = &mut self.meta;
        set_once(&mut meta.session_id, str_at(m, &["session_id"]));
        set_once(&mut meta.cwd, str_at(m, &["cwd"]));
        set_latest(&mut meta.title, str_at(m, &["title"]));
        set_latest(
            &mut meta.model,
            str_at(
                m,
                &["session_state", "rts_model_state", "model_info", "model_id"],
            ),
        );
        // `session_created_reason` says "subagent" of nearly every session; only a parent
        // makes one a sub-agent's.
        if let Some(parent) = str_at(m, &["parent_session_id"]).filter(|p| !p.is_empty()) {
            set_once(&mut meta.parent_session_id, Some(parent));
            set_once(&mut meta.relation, Some("subagent"));
        }
        for key in ["created_at", "updated_at"] {
            let at = str_at(m, &[key]).and_then(crate::text::rfc3339);
            note_timestamp(meta, at.as_deref());
        }
    }

    fn prompt(&mut self, data: &Value, base: Record, out: &mut LineOutput) {
        let Some(text) = block_texts(data, "text") else {
            return;
        };
        let source = if is_system_injected(&text) {
            PromptSource::SystemInjected
        } else if self.meta.relation.is_some() {
            PromptSource::SpawnedAgent
        } else {
            PromptSource::Human
        };
        out.records.push(Record {
            kind: Some(RecordKind::Message),
            source_event_kind: "kiro:Prompt".to_owned(),
            role: Some("user".to_owned()),
            prompt_source: Some(source),
            text: Some(cap_text(text, MAX_TEXT_BYTES)),
            ..base
        });
    }

    fn assistant(&mut self, data: &Value, base: Record, out: &mut LineOutput) {
        let base = Record {
            role: Some("assistant".to_owned()),
            message_id: str_at(data, &["message_id"]).map(str::to_owned),
            ..base
        };
        for (i, block) in blocks(data).iter().enumerate() {
            let base = Record {
                block: u32::try_from(i).unwrap_or(u32::MAX),
                ..base.clone()
            };
            let d = block.get("data").unwrap_or(&Value::Null);
            match str_at(block, &["kind"]).unwrap_or("") {
                "text" => {
                    let Some(text) = d.as_str().filter(|t| !t.trim().is_empty()) else {
                        continue;
                    };
                    out.records.push(Record {
                        kind: Some(RecordKind::Message),
                        source_event_kind: "kiro:AssistantMessage:text".to_owned(),
                        text: Some(cap_text(text.to_owned(), MAX_TEXT_BYTES)),
                        ..base
                    });
                }
                "thinking" => {
                    let Some(text) = str_at(d, &["text"]).filter(|t| !t.is_empty()) else {
                        continue;
                    };
                    out.records.push(Record {
                        kind: Some(RecordKind::Reasoning),
                        source_event_kind: "kiro:AssistantMessage:thinking".to_owned(),
                        text: Some(cap_text(text.to_owned(), MAX_TEXT_BYTES)),
                        ..base
                    });
                }
                "toolUse" => {
                    let name = str_at(d, &["name"]).unwrap_or("unknown").to_owned();
                    let id = str_at(d, &["toolUseId"]).map(str::to_owned);
                    if let Some(id) = &id
                        && self.pending.len() < 100_000
                    {
                        self.pending.insert(id.clone(), name.clone());
                    }
                    let kind = super::kiro::tool_kind(&name);
                    let mut input = d.get("input").cloned().filter(|i| !i.is_null());
                    let file_paths = match (kind, input.as_ref().and_then(|i| str_at(i, &["path"])))
                    {
                        (ToolKind::FileEdit, Some(p)) if !p.is_empty() => vec![p.to_owned()],
                        _ => Vec::new(),
                    };
                    if let Some(v) = input.as_mut() {
                        cap_json(v, MAX_INPUT_STRING_BYTES);
                    }
                    out.records.push(Record {
                        kind: Some(RecordKind::ToolCall),
                        source_event_kind: "kiro:AssistantMessage:toolUse".to_owned(),
                        tool_kind: Some(kind),
                        tool_name: Some(name),
                        tool_input: input,
                        call_id: id,
                        file_paths,
                        ..base
                    });
                }
                "image" => {}
                other => count_unknown(&mut self.meta, &format!("kiro:block:{other}")),
            }
        }
    }

    fn results(&mut self, data: &Value, base: Record, out: &mut LineOutput) {
        for (i, block) in blocks(data).iter().enumerate() {
            if str_at(block, &["kind"]) != Some("toolResult") {
                count_unknown(&mut self.meta, "kiro:result-block");
                continue;
            }
            let d = block.get("data").unwrap_or(&Value::Null);
            let call_id = str_at(d, &["toolUseId"]).map(str::to_owned);
            let output = ToolOutput {
                name: call_id.as_ref().and_then(|id| self.pending.remove(id)),
                call_id,
                text: Some(result_text(d)).filter(|t| !t.is_empty()),
                // A shell's `exit status: N` wins: `status` says "success" of a command that
                // failed.
                failed: match str_at(d, &["status"]) {
                    Some("error") => Some(true),
                    Some("success") => Some(false),
                    _ => None,
                },
                ..ToolOutput::default()
            };
            out.records.push(output.record(
                "kiro:ToolResults".to_owned(),
                super::kiro::tool_kind,
                Record {
                    block: u32::try_from(i).unwrap_or(u32::MAX),
                    role: Some("tool".to_owned()),
                    ..base.clone()
                },
            ));
        }
    }
}

/// A line's `data.content` blocks (none when it holds something else).
fn blocks(data: &Value) -> &[Value] {
    data.get("content")
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

/// The text of a line's blocks of `kind`, joined (a block's text is its `data`).
fn block_texts(data: &Value, kind: &str) -> Option<String> {
    let texts: Vec<&str> = blocks(data)
        .iter()
        .filter(|b| str_at(b, &["kind"]) == Some(kind))
        .filter_map(|b| b.get("data").and_then(Value::as_str))
        .filter(|t| !t.trim().is_empty())
        .collect();
    (!texts.is_empty()).then(|| texts.join("\n"))
}

/// A tool result's text: its text blocks, and of a JSON block a command's output (`stdout`,
/// `stderr`, its `exit_status`) or else the JSON itself.
fn result_text(d: &Value) -> String {
    let mut parts: Vec<Cow<'_, str>> = Vec::new();
    for item in blocks(d) {
        let data = item.get("data").unwrap_or(&Value::Null);
        match (str_at(item, &["kind"]), data) {
            (Some("text"), Value::String(s)) => parts.push(Cow::Borrowed(s)),
            (Some("json"), Value::Object(o))
                if o.contains_key("stdout") || o.contains_key("exit_status") =>
            {
                for key in ["stdout", "stderr", "exit_status"] {
                    if let Some(s) = o
                        .get(key)
                        .and_then(Value::as_str)
                        .filter(|s| !s.trim().is_empty())
                    {
                        parts.push(Cow::Borrowed(s.trim_end_matches('\n')));
                    }
                }
            }
            (Some("json"), v) if !v.is_null() => {
                parts.push(Cow::Owned(serde_json::to_string(v).unwrap_or_default()));
            }
            _ => {}
        }
    }
    parts.join("\n")
}

impl SourceParser for KiroSessionParser {
    fn agent(&self) -> Agent {
        Agent::Kiro
    }

    fn meta(&self) -> &SessionMeta {
        &self.meta
    }

    fn save(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }

    fn parse_line(&mut self, raw: &str, out: &mut LineOutput) -> Result<(), serde_json::Error> {
        let line: Value = serde_json::from_str(raw)?;
        let Some(kind) = str_at(&line, &["kind"]) else {
            count_unknown(&mut self.meta, "<untyped>");
            return Ok(());
        };
        let data = line.get("data").unwrap_or(&Value::Null);
        let at = data
            .get("meta")
            .and_then(|m| m.get("timestamp"))
            .and_then(Value::as_i64)
            .and_then(epoch_time);
        let timestamp = line_timestamp(&mut self.meta, at.as_deref(), out).map(Cow::into_owned);
        note_timestamp(&mut self.meta, timestamp.as_deref());
        let base = Record {
            timestamp,
            cwd: self.meta.cwd.clone(),
            ..Record::default()
        };
        match kind {
            "Prompt" => self.prompt(data, base, out),
            "AssistantMessage" => self.assistant(data, base, out),
            "ToolResults" => self.results(data, base, out),
            "Compaction" => out.records.push(Record {
                kind: Some(RecordKind::Event),
                source_event_kind: "kiro:Compaction".to_owned(),
                text: Some(cap_text(
                    str_at(data, &["summary"])
                        .unwrap_or("Conversation compacted")
                        .to_owned(),
                    MAX_TEXT_BYTES,
                )),
                is_compaction: true,
                ..base
            }),
            "Clear" => out.records.push(Record {
                kind: Some(RecordKind::Event),
                source_event_kind: "kiro:Clear".to_owned(),
                text: Some("Conversation cleared".to_owned()),
                ..base
            }),
            // A rewind's target (the kept lines follow it again) and a prompt given up.
            "ResetTo" | "CancelledPrompt" => {}
            other => count_unknown(&mut self.meta, other),
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn logs_under_sessions_cli_are_sessions() {
        let log = Path::new("/h/.kiro/sessions/cli/e36d6e16-bf0a-4982-91e1-68e63be0fa60.jsonl");
        let f = classify(log).unwrap();
        assert_eq!(
            (f.role, f.parent_hint.as_deref()),
            (
                crate::archive::sources::FileRole::Main,
                Some("e36d6e16-bf0a-4982-91e1-68e63be0fa60")
            )
        );
        assert!(owns_path(log));
        for not in [
            "/h/.kiro/sessions/cli/e36d6e16.history",
            "/h/.kiro/sessions/other/e36d6e16.jsonl",
            "/h/.kiro/sessions/cli/notes here.jsonl",
            "/h/.kiro/sessions/cli/.jsonl",
        ] {
            assert!(classify(Path::new(not)).is_none(), "{not}");
        }
        let env = |k: &str| (k == ENV_HOME).then(|| PathBuf::from("/k"));
        assert_eq!(locations(env, None)[0].0, Path::new("/k/sessions/cli"));
        assert_eq!(
            locations(|_| None, Some(Path::new("/h")))[0].0,
            Path::new("/h/.kiro/sessions/cli")
        );
    }

    #[test]
    fn blocks_of_unexpected_shapes_are_counted_never_fatal() {
        let mut p = KiroSessionParser::resume(None).unwrap();
        let mut out = LineOutput::default();
        for line in [
            json!({"version": "v1"}),
            json!({"kind": "Prompt", "data": "not an object"}),
            json!({"kind": "Prompt", "data": {"content": [{"kind": "text", "data": 5}], "meta": {"timestamp": "x"}}}),
            json!({"kind": "AssistantMessage", "data": {"content": [{"kind": "hologram"}, 7, {"kind": "toolUse", "data": []}]}}),
            json!({"kind": "ToolResults", "data": {"content": [{"kind": "toolResult", "data": {"content": "no"}}, {"kind": "other"}]}}),
            json!({"kind": "Teleport", "data": {}}),
        ] {
            p.parse_line(&line.to_string(), &mut out).unwrap();
        }
        let unknown = &p.meta().unknown_types;
        assert_eq!(unknown.get("<untyped>"), Some(&1));
        assert_eq!(unknown.get("kiro:block:hologram"), Some(&1));
        assert_eq!(unknown.get("kiro:result-block"), Some(&1));
        assert_eq!(unknown.get("Teleport"), Some(&1));
        // The call without a name and the result without a call stand, with nothing invented.
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
    }
}

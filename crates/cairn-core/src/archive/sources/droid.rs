//! Factory Droid sessions (`~/.factory/sessions/**/<sessionId>.jsonl`), in either of the two
//! line formats Droid writes.
//!
//! The interactive session store opens with `session_start {id, title, sessionTitle, cwd,
//! version}` and then holds `message {id, parentId, timestamp, message{role, content[]}}` lines
//! whose content is Anthropic-style blocks (`text`, `thinking`, `tool_use`, `tool_result`).
//! `droid exec --output-format stream-json` logs are flat events: `system {model, cwd}`,
//! `message {role, text}`, `tool_call {toolCallId|id, toolName, parameters}`, `tool_result
//! {value, isError}`, `completion {finalText, usage}` and `error`, with the session id as
//! `session_id` or `sessionId` and timestamps as RFC 3339 text or epoch milliseconds. The two
//! share no record type but `message`, which each shapes differently, so every line is read by
//! its own shape.
//!
//! An interactive session's model and token totals are in neither: Droid keeps them in
//! `<sessionId>.settings.json` beside the log (`model`, `providerLock`, `tokenUsage` running
//! totals), rewritten as it spends tokens and read whenever the log is.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::edited_path;
use super::{
    LineOutput, MAX_INPUT_STRING_BYTES, MAX_TEXT_BYTES, MAX_TOOL_OUTPUT_BYTES, SessionMeta,
    SourceParser, cap_json, cap_text, count_unknown, exit_code_in, is_system_injected,
    line_timestamp, ms_to_rfc3339, note_timestamp, outcome_of, set_latest, set_once, str_at,
    text_value, u64_at,
};
use crate::archive::discover::{DirOrigin, FoundFile};
use crate::archive::{Agent, PromptSource, Record, RecordKind, TokenUsage, ToolKind};

/// The most of a session's settings read.
const MAX_SETTINGS_BYTES: u64 = 4 * 1024 * 1024;

/// What a session's settings file is named: `<session>.settings.json` beside `<session>.jsonl`.
const SETTINGS_SUFFIX: &str = ".settings.json";

/// The variable naming Droid's sessions folder.
pub const ENV_DIR: &str = "FACTORY_SESSIONS_DIR";

/// Where Droid keeps its sessions (the same on Linux and macOS): `$FACTORY_SESSIONS_DIR` when
/// set, else `~/.factory/sessions`.
pub fn locations(
    env: impl Fn(&str) -> Option<PathBuf>,
    home: Option<&Path>,
) -> Vec<(PathBuf, DirOrigin)> {
    crate::archive::discover::env_or_home(env, ENV_DIR, "", home, &[".factory/sessions"])
}

/// A `.jsonl` under Droid's sessions folder is a session (grouped in sub-folders per project).
pub fn classify(path: &Path) -> Option<FoundFile> {
    path.file_stem()?.to_str()?;
    Some(FoundFile::main(Agent::Droid, path))
}

/// The file read beside a session's transcript: its `<session>.settings.json` (model, provider,
/// the session's token totals).
pub(crate) fn sidecars_of(transcript: &Path) -> Vec<PathBuf> {
    settings_of(transcript).into_iter().collect()
}

/// The transcript a `<session>.settings.json` describes.
pub(crate) fn transcript_of_sidecar(path: &Path) -> Option<PathBuf> {
    let name = path.file_name()?.to_str()?;
    let stem = name
        .strip_suffix(SETTINGS_SUFFIX)
        .filter(|s| !s.is_empty())?;
    Some(path.with_file_name(format!("{stem}.jsonl")))
}

/// Where the settings of the session at `transcript` are.
fn settings_of(transcript: &Path) -> Option<PathBuf> {
    let stem = transcript.file_stem()?.to_str()?;
    Some(transcript.with_file_name(format!("{stem}{SETTINGS_SUFFIX}")))
}

/// Whether a transcript's path is Droid's (for the hook, given only a path).
pub fn owns_path(path: &Path) -> bool {
    path.to_string_lossy().contains("/.factory/sessions/")
}

#[derive(Debug, Default, Serialize, Deserialize)]
pub struct DroidParser {
    meta: SessionMeta,
    /// call id → tool name, for calls whose result has not been seen yet.
    pending_calls: BTreeMap<String, String>,
}

impl DroidParser {
    pub fn resume(saved: Option<&Value>) -> Result<Self, serde_json::Error> {
        let mut parser = match saved {
            Some(state) => serde_json::from_value(state.clone())?,
            None => DroidParser::default(),
        };
        parser
            .meta
            .provider
            .get_or_insert_with(|| "factory".to_owned());
        Ok(parser)
    }

    /// The parser of `file`, resumed, with what the session's settings say now.
    pub fn for_file(file: &FoundFile, saved: Option<&Value>) -> Result<Self, serde_json::Error> {
        let mut parser = Self::resume(saved)?;
        let settings =
            settings_of(&file.path).and_then(|p| super::read_small_json(&p, MAX_SETTINGS_BYTES));
        if let Some(s) = settings {
            parser.settings(&s);
        }
        Ok(parser)
    }

    fn settings(&mut self, s: &Value) {
        set_latest(&mut self.meta.model, str_at(s, &["model"]));
        set_latest(&mut self.meta.provider, str_at(s, &["providerLock"]));
        if let Some(u) = s.get("tokenUsage").filter(|u| u.is_object()) {
            let usage = TokenUsage {
                input: u64_at(u, "inputTokens"),
                output: u64_at(u, "outputTokens"),
                cache_creation: u64_at(u, "cacheCreationTokens"),
                cache_read: u64_at(u, "cacheReadTokens"),
                reasoning: u64_at(u, "thinkingTokens"),
            };
            if usage != TokenUsage::default() {
                self.meta.cumulative_usage = Some(usage);
            }
        }
    }

    fn session_start(&mut self, line: &Value) {
        let m = &mut self.meta;
        set_once(&mut m.session_id, str_at(line, &["id"]));
        set_once(&mut m.cwd, str_at(line, &["cwd"]));
        set_latest(
            &mut m.title,
            str_at(line, &["sessionTitle"]).or_else(|| str_at(line, &["title"])),
        );
        let version = match line.get("version") {
            Some(Value::String(s)) => Some(s.clone()),
            Some(Value::Number(n)) => Some(n.to_string()),
            _ => None,
        };
        set_once(&mut m.tool_version, version.as_deref());
    }

    /// A session-store message: Anthropic-style content blocks, each its own record.
    fn store_message(&mut self, msg: &Value, base: Record, out: &mut LineOutput) {
        let role = str_at(msg, &["role"]).unwrap_or("assistant");
        set_latest(&mut self.meta.model, str_at(msg, &["model"]));
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
                    if let Some(text) = str_at(block, &["text"]) {
                        self.message(role, text, "droid:message:text", base, out);
                    }
                }
                Some("thinking") => {
                    if let Some(text) = str_at(block, &["thinking"]).filter(|t| !t.is_empty()) {
                        out.records.push(Record {
                            kind: Some(RecordKind::Reasoning),
                            source_event_kind: "droid:message:thinking".to_owned(),
                            role: Some("assistant".to_owned()),
                            text: Some(cap_text(text.to_owned(), MAX_TEXT_BYTES)),
                            ..base
                        });
                    }
                }
                Some("tool_use") => {
                    let rec = self.tool_call(
                        str_at(block, &["name"]),
                        str_at(block, &["id"]),
                        block.get("input"),
                        "droid:message:tool_use",
                        base,
                    );
                    out.records.push(rec);
                }
                Some("tool_result") => {
                    let text = block.get("content").and_then(text_value);
                    let failed = block.get("is_error").and_then(Value::as_bool) == Some(true);
                    let rec = self.tool_result(
                        str_at(block, &["tool_use_id"]),
                        text,
                        None,
                        failed,
                        "droid:message:tool_result",
                        base,
                    );
                    out.records.push(rec);
                }
                Some(other) => count_unknown(&mut self.meta, &format!("content:{other}")),
                None => count_unknown(&mut self.meta, "content:<untyped>"),
            }
        }
    }

    /// A text message; a user's has its leading `<system-reminder>` blocks taken off, and is
    /// injected when nothing a person wrote remains.
    fn message(&mut self, role: &str, text: &str, kind: &str, base: Record, out: &mut LineOutput) {
        let (text, source) = if role == "user" {
            let typed = strip_reminders(text);
            if typed.is_empty() || is_system_injected(typed) {
                (text, PromptSource::SystemInjected)
            } else {
                (typed, PromptSource::Human)
            }
        } else {
            (text, PromptSource::Human)
        };
        if text.is_empty() {
            return;
        }
        out.records.push(Record {
            kind: Some(RecordKind::Message),
            source_event_kind: kind.to_owned(),
            role: Some(if role == "user" { "user" } else { "assistant" }.to_owned()),
            prompt_source: (role == "user").then_some(source),
            text: Some(cap_text(text.to_owned(), MAX_TEXT_BYTES)),
            ..base
        });
    }

    fn tool_call(
        &mut self,
        name: Option<&str>,
        call_id: Option<&str>,
        input: Option<&Value>,
        kind: &str,
        base: Record,
    ) -> Record {
        let name = name.unwrap_or("unknown").to_owned();
        if let Some(id) = call_id {
            super::remember_call(&mut self.pending_calls, id.to_owned(), name.clone());
        }
        let mut input = input.filter(|i| !i.is_null()).cloned();
        let tool_kind = tool_kind(&name);
        let file_paths = edited_path(
            tool_kind,
            input.as_ref(),
            &["file_path", "path", "filePath"],
        );
        if let Some(i) = input.as_mut() {
            cap_json(i, MAX_INPUT_STRING_BYTES);
        }
        Record {
            kind: Some(RecordKind::ToolCall),
            source_event_kind: kind.to_owned(),
            role: Some("assistant".to_owned()),
            tool_kind: Some(tool_kind),
            tool_name: Some(name),
            tool_input: input,
            call_id: call_id.map(str::to_owned),
            file_paths,
            ..base
        }
    }

    fn tool_result(
        &mut self,
        call_id: Option<&str>,
        text: Option<String>,
        exit_code: Option<i32>,
        failed: bool,
        kind: &str,
        base: Record,
    ) -> Record {
        let name = call_id.and_then(|id| self.pending_calls.remove(id));
        let exit_code = exit_code.or_else(|| text.as_deref().and_then(failed_exit_code));
        let outcome = outcome_of(
            exit_code,
            text.as_deref().unwrap_or(""),
            failed.then_some(true),
        );
        Record {
            kind: Some(RecordKind::ToolResult),
            source_event_kind: kind.to_owned(),
            tool_kind: name.as_deref().map(tool_kind),
            tool_name: name,
            text: text.map(|t| cap_text(t, MAX_TOOL_OUTPUT_BYTES)),
            call_id: call_id.map(str::to_owned),
            exit_code,
            outcome,
            ..base
        }
    }

    /// One `droid exec` stream-json event.
    fn stream_event(&mut self, kind: &str, line: &Value, base: Record, out: &mut LineOutput) {
        let m = &mut self.meta;
        set_once(
            &mut m.session_id,
            str_at(line, &["session_id"]).or_else(|| str_at(line, &["sessionId"])),
        );
        match kind {
            "system" => {
                set_once(&mut m.cwd, str_at(line, &["cwd"]));
                set_latest(&mut m.model, str_at(line, &["model"]));
            }
            "message" => {
                let role = str_at(line, &["role"]).unwrap_or("assistant");
                if let Some(text) = str_at(line, &["text"]) {
                    self.message(role, text, "droid:stream:message", base, out);
                }
            }
            "tool_call" => {
                let call_id = str_at(line, &["toolCallId"]).or_else(|| str_at(line, &["id"]));
                let rec = self.tool_call(
                    str_at(line, &["toolName"]).or_else(|| str_at(line, &["toolId"])),
                    call_id,
                    line.get("parameters"),
                    "droid:stream:tool_call",
                    base,
                );
                out.records.push(rec);
            }
            "tool_result" => {
                let call_id = str_at(line, &["toolCallId"]).or_else(|| str_at(line, &["id"]));
                let (text, code) = match line.get("value") {
                    Some(Value::String(s)) => (Some(s.clone()), None),
                    Some(v @ Value::Object(_)) => {
                        let out_text = [str_at(v, &["stdout"]), str_at(v, &["stderr"])]
                            .into_iter()
                            .flatten()
                            .filter(|s| !s.is_empty())
                            .collect::<Vec<_>>()
                            .join("\n");
                        let code = v
                            .get("exitCode")
                            .and_then(Value::as_i64)
                            .and_then(|c| i32::try_from(c).ok());
                        ((!out_text.is_empty()).then_some(out_text), code)
                    }
                    _ => (None, None),
                };
                let failed = line.get("isError").and_then(Value::as_bool) == Some(true);
                let rec = self.tool_result(
                    call_id,
                    text,
                    code,
                    failed,
                    "droid:stream:tool_result",
                    base,
                );
                out.records.push(rec);
            }
            "completion" => {
                if let Some(u) = line.get("usage").filter(|u| u.is_object()) {
                    let id = str_at(line, &["id"]).unwrap_or("completion");
                    out.usage.push((
                        format!("completion:{id}"),
                        TokenUsage {
                            input: u64_at(u, "input_tokens"),
                            output: u64_at(u, "output_tokens"),
                            cache_creation: u64_at(u, "cache_creation_input_tokens"),
                            cache_read: u64_at(u, "cache_read_input_tokens"),
                            reasoning: 0,
                        },
                    ));
                }
                if let Some(text) = str_at(line, &["finalText"]) {
                    self.message("assistant", text, "droid:stream:completion", base, out);
                }
            }
            "error" => {
                let msg = str_at(line, &["message"]).unwrap_or("unknown error");
                out.records.push(Record {
                    kind: Some(RecordKind::Event),
                    source_event_kind: "droid:stream:error".to_owned(),
                    text: Some(cap_text(format!("error: {msg}"), MAX_TEXT_BYTES)),
                    ..base
                });
            }
            other => count_unknown(&mut self.meta, other),
        }
    }
}

impl SourceParser for DroidParser {
    fn agent(&self) -> Agent {
        Agent::Droid
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
        let millis = line
            .get("timestamp")
            .and_then(Value::as_i64)
            .and_then(ms_to_rfc3339);
        let raw_ts = millis.as_deref().or_else(|| str_at(&line, &["timestamp"]));
        let timestamp = line_timestamp(&mut self.meta, raw_ts, out).map(Cow::into_owned);
        note_timestamp(&mut self.meta, timestamp.as_deref());
        let base = Record {
            timestamp,
            cwd: self.meta.cwd.clone(),
            ..Record::default()
        };
        match kind {
            "session_start" => self.session_start(&line),
            // The session store nests the message; a stream-json message is flat.
            "message" if line.get("message").is_some_and(Value::is_object) => {
                let msg = line.get("message").cloned().unwrap_or(Value::Null);
                self.store_message(&msg, base, out);
            }
            _ => self.stream_event(kind, &line, base, out),
        }
        Ok(())
    }
}

/// The exit code in a result's text: Droid's own `Command failed (exit code: N)`, else the
/// markers every agent's output uses.
fn failed_exit_code(text: &str) -> Option<i32> {
    const MARK: &str = "Command failed (exit code: ";
    let code = text.find(MARK).and_then(|at| {
        let rest = &text[at + MARK.len()..];
        let end = rest.find(')')?;
        rest[..end].trim().parse().ok()
    });
    code.or_else(|| exit_code_in(text))
}

/// A user text without the `<system-reminder>…</system-reminder>` blocks Droid puts before
/// what a person typed.
fn strip_reminders(text: &str) -> &str {
    const OPEN: &str = "<system-reminder>";
    const CLOSE: &str = "</system-reminder>";
    let mut rest = text.trim_start();
    while let Some(after) = rest.strip_prefix(OPEN) {
        match after.find(CLOSE) {
            Some(end) => rest = after[end + CLOSE.len()..].trim_start(),
            None => return "",
        }
    }
    rest.trim_end()
}

/// Droid's tool names in Cairn's (agentlog's) kinds: reads and searches are housekeeping.
pub fn tool_kind(name: &str) -> ToolKind {
    match name {
        "Execute" | "Shell" => ToolKind::Exec,
        "Edit" | "MultiEdit" | "Create" | "Write" | "ApplyPatch" => ToolKind::FileEdit,
        "Task" => ToolKind::SubAgent,
        "WebSearch" | "FetchUrl" => ToolKind::WebSearch,
        "Read" | "LS" | "Grep" | "Glob" | "TodoWrite" => ToolKind::Housekeeping,
        other => ToolKind::of(other),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::archive::Outcome;
    use serde_json::json;

    fn parse(lines: &[Value]) -> (DroidParser, LineOutput) {
        let mut parser = DroidParser::resume(None).unwrap();
        let mut out = LineOutput::default();
        for line in lines {
            parser.parse_line(&line.to_string(), &mut out).unwrap();
        }
        (parser, out)
    }

    #[test]
    fn session_store_blocks_pair_and_reminders_come_off() {
        let (parser, out) = parse(&[
            json!({"type":"session_start","id":"d1","sessionTitle":"T","cwd":"/r","version":2}),
            json!({"type":"message","id":"m1","timestamp":"2025-12-26T00:00:00.000Z","message":{"role":"user","content":[{"type":"text","text":"<system-reminder>\nBe concise.\n</system-reminder>\n\nDo the thing"}]}}),
            json!({"type":"message","id":"m2","timestamp":"2025-12-26T00:00:01.000Z","message":{"role":"assistant","content":[
                {"type":"thinking","thinking":"hm"},
                {"type":"tool_use","id":"t1","name":"Edit","input":{"file_path":"/r/a.rs","old_str":"a","new_str":"b"}},
                {"type":"tool_use","id":"t2","name":"Execute","input":{"command":"ls /nope"}}]}}),
            json!({"type":"message","id":"m3","timestamp":"2025-12-26T00:00:02.000Z","message":{"role":"user","content":[
                {"type":"tool_result","tool_use_id":"t2","content":"Error: Command failed (exit code: 1)"}]}}),
        ]);
        let m = parser.meta();
        assert_eq!(
            (m.session_id.as_deref(), m.tool_version.as_deref()),
            (Some("d1"), Some("2"))
        );
        assert_eq!(out.records[0].text.as_deref(), Some("Do the thing"));
        assert_eq!(out.records[0].prompt_source, Some(PromptSource::Human));
        assert_eq!(out.records[1].kind, Some(RecordKind::Reasoning));
        assert_eq!(out.records[2].tool_kind, Some(ToolKind::FileEdit));
        assert_eq!(out.records[2].file_paths, ["/r/a.rs"]);
        let result = &out.records[4];
        assert_eq!(result.tool_name.as_deref(), Some("Execute"));
        assert_eq!(result.exit_code, Some(1));
        assert_eq!(result.outcome, Some(Outcome::Failed));
    }

    #[test]
    fn stream_json_with_epoch_millis_and_usage() {
        let (parser, out) = parse(&[
            json!({"type":"system","sessionId":"s","timestamp":1767812640310_i64,"model":"m","cwd":"/d"}),
            json!({"type":"tool_call","sessionId":"s","timestamp":1767812642000_i64,"id":"c1","toolName":"Execute","parameters":{"command":"ls"}}),
            json!({"type":"tool_result","sessionId":"s","timestamp":1767812643000_i64,"id":"c1","value":{"stdout":"a\n","exitCode":0}}),
            json!({"type":"completion","sessionId":"s","finalText":"Done","usage":{"input_tokens":10,"output_tokens":5},"id":"end"}),
        ]);
        let m = parser.meta();
        assert_eq!(m.session_id.as_deref(), Some("s"));
        assert_eq!(m.started_at.as_deref(), Some("2026-01-07T19:04:00.310Z"));
        assert_eq!(out.records[1].outcome, Some(Outcome::Succeeded));
        assert_eq!(out.records[1].tool_kind, Some(ToolKind::Exec));
        assert_eq!(out.records[2].text.as_deref(), Some("Done"));
        assert_eq!((out.usage[0].1.input, out.usage[0].1.output), (10, 5));
    }

    /// An interactive session's model and token totals come from its settings beside the log
    /// (read again at every read: Droid rewrites them as it spends tokens).
    #[test]
    fn the_settings_beside_a_session_give_its_model_and_totals() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("-work-app/5b1a.jsonl");
        std::fs::create_dir_all(log.parent().unwrap()).unwrap();
        std::fs::write(&log, "").unwrap();
        let file = FoundFile::main(Agent::Droid, &log);
        let fresh = DroidParser::for_file(&file, None).unwrap();
        assert_eq!(
            (fresh.meta.model.clone(), fresh.meta.cumulative_usage),
            (None, None)
        );
        std::fs::write(
            log.with_file_name("5b1a.settings.json"),
            r#"{"model":"custom:Claude-Opus-4.5-Thinking-[Anthropic]-0","providerLock":"anthropic",
                "tokenUsage":{"inputTokens":1234,"outputTokens":567,"cacheCreationTokens":89,
                "cacheReadTokens":12,"thinkingTokens":34}}"#,
        )
        .unwrap();
        let saved = fresh.save();
        let p = DroidParser::for_file(&file, Some(&saved)).unwrap();
        assert_eq!(
            p.meta.model.as_deref(),
            Some("custom:Claude-Opus-4.5-Thinking-[Anthropic]-0")
        );
        assert_eq!(p.meta.provider.as_deref(), Some("anthropic"));
        let u = p.meta.cumulative_usage.unwrap();
        assert_eq!(
            (
                u.input,
                u.output,
                u.cache_creation,
                u.cache_read,
                u.reasoning
            ),
            (1234, 567, 89, 12, 34)
        );
        std::fs::write(log.with_file_name("5b1a.settings.json"), "{torn").unwrap();
        let p = DroidParser::for_file(&file, Some(&saved)).unwrap();
        assert_eq!(p.meta.model, None, "a torn file says nothing");
    }

    #[test]
    fn wrong_types_are_counted_never_fatal() {
        let (parser, out) = parse(&[
            json!({"type": ["x"]}),
            json!({"type":"session_start","id":5,"version":[1]}),
            json!({"type":"message","message":{"content":{"no":"array"}}}),
            json!({"type":"message","message":{"role":"user","content":[5,{"type":"image"}]}}),
            json!({"type":"tool_result","value":[1,2],"timestamp":-99999999999999999_i64}),
            json!({"type":"brand_new"}),
        ]);
        let unknown = &parser.meta().unknown_types;
        assert_eq!(unknown.get("<untyped>"), Some(&1));
        assert_eq!(unknown.get("content:image"), Some(&1));
        assert_eq!(unknown.get("brand_new"), Some(&1));
        assert_eq!(out.records.len(), 1);
        assert_eq!(out.records[0].outcome, None);
    }

    #[test]
    fn reminder_only_prompts_are_injected() {
        assert_eq!(strip_reminders("<system-reminder>x</system-reminder>"), "");
        assert_eq!(strip_reminders("<system-reminder>unclosed"), "");
        assert_eq!(strip_reminders("plain "), "plain");
        assert_eq!(
            failed_exit_code("Error: Command failed (exit code: 2)\nboom"),
            Some(2)
        );
        assert_eq!(failed_exit_code("Command failed (exit code: x)"), None);
        assert_eq!(failed_exit_code("Process exited with code 3"), Some(3));
    }
}

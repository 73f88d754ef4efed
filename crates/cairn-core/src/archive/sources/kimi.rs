//! Kimi Code CLI sessions
//! (`~/.kimi-code/sessions/wd_<slug>_<hash>/session_<uuid>/agents/<agentId>/wire.jsonl`).
//!
//! Each agent of a session writes its own wire journal: `agents/main` is the session,
//! `agents/agent-N` a sub-agent (its own session here, hanging off the main one, as Claude's
//! sub-agent files do). Lines are `{type, time (epoch ms), …}`. A person's prompt is
//! `turn.prompt` (`origin.kind` `user`; a sub-agent's brief is `system_trigger`); the model's
//! work arrives as `context.append_loop_event` whose `event` is `content.part` (`think` or
//! `text`), `tool.call`, `tool.result` or `step.end` (token usage per provider message). The
//! session id is the `session_<uuid>` folder's; the cwd comes from `config.update`,
//! `profile.bind` or a tool call's display (the `state.json` beside `agents/` is not read: the
//! line pipeline reads one file per session). A `!` command the person ran is a
//! `context.append_message` of origin `shell_command` (its input, then its output).
//!
//! The Python kimi-cli (`~/.kimi/sessions/<md5 of the cwd>/<session uuid>/wire.jsonl`, a
//! sub-agent's in `<session>/subagents/<id>/wire.jsonl`) writes `{timestamp (epoch seconds),
//! message: {type, payload}}` lines after a `metadata` line: `TurnBegin`/`SteerInput` (the
//! person's input), `ContentPart` (`text` or `think`), `ToolCall` (arguments as JSON text),
//! `ToolResult`, `StatusUpdate` (token usage per provider message), `CompactionEnd`. Its cwd is
//! the work dir whose md5 names the folder, listed in `kimi.json` beside `sessions/`; no line
//! names the model. The writer merges streamed chunks before writing, except when a tool result
//! lands mid-stream: then one block can span two `ContentPart` lines (two records here) and a
//! call's arguments end in a `ToolCallPart` line (not joined: the call keeps what it had).

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::edited_path;
use super::{
    FileRole, LineOutput, MAX_INPUT_STRING_BYTES, MAX_TEXT_BYTES, MAX_TOOL_OUTPUT_BYTES,
    SessionMeta, SourceParser, cap_json, cap_text, count_unknown, exit_code_in, is_system_injected,
    line_timestamp, ms_to_rfc3339, note_timestamp, outcome_of, set_latest, set_once, str_at,
    text_value, u64_at,
};
use crate::archive::discover::{DirOrigin, FoundFile};
use crate::archive::{Agent, Outcome, PromptSource, Record, RecordKind, TokenUsage, ToolKind};

/// The variable naming Kimi's home (AgentsView's name); sessions are in its `sessions`.
pub const ENV_DIR: &str = "KIMI_DIR";

/// Where Kimi Code keeps its sessions (the same on Linux and macOS): `$KIMI_DIR/sessions` when
/// set, else `~/.kimi-code/sessions` and the older `~/.kimi/sessions`, each moved by Kimi's own
/// variable for it (`KIMI_CODE_HOME`, `KIMI_SHARE_DIR`).
pub fn locations(
    env: impl Fn(&str) -> Option<PathBuf>,
    home: Option<&Path>,
) -> Vec<(PathBuf, DirOrigin)> {
    crate::archive::discover::env_or_agent_home(
        env,
        ENV_DIR,
        "sessions",
        home,
        &[
            (".kimi-code/sessions", "KIMI_CODE_HOME", "sessions"),
            (".kimi/sessions", "KIMI_SHARE_DIR", "sessions"),
        ],
    )
}

/// `session_<uuid>/agents/<agentId>/wire.jsonl`: `main` is the session, any other agent a
/// sub-agent of it; kimi-cli's `<hash>/<uuid>/wire.jsonl` a session and
/// `<uuid>/subagents/<id>/wire.jsonl` a sub-agent of it. Other `.jsonl` files are not journals.
pub fn classify(path: &Path) -> Option<FoundFile> {
    if path.file_name()? != "wire.jsonl" {
        return None;
    }
    let agent_dir = path.parent()?;
    let agents = agent_dir.parent()?;
    if agents.file_name()? == "subagents" {
        let session = agents.parent()?.file_name()?.to_str()?;
        return Some(FoundFile {
            agent: Agent::Kimi,
            role: FileRole::Subagent,
            path: path.to_owned(),
            parent_hint: Some(session.to_owned()),
            agent_id: Some(agent_dir.file_name()?.to_str()?.to_owned()),
        });
    }
    if agents.file_name()? != "agents" {
        // kimi-cli: `sessions/<md5 of the cwd>/<session uuid>/wire.jsonl`.
        let hash = agents.file_name()?.to_str()?;
        let hash = hash.strip_prefix("ssh_").unwrap_or(hash);
        if hash.len() != 32 || !hash.bytes().all(|b| b.is_ascii_hexdigit()) {
            return None;
        }
        return Some(FoundFile {
            agent: Agent::Kimi,
            role: FileRole::Main,
            path: path.to_owned(),
            parent_hint: Some(agent_dir.file_name()?.to_str()?.to_owned()),
            agent_id: None,
        });
    }
    let session_dir = agents.parent()?.file_name()?.to_str()?;
    let session = session_dir
        .strip_prefix("session_")
        .unwrap_or(session_dir)
        .to_owned();
    let agent_id = agent_dir.file_name()?.to_str()?;
    let sub = agent_id != "main";
    Some(FoundFile {
        agent: Agent::Kimi,
        role: if sub {
            FileRole::Subagent
        } else {
            FileRole::Main
        },
        path: path.to_owned(),
        parent_hint: Some(session),
        agent_id: sub.then(|| agent_id.to_owned()),
    })
}

/// Whether a transcript's path is Kimi's (for the hook, given only a path).
pub fn owns_path(path: &Path) -> bool {
    let s = path.to_string_lossy();
    (s.contains("/.kimi-code/sessions/") || s.contains("/.kimi/sessions/"))
        && s.ends_with("/wire.jsonl")
}

/// Line types that carry nothing Cairn keeps (bookkeeping, tool schemas, request metadata,
/// duplicates of the prompt, per-turn usage sums).
const KNOWN_SILENT_TYPES: [&str; 14] = [
    "metadata",
    "tools.set_active_tools",
    "llm.tools_snapshot",
    "permission.set_mode",
    "permission.record_approval_result",
    "turn.ended",
    "plugin.session_start",
    "runtime.set_binding",
    "token_counting.measured",
    "token_counting.turn_recorded",
    "usage.record",
    "full_compaction.begin",
    "full_compaction.complete",
    "step.begin",
];

/// kimi-cli's wire messages that carry nothing Cairn keeps: step and turn bounds, a call's
/// argument chunk, approvals, notices, hooks, the UI's own messages. A sub-agent's events
/// inside the main journal (`SubagentEvent`, before sub-agents had files) are not read.
const CLI_SILENT_TYPES: [&str; 20] = [
    "StepBegin",
    "StepRetry",
    "StepInterrupted",
    "TurnEnd",
    "CompactionBegin",
    "ToolCallPart",
    "ToolCallRequest",
    "ApprovalRequest",
    "ApprovalResponse",
    "ApprovalRequestResolved",
    "QuestionRequest",
    "Notification",
    "PlanDisplay",
    "BtwBegin",
    "BtwEnd",
    "HookTriggered",
    "HookResolved",
    "MCPLoadingBegin",
    "MCPLoadingEnd",
    "SubagentEvent",
];

/// The text inside `<tag>…</tag>` in `text`.
fn tag_text<'a>(text: &'a str, tag: &str) -> Option<&'a str> {
    let open = format!("<{tag}>");
    let close = format!("</{tag}>");
    let start = text.find(&open)? + open.len();
    let end = text[start..].find(&close)? + start;
    Some(text[start..end].trim_matches('\n'))
}

/// Text as written before Kimi escaped it for its XML tags.
fn xml_unescaped(text: &str) -> String {
    text.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&apos;", "'")
        .replace("&amp;", "&")
}

/// The work dir a kimi-cli session ran in: `kimi.json` (beside `sessions/`) lists the work
/// dirs, and the session's folder is named by the md5 of its path (`ssh_` before it for a
/// remote one, whose path is not this machine's).
fn work_dir_of(wire: &Path) -> Option<String> {
    use md5::Digest as _;
    let hash_dir = wire.parent()?.parent()?;
    let hash = hash_dir.file_name()?.to_str()?;
    if hash.len() != 32 {
        return None;
    }
    let index = hash_dir.parent()?.parent()?.join("kimi.json");
    // Matched by the md5 of each path as written; the one found is kept as a path is.
    super::read_small_json_as_found(&index, MAX_INDEX_BYTES)?
        .get("work_dirs")?
        .as_array()?
        .iter()
        .filter_map(|d| str_at(d, &["path"]))
        .find(|p| hex::encode(md5::Md5::digest(p.as_bytes())).eq_ignore_ascii_case(hash))
        .map(|p| crate::archive::store::at_rest(p).into_owned())
}

/// The most of `kimi.json` read (it lists work dirs and their last sessions).
const MAX_INDEX_BYTES: u64 = 4 * 1024 * 1024;

#[derive(Debug, Default, Serialize, Deserialize)]
pub struct KimiParser {
    #[serde(skip)]
    role: FileRole,
    meta: SessionMeta,
    /// call id → tool name, for calls whose result has not been seen yet.
    pending_calls: BTreeMap<String, String>,
    /// `!` commands seen (names each command's call, which its output answers).
    #[serde(default)]
    shell_commands: u64,
}

impl KimiParser {
    pub fn resume(role: FileRole, saved: Option<&Value>) -> Result<Self, serde_json::Error> {
        let mut parser = match saved {
            Some(state) => serde_json::from_value(state.clone())?,
            None => KimiParser::default(),
        };
        parser.role = role;
        parser
            .meta
            .provider
            .get_or_insert_with(|| "kimi".to_owned());
        Ok(parser)
    }

    /// A fresh parser of `file`; kimi-cli's journal learns its cwd from where it lies: the
    /// work dir `kimi.json` lists whose md5 names the session's folder.
    pub fn for_file(file: &FoundFile) -> Self {
        let mut parser = KimiParser {
            role: file.role,
            ..KimiParser::default()
        };
        parser.meta.provider = Some("kimi".to_owned());
        parser.meta.cwd = work_dir_of(&file.path);
        parser
    }

    /// One kimi-cli line: `{timestamp, message: {type, payload}}`.
    fn cli_line(&mut self, kind: &str, p: &Value, base: Record, out: &mut LineOutput) {
        let assistant = |base: Record| Record {
            role: Some("assistant".to_owned()),
            ..base
        };
        match kind {
            "TurnBegin" | "SteerInput" => {
                let Some(text) = p.get("user_input").and_then(text_value) else {
                    return;
                };
                let source = if is_system_injected(&text) {
                    PromptSource::SystemInjected
                } else if self.role == FileRole::Subagent {
                    PromptSource::SpawnedAgent
                } else {
                    PromptSource::Human
                };
                out.records.push(Record {
                    kind: Some(RecordKind::Message),
                    source_event_kind: format!("kimi:{kind}"),
                    role: Some("user".to_owned()),
                    prompt_source: Some(source),
                    text: Some(cap_text(text, MAX_TEXT_BYTES)),
                    ..base
                });
            }
            "ContentPart" => {
                let (rk, text) = match str_at(p, &["type"]) {
                    Some("think") => (RecordKind::Reasoning, str_at(p, &["think"])),
                    Some("text") => (RecordKind::Message, str_at(p, &["text"])),
                    Some("image_url" | "audio_url" | "video_url") | None => return,
                    Some(other) => {
                        count_unknown(&mut self.meta, &format!("ContentPart:{other}"));
                        return;
                    }
                };
                let Some(text) = text.filter(|t| !t.is_empty()) else {
                    return;
                };
                out.records.push(Record {
                    kind: Some(rk),
                    source_event_kind: format!("kimi:ContentPart:{}", rk.as_str()),
                    text: Some(cap_text(text.to_owned(), MAX_TEXT_BYTES)),
                    ..assistant(base)
                });
            }
            "ToolCall" => {
                let name = str_at(p, &["function", "name"])
                    .unwrap_or("unknown")
                    .to_owned();
                let call_id = str_at(p, &["id"]).map(str::to_owned);
                if let Some(id) = &call_id {
                    super::remember_call(&mut self.pending_calls, id.clone(), name.clone());
                }
                let input = p.get("function").and_then(|f| f.get("arguments"));
                let input = match input {
                    Some(Value::String(s)) => {
                        Some(serde_json::from_str(s).unwrap_or_else(|_| Value::String(s.clone())))
                    }
                    Some(Value::Null) | None => None,
                    Some(other) => Some(other.clone()),
                };
                out.records.push(self.call_record(
                    name,
                    call_id,
                    input,
                    "kimi:ToolCall",
                    assistant(base),
                ));
            }
            "ToolResult" => {
                let call_id = str_at(p, &["tool_call_id"]).map(str::to_owned);
                let name = call_id
                    .as_ref()
                    .and_then(|id| self.pending_calls.remove(id));
                let rv = p.get("return_value").unwrap_or(&Value::Null);
                let output = rv.get("output").and_then(text_value);
                let message = str_at(rv, &["message"]).filter(|m| !m.is_empty());
                let failed = rv.get("is_error").and_then(Value::as_bool);
                // A failed command's code is in the message, not the output.
                let exit_code = message
                    .and_then(exit_code_text)
                    .or_else(|| output.as_deref().and_then(exit_code_text));
                let text = output.or_else(|| message.map(str::to_owned));
                let outcome = outcome_of(exit_code, text.as_deref().unwrap_or(""), failed);
                out.records.push(Record {
                    kind: Some(RecordKind::ToolResult),
                    source_event_kind: "kimi:ToolResult".to_owned(),
                    tool_kind: name.as_deref().map(tool_kind),
                    tool_name: name,
                    text: text.map(|t| cap_text(t, MAX_TOOL_OUTPUT_BYTES)),
                    call_id,
                    exit_code,
                    outcome,
                    ..base
                });
            }
            "StatusUpdate" => {
                if let (Some(id), Some(u)) = (
                    str_at(p, &["message_id"]),
                    p.get("token_usage").filter(|u| u.is_object()),
                ) {
                    out.usage.push((
                        id.to_owned(),
                        TokenUsage {
                            input: u64_at(u, "input_other"),
                            output: u64_at(u, "output"),
                            cache_creation: u64_at(u, "input_cache_creation"),
                            cache_read: u64_at(u, "input_cache_read"),
                            reasoning: 0,
                        },
                    ));
                }
            }
            "CompactionEnd" => out.records.push(Record {
                kind: Some(RecordKind::Event),
                source_event_kind: "kimi:CompactionEnd".to_owned(),
                text: Some("Conversation compacted".to_owned()),
                is_compaction: true,
                ..base
            }),
            k if CLI_SILENT_TYPES.contains(&k) => {}
            other => count_unknown(&mut self.meta, &format!("wire:{other}")),
        }
    }

    /// A tool call's record, its call remembered for the result.
    fn call_record(
        &mut self,
        name: String,
        call_id: Option<String>,
        mut input: Option<Value>,
        event_kind: &str,
        base: Record,
    ) -> Record {
        let tool_kind = tool_kind(&name);
        let file_paths = edited_path(tool_kind, input.as_ref(), &["path", "file_path"]);
        if let Some(i) = input.as_mut() {
            cap_json(i, MAX_INPUT_STRING_BYTES);
        }
        Record {
            kind: Some(RecordKind::ToolCall),
            source_event_kind: event_kind.to_owned(),
            tool_kind: Some(tool_kind),
            tool_name: Some(name),
            tool_input: input,
            call_id,
            file_paths,
            ..base
        }
    }

    /// A message put in the context: a `!` command the person ran, or its output. Other
    /// messages repeat what the loop events already said.
    fn appended_message(&mut self, line: &Value, base: Record, out: &mut LineOutput) {
        let Some(message) = line.get("message") else {
            return;
        };
        if str_at(message, &["origin", "kind"]) != Some("shell_command") {
            return;
        }
        let text = message
            .get("content")
            .and_then(text_value)
            .unwrap_or_default();
        match str_at(message, &["origin", "phase"]) {
            Some("input") => {
                self.shell_commands += 1;
                let command = xml_unescaped(tag_text(&text, "bash-input").unwrap_or(&text).trim());
                let record = self.call_record(
                    "Shell".to_owned(),
                    Some(format!("shell:{}", self.shell_commands)),
                    Some(serde_json::json!({ "command": command })),
                    "kimi:shell_command",
                    Record {
                        role: Some("user".to_owned()),
                        ..base
                    },
                );
                out.records.push(record);
            }
            Some("output") => {
                let failed = message
                    .get("origin")
                    .and_then(|o| o.get("isError"))
                    .and_then(Value::as_bool)
                    == Some(true);
                let stdout = tag_text(&text, "bash-stdout").map(xml_unescaped);
                let stderr = tag_text(&text, "bash-stderr").map(xml_unescaped);
                let output = [stdout, stderr]
                    .into_iter()
                    .flatten()
                    .filter(|t| !t.is_empty())
                    .collect::<Vec<_>>()
                    .join("\n");
                out.records.push(Record {
                    kind: Some(RecordKind::ToolResult),
                    source_event_kind: "kimi:shell_command:output".to_owned(),
                    tool_kind: Some(ToolKind::Exec),
                    tool_name: Some("Shell".to_owned()),
                    call_id: Some(format!("shell:{}", self.shell_commands)),
                    text: (!output.is_empty()).then(|| cap_text(output, MAX_TOOL_OUTPUT_BYTES)),
                    outcome: Some(if failed {
                        Outcome::Failed
                    } else {
                        Outcome::Succeeded
                    }),
                    ..base
                });
            }
            _ => {}
        }
    }

    fn prompt(&mut self, line: &Value, kind: &str, base: Record, out: &mut LineOutput) {
        let Some(text) = line.get("input").and_then(text_value) else {
            return;
        };
        let source = match str_at(line, &["origin", "kind"]) {
            Some("user") | None if !is_system_injected(&text) => PromptSource::Human,
            Some("system_trigger") if str_at(line, &["origin", "name"]) == Some("subagent") => {
                PromptSource::SpawnedAgent
            }
            _ => PromptSource::SystemInjected,
        };
        out.records.push(Record {
            kind: Some(RecordKind::Message),
            source_event_kind: format!("kimi:{kind}"),
            role: Some("user".to_owned()),
            prompt_source: Some(source),
            text: Some(cap_text(text, MAX_TEXT_BYTES)),
            ..base
        });
    }

    fn loop_event(&mut self, ev: &Value, base: Record, out: &mut LineOutput) {
        let kind = str_at(ev, &["type"]).unwrap_or("<untyped>");
        let assistant = |base: Record| Record {
            role: Some("assistant".to_owned()),
            ..base
        };
        match kind {
            "content.part" => {
                let part = ev.get("part").unwrap_or(&Value::Null);
                let (rk, text) = match str_at(part, &["type"]) {
                    Some("think") => (RecordKind::Reasoning, str_at(part, &["think"])),
                    Some("text") => (RecordKind::Message, str_at(part, &["text"])),
                    Some(other) => {
                        count_unknown(&mut self.meta, &format!("content.part:{other}"));
                        return;
                    }
                    None => return,
                };
                let Some(text) = text.filter(|t| !t.is_empty()) else {
                    return;
                };
                out.records.push(Record {
                    kind: Some(rk),
                    source_event_kind: format!("kimi:content.part:{}", rk.as_str()),
                    text: Some(cap_text(text.to_owned(), MAX_TEXT_BYTES)),
                    ..assistant(base)
                });
            }
            "tool.call" => {
                let name = str_at(ev, &["name"]).unwrap_or("unknown").to_owned();
                let call_id = str_at(ev, &["toolCallId"]).map(str::to_owned);
                if let Some(id) = &call_id {
                    super::remember_call(&mut self.pending_calls, id.clone(), name.clone());
                }
                let display_cwd = str_at(ev, &["display", "cwd"]);
                set_once(&mut self.meta.cwd, display_cwd);
                let input = ev.get("args").filter(|a| !a.is_null()).cloned();
                let base = Record {
                    cwd: display_cwd.map(str::to_owned).or(base.cwd.clone()),
                    ..assistant(base)
                };
                out.records
                    .push(self.call_record(name, call_id, input, "kimi:tool.call", base));
            }
            "tool.result" => {
                let call_id = str_at(ev, &["toolCallId"])
                    .or_else(|| str_at(ev, &["parentUuid"]))
                    .map(str::to_owned);
                let name = call_id
                    .as_ref()
                    .and_then(|id| self.pending_calls.remove(id));
                let result = ev.get("result").unwrap_or(&Value::Null);
                let text = result.get("output").and_then(text_value);
                // Any `isError` but `true` says the call went well.
                let failed = result.get("isError").map(|v| v.as_bool() == Some(true));
                let exit_code = text.as_deref().and_then(exit_code_text);
                let outcome = outcome_of(exit_code, text.as_deref().unwrap_or(""), failed);
                out.records.push(Record {
                    kind: Some(RecordKind::ToolResult),
                    source_event_kind: "kimi:tool.result".to_owned(),
                    tool_kind: name.as_deref().map(tool_kind),
                    tool_name: name,
                    text: text.map(|t| cap_text(t, MAX_TOOL_OUTPUT_BYTES)),
                    call_id,
                    exit_code,
                    outcome,
                    ..base
                });
            }
            "step.end" => {
                if let (Some(id), Some(u)) = (
                    str_at(ev, &["messageId"]),
                    ev.get("usage").filter(|u| u.is_object()),
                ) {
                    out.usage.push((
                        id.to_owned(),
                        TokenUsage {
                            input: u64_at(u, "inputOther"),
                            output: u64_at(u, "output"),
                            cache_creation: u64_at(u, "inputCacheCreation"),
                            cache_read: u64_at(u, "inputCacheRead"),
                            reasoning: 0,
                        },
                    ));
                }
            }
            k if KNOWN_SILENT_TYPES.contains(&k) => {}
            other => count_unknown(&mut self.meta, &format!("loop:{other}")),
        }
    }
}

impl SourceParser for KimiParser {
    fn agent(&self) -> Agent {
        Agent::Kimi
    }

    fn meta(&self) -> &SessionMeta {
        &self.meta
    }

    fn save(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }

    fn parse_line(&mut self, raw: &str, out: &mut LineOutput) -> Result<(), serde_json::Error> {
        let line: Value = serde_json::from_str(raw)?;
        if let Some(message) = line.get("message").filter(|_| line.get("type").is_none()) {
            let kind = str_at(message, &["type"]).unwrap_or("<untyped>").to_owned();
            let millis = line
                .get("timestamp")
                .and_then(Value::as_f64)
                .filter(|s| s.is_finite() && s.abs() < 1e11)
                .and_then(|s| ms_to_rfc3339((s * 1000.0).round() as i64));
            let timestamp =
                line_timestamp(&mut self.meta, millis.as_deref(), out).map(Cow::into_owned);
            note_timestamp(&mut self.meta, timestamp.as_deref());
            let base = Record {
                timestamp,
                cwd: self.meta.cwd.clone(),
                ..Record::default()
            };
            let payload = message.get("payload").unwrap_or(&Value::Null);
            self.cli_line(&kind, payload, base, out);
            return Ok(());
        }
        let Some(kind) = str_at(&line, &["type"]) else {
            count_unknown(&mut self.meta, "<untyped>");
            return Ok(());
        };
        let millis = line
            .get("time")
            .or_else(|| line.get("created_at"))
            .and_then(Value::as_i64)
            .and_then(ms_to_rfc3339);
        let timestamp = line_timestamp(&mut self.meta, millis.as_deref(), out).map(Cow::into_owned);
        note_timestamp(&mut self.meta, timestamp.as_deref());
        let base = Record {
            timestamp,
            cwd: self.meta.cwd.clone(),
            ..Record::default()
        };
        match kind {
            "turn.prompt" | "turn.steer" => self.prompt(&line, kind, base, out),
            "context.append_loop_event" => {
                let ev = line.get("event").cloned().unwrap_or(Value::Null);
                self.loop_event(&ev, base, out);
            }
            "context.append_message" => self.appended_message(&line, base, out),
            "config.update" => {
                set_once(&mut self.meta.cwd, str_at(&line, &["cwd"]));
                set_latest(&mut self.meta.model, str_at(&line, &["modelAlias"]));
            }
            "profile.bind" => {
                set_once(
                    &mut self.meta.cwd,
                    str_at(&line, &["environmentDisclosure", "cwd"]),
                );
                set_latest(&mut self.meta.model, str_at(&line, &["modelAlias"]));
            }
            "llm.request" => {
                set_latest(
                    &mut self.meta.model,
                    str_at(&line, &["modelAlias"]).or_else(|| str_at(&line, &["model"])),
                );
            }
            "context.apply_compaction" => out.records.push(Record {
                kind: Some(RecordKind::Event),
                source_event_kind: "kimi:context.apply_compaction".to_owned(),
                text: Some(cap_text(
                    str_at(&line, &["summary"])
                        .unwrap_or("Conversation compacted")
                        .to_owned(),
                    MAX_TEXT_BYTES,
                )),
                is_compaction: true,
                ..base
            }),
            "turn.cancel" | "plan_mode.enter" | "plan_mode.exit" => {
                let text = match kind {
                    "turn.cancel" => "turn cancelled",
                    "plan_mode.enter" => "plan mode entered",
                    _ => "plan mode left",
                };
                out.records.push(Record {
                    kind: Some(RecordKind::Event),
                    source_event_kind: format!("kimi:{kind}"),
                    text: Some(text.to_owned()),
                    ..base
                });
            }
            k if KNOWN_SILENT_TYPES.contains(&k) => {}
            other => count_unknown(&mut self.meta, other),
        }
        Ok(())
    }
}

/// The exit code in a result's text: Kimi's `Command failed with exit code: N.`, else the
/// markers every agent's output uses.
fn exit_code_text(text: &str) -> Option<i32> {
    const MARK: &str = "Command failed with exit code: ";
    let code = text.rfind(MARK).and_then(|at| {
        let rest = &text[at + MARK.len()..];
        let end = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '-'))
            .unwrap_or(rest.len());
        rest[..end].parse().ok()
    });
    code.or_else(|| exit_code_in(text))
}

/// Kimi's tool names in Cairn's (agentlog's) kinds: reads and searches are housekeeping.
pub fn tool_kind(name: &str) -> ToolKind {
    match name {
        "Bash" | "Shell" => ToolKind::Exec,
        "Write" | "Edit" | "StrReplaceFile" | "WriteFile" => ToolKind::FileEdit,
        "Agent" | "AgentSwarm" | "Task" => ToolKind::SubAgent,
        "WebSearch" | "FetchURL" | "SearchWeb" => ToolKind::WebSearch,
        "Read" | "ReadFile" | "ReadMediaFile" | "Glob" | "Grep" | "TodoList" | "TaskList"
        | "TaskOutput" | "TaskStop" | "EnterPlanMode" | "ExitPlanMode" => ToolKind::Housekeeping,
        other => ToolKind::of(other),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parse(lines: &[Value]) -> (KimiParser, LineOutput) {
        let mut parser = KimiParser::resume(FileRole::Main, None).unwrap();
        let mut out = LineOutput::default();
        for line in lines {
            parser.parse_line(&line.to_string(), &mut out).unwrap();
        }
        (parser, out)
    }

    fn lp(event: Value) -> Value {
        json!({"type":"context.append_loop_event","event":event,"time":1785613809972_i64})
    }

    /// kimi-cli's journals: `<md5>/<uuid>/wire.jsonl` (an `ssh_` folder for a remote work dir)
    /// and a sub-agent's under `subagents/`; a folder not named by a hash is not one.
    #[test]
    fn kimi_cli_layout_names_session_and_sub_agents() {
        let hash = "0123456789abcdef0123456789abcdef";
        let main = classify(Path::new(&format!(
            "/h/.kimi/sessions/{hash}/u-1/wire.jsonl"
        )))
        .unwrap();
        assert_eq!(
            (main.role, main.parent_hint.as_deref(), main.agent_id),
            (FileRole::Main, Some("u-1"), None)
        );
        let remote = classify(Path::new(&format!(
            "/h/.kimi/sessions/ssh_{hash}/u-2/wire.jsonl"
        )))
        .unwrap();
        assert_eq!(remote.parent_hint.as_deref(), Some("u-2"));
        let sub = classify(Path::new(&format!(
            "/h/.kimi/sessions/{hash}/u-1/subagents/a1b2c3d4/wire.jsonl"
        )))
        .unwrap();
        assert_eq!(
            (
                sub.role,
                sub.parent_hint.as_deref(),
                sub.agent_id.as_deref()
            ),
            (FileRole::Subagent, Some("u-1"), Some("a1b2c3d4"))
        );
        assert!(classify(Path::new("/h/.kimi/sessions/not-a-hash/u/wire.jsonl")).is_none());
        assert!(
            classify(Path::new(&format!(
                "/h/.kimi/sessions/{hash}/u/context.jsonl"
            )))
            .is_none()
        );
    }

    fn wire(kind: &str, payload: Value) -> Value {
        json!({"timestamp": 1752660000.25, "message": {"type": kind, "payload": payload}})
    }

    /// kimi-cli's wire lines as its writer shapes them (`wire/types.py`, protocol 1.10).
    #[test]
    fn kimi_cli_wire_lines_become_records() {
        let (parser, out) = parse(&[
            json!({"type":"metadata","protocol_version":"1.10"}),
            wire(
                "TurnBegin",
                json!({"user_input":[{"type":"text","text":"fix the flaky test"}]}),
            ),
            wire("StepBegin", json!({"n":1})),
            wire(
                "ContentPart",
                json!({"type":"think","think":"run it first","encrypted":null}),
            ),
            wire(
                "ContentPart",
                json!({"type":"text","text":"Running the tests."}),
            ),
            wire(
                "ContentPart",
                json!({"type":"image_url","image_url":{"url":"data:"}}),
            ),
            wire(
                "ToolCall",
                json!({"type":"function","id":"Shell:0","function":{"name":"Shell","arguments":"{\"command\":\"pytest\"}"},"extras":null}),
            ),
            wire("ToolCallPart", json!({"arguments_part":""})),
            wire(
                "ToolResult",
                json!({"tool_call_id":"Shell:0","return_value":{"is_error":true,"output":"1 failed","message":"Command failed with exit code: 1.","display":[],"extras":null}}),
            ),
            wire(
                "ToolCall",
                json!({"type":"function","id":"WriteFile:1","function":{"name":"WriteFile","arguments":"{\"path\":\"/w/t.py\",\"content\":\"x\"}"}}),
            ),
            wire(
                "ToolResult",
                json!({"tool_call_id":"WriteFile:1","return_value":{"is_error":false,"output":[{"type":"text","text":"written"}],"message":"","display":[]}}),
            ),
            wire(
                "StatusUpdate",
                json!({"context_usage":0.1,"token_usage":{"input_other":800,"output":40,"input_cache_read":100,"input_cache_creation":0},"message_id":"chatcmpl-1"}),
            ),
            wire("SteerInput", json!({"user_input":"and the docs"})),
            wire("CompactionEnd", json!({})),
            wire("TurnEnd", json!({})),
            wire("Teleport", json!({})),
            json!({"timestamp": "soon", "message": {"type": "ContentPart", "payload": 7}}),
            json!({"timestamp": 1752660001, "message": "not an object"}),
        ]);
        let got: Vec<_> = out
            .records
            .iter()
            .map(|r| (r.kind(), r.text.as_deref().unwrap_or(""), r.prompt_source))
            .collect();
        assert_eq!(
            got,
            [
                (
                    RecordKind::Message,
                    "fix the flaky test",
                    Some(PromptSource::Human)
                ),
                (RecordKind::Reasoning, "run it first", None),
                (RecordKind::Message, "Running the tests.", None),
                (RecordKind::ToolCall, "", None),
                (RecordKind::ToolResult, "1 failed", None),
                (RecordKind::ToolCall, "", None),
                (RecordKind::ToolResult, "written", None),
                (
                    RecordKind::Message,
                    "and the docs",
                    Some(PromptSource::Human)
                ),
                (RecordKind::Event, "Conversation compacted", None),
            ]
        );
        let r = &out.records;
        assert_eq!(r[0].timestamp.as_deref(), Some("2025-07-16T10:00:00.250Z"));
        assert_eq!(r[3].tool_input, Some(json!({"command":"pytest"})));
        assert_eq!(r[3].tool_kind, Some(ToolKind::Exec));
        assert_eq!(
            (r[4].exit_code, r[4].outcome),
            (Some(1), Some(Outcome::Failed))
        );
        assert_eq!(r[4].tool_name.as_deref(), Some("Shell"));
        assert_eq!(r[5].file_paths, ["/w/t.py"]);
        assert_eq!(r[6].outcome, Some(Outcome::Succeeded));
        assert!(r[8].is_compaction);
        assert_eq!(out.usage.len(), 1);
        assert_eq!(
            (out.usage[0].1.input, out.usage[0].1.cache_read),
            (800, 100)
        );
        let unknown = &parser.meta().unknown_types;
        assert_eq!(unknown.get("wire:Teleport"), Some(&1));
        assert_eq!(unknown.get("wire:<untyped>"), Some(&1));
        assert_eq!(unknown.len(), 2, "{unknown:?}");
    }

    /// A kimi-cli session's cwd is the work dir `kimi.json` lists whose md5 names its folder.
    #[test]
    fn a_kimi_cli_session_finds_its_work_dir_by_its_folder_s_hash() {
        use md5::Digest as _;
        let root = tempfile::tempdir().unwrap();
        let hash = hex::encode(md5::Md5::digest(b"/work/app"));
        let wire_path = root.path().join(format!("sessions/{hash}/u-1/wire.jsonl"));
        std::fs::create_dir_all(wire_path.parent().unwrap()).unwrap();
        std::fs::write(&wire_path, "").unwrap();
        let file = classify(&wire_path).unwrap();
        assert_eq!(KimiParser::for_file(&file).meta.cwd, None, "no kimi.json");
        std::fs::write(
            root.path().join("kimi.json"),
            r#"{"work_dirs":[{"path":"/elsewhere"},{"path":7},{"path":"/work/app","last_session_id":"u-1"}]}"#,
        )
        .unwrap();
        assert_eq!(
            KimiParser::for_file(&file).meta.cwd.as_deref(),
            Some("/work/app")
        );
        std::fs::write(root.path().join("kimi.json"), "{not json").unwrap();
        assert_eq!(KimiParser::for_file(&file).meta.cwd, None);
    }

    /// Kimi Code records a `!` command the person ran, and its output, as context messages of
    /// origin `shell_command`; its text is escaped for the XML tags around it.
    #[test]
    fn a_bang_command_is_the_person_s_call_and_its_output() {
        let appended = |text: &str, origin: Value| {
            json!({"type":"context.append_message","time":1785613809972_i64,
            "message":{"role":"user","content":[{"type":"text","text":text}],"toolCalls":[],"origin":origin}})
        };
        let (_, out) = parse(&[
            appended(
                "<bash-input>\ngrep -c &quot;a&amp;b&quot; log\n</bash-input>",
                json!({"kind":"shell_command","phase":"input"}),
            ),
            appended(
                "<bash-stdout>3\n</bash-stdout><bash-stderr></bash-stderr>",
                json!({"kind":"shell_command","phase":"output"}),
            ),
            appended(
                "<bash-input>\nfalse\n</bash-input>",
                json!({"kind":"shell_command","phase":"input"}),
            ),
            appended(
                "<bash-stdout></bash-stdout><bash-stderr>boom</bash-stderr>",
                json!({"kind":"shell_command","phase":"output","isError":true}),
            ),
            appended("reminder", json!({"kind":"injection"})),
        ]);
        let got: Vec<_> = out
            .records
            .iter()
            .map(|r| (r.kind(), r.call_id.as_deref(), r.outcome))
            .collect();
        assert_eq!(
            got,
            [
                (RecordKind::ToolCall, Some("shell:1"), None),
                (
                    RecordKind::ToolResult,
                    Some("shell:1"),
                    Some(Outcome::Succeeded)
                ),
                (RecordKind::ToolCall, Some("shell:2"), None),
                (
                    RecordKind::ToolResult,
                    Some("shell:2"),
                    Some(Outcome::Failed)
                ),
            ]
        );
        assert_eq!(
            out.records[0].tool_input,
            Some(json!({"command":"grep -c \"a&b\" log"}))
        );
        assert_eq!(out.records[0].role.as_deref(), Some("user"));
        assert_eq!(out.records[1].text.as_deref(), Some("3"));
        assert_eq!(out.records[3].text.as_deref(), Some("boom"));
    }

    #[test]
    fn journal_layout_names_session_and_sub_agents() {
        let main = classify(Path::new(
            "/h/.kimi-code/sessions/wd_p_1/session_abc/agents/main/wire.jsonl",
        ))
        .unwrap();
        assert_eq!(main.role, FileRole::Main);
        assert_eq!(main.parent_hint.as_deref(), Some("abc"));
        let sub = classify(Path::new(
            "/h/.kimi-code/sessions/wd_p_1/session_abc/agents/agent-0/wire.jsonl",
        ))
        .unwrap();
        assert_eq!(sub.role, FileRole::Subagent);
        assert_eq!(sub.agent_id.as_deref(), Some("agent-0"));
        assert!(classify(Path::new("/h/.kimi-code/sessions/x/other.jsonl")).is_none());
        assert!(classify(Path::new("/h/x/wire.jsonl")).is_none());
    }

    #[test]
    fn loop_events_become_records_with_usage_and_outcomes() {
        let (parser, out) = parse(&[
            json!({"type":"config.update","cwd":"/r","modelAlias":"kimi-k2","time":1785613809000_i64}),
            json!({"type":"turn.prompt","input":[{"type":"text","text":"count files"}],"origin":{"kind":"user"},"time":1785613809001_i64}),
            lp(json!({"type":"content.part","part":{"type":"think","think":"hm"}})),
            lp(
                json!({"type":"tool.call","toolCallId":"W_0","name":"Write","args":{"path":"/r/a.md","content":"x"}}),
            ),
            lp(
                json!({"type":"tool.call","toolCallId":"B_0","name":"Bash","args":{"command":"cat /nope"}}),
            ),
            lp(
                json!({"type":"tool.result","toolCallId":"B_0","result":{"output":"no such file\nCommand failed with exit code: 1.","isError":true}}),
            ),
            lp(
                json!({"type":"step.end","messageId":"m1","usage":{"inputOther":10,"output":4,"inputCacheRead":6,"inputCacheCreation":1}}),
            ),
        ]);
        let m = parser.meta();
        assert_eq!(
            (m.cwd.as_deref(), m.model.as_deref()),
            (Some("/r"), Some("kimi-k2"))
        );
        assert_eq!(m.started_at.as_deref(), Some("2026-08-01T19:50:09.000Z"));
        assert_eq!(out.records[0].prompt_source, Some(PromptSource::Human));
        assert_eq!(out.records[1].kind, Some(RecordKind::Reasoning));
        assert_eq!(out.records[2].tool_kind, Some(ToolKind::FileEdit));
        assert_eq!(out.records[2].file_paths, ["/r/a.md"]);
        let result = &out.records[4];
        assert_eq!(result.tool_name.as_deref(), Some("Bash"));
        assert_eq!(result.exit_code, Some(1));
        assert_eq!(result.outcome, Some(Outcome::Failed));
        let u = out.usage[0].1;
        assert_eq!(
            (u.input, u.output, u.cache_read, u.cache_creation),
            (10, 4, 6, 1)
        );
    }

    #[test]
    fn sub_agent_briefs_are_spawned_and_wrong_types_are_counted() {
        let (parser, out) = parse(&[
            json!({"type":"turn.prompt","input":[{"type":"text","text":"<git-context>x</git-context> go"}],"origin":{"kind":"system_trigger","name":"subagent"}}),
            json!({"type": 1}),
            json!({"type":"turn.prompt","input":{"x":1},"time":"soon"}),
            lp(json!({"type":"tool.result","result":"done"})),
            lp(json!("not an object")),
            lp(json!({"type":"content.part","part":{"type":"image"}})),
            json!({"type":"brand.new"}),
        ]);
        assert_eq!(
            out.records[0].prompt_source,
            Some(PromptSource::SpawnedAgent)
        );
        let unknown = &parser.meta().unknown_types;
        assert_eq!(unknown.get("<untyped>"), Some(&1));
        assert_eq!(unknown.get("loop:<untyped>"), Some(&1));
        assert_eq!(unknown.get("content.part:image"), Some(&1));
        assert_eq!(unknown.get("brand.new"), Some(&1));
        assert_eq!(out.records.len(), 2);
        assert_eq!(out.records[1].outcome, None);
    }
}

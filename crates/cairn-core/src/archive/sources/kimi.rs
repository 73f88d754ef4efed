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
//! line pipeline reads one file per session).

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{
    FileRole, LineOutput, MAX_INPUT_STRING_BYTES, MAX_TEXT_BYTES, MAX_TOOL_OUTPUT_BYTES,
    SessionMeta, SourceParser, cap_json, cap_text, count_unknown, exit_code_in, is_system_injected,
    line_timestamp, note_timestamp, outcome_for, set_latest, set_once, str_at, text_value, u64_at,
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
/// sub-agent of it. Other `.jsonl` files are not journals.
pub fn classify(path: &Path) -> Option<FoundFile> {
    if path.file_name()? != "wire.jsonl" {
        return None;
    }
    let agent_dir = path.parent()?;
    let agents = agent_dir.parent()?;
    if agents.file_name()? != "agents" {
        return None;
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
const KNOWN_SILENT_TYPES: [&str; 15] = [
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
    "context.append_message",
    "step.begin",
];

#[derive(Debug, Default, Serialize, Deserialize)]
pub struct KimiParser {
    meta: SessionMeta,
    /// call id → tool name, for calls whose result has not been seen yet.
    pending_calls: BTreeMap<String, String>,
}

impl KimiParser {
    pub fn resume(saved: Option<&Value>) -> Result<Self, serde_json::Error> {
        let mut parser = match saved {
            Some(state) => serde_json::from_value(state.clone())?,
            None => KimiParser::default(),
        };
        parser
            .meta
            .provider
            .get_or_insert_with(|| "kimi".to_owned());
        Ok(parser)
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
                    self.pending_calls.insert(id.clone(), name.clone());
                }
                let display_cwd = str_at(ev, &["display", "cwd"]);
                set_once(&mut self.meta.cwd, display_cwd);
                let mut input = ev.get("args").filter(|a| !a.is_null()).cloned();
                let tool_kind = tool_kind(&name);
                let file_paths = match (tool_kind, &input) {
                    (ToolKind::FileEdit, Some(i)) => ["path", "file_path"]
                        .iter()
                        .find_map(|k| str_at(i, &[k]))
                        .map(|p| vec![p.to_owned()])
                        .unwrap_or_default(),
                    _ => Vec::new(),
                };
                if let Some(i) = input.as_mut() {
                    cap_json(i, MAX_INPUT_STRING_BYTES);
                }
                out.records.push(Record {
                    kind: Some(RecordKind::ToolCall),
                    source_event_kind: "kimi:tool.call".to_owned(),
                    tool_kind: Some(tool_kind),
                    tool_name: Some(name),
                    tool_input: input,
                    call_id,
                    file_paths,
                    cwd: display_cwd.map(str::to_owned).or(base.cwd.clone()),
                    ..assistant(base)
                });
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
                let failed = result.get("isError").and_then(Value::as_bool) == Some(true);
                let exit_code = text.as_deref().and_then(exit_code_text);
                let outcome = match exit_code {
                    Some(code) => Some(outcome_for(code, text.as_deref().unwrap_or(""))),
                    None if failed => Some(Outcome::Failed),
                    None if result.get("isError").is_some() => Some(Outcome::Succeeded),
                    None => None,
                };
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

/// Epoch milliseconds as RFC 3339 (UTC, milliseconds); `None` when out of range.
fn ms_to_rfc3339(ms: i64) -> Option<String> {
    let ts = jiff::Timestamp::from_millisecond(ms).ok()?;
    Some(ts.strftime("%Y-%m-%dT%H:%M:%S%.3fZ").to_string())
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
        let mut parser = KimiParser::resume(None).unwrap();
        let mut out = LineOutput::default();
        for line in lines {
            parser.parse_line(&line.to_string(), &mut out).unwrap();
        }
        (parser, out)
    }

    fn lp(event: Value) -> Value {
        json!({"type":"context.append_loop_event","event":event,"time":1785613809972_i64})
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

//! Cline, Roo Code and Kilo Code (before its OpenCode rewrite, whose `kilo.db` the OpenCode reader
//! reads: [`super::opencode::KILO`]): three VS Code extensions of one
//! lineage that keep each task in a folder of JSON documents rewritten in place, read as the
//! [`ReadKind::Document`](super::ReadKind::Document) kind. One parser serves the three; each has
//! its own agent name, extension folder and override variable.
//!
//! Layout: `<VS Code user dir>/globalStorage/<extension id>/tasks/<task id>/` holding
//! `ui_messages.json` (the source: `ClineMessage[]`, one entry per event the panel shows),
//! `api_conversation_history.json` (the model's view of the same conversation: not read, it
//! repeats what the UI log says without times), `task_metadata.json` (`model_usage[]`,
//! `files_in_context[]`) and, for Roo, `history_item.json` (`task`, `workspace`, `parentTaskId`,
//! token totals). The two small files are read beside the log as sidecars.
//!
//! A UI entry is `{ts (ms), type: "say"|"ask", say?|ask?, text?, reasoning?, partial?,
//! modelInfo?}`; it is a keyed unit under its `ts` (the n-th entry of one `ts` gets `#n`). An
//! entry still `partial` is left for the rewrite that completes it. Tool uses are `say|ask:"tool"`
//! whose text is JSON `{tool, path, diff|content, …}`; commands are `ask:"command"` (the command)
//! followed by `command_output` entries; MCP calls `use_mcp_server` then `mcp_server_response`;
//! each API request is `say:"api_req_started"` whose text JSON carries its tokens. Formats from
//! the extensions' public source (Apache-2.0) and `reference/formats.md` A.9: no real task folder
//! with a licence to copy was found, so the fixtures are schema samples (SOURCES.md says so).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::database::epoch_time;
use super::{
    DocumentParser, FileRole, KeyedUnits, LineOutput, MAX_INPUT_STRING_BYTES, MAX_TEXT_BYTES,
    SessionMeta, Shallow, ToolOutput, UnitParser, cap_json, cap_text, count_unknown,
    is_system_injected, note_timestamp, set_latest, set_once, str_at,
};
use crate::archive::discover::{AppFolder, DirOrigin, FoundFile, app_folder};
use crate::archive::{Agent, PromptSource, Record, RecordKind, TokenUsage, ToolKind};

/// The source file of a task.
pub const UI_MESSAGES: &str = "ui_messages.json";

/// The task files read beside the log (small; a longer one is skipped).
const SIDECARS: [&str; 2] = ["task_metadata.json", "history_item.json"];
const MAX_SIDECAR_BYTES: u64 = 8 * 1024 * 1024;

/// The editors whose user folders may hold the extensions' storage (VS Code and its forks).
const EDITORS: [&str; 5] = ["Code", "Code - Insiders", "VSCodium", "Cursor", "Windsurf"];

/// One extension of the lineage: the agent, its extension id (the folder in `globalStorage`)
/// and the variable naming its storage folder instead.
struct Extension {
    agent: Agent,
    id: &'static str,
    env: &'static str,
    /// A home-relative folder its command-line edition keeps tasks in, if it has one.
    cli: Option<&'static str>,
}

const EXTENSIONS: [Extension; 3] = [
    Extension {
        agent: Agent::Cline,
        id: "saoudrizwan.claude-dev",
        env: "CLINE_DIR",
        cli: Some(".cline/data"),
    },
    Extension {
        agent: Agent::Roo,
        id: "rooveterinaryinc.roo-cline",
        env: "ROOCODE_DIR",
        cli: None,
    },
    Extension {
        agent: Agent::Kilo,
        id: "kilocode.kilo-code",
        env: "KILO_LEGACY_DIR",
        cli: None,
    },
];

fn extension(agent: Agent) -> Option<&'static Extension> {
    EXTENSIONS.iter().find(|e| e.agent == agent)
}

/// Whether `agent` is one this source reads.
pub fn is_cline_family(agent: Agent) -> bool {
    extension(agent).is_some()
}

/// The override variable of `agent` (`CLINE_DIR`, `ROOCODE_DIR`, `KILO_LEGACY_DIR`).
pub fn env_var(agent: Agent) -> Option<&'static str> {
    extension(agent).map(|e| e.env)
}

/// Where `agent` keeps its tasks: the folder its variable names (the extension's storage
/// folder, holding `tasks/`), else the extension's folder in VS Code's `globalStorage` (Linux
/// `~/.config/Code/User`, `$XDG_CONFIG_HOME` honoured; macOS `~/Library/Application Support/Code/User`),
/// plus the same folder of every other editor of the family found on this machine.
pub fn locations(
    agent: Agent,
    env: impl Fn(&str) -> Option<PathBuf>,
    home: Option<&Path>,
) -> Vec<(PathBuf, DirOrigin)> {
    locations_on(agent, &env, home, cfg!(target_os = "macos"), &|p| {
        p.is_dir()
    })
}

fn locations_on(
    agent: Agent,
    env: &impl Fn(&str) -> Option<PathBuf>,
    home: Option<&Path>,
    macos: bool,
    exists: &dyn Fn(&Path) -> bool,
) -> Vec<(PathBuf, DirOrigin)> {
    let Some(ext) = extension(agent) else {
        return Vec::new();
    };
    if let Some(dir) = env(ext.env) {
        return vec![(dir, DirOrigin::Env)];
    }
    let config = app_folder(env, home, macos, AppFolder::Config);
    let mut out = Vec::new();
    if let Some(config) = config {
        for (i, editor) in EDITORS.iter().enumerate() {
            let dir = config.join(editor).join("User/globalStorage").join(ext.id);
            // VS Code's folder is always listed (doctor says when it is absent); the forks'
            // only when there.
            if i == 0 || exists(&dir) {
                out.push((dir, DirOrigin::Default));
            }
        }
    }
    // Its command line and 4.x editions: Cline's own `CLINE_DATA_DIR`, else `~/.cline/data`
    // (`tasks/` of the 3.x CLI, `sessions/` of the SDK).
    if agent == Agent::Cline
        && let Some(dir) = env(super::cline_sdk::ENV_DATA)
    {
        out.push((dir, DirOrigin::Env));
    } else if let (Some(cli), Some(home)) = (ext.cli, home) {
        let dir = home.join(cli);
        if exists(&dir) {
            out.push((dir, DirOrigin::Default));
        }
    }
    out
}

/// A task's log: `tasks/<task id>/ui_messages.json`.
pub fn classify(agent: Agent, path: &Path) -> Option<FoundFile> {
    if !is_cline_family(agent) || path.file_name()? != UI_MESSAGES {
        return None;
    }
    let task = path.parent()?;
    if task.parent()?.file_name()? != "tasks" {
        return None;
    }
    Some(FoundFile {
        agent,
        role: FileRole::Main,
        path: path.to_owned(),
        parent_hint: task.file_name()?.to_str().map(str::to_owned),
        agent_id: None,
    })
}

/// The agent whose task log `path` is, by the extension folder it lies in (for the hook and
/// the watcher, given only a path); a Cline SDK session's messages under `.cline/`.
pub fn owner(path: &Path) -> Option<Agent> {
    if super::cline_sdk::is_messages_file(path) && path.to_string_lossy().contains("/.cline/") {
        return Some(Agent::Cline);
    }
    if path.file_name()? != UI_MESSAGES {
        return None;
    }
    let s = path.to_string_lossy();
    EXTENSIONS
        .iter()
        .find(|e| s.contains(&format!("/{}/tasks/", e.id)))
        .map(|e| e.agent)
}

/// The task files read beside `log` (whether or not they exist): a change to one is a change of
/// the task.
pub fn sidecars_of(log: &Path) -> Vec<PathBuf> {
    log.parent()
        .map(|dir| SIDECARS.iter().map(|name| dir.join(name)).collect())
        .unwrap_or_default()
}

/// The task log a changed sidecar belongs to (for the watcher): a task's, or a Cline SDK
/// session's messages for its manifest (`<id>/<id>.json`).
pub fn log_of_sidecar(path: &Path) -> Option<PathBuf> {
    let name = path.file_name()?.to_str()?;
    if SIDECARS.contains(&name) {
        return Some(path.with_file_name(UI_MESSAGES));
    }
    let folder = path.parent()?.file_name()?.to_str()?;
    let messages = path.with_file_name(format!("{folder}.messages.json"));
    (name == format!("{folder}.json") && super::cline_sdk::is_messages_file(&messages))
        .then_some(messages)
}

/// The task files beside the log, read (bounded) and added to the document as
/// `{"ui_messages": <the log>, "<sidecar name>": <its JSON>}` (the log is `null` there when it
/// is a list: its entries are read one at a time, [`super::Shallow`]); a sidecar missing, too
/// long or not JSON is left out. Everything is redacted with the document.
pub fn with_sidecars(log: &Path, doc: Value) -> Value {
    let mut out = serde_json::Map::new();
    out.insert("ui_messages".to_owned(), doc);
    let Some(dir) = log.parent() else {
        return Value::Object(out);
    };
    for name in SIDECARS {
        if let Some(v) = super::read_small_json(&dir.join(name), MAX_SIDECAR_BYTES) {
            out.insert(name.to_owned(), v);
        }
    }
    Value::Object(out)
}

/// The lineage's tool names (the `tool` of a `say|ask:"tool"` entry) in Cairn's kinds.
pub fn tool_kind(name: &str) -> ToolKind {
    match name {
        "execute_command" => ToolKind::Exec,
        "editedExistingFile" | "appliedDiff" | "newFileCreated" | "fileDeleted"
        | "searchAndReplace" | "insertContent" | "writeToFile" | "applyDiff" => ToolKind::FileEdit,
        "newTask" | "use_subagents" => ToolKind::SubAgent,
        "webFetch" | "webSearch" | "browser_action" => ToolKind::WebSearch,
        "readFile"
        | "listFilesTopLevel"
        | "listFilesRecursive"
        | "listCodeDefinitionNames"
        | "searchFiles"
        | "codebaseSearch"
        | "fetchInstructions"
        | "updateTodoList"
        | "switchMode"
        | "finishTask"
        | "summarizeTask"
        | "useSkill" => ToolKind::Housekeeping,
        other => ToolKind::of(other),
    }
}

/// Entry kinds known to carry nothing to keep as a record (progress, retries, checkpoints).
const QUIET: [&str; 18] = [
    "api_req_finished",
    "api_req_retried",
    "api_req_retry_delayed",
    "api_req_deleted",
    "deleted_api_reqs",
    "checkpoint_created",
    "shell_integration_warning",
    "task_progress",
    "resume_task",
    "resume_completed_task",
    "load_mcp_documentation",
    "mcp_server_request_started",
    "auto_approval_max_req_reached",
    "codebase_search_result",
    "browser_action_launch_result",
    "hook_status",
    "hook_output_stream",
    "conditional_rules_applied",
];

/// Where a command or MCP result entry finds its call: the key of the entry that made the call
/// (set by [`ClineParser::split`], which sees the whole log).
const CALL_OF: &str = "cairn:call";

/// What the parser keeps between reads.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct ClineParser {
    agent: Option<Agent>,
    meta: SessionMeta,
}

impl ClineParser {
    /// A fresh parser of the task whose log is `path` (its folder names the task).
    pub fn for_file(agent: Agent, path: &Path) -> Self {
        let mut p = ClineParser {
            agent: Some(agent),
            ..ClineParser::default()
        };
        let task = path
            .parent()
            .and_then(Path::file_name)
            .and_then(|n| n.to_str());
        set_once(&mut p.meta.session_id, task);
        p
    }

    pub fn resume(agent: Agent, saved: Option<&Value>) -> Result<Self, serde_json::Error> {
        let mut p: ClineParser = match saved {
            Some(state) => serde_json::from_value(state.clone())?,
            None => ClineParser::default(),
        };
        p.agent = Some(agent);
        Ok(p)
    }

    fn prefix(&self) -> &'static str {
        self.agent.map_or("cline", Agent::as_str)
    }

    /// Count a shape this parser does not know, under the agent's name.
    fn unknown(&mut self, what: &str) {
        let key = format!("{}:{what}", self.prefix());
        count_unknown(&mut self.meta, &key);
    }

    fn tool_call(
        &mut self,
        name: String,
        mut input: Option<Value>,
        paths: Vec<String>,
        base: &Record,
        out: &mut LineOutput,
    ) {
        let kind = tool_kind(&name);
        if let Some(v) = input.as_mut() {
            cap_json(v, MAX_INPUT_STRING_BYTES);
        }
        out.records.push(Record {
            kind: Some(RecordKind::ToolCall),
            key: Some("call".to_owned()),
            source_event_kind: format!("{}:tool", self.prefix()),
            role: Some("assistant".to_owned()),
            tool_name: Some(name),
            tool_kind: Some(kind),
            tool_input: input,
            call_id: base.unit.clone(),
            file_paths: paths,
            ..base.clone()
        });
    }

    fn tool_result(
        &self,
        name: &str,
        call: Option<&str>,
        text: &str,
        base: &Record,
        out: &mut LineOutput,
    ) {
        let output = ToolOutput {
            name: Some(name.to_owned()),
            call_id: call.map(str::to_owned),
            text: (!text.is_empty()).then(|| text.to_owned()),
            ..ToolOutput::default()
        };
        out.records.push(output.record(
            format!("{}:tool_result", self.prefix()),
            tool_kind,
            Record {
                key: Some("result".to_owned()),
                role: Some("tool".to_owned()),
                ..base.clone()
            },
        ));
    }

    fn message(&self, role: &str, what: &str, text: &str, base: &Record, out: &mut LineOutput) {
        if text.trim().is_empty() {
            return;
        }
        let prompt_source = (role == "user").then(|| {
            if is_system_injected(text) {
                PromptSource::SystemInjected
            } else if what == "task" && self.meta.parent_session_id.is_some() {
                // A sub-task's opening prompt is written by the task that started it.
                PromptSource::SpawnedAgent
            } else {
                PromptSource::Human
            }
        });
        out.records.push(Record {
            kind: Some(RecordKind::Message),
            key: Some("text".to_owned()),
            source_event_kind: format!("{}:{what}", self.prefix()),
            role: Some(role.to_owned()),
            prompt_source,
            text: Some(cap_text(text.to_owned(), MAX_TEXT_BYTES)),
            ..base.clone()
        });
    }

    fn event(&self, what: &str, text: &str, base: &Record, out: &mut LineOutput) {
        let text = if text.trim().is_empty() { what } else { text };
        out.records.push(Record {
            kind: Some(RecordKind::Event),
            key: Some("event".to_owned()),
            source_event_kind: format!("{}:{what}", self.prefix()),
            text: Some(cap_text(text.to_owned(), MAX_TEXT_BYTES)),
            ..base.clone()
        });
    }

    /// A `say|ask:"tool"` entry: JSON naming the tool and its path, diff or content.
    fn tool_entry(&mut self, text: &str, base: &Record, out: &mut LineOutput) {
        let Ok(v) = serde_json::from_str::<Value>(text) else {
            self.unknown("tool-not-json");
            return;
        };
        let name = str_at(&v, &["tool"])
            .filter(|t| !t.is_empty())
            .unwrap_or("unknown")
            .to_owned();
        let paths = match (tool_kind(&name), str_at(&v, &["path"])) {
            (ToolKind::FileEdit, Some(p)) if !p.is_empty() => vec![p.to_owned()],
            _ => Vec::new(),
        };
        self.tool_call(name, Some(v), paths, base, out);
    }

    /// The cwd an API request names: its `<environment_details>` say
    /// `Current Working Directory (<path>)`, or Cline's `<cwd>` tag.
    fn learn_cwd(&mut self, request: &str) {
        let found = request
            .find("Current Working Directory (")
            .map(|i| &request[i + "Current Working Directory (".len()..])
            .and_then(|rest| rest.split_once(')').map(|(p, _)| p))
            .or_else(|| {
                let rest = &request[request.find("<cwd>")? + 5..];
                rest.split_once("</cwd>").map(|(p, _)| p)
            })
            .map(str::trim)
            .filter(|p| p.starts_with('/') && !p.contains('\n'));
        set_once(&mut self.meta.cwd, found);
    }

    fn api_request(&mut self, key: &str, text: &str, base: &Record, out: &mut LineOutput) {
        let Ok(v) = serde_json::from_str::<Value>(text) else {
            return;
        };
        if let Some(request) = str_at(&v, &["request"]) {
            self.learn_cwd(request);
        }
        let n = |k: &str| v.get(k).and_then(Value::as_u64).unwrap_or(0);
        let usage = TokenUsage {
            input: n("tokensIn"),
            output: n("tokensOut"),
            cache_creation: n("cacheWrites"),
            cache_read: n("cacheReads"),
            ..TokenUsage::default()
        };
        if usage != TokenUsage::default() {
            out.usage.push((key.to_owned(), usage));
        }
        // A request the person cancelled or that failed while streaming.
        if let Some(why) = str_at(&v, &["streamingFailedMessage"])
            .or_else(|| str_at(&v, &["cancelReason"]))
            .filter(|w| !w.is_empty())
        {
            self.event("api_req_ended", why, base, out);
        }
    }

    fn entry(&mut self, key: &str, m: &Value, out: &mut LineOutput) {
        let ts = m.get("ts").and_then(Value::as_i64).and_then(epoch_time);
        note_timestamp(&mut self.meta, ts.as_deref());
        set_latest(&mut self.meta.model, str_at(m, &["modelInfo", "modelId"]));
        set_latest(
            &mut self.meta.provider,
            str_at(m, &["modelInfo", "providerId"]),
        );
        let base = Record {
            timestamp: ts,
            message_id: Some(key.to_owned()),
            unit: Some(key.to_owned()),
            cwd: self.meta.cwd.clone(),
            ..Record::default()
        };
        let kind = str_at(m, &["type"]).unwrap_or("");
        let what = match kind {
            "say" => str_at(m, &["say"]),
            "ask" => str_at(m, &["ask"]),
            _ => None,
        };
        let Some(what) = what else {
            self.unknown(&format!("entry:{kind}"));
            return;
        };
        let text = str_at(m, &["text"]).unwrap_or("");
        let call = str_at(m, &[CALL_OF]);
        if let Some(r) = str_at(m, &["reasoning"]).filter(|r| !r.trim().is_empty()) {
            out.records.push(Record {
                kind: Some(RecordKind::Reasoning),
                key: Some("reasoning".to_owned()),
                source_event_kind: format!("{}:reasoning", self.prefix()),
                role: Some("assistant".to_owned()),
                text: Some(cap_text(r.to_owned(), MAX_TEXT_BYTES)),
                ..base.clone()
            });
        }
        match (kind, what) {
            ("say", "task") | ("say", "user_feedback") => {
                self.message("user", what, text, &base, out);
            }
            ("say", "text") | (_, "completion_result") => {
                self.message("assistant", what, text, &base, out);
            }
            ("ask", "followup" | "plan_mode_respond") | ("say", "plan_mode_respond") => {
                // A question or plan for the person: JSON `{question|response, options}` or text.
                let shown = serde_json::from_str::<Value>(text).ok().and_then(|v| {
                    str_at(&v, &["question"])
                        .or_else(|| str_at(&v, &["response"]))
                        .map(str::to_owned)
                });
                self.message(
                    "assistant",
                    what,
                    shown.as_deref().unwrap_or(text),
                    &base,
                    out,
                );
            }
            ("say", "reasoning") => {
                if !text.trim().is_empty() {
                    out.records.push(Record {
                        kind: Some(RecordKind::Reasoning),
                        key: Some("reasoning".to_owned()),
                        source_event_kind: format!("{}:reasoning", self.prefix()),
                        role: Some("assistant".to_owned()),
                        text: Some(cap_text(text.to_owned(), MAX_TEXT_BYTES)),
                        ..base
                    });
                }
            }
            (_, "tool") => self.tool_entry(text, &base, out),
            (_, "command") => {
                let command = text.trim_end_matches("REQ_APP").trim();
                if !command.is_empty() {
                    self.tool_call(
                        "execute_command".to_owned(),
                        Some(serde_json::json!({ "command": command })),
                        Vec::new(),
                        &base,
                        out,
                    );
                }
            }
            (_, "command_output") => {
                self.tool_result("execute_command", call, text, &base, out);
            }
            (_, "use_mcp_server") => {
                let v = serde_json::from_str::<Value>(text).ok();
                let name = v
                    .as_ref()
                    .and_then(|v| {
                        let server = str_at(v, &["serverName"])?;
                        let tool = str_at(v, &["toolName"]).or_else(|| str_at(v, &["uri"]))?;
                        Some(format!("mcp__{server}__{tool}"))
                    })
                    .unwrap_or_else(|| "use_mcp_server".to_owned());
                self.tool_call(name, v, Vec::new(), &base, out);
            }
            ("say", "mcp_server_response") => {
                self.tool_result("use_mcp_server", call, text, &base, out);
            }
            (_, "browser_action_launch") | ("say", "browser_action") => {
                let input = serde_json::from_str::<Value>(text)
                    .unwrap_or_else(|_| serde_json::json!({ "url": text }));
                self.tool_call(
                    "browser_action".to_owned(),
                    Some(input),
                    Vec::new(),
                    &base,
                    out,
                );
            }
            ("say", "browser_action_result") => {
                let v = serde_json::from_str::<Value>(text).ok();
                let shown = v
                    .as_ref()
                    .and_then(|v| str_at(v, &["logs"]).or_else(|| str_at(v, &["currentUrl"])))
                    .unwrap_or("");
                self.tool_result("browser_action", call, shown, &base, out);
            }
            ("say", "subtask_result") => self.tool_result("newTask", call, text, &base, out),
            // Cline's sub-agents (3.6x): their prompts, then one status entry rewritten until
            // they end (its items' results), then their tokens.
            (_, "use_subagents") => {
                let input = serde_json::from_str::<Value>(text)
                    .unwrap_or_else(|_| serde_json::json!({ "prompts": [text] }));
                self.tool_call(
                    "use_subagents".to_owned(),
                    Some(input),
                    Vec::new(),
                    &base,
                    out,
                );
            }
            ("say", "subagent") => {
                let v = serde_json::from_str::<Value>(text).unwrap_or(Value::Null);
                if !matches!(str_at(&v, &["status"]), Some("completed" | "failed")) {
                    return;
                }
                let results: Vec<&str> = v
                    .get("items")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .filter_map(|i| str_at(i, &["result"]).or_else(|| str_at(i, &["error"])))
                    .filter(|r| !r.trim().is_empty())
                    .collect();
                self.tool_result("use_subagents", call, &results.join("\n\n"), &base, out);
            }
            ("say", "subagent_usage") => self.api_request(key, text, &base, out),
            ("say", "command_permission_denied") => self.event(what, text, &base, out),
            ("say", "api_req_started") => self.api_request(key, text, &base, out),
            ("say", "condense_context" | "condense") | ("ask", "condense") => {
                // Roo keeps the summary that replaced the context in `contextCondense`.
                let summary = str_at(m, &["contextCondense", "summary"])
                    .filter(|s| !s.trim().is_empty())
                    .unwrap_or("context condensed");
                out.records.push(Record {
                    kind: Some(RecordKind::Event),
                    key: Some("event".to_owned()),
                    source_event_kind: format!("{}:{what}", self.prefix()),
                    text: Some(cap_text(summary.to_owned(), MAX_TEXT_BYTES)),
                    is_compaction: true,
                    ..base
                });
            }
            ("say", "error" | "diff_error" | "clineignore_error" | "rooignore_error")
            | ("ask", "api_req_failed" | "mistake_limit_reached") => {
                self.event(what, text, &base, out);
            }
            ("say", "user_feedback_diff") => self.event(what, text, &base, out),
            (_, q) if QUIET.contains(&q) => {}
            (k, other) => self.unknown(&format!("{k}:{other}")),
        }
    }
}

impl DocumentParser for ClineParser {
    /// The task log is the list itself; [`with_sidecars`] files it under `ui_messages`.
    fn units_at(&self) -> &'static [&'static str] {
        &[]
    }

    fn split<'d>(&self, doc: Shallow<'d>) -> (Value, KeyedUnits<'d>) {
        let Shallow { doc, units } = doc;
        let mut header = match doc {
            Value::Object(mut map) => {
                map.remove("ui_messages");
                map
            }
            _ => serde_json::Map::new(),
        };
        header.insert(
            "taskId".to_owned(),
            self.meta
                .session_id
                .clone()
                .map_or(Value::Null, Value::String),
        );
        let Some(entries) = units else {
            header.insert("cairn:log".to_owned(), Value::from("not an array"));
            return (Value::Object(header), Box::new(std::iter::empty()));
        };
        let mut seen: std::collections::BTreeMap<String, u32> = Default::default();
        // The last command, MCP use, browser action, sub-task and sub-agents started: where a
        // result entry that follows finds its call.
        let (mut command, mut mcp, mut browser, mut task, mut subagents) =
            (None, None, None, None, None);
        let units = entries.enumerate().filter_map(move |(i, mut entry)| {
            // Still streaming: the rewrite that completes it comes later.
            if entry.get("partial").and_then(Value::as_bool) == Some(true) {
                return None;
            }
            let ts = match entry.get("ts") {
                Some(Value::Number(n)) => n.to_string(),
                _ => format!("#{i}"),
            };
            let n = seen.entry(ts.clone()).or_insert(0);
            *n += 1;
            let key = if *n == 1 { ts } else { format!("{ts}#{n}") };
            let what = str_at(&entry, &["say"])
                .or_else(|| str_at(&entry, &["ask"]))
                .unwrap_or("")
                .to_owned();
            let call = match what.as_str() {
                "command" => {
                    command = Some(key.clone());
                    None
                }
                "use_mcp_server" => {
                    mcp = Some(key.clone());
                    None
                }
                "browser_action_launch" | "browser_action" => {
                    browser = Some(key.clone());
                    None
                }
                "tool" if str_at(&entry, &["text"]).is_some_and(|t| t.contains("\"newTask\"")) => {
                    task = Some(key.clone());
                    None
                }
                "use_subagents" => {
                    subagents = Some(key.clone());
                    None
                }
                "subagent" => subagents.clone(),
                "command_output" => command.clone(),
                "mcp_server_response" => mcp.clone(),
                "browser_action_result" => browser.clone(),
                "subtask_result" => task.clone(),
                _ => None,
            };
            if let (Some(call), Value::Object(map)) = (call, &mut entry) {
                map.insert(CALL_OF.to_owned(), Value::String(call));
            }
            Some((key, entry))
        });
        (Value::Object(header), Box::new(units))
    }
}

impl UnitParser for ClineParser {
    fn header(&mut self, h: &Value, _out: &mut LineOutput) {
        if h.get("cairn:log").is_some() {
            self.unknown("log-not-an-array");
        }
        if let Some(item) = h.get("history_item.json") {
            set_latest(&mut self.meta.title, str_at(item, &["task"]));
            set_once(&mut self.meta.cwd, str_at(item, &["workspace"]));
            if let Some(parent) = str_at(item, &["parentTaskId"]).filter(|p| !p.is_empty()) {
                set_once(&mut self.meta.parent_session_id, Some(parent));
                set_once(&mut self.meta.relation, Some("subagent"));
            }
            set_once(&mut self.meta.thread_source, str_at(item, &["mode"]));
        }
        if let Some(usage) = h
            .get("task_metadata.json")
            .and_then(|m| m.get("model_usage"))
            .and_then(Value::as_array)
            && let Some(last) = usage.last()
        {
            if self.meta.model.is_none() {
                set_latest(&mut self.meta.model, str_at(last, &["model_id"]));
            }
            set_once(
                &mut self.meta.provider,
                str_at(last, &["model_provider_id"]),
            );
        }
    }

    fn unit(&mut self, key: &str, unit: &Value, out: &mut LineOutput) {
        if unit.is_object() {
            self.entry(key, unit, out);
        } else {
            self.unknown("entry-not-an-object");
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
    use crate::archive::Outcome;
    use crate::archive::sources::document::split_value;
    use serde_json::json;

    #[test]
    fn each_extension_has_its_folders_and_variable() {
        let none = |_: &str| None;
        let home = Some(Path::new("/home/u"));
        let linux = locations_on(Agent::Cline, &none, home, false, &|_| false);
        assert_eq!(
            linux,
            vec![(
                PathBuf::from("/home/u/.config/Code/User/globalStorage/saoudrizwan.claude-dev"),
                DirOrigin::Default
            )]
        );
        let mac = locations_on(Agent::Roo, &none, Some(Path::new("/Users/u")), true, &|p| {
            p.to_string_lossy().contains("/Cursor/")
        });
        assert_eq!(
            mac.iter().map(|(p, _)| p.clone()).collect::<Vec<_>>(),
            vec![
                PathBuf::from(
                    "/Users/u/Library/Application Support/Code/User/globalStorage/rooveterinaryinc.roo-cline"
                ),
                PathBuf::from(
                    "/Users/u/Library/Application Support/Cursor/User/globalStorage/rooveterinaryinc.roo-cline"
                ),
            ]
        );
        let env = |k: &str| (k == "KILO_LEGACY_DIR").then(|| PathBuf::from("/k"));
        assert_eq!(
            locations_on(Agent::Kilo, &env, home, false, &|_| true),
            vec![(PathBuf::from("/k"), DirOrigin::Env)]
        );
        assert!(locations_on(Agent::Claude, &none, home, false, &|_| true).is_empty());
        let p = Path::new("/x/kilocode.kilo-code/tasks/171/ui_messages.json");
        assert_eq!(owner(p), Some(Agent::Kilo));
        assert_eq!(
            classify(Agent::Kilo, p).unwrap().parent_hint.as_deref(),
            Some("171")
        );
        assert!(classify(Agent::Kilo, Path::new("/x/tasks/171/task_metadata.json")).is_none());
        assert!(classify(Agent::Kilo, Path::new("/x/other/171/ui_messages.json")).is_none());
    }

    #[test]
    fn results_find_their_calls_and_partial_entries_wait() {
        let p = ClineParser::for_file(Agent::Cline, Path::new("/t/tasks/17/ui_messages.json"));
        let doc = json!({"ui_messages": [
            {"ts": 1, "type": "ask", "say": null, "ask": "command", "text": "cargo test"},
            {"ts": 2, "type": "ask", "ask": "command_output", "text": "ok"},
            {"ts": 2, "type": "say", "say": "text", "text": "same ts"},
            {"ts": 3, "type": "say", "say": "text", "text": "stream", "partial": true}
        ]});
        let (header, units) = split_value(&p, &doc, &["ui_messages"]);
        assert_eq!(header["taskId"], json!("17"));
        let keys: Vec<&str> = units.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(keys, ["1", "2", "2#2"]);
        assert_eq!(units[1].1[CALL_OF], json!("1"));
    }

    #[test]
    fn entries_of_unexpected_shapes_are_counted_never_fatal() {
        let mut p = ClineParser::resume(Agent::Roo, None).unwrap();
        let mut out = LineOutput::default();
        let (h, units) = split_value(
            &p,
            &json!({"ui_messages": {"not": "an array"}}),
            &["ui_messages"],
        );
        assert!(units.is_empty());
        p.header(&h, &mut out);
        p.unit("a", &json!([1]), &mut out);
        p.unit(
            "b",
            &json!({"ts": "x", "type": "say", "say": "tool", "text": "{"}),
            &mut out,
        );
        p.unit(
            "c",
            &json!({"ts": 5, "type": "say", "say": "brand_new"}),
            &mut out,
        );
        p.unit("d", &json!({"type": 7}), &mut out);
        p.unit(
            "e",
            &json!({"ts": 6, "type": "say", "say": "api_req_started", "text": "[]"}),
            &mut out,
        );
        assert!(out.records.is_empty() && out.usage.is_empty());
        let u = &p.meta().unknown_types;
        for k in [
            "roo:log-not-an-array",
            "roo:entry-not-an-object",
            "roo:tool-not-json",
            "roo:say:brand_new",
            "roo:entry:",
        ] {
            assert_eq!(u.get(k), Some(&1), "{k}: {u:?}");
        }
    }

    #[test]
    fn the_cwd_comes_from_the_request_s_environment() {
        let mut p = ClineParser::default();
        p.learn_cwd("<task>x</task>\n# Current Working Directory (/home/dev/app) Files\nsrc/");
        assert_eq!(p.meta().cwd.as_deref(), Some("/home/dev/app"));
        let mut q = ClineParser::default();
        q.learn_cwd("Current Working Directory (not/absolute)");
        q.learn_cwd("<cwd>/w</cwd>");
        assert_eq!(q.meta().cwd.as_deref(), Some("/w"));
    }

    #[test]
    fn a_failed_command_has_its_exit_code() {
        let mut p = ClineParser::resume(Agent::Cline, None).unwrap();
        let mut out = LineOutput::default();
        p.unit(
            "9",
            &json!({"ts": 1754331270000_i64, "type": "ask", "ask": "command_output",
                    "text": "error[E0432]\nCommand exited with code 101", CALL_OF: "8"}),
            &mut out,
        );
        let r = &out.records[0];
        assert_eq!(r.call_id.as_deref(), Some("8"));
        assert_eq!(r.exit_code, Some(101));
        assert_eq!(r.outcome, Some(Outcome::Failed));
        assert_eq!(r.timestamp.as_deref(), Some("2025-08-04T18:14:30Z"));
    }
}

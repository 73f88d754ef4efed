//! The session archive: transcript files in, redacted records out, stored in SQLite.
//!
//! Data flows one way: [`sources`] discover transcript files and turn each raw line into
//! [`Record`]s; [`redact`] (with the rule table in [`secrets`]) removes secrets from every line
//! *before* it is parsed, so nothing downstream ever sees one; [`capture`] runs that pipeline
//! incrementally from a byte offset under a cross-process lock and writes the result through
//! [`store`], while [`retain`] keeps a compressed, redacted copy of every source file.
//!
//! This module knows nothing of git, recall or insights.

pub mod atif;
pub mod capture;
pub mod discover;
pub mod encoded;
pub mod forget;
pub mod json_text;
pub mod jsonl;
pub mod project;
pub mod rebuild;
pub mod recognise;
pub mod redact;
pub(crate) mod rekey;
pub mod retain;
pub mod retention;
pub mod secrets;
pub mod sources;
pub mod store;
pub(crate) mod swaps;
pub mod tool_input;

use serde::{Deserialize, Serialize};

pub use crate::agent::Agent;

/// What a record is. agentlog's three kinds plus reasoning (thinking) and events
/// (compaction boundaries, errors and other system lines with text).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "snake_case")]
pub enum RecordKind {
    Message,
    ToolCall,
    ToolResult,
    Reasoning,
    Event,
}

impl RecordKind {
    pub fn as_str(self) -> &'static str {
        match self {
            RecordKind::Message => "message",
            RecordKind::ToolCall => "tool_call",
            RecordKind::ToolResult => "tool_result",
            RecordKind::Reasoning => "reasoning",
            RecordKind::Event => "event",
        }
    }

    pub fn parse(s: &str) -> Option<RecordKind> {
        Some(match s {
            "message" => RecordKind::Message,
            "tool_call" => RecordKind::ToolCall,
            "tool_result" => RecordKind::ToolResult,
            "reasoning" => RecordKind::Reasoning,
            "event" => RecordKind::Event,
            _ => return None,
        })
    }
}

/// Who wrote a user-role message (agentlog's `prompt_source`). Only `human` opens a turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "snake_case")]
pub enum PromptSource {
    Human,
    SpawnedAgent,
    SystemInjected,
}

impl PromptSource {
    pub fn as_str(self) -> &'static str {
        match self {
            PromptSource::Human => "human",
            PromptSource::SpawnedAgent => "spawned_agent",
            PromptSource::SystemInjected => "system_injected",
        }
    }

    pub fn parse(s: &str) -> Option<PromptSource> {
        Some(match s {
            "human" => PromptSource::Human,
            "spawned_agent" => PromptSource::SpawnedAgent,
            "system_injected" => PromptSource::SystemInjected,
            _ => return None,
        })
    }
}

/// agentlog's tool classification, from the exact tool name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "snake_case")]
pub enum ToolKind {
    Exec,
    FileEdit,
    SubAgent,
    Housekeeping,
    WebSearch,
    Other,
}

impl ToolKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ToolKind::Exec => "exec",
            ToolKind::FileEdit => "file_edit",
            ToolKind::SubAgent => "sub_agent",
            ToolKind::Housekeeping => "housekeeping",
            ToolKind::WebSearch => "web_search",
            ToolKind::Other => "other",
        }
    }

    pub fn parse(s: &str) -> Option<ToolKind> {
        Some(match s {
            "exec" => ToolKind::Exec,
            "file_edit" => ToolKind::FileEdit,
            "sub_agent" => ToolKind::SubAgent,
            "housekeeping" => ToolKind::Housekeeping,
            "web_search" => ToolKind::WebSearch,
            "other" => ToolKind::Other,
            _ => return None,
        })
    }

    /// Classify a tool by its exact name (agentlog's table, extended with the names Claude
    /// Code and Codex use today).
    pub fn of(name: &str) -> ToolKind {
        match name {
            "exec_command" | "Bash" | "bash" | "shell" | "shell_command" | "local_shell"
            | "local_shell_call" | "run_command" | "container.exec" | "PowerShell" => {
                ToolKind::Exec
            }
            "apply_patch" | "edit_file" | "write_file" | "str_replace" | "Edit" | "MultiEdit"
            | "Write" | "NotebookEdit" => ToolKind::FileEdit,
            "spawn_agent" | "Task" | "Agent" => ToolKind::SubAgent,
            "write_stdin" | "wait_agent" | "close_agent" | "kill_agent" | "send_input"
            | "resume_agent" | "interrupt_agent" | "list_agents" | "send_message"
            | "followup_task" | "update_plan" | "Read" | "Glob" | "Grep" | "LS" | "TodoWrite"
            | "BashOutput" | "KillBash" | "KillShell" | "TaskOutput" | "TaskCreate"
            | "TaskUpdate" | "TaskList" | "TaskGet" | "TaskStop" | "view_image" => {
                ToolKind::Housekeeping
            }
            "web_search" | "web_search_call" | "WebSearch" | "WebFetch" => ToolKind::WebSearch,
            _ => ToolKind::Other,
        }
    }
}

/// How a tool call ended, derived from its exit code (agentlog's rules) or an error flag.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    Succeeded,
    Failed,
    CouldNotExecute,
}

impl Outcome {
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Succeeded => "succeeded",
            Outcome::Failed => "failed",
            Outcome::CouldNotExecute => "could_not_execute",
        }
    }

    pub fn parse(s: &str) -> Option<Outcome> {
        Some(match s {
            "succeeded" => Outcome::Succeeded,
            "failed" => Outcome::Failed,
            "could_not_execute" => Outcome::CouldNotExecute,
            _ => return None,
        })
    }
}

/// One record parsed out of a transcript line. A line can hold several (a Claude assistant
/// line with text and two tool_use blocks gives three); `block` numbers them within the line.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Record {
    pub block: u32,
    pub kind: Option<RecordKind>,
    pub timestamp: Option<String>,
    pub role: Option<String>,
    /// `<agent>:<type>[:<subtype>]`, e.g. `claude:assistant:tool_use`.
    pub source_event_kind: String,
    pub text: Option<String>,
    pub tool_name: Option<String>,
    pub tool_kind: Option<ToolKind>,
    pub tool_input: Option<serde_json::Value>,
    pub call_id: Option<String>,
    pub exit_code: Option<i32>,
    pub outcome: Option<Outcome>,
    pub prompt_source: Option<PromptSource>,
    /// Paths this record edits (as written by the agent; may be absolute).
    pub file_paths: Vec<String>,
    pub is_sidechain: bool,
    pub is_compaction: bool,
    /// Provider message id (Claude `message.id`), to attribute token usage once.
    pub message_id: Option<String>,
    pub cwd: Option<String>,
    pub git_branch: Option<String>,
    /// The agent's stable id of the unit (a message) this record came from, for sources that
    /// rewrite what they wrote. With `key`, it replaces the line's hash as the record's
    /// identity: the record is updated in place when the unit changes. `None`: identity by line.
    pub unit: Option<String>,
    /// Which record of the unit: `text`, `thought:0`, `call:<id>`, `result:<id>`, …
    pub key: Option<String>,
    /// When the agent took the record back, for a source that says so itself (Cairn's own
    /// ATIF export keeps it): stored retracted, as a rewind read later leaves it. `None` for
    /// the rest, which a keyed source's later read may still retract.
    pub retracted_at: Option<String>,
}

impl Record {
    pub fn kind(&self) -> RecordKind {
        self.kind.unwrap_or(RecordKind::Event)
    }
}

/// Token usage of one provider message (Claude) or the running total of a thread (Codex).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct TokenUsage {
    pub input: u64,
    pub output: u64,
    pub cache_creation: u64,
    pub cache_read: u64,
    pub reasoning: u64,
}

impl TokenUsage {
    /// Whether no count is known: a format without usage (or a trimmed one) leaves every count
    /// 0, which says nothing about what was used.
    pub fn is_unknown(&self) -> bool {
        *self == TokenUsage::default()
    }

    pub fn add(&mut self, other: &TokenUsage) {
        self.input += other.input;
        self.output += other.output;
        self.cache_creation += other.cache_creation;
        self.cache_read += other.cache_read;
        self.reasoning += other.reasoning;
    }
}

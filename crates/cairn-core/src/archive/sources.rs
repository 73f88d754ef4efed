//! Source adapters: one per agent, behind [`SourceParser`].
//!
//! An adapter turns one (already redacted) JSONL line into zero or more [`Record`]s and keeps
//! what it learns about the session in a [`SessionMeta`]. Its whole state is serialisable so
//! capture can stop after any line and resume from a byte offset later, in another process.
//! Discovery (which files belong to which agent) lives in [`super::discover`].

pub mod aider;
pub mod antigravity;
pub mod atif;
mod chat;
pub mod claude;
pub mod cline;
pub mod cline_sdk;
pub mod codex;
pub mod copilot;
pub mod crush;
pub mod cursor;
pub mod cursor_ide;
pub mod database;
pub mod document;
pub mod droid;
pub mod gemini;
pub mod gptme;
pub mod grok;
pub mod hermes;
pub mod iflow;
pub mod kimi;
pub mod kiro;
pub mod kiro_sessions;
pub mod openclaw;
pub mod opencode;
pub mod pi;
pub mod posit;
pub mod qwen;
pub mod qwenpaw;
pub mod traex;
pub mod vibe;
pub mod vscopilot;

use std::borrow::Cow;
use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::discover::FoundFile;
use super::{Agent, Outcome, PromptSource, Record, RecordKind, TokenUsage, ToolKind};

/// How a file relates to its session.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FileRole {
    /// The session's own transcript.
    #[default]
    Main,
    /// A Claude Code sub-agent (or compaction) transcript under `<session>/subagents/`.
    Subagent,
}

/// What an adapter knows about the session of the file it reads. First value wins for
/// identity fields; the latest wins for fields that move (model, cwd).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SessionMeta {
    pub session_id: Option<String>,
    /// The provider id of the parent session (sub-agents, forks).
    pub parent_session_id: Option<String>,
    /// `subagent`, `compaction` or `fork` when this session hangs off another one.
    pub relation: Option<String>,
    /// Claude sub-agent id (`agent-<id>.jsonl`).
    pub agent_id: Option<String>,
    pub cwd: Option<String>,
    pub git_branch: Option<String>,
    pub git_commit: Option<String>,
    pub repository_url: Option<String>,
    pub model: Option<String>,
    pub provider: Option<String>,
    pub tool_version: Option<String>,
    pub title: Option<String>,
    /// How the session was started: Claude's `entrypoint` (`cli`, `sdk-cli`, …), Codex's
    /// `thread_source` or `source` (`cli`, `vscode`, `exec`, `mcp`, `subagent`).
    pub thread_source: Option<String>,
    pub started_at: Option<String>,
    pub updated_at: Option<String>,
    /// Record types the adapter does not know, with how often each was seen. Never fatal.
    pub unknown_types: BTreeMap<String, u64>,
    /// Cumulative token usage reported by the provider (Codex reports a running total).
    pub cumulative_usage: Option<TokenUsage>,
    /// Lines whose timestamp was not RFC 3339 (stored as unknown; the first is a warning).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub unparsed_timestamps: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// Everything one line produced.
#[derive(Debug, Default)]
pub struct LineOutput {
    pub records: Vec<Record>,
    /// Token usage per provider message id; a later line for the same id replaces it.
    pub usage: Vec<(String, TokenUsage)>,
    /// Problems with this line worth a warning on the session (it was still read).
    pub warnings: Vec<String>,
    /// Keyed units the agent dropped (Gemini's `$rewindTo`): their records are marked
    /// retracted, never deleted.
    pub retract_units: Vec<String>,
    /// How many of `records`, from the first, belong to an earlier line: a unit the parser could
    /// only close on seeing this line (Aider's blocks)...
    pub closing: usize,
    /// ...and how many lines before this one (the unit's first line, so the line a record is
    /// stored under does not depend on where reads stopped).
    pub closing_back: u64,
}

impl LineOutput {
    /// Forget everything a line that failed to parse may have left.
    pub fn clear(&mut self) {
        self.records.clear();
        self.usage.clear();
        self.warnings.clear();
        self.retract_units.clear();
        self.closing = 0;
        self.closing_back = 0;
    }
}

/// One agent's transcript parser. Feed it lines in file order.
pub trait SourceParser: Send {
    fn agent(&self) -> Agent;
    /// Parse one (already redacted) line. Unknown shapes are counted in the meta, never an
    /// error; only text that is not JSON is.
    fn parse_line(&mut self, line: &str, out: &mut LineOutput) -> Result<(), serde_json::Error>;
    fn meta(&self) -> &SessionMeta;
    /// The state to persist after the last line consumed (serde JSON).
    fn save(&self) -> Value;
    /// The records of a unit still open at the end of a read, for a parser that emits a growing
    /// unit once it closes rather than on every line (`closing_back` counts from the line after
    /// the last one read).
    fn flush(&mut self, _out: &mut LineOutput) {}
}

/// The revision of what the parsers make of a transcript. Bumped when a change reads some
/// transcript differently (the archive goldens move: `tests/reindex.rs` pins their digest to
/// this number), or when the redaction rules find what they did not (pinned there too: a
/// reindex then takes it out of the records and the retained copies). A session records the
/// revision that read it (`sessions.read_by`); those read before their agent's transcripts
/// last changed ([`unchanged_since`]) are offered a reindex (`cairn doctor`, Settings).
pub const PARSERS_REVISION: i64 = 5;

/// The revision that last changed how every agent's transcripts read: the redaction rules (the
/// redaction digest in `tests/reindex.rs` is pinned to it), or a change to what all readers
/// share. Raised to [`PARSERS_REVISION`] with such a change.
pub const ALL_AGENTS_UNCHANGED_SINCE: i64 = 3;

/// The revision since which `agent`'s transcripts read as this build reads them: a session of
/// it read by an older one may read differently now, and is offered a reindex. A change to one
/// agent's reader bumps [`PARSERS_REVISION`] and names that agent here, so only its sessions
/// are read again.
pub fn unchanged_since(agent: Agent) -> i64 {
    match agent {
        // Times written without a zone, and a folder written from the home.
        Agent::Hermes => 4,
        // A rewound chat counted its dropped turns, records and tokens.
        Agent::Gemini => 5,
        _ => ALL_AGENTS_UNCHANGED_SINCE,
    }
}

/// A parser for `agent`, resumed from a saved state if one is given.
pub fn parser_for(
    agent: Agent,
    role: FileRole,
    saved: Option<&Value>,
) -> Result<Box<dyn SourceParser>, serde_json::Error> {
    Ok(match agent {
        Agent::Claude => Box::new(claude::ClaudeParser::resume(role, saved)?),
        // TRAE CLI writes Codex's rollouts.
        Agent::Codex | Agent::Traex => Box::new(codex::CodexParser::resume(agent, saved)?),
        Agent::Copilot => Box::new(copilot::CopilotParser::resume(saved)?),
        Agent::Qwen => Box::new(qwen::QwenParser::resume(saved)?),
        Agent::Droid => Box::new(droid::DroidParser::resume(saved)?),
        Agent::Kimi => Box::new(kimi::KimiParser::resume(role, saved)?),
        Agent::Gemini => Box::new(gemini::GeminiParser::resume(saved)?),
        Agent::Cursor => Box::new(cursor::CursorParser::resume(role, saved)?),
        Agent::Aider => Box::new(aider::AiderParser::resume(saved)?),
        // kiro-cli 2.x's session logs; its older database is read as a database.
        Agent::Kiro => Box::new(kiro_sessions::KiroSessionParser::resume(saved)?),
        // OpenClaw writes Pi's session format.
        Agent::Pi | Agent::Openclaw => Box::new(pi::PiParser::resume(agent, saved)?),
        Agent::Grok => Box::new(grok::GrokParser::resume(saved)?),
        Agent::Antigravity => Box::new(antigravity::AntigravityParser::resume(saved)?),
        Agent::Vibe => Box::new(vibe::VibeParser::resume(saved)?),
        Agent::Iflow => Box::new(iflow::IflowParser::resume(saved)?),
        Agent::Gptme => Box::new(gptme::GptmeParser::resume(saved)?),
        Agent::Posit => Box::new(posit::PositParser::resume(saved)?),
        Agent::Crush | Agent::Opencode | Agent::Vscopilot => {
            return Err(serde::de::Error::custom(format!(
                "{agent} keeps a database, not lines"
            )));
        }
        Agent::Cline | Agent::Roo | Agent::Kilo | Agent::Hermes | Agent::Qwenpaw => {
            return Err(serde::de::Error::custom(format!(
                "{agent} keeps documents, not lines"
            )));
        }
        Agent::Atif => {
            return Err(serde::de::Error::custom(
                "an ATIF trajectory is read as a document",
            ));
        }
    })
}

/// The parser for `file`, resumed from a saved state if one is given. A fresh parser of an
/// agent whose transcript names no cwd learns it from where the file lies (Aider's history sits
/// at the root of its repository; a kimi-cli journal's is the work dir `kimi.json` lists for its
/// folder's md5); a kiro-cli session's, from the metadata beside its log, a Droid session's
/// model and tokens, from its settings beside it, and a Grok, Vibe, gptme or Posit Assistant
/// session's description (`summary.json`, `meta.json`, `config.toml`, `conversation.json`),
/// read again at every read.
pub fn parser_for_file(
    file: &FoundFile,
    saved: Option<&Value>,
) -> Result<Box<dyn SourceParser>, serde_json::Error> {
    match (file.agent, saved) {
        (Agent::Aider, None) => Ok(Box::new(aider::AiderParser::for_file(&file.path))),
        (Agent::Kimi, None) => Ok(Box::new(kimi::KimiParser::for_file(file))),
        (Agent::Kiro, _) => Ok(Box::new(kiro_sessions::KiroSessionParser::for_file(
            file, saved,
        )?)),
        (Agent::Droid, _) => Ok(Box::new(droid::DroidParser::for_file(file, saved)?)),
        (Agent::Grok, _) => Ok(Box::new(grok::GrokParser::for_file(file, saved)?)),
        (Agent::Vibe, _) => Ok(Box::new(vibe::VibeParser::for_file(file, saved)?)),
        (Agent::Gptme, _) => Ok(Box::new(gptme::GptmeParser::for_file(file, saved)?)),
        (Agent::Posit, _) => Ok(Box::new(posit::PositParser::for_file(file, saved)?)),
        _ => parser_for(file.agent, file.role, saved),
    }
}

/// How a source file is read incrementally.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReadKind {
    /// An append-only line file, resumed from a byte offset ([`SourceParser`]).
    Lines,
    /// A JSON document rewritten in place, re-read when it changes and diffed by the stable
    /// ids of its units ([`DocumentParser`]).
    Document,
    /// A session kept as a tree of small JSON files (OpenCode's legacy `storage/`), read per
    /// file: the session file is the source, its message and part files are read when they move.
    Tree,
    /// A SQLite database the agent owns, holding many sessions, each read by an update-time
    /// cursor ([`database::DatabaseSource`]).
    Database,
}

/// What identifies a record read from a line (for records the parser did not key).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineIdentity {
    /// The line's content (agentlog's record hash): the same line is the same record wherever
    /// it sits, so a rewritten file re-read from the start stores nothing twice.
    Content,
    /// The line's content and its number: for agents whose lines repeat verbatim (Cursor's
    /// transcripts have no ids or timestamps: two "Thanks." prompts are the same bytes).
    Position,
}

/// The folder a session ran in, from its transcript's path, for an agent that writes none in
/// the transcript but names its project in the path (Cursor's slug).
pub fn cwd_of_path(file: &FoundFile) -> Option<String> {
    match file.agent {
        Agent::Cursor => cursor::project_of(&file.path).map(|p| p.to_string_lossy().into_owned()),
        _ => None,
    }
}

/// How the records of `agent`'s line files are identified.
pub fn line_identity(agent: Agent) -> LineIdentity {
    match agent {
        Agent::Cursor | Agent::Grok | Agent::Antigravity => LineIdentity::Position,
        _ => LineIdentity::Content,
    }
}

/// Whether `agent`'s line files are JSON lines (a final line without its newline is whole when
/// it parses). Aider's Markdown is not: its last line counts only once its newline is written.
pub fn lines_are_json(agent: Agent) -> bool {
    agent != Agent::Aider
}

/// Whether a line file is stored compressed: a Codex rollout a week old, which Codex rewrites
/// as `rollout-….jsonl.zst` and deletes the plain file.
pub fn is_compressed(path: &std::path::Path) -> bool {
    path.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.ends_with(".jsonl.zst"))
}

/// How `file` is read: by its agent and, for agents with two formats, its name.
pub fn read_kind(file: &FoundFile) -> ReadKind {
    match file.agent {
        Agent::Gemini => gemini::read_kind(&file.path),
        Agent::Kiro if kiro_sessions::is_session_file(&file.path) => ReadKind::Lines,
        Agent::Kilo if opencode::is_kilo_database(&file.path) => ReadKind::Database,
        Agent::Crush | Agent::Kiro | Agent::Vscopilot => ReadKind::Database,
        Agent::Cursor if cursor_ide::is_database(&file.path) => ReadKind::Database,
        Agent::Opencode => opencode::read_kind(&file.path),
        Agent::Atif | Agent::Cline | Agent::Roo | Agent::Kilo | Agent::Hermes | Agent::Qwenpaw => {
            ReadKind::Document
        }
        _ => ReadKind::Lines,
    }
}

/// The database `path` names a session of, when it is one of `agent`'s (`<database>#<session>`,
/// see `capture`'s `session_path`); `None` for any other path, one with a `#` in a folder's
/// name among them.
pub fn database_of_session(agent: Agent, path: &std::path::Path) -> Option<&std::path::Path> {
    let (db, _) = path.to_str()?.rsplit_once('#')?;
    let db = std::path::Path::new(db);
    let is_database = match agent {
        Agent::Crush => crush::is_database(db),
        Agent::Kiro => kiro::is_database(db),
        Agent::Vscopilot => vscopilot::is_trace_file(db),
        Agent::Cursor => cursor_ide::is_database(db),
        Agent::Opencode => opencode::is_database(db),
        Agent::Kilo => opencode::is_kilo_database(db),
        _ => false,
    };
    is_database.then_some(db)
}

pub use database::UnitParser;
pub use document::{DocumentParser, KeyedUnits, Shallow, Units};

/// A document parser for `agent`, resumed from a saved state if one is given.
pub fn document_parser_for(
    agent: Agent,
    saved: Option<&Value>,
) -> Result<Box<dyn DocumentParser>, serde_json::Error> {
    match agent {
        Agent::Gemini => Ok(Box::new(gemini::GeminiParser::resume(saved)?)),
        Agent::Atif => Ok(Box::new(atif::AtifParser::resume(saved)?)),
        Agent::Hermes => Ok(Box::new(hermes::HermesParser::resume(saved)?)),
        Agent::Qwenpaw => Ok(Box::new(qwenpaw::QwenpawParser::resume(saved)?)),
        Agent::Cline | Agent::Roo | Agent::Kilo => {
            Ok(Box::new(cline::ClineParser::resume(agent, saved)?))
        }
        other => Err(serde::de::Error::custom(format!(
            "{other} has no document format"
        ))),
    }
}

/// The document parser for `file`, resumed from a saved state if one is given. A fresh parser
/// of a Cline-family task learns the task's id from its folder.
pub fn document_parser_for_file(
    file: &FoundFile,
    saved: Option<&Value>,
) -> Result<Box<dyn DocumentParser>, serde_json::Error> {
    if file.agent == Agent::Cline && cline_sdk::is_messages_file(&file.path) {
        return Ok(Box::new(cline_sdk::ClineSdkParser::resume(
            file.role, saved,
        )?));
    }
    match saved {
        None if cline::is_cline_family(file.agent) => Ok(Box::new(cline::ClineParser::for_file(
            file.agent, &file.path,
        ))),
        _ => document_parser_for(file.agent, saved),
    }
}

/// The document to split: the file's JSON read down to its units ([`Shallow::doc`], `null` where
/// its list of units stood), with the files read beside it for agents that keep a session in
/// several (a Cline-family task folder, a Cline SDK session's manifest).
pub fn with_sidecars(file: &FoundFile, doc: Value) -> Value {
    if file.agent == Agent::Cline && cline_sdk::is_messages_file(&file.path) {
        cline_sdk::with_manifest(&file.path, doc)
    } else if cline::is_cline_family(file.agent) {
        cline::with_sidecars(&file.path, doc)
    } else {
        doc
    }
}

/// The files read beside `file`: a change to one alone is a change of the session, so a sync
/// reads it. A Cline-family task's sidecars and a Cline SDK session's manifest are part of the
/// document; a line transcript's (Droid's `<session>.settings.json`, kiro-cli's
/// `<session>.json`, Grok's `summary.json`, Vibe's `meta.json`, gptme's `config.toml`, Posit
/// Assistant's `conversation.json` and `workspace.json`) describe its session (title, model,
/// folder, token totals), read again without the transcript's lines.
pub fn sidecars(file: &FoundFile) -> Vec<std::path::PathBuf> {
    if let Some((sidecar, _)) = sibling_sidecar(file.agent) {
        return vec![file.path.with_file_name(sidecar)];
    }
    match file.agent {
        Agent::Cline if cline_sdk::is_messages_file(&file.path) => {
            cline_sdk::manifest_of(&file.path).into_iter().collect()
        }
        agent if cline::is_cline_family(agent) => cline::sidecars_of(&file.path),
        Agent::Droid => droid::sidecars_of(&file.path),
        Agent::Kiro if kiro_sessions::is_session_file(&file.path) => {
            kiro_sessions::sidecars_of(&file.path)
        }
        Agent::Posit => posit::sidecars_of(&file.path),
        _ => Vec::new(),
    }
}

/// The line transcript the sidecar at `path` describes ([`sidecars`]), for the watcher: `None`
/// when `path` is no such sidecar of `agent`'s.
pub fn transcript_of_sidecar(agent: Agent, path: &std::path::Path) -> Option<std::path::PathBuf> {
    if let Some((sidecar, transcript)) = sibling_sidecar(agent) {
        return (path.file_name()? == sidecar).then(|| path.with_file_name(transcript));
    }
    match agent {
        Agent::Droid => droid::transcript_of_sidecar(path),
        Agent::Kiro => kiro_sessions::transcript_of_sidecar(path),
        Agent::Posit => posit::transcript_of_sidecar(path),
        _ => None,
    }
}

/// For an agent whose session is described by one file of a fixed name in its transcript's
/// folder (the transcript's name fixed too): the two names, sidecar first. Grok's
/// `summary.json` beside `chat_history.jsonl`, Vibe's `meta.json` beside `messages.jsonl`,
/// gptme's `config.toml` beside `conversation.jsonl`.
fn sibling_sidecar(agent: Agent) -> Option<(&'static str, &'static str)> {
    match agent {
        Agent::Grok => Some((grok::SUMMARY, grok::CHAT_HISTORY)),
        Agent::Vibe => Some((vibe::META, vibe::MESSAGES)),
        Agent::Gptme => Some((gptme::CONFIG, gptme::CONVERSATION)),
        _ => None,
    }
}

// ---- helpers shared by the adapters ----------------------------------------------------------

/// A small JSON file an agent keeps beside its transcript (a task's sidecar, a session's
/// metadata or settings, a lookup file), parsed (a byte that is not UTF-8 read as U+FFFD) and
/// redacted as a transcript's line is: no line of the transcript, but what a parser takes from
/// it (a title, a working directory, a branch, a model) is stored and shown like one. `None`
/// when it is missing, over `max` bytes or not JSON.
pub(crate) fn read_small_json(path: &std::path::Path, max: u64) -> Option<Value> {
    let mut value = read_small_json_as_found(path, max)?;
    crate::archive::redact::Redactor::global().redact_json(&mut value, &mut Vec::new());
    Some(value)
}

/// [`read_small_json`] as the file holds it, not redacted: only to find something by it (an
/// id, a path's hash), never to store or show what it says.
pub(crate) fn read_small_json_as_found(path: &std::path::Path, max: u64) -> Option<Value> {
    use std::io::Read as _;
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .and_then(|f| f.take(max + 1).read_to_end(&mut bytes))
        .ok()?;
    if bytes.len() as u64 > max {
        return None;
    }
    crate::archive::json_text::parse_lossy(&bytes)
        .ok()
        .map(|(v, _)| v)
}

/// First string at a path of object keys.
pub(crate) fn str_at<'a>(v: &'a Value, path: &[&str]) -> Option<&'a str> {
    let mut cur = v;
    for key in path {
        cur = cur.get(key)?;
    }
    cur.as_str()
}

/// Epoch milliseconds as RFC 3339 (UTC, milliseconds); `None` when out of range.
pub(crate) fn ms_to_rfc3339(ms: i64) -> Option<String> {
    let ts = jiff::Timestamp::from_millisecond(ms).ok()?;
    Some(ts.strftime("%Y-%m-%dT%H:%M:%S%.3fZ").to_string())
}

/// A "text value": a string, or the `text` fields of an array of blocks joined by `\n`.
/// An empty result counts as absent.
pub(crate) fn text_value(v: &Value) -> Option<String> {
    match v {
        Value::String(s) if !s.is_empty() => Some(s.clone()),
        Value::Array(items) => {
            let mut out = String::new();
            for item in items {
                let piece = match item {
                    Value::String(s) => Some(s.as_str()),
                    Value::Object(_) => item.get("text").and_then(Value::as_str),
                    _ => None,
                };
                if let Some(piece) = piece {
                    if !out.is_empty() {
                        out.push('\n');
                    }
                    out.push_str(piece);
                }
            }
            (!out.is_empty()).then_some(out)
        }
        _ => None,
    }
}

/// Set a first-wins field.
pub(crate) fn set_once(slot: &mut Option<String>, value: Option<&str>) {
    if slot.is_none()
        && let Some(v) = value.filter(|v| !v.is_empty())
    {
        *slot = Some(v.to_owned());
    }
}

/// Set a latest-wins field.
pub(crate) fn set_latest(slot: &mut Option<String>, value: Option<&str>) {
    if let Some(v) = value.filter(|v| !v.is_empty()) {
        *slot = Some(v.to_owned());
    }
}

/// The exit code in a tool's output text: the first of `exited with code `, `exit code `,
/// `exit code:` (Gemini CLI's and Qwen Code's shell output), `exit status `, `exit status:`
/// (kiro-cli's) (case-insensitive) followed by an integer.
pub(crate) fn exit_code_in(text: &str) -> Option<i32> {
    let lower = text.to_ascii_lowercase();
    for marker in [
        "exited with code ",
        "exit code ",
        "exit code:",
        "exit status ",
        "exit status:",
    ] {
        let mut from = 0;
        while let Some(pos) = lower[from..].find(marker) {
            let rest = lower[from + pos + marker.len()..].trim_start();
            let end = rest
                .char_indices()
                .find(|&(i, c)| !(c.is_ascii_digit() || (c == '-' && i == 0)))
                .map_or(rest.len(), |(i, _)| i);
            if let Ok(code) = rest[..end].parse::<i32>() {
                return Some(code);
            }
            from += pos + marker.len();
        }
    }
    None
}

/// A tool's output as a reader found it in a transcript, before it is a record
/// ([`ToolOutput::record`]): the rules every reader's result shares live there once.
#[derive(Debug, Default)]
pub(crate) struct ToolOutput {
    /// The tool's name, as its call gave it.
    pub name: Option<String>,
    /// The call it answers.
    pub call_id: Option<String>,
    /// What the tool printed; `None` when the agent kept nothing (a reader that keeps an empty
    /// output as none filters it out itself).
    pub text: Option<String>,
    /// The agent's own verdict: `Some(true)` it failed, `Some(false)` it went well.
    pub failed: Option<bool>,
    /// The exit code the agent recorded beside the output, when it did; else a shell's is read
    /// from the text.
    pub exit_code: Option<i32>,
}

impl ToolOutput {
    /// The result record of `source_event_kind` over `base` (which brings its role, key, block
    /// and the rest): its tool kind is `kind_of` the name, a shell's exit code the recorded one
    /// or else the one its text states ([`exit_code_in`]), the outcome the exit code's or else
    /// the agent's verdict ([`outcome_of`]), the text capped at [`MAX_TOOL_OUTPUT_BYTES`].
    pub(crate) fn record(
        self,
        source_event_kind: String,
        kind_of: fn(&str) -> ToolKind,
        base: Record,
    ) -> Record {
        let tool_kind = self.name.as_deref().map(kind_of);
        let text = self.text.as_deref().unwrap_or("");
        let (exit_code, outcome) = match self.exit_code {
            Some(code) => (Some(code), outcome_of(Some(code), text, self.failed)),
            None => result_outcome(tool_kind, text, self.failed),
        };
        Record {
            kind: Some(RecordKind::ToolResult),
            source_event_kind,
            tool_kind,
            tool_name: self.name,
            call_id: self.call_id,
            text: self.text.map(|t| cap_text(t, MAX_TOOL_OUTPUT_BYTES)),
            exit_code,
            outcome,
            ..base
        }
    }
}

/// A tool result's exit code (read from its text when the tool is a shell) and its outcome: the
/// exit code's ([`outcome_for`]), else the agent's error flag, else none.
pub(crate) fn result_outcome(
    kind: Option<crate::archive::ToolKind>,
    text: &str,
    failed: Option<bool>,
) -> (Option<i32>, Option<Outcome>) {
    let exit_code = (kind == Some(crate::archive::ToolKind::Exec))
        .then(|| exit_code_in(text))
        .flatten();
    (exit_code, outcome_of(exit_code, text, failed))
}

/// A tool result's outcome: its exit code's ([`outcome_for`]), else the agent's error flag
/// (`Some(false)`: it said the call went well), else none.
pub(crate) fn outcome_of(
    exit_code: Option<i32>,
    text: &str,
    failed: Option<bool>,
) -> Option<Outcome> {
    match (exit_code, failed) {
        (Some(code), _) => Some(outcome_for(code, text)),
        (None, Some(true)) => Some(Outcome::Failed),
        (None, Some(false)) => Some(Outcome::Succeeded),
        (None, None) => None,
    }
}

/// agentlog's outcome rules for an exit code.
pub(crate) fn outcome_for(code: i32, text: &str) -> Outcome {
    match code {
        0 => Outcome::Succeeded,
        126 | 127 => Outcome::CouldNotExecute,
        101 => {
            let lower = text.to_ascii_lowercase();
            const CARGO_USAGE: [&str; 8] = [
                "is ambiguous",
                "package id specification",
                "did not match any packages",
                "could not find `cargo.toml`",
                "could not find cargo.toml",
                "no such command",
                "no bin target",
                "could not determine which binary to run",
            ];
            if CARGO_USAGE.iter().any(|m| lower.contains(m)) {
                Outcome::CouldNotExecute
            } else {
                Outcome::Failed
            }
        }
        _ => Outcome::Failed,
    }
}

/// Paths named by the headers of an `apply_patch` body (`*** Add/Update/Delete File:`,
/// `*** Move to:`), in order, without duplicates.
pub(crate) fn patch_paths(patch: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for line in patch.lines() {
        let line = line.trim_start();
        let path = [
            "*** Add File:",
            "*** Update File:",
            "*** Delete File:",
            "*** Move to:",
        ]
        .iter()
        .find_map(|prefix| line.strip_prefix(prefix))
        .map(str::trim);
        if let Some(p) = path.filter(|p| !p.is_empty())
            && !out.iter().any(|o| o == p)
        {
            out.push(p.to_owned());
        }
    }
    out
}

/// How a user text the agent injected rather than a person typed begins (agentlog's markers plus
/// the ones Claude Code and Codex use for meta messages): harness text, never a session's title.
pub(crate) const HARNESS_PREFIXES: [&str; 18] = [
    "# AGENTS.md instructions",
    "<INSTRUCTIONS>",
    "<environment_context>",
    "<subagent_notification>",
    "<user_instructions>",
    "<turn_aborted>",
    "<user_shell_command>",
    "<local-command-",
    "<task-notification>",
    "<system-reminder>",
    // Cursor's tool context, sent as a user line of its own.
    "<dynamic_tools>",
    // Claude Code: a `!` command's output, and another agent's message to this session.
    "<bash-stdout>",
    "<teammate-message",
    "<cross-session-message",
    "[Request interrupted",
    "Caveat: The messages below",
    "Stop hook feedback:",
    "This session is being continued from a previous conversation",
];

/// A user text the agent injected rather than a person typed ([`HARNESS_PREFIXES`]).
pub(crate) fn is_system_injected(text: &str) -> bool {
    let t = text.trim_start();
    HARNESS_PREFIXES.iter().any(|p| t.starts_with(p))
        || (t.contains("<INSTRUCTIONS>")
            && t.contains("</INSTRUCTIONS>")
            && t.contains("<environment_context>"))
}

/// Serde helpers for reading provider lines leniently: a field of an unexpected type reads as
/// absent instead of failing the whole line (agents change their formats every month).
pub(crate) mod lenient {
    use std::borrow::Cow;
    use std::fmt;

    use serde::Deserializer;
    use serde::de::{IgnoredAny, MapAccess, SeqAccess, Visitor};

    struct StrVisitor;

    impl<'de> Visitor<'de> for StrVisitor {
        type Value = Option<Cow<'de, str>>;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("any value")
        }
        fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Self::Value, E> {
            Ok(Some(Cow::Borrowed(v)))
        }
        fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
            Ok(Some(Cow::Owned(v.to_owned())))
        }
        fn visit_string<E>(self, v: String) -> Result<Self::Value, E> {
            Ok(Some(Cow::Owned(v)))
        }
        fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_unit<E>(self) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_none<E>(self) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
            d.deserialize_any(self)
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
            while seq.next_element::<IgnoredAny>()?.is_some() {}
            Ok(None)
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
            Ok(None)
        }
    }

    /// A string, borrowed from the line when it has no escapes; anything else is `None`.
    pub fn str<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Cow<'de, str>>, D::Error> {
        d.deserialize_any(StrVisitor)
    }

    struct ScalarVisitor;

    #[derive(Clone, Copy)]
    enum Scalar {
        Bool(bool),
        U64(u64),
        Other,
    }

    impl<'de> Visitor<'de> for ScalarVisitor {
        type Value = Scalar;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("any value")
        }
        fn visit_bool<E>(self, v: bool) -> Result<Scalar, E> {
            Ok(Scalar::Bool(v))
        }
        fn visit_u64<E>(self, v: u64) -> Result<Scalar, E> {
            Ok(Scalar::U64(v))
        }
        fn visit_i64<E>(self, v: i64) -> Result<Scalar, E> {
            Ok(u64::try_from(v).map_or(Scalar::Other, Scalar::U64))
        }
        fn visit_f64<E>(self, _: f64) -> Result<Scalar, E> {
            Ok(Scalar::Other)
        }
        fn visit_str<E>(self, _: &str) -> Result<Scalar, E> {
            Ok(Scalar::Other)
        }
        fn visit_unit<E>(self) -> Result<Scalar, E> {
            Ok(Scalar::Other)
        }
        fn visit_none<E>(self) -> Result<Scalar, E> {
            Ok(Scalar::Other)
        }
        fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Scalar, D::Error> {
            d.deserialize_any(self)
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Scalar, A::Error> {
            while seq.next_element::<IgnoredAny>()?.is_some() {}
            Ok(Scalar::Other)
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Scalar, A::Error> {
            while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
            Ok(Scalar::Other)
        }
    }

    /// A boolean; anything else is `None`.
    pub fn bool<'de, D: Deserializer<'de>>(d: D) -> Result<Option<bool>, D::Error> {
        Ok(match d.deserialize_any(ScalarVisitor)? {
            Scalar::Bool(b) => Some(b),
            _ => None,
        })
    }

    /// A non-negative integer; anything else is `None` (or 0 through `u64_or_zero`).
    pub fn u64<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
        Ok(match d.deserialize_any(ScalarVisitor)? {
            Scalar::U64(n) => Some(n),
            _ => None,
        })
    }

    pub fn u64_or_zero<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
        Ok(u64(d)?.unwrap_or(0))
    }

    struct ObjectVisitor<T>(std::marker::PhantomData<T>);

    impl<'de, T: serde::Deserialize<'de>> Visitor<'de> for ObjectVisitor<T> {
        type Value = Option<T>;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("any value")
        }
        fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
            T::deserialize(serde::de::value::MapAccessDeserializer::new(map)).map(Some)
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
            while seq.next_element::<IgnoredAny>()?.is_some() {}
            Ok(None)
        }
        fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
            d.deserialize_any(self)
        }
        fn visit_none<E>(self) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_unit<E>(self) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_str<E>(self, _: &str) -> Result<Self::Value, E> {
            Ok(None)
        }
    }

    /// An object read as `T` (whose own fields should be lenient); anything else is `None`.
    pub fn object<'de, D: Deserializer<'de>, T: serde::Deserialize<'de>>(
        d: D,
    ) -> Result<Option<T>, D::Error> {
        d.deserialize_any(ObjectVisitor(std::marker::PhantomData))
    }
}

/// What follows the editor's context Claude Code's IDE extensions put at the head of a prompt
/// (`<ide_opened_file>…</ide_opened_file>`, `<ide_selection>…</ide_selection>`, as a block of
/// its own or before the typed text); `None` when the text does not open with it, empty when it
/// is all context (one cut before its end included).
pub(crate) fn after_ide_context(text: &str) -> Option<&str> {
    let mut rest = text.trim_start();
    let mut any = false;
    loop {
        let Some(tag) = ["ide_opened_file", "ide_selection"]
            .into_iter()
            .find(|t| rest.starts_with(&format!("<{t}>")))
        else {
            return any.then_some(rest);
        };
        any = true;
        let close = format!("</{tag}>");
        match rest.find(&close) {
            Some(at) => rest = rest[at + close.len()..].trim_start(),
            None => return Some(""),
        }
    }
}

/// How a prompt reads to a person. Claude Code records a slash command a person typed as
/// `<command-message>…</command-message><command-name>/init</command-name><command-args>x</command-args>`;
/// that shows as `/init x`. The editor's context before a typed prompt is left out.
pub fn display_prompt(text: &str) -> std::borrow::Cow<'_, str> {
    let text = after_ide_context(text)
        .filter(|rest| !rest.trim().is_empty())
        .unwrap_or(text);
    let tag = |name: &str| {
        let open = format!("<{name}>");
        let close = format!("</{name}>");
        let start = text.find(&open)? + open.len();
        let end = text[start..].find(&close)? + start;
        Some(text[start..end].trim())
    };
    match tag("command-name") {
        Some(name) => {
            let name = if name.starts_with('/') {
                name.to_owned()
            } else {
                format!("/{name}")
            };
            match tag("command-args").filter(|a| !a.is_empty()) {
                Some(args) => std::borrow::Cow::Owned(format!("{name} {args}")),
                None => std::borrow::Cow::Owned(name),
            }
        }
        None => std::borrow::Cow::Borrowed(text),
    }
}

/// Longest text kept per field in the index; the retained copy keeps everything.
pub(crate) const MAX_TEXT_BYTES: usize = 256 * 1024;
/// Tool output is mostly noise past its head and tail.
pub(crate) const MAX_TOOL_OUTPUT_BYTES: usize = 16 * 1024;
/// Longest string inside a tool input (a `Write` of a whole file, say).
pub(crate) const MAX_INPUT_STRING_BYTES: usize = 16 * 1024;

/// Keep the head and tail of an over-long text, marking the cut.
pub(crate) fn cap_text(text: String, max: usize) -> String {
    if text.len() <= max {
        return text;
    }
    const MARK: &str = "\n[… truncated …]\n";
    let head_len = floor_char_boundary(&text, max * 2 / 3);
    let tail_budget = max.saturating_sub(head_len + MARK.len());
    let tail_start = ceil_char_boundary(&text, text.len() - tail_budget);
    let mut out = String::with_capacity(max);
    out.push_str(&text[..head_len]);
    out.push_str(MARK);
    out.push_str(&text[tail_start..]);
    out
}

/// Cap every string inside a JSON value.
pub(crate) fn cap_json(v: &mut Value, max: usize) {
    match v {
        Value::String(s) if s.len() > max => *s = cap_text(std::mem::take(s), max),
        Value::Array(items) => items.iter_mut().for_each(|i| cap_json(i, max)),
        Value::Object(map) => map.values_mut().for_each(|i| cap_json(i, max)),
        _ => {}
    }
}

pub(crate) fn floor_char_boundary(s: &str, mut i: usize) -> usize {
    i = i.min(s.len());
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

fn ceil_char_boundary(s: &str, mut i: usize) -> usize {
    while i < s.len() && !s.is_char_boundary(i) {
        i += 1;
    }
    i
}

/// How many calls waiting for their result a parser keeps by id at most: its state is saved after
/// every batch, so a transcript of calls never answered must not grow it without end. Agents run
/// a handful at once; a result whose call was let go is still stored, named by itself.
const MAX_OPEN_CALLS: usize = 1024;

/// Remember call `id` (of tool `name`) until its result comes; at [`MAX_OPEN_CALLS`], one call
/// waiting is let go first.
pub(crate) fn remember_call(pending: &mut BTreeMap<String, String>, id: String, name: String) {
    if pending.len() >= MAX_OPEN_CALLS && !pending.contains_key(&id) {
        pending.pop_first();
    }
    pending.insert(id, name);
}

/// Count a type the adapter does not know.
pub(crate) fn count_unknown(meta: &mut SessionMeta, kind: &str) {
    // The name comes from the transcript: one printable line, of bounded length, and a bounded
    // number of names, so a hostile file cannot grow a session's row or its saved parser state
    // without end; the rest are counted together.
    let kind = crate::text::one_line(kind, MAX_UNKNOWN_KIND_CHARS);
    let key = if meta.unknown_types.len() >= MAX_UNKNOWN_KINDS
        && !meta.unknown_types.contains_key(&kind)
    {
        OTHER_UNKNOWN_KINDS.to_owned()
    } else {
        kind
    };
    *meta.unknown_types.entry(key).or_insert(0) += 1;
}

/// How long an unknown record type's name may be (a longer one is cut, with an ellipsis), and how
/// many names a session keeps before it counts the rest under [`OTHER_UNKNOWN_KINDS`].
const MAX_UNKNOWN_KIND_CHARS: usize = 64;
const MAX_UNKNOWN_KINDS: usize = 256;
const OTHER_UNKNOWN_KINDS: &str = "<other>";

/// A line's timestamp as Cairn stores it ([`crate::text::rfc3339`]: RFC 3339, in UTC). One that
/// is not RFC 3339 (a placeholder, a date alone, anything crafted) is unknown, never guessed or
/// kept raw; the first such in a file becomes a warning on the session, the rest are counted.
pub(crate) fn line_timestamp<'a>(
    meta: &mut SessionMeta,
    raw: Option<&'a str>,
    out: &mut LineOutput,
) -> Option<Cow<'a, str>> {
    checked_timestamp(meta, raw, out, crate::text::rfc3339)
}

/// A line's (or message's) time an agent writes as its local time without a zone (gptme's,
/// QwenPaw's), read in `zone` ([`crate::text::local_rfc3339`]), checked and reported as
/// [`line_timestamp`] does, and noted as the session's first or last.
pub(crate) fn local_timestamp(
    meta: &mut SessionMeta,
    raw: Option<&str>,
    out: &mut LineOutput,
    zone: &jiff::tz::TimeZone,
) -> Option<String> {
    let at = checked_timestamp(meta, raw, out, |t| crate::text::local_rfc3339(t, zone))
        .map(Cow::into_owned);
    note_timestamp(meta, at.as_deref());
    at
}

/// [`line_timestamp`] for an agent whose times are read by `read` (gptme's, written without a
/// zone): what `read` cannot read is counted and reported the same way.
pub(crate) fn checked_timestamp<'a>(
    meta: &mut SessionMeta,
    raw: Option<&'a str>,
    out: &mut LineOutput,
    read: impl FnOnce(&'a str) -> Option<Cow<'a, str>>,
) -> Option<Cow<'a, str>> {
    let raw = raw.filter(|t| !t.is_empty())?;
    let ts = read(raw);
    if ts.is_none() {
        meta.unparsed_timestamps += 1;
        if meta.unparsed_timestamps == 1 {
            out.warnings.push(format!(
                "timestamp \"{}\" is not RFC 3339: stored as unknown (later ones in this file are counted, not reported)",
                crate::text::one_line(raw, 40)
            ));
        }
    }
    ts
}

/// Track the session's first and last timestamps (already checked: [`line_timestamp`]).
pub(crate) fn note_timestamp(meta: &mut SessionMeta, ts: Option<&str>) {
    if let Some(ts) = ts {
        if meta.started_at.as_deref().is_none_or(|s| ts < s) {
            meta.started_at = Some(ts.to_owned());
        }
        if meta.updated_at.as_deref().is_none_or(|s| ts > s) {
            meta.updated_at = Some(ts.to_owned());
        }
    }
}

/// A prompt in the user's turn: `human`, or `system_injected` when the usual markers say a
/// harness wrote it ([`is_system_injected`]).
pub(crate) fn prompt(text: String, source_event_kind: &str, base: Record) -> Record {
    let source = if is_system_injected(&text) {
        PromptSource::SystemInjected
    } else {
        PromptSource::Human
    };
    Record {
        kind: Some(RecordKind::Message),
        source_event_kind: source_event_kind.to_owned(),
        role: Some("user".to_owned()),
        prompt_source: Some(source),
        text: Some(cap_text(text, MAX_TEXT_BYTES)),
        ..base
    }
}

/// The file an edit writes: the first of `keys` its input names, for a call of the file-edit
/// kind (none for any other).
pub(crate) fn edited_path(kind: ToolKind, input: Option<&Value>, keys: &[&str]) -> Vec<String> {
    match (kind, input) {
        (ToolKind::FileEdit, Some(i)) => keys
            .iter()
            .find_map(|k| str_at(i, &[k]))
            .map(|p| vec![p.to_owned()])
            .unwrap_or_default(),
        _ => Vec::new(),
    }
}

pub(crate) fn u64_at(v: &Value, key: &str) -> u64 {
    v.get(key).and_then(Value::as_u64).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A transcript of calls never answered keeps at most [`MAX_OPEN_CALLS`] waiting; a call
    /// remembered again stays one.
    #[test]
    fn calls_waiting_for_a_result_are_kept_to_a_bound() {
        let mut pending = BTreeMap::new();
        for i in 0..5_000 {
            remember_call(&mut pending, format!("c{i:05}"), "Bash".to_owned());
        }
        assert_eq!(pending.len(), MAX_OPEN_CALLS);
        assert!(pending.contains_key("c04999"));
        remember_call(&mut pending, "c04999".to_owned(), "Edit".to_owned());
        assert_eq!(pending.len(), MAX_OPEN_CALLS);
        assert_eq!(pending["c04999"], "Edit");
    }

    /// A transcript full of record types no parser knows, each a different long name with
    /// control characters in it, costs a bounded count: short printable names, 256 of them, and
    /// the rest together.
    #[test]
    fn unknown_record_types_are_counted_in_bounded_names() {
        let mut meta = SessionMeta::default();
        for i in 0..1000 {
            count_unknown(
                &mut meta,
                &format!("\u{1b}[2Jtype-{i}-{}", "x".repeat(10_000)),
            );
        }
        count_unknown(&mut meta, "type-0");
        let m = &meta.unknown_types;
        assert_eq!(m.len(), MAX_UNKNOWN_KINDS + 1);
        assert_eq!(m.get(OTHER_UNKNOWN_KINDS), Some(&(1000 - 256 + 1)));
        assert!(m.keys().all(|k| {
            k.chars().count() <= MAX_UNKNOWN_KIND_CHARS + 1 && !k.chars().any(char::is_control)
        }));
        assert_eq!(m.values().sum::<u64>(), 1001);
    }

    #[test]
    fn exit_codes_follow_agentlog_markers() {
        assert_eq!(exit_code_in("Process exited with code 0\nOutput:"), Some(0));
        assert_eq!(exit_code_in("Exit code 1\nerror"), Some(1));
        assert_eq!(exit_code_in("exit status -2"), Some(-2));
        assert_eq!(exit_code_in("exit code abc then exit status 3"), Some(3));
        assert_eq!(exit_code_in("no marker"), None);
        // Gemini CLI's shell tool reports the code on a line of its own, after a colon.
        let gemini = "Command: ls nope\nStdout: (empty)\nExit Code: 2\nSignal: 0";
        assert_eq!(exit_code_in(gemini), Some(2));
        assert_eq!(exit_code_in("Exit Code: (none)"), None);
    }

    #[test]
    fn outcomes() {
        assert_eq!(outcome_for(0, ""), Outcome::Succeeded);
        assert_eq!(outcome_for(127, ""), Outcome::CouldNotExecute);
        assert_eq!(
            outcome_for(101, "error: no such command: `foo`"),
            Outcome::CouldNotExecute
        );
        assert_eq!(outcome_for(101, "test failed"), Outcome::Failed);
        assert_eq!(outcome_for(2, ""), Outcome::Failed);
    }

    /// The rules a reader's tool result gets from [`ToolOutput::record`]: a shell's exit code
    /// as recorded or else as its text states, read from no other tool's text; the code's
    /// outcome before the agent's verdict; the text capped; the caller's fields kept.
    #[test]
    fn a_tool_output_becomes_its_result_record() {
        let kind_of = |name: &str| {
            if name == "bash" {
                ToolKind::Exec
            } else {
                ToolKind::Other
            }
        };
        let base = || Record {
            role: Some("tool".to_owned()),
            key: Some("result:7".to_owned()),
            ..Record::default()
        };
        let output = |name: &str, text: &str, failed, exit_code| ToolOutput {
            name: Some(name.to_owned()),
            call_id: Some("c1".to_owned()),
            text: Some(text.to_owned()),
            failed,
            exit_code,
        };
        let of = |o: ToolOutput| {
            let r = o.record("x:tool_result".to_owned(), kind_of, base());
            (r.tool_kind, r.exit_code, r.outcome)
        };
        let shell = Some(ToolKind::Exec);
        // A shell's text states its code, and the code decides over the agent's word.
        assert_eq!(
            of(output("bash", "Exit code 2", Some(false), None)),
            (shell, Some(2), Some(Outcome::Failed))
        );
        // A code the agent recorded wins over what the text says.
        assert_eq!(
            of(output("bash", "Exit code 2", None, Some(0))),
            (shell, Some(0), Some(Outcome::Succeeded))
        );
        // Another tool's text is not read for a code: its outcome is the agent's verdict.
        assert_eq!(
            of(output("read", "exit code 1", Some(false), None)),
            (Some(ToolKind::Other), None, Some(Outcome::Succeeded))
        );
        assert_eq!(of(output("read", "", None, None)).2, None);
        let unnamed = ToolOutput {
            failed: Some(true),
            ..ToolOutput::default()
        };
        assert_eq!(of(unnamed), (None, None, Some(Outcome::Failed)));

        let long = "y".repeat(MAX_TOOL_OUTPUT_BYTES * 2);
        let r =
            output("bash", &long, None, None).record("x:tool_result".to_owned(), kind_of, base());
        assert!(r.text.as_ref().unwrap().len() <= MAX_TOOL_OUTPUT_BYTES);
        assert_eq!(r.kind, Some(RecordKind::ToolResult));
        assert_eq!(r.source_event_kind, "x:tool_result");
        assert_eq!(
            (r.tool_name.as_deref(), r.call_id.as_deref()),
            (Some("bash"), Some("c1"))
        );
        assert_eq!(
            (r.role.as_deref(), r.key.as_deref()),
            (Some("tool"), Some("result:7"))
        );
    }

    #[test]
    fn patch_headers() {
        let patch = "*** Begin Patch\n*** Update File: src/a.rs\n@@\n-x\n+y\n*** Move to: src/b.rs\n*** Add File: c.txt\n+hi\n*** Delete File: d.txt\n*** Update File: src/a.rs\n*** End Patch\n";
        assert_eq!(
            patch_paths(patch),
            vec!["src/a.rs", "src/b.rs", "c.txt", "d.txt"]
        );
    }

    #[test]
    fn cap_keeps_head_and_tail_on_char_boundaries() {
        let text = "é".repeat(10_000);
        let capped = cap_text(text.clone(), 1000);
        assert!(capped.len() <= 1000 + 4);
        assert!(capped.contains("truncated"));
        assert!(capped.starts_with('é') && capped.ends_with('é'));
        assert_eq!(cap_text("short".into(), 1000), "short");
    }

    #[test]
    fn slash_commands_read_as_typed() {
        let t = "<command-message>init is analyzing</command-message>\n<command-name>/init</command-name>\n<command-args>fast</command-args>";
        assert_eq!(display_prompt(t), "/init fast");
        assert_eq!(
            display_prompt("<command-name>clear</command-name>"),
            "/clear"
        );
        assert_eq!(display_prompt("plain"), "plain");
        // The editor's context before a typed prompt is not what the person asked.
        assert_eq!(
            display_prompt(
                "<ide_opened_file>The user opened /r/a.rs</ide_opened_file>\nwhy does this fail"
            ),
            "why does this fail"
        );
        let only = "<ide_selection>The user selected lines 1 to 2</ide_selection>";
        assert_eq!(display_prompt(only), only);
    }

    #[test]
    fn injected_prompts() {
        assert!(is_system_injected(
            "<environment_context>ctx</environment_context>"
        ));
        assert!(is_system_injected("  # AGENTS.md instructions\n..."));
        assert!(!is_system_injected("<command-name>/model</command-name>"));
        assert!(is_system_injected(
            "<local-command-stdout>Set model</local-command-stdout>"
        ));
        assert!(!is_system_injected("Repo: /tmp/project. Review the code."));
    }
}

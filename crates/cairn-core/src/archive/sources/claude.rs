//! Claude Code transcripts (`~/.claude/projects/<encoded-cwd>/<session>.jsonl`).
//!
//! Every content block of a line becomes its own record (agentlog keeps only the first, losing
//! parallel tool calls). Assistant responses are streamed as several lines sharing one
//! `message.id`; token usage is attributed once per id, the last line's figures winning.
//! Sub-agent files (`<session>/subagents/agent-<id>.jsonl`) are their own sessions, attached to
//! the parent; their prompts come from the parent agent, so they never open turns.

use std::collections::{BTreeMap, VecDeque};

use std::borrow::Cow;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{
    FileRole, LineOutput, MAX_INPUT_STRING_BYTES, MAX_TEXT_BYTES, MAX_TOOL_OUTPUT_BYTES,
    SessionMeta, SourceParser, cap_json, cap_text, count_unknown, is_system_injected, lenient,
    line_timestamp, note_timestamp, set_latest, set_once, str_at, text_value,
};
use crate::archive::{Agent, Outcome, PromptSource, Record, RecordKind, TokenUsage, ToolKind};

/// Line types that carry no record but are known (bookkeeping, UI state, progress streams).
const KNOWN_SILENT_TYPES: [&str; 15] = [
    "file-history-snapshot",
    "queue-operation",
    "progress",
    "permission-mode",
    "mode",
    "agent-name",
    "last-prompt",
    "worktree-state",
    "started",
    "result",
    "relocated",
    "frame-link",
    "bridge-session",
    "atis-latch",
    "agent-setting",
];

#[derive(Debug, Default, Serialize, Deserialize)]
pub struct ClaudeParser {
    #[serde(skip)]
    role: FileRole,
    meta: SessionMeta,
    /// tool_use id → tool name, for calls whose result has not been seen yet.
    pending_tools: BTreeMap<String, String>,
    /// Title sources in order of preference: custom > ai > summary.
    custom_title: Option<String>,
    ai_title: Option<String>,
    /// A `summary` line's text once its `leafUuid` is known to be a line of this file: Claude
    /// Code also writes summaries of other sessions into a file, which must not title it.
    summary_title: Option<String>,
    /// Summaries whose leaf has not been read yet, oldest first (a resumed session's file opens
    /// with them), at most [`MAX_PENDING_SUMMARIES`].
    #[serde(default)]
    pending_summaries: VecDeque<(String, String)>,
    /// The last [`RECENT_UUIDS`] line ids, for a summary written after the conversation it
    /// names (its leaf is that conversation's last line).
    #[serde(default)]
    recent_uuids: VecDeque<String>,
}

/// Summaries kept waiting for their leaf.
const MAX_PENDING_SUMMARIES: usize = 32;
/// Line ids kept for a summary that follows its leaf.
const RECENT_UUIDS: usize = 16;

impl ClaudeParser {
    pub fn resume(role: FileRole, saved: Option<&Value>) -> Result<Self, serde_json::Error> {
        let mut parser = match saved {
            Some(state) => serde_json::from_value(state.clone())?,
            None => ClaudeParser::default(),
        };
        parser.role = role;
        parser
            .meta
            .provider
            .get_or_insert_with(|| "anthropic".to_owned());
        Ok(parser)
    }

    fn is_subagent_file(&self) -> bool {
        self.role == FileRole::Subagent
    }

    fn refresh_title(&mut self) {
        self.meta.title = self
            .custom_title
            .clone()
            .or_else(|| self.ai_title.clone())
            .or_else(|| self.summary_title.clone());
    }

    /// A line of this file: a summary waiting for it as its leaf titles the session now.
    fn saw_line(&mut self, uuid: &str) {
        let waiting = self
            .pending_summaries
            .iter()
            .position(|(leaf, _)| leaf == uuid);
        if let Some((_, text)) = waiting.and_then(|i| self.pending_summaries.remove(i)) {
            self.summary_title = Some(text);
            self.refresh_title();
        }
        if self.recent_uuids.len() == RECENT_UUIDS {
            self.recent_uuids.pop_front();
        }
        self.recent_uuids.push_back(uuid.to_owned());
    }

    /// A `summary` line: trusted once its leaf is a line of this file (before it, among the
    /// last few; or later); one without a leaf is never trusted.
    fn summary(&mut self, text: Option<&str>, leaf: Option<&str>) {
        let (Some(text), Some(leaf)) = (text.filter(|t| !t.trim().is_empty()), leaf) else {
            return;
        };
        if self.recent_uuids.iter().any(|u| u == leaf) {
            self.summary_title = Some(text.to_owned());
            self.refresh_title();
            return;
        }
        if self.pending_summaries.len() == MAX_PENDING_SUMMARIES {
            self.pending_summaries.pop_front();
        }
        self.pending_summaries
            .push_back((leaf.to_owned(), text.to_owned()));
    }

    fn message_line(&mut self, line: RawLine<'_>, kind: &str, base: Record, out: &mut LineOutput) {
        if line.message.is_none() {
            out.warnings.push(format!(
                "a {kind} line without a message object: nothing read from it"
            ));
        }
        let message = line.message.unwrap_or_default();
        let role = message.role.as_deref().unwrap_or(kind).to_owned();
        if kind == "assistant"
            && let Some(model) = message.model.as_deref().filter(|m| *m != "<synthetic>")
        {
            set_latest(&mut self.meta.model, Some(model));
        }
        let message_id = message.id.map(Cow::into_owned);
        if kind == "assistant"
            && let (Some(id), Some(usage)) = (&message_id, message.usage)
        {
            out.usage.push((id.clone(), usage.into()));
        }
        if kind == "assistant" && line.is_api_error_message.unwrap_or(false) {
            // Claude Code's own words for a failed request, not the model's: an event, so it
            // neither answers the turn nor heads its preview.
            let text = match message.content {
                Some(Content::Text(t)) => t.into_owned(),
                Some(Content::Blocks(blocks)) => blocks
                    .into_iter()
                    .filter_map(|b| b.text.map(Cow::into_owned))
                    .collect::<Vec<_>>()
                    .join("\n"),
                None => String::new(),
            };
            out.records.push(Record {
                kind: Some(RecordKind::Event),
                source_event_kind: "claude:assistant:api_error".to_owned(),
                text: Some(cap_text(
                    if text.trim().is_empty() {
                        "API error".to_owned()
                    } else {
                        text
                    },
                    MAX_TEXT_BYTES,
                )),
                message_id,
                ..base
            });
            return;
        }
        let injected = line.is_meta.unwrap_or(false) || line.is_compact_summary.unwrap_or(false);
        let base = Record {
            message_id,
            is_compaction: line.is_compact_summary.unwrap_or(false),
            ..base
        };

        match message.content {
            Some(Content::Text(text)) => {
                let mut rec = Record {
                    kind: Some(RecordKind::Message),
                    role: Some(role),
                    source_event_kind: format!("claude:{kind}:text"),
                    text: Some(cap_text(text.into_owned(), MAX_TEXT_BYTES)),
                    ..base
                };
                rec.prompt_source = self.prompt_source(&rec, injected);
                out.records.push(rec);
            }
            Some(Content::Blocks(blocks)) => {
                // What the person attached (an image, a file) is part of their request: noted
                // after what they typed in the same message, or, with nothing typed, the
                // request itself (a pasted screenshot alone opens its turn). One record either
                // way, as a message is one request.
                let first = out.records.len();
                let mut attached: Vec<(u32, String)> = Vec::new();
                for (i, block) in blocks.into_iter().enumerate() {
                    let block_type = block.kind.as_deref().unwrap_or("unknown");
                    let mut rec = Record {
                        block: i as u32,
                        source_event_kind: format!("claude:{kind}:{block_type}"),
                        ..base.clone()
                    };
                    match block_type {
                        "text" => {
                            // Streaming leaves empty text blocks behind; they say nothing.
                            let Some(text) = block.text.filter(|t| !t.trim().is_empty()) else {
                                continue;
                            };
                            rec.kind = Some(RecordKind::Message);
                            rec.role = Some(role.clone());
                            rec.text = Some(cap_text(text.into_owned(), MAX_TEXT_BYTES));
                            rec.prompt_source = self.prompt_source(&rec, injected);
                        }
                        // An image or a file the person pasted or dropped is part of their
                        // request, or all of it: a prompt of a screenshot alone opens its turn.
                        "image" | "document" if role == "user" => {
                            let text = block
                                .source
                                .as_ref()
                                .filter(|s| str_at(s, &["type"]) == Some("text"))
                                .and_then(|s| str_at(s, &["data"]))
                                .filter(|t| !t.trim().is_empty())
                                .map_or_else(|| format!("[{block_type}]"), str::to_owned);
                            attached.push((i as u32, text));
                            continue;
                        }
                        "thinking" => {
                            let Some(text) = block.thinking.filter(|t| !t.is_empty()) else {
                                continue;
                            };
                            rec.kind = Some(RecordKind::Reasoning);
                            rec.role = Some(role.clone());
                            rec.text = Some(cap_text(text.into_owned(), MAX_TEXT_BYTES));
                        }
                        "tool_use" | "server_tool_use" => {
                            let name = block
                                .name
                                .map_or_else(|| "unknown".to_owned(), Cow::into_owned);
                            let id = block.id.map(Cow::into_owned);
                            if let Some(id) = &id {
                                super::remember_call(
                                    &mut self.pending_tools,
                                    id.clone(),
                                    name.clone(),
                                );
                            }
                            let mut input = block.input;
                            rec.file_paths = edited_paths(&name, input.as_ref());
                            if let Some(input) = input.as_mut() {
                                cap_json(input, MAX_INPUT_STRING_BYTES);
                            }
                            rec.kind = Some(RecordKind::ToolCall);
                            rec.role = Some(role.clone());
                            rec.tool_kind = Some(ToolKind::of(&name));
                            rec.tool_name = Some(name);
                            rec.tool_input = input;
                            rec.call_id = id;
                        }
                        "tool_result" | "web_search_tool_result" => {
                            let id = block.tool_use_id.map(Cow::into_owned);
                            let name = id.as_ref().and_then(|id| self.pending_tools.remove(id));
                            let text = block
                                .content
                                .as_ref()
                                .and_then(text_value)
                                .or_else(|| block.text.map(Cow::into_owned));
                            rec.kind = Some(RecordKind::ToolResult);
                            rec.tool_kind = name.as_deref().map(ToolKind::of);
                            // Claude Code flags a failed call (a shell's output then opens with
                            // `Exit code N`); a result it flags as no error is a success whatever
                            // its text says, and only a shell's output gives an exit code: a file
                            // read, a search or a sub-agent's report that mentions one is none.
                            (rec.exit_code, rec.outcome) = match block.is_error {
                                Some(false) => (None, Some(Outcome::Succeeded)),
                                flag => super::result_outcome(
                                    rec.tool_kind,
                                    text.as_deref().unwrap_or(""),
                                    flag,
                                ),
                            };
                            rec.tool_name = name;
                            rec.text = text.map(|t| cap_text(t, MAX_TOOL_OUTPUT_BYTES));
                            rec.call_id = id;
                        }
                        _ => continue,
                    }
                    out.records.push(rec);
                }
                if let Some(&(block, _)) = attached.first() {
                    let note: Vec<&str> = attached.iter().map(|(_, t)| t.as_str()).collect();
                    let note = note.join("\n\n");
                    let typed = out.records[first..].iter_mut().rev().find(|r| {
                        r.kind() == RecordKind::Message && r.role.as_deref() == Some("user")
                    });
                    match typed {
                        Some(typed) => {
                            let text = typed.text.take().unwrap_or_default();
                            typed.text =
                                Some(cap_text(format!("{text}\n\n{note}"), MAX_TEXT_BYTES));
                        }
                        None => {
                            let mut rec = Record {
                                block,
                                kind: Some(RecordKind::Message),
                                role: Some(role.clone()),
                                source_event_kind: format!("claude:{kind}:attachment"),
                                text: Some(cap_text(note, MAX_TEXT_BYTES)),
                                ..base.clone()
                            };
                            rec.prompt_source = self.prompt_source(&rec, injected);
                            out.records.push(rec);
                        }
                    }
                }
            }
            None => {}
        }
    }

    /// A `queued_command` attachment in prompt mode, as the user message it is: the person's
    /// when its origin says so or says nothing (Claude Code before origins), else injected (a
    /// peer session's message, an automatic continuation). Other modes (task notifications)
    /// and other attachments carry no record.
    fn queued_prompt(&self, a: Attachment<'_>, base: Record) -> Option<Record> {
        if a.kind.as_deref() != Some("queued_command")
            || a.command_mode.as_deref().is_some_and(|m| m != "prompt")
        {
            return None;
        }
        let text = a.prompt.as_ref().and_then(text_value)?;
        if text.trim().is_empty() {
            return None;
        }
        let typed = a.origin.and_then(|o| o.kind).is_none_or(|k| k == "human");
        let mut rec = Record {
            kind: Some(RecordKind::Message),
            role: Some("user".to_owned()),
            source_event_kind: "claude:attachment:queued_command".to_owned(),
            text: Some(cap_text(text, MAX_TEXT_BYTES)),
            ..base
        };
        rec.prompt_source = self.prompt_source(&rec, a.is_meta.unwrap_or(false) || !typed);
        Some(rec)
    }

    fn prompt_source(&self, rec: &Record, meta_line: bool) -> Option<PromptSource> {
        if rec.role.as_deref() != Some("user") {
            return None;
        }
        let text = rec.text.as_deref().unwrap_or("");
        Some(
            if meta_line || is_system_injected(text) || ide_context_only(text) {
                PromptSource::SystemInjected
            } else if rec.is_sidechain || self.is_subagent_file() {
                PromptSource::SpawnedAgent
            } else {
                PromptSource::Human
            },
        )
    }
}

/// What a `system` `api_error` line says: the API's message (or its status), and which retry
/// it was.
fn api_error_text(line: &RawLine<'_>) -> String {
    let error = line.error.as_ref();
    let said = error.and_then(|e| {
        str_at(e, &["message"])
            .or_else(|| str_at(e, &["error", "message"]))
            .or_else(|| str_at(e, &["error", "error", "message"]))
    });
    let status = error
        .and_then(|e| e.get("status"))
        .and_then(Value::as_u64)
        .filter(|s| *s > 0);
    let mut text = match (said, status) {
        (Some(m), Some(s)) => format!("API error {s}: {m}"),
        (Some(m), None) => format!("API error: {m}"),
        (None, Some(s)) => format!("API error {s}"),
        (None, None) => "API error".to_owned(),
    };
    if let Some(n) = line.retry_attempt.filter(|n| *n > 0) {
        text.push_str(&format!(" (retry {n})"));
    }
    text
}

/// Whether a text is only the editor's context the IDE extensions put before a prompt:
/// nothing the person typed.
fn ide_context_only(text: &str) -> bool {
    super::after_ide_context(text).is_some_and(|rest| rest.trim().is_empty())
}

impl SourceParser for ClaudeParser {
    fn agent(&self) -> Agent {
        Agent::Claude
    }

    fn meta(&self) -> &SessionMeta {
        &self.meta
    }

    fn save(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }

    fn parse_line(&mut self, raw: &str, out: &mut LineOutput) -> Result<(), serde_json::Error> {
        let line: RawLine<'_> = serde_json::from_str(raw)?;
        let Some(kind) = line.kind.clone() else {
            count_unknown(&mut self.meta, "<untyped>");
            return Ok(());
        };
        let timestamp = line_timestamp(&mut self.meta, line.timestamp.as_deref(), out);
        let timestamp = timestamp.as_deref();
        note_timestamp(&mut self.meta, timestamp);
        set_once(&mut self.meta.session_id, line.session_id.as_deref());
        set_once(&mut self.meta.tool_version, line.version.as_deref());
        set_once(&mut self.meta.cwd, line.cwd.as_deref());
        set_once(&mut self.meta.git_branch, line.git_branch.as_deref());
        set_once(&mut self.meta.agent_id, line.agent_id.as_deref());
        // How the session was started: `cli` when typed, `sdk-…` for `claude -p` and the SDKs.
        set_once(&mut self.meta.thread_source, line.entrypoint.as_deref());
        if let Some(uuid) = line.uuid.as_deref() {
            self.saw_line(uuid);
        }

        let base = Record {
            timestamp: timestamp.map(str::to_owned),
            is_sidechain: line.is_sidechain.unwrap_or(false),
            cwd: line.cwd.as_deref().map(str::to_owned),
            git_branch: line
                .git_branch
                .as_deref()
                .filter(|b| !b.is_empty())
                .map(str::to_owned),
            ..Record::default()
        };

        match kind.as_ref() {
            "user" | "assistant" => self.message_line(line, &kind, base, out),
            "system" => {
                let subtype = line.subtype.as_deref().unwrap_or("unknown");
                let compaction = subtype == "compact_boundary";
                let text = line
                    .content
                    .as_ref()
                    .and_then(text_value)
                    .or_else(|| compaction.then(|| "Conversation compacted".to_owned()))
                    .or_else(|| (subtype == "api_error").then(|| api_error_text(&line)));
                if let Some(text) = text {
                    out.records.push(Record {
                        kind: Some(RecordKind::Event),
                        source_event_kind: format!("claude:system:{subtype}"),
                        text: Some(cap_text(text, MAX_TEXT_BYTES)),
                        is_compaction: compaction,
                        ..base
                    });
                }
            }
            "summary" => self.summary(line.summary.as_deref(), line.leaf_uuid.as_deref()),
            "custom-title" => {
                set_latest(&mut self.custom_title, line.custom_title.as_deref());
                self.refresh_title();
            }
            "ai-title" => {
                set_latest(&mut self.ai_title, line.ai_title.as_deref());
                self.refresh_title();
            }
            "pr-link" => {
                // Claude records the PRs it opened: keep them searchable and linkable.
                let url = line.pr_url.as_deref().unwrap_or("");
                let text = match line.pr_number {
                    Some(n) => format!("PR #{n} {url}"),
                    None => format!("PR {url}"),
                };
                out.records.push(Record {
                    kind: Some(RecordKind::Event),
                    source_event_kind: "claude:pr-link".to_owned(),
                    text: Some(text.trim().to_owned()),
                    ..base
                });
            }
            // Hook results, reminders, memory files: the harness's own context, not a record.
            // A message typed while the agent worked is one, though: Claude Code writes it only
            // as a `queued_command` attachment, never as a user line.
            "attachment" => {
                if let Some(rec) = line.attachment.and_then(|a| self.queued_prompt(a, base)) {
                    out.records.push(rec);
                }
            }
            other if KNOWN_SILENT_TYPES.contains(&other) => {}
            other => count_unknown(&mut self.meta, other),
        }
        Ok(())
    }
}

// ---- the line shapes, read without building a JSON tree ---------------------------------------
//
// Only the fields Cairn uses are named; serde skips everything else (the large `toolUseResult`
// copies, thinking signatures, progress payloads) without allocating. Strings borrow from the
// line unless they contain escapes.

#[derive(Deserialize, Default)]
struct RawLine<'a> {
    #[serde(rename = "type", borrow, default, deserialize_with = "lenient::str")]
    kind: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "lenient::str")]
    timestamp: Option<Cow<'a, str>>,
    #[serde(
        rename = "sessionId",
        borrow,
        default,
        deserialize_with = "lenient::str"
    )]
    session_id: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "lenient::str")]
    version: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "lenient::str")]
    cwd: Option<Cow<'a, str>>,
    #[serde(
        rename = "gitBranch",
        borrow,
        default,
        deserialize_with = "lenient::str"
    )]
    git_branch: Option<Cow<'a, str>>,
    #[serde(rename = "agentId", borrow, default, deserialize_with = "lenient::str")]
    agent_id: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "lenient::str")]
    entrypoint: Option<Cow<'a, str>>,
    #[serde(rename = "isSidechain", default, deserialize_with = "lenient::bool")]
    is_sidechain: Option<bool>,
    #[serde(rename = "isMeta", default, deserialize_with = "lenient::bool")]
    is_meta: Option<bool>,
    #[serde(
        rename = "isCompactSummary",
        default,
        deserialize_with = "lenient::bool"
    )]
    is_compact_summary: Option<bool>,
    #[serde(borrow, default, deserialize_with = "lenient::object")]
    message: Option<Message<'a>>,
    #[serde(borrow, default, deserialize_with = "lenient::str")]
    subtype: Option<Cow<'a, str>>,
    #[serde(default)]
    content: Option<Value>,
    #[serde(borrow, default, deserialize_with = "lenient::str")]
    summary: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "lenient::str")]
    uuid: Option<Cow<'a, str>>,
    #[serde(
        rename = "leafUuid",
        borrow,
        default,
        deserialize_with = "lenient::str"
    )]
    leaf_uuid: Option<Cow<'a, str>>,
    #[serde(
        rename = "customTitle",
        borrow,
        default,
        deserialize_with = "lenient::str"
    )]
    custom_title: Option<Cow<'a, str>>,
    #[serde(rename = "aiTitle", borrow, default, deserialize_with = "lenient::str")]
    ai_title: Option<Cow<'a, str>>,
    #[serde(rename = "prUrl", borrow, default, deserialize_with = "lenient::str")]
    pr_url: Option<Cow<'a, str>>,
    #[serde(rename = "prNumber", default, deserialize_with = "lenient::u64")]
    pr_number: Option<u64>,
    #[serde(borrow, default, deserialize_with = "lenient::object")]
    attachment: Option<Attachment<'a>>,
    /// An assistant line Claude Code wrote for a failed API call (the model said nothing).
    #[serde(
        rename = "isApiErrorMessage",
        default,
        deserialize_with = "lenient::bool"
    )]
    is_api_error_message: Option<bool>,
    /// A `system` line's `api_error`: the error the API answered.
    #[serde(default)]
    error: Option<Value>,
    #[serde(rename = "retryAttempt", default, deserialize_with = "lenient::u64")]
    retry_attempt: Option<u64>,
}

/// An `attachment` line's payload; only a queued prompt's fields are named.
#[derive(Deserialize, Default)]
struct Attachment<'a> {
    #[serde(rename = "type", borrow, default, deserialize_with = "lenient::str")]
    kind: Option<Cow<'a, str>>,
    #[serde(
        rename = "commandMode",
        borrow,
        default,
        deserialize_with = "lenient::str"
    )]
    command_mode: Option<Cow<'a, str>>,
    /// A string, or content blocks (text beside pasted images).
    #[serde(default)]
    prompt: Option<Value>,
    #[serde(borrow, default, deserialize_with = "lenient::object")]
    origin: Option<Origin<'a>>,
    #[serde(rename = "isMeta", default, deserialize_with = "lenient::bool")]
    is_meta: Option<bool>,
}

#[derive(Deserialize, Default)]
struct Origin<'a> {
    #[serde(borrow, default, deserialize_with = "lenient::str")]
    kind: Option<Cow<'a, str>>,
}

#[derive(Deserialize, Default)]
struct Message<'a> {
    #[serde(borrow, default, deserialize_with = "lenient::str")]
    role: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "lenient::str")]
    model: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "lenient::str")]
    id: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    content: Option<Content<'a>>,
    #[serde(default)]
    usage: Option<Usage>,
}

/// `message.content`: a typed prompt is a string, everything else an array of blocks.
enum Content<'a> {
    Text(Cow<'a, str>),
    Blocks(Vec<Block<'a>>),
}

impl<'de: 'a, 'a> Deserialize<'de> for Content<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> serde::de::Visitor<'de> for V<'a> {
            type Value = Content<'a>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a string or an array of content blocks")
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(Content::Text(Cow::Borrowed(v)))
            }
            fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
                Ok(Content::Text(Cow::Owned(v.to_owned())))
            }
            fn visit_string<E>(self, v: String) -> Result<Self::Value, E> {
                Ok(Content::Text(Cow::Owned(v)))
            }
            fn visit_unit<E>(self) -> Result<Self::Value, E> {
                Ok(Content::Blocks(Vec::new()))
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> Result<Self::Value, A::Error> {
                let mut blocks = Vec::new();
                while let Some(block) = seq.next_element::<Block<'a>>()? {
                    blocks.push(block);
                }
                Ok(Content::Blocks(blocks))
            }
        }
        d.deserialize_any(V(std::marker::PhantomData))
    }
}

#[derive(Deserialize, Default)]
struct Block<'a> {
    #[serde(rename = "type", borrow, default, deserialize_with = "lenient::str")]
    kind: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "lenient::str")]
    text: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "lenient::str")]
    thinking: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "lenient::str")]
    name: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "lenient::str")]
    id: Option<Cow<'a, str>>,
    #[serde(default)]
    input: Option<Value>,
    #[serde(borrow, default, deserialize_with = "lenient::str")]
    tool_use_id: Option<Cow<'a, str>>,
    #[serde(default)]
    content: Option<Value>,
    #[serde(default, deserialize_with = "lenient::bool")]
    is_error: Option<bool>,
    /// An image's or a document's data (`{"type": "base64" | "text", "data", …}`).
    #[serde(default)]
    source: Option<Value>,
}

#[derive(Deserialize, Default)]
struct Usage {
    #[serde(default, deserialize_with = "lenient::u64_or_zero")]
    input_tokens: u64,
    #[serde(default, deserialize_with = "lenient::u64_or_zero")]
    output_tokens: u64,
    #[serde(default, deserialize_with = "lenient::u64_or_zero")]
    cache_creation_input_tokens: u64,
    #[serde(default, deserialize_with = "lenient::u64_or_zero")]
    cache_read_input_tokens: u64,
}

impl From<Usage> for TokenUsage {
    fn from(u: Usage) -> TokenUsage {
        TokenUsage {
            input: u.input_tokens,
            output: u.output_tokens,
            cache_creation: u.cache_creation_input_tokens,
            cache_read: u.cache_read_input_tokens,
            reasoning: 0,
        }
    }
}

/// Paths a Claude edit tool writes.
fn edited_paths(tool: &str, input: Option<&Value>) -> Vec<String> {
    let Some(input) = input else {
        return Vec::new();
    };
    let key = match tool {
        "Edit" | "MultiEdit" | "Write" => "file_path",
        "NotebookEdit" => "notebook_path",
        _ => return Vec::new(),
    };
    str_at(input, &[key])
        .map(|p| vec![p.to_owned()])
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parse(lines: &[Value], role: FileRole) -> (ClaudeParser, LineOutput) {
        let mut parser = ClaudeParser::resume(role, None).unwrap();
        let mut out = LineOutput::default();
        for line in lines {
            parser.parse_line(&line.to_string(), &mut out).unwrap();
        }
        (parser, out)
    }

    #[test]
    fn every_tool_use_block_of_a_line_is_kept() {
        let line = json!({"type":"assistant","sessionId":"s","message":{"id":"msg_1","role":"assistant","model":"claude-opus-4-5","content":[
            {"type":"text","text":"Running both"},
            {"type":"tool_use","id":"toolu_1","name":"Bash","input":{"command":"ls"}},
            {"type":"tool_use","id":"toolu_2","name":"Edit","input":{"file_path":"/r/a.rs","old_string":"a","new_string":"b"}}
        ]}});
        let (parser, out) = parse(&[line], FileRole::Main);
        let kinds: Vec<_> = out
            .records
            .iter()
            .map(|r| (r.block, r.kind(), r.tool_name.clone()))
            .collect();
        assert_eq!(
            kinds,
            vec![
                (0, RecordKind::Message, None),
                (1, RecordKind::ToolCall, Some("Bash".into())),
                (2, RecordKind::ToolCall, Some("Edit".into())),
            ]
        );
        assert_eq!(out.records[2].file_paths, vec!["/r/a.rs"]);
        assert_eq!(out.records[2].tool_kind, Some(ToolKind::FileEdit));
        assert_eq!(parser.meta.model.as_deref(), Some("claude-opus-4-5"));
    }

    /// Claude Code's shell on Windows, and the task list that replaced TodoWrite.
    #[test]
    fn powershell_is_a_shell_and_the_task_list_is_housekeeping() {
        let line = json!({"type":"assistant","message":{"role":"assistant","content":[
            {"type":"tool_use","id":"t1","name":"PowerShell","input":{"command":"Get-ChildItem"}},
            {"type":"tool_use","id":"t2","name":"TaskCreate","input":{"subject":"tests"}}
        ]}});
        let (_, out) = parse(&[line], FileRole::Main);
        let kinds: Vec<_> = out.records.iter().map(|r| r.tool_kind).collect();
        assert_eq!(kinds, [Some(ToolKind::Exec), Some(ToolKind::Housekeeping)]);
    }

    #[test]
    fn tool_results_take_the_name_of_their_call_and_an_outcome() {
        let call = json!({"type":"assistant","message":{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"false"}}]}});
        let result = json!({"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"Exit code 1","is_error":true}]}});
        let (_, out) = parse(&[call, result], FileRole::Main);
        let r = &out.records[1];
        assert_eq!(r.kind(), RecordKind::ToolResult);
        assert_eq!(r.tool_name.as_deref(), Some("Bash"));
        assert_eq!(r.exit_code, Some(1));
        assert_eq!(r.outcome, Some(Outcome::Failed));
        assert_eq!(r.role, None);
        assert_eq!(r.prompt_source, None);
    }

    /// A failed API call is an event, not the model's answer: Claude Code's assistant line for
    /// it, and its `system` `api_error` line (no content, the error and the retry).
    #[test]
    fn api_errors_are_events_not_answers() {
        let prompt = json!({"type":"user","message":{"role":"user","content":"deploy it"}});
        let synthetic = json!({"type":"assistant","isApiErrorMessage":true,"message":{"id":"m1","model":"<synthetic>","role":"assistant",
            "content":[{"type":"text","text":"API Error: 529 overloaded"}],"usage":{"input_tokens":0,"output_tokens":0}}});
        let system = json!({"type":"system","subtype":"api_error","level":"error",
            "error":{"status":529,"error":{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}},"retryAttempt":2});
        let bare = json!({"type":"system","subtype":"api_error","error":"not an object"});
        let (parser, out) = parse(&[prompt, synthetic, system, bare], FileRole::Main);
        let got: Vec<_> = out
            .records
            .iter()
            .map(|r| (r.kind(), r.text.as_deref().unwrap_or("")))
            .collect();
        assert_eq!(
            got,
            [
                (RecordKind::Message, "deploy it"),
                (RecordKind::Event, "API Error: 529 overloaded"),
                (RecordKind::Event, "API error 529: Overloaded (retry 2)"),
                (RecordKind::Event, "API error"),
            ]
        );
        assert_eq!(parser.meta.model, None, "<synthetic> is no model");
    }

    /// A prompt of a pasted screenshot alone is the person's request and opens its turn; what is
    /// attached beside typed words is noted after them, a text document by its words.
    #[test]
    fn an_image_or_a_document_is_part_of_the_persons_request() {
        let image = json!({"type":"user","message":{"role":"user","content":[
            {"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBORw0KGgo="}}]}});
        let answer = json!({"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"I see the error dialog."}]}});
        let both = json!({"type":"user","message":{"role":"user","content":[
            {"type":"document","source":{"type":"text","media_type":"text/plain","data":"TODO: fix the parser"}},
            {"type":"text","text":"and this file"},
            {"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBORw0KGgo="}}]}});
        let (_, out) = parse(&[image, answer, both], FileRole::Main);
        let got: Vec<_> = out
            .records
            .iter()
            .map(|r| (r.block, r.text.as_deref().unwrap_or(""), r.prompt_source))
            .collect();
        assert_eq!(
            got,
            [
                (0, "[image]", Some(PromptSource::Human)),
                (0, "I see the error dialog.", None),
                (
                    1,
                    "and this file\n\nTODO: fix the parser\n\n[image]",
                    Some(PromptSource::Human)
                ),
            ]
        );
    }

    /// A result Claude Code flags as no error succeeded, whatever its text says (a file read, a
    /// search, a sub-agent's report or a shell's output that mentions an exit code).
    #[test]
    fn an_exit_code_in_a_file_or_a_report_is_no_failure() {
        let mut lines = Vec::new();
        for (id, name) in [("r", "Read"), ("g", "Grep"), ("a", "Task"), ("b", "Bash")] {
            lines.push(json!({"type":"assistant","message":{"role":"assistant","content":[{"type":"tool_use","id":id,"name":name,"input":{}}]}}));
            lines.push(json!({"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":id,
                "content":"  2\u{2192}echo 'failed: exit code 2'","is_error":false}]}}));
        }
        // Unflagged (an older Claude Code): only a shell's output gives an exit code.
        lines.push(json!({"type":"assistant","message":{"role":"assistant","content":[{"type":"tool_use","id":"u","name":"Read","input":{}}]}}));
        lines.push(json!({"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"u",
            "content":"exit code 2"}]}}));
        let (_, out) = parse(&lines, FileRole::Main);
        let results: Vec<_> = out
            .records
            .iter()
            .filter(|r| r.kind() == RecordKind::ToolResult)
            .map(|r| (r.tool_name.as_deref().unwrap_or(""), r.exit_code, r.outcome))
            .collect();
        assert_eq!(
            results,
            [
                ("Read", None, Some(Outcome::Succeeded)),
                ("Grep", None, Some(Outcome::Succeeded)),
                ("Task", None, Some(Outcome::Succeeded)),
                ("Bash", None, Some(Outcome::Succeeded)),
                ("Read", None, None),
            ]
        );
    }

    #[test]
    fn prompt_sources() {
        let human = json!({"type":"user","message":{"role":"user","content":"fix the login bug"}});
        let meta =
            json!({"type":"user","isMeta":true,"message":{"role":"user","content":"Caveat: ..."}});
        let command = json!({"type":"user","message":{"role":"user","content":"<local-command-stdout>ok</local-command-stdout>"}});
        let side = json!({"type":"user","isSidechain":true,"message":{"role":"user","content":"search hex.pm"}});
        let (_, out) = parse(&[human, meta, command, side], FileRole::Main);
        let sources: Vec<_> = out.records.iter().map(|r| r.prompt_source).collect();
        assert_eq!(
            sources,
            vec![
                Some(PromptSource::Human),
                Some(PromptSource::SystemInjected),
                Some(PromptSource::SystemInjected),
                Some(PromptSource::SpawnedAgent),
            ]
        );
        let (_, sub) = parse(
            &[json!({"type":"user","message":{"role":"user","content":"do the subtask"}})],
            FileRole::Subagent,
        );
        assert_eq!(
            sub.records[0].prompt_source,
            Some(PromptSource::SpawnedAgent)
        );
    }

    /// A message typed while the agent worked is only a `queued_command` attachment; it is the
    /// person's prompt, text beside a pasted image included. A peer's, a meta one, a task
    /// notification, other attachments and payloads of the wrong type are not.
    #[test]
    fn a_prompt_queued_while_the_agent_worked_is_read() {
        let queued = |attachment: Value| json!({"type":"attachment","timestamp":"2026-08-01T10:00:00Z","attachment":attachment});
        let (parser, out) = parse(
            &[
                queued(
                    json!({"type":"queued_command","commandMode":"prompt","origin":{"kind":"human"},"prompt":"also run the linter"}),
                ),
                queued(
                    json!({"type":"queued_command","commandMode":"prompt","prompt":[{"type":"image","source":{"type":"base64","data":"iVBOR"}},{"type":"text","text":"this screen"}]}),
                ),
                queued(
                    json!({"type":"queued_command","commandMode":"prompt","origin":{"kind":"peer","from":"s2"},"prompt":"from another session"}),
                ),
                queued(
                    json!({"type":"queued_command","commandMode":"prompt","isMeta":true,"prompt":"meta"}),
                ),
                queued(
                    json!({"type":"queued_command","commandMode":"prompt","prompt":"<task-notification><status>completed</status></task-notification>"}),
                ),
                queued(
                    json!({"type":"queued_command","commandMode":"task-notification","prompt":"done"}),
                ),
                queued(json!({"type":"queued_command","commandMode":"prompt","prompt":"  "})),
                queued(json!({"type":"nested_memory","content":"CLAUDE.md text"})),
                queued(json!("not an object")),
                queued(json!({"type":"queued_command","prompt":5,"origin":[1],"commandMode":{}})),
            ],
            FileRole::Main,
        );
        let got: Vec<_> = out
            .records
            .iter()
            .map(|r| (r.text.as_deref().unwrap_or(""), r.prompt_source))
            .collect();
        assert_eq!(
            got,
            vec![
                ("also run the linter", Some(PromptSource::Human)),
                ("this screen", Some(PromptSource::Human)),
                ("from another session", Some(PromptSource::SystemInjected)),
                ("meta", Some(PromptSource::SystemInjected)),
                (
                    "<task-notification><status>completed</status></task-notification>",
                    Some(PromptSource::SystemInjected)
                ),
            ]
        );
        let r = &out.records[0];
        assert_eq!(r.kind(), RecordKind::Message);
        assert_eq!(r.role.as_deref(), Some("user"));
        assert_eq!(r.timestamp.as_deref(), Some("2026-08-01T10:00:00Z"));
        assert_eq!(r.source_event_kind, "claude:attachment:queued_command");
        assert!(parser.meta.unknown_types.is_empty());
    }

    /// The IDE extensions put the open file and the selection before a prompt, in blocks of
    /// their own (or at the head of a string prompt): context, not what the person typed. A
    /// `!` command's output and another agent's message are not the person's either.
    #[test]
    fn editor_context_and_command_output_are_not_prompts() {
        let blocks = json!({"type":"user","message":{"role":"user","content":[
            {"type":"text","text":"<ide_opened_file>The user opened the file /r/a.rs in the IDE.</ide_opened_file>"},
            {"type":"text","text":"<ide_selection>The user selected lines 1 to 2:\nfn a()</ide_selection>"},
            {"type":"text","text":"why does this fail"}]}});
        let headed = json!({"type":"user","message":{"role":"user","content":
            "<ide_opened_file>The user opened /r/b.rs</ide_opened_file>\nand this one?"}});
        let cut = json!({"type":"user","message":{"role":"user","content":"<ide_selection>The user selected"}});
        let out_line = json!({"type":"user","message":{"role":"user","content":"<bash-stdout>ok</bash-stdout><bash-stderr></bash-stderr>"}});
        let peer = json!({"type":"user","message":{"role":"user","content":"<teammate-message teammate_id=\"t1\">done</teammate-message>"}});
        let (_, out) = parse(&[blocks, headed, cut, out_line, peer], FileRole::Main);
        let sources: Vec<_> = out.records.iter().map(|r| r.prompt_source).collect();
        assert_eq!(
            sources,
            [
                Some(PromptSource::SystemInjected),
                Some(PromptSource::SystemInjected),
                Some(PromptSource::Human),
                Some(PromptSource::Human),
                Some(PromptSource::SystemInjected),
                Some(PromptSource::SystemInjected),
                Some(PromptSource::SystemInjected),
            ]
        );
    }

    #[test]
    fn usage_is_reported_per_message_id_and_titles_prefer_custom() {
        let a = json!({"type":"assistant","message":{"id":"m1","role":"assistant","content":[{"type":"text","text":"a"}],"usage":{"input_tokens":5,"output_tokens":1}}});
        let b = json!({"type":"assistant","message":{"id":"m1","role":"assistant","content":[{"type":"text","text":"b"}],"usage":{"input_tokens":5,"output_tokens":9}}});
        let summary = json!({"type":"summary","summary":"Summary title"});
        let custom = json!({"type":"custom-title","customTitle":"Custom"});
        let (parser, out) = parse(&[a, b, summary, custom], FileRole::Main);
        assert_eq!(out.usage.len(), 2);
        assert_eq!(out.usage[1].1.output, 9);
        assert_eq!(parser.meta.title.as_deref(), Some("Custom"));
    }

    #[test]
    fn a_summary_titles_only_the_file_holding_its_leaf() {
        let line = |uuid: &str| json!({"type":"user","uuid":uuid,"message":{"role":"user","content":"hi"}});
        let summary =
            |text: &str, leaf: &str| json!({"type":"summary","summary":text,"leafUuid":leaf});
        let title = |lines: &[Value]| parse(lines, FileRole::Main).0.meta.title;
        // Written first, its leaf read later: a resumed session's file opens so.
        assert_eq!(
            title(&[summary("Ahead", "u2"), line("u1"), line("u2")]).as_deref(),
            Some("Ahead")
        );
        // Written after its conversation ended.
        assert_eq!(
            title(&[line("u1"), line("u2"), summary("After", "u2")]).as_deref(),
            Some("After")
        );
        // Another session's, or without a leaf: no title from it.
        assert_eq!(title(&[line("u1"), summary("Other", "elsewhere")]), None);
        assert_eq!(
            title(&[line("u1"), json!({"type":"summary","summary":"No leaf"})]),
            None
        );
        // Among several, one of another session's does not displace this file's.
        assert_eq!(
            title(&[
                summary("Mine", "u1"),
                summary("Theirs", "x9"),
                line("u1"),
                line("u2"),
            ])
            .as_deref(),
            Some("Mine")
        );
        // The wait survives a capture's end: the leaf comes in the next read.
        let (first, _) = parse(&[summary("Later", "u3"), line("u1")], FileRole::Main);
        assert_eq!(first.meta.title, None);
        let mut resumed = ClaudeParser::resume(FileRole::Main, Some(&first.save())).unwrap();
        let mut out = LineOutput::default();
        resumed
            .parse_line(&line("u3").to_string(), &mut out)
            .unwrap();
        assert_eq!(resumed.meta.title.as_deref(), Some("Later"));
    }

    #[test]
    fn fields_of_unexpected_types_read_as_absent_not_as_errors() {
        let line = json!({"type":"user","timestamp":12345,"isSidechain":"no","sessionId":["x"],
            "message":{"role":"user","content":"still read","id":{"weird":true}}});
        let (parser, out) = parse(&[line], FileRole::Main);
        assert_eq!(out.records.len(), 1);
        assert_eq!(out.records[0].text.as_deref(), Some("still read"));
        assert_eq!(out.records[0].timestamp, None);
        assert_eq!(parser.meta.session_id, None);
    }

    #[test]
    fn timestamps_that_are_not_rfc3339_are_unknown_with_one_warning() {
        let at = |ts: &str, text: &str| json!({"type":"user","timestamp":ts,"message":{"role":"user","content":text}});
        let (parser, out) = parse(
            &[
                at("2026-01-01T00:00:05Z", "first"),
                at("2099-01-01é000000", "crafted"),
                at("2026-01-01T00:00:06Z\u{1b}]0;pwned\u{7}", "escape"),
                at("2026-01-01T02:00:07+02:00", "offset"),
            ],
            FileRole::Main,
        );
        let stamps: Vec<Option<&str>> =
            out.records.iter().map(|r| r.timestamp.as_deref()).collect();
        assert_eq!(
            stamps,
            [
                Some("2026-01-01T00:00:05Z"),
                None,
                None,
                Some("2026-01-01T00:00:07Z")
            ]
        );
        assert_eq!(parser.meta.unparsed_timestamps, 2);
        assert_eq!(
            parser.meta.started_at.as_deref(),
            Some("2026-01-01T00:00:05Z")
        );
        assert_eq!(
            parser.meta.updated_at.as_deref(),
            Some("2026-01-01T00:00:07Z")
        );
        assert_eq!(out.warnings.len(), 1, "{:?}", out.warnings);
        assert!(
            out.warnings[0].contains("2099-01-01é000000"),
            "{:?}",
            out.warnings
        );
    }

    #[test]
    fn unknown_types_are_counted_and_state_round_trips() {
        let (parser, out) = parse(&[json!({"type":"brand-new-thing"})], FileRole::Main);
        assert!(out.records.is_empty());
        assert_eq!(parser.meta.unknown_types.get("brand-new-thing"), Some(&1));
        let saved = parser.save();
        let resumed = ClaudeParser::resume(FileRole::Main, Some(&saved)).unwrap();
        assert_eq!(resumed.meta, parser.meta);
    }
}

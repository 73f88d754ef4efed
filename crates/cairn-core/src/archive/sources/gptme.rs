//! gptme: one folder a conversation under `~/.local/share/gptme/logs/<conversation>/`
//! (`$GPTME_LOGS_HOME`, else `$XDG_DATA_HOME/gptme/logs`; macOS's application data folder when
//! gptme never made the XDG one), holding `conversation.jsonl` (read here) and `config.toml`
//! beside it (`[chat]` `workspace`, `name`, `model`, read again at every read). The conversation is
//! named by its folder.
//!
//! A line is a message `{role, content, timestamp, files, pinned, hide, call_id, metadata}`:
//! `role` is `system`, `user` or `assistant`; `timestamp` is the writer's local time without a
//! zone (Python's `isoformat()`), read as this machine's; `metadata` holds an assistant's `model`
//! and `usage`. gptme runs the code blocks of an answer whose fence names one of its tools
//! (```` ```shell ````, ```` ```save path ````, …) and, with native tool calls, the lines
//! `@<tool>(<call id>): {arguments}`; what a tool did comes back as `system` messages (the last
//! of a native call's with its `call_id` and `metadata.tool`). A result with no call id
//! answers the oldest call still open; a `system` message with none open is a note.

use std::collections::VecDeque;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::prompt;
use super::{
    LineOutput, MAX_INPUT_STRING_BYTES, MAX_TEXT_BYTES, MAX_TOOL_OUTPUT_BYTES, SessionMeta,
    SourceParser, cap_json, cap_text, count_unknown, local_timestamp, set_latest, str_at, u64_at,
};
use crate::archive::discover::{DirOrigin, FoundFile};
use crate::archive::{Agent, Outcome, PromptSource, Record, RecordKind, TokenUsage, ToolKind};

/// The variable naming gptme's logs folder (AgentsView's name), then gptme's own.
pub const ENV_DIR: &str = "GPTME_DIR";
pub const LOGS_HOME: &str = "GPTME_LOGS_HOME";

/// A conversation's messages, in its folder.
pub(crate) const CONVERSATION: &str = "conversation.jsonl";

/// The conversation's settings beside it, and the most of them read.
pub(crate) const CONFIG: &str = "config.toml";
const MAX_CONFIG_BYTES: u64 = 1024 * 1024;

/// Where gptme keeps its conversations: `$GPTME_DIR`, else `$GPTME_LOGS_HOME`, else
/// `$XDG_DATA_HOME/gptme/logs` or `~/.local/share/gptme/logs`, and on macOS also
/// `~/Library/Application Support/gptme/logs` (gptme's platform folder, used when the XDG one
/// does not exist).
pub fn locations(
    env: impl Fn(&str) -> Option<PathBuf>,
    home: Option<&Path>,
) -> Vec<(PathBuf, DirOrigin)> {
    locations_on(env, home, cfg!(target_os = "macos"))
}

fn locations_on(
    env: impl Fn(&str) -> Option<PathBuf>,
    home: Option<&Path>,
    macos: bool,
) -> Vec<(PathBuf, DirOrigin)> {
    if let Some(dir) = env(ENV_DIR).or_else(|| env(LOGS_HOME)) {
        return vec![(dir, DirOrigin::Env)];
    }
    let mut dirs = Vec::new();
    // The platform's data folder: a default, not a setting (see `opencode::data_folder`).
    match env("XDG_DATA_HOME").filter(|p| p.is_absolute()) {
        Some(data) => dirs.push((data.join("gptme/logs"), DirOrigin::Default)),
        None => dirs.extend(home.map(|h| (h.join(".local/share/gptme/logs"), DirOrigin::Default))),
    }
    if macos {
        dirs.extend(home.map(|h| {
            (
                h.join("Library/Application Support/gptme/logs"),
                DirOrigin::Default,
            )
        }));
    }
    dirs
}

/// A conversation's `conversation.jsonl`, named by its folder.
pub fn classify(path: &Path) -> Option<FoundFile> {
    FoundFile::named_by_folder(Agent::Gptme, path, CONVERSATION)
}

/// Whether a transcript's path is gptme's (for the hook, given only a path).
pub fn owns_path(path: &Path) -> bool {
    path.to_string_lossy().contains("/gptme/logs/")
        && path.file_name().is_some_and(|n| n == CONVERSATION)
}

/// A call the conversation has not seen the result of.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Open {
    name: String,
    /// A native call's id; a code block's call has none.
    id: Option<String>,
}

/// Calls kept waiting for a result at most (a transcript of calls never answered stays small:
/// the state is saved after every batch).
const MAX_OPEN_CALLS: usize = 256;

#[derive(Debug, Serialize, Deserialize)]
pub struct GptmeParser {
    meta: SessionMeta,
    /// The calls of the answers whose results have not come back, oldest first.
    pending: VecDeque<Open>,
    /// The zone the conversation's times are read in: this machine's (set at every resume).
    #[serde(skip, default = "jiff::tz::TimeZone::system")]
    zone: jiff::tz::TimeZone,
}

impl GptmeParser {
    pub fn resume(saved: Option<&Value>) -> Result<Self, serde_json::Error> {
        match saved {
            Some(state) => serde_json::from_value(state.clone()),
            None => Ok(GptmeParser {
                meta: SessionMeta::default(),
                pending: VecDeque::new(),
                zone: jiff::tz::TimeZone::system(),
            }),
        }
    }

    /// The parser of `file`, resumed, with what the settings beside it say now: the folder
    /// the conversation worked in (else where its `workspace` link points), its name and model.
    pub fn for_file(file: &FoundFile, saved: Option<&Value>) -> Result<Self, serde_json::Error> {
        let mut parser = Self::resume(saved)?;
        let folder = file.path.parent().unwrap_or(Path::new(""));
        let chat = read_config(&folder.join(CONFIG));
        let at = |key: &str| {
            chat.as_ref()
                .and_then(|c| c.get(key))
                .and_then(toml::Value::as_str)
                .filter(|v| !v.trim().is_empty())
        };
        let workspace = at("workspace")
            .map(|w| match w.strip_prefix("~/") {
                Some(rest) => dirs::home_dir().map_or_else(|| PathBuf::from(w), |h| h.join(rest)),
                None => PathBuf::from(w),
            })
            .or_else(|| std::fs::read_link(folder.join("workspace")).ok())
            .filter(|w| w.is_absolute());
        // The link's target is read here, not from a redacted file: kept as a path is.
        if let Some(w) = workspace.as_deref().and_then(Path::to_str) {
            set_latest(
                &mut parser.meta.cwd,
                Some(&crate::archive::store::at_rest(w)),
            );
        }
        set_latest(&mut parser.meta.title, at("name"));
        set_latest(&mut parser.meta.model, at("model"));
        Ok(parser)
    }

    /// An answer: its text, and a call for each block or native call in it that names a tool.
    fn answer(&mut self, msg: &Value, text: &str, base: Record, out: &mut LineOutput) {
        let metadata = msg.get("metadata").filter(|m| m.is_object());
        if let Some(m) = metadata {
            set_latest(&mut self.meta.model, str_at(m, &["model"]));
            if let Some(u) = m.get("usage").filter(|u| u.is_object()) {
                let usage = TokenUsage {
                    input: u64_at(u, "input_tokens"),
                    output: u64_at(u, "output_tokens"),
                    cache_creation: u64_at(u, "cache_creation_tokens"),
                    cache_read: u64_at(u, "cache_read_tokens"),
                    reasoning: u64_at(u, "reasoning_tokens"),
                };
                if usage != TokenUsage::default() {
                    let id = base.timestamp.as_deref().unwrap_or("message");
                    out.usage.push((id.to_owned(), usage));
                }
            }
        }
        let base = Record {
            role: Some("assistant".to_owned()),
            ..base
        };
        if !text.trim().is_empty() {
            out.records.push(Record {
                kind: Some(RecordKind::Message),
                source_event_kind: "gptme:assistant".to_owned(),
                text: Some(cap_text(text.to_owned(), MAX_TEXT_BYTES)),
                ..base.clone()
            });
        }
        for (i, call) in calls(text).into_iter().enumerate() {
            let kind = tool_kind(&call.name);
            let file_paths = match (kind, call.input.get("path").and_then(Value::as_str)) {
                (ToolKind::FileEdit, Some(p)) if !p.is_empty() => vec![p.to_owned()],
                _ => Vec::new(),
            };
            let mut input = call.input;
            cap_json(&mut input, MAX_INPUT_STRING_BYTES);
            if self.pending.len() >= MAX_OPEN_CALLS {
                self.pending.pop_front();
            }
            self.pending.push_back(Open {
                name: call.name.clone(),
                id: call.id.clone(),
            });
            out.records.push(Record {
                block: u32::try_from(i + 1).unwrap_or(u32::MAX),
                kind: Some(RecordKind::ToolCall),
                source_event_kind: "gptme:tool_call".to_owned(),
                tool_kind: Some(kind),
                tool_name: Some(call.name),
                tool_input: Some(input),
                call_id: call.id,
                file_paths,
                ..base.clone()
            });
        }
    }

    /// A system message: what a call did (its own by id, else the oldest open one's), or a note.
    /// A message whose role says it is a tool's (`tool`, as other writers of the format put it)
    /// is a result even with no call open.
    fn system(&mut self, msg: &Value, text: &str, base: Record, out: &mut LineOutput) {
        let id = str_at(msg, &["call_id"]);
        let open = match id {
            Some(id) => self
                .pending
                .iter()
                .position(|o| o.id.as_deref() == Some(id))
                .and_then(|at| self.pending.remove(at)),
            None => self.pending.pop_front(),
        };
        let named = str_at(msg, &["metadata", "tool"]);
        let by_role = (str_at(msg, &["role"]) == Some("tool")).then(|| "tool".to_owned());
        let Some(name) = named
            .map(str::to_owned)
            .or_else(|| open.map(|o| o.name))
            .or(by_role)
        else {
            out.records.push(Record {
                kind: Some(RecordKind::Event),
                source_event_kind: "gptme:system".to_owned(),
                text: Some(cap_text(text.to_owned(), MAX_TEXT_BYTES)),
                ..base
            });
            return;
        };
        let kind = tool_kind(&name);
        let (exit_code, outcome) = result_of(kind, text);
        out.records.push(Record {
            kind: Some(RecordKind::ToolResult),
            source_event_kind: "gptme:tool_result".to_owned(),
            tool_kind: Some(kind),
            tool_name: Some(name),
            call_id: id.map(str::to_owned),
            text: Some(cap_text(text.to_owned(), MAX_TOOL_OUTPUT_BYTES)),
            exit_code,
            outcome,
            ..base
        });
    }
}

impl SourceParser for GptmeParser {
    fn agent(&self) -> Agent {
        Agent::Gptme
    }

    fn meta(&self) -> &SessionMeta {
        &self.meta
    }

    fn save(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }

    fn parse_line(&mut self, raw: &str, out: &mut LineOutput) -> Result<(), serde_json::Error> {
        let msg: Value = serde_json::from_str(raw)?;
        let timestamp = local_timestamp(
            &mut self.meta,
            str_at(&msg, &["timestamp"]),
            out,
            &self.zone,
        );
        let base = Record {
            timestamp,
            ..Record::default()
        };
        let text = match msg.get("content") {
            Some(Value::String(s)) => s.as_str(),
            _ => "",
        };
        let flag = |key: &str| msg.get(key).and_then(Value::as_bool).unwrap_or(false);
        match str_at(&msg, &["role"]) {
            Some("user") if !text.trim().is_empty() => {
                let mut record = prompt(text.to_owned(), "gptme:user", base);
                // A message the person never saw: context gptme sent along.
                if flag("hide") {
                    record.prompt_source = Some(PromptSource::SystemInjected);
                }
                out.records.push(record);
            }
            Some("user") => {}
            Some("assistant") => self.answer(&msg, text, base, out),
            // The system prompt and the context gptme sends without showing it.
            Some("system") if flag("pinned") || flag("hide") => {}
            Some("system" | "tool") if !text.trim().is_empty() => {
                self.system(&msg, text, base, out)
            }
            Some("system" | "tool") => {}
            Some(other) => count_unknown(&mut self.meta, other),
            None => count_unknown(&mut self.meta, "<untyped>"),
        }
        Ok(())
    }
}

/// A conversation's `[chat]` settings, when its `config.toml` can be read, each text redacted
/// as a transcript's is (a name or workspace is stored and shown like one).
fn read_config(path: &Path) -> Option<toml::Table> {
    let file = std::fs::File::open(path).ok()?;
    let mut text = String::new();
    std::io::Read::read_to_string(&mut std::io::Read::take(file, MAX_CONFIG_BYTES), &mut text)
        .ok()?;
    let mut config: toml::Table = toml::from_str(&text).ok()?;
    let toml::Value::Table(mut chat) = config.remove("chat")? else {
        return None;
    };
    let redactor = crate::archive::redact::Redactor::global();
    for (key, value) in chat.iter_mut() {
        if let toml::Value::String(s) = value
            && let std::borrow::Cow::Owned(kept) = redactor.redact_text(s, key, &mut Vec::new())
        {
            *s = kept;
        }
    }
    Some(chat)
}

/// A call in an answer.
#[derive(Debug, PartialEq)]
struct Call {
    name: String,
    id: Option<String>,
    input: Value,
}

/// The calls in an answer, in order: each fenced block whose language names a tool gptme runs
/// (`path` after the tool's name, the block's text as `content`), and each native call line
/// `@<tool>(<id>): <arguments>`.
fn calls(text: &str) -> Vec<Call> {
    let mut found = Vec::new();
    let mut at = 0;
    let mut lines = text.split_inclusive('\n').map(|l| {
        let start = at;
        at += l.len();
        (start, l.trim_end_matches(['\n', '\r']))
    });
    while let Some((start, line)) = lines.next() {
        if let Some(info) = line.strip_prefix("```") {
            let mut words = info.trim().splitn(2, char::is_whitespace);
            let tag = words.next().unwrap_or("");
            let rest = words.next().unwrap_or("").trim();
            // The block's body, to its closing fence (or the answer's end); a fence with a
            // language inside it opens a block of its own (a Markdown file being saved), closed
            // by the next bare fence.
            let mut body = Vec::new();
            let mut nested = 0usize;
            for (_, inner) in lines.by_ref() {
                if inner.trim_end() == "```" {
                    if nested == 0 {
                        break;
                    }
                    nested -= 1;
                } else if inner
                    .strip_prefix("```")
                    .is_some_and(|t| !t.trim().is_empty())
                {
                    nested += 1;
                }
                body.push(inner);
            }
            if let Some(name) = runnable(tag) {
                let mut input = json!({"content": body.join("\n")});
                if !rest.is_empty() {
                    input["path"] = Value::String(rest.to_owned());
                }
                found.push(Call {
                    name: name.to_owned(),
                    id: None,
                    input,
                });
            }
        } else if let Some(call) = native_call(line, &text[start..]) {
            found.push(call);
        }
    }
    found
}

/// `@<tool>(<id>): <JSON arguments>` at the start of `line`, which starts `from` (the arguments
/// may go on over the lines after it: the first JSON value there is read, and a line starting
/// with `@` ends it, `@` being no JSON; arguments that are not JSON are kept as text).
fn native_call(line: &str, from: &str) -> Option<Call> {
    let rest = line.strip_prefix('@')?;
    let open = rest.find('(')?;
    let name = &rest[..open];
    if name.is_empty()
        || !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    {
        return None;
    }
    let close = rest.find("):")?;
    let id = rest.get(open + 1..close)?.trim();
    let args_line = rest[close + 2..].trim_start();
    if !args_line.starts_with('{') {
        return None;
    }
    // `args_line` ends `line`, which starts `from`.
    let args = from.get(line.len() - args_line.len()..)?;
    let input = serde_json::Deserializer::from_str(args)
        .into_iter::<Value>()
        .next()
        .and_then(Result::ok)
        .unwrap_or_else(|| Value::String(args_line.to_owned()));
    Some(Call {
        name: name.to_owned(),
        id: (!id.is_empty()).then(|| id.to_owned()),
        input,
    })
}

/// The tool a fenced block's language runs, if any (gptme's `block_types`): `python` and the
/// other languages are code shown, not run.
fn runnable(tag: &str) -> Option<&'static str> {
    Some(match tag {
        "shell" => "shell",
        "ipython" | "py" => "ipython",
        "save" => "save",
        "append" => "append",
        "patch" => "patch",
        "morph" => "morph",
        "tmux" => "tmux",
        "read" => "read",
        "gh" => "gh",
        "todo" => "todo",
        "complete" => "complete",
        _ => return None,
    })
}

/// gptme's tool names in Cairn's kinds.
pub fn tool_kind(name: &str) -> ToolKind {
    match name {
        "shell" | "ipython" | "tmux" | "gh" => ToolKind::Exec,
        "save" | "append" | "patch" | "morph" => ToolKind::FileEdit,
        "subagent" => ToolKind::SubAgent,
        "read" | "todo" | "complete" | "chats" => ToolKind::Housekeeping,
        "browser" => ToolKind::WebSearch,
        other => ToolKind::of(other),
    }
}

/// A result's exit code and outcome: the shell says `Return code: N` only when it is not 0;
/// a tool that failed says `Error executing tool`.
fn result_of(kind: ToolKind, text: &str) -> (Option<i32>, Option<Outcome>) {
    if text.contains("Error executing tool") {
        return (None, Some(Outcome::Failed));
    }
    if kind != ToolKind::Exec {
        return (None, None);
    }
    let code = text
        .lines()
        .find_map(|l| l.trim().strip_prefix("Return code:"))
        .and_then(|c| c.trim().parse::<i32>().ok());
    match code {
        Some(code) => (Some(code), Some(super::outcome_for(code, text))),
        None if text.starts_with("Ran command") || text.starts_with("Ran allowlisted command") => {
            (Some(0), Some(Outcome::Succeeded))
        }
        None => (None, None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(lines: &[Value]) -> (GptmeParser, LineOutput) {
        let mut parser = GptmeParser::resume(None).unwrap();
        parser.zone = jiff::tz::TimeZone::UTC;
        let mut out = LineOutput::default();
        for line in lines {
            parser.parse_line(&line.to_string(), &mut out).unwrap();
        }
        (parser, out)
    }

    #[test]
    fn blocks_that_name_a_tool_are_calls_and_system_messages_their_results() {
        let (parser, out) = parse(&[
            json!({"role":"system","content":"You are gptme","timestamp":"2026-06-13T10:00:00","pinned":true}),
            json!({"role":"user","content":"Make hello.py and run it","timestamp":"2026-06-13T10:00:01.000000"}),
            json!({"role":"assistant","timestamp":"2026-06-13T10:00:05.5",
                "content":"Writing it.\n\n```save hello.py\nprint('hi')\n```\n\n```python\nnot run\n```\n\n```shell\npython hello.py\n```",
                "metadata":{"model":"anthropic/claude-sonnet-4-6","usage":{"input_tokens":120,"output_tokens":42,"cache_read_tokens":80}}}),
            json!({"role":"system","content":"Saved to hello.py","timestamp":"2026-06-13T10:00:06"}),
            json!({"role":"system","content":"Ran command: `python hello.py`\n\nReturn code: 2","timestamp":"2026-06-13T10:00:07"}),
            json!({"role":"system","content":"Context: 3 files changed","timestamp":"2026-06-13T10:00:08"}),
            json!({"role":"tool","content":"Done","timestamp":"2026-06-13T10:00:09"}),
            json!({"role":"narrator","content":"?","timestamp":"2026-06-13T10:00:10"}),
        ]);
        let kinds: Vec<_> = out
            .records
            .iter()
            .map(|r| (r.kind, r.tool_name.as_deref(), r.exit_code))
            .collect();
        assert_eq!(
            kinds,
            [
                (Some(RecordKind::Message), None, None),
                (Some(RecordKind::Message), None, None),
                (Some(RecordKind::ToolCall), Some("save"), None),
                (Some(RecordKind::ToolCall), Some("shell"), None),
                (Some(RecordKind::ToolResult), Some("save"), None),
                (Some(RecordKind::ToolResult), Some("shell"), Some(2)),
                (Some(RecordKind::Event), None, None),
                (Some(RecordKind::ToolResult), Some("tool"), None),
            ]
        );
        assert_eq!(out.records[2].file_paths, ["hello.py"]);
        assert_eq!(
            out.records[3].tool_input,
            Some(json!({"content": "python hello.py"}))
        );
        assert_eq!(out.records[5].outcome, Some(Outcome::Failed));
        let m = parser.meta();
        assert_eq!(m.model.as_deref(), Some("anthropic/claude-sonnet-4-6"));
        assert_eq!(m.started_at.as_deref(), Some("2026-06-13T10:00:00Z"));
        assert_eq!(
            out.records[1].timestamp.as_deref(),
            Some("2026-06-13T10:00:05.5Z")
        );
        assert_eq!((out.usage[0].1.input, out.usage[0].1.cache_read), (120, 80));
        assert_eq!(m.unknown_types.keys().collect::<Vec<_>>(), ["narrator"]);
    }

    /// A Markdown file saved with code blocks in it is one call, its blocks its content.
    #[test]
    fn a_block_inside_a_saved_file_stays_in_it() {
        let text =
            "Saving.\n```save README.md\n# Use\n```sh\nmake\n```\nDone.\n```\n```shell\nls\n```";
        let found = calls(text);
        let names: Vec<_> = found.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["save", "shell"]);
        assert_eq!(
            found[0].input,
            json!({"path": "README.md", "content": "# Use\n```sh\nmake\n```\nDone."})
        );
    }

    #[test]
    fn native_calls_are_answered_by_their_id() {
        let (_, out) = parse(&[
            json!({"role":"assistant","timestamp":"2026-06-13T10:00:00",
                "content":"Both.\n@shell(call_a): {\"command\": \"ls\"}\n@save(call_b): {\"path\": \"a.txt\",\n \"content\": \"x\"}"}),
            json!({"role":"system","content":"Saved a.txt","call_id":"call_b","metadata":{"tool":"save"},"timestamp":"2026-06-13T10:00:01"}),
            json!({"role":"system","content":"Ran command: `ls`\n\nNo output","call_id":"call_a","metadata":{"tool":"shell"},"timestamp":"2026-06-13T10:00:02"}),
        ]);
        let calls: Vec<_> = out
            .records
            .iter()
            .filter(|r| r.kind == Some(RecordKind::ToolCall))
            .map(|r| (r.call_id.clone().unwrap(), r.tool_input.clone().unwrap()))
            .collect();
        assert_eq!(
            calls,
            [
                ("call_a".to_owned(), json!({"command": "ls"})),
                (
                    "call_b".to_owned(),
                    json!({"path": "a.txt", "content": "x"})
                )
            ]
        );
        assert_eq!(out.records[2].file_paths, ["a.txt"]);
        let results: Vec<_> = out
            .records
            .iter()
            .filter(|r| r.kind == Some(RecordKind::ToolResult))
            .map(|r| (r.call_id.as_deref(), r.tool_name.as_deref(), r.exit_code))
            .collect();
        assert_eq!(
            results,
            [
                (Some("call_b"), Some("save"), None),
                (Some("call_a"), Some("shell"), Some(0))
            ]
        );
    }

    #[test]
    fn calls_never_answered_are_kept_to_a_bound() {
        let answer = "```shell\nls\n```\n".repeat(1_000);
        let (parser, out) = parse(&[json!({"role":"assistant","content":answer})]);
        assert_eq!(out.records.len(), 1_001);
        assert_eq!(parser.pending.len(), MAX_OPEN_CALLS);
    }

    #[test]
    fn a_resumed_parser_keeps_the_calls_still_open() {
        let (parser, _) = parse(&[json!({"role":"assistant","content":"```shell\nmake\n```"})]);
        let mut resumed = GptmeParser::resume(Some(&parser.save())).unwrap();
        let mut out = LineOutput::default();
        resumed
            .parse_line(
                &json!({"role":"system","content":"Ran command: `make`"}).to_string(),
                &mut out,
            )
            .unwrap();
        assert_eq!(out.records[0].tool_name.as_deref(), Some("shell"));
    }

    proptest::proptest! {
        /// Any text made of fences, call lines and JSON fragments in any order is read without
        /// a panic, each call named by a tool and its path, if any, from its own line.
        #[test]
        fn any_answer_is_read_into_calls_without_a_panic(parts in proptest::collection::vec(
            proptest::sample::select(vec![
                "```shell", "```save a b.txt", "```python", "```", "``` ", "@shell(c1): {",
                "@save(): {\"path\": \"x\"}", "@(x): {}", "@a(b)", "\"k\": [1, ", "}", "\n",
                "é", "\r\n", "@gh(\u{1b}[2J): {\"x\":1}", "  ",
            ]),
            0..40,
        )) {
            let text = parts.concat();
            for call in calls(&text) {
                proptest::prop_assert!(!call.name.is_empty());
                if let Some(path) = call.input.get("path").and_then(Value::as_str) {
                    proptest::prop_assert!(!path.contains('\n'));
                }
            }
        }
    }

    #[test]
    fn conversations_are_found_where_gptme_keeps_them() {
        let home = Path::new("/h");
        let none = |_: &str| None;
        assert_eq!(
            locations_on(none, Some(home), false),
            [(
                PathBuf::from("/h/.local/share/gptme/logs"),
                DirOrigin::Default
            )]
        );
        assert_eq!(
            locations_on(none, Some(home), true).len(),
            2,
            "macOS's application data folder too"
        );
        let xdg = |v: &str| (v == "XDG_DATA_HOME").then(|| PathBuf::from("/x"));
        assert_eq!(
            locations_on(xdg, Some(home), false),
            [(PathBuf::from("/x/gptme/logs"), DirOrigin::Default)]
        );
        let own = |v: &str| (v == LOGS_HOME || v == "XDG_DATA_HOME").then(|| PathBuf::from("/l"));
        assert_eq!(
            locations_on(own, Some(home), true),
            [(PathBuf::from("/l"), DirOrigin::Env)]
        );
        let path =
            Path::new("/h/.local/share/gptme/logs/2026-06-13-write-hello/conversation.jsonl");
        assert_eq!(
            classify(path).and_then(|f| f.parent_hint),
            Some("2026-06-13-write-hello".to_owned())
        );
        assert!(owns_path(path));
        assert!(classify(Path::new("/h/.local/share/gptme/logs/x/config.toml")).is_none());
    }
}

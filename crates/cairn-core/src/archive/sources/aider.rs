//! Aider's chat history: `.aider.chat.history.md` at the root of each repository it ran in.
//!
//! A Markdown file Aider appends to: every run starts with `# aider chat started at <local
//! time>`, a person's prompt lines start with `#### `, Aider's own terminal output (warnings,
//! `Applied edit to <path>`, `Commit <sha> <message>`, `Tokens: …`) with `> `, and every other
//! line is the model's reply. It is read as a line file resumed from a byte offset like JSONL.
//!
//! Consecutive lines of one kind are one **block** (a multi-line prompt, a reply, a run of
//! output). A block is a keyed unit named by its first line (`L<n>`), emitted once it closes
//! (the next block or chat header begins) or the read ends with it open, its records stored
//! under its first line; a block that grows after a read emits again under the same keys, so the stored record
//! is updated in place and any split of the file into appends gives the same records as one
//! read. (Re-emitting a block on every line it grew by made a cold read quadratic in a block's
//! length: each emission is serialised and hashed whole.) Blocks are capped
//! (replies at [`MAX_REPLY_BYTES`], output at [`MAX_TOOL_OUTPUT_BYTES`]); past the cap a block
//! only gathers the edits it names.
//!
//! The whole file is one Cairn session (its key is the file's path, its cwd the repository):
//! each `aider chat started` header is an event in it, with the header's time as written (Aider
//! writes local time without a zone, so it is not a record timestamp).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{
    LineOutput, MAX_TOOL_OUTPUT_BYTES, SessionMeta, SourceParser, floor_char_boundary,
    is_system_injected, set_latest,
};
use crate::archive::discover::{DirOrigin, FoundFile};
use crate::archive::{Agent, PromptSource, Record, RecordKind, TokenUsage, ToolKind};

/// The file Aider writes in each repository (its `--chat-history-file` default).
pub const FILE_NAME: &str = ".aider.chat.history.md";

/// The variable naming where to look: a list of repository roots, folders holding repositories,
/// or history files, separated like `PATH`.
pub const ENV_DIRS: &str = "AIDER_HISTORY_DIRS";

/// How deep below a named folder a history file is looked for (`<root>/<org>/<repo>/file`).
pub const MAX_DEPTH: usize = 3;

/// The longest reply block kept in the index (a reply is re-emitted on every line it grows by,
/// so its cap bounds the work a line costs).
pub const MAX_REPLY_BYTES: usize = 64 * 1024;

/// Aider has no home folder of its own: its histories live in repositories. Each entry of
/// `$AIDER_HISTORY_DIRS` is a source (a repository, a folder of repositories, or a history file);
/// `[sources.aider] dirs` in the config does the same.
pub fn locations(
    env: impl Fn(&str) -> Option<PathBuf>,
    _home: Option<&Path>,
) -> Vec<(PathBuf, DirOrigin)> {
    env(ENV_DIRS)
        .map(|list| {
            std::env::split_paths(list.as_os_str())
                .filter(|p| !p.as_os_str().is_empty())
                .map(|p| (p, DirOrigin::Env))
                .collect()
        })
        .unwrap_or_default()
}

/// Folders a walk for histories never enters: hidden ones (`.git`) and build or dependency trees.
pub fn is_skipped_dir(name: &std::ffi::OsStr) -> bool {
    let name = name.to_string_lossy();
    name.starts_with('.')
        || matches!(
            name.as_ref(),
            "node_modules" | "target" | "vendor" | "dist" | "build"
        )
}

/// Whether `path` is an Aider history by its name.
pub fn is_history(path: &Path) -> bool {
    path.file_name().is_some_and(|n| n == FILE_NAME)
}

/// A history file is one session, named by its path.
pub fn classify(path: &Path) -> Option<FoundFile> {
    is_history(path).then(|| FoundFile::main(Agent::Aider, path))
}

/// Whether a path is Aider's (for the hook, given only a path).
pub fn owns_path(path: &Path) -> bool {
    is_history(path)
}

/// The kind of a line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
enum Kind {
    Prompt,
    Output,
    Reply,
}

/// The block being read: the lines of one kind since the last change of kind.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Block {
    kind: Kind,
    unit: String,
    text: String,
    /// The cap was reached: the text gathers no more.
    full: bool,
    /// Paths named by `Applied edit to` in an output block.
    edits: Vec<String>,
    /// Token reports in an output block.
    tokens: u32,
    /// Changed since its records were last emitted.
    #[serde(default)]
    dirty: bool,
}

#[derive(Debug, Default, Serialize, Deserialize)]
pub struct AiderParser {
    meta: SessionMeta,
    /// Lines parsed so far (names blocks).
    lines: u64,
    /// `aider chat started` headers seen.
    chats: u64,
    block: Option<Block>,
    /// An output message of several lines is open: Aider quotes only its first line (`> `) and
    /// ends only its last with the two spaces it ends every quoted message with, so the lines
    /// between are the output's, not a reply.
    #[serde(default)]
    output_open: bool,
}

/// Edits kept per output block at most.
const MAX_EDITS: usize = 256;

impl AiderParser {
    /// A parser for the history at `path`: the repository around it is the session's cwd.
    pub fn for_file(path: &Path) -> Self {
        let mut p = AiderParser::default();
        p.meta.cwd = path
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .map(|d| d.to_string_lossy().into_owned());
        p
    }

    pub fn resume(saved: Option<&Value>) -> Result<Self, serde_json::Error> {
        match saved {
            Some(state) => serde_json::from_value(state.clone()),
            None => Ok(AiderParser::default()),
        }
    }

    fn base(&self, unit: &str, key: &str) -> Record {
        Record {
            cwd: self.meta.cwd.clone(),
            unit: Some(unit.to_owned()),
            key: Some(key.to_owned()),
            ..Record::default()
        }
    }

    /// What an output line says about the session (model, version) and the block (edits, tokens).
    fn output_facts(&mut self, line: &str, out: &mut LineOutput) {
        if let Some(rest) = line
            .strip_prefix("Model: ")
            .or_else(|| line.strip_prefix("Main model: "))
        {
            let model = rest.split(" with ").next().unwrap_or(rest).trim();
            set_latest(&mut self.meta.model, Some(model));
        } else if let Some(v) = line.strip_prefix("Aider v") {
            set_latest(&mut self.meta.tool_version, Some(v.trim()));
        } else if let Some(path) = line.strip_prefix("Applied edit to ") {
            let path = path.trim();
            if let Some(b) = self.block.as_mut()
                && !path.is_empty()
                && b.edits.len() < MAX_EDITS
                && !b.edits.iter().any(|e| e == path)
            {
                b.edits.push(path.to_owned());
            }
        } else if let Some(rest) = line.strip_prefix("Tokens: ")
            && let Some(usage) = tokens(rest)
            && let Some(b) = self.block.as_mut()
        {
            b.tokens += 1;
            out.usage.push((format!("{}.{}", b.unit, b.tokens), usage));
        }
    }

    /// Emit the open block if it changed since it was last emitted, its records under its first
    /// line, `now` being the number of the line the output is for.
    fn emit_if_dirty(&mut self, now: u64, out: &mut LineOutput) {
        let Some(b) = self.block.as_mut().filter(|b| b.dirty) else {
            return;
        };
        b.dirty = false;
        let first = b.unit[1..].parse::<u64>().unwrap_or(now);
        self.emit(out);
        out.closing = out.records.len();
        out.closing_back = now.saturating_sub(first);
    }

    /// The records of the open block, as they stand.
    fn emit(&self, out: &mut LineOutput) {
        let Some(b) = &self.block else { return };
        let text = Some(b.text.clone()).filter(|t| !t.is_empty());
        match b.kind {
            Kind::Prompt => {
                let command = b.text.starts_with('/');
                let source = if is_system_injected(&b.text) {
                    PromptSource::SystemInjected
                } else {
                    PromptSource::Human
                };
                out.records.push(Record {
                    kind: Some(RecordKind::Message),
                    source_event_kind: if command {
                        "aider:user:command".to_owned()
                    } else {
                        "aider:user".to_owned()
                    },
                    role: Some("user".to_owned()),
                    prompt_source: Some(source),
                    text,
                    ..self.base(&b.unit, "text")
                });
            }
            Kind::Reply => out.records.push(Record {
                kind: Some(RecordKind::Message),
                source_event_kind: "aider:assistant".to_owned(),
                role: Some("assistant".to_owned()),
                text,
                ..self.base(&b.unit, "text")
            }),
            Kind::Output => {
                out.records.push(Record {
                    kind: Some(RecordKind::Event),
                    source_event_kind: "aider:output".to_owned(),
                    text,
                    ..self.base(&b.unit, "text")
                });
                for path in &b.edits {
                    out.records.push(Record {
                        kind: Some(RecordKind::ToolCall),
                        source_event_kind: "aider:output:applied_edit".to_owned(),
                        role: Some("assistant".to_owned()),
                        tool_name: Some("edit".to_owned()),
                        tool_kind: Some(ToolKind::FileEdit),
                        call_id: Some(format!("{}:{path}", b.unit)),
                        file_paths: vec![path.clone()],
                        ..self.base(&b.unit, &format!("edit:{path}"))
                    });
                }
            }
        }
    }
}

/// `2.3k sent, 1,204 received. Cost: …` as token usage.
fn tokens(rest: &str) -> Option<TokenUsage> {
    let mut usage = TokenUsage::default();
    let mut seen = false;
    for part in rest.split(", ").flat_map(|s| s.split(". ")) {
        let part = part.trim().trim_end_matches('.');
        let Some((num, what)) = part.split_once(' ') else {
            continue;
        };
        let slot = match what.trim() {
            "sent" => &mut usage.input,
            "received" => &mut usage.output,
            "cache write" => &mut usage.cache_creation,
            "cache hit" => &mut usage.cache_read,
            _ => continue,
        };
        *slot = count(num)?;
        seen = true;
    }
    // Aider's "sent" already counts the cache writes it reports beside it (`base_coder.py`:
    // sent += prompt + cache write): the input is what is left.
    usage.input = usage.input.saturating_sub(usage.cache_creation);
    seen.then_some(usage)
}

/// `1,204`, `2.3k`, `1.1M` as a count.
fn count(num: &str) -> Option<u64> {
    let num = num.replace(',', "");
    let (digits, scale) = match num.chars().last()? {
        'k' | 'K' => (&num[..num.len() - 1], 1e3),
        'm' | 'M' => (&num[..num.len() - 1], 1e6),
        _ => (num.as_str(), 1.0),
    };
    let n = digits.parse::<f64>().ok()? * scale;
    // Not a count a model reports (NaN, negative or absurd): none.
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    (0.0..1e15).contains(&n).then(|| n.round() as u64)
}

/// A line's kind and content.
fn kind_of(line: &str) -> (Kind, &str) {
    if let Some(rest) = line.strip_prefix("#### ") {
        (Kind::Prompt, rest)
    } else if line == "####" {
        (Kind::Prompt, "")
    } else if let Some(rest) = line.strip_prefix("> ") {
        (Kind::Output, rest)
    } else if line == ">" {
        (Kind::Output, "")
    } else {
        (Kind::Reply, line)
    }
}

const HEADER: &str = "# aider chat started at";

/// The time a chat header names, when the line is one (the time may be empty).
fn header_time(line: &str) -> Option<&str> {
    let rest = line.strip_prefix(HEADER)?;
    (rest.is_empty() || rest.starts_with(' ')).then(|| rest.trim())
}

impl SourceParser for AiderParser {
    fn agent(&self) -> Agent {
        Agent::Aider
    }

    /// Markdown, never an error: every line is some block's.
    fn parse_line(&mut self, line: &str, out: &mut LineOutput) -> Result<(), serde_json::Error> {
        let n = self.lines;
        self.lines += 1;
        // Aider ends output lines with two spaces (a Markdown line break); Windows, with CR.
        let line = line.trim_end_matches(['\r', '\n']);
        if let Some(at) = header_time(line) {
            self.emit_if_dirty(n, out);
            self.block = None;
            self.output_open = false;
            self.chats += 1;
            out.records.push(Record {
                kind: Some(RecordKind::Event),
                source_event_kind: "aider:chat_started".to_owned(),
                text: Some(format!(
                    "aider chat started at {}",
                    crate::text::one_line(at, 64)
                )),
                ..self.base(&format!("L{n}"), "chat")
            });
            return Ok(());
        }
        let (mut kind, content) = kind_of(line);
        let ends_message = line.ends_with("  ");
        match kind {
            Kind::Output => self.output_open = !ends_message,
            Kind::Reply if self.output_open => {
                kind = Kind::Output;
                self.output_open = !ends_message;
            }
            Kind::Prompt | Kind::Reply => self.output_open = false,
        }
        let content = content.trim_end();
        let cap = match kind {
            Kind::Output => MAX_TOOL_OUTPUT_BYTES,
            Kind::Prompt | Kind::Reply => MAX_REPLY_BYTES,
        };
        let before = self
            .block
            .as_ref()
            .map(|b| (b.text.len(), b.edits.len(), b.full));
        match self.block.as_mut() {
            Some(b) if b.kind == kind => {
                if !b.full {
                    append_capped(&mut b.text, content, cap, &mut b.full);
                }
            }
            _ => {
                self.emit_if_dirty(n, out);
                let mut b = Block {
                    kind,
                    unit: format!("L{n}"),
                    text: String::new(),
                    full: false,
                    edits: Vec::new(),
                    tokens: 0,
                    dirty: true,
                };
                append_capped(&mut b.text, content, cap, &mut b.full);
                self.block = Some(b);
                if kind == Kind::Output {
                    self.output_facts(content, out);
                }
                return Ok(());
            }
        }
        if kind == Kind::Output {
            self.output_facts(content, out);
        }
        let after = self
            .block
            .as_ref()
            .map(|b| (b.text.len(), b.edits.len(), b.full));
        if before != after
            && let Some(b) = self.block.as_mut()
        {
            b.dirty = true;
        }
        Ok(())
    }

    fn meta(&self) -> &SessionMeta {
        &self.meta
    }

    fn save(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }

    fn flush(&mut self, out: &mut LineOutput) {
        self.emit_if_dirty(self.lines, out);
    }
}

/// Add a line to a block's text, stopping (with a mark) at `cap` bytes.
fn append_capped(text: &mut String, line: &str, cap: usize, full: &mut bool) {
    const MARK: &str = "[… truncated …]";
    let sep = usize::from(!text.is_empty());
    if text.len() + sep + line.len() + 1 + MARK.len() > cap {
        let room = cap.saturating_sub(text.len() + sep + 1 + MARK.len());
        if sep == 1 {
            text.push('\n');
        }
        text.push_str(&line[..floor_char_boundary(line, room)]);
        text.push('\n');
        text.push_str(MARK);
        *full = true;
        return;
    }
    if sep == 1 {
        text.push('\n');
    }
    text.push_str(line);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(lines: &[&str]) -> (AiderParser, LineOutput) {
        let mut p = AiderParser::for_file(Path::new("/r/repo/.aider.chat.history.md"));
        let mut out = LineOutput::default();
        for l in lines {
            p.parse_line(l, &mut out).unwrap();
        }
        p.flush(&mut out);
        (p, out)
    }

    #[test]
    fn tokens_read_with_suffixes_and_separators() {
        let u = tokens("2.3k sent, 1,204 received. Cost: $0.01 message, $0.02 session.").unwrap();
        assert_eq!((u.input, u.output), (2300, 1204));
        let u = tokens("12k sent, 3.1k cache write, 9k cache hit, 250 received.").unwrap();
        assert_eq!(
            (u.input, u.cache_creation, u.cache_read, u.output),
            (8900, 3100, 9000, 250)
        );
        assert!(tokens("lots sent").is_none());
        assert!(tokens("1e400 sent").is_none());
    }

    /// A message of several lines (a failed edit's explanation) is quoted on its first line
    /// only and ends with Aider's two spaces on its last: every line between is the output's,
    /// and the reply after it is the model's.
    #[test]
    fn a_message_of_several_lines_is_output_to_its_last_line() {
        let (_, out) = parse(&[
            "#### fix it",
            "> # 1 SEARCH/REPLACE block failed to match!",
            "",
            "## SearchReplaceNoExactMatch: This SEARCH block failed to exactly match lines in a.rs",
            "<<<<<<< SEARCH",
            "fn a() {}",
            "The SEARCH section must exactly match an existing block of lines  ",
            "",
            "You are right; here is the corrected block.",
            "> Tokens: 1k sent, 20 received.  ",
        ]);
        let kinds: Vec<_> = out
            .records
            .iter()
            .map(|r| {
                (
                    r.role.as_deref(),
                    r.text.as_deref().unwrap_or("").lines().count(),
                )
            })
            .collect();
        assert_eq!(
            kinds,
            [
                (Some("user"), 1),
                (None, 6),
                (Some("assistant"), 1),
                (None, 1),
            ],
            "{:?}",
            out.records
        );
        assert!(
            out.records[1]
                .text
                .as_deref()
                .unwrap()
                .ends_with("existing block of lines")
        );
    }

    #[test]
    fn blocks_grow_under_one_key_and_output_names_edits_and_model() {
        let (p, out) = parse(&[
            "# aider chat started at 2025-06-02 11:47:49",
            "> Aider v0.84.0  ",
            "> Model: qwen3 with diff edit format  ",
            "#### fix the bug",
            "#### in main.rs",
            "Here is the fix.",
            "```rust",
            "> Applied edit to src/main.rs  ",
        ]);
        assert_eq!(p.meta.model.as_deref(), Some("qwen3"));
        assert_eq!(p.meta.tool_version.as_deref(), Some("0.84.0"));
        assert_eq!(p.meta.cwd.as_deref(), Some("/r/repo"));
        // The last emission of each unit is what the store keeps.
        let last = |unit: &str, key: &str| {
            out.records
                .iter()
                .rev()
                .find(|r| r.unit.as_deref() == Some(unit) && r.key.as_deref() == Some(key))
                .cloned()
                .unwrap()
        };
        assert_eq!(
            last("L3", "text").text.as_deref(),
            Some("fix the bug\nin main.rs")
        );
        assert_eq!(
            last("L5", "text").text.as_deref(),
            Some("Here is the fix.\n```rust")
        );
        assert_eq!(last("L7", "edit:src/main.rs").file_paths, ["src/main.rs"]);
        assert_eq!(last("L0", "chat").kind, Some(RecordKind::Event));
    }

    /// A block is emitted once when it closes, and an open one once by `flush`, not once per
    /// line it grew by (which made a cold read quadratic in a block's length).
    #[test]
    fn a_block_is_emitted_once_when_it_closes() {
        let reply: Vec<String> = (0..500)
            .map(|i| format!("line {i} of a long reply"))
            .collect();
        let mut lines = vec!["#### explain".to_owned()];
        lines.extend(reply.iter().cloned());
        lines.push("#### thanks".to_owned());
        lines.extend(reply.iter().cloned());
        let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
        let (_, out) = parse(&lines);
        let units: Vec<&str> = out
            .records
            .iter()
            .filter_map(|r| r.unit.as_deref())
            .collect();
        assert_eq!(units, ["L0", "L1", "L501", "L502"]);
        assert_eq!(
            out.records[1]
                .text
                .as_deref()
                .map(str::lines)
                .map(Iterator::count),
            Some(500)
        );

        // The line that closes a block says so: its records belong to the block's first line.
        let mut p = AiderParser::for_file(Path::new("/r/repo/.aider.chat.history.md"));
        let mut out = LineOutput::default();
        p.parse_line("#### one", &mut out).unwrap();
        p.parse_line("#### two", &mut out).unwrap();
        assert!(out.records.is_empty());
        p.parse_line("a reply", &mut out).unwrap();
        assert_eq!(
            (out.records.len(), out.closing, out.closing_back),
            (1, 1, 2)
        );
    }

    #[test]
    fn a_block_stops_growing_at_its_cap() {
        let big = "x".repeat(MAX_TOOL_OUTPUT_BYTES);
        let line = format!("> {big}");
        let (p, out) = parse(&[&line, &line, "> Applied edit to a.rs"]);
        let b = p.block.unwrap();
        assert!(b.full && b.text.len() <= MAX_TOOL_OUTPUT_BYTES);
        assert_eq!(b.edits, ["a.rs"]);
        assert!(out.records.iter().all(|r| {
            r.text
                .as_ref()
                .is_none_or(|t| t.len() <= MAX_TOOL_OUTPUT_BYTES)
        }));
    }
}

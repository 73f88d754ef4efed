//! Cursor agent transcripts (`~/.cursor/projects/<slug>/agent-transcripts/`): `<uuid>.jsonl`
//! or `<uuid>/<uuid>.jsonl`, a sub-agent's in `<parent uuid>/subagents/<uuid>.jsonl`.
//!
//! Each line is `{role, message{content[]}}` with Anthropic-style blocks: `text` (a person's
//! prompt wrapped in `<user_query>`), `thinking`, `tool_use` (no id), and user lines of
//! `tool_result` blocks whose `tool_use_id` matches no call. Drift seen in samples: `tool_call`,
//! `tool-result` and `custom_block` blocks, and lines that are not messages (`{"type":
//! "turn_ended"}`). No model or cwd is written, and no timestamp but the one newer versions put
//! before a prompt (`<timestamp>Tuesday, Jul 21, 2026, 6:56 PM (UTC+8)</timestamp>`), read when
//! it names its offset. A sub-agent's file opens with its parent agent's prompt.
//!
//! Lines repeat verbatim (two `"Thanks."` prompts are the same bytes), so records are identified
//! by **position** (the line's number with its content), never by content alone
//! ([`super::LineIdentity::Position`]). Calls have no ids: a call is named by its line and block
//! (`L<line>.<block>`), and a result is paired with the call whose id it names, else with the
//! oldest call still unanswered.

use std::collections::VecDeque;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{
    FileRole, LineOutput, MAX_INPUT_STRING_BYTES, MAX_TEXT_BYTES, SessionMeta, SourceParser,
    ToolOutput, cap_json, cap_text, count_unknown, is_system_injected, note_timestamp, patch_paths,
    str_at, text_value,
};
use crate::archive::discover::{DirOrigin, FoundFile};
use crate::archive::{Agent, PromptSource, Record, RecordKind, ToolKind};

/// The variable naming Cursor's projects folder (AgentsView's name).
pub const ENV_DIR: &str = "CURSOR_PROJECTS_DIR";

/// Where Cursor keeps its agent transcripts (the same on Linux and macOS):
/// `$CURSOR_PROJECTS_DIR` when set, else `~/.cursor/projects`.
pub fn locations(
    env: impl Fn(&str) -> Option<PathBuf>,
    home: Option<&Path>,
) -> Vec<(PathBuf, DirOrigin)> {
    crate::archive::discover::env_or_home(env, ENV_DIR, "", home, &[".cursor/projects"])
}

/// A `.jsonl` below an `agent-transcripts` folder: a session named by its stem, or a sub-agent
/// of the session whose folder holds its `subagents/`.
pub fn classify(path: &Path) -> Option<FoundFile> {
    let stem = path.file_stem()?.to_str()?.to_owned();
    let under = path
        .ancestors()
        .skip(1)
        .any(|a| a.file_name().is_some_and(|n| n == "agent-transcripts"));
    if !under {
        return None;
    }
    let parent = path.parent()?;
    if parent.file_name().is_some_and(|n| n == "subagents") {
        let session = parent.parent()?.file_name()?.to_str()?.to_owned();
        return Some(FoundFile {
            agent: Agent::Cursor,
            role: FileRole::Subagent,
            path: path.to_owned(),
            parent_hint: Some(session),
            agent_id: Some(stem),
        });
    }
    Some(FoundFile {
        agent: Agent::Cursor,
        role: FileRole::Main,
        path: path.to_owned(),
        parent_hint: Some(stem),
        agent_id: None,
    })
}

/// The folder a Cursor transcript's project is, found on disk from the project's slug
/// (`~/.cursor/projects/<slug>/agent-transcripts/…`): Cursor writes no cwd, and writes the
/// project's path into the slug with every character that is not a letter or digit as `-`.
/// That is lossy (`my-app` and `my/app` slug alike), so the slug is followed down from `/` one
/// existing folder at a time, a folder matching when its name slugs to the next part; none when
/// no folder matches the whole slug, or more than one does.
pub fn project_of(transcript: &Path) -> Option<PathBuf> {
    let slug = transcript
        .ancestors()
        .find(|a| a.file_name().is_some_and(|n| n == "agent-transcripts"))?
        .parent()?
        .file_name()?
        .to_str()?;
    let slug = slugged(slug);
    if slug.is_empty() {
        return None;
    }
    let mut found = Vec::new();
    follow_slug(Path::new("/"), &slug, 0, &mut found);
    match found.as_slice() {
        [one] => Some(one.clone()),
        _ => None,
    }
}

/// How deep a slug is followed, and how many entries of one folder are read, at most.
const SLUG_MAX_DEPTH: usize = 32;
const SLUG_MAX_ENTRIES: usize = 10_000;

/// `name` as a slug compares: ASCII letters and digits kept, each run of anything else one `-`,
/// none at either end (whether Cursor collapses runs, keeps a leading one, or keeps or replaces
/// a letter like `é`, both sides compare alike).
fn slugged(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for c in name.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c);
        } else if !out.is_empty() && !out.ends_with('-') {
            out.push('-');
        }
    }
    while out.ends_with('-') {
        out.pop();
    }
    out
}

/// The folders under `dir` whose path, slugged from `dir` on, is `rest`, into `found` (stopping
/// once there are two: the answer is then none).
fn follow_slug(dir: &Path, rest: &str, depth: usize, found: &mut Vec<PathBuf>) {
    if depth > SLUG_MAX_DEPTH || found.len() > 1 {
        return;
    }
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.take(SLUG_MAX_ENTRIES).flatten() {
        let name = entry.file_name();
        let Some(name) = name.to_str().map(slugged).filter(|n| !n.is_empty()) else {
            continue;
        };
        let after = if rest == name {
            None
        } else {
            match rest.strip_prefix(&name).and_then(|r| r.strip_prefix('-')) {
                Some(after) => Some(after),
                None => continue,
            }
        };
        let path = entry.path();
        if !path.is_dir() {
            continue;
        }
        match after {
            None => found.push(path),
            Some(after) => follow_slug(&path, after, depth + 1, found),
        }
        if found.len() > 1 {
            return;
        }
    }
}

/// Whether a transcript's path is Cursor's (for the hook, given only a path).
pub fn owns_path(path: &Path) -> bool {
    let s = path.to_string_lossy();
    s.contains("/.cursor/projects/") && s.contains("/agent-transcripts/")
}

/// Cairn's kind of a Cursor tool.
pub fn tool_kind(name: &str) -> ToolKind {
    match name {
        "Shell" | "Bash" | "run_terminal_cmd" => ToolKind::Exec,
        "StrReplace" | "Write" | "Edit" | "MultiEdit" | "Delete" | "edit_file" | "ApplyPatch"
        | "EditNotebook" => ToolKind::FileEdit,
        "Agent" | "Task" | "Subagent" => ToolKind::SubAgent,
        "WebSearch" | "WebFetch" | "web_search" => ToolKind::WebSearch,
        "Read" | "read_file" | "ReadFile" | "Glob" | "Grep" | "LS" | "list_dir" | "ListDir"
        | "SemanticSearch" | "AwaitShell" | "TodoWrite" => ToolKind::Housekeeping,
        other => ToolKind::of(other),
    }
}

/// A call waiting for its result.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Pending {
    id: String,
    name: String,
    /// The id the agent gave the call, when it gave one.
    own_id: Option<String>,
}

#[derive(Debug, Default, Serialize, Deserialize)]
pub struct CursorParser {
    #[serde(skip)]
    role: FileRole,
    meta: SessionMeta,
    /// Lines parsed so far (names calls that have no id).
    lines: u64,
    pending: VecDeque<Pending>,
}

/// Calls kept waiting for a result at most (a transcript of calls never answered stays small).
const MAX_PENDING: usize = 256;

impl CursorParser {
    pub fn resume(role: FileRole, saved: Option<&Value>) -> Result<Self, serde_json::Error> {
        let mut parser = match saved {
            Some(state) => serde_json::from_value(state.clone())?,
            None => CursorParser::default(),
        };
        parser.role = role;
        Ok(parser)
    }

    fn block(&mut self, role: &str, block: &Value, n: usize, out: &mut LineOutput) {
        let kind = str_at(block, &["type"]).unwrap_or("");
        let base = Record {
            block: u32::try_from(n).unwrap_or(u32::MAX),
            cwd: self.meta.cwd.clone(),
            ..Record::default()
        };
        match (role, kind) {
            ("user", "text") => {
                let Some(raw) = str_at(block, &["text"]) else {
                    return;
                };
                let prompt = unwrap_query(raw);
                if prompt.text.is_empty() {
                    return;
                }
                let source = if !prompt.wrapped && is_system_injected(&prompt.text) {
                    PromptSource::SystemInjected
                } else if self.role == FileRole::Subagent {
                    PromptSource::SpawnedAgent
                } else {
                    PromptSource::Human
                };
                note_timestamp(&mut self.meta, prompt.at.as_deref());
                out.records.push(Record {
                    kind: Some(RecordKind::Message),
                    source_event_kind: "cursor:user".to_owned(),
                    role: Some("user".to_owned()),
                    prompt_source: Some(source),
                    text: Some(cap_text(prompt.text, MAX_TEXT_BYTES)),
                    timestamp: prompt.at,
                    ..base
                });
            }
            (_, "text") => {
                let Some(text) = str_at(block, &["text"]).filter(|t| !t.is_empty()) else {
                    return;
                };
                out.records.push(Record {
                    kind: Some(RecordKind::Message),
                    source_event_kind: format!("cursor:{role}"),
                    role: Some(role.to_owned()),
                    text: Some(cap_text(text.to_owned(), MAX_TEXT_BYTES)),
                    ..base
                });
            }
            (_, "thinking") => {
                let Some(text) = str_at(block, &["thinking"])
                    .or_else(|| str_at(block, &["text"]))
                    .filter(|t| !t.is_empty())
                else {
                    return;
                };
                out.records.push(Record {
                    kind: Some(RecordKind::Reasoning),
                    source_event_kind: "cursor:assistant:thinking".to_owned(),
                    role: Some("assistant".to_owned()),
                    text: Some(cap_text(text.to_owned(), MAX_TEXT_BYTES)),
                    ..base
                });
            }
            (_, "tool_use" | "tool_call") => {
                let name = str_at(block, &["name"]).unwrap_or("unknown").to_owned();
                let own_id = str_at(block, &["id"]).map(str::to_owned);
                let id = own_id
                    .clone()
                    .unwrap_or_else(|| format!("L{}.{n}", self.lines));
                let class = tool_kind(&name);
                let mut input = block.get("input").cloned().filter(|v| !v.is_null());
                let paths = match (class, input.as_ref()) {
                    (ToolKind::FileEdit, Some(i)) => match str_at(i, &["patch"]) {
                        Some(patch) => patch_paths(patch),
                        None => ["path", "file_path", "target_file", "target_notebook"]
                            .iter()
                            .find_map(|k| i.get(k).and_then(Value::as_str))
                            .map(str::to_owned)
                            .into_iter()
                            .collect(),
                    },
                    _ => Vec::new(),
                };
                if let Some(v) = input.as_mut() {
                    cap_json(v, MAX_INPUT_STRING_BYTES);
                }
                out.records.push(Record {
                    kind: Some(RecordKind::ToolCall),
                    source_event_kind: format!("cursor:assistant:{kind}"),
                    role: Some("assistant".to_owned()),
                    tool_name: Some(name.clone()),
                    tool_kind: Some(class),
                    tool_input: input,
                    call_id: Some(id.clone()),
                    file_paths: paths,
                    ..base
                });
                if self.pending.len() >= MAX_PENDING {
                    self.pending.pop_front();
                }
                self.pending.push_back(Pending { id, name, own_id });
            }
            (_, "tool_result" | "tool-result") => {
                let named = str_at(block, &["tool_use_id"]);
                let at = named
                    .and_then(|want| {
                        self.pending
                            .iter()
                            .position(|p| p.own_id.as_deref() == Some(want))
                    })
                    .or_else(|| (!self.pending.is_empty()).then_some(0));
                let call = at.and_then(|i| self.pending.remove(i));
                let output = ToolOutput {
                    name: call
                        .as_ref()
                        .map(|c| c.name.clone())
                        .or_else(|| str_at(block, &["name"]).map(str::to_owned)),
                    call_id: call.map(|c| c.id).or_else(|| named.map(str::to_owned)),
                    text: block
                        .get("content")
                        .and_then(text_value)
                        .filter(|t| !t.is_empty()),
                    // Cursor marks a failure; a result without the mark says nothing either way.
                    failed: block
                        .get("is_error")
                        .and_then(Value::as_bool)
                        .filter(|&failed| failed),
                    ..ToolOutput::default()
                };
                out.records.push(output.record(
                    format!("cursor:user:{kind}"),
                    tool_kind,
                    Record {
                        role: Some("tool".to_owned()),
                        ..base
                    },
                ));
            }
            (_, other) => {
                count_unknown(&mut self.meta, &format!("cursor:block:{other}"));
                if let Some(text) = str_at(block, &["text"]).filter(|t| !t.is_empty()) {
                    out.records.push(Record {
                        kind: Some(RecordKind::Event),
                        source_event_kind: format!("cursor:{role}:{other}"),
                        text: Some(cap_text(text.to_owned(), MAX_TEXT_BYTES)),
                        ..base
                    });
                }
            }
        }
    }
}

/// A prompt as a person wrote it.
struct Prompt {
    text: String,
    /// It came in Cursor's `<user_query>` wrapper: typed, whatever it starts with.
    wrapped: bool,
    /// When it was sent (RFC 3339, UTC), from the `<timestamp>` before it.
    at: Option<String>,
}

/// A prompt without Cursor's `<timestamp>` and `<user_query>` wrappers. What follows the query
/// (`[Image]`, `[File: spec.pdf]`: the attachments' labels) stays, on lines of its own.
fn unwrap_query(raw: &str) -> Prompt {
    let mut t = raw.trim();
    let mut at = None;
    if let Some(rest) = t.strip_prefix("<timestamp>")
        && let Some((stamp, after)) = rest.split_once("</timestamp>")
    {
        at = prompt_time(stamp);
        t = after.trim_start();
    }
    let Some((inner, after)) = t
        .strip_prefix("<user_query>")
        .and_then(|r| r.rsplit_once("</user_query>"))
    else {
        return Prompt {
            text: t.to_owned(),
            wrapped: false,
            at,
        };
    };
    let mut text = inner.trim().to_owned();
    let after = after.trim();
    if !after.is_empty() {
        text.push('\n');
        text.push_str(after);
    }
    Prompt {
        text,
        wrapped: true,
        at,
    }
}

/// A prompt's `<timestamp>` (`Tuesday, Jul 21, 2026, 6:56 PM (UTC+8)`) in RFC 3339, UTC. `None`
/// without the offset: a local time in an unknown zone is not a time.
fn prompt_time(stamp: &str) -> Option<String> {
    let (local, zone) = stamp.trim().strip_suffix(')')?.rsplit_once(" (UTC")?;
    let offset = if zone.is_empty() {
        0
    } else {
        let sign = match zone.as_bytes()[0] {
            b'+' => 1,
            b'-' => -1,
            _ => return None,
        };
        let (h, m) = zone[1..].split_once(':').unwrap_or((&zone[1..], "0"));
        let (h, m) = (h.parse::<i32>().ok()?, m.parse::<i32>().ok()?);
        if h > 14 || m > 59 {
            return None;
        }
        sign * (h * 3600 + m * 60)
    };
    // The weekday is left out: it says nothing the date does not.
    let (_, date) = local.split_once(", ")?;
    let civil = jiff::fmt::strtime::parse("%b %d, %Y, %I:%M %p", date)
        .ok()?
        .to_datetime()
        .ok()?;
    let offset = jiff::tz::Offset::from_seconds(offset).ok()?;
    Some(offset.to_timestamp(civil).ok()?.to_string())
}

impl SourceParser for CursorParser {
    fn agent(&self) -> Agent {
        Agent::Cursor
    }

    fn parse_line(&mut self, line: &str, out: &mut LineOutput) -> Result<(), serde_json::Error> {
        let v: Value = serde_json::from_str(line)?;
        self.lines += 1;
        if let Some(model) = str_at(&v, &["model"]) {
            super::set_latest(&mut self.meta.model, Some(model));
        }
        let role = str_at(&v, &["role"]);
        let content = v.get("message").and_then(|m| m.get("content"));
        match (role, content) {
            (Some(role @ ("user" | "assistant")), Some(Value::Array(blocks))) => {
                for (n, block) in blocks.iter().enumerate() {
                    self.block(role, block, n, out);
                }
            }
            (Some(role @ ("user" | "assistant")), Some(Value::String(text))) => {
                let block = serde_json::json!({"type": "text", "text": text});
                self.block(role, &block, 0, out);
            }
            _ => match str_at(&v, &["type"]) {
                Some(kind) => {
                    // `turn_ended`'s status, and its error when the turn failed.
                    let text = match (str_at(&v, &["status"]), str_at(&v, &["error"])) {
                        (Some(status), Some(error)) => Some(format!("{status}: {error}")),
                        (status, error) => status.or(error).map(str::to_owned),
                    };
                    out.records.push(Record {
                        kind: Some(RecordKind::Event),
                        source_event_kind: format!("cursor:{kind}"),
                        text: text.map(|t| cap_text(t, MAX_TEXT_BYTES)),
                        ..Record::default()
                    });
                }
                None => count_unknown(&mut self.meta, "cursor:unknown"),
            },
        }
        Ok(())
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

    #[test]
    fn a_name_slugs_to_its_letters_and_digits_between_single_dashes() {
        assert_eq!(slugged("/home/me/my.app"), "home-me-my-app");
        assert_eq!(slugged("-tmp--repo-"), "tmp-repo");
        assert_eq!(slugged(".config"), "config");
        assert_eq!(slugged("..\u{1b}[2J"), "2J");
        assert_eq!(slugged("./-"), "");
        assert_eq!(slugged("josé"), "jos");
        assert_eq!(slugged("jos-"), "jos", "é written as - compares the same");
    }

    #[test]
    fn a_path_outside_agent_transcripts_or_an_empty_slug_names_no_folder() {
        assert_eq!(
            project_of(Path::new("/x/.cursor/projects/home/t.jsonl")),
            None
        );
        assert_eq!(
            project_of(Path::new(
                "/x/.cursor/projects/..-./agent-transcripts/t.jsonl"
            )),
            None
        );
    }
    use serde_json::json;

    #[test]
    fn layouts_under_agent_transcripts_are_sessions_or_subagents() {
        let main = classify(Path::new(
            "/h/.cursor/projects/-tmp-r/agent-transcripts/a1.jsonl",
        ))
        .unwrap();
        assert_eq!(
            (main.role, main.parent_hint.as_deref()),
            (FileRole::Main, Some("a1"))
        );
        let nested = classify(Path::new(
            "/h/.cursor/projects/-tmp-r/agent-transcripts/a1/a1.jsonl",
        ))
        .unwrap();
        assert_eq!(nested.parent_hint.as_deref(), Some("a1"));
        let sub = classify(Path::new(
            "/h/.cursor/projects/-tmp-r/agent-transcripts/a1/subagents/b2.jsonl",
        ))
        .unwrap();
        assert_eq!(
            (
                sub.role,
                sub.parent_hint.as_deref(),
                sub.agent_id.as_deref()
            ),
            (FileRole::Subagent, Some("a1"), Some("b2"))
        );
        assert!(classify(Path::new("/h/.cursor/projects/-tmp-r/other/a1.jsonl")).is_none());
    }

    fn parse(role: FileRole, lines: &[Value]) -> (CursorParser, LineOutput) {
        let mut p = CursorParser::resume(role, None).unwrap();
        let mut out = LineOutput::default();
        for l in lines {
            p.parse_line(&l.to_string(), &mut out).unwrap();
        }
        (p, out)
    }

    #[test]
    fn a_prompt_s_timestamp_is_its_time_when_it_names_its_offset() {
        for (stamp, want) in [
            (
                "Tuesday, Jul 21, 2026, 6:56 PM (UTC+8)",
                Some("2026-07-21T10:56:00Z"),
            ),
            (
                "Wednesday, Jun 3, 2026, 7:30 PM (UTC-7)",
                Some("2026-06-04T02:30:00Z"),
            ),
            (
                "Thu, Dec 31, 2026, 11:59 PM (UTC+5:30)",
                Some("2026-12-31T18:29:00Z"),
            ),
            (
                "Friday, Sep 4, 2026, 12:05 AM (UTC)",
                Some("2026-09-04T00:05:00Z"),
            ),
            // A local time in a zone nobody named; not a time; out of range; crafted.
            ("Sunday, Sep 27, 2026, 9:00 AM", None),
            ("now", None),
            ("Monday, Feb 30, 2026, 9:00 AM (UTC+1)", None),
            ("Monday, Feb 2, 2026, 9:00 AM (UTC+99)", None),
            ("Monday, Feb 2, 2026, 9:00 AM (UTC+1:xx)", None),
            ("Monday, Feb 2, 2026, 9:00 AM (UTC\u{1b}[0m)", None),
            ("(UTC+1)", None),
        ] {
            assert_eq!(prompt_time(stamp).as_deref(), want, "{stamp}");
        }
    }

    /// Cursor 3.x wraps a prompt in a timestamp and the query, with attachment labels after;
    /// its tool context is a user line of its own; a sub-agent's file opens with its parent's
    /// prompt.
    #[test]
    fn prompts_are_unwrapped_and_told_from_tool_context_and_a_parent_agent() {
        let user =
            |text: &str| json!({"role":"user","message":{"content":[{"type":"text","text":text}]}});
        let (p, out) = parse(
            FileRole::Main,
            &[
                user("<dynamic_tools><tool>Context for the model</tool></dynamic_tools>"),
                user(
                    "<timestamp>Sunday, Sep 27, 2026, 9:00 AM (UTC+2)</timestamp>\n<user_query>\nCompare the screenshot.\n</user_query>\n[Image]\n[File: spec.pdf]",
                ),
                user("<user_query>ship it</user_query>"),
            ],
        );
        let got: Vec<_> = out
            .records
            .iter()
            .map(|r| {
                (
                    r.text.as_deref().unwrap_or(""),
                    r.prompt_source,
                    r.timestamp.as_deref(),
                )
            })
            .collect();
        assert_eq!(
            got,
            vec![
                (
                    "<dynamic_tools><tool>Context for the model</tool></dynamic_tools>",
                    Some(PromptSource::SystemInjected),
                    None
                ),
                (
                    "Compare the screenshot.\n[Image]\n[File: spec.pdf]",
                    Some(PromptSource::Human),
                    Some("2026-09-27T07:00:00Z")
                ),
                ("ship it", Some(PromptSource::Human), None),
            ]
        );
        assert_eq!(p.meta.started_at.as_deref(), Some("2026-09-27T07:00:00Z"));

        let (_, sub) = parse(
            FileRole::Subagent,
            &[user("<user_query>\nAudit the parser.\n</user_query>")],
        );
        assert_eq!(
            sub.records[0].prompt_source,
            Some(PromptSource::SpawnedAgent)
        );
    }

    #[test]
    fn newer_tools_are_classed_and_a_patch_names_its_files() {
        let call = |name: &str, input: Value| json!({"role":"assistant","message":{"content":[{"type":"tool_use","name":name,"input":input}]}});
        let (_, out) = parse(
            FileRole::Main,
            &[
                call(
                    "ApplyPatch",
                    json!({"patch":"*** Begin Patch\n*** Update File: src/a.rs\n@@\n-x\n+y\n*** Add File: src/b.rs\n+z\n*** End Patch"}),
                ),
                call(
                    "Subagent",
                    json!({"subagent_type":"explore","prompt":"look"}),
                ),
                call("ReadFile", json!({"path":"src/a.rs"})),
                json!({"type":"turn_ended","status":"error","error":"The provider could not finish."}),
            ],
        );
        let got: Vec<_> = out
            .records
            .iter()
            .map(|r| (r.tool_kind, r.file_paths.clone(), r.text.clone()))
            .collect();
        assert_eq!(
            got,
            vec![
                (
                    Some(ToolKind::FileEdit),
                    vec!["src/a.rs".to_owned(), "src/b.rs".to_owned()],
                    None
                ),
                (Some(ToolKind::SubAgent), vec![], None),
                (Some(ToolKind::Housekeeping), vec![], None),
                (
                    None,
                    vec![],
                    Some("error: The provider could not finish.".to_owned())
                ),
            ]
        );
    }

    #[test]
    fn results_pair_by_id_else_with_the_oldest_unanswered_call() {
        let mut p = CursorParser::default();
        let mut out = LineOutput::default();
        let lines = [
            r#"{"role":"assistant","message":{"content":[{"type":"tool_use","name":"Bash","input":{"command":"ls"}},{"type":"tool_use","id":"x","name":"Read","input":{"file_path":"a"}}]}}"#,
            r#"{"role":"user","message":{"content":[{"type":"tool_result","tool_use_id":"x","content":"A"}]}}"#,
            r#"{"role":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t9","content":"exit code 2"}]}}"#,
        ];
        for l in lines {
            p.parse_line(l, &mut out).unwrap();
        }
        let results: Vec<_> = out
            .records
            .iter()
            .filter(|r| r.kind == Some(RecordKind::ToolResult))
            .map(|r| {
                (
                    r.call_id.clone().unwrap(),
                    r.tool_name.clone().unwrap(),
                    r.exit_code,
                )
            })
            .collect();
        assert_eq!(
            results,
            [
                ("x".to_owned(), "Read".to_owned(), None),
                ("L1.0".to_owned(), "Bash".to_owned(), Some(2))
            ]
        );
    }
}

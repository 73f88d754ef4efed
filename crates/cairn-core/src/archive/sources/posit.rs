//! Posit Assistant (posit-dev's assistant for RStudio and Positron): one folder a conversation
//! under `~/.posit/assistant/workspaces/<workspace>/<conversation>/`, a sub-agent's run in
//! `<conversation>/subagents/<id>/` laid out the same way; the workspace's folder is in
//! `<workspace>/workspace.json` (`path`).
//!
//! A conversation folder holds `lm-messages.jsonl` (read here: one line a model message
//! `{id, message}` in the Vercel AI SDK's shape, `role` `user`, `assistant`, `tool` or `system`,
//! `content` a string or parts: `text`, `reasoning`, `tool-call {toolCallId, toolName,
//! input}`, `tool-result {toolCallId, toolName, output {type, value}}`; the time and usage in
//! `providerOptions.providerMetadata.positai`) and `conversation.json` beside it, read again at
//! every read: the conversation's title, branch, model and the parent of a sub-agent's run
//! (`root.metadata.parentTreeId`). The tree also says which turns are on the branch the person
//! kept (`isActive`); every model message is read all the same, an answer later regenerated
//! too: it is what the model said, and the tree is not in the retained copy a reindex reads,
//! so a reading that left such answers out could not be made again from the copy. The
//! assistant's bookkeeping tags in its text (`<MESSAGESUMMARY>`, `<CONVERSATIONSUMMARY>`) are
//! taken out.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::prompt;
use super::{
    LineOutput, MAX_INPUT_STRING_BYTES, MAX_TEXT_BYTES, SessionMeta, SourceParser, ToolOutput,
    cap_json, cap_text, count_unknown, edited_path, ms_to_rfc3339, note_timestamp, set_latest,
    set_once, str_at, u64_at,
};
use crate::archive::discover::{DirOrigin, FoundFile};
use crate::archive::{Agent, PromptSource, Record, RecordKind, TokenUsage, ToolKind};

/// The variable naming Posit Assistant's workspaces folder (AgentsView's name).
pub const ENV_DIR: &str = "POSIT_ASSISTANT_DIR";

/// A conversation's model messages, its tree, and a workspace's description.
const MESSAGES: &str = "lm-messages.jsonl";
const CONVERSATION: &str = "conversation.json";
const WORKSPACE: &str = "workspace.json";
const SUBAGENTS: &str = "subagents";

/// The most of a conversation's tree and of a workspace's description read.
const MAX_TREE_BYTES: u64 = 16 * 1024 * 1024;
const MAX_WORKSPACE_BYTES: u64 = 1024 * 1024;

/// Where Posit Assistant keeps its conversations (the same on Linux and macOS):
/// `$POSIT_ASSISTANT_DIR`, else `~/.posit/assistant/workspaces`.
pub fn locations(
    env: impl Fn(&str) -> Option<PathBuf>,
    home: Option<&Path>,
) -> Vec<(PathBuf, DirOrigin)> {
    crate::archive::discover::env_or_home(env, ENV_DIR, "", home, &[".posit/assistant/workspaces"])
}

/// A conversation's (or a sub-agent run's) `lm-messages.jsonl`, named by its folder.
pub fn classify(path: &Path) -> Option<FoundFile> {
    FoundFile::named_by_folder(Agent::Posit, path, MESSAGES)
}

/// The files read beside a conversation's transcript: its `conversation.json` and its
/// workspace's `workspace.json`.
pub(crate) fn sidecars_of(transcript: &Path) -> Vec<PathBuf> {
    let folder = transcript.parent().unwrap_or(Path::new(""));
    let mut files = vec![folder.join(CONVERSATION)];
    files.extend(workspace_file(folder));
    files
}

/// The transcript a `conversation.json` describes (a `workspace.json` describes every
/// conversation of its workspace, and is read with the next of them that is read).
pub(crate) fn transcript_of_sidecar(path: &Path) -> Option<PathBuf> {
    (path.file_name()? == CONVERSATION).then(|| path.with_file_name(MESSAGES))
}

/// Whether a transcript's path is Posit Assistant's (for the hook, given only a path).
pub fn owns_path(path: &Path) -> bool {
    path.to_string_lossy().contains("/.posit/assistant/")
        && path.file_name().is_some_and(|n| n == MESSAGES)
}

#[derive(Debug, Default, Serialize, Deserialize)]
pub struct PositParser {
    meta: SessionMeta,
    /// call id → tool name, for calls whose result has not been seen yet.
    pending_calls: BTreeMap<String, String>,
}

impl PositParser {
    pub fn resume(saved: Option<&Value>) -> Result<Self, serde_json::Error> {
        match saved {
            Some(state) => serde_json::from_value(state.clone()),
            None => Ok(PositParser::default()),
        }
    }

    /// The parser of `file`, resumed, with what the conversation's tree and its workspace say
    /// now.
    pub fn for_file(file: &FoundFile, saved: Option<&Value>) -> Result<Self, serde_json::Error> {
        let mut parser = Self::resume(saved)?;
        let folder = file.path.parent().unwrap_or(Path::new(""));
        // A sub-agent's run is known by its place, `<conversation>/subagents/<id>/`, whether or
        // not its tree is still there (a reindex reads the retained copy alone).
        let spawner = folder
            .parent()
            .filter(|p| p.file_name().is_some_and(|n| n == SUBAGENTS))
            .and_then(Path::parent)
            .and_then(Path::file_name)
            .and_then(|n| n.to_str());
        if let Some(parent) = spawner {
            set_once(&mut parser.meta.parent_session_id, Some(parent));
            set_once(&mut parser.meta.relation, Some("subagent"));
        }
        if let Some(tree) = super::read_small_json(&folder.join(CONVERSATION), MAX_TREE_BYTES) {
            parser.tree(&tree);
        }
        if let Some(ws) = workspace_of(folder) {
            set_latest(&mut parser.meta.cwd, str_at(&ws, &["path"]));
        }
        Ok(parser)
    }

    /// What `conversation.json` says: title, branch, model, a sub-agent run's parent.
    fn tree(&mut self, tree: &Value) {
        let root = tree.get("root").unwrap_or(&Value::Null);
        let meta = &mut self.meta;
        set_latest(&mut meta.title, str_at(root, &["title"]));
        set_latest(
            &mut meta.git_branch,
            str_at(root, &["metadata", "gitBranch"]),
        );
        set_latest(&mut meta.model, str_at(root, &["metadata", "model", "id"]));
        set_latest(
            &mut meta.provider,
            str_at(root, &["metadata", "model", "providerId"]),
        );
        if str_at(root, &["metadata", "kind"]) == Some("subagent")
            && let Some(parent) = str_at(root, &["metadata", "parentTreeId"])
        {
            set_once(&mut meta.parent_session_id, Some(parent));
            set_once(&mut meta.relation, Some("subagent"));
        }
    }

    /// A model message: a person's prompt, an answer (text, reasoning, calls), or results.
    fn message(&mut self, msg: &Value, base: Record, out: &mut LineOutput) {
        let role = str_at(msg, &["role"]).unwrap_or("");
        let parts: Vec<Value> = match msg.get("content") {
            Some(Value::String(s)) => vec![serde_json::json!({"type": "text", "text": s})],
            Some(Value::Array(parts)) => parts.clone(),
            _ => Vec::new(),
        };
        for (block, part) in parts.iter().enumerate() {
            let text = str_at(part, &["text"]).map(without_bookkeeping);
            let text = text.as_deref().filter(|t| !t.trim().is_empty());
            let record = match (role, str_at(part, &["type"]).unwrap_or("")) {
                ("user", "text") => {
                    let Some(t) = text else { continue };
                    let mut record = prompt(t.to_owned(), "posit:user", base.clone());
                    // A sub-agent's run is handed its task by the conversation that spawned it.
                    if self.meta.relation.as_deref() == Some("subagent") {
                        record.prompt_source = Some(PromptSource::SpawnedAgent);
                    }
                    record
                }
                ("assistant", "text") | ("assistant", "reasoning") | ("system", "text") => {
                    let Some(t) = text else { continue };
                    let kind = match (role, str_at(part, &["type"])) {
                        ("system", _) => RecordKind::Event,
                        (_, Some("reasoning")) => RecordKind::Reasoning,
                        _ => RecordKind::Message,
                    };
                    Record {
                        kind: Some(kind),
                        source_event_kind: format!("posit:{role}"),
                        role: (role == "assistant").then(|| role.to_owned()),
                        text: Some(cap_text(t.to_owned(), MAX_TEXT_BYTES)),
                        ..base.clone()
                    }
                }
                ("assistant", "tool-call") => self.call(part, base.clone()),
                ("tool", "tool-result") => self.result(part, base.clone()),
                (_, other) => {
                    count_unknown(&mut self.meta, &format!("{role}:{other}"));
                    continue;
                }
            };
            out.records.push(Record {
                block: u32::try_from(block).unwrap_or(u32::MAX),
                ..record
            });
        }
    }

    fn call(&mut self, part: &Value, base: Record) -> Record {
        let name = str_at(part, &["toolName"]).unwrap_or("unknown").to_owned();
        let kind = tool_kind(&name);
        let mut input = part.get("input").cloned();
        let file_paths = edited_path(kind, input.as_ref(), &["file_path", "path"]);
        if let Some(i) = input.as_mut() {
            cap_json(i, MAX_INPUT_STRING_BYTES);
        }
        let call_id = str_at(part, &["toolCallId"]).map(str::to_owned);
        if let Some(id) = &call_id {
            super::remember_call(&mut self.pending_calls, id.clone(), name.clone());
        }
        Record {
            kind: Some(RecordKind::ToolCall),
            source_event_kind: "posit:tool-call".to_owned(),
            role: Some("assistant".to_owned()),
            tool_kind: Some(kind),
            tool_name: Some(name),
            tool_input: input,
            call_id,
            file_paths,
            ..base
        }
    }

    fn result(&mut self, part: &Value, base: Record) -> Record {
        let call_id = str_at(part, &["toolCallId"]).map(str::to_owned);
        let name = call_id
            .as_ref()
            .and_then(|id| self.pending_calls.remove(id))
            .or_else(|| str_at(part, &["toolName"]).map(str::to_owned))
            .unwrap_or_else(|| "unknown".to_owned());
        let output = part.get("output").unwrap_or(&Value::Null);
        let result = ToolOutput {
            name: Some(name),
            call_id,
            text: Some(match output.get("value") {
                Some(Value::String(s)) => s.clone(),
                Some(other) => other.to_string(),
                None => String::new(),
            }),
            failed: str_at(output, &["type"]).map(|t| t.starts_with("error")),
            ..ToolOutput::default()
        };
        result.record("posit:tool-result".to_owned(), tool_kind, base)
    }
}

impl SourceParser for PositParser {
    fn agent(&self) -> Agent {
        Agent::Posit
    }

    fn meta(&self) -> &SessionMeta {
        &self.meta
    }

    fn save(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }

    fn parse_line(&mut self, raw: &str, out: &mut LineOutput) -> Result<(), serde_json::Error> {
        let line: Value = serde_json::from_str(raw)?;
        let id = line.get("id").and_then(Value::as_u64);
        let Some(msg) = line.get("message").filter(|m| m.is_object()) else {
            count_unknown(&mut self.meta, "<no message>");
            return Ok(());
        };
        let positai = msg
            .get("providerOptions")
            .and_then(|o| o.get("providerMetadata"))
            .and_then(|m| m.get("positai"))
            .unwrap_or(&Value::Null);
        let timestamp = positai
            .get("timestamp")
            .and_then(Value::as_i64)
            .and_then(ms_to_rfc3339);
        note_timestamp(&mut self.meta, timestamp.as_deref());
        set_latest(&mut self.meta.model, str_at(positai, &["modelId"]));
        if let Some(u) = positai.get("usage").filter(|u| u.is_object()) {
            let usage = TokenUsage {
                input: u64_at(u, "inputTokens"),
                output: u64_at(u, "outputTokens"),
                cache_creation: u64_at(u, "cacheWriteTokens"),
                cache_read: u64_at(u, "cacheReadTokens"),
                reasoning: u64_at(u, "reasoningTokens"),
            };
            if usage != TokenUsage::default() {
                let key = id.map_or_else(|| "message".to_owned(), |id| format!("lm{id}"));
                out.usage.push((key, usage));
            }
        }
        let base = Record {
            timestamp,
            ..Record::default()
        };
        self.message(msg, base, out);
        Ok(())
    }
}

/// The `workspace.json` of the workspace a conversation folder belongs to, read.
fn workspace_of(folder: &Path) -> Option<Value> {
    super::read_small_json(&workspace_file(folder)?, MAX_WORKSPACE_BYTES)
}

/// Where the `workspace.json` of a conversation folder's workspace is: in the folder's parent,
/// or for a sub-agent's run, above the `subagents/` folders it sits in.
fn workspace_file(folder: &Path) -> Option<PathBuf> {
    let mut at = folder.parent()?;
    // `<workspace>/<conversation>/subagents/<id>/…`: climb out of each `subagents/<id>`.
    for _ in 0..16 {
        if at.file_name()? != SUBAGENTS {
            break;
        }
        at = at.parent()?.parent()?;
    }
    Some(at.join(WORKSPACE))
}

/// The text without the assistant's bookkeeping tags and what they hold (a tag left open runs
/// to the end). One pass over the text, however many tags it holds.
fn without_bookkeeping(text: &str) -> String {
    const TAGS: [(&str, &str); 2] = [
        ("<MESSAGESUMMARY>", "</MESSAGESUMMARY>"),
        ("<CONVERSATIONSUMMARY>", "</CONVERSATIONSUMMARY>"),
    ];
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find('<') {
        let (before, from) = rest.split_at(at);
        out.push_str(before);
        match TAGS.iter().find(|(open, _)| from.starts_with(open)) {
            Some((open, close)) => {
                let inside = &from[open.len()..];
                rest = inside
                    .find(close)
                    .map_or("", |end| &inside[end + close.len()..]);
            }
            None => {
                out.push('<');
                rest = &from[1..];
            }
        }
    }
    out.push_str(rest);
    out.trim().to_owned()
}

/// Posit Assistant's tool names in Cairn's kinds.
pub fn tool_kind(name: &str) -> ToolKind {
    match name {
        "bash" | "runCode" | "executeCode" => ToolKind::Exec,
        "edit" | "write" => ToolKind::FileEdit,
        "explore" => ToolKind::SubAgent,
        "read" | "ls" | "grep" | "getConsoleContent" | "todoWrite" | "EnterMode" | "ExitMode"
        | "skill" => ToolKind::Housekeeping,
        "web_search" | "webfetch" => ToolKind::WebSearch,
        other => ToolKind::of(other),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parse(parser: &mut PositParser, lines: &[Value]) -> LineOutput {
        let mut out = LineOutput::default();
        for line in lines {
            parser.parse_line(&line.to_string(), &mut out).unwrap();
        }
        out
    }

    #[test]
    fn calls_pair_with_results_and_bookkeeping_is_taken_out() {
        let mut parser = PositParser::default();
        let out = parse(
            &mut parser,
            &[
                json!({"id":0,"message":{"role":"user","content":"Fix the chart","providerOptions":{"providerMetadata":{"positai":{"timestamp":1735689600000_i64}}}}}),
                json!({"id":1,"message":{"role":"assistant","content":[
                    {"type":"reasoning","text":"Look first."},
                    {"type":"text","text":"Editing.\n<MESSAGESUMMARY>Asked to fix</MESSAGESUMMARY>"},
                    {"type":"tool-call","toolCallId":"t1","toolName":"edit","input":{"file_path":"R/plot.R"}},
                    {"type":"tool-call","toolCallId":"t2","toolName":"bash","input":{"command":"Rscript x.R"}}],
                    "providerOptions":{"providerMetadata":{"positai":{"modelId":"claude-sonnet-4-6","usage":{"inputTokens":12,"outputTokens":34,"cacheReadTokens":100,"cacheWriteTokens":7}}}}}}),
                json!({"id":2,"message":{"role":"tool","content":[
                    {"type":"tool-result","toolCallId":"t2","toolName":"bash","output":{"type":"text","value":"Error: exit code 1"}},
                    {"type":"tool-result","toolCallId":"t1","toolName":"edit","output":{"type":"error-text","value":"no such file"}},
                    {"type":"image","data":"…"}]}}),
            ],
        );
        let got: Vec<_> = out
            .records
            .iter()
            .map(|r| (r.kind, r.tool_name.as_deref(), r.text.as_deref()))
            .collect();
        assert_eq!(
            got,
            [
                (Some(RecordKind::Message), None, Some("Fix the chart")),
                (Some(RecordKind::Reasoning), None, Some("Look first.")),
                (Some(RecordKind::Message), None, Some("Editing.")),
                (Some(RecordKind::ToolCall), Some("edit"), None),
                (Some(RecordKind::ToolCall), Some("bash"), None),
                (
                    Some(RecordKind::ToolResult),
                    Some("bash"),
                    Some("Error: exit code 1")
                ),
                (
                    Some(RecordKind::ToolResult),
                    Some("edit"),
                    Some("no such file")
                ),
            ]
        );
        assert_eq!(out.records[3].file_paths, ["R/plot.R"]);
        assert_eq!(out.records[5].exit_code, Some(1));
        assert_eq!(
            out.records[6].outcome,
            Some(crate::archive::Outcome::Failed)
        );
        assert_eq!(
            out.records[0].timestamp.as_deref(),
            Some("2025-01-01T00:00:00.000Z")
        );
        assert_eq!(out.usage[0].1.cache_creation, 7);
        assert_eq!(parser.meta().model.as_deref(), Some("claude-sonnet-4-6"));
        assert_eq!(
            parser.meta().unknown_types.keys().collect::<Vec<_>>(),
            ["tool:image"]
        );
    }

    #[test]
    fn bookkeeping_tags_are_taken_out_in_one_pass() {
        assert_eq!(
            without_bookkeeping("a <b> <MESSAGESUMMARY>x</MESSAGESUMMARY>c<CONVERSATIONSUMMARY>y"),
            "a <b> c"
        );
        assert_eq!(without_bookkeeping("<MESSAGESUMMARY></MESSAGESUMMARY>"), "");
        assert_eq!(without_bookkeeping("1 < 2, é"), "1 < 2, é");
        // Many tags cost one pass (removing them one by one moved the rest of the text each time).
        let many = "w <MESSAGESUMMARY>s</MESSAGESUMMARY>".repeat(200_000);
        assert_eq!(without_bookkeeping(&many), "w ".repeat(200_000).trim());
    }

    #[test]
    fn the_tree_names_the_conversation() {
        let mut parser = PositParser::default();
        parser.tree(&json!({"root":{"id":"c1","title":"Sales","metadata":{"kind":"main","gitBranch":"feat/q",
            "model":{"id":"claude-sonnet-4-6","providerId":"positai"}}},"messages":[]}));
        let m = parser.meta();
        assert_eq!(
            (
                m.title.as_deref(),
                m.git_branch.as_deref(),
                m.model.as_deref(),
                m.provider.as_deref()
            ),
            (
                Some("Sales"),
                Some("feat/q"),
                Some("claude-sonnet-4-6"),
                Some("positai")
            )
        );
        assert_eq!(m.relation, None);
    }

    #[test]
    fn a_sub_agent_run_names_its_parent_and_its_workspace_folder() {
        let mut parser = PositParser::default();
        parser.tree(&json!({"root":{"id":"s1","metadata":{"kind":"subagent","parentTreeId":"c1"}},"messages":[]}));
        assert_eq!(parser.meta().parent_session_id.as_deref(), Some("c1"));
        assert_eq!(parser.meta().relation.as_deref(), Some("subagent"));
        let out = parse(
            &mut parser,
            &[json!({"id":0,"message":{"role":"user","content":"Explore the data folder"}})],
        );
        assert_eq!(
            out.records[0].prompt_source,
            Some(PromptSource::SpawnedAgent)
        );

        let root = tempfile::tempdir().unwrap();
        let run = root.path().join("ws/c1/subagents/s1/subagents/s2");
        std::fs::create_dir_all(&run).unwrap();
        let found = classify(&run.join(MESSAGES)).unwrap();
        let by_place = PositParser::for_file(&found, None).unwrap();
        assert_eq!(
            (
                by_place.meta().parent_session_id.as_deref(),
                by_place.meta().relation.as_deref()
            ),
            (Some("s1"), Some("subagent"))
        );
        std::fs::write(
            root.path().join("ws/workspace.json"),
            r#"{"path":"/home/dev/p"}"#,
        )
        .unwrap();
        assert_eq!(workspace_of(&run).unwrap()["path"], "/home/dev/p");
        assert_eq!(
            workspace_of(&root.path().join("ws/c1")).unwrap()["path"],
            "/home/dev/p"
        );
        assert!(workspace_of(&root.path().join("other/c9")).is_none());
    }

    #[test]
    fn conversations_are_found_where_posit_assistant_keeps_them() {
        let home = Path::new("/h");
        assert_eq!(
            locations(|_| None, Some(home)),
            [(
                PathBuf::from("/h/.posit/assistant/workspaces"),
                DirOrigin::Default
            )]
        );
        let path = Path::new("/h/.posit/assistant/workspaces/w/c1/subagents/s1/lm-messages.jsonl");
        assert_eq!(
            classify(path).and_then(|f| f.parent_hint),
            Some("s1".to_owned())
        );
        assert!(owns_path(path));
        assert!(
            classify(Path::new(
                "/h/.posit/assistant/workspaces/w/c1/ui-messages.jsonl"
            ))
            .is_none()
        );
    }
}

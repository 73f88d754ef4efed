//! Mistral Vibe (`vibe`): a folder a session under
//! `~/.vibe/logs/session/session_<time>_<id>/` (`$VIBE_HOME` moves `~/.vibe`), holding
//! `messages.jsonl` (the conversation, read here) and `meta.json` beside it (the session's id,
//! times, branch and commit, model, working directory, title and token totals, read again at
//! every read).
//!
//! A line is one message in OpenAI's chat shape with a `message_id`: `system` (the system
//! prompt), `user`, `assistant` (`content`, `tool_calls[{id, function{name, arguments}}]`) and
//! `tool` (`name`, `tool_call_id`, `content`), read by `sources::chat`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::chat::Chat;
use super::prompt;
use super::{
    LineOutput, SessionMeta, SourceParser, count_unknown, line_timestamp, note_timestamp,
    set_latest, set_once, str_at, text_value, u64_at,
};
use crate::archive::discover::{DirOrigin, FoundFile};
use crate::archive::{Agent, Record, TokenUsage, ToolKind};

/// The variable naming Vibe's home folder (`~/.vibe`), which holds `logs/session/`.
pub const ENV_DIR: &str = "VIBE_HOME";

/// A session's conversation, in its folder.
pub(crate) const MESSAGES: &str = "messages.jsonl";

/// The session's metadata beside its conversation, and the most of it read.
pub(crate) const META: &str = "meta.json";
const MAX_META_BYTES: u64 = 4 * 1024 * 1024;

/// Where Vibe keeps its sessions (the same on Linux and macOS): `$VIBE_HOME/logs/session`
/// when set, else `~/.vibe/logs/session`.
pub fn locations(
    env: impl Fn(&str) -> Option<PathBuf>,
    home: Option<&Path>,
) -> Vec<(PathBuf, DirOrigin)> {
    crate::archive::discover::env_or_home(
        env,
        ENV_DIR,
        "logs/session",
        home,
        &[".vibe/logs/session"],
    )
}

/// A session's `messages.jsonl`, named by its folder until its metadata names it.
pub fn classify(path: &Path) -> Option<FoundFile> {
    FoundFile::named_by_folder(Agent::Vibe, path, MESSAGES)
}

/// Whether a transcript's path is Vibe's (for the hook, given only a path).
pub fn owns_path(path: &Path) -> bool {
    path.to_string_lossy().contains("/.vibe/logs/session/")
        && path.file_name().is_some_and(|n| n == MESSAGES)
}

#[derive(Debug, Default, Serialize, Deserialize)]
pub struct VibeParser {
    meta: SessionMeta,
    /// call id → tool name, for calls whose result has not been seen yet.
    pending_calls: BTreeMap<String, String>,
}

/// How Vibe's assistant and tool messages read.
const CHAT: Chat = Chat {
    agent: Agent::Vibe,
    tool_kind,
};

impl VibeParser {
    pub fn resume(saved: Option<&Value>) -> Result<Self, serde_json::Error> {
        let mut parser = match saved {
            Some(state) => serde_json::from_value(state.clone())?,
            None => VibeParser::default(),
        };
        parser
            .meta
            .provider
            .get_or_insert_with(|| "mistral".to_owned());
        Ok(parser)
    }

    /// The parser of `file`, resumed, with what the metadata beside it says now.
    pub fn for_file(file: &FoundFile, saved: Option<&Value>) -> Result<Self, serde_json::Error> {
        let mut parser = Self::resume(saved)?;
        if let Some(m) = super::read_small_json(&file.path.with_file_name(META), MAX_META_BYTES) {
            parser.metadata(&m);
        }
        Ok(parser)
    }

    fn metadata(&mut self, m: &Value) {
        let meta = &mut self.meta;
        set_once(&mut meta.session_id, str_at(m, &["session_id"]));
        set_once(
            &mut meta.cwd,
            str_at(m, &["environment", "working_directory"]),
        );
        set_latest(&mut meta.title, str_at(m, &["title"]));
        set_latest(&mut meta.model, str_at(m, &["model"]));
        set_latest(&mut meta.git_branch, str_at(m, &["git_branch"]));
        set_latest(&mut meta.git_commit, str_at(m, &["git_commit"]));
        // A session continued from another names it.
        if let Some(parent) = str_at(m, &["parent_session_id"]) {
            set_once(&mut meta.parent_session_id, Some(parent));
            set_once(&mut meta.relation, Some("fork"));
        }
        for key in ["start_time", "end_time"] {
            let at = str_at(m, &[key]).and_then(crate::text::rfc3339);
            note_timestamp(meta, at.as_deref());
        }
        if let Some(stats) = m.get("stats").filter(|s| s.is_object()) {
            let usage = TokenUsage {
                input: u64_at(stats, "session_prompt_tokens"),
                output: u64_at(stats, "session_completion_tokens"),
                ..TokenUsage::default()
            };
            if usage != TokenUsage::default() {
                meta.cumulative_usage = Some(usage);
            }
        }
    }
}

impl SourceParser for VibeParser {
    fn agent(&self) -> Agent {
        Agent::Vibe
    }

    fn meta(&self) -> &SessionMeta {
        &self.meta
    }

    fn save(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }

    fn parse_line(&mut self, raw: &str, out: &mut LineOutput) -> Result<(), serde_json::Error> {
        let msg: Value = serde_json::from_str(raw)?;
        let timestamp = line_timestamp(&mut self.meta, str_at(&msg, &["timestamp"]), out)
            .map(|t| t.into_owned());
        note_timestamp(&mut self.meta, timestamp.as_deref());
        let base = Record {
            timestamp,
            cwd: self.meta.cwd.clone(),
            message_id: str_at(&msg, &["message_id"]).map(str::to_owned),
            ..Record::default()
        };
        match str_at(&msg, &["role"]).unwrap_or("") {
            // The system prompt: the agent's, the same in every session.
            "system" => {}
            "user" => {
                if let Some(text) = msg.get("content").and_then(text_value) {
                    out.records.push(prompt(text, "vibe:user", base));
                }
            }
            "assistant" => CHAT.assistant(&msg, &mut self.pending_calls, base, &mut out.records),
            "tool" => {
                let result = CHAT.tool(&msg, &mut self.pending_calls, None, base);
                out.records.push(result);
            }
            "" => count_unknown(&mut self.meta, "<no role>"),
            other => count_unknown(&mut self.meta, other),
        }
        Ok(())
    }
}

/// Vibe's tool names in Cairn's kinds.
pub fn tool_kind(name: &str) -> ToolKind {
    match name {
        "bash" => ToolKind::Exec,
        "write_file" | "search_replace" => ToolKind::FileEdit,
        "task" => ToolKind::SubAgent,
        "web_search" | "web_fetch" => ToolKind::WebSearch,
        "read_file" | "grep" | "ls" | "todo" => ToolKind::Housekeeping,
        other => ToolKind::of(other),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_metadata_beside_a_session_describes_it() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir
            .path()
            .join("session_20260613_110000_def456/messages.jsonl");
        std::fs::create_dir_all(log.parent().unwrap()).unwrap();
        std::fs::write(&log, "").unwrap();
        let file = classify(&log).unwrap();
        assert_eq!(
            file.parent_hint.as_deref(),
            Some("session_20260613_110000_def456")
        );
        std::fs::write(
            log.with_file_name(META),
            json!({"session_id": "def456", "start_time": "2026-06-13T11:00:00Z",
                "end_time": "2026-06-13T11:01:00Z", "git_branch": "feature/x", "model": "devstral",
                "environment": {"working_directory": "/w"}, "title": "Read it",
                "stats": {"session_prompt_tokens": 200, "session_completion_tokens": 100}})
            .to_string(),
        )
        .unwrap();
        let mut p = VibeParser::for_file(&file, None).unwrap();
        let mut out = LineOutput::default();
        for line in [
            json!({"role": "user", "content": "Read the README", "message_id": "m1"}),
            json!({"role": "assistant", "content": "Reading.", "message_id": "m2", "tool_calls": [
                {"id": "c1", "index": 0, "function": {"name": "read_file", "arguments": {"path": "README.md"}}}]}),
            json!({"role": "tool", "content": "# Hi", "name": "read_file", "tool_call_id": "c1", "message_id": "m3"}),
            json!({"role": "narrator", "content": "?"}),
        ] {
            p.parse_line(&line.to_string(), &mut out).unwrap();
        }
        let m = p.meta();
        assert_eq!(
            (
                m.session_id.as_deref(),
                m.cwd.as_deref(),
                m.git_branch.as_deref()
            ),
            (Some("def456"), Some("/w"), Some("feature/x"))
        );
        assert_eq!(m.cumulative_usage.map(|u| u.input), Some(200));
        let result = out.records.last().unwrap();
        assert_eq!(
            (result.tool_name.as_deref(), result.tool_kind),
            (Some("read_file"), Some(ToolKind::Housekeeping))
        );
        assert_eq!(m.unknown_types.keys().collect::<Vec<_>>(), ["narrator"]);
        assert!(classify(&log.with_file_name(META)).is_none());
    }
}

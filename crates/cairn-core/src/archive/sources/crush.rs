//! Charm's Crush: one SQLite database per project, `<project>/.crush/crush.db` (the
//! [`ReadKind::Database`](super::ReadKind::Database) kind).
//!
//! Tables read: `sessions` (`id`, `parent_session_id` for a session the `agent` tool started,
//! `title`, `prompt_tokens`/`completion_tokens` totals, `created_at`/`updated_at`,
//! `summary_message_id`) and `messages` (`id`, `session_id`, `role` user/assistant/tool,
//! `parts` JSON, `model`, `provider`, `created_at`, `updated_at`). Times are numbers since the
//! epoch: the schema says milliseconds, its triggers write seconds; both are read. Crush updates a
//! message in place while it streams, so a message is a keyed unit and its parts are records
//! keyed `text:<n>`, `reasoning:<n>`, `call:<id>`, `result:<id>`, `finish`.
//! The `files` table (file-history snapshots) is not read: edits come from the tool calls.
//! No cwd is written: it is the folder holding `.crush/`, else a bash result's
//! `working_directory`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use rusqlite::Connection;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::database::{
    DatabaseSource, DbSession, DbUnit, MAX_COLUMN_BYTES, RowText, UnitParser, epoch_seconds,
    epoch_time, int_of, json_column, json_of, require, row_as_json, text_ids,
};
use super::{
    LineOutput, MAX_INPUT_STRING_BYTES, MAX_TEXT_BYTES, MAX_TOOL_OUTPUT_BYTES, SessionMeta,
    ToolOutput, cap_json, cap_text, count_unknown, is_system_injected, note_timestamp, outcome_for,
    set_latest, set_once, str_at,
};
use crate::archive::discover::{DirOrigin, FoundFile};
use crate::archive::{Agent, PromptSource, Record, RecordKind, TokenUsage, ToolKind};

/// The database's file name.
pub const FILE_NAME: &str = "crush.db";

/// The folder Crush keeps its data in, inside the project.
pub const DATA_DIR: &str = ".crush";

/// The variable naming where to look: project roots, folders holding projects, or database
/// files, separated like `PATH` (as `AIDER_HISTORY_DIRS` does for Aider).
pub const ENV_DIRS: &str = "CRUSH_PROJECT_DIRS";

/// How deep below a named folder a database is looked for (`<root>/<org>/<repo>/.crush/crush.db`).
pub const MAX_DEPTH: usize = 4;

/// Crush has no home folder: its databases live in the projects. Each entry of
/// `$CRUSH_PROJECT_DIRS` is a source (a project, a folder of projects, or a database);
/// `[sources.crush] dirs` in the config does the same.
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

/// Folders a walk for databases never enters: hidden ones other than `.crush`, and build or
/// dependency trees.
pub fn is_skipped_dir(name: &std::ffi::OsStr) -> bool {
    name != DATA_DIR && super::aider::is_skipped_dir(name)
}

/// Whether `path` is a Crush database by its name.
pub fn is_database(path: &Path) -> bool {
    super::database::is_named(path, FILE_NAME, None)
}

/// A database is one source holding many sessions.
pub fn classify(path: &Path) -> Option<FoundFile> {
    is_database(path).then(|| FoundFile::main(Agent::Crush, path))
}

/// Whether a path is Crush's (for the hook, given only a path).
pub fn owns_path(path: &Path) -> bool {
    super::database::is_named(path, FILE_NAME, Some(DATA_DIR))
}

/// The project a database belongs to: the folder holding its `.crush/`.
fn project_of(db: &Path) -> Option<String> {
    let data = db.parent()?;
    (data.file_name()? == DATA_DIR)
        .then(|| data.parent().map(|p| p.to_string_lossy().into_owned()))?
}

/// Crush's tool names in Cairn's kinds.
pub fn tool_kind(name: &str) -> ToolKind {
    match name {
        "bash" => ToolKind::Exec,
        "edit" | "multiedit" | "write" | "lsp_replace_symbol" => ToolKind::FileEdit,
        "agent" | "agentic_fetch" => ToolKind::SubAgent,
        "fetch" | "web_fetch" | "web_search" | "sourcegraph" | "download" => ToolKind::WebSearch,
        "view" | "ls" | "glob" | "grep" | "diagnostics" | "todos" | "job_output" | "job_kill" => {
            ToolKind::Housekeeping
        }
        other => ToolKind::of(other),
    }
}

/// The reader of Crush's database.
pub struct Crush;

/// Columns every read needs; the others are read when present.
const SESSION_COLUMNS: [&str; 3] = ["id", "title", "updated_at"];
const MESSAGE_COLUMNS: [&str; 6] = [
    "id",
    "session_id",
    "role",
    "parts",
    "created_at",
    "updated_at",
];

impl DatabaseSource for Crush {
    fn agent(&self) -> Agent {
        Agent::Crush
    }

    fn check(&self, conn: &Connection) -> Result<(), String> {
        require(conn, "sessions", &SESSION_COLUMNS)?;
        require(conn, "messages", &MESSAGE_COLUMNS)
    }

    fn sessions(&self, conn: &Connection) -> rusqlite::Result<Vec<DbSession>> {
        let mut stmt = conn.prepare_cached(
            "SELECT s.id, s.updated_at, m.n, m.newest, m.last_row
             FROM sessions s LEFT JOIN (
                SELECT session_id, count(*) AS n, max(updated_at) AS newest, max(rowid) AS last_row
                FROM messages GROUP BY session_id
             ) m ON m.session_id = s.id
             ORDER BY s.created_at, s.rowid",
        )?;
        let rows = stmt.query_map([], |r| {
            let id = json_of(r.get_ref(0)?);
            let touched = int_of(r.get_ref(1)?);
            let count = int_of(r.get_ref(2)?);
            let newest = int_of(r.get_ref(3)?);
            let last_row = int_of(r.get_ref(4)?);
            Ok((id, touched, count, newest, last_row))
        })?;
        let mut out = Vec::new();
        for row in rows {
            let (id, touched, count, newest, last_row) = row?;
            // A session without a text id is not one Crush wrote.
            let Value::String(id) = id else { continue };
            out.push(DbSession {
                id,
                marker: format!("{touched}/{count}/{newest}/{last_row}"),
                newest: epoch_seconds(newest.max(touched)),
                count: count.max(0) as u64,
                row: None,
            });
        }
        Ok(out)
    }

    fn header(&self, conn: &Connection, session: &DbSession) -> rusqlite::Result<Option<Value>> {
        let session = session.id.as_str();
        row_as_json(conn, "sessions", session)
    }

    fn units(
        &self,
        conn: &Connection,
        session: &DbSession,
        since: Option<i64>,
        each: &mut dyn FnMut(DbUnit) -> bool,
    ) -> rusqlite::Result<()> {
        let session = session.id.as_str();
        let have = super::database::columns(conn, "messages")?;
        // Every column the table has (a newer Crush may add some), `parts` only when it is not
        // over the limit.
        let select: Vec<String> = have
            .iter()
            .map(|c| {
                let q = format!("\"{}\"", c.replace('"', "\"\""));
                if c == "parts" {
                    format!("CASE WHEN octet_length(parts) > {MAX_COLUMN_BYTES} THEN NULL ELSE parts END AS parts")
                } else {
                    q
                }
            })
            .collect();
        let sql = format!(
            "SELECT {}, octet_length(parts) AS \"cairn:len\" FROM messages
             WHERE session_id = ?1 AND (?2 IS NULL OR updated_at >= ?2)
             ORDER BY created_at, rowid",
            select.join(", ")
        );
        let mut stmt = conn.prepare_cached(&sql)?;
        let names: Vec<String> = stmt.column_names().map(str::to_owned).collect();
        let mut rows = stmt.query(rusqlite::params![session, since])?;
        while let Some(row) = rows.next()? {
            let mut obj = serde_json::Map::new();
            let mut text = RowText::new();
            let mut len = 0i64;
            let mut lossy = false;
            for (i, name) in names.iter().enumerate() {
                let v = row.get_ref(i)?;
                let value = match name.as_str() {
                    "cairn:len" => {
                        len = int_of(v);
                        continue;
                    }
                    "parts" => {
                        let (parts, parts_lossy) = json_column(v);
                        lossy |= parts_lossy;
                        text.json(name, v, &parts);
                        parts
                    }
                    _ => {
                        let value = json_of(v);
                        text.value(name, &value);
                        value
                    }
                };
                obj.insert(name.clone(), value);
            }
            let Some(Value::String(key)) = obj.get("id").cloned() else {
                continue;
            };
            let updated = obj.get("updated_at").and_then(Value::as_i64).unwrap_or(0);
            let too_long = len > MAX_COLUMN_BYTES;
            let unit = DbUnit {
                key,
                updated,
                value: (!too_long).then_some(Value::Object(obj)),
                text: (!too_long).then(|| text.finish()),
                bytes: len.max(0) as u64,
                lossy,
            };
            if !each(unit) {
                break;
            }
        }
        Ok(())
    }

    fn unit_keys(
        &self,
        conn: &Connection,
        session: &DbSession,
    ) -> rusqlite::Result<BTreeSet<String>> {
        text_ids(
            conn,
            "SELECT id FROM messages WHERE session_id = ?1",
            session,
        )
    }

    fn parser(
        &self,
        path: &Path,
        saved: Option<&Value>,
    ) -> Result<Box<dyn UnitParser>, serde_json::Error> {
        let mut parser = match saved {
            Some(state) => serde_json::from_value(state.clone())?,
            None => CrushParser::default(),
        };
        if parser.meta.cwd.is_none() {
            parser.meta.cwd = project_of(path);
        }
        Ok(Box::new(parser))
    }
}

/// What the parser keeps between reads.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct CrushParser {
    meta: SessionMeta,
    /// Tool names by call id (a result names its call only by id).
    calls: BTreeMap<String, String>,
    /// The message holding the session's summary (Crush's compaction).
    summary: Option<String>,
}

impl CrushParser {
    fn tool_call(&mut self, i: usize, data: &Value, base: &Record, out: &mut LineOutput) {
        let id = str_at(data, &["id"])
            .map(str::to_owned)
            .unwrap_or_else(|| format!("#{i}"));
        let name = str_at(data, &["name"]).unwrap_or("unknown").to_owned();
        let kind = tool_kind(&name);
        // The input is JSON written as a string; a string that is not JSON is kept as text.
        let mut input = match data.get("input") {
            Some(Value::String(s)) => {
                Some(serde_json::from_str::<Value>(s).unwrap_or_else(|_| Value::String(s.clone())))
            }
            Some(Value::Null) | None => None,
            Some(other) => Some(other.clone()),
        };
        let mut paths = Vec::new();
        if kind == ToolKind::FileEdit
            && let Some(p) = input
                .as_ref()
                .and_then(|i| str_at(i, &["file_path"]))
                .filter(|p| !p.is_empty())
        {
            paths.push(p.to_owned());
        }
        if let Some(v) = input.as_mut() {
            cap_json(v, MAX_INPUT_STRING_BYTES);
        }
        if self.calls.len() < 100_000 {
            super::remember_call(&mut self.calls, id.clone(), name.clone());
        }
        out.records.push(Record {
            kind: Some(RecordKind::ToolCall),
            key: Some(format!("call:{id}")),
            source_event_kind: "crush:assistant:tool_call".to_owned(),
            role: Some("assistant".to_owned()),
            tool_name: Some(name),
            tool_kind: Some(kind),
            tool_input: input,
            call_id: Some(id),
            file_paths: paths,
            cwd: self.meta.cwd.clone(),
            ..base.clone()
        });
    }

    fn tool_result(&mut self, i: usize, data: &Value, base: &Record, out: &mut LineOutput) {
        let id = str_at(data, &["tool_call_id"])
            .map(str::to_owned)
            .unwrap_or_else(|| format!("#{i}"));
        let name = self.calls.get(&id).cloned().or_else(|| {
            str_at(data, &["name"])
                .filter(|n| !n.is_empty())
                .map(str::to_owned)
        });
        // Crush's bash result says where it ran.
        if let Some(Value::String(meta)) = data.get("metadata")
            && let Ok(m) = serde_json::from_str::<Value>(meta)
        {
            set_once(&mut self.meta.cwd, str_at(&m, &["working_directory"]));
        }
        let output = ToolOutput {
            name,
            call_id: Some(id.clone()),
            text: str_at(data, &["content"])
                .filter(|t| !t.is_empty())
                .map(str::to_owned),
            failed: data.get("is_error").and_then(Value::as_bool),
            ..ToolOutput::default()
        };
        out.records.push(output.record(
            "crush:tool:tool_result".to_owned(),
            tool_kind,
            Record {
                key: Some(format!("result:{id}")),
                role: Some("tool".to_owned()),
                cwd: self.meta.cwd.clone(),
                ..base.clone()
            },
        ));
    }
}

impl UnitParser for CrushParser {
    fn header(&mut self, h: &Value, out: &mut LineOutput) {
        if !h.is_object() {
            count_unknown(&mut self.meta, "crush:session-not-an-object");
            return;
        }
        set_once(&mut self.meta.session_id, str_at(h, &["id"]));
        if let Some(parent) = str_at(h, &["parent_session_id"]).filter(|p| !p.is_empty()) {
            set_once(&mut self.meta.parent_session_id, Some(parent));
            set_once(&mut self.meta.relation, Some("subagent"));
        }
        set_latest(&mut self.meta.title, str_at(h, &["title"]));
        set_latest(&mut self.summary, str_at(h, &["summary_message_id"]));
        for key in ["created_at", "updated_at"] {
            let ts = h.get(key).and_then(Value::as_i64).and_then(epoch_time);
            note_timestamp(&mut self.meta, ts.as_deref());
        }
        let tokens = |k: &str| h.get(k).and_then(Value::as_u64).unwrap_or(0);
        let usage = TokenUsage {
            input: tokens("prompt_tokens"),
            output: tokens("completion_tokens"),
            ..TokenUsage::default()
        };
        if usage != TokenUsage::default() {
            self.meta.cumulative_usage = Some(usage);
        }
        let _ = out;
    }

    fn unit(&mut self, key: &str, m: &Value, out: &mut LineOutput) {
        if !m.is_object() {
            count_unknown(&mut self.meta, "crush:message-not-an-object");
            return;
        }
        let ts = m
            .get("created_at")
            .and_then(Value::as_i64)
            .and_then(epoch_time);
        note_timestamp(&mut self.meta, ts.as_deref());
        let role = str_at(m, &["role"]).unwrap_or("");
        if role == "assistant" {
            set_latest(&mut self.meta.model, str_at(m, &["model"]));
        }
        set_once(&mut self.meta.provider, str_at(m, &["provider"]));
        let base = Record {
            timestamp: ts,
            message_id: Some(key.to_owned()),
            unit: Some(key.to_owned()),
            is_compaction: self.summary.as_deref() == Some(key),
            ..Record::default()
        };
        let Some(parts) = m.get("parts").and_then(Value::as_array) else {
            count_unknown(&mut self.meta, "crush:parts-not-an-array");
            return;
        };
        for (i, part) in parts.iter().enumerate() {
            let kind = str_at(part, &["type"]).unwrap_or("");
            let data = part.get("data").unwrap_or(&Value::Null);
            match (kind, role) {
                ("text", "user") => {
                    let Some(text) = str_at(data, &["text"]).filter(|t| !t.is_empty()) else {
                        continue;
                    };
                    // `hidden`: a continuation Crush wrote in the person's place.
                    let hidden = data.get("hidden").and_then(Value::as_bool) == Some(true);
                    let source = if hidden || is_system_injected(text) {
                        PromptSource::SystemInjected
                    } else {
                        PromptSource::Human
                    };
                    out.records.push(Record {
                        kind: Some(RecordKind::Message),
                        key: Some(format!("text:{i}")),
                        source_event_kind: "crush:user".to_owned(),
                        role: Some("user".to_owned()),
                        prompt_source: Some(source),
                        text: Some(cap_text(text.to_owned(), MAX_TEXT_BYTES)),
                        cwd: self.meta.cwd.clone(),
                        ..base.clone()
                    });
                }
                ("text", _) => {
                    let Some(text) = str_at(data, &["text"]).filter(|t| !t.is_empty()) else {
                        continue;
                    };
                    out.records.push(Record {
                        kind: Some(RecordKind::Message),
                        key: Some(format!("text:{i}")),
                        source_event_kind: format!("crush:{role}"),
                        role: Some("assistant".to_owned()),
                        text: Some(cap_text(text.to_owned(), MAX_TEXT_BYTES)),
                        ..base.clone()
                    });
                }
                ("reasoning", _) => {
                    let Some(text) = str_at(data, &["thinking"]).filter(|t| !t.is_empty()) else {
                        continue;
                    };
                    out.records.push(Record {
                        kind: Some(RecordKind::Reasoning),
                        key: Some(format!("reasoning:{i}")),
                        source_event_kind: "crush:assistant:reasoning".to_owned(),
                        role: Some("assistant".to_owned()),
                        text: Some(cap_text(text.to_owned(), MAX_TEXT_BYTES)),
                        ..base.clone()
                    });
                }
                // A command the person ran in bang mode (`!make`), with its output (Crush 0.78+).
                ("shell_command", _) => {
                    let command = str_at(data, &["command"]).unwrap_or("");
                    let output = str_at(data, &["output"]).unwrap_or("");
                    let exit_code = data
                        .get("exit_code")
                        .and_then(Value::as_i64)
                        .and_then(|c| i32::try_from(c).ok());
                    let call = Record {
                        key: Some(format!("shell:{i}")),
                        role: Some("user".to_owned()),
                        tool_name: Some("shell".to_owned()),
                        tool_kind: Some(ToolKind::Exec),
                        call_id: Some(format!("{key}#{i}")),
                        cwd: self.meta.cwd.clone(),
                        ..base.clone()
                    };
                    out.records.push(Record {
                        kind: Some(RecordKind::ToolCall),
                        source_event_kind: "crush:user:shell_command".to_owned(),
                        tool_input: Some(serde_json::json!({
                            "command": cap_text(command.to_owned(), MAX_INPUT_STRING_BYTES)
                        })),
                        ..call.clone()
                    });
                    out.records.push(Record {
                        kind: Some(RecordKind::ToolResult),
                        key: Some(format!("shell-result:{i}")),
                        source_event_kind: "crush:user:shell_command:result".to_owned(),
                        role: Some("tool".to_owned()),
                        text: (!output.is_empty())
                            .then(|| cap_text(output.to_owned(), MAX_TOOL_OUTPUT_BYTES)),
                        exit_code,
                        outcome: exit_code.map(|c| outcome_for(c, output)),
                        ..call
                    });
                }
                ("tool_call", _) => self.tool_call(i, data, &base, out),
                ("tool_result", _) => self.tool_result(i, data, &base, out),
                ("finish", _) => {
                    // How a reply ended; only an end a person should see is a record.
                    let reason = str_at(data, &["reason"]).unwrap_or("");
                    if matches!(reason, "canceled" | "error" | "permission_denied") {
                        let text = str_at(data, &["message"])
                            .filter(|t| !t.is_empty())
                            .unwrap_or(reason);
                        out.records.push(Record {
                            kind: Some(RecordKind::Event),
                            key: Some("finish".to_owned()),
                            source_event_kind: format!("crush:finish:{reason}"),
                            text: Some(cap_text(text.to_owned(), MAX_TEXT_BYTES)),
                            ..base.clone()
                        });
                    }
                }
                ("binary" | "image_url", _) => {
                    count_unknown(&mut self.meta, &format!("crush:{kind}"));
                }
                (other, _) => count_unknown(&mut self.meta, &format!("crush:part:{other}")),
            }
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
    use serde_json::json;

    /// `lsp_replace_symbol` (Crush 0.86) rewrites a symbol in a file: an edit.
    #[test]
    fn a_symbol_replaced_through_the_language_server_is_an_edit() {
        assert_eq!(tool_kind("lsp_replace_symbol"), ToolKind::FileEdit);
        assert_eq!(tool_kind("lsp_diagnostics"), ToolKind::Other);
    }

    #[test]
    fn a_database_under_dot_crush_is_a_project_s() {
        assert!(owns_path(Path::new("/w/app/.crush/crush.db")));
        assert!(!owns_path(Path::new("/w/app/crush.db")));
        assert_eq!(
            project_of(Path::new("/w/app/.crush/crush.db")).as_deref(),
            Some("/w/app")
        );
        assert_eq!(project_of(Path::new("/w/app/crush.db")), None);
        assert!(classify(Path::new("/w/app/.crush/crush.db-wal")).is_none());
    }

    /// Each message's row text, put together from its columns' own text, is what serde_json
    /// writes for its value: the same revision and retained line as before it was put
    /// together so (no unit of a stored database reads as changed), for every message of the
    /// real database, Go's `\u003c` escapes and all.
    #[test]
    fn a_row_s_text_is_its_value_s_serde_json_text() {
        // A copy: a reader of a WAL database leaves its `-shm` beside it.
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join(FILE_NAME);
        std::fs::copy(
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../../tests/fixtures/crush/Starmel-OpenSuperWhisper/.crush/crush.db"),
            &db,
        )
        .unwrap();
        let conn = super::super::database::open_read_only(&db).unwrap();
        let mut units = 0;
        let mut escaped = 0;
        for session in Crush.sessions(&conn).unwrap() {
            Crush
                .units(&conn, &session, None, &mut |unit| {
                    let (value, text) = (unit.value.unwrap(), unit.text.unwrap());
                    assert_eq!(text, value.to_string(), "{}", unit.key);
                    units += 1;
                    escaped += usize::from(value["parts"].to_string().contains('<'));
                    true
                })
                .unwrap();
        }
        assert_eq!(units, 132);
        // Rows whose Go text held `\u003c` (rewritten, not copied).
        assert!(escaped > 10, "{escaped}");
    }

    #[test]
    fn parts_of_unexpected_shapes_are_counted_never_fatal() {
        let mut p = CrushParser::default();
        let mut out = LineOutput::default();
        p.unit(
            "m1",
            &json!({"role": "user", "parts": "not an array"}),
            &mut out,
        );
        p.unit("m2", &json!({"role": "user", "parts": [7, {"type": "video"}, {"type": "text", "data": {"text": 3}}]}), &mut out);
        p.unit("m3", &json!(["not", "an", "object"]), &mut out);
        p.header(&json!("nope"), &mut out);
        assert!(out.records.is_empty());
        let unknown = &p.meta().unknown_types;
        assert_eq!(unknown.get("crush:parts-not-an-array"), Some(&1));
        assert_eq!(unknown.get("crush:part:video"), Some(&1));
        assert_eq!(unknown.get("crush:part:"), Some(&1));
        assert_eq!(unknown.get("crush:message-not-an-object"), Some(&1));
    }

    /// A command run in bang mode is the person's call with its result; a continuation Crush
    /// wrote in the person's place is injected.
    #[test]
    fn a_bang_command_is_a_call_and_a_hidden_continuation_is_injected() {
        let mut p = CrushParser::default();
        let mut out = LineOutput::default();
        p.unit(
            "u",
            &json!({"role": "user", "created_at": 1754331270, "parts": [
                {"type": "shell_command", "data": {"command": "make test", "output": "1 failed", "exit_code": 2}},
                {"type": "text", "data": {"text": "Continue.", "hidden": true}}
            ]}),
            &mut out,
        );
        let got: Vec<_> = out
            .records
            .iter()
            .map(|r| (r.kind, r.tool_kind, r.exit_code, r.prompt_source))
            .collect();
        assert_eq!(
            got,
            [
                (Some(RecordKind::ToolCall), Some(ToolKind::Exec), None, None),
                (
                    Some(RecordKind::ToolResult),
                    Some(ToolKind::Exec),
                    Some(2),
                    None
                ),
                (
                    Some(RecordKind::Message),
                    None,
                    None,
                    Some(PromptSource::SystemInjected)
                ),
            ]
        );
        assert_eq!(
            out.records[0].tool_input,
            Some(json!({"command": "make test"}))
        );
        assert_eq!(out.records[1].text.as_deref(), Some("1 failed"));
        assert_eq!(out.records[1].outcome, Some(Outcome::Failed));
        assert_eq!(out.records[0].call_id, out.records[1].call_id);
        assert!(p.meta().unknown_types.is_empty());
    }

    #[test]
    fn a_tool_result_takes_its_call_s_name_and_kind() {
        let mut p = CrushParser::default();
        let mut out = LineOutput::default();
        p.unit(
            "a",
            &json!({"role": "assistant", "created_at": 1754331270, "parts": [
                {"type": "tool_call", "data": {"id": "c1", "name": "edit", "input": "{\"file_path\":\"/p/x.rs\"}"}},
                {"type": "tool_call", "data": {"id": "c2", "name": "bash", "input": "not json"}}
            ]}),
            &mut out,
        );
        p.unit(
            "t",
            &json!({"role": "tool", "parts": [
                {"type": "tool_result", "data": {"tool_call_id": "c1", "name": "", "content": "ok", "is_error": false}},
                {"type": "tool_result", "data": {"tool_call_id": "c2", "content": "boom\nexit code 2", "is_error": true,
                  "metadata": "{\"working_directory\":\"/p\"}"}}
            ]}),
            &mut out,
        );
        let r = &out.records;
        assert_eq!(r[0].file_paths, vec!["/p/x.rs"]);
        assert_eq!(r[0].timestamp.as_deref(), Some("2025-08-04T18:14:30Z"));
        assert_eq!(r[1].tool_input, Some(json!("not json")));
        assert_eq!(r[2].tool_kind, Some(ToolKind::FileEdit));
        assert_eq!(r[2].outcome, Some(Outcome::Succeeded));
        assert_eq!(r[3].tool_kind, Some(ToolKind::Exec));
        assert_eq!(r[3].exit_code, Some(2));
        assert_eq!(r[3].outcome, Some(Outcome::Failed));
        assert_eq!(p.meta().cwd.as_deref(), Some("/p"));
    }
}

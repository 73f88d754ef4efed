//! OpenCode (sst/opencode): `opencode.db` in its data folder (`$XDG_DATA_HOME/opencode`, else
//! `~/.local/share/opencode`, on Linux and macOS alike), read as the
//! [`ReadKind::Database`](super::ReadKind::Database) kind.
//!
//! Tables read (OpenCode 1.2+, drizzle): `session` (`id`, `parent_id` for a session the `task`
//! tool started, `directory` = cwd, `title`, `version`, `time_created`/`time_updated` in epoch
//! milliseconds), `message` (`id`, `session_id`, times, `data` JSON: `role`, `time.created`,
//! `modelID`/`providerID` or `model{}`, `tokens`, `path.cwd`, `error`) and `part` (`id`,
//! `message_id`, `session_id`, times, `data` JSON: `text`, `reasoning`, `tool` with
//! `callID`/`tool`/`state{status,input,output,error,metadata.exit}`, `step-start`,
//! `step-finish`, `patch`, `file`, `compaction`, `subtask`, …). A unit is a message with its
//! parts (`{"info": …, "parts": […]}`): OpenCode rewrites both while it streams, so a unit is
//! read again when the message or any of its parts moved, and its records are keyed by part.
//! The same message and part shapes are what the older JSON storage tree holds.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use rusqlite::Connection;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::database::{
    DatabaseSource, DbSession, DbUnit, MAX_COLUMN_BYTES, UnitParser, epoch_seconds, epoch_time,
    int_of, json_column, json_of, require, row_as_json, text_ids,
};
use super::{
    LineOutput, MAX_INPUT_STRING_BYTES, MAX_TEXT_BYTES, MAX_TOOL_OUTPUT_BYTES, SessionMeta,
    cap_json, cap_text, count_unknown, exit_code_in, is_system_injected, note_timestamp,
    outcome_for, set_latest, set_once, str_at, u64_at,
};
use crate::archive::discover::{DirOrigin, FoundFile};
use crate::archive::{Agent, Outcome, PromptSource, Record, RecordKind, TokenUsage, ToolKind};

/// The database's file name.
pub const FILE_NAME: &str = "opencode.db";

/// The variable naming OpenCode's data folder (where `opencode.db` lies).
pub const ENV_DIR: &str = "OPENCODE_DATA_DIR";

/// Where OpenCode keeps its data: `$OPENCODE_DATA_DIR` when set, else `$XDG_DATA_HOME/opencode`,
/// else `~/.local/share/opencode` (OpenCode uses the XDG folders on macOS too).
pub fn locations(
    env: impl Fn(&str) -> Option<PathBuf>,
    home: Option<&Path>,
) -> Vec<(PathBuf, DirOrigin)> {
    if let Some(dir) = env(ENV_DIR) {
        return vec![(dir, DirOrigin::Env)];
    }
    if let Some(xdg) = env("XDG_DATA_HOME") {
        return vec![(xdg.join("opencode"), DirOrigin::Env)];
    }
    home.map(|h| vec![(h.join(".local/share/opencode"), DirOrigin::Default)])
        .unwrap_or_default()
}

/// Whether `path` is OpenCode's database by its name.
pub fn is_database(path: &Path) -> bool {
    super::database::is_named(path, FILE_NAME, None)
}

/// Whether `path` is a session file of the legacy storage tree:
/// `storage/session/<project>/<id>.json`.
pub fn is_session_file(path: &Path) -> bool {
    let name = |p: Option<&Path>| p.and_then(Path::file_name).map(|n| n.to_owned());
    let project = path.parent();
    let session = project.and_then(Path::parent);
    path.extension().is_some_and(|e| e == "json")
        && name(session).is_some_and(|n| n == "session")
        && name(session.and_then(Path::parent)).is_some_and(|n| n == "storage")
}

/// The session file a changed message or part file of the storage tree belongs to (the
/// watcher sees those change; the session file is the source that reads them):
/// `message/<session>/<message>.json` names its session by its folder, `part/<message>/<part>.json`
/// its message by its folder, and a part of the older flat layout, `part/<part>.json`, by its
/// `messageID` (the file is read, up to [`MAX_LOOKUP_BYTES`]). A message's session is the folder
/// under `message/` holding it. The session file is `session/<project>/<session>.json`, or failing
/// that the session file of the project folders whose `id` is the session.
pub fn session_file_of(path: &Path) -> Option<PathBuf> {
    if path.extension()? != "json" {
        return None;
    }
    let parent = path.parent()?;
    let name = |p: &Path| p.file_name().and_then(|n| n.to_str()).map(str::to_owned);
    let grand = parent.parent()?;
    let (storage, session) = if name(grand)? == "message" {
        (grand.parent()?, name(parent)?)
    } else {
        let (storage, message) = if name(parent)? == "part" {
            let part = read_small_json(path)?;
            (grand, part.get("messageID")?.as_str()?.to_owned())
        } else if name(grand)? == "part" {
            (grand.parent()?, name(parent)?)
        } else {
            return None;
        };
        if !plain_id(&message) {
            return None;
        }
        let file = named_or_with_id(&child_dirs(&storage.join("message")), &message)?;
        (storage, name(file.parent()?)?)
    };
    if name(storage)? != "storage" || !plain_id(&session) {
        return None;
    }
    named_or_with_id(&child_dirs(&storage.join("session")), &session).filter(|f| is_session_file(f))
}

/// The file `<id>.json` in one of `dirs`, or failing that the JSON file in them whose `id` is
/// `id` (a tree written by another tool may name its files otherwise).
fn named_or_with_id(dirs: &[PathBuf], id: &str) -> Option<PathBuf> {
    let named = format!("{id}.json");
    if let Some(file) = dirs.iter().map(|d| d.join(&named)).find(|f| f.is_file()) {
        return Some(file);
    }
    dirs.iter()
        .flat_map(|d| std::fs::read_dir(d).into_iter().flatten().flatten())
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .map(|e| e.path())
        .filter(|f| f.extension().is_some_and(|x| x == "json"))
        .find(|f| {
            read_small_json(f).is_some_and(|v| v.get("id").and_then(Value::as_str) == Some(id))
        })
}

/// The largest file [`session_file_of`] reads to find an id in it.
pub const MAX_LOOKUP_BYTES: u64 = 1024 * 1024;

/// A small JSON file of the storage tree, parsed; `None` when it is missing, larger than
/// [`MAX_LOOKUP_BYTES`] or not JSON.
fn read_small_json(path: &Path) -> Option<Value> {
    use std::io::Read as _;
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .ok()?
        .take(MAX_LOOKUP_BYTES + 1)
        .read_to_end(&mut bytes)
        .ok()?;
    if bytes.len() as u64 > MAX_LOOKUP_BYTES {
        return None;
    }
    serde_json::from_slice(&crate::archive::json_text::readable(&bytes)).ok()
}

/// The folders directly in `dir` (symlinks to folders are not followed), by name.
fn child_dirs(dir: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .map(|e| e.path())
        .collect();
    out.sort();
    out
}

/// An id that can name a file of the tree: no separators, no `..`, nothing unprintable.
fn plain_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= 256
        && id != "."
        && id != ".."
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
}

/// The database is read as a database, a session file of the storage tree as a tree.
pub fn read_kind(path: &Path) -> super::ReadKind {
    if is_database(path) {
        super::ReadKind::Database
    } else {
        super::ReadKind::Tree
    }
}

/// A parser of the storage tree's messages (the database's parser: the shapes are the same).
pub fn tree_parser(saved: Option<&Value>) -> Result<Box<dyn UnitParser>, serde_json::Error> {
    OpencodeDb.parser(Path::new(""), saved)
}

/// The database is one source holding every session; a session file of the storage tree is
/// one session.
pub fn classify(path: &Path) -> Option<FoundFile> {
    (is_database(path) || is_session_file(path)).then(|| FoundFile::main(Agent::Opencode, path))
}

/// Whether a path is OpenCode's (for the hook, given only a path).
pub fn owns_path(path: &Path) -> bool {
    (is_database(path) || is_session_file(path)) && path.to_string_lossy().contains("/opencode/")
}

/// OpenCode's tool names in Cairn's kinds.
pub fn tool_kind(name: &str) -> ToolKind {
    match name {
        "bash" => ToolKind::Exec,
        "edit" | "write" | "patch" | "multiedit" | "apply_patch" => ToolKind::FileEdit,
        "task" => ToolKind::SubAgent,
        "webfetch" | "websearch" | "codesearch" => ToolKind::WebSearch,
        "read" | "glob" | "grep" | "list" | "todowrite" | "todoread" | "lsp" | "skill" => {
            ToolKind::Housekeeping
        }
        other => ToolKind::of(other),
    }
}

/// The reader of OpenCode's database.
pub struct OpencodeDb;

impl DatabaseSource for OpencodeDb {
    fn agent(&self) -> Agent {
        Agent::Opencode
    }

    fn check(&self, conn: &Connection) -> Result<(), String> {
        require(conn, "session", &["id", "time_updated"])?;
        require(
            conn,
            "message",
            &["id", "session_id", "time_created", "time_updated", "data"],
        )?;
        require(
            conn,
            "part",
            &["id", "message_id", "session_id", "time_updated", "data"],
        )
    }

    fn sessions(&self, conn: &Connection) -> rusqlite::Result<Vec<DbSession>> {
        let mut stmt = conn.prepare_cached(
            "SELECT s.id, s.time_updated, m.n, m.newest, p.n, p.newest
             FROM session s
             LEFT JOIN (SELECT session_id, count(*) AS n, max(time_updated) AS newest
                        FROM message GROUP BY session_id) m ON m.session_id = s.id
             LEFT JOIN (SELECT session_id, count(*) AS n, max(time_updated) AS newest
                        FROM part GROUP BY session_id) p ON p.session_id = s.id
             ORDER BY s.time_created, s.rowid",
        )?;
        let rows = stmt.query_map([], |r| {
            Ok((
                json_of(r.get_ref(0)?),
                int_of(r.get_ref(1)?),
                int_of(r.get_ref(2)?),
                int_of(r.get_ref(3)?),
                int_of(r.get_ref(4)?),
                int_of(r.get_ref(5)?),
            ))
        })?;
        let mut out = Vec::new();
        for row in rows {
            let (id, touched, messages, newest_message, parts, newest_part) = row?;
            let Value::String(id) = id else { continue };
            let newest = newest_message.max(newest_part);
            out.push(DbSession {
                id,
                marker: format!("{touched}/{messages}/{newest_message}/{parts}/{newest_part}"),
                newest: epoch_seconds(newest.max(touched)),
                count: messages.max(0) as u64,
                row: None,
            });
        }
        Ok(out)
    }

    fn header(&self, conn: &Connection, session: &DbSession) -> rusqlite::Result<Option<Value>> {
        let session = session.id.as_str();
        row_as_json(conn, "session", session)
    }

    fn units(
        &self,
        conn: &Connection,
        session: &DbSession,
        since: Option<i64>,
    ) -> rusqlite::Result<Vec<DbUnit>> {
        let session = session.id.as_str();
        let guarded = format!(
            "CASE WHEN octet_length(data) > {MAX_COLUMN_BYTES} THEN NULL ELSE data END, octet_length(data)"
        );
        let mut messages = conn.prepare_cached(&format!(
            "SELECT id, time_updated, {guarded} FROM message m
             WHERE session_id = ?1 AND (?2 IS NULL OR time_updated >= ?2 OR EXISTS (
                SELECT 1 FROM part p WHERE p.message_id = m.id AND p.time_updated >= ?2))
             ORDER BY time_created, id"
        ))?;
        let mut parts = conn.prepare_cached(&format!(
            "SELECT time_updated, {guarded} FROM part WHERE message_id = ?1 ORDER BY id"
        ))?;
        let mut rows = messages.query(rusqlite::params![session, since])?;
        let mut out = Vec::new();
        while let Some(row) = rows.next()? {
            let Value::String(key) = json_of(row.get_ref(0)?) else {
                continue;
            };
            let mut updated = int_of(row.get_ref(1)?);
            let mut bytes = int_of(row.get_ref(3)?).max(0) as u64;
            let mut too_long = row.get_ref(2)?.data_type() == rusqlite::types::Type::Null;
            let info = json_column(row.get_ref(2)?);
            let mut list = Vec::new();
            let mut part_rows = parts.query([&key])?;
            while let Some(p) = part_rows.next()? {
                updated = updated.max(int_of(p.get_ref(0)?));
                bytes += int_of(p.get_ref(2)?).max(0) as u64;
                too_long |= p.get_ref(1)?.data_type() == rusqlite::types::Type::Null;
                list.push(json_column(p.get_ref(1)?));
            }
            out.push(DbUnit {
                key,
                updated,
                value: (!too_long).then(|| serde_json::json!({"info": info, "parts": list})),
                text: None,
                bytes,
            });
        }
        Ok(out)
    }

    fn unit_keys(
        &self,
        conn: &Connection,
        session: &DbSession,
    ) -> rusqlite::Result<BTreeSet<String>> {
        text_ids(
            conn,
            "SELECT id FROM message WHERE session_id = ?1",
            session,
        )
    }

    fn parser(
        &self,
        _path: &Path,
        saved: Option<&Value>,
    ) -> Result<Box<dyn UnitParser>, serde_json::Error> {
        Ok(Box::new(match saved {
            Some(state) => serde_json::from_value::<OpencodeParser>(state.clone())?,
            None => OpencodeParser::default(),
        }))
    }
}

/// What the parser keeps between reads.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct OpencodeParser {
    meta: SessionMeta,
}

/// A number at a path of keys.
fn i64_at(v: &Value, path: &[&str]) -> Option<i64> {
    let mut cur = v;
    for key in path {
        cur = cur.get(key)?;
    }
    cur.as_i64()
}

impl OpencodeParser {
    fn tool(&mut self, part: &Value, base: &Record, out: &mut LineOutput) {
        let id = str_at(part, &["callID"])
            .or_else(|| str_at(part, &["id"]))
            .unwrap_or("")
            .to_owned();
        let name = str_at(part, &["tool"]).unwrap_or("unknown").to_owned();
        let kind = tool_kind(&name);
        let state = part.get("state").unwrap_or(&Value::Null);
        let mut input = state.get("input").cloned().filter(|i| !i.is_null());
        let mut paths = Vec::new();
        if kind == ToolKind::FileEdit
            && let Some(p) = input
                .as_ref()
                .and_then(|i| str_at(i, &["filePath"]).or_else(|| str_at(i, &["file_path"])))
        {
            paths.push(p.to_owned());
        }
        if let Some(v) = input.as_mut() {
            cap_json(v, MAX_INPUT_STRING_BYTES);
        }
        let ts = i64_at(state, &["time", "start"])
            .and_then(epoch_time)
            .or_else(|| base.timestamp.clone());
        out.records.push(Record {
            kind: Some(RecordKind::ToolCall),
            key: Some(format!("call:{id}")),
            source_event_kind: "opencode:assistant:tool".to_owned(),
            role: Some("assistant".to_owned()),
            tool_name: Some(name.clone()),
            tool_kind: Some(kind),
            tool_input: input,
            call_id: Some(id.clone()),
            file_paths: paths.clone(),
            timestamp: ts,
            cwd: self.meta.cwd.clone(),
            ..base.clone()
        });
        let status = str_at(state, &["status"]).unwrap_or("");
        if !matches!(status, "completed" | "success" | "error") {
            return; // pending or running: OpenCode rewrites the part when it ends
        }
        let text = str_at(state, &["output"])
            .or_else(|| str_at(state, &["error"]))
            .unwrap_or("")
            .to_owned();
        let exit_code = i64_at(state, &["metadata", "exit"])
            .and_then(|c| i32::try_from(c).ok())
            .or_else(|| {
                (kind == ToolKind::Exec)
                    .then(|| exit_code_in(&text))
                    .flatten()
            });
        let outcome = match (exit_code, status) {
            (Some(code), _) => outcome_for(code, &text),
            (None, "error") => Outcome::Failed,
            (None, _) => Outcome::Succeeded,
        };
        out.records.push(Record {
            kind: Some(RecordKind::ToolResult),
            key: Some(format!("result:{id}")),
            source_event_kind: format!("opencode:tool:{status}"),
            role: Some("tool".to_owned()),
            tool_name: Some(name),
            tool_kind: Some(kind),
            call_id: Some(id),
            text: (!text.is_empty()).then(|| cap_text(text, MAX_TOOL_OUTPUT_BYTES)),
            exit_code,
            outcome: Some(outcome),
            file_paths: paths,
            timestamp: i64_at(state, &["time", "end"])
                .and_then(epoch_time)
                .or_else(|| base.timestamp.clone()),
            cwd: self.meta.cwd.clone(),
            ..base.clone()
        });
    }
}

impl UnitParser for OpencodeParser {
    /// A session row of the database (`parent_id`, `time_created`) or a session file of the
    /// storage tree (`parentID`, `time.created`).
    fn header(&mut self, h: &Value, _out: &mut LineOutput) {
        if !h.is_object() {
            count_unknown(&mut self.meta, "opencode:session-not-an-object");
            return;
        }
        set_once(&mut self.meta.session_id, str_at(h, &["id"]));
        let parent = str_at(h, &["parent_id"]).or_else(|| str_at(h, &["parentID"]));
        if let Some(parent) = parent.filter(|p| !p.is_empty()) {
            set_once(&mut self.meta.parent_session_id, Some(parent));
            set_once(&mut self.meta.relation, Some("subagent"));
        }
        set_once(&mut self.meta.cwd, str_at(h, &["directory"]));
        set_latest(&mut self.meta.title, str_at(h, &["title"]));
        set_once(&mut self.meta.tool_version, str_at(h, &["version"]));
        for (flat, nested) in [("time_created", "created"), ("time_updated", "updated")] {
            let n = i64_at(h, &[flat]).or_else(|| i64_at(h, &["time", nested]));
            note_timestamp(&mut self.meta, n.and_then(epoch_time).as_deref());
        }
    }

    fn unit(&mut self, key: &str, unit: &Value, out: &mut LineOutput) {
        let info = unit.get("info").unwrap_or(&Value::Null);
        if !info.is_object() {
            count_unknown(&mut self.meta, "opencode:message-not-an-object");
            return;
        }
        let ts = i64_at(info, &["time", "created"]).and_then(epoch_time);
        note_timestamp(&mut self.meta, ts.as_deref());
        let role = str_at(info, &["role"]).unwrap_or("");
        let cwd = str_at(info, &["path", "cwd"]).or_else(|| str_at(info, &["path"]));
        set_once(&mut self.meta.cwd, cwd);
        let model = str_at(info, &["modelID"]).or_else(|| str_at(info, &["model", "modelID"]));
        let provider =
            str_at(info, &["providerID"]).or_else(|| str_at(info, &["model", "providerID"]));
        if role == "assistant" {
            set_latest(&mut self.meta.model, model);
        }
        set_once(&mut self.meta.provider, provider);
        if role == "assistant"
            && let Some(tokens) = info.get("tokens").filter(|t| t.is_object())
        {
            out.usage.push((
                key.to_owned(),
                TokenUsage {
                    input: u64_at(tokens, "input"),
                    output: u64_at(tokens, "output"),
                    reasoning: u64_at(tokens, "reasoning"),
                    cache_read: tokens.get("cache").map_or(0, |c| u64_at(c, "read")),
                    cache_creation: tokens.get("cache").map_or(0, |c| u64_at(c, "write")),
                },
            ));
        }
        let base = Record {
            timestamp: ts,
            message_id: Some(key.to_owned()),
            unit: Some(key.to_owned()),
            ..Record::default()
        };
        let Some(parts) = unit.get("parts").and_then(Value::as_array) else {
            count_unknown(&mut self.meta, "opencode:parts-not-an-array");
            return;
        };
        for (i, part) in parts.iter().enumerate() {
            let kind = str_at(part, &["type"]).unwrap_or("");
            // A part's own id keys its record; its position when it has none.
            let pkey = str_at(part, &["id"]).map_or_else(|| format!("#{i}"), str::to_owned);
            let text = str_at(part, &["text"]).filter(|t| !t.is_empty());
            match kind {
                "text" if role == "user" => {
                    let Some(text) = text else { continue };
                    let synthetic = part.get("synthetic").and_then(Value::as_bool) == Some(true);
                    let source = if synthetic || is_system_injected(text) {
                        PromptSource::SystemInjected
                    } else {
                        PromptSource::Human
                    };
                    out.records.push(Record {
                        kind: Some(RecordKind::Message),
                        key: Some(format!("text:{pkey}")),
                        source_event_kind: "opencode:user".to_owned(),
                        role: Some("user".to_owned()),
                        prompt_source: Some(source),
                        text: Some(cap_text(text.to_owned(), MAX_TEXT_BYTES)),
                        cwd: self.meta.cwd.clone(),
                        ..base.clone()
                    });
                }
                "text" => {
                    let Some(text) = text else { continue };
                    out.records.push(Record {
                        kind: Some(RecordKind::Message),
                        key: Some(format!("text:{pkey}")),
                        source_event_kind: format!("opencode:{role}"),
                        role: Some("assistant".to_owned()),
                        text: Some(cap_text(text.to_owned(), MAX_TEXT_BYTES)),
                        ..base.clone()
                    });
                }
                "reasoning" => {
                    let Some(text) = text else { continue };
                    out.records.push(Record {
                        kind: Some(RecordKind::Reasoning),
                        key: Some(format!("reasoning:{pkey}")),
                        source_event_kind: "opencode:assistant:reasoning".to_owned(),
                        role: Some("assistant".to_owned()),
                        text: Some(cap_text(text.to_owned(), MAX_TEXT_BYTES)),
                        ..base.clone()
                    });
                }
                "tool" => self.tool(part, &base, out),
                "compaction" => out.records.push(Record {
                    kind: Some(RecordKind::Event),
                    key: Some(format!("compaction:{pkey}")),
                    source_event_kind: "opencode:compaction".to_owned(),
                    is_compaction: true,
                    ..base.clone()
                }),
                "subtask" => out.records.push(Record {
                    kind: Some(RecordKind::Event),
                    key: Some(format!("subtask:{pkey}")),
                    source_event_kind: "opencode:subtask".to_owned(),
                    text: str_at(part, &["prompt"])
                        .or_else(|| str_at(part, &["description"]))
                        .map(|t| cap_text(t.to_owned(), MAX_TEXT_BYTES)),
                    ..base.clone()
                }),
                // Bookkeeping of a step (its tokens are the message's), snapshots, attachments
                // and patch summaries (the edits are the tool calls).
                "step-start" | "step-finish" | "snapshot" | "patch" | "file" | "agent"
                | "retry" => {}
                other => count_unknown(&mut self.meta, &format!("opencode:part:{other}")),
            }
        }
        if let Some(err) = info.get("error").filter(|e| e.is_object()) {
            let name = str_at(err, &["name"]).unwrap_or("error");
            let message = str_at(err, &["data", "message"]).unwrap_or(name);
            out.records.push(Record {
                kind: Some(RecordKind::Event),
                key: Some("error".to_owned()),
                source_event_kind: format!("opencode:error:{name}"),
                text: Some(cap_text(message.to_owned(), MAX_TEXT_BYTES)),
                ..base
            });
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
    use serde_json::json;

    #[test]
    fn the_data_folder_follows_xdg_unless_named() {
        let none = |_: &str| None;
        assert_eq!(
            locations(none, Some(Path::new("/h")))[0].0,
            PathBuf::from("/h/.local/share/opencode")
        );
        let xdg = |k: &str| (k == "XDG_DATA_HOME").then(|| PathBuf::from("/x"));
        assert_eq!(locations(xdg, None)[0].0, PathBuf::from("/x/opencode"));
        let named = |k: &str| (k == ENV_DIR).then(|| PathBuf::from("/o"));
        assert_eq!(locations(named, None)[0].0, PathBuf::from("/o"));
    }

    #[test]
    fn parts_of_unexpected_shapes_are_counted_never_fatal() {
        let mut p = OpencodeParser::default();
        let mut out = LineOutput::default();
        p.unit("m1", &json!({"info": "x"}), &mut out);
        p.unit(
            "m2",
            &json!({"info": {"role": "user"}, "parts": {"a": 1}}),
            &mut out,
        );
        p.unit(
            "m3",
            &json!({"info": {"role": "assistant", "tokens": "many"},
            "parts": [7, {"type": "hologram"}, {"type": "tool", "state": [1]}]}),
            &mut out,
        );
        let unknown = &p.meta().unknown_types;
        assert_eq!(unknown.get("opencode:message-not-an-object"), Some(&1));
        assert_eq!(unknown.get("opencode:parts-not-an-array"), Some(&1));
        assert_eq!(unknown.get("opencode:part:hologram"), Some(&1));
        assert_eq!(unknown.get("opencode:part:"), Some(&1));
        // The tool part without a state is still a call, never a result.
        assert_eq!(out.records.len(), 1);
        assert_eq!(out.records[0].kind, Some(RecordKind::ToolCall));
    }
}

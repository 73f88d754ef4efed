//! Cursor's IDE chat store: the `state.vscdb` SQLite database in Cursor's VS Code user folder
//! (`User/globalStorage/state.vscdb`), read as a [`ReadKind::Database`](super::ReadKind::Database)
//! source beside the agent transcripts of [`super::cursor`].
//!
//! Table read: `cursorDiskKV(key, value)`, a key-value store. A chat (a "composer") is the row
//! `composerData:<composerId>`: `name`, `createdAt`/`lastUpdatedAt` (ms), `modelConfig.modelName`,
//! and `fullConversationHeadersOnly[{bubbleId, type}]`, the order of its messages. Each message
//! (a "bubble") is its own row `bubbleId:<composerId>:<bubbleId>`: `type` 1 (user) or 2
//! (assistant), `text`, `thinking.text`, `toolFormerData{name, rawArgs|params, result, status,
//! toolCallId}`, `tokenCount{inputTokens, outputTokens}`, `createdAt`, `workspaceProjectDir` or
//! `workspaceUris`. Older composers keep their bubbles inline in `conversation[]`; those are read
//! the same way. (Shapes from the public descriptions of the format, `reference/formats.md` A.5:
//! no real `state.vscdb` with a licence to copy was found, so the test builds one.)
//!
//! The store has no update time per row. A composer is read again when its marker moves: the
//! rowids and lengths of its rows (the table replaces a row on write, which gives it a new
//! rowid). Its bubbles are then all fetched and only those whose redacted content changed are
//! parsed. Bubbles can be tens of MB: one over the column limit is skipped with a warning.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use rusqlite::Connection;
use rusqlite::types::ValueRef;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::database::{DatabaseSource, DbSession, DbUnit, MAX_COLUMN_BYTES, UnitParser, require};
use super::{
    LineOutput, MAX_INPUT_STRING_BYTES, MAX_TEXT_BYTES, SessionMeta, ToolOutput, cap_json,
    cap_text, count_unknown, is_system_injected, note_timestamp, set_latest, set_once, str_at,
};
use crate::archive::discover::{AppFolder, DirOrigin, FoundFile, app_folder};
use crate::archive::{Agent, PromptSource, Record, RecordKind, TokenUsage, ToolKind};

/// The database's file name.
pub const FILE_NAME: &str = "state.vscdb";

/// The variable naming Cursor's VS Code user folder (the one holding `globalStorage/`).
pub const ENV_USER_DIR: &str = "CURSOR_USER_DIR";

/// The folder of the user dir that holds the chat store.
const GLOBAL_STORAGE: &str = "globalStorage";

const COMPOSER: &str = "composerData:";
const BUBBLE: &str = "bubbleId:";

/// Where Cursor's chat store lives: `$CURSOR_USER_DIR/globalStorage` when set, else
/// `~/.config/Cursor/User/globalStorage` on Linux (`$XDG_CONFIG_HOME` honoured) and
/// `~/Library/Application Support/Cursor/User/globalStorage` on macOS.
pub fn locations(
    env: impl Fn(&str) -> Option<PathBuf>,
    home: Option<&Path>,
) -> Vec<(PathBuf, DirOrigin)> {
    user_dir(&env, home, cfg!(target_os = "macos"))
        .map(|(dir, origin)| vec![(dir.join(GLOBAL_STORAGE), origin)])
        .unwrap_or_default()
}

/// Cursor's VS Code user folder, for Linux or macOS.
fn user_dir(
    env: &impl Fn(&str) -> Option<PathBuf>,
    home: Option<&Path>,
    macos: bool,
) -> Option<(PathBuf, DirOrigin)> {
    if let Some(dir) = env(ENV_USER_DIR) {
        return Some((dir, DirOrigin::Env));
    }
    let config = app_folder(env, home, macos, AppFolder::Config)?;
    Some((config.join("Cursor/User"), DirOrigin::Default))
}

/// Whether `path` is the chat store by its place: `globalStorage/state.vscdb` (the per-workspace
/// `state.vscdb` files hold editor state, not chats).
pub fn is_database(path: &Path) -> bool {
    super::database::is_named(path, FILE_NAME, Some(GLOBAL_STORAGE))
}

/// The store is one source holding many chats.
pub fn classify(path: &Path) -> Option<FoundFile> {
    is_database(path).then(|| FoundFile::main(Agent::Cursor, path))
}

/// Whether a path is Cursor's chat store (for the hook, given only a path).
pub fn owns_path(path: &Path) -> bool {
    is_database(path) && path.to_string_lossy().contains("/Cursor/User/")
}

/// Cursor's IDE tool names in Cairn's kinds. The names are those seen in public descriptions
/// of the format (unverified against a real store); an unknown one falls to agentlog's rules.
pub fn tool_kind(name: &str) -> ToolKind {
    match name {
        "run_terminal_cmd" | "run_terminal_command" | "run_terminal_command_v2" => ToolKind::Exec,
        "edit_file" | "edit_file_v2" | "search_replace" | "write" | "delete_file"
        | "apply_patch" | "reapply" | "multi_edit" => ToolKind::FileEdit,
        "web_search" | "fetch" | "fetch_url" => ToolKind::WebSearch,
        "task" | "task_v2" | "background_agent" => ToolKind::SubAgent,
        "read_file" | "read_file_v2" | "codebase_search" | "grep_search" | "grep"
        | "ripgrep_raw_search" | "file_search" | "glob_file_search" | "list_dir"
        | "list_dir_v2" | "todo_write" | "fetch_rules" | "read_lints" => ToolKind::Housekeeping,
        other => ToolKind::of(other),
    }
}

/// The reader of Cursor's chat store.
pub struct CursorIde;

/// A value column as JSON: text, or a blob holding JSON (the column is declared BLOB), a byte
/// that is not UTF-8 read as U+FFFD as in any column, with whether one was. Anything that is
/// not JSON is `None`.
fn json_value(v: ValueRef<'_>) -> Option<(Value, bool)> {
    match v {
        ValueRef::Text(t) | ValueRef::Blob(t) => crate::archive::json_text::parse_lossy(t).ok(),
        _ => None,
    }
}

/// The composer id of a bubble key `bubbleId:<composer>:<bubble>` and its bubble id.
fn split_bubble_key(key: &str) -> Option<(&str, &str)> {
    key.strip_prefix(BUBBLE)?.split_once(':')
}

impl CursorIde {
    /// The composer's own value, `None` when it is gone, not JSON or over the column limit;
    /// with whether a byte of it was not UTF-8.
    fn composer(&self, conn: &Connection, id: &str) -> rusqlite::Result<Option<(Value, bool)>> {
        let mut stmt = conn.prepare_cached(
            "SELECT length(value), CASE WHEN length(value) <= ?2 THEN value END
             FROM cursorDiskKV WHERE key = ?1",
        )?;
        let mut rows = stmt.query(rusqlite::params![
            format!("{COMPOSER}{id}"),
            MAX_COLUMN_BYTES
        ])?;
        let Some(row) = rows.next()? else {
            return Ok(None);
        };
        Ok(json_value(row.get_ref(1)?))
    }

    /// The bubble ids in the order the composer lists them.
    fn order(composer: Option<&Value>) -> BTreeMap<String, usize> {
        composer
            .and_then(|c| c.get("fullConversationHeadersOnly"))
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|h| str_at(h, &["bubbleId"]))
            .enumerate()
            .map(|(i, id)| (id.to_owned(), i))
            .collect()
    }

    /// The bubbles an older composer keeps inline (`conversation[]`), keyed by their ids.
    fn inline(composer: Option<&Value>) -> Vec<(String, Value)> {
        composer
            .and_then(|c| c.get("conversation"))
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .enumerate()
            .map(|(i, b)| {
                let id = str_at(b, &["bubbleId"]).map_or_else(|| format!("#{i}"), str::to_owned);
                (id, b.clone())
            })
            .collect()
    }
}

impl DatabaseSource for CursorIde {
    fn agent(&self) -> Agent {
        Agent::Cursor
    }

    fn check(&self, conn: &Connection) -> Result<(), String> {
        require(conn, "cursorDiskKV", &["key", "value"])
    }

    fn sessions(&self, conn: &Connection) -> rusqlite::Result<Vec<DbSession>> {
        // Key ranges, not LIKE: the key's unique index serves them, and they are case-exact.
        let mut bubbles: BTreeMap<String, (u64, i64, i64)> = BTreeMap::new();
        {
            let mut stmt = conn.prepare_cached(
                "SELECT key, rowid, length(value) FROM cursorDiskKV
                 WHERE key >= 'bubbleId:' AND key < 'bubbleId;'",
            )?;
            let mut rows = stmt.query([])?;
            while let Some(row) = rows.next()? {
                let ValueRef::Text(key) = row.get_ref(0)? else {
                    continue;
                };
                let key = String::from_utf8_lossy(key);
                let Some((composer, _)) = split_bubble_key(&key) else {
                    continue;
                };
                let e = bubbles.entry(composer.to_owned()).or_default();
                e.0 += 1;
                e.1 = e.1.max(row.get::<_, Option<i64>>(1)?.unwrap_or(0));
                e.2 =
                    e.2.saturating_add(row.get::<_, Option<i64>>(2)?.unwrap_or(0));
            }
        }
        let mut stmt = conn.prepare_cached(
            "SELECT key, rowid, length(value),
                    CASE WHEN length(value) <= 16777216 AND json_valid(CAST(value AS TEXT))
                         THEN json_extract(CAST(value AS TEXT), '$.lastUpdatedAt') END
             FROM cursorDiskKV WHERE key >= 'composerData:' AND key < 'composerData;'
             ORDER BY rowid",
        )?;
        let mut rows = stmt.query([])?;
        let mut out = Vec::new();
        while let Some(row) = rows.next()? {
            let ValueRef::Text(key) = row.get_ref(0)? else {
                continue;
            };
            let key = String::from_utf8_lossy(key);
            let Some(id) = key.strip_prefix(COMPOSER).filter(|id| !id.is_empty()) else {
                continue;
            };
            let rowid: i64 = row.get::<_, Option<i64>>(1)?.unwrap_or(0);
            let len: i64 = row.get::<_, Option<i64>>(2)?.unwrap_or(0);
            let updated = super::database::int_of(row.get_ref(3)?);
            let (count, last_row, total) = bubbles.get(id).copied().unwrap_or_default();
            out.push(DbSession {
                id: id.to_owned(),
                marker: format!("{rowid}/{len}/{updated}/{count}/{last_row}/{total}"),
                newest: super::database::epoch_seconds(updated),
                count,
                row: None,
            });
        }
        Ok(out)
    }

    fn header(&self, conn: &Connection, session: &DbSession) -> rusqlite::Result<Option<Value>> {
        let session = session.id.as_str();
        let exists: Option<i64> = conn
            .query_row(
                "SELECT length(value) FROM cursorDiskKV WHERE key = ?1",
                [format!("{COMPOSER}{session}")],
                |r| r.get(0),
            )
            .map(Some)
            .or_else(|e| match e {
                rusqlite::Error::QueryReturnedNoRows => Ok(None),
                e => Err(e),
            })?;
        let Some(len) = exists else {
            return Ok(None);
        };
        let mut header = match self.composer(conn, session)? {
            Some((Value::Object(map), _)) => map,
            // Not JSON, not an object or over the limit: the chat is still listed by its id.
            _ => {
                let mut map = serde_json::Map::new();
                map.insert("cairn:unreadable".to_owned(), Value::from(len));
                map
            }
        };
        // The messages are units of their own; the header keeps what describes the chat.
        header.remove("conversation");
        header.remove("fullConversationHeadersOnly");
        header.insert("composerId".to_owned(), Value::String(session.to_owned()));
        Ok(Some(Value::Object(header)))
    }

    fn units(
        &self,
        conn: &Connection,
        session: &DbSession,
        _since: Option<i64>,
        each: &mut dyn FnMut(DbUnit) -> bool,
    ) -> rusqlite::Result<()> {
        let session = session.id.as_str();
        let (composer, composer_lossy) = self.composer(conn, session)?.unzip();
        let order = Self::order(composer.as_ref());
        let prefix = format!("{BUBBLE}{session}:");
        let mut stmt = conn.prepare_cached(
            "SELECT key, length(value), rowid FROM cursorDiskKV WHERE key >= ?1 AND key < ?2",
        )?;
        // The keys of this composer: the prefix up to the same prefix with its last byte, `:`,
        // moved one up (`;`).
        let end = format!("{BUBBLE}{session};");
        let mut rows = stmt.query(rusqlite::params![prefix, end])?;
        // Where each bubble goes, without its value: the values are read one at a time in
        // that order, so a long chat is never held whole.
        let mut found: Vec<(usize, i64, String, i64)> = Vec::new();
        while let Some(row) = rows.next()? {
            let ValueRef::Text(key) = row.get_ref(0)? else {
                continue;
            };
            let key = String::from_utf8_lossy(key);
            let Some((_, bubble)) = split_bubble_key(&key) else {
                continue;
            };
            let len: i64 = row.get::<_, Option<i64>>(1)?.unwrap_or(0);
            let rowid: i64 = row.get(2)?;
            let place = order.get(bubble).copied().unwrap_or(usize::MAX);
            found.push((place, rowid, bubble.to_owned(), len));
        }
        drop(rows);
        if found.is_empty() {
            for (key, value) in Self::inline(composer.as_ref()) {
                let lossy = composer_lossy.unwrap_or(false);
                if !each(DbUnit::serialised(key, 0, value, lossy)) {
                    break;
                }
            }
            return Ok(());
        }
        // The composer's order; bubbles it does not list yet come after, oldest row first.
        found.sort_by_key(|(place, rowid, ..)| (*place, *rowid));
        let mut value_of = conn.prepare_cached(
            "SELECT CASE WHEN length(value) <= ?2 THEN value END FROM cursorDiskKV WHERE rowid = ?1",
        )?;
        for (_, rowid, key, len) in found {
            let too_long = len > MAX_COLUMN_BYTES;
            // A value that is not JSON is handed over as a string: the parser counts it.
            let value = if too_long {
                None
            } else {
                let mut rows = value_of.query(rusqlite::params![rowid, MAX_COLUMN_BYTES])?;
                let Some(row) = rows.next()? else {
                    continue; // listed, yet not found by its rowid in the same snapshot: damaged
                };
                Some(
                    json_value(row.get_ref(0)?)
                        .unwrap_or_else(|| (Value::String("(not JSON)".to_owned()), false)),
                )
            };
            let (value, lossy) = value.unzip();
            let unit = DbUnit {
                key,
                updated: 0,
                value,
                text: None,
                bytes: len.max(0) as u64,
                lossy: lossy.unwrap_or(false),
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
        let session = session.id.as_str();
        let mut stmt =
            conn.prepare_cached("SELECT key FROM cursorDiskKV WHERE key >= ?1 AND key < ?2")?;
        let keys = stmt.query_map(
            [format!("{BUBBLE}{session}:"), format!("{BUBBLE}{session};")],
            |r| Ok(super::database::json_of(r.get_ref(0)?)),
        )?;
        let mut out = BTreeSet::new();
        for key in keys {
            if let Value::String(k) = key?
                && let Some((_, bubble)) = split_bubble_key(&k)
            {
                out.insert(bubble.to_owned());
            }
        }
        if out.is_empty() {
            let composer = self.composer(conn, session)?.map(|(c, _)| c);
            out.extend(Self::inline(composer.as_ref()).into_iter().map(|(k, _)| k));
        }
        Ok(out)
    }

    fn parser(
        &self,
        _path: &Path,
        saved: Option<&Value>,
    ) -> Result<Box<dyn UnitParser>, serde_json::Error> {
        Ok(Box::new(match saved {
            Some(state) => serde_json::from_value::<CursorIdeParser>(state.clone())?,
            None => CursorIdeParser::default(),
        }))
    }
}

/// A time the store wrote: epoch milliseconds, or an RFC 3339 string.
fn time_of(v: Option<&Value>) -> Option<String> {
    match v? {
        Value::Number(n) => n.as_i64().and_then(super::database::epoch_time),
        Value::String(s) => crate::text::rfc3339(s).map(std::borrow::Cow::into_owned),
        _ => None,
    }
}

/// A tool argument or result the store keeps as JSON text (`rawArgs`, `result`), parsed; text
/// that is not JSON stays a string.
fn json_text(v: Option<&Value>) -> Option<Value> {
    match v? {
        Value::Null => None,
        Value::String(s) if s.is_empty() => None,
        Value::String(s) => {
            Some(serde_json::from_str::<Value>(s).unwrap_or_else(|_| Value::String(s.clone())))
        }
        other => Some(other.clone()),
    }
}

/// The folder a bubble says its workspace is: `workspaceProjectDir`, else the first
/// `workspaceUris` entry (a `file://` URI).
fn workspace_of(b: &Value) -> Option<String> {
    if let Some(dir) = str_at(b, &["workspaceProjectDir"]).filter(|d| !d.is_empty()) {
        return Some(dir.to_owned());
    }
    let uri = b.get("workspaceUris")?.as_array()?.first()?.as_str()?;
    let path = uri.strip_prefix("file://").unwrap_or(uri);
    (path.starts_with('/')).then(|| path.to_owned())
}

/// What the parser keeps between reads.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct CursorIdeParser {
    meta: SessionMeta,
}

impl CursorIdeParser {
    fn tool(&mut self, t: &Value, base: &Record, out: &mut LineOutput) {
        let name = str_at(t, &["name"])
            .filter(|n| !n.is_empty())
            .unwrap_or("unknown")
            .to_owned();
        let id = str_at(t, &["toolCallId"])
            .filter(|i| !i.is_empty())
            .map_or_else(|| base.unit.clone().unwrap_or_default(), str::to_owned);
        let kind = tool_kind(&name);
        let mut input = json_text(t.get("rawArgs")).or_else(|| json_text(t.get("params")));
        let mut paths = Vec::new();
        if kind == ToolKind::FileEdit
            && let Some(p) = input.as_ref().and_then(|i| {
                ["target_file", "file_path", "path", "relativeWorkspacePath"]
                    .iter()
                    .find_map(|k| i.get(k).and_then(Value::as_str))
                    .filter(|p| !p.is_empty())
            })
        {
            paths.push(p.to_owned());
        }
        if let Some(v) = input.as_mut() {
            cap_json(v, MAX_INPUT_STRING_BYTES);
        }
        out.records.push(Record {
            kind: Some(RecordKind::ToolCall),
            key: Some("call".to_owned()),
            source_event_kind: "cursor:ide:tool".to_owned(),
            role: Some("assistant".to_owned()),
            tool_name: Some(name.clone()),
            tool_kind: Some(kind),
            tool_input: input,
            call_id: Some(id.clone()),
            file_paths: paths,
            ..base.clone()
        });
        let status = str_at(t, &["status"]).unwrap_or("");
        let result = json_text(t.get("result"));
        if result.is_none() && !matches!(status, "completed" | "error" | "cancelled") {
            return; // still running, or never run: the result comes with a later rewrite
        }
        // The output: a string, or the text fields a tool's result object carries.
        let text = match &result {
            Some(Value::String(s)) => s.clone(),
            Some(r) => ["output", "contents", "content", "diff", "error", "message"]
                .iter()
                .find_map(|k| r.get(k).and_then(Value::as_str))
                .map_or_else(
                    || serde_json::to_string(r).unwrap_or_default(),
                    str::to_owned,
                ),
            None => String::new(),
        };
        let output = ToolOutput {
            name: Some(name),
            call_id: Some(id),
            text: (!text.is_empty()).then_some(text),
            failed: match status {
                "error" | "cancelled" => Some(true),
                "completed" => Some(false),
                _ => None,
            },
            // A shell's code as the editor recorded it (else read from its output).
            exit_code: result
                .as_ref()
                .filter(|_| kind == ToolKind::Exec)
                .and_then(|r| r.get("exitCode").or_else(|| r.get("exit_code")))
                .and_then(Value::as_i64)
                .and_then(|c| i32::try_from(c).ok()),
        };
        out.records.push(output.record(
            "cursor:ide:tool_result".to_owned(),
            tool_kind,
            Record {
                key: Some("result".to_owned()),
                role: Some("tool".to_owned()),
                ..base.clone()
            },
        ));
    }
}

impl UnitParser for CursorIdeParser {
    fn header(&mut self, h: &Value, _out: &mut LineOutput) {
        if !h.is_object() {
            count_unknown(&mut self.meta, "cursor:composer-not-an-object");
            return;
        }
        set_once(&mut self.meta.session_id, str_at(h, &["composerId"]));
        set_latest(&mut self.meta.title, str_at(h, &["name"]));
        // "default" is Cursor's automatic choice, not a model.
        set_latest(
            &mut self.meta.model,
            str_at(h, &["modelConfig", "modelName"]).filter(|m| *m != "default"),
        );
        set_once(&mut self.meta.thread_source, Some("ide"));
        for key in ["createdAt", "lastUpdatedAt"] {
            note_timestamp(&mut self.meta, time_of(h.get(key)).as_deref());
        }
    }

    fn unit(&mut self, key: &str, b: &Value, out: &mut LineOutput) {
        if !b.is_object() {
            count_unknown(&mut self.meta, "cursor:bubble-not-an-object");
            return;
        }
        set_once(&mut self.meta.cwd, workspace_of(b).as_deref());
        let ts = time_of(b.get("createdAt")).or_else(|| time_of(b.get("timingInfo")));
        note_timestamp(&mut self.meta, ts.as_deref());
        let base = Record {
            timestamp: ts,
            message_id: Some(key.to_owned()),
            unit: Some(key.to_owned()),
            cwd: self.meta.cwd.clone(),
            ..Record::default()
        };
        let text = str_at(b, &["text"]).filter(|t| !t.trim().is_empty());
        match b.get("type").and_then(Value::as_i64) {
            Some(1) => {
                let Some(text) = text else { return };
                let source = if is_system_injected(text) {
                    PromptSource::SystemInjected
                } else {
                    PromptSource::Human
                };
                out.records.push(Record {
                    kind: Some(RecordKind::Message),
                    key: Some("text".to_owned()),
                    source_event_kind: "cursor:ide:user".to_owned(),
                    role: Some("user".to_owned()),
                    prompt_source: Some(source),
                    text: Some(cap_text(text.to_owned(), MAX_TEXT_BYTES)),
                    ..base
                });
            }
            Some(2) => {
                // The model that answered: the composer's says "default" when Cursor chose.
                set_latest(
                    &mut self.meta.model,
                    str_at(b, &["modelInfo", "modelName"]).filter(|m| *m != "default"),
                );
                if let Some(thinking) = str_at(b, &["thinking", "text"]).filter(|t| !t.is_empty()) {
                    out.records.push(Record {
                        kind: Some(RecordKind::Reasoning),
                        key: Some("thinking".to_owned()),
                        source_event_kind: "cursor:ide:thinking".to_owned(),
                        role: Some("assistant".to_owned()),
                        text: Some(cap_text(thinking.to_owned(), MAX_TEXT_BYTES)),
                        ..base.clone()
                    });
                }
                if let Some(text) = text {
                    out.records.push(Record {
                        kind: Some(RecordKind::Message),
                        key: Some("text".to_owned()),
                        source_event_kind: "cursor:ide:assistant".to_owned(),
                        role: Some("assistant".to_owned()),
                        text: Some(cap_text(text.to_owned(), MAX_TEXT_BYTES)),
                        ..base.clone()
                    });
                }
                match b.get("toolFormerData") {
                    Some(t) if t.is_object() => self.tool(t, &base, out),
                    Some(Value::Null) | None => {}
                    Some(_) => count_unknown(&mut self.meta, "cursor:tool-not-an-object"),
                }
                let tokens = |k: &str| {
                    b.get("tokenCount")
                        .and_then(|t| t.get(k))
                        .and_then(Value::as_u64)
                        .unwrap_or(0)
                };
                let usage = TokenUsage {
                    input: tokens("inputTokens"),
                    output: tokens("outputTokens"),
                    ..TokenUsage::default()
                };
                if usage != TokenUsage::default() {
                    out.usage.push((key.to_owned(), usage));
                }
            }
            Some(other) => count_unknown(&mut self.meta, &format!("cursor:bubble:{other}")),
            None => count_unknown(&mut self.meta, "cursor:bubble-without-type"),
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

    fn env_of(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<PathBuf> {
        let pairs: Vec<(String, PathBuf)> = pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), PathBuf::from(v)))
            .collect();
        move |name| {
            pairs
                .iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.clone())
        }
    }

    #[test]
    fn the_store_lives_in_the_user_dir_of_each_platform() {
        let home = Path::new("/home/u");
        assert_eq!(
            user_dir(&env_of(&[]), Some(home), false),
            Some((
                PathBuf::from("/home/u/.config/Cursor/User"),
                DirOrigin::Default
            ))
        );
        assert_eq!(
            user_dir(&env_of(&[("XDG_CONFIG_HOME", "/x")]), Some(home), false),
            Some((PathBuf::from("/x/Cursor/User"), DirOrigin::Default))
        );
        assert_eq!(
            user_dir(&env_of(&[]), Some(Path::new("/Users/u")), true),
            Some((
                PathBuf::from("/Users/u/Library/Application Support/Cursor/User"),
                DirOrigin::Default
            ))
        );
        assert_eq!(
            user_dir(&env_of(&[(ENV_USER_DIR, "/c/User")]), Some(home), true),
            Some((PathBuf::from("/c/User"), DirOrigin::Env))
        );
        assert_eq!(
            locations(env_of(&[(ENV_USER_DIR, "/c/User")]), None),
            vec![(PathBuf::from("/c/User/globalStorage"), DirOrigin::Env)]
        );
        assert!(is_database(Path::new("/c/User/globalStorage/state.vscdb")));
        assert!(!is_database(Path::new(
            "/c/User/workspaceStorage/ab/state.vscdb"
        )));
        assert!(!is_database(Path::new(
            "/c/User/globalStorage/state.vscdb-journal"
        )));
    }

    #[test]
    fn bubbles_of_unexpected_shapes_are_counted_never_fatal() {
        let mut p = CursorIdeParser::default();
        let mut out = LineOutput::default();
        p.header(&json!(["no"]), &mut out);
        p.unit("a", &json!("(not JSON)"), &mut out);
        p.unit("b", &json!({"type": 7, "text": "x"}), &mut out);
        p.unit("c", &json!({"text": "x"}), &mut out);
        p.unit(
            "d",
            &json!({"type": 2, "toolFormerData": 5, "tokenCount": "many"}),
            &mut out,
        );
        p.unit(
            "e",
            &json!({"type": 1, "text": 3, "createdAt": "yesterday"}),
            &mut out,
        );
        assert!(out.records.is_empty() && out.usage.is_empty());
        let unknown = &p.meta().unknown_types;
        assert_eq!(unknown.get("cursor:composer-not-an-object"), Some(&1));
        assert_eq!(unknown.get("cursor:bubble-not-an-object"), Some(&1));
        assert_eq!(unknown.get("cursor:bubble:7"), Some(&1));
        assert_eq!(unknown.get("cursor:bubble-without-type"), Some(&1));
        assert_eq!(unknown.get("cursor:tool-not-an-object"), Some(&1));
    }

    #[test]
    fn a_tool_bubble_gives_its_call_and_result() {
        let mut p = CursorIdeParser::default();
        let mut out = LineOutput::default();
        p.unit(
            "b1",
            &json!({"type": 2, "createdAt": 1754331270000_i64,
                "workspaceUris": ["file:///w/app"],
                "toolFormerData": {"name": "run_terminal_cmd", "toolCallId": "t1",
                    "rawArgs": "{\"command\":\"cargo test\"}", "status": "completed",
                    "result": "{\"output\":\"1 failed\",\"exitCode\":101}"},
                "tokenCount": {"inputTokens": 10, "outputTokens": 3}}),
            &mut out,
        );
        let r = &out.records;
        assert_eq!(r.len(), 2);
        assert_eq!(r[0].tool_input, Some(json!({"command": "cargo test"})));
        assert_eq!(r[0].timestamp.as_deref(), Some("2025-08-04T18:14:30Z"));
        assert_eq!(r[1].exit_code, Some(101));
        assert_eq!(r[1].outcome, Some(Outcome::Failed));
        assert_eq!(r[1].text.as_deref(), Some("1 failed"));
        assert_eq!(p.meta().cwd.as_deref(), Some("/w/app"));
        assert_eq!(out.usage[0].1.input, 10);
    }

    /// With the composer on Cursor's automatic choice, each answer names its model.
    #[test]
    fn an_answer_names_the_model_the_composer_left_to_cursor() {
        let mut p = CursorIdeParser::default();
        let mut out = LineOutput::default();
        p.header(
            &json!({"composerId": "c", "modelConfig": {"modelName": "default"}}),
            &mut out,
        );
        assert_eq!(p.meta().model, None);
        p.unit(
            "a1",
            &json!({"type": 2, "text": "hi", "modelInfo": {"modelName": "composer-2.5"}}),
            &mut out,
        );
        p.unit(
            "a2",
            &json!({"type": 2, "text": "ok", "modelInfo": {"modelName": "default"}}),
            &mut out,
        );
        p.unit(
            "a3",
            &json!({"type": 2, "text": "ok", "modelInfo": null}),
            &mut out,
        );
        assert_eq!(p.meta().model.as_deref(), Some("composer-2.5"));
    }
}

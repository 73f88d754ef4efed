//! Kiro's command line (`kiro-cli`, the successor of Amazon Q Developer CLI): one SQLite database,
//! `data.sqlite3`, read as a [`ReadKind::Database`](super::ReadKind::Database) source.
//!
//! Table read: `conversations_v2(key, conversation_id, value, created_at, updated_at)`, one row
//! per conversation: `key` is the folder it ran in, times are epoch milliseconds, and `value` is
//! the whole conversation as JSON, rewritten on every turn: `{conversation_id, history: [{user,
//! assistant, request_metadata}], transcript, model_info?}`. A history entry is a keyed unit (its
//! assistant message id, else its place): the person's `Prompt` or the `ToolUseResults` sent back,
//! with `env_context.env_state.current_working_directory` and a `timestamp`, and the assistant's
//! `Response` or `ToolUse{content, tool_uses[{id, name, args}]}`. Shapes from `reference/formats.md`
//! A.10 and AgentsView's test payloads (MIT; the tool result blocks `{tool_use_id, content:
//! [{Text}|{Json}], status}` are unverified); no real database could be copied.

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use rusqlite::Connection;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::database::{
    DatabaseSource, DbSession, DbUnit, MAX_COLUMN_BYTES, UnitParser, epoch_seconds, epoch_time,
    int_of, json_of, require,
};
use super::{
    LineOutput, MAX_INPUT_STRING_BYTES, MAX_TEXT_BYTES, MAX_TOOL_OUTPUT_BYTES, SessionMeta,
    cap_json, cap_text, count_unknown, exit_code_in, is_system_injected, note_timestamp,
    outcome_for, set_latest, set_once, str_at,
};
use crate::archive::discover::{AppFolder, DirOrigin, FoundFile, app_folder};
use crate::archive::{Agent, Outcome, PromptSource, Record, RecordKind, ToolKind};

/// The database's file name, and the folder holding it.
pub const FILE_NAME: &str = "data.sqlite3";
const DATA_DIR: &str = "kiro-cli";

/// The variable naming the folder holding `data.sqlite3`.
pub const ENV_DIR: &str = "KIRO_CLI_DIR";

/// Where kiro-cli keeps its database: `$KIRO_CLI_DIR` when set, else
/// `~/.local/share/kiro-cli` on Linux (`$XDG_DATA_HOME` honoured) and
/// `~/Library/Application Support/kiro-cli` on macOS.
pub fn locations(
    env: impl Fn(&str) -> Option<PathBuf>,
    home: Option<&Path>,
) -> Vec<(PathBuf, DirOrigin)> {
    data_dir(&env, home, cfg!(target_os = "macos"))
        .into_iter()
        .collect()
}

fn data_dir(
    env: &impl Fn(&str) -> Option<PathBuf>,
    home: Option<&Path>,
    macos: bool,
) -> Option<(PathBuf, DirOrigin)> {
    if let Some(dir) = env(ENV_DIR) {
        return Some((dir, DirOrigin::Env));
    }
    let data = app_folder(env, home, macos, AppFolder::Data)?;
    Some((data.join(DATA_DIR), DirOrigin::Default))
}

/// Whether `path` is kiro-cli's database by its name.
pub fn is_database(path: &Path) -> bool {
    super::database::is_named(path, FILE_NAME, None)
}

/// The database is one source holding many conversations.
pub fn classify(path: &Path) -> Option<FoundFile> {
    is_database(path).then(|| FoundFile::main(Agent::Kiro, path))
}

/// Whether a path is kiro-cli's database (for the hook, given only a path).
pub fn owns_path(path: &Path) -> bool {
    super::database::is_named(path, FILE_NAME, Some(DATA_DIR))
}

/// kiro-cli's tool names in Cairn's kinds.
pub fn tool_kind(name: &str) -> ToolKind {
    match name {
        "execute_bash" | "execute_cmd" | "shell" => ToolKind::Exec,
        // kiro-cli 2.x names its file tools `write`, `edit` and `read`.
        "fs_write" | "write" | "edit" => ToolKind::FileEdit,
        "use_subagent" | "delegate" | "subagent" => ToolKind::SubAgent,
        "web_search" | "web_fetch" => ToolKind::WebSearch,
        "fs_read" | "read" | "glob" | "grep" | "todo_list" | "introspect" | "knowledge"
        | "thinking" => ToolKind::Housekeeping,
        other => ToolKind::of(other),
    }
}

/// The reader of kiro-cli's database.
pub struct Kiro;

const TABLE: &str = "conversations_v2";

/// A conversation's row: its header columns, its value (null when over the column limit or
/// not JSON), and whether a byte of the value was not UTF-8.
struct Conversation {
    header: Value,
    value: Value,
    lossy: bool,
}

/// The conversation's value, parsed, when not over the column limit. Read by the rowid
/// [`Kiro::sessions`] found (the table has no index on `conversation_id` alone: a lookup by id
/// scans it, once per conversation), checked to still be the conversation's.
fn value(conn: &Connection, session: &DbSession) -> rusqlite::Result<Option<Conversation>> {
    let id = session.id.as_str();
    let columns = "SELECT key, CASE WHEN length(value) <= ?2 THEN value END, created_at, updated_at
         FROM conversations_v2";
    let mut stmt = match session.row {
        Some(_) => conn.prepare_cached(&format!(
            "{columns} WHERE rowid = ?3 AND conversation_id = ?1"
        ))?,
        None => conn.prepare_cached(&format!(
            "{columns} WHERE conversation_id = ?1 AND ?3 IS NULL ORDER BY updated_at DESC LIMIT 1"
        ))?,
    };
    let mut rows = stmt.query(rusqlite::params![id, MAX_COLUMN_BYTES, session.row])?;
    let Some(row) = rows.next()? else {
        return Ok(None);
    };
    // As in any other column, a byte that is not UTF-8 is read as U+FFFD (SQLite's `json_valid`
    // passes such text, and a strict parse of it read the whole conversation as empty).
    let (parsed, lossy) = match row.get_ref(1)? {
        rusqlite::types::ValueRef::Text(t) => {
            crate::archive::json_text::parse_lossy(t).unwrap_or((Value::Null, false))
        }
        _ => (Value::Null, false),
    };
    let header = serde_json::json!({
        "conversation_id": id,
        "key": json_of(row.get_ref(0)?),
        "created_at": int_of(row.get_ref(2)?),
        "updated_at": int_of(row.get_ref(3)?),
    });
    Ok(Some(Conversation {
        header,
        value: parsed,
        lossy,
    }))
}

/// The key of a history entry: its assistant message id, else its place.
fn entry_key(entry: &Value, i: usize) -> String {
    entry
        .get("assistant")
        .and_then(Value::as_object)
        .and_then(|a| a.values().find_map(|v| str_at(v, &["message_id"])))
        .filter(|id| !id.is_empty())
        .map_or_else(|| format!("#{i}"), str::to_owned)
}

fn entries(value: &Value) -> Vec<(String, Value)> {
    let mut seen = BTreeSet::new();
    value
        .get("history")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
        .map(|(i, e)| {
            let mut key = entry_key(e, i);
            if !seen.insert(key.clone()) {
                key = format!("{key}#{i}");
                seen.insert(key.clone());
            }
            (key, e.clone())
        })
        .collect()
}

impl DatabaseSource for Kiro {
    fn agent(&self) -> Agent {
        Agent::Kiro
    }

    fn check(&self, conn: &Connection) -> Result<(), String> {
        require(
            conn,
            TABLE,
            &["key", "conversation_id", "value", "updated_at"],
        )
    }

    fn sessions(&self, conn: &Connection) -> rusqlite::Result<Vec<DbSession>> {
        let mut stmt = conn.prepare_cached(
            "SELECT conversation_id, max(updated_at), sum(length(value)), count(*),
                    min(length(value) <= ?1 AND json_valid(value))
             FROM conversations_v2 GROUP BY conversation_id ORDER BY min(rowid)",
        )?;
        // The newest row of each conversation (one, unless it ran under two folders).
        let mut newest: HashMap<String, (i64, i64)> = HashMap::new();
        let mut rows =
            conn.prepare_cached("SELECT conversation_id, updated_at, rowid FROM conversations_v2")?;
        let mut rows = rows.query([])?;
        while let Some(row) = rows.next()? {
            if let Value::String(id) = json_of(row.get_ref(0)?) {
                let at = (int_of(row.get_ref(1)?), int_of(row.get_ref(2)?));
                let slot = newest.entry(id).or_insert(at);
                *slot = (*slot).max(at);
            }
        }
        drop(rows);
        let mut rows = stmt.query([MAX_COLUMN_BYTES])?;
        let mut out = Vec::new();
        while let Some(row) = rows.next()? {
            let Value::String(id) = json_of(row.get_ref(0)?) else {
                continue;
            };
            // A value that is not JSON (a torn write, another version) or over the limit is
            // left as it was read last: read as empty, its entries would be retracted.
            if id.is_empty() || int_of(row.get_ref(4)?) != 1 {
                continue;
            }
            let updated = int_of(row.get_ref(1)?);
            let len = int_of(row.get_ref(2)?);
            let n = int_of(row.get_ref(3)?);
            out.push(DbSession {
                marker: format!("{updated}/{len}/{n}"),
                newest: epoch_seconds(updated),
                // Entries are counted only by parsing the value: every changed read checks for
                // entries gone.
                count: 0,
                row: newest.get(&id).map(|(_, row)| *row),
                id,
            });
        }
        Ok(out)
    }

    fn header(&self, conn: &Connection, session: &DbSession) -> rusqlite::Result<Option<Value>> {
        Ok(value(conn, session)?.map(|mut c| {
            if let Some(model) = c.value.get("model_info") {
                c.header["model_info"] = model.clone();
            }
            c.header
        }))
    }

    fn units(
        &self,
        conn: &Connection,
        session: &DbSession,
        _since: Option<i64>,
        each: &mut dyn FnMut(DbUnit) -> bool,
    ) -> rusqlite::Result<()> {
        let Some(conversation) = value(conn, session)? else {
            return Ok(());
        };
        let updated = conversation.header["updated_at"].as_i64().unwrap_or(0);
        for (key, e) in entries(&conversation.value) {
            if !each(DbUnit::serialised(key, updated, e, conversation.lossy)) {
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
        Ok(value(conn, session)?
            .map(|c| entries(&c.value).into_iter().map(|(k, _)| k).collect())
            .unwrap_or_default())
    }

    fn parser(
        &self,
        _path: &Path,
        saved: Option<&Value>,
    ) -> Result<Box<dyn UnitParser>, serde_json::Error> {
        Ok(Box::new(match saved {
            Some(state) => serde_json::from_value::<KiroParser>(state.clone())?,
            None => KiroParser::default(),
        }))
    }
}

/// What the parser keeps between reads.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct KiroParser {
    meta: SessionMeta,
}

impl KiroParser {
    fn user(&mut self, u: &Value, out: &mut LineOutput) {
        set_once(
            &mut self.meta.cwd,
            str_at(
                u,
                &["env_context", "env_state", "current_working_directory"],
            ),
        );
        let ts = str_at(u, &["timestamp"]).and_then(crate::text::rfc3339);
        note_timestamp(&mut self.meta, ts.as_deref());
        let base = Record {
            timestamp: ts.map(std::borrow::Cow::into_owned),
            cwd: self.meta.cwd.clone(),
            ..Record::default()
        };
        let content = u.get("content").unwrap_or(&Value::Null);
        if let Some(prompt) = str_at(content, &["Prompt", "prompt"]).filter(|p| !p.is_empty()) {
            let source = if is_system_injected(prompt) {
                PromptSource::SystemInjected
            } else {
                PromptSource::Human
            };
            out.records.push(Record {
                kind: Some(RecordKind::Message),
                key: Some("prompt".to_owned()),
                source_event_kind: "kiro:user:prompt".to_owned(),
                role: Some("user".to_owned()),
                prompt_source: Some(source),
                text: Some(cap_text(prompt.to_owned(), MAX_TEXT_BYTES)),
                ..base
            });
        } else if let Some(results) = content
            .get("ToolUseResults")
            .and_then(|r| r.get("tool_use_results"))
            .and_then(Value::as_array)
        {
            for (i, r) in results.iter().enumerate() {
                self.result(i, r, &base, out);
            }
        } else if content.is_object() || content.is_string() {
            count_unknown(&mut self.meta, "kiro:user-content");
        }
    }

    fn result(&mut self, i: usize, r: &Value, base: &Record, out: &mut LineOutput) {
        let id = str_at(r, &["tool_use_id"]).map_or_else(|| format!("#{i}"), str::to_owned);
        let text: String = r
            .get("content")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|b| match (b.get("Text"), b.get("Json")) {
                (Some(Value::String(t)), _) => Some(t.clone()),
                (_, Some(j)) => Some(
                    str_at(j, &["stdout"])
                        .map(str::to_owned)
                        .unwrap_or_else(|| j.to_string()),
                ),
                _ => None,
            })
            .collect::<Vec<_>>()
            .join("\n");
        let exit_code = r
            .get("content")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .find_map(|b| {
                b.get("Json")?
                    .get("exit_status")?
                    .as_str()?
                    .parse::<i32>()
                    .ok()
            })
            .or_else(|| exit_code_in(&text));
        let outcome = match (exit_code, str_at(r, &["status"])) {
            (Some(code), _) => Some(outcome_for(code, &text)),
            (None, Some("Error")) => Some(Outcome::Failed),
            (None, Some("Success")) => Some(Outcome::Succeeded),
            _ => None,
        };
        out.records.push(Record {
            kind: Some(RecordKind::ToolResult),
            key: Some(format!("result:{id}")),
            source_event_kind: "kiro:user:tool_result".to_owned(),
            role: Some("tool".to_owned()),
            call_id: Some(id),
            text: (!text.is_empty()).then(|| cap_text(text, MAX_TOOL_OUTPUT_BYTES)),
            exit_code,
            outcome,
            ..base.clone()
        });
    }

    fn assistant(&mut self, a: &Value, ts: Option<String>, out: &mut LineOutput) {
        let base = Record {
            timestamp: ts,
            cwd: self.meta.cwd.clone(),
            ..Record::default()
        };
        let (what, body) = match a.as_object().and_then(|o| o.iter().next()) {
            Some((k, v)) => (k.as_str(), v),
            None => return,
        };
        if let Some(text) = str_at(body, &["content"]).filter(|t| !t.trim().is_empty()) {
            out.records.push(Record {
                kind: Some(RecordKind::Message),
                key: Some("text".to_owned()),
                source_event_kind: format!("kiro:assistant:{what}"),
                role: Some("assistant".to_owned()),
                text: Some(cap_text(text.to_owned(), MAX_TEXT_BYTES)),
                ..base.clone()
            });
        }
        match what {
            "Response" => {}
            "ToolUse" => {
                for (i, t) in body
                    .get("tool_uses")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .enumerate()
                {
                    let id = str_at(t, &["id"]).map_or_else(|| format!("#{i}"), str::to_owned);
                    let name = str_at(t, &["name"]).unwrap_or("unknown").to_owned();
                    let kind = tool_kind(&name);
                    let mut input = t.get("args").cloned().filter(|a| !a.is_null());
                    let paths = match (kind, input.as_ref().and_then(|i| str_at(i, &["path"]))) {
                        (ToolKind::FileEdit, Some(p)) if !p.is_empty() => vec![p.to_owned()],
                        _ => Vec::new(),
                    };
                    if let Some(v) = input.as_mut() {
                        cap_json(v, MAX_INPUT_STRING_BYTES);
                    }
                    out.records.push(Record {
                        kind: Some(RecordKind::ToolCall),
                        key: Some(format!("call:{id}")),
                        source_event_kind: "kiro:assistant:tool_use".to_owned(),
                        role: Some("assistant".to_owned()),
                        tool_name: Some(name),
                        tool_kind: Some(kind),
                        tool_input: input,
                        call_id: Some(id),
                        file_paths: paths,
                        ..base.clone()
                    });
                }
            }
            other => count_unknown(&mut self.meta, &format!("kiro:assistant:{other}")),
        }
    }
}

impl UnitParser for KiroParser {
    fn header(&mut self, h: &Value, _out: &mut LineOutput) {
        if !h.is_object() {
            count_unknown(&mut self.meta, "kiro:conversation-not-an-object");
            return;
        }
        set_once(&mut self.meta.session_id, str_at(h, &["conversation_id"]));
        set_once(&mut self.meta.cwd, str_at(h, &["key"]));
        set_latest(
            &mut self.meta.model,
            str_at(h, &["model_info", "model_id"])
                .or_else(|| str_at(h, &["model_info", "model_name"])),
        );
        for k in ["created_at", "updated_at"] {
            let ts = h.get(k).and_then(Value::as_i64).and_then(epoch_time);
            note_timestamp(&mut self.meta, ts.as_deref());
        }
    }

    fn unit(&mut self, key: &str, e: &Value, out: &mut LineOutput) {
        if !e.is_object() {
            count_unknown(&mut self.meta, "kiro:entry-not-an-object");
            return;
        }
        let first = out.records.len();
        if let Some(u) = e.get("user") {
            self.user(u, out);
        }
        let ts = e
            .get("request_metadata")
            .and_then(|m| m.get("stream_end_timestamp_ms"))
            .and_then(Value::as_i64)
            .and_then(epoch_time);
        note_timestamp(&mut self.meta, ts.as_deref());
        if let Some(a) = e.get("assistant") {
            self.assistant(a, ts, out);
        }
        for r in &mut out.records[first..] {
            r.unit = Some(key.to_owned());
            r.message_id = Some(key.to_owned());
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

    /// kiro-cli 2.x's file tools (`write`, `edit`, `read`) beside the older `fs_*` ones.
    #[test]
    fn file_tools_of_both_generations_are_classed() {
        for (name, kind) in [
            ("fs_write", ToolKind::FileEdit),
            ("write", ToolKind::FileEdit),
            ("edit", ToolKind::FileEdit),
            ("fs_read", ToolKind::Housekeeping),
            ("read", ToolKind::Housekeeping),
            ("execute_bash", ToolKind::Exec),
        ] {
            assert_eq!(tool_kind(name), kind, "{name}");
        }
    }

    /// A conversation is read by the rowid `sessions` found, not by scanning the table for its
    /// id once per conversation (the table's key is folder and id, so no index serves the id);
    /// a conversation kept under two folders is read from its newest row; a rowid that no
    /// longer holds the conversation (the table was rebuilt) reads nothing rather than another.
    #[test]
    fn a_conversation_is_read_by_its_row() {
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch(
            "CREATE TABLE conversations_v2 (key TEXT NOT NULL, conversation_id TEXT NOT NULL,
                value TEXT NOT NULL, created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL,
                PRIMARY KEY (key, conversation_id));
             INSERT INTO conversations_v2 VALUES ('/a', 'c1', '{\"history\":[]}', 1, 10);
             INSERT INTO conversations_v2 VALUES ('/b', 'c1', '{\"history\":[],\"n\":2}', 1, 20);
             INSERT INTO conversations_v2 VALUES ('/a', 'c2', '{\"history\":[]}', 1, 5);",
        )
        .unwrap();
        let sessions = Kiro.sessions(&conn).unwrap();
        let rows: Vec<(&str, Option<i64>)> =
            sessions.iter().map(|s| (s.id.as_str(), s.row)).collect();
        assert_eq!(rows, [("c1", Some(2)), ("c2", Some(3))]);
        let c = value(&conn, &sessions[0]).unwrap().unwrap();
        assert_eq!(
            (c.header["key"].clone(), c.value["n"].clone(), c.lossy),
            (json!("/b"), json!(2), false)
        );

        let moved = DbSession {
            row: Some(3),
            ..sessions[0].clone()
        };
        assert!(value(&conn, &moved).unwrap().is_none());
    }

    #[test]
    fn the_database_lives_in_the_data_dir_of_each_platform() {
        let none = |_: &str| None;
        assert_eq!(
            data_dir(&none, Some(Path::new("/home/u")), false),
            Some((
                PathBuf::from("/home/u/.local/share/kiro-cli"),
                DirOrigin::Default
            ))
        );
        assert_eq!(
            data_dir(&none, Some(Path::new("/Users/u")), true),
            Some((
                PathBuf::from("/Users/u/Library/Application Support/kiro-cli"),
                DirOrigin::Default
            ))
        );
        let env = |k: &str| (k == ENV_DIR).then(|| PathBuf::from("/k"));
        assert_eq!(
            data_dir(&env, None, false),
            Some((PathBuf::from("/k"), DirOrigin::Env))
        );
        assert!(owns_path(Path::new(
            "/h/.local/share/kiro-cli/data.sqlite3"
        )));
        assert!(!owns_path(Path::new("/h/amazon-q/data.sqlite3")));
    }

    #[test]
    fn entries_of_unexpected_shapes_are_counted_never_fatal() {
        let mut p = KiroParser::default();
        let mut out = LineOutput::default();
        p.header(&json!(3), &mut out);
        p.unit("a", &json!([1]), &mut out);
        p.unit(
            "b",
            &json!({"user": {"content": {"Image": {}}}, "assistant": {"Thinking": {}}}),
            &mut out,
        );
        assert!(out.records.is_empty());
        let u = &p.meta().unknown_types;
        for k in [
            "kiro:conversation-not-an-object",
            "kiro:entry-not-an-object",
            "kiro:user-content",
            "kiro:assistant:Thinking",
        ] {
            assert_eq!(u.get(k), Some(&1), "{k}: {u:?}");
        }
    }

    #[test]
    fn tool_uses_and_their_results() {
        let mut p = KiroParser::default();
        let mut out = LineOutput::default();
        p.unit(
            "m1",
            &json!({"assistant": {"ToolUse": {"message_id": "m1", "content": "", "tool_uses": [
                {"id": "t1", "name": "fs_write", "args": {"command": "str_replace", "path": "/w/a.rs", "old_str": "a", "new_str": "b"}}]}}}),
            &mut out,
        );
        p.unit(
            "m2",
            &json!({"user": {"timestamp": "2026-05-17T10:00:20Z", "content": {"ToolUseResults": {"tool_use_results": [
                {"tool_use_id": "t1", "status": "Error", "content": [{"Text": "no match"}]}]}}}}),
            &mut out,
        );
        let r = &out.records;
        assert_eq!(r[0].file_paths, ["/w/a.rs"]);
        assert_eq!(r[0].unit.as_deref(), Some("m1"));
        assert_eq!(r[1].call_id.as_deref(), Some("t1"));
        assert_eq!(r[1].outcome, Some(Outcome::Failed));
        assert_eq!(r[1].text.as_deref(), Some("no match"));
    }
}

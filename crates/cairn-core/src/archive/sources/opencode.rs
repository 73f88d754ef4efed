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
//!
//! OpenCode 2.x writes sessions to `session_v2` (the same session columns, `model` as JSON) and
//! each message, its content inline, to one `session_message` row (`id`, `session_id`, `type`:
//! `user`, `assistant`, `shell`, `compaction`, `synthetic`, …, `seq` for order, `data` JSON
//! without the id and type). A fresh 2.x install has no `message` or `part` table; an upgraded
//! one keeps them frozen and copies their sessions into `session_v2` under the same ids, so a
//! session is read from `session_v2` when it is there, from the 1.x tables otherwise. A unit of
//! a 2.x session is a row (`{"type", "seq", "data"}`); its content items are keyed by position
//! (OpenCode only appends to them while it streams), its tool calls by their ids.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use rusqlite::Connection;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::database::{
    DatabaseSource, DbSession, DbUnit, MAX_COLUMN_BYTES, UnitParser, columns, epoch_seconds,
    epoch_time, int_of, json_column, json_of, require, row_as_json, text_ids,
};
use super::{
    LineOutput, MAX_INPUT_STRING_BYTES, MAX_TEXT_BYTES, MAX_TOOL_OUTPUT_BYTES, SessionMeta,
    cap_json, cap_text, count_unknown, exit_code_in, is_system_injected, note_timestamp,
    outcome_for, patch_paths, set_latest, set_once, str_at, text_value, u64_at,
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
    data_folder(env, ENV_DIR, "opencode", home)
}

/// `$<var>`, else `$XDG_DATA_HOME/<name>`, else `~/.local/share/<name>`: where OpenCode and
/// the agents built on it keep their data, on macOS too.
fn data_folder(
    env: impl Fn(&str) -> Option<PathBuf>,
    var: &str,
    name: &str,
    home: Option<&Path>,
) -> Vec<(PathBuf, DirOrigin)> {
    if let Some(dir) = env(var) {
        return vec![(dir, DirOrigin::Env)];
    }
    // The platform's data folder is where the agent keeps its data unless told otherwise: a
    // default, which a machine without the agent does not have (not a setting to fix).
    if let Some(xdg) = env("XDG_DATA_HOME").filter(|p| p.is_absolute()) {
        return vec![(xdg.join(name), DirOrigin::Default)];
    }
    home.map(|h| vec![(h.join(".local/share").join(name), DirOrigin::Default)])
        .unwrap_or_default()
}

/// Kilo Code's database since it was rebuilt on OpenCode (its editor extension and its CLI
/// share it).
pub const KILO_FILE: &str = "kilo.db";

/// The variable naming Kilo's data folder (AgentsView's name).
pub const KILO_ENV_DIR: &str = "KILO_DIR";

/// Where Kilo keeps `kilo.db`: `$KILO_DIR`, else `$XDG_DATA_HOME/kilo`, else
/// `~/.local/share/kilo` (on macOS too, as OpenCode does).
pub fn kilo_locations(
    env: impl Fn(&str) -> Option<PathBuf>,
    home: Option<&Path>,
) -> Vec<(PathBuf, DirOrigin)> {
    data_folder(env, KILO_ENV_DIR, "kilo", home)
}

/// Whether `path` is Kilo's database by its name.
pub fn is_kilo_database(path: &Path) -> bool {
    super::database::is_named(path, KILO_FILE, None)
}

/// Whether `path` is OpenCode's database by its name: `opencode.db`, or `opencode-<channel>.db`
/// for a build outside the release channels.
pub fn is_database(path: &Path) -> bool {
    super::database::is_named(path, FILE_NAME, None)
        || path
            .file_name()
            .and_then(|n| n.to_str())
            .and_then(|n| n.strip_prefix("opencode-"))
            .and_then(|n| n.strip_suffix(".db"))
            .is_some_and(|channel| {
                !channel.is_empty()
                    && channel
                        .bytes()
                        .all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b))
            })
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
            let part = super::read_small_json_as_found(path, MAX_LOOKUP_BYTES)?;
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
            super::read_small_json_as_found(f, MAX_LOOKUP_BYTES)
                .is_some_and(|v| v.get("id").and_then(Value::as_str) == Some(id))
        })
}

/// The largest file [`session_file_of`] reads to find an id in it.
pub const MAX_LOOKUP_BYTES: u64 = 1024 * 1024;

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
    OPENCODE.parser(Path::new(""), saved)
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
        "bash" | "shell" => ToolKind::Exec,
        "edit" | "write" | "patch" | "multiedit" | "apply_patch" => ToolKind::FileEdit,
        "task" | "subagent" => ToolKind::SubAgent,
        "webfetch" | "websearch" | "codesearch" => ToolKind::WebSearch,
        "read" | "glob" | "grep" | "list" | "todowrite" | "todoread" | "lsp" | "skill" => {
            ToolKind::Housekeeping
        }
        other => ToolKind::of(other),
    }
}

/// The reader of OpenCode's database.
pub struct OpencodeDb {
    agent: Agent,
}

/// OpenCode's database reader.
pub const OPENCODE: OpencodeDb = OpencodeDb {
    agent: Agent::Opencode,
};

/// Kilo Code's since its rebuild on OpenCode (2026): `kilo.db`, OpenCode's schema.
pub const KILO: OpencodeDb = OpencodeDb { agent: Agent::Kilo };

impl DatabaseSource for OpencodeDb {
    fn agent(&self) -> Agent {
        self.agent
    }

    fn check(&self, conn: &Connection) -> Result<(), String> {
        match (check_v2(conn), check_v1(conn)) {
            (Ok(()), _) | (_, Ok(())) => Ok(()),
            // The 2.x tables half there say more than the 1.x ones missing.
            (Err(v2), _) if !columns(conn, V2_SESSIONS).unwrap_or_default().is_empty() => Err(v2),
            (_, Err(v1)) => Err(v1),
        }
    }

    fn sessions(&self, conn: &Connection) -> rusqlite::Result<Vec<DbSession>> {
        let v2 = check_v2(conn).is_ok();
        let mut out = if v2 { sessions_v2(conn)? } else { Vec::new() };
        if check_v1(conn).is_err() {
            return Ok(out);
        }
        // A 1.x session an upgrade copied into `session_v2` is read from there.
        let copied = if v2 {
            "WHERE s.id NOT IN (SELECT id FROM session_v2)"
        } else {
            ""
        };
        let mut stmt = conn.prepare_cached(&format!(
            "SELECT s.id, s.time_updated, m.n, m.newest, p.n, p.newest
             FROM session s
             LEFT JOIN (SELECT session_id, count(*) AS n, max(time_updated) AS newest
                        FROM message GROUP BY session_id) m ON m.session_id = s.id
             LEFT JOIN (SELECT session_id, count(*) AS n, max(time_updated) AS newest
                        FROM part GROUP BY session_id) p ON p.session_id = s.id
             {copied}
             ORDER BY s.time_created, s.rowid"
        ))?;
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
        let table = if is_v2(conn, session)? {
            V2_SESSIONS
        } else {
            "session"
        };
        row_as_json(conn, table, &session.id)
    }

    fn units(
        &self,
        conn: &Connection,
        session: &DbSession,
        since: Option<i64>,
        each: &mut dyn FnMut(DbUnit) -> bool,
    ) -> rusqlite::Result<()> {
        if is_v2(conn, session)? {
            return units_v2(conn, session, since, each);
        }
        let session = session.id.as_str();
        let guarded = guarded_data();
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
        while let Some(row) = rows.next()? {
            let Value::String(key) = json_of(row.get_ref(0)?) else {
                continue;
            };
            let mut updated = int_of(row.get_ref(1)?);
            let mut bytes = int_of(row.get_ref(3)?).max(0) as u64;
            let mut too_long = row.get_ref(2)?.data_type() == rusqlite::types::Type::Null;
            let (info, mut lossy) = json_column(row.get_ref(2)?);
            let mut list = Vec::new();
            let mut part_rows = parts.query([&key])?;
            while let Some(p) = part_rows.next()? {
                updated = updated.max(int_of(p.get_ref(0)?));
                bytes += int_of(p.get_ref(2)?).max(0) as u64;
                too_long |= p.get_ref(1)?.data_type() == rusqlite::types::Type::Null;
                let (part, part_lossy) = json_column(p.get_ref(1)?);
                lossy |= part_lossy;
                list.push(part);
            }
            let unit = DbUnit {
                key,
                updated,
                value: (!too_long).then(|| serde_json::json!({"info": info, "parts": list})),
                text: None,
                bytes,
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
        let sql = if is_v2(conn, session)? {
            "SELECT id FROM session_message WHERE session_id = ?1"
        } else {
            "SELECT id FROM message WHERE session_id = ?1"
        };
        text_ids(conn, sql, session)
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

/// OpenCode 2.x's session table and its message table.
const V2_SESSIONS: &str = "session_v2";
const V2_MESSAGES: &str = "session_message";

fn check_v1(conn: &Connection) -> Result<(), String> {
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

fn check_v2(conn: &Connection) -> Result<(), String> {
    require(conn, V2_SESSIONS, &["id", "time_created", "time_updated"])?;
    require(
        conn,
        V2_MESSAGES,
        &["id", "session_id", "type", "seq", "time_updated", "data"],
    )
}

/// Whether `session` is read from the 2.x tables.
fn is_v2(conn: &Connection, session: &DbSession) -> rusqlite::Result<bool> {
    if check_v2(conn).is_err() {
        return Ok(false);
    }
    let mut stmt = conn.prepare_cached("SELECT 1 FROM session_v2 WHERE id = ?1")?;
    stmt.exists([session.id.as_str()])
}

/// A JSON `data` column and its length; the column is NULL past [`MAX_COLUMN_BYTES`].
fn guarded_data() -> String {
    format!(
        "CASE WHEN octet_length(data) > {MAX_COLUMN_BYTES} THEN NULL ELSE data END, octet_length(data)"
    )
}

fn sessions_v2(conn: &Connection) -> rusqlite::Result<Vec<DbSession>> {
    let mut stmt = conn.prepare_cached(
        "SELECT s.id, s.time_updated, m.n, m.newest
         FROM session_v2 s
         LEFT JOIN (SELECT session_id, count(*) AS n, max(time_updated) AS newest
                    FROM session_message GROUP BY session_id) m ON m.session_id = s.id
         ORDER BY s.time_created, s.rowid",
    )?;
    let rows = stmt.query_map([], |r| {
        Ok((
            json_of(r.get_ref(0)?),
            int_of(r.get_ref(1)?),
            int_of(r.get_ref(2)?),
            int_of(r.get_ref(3)?),
        ))
    })?;
    let mut out = Vec::new();
    for row in rows {
        let (id, touched, messages, newest) = row?;
        let Value::String(id) = id else { continue };
        out.push(DbSession {
            id,
            marker: format!("v2/{touched}/{messages}/{newest}"),
            newest: epoch_seconds(newest.max(touched)),
            count: messages.max(0) as u64,
            row: None,
        });
    }
    Ok(out)
}

/// A 2.x session's message rows updated at or after `since`, in their order.
fn units_v2(
    conn: &Connection,
    session: &DbSession,
    since: Option<i64>,
    each: &mut dyn FnMut(DbUnit) -> bool,
) -> rusqlite::Result<()> {
    let guarded = guarded_data();
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT id, time_updated, type, seq, {guarded} FROM session_message
         WHERE session_id = ?1 AND (?2 IS NULL OR time_updated >= ?2)
         ORDER BY seq, id"
    ))?;
    let mut rows = stmt.query(rusqlite::params![session.id.as_str(), since])?;
    while let Some(row) = rows.next()? {
        let Value::String(key) = json_of(row.get_ref(0)?) else {
            continue;
        };
        let too_long = row.get_ref(4)?.data_type() == rusqlite::types::Type::Null;
        let (data, lossy) = json_column(row.get_ref(4)?);
        let value = serde_json::json!({
            "type": json_of(row.get_ref(2)?),
            "seq": json_of(row.get_ref(3)?),
            "data": data,
        });
        let unit = DbUnit {
            key,
            updated: int_of(row.get_ref(1)?),
            value: (!too_long).then_some(value),
            text: None,
            bytes: int_of(row.get_ref(5)?).max(0) as u64,
            lossy,
        };
        if !each(unit) {
            break;
        }
    }
    Ok(())
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

/// A message's `tokens` (both generations write the same shape).
fn usage_of(tokens: &Value) -> TokenUsage {
    TokenUsage {
        input: u64_at(tokens, "input"),
        output: u64_at(tokens, "output"),
        reasoning: u64_at(tokens, "reasoning"),
        cache_read: tokens.get("cache").map_or(0, |c| u64_at(c, "read")),
        cache_creation: tokens.get("cache").map_or(0, |c| u64_at(c, "write")),
    }
}

/// A tool call as either generation writes it, with its result when it has ended.
struct ToolPart<'a> {
    id: String,
    name: String,
    state: &'a Value,
    /// When it started and ended (epoch milliseconds).
    start: Option<i64>,
    end: Option<i64>,
    /// Its output (1.x: `state.output`; 2.x: the text of `state.content`) or error.
    text: String,
}

impl<'a> ToolPart<'a> {
    /// A 1.x `tool` part.
    fn v1(part: &'a Value) -> ToolPart<'a> {
        let state = part.get("state").unwrap_or(&Value::Null);
        ToolPart {
            id: str_at(part, &["callID"])
                .or_else(|| str_at(part, &["id"]))
                .unwrap_or("")
                .to_owned(),
            name: str_at(part, &["tool"]).unwrap_or("unknown").to_owned(),
            state,
            start: i64_at(state, &["time", "start"]),
            end: i64_at(state, &["time", "end"]),
            text: str_at(state, &["output"])
                .or_else(|| str_at(state, &["error"]))
                .unwrap_or("")
                .to_owned(),
        }
    }

    /// A 2.x `tool` content item of an assistant message.
    fn v2(item: &'a Value) -> ToolPart<'a> {
        let state = item.get("state").unwrap_or(&Value::Null);
        ToolPart {
            id: str_at(item, &["id"]).unwrap_or("").to_owned(),
            name: str_at(item, &["name"]).unwrap_or("unknown").to_owned(),
            state,
            start: i64_at(item, &["time", "created"]),
            end: i64_at(item, &["time", "completed"]),
            text: state
                .get("content")
                .and_then(text_value)
                .or_else(|| str_at(state, &["error", "message"]).map(str::to_owned))
                .unwrap_or_default(),
        }
    }
}

/// The files an edit tool's input names: `filePath` (1.x), `path` (2.x), or a patch's.
fn edited_paths(input: &Value) -> Vec<String> {
    if let Some(patch) = str_at(input, &["patchText"]) {
        return patch_paths(patch);
    }
    ["filePath", "file_path", "path"]
        .iter()
        .find_map(|k| str_at(input, &[k]))
        .filter(|p| !p.is_empty())
        .map(str::to_owned)
        .into_iter()
        .collect()
}

impl OpencodeParser {
    /// One 2.x `session_message` row: its `type` and its `data`.
    fn message_v2(&mut self, key: &str, kind: &str, data: &Value, out: &mut LineOutput) {
        if !data.is_object() {
            count_unknown(&mut self.meta, "opencode:message-not-an-object");
            return;
        }
        let ts = i64_at(data, &["time", "created"]).and_then(epoch_time);
        note_timestamp(&mut self.meta, ts.as_deref());
        let base = Record {
            timestamp: ts,
            message_id: Some(key.to_owned()),
            unit: Some(key.to_owned()),
            cwd: self.meta.cwd.clone(),
            ..Record::default()
        };
        let text = str_at(data, &["text"]).filter(|t| !t.is_empty());
        match kind {
            // What the person wrote, and what OpenCode put in the conversation in their place
            // (reminders, instructions, a skill's text).
            "user" | "synthetic" | "system" | "skill" => {
                let Some(text) = text else { return };
                let source = if kind != "user" || is_system_injected(text) {
                    PromptSource::SystemInjected
                } else {
                    PromptSource::Human
                };
                out.records.push(Record {
                    kind: Some(RecordKind::Message),
                    key: Some("text".to_owned()),
                    source_event_kind: format!("opencode:{kind}"),
                    role: Some("user".to_owned()),
                    prompt_source: Some(source),
                    text: Some(cap_text(text.to_owned(), MAX_TEXT_BYTES)),
                    ..base
                });
            }
            "assistant" => self.assistant_v2(key, data, &base, out),
            // A command the person ran with `!`.
            "shell" => {
                let id = str_at(data, &["shellID"]).unwrap_or(key).to_owned();
                let command = str_at(data, &["command"]).unwrap_or("");
                out.records.push(Record {
                    kind: Some(RecordKind::ToolCall),
                    key: Some(format!("call:{id}")),
                    source_event_kind: "opencode:shell".to_owned(),
                    role: Some("user".to_owned()),
                    tool_name: Some("shell".to_owned()),
                    tool_kind: Some(ToolKind::Exec),
                    tool_input: Some(serde_json::json!({
                        "command": cap_text(command.to_owned(), MAX_INPUT_STRING_BYTES)
                    })),
                    call_id: Some(id.clone()),
                    ..base.clone()
                });
                let status = str_at(data, &["status"]).unwrap_or("");
                if status == "running" {
                    return;
                }
                let output = str_at(data, &["output", "output"])
                    .or_else(|| str_at(data, &["output"]))
                    .unwrap_or("");
                let exit_code = i64_at(data, &["exit"]).and_then(|c| i32::try_from(c).ok());
                out.records.push(Record {
                    kind: Some(RecordKind::ToolResult),
                    key: Some(format!("result:{id}")),
                    source_event_kind: format!("opencode:shell:{status}"),
                    role: Some("tool".to_owned()),
                    tool_name: Some("shell".to_owned()),
                    tool_kind: Some(ToolKind::Exec),
                    call_id: Some(id),
                    text: (!output.is_empty())
                        .then(|| cap_text(output.to_owned(), MAX_TOOL_OUTPUT_BYTES)),
                    exit_code,
                    outcome: match (exit_code, status) {
                        (Some(code), _) => Some(outcome_for(code, output)),
                        (None, "timeout" | "killed") => Some(Outcome::Failed),
                        (None, _) => None,
                    },
                    timestamp: i64_at(data, &["time", "completed"])
                        .and_then(epoch_time)
                        .or_else(|| base.timestamp.clone()),
                    ..base
                });
            }
            "compaction" => {
                if str_at(data, &["status"]) == Some("running") {
                    return;
                }
                out.records.push(Record {
                    kind: Some(RecordKind::Event),
                    key: Some("compaction".to_owned()),
                    source_event_kind: "opencode:compaction".to_owned(),
                    text: str_at(data, &["summary"])
                        .or_else(|| str_at(data, &["error", "message"]))
                        .map(|t| cap_text(t.to_owned(), MAX_TEXT_BYTES)),
                    is_compaction: true,
                    ..base
                });
            }
            "model-switched" => {
                set_latest(&mut self.meta.model, str_at(data, &["model", "id"]));
            }
            // The agent or place changed, a turn went idle: nothing a person reads back.
            "agent-switched" | "location-switched" | "idle" => {}
            other => count_unknown(&mut self.meta, &format!("opencode:message:{other}")),
        }
    }

    /// A 2.x assistant message: its model and tokens, and its content items in order.
    fn assistant_v2(&mut self, key: &str, data: &Value, base: &Record, out: &mut LineOutput) {
        set_latest(&mut self.meta.model, str_at(data, &["model", "id"]));
        set_once(
            &mut self.meta.provider,
            str_at(data, &["model", "providerID"]),
        );
        if let Some(tokens) = data.get("tokens").filter(|t| t.is_object()) {
            out.usage.push((key.to_owned(), usage_of(tokens)));
        }
        let items = match data.get("content") {
            Some(Value::Array(items)) => items.as_slice(),
            None | Some(Value::Null) => &[],
            Some(_) => {
                count_unknown(&mut self.meta, "opencode:content-not-an-array");
                &[]
            }
        };
        for (i, item) in items.iter().enumerate() {
            let text = str_at(item, &["text"]).filter(|t| !t.is_empty());
            match (str_at(item, &["type"]).unwrap_or(""), text) {
                ("text", Some(text)) => out.records.push(Record {
                    kind: Some(RecordKind::Message),
                    key: Some(format!("text:{i}")),
                    source_event_kind: "opencode:assistant".to_owned(),
                    role: Some("assistant".to_owned()),
                    text: Some(cap_text(text.to_owned(), MAX_TEXT_BYTES)),
                    ..base.clone()
                }),
                ("reasoning", Some(text)) => out.records.push(Record {
                    kind: Some(RecordKind::Reasoning),
                    key: Some(format!("reasoning:{i}")),
                    source_event_kind: "opencode:assistant:reasoning".to_owned(),
                    role: Some("assistant".to_owned()),
                    text: Some(cap_text(text.to_owned(), MAX_TEXT_BYTES)),
                    ..base.clone()
                }),
                ("tool", _) => {
                    let mut tool = ToolPart::v2(item);
                    if tool.id.is_empty() {
                        tool.id = format!("{key}#{i}");
                    }
                    self.tool(tool, base, out);
                }
                ("text" | "reasoning", None) => {}
                (other, _) => count_unknown(&mut self.meta, &format!("opencode:content:{other}")),
            }
        }
        if let Some(err) = data.get("error").filter(|e| e.is_object()) {
            let kind = str_at(err, &["type"]).unwrap_or("error");
            out.records.push(Record {
                kind: Some(RecordKind::Event),
                key: Some("error".to_owned()),
                source_event_kind: format!("opencode:error:{kind}"),
                text: Some(cap_text(
                    str_at(err, &["message"]).unwrap_or(kind).to_owned(),
                    MAX_TEXT_BYTES,
                )),
                ..base.clone()
            });
        }
    }

    fn tool(&mut self, part: ToolPart<'_>, base: &Record, out: &mut LineOutput) {
        let ToolPart {
            id,
            name,
            state,
            start,
            end,
            text,
        } = part;
        let kind = tool_kind(&name);
        let mut input = state.get("input").cloned().filter(|i| !i.is_null());
        let paths = match (kind, input.as_ref()) {
            (ToolKind::FileEdit, Some(i)) => edited_paths(i),
            _ => Vec::new(),
        };
        if let Some(v) = input.as_mut() {
            cap_json(v, MAX_INPUT_STRING_BYTES);
        }
        let ts = start
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
            return; // pending, running or streaming: OpenCode rewrites the part when it ends
        }
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
            timestamp: end.and_then(epoch_time).or_else(|| base.timestamp.clone()),
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
        if unit.get("info").is_none()
            && let Some(kind) = str_at(unit, &["type"])
        {
            return self.message_v2(key, kind, unit.get("data").unwrap_or(&Value::Null), out);
        }
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
            out.usage.push((key.to_owned(), usage_of(tokens)));
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
                "tool" => self.tool(ToolPart::v1(part), &base, out),
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
        assert_eq!(
            locations(xdg, None)[0],
            (PathBuf::from("/x/opencode"), DirOrigin::Default)
        );
        // A relative XDG folder is ignored, as the XDG rule says.
        let relative = |k: &str| (k == "XDG_DATA_HOME").then(|| PathBuf::from("x"));
        assert_eq!(
            locations(relative, Some(Path::new("/h")))[0].0,
            PathBuf::from("/h/.local/share/opencode")
        );
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

    /// 2.x rows of every wrong shape: counted, never fatal, nothing invented.
    #[test]
    fn rows_of_unexpected_shapes_are_counted_never_fatal() {
        let mut p = OpencodeParser::default();
        let mut out = LineOutput::default();
        for (key, row) in [
            (
                "r1",
                json!({"type": "user", "seq": 1, "data": "not an object"}),
            ),
            (
                "r2",
                json!({"type": "user", "seq": 2, "data": {"text": 5, "time": {"created": "x"}}}),
            ),
            (
                "r3",
                json!({"type": "assistant", "seq": 3, "data": {"content": {"a": 1}, "tokens": [1], "model": "m"}}),
            ),
            (
                "r4",
                json!({"type": "assistant", "seq": 4, "data": {"content": [3, {"type": "tool", "state": "done"}],
                "error": "boom"}}),
            ),
            (
                "r5",
                json!({"type": "shell", "seq": 5, "data": {"command": ["ls"], "exit": "zero", "status": "exited"}}),
            ),
            (
                "r6",
                json!({"type": "compaction", "seq": 6, "data": {"summary": 7}}),
            ),
            (
                "r7",
                json!({"type": "shell", "seq": 7, "data": {"command": "sleep 999", "status": "killed"}}),
            ),
        ] {
            p.unit(key, &row, &mut out);
        }
        let unknown = &p.meta().unknown_types;
        assert_eq!(unknown.get("opencode:message-not-an-object"), Some(&1));
        assert_eq!(unknown.get("opencode:content-not-an-array"), Some(&1));
        assert_eq!(unknown.get("opencode:content:"), Some(&1));
        let got: Vec<_> = out
            .records
            .iter()
            .map(|r| (r.kind(), r.exit_code, r.outcome, r.text.clone()))
            .collect();
        assert_eq!(
            got,
            [
                // The tool item without a state: a call, never a result.
                (RecordKind::ToolCall, None, None, None),
                // The shell row: its call, and a result with no code to read: no outcome guessed.
                (RecordKind::ToolCall, None, None, None),
                (RecordKind::ToolResult, None, None, None),
                (RecordKind::Event, None, None, None),
                // A command killed or timed out failed, with no code.
                (RecordKind::ToolCall, None, None, None),
                (RecordKind::ToolResult, None, Some(Outcome::Failed), None),
            ]
        );
        assert_eq!(p.meta().model, None);
    }
}

//! GitHub Copilot in Visual Studio: the OpenTelemetry traces Visual Studio writes as it goes,
//! one `<stamp>_<id>_VSGitHubCopilot_traces.jsonl` per run of the IDE, under
//! `%LOCALAPPDATA%\Temp\VSGitHubCopilotLogs\traces` (`~/Library/Caches/…` and `~/.cache/…` where
//! a copy or a mount puts them; `$VISUALSTUDIO_COPILOT_DIR` names another folder). Read as a
//! [`ReadKind::Database`](super::ReadKind::Database) source whose database is the file loaded
//! into memory ([`DatabaseSource::open`]), since the file's shape is not one session's:
//!
//! - each line is an OTLP JSON export, `{"resourceSpans": [{"resource", "scopeSpans": [{"spans":
//!   […]}]}]}`, of one or more finished spans, their attributes a list of `{key, value:
//!   {stringValue | intValue | doubleValue | boolValue | arrayValue | kvlistValue}}`;
//! - a span names its conversation (`gen_ai.conversation.id`), which is Cairn's session: **one
//!   file holds every conversation of that run of the IDE, and a conversation carried on after a
//!   restart goes on in the next run's file**. Each conversation of a file is a source of its own
//!   (`<file>#<conversation>`), and the sources of one conversation are one session;
//! - a request is an `invoke_agent` span, parent of its `chat` spans (one per model call: the
//!   model, token usage, and with content capture the answer in `gen_ai.output.messages`) and its
//!   `execute_tool` spans (`gen_ai.tool.name`, `gen_ai.tool.call.id`, `…call.arguments`,
//!   `…call.result`, `error.type`). A sub-agent's `invoke_agent` hangs under the tool span that
//!   started it. Spans are written when they end, so a request's children come before it.
//!
//! A span is a unit keyed by its span id. Units are handed over request by request, each
//! request's spans in the order they started, so a request's prompt opens its turn. A read that
//! catches a request before its `invoke_agent` was written opens the turn with a prompt without
//! text; the span, read later, adds the prompt's text to that turn. The chat spans' copies of
//! the conversation so far (`gen_ai.input.messages`), the system prompt and the tool schemas are
//! left out when the file is loaded: they repeat what earlier spans hold, at every model call.
//!
//! Shapes from AgentsView's four redacted samples (`tests/fixtures/vscopilot/`, see SOURCES.md)
//! and the GenAI semantic conventions Copilot's exporters follow; the samples carry no chat span
//! and no prompt, so the prompt and answer messages are read by those conventions
//! (`[{role, parts: [{type: "text", content}]}]`), not checked against a real file.

use std::collections::{BTreeSet, HashMap};
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

use rusqlite::{Connection, params};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::database::{
    DatabaseSource, DbSession, DbUnit, MAX_COLUMN_BYTES, OpenError, UnitParser, int_of, json_of,
    of_this_era, require, text_ids,
};
use super::{
    LineOutput, MAX_INPUT_STRING_BYTES, MAX_TEXT_BYTES, SessionMeta, ToolOutput, cap_json,
    cap_text, count_unknown, note_timestamp, patch_paths, set_latest, set_once, str_at,
};
use crate::archive::discover::{DirOrigin, FoundFile};
use crate::archive::{Agent, PromptSource, Record, RecordKind, TokenUsage, ToolKind};

/// How a trace file's name ends.
pub const FILE_SUFFIX: &str = "_VSGitHubCopilot_traces.jsonl";

/// The folder Visual Studio writes its traces in, under its logs folder.
const TRACES_DIR: &str = "VSGitHubCopilotLogs/traces";

/// The variable naming the folder holding the trace files.
pub const ENV_DIR: &str = "VISUALSTUDIO_COPILOT_DIR";

/// The longest trace file loaded (a longer one is reported and skipped).
pub const MAX_TRACE_BYTES: u64 = 512 * 1024 * 1024;

/// How many unreadable lines of a file are named in its warning (the rest are counted).
const MAX_NAMED_LINES: usize = 20;

/// Attributes left out when a span is loaded: the IDE's own set-up, sent again at every model
/// call (its system prompt, its tool schemas). A model call's `gen_ai.input.messages` (the
/// conversation so far) is left out too; a request's own is its prompt.
const REPEATED: [&str; 2] = ["gen_ai.system_instructions", "gen_ai.tool.definitions"];

/// Where Visual Studio's traces are looked for: `$VISUALSTUDIO_COPILOT_DIR` when set, else the
/// folder under the home folder where the platform keeps temporary caches (Windows'
/// `AppData/Local/Temp`, macOS' `Library/Caches`, `$XDG_CACHE_HOME` or `~/.cache` elsewhere).
pub fn locations(
    env: impl Fn(&str) -> Option<PathBuf>,
    home: Option<&Path>,
) -> Vec<(PathBuf, DirOrigin)> {
    if let Some(dir) = env(ENV_DIR) {
        return vec![(dir, DirOrigin::Env)];
    }
    let cache = if cfg!(windows) {
        home.map(|h| h.join("AppData/Local/Temp"))
    } else if cfg!(target_os = "macos") {
        home.map(|h| h.join("Library/Caches"))
    } else {
        env("XDG_CACHE_HOME")
            .filter(|p| p.is_absolute())
            .or_else(|| home.map(|h| h.join(".cache")))
    };
    cache
        .map(|c| vec![(c.join(TRACES_DIR), DirOrigin::Default)])
        .unwrap_or_default()
}

/// Whether `path` is a trace file by its name.
pub fn is_trace_file(path: &Path) -> bool {
    path.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.len() > FILE_SUFFIX.len() && n.ends_with(FILE_SUFFIX))
}

/// A trace file is one source holding many conversations.
pub fn classify(path: &Path) -> Option<FoundFile> {
    is_trace_file(path).then(|| FoundFile::main(Agent::Vscopilot, path))
}

/// Whether a path is one of Visual Studio's trace files (for the hook, given only a path).
pub fn owns_path(path: &Path) -> bool {
    is_trace_file(path)
}

/// Visual Studio Copilot's tool names in Cairn's kinds.
pub fn tool_kind(name: &str) -> ToolKind {
    match name {
        "run_command_in_terminal" | "run_in_terminal" | "run_command" => ToolKind::Exec,
        "apply_patch"
        | "create_file"
        | "edit_file"
        | "replace_string_in_file"
        | "insert_edit_into_file"
        | "multi_replace_string_in_file" => ToolKind::FileEdit,
        "get_file"
        | "read_file"
        | "file_search"
        | "code_search"
        | "text_search"
        | "get_errors"
        | "list_dir"
        | "get_output_window_logs"
        | "get_symbols_by_name" => ToolKind::Housekeeping,
        "runSubagent" | "run_subagent" => ToolKind::SubAgent,
        "fetch_webpage" | "web_search" => ToolKind::WebSearch,
        other => ToolKind::of(other),
    }
}

/// The reader of Visual Studio's trace files.
pub struct VsCopilot;

/// One span of a line: what the listing and the order need, and the span itself (its body
/// goes to the database in memory as it is read; only the first part stays in [`Tree`]).
struct Span {
    conversation: Option<String>,
    id: String,
    parent: Option<String>,
    operation: String,
    start: i64,
    end: i64,
    body: Map<String, Value>,
}

/// An OTLP attribute value as plain JSON: an `intValue` (a string in OTLP JSON) as a number, a
/// list or a key-value list as an array or an object.
fn any_value(v: &Value) -> Value {
    let Some((kind, inner)) = v.as_object().and_then(|o| o.iter().next()) else {
        return Value::Null;
    };
    match (kind.as_str(), inner) {
        ("intValue", Value::String(s)) => s.parse::<i64>().map_or(inner.clone(), Value::from),
        ("arrayValue", _) => Value::Array(
            inner
                .get("values")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .map(any_value)
                .collect(),
        ),
        ("kvlistValue", _) => Value::Object(attributes(inner.get("values"))),
        _ => inner.clone(),
    }
}

/// A list of OTLP `{key, value}` attributes as one object (a later key replaces an earlier one).
fn attributes(list: Option<&Value>) -> Map<String, Value> {
    let mut out = Map::new();
    for kv in list.and_then(Value::as_array).into_iter().flatten() {
        if let (Some(Value::String(k)), Some(v)) = (kv.get("key"), kv.get("value")) {
            out.insert(k.clone(), any_value(v));
        }
    }
    out
}

/// A span or trace id as written (hex): anything else is no id.
fn span_id(v: Option<&Value>) -> Option<String> {
    let s = v?.as_str()?;
    (!s.is_empty() && s.len() <= 64 && s.bytes().all(|b| b.is_ascii_alphanumeric()))
        .then(|| s.to_owned())
}

/// A time in nanoseconds since the epoch, as OTLP JSON writes it (a string, or a number).
fn nanos(v: Option<&Value>) -> i64 {
    match v {
        Some(Value::String(s)) => s.trim().parse().unwrap_or(0),
        Some(Value::Number(n)) => n.as_i64().unwrap_or(0),
        _ => 0,
    }
}

/// The spans of one line of the file (an OTLP export), in the order written.
fn spans_of(export: &Value, line: i64, out: &mut Vec<Span>) {
    for resource in export
        .get("resourceSpans")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let service = attributes(resource.get("resource").and_then(|r| r.get("attributes")));
        for scope in resource
            .get("scopeSpans")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            for (i, span) in scope
                .get("spans")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .enumerate()
            {
                let mut attrs = attributes(span.get("attributes"));
                let name = span.get("name").and_then(Value::as_str).unwrap_or("");
                let operation = attrs
                    .get("gen_ai.operation.name")
                    .and_then(Value::as_str)
                    .or_else(|| name.split_whitespace().next())
                    .unwrap_or("")
                    .to_owned();
                for key in REPEATED {
                    attrs.remove(key);
                }
                if operation != "invoke_agent" {
                    attrs.remove("gen_ai.input.messages");
                }
                let parent = span_id(span.get("parentSpanId"))
                    .or_else(|| span_id(attrs.get("virtual_parent.genai")));
                let conversation = attrs
                    .get("gen_ai.conversation.id")
                    .and_then(Value::as_str)
                    .filter(|c| !c.trim().is_empty())
                    .map(str::to_owned);
                let start = nanos(span.get("startTimeUnixNano"));
                let end = nanos(span.get("endTimeUnixNano"));
                let id = span_id(span.get("spanId")).unwrap_or_else(|| format!("L{line}.{i}"));
                let mut body = Map::new();
                body.insert("name".into(), Value::from(name));
                body.insert("operation".into(), Value::from(operation.clone()));
                body.insert("span".into(), Value::from(id.clone()));
                body.insert(
                    "parent".into(),
                    parent.clone().map_or(Value::Null, Value::from),
                );
                body.insert("start".into(), Value::from(start));
                body.insert("end".into(), Value::from(end));
                if let Some(status) = span.get("status").filter(|s| !s.is_null()) {
                    body.insert("status".into(), status.clone());
                }
                if let Some(version) = service.get("service.version") {
                    body.insert("version".into(), version.clone());
                }
                body.insert("attributes".into(), Value::Object(attrs));
                out.push(Span {
                    conversation,
                    id,
                    parent,
                    operation,
                    start,
                    end,
                    body,
                });
            }
        }
    }
}

/// Where a span sits in its file's trees, kept for every span while the file is loaded (its body
/// is in the database already).
struct Node {
    row: i64,
    parent: Option<String>,
    invoke: bool,
    conversation: Option<String>,
    start: i64,
}

/// Load a trace file into a database in memory: one row per span, with its conversation (its
/// own, else its nearest ancestor's), the request it belongs to (its topmost `invoke_agent`
/// ancestor, or the topmost span it names when that was not written yet), the request's start,
/// and how many agents it runs under (a sub-agent's spans run under two). Each line's spans go to
/// the database as they are read: the file is never held parsed.
pub fn load(path: &Path) -> Result<Connection, OpenError> {
    let file = std::fs::File::open(path).map_err(OpenError::Io)?;
    let size = file.metadata().map_err(OpenError::Io)?.len();
    if size > MAX_TRACE_BYTES {
        return Err(OpenError::TooLong {
            size,
            limit: MAX_TRACE_BYTES,
        });
    }
    let conn = Connection::open_in_memory().map_err(OpenError::Sqlite)?;
    let reader = BufReader::new(file.take(MAX_TRACE_BYTES));
    fill(&conn, reader).map_err(|e| match e {
        Loaded::Io(e) => OpenError::Io(e),
        Loaded::Sqlite(e) => OpenError::Sqlite(e),
    })?;
    Ok(conn)
}

enum Loaded {
    Io(std::io::Error),
    Sqlite(rusqlite::Error),
}

impl From<rusqlite::Error> for Loaded {
    fn from(e: rusqlite::Error) -> Loaded {
        Loaded::Sqlite(e)
    }
}

fn fill(conn: &Connection, mut reader: impl BufRead) -> Result<(), Loaded> {
    conn.execute_batch(
        "CREATE TABLE spans (conversation TEXT, span TEXT NOT NULL, request TEXT,
            request_start INTEGER, start INTEGER NOT NULL, end INTEGER NOT NULL,
            line INTEGER NOT NULL, agents INTEGER, body TEXT NOT NULL);
         CREATE TABLE file (unreadable TEXT NOT NULL, unreadable_count INTEGER NOT NULL);
         BEGIN",
    )?;
    let mut insert = conn
        .prepare("INSERT INTO spans (span, start, end, line, body) VALUES (?1, ?2, ?3, ?4, ?5)")?;
    let mut nodes: Vec<(String, Node)> = Vec::new();
    let mut unreadable: Vec<i64> = Vec::new();
    let mut unreadable_count = 0u64;
    let mut buf = Vec::new();
    let mut spans = Vec::new();
    let mut line = 0i64;
    loop {
        buf.clear();
        if reader.read_until(b'\n', &mut buf).map_err(Loaded::Io)? == 0 {
            break;
        }
        line += 1;
        let whole = buf.ends_with(b"\n");
        if buf.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        match crate::archive::json_text::parse_lossy(&buf) {
            Ok((export, _)) => spans_of(&export, line, &mut spans),
            // The line Visual Studio is writing: read once it is whole.
            Err(_) if !whole => {}
            Err(_) => {
                unreadable_count += 1;
                if unreadable.len() < MAX_NAMED_LINES {
                    unreadable.push(line);
                }
            }
        }
        for span in spans.drain(..) {
            let body = serde_json::to_string(&span.body).unwrap_or_default();
            insert.execute(params![span.id, span.start, span.end, line, body])?;
            let node = Node {
                row: conn.last_insert_rowid(),
                parent: span.parent,
                invoke: span.operation == "invoke_agent",
                conversation: span.conversation,
                start: span.start,
            };
            nodes.push((span.id, node));
        }
    }
    drop(insert);
    place(conn, &nodes)?;
    conn.execute(
        "INSERT INTO file (unreadable, unreadable_count) VALUES (?1, ?2)",
        params![
            serde_json::to_string(&unreadable).unwrap_or_default(),
            unreadable_count as i64
        ],
    )?;
    conn.execute_batch(
        "DELETE FROM spans WHERE conversation IS NULL;
         CREATE INDEX spans_conversation ON spans(conversation);
         COMMIT",
    )?;
    Ok(())
}

/// Give every span its conversation, request, the request's start and the agents above it, by
/// walking up the parents written (a bounded walk: a hostile file may make a cycle). A span
/// whose ancestors name no conversation keeps none, and is dropped: it is not one of Copilot's
/// chat spans.
fn place(conn: &Connection, nodes: &[(String, Node)]) -> rusqlite::Result<()> {
    let by_id: HashMap<&str, &Node> = nodes.iter().map(|(id, n)| (id.as_str(), n)).collect();
    let mut placed = Vec::with_capacity(nodes.len());
    for (id, node) in nodes {
        let mut conversation = node.conversation.as_deref();
        let mut request = id.as_str();
        let mut agents = i64::from(node.invoke);
        let mut next = node.parent.as_deref();
        let mut steps = 0;
        while let Some(up_id) = next.take() {
            steps += 1;
            if steps > 64 || up_id == id {
                break;
            }
            match by_id.get(up_id) {
                Some(up) => {
                    conversation = conversation.or(up.conversation.as_deref());
                    if up.invoke {
                        agents += 1;
                        request = up_id;
                    }
                    next = up.parent.as_deref();
                }
                // Not written yet: the top of every tree Copilot writes is a request's
                // `invoke_agent`, written when the request ends.
                None => {
                    agents += 1;
                    request = up_id;
                }
            }
        }
        placed.push((node, conversation, request, agents));
    }
    // A request starts when its `invoke_agent` does; one not written yet, with its first span.
    let mut request_starts: HashMap<&str, i64> = HashMap::new();
    for (node, _, request, _) in &placed {
        let start = match by_id.get(request) {
            Some(r) if r.invoke => r.start,
            _ => node.start,
        };
        let slot = request_starts.entry(request).or_insert(start);
        *slot = (*slot).min(start);
    }
    let mut update = conn.prepare(
        "UPDATE spans SET conversation = ?2, request = ?3, request_start = ?4, agents = ?5
         WHERE rowid = ?1",
    )?;
    for (node, conversation, request, agents) in placed {
        let Some(conversation) = conversation else {
            continue;
        };
        update.execute(params![
            node.row,
            conversation,
            request,
            request_starts.get(request).copied().unwrap_or(node.start),
            agents,
        ])?;
    }
    Ok(())
}

impl DatabaseSource for VsCopilot {
    fn agent(&self) -> Agent {
        Agent::Vscopilot
    }

    fn open(&self, path: &Path) -> Result<Connection, OpenError> {
        load(path)
    }

    fn loaded(&self) -> bool {
        true
    }

    fn check(&self, conn: &Connection) -> Result<(), String> {
        require(conn, "spans", &["conversation", "span", "line", "body"])
    }

    fn sessions(&self, conn: &Connection) -> rusqlite::Result<Vec<DbSession>> {
        let mut stmt = conn.prepare_cached(
            "SELECT conversation, count(DISTINCT span), max(line), max(end) FROM spans
             GROUP BY conversation ORDER BY min(request_start), min(line)",
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
            let (id, count, last_line, newest) = row?;
            let Value::String(id) = id else { continue };
            out.push(DbSession {
                id,
                marker: format!("{count}/{last_line}"),
                newest: newest / 1_000_000_000,
                count: count.max(0) as u64,
                row: None,
            });
        }
        Ok(out)
    }

    fn header(&self, conn: &Connection, session: &DbSession) -> rusqlite::Result<Option<Value>> {
        let (unreadable, count): (String, i64) =
            conn.query_row("SELECT unreadable, unreadable_count FROM file", [], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })?;
        let version: Option<String> = conn
            .query_row(
                "SELECT json_extract(body, '$.version') FROM spans
                 WHERE conversation = ?1 ORDER BY line LIMIT 1",
                [session.id.as_str()],
                |r| r.get(0),
            )
            .ok()
            .flatten();
        Ok(Some(serde_json::json!({
            "conversation": session.id,
            "version": version,
            "unreadable_lines": serde_json::from_str::<Value>(&unreadable).unwrap_or(Value::Null),
            "unreadable_count": count,
        })))
    }

    fn units(
        &self,
        conn: &Connection,
        session: &DbSession,
        since: Option<i64>,
        each: &mut dyn FnMut(DbUnit) -> bool,
    ) -> rusqlite::Result<()> {
        // The cursor is the last line read: spans written since, in request order.
        let mut stmt = conn.prepare_cached(
            "SELECT span, line, agents, request, CASE WHEN length(body) <= ?3 THEN body END, length(body)
             FROM spans WHERE conversation = ?1 AND (?2 IS NULL OR line >= ?2)
             ORDER BY request_start, request, start, line",
        )?;
        let mut rows = stmt.query(params![session.id.as_str(), since, MAX_COLUMN_BYTES])?;
        while let Some(row) = rows.next()? {
            let key: String = row.get(0)?;
            let line: i64 = row.get(1)?;
            let agents: i64 = row.get(2)?;
            let request: String = row.get(3)?;
            let body: Option<String> = row.get(4)?;
            let len: i64 = row.get(5)?;
            let value = body
                .as_deref()
                .and_then(|b| serde_json::from_str::<Map<String, Value>>(b).ok())
                .map(|mut obj| {
                    obj.insert("request".into(), Value::from(request));
                    obj.insert("agents".into(), Value::from(agents));
                    Value::Object(obj)
                });
            let unit = match value {
                Some(v) => DbUnit::serialised(key, line, v, false),
                None => DbUnit {
                    key,
                    updated: line,
                    value: None,
                    text: None,
                    bytes: len.max(0) as u64,
                    lossy: false,
                },
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
            "SELECT DISTINCT span FROM spans WHERE conversation = ?1",
            session,
        )
    }

    fn parser(
        &self,
        _path: &Path,
        saved: Option<&Value>,
    ) -> Result<Box<dyn UnitParser>, serde_json::Error> {
        Ok(Box::new(match saved {
            Some(state) => serde_json::from_value::<VsCopilotParser>(state.clone())?,
            None => VsCopilotParser::default(),
        }))
    }
}

/// The most requests whose turn a parser remembers having opened (a conversation's requests
/// are read in order: only the last few can still be waiting for their `invoke_agent`).
const MAX_OPENED: usize = 64;

/// What the parser keeps between reads.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct VsCopilotParser {
    meta: SessionMeta,
    /// Requests whose turn is open already, oldest first.
    #[serde(default)]
    opened: Vec<String>,
}

/// A time in nanoseconds since the epoch as Cairn stores times (one before 2001 or after 2100 is
/// no time an IDE wrote).
fn ns_time(ns: i64) -> Option<String> {
    of_this_era(jiff::Timestamp::from_nanosecond(i128::from(ns)).ok()?)
}

/// The text parts of the last message of `role` in a GenAI messages attribute (a JSON list, or
/// its text), joined.
fn message_text(messages: Option<&Value>, role: &str) -> Option<String> {
    let parsed;
    let list = match messages? {
        Value::String(s) => {
            parsed = serde_json::from_str::<Value>(s).ok()?;
            &parsed
        }
        other => other,
    };
    let message = list
        .as_array()?
        .iter()
        .rev()
        .find(|m| m.get("role").and_then(Value::as_str) == Some(role))?;
    let text: Vec<&str> = message
        .get("parts")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|p| p.get("type").and_then(Value::as_str) == Some("text"))
        .filter_map(|p| p.get("content").and_then(Value::as_str))
        .filter(|t| !t.trim().is_empty())
        .collect();
    (!text.is_empty()).then(|| text.join("\n"))
}

/// A number attribute, whether written as a number or as text.
fn count_at(attrs: &Value, key: &str) -> u64 {
    match attrs.get(key) {
        Some(Value::Number(n)) => n.as_u64().unwrap_or(0),
        Some(Value::String(s)) => s.trim().parse().unwrap_or(0),
        _ => 0,
    }
}

impl VsCopilotParser {
    /// Whether the turn of `request` is open; marks it so.
    fn open(&mut self, request: &str) -> bool {
        if self.opened.iter().any(|r| r == request) {
            return true;
        }
        if self.opened.len() >= MAX_OPENED {
            self.opened.remove(0);
        }
        self.opened.push(request.to_owned());
        false
    }

    fn invoke_agent(&mut self, span: &Value, attrs: &Value, base: Record, out: &mut LineOutput) {
        let sub_agent = base.is_sidechain;
        // The model that answered; the one asked for only while none is known (a request's
        // model calls, read before it, may name the answer's).
        match str_at(attrs, &["gen_ai.response.model"]) {
            Some(model) => set_latest(&mut self.meta.model, Some(model)),
            None => set_once(
                &mut self.meta.model,
                str_at(attrs, &["gen_ai.request.model"]),
            ),
        }
        set_once(
            &mut self.meta.provider,
            str_at(attrs, &["gen_ai.provider.name"]),
        );
        set_once(
            &mut self.meta.thread_source,
            str_at(attrs, &["copilot_chat.entry_point"]),
        );
        let prompt = message_text(attrs.get("gen_ai.input.messages"), "user");
        if sub_agent {
            let name = str_at(attrs, &["gen_ai.agent.name"]).unwrap_or("sub-agent");
            out.records.push(Record {
                kind: Some(RecordKind::Message),
                key: Some("prompt".to_owned()),
                source_event_kind: "vscopilot:invoke_agent:subagent".to_owned(),
                role: Some("user".to_owned()),
                prompt_source: Some(PromptSource::SpawnedAgent),
                text: Some(cap_text(
                    prompt.unwrap_or_else(|| format!("{name} started")),
                    MAX_TEXT_BYTES,
                )),
                ..base.clone()
            });
        } else {
            let request = str_at(span, &["request"]).unwrap_or_default().to_owned();
            let opened = self.open(&request);
            if !opened || prompt.is_some() {
                out.records.push(Record {
                    kind: Some(RecordKind::Message),
                    key: Some("prompt".to_owned()),
                    source_event_kind: "vscopilot:invoke_agent".to_owned(),
                    role: Some("user".to_owned()),
                    // A turn a child's span opened already gets the prompt's text alone.
                    prompt_source: (!opened).then_some(PromptSource::Human),
                    text: prompt.map(|p| cap_text(p, MAX_TEXT_BYTES)),
                    ..base.clone()
                });
            }
        }
        if let Some(error) = str_at(attrs, &["error.type"]) {
            out.records.push(Record {
                kind: Some(RecordKind::Event),
                key: Some("error".to_owned()),
                source_event_kind: "vscopilot:invoke_agent:error".to_owned(),
                text: Some(cap_text(format!("request failed: {error}"), MAX_TEXT_BYTES)),
                ..base
            });
        }
    }

    fn chat(&mut self, span: &Value, attrs: &Value, base: Record, out: &mut LineOutput) {
        let model = str_at(attrs, &["gen_ai.response.model"])
            .or_else(|| str_at(attrs, &["gen_ai.request.model"]));
        if !base.is_sidechain {
            set_latest(&mut self.meta.model, model);
        }
        let usage = TokenUsage {
            input: count_at(attrs, "gen_ai.usage.input_tokens"),
            output: count_at(attrs, "gen_ai.usage.output_tokens"),
            cache_read: count_at(attrs, "gen_ai.usage.cache_read.input_tokens"),
            ..TokenUsage::default()
        };
        let id = str_at(span, &["span"]).unwrap_or_default().to_owned();
        if !usage.is_unknown() {
            out.usage.push((id.clone(), usage));
        }
        if let Some(text) = message_text(attrs.get("gen_ai.output.messages"), "assistant") {
            out.records.push(Record {
                kind: Some(RecordKind::Message),
                key: Some("text".to_owned()),
                source_event_kind: "vscopilot:chat".to_owned(),
                role: Some("assistant".to_owned()),
                text: Some(cap_text(text, MAX_TEXT_BYTES)),
                message_id: Some(id),
                ..base
            });
        }
    }

    fn execute_tool(&mut self, span: &Value, attrs: &Value, base: Record, out: &mut LineOutput) {
        let name = str_at(attrs, &["gen_ai.tool.name"])
            .or_else(|| str_at(span, &["name"]).and_then(|n| n.strip_prefix("execute_tool ")))
            .unwrap_or("unknown")
            .to_owned();
        let call_id = str_at(attrs, &["gen_ai.tool.call.id"])
            .or_else(|| str_at(span, &["span"]))
            .unwrap_or_default()
            .to_owned();
        let kind = tool_kind(&name);
        let mut input = match attrs.get("gen_ai.tool.call.arguments") {
            Some(Value::String(s)) => {
                Some(serde_json::from_str::<Value>(s).unwrap_or_else(|_| Value::from(s.clone())))
            }
            Some(Value::Null) | None => None,
            Some(other) => Some(other.clone()),
        };
        let file_paths = match (kind, input.as_ref()) {
            (ToolKind::FileEdit, Some(i)) => {
                let mut paths = str_at(i, &["patch"]).map(patch_paths).unwrap_or_default();
                if let Some(p) = ["filePath", "path", "file_path"]
                    .iter()
                    .find_map(|k| str_at(i, &[k]))
                    .filter(|p| !p.is_empty())
                    && !paths.iter().any(|q| q == p)
                {
                    paths.push(p.to_owned());
                }
                paths
            }
            _ => Vec::new(),
        };
        if let Some(i) = input.as_mut() {
            cap_json(i, MAX_INPUT_STRING_BYTES);
        }
        out.records.push(Record {
            kind: Some(RecordKind::ToolCall),
            key: Some("call".to_owned()),
            source_event_kind: "vscopilot:execute_tool".to_owned(),
            role: Some("assistant".to_owned()),
            tool_name: Some(name.clone()),
            tool_kind: Some(kind),
            tool_input: input,
            call_id: Some(call_id.clone()),
            file_paths,
            ..base.clone()
        });
        let error = str_at(attrs, &["error.type"]);
        let status_error = span
            .get("status")
            .and_then(|s| s.get("code"))
            .is_some_and(|c| c.as_i64() == Some(2) || c.as_str() == Some("STATUS_CODE_ERROR"));
        let result = match attrs.get("gen_ai.tool.call.result") {
            Some(Value::String(s)) => Some(s.clone()),
            Some(Value::Null) | None => None,
            Some(other) => Some(other.to_string()),
        };
        let text = match (result, error) {
            (Some(r), _) => Some(r),
            (None, Some(e)) => Some(format!("error: {e}")),
            (None, None) => None,
        };
        if text.is_none() && !status_error {
            return;
        }
        out.records.push(
            ToolOutput {
                name: Some(name),
                call_id: Some(call_id),
                text,
                failed: (error.is_some() || status_error).then_some(true),
                exit_code: None,
            }
            .record(
                "vscopilot:execute_tool:result".to_owned(),
                tool_kind,
                Record {
                    key: Some("result".to_owned()),
                    role: Some("tool".to_owned()),
                    ..base
                },
            ),
        );
    }
}

impl UnitParser for VsCopilotParser {
    fn header(&mut self, header: &Value, out: &mut LineOutput) {
        set_once(&mut self.meta.session_id, str_at(header, &["conversation"]));
        set_latest(&mut self.meta.tool_version, str_at(header, &["version"]));
        let count = header
            .get("unreadable_count")
            .and_then(Value::as_u64)
            .unwrap_or(0);
        if count > 0 {
            let lines: Vec<String> = header
                .get("unreadable_lines")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(Value::as_i64)
                .map(|l| l.to_string())
                .collect();
            out.warnings.push(format!(
                "{count} line(s) of the trace file are not JSON and were skipped (line {})",
                lines.join(", ")
            ));
        }
    }

    fn unit(&mut self, _key: &str, span: &Value, out: &mut LineOutput) {
        let Some(attrs) = span.get("attributes").filter(|a| a.is_object()) else {
            count_unknown(&mut self.meta, "vscopilot:span-without-attributes");
            return;
        };
        let ts = span.get("start").and_then(Value::as_i64).and_then(ns_time);
        note_timestamp(&mut self.meta, ts.as_deref());
        if let Some(end) = span.get("end").and_then(Value::as_i64).and_then(ns_time) {
            note_timestamp(&mut self.meta, Some(&end));
        }
        let operation = str_at(span, &["operation"]).unwrap_or("");
        let agents = span.get("agents").and_then(Value::as_i64).unwrap_or(0);
        // A sub-agent's own spans: its `invoke_agent` under the main one, and what runs under it.
        let sub_agent = agents >= 2;
        let base = Record {
            timestamp: ts,
            is_sidechain: sub_agent,
            ..Record::default()
        };
        // A span read before its request's `invoke_agent` opens the request's turn.
        if operation != "invoke_agent" && !sub_agent {
            let request = str_at(span, &["request"]).unwrap_or_default().to_owned();
            if !self.open(&request) {
                out.records.push(Record {
                    kind: Some(RecordKind::Message),
                    key: Some("turn".to_owned()),
                    source_event_kind: "vscopilot:request".to_owned(),
                    role: Some("user".to_owned()),
                    prompt_source: Some(PromptSource::Human),
                    ..base.clone()
                });
            }
        }
        match operation {
            "invoke_agent" => self.invoke_agent(span, attrs, base, out),
            "chat" => self.chat(span, attrs, base, out),
            "execute_tool" => self.execute_tool(span, attrs, base, out),
            other => count_unknown(&mut self.meta, &format!("vscopilot:{other}")),
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

    /// One export line of spans `(id, parent, operation, conversation)`, started one second apart.
    fn line(spans: &[(&str, &str, &str, Option<&str>)]) -> String {
        let spans: Vec<Value> = spans
            .iter()
            .enumerate()
            .map(|(i, (id, parent, op, conv))| {
                let mut attrs = vec![serde_json::json!({"key": "gen_ai.operation.name",
                    "value": {"stringValue": op}})];
                if let Some(c) = conv {
                    attrs.push(serde_json::json!({"key": "gen_ai.conversation.id",
                        "value": {"stringValue": c}}));
                }
                serde_json::json!({"spanId": id, "parentSpanId": parent, "name": op,
                    "startTimeUnixNano": format!("{}", (1_790_000_000 + i as i64) * 1_000_000_000),
                    "endTimeUnixNano": "1790000100000000000", "attributes": attrs})
            })
            .collect();
        format!(
            "{}\n",
            serde_json::json!({"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]})
        )
    }

    /// (span, conversation, request, agents) of every row, by span.
    fn rows(text: &str) -> Vec<(String, String, String, i64)> {
        let conn = Connection::open_in_memory().unwrap();
        assert!(fill(&conn, text.as_bytes()).is_ok());
        let mut stmt = conn
            .prepare("SELECT span, conversation, request, agents FROM spans ORDER BY span")
            .unwrap();
        stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
            .unwrap()
            .map(Result::unwrap)
            .collect()
    }

    fn row(span: &str, conv: &str, request: &str, agents: i64) -> (String, String, String, i64) {
        (span.into(), conv.into(), request.into(), agents)
    }

    /// A sub-agent's spans run under two agents and belong to the main request; a span without a
    /// conversation takes its parent's; a child whose request is not written yet names it.
    #[test]
    fn spans_are_placed_in_their_request_and_conversation() {
        let text = line(&[
            ("c1", "a1", "execute_tool", Some("conv")),
            ("s1", "c1", "invoke_agent", Some("conv")),
            ("s2", "s1", "chat", None),
            ("a1", "", "invoke_agent", Some("conv")),
            ("b1", "zz", "execute_tool", Some("conv")),
        ]);
        assert_eq!(
            rows(&text),
            [
                row("a1", "conv", "a1", 1),
                row("b1", "conv", "zz", 1),
                row("c1", "conv", "a1", 1),
                row("s1", "conv", "a1", 2),
                row("s2", "conv", "a1", 2),
            ]
        );
    }

    /// Parents that make a cycle end the walk; spans of no conversation anywhere above are
    /// dropped; a line that is not JSON is counted, a torn last line is not.
    #[test]
    fn cycles_orphans_and_bad_lines() {
        let text = line(&[
            ("x1", "x2", "execute_tool", Some("c")),
            ("x2", "x1", "execute_tool", None),
            ("n1", "", "chat", None),
        ]) + "not json\n{\"resourceSpans\":";
        let conn = Connection::open_in_memory().unwrap();
        assert!(fill(&conn, text.as_bytes()).is_ok());
        let spans: Vec<String> = conn
            .prepare("SELECT span FROM spans ORDER BY span")
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .map(Result::unwrap)
            .collect();
        assert_eq!(spans, ["x1", "x2"]);
        let (lines, count): (String, i64) = conn
            .query_row("SELECT unreadable, unreadable_count FROM file", [], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })
            .unwrap();
        assert_eq!((lines.as_str(), count), ("[2]", 1));
    }

    #[test]
    fn otlp_values_become_plain_json() {
        let attrs = attributes(Some(&serde_json::json!([
            {"key": "n", "value": {"intValue": "42"}},
            {"key": "big", "value": {"intValue": "99999999999999999999"}},
            {"key": "l", "value": {"arrayValue": {"values": [{"stringValue": "a"}, {"boolValue": true}]}}},
            {"key": "m", "value": {"kvlistValue": {"values": [{"key": "k", "value": {"doubleValue": 1.5}}]}}},
            {"key": 7, "value": {"stringValue": "no key"}},
            {"key": "empty", "value": {}},
        ])));
        assert_eq!(
            Value::Object(attrs),
            serde_json::json!({"n": 42, "big": "99999999999999999999", "l": ["a", true],
                "m": {"k": 1.5}, "empty": null})
        );
    }

    #[test]
    fn trace_files_are_named_so() {
        assert!(is_trace_file(Path::new(
            "/t/20260611T145205_ab_VSGitHubCopilot_traces.jsonl"
        )));
        assert!(!is_trace_file(Path::new(
            "/t/_VSGitHubCopilot_traces.jsonl"
        )));
        assert!(!is_trace_file(Path::new("/t/x_VSGitHubCopilot.chat.log")));
    }
}

//! Hermes Agent (Nous Research's `hermes`): one JSON document a session,
//! `~/.hermes/sessions/session_<id>.json` (`$HERMES_HOME` moves `~/.hermes`), rewritten as the
//! session goes on, read as the [`ReadKind::Document`](super::ReadKind::Document) kind.
//!
//! The document: `session_id`, `model`, `platform` (`cli`, or the chat it came from:
//! `telegram`, …), `session_start` and `last_updated`, `cwd` (or `model_config.cwd`), the
//! system prompt and tool schemas, and `messages[]` in OpenAI's chat shape: `user`,
//! `assistant` (`content`, `reasoning_content` or `reasoning`, `tool_calls[{id, function{name,
//! arguments}}]` with the arguments as JSON text), `tool` (`tool_call_id`, `tool_name`,
//! `content`, `finish_reason` `error` for a call that failed), and a closing `session_meta`.
//! Messages carry no ids or times: each is a unit keyed by what it says ([`message_key`]: a hash
//! of the message as redacted), so a rewrite that drops or folds earlier messages (a compressed
//! context) takes those back and keeps every other record as it was; keyed by place, each later
//! message would have been written over the one before it. A session first read by an older
//! build keeps its place keys (`by_content` unset in its saved state): new keys would take
//! every message back and add it again. The session's times are the document's: Hermes writes `session_start` and `last_updated` as Python's
//! `datetime.now().isoformat()`, the local time without a zone, read as this machine's; a time
//! with a zone, as some copies have, is read as written).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::chat::Chat;
use super::prompt;
use super::{
    DocumentParser, KeyedUnits, LineOutput, SessionMeta, Shallow, count_unknown, local_timestamp,
    set_latest, set_once, str_at, text_value,
};
use crate::archive::discover::{DirOrigin, FoundFile};
use crate::archive::{Agent, Record, ToolKind};

/// The variable naming Hermes's home folder (`~/.hermes`), which holds `sessions/`.
pub const ENV_DIR: &str = "HERMES_HOME";

/// At most this many messages are read from one session; the rest are counted as unknown.
const MAX_MESSAGES: usize = 100_000;

/// Where Hermes keeps its sessions (the same on Linux and macOS): `$HERMES_HOME/sessions` when
/// set, else `~/.hermes/sessions`.
pub fn locations(
    env: impl Fn(&str) -> Option<PathBuf>,
    home: Option<&Path>,
) -> Vec<(PathBuf, DirOrigin)> {
    crate::archive::discover::env_or_home(env, ENV_DIR, "sessions", home, &[".hermes/sessions"])
}

/// Whether `path` is a session document by its name: `session_<id>.json`.
pub fn is_session_file(path: &Path) -> bool {
    path.file_name()
        .and_then(|n| n.to_str())
        .and_then(|n| n.strip_prefix("session_"))
        .and_then(|n| n.strip_suffix(".json"))
        .is_some_and(|id| !id.is_empty())
}

/// The database newer Hermes builds keep their sessions in, beside `sessions/`.
pub const STATE_DB: &str = "state.db";

/// At most this many sessions of `state.db` are looked at by [`state_db_survey`].
const MAX_SURVEYED: i64 = 1_000_000;

/// What `state.db` holds that the session documents do not: Hermes (since about March 2026)
/// also keeps every session in `$HERMES_HOME/state.db` (SQLite: `sessions`, `messages`), and a
/// build may write a session there alone. Cairn reads only the documents, so `doctor` says how
/// many sessions of the database have none.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StateDbSurvey {
    pub db: PathBuf,
    /// Sessions in the database.
    pub sessions: u64,
    /// Of those, the ones with no `session_<id>.json` in the sessions folder.
    pub without_document: u64,
}

/// The survey of the `state.db` beside the sessions folder `sessions_dir`, when there is one;
/// the error says why it could not be read (not a database, no `sessions` table, locked).
pub fn state_db_survey(sessions_dir: &Path) -> Option<Result<StateDbSurvey, String>> {
    let db = sessions_dir.parent()?.join(STATE_DB);
    if !db.is_file() {
        return None;
    }
    let survey = || -> Result<StateDbSurvey, String> {
        let conn = super::database::open_read_only(&db).map_err(|e| e.to_string())?;
        super::database::require(&conn, "sessions", &["id"])?;
        let mut stmt = conn
            .prepare("SELECT id FROM sessions LIMIT ?1")
            .map_err(|e| super::database::describe(&e))?;
        let ids = stmt
            .query_map([MAX_SURVEYED], |r| {
                Ok(super::database::json_of(r.get_ref(0)?))
            })
            .map_err(|e| super::database::describe(&e))?;
        let (mut sessions, mut without_document) = (0, 0);
        for id in ids {
            let id = id.map_err(|e| super::database::describe(&e))?;
            sessions += 1;
            // An id a document's name cannot hold (not text, a path) has no document.
            let documented = id.as_str().is_some_and(|id| {
                !id.is_empty()
                    && !id.contains(['/', '\\', '\0'])
                    && sessions_dir.join(format!("session_{id}.json")).is_file()
            });
            without_document += u64::from(!documented);
        }
        Ok(StateDbSurvey {
            db: db.clone(),
            sessions,
            without_document,
        })
    };
    Some(survey().map_err(|e| format!("{}: {e}", db.display())))
}

/// A session document; anything else in the folder is not one.
pub fn classify(path: &Path) -> Option<FoundFile> {
    is_session_file(path).then(|| FoundFile::main(Agent::Hermes, path))
}

/// Whether a transcript's path is Hermes's (for the hook, given only a path).
pub fn owns_path(path: &Path) -> bool {
    path.to_string_lossy().contains("/.hermes/sessions/") && is_session_file(path)
}

#[derive(Debug, Serialize, Deserialize)]
pub struct HermesParser {
    meta: SessionMeta,
    /// Messages are keyed by what they say ([`message_key`]); unset in the state an older build
    /// saved, whose sessions keep their place keys (`#<index>`).
    #[serde(default)]
    by_content: bool,
    /// The zone a time written without one is read in: this machine's (set at every resume).
    #[serde(skip, default = "jiff::tz::TimeZone::system")]
    zone: jiff::tz::TimeZone,
    /// The home a folder written from `~` is under: this machine's (set at every resume).
    #[serde(skip, default = "dirs::home_dir")]
    home: Option<PathBuf>,
}

impl HermesParser {
    pub fn resume(saved: Option<&Value>) -> Result<Self, serde_json::Error> {
        match saved {
            Some(state) => serde_json::from_value(state.clone()),
            None => Ok(HermesParser {
                meta: SessionMeta::default(),
                by_content: true,
                zone: jiff::tz::TimeZone::system(),
                home: dirs::home_dir(),
            }),
        }
    }

    fn session(&mut self, h: &Value, out: &mut LineOutput) {
        let m = &mut self.meta;
        set_once(&mut m.session_id, str_at(h, &["session_id"]));
        set_latest(&mut m.model, str_at(h, &["model"]));
        set_once(&mut m.thread_source, str_at(h, &["platform"]));
        // Its gateway sessions name the folder from the home (`~/…`): Hermes runs here, so
        // that is this machine's home.
        let cwd = str_at(h, &["cwd"])
            .or_else(|| str_at(h, &["model_config", "cwd"]))
            .and_then(|c| absolute(c, self.home.as_deref()));
        set_once(&mut m.cwd, cwd.as_deref());
        for key in ["session_start", "last_updated"] {
            local_timestamp(m, str_at(h, &[key]), out, &self.zone);
        }
    }

    /// One message's records, each keyed by its block (a unit is one message).
    fn message(&mut self, msg: &Value, out: &mut LineOutput) {
        let base = Record {
            cwd: self.meta.cwd.clone(),
            ..Record::default()
        };
        let from = out.records.len();
        match str_at(msg, &["role"]).unwrap_or("") {
            "user" => {
                if let Some(text) = msg.get("content").and_then(text_value) {
                    out.records.push(prompt(text, "hermes:user", base));
                }
            }
            // Calls are answered in the same document: nothing waits across units.
            "assistant" => CHAT.assistant(msg, &mut BTreeMap::new(), base, &mut out.records),
            "tool" => {
                let failed = str_at(msg, &["finish_reason"]).map(|r| r == "error");
                let result = CHAT.tool(msg, &mut BTreeMap::new(), failed, base);
                out.records.push(result);
            }
            // The session's closing marker: nothing said.
            "session_meta" => {}
            "" => count_unknown(&mut self.meta, "message:<no role>"),
            other => count_unknown(&mut self.meta, &format!("message:{other}")),
        }
        for r in &mut out.records[from..] {
            r.key = Some(format!("b{}", r.block));
        }
    }
}

/// The folder `cwd` names, absolute: as written, or under `home` when written from it (`~`,
/// `~/…`). `None` for anything else (a relative folder, another user's `~name`, no home).
fn absolute(cwd: &str, home: Option<&Path>) -> Option<String> {
    if cwd.starts_with('/') {
        return Some(cwd.to_owned());
    }
    let tail = match cwd.strip_prefix('~')? {
        "" => "",
        rest => rest.strip_prefix('/')?.trim_start_matches('/'),
    };
    let home = home.filter(|h| h.is_absolute())?;
    let path = if tail.is_empty() {
        home.to_path_buf()
    } else {
        home.join(tail)
    };
    path.to_str().map(str::to_owned)
}

/// How Hermes's assistant and tool messages read (OpenAI's chat shape).
const CHAT: Chat = Chat {
    agent: Agent::Hermes,
    tool_kind,
};

impl DocumentParser for HermesParser {
    fn units_at(&self) -> &'static [&'static str] {
        &["messages"]
    }

    fn split<'d>(&self, doc: Shallow<'d>) -> (Value, KeyedUnits<'d>) {
        let Shallow { mut doc, units } = doc;
        if let Some(o) = doc.as_object_mut() {
            o.remove("messages");
        }
        let by_content = self.by_content;
        let units = units
            .into_iter()
            .flatten()
            .take(MAX_MESSAGES)
            .enumerate()
            .map(move |(i, m)| {
                let key = if by_content {
                    message_key(&m)
                } else {
                    format!("#{i}")
                };
                (key, m)
            });
        (doc, Box::new(units))
    }
}

/// The key of a message: `m` + 16 hex digits of SHA-256 over the message as redacted (a hash of
/// a secret's text would let anyone test a guess of it). Two messages saying the same are told
/// apart by their order, as the document reader does with any repeated key.
fn message_key(message: &Value) -> String {
    let mut redacted = message.clone();
    crate::archive::redact::Redactor::global().redact_json(&mut redacted, &mut Vec::new());
    let text = serde_json::to_string(&redacted).unwrap_or_default();
    use sha2::Digest as _;
    let mut hasher = sha2::Sha256::new();
    hasher.update(b"cairn/hermes-message/v1\0");
    hasher.update(text.as_bytes());
    format!("m{}", &hex::encode(hasher.finalize())[..16])
}

impl super::UnitParser for HermesParser {
    fn header(&mut self, header: &Value, out: &mut LineOutput) {
        if header.is_object() {
            self.session(header, out);
        } else {
            count_unknown(&mut self.meta, "document-not-an-object");
        }
    }

    fn unit(&mut self, _key: &str, unit: &Value, out: &mut LineOutput) {
        if unit.is_object() {
            self.message(unit, out);
        } else {
            count_unknown(&mut self.meta, "message-not-an-object");
        }
    }

    fn meta(&self) -> &SessionMeta {
        &self.meta
    }

    fn save(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }
}

/// Hermes's tool names in Cairn's kinds: `terminal` runs commands, `patch` and `write_file`
/// edit, `delegate_task` starts a sub-agent, reads, searches and its memory are housekeeping.
pub fn tool_kind(name: &str) -> ToolKind {
    match name {
        "terminal" | "shell" | "execute_code" => ToolKind::Exec,
        "patch" | "write_file" => ToolKind::FileEdit,
        "delegate_task" => ToolKind::SubAgent,
        "web_search" | "web_extract" => ToolKind::WebSearch,
        "read_file" | "search_files" | "memory" | "todo" | "session_search" | "skill_view"
        | "skills_list" => ToolKind::Housekeeping,
        other => ToolKind::of(other),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::archive::sources::UnitParser;
    use crate::archive::{Outcome, RecordKind};
    use serde_json::json;

    /// A session new to this build keys its messages by what they say, and keeps doing so once
    /// saved; one an older build saved (no `by_content`) keeps keying them by place.
    #[test]
    fn messages_are_keyed_by_content_unless_an_older_build_began_the_session() {
        let keys = |p: &HermesParser| {
            let doc = json!({"messages": [{"role": "user", "content": "hi"}, {"role": "user", "content": "hi"}, {"role": "assistant", "content": "AKIAZ7Q4N2M8K3T6W1XR"}]});
            let text = doc.to_string();
            let shallow = Shallow::read(&text, p.units_at()).unwrap();
            p.split(shallow).1.map(|(k, _)| k).collect::<Vec<_>>()
        };
        let fresh = HermesParser::resume(None).unwrap();
        let by_content = keys(&fresh);
        assert!(
            by_content
                .iter()
                .all(|k| k.starts_with('m') && k.len() == 17),
            "{by_content:?}"
        );
        assert_eq!(
            by_content[0], by_content[1],
            "the reader tells repeated keys apart"
        );
        let kept = HermesParser::resume(Some(&fresh.save())).unwrap();
        assert_eq!(keys(&kept), by_content);
        let mut saved = fresh.save();
        saved.as_object_mut().unwrap().remove("by_content");
        let older = HermesParser::resume(Some(&saved)).unwrap();
        assert_eq!(keys(&older), ["#0", "#1", "#2"]);
        // The key of a message holding a secret is the hash of it redacted.
        let redacted = json!({"role": "assistant", "content": "[REDACTED:aws-access-key]"});
        assert_eq!(by_content[2], message_key(&redacted));
    }

    #[test]
    fn a_session_document_reads_as_keyed_messages() {
        let text = json!({
            "session_id": "20260429_x", "model": "m", "platform": "cli", "cwd": "/w",
            "session_start": "2026-04-29T20:00:00Z", "last_updated": "2026-04-29T20:00:04Z",
            "messages": [
                {"role": "user", "content": "Fix it"},
                {"role": "assistant", "content": "", "reasoning": "look first", "tool_calls": [
                    {"id": "c1", "type": "function", "function": {"name": "patch", "arguments": "{\"path\":\"/w/a.py\"}"}},
                    {"id": "c2", "type": "function", "function": {"name": "terminal", "arguments": "{\"command\":\"pytest\"}"}}]},
                {"role": "tool", "tool_call_id": "c2", "tool_name": "terminal", "content": "exit code 1", "finish_reason": "stop"},
                {"role": "tool", "tool_call_id": "c9", "tool_name": "memory", "content": "none", "finish_reason": "error"},
                {"role": "session_meta"},
                {"role": "narrator"}
            ]
        })
        .to_string();
        let mut parser = HermesParser::resume(None).unwrap();
        let (header, units) = parser.split(Shallow::read(&text, parser.units_at()).unwrap());
        let mut out = LineOutput::default();
        parser.header(&header, &mut out);
        let units: Vec<(String, Value)> = units.collect();
        assert_eq!(units[0].0, message_key(&units[0].1));
        for (key, unit) in &units {
            parser.unit(key, unit, &mut out);
        }
        let m = parser.meta();
        assert_eq!(
            (
                m.session_id.as_deref(),
                m.cwd.as_deref(),
                m.thread_source.as_deref()
            ),
            (Some("20260429_x"), Some("/w"), Some("cli"))
        );
        assert_eq!(m.updated_at.as_deref(), Some("2026-04-29T20:00:04Z"));
        let kinds: Vec<_> = out.records.iter().map(|r| r.kind).collect();
        assert_eq!(
            kinds,
            [
                Some(RecordKind::Message),
                Some(RecordKind::Reasoning),
                Some(RecordKind::ToolCall),
                Some(RecordKind::ToolCall),
                Some(RecordKind::ToolResult),
                Some(RecordKind::ToolResult)
            ]
        );
        assert_eq!(out.records[2].file_paths, ["/w/a.py"]);
        let (exec, memory) = (&out.records[4], &out.records[5]);
        assert_eq!(
            (exec.exit_code, exec.outcome),
            (Some(1), Some(Outcome::Failed))
        );
        assert_eq!(memory.outcome, Some(Outcome::Failed));
        assert_eq!(
            m.unknown_types.keys().collect::<Vec<_>>(),
            ["message:narrator"]
        );
    }

    /// Hermes's `isoformat()` of a local time has no zone: read in the machine's (UTC here),
    /// never left unknown; a time that is no time at all still is, with its warning.
    #[test]
    fn a_time_written_without_a_zone_is_read_as_the_machines() {
        let mut parser = HermesParser::resume(None).unwrap();
        parser.zone = jiff::tz::TimeZone::fixed(jiff::tz::offset(2));
        let mut out = LineOutput::default();
        parser.header(
            &json!({"session_start": "2026-04-29T20:10:00", "last_updated": "yesterday"}),
            &mut out,
        );
        let m = parser.meta();
        assert_eq!(m.started_at.as_deref(), Some("2026-04-29T18:10:00Z"));
        assert_eq!(m.updated_at.as_deref(), Some("2026-04-29T18:10:00Z"));
        assert_eq!(out.warnings.len(), 1, "{:?}", out.warnings);
    }

    #[test]
    fn a_folder_written_from_the_home_is_under_this_machines() {
        let home = Some(Path::new("/home/ann"));
        for (cwd, read) in [
            ("/srv/app", Some("/srv/app")),
            ("~/Repository/api", Some("/home/ann/Repository/api")),
            ("~//api", Some("/home/ann/api")),
            ("~", Some("/home/ann")),
            ("~/", Some("/home/ann")),
            ("~bob/api", None),
            ("api", None),
            ("", None),
        ] {
            assert_eq!(absolute(cwd, home).as_deref(), read, "{cwd}");
        }
        assert_eq!(absolute("~/api", None), None);
        assert_eq!(absolute("~/api", Some(Path::new("rel"))), None);
    }

    /// The sessions of a `state.db` (Hermes's schema 5, the columns the survey reads) that no
    /// session document holds are counted; hostile ids never name a file outside the folder.
    #[test]
    fn a_state_db_is_surveyed_for_sessions_no_document_holds() {
        let home = tempfile::tempdir().unwrap();
        let sessions = home.path().join("sessions");
        std::fs::create_dir_all(&sessions).unwrap();
        assert!(state_db_survey(&sessions).is_none());

        let db = home.path().join(STATE_DB);
        let conn = rusqlite::Connection::open(&db).unwrap();
        conn.execute_batch(
            "CREATE TABLE sessions (id TEXT PRIMARY KEY, source TEXT NOT NULL, started_at REAL NOT NULL);
             INSERT INTO sessions VALUES ('20260301_100000_aa', 'cli', 1772359200.5),
               ('20260301_110000_bb', 'telegram', 1772362800.0),
               ('x/../../session_escape', 'cli', 1), (42, 'cli', 2);",
        )
        .unwrap();
        drop(conn);
        std::fs::write(sessions.join("session_20260301_100000_aa.json"), "{}").unwrap();
        // What the hostile id would name, were it joined as it is: a file outside the folder.
        std::fs::create_dir(sessions.join("session_x")).unwrap();
        std::fs::write(home.path().join("session_escape.json"), "{}").unwrap();
        assert!(
            sessions
                .join("session_x/../../session_escape.json")
                .is_file()
        );
        let survey = state_db_survey(&sessions).unwrap().unwrap();
        assert_eq!(
            (survey.sessions, survey.without_document, survey.db),
            (4, 3, db.clone())
        );

        // A file of that name that is not Hermes's database is named so.
        std::fs::write(&db, "not a database").unwrap();
        let err = state_db_survey(&sessions).unwrap().unwrap_err();
        assert!(err.contains("not a SQLite database"), "{err}");
        let conn = rusqlite::Connection::open(home.path().join("other.db")).unwrap();
        conn.execute_batch("CREATE TABLE notes (id TEXT)").unwrap();
        drop(conn);
        std::fs::rename(home.path().join("other.db"), &db).unwrap();
        let err = state_db_survey(&sessions).unwrap().unwrap_err();
        assert!(err.contains("no `sessions` table"), "{err}");
    }

    #[test]
    fn only_session_documents_are_sessions() {
        assert!(is_session_file(Path::new(
            "/h/.hermes/sessions/session_2026.json"
        )));
        assert!(!is_session_file(Path::new(
            "/h/.hermes/sessions/session_.json"
        )));
        assert!(!is_session_file(Path::new(
            "/h/.hermes/sessions/index.json"
        )));
        assert!(owns_path(Path::new("/h/.hermes/sessions/session_1.json")));
    }
}

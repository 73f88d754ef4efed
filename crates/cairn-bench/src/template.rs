//! Re-instantiating a real transcript line as a new one: the JSON shape, field set and sizes of
//! the real line are kept; ids, session, time, cwd and branch are the generated session's; long
//! free text (prompts, replies, tool output, file contents) is replaced by fresh text of the same
//! length, so no two generated lines share their content.

use std::collections::HashMap;

use serde_json::{Map, Value};

use crate::rng::Rng;
use crate::text::TextGen;

/// Strings at least this long that contain whitespace are free text and are regenerated.
const FREE_TEXT_MIN: usize = 64;

/// A real line and the cwd it was written in.
#[derive(Debug, Clone)]
pub struct Template {
    pub value: Value,
    pub cwd: Option<String>,
    /// Serialised length of the real line.
    pub bytes: usize,
}

impl Template {
    pub fn new(value: Value, file_cwd: Option<&str>) -> Template {
        let cwd = value
            .get("cwd")
            .and_then(Value::as_str)
            .or(file_cwd)
            .filter(|c| c.len() > 1)
            .map(str::to_owned);
        let bytes = value.to_string().len() + 1;
        Template { value, cwd, bytes }
    }
}

/// The generated session a line is written into.
pub struct Session {
    pub rng: Rng,
    pub session_id: String,
    pub cwd: String,
    pub branch: String,
    /// Milliseconds since the epoch of the next line.
    pub clock_ms: i64,
    pub last_uuid: Option<String>,
    pub sidechain: bool,
    pub agent_id: Option<String>,
    /// Ids of the current segment: the same real id always maps to the same new one, so a
    /// tool call and its result stay paired.
    pub ids: HashMap<String, String>,
}

impl Session {
    pub fn new(rng: Rng, session_id: String, cwd: String, branch: String, clock_ms: i64) -> Self {
        Session {
            rng,
            session_id,
            cwd,
            branch,
            clock_ms,
            last_uuid: None,
            sidechain: false,
            agent_id: None,
            ids: HashMap::new(),
        }
    }

    pub fn timestamp(&self) -> String {
        timestamp(self.clock_ms)
    }

    /// Move the clock on by a gap like the ones between real lines (0.1 s to ~40 s).
    pub fn tick(&mut self) {
        let gap = 100 + (self.rng.next_u64() % 4000) as i64 * (1 + self.rng.below(10) as i64);
        self.clock_ms += gap;
    }

    pub fn new_uuid(&mut self) -> String {
        uuid(&mut self.rng)
    }

    /// The new id for a real id, within the current segment.
    pub fn map_id(&mut self, old: &str) -> String {
        if let Some(new) = self.ids.get(old) {
            return new.clone();
        }
        let new = fresh_id(&mut self.rng, old);
        self.ids.insert(old.to_owned(), new.clone());
        new
    }
}

pub fn timestamp(ms: i64) -> String {
    jiff::Timestamp::from_millisecond(ms)
        .map(|t| t.strftime("%Y-%m-%dT%H:%M:%S%.3fZ").to_string())
        .unwrap_or_default()
}

/// A random version-4 UUID.
pub fn uuid(rng: &mut Rng) -> String {
    let a = rng.next_u64();
    let b = rng.next_u64();
    format!(
        "{:08x}-{:04x}-4{:03x}-{:04x}-{:012x}",
        a >> 32,
        (a >> 16) & 0xffff,
        a & 0xfff,
        ((b >> 48) & 0x3fff) | 0x8000,
        b & 0xffff_ffff_ffff
    )
}

/// An id of the same shape as `old`: a UUID for a UUID, else the same prefix (`toolu_`,
/// `msg_`, `req_`, `call_`) and length with fresh characters.
pub fn fresh_id(rng: &mut Rng, old: &str) -> String {
    let b = old.as_bytes();
    if b.len() == 36 && b[8] == b'-' && b[13] == b'-' {
        return uuid(rng);
    }
    let keep = old.find(['_', '-']).map_or(0, |i| i + 1);
    let mut out = String::with_capacity(old.len());
    out.push_str(&old[..keep]);
    const ALNUM: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    for _ in keep..old.len() {
        out.push(ALNUM[rng.below(ALNUM.len())] as char);
    }
    out
}

/// Keys whose string value is an id of the segment (mapped consistently).
fn is_id_key(key: &str) -> bool {
    matches!(
        key,
        "id" | "tool_use_id"
            | "toolUseID"
            | "parentToolUseID"
            | "sourceToolUseID"
            | "sourceToolAssistantUUID"
            | "requestId"
            | "messageId"
            | "leafUuid"
            | "promptId"
            | "call_id"
            | "turn_id"
    )
}

/// Instantiate one template line into `s`.
pub fn instantiate(t: &Template, s: &mut Session, text: &TextGen) -> Value {
    s.tick();
    let mut v = t.value.clone();
    let uuid = s.new_uuid();
    rewrite(&mut v, None, t.cwd.as_deref(), s, text, &uuid);
    if v.get("uuid").is_some() {
        s.last_uuid = Some(uuid);
    }
    v
}

fn rewrite(
    v: &mut Value,
    key: Option<&str>,
    old_cwd: Option<&str>,
    s: &mut Session,
    text: &TextGen,
    uuid: &str,
) {
    match v {
        Value::Object(map) => rewrite_map(map, old_cwd, s, text, uuid),
        Value::Array(items) => {
            for item in items {
                rewrite(item, key, old_cwd, s, text, uuid);
            }
        }
        Value::String(string) => {
            let key = key.unwrap_or("");
            if is_id_key(key) {
                *string = s.map_id(string);
            } else if key == "command" || key == "cmd" || key == "file_path" || key == "path" {
                if let Some(old) = old_cwd {
                    *string = string.replace(old, &s.cwd);
                }
            } else if string.len() >= FREE_TEXT_MIN && string.contains([' ', '\n']) {
                *string = text.text(&mut s.rng, string.len());
            } else if let Some(old) = old_cwd
                && string.contains(old)
            {
                *string = string.replace(old, &s.cwd);
            }
        }
        _ => {}
    }
}

fn rewrite_map(
    map: &mut Map<String, Value>,
    old_cwd: Option<&str>,
    s: &mut Session,
    text: &TextGen,
    uuid: &str,
) {
    for (key, value) in map.iter_mut() {
        match (key.as_str(), &*value) {
            ("uuid", Value::String(_)) => *value = Value::String(uuid.to_owned()),
            ("parentUuid" | "logicalParentUuid", Value::String(_) | Value::Null) => {
                *value = s.last_uuid.clone().map_or(Value::Null, Value::String);
            }
            ("sessionId" | "session_id", Value::String(_)) => {
                *value = Value::String(s.session_id.clone());
            }
            ("timestamp" | "started_at" | "completed_at", Value::String(_)) => {
                *value = Value::String(s.timestamp());
            }
            ("cwd", Value::String(_)) => *value = Value::String(s.cwd.clone()),
            ("gitBranch", Value::String(_)) => *value = Value::String(s.branch.clone()),
            ("isSidechain", Value::Bool(_)) => *value = Value::Bool(s.sidechain),
            ("agentId", Value::String(_)) => {
                if let Some(id) = &s.agent_id {
                    *value = Value::String(id.clone());
                }
            }
            _ => rewrite(value, Some(key), old_cwd, s, text, uuid),
        }
    }
}

/// Set the first string found at `key` anywhere under `v` (depth first); returns whether found.
pub fn set_first(v: &mut Value, key: &str, new: &str) -> bool {
    match v {
        Value::Object(map) => {
            if let Some(slot) = map.get_mut(key)
                && slot.is_string()
            {
                *slot = Value::String(new.to_owned());
                return true;
            }
            map.values_mut().any(|x| set_first(x, key, new))
        }
        Value::Array(items) => items.iter_mut().any(|x| set_first(x, key, new)),
        _ => false,
    }
}

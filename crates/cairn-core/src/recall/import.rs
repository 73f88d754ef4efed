//! Reviewed JSONL import (AgentsView's format): one candidate per line, reviewed elsewhere.
//!
//! Atomic: every line is validated and applied inside one transaction; any error rolls the
//! whole file back and names the line. `--dry-run` runs exactly the same work and rolls back,
//! so what it reports is what a real import would do. Idempotent by `candidate_id` (a repeat is
//! skipped as a duplicate). Fields only Cairn may set (`review_state`, digests, record ids) are
//! rejected. `session_id` is the agent's own id or a Cairn `session_key`; evidence ordinals are
//! record ordinals of that session.
//!
//! What a line says is outside input: every text field is bounded, cleaned and redacted before
//! it is stored (title, body, trigger, uncertainty and the quoted snippets through the outbound
//! redactor, as extraction's entries are: secrets and absolute paths outside the session's
//! repository become markers; the other fields lose their secrets), and an id that a reader
//! could not type back (hidden characters, anything outside [`is_id_char`]) is refused.

use std::collections::HashSet;

use rusqlite::{Connection, params};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::evidence;
use super::model::{EntryType, ReviewState, Scope, Status};
use super::store::{self, NewEntry};
use crate::error::{Error, Result};

/// The largest JSONL file `cairn recall import` reads (the ATIF import's limit).
pub const MAX_IMPORT_BYTES: u64 = 64 * 1024 * 1024;
/// The longest `candidate_id` (and `supersedes_entry_id`), in characters.
pub const MAX_ID_CHARS: usize = 200;
/// The longest title and trigger, in characters (extraction's).
pub const MAX_TITLE_CHARS: usize = 500;
/// The longest body, and the longest the quoted snippets may be together, in characters.
pub const MAX_BODY_CHARS: usize = 20_000;
/// The longest of every other text field (uncertainty, project, cwd, branch, model, …).
pub const MAX_FIELD_CHARS: usize = 2_000;

/// The characters an id may hold: ASCII letters and digits and `-_.:/@+#=~`. An id is typed
/// back (`recall review --reject ID`), so it must show as it is stored.
pub fn is_id_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || "-_.:/@+#=~".contains(c)
}

/// Read the JSONL file at `path` for [`apply`]: a regular file (not a FIFO, a device or a
/// directory) of at most [`MAX_IMPORT_BYTES`], in UTF-8. The open does not wait on a FIFO, and
/// the size is checked on the opened file and again while reading, so a file swapped or
/// growing after the check is still read no further than the limit.
pub fn read_file(path: &std::path::Path) -> Result<String> {
    use crate::atomic::Unread;
    let shown = crate::text::one_line(&path.display().to_string(), 200);
    let refuse = |why: String| Error::Invalid(format!("cannot import {shown}: {why}"));
    let bytes = crate::atomic::read_capped(path, MAX_IMPORT_BYTES).map_err(|e| match e {
        Unread::NotRegular => refuse("not a regular file".to_owned()),
        Unread::TooLarge(n) => refuse(format!(
            "{n} bytes or more is more than the {} MiB a Recall import may have",
            MAX_IMPORT_BYTES / (1024 * 1024)
        )),
        // An io error made from a kind alone says "entity not found".
        Unread::Missing => refuse("no such file".to_owned()),
        Unread::Io(source) => Error::Read {
            path: path.to_owned(),
            source,
        },
    })?;
    String::from_utf8(bytes).map_err(|e| {
        refuse(format!(
            "not UTF-8 text (byte {})",
            e.utf8_error().valid_up_to()
        ))
    })
}

/// Labels a reviewer gives to entries worth keeping (AgentsView's keepers).
const KEEPER_LABELS: [&str; 3] = ["correct", "useful-but-uncertain", "genuine-tradeoff"];
/// Fields Cairn computes; an import that sets them is refused.
const HOST_FIELDS: [&str; 6] = [
    "review_state",
    "content_digest",
    "message_start_source_uuid",
    "message_end_source_uuid",
    "start_record",
    "end_record",
];

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct ImportReport {
    pub dry_run: bool,
    /// Entries imported (or, in a dry run, that would be).
    pub imported: u32,
    pub skipped: Vec<ImportSkip>,
    pub errors: Vec<ImportError>,
    pub items: Vec<ImportItem>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct ImportSkip {
    pub line: u32,
    pub candidate_id: Option<String>,
    pub reason: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct ImportError {
    pub line: u32,
    pub message: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct ImportItem {
    pub line: u32,
    pub candidate_id: String,
    pub title: String,
    pub supersedes: Option<String>,
}

/// Apply a reviewed JSONL file inside `tx` (the caller commits only when there are no errors
/// and it is not a dry run).
pub fn apply(tx: &Connection, text: &str, dry_run: bool, now: &str) -> Result<ImportReport> {
    let mut report = ImportReport {
        dry_run,
        imported: 0,
        skipped: Vec::new(),
        errors: Vec::new(),
        items: Vec::new(),
    };
    let mut seen: HashSet<String> = HashSet::new();
    for (i, raw) in text.lines().enumerate() {
        let line = (i + 1) as u32;
        if raw.trim().is_empty() {
            continue;
        }
        match one(tx, raw, &mut seen, now) {
            Ok(Outcome::Imported(item)) => {
                report.imported += 1;
                report.items.push(ImportItem { line, ..item });
            }
            Ok(Outcome::Skipped(candidate_id, reason)) => report.skipped.push(ImportSkip {
                line,
                candidate_id,
                reason,
            }),
            Err(e) => report.errors.push(ImportError {
                line,
                message: e.to_string(),
            }),
        }
    }
    Ok(report)
}

/// What an entry inherits from its source session when the line does not say.
enum Outcome {
    Imported(ImportItem),
    Skipped(Option<String>, String),
}

/// The string field `key`, trimmed; refused when it is not a string or longer than
/// [`MAX_FIELD_CHARS`] (see [`bounded`]).
fn string(v: &Value, key: &str) -> Result<Option<String>> {
    bounded(v, key, MAX_FIELD_CHARS)
}

/// The string field `key`, trimmed, of at most `max` characters.
fn bounded(v: &Value, key: &str, max: usize) -> Result<Option<String>> {
    match v.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => {
            let s = s.trim();
            too_long(key, s, max)?;
            Ok(Some(s.to_owned()))
        }
        Some(_) => Err(Error::Invalid(format!("`{key}` must be a string"))),
    }
}

fn too_long(key: &str, s: &str, max: usize) -> Result<()> {
    if s.chars().nth(max).is_some() {
        return Err(Error::Invalid(format!(
            "`{key}` is longer than the {max} characters Cairn stores"
        )));
    }
    Ok(())
}

/// An id a person can type back: 1 to [`MAX_ID_CHARS`] characters, each an [`is_id_char`]
/// (no hidden character, no space, nothing a terminal would show otherwise).
fn id(key: &str, s: &str) -> Result<()> {
    too_long(key, s, MAX_ID_CHARS)?;
    if !crate::text::unseen(s).is_empty() || !s.chars().all(is_id_char) {
        return Err(Error::Invalid(format!(
            "`{key}` may hold only ASCII letters, digits and -_.:/@+#=~"
        )));
    }
    Ok(())
}

fn required(v: &Value, key: &str, max: usize) -> Result<String> {
    bounded(v, key, max)?
        .filter(|s| !s.is_empty())
        .ok_or_else(|| Error::Invalid(format!("`{key}` is required")))
}

fn no_control(key: &str, s: &str) -> Result<()> {
    if s.chars().any(char::is_control) {
        return Err(Error::Invalid(format!(
            "`{key}` contains control characters"
        )));
    }
    Ok(())
}

fn one(tx: &Connection, raw: &str, seen: &mut HashSet<String>, now: &str) -> Result<Outcome> {
    let db = crate::store::err_in(tx);
    let v: Value =
        serde_json::from_str(raw).map_err(|e| Error::Invalid(format!("not JSON: {e}")))?;
    if !v.is_object() {
        return Err(Error::Invalid("each line must be a JSON object".into()));
    }
    for field in HOST_FIELDS {
        if v.get(field).is_some() || v.get("evidence").and_then(|e| e.get(field)).is_some() {
            return Err(Error::Invalid(format!(
                "`{field}` is set by Cairn, not by an import; remove it"
            )));
        }
    }
    let candidate_id = required(&v, "candidate_id", MAX_ID_CHARS)?;
    id("candidate_id", &candidate_id)?;
    let flag = |key: &str| v.get(key).and_then(Value::as_bool);
    if flag("transferable") == Some(false) {
        return Ok(Outcome::Skipped(
            Some(candidate_id),
            "not_transferable".into(),
        ));
    }
    if flag("provenance_ok") == Some(false) {
        return Ok(Outcome::Skipped(
            Some(candidate_id),
            "provenance_not_ok".into(),
        ));
    }
    if let Some(label) = string(&v, "label")?.filter(|l| !l.is_empty())
        && !KEEPER_LABELS.contains(&label.as_str())
    {
        return Ok(Outcome::Skipped(
            Some(candidate_id),
            "label_not_keeper".into(),
        ));
    }
    if !seen.insert(candidate_id.clone()) || store::exists(tx, &candidate_id).map_err(db)? {
        return Ok(Outcome::Skipped(Some(candidate_id), "duplicate".into()));
    }
    let session_label = required(&v, "session_id", MAX_FIELD_CHARS)?;
    no_control("session_id", &session_label)?;
    let session = crate::archive::store::session_by_label(tx, &session_label).map_err(db)?;
    let Some(crate::archive::store::SessionPlace {
        row: session_row,
        project,
        cwd,
        branch,
        agent,
    }) = session
    else {
        return Err(Error::Invalid(format!(
            "session {session_label:?} is not in the archive; capture it first (`cairn sync`)"
        )));
    };
    let entry_type = EntryType::parse(&string(&v, "type")?.unwrap_or_else(|| "fact".into()))?;
    let scope = Scope::parse(&string(&v, "scope")?.unwrap_or_else(|| "project".into()))?;
    let title = bounded(&v, "title", MAX_TITLE_CHARS)?.unwrap_or_default();
    let body = bounded(&v, "body", MAX_BODY_CHARS)?.unwrap_or_default();
    let trigger = bounded(&v, "trigger", MAX_TITLE_CHARS)?.unwrap_or_default();
    let confidence = match v.get("confidence") {
        None | Some(Value::Null) => None,
        Some(c) => match c.as_f64() {
            Some(c) if (0.0..=1.0).contains(&c) => Some(c),
            _ => {
                return Err(Error::Invalid(
                    "`confidence` must be a number between 0 and 1".into(),
                ));
            }
        },
    };
    let ev = v
        .get("evidence")
        .ok_or_else(|| Error::Invalid("`evidence` is required".into()))?;
    let ordinal = |key: &str| -> Result<u32> {
        ev.get(key)
            .and_then(Value::as_u64)
            .and_then(|n| u32::try_from(n).ok())
            .ok_or_else(|| {
                Error::Invalid(format!("`evidence.{key}` must be a non-negative integer"))
            })
    };
    let (start, end) = (ordinal("ordinal_start")?, ordinal("ordinal_end")?);
    let tool_ids: Vec<String> = match ev.get("tool_use_ids") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(ids)) => {
            let mut ids: Vec<String> = ids
                .iter()
                .map(|i| {
                    i.as_str()
                        .map(|s| s.trim().to_owned())
                        .filter(|s| !s.is_empty() && !s.chars().any(char::is_control))
                })
                .collect::<Option<_>>()
                .ok_or_else(|| {
                    Error::Invalid("`evidence.tool_use_ids` must be non-empty strings".into())
                })?;
            ids.sort();
            ids.dedup();
            ids
        }
        Some(_) => {
            return Err(Error::Invalid(
                "`evidence.tool_use_ids` must be an array".into(),
            ));
        }
    };
    let snippets: Vec<String> = match ev.get("snippets") {
        Some(Value::Array(s)) => s
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect(),
        _ => Vec::new(),
    };
    let snippet = snippets.join("\n");
    too_long("evidence.snippets", &snippet, MAX_BODY_CHARS)?;
    // What the line says is redacted as a model's answer is (secrets, and absolute paths but
    // those under the session's repository), before anything of it is stored or shown.
    let root = super::extract::store::session_info(tx, session_row)?.root;
    let ob = crate::llm::Outbound::for_root(root.as_deref());
    let title = super::store::entry_text(&ob, &title);
    let body = super::store::entry_text(&ob, &body);
    let trigger = super::store::entry_text(&ob, &trigger);
    let snippet = ob.redact_answer(&snippet);
    for (key, s) in [("title", &title), ("body", &body)] {
        if crate::text::is_blank(s) {
            return Err(Error::Invalid(format!("`{key}` is required")));
        }
    }
    // The other fields name a place or a tool: cleaned, their secrets redacted, paths kept.
    let meta = |key: &str| -> Result<Option<String>> {
        Ok(string(&v, key)?.map(|s| {
            crate::archive::redact::Redactor::global()
                .redact_printable(&s, key, &mut Vec::new())
                .trim()
                .to_owned()
        }))
    };
    let bound = evidence::bind(
        tx,
        session_row,
        &session_label,
        start,
        end,
        &tool_ids,
        &snippet,
    )?;
    let supersedes = string(&v, "supersedes_entry_id")?.filter(|s| !s.is_empty());
    if let Some(old) = &supersedes {
        id("supersedes_entry_id", old)?;
    }
    let entry = NewEntry {
        id: candidate_id.clone(),
        entry_type,
        scope,
        status: Status::Accepted,
        review_state: ReviewState::HumanReviewed,
        title: title.clone(),
        body,
        trigger,
        confidence,
        uncertainty: string(&v, "uncertainty")?
            .map(|u| ob.redact_answer(&u).trim().to_owned())
            .unwrap_or_default(),
        project: meta("project")?.or(project).unwrap_or_default(),
        cwd: meta("cwd")?.or(cwd).unwrap_or_default(),
        git_branch: meta("git_branch")?.or(branch).unwrap_or_default(),
        agent: meta("agent")?.unwrap_or(agent),
        source_session_id: Some(session_row),
        source_episode_id: meta("episode_id")?.unwrap_or_default(),
        source_run_id: meta("run_id")?.unwrap_or_default(),
        extractor_method: meta("extractor_method")?.unwrap_or_default(),
        model: meta("model")?.unwrap_or_default(),
        label: string(&v, "label")?.unwrap_or_default(),
        transferable: true,
        provenance_ok: true,
        supersedes_entry_id: String::new(),
        evidence: bound,
    };
    store::insert(tx, &entry, now).map_err(db)?;
    if let Some(old) = &supersedes {
        super::review::supersede(tx, old, &candidate_id, now)?;
    }
    tx.execute(
        "UPDATE recall_entries SET reviewed_at = ?2 WHERE id = ?1",
        params![candidate_id, now],
    )
    .map_err(db)?;
    Ok(Outcome::Imported(ImportItem {
        line: 0,
        candidate_id,
        title,
        supersedes,
    }))
}

//! Reviewed JSONL import (AgentsView's format): one candidate per line, reviewed elsewhere.
//!
//! Atomic: every line is validated and applied inside one transaction; any error rolls the
//! whole file back and names the line. `--dry-run` runs exactly the same work and rolls back,
//! so what it reports is what a real import would do. Idempotent by `candidate_id` (a repeat is
//! skipped as a duplicate). Fields only Cairn may set (`review_state`, digests, record ids) are
//! rejected. `session_id` is the agent's own id or a Cairn `session_key`; evidence ordinals are
//! record ordinals of that session.

use std::collections::HashSet;

use rusqlite::{Connection, OptionalExtension, params};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::evidence;
use super::model::{EntryType, ReviewState, Scope, Status};
use super::store::{self, NewEntry};
use crate::error::{Error, Result};

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
struct SessionContext {
    row: i64,
    project: Option<String>,
    cwd: Option<String>,
    branch: Option<String>,
    agent: String,
}

enum Outcome {
    Imported(ImportItem),
    Skipped(Option<String>, String),
}

fn string(v: &Value, key: &str) -> Result<Option<String>> {
    match v.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.trim().to_owned())),
        Some(_) => Err(Error::Invalid(format!("`{key}` must be a string"))),
    }
}

fn required(v: &Value, key: &str) -> Result<String> {
    string(v, key)?
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
    let candidate_id = required(&v, "candidate_id")?;
    no_control("candidate_id", &candidate_id)?;
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
    let session_label = required(&v, "session_id")?;
    no_control("session_id", &session_label)?;
    let session: Option<SessionContext> = tx
        .query_row(
            "SELECT id, project, cwd, git_branch, agent FROM sessions WHERE session_key = ?1 OR session_id = ?1
             ORDER BY (session_key = ?1) DESC, updated_at DESC LIMIT 1",
            [&session_label],
            |r| {
                Ok(SessionContext {
                    row: r.get(0)?,
                    project: r.get(1)?,
                    cwd: r.get(2)?,
                    branch: r.get(3)?,
                    agent: r.get(4)?,
                })
            },
        )
        .optional()
        .map_err(db)?;
    let Some(SessionContext {
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
    let title = required(&v, "title")?;
    let body = required(&v, "body")?;
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
    let bound = evidence::bind(
        tx,
        session_row,
        &session_label,
        start,
        end,
        &tool_ids,
        &snippets.join("\n"),
    )?;
    let supersedes = string(&v, "supersedes_entry_id")?.filter(|s| !s.is_empty());
    let entry = NewEntry {
        id: candidate_id.clone(),
        entry_type,
        scope,
        status: Status::Accepted,
        review_state: ReviewState::HumanReviewed,
        title: title.clone(),
        body,
        trigger: string(&v, "trigger")?.unwrap_or_default(),
        confidence,
        uncertainty: string(&v, "uncertainty")?.unwrap_or_default(),
        project: string(&v, "project")?.or(project).unwrap_or_default(),
        cwd: string(&v, "cwd")?.or(cwd).unwrap_or_default(),
        git_branch: string(&v, "git_branch")?.or(branch).unwrap_or_default(),
        agent: string(&v, "agent")?.unwrap_or(agent),
        source_session_id: Some(session_row),
        source_episode_id: string(&v, "episode_id")?.unwrap_or_default(),
        source_run_id: string(&v, "run_id")?.unwrap_or_default(),
        extractor_method: string(&v, "extractor_method")?.unwrap_or_default(),
        model: string(&v, "model")?.unwrap_or_default(),
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

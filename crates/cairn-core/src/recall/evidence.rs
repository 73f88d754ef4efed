//! Evidence: binding an entry to a range of records of its source session, and checking that
//! the range still says what it said.
//!
//! A binding stores the ordinals, the stable ids of the first and last record
//! (`<record_hash>#<block>`), and a digest over the records' *content* (kind, role, text, tool
//! name, input and call id — no ordinals, times or storage ids), so unchanged evidence survives
//! renumbering while a changed record is detected. Verification runs after every capture of the
//! session: an anchor that vanished, moved out of order or changed content revokes the entry's
//! provenance. Revocation is sticky: only a person re-reviewing the entry restores trust.

use std::path::Path;

use rusqlite::{Connection, params};
use sha2::{Digest, Sha256};

use super::store::NewEvidence;
use crate::archive::store::{self as archive, RangeRecord};
use crate::error::{Error, Result};

/// SHA-256 over the content of the records, canonical JSON.
fn digest(records: &[RangeRecord]) -> String {
    let content: Vec<serde_json::Value> = records
        .iter()
        .map(|r| {
            serde_json::json!({
                "kind": r.kind, "role": r.role, "text": r.text, "tool_name": r.tool_name,
                "tool_input": r.tool_input, "call_id": r.call_id,
            })
        })
        .collect();
    let canonical = serde_json::json!({"version": "cairn-evidence-content/v1", "records": content});
    format!(
        "sha256:{}",
        hex::encode(Sha256::digest(canonical.to_string().as_bytes()))
    )
}

fn gap_free(records: &[RangeRecord], start: u32, end: u32) -> bool {
    records.len() as u64 == u64::from(end - start) + 1
        && records.first().map(|r| r.ordinal) == Some(start)
}

/// Bind records `start..=end` of `session` (and optionally tool calls in that range) as evidence.
/// Errors name the session and range when the range is incomplete or a tool id is not in it.
pub fn bind(
    conn: &Connection,
    session: i64,
    session_label: &str,
    start: u32,
    end: u32,
    tool_use_ids: &[String],
    snippet: &str,
) -> Result<Vec<NewEvidence>> {
    let db = crate::store::err_in(conn);
    if end < start {
        return Err(Error::Invalid(format!(
            "evidence range {start}-{end} of session {session_label} is reversed"
        )));
    }
    let records = archive::record_range(conn, session, start, end).map_err(db)?;
    if !gap_free(&records, start, end) {
        return Err(Error::Invalid(format!(
            "evidence range {start}-{end} is not in session {session_label} (it has {} of those records); list them with `cairn show {session_label} --turn <n>`",
            records.len()
        )));
    }
    for id in tool_use_ids {
        if !records
            .iter()
            .any(|r| r.call_id.as_deref() == Some(id.as_str()))
        {
            return Err(Error::Invalid(format!(
                "tool use {id:?} is not in records {start}-{end} of session {session_label}"
            )));
        }
    }
    let (first, last) = match (records.first(), records.last()) {
        (Some(f), Some(l)) => (f, l),
        _ => {
            return Err(Error::Invalid(format!(
                "evidence range {start}-{end} of session {session_label} is empty"
            )));
        }
    };
    let files = cited_files(conn, session, &records);
    let base = NewEvidence {
        session_id: session,
        ordinal_start: start,
        ordinal_end: end,
        start_record: first.id.clone(),
        end_record: last.id.clone(),
        content_digest: digest(&records),
        tool_use_id: None,
        snippet: snippet.to_owned(),
        files,
        recorded_at: last.timestamp.clone().or_else(|| first.timestamp.clone()),
    };
    if tool_use_ids.is_empty() {
        return Ok(vec![base]);
    }
    // One row per cited tool call; the first carries the snippet.
    Ok(tool_use_ids
        .iter()
        .enumerate()
        .map(|(i, id)| NewEvidence {
            tool_use_id: Some(id.clone()),
            snippet: if i == 0 {
                base.snippet.clone()
            } else {
                String::new()
            },
            ..base.clone()
        })
        .collect())
}

/// Repo-relative paths the records edit (what staleness watches).
fn cited_files(conn: &Connection, session: i64, records: &[RangeRecord]) -> Vec<String> {
    let root = archive::session_repo(conn, session)
        .ok()
        .flatten()
        .and_then(|repo| crate::git::store::repo_root(conn, repo).ok().flatten());
    let mut files: Vec<String> = records
        .iter()
        .flat_map(|r| r.file_paths.iter())
        .filter_map(|p| match &root {
            Some(root) => Path::new(p)
                .strip_prefix(root)
                .ok()
                .map(|rel| rel.to_string_lossy().into_owned())
                .or_else(|| crate::git::targets::is_public_repo_path(p).then(|| p.clone())),
            None => crate::git::targets::is_public_repo_path(p).then(|| p.clone()),
        })
        .collect();
    files.sort();
    files.dedup();
    files
}

/// One cited range, as stored.
struct Cited {
    id: i64,
    entry: String,
    session: i64,
    start: u32,
    end: u32,
    start_record: String,
    end_record: String,
    digest: String,
}

impl Cited {
    /// Where it stands now ([`anchors`]).
    fn anchored(&self, conn: &Connection) -> Result<Anchored> {
        anchors(
            conn,
            self.session,
            &self.start_record,
            &self.end_record,
            self.start,
            self.end,
            &self.digest,
        )
    }
}

/// The cited ranges `filter` (a condition on `recall_evidence v` and `recall_entries e`, its
/// one parameter `key`) selects, in the order they were cited.
fn cited(conn: &Connection, filter: &str, key: &dyn rusqlite::ToSql) -> Result<Vec<Cited>> {
    let db = crate::store::err_in(conn);
    conn.prepare_cached(&format!(
        "SELECT v.id, v.entry_id, v.session_id, v.ordinal_start, v.ordinal_end, v.start_record,
                v.end_record, v.content_digest
         FROM recall_evidence v JOIN recall_entries e ON e.id = v.entry_id
         WHERE {filter} ORDER BY v.id"
    ))
    .map_err(db)?
    .query_map([key], |r| {
        Ok(Cited {
            id: r.get(0)?,
            entry: r.get(1)?,
            session: r.get(2)?,
            start: r.get(3)?,
            end: r.get(4)?,
            start_record: r.get(5)?,
            end_record: r.get(6)?,
            digest: r.get(7)?,
        })
    })
    .map_err(db)?
    .collect::<rusqlite::Result<_>>()
    .map_err(db)
}

/// Check every evidence row of trusted-provenance entries from `session`; remap ordinals that
/// moved, revoke entries whose anchors vanished or changed. Returns how many were revoked.
pub fn verify_session(conn: &Connection, session: i64, now: &str) -> Result<u32> {
    let db = crate::store::err_in(conn);
    let mut revoked = 0;
    for range in cited(conn, "v.session_id = ?1 AND e.provenance_ok = 1", &session)? {
        let problem = match range.anchored(conn)? {
            Anchored::Same(s, e) => {
                if (s, e) != (range.start, range.end) {
                    conn.prepare_cached("UPDATE recall_evidence SET ordinal_start = ?2, ordinal_end = ?3 WHERE id = ?1")
                        .map_err(db)?
                        .execute(params![range.id, s, e])
                        .map_err(db)?;
                }
                None
            }
            Anchored::Changed(why) => Some(why),
        };
        if let Some(why) = problem {
            revoked += conn
                .prepare_cached(
                    "UPDATE recall_entries SET provenance_ok = 0, provenance_note = ?2, updated_at = ?3
                     WHERE id = ?1 AND provenance_ok = 1",
                )
                .map_err(db)?
                .execute(params![range.entry, format!("provenance revoked: {why}"), now])
                .map_err(db)? as u32;
        }
    }
    Ok(revoked)
}

/// A reindex's part in Recall after it redacted lines of `session` further (secrets an older
/// build let through): a range that reads differently now may have been digested over what the
/// redaction removed, and that digest would let a guess of it be checked, so it is replaced by
/// one nothing can match. Such a range was revoked already ([`verify_session`]; revocation is
/// sticky, so nothing is lost). Returns how many ranges changed.
pub fn forget_digests(conn: &Connection, session: i64) -> Result<u32> {
    let db = crate::store::err_in(conn);
    let mut changed = 0;
    for range in cited(conn, "v.session_id = ?1", &session)? {
        if let Anchored::Changed(_) = range.anchored(conn)? {
            let unmatchable = format!(
                "sha256:{}",
                hex::encode(Sha256::digest(uuid::Uuid::new_v4().as_bytes()))
            );
            changed += conn
                .prepare_cached("UPDATE recall_evidence SET content_digest = ?2 WHERE id = ?1")
                .map_err(db)?
                .execute(params![range.id, unmatchable])
                .map_err(db)? as u32;
        }
    }
    Ok(changed)
}

/// Where a cited range stands now.
enum Anchored {
    /// Unchanged, at these ordinals now.
    Same(u32, u32),
    /// Vanished, reordered or changed: why.
    Changed(String),
}

/// Find a cited range by its anchor records and compare its content with the digest stored
/// when it was cited. Reads only.
fn anchors(
    conn: &Connection,
    session: i64,
    start_id: &str,
    end_id: &str,
    start: u32,
    end: u32,
    stored: &str,
) -> Result<Anchored> {
    let db = crate::store::err_in(conn);
    let resolve = |id: &str| archive::record_ordinal(conn, session, id);
    Ok(
        match (resolve(start_id).map_err(db)?, resolve(end_id).map_err(db)?) {
            (None, _) => Anchored::Changed(format!(
                "the record that opened its evidence ({start}) is gone"
            )),
            (_, None) => Anchored::Changed(format!(
                "the record that closed its evidence ({end}) is gone"
            )),
            (Some(s), Some(e)) if e < s => {
                Anchored::Changed(format!("its evidence records {s}-{e} are out of order"))
            }
            (Some(s), Some(e)) => {
                let records = archive::record_range(conn, session, s, e).map_err(db)?;
                if !gap_free(&records, s, e) {
                    Anchored::Changed(format!("records {s}-{e} of its evidence have gaps"))
                } else if digest(&records) != stored {
                    Anchored::Changed(format!("records {s}-{e} of its evidence changed"))
                } else {
                    Anchored::Same(s, e)
                }
            }
        },
    )
}

/// One cited range of an entry as it stands now.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct EvidenceState {
    pub session_key: String,
    pub ordinal_start: u32,
    pub ordinal_end: u32,
    /// Why the transcript no longer says what it said when the entry cited it; `None` when
    /// it still does.
    pub changed: Option<String>,
}

/// Check every cited range of an entry against its transcript now, without writing (the
/// sticky revocation is [`verify_session`]'s, after a capture).
pub fn check_entry(conn: &Connection, entry_id: &str) -> Result<Vec<EvidenceState>> {
    let db = crate::store::err_in(conn);
    let mut out = Vec::new();
    for range in cited(conn, "v.entry_id = ?1", &entry_id)? {
        let key = archive::session_key(conn, range.session).map_err(db)?;
        let (ordinal_start, ordinal_end, changed) = match range.anchored(conn)? {
            Anchored::Same(s, e) => (s, e, None),
            Anchored::Changed(why) => (range.start, range.end, Some(why)),
        };
        out.push(EvidenceState {
            session_key: key,
            ordinal_start,
            ordinal_end,
            changed,
        });
    }
    Ok(out)
}

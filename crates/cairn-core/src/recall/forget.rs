//! Forgetting, Recall's part: evidence that cites a forgotten session is revoked (its snippet
//! quoted the transcript). An entry left with no evidence that no person ever accepted is
//! machine text drawn from the forgotten sessions alone: it goes with them (its words may
//! quote them, and nothing else vouches for it). One a person accepted goes back to the review
//! inbox, never silently trusted: unreviewed, provenance unchecked, with a note saying why; its
//! words are the person's to keep or reject. Each entry that cited a forgotten session and
//! stays is indexed again without the revoked snippets, so no word only they held still finds
//! it.
//!
//! A replacement left without evidence no longer stands in for the entry it replaced: that one
//! serves again in its place ([`super::review::hand_back`]: as it was before it was replaced,
//! its evidence checked again), and the replacement no longer claims to replace it.

use rusqlite::{Connection, params};

/// Revocation note on an entry whose every piece of evidence was forgotten.
pub const REVOKED_NOTE: &str = "evidence revoked: the sessions it cited were forgotten";

/// An entry whose evidence a forget touches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Touched {
    pub id: String,
    pub title: String,
    /// True when no evidence would be left of an entry a person accepted: it goes back to the
    /// inbox.
    pub to_inbox: bool,
    /// No evidence would be left of an entry no person accepted (and none replaced or was
    /// replaced by it): it is deleted with the sessions.
    pub deleted: bool,
    /// A rejected (archived) entry: it stays archived whatever evidence it keeps.
    pub archived: bool,
    /// No evidence would be left: its provenance is revoked (archived or not), so no accept
    /// can trust it again on nothing.
    pub unanchored: bool,
    /// An archived entry another one replaced (not rejected): it stays archived, replaced.
    pub superseded_by: Option<String>,
    /// The entry this one replaced, served again in its place because no evidence of this one
    /// would be left (it goes back to the inbox).
    pub hands_back_to: Option<String>,
}

/// The evidence rows citing `sessions`, and the entries they belong to.
pub fn evidence_of(conn: &Connection, sessions: &[i64]) -> rusqlite::Result<(u64, Vec<Touched>)> {
    let mut rows = 0u64;
    let mut entries: Vec<Touched> = Vec::new();
    let mut stmt = conn.prepare_cached(
        "SELECT ev.entry_id, e.title, e.status = 'archived',
                e.review_state <> 'human_reviewed' AND e.reviewed_at IS NULL
                    AND e.supersedes_entry_id = '' AND e.superseded_by_entry_id = '',
                e.superseded_by_entry_id,
                (SELECT o.id FROM recall_entries o
                  WHERE o.id = e.supersedes_entry_id AND o.superseded_by_entry_id = e.id
                    AND o.status = 'archived' AND o.rejected_at IS NULL)
         FROM recall_evidence ev
         JOIN recall_entries e ON e.id = ev.entry_id
         WHERE ev.session_id = ?1",
    )?;
    let mut never_accepted = Vec::new();
    for &id in sessions {
        for row in stmt.query_map([id], |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, bool>(2)?,
                r.get::<_, bool>(3)?,
                r.get::<_, String>(4)?,
                r.get::<_, Option<String>>(5)?,
            ))
        })? {
            let (entry, title, archived, machine, superseded_by, replaced) = row?;
            rows += 1;
            if !entries.iter().any(|t| t.id == entry) {
                never_accepted.push(machine);
                entries.push(Touched {
                    id: entry,
                    title,
                    to_inbox: false,
                    deleted: false,
                    archived,
                    unanchored: false,
                    superseded_by: (!superseded_by.is_empty()).then_some(superseded_by),
                    hands_back_to: replaced,
                });
            }
        }
    }
    let mut others = conn.prepare_cached(&format!(
        "SELECT COUNT(*) FROM recall_evidence WHERE entry_id = ?1 AND session_id NOT IN ({})",
        vec!["?"; sessions.len().max(1)].join(",")
    ))?;
    for (t, machine) in entries.iter_mut().zip(never_accepted) {
        let mut args: Vec<rusqlite::types::Value> = vec![t.id.clone().into()];
        args.extend(sessions.iter().map(|&s| s.into()));
        if sessions.is_empty() {
            args.push(rusqlite::types::Value::Null);
        }
        let left: i64 = others.query_row(rusqlite::params_from_iter(args), |r| r.get(0))?;
        t.unanchored = left == 0;
        t.deleted = t.unanchored && machine;
        t.to_inbox = t.unanchored && !t.archived && !t.deleted;
        if !t.to_inbox {
            t.hands_back_to = None;
        }
    }
    Ok((rows, entries))
}

/// Revoke the evidence citing `sessions`, re-index every entry that cited them (the index held
/// the revoked snippets' words) and send the entries left without evidence back to the inbox
/// (in the caller's transaction). Returns the evidence rows removed.
pub fn revoke(conn: &Connection, sessions: &[i64], now: &str) -> rusqlite::Result<u64> {
    let (_, touched) = evidence_of(conn, sessions)?;
    let mut removed = 0u64;
    for &id in sessions {
        removed += conn.execute("DELETE FROM recall_evidence WHERE session_id = ?1", [id])? as u64;
        conn.execute(
            "UPDATE recall_entries SET source_session_id = NULL WHERE source_session_id = ?1",
            [id],
        )?;
        for table in ["recall_extract_progress", "recall_extract_entries"] {
            conn.execute(&format!("DELETE FROM {table} WHERE session_id = ?1"), [id])?;
        }
    }
    for t in touched.iter().filter(|t| t.deleted) {
        let rowid: i64 = conn.query_row(
            "SELECT rowid FROM recall_entries WHERE id = ?1",
            [&t.id],
            |r| r.get(0),
        )?;
        super::index::unindex(conn, rowid)?;
        conn.execute("DELETE FROM recall_entries WHERE id = ?1", [&t.id])?;
    }
    for t in touched.iter().filter(|t| !t.deleted) {
        super::store::reindex(conn, &t.id)?;
    }
    // A rejected entry keeps its status (out of the inbox), but loses its provenance too.
    for t in touched.iter().filter(|t| t.unanchored && !t.deleted) {
        conn.execute(
            "UPDATE recall_entries SET review_state = 'unreviewed_auto', reviewed_at = NULL,
                 provenance_ok = 0, provenance_note = ?2, updated_at = ?3
             WHERE id = ?1",
            params![t.id, REVOKED_NOTE, now],
        )?;
    }
    // A replacement left with nothing hands its place back, after every revocation above (the
    // entry it replaced may have cited the forgotten sessions too: it comes back as it is now).
    for t in touched.iter().filter(|t| t.hands_back_to.is_some()) {
        // rusqlite's one variant that boxes an error without its `functions` feature.
        let as_db = |e: crate::error::Error| rusqlite::Error::ToSqlConversionFailure(Box::new(e));
        let Some(replacement) = super::store::get(conn, &t.id)? else {
            continue;
        };
        super::review::hand_back(conn, &replacement, now).map_err(as_db)?;
        conn.execute(
            "UPDATE recall_entries SET supersedes_entry_id = '' WHERE id = ?1",
            [&t.id],
        )?;
    }
    Ok(removed)
}

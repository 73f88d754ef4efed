//! One inbox entry laid out for review: why it is there and where it came from, the records it
//! cites quoted from the archive (each checked against the transcript now), and the accepted
//! entries that say nearly the same thing ([`super::similar`]). The CLI's
//! `cairn recall review --show ID` and the window's inbox show this same value.

use rusqlite::Connection;
use serde::{Deserialize, Serialize};

use super::agents::ProposedBy;
use super::evidence;
use super::model::{Entry, ReviewState};
use super::review::InboxReason;
use super::similar::{self, NearDuplicate};
use crate::archive::store as archive;
use crate::error::{Error, Result};

/// Records quoted per cited range (the rest are counted).
pub const MAX_QUOTED_RECORDS: usize = 8;
/// Characters quoted per record (the rest is cut, and the cut is marked).
pub const MAX_QUOTE_CHARS: usize = 800;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct Proposal {
    /// Why it is in the inbox; `None` when it is not (already reviewed, or archived).
    pub reason: Option<InboxReason>,
    pub entry: Entry,
    pub proposed_by: Option<ProposedBy>,
    /// Why it was proposed and why it waits for review, one sentence each.
    pub why: Vec<String>,
    /// Every cited range, quoted.
    pub evidence: Vec<QuotedEvidence>,
    /// Accepted entries that say nearly the same thing, strongest first.
    pub duplicates: Vec<NearDuplicate>,
    /// How the near-duplicates were found.
    pub duplicate_basis: String,
}

/// One cited range with its records as the archive holds them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct QuotedEvidence {
    pub session_key: String,
    pub session_title: String,
    pub ordinal_start: u32,
    pub ordinal_end: u32,
    pub records: Vec<QuotedRecord>,
    /// Records of the range not quoted (past [`MAX_QUOTED_RECORDS`]).
    pub more_records: u32,
    /// Why the transcript no longer says what it said when the entry cited it; `None` when it
    /// still does.
    pub changed: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct QuotedRecord {
    pub ordinal: u32,
    /// `user`, `assistant`, `tool call <name>`, `tool result`, … (what spoke).
    pub who: String,
    /// The record's text, printable ([`crate::text::printable`]), cut at [`MAX_QUOTE_CHARS`].
    pub text: String,
    pub truncated: bool,
}

/// `text` printable, trimmed, cut at `max` characters.
fn quote(text: &str, max: usize) -> (String, bool) {
    let clean = crate::text::printable(text);
    let clean = clean.trim();
    match clean.char_indices().nth(max) {
        Some((cut, _)) => (format!("{}…", clean[..cut].trim_end()), true),
        None => (clean.to_owned(), false),
    }
}

fn quoted_record(r: &archive::RangeRecord) -> QuotedRecord {
    let who = match (&r.tool_name, r.role.as_deref()) {
        (Some(tool), _) if r.text.is_none() => {
            format!("tool call {}", crate::text::one_line(tool, 60))
        }
        (_, Some(role)) if !role.is_empty() => crate::text::one_line(role, 40),
        _ => crate::text::one_line(&r.kind.replace('_', " "), 40),
    };
    let body = match (&r.text, &r.tool_input) {
        (Some(t), _) if !t.trim().is_empty() => t.as_str(),
        (_, Some(input)) => input.as_str(),
        _ => "",
    };
    let (text, truncated) = quote(body, MAX_QUOTE_CHARS);
    QuotedRecord {
        ordinal: r.ordinal,
        who,
        text,
        truncated,
    }
}

/// How every view heads session `id` (its title, else its first request), if it has one.
fn heading(conn: &Connection, id: i64) -> Option<String> {
    archive::session_heading(conn, id)
        .ok()
        .flatten()
        .filter(|t| !t.trim().is_empty())
}

/// The cited ranges of entry `id`, quoted, each checked against its transcript now.
pub fn quoted_evidence(conn: &Connection, id: &str) -> Result<Vec<QuotedEvidence>> {
    let db = crate::store::err_in(conn);
    let rows: Vec<i64> = conn
        .prepare_cached("SELECT session_id FROM recall_evidence WHERE entry_id = ?1 ORDER BY id")
        .and_then(|mut s| {
            s.query_map([id], |r| r.get(0))?
                .collect::<rusqlite::Result<_>>()
        })
        .map_err(db)?;
    let states = evidence::check_entry(conn, id)?;
    let mut out: Vec<QuotedEvidence> = Vec::new();
    for (session, state) in rows.into_iter().zip(states) {
        // One row per cited tool call of a range: quote the range once.
        if out.iter().any(|q| {
            q.session_key == state.session_key
                && (q.ordinal_start, q.ordinal_end) == (state.ordinal_start, state.ordinal_end)
        }) {
            continue;
        }
        let (start, end) = (
            state.ordinal_start,
            state.ordinal_end.max(state.ordinal_start),
        );
        let last = end.min(start.saturating_add(MAX_QUOTED_RECORDS as u32 - 1));
        let records = archive::record_range(conn, session, start, last).map_err(db)?;
        // Headed as every view heads it: an untitled session by its first request.
        let title = heading(conn, session).unwrap_or_default();
        out.push(QuotedEvidence {
            session_title: crate::text::one_line(&title, 120),
            ordinal_start: start,
            ordinal_end: end,
            more_records: (end - start + 1).saturating_sub(records.len() as u32),
            records: records.iter().map(quoted_record).collect(),
            changed: state.changed,
            session_key: state.session_key,
        });
    }
    Ok(out)
}

/// Why an entry was proposed and why it waits, one sentence each.
fn why(
    conn: &Connection,
    entry: &Entry,
    reason: Option<InboxReason>,
    by: Option<&ProposedBy>,
) -> Vec<String> {
    let mut out = Vec::new();
    let line = |s: &str| crate::text::one_line(s, 300);
    match reason {
        Some(InboxReason::Stale) => out.push(format!(
            "Back for review: files its evidence cites changed later{}.",
            entry
                .stale_note
                .as_deref()
                .map(|n| format!(" ({})", line(n)))
                .unwrap_or_default()
        )),
        Some(InboxReason::ProvenanceRevoked) => out.push(format!(
            "Back for review: the transcript no longer says what it said when the entry cited it{}.",
            entry
                .provenance_note
                .as_deref()
                .map(|n| format!(" ({})", line(n)))
                .unwrap_or_default()
        )),
        // Sent back by a forget: its evidence is gone, and an accept is refused.
        Some(InboxReason::Unreviewed) if !entry.provenance_ok => out.push(format!(
            "Back for review: {}. With no evidence left it cannot be trusted again; reject it, or import it again citing a session that supports it.",
            entry
                .provenance_note
                .as_deref()
                .map_or_else(|| "its provenance was revoked".to_owned(), line)
        )),
        Some(InboxReason::Unreviewed) => {
            out.push("New: nobody has reviewed it, so briefs and trusted-only searches leave it out.".into());
            // Evidence the extraction could not bind as the model cited it.
            if let Some(n) = entry.provenance_note.as_deref() {
                out.push(format!("Its evidence: {}.", line(n)));
            }
        }
        None => {}
    }
    if let Some(by) = by {
        out.push(format!(
            "Proposed by {} through MCP{}{} on {}.",
            line(&by.agent),
            if by.client.is_empty() {
                String::new()
            } else {
                format!(" ({})", line(&by.client))
            },
            by.turn
                .as_deref()
                .map(|t| format!(", turn {}", line(t)))
                .unwrap_or_default(),
            line(&by.proposed_at),
        ));
    } else if !entry.model.is_empty() {
        let session = entry
            .source_session_key
            .as_deref()
            .and_then(|k| archive::sessions_named(conn, k).ok())
            .and_then(|ids| ids.first().copied())
            .map(|s| match heading(conn, s) {
                Some(title) => format!("“{}”", line(&title)),
                None => entry.source_session_key.clone().unwrap_or_default(),
            })
            .unwrap_or_else(|| "a session no longer archived".into());
        out.push(format!(
            "Extracted by {} ({} segmenter) from {session}{}.",
            line(&entry.model),
            line(&entry.extractor_method),
            entry
                .confidence
                .map(|c| format!(", the model's confidence {c:.2}"))
                .unwrap_or_default()
        ));
    } else if entry.provenance_note.as_deref() == Some(super::forget::REVOKED_NOTE) {
        // A forget took its evidence: whatever review it had no longer holds.
        out.push(
            "Imported; the sessions it cited were forgotten since, so its review no longer holds."
                .to_owned(),
        );
    } else if entry.review_state != ReviewState::HumanReviewed {
        out.push(
            match entry.review_state {
                ReviewState::CalibratedAuto => {
                    "Imported as calibrated by a model, not reviewed by a person yet."
                }
                ReviewState::EvalRaw => {
                    "Imported from an evaluation set, not reviewed by a person yet."
                }
                _ => "Imported, not reviewed by a person yet.",
            }
            .to_owned(),
        );
    }
    if !entry.uncertainty.trim().is_empty() {
        out.push(format!("Uncertain: {}.", line(&entry.uncertainty)));
    }
    if !entry.trigger.trim().is_empty() {
        out.push(format!("Applies when: {}.", line(&entry.trigger)));
    }
    out
}

/// Entry `id` laid out for review (any status; `reason` says whether it is in the inbox).
/// `vector_fingerprint`: see [`similar::near_duplicates`].
pub fn proposal(
    conn: &Connection,
    id: &str,
    vector_fingerprint: Option<&str>,
    now_secs: i64,
) -> Result<Proposal> {
    let db = crate::store::err_in(conn);
    let entry = super::store::get(conn, id).map_err(db)?.ok_or_else(|| {
        Error::NotFound(format!(
            "recall entry {:?}; list the inbox with `cairn recall review`",
            crate::text::one_line(id, 80)
        ))
    })?;
    let reason = super::review::reason_of(&entry);
    let proposed_by = super::agents::proposed_by(conn, id)?;
    let (duplicates, with_vectors) =
        similar::near_duplicates(conn, id, vector_fingerprint, now_secs)?;
    Ok(Proposal {
        why: why(conn, &entry, reason, proposed_by.as_ref()),
        evidence: quoted_evidence(conn, id)?,
        duplicates,
        duplicate_basis: similar::basis(with_vectors),
        reason,
        proposed_by,
        entry,
    })
}

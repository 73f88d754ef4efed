//! `show`: one session's turn timeline, or one turn's records, with bounded windows (the last
//! `limit` items, `has_more_before` when older ones exist).

use rusqlite::Connection;
use serde::{Deserialize, Serialize};

use super::sessions::count;
use crate::archive::Agent;
use crate::archive::store as archive;
pub use crate::archive::store::{RecordView, TimelineTurn};
use crate::git::associate::Evidence;
pub use crate::git::correct::LinkCorrection;
use crate::git::correct::corrections_of;
use crate::git::store as git;
use crate::git::targets::TargetKind;

/// Default window: 20 turns or 20 records (agentlog's limits).
pub const DEFAULT_LIMIT: u32 = 20;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct Coverage {
    pub showing: u32,
    pub total: u32,
    pub has_more_before: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct TurnCoverage {
    pub showing_turns: u32,
    pub total_turns: u32,
    pub has_more_before: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct RecordCoverage {
    pub showing_records: u32,
    pub total_records: u32,
    pub has_more_before: bool,
}

/// A session's turns.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct SessionTimeline {
    pub session_key: String,
    pub status: String,
    pub agent: Agent,
    /// The agent that ran a session of agent `atif` (a trajectory imported or pulled), as the
    /// trajectory names it.
    #[serde(default)]
    pub ran_by: Option<String>,
    pub title: Option<String>,
    pub started_at: Option<String>,
    pub coverage: TurnCoverage,
    pub turns: Vec<TimelineTurn>,
    /// What the session is related to, a person's links first, then the most confident.
    #[serde(default)]
    pub links: Vec<SessionLink>,
    /// A person's corrections of the session's links (who, when, why), unlinks included.
    #[serde(default)]
    pub corrections: Vec<LinkCorrection>,
    /// A teammate's session pulled here (`publish --full`, then `pull`): who published it
    /// (their claim), when, and the remote. Its text is theirs: cleaned, not verified.
    #[serde(default)]
    pub published_by: Option<archive::PublishedBy>,
}

/// One link of a session to a branch, review or change.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct SessionLink {
    pub target_kind: TargetKind,
    pub target_key: String,
    pub evidence: Evidence,
    pub strong: bool,
    pub confidence: f64,
    pub commit: Option<String>,
    /// One line a person reads ("edited login.js, committed in 1a2b3c4"; for a person's link,
    /// who made it, when and why).
    pub reason: String,
}

/// One turn's records.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct TurnRecords {
    pub session_key: String,
    pub status: String,
    pub turn_key: String,
    pub turn_index: u32,
    pub coverage: RecordCoverage,
    pub records: Vec<RecordView>,
}

/// The last `limit` turns of a session.
pub fn timeline(conn: &Connection, session: i64, limit: u32) -> rusqlite::Result<SessionTimeline> {
    let h = archive::session_head(conn, session)?;
    let total = archive::turn_total(conn, h.id)?;
    let start = (total - i64::from(limit)).max(0);
    let mut turns = Vec::new();
    for (id, mut turn) in archive::timeline_turns(conn, h.id, start)? {
        turn.related_targets = git::strong_turn_targets(conn, id)?
            .and_then(|t| serde_json::from_str(&t).ok())
            .unwrap_or_default();
        turns.push(turn);
    }
    let published_by = archive::published_by_of(conn, session)?;
    Ok(SessionTimeline {
        session_key: h.key,
        status: if published_by.is_some() {
            "published"
        } else {
            "local-only"
        }
        .to_owned(),
        published_by,
        agent: h.agent,
        ran_by: h.ran_by,
        title: h.title,
        started_at: h.started_at,
        coverage: TurnCoverage {
            showing_turns: turns.len() as u32,
            total_turns: count(total),
            has_more_before: start > 0,
        },
        turns,
        links: session_links(conn, session)?,
        corrections: corrections_of(conn, session)?,
    })
}

fn session_links(conn: &Connection, session: i64) -> rusqlite::Result<Vec<SessionLink>> {
    Ok(git::session_links(conn, session)?
        .into_iter()
        .filter_map(|l| {
            Some(SessionLink {
                target_kind: TargetKind::parse(&l.target_kind)?,
                evidence: Evidence::parse(&l.evidence)?,
                target_key: l.target_key,
                strong: l.strong,
                confidence: l.confidence,
                commit: l.commit_id,
                reason: l.detail,
            })
        })
        .collect())
}

/// Find a turn of a session by key or index: its row id, key and index.
pub fn resolve_turn(
    conn: &Connection,
    session: i64,
    turn: &str,
) -> rusqlite::Result<Option<(i64, String, i64)>> {
    archive::find_turn(conn, session, turn)
}

/// The last `limit` records of a turn.
pub fn turn_records(
    conn: &Connection,
    session: i64,
    turn_id: i64,
    limit: u32,
) -> rusqlite::Result<TurnRecords> {
    let h = archive::session_head(conn, session)?;
    let (turn_key, turn_index) = archive::turn_key_index(conn, turn_id)?;
    let total = archive::turn_record_total(conn, turn_id)?;
    let start = (total - i64::from(limit)).max(0);
    let records = archive::records_of_turn(conn, turn_id, start, i64::from(limit))?;
    Ok(TurnRecords {
        session_key: h.key,
        status: "local-only".to_owned(),
        turn_key,
        turn_index: count(turn_index),
        coverage: RecordCoverage {
            showing_records: records.len() as u32,
            total_records: count(total),
            has_more_before: start > 0,
        },
        records,
    })
}

/// Records of a session by ordinal range (the desktop's record anchors, evidence links).
pub fn records_range(
    conn: &Connection,
    session: i64,
    from: u32,
    to: u32,
) -> rusqlite::Result<Vec<RecordView>> {
    archive::records_in_range(conn, session, from, to)
}

//! `show`: one session's turn timeline, or one turn's records, with bounded windows (the last
//! `limit` items, `has_more_before` when older ones exist), or the records a link cites in
//! their turn ([`cited_records`]: the window every door shows around them).

use rusqlite::Connection;
use serde::{Deserialize, Serialize};

use super::sessions::count;
use crate::archive::store as archive;
pub use crate::archive::store::{RecordView, TimelineTurn};
use crate::archive::{Agent, TokenUsage};
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
    /// The model the transcript names, as the session list gives it.
    #[serde(default)]
    pub model: Option<String>,
    /// The session's token totals, as its detail and export count them (every count 0: the
    /// agent recorded none).
    #[serde(default)]
    pub tokens: TokenUsage,
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

/// The last `limit` turns of a session that stand: a turn whose every record the agent
/// retracted (a rewound chat's dropped turns) is neither shown nor counted, so the total is the
/// one `sessions` gives. Export keeps those turns, marked.
pub fn timeline(conn: &Connection, session: i64, limit: u32) -> rusqlite::Result<SessionTimeline> {
    let h = archive::session_head(conn, session)?;
    let total = archive::turn_total(conn, h.id)?;
    let first = match limit {
        0 => None,
        n => archive::standing_turn_back(conn, h.id, i64::from(n) - 1)?,
    };
    let start = first.unwrap_or(0);
    let listed = if limit == 0 {
        Vec::new()
    } else {
        archive::timeline_turns(conn, h.id, start)?
    };
    let mut turns = Vec::new();
    for (id, mut turn) in listed.into_iter().filter(|(_, t)| t.record_count > 0) {
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
        model: h.model,
        tokens: archive::session_tokens(conn, h.id)?,
        coverage: TurnCoverage {
            showing_turns: turns.len() as u32,
            total_turns: count(total),
            has_more_before: total > i64::from(limit),
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

/// The first and last ordinal of a run of records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct OrdinalRange {
    pub first: u32,
    pub last: u32,
}

/// The records a `cairn://session/<key>?record=N[-M]` link cites, in the turn holding the first:
/// a window of that turn's records around them, what every door shows for such a link (the
/// CLI's `show`, the MCP server's `show` tool). Serialised as `show --json` prints it: the
/// turn's records as `--turn` gives them, with the cited ones and what lies past the window.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CitedRecords {
    /// The turn and the window's records (`coverage.has_more_before`: records of the turn
    /// before the window).
    #[serde(flatten)]
    pub turn: TurnRecords,
    /// The cited records this turn holds: the first cited, up to the last or the turn's end.
    pub cited_records: OrdinalRange,
    /// Records of the turn after the window.
    pub has_more_after: bool,
    /// The turn's own first and last ordinals.
    pub turn_ordinals: OrdinalRange,
    /// Cited records past this turn's end, left to the turns that hold them.
    pub cited_after_turn: Option<OrdinalRange>,
}

impl CitedRecords {
    /// How many records of the turn follow the window.
    pub fn records_after(&self) -> u32 {
        let end = self.turn.records.last().map_or(0, |r| r.ordinal);
        self.turn_ordinals.last.saturating_sub(end)
    }

    /// Whether record `ordinal` is one the link cites.
    pub fn cites(&self, ordinal: u32) -> bool {
        (self.cited_records.first..=self.cited_records.last).contains(&ordinal)
    }
}

/// The records `cited` (first and last ordinal) of a session, in the turn holding the first:
/// a window of at least `limit` of that turn's records ([`window`]). `None` when the session
/// has no record `cited.0` in a turn.
pub fn cited_records(
    conn: &Connection,
    session: i64,
    cited: (u32, u32),
    limit: u32,
) -> rusqlite::Result<Option<CitedRecords>> {
    let (from, to) = cited;
    let Some(index) = archive::turn_of_record(conn, session, from)? else {
        return Ok(None);
    };
    let Some((_, turn)) = archive::timeline_turns(conn, session, index)?
        .into_iter()
        .find(|(_, t)| i64::from(t.turn_index) == index)
    else {
        return Ok(None);
    };
    let span = (turn.first_ordinal, turn.last_ordinal);
    let (start, end) = window(span, (from, to), limit);
    let records = archive::records_in_range(conn, session, start, end)?;
    let h = archive::session_head(conn, session)?;
    Ok(Some(CitedRecords {
        turn: TurnRecords {
            session_key: h.key,
            // As `--turn` gives a turn (`turn_records`).
            status: "local-only".to_owned(),
            turn_key: turn.turn_key,
            turn_index: turn.turn_index,
            coverage: RecordCoverage {
                showing_records: records.len() as u32,
                total_records: turn.record_count,
                has_more_before: start > turn.first_ordinal,
            },
            records,
        },
        cited_records: OrdinalRange {
            first: from.max(turn.first_ordinal),
            last: to.min(turn.last_ordinal),
        },
        has_more_after: end < turn.last_ordinal,
        turn_ordinals: OrdinalRange {
            first: turn.first_ordinal,
            last: turn.last_ordinal,
        },
        cited_after_turn: (to > turn.last_ordinal).then_some(OrdinalRange {
            first: turn.last_ordinal + 1,
            last: to,
        }),
    }))
}

/// The ordinals to show of a turn spanning `turn` (first, last) for the records `cited`: at
/// least `limit` of them when the turn has as many, every cited one the turn holds, the rest
/// split before and after the cited ones (what led to them, what came of them).
fn window(turn: (u32, u32), cited: (u32, u32), limit: u32) -> (u32, u32) {
    let (first, last) = turn;
    let from = cited.0.clamp(first, last);
    let to = cited.1.clamp(from, last);
    let size = limit.max(to - from + 1);
    let spare = size - (to - from + 1);
    let mut start = from.saturating_sub(spare / 2).max(first);
    let end = start.saturating_add(size - 1).min(last).max(to);
    // A window cut short by the turn's end takes the rest before.
    start = end.saturating_sub(size - 1).max(first).min(start);
    (start, end)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_window_holds_the_cited_records_inside_their_turn() {
        // Centred when the turn allows.
        assert_eq!(window((0, 99), (50, 50), 5), (48, 52));
        // Near the turn's start or end: pushed inside it, still `limit` long.
        assert_eq!(window((10, 99), (11, 11), 5), (10, 14));
        assert_eq!(window((0, 99), (99, 99), 5), (95, 99));
        // A turn shorter than the limit: all of it.
        assert_eq!(window((3, 6), (4, 4), 20), (3, 6));
        // More cited than the limit: all the cited ones this turn holds.
        assert_eq!(window((0, 99), (10, 40), 5), (10, 40));
        assert_eq!(window((0, 20), (10, 40), 5), (10, 20));
        // A limit of 0 still shows the cited record.
        assert_eq!(window((0, 9), (4, 4), 0), (4, 4));
    }
}

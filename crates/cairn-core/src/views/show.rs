//! `show`: one session's turn timeline, or one turn's records, with bounded windows (the last
//! `limit` items, `has_more_before` when older ones exist).

use rusqlite::{Connection, OptionalExtension, params};
use serde::{Deserialize, Serialize};

use super::sessions::count;
use crate::archive::Agent;

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
    pub title: Option<String>,
    pub started_at: Option<String>,
    pub coverage: TurnCoverage,
    pub turns: Vec<TimelineTurn>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct TimelineTurn {
    pub turn_index: u32,
    pub turn_key: String,
    pub started_at: Option<String>,
    pub ended_at: Option<String>,
    pub record_count: u32,
    /// First and last record ordinals of the turn (the anchors of its records).
    pub first_ordinal: u32,
    pub last_ordinal: u32,
    pub user_preview: Option<String>,
    pub assistant_preview: Option<String>,
    pub tool_call_count: u32,
    pub edit_count: u32,
    pub exec_count: u32,
    pub failure_count: u32,
    pub tool_names: Vec<String>,
    /// Targets this turn is related to by strong evidence.
    pub related_targets: Vec<String>,
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

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct RecordView {
    /// The record's anchor in its session (`cairn://session/<key>?record=<ordinal>`).
    pub ordinal: u32,
    /// Position within the turn.
    pub turn_record_index: u32,
    pub timestamp: Option<String>,
    pub kind: String,
    pub source_event_kind: String,
    pub role: Option<String>,
    pub text: Option<String>,
    pub prompt_source: Option<String>,
    pub tool_name: Option<String>,
    pub tool_kind: Option<String>,
    /// The tool input as JSON text (redacted, long strings capped).
    pub tool_input: Option<String>,
    pub call_id: Option<String>,
    pub exit_code: Option<i32>,
    pub outcome: Option<String>,
    pub file_paths: Vec<String>,
    pub is_sidechain: bool,
    pub is_compaction: bool,
}

struct SessionHead {
    id: i64,
    key: String,
    agent: Agent,
    title: Option<String>,
    started_at: Option<String>,
}

fn head(conn: &Connection, id: i64) -> rusqlite::Result<SessionHead> {
    conn.prepare_cached("SELECT session_key, agent, title, started_at FROM sessions WHERE id = ?1")?
        .query_row([id], |r| {
            let agent: String = r.get(1)?;
            Ok(SessionHead {
                id,
                key: r.get(0)?,
                agent: Agent::parse(&agent).unwrap_or(Agent::Claude),
                title: r.get(2)?,
                started_at: r.get(3)?,
            })
        })
}

/// The last `limit` turns of a session.
pub fn timeline(conn: &Connection, session: i64, limit: u32) -> rusqlite::Result<SessionTimeline> {
    let h = head(conn, session)?;
    let total: i64 = conn
        .prepare_cached("SELECT COUNT(*) FROM turns WHERE session_id = ?1")?
        .query_row([h.id], |r| r.get(0))?;
    let start = (total - i64::from(limit)).max(0);
    let mut stmt = conn.prepare_cached(
        "SELECT t.turn_index, t.turn_key, t.started_at, t.ended_at, t.record_count, t.first_ordinal, t.last_ordinal,
                t.preview, t.assistant_preview, t.tool_call_count, t.edit_count, t.exec_count, t.failure_count,
                t.tool_names,
                (SELECT json_group_array(DISTINCT l.target_key) FROM links l WHERE l.turn_id = t.id AND l.strong = 1)
         FROM turns t WHERE t.session_id = ?1 AND t.turn_index >= ?2 ORDER BY t.turn_index",
    )?;
    let turns = stmt
        .query_map(params![h.id, start], |r| {
            let tools: String = r.get(13)?;
            let targets: Option<String> = r.get(14)?;
            Ok(TimelineTurn {
                turn_index: count(r.get(0)?),
                turn_key: r.get(1)?,
                started_at: r.get(2)?,
                ended_at: r.get(3)?,
                record_count: count(r.get(4)?),
                first_ordinal: count(r.get(5)?),
                last_ordinal: count(r.get(6)?),
                user_preview: r.get(7)?,
                assistant_preview: r.get(8)?,
                tool_call_count: count(r.get(9)?),
                edit_count: count(r.get(10)?),
                exec_count: count(r.get(11)?),
                failure_count: count(r.get(12)?),
                tool_names: serde_json::from_str(&tools).unwrap_or_default(),
                related_targets: targets
                    .and_then(|t| serde_json::from_str(&t).ok())
                    .unwrap_or_default(),
            })
        })?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(SessionTimeline {
        session_key: h.key,
        status: "local-only".to_owned(),
        agent: h.agent,
        title: h.title,
        started_at: h.started_at,
        coverage: TurnCoverage {
            showing_turns: turns.len() as u32,
            total_turns: count(total),
            has_more_before: start > 0,
        },
        turns,
    })
}

/// Find a turn of a session by key or index.
pub fn resolve_turn(
    conn: &Connection,
    session: i64,
    turn: &str,
) -> rusqlite::Result<Option<(i64, String, i64)>> {
    let by_key = conn
        .prepare_cached(
            "SELECT id, turn_key, turn_index FROM turns WHERE session_id = ?1 AND turn_key = ?2",
        )?
        .query_row(params![session, turn], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?))
        })
        .optional()?;
    if by_key.is_some() {
        return Ok(by_key);
    }
    let Ok(index) = turn.trim_start_matches('#').parse::<i64>() else {
        return Ok(None);
    };
    conn.prepare_cached(
        "SELECT id, turn_key, turn_index FROM turns WHERE session_id = ?1 AND turn_index = ?2",
    )?
    .query_row(params![session, index], |r| {
        Ok((r.get(0)?, r.get(1)?, r.get(2)?))
    })
    .optional()
}

/// The last `limit` records of a turn.
pub fn turn_records(
    conn: &Connection,
    session: i64,
    turn_id: i64,
    limit: u32,
) -> rusqlite::Result<TurnRecords> {
    let h = head(conn, session)?;
    let (turn_key, turn_index): (String, i64) = conn
        .prepare_cached("SELECT turn_key, turn_index FROM turns WHERE id = ?1")?
        .query_row([turn_id], |r| Ok((r.get(0)?, r.get(1)?)))?;
    let total: i64 = conn
        .prepare_cached("SELECT COUNT(*) FROM records WHERE turn_id = ?1")?
        .query_row([turn_id], |r| r.get(0))?;
    let start = (total - i64::from(limit)).max(0);
    let records = records_where(
        conn,
        "r.turn_id = ?1",
        params![turn_id],
        start,
        i64::from(limit),
    )?;
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
    records_where(
        conn,
        "r.session_id = ?1 AND r.ordinal BETWEEN ?2 AND ?3",
        params![session, from, to],
        0,
        i64::MAX,
    )
}

fn records_where(
    conn: &Connection,
    filter: &str,
    args: impl rusqlite::Params,
    offset: i64,
    limit: i64,
) -> rusqlite::Result<Vec<RecordView>> {
    let sql = format!(
        "SELECT r.ordinal, r.ordinal - COALESCE(t.first_ordinal, 0), r.timestamp, r.kind, r.source_event_kind, r.role,
                r.text, r.prompt_source, r.tool_name, r.tool_kind, r.tool_input, r.call_id, r.exit_code, r.outcome,
                r.file_paths, r.is_sidechain, r.is_compaction
         FROM records r LEFT JOIN turns t ON t.id = r.turn_id
         WHERE {filter} ORDER BY r.ordinal LIMIT {limit} OFFSET {offset}"
    );
    let mut stmt = conn.prepare_cached(&sql)?;
    let rows = stmt.query_map(args, |r| {
        let paths: Option<String> = r.get(14)?;
        Ok(RecordView {
            ordinal: count(r.get(0)?),
            turn_record_index: count(r.get(1)?),
            timestamp: r.get(2)?,
            kind: r.get(3)?,
            source_event_kind: r.get(4)?,
            role: r.get(5)?,
            text: r.get(6)?,
            prompt_source: r.get(7)?,
            tool_name: r.get(8)?,
            tool_kind: r.get(9)?,
            tool_input: r.get(10)?,
            call_id: r.get(11)?,
            exit_code: r.get(12)?,
            outcome: r.get(13)?,
            file_paths: paths
                .and_then(|p| serde_json::from_str(&p).ok())
                .unwrap_or_default(),
            is_sidechain: r.get(15)?,
            is_compaction: r.get(16)?,
        })
    })?;
    rows.collect()
}

//! Turns: a session's turns in order, found by key or index, outlined for reports.

use rusqlite::{Connection, OptionalExtension, params};

use super::count;
use serde::{Deserialize, Serialize};

/// A turn as a report outlines it.
#[derive(Debug, Clone)]
pub struct TurnOutline {
    pub id: i64,
    pub turn_index: i64,
    pub opening_ordinal: i64,
    /// The tool names, as a JSON array.
    pub tool_names: String,
    pub tool_calls: i64,
    pub failures: i64,
    pub edits: i64,
    /// The text of the user message opening the turn, if it opens with one.
    pub prompt: Option<String>,
    pub preview: Option<String>,
}

/// The turns of `session`, in order.
pub fn turn_outlines(conn: &Connection, session: i64) -> rusqlite::Result<Vec<TurnOutline>> {
    let mut stmt = conn.prepare_cached(
        "SELECT t.id, t.turn_index, t.opening_ordinal, t.tool_names, t.tool_call_count, t.failure_count, t.edit_count,
            (SELECT text FROM records r WHERE r.session_id = t.session_id AND r.ordinal = t.opening_ordinal
               AND r.kind = 'message' AND r.role = 'user'),
            t.preview
         FROM turns t WHERE t.session_id = ?1 ORDER BY t.turn_index",
    )?;
    stmt.query_map(params![session], |r| {
        Ok(TurnOutline {
            id: r.get(0)?,
            turn_index: r.get(1)?,
            opening_ordinal: r.get(2)?,
            tool_names: r.get(3)?,
            tool_calls: r.get(4)?,
            failures: r.get(5)?,
            edits: r.get(6)?,
            prompt: r.get(7)?,
            preview: r.get(8)?,
        })
    })?
    .collect()
}

/// The last non-blank assistant message of the turn with row id `turn`.
pub fn last_answer(conn: &Connection, turn: i64) -> rusqlite::Result<Option<String>> {
    conn.prepare_cached(
        "SELECT text FROM records WHERE turn_id = ?1 AND kind = 'message' AND role = 'assistant'
            AND text IS NOT NULL AND trim(text) != '' ORDER BY ordinal DESC LIMIT 1",
    )?
    .query_row(params![turn], |r| r.get::<_, String>(0))
    .optional()
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
/// A turn of a session's timeline (`show`).
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

/// How many turns of `session` stand: those holding a record the agent did not retract (a
/// rewound chat's dropped turns hold none), as `sessions.turn_count` counts them.
pub fn turn_total(conn: &Connection, session: i64) -> rusqlite::Result<i64> {
    conn.prepare_cached("SELECT COUNT(*) FROM turns WHERE session_id = ?1 AND record_count > 0")?
        .query_row([session], |r| r.get(0))
}

/// The index of the standing turn `back` places before the last standing one of `session`
/// (0: the last), where a window of the last `back + 1` standing turns starts.
pub fn standing_turn_back(
    conn: &Connection,
    session: i64,
    back: i64,
) -> rusqlite::Result<Option<i64>> {
    conn.prepare_cached(
        "SELECT turn_index FROM turns WHERE session_id = ?1 AND record_count > 0
         ORDER BY turn_index DESC LIMIT 1 OFFSET ?2",
    )?
    .query_row(params![session, back], |r| r.get(0))
    .optional()
}

/// The turns of `session` from index `start` on, in order, each with its row id (its related
/// targets left empty: the git room's).
pub fn timeline_turns(
    conn: &Connection,
    session: i64,
    start: i64,
) -> rusqlite::Result<Vec<(i64, TimelineTurn)>> {
    let mut stmt = conn.prepare_cached(
        "SELECT t.turn_index, t.turn_key, t.started_at, t.ended_at, t.record_count, t.first_ordinal, t.last_ordinal,
                t.preview, t.assistant_preview, t.tool_call_count, t.edit_count, t.exec_count, t.failure_count,
                t.tool_names, t.id
         FROM turns t WHERE t.session_id = ?1 AND t.turn_index >= ?2 ORDER BY t.turn_index",
    )?;
    stmt.query_map(params![session, start], |r| {
        let tools: String = r.get(13)?;
        Ok((
            r.get(14)?,
            TimelineTurn {
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
                related_targets: Vec::new(),
            },
        ))
    })?
    .collect()
}

/// Find a turn of a session by key or index: its row id, key and index.
pub fn find_turn(
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

/// The key and index of the turn with row id `turn`.
pub fn turn_key_index(conn: &Connection, turn: i64) -> rusqlite::Result<(String, i64)> {
    conn.prepare_cached("SELECT turn_key, turn_index FROM turns WHERE id = ?1")?
        .query_row([turn], |r| Ok((r.get(0)?, r.get(1)?)))
}

/// How many records the turn with row id `turn` has.
pub fn turn_record_total(conn: &Connection, turn: i64) -> rusqlite::Result<i64> {
    conn.prepare_cached("SELECT COUNT(*) FROM records WHERE turn_id = ?1")?
        .query_row([turn], |r| r.get(0))
}

/// The row id of turn `index` of `session`, if it exists.
pub fn turn_at(conn: &Connection, session: i64, index: i64) -> rusqlite::Result<Option<i64>> {
    conn.prepare_cached("SELECT id FROM turns WHERE session_id = ?1 AND turn_index = ?2")?
        .query_row(params![session, index], |r| r.get(0))
        .optional()
}

/// The turns of `session` in order: their index and when each began, when known.
pub fn turn_starts(
    conn: &Connection,
    session: i64,
) -> rusqlite::Result<Vec<(i64, Option<String>)>> {
    conn.prepare_cached(
        "SELECT turn_index, started_at FROM turns WHERE session_id = ?1 ORDER BY turn_index",
    )?
    .query_map([session], |r| Ok((r.get(0)?, r.get(1)?)))?
    .collect()
}

/// A turn's text as the semantic leg embeds it: its prompt and answer previews, the files its
/// tool calls touched and the commands it ran (all redacted at capture).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct TurnText {
    pub id: i64,
    pub last_ordinal: i64,
    pub preview: Option<String>,
    pub answer_preview: Option<String>,
    /// Paths the turn's records name (`file_paths`), first mention first, each once.
    pub files: Vec<String>,
    /// The command of each exec call, in order (`command` or `cmd` of its input: a string, or
    /// an argv array as JSON text).
    pub commands: Vec<String>,
}

/// At most this many files and commands are read per turn (a digest names fewer).
const FACTS_PER_TURN: usize = 32;

fn turn_text_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<TurnText> {
    Ok(TurnText {
        id: r.get(0)?,
        last_ordinal: r.get(1)?,
        preview: r.get(2)?,
        answer_preview: r.get(3)?,
        ..TurnText::default()
    })
}

/// Every path a record of `turn` names and the command of every exec call it made, in record
/// order. Inputs that are not JSON are skipped.
fn turn_facts(conn: &Connection, turn: i64) -> rusqlite::Result<(Vec<String>, Vec<String>)> {
    let mut files: Vec<String> = Vec::new();
    let mut st = conn.prepare_cached(
        "SELECT j.value FROM records r, json_each(r.file_paths) j
         WHERE r.turn_id = ?1 AND r.file_paths IS NOT NULL AND json_valid(r.file_paths)
           AND j.type = 'text'
         ORDER BY r.ordinal, j.key",
    )?;
    let mut rows = st.query([turn])?;
    while let Some(r) = rows.next()? {
        let path: String = r.get(0)?;
        if files.len() >= FACTS_PER_TURN {
            break;
        }
        if !files.contains(&path) {
            files.push(path);
        }
    }
    let mut commands = Vec::new();
    let mut st = conn.prepare_cached(
        "SELECT COALESCE(json_extract(r.tool_input, '$.command'),
                         json_extract(r.tool_input, '$.cmd'))
         FROM records r
         WHERE r.turn_id = ?1 AND r.kind = 'tool_call' AND r.tool_kind = 'exec'
           AND json_valid(r.tool_input) AND json_type(r.tool_input) = 'object'
         ORDER BY r.ordinal",
    )?;
    let mut rows = st.query([turn])?;
    while let Some(r) = rows.next()? {
        if commands.len() >= FACTS_PER_TURN {
            break;
        }
        if let Some(rusqlite::types::Value::Text(c)) = r.get(0)? {
            commands.push(c);
        }
    }
    Ok((files, commands))
}

/// The [`TurnText`] of the turn with row id `turn`, if it exists.
pub fn turn_text(conn: &Connection, turn: i64) -> rusqlite::Result<Option<TurnText>> {
    let Some(mut text) = conn
        .prepare_cached(
            "SELECT id, last_ordinal, preview, assistant_preview FROM turns WHERE id = ?1",
        )?
        .query_row([turn], turn_text_row)
        .optional()?
    else {
        return Ok(None);
    };
    (text.files, text.commands) = turn_facts(conn, turn)?;
    Ok(Some(text))
}

/// The last ordinal of the turn with row id `turn` (how far it reaches), if it exists.
pub fn turn_extent(conn: &Connection, turn: i64) -> rusqlite::Result<Option<i64>> {
    conn.prepare_cached("SELECT last_ordinal FROM turns WHERE id = ?1")?
        .query_row([turn], |r| r.get(0))
        .optional()
}

/// Every turn's row id and last ordinal (how far it reaches), by turn id.
pub fn turn_extents(conn: &Connection) -> rusqlite::Result<Vec<(i64, i64)>> {
    conn.prepare_cached("SELECT id, last_ordinal FROM turns ORDER BY id")?
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect()
}

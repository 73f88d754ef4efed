//! Records: a session's records by ordinal, range, turn or stable id, as views, evidence and
//! git's scans read them.

use rusqlite::{Connection, OptionalExtension, params};

use super::count;
use serde::{Deserialize, Serialize};

/// A stored record, as a session's records are read by the rooms above (extraction segments
/// them): the columns they need, enumerations as stored.
#[derive(Debug, Clone)]
pub struct RecordRow {
    pub ordinal: u32,
    pub kind: String,
    pub role: Option<String>,
    pub prompt_source: Option<String>,
    pub is_sidechain: bool,
    pub is_compaction: bool,
    pub text: Option<String>,
    pub tool_name: Option<String>,
    pub tool_input: Option<String>,
    pub outcome: Option<String>,
}

/// The standing records of `session`, in order: what its agent still holds, as `show` and
/// the session counts read it. A record the agent took back (`retracted_at`: a rewind, a
/// document written again without it) is left out, its ordinal a gap.
pub fn records_of_session(conn: &Connection, session: i64) -> rusqlite::Result<Vec<RecordRow>> {
    let mut stmt = conn.prepare_cached(
        "SELECT ordinal, kind, role, prompt_source, is_sidechain, is_compaction, text, tool_name, tool_input, outcome
         FROM records WHERE session_id = ?1 AND retracted_at IS NULL ORDER BY ordinal",
    )?;
    let rows = stmt.query_map([session], |r| {
        Ok(RecordRow {
            ordinal: r.get(0)?,
            kind: r.get(1)?,
            role: r.get(2)?,
            prompt_source: r.get(3)?,
            is_sidechain: r.get(4)?,
            is_compaction: r.get(5)?,
            text: r.get(6)?,
            tool_name: r.get(7)?,
            tool_input: r.get(8)?,
            outcome: r.get(9)?,
        })
    })?;
    rows.collect()
}

/// A stored record in the shape git's evidence scan reads it (`git::evidence`): edits need
/// only their paths, an exec call its input, an event its text.
#[derive(Debug, Clone, Default)]
pub struct EvidenceRecord {
    pub ordinal: i64,
    pub turn_index: i64,
    pub kind: String,
    pub tool_name: Option<String>,
    pub tool_kind: Option<String>,
    pub call_id: Option<String>,
    pub text: Option<String>,
    pub tool_input: Option<String>,
    pub file_paths: Vec<String>,
    pub git_branch: Option<String>,
    pub cwd: Option<String>,
    pub timestamp: Option<String>,
    pub source_event_kind: String,
}

fn evidence_record(r: &rusqlite::Row<'_>) -> rusqlite::Result<EvidenceRecord> {
    let paths: Option<String> = r.get(8)?;
    Ok(EvidenceRecord {
        ordinal: r.get(0)?,
        turn_index: r.get(1)?,
        kind: r.get(2)?,
        tool_name: r.get(3)?,
        tool_kind: r.get(4)?,
        call_id: r.get(5)?,
        text: r.get(6)?,
        tool_input: r.get(7)?,
        file_paths: paths
            .and_then(|p| serde_json::from_str(&p).ok())
            .unwrap_or_default(),
        git_branch: None,
        cwd: r.get(9)?,
        timestamp: r.get(10)?,
        source_event_kind: r.get(11)?,
    })
}

/// The last ordinal stored for `session`.
pub fn last_ordinal(conn: &Connection, session: i64) -> rusqlite::Result<i64> {
    conn.prepare_cached("SELECT next_ordinal - 1 FROM sessions WHERE id = ?1")?
        .query_row([session], |r| r.get(0))
}

/// The records of `session` in `(after, last]` evidence can come from: exec and edit calls and
/// PR links. The WHERE clause repeats the `records_evidence` partial index's, so SQLite uses it.
/// An edit's input is read (what it wrote is matched against commits, `git::written`); its text
/// is not.
pub fn evidence_candidates(
    conn: &Connection,
    session: i64,
    after: i64,
    last: i64,
) -> rusqlite::Result<Vec<EvidenceRecord>> {
    conn.prepare_cached(
        "SELECT r.ordinal, COALESCE(t.turn_index, 0), r.kind, r.tool_name, r.tool_kind, r.call_id,
                CASE WHEN r.kind = 'event' THEN r.text END,
                CASE WHEN r.tool_kind IN ('exec', 'file_edit') THEN r.tool_input END,
                r.file_paths, r.cwd, r.timestamp, r.source_event_kind
         FROM records r LEFT JOIN turns t ON t.id = r.turn_id
         WHERE r.session_id = ?1 AND r.ordinal > ?2 AND r.ordinal <= ?3
           AND ((r.kind = 'tool_call' AND r.tool_kind IN ('exec', 'file_edit'))
             OR (r.kind = 'event' AND r.source_event_kind = 'claude:pr-link'))",
    )?
    .query_map(params![session, after, last], evidence_record)?
    .collect()
}

/// The results of the call of id `call_id` at `ordinal` of `session` stored in `(after, last]`:
/// a result belongs to the call of its id stored last before it, or to the first of them when
/// it comes before them all (ids can repeat in a session: an agent numbering its calls per
/// message or per run). So the results of this call lie before the next call of its id and,
/// when an earlier call has its id, after this one. `ordinal` may be `after` for a call read
/// before `after`: its results are then those before the next call of its id. Ranges of the
/// `records_call` index (migration 36), named: the planner would take the session's ordinal
/// range instead, a scan of the session for each call.
pub fn tool_results(
    conn: &Connection,
    session: i64,
    call_id: &str,
    ordinal: i64,
    after: i64,
    last: i64,
) -> rusqlite::Result<Vec<EvidenceRecord>> {
    conn.prepare_cached(
        "SELECT r.ordinal, COALESCE(t.turn_index, 0), r.kind, r.tool_name, r.tool_kind, r.call_id, r.text,
                r.tool_input, r.file_paths, r.cwd, r.timestamp, r.source_event_kind
         FROM records r INDEXED BY records_call LEFT JOIN turns t ON t.id = r.turn_id
         WHERE r.session_id = ?1 AND r.call_id = ?2 AND r.kind = 'tool_result'
           AND r.ordinal > ?4 AND r.ordinal <= ?5
           AND r.ordinal > (CASE WHEN EXISTS (
                 SELECT 1 FROM records c WHERE c.session_id = ?1 AND c.call_id = ?2
                   AND c.kind = 'tool_call' AND c.ordinal < ?3) THEN ?3 ELSE ?4 END)
           AND r.ordinal < COALESCE((
                 SELECT MIN(c.ordinal) FROM records c WHERE c.session_id = ?1 AND c.call_id = ?2
                   AND c.kind = 'tool_call' AND c.ordinal > ?3), ?5 + 1)
         ORDER BY r.ordinal",
    )?
    .query_map(params![session, call_id, ordinal, after, last], evidence_record)?
    .collect()
}

/// The first record of each branch `session` recorded in `(after, last]` (`session_branches`),
/// as `branch` records whose turn is the turn of that record.
pub fn branch_firsts(
    conn: &Connection,
    session: i64,
    after: i64,
    last: i64,
) -> rusqlite::Result<Vec<EvidenceRecord>> {
    conn.prepare_cached(
        "SELECT b.first_ordinal, b.git_branch,
                (SELECT COALESCE(t.turn_index, 0) FROM records x LEFT JOIN turns t ON t.id = x.turn_id
                 WHERE x.session_id = b.session_id AND x.ordinal = b.first_ordinal)
         FROM session_branches b WHERE b.session_id = ?1 AND b.first_ordinal > ?2 AND b.first_ordinal <= ?3",
    )?
    .query_map(params![session, after, last], |r| {
        Ok(EvidenceRecord {
            ordinal: r.get(0)?,
            turn_index: r.get::<_, Option<i64>>(2)?.unwrap_or(0),
            kind: "branch".to_owned(),
            git_branch: r.get(1)?,
            ..EvidenceRecord::default()
        })
    })?
    .collect()
}

/// The index of the turn holding record `ordinal` of session row `session`.
pub(crate) fn turn_of_record(
    conn: &Connection,
    session: i64,
    ordinal: u32,
) -> rusqlite::Result<Option<i64>> {
    conn.query_row(
        "SELECT t.turn_index FROM records r JOIN turns t ON t.id = r.turn_id WHERE r.session_id = ?1 AND r.ordinal = ?2",
        rusqlite::params![session, ordinal],
        |r| r.get(0),
    )
    .optional()
}

/// A failed tool result, with the call it answered.
#[derive(Debug, Clone)]
pub struct FailedResult {
    pub ordinal: i64,
    /// The result's tool name, else its call's.
    pub tool_name: Option<String>,
    pub tool_input: Option<String>,
    pub text: Option<String>,
    pub exit_code: Option<i64>,
}

/// The failed tool results of `session`, in order, each with its call (the call of its id
/// stored last before it, as [`tool_results`] pairs them).
pub fn failed_results(conn: &Connection, session: i64) -> rusqlite::Result<Vec<FailedResult>> {
    let mut stmt = conn.prepare_cached(
        "SELECT r.ordinal, COALESCE(r.tool_name, c.tool_name), c.tool_input, r.text, r.exit_code
         FROM records r
         LEFT JOIN records c ON c.session_id = r.session_id AND c.call_id = r.call_id AND c.kind = 'tool_call'
           AND c.ordinal = COALESCE(
             (SELECT MAX(p.ordinal) FROM records p WHERE p.session_id = r.session_id
                AND p.call_id = r.call_id AND p.kind = 'tool_call' AND p.ordinal < r.ordinal),
             (SELECT MIN(p.ordinal) FROM records p WHERE p.session_id = r.session_id
                AND p.call_id = r.call_id AND p.kind = 'tool_call' AND p.ordinal > r.ordinal))
         WHERE r.session_id = ?1 AND r.kind = 'tool_result' AND r.outcome = 'failed'
         ORDER BY r.ordinal",
    )?;
    stmt.query_map(params![session], |r| {
        Ok(FailedResult {
            ordinal: r.get(0)?,
            tool_name: r.get(1)?,
            tool_input: r.get(2)?,
            text: r.get(3)?,
            exit_code: r.get(4)?,
        })
    })?
    .collect()
}

/// A record of an evidence range: its stable id (`<record_hash>#<block>`) and the content an
/// evidence digest covers.
#[derive(Debug, Clone)]
pub struct RangeRecord {
    pub ordinal: u32,
    pub id: String,
    pub kind: String,
    pub role: Option<String>,
    pub text: Option<String>,
    pub tool_name: Option<String>,
    pub tool_input: Option<String>,
    pub call_id: Option<String>,
    pub file_paths: Vec<String>,
    pub timestamp: Option<String>,
}

/// The records of `session` with ordinals in `start..=end`, in order.
pub fn record_range(
    conn: &Connection,
    session: i64,
    start: u32,
    end: u32,
) -> rusqlite::Result<Vec<RangeRecord>> {
    let mut stmt = conn.prepare_cached(
        "SELECT ordinal, record_hash || '#' || block, kind, role, text, tool_name, tool_input, call_id, file_paths, timestamp
         FROM records WHERE session_id = ?1 AND ordinal BETWEEN ?2 AND ?3 ORDER BY ordinal",
    )?;
    let rows = stmt.query_map(params![session, start, end], |r| {
        let paths: Option<String> = r.get(8)?;
        Ok(RangeRecord {
            ordinal: r.get(0)?,
            id: r.get(1)?,
            kind: r.get(2)?,
            role: r.get(3)?,
            text: r.get(4)?,
            tool_name: r.get(5)?,
            tool_input: r.get(6)?,
            call_id: r.get(7)?,
            file_paths: paths
                .and_then(|p| serde_json::from_str(&p).ok())
                .unwrap_or_default(),
            timestamp: r.get(9)?,
        })
    })?;
    rows.collect()
}

/// The ordinal of the record of `session` whose stable id is `id` (`<record_hash>#<block>`).
pub fn record_ordinal(conn: &Connection, session: i64, id: &str) -> rusqlite::Result<Option<u32>> {
    // Looked up through the (session, hash, block) key, not by scanning the session (this runs
    // on every hook of a session Recall cites).
    match id
        .rsplit_once('#')
        .and_then(|(hash, block)| Some((hash, block.parse::<i64>().ok()?)))
    {
        Some((hash, block)) => conn
            .prepare_cached(
                "SELECT ordinal FROM records WHERE session_id = ?1 AND record_hash = ?2 AND block = ?3",
            )?
            .query_row(params![session, hash, block], |r| r.get(0))
            .optional(),
        None => conn
            .prepare_cached(
                "SELECT ordinal FROM records WHERE session_id = ?1 AND record_hash || '#' || block = ?2",
            )?
            .query_row(params![session, id], |r| r.get(0))
            .optional(),
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
/// A record as the `show` views and record anchors show it.
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
    /// When the agent took the record back (a rewind, a rewritten document): kept, shown
    /// marked, never silently part of the conversation. Absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retracted_at: Option<String>,
}

/// The records of the turn with row id `turn`, `limit` of them from the `offset`th.
pub fn records_of_turn(
    conn: &Connection,
    turn: i64,
    offset: i64,
    limit: i64,
) -> rusqlite::Result<Vec<RecordView>> {
    records_where(conn, "r.turn_id = ?1", params![turn], offset, limit)
}

/// Records of a session by ordinal range (the desktop's record anchors, evidence links).
pub fn records_in_range(
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
                r.file_paths, r.is_sidechain, r.is_compaction, r.retracted_at
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
            retracted_at: r.get(17)?,
        })
    })?;
    rows.collect()
}

/// The first record of a turn of session row `session`, the turn named by its key or by
/// `#index` / `index`.
pub fn first_ordinal_of_turn(
    conn: &Connection,
    session: i64,
    turn: &str,
) -> rusqlite::Result<Option<u32>> {
    let by_key: Option<i64> = conn
        .prepare_cached("SELECT id FROM turns WHERE session_id = ?1 AND turn_key = ?2")?
        .query_row(params![session, turn], |r| r.get(0))
        .optional()?;
    let turn_id = match by_key {
        Some(id) => Some(id),
        None => match turn.trim_start_matches('#').parse::<i64>() {
            Ok(index) => conn
                .prepare_cached("SELECT id FROM turns WHERE session_id = ?1 AND turn_index = ?2")?
                .query_row(params![session, index], |r| r.get(0))
                .optional()?,
            Err(_) => None,
        },
    };
    let Some(turn_id) = turn_id else {
        return Ok(None);
    };
    conn.prepare_cached("SELECT MIN(ordinal) FROM records WHERE turn_id = ?1")?
        .query_row([turn_id], |r| r.get(0))
}

/// A file edit a session made, as `why` matches text against it.
#[derive(Debug, Clone)]
pub struct EditRecord {
    pub session_id: i64,
    pub ordinal: u32,
    pub turn_key: Option<String>,
    pub turn_index: Option<u32>,
    pub timestamp: Option<String>,
    pub cwd: Option<String>,
    /// The record as `show` reads it (its tool input, file paths, kind).
    pub record: RecordView,
}

/// Every file edit of the sessions `ids` whose call did not fail (no failed result of its own,
/// as [`tool_results`] pairs them), in session and record order.
pub fn edit_records(conn: &Connection, ids: &[i64]) -> rusqlite::Result<Vec<EditRecord>> {
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    let ids = serde_json::Value::from(ids).to_string();
    let mut stmt = conn.prepare_cached(
        "SELECT r.session_id, r.ordinal, t.turn_key, t.turn_index, r.timestamp, r.cwd, r.kind,
                r.source_event_kind, r.role, r.tool_name, r.tool_kind, r.tool_input, r.call_id,
                r.exit_code, r.outcome, r.file_paths, r.is_sidechain
         FROM records r LEFT JOIN turns t ON t.id = r.turn_id
         WHERE r.session_id IN (SELECT value FROM json_each(?1))
           AND r.kind = 'tool_call' AND r.tool_kind = 'file_edit' AND r.retracted_at IS NULL
           AND NOT EXISTS (
             SELECT 1 FROM records x WHERE x.session_id = r.session_id AND x.call_id = r.call_id
               AND x.kind = 'tool_result' AND x.outcome = 'failed'
               AND x.ordinal > (CASE WHEN EXISTS (
                     SELECT 1 FROM records p WHERE p.session_id = r.session_id
                       AND p.call_id = r.call_id AND p.kind = 'tool_call' AND p.ordinal < r.ordinal)
                   THEN r.ordinal ELSE -1 END)
               AND x.ordinal < COALESCE((
                     SELECT MIN(p.ordinal) FROM records p WHERE p.session_id = r.session_id
                       AND p.call_id = r.call_id AND p.kind = 'tool_call' AND p.ordinal > r.ordinal),
                   9223372036854775807))
         ORDER BY r.session_id, r.ordinal",
    )?;
    stmt.query_map([ids], |r| {
        let paths: Option<String> = r.get(15)?;
        Ok(EditRecord {
            session_id: r.get(0)?,
            ordinal: count(r.get(1)?),
            turn_key: r.get(2)?,
            turn_index: r.get::<_, Option<i64>>(3)?.map(count),
            timestamp: r.get(4)?,
            cwd: r.get(5)?,
            record: RecordView {
                ordinal: count(r.get(1)?),
                turn_record_index: 0,
                timestamp: r.get(4)?,
                kind: r.get(6)?,
                source_event_kind: r.get(7)?,
                role: r.get(8)?,
                text: None,
                prompt_source: None,
                tool_name: r.get(9)?,
                tool_kind: r.get(10)?,
                tool_input: r.get(11)?,
                call_id: r.get(12)?,
                exit_code: r.get(13)?,
                outcome: r.get(14)?,
                file_paths: paths
                    .and_then(|p| serde_json::from_str(&p).ok())
                    .unwrap_or_default(),
                is_sidechain: r.get(16)?,
                is_compaction: false,
                retracted_at: None,
            },
        })
    })?
    .collect()
}

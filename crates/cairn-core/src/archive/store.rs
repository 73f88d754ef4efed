//! The archive's own tables (`sources`, `sessions`, `records`, `turns`, captures, findings,
//! warnings; created by `archive/migrations/`): what the rest of the archive reads and writes
//! through the store floor's connection ([`crate::store`]).

use std::collections::BTreeMap;

use rusqlite::{Connection, OptionalExtension, params, params_from_iter, types::Value as SqlValue};
use serde::{Deserialize, Serialize};

use crate::archive::capture::Warning;
use crate::archive::{Agent, TokenUsage};
use crate::error::Result;
pub use crate::store::{DB_FILE, Store};

impl Store {
    /// The persisted reading position of one source file.
    pub fn source_state(&self, path: &str) -> Result<Option<SourceState>> {
        self.conn()
            .query_row(
                &format!("SELECT {SOURCE_COLUMNS} FROM sources WHERE path = ?1"),
                params![path],
                SourceState::from_row,
            )
            .optional()
            .map_err(|e| self.err(e))
    }

    /// Every source's reading position, keyed by path (a sync plans all files from one read).
    pub fn all_source_states(&self) -> Result<Vec<SourceState>> {
        let mut stmt = self
            .conn()
            .prepare(&format!("SELECT {SOURCE_COLUMNS} FROM sources"))
            .map_err(|e| self.err(e))?;
        let rows = stmt
            .query_map([], SourceState::from_row)
            .map_err(|e| self.err(e))?;
        rows.collect::<rusqlite::Result<Vec<_>>>()
            .map_err(|e| self.err(e))
    }

    /// Map none of the file (a writer reads only the pages its inserts walk, which its page
    /// cache holds), keeping the page cache as it is.
    pub(crate) fn unmapped(&self) -> Result<()> {
        self.conn()
            .execute_batch("PRAGMA mmap_size = 0;")
            .map_err(|e| self.err(e))
    }
}

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

/// The records of `session`, in order.
pub fn records_of_session(conn: &Connection, session: i64) -> rusqlite::Result<Vec<RecordRow>> {
    let mut stmt = conn.prepare_cached(
        "SELECT ordinal, kind, role, prompt_source, is_sidechain, is_compaction, text, tool_name, tool_input, outcome
         FROM records WHERE session_id = ?1 ORDER BY ordinal",
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

/// Whether this archive captured the session keyed `session_key`.
pub fn captured(conn: &Connection, session_key: &str) -> rusqlite::Result<bool> {
    conn.prepare_cached("SELECT 1 FROM sessions WHERE session_key = ?1")?
        .query_row([session_key], |_| Ok(()))
        .optional()
        .map(|found| found.is_some())
}

/// Mark the session keyed `session_key` published at `now` (what `publish` wrote to its ref).
pub fn mark_published(conn: &Connection, session_key: &str, now: &str) -> rusqlite::Result<()> {
    conn.prepare_cached("UPDATE sessions SET published_at = ?2 WHERE session_key = ?1")?
        .execute(params![session_key, now])?;
    Ok(())
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
/// Edits need only their paths; the text and input of an edit (whole file contents) are not read.
pub fn evidence_candidates(
    conn: &Connection,
    session: i64,
    after: i64,
    last: i64,
) -> rusqlite::Result<Vec<EvidenceRecord>> {
    conn.prepare_cached(
        "SELECT r.ordinal, COALESCE(t.turn_index, 0), r.kind, r.tool_name, r.tool_kind, r.call_id,
                CASE WHEN r.kind = 'event' THEN r.text END,
                CASE WHEN r.tool_kind = 'exec' THEN r.tool_input END,
                r.file_paths, r.cwd, r.timestamp, r.source_event_kind
         FROM records r LEFT JOIN turns t ON t.id = r.turn_id
         WHERE r.session_id = ?1 AND r.ordinal > ?2 AND r.ordinal <= ?3
           AND ((r.kind = 'tool_call' AND r.tool_kind IN ('exec', 'file_edit'))
             OR (r.kind = 'event' AND r.source_event_kind = 'claude:pr-link'))",
    )?
    .query_map(params![session, after, last], evidence_record)?
    .collect()
}

/// The results of call `call_id` of `session` stored in `(after, last]` (through `records_call`).
pub fn tool_results(
    conn: &Connection,
    session: i64,
    call_id: &str,
    after: i64,
    last: i64,
) -> rusqlite::Result<Vec<EvidenceRecord>> {
    conn.prepare_cached(
        "SELECT r.ordinal, COALESCE(t.turn_index, 0), r.kind, r.tool_name, r.tool_kind, r.call_id, r.text,
                r.tool_input, r.file_paths, r.cwd, r.timestamp, r.source_event_kind
         FROM records r LEFT JOIN turns t ON t.id = r.turn_id
         WHERE r.session_id = ?1 AND r.call_id = ?2 AND r.kind = 'tool_result'
           AND r.ordinal > ?3 AND r.ordinal <= ?4",
    )?
    .query_map(params![session, call_id, after, last], evidence_record)?
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

const SOURCE_COLUMNS: &str = "id, source_key, session_id, path, size, mtime_ns, byte_offset, \
     line_count, first_line_hash, last_line_start, last_line_hash, parser_state, generation, \
     retained_len";

/// Where reading a source file stopped, and how to check the file is still the same file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceState {
    pub id: i64,
    pub source_key: String,
    pub session_id: i64,
    pub path: String,
    pub size: u64,
    pub mtime_ns: i64,
    pub byte_offset: u64,
    pub line_count: u64,
    pub first_line_hash: Option<String>,
    pub last_line_start: Option<u64>,
    pub last_line_hash: Option<String>,
    pub parser_state: Option<String>,
    pub generation: u32,
    pub retained_len: u64,
}

impl SourceState {
    fn from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<SourceState> {
        Ok(SourceState {
            id: r.get(0)?,
            source_key: r.get(1)?,
            session_id: r.get(2)?,
            path: r.get(3)?,
            size: r.get::<_, i64>(4)?.max(0) as u64,
            mtime_ns: r.get(5)?,
            byte_offset: r.get::<_, i64>(6)?.max(0) as u64,
            line_count: r.get::<_, i64>(7)?.max(0) as u64,
            first_line_hash: r.get(8)?,
            last_line_start: r.get::<_, Option<i64>>(9)?.map(|v| v.max(0) as u64),
            last_line_hash: r.get(10)?,
            parser_state: r.get(11)?,
            generation: r.get::<_, i64>(12)?.clamp(0, u32::MAX as i64) as u32,
            retained_len: r.get::<_, i64>(13)?.max(0) as u64,
        })
    }
}

/// True when no session was ever captured (the desktop's first-run page).
pub(crate) fn is_empty(conn: &Connection) -> rusqlite::Result<bool> {
    conn.query_row("SELECT NOT EXISTS (SELECT 1 FROM sessions)", [], |r| {
        r.get(0)
    })
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

/// What the archive holds, for `cairn doctor`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Counts {
    pub sessions: i64,
    pub records: i64,
    pub warnings: i64,
    pub secrets: i64,
}

pub(crate) fn counts(conn: &Connection) -> rusqlite::Result<Counts> {
    conn.query_row(
        "SELECT (SELECT COUNT(*) FROM sessions), (SELECT COUNT(*) FROM records),
                (SELECT COUNT(*) FROM warnings), (SELECT COUNT(*) FROM secret_findings)",
        [],
        |r| {
            Ok(Counts {
                sessions: r.get(0)?,
                records: r.get(1)?,
                warnings: r.get(2)?,
                secrets: r.get(3)?,
            })
        },
    )
}

impl Store {
    /// Bound the memory this connection keeps for reads: at most `mmap_bytes` of the file
    /// mapped (0: none) and a page cache of at most `cache_kib` KiB.
    pub(crate) fn limit_read_memory(&self, mmap_bytes: u64, cache_kib: u32) -> Result<()> {
        self.conn()
            .execute_batch(&format!(
                "PRAGMA mmap_size = {mmap_bytes}; PRAGMA cache_size = -{cache_kib};"
            ))
            .map_err(|e| self.err(e))
    }
}

/// What the sessions `ids` (and their sub-agent sessions) add up to, for a report's material.
#[derive(Debug, Clone, Default)]
pub struct SliceTotals {
    /// Sessions per agent, then per project (`(none)` when unknown), most first, ten at most.
    pub by_agent: Vec<(String, i64)>,
    pub by_project: Vec<(String, i64)>,
    pub turns: i64,
    pub tool_calls: i64,
    pub failures: i64,
    pub edits: i64,
    /// Calls per tool name, most first, ten at most.
    pub tools: Vec<(String, i64)>,
    pub input_tokens: i64,
    pub output_tokens: i64,
}

/// The totals of the sessions `ids` (not empty); turns, tools and tokens count their sub-agent
/// sessions too.
pub fn slice_totals(conn: &Connection, sessions: &[i64]) -> rusqlite::Result<SliceTotals> {
    let ids = sessions
        .iter()
        .map(i64::to_string)
        .collect::<Vec<_>>()
        .join(",");
    // Sub-agent sessions roll up into their parents.
    let family = format!(
        "SELECT id FROM sessions WHERE id IN ({ids}) UNION SELECT c.id FROM sessions c JOIN sessions p ON c.parent_key = p.session_key WHERE p.id IN ({ids})"
    );
    let count_by = |col: &str| -> rusqlite::Result<Vec<(String, i64)>> {
        let mut stmt = conn.prepare(&format!(
            "SELECT COALESCE({col}, '(none)'), COUNT(*) FROM sessions WHERE id IN ({ids}) GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT 10"
        ))?;
        let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?;
        rows.collect()
    };
    let mut totals = SliceTotals {
        by_agent: count_by("agent")?,
        by_project: count_by("project")?,
        ..SliceTotals::default()
    };
    (totals.turns, totals.tool_calls, totals.failures, totals.edits) = conn.query_row(
        &format!(
            "SELECT COUNT(*), COALESCE(SUM(tool_call_count), 0), COALESCE(SUM(failure_count), 0), COALESCE(SUM(edit_count), 0)
             FROM turns WHERE session_id IN ({family})"
        ),
        [],
        |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
    )?;
    let mut stmt = conn.prepare(&format!(
        "SELECT tool_name, COUNT(*), SUM(outcome = 'failed') FROM records r
         WHERE session_id IN ({family}) AND kind = 'tool_call' AND tool_name IS NOT NULL
         GROUP BY tool_name ORDER BY 2 DESC, 1 LIMIT 10"
    ))?;
    totals.tools = stmt
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    (totals.input_tokens, totals.output_tokens) = conn.query_row(
        &format!(
            "SELECT COALESCE(SUM(input), 0), COALESCE(SUM(output), 0) FROM token_usage WHERE session_id IN ({family})"
        ),
        [],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )?;
    Ok(totals)
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

/// The failed tool results of `session`, in order.
pub fn failed_results(conn: &Connection, session: i64) -> rusqlite::Result<Vec<FailedResult>> {
    let mut stmt = conn.prepare_cached(
        "SELECT r.ordinal, COALESCE(r.tool_name, c.tool_name), c.tool_input, r.text, r.exit_code
         FROM records r
         LEFT JOIN records c ON c.session_id = r.session_id AND c.call_id = r.call_id AND c.kind = 'tool_call'
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

/// The key of the session with row id `session`.
pub fn session_key(conn: &Connection, session: i64) -> rusqlite::Result<String> {
    conn.query_row(
        "SELECT session_key FROM sessions WHERE id = ?1",
        params![session],
        |r| r.get(0),
    )
}

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

/// The repository row (`repos`, the git room's) `session` ran in, if it is known.
pub fn session_repo(conn: &Connection, session: i64) -> rusqlite::Result<Option<i64>> {
    conn.prepare_cached("SELECT repo_id FROM sessions WHERE id = ?1")?
        .query_row(params![session], |r| r.get(0))
        .optional()
        .map(Option::flatten)
}

/// Where and by whom a session ran, as an imported entry takes it from its source session.
#[derive(Debug, Clone)]
pub struct SessionPlace {
    /// The session's row id.
    pub row: i64,
    pub project: Option<String>,
    pub cwd: Option<String>,
    pub branch: Option<String>,
    pub agent: String,
}

/// The session `label` names (its key, else the agent's session id: the latest of those).
pub fn session_by_label(conn: &Connection, label: &str) -> rusqlite::Result<Option<SessionPlace>> {
    conn.query_row(
        "SELECT id, project, cwd, git_branch, agent FROM sessions WHERE session_key = ?1 OR session_id = ?1
             ORDER BY (session_key = ?1) DESC, updated_at DESC LIMIT 1",
        [label],
        |r| {
            Ok(SessionPlace {
                row: r.get(0)?,
                project: r.get(1)?,
                cwd: r.get(2)?,
                branch: r.get(3)?,
                agent: r.get(4)?,
            })
        },
    )
    .optional()
}

/// One session in detail: metadata, token usage, what its records are, its sub-agents and the
/// warnings met while reading it (the session view).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct SessionDetail {
    pub session_key: String,
    pub agent: Agent,
    pub session_id: Option<String>,
    /// `subagent`, `compaction` or `fork` when this session hangs off another.
    pub relation: Option<String>,
    pub parent_key: Option<String>,
    pub title: Option<String>,
    pub project: Option<String>,
    pub cwd: Option<String>,
    pub git_branch: Option<String>,
    pub git_commit: Option<String>,
    pub model: Option<String>,
    pub provider: Option<String>,
    pub tool_version: Option<String>,
    pub started_at: Option<String>,
    pub updated_at: Option<String>,
    pub turn_count: u32,
    pub record_count: u32,
    /// Records by kind (`message`, `tool_call`, …).
    pub kinds: BTreeMap<String, u32>,
    /// Tool calls by tool name.
    pub tools: BTreeMap<String, u32>,
    /// Distinct paths edited by the session's tool calls.
    pub edited_paths: Vec<String>,
    pub tokens: TokenUsage,
    /// Record types the adapter did not know, kept in the retained copy and counted here.
    pub unknown_types: BTreeMap<String, u32>,
    pub secrets_redacted: u32,
    pub warnings: Vec<Warning>,
    pub subagents: Vec<SubagentSummary>,
}

/// A sub-agent (or compaction, fork) session of a [`SessionDetail`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct SubagentSummary {
    pub session_key: String,
    pub relation: Option<String>,
    pub agent_id: Option<String>,
    pub record_count: u32,
    pub first_prompt: Option<String>,
}

/// Find a session by `session_key` or by the agent's own session id (newest match wins).
pub fn resolve_session(conn: &Connection, key_or_id: &str) -> rusqlite::Result<Option<i64>> {
    conn.query_row(
        "SELECT id FROM sessions WHERE session_key = ?1
         UNION ALL
         SELECT id FROM (SELECT id FROM sessions WHERE session_id = ?1 AND (relation IS NULL OR relation = 'fork')
                         ORDER BY updated_at DESC LIMIT 1)
         LIMIT 1",
        [key_or_id],
        |r| r.get(0),
    )
    .optional()
}

/// Everything the archive knows of the session with row id `id`.
pub fn session_detail(conn: &Connection, id: i64) -> rusqlite::Result<SessionDetail> {
    let mut d = conn.query_row(
        "SELECT session_key, agent, session_id, relation, parent_key, title, project, cwd, git_branch,
                git_commit, model, provider, tool_version, started_at, updated_at, turn_count, record_count,
                unknown_types, cumulative_usage, secret_count
         FROM sessions WHERE id = ?1",
        [id],
        |r| {
            let agent: String = r.get(1)?;
            let unknown: String = r.get(17)?;
            let cumulative: Option<String> = r.get(18)?;
            Ok(SessionDetail {
                session_key: r.get(0)?,
                agent: Agent::parse(&agent).unwrap_or(Agent::Claude),
                session_id: r.get(2)?,
                relation: r.get(3)?,
                parent_key: r.get(4)?,
                title: r.get(5)?,
                project: r.get(6)?,
                cwd: r.get(7)?,
                git_branch: r.get(8)?,
                git_commit: r.get(9)?,
                model: r.get(10)?,
                provider: r.get(11)?,
                tool_version: r.get(12)?,
                started_at: r.get(13)?,
                updated_at: r.get(14)?,
                turn_count: count(r.get(15)?),
                record_count: count(r.get(16)?),
                kinds: BTreeMap::new(),
                tools: BTreeMap::new(),
                edited_paths: Vec::new(),
                tokens: cumulative.and_then(|c| serde_json::from_str(&c).ok()).unwrap_or_default(),
                unknown_types: serde_json::from_str(&unknown).unwrap_or_default(),
                secrets_redacted: count(r.get(19)?),
                warnings: Vec::new(),
                subagents: Vec::new(),
            })
        },
    )?;
    let per_message: (i64, i64, i64, i64, i64) = conn.query_row(
        "SELECT COALESCE(SUM(input),0), COALESCE(SUM(output),0), COALESCE(SUM(cache_creation),0),
                COALESCE(SUM(cache_read),0), COALESCE(SUM(reasoning),0)
         FROM token_usage WHERE session_id = ?1",
        [id],
        |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?)),
    )?;
    if per_message != (0, 0, 0, 0, 0) {
        let u = |v: i64| v.max(0) as u64;
        d.tokens = TokenUsage {
            input: u(per_message.0),
            output: u(per_message.1),
            cache_creation: u(per_message.2),
            cache_read: u(per_message.3),
            reasoning: u(per_message.4),
        };
    }
    let mut stmt = conn
        .prepare_cached("SELECT kind, COUNT(*) FROM records WHERE session_id = ?1 GROUP BY kind")?;
    for row in stmt.query_map([id], |r| Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?)))? {
        let (k, n) = row?;
        d.kinds.insert(k, count(n));
    }
    let mut stmt = conn.prepare_cached(
        "SELECT tool_name, COUNT(*) FROM records WHERE session_id = ?1 AND kind = 'tool_call' GROUP BY tool_name",
    )?;
    for row in stmt.query_map([id], |r| {
        Ok((r.get::<_, Option<String>>(0)?, r.get::<_, i64>(1)?))
    })? {
        let (k, n) = row?;
        d.tools
            .insert(k.unwrap_or_else(|| "unknown".into()), count(n));
    }
    let mut stmt = conn.prepare_cached(
        "SELECT DISTINCT j.value FROM records r, json_each(r.file_paths) j
         WHERE r.session_id = ?1 AND r.file_paths IS NOT NULL ORDER BY j.value",
    )?;
    d.edited_paths = stmt
        .query_map([id], |r| r.get(0))?
        .collect::<rusqlite::Result<_>>()?;
    let mut stmt = conn.prepare_cached(
        "SELECT path, line, message FROM warnings WHERE session_id = ?1 ORDER BY path, line",
    )?;
    d.warnings = stmt
        .query_map([id], |r| {
            Ok(Warning {
                path: r.get(0)?,
                line: r.get::<_, Option<i64>>(1)?.map(count),
                message: r.get(2)?,
            })
        })?
        .collect::<rusqlite::Result<_>>()?;
    let mut stmt = conn.prepare_cached(
        "SELECT c.session_key, c.relation, c.agent_id, c.record_count,
                (SELECT preview FROM turns t WHERE t.session_id = c.id ORDER BY turn_index LIMIT 1)
         FROM sessions c WHERE c.parent_key = ?1 ORDER BY c.started_at, c.id",
    )?;
    d.subagents = stmt
        .query_map(params![d.session_key], |r| {
            Ok(SubagentSummary {
                session_key: r.get(0)?,
                relation: r.get(1)?,
                agent_id: r.get(2)?,
                record_count: count(r.get(3)?),
                first_prompt: r.get(4)?,
            })
        })?
        .collect::<rusqlite::Result<_>>()?;
    Ok(d)
}

/// A stored count as a `u32` (negative as 0, too large as `u32::MAX`).
pub(crate) fn count(v: i64) -> u32 {
    u32::try_from(v.max(0)).unwrap_or(u32::MAX)
}

/// Which sessions to list (the session list view). Empty means every top-level session, newest first.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct SessionQuery {
    pub agent: Option<Agent>,
    pub branch: Option<String>,
    pub limit: Option<u32>,
}

/// One captured session, as listed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct SessionSummary {
    pub session_key: String,
    pub agent: Agent,
    /// The agent's own session id.
    pub session_id: Option<String>,
    pub project: Option<String>,
    pub cwd: Option<String>,
    pub git_branch: Option<String>,
    pub title: Option<String>,
    pub model: Option<String>,
    pub started_at: Option<String>,
    pub updated_at: Option<String>,
    pub turn_count: u32,
    pub record_count: u32,
    /// Parse warnings recorded on the session (malformed lines and the like).
    pub warnings: u32,
    /// Sub-agent sessions attached to this one.
    pub subagent_count: u32,
    /// Preview of the first human prompt, when there is one.
    pub first_prompt: Option<String>,
}

/// Top-level sessions with at least one record, newest first. Sub-agent and compaction
/// sessions are counted on their parent instead of listed.
pub fn list_sessions(conn: &Connection, q: &SessionQuery) -> rusqlite::Result<Vec<SessionSummary>> {
    let mut sql = String::from(
        "SELECT s.session_key, s.agent, s.session_id, s.project, s.cwd, s.git_branch, s.title, s.model,
                s.started_at, s.updated_at, s.turn_count, s.record_count, s.warning_count,
                (SELECT COUNT(*) FROM sessions c WHERE c.parent_key = s.session_key
                    AND c.relation IN ('subagent', 'compaction')),
                (SELECT t.preview FROM turns t WHERE t.session_id = s.id ORDER BY t.turn_index LIMIT 1)
         FROM sessions s
         WHERE s.record_count > 0 AND (s.relation IS NULL OR s.relation = 'fork')",
    );
    let mut args: Vec<SqlValue> = Vec::new();
    if let Some(agent) = q.agent {
        sql.push_str(" AND s.agent = ?");
        args.push(SqlValue::Text(agent.as_str().to_owned()));
    }
    if let Some(branch) = &q.branch {
        sql.push_str(" AND s.git_branch = ?");
        args.push(SqlValue::Text(branch.clone()));
    }
    sql.push_str(" ORDER BY s.updated_at IS NULL, s.updated_at DESC, s.id DESC");
    if let Some(limit) = q.limit {
        sql.push_str(" LIMIT ?");
        args.push(SqlValue::Integer(i64::from(limit)));
    }
    let mut stmt = conn.prepare_cached(&sql)?;
    let rows = stmt.query_map(params_from_iter(args), |r| {
        let agent: String = r.get(1)?;
        Ok(SessionSummary {
            session_key: r.get(0)?,
            agent: Agent::parse(&agent).unwrap_or(Agent::Claude),
            session_id: r.get(2)?,
            project: r.get(3)?,
            cwd: r.get(4)?,
            git_branch: r.get(5)?,
            title: r.get(6)?,
            model: r.get(7)?,
            started_at: r.get(8)?,
            updated_at: r.get(9)?,
            turn_count: count(r.get(10)?),
            record_count: count(r.get(11)?),
            warnings: count(r.get(12)?),
            subagent_count: count(r.get(13)?),
            first_prompt: r.get(14)?,
        })
    })?;
    rows.collect()
}

/// The directory `session` ran in (an error when there is no such session).
pub fn session_cwd(conn: &Connection, session: i64) -> rusqlite::Result<Option<String>> {
    conn.prepare_cached("SELECT cwd FROM sessions WHERE id = ?1")?
        .query_row([session], |r| r.get(0))
}

/// Where and when a session ran, as association bounds what it reads.
#[derive(Debug, Clone)]
pub struct SessionTimes {
    pub cwd: Option<String>,
    pub started: Option<String>,
    pub updated: Option<String>,
}

/// Where and when `session` ran, if there is such a session.
pub fn session_times(conn: &Connection, session: i64) -> rusqlite::Result<Option<SessionTimes>> {
    conn.prepare_cached("SELECT cwd, started_at, updated_at FROM sessions WHERE id = ?1")?
        .query_row([session], |r| {
            Ok(SessionTimes {
                cwd: r.get(0)?,
                started: r.get(1)?,
                updated: r.get(2)?,
            })
        })
        .optional()
}

/// Record that `session` ran in the repository row `repo` (`repos`, the git room's).
pub fn set_session_repo(conn: &Connection, session: i64, repo: i64) -> rusqlite::Result<()> {
    conn.prepare_cached("UPDATE sessions SET repo_id = ?2 WHERE id = ?1")?
        .execute(params![session, repo])?;
    Ok(())
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
}

/// What the `show` views head a session with.
#[derive(Debug, Clone)]
pub struct SessionHead {
    pub id: i64,
    pub key: String,
    pub agent: Agent,
    pub title: Option<String>,
    pub started_at: Option<String>,
}

/// The head of the session with row id `id`.
pub fn session_head(conn: &Connection, id: i64) -> rusqlite::Result<SessionHead> {
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

/// How many turns `session` has.
pub fn turn_total(conn: &Connection, session: i64) -> rusqlite::Result<i64> {
    conn.prepare_cached("SELECT COUNT(*) FROM turns WHERE session_id = ?1")?
        .query_row([session], |r| r.get(0))
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

/// A session started by a script rather than a person: Claude's `sdk-*` entry points
/// (`claude -p`, the SDKs) and Codex's `exec` and `mcp` sources.
pub const AUTOMATED: &str = "(COALESCE(s.thread_source, '') LIKE 'sdk%' OR COALESCE(s.thread_source, '') IN ('exec', 'mcp'))";

/// Which top-level sessions a report's slice holds.
#[derive(Debug, Clone, Default)]
pub struct SessionSlice<'a> {
    /// Active in `[since, until)`: started before its end, last seen after its start.
    pub since: Option<&'a str>,
    pub until: Option<&'a str>,
    pub project: Option<&'a str>,
    pub agent: Option<Agent>,
    /// Only these sessions (row ids), when given.
    pub linked: Option<&'a [i64]>,
    /// Only automated sessions (`Some(true)`), only those a person started (`Some(false)`).
    pub automated: Option<bool>,
}

/// The top-level sessions in `slice` (sub-agents count as part of their parent), oldest
/// first: row ids.
pub fn sessions_in_slice(
    conn: &Connection,
    slice: &SessionSlice<'_>,
) -> rusqlite::Result<Vec<i64>> {
    let mut sql = String::from("SELECT s.id FROM sessions s WHERE s.parent_key IS NULL");
    let mut args: Vec<SqlValue> = Vec::new();
    if let Some(until) = slice.until {
        sql.push_str(" AND COALESCE(s.started_at, s.updated_at) < ?");
        args.push(SqlValue::Text(until.to_owned()));
    }
    if let Some(since) = slice.since {
        sql.push_str(" AND COALESCE(s.updated_at, s.started_at) >= ?");
        args.push(SqlValue::Text(since.to_owned()));
    }
    if let Some(project) = slice.project {
        sql.push_str(" AND s.project = ?");
        args.push(SqlValue::Text(project.to_owned()));
    }
    if let Some(agent) = slice.agent {
        sql.push_str(" AND s.agent = ?");
        args.push(SqlValue::Text(agent.as_str().to_owned()));
    }
    if let Some(linked) = slice.linked {
        let ids = linked
            .iter()
            .map(i64::to_string)
            .collect::<Vec<_>>()
            .join(",");
        sql.push_str(&format!(" AND s.id IN ({ids})"));
    }
    match slice.automated {
        None => {}
        Some(false) => sql.push_str(&format!(" AND NOT {AUTOMATED}")),
        Some(true) => sql.push_str(&format!(" AND {AUTOMATED}")),
    }
    sql.push_str(" ORDER BY COALESCE(s.started_at, s.updated_at), s.id");
    let mut stmt = conn.prepare(&sql)?;
    let rows = stmt.query_map(params_from_iter(args), |r| r.get(0))?;
    rows.collect()
}

/// A session as a report's material heads it.
#[derive(Debug, Clone)]
pub struct ReportSession {
    pub key: String,
    pub agent: String,
    /// Its title, else its first turn's preview.
    pub title: Option<String>,
    pub project: Option<String>,
    pub model: Option<String>,
    pub started: Option<String>,
    pub updated: Option<String>,
    pub turns: i64,
    pub cwd: Option<String>,
    /// Its repository row (`repos`, the git room's).
    pub repo: Option<i64>,
    pub automated: bool,
}

/// The session with row id `id`, as a report heads it.
pub fn report_session(conn: &Connection, id: i64) -> rusqlite::Result<ReportSession> {
    conn.query_row(
        &format!(
            "SELECT s.session_key, s.agent,
                COALESCE(s.title, (SELECT t.preview FROM turns t WHERE t.session_id = s.id ORDER BY t.turn_index LIMIT 1)),
                s.project, s.model, s.started_at, s.updated_at,
                s.turn_count, s.cwd, s.repo_id, {AUTOMATED}
             FROM sessions s WHERE s.id = ?1"
        ),
        params![id],
        |r| {
            Ok(ReportSession {
                key: r.get(0)?,
                agent: r.get(1)?,
                title: r.get(2)?,
                project: r.get(3)?,
                model: r.get(4)?,
                started: r.get(5)?,
                updated: r.get(6)?,
                turns: r.get(7)?,
                cwd: r.get(8)?,
                repo: r.get(9)?,
                automated: r.get(10)?,
            })
        },
    )
}

/// The captures of `session` after capture `after` that have no snapshot (`snapshot_id`, the git
/// room's), in order.
pub fn captures_without_snapshot(
    conn: &Connection,
    session: i64,
    after: i64,
) -> rusqlite::Result<Vec<i64>> {
    conn.prepare_cached(
        "SELECT c.id FROM captures c
         WHERE c.session_id = ?1 AND c.snapshot_id IS NULL AND c.id > ?2
         ORDER BY c.id",
    )?
    .query_map(params![session, after], |r| r.get(0))?
    .collect()
}

/// Attach the snapshot `snapshot` to capture `capture` if it is one of `session`'s: whether it was.
pub fn attach_snapshot(
    conn: &Connection,
    capture: i64,
    session: i64,
    snapshot: i64,
) -> rusqlite::Result<bool> {
    Ok(conn
        .prepare_cached("UPDATE captures SET snapshot_id = ?1 WHERE id = ?2 AND session_id = ?3")?
        .execute(params![snapshot, capture, session])?
        > 0)
}

/// What another room needs to know of a session: its row id, key, project, cwd, branch and agent
/// (empty strings for the unknown ones).
#[derive(Debug, Clone)]
pub struct SessionFacts {
    pub id: i64,
    pub key: String,
    pub project: String,
    pub cwd: String,
    pub branch: String,
    pub agent: String,
}

/// The session named by its key or its agent's session id (the key wins; of several with the
/// same agent id, the newest).
pub fn session_facts(conn: &Connection, key_or_id: &str) -> rusqlite::Result<Option<SessionFacts>> {
    conn.prepare_cached(
        "SELECT id, session_key, COALESCE(project, ''), COALESCE(cwd, ''), COALESCE(git_branch, ''), agent
         FROM sessions WHERE session_key = ?1 OR session_id = ?1
         ORDER BY (session_key = ?1) DESC, updated_at DESC LIMIT 1",
    )?
    .query_row([key_or_id], |r| {
        Ok(SessionFacts {
            id: r.get(0)?,
            key: r.get(1)?,
            project: r.get(2)?,
            cwd: r.get(3)?,
            branch: r.get(4)?,
            agent: r.get(5)?,
        })
    })
    .optional()
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

// ---- search: records by full text, turns by id ------------------------------------------

/// One matching record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct SearchHit {
    pub session_key: String,
    pub turn_key: Option<String>,
    pub ordinal: u32,
    pub kind: String,
    pub role: Option<String>,
    pub tool_name: Option<String>,
    pub timestamp: Option<String>,
    pub agent: Agent,
    /// The session's title, else its first prompt (most Claude sessions have no title).
    pub title: Option<String>,
    pub project: Option<String>,
    pub git_branch: Option<String>,
    /// The matching text with each match between [`MATCH_START`] and [`MATCH_END`] (a vector
    /// hit: the turn's prompt, unmarked).
    pub snippet: String,
    /// Vector: cosine similarity; hybrid: the fused score; lexical: none (and left out).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub score: Option<f64>,
    /// `keyword` (full-text match), `semantic` (the vector leg found the turn). Optional in
    /// the JSON so front doors written before semantic search keep working.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub match_reasons: Vec<String>,
}

/// Opens a match in [`SearchHit::snippet`]: a private-use character, so it never collides
/// with text (square brackets, which git and logs print, would).
pub const MATCH_START: char = '\u{E000}';
/// Closes a match in [`SearchHit::snippet`].
pub const MATCH_END: char = '\u{E001}';

/// Which records a search keeps (each bound present narrows it; empty bounds are absent).
#[derive(Debug, Clone, Copy, Default)]
pub struct RecordFilter<'a> {
    pub agent: Option<Agent>,
    pub branch: Option<&'a str>,
    pub project: Option<&'a str>,
    /// At or after this time (RFC 3339 or `YYYY-MM-DD`).
    pub since: Option<&'a str>,
    /// Before this time.
    pub until: Option<&'a str>,
}

/// Append `f` to a `WHERE` clause over `sessions s` and `records r`; `time` is the SQL
/// expression the date range applies to.
fn push_record_filter(
    sql: &mut String,
    args: &mut Vec<SqlValue>,
    f: &RecordFilter<'_>,
    time: &str,
) {
    if let Some(agent) = f.agent {
        sql.push_str(" AND s.agent = ?");
        args.push(SqlValue::Text(agent.as_str().to_owned()));
    }
    if let Some(branch) = f.branch {
        sql.push_str(" AND COALESCE(r.git_branch, s.git_branch) = ?");
        args.push(SqlValue::Text(branch.to_owned()));
    }
    if let Some(project) = f.project {
        sql.push_str(" AND s.project = ?");
        args.push(SqlValue::Text(project.to_owned()));
    }
    if let Some(since) = f.since {
        sql.push_str(&format!(" AND {time} >= ?"));
        args.push(SqlValue::Text(since.to_owned()));
    }
    if let Some(until) = f.until {
        sql.push_str(&format!(" AND {time} < ?"));
        args.push(SqlValue::Text(until.to_owned()));
    }
}

/// Records whose text matches the FTS5 expression `expr` and pass `f`, best first (bm25).
pub fn search_records(
    conn: &Connection,
    expr: &str,
    f: &RecordFilter<'_>,
    limit: u32,
) -> rusqlite::Result<Vec<SearchHit>> {
    let mut sql = String::from(
        "SELECT s.session_key, t.turn_key, r.ordinal, r.kind, r.role, r.tool_name, r.timestamp,
                s.agent,
                COALESCE(s.title, (SELECT ft.preview FROM turns ft WHERE ft.session_id = s.id ORDER BY ft.turn_index LIMIT 1)),
                s.project, COALESCE(r.git_branch, s.git_branch),
                snippet(records_fts, -1, char(57344), char(57345), '…', 16)
         FROM records_fts
         JOIN records r ON r.id = records_fts.rowid
         JOIN sessions s ON s.id = r.session_id
         LEFT JOIN turns t ON t.id = r.turn_id
         WHERE records_fts MATCH ?",
    );
    let mut args = vec![SqlValue::Text(expr.to_owned())];
    push_record_filter(&mut sql, &mut args, f, "r.timestamp");
    sql.push_str(" ORDER BY bm25(records_fts) LIMIT ?");
    args.push(SqlValue::Integer(i64::from(limit)));
    let mut stmt = conn.prepare_cached(&sql)?;
    let rows = stmt.query_map(params_from_iter(args), |r| {
        let agent: String = r.get(7)?;
        Ok(SearchHit {
            session_key: r.get(0)?,
            turn_key: r.get(1)?,
            ordinal: count(r.get(2)?),
            kind: r.get(3)?,
            role: r.get(4)?,
            tool_name: r.get(5)?,
            timestamp: r.get(6)?,
            agent: Agent::parse(&agent).unwrap_or(Agent::Claude),
            title: r.get(8)?,
            project: r.get(9)?,
            git_branch: r.get(10)?,
            snippet: r.get::<_, Option<String>>(11)?.unwrap_or_default(),
            score: None,
            match_reasons: vec!["keyword".to_owned()],
        })
    })?;
    rows.collect()
}

/// The turns among `ids` that pass `f`, each as a hit on its opening record (its prompt as the
/// snippet), keyed by turn id.
pub fn turn_hits(
    conn: &Connection,
    ids: &[i64],
    f: &RecordFilter<'_>,
) -> rusqlite::Result<std::collections::HashMap<i64, SearchHit>> {
    let mut found = std::collections::HashMap::new();
    if ids.is_empty() {
        return Ok(found);
    }
    let list = ids.iter().map(i64::to_string).collect::<Vec<_>>().join(",");
    let mut sql = format!(
        "SELECT t.id, s.session_key, t.turn_key, t.opening_ordinal, COALESCE(r.kind, 'message'), r.role,
                r.tool_name, COALESCE(r.timestamp, t.started_at), s.agent, s.title, s.project,
                COALESCE(r.git_branch, s.git_branch), COALESCE(t.preview, t.assistant_preview, '')
         FROM turns t
         JOIN sessions s ON s.id = t.session_id
         LEFT JOIN records r ON r.session_id = t.session_id AND r.ordinal = t.opening_ordinal
         WHERE t.id IN ({list})"
    );
    let mut args: Vec<SqlValue> = Vec::new();
    push_record_filter(
        &mut sql,
        &mut args,
        f,
        "COALESCE(r.timestamp, t.started_at)",
    );
    let mut stmt = conn.prepare(&sql)?;
    let rows = stmt.query_map(params_from_iter(args), |r| {
        let agent: String = r.get(8)?;
        Ok((
            r.get::<_, i64>(0)?,
            SearchHit {
                session_key: r.get(1)?,
                turn_key: r.get(2)?,
                ordinal: count(r.get(3)?),
                kind: r.get(4)?,
                role: r.get(5)?,
                tool_name: r.get(6)?,
                timestamp: r.get(7)?,
                agent: Agent::parse(&agent).unwrap_or(Agent::Claude),
                title: r.get(9)?,
                project: r.get(10)?,
                git_branch: r.get(11)?,
                snippet: r.get(12)?,
                score: None,
                match_reasons: vec!["semantic".to_owned()],
            },
        ))
    })?;
    for row in rows {
        let (id, hit) = row?;
        found.insert(id, hit);
    }
    Ok(found)
}

// ---- the skim's reads: a session's card and its turns ----------------------------------

/// A session as `skim` heads it.
#[derive(Debug, Clone)]
pub struct SessionCard {
    pub key: String,
    pub agent: Agent,
    pub title: Option<String>,
    pub project: Option<String>,
    pub started_at: Option<String>,
    pub updated_at: Option<String>,
    pub turn_count: i64,
    pub record_count: i64,
    /// This machine published it.
    pub published: bool,
}

/// The card of the session with row id `id`.
pub fn session_card(conn: &Connection, id: i64) -> rusqlite::Result<SessionCard> {
    conn.prepare_cached(
        "SELECT session_key, agent, title, project, started_at, updated_at, turn_count, record_count, published_at
         FROM sessions WHERE id = ?1",
    )?
    .query_row([id], |r| {
        let agent: String = r.get(1)?;
        Ok(SessionCard {
            key: r.get(0)?,
            agent: Agent::parse(&agent).unwrap_or(Agent::Claude),
            title: r.get(2)?,
            project: r.get(3)?,
            started_at: r.get(4)?,
            updated_at: r.get(5)?,
            turn_count: r.get(6)?,
            record_count: r.get(7)?,
            published: r.get::<_, Option<String>>(8)?.is_some(),
        })
    })
}

/// A turn as `skim` abbreviates it.
#[derive(Debug, Clone)]
pub struct TurnCard {
    pub id: i64,
    pub turn_key: String,
    pub turn_index: i64,
    pub started_at: Option<String>,
    pub record_count: i64,
    pub tool_call_count: i64,
    /// The tool names, as a JSON array.
    pub tool_names: String,
    pub preview: Option<String>,
    pub assistant_preview: Option<String>,
}

/// The turns of the sessions `ids`, in order, by session row id: one statement for them all
/// (a statement per session made SQLite prepare it afresh for every new binding).
pub fn turn_cards_of(
    conn: &Connection,
    ids: &[i64],
) -> rusqlite::Result<std::collections::BTreeMap<i64, Vec<TurnCard>>> {
    let mut by_session: std::collections::BTreeMap<i64, Vec<TurnCard>> = Default::default();
    if ids.is_empty() {
        return Ok(by_session);
    }
    let ids = serde_json::Value::from(ids).to_string();
    let mut stmt = conn.prepare_cached(
        "SELECT session_id, id, turn_key, turn_index, started_at, record_count, tool_call_count,
                tool_names, preview, assistant_preview
         FROM turns WHERE session_id IN (SELECT value FROM json_each(?1))
         ORDER BY session_id, turn_index",
    )?;
    let rows = stmt.query_map([ids], |r| {
        Ok((
            r.get::<_, i64>(0)?,
            TurnCard {
                id: r.get(1)?,
                turn_key: r.get(2)?,
                turn_index: r.get(3)?,
                started_at: r.get(4)?,
                record_count: r.get(5)?,
                tool_call_count: r.get(6)?,
                tool_names: r.get(7)?,
                preview: r.get(8)?,
                assistant_preview: r.get(9)?,
            },
        ))
    })?;
    for row in rows {
        let (session, turn) = row?;
        by_session.entry(session).or_default().push(turn);
    }
    Ok(by_session)
}

/// The key and index of each turn among `ids` that exists, by row id.
pub fn turn_places(
    conn: &Connection,
    ids: &[i64],
) -> rusqlite::Result<std::collections::HashMap<i64, (String, i64)>> {
    let mut out = std::collections::HashMap::new();
    let mut stmt = conn.prepare_cached("SELECT turn_key, turn_index FROM turns WHERE id = ?1")?;
    for &id in ids {
        if out.contains_key(&id) {
            continue;
        }
        if let Some(place) = stmt
            .query_row([id], |r| Ok((r.get(0)?, r.get(1)?)))
            .optional()?
        {
            out.insert(id, place);
        }
    }
    Ok(out)
}

/// The sessions (row ids) captured in any of the repositories `repos` (row ids).
pub fn sessions_in_repos(conn: &Connection, repos: &[i64]) -> rusqlite::Result<Vec<i64>> {
    let mut stmt = conn.prepare_cached("SELECT id FROM sessions WHERE repo_id = ?1 ORDER BY id")?;
    let mut out = Vec::new();
    for &repo in repos {
        for id in stmt.query_map([repo], |r| r.get(0))? {
            out.push(id?);
        }
    }
    Ok(out)
}

/// Where a session ran and how active it was, as the branch list counts it.
#[derive(Debug, Clone)]
pub struct SessionPlaceRow {
    pub repo_id: Option<i64>,
    pub project: Option<String>,
    pub updated_at: Option<String>,
    pub turn_count: i64,
}

/// [`SessionPlaceRow`] of each session among `ids` that exists, by row id.
pub fn session_places(
    conn: &Connection,
    ids: &[i64],
) -> rusqlite::Result<std::collections::HashMap<i64, SessionPlaceRow>> {
    let mut out = std::collections::HashMap::new();
    let mut stmt = conn.prepare_cached(
        "SELECT repo_id, project, updated_at, turn_count FROM sessions WHERE id = ?1",
    )?;
    for &id in ids {
        if out.contains_key(&id) {
            continue;
        }
        let row = stmt
            .query_row([id], |r| {
                Ok(SessionPlaceRow {
                    repo_id: r.get(0)?,
                    project: r.get(1)?,
                    updated_at: r.get(2)?,
                    turn_count: r.get(3)?,
                })
            })
            .optional()?;
        if let Some(row) = row {
            out.insert(id, row);
        }
    }
    Ok(out)
}

/// A capture of a session that recorded a git snapshot, as association compares them.
#[derive(Debug, Clone)]
pub struct SnapshotCapture {
    pub id: i64,
    pub snapshot_id: i64,
    /// The turn the capture ended in (the last turn starting at or before its last record).
    pub turn_index: Option<i64>,
    pub last_ordinal: Option<i64>,
}

/// The captures of `session` after capture `after` that recorded a snapshot, in order.
pub fn snapshot_captures(
    conn: &Connection,
    session: i64,
    after: i64,
) -> rusqlite::Result<Vec<SnapshotCapture>> {
    conn.prepare_cached(
        "SELECT c.id, c.snapshot_id, (SELECT t.turn_index FROM turns t WHERE t.session_id = c.session_id
                                AND t.first_ordinal <= c.last_ordinal ORDER BY t.turn_index DESC LIMIT 1),
                c.last_ordinal
         FROM captures c WHERE c.session_id = ?1 AND c.id > ?2 AND c.snapshot_id IS NOT NULL ORDER BY c.id",
    )?
    .query_map(params![session, after], |r| {
        Ok(SnapshotCapture {
            id: r.get(0)?,
            snapshot_id: r.get(1)?,
            turn_index: r.get(2)?,
            last_ordinal: r.get(3)?,
        })
    })?
    .collect()
}

/// The row id of turn `index` of `session`, if it exists.
pub fn turn_at(conn: &Connection, session: i64, index: i64) -> rusqlite::Result<Option<i64>> {
    conn.prepare_cached("SELECT id FROM turns WHERE session_id = ?1 AND turn_index = ?2")?
        .query_row(params![session, index], |r| r.get(0))
        .optional()
}

/// The row id of the session with this key or agent session id (every match).
pub fn sessions_named(conn: &Connection, key_or_id: &str) -> rusqlite::Result<Vec<i64>> {
    conn.prepare_cached("SELECT id FROM sessions WHERE session_key = ?1 OR session_id = ?1")?
        .query_map([key_or_id], |r| r.get(0))?
        .collect()
}

/// The key of the session with row id `session`, if the archive holds it.
pub fn session_key_of(conn: &Connection, session: i64) -> rusqlite::Result<Option<String>> {
    conn.prepare_cached("SELECT session_key FROM sessions WHERE id = ?1")?
        .query_row([session], |r| r.get(0))
        .optional()
}

// ---- team push: what `team::push` mirrors of the archive (the team room reads it only here)

/// A session as the team push sees it: its row id, key, repository, and a signature that
/// changes whenever anything the push mirrors of it changes (its row, a new record, a keyed
/// record revised or retracted).
#[derive(Debug, Clone)]
pub struct TeamMark {
    pub id: i64,
    pub session_key: String,
    pub repo_id: Option<i64>,
    pub signature: String,
    /// The highest record row id of the session (records are appended with growing ids).
    pub max_record_id: i64,
}

/// Every session, oldest first, with its [`TeamMark`].
pub fn team_marks(conn: &Connection) -> rusqlite::Result<Vec<TeamMark>> {
    let mut stmt = conn.prepare_cached(
        "SELECT s.id, s.session_key, s.repo_id,
                coalesce(s.title, '') || '|' || coalesce(s.updated_at, '') || '|' ||
                coalesce(s.git_branch, '') || '|' || s.record_count || '|' || s.turn_count || '|' ||
                s.next_ordinal || '|' || coalesce(s.model, '') || '|' ||
                coalesce((SELECT group_concat(coalesce(r.revision, '') || coalesce(r.retracted_at, ''), ',')
                          FROM records r WHERE r.session_id = s.id AND r.unit IS NOT NULL), ''),
                coalesce((SELECT max(r.id) FROM records r WHERE r.session_id = s.id), 0)
         FROM sessions s ORDER BY s.id",
    )?;
    stmt.query_map([], |r| {
        Ok(TeamMark {
            id: r.get(0)?,
            session_key: r.get(1)?,
            repo_id: r.get(2)?,
            signature: r.get(3)?,
            max_record_id: r.get(4)?,
        })
    })?
    .collect()
}

/// A session's fields that a team push may send (before outbound redaction).
#[derive(Debug, Clone)]
pub struct TeamSessionRow {
    pub session_key: String,
    pub agent: String,
    pub parent_key: Option<String>,
    pub relation: Option<String>,
    pub title: Option<String>,
    pub project: Option<String>,
    pub cwd: Option<String>,
    pub git_branch: Option<String>,
    pub model: Option<String>,
    pub started_at: Option<String>,
    pub updated_at: Option<String>,
    pub record_count: i64,
    pub turn_count: i64,
}

pub fn team_session(conn: &Connection, session: i64) -> rusqlite::Result<TeamSessionRow> {
    conn.prepare_cached(
        "SELECT session_key, agent, parent_key, relation, title, project, cwd, git_branch, model,
                started_at, updated_at, record_count, turn_count
         FROM sessions WHERE id = ?1",
    )?
    .query_row([session], |r| {
        Ok(TeamSessionRow {
            session_key: r.get(0)?,
            agent: r.get(1)?,
            parent_key: r.get(2)?,
            relation: r.get(3)?,
            title: r.get(4)?,
            project: r.get(5)?,
            cwd: r.get(6)?,
            git_branch: r.get(7)?,
            model: r.get(8)?,
            started_at: r.get(9)?,
            updated_at: r.get(10)?,
            record_count: r.get(11)?,
            turn_count: r.get(12)?,
        })
    })
}

/// A turn's fields that a team push may send.
#[derive(Debug, Clone)]
pub struct TeamTurnRow {
    pub turn_index: i64,
    pub turn_key: String,
    pub first_ordinal: i64,
    pub last_ordinal: i64,
    pub record_count: i64,
    pub tool_call_count: i64,
    pub started_at: Option<String>,
    pub ended_at: Option<String>,
    pub preview: Option<String>,
}

pub fn team_turns(conn: &Connection, session: i64) -> rusqlite::Result<Vec<TeamTurnRow>> {
    let mut stmt = conn.prepare_cached(
        "SELECT turn_index, turn_key, first_ordinal, last_ordinal, record_count, tool_call_count,
                started_at, ended_at, preview
         FROM turns WHERE session_id = ?1 ORDER BY turn_index",
    )?;
    stmt.query_map([session], |r| {
        Ok(TeamTurnRow {
            turn_index: r.get(0)?,
            turn_key: r.get(1)?,
            first_ordinal: r.get(2)?,
            last_ordinal: r.get(3)?,
            record_count: r.get(4)?,
            tool_call_count: r.get(5)?,
            started_at: r.get(6)?,
            ended_at: r.get(7)?,
            preview: r.get(8)?,
        })
    })?
    .collect()
}

/// A record's fields that a team push may send.
#[derive(Debug, Clone)]
pub struct TeamRecordRow {
    pub ordinal: i64,
    pub turn_index: Option<i64>,
    pub timestamp: Option<String>,
    pub kind: String,
    pub role: Option<String>,
    pub text: Option<String>,
    pub tool_name: Option<String>,
    pub tool_kind: Option<String>,
    pub tool_input: Option<String>,
    pub exit_code: Option<i64>,
    pub outcome: Option<String>,
    pub file_paths: Option<String>,
    pub retracted: bool,
}

/// The records of `session` a push has not sent yet: those with a row id above `after`, and
/// every keyed record (revised in place, so its id says nothing of when it changed).
pub fn team_records(
    conn: &Connection,
    session: i64,
    after: i64,
) -> rusqlite::Result<Vec<TeamRecordRow>> {
    let mut stmt = conn.prepare_cached(
        "SELECT r.ordinal, t.turn_index, r.timestamp, r.kind, r.role, r.text, r.tool_name,
                r.tool_kind, r.tool_input, r.exit_code, r.outcome, r.file_paths,
                r.retracted_at IS NOT NULL
         FROM records r LEFT JOIN turns t ON t.id = r.turn_id
         WHERE r.session_id = ?1 AND (r.id > ?2 OR r.unit IS NOT NULL)
         ORDER BY r.ordinal",
    )?;
    stmt.query_map(params![session, after], |r| {
        Ok(TeamRecordRow {
            ordinal: r.get(0)?,
            turn_index: r.get(1)?,
            timestamp: r.get(2)?,
            kind: r.get(3)?,
            role: r.get(4)?,
            text: r.get(5)?,
            tool_name: r.get(6)?,
            tool_kind: r.get(7)?,
            tool_input: r.get(8)?,
            exit_code: r.get(9)?,
            outcome: r.get(10)?,
            file_paths: r.get(11)?,
            retracted: r.get(12)?,
        })
    })?
    .collect()
}

#[cfg(test)]
mod tests {
    use rusqlite::Connection;

    use super::*;
    use crate::schema::MIGRATIONS;

    /// Timestamps an archive kept before they were read strictly become unknown; RFC 3339
    /// ones stay as they were.
    #[test]
    fn junk_timestamps_from_older_archives_become_unknown() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(DB_FILE);
        {
            let conn = Connection::open(&path).unwrap();
            for step in &MIGRATIONS[..11] {
                conn.execute_batch(step.sql).unwrap();
            }
            conn.pragma_update(None, "user_version", 11).unwrap();
            conn.execute_batch(
                "INSERT INTO sessions (id, session_key, agent, captured_at, started_at, updated_at)
                   VALUES (1, 'k', 'claude', 'now', '2026-01-01T00:00:00Z', '2099-01-01é000000');
                 INSERT INTO sources (id, source_key, session_id, agent, role, path, updated_at)
                   VALUES (1, 's', 1, 'claude', 'main', '/p', 'now');",
            )
            .unwrap();
            conn.execute(
                "INSERT INTO turns (id, session_id, turn_index, turn_key, opening_ordinal, first_ordinal,
                   last_ordinal, started_at, ended_at) VALUES (1, 1, 0, 't', 0, 0, 1, ?1, ?2)",
                params![
                    "2026-01-01T00:00:00\u{1b}]0;x\u{7}",
                    "2026-01-01T00:00:01.5+02:00"
                ],
            )
            .unwrap();
            for (ordinal, ts) in [
                (0, "2026-01-01T00:00:00.123Z"),
                (1, "2026-01-01"),
                (2, "2026-01-01T00:00:00Z\u{202e}"),
                (3, "2026-01-01 00:00:00Z"),
            ] {
                conn.execute(
                    "INSERT INTO records (session_id, ordinal, source_id, line_no, block, record_hash, kind,
                       source_event_kind, timestamp) VALUES (1, ?1, 1, ?1, 0, ?1, 'message', 'x', ?2)",
                    params![ordinal, ts],
                )
                .unwrap();
            }
        }
        let store = Store::open(&path).unwrap();
        let conn = store.conn();
        let records: Vec<Option<String>> = conn
            .prepare("SELECT timestamp FROM records ORDER BY ordinal")
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap();
        assert_eq!(
            records,
            [
                Some("2026-01-01T00:00:00.123Z".to_owned()),
                None,
                None,
                None
            ]
        );
        let session: (Option<String>, Option<String>) = conn
            .query_row("SELECT started_at, updated_at FROM sessions", [], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })
            .unwrap();
        assert_eq!(session, (Some("2026-01-01T00:00:00Z".to_owned()), None));
        let turn: (Option<String>, Option<String>) = conn
            .query_row("SELECT started_at, ended_at FROM turns", [], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })
            .unwrap();
        assert_eq!(turn, (None, Some("2026-01-01T00:00:01.5+02:00".to_owned())));
    }

    /// An archive written when only Claude and Codex were read keeps its sessions and takes
    /// sessions of the agents read since; an empty agent name is still refused.
    #[test]
    fn sessions_of_newer_agents_fit_an_older_archive() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(DB_FILE);
        {
            let conn = Connection::open(&path).unwrap();
            for step in &MIGRATIONS[..15] {
                conn.execute_batch(step.sql).unwrap();
            }
            conn.pragma_update(None, "user_version", 15).unwrap();
            conn.execute(
                "INSERT INTO sessions (session_key, agent, captured_at) VALUES ('old', 'claude', 'now')",
                [],
            )
            .unwrap();
            let refused = conn.execute(
                "INSERT INTO sessions (session_key, agent, captured_at) VALUES ('new', 'copilot', 'now')",
                [],
            );
            assert!(refused.is_err(), "the old CHECK lists two agents");
        }
        let store = Store::open(&path).unwrap();
        let conn = store.conn();
        conn.execute(
            "INSERT INTO sessions (session_key, agent, captured_at) VALUES ('new', 'copilot', 'now')",
            [],
        )
        .unwrap();
        let empty = conn.execute(
            "INSERT INTO sessions (session_key, agent, captured_at) VALUES ('bad', '', 'now')",
            [],
        );
        assert!(empty.is_err());
        let agents: Vec<String> = conn
            .prepare("SELECT agent FROM sessions ORDER BY session_key")
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .map(Result::unwrap)
            .collect();
        assert_eq!(agents, ["copilot", "claude"]);
    }

    #[test]
    fn check_constraints_reject_unknown_values() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join(DB_FILE)).unwrap();
        // Which names are agents is `Agent::parse`'s to say (0016); the table refuses no name.
        let bad = store.conn().execute(
            "INSERT INTO sessions (session_key, agent, captured_at) VALUES ('k', '', 'now')",
            [],
        );
        assert!(bad.is_err());
    }

    /// The capture writer's inserts check their enumerated columns without building a
    /// temporary B-tree per row, and the rewritten constraints still accept and refuse the
    /// same values, in a new database and in one migrated with rows already stored.
    #[test]
    fn hot_inserts_check_enumerations_without_temporary_tables() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(DB_FILE);
        {
            let conn = Connection::open(&path).unwrap();
            for step in &MIGRATIONS[..8] {
                conn.execute_batch(step.sql).unwrap();
            }
            conn.pragma_update(None, "user_version", 8).unwrap();
            conn.execute_batch(
                "INSERT INTO sessions (id, session_key, agent, captured_at) VALUES (1, 'k', 'claude', 'now');
                 INSERT INTO sources (id, source_key, session_id, agent, role, path, updated_at)
                   VALUES (1, 's', 1, 'claude', 'main', '/p', 'now');
                 INSERT INTO records (session_id, ordinal, source_id, line_no, block, record_hash, kind,
                   source_event_kind, tool_kind, outcome, prompt_source)
                   VALUES (1, 0, 1, 0, 0, 'h0', 'tool_call', 'x', 'exec', 'failed', NULL);",
            )
            .unwrap();
        }
        let store = Store::open(&path).unwrap();
        let conn = store.conn();
        for (table, insert) in [
            (
                "records",
                "INSERT INTO records (session_id, ordinal, source_id, line_no, block, record_hash, kind, \
                 source_event_kind, tool_kind, outcome, prompt_source) \
                 VALUES (1, 7, 1, 0, 0, 'h7', 'message', 'x', 'exec', 'failed', 'human')",
            ),
            (
                "captures",
                "INSERT INTO captures (session_id, source_id, capture_kind, trigger, captured_at, records_added) \
                 VALUES (1, 1, 'backfill', 'sync', 'now', 1)",
            ),
            (
                "secret_findings",
                "INSERT INTO secret_findings (session_id, source_id, line_no, field, rule, confidence, start_byte) \
                 VALUES (1, 1, 0, '', 'r', 'definite', 0)",
            ),
        ] {
            let sql: String = conn
                .query_row(
                    "SELECT sql FROM sqlite_schema WHERE type = 'table' AND name = ?1",
                    [table],
                    |r| r.get(0),
                )
                .unwrap();
            assert!(!sql.contains(" IN ("), "{table}: {sql}");
            let ops: Vec<String> = conn
                .prepare(&format!("EXPLAIN {insert}"))
                .unwrap()
                .query_map([], |r| r.get::<_, String>(1))
                .unwrap()
                .collect::<rusqlite::Result<_>>()
                .unwrap();
            assert!(
                !ops.iter().any(|op| op == "OpenEphemeral"),
                "{table}: {ops:?}"
            );
        }
        let insert = |ordinal: i64,
                      kind: &str,
                      tool_kind: Option<&str>,
                      outcome: Option<&str>,
                      source: Option<&str>| {
            conn.execute(
                "INSERT INTO records (session_id, ordinal, source_id, line_no, block, record_hash, kind, \
                 source_event_kind, tool_kind, outcome, prompt_source) \
                 VALUES (1, ?1, 1, 0, 0, ?1, ?2, 'x', ?3, ?4, ?5)",
                params![ordinal, kind, tool_kind, outcome, source],
            )
        };
        for kind in ["message", "tool_call", "tool_result", "reasoning", "event"] {
            insert(conn.last_insert_rowid() + 10, kind, None, None, None).unwrap();
        }
        insert(
            100,
            "message",
            Some("web_search"),
            Some("could_not_execute"),
            Some("spawned_agent"),
        )
        .unwrap();
        assert!(insert(101, "note", None, None, None).is_err());
        assert!(insert(102, "message", Some("shell"), None, None).is_err());
        assert!(insert(103, "message", None, Some("ok"), None).is_err());
        assert!(insert(104, "message", None, None, Some("bot")).is_err());
        assert!(
            conn.execute(
                "INSERT INTO captures (session_id, source_id, capture_kind, trigger, captured_at, records_added) \
                 VALUES (1, 1, 'backfill', 'cron', 'now', 1)",
                [],
            )
            .is_err()
        );
        let kept: String = conn
            .query_row(
                "SELECT kind FROM records WHERE record_hash = 'h0'",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(kept, "tool_call");
        let ok: String = conn
            .query_row("PRAGMA integrity_check", [], |r| r.get(0))
            .unwrap();
        assert_eq!(ok, "ok");
    }
}

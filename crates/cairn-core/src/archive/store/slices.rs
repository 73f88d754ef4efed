//! The reads a generated report's slice is made of: which sessions it holds and their totals.

use rusqlite::{Connection, params, params_from_iter, types::Value as SqlValue};

use crate::archive::Agent;

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
    /// The sum of each session's tokens as `cairn session --json` gives them.
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
            "SELECT COALESCE({col}, '(none)'), COUNT(*) FROM sessions s WHERE s.id IN ({ids}) GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT 10"
        ))?;
        let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?;
        rows.collect()
    };
    let mut totals = SliceTotals {
        // The agent a session ran as, as the slice's agent filter reads it.
        by_agent: count_by(super::agent_filter_sql())?,
        by_project: count_by("s.project")?,
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
    // Each session's tokens as its detail gives them (`session_tokens`: its messages' usage
    // summed, else the thread's running total), so a slice of Codex or Crush sessions, which
    // keep only a total, is not reported as using none, and the slice adds up to its sessions.
    let mut stmt = conn.prepare(&family)?;
    let members = stmt
        .query_map([], |r| r.get::<_, i64>(0))?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    let (mut input, mut output) = (0u64, 0u64);
    for id in members {
        let used = super::sessions::session_tokens(conn, id)?;
        input = input.saturating_add(used.input);
        output = output.saturating_add(used.output);
    }
    let signed = |n: u64| i64::try_from(n).unwrap_or(i64::MAX);
    (totals.input_tokens, totals.output_tokens) = (signed(input), signed(output));
    Ok(totals)
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
    /// Teammates' sessions pulled here too (those with a publisher); else only this
    /// machine's own.
    pub teammates: bool,
}

/// The top-level sessions in `slice` (sub-agents count as part of their parent, unless Cairn
/// holds no records of it: [`ORPHANED_SQL`](super::sessions::ORPHANED_SQL)), oldest first: row
/// ids.
pub fn sessions_in_slice(
    conn: &Connection,
    slice: &SessionSlice<'_>,
) -> rusqlite::Result<Vec<i64>> {
    let mut sql = format!(
        "SELECT s.id FROM sessions s WHERE (s.parent_key IS NULL OR {})",
        super::sessions::ORPHANED_SQL
    );
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
        sql.push_str(&format!(" AND {} = ?", super::agent_filter_sql()));
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
    if !slice.teammates {
        sql.push_str(" AND s.publisher IS NULL");
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
    /// The agent it ran as (`ran_as`, else the stored agent), as lists name it.
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
            "SELECT s.session_key, {ran_as},
                COALESCE(s.title, {first}),
                s.project, s.model, s.started_at, s.updated_at,
                s.turn_count, s.cwd, s.repo_id, {AUTOMATED}
             FROM sessions s WHERE s.id = ?1",
            ran_as = super::RAN_AS_SQL,
            first = super::first_request_sql("s.id")
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

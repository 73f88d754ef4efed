//! What the team push mirrors of the archive (`team::push` reads the archive only here): each
//! session with a signature that changes whenever anything mirrored of it changes, and its
//! records after a cursor.

use rusqlite::{Connection, params};

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

/// Every session this machine captured (never a teammate's pulled here), oldest first, with
/// its [`TeamMark`].
pub fn team_marks(conn: &Connection) -> rusqlite::Result<Vec<TeamMark>> {
    let mut stmt = conn.prepare_cached(
        "SELECT s.id, s.session_key, s.repo_id,
                coalesce(s.title, '') || '|' || coalesce(s.updated_at, '') || '|' ||
                coalesce(s.git_branch, '') || '|' || s.record_count || '|' || s.turn_count || '|' ||
                s.next_ordinal || '|' || coalesce(s.model, '') || '|' ||
                coalesce((SELECT group_concat(coalesce(r.revision, '') || coalesce(r.retracted_at, ''), ',')
                          FROM records r WHERE r.session_id = s.id AND r.unit IS NOT NULL), ''),
                coalesce((SELECT max(r.id) FROM records r WHERE r.session_id = s.id), 0)
         FROM sessions s WHERE s.publisher IS NULL ORDER BY s.id",
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
    /// The session's title, else its first request (as every local view heads it), so a
    /// teammate sees what it was about rather than its key.
    pub title: Option<String>,
    pub project: Option<String>,
    pub cwd: Option<String>,
    pub git_branch: Option<String>,
    pub model: Option<String>,
    pub started_at: Option<String>,
    pub updated_at: Option<String>,
    pub record_count: i64,
    pub turn_count: i64,
    /// The ordinal after the session's last record: a mirror's rows of the session end there.
    pub next_ordinal: i64,
}

pub fn team_session(conn: &Connection, session: i64) -> rusqlite::Result<TeamSessionRow> {
    let sql = format!(
        "SELECT session_key, agent, parent_key, relation, COALESCE(title, {}), project, cwd,
                git_branch, model, started_at, updated_at, record_count, turn_count, next_ordinal
         FROM sessions WHERE id = ?1",
        super::first_request_sql("sessions.id")
    );
    conn.prepare_cached(&sql)?.query_row([session], |r| {
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
            next_ordinal: r.get(13)?,
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

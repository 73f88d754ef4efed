//! The session list (`cairn sessions`, the desktop's session list).

use rusqlite::{Connection, params_from_iter, types::Value as SqlValue};
use serde::{Deserialize, Serialize};

use crate::archive::Agent;

/// Which sessions to list. Empty means every top-level session, newest first.
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
pub fn list(conn: &Connection, q: &SessionQuery) -> rusqlite::Result<Vec<SessionSummary>> {
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

pub(crate) fn count(v: i64) -> u32 {
    u32::try_from(v.max(0)).unwrap_or(u32::MAX)
}

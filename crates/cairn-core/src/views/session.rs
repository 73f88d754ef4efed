//! One session in detail: metadata, token usage, what its records are, its sub-agents and the
//! warnings met while reading it.

use std::collections::BTreeMap;

use rusqlite::{Connection, OptionalExtension, params};
use serde::{Deserialize, Serialize};

use super::sessions::count;
use crate::archive::capture::Warning;
use crate::archive::{Agent, TokenUsage};

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
pub fn resolve(conn: &Connection, key_or_id: &str) -> rusqlite::Result<Option<i64>> {
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

pub fn detail(conn: &Connection, id: i64) -> rusqlite::Result<SessionDetail> {
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

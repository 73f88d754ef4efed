//! Sessions: found by key or label, listed, detailed, and placed in their repository.

use std::collections::{BTreeMap, HashMap};

use rusqlite::{Connection, OptionalExtension, params, params_from_iter, types::Value as SqlValue};
use serde::{Deserialize, Serialize};

use super::count;
use crate::agent::stored;
use crate::archive::capture::Warning;
use crate::archive::{Agent, TokenUsage};

/// The key of the session with row id `session`.
pub fn session_key(conn: &Connection, session: i64) -> rusqlite::Result<String> {
    conn.query_row(
        "SELECT session_key FROM sessions WHERE id = ?1",
        params![session],
        |r| r.get(0),
    )
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

/// The session `label` names (its key, else the agent's session id: a captured session before
/// an imported one, then the latest; see [`resolve_session`]).
pub fn session_by_label(conn: &Connection, label: &str) -> rusqlite::Result<Option<SessionPlace>> {
    conn.query_row(
        "SELECT id, project, cwd, git_branch, agent FROM sessions WHERE session_key = ?1 OR session_id = ?1
             ORDER BY (session_key = ?1) DESC, (agent = 'atif') ASC, updated_at DESC LIMIT 1",
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
    /// The agent that ran a session of agent `atif` (a trajectory imported or pulled), as the
    /// trajectory names it (see [`crate::agent::ran_by`]).
    #[serde(default)]
    pub ran_by: Option<String>,
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
    /// Where the agent ran, when its transcript says: `cli`, `vscode`, `exec`, … (`ide` for a
    /// chat in the Cursor editor, which no command line resumes).
    #[serde(default)]
    pub thread_source: Option<String>,
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

/// Find a session by `session_key` or by the agent's own session id: a captured session wins
/// over an imported trajectory that names the same id (an ATIF file's `session_id` is whatever
/// its writer put there, so an import never takes `show`, `export`, `resume` or `forget` of a
/// session of this machine), then the newest. Else a key shortened to at least
/// [`KEY_PREFIX_MIN`] hex digits (as `recall extract` lists them) when it starts exactly one
/// session's key.
pub fn resolve_session(conn: &Connection, key_or_id: &str) -> rusqlite::Result<Option<i64>> {
    if let Some(found) = resolve_exactly(conn, key_or_id)? {
        return Ok(Some(found));
    }
    let Some(hex) = key_or_id.strip_prefix("sha256-") else {
        return Ok(None);
    };
    if hex.len() < KEY_PREFIX_MIN || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Ok(None);
    }
    // GLOB is case-sensitive (keys are lower-case hex) and reads the key's index as a range.
    let found: Vec<i64> = conn
        .prepare_cached("SELECT id FROM sessions WHERE session_key GLOB ?1 LIMIT 2")?
        .query_map([format!("sha256-{}*", hex.to_ascii_lowercase())], |r| {
            r.get(0)
        })?
        .collect::<rusqlite::Result<_>>()?;
    Ok(match found.as_slice() {
        [one] => Some(*one),
        _ => None,
    })
}

/// The fewest hex digits of a shortened session key [`resolve_session`] takes.
pub const KEY_PREFIX_MIN: usize = 5;

/// [`resolve_session`] by the whole key or the agent's id.
fn resolve_exactly(conn: &Connection, key_or_id: &str) -> rusqlite::Result<Option<i64>> {
    conn.query_row(
        &format!(
            "SELECT id FROM sessions WHERE session_key = ?1
         UNION ALL
         SELECT id FROM (SELECT s.id FROM sessions s WHERE s.session_id = ?1 AND {}
                         ORDER BY (s.agent = 'atif') ASC, s.updated_at DESC LIMIT 1)
         LIMIT 1",
            top_level_sql()
        ),
        [key_or_id],
        |r| r.get(0),
    )
    .optional()
}

/// What a person types to name session `id` in `cairn show`: the agent's own session id when it
/// is one plain word a shell passes as is and names this session ([`resolve_session`] prefers
/// the captured one of those sharing it: an import shares its id with the session it came
/// from), else
/// the session key, which always does.
pub fn session_handle(conn: &Connection, id: i64) -> rusqlite::Result<String> {
    let (key, agent_id): (String, Option<String>) = conn.query_row(
        "SELECT session_key, session_id FROM sessions WHERE id = ?1",
        [id],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )?;
    let Some(agent_id) = agent_id.filter(|s| {
        !s.is_empty()
            && s.len() <= 128
            && !s.starts_with('-')
            && s.bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b':'))
    }) else {
        return Ok(key);
    };
    Ok(if resolve_session(conn, &agent_id)? == Some(id) {
        agent_id
    } else {
        key
    })
}

/// How a person knows a session without its key (human output prints none, CLI.md): who ran
/// it, when it started, and what it was about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionName {
    pub agent: Agent,
    /// The agent that ran an imported or pulled trajectory, as it names itself.
    pub ran_by: Option<String>,
    pub started_at: Option<String>,
    /// Its title, else its first request (as the session list shows it); `None` when it has
    /// neither.
    pub about: Option<String>,
}

/// The [`SessionName`] of the session with row id `id`.
pub fn session_name(conn: &Connection, id: i64) -> rusqlite::Result<SessionName> {
    conn.prepare_cached(&format!(
        "SELECT s.agent, s.provider, COALESCE(s.started_at, s.updated_at), s.title, {}
         FROM sessions s WHERE s.id = ?1",
        super::first_request_sql("s.id")
    ))?
    .query_row([id], |r| {
        let agent: String = r.get(0)?;
        let (agent, ran_by) = stored(&agent, r.get::<_, Option<String>>(1)?.as_deref());
        let said = |s: Option<String>| s.filter(|s| !s.trim().is_empty());
        Ok(SessionName {
            agent,
            ran_by,
            started_at: r.get(2)?,
            about: said(r.get(3)?).or(said(r.get(4)?)),
        })
    })
}

/// Everything the archive knows of the session with row id `id`.
pub fn session_detail(conn: &Connection, id: i64) -> rusqlite::Result<SessionDetail> {
    let mut d = conn.query_row(
        "SELECT session_key, agent, session_id, relation, parent_key, title, project, cwd, git_branch,
                git_commit, model, provider, tool_version, started_at, updated_at, turn_count, record_count,
                unknown_types, cumulative_usage, secret_count, thread_source
         FROM sessions WHERE id = ?1",
        [id],
        |r| {
            let agent: String = r.get(1)?;
            let (agent, ran_by) = stored(&agent, r.get::<_, Option<String>>(11)?.as_deref());
            let unknown: String = r.get(17)?;
            let cumulative: Option<String> = r.get(18)?;
            Ok(SessionDetail {
                session_key: r.get(0)?,
                agent,
                ran_by,
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
                thread_source: r.get(20)?,
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
    if let Some(per_message) = per_message_tokens(conn, id)? {
        d.tokens = per_message;
    }
    // What the agent still holds, as a fresh read counts it: a rewound chat's dropped records
    // are shown, marked, but not counted (here, in the tools and the edited paths).
    let mut stmt = conn
        .prepare_cached("SELECT kind, COUNT(*) FROM records WHERE session_id = ?1 AND retracted_at IS NULL GROUP BY kind")?;
    for row in stmt.query_map([id], |r| Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?)))? {
        let (k, n) = row?;
        d.kinds.insert(k, count(n));
    }
    let mut stmt = conn.prepare_cached(
        "SELECT tool_name, COUNT(*) FROM records WHERE session_id = ?1 AND kind = 'tool_call' AND retracted_at IS NULL GROUP BY tool_name",
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
         WHERE r.session_id = ?1 AND r.file_paths IS NOT NULL AND r.retracted_at IS NULL ORDER BY j.value",
    )?;
    d.edited_paths = stmt
        .query_map([id], |r| r.get(0))?
        .collect::<rusqlite::Result<_>>()?;
    d.warnings = session_warnings(conn, id)?;
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT c.session_key, c.relation, c.agent_id, c.record_count, {}
         FROM sessions c WHERE c.parent_key = ?1 ORDER BY c.started_at, c.id",
        super::first_request_sql("c.id")
    ))?;
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

/// The sum of the usage the agent recorded on the messages of session `id`; `None` when it
/// recorded none there (an agent that keeps a running total for the thread instead).
fn per_message_tokens(conn: &Connection, id: i64) -> rusqlite::Result<Option<TokenUsage>> {
    let sums: (i64, i64, i64, i64, i64) = conn
        .prepare_cached(
            "SELECT COALESCE(SUM(input),0), COALESCE(SUM(output),0), COALESCE(SUM(cache_creation),0),
                    COALESCE(SUM(cache_read),0), COALESCE(SUM(reasoning),0)
             FROM token_usage WHERE session_id = ?1",
        )?
        .query_row([id], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
        })?;
    if sums == (0, 0, 0, 0, 0) {
        return Ok(None);
    }
    let u = |v: i64| u64::try_from(v).unwrap_or(0);
    Ok(Some(TokenUsage {
        input: u(sums.0),
        output: u(sums.1),
        cache_creation: u(sums.2),
        cache_read: u(sums.3),
        reasoning: u(sums.4),
    }))
}

/// The usage the agent recorded on each message of session `id`, by the ordinal of the first
/// record of that message that is the agent's own (its reply, reasoning or a tool call: where an
/// ATIF export's step `metrics` go); a message with none of those is left out.
pub fn message_tokens_by_ordinal(
    conn: &Connection,
    id: i64,
) -> rusqlite::Result<BTreeMap<u32, TokenUsage>> {
    // One pass over the session's records in order: each message's first such record.
    let mut first: HashMap<String, u32> = HashMap::new();
    let mut records = conn.prepare_cached(
        "SELECT message_id, ordinal FROM records
         WHERE session_id = ?1 AND message_id IS NOT NULL
           AND (kind IN ('reasoning', 'tool_call') OR (kind = 'message' AND role = 'assistant'))
         ORDER BY ordinal",
    )?;
    for row in records.query_map([id], |r| Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?)))? {
        let (message, ordinal) = row?;
        if let Ok(ordinal) = u32::try_from(ordinal) {
            first.entry(message).or_insert(ordinal);
        }
    }
    let mut usage = conn.prepare_cached(
        "SELECT message_id, input, output, cache_creation, cache_read, reasoning
         FROM token_usage WHERE session_id = ?1",
    )?;
    let c = |v: i64| u64::try_from(v).unwrap_or(0);
    let mut out = BTreeMap::new();
    for row in usage.query_map([id], |r| {
        Ok((
            r.get::<_, String>(0)?,
            TokenUsage {
                input: c(r.get(1)?),
                output: c(r.get(2)?),
                cache_creation: c(r.get(3)?),
                cache_read: c(r.get(4)?),
                reasoning: c(r.get(5)?),
            },
        ))
    })? {
        let (message, tokens) = row?;
        if let Some(&ordinal) = first.get(&message) {
            out.entry(ordinal)
                .or_insert_with(TokenUsage::default)
                .add(&tokens);
        }
    }
    Ok(out)
}

/// The token totals of session `id` as its detail gives them ([`session_detail`]): its
/// messages' usage summed, else the thread's running total; all 0 when neither was recorded.
pub fn session_tokens(conn: &Connection, id: i64) -> rusqlite::Result<TokenUsage> {
    if let Some(per_message) = per_message_tokens(conn, id)? {
        return Ok(per_message);
    }
    let cumulative: Option<String> = conn
        .prepare_cached("SELECT cumulative_usage FROM sessions WHERE id = ?1")?
        .query_row([id], |r| r.get(0))
        .optional()?
        .flatten();
    Ok(cumulative
        .and_then(|c| serde_json::from_str(&c).ok())
        .unwrap_or_default())
}

/// Which sessions to list (the session list view). Empty means every top-level session, newest first.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct SessionQuery {
    pub agent: Option<Agent>,
    pub branch: Option<String>,
    pub limit: Option<u32>,
    /// Only sessions active at or after this time (a day `YYYY-MM-DD` or an RFC 3339 time, as
    /// [`crate::text::time_bound`] reads one). `cairn sessions --since`'s; the window does not
    /// send it (left out of its bindings).
    #[serde(skip)]
    pub since: Option<String>,
    /// Only sessions begun before this time (exclusive, as the facade makes a day's end).
    #[serde(skip)]
    pub until: Option<String>,
}

/// One captured session, as listed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct SessionSummary {
    pub session_key: String,
    pub agent: Agent,
    /// The agent that ran a session of agent `atif` (a trajectory imported or pulled).
    #[serde(default)]
    pub ran_by: Option<String>,
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
    /// Sub-agent and compaction sessions attached to this one that hold records (as a sync
    /// counts them).
    pub subagent_count: u32,
    /// Preview of the first human prompt, when there is one.
    pub first_prompt: Option<String>,
    /// Who published it, for a teammate's session pulled here (their claim, not verified).
    #[serde(default)]
    pub published_by: Option<String>,
}

/// Top-level sessions with at least one record, newest first. Sub-agent and compaction
/// sessions are counted on their parent instead of listed, unless Cairn holds no records of the
/// parent ([`ORPHANED_SQL`]).
pub fn list_sessions(conn: &Connection, q: &SessionQuery) -> rusqlite::Result<Vec<SessionSummary>> {
    let mut sql = format!(
        "SELECT s.session_key, s.agent, s.session_id, s.project, s.cwd, s.git_branch, s.title, s.model,
                s.started_at, s.updated_at, s.turn_count, s.record_count, s.warning_count,
                (SELECT COUNT(*) FROM sessions c WHERE c.parent_key = s.session_key
                    AND c.relation IN ('subagent', 'compaction') AND c.record_count > 0),
                {},
                s.publisher, s.provider
         FROM sessions s
         WHERE {}",
        super::first_request_sql("s.id"),
        top_level_sql()
    );
    let mut args: Vec<SqlValue> = Vec::new();
    if let Some(agent) = q.agent {
        sql.push_str(&format!(" AND {} = ?", agent_filter_sql()));
        args.push(SqlValue::Text(agent.as_str().to_owned()));
    }
    if let Some(branch) = &q.branch {
        sql.push_str(" AND s.git_branch = ?");
        args.push(SqlValue::Text(branch.clone()));
    }
    // Active within the window, as an insights slice picks its sessions.
    if let Some(since) = &q.since {
        sql.push_str(" AND COALESCE(s.updated_at, s.started_at) >= ?");
        args.push(SqlValue::Text(since.clone()));
    }
    if let Some(until) = &q.until {
        sql.push_str(" AND COALESCE(s.started_at, s.updated_at) < ?");
        args.push(SqlValue::Text(until.clone()));
    }
    sql.push_str(" ORDER BY s.updated_at IS NULL, s.updated_at DESC, s.id DESC");
    if let Some(limit) = q.limit {
        sql.push_str(" LIMIT ?");
        args.push(SqlValue::Integer(i64::from(limit)));
    }
    let mut stmt = conn.prepare_cached(&sql)?;
    let rows = stmt.query_map(params_from_iter(args), |r| {
        let agent: String = r.get(1)?;
        let (agent, ran_by) = stored(&agent, r.get::<_, Option<String>>(16)?.as_deref());
        Ok(SessionSummary {
            session_key: r.get(0)?,
            agent,
            ran_by,
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
            published_by: r.get(15)?,
        })
    })?;
    rows.collect()
}

/// How many sessions one agent has in the archive (what the agent filters offer).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct AgentCount {
    pub agent: Agent,
    /// Top-level sessions with records, as the session list counts them.
    pub sessions: u32,
}

/// The agents with sessions in the archive, most sessions first (then by name). A session
/// counts for the agent the filters find it under ([`agent_filter_sql`]).
pub fn agent_counts(conn: &Connection) -> rusqlite::Result<Vec<AgentCount>> {
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {}, COUNT(*) FROM sessions s
         WHERE {}
         GROUP BY 1",
        agent_filter_sql(),
        top_level_sql()
    ))?;
    let mut out: Vec<AgentCount> = stmt
        .query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?)))?
        .filter_map(|row| match row {
            Ok((agent, n)) => Agent::parse(&agent).map(|agent| {
                Ok(AgentCount {
                    agent,
                    sessions: count(n),
                })
            }),
            Err(e) => Some(Err(e)),
        })
        .collect::<rusqlite::Result<_>>()?;
    out.sort_by(|a, b| b.sessions.cmp(&a.sessions).then(a.agent.cmp(&b.agent)));
    Ok(out)
}

/// The SQL for a session (of `sessions`, unaliased) read before its agent's transcripts last
/// changed ([`crate::archive::sources::unchanged_since`]): reading it again may change it. A
/// name this build does not know is a newer Cairn's agent, which it cannot read again.
fn outdated_sql() -> &'static str {
    static SQL: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
        let arms: String = Agent::EVERY
            .iter()
            .map(|a| {
                let since = crate::archive::sources::unchanged_since(*a);
                format!(" WHEN '{}' THEN {since}", a.as_str())
            })
            .collect();
        format!("read_by < (CASE agent{arms} ELSE 0 END)")
    });
    &SQL
}

/// How many sessions read from a transcript here were read before their agent's transcripts
/// last changed (a reindex may put them right). The window asks at every start: one count,
/// without [`read_before`]'s grouping (bench/RESULTS.md, "Outdated sessions counted per
/// agent": 37 ms at 200k sessions, against 122 ms grouped).
pub fn outdated_count(conn: &Connection) -> rusqlite::Result<u64> {
    conn.prepare_cached(&format!(
        "SELECT COUNT(*) FROM sessions
         WHERE {} AND EXISTS (SELECT 1 FROM sources WHERE sources.session_id = sessions.id)",
        outdated_sql()
    ))?
    .query_row([], |r| Ok(r.get::<_, i64>(0)?.max(0) as u64))
}

/// Of the sessions read from a transcript here, those read before their agent's transcripts
/// last changed (a reindex may put them right), counted by agent, most first; and how many
/// sessions there are.
pub fn read_before(conn: &Connection) -> rusqlite::Result<(Vec<(String, u64)>, u64)> {
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT agent, COUNT(*) FILTER (WHERE {}), COUNT(*) FROM sessions
         WHERE EXISTS (SELECT 1 FROM sources WHERE sources.session_id = sessions.id)
         GROUP BY agent",
        outdated_sql()
    ))?;
    let rows = stmt.query_map([], |r| {
        Ok((
            r.get::<_, String>(0)?,
            r.get::<_, i64>(1)?.max(0) as u64,
            r.get::<_, i64>(2)?.max(0) as u64,
        ))
    })?;
    let (mut older, mut sessions) = (Vec::new(), 0);
    for row in rows {
        let (agent, outdated, all) = row?;
        sessions += all;
        if outdated > 0 {
            older.push((agent, outdated));
        }
    }
    older.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    Ok((older, sessions))
}

/// The sessions a reindex reads (`session` alone, or `agent`'s, or every one; with `outdated`,
/// of those only the ones [`read_before`] counts), with their keys, in the order they were
/// first captured.
pub fn reindex_selection(
    conn: &Connection,
    session: Option<i64>,
    agent: Option<Agent>,
    outdated: bool,
) -> rusqlite::Result<Vec<(i64, String)>> {
    let only = if outdated {
        format!(" AND {}", outdated_sql())
    } else {
        String::new()
    };
    conn.prepare_cached(&format!(
        "SELECT id, session_key FROM sessions
         WHERE (?1 IS NULL OR id = ?1) AND (?2 IS NULL OR agent = ?2){only} ORDER BY id"
    ))?
    .query_map(params![session, agent.map(Agent::as_str)], |r| {
        Ok((r.get(0)?, r.get(1)?))
    })?
    .collect()
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

/// Name session `session`'s project `name` when it has none (a teammate's session pulled into
/// a repository: its folder left the publisher's machine as a relative path).
pub fn set_missing_project(conn: &Connection, session: i64, name: &str) -> rusqlite::Result<()> {
    conn.prepare_cached("UPDATE sessions SET project = ?2 WHERE id = ?1 AND project IS NULL")?
        .execute(params![session, name])?;
    Ok(())
}

/// What the `show` views head a session with.
#[derive(Debug, Clone)]
pub struct SessionHead {
    pub id: i64,
    pub key: String,
    pub agent: Agent,
    pub ran_by: Option<String>,
    pub title: Option<String>,
    pub started_at: Option<String>,
    /// The model the transcript names (the last one it named).
    pub model: Option<String>,
}

/// The SQL for the agent a session (alias `s`) is filtered by and shown as in search hits and
/// lists: `ran_as` (migration 25, [`crate::agent::ran_as`]) when set, else its `agent`.
pub const RAN_AS_SQL: &str = "COALESCE(s.ran_as, s.agent)";

/// The SQL for the agent a session (alias `s`) is filtered and counted under: [`RAN_AS_SQL`]
/// when this build knows that agent, else `atif`. A name this build does not know was written
/// by a newer Cairn sharing the data dir; lists show such a session as `atif` run by that name
/// ([`crate::agent::stored`]), so `--agent atif` and the agent counts find it there.
pub fn agent_filter_sql() -> &'static str {
    static SQL: std::sync::LazyLock<String> =
        std::sync::LazyLock::new(|| known_agent_sql(RAN_AS_SQL));
    &SQL
}

/// The SQL for the agent name `expr` as this build knows it: itself when it names one of this
/// build's agents, else `atif` (a newer Cairn's agent, which this build reads as `atif`).
pub fn known_agent_sql(expr: &str) -> String {
    let known: Vec<String> = Agent::EVERY
        .iter()
        .map(|a| format!("'{}'", a.as_str()))
        .collect();
    format!(
        "(CASE WHEN {expr} IN ({}) THEN {expr} ELSE 'atif' END)",
        known.join(", ")
    )
}

/// The SQL for a session (alias `s`) whose parent Cairn holds no records of (never read, or
/// forgotten): a sub-agent's rollout kept where its parent's is not. Such a session is listed
/// on its own, not lost under a parent nobody can open, until its parent is read.
pub const ORPHANED_SQL: &str = "NOT EXISTS (SELECT 1 FROM sessions p WHERE p.session_key = s.parent_key AND p.record_count > 0)";

/// How [`count_listed`] sorts the sessions it is given, by what the lists show of them.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Listed {
    /// The rows listed on their own ([`top_level_sql`]).
    pub listed: Vec<i64>,
    /// The rows with records counted on their parent (sub-agents and compactions).
    pub others: Vec<i64>,
    /// The paths of the files of sessions that hold no record (a transcript of `{}` alone, or
    /// of line types Cairn does not read): no list shows them, so no count may either.
    pub empty: Vec<String>,
}

/// Of the sessions with these row ids that are still there, how many are listed on their own
/// ([`top_level_sql`]), how many are counted on their parent (sub-agents and compactions), and
/// the files of those no list shows for want of a record. A row gone (a placeholder folded into
/// the session its file later named) is none of them.
pub fn count_listed(
    conn: &Connection,
    rows: impl IntoIterator<Item = i64>,
) -> rusqlite::Result<Listed> {
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT s.record_count > 0, {} FROM sessions s WHERE s.id = ?1",
        top_level_sql()
    ))?;
    let mut paths =
        conn.prepare_cached("SELECT path FROM sources WHERE session_id = ?1 ORDER BY path")?;
    let mut out = Listed::default();
    for row in rows {
        let found = stmt
            .query_row([row], |r| Ok((r.get::<_, bool>(0)?, r.get::<_, bool>(1)?)))
            .optional()?;
        match found {
            Some((true, true)) => out.listed.push(row),
            Some((true, false)) => out.others.push(row),
            Some((false, _)) => {
                for path in paths.query_map([row], |r| r.get::<_, String>(0))? {
                    out.empty.push(path?);
                }
            }
            None => {}
        }
    }
    out.empty.sort();
    out.empty.dedup();
    Ok(out)
}

/// The agent each of the sessions with these row ids is listed and filtered under
/// ([`agent_filter_sql`]), by row; a row gone is left out.
pub fn listed_agents(conn: &Connection, rows: &[i64]) -> rusqlite::Result<HashMap<i64, Agent>> {
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {} FROM sessions s WHERE s.id = ?1",
        agent_filter_sql()
    ))?;
    let mut out = HashMap::new();
    for &row in rows {
        let name: Option<String> = stmt.query_row([row], |r| r.get(0)).optional()?;
        if let Some(agent) = name.as_deref().and_then(Agent::parse) {
            out.insert(row, agent);
        }
    }
    Ok(out)
}

/// A session (alias `s`) listed on its own: one with records (a file that held none made a
/// row no person can open), neither a sub-agent nor a compaction of a session Cairn holds (a
/// fork stands on its own). The lists, the agent counts and a sync's report all count by it.
fn top_level_sql() -> String {
    format!(
        "(s.record_count > 0 AND (s.relation IS NULL OR s.relation = 'fork' OR {ORPHANED_SQL}))"
    )
}

/// Keep `ran_as` of the session with row id `id` true to its `agent` and `provider`: capture
/// calls it for every `atif` session it writes.
pub fn set_ran_as(conn: &Connection, id: i64) -> rusqlite::Result<()> {
    let row: Option<(String, Option<String>)> = conn
        .prepare_cached("SELECT agent, provider FROM sessions WHERE id = ?1")?
        .query_row([id], |r| Ok((r.get(0)?, r.get(1)?)))
        .optional()?;
    if let Some((agent, provider)) = row {
        let stored = Agent::parse(&agent);
        let ran = stored.map(|a| crate::agent::ran_as(a, provider.as_deref()));
        let value = ran.filter(|r| Some(*r) != stored).map(|r| r.as_str());
        conn.prepare_cached("UPDATE sessions SET ran_as = ?2 WHERE id = ?1 AND ran_as IS NOT ?2")?
            .execute(params![id, value])?;
    }
    Ok(())
}

/// [`set_ran_as`] for every `atif` session (migration 25).
pub fn set_every_ran_as(conn: &Connection) -> rusqlite::Result<()> {
    let ids: Vec<i64> = conn
        .prepare("SELECT id FROM sessions WHERE agent = 'atif' AND provider IS NOT NULL")?
        .query_map([], |r| r.get(0))?
        .collect::<rusqlite::Result<_>>()?;
    for id in ids {
        set_ran_as(conn, id)?;
    }
    Ok(())
}

/// Name the sessions that ran in a linked worktree after its repository (migration 40: they were
/// named after the worktree's folder). Returns each name that went, with the one that replaced
/// it, when no session keeps the old one (a folder named so outside any worktree).
pub fn rename_worktree_projects(conn: &Connection) -> rusqlite::Result<Vec<(String, String)>> {
    let rows: Vec<(i64, String, Option<String>)> = conn
        .prepare("SELECT id, cwd, project FROM sessions WHERE cwd IS NOT NULL")?
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
        .collect::<rusqlite::Result<_>>()?;
    let mut renamed: BTreeMap<String, std::collections::BTreeSet<String>> = BTreeMap::new();
    let mut update = conn.prepare("UPDATE sessions SET project = ?2 WHERE id = ?1")?;
    for (id, cwd, project) in rows {
        let Some(name) = crate::archive::project::of_linked_worktree(&cwd) else {
            continue;
        };
        if project.as_deref() == Some(name.as_str()) {
            continue;
        }
        update.execute(params![id, name])?;
        if let Some(old) = project {
            renamed.entry(old).or_default().insert(name);
        }
    }
    let mut kept = conn.prepare("SELECT EXISTS (SELECT 1 FROM sessions WHERE project = ?1)")?;
    let mut out = Vec::new();
    for (old, new) in renamed {
        // One new name for the old one, and no session left under it.
        if let ([new], false) = (
            new.into_iter().collect::<Vec<_>>().as_slice(),
            kept.query_row([&old], |r| r.get::<_, bool>(0))?,
        ) {
            out.push((old, new.clone()));
        }
    }
    Ok(out)
}

/// What the parsers could not read of session `id` (lines skipped or read in part), by file
/// and line; then, on its first file, the records of kinds this build does not read, counted
/// (kept in the retained copy: a newer Cairn's reindex reads them).
pub fn session_warnings(conn: &Connection, id: i64) -> rusqlite::Result<Vec<Warning>> {
    let mut out = conn
        .prepare_cached(
            "SELECT path, line, message FROM warnings WHERE session_id = ?1 ORDER BY path, line",
        )?
        .query_map([id], |r| {
            Ok(Warning {
                path: r.get(0)?,
                line: r.get::<_, Option<i64>>(1)?.map(count),
                message: r.get(2)?,
            })
        })?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    let unread: Option<(String, String)> = conn
        .prepare_cached(
            "SELECT s.unknown_types, (SELECT path FROM sources WHERE session_id = s.id ORDER BY id LIMIT 1)
             FROM sessions s WHERE s.id = ?1",
        )?
        .query_row([id], |r| Ok((r.get(0)?, r.get::<_, Option<String>>(1)?.unwrap_or_default())))
        .optional()?;
    if let Some((unread, path)) = unread {
        let kinds: BTreeMap<String, u64> = serde_json::from_str(&unread).unwrap_or_default();
        if !kinds.is_empty() {
            let listed: Vec<String> = kinds.iter().map(|(k, n)| format!("{k} ×{n}")).collect();
            out.push(Warning {
                path,
                line: None,
                message: format!(
                    "records of kinds this build of Cairn does not read, not shown: {} (the retained copy keeps them; after updating Cairn, `cairn reindex` reads them)",
                    listed.join(", ")
                ),
            });
        }
    }
    Ok(out)
}

/// The head of the session with row id `id`.
pub fn session_head(conn: &Connection, id: i64) -> rusqlite::Result<SessionHead> {
    conn.prepare_cached(
        "SELECT session_key, agent, title, started_at, provider, model FROM sessions WHERE id = ?1",
    )?
    .query_row([id], |r| {
        let agent: String = r.get(1)?;
        let (agent, ran_by) = stored(&agent, r.get::<_, Option<String>>(4)?.as_deref());
        Ok(SessionHead {
            id,
            key: r.get(0)?,
            agent,
            ran_by,
            title: r.get(2)?,
            started_at: r.get(3)?,
            model: r.get(5)?,
        })
    })
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

/// The session named by its key or its agent's session id, as [`resolve_session`] finds it (a
/// sub-agent or an import sharing the id never stands for it).
pub fn session_facts(conn: &Connection, key_or_id: &str) -> rusqlite::Result<Option<SessionFacts>> {
    let Some(id) = resolve_session(conn, key_or_id)? else {
        return Ok(None);
    };
    conn.prepare_cached(
        "SELECT id, session_key, COALESCE(project, ''), COALESCE(cwd, ''), COALESCE(git_branch, ''), agent
         FROM sessions WHERE id = ?1",
    )?
    .query_row([id], |r| {
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

/// Where a session ran and how active it was, as the branch list counts it.
#[derive(Debug, Clone)]
pub struct SessionPlaceRow {
    /// The agent it ran as ([`RAN_AS_SQL`]): a pulled Claude session is `claude`, a newer
    /// build's agent `atif` ([`crate::agent::stored`]), as the agent filters find it.
    pub agent: Agent,
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
        "SELECT repo_id, project, updated_at, turn_count, COALESCE(ran_as, agent) FROM sessions WHERE id = ?1",
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
                    agent: stored(&r.get::<_, String>(4)?, None).0,
                })
            })
            .optional()?;
        if let Some(row) = row {
            out.insert(id, row);
        }
    }
    Ok(out)
}

/// The row id of the session with this key or agent session id (every match), else of the one
/// session a shortened key names.
pub fn sessions_named(conn: &Connection, key_or_id: &str) -> rusqlite::Result<Vec<i64>> {
    let named: Vec<i64> = conn
        .prepare_cached("SELECT id FROM sessions WHERE session_key = ?1 OR session_id = ?1")?
        .query_map([key_or_id], |r| r.get(0))?
        .collect::<rusqlite::Result<_>>()?;
    if !named.is_empty() {
        return Ok(named);
    }
    // A shortened key, as `show` and every other command reads one.
    Ok(resolve_session(conn, key_or_id)?.into_iter().collect())
}

/// The key of the session with row id `session` and the agent lists badge it as (an imported
/// Claude trajectory is `claude`; a newer build's agent `atif`), if the archive holds it.
pub fn session_key_and_agent(
    conn: &Connection,
    session: i64,
) -> rusqlite::Result<Option<(String, Agent)>> {
    conn.prepare_cached(&format!(
        "SELECT s.session_key, {RAN_AS_SQL} FROM sessions s WHERE s.id = ?1"
    ))?
    .query_row([session], |r| {
        Ok((r.get(0)?, stored(&r.get::<_, String>(1)?, None).0))
    })
    .optional()
}

/// The row ids of every session the `agent` filter finds ([`agent_filter_sql`]), sub-agent
/// sessions included.
pub fn sessions_of_agent(conn: &Connection, agent: Agent) -> rusqlite::Result<Vec<i64>> {
    conn.prepare_cached(&format!(
        "SELECT s.id FROM sessions s WHERE {} = ?1 ORDER BY s.id",
        agent_filter_sql()
    ))?
    .query_map([agent.as_str()], |r| r.get(0))?
    .collect()
}

/// Who a session was, as an authorship note names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NoteIdentity {
    pub key: String,
    pub agent: String,
    pub model: Option<String>,
    /// The agent's own session id (a sub-agent's is its parent's), when the transcript had one.
    pub session_id: Option<String>,
}

/// Who session `session` (row id) was, as an authorship note names it.
pub fn session_identity(conn: &Connection, session: i64) -> rusqlite::Result<Option<NoteIdentity>> {
    conn.prepare_cached("SELECT session_key, agent, model, session_id FROM sessions WHERE id = ?1")?
        .query_row([session], |r| {
            Ok(NoteIdentity {
                key: r.get(0)?,
                agent: r.get(1)?,
                model: r.get(2)?,
                session_id: r.get(3)?,
            })
        })
        .optional()
}

/// The sessions an authorship note's prompt record names: by the agent's own session id `id`
/// (of `agent` when the note's tool is an agent Cairn knows). Sub-agents share their parent's
/// id, so among several the ones whose key the note also carries (`keys`, Cairn's own notes)
/// win, else the sessions that are no sub-agent's. A note that names no session that way may
/// be one Cairn wrote before it wrote agents' ids: `id` is then matched as a session key.
pub fn sessions_of_note(
    conn: &Connection,
    agent: Option<Agent>,
    id: &str,
    keys: &[String],
) -> rusqlite::Result<Vec<i64>> {
    let by_id: Vec<(i64, String, bool)> = conn
        .prepare_cached(
            "SELECT id, session_key, parent_key IS NOT NULL FROM sessions
             WHERE session_id = ?1 AND (?2 IS NULL OR agent = ?2) ORDER BY id",
        )?
        .query_map(params![id, agent.map(Agent::as_str)], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?))
        })?
        .collect::<rusqlite::Result<_>>()?;
    if by_id.is_empty() {
        return conn
            .prepare_cached("SELECT id FROM sessions WHERE session_key = ?1")?
            .query_map([id], |r| r.get(0))?
            .collect();
    }
    let keyed: Vec<i64> = by_id
        .iter()
        .filter(|(_, key, _)| keys.contains(key))
        .map(|(row, _, _)| *row)
        .collect();
    if !keyed.is_empty() {
        return Ok(keyed);
    }
    let top: Vec<i64> = by_id
        .iter()
        .filter(|(_, _, child)| !child)
        .map(|(row, _, _)| *row)
        .collect();
    Ok(if top.is_empty() {
        by_id.into_iter().map(|(row, _, _)| row).collect()
    } else {
        top
    })
}

/// The key of the session with row id `session`, if the archive holds it.
pub fn session_key_of(conn: &Connection, session: i64) -> rusqlite::Result<Option<String>> {
    conn.prepare_cached("SELECT session_key FROM sessions WHERE id = ?1")?
        .query_row([session], |r| r.get(0))
        .optional()
}

/// A session that holds its own story: it has records and is not a sub-agent (whose parent
/// already holds what it reported back). What Recall's extraction reads.
#[derive(Debug, Clone, PartialEq)]
pub struct StorySession {
    pub id: i64,
    pub key: String,
    pub project: String,
    /// The ordinal the next record will take (records below it are stored).
    pub next_ordinal: i64,
}

/// Which [`StorySession`]s to list; each bound present narrows.
#[derive(Debug, Clone, Copy, Default)]
pub struct StoryFilter<'a> {
    /// The session key or the agent's own session id.
    pub session: Option<&'a str>,
    pub project: Option<&'a str>,
    /// Active at or after this time (RFC 3339).
    pub since: Option<&'a str>,
    /// Idle since this time (RFC 3339), or with no activity time at all.
    pub idle_since: Option<&'a str>,
}

/// The [`StorySession`]s `f` keeps, most recently active first: this machine's own captures
/// only (a teammate's pulled session never reaches Recall).
pub fn story_sessions(
    conn: &Connection,
    f: StoryFilter<'_>,
) -> rusqlite::Result<Vec<StorySession>> {
    conn.prepare_cached(&format!(
        "SELECT s.id, s.session_key, COALESCE(s.project, ''), s.next_ordinal FROM sessions s
         WHERE s.record_count > 0
           AND (s.relation IS NULL OR s.relation != 'subagent' OR {ORPHANED_SQL})
           AND s.publisher IS NULL
           AND (?1 IS NULL OR s.session_key = ?1 OR s.session_id = ?1)
           AND (?2 IS NULL OR s.project = ?2)
           AND (?3 IS NULL OR s.updated_at >= ?3)
           AND (?4 IS NULL OR s.updated_at IS NULL OR s.updated_at <= ?4)
         ORDER BY s.updated_at DESC, s.id DESC"
    ))?
    .query_map(params![f.session, f.project, f.since, f.idle_since], |r| {
        Ok(StorySession {
            id: r.get(0)?,
            key: r.get(1)?,
            project: r.get(2)?,
            next_ordinal: r.get(3)?,
        })
    })?
    .collect()
}

/// A session as a reader of its whole story heads it: names, place, and where its records end.
#[derive(Debug, Clone, PartialEq)]
pub struct StoryHead {
    pub id: i64,
    pub key: String,
    pub title: String,
    pub project: String,
    pub cwd: String,
    pub branch: String,
    pub agent: String,
    /// The repository row (git's `repos`) the session ran in, if known.
    pub repo: Option<i64>,
    pub next_ordinal: i64,
}

/// The [`StoryHead`] of the session with row id `id`.
pub fn story_head(conn: &Connection, id: i64) -> rusqlite::Result<StoryHead> {
    conn.prepare_cached(
        "SELECT id, session_key, COALESCE(title, ''), COALESCE(project, ''), COALESCE(cwd, ''),
                COALESCE(git_branch, ''), agent, repo_id, next_ordinal
         FROM sessions WHERE id = ?1",
    )?
    .query_row([id], |r| {
        Ok(StoryHead {
            id: r.get(0)?,
            key: r.get(1)?,
            title: r.get(2)?,
            project: r.get(3)?,
            cwd: r.get(4)?,
            branch: r.get(5)?,
            agent: r.get(6)?,
            repo: r.get(7)?,
            next_ordinal: r.get(8)?,
        })
    })
}

/// Who published a session pulled from a teammate (`cairn pull` of a `publish --full`), when,
/// and the remote it came from. The publisher is the document's claim, not verified.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct PublishedBy {
    pub publisher: String,
    pub published_at: Option<String>,
    pub pulled_from: String,
}

/// Whether the session keyed `session_key` is in the archive, and if so who published it
/// (`None`: this machine's own capture).
pub fn session_origin(
    conn: &Connection,
    session_key: &str,
) -> rusqlite::Result<Option<Option<PublishedBy>>> {
    conn.prepare_cached(
        "SELECT publisher, published_at, pulled_from FROM sessions WHERE session_key = ?1",
    )?
    .query_row([session_key], |r| {
        Ok(published_by(r.get(0)?, r.get(1)?, r.get(2)?))
    })
    .optional()
}

/// Of the sessions with row ids `ids`, those shared through git: this machine's own that it
/// published (`true`) and those pulled from a teammate (`false`), by key.
pub fn shared_through_git(conn: &Connection, ids: &[i64]) -> rusqlite::Result<Vec<(String, bool)>> {
    let mut stmt = conn.prepare_cached(
        "SELECT session_key, publisher IS NULL FROM sessions
         WHERE id = ?1 AND (publisher IS NOT NULL OR published_at IS NOT NULL)",
    )?;
    let mut out = Vec::new();
    for &id in ids {
        if let Some(row) = stmt
            .query_row([id], |r| Ok((r.get(0)?, r.get(1)?)))
            .optional()?
        {
            out.push(row);
        }
    }
    Ok(out)
}

/// The publisher of the session with row id `id`, when it was pulled from a teammate.
pub fn published_by_of(conn: &Connection, id: i64) -> rusqlite::Result<Option<PublishedBy>> {
    conn.prepare_cached("SELECT publisher, published_at, pulled_from FROM sessions WHERE id = ?1")?
        .query_row([id], |r| Ok(published_by(r.get(0)?, r.get(1)?, r.get(2)?)))
        .optional()
        .map(Option::flatten)
}

fn published_by(
    publisher: Option<String>,
    published_at: Option<String>,
    pulled_from: Option<String>,
) -> Option<PublishedBy> {
    Some(PublishedBy {
        publisher: publisher?,
        published_at,
        pulled_from: pulled_from.unwrap_or_default(),
    })
}

/// Record that the transcript file at `path` (canonical) is a teammate's, published by `by`,
/// before capture reads it: the session capture stores from it is marked in capture's own
/// transaction (migration 22's trigger), and a session already stored from it now.
pub fn mark_pulled(conn: &Connection, path: &str, by: &PublishedBy) -> rusqlite::Result<()> {
    // Kept as the source's path is, which migration 22's trigger compares it with.
    let path = super::at_rest(path);
    conn.prepare_cached(
        "INSERT INTO pulled_sources (path, publisher, published_at, pulled_from) VALUES (?1, ?2, ?3, ?4)
         ON CONFLICT (path) DO UPDATE SET publisher = excluded.publisher,
             published_at = excluded.published_at, pulled_from = excluded.pulled_from",
    )?
    .execute(params![path, by.publisher, by.published_at, by.pulled_from])?;
    conn.prepare_cached(
        "UPDATE sessions SET publisher = ?2, published_at = ?3, pulled_from = ?4
         WHERE id IN (SELECT session_id FROM sources WHERE path = ?1)",
    )?
    .execute(params![path, by.publisher, by.published_at, by.pulled_from])?;
    Ok(())
}

//! Forgetting, the archive's part: which sessions a request names (with their sub-agents),
//! what of them the archive holds, and removing it: records and their full-text entries, turns,
//! sources, the session rows, and (after the commit) the retained copies. A tombstone per
//! source file, by key only, keeps the next sync from importing the file again; one per
//! session, by its key, keeps the session out when its transcript turns up under another path.

use std::collections::HashSet;
use std::path::Path;

use rusqlite::{Connection, OptionalExtension, params, params_from_iter};

use crate::archive::Agent;

/// Which sessions to forget: every given condition must hold. `session` is a row id.
#[derive(Debug, Clone, Default)]
pub struct Selector {
    pub session: Option<i64>,
    pub project: Option<String>,
    /// Sessions whose last activity is before this RFC 3339 time.
    pub before: Option<String>,
    pub agent: Option<Agent>,
}

/// One session that would go, as the confirmation lists it.
#[derive(Debug, Clone, PartialEq)]
pub struct Doomed {
    pub id: i64,
    pub key: String,
    pub agent: String,
    /// Its title, else its first request.
    pub title: Option<String>,
    pub started_at: Option<String>,
}

/// What the archive holds of a set of sessions.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Held {
    pub turns: u64,
    pub records: u64,
    /// Transcript files read (each has a retained copy).
    pub sources: u64,
}

fn placeholders(n: usize) -> String {
    vec!["?"; n].join(",")
}

/// The sessions `sel` names, and every session hanging off them (sub-agents, compactions,
/// forks), oldest first. An agent names the sessions it ran, as `cairn sessions --agent` lists
/// them ([`super::store::agent_filter_sql`]): an imported trajectory under the agent that ran
/// it, `atif` only when that agent is unknown (or a newer build's).
pub fn select(conn: &Connection, sel: &Selector) -> rusqlite::Result<Vec<Doomed>> {
    // A session is named as every view heads it: its title, else its first request.
    let columns = format!(
        "SELECT s.id, s.session_key, s.agent, COALESCE(s.title, {}), s.started_at FROM sessions s",
        super::store::first_request_sql("s.id")
    );
    let mut sql = format!("{columns} WHERE 1 = 1");
    let mut args: Vec<rusqlite::types::Value> = Vec::new();
    if let Some(id) = sel.session {
        sql.push_str(" AND s.id = ?");
        args.push(id.into());
    }
    if let Some(p) = &sel.project {
        sql.push_str(" AND s.project = ?");
        args.push(p.clone().into());
    }
    if let Some(b) = &sel.before {
        sql.push_str(" AND COALESCE(s.updated_at, s.started_at, s.captured_at) < ?");
        args.push(b.clone().into());
    }
    if let Some(a) = sel.agent {
        sql.push_str(&format!(" AND {} = ?", super::store::agent_filter_sql()));
        args.push(a.as_str().to_owned().into());
    }
    let row = |r: &rusqlite::Row<'_>| {
        Ok(Doomed {
            id: r.get(0)?,
            key: r.get(1)?,
            agent: r.get(2)?,
            title: r.get(3)?,
            started_at: r.get(4)?,
        })
    };
    let mut found: Vec<Doomed> = conn
        .prepare(&sql)?
        .query_map(params_from_iter(args), row)?
        .collect::<rusqlite::Result<_>>()?;
    // Children, to any depth: a sub-agent's transcript is part of its parent's session.
    let mut i = 0;
    let mut children = conn.prepare_cached(&format!("{columns} WHERE s.parent_key = ?1"))?;
    while i < found.len() {
        let key = found[i].key.clone();
        for child in children.query_map([&key], row)? {
            let child = child?;
            if !found.iter().any(|d| d.id == child.id) {
                found.push(child);
            }
        }
        i += 1;
    }
    found.sort_by(|a, b| a.started_at.cmp(&b.started_at).then(a.id.cmp(&b.id)));
    Ok(found)
}

/// How many turns, records and source files the archive holds for `sessions`.
pub fn held(conn: &Connection, sessions: &[i64]) -> rusqlite::Result<Held> {
    if sessions.is_empty() {
        return Ok(Held::default());
    }
    let list = placeholders(sessions.len());
    let count = |table: &str| -> rusqlite::Result<u64> {
        conn.query_row(
            &format!("SELECT COUNT(*) FROM {table} WHERE session_id IN ({list})"),
            params_from_iter(sessions),
            |r| r.get::<_, i64>(0),
        )
        .map(|n| n.max(0) as u64)
    };
    Ok(Held {
        turns: count("turns")?,
        records: count("records")?,
        sources: count("sources")?,
    })
}

/// The keys of the sessions `sessions` leave behind that carry the agent's session id of one of
/// them (an imported trajectory of it, a teammate's pulled copy): a forget by that id keeps
/// them, and says so. Only sessions of their own count on both sides: a sub-agent shares its
/// parent's id (Claude's do) and goes with its parent.
pub fn same_id_kept(conn: &Connection, sessions: &[i64]) -> rusqlite::Result<Vec<String>> {
    if sessions.is_empty() {
        return Ok(Vec::new());
    }
    let list = placeholders(sessions.len());
    let own = |s: &str| {
        format!(
            "({s}.parent_key IS NULL OR COALESCE({s}.relation, '') NOT IN ('subagent', 'compaction'))"
        )
    };
    conn.prepare(&format!(
        "SELECT o.session_key FROM sessions o
         WHERE {} AND o.session_id IN (
                 SELECT d.session_id FROM sessions d
                 WHERE d.id IN ({list}) AND d.session_id IS NOT NULL AND {})
           AND o.id NOT IN ({list})
         ORDER BY o.session_key",
        own("o"),
        own("d")
    ))?
    .query_map(
        params_from_iter(sessions.iter().chain(sessions.iter())),
        |r| r.get(0),
    )?
    .collect()
}

/// The turn row ids of `sessions` (the semantic room's vectors are keyed by them).
pub fn turn_ids(conn: &Connection, sessions: &[i64]) -> rusqlite::Result<Vec<i64>> {
    if sessions.is_empty() {
        return Ok(Vec::new());
    }
    conn.prepare(&format!(
        "SELECT id FROM turns WHERE session_id IN ({})",
        placeholders(sessions.len())
    ))?
    .query_map(params_from_iter(sessions), |r| r.get(0))?
    .collect()
}

/// Remove everything the archive holds of `sessions`, in the caller's transaction: full-text
/// entries first (the index is external content: it needs each record's text to unindex it,
/// and only records with a text or a tool input were indexed; unindexing another corrupts it),
/// then records, turns and every other row keyed by the session, then the sources and the
/// sessions. Each source gets a tombstone (`allow_reimport` lets the next sync read the file
/// again). Returns the records removed.
pub fn delete(
    conn: &Connection,
    sessions: &[i64],
    allow_reimport: bool,
    now: &str,
) -> rusqlite::Result<u64> {
    let mut records = 0u64;
    let mut tombstone = conn.prepare_cached(
        "INSERT INTO forgotten_sources (source_key, agent, allow_reimport, forgotten_at)
         SELECT source_key, agent, ?2, ?3 FROM sources WHERE session_id = ?1
         ON CONFLICT (source_key) DO UPDATE SET allow_reimport = excluded.allow_reimport,
             forgotten_at = excluded.forgotten_at",
    )?;
    for &id in sessions {
        super::store::unindex_session(conn, id)?;
        tombstone.execute(params![id, i64::from(allow_reimport), now])?;
        if allow_reimport {
            conn.prepare_cached(
                "DELETE FROM forgotten_sessions
                 WHERE session_key = (SELECT session_key FROM sessions WHERE id = ?1)",
            )?
            .execute([id])?;
        } else {
            conn.prepare_cached(
                "INSERT INTO forgotten_sessions (session_key, agent, forgotten_at)
                 SELECT session_key, agent, ?2 FROM sessions WHERE id = ?1
                 ON CONFLICT (session_key) DO UPDATE SET forgotten_at = excluded.forgotten_at",
            )?
            .execute(params![id, now])?;
        }
        for table in [
            "secret_findings",
            "warnings",
            "token_usage",
            "captures",
            "session_branches",
            "link_pending",
        ] {
            conn.execute(&format!("DELETE FROM {table} WHERE session_id = ?1"), [id])?;
        }
        for table in ["retained_rekey", "retained_swaps"] {
            conn.execute(
                &format!(
                    "DELETE FROM {table} WHERE source_id IN (SELECT id FROM sources WHERE session_id = ?1)"
                ),
                [id],
            )?;
        }
        records += conn.execute("DELETE FROM records WHERE session_id = ?1", [id])? as u64;
        conn.execute("DELETE FROM turns WHERE session_id = ?1", [id])?;
        conn.execute("DELETE FROM sources WHERE session_id = ?1", [id])?;
        conn.execute("DELETE FROM sessions WHERE id = ?1", [id])?;
    }
    Ok(records)
}

/// Rewrite the full-text index's segments so no deleted token stays in an old one.
pub fn compact_index(conn: &Connection) -> rusqlite::Result<()> {
    conn.execute(
        "INSERT INTO records_fts (records_fts) VALUES ('optimize')",
        [],
    )
    .map(drop)
}

/// Whether the file with `source_key` was forgotten and may not be read again.
pub fn is_forgotten(conn: &Connection, source_key: &str) -> rusqlite::Result<bool> {
    conn.query_row(
        "SELECT 1 FROM forgotten_sources WHERE source_key = ?1 AND allow_reimport = 0",
        [source_key],
        |_| Ok(()),
    )
    .optional()
    .map(|r| r.is_some())
}

/// Whether the session with `session_key` was forgotten and may not be imported again, from
/// whichever file.
pub fn is_forgotten_session(conn: &Connection, session_key: &str) -> rusqlite::Result<bool> {
    conn.prepare_cached("SELECT 1 FROM forgotten_sessions WHERE session_key = ?1")?
        .query_row([session_key], |_| Ok(()))
        .optional()
        .map(|r| r.is_some())
}

/// Tombstone the file `source_key` of `agent` (a forgotten session's transcript found under a
/// new path), so the next sync passes it over without reading it.
pub fn tombstone_source(
    conn: &Connection,
    source_key: &str,
    agent: &str,
    now: &str,
) -> rusqlite::Result<()> {
    conn.prepare_cached(
        "INSERT INTO forgotten_sources (source_key, agent, allow_reimport, forgotten_at)
         VALUES (?1, ?2, 0, ?3)
         ON CONFLICT (source_key) DO UPDATE SET allow_reimport = 0",
    )?
    .execute(params![source_key, agent, now])
    .map(drop)
}

/// The tombstones a lift takes away (see [`lift`]): how many files and how many sessions.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Tombstones {
    pub sources: u64,
    pub sessions: u64,
}

/// The condition on `forgotten_sources` or `forgotten_sessions` rows of a lift: of `agent`
/// (every agent's when `None`), laid at or after `since` (any time when `None`); a file's
/// tombstone only while it holds the file back (one with `allow_reimport` holds nothing).
fn lift_where(
    table: &str,
    agent: Option<Agent>,
    since: Option<&str>,
) -> (String, Vec<rusqlite::types::Value>) {
    let mut sql = format!("FROM {table} WHERE 1 = 1");
    if table == "forgotten_sources" {
        sql.push_str(" AND allow_reimport = 0");
    }
    let mut args: Vec<rusqlite::types::Value> = Vec::new();
    if let Some(agent) = agent {
        sql.push_str(" AND agent = ?");
        args.push(agent.as_str().to_owned().into());
    }
    if let Some(since) = since {
        sql.push_str(" AND forgotten_at >= ?");
        args.push(since.to_owned().into());
    }
    (sql, args)
}

/// How many tombstones [`lift`] would take away.
pub fn liftable(
    conn: &Connection,
    agent: Option<Agent>,
    since: Option<&str>,
) -> rusqlite::Result<Tombstones> {
    let count = |table: &str| -> rusqlite::Result<u64> {
        let (rows, args) = lift_where(table, agent, since);
        conn.query_row(
            &format!("SELECT COUNT(*) {rows}"),
            params_from_iter(args),
            |r| r.get::<_, i64>(0),
        )
        .map(|n| n.max(0) as u64)
    };
    Ok(Tombstones {
        sources: count("forgotten_sources")?,
        sessions: count("forgotten_sessions")?,
    })
}

/// The keys of the sessions whose tombstones [`lift`] would take away (of `agent`, laid at or
/// after `since`): for the rooms to say what of those stays forgotten with them.
pub fn liftable_sessions(
    conn: &Connection,
    agent: Option<Agent>,
    since: Option<&str>,
) -> rusqlite::Result<HashSet<String>> {
    let (rows, args) = lift_where("forgotten_sessions", agent, since);
    conn.prepare(&format!("SELECT session_key {rows}"))?
        .query_map(params_from_iter(args), |r| r.get(0))?
        .collect()
}

/// Take away the tombstones of forgotten files and sessions (of `agent`, laid at or after
/// `since`), so the next sync reads those transcripts again where they are still on disk (a
/// forget is undone only as far as the agent kept them: the archive's own copies are gone).
/// Tombstones of sessions shared through git (`forgotten_shared`) are not this room's and stay.
pub fn lift(
    conn: &Connection,
    agent: Option<Agent>,
    since: Option<&str>,
) -> rusqlite::Result<Tombstones> {
    let delete = |table: &str| -> rusqlite::Result<u64> {
        let (rows, args) = lift_where(table, agent, since);
        conn.execute(&format!("DELETE {rows}"), params_from_iter(args))
            .map(|n| n as u64)
    };
    Ok(Tombstones {
        sources: delete("forgotten_sources")?,
        sessions: delete("forgotten_sessions")?,
    })
}

/// The source keys of every file a tombstone holds back (sync passes them over).
pub fn forgotten_file_keys(conn: &Connection) -> rusqlite::Result<HashSet<String>> {
    conn.prepare("SELECT source_key FROM forgotten_sources WHERE allow_reimport = 0")?
        .query_map([], |r| r.get(0))?
        .collect()
}

/// Every tombstone whose file the archive does not hold now: `(agent, source_key)`. Their
/// retained copies must not exist (a forget killed after its commit may have left some).
pub fn tombstones_without_source(conn: &Connection) -> rusqlite::Result<Vec<(String, String)>> {
    conn.prepare(
        "SELECT f.agent, f.source_key FROM forgotten_sources f
         WHERE NOT EXISTS (SELECT 1 FROM sources s WHERE s.source_key = f.source_key)",
    )?
    .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
    .collect()
}

/// How many retained copies under `data_dir` belong to files a forget tombstoned: none, unless
/// a forget was stopped between its commit and its sweep (the next sync or forget deletes
/// them). Each agent's folder is read once.
pub fn leftover_copies(conn: &Connection, data_dir: &Path) -> rusqlite::Result<u64> {
    let mut doomed: std::collections::HashMap<String, std::collections::HashSet<String>> =
        std::collections::HashMap::new();
    for (agent, key) in tombstones_without_source(conn)? {
        doomed.entry(agent).or_default().insert(key);
    }
    let mut left = 0;
    for (agent, keys) in doomed {
        let Some(agent) = Agent::parse(&agent) else {
            continue;
        };
        let dir = crate::archive::retain::Retained::new(data_dir)
            .path(agent, "x", 0)
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_default();
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        left += entries
            .flatten()
            .filter(|e| {
                let name = e.file_name();
                let name = name.to_string_lossy();
                name.split_once('.')
                    .is_some_and(|(key, _)| keys.contains(key))
            })
            .count() as u64;
    }
    Ok(left)
}

/// Remove every retained copy (any generation) of the file `source_key` of `agent` under
/// `data_dir`. Returns how many files went.
pub fn remove_retained(data_dir: &Path, agent: &str, source_key: &str) -> std::io::Result<u64> {
    // The layout of `archive::retain`: `retained/<agent>/<source_key>.g<n>.jsonl.zst`.
    let Some(agent) = Agent::parse(agent) else {
        return Ok(0);
    };
    let dir = crate::archive::retain::Retained::new(data_dir)
        .path(agent, source_key, 0)
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default();
    let entries = match std::fs::read_dir(&dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(0),
        Err(e) => return Err(e),
    };
    let prefix = format!("{source_key}.");
    let mut removed = 0;
    for entry in entries {
        let entry = entry?;
        if entry.file_name().to_string_lossy().starts_with(&prefix) {
            std::fs::remove_file(entry.path())?;
            removed += 1;
        }
    }
    Ok(removed)
}

/// `files` without those a forget tombstoned (unless it allowed a re-import): a sync or a hook
/// does not bring a forgotten transcript back.
pub(crate) fn not_forgotten(
    conn: &Connection,
    files: &[crate::archive::discover::FoundFile],
) -> rusqlite::Result<Vec<crate::archive::discover::FoundFile>> {
    let any: bool = conn.query_row(
        "SELECT EXISTS (SELECT 1 FROM forgotten_sources WHERE allow_reimport = 0)",
        [],
        |r| r.get(0),
    )?;
    if !any {
        return Ok(files.to_vec());
    }
    let mut kept = Vec::with_capacity(files.len());
    for f in files {
        let key = std::fs::canonicalize(&f.path)
            .map(|p| crate::archive::store::source_key(f.agent, &p))
            .ok();
        match key {
            Some(k) if is_forgotten(conn, &k)? => {}
            _ => kept.push(f.clone()),
        }
    }
    Ok(kept)
}

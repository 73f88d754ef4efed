//! The skim's reads: a session's card and its turns.

use rusqlite::{Connection, OptionalExtension};

use crate::agent::stored;
use crate::archive::Agent;

/// A session as `skim` heads it.
#[derive(Debug, Clone)]
pub struct SessionCard {
    pub key: String,
    /// The agent it ran as ([`super::RAN_AS_SQL`]): a pulled Claude session is `claude`.
    pub agent: Agent,
    /// The agent that ran it when that is not `agent` ([`crate::agent::stored`]): an imported
    /// trajectory's, or a newer Cairn's agent this build does not know.
    pub ran_by: Option<String>,
    pub title: Option<String>,
    pub project: Option<String>,
    pub started_at: Option<String>,
    pub updated_at: Option<String>,
    pub turn_count: i64,
    pub record_count: i64,
    /// This machine published it.
    pub published: bool,
    /// A teammate published it and this machine pulled it (`cairn pull`).
    pub pulled: bool,
}

/// The card of the session with row id `id`.
pub fn session_card(conn: &Connection, id: i64) -> rusqlite::Result<SessionCard> {
    conn.prepare_cached(
        "SELECT session_key, COALESCE(ran_as, agent), title, project, started_at, updated_at, turn_count, record_count, published_at,
                publisher IS NOT NULL, agent, provider
         FROM sessions WHERE id = ?1",
    )?
    .query_row([id], |r| {
        let ran_as: String = r.get(1)?;
        let agent: String = r.get(10)?;
        let provider: Option<String> = r.get(11)?;
        Ok(SessionCard {
            key: r.get(0)?,
            agent: stored(&ran_as, None).0,
            ran_by: stored(&agent, provider.as_deref()).1,
            title: r.get(2)?,
            project: r.get(3)?,
            started_at: r.get(4)?,
            updated_at: r.get(5)?,
            turn_count: r.get(6)?,
            record_count: r.get(7)?,
            published: r.get::<_, Option<String>>(8)?.is_some(),
            pulled: r.get(9)?,
        })
    })
}

/// What a session is named by where its turns are not listed beside it (search, `why`): its
/// title, else its first request (most Claude sessions have no title). `None` for a session
/// with neither, or no session with row id `id`.
pub fn session_heading(conn: &Connection, id: i64) -> rusqlite::Result<Option<String>> {
    let sql = format!(
        "SELECT COALESCE(s.title, {}) FROM sessions s WHERE s.id = ?1",
        super::first_request_sql("s.id")
    );
    Ok(conn
        .prepare_cached(&sql)?
        .query_row([id], |r| r.get::<_, Option<String>>(0))
        .optional()?
        .flatten())
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

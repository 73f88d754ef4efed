//! The measurement ledger: every query and brief, what it returned and what was packed, with a
//! query id handed back to the caller. Nothing is recorded on a read-only data dir.

use rusqlite::{Connection, params};
use serde::Serialize;

use super::model::{MissReason, Surface};
use super::rank::Ranked;
use crate::error::Result;

/// What to record about one query.
pub struct Event<'a> {
    pub surface: Surface,
    pub query: &'a str,
    pub mode: &'a str,
    pub filters_json: String,
    pub trusted_only: bool,
    pub policy: &'a str,
    pub ranked: &'a [Ranked],
    pub packed: &'a [String],
    pub miss_reason: MissReason,
    pub session_key: Option<&'a str>,
    /// The front door that asked when it was not a person's (`mcp`), else empty.
    pub via: &'a str,
}

/// Record an event with its exposures; returns the query id. The query's text is stored
/// redacted: an agent asking through MCP may send what it read in a transcript, secret and all.
pub fn record(conn: &Connection, e: &Event<'_>, now: &str) -> Result<String> {
    let db = crate::store::err_in(conn);
    let id = uuid::Uuid::new_v4().to_string();
    let redactor = crate::archive::redact::Redactor::global();
    let query = redactor.redact_text(e.query, "query", &mut Vec::new());
    // The filters and the session are an agent's words too (a branch, a session id).
    let filters_json = match serde_json::from_str::<serde_json::Value>(&e.filters_json) {
        Ok(mut v) => {
            redactor.redact_json(&mut v, &mut Vec::new());
            v.to_string()
        }
        Err(_) => redactor
            .redact_text(&e.filters_json, "filters", &mut Vec::new())
            .into_owned(),
    };
    let session_key = e.session_key.map(super::agents::agent_label);
    conn.prepare_cached(
        "INSERT INTO recall_query_events (id, query_text, surface, filters_json, mode, trusted_only,
            score_policy_version, result_count, packed_count, top_score, miss_reason, session_key, created_at, via)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)",
    )
    .map_err(db)?
    .execute(params![
        id,
        query,
        e.surface.as_str(),
        filters_json,
        e.mode,
        e.trusted_only,
        e.policy,
        e.ranked.len() as i64,
        e.packed.len() as i64,
        e.ranked.first().map(|r| r.score),
        e.miss_reason.as_str(),
        session_key,
        now,
        e.via
    ])
    .map_err(db)?;
    let mut ins = conn
        .prepare_cached(
            "INSERT INTO recall_query_exposures (query_id, rank, entry_id, score, packed) VALUES (?1, ?2, ?3, ?4, ?5)",
        )
        .map_err(db)?;
    for (i, r) in e.ranked.iter().enumerate() {
        ins.execute(params![
            id,
            (i + 1) as i64,
            r.entry.id,
            r.score,
            e.packed.contains(&r.entry.id)
        ])
        .map_err(db)?;
    }
    Ok(id)
}

/// True when `id` is a query this archive recorded.
pub fn exists(conn: &Connection, id: &str) -> rusqlite::Result<bool> {
    conn.prepare_cached("SELECT 1 FROM recall_query_events WHERE id = ?1")?
        .exists([id])
}

/// Record a query and what it answered (`via`: see [`Event::via`]); returns the query id.
pub fn record_response(
    conn: &Connection,
    req: &super::QueryRequest,
    resp: &super::QueryResponse,
    surface: Surface,
    via: &str,
    now: &str,
) -> Result<String> {
    let packed: Vec<String> = resp
        .context
        .as_ref()
        .map(|c| c.entry_ids.clone())
        .unwrap_or_default();
    let event = Event {
        surface,
        query: &req.text,
        mode: req.mode.as_str(),
        filters_json: serde_json::to_string(&req.filters).unwrap_or_else(|_| "{}".into()),
        trusted_only: req.filters.trusted_only,
        policy: super::policy(req.mode),
        ranked: &resp.results,
        packed: &packed,
        miss_reason: resp.miss_reason,
        session_key: req.session_key.as_deref(),
        via,
    };
    record(conn, &event, now)
}

/// Counts for `recall stats`: how often entries were shown and packed.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct LedgerStats {
    pub queries: u32,
    pub briefs: u32,
    pub misses: u32,
}

pub fn stats(conn: &Connection) -> rusqlite::Result<LedgerStats> {
    conn.query_row(
        "SELECT COUNT(*), COALESCE(SUM(surface = 'brief'), 0), COALESCE(SUM(miss_reason != ''), 0) FROM recall_query_events",
        [],
        |r| {
            Ok(LedgerStats {
                queries: r.get::<_, i64>(0)?.max(0) as u32,
                briefs: r.get::<_, i64>(1)?.max(0) as u32,
                misses: r.get::<_, i64>(2)?.max(0) as u32,
            })
        },
    )
}

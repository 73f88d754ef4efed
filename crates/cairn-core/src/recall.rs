//! Recall: facts, decisions, procedures and warnings distilled from past sessions, each
//! anchored by evidence to records of its source session, trusted only once a person reviewed
//! it.
//!
//! [`model`] has the entry types; [`store`] reads and writes them with the shared filters;
//! [`analyze`] is the one analyzer behind both the full-text index ([`index`]) and the BM25F
//! ranker ([`rank`]); [`evidence`] binds and verifies record ranges; [`review`] is the inbox
//! (the only path to `human_reviewed` besides a reviewed import, [`import`]); [`stale`] flags
//! entries whose cited files changed later; [`brief`] packs ranked entries into a budget;
//! [`ledger`] records every query; [`output`] is what `--json` prints for queries and briefs; [`extract`] distils sessions into `unreviewed_auto` entries
//! through a model server ([`crate::llm`]). Recall writes only its own tables and reads the
//! archive through the store.

pub mod agents;
pub mod analyze;
pub mod brief;
pub mod carry;
pub mod corpus;
pub mod evidence;
pub mod extract;
pub mod forget;
pub mod hybrid;
pub mod import;
pub mod index;
pub mod ledger;
pub mod memory;
pub mod model;
pub mod output;
pub mod proposal;
pub mod rank;
pub mod review;
pub mod similar;
pub mod stale;
pub mod store;

use std::collections::BTreeMap;

use rusqlite::{Connection, params_from_iter};
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use rank::Ranked;
use store::Filters;

/// Retrieval modes (shared with the archive search).
pub use crate::semantic::Mode;

/// A query or brief request.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct QueryRequest {
    pub text: String,
    pub mode: Mode,
    pub filters: Filters,
    /// Pack the results into a context block (always on for a brief).
    pub context: bool,
    pub max_bytes: Option<u32>,
    pub max_tokens: Option<u32>,
    /// The session asking (recorded in the ledger for the usefulness signal), if known.
    pub session_key: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct QueryResponse {
    /// Ledger id of this query; `None` when nothing was recorded (read-only data dir).
    pub query_id: Option<String>,
    pub mode: Mode,
    pub trusted_only: bool,
    pub results: Vec<Ranked>,
    pub context: Option<brief::Packed>,
    /// `no_results`, `context_empty`, or empty.
    #[cfg_attr(feature = "specta", specta(type = String))]
    pub miss_reason: model::MissReason,
    /// Entries that matched but are not trusted, when a trusted-only search found none
    /// (so an empty brief can say what to review).
    pub untrusted_matches: u32,
    /// Entries still waiting for their vector when a vector or hybrid query ran: they were
    /// searched by words only (hybrid) or not at all (vector). 0 when every entry has one.
    #[serde(default)]
    pub vectors_pending: u32,
    /// A brief for one repository (`Cairn::recall_brief`): the line saying how many of its
    /// project's entries were left out as another repository's of the same name; absent when
    /// none were, and from every other answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub left_out: Option<String>,
}

/// The ranking policy of a mode (recorded in the ledger).
pub fn policy(mode: Mode) -> &'static str {
    match mode {
        Mode::Lexical => rank::POLICY,
        Mode::Vector => hybrid::VECTOR_POLICY,
        Mode::Hybrid => hybrid::HYBRID_POLICY,
    }
}

/// Run a query (or a brief) and say what was found. Recording is the caller's decision.
/// Vector and hybrid modes need `semantic` (the caller checked the vectors are fresh; the
/// query is embedded only when needed); a query with no text lists by recency in every mode.
pub fn query(
    conn: &Connection,
    req: &QueryRequest,
    now_secs: i64,
    semantic: Option<hybrid::PendingQuery<'_>>,
) -> Result<QueryResponse> {
    let has_words = !req.text.trim().is_empty();
    let results = match (req.mode, semantic) {
        (Mode::Lexical, _) => rank::rank(conn, &req.text, &req.filters, now_secs)?,
        (_, _) if !has_words => rank::rank(conn, &req.text, &req.filters, now_secs)?,
        (Mode::Vector, Some(pending)) => {
            let matrix = pending.matrix;
            let query = pending.embed()?;
            let sem = hybrid::SemanticQuery {
                matrix,
                query: &query.vector,
                floor: query.floor,
            };
            hybrid::vector(conn, &sem, &req.filters)?
        }
        (Mode::Hybrid, Some(pending)) => {
            hybrid::hybrid(conn, &req.text, pending, &req.filters, now_secs)?
        }
        (mode, None) => {
            return Err(Error::Invalid(format!(
                "{} search needs the query's embedding; use --mode lexical",
                mode.as_str()
            )));
        }
    };
    let mut untrusted_matches = 0;
    // Counted lexically in every mode (a vector search always finds something near).
    if results.is_empty() && req.filters.trusted_only {
        let mut open = req.filters.clone();
        open.trusted_only = false;
        untrusted_matches = rank::rank(conn, &req.text, &open, now_secs)?.len() as u32;
    }
    let context = req.context.then(|| {
        brief::pack(
            &results,
            req.max_bytes
                .map_or(brief::DEFAULT_MAX_BYTES, |b| b as usize),
            req.max_tokens.map(|t| t as usize),
        )
    });
    let miss_reason = if results.is_empty() {
        model::MissReason::NoResults
    } else if context.as_ref().is_some_and(|c| c.entry_ids.is_empty()) {
        model::MissReason::ContextEmpty
    } else {
        model::MissReason::None
    };
    Ok(QueryResponse {
        query_id: None,
        mode: req.mode,
        trusted_only: req.filters.trusted_only,
        results,
        context,
        miss_reason,
        untrusted_matches,
        vectors_pending: 0,
        left_out: None,
    })
}

/// Aggregates over every entry passing the filters (no row cap).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct RecallStats {
    pub count: u32,
    pub trusted: u32,
    pub stale: u32,
    pub provenance_revoked: u32,
    pub with_evidence: u32,
    pub by_type: BTreeMap<String, u32>,
    pub by_scope: BTreeMap<String, u32>,
    pub by_review_state: BTreeMap<String, u32>,
    pub by_project: BTreeMap<String, u32>,
    pub by_agent: BTreeMap<String, u32>,
    pub by_source_run: BTreeMap<String, u32>,
    pub by_lifecycle: BTreeMap<String, u32>,
}

pub fn stats(conn: &Connection, filters: &Filters) -> Result<RecallStats> {
    let db = crate::store::err_in(conn);
    let (where_sql, args) = filters.sql(conn)?;
    let sql = format!(
        "SELECT e.type, e.scope, e.review_state, e.project, e.agent, e.source_run_id, e.status,
                e.supersedes_entry_id != '', e.superseded_by_entry_id != '',
                ({}) AS trusted, e.stale, e.provenance_ok,
                EXISTS (SELECT 1 FROM recall_evidence v WHERE v.entry_id = e.id)
         FROM recall_entries e WHERE {where_sql}",
        model::TRUSTED_SQL
    );
    let mut stmt = conn.prepare_cached(&sql).map_err(db)?;
    let mut rows = stmt.query(params_from_iter(args)).map_err(db)?;
    let mut s = RecallStats::default();
    let bucket = |m: &mut BTreeMap<String, u32>, k: String| {
        *m.entry(if k.is_empty() { "(none)".to_owned() } else { k })
            .or_insert(0) += 1;
    };
    while let Some(r) = rows.next().map_err(db)? {
        s.count += 1;
        bucket(&mut s.by_type, r.get(0).map_err(db)?);
        bucket(&mut s.by_scope, r.get(1).map_err(db)?);
        bucket(&mut s.by_review_state, r.get(2).map_err(db)?);
        bucket(&mut s.by_project, r.get(3).map_err(db)?);
        bucket(&mut s.by_agent, r.get(4).map_err(db)?);
        bucket(&mut s.by_source_run, r.get(5).map_err(db)?);
        let status: String = r.get(6).map_err(db)?;
        let (sup, by): (bool, bool) = (r.get(7).map_err(db)?, r.get(8).map_err(db)?);
        let lifecycle = model::Lifecycle::of(sup, by, status == model::Status::Archived.as_str());
        bucket(&mut s.by_lifecycle, lifecycle.as_str().to_owned());
        if r.get::<_, bool>(9).map_err(db)? {
            s.trusted += 1;
        }
        if r.get::<_, bool>(10).map_err(db)? {
            s.stale += 1;
        }
        if !r.get::<_, bool>(11).map_err(db)? {
            s.provenance_revoked += 1;
        }
        if r.get::<_, bool>(12).map_err(db)? {
            s.with_evidence += 1;
        }
    }
    Ok(s)
}

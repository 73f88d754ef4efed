//! What `recall query --json` and `recall brief --json` print: typed documents built from a
//! [`QueryResponse`], so a front door serialises them and never assembles JSON itself.
//!
//! A query document is the core's own `QueryResponse` (what the desktop gets) with, in each
//! result, the flat fields the CLI's contract names (`id`, `title`, `type`, `scope`,
//! `review_state`, `trusted`, `matched_terms`, and `scores` / `evidence` when asked) beside the
//! core's `entry` and `breakdown`: a program may read it either way.

use std::collections::BTreeMap;

use serde::Serialize;

use super::QueryResponse;
use super::brief::Packed;
use super::model::{EntryType, MissReason, ReviewState, Scope, Status};
use super::rank::{Ranked, ScoreBreakdown};
use crate::semantic::Mode;

/// What a caller asked to see in each result besides the always-present fields.
#[derive(Debug, Clone, Copy, Default)]
pub struct Detail {
    /// Add `scores`: the score breakdown (the same as the core's `breakdown`).
    pub scores: bool,
    /// Add `evidence`: each anchor's session, record range, tool call and snippet.
    pub evidence: bool,
}

/// One evidence anchor as a result lists it.
#[derive(Debug, Clone, Serialize)]
pub struct EvidenceRef<'a> {
    pub session_key: &'a str,
    pub ordinal_start: u32,
    pub ordinal_end: u32,
    pub tool_use_id: Option<&'a str>,
    pub snippet: &'a str,
}

/// The flat fields of one result (those not already in [`Ranked`]).
#[derive(Debug, Clone, Serialize)]
pub struct Flat<'a> {
    pub id: &'a str,
    pub title: &'a str,
    #[serde(rename = "type")]
    pub entry_type: EntryType,
    pub scope: Scope,
    pub status: Status,
    pub review_state: ReviewState,
    pub trusted: bool,
    pub matched_terms: &'a [String],
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scores: Option<&'a ScoreBreakdown>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub evidence: Option<Vec<EvidenceRef<'a>>>,
}

impl<'a> Flat<'a> {
    pub fn of(r: &'a Ranked, detail: Detail) -> Flat<'a> {
        let e = &r.entry;
        Flat {
            id: &e.id,
            title: &e.title,
            entry_type: e.entry_type,
            scope: e.scope,
            status: e.status,
            review_state: e.review_state,
            trusted: e.is_trusted(),
            matched_terms: &r.breakdown.matched_terms,
            scores: detail.scores.then_some(&r.breakdown),
            evidence: detail.evidence.then(|| {
                e.evidence
                    .iter()
                    .map(|x| EvidenceRef {
                        session_key: &x.session_key,
                        ordinal_start: x.ordinal_start,
                        ordinal_end: x.ordinal_end,
                        tool_use_id: x.tool_use_id.as_deref(),
                        snippet: &x.snippet,
                    })
                    .collect()
            }),
        }
    }
}

/// One result of a query document: the core's [`Ranked`] and the flat fields.
#[derive(Debug, Clone, Serialize)]
pub struct QueryItem<'a> {
    #[serde(flatten)]
    pub ranked: &'a Ranked,
    #[serde(flatten)]
    pub flat: Flat<'a>,
}

/// Counts over a query's results (`--summary`).
#[derive(Debug, Clone, Default, Serialize)]
pub struct Summary {
    pub count: usize,
    pub by_type: BTreeMap<String, u32>,
    pub by_review_state: BTreeMap<String, u32>,
}

impl Summary {
    pub fn of(results: &[Ranked]) -> Summary {
        let mut s = Summary {
            count: results.len(),
            ..Summary::default()
        };
        for r in results {
            *s.by_type.entry(r.entry.entry_type.to_string()).or_insert(0) += 1;
            *s.by_review_state
                .entry(r.entry.review_state.to_string())
                .or_insert(0) += 1;
        }
        s
    }
}

/// `recall query --json`.
#[derive(Debug, Clone, Serialize)]
pub struct QueryDocument<'a> {
    pub query_id: Option<&'a str>,
    pub mode: Mode,
    pub trusted_only: bool,
    pub results: Vec<QueryItem<'a>>,
    pub context: Option<&'a Packed>,
    pub miss_reason: MissReason,
    pub untrusted_matches: u32,
    pub vectors_pending: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub left_out: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub summary: Option<Summary>,
}

impl<'a> QueryDocument<'a> {
    pub fn of(resp: &'a QueryResponse, detail: Detail, summary: bool) -> QueryDocument<'a> {
        QueryDocument {
            query_id: resp.query_id.as_deref(),
            mode: resp.mode,
            trusted_only: resp.trusted_only,
            results: resp
                .results
                .iter()
                .map(|r| QueryItem {
                    ranked: r,
                    flat: Flat::of(r, detail),
                })
                .collect(),
            context: resp.context.as_ref(),
            miss_reason: resp.miss_reason,
            untrusted_matches: resp.untrusted_matches,
            vectors_pending: resp.vectors_pending,
            left_out: resp.left_out.as_deref(),
            summary: summary.then(|| Summary::of(&resp.results)),
        }
    }
}

/// One entry of a brief: the flat fields with its score and why it matched.
#[derive(Debug, Clone, Serialize)]
pub struct BriefEntry<'a> {
    #[serde(flatten)]
    pub flat: Flat<'a>,
    pub score: f64,
    pub match_reasons: &'a [String],
}

/// `recall brief --json`: the packed text a task gets, what is in it and what was left out.
#[derive(Debug, Clone, Serialize)]
pub struct BriefDocument<'a> {
    pub query_id: Option<&'a str>,
    pub task: &'a str,
    pub mode: Mode,
    pub trusted_only: bool,
    pub text: &'a str,
    pub entry_ids: &'a [String],
    pub omitted_ids: &'a [String],
    pub bytes: u32,
    pub estimated_tokens: u32,
    pub miss_reason: MissReason,
    pub untrusted_matches: u32,
    /// How many of the repository's project's entries were left out as another repository's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub left_out: Option<&'a str>,
    pub entries: Vec<BriefEntry<'a>>,
}

impl<'a> BriefDocument<'a> {
    pub fn of(task: &'a str, resp: &'a QueryResponse) -> BriefDocument<'a> {
        let packed = resp.context.as_ref();
        BriefDocument {
            query_id: resp.query_id.as_deref(),
            task,
            mode: resp.mode,
            trusted_only: resp.trusted_only,
            text: packed.map_or("", |p| p.text.as_str()),
            entry_ids: packed.map_or(&[], |p| p.entry_ids.as_slice()),
            omitted_ids: packed.map_or(&[], |p| p.omitted_ids.as_slice()),
            bytes: packed.map_or(0, |p| p.bytes),
            estimated_tokens: packed.map_or(0, |p| p.estimated_tokens),
            miss_reason: resp.miss_reason,
            untrusted_matches: resp.untrusted_matches,
            left_out: resp.left_out.as_deref(),
            entries: resp
                .results
                .iter()
                .map(|r| BriefEntry {
                    flat: Flat::of(r, Detail::default()),
                    score: r.score,
                    match_reasons: &r.match_reasons,
                })
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A field added to `QueryResponse` must reach `recall query --json` too.
    #[test]
    fn a_query_document_carries_every_field_of_the_response() {
        let resp = QueryResponse {
            query_id: Some("q".into()),
            mode: Mode::Hybrid,
            trusted_only: true,
            results: Vec::new(),
            context: None,
            miss_reason: MissReason::NoResults,
            untrusted_matches: 2,
            vectors_pending: 3,
            left_out: Some("1 note from another repository also named p is left out.".into()),
        };
        let core = serde_json::to_value(&resp).unwrap();
        let doc = serde_json::to_value(QueryDocument::of(&resp, Detail::default(), false)).unwrap();
        for (key, value) in core.as_object().unwrap() {
            assert_eq!(
                doc.get(key),
                Some(value),
                "{key} missing from the query document"
            );
        }
    }
}

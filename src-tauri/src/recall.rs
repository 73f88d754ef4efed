//! Recall commands: the corpus (entries, counts), the review inbox and its actions, ranked
//! queries, and the entries of one session. Each is one facade call on the blocking pool.
//!
//! Trust changes only through the review actions here, which call the core's review methods
//! (one transaction each); the window never writes an entry any other way.

use cairn_core::ErrorReport;
use cairn_core::recall::agents::AgentUsage;
use cairn_core::recall::model::{Entry, ReviewState, Surface, Vocabulary};
use cairn_core::recall::review::{Edit, InboxItem};
use cairn_core::recall::store::Filters;
use cairn_core::recall::{QueryRequest, QueryResponse, RecallStats};
use serde::Serialize;
use tauri::State;

use crate::backend::Backend;
use crate::commands::with_cairn;

/// The ledger's name for queries asked from the window.
const SURFACE: Surface = Surface::Ui;

/// Entries passing the filters, most recently updated first (at most `filters.limit`, 500).
#[tauri::command]
#[specta::specta]
pub async fn recall_list(
    backend: State<'_, Backend>,
    filters: Filters,
) -> Result<Vec<Entry>, ErrorReport> {
    with_cairn(&backend, move |c| c.recall_list(&filters)).await
}

/// Counts over every entry passing the filters: by type, scope, review state, project, agent;
/// trusted, stale, revoked, with evidence.
#[tauri::command]
#[specta::specta]
pub async fn recall_stats(
    backend: State<'_, Backend>,
    filters: Filters,
) -> Result<RecallStats, ErrorReport> {
    with_cairn(&backend, move |c| c.recall_stats(&filters)).await
}

/// The entry types and scopes Recall knows, for the UI's pickers (the core's lists, not a copy).
#[tauri::command]
#[specta::specta]
pub fn recall_vocabulary() -> Vocabulary {
    Vocabulary::get()
}

/// A ranked query with each result's score breakdown, recorded in the query ledger.
#[tauri::command]
#[specta::specta]
pub async fn recall_query(
    backend: State<'_, Backend>,
    request: QueryRequest,
) -> Result<QueryResponse, ErrorReport> {
    with_cairn(&backend, move |c| c.recall_query(&request, SURFACE)).await
}

/// The review inbox: unreviewed, stale and provenance-revoked entries, stale first.
#[tauri::command]
#[specta::specta]
pub async fn recall_inbox(
    backend: State<'_, Backend>,
    limit: u32,
) -> Result<Vec<InboxItem>, ErrorReport> {
    with_cairn(&backend, move |c| c.recall_inbox(limit)).await
}

/// Accept an entry, applying the reviewer's edit first when there is one: it becomes human
/// reviewed and trusted. An entry whose provenance was revoked has its evidence checked again
/// first: refused (conflict, saying why) while it is changed or gone.
#[tauri::command]
#[specta::specta]
pub async fn recall_accept(
    backend: State<'_, Backend>,
    id: String,
    edit: Option<Edit>,
) -> Result<Entry, ErrorReport> {
    with_cairn(&backend, move |c| c.recall_accept(&id, edit.as_ref())).await
}

/// What taking an accept back did: the entry, back in the inbox, and the entry it had replaced
/// when that one serves again in its place (a reviewed entry is replaced only by a reviewed
/// one, so an accept taken back hands the place back).
#[derive(Debug, Clone, Serialize, specta::Type)]
pub struct Unaccepted {
    pub entry: Entry,
    pub reinstated: Option<Entry>,
}

/// Take an accept back (Undo): the entry is back in the inbox in `previous`, the review state
/// the window showed before the accept; refused (conflict) for an entry no person accepted. A
/// replacement that may no longer replace the entry it replaced hands its place back to it,
/// which `reinstated` names.
#[tauri::command]
#[specta::specta]
pub async fn recall_unaccept(
    backend: State<'_, Backend>,
    id: String,
    previous: ReviewState,
) -> Result<Unaccepted, ErrorReport> {
    with_cairn(&backend, move |c| {
        c.recall_unaccept_handing_back(&id, previous)
            .map(|u| Unaccepted {
                entry: u.entry,
                reinstated: u.reinstated,
            })
    })
    .await
}

/// What a rejection did: the entry, archived, and the entry it had replaced when that one is
/// served again in its place (a rejected replacement hands its place back).
#[derive(Debug, Clone, Serialize, specta::Type)]
pub struct Rejected {
    pub entry: Entry,
    pub reinstated: Option<Entry>,
}

/// Reject an entry: archived, no longer served. A replacement hands its place back to the
/// entry it replaced, which `reinstated` names.
#[tauri::command]
#[specta::specta]
pub async fn recall_reject(
    backend: State<'_, Backend>,
    id: String,
) -> Result<Rejected, ErrorReport> {
    with_cairn(&backend, move |c| {
        c.recall_reject_handing_back(&id).map(|r| Rejected {
            entry: r.entry,
            reinstated: r.reinstated,
        })
    })
    .await
}

/// What taking a rejection back did: the entry, where it was before, and the entry it
/// replaces again (archived behind it) when it was a replacement the supersede rules let stand.
#[derive(Debug, Clone, Serialize, specta::Type)]
pub struct Restored {
    pub entry: Entry,
    pub replaces: Option<Entry>,
}

/// Take a rejection back (Undo): the entry is where it was before, one never reviewed in the
/// inbox again; a replacement served again replaces again the entry it had replaced, which
/// `replaces` names.
#[tauri::command]
#[specta::specta]
pub async fn recall_restore(
    backend: State<'_, Backend>,
    id: String,
) -> Result<Restored, ErrorReport> {
    with_cairn(&backend, move |c| {
        c.recall_restore_replacing(&id).map(|r| Restored {
            entry: r.entry,
            replaces: r.replaces,
        })
    })
    .await
}

/// Replace entry `old_id` with the newer entry `new_id` (the old one is archived and points at
/// the new one). Not `old`/`new`: `new` cannot name a TypeScript parameter.
#[tauri::command]
#[specta::specta]
pub async fn recall_supersede(
    backend: State<'_, Backend>,
    old_id: String,
    new_id: String,
) -> Result<(), ErrorReport> {
    with_cairn(&backend, move |c| c.recall_supersede(&old_id, &new_id)).await
}

/// One entry laid out for review: why it waits, its evidence quoted from the transcript (and
/// checked now), accepted entries that say nearly the same.
#[tauri::command]
#[specta::specta]
pub async fn recall_proposal(
    backend: State<'_, Backend>,
    id: String,
) -> Result<cairn_core::recall::proposal::Proposal, ErrorReport> {
    with_cairn(&backend, move |c| c.recall_proposal(&id)).await
}

/// Merge entry `duplicate` into `keep`: its evidence joins `keep`, it is archived; the kept
/// entry's review state is unchanged (a merge trusts nothing).
#[tauri::command]
#[specta::specta]
pub async fn recall_merge(
    backend: State<'_, Backend>,
    duplicate: String,
    keep: String,
) -> Result<Entry, ErrorReport> {
    with_cairn(&backend, move |c| c.recall_merge(&duplicate, &keep)).await
}

/// Flag entries whose cited files changed in a commit since the last check (they return to
/// the inbox): the Inbox's Check for stale entries, the check every sync runs after its
/// capture. Says how many were trusted (no longer served) and how many were waiting already.
#[tauri::command]
#[specta::specta]
pub async fn recall_check_stale(
    backend: State<'_, Backend>,
) -> Result<cairn_core::recall::stale::Flagged, ErrorReport> {
    with_cairn(&backend, |c| c.recall_check_stale()).await
}

/// Entries whose evidence lies in a session (the session's Recall panel), any status.
#[tauri::command]
#[specta::specta]
pub async fn recall_for_session(
    backend: State<'_, Backend>,
    session_key: String,
) -> Result<Vec<Entry>, ErrorReport> {
    with_cairn(&backend, move |c| c.recall_for_session(&session_key)).await
}

/// The measurement ledger's agent view: entries agents were shown (through MCP) or rated, most
/// recently used first, with how often each was shown, packed into a brief, and rated.
#[tauri::command]
#[specta::specta]
pub async fn recall_agent_usage(
    backend: State<'_, Backend>,
    limit: u32,
) -> Result<Vec<AgentUsage>, ErrorReport> {
    with_cairn(&backend, move |c| c.recall_agent_usage(limit.min(500))).await
}

//! Global entries: what a person accepted as true everywhere ("prefer pnpm", "answer in
//! British English") reaches every repository, not only the one it was learnt in.
//!
//! The rule every door shares: an answer for one project serves that project's own entries
//! first, in their order, then the trusted global entries recorded under any other project, in
//! theirs, within the same limit and budget. A repository's own notes are about the work at
//! hand; a global one is a standing preference, so it takes the room the repository's own
//! leave. Only trusted global entries cross (accepted, reviewed by a person, transferable,
//! provenance intact): nothing unreviewed, and nothing scoped narrower than global, of another
//! project ever does. A global entry of the project itself is one of its own (served in its
//! place, whichever repository of that name it was learnt in).

use rusqlite::Connection;

use super::super::brief;
use super::super::model::{Entry, MissReason, Scope, Status, TRUSTED_SQL};
use super::super::rank::Ranked;
use super::super::store;
use super::super::{QueryRequest, QueryResponse};
use crate::error::Result;

/// Whether an entry of `scope` reaches every repository: its repository of origin says nothing
/// about where it applies.
pub fn everywhere(scope: Scope) -> bool {
    scope == Scope::Global
}

/// The trusted global entries of every project but `project`, most recently updated first, at
/// most `limit`: what the session-start brief adds after the repository's own.
pub(super) fn newest(conn: &Connection, project: &str, limit: u32) -> Result<Vec<Entry>> {
    let db = crate::store::err_in(conn);
    // The trusted partial index (migration 17) holds only trusted entries, few next to every
    // entry; an archive not migrated yet reads the table.
    let query = |indexed: &str| {
        format!(
            "SELECT e.id FROM recall_entries e {indexed}
             WHERE e.scope = 'global' AND e.project != ?1 AND {TRUSTED_SQL}
             ORDER BY e.updated_at DESC, e.id LIMIT ?2"
        )
    };
    let sql = match conn.prepare(&query("INDEXED BY recall_entries_trusted")) {
        Ok(_) => query("INDEXED BY recall_entries_trusted"),
        Err(_) => query(""),
    };
    let ids = conn
        .prepare_cached(&sql)
        .and_then(|mut stmt| {
            stmt.query_map(rusqlite::params![project, limit], |r| r.get::<_, String>(0))?
                .collect::<rusqlite::Result<Vec<_>>>()
        })
        .map_err(db)?;
    let mut entries = Vec::with_capacity(ids.len());
    for id in ids {
        if let Some(e) = store::get(conn, &id).map_err(db)?
            && e.is_trusted()
            && everywhere(e.scope)
        {
            entries.push(e);
        }
    }
    Ok(entries)
}

/// The request for the global entries that follow `req`'s answer: the same words, mode, limit
/// and kind filters, over every project, trusted global entries only. `None` when `req` does
/// not ask for one project as a place (no project, or every project already), or narrows it to
/// something a global entry of elsewhere cannot be (a folder, a branch, a session, an
/// extraction run, another scope, archived entries).
pub fn request(req: &QueryRequest) -> Option<QueryRequest> {
    let f = &req.filters;
    let set = |v: &Option<String>| v.as_deref().is_some_and(|v| !v.trim().is_empty());
    let narrower = set(&f.cwd)
        || set(&f.git_branch)
        || set(&f.source_session)
        || set(&f.source_run_id)
        || f.scope.is_some_and(|s| !everywhere(s))
        || f.status.is_some_and(|s| s != Status::Accepted);
    if !set(&f.project) || narrower {
        return None;
    }
    let mut global = req.clone();
    global.context = false;
    global.filters.project = None;
    global.filters.scope = Some(Scope::Global);
    global.filters.trusted_only = true;
    Some(global)
}

/// `globals` (ranked for [`request`]) after `resp`'s own results, up to `req`'s limit: those of
/// `req`'s project are left out (its own answer has them, ranked among its own), and the answer
/// is packed again when `req` asked for it packed, each global entry of another project saying
/// where it was learnt ([`labelled`]).
pub fn join(resp: &mut QueryResponse, globals: Vec<Ranked>, req: &QueryRequest) {
    let project = req.filters.project.as_deref().map(str::trim).unwrap_or("");
    let room = (req.filters.limit() as usize).saturating_sub(resp.results.len());
    let fresh: Vec<Ranked> = globals
        .into_iter()
        .filter(|g| {
            g.entry.project != project
                && g.entry.is_trusted()
                && everywhere(g.entry.scope)
                && !resp.results.iter().any(|r| r.entry.id == g.entry.id)
        })
        .take(room)
        .collect();
    if fresh.is_empty() {
        return;
    }
    resp.results.extend(fresh);
    // What matched but is untrusted is counted only for an answer with nothing in it.
    resp.untrusted_matches = 0;
    if req.context {
        resp.context = Some(brief::pack(
            &labelled(&resp.results, Some(project)),
            req.max_bytes
                .map_or(brief::DEFAULT_MAX_BYTES, |b| b as usize),
            req.max_tokens.map(|t| t as usize),
        ));
    }
    resp.miss_reason = if resp
        .context
        .as_ref()
        .is_some_and(|c| c.entry_ids.is_empty())
    {
        MissReason::ContextEmpty
    } else {
        MissReason::None
    };
}

/// `globals` (listed for [`request`]) after `own`, a listing of `req`'s project, up to `req`'s
/// limit, by [`join`]'s rule: `cairn recall list --project p`, which a brief's last line points
/// at for the notes it had no room for, lists what the brief held back, the global entries of
/// other projects among them.
pub fn join_listed(own: &mut Vec<Entry>, globals: Vec<Entry>, req: &QueryRequest) {
    let project = req.filters.project.as_deref().map(str::trim).unwrap_or("");
    let room = (req.filters.limit() as usize).saturating_sub(own.len());
    let fresh: Vec<Entry> = globals
        .into_iter()
        .filter(|g| {
            g.project != project
                && g.is_trusted()
                && everywhere(g.scope)
                && !own.iter().any(|e| e.id == g.id)
        })
        .take(room)
        .collect();
    own.extend(fresh);
}

/// `ranked` as a brief for `project` packs it: each global entry of another project has where
/// it was learnt after its title ("(global, from shop)"), so an agent reads it as a standing
/// preference carried over, not as a fact about this repository. `None` (every project's
/// brief): as they are, each is as much from there as any.
pub fn labelled(ranked: &[Ranked], project: Option<&str>) -> Vec<Ranked> {
    ranked
        .iter()
        .map(|r| {
            let mut r = r.clone();
            if let Some(label) = project.and_then(|p| label(&r.entry, p)) {
                r.entry.title = format!("{} {label}", r.entry.title.trim_end());
            }
            r
        })
        .collect()
}

/// The words [`labelled`] adds after the title of `entry` in a brief for `project`: `None`
/// unless it is a global entry recorded under another project.
pub fn label(entry: &Entry, project: &str) -> Option<String> {
    let from = crate::text::single_line(entry.project.trim());
    (everywhere(entry.scope) && entry.project.trim() != project.trim()).then(|| {
        if from.is_empty() {
            "(global)".to_owned()
        } else {
            format!("(global, from {from})")
        }
    })
}

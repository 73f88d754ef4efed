//! Recall's tables: writing entries with their evidence (and keeping the index in step), and
//! reading them back with the shared filters.

use crate::text::single_line;
use rusqlite::{Connection, OptionalExtension, params, params_from_iter, types::Value as SqlValue};
use serde::{Deserialize, Serialize};

use super::index::{self, IndexDoc};
use super::model::{Entry, EntryType, Evidence, ReviewState, Scope, Status, TRUSTED_SQL};
use crate::archive::Agent;
use crate::archive::store as archive;
use crate::error::{Error, Result};

/// Filters shared by `list`, `stats`, `query` and `brief`. All exact matches.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct Filters {
    pub project: Option<String>,
    pub cwd: Option<String>,
    pub git_branch: Option<String>,
    /// Entries whose evidence comes from this agent's sessions (an entry with no evidence in
    /// the archive: the agent it names).
    pub agent: Option<Agent>,
    #[serde(rename = "type")]
    pub entry_type: Option<EntryType>,
    pub scope: Option<Scope>,
    /// Default: accepted.
    pub status: Option<Status>,
    pub review_state: Option<ReviewState>,
    /// The source session, by `session_key` or the agent's own id.
    pub source_session: Option<String>,
    pub source_run_id: Option<String>,
    pub trusted_only: bool,
    /// Only entries flagged stale (true) or not stale (false).
    pub stale: Option<bool>,
    pub limit: Option<u32>,
}

/// Which parts of a directory's context narrow a search: its cwd, the branch checked out there,
/// or its worktree (root and branch). The CLI's `--current-cwd`, `--current-git-branch` and
/// `--current-worktree`; [`crate::Cairn::recall_filters_here`] resolves them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct Here {
    pub cwd: bool,
    pub git_branch: bool,
    pub worktree: bool,
}

impl Here {
    pub fn any(self) -> bool {
        self.cwd || self.git_branch || self.worktree
    }
}

/// Default and maximum page sizes (AgentsView's).
pub const DEFAULT_LIMIT: u32 = 50;
pub const MAX_LIMIT: u32 = 500;

impl Filters {
    /// The WHERE clause (over `recall_entries e`) and its parameters. Asking for trusted-only
    /// entries with a non-accepted status is an error, not an empty result.
    pub fn sql(&self, conn: &Connection) -> Result<(String, Vec<SqlValue>)> {
        let status = self.status.unwrap_or(Status::Accepted);
        if self.trusted_only && status != Status::Accepted {
            return Err(Error::Invalid(format!(
                "--trusted-only serves accepted entries only; drop --status {status} or --trusted-only"
            )));
        }
        let mut sql = String::from("e.status = ?");
        let mut args = vec![SqlValue::Text(status.as_str().to_owned())];
        let mut eq = |col: &str, v: &Option<String>| {
            if let Some(v) = v.as_deref().map(str::trim).filter(|v| !v.is_empty()) {
                sql.push_str(&format!(" AND e.{col} = ?"));
                args.push(SqlValue::Text(v.to_owned()));
            }
        };
        eq("project", &self.project);
        eq("cwd", &self.cwd);
        eq("git_branch", &self.git_branch);
        eq("source_run_id", &self.source_run_id);
        eq("type", &self.entry_type.map(|t| t.as_str().to_owned()));
        eq("scope", &self.scope.map(|t| t.as_str().to_owned()));
        eq(
            "review_state",
            &self.review_state.map(|t| t.as_str().to_owned()),
        );
        if let Some(s) = self
            .source_session
            .as_deref()
            .filter(|s| !s.trim().is_empty())
        {
            let ids =
                archive::sessions_named(conn, s.trim()).map_err(crate::store::err_in(conn))?;
            let list = ids.iter().map(i64::to_string).collect::<Vec<_>>().join(",");
            sql.push_str(&format!(" AND e.source_session_id IN ({list})"));
        }
        if let Some(agent) = self.agent {
            // The archive says which sessions are the agent's; an entry with evidence in one of
            // them is, and one with no evidence at all goes by the agent it names.
            let ids =
                archive::sessions_of_agent(conn, agent).map_err(crate::store::err_in(conn))?;
            let list = ids.iter().map(i64::to_string).collect::<Vec<_>>().join(",");
            sql.push_str(&format!(
                " AND (EXISTS (SELECT 1 FROM recall_evidence v WHERE v.entry_id = e.id AND v.session_id IN ({list}))
                       OR (e.agent = ? AND NOT EXISTS (SELECT 1 FROM recall_evidence v WHERE v.entry_id = e.id)))"
            ));
            args.push(SqlValue::Text(agent.as_str().to_owned()));
        }
        if let Some(stale) = self.stale {
            sql.push_str(if stale {
                " AND e.stale = 1"
            } else {
                " AND e.stale = 0"
            });
        }
        if self.trusted_only {
            sql.push_str(&format!(" AND {TRUSTED_SQL}"));
        }
        Ok((sql, args))
    }

    pub fn limit(&self) -> u32 {
        match self.limit {
            None | Some(0) => DEFAULT_LIMIT,
            Some(n) => n.min(MAX_LIMIT),
        }
    }
}

/// A new entry as extraction or import produces it.
#[derive(Debug, Clone)]
pub struct NewEntry {
    pub id: String,
    pub entry_type: EntryType,
    pub scope: Scope,
    pub status: Status,
    pub review_state: ReviewState,
    pub title: String,
    pub body: String,
    pub trigger: String,
    pub confidence: Option<f64>,
    pub uncertainty: String,
    pub project: String,
    pub cwd: String,
    pub git_branch: String,
    pub agent: String,
    pub source_session_id: Option<i64>,
    pub source_episode_id: String,
    pub source_run_id: String,
    pub extractor_method: String,
    pub model: String,
    pub label: String,
    pub transferable: bool,
    pub provenance_ok: bool,
    pub supersedes_entry_id: String,
    pub evidence: Vec<NewEvidence>,
}

/// Evidence already bound to the records (digest and record ids computed by `evidence`).
#[derive(Debug, Clone)]
pub struct NewEvidence {
    pub session_id: i64,
    pub ordinal_start: u32,
    pub ordinal_end: u32,
    pub start_record: String,
    pub end_record: String,
    pub content_digest: String,
    pub tool_use_id: Option<String>,
    pub snippet: String,
    pub files: Vec<String>,
    pub recorded_at: Option<String>,
}

/// Text a person or a model wrote, as an entry stores it, whichever way it came in (a model's
/// answer, an import, a reviewer's edit): printable (no escape sequence, control or bidi
/// character: [`crate::text::printable`]), its secrets redacted, absolute paths under the
/// session's repository made relative and any other replaced ([`crate::llm::Outbound::redact_answer`]),
/// trimmed. Agents are served it and terminals show it; nothing decides otherwise per door.
pub fn entry_text(ob: &crate::llm::Outbound, text: &str) -> String {
    ob.redact_answer(text).trim().to_owned()
}

/// Insert an entry, its evidence and its index row.
/// Its title and trigger are stored as one line ([`crate::text::single_line`]), whoever wrote
/// them.
pub fn insert(conn: &Connection, e: &NewEntry, now: &str) -> rusqlite::Result<()> {
    let reviewed_at = (e.review_state == ReviewState::HumanReviewed).then_some(now);
    let (title, trigger) = (single_line(&e.title), single_line(&e.trigger));
    conn.prepare_cached(
        "INSERT INTO recall_entries (id, type, scope, status, review_state, title, body, trigger, confidence,
            uncertainty, project, cwd, git_branch, agent, source_session_id, source_episode_id, source_run_id,
            extractor_method, model, label, transferable, provenance_ok, supersedes_entry_id, created_at,
            updated_at, reviewed_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21,
            ?22, ?23, ?24, ?24, ?25)",
    )?
    .execute(params![
        e.id,
        e.entry_type.as_str(),
        e.scope.as_str(),
        e.status.as_str(),
        e.review_state.as_str(),
        title,
        e.body,
        trigger,
        e.confidence,
        e.uncertainty,
        e.project,
        e.cwd,
        e.git_branch,
        e.agent,
        e.source_session_id,
        e.source_episode_id,
        e.source_run_id,
        e.extractor_method,
        e.model,
        e.label,
        e.transferable,
        e.provenance_ok,
        e.supersedes_entry_id,
        now,
        reviewed_at,
    ])?;
    let rowid = conn.last_insert_rowid();
    let mut ins = conn.prepare_cached(
        "INSERT INTO recall_evidence (entry_id, session_id, ordinal_start, ordinal_end, start_record, end_record,
            content_digest, tool_use_id, snippet, files, recorded_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
    )?;
    for ev in &e.evidence {
        ins.execute(params![
            e.id,
            ev.session_id,
            ev.ordinal_start,
            ev.ordinal_end,
            ev.start_record,
            ev.end_record,
            ev.content_digest,
            ev.tool_use_id,
            ev.snippet,
            serde_json::to_string(&ev.files).unwrap_or_else(|_| "[]".into()),
            ev.recorded_at,
        ])?;
    }
    let snippets: Vec<&str> = e.evidence.iter().map(|ev| ev.snippet.as_str()).collect();
    index::index(
        conn,
        rowid,
        &IndexDoc {
            title: &title,
            body: &e.body,
            trigger: &trigger,
            evidence: &snippets.join("\n"),
        },
    )
}

/// Re-index an entry after its text changed.
pub fn reindex(conn: &Connection, id: &str) -> rusqlite::Result<()> {
    let row: Option<(i64, String, String, String)> = conn
        .prepare_cached("SELECT rowid, title, body, trigger FROM recall_entries WHERE id = ?1")?
        .query_row([id], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
        .optional()?;
    let Some((rowid, title, body, trigger)) = row else {
        return Ok(());
    };
    let snippets: String = conn
        .prepare_cached("SELECT COALESCE(group_concat(snippet, char(10)), '') FROM recall_evidence WHERE entry_id = ?1")?
        .query_row([id], |r| r.get(0))?;
    index::index(
        conn,
        rowid,
        &IndexDoc {
            title: &title,
            body: &body,
            trigger: &trigger,
            evidence: &snippets,
        },
    )
}

/// Entries of project `old` are of project `new` (migration 40: a linked worktree's sessions are
/// its repository's project).
pub fn rename_project(conn: &Connection, old: &str, new: &str) -> rusqlite::Result<usize> {
    conn.prepare_cached("UPDATE recall_entries SET project = ?2 WHERE project = ?1")?
        .execute([old, new])
}

pub fn exists(conn: &Connection, id: &str) -> rusqlite::Result<bool> {
    Ok(conn
        .prepare_cached("SELECT 1 FROM recall_entries WHERE id = ?1")?
        .query_row([id], |_| Ok(()))
        .optional()?
        .is_some())
}

/// The fewest characters of an entry id [`resolve_entry_id`] takes as the start of one: ids
/// extraction makes are hex digests, and eight digits leave a chance collision rare enough that
/// a person's copy of a listing's short id names one entry.
pub const ID_PREFIX_MIN: usize = 8;

/// How many entries an ambiguous start's error names.
const AMBIGUOUS_SHOWN: usize = 5;

/// The entry id a person gave: the whole id, or else the start of exactly one entry's id, at
/// least [`ID_PREFIX_MIN`] characters long (as sessions take the start of their key). A whole
/// id always wins, even when it also starts longer ones. A start that several ids share is
/// refused naming up to [`AMBIGUOUS_SHOWN`] of them (each id shortened to tell it from the
/// others, with its title on one line); a shorter start is refused saying how many characters
/// it takes.
pub fn resolve_entry_id(conn: &Connection, given: &str) -> Result<String> {
    let db = crate::store::err_in(conn);
    if exists(conn, given).map_err(db)? {
        return Ok(given.to_owned());
    }
    let not_found = |more: &str| {
        Error::NotFound(format!(
            "recall entry {given:?}{more}; list entries with `cairn recall list`"
        ))
    };
    let len = given.chars().count();
    if len == 0 {
        return Err(not_found(""));
    }
    if len < ID_PREFIX_MIN {
        return Err(not_found(&format!(
            " (the start of an id names an entry from {ID_PREFIX_MIN} characters on; give more of it)"
        )));
    }
    // substr, not LIKE or GLOB: an imported id may hold `_`, `%` or `*`, which those read as
    // wildcards. One more row than shown says whether there are more.
    let found: Vec<(String, String)> = conn
        .prepare_cached(
            "SELECT id, title FROM recall_entries WHERE substr(id, 1, ?2) = ?1 ORDER BY id LIMIT ?3",
        )
        .and_then(|mut s| {
            s.query_map(
                params![given, len as i64, (AMBIGUOUS_SHOWN + 1) as i64],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )?
            .collect()
        })
        .map_err(db)?;
    match found.as_slice() {
        [] => Err(not_found("")),
        [(one, _)] => Ok(one.clone()),
        many => {
            let shown = &many[..many.len().min(AMBIGUOUS_SHOWN)];
            let ids: Vec<&str> = shown.iter().map(|(id, _)| id.as_str()).collect();
            let listed: Vec<String> = shown
                .iter()
                .map(|(id, title)| {
                    format!(
                        "{} {:?}",
                        distinct_start(id, &ids),
                        crate::text::one_line(title, AMBIGUOUS_TITLE_CHARS)
                    )
                })
                .collect();
            let more = if many.len() > AMBIGUOUS_SHOWN {
                ", and more"
            } else {
                ""
            };
            Err(Error::Invalid(format!(
                "{given:?} starts the ids of several recall entries: {}{more}; give more of the id",
                listed.join(", ")
            )))
        }
    }
}

/// How many characters of a title an ambiguous start's error shows.
const AMBIGUOUS_TITLE_CHARS: usize = 60;

/// The start of `id` that tells it from every other of `ids`, at least 12 characters (a
/// listing's short id) and at most the whole id.
fn distinct_start<'a>(id: &'a str, ids: &[&str]) -> &'a str {
    let shared = ids
        .iter()
        .filter(|other| **other != id)
        .map(|other| {
            id.chars()
                .zip(other.chars())
                .take_while(|(a, b)| a == b)
                .count()
        })
        .max()
        .unwrap_or(0);
    let want = (shared + 1).max(12);
    match id.char_indices().nth(want) {
        Some((at, _)) => &id[..at],
        None => id,
    }
}

pub(crate) const ENTRY_COLUMNS: &str = "e.id, e.type, e.scope, e.status, e.review_state, e.title, e.body, e.trigger,
    e.confidence, e.uncertainty, e.project, e.cwd, e.git_branch, e.agent,
    e.source_session_id, e.source_episode_id, e.source_run_id,
    e.extractor_method, e.model, e.transferable, e.provenance_ok, e.provenance_note, e.stale, e.stale_note,
    e.supersedes_entry_id, e.superseded_by_entry_id, e.created_at, e.updated_at, e.reviewed_at, e.rowid";

/// An entry as its row holds it: the source session still a row id (see [`complete`]).
pub(crate) struct EntryRow {
    entry: Entry,
    rowid: i64,
    source_session: Option<i64>,
}

/// Map a row of [`ENTRY_COLUMNS`] (source session unnamed, evidence not loaded: [`complete`]).
pub(crate) fn entry_from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<EntryRow> {
    let bad = |i: usize, e: Error| {
        rusqlite::Error::FromSqlConversionFailure(i, rusqlite::types::Type::Text, Box::new(e))
    };
    let t: String = r.get(1)?;
    let sc: String = r.get(2)?;
    let st: String = r.get(3)?;
    let rs: String = r.get(4)?;
    let mut entry = Entry {
        id: r.get(0)?,
        entry_type: EntryType::parse(&t).map_err(|e| bad(1, e))?,
        scope: Scope::parse(&sc).map_err(|e| bad(2, e))?,
        status: Status::parse(&st).map_err(|e| bad(3, e))?,
        review_state: ReviewState::parse(&rs).map_err(|e| bad(4, e))?,
        title: r.get(5)?,
        body: r.get(6)?,
        trigger: r.get(7)?,
        confidence: r.get(8)?,
        uncertainty: r.get(9)?,
        project: r.get(10)?,
        cwd: r.get(11)?,
        git_branch: r.get(12)?,
        agent: r.get(13)?,
        source_session_key: None,
        source_episode_id: r.get(15)?,
        source_run_id: r.get(16)?,
        extractor_method: r.get(17)?,
        model: r.get(18)?,
        transferable: r.get(19)?,
        provenance_ok: r.get(20)?,
        trusted: false,
        provenance_note: r.get(21)?,
        stale: r.get(22)?,
        stale_note: r.get(23)?,
        supersedes_entry_id: r.get(24)?,
        superseded_by_entry_id: r.get(25)?,
        created_at: r.get(26)?,
        updated_at: r.get(27)?,
        reviewed_at: r.get(28)?,
        evidence: Vec::new(),
    };
    entry.trusted = entry.is_trusted();
    Ok(EntryRow {
        entry,
        rowid: r.get(29)?,
        source_session: r.get(14)?,
    })
}

/// The entry of a row with its source session named (by the archive) and its evidence loaded,
/// and its row id.
pub(crate) fn complete(conn: &Connection, row: EntryRow) -> rusqlite::Result<(Entry, i64)> {
    let mut entry = row.entry;
    if let Some(session) = row.source_session {
        entry.source_session_key = archive::session_key_of(conn, session)?;
    }
    entry.evidence = evidence_of(conn, &entry.id)?;
    Ok((entry, row.rowid))
}

pub fn evidence_of(conn: &Connection, id: &str) -> rusqlite::Result<Vec<Evidence>> {
    let mut stmt = conn.prepare_cached(
        "SELECT v.session_id, v.ordinal_start, v.ordinal_end, v.start_record, v.end_record, v.content_digest,
                v.tool_use_id, v.snippet, v.files
         FROM recall_evidence v WHERE v.entry_id = ?1 ORDER BY v.id",
    )?;
    let rows = stmt
        .query_map([id], |r| {
            let files: String = r.get(8)?;
            Ok((
                r.get::<_, i64>(0)?,
                Evidence {
                    session_key: String::new(),
                    agent: None,
                    ordinal_start: r.get(1)?,
                    ordinal_end: r.get(2)?,
                    start_record: r.get(3)?,
                    end_record: r.get(4)?,
                    content_digest: r.get(5)?,
                    tool_use_id: r.get(6)?,
                    snippet: r.get(7)?,
                    files: serde_json::from_str(&files).unwrap_or_default(),
                },
            ))
        })?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    // Evidence in a session the archive no longer holds is left out.
    let mut out = Vec::with_capacity(rows.len());
    for (session, mut evidence) in rows {
        if let Some((key, agent)) = archive::session_key_and_agent(conn, session)? {
            evidence.session_key = key;
            evidence.agent = Some(agent);
            out.push(evidence);
        }
    }
    Ok(out)
}

/// One entry with its evidence, any status.
pub fn get(conn: &Connection, id: &str) -> rusqlite::Result<Option<Entry>> {
    let found = conn
        .prepare_cached(&format!(
            "SELECT {ENTRY_COLUMNS} FROM recall_entries e WHERE e.id = ?1"
        ))?
        .query_row([id], entry_from_row)
        .optional()?;
    match found {
        Some(row) => Ok(Some(complete(conn, row)?.0)),
        None => Ok(None),
    }
}

/// The entry of row `rowid` without its evidence or source session (what a listing of names
/// needs).
pub(crate) fn head_by_rowid(conn: &Connection, rowid: i64) -> rusqlite::Result<Option<Entry>> {
    Ok(conn
        .prepare_cached(&format!(
            "SELECT {ENTRY_COLUMNS} FROM recall_entries e WHERE e.rowid = ?1"
        ))?
        .query_row([rowid], entry_from_row)
        .optional()?
        .map(|row| row.entry))
}

/// Entries passing `filters`, most recently updated first, with evidence.
pub fn list(conn: &Connection, filters: &Filters) -> Result<Vec<Entry>> {
    let db = crate::store::err_in(conn);
    let (where_sql, mut args) = filters.sql(conn)?;
    args.push(SqlValue::Integer(i64::from(filters.limit())));
    let sql = format!(
        "SELECT {ENTRY_COLUMNS} FROM recall_entries e WHERE {where_sql} ORDER BY e.updated_at DESC, e.id LIMIT ?"
    );
    let mut stmt = conn.prepare_cached(&sql).map_err(db)?;
    let rows = stmt
        .query_map(params_from_iter(args), entry_from_row)
        .map_err(db)?;
    let mut out = Vec::new();
    for row in rows.collect::<rusqlite::Result<Vec<_>>>().map_err(db)? {
        out.push(complete(conn, row).map_err(db)?.0);
    }
    Ok(out)
}
/// Entries whose evidence lies in session row `session`, most recently updated first.
pub(crate) fn for_session(conn: &Connection, session: i64) -> rusqlite::Result<Vec<Entry>> {
    let ids: Vec<String> = conn
        .prepare_cached("SELECT DISTINCT entry_id FROM recall_evidence WHERE session_id = ?1")?
        .query_map([session], |r| r.get(0))?
        .collect::<rusqlite::Result<_>>()?;
    let mut out = Vec::new();
    for id in ids {
        out.extend(get(conn, &id)?);
    }
    out.sort_by(|a, b| b.updated_at.cmp(&a.updated_at));
    Ok(out)
}

/// A Recall entry that cites a session, as a report lists it (enumerations as stored).
#[derive(Debug, Clone)]
pub struct CitingEntry {
    pub kind: String,
    pub title: String,
    pub review_state: String,
    pub status: String,
}

/// The entries extracted from `session` or with evidence in it, oldest first, at most `limit`.
pub fn entries_citing_session(
    conn: &Connection,
    session: i64,
    limit: usize,
) -> rusqlite::Result<Vec<CitingEntry>> {
    conn.prepare_cached(
        "SELECT e.type, e.title, e.review_state, e.status FROM recall_entries e
         WHERE e.source_session_id = ?1
            OR EXISTS (SELECT 1 FROM recall_evidence v WHERE v.entry_id = e.id AND v.session_id = ?1)
         ORDER BY e.created_at LIMIT ?2",
    )?
    .query_map(params![session, limit as i64], |r| {
        Ok(CitingEntry {
            kind: r.get(0)?,
            title: r.get(1)?,
            review_state: r.get(2)?,
            status: r.get(3)?,
        })
    })?
    .collect()
}

/// The questions asked of Recall between `since` and `until` that found nothing, with how
/// often each was asked: most asked (then most recent) first, at most `limit`.
pub fn unanswered_questions(
    conn: &Connection,
    since: Option<&str>,
    until: Option<&str>,
    limit: usize,
) -> rusqlite::Result<Vec<(String, i64)>> {
    conn.prepare(
        "SELECT query_text, COUNT(*) FROM recall_query_events
         WHERE result_count = 0 AND created_at >= COALESCE(?1, '') AND created_at < COALESCE(?2, '9999')
         GROUP BY query_text ORDER BY 2 DESC, MAX(created_at) DESC LIMIT ?3",
    )?
    .query_map(params![since, until, limit as i64], |r| Ok((r.get(0)?, r.get(1)?)))?
    .collect()
}

/// The row id of every accepted entry, by entry id.
pub fn accepted_rowids(
    conn: &Connection,
) -> rusqlite::Result<std::collections::HashMap<String, i64>> {
    conn.prepare_cached("SELECT id, rowid FROM recall_entries WHERE status = 'accepted'")?
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect()
}

/// Migration 0014's part in Recall: evidence ranges that open or close on the record keyed
/// `old` in `session` name `new` instead (the `#ordinal` suffix kept).
pub(crate) fn rekey_evidence(
    conn: &Connection,
    session: i64,
    old: &str,
    new: &str,
) -> rusqlite::Result<()> {
    for column in ["start_record", "end_record"] {
        conn.prepare_cached(&format!(
            "UPDATE recall_evidence SET {column} = ?3 || substr({column}, length(?2) + 1)
             WHERE session_id = ?1 AND substr({column}, 1, length(?2) + 1) = ?2 || '#'"
        ))?
        .execute(params![session, old, new])?;
    }
    Ok(())
}

/// A reindex's part in Recall when it found secrets older rules let through: the text Recall
/// stored from transcripts and model answers (entries' text and context fields, evidence
/// snippets and files) redacted again with today's rules, each changed entry re-indexed (the
/// text trigger drops its vector) and marked changed at `now` (so a team push sends it again);
/// and what agents and persons typed (the ledger's query texts, feedback notes). `apply` false
/// counts only. Returns how many entries changed, and how many other rows.
pub(crate) fn redact_stored(
    conn: &Connection,
    apply: bool,
    now: &str,
) -> rusqlite::Result<(u32, u32)> {
    let mut entries: std::collections::BTreeSet<String> = std::collections::BTreeSet::new();
    let text = |v: rusqlite::types::Value| match v {
        SqlValue::Text(s) => Some(s),
        _ => None,
    };
    let own = archive::redact_columns(
        conn,
        "recall_entries",
        "id",
        &[
            "title",
            "body",
            "trigger",
            "uncertainty",
            "project",
            "cwd",
            "git_branch",
        ],
        apply,
    )?;
    entries.extend(own.into_iter().filter_map(text));
    for row in archive::redact_columns(conn, "recall_evidence", "id", &["snippet", "files"], apply)?
    {
        if let SqlValue::Integer(id) = row {
            let entry: Option<String> = conn
                .prepare_cached("SELECT entry_id FROM recall_evidence WHERE id = ?1")?
                .query_row([id], |r| r.get(0))
                .optional()?;
            entries.extend(entry);
        }
    }
    if apply {
        for id in &entries {
            conn.prepare_cached("UPDATE recall_entries SET updated_at = ?2 WHERE id = ?1")?
                .execute(params![id, now])?;
            reindex(conn, id)?;
        }
    }
    let mut other = 0;
    for (table, key, column) in [
        ("recall_query_events", "id", "query_text"),
        ("recall_feedback", "id", "note"),
    ] {
        other += archive::redact_columns(conn, table, key, &[column], apply)?.len();
    }
    let small = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
    Ok((small(entries.len()), small(other)))
}

/// The trusted entries' ids and when each last changed, for the team push (which sends only
/// trusted entries, and takes back those no longer trusted).
pub fn trusted_marks(conn: &Connection) -> rusqlite::Result<Vec<(String, String)>> {
    let sql = format!(
        "SELECT e.id, e.updated_at FROM recall_entries e WHERE {TRUSTED_SQL} ORDER BY e.id"
    );
    conn.prepare_cached(&sql)?
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect()
}

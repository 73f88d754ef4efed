//! Extraction's tables (migration 5): generations, per-session progress, the entries each
//! generation wrote, and the pass log. Every state change that must be all-or-nothing takes a
//! connection inside a transaction the caller opened.

use std::collections::{BTreeMap, HashMap};

use rusqlite::{Connection, OptionalExtension, params};
use serde::{Deserialize, Serialize};

use super::prompt::Identity;
use super::segment::RecordRow;
use crate::archive::store as archive;
use crate::error::{Error, Result};
use crate::recall::{index, store as entries};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "snake_case")]
pub enum GenState {
    Building,
    Active,
    Retired,
}

impl GenState {
    fn parse(s: &str) -> GenState {
        match s {
            "active" => GenState::Active,
            "retired" => GenState::Retired,
            _ => GenState::Building,
        }
    }
    pub fn as_str(self) -> &'static str {
        match self {
            GenState::Building => "building",
            GenState::Active => "active",
            GenState::Retired => "retired",
        }
    }
}

/// A generation and how far it got.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct Generation {
    pub fingerprint: String,
    pub state: GenState,
    pub model: String,
    pub deployment: String,
    pub segmenter: String,
    pub params_json: String,
    pub created_at: String,
    pub updated_at: String,
    pub activated_at: Option<String>,
    pub retired_at: Option<String>,
    /// The generation the current config describes.
    pub configured: bool,
    /// Sessions read to their end (a session with nothing to read is not one).
    pub sessions_done: u32,
    pub sessions_partial: u32,
    pub sessions_failed: u32,
    pub sessions_pending: u32,
    pub units_done: u32,
    pub units_total: u32,
    /// Entries written (any state) / waiting to be published / served.
    pub entries: u32,
    pub entries_staged: u32,
    pub entries_published: u32,
}

/// Create the generation of `identity` if it is new; its state either way.
pub fn ensure_generation(conn: &Connection, identity: &Identity, now: &str) -> Result<GenState> {
    let db = crate::store::err_in(conn);
    let fingerprint = identity.fingerprint();
    conn.prepare_cached(
        "INSERT OR IGNORE INTO recall_extract_generations
            (fingerprint, model, deployment, segmenter, params_json, identity_json, created_at, updated_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?7)",
    )
    .and_then(|mut s| {
        s.execute(params![
            fingerprint,
            identity.model,
            identity.deployment,
            super::segment::SEGMENTER,
            identity.params().to_string(),
            identity.document().to_string(),
            now
        ])
    })
    .map_err(db)?;
    state(conn, &fingerprint)?.ok_or_else(|| Error::NotFound(format!("generation {fingerprint}")))
}

pub fn state(conn: &Connection, fingerprint: &str) -> Result<Option<GenState>> {
    let db = crate::store::err_in(conn);
    conn.prepare_cached("SELECT state FROM recall_extract_generations WHERE fingerprint = ?1")
        .and_then(|mut s| {
            s.query_row([fingerprint], |r| r.get::<_, String>(0))
                .optional()
        })
        .map(|o| o.map(|s| GenState::parse(&s)))
        .map_err(db)
}

/// Every generation, newest first, with its counts.
pub fn generations(conn: &Connection, configured: Option<&str>) -> Result<Vec<Generation>> {
    let db = crate::store::err_in(conn);
    let mut stmt = conn
        .prepare_cached(
            "SELECT g.fingerprint, g.state, g.model, g.deployment, g.segmenter, g.params_json, g.created_at,
                    g.updated_at, g.activated_at, g.retired_at,
                    (SELECT COUNT(*) FROM recall_extract_progress p WHERE p.fingerprint = g.fingerprint AND p.state = 'done' AND p.units_total > 0),
                    (SELECT COUNT(*) FROM recall_extract_progress p WHERE p.fingerprint = g.fingerprint AND p.state = 'partial'),
                    (SELECT COUNT(*) FROM recall_extract_progress p WHERE p.fingerprint = g.fingerprint AND p.state = 'failed'),
                    (SELECT COUNT(*) FROM recall_extract_progress p WHERE p.fingerprint = g.fingerprint AND p.state = 'pending'),
                    (SELECT COALESCE(SUM(unit_cursor), 0) FROM recall_extract_progress p WHERE p.fingerprint = g.fingerprint),
                    (SELECT COALESCE(SUM(units_total), 0) FROM recall_extract_progress p WHERE p.fingerprint = g.fingerprint),
                    (SELECT COUNT(*) FROM recall_extract_entries m WHERE m.fingerprint = g.fingerprint),
                    (SELECT COUNT(*) FROM recall_extract_entries m WHERE m.fingerprint = g.fingerprint AND m.state = 'staged'),
                    (SELECT COUNT(*) FROM recall_extract_entries m WHERE m.fingerprint = g.fingerprint AND m.state = 'published')
             FROM recall_extract_generations g ORDER BY g.created_at DESC, g.fingerprint",
        )
        .map_err(db)?;
    let rows = stmt
        .query_map([], |r| {
            let fingerprint: String = r.get(0)?;
            Ok(Generation {
                configured: configured == Some(fingerprint.as_str()),
                fingerprint,
                state: GenState::parse(&r.get::<_, String>(1)?),
                model: r.get(2)?,
                deployment: r.get(3)?,
                segmenter: r.get(4)?,
                params_json: r.get(5)?,
                created_at: r.get(6)?,
                updated_at: r.get(7)?,
                activated_at: r.get(8)?,
                retired_at: r.get(9)?,
                sessions_done: r.get(10)?,
                sessions_partial: r.get(11)?,
                sessions_failed: r.get(12)?,
                sessions_pending: r.get(13)?,
                units_done: r.get(14)?,
                units_total: r.get(15)?,
                entries: r.get(16)?,
                entries_staged: r.get(17)?,
                entries_published: r.get(18)?,
            })
        })
        .map_err(db)?;
    rows.collect::<rusqlite::Result<_>>().map_err(db)
}

/// What extraction needs to know about a session.
#[derive(Debug, Clone)]
pub struct SessionInfo {
    pub id: i64,
    pub key: String,
    pub title: String,
    pub project: String,
    pub cwd: String,
    pub git_branch: String,
    pub agent: String,
    /// The session's repository root (or, without one, its working directory): absolute paths
    /// under it are sent repo-relative.
    pub root: Option<String>,
    pub next_ordinal: i64,
}

pub fn session_info(conn: &Connection, id: i64) -> Result<SessionInfo> {
    let db = crate::store::err_in(conn);
    let head = archive::story_head(conn, id).map_err(db)?;
    let repo_root = match head.repo {
        Some(repo) => crate::git::store::repo_root(conn, repo).map_err(db)?,
        None => None,
    };
    Ok(SessionInfo {
        id: head.id,
        key: head.key,
        title: head.title,
        project: head.project,
        root: repo_root.or_else(|| (!head.cwd.is_empty()).then(|| head.cwd.clone())),
        cwd: head.cwd,
        git_branch: head.branch,
        agent: head.agent,
        next_ordinal: head.next_ordinal,
    })
}

/// The records of `session`, in order (the archive's typed read).
pub fn records(conn: &Connection, session: i64) -> Result<Vec<RecordRow>> {
    crate::archive::store::records_of_session(conn, session).map_err(crate::store::err_in(conn))
}

/// A session's progress in a generation.
#[derive(Debug, Clone, PartialEq)]
pub struct Progress {
    pub state: String,
    pub cursor: u32,
    pub total: u32,
    pub digests: Vec<String>,
    pub content_digest: String,
    pub covered_ordinal: i64,
    pub last_error: Option<String>,
    /// Failures since the session last moved on (a unit read resets it).
    pub failures: u32,
    pub updated_at: String,
}

pub fn progress(conn: &Connection, session: i64, fingerprint: &str) -> Result<Option<Progress>> {
    let db = crate::store::err_in(conn);
    conn.prepare_cached(
        "SELECT state, unit_cursor, units_total, unit_digests, content_digest, covered_ordinal, last_error, updated_at,
                failures
         FROM recall_extract_progress WHERE session_id = ?1 AND fingerprint = ?2",
    )
    .and_then(|mut s| {
        s.query_row(params![session, fingerprint], |r| {
            let digests: String = r.get(3)?;
            Ok(Progress {
                state: r.get(0)?,
                cursor: r.get(1)?,
                total: r.get(2)?,
                digests: serde_json::from_str(&digests).unwrap_or_default(),
                content_digest: r.get(4)?,
                covered_ordinal: r.get(5)?,
                last_error: r.get::<_, Option<String>>(6)?.map(|e| stored_error(&e)),
                failures: r.get(8)?,
                updated_at: r.get(7)?,
            })
        })
        .optional()
    })
    .map_err(db)
}

/// A failure as stored, as it may be shown: redacted with today's rules. Builds before the
/// one gate in `run.rs` stored some unredacted, and a secret rule added since may find one in
/// any row: none is trusted to be redacted already.
fn stored_error(text: &str) -> String {
    crate::llm::redacted(text)
}

/// A reindex's sweep: the failures stored (sessions' `last_error`, passes' `aborted`) rewritten
/// redacted with today's rules, so the database file keeps no secret an older build stored or
/// a newer rule finds; `apply` false counts only. How many rows changed (reads redact them
/// either way, [`stored_error`]).
pub(crate) fn redact_stored(conn: &Connection, apply: bool) -> rusqlite::Result<u32> {
    let progress: Vec<(i64, String, String)> = conn
        .prepare(
            "SELECT session_id, fingerprint, last_error FROM recall_extract_progress
             WHERE last_error IS NOT NULL",
        )?
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
        .collect::<rusqlite::Result<_>>()?;
    let runs: Vec<(i64, String)> = conn
        .prepare("SELECT id, aborted FROM recall_extract_runs WHERE aborted IS NOT NULL")?
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<rusqlite::Result<_>>()?;
    let mut changed = 0u32;
    for (session, fingerprint, error) in progress {
        let clean = stored_error(&error);
        if clean != error {
            changed = changed.saturating_add(1);
            if apply {
                conn.prepare_cached(
                    "UPDATE recall_extract_progress SET last_error = ?3
                     WHERE session_id = ?1 AND fingerprint = ?2",
                )?
                .execute(params![session, fingerprint, clean])?;
            }
        }
    }
    for (id, aborted) in runs {
        let clean = stored_error(&aborted);
        if clean != aborted {
            changed = changed.saturating_add(1);
            if apply {
                conn.prepare_cached("UPDATE recall_extract_runs SET aborted = ?2 WHERE id = ?1")?
                    .execute(params![id, clean])?;
            }
        }
    }
    Ok(changed)
}

/// Which sessions a pass considers (see [`super::Scope`]).
#[derive(Debug, Clone)]
pub struct Candidate {
    pub id: i64,
    pub key: String,
    pub next_ordinal: i64,
    pub progress: Option<Progress>,
    /// Its progress row speaks of every record a model would be shown now: read up to the
    /// session's end, or grown since only by records a model is not shown ([`covers`]).
    pub covered: bool,
}

/// How many sessions in `scope` a pass leaves for later because they were active after
/// `quiet_cutoff` (an agent may still be writing them): said, so a pass that reads nothing of a
/// session that just ended does not look like one that found nothing.
pub fn waiting_quiet(
    conn: &Connection,
    fingerprint: Option<&str>,
    scope: &super::Scope,
    quiet_cutoff: &str,
    readable: &mut Readable,
) -> Result<u32> {
    if scope.session.is_some() {
        return Ok(0);
    }
    let all = candidates(conn, fingerprint, scope, None, readable)?.len();
    let quiet = candidates(conn, fingerprint, scope, Some(quiet_cutoff), readable)?.len();
    Ok(u32::try_from(all.saturating_sub(quiet)).unwrap_or(u32::MAX))
}

/// Whether some generation is active (served).
pub fn any_active(conn: &Connection) -> Result<bool> {
    conn.query_row(
        "SELECT EXISTS (SELECT 1 FROM recall_extract_generations WHERE state = 'active')",
        [],
        |r| r.get(0),
    )
    .map_err(crate::store::err_in(conn))
}

/// Eligible sessions in scope, most recently active first, with their progress in
/// `fingerprint`. `quiet_cutoff`: only sessions idle since then (None: any). `readable` tells
/// whether a session that grew since its row was written grew by anything a model is shown.
pub fn candidates(
    conn: &Connection,
    fingerprint: Option<&str>,
    scope: &super::Scope,
    quiet_cutoff: Option<&str>,
    readable: &mut Readable,
) -> Result<Vec<Candidate>> {
    let db = crate::store::err_in(conn);
    // As stored times compare with it ([`super::Scope::validate`] refused any other).
    let since = scope.since.as_deref().and_then(crate::text::time_bound);
    let rows = archive::story_sessions(
        conn,
        archive::StoryFilter {
            session: scope.session.as_deref().map(str::trim),
            project: scope.project.as_deref(),
            since: since.as_deref(),
            idle_since: quiet_cutoff,
        },
    )
    .map_err(db)?;
    let mut out = Vec::with_capacity(rows.len());
    for row in rows {
        let progress = match fingerprint {
            Some(fp) => progress(conn, row.id, fp)?,
            None => None,
        };
        let covered = match &progress {
            Some(p) => covers(conn, readable, &row, p.covered_ordinal)?,
            None => false,
        };
        out.push(Candidate {
            id: row.id,
            key: row.key,
            next_ordinal: row.next_ordinal,
            progress,
            covered,
        });
    }
    Ok(out)
}

/// Start (or resume) a session in a generation: units whose digests still match those already
/// read are kept; entries of the others (machine output nobody reviewed) are deleted. Returns
/// the unit to continue from.
pub fn begin(
    tx: &Connection,
    fingerprint: &str,
    session: i64,
    digests: &[String],
    content_digest: &str,
    covered_ordinal: i64,
    now: &str,
) -> Result<u32> {
    let db = crate::store::err_in(tx);
    let old = progress(tx, session, fingerprint)?;
    let keep = old.as_ref().map_or(0, |p| {
        p.digests
            .iter()
            .zip(digests)
            .take(p.cursor as usize)
            .take_while(|(a, b)| a == b)
            .count()
    }) as u32;
    delete_entries(tx, fingerprint, session, keep)?;
    let total = digests.len() as u32;
    let state = if keep == total {
        "done"
    } else if keep > 0 {
        "partial"
    } else {
        "pending"
    };
    tx.prepare_cached(
        "INSERT INTO recall_extract_progress (session_id, fingerprint, state, unit_cursor, units_total, unit_digests,
            content_digest, covered_ordinal, updated_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)
         ON CONFLICT (session_id, fingerprint) DO UPDATE SET state = ?3, unit_cursor = ?4, units_total = ?5,
            unit_digests = ?6, content_digest = ?7, covered_ordinal = ?8, updated_at = ?9",
    )
    .and_then(|mut s| {
        s.execute(params![
            session,
            fingerprint,
            state,
            keep,
            total,
            serde_json::to_string(digests).unwrap_or_else(|_| "[]".into()),
            content_digest,
            covered_ordinal,
            now
        ])
    })
    .map_err(db)?;
    if state == "done" && state_is(tx, fingerprint, GenState::Active)? {
        publish_session(tx, fingerprint, session, now)?;
    }
    Ok(keep)
}

fn state_is(conn: &Connection, fingerprint: &str, want: GenState) -> Result<bool> {
    Ok(state(conn, fingerprint)? == Some(want))
}

/// Delete the unreviewed machine entries of units `from_unit..` of a session in a generation.
fn delete_entries(
    conn: &Connection,
    fingerprint: &str,
    session: i64,
    from_unit: u32,
) -> Result<u32> {
    let db = crate::store::err_in(conn);
    let doomed: Vec<(String, i64)> = conn
        .prepare_cached(
            "SELECT e.id, e.rowid FROM recall_extract_entries m JOIN recall_entries e ON e.id = m.entry_id
             WHERE m.fingerprint = ?1 AND m.session_id = ?2 AND m.unit_index >= ?3 AND e.review_state = 'unreviewed_auto'",
        )
        .and_then(|mut s| {
            s.query_map(params![fingerprint, session, from_unit], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })?
            .collect()
        })
        .map_err(db)?;
    for (id, rowid) in &doomed {
        index::unindex(conn, *rowid).map_err(db)?;
        conn.prepare_cached("DELETE FROM recall_entries WHERE id = ?1")
            .and_then(|mut s| s.execute([id]))
            .map_err(db)?;
    }
    Ok(doomed.len() as u32)
}

/// What a unit commit found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Commit {
    /// Written: this many entries were new.
    Written {
        new_entries: u32,
        session_done: bool,
    },
    /// The progress row moved under us (another pass, or the transcript was re-read): nothing
    /// was written.
    Conflict,
}

/// The commit guard: write a unit's entries and advance the cursor from exactly `unit`, in the
/// caller's transaction. Entries are staged; when this finishes the session and the generation
/// is active, the session's staged entries are published in the same transaction.
pub fn commit_unit(
    tx: &Connection,
    fingerprint: &str,
    session: i64,
    unit: u32,
    content_digest: &str,
    extracted: &[entries::NewEntry],
    now: &str,
) -> Result<Commit> {
    let db = crate::store::err_in(tx);
    let Some(p) = progress(tx, session, fingerprint)? else {
        return Ok(Commit::Conflict);
    };
    if p.cursor != unit
        || p.content_digest != content_digest
        || p.state == "done"
        || unit >= p.total
    {
        return Ok(Commit::Conflict);
    }
    let mut new_entries = 0;
    for x in extracted {
        if entries::exists(tx, &x.id).map_err(db)? {
            continue;
        }
        entries::insert(tx, x, now).map_err(db)?;
        tx.prepare_cached(
            "INSERT INTO recall_extract_entries (entry_id, fingerprint, session_id, unit_index) VALUES (?1, ?2, ?3, ?4)",
        )
        .and_then(|mut s| s.execute(params![x.id, fingerprint, session, unit]))
        .map_err(db)?;
        new_entries += 1;
    }
    let cursor = unit + 1;
    let done = cursor == p.total;
    tx.prepare_cached(
        "UPDATE recall_extract_progress SET unit_cursor = ?3, state = ?4, last_error = NULL, failures = 0, updated_at = ?5
         WHERE session_id = ?1 AND fingerprint = ?2",
    )
    .and_then(|mut s| {
        s.execute(params![
            session,
            fingerprint,
            cursor,
            if done { "done" } else { "partial" },
            now
        ])
    })
    .map_err(db)?;
    if done && state_is(tx, fingerprint, GenState::Active)? {
        publish_session(tx, fingerprint, session, now)?;
    }
    Ok(Commit::Written {
        new_entries,
        session_done: done,
    })
}

/// Record a session-scoped failure (bounded, sanitised text); the session waits out its
/// back-off ([`super::run::backoff_ms`]) before the next try and resumes from its cursor.
pub fn fail(
    conn: &Connection,
    fingerprint: &str,
    session: i64,
    error: &str,
    now: &str,
) -> Result<()> {
    let db = crate::store::err_in(conn);
    let mut text = crate::text::one_line(error, 2000);
    text.truncate(2048);
    conn.prepare_cached(
        "UPDATE recall_extract_progress SET state = 'failed', last_error = ?3, failures = failures + 1, updated_at = ?4
         WHERE session_id = ?1 AND fingerprint = ?2 AND state != 'done'",
    )
    .and_then(|mut s| s.execute(params![session, fingerprint, text, now]))
    .map_err(db)?;
    Ok(())
}

/// Serve a session's staged entries (machine output nobody touched).
fn publish_session(conn: &Connection, fingerprint: &str, session: i64, now: &str) -> Result<u32> {
    let db = crate::store::err_in(conn);
    let n = conn
        .prepare_cached(
            "UPDATE recall_entries SET status = 'accepted', updated_at = ?3
             WHERE id IN (SELECT entry_id FROM recall_extract_entries WHERE fingerprint = ?1 AND session_id = ?2 AND state = 'staged')
               AND status = 'archived' AND review_state = 'unreviewed_auto' AND superseded_by_entry_id = ''",
        )
        .and_then(|mut s| s.execute(params![fingerprint, session, now]))
        .map_err(db)?;
    conn.prepare_cached(
        "UPDATE recall_extract_entries SET state = 'published' WHERE fingerprint = ?1 AND session_id = ?2 AND state = 'staged'",
    )
    .and_then(|mut s| s.execute(params![fingerprint, session]))
    .map_err(db)?;
    Ok(n as u32)
}

/// A reviewer rejected an entry: if it was staged, it must never be published.
pub fn withdraw(conn: &Connection, entry_id: &str) -> rusqlite::Result<()> {
    conn.prepare_cached(
        "UPDATE recall_extract_entries SET state = 'withdrawn' WHERE entry_id = ?1 AND state = 'staged'",
    )?
    .execute([entry_id])?;
    Ok(())
}

/// A reviewer took a rejection back ([`crate::recall::review::restore`]): a staged entry the
/// rejection withdrew is staged again.
/// Whether there was one to stage again.
pub fn restage(conn: &Connection, entry_id: &str) -> rusqlite::Result<bool> {
    let n = conn
        .prepare_cached(
            "UPDATE recall_extract_entries SET state = 'staged' WHERE entry_id = ?1 AND state = 'withdrawn'",
        )?
        .execute([entry_id])?;
    Ok(n > 0)
}

/// Counts that decide activation.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Readiness {
    pub partial: u32,
    /// Eligible, quiet sessions with no finished row covering their current records.
    pub uncovered: u32,
    /// Staged entries of finished sessions (what activation would publish).
    pub publishable: u32,
}

pub fn readiness(conn: &Connection, fingerprint: &str, quiet_cutoff: &str) -> Result<Readiness> {
    let db = crate::store::err_in(conn);
    let (partial, publishable) = conn
        .prepare_cached(
            "SELECT
                (SELECT COUNT(*) FROM recall_extract_progress WHERE fingerprint = ?1 AND state = 'partial'),
                (SELECT COUNT(*) FROM recall_extract_entries m JOIN recall_extract_progress p
                   ON p.session_id = m.session_id AND p.fingerprint = m.fingerprint
                 WHERE m.fingerprint = ?1 AND m.state = 'staged' AND p.state = 'done')",
        )
        .and_then(|mut s| s.query_row([fingerprint], |r| Ok((r.get(0)?, r.get(1)?))))
        .map_err(db)?;
    let finished = progress_rows(conn, fingerprint)?;
    let quiet = archive::story_sessions(
        conn,
        archive::StoryFilter {
            idle_since: Some(quiet_cutoff),
            ..Default::default()
        },
    )
    .map_err(db)?;
    let mut readable = Readable::load(conn)?;
    let mut uncovered: u32 = 0;
    for s in &quiet {
        let covered = match finished.get(&s.id) {
            Some((state, covered)) if matches!(state.as_str(), "done" | "failed") => {
                covers(conn, &mut readable, s, *covered)?
            }
            _ => false,
        };
        // A session a pass would read nothing of is no work to wait for.
        if !covered && readable.last_visible(conn, s.id, s.next_ordinal)?.is_some() {
            uncovered = uncovered.saturating_add(1);
        }
    }
    // In the caller's transaction (a pass's last, an activation's).
    readable.save(conn)?;
    Ok(Readiness {
        partial,
        uncovered,
        publishable,
    })
}

/// Each session's progress state and covered ordinal in generation `fingerprint`.
fn progress_rows(conn: &Connection, fingerprint: &str) -> Result<HashMap<i64, (String, i64)>> {
    let db = crate::store::err_in(conn);
    conn.prepare_cached(
        "SELECT session_id, state, covered_ordinal FROM recall_extract_progress WHERE fingerprint = ?1",
    )
    .and_then(|mut s| {
        s.query_map([fingerprint], |r| Ok((r.get(0)?, (r.get(1)?, r.get(2)?))))?
            .collect()
    })
    .map_err(db)
}

/// What activation or retirement did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct Lifecycle {
    pub fingerprint: String,
    /// Entries now served.
    pub published: u32,
    /// Entries archived (the retired generation's unreviewed output).
    pub archived: u32,
    /// The generation this activation retired.
    pub retired: Option<String>,
}

/// Activate a building generation (one transaction: the caller's): publish the staged entries
/// of its finished sessions, retire the active one (archiving its unreviewed entries), flip
/// states. Refuses while a session is half read, and when nothing would be served.
pub fn activate(
    tx: &Connection,
    fingerprint: &str,
    quiet_cutoff: &str,
    now: &str,
) -> Result<Lifecycle> {
    let db = crate::store::err_in(tx);
    let short = &fingerprint[..fingerprint.len().min(12)];
    match state(tx, fingerprint)? {
        None => {
            return Err(Error::Conflict(format!(
                "generation {short} has not run yet; start it with `cairn recall extract run`"
            )));
        }
        Some(GenState::Active) => {
            return Err(Error::Conflict(format!(
                "generation {short} is already active"
            )));
        }
        Some(GenState::Retired) => {
            return Err(Error::Conflict(format!(
                "generation {short} was retired; change [recall.extract] (model, prompts, request) to start a new one"
            )));
        }
        Some(GenState::Building) => {}
    }
    let r = readiness(tx, fingerprint, quiet_cutoff)?;
    if r.partial > 0 {
        return Err(Error::Conflict(format!(
            "generation {short} has {} half-read; finish reading with `cairn recall extract run` before activating",
            crate::text::plural(r.partial, "session")
        )));
    }
    if r.publishable == 0 {
        return Err(Error::Conflict(format!(
            "generation {short} has no entries to serve; an empty generation is never activated"
        )));
    }
    let done: Vec<i64> = tx
        .prepare_cached(
            "SELECT session_id FROM recall_extract_progress WHERE fingerprint = ?1 AND state = 'done'",
        )
        .and_then(|mut s| s.query_map([fingerprint], |r| r.get(0))?.collect())
        .map_err(db)?;
    let mut out = Lifecycle {
        fingerprint: fingerprint.to_owned(),
        ..Default::default()
    };
    let previous: Option<String> = tx
        .query_row(
            "SELECT fingerprint FROM recall_extract_generations WHERE state = 'active'",
            [],
            |r| r.get(0),
        )
        .optional()
        .map_err(db)?;
    if let Some(prev) = &previous {
        out.archived = archive_generation(tx, prev, now)?;
        out.retired = Some(prev.clone());
    }
    tx.prepare_cached(
        "UPDATE recall_extract_generations SET state = 'active', activated_at = ?2, updated_at = ?2 WHERE fingerprint = ?1",
    )
    .and_then(|mut s| s.execute(params![fingerprint, now]))
    .map_err(db)?;
    for session in done {
        out.published += publish_session(tx, fingerprint, session, now)?;
    }
    if out.published == 0 {
        return Err(Error::Conflict(format!(
            "generation {short} has no servable entries (all were reviewed, rejected or superseded); nothing was changed"
        )));
    }
    Ok(out)
}

/// Archive a generation's unreviewed served entries and mark it retired.
fn archive_generation(tx: &Connection, fingerprint: &str, now: &str) -> Result<u32> {
    let db = crate::store::err_in(tx);
    let n = tx
        .prepare_cached(
            "UPDATE recall_entries SET status = 'archived', updated_at = ?2
             WHERE id IN (SELECT entry_id FROM recall_extract_entries WHERE fingerprint = ?1 AND state = 'published')
               AND status = 'accepted' AND review_state = 'unreviewed_auto'",
        )
        .and_then(|mut s| s.execute(params![fingerprint, now]))
        .map_err(db)?;
    tx.prepare_cached(
        "UPDATE recall_extract_entries SET state = 'retired' WHERE fingerprint = ?1 AND state IN ('staged', 'published')",
    )
    .and_then(|mut s| s.execute([fingerprint]))
    .map_err(db)?;
    tx.prepare_cached(
        "UPDATE recall_extract_generations SET state = 'retired', retired_at = ?2, updated_at = ?2 WHERE fingerprint = ?1",
    )
    .and_then(|mut s| s.execute(params![fingerprint, now]))
    .map_err(db)?;
    Ok(n as u32)
}

/// Retire a generation: its unreviewed entries are archived (reviewed ones stay). Retiring the
/// active generation needs `force`.
pub fn retire(tx: &Connection, fingerprint: &str, force: bool, now: &str) -> Result<Lifecycle> {
    let full = resolve_prefix(tx, fingerprint)?;
    let short = &full[..full.len().min(12)];
    match state(tx, &full)? {
        Some(GenState::Retired) => {
            return Err(Error::Conflict(format!(
                "generation {short} is already retired"
            )));
        }
        Some(GenState::Active) if !force => {
            return Err(Error::Conflict(format!(
                "generation {short} is active: retiring it stops serving its entries; pass --force to do it anyway"
            )));
        }
        _ => {}
    }
    Ok(Lifecycle {
        archived: archive_generation(tx, &full, now)?,
        fingerprint: full,
        ..Default::default()
    })
}

/// A full fingerprint from a unique prefix (at least 6 characters).
pub fn resolve_prefix(conn: &Connection, prefix: &str) -> Result<String> {
    let db = crate::store::err_in(conn);
    let prefix = prefix.trim();
    if prefix.len() < 6 || !prefix.chars().all(|c| c.is_ascii_hexdigit()) {
        return Err(Error::Invalid(format!(
            "{prefix:?} is not a generation fingerprint; list them with `cairn recall extract status`"
        )));
    }
    let found: Vec<String> = conn
        .prepare_cached(
            "SELECT fingerprint FROM recall_extract_generations WHERE substr(fingerprint, 1, ?2) = ?1",
        )
        .and_then(|mut s| {
            s.query_map(params![prefix.to_ascii_lowercase(), prefix.len() as i64], |r| r.get(0))?
                .collect()
        })
        .map_err(db)?;
    match found.as_slice() {
        [one] => Ok(one.clone()),
        [] => Err(Error::NotFound(format!(
            "generation {prefix}; list them with `cairn recall extract status`"
        ))),
        _ => Err(Error::Invalid(format!(
            "{prefix} matches several generations; give more of the fingerprint"
        ))),
    }
}

/// One logged pass.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct RunLog {
    pub fingerprint: String,
    pub started_at: String,
    pub finished_at: Option<String>,
    pub sessions: u32,
    pub failed: u32,
    pub units: u32,
    pub entries: u32,
    pub activated: bool,
    pub aborted: Option<String>,
}

pub fn log_run(conn: &Connection, r: &RunLog) -> Result<()> {
    let db = crate::store::err_in(conn);
    conn.prepare_cached(
        "INSERT INTO recall_extract_runs (fingerprint, started_at, finished_at, sessions, failed, units, entries, activated, aborted)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
    )
    .and_then(|mut s| {
        s.execute(params![
            r.fingerprint,
            r.started_at,
            r.finished_at,
            r.sessions,
            r.failed,
            r.units,
            r.entries,
            r.activated,
            r.aborted
        ])
    })
    .map_err(db)?;
    Ok(())
}

pub fn last_run(conn: &Connection) -> Result<Option<RunLog>> {
    let db = crate::store::err_in(conn);
    conn.prepare_cached(
        "SELECT fingerprint, started_at, finished_at, sessions, failed, units, entries, activated, aborted
         FROM recall_extract_runs ORDER BY started_at DESC, id DESC LIMIT 1",
    )
    .and_then(|mut s| {
        s.query_row([], |r| {
            Ok(RunLog {
                fingerprint: r.get(0)?,
                started_at: r.get(1)?,
                finished_at: r.get(2)?,
                sessions: r.get(3)?,
                failed: r.get(4)?,
                units: r.get(5)?,
                entries: r.get(6)?,
                activated: r.get(7)?,
                aborted: r.get::<_, Option<String>>(8)?.map(|e| stored_error(&e)),
            })
        })
        .optional()
    })
    .map_err(db)
}

/// Where a generation's entries stand now, in the words review and the desktop use: each entry
/// is in exactly one of these, so together they are [`Generation::entries`]. "Served" in a
/// generation's counts means published into Recall (the review inbox), which is not trusted:
/// only a person's accept makes an entry trusted, and only a trusted one reaches agents.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct EntryStates {
    /// Accepted by a person and trusted now.
    pub trusted: u32,
    /// Accepted by a person, not trusted now (its evidence changed or was forgotten, or it is
    /// not transferable): back in the review inbox.
    pub reviewed_untrusted: u32,
    /// In Recall, reviewed by no one: the review inbox.
    pub unreviewed: u32,
    /// Written by a generation not yet activated: in no list until it is.
    pub staged: u32,
    /// Rejected by a person (`review --restore` takes that back).
    pub rejected: u32,
    /// Archived otherwise: retired with their generation, replaced, or merged into another.
    pub archived: u32,
    /// Of those in Recall, how many are flagged stale (a file they cite changed in a later
    /// commit): back in the review inbox and served as trusted nowhere until a person accepts
    /// them again (a reviewed one counts as reviewed-but-untrusted meanwhile).
    pub stale: u32,
}

pub fn entry_states(conn: &Connection, fingerprint: &str) -> Result<EntryStates> {
    let db = crate::store::err_in(conn);
    let trusted = crate::recall::model::TRUSTED_SQL;
    conn.prepare_cached(&format!(
        "SELECT COALESCE(SUM({trusted}), 0),
                COALESCE(SUM(e.status = 'accepted' AND e.review_state = 'human_reviewed' AND NOT ({trusted})), 0),
                COALESCE(SUM(e.status = 'accepted' AND e.review_state != 'human_reviewed'), 0),
                COALESCE(SUM(e.status != 'accepted' AND m.state = 'staged'), 0),
                COALESCE(SUM(e.status != 'accepted' AND m.state != 'staged' AND e.rejected_at IS NOT NULL), 0),
                COALESCE(SUM(e.status != 'accepted' AND m.state != 'staged' AND e.rejected_at IS NULL), 0),
                COALESCE(SUM(e.status = 'accepted' AND e.stale = 1), 0)
         FROM recall_extract_entries m JOIN recall_entries e ON e.id = m.entry_id
         WHERE m.fingerprint = ?1"
    ))
    .and_then(|mut s| {
        s.query_row([fingerprint], |r| {
            Ok(EntryStates {
                trusted: r.get(0)?,
                reviewed_untrusted: r.get(1)?,
                unreviewed: r.get(2)?,
                staged: r.get(3)?,
                rejected: r.get(4)?,
                archived: r.get(5)?,
                stale: r.get(6)?,
            })
        })
    })
    .map_err(db)
}

/// Coverage of one project by a generation.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct ProjectCoverage {
    pub project: String,
    /// Eligible sessions a pass has something to read in: `done + partial + failed +
    /// not_started` (those in `empty` are apart).
    pub sessions: u32,
    pub done: u32,
    pub partial: u32,
    pub failed: u32,
    /// Eligible sessions without a row, or whose records grew since they were read.
    pub not_started: u32,
    /// Eligible sessions with nothing a model would read (every record hidden from it: a
    /// compaction sub-agent's summary request, system-injected prompts, reasoning): a pass
    /// marks them done without a call, so they count neither as read nor as still to read.
    pub empty: u32,
    pub entries: u32,
}

/// Where in each session a model would have something to read, as far as its records were
/// read (migration 49, `recall_extract_readable`): what coverage and readiness ask of every
/// session no progress row covers. A session's records are read only when no stored row
/// speaks of them as they end now (never read, or grown since), or a change that left them
/// ending there took the row away ([`forget_readable`]); what was read
/// is kept in memory and stored by [`Readable::save`], so the next status reads the records of
/// the sessions that changed since and no others.
#[derive(Debug, Default)]
pub struct Readable {
    /// Session → the `next_ordinal` its records were read at, and the last of them a model is
    /// shown.
    known: HashMap<i64, (i64, Option<i64>)>,
    /// Read from the records since [`Readable::load`], not stored yet.
    learnt: Vec<(i64, i64, Option<i64>)>,
}

impl Readable {
    /// What the archive keeps. An archive older than migration 49 opened read-only keeps
    /// nothing: every session is read, as before it.
    pub fn load(conn: &Connection) -> Result<Readable> {
        let db = crate::store::err_in(conn);
        let kept: bool = conn
            .query_row(
                "SELECT EXISTS (SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = 'recall_extract_readable')",
                [],
                |r| r.get(0),
            )
            .map_err(db)?;
        if !kept {
            return Ok(Readable::default());
        }
        let known = conn
            .prepare_cached(
                "SELECT session_id, read_through, last_visible FROM recall_extract_readable",
            )
            .and_then(|mut s| {
                s.query_map([], |r| Ok((r.get(0)?, (r.get(1)?, r.get(2)?))))?
                    .collect()
            })
            .map_err(db)?;
        Ok(Readable {
            known,
            learnt: Vec::new(),
        })
    }

    /// The ordinal of the last record of `session` a model is shown, of those below
    /// `next_ordinal` (where the session's records end now); `None`: a pass reads nothing of it.
    pub fn last_visible(
        &mut self,
        conn: &Connection,
        session: i64,
        next_ordinal: i64,
    ) -> Result<Option<i64>> {
        if let Some(&(through, last)) = self.known.get(&session)
            && through == next_ordinal
        {
            return Ok(last);
        }
        let mut rows = records(conn, session)?;
        // A capture may have appended since `next_ordinal` was read: the row speaks of the
        // records below it alone, and the next status reads the rest.
        rows.retain(|r| i64::from(r.ordinal) < next_ordinal);
        let last = super::segment::last_visible(&rows).map(i64::from);
        self.known.insert(session, (next_ordinal, last));
        self.learnt.push((session, next_ordinal, last));
        Ok(last)
    }

    /// Whether sessions were read that are not stored yet.
    pub fn learnt(&self) -> bool {
        !self.learnt.is_empty()
    }

    /// Store what was read since [`Readable::load`]: in the caller's transaction when there is
    /// one, else in one of its own. A session forgotten meanwhile is passed over. How many
    /// rows were written.
    pub fn save(&mut self, conn: &Connection) -> Result<usize> {
        if self.learnt.is_empty() {
            return Ok(0);
        }
        let db = crate::store::err_in(conn);
        let own = conn
            .is_autocommit()
            .then(|| {
                rusqlite::Transaction::new_unchecked(conn, rusqlite::TransactionBehavior::Immediate)
            })
            .transpose()
            .map_err(db)?;
        let mut written = 0;
        {
            let mut insert = conn
                .prepare_cached(
                    "INSERT INTO recall_extract_readable (session_id, read_through, last_visible)
                     VALUES (?1, ?2, ?3)
                     ON CONFLICT (session_id) DO UPDATE SET read_through = ?2, last_visible = ?3",
                )
                .map_err(db)?;
            for (session, through, last) in &self.learnt {
                match insert.execute(params![session, through, last]) {
                    Ok(_) => written += 1,
                    // The session is gone (forgotten): nothing to keep of it.
                    Err(rusqlite::Error::SqliteFailure(e, _))
                        if e.code == rusqlite::ErrorCode::ConstraintViolation => {}
                    Err(e) => return Err(db(e)),
                }
            }
        }
        if let Some(tx) = own {
            tx.commit().map_err(db)?;
        }
        self.learnt.clear();
        Ok(written)
    }
}

/// Forget what was read of `session`: a capture stored records for it (the facade hears of
/// each such session through the archive's relink queue), so the next status reads where it
/// has something to read (its records may end where they did, a keyed record rewritten or
/// retracted in place). `changed_from` is the lowest record a capture changed in place since
/// (the queue row's, None when the session only grew): a progress row that read that record
/// or one above no longer covers what it read ([`REREAD`]). A session that only grew keeps its
/// rows: its records below where they read are as they were, so a finished session is still
/// done and a failed one still waits out its back-off.
pub fn forget_readable(conn: &Connection, session: i64, changed_from: Option<i64>) -> Result<()> {
    let db = crate::store::err_in(conn);
    conn.prepare_cached("DELETE FROM recall_extract_readable WHERE session_id = ?1")
        .and_then(|mut s| s.execute([session]))
        .map_err(db)?;
    let Some(from) = changed_from else {
        return Ok(());
    };
    // A row covers the records below its `covered_ordinal`: one that stopped at or before the
    // changed record read none that changed, and keeps covering what it read.
    mark_reread(conn, session, Some(from))
}

/// `session`'s records were read again whole (a reindex, by today's parsers and redaction):
/// any of them may read differently, so no progress row covers it any more, and where it has
/// something to read is read again.
pub fn reread(conn: &Connection, session: i64) -> Result<()> {
    conn.prepare_cached("DELETE FROM recall_extract_readable WHERE session_id = ?1")
        .and_then(|mut s| s.execute([session]))
        .map_err(crate::store::err_in(conn))?;
    mark_reread(conn, session, None)
}

/// A progress row's `covered_ordinal` once a record below it may have changed in place: the
/// row speaks of no record as it stands now. The next pass segments the session again and
/// `begin` keeps the units read before the first whose digest differs: the model is asked
/// again from that unit on (whose unreviewed entries, read from the old text, go), never
/// about one before it.
pub const REREAD: i64 = -1;

/// Mark the rows of `session` (those that read the record at `from`, or all) as covering
/// nothing ([`REREAD`]), their content digest emptied so a pass reading the old records stops
/// at its next commit (the commit guard finds the row moved) instead of asking about text that
/// no longer stands.
fn mark_reread(conn: &Connection, session: i64, from: Option<i64>) -> Result<()> {
    conn.prepare_cached(
        "UPDATE recall_extract_progress SET covered_ordinal = ?2, content_digest = ''
         WHERE session_id = ?1 AND (?3 IS NULL OR covered_ordinal > ?3)",
    )
    .and_then(|mut s| s.execute(params![session, REREAD, from]))
    .map(drop)
    .map_err(crate::store::err_in(conn))
}

/// Whether a progress row written when `s` ended at `covered_ordinal` still speaks of all a
/// pass would read of it: nothing was stored since, or only records a model is not shown
/// (tool noise, reasoning, system-injected prompts). Those make no unit and change none (a unit
/// holds shown records alone and no ordinal below the row's moved), so the session keeps the
/// state its readable content has. Records are never taken out from under a row but by a
/// reindex; one that leaves fewer records than the row read covers nothing, and neither does
/// one whose records changed in place since ([`REREAD`]).
fn covers(
    conn: &Connection,
    readable: &mut Readable,
    s: &archive::StorySession,
    covered_ordinal: i64,
) -> Result<bool> {
    if covered_ordinal == REREAD {
        return Ok(false);
    }
    if covered_ordinal == s.next_ordinal {
        return Ok(true);
    }
    if covered_ordinal > s.next_ordinal {
        return Ok(false);
    }
    Ok(readable
        .last_visible(conn, s.id, s.next_ordinal)?
        .is_none_or(|last| last < covered_ordinal))
}

/// A session's row in a generation, as coverage reads it.
struct Row {
    state: String,
    covered: i64,
    units_total: u32,
}

/// Coverage of each project by generation `fingerprint`; `readable` reads (and learns) where
/// the sessions no row covers have something to read (the caller stores it, [`Readable::save`]).
pub fn coverage(
    conn: &Connection,
    fingerprint: &str,
    readable: &mut Readable,
) -> Result<Vec<ProjectCoverage>> {
    let db = crate::store::err_in(conn);
    let progress: HashMap<i64, Row> = conn
        .prepare_cached(
            "SELECT session_id, state, covered_ordinal, units_total FROM recall_extract_progress WHERE fingerprint = ?1",
        )
        .and_then(|mut s| {
            s.query_map([fingerprint], |r| {
                Ok((
                    r.get(0)?,
                    Row {
                        state: r.get(1)?,
                        covered: r.get(2)?,
                        units_total: r.get(3)?,
                    },
                ))
            })?
            .collect()
        })
        .map_err(db)?;
    let entries: HashMap<i64, u32> = conn
        .prepare_cached(
            "SELECT session_id, COUNT(*) FROM recall_extract_entries WHERE fingerprint = ?1 GROUP BY session_id",
        )
        .and_then(|mut s| {
            s.query_map([fingerprint], |r| Ok((r.get(0)?, r.get(1)?)))?
                .collect()
        })
        .map_err(db)?;
    let mut by_project: BTreeMap<String, ProjectCoverage> = BTreeMap::new();
    for s in archive::story_sessions(conn, archive::StoryFilter::default()).map_err(db)? {
        let c = by_project
            .entry(s.project.clone())
            .or_insert_with(|| ProjectCoverage {
                project: s.project.clone(),
                ..Default::default()
            });
        c.entries += entries.get(&s.id).copied().unwrap_or(0);
        let row = progress.get(&s.id);
        let covering = match row {
            Some(r) => covers(conn, readable, &s, r.covered)?,
            None => false,
        };
        // Nothing to read: a pass found no unit in what is stored now, or would find none.
        // Only where no row covers the session is that asked of `readable`, which reads the
        // records of a session alone when they changed since it last did.
        let empty = match row {
            Some(r) if covering => r.state == "done" && r.units_total == 0,
            Some(r) if matches!(r.state.as_str(), "partial" | "failed") => false,
            _ => readable.last_visible(conn, s.id, s.next_ordinal)?.is_none(),
        };
        if empty {
            c.empty += 1;
            continue;
        }
        c.sessions += 1;
        match row.map(|r| r.state.as_str()) {
            Some("done") if covering => c.done += 1,
            Some("partial") => c.partial += 1,
            Some("failed") => c.failed += 1,
            None | Some("pending" | "done") => c.not_started += 1,
            Some(_) => {}
        }
    }
    Ok(by_project.into_values().collect())
}

/// Failed sessions of a generation, with their errors (redacted as read), most recent first.
pub fn failures(conn: &Connection, fingerprint: &str, limit: u32) -> Result<Vec<(String, String)>> {
    let db = crate::store::err_in(conn);
    let failed: Vec<(i64, String)> = conn
        .prepare_cached(
            "SELECT session_id, COALESCE(last_error, '') FROM recall_extract_progress
             WHERE fingerprint = ?1 AND state = 'failed' ORDER BY updated_at DESC",
        )
        .and_then(|mut s| {
            s.query_map([fingerprint], |r| Ok((r.get(0)?, r.get(1)?)))?
                .collect()
        })
        .map_err(db)?;
    let mut out = Vec::new();
    for (session, error) in failed {
        if out.len() >= limit as usize {
            break;
        }
        if let Some(key) = archive::session_key_of(conn, session).map_err(db)? {
            out.push((key, stored_error(&error)));
        }
    }
    Ok(out)
}

//! The [`Cairn`] facade's forget: list what a request would remove, then remove it, each room
//! deleting its own rows (archive, git, semantic, recall, insights) in one transaction, then
//! the retained copies, the free pages and the write-ahead log.
//!
//! A forget and a lift of its tombstones run under the capture lock, from before they read
//! the archive to after their last write: a rebuild from the copies holds that lock from its
//! first read of the old database to its swap, so neither can land in the old database after
//! the rebuild read it (a forget the new database would not know of, the session back); a
//! capture, which writes retained copies under the same lock, cannot come between the
//! sweep's read of the tombstones and its deletion of their copies.
//!
//! The old databases a rebuild set aside (`cairn.db.damaged-<time>`) still hold every session
//! they held. A forget reaches into each that holds a forgotten session: one that reads
//! cleanly (`quick_check`), is at the archive's schema version and takes writes gets the same
//! removal (every room's rows, zeroed pages vacuumed away); any other is named in the report
//! with the fix, as writing into a damaged file may spread the damage and a partial removal
//! (its records, not its full-text index or vectors) would remove less than it says. What a
//! rebuild that did not finish left (`cairn.db.rebuilding`, a `cairn.db.rebuilt` never put in
//! place) is only a half-made copy of the archive: it is deleted whole, under the same lock,
//! which no rebuild making it could be holding. The plan a person confirms lists all of these
//! files and what the forget will do in each ([`ForgetPlan::set_aside`]).

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::archive::capture::{CaptureLock, LockGuard, Progress};
use crate::archive::{self, Agent};
use crate::error::{Error, Result};
use crate::{Cairn, clock, git, insights, recall, semantic};

/// Which sessions to forget; every given condition must hold, and one must be given.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct ForgetRequest {
    /// A session key or the agent's own session id.
    pub session: Option<String>,
    pub project: Option<String>,
    /// Sessions last active before this day (`YYYY-MM-DD`) or RFC 3339 time.
    pub before: Option<String>,
    pub agent: Option<Agent>,
    /// Let the next sync import the forgotten files again (no tombstone holds them back).
    pub allow_reimport: bool,
}

/// A session a forget removes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct ForgetSession {
    pub session_key: String,
    pub agent: String,
    pub title: Option<String>,
    pub started_at: Option<String>,
}

/// A Recall entry that cites a forgotten session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct ForgetEntry {
    pub id: String,
    pub title: String,
    /// No evidence would be left of an entry a person accepted: it goes back to the review
    /// inbox, evidence revoked.
    pub back_to_inbox: bool,
    /// No evidence would be left of an entry no person accepted: it goes with the sessions
    /// (machine text drawn from them alone).
    #[serde(default)]
    pub deleted: bool,
    /// A rejected entry: it stays archived, out of the inbox, whatever evidence it keeps.
    pub stays_archived: bool,
    /// An archived entry another replaced (not rejected): it stays archived, replaced by this.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub superseded_by: Option<String>,
    /// The entry this one replaced, served again in its place when this one goes back to the
    /// inbox.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hands_back_to: Option<String>,
}

/// A generated report that read a forgotten session (it goes too: it may quote it).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct ForgetReport {
    pub id: i64,
    pub title: String,
}

/// Exactly what a forget removes (before), or removed (after).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct ForgetPlan {
    pub sessions: Vec<ForgetSession>,
    pub turns: u32,
    pub records: u32,
    /// Transcript files read: each has a retained copy, and gets a tombstone.
    pub retained_copies: u32,
    pub vectors: u32,
    pub links: u32,
    /// Evidence rows citing the sessions, and the entries they belong to.
    pub recall_evidence: u32,
    pub recall_entries: Vec<ForgetEntry>,
    pub insight_reports: Vec<ForgetReport>,
    /// Sessions this forget keeps that carry the agent's session id of one it removes (an
    /// imported trajectory of it, a teammate's copy): their keys, to forget them too.
    pub same_id_kept: Vec<String>,
    /// Sessions this machine published through git (`cairn publish`): the next `cairn push`
    /// in their repository deletes their refs there and at the remote, and `cairn pull` never
    /// brings them back (unless `allow_reimport`, which leaves every copy where it is).
    pub published: u32,
    /// Sessions pulled from a teammate (`cairn pull`): the next pull or push in their repository
    /// deletes the copy fetched there, and no pull imports them again (unless `allow_reimport`).
    pub pulled: u32,
    /// Sessions a `cairn team push` sent: the next one withdraws them from the team archive.
    pub team_pushed: u32,
    /// Whether the next sync may import the files again.
    pub allow_reimport: bool,
    /// The databases a rebuild set aside that hold (or may hold) these sessions, and what a
    /// rebuild that did not finish left, with what the forget does in each: removes them there
    /// too, cannot (why, and the fix: delete the file), or deletes the file whole. In a preview,
    /// what it will do (each file read, nothing written); after a forget, what it did.
    #[serde(default)]
    pub set_aside: Vec<ForgetSetAside>,
}

/// What became of the forgotten sessions in a database a rebuild set aside.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "snake_case")]
pub enum SetAsideFate {
    /// Removed there as in the archive: every room's rows, the pages zeroed and vacuumed away.
    Removed,
    /// Still there: the file could not be written safely (`why`). Delete it once the rebuilt
    /// archive is checked.
    Holds,
    /// The file could not be read (`why`), so it may hold them. Delete it once the rebuilt
    /// archive is checked.
    MayHold,
    /// A half-made copy of the archive a rebuild that did not finish left
    /// (`cairn.db.rebuilding`, or `cairn.db.rebuilt` never put in place): deleted whole.
    Deleted,
}

/// A database a rebuild from the copies set aside that held (or may hold) forgotten sessions,
/// or one a rebuild that did not finish left.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct ForgetSetAside {
    /// The file, as a person reads it: its path, or for a name that is not UTF-8 its lossy form
    /// saying so ([`crate::doctor::shown`]). Also how a forget of a plan finds the file again
    /// among those in the data dir, and then acts on the file's real name, never on this text.
    pub path: String,
    /// The command that deletes the file with its `-wal` and `-shm`, each named byte for byte
    /// ([`crate::doctor::quoted`]: `$'\xNN'` parts for what a terminal would not show or is not
    /// UTF-8, which bash and zsh read).
    #[serde(default)]
    pub rm: String,
    /// How many of the forgotten sessions it was found to hold (0 when it could not be read,
    /// and for a file deleted whole, which is not read).
    pub sessions: u32,
    pub fate: SetAsideFate,
    /// Why they were not removed there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
}

/// What `forget` did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct Forgotten {
    /// What was removed (the plan, as carried out).
    pub removed: ForgetPlan,
    /// Retained copy files deleted (including any a killed forget left behind).
    pub retained_files_deleted: u32,
    /// The database file's size before and after (freed pages are zeroed, then vacuumed): a
    /// count, so JSON says `1847296`, not `1847296.0` (a number in TypeScript, exact below 2^53).
    #[cfg_attr(feature = "specta", specta(type = f64))]
    pub db_bytes_before: u64,
    #[cfg_attr(feature = "specta", specta(type = f64))]
    pub db_bytes_after: u64,
    /// The databases a rebuild set aside that held forgotten sessions: removed there too, or
    /// named with why not (the fix: delete the file once the rebuilt archive is checked).
    #[serde(default)]
    pub set_aside: Vec<ForgetSetAside>,
}

/// Which tombstones to lift: of this agent only, laid at or after this time; each `None` for
/// any.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct LiftRequest {
    pub agent: Option<Agent>,
    /// Tombstones laid at or after this day (`YYYY-MM-DD`) or RFC 3339 time.
    pub since: Option<String>,
}

/// The tombstones a lift takes away (before), or took away (after).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct Lifted {
    /// Transcript files the next sync reads again (where the agent still keeps them).
    pub files: u32,
    /// Sessions the next sync imports again, from whichever file holds them.
    pub sessions: u32,
    /// Of the sessions whose tombstones the lift takes away (of its agent, laid since its
    /// time), those shared through git: they stay forgotten there (a lift is about this
    /// machine's captures: `cairn pull` still never brings them back).
    pub shared_kept: u32,
}

/// How long a person's write with no one to tell that it waits (the desktop's forget, a link
/// correction) waits for the capture lock before [`Error::Locked`] says what holds it: as long
/// as a rebuild waits for a capture.
pub(crate) const PERSON_LOCK_WAIT: Duration = Duration::from_secs(30);

/// How many sessions shared through git keep their tombstone there (`forgotten_shared`) though
/// a lift of `agent`'s tombstones laid since `since` lets the sync import them again: those
/// among the sessions the lift takes the tombstones of, and no other agent's or older ones.
fn shared_kept(
    conn: &rusqlite::Connection,
    agent: Option<Agent>,
    since: Option<&str>,
) -> rusqlite::Result<u64> {
    let lifted = archive::forget::liftable_sessions(conn, agent, since)?;
    let shared = git::forget::forgotten_shared(conn)?;
    Ok(shared
        .iter()
        .filter(|(key, _)| lifted.contains(key))
        .count() as u64)
}

/// How many of the sessions keyed `keys` a team push sent (none in a build without the team
/// archive).
fn team_pushed(conn: &rusqlite::Connection, keys: &[String]) -> rusqlite::Result<u64> {
    #[cfg(feature = "team")]
    return crate::team::forget::pushed_among(conn, keys);
    #[cfg(not(feature = "team"))]
    {
        let _ = (conn, keys);
        Ok(0)
    }
}

/// Every room's removal of the sessions with row ids `ids` (keys `keys`) on `tx`, the
/// database's own transaction: the archive's, or a set-aside one's.
fn delete_rows(
    tx: &rusqlite::Connection,
    ids: &[i64],
    keys: &[String],
    allow_reimport: bool,
    now: &str,
) -> rusqlite::Result<()> {
    let turns = archive::forget::turn_ids(tx, ids)?;
    let reports: Vec<i64> = insights::forget::reports_of(tx, keys)?
        .into_iter()
        .map(|(id, _)| id)
        .collect();
    insights::forget::delete(tx, &reports)?;
    recall::forget::revoke(tx, ids, now)?;
    semantic::forget::delete(tx, &turns)?;
    git::forget::delete(tx, ids)?;
    if !allow_reimport {
        let shared = archive::store::shared_through_git(tx, ids)?;
        git::forget::remember_shared(tx, &shared, now)?;
    }
    archive::forget::delete(tx, ids, allow_reimport, now)?;
    archive::forget::compact_index(tx)
}

/// Secure delete on, `f` in an immediate transaction, then the zeroed pages given back and
/// the log emptied: a forget's writes, on the archive or a set-aside database.
fn forget_in(
    conn: &mut rusqlite::Connection,
    f: impl FnOnce(&rusqlite::Connection) -> rusqlite::Result<()>,
) -> rusqlite::Result<()> {
    conn.pragma_update(None, "secure_delete", "ON")?;
    let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
    f(&tx)?;
    tx.commit()?;
    conn.execute_batch("VACUUM")?;
    conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))?;
    conn.pragma_update(None, "secure_delete", "OFF")
}

/// A database opened read-only, and the row id and key of each session of those asked for it holds.
type Found = (rusqlite::Connection, Vec<(i64, String)>);

/// The sessions among `keys` the set-aside database `db` holds (row id and key), read
/// read-only, as the rebuild reads it (a damaged file as far as it reads), on the connection
/// returned; or why it could not be read.
fn found_in(db: &std::path::Path, keys: &[String]) -> rusqlite::Result<Found> {
    use rusqlite::{Connection, OpenFlags};
    let conn = Connection::open_with_flags(
        db,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )?;
    conn.busy_timeout(Duration::from_secs(5))?;
    let mut ids = Vec::new();
    archive::rebuild::each_session_key(&conn, |id, key| {
        if keys.contains(&key) {
            ids.push((id, key));
        }
    })?;
    Ok((conn, ids))
}

/// Why a forget may not write in the set-aside database open on `conn`: damaged (`quick_check`:
/// writing there may spread the damage), or at another schema than the archive's `version` (the
/// rooms' SQL may not mean there what it means in the archive). `None`: it may.
fn unsafe_to_write(conn: &rusqlite::Connection, version: i64) -> Option<String> {
    let checked = (|| -> rusqlite::Result<(Vec<String>, i64)> {
        let problems = conn
            .prepare("PRAGMA quick_check(5)")?
            .query_map([], |r| r.get(0))?
            .collect::<rusqlite::Result<Vec<String>>>()?;
        let at: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
        Ok((problems, at))
    })();
    match checked {
        Err(e) => Some(format!("it could not be checked: {e}")),
        Ok((problems, _)) if problems != ["ok"] => Some(format!(
            "it is damaged (quick_check: {}), and writing there may spread the damage",
            crate::text::excerpt(&problems.join("; "), 200)
        )),
        Ok((_, at)) if at != version => Some(format!(
            "its schema (version {at}) is not the archive's ({version})"
        )),
        Ok(_) => None,
    }
}

/// A read-only look at `db` for the sessions `keys`: the connection and their rows when it
/// holds some; `Err(None)` when it holds none; `Err(Some(_))`, named as one that may hold them,
/// when it could not be read.
fn holding(db: &std::path::Path, keys: &[String]) -> Result<Found, Option<ForgetSetAside>> {
    match found_in(db, keys) {
        Ok((_, found)) if found.is_empty() => Err(None),
        Ok(found) => Ok(found),
        Err(e) => Err(Some(aside_named(
            db,
            0,
            SetAsideFate::MayHold,
            Some(format!("it could not be read: {e}")),
        ))),
    }
}

/// A database set aside at `db` named with its fate.
fn aside_named(
    db: &std::path::Path,
    sessions: usize,
    fate: SetAsideFate,
    why: Option<String>,
) -> ForgetSetAside {
    let word =
        |suffix: &str| crate::doctor::quoted(&crate::doctor::set_aside::with_suffix(db, suffix));
    ForgetSetAside {
        path: crate::doctor::shown(db),
        rm: format!("rm -f {} {} {}", word(""), word("-wal"), word("-shm")),
        sessions: small(sessions as u64),
        fate,
        why,
    }
}

/// What a forget of the sessions `keys` will do in the database `db` a rebuild set aside, read
/// and not written ([`forget_set_aside`] decides the same way, and writes): `Removed` when it
/// holds some and reads cleanly, is at the archive's schema `version` and its file is not
/// read-only; otherwise named with why not. `None` when it holds none of them.
fn preview_set_aside(
    db: &std::path::Path,
    keys: &[String],
    version: i64,
) -> Option<ForgetSetAside> {
    let (conn, found) = match holding(db, keys) {
        Ok(found) => found,
        Err(named) => return named,
    };
    let holds = |why: String| Some(aside_named(db, found.len(), SetAsideFate::Holds, Some(why)));
    if std::fs::metadata(db).is_ok_and(|m| m.permissions().readonly()) {
        return holds("it does not open for writing: the file is read-only".to_owned());
    }
    if let Some(why) = unsafe_to_write(&conn, version) {
        return holds(why);
    }
    Some(aside_named(db, found.len(), SetAsideFate::Removed, None))
}

/// What a rebuild that did not finish left in `data_dir` ([`crate::doctor::set_aside::unfinished`]),
/// each to be deleted whole.
fn unfinished_to_delete(data_dir: &std::path::Path) -> Vec<ForgetSetAside> {
    crate::doctor::set_aside::unfinished(data_dir)
        .iter()
        .map(|a| aside_named(&a.path, 0, SetAsideFate::Deleted, None))
        .collect()
}

/// The forgotten sessions `keys` in the database `db` a rebuild set aside: removed there when
/// it reads cleanly, is at `version` (the archive's schema, so every room's SQL means there
/// what it means in the archive) and takes writes; otherwise named with why not. `None` when
/// it holds none of them (its sessions read through without one).
fn forget_set_aside(
    db: &std::path::Path,
    keys: &[String],
    version: i64,
    allow_reimport: bool,
    now: &str,
) -> Option<ForgetSetAside> {
    use rusqlite::{Connection, OpenFlags};
    // Read-only first, as the rebuild reads it: a damaged file is read as far as it reads.
    let found = match holding(db, keys) {
        Ok((_, found)) => found,
        Err(named) => return named,
    };
    let holds = |why: String| Some(aside_named(db, found.len(), SetAsideFate::Holds, Some(why)));
    let mut conn = match Connection::open_with_flags(
        db,
        OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    ) {
        Ok(conn) => conn,
        Err(e) => return holds(format!("it does not open for writing: {e}")),
    };
    if let Err(e) = conn
        .busy_timeout(Duration::from_secs(5))
        .and_then(|()| conn.execute_batch("PRAGMA foreign_keys = ON"))
    {
        return holds(format!("it could not be checked: {e}"));
    }
    if let Some(why) = unsafe_to_write(&conn, version) {
        return holds(why);
    }
    let (ids, keys): (Vec<i64>, Vec<String>) = found.iter().cloned().unzip();
    match forget_in(&mut conn, |tx| {
        delete_rows(tx, &ids, &keys, allow_reimport, now)
    }) {
        Ok(()) => Some(aside_named(db, ids.len(), SetAsideFate::Removed, None)),
        Err(e) => holds(format!("removing them there failed: {e}")),
    }
}

/// What a forget does in the database `db` a rebuild set aside. Without a plan, what
/// [`forget_set_aside`] decides. With one, `planned` is what it listed of `db` (`None`: nothing,
/// as `db` was set aside after the list was made): removed there when it was to be and still
/// may be; otherwise not written, only looked at (read-only) and named when it holds them, with
/// why it was left.
fn aside_acted(
    db: &std::path::Path,
    planned: Option<Option<&ForgetSetAside>>,
    keys: &[String],
    version: i64,
    allow_reimport: bool,
    now: &str,
) -> Option<ForgetSetAside> {
    let kept = |why: String| match holding(db, keys) {
        Ok((_, found)) => Some(aside_named(db, found.len(), SetAsideFate::Holds, Some(why))),
        Err(named) => named,
    };
    match planned {
        None => forget_set_aside(db, keys, version, allow_reimport, now),
        Some(Some(p)) if p.fate == SetAsideFate::Removed => {
            forget_set_aside(db, keys, version, allow_reimport, now)
        }
        Some(Some(p)) => kept(p.why.clone().unwrap_or_default()),
        Some(None) => kept(
            "it is not in the list the forget showed (set aside since, or shown under the name of another file), so the forget did not write there"
                .to_owned(),
        ),
    }
}

fn small(n: u64) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// The time a lift's tombstones were laid at or after, as stored times compare with it: a day
/// as written (it sorts before every time of that day), a time in the form a tombstone's is
/// stored in (`clock::now`: milliseconds, so a tombstone laid within the second named is not
/// sorted before it).
fn lift_since(req: &LiftRequest) -> Result<Option<String>> {
    req.since
        .as_deref()
        .map(|s| {
            let bound = crate::text::time_bound(s).ok_or_else(|| {
                Error::Invalid(format!(
                    "--since {:?} is not a date; write YYYY-MM-DD or an RFC 3339 time",
                    crate::text::one_line(s, 40)
                ))
            })?;
            Ok(match crate::text::parse_rfc3339(&bound) {
                Some(t) if bound.len() > 10 => t.strftime("%Y-%m-%dT%H:%M:%S%.3fZ").to_string(),
                _ => bound,
            })
        })
        .transpose()
}

impl Cairn {
    /// Delete the retained copies of every tombstoned file the archive does not hold that a
    /// forget killed after its commit left behind (every sync sweeps, so such a copy does not
    /// wait for the next forget). Under the capture lock (see [`Self::sweep_locked`]), taken
    /// only if no other process holds it: a sync with nothing to capture would otherwise wait
    /// without a word for a rebuild's whole run. Nothing is swept when the lock is held, nor
    /// when `store` is on a database a rebuild swapped out (its tombstones are not the
    /// archive's now): the next sync or forget sweeps. How many files went.
    pub(crate) fn sweep_forgotten_copies(&self, store: &crate::store::Store) -> Result<u64> {
        let lock = CaptureLock::open(&self.data_dir)?;
        let held = match lock.try_lock(&self.data_dir, "a capture or a reindex") {
            Ok(held) => held,
            Err(Error::Locked { .. }) => return Ok(0),
            Err(e) => return Err(e),
        };
        // What a rebuild that did not finish left: no rebuild holds the lock now, so none is
        // making it (a sync that skipped the sweep leaves it to the next).
        if let Err((file, e)) = crate::doctor::set_aside::remove_unfinished(&self.data_dir, &held) {
            tracing::warn!(
                "removing {}, left by a rebuild that did not finish: {e}",
                file.display()
            );
        }
        if store.moved() {
            return Ok(0);
        }
        self.sweep_locked(store, &held)
    }

    /// The sweep, its caller holding the capture lock (`_held`) on `store`'s database, which
    /// is the archive's: between the read of the tombstones and the deletion of their copies,
    /// no lift (which takes the lock) can take a tombstone away and no capture (which writes
    /// retained copies under it) can write a fresh copy of a file no longer forgotten.
    fn sweep_locked(&self, store: &crate::store::Store, _held: &LockGuard<'_>) -> Result<u64> {
        let orphans =
            archive::forget::tombstones_without_source(store.conn()).map_err(|e| store.err(e))?;
        let mut deleted = 0;
        for (agent, key) in orphans {
            deleted +=
                archive::forget::remove_retained(&self.data_dir, &agent, &key).map_err(|e| {
                    Error::Write {
                        path: self.data_dir.join("retained"),
                        source: e,
                    }
                })?;
        }
        Ok(deleted)
    }

    fn forget_selector(
        &self,
        store: &crate::store::Store,
        req: &ForgetRequest,
    ) -> Result<archive::forget::Selector> {
        if req.session.is_none()
            && req.project.is_none()
            && req.before.is_none()
            && req.agent.is_none()
        {
            return Err(Error::Invalid(
                "say what to forget: a session, or --project, --before or --agent".to_owned(),
            ));
        }
        let session = match req.session.as_deref() {
            Some(s) => Some(self.session_row(store, s)?),
            None => None,
        };
        let before = match req.before.as_deref() {
            None => None,
            Some(b) => Some(crate::text::time_bound(b).ok_or_else(|| {
                Error::Invalid(format!(
                    "--before {:?} is not a date; write YYYY-MM-DD or an RFC 3339 time",
                    crate::text::one_line(b, 40)
                ))
            })?),
        };
        Ok(archive::forget::Selector {
            session,
            project: req.project.clone(),
            before,
            agent: req.agent,
        })
    }

    /// What [`Cairn::lift_forgotten`] would take away for `req`; changes nothing.
    pub fn lift_preview(&self, req: &LiftRequest) -> Result<Lifted> {
        let since = lift_since(req)?;
        let store = self.store();
        let conn = store.conn();
        let counted = (|| -> rusqlite::Result<Lifted> {
            let t = archive::forget::liftable(conn, req.agent, since.as_deref())?;
            Ok(Lifted {
                files: small(t.sources),
                sessions: small(t.sessions),
                shared_kept: small(shared_kept(conn, req.agent, since.as_deref())?),
            })
        })();
        counted.map_err(|e| store.err(e))
    }

    /// Undo what can be undone of past forgets: their tombstones go, so the next sync imports
    /// again the transcripts the agents still keep (what only the archive held went with the
    /// forget and stays gone). Under the capture lock (the module's comment says why);
    /// `waiting` is told when another process holds it, and the lift waits for it.
    pub fn lift_forgotten(&self, req: &LiftRequest, waiting: &dyn Progress) -> Result<Lifted> {
        self.writable()?;
        let since = lift_since(req)?;
        let lock = CaptureLock::open(&self.data_dir)?;
        let _held = lock.lock_for_person(&self.data_dir, Some(waiting), PERSON_LOCK_WAIT)?;
        // After the lock: a rebuild that swapped a new database in while this waited is the
        // archive now, and the shared connection opens it.
        let mut store = self.store();
        let done = (|| -> rusqlite::Result<Lifted> {
            let tx = store
                .conn_mut()
                .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
            // Counted before the lift takes away the session tombstones it goes by.
            let shared_kept = shared_kept(&tx, req.agent, since.as_deref())?;
            let t = archive::forget::lift(&tx, req.agent, since.as_deref())?;
            tx.commit()?;
            Ok(Lifted {
                files: small(t.sources),
                sessions: small(t.sessions),
                shared_kept: small(shared_kept),
            })
        })();
        done.map_err(|e| store.err(e))
    }

    /// Exactly what [`Cairn::forget`] would remove for `req`, the databases set aside and a
    /// rebuild's leftovers included ([`ForgetPlan::set_aside`]); changes nothing.
    pub fn forget_preview(&self, req: &ForgetRequest) -> Result<ForgetPlan> {
        let mut plan = self.forget_plan(req)?;
        if !plan.sessions.is_empty() {
            let version = self.store().schema_version()?;
            let keys: Vec<String> = plan
                .sessions
                .iter()
                .map(|s| s.session_key.clone())
                .collect();
            plan.set_aside = crate::doctor::set_aside::list(&self.data_dir)
                .iter()
                .filter_map(|a| preview_set_aside(&a.path, &keys, version))
                // Not while another process holds the lock: a rebuild may be making it.
                .chain(
                    if crate::doctor::set_aside::lock_held_elsewhere(&self.data_dir) {
                        Vec::new()
                    } else {
                        unfinished_to_delete(&self.data_dir)
                    },
                )
                .collect();
        }
        Ok(plan)
    }

    /// What [`Cairn::forget`] would remove for `req` from the archive itself (the plan without
    /// its `set_aside`, which reads other files).
    fn forget_plan(&self, req: &ForgetRequest) -> Result<ForgetPlan> {
        let store = self.store();
        let sel = self.forget_selector(&store, req)?;
        let conn = store.conn();
        let plan = (|| -> rusqlite::Result<ForgetPlan> {
            let doomed = archive::forget::select(conn, &sel)?;
            let ids: Vec<i64> = doomed.iter().map(|d| d.id).collect();
            let keys: Vec<String> = doomed.iter().map(|d| d.key.clone()).collect();
            let held = archive::forget::held(conn, &ids)?;
            let turns = archive::forget::turn_ids(conn, &ids)?;
            let (evidence, entries) = recall::forget::evidence_of(conn, &ids)?;
            let shared = archive::store::shared_through_git(conn, &ids)?;
            Ok(ForgetPlan {
                sessions: doomed
                    .into_iter()
                    .map(|d| ForgetSession {
                        session_key: d.key,
                        agent: d.agent,
                        title: d.title,
                        started_at: d.started_at,
                    })
                    .collect(),
                turns: small(held.turns),
                records: small(held.records),
                retained_copies: small(held.sources),
                vectors: small(semantic::forget::vectors_of(conn, &turns)?),
                links: small(git::forget::links_of(conn, &ids)?),
                recall_evidence: small(evidence),
                recall_entries: entries
                    .into_iter()
                    .map(|t| ForgetEntry {
                        id: t.id,
                        title: t.title,
                        back_to_inbox: t.to_inbox,
                        deleted: t.deleted,
                        stays_archived: t.archived,
                        superseded_by: t.superseded_by,
                        hands_back_to: t.hands_back_to,
                    })
                    .collect(),
                insight_reports: insights::forget::reports_of(conn, &keys)?
                    .into_iter()
                    .map(|(id, title)| ForgetReport { id, title })
                    .collect(),
                same_id_kept: archive::forget::same_id_kept(conn, &ids)?,
                published: small(shared.iter().filter(|(_, own)| *own).count() as u64),
                pulled: small(shared.iter().filter(|(_, own)| !*own).count() as u64),
                team_pushed: small(team_pushed(conn, &keys)?),
                allow_reimport: req.allow_reimport,
                set_aside: Vec::new(),
            })
        })();
        plan.map_err(|e| store.err(e))
    }

    /// Remove every byte of the sessions `req` names: one transaction in which each room
    /// deletes its own rows (a kill leaves the archive as it was, or without them whole), then
    /// the retained copies, then the freed pages (zeroed by `secure_delete`, given back by
    /// `VACUUM`) and the write-ahead log. All under the capture lock (the module's comment
    /// says why), waited for at most [`PERSON_LOCK_WAIT`], then [`Error::Locked`].
    pub fn forget(&self, req: &ForgetRequest) -> Result<Forgotten> {
        self.forget_within(req, None, None)
    }

    /// [`Cairn::forget`] of what `plan` (from [`Cairn::forget_preview`] of `req`, shown to the
    /// person) lists and nothing else: a session a sync added since, which the selection now
    /// matches too, stays, as no one was asked about it; of the other databases, only those the
    /// plan said it would write or delete are (a database set aside since, or a rebuild's
    /// leftover the list did not name, is named in the answer, untouched). The plan may have
    /// travelled as JSON (the desktop's): its files are found again by their shown names among
    /// those in the data dir, and acted on by their real ones. `waiting` is told when another process
    /// holds the capture lock (a rebuild from the copies, a sync), and the forget waits for it.
    pub fn forget_planned(
        &self,
        req: &ForgetRequest,
        plan: &ForgetPlan,
        waiting: &dyn Progress,
    ) -> Result<Forgotten> {
        self.forget_within(req, Some(plan), Some(waiting))
    }

    /// What a rebuild that did not finish left, deleted under the capture lock (`held`): all of
    /// it without a plan; with one, only the files it listed to delete, any other named as left
    /// (a rebuild may have been making it when the list was made; the next sync deletes it).
    fn unfinished_acted(
        &self,
        planned: Option<&[ForgetSetAside]>,
        held: &LockGuard<'_>,
    ) -> Vec<ForgetSetAside> {
        let left = crate::doctor::set_aside::unfinished(&self.data_dir);
        let listed = |path: &std::path::Path| {
            planned.is_none_or(|p| {
                let name = crate::doctor::shown(path);
                p.iter()
                    .any(|a| a.fate == SetAsideFate::Deleted && a.path == name)
            })
        };
        let mut acted: Vec<ForgetSetAside> = left
            .iter()
            .filter(|a| !listed(&a.path))
            .map(|a| {
                aside_named(
                    &a.path,
                    0,
                    SetAsideFate::MayHold,
                    Some("it is not in the list the forget showed, so it was not deleted; the next `cairn sync` deletes it".to_owned()),
                )
            })
            .collect();
        match crate::doctor::set_aside::remove_unfinished_where(&self.data_dir, held, &listed) {
            Ok(removed) => acted.extend(
                removed
                    .iter()
                    .map(|path| aside_named(path, 0, SetAsideFate::Deleted, None)),
            ),
            Err((file, e)) => acted.extend(left.iter().filter(|a| listed(&a.path)).map(|a| {
                aside_named(
                    &a.path,
                    0,
                    SetAsideFate::MayHold,
                    Some(format!(
                        "{} could not be deleted: {e}",
                        crate::doctor::shown(&file)
                    )),
                )
            })),
        }
        acted
    }

    /// [`Cairn::forget_planned`] for a front door with no one to tell of a wait (the desktop's):
    /// the capture lock is waited for at most [`PERSON_LOCK_WAIT`], then [`Error::Locked`] says
    /// what holds it, as [`Cairn::forget`] does.
    pub fn forget_as_planned(&self, req: &ForgetRequest, plan: &ForgetPlan) -> Result<Forgotten> {
        self.forget_within(req, Some(plan), None)
    }

    /// What `req` selects (only the sessions `confirmed` lists, when given), removed, under
    /// the capture lock (`waiting` told of a wait for it, or the wait bounded without one).
    fn forget_within(
        &self,
        req: &ForgetRequest,
        confirmed: Option<&ForgetPlan>,
        waiting: Option<&dyn Progress>,
    ) -> Result<Forgotten> {
        self.writable()?;
        let lock = CaptureLock::open(&self.data_dir)?;
        // Held to the end, through the `VACUUM` and the checkpoint too: a rebuild starting
        // between the commit and them would set the old file aside while the freed pages
        // still sit in it and its log, and its swap would wait on the `VACUUM`'s write lock.
        let held = lock.lock_for_person(&self.data_dir, waiting, PERSON_LOCK_WAIT)?;
        let mut plan = match confirmed {
            Some(plan) => plan.clone(),
            None => self.forget_plan(req)?,
        };
        let keys: Vec<&str> = plan
            .sessions
            .iter()
            .map(|s| s.session_key.as_str())
            .collect();
        let db_path = self.data_dir.join(crate::store::DB_FILE);
        let size = |p: &std::path::Path| std::fs::metadata(p).map_or(0, |m| m.len());
        let db_bytes_before = size(&db_path);
        let mut store = self.store();
        let sel = self.forget_selector(&store, req)?;
        let now = clock::now();
        let mut forgotten: Vec<String> = Vec::new();
        let result = (|| -> rusqlite::Result<()> {
            let conn = store.conn_mut();
            conn.pragma_update(None, "secure_delete", "ON")?;
            // Immediate: the forget reads what it deletes, then writes. A deferred transaction
            // whose snapshot another writer (a hook's capture) moved on meanwhile cannot become
            // a writer and fails at once, whatever the busy timeout; this one waits its turn.
            let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
            let mut doomed = archive::forget::select(&tx, &sel)?;
            doomed.retain(|d| keys.contains(&d.key.as_str()));
            let ids: Vec<i64> = doomed.iter().map(|d| d.id).collect();
            forgotten = doomed.into_iter().map(|d| d.key).collect();
            delete_rows(&tx, &ids, &forgotten, req.allow_reimport, &now)?;
            tx.commit()
        })();
        result.map_err(|e| store.err(e))?;
        // After the commit: the retained copies of every tombstoned file not held again
        // (this forget's, and any a killed forget left behind).
        let retained_files_deleted = self.sweep_locked(&store, &held)?;
        // Give the zeroed pages back and empty the log, so no copy of a page survives in either
        // (skipped when nothing matched: the sweep above was all there was to do).
        let tidy = (|| -> rusqlite::Result<()> {
            let conn = store.conn();
            if !plan.sessions.is_empty() {
                conn.execute_batch("VACUUM")?;
            }
            conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))?;
            conn.pragma_update(None, "secure_delete", "OFF")
        })();
        tidy.map_err(|e| store.err(e))?;
        let version = store.schema_version()?;
        drop(store);
        // Still under the lock: no rebuild sets another database aside meanwhile. Each holding
        // a forgotten session has it removed there too, or is named; what a rebuild that did
        // not finish left is deleted (no rebuild is making it: this holds the lock). With a
        // plan, only what it listed is written or deleted.
        let mut set_aside = Vec::new();
        if !forgotten.is_empty() {
            let planned = confirmed.map(|p| p.set_aside.as_slice());
            let found = crate::doctor::set_aside::list(&self.data_dir);
            let names: Vec<String> = found
                .iter()
                .map(|a| crate::doctor::shown(&a.path))
                .collect();
            set_aside.extend(found.iter().zip(&names).filter_map(|(a, name)| {
                // Two files shown alike (names differing only in bytes that are not UTF-8)
                // cannot be told apart by a plan: neither is written on its word.
                let planned = planned.map(|p| {
                    let alone = names.iter().filter(|n| *n == name).count() == 1;
                    p.iter().find(|e| alone && e.path == *name)
                });
                aside_acted(
                    &a.path,
                    planned,
                    &forgotten,
                    version,
                    req.allow_reimport,
                    &now,
                )
            }));
            set_aside.extend(self.unfinished_acted(planned, &held));
        }
        drop(held);
        plan.set_aside = set_aside.clone();
        Ok(Forgotten {
            removed: plan,
            retained_files_deleted: small(retained_files_deleted),
            db_bytes_before,
            db_bytes_after: size(&db_path),
            set_aside,
        })
    }
}

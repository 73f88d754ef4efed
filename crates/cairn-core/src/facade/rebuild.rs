//! The [`Cairn`] facade's rebuild: a new archive database made from the retained copies alone
//! (`cairn reindex --from-copies`), for a `cairn.db` that is damaged or lost.
//!
//! It never deletes the old database and never writes a copy. Under the capture lock it builds
//! into `cairn.db.rebuilding`: first what only the old database held and SQLite still reads
//! there (the rooms' forget tombstones, the publishers of pulled transcripts), then every
//! session the copies' manifests describe (`archive::rebuild`), each in a transaction of its
//! own read as a reindex reads it, then what the rooms hold of them, each room carrying its
//! own tables ([`carry_rooms`]; [`TABLES`] says what becomes of every table). Once whole, the new file is
//! closed, flushed and named `cairn.db.rebuilt`; the old database, its `-wal` and `-shm` are
//! given names aside (`cairn.db.damaged-<UTC time>`, hard links, or copies where the file
//! system has none), and the new one takes `cairn.db`'s place ([`crate::store::finish_swap`],
//! which whoever opens the archive next runs again if this process stopped in between). A kill
//! at any point leaves the old database in place, or the new one whole.
//!
//! What lives only in the database and is not carried over is said plainly in the report.

use std::path::{Path, PathBuf};

use rusqlite::{Connection, OpenFlags};
use serde::{Deserialize, Serialize};

use crate::archive::capture::{CaptureLock, Progress, reindex};
use crate::archive::rebuild::{self, Described};
use crate::archive::retain::Retained;
use crate::archive::store::{DB_FILE, Store};
use crate::doctor::set_aside::BUILDING;
use crate::error::{Error, Result};
use crate::store::{REBUILT, SWAP_MARK, db_err};
use crate::{Cairn, archive, clock, git, insights, recall, semantic, team};

/// How long a rebuild waits for a capture under way to let go of the archive.
const LOCK_WAIT: std::time::Duration = std::time::Duration::from_secs(30);

/// What a rebuild does with the rows of a table (the list below; what acts on it is
/// [`carry_rooms`] and the rooms' `carry_from`).
#[cfg(test)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fate {
    /// Made again from the retained copies (`archive::capture::reindex::from_copies`).
    Rebuilt,
    /// Carried over from the old database by the room that owns it (its `carry_from`, or
    /// `archive::rebuild::carry*`), counted in the report's `carried`.
    Carried,
    /// Made again from what is rebuilt: by the rebuild itself (its relink of every session)
    /// or by the command named. The report names what waits for a command.
    Derived(&'static str),
    /// Left in the old database (which is moved aside, never deleted); the report's
    /// `not_carried` says how much and why.
    Dropped(&'static str),
}

/// Every table of the schema and what a rebuild from the copies does with it. A test compares
/// this list with the tables the migrations make: whoever adds a table says here whether a
/// rebuild makes it again, carries it, or leaves it behind (and then the report must say so).
/// What only the database holds and is dropped without a word breaks a promise: a forget that
/// no longer reaches the team archive, a report that is gone.
#[cfg(test)]
const TABLES: &[(&str, Fate)] = &[
    // The archive: made from the copies, save what only the database knew.
    ("sessions", Fate::Rebuilt),
    ("sources", Fate::Rebuilt),
    ("records", Fate::Rebuilt),
    ("records_fts", Fate::Rebuilt),
    ("records_fts_rows", Fate::Rebuilt),
    ("turns", Fate::Rebuilt),
    ("token_usage", Fate::Rebuilt),
    ("session_branches", Fate::Rebuilt),
    ("warnings", Fate::Rebuilt),
    ("secret_findings", Fate::Carried),
    ("forgotten_sources", Fate::Carried),
    ("forgotten_sessions", Fate::Carried),
    ("pulled_sources", Fate::Carried),
    (
        "captures",
        Fate::Dropped("capture batches, with the environment snapshots taken then"),
    ),
    (
        "link_pending",
        Fate::Derived("every session is queued and relinked"),
    ),
    (
        "fts_takeouts",
        Fate::Derived("the index's count starts again"),
    ),
    (
        "reindexes",
        Fate::Dropped("past reindex runs: the rebuilt archive's revision starts again"),
    ),
    (
        "retained_rekey",
        Fate::Dropped("key frames migration 14 had still to write: copies are read as they are"),
    ),
    (
        "retained_swaps",
        Fate::Dropped("copy rewrites a reindex left: copies are read as they are"),
    ),
    // Git: the links are made again from the records; what a person said is carried.
    ("repos", Fate::Derived("relink")),
    ("git_heads", Fate::Derived("relink")),
    ("git_commits", Fate::Derived("relink")),
    ("git_prs", Fate::Derived("relink")),
    ("links", Fate::Derived("relink")),
    ("session_edits", Fate::Derived("relink")),
    ("association_state", Fate::Derived("relink")),
    (
        "snapshots",
        Fate::Dropped("the environment at capture time (a branch checked out while a session ran)"),
    ),
    ("published_sessions", Fate::Carried),
    ("link_corrections", Fate::Carried),
    ("forgotten_shared", Fate::Carried),
    // Recall: a person's reviews live in the database alone; `recall::carry::carry_from`
    // carries them, its evidence checked again against the rebuilt records.
    ("recall_entries", Fate::Carried),
    ("recall_evidence", Fate::Carried),
    ("recall_feedback", Fate::Carried),
    ("recall_proposals", Fate::Carried),
    ("recall_query_events", Fate::Carried),
    ("recall_query_exposures", Fate::Carried),
    ("recall_extract_generations", Fate::Carried),
    ("recall_extract_progress", Fate::Carried),
    ("recall_extract_entries", Fate::Carried),
    ("recall_extract_runs", Fate::Carried),
    ("recall_stale_checks", Fate::Carried),
    (
        "recall_extract_readable",
        Fate::Derived("extraction's status reads each session again the first time it is asked"),
    ),
    (
        "recall_df",
        Fate::Derived("Recall's index, made again from the carried entries"),
    ),
    (
        "recall_postings",
        Fate::Derived("Recall's index, made again from the carried entries"),
    ),
    (
        "recall_terms",
        Fate::Derived("Recall's index, made again from the carried entries"),
    ),
    (
        "recall_stats",
        Fate::Derived("Recall's index, made again from the carried entries"),
    ),
    (
        "recall_vectors",
        Fate::Derived("cairn embeddings build --store recall"),
    ),
    // Search by meaning: keyed by rows a rebuild makes anew.
    (
        "turn_vectors",
        Fate::Derived("cairn embeddings build --store sessions"),
    ),
    ("embedding_state", Fate::Derived("cairn embeddings build")),
    ("vector_changes", Fate::Derived("cairn embeddings build")),
    // Generated insights and the team archive's push record.
    ("insights", Fate::Carried),
    ("insight_sessions", Fate::Carried),
    ("team_pushed_sessions", Fate::Carried),
    ("team_pushed_entries", Fate::Carried),
    ("team_pushes", Fate::Carried),
];

/// A kind of row carried over from the old database.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RebuildCarried {
    /// The room that owns the rows and carried them: `archive`, `git`, `recall`, `insights`, `team`.
    pub room: String,
    pub what: String,
    pub rows: u32,
    /// Why the rest was not: the old database stopped the read (named as SQLite names it).
    pub error: Option<String>,
}

/// A retained copy (or what lies among them) a rebuild passed over, or read only in part.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RebuildSkip {
    /// The file, under the data dir.
    pub copy: String,
    pub reason: String,
}

/// What `cairn reindex --from-copies` did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RebuildReport {
    /// The rebuilt database.
    pub database: String,
    /// The old database and its `-wal` and `-shm`, under the names they were given aside (none
    /// when there was no old database).
    pub moved_aside: Vec<String>,
    pub sessions: u32,
    pub sources: u32,
    pub records: u32,
    pub turns: u32,
    /// Sources not rebuilt because a forget tombstoned them or their session.
    pub forgotten: u32,
    /// Lines of the copies today's redaction rules redact further: stored redacted; `cairn
    /// reindex --outdated` writes the copies again without them.
    pub copy_lines_to_redact: u32,
    /// What only the old database held, carried over, room by room (each kind of row with
    /// its count, and why the rest was not when the old database stopped the read).
    pub carried: Vec<RebuildCarried>,
    /// What the old database held and the new one does not, in plain words: how many, why,
    /// and what makes it again when something does.
    pub not_carried: Vec<String>,
    /// Copies not rebuilt, with why.
    pub skipped: Vec<RebuildSkip>,
    /// Copies rebuilt in part: a tail a write cut off left out, or damaged bytes passed over
    /// (the copy kept as it is, the frames on both sides of them read).
    pub torn: Vec<RebuildSkip>,
    /// Copies whose manifest names a session their own agent and ids do not make (another
    /// agent's, forged, or damaged): rebuilt as the session they do make.
    #[serde(default)]
    pub rekeyed: Vec<RebuildSkip>,
}

fn small(n: u64) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// `path` as a report shows it.
fn shown(path: &Path) -> String {
    path.display().to_string()
}

/// Stop here when a test asks to (`CAIRN_TEST_STOP_REBUILD` naming this stage): what a kill at
/// that point leaves is what the tests check. Debug builds only.
fn stop_point(stage: &str) {
    #[cfg(debug_assertions)]
    if std::env::var_os("CAIRN_TEST_STOP_REBUILD").is_some_and(|s| s == stage) {
        std::process::abort();
    }
    #[cfg(not(debug_assertions))]
    let _ = stage;
}

impl Cairn {
    /// Whether `data_dir`'s archive needs a rebuild from the copies: refused (with what a
    /// rebuild would do and how to run it anyway) when `cairn.db` is there and doctor's check
    /// (`PRAGMA quick_check`, every page) finds nothing wrong in it. A rebuild of a healthy
    /// archive still leaves behind what it does not carry, so the front door asks for `--force`
    /// first; [`Cairn::rebuild_from_copies`] itself does not ask.
    pub fn rebuild_wanted(data_dir: &Path) -> Result<()> {
        let db = data_dir.join(DB_FILE);
        let held = std::fs::metadata(&db).is_ok_and(|m| m.len() > 0);
        if !held || crate::doctor::damage(&db).is_some() {
            return Ok(());
        }
        Err(Error::Refused(format!(
            "{} is healthy: `cairn doctor` finds nothing wrong in it. A rebuild from the copies \
             makes a new database from the retained copies alone and moves this one aside; what \
             it does not carry over (the vectors for search by meaning, the environment \
             snapshots taken at capture time) stays behind in the file moved aside. To rebuild it anyway, run `cairn reindex \
             --from-copies --force`",
            db.display()
        )))
    }

    /// Rebuild the archive database of `data_dir` from its retained copies alone, moving the
    /// old one aside (see the module's comment). `progress` counts the copies' bytes. Works on
    /// a data dir whose `cairn.db` does not open at all: nothing is opened there but the old
    /// database, read-only, for what it still holds.
    pub fn rebuild_from_copies(data_dir: &Path, progress: &dyn Progress) -> Result<RebuildReport> {
        let db = data_dir.join(DB_FILE);
        if !db.exists() && !data_dir.join("retained").is_dir() {
            return Err(Error::NotFound(format!(
                "{} holds no archive and no retained copies to rebuild one from",
                data_dir.display()
            )));
        }
        let lock = CaptureLock::open(data_dir)?;
        let held = lock.lock_within(data_dir, "a capture or a reindex", LOCK_WAIT)?;
        crate::store::finish_swap(data_dir)
            .map_err(|e| Error::write_in(data_dir, &data_dir.join(SWAP_MARK), e))?;
        // What a stopped rebuild left (the swap above took a rebuilt database it was putting
        // in place): nothing of it is the archive's.
        crate::doctor::set_aside::remove_unfinished(data_dir, &held)
            .map_err(|(file, e)| Error::write_in(data_dir, &file, e))?;
        let building = data_dir.join(BUILDING);
        forget_stale_names(data_dir);
        let now = clock::now();
        let mut report = RebuildReport {
            database: shown(&db),
            ..RebuildReport::default()
        };
        let mut new = Store::open(&building)?;
        // Flushed once, whole, before it takes the archive's place: a crash before then
        // leaves a file no one reads.
        new.conn()
            .pragma_update(None, "synchronous", "OFF")
            .map_err(|e| new.err(e))?;
        let old = open_old(&db);

        // Tombstones before any session: a forgotten one is not rebuilt.
        match &old {
            Ok(old) => {
                for c in rebuild::carry(old, new.conn()) {
                    push_carried(&mut report, "archive", c);
                }
            }
            Err(why) => report.not_carried.push(format!(
                "forget tombstones and everything else of the old database: {why}"
            )),
        }

        let survey = rebuild::survey(data_dir)?;
        report
            .skipped
            .extend(survey.passed.iter().map(|p| RebuildSkip {
                copy: shown(&p.what),
                reason: p.reason.clone(),
            }));
        report
            .rekeyed
            .extend(survey.rekeyed.iter().map(|p| RebuildSkip {
                copy: shown(&p.what),
                reason: p.reason.clone(),
            }));
        progress.start(survey.sessions.len() as u64, survey.bytes);
        for sources in &survey.sessions {
            rebuild_session(&mut new, data_dir, sources, &now, &mut report)?;
            progress.advance(
                sources
                    .iter()
                    .flat_map(|d| d.copies.values())
                    .map(|c| std::fs::metadata(c).map_or(0, |m| m.len()))
                    .sum(),
            );
            stop_point("session");
        }

        // From here to the swap every write to the old database waits (`hold_writes`): the
        // rooms carried below (Recall reviews, team and insights rows) take no capture lock, so
        // one committed after their carry would be missing from the new database without a
        // word. Held, it fails busy, or lands after the swap, in the new file.
        let writes_held = hold_writes(&data_dir.join(DB_FILE));
        if let Ok(old) = &old {
            push_carried(
                &mut report,
                "archive",
                rebuild::carry_findings(old, new.conn()),
            );
            carry_rooms(old, new.conn(), &now, &mut report);
        }
        let conn = new.conn();
        let totals = rebuild::totals(conn)
            .and_then(|t| archive::store::queue_every_link(conn).map(|()| t))
            .map_err(|e| new.err(e))?;
        (
            report.sessions,
            report.sources,
            report.records,
            report.turns,
        ) = (
            small(totals.0),
            small(totals.1),
            small(totals.2),
            small(totals.3),
        );
        progress.finish();

        // Whole: flushed, closed (its WAL checkpointed into it and gone), then named so.
        conn.execute_batch("PRAGMA synchronous = FULL;")
            .and_then(|()| conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(())))
            .map_err(|e| new.err(e))?;
        drop(new);
        drop(old);
        let rebuilt = data_dir.join(REBUILT);
        std::fs::File::open(&building)
            .and_then(|f| f.sync_all())
            .and_then(|()| std::fs::rename(&building, &rebuilt))
            .map_err(|e| Error::write_in(data_dir, &building, e))?;
        crate::store::sync_dir(data_dir);
        stop_point("rebuilt");

        report.moved_aside = swap_in(data_dir, writes_held)?
            .iter()
            .map(|p| shown(p))
            .collect();
        // Every session linked again from its records, as a reindex does (still under the
        // capture lock). The archive is whole already: a failure is logged, the sessions stay
        // queued, and the next sync links them.
        match Cairn::open_despite_config(data_dir.to_owned()) {
            Ok((cairn, _)) => match cairn.writer() {
                Ok(mut store) => {
                    cairn.link(&mut store, &Default::default(), None, usize::MAX);
                }
                Err(e) => tracing::warn!("relinking the rebuilt archive: {e}"),
            },
            Err(e) => tracing::warn!("relinking the rebuilt archive: {e}"),
        }
        Ok(report)
    }
}

/// Names aside a rebuild stopped before its swap gave the database still in place (hard links
/// to `cairn.db` and its `-wal` and `-shm`): taking them away deletes nothing, and the next
/// swap gives the old database a name of its own again.
fn forget_stale_names(data_dir: &Path) {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt as _;
        let id = |p: &Path| std::fs::metadata(p).ok().map(|m| (m.dev(), m.ino()));
        let Some(live) = id(&data_dir.join(DB_FILE)) else {
            return;
        };
        let Ok(entries) = std::fs::read_dir(data_dir) else {
            return;
        };
        let prefix = format!("{DB_FILE}.damaged-");
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if !name.starts_with(&prefix) || name.ends_with("-wal") || name.ends_with("-shm") {
                continue;
            }
            let aside = entry.path();
            if id(&aside) != Some(live) {
                continue;
            }
            for suffix in ["-wal", "-shm"] {
                let side = with_suffix(&aside, suffix);
                if id(&side).is_some()
                    && id(&side) == id(&with_suffix(&data_dir.join(DB_FILE), suffix))
                {
                    let _ = std::fs::remove_file(side);
                }
            }
            let _ = std::fs::remove_file(aside);
        }
    }
}

/// `path` with `suffix` after its name (SQLite's `-wal`, `-shm`).
fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(suffix);
    PathBuf::from(name)
}

/// The old database, read-only (a damaged one is read as far as SQLite can), or why not.
fn open_old(db: &Path) -> std::result::Result<Connection, String> {
    if !std::fs::metadata(db).is_ok_and(|m| m.len() > 0) {
        return Err("there is no old database".to_owned());
    }
    let conn = Connection::open_with_flags(
        db,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(|e| e.to_string())?;
    let _ = conn.busy_timeout(std::time::Duration::from_secs(5));
    Ok(conn)
}

/// Seed and rebuild the sources of one session in one transaction: all it could read, or
/// none of it (each source that cannot be read named).
fn rebuild_session(
    new: &mut Store,
    data_dir: &Path,
    sources: &[Described],
    now: &str,
    report: &mut RebuildReport,
) -> Result<()> {
    let path = new.path().to_owned();
    let db = |e| db_err(&path, e);
    let tx = new
        .conn_mut()
        .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
        .map_err(db)?;
    let copy_of = |d: &Described| {
        d.copies
            .values()
            .next_back()
            .map_or_else(String::new, |c| shown(c))
    };
    let mut row = None;
    let mut seeded = Vec::new();
    for d in sources {
        let m = &d.manifest;
        if archive::forget::is_forgotten(&tx, &m.source_key).map_err(db)?
            || archive::forget::is_forgotten_session(&tx, &m.session.key).map_err(db)?
        {
            report.forgotten += 1;
            continue;
        }
        match reindex::seed(&tx, data_dir, m, &d.copies, now)? {
            Ok(s) => {
                row = Some(s.row);
                seeded.push((d, s.torn));
            }
            Err(reason) => report.skipped.push(RebuildSkip {
                copy: copy_of(d),
                reason,
            }),
        }
    }
    let Some(row) = row else {
        return Ok(());
    };
    match reindex::from_copies(&tx, data_dir, row, now)? {
        Ok(done) => {
            tx.commit().map_err(db)?;
            report.copy_lines_to_redact = report
                .copy_lines_to_redact
                .saturating_add(small(done.to_redact));
            for (d, torn) in seeded {
                if torn > 0 {
                    report.torn.push(RebuildSkip {
                        copy: copy_of(d),
                        reason: format!(
                            "its last {} are a frame a write cut off: left out",
                            crate::text::plural(torn, "byte")
                        ),
                    });
                }
                for copy in d.copies.values() {
                    for (at, len) in Retained::damage(copy).unwrap_or_default() {
                        report.torn.push(RebuildSkip {
                            copy: shown(copy),
                            reason: format!(
                                "{} at byte {at} are no frame (damaged): the lines they held \
                                 are lost, those of the frames after them rebuilt; the copy \
                                 is kept as it is",
                                crate::text::plural(len, "byte")
                            ),
                        });
                    }
                }
            }
        }
        Err(reason) => {
            drop(tx);
            for (d, _) in seeded {
                report.skipped.push(RebuildSkip {
                    copy: copy_of(d),
                    reason: reason.clone(),
                });
            }
        }
    }
    Ok(())
}

/// The rooms' rows only the old database held, carried over by the rooms themselves, each
/// over its own tables (see [`TABLES`]): the archive's own sessions' publication through git,
/// git's teammates' documents, shared sessions' forget tombstones and a person's link
/// corrections (each said again by the person who said it, when they said it), the generated
/// insight reports, the team archive's push record, Recall's entries with everything a person
/// and the agents did with them (their evidence checked again against the rebuilt records);
/// semantic says what it leaves. Every session is matched by its key, which a rebuild keeps.
fn carry_rooms(old: &Connection, new: &Connection, now: &str, report: &mut RebuildReport) {
    push_carried(report, "archive", rebuild::carry_published(old, new));
    // Before the tombstones below, which drop the documents of forgotten sessions.
    push_carried(report, "git", git::publish::carry_from(old, new));
    let shared = git::forget::forgotten_shared(old)
        .and_then(|keys| git::forget::remember_shared(new, &keys, now).map(|()| keys.len()));
    let what = "forget tombstones of sessions shared through git";
    report.carried.push(match shared {
        Ok(n) => carried("git", what, n, None),
        Err(e) => carried("git", what, 0, Some(e.to_string())),
    });
    carry_corrections(old, new, report);
    // Recall before the team's push record, which names the entries the rebuilt archive
    // lacks.
    for (room, carry) in [
        ("recall", recall::carry::carry_from(old, new, now)),
        ("insights", insights::store::carry_from(old, new)),
        ("team", team::store::carry_from(old, new)),
        ("semantic", semantic::carry::carry_from(old, new)),
    ] {
        for c in carry.carried {
            push_carried(report, room, c);
        }
        report.not_carried.extend(carry.not_carried);
    }
    report.not_carried.push(
        "links only the environment snapshots taken at capture time showed (a branch checked \
         out while a session ran); every session is linked again from its records"
            .to_owned(),
    );
}

/// A person's links and unlinks (`cairn link`, `cairn unlink`), said again of the rebuilt
/// session with the same key; those about sessions not rebuilt are counted.
fn carry_corrections(old: &Connection, new: &Connection, report: &mut RebuildReport) {
    let (mut rows, mut elsewhere, mut error) = (0usize, 0usize, None);
    match rebuild::old_sessions(old) {
        Err(e) => error = Some(e.to_string()),
        Ok(sessions) => {
            let mut sessions: Vec<(i64, String)> = sessions.into_iter().collect();
            sessions.sort_unstable();
            for (old_row, key) in sessions {
                let corrections = match git::correct::corrections_of(old, old_row) {
                    Ok(c) => c,
                    Err(e) => {
                        error.get_or_insert(e.to_string());
                        continue;
                    }
                };
                if corrections.is_empty() {
                    continue;
                }
                let Ok(Some(new_row)) = rebuild::session_row(new, &key) else {
                    elsewhere += corrections.len();
                    continue;
                };
                for c in corrections {
                    let target = git::targets::Target {
                        kind: c.target_kind,
                        key: c.target_key.clone(),
                        pr_number: c.pr_number,
                    };
                    let said = git::correct::correct(
                        new,
                        new_row,
                        &target,
                        c.action,
                        &c.made_by,
                        c.reason.as_deref(),
                        &c.made_at,
                    );
                    match said {
                        Ok(_) => rows += 1,
                        Err(e) => {
                            error.get_or_insert(e.to_string());
                        }
                    }
                }
            }
        }
    }
    report.carried.push(carried(
        "git",
        "a person's links and unlinks (cairn link, cairn unlink)",
        rows,
        error,
    ));
    if elsewhere > 0 {
        report.not_carried.push(format!(
            "{}: about sessions that were not rebuilt",
            crate::text::plural(elsewhere, "link correction")
        ));
    }
}

fn push_carried(report: &mut RebuildReport, room: &str, c: rebuild::Carried) {
    report.carried.push(RebuildCarried {
        room: room.to_owned(),
        what: c.what.to_owned(),
        rows: small(c.rows),
        error: c.error,
    });
}

fn carried(room: &str, what: &str, rows: usize, error: Option<String>) -> RebuildCarried {
    RebuildCarried {
        room: room.to_owned(),
        what: what.to_owned(),
        rows: small(rows as u64),
        error,
    }
}

/// Give the old database, its `-wal` and `-shm` names aside, then put the rebuilt one in its
/// place ([`crate::store::finish_swap`]), `writes_held` ([`hold_writes`]) held until then.
/// Returns the names given aside.
fn swap_in(data_dir: &Path, writes_held: Option<Connection>) -> Result<Vec<PathBuf>> {
    let stamp = jiff::Timestamp::now()
        .strftime("%Y%m%dT%H%M%SZ")
        .to_string();
    let mut base = data_dir.join(format!("{DB_FILE}.damaged-{stamp}"));
    let mut n = 1;
    while base.exists() {
        n += 1;
        base = data_dir.join(format!("{DB_FILE}.damaged-{stamp}-{n}"));
    }
    // The old database's write lock (taken before the rooms were carried), held until the new
    // one has its name: a process that
    // opened the old one earlier checks at each commit, holding that lock, that `cairn.db` is
    // still its file (`store::Opened`), so none of its commits lands in the file moved aside
    // (captures are kept out by the capture lock this rebuild holds). Where the old database no
    // longer takes a lock (too damaged), the commit check alone stands. Where the file system
    // has no hard links, the copies below close a descriptor of these files and the kernel
    // drops this lock with it: the commit check alone stands there too.
    let _writes_held = writes_held;
    let mut aside = Vec::new();
    for suffix in ["", "-wal", "-shm"] {
        let live = with_suffix(&data_dir.join(DB_FILE), suffix);
        if !live.exists() {
            continue;
        }
        let named = with_suffix(&base, suffix);
        std::fs::hard_link(&live, &named)
            .or_else(|_| std::fs::copy(&live, &named).map(drop))
            .map_err(|e| Error::write_in(data_dir, &named, e))?;
        aside.push(named);
    }
    stop_point("aside");
    let mark = data_dir.join(SWAP_MARK);
    crate::private::open_options()
        .create(true)
        .truncate(true)
        .write(true)
        .open(&mark)
        .and_then(|mut f| {
            use std::io::Write as _;
            writeln!(f, "{}", base.display()).and_then(|()| f.sync_all())
        })
        .map_err(|e| Error::write_in(data_dir, &mark, e))?;
    crate::store::sync_dir(data_dir);
    stop_point("swap");
    crate::store::finish_swap(data_dir).map_err(|e| Error::write_in(data_dir, &mark, e))?;
    Ok(aside)
}

/// A write transaction begun on the database at `db` (waiting up to [`LOCK_WAIT`] for writers
/// there to finish), held from the rooms' carry across the swap ([`swap_in`]); `None` when there is no database
/// or it takes no lock. Nothing is written: dropped, it rolls back, and SQLite does not
/// checkpoint a database whose name leads elsewhere when it closes.
fn hold_writes(db: &Path) -> Option<Connection> {
    if !db.exists() {
        return None;
    }
    let held = Connection::open_with_flags(
        db,
        OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .and_then(|conn| {
        conn.busy_timeout(LOCK_WAIT)?;
        conn.execute_batch("BEGIN IMMEDIATE")?;
        Ok(conn)
    });
    match held {
        Ok(conn) => Some(conn),
        Err(e) => {
            tracing::warn!("holding the old database's writers during the swap: {e}");
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fresh archive's database.
    fn fresh() -> (tempfile::TempDir, Store) {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join(DB_FILE)).unwrap();
        (dir, store)
    }

    /// The tables of `conn` (plain and virtual ones; not SQLite's own, nor the full-text
    /// index's shadow tables, which go with `records_fts`) that [`TABLES`] does not classify.
    fn unclassified(conn: &Connection) -> Vec<String> {
        conn.prepare(
            "SELECT name FROM pragma_table_list
             WHERE schema = 'main' AND type IN ('table', 'virtual')
               AND name NOT LIKE 'sqlite!_%' ESCAPE '!' ORDER BY name",
        )
        .unwrap()
        .query_map([], |r| r.get::<_, String>(0))
        .unwrap()
        .map(Result::unwrap)
        .filter(|t| !TABLES.iter().any(|(listed, _)| listed == t))
        .collect()
    }

    /// A table the migrations make that [`TABLES`] does not classify fails here, naming it:
    /// nothing only the database holds may be dropped by a rebuild without a word. So does a
    /// table listed twice, or one the schema no longer has.
    #[test]
    fn every_table_says_what_a_rebuild_does_with_it() {
        let (_dir, store) = fresh();
        let conn = store.conn();
        let unclassified = unclassified(conn);
        assert!(
            unclassified.is_empty(),
            "say in facade/rebuild.rs `TABLES` what a rebuild from the copies does with \
             {unclassified:?}: rebuilt from the copies, carried by its room's carry_from, \
             derived, or dropped and named in the report"
        );
        for (table, _) in TABLES {
            let exists: bool = conn
                .query_row(
                    "SELECT EXISTS (SELECT 1 FROM pragma_table_list WHERE name = ?1)",
                    [table],
                    |r| r.get(0),
                )
                .unwrap();
            assert!(
                exists,
                "{table} is no longer in the schema: take it out of TABLES"
            );
        }
        let mut once: Vec<&str> = TABLES.iter().map(|(t, _)| *t).collect();
        once.sort_unstable();
        once.dedup();
        assert_eq!(once.len(), TABLES.len(), "a table listed twice");
    }

    /// The check names a table nobody classified.
    #[test]
    fn the_table_check_sees_a_new_table() {
        let (_dir, store) = fresh();
        store
            .conn()
            .execute_batch("CREATE TABLE only_here (id INTEGER)")
            .unwrap();
        assert_eq!(unclassified(store.conn()), ["only_here"]);
    }
}

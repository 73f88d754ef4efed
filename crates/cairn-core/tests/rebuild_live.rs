//! A process that opened the archive before a rebuild (`cairn reindex --from-copies`) swapped a
//! new `cairn.db` in: its captures and a person's writes land in the new database, or are
//! refused and land there when run again, never in the old one moved aside; its reads show
//! the new database. The rebuild runs here through a second handle, as another process would.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};

use cairn_core::archive::Agent;
use cairn_core::archive::capture::{Progress, Quiet};
use cairn_core::archive::discover::FoundFile;
use cairn_core::views::sessions::SessionQuery;
use cairn_core::{Cairn, ErrorKind, ForgetSetAside, SetAsideFate};
use rusqlite::Connection;

use crate::support;

/// The Claude fixture sessions captured before the rebuild, and those captured after it.
const BEFORE: [&str; 2] = ["1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl", "small.jsonl"];
const AFTER: [&str; 2] = ["short.jsonl", "tool_heavy.jsonl"];

/// The fixtures named in `names`, copied into `dir`, as discovery finds them.
fn transcripts(dir: &Path, names: &[&str]) -> Vec<FoundFile> {
    for name in names {
        support::copy_into(&support::fixtures().join("claude").join(name), dir, name);
    }
    support::found(Agent::Claude, dir)
}

/// The sessions of the database file `db` (the live one, or the one moved aside).
fn sessions_in(db: &Path) -> i64 {
    Connection::open(db)
        .unwrap()
        .query_row("SELECT COUNT(*) FROM sessions", [], |r| r.get(0))
        .unwrap()
}

/// The old database a rebuild moved aside in `data` (the one there is).
fn moved_aside(data: &Path) -> PathBuf {
    let mut aside: Vec<PathBuf> = std::fs::read_dir(data)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            let name = p.file_name().unwrap().to_string_lossy();
            name.starts_with("cairn.db.damaged-")
                && !name.ends_with("-wal")
                && !name.ends_with("-shm")
        })
        .collect();
    assert_eq!(aside.len(), 1, "{aside:?}");
    aside.remove(0)
}

/// A data dir holding [`BEFORE`], a handle opened on it, and the folder of transcripts.
fn synced() -> (tempfile::TempDir, tempfile::TempDir, Cairn, usize) {
    let src = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let first = Cairn::open(data.path()).unwrap();
    let files = transcripts(src.path(), &BEFORE);
    first.capture_paths(&files, &Quiet).unwrap();
    let before = listed(&first);
    assert!(before > 0);
    (src, data, first, before)
}

/// How many sessions a read through `cairn` lists.
fn listed(cairn: &Cairn) -> usize {
    cairn.sessions(&SessionQuery::default()).unwrap().len()
}

/// A handle opened before the rebuild captures into the new database, and reads it.
#[test]
fn a_capture_after_a_rebuild_lands_in_the_new_database() {
    let (src, data, first, before) = synced();
    let aside_before = sessions_in(&data.path().join("cairn.db"));

    Cairn::rebuild_from_copies(data.path(), &Quiet).unwrap();
    // The rebuilt database, read through the handle opened before it: the same sessions.
    assert_eq!(listed(&first), before);

    let files = transcripts(src.path(), &AFTER);
    let report = first.capture_paths(&files, &Quiet).unwrap();
    assert!(report.sessions_added >= 2, "{report:?}");
    let live = sessions_in(&data.path().join("cairn.db"));
    assert_eq!(live, aside_before + i64::from(report.sessions_added));
    assert_eq!(sessions_in(&moved_aside(data.path())), aside_before);
    // Read through the first handle: the new database, with what was captured after.
    assert_eq!(listed(&first), before + AFTER.len());
}

/// Runs a rebuild of `data` when the capture starts: after the capture opened its connection
/// and read the positions, before its first commit.
struct RebuildAtStart<'a>(&'a Path);

impl Progress for RebuildAtStart<'_> {
    fn start(&self, _files: u64, _bytes: u64) {
        Cairn::rebuild_from_copies(self.0, &Quiet).unwrap();
    }
}

/// A capture whose database was swapped out under it writes nothing into the old one: it is
/// refused with the kind and hint that say to run it again, and run again it lands in the new.
#[test]
fn a_capture_a_rebuild_overtook_is_refused_and_lands_when_run_again() {
    let (src, data, first, before) = synced();
    let aside_before = sessions_in(&data.path().join("cairn.db"));
    let files = transcripts(src.path(), &AFTER);

    let refused = first
        .capture_paths(&files, &RebuildAtStart(data.path()))
        .unwrap_err();
    assert_eq!(refused.kind(), ErrorKind::Conflict, "{refused}");
    assert!(
        refused.to_string().contains("rebuilt by another process"),
        "{refused}"
    );
    assert!(
        refused.hint().unwrap().contains("run the command again"),
        "{refused}"
    );
    let aside = moved_aside(data.path());
    assert_eq!(
        sessions_in(&aside),
        aside_before,
        "written into the old database"
    );
    assert_eq!(sessions_in(&data.path().join("cairn.db")), aside_before);

    let report = first.capture_paths(&files, &Quiet).unwrap();
    assert_eq!(report.sessions_added as usize, AFTER.len(), "{report:?}");
    assert_eq!(listed(&first), before + AFTER.len());
    assert_eq!(
        sessions_in(&data.path().join("cairn.db")),
        aside_before + AFTER.len() as i64
    );
    assert_eq!(sessions_in(&aside), aside_before);
}

/// A person's write that takes no capture lock (a forget) through a handle opened before the
/// rebuild forgets in the new database.
#[test]
fn a_forget_after_a_rebuild_forgets_in_the_new_database() {
    let (_src, data, first, before) = synced();
    let id = "1af7fc5e-8455-4414-9ccd-011d40f70b2a";
    let with_id = |db: &Path| -> i64 {
        Connection::open(db)
            .unwrap()
            .query_row(
                "SELECT COUNT(*) FROM sessions WHERE session_id = ?1",
                [id],
                |r| r.get(0),
            )
            .unwrap()
    };
    Cairn::rebuild_from_copies(data.path(), &Quiet).unwrap();

    let req = cairn_core::ForgetRequest {
        session: Some(id.to_owned()),
        ..Default::default()
    };
    let aside = moved_aside(data.path());
    let key: String = Connection::open(&aside)
        .unwrap()
        .query_row(
            "SELECT session_key FROM sessions WHERE session_id = ?1",
            [id],
            |r| r.get(0),
        )
        .unwrap();
    assert!(held_in(&aside, &key) > 0);
    let in_aside = sessions_in(&aside);
    let forgotten = first.forget(&req).unwrap();
    assert_eq!(forgotten.removed.sessions.len(), 1, "{forgotten:?}");
    assert_eq!(with_id(&data.path().join("cairn.db")), 0);
    assert_eq!(listed(&first), before - 1);
    // The old database the rebuild set aside held it too: it went there as well (every room's
    // rows, the words out of its full-text index), and the report says so. The other session
    // stays there.
    assert_eq!(
        forgotten.set_aside,
        [ForgetSetAside {
            path: aside.display().to_string(),
            rm: format!("rm -f '{0}' '{0}-wal' '{0}-shm'", aside.display()),
            sessions: 1,
            fate: SetAsideFate::Removed,
            why: None,
        }]
    );
    assert_eq!(with_id(&aside), 0);
    assert_eq!(held_in(&aside, &key), 0);
    assert_eq!(sessions_in(&aside), in_aside - 1);
    assert!(
        !std::fs::read(&aside)
            .unwrap()
            .windows(id.len())
            .any(|w| w == id.as_bytes())
    );
}

/// Rows of the session keyed `key` in the database `db`: its session, records, turns and
/// sources, and the words of its records in the full-text index.
fn held_in(db: &Path, key: &str) -> i64 {
    let conn = Connection::open(db).unwrap();
    let count = |sql: &str| -> i64 { conn.query_row(sql, [key], |r| r.get(0)).unwrap() };
    let of = "(SELECT id FROM sessions WHERE session_key = ?1)";
    count("SELECT COUNT(*) FROM sessions WHERE session_key = ?1")
        + count(&format!(
            "SELECT COUNT(*) FROM records WHERE session_id = {of}"
        ))
        + count(&format!(
            "SELECT COUNT(*) FROM turns WHERE session_id = {of}"
        ))
        + count(&format!(
            "SELECT COUNT(*) FROM sources WHERE session_id = {of}"
        ))
}

/// A set-aside database the forget may not write safely (here at another schema version, so
/// the rooms' SQL may not mean there what it means in the archive) keeps the session, and the
/// report names it and why; one that cannot be read at all is named as one that may hold it.
#[test]
fn a_forget_names_the_set_aside_databases_it_could_not_clean() {
    let (_src, data, first, _) = synced();
    let id = "1af7fc5e-8455-4414-9ccd-011d40f70b2a";
    Cairn::rebuild_from_copies(data.path(), &Quiet).unwrap();
    let aside = moved_aside(data.path());
    let conn = Connection::open(&aside).unwrap();
    conn.execute_batch("PRAGMA user_version = 3").unwrap();
    drop(conn);
    // A second one, its header overwritten: no database SQLite will read.
    let unreadable = data.path().join("cairn.db.damaged-20200101T000000Z");
    let mut bytes = std::fs::read(&aside).unwrap();
    bytes[..100].fill(0x5a);
    std::fs::write(&unreadable, bytes).unwrap();

    let req = cairn_core::ForgetRequest {
        session: Some(id.to_owned()),
        ..Default::default()
    };
    let forgotten = first.forget(&req).unwrap();
    assert_eq!(forgotten.removed.sessions.len(), 1, "{forgotten:?}");
    let named: Vec<(String, u32, SetAsideFate)> = forgotten
        .set_aside
        .iter()
        .map(|a| (a.path.clone(), a.sessions, a.fate))
        .collect();
    assert_eq!(
        named,
        // By name: the older one first.
        [
            (unreadable.display().to_string(), 0, SetAsideFate::MayHold),
            (aside.display().to_string(), 1, SetAsideFate::Holds),
        ],
        "{forgotten:?}"
    );
    assert!(
        forgotten.set_aside[1]
            .why
            .as_deref()
            .is_some_and(|w| w.contains("schema (version 3)")),
        "{forgotten:?}"
    );
    assert!(forgotten.set_aside[0].why.is_some());
    // Left as it was: the person deletes it.
    let still: i64 = Connection::open(&aside)
        .unwrap()
        .query_row(
            "SELECT COUNT(*) FROM sessions WHERE session_id = ?1",
            [id],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(still, 1);
}

/// Doctor names each database a rebuild set aside, with its size and the fix.
#[test]
fn doctor_names_the_databases_a_rebuild_set_aside() {
    let (_src, data, first, _) = synced();
    let set_aside = |cairn: &Cairn| {
        cairn
            .doctor()
            .checks
            .into_iter()
            .find(|c| c.name == "set-aside databases")
    };
    assert_eq!(set_aside(&first), None);
    Cairn::rebuild_from_copies(data.path(), &Quiet).unwrap();
    let aside = moved_aside(data.path());
    let check = set_aside(&first).expect("doctor names the database set aside");
    assert_eq!(check.status, cairn_core::doctor::Status::Warn);
    assert!(
        check.detail.starts_with(&format!(
            "1 database a rebuild from the copies set aside: {}",
            aside.display()
        )) && check.detail.contains(&format!("rm '{}'", aside.display())),
        "{check:?}"
    );
}

/// Holds a rebuild once it has read the old database and made the new one whole, before its
/// swap (`Progress::finish`), until the test lets it go.
struct HoldBeforeSwap {
    reached: std::sync::mpsc::Sender<()>,
    go: std::sync::Mutex<std::sync::mpsc::Receiver<()>>,
}

impl Progress for HoldBeforeSwap {
    fn finish(&self) {
        self.reached.send(()).unwrap();
        self.go.lock().unwrap().recv().unwrap();
    }
}

/// Tells the test that a forget found the capture lock held and waits for it.
struct SaysItWaits(std::sync::mpsc::Sender<&'static str>);

impl Progress for SaysItWaits {
    fn waiting(&self, _lock: &Path) {
        self.0.send("waiting").unwrap();
    }
}

/// A forget confirmed while a rebuild from the copies is between its read of the old database
/// and its swap is not lost: it waits for the rebuild (saying so), then forgets in the new
/// database, session and retained copies. Before, it committed to the old database at once,
/// after the rebuild had read it, and the swap brought the session back.
#[test]
fn a_forget_during_a_rebuild_stays_forgotten_in_the_new_database() {
    let (_src, data, first, before) = synced();
    let id = "1af7fc5e-8455-4414-9ccd-011d40f70b2a";
    let db = data.path().join("cairn.db");
    let with_id = |db: &Path| -> i64 {
        Connection::open(db)
            .unwrap()
            .query_row(
                "SELECT COUNT(*) FROM sessions WHERE session_id = ?1",
                [id],
                |r| r.get(0),
            )
            .unwrap()
    };
    // The files the session was read from: their retained copies must go with it.
    let sources: Vec<String> = Connection::open(&db)
        .unwrap()
        .prepare(
            "SELECT s.source_key FROM sources s JOIN sessions ss ON ss.id = s.session_id
             WHERE ss.session_id = ?1",
        )
        .unwrap()
        .query_map([id], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert!(!sources.is_empty());
    let copies_of_session = || -> Vec<PathBuf> {
        support::files_under(&data.path().join("retained"))
            .into_iter()
            .filter(|p| {
                let name = p.file_name().unwrap().to_string_lossy();
                sources.iter().any(|k| name.starts_with(&format!("{k}.")))
            })
            .collect()
    };
    assert!(!copies_of_session().is_empty());
    let req = cairn_core::ForgetRequest {
        session: Some(id.to_owned()),
        ..Default::default()
    };
    // Listed and confirmed before the rebuild began, as `cairn forget` asks.
    let plan = first.forget_preview(&req).unwrap();
    assert_eq!(plan.sessions.len(), 1);

    let (reached_tx, reached) = std::sync::mpsc::channel();
    let (go, go_rx) = std::sync::mpsc::channel();
    let hold = HoldBeforeSwap {
        reached: reached_tx,
        go: std::sync::Mutex::new(go_rx),
    };
    let (events_tx, events) = std::sync::mpsc::channel();
    let forgotten = std::thread::scope(|s| {
        let rebuild = s.spawn(|| Cairn::rebuild_from_copies(data.path(), &hold));
        reached.recv().unwrap();
        let says = SaysItWaits(events_tx.clone());
        let (first, req, plan) = (&first, &req, &plan);
        let forget = s.spawn(move || {
            let done = first.forget_planned(req, plan, &says);
            let _ = says.0.send("done");
            done
        });
        // The forget either waits for the rebuild, or (as before) went ahead in the old one.
        let first_event = events.recv().unwrap();
        go.send(()).unwrap();
        rebuild.join().unwrap().unwrap();
        let forgotten = forget.join().unwrap().unwrap();
        (first_event, forgotten)
    });
    assert_eq!(forgotten.1.removed.sessions.len(), 1, "{forgotten:?}");
    assert_eq!(
        with_id(&db),
        0,
        "the rebuild brought the forgotten session back"
    );
    assert_eq!(
        support::count(
            data.path(),
            &format!(
                "SELECT COUNT(*) FROM forgotten_sources WHERE source_key IN ('{}')",
                sources.join("', '")
            )
        ),
        sources.len() as i64,
        "the new database holds no tombstone of the forgotten files"
    );
    assert_eq!(copies_of_session(), Vec::<PathBuf>::new());
    assert_eq!(listed(&first), before - 1);
    // And it said so while it waited.
    assert_eq!(
        forgotten.0, "waiting",
        "the forget did not wait for the rebuild"
    );
}

/// From the rooms' carry (Recall, team, insights: writes that take no capture lock) to the
/// swap, no write can commit to the old database: one that did would be missing from the new
/// database without a word. A writer there meanwhile finds the database busy (and, waiting
/// longer, lands after the swap, in the new file).
#[test]
fn no_write_commits_to_the_old_database_after_its_rooms_were_carried() {
    let (_src, data, _first, _before) = synced();
    let (reached_tx, reached) = std::sync::mpsc::channel();
    let (go, go_rx) = std::sync::mpsc::channel();
    let hold = HoldBeforeSwap {
        reached: reached_tx,
        go: std::sync::Mutex::new(go_rx),
    };
    std::thread::scope(|s| {
        let rebuild = s.spawn(|| Cairn::rebuild_from_copies(data.path(), &hold));
        reached.recv().unwrap();
        // The rooms are carried; the swap has not happened.
        let writer = Connection::open(data.path().join("cairn.db")).unwrap();
        writer
            .busy_timeout(std::time::Duration::from_millis(200))
            .unwrap();
        let began = writer.execute_batch("BEGIN IMMEDIATE");
        drop(writer);
        // Let the rebuild go before judging, so a failure fails rather than hangs.
        go.send(()).unwrap();
        rebuild.join().unwrap().unwrap();
        assert!(
            began.is_err(),
            "a write could begin on the old database after its rooms were carried"
        );
    });
}

/// What a rebuild killed while it made the new database leaves: `cairn.db.rebuilding`, a copy
/// of the archive's sessions (here made as the rebuild makes it, from the archive's rows).
fn leave_half_built(data: &Path) -> PathBuf {
    let building = data.join("cairn.db.rebuilding");
    Connection::open(data.join("cairn.db"))
        .unwrap()
        .execute("VACUUM INTO ?1", [building.to_str().unwrap()])
        .unwrap();
    building
}

/// Doctor's check of what a rebuild that did not finish left, if it has one.
fn unfinished_check(cairn: &Cairn) -> Option<cairn_core::doctor::Check> {
    cairn
        .doctor()
        .checks
        .into_iter()
        .find(|c| c.name == "unfinished rebuild")
}

/// A rebuild killed before its swap left `cairn.db.rebuilding`, which holds the text of the
/// sessions it read: doctor names it with its size, age and the fix; a forget's list says it
/// goes, and the forget deletes it (under the capture lock, which no rebuild making it could
/// hold). Before, nothing listed it and only the next rebuild took it away, so a forgotten
/// session's text stayed there.
#[test]
fn what_a_rebuild_that_did_not_finish_left_is_named_and_forgotten_with_the_rest() {
    let (_src, data, first, _) = synced();
    let id = "1af7fc5e-8455-4414-9ccd-011d40f70b2a";
    assert_eq!(unfinished_check(&first), None);
    let building = leave_half_built(data.path());
    assert!(
        std::fs::read(&building)
            .unwrap()
            .windows(id.len())
            .any(|w| w == id.as_bytes())
    );
    let check = unfinished_check(&first).expect("doctor names the half-built database");
    assert_eq!(check.status, cairn_core::doctor::Status::Warn);
    assert!(
        check.detail.starts_with(&building.display().to_string())
            && check.detail.contains("did not finish")
            && check.detail.contains("minute old")
            && check
                .detail
                .contains(&format!("rm -f '{}'", building.display())),
        "{check:?}"
    );

    let req = cairn_core::ForgetRequest {
        session: Some(id.to_owned()),
        ..Default::default()
    };
    let deleted = ForgetSetAside {
        path: building.display().to_string(),
        rm: format!("rm -f '{0}' '{0}-wal' '{0}-shm'", building.display()),
        sessions: 0,
        fate: SetAsideFate::Deleted,
        why: None,
    };
    let plan = first.forget_preview(&req).unwrap();
    assert_eq!(plan.set_aside, std::slice::from_ref(&deleted), "{plan:?}");
    assert!(building.exists(), "the list deleted it");
    let forgotten = first.forget_planned(&req, &plan, &Quiet).unwrap();
    assert_eq!(
        forgotten.set_aside,
        std::slice::from_ref(&deleted),
        "{forgotten:?}"
    );
    assert_eq!(forgotten.removed.set_aside, [deleted]);
    assert!(!building.exists());
    assert_eq!(unfinished_check(&first), None);
}

/// While another process holds the capture lock, as a rebuild does from before it makes
/// `cairn.db.rebuilding` to its swap, the file may be that rebuild's work: doctor says so
/// without the `rm`, a forget's list leaves it out and a sync's sweep leaves it. Once the lock
/// is free, the next sync removes it (and a `cairn.db.rebuilt` no swap is putting in place).
#[test]
fn a_half_built_database_is_left_while_the_lock_is_held_and_swept_after() {
    let (_src, data, first, _) = synced();
    let building = leave_half_built(data.path());
    let rebuilt = data.path().join("cairn.db.rebuilt");
    std::fs::copy(&building, &rebuilt).unwrap();
    let lock = cairn_core::archive::capture::CaptureLock::open(data.path()).unwrap();
    let held = lock.lock().unwrap();
    let check = unfinished_check(&first).expect("doctor names the files");
    assert!(
        check.detail.contains("may be under way") && !check.detail.contains("rm -f"),
        "{check:?}"
    );
    let req = cairn_core::ForgetRequest {
        session: Some("1af7fc5e-8455-4414-9ccd-011d40f70b2a".to_owned()),
        ..Default::default()
    };
    assert_eq!(first.forget_preview(&req).unwrap().set_aside, []);
    // A sync with nothing to read takes no lock for captures, and sweeps only under it.
    let empty = tempfile::tempdir().unwrap();
    first
        .set_source_dirs(Agent::Claude, vec![empty.path().display().to_string()])
        .unwrap();
    let only_claude = cairn_core::SyncOptions {
        agents: vec![Agent::Claude],
    };
    first.sync(&only_claude, &Quiet).unwrap();
    assert!(building.exists() && rebuilt.exists());
    drop(held);
    first.sync(&only_claude, &Quiet).unwrap();
    assert!(!building.exists() && !rebuilt.exists());
    assert_eq!(unfinished_check(&first), None);
}

/// A forget's list names, before anything is removed, every database a rebuild set aside that
/// holds the session and what the forget will do there: remove it, or not (why, with the fix);
/// the list writes nothing there, and the forget then does what it said. Before, only the
/// forget's result named them, after the person had confirmed.
#[test]
fn a_forget_lists_the_set_aside_databases_before_it_is_confirmed() {
    let (_src, data, first, _) = synced();
    let id = "1af7fc5e-8455-4414-9ccd-011d40f70b2a";
    Cairn::rebuild_from_copies(data.path(), &Quiet).unwrap();
    Cairn::rebuild_from_copies(data.path(), &Quiet).unwrap();
    let mut asides: Vec<PathBuf> = std::fs::read_dir(data.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            let name = p.file_name().unwrap().to_string_lossy();
            name.starts_with("cairn.db.damaged-")
                && !name.ends_with("-wal")
                && !name.ends_with("-shm")
        })
        .collect();
    asides.sort();
    assert_eq!(asides.len(), 2, "{asides:?}");
    // The second at another schema: the forget may not write there.
    let conn = Connection::open(&asides[1]).unwrap();
    conn.execute_batch("PRAGMA user_version = 3").unwrap();
    drop(conn);
    let unreadable = data.path().join("cairn.db.damaged-20200101T000000Z");
    let mut bytes = std::fs::read(&asides[0]).unwrap();
    bytes[..100].fill(0x5a);
    std::fs::write(&unreadable, bytes).unwrap();
    let before: Vec<Vec<u8>> = asides.iter().map(|p| std::fs::read(p).unwrap()).collect();

    let req = cairn_core::ForgetRequest {
        session: Some(id.to_owned()),
        ..Default::default()
    };
    let plan = first.forget_preview(&req).unwrap();
    let fates = |set_aside: &[ForgetSetAside]| -> Vec<(String, u32, SetAsideFate)> {
        set_aside
            .iter()
            .map(|a| (a.path.clone(), a.sessions, a.fate))
            .collect()
    };
    let expected = [
        (unreadable.display().to_string(), 0, SetAsideFate::MayHold),
        (asides[0].display().to_string(), 1, SetAsideFate::Removed),
        (asides[1].display().to_string(), 1, SetAsideFate::Holds),
    ];
    assert_eq!(fates(&plan.set_aside), expected, "{plan:?}");
    assert!(
        plan.set_aside[2]
            .why
            .as_deref()
            .is_some_and(|w| w.contains("schema (version 3)")),
        "{plan:?}"
    );
    // The list wrote nothing in them.
    for (path, bytes) in asides.iter().zip(&before) {
        assert_eq!(&std::fs::read(path).unwrap(), bytes, "{}", path.display());
    }
    let forgotten = first.forget_planned(&req, &plan, &Quiet).unwrap();
    assert_eq!(fates(&forgotten.set_aside), expected, "{forgotten:?}");
    assert_eq!(held_in(&asides[0], &plan.sessions[0].session_key), 0);
}

/// While a rebuild makes `cairn.db.rebuilding` (held here before its swap), doctor names the
/// file as one a rebuild may be making, with no `rm`, and a forget's list does not offer to
/// delete it; once the rebuild is done, nothing is left to name.
#[test]
fn a_rebuild_under_way_is_not_called_a_leftover() {
    let (_src, data, first, _) = synced();
    let (reached_tx, reached) = std::sync::mpsc::channel();
    let (go, go_rx) = std::sync::mpsc::channel();
    let hold = HoldBeforeSwap {
        reached: reached_tx,
        go: std::sync::Mutex::new(go_rx),
    };
    let req = cairn_core::ForgetRequest {
        session: Some("1af7fc5e-8455-4414-9ccd-011d40f70b2a".to_owned()),
        ..Default::default()
    };
    let (check, plan) = std::thread::scope(|s| {
        let rebuild = s.spawn(|| Cairn::rebuild_from_copies(data.path(), &hold));
        reached.recv().unwrap();
        assert!(data.path().join("cairn.db.rebuilding").exists());
        let seen = (unfinished_check(&first), first.forget_preview(&req));
        go.send(()).unwrap();
        rebuild.join().unwrap().unwrap();
        seen
    });
    let check = check.expect("doctor names the file the rebuild makes");
    assert!(
        check.detail.contains("may be under way") && !check.detail.contains("rm -f"),
        "{check:?}"
    );
    assert_eq!(plan.unwrap().set_aside, []);
    assert_eq!(unfinished_check(&first), None);
}

//! One archive, several processes: the desktop keeps connections open for hours while `cairn`
//! commands, hooks and syncs open and close their own. None of them may pull the database out
//! from under the others.

use std::path::Path;

use rusqlite::Connection;

use crate::support::Env;

fn rows(db: &Path) -> i64 {
    Connection::open(db)
        .unwrap()
        .query_row("SELECT count(*) FROM canary", [], |r| r.get(0))
        .unwrap()
}

/// POSIX record locks belong to a process, and closing any descriptor of a file drops all of
/// the process's locks on it. If opening the archive opened and closed `cairn.db` itself, the
/// process's other connections would lose their locks: the next command to close would take
/// itself for the last connection, checkpoint and delete the WAL, and the long-lived connection
/// would go on writing into a deleted file (the desktop lost every report and review it wrote
/// after a `cairn recall import` ran beside it).
#[test]
fn opening_the_archive_again_keeps_the_locks_of_connections_already_open() {
    let env = Env::new().with_fixtures();
    env.ok(&["sync"]);
    let db = env.data().join("cairn.db");

    // A connection that stays open, as the desktop's do.
    let open = Connection::open(&db).unwrap();
    open.execute_batch("PRAGMA journal_mode = WAL; CREATE TABLE canary (n INTEGER); INSERT INTO canary VALUES (1);")
        .unwrap();
    // The same process opens the archive again (the desktop does, for each command that writes).
    drop(cairn_core::Cairn::open(env.data()).unwrap());
    // Another process opens and closes it cleanly: the sqlite3 shell (scripts/setup.sh installs
    // it), as a person inspecting the archive would, or a script.
    let other = std::process::Command::new("sqlite3")
        .arg(&db)
        .arg("SELECT count(*) FROM sessions")
        .output()
        .expect("the sqlite3 shell runs (scripts/setup.sh installs it)");
    assert!(
        other.status.success(),
        "{}",
        String::from_utf8_lossy(&other.stderr)
    );

    assert!(
        db.with_extension("db-wal").exists(),
        "the WAL of the open connection is still there"
    );
    open.execute("INSERT INTO canary VALUES (2)", []).unwrap();
    drop(open);
    assert_eq!(
        rows(&db),
        2,
        "what the open connection wrote after the other process closed is kept"
    );
}

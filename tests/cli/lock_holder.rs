//! A command that waits for the capture lock names the process holding it, as the system
//! says (Linux's `/proc/locks`): its pid and its command line, redacted, and whether it is
//! stopped, with what lets it go. Before, the line only guessed ("a sync, a reindex or …").
#![cfg(target_os = "linux")]

use crate::support::{Env, HeldLock, run_while_held};

/// A forget that waits names the holder by pid and command line; a password in that command
/// line (another process's text) is not repeated.
#[test]
fn a_wait_names_the_process_that_holds_the_lock_and_hides_its_secrets() {
    let env = Env::new().with_fixtures();
    env.ok(&["sync"]);
    let id = "1af7fc5e-8455-4414-9ccd-011d40f70b2a";
    let held = HeldLock::take(&env, &["--password=hunter2hold"]);
    let pid = held.pid();
    let (line, out) = run_while_held(&env, held, &["forget", id, "--yes"]);
    assert!(
        line.starts_with("Waiting for another Cairn process to let go of the archive"),
        "{line}"
    );
    assert!(
        line.contains(&format!(
            "is held by process {pid} (`flock -o capture.lock sh -c echo held; read _"
        )),
        "{line}"
    );
    assert!(!line.contains("hunter2hold"), "{line}");
    assert!(!line.contains("stopped"), "{line}");
    assert!(
        line.trim_end().ends_with("the forget runs once it does."),
        "{line}"
    );
    assert!(out.status.success(), "{out:?}");
}

/// A sync that finds the lock held by a stopped process says it is stopped and what lets it
/// go (Ctrl-Z leaves a `cairn sync` holding the lock until it goes on or ends).
#[test]
fn a_wait_on_a_stopped_holder_says_it_is_stopped() {
    let env = Env::new().with_fixtures();
    let held = HeldLock::take(&env, &[]);
    held.stop();
    let pid = held.pid();
    let (line, out) = run_while_held(&env, held, &["sync"]);
    assert!(
        line.starts_with("Waiting for another Cairn capture to finish"),
        "{line}"
    );
    assert!(
        line.contains(&format!("is held by process {pid} (`flock -o capture.lock")),
        "{line}"
    );
    assert!(
        line.contains("which is stopped: continue it (`fg` in its terminal) or end it"),
        "{line}"
    );
    assert!(out.status.success(), "{out:?}");
}

//! `forget` removes what the person was shown and nothing else.

use cairn_core::archive::Agent;
use cairn_core::archive::capture::Quiet;
use cairn_core::{Cairn, ForgetRequest, LiftRequest};

use crate::support;

fn file(name: &str) -> cairn_core::archive::discover::FoundFile {
    support::main_file(
        Agent::Claude,
        &support::fixtures().join("claude").join(name),
    )
}

/// A sync between the list and the answer (`cairn forget --agent claude` waiting at its
/// prompt) adds a session the selection now matches: it stays, as no one was asked about it.
/// It went: the forget selected again after the person answered.
#[test]
fn a_session_added_after_the_list_was_shown_is_not_forgotten() {
    let data = tempfile::tempdir().unwrap();
    let cairn = Cairn::open(data.path()).unwrap();
    support::capture(&cairn, &[file("short.jsonl")]);
    let req = ForgetRequest {
        agent: Some(Agent::Claude),
        ..Default::default()
    };
    let shown = cairn.forget_preview(&req).unwrap();
    assert_eq!(shown.sessions.len(), 1);

    support::capture(
        &cairn,
        &[file("ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl")],
    );
    assert_eq!(cairn.forget_preview(&req).unwrap().sessions.len(), 2);

    let done = cairn.forget_planned(&req, &shown, &Quiet).unwrap();
    assert_eq!(done.removed.sessions, shown.sessions);
    let left = cairn.forget_preview(&req).unwrap().sessions;
    assert_eq!(left.len(), 1);
    assert_ne!(left[0].session_key, shown.sessions[0].session_key);
}

/// A forget killed after its commit leaves the retained copies of what it forgot; the next
/// sync deletes them (they stayed, readable, until the next forget, and doctor said nothing).
#[test]
fn a_sync_sweeps_the_copies_a_killed_forget_left() {
    let data = tempfile::tempdir().unwrap();
    let cairn = Cairn::open(data.path()).unwrap();
    support::capture(&cairn, &[file("short.jsonl")]);
    let retained = data.path().join("retained");
    let copies: Vec<(std::path::PathBuf, Vec<u8>)> = support::files_under(&retained)
        .into_iter()
        .map(|p| {
            let bytes = std::fs::read(&p).unwrap();
            (p, bytes)
        })
        .collect();
    assert!(!copies.is_empty());
    let req = ForgetRequest {
        agent: Some(Agent::Claude),
        ..Default::default()
    };
    cairn.forget(&req).unwrap();
    // What a kill between the commit and the sweep leaves.
    for (path, bytes) in &copies {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, bytes).unwrap();
    }
    // Doctor names them and what deletes them.
    let leftover = |cairn: &Cairn| {
        cairn
            .doctor()
            .checks
            .into_iter()
            .find(|c| c.name == "forgotten copies")
    };
    let check = leftover(&cairn).expect("doctor sees the copies left");
    assert_eq!(check.status, cairn_core::doctor::Status::Warn);
    assert!(
        check.detail.starts_with(&format!(
            "{} of forgotten sessions",
            if copies.len() == 1 {
                "1 retained copy".to_owned()
            } else {
                format!("{} retained copies", copies.len())
            }
        )) && check.detail.contains("`cairn sync`"),
        "{check:?}"
    );
    // A sync of an empty folder: nothing of this machine's home is read.
    let empty = tempfile::tempdir().unwrap();
    cairn
        .set_source_dirs(Agent::Claude, vec![empty.path().display().to_string()])
        .unwrap();
    let only_claude = cairn_core::SyncOptions {
        agents: vec![Agent::Claude],
    };
    cairn
        .sync(&only_claude, &cairn_core::archive::capture::Quiet)
        .unwrap();
    assert!(
        support::files_under(&retained).is_empty(),
        "{:?}",
        support::files_under(&retained)
    );
    assert!(leftover(&cairn).is_none());
}

/// `forget --agent` chooses by what stored a session, the format it came in: `atif` is every
/// import (whichever agent ran it), and a session of an agent only a newer Cairn reads, which
/// this build reads as `atif` too. Before, such a session matched no `--agent` at all.
#[test]
fn forget_by_agent_names_the_sessions_that_agent_ran_as_the_lists_do() {
    let data = tempfile::tempdir().unwrap();
    let cairn = Cairn::open(data.path()).unwrap();
    support::capture(
        &cairn,
        &[
            file("short.jsonl"),
            file("ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl"),
        ],
    );
    let keys = support::session_keys(data.path(), "id");
    assert_eq!(keys.len(), 2, "{keys:?}");
    let db = rusqlite::Connection::open(data.path().join("cairn.db")).unwrap();
    // The first as `cairn import` stores a Claude Code trajectory, the second as a newer build
    // stores an agent this one does not know.
    db.execute(
        "UPDATE sessions SET agent = 'atif', provider = 'claude-code', ran_as = 'claude'
         WHERE session_key = ?1",
        [&keys[0]],
    )
    .unwrap();
    db.execute(
        "UPDATE sessions SET agent = 'zed', ran_as = NULL WHERE session_key = ?1",
        [&keys[1]],
    )
    .unwrap();
    let doomed = |agent| {
        cairn
            .forget_preview(&ForgetRequest {
                agent: Some(agent),
                ..Default::default()
            })
            .unwrap()
            .sessions
            .into_iter()
            .map(|s| (s.session_key, s.agent))
            .collect::<Vec<_>>()
    };
    // As `cairn sessions --agent` lists them: the import under the agent that ran it, the
    // unknown agent's under `atif`.
    assert_eq!(
        doomed(Agent::Claude),
        [(keys[0].clone(), "atif".to_owned())]
    );
    assert_eq!(doomed(Agent::Atif), [(keys[1].clone(), "zed".to_owned())]);

    for agent in [Agent::Atif, Agent::Claude] {
        cairn
            .forget(&ForgetRequest {
                agent: Some(agent),
                ..Default::default()
            })
            .unwrap();
    }
    assert_eq!(
        support::count(data.path(), "SELECT COUNT(*) FROM sessions"),
        0
    );
}

/// A forget while another connection keeps committing (hooks capturing turn after turn) waits
/// its turn and succeeds: it read, then wrote, in a deferred transaction, which failed at once
/// ("database is locked") about half the time once a commit moved its snapshot on.
#[test]
fn a_forget_waits_for_writers_that_keep_committing() {
    let data = tempfile::tempdir().unwrap();
    let cairn = Cairn::open(data.path()).unwrap();
    let names = [
        "short.jsonl",
        "small.jsonl",
        "tool_heavy.jsonl",
        "1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl",
        "ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl",
    ];
    let files: Vec<_> = names.iter().map(|n| file(n)).collect();
    support::capture(&cairn, &files);
    let db = data.path().join("cairn.db");
    let noise = rusqlite::Connection::open(&db).unwrap();
    noise
        .busy_timeout(std::time::Duration::from_secs(30))
        .unwrap();
    noise.execute_batch("CREATE TABLE noise (x BLOB)").unwrap();
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let writer = {
        let stop = stop.clone();
        std::thread::spawn(move || {
            let mut commits = 0u32;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                noise
                    .execute("INSERT INTO noise (x) VALUES (zeroblob(512))", [])
                    .unwrap();
                commits += 1;
            }
            commits
        })
    };
    let sessions = cairn
        .forget_preview(&ForgetRequest {
            agent: Some(Agent::Claude),
            ..Default::default()
        })
        .unwrap()
        .sessions;
    assert!(sessions.len() >= 4, "{}", sessions.len());
    for s in &sessions {
        let req = ForgetRequest {
            session: Some(s.session_key.clone()),
            ..Default::default()
        };
        let done = cairn
            .forget(&req)
            .unwrap_or_else(|e| panic!("{}: {e}", s.session_key));
        assert_eq!(done.removed.sessions.len(), 1);
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    assert!(writer.join().unwrap() > 0);
}

/// A lift's count of the sessions shared through git that stay forgotten follows its own
/// `--agent` and `--since`: a lift of Codex's tombstones keeps no shared Claude session and
/// says none, a lift of Claude's says the one it keeps, and the git tombstone stays through
/// both. Before, every lift counted every shared session forgotten, whoever ran it.
#[test]
fn a_lift_counts_the_shared_sessions_of_its_own_agent_and_time() {
    let data = tempfile::tempdir().unwrap();
    let cairn = Cairn::open(data.path()).unwrap();
    support::capture(&cairn, &[file("short.jsonl")]);
    let claude = support::session_keys(data.path(), "id");
    assert_eq!(claude.len(), 1, "{claude:?}");
    support::capture(
        &cairn,
        &[support::main_file(
            Agent::Codex,
            &support::fixtures().join("codex").join("small.jsonl"),
        )],
    );
    let db = rusqlite::Connection::open(data.path().join("cairn.db")).unwrap();
    // The Claude session went through git (`cairn publish`); the Codex one did not.
    cairn_core::archive::store::mark_published(&db, &claude[0], "2026-03-02T10:00:00Z").unwrap();
    for agent in [Agent::Claude, Agent::Codex] {
        let done = cairn
            .forget(&ForgetRequest {
                agent: Some(agent),
                ..Default::default()
            })
            .unwrap();
        assert_eq!(done.removed.sessions.len(), 1, "{agent:?}: {done:?}");
    }
    let shared = || support::count(data.path(), "SELECT COUNT(*) FROM forgotten_shared");
    assert_eq!(shared(), 1);
    let lift = |agent, since: Option<&str>| LiftRequest {
        agent,
        since: since.map(str::to_owned),
    };

    // Codex's: none of them went through git.
    let codex = lift(Some(Agent::Codex), None);
    let would = cairn.lift_preview(&codex).unwrap();
    assert_eq!((would.sessions, would.shared_kept), (1, 0), "{would:?}");
    let lifted = cairn.lift_forgotten(&codex, &Quiet).unwrap();
    assert_eq!(lifted, would);
    assert_eq!(
        shared(),
        1,
        "the git tombstone went with another agent's lift"
    );

    // Claude's laid from tomorrow on: none, so none kept either.
    let later = cairn
        .lift_preview(&lift(Some(Agent::Claude), Some("2999-01-01")))
        .unwrap();
    assert_eq!((later.sessions, later.shared_kept), (0, 0), "{later:?}");

    // Claude's: the shared session stays forgotten for git, and the lift says so.
    let claude_lift = lift(Some(Agent::Claude), None);
    let would = cairn.lift_preview(&claude_lift).unwrap();
    assert_eq!((would.sessions, would.shared_kept), (1, 1), "{would:?}");
    let lifted = cairn.lift_forgotten(&claude_lift, &Quiet).unwrap();
    assert_eq!(lifted, would);
    assert_eq!(shared(), 1);
}

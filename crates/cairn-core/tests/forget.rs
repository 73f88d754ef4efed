//! `forget` removes what the person was shown and nothing else.

use cairn_core::archive::Agent;
use cairn_core::{Cairn, ForgetRequest};

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

    let done = cairn.forget_planned(&req, &shown).unwrap();
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
}

/// `forget --agent` removes the sessions the lists show under that agent: an imported Claude
/// trajectory with Claude's (it is badged and filtered as Claude's), a session of an agent only
/// a newer Cairn reads with `atif`'s. Before, it compared the stored agent, so `--agent claude`
/// left the trajectory listed under Claude and `--agent atif` missed the newer agent's session.
#[test]
fn an_agent_names_the_sessions_the_lists_show_under_it() {
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
    let listed = |agent| {
        cairn
            .sessions(&cairn_core::views::sessions::SessionQuery {
                agent: Some(agent),
                ..Default::default()
            })
            .unwrap()
            .into_iter()
            .map(|s| s.session_key)
            .collect::<Vec<_>>()
    };
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
    assert_eq!(listed(Agent::Claude), [keys[0].clone()]);
    assert_eq!(
        doomed(Agent::Claude),
        [(keys[0].clone(), "claude".to_owned())]
    );
    assert_eq!(listed(Agent::Atif), [keys[1].clone()]);
    assert_eq!(doomed(Agent::Atif), [(keys[1].clone(), "zed".to_owned())]);

    cairn
        .forget(&ForgetRequest {
            agent: Some(Agent::Claude),
            ..Default::default()
        })
        .unwrap();
    assert!(listed(Agent::Claude).is_empty());
    assert_eq!(listed(Agent::Atif), [keys[1].clone()]);
}

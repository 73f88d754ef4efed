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

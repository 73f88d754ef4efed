//! The session search's any-word pass leaves out words held by a large share of the records
//! (`views::search::COMMON_SHARE`): a query of rare and common words is ranked by its rare ones,
//! and a query of common words only still finds sessions.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use cairn_core::Cairn;
use cairn_core::archive::Agent;
use cairn_core::views::search::SearchQuery;
use support::{capture, main_file};

const SESSIONS: usize = 20;

fn session_id(i: usize) -> String {
    format!("{i:08}-2222-3333-4444-555555555555")
}

/// Session `i`: a request that always says "please" and "tidy", an answer that always says
/// "wardrobe" (so "please" and "wardrobe", in every session, never share a record), and in
/// session 3 "zanzibar", in session 7 "quokka".
fn transcript(i: usize) -> String {
    let id = session_id(i);
    let extra = match i {
        3 => " zanzibar",
        7 => " quokka",
        _ => "",
    };
    let line = |uuid: &str, parent: &str, kind: &str, content: &str| {
        let message = if kind == "user" {
            serde_json::json!({"role": "user", "content": content})
        } else {
            serde_json::json!({"role": "assistant", "model": "claude-x",
                               "content": [{"type": "text", "text": content}]})
        };
        let mut v = serde_json::json!({"type": kind, "sessionId": id, "uuid": uuid,
            "timestamp": format!("2026-11-01T10:{i:02}:0{}Z", uuid.len()), "cwd": "/tmp/x",
            "message": message});
        if !parent.is_empty() {
            v["parentUuid"] = parent.into();
        }
        v.to_string() + "\n"
    };
    line("u1", "", "user", &format!("please tidy room {i}{extra}"))
        + &line(
            "a1",
            "u1",
            "assistant",
            &format!("wardrobe sorted, shelf {i}"),
        )
}

fn archive() -> (tempfile::TempDir, tempfile::TempDir, Cairn) {
    let data = tempfile::tempdir().unwrap();
    let src = tempfile::tempdir().unwrap();
    let mut files = Vec::new();
    for i in 0..SESSIONS {
        let path = src.path().join(format!("{}.jsonl", session_id(i)));
        std::fs::write(&path, transcript(i)).unwrap();
        files.push(main_file(Agent::Claude, &path));
    }
    let cairn = Cairn::open(data.path()).unwrap();
    capture(&cairn, &files);
    (data, src, cairn)
}

fn found(cairn: &Cairn, text: &str) -> Vec<String> {
    let hits = cairn
        .search_sessions(&SearchQuery {
            text: text.into(),
            limit: Some(50),
            ..SearchQuery::default()
        })
        .unwrap()
        .sessions;
    let mut ids: Vec<String> = hits
        .iter()
        .map(|h| {
            cairn
                .session(&h.session_key)
                .unwrap()
                .session_id
                .unwrap_or_default()
        })
        .collect();
    ids.sort();
    ids
}

#[test]
fn rare_words_rank_and_common_words_alone_still_find() {
    let (_data, _src, cairn) = archive();
    // No record holds all three words; "please" is in every session's request, so the any-word
    // pass ranks by the two rare words only: their two sessions, not all twenty.
    assert_eq!(
        found(&cairn, "please zanzibar quokka"),
        [session_id(3), session_id(7)]
    );
    // A rare word alone is never left out.
    assert_eq!(found(&cairn, "please zanzibar"), [session_id(3)]);
    // Common words only, never in one record together: the rarest of them still finds sessions.
    let common = found(&cairn, "please wardrobe");
    assert_eq!(common.len(), SESSIONS, "{common:?}");
    // Common words in one record: the all-words pass finds every session.
    assert_eq!(found(&cairn, "please tidy").len(), SESSIONS);
}

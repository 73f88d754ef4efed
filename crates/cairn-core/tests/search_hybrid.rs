//! Hybrid search over the archive runs its two legs at once: the query's embedding and the
//! vector scores on a thread of their own, the full-text leg on the caller's. Both legs' hits
//! are fused, and what either leg fails with reaches the caller as that leg's error.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use cairn_core::archive::Agent;
use cairn_core::semantic::Mode;
use cairn_core::semantic::embed::{Embedder, InputKind};
use cairn_core::semantic::vectors::VectorStore;
use cairn_core::views::search::{MATCH_START, SearchQuery};
use cairn_core::{Cairn, Error};

use crate::support;

/// Words hashed into 32 dimensions (no model to load); with `refuse_queries`, every query fails
/// as a model that cannot run would, while documents still embed.
struct Hashed {
    refuse_queries: bool,
}

impl Embedder for Hashed {
    fn fingerprint(&self) -> &str {
        "hashed/test"
    }
    fn dims(&self) -> usize {
        32
    }
    fn embed(&self, texts: &[&str], kind: InputKind) -> cairn_core::Result<Vec<f32>> {
        if self.refuse_queries && kind == InputKind::Query {
            return Err(Error::External("the test embedder refuses queries".into()));
        }
        Ok(support::hashed_words(texts, 32))
    }
    fn refresh_on_write(&self) -> bool {
        false
    }
    fn describe(&self) -> String {
        "hashed".into()
    }
}

fn query(text: &str, mode: Mode) -> SearchQuery {
    SearchQuery {
        text: text.into(),
        mode,
        limit: Some(10),
        ..SearchQuery::default()
    }
}

/// An archive of one real Claude Code session with the hashed embedder.
fn archive() -> (tempfile::TempDir, Cairn) {
    let data = tempfile::tempdir().unwrap();
    let cairn = Cairn::open(data.path()).unwrap();
    let fixture = support::fixtures().join("claude").join("tool_heavy.jsonl");
    support::capture(&cairn, &[support::main_file(Agent::Claude, &fixture)]);
    cairn.set_embedder(Arc::new(Hashed {
        refuse_queries: false,
    }));
    (data, cairn)
}

#[test]
fn both_legs_are_fused_and_either_leg_s_failure_is_reported() {
    let (_data, cairn) = archive();
    cairn
        .embeddings_build(VectorStore::Sessions, false, &|_, _| {})
        .unwrap();

    // The words' hits come back marked and snippeted; the vectors' hits join them.
    let hits = cairn
        .search(&query("phoenix background", Mode::Hybrid))
        .unwrap();
    let keyword: Vec<_> = hits
        .iter()
        .filter(|h| h.match_reasons.iter().any(|m| m == "keyword"))
        .collect();
    assert!(!keyword.is_empty(), "{hits:?}");
    assert!(
        keyword.iter().all(|h| h.snippet.contains(MATCH_START)),
        "{keyword:?}"
    );
    assert!(
        hits.iter()
            .any(|h| h.match_reasons.iter().any(|m| m == "semantic")),
        "{hits:?}"
    );
    // Every turn the full-text leg found is in the fused answer when there is room for it.
    let lexical = cairn
        .search(&query("phoenix background", Mode::Lexical))
        .unwrap();
    let turns = |hs: &[cairn_core::views::search::SearchHit]| {
        hs.iter()
            .map(|h| h.turn_key.clone())
            .collect::<std::collections::HashSet<_>>()
    };
    assert!(
        turns(&hits).is_superset(&turns(&lexical)),
        "{hits:?}\n{lexical:?}"
    );
    let sessions = cairn
        .search_sessions(&query("phoenix background", Mode::Hybrid))
        .unwrap()
        .sessions;
    assert_eq!(sessions.len(), 1);

    // The embedding thread's failure, not a hang or a panic. (A new text: a query already
    // embedded would come from the cache.)
    cairn.set_embedder(Arc::new(Hashed {
        refuse_queries: true,
    }));
    for search in [
        cairn
            .search(&query("start the server", Mode::Hybrid))
            .map(|_| ()),
        cairn
            .search(&query("start the server again", Mode::Vector))
            .map(|_| ()),
        cairn
            .search_sessions(&query("start the server once more", Mode::Hybrid))
            .map(|_| ()),
    ] {
        let err = search.unwrap_err();
        assert!(err.to_string().contains("refuses queries"), "{err}");
    }

    // The full-text leg's failure: a raw expression FTS5 cannot read is the person's query to
    // fix, in hybrid mode as in lexical.
    cairn.set_embedder(Arc::new(Hashed {
        refuse_queries: false,
    }));
    for mode in [Mode::Hybrid, Mode::Lexical] {
        let err = cairn.search(&query("\"unterminated", mode)).unwrap_err();
        assert!(matches!(err, Error::Invalid(_)), "{err:?}");
        assert!(err.to_string().contains("drop the leading quote"), "{err}");
        // Quoted as typed, not escaped.
        assert!(
            err.to_string()
                .starts_with("cannot search for “\"unterminated”:"),
            "{err}"
        );
    }

    // A NUL or another control character in the words (an MCP client's argument) separates
    // them, as the index does; it never ends FTS5's reading of the query.
    for mode in [Mode::Hybrid, Mode::Lexical] {
        let plain = cairn.search(&query("phoenix background", mode)).unwrap();
        let hits = cairn
            .search(&query("phoenix\0background\u{1b}", mode))
            .unwrap();
        assert_eq!(hits.len(), plain.len(), "{mode:?}");
        let sessions = cairn
            .search_sessions(&query("phoenix\0background", mode))
            .unwrap()
            .sessions;
        assert_eq!(sessions.len(), 1, "{mode:?}");
    }
}

/// What the desktop asks before each search and after each capture: meaning runs once the
/// vectors are built, and goes on running while a capture's turns wait for theirs; an embedder
/// that is not the local model (an endpoint: text leaves only when a person builds) is never
/// run by a capture.
#[test]
fn meaning_is_searched_once_built_and_an_endpoint_is_never_run_by_a_capture() {
    let (_data, cairn) = archive();
    assert!(!cairn.searches_by_meaning(VectorStore::Sessions));
    cairn
        .embeddings_build(VectorStore::Sessions, false, &|_, _| {})
        .unwrap();
    assert!(cairn.searches_by_meaning(VectorStore::Sessions));
    assert!(!cairn.searches_by_meaning(VectorStore::Recall));
    assert!(
        !cairn.embeds_as_captured(VectorStore::Sessions),
        "the test embedder does not refresh on write"
    );
    let other = support::fixtures().join("claude").join("short.jsonl");
    support::capture(&cairn, &[support::main_file(Agent::Claude, &other)]);
    assert!(cairn.searches_by_meaning(VectorStore::Sessions));
}

/// A capture after the last build leaves its turns without vectors. A search by meaning still
/// answers, over the turns that have theirs (never a vector made from less of a turn than is
/// there now), finds the new turns by words in hybrid, and says how many wait.
#[test]
fn turns_captured_since_the_build_are_found_by_words_and_counted_until_built() {
    let (_data, cairn) = archive();
    cairn
        .embeddings_build(VectorStore::Sessions, false, &|_, _| {})
        .unwrap();
    let fresh = cairn
        .search_answer(&query("phoenix background", Mode::Hybrid))
        .unwrap();
    assert_eq!((fresh.mode, fresh.vectors_pending), (Mode::Hybrid, 0));
    assert!(!fresh.hits.is_empty());

    let other = support::fixtures().join("claude").join("short.jsonl");
    support::capture(&cairn, &[support::main_file(Agent::Claude, &other)]);
    let added = cairn
        .embeddings_status()
        .unwrap()
        .stores
        .iter()
        .find(|s| s.store == VectorStore::Sessions)
        .and_then(|s| s.pending)
        .unwrap();
    assert!(added > 0);
    // short.jsonl's session, titled by its first request.
    let new_session = |h: &cairn_core::views::search::SearchHit| {
        h.title.as_deref() == Some("mix phx.server doesnt seem to start")
    };
    let words = "phx server start";

    let hybrid = cairn.search_answer(&query(words, Mode::Hybrid)).unwrap();
    assert_eq!((hybrid.mode, hybrid.vectors_pending), (Mode::Hybrid, added));
    let found: Vec<_> = hybrid.hits.iter().filter(|h| new_session(h)).collect();
    assert!(!found.is_empty(), "{:?}", hybrid.hits);
    assert!(
        found.iter().all(|h| h.match_reasons == ["keyword"]),
        "a waiting turn is found by its words alone: {found:?}"
    );
    // The turns built before still answer by meaning.
    let old = cairn
        .search_answer(&query("phoenix background", Mode::Vector))
        .unwrap();
    assert_eq!(old.vectors_pending, added);
    assert!(!old.hits.is_empty());
    let vector = cairn.search_answer(&query(words, Mode::Vector)).unwrap();
    assert!(!vector.hits.iter().any(new_session), "{:?}", vector.hits);
    let lexical = cairn.search_answer(&query(words, Mode::Lexical)).unwrap();
    assert_eq!((lexical.mode, lexical.vectors_pending), (Mode::Lexical, 0));

    cairn
        .embeddings_build(VectorStore::Sessions, false, &|_, _| {})
        .unwrap();
    let built = cairn.search_answer(&query(words, Mode::Vector)).unwrap();
    assert_eq!(built.vectors_pending, 0);
    assert!(built.hits.iter().any(new_session), "{:?}", built.hits);
}

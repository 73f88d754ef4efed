//! Semantic Recall with the built-in model: paraphrased questions that lexical ranking cannot
//! answer are answered by hybrid retrieval; vectors are refreshed on write; while vectors catch
//! up, vector and hybrid search the entries that have a current one and say how many wait, and
//! vectors of another embedder make them refuse with the command that fixes it; lexical never
//! depends on any of it.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use std::collections::HashSet;
use std::sync::Arc;

use cairn_core::recall::analyze::Analyzer;
use cairn_core::recall::model::Surface;
use cairn_core::recall::review::Edit;
use cairn_core::recall::store::Filters;
use cairn_core::recall::{Mode, QueryRequest};
use cairn_core::semantic::embed::{Embedder, InputKind, LOCAL_SIMILARITY_FLOOR};
use cairn_core::semantic::vectors::{self, VectorStore};
use cairn_core::{Cairn, Error};

#[derive(serde::Deserialize)]
struct Question {
    question: String,
    expected: Vec<String>,
}

fn questions(file: &str) -> Vec<Question> {
    serde_json::from_str(
        &std::fs::read_to_string(support::fixtures().join("recall").join(file)).unwrap(),
    )
    .unwrap()
}

fn ask(cairn: &Cairn, text: &str, mode: Mode) -> cairn_core::Result<Vec<String>> {
    let req = QueryRequest {
        text: text.into(),
        mode,
        ..Default::default()
    };
    Ok(cairn
        .recall_query(&req, Surface::Query)?
        .results
        .into_iter()
        .map(|r| r.entry.id)
        .collect())
}

/// Each question of a set asked once in one mode: whether an expected entry is in the top
/// three, and a line describing each miss.
struct Top3 {
    found: Vec<bool>,
    misses: Vec<String>,
}

impl Top3 {
    fn run(cairn: &Cairn, qs: &[Question], mode: Mode) -> Top3 {
        let mut found = Vec::with_capacity(qs.len());
        let mut misses = Vec::new();
        for q in qs {
            let ids = ask(cairn, &q.question, mode).unwrap();
            let ok = ids.iter().take(3).any(|id| q.expected.contains(id));
            if !ok {
                misses.push(format!(
                    "{:?} -> {:?}",
                    q.question,
                    &ids[..ids.len().min(3)]
                ));
            }
            found.push(ok);
        }
        Top3 { found, misses }
    }

    fn hits(&self) -> usize {
        self.found.iter().filter(|ok| **ok).count()
    }
}

#[test]
fn paraphrases_lexical_misses_are_found_by_hybrid() {
    support::ensure_model();
    // The import refreshed the vectors itself (the local model refreshes on write).
    let (_d, cairn) = support::recall_archive();
    let status = cairn.embeddings_status().unwrap();
    let recall = &status.stores[0];
    assert!(recall.fresh, "{status:?}");
    assert_eq!(recall.vectors, 26);

    let paraphrases = questions("paraphrases.json");
    // Little word overlap, checked: at most one analysed term shared with the expected entry.
    let a = Analyzer::global();
    let mut overlapping = Vec::new();
    for q in &paraphrases {
        let e = cairn.recall_get(&q.expected[0]).unwrap();
        let entry_terms: HashSet<String> = a
            .terms(&format!("{} {} {}", e.title, e.body, e.trigger))
            .into_iter()
            .collect();
        let shared: Vec<String> = a
            .query_terms(&q.question)
            .into_iter()
            .filter(|t| entry_terms.contains(t))
            .collect();
        if shared.len() > 1 {
            overlapping.push(format!("{:?} shares {shared:?}", q.question));
        }
    }
    assert!(overlapping.is_empty(), "{}", overlapping.join("\n"));
    let n = paraphrases.len();
    let lexical = Top3::run(&cairn, &paraphrases, Mode::Lexical);
    let vector = Top3::run(&cairn, &paraphrases, Mode::Vector);
    let hybrid = Top3::run(&cairn, &paraphrases, Mode::Hybrid);
    let (l, v, h) = (lexical.hits(), vector.hits(), hybrid.hits());
    println!("paraphrases: {n}, top-3 lexical {l}/{n}, vector {v}/{n}, hybrid {h}/{n}");
    for m in &lexical.misses {
        println!("  lexical miss: {m}");
    }
    for m in &hybrid.misses {
        println!("  hybrid miss: {m}");
    }
    // Lexical alone fails most of them; hybrid finds at least 80%.
    assert!(
        l * 4 <= n,
        "lexical found {l}/{n}: the set is not paraphrased enough"
    );
    assert!(
        h * 5 >= n * 4,
        "hybrid top-3 {h}/{n}\n{}",
        hybrid.misses.join("\n")
    );
    // At least three in four of the questions lexical missed are found by hybrid.
    let missed = lexical.found.iter().filter(|ok| !**ok).count();
    let rescued = lexical
        .found
        .iter()
        .zip(&hybrid.found)
        .filter(|(l, h)| !**l && **h)
        .count();
    println!("lexical missed {missed}; hybrid found {rescued} of those");
    assert!(
        rescued * 4 >= missed * 3,
        "hybrid found {rescued} of the {missed} lexical missed"
    );

    // The original questions (worded like the entries) do not get worse in hybrid mode.
    let original = questions("questions.json");
    let m = original.len();
    let lex_orig = Top3::run(&cairn, &original, Mode::Lexical).hits();
    let hyb = Top3::run(&cairn, &original, Mode::Hybrid);
    let hyb_orig = hyb.hits();
    println!("original questions: {m}, top-3 lexical {lex_orig}/{m}, hybrid {hyb_orig}/{m}");
    assert!(
        hyb_orig >= lex_orig && hyb_orig * 100 >= m * 80,
        "hybrid on the original set: {hyb_orig}/{m} (lexical {lex_orig})\n{}",
        hyb.misses.join("\n")
    );
}

/// The off-topic questions of tests/fixtures/meaning (SOURCES.md there), and a nonsense word.
fn off_topic() -> Vec<String> {
    std::fs::read_to_string(support::fixtures().join("meaning/off_topic.txt"))
        .unwrap()
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(str::to_owned)
        .chain(["zzqqxx".to_owned()])
        .collect()
}

/// A question about nothing in Recall finds nothing by meaning: an entry counts as found by
/// meaning only at the embedder's similarity floor (without it, each of these listed all 26
/// entries, the nearest at cosine 0.17 or less). Hybrid then answers only what the words find
/// ("ok" is a word in one entry), and a nonsense word finds nothing at all.
#[test]
fn a_question_about_nothing_in_recall_finds_nothing() {
    support::ensure_model();
    let (_d, cairn) = support::recall_archive();
    let ids = |resp: &cairn_core::recall::QueryResponse| {
        let mut ids: Vec<String> = resp.results.iter().map(|r| r.entry.id.clone()).collect();
        ids.sort();
        ids
    };
    for question in off_topic() {
        let vector = answer(&cairn, &question, Mode::Vector);
        assert!(
            vector.results.is_empty(),
            "{question:?} found {:?} by meaning",
            ids(&vector)
        );
        // Hybrid's word leg is lexical's, gated by coverage: never more than lexical finds.
        let hybrid = answer(&cairn, &question, Mode::Hybrid);
        let lexical = ids(&answer(&cairn, &question, Mode::Lexical));
        assert!(
            ids(&hybrid).iter().all(|id| lexical.contains(id)),
            "{question:?}: hybrid {:?}, lexical {lexical:?}",
            ids(&hybrid)
        );
        assert!(
            hybrid
                .results
                .iter()
                .all(|r| r.breakdown.semantic.is_none())
        );
    }
    for mode in [Mode::Vector, Mode::Hybrid] {
        let resp = answer(&cairn, "zzqqxx", mode);
        assert!(resp.results.is_empty(), "{mode:?}: {:?}", ids(&resp));
        assert_eq!(
            resp.miss_reason,
            cairn_core::recall::model::MissReason::NoResults
        );
    }
    // A question about something in it still finds it, by meaning alone.
    let found = ask(&cairn, "the web app refuses to boot", Mode::Vector).unwrap();
    assert_eq!(found.first().map(String::as_str), Some("phx-server-fails"));
}

#[test]
fn hybrid_results_explain_themselves() {
    support::ensure_model();
    let (_d, cairn) = support::recall_archive();
    let req = QueryRequest {
        text: "how do we set up trace context propagation".into(),
        mode: Mode::Hybrid,
        ..Default::default()
    };
    let resp = cairn.recall_query(&req, Surface::Query).unwrap();
    assert_eq!(resp.mode, Mode::Hybrid);
    assert!(resp.query_id.is_some());
    let top = &resp.results[0];
    assert_eq!(top.entry.id, "otel-propagators");
    // Found by both legs: lexical breakdown kept, cosine and both ranks added, fused score.
    let b = &top.breakdown;
    assert!(b.bm25f > 0.0 && b.semantic.unwrap() > 0.3, "{b:?}");
    assert!(b.lexical_rank.is_some() && b.vector_rank.is_some());
    assert!(top.match_reasons.contains(&"keyword".to_owned()));
    assert!(top.match_reasons.contains(&"semantic".to_owned()));
    let expect = 1.0 / (60.0 + f64::from(b.lexical_rank.unwrap()))
        + 1.0 / (60.0 + f64::from(b.vector_rank.unwrap()));
    assert!((top.score - expect).abs() < 1e-12);
    // Scores never increase down the list.
    assert!(resp.results.windows(2).all(|w| w[0].score >= w[1].score));

    // Vector mode: cosine scores (the nearest at or above the floor), reason `semantic` only,
    // filters still apply.
    let req = QueryRequest {
        text: "the embedded terminal won't scroll with the mouse wheel".into(),
        mode: Mode::Vector,
        filters: Filters {
            limit: Some(5),
            ..Default::default()
        },
        ..Default::default()
    };
    let resp = cairn.recall_query(&req, Surface::Query).unwrap();
    assert_eq!(resp.results.len(), 5);
    assert_eq!(resp.results[0].entry.id, "xterm-scroll");
    assert!(resp.results[0].score >= f64::from(LOCAL_SIMILARITY_FLOOR));
    assert_eq!(resp.results[0].match_reasons, vec!["semantic".to_owned()]);
    assert!(resp.results.windows(2).all(|w| w[0].score >= w[1].score));
    cairn.recall_reject("xterm-scroll").unwrap();
    let resp = cairn.recall_query(&req, Surface::Query).unwrap();
    assert!(resp.results.iter().all(|r| r.entry.id != "xterm-scroll"));

    // A brief packs hybrid results too.
    let brief = QueryRequest {
        text: "print spans to the console while developing".into(),
        mode: Mode::Hybrid,
        context: true,
        filters: Filters {
            trusted_only: true,
            ..Default::default()
        },
        ..Default::default()
    };
    let resp = cairn.recall_query(&brief, Surface::Brief).unwrap();
    let packed = resp.context.unwrap();
    assert_eq!(packed.entry_ids[0], "otel-console-dev");
}

#[test]
fn writes_refresh_vectors_and_pending_ones_are_searched_by_words_only() {
    support::ensure_model();
    let (d, cairn) = support::recall_archive();
    let fresh = |c: &Cairn| c.embeddings_status().unwrap().stores[0].fresh;
    assert!(fresh(&cairn));

    // A review edit re-embeds the entry at once: the new wording is found by meaning.
    let edit = Edit {
        title: Some("Bananas ripen faster next to apples".into()),
        body: Some("Ethylene from the apples speeds up ripening of the fruit bowl.".into()),
        trigger: Some(String::new()),
        ..Edit::default()
    };
    cairn
        .recall_accept("phx-server-fails", Some(&edit))
        .unwrap();
    assert!(fresh(&cairn));
    let ids = ask(
        &cairn,
        "why is my fruit getting ripe so quickly",
        Mode::Vector,
    )
    .unwrap();
    assert_eq!(ids[0], "phx-server-fails");
    // The stored vector is the new text's.
    let conn = rusqlite::Connection::open(d.path().join("cairn.db")).unwrap();
    let hash: String = conn
        .query_row(
            "SELECT content_hash FROM recall_vectors WHERE entry_id = 'phx-server-fails'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(
        hash,
        vectors::content_hash(&vectors::recall_doc(
            "Bananas ripen faster next to apples",
            "Ethylene from the apples speeds up ripening of the fruit bowl.",
            ""
        ))
    );
    // A status change is not a text change: nothing to re-embed, still fresh.
    cairn.recall_reject("beads-sync").unwrap();
    assert!(fresh(&cairn));

    // Text changed behind Cairn's back (another process, an older build), so two entries wait
    // for their vectors. Vector and hybrid answer from the entries that have a current vector
    // and say how many wait; a changed entry is never scored by its old vector (hybrid finds it
    // by words alone), though the matrix cached before the change still holds that vector.
    conn.execute(
        "UPDATE recall_entries SET body = body || ' (edited)' WHERE id IN ('otel-readme', 'mcp-reconnect')",
        [],
    )
    .unwrap();
    assert!(!fresh(&cairn));
    let changed = ["otel-readme", "mcp-reconnect"];
    let vector = answer(&cairn, "where is tracing documented", Mode::Vector);
    assert_eq!(vector.vectors_pending, 2);
    assert!(!vector.results.is_empty());
    assert!(
        vector
            .results
            .iter()
            .all(|r| !changed.contains(&r.entry.id.as_str())),
        "a changed entry was scored by its old vector"
    );
    let hybrid = answer(&cairn, "where is tracing documented", Mode::Hybrid);
    assert_eq!(hybrid.vectors_pending, 2);
    let otel = hybrid
        .results
        .iter()
        .find(|r| r.entry.id == "otel-readme")
        .expect("the changed entry is found by words");
    assert_eq!(otel.breakdown.semantic, None);
    assert!(!otel.match_reasons.iter().any(|m| m == "semantic"));
    assert!(
        hybrid
            .results
            .iter()
            .any(|r| r.breakdown.semantic.is_some())
    );
    // Lexical never waits on vectors and says nothing is pending.
    assert_eq!(
        answer(&cairn, "where is tracing documented", Mode::Lexical).vectors_pending,
        0
    );
    let lexical = ask(&cairn, "where is tracing documented", Mode::Lexical).unwrap();
    assert_eq!(lexical[0], "otel-readme");
    // While an extraction pass runs (it holds `extract.lock`), a review click embeds nothing
    // it did not change: the pass's refresher owns what waits. A click took seconds embedding
    // the pass's entries on the connection the window reads through.
    let lock = std::fs::File::create(d.path().join("extract.lock")).unwrap();
    lock.lock().unwrap();
    cairn.recall_reject("otel-propagators").unwrap();
    assert_eq!(
        answer(&cairn, "where is tracing documented", Mode::Vector).vectors_pending,
        2
    );
    lock.unlock().unwrap();
    // The build embeds exactly what changed, then searches run again.
    let report = cairn
        .embeddings_build(VectorStore::Recall, false, &|_, _| {})
        .unwrap();
    assert_eq!(report.embedded, 2);
    assert_eq!(report.vectors, 26);
    let hybrid = answer(&cairn, "where is tracing documented", Mode::Hybrid);
    assert_eq!(hybrid.results[0].entry.id, "otel-readme");
    assert_eq!(hybrid.vectors_pending, 0);
    assert!(hybrid.results[0].breakdown.semantic.is_some());

    // Vectors made by another embedder are never compared with this one's.
    cairn.set_embedder(Arc::new(Other));
    let err = ask(&cairn, "where is tracing documented", Mode::Hybrid).unwrap_err();
    let msg = err.to_string();
    assert!(
        msg.contains("another embedder") && msg.contains("other/test"),
        "{msg}"
    );
    // And an embedder that does not refresh on write leaves writes stale until a build.
    let report = cairn
        .embeddings_build(VectorStore::Recall, false, &|_, _| {})
        .unwrap();
    assert_eq!(report.embedded, 26);
    assert!(fresh(&cairn));
    cairn
        .recall_accept(
            "otel-readme",
            Some(&Edit {
                body: Some("Moved to docs/tracing.md.".into()),
                ..Edit::default()
            }),
        )
        .unwrap();
    assert!(!fresh(&cairn));
    let partial = answer(&cairn, "docs", Mode::Vector);
    assert_eq!(partial.vectors_pending, 1);
    assert!(partial.results.iter().all(|r| r.entry.id != "otel-readme"));
    // Every vector gone (a forced rebuild that has not started): nothing is scored by meaning,
    // hybrid answers by words and says every entry waits.
    conn.execute("DELETE FROM recall_vectors", []).unwrap();
    let words = answer(&cairn, "where is tracing documented", Mode::Hybrid);
    assert_eq!(words.vectors_pending, 26);
    assert!(!words.results.is_empty());
    assert!(words.results.iter().all(|r| r.breakdown.semantic.is_none()));
}

/// A query's whole response (the pending count with the results).
fn answer(cairn: &Cairn, text: &str, mode: Mode) -> cairn_core::recall::QueryResponse {
    let req = QueryRequest {
        text: text.into(),
        mode,
        ..Default::default()
    };
    cairn.recall_query(&req, Surface::Query).unwrap()
}

/// Hybrid embeds the query on a thread of its own while the lexical leg runs: a model that fails
/// or panics there fails that one query with an error, and the next query works.
#[test]
fn a_failing_query_embedding_fails_the_hybrid_query_and_nothing_else() {
    support::ensure_model();
    let (_d, cairn) = support::recall_archive();
    cairn.set_embedder(Arc::new(Other));
    cairn
        .embeddings_build(VectorStore::Recall, false, &|_, _| {})
        .unwrap();
    let question = "where is tracing documented";
    let working = ask(&cairn, question, Mode::Hybrid).unwrap();
    assert!(!working.is_empty());

    cairn.set_embedder(Arc::new(Broken { panics: false }));
    let err = ask(&cairn, question, Mode::Hybrid).unwrap_err();
    assert!(
        matches!(&err, Error::Endpoint { message, .. } if message == "connection refused"),
        "{err:?}"
    );

    cairn.set_embedder(Arc::new(Broken { panics: true }));
    let err = ask(&cairn, question, Mode::Hybrid).unwrap_err();
    let msg = err.to_string();
    assert!(
        msg.contains("embedding failed") && msg.contains("--mode lexical"),
        "{msg}"
    );

    // The archive lock was not poisoned and nothing was cached from the failures.
    assert_eq!(
        ask(&cairn, question, Mode::Lexical).unwrap()[0],
        "otel-readme"
    );
    cairn.set_embedder(Arc::new(Other));
    assert_eq!(ask(&cairn, question, Mode::Hybrid).unwrap(), working);
}

/// `Other`'s fingerprint and documents, but embedding a query fails (a server that went away)
/// or panics (a broken model).
struct Broken {
    panics: bool,
}

impl Embedder for Broken {
    fn fingerprint(&self) -> &str {
        Other.fingerprint()
    }
    fn dims(&self) -> usize {
        Other.dims()
    }
    fn embed(&self, texts: &[&str], kind: InputKind) -> cairn_core::Result<Vec<f32>> {
        if kind != InputKind::Query {
            return Other.embed(texts, kind);
        }
        assert!(!self.panics, "the test model panics on queries");
        Err(Error::Endpoint {
            endpoint: "http://127.0.0.1:9".into(),
            message: "connection refused".into(),
        })
    }
    fn refresh_on_write(&self) -> bool {
        false
    }
    fn describe(&self) -> String {
        "broken test model".into()
    }
}

/// A stand-in embedder with another fingerprint that only embeds when asked.
struct Other;

impl Embedder for Other {
    fn fingerprint(&self) -> &str {
        "other/test"
    }
    fn dims(&self) -> usize {
        4
    }
    fn embed(&self, texts: &[&str], _kind: InputKind) -> cairn_core::Result<Vec<f32>> {
        Ok(texts
            .iter()
            .flat_map(|t| {
                let n = t.len() as f32;
                let mut v = vec![1.0, n, n.sqrt(), 0.5];
                cairn_core::semantic::embed::normalize(&mut v);
                v
            })
            .collect())
    }
    fn refresh_on_write(&self) -> bool {
        false
    }
    fn describe(&self) -> String {
        "test".into()
    }
}

/// A new archive: no entry and no turn to embed, so searches by meaning answer (nothing)
/// instead of asking for a build that has nothing to do; the first turn makes the store stale.
#[test]
fn an_empty_corpus_is_searched_by_meaning_without_a_build() {
    use cairn_core::archive::Agent;
    use cairn_core::views::search::SearchQuery;
    let data = tempfile::tempdir().unwrap();
    let cairn = Cairn::open(data.path()).unwrap();
    cairn.set_embedder(Arc::new(Other));
    assert_eq!(
        ask(&cairn, "dev server port", Mode::Hybrid).unwrap(),
        Vec::<String>::new()
    );
    assert_eq!(
        ask(&cairn, "dev server port", Mode::Vector).unwrap(),
        Vec::<String>::new()
    );
    let search = |mode: Mode| {
        cairn.search(&SearchQuery {
            text: "start the web server".into(),
            mode,
            ..Default::default()
        })
    };
    assert_eq!(search(Mode::Hybrid).unwrap(), Vec::new());
    assert_eq!(search(Mode::Vector).unwrap(), Vec::new());

    let fixture = support::fixtures().join("claude").join("short.jsonl");
    support::capture(&cairn, &[support::main_file(Agent::Claude, &fixture)]);
    let err = search(Mode::Hybrid).unwrap_err();
    assert!(
        err.to_string()
            .contains("cairn embeddings build --store sessions"),
        "{err}"
    );
    cairn
        .embeddings_build(VectorStore::Sessions, false, &|_, _| {})
        .unwrap();
    assert!(!search(Mode::Vector).unwrap().is_empty());
}

#[test]
fn archive_search_by_meaning_over_turns_fails_closed_until_built() {
    use cairn_core::archive::Agent;
    use cairn_core::views::search::SearchQuery;
    support::ensure_model();
    let data = tempfile::tempdir().unwrap();
    let cairn = Cairn::open(data.path()).unwrap();
    let file =
        |f: &str| support::main_file(Agent::Claude, &support::fixtures().join("claude").join(f));
    support::capture(&cairn, &[file("tool_heavy.jsonl")]);
    let search = |text: &str, mode: Mode| {
        cairn.search(&SearchQuery {
            text: text.into(),
            mode,
            limit: Some(5),
            ..Default::default()
        })
    };
    let question = "the browser terminal emulator cannot go back up under the multiplexer";
    let err = search(question, Mode::Vector).unwrap_err();
    assert!(
        err.to_string()
            .contains("cairn embeddings build --store sessions"),
        "{err}"
    );
    // Lexical: every word must match, so the question finds nothing.
    assert!(search(question, Mode::Lexical).unwrap().is_empty());

    let report = cairn
        .embeddings_build(VectorStore::Sessions, false, &|_, _| {})
        .unwrap();
    assert!(report.vectors >= 3, "{report:?}");
    let hits = search(question, Mode::Vector).unwrap();
    assert!(hits[0].snippet.contains("xterm.js"), "{:?}", hits[0]);
    assert_eq!(hits[0].match_reasons, vec!["semantic".to_owned()]);
    assert!(hits.windows(2).all(|w| w[0].score >= w[1].score));
    let hits = search(
        "launch the web framework's server as a background job",
        Mode::Hybrid,
    )
    .unwrap();
    assert!(
        hits[0].snippet.to_lowercase().contains("phoenix"),
        "{:?}",
        hits[0]
    );
    // Hybrid keeps lexical hits (with their highlighted snippet) and marks what both found.
    let hits = search("phoenix background", Mode::Hybrid).unwrap();
    assert!(
        hits.iter()
            .any(|h| h.match_reasons == vec!["keyword".to_owned(), "semantic".to_owned()]),
        "{hits:?}"
    );
    // Filters apply to the vector leg too.
    let none = cairn
        .search(&SearchQuery {
            text: question.into(),
            mode: Mode::Vector,
            agent: Some(Agent::Codex),
            ..Default::default()
        })
        .unwrap();
    assert!(none.is_empty());

    // New turns captured: the built ones are still searched by meaning, the new one waits for
    // its vector (counted) and is found by words meanwhile, never by a vector it lacks.
    support::capture(&cairn, &[file("short.jsonl")]);
    let waiting = cairn
        .search_answer(&SearchQuery {
            text: "the dev server will not boot".into(),
            mode: Mode::Vector,
            limit: Some(5),
            ..Default::default()
        })
        .unwrap();
    assert_eq!(waiting.vectors_pending, 1);
    assert!(
        !waiting
            .hits
            .iter()
            .any(|h| h.snippet.contains("phx.server doesnt seem to start")),
        "{waiting:?}"
    );
    assert!(
        search(question, Mode::Hybrid).unwrap()[0]
            .snippet
            .contains("xterm.js")
    );
    let report = cairn
        .embeddings_build(VectorStore::Sessions, false, &|_, _| {})
        .unwrap();
    assert!(report.embedded >= 1);
    // The new session's question is found by meaning ("start phoenix in background", from the
    // first session, is a close neighbour, so the top three are checked).
    let hits = search("the dev server will not boot", Mode::Vector).unwrap();
    assert!(
        hits.iter()
            .take(3)
            .any(|h| h.snippet.contains("phx.server doesnt seem to start")),
        "{hits:?}"
    );
}

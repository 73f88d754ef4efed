//! A server opened before the archive was rebuilt (`cairn reindex --from-copies`, another
//! process) answers from the new database after it, without a restart, and its writer is
//! opened again there.

use cairn_core::archive::capture::Quiet;

use super::*;

#[test]
fn a_server_opened_before_a_rebuild_answers_from_the_new_database() {
    let f = fixture();
    let data = f._tmp.path().join("data");
    let claude = f._tmp.path().join("claude");
    let repo = std::fs::canonicalize(f._tmp.path().join("repo")).unwrap();
    let titles = |v: Value| -> Vec<String> {
        body(f.server.recall_query(args(v).unwrap()))["entries"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["title"].as_str().unwrap().to_owned())
            .collect()
    };
    // Read and written (the ledger of the query) before the rebuild.
    assert_eq!(
        titles(json!({"query": "migrations"})),
        ["Run the migrations"]
    );
    let listed = |server: &Server| {
        body(skim(
            server,
            json!({"target": "main", "include_weak": true}),
        ))["sessions"]
            .as_array()
            .unwrap()
            .len()
    };
    assert_eq!(listed(&f.server), 3);

    // Recall's entries are carried into the rebuilt database; a session captured after it is
    // in the new one alone.
    Cairn::rebuild_from_copies(&data, &Quiet).unwrap();
    claude_session(&Cairn::open(&data).unwrap(), &claude, "c3", &repo);

    assert_eq!(listed(&f.server), 4);
    assert_eq!(
        titles(json!({"query": "migrations"})),
        ["Run the migrations"]
    );
    let hits = body(f.server.search(args(json!({"query": "c3"})).unwrap()));
    assert_eq!(hits["hits"].as_array().unwrap().len(), 1, "{hits}");

    // The writer of the ledger (and of proposals and feedback), opened by the first query on
    // the old database, was opened again on the new one by the last.
    let answered = body(
        f.server
            .recall_query(args(json!({"query": "parser"})).unwrap()),
    );
    assert!(answered["query_id"].is_string(), "{answered}");
    let writer = f.server.session.writer.lock().unwrap();
    assert!(writer.as_ref().unwrap().is_current());
}

//! A page cursor belongs to the query that returned it. Given with other arguments it would
//! be an offset into another result set, silently skipping that set's first results, so each
//! paged tool refuses it as the tool's answer (`isError`), saying how to go on; with the same
//! arguments it pages on, whatever order the agent writes them in.

use super::*;

/// Two more reviewed entries beside the fixture's, so `recall_query` has pages.
fn more_entries(f: &Fixture) {
    let lines: String = ["Drain the queue", "Restart the worker"]
        .iter()
        .enumerate()
        .map(|(i, title)| {
            format!(
                "{}\n",
                json!({"candidate_id": format!("q{i}"), "session_id": "x1", "type": "procedure",
                    "scope": "project", "title": title, "body": format!("{title} before a deploy."),
                    "transferable": true, "provenance_ok": true, "label": "correct",
                    "evidence": {"ordinal_start": 0, "ordinal_end": 0}})
            )
        })
        .collect();
    let report = Cairn::open(f._tmp.path().join("data"))
        .unwrap()
        .recall_import(&lines, false)
        .unwrap();
    assert_eq!(report.imported, 2, "{report:?}");
}

/// `tool` called with `v`, as the client receives it.
fn call(f: &Fixture, tool: &str, v: Value) -> (bool, String) {
    let res = match tool {
        "skim" => f.server.skim(args(v).unwrap()),
        "show" => f.server.show(args(v).unwrap()),
        "search" => f.server.search(args(v).unwrap()),
        "recall_query" => f.server.recall_query(args(v).unwrap()),
        _ => unreachable!("{tool}"),
    };
    settled(res).unwrap_or_else(|e| panic!("{tool}: a JSON-RPC error: {}", e.message))
}

/// For each paged tool: a first page that offers a cursor, that cursor taken back by the same
/// query (its arguments reordered and an absent one written as `null`), and refused with
/// other arguments.
#[test]
fn a_cursor_pages_only_the_query_that_returned_it() {
    let f = fixture();
    more_entries(&f);
    let hook = Cairn::open(f._tmp.path().join("data")).unwrap();
    let repo = std::fs::canonicalize(f._tmp.path().join("repo")).unwrap();
    claude_session_with(&hook, &f._tmp.path().join("claude"), "many", &repo, 3);
    let hits = body(
        f.server
            .search(args(json!({"query": "tidy the parser many"})).unwrap()),
    );
    let many = hits["hits"][0]["address"].as_str().unwrap();
    let many_turn = format!("{}?turn=0", many.split('?').next().unwrap());
    let c1 = body(
        f.server
            .search(args(json!({"query": "tidy the parser c1"})).unwrap()),
    );
    let c1_turn = format!(
        "{}?turn=0",
        c1["hits"][0]["address"]
            .as_str()
            .unwrap()
            .split('?')
            .next()
            .unwrap()
    );
    // (tool, first page's arguments, the same written otherwise, another query's)
    let cases = [
        (
            "skim",
            json!({"target": "main", "include_weak": true, "limit": 1}),
            json!({"limit": 1, "agent": null, "include_weak": true, "target": "main"}),
            json!({"target": "main", "include_weak": true, "limit": 1, "agent": "claude"}),
        ),
        (
            "show",
            json!({"address": many_turn, "limit": 1}),
            json!({"limit": 1, "address": many_turn, "turn": null}),
            json!({"address": c1_turn, "limit": 1}),
        ),
        (
            "search",
            json!({"query": "tidy the parser", "limit": 1}),
            json!({"limit": 1, "query": "tidy the parser", "mode": "lexical"}),
            json!({"query": "tidy", "limit": 1}),
        ),
        (
            "recall_query",
            json!({"query": "", "limit": 1}),
            json!({"limit": 1, "query": "", "include_untrusted": false}),
            json!({"query": "deploy", "limit": 1}),
        ),
    ];
    for (tool, first, same, other) in cases {
        let (is_error, text) = call(&f, tool, first.clone());
        assert!(!is_error, "{tool}: {text}");
        let page: Value = serde_json::from_str(&text).unwrap();
        let cursor = page["next_cursor"]
            .as_str()
            .unwrap_or_else(|| panic!("{tool}: no cursor on a first page of one: {page}"))
            .to_owned();

        let mut again = same.clone();
        again["cursor"] = json!(cursor);
        let (is_error, text) = call(&f, tool, again);
        assert!(!is_error, "{tool}: the same query's cursor refused: {text}");
        let next: Value = serde_json::from_str(&text).unwrap();
        let key = ["sessions", "turns", "records", "hits", "entries"]
            .into_iter()
            .find(|k| page.get(k).is_some())
            .unwrap();
        assert!(!next[key].as_array().unwrap().is_empty(), "{tool}: {next}");
        assert_ne!(next[key][0], page[key][0], "{tool}: page 2 repeats page 1");

        let mut foreign = other.clone();
        foreign["cursor"] = json!(cursor);
        let (is_error, text) = call(&f, tool, foreign);
        assert!(is_error, "{tool}: a foreign cursor was taken: {text}");
        assert!(
            text.contains("a cursor belongs to the query that returned it")
                && text.contains("drop `cursor`"),
            "{tool}: {text}"
        );
        // Without the cursor the other query is answered from its first page.
        let (is_error, text) = call(&f, tool, other);
        assert!(!is_error, "{tool}: {text}");
    }
}

/// A cursor as servers before the query digest wrote them (`<tool>.<offset>`), and one of
/// another tool, are refused too: neither says which query it belongs to.
#[test]
fn a_cursor_that_names_no_query_is_refused() {
    let f = fixture();
    for (tool, v) in [
        (
            "search",
            json!({"query": "tidy the parser", "cursor": "search.1"}),
        ),
        (
            "recall_query",
            json!({"query": "", "cursor": "recall_query.10"}),
        ),
        (
            "search",
            json!({"query": "tidy", "cursor": "skim.1.00000000"}),
        ),
    ] {
        let (is_error, text) = call(&f, tool, v.clone());
        assert!(is_error, "{v}: {text}");
        assert!(
            text.contains(&format!("is not one `{tool}` returned")),
            "{text}"
        );
    }
}

//! `cairn search` cut at `--limit`: a person is told there are more and how to see them (it
//! stopped at 20 hits without a word), for hits and for `--sessions`; JSON stays the array of
//! hits CLI.md names, `--limit` of them.

use crate::support::Env;

#[test]
fn a_search_cut_at_its_limit_says_there_are_more() {
    let env = Env::new().with_fixtures();
    env.ok(&["sync"]);
    let all = env.json(&["search", "phoenix", "--limit", "1000"]);
    let total = all.as_array().unwrap().len();
    assert!(total > 3, "{total} hits for phoenix");

    let human = env.ok(&["search", "phoenix", "--limit", "3"]);
    let more = "3 hits shown; more match (--limit 6 shows more).";
    assert_eq!(human.lines().last(), Some(more), "{human}");
    assert_eq!(human.matches(more).count(), 1, "{human}");
    // The hits shown are the first of the whole list, as JSON gives them, `--limit` of them.
    let json = env.json(&["search", "phoenix", "--limit", "3"]);
    assert_eq!(json.as_array().unwrap()[..], all.as_array().unwrap()[..3]);
    // All of them shown: nothing more is said.
    let every = env.ok(&["search", "phoenix", "--limit", &total.to_string()]);
    assert!(!every.contains("more match"), "{every}");

    // Sessions: the same.
    let sessions = env.json(&["search", "--sessions", "phoenix", "--limit", "1000"]);
    let found = sessions.as_array().unwrap().len();
    assert!(found > 1, "{found} sessions for phoenix");
    let human = env.ok(&["search", "--sessions", "phoenix", "--limit", "1"]);
    assert_eq!(
        human.lines().last(),
        Some("1 session shown; more match (--limit 2 shows more)."),
        "{human}"
    );
    let json = env.json(&["search", "--sessions", "phoenix", "--limit", "1"]);
    assert_eq!(json.as_array().unwrap().len(), 1);
    let every = env.ok(&[
        "search",
        "--sessions",
        "phoenix",
        "--limit",
        &found.to_string(),
    ]);
    assert!(!every.contains("more match"), "{every}");
}

//! Search snippets read as the text a person sees: a terminal hyperlink (OSC 8) in a tool's
//! output or in a tool call's input leaves nothing of its escape or its target behind, in the
//! CLI's lines, its JSON and the MCP server's answer alike.

use serde_json::json;

use crate::support::{Env, copy_tree, fixtures, mcp_call};

/// The session of `tests/fixtures/osc8/` (see its SOURCES.md), captured.
fn with_links() -> Env {
    let env = Env::new();
    copy_tree(
        &fixtures().join("osc8/claude"),
        &env.claude().join("-home-marco-projects-spotter"),
    );
    env.ok(&["sync"]);
    env
}

/// What no snippet may show of a hyperlink: its escape, the rest of one, or its target.
fn assert_no_link_left(snippet: &str, what: &str) {
    for left in ["\u{1b}", "8;;", "]8", "file://", "hexdocs.pm", "\\u001b"] {
        assert!(
            !snippet.contains(left),
            "{what}: {left:?} is left in {snippet:?}"
        );
    }
}

/// `word` between the match marks the JSON's snippets carry (private-use characters), then
/// `after`.
fn marked(word: &str, after: &str) -> String {
    format!("\u{e000}{word}\u{e001}{after}")
}

fn only_snippet(env: &Env, word: &str) -> String {
    let v = env.json(&["search", word]);
    let hits = v.as_array().unwrap();
    assert_eq!(hits.len(), 1, "{v}");
    hits[0]["snippet"].as_str().unwrap().to_owned()
}

#[test]
fn a_snippet_cut_inside_a_hyperlinks_target_shows_only_its_text() {
    let env = with_links();
    // The listing's line far down: the index cuts its snippet inside the link's target.
    let snippet = only_snippet(&env, "wombat");
    assert_no_link_left(&snippet, "output");
    assert!(
        snippet.contains(&marked("wombat", "_sync.ex")),
        "{snippet:?}"
    );
    let human = env.ok(&["search", "wombat"]);
    assert_no_link_left(&human, "human output");
    assert!(human.contains("[wombat]_sync.ex"), "{human}");
}

#[test]
fn a_hyperlink_in_a_tool_input_leaves_no_fragment_in_its_snippet() {
    let env = with_links();
    // The Edit's input is stored as JSON, the link's escapes as `\u001b` text.
    let snippet = only_snippet(&env, "quokka");
    assert_no_link_left(&snippet, "tool input");
    assert!(
        snippet.contains(&format!("Spotter {} guide for setup", marked("quokka", ""))),
        "{snippet:?}"
    );
    let human = env.ok(&["search", "quokka"]);
    assert_no_link_left(&human, "human output");
    assert!(
        human.contains("Spotter [quokka] guide for setup"),
        "{human}"
    );
}

#[test]
fn the_mcp_search_shows_the_same_text() {
    let env = with_links();
    for (word, shown) in [
        ("wombat", "**wombat**_sync.ex"),
        ("quokka", "Spotter **quokka** guide"),
    ] {
        let answer = mcp_call(&env, env.root.path(), "search", &json!({"query": word}));
        let hits = answer["hits"]
            .as_array()
            .unwrap_or_else(|| panic!("{answer}"));
        assert_eq!(hits.len(), 1, "{answer}");
        let snippet = hits[0]["snippet"].as_str().unwrap();
        assert_no_link_left(snippet, "mcp");
        assert!(snippet.contains(shown), "{snippet}");
    }
}

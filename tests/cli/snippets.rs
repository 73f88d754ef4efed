//! Search snippets read as the text a person sees: a terminal hyperlink (OSC 8) in a tool's
//! output or in a tool call's input leaves nothing of its escape or its target behind, in the
//! CLI's lines, its JSON and the MCP server's answer alike.

use std::path::Path;

use serde_json::json;

use crate::support::{Env, copy_tree, fixtures};

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

/// The MCP server's answer to one call of `tool` with `arguments`, as an agent reads it:
/// `cairn mcp` over stdio on this environment's archive, started in `dir`.
pub(crate) fn mcp_call(
    env: &Env,
    dir: &Path,
    tool: &str,
    arguments: &serde_json::Value,
) -> serde_json::Value {
    use std::io::{BufRead, BufReader, Write};
    let messages = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "test", "version": "1"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            "name": tool, "arguments": arguments}}),
    ];
    let mut server = env
        .command()
        .arg("mcp")
        .current_dir(dir)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = server.stdin.take().unwrap();
    for m in &messages {
        writeln!(stdin, "{m}").unwrap();
    }
    // Read until the call is answered; a server that never answers fails rather than hangs.
    let stdout = server.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if let Ok(m) = serde_json::from_str::<serde_json::Value>(&line)
                && m["id"] == 2
            {
                let _ = tx.send(m);
                return;
            }
        }
    });
    let answer = rx.recv_timeout(std::time::Duration::from_secs(120));
    drop(stdin);
    let _ = server.kill();
    let _ = server.wait();
    let answer = answer.expect("no answer from the MCP server");
    answer["result"]["content"][0]["text"]
        .as_str()
        .and_then(|t| serde_json::from_str(t).ok())
        .unwrap_or_else(|| panic!("{answer}"))
}

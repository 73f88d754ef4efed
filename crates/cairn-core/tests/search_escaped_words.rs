//! Words after a JSON escape in a tool input are found: the first word of each line of an
//! edit, a written file or a multi-line command (`\nword` in the stored JSON, which the index's
//! tokenizer read as `nword`). The properties run the index's own tokenizer (SQLite's FTS5,
//! `unicode61`) on the stored form and on `indexed_input`'s: the same number of tokens in the
//! same order (the snippets, read back from the stored form by token position, depend on it),
//! and every word of the text findable.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use proptest::prelude::*;
use rusqlite::Connection;
use serde_json::json;

use crate::support::{capture, main_file};
use cairn_core::Cairn;
use cairn_core::archive::Agent;
use cairn_core::archive::store::{MATCH_END, MATCH_START, indexed_input, indexed_text};
use cairn_core::views::search::SearchQuery;

const SESSION: &str = "0e5ca9ed-1111-4222-8333-444455556666";

fn transcript(cwd: &str) -> String {
    let line = |n: u32, message: serde_json::Value| {
        json!({"type": if n.is_multiple_of(2) { "user" } else { "assistant" }, "sessionId": SESSION,
            "uuid": format!("u{n}"), "timestamp": format!("2026-11-20T10:00:0{n}Z"), "cwd": cwd,
            "message": message})
        .to_string()
            + "\n"
    };
    let call = |id: &str, name: &str, input: serde_json::Value| {
        json!({"id": format!("m-{id}"), "role": "assistant", "model": "claude-x",
            "content": [{"type": "tool_use", "id": id, "name": name, "input": input}]})
    };
    line(
        0,
        json!({"role": "user", "content": "tidy the parser in C:\\bin\\nightly"}),
    ) + &line(
        1,
        call(
            "t1",
            "Edit",
            json!({"file_path": format!("{cwd}/parse.py"),
                "old_string": "def parse(x):\n    return x",
                "new_string": "def parse(x):\n\tquokkaline = strip(x)\n    return quokkaline"}),
        ),
    ) + &line(
        3,
        call(
            "t2",
            "Write",
            json!({"file_path": format!("{cwd}/NOTES.md"),
                "content": "# Notes\n\nzanzibarword starts a line\r\nwombatcrlf too\n"}),
        ),
    ) + &line(
        5,
        call(
            "t3",
            "Bash",
            json!({"command": "cd /tmp &&\nnumbatcmd --all", "description": "run it"}),
        ),
    )
}

fn hits(cairn: &Cairn, text: &str) -> Vec<(u32, String)> {
    cairn
        .search(&SearchQuery {
            text: text.into(),
            limit: Some(20),
            ..SearchQuery::default()
        })
        .unwrap()
        .into_iter()
        .map(|h| (h.ordinal, h.snippet))
        .collect()
}

#[test]
fn the_first_word_of_each_line_of_a_tool_input_is_found_and_marked() {
    let data = tempfile::tempdir().unwrap();
    let src = tempfile::tempdir().unwrap();
    let path = src.path().join(format!("{SESSION}.jsonl"));
    std::fs::write(&path, transcript("/tmp/shop")).unwrap();
    let cairn = Cairn::open(data.path()).unwrap();
    capture(&cairn, &[main_file(Agent::Claude, &path)]);

    for word in [
        "quokkaline",
        "zanzibarword",
        "wombatcrlf",
        "numbatcmd",
        "return",
    ] {
        let found = hits(&cairn, word);
        assert!(!found.is_empty(), "{word} is not found");
        for (ordinal, snippet) in &found {
            assert!(
                snippet.contains(&format!("{MATCH_START}{word}{MATCH_END}")),
                "{word} at {ordinal} is not marked as itself: {snippet:?}"
            );
        }
    }
    // A tool input reads as its members, not as JSON: `command: … · description: …`.
    let cmd = hits(&cairn, "numbatcmd");
    assert!(
        cmd.iter().any(|(_, s)| s
            == &format!(
                "command: cd /tmp && {MATCH_START}numbatcmd{MATCH_END} --all · description: run it"
            )),
        "{cmd:?}"
    );
    // In a record's text a backslash is text: the word after it is marked whole.
    let bin = hits(&cairn, "bin");
    assert!(
        bin.iter()
            .any(|(_, s)| s.contains(&format!(r"C:\{MATCH_START}bin{MATCH_END}\nightly"))),
        "{bin:?}"
    );
    // The session search reads the same index.
    let sessions = cairn
        .search_sessions(&SearchQuery {
            text: "zanzibarword".into(),
            ..SearchQuery::default()
        })
        .unwrap()
        .sessions;
    assert_eq!(sessions.len(), 1);

    // Taking the session out takes its rows out of the index as they were put in: FTS5's own
    // check of the index finds nothing wrong, and nothing is found any more.
    let key = sessions[0].session_key.clone();
    cairn
        .forget(&cairn_core::ForgetRequest {
            session: Some(key),
            ..Default::default()
        })
        .unwrap();
    assert!(hits(&cairn, "zanzibarword").is_empty());
    let conn = Connection::open(data.path().join("cairn.db")).unwrap();
    conn.execute(
        "INSERT INTO records_fts (records_fts, rank) VALUES ('integrity-check', 0)",
        [],
    )
    .unwrap();
    let ok: String = conn
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    assert_eq!(ok, "ok");
}

/// The tokens FTS5's `unicode61` (as `records_fts` configures it) makes of `text`, in order.
fn tokens(conn: &Connection, text: &str) -> Vec<String> {
    conn.execute("DELETE FROM t", []).unwrap();
    conn.execute("INSERT INTO t (x) VALUES (?1)", [text])
        .unwrap();
    let mut stmt = conn
        .prepare_cached("SELECT term FROM v ORDER BY offset")
        .unwrap();
    stmt.query_map([], |r| r.get(0))
        .unwrap()
        .collect::<rusqlite::Result<_>>()
        .unwrap()
}

fn tokenizer() -> Connection {
    let conn = Connection::open_in_memory().unwrap();
    conn.execute_batch(
        "CREATE VIRTUAL TABLE t USING fts5(x, tokenize = 'unicode61 remove_diacritics 2');
         CREATE VIRTUAL TABLE v USING fts5vocab(t, instance);",
    )
    .unwrap();
    conn
}

/// Text of words, whitespace and control characters, punctuation, quotes and backslashes, and
/// letters outside ASCII (one a combining mark, one a spacing mark the tokenizer splits at).
fn text() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        "[a-zA-Z0-9]{1,8}",
        Just("\n".to_owned()),
        Just("\n\n".to_owned()),
        Just("\t".to_owned()),
        Just("\r\n".to_owned()),
        Just("\u{8}".to_owned()),
        Just("\u{c}".to_owned()),
        Just("\u{1b}[2J".to_owned()),
        Just("\0".to_owned()),
        Just(" ".to_owned()),
        Just("\\".to_owned()),
        Just("\\n".to_owned()),
        Just("\"".to_owned()),
        Just("/".to_owned()),
        Just("u00e9".to_owned()),
        Just("é".to_owned()),
        Just("e\u{301}".to_owned()),
        Just("\u{903}".to_owned()),
        Just("😀".to_owned()),
        Just("_-=+.,:;".to_owned()),
    ];
    prop::collection::vec(piece, 0..24).prop_map(|p| p.concat())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(crate::support::proptest_cases(512)))]

    /// A string as a tool input stores it (JSON), and any text at all: the indexed form splits
    /// into the same number of tokens, each the stored one's or its tail (the escape's letters
    /// dropped), and is as long.
    #[test]
    fn the_indexed_form_splits_like_the_stored_text(s in text()) {
        let conn = tokenizer();
        for stored in [serde_json::to_string(&s).unwrap(), s.clone()] {
            let indexed = indexed_input(&stored);
            prop_assert_eq!(indexed.len(), stored.len());
            let (a, b) = (tokens(&conn, &stored), tokens(&conn, &indexed));
            prop_assert_eq!(a.len(), b.len(), "{:?} -> {:?}: {:?} / {:?}", stored, indexed, a, b);
            for (x, y) in a.iter().zip(&b) {
                prop_assert!(x.ends_with(y.as_str()), "{:?} / {:?} in {:?}", x, y, stored);
            }
        }
    }

    /// Every ASCII word of the text (not glued to a letter outside ASCII) is a token of the
    /// indexed form of the JSON that stores it: it can be searched for.
    #[test]
    fn every_word_of_a_stored_string_is_a_token(s in text()) {
        let conn = tokenizer();
        let stored = serde_json::to_string(&s).unwrap();
        let found = tokens(&conn, &indexed_input(&stored));
        let chars: Vec<char> = s.chars().collect();
        let mut i = 0;
        while i < chars.len() {
            if !chars[i].is_ascii_alphanumeric() {
                i += 1;
                continue;
            }
            let start = i;
            while i < chars.len() && chars[i].is_ascii_alphanumeric() {
                i += 1;
            }
            let glued = |c: Option<&char>| c.is_some_and(|c| !c.is_ascii() && c.is_alphanumeric() || *c == '\u{301}');
            if glued(start.checked_sub(1).and_then(|p| chars.get(p))) || glued(chars.get(i)) {
                continue;
            }
            let word: String = chars[start..i].iter().collect::<String>().to_lowercase();
            prop_assert!(found.contains(&word), "{:?} not in {:?} (stored {:?})", word, found, stored);
        }
    }

    /// Any text with terminal escape sequences (colours, cursor moves, glued to words or not):
    /// its indexed form splits into the same number of tokens, each the stored one's or its
    /// tail, and is as long.
    #[test]
    fn the_indexed_text_splits_like_the_stored_text(s in coloured()) {
        let conn = tokenizer();
        let indexed = indexed_text(&s);
        prop_assert_eq!(indexed.len(), s.len());
        let (a, b) = (tokens(&conn, &s), tokens(&conn, &indexed));
        prop_assert_eq!(a.len(), b.len(), "{:?} -> {:?}: {:?} / {:?}", s, indexed, a, b);
        for (x, y) in a.iter().zip(&b) {
            prop_assert!(x.ends_with(y.as_str()), "{:?} / {:?} in {:?}", x, y, s);
        }
    }

    /// Every ASCII word right after an escape sequence is a token of the indexed text.
    #[test]
    fn a_word_after_an_escape_is_a_token(before in text(), csi in csi(), word in "[a-zA-Z][a-zA-Z0-9]{0,7}") {
        let conn = tokenizer();
        let s = format!("{before} {csi}{word} done");
        let found = tokens(&conn, &indexed_text(&s));
        prop_assert!(found.contains(&word.to_lowercase()), "{:?} not in {:?} ({:?})", word, found, s);
    }
}

/// A CSI escape sequence: colours (`ESC[1;31m`), cursor moves (`ESC[2K`), private modes
/// (`ESC[?25l`), with intermediates, or none at all.
fn csi() -> impl Strategy<Value = String> {
    ("[0-9;:?<=>]{0,8}", "[ !#]{0,1}", "[@A-Za-z`~]")
        .prop_map(|(p, i, f)| format!("\u{1b}[{p}{i}{f}"))
}

/// [`text`] with escape sequences among its pieces, glued to words or not.
fn coloured() -> impl Strategy<Value = String> {
    prop::collection::vec(prop_oneof![text(), csi(), Just("\u{1b}".to_owned())], 0..12)
        .prop_map(|p| p.concat())
}

/// Coloured output, as test runners and compilers print it, is found by its words: the colour's
/// code is not glued to the word in the index. The snippet marks the word; forgetting the
/// session leaves the index whole.
#[test]
fn a_word_after_a_colour_code_is_found() {
    let data = tempfile::tempdir().unwrap();
    let src = tempfile::tempdir().unwrap();
    let path = src.path().join(format!("{SESSION}.jsonl"));
    let line = |n: u32, role: &str, text: &str| {
        json!({"type": role, "sessionId": SESSION, "uuid": format!("c{n}"),
            "timestamp": format!("2026-11-20T10:00:0{n}Z"), "cwd": "/tmp/shop",
            "message": {"role": role, "content": [{"type": "text", "text": text}]}})
        .to_string()
            + "\n"
    };
    std::fs::write(
        &path,
        line(0, "user", "run the tests")
            + &line(
                1,
                "assistant",
                "Kept model as \u{1b}[1mDefault\u{1b}[22m; \u{1b}[32mPASSEDTESTS\u{1b}[0m src/a.rs \u{1b}[1;31mFAILEDTEST\u{1b}[0m",
            ),
    )
    .unwrap();
    let cairn = Cairn::open(data.path()).unwrap();
    capture(&cairn, &[main_file(Agent::Claude, &path)]);
    for word in ["Default", "PASSEDTESTS", "FAILEDTEST"] {
        let found = hits(&cairn, word);
        assert!(!found.is_empty(), "{word} is not found");
        // The word is marked, the colour's sequence whole before the mark (a reader's
        // cleaning removes it), not broken open by it.
        for (_, snippet) in &found {
            let shown = cairn_core::text::printable(snippet);
            assert!(
                shown.contains(&format!("{MATCH_START}{word}{MATCH_END}")),
                "{word}: {snippet:?} reads {shown:?}"
            );
        }
    }
    assert!(!hits(&cairn, "\"Kept model as Default\"").is_empty());
    let key = cairn
        .search_sessions(&SearchQuery {
            text: "PASSEDTESTS".into(),
            ..SearchQuery::default()
        })
        .unwrap()
        .sessions[0]
        .session_key
        .clone();
    cairn
        .forget(&cairn_core::ForgetRequest {
            session: Some(key),
            ..Default::default()
        })
        .unwrap();
    assert!(hits(&cairn, "PASSEDTESTS").is_empty());
    let conn = Connection::open(data.path().join("cairn.db")).unwrap();
    conn.execute(
        "INSERT INTO records_fts (records_fts, rank) VALUES ('integrity-check', 0)",
        [],
    )
    .unwrap();
}

/// An archive indexed before migration 41 (coloured text indexed as stored) is indexed again
/// as search reads it: the word is found and the index is whole.
#[test]
fn migration_41_indexes_coloured_text_again() {
    let data = tempfile::tempdir().unwrap();
    let src = tempfile::tempdir().unwrap();
    let path = src.path().join(format!("{SESSION}.jsonl"));
    let line = json!({"type": "user", "sessionId": SESSION, "uuid": "m0",
        "timestamp": "2026-11-20T10:00:00Z", "cwd": "/tmp/shop",
        "message": {"role": "user", "content": "see \u{1b}[32mGREENWORD\u{1b}[0m here"}})
    .to_string()
        + "\n";
    std::fs::write(&path, line).unwrap();
    {
        let cairn = Cairn::open(data.path()).unwrap();
        capture(&cairn, &[main_file(Agent::Claude, &path)]);
        assert!(!hits(&cairn, "GREENWORD").is_empty());
    }
    // As an older Cairn left it: the text indexed as stored, the schema one step back.
    {
        let conn = Connection::open(data.path().join("cairn.db")).unwrap();
        let rows: Vec<(i64, String, Option<String>)> = conn
            .prepare("SELECT id, text, tool_input FROM records WHERE instr(text, char(27)) > 0")
            .unwrap()
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap();
        assert!(!rows.is_empty());
        for (id, text, input) in rows {
            let input = input.as_deref().map(indexed_input);
            conn.execute(
                "INSERT INTO records_fts (records_fts, rowid, text, tool_input) VALUES ('delete', ?1, ?2, ?3)",
                rusqlite::params![id, indexed_text(&text), input],
            )
            .unwrap();
            conn.execute(
                "INSERT INTO records_fts (rowid, text, tool_input) VALUES (?1, ?2, ?3)",
                rusqlite::params![id, text, input],
            )
            .unwrap();
        }
        conn.pragma_update(None, "user_version", 40).unwrap();
        let found: i64 = conn
            .query_row(
                "SELECT count(*) FROM records_fts WHERE records_fts MATCH 'GREENWORD'",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(found, 0, "the older index finds it already");
    }
    let cairn = Cairn::open(data.path()).unwrap();
    assert!(!hits(&cairn, "GREENWORD").is_empty());
    let conn = Connection::open(data.path().join("cairn.db")).unwrap();
    conn.execute(
        "INSERT INTO records_fts (records_fts, rank) VALUES ('integrity-check', 0)",
        [],
    )
    .unwrap();
}

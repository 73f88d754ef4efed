//! Aider chat histories: golden over the real history (`tests/fixtures/aider/`, see SOURCES.md),
//! discovery of `.aider.chat.history.md` in repositories, hostile lines never fatal, and blocks
//! that grow line by line stored once and updated in place.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use std::io::Write as _;
use std::path::Path;

use cairn_core::Cairn;
use cairn_core::archive::Agent;
use cairn_core::archive::capture::Quiet;
use cairn_core::views::sessions::SessionQuery;
use serde_json::json;

/// (kind, source event kind, text) of every record, in order.
fn records(data: &Path) -> Vec<(String, String, String)> {
    let conn = rusqlite::Connection::open(data.join("cairn.db")).unwrap();
    let mut stmt = conn
        .prepare("SELECT kind, source_event_kind, coalesce(text, '') FROM records ORDER BY session_id, ordinal")
        .unwrap();
    stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

#[test]
fn aider_fixture_history_is_pinned() {
    let data = tempfile::tempdir().unwrap();
    let cairn = Cairn::open(data.path()).unwrap();
    let files = support::found(Agent::Aider, &support::fixtures().join("aider"));
    assert_eq!(files.len(), 1, "{files:?}");
    let report = cairn.capture_paths(&files, &Quiet).unwrap();
    assert!(report.warnings.is_empty(), "{:?}", report.warnings);
    let mut sessions = Vec::new();
    for s in cairn.sessions(&SessionQuery::default()).unwrap() {
        let d = cairn.session(&s.session_key).unwrap();
        sessions.push(json!({
            "model": d.model, "turns": d.turn_count, "records": d.record_count, "kinds": d.kinds,
            "tools": d.tools, "edited_paths": d.edited_paths, "unknown_types": d.unknown_types,
            "first_prompt": s.first_prompt,
            "cwd_is_repo": d.cwd.as_deref().is_some_and(|c| c.ends_with("Aquaticat-Monochromatic")),
        }));
    }
    let all = records(data.path());
    let chats = all.iter().filter(|r| r.1 == "aider:chat_started").count();
    let source = std::fs::read_to_string(files[0].path.clone()).unwrap();
    assert_eq!(
        chats,
        source
            .lines()
            .filter(|l| l.starts_with("# aider chat started at "))
            .count(),
        "one event per chat header"
    );
    let heads: Vec<String> = all
        .iter()
        .take(40)
        .map(|(k, e, t)| format!("{k} {e} {}", t.lines().next().unwrap_or("")))
        .collect();
    support::assert_ordinals_dense(data.path());
    insta::assert_json_snapshot!(
        "aider",
        json!({"sessions": sessions, "chats": chats, "first_records": heads})
    );

    let before = support::dump(data.path());
    let again = cairn.capture_paths(&files, &Quiet).unwrap();
    assert_eq!((again.records_added, again.records_updated), (0, 0));
    assert_eq!(support::dump(data.path()), before);
}

/// A reply written line by line is one record, updated in place as it grows: no record per
/// line, and capturing after every line ends where one read of the whole file ends.
#[test]
fn a_growing_block_is_one_record_updated_in_place() {
    let src = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let path = src.path().join(".aider.chat.history.md");
    let cairn = Cairn::open(data.path()).unwrap();
    let file = support::main_file(Agent::Aider, &path);
    let lines = [
        "# aider chat started at 2025-06-02 11:47:49",
        "#### add a test",
        "Sure, here it is:",
        "",
        "```rust",
        "fn t() {}",
        "```",
        "> Applied edit to src/lib.rs  ",
        "> Commit 1a2b3c4 test: add t  ",
        "> Tokens: 2.3k sent, 120 received. Cost: $0.01 message, $0.02 session.  ",
        "#### thanks",
    ];
    let mut f = std::fs::File::create(&path).unwrap();
    let mut updated = 0;
    for l in lines {
        writeln!(f, "{l}").unwrap();
        updated += support::capture(&cairn, std::slice::from_ref(&file)).records_updated;
    }
    assert!(updated > 0, "the reply grew in place");
    let got = records(data.path());
    let kinds: Vec<(&str, &str)> = got
        .iter()
        .map(|(k, e, _)| (k.as_str(), e.as_str()))
        .collect();
    assert_eq!(
        kinds,
        [
            ("event", "aider:chat_started"),
            ("message", "aider:user"),
            ("message", "aider:assistant"),
            ("event", "aider:output"),
            ("tool_call", "aider:output:applied_edit"),
            ("message", "aider:user"),
        ]
    );
    assert_eq!(got[2].2, "Sure, here it is:\n```rust\nfn t() {}\n```");
    assert!(
        got[3]
            .2
            .starts_with("Applied edit to src/lib.rs\nCommit 1a2b3c4")
    );

    let whole = tempfile::tempdir().unwrap();
    let one = Cairn::open(whole.path()).unwrap();
    support::capture(&one, &[file]);
    assert_eq!(records(whole.path()), got);
}

/// Control sequences, a huge line, headers with nothing after them, a header cut mid-line and
/// bytes that are not UTF-8: read, never fatal, nothing past the caps.
#[test]
fn hostile_lines_are_never_fatal() {
    let src = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let repo = src.path().join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    let path = repo.join(".aider.chat.history.md");
    let mut body: Vec<u8> = Vec::new();
    body.extend_from_slice(b"# aider chat started at \x1b]52;c;cGF5bG9hZA==\x07\x1b[2J\n");
    body.extend_from_slice(b"# aider chat started at\n# aider chat started at \n");
    body.extend_from_slice(b"#### \x1b[31mred\x1b[0m \xe2\x80\xae prompt\n");
    body.extend_from_slice(b"> \xff\xfe not utf-8\n");
    body.extend_from_slice(b"> Tokens: 99999999999999999999k sent, -5 received\n");
    body.extend_from_slice(b"> Applied edit to \n");
    // Aider ends every quoted message with two spaces; the reply after it is the model's.
    body.extend_from_slice(b"####\n>  \n");
    body.extend_from_slice(format!("{}\n", "x".repeat(3 << 20)).as_bytes());
    body.extend_from_slice(format!("> {}\n", "y".repeat(1 << 20)).as_bytes());
    body.extend_from_slice(b"# aider chat started at 2025-06-02 11:4");
    std::fs::write(&path, &body).unwrap();
    let cairn = Cairn::open(data.path()).unwrap();
    let files = support::found(Agent::Aider, src.path());
    assert_eq!(files.len(), 1);
    support::capture(&cairn, &files);
    let got = records(data.path());
    assert_eq!(
        got.iter().filter(|r| r.1 == "aider:chat_started").count(),
        3,
        "the cut header is left for the next read"
    );
    assert!(got.iter().all(|r| r.2.len() <= 64 * 1024), "capped");
    assert!(
        got.iter()
            .any(|r| r.1 == "aider:assistant" && r.2.ends_with("[… truncated …]"))
    );
    assert!(
        !got.iter().any(|r| r.1 == "aider:output:applied_edit"),
        "an edit with no path is none"
    );
    // The cut header completes on the next append.
    std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap()
        .write_all(b"9:00\n")
        .unwrap();
    support::capture(&cairn, &files);
    assert_eq!(
        records(data.path())
            .iter()
            .filter(|r| r.1 == "aider:chat_started")
            .count(),
        4
    );
}

/// Histories are found at repository roots under the named folders, never inside a
/// repository's hidden, build or dependency trees, and a named history file is read itself.
#[test]
fn discovery_finds_histories_in_repositories_only() {
    let root = tempfile::tempdir().unwrap();
    let put = |rel: &str| {
        let p = root.path().join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, "#### hi\n").unwrap();
        p
    };
    let a = put("a/.aider.chat.history.md");
    let b = put("org/b/.aider.chat.history.md");
    put("a/node_modules/x/.aider.chat.history.md");
    put("a/.git/.aider.chat.history.md");
    put("a/notes.md");
    put("a/history.jsonl");
    put("deep/er/than/three/.aider.chat.history.md");
    let paths: Vec<_> = support::found(Agent::Aider, root.path())
        .into_iter()
        .map(|f| f.path)
        .collect();
    assert_eq!(paths, [a.clone(), b]);
    assert_eq!(
        support::found(Agent::Aider, &a).len(),
        1,
        "a history named directly"
    );
}

/// A record stored by one capture and grown by two lines in the next is updated once (the block
/// is emitted when the read ends, not per line), in place in the full-text index too: the index
/// stays whole and finds the final text, not the first.
#[test]
fn a_record_grown_by_the_next_capture_keeps_the_index_whole() {
    let src = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let path = src.path().join(".aider.chat.history.md");
    std::fs::write(&path, "#### explain\nfirst line\n").unwrap();
    let cairn = Cairn::open(data.path()).unwrap();
    let file = support::main_file(Agent::Aider, &path);
    support::capture(&cairn, std::slice::from_ref(&file));
    std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap()
        .write_all(b"second line\nthird zanzibar line\n")
        .unwrap();
    let again = support::capture(&cairn, std::slice::from_ref(&file));
    assert_eq!((again.records_added, again.records_updated), (0, 1));
    let conn = rusqlite::Connection::open(data.path().join("cairn.db")).unwrap();
    conn.execute(
        "INSERT INTO records_fts (records_fts) VALUES ('integrity-check')",
        [],
    )
    .unwrap();
    let hits: i64 = conn
        .query_row(
            "SELECT count(*) FROM records_fts WHERE records_fts MATCH 'zanzibar'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(hits, 1);
}

/// A last line cut where its start happens to be JSON (`42`) is still a partial write: it is
/// read once its newline arrives, whole, from where the last read stopped.
#[test]
fn a_cut_line_that_looks_like_json_waits_for_its_newline() {
    let src = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let path = src.path().join(".aider.chat.history.md");
    std::fs::write(&path, "> done  \n42").unwrap();
    let cairn = Cairn::open(data.path()).unwrap();
    let file = support::main_file(Agent::Aider, &path);
    support::capture(&cairn, std::slice::from_ref(&file));
    std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap()
        .write_all(b" files changed?\n")
        .unwrap();
    support::capture(&cairn, std::slice::from_ref(&file));
    let got = records(data.path());
    assert_eq!(got.len(), 2, "{got:?}");
    assert_eq!(got[1].2, "42 files changed?");
    let conn = rusqlite::Connection::open(data.path().join("cairn.db")).unwrap();
    let generation: i64 = conn
        .query_row("SELECT generation FROM sources", [], |r| r.get(0))
        .unwrap();
    assert_eq!(generation, 0, "resumed, not read again as a rewritten file");
}

/// An append is read from where the last read stopped, not from the start as if the file had
/// been rewritten: also when the file opens with a blank line (Aider's does) or ends its lines
/// with CRLF (Aider on Windows).
#[test]
fn appends_resume_after_a_leading_blank_line_and_crlf() {
    for (head, tail) in [
        (
            "\n# aider chat started at 2025-06-02 11:47:49\n#### one\n",
            "> done\n",
        ),
        (
            "# aider chat started at 2025-06-02 11:47:49\r\n#### one\r\n",
            "> done\r\n",
        ),
    ] {
        let src = tempfile::tempdir().unwrap();
        let data = tempfile::tempdir().unwrap();
        let path = src.path().join(".aider.chat.history.md");
        std::fs::write(&path, head).unwrap();
        let cairn = Cairn::open(data.path()).unwrap();
        let file = support::main_file(Agent::Aider, &path);
        support::capture(&cairn, std::slice::from_ref(&file));
        std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap()
            .write_all(tail.as_bytes())
            .unwrap();
        let again = support::capture(&cairn, std::slice::from_ref(&file));
        assert_eq!(again.records_added, 1, "{head:?}");
        let conn = rusqlite::Connection::open(data.path().join("cairn.db")).unwrap();
        let generation: i64 = conn
            .query_row("SELECT generation FROM sources", [], |r| r.get(0))
            .unwrap();
        assert_eq!(generation, 0, "not read again from the start: {head:?}");
    }
}

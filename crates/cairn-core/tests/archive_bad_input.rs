//! Bad input gets a clear warning that names the file and line, and loses nothing else.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use std::io::Write;

use cairn_core::Cairn;
use cairn_core::archive::Agent;
use cairn_core::views::sessions::SessionQuery;

fn claude_line(i: usize, text: &str) -> String {
    serde_json::json!({
        "type": "user", "sessionId": "bad-input-session", "uuid": format!("u{i}"),
        "timestamp": format!("2026-01-01T00:00:{:02}.000Z", i % 60),
        "cwd": "/work/repo", "gitBranch": "main",
        "message": {"role": "user", "content": text}
    })
    .to_string()
}

fn records(data: &std::path::Path) -> i64 {
    let conn = rusqlite::Connection::open(data.join("cairn.db")).unwrap();
    conn.query_row("SELECT COUNT(*) FROM records", [], |r| r.get(0))
        .unwrap()
}

/// `text` written as a Claude transcript and captured once.
struct Captured {
    _src: tempfile::TempDir,
    data: tempfile::TempDir,
    cairn: Cairn,
    file: cairn_core::archive::discover::FoundFile,
    report: cairn_core::archive::capture::SyncReport,
}

impl Captured {
    fn new(text: &str) -> Captured {
        let src = tempfile::tempdir().unwrap();
        let data = tempfile::tempdir().unwrap();
        let path = src.path().join("s.jsonl");
        std::fs::write(&path, text).unwrap();
        let cairn = Cairn::open(data.path()).unwrap();
        let file = support::main_file(Agent::Claude, &path);
        let report = support::capture(&cairn, std::slice::from_ref(&file));
        Captured {
            _src: src,
            data,
            cairn,
            file,
            report,
        }
    }

    /// Capture the file again: nothing new must come of it.
    fn again_adds_nothing(&self) {
        let again = support::capture(&self.cairn, std::slice::from_ref(&self.file));
        assert_eq!((again.records_added, again.records_updated), (0, 0));
    }
}

/// Every record's text, in order.
fn record_texts(data: &std::path::Path) -> Vec<String> {
    let conn = rusqlite::Connection::open(data.join("cairn.db")).unwrap();
    conn.prepare("SELECT text FROM records ORDER BY ordinal")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

/// A tool's name is the transcript's: a huge one, or one with control characters, is stored as
/// one printable line of at most 128 characters (then an ellipsis), in the record, the turn's
/// tools and the session's tally; a short one as it is.
#[test]
fn a_tool_name_is_stored_as_one_bounded_printable_line() {
    let call = |i: usize, name: &str| {
        serde_json::json!({
            "type": "assistant", "sessionId": "bad-input-session", "uuid": format!("a{i}"),
            "timestamp": "2026-01-01T00:00:01.000Z", "cwd": "/work/repo",
            "message": {"id": format!("m{i}"), "role": "assistant", "content": [
                {"type": "tool_use", "id": format!("t{i}"), "name": name, "input": {}}]}
        })
        .to_string()
    };
    let huge = "n".repeat(100_000);
    let text = [
        claude_line(0, "go"),
        call(1, &huge),
        call(2, "evil\u{1b}[2J\nname"),
        call(3, "mcp__server__tool"),
    ]
    .join("\n")
        + "\n";
    let c = Captured::new(&text);
    let conn = rusqlite::Connection::open(c.data.path().join("cairn.db")).unwrap();
    let names: Vec<String> = conn
        .prepare("SELECT tool_name FROM records WHERE tool_name IS NOT NULL ORDER BY ordinal")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(names.len(), 3, "{names:?}");
    assert_eq!(names[0], format!("{}…", "n".repeat(128)));
    assert!(!names[1].chars().any(char::is_control), "{:?}", names[1]);
    assert_eq!(names[2], "mcp__server__tool");
    let tools: String = conn
        .query_row("SELECT tool_names FROM turns", [], |r| r.get(0))
        .unwrap();
    assert!(tools.len() < 1_000, "{tools}");
    let session = c.cairn.sessions(&SessionQuery::default()).unwrap();
    let detail = c.cairn.session(&session[0].session_key).unwrap();
    assert!(
        detail.tools.keys().all(|k| k.chars().count() <= 129),
        "{:?}",
        detail.tools.keys()
    );
    c.again_adds_nothing();
}

#[test]
fn a_malformed_middle_line_is_a_warning_and_the_rest_is_kept() {
    let src = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let path = src.path().join("s.jsonl");
    let text = format!(
        "{}\n{{\"type\": \"user\", broken\n{}\n",
        claude_line(0, "first"),
        claude_line(2, "third")
    );
    std::fs::write(&path, text).unwrap();
    let cairn = Cairn::open(data.path()).unwrap();
    let report = support::capture(&cairn, &[support::main_file(Agent::Claude, &path)]);
    assert_eq!(report.records_added, 2);
    assert_eq!(report.warnings.len(), 1);
    let w = &report.warnings[0];
    assert!(
        w.path.ends_with("s.jsonl") && w.line == Some(2) && w.message.contains("malformed JSON"),
        "{w:?}"
    );
    // The warning is on the session too, and is not repeated by a re-sync.
    let s = &cairn.sessions(&SessionQuery::default()).unwrap()[0];
    assert_eq!(s.warnings, 1);
    let again = support::capture(&cairn, &[support::main_file(Agent::Claude, &path)]);
    assert!(again.warnings.is_empty());
    assert_eq!(cairn.session(&s.session_key).unwrap().warnings.len(), 1);
}

/// A line that is JSON but no record (an array serde would read as a record field by field,
/// a user line whose message is null or a list) is a warning that says what it was, and the
/// lines around it are read.
#[test]
fn a_line_of_another_json_shape_is_a_warning_that_says_so() {
    let src = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let path = src.path().join("s.jsonl");
    let user = |message: &str| {
        format!(
            "{{\"type\":\"user\",\"uuid\":\"m{}\",\"sessionId\":\"bad-shapes\",\"timestamp\":\"2026-01-01T00:00:00Z\",\"message\":{message}}}",
            message.len()
        )
    };
    let text = [
        claude_line(0, "first"),
        r#"["user","2026-01-01T00:00:00Z"]"#.to_owned(),
        "42".to_owned(),
        user("null"),
        user(r#"["user","hello"]"#),
        claude_line(5, "last"),
    ]
    .join("\n")
        + "\n";
    std::fs::write(&path, text).unwrap();
    let cairn = Cairn::open(data.path()).unwrap();
    let report = support::capture(&cairn, &[support::main_file(Agent::Claude, &path)]);
    assert_eq!(report.records_added, 2, "{:?}", report.warnings);
    let said: Vec<(Option<u32>, &str)> = report
        .warnings
        .iter()
        .map(|w| (w.line, w.message.as_str()))
        .collect();
    assert_eq!(said.len(), 4, "{said:?}");
    assert!(
        said[0].1.contains("a JSON array, not an object"),
        "{said:?}"
    );
    assert!(
        said[1].1.contains("a JSON number, not an object"),
        "{said:?}"
    );
    assert!(said[2].1.contains("without a message object"), "{said:?}");
    assert!(said[3].1.contains("without a message object"), "{said:?}");
    assert!(
        said.iter().all(|(_, m)| !m.contains("RFC 3339")),
        "{said:?}"
    );
}

#[test]
fn a_truncated_last_line_is_skipped_now_and_ingested_when_complete() {
    let src = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let path = src.path().join("s.jsonl");
    let second = claude_line(1, "second, still being written");
    let (head, tail) = second.split_at(second.len() / 2);
    std::fs::write(&path, format!("{}\n{head}", claude_line(0, "first"))).unwrap();
    let cairn = Cairn::open(data.path()).unwrap();
    let file = support::main_file(Agent::Claude, &path);
    let r1 = support::capture(&cairn, std::slice::from_ref(&file));
    assert_eq!((r1.records_added, r1.warnings.len()), (1, 0));
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap();
    writeln!(f, "{tail}").unwrap();
    let r2 = support::capture(&cairn, std::slice::from_ref(&file));
    assert_eq!((r2.records_added, r2.warnings.len()), (1, 0));
    assert_eq!(records(data.path()), 2);
}

#[test]
fn invalid_utf8_is_replaced_and_warned() {
    let src = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let path = src.path().join("s.jsonl");
    let mut bytes = claude_line(0, "caf\u{e9} ok").into_bytes();
    bytes.push(b'\n');
    let mut bad = claude_line(1, "bad XX byte").into_bytes();
    let pos = bad.windows(2).position(|w| w == b"XX").unwrap();
    bad[pos] = 0xff;
    bytes.extend_from_slice(&bad);
    bytes.push(b'\n');
    std::fs::write(&path, bytes).unwrap();
    let cairn = Cairn::open(data.path()).unwrap();
    let report = support::capture(&cairn, &[support::main_file(Agent::Claude, &path)]);
    assert_eq!(report.records_added, 2);
    assert!(
        report
            .warnings
            .iter()
            .any(|w| w.line == Some(2) && w.message.contains("UTF-8")),
        "{:?}",
        report.warnings
    );
}

#[test]
fn empty_files_huge_lines_and_unreadable_paths_are_warnings() {
    let src = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let empty = src.path().join("empty.jsonl");
    std::fs::write(&empty, "").unwrap();
    let huge = src.path().join("huge.jsonl");
    let big_text = "x".repeat(10 * 1024 * 1024);
    std::fs::write(
        &huge,
        format!(
            "{}\n{}\n",
            claude_line(0, &big_text),
            claude_line(1, "after the big one")
        ),
    )
    .unwrap();
    let dangling = src.path().join("gone.jsonl");
    #[cfg(unix)]
    std::os::unix::fs::symlink(src.path().join("does-not-exist"), &dangling).unwrap();
    let good = src.path().join("good.jsonl");
    std::fs::write(&good, format!("{}\n", claude_line(0, "fine"))).unwrap();
    let cairn = Cairn::open(data.path()).unwrap();
    let files: Vec<_> = [&empty, &huge, &dangling, &good]
        .iter()
        .map(|p| support::main_file(Agent::Claude, p))
        .collect();
    let report = support::capture(&cairn, &files);
    let names: Vec<_> = report
        .warnings
        .iter()
        .map(|w| {
            (
                w.path.rsplit('/').next().unwrap().to_owned(),
                w.message.clone(),
            )
        })
        .collect();
    assert!(
        names
            .iter()
            .any(|(p, m)| p == "empty.jsonl" && m.contains("empty")),
        "{names:?}"
    );
    assert!(
        names
            .iter()
            .any(|(p, m)| p == "gone.jsonl" && m.contains("cannot read")),
        "{names:?}"
    );
    // The 10 MB line is under the limit: stored (text capped in the index), nothing lost.
    assert_eq!(report.records_added, 3);
}

/// An empty transcript (an agent opened a session and wrote nothing) is said at the sync that
/// first finds it, not at every sync after: nothing in it can be read or mended. It is said
/// again when it is made anew after it was gone, and read as any file once it has content.
#[test]
fn an_empty_file_is_said_once_until_it_is_gone_or_read() {
    let src = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let cairn = Cairn::open(data.path()).unwrap();
    let empty = src.path().join("empty.jsonl");
    let later = src.path().join("later.jsonl");
    std::fs::write(&empty, "").unwrap();
    std::fs::write(&later, "").unwrap();
    let files = |paths: &[&std::path::PathBuf]| -> Vec<_> {
        paths
            .iter()
            .map(|p| support::main_file(Agent::Claude, p))
            .collect()
    };
    let said = |report: &cairn_core::archive::capture::SyncReport| -> Vec<String> {
        report
            .warnings
            .iter()
            .map(|w| format!("{} {}", w.path.rsplit('/').next().unwrap(), w.message))
            .collect()
    };
    let both = files(&[&empty, &later]);
    let first = support::capture(&cairn, &both);
    assert_eq!(
        said(&first),
        [
            "empty.jsonl empty file skipped",
            "later.jsonl empty file skipped"
        ]
    );
    assert!(said(&support::capture(&cairn, &both)).is_empty());
    assert!(said(&support::capture(&cairn, &both)).is_empty());

    // One gets its first line; the other goes and comes back empty.
    std::fs::write(&later, format!("{}\n", claude_line(0, "now it speaks"))).unwrap();
    std::fs::remove_file(&empty).unwrap();
    let filled = support::capture(&cairn, &files(&[&later]));
    assert!(said(&filled).is_empty(), "{:?}", said(&filled));
    assert_eq!(filled.records_added, 1);
    std::fs::write(&empty, "").unwrap();
    assert_eq!(
        said(&support::capture(&cairn, &both)),
        ["empty.jsonl empty file skipped"]
    );
    assert!(said(&support::capture(&cairn, &both)).is_empty());
    // Remembered without a session, it is not counted among the sessions' parse warnings.
    let doctor = cairn.doctor();
    let archive = doctor.checks.iter().find(|c| c.name == "archive").unwrap();
    assert!(
        archive.detail.contains("0 parse warnings"),
        "{}",
        archive.detail
    );
}

/// Claude Code cuts long tool output inside an emoji's surrogate pair and writes the half it
/// kept as `\ud83d` (known upstream; other readers of these files met it too). serde_json
/// refuses such a line, so the record was kept only in the retained copy: a user's prompt or a
/// tool's output lost from search and show. The half reads as U+FFFD; the line is stored as
/// written, so a re-sync finds nothing new; a secret beside it is redacted as anywhere.
#[test]
fn a_lone_surrogate_escape_reads_as_the_replacement_character() {
    let secret = "ghp_EXAMPLE00000000000000000000000000000";
    let lines = [
        claude_line(0, "first"),
        claude_line(1, &format!("cut at HIGH, key {secret}")),
        claude_line(2, "ends LOW"),
        claude_line(3, "escaped \\ud83d stays text"),
    ];
    // As a JavaScript writer escapes the half of a pair it kept.
    let text = format!("{}\n", lines.join("\n"))
        .replace("HIGH", "\\ud83d")
        .replace("LOW", "\\ude00");
    let c = Captured::new(&text);
    assert_eq!(
        (c.report.records_added, c.report.warnings.len()),
        (4, 0),
        "{:?}",
        c.report
    );
    let texts = record_texts(c.data.path());
    assert_eq!(
        texts[1..],
        [
            "cut at \u{fffd}, key [REDACTED:github-pat]".to_owned(),
            "ends \u{fffd}".to_owned(),
            "escaped \\ud83d stays text".to_owned()
        ]
    );
    c.again_adds_nothing();
}

/// A write cut off by a crash leaves a line without its end, and the agent's next append goes
/// on the same line (or after NUL bytes the crash left): the whole record after the cut was
/// skipped with it. It is read now, with a warning naming the line; the cut one stays in the
/// retained copy only, and a re-sync reads nothing twice.
#[test]
fn a_whole_record_after_one_an_interrupted_write_cut_is_read() {
    let cut = claude_line(1, "this one was cut");
    let text = format!(
        "{}\n{}{}\n{}{}\n",
        claude_line(0, "first"),
        &cut[..cut.len() / 2],
        claude_line(2, "after the cut"),
        "\0".repeat(512),
        claude_line(3, "after the zeros"),
    );
    let c = Captured::new(&text);
    let report = &c.report;
    assert_eq!(report.records_added, 3, "{report:?}");
    let lines: Vec<_> = report.warnings.iter().map(|w| w.line).collect();
    assert_eq!(lines, [Some(2), Some(3)], "{report:?}");
    assert!(
        report.warnings[0]
            .message
            .contains("cut off by an interrupted write")
            && report.warnings[1].message.contains("512 NUL bytes"),
        "{report:?}"
    );
    let texts = record_texts(c.data.path());
    assert_eq!(texts, ["first", "after the cut", "after the zeros"]);
    c.again_adds_nothing();
}

/// A transcript saved with a byte-order mark (an editor's save, files joined) has each line
/// read whole: the first one was skipped as malformed, or read with a warning of a cut.
#[test]
fn a_byte_order_mark_before_a_line_is_no_warning() {
    let c = Captured::new(&format!(
        "\u{feff}{}\n\u{feff}{}\n",
        claude_line(0, "first"),
        claude_line(1, "joined")
    ));
    let report = &c.report;
    assert_eq!(
        (report.records_added, report.warnings.len()),
        (2, 0),
        "{report:?}"
    );
}

/// Ids that repeat in a session (an agent numbering its calls per message or per run, or a
/// transcript written to mislead): a result is its own call's, the call of its id stored last
/// before it. A failed result takes only its own call's edit out of `why`, and names only its
/// own call's input.
#[test]
fn a_repeated_call_id_pairs_each_result_with_its_own_call() {
    use cairn_core::archive::store as archive;
    let line = |i: usize, role: &str, content: serde_json::Value| {
        serde_json::json!({
            "type": role, "sessionId": "repeated-ids", "uuid": format!("u{i}"),
            "timestamp": format!("2026-01-01T00:00:{i:02}.000Z"), "cwd": "/work/repo",
            "message": {"role": role, "content": content}
        })
        .to_string()
    };
    let call = |i: usize, name: &str, input: serde_json::Value| {
        line(
            i,
            "assistant",
            serde_json::json!([{"type": "tool_use", "id": "call_0", "name": name, "input": input}]),
        )
    };
    let result = |i: usize, text: &str, failed: bool| {
        line(
            i,
            "user",
            serde_json::json!([{"type": "tool_result", "tool_use_id": "call_0", "content": text, "is_error": failed}]),
        )
    };
    let edit =
        |path: &str| serde_json::json!({"file_path": path, "old_string": "a", "new_string": "b"});
    let text = [
        line(0, "user", serde_json::json!("fix both files")),
        call(1, "Edit", edit("/work/repo/kept.rs")),
        result(2, "The file has been updated.", false),
        call(3, "Bash", serde_json::json!({"command": "cargo test"})),
        result(4, "test failed", true),
        call(5, "Edit", edit("/work/repo/refused.rs")),
        result(6, "File has not been read yet.", true),
    ]
    .join("\n");
    let c = Captured::new(&text);
    let conn = rusqlite::Connection::open(c.data.path().join("cairn.db")).unwrap();
    let session: i64 = conn
        .query_row("SELECT id FROM sessions", [], |r| r.get(0))
        .unwrap();
    let ordinal = |kind: &str, nth: i64| -> i64 {
        conn.query_row(
            "SELECT ordinal FROM records WHERE kind = ?1 ORDER BY ordinal LIMIT 1 OFFSET ?2",
            rusqlite::params![kind, nth],
            |r| r.get(0),
        )
        .unwrap()
    };

    let edits: Vec<String> = archive::edit_records(&conn, &[session])
        .unwrap()
        .into_iter()
        .flat_map(|e| e.record.file_paths)
        .collect();
    assert_eq!(edits, ["/work/repo/kept.rs"]);

    let failed: Vec<(String, String)> = archive::failed_results(&conn, session)
        .unwrap()
        .into_iter()
        .map(|f| (f.tool_input.unwrap_or_default(), f.text.unwrap_or_default()))
        .collect();
    assert_eq!(failed.len(), 2, "{failed:?}");
    assert!(
        failed[0].0.contains("cargo test") && failed[0].1 == "test failed",
        "{failed:?}"
    );
    assert!(
        failed[1].0.contains("refused.rs") && failed[1].1.contains("not been read"),
        "{failed:?}"
    );

    // Each call's results, as association reads them: its own, whichever window it is asked.
    let texts = |call: i64, after: i64| -> Vec<String> {
        archive::tool_results(&conn, session, "call_0", call, after, i64::MAX)
            .unwrap()
            .into_iter()
            .map(|r| r.text.unwrap_or_default())
            .collect()
    };
    assert_eq!(
        texts(ordinal("tool_call", 0), i64::MIN),
        ["The file has been updated."]
    );
    assert_eq!(texts(ordinal("tool_call", 1), i64::MIN), ["test failed"]);
    assert_eq!(
        texts(ordinal("tool_call", 2), i64::MIN),
        ["File has not been read yet."]
    );
    // A call read before `after` (waiting for its result then): the results since, up to the
    // next call of its id.
    assert_eq!(
        texts(ordinal("tool_call", 1), ordinal("tool_call", 1)),
        ["test failed"]
    );
}

/// Turn the first byte of `word` in column `col` of the row of `table` that `filter` picks into
/// 0xFF, as an agent's writer that stores bytes unchecked would. SQLite keeps such text as text
/// (and its `json_valid` passes it).
fn spoil(db: &std::path::Path, table: &str, col: &str, filter: &str, word: &str) {
    let conn = rusqlite::Connection::open(db).unwrap();
    let (rowid, mut bytes): (i64, Vec<u8>) = conn
        .query_row(
            &format!(
                "SELECT rowid, CAST({col} AS BLOB) FROM {table} WHERE {filter} AND instr({col}, ?1)"
            ),
            [word],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    let at = memchr::memmem::find(&bytes, word.as_bytes()).unwrap();
    bytes[at] = 0xff;
    let changed = conn
        .execute(
            &format!("UPDATE {table} SET {col} = CAST(?1 AS TEXT) WHERE rowid = ?2"),
            rusqlite::params![bytes, rowid],
        )
        .unwrap();
    assert_eq!(changed, 1);
}

/// A byte that is not UTF-8 in an agent's database column is read as U+FFFD, as in a line,
/// with a warning naming the message; the next sync, with nothing moved, says nothing again.
/// Before, OpenCode and Crush read it without a word, Cursor's editor read its message as not
/// JSON (its text lost) and kiro-cli never read a new turn of the conversation again.
#[test]
fn a_byte_that_is_not_utf8_in_a_database_column_is_read_as_a_replacement() {
    use support::agent_dbs::{cursor_ide_store, kiro_database};
    use support::opencode_db::{Db, T0};
    struct Case {
        agent: Agent,
        /// Builds the agent's database under the folder and spoils one column; gives the
        /// folder discovery looks in.
        build: fn(&std::path::Path) -> std::path::PathBuf,
        /// The unit the warning names, and the text its record reads as.
        unit: &'static str,
        text: &'static str,
    }
    let cases = [
        Case {
            agent: Agent::Opencode,
            build: |root| {
                let db = Db::create(&root.join("opencode.db"));
                db.session("ses_1", None, "One");
                db.message("msg_1", "ses_1", T0, &serde_json::json!({"role": "user"}));
                db.part(
                    "prt_1",
                    "msg_1",
                    "ses_1",
                    T0,
                    &serde_json::json!({"type": "text", "text": "fix the log"}),
                );
                spoil(&root.join("opencode.db"), "part", "data", "1", "log");
                root.to_owned()
            },
            unit: "msg_1",
            text: "fix the \u{fffd}og",
        },
        Case {
            agent: Agent::Opencode,
            build: |root| {
                let db = Db::create_v2(&root.join("opencode.db"));
                db.session_v2("ses_2", None, "Two");
                db.message_v2(
                    "msg_2",
                    "ses_2",
                    1,
                    "user",
                    T0,
                    &serde_json::json!({"text": "fix the test"}),
                );
                spoil(
                    &root.join("opencode.db"),
                    "session_message",
                    "data",
                    "1",
                    "test",
                );
                root.to_owned()
            },
            unit: "msg_2",
            text: "fix the \u{fffd}est",
        },
        Case {
            agent: Agent::Crush,
            build: |root| {
                let db = support::copy_into(
                    &support::fixtures().join("crush/Starmel-OpenSuperWhisper/.crush/crush.db"),
                    root,
                    "p/.crush/crush.db",
                );
                spoil(
                    &db,
                    "messages",
                    "parts",
                    "id = '22598f50-f263-40dc-97ea-1990f0339cd4'",
                    "analyze",
                );
                root.to_owned()
            },
            unit: "22598f50-f263-40dc-97ea-1990f0339cd4",
            text: "Please \u{fffd}nalyze this codebase",
        },
        Case {
            agent: Agent::Kiro,
            build: |root| {
                let db = kiro_database(root);
                spoil(
                    &db,
                    "conversations_v2",
                    "value",
                    "conversation_id = 'overlap-session'",
                    "should win",
                );
                root.join("kiro-cli")
            },
            unit: "assistant-overlap",
            text: "Current store \u{fffd}hould win",
        },
        Case {
            agent: Agent::Cursor,
            build: |root| {
                let db = cursor_ide_store(root);
                spoil(
                    &db,
                    "cursorDiskKV",
                    "value",
                    "key LIKE 'bubbleId:c-agent:%'",
                    "parser test fails",
                );
                root.join("User/globalStorage")
            },
            unit: "b1",
            text: "The \u{fffd}arser test fails",
        },
    ];
    for case in cases {
        let src = tempfile::tempdir().unwrap();
        let data = tempfile::tempdir().unwrap();
        let dir = (case.build)(src.path());
        let cairn = Cairn::open(data.path()).unwrap();
        let files = support::found(case.agent, &dir);
        let r = support::capture(&cairn, &files);
        let said: Vec<&str> = r.warnings.iter().map(|w| w.message.as_str()).collect();
        assert_eq!(said.len(), 1, "{}: {said:?}", case.agent);
        assert!(
            said[0].starts_with(&format!("message {}", case.unit))
                && said[0].ends_with(": invalid UTF-8 replaced with U+FFFD"),
            "{}: {said:?}",
            case.agent
        );
        assert!(
            support::live_records(data.path())
                .iter()
                .any(|r| r.3.contains(case.text)),
            "{}: no record reads {:?}",
            case.agent,
            case.text
        );
        let again = support::capture(&cairn, &files);
        assert!(again.warnings.is_empty(), "{:?}", again.warnings);
        assert_eq!((again.records_added, again.records_updated), (0, 0));
    }
}

//! Hostile transcripts: a 100 MB line, JSON nested 100,000 deep, NUL bytes and lone surrogates,
//! and a file rewritten while it is being read. Each must end in a warning or a clean capture,
//! never an error or a crash, and never lose what was stored before.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};

use cairn_core::Cairn;
use cairn_core::archive::Agent;
use cairn_core::archive::capture::Quiet;

fn claude_line(i: usize, text: &str) -> String {
    serde_json::json!({
        "type": "user", "uuid": format!("u{i}"), "parentUuid": null, "sessionId": "hostile-1",
        "timestamp": format!("2026-01-01T00:00:{:02}Z", i % 60), "cwd": "/tmp/p",
        "message": {"role": "user", "content": text}
    })
    .to_string()
}

fn texts(data: &std::path::Path) -> Vec<String> {
    let conn = rusqlite::Connection::open(data.join("cairn.db")).unwrap();
    let mut stmt = conn
        .prepare("SELECT coalesce(text, '') FROM records ORDER BY line_no, block")
        .unwrap();
    stmt.query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

/// Peak resident memory of this process so far (Linux), for the report line only: other tests
/// share the process, so it is printed, not asserted.
fn peak_rss_mb() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb / 1024)
}

#[test]
fn a_100_mb_line_is_skipped_with_a_warning_and_its_neighbours_kept() {
    let src = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let path = src.path().join("big.jsonl");
    {
        let mut f = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
        writeln!(f, "{}", claude_line(0, "before the big one")).unwrap();
        // Generated here, never committed: a 100 MB JSON line, streamed to disk.
        let head = claude_line(1, "@@");
        let (pre, post) = head.split_once("@@").unwrap();
        f.write_all(pre.as_bytes()).unwrap();
        let block = vec![b'x'; 1 << 20];
        for _ in 0..100 {
            f.write_all(&block).unwrap();
        }
        writeln!(f, "{post}").unwrap();
        writeln!(f, "{}", claude_line(2, "after the big one")).unwrap();
    }
    let cairn = Cairn::open(data.path()).unwrap();
    let report = support::capture(&cairn, &[support::main_file(Agent::Claude, &path)]);
    assert!(
        report
            .warnings
            .iter()
            .any(|w| w.path.ends_with("big.jsonl") && w.line == Some(2)),
        "no warning names line 2: {:?}",
        report.warnings
    );
    assert_eq!(
        texts(data.path()),
        ["before the big one", "after the big one"]
    );
    // A second pass resumes after the skipped line and adds nothing.
    let again = support::capture(&cairn, &[support::main_file(Agent::Claude, &path)]);
    assert_eq!(again.records_added, 0);
    eprintln!("peak RSS after the 100 MB line: {:?} MB", peak_rss_mb());
    // Read again from the retained copy alone, the lines after the skipped one keep their
    // numbers (the copy holds a place for it).
    let captured = support::dump(data.path());
    drop(src);
    let r = cairn
        .reindex(&cairn_core::ReindexRequest::default(), &Quiet)
        .unwrap();
    assert_eq!((r.sessions, r.records_changed), (1, 0), "{r:?}");
    assert_eq!(support::dump(data.path()), captured);
}

#[test]
fn deep_nesting_nul_bytes_and_lone_surrogates_are_warnings_or_stored() {
    let src = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let path = src.path().join("odd.jsonl");
    let deep = format!(
        "{{\"type\":\"user\",\"message\":{}{}}}",
        "[".repeat(100_000),
        "]".repeat(100_000)
    );
    let lines = [
        claude_line(0, "first"),
        deep,
        "{\"type\":\"user\",\"x\":".to_owned() + &"{\"a\":".repeat(50_000),
        claude_line(3, "nul \u{0} inside \u{0}\u{0} a string"),
        // A raw NUL byte in the middle of the line (not valid JSON).
        format!("{}\0{}", claude_line(4, "raw"), "tail"),
        // A lone surrogate escape: JSON's grammar takes it, no Unicode scalar is it; read as
        // U+FFFD (`archive_bad_input::a_lone_surrogate_escape_…`).
        claude_line(5, "@@").replace("@@", "lone \\ud800 surrogate"),
        // Deep nesting where the adapter and the redactor look: message content.
        format!(
            "{{\"type\":\"user\",\"message\":{{\"role\":\"user\",\"content\":{}\"ghp_x\"{}}}}}",
            "[".repeat(100_000),
            "]".repeat(100_000)
        ),
        claude_line(7, "last"),
    ];
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    let cairn = Cairn::open(data.path()).unwrap();
    let report = support::capture(&cairn, &[support::main_file(Agent::Claude, &path)]);
    let stored = texts(data.path());
    assert!(stored.contains(&"first".to_owned()), "{stored:?}");
    assert!(stored.contains(&"last".to_owned()), "{stored:?}");
    assert!(
        stored.iter().any(|t| t.starts_with("nul ")),
        "the escaped-NUL line was lost: {stored:?}"
    );
    let warned: Vec<_> = report.warnings.iter().filter_map(|w| w.line).collect();
    assert!(
        stored.contains(&"lone \u{fffd} surrogate".to_owned()),
        "{stored:?}"
    );
    // Unterminated nesting and a raw NUL: each named by its 1-based line.
    for line in [3, 5] {
        assert!(
            warned.contains(&line),
            "line {line} neither stored nor warned: {:?}",
            report.warnings
        );
    }
    // Line 2 is valid JSON, 100,000 arrays deep: no record, no crash, and the retained copy
    // still holds every complete line.
    let retained = cairn_core::archive::retain::Retained::new(data.path());
    let copies: Vec<_> = walk(&data.path().join("retained"));
    assert_eq!(copies.len(), 1, "{copies:?}");
    let kept = retained.read(&copies[0], 1).unwrap();
    assert_eq!(kept.len(), lines.len(), "the retained copy lost lines");
    // The search index took the NUL text without breaking.
    let hits = cairn
        .search(&cairn_core::views::search::SearchQuery {
            text: "inside".into(),
            ..Default::default()
        })
        .unwrap();
    assert!(!hits.is_empty());
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        if e.path().is_dir() {
            out.extend(walk(&e.path()));
        } else {
            out.push(e.path());
        }
    }
    out
}

#[test]
fn a_file_rewritten_while_read_keeps_what_was_stored() {
    let content =
        std::fs::read_to_string(support::fixtures().join("claude/tool_heavy.jsonl")).unwrap();
    let lines: Vec<&str> = content.lines().collect();
    let src = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let path = src.path().join("projects/p/s.jsonl");
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, &content).unwrap();
    let cairn = Cairn::open(data.path()).unwrap();
    support::capture(&cairn, &[support::main_file(Agent::Claude, &path)]);
    let before = texts(data.path());
    assert!(!before.is_empty());

    // A writer that truncates the file, rewrites part of it, appends half lines, and finally
    // restores the full content, while captures run against it.
    let writing = AtomicBool::new(true);
    std::thread::scope(|s| {
        s.spawn(|| {
            for round in 0..30 {
                let keep = (round * 7) % lines.len();
                let mut f = std::fs::File::create(&path).unwrap();
                for line in &lines[..keep] {
                    writeln!(f, "{line}").unwrap();
                }
                let next = lines[keep];
                f.write_all(&next.as_bytes()[..next.len() / 2]).unwrap();
                f.flush().unwrap();
                std::thread::sleep(std::time::Duration::from_millis(2));
            }
            std::fs::write(&path, &content).unwrap();
            writing.store(false, Ordering::SeqCst);
        });
        s.spawn(|| {
            let cairn = Cairn::open(data.path()).unwrap();
            while writing.load(Ordering::SeqCst) {
                cairn
                    .capture_paths(&[support::main_file(Agent::Claude, &path)], &Quiet)
                    .unwrap();
            }
        });
    });
    support::capture(&cairn, &[support::main_file(Agent::Claude, &path)]);
    let after = texts(data.path());
    for t in &before {
        assert!(after.contains(t), "a stored record was lost: {t:?}");
    }
    support::assert_ordinals_dense(data.path());
}

/// A usage count past `i64::MAX` is kept at the store's cap (as an ATIF import caps it), not
/// wrapped into a negative number that reads back as no usage at all.
#[test]
fn a_huge_token_count_is_capped_not_wrapped() {
    let data = tempfile::tempdir().unwrap();
    let src = tempfile::tempdir().unwrap();
    let file = src.path().join("huge-usage.jsonl");
    let assistant = serde_json::json!({
        "type": "assistant", "uuid": "a1", "parentUuid": "u0", "sessionId": "hostile-1",
        "timestamp": "2026-01-01T00:00:01Z", "cwd": "/tmp/p",
        "message": {"id": "m1", "role": "assistant", "content": [{"type": "text", "text": "done"}],
                    "usage": {"input_tokens": u64::MAX, "output_tokens": 7}}
    });
    std::fs::write(&file, format!("{}\n{assistant}\n", claude_line(0, "count"))).unwrap();
    let cairn = Cairn::open(data.path()).unwrap();
    support::capture(&cairn, &[support::main_file(Agent::Claude, &file)]);
    let key = support::session_keys(data.path(), "id").remove(0);
    let tokens = cairn.session(&key).unwrap().tokens;
    assert_eq!(
        (tokens.input, tokens.output),
        (cairn_core::archive::sources::atif::MAX_TOKENS, 7)
    );
}

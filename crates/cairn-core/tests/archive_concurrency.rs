//! Concurrent captures of one transcript (hooks from several processes, a sync running at the
//! same time) neither lose nor duplicate a record: the end state equals a one-shot capture.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};

use cairn_core::Cairn;
use cairn_core::archive::Agent;
use cairn_core::archive::capture::Quiet;

/// The reference: a Claude transcript of `content` captured once, dumped.
fn one_shot(content: &str) -> String {
    let src = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let path = src.path().join("projects/p/sess.jsonl");
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, content).unwrap();
    support::capture(
        &Cairn::open(data.path()).unwrap(),
        &[support::main_file(Agent::Claude, &path)],
    );
    dumped(data.path(), src.path())
}

/// The archive in `data` dumped, the transcripts' folder `src` written `<src>`.
fn dumped(data: &std::path::Path, src: &std::path::Path) -> String {
    let src = std::fs::canonicalize(src).unwrap();
    support::dump(data).replace(&src.display().to_string(), "<src>")
}

#[test]
fn concurrent_hooks_and_a_sync_neither_lose_nor_duplicate() {
    let content =
        std::fs::read_to_string(support::fixtures().join("claude/subagent.jsonl")).unwrap();
    let lines: Vec<&str> = content.lines().collect();

    let expected = one_shot(&content);

    let src = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let path = src.path().join("projects/p/sess.jsonl");
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    support::read_from(data.path(), Agent::Claude, src.path());
    std::fs::write(&path, "").unwrap();
    let hook_input = serde_json::json!({"transcript_path": path, "cwd": src.path()}).to_string();
    let writing = AtomicBool::new(true);

    std::thread::scope(|s| {
        // The agent appends its transcript line by line.
        s.spawn(|| {
            let mut f = std::fs::OpenOptions::new()
                .append(true)
                .open(&path)
                .unwrap();
            for line in &lines {
                writeln!(f, "{line}").unwrap();
                f.flush().unwrap();
                std::thread::sleep(std::time::Duration::from_micros(300));
            }
            writing.store(false, Ordering::SeqCst);
        });
        // Four hook processes (each its own connection), firing as fast as they can.
        for _ in 0..4 {
            s.spawn(|| {
                let cairn = Cairn::open(data.path()).unwrap();
                while writing.load(Ordering::SeqCst) {
                    cairn
                        .hook(&hook_input, Some(Agent::Claude), src.path())
                        .unwrap();
                }
                cairn
                    .hook(&hook_input, Some(Agent::Claude), src.path())
                    .unwrap();
            });
        }
        // And a sync over the same directory.
        s.spawn(|| {
            let cairn = Cairn::open(data.path()).unwrap();
            while writing.load(Ordering::SeqCst) {
                let files = vec![support::main_file(Agent::Claude, &path)];
                cairn.capture_paths(&files, &Quiet).unwrap();
            }
        });
    });
    let cairn = Cairn::open(data.path()).unwrap();
    cairn
        .hook(&hook_input, Some(Agent::Claude), src.path())
        .unwrap();
    let got = dumped(data.path(), src.path());
    assert_eq!(got, expected);
    support::assert_ordinals_dense(data.path());
}

/// Reindexes running while the agent writes and hooks capture (each its own connection): no
/// record is lost or duplicated; the end state equals a one-shot capture.
#[test]
fn reindexes_while_hooks_capture_neither_lose_nor_duplicate() {
    let content =
        std::fs::read_to_string(support::fixtures().join("claude/subagent.jsonl")).unwrap();
    let lines: Vec<&str> = content.lines().collect();
    let expected = one_shot(&content);

    let src = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let path = src.path().join("projects/p/sess.jsonl");
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    support::read_from(data.path(), Agent::Claude, src.path());
    // A first part captured, so the reindexes have a session to read from the start.
    std::fs::write(&path, lines[..5].join("\n") + "\n").unwrap();
    let hook_input = serde_json::json!({"transcript_path": path, "cwd": src.path()}).to_string();
    Cairn::open(data.path())
        .unwrap()
        .hook(&hook_input, Some(Agent::Claude), src.path())
        .unwrap();
    let writing = AtomicBool::new(true);
    let reindexes = std::sync::atomic::AtomicUsize::new(0);
    std::thread::scope(|s| {
        s.spawn(|| {
            let mut f = std::fs::OpenOptions::new()
                .append(true)
                .open(&path)
                .unwrap();
            for line in &lines[5..] {
                writeln!(f, "{line}").unwrap();
                f.flush().unwrap();
                std::thread::sleep(std::time::Duration::from_micros(500));
            }
            writing.store(false, Ordering::SeqCst);
        });
        for _ in 0..2 {
            s.spawn(|| {
                let cairn = Cairn::open(data.path()).unwrap();
                while writing.load(Ordering::SeqCst) {
                    cairn
                        .hook(&hook_input, Some(Agent::Claude), src.path())
                        .unwrap();
                }
            });
        }
        for _ in 0..2 {
            s.spawn(|| {
                let cairn = Cairn::open(data.path()).unwrap();
                while writing.load(Ordering::SeqCst) {
                    let r = cairn
                        .reindex(&cairn_core::ReindexRequest::default(), &Quiet)
                        .unwrap();
                    assert!(r.skipped.is_empty(), "{r:?}");
                    reindexes.fetch_add(1, Ordering::SeqCst);
                }
            });
        }
    });
    assert!(
        reindexes.load(Ordering::SeqCst) > 0,
        "no reindex ran meanwhile"
    );
    let cairn = Cairn::open(data.path()).unwrap();
    cairn
        .hook(&hook_input, Some(Agent::Claude), src.path())
        .unwrap();
    // And one more after the last line: the copies hold every line the hooks read.
    cairn
        .reindex(&cairn_core::ReindexRequest::default(), &Quiet)
        .unwrap();
    let got = dumped(data.path(), src.path());
    assert_eq!(got, expected);
    support::assert_ordinals_dense(data.path());
}

//! Private by default (issue 14): the data dir is its owner's alone, whatever the umask, and an
//! archive an older Cairn left open to other users is tightened when it is next opened.
//!
//! Every test in this binary runs under umask 000, the widest there is, so nothing Cairn creates
//! can owe its privacy to the umask. (The umask belongs to the process; each test sets the same.)
#![cfg(unix)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use cairn_core::Cairn;
use cairn_core::archive::Agent;
use cairn_core::archive::capture::Quiet;
use cairn_core::doctor::Status;

const TRANSCRIPT: &str = "ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl";

fn umask_000() {
    rustix::process::umask(rustix::fs::Mode::empty());
}

/// Every entry under `dir` (itself included) as `(relative path, mode, is_dir)`, sorted.
fn modes(dir: &Path) -> Vec<(String, u32, bool)> {
    walkdir::WalkDir::new(dir)
        .sort_by_file_name()
        .into_iter()
        .map(|e| {
            let e = e.unwrap();
            let meta = std::fs::symlink_metadata(e.path()).unwrap();
            let rel = e.path().strip_prefix(dir).unwrap().display().to_string();
            (rel, meta.permissions().mode() & 0o7777, meta.is_dir())
        })
        .collect()
}

/// An archive in `root/nested/data` (missing until Cairn creates it) with the Claude fixture
/// synced from `root/claude`, captured again through the hook, and a config written through the
/// settings API: every kind of file Cairn writes there.
fn busy_archive(root: &Path) -> (PathBuf, Cairn) {
    let data = root.join("nested/data");
    let src = root.join("claude");
    let fixtures = support::fixtures().join("claude");
    for entry in walkdir::WalkDir::new(&fixtures) {
        let entry = entry.unwrap();
        let rel = entry.path().strip_prefix(&fixtures).unwrap();
        if entry.path().extension().is_some_and(|e| e == "jsonl") {
            support::copy_into(
                entry.path(),
                &src,
                &format!("-home-USER-p/{}", rel.display()),
            );
        }
    }
    let transcript = src.join("-home-USER-p").join(TRANSCRIPT);
    let cairn = Cairn::open(&data).unwrap();
    cairn
        .set_source_dirs(Agent::Claude, vec![src.display().to_string()])
        .unwrap();
    drop(cairn);
    let cairn = Cairn::open(&data).unwrap();
    let report = cairn
        .sync(&cairn_core::SyncOptions::default(), &Quiet)
        .unwrap();
    assert!(report.records_added > 0, "{report:?}");
    let payload = serde_json::json!({"transcript_path": transcript, "cwd": root});
    cairn
        .hook(&payload.to_string(), Some(Agent::Claude), root)
        .unwrap()
        .unwrap();
    (data, cairn)
}

#[test]
fn everything_cairn_writes_in_a_fresh_data_dir_is_private() {
    umask_000();
    let root = tempfile::tempdir().unwrap();
    let (data, cairn) = busy_archive(root.path());
    // While the archive is open, so the WAL and the shared-memory index exist.
    let listed = modes(&data);
    let names: Vec<&str> = listed.iter().map(|(n, _, _)| n.as_str()).collect();
    for expected in [
        "",
        "cairn.db",
        "cairn.db-wal",
        "cairn.db-shm",
        "config.toml",
        "capture.lock",
        "retained",
        "retained/claude",
    ] {
        assert!(names.contains(&expected), "{expected:?} missing: {names:?}");
    }
    assert!(names.iter().any(|n| n.ends_with(".jsonl.zst")), "{names:?}");
    for (name, mode, is_dir) in &listed {
        let want = if *is_dir { 0o700 } else { 0o600 };
        assert_eq!(*mode, want, "{name:?} is {mode:o}");
    }
    let report = cairn.doctor();
    let check = report
        .checks
        .iter()
        .find(|c| c.name == "data dir permissions")
        .unwrap();
    assert_eq!(check.status, Status::Ok, "{check:?}");
}

#[test]
fn an_archive_left_open_to_others_is_tightened_when_opened_for_writing() {
    umask_000();
    let root = tempfile::tempdir().unwrap();
    let (data, cairn) = busy_archive(root.path());
    drop(cairn);
    // What an older Cairn left under umask 022 (and one file made read-only by hand).
    for (name, _, is_dir) in modes(&data) {
        let mode = if is_dir { 0o755 } else { 0o644 };
        std::fs::set_permissions(data.join(&name), std::fs::Permissions::from_mode(mode)).unwrap();
    }
    std::fs::set_permissions(
        data.join("config.toml"),
        std::fs::Permissions::from_mode(0o444),
    )
    .unwrap();
    let outside = root.path().join("outside.txt");
    std::fs::write(&outside, "not Cairn's").unwrap();
    std::fs::set_permissions(&outside, std::fs::Permissions::from_mode(0o644)).unwrap();
    std::os::unix::fs::symlink(&outside, data.join("link")).unwrap();

    let cairn = Cairn::open(&data).unwrap();
    assert!(!cairn.is_read_only());
    for (name, mode, is_dir) in modes(&data) {
        let want = match (is_dir, name.as_str()) {
            (true, _) => 0o700,
            (false, "config.toml") => 0o400,
            (false, "link") => continue,
            (false, _) => 0o600,
        };
        assert_eq!(mode, want, "{name:?} is {mode:o}");
    }
    // A symlink is never followed: its target keeps its mode.
    let outside_mode = std::fs::metadata(&outside).unwrap().permissions().mode() & 0o777;
    assert_eq!(outside_mode, 0o644);
}

#[test]
fn doctor_names_what_others_can_read_and_the_fix() {
    umask_000();
    let root = tempfile::tempdir().unwrap();
    let (data, cairn) = busy_archive(root.path());
    // Opened to others after the open (a backup tool restoring with its own modes, say).
    std::fs::set_permissions(
        data.join("cairn.db"),
        std::fs::Permissions::from_mode(0o644),
    )
    .unwrap();
    std::fs::set_permissions(&data, std::fs::Permissions::from_mode(0o755)).unwrap();
    let report = cairn.doctor();
    let check = report
        .checks
        .iter()
        .find(|c| c.name == "data dir permissions")
        .unwrap();
    assert_eq!(check.status, Status::Warn, "{check:?}");
    let db = data.join("cairn.db").display().to_string();
    assert!(
        check.detail.contains(&format!("{db} (mode 644)")),
        "{}",
        check.detail
    );
    assert!(
        check
            .detail
            .contains(&format!("chmod -R go-rwx '{}'", data.display())),
        "{}",
        check.detail
    );
    assert_eq!(report.worst(), Status::Warn);
}

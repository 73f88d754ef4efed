//! The manifest a retained copy opens with (`archive::retain::Manifest`) holds only what the
//! archive keeps at rest: when a reindex redacts the rows a manifest was made from (a secret
//! an older build let into a source's path or a session's facts), the copies' manifests are
//! written again from the rows; a manifest that holds a secret anyway (an older build's, a
//! forged one) gives a rebuild none to store. Migration 47 appends a manifest where a copy's
//! whole frames end, never after a frame a crash cut off.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};

use cairn_core::archive::Agent;
use cairn_core::archive::capture::Quiet;
use cairn_core::archive::retain::Retained;
use cairn_core::{Cairn, ReindexRequest};
use rusqlite::Connection;

use crate::reindex::copy_tree;
use crate::support;

/// A GitHub token's shape, which the rules find definite (so a folder named after it is kept
/// sealed), and an AWS key id for a session's title.
const TOKEN: &str = "ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8";
const AWS_KEY: &str = "AKIAZ7Q4N2M8K3T6W1XR";

/// The skippable frame magic of a copy's manifest.
const MANIFEST_MAGIC: [u8; 4] = 0x184D_2A5Du32.to_le_bytes();

/// The retained copies under `data`, in order.
fn copies_of(data: &Path) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = support::files_under(&data.join("retained"))
        .into_iter()
        .filter(|p| p.to_string_lossy().ends_with(".jsonl.zst"))
        .collect();
    found.sort();
    found
}

/// The manifest a copy opens with, as JSON, and the copy's bytes after it.
fn manifest_of(copy: &Path) -> (serde_json::Value, Vec<u8>) {
    let bytes = std::fs::read(copy).unwrap();
    assert_eq!(
        bytes[..4],
        MANIFEST_MAGIC,
        "{copy:?} opens with no manifest"
    );
    let len = u32::from_le_bytes(bytes[4..8].try_into().unwrap()) as usize;
    (
        serde_json::from_slice(&bytes[8..8 + len]).unwrap(),
        bytes[8 + len..].to_vec(),
    )
}

/// Write `copy` (at `to`) again opening with `manifest`.
fn with_manifest(copy: &Path, to: &Path, manifest: &serde_json::Value) {
    let (_, rest) = manifest_of(copy);
    let payload = manifest.to_string();
    let mut bytes = MANIFEST_MAGIC.to_vec();
    bytes.extend_from_slice(&(payload.len() as u32).to_le_bytes());
    bytes.extend_from_slice(payload.as_bytes());
    bytes.extend_from_slice(&rest);
    std::fs::write(to, bytes).unwrap();
}

/// Where each of `secrets` is found under `data`, every file's bytes (a manifest is a frame's
/// plain JSON) and every copy decompressed.
fn leaks(data: &Path, secrets: &[&str]) -> Vec<String> {
    support::every_byte_under(data)
        .iter()
        .flat_map(|(name, bytes)| {
            secrets
                .iter()
                .filter(|s| memchr::memmem::find(bytes, s.as_bytes()).is_some())
                .map(move |s| format!("{s}: found in {name}"))
        })
        .collect()
}

/// The database's WAL written back, so its pages are read in `cairn.db` alone.
fn checkpoint(data: &Path) {
    Connection::open(data.join("cairn.db"))
        .unwrap()
        .query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))
        .unwrap();
}

/// A transcript in a folder named after a token, and a session title holding a key, as a build
/// whose rules missed both stored them (the path as found in `sources`, the copy named by its
/// key, the manifest saying both): a reindex with today's rules keeps the path sealed and the
/// title redacted, and the copy's manifest follows: no byte of either under the data dir, and
/// the archive still rebuilds from its copies alone.
#[test]
fn a_reindex_that_redacts_the_rows_writes_the_manifests_again() {
    let src = tempfile::tempdir().unwrap();
    let folder = src.path().join(format!("-home-me-{TOKEN}"));
    std::fs::create_dir_all(&folder).unwrap();
    let transcript = folder.join("1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl");
    std::fs::copy(
        support::fixtures().join("claude/1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl"),
        &transcript,
    )
    .unwrap();
    let data = tempfile::tempdir().unwrap();
    let cairn = Cairn::open(data.path()).unwrap();
    let captured = support::capture(&cairn, &[support::main_file(Agent::Claude, &transcript)]);
    assert!(captured.records_added > 0, "{captured:?}");
    drop(cairn);
    assert!(leaks(data.path(), &[TOKEN, AWS_KEY]).is_empty());

    // As the older build left it.
    let raw = std::fs::canonicalize(&transcript)
        .unwrap()
        .to_string_lossy()
        .into_owned();
    let raw_key = cairn_core::keys::source_key(Agent::Claude, Path::new(&raw));
    let title = format!("deploy {AWS_KEY}");
    let copies = copies_of(data.path());
    let [sealed_copy] = &copies[..] else {
        panic!("{copies:?}")
    };
    let raw_copy = sealed_copy.with_file_name(format!("{raw_key}.g0.jsonl.zst"));
    let (mut manifest, _) = manifest_of(sealed_copy);
    assert!(manifest["path"].as_str().unwrap().contains("[REDACTED:"));
    manifest["path"] = serde_json::json!(raw);
    manifest["source_key"] = serde_json::json!(raw_key);
    manifest["session"]["title"] = serde_json::json!(title);
    with_manifest(sealed_copy, &raw_copy, &manifest);
    std::fs::remove_file(sealed_copy).unwrap();
    let db = Connection::open(data.path().join("cairn.db")).unwrap();
    let len = std::fs::metadata(&raw_copy).unwrap().len() as i64;
    db.execute(
        "UPDATE sources SET path = ?1, source_key = ?2, retained_len = ?3",
        rusqlite::params![raw, raw_key, len],
    )
    .unwrap();
    db.execute("UPDATE sessions SET title = ?1", [&title])
        .unwrap();
    drop(db);
    assert!(!leaks(data.path(), &[TOKEN, AWS_KEY]).is_empty());

    let cairn = Cairn::open(data.path()).unwrap();
    let report = cairn.reindex(&ReindexRequest::default(), &Quiet).unwrap();
    assert!(report.skipped.is_empty(), "{report:?}");
    drop(cairn);
    checkpoint(data.path());
    let found = leaks(data.path(), &[TOKEN, AWS_KEY]);
    assert!(
        found.is_empty(),
        "secrets left under the data dir:\n{}",
        found.join("\n")
    );

    // The copy took the sealed path's key, and its manifest says so: the rows' path and title.
    let copies = copies_of(data.path());
    let [copy] = &copies[..] else {
        panic!("{copies:?}")
    };
    let (manifest, _) = manifest_of(copy);
    let db = Connection::open(data.path().join("cairn.db")).unwrap();
    let (path, key, len, title): (String, String, i64, String) = db
        .query_row(
            "SELECT src.path, src.source_key, src.retained_len, s.title
             FROM sources src JOIN sessions s ON s.id = src.session_id",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
        )
        .unwrap();
    drop(db);
    assert_eq!(manifest["path"], path.as_str());
    assert_eq!(manifest["source_key"], key.as_str());
    assert_eq!(manifest["session"]["title"], title.as_str());
    assert!(copy.to_string_lossy().contains(&key), "{copy:?}");
    assert_eq!(len as u64, std::fs::metadata(copy).unwrap().len());
    // Read again, nothing more to write.
    let before = std::fs::read(copy).unwrap();
    let cairn = Cairn::open(data.path()).unwrap();
    cairn.reindex(&ReindexRequest::default(), &Quiet).unwrap();
    drop(cairn);
    assert_eq!(std::fs::read(copy).unwrap(), before);

    let want = support::dump(data.path());
    for name in ["cairn.db", "cairn.db-wal", "cairn.db-shm"] {
        let _ = std::fs::remove_file(data.path().join(name));
    }
    let rebuilt = Cairn::rebuild_from_copies(data.path(), &Quiet).unwrap();
    assert!(rebuilt.skipped.is_empty(), "{rebuilt:#?}");
    assert_eq!(support::dump(data.path()), want);
}

/// A manifest holding secrets in its path and its session's facts (an older build's, or one
/// a person wrote): a rebuild from the copies stores none of them.
#[test]
fn a_rebuild_stores_no_secret_a_manifest_holds() {
    let src = tempfile::tempdir().unwrap();
    copy_tree(&support::fixtures().join("claude"), src.path());
    let files = support::found(Agent::Claude, src.path());
    let data = tempfile::tempdir().unwrap();
    Cairn::open(data.path())
        .unwrap()
        .capture_paths(&files, &Quiet)
        .unwrap();
    let sessions = support::count(data.path(), "SELECT COUNT(*) FROM sessions");
    let copy = copies_of(data.path())[0].clone();
    let (mut manifest, _) = manifest_of(&copy);
    let path = manifest["path"].as_str().unwrap().to_owned();
    let (dir, file) = path.rsplit_once('/').unwrap();
    manifest["path"] = serde_json::json!(format!("{dir}/-home-me-{TOKEN}/{file}"));
    manifest["session"]["title"] = serde_json::json!(format!("deploy {AWS_KEY}"));
    manifest["session"]["cwd"] = serde_json::json!(format!("/home/me/{TOKEN}"));
    manifest["session"]["git_branch"] = serde_json::json!(format!("fix/{AWS_KEY}"));
    with_manifest(&copy, &copy, &manifest);
    for name in ["cairn.db", "cairn.db-wal", "cairn.db-shm"] {
        let _ = std::fs::remove_file(data.path().join(name));
    }

    let report = Cairn::rebuild_from_copies(data.path(), &Quiet).unwrap();
    assert!(report.skipped.is_empty(), "{report:#?}");
    assert_eq!(i64::from(report.sessions), sessions, "{report:#?}");
    checkpoint(data.path());
    let stored: Vec<String> = ["cairn.db", "cairn.db-wal"]
        .into_iter()
        .filter_map(|name| {
            std::fs::read(data.path().join(name))
                .ok()
                .map(|b| (name, b))
        })
        .flat_map(|(name, bytes)| {
            [TOKEN, AWS_KEY]
                .into_iter()
                .filter(move |s| memchr::memmem::find(&bytes, s.as_bytes()).is_some())
                .map(move |s| format!("{s}: found in {name}"))
        })
        .collect();
    assert!(
        stored.is_empty(),
        "a rebuild stored:\n{}",
        stored.join("\n")
    );
    assert_eq!(
        support::count(
            data.path(),
            "SELECT COUNT(*) FROM sources WHERE path LIKE '%-home-me-[REDACTED:%'"
        ),
        1,
        "the path kept sealed"
    );
}

/// A manifest field this build does not know (a later build's, or a forger's) is not read and
/// not checked: a reindex writes the manifest again with the fields it knows, so whatever the
/// unknown one held is gone from the data dir.
#[test]
fn a_reindex_drops_a_manifest_field_this_build_does_not_know() {
    let src = tempfile::tempdir().unwrap();
    copy_tree(&support::fixtures().join("claude"), src.path());
    let files = support::found(Agent::Claude, src.path());
    let data = tempfile::tempdir().unwrap();
    let cairn = Cairn::open(data.path()).unwrap();
    cairn.capture_paths(&files, &Quiet).unwrap();
    let copy = copies_of(data.path())[0].clone();
    let (mut manifest, _) = manifest_of(&copy);
    manifest["note"] = serde_json::json!(format!("deploy key {TOKEN}"));
    with_manifest(&copy, &copy, &manifest);
    let key = copy
        .file_name()
        .unwrap()
        .to_string_lossy()
        .split('.')
        .next()
        .unwrap()
        .to_owned();
    Connection::open(data.path().join("cairn.db"))
        .unwrap()
        .execute(
            "UPDATE sources SET retained_len = ?1 WHERE source_key = ?2",
            rusqlite::params![std::fs::metadata(&copy).unwrap().len() as i64, key],
        )
        .unwrap();
    assert!(!leaks(data.path(), &[TOKEN]).is_empty(), "planted");

    cairn.reindex(&ReindexRequest::default(), &Quiet).unwrap();
    let left = leaks(data.path(), &[TOKEN]);
    assert!(left.is_empty(), "{}", left.join("\n"));
    assert!(
        manifest_of(&copies_of(data.path())[0])
            .0
            .get("note")
            .is_none()
    );
}

/// The archive written by schema 11 (`tests/fixtures/archive-v11`) in `dir`, opened by no
/// build since, its copy's bytes followed by `tail`. Returns the data dir, the copy and the
/// copy's length before `tail`.
fn older_archive(dir: &Path, tail: &[u8]) -> (PathBuf, PathBuf, i64) {
    let fixture = support::fixtures().join("archive-v11");
    let data = dir.join("data");
    std::fs::create_dir_all(&data).unwrap();
    let db = zstd::stream::decode_all(std::fs::File::open(fixture.join("cairn.db.zst")).unwrap())
        .unwrap();
    std::fs::write(data.join("cairn.db"), db).unwrap();
    copy_tree(&fixture.join("retained"), &data.join("retained"));
    let copy = copies_of(&data).pop().unwrap();
    let mut bytes = std::fs::read(&copy).unwrap();
    let whole = bytes.len() as i64;
    bytes.extend_from_slice(tail);
    std::fs::write(&copy, &bytes).unwrap();
    (data, copy, whole)
}

/// Set the committed length of the archive's one source.
fn set_retained_len(data: &Path, len: i64) {
    Connection::open(data.join("cairn.db"))
        .unwrap()
        .execute("UPDATE sources SET retained_len = ?1", [len])
        .unwrap();
}

/// The first bytes of a frame a crash stopped writing.
fn torn_frame() -> Vec<u8> {
    zstd::bulk::compress(b"{\"late\":1}\n", 1).unwrap()[..9].to_vec()
}

/// A copy that ends in a frame a crash cut off, of a source whose committed length the archive
/// does not know (0: the copy's whole frames): migration 47 appends its manifest where the
/// whole frames end, the torn bytes cut, so the copy reads, its length counts nothing past the
/// tear, and the archive rebuilds from it.
#[test]
fn migration_47_appends_no_manifest_after_a_torn_tail() {
    let dir = tempfile::tempdir().unwrap();
    let (data, copy, whole) = older_archive(dir.path(), &torn_frame());
    set_retained_len(&data, 0);

    let cairn = Cairn::open(&data).unwrap();
    let described = std::fs::read(&copy).unwrap();
    assert_eq!(
        Retained::whole_len(&copy).unwrap(),
        described.len() as u64,
        "no torn bytes left in the copy"
    );
    assert_eq!(described[whole as usize..][..4], MANIFEST_MAGIC);
    let len = support::count(&data, "SELECT retained_len FROM sources");
    assert_eq!(
        len as usize,
        described.len(),
        "its length counts the manifest, no more"
    );
    let lines = Retained::new(&data).read(&copy, 0).unwrap();
    assert_eq!(lines.len(), 8, "the copy reads whole");
    let report = cairn.reindex(&ReindexRequest::default(), &Quiet).unwrap();
    assert!(report.skipped.is_empty(), "{report:?}");
    drop(cairn);
    // What redaction found lives in the database alone, and a lost one takes it along.
    Connection::open(data.join("cairn.db"))
        .unwrap()
        .execute("UPDATE sessions SET secret_count = 0", [])
        .unwrap();
    let want = support::dump(&data);
    for name in ["cairn.db", "cairn.db-wal", "cairn.db-shm"] {
        let _ = std::fs::remove_file(data.join(name));
    }
    let rebuilt = Cairn::rebuild_from_copies(&data, &Quiet).unwrap();
    assert!(rebuilt.skipped.is_empty(), "{rebuilt:#?}");
    assert!(rebuilt.torn.is_empty(), "{rebuilt:#?}");
    assert_eq!(support::dump(&data), want);
}

/// A copy whose committed bytes themselves end inside a frame (damaged): migration 47 appends
/// nothing to it (a manifest after the torn bytes could not be read, and would be counted in
/// its committed length), and the archive opens all the same, its copy as long as before:
/// the open's migration 14 writes its keys into the key frames that read (a damaged copy's
/// lines are re-keyed once), and changes no other byte.
#[test]
fn migration_47_leaves_a_copy_torn_inside_its_committed_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let (data, copy, _) = older_archive(dir.path(), &torn_frame());
    let whole = std::fs::read(&copy).unwrap().len() as i64;
    set_retained_len(&data, whole);
    let before = std::fs::read(&copy).unwrap();
    let written = cairn_core::archive::rebuild::describe_every_source(
        &Connection::open(data.join("cairn.db")).unwrap(),
        &data,
    )
    .unwrap();
    assert_eq!(written, 0);
    assert_eq!(
        std::fs::read(&copy).unwrap(),
        before,
        "the copy is left as it is"
    );
    assert_eq!(
        support::count(&data, "SELECT retained_len FROM sources"),
        whole
    );
    Cairn::open(&data).unwrap();
    let opened = std::fs::read(&copy).unwrap();
    assert_eq!(
        opened.len(),
        before.len(),
        "the copy is neither cut nor grown"
    );
    // The bytes that differ all lie in a key (`sha256:` and its 64 hex digits).
    let keys: Vec<usize> = before
        .windows(7)
        .enumerate()
        .filter(|(_, w)| *w == b"sha256:")
        .map(|(at, _)| at)
        .collect();
    let stray = (0..before.len())
        .filter(|&i| opened[i] != before[i])
        .find(|&i| !keys.iter().any(|&at| (at..at + 71).contains(&i)));
    assert_eq!(stray, None, "a byte outside the keys changed");
}

/// A manifest in one agent's folder naming a session another agent's copies make (forged, or
/// damaged): the session's key is not one its own agent and ids make, so it is not believed.
/// The genuine session keeps its key and sources; the other copy is rebuilt as the session its
/// own manifest does make, and named; nothing is passed over.
#[test]
fn a_manifest_cannot_put_a_source_in_another_agent_s_session() {
    let src = tempfile::tempdir().unwrap();
    copy_tree(
        &support::fixtures().join("claude"),
        &src.path().join("claude"),
    );
    copy_tree(
        &support::fixtures().join("codex"),
        &src.path().join("codex"),
    );
    let mut files = support::found(Agent::Claude, &src.path().join("claude"));
    files.extend(support::found(Agent::Codex, &src.path().join("codex")));
    let data = tempfile::tempdir().unwrap();
    Cairn::open(data.path())
        .unwrap()
        .capture_paths(&files, &Quiet)
        .unwrap();
    let sessions = support::count(data.path(), "SELECT COUNT(*) FROM sessions");
    let claude = copies_of(data.path())
        .into_iter()
        .find(|c| c.to_string_lossy().contains("/claude/"))
        .unwrap();
    let codex = copies_of(data.path())
        .into_iter()
        .find(|c| c.to_string_lossy().contains("/codex/"))
        .unwrap();
    let (owner, _) = manifest_of(&claude);
    let (mut stranger, _) = manifest_of(&codex);
    stranger["session"]["key"] = owner["session"]["key"].clone();
    with_manifest(&codex, &codex, &stranger);
    for name in ["cairn.db", "cairn.db-wal", "cairn.db-shm"] {
        let _ = std::fs::remove_file(data.path().join(name));
    }

    let report = Cairn::rebuild_from_copies(data.path(), &Quiet).unwrap();
    assert!(report.skipped.is_empty(), "{report:#?}");
    assert_eq!(report.rekeyed.len(), 1, "{report:#?}");
    assert_eq!(PathBuf::from(&report.rekeyed[0].copy), codex, "{report:#?}");
    assert!(
        report.rekeyed[0]
            .reason
            .contains("which its agent and ids do not make"),
        "{report:#?}"
    );
    assert_eq!(i64::from(report.sessions), sessions, "{report:#?}");
    let owner_agent: String = Connection::open(data.path().join("cairn.db"))
        .unwrap()
        .query_row(
            "SELECT agent FROM sessions WHERE session_key = ?1",
            [owner["session"]["key"].as_str().unwrap()],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(owner_agent, "claude");
    assert_eq!(
        support::count(
            data.path(),
            "SELECT COUNT(*) FROM sources src JOIN sessions s ON s.id = src.session_id
             WHERE src.agent <> s.agent"
        ),
        0
    );
}

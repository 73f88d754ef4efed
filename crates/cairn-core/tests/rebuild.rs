//! `Cairn::rebuild_from_copies` (`cairn reindex --from-copies`): an archive whose database is
//! lost is rebuilt from the retained copies alone as it was, for every read kind, and a capture
//! over the transcripts still on disk afterwards stores nothing twice and leaves every source's
//! reading position and copy where a capture of the intact archive left them. Migration 47
//! describes the copies of an archive from before manifests existed; manifests that cannot be
//! trusted are named and passed over.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};

use cairn_core::archive::Agent;
use cairn_core::archive::capture::Quiet;
use cairn_core::archive::discover::FoundFile;
use cairn_core::{Cairn, RebuildReport};
use rusqlite::Connection;

use crate::reindex::{LINE_AGENTS, UNIT_SOURCES, copy_tree};
use crate::support;

/// Every source's reading position and copy length: where the next capture takes up. A
/// database session's cursor without the time of its last read.
fn positions(data: &Path) -> String {
    let db = Connection::open(data.join("cairn.db")).unwrap();
    let mut stmt = db
        .prepare(
            "SELECT path, size, mtime_ns, byte_offset, line_count, first_line_hash,
                    last_line_start, last_line_hash, generation, retained_len, sidecar_mtime_ns,
                    parser_state
             FROM sources ORDER BY path",
        )
        .unwrap();
    stmt.query_map([], |r| {
        let mut cols = Vec::new();
        for i in 0..11 {
            let v: rusqlite::types::Value = r.get(i)?;
            cols.push(format!("{v:?}"));
        }
        let state: Option<String> = r.get(11)?;
        let state = state.map(|s| match serde_json::from_str::<serde_json::Value>(&s) {
            Ok(mut v) => {
                if let Some(o) = v.as_object_mut() {
                    o.remove("read_at");
                }
                v.to_string()
            }
            Err(_) => s,
        });
        cols.push(format!("{state:?}"));
        Ok(cols.join(" | ") + "\n")
    })
    .unwrap()
    .map(Result::unwrap)
    .collect()
}

/// [`support::dump`] without the sessions' counts of secrets redacted (read from a copy of
/// the database): what redaction found lives in the database alone, and a lost one takes it
/// along.
fn dump_without_findings(data: &Path) -> String {
    let copy = tempfile::tempdir().unwrap();
    let db = copy.path().join("cairn.db");
    let conn = Connection::open(data.join("cairn.db")).unwrap();
    conn.execute("VACUUM INTO ?1", [db.to_str().unwrap()])
        .unwrap();
    drop(conn);
    Connection::open(&db)
        .unwrap()
        .execute("UPDATE sessions SET secret_count = 0", [])
        .unwrap();
    support::dump(copy.path())
}

fn lose_database(data: &Path) {
    for name in ["cairn.db", "cairn.db-wal", "cairn.db-shm"] {
        let _ = std::fs::remove_file(data.join(name));
    }
}

fn rebuilt(what: &str, data: &Path) -> RebuildReport {
    let report = Cairn::rebuild_from_copies(data, &Quiet).unwrap_or_else(|e| panic!("{what}: {e}"));
    assert!(report.skipped.is_empty(), "{what}: {report:#?}");
    assert!(report.torn.is_empty(), "{what}: {report:#?}");
    assert!(report.rekeyed.is_empty(), "{what}: {report:#?}");
    report
}

/// `files` (laid out in `src`) captured; the archive rebuilt from its copies with the old
/// database there is the archive, a capture after it stores nothing and leaves every position
/// as a capture of the intact archive does; then, the transcripts and the database gone, a
/// rebuild from the copies alone is the archive still.
fn rebuilt_is_captured(what: &str, src: tempfile::TempDir, files: &[FoundFile]) {
    assert!(!files.is_empty(), "{what}: no transcript found");
    let data = tempfile::tempdir().unwrap();
    Cairn::open(data.path())
        .unwrap()
        .capture_paths(files, &Quiet)
        .unwrap();
    let want = support::dump(data.path());
    let want_bare = dump_without_findings(data.path());
    let twin = tempfile::tempdir().unwrap();
    let cairn = Cairn::open(twin.path()).unwrap();
    cairn.capture_paths(files, &Quiet).unwrap();
    cairn.capture_paths(files, &Quiet).unwrap();
    let want_positions = positions(twin.path());

    let report = rebuilt(what, data.path());
    assert!(
        report.moved_aside[0].contains("cairn.db.damaged-"),
        "{what}: {report:?}"
    );
    assert!(report.sessions > 0, "{what}: {report:?}");
    support::same(&support::dump(data.path()), &want, what);
    support::assert_ordinals_dense(data.path());
    support::index_is_whole(data.path());
    let again = Cairn::open(data.path())
        .unwrap()
        .capture_paths(files, &Quiet)
        .unwrap();
    assert_eq!(
        (
            again.records_added,
            again.sessions_added,
            again.subagents_added
        ),
        (0, 0, 0),
        "{what}: {again:?}"
    );
    support::same(&support::dump(data.path()), &want, what);
    support::same(&positions(data.path()), &want_positions, what);

    // The agent deleted its transcripts, and the database is lost.
    drop(src);
    lose_database(data.path());
    let report = rebuilt(what, data.path());
    assert!(report.moved_aside.is_empty(), "{what}: {report:?}");
    support::same(&dump_without_findings(data.path()), &want_bare, what);
    support::index_is_whole(data.path());
}

#[test]
fn line_transcripts_are_rebuilt_from_their_copies() {
    for &(agent, dir, place) in LINE_AGENTS {
        let src = tempfile::tempdir().unwrap();
        let root = src.path().join(place);
        copy_tree(&support::fixtures().join(dir), &root);
        let files = support::found(agent, &root);
        rebuilt_is_captured(dir, src, &files);
    }
}

#[test]
fn sources_read_by_units_are_rebuilt_from_their_copies() {
    for &(name, layout) in UNIT_SOURCES {
        let src = tempfile::tempdir().unwrap();
        let files = layout(src.path());
        rebuilt_is_captured(name, src, &files);
    }
}

/// The copies under `data`, in order.
fn copies_of(data: &Path) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = support::files_under(&data.join("retained"))
        .into_iter()
        .filter(|p| p.to_string_lossy().ends_with(".jsonl.zst"))
        .collect();
    found.sort();
    found
}

/// The skippable frame magic of a copy's manifest, as it starts the copy.
const MANIFEST_MAGIC: [u8; 4] = 0x184D_2A5Du32.to_le_bytes();

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

/// Write the copy again opening with `payload` as its manifest.
fn with_manifest(copy: &Path, payload: &[u8]) {
    let (_, rest) = manifest_of(copy);
    let mut bytes = MANIFEST_MAGIC.to_vec();
    bytes.extend_from_slice(&(payload.len() as u32).to_le_bytes());
    bytes.extend_from_slice(payload);
    bytes.extend_from_slice(&rest);
    std::fs::write(copy, bytes).unwrap();
}

/// Manifests a person or a program wrote, damaged copies, strays: each named and passed over
/// (or, a copy cut off mid-frame, rebuilt from its whole frames), the rest rebuilt.
#[test]
fn copies_that_cannot_be_trusted_are_named_and_passed_over() {
    let src = tempfile::tempdir().unwrap();
    copy_tree(&support::fixtures().join("claude"), src.path());
    let files = support::found(Agent::Claude, src.path());
    let data = tempfile::tempdir().unwrap();
    Cairn::open(data.path())
        .unwrap()
        .capture_paths(&files, &Quiet)
        .unwrap();
    let sessions = support::count(data.path(), "SELECT COUNT(*) FROM sessions");
    let copies = copies_of(data.path());
    assert!(copies.len() >= 6, "{copies:?}");
    let edit = |copy: &Path, f: &dyn Fn(&mut serde_json::Value)| {
        let (mut v, _) = manifest_of(copy);
        f(&mut v);
        with_manifest(copy, v.to_string().as_bytes());
    };
    with_manifest(&copies[0], b"{ not json");
    edit(&copies[1], &|v| v["role"] = serde_json::json!(7));
    edit(&copies[2], &|v| {
        v["path"] = serde_json::json!("/tmp/\u{1b}[31mred\u{7}.jsonl");
    });
    edit(&copies[3], &|v| {
        v["agent"] = serde_json::json!("nosuchagent")
    });
    // A copy whose last frame was cut off: rebuilt from the frames before.
    let cut = &copies[4];
    let mut bytes = std::fs::read(cut).unwrap();
    bytes.extend_from_slice(&zstd::bulk::compress(b"{\"late\":1}\n", 1).unwrap()[..9]);
    std::fs::write(cut, &bytes).unwrap();
    // A folder no agent has, and a copy with no manifest in it.
    std::fs::create_dir_all(data.path().join("retained/nosuchagent")).unwrap();
    std::fs::write(
        data.path().join("retained/claude/sha256-0000.g0.jsonl.zst"),
        zstd::bulk::compress(b"{}\n", 1).unwrap(),
    )
    .unwrap();

    let report = Cairn::rebuild_from_copies(data.path(), &Quiet).unwrap();
    let joined = report
        .skipped
        .iter()
        .map(|s| format!("{}: {}", s.copy, s.reason))
        .collect::<Vec<_>>()
        .join("\n");
    for want in [
        "its manifest is not one Cairn wrote",
        "invalid type: integer `7`, expected a string",
        "holds control characters",
        "names an agent this build does not know",
        "a folder of no agent this build knows",
        "no manifest in it",
    ] {
        assert!(joined.contains(want), "no {want:?} in\n{joined}");
    }
    assert_eq!(report.skipped.len(), 6, "{joined}");
    assert_eq!(report.torn.len(), 1, "{report:#?}");
    assert!(report.torn[0].reason.contains("9 bytes"), "{report:#?}");
    assert_eq!(report.torn[0].copy, cut.display().to_string());
    assert_eq!(
        i64::from(report.sessions),
        sessions - 4,
        "the four hostile manifests' sessions are not rebuilt: {report:#?}"
    );
    support::index_is_whole(data.path());
    // The copy's cut-off tail is left as it is: the next append cuts it.
    assert_eq!(std::fs::read(cut).unwrap(), bytes);
}

/// A forgotten session does not come back because the database was rebuilt: the tombstones
/// are carried over, even when a forget stopped before it deleted the copies.
#[test]
fn a_forgotten_session_stays_forgotten() {
    let src = tempfile::tempdir().unwrap();
    copy_tree(&support::fixtures().join("claude"), src.path());
    let files = support::found(Agent::Claude, src.path());
    let data = tempfile::tempdir().unwrap();
    let cairn = Cairn::open(data.path()).unwrap();
    cairn.capture_paths(&files, &Quiet).unwrap();
    let id = "1af7fc5e-8455-4414-9ccd-011d40f70b2a";
    let kept = data.path().join("kept");
    copy_tree(&data.path().join("retained"), &kept);
    let req = cairn_core::ForgetRequest {
        session: Some(id.to_owned()),
        ..Default::default()
    };
    let forgotten = cairn.forget(&req).unwrap();
    assert_eq!(forgotten.removed.sessions.len(), 1, "{forgotten:?}");
    drop(cairn);
    // A forget stopped between its commit and its sweep: the copies are still there.
    copy_tree(&kept, &data.path().join("retained"));
    std::fs::remove_dir_all(&kept).unwrap();
    let count = |data: &Path| {
        support::count(
            data,
            &format!("SELECT COUNT(*) FROM sessions WHERE session_id = '{id}'"),
        )
    };
    assert_eq!(count(data.path()), 0);

    let report = Cairn::rebuild_from_copies(data.path(), &Quiet).unwrap();
    assert!(report.forgotten >= 1, "{report:#?}");
    let carried = report
        .carried
        .iter()
        .find(|c| c.what == "forget tombstones of sessions")
        .unwrap();
    assert!(carried.rows >= 1 && carried.error.is_none(), "{report:#?}");
    assert_eq!(count(data.path()), 0, "{report:#?}");
    Cairn::open(data.path())
        .unwrap()
        .capture_paths(&files, &Quiet)
        .unwrap();
    assert_eq!(count(data.path()), 0, "a sync brought it back");
}

/// An archive written before manifests existed (schema 11): migration 47 describes its copies
/// from its rows, and the archive rebuilds from them; run again, it writes nothing new.
#[test]
fn migration_47_describes_the_copies_of_an_older_archive() {
    let fixture = support::fixtures().join("archive-v11");
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    std::fs::create_dir_all(&data).unwrap();
    let db = zstd::stream::decode_all(std::fs::File::open(fixture.join("cairn.db.zst")).unwrap())
        .unwrap();
    std::fs::write(data.join("cairn.db"), db).unwrap();
    copy_tree(&fixture.join("retained"), &data.join("retained"));
    // A second source whose copy is gone: passed over, no error.
    Connection::open(data.join("cairn.db"))
        .unwrap()
        .execute_batch(
            "INSERT INTO sources (source_key, session_id, agent, role, path, updated_at)
             SELECT 'sha256-0123456789abcdef0123456789abcdef', session_id, agent, role,
                    '/gone/elsewhere.jsonl', updated_at FROM sources",
        )
        .unwrap();
    let copy = copies_of(&data).pop().unwrap();
    let before = std::fs::read(&copy).unwrap();
    assert_ne!(before[..4], MANIFEST_MAGIC);

    let cairn = Cairn::open(&data).unwrap();
    assert_eq!(copies_of(&data).len(), 1);
    let described = std::fs::read(&copy).unwrap();
    // Appended after its frames (migration 14 re-keyed its key frame in place before).
    let frame = &described[before.len()..];
    assert_eq!(frame[..4], MANIFEST_MAGIC);
    let manifest: serde_json::Value = serde_json::from_slice(&frame[8..]).unwrap();
    assert_eq!(manifest["agent"], "claude");
    assert_eq!(manifest["role"], "main");
    assert_eq!(manifest["kind"], "lines");
    assert!(
        manifest["path"]
            .as_str()
            .unwrap()
            .ends_with("7d3c5b1e-2f4a-4e8b-9c6d-1a2b3c4d5e6f.jsonl"),
        "{manifest}"
    );
    let db = Connection::open(data.join("cairn.db")).unwrap();
    let (key, len): (String, i64) = db
        .query_row(
            "SELECT s.session_key, src.retained_len FROM sessions s JOIN sources src
             ON src.session_id = s.id WHERE src.path LIKE '%7d3c5b1e%'",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!(manifest["session"]["key"], key.as_str());
    assert_eq!(
        len as usize,
        described.len(),
        "its committed length moved with it"
    );
    // The source whose copy is gone is not described, and is not rebuilt either.
    db.execute(
        "DELETE FROM sources WHERE source_key = 'sha256-0123456789abcdef0123456789abcdef'",
        [],
    )
    .unwrap();
    drop(db);
    // What today's parsers read in the copies (a reindex), which a rebuild reads too.
    cairn
        .reindex(&cairn_core::ReindexRequest::default(), &Quiet)
        .unwrap();
    let want = support::dump(&data);
    let entries = support::count(&data, "SELECT COUNT(*) FROM recall_entries");
    drop(cairn);
    // Described once: the migration's step run again writes nothing more.
    let described = std::fs::read(&copy).unwrap();
    let again = cairn_core::archive::rebuild::describe_every_source(
        &Connection::open(data.join("cairn.db")).unwrap(),
        &data,
    )
    .unwrap();
    assert_eq!(again, 0);
    assert_eq!(std::fs::read(&copy).unwrap(), described);

    let report = Cairn::rebuild_from_copies(&data, &Quiet).unwrap();
    assert!(report.skipped.is_empty(), "{report:#?}");
    support::same(&support::dump(&data), &want, "archive-v11");
    // Recall lives in the database alone: carried, every entry.
    let carried = carried(&report, "entries, with their reviews");
    assert_eq!(
        (i64::from(carried.rows), &carried.error),
        (entries, &None),
        "{report:#?}"
    );
    assert_eq!(
        support::count(&data, "SELECT COUNT(*) FROM recall_entries"),
        entries
    );
}

/// The records of `data`'s archive as a person reads them (kind, role, text), session by
/// session in key order, each in order.
fn records_read(data: &Path) -> Vec<(String, Option<String>, Option<String>)> {
    let db = Connection::open(data.join("cairn.db")).unwrap();
    let mut stmt = db
        .prepare(
            "SELECT r.kind, r.role, r.text FROM records r JOIN sessions s ON s.id = r.session_id
             ORDER BY s.session_key, r.ordinal",
        )
        .unwrap();
    stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

/// The archive-v11 fixture (schema 11, before manifests) in a data dir under `dir`, its copy's
/// bytes made by `copy` from the fixture's. Returns the data dir and the copy.
fn v11_with(dir: &Path, copy: impl Fn(&[u8]) -> Vec<u8>) -> (PathBuf, PathBuf) {
    let fixture = support::fixtures().join("archive-v11");
    let data = dir.join("data");
    std::fs::create_dir_all(&data).unwrap();
    let db = zstd::stream::decode_all(std::fs::File::open(fixture.join("cairn.db.zst")).unwrap())
        .unwrap();
    std::fs::write(data.join("cairn.db"), db).unwrap();
    copy_tree(&fixture.join("retained"), &data.join("retained"));
    let path = copies_of(&data).pop().unwrap();
    let bytes = copy(&std::fs::read(&path).unwrap());
    std::fs::write(&path, bytes).unwrap();
    (data, path)
}

/// Migration 47 on a copy whose first data frame is damaged (its magic number gone) and whose
/// later frames are sound, whether the archive knows the copy's committed length or not (its
/// row names a later generation: the copy is an older one's, read whole): every byte of it
/// stays and the manifest goes after them, and a rebuild reads the sound frames past the
/// damage, naming it. A tail a write cut off mid-frame is still cut.
#[test]
fn migration_47_keeps_a_damaged_copy_and_a_rebuild_reads_past_the_damage() {
    // What the sound copy rebuilds to.
    let sound = tempfile::tempdir().unwrap();
    let (data, _) = v11_with(sound.path(), <[u8]>::to_vec);
    drop(Cairn::open(&data).unwrap());
    Cairn::rebuild_from_copies(&data, &Quiet).unwrap();
    let want = records_read(&data);
    assert!(want.len() >= 8, "{want:?}");

    // The fixture's copy (a data frame and its key frame) twice, as two batches would write
    // it; the first data frame's magic number is gone.
    let damage = |b: &[u8]| {
        let mut out = [b, b].concat();
        out[..4].fill(0);
        out
    };
    for case in ["older generation", "committed length"] {
        let dir = tempfile::tempdir().unwrap();
        let (data, copy) = v11_with(dir.path(), damage);
        let damaged = std::fs::read(&copy).unwrap();
        let db = Connection::open(data.join("cairn.db")).unwrap();
        match case {
            "older generation" => db.execute("UPDATE sources SET generation = 1", []),
            _ => db.execute(
                "UPDATE sources SET retained_len = ?1",
                [damaged.len() as i64],
            ),
        }
        .unwrap();
        drop(db);
        drop(Cairn::open(&data).unwrap());
        let described = std::fs::read(&copy).unwrap();
        // Every byte stays, but for the keys migration 14 wrote into the key frames on both
        // sides of the damage (as far as the copy reads).
        let keys: Vec<usize> = damaged
            .windows(7)
            .enumerate()
            .filter(|(_, w)| *w == b"sha256:")
            .map(|(at, _)| at)
            .collect();
        let only_keys = (0..damaged.len())
            .filter(|&i| described.get(i) != damaged.get(i))
            .all(|i| keys.iter().any(|&at| (at..at + 71).contains(&i)));
        assert!(
            described.len() > damaged.len() && only_keys,
            "{case}: the copy lost bytes ({} of {})",
            described.len(),
            damaged.len()
        );
        assert_eq!(
            described[damaged.len()..damaged.len() + 4],
            MANIFEST_MAGIC,
            "{case}: no manifest after its bytes"
        );

        lose_database(&data);
        let report = Cairn::rebuild_from_copies(&data, &Quiet).unwrap();
        assert!(report.skipped.is_empty(), "{case}: {report:#?}");
        let shown = copy.display().to_string();
        assert!(
            report
                .torn
                .iter()
                .any(|t| t.copy == shown && t.reason.contains("at byte 0 are no frame")),
            "{case}: the damage is not named: {report:#?}"
        );
        assert_eq!(records_read(&data), want, "{case}");
        assert_eq!(std::fs::read(&copy).unwrap(), described, "{case}");
    }

    // A tail a write cut off (a frame's beginning, nothing whole after it) is cut.
    let dir = tempfile::tempdir().unwrap();
    let (data, copy) = v11_with(dir.path(), |b| [b, &b[..100]].concat());
    let whole = std::fs::read(&copy).unwrap().len() - 100;
    Connection::open(data.join("cairn.db"))
        .unwrap()
        .execute("UPDATE sources SET generation = 1", [])
        .unwrap();
    drop(Cairn::open(&data).unwrap());
    let manifest = &std::fs::read(&copy).unwrap()[whole..];
    assert_eq!(
        manifest[..4],
        MANIFEST_MAGIC,
        "the torn tail is still there"
    );
    let len = u32::from_le_bytes(manifest[4..8].try_into().unwrap()) as usize;
    assert_eq!(manifest.len(), 8 + len, "the torn tail is still there");
}

/// A copy a capture wrote in two batches whose first data frame is damaged: a rebuild keeps
/// every byte of it and reads the second batch's records past the damage; the next capture
/// appends after the damage, cutting nothing.
#[test]
fn a_rebuild_reads_past_damage_and_the_next_capture_appends_after_it() {
    let src = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(support::fixtures().join("claude/small.jsonl")).unwrap();
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let half = lines.len() / 2;
    let file = src.path().join("small.jsonl");
    std::fs::write(&file, lines[..half].concat()).unwrap();
    let files = support::found(Agent::Claude, src.path());
    let data = tempfile::tempdir().unwrap();
    let cairn = Cairn::open(data.path()).unwrap();
    cairn.capture_paths(&files, &Quiet).unwrap();
    std::fs::write(&file, lines.concat()).unwrap();
    cairn.capture_paths(&files, &Quiet).unwrap();
    drop(cairn);
    let later: Vec<String> = {
        let db = Connection::open(data.path().join("cairn.db")).unwrap();
        let mut stmt = db
            .prepare("SELECT text FROM records WHERE kind = 'message' AND line_no >= ?1")
            .unwrap();
        stmt.query_map([half as i64], |r| r.get(0))
            .unwrap()
            .map(Result::unwrap)
            .collect()
    };
    assert!(!later.is_empty());
    let copy = copies_of(data.path()).pop().unwrap();
    let (_, frames) = manifest_of(&copy);
    let mut bytes = std::fs::read(&copy).unwrap();
    let first = bytes.len() - frames.len();
    assert_eq!(bytes[first..first + 4], 0xFD2F_B528u32.to_le_bytes());
    bytes[first..first + 4].fill(0);
    std::fs::write(&copy, &bytes).unwrap();

    lose_database(data.path());
    let report = Cairn::rebuild_from_copies(data.path(), &Quiet).unwrap();
    assert!(report.skipped.is_empty(), "{report:#?}");
    assert_eq!(report.torn.len(), 1, "{report:#?}");
    assert!(
        report.torn[0].reason.contains("are no frame (damaged)"),
        "{report:#?}"
    );
    let got: Vec<String> = records_read(data.path())
        .into_iter()
        .filter_map(|(_, _, text)| text)
        .collect();
    for text in &later {
        assert!(got.contains(text), "{text:?} not rebuilt: {got:?}");
    }
    assert_eq!(std::fs::read(&copy).unwrap(), bytes);
    let committed = support::count(data.path(), "SELECT retained_len FROM sources");
    assert_eq!(committed, bytes.len() as i64, "the damage is the copy's");

    std::fs::write(&file, [&text, "\n"].concat()).unwrap();
    Cairn::open(data.path())
        .unwrap()
        .capture_paths(&files, &Quiet)
        .unwrap();
    let kept: Vec<Vec<u8>> = copies_of(data.path())
        .iter()
        .map(|c| std::fs::read(c).unwrap())
        .collect();
    assert!(
        kept.iter().any(|k| k.starts_with(&bytes)),
        "a capture cut the damaged copy"
    );
}

/// A copy's manifest forged to name another agent's session, with the first place in the
/// archive's order: the genuine session comes back with every record, and the forged copy
/// is rebuilt as the session its own agent and ids make, named.
#[test]
fn a_manifest_naming_another_agents_session_does_not_take_its_place() {
    let src = tempfile::tempdir().unwrap();
    copy_tree(&support::fixtures().join("claude"), &src.path().join("c"));
    copy_tree(&support::fixtures().join("codex"), &src.path().join("x"));
    let mut files = support::found(Agent::Claude, &src.path().join("c"));
    files.extend(support::found(Agent::Codex, &src.path().join("x")));
    let data = tempfile::tempdir().unwrap();
    Cairn::open(data.path())
        .unwrap()
        .capture_paths(&files, &Quiet)
        .unwrap();
    let want = records_read(data.path());
    let sessions = support::count(data.path(), "SELECT COUNT(*) FROM sessions");
    let (victim, records): (String, i64) = Connection::open(data.path().join("cairn.db"))
        .unwrap()
        .query_row(
            "SELECT session_key, record_count FROM sessions WHERE agent = 'claude'
             ORDER BY record_count DESC LIMIT 1",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    let forged = copies_of(data.path())
        .into_iter()
        .find(|c| c.parent().unwrap().ends_with("codex"))
        .unwrap();
    let (mut manifest, _) = manifest_of(&forged);
    manifest["session"]["key"] = serde_json::json!(victim);
    manifest["session_row"] = serde_json::json!(0);
    with_manifest(&forged, manifest.to_string().as_bytes());

    lose_database(data.path());
    let report = Cairn::rebuild_from_copies(data.path(), &Quiet).unwrap();
    assert!(report.skipped.is_empty(), "{report:#?}");
    assert_eq!(report.rekeyed.len(), 1, "{report:#?}");
    assert_eq!(report.rekeyed[0].copy, forged.display().to_string());
    assert!(report.rekeyed[0].reason.contains(&victim), "{report:#?}");
    let (agent, rebuilt): (String, i64) = Connection::open(data.path().join("cairn.db"))
        .unwrap()
        .query_row(
            "SELECT agent, record_count FROM sessions WHERE session_key = ?1",
            [&victim],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!((agent.as_str(), rebuilt), ("claude", records));
    assert_eq!(
        support::count(data.path(), "SELECT COUNT(*) FROM sessions"),
        sessions
    );
    assert_eq!(records_read(data.path()), want);
}

/// A generator that answers every prompt with the same short report, recording nothing.
struct Stub;

impl cairn_core::insights::Generator for Stub {
    fn identity(&self) -> cairn_core::insights::GeneratorIdentity {
        cairn_core::insights::GeneratorIdentity {
            backend: "test".into(),
            model: Some("stub".into()),
            endpoint_hash: None,
        }
    }
    fn ask(
        &self,
        _: &cairn_core::llm::Ask<'_>,
        _: &cairn_core::llm::Outbound,
    ) -> Result<cairn_core::llm::Answer, cairn_core::llm::LlmError> {
        Ok(cairn_core::llm::Answer {
            content: "# What happened\n\nThey fixed the build.\n".into(),
            ..Default::default()
        })
    }
}

/// The carried kind of row whose description starts with `what`.
fn carried<'a>(report: &'a RebuildReport, what: &str) -> &'a cairn_core::RebuildCarried {
    report
        .carried
        .iter()
        .find(|c| c.what.starts_with(what))
        .unwrap_or_else(|| panic!("nothing carried as {what:?}: {report:#?}"))
}

/// What only the rooms' tables held comes through a rebuild, or is named: the record of what
/// a team push sent (so a session forgotten afterwards is still withdrawn from the team
/// archive by the next push), when this machine published a session through git (so a forget
/// still takes its refs down), the teammates' documents a pull imported, the generated
/// reports (under their ids, with the sessions they read; one that read a forgotten session
/// is left out, as the forget takes it), and the vectors of search by meaning (not carried:
/// how many, and the command that makes them again).
#[test]
fn what_only_the_rooms_held_is_carried_or_named() {
    let src = tempfile::tempdir().unwrap();
    copy_tree(&support::fixtures().join("claude"), src.path());
    let files = support::found(Agent::Claude, src.path());
    let data = tempfile::tempdir().unwrap();
    let cairn = Cairn::open(data.path()).unwrap();
    cairn.capture_paths(&files, &Quiet).unwrap();
    // Sessions with no sub-agent and none above them: a forget of one takes it alone.
    let keys: Vec<String> = {
        let db = Connection::open(data.path().join("cairn.db")).unwrap();
        let mut stmt = db
            .prepare(
                "SELECT s.session_key FROM sessions s WHERE s.parent_key IS NULL AND NOT EXISTS
                     (SELECT 1 FROM sessions c WHERE c.parent_key = s.session_key)
                 ORDER BY s.id",
            )
            .unwrap();
        stmt.query_map([], |r| r.get(0))
            .unwrap()
            .map(Result::unwrap)
            .collect()
    };
    assert!(keys.len() >= 3, "{keys:?}");
    let (pushed, published, forgotten) = (&keys[0], &keys[1], &keys[2]);

    let forget = |key: &str| cairn_core::ForgetRequest {
        session: Some(key.to_owned()),
        ..Default::default()
    };
    cairn.forget(&forget(forgotten)).unwrap();
    let req = cairn_core::insights::GenerateRequest {
        slice: cairn_core::insights::SliceRequest {
            since: Some("2000-01-01".into()),
            until: Some("2100-01-01".into()),
            automation: cairn_core::insights::Automation::Include,
            ..Default::default()
        },
        template: "weekly-summary".into(),
        ..Default::default()
    };
    let report = cairn.insight_generate_with(&req, &Stub, &|_| {}).unwrap();
    let kept = cairn.insight_get(report.insight.id).unwrap();
    assert!(
        kept.session_keys.contains(pushed) && kept.session_keys.contains(published),
        "{kept:?}"
    );

    // What a team push, `cairn publish`, a teammate's `cairn pull` and an embeddings build
    // leave in the database (the team archive itself is PostgreSQL: tests/cli/team.rs).
    let db = Connection::open(data.path().join("cairn.db")).unwrap();
    db.execute_batch(&format!(
        "INSERT INTO team_pushed_sessions (archive, publisher, session_key, signature,
             last_record_id, pushed_at)
             VALUES ('team-1', 'me', '{pushed}', 'sig', 987654, '2026-03-01T10:00:00Z');
         INSERT INTO team_pushed_entries (archive, publisher, entry_id, updated_at)
             VALUES ('team-1', 'me', 'no-such-entry', '2026-03-01T10:00:00Z');
         INSERT INTO team_pushes (archive, publisher, finished_at, sessions_pushed,
             sessions_unchanged, sessions_withdrawn, sessions_refused, records_pushed,
             entries_pushed)
             VALUES ('team-1', 'me', '2026-03-01T10:00:00Z', 1, 0, 0, 0, 10, 1);
         INSERT INTO published_sessions (common_dir, remote, session_key, document,
             target_keys, ref_commit, imported_at)
             VALUES ('/r/.git', 'origin', 'sha256-teammate', '{{}}', '[]', 'abc',
                     '2026-03-01T10:00:00Z');
         INSERT INTO turn_vectors (turn_id, last_ordinal, fingerprint, content_hash, vector)
             SELECT id, last_ordinal, 'fp', 'h', x'0000803f' FROM turns LIMIT 2;"
    ))
    .unwrap();
    cairn_core::archive::store::mark_published(&db, published, "2026-03-02T10:00:00Z").unwrap();
    // A report that read a session forgotten since (as an older build's forget left it).
    db.execute_batch(
        "INSERT INTO insights (title, template_id, template_version, slice, generator,
             cache_key, material_hash, sessions_total, sessions_included, prompt_chars, content,
             created_at, elapsed_ms)
         VALUES ('Old', 't', '1', '{}', 'claude', 'c', 'm', 1, 1, 10, '# Old',
                 '2026-03-01T10:00:00Z', 5);",
    )
    .unwrap();
    let stale = db.last_insert_rowid();
    drop(db);
    Connection::open(data.path().join("cairn.db"))
        .unwrap()
        .execute(
            "INSERT INTO insight_sessions (insight_id, session_key) VALUES (?1, ?2)",
            rusqlite::params![stale, forgotten],
        )
        .unwrap();
    drop(cairn);

    let rebuilt = Cairn::rebuild_from_copies(data.path(), &Quiet).unwrap();
    for (what, rows) in [
        ("sessions a team push sent", 1),
        ("Recall entries a team push sent", 1),
        ("the last team push", 1),
        ("when this machine published its sessions", 1),
        ("teammates' sessions pulled through git", 1),
        ("generated insight reports", 1),
    ] {
        let c = carried(&rebuilt, what);
        assert_eq!((c.rows, &c.error), (rows, &None), "{what}: {rebuilt:#?}");
    }
    let said = rebuilt.not_carried.join("\n");
    for want in [
        "1 generated report that read a forgotten session",
        "search by meaning: the vectors of 2 turns",
        "cairn embeddings build --store sessions",
        "of what a push sent, 1 Recall entry the rebuilt archive does not hold",
    ] {
        assert!(said.contains(want), "no {want:?} in\n{said}");
    }

    let cairn = Cairn::open(data.path()).unwrap();
    // The push record: the session's last record sent is a row id of the old database, so
    // the next push sends the session whole again.
    assert_eq!(
        support::count(
            data.path(),
            &format!(
                "SELECT COUNT(*) FROM team_pushed_sessions WHERE session_key = '{pushed}'
                 AND archive = 'team-1' AND last_record_id = 0"
            ),
        ),
        1
    );
    #[cfg(feature = "team")]
    assert_eq!(
        cairn.forget_preview(&forget(pushed)).unwrap().team_pushed,
        1
    );
    // The report, under its id, with the sessions it read; the stale one is gone.
    let listed = cairn.insight_list(None, false, 10).unwrap();
    assert_eq!(
        listed.iter().map(|i| i.id).collect::<Vec<_>>(),
        [report.insight.id],
        "{listed:?}"
    );
    assert_eq!(cairn.insight_get(report.insight.id).unwrap(), kept);
    // A forget of the published session still tombstones it for `cairn publish`.
    assert_eq!(
        cairn.forget_preview(&forget(published)).unwrap().published,
        1
    );
    cairn.forget(&forget(published)).unwrap();
    assert_eq!(
        support::count(
            data.path(),
            &format!(
                "SELECT COUNT(*) FROM forgotten_shared WHERE session_key = '{published}' AND own = 1"
            ),
        ),
        1
    );
    assert_eq!(
        support::count(data.path(), "SELECT COUNT(*) FROM published_sessions"),
        1
    );
}

/// Recall's tables as they read, one line a row, sorted: each session a row names by its key
/// (a rebuild renumbers session rows), everything else as stored. The index's postings are
/// left out: their impacts are computed with the corpus averages at the time each entry was
/// indexed, so a rebuilt index orders candidates alike with other numbers (the ranker rescores
/// them exactly; the answers are compared by themselves).
fn recall_dump(data: &Path) -> String {
    let db = Connection::open(data.join("cairn.db")).unwrap();
    let mut out = Vec::new();
    for table in [
        "recall_entries",
        "recall_evidence",
        "recall_proposals",
        "recall_feedback",
        "recall_query_events",
        "recall_query_exposures",
        "recall_extract_generations",
        "recall_extract_progress",
        "recall_extract_entries",
        "recall_extract_runs",
        "recall_terms",
        "recall_df",
        "recall_stats",
    ] {
        let columns: Vec<String> = db
            .prepare("SELECT name FROM pragma_table_info(?1) ORDER BY cid")
            .unwrap()
            .query_map([table], |r| r.get(0))
            .unwrap()
            .map(Result::unwrap)
            .collect();
        let read: Vec<String> = columns
            .iter()
            .map(|c| match c.as_str() {
                "session_id" | "source_session_id" => {
                    format!("(SELECT session_key FROM sessions WHERE id = t.{c})")
                }
                _ => format!("t.{c}"),
            })
            .collect();
        let sql = format!("SELECT {} FROM {table} t", read.join(", "));
        let mut stmt = db.prepare(&sql).unwrap();
        let rows = stmt
            .query_map([], |r| {
                let mut cols = Vec::new();
                for i in 0..columns.len() {
                    let v: rusqlite::types::Value = r.get(i)?;
                    cols.push(format!("{v:?}"));
                }
                Ok(format!("{table}: {}", cols.join(" | ")))
            })
            .unwrap();
        out.extend(rows.map(Result::unwrap));
    }
    out.sort();
    out.join("\n") + "\n"
}

/// `text` without the lines that name `id`.
fn without(text: &str, id: &str) -> String {
    text.lines()
        .filter(|l| !l.contains(&format!("'{id}'")) && !l.contains(&format!("\"{id}\"")))
        .map(|l| format!("{l}\n"))
        .collect()
}

/// The real Claude fixtures captured, `before_import` run on the database, then the Recall
/// question set's entries imported (what `support::recall_archive` makes, with a hook).
fn recall_archive_after(before_import: impl FnOnce(&Connection)) -> (tempfile::TempDir, Cairn) {
    let data = tempfile::tempdir().unwrap();
    let cairn = Cairn::open(data.path()).unwrap();
    let sd = cairn_core::archive::discover::SourceDir {
        agent: Agent::Claude,
        path: support::fixtures().join("claude"),
        origin: cairn_core::archive::discover::DirOrigin::Env,
    };
    let files = cairn_core::archive::discover::walk(&sd, &mut Vec::new());
    cairn.capture_paths(&files, &Quiet).unwrap();
    before_import(&Connection::open(data.path().join("cairn.db")).unwrap());
    let entries =
        std::fs::read_to_string(support::fixtures().join("recall/entries.jsonl")).unwrap();
    let report = cairn.recall_import(&entries, false).unwrap();
    assert!(report.errors.is_empty(), "{:?}", report.errors);
    (data, cairn)
}

/// What the facade answers of Recall: the served entries, the rejected and replaced ones, the
/// inbox, a query's results and a brief's packed text. `leave` is taken out of every list
/// (an entry whose trust the rebuild changes on purpose).
fn recall_answers(cairn: &Cairn, leave: &str) -> String {
    use cairn_core::recall::model::{Status, Surface};
    use cairn_core::recall::store::Filters;
    let listed = |status| {
        cairn
            .recall_list(&Filters {
                status: Some(status),
                limit: Some(500),
                ..Filters::default()
            })
            .unwrap()
            .into_iter()
            .filter(|e| e.id != leave)
            .collect::<Vec<_>>()
    };
    let inbox: Vec<_> = cairn
        .recall_inbox(500)
        .unwrap()
        .into_iter()
        .filter(|i| i.entry.id != leave)
        .collect();
    let ask = |text: &str, surface, context| {
        let req = cairn_core::recall::QueryRequest {
            text: text.into(),
            context,
            ..Default::default()
        };
        let resp = cairn.recall_query(&req, surface).unwrap();
        let ids: Vec<String> = resp
            .results
            .into_iter()
            .map(|r| r.entry.id)
            .filter(|id| id != leave)
            .collect();
        (ids, resp.context.map(|c| (c.text, c.entry_ids)))
    };
    format!(
        "{:#?}\n{:#?}\n{inbox:#?}\n{:#?}\n{:#?}",
        listed(Status::Accepted),
        listed(Status::Archived),
        ask("opentelemetry propagators config", Surface::Query, false),
        ask("how do I run the quality checks", Surface::Brief, true),
    )
}

/// A person's Recall comes through a rebuild from the copies: the entries they accepted,
/// rejected, replaced or sent back to the inbox, the evidence into each session (following its
/// records), what agents said of them, the ledger and extraction's progress, row for row, and
/// `recall list`, the inbox, a query and a brief answer as before. The entry whose evidence
/// was cited over records the copies read differently is revoked, as a reindex revokes it; the
/// one whose session a forget took stays as the forget left it.
#[test]
fn recall_comes_through_a_rebuild_as_a_person_left_it() {
    use cairn_core::recall::agents::{Speaker, Verdict};
    use cairn_core::recall::model::ReviewState;
    // As an older parser read it: record 12 of the session `xterm-scroll` cites.
    let misread = "xterm-scroll";
    let (data, cairn) = recall_archive_after(|db| {
        let changed = db
            .execute(
                "UPDATE records SET text = 'read otherwise by an older parser'
                 WHERE ordinal = 12 AND session_id =
                     (SELECT id FROM sessions WHERE session_id = 'd6e0bada-1959-4eec-a9d2-0bfade768d8f')",
                [],
            )
            .unwrap();
        assert_eq!(changed, 1);
    });
    assert!(cairn.recall_get(misread).unwrap().is_trusted());
    // A person's work: an accept taken back, a rejection, a replacement; a forget.
    cairn
        .recall_unaccept("otel-readme", ReviewState::UnreviewedAuto)
        .unwrap();
    cairn.recall_reject("beads-sync").unwrap();
    cairn
        .recall_supersede("otel-console-dev", "otel-disable-tests")
        .unwrap();
    cairn
        .forget(&cairn_core::ForgetRequest {
            session: Some("1af7fc5e-8455-4414-9ccd-011d40f70b2a".to_owned()),
            ..Default::default()
        })
        .unwrap();
    let forgotten = cairn.recall_get("claude-md-empty-repo").unwrap();
    assert!(
        forgotten.evidence.is_empty() && forgotten.review_state == ReviewState::UnreviewedAuto,
        "{forgotten:?}"
    );
    // What agents said, through `cairn mcp`.
    let mut writer = cairn.agent_writer().unwrap();
    let who = Speaker {
        agent: "claude".into(),
        server_session: "s1".into(),
        ..Default::default()
    };
    cairn
        .agent_feedback(
            &mut writer,
            "quality-alias",
            Verdict::Helpful,
            "it ran",
            None,
            &who,
        )
        .unwrap();
    drop(writer);
    // Extraction's state of one session, as a pass leaves it.
    let db = Connection::open(data.path().join("cairn.db")).unwrap();
    db.execute_batch(
        "INSERT INTO recall_extract_generations (fingerprint, state, model, segmenter,
             params_json, identity_json, created_at, updated_at)
             VALUES ('fp-1', 'active', 'm', 'turns-v1', '{}', '{}', '2026-03-01T10:00:00Z',
                     '2026-03-01T10:00:00Z');
         INSERT INTO recall_extract_progress (session_id, fingerprint, state, unit_cursor,
             units_total, unit_digests, covered_ordinal, updated_at)
             SELECT id, 'fp-1', 'done', 2, 2, '[\"a\",\"b\"]', next_ordinal,
                    '2026-03-01T10:00:00Z'
             FROM sessions WHERE session_id = '491e126e-1e71-469c-ade2-fcc8af567c74';
         INSERT INTO recall_extract_entries (entry_id, fingerprint, session_id, unit_index, state)
             SELECT 'code-quality-tools', 'fp-1', id, 1, 'published'
             FROM sessions WHERE session_id = '491e126e-1e71-469c-ade2-fcc8af567c74';
         INSERT INTO recall_extract_runs (fingerprint, started_at, sessions, units, entries)
             VALUES ('fp-1', '2026-03-01T10:00:00Z', 1, 2, 1);",
    )
    .unwrap();
    drop(db);
    let answers = recall_answers(&cairn, misread);
    let dump = recall_dump(data.path());
    assert!(dump.contains("recall_feedback: "), "{dump}");
    drop(cairn);

    let report = Cairn::rebuild_from_copies(data.path(), &Quiet).unwrap();
    assert!(report.skipped.is_empty(), "{report:#?}");
    for (what, rows) in [
        ("entries, with their reviews", 26),
        ("evidence (record ranges", 25),
        ("agents' feedback on entries", 1),
        ("extraction generations", 1),
        ("extraction progress of each session", 1),
        ("the entries each extraction generation wrote", 1),
        ("extraction passes", 1),
    ] {
        let c = carried(&report, what);
        assert_eq!((c.rows, &c.error), (rows, &None), "{what}: {report:#?}");
        let room = report.carried.iter().find(|c| c.what.starts_with(what));
        assert_eq!(room.unwrap().room, "recall");
    }

    // Row for row, the one revoked entry aside; the index made again.
    support::same(
        &without(&recall_dump(data.path()), misread),
        &without(&dump, misread),
        "Recall's tables",
    );
    let cairn = Cairn::open(data.path()).unwrap();
    let revoked = cairn.recall_get(misread).unwrap();
    assert!(
        !revoked.provenance_ok && !revoked.is_trusted(),
        "{revoked:?}"
    );
    assert!(
        revoked
            .provenance_note
            .as_deref()
            .is_some_and(|n| n.contains("changed")),
        "{revoked:?}"
    );
    assert_eq!(revoked.review_state, ReviewState::HumanReviewed);
    let said = report.not_carried.join("\n");
    assert!(
        said.contains("Recall: 1 entry whose evidence reads differently"),
        "{said}"
    );
    assert!(!said.contains("Recall: 26"), "{said}");
    // As the forget left it: back in the inbox, no evidence, untrusted.
    assert_eq!(cairn.recall_get("claude-md-empty-repo").unwrap(), forgotten);
    support::same(
        &recall_answers(&cairn, misread),
        &answers,
        "Recall's answers",
    );
}

/// Recall's tables the old database no longer reads: named in the report, never fatal; the
/// sessions are rebuilt all the same.
#[test]
fn recall_tables_the_old_database_cannot_read_are_named() {
    let (data, cairn) = support::recall_archive();
    drop(cairn);
    let db = data.path().join("cairn.db");
    let (page_size, root): (i64, i64) = {
        let conn = Connection::open(&db).unwrap();
        conn.execute_batch("PRAGMA wal_checkpoint(TRUNCATE)")
            .unwrap();
        (
            conn.query_row("PRAGMA page_size", [], |r| r.get(0))
                .unwrap(),
            conn.query_row(
                "SELECT rootpage FROM sqlite_schema WHERE name = 'recall_entries'",
                [],
                |r| r.get(0),
            )
            .unwrap(),
        )
    };
    // A failing disk: the table's root page overwritten.
    let mut bytes = std::fs::read(&db).unwrap();
    let at = usize::try_from((root - 1) * page_size).unwrap();
    let size = usize::try_from(page_size).unwrap();
    for (i, b) in bytes[at..at + size].iter_mut().enumerate() {
        *b = (i as u8).wrapping_mul(37) ^ 0xA5;
    }
    std::fs::write(&db, &bytes).unwrap();

    let report = Cairn::rebuild_from_copies(data.path(), &Quiet).unwrap();
    assert!(report.sessions > 0, "{report:#?}");
    let entries = carried(&report, "entries, with their reviews");
    assert_eq!(entries.rows, 0, "{report:#?}");
    assert!(
        entries.error.as_deref().is_some_and(|e| !e.is_empty()),
        "{report:#?}"
    );
    let cairn = Cairn::open(data.path()).unwrap();
    assert!(cairn.recall_list(&Default::default()).unwrap().is_empty());
}

/// Evidence whose session was not rebuilt: one a forget tombstoned (as a forget made while a
/// rebuild ran leaves it) is revoked as that forget revokes it (an entry no person accepted
/// goes with it, one a person accepted goes back to the inbox); one whose copies are gone
/// cannot be checked, and its entry is no longer trusted.
#[test]
fn evidence_of_sessions_not_rebuilt_is_revoked() {
    use cairn_core::recall::agents::{EvidenceRef, Proposal, Speaker};
    use cairn_core::recall::model::{EntryType, ReviewState};
    let (data, cairn) = support::recall_archive();
    let (tombstoned, lost) = (
        "1af7fc5e-8455-4414-9ccd-011d40f70b2a",
        "55604662-cf2a-4331-851a-ec234028f8ca",
    );
    let mut writer = cairn.agent_writer().unwrap();
    let proposed = cairn
        .agent_propose(
            &mut writer,
            &Proposal {
                entry_type: EntryType::Fact,
                scope: None,
                title: "Qqproposed about the empty repository".into(),
                body: "as the session said".into(),
                trigger: String::new(),
                evidence: vec![EvidenceRef {
                    session: tombstoned.into(),
                    from: 0,
                    to: 1,
                }],
            },
            &Speaker {
                agent: "claude".into(),
                server_session: "s1".into(),
                ..Default::default()
            },
        )
        .unwrap()
        .entry_id;
    drop(writer);
    let key_of = |id: &str| -> String {
        Connection::open(data.path().join("cairn.db"))
            .unwrap()
            .query_row(
                "SELECT session_key FROM sessions WHERE session_id = ?1",
                [id],
                |r| r.get(0),
            )
            .unwrap()
    };
    let (tombstoned_key, lost_key) = (key_of(tombstoned), key_of(lost));
    Connection::open(data.path().join("cairn.db"))
        .unwrap()
        .execute(
            "INSERT INTO forgotten_sessions (session_key, agent, forgotten_at)
             VALUES (?1, 'claude', '2026-03-01T10:00:00Z')",
            [&tombstoned_key],
        )
        .unwrap();
    drop(cairn);
    for copy in copies_of(data.path()) {
        if manifest_of(&copy).0["session"]["key"] == lost_key.as_str() {
            std::fs::remove_file(copy).unwrap();
        }
    }

    let report = Cairn::rebuild_from_copies(data.path(), &Quiet).unwrap();
    let cairn = Cairn::open(data.path()).unwrap();
    let gone = cairn.recall_get(&proposed).unwrap_err();
    assert_eq!(gone.kind(), cairn_core::ErrorKind::NotFound, "{gone}");
    let accepted = cairn.recall_get("claude-md-empty-repo").unwrap();
    assert!(
        accepted.evidence.is_empty()
            && accepted.review_state == ReviewState::UnreviewedAuto
            && !accepted.provenance_ok,
        "{accepted:?}"
    );
    assert!(
        cairn
            .recall_inbox(500)
            .unwrap()
            .iter()
            .any(|i| i.entry.id == "claude-md-empty-repo")
    );
    // No session row stood in for the forgotten one afterwards.
    assert_eq!(
        support::count(
            data.path(),
            &format!("SELECT COUNT(*) FROM sessions WHERE session_key = '{tombstoned_key}'"),
        ),
        0
    );
    let unchecked = cairn.recall_get("phx-server-fails").unwrap();
    assert!(!unchecked.is_trusted(), "{unchecked:?}");
    assert!(
        unchecked
            .provenance_note
            .as_deref()
            .is_some_and(|n| n.contains("was not rebuilt")),
        "{unchecked:?}"
    );
    let said = report.not_carried.join("\n");
    assert!(
        said.contains("Recall: 2 evidence ranges citing forgotten sessions"),
        "{said}"
    );
    assert!(
        said.contains("Recall: 1 evidence range in sessions that were not rebuilt"),
        "{said}"
    );
}

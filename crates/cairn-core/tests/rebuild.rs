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
    let entries = cairn
        .recall_list(&Default::default())
        .map(|e| e.len())
        .unwrap_or(0);
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
    // Recall lives in the database alone: said, not silently dropped.
    let said = report.not_carried.join("\n");
    assert!(
        said.contains(&format!("Recall: {entries} ")) || (entries == 0 && said.contains("Recall")),
        "{said}"
    );
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

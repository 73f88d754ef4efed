//! `reindex`: an archive an older Cairn captured, read again from its retained copies after
//! the transcripts are gone, is the archive this build captures from those transcripts.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use cairn_core::archive::Agent;
use cairn_core::archive::capture::Quiet;
use cairn_core::archive::discover::FoundFile;
use cairn_core::{Cairn, ReindexRequest};
use rusqlite::Connection;

use crate::support::{self, index_is_whole, same};

/// Line transcripts of every agent that writes them (documents, databases and trees are
/// `UNIT_SOURCES` below): the fixture folder, and where it goes in the folder discovery walks
/// (kiro-cli's logs are known by their place).
pub(crate) const LINE_AGENTS: &[(Agent, &str, &str)] = &[
    (Agent::Claude, "claude", ""),
    (Agent::Codex, "codex", ""),
    (Agent::Copilot, "copilot", ""),
    (Agent::Qwen, "qwen", ""),
    (Agent::Droid, "droid", ""),
    (Agent::Kimi, "kimi", ""),
    (Agent::Pi, "pi", ""),
    (Agent::Openclaw, "openclaw", ""),
    (Agent::Grok, "grok", ""),
    (Agent::Antigravity, "antigravity", ""),
    (Agent::Vibe, "vibe", ""),
    (Agent::Iflow, "iflow", ""),
    (Agent::Traex, "traex", ""),
    (Agent::Gptme, "gptme", ""),
    (Agent::Posit, "posit", ""),
    (Agent::Cursor, "cursor", ""),
    (Agent::Aider, "aider", ""),
    (Agent::Kiro, "kiro/sessions/cli", ".kiro/sessions/cli"),
    // A `#` in a folder's name (kiro-cli keeps a database too) is no database session's mark.
    (Agent::Kiro, "kiro/sessions/cli", "me#2/.kiro/sessions/cli"),
];

pub(crate) fn copy_tree(from: &Path, to: &Path) {
    for file in support::files_under(from) {
        let rel = file.strip_prefix(from).unwrap();
        support::copy_into(&file, to, rel.to_str().unwrap());
    }
}

/// What an older parser left in an archive: prompts it took for injected text, results whose
/// exit code it missed, lines it skipped (their records and index entries gone, their turns'
/// counters as they were). Returns how many records were touched.
fn age(data: &Path) -> usize {
    let db = Connection::open(data.join("cairn.db")).unwrap();
    let mut n = db
        .execute(
            "UPDATE records SET prompt_source = 'system_injected'
             WHERE prompt_source = 'human' AND ordinal % 2 = 1",
            [],
        )
        .unwrap();
    n += db
        .execute(
            "UPDATE records SET exit_code = NULL, outcome = NULL
             WHERE kind = 'tool_result' AND outcome IS NOT NULL AND ordinal % 3 = 0",
            [],
        )
        .unwrap();
    let skipped: Vec<(i64, String)> = db
        .prepare(
            "SELECT id, text FROM records
             WHERE text IS NOT NULL AND tool_input IS NULL AND ordinal % 5 = 4",
        )
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    db.execute_batch("CREATE TEMP TABLE gone (session_id INTEGER, ordinal INTEGER)")
        .unwrap();
    for (id, text) in &skipped {
        db.execute(
            "INSERT INTO records_fts (records_fts, rowid, text, tool_input) VALUES ('delete', ?1, ?2, NULL)",
            rusqlite::params![id, text],
        )
        .unwrap();
        db.execute(
            "INSERT INTO gone SELECT session_id, ordinal FROM records WHERE id = ?1",
            [id],
        )
        .unwrap();
        db.execute("DELETE FROM records WHERE id = ?1", [id])
            .unwrap();
    }
    // Without those lines the older capture numbered every record after them one less, and
    // its capture batches' ranges with them.
    db.execute_batch(
        "UPDATE records SET ordinal = -1 - ordinal + (SELECT COUNT(*) FROM gone g
             WHERE g.session_id = records.session_id AND g.ordinal < records.ordinal);
         UPDATE records SET ordinal = -1 - ordinal;
         UPDATE captures SET
             first_ordinal = first_ordinal - (SELECT COUNT(*) FROM gone g
                 WHERE g.session_id = captures.session_id AND g.ordinal < captures.first_ordinal),
             last_ordinal = last_ordinal - (SELECT COUNT(*) FROM gone g
                 WHERE g.session_id = captures.session_id AND g.ordinal <= captures.last_ordinal);
         UPDATE sessions SET next_ordinal = next_ordinal - (SELECT COUNT(*) FROM gone g
             WHERE g.session_id = sessions.id);",
    )
    .unwrap();
    n + skipped.len()
}

/// Sources read by units: documents (Gemini's JSON, Cline-family task logs, Cline SDK
/// sessions), databases (Crush's real one, Cursor's IDE store, kiro-cli's, Visual Studio's trace
/// files loaded whole), OpenCode's storage tree. Each lays its files out under a folder and says what discovery finds there.
pub(crate) type Layout = fn(&Path) -> Vec<FoundFile>;
pub(crate) const UNIT_SOURCES: &[(&str, Layout)] = &[
    ("gemini", |root| {
        copy_tree(&support::fixtures().join("gemini"), root);
        support::found(Agent::Gemini, root)
    }),
    ("cline", |root| {
        copy_tree(&support::fixtures().join("cline"), root);
        let mut files = Vec::new();
        for (agent, ext) in [
            (Agent::Cline, "saoudrizwan.claude-dev"),
            (Agent::Roo, "rooveterinaryinc.roo-cline"),
            (Agent::Kilo, "kilocode.kilo-code"),
        ] {
            files.extend(support::found(agent, &root.join(ext)));
        }
        files.extend(support::found(Agent::Cline, &root.join("sdk")));
        files
    }),
    ("hermes", |root| {
        copy_tree(&support::fixtures().join("hermes"), root);
        support::found(Agent::Hermes, root)
    }),
    // The fixtures' sessions are too short for the ageing to touch: one goes on a while.
    ("qwenpaw", |root| {
        copy_tree(&support::fixtures().join("qwenpaw"), root);
        let path = root.join("default/sessions/main_main.json");
        let mut doc: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        let memory = doc["agent"]["memory"]["content"].as_array_mut().unwrap();
        for (i, text) in ["And the tests?", "Run them", "Thanks"].iter().enumerate() {
            memory.push(serde_json::json!([{"id": format!("more{i}"), "role": "user",
                "content": [{"type": "text", "text": text}], "timestamp": "2026-03-16 09:05:00.000"}, []]));
            memory.push(serde_json::json!([{"id": format!("answer{i}"), "role": "assistant",
                "content": [{"type": "text", "text": format!("On it ({i})")}], "timestamp": "2026-03-16 09:05:01.000"}, []]));
        }
        std::fs::write(&path, doc.to_string()).unwrap();
        support::found(Agent::Qwenpaw, root)
    }),
    ("crush", |root| {
        copy_tree(&support::fixtures().join("crush"), root);
        support::found(Agent::Crush, root)
    }),
    ("cursor ide", |root| {
        support::agent_dbs::cursor_ide_store(root);
        support::found(Agent::Cursor, &root.join("User/globalStorage"))
    }),
    // A trace file loaded whole; one conversation carried over four files.
    ("vscopilot traces", |root| {
        copy_tree(&support::fixtures().join("vscopilot"), root);
        support::found(Agent::Vscopilot, root)
    }),
    ("kiro database", |root| {
        support::agent_dbs::kiro_database(root);
        support::found(Agent::Kiro, &root.join("kiro-cli"))
    }),
    ("opencode tree", |root| {
        copy_tree(&support::fixtures().join("opencode"), root);
        support::found(Agent::Opencode, root)
    }),
    // A `#` in a folder's name is no database session's mark.
    ("opencode tree under a # folder", |root| {
        let root = root.join("notes#2");
        copy_tree(&support::fixtures().join("opencode"), &root);
        support::found(Agent::Opencode, &root)
    }),
];

/// Every record's place: its session, ordinal and key, and whether it is live.
fn placed(data: &Path) -> String {
    let db = Connection::open(data.join("cairn.db")).unwrap();
    let mut stmt = db
        .prepare(
            "SELECT s.session_key, r.ordinal, r.record_hash, r.block, r.retracted_at IS NULL
             FROM records r JOIN sessions s ON s.id = r.session_id ORDER BY 1, 2",
        )
        .unwrap();
    stmt.query_map([], |r| {
        Ok(format!(
            "{} {} {}#{} {}\n",
            r.get::<_, String>(0)?,
            r.get::<_, i64>(1)?,
            r.get::<_, String>(2)?,
            r.get::<_, i64>(3)?,
            r.get::<_, bool>(4)?
        ))
    })
    .unwrap()
    .map(Result::unwrap)
    .collect()
}

/// Each capture batch's range of ordinals, in order.
fn capture_ranges(data: &Path) -> String {
    let db = Connection::open(data.join("cairn.db")).unwrap();
    let mut stmt = db
        .prepare(
            "SELECT s.session_key, c.first_ordinal, c.last_ordinal, c.records_added
             FROM captures c JOIN sessions s ON s.id = c.session_id ORDER BY c.id",
        )
        .unwrap();
    stmt.query_map([], |r| {
        Ok(format!(
            "{} {:?}..{:?} ({})\n",
            r.get::<_, String>(0)?,
            r.get::<_, Option<i64>>(1)?,
            r.get::<_, Option<i64>>(2)?,
            r.get::<_, i64>(3)?
        ))
    })
    .unwrap()
    .map(Result::unwrap)
    .collect()
}

/// Two archive texts are the same; else the first line where they part, not both whole.
/// `files` (laid out in `src`) captured twice, one archive aged as an older parser would
/// have left it; the transcripts go, and the aged archive read again from its copies must be
/// the fresh one, and a second reindex must find nothing to change.
fn reindexed_is_fresh(what: &str, src: tempfile::TempDir, files: &[FoundFile]) {
    assert!(!files.is_empty(), "{what}: no transcript found");
    let old = tempfile::tempdir().unwrap();
    let aged = Cairn::open(old.path()).unwrap();
    aged.capture_paths(files, &Quiet).unwrap();
    let fresh = tempfile::tempdir().unwrap();
    Cairn::open(fresh.path())
        .unwrap()
        .capture_paths(files, &Quiet)
        .unwrap();
    let want = support::dump(fresh.path());

    // The agent cleaned its transcripts up: only the retained copies are left.
    drop(src);
    assert!(age(old.path()) > 0, "{what}: nothing to put right");
    assert!(
        support::dump(old.path()) != want,
        "{what}: the ageing changed nothing"
    );
    let report = aged
        .reindex(&ReindexRequest::default(), &Quiet)
        .unwrap_or_else(|e| panic!("{what}: {e}"));
    assert!(report.sessions > 0, "{what}: {report:?}");
    assert!(report.records_changed > 0, "{what}: {report:?}");
    assert!(report.skipped.is_empty(), "{what}: {report:?}");
    same(&support::dump(old.path()), &want, what);
    same(&placed(old.path()), &placed(fresh.path()), what);
    support::assert_ordinals_dense(old.path());
    index_is_whole(old.path());

    let again = aged.reindex(&ReindexRequest::default(), &Quiet).unwrap();
    assert_eq!(again.records_changed, 0, "{what}: {again:?}");
    same(&support::dump(old.path()), &want, what);
}

#[test]
fn an_aged_archive_reindexed_from_its_copies_is_what_a_fresh_capture_makes() {
    for &(agent, dir, place) in LINE_AGENTS {
        let src = tempfile::tempdir().unwrap();
        let root = src.path().join(place);
        copy_tree(&support::fixtures().join(dir), &root);
        let files = support::found(agent, &root);
        reindexed_is_fresh(dir, src, &files);
    }
}

#[test]
fn sources_read_by_units_are_replayed_from_their_copies() {
    for &(name, layout) in UNIT_SOURCES {
        let src = tempfile::tempdir().unwrap();
        let files = layout(src.path());
        reindexed_is_fresh(name, src, &files);
    }
}

/// A change to one agent's reader offers only that agent's sessions a reindex, and
/// `outdated` reads those alone: here Hermes's (zoneless times, a folder from the home), read
/// by revision 3 beside Claude's, whose transcripts read as they did.
#[test]
fn only_the_sessions_of_an_agent_whose_reader_changed_are_outdated() {
    use cairn_core::archive::sources::{PARSERS_REVISION, unchanged_since};
    assert!(unchanged_since(Agent::Hermes) > unchanged_since(Agent::Claude));
    let src = tempfile::tempdir().unwrap();
    copy_tree(
        &support::fixtures().join("hermes"),
        &src.path().join("hermes"),
    );
    copy_tree(
        &support::fixtures().join("claude"),
        &src.path().join("claude"),
    );
    let mut files = support::found(Agent::Hermes, &src.path().join("hermes"));
    files.extend(support::found(Agent::Claude, &src.path().join("claude")));
    let data = tempfile::tempdir().unwrap();
    let cairn = Cairn::open(data.path()).unwrap();
    cairn.capture_paths(&files, &Quiet).unwrap();
    assert_eq!(cairn.sessions_read_before().unwrap(), 0);

    // What revision 3 left: every session read by it, Hermes's drift session without times.
    let db = Connection::open(data.path().join("cairn.db")).unwrap();
    let before = unchanged_since(Agent::Hermes) - 1;
    db.execute("UPDATE sessions SET read_by = ?1", [before])
        .unwrap();
    db.execute(
        "UPDATE sessions SET started_at = NULL, updated_at = NULL
         WHERE session_id = '20260429_hermes_schema_drift'",
        [],
    )
    .unwrap();
    let hermes = support::count(
        data.path(),
        "SELECT COUNT(*) FROM sessions WHERE agent = 'hermes'",
    );
    let claude = support::count(
        data.path(),
        "SELECT COUNT(*) FROM sessions WHERE agent = 'claude'",
    );
    assert!(hermes == 3 && claude > 0, "{hermes} {claude}");
    assert_eq!(i64::from(cairn.sessions_read_before().unwrap()), hermes);

    let req = ReindexRequest {
        outdated: true,
        ..Default::default()
    };
    let report = cairn.reindex(&req, &Quiet).unwrap();
    assert_eq!(i64::from(report.sessions), hermes, "{report:?}");
    assert_eq!(cairn.sessions_read_before().unwrap(), 0);
    let read_by = |agent: &str| {
        support::count(
            data.path(),
            &format!("SELECT MIN(read_by) FROM sessions WHERE agent = '{agent}'"),
        )
    };
    assert_eq!(
        (read_by("hermes"), read_by("claude")),
        (PARSERS_REVISION, before)
    );
    let timed = support::count(
        data.path(),
        "SELECT COUNT(*) FROM sessions WHERE session_id = '20260429_hermes_schema_drift'
         AND started_at IS NOT NULL AND updated_at IS NOT NULL",
    );
    assert_eq!(timed, 1, "the reindex gave the drift session its times");
    // Without `outdated`, every session is read again.
    let all = cairn.reindex(&ReindexRequest::default(), &Quiet).unwrap();
    assert_eq!(i64::from(all.sessions), hermes + claude);
}

/// Capture `files` into every archive of `into`.
fn capture_all(into: &[&Cairn], files: &[FoundFile]) {
    for cairn in into {
        cairn.capture_paths(files, &Quiet).unwrap();
    }
}

fn gemini_message(id: &str, kind: &str, text: &str) -> serde_json::Value {
    serde_json::json!({"id": id, "timestamp": "2026-01-01T00:00:01Z", "type": kind, "content": text})
}

fn gemini_doc(messages: &[serde_json::Value]) -> String {
    serde_json::json!({"sessionId": "doc-1", "projectHash": "00", "startTime": "2026-01-01T00:00:00Z",
        "lastUpdated": "2026-01-01T00:10:00Z", "messages": messages})
    .to_string()
}

/// An archive in a folder of its own.
struct Archive {
    dir: tempfile::TempDir,
    cairn: Cairn,
}

impl Archive {
    fn new() -> Archive {
        let dir = tempfile::tempdir().unwrap();
        let cairn = Cairn::open(dir.path()).unwrap();
        Archive { dir, cairn }
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }
}

/// Where a legacy Gemini document of one session goes under `src`, and it as a found file.
fn gemini_doc_in(src: &Path) -> (std::path::PathBuf, [FoundFile; 1]) {
    let chats = src.join("g/chats");
    std::fs::create_dir_all(&chats).unwrap();
    let doc = chats.join("session-2026-01-01T00-00-doc1.json");
    let found = [support::main_file(Agent::Gemini, &doc)];
    (doc, found)
}

/// A history of reads (a transcript read as it grew, then rewritten shorter, which starts a
/// new generation of its copy; a document whose messages were edited, added and deleted
/// between reads) is replayed to the archive the same reads make: records read again update
/// in place, records of a unit deleted stay retracted, nothing is stored twice.
#[test]
fn a_history_of_reads_is_replayed_to_the_archive_it_made() {
    let src = tempfile::tempdir().unwrap();
    let (old, clean) = (Archive::new(), Archive::new());
    let (aged, kept) = (&old.cairn, &clean.cairn);
    let both = [aged, kept];

    let full = std::fs::read_to_string(support::fixtures().join("claude/small.jsonl")).unwrap();
    let lines: Vec<&str> = full.lines().collect();
    let log = src
        .path()
        .join("proj/3f1c0c1e-0000-4000-8000-000000000001.jsonl");
    std::fs::create_dir_all(log.parent().unwrap()).unwrap();
    let claude = [support::main_file(Agent::Claude, &log)];
    for upto in [10, 30, lines.len()] {
        std::fs::write(&log, lines[..upto].join("\n") + "\n").unwrap();
        capture_all(&both, &claude);
    }
    // Rewritten shorter, then grown again: a new generation.
    std::fs::write(&log, lines[..15].join("\n") + "\n").unwrap();
    capture_all(&both, &claude);
    std::fs::write(&log, lines[..20].join("\n") + "\n").unwrap();
    capture_all(&both, &claude);

    let (doc, gemini) = gemini_doc_in(src.path());
    let a = gemini_message("m1", "user", "run the tests");
    let b = gemini_message("m2", "gemini", "running them");
    let c = gemini_message("m3", "user", "and the lints");
    std::fs::write(&doc, gemini_doc(&[a.clone(), b])).unwrap();
    capture_all(&both, &gemini);
    let b2 = gemini_message("m2", "gemini", "they pass");
    std::fs::write(&doc, gemini_doc(&[a.clone(), b2, c.clone()])).unwrap();
    capture_all(&both, &gemini);
    std::fs::write(&doc, gemini_doc(&[a, c])).unwrap();
    capture_all(&both, &gemini);

    let want = support::dump(clean.path());
    let want_placed = placed(clean.path());
    let want_ranges = capture_ranges(clean.path());
    assert!(
        want_placed.contains(" false\n"),
        "the history retracts a message"
    );
    // Reading an archive again with the parsers that wrote it changes nothing.
    let r = kept.reindex(&ReindexRequest::default(), &Quiet).unwrap();
    assert_eq!((r.sessions, r.records_changed), (2, 0), "{r:?}");
    same(&support::dump(clean.path()), &want, "unchanged");
    same(&placed(clean.path()), &want_placed, "unchanged");
    same(&capture_ranges(clean.path()), &want_ranges, "unchanged");

    drop(src);
    assert!(age(old.path()) > 0);
    let r = aged.reindex(&ReindexRequest::default(), &Quiet).unwrap();
    assert!(r.records_changed > 0, "{r:?}");
    same(&support::dump(old.path()), &want, "history");
    same(&placed(old.path()), &want_placed, "history");
    // Each capture batch (what a git snapshot is attached to) holds its own records again.
    same(&capture_ranges(old.path()), &want_ranges, "captures");
    index_is_whole(old.path());
}

/// A document whose copy outgrows a capture batch is replayed in batches of that size: a
/// unit versioned again in a later batch, units deleted long after their first read, and the
/// cursor stored last come out as the reads made them.
#[test]
fn a_long_document_history_is_replayed_in_batches() {
    let src = tempfile::tempdir().unwrap();
    let (old, clean) = (Archive::new(), Archive::new());
    let (aged, kept) = (&old.cairn, &clean.cairn);
    let both = [aged, kept];
    let (doc, gemini) = gemini_doc_in(src.path());
    // Two messages of 2.5 MB each: the copy passes the 4 MiB batch between them.
    let long = |id: &str, word: &str| {
        gemini_message(
            id,
            "gemini",
            &format!("{word} ").repeat(2_500_000 / (word.len() + 1)),
        )
    };
    let a = gemini_message("m1", "user", "run the tests");
    let b = gemini_message("m2", "gemini", "running them");
    let c = gemini_message("m3", "user", "and the lints");
    let d = gemini_message("m4", "gemini", "clean");
    std::fs::write(&doc, gemini_doc(&[a.clone(), long("m5", "alpha"), b])).unwrap();
    capture_all(&both, &gemini);
    let b2 = gemini_message("m2", "gemini", "they pass");
    let reads = [
        vec![
            a.clone(),
            long("m5", "alpha"),
            b2,
            c.clone(),
            long("m6", "omega"),
        ],
        vec![a.clone(), c.clone(), long("m6", "omega"), d.clone()],
        vec![
            a,
            c,
            long("m6", "omega"),
            gemini_message("m4", "gemini", "clean, twice"),
        ],
    ];
    for messages in reads {
        std::fs::write(&doc, gemini_doc(&messages)).unwrap();
        capture_all(&both, &gemini);
    }
    let want = support::dump(clean.path());
    let want_placed = placed(clean.path());
    assert!(want_placed.contains(" false\n"), "the history retracts");
    drop(src);
    assert!(age(old.path()) > 0);
    let r = aged.reindex(&ReindexRequest::default(), &Quiet).unwrap();
    assert!(r.records_changed > 0, "{r:?}");
    same(&support::dump(old.path()), &want, "long history");
    same(&placed(old.path()), &want_placed, "long history");
    index_is_whole(old.path());
    let r = kept.reindex(&ReindexRequest::default(), &Quiet).unwrap();
    assert_eq!(r.records_changed, 0, "{r:?}");
    same(&support::dump(clean.path()), &want, "unchanged");
    let (units, _) = cursor_revisions(clean.path());
    assert_eq!(units.as_object().map(|u| u.len()), Some(4), "{units}");
}

/// The big Claude fixture's session, captured from a copy that is then deleted.
const BIG: &str = "ae4a77f8-aedd-4bc1-888f-c94edc91af04";

/// What an older parser did to one session: record `skipped` never read (every record after
/// it one ordinal lower) and the record at `misread` given another role. Returns the
/// session's row.
fn misread_session(data: &Path, session: &str, skipped: i64, misread: i64) -> i64 {
    let db = Connection::open(data.join("cairn.db")).unwrap();
    let row: i64 = db
        .query_row(
            "SELECT id FROM sessions WHERE session_id = ?1",
            [session],
            |r| r.get(0),
        )
        .unwrap();
    db.execute(
        "UPDATE records SET role = 'user' WHERE session_id = ?1 AND ordinal = ?2 AND role = 'assistant'",
        [row, misread],
    )
    .unwrap();
    let (id, text): (i64, String) = db
        .query_row(
            "SELECT id, text FROM records WHERE session_id = ?1 AND ordinal = ?2
             AND text IS NOT NULL AND tool_input IS NULL",
            [row, skipped],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    db.execute(
        "INSERT INTO records_fts (records_fts, rowid, text, tool_input) VALUES ('delete', ?1, ?2, NULL)",
        rusqlite::params![id, text],
    )
    .unwrap();
    db.execute("DELETE FROM records WHERE id = ?1", [id])
        .unwrap();
    db.execute(
        "UPDATE records SET ordinal = -ordinal WHERE session_id = ?1 AND ordinal > ?2",
        [row, skipped],
    )
    .unwrap();
    db.execute(
        "UPDATE records SET ordinal = -ordinal - 1 WHERE session_id = ?1 AND ordinal < 0",
        [row],
    )
    .unwrap();
    row
}

fn evidence_line(id: &str, start: u32, end: u32) -> String {
    evidence_entry(id, BIG, start, end)
}

fn evidence_entry(id: &str, session: &str, start: u32, end: u32) -> String {
    serde_json::json!({
        "candidate_id": id, "session_id": session, "type": "fact", "scope": "project",
        "title": format!("entry {id}"), "body": "what the records say", "transferable": true,
        "provenance_ok": true, "label": "correct",
        "evidence": {"ordinal_start": start, "ordinal_end": end, "snippets": ["what the records say"]}
    })
    .to_string()
}

/// Recall's evidence finds its records again by their keys: a range the reindex left as it was
/// follows its records to their new ordinals and stays trusted; a range holding a record that
/// reads differently now, or a line the old parser skipped, no longer says what it said and
/// is revoked. A dry run says so and changes nothing.
#[test]
fn evidence_follows_its_records_and_is_revoked_where_they_changed() {
    let src = tempfile::tempdir().unwrap();
    let log = support::copy_into(
        &support::fixtures().join(format!("claude/{BIG}.jsonl")),
        src.path(),
        &format!("proj/{BIG}.jsonl"),
    );
    let data = tempfile::tempdir().unwrap();
    let cairn = Cairn::open(data.path()).unwrap();
    cairn
        .capture_paths(&[support::main_file(Agent::Claude, &log)], &Quiet)
        .unwrap();
    let db = Connection::open(data.path().join("cairn.db")).unwrap();
    let assistant: i64 = db
        .query_row(
            "SELECT r.ordinal FROM records r JOIN sessions s ON s.id = r.session_id
             WHERE s.session_id = ?1 AND r.role = 'assistant' AND r.kind = 'message'
             AND r.ordinal > 100 ORDER BY r.ordinal LIMIT 1",
            [BIG],
            |r| r.get(0),
        )
        .unwrap();
    let skipped: i64 = db
        .query_row(
            "SELECT r.ordinal FROM records r JOIN sessions s ON s.id = r.session_id
             WHERE s.session_id = ?1 AND r.text IS NOT NULL AND r.tool_input IS NULL
             AND r.ordinal > 10 AND r.ordinal < 50 ORDER BY r.ordinal LIMIT 1",
            [BIG],
            |r| r.get(0),
        )
        .unwrap();
    drop(src);
    misread_session(data.path(), BIG, skipped, assistant);
    // In the aged archive's numbering (one less after the skipped line).
    let misread = u32::try_from(assistant - 1).unwrap();
    let after = misread + 20;
    let across = u32::try_from(skipped).unwrap();
    let text = [
        evidence_line("kept", after, after + 2),
        evidence_line("misread", misread - 1, misread + 1),
        evidence_line("skipped", across - 1, across),
    ]
    .join("\n");
    cairn.recall_import(&text, false).unwrap();
    let trusted = |id: &str| cairn.recall_get(id).unwrap().provenance_ok;
    let range = |id: &str| {
        let e = cairn.recall_get(id).unwrap();
        (e.evidence[0].ordinal_start, e.evidence[0].ordinal_end)
    };
    assert!(trusted("kept") && trusted("misread") && trusted("skipped"));

    Connection::open(data.path().join("cairn.db"))
        .unwrap()
        .execute(
            "INSERT INTO link_pending (session_id) SELECT id FROM sessions",
            [],
        )
        .unwrap();
    let dry = cairn
        .reindex(
            &ReindexRequest {
                session: Some(BIG.to_owned()),
                dry_run: true,
                ..Default::default()
            },
            &Quiet,
        )
        .unwrap();
    assert_eq!((dry.sessions, dry.evidence_revoked), (1, 2), "{dry:?}");
    assert_eq!(dry.changed.len(), 1, "{dry:?}");
    assert_eq!(dry.changed[0].handle, BIG);
    assert_eq!(
        (
            dry.changed[0].records_changed,
            dry.changed[0].evidence_revoked
        ),
        (dry.records_changed, 2)
    );
    assert!(dry.records_changed >= 2, "{dry:?}");
    assert!(
        trusted("misread") && trusted("skipped"),
        "a dry run changed trust"
    );
    assert_eq!(
        range("kept"),
        (after, after + 2),
        "a dry run moved evidence"
    );
    assert_eq!(
        support::count(data.path(), "SELECT COUNT(*) FROM reindexes"),
        0
    );
    // Nor does it relink a session a capture left queued (its process died first).
    assert_eq!(
        support::count(data.path(), "SELECT COUNT(*) FROM link_pending"),
        1
    );

    let done = cairn
        .reindex(
            &ReindexRequest {
                session: Some(BIG.to_owned()),
                ..Default::default()
            },
            &Quiet,
        )
        .unwrap();
    assert_eq!(done.evidence_revoked, 2, "{done:?}");
    assert!(trusted("kept"));
    assert_eq!(range("kept"), (after + 1, after + 3));
    assert!(!trusted("misread") && !trusted("skipped"));
    let why = cairn.recall_get("skipped").unwrap().provenance_note;
    assert!(
        why.is_some_and(|w| w.contains("revoked")),
        "no reason given"
    );
}

/// A session with nothing to read again is named with the reason, and the others are read: a
/// retained copy deleted by hand (or lost in a restore), a session pulled from a teammate
/// (no transcript was read here). Nothing of either changes.
#[test]
fn sessions_without_a_copy_are_named_and_left_as_they_are() {
    let src = tempfile::tempdir().unwrap();
    copy_tree(&support::fixtures().join("claude"), src.path());
    let data = tempfile::tempdir().unwrap();
    let cairn = Cairn::open(data.path()).unwrap();
    cairn
        .capture_paths(&support::found(Agent::Claude, src.path()), &Quiet)
        .unwrap();
    let db = Connection::open(data.path().join("cairn.db")).unwrap();
    let (lost_key, agent, source_key, generation): (String, String, String, i64) = db
        .query_row(
            "SELECT s.session_key, src.agent, src.source_key, src.generation
             FROM sources src JOIN sessions s ON s.id = src.session_id
             WHERE s.session_id = ?1 AND src.role = 'main'",
            [BIG],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
        )
        .unwrap();
    let copy = data.path().join(format!(
        "retained/{agent}/{source_key}.g{generation}.jsonl.zst"
    ));
    std::fs::remove_file(&copy).unwrap();
    db.execute(
        "INSERT INTO sessions (session_key, agent, session_id, captured_at, pulled_from)
         VALUES ('sha256-0000000000000000000000000000feed', 'claude', 'theirs', '2026-12-01T00:00:00Z', 'origin')",
        [],
    )
    .unwrap();
    let before = support::dump(data.path());

    let r = cairn.reindex(&ReindexRequest::default(), &Quiet).unwrap();
    let sessions = support::count(data.path(), "SELECT COUNT(*) FROM sessions");
    assert_eq!(i64::from(r.sessions) + 2, sessions, "{r:?}");
    let reasons: Vec<(&str, &str)> = r
        .skipped
        .iter()
        .map(|s| (s.session_key.as_str(), s.reason.as_str()))
        .collect();
    assert_eq!(reasons.len(), 2, "{reasons:?}");
    assert!(
        reasons.iter().any(|(k, why)| *k == lost_key
            && why.contains(copy.to_str().unwrap())
            && why.contains("missing or shorter")),
        "{reasons:?}"
    );
    assert!(
        reasons
            .iter()
            .any(|(k, why)| k.ends_with("feed") && why.contains("no copy to read again")),
        "{reasons:?}"
    );
    same(&support::dump(data.path()), &before, "skipped");

    // Asked for by name, an unknown session is an error that says so.
    let err = cairn
        .reindex(
            &ReindexRequest {
                session: Some("no-such-session".to_owned()),
                ..Default::default()
            },
            &Quiet,
        )
        .unwrap_err()
        .to_string();
    assert!(err.contains("no-such-session"), "{err}");
}

/// A copy of an older generation gone (a transcript rewritten once, its first copy deleted):
/// the records read from it could not be stored again, so the session is left whole.
#[test]
fn a_lost_older_generation_leaves_the_session_as_it_is() {
    let src = tempfile::tempdir().unwrap();
    let full = std::fs::read_to_string(support::fixtures().join("claude/small.jsonl")).unwrap();
    let lines: Vec<&str> = full.lines().collect();
    let log = src
        .path()
        .join("proj/3f1c0c1e-0000-4000-8000-000000000002.jsonl");
    std::fs::create_dir_all(log.parent().unwrap()).unwrap();
    let data = tempfile::tempdir().unwrap();
    let cairn = Cairn::open(data.path()).unwrap();
    let file = [support::main_file(Agent::Claude, &log)];
    std::fs::write(&log, lines.join("\n") + "\n").unwrap();
    cairn.capture_paths(&file, &Quiet).unwrap();
    std::fs::write(&log, lines[..5].join("\n") + "\n").unwrap();
    cairn.capture_paths(&file, &Quiet).unwrap();
    let copies = support::files_under(&data.path().join("retained"));
    let first = copies
        .iter()
        .find(|p| p.to_string_lossy().ends_with(".g0.jsonl.zst"))
        .unwrap();
    assert!(
        copies
            .iter()
            .any(|p| p.to_string_lossy().ends_with(".g1.jsonl.zst"))
    );
    std::fs::remove_file(first).unwrap();
    let before = support::dump(data.path());
    let r = cairn.reindex(&ReindexRequest::default(), &Quiet).unwrap();
    assert_eq!(r.sessions, 0, "{r:?}");
    assert_eq!(r.skipped.len(), 1, "{r:?}");
    assert!(r.skipped[0].reason.contains(".g0.jsonl.zst"), "{r:?}");
    same(&support::dump(data.path()), &before, "lost generation");
}

/// Two secrets an older build's rules let through, as that build left them: the raw lines in
/// the copy without a key-frame row (nothing was found), the records keyed by the raw lines'
/// hashes with the secrets in their text and index entries, the turn one of them opened keyed
/// from that, no findings; a Recall entry citing them, and one citing lines before them.
const AWS_KEY: &str = "AKIAZ7QW3RT5YU8IOP2L";
const GH_TOKEN: &str = "ghp_R7sT2vX9kL4mN8qP1wZ5yB3cD6fH0jK2aE4gQ";
const MISSED: &str = "3f1c0c1e-0000-4000-8000-000000000003";

fn missed_line(uuid: &str, role: &str, text: &str) -> String {
    serde_json::json!({"type": role, "uuid": uuid, "sessionId": MISSED,
        "timestamp": "2026-03-01T10:00:00Z", "cwd": "/tmp/proj",
        "message": {"role": role, "content": text}})
    .to_string()
}

/// A text with each `[REDACTED:<rule>]` marker put back to the secret it stands for.
fn unmark(text: &str) -> String {
    let secret = if text.contains("use key") {
        AWS_KEY
    } else {
        GH_TOKEN
    };
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find("[REDACTED:") {
        out.push_str(&rest[..at]);
        out.push_str(secret);
        let end = rest[at..].find(']').unwrap();
        rest = &rest[at + end + 1..];
    }
    out.push_str(rest);
    out
}

/// Age `data` (captured by this build from `log`) to what a build without the two rules left.
/// Returns the old keys of the two lines.
fn age_rules(data: &Path, log: &Path) -> Vec<String> {
    use cairn_core::archive::retain::Retained;
    let raw: Vec<String> = std::fs::read_to_string(log)
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect();
    let db = Connection::open(data.join("cairn.db")).unwrap();
    let (agent, source_key, session, session_key): (String, String, i64, String) = db
        .query_row(
            "SELECT src.agent, src.source_key, s.id, s.session_key FROM sources src
             JOIN sessions s ON s.id = src.session_id",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
        )
        .unwrap();
    let retained = Retained::new(data);
    let copy = retained.path(Agent::parse(&agent).unwrap(), &source_key, 0);
    let lines = retained.read(&copy, 0).unwrap();
    let mut plain = Vec::new();
    let mut keys = Vec::new();
    let mut old_keys = Vec::new();
    for l in &lines {
        let n = l.line_no as usize;
        let text = String::from_utf8(l.text.clone()).unwrap();
        if text.contains("[REDACTED:") {
            // The line as the agent wrote it, keyed by its hash, as capture keys a clean line.
            let new = l.record_hash.clone().unwrap();
            let old = cairn_core::keys::record_hash(raw[n].as_bytes());
            let records: Vec<(i64, Option<String>, Option<String>)> = db
                .prepare("SELECT id, text, tool_input FROM records WHERE session_id = ?1 AND record_hash = ?2")
                .unwrap()
                .query_map(rusqlite::params![session, new], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
                .unwrap()
                .map(Result::unwrap)
                .collect();
            assert!(!records.is_empty());
            for (id, text, input) in records {
                let unredact = |t: &Option<String>| t.as_deref().map(unmark);
                db.execute(
                    "INSERT INTO records_fts (records_fts, rowid, text, tool_input) VALUES ('delete', ?1, ?2, ?3)",
                    rusqlite::params![id, text, input],
                )
                .unwrap();
                let (text, input) = (unredact(&text), unredact(&input));
                assert!(
                    text.as_ref().is_some_and(|t| !t.contains("[REDACTED")),
                    "{text:?}"
                );
                db.execute(
                    "UPDATE records SET text = ?2, tool_input = ?3, record_hash = ?4 WHERE id = ?1",
                    rusqlite::params![id, text, input, old],
                )
                .unwrap();
                db.execute(
                    "INSERT INTO records_fts (rowid, text, tool_input) VALUES (?1, ?2, ?3)",
                    rusqlite::params![id, text, input],
                )
                .unwrap();
            }
            let turns: Vec<(i64, Option<String>)> = db
                .prepare("SELECT id, preview FROM turns WHERE session_id = ?1 AND turn_key = ?2")
                .unwrap()
                .query_map(
                    rusqlite::params![session, cairn_core::keys::turn_key(&session_key, &new)],
                    |r| Ok((r.get(0)?, r.get(1)?)),
                )
                .unwrap()
                .map(Result::unwrap)
                .collect();
            for (id, preview) in turns {
                db.execute(
                    "UPDATE turns SET turn_key = ?2, preview = ?3 WHERE id = ?1",
                    rusqlite::params![
                        id,
                        cairn_core::keys::turn_key(&session_key, &old),
                        preview.as_deref().map(unmark)
                    ],
                )
                .unwrap();
            }
            for column in ["first_line_hash", "last_line_hash"] {
                db.execute(
                    &format!("UPDATE sources SET {column} = ?2 WHERE {column} = ?1"),
                    [&new, &old],
                )
                .unwrap();
            }
            db.execute("DELETE FROM secret_findings WHERE line_no = ?1", [n as i64])
                .unwrap();
            plain.extend_from_slice(raw[n].as_bytes());
            old_keys.push(old);
        } else {
            plain.extend_from_slice(&l.text);
            if let Some(h) = &l.record_hash {
                keys.push((l.line_no, h.clone()));
            }
        }
        plain.push(b'\n');
    }
    // The manifest frame the copy opens with stays: older rules, not an older format.
    let held = std::fs::read(&copy).unwrap();
    let manifest = match held.get(..8) {
        Some(head) if head[..4] == 0x184D_2A5Du32.to_le_bytes() => {
            &held[..8 + u32::from_le_bytes(head[4..8].try_into().unwrap()) as usize]
        }
        _ => &[][..],
    };
    let bytes = [manifest, &Retained::encode(&plain, &keys).unwrap()].concat();
    std::fs::write(&copy, &bytes).unwrap();
    db.execute("UPDATE sources SET retained_len = ?1", [bytes.len() as i64])
        .unwrap();
    db.execute(
        "UPDATE sessions SET secret_count = (SELECT COUNT(*) FROM secret_findings)",
        [],
    )
    .unwrap();
    assert_eq!(old_keys.len(), 2, "the two secrets' lines");
    old_keys
}

/// What a reindex of every session would do, changing nothing.
fn dry_run(cairn: &Cairn) -> cairn_core::ReindexReport {
    let req = ReindexRequest {
        dry_run: true,
        ..Default::default()
    };
    cairn.reindex(&req, &Quiet).unwrap()
}

/// `files` captured into two archives: the one to compare with, and the one to age.
fn captured_twice(files: &[FoundFile]) -> [(tempfile::TempDir, Cairn); 2] {
    [(), ()].map(|()| {
        let dir = tempfile::tempdir().unwrap();
        let cairn = Cairn::open(dir.path()).unwrap();
        cairn.capture_paths(files, &Quiet).unwrap();
        (dir, cairn)
    })
}

/// Every file under `dir`, retained copies decoded, as bytes.
fn data_bytes(dir: &Path) -> Vec<(std::path::PathBuf, Vec<u8>)> {
    support::files_under(dir)
        .into_iter()
        .map(|p| {
            let raw = std::fs::read(&p).unwrap();
            let bytes = if p.to_string_lossy().ends_with(".zst") {
                zstd::stream::decode_all(&raw[..]).unwrap()
            } else {
                raw
            };
            (p, bytes)
        })
        .collect()
}

/// Where any of `needles` (case-blind: the full-text index folds case) is in a file under `dir`.
fn found_in(dir: &Path, needles: &[&str]) -> Vec<String> {
    let mut found = Vec::new();
    for (path, bytes) in data_bytes(dir) {
        let lower = bytes.to_ascii_lowercase();
        for n in needles {
            if memchr::memmem::find(&lower, n.to_ascii_lowercase().as_bytes()).is_some() {
                found.push(format!("{n} in {}", path.display()));
            }
        }
    }
    found
}

/// A copy's lines with their keys.
fn copy_lines(data: &Path) -> Vec<(u64, String, Option<String>)> {
    use cairn_core::archive::retain::Retained;
    let copy = support::files_under(&data.join("retained"))
        .into_iter()
        .find(|p| p.to_string_lossy().ends_with(".g0.jsonl.zst"))
        .unwrap();
    Retained::new(data)
        .read(&copy, 0)
        .unwrap()
        .into_iter()
        .map(|l| (l.line_no, String::from_utf8(l.text).unwrap(), l.record_hash))
        .collect()
}

fn line_keys(data: &Path) -> String {
    let db = Connection::open(data.join("cairn.db")).unwrap();
    db.query_row(
        "SELECT first_line_hash || ' ' || last_line_hash || ' ' || retained_len || ' ' || generation
         FROM sources",
        [],
        |r| r.get(0),
    )
    .unwrap()
}

/// A secret an older build's rules let through leaves the archive when it is read again: the
/// retained copy is written again without it, and its lines are keyed as this build keys
/// them (the old keys were hashes of the secret-bearing lines, which would let a guess be
/// checked), in the records, the turn keys, the sources' line keys and Recall's anchors; the
/// database's freed pages and log keep none of it. The archive is then what this build
/// captures from the transcript, and the agent's next append is read on from where it was.
#[test]
fn a_secret_older_rules_missed_leaves_copies_keys_and_pages_on_reindex() {
    let src = tempfile::tempdir().unwrap();
    let log = src.path().join(format!("proj/{MISSED}.jsonl"));
    std::fs::create_dir_all(log.parent().unwrap()).unwrap();
    let text = [
        missed_line("u1", "user", "hello"),
        missed_line("a1", "assistant", "hi, what shall we deploy?"),
        missed_line("u2", "user", &format!("use key {AWS_KEY} for deploys")),
        missed_line("a2", "assistant", &format!("stored {GH_TOKEN} as well")),
    ]
    .join("\n");
    std::fs::write(&log, format!("{text}\n")).unwrap();
    let files = [support::main_file(Agent::Claude, &log)];
    let [(fresh, fresh_cairn), (data, cairn)] = captured_twice(&files);
    let old_keys = age_rules(data.path(), &log);
    let entries = [
        evidence_entry("before", MISSED, 0, 1),
        evidence_entry("secrets", MISSED, 1, 3),
    ]
    .join("\n");
    cairn.recall_import(&entries, false).unwrap();
    let digest = |id: &str| -> String {
        Connection::open(data.path().join("cairn.db"))
            .unwrap()
            .query_row(
                "SELECT content_digest FROM recall_evidence WHERE entry_id = ?1",
                [id],
                |r| r.get(0),
            )
            .unwrap()
    };
    let old_digest = digest("secrets");
    let trusted = |id: &str| cairn.recall_get(id).unwrap().provenance_ok;
    assert!(trusted("before") && trusted("secrets"));
    let mut needles = vec![AWS_KEY, GH_TOKEN, old_digest.as_str()];
    needles.extend(old_keys.iter().map(String::as_str));
    // The ageing is what it claims: both secrets and both old keys are in the archive.
    for n in [AWS_KEY, GH_TOKEN, &old_keys[0], &old_keys[1]] {
        assert!(!found_in(data.path(), &[n]).is_empty(), "{n} not planted");
    }
    // The agent's cleanup took the transcript.
    let away = log.with_extension("away");
    std::fs::rename(&log, &away).unwrap();

    let dry = dry_run(&cairn);
    assert_eq!(dry.copy_lines_redacted, 2, "{dry:?}");
    assert!(
        !found_in(data.path(), &[AWS_KEY]).is_empty(),
        "a dry run wrote"
    );
    assert!(trusted("secrets"), "a dry run changed trust");

    let r = cairn.reindex(&ReindexRequest::default(), &Quiet).unwrap();
    assert_eq!(r.copy_lines_redacted, 2, "{r:?}");
    assert_eq!(r.changed.len(), 1, "{r:?}");
    assert_eq!(r.changed[0].copy_lines_redacted, 2, "{r:?}");
    assert_eq!(r.evidence_revoked, 1, "{r:?}");
    let left = found_in(data.path(), &needles);
    assert!(left.is_empty(), "still in the archive: {left:?}");
    assert!(trusted("before") && !trusted("secrets"));
    assert_ne!(digest("secrets"), old_digest);

    // What this build captures from the transcript, copy and keys alike.
    same(
        &support::dump(data.path()),
        &support::dump(fresh.path()),
        "reindexed",
    );
    same(&placed(data.path()), &placed(fresh.path()), "reindexed");
    assert_eq!(copy_lines(data.path()), copy_lines(fresh.path()));
    assert_eq!(line_keys(data.path()), line_keys(fresh.path()));
    index_is_whole(data.path());
    assert_eq!(
        support::count(data.path(), "SELECT COUNT(*) FROM retained_swaps"),
        0
    );

    // The transcript back with a line more: read on from where the copy ends, as the
    // archive that never missed the secrets reads it.
    std::fs::rename(&away, &log).unwrap();
    let more = missed_line("u3", "user", "and now ship it");
    std::fs::write(&log, format!("{text}\n{more}\n")).unwrap();
    fresh_cairn.capture_paths(&files, &Quiet).unwrap();
    cairn.capture_paths(&files, &Quiet).unwrap();
    same(
        &support::dump(data.path()),
        &support::dump(fresh.path()),
        "appended",
    );
    assert_eq!(copy_lines(data.path()), copy_lines(fresh.path()));
    assert_eq!(line_keys(data.path()), line_keys(fresh.path()));

    let again = cairn.reindex(&ReindexRequest::default(), &Quiet).unwrap();
    assert_eq!(
        (again.copy_lines_redacted, again.records_changed),
        (0, 0),
        "{again:?}"
    );
}

/// The first line of a transcript held the secret: the source's first line key, which the next
/// capture compares the file's first line with, is the redacted line's too.
#[test]
fn a_secret_in_the_first_line_moves_the_source_s_first_line_key() {
    let src = tempfile::tempdir().unwrap();
    let log = src.path().join(format!("proj/{MISSED}.jsonl"));
    std::fs::create_dir_all(log.parent().unwrap()).unwrap();
    let text = [
        missed_line("u1", "user", &format!("use key {AWS_KEY} for deploys")),
        missed_line("a1", "assistant", &format!("stored {GH_TOKEN} as well")),
        missed_line("u2", "user", "thanks"),
    ]
    .join("\n");
    std::fs::write(&log, format!("{text}\n")).unwrap();
    let files = [support::main_file(Agent::Claude, &log)];
    let [(fresh, _fresh_cairn), (data, cairn)] = captured_twice(&files);
    age_rules(data.path(), &log);
    assert_ne!(line_keys(data.path()), line_keys(fresh.path()), "not aged");
    let r = cairn.reindex(&ReindexRequest::default(), &Quiet).unwrap();
    assert_eq!(r.copy_lines_redacted, 2, "{r:?}");
    assert_eq!(line_keys(data.path()), line_keys(fresh.path()));
    assert_eq!(copy_lines(data.path()), copy_lines(fresh.path()));
    // Read on from the transcript: nothing new, nothing read again.
    let again = cairn.capture_paths(&files, &Quiet).unwrap();
    assert_eq!((again.records_added, again.records_updated), (0, 0));
}

/// The revisions the stored cursor keeps of a source's units (and its header).
fn cursor_revisions(data: &Path) -> (serde_json::Value, serde_json::Value) {
    let db = Connection::open(data.join("cairn.db")).unwrap();
    let state: String = db
        .query_row("SELECT parser_state FROM sources", [], |r| r.get(0))
        .unwrap();
    let state: serde_json::Value = serde_json::from_str(&state).unwrap();
    (state["units"].clone(), state["header"].clone())
}

/// A unit's copy line (a document's message) holding a secret an older build let through is
/// written again with the value redacted and the revision of that, which the stored cursor
/// takes too (the old revision digested the secret): the document read again stores nothing,
/// as for an archive that never held it.
#[test]
fn a_secret_in_a_units_copy_leaves_it_and_its_revision() {
    let src = tempfile::tempdir().unwrap();
    let chats = src.path().join("g/chats");
    std::fs::create_dir_all(&chats).unwrap();
    let doc = chats.join("session-2026-01-01T00-00-doc1.json");
    let text = gemini_doc(&[
        gemini_message("m1", "user", &format!("use key {AWS_KEY} for deploys")),
        gemini_message("m2", "gemini", "done"),
    ]);
    std::fs::write(&doc, &text).unwrap();
    let files = [support::main_file(Agent::Gemini, &doc)];
    let [(fresh, fresh_cairn), (data, cairn)] = captured_twice(&files);

    // As a build without the rule left it: the message's copy line, revision, record and
    // index entry hold the key; no finding.
    let db = Connection::open(data.path().join("cairn.db")).unwrap();
    let mut copy = copy_lines(data.path());
    let mut old_revision = String::new();
    for (_, line, _) in &mut copy {
        if !line.contains("[REDACTED:") {
            continue;
        }
        let held: serde_json::Value = serde_json::from_str(line).unwrap();
        let value = unmark(&held["v"].to_string());
        let digest = cairn_core::keys::digest_hex(value.as_bytes());
        old_revision = digest[..32].to_owned();
        *line = format!(
            "{{\"u\":{},\"r\":\"{old_revision}\",\"v\":{value}}}",
            held["u"]
        );
        let (mut units, _) = cursor_revisions(data.path());
        let unit = held["u"].as_str().unwrap();
        units[unit] = serde_json::Value::String(old_revision.clone());
        db.execute(
            "UPDATE sources SET parser_state = json_set(parser_state, '$.units', json(?1))",
            [units.to_string()],
        )
        .unwrap();
    }
    assert!(!old_revision.is_empty(), "no redacted unit in the copy");
    let plain: String = copy.iter().map(|(_, l, _)| format!("{l}\n")).collect();
    let bytes = cairn_core::archive::retain::Retained::encode(plain.as_bytes(), &[]).unwrap();
    let path = support::files_under(&data.path().join("retained"))
        .into_iter()
        .find(|p| p.to_string_lossy().ends_with(".g0.jsonl.zst"))
        .unwrap();
    std::fs::write(&path, &bytes).unwrap();
    db.execute("UPDATE sources SET retained_len = ?1", [bytes.len() as i64])
        .unwrap();
    let (id, marked): (i64, String) = db
        .query_row(
            "SELECT id, text FROM records WHERE text LIKE '%[REDACTED:%'",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    db.execute(
        "INSERT INTO records_fts (records_fts, rowid, text, tool_input) VALUES ('delete', ?1, ?2, NULL)",
        rusqlite::params![id, marked],
    )
    .unwrap();
    db.execute(
        "UPDATE records SET text = ?2 WHERE id = ?1",
        rusqlite::params![id, unmark(&marked)],
    )
    .unwrap();
    db.execute(
        "INSERT INTO records_fts (rowid, text, tool_input) VALUES (?1, ?2, NULL)",
        rusqlite::params![id, unmark(&marked)],
    )
    .unwrap();
    db.execute_batch("DELETE FROM secret_findings; UPDATE sessions SET secret_count = 0;")
        .unwrap();
    drop(db);
    assert!(!found_in(data.path(), &[AWS_KEY, &old_revision]).is_empty());

    let r = cairn.reindex(&ReindexRequest::default(), &Quiet).unwrap();
    assert_eq!(r.copy_lines_redacted, 1, "{r:?}");
    let left = found_in(data.path(), &[AWS_KEY, &old_revision]);
    assert!(left.is_empty(), "still in the archive: {left:?}");
    same(
        &support::dump(data.path()),
        &support::dump(fresh.path()),
        "reindexed",
    );
    assert_eq!(copy_lines(data.path()), copy_lines(fresh.path()));
    assert_eq!(
        cursor_revisions(data.path()),
        cursor_revisions(fresh.path())
    );

    // The document saved again as it was: nothing changed in it, nothing is stored.
    std::thread::sleep(std::time::Duration::from_millis(20));
    std::fs::write(&doc, format!("{text}\n")).unwrap();
    fresh_cairn.capture_paths(&files, &Quiet).unwrap();
    cairn.capture_paths(&files, &Quiet).unwrap();
    assert_eq!(copy_lines(data.path()), copy_lines(fresh.path()));
    same(
        &support::dump(data.path()),
        &support::dump(fresh.path()),
        "read again",
    );
}

/// A rewritten copy whose rename keeps failing (here: a directory in its way) leaves the store
/// describing a copy that is not in place: every open tries again without failing, and until
/// one succeeds the session is named as one that cannot be read again, not rebuilt from the
/// old copy.
#[test]
fn a_rewrite_that_cannot_be_put_in_place_is_named_and_tried_again() {
    let src = tempfile::tempdir().unwrap();
    let log = src.path().join(format!("proj/{MISSED}.jsonl"));
    std::fs::create_dir_all(log.parent().unwrap()).unwrap();
    std::fs::write(&log, format!("{}\n", missed_line("u1", "user", "hello"))).unwrap();
    let data = tempfile::tempdir().unwrap();
    Cairn::open(data.path())
        .unwrap()
        .capture_paths(&[support::main_file(Agent::Claude, &log)], &Quiet)
        .unwrap();
    let copy = support::files_under(&data.path().join("retained"))
        .into_iter()
        .find(|p| p.to_string_lossy().ends_with(".g0.jsonl.zst"))
        .unwrap();
    let blocker = cairn_core::archive::retain::Retained::scrub_path(&copy);
    std::fs::create_dir_all(blocker.join("in-the-way")).unwrap();
    Connection::open(data.path().join("cairn.db"))
        .unwrap()
        .execute(
            "INSERT INTO retained_swaps (source_id, generation, ready) SELECT id, 0, 1 FROM sources",
            [],
        )
        .unwrap();

    let cairn = Cairn::open(data.path()).unwrap();
    let r = cairn.reindex(&ReindexRequest::default(), &Quiet).unwrap();
    assert_eq!((r.sessions, r.skipped.len()), (0, 1), "{r:?}");
    assert!(
        r.skipped[0].reason.contains("could not be put in place"),
        "{r:?}"
    );
    assert_eq!(
        support::count(data.path(), "SELECT COUNT(*) FROM retained_swaps"),
        1
    );
    drop(cairn);

    std::fs::remove_dir_all(&blocker).unwrap();
    let cairn = Cairn::open(data.path()).unwrap();
    assert_eq!(
        support::count(data.path(), "SELECT COUNT(*) FROM retained_swaps"),
        0
    );
    let r = cairn.reindex(&ReindexRequest::default(), &Quiet).unwrap();
    assert_eq!((r.sessions, r.skipped.len()), (1, 0), "{r:?}");
}

/// What Recall and Insights stored from transcripts and model answers under an older build's
/// rules (an entry's body, an evidence snippet, a report) is redacted again by a reindex: the
/// dry run counts it, the run takes it out of every byte under the data dir, a second finds
/// nothing.
#[test]
fn a_secret_in_stored_entries_and_reports_leaves_them_on_reindex() {
    let src = tempfile::tempdir().unwrap();
    let log = src.path().join(format!("proj/{MISSED}.jsonl"));
    std::fs::create_dir_all(log.parent().unwrap()).unwrap();
    let text = [
        missed_line("u1", "user", "how do we deploy?"),
        missed_line("a1", "assistant", "with the deploy key in the vault"),
    ]
    .join("\n");
    std::fs::write(&log, format!("{text}\n")).unwrap();
    let data = tempfile::tempdir().unwrap();
    let cairn = Cairn::open(data.path()).unwrap();
    cairn
        .capture_paths(&[support::main_file(Agent::Claude, &log)], &Quiet)
        .unwrap();
    cairn
        .recall_import(&evidence_entry("deploy", MISSED, 0, 1), false)
        .unwrap();
    // As an older build stored them: the key raw in the entry (and so in Recall's index), its
    // snippet and a report.
    let db = Connection::open(data.path().join("cairn.db")).unwrap();
    db.execute(
        "UPDATE recall_entries SET body = 'deploys use the key ' || ?1",
        [AWS_KEY],
    )
    .unwrap();
    cairn_core::recall::store::reindex(&db, "deploy").unwrap();
    // And what persons and agents typed before such text was redacted: a Recall query in the
    // ledger, a correction's reason.
    let query = cairn_core::recall::QueryRequest {
        text: "deploy key".into(),
        ..Default::default()
    };
    cairn
        .recall_query(&query, cairn_core::recall::model::Surface::Query)
        .unwrap();
    db.execute(
        "UPDATE recall_query_events SET query_text = 'what is ' || ?1",
        [AWS_KEY],
    )
    .unwrap();
    db.execute(
        "INSERT INTO link_corrections (session_id, target_kind, target_key, action, made_by, made_at, reason)
         SELECT id, 'branch', 'main', 'link', 'me', '2026-03-01T10:00:00Z', 'it used ' || ?1 FROM sessions",
        [AWS_KEY],
    )
    .unwrap();
    db.execute(
        "UPDATE recall_evidence SET snippet = snippet || ' ' || ?1",
        [AWS_KEY],
    )
    .unwrap();
    db.execute(
        "INSERT INTO insights (title, template_id, template_version, slice, generator, cache_key,
             material_hash, sessions_total, sessions_included, prompt_chars, content, created_at, elapsed_ms)
         VALUES ('Deploys', 't', '1', '{}', 'claude', 'c', 'm', 1, 1, 10, ?1, '2026-03-01T10:00:00Z', 5)",
        [format!("# Deploys\n\nThey use {AWS_KEY}.")],
    )
    .unwrap();
    drop(db);
    // And a teammate's trajectory an older pull kept under `pulled/`.
    let pulled = data.path().join("pulled");
    std::fs::create_dir_all(&pulled).unwrap();
    let trajectory = serde_json::json!({"steps": [{"message": format!("deploy with {AWS_KEY}")}]});
    std::fs::write(pulled.join("t.atif.json"), trajectory.to_string()).unwrap();
    std::fs::write(pulled.join("notes.txt"), "not a trajectory").unwrap();
    assert!(!found_in(data.path(), &[AWS_KEY]).is_empty());

    let dry = dry_run(&cairn);
    assert_eq!(
        (
            dry.recall_entries_redacted,
            dry.reports_redacted,
            dry.pulled_files_redacted
        ),
        (1, 1, 1),
        "{dry:?}"
    );
    assert!(
        !found_in(data.path(), &[AWS_KEY]).is_empty(),
        "a dry run wrote"
    );

    let changed_at = cairn.recall_get("deploy").unwrap().updated_at;
    let r = cairn.reindex(&ReindexRequest::default(), &Quiet).unwrap();
    assert_eq!(
        (
            r.recall_entries_redacted,
            r.reports_redacted,
            r.pulled_files_redacted
        ),
        (1, 1, 1),
        "{r:?}"
    );
    // Changed now, so a team push sends the entry again.
    assert_ne!(cairn.recall_get("deploy").unwrap().updated_at, changed_at);
    let left = found_in(data.path(), &[AWS_KEY]);
    assert!(left.is_empty(), "still in the archive: {left:?}");
    let entry = cairn.recall_get("deploy").unwrap();
    assert!(entry.body.contains("[REDACTED:"), "{}", entry.body);
    assert!(
        entry.evidence[0].snippet.contains("[REDACTED:"),
        "{entry:?}"
    );

    let again = cairn.reindex(&ReindexRequest::default(), &Quiet).unwrap();
    assert_eq!(
        (
            again.recall_entries_redacted,
            again.reports_redacted,
            again.pulled_files_redacted
        ),
        (0, 0, 0),
        "{again:?}"
    );
}

/// A copy damaged on disk (its bytes overwritten, its length as recorded) leaves its session
/// as it is, named with what is wrong; the other sessions are read again.
#[test]
fn a_damaged_copy_is_named_and_the_others_are_read() {
    let src = tempfile::tempdir().unwrap();
    copy_tree(&support::fixtures().join("codex"), src.path());
    let data = tempfile::tempdir().unwrap();
    let cairn = Cairn::open(data.path()).unwrap();
    cairn
        .capture_paths(&support::found(Agent::Codex, src.path()), &Quiet)
        .unwrap();
    let copies = support::files_under(&data.path().join("retained"));
    assert_eq!(copies.len(), 2, "{copies:?}");
    let len = std::fs::metadata(&copies[0]).unwrap().len() as usize;
    std::fs::write(&copies[0], vec![0x5a; len]).unwrap();
    let before = support::dump(data.path());
    assert!(age(data.path()) > 0);
    let aged = support::dump(data.path());
    assert_ne!(aged, before);

    let r = cairn.reindex(&ReindexRequest::default(), &Quiet).unwrap();
    assert_eq!((r.sessions, r.skipped.len()), (1, 1), "{r:?}");
    let why = &r.skipped[0].reason;
    assert!(
        why.contains(copies[0].to_str().unwrap()) && why.contains("left as they are"),
        "{why}"
    );
    index_is_whole(data.path());
}

/// The archive goldens (what the parsers make of every fixture), pinned with the parsers'
/// revision that makes them: a change that moves them must say whether transcripts read
/// differently now, by bumping the revision for the agents whose do, which offers their
/// sessions read before a reindex.
const GOLDENS: (i64, &str) = (
    5,
    "f9a47b76fac77132a259a01616962783e54bd300c713b26267df3c2303888b99",
);

/// The digest of the archive goldens' bodies (their headers name the test, not the reading).
fn goldens_digest() -> String {
    use sha2::{Digest, Sha256};
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/snapshots");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            let name = p.file_name().unwrap().to_string_lossy();
            name.starts_with("integration__archive_") && name.ends_with(".snap")
        })
        .collect();
    files.sort();
    assert!(files.len() >= 10, "{files:?}");
    let mut hash = Sha256::new();
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        let body = text
            .strip_prefix("---\n")
            .and_then(|t| t.split_once("\n---\n"))
            .map_or(text.as_str(), |(_, body)| body);
        hash.update(file.file_name().unwrap().as_encoded_bytes());
        hash.update([0]);
        hash.update(body.as_bytes());
        hash.update([0]);
    }
    hex::encode(hash.finalize())
}

/// `digest` (of `what`) pinned as `name` with the revision it was taken at (`revision`, the
/// constant `constant` names): when it moves, its author says whether archives read before
/// should be offered a reindex (`if`), and `bump` says how.
struct Pin<'a> {
    name: &'a str,
    pin: (i64, &'a str),
    revision: i64,
    constant: &'a str,
    what: &'a str,
    reason: &'a str,
    bump: &'a str,
}

fn assert_pinned(p: Pin<'_>, digest: &str) {
    let Pin {
        name,
        pin,
        revision,
        constant,
        ..
    } = p;
    if (revision, digest) == pin {
        return;
    }
    if digest == pin.1 {
        panic!(
            "{constant} is {revision} now: pin {name} = ({revision}, \"{digest}\") in tests/reindex.rs"
        );
    }
    let next = cairn_core::archive::sources::PARSERS_REVISION + 1;
    panic!(
        "{} changed: if {}, {} (sessions read before are offered a reindex); then pin {name} = \
         ({}, \"{digest}\") in tests/reindex.rs",
        p.what,
        p.reason,
        p.bump.replace("{next}", &next.to_string()),
        revision.max(next),
    );
}

#[test]
fn the_parsers_revision_moves_with_the_archive_goldens() {
    assert_pinned(
        Pin {
            name: "GOLDENS",
            pin: GOLDENS,
            revision: cairn_core::archive::sources::PARSERS_REVISION,
            constant: "archive::sources::PARSERS_REVISION",
            what: "the archive goldens",
            reason: "a transcript reads differently now",
            bump: "bump archive::sources::PARSERS_REVISION to {next} and name the agents whose \
                   transcripts read differently in `unchanged_since` with it (every agent: raise \
                   ALL_AGENTS_UNCHANGED_SINCE)",
        },
        &goldens_digest(),
    );
}

/// The redaction rules at revision `.0` (every agent's:
/// [`ALL_AGENTS_UNCHANGED_SINCE`](cairn_core::archive::sources::ALL_AGENTS_UNCHANGED_SINCE)): a digest of the rule table and of what the redactor makes of each rule's test value
/// and of a few texts for its other layers (key names, entropy, paths, command passwords).
const REDACTION: (i64, &str) = (
    3,
    "aec0e571883a0b727bb20d20cf86be0261b7de4766151fe39dfef93fed15bf19",
);

fn redaction_digest() -> String {
    use cairn_core::archive::redact::Redactor;
    use sha2::{Digest, Sha256};
    let redactor = Redactor::global();
    let mut hash = Sha256::new();
    let mut add = |part: &str| {
        hash.update(part.as_bytes());
        hash.update([0]);
    };
    let probes = [
        r#"{"password":"hunter2-but-longer","api_key":"k3y-9f8e7d6c5b4a","note":"plain words"}"#,
        "export GITHUB_TOKEN=abc123def456ghi789jkl012mno345",
        "a blob zQ9xV2mK7pL4tR8wB3nY6cH1jD5fG0sA here",
        "mysql -u root -pS3cretPass db; psql postgres://app:pw0rd-x@db.internal/app",
        "edit /home/ann/repo/src/main.rs and C:\\Users\\ann\\x.txt",
        "commit 4f2a9c1e8b7d6a5f4e3d2c1b0a9f8e7d6c5b4a39 and uuid 3f1c0c1e-0000-4000-8000-000000000003",
    ];
    for rule in cairn_core::archive::secrets::rules() {
        add(rule.name);
        add(&format!("{:?}", rule.confidence));
        add(&rule.anchors.join("\u{1}"));
        add(&format!(
            "{} {:?} {:?} {}",
            rule.anchors_ignore_case,
            rule.left,
            rule.right,
            rule.check.is_some()
        ));
        add(rule.pattern);
        add(rule.test_value);
        add(&redactor.redact_text(rule.test_value, "", &mut Vec::new()));
    }
    for probe in probes {
        add(&redactor.redact_line(probe, &mut Vec::new()));
    }
    hex::encode(hash.finalize())
}

/// A change to the redaction rules says whether they now find what they did not: if so, the
/// revision every agent's transcripts read alike since moves, and every session read before is
/// offered a reindex, which takes what they find out of the retained copies too.
#[test]
fn the_parsers_revision_moves_with_the_redaction_rules() {
    assert_pinned(
        Pin {
            name: "REDACTION",
            pin: REDACTION,
            revision: cairn_core::archive::sources::ALL_AGENTS_UNCHANGED_SINCE,
            constant: "archive::sources::ALL_AGENTS_UNCHANGED_SINCE",
            what: "the redaction rules",
            reason: "they find what they did not (a secret an older build let through: a \
                     reindex redacts the retained copies too)",
            bump: "bump archive::sources::PARSERS_REVISION to {next} and raise \
                   ALL_AGENTS_UNCHANGED_SINCE to it (every agent's sessions)",
        },
        &redaction_digest(),
    );
}

/// A secret in a long session leaves the pages its rebuild frees: the session's old records
/// are deleted over zeroed pages. Here the rebuilt session is smaller than the old one (400
/// tokens of 40 characters each become a marker of 23), so some pages it frees are not written
/// again: with `secure_delete` off while the session is rebuilt they keep whole tokens.
#[test]
fn a_long_session_s_secret_leaves_the_pages_its_rebuild_frees() {
    let src = tempfile::tempdir().unwrap();
    let log = src.path().join(format!("proj/{MISSED}.jsonl"));
    std::fs::create_dir_all(log.parent().unwrap()).unwrap();
    let filler = |i: usize| format!("step {i}: ").repeat(300);
    let text: Vec<String> = (0..60)
        .map(|i| {
            let role = if i % 2 == 0 { "user" } else { "assistant" };
            let body = if i == 21 || i == 41 {
                format!(
                    "{} stored {}",
                    filler(i),
                    format!("{GH_TOKEN} ").repeat(200)
                )
            } else {
                filler(i)
            };
            missed_line(&format!("m{i}"), role, &body)
        })
        .collect();
    std::fs::write(&log, format!("{}\n", text.join("\n"))).unwrap();
    let files = [support::main_file(Agent::Claude, &log)];
    let [_, (data, cairn)] = captured_twice(&files);
    age_rules(data.path(), &log);
    assert!(
        !found_in(data.path(), &[GH_TOKEN]).is_empty(),
        "not planted"
    );
    let r = cairn.reindex(&ReindexRequest::default(), &Quiet).unwrap();
    assert_eq!(r.copy_lines_redacted, 2, "{r:?}");
    let left = found_in(data.path(), &[GH_TOKEN]);
    assert!(left.is_empty(), "still in the archive: {left:?}");
}

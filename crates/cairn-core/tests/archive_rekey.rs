//! No stored value confirms a guess of a redacted secret (issue 14, finding 4).
//!
//! The attack: the archive keeps each redacted line (the retained copy, byte for byte as the
//! agent wrote it once a guess is put where the marker is), so for every guess an attacker
//! rebuilds the raw line, hashes it as a record hash, derives the turn key from that, and looks
//! for either anywhere under the data dir (database, WAL, retained copies raw and decompressed).
//! A fresh capture and a migrated archive of the old kind (`tests/fixtures/archive-v11`) must
//! both give nothing to find, and the migrated one must stay consistent: turn keys, evidence,
//! first and last line hashes, and keys stable when the source is read again.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use std::path::{Path, PathBuf};

use cairn_core::Cairn;
use cairn_core::archive::Agent;
use cairn_core::keys;

const SESSION: &str = "7d3c5b1e-2f4a-4e8b-9c6d-1a2b3c4d5e6f";
const MARKER: &str = "[REDACTED:named-secret]";
const DICTIONARY: &[&str] = &[
    "password",
    "Password1",
    "hunter2",
    "letmein",
    "Winter2024!",
    "Summer2024!",
    "Spring2025!",
];

fn fixture() -> PathBuf {
    support::fixtures().join("archive-v11")
}

fn transcript_rel() -> String {
    format!("projects/-home-dev-shop/{SESSION}.jsonl")
}

/// Run the dictionary attack on the data dir: every guess that some stored value confirms,
/// with what confirmed it.
fn confirmed_guesses(data: &Path) -> Vec<String> {
    let files = support::every_byte_under(data);
    let redacted_lines: Vec<String> = files
        .iter()
        .filter(|(name, _)| name.ends_with("(decompressed)"))
        .flat_map(|(_, b)| {
            String::from_utf8_lossy(b)
                .lines()
                .filter(|l| l.contains(MARKER))
                .map(str::to_owned)
                .collect::<Vec<_>>()
        })
        .collect();
    assert!(!redacted_lines.is_empty(), "no redacted line to attack");
    let conn = rusqlite::Connection::open(data.join("cairn.db")).unwrap();
    let session_keys: Vec<String> = conn
        .prepare("SELECT session_key FROM sessions")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let mut confirmed = Vec::new();
    for guess in DICTIONARY {
        for line in &redacted_lines {
            let raw = line.replace(MARKER, guess);
            let hash = keys::record_hash(raw.as_bytes());
            let mut candidates = vec![("record hash", hash.clone())];
            candidates.extend(
                session_keys
                    .iter()
                    .map(|k| ("turn key", keys::turn_key(k, &hash))),
            );
            // The bare hex too, in case a value is stored without its prefix.
            candidates.push(("bare digest", hash["sha256:".len()..].to_owned()));
            for (what, value) in candidates {
                for (file, bytes) in &files {
                    if memchr::memmem::find(bytes, value.as_bytes()).is_some() {
                        confirmed.push(format!("{guess}: {what} in {file}"));
                    }
                }
            }
        }
    }
    confirmed
}

/// The attack is sound: the redacted first line with the right guess is the raw line.
fn assert_attack_rebuilds(data: &Path, transcript: &Path) {
    let raw_first = std::fs::read_to_string(transcript)
        .unwrap()
        .lines()
        .next()
        .unwrap()
        .to_owned();
    let copies = support::every_byte_under(&data.join("retained"));
    let first_redacted = copies
        .iter()
        .filter(|(n, _)| n.ends_with("(decompressed)"))
        .find_map(|(_, b)| String::from_utf8_lossy(b).lines().next().map(str::to_owned))
        .unwrap();
    assert_eq!(first_redacted.replace(MARKER, "Summer2024!"), raw_first);
}

fn secret_findings_columns(data: &Path) -> Vec<String> {
    let conn = rusqlite::Connection::open(data.join("cairn.db")).unwrap();
    conn.prepare("SELECT name FROM pragma_table_info('secret_findings')")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

#[test]
fn a_fresh_capture_stores_nothing_that_confirms_a_guess() {
    let dir = tempfile::tempdir().unwrap();
    let transcript = support::copy_into(
        &fixture().join(transcript_rel()),
        dir.path(),
        &transcript_rel(),
    );
    let data = dir.path().join("data");
    let cairn = Cairn::open(&data).unwrap();
    support::capture(&cairn, &[support::main_file(Agent::Claude, &transcript)]);
    let entries = std::fs::read_to_string(fixture().join("entries.jsonl")).unwrap();
    assert_eq!(cairn.recall_import(&entries, false).unwrap().imported, 1);
    drop(cairn);

    assert_attack_rebuilds(&data, &transcript);
    let confirmed = confirmed_guesses(&data);
    assert!(confirmed.is_empty(), "{confirmed:#?}");
    // Findings keep rule and position; the secret's length is not stored.
    let columns = secret_findings_columns(&data);
    assert!(columns.contains(&"start_byte".to_owned()));
    assert!(!columns.contains(&"end_byte".to_owned()), "{columns:?}");
}

/// Copy the old archive and its transcript into `dir`, pointing the source at the copy.
fn old_archive(dir: &Path) -> (PathBuf, PathBuf) {
    let data = dir.join("data");
    std::fs::create_dir_all(&data).unwrap();
    let db = zstd::stream::decode_all(std::fs::File::open(fixture().join("cairn.db.zst")).unwrap())
        .unwrap();
    std::fs::write(data.join("cairn.db"), db).unwrap();
    for entry in walkdir::WalkDir::new(fixture().join("retained")) {
        let entry = entry.unwrap();
        if entry.file_type().is_file() {
            let rel = entry.path().strip_prefix(fixture()).unwrap();
            support::copy_into(entry.path(), &data, rel.to_str().unwrap());
        }
    }
    let transcript = support::copy_into(&fixture().join(transcript_rel()), dir, &transcript_rel());
    let conn = rusqlite::Connection::open(data.join("cairn.db")).unwrap();
    conn.execute(
        "UPDATE sources SET path = ?1",
        [transcript.canonicalize().unwrap().to_str().unwrap()],
    )
    .unwrap();
    (data, transcript)
}

fn append_line(transcript: &Path, i: usize, text: &str) {
    let line = serde_json::json!({"parentUuid":null,"isSidechain":false,"userType":"external",
        "cwd":"/home/dev/shop","sessionId":SESSION,"version":"2.0.14","gitBranch":"main","type":"user",
        "message":{"role":"user","content":text},"uuid":format!("00000000-0000-4000-8000-{i:012}"),
        "timestamp":format!("2026-03-01T10:01:{i:02}.000Z")});
    let mut body = std::fs::read_to_string(transcript).unwrap();
    body.push_str(&line.to_string());
    body.push('\n');
    std::fs::write(transcript, body).unwrap();
}

/// Record keys and turn keys, for comparing archives.
fn keys_of(data: &Path) -> (Vec<String>, Vec<String>) {
    let conn = rusqlite::Connection::open(data.join("cairn.db")).unwrap();
    let records = conn
        .prepare("SELECT record_hash || '#' || block FROM records ORDER BY ordinal")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let turns = conn
        .prepare("SELECT turn_key FROM turns ORDER BY turn_index")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    (records, turns)
}

fn assert_consistent(data: &Path) {
    let conn = rusqlite::Connection::open(data.join("cairn.db")).unwrap();
    // Every turn key is derived from its opening record's key.
    let turns: Vec<(String, String, String)> = conn
        .prepare(
            "SELECT s.session_key, t.turn_key, r.record_hash FROM turns t
             JOIN sessions s ON s.id = t.session_id
             JOIN records r ON r.session_id = t.session_id AND r.ordinal = t.opening_ordinal",
        )
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(turns.len(), 3);
    for (session, turn, opening) in &turns {
        assert_eq!(turn, &keys::turn_key(session, opening));
    }
    // Evidence anchors name existing records.
    let dangling: i64 = conn
        .query_row(
            "SELECT COUNT(*) FROM recall_evidence v WHERE NOT EXISTS (
                SELECT 1 FROM records r WHERE r.session_id = v.session_id
                AND r.record_hash || '#' || r.block = v.start_record)
             OR NOT EXISTS (SELECT 1 FROM records r WHERE r.session_id = v.session_id
                AND r.record_hash || '#' || r.block = v.end_record)",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(dangling, 0);
    // The source's first and last line hashes are its first and last records' keys.
    let (first, last): (String, String) = conn
        .query_row(
            "SELECT first_line_hash, last_line_hash FROM sources",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    let key_at = |line: i64| -> String {
        conn.query_row(
            "SELECT record_hash FROM records WHERE line_no = ?1",
            [line],
            |r| r.get(0),
        )
        .unwrap()
    };
    assert_eq!(first, key_at(0));
    assert_eq!(last, key_at(7));
}

#[test]
fn migrating_an_old_archive_leaves_nothing_to_confirm_and_keeps_it_consistent() {
    let dir = tempfile::tempdir().unwrap();
    let (data, transcript) = old_archive(dir.path());
    assert_attack_rebuilds(&data, &transcript);
    let before = confirmed_guesses(&data);
    assert!(
        before
            .iter()
            .any(|c| c.starts_with("Summer2024!: record hash"))
            && before
                .iter()
                .any(|c| c.starts_with("Summer2024!: turn key"))
            && before.iter().all(|c| c.starts_with("Summer2024!")),
        "the old archive should give the password away: {before:#?}"
    );
    assert!(secret_findings_columns(&data).contains(&"end_byte".to_owned()));
    let (old_records, old_turns) = keys_of(&data);

    let cairn = Cairn::open(&data).unwrap();
    let entry = cairn.recall_for_session(SESSION).unwrap().remove(0);
    assert!(entry.provenance_ok);
    drop(cairn);

    let after = confirmed_guesses(&data);
    assert!(after.is_empty(), "{after:#?}");
    assert!(!secret_findings_columns(&data).contains(&"end_byte".to_owned()));
    let conn = rusqlite::Connection::open(data.join("cairn.db")).unwrap();
    let pending: i64 = conn
        .query_row("SELECT COUNT(*) FROM retained_rekey", [], |r| r.get(0))
        .unwrap();
    assert_eq!(pending, 0, "retained copies left to re-key");
    drop(conn);
    assert_consistent(&data);
    // Only the lines with findings changed key (0, 3, 6, 7); the others stay agentlog's.
    let (records, turns) = keys_of(&data);
    let changed: Vec<usize> = (0..records.len())
        .filter(|&i| records[i] != old_records[i])
        .collect();
    assert_eq!(changed, [0, 3, 6, 7]);
    assert_eq!(turns[1], old_turns[1]);
    assert_ne!(turns[0], old_turns[0]);
    assert_ne!(turns[2], old_turns[2]);

    // The same keys as a fresh capture of the same transcript by this build.
    let fresh = dir.path().join("fresh");
    let cairn = Cairn::open(&fresh).unwrap();
    support::capture(&cairn, &[support::main_file(Agent::Claude, &transcript)]);
    drop(cairn);
    assert_eq!(keys_of(&fresh), (records.clone(), turns.clone()));

    // Reading on: the first and last line still hash the same (no re-read), one record added.
    append_line(&transcript, 8, "One more thing: run the linter.");
    let cairn = Cairn::open(&data).unwrap();
    let report = support::capture(&cairn, &[support::main_file(Agent::Claude, &transcript)]);
    assert_eq!(report.records_added, 1);
    drop(cairn);
    let conn = rusqlite::Connection::open(data.join("cairn.db")).unwrap();
    let generation: i64 = conn
        .query_row("SELECT generation FROM sources", [], |r| r.get(0))
        .unwrap();
    assert_eq!(
        generation, 0,
        "the migrated line hashes made capture re-read the file"
    );
    drop(conn);

    // Reading it all again (the retained copy lost): every key comes out the same, nothing is
    // duplicated, and the evidence still verifies.
    for entry in walkdir::WalkDir::new(data.join("retained")) {
        let entry = entry.unwrap();
        if entry.file_type().is_file() {
            std::fs::remove_file(entry.path()).unwrap();
        }
    }
    append_line(&transcript, 9, "And the formatter.");
    let cairn = Cairn::open(&data).unwrap();
    let report = support::capture(&cairn, &[support::main_file(Agent::Claude, &transcript)]);
    assert_eq!(report.records_added, 1);
    let entry = cairn.recall_for_session(SESSION).unwrap().remove(0);
    assert!(entry.provenance_ok, "{:?}", entry.provenance_note);
    drop(cairn);
    let (again, turns_again) = keys_of(&data);
    assert_eq!(again[..records.len()], records[..]);
    assert_eq!(turns_again[..turns.len()], turns[..]);
    assert!(confirmed_guesses(&data).is_empty());
}

/// The keys of the records at the lines with findings in `data`'s archive.
fn finding_keys(data: &Path) -> Vec<String> {
    let conn = rusqlite::Connection::open(data.join("cairn.db")).unwrap();
    conn.prepare(
        "SELECT r.record_hash FROM records r
         WHERE r.line_no IN (SELECT line_no FROM secret_findings) ORDER BY r.line_no",
    )
    .unwrap()
    .query_map([], |r| r.get(0))
    .unwrap()
    .map(Result::unwrap)
    .collect()
}

/// A damaged copy is re-keyed once, as far as it reads, whatever the damage: a frame cut short
/// inside the bytes the archive says are committed (a disk that lost the copy's tail), or a
/// first batch whose bytes are no frame. Each finding line's record and the copy's key frames
/// that read agree on its new key, no old key is left in the copy, and nothing is left to try
/// again: the next open changes nothing. Before, a cut frame made writing the keys fail and
/// the open after tried again, failing, for ever; damage before the key frames left their old
/// keys, which confirm a guess of the secret, in the copy.
#[test]
fn a_damaged_copy_is_rekeyed_once_as_far_as_it_reads() {
    let cut_short = |b: &[u8]| [b, &b[..100]].concat();
    let first_batch_damaged = |b: &[u8]| {
        let mut out = [b, b].concat();
        out[..4].fill(0);
        out
    };
    type Damage<'a> = &'a dyn Fn(&[u8]) -> Vec<u8>;
    let damages: [(&str, Damage<'_>); 2] = [
        ("a frame cut short", &cut_short),
        ("the first batch damaged", &first_batch_damaged),
    ];
    for (case, damage) in damages {
        let dir = tempfile::tempdir().unwrap();
        let (data, _) = old_archive(dir.path());
        let copy = support::files_under(&data.join("retained"))
            .into_iter()
            .find(|p| p.to_string_lossy().ends_with(".zst"))
            .unwrap();
        let damaged = damage(&std::fs::read(&copy).unwrap());
        std::fs::write(&copy, &damaged).unwrap();
        // The archive counts every byte as committed.
        rusqlite::Connection::open(data.join("cairn.db"))
            .unwrap()
            .execute(
                "UPDATE sources SET retained_len = ?1",
                [damaged.len() as i64],
            )
            .unwrap();
        let old = finding_keys(&data);
        assert_eq!(old.len(), 4, "{case}");

        drop(Cairn::open(&data).unwrap());
        let pending = support::count(&data, "SELECT COUNT(*) FROM retained_rekey");
        assert_eq!(pending, 0, "{case}: keys left to write at every open");
        let bytes = std::fs::read(&copy).unwrap();
        let has = |key: &str| memchr::memmem::find(&bytes, key.as_bytes()).is_some();
        for key in &old {
            assert!(!has(key), "{case}: the copy keeps the old key {key}");
        }
        let new = finding_keys(&data);
        for key in &new {
            assert!(!old.contains(key), "{case}: {key} was not re-keyed");
            assert!(has(key), "{case}: the copy does not list {key}");
        }
        // Damage kept as it was.
        assert_eq!(bytes[..4], damaged[..4], "{case}");

        drop(Cairn::open(&data).unwrap());
        assert_eq!(std::fs::read(&copy).unwrap(), bytes, "{case}");
        assert_eq!(finding_keys(&data), new, "{case}");
    }
}

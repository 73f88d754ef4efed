//! Extraction reads what a session holds now, and nothing else: a record its agent rewrote in
//! place below where a pass read is read again, the turns a rewind dropped never reach the
//! model (and what was read of them before the rewind goes), and a failure stored by an older
//! build is shown and kept redacted. The model is the loopback fake (`tests/support/fake_llm.rs`),
//! which keeps every request it answered; the session is a real Gemini CLI chat and its rewound
//! copy (`tests/fixtures/gemini/`, `tests/fixtures/gemini-rewound/`, see their SOURCES.md).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::fake_llm;
use crate::support;

use std::path::PathBuf;

use cairn_core::Cairn;
use cairn_core::archive::Agent;
use cairn_core::archive::capture::{Quiet, SyncReport};
use cairn_core::recall::extract::{RunOptions, RunReport, Silent};
use fake_llm::{FakeLlm, Reply};
use serde_json::Value;

/// The real chat: 28 messages, 7 prompts. Its rewound copy keeps the first 17 (4 prompts).
const REL: &str = "m-gemini/chats/session-2025-12-24T06-40-c330aea9.json";
/// The first message the rewind dropped (the fifth prompt), and words of two later ones.
const DROPPED: [&str; 3] = [
    "I dont think the buttons work",
    "add helium browser shortcut",
    "install helium",
];

struct Env {
    dir: tempfile::TempDir,
    fake: FakeLlm,
    cairn: Cairn,
    /// How many times the transcript was written: each write a second later than the last.
    writes: u64,
}

impl Env {
    fn new() -> Env {
        let fake = FakeLlm::start(None);
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("data");
        std::fs::create_dir_all(&data).unwrap();
        std::fs::write(
            data.join("config.toml"),
            format!(
                "[recall.extract]\nenabled = true\nmodel = \"m\"\nconcurrency = 1\n\n[recall.extract.servers.local]\nendpoint = \"{}\"\n",
                fake.url()
            ),
        )
        .unwrap();
        let cairn = Cairn::open(&data).unwrap();
        Env {
            dir,
            fake,
            cairn,
            writes: 0,
        }
    }

    fn data(&self) -> PathBuf {
        self.dir.path().join("data")
    }

    fn path(&self) -> PathBuf {
        self.dir.path().join("src/proj").join(REL)
    }

    /// Write the chat as `text` (each write later than the last, as the agent's rewrite is) and
    /// capture it.
    fn write(&mut self, text: &str) -> SyncReport {
        let path = self.path();
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
        self.writes += 1;
        let at = std::time::SystemTime::now() + std::time::Duration::from_secs(self.writes);
        std::fs::File::options()
            .write(true)
            .open(&path)
            .unwrap()
            .set_modified(at)
            .unwrap();
        support::capture(&self.cairn, &[support::main_file(Agent::Gemini, &path)])
    }

    fn run(&self) -> RunReport {
        self.cairn
            .recall_extract_run(&RunOptions::default(), &Silent)
            .unwrap()
    }

    /// The user messages of the chat requests the model was sent since the last clear.
    fn sent(&self) -> Vec<String> {
        self.fake.chats().iter().map(|c| c.user()).collect()
    }

    fn db(&self) -> rusqlite::Connection {
        rusqlite::Connection::open(self.data().join("cairn.db")).unwrap()
    }

    /// Extraction's entries of the archive, by id: of the generation, the session and the
    /// digest of the unit read (`run::entry_id`), so two archives that read the same units of
    /// the same session have the same ids.
    fn entry_ids(&self) -> Vec<String> {
        let conn = self.db();
        let mut stmt = conn
            .prepare("SELECT entry_id FROM recall_extract_entries ORDER BY entry_id")
            .unwrap();
        stmt.query_map([], |r| r.get(0))
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap()
    }
}

fn original() -> String {
    std::fs::read_to_string(support::fixtures().join("gemini").join(REL)).unwrap()
}

fn rewound() -> String {
    std::fs::read_to_string(support::fixtures().join("gemini-rewound").join(REL)).unwrap()
}

fn mentions(sent: &[String], words: &str) -> usize {
    sent.iter().filter(|u| u.contains(words)).count()
}

/// The agent rewrites the closing answer of the first turn (the same message id, the same
/// records, other words): a pass that read the whole session before reads it again from that
/// answer on, and the entry read from the old words goes.
#[test]
fn a_record_rewritten_in_place_below_where_a_pass_read_is_read_again() {
    let mut env = Env::new();
    let first = original();
    env.write(&first);
    let r = env.run();
    assert!(r.units > 1 && r.failed == 0, "{r:?}");
    let units = r.units;
    let before = env.entry_ids();
    let first_prompt = |sent: &[String]| {
        sent.iter()
            .filter(|u| u.starts_with("USER MESSAGE (ordinal 0)"))
            .count()
    };
    assert_eq!(first_prompt(&env.sent()), 1);

    // Message 6, the first turn's last answer, said again in other words.
    let mut doc: Value = serde_json::from_str(&first).unwrap();
    let said = doc["messages"][6]["content"].as_str().unwrap().to_owned();
    assert!(
        said.starts_with("I've implemented the dark mode toggle"),
        "{said}"
    );
    let new = "Rewritten in place: the toggle button now lives in the header.";
    doc["messages"][6]["content"] = Value::String(format!("{new}\n\n{said}"));
    let again = env.write(&serde_json::to_string_pretty(&doc).unwrap());
    assert_eq!(
        (again.records_added, again.records_updated),
        (0, 1),
        "one record updated in place: {again:?}"
    );

    env.fake.clear();
    let r = env.run();
    let sent = env.sent();
    assert_eq!(
        mentions(&sent, new),
        1,
        "the rewritten words reach the model: {r:?}"
    );
    // Read again from the unit holding the rewritten record on (a pass resumes at the first
    // unit that reads differently); the units before it were not asked about again.
    assert_eq!((r.sessions, r.failed), (1, 0), "{r:?}");
    assert!(r.units < units, "{r:?}");
    assert_eq!(
        first_prompt(&sent),
        0,
        "the first prompt was asked about again"
    );
    // The entry read from the old words was replaced, the others kept.
    let after = env.entry_ids();
    assert_eq!(after.len(), before.len(), "{before:?} -> {after:?}");
    let gone: Vec<_> = before.iter().filter(|t| !after.contains(t)).collect();
    assert_eq!(gone.len(), 1, "{gone:?}");

    // Read to its end as it stands now: nothing more to ask.
    env.fake.clear();
    let r = env.run();
    assert_eq!((r.units, r.calls), (0, 0), "{r:?}");
    assert!(env.sent().is_empty());
}

/// A chat rewound before any pass read it: the turns it dropped are still in the archive,
/// marked retracted, and never sent; what it keeps is.
#[test]
fn a_rewound_chats_dropped_turns_never_reach_the_model() {
    let mut env = Env::new();
    env.write(&original());
    let rewind = env.write(&rewound());
    assert_eq!(rewind.records_added, 0, "{rewind:?}");
    let retracted: i64 = env
        .db()
        .query_row(
            "SELECT count(*) FROM records WHERE retracted_at IS NOT NULL",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert!(retracted > 0, "the rewind retracted nothing");

    let r = env.run();
    assert!(r.units > 0 && r.failed == 0, "{r:?}");
    let sent = env.sent();
    for words in DROPPED {
        assert_eq!(mentions(&sent, words), 0, "{words:?} was sent");
    }
    // Each kept prompt is read (and shown again as the context of the answers after it).
    assert!(mentions(&sent, "give it a darkmode toggle button") > 0);
    assert!(mentions(&sent, "This is your interactive development enviroment") > 0);
    same_as_a_fresh_read(&env);
}

/// What a fresh archive that only ever saw the rewound chat extracts: the same entries.
fn same_as_a_fresh_read(env: &Env) {
    let mut fresh = Env::new();
    fresh.write(&rewound());
    let r = fresh.run();
    assert_eq!(r.failed, 0, "{r:?}");
    assert_eq!(env.entry_ids(), fresh.entry_ids());
}

/// A chat a pass read whole, rewound after: the next pass reads it again as it stands, the
/// entries read from the dropped turns go, and nothing of what it keeps is asked about twice.
#[test]
fn a_pass_over_a_chat_rewound_since_drops_what_it_read_of_the_dropped_turns() {
    let mut env = Env::new();
    env.write(&original());
    let r = env.run();
    assert_eq!(r.failed, 0, "{r:?}");
    assert!(mentions(&env.sent(), DROPPED[0]) > 0);
    let read = env.entry_ids();

    let rewind = env.write(&rewound());
    assert_eq!(rewind.records_added, 0, "{rewind:?}");
    env.fake.clear();
    let r = env.run();
    assert_eq!(r.failed, 0, "{r:?}");
    // What the rewind kept was read before and reads the same: nothing is asked.
    assert_eq!(r.calls, 0, "{r:?}: {:?}", env.sent());
    let kept = env.entry_ids();
    assert!(kept.len() < read.len(), "{read:?} -> {kept:?}");
    same_as_a_fresh_read(&env);
}

const TOKEN: &str = "ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8";

/// An older build stored a session's failure (and a pass's abort) as the model or server said
/// it, a token in it: status shows it redacted, and a reindex rewrites it redacted in the file.
#[test]
fn a_failure_stored_unredacted_before_is_shown_and_kept_redacted() {
    let mut env = Env::new();
    env.write(&rewound());
    env.fake
        .fail_after(0, Some(Reply::chat("Sure! Here are the entries.", "stop")));
    let r = env.run();
    assert_eq!(r.failed, 1, "{r:?}");
    let conn = env.db();
    let stored = format!("unit 1 (records 0-0): the server said: bad key {TOKEN}");
    assert_eq!(
        conn.execute(
            "UPDATE recall_extract_progress SET last_error = ?1 WHERE state = 'failed'",
            [&stored],
        )
        .unwrap(),
        1
    );
    conn.execute(
        "UPDATE recall_extract_runs SET aborted = ?1",
        [format!("endpoint refused {TOKEN}")],
    )
    .unwrap();

    let status = env.cairn.recall_extract_status().unwrap();
    let shown = serde_json::to_string(&status).unwrap();
    assert!(!shown.contains(&TOKEN[4..]), "{shown}");
    let failure = &status.failures[0].error;
    assert!(
        failure.starts_with("unit 1 (records 0-0): the server said: bad key [REDACTED"),
        "{failure}"
    );
    let aborted = status.last_run.and_then(|r| r.aborted).unwrap();
    assert!(
        aborted.starts_with("endpoint refused [REDACTED"),
        "{aborted}"
    );

    env.cairn
        .reindex(&cairn_core::ReindexRequest::default(), &Quiet)
        .unwrap();
    let kept: Vec<String> = conn
        .prepare(
            "SELECT last_error FROM recall_extract_progress WHERE last_error IS NOT NULL
             UNION ALL SELECT aborted FROM recall_extract_runs WHERE aborted IS NOT NULL",
        )
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<rusqlite::Result<_>>()
        .unwrap();
    assert_eq!(kept.len(), 2, "{kept:?}");
    assert!(
        kept.iter()
            .all(|k| !k.contains(&TOKEN[4..]) && k.contains("[REDACTED")),
        "{kept:?}"
    );
}

/// `chat` with a message the model is never shown appended (Gemini CLI's notice of an update,
/// an `info` message: stored as an event, read by no unit), as the CLI writes one mid-session.
fn with_notice(chat: &str) -> String {
    let mut doc: Value = serde_json::from_str(chat).unwrap();
    let messages = doc["messages"].as_array_mut().unwrap();
    let at = messages.last().unwrap()["timestamp"].clone();
    messages.push(serde_json::json!({
        "id": "notice-0001",
        "timestamp": at,
        "type": "info",
        "content": "Gemini CLI update available",
    }));
    serde_json::to_string_pretty(&doc).unwrap()
}

/// Each progress row of the archive: (state, covered_ordinal, failures).
fn progress(env: &Env) -> Vec<(String, i64, i64)> {
    let conn = env.db();
    let mut stmt = conn
        .prepare(
            "SELECT state, covered_ordinal, failures FROM recall_extract_progress
             ORDER BY session_id",
        )
        .unwrap();
    stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .collect::<rusqlite::Result<_>>()
        .unwrap()
}

/// A keyed session a pass failed on that then only grows (by a record no model is shown, so
/// nothing new to read): its records below where the pass read are as they were, so its row
/// keeps covering them and the failure waits out its back-off; no request is sent.
#[test]
fn a_keyed_session_that_only_grew_keeps_its_failed_passs_back_off() {
    let mut env = Env::new();
    let chat = original();
    env.write(&chat);
    env.fake
        .fail_after(0, Some(Reply::chat("Sure! Here are the entries.", "stop")));
    let r = env.run();
    assert_eq!(r.failed, 1, "{r:?}");
    let failed = progress(&env);
    assert_eq!(failed.len(), 1, "{failed:?}");
    assert_eq!(failed[0].0, "failed", "{failed:?}");
    assert!(failed[0].1 > 0, "{failed:?}");

    let grew = env.write(&with_notice(&chat));
    assert_eq!(
        (grew.records_added, grew.records_updated),
        (1, 0),
        "{grew:?}"
    );
    assert_eq!(
        progress(&env),
        failed,
        "the row no longer covers what it read"
    );

    env.fake.fail_after(0, None);
    env.fake.clear();
    let r = env.run();
    assert_eq!((r.units, r.calls), (0, 0), "{r:?}");
    assert!(env.sent().is_empty(), "the back-off was bypassed");
    assert_eq!(progress(&env), failed);
}

/// One capture both grows a chat a pass read whole (by a record no model is shown) and rewrites
/// its first answer in place: what was read from that answer on is read again, the rewritten
/// words sent, the growth not hiding the rewrite.
#[test]
fn a_capture_that_grows_a_session_and_rewrites_a_record_below_is_read_again() {
    let mut env = Env::new();
    let first = original();
    env.write(&first);
    let r = env.run();
    assert!(r.units > 1 && r.failed == 0, "{r:?}");

    let mut doc: Value = serde_json::from_str(&first).unwrap();
    let said = doc["messages"][6]["content"].as_str().unwrap().to_owned();
    let new = "Rewritten as it grew: the toggle button now lives in the footer.";
    doc["messages"][6]["content"] = Value::String(format!("{new}\n\n{said}"));
    let both = env.write(&with_notice(&serde_json::to_string_pretty(&doc).unwrap()));
    assert_eq!(
        (both.records_added, both.records_updated),
        (1, 1),
        "one record added, one updated in place: {both:?}"
    );

    env.fake.clear();
    let r = env.run();
    assert_eq!((r.sessions, r.failed), (1, 0), "{r:?}");
    assert_eq!(
        mentions(&env.sent(), new),
        1,
        "the rewritten words reach the model: {r:?}"
    );
}

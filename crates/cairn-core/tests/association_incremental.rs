//! Relinking after a hook reads only what the hook captured: the evidence records and the
//! environment snapshots association processes per hook stay the same while the session grows,
//! and the links it keeps are exactly the links a rebuild from every record and snapshot gives.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use cairn_core::Cairn;
use cairn_core::archive::Agent;
use cairn_core::archive::capture::{Quiet, Touched, Trigger, capture_many};
use cairn_core::archive::discover::FoundFile;
use cairn_core::archive::sources::FileRole;
use cairn_core::archive::store::Store;
use serde_json::{Value, json};

fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .env("GIT_AUTHOR_NAME", "T")
        .env("GIT_AUTHOR_EMAIL", "t@example.invalid")
        .env("GIT_COMMITTER_NAME", "T")
        .env("GIT_COMMITTER_EMAIL", "t@example.invalid")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

fn repo(path: &Path) -> PathBuf {
    std::fs::create_dir_all(path).unwrap();
    git(path, &["init", "-q", "-b", "main"]);
    std::fs::write(path.join("README"), "hi\n").unwrap();
    git(path, &["add", "README"]);
    git(path, &["commit", "-q", "-m", "init"]);
    std::fs::canonicalize(path).unwrap()
}

/// A Claude Code transcript written line by line, hooked after every turn.
struct Session {
    path: PathBuf,
    id: String,
    cwd: PathBuf,
    branch: String,
    n: usize,
}

impl Session {
    /// A session on `main` in `cwd`, its transcript `<id>.jsonl` in `transcripts`.
    fn new(transcripts: &Path, id: &str, cwd: &Path) -> Session {
        Session {
            path: transcripts.join(format!("{id}.jsonl")),
            id: id.into(),
            cwd: cwd.to_owned(),
            branch: "main".into(),
            n: 0,
        }
    }

    /// The transcript as discovery finds it.
    fn found(&self) -> FoundFile {
        FoundFile {
            agent: Agent::Claude,
            role: FileRole::Main,
            path: self.path.clone(),
            parent_hint: None,
            agent_id: None,
        }
    }

    fn line(&mut self, mut v: Value) {
        self.n += 1;
        let now = jiff::Timestamp::now()
            .strftime("%Y-%m-%dT%H:%M:%S%.3fZ")
            .to_string();
        let extra = json!({"sessionId": self.id, "cwd": self.cwd, "gitBranch": self.branch,
            "uuid": format!("{}-{}", self.id, self.n), "timestamp": now, "version": "2.1.39"});
        v.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.path)
            .unwrap();
        writeln!(f, "{v}").unwrap();
    }

    fn user(&mut self, text: &str) {
        self.line(json!({"type": "user", "message": {"role": "user", "content": text}}));
    }

    fn say(&mut self, text: &str) {
        let id = format!("msg_{}", self.n);
        self.line(json!({"type": "assistant", "message": {"id": id, "role": "assistant", "model": "m", "content": [{"type": "text", "text": text}]}}));
    }

    fn call(&mut self, name: &str, input: Value) -> String {
        let id = format!("toolu_{}_{}", self.id, self.n);
        self.line(json!({"type": "assistant", "message": {"id": format!("msg_{}", self.n), "role": "assistant", "content": [{"type": "tool_use", "id": id, "name": name, "input": input}]}}));
        id
    }

    fn result(&mut self, id: &str, output: &str) {
        self.line(json!({"type": "user", "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": id, "content": output}]}}));
    }

    fn tool(&mut self, name: &str, input: Value, output: &str) {
        let id = self.call(name, input);
        self.result(&id, output);
    }

    fn edit(&mut self, rel: &str, content: &str) {
        let path = self.cwd.join(rel);
        std::fs::write(&path, content).unwrap();
        self.tool(
            "Edit",
            json!({"file_path": path, "old_string": "", "new_string": content}),
            "The file has been updated.",
        );
    }

    /// Run git for real and record it as a Bash call with its output.
    fn run_git(&mut self, args: &[&str]) {
        let out = git(&self.cwd, args);
        self.tool(
            "Bash",
            json!({"command": format!("git {}", args.join(" "))}),
            &out,
        );
    }

    fn hook(&self, cairn: &Cairn) {
        let input = json!({"session_id": self.id, "transcript_path": self.path, "cwd": self.cwd, "hook_event_name": "Stop"});
        cairn
            .hook(&input.to_string(), Some(Agent::Claude), &self.cwd)
            .unwrap()
            .unwrap();
    }
}

/// Capture the session's transcript into `data` and stop before the relink, as a process killed
/// between the two transactions does. Returns the store it wrote with.
fn capture_without_relink(data: &Path, s: &Session) -> Store {
    let mut store = Store::open(&data.join("cairn.db")).unwrap();
    capture_many(
        &mut store,
        data,
        std::slice::from_ref(&s.found()),
        Trigger::Sync,
        &Quiet,
    )
    .unwrap();
    store
}

/// What the last relink of the session read: (evidence records, captures compared).
fn last_relink(db: &rusqlite::Connection) -> (i64, i64) {
    db.query_row(
        "SELECT records_scanned, captures_compared FROM association_state",
        [],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )
    .unwrap()
}

/// Every link of every session, in a canonical order.
fn links(db: &rusqlite::Connection) -> Vec<String> {
    let mut stmt = db
        .prepare(
            "SELECT l.target_key, l.evidence, l.ordinal, l.commit_id, l.detail, t.turn_index, l.strong,
                    l.confidence, l.pr_number
             FROM links l LEFT JOIN turns t ON t.id = l.turn_id",
        )
        .unwrap();
    let mut out: Vec<String> = stmt
        .query_map([], |r| {
            let mut cols = Vec::new();
            for i in 0..9 {
                let v: rusqlite::types::Value = r.get(i)?;
                cols.push(format!("{v:?}"));
            }
            Ok(cols.join(" | "))
        })
        .unwrap()
        .collect::<rusqlite::Result<_>>()
        .unwrap();
    out.sort();
    out
}

/// Drop what association carried over and relink the session from scratch (no new capture).
fn rebuild(data: &Path, captures: Vec<i64>) -> cairn_core::git::associate::LinkStats {
    let mut store = Store::open(&data.join("cairn.db")).unwrap();
    let session: i64 = store
        .conn()
        .query_row("SELECT id FROM sessions", [], |r| r.get(0))
        .unwrap();
    if captures.is_empty() {
        cairn_core::git::associate::reset(store.conn(), session).unwrap();
    }
    cairn_core::git::after_capture(
        store.conn_mut(),
        &Touched {
            sessions: vec![session],
            captures,
        },
        None,
        usize::MAX,
    )
    .unwrap()
}

#[test]
fn a_hook_relinks_only_what_it_captured_and_matches_a_rebuild() {
    let dir = tempfile::tempdir().unwrap();
    let repo = repo(&dir.path().join("repo"));
    let data = dir.path().join("data");
    let transcripts = dir.path().join("projects");
    std::fs::create_dir_all(&transcripts).unwrap();
    support::read_from(&data, Agent::Claude, &transcripts);
    let cairn = Cairn::open(&data).unwrap();
    let mut s = Session::new(&transcripts, "s-long", &repo);
    let db = rusqlite::Connection::open(data.join("cairn.db")).unwrap();
    // Filler that makes the transcript long without adding evidence (a tool reading files).
    let filler = "fn filler() -> u32 { 42 }\n".repeat(2_000);
    let turns = 24;
    let mut per_hook = Vec::new();
    for turn in 0..turns {
        s.user(&format!("turn {turn}: carry on"));
        s.tool("Read", json!({"file_path": repo.join("README")}), &filler);
        s.edit(&format!("f{}.txt", turn % 6), &format!("turn {turn}\n"));
        match turn {
            // The session switches to a branch of its own.
            3 => {
                s.run_git(&["checkout", "-b", "feature/long"]);
                s.branch = "feature/long".into();
            }
            // It commits what it edited: its own commit and, at the next capture, promotion.
            7 | 15 => {
                s.run_git(&["add", "-A"]);
                s.run_git(&["commit", "-m", &format!("work of turn {turn}")]);
            }
            // It opens a pull request and pushes.
            9 => {
                s.tool(
                    "Bash",
                    json!({"command": "gh pr create --fill"}),
                    "https://github.com/o/r/pull/31\n",
                );
                s.tool(
                    "Bash",
                    json!({"command": "git push origin feature/long"}),
                    "To github.com:o/r.git\n * [new branch]      feature/long -> feature/long\n",
                );
            }
            // A git call whose result arrives only with the next capture.
            11 => {
                let id = s.call("Bash", json!({"command": "git commit -am 'late result'"}));
                s.hook(&cairn);
                per_hook.push(last_relink(&db));
                git(&repo, &["commit", "-q", "-am", "late result"]);
                let short = git(&repo, &["rev-parse", "--short", "HEAD"]);
                s.result(
                    &id,
                    &format!("[feature/long {}] late result\n", short.trim()),
                );
            }
            // A person commits the session's edits outside the session.
            19 => {
                git(&repo, &["add", "-A"]);
                git(&repo, &["commit", "-q", "-m", "by a person"]);
            }
            _ => {}
        }
        s.say(&format!("done with turn {turn}"));
        s.hook(&cairn);
        per_hook.push(last_relink(&db));
    }
    let captures: i64 = db
        .query_row("SELECT COUNT(*) FROM captures", [], |r| r.get(0))
        .unwrap();
    assert_eq!(captures as usize, per_hook.len());
    let size = std::fs::metadata(&s.path).unwrap().len();
    assert!(size > 1_000_000, "the transcript grew to {size} bytes");

    // Per hook: one capture's snapshot compared, and only the evidence records of that capture
    // (an edit, plus the git calls and results of that turn), however long the session is.
    for (i, &(records, compared)) in per_hook.iter().enumerate() {
        assert_eq!(compared, 1, "hook {i} compared {compared} captures");
        assert!(
            (1..=7).contains(&records),
            "hook {i} read {records} evidence records"
        );
    }
    // Hooks 11 and 12 are turn 11's two captures.
    let quiet: Vec<i64> = [1, 2, 4, 5, 6, 20, 21, 22, 23, 24]
        .iter()
        .map(|&i| per_hook[i].0)
        .collect();
    assert!(
        quiet.iter().all(|&r| r == quiet[0]),
        "turns with one edit read {quiet:?} records"
    );

    let incremental = links(&db);
    let evidence: Vec<&str> = [
        "commit_by_session",
        "environment_promotion",
        "direct_transition",
        "pr_created",
        "pushed",
        "edit_committed",
        "branch_recorded",
        "ran_on_branch",
    ]
    .into_iter()
    .filter(|e| !incremental.iter().any(|l| l.contains(&format!("\"{e}\""))))
    .collect();
    assert!(
        evidence.is_empty(),
        "no {evidence:?} link in {incremental:#?}"
    );
    assert!(
        incremental.iter().any(|l| l.contains("late result")),
        "the commit whose output came a capture later is linked"
    );

    // A rebuild from every record and snapshot gives the same links.
    let stats = rebuild(&data, Vec::new());
    assert_eq!(stats.rebuilt, 1);
    assert_eq!(stats.captures_compared, per_hook.len());
    assert!(stats.records_scanned > per_hook.iter().map(|p| p.0 as usize).max().unwrap());
    assert_eq!(links(&db), incremental);

    // A capture whose snapshot is attached after later captures were compared (another process
    // relinked first) makes the next relink rebuild, in capture order.
    let first: i64 = db
        .query_row("SELECT MIN(id) FROM captures", [], |r| r.get(0))
        .unwrap();
    db.execute(
        "UPDATE captures SET snapshot_id = NULL WHERE id = ?1",
        [first],
    )
    .unwrap();
    let stats = rebuild(&data, vec![first]);
    assert_eq!(stats.rebuilt, 1);
    assert_eq!(stats.captures_compared, per_hook.len());
    let reattached = links(&db);
    rebuild(&data, Vec::new());
    assert_eq!(links(&db), reattached);
}

#[test]
fn stale_links_go_at_the_next_relink() {
    let dir = tempfile::tempdir().unwrap();
    let repo = repo(&dir.path().join("repo"));
    let data = dir.path().join("data");
    let transcripts = dir.path().join("projects");
    std::fs::create_dir_all(&transcripts).unwrap();
    support::read_from(&data, Agent::Claude, &transcripts);
    let cairn = Cairn::open(&data).unwrap();
    let mut s = Session::new(&transcripts, "s-stale", &repo);
    s.user("look");
    s.say("looked");
    s.hook(&cairn);
    let db = rusqlite::Connection::open(data.join("cairn.db")).unwrap();
    let before = links(&db);
    // A link nothing supports (written by an older build, say).
    db.execute(
        "INSERT INTO links (session_id, target_kind, target_key, evidence, strong, confidence, detail)
         SELECT id, 'branch', 'ref:refs/heads/other', 'commit_by_session', 1, 1.0, 'stale' FROM sessions",
        [],
    )
    .unwrap();
    s.user("again");
    s.say("looked again");
    s.hook(&cairn);
    let after = links(&db);
    assert!(!after.iter().any(|l| l.contains("other")), "{after:#?}");
    assert!(after.len() > before.len());
}

/// An agent that numbers its calls per message or per run repeats ids in a session: a result
/// is its own call's (the call of its id stored last before it), so what a later call with the
/// id of a `git commit` printed is no evidence of a commit.
#[test]
fn a_result_is_its_own_calls_when_an_id_repeats() {
    let dir = tempfile::tempdir().unwrap();
    let repo = repo(&dir.path().join("repo"));
    // A commit on another branch, which the session never made.
    git(&repo, &["checkout", "-q", "-b", "other"]);
    std::fs::write(repo.join("other.txt"), "x\n").unwrap();
    git(&repo, &["add", "other.txt"]);
    git(&repo, &["commit", "-q", "-m", "not the session's"]);
    let foreign = git(&repo, &["rev-parse", "--short", "HEAD"])
        .trim()
        .to_owned();
    git(&repo, &["checkout", "-q", "main"]);
    let data = dir.path().join("data");
    let transcripts = dir.path().join("projects");
    std::fs::create_dir_all(&transcripts).unwrap();
    support::read_from(&data, Agent::Claude, &transcripts);
    let cairn = Cairn::open(&data).unwrap();
    let mut s = Session::new(&transcripts, "s-repeat", &repo);
    s.user("commit the readme");
    s.edit("README", "changed\n");
    git(&repo, &["add", "README"]);
    let call = |s: &mut Session, command: &str| {
        s.line(json!({"type": "assistant", "message": {"id": format!("msg_{}", s.n), "role": "assistant",
            "content": [{"type": "tool_use", "id": "call_0", "name": "Bash", "input": {"command": command}}]}}));
    };
    call(&mut s, "git commit -m readme");
    let committed = git(&repo, &["commit", "-m", "readme"]);
    s.result("call_0", &committed);
    // The next call reuses the id; its output only looks like a commit's.
    call(&mut s, "cat NOTES");
    s.result("call_0", &format!("[other {foreign}] not the session's"));
    s.say("committed");
    s.hook(&cairn);
    let db = rusqlite::Connection::open(data.join("cairn.db")).unwrap();
    let links = links(&db);
    assert!(
        links
            .iter()
            .any(|l| l.contains("refs/heads/main") && l.contains("commit_by_session")),
        "{links:#?}"
    );
    assert!(
        !links
            .iter()
            .any(|l| l.contains("other") || l.contains(&foreign)),
        "{links:#?}"
    );
    // The rebuild from every record agrees.
    rebuild(&data, Vec::new());
    assert_eq!(self::links(&db), links);
}

/// A capture that committed its records and then died before relinking (killed between the
/// two transactions) leaves its session on `link_pending`; the next capture, with nothing new
/// to read, links it as a clean capture would have.
#[test]
fn a_session_left_unlinked_by_a_dead_capture_is_linked_by_the_next_one() {
    let dir = tempfile::tempdir().unwrap();
    let repo = repo(&dir.path().join("repo"));
    let transcripts = dir.path().join("projects");
    std::fs::create_dir_all(&transcripts).unwrap();
    let mut s = Session::new(&transcripts, "s-cut", &repo);
    s.user("add a file and commit it");
    s.edit("a.txt", "a\n");
    s.run_git(&["add", "a.txt"]);
    s.run_git(&["commit", "-q", "-m", "add a"]);
    s.say("committed");
    let file = s.found();
    let pending = |db: &rusqlite::Connection| -> i64 {
        db.query_row("SELECT count(*) FROM link_pending", [], |r| r.get(0))
            .unwrap()
    };

    // The clean run: capture and relink.
    let clean = dir.path().join("clean");
    Cairn::open(&clean)
        .unwrap()
        .capture_paths(std::slice::from_ref(&file), &Quiet)
        .unwrap();
    let clean_db = rusqlite::Connection::open(clean.join("cairn.db")).unwrap();
    let expected = links(&clean_db);
    assert!(
        expected.iter().any(|l| l.contains("edit_committed")),
        "the clean capture found no commit link: {expected:#?}"
    );
    assert_eq!(
        pending(&clean_db),
        0,
        "a clean capture left a session pending"
    );

    // The cut run: the records are committed, the relink never happens.
    let cut = dir.path().join("cut");
    let cairn = Cairn::open(&cut).unwrap();
    drop(capture_without_relink(&cut, &s));
    let cut_db = rusqlite::Connection::open(cut.join("cairn.db")).unwrap();
    assert!(links(&cut_db).is_empty(), "nothing relinked yet");
    assert_eq!(pending(&cut_db), 1);

    // The next capture reads nothing new, and still relinks the session left behind.
    let report = cairn
        .capture_paths(std::slice::from_ref(&file), &Quiet)
        .unwrap();
    assert_eq!(report.records_added, 0);
    assert_eq!(links(&cut_db), expected);
    assert_eq!(pending(&cut_db), 0);
}

/// Two processes racing: capture A stores its records, capture B stores and relinks, then A
/// relinks and attaches its snapshot to a capture older than the one B compared. The session
/// is rebuilt, so the snapshots are compared in capture order and the links are a rebuild's,
/// although A's relink had read the state B left before its snapshot arrived.
#[test]
fn a_snapshot_attached_after_a_later_capture_was_compared_rebuilds_the_session() {
    let dir = tempfile::tempdir().unwrap();
    let repo = repo(&dir.path().join("repo"));
    let transcripts = dir.path().join("projects");
    std::fs::create_dir_all(&transcripts).unwrap();
    let data = dir.path().join("data");
    support::read_from(&data, Agent::Claude, &transcripts);
    let cairn = Cairn::open(&data).unwrap();
    let mut s = Session::new(&transcripts, "s-race", &repo);
    s.user("start");
    s.edit("a.txt", "a\n");
    s.hook(&cairn);

    // A: records stored, no relink yet.
    s.user("switch branches");
    s.run_git(&["checkout", "-q", "-b", "feature/race"]);
    s.branch = "feature/race".into();
    s.edit("b.txt", "b\n");
    let mut store = capture_without_relink(&data, &s);
    let db = rusqlite::Connection::open(data.join("cairn.db")).unwrap();
    let capture_a: i64 = db
        .query_row("SELECT max(id) FROM captures", [], |r| r.get(0))
        .unwrap();

    // B: more records, stored and relinked (A's capture has no snapshot yet).
    s.run_git(&["add", "-A"]);
    s.run_git(&["commit", "-q", "-m", "race work"]);
    s.say("done");
    s.hook(&cairn);
    let session: i64 = db
        .query_row("SELECT id FROM sessions", [], |r| r.get(0))
        .unwrap();
    let compared: i64 = db
        .query_row(
            "SELECT last_capture_id FROM association_state WHERE session_id = ?1",
            [session],
            |r| r.get(0),
        )
        .unwrap();
    assert!(compared > capture_a, "B's relink compared its own capture");

    // A relinks last and attaches its snapshot to the older capture.
    let late = cairn_core::git::after_capture(
        store.conn_mut(),
        &Touched {
            sessions: vec![session],
            captures: vec![capture_a],
        },
        None,
        usize::MAX,
    )
    .unwrap();
    assert_eq!(
        late.rebuilt, 1,
        "the late snapshot did not rebuild the session"
    );
    let got = links(&db);
    assert!(
        got.iter().any(|l| l.contains("feature/race")),
        "no link to the branch the session switched to: {got:#?}"
    );

    rebuild(&data, Vec::new());
    assert_eq!(got, links(&db), "the late relink differs from a rebuild");
}

/// A session whose relink always fails is given up after `MAX_LINK_ATTEMPTS` failed relinks;
/// until then it takes the relinks of other sessions down with it, after that they link again.
#[test]
fn a_session_whose_relink_always_fails_is_given_up_and_the_others_link_again() {
    let dir = tempfile::tempdir().unwrap();
    let repo = repo(&dir.path().join("repo"));
    let transcripts = dir.path().join("projects");
    std::fs::create_dir_all(&transcripts).unwrap();
    let data = dir.path().join("data");
    support::read_from(&data, Agent::Claude, &transcripts);
    let cairn = Cairn::open(&data).unwrap();
    let (mut bad, mut good) = (
        Session::new(&transcripts, "s-bad", &repo),
        Session::new(&transcripts, "s-good", &repo),
    );
    for s in [&mut bad, &mut good] {
        s.user("start");
        s.edit(&format!("{}.txt", s.id), "a\n");
        s.hook(&cairn);
    }
    let db = rusqlite::Connection::open(data.join("cairn.db")).unwrap();
    let row = |id: &str| -> i64 {
        db.query_row("SELECT id FROM sessions WHERE session_id = ?1", [id], |r| {
            r.get(0)
        })
        .unwrap()
    };
    let (bad_row, good_row) = (row("s-bad"), row("s-good"));
    // From now on every relink of s-bad fails when it stores its state.
    db.execute_batch(&format!(
        "CREATE TRIGGER poison_insert BEFORE INSERT ON association_state WHEN NEW.session_id = {bad_row}
             BEGIN SELECT RAISE(ABORT, 'poisoned'); END;
         CREATE TRIGGER poison_update BEFORE UPDATE ON association_state WHEN NEW.session_id = {bad_row}
             BEGIN SELECT RAISE(ABORT, 'poisoned'); END;"
    ))
    .unwrap();
    let pending = || -> Vec<(i64, i64)> {
        let mut stmt = db
            .prepare("SELECT session_id, attempts FROM link_pending ORDER BY session_id")
            .unwrap();
        stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap()
    };
    let scanned = |row: i64| -> (i64, i64) {
        db.query_row(
            "SELECT a.scanned_ordinal, s.next_ordinal - 1 FROM association_state a
             JOIN sessions s ON s.id = a.session_id WHERE a.session_id = ?1",
            [row],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap()
    };

    bad.say("more");
    bad.hook(&cairn);
    assert_eq!(pending(), vec![(bad_row, 1)]);
    // s-bad is taken up by s-good's relink, and fails it.
    for attempt in 2..=3 {
        good.say(&format!("turn {attempt}"));
        good.hook(&cairn);
        let (seen, last) = scanned(good_row);
        assert!(seen < last, "s-good relinked while s-bad was pending");
        if attempt < 3 {
            assert_eq!(pending(), vec![(bad_row, attempt), (good_row, attempt - 1)]);
        }
    }
    // The third failure gave s-bad up; s-good's next capture relinks it, and everything before.
    assert_eq!(pending(), vec![(good_row, 2)]);
    good.say("last");
    good.hook(&cairn);
    assert!(pending().is_empty());
    let (seen, last) = scanned(good_row);
    assert_eq!(seen, last, "s-good is not relinked up to its last record");
}

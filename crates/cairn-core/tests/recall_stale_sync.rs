//! Staleness found without anyone asking: a plain sync checks Recall's accepted entries against
//! the commits their repository gained since the last check (`recall/stale.rs`), remembering
//! each repository's place (`recall_stale_checks`). Real git repositories; the session is a
//! Claude Code transcript written here (its shape as in `recall.rs`'s staleness tests).

use std::path::{Path, PathBuf};

use cairn_core::archive::Agent;
use cairn_core::archive::capture::{Quiet, SyncReport};
use cairn_core::recall::stale::Flagged;
use cairn_core::{Cairn, SyncOptions};
use rusqlite::Connection;
use serde_json::json;

/// Run git in `repo` with author and committer dates set to `when`.
fn git_at(repo: &Path, args: &[&str], when: &str) -> String {
    let out = std::process::Command::new("git")
        .arg("-C")
        .arg(repo)
        .args(args)
        .env("GIT_AUTHOR_NAME", "T")
        .env("GIT_AUTHOR_EMAIL", "t@example.invalid")
        .env("GIT_COMMITTER_NAME", "T")
        .env("GIT_COMMITTER_EMAIL", "t@example.invalid")
        .env("GIT_AUTHOR_DATE", when)
        .env("GIT_COMMITTER_DATE", when)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

/// Change `file` in `repo` and commit it on `when`; its full hash.
fn commit(repo: &Path, file: &str, text: &str, message: &str, when: &str) -> String {
    std::fs::write(repo.join(file), text).unwrap();
    git_at(repo, &["add", file], when);
    git_at(repo, &["commit", "-q", "-m", message], when);
    git_at(repo, &["rev-parse", "HEAD"], when)
}

/// An import line: an entry reviewed and accepted by a person (trusted), its evidence the
/// records `start..=end` of the session.
fn entry(id: &str, start: u32, end: u32, title: &str) -> String {
    json!({
        "candidate_id": id, "session_id": SESSION, "type": "fact", "scope": "project",
        "title": title, "body": title, "transferable": true, "provenance_ok": true,
        "label": "correct",
        "evidence": {"ordinal_start": start, "ordinal_end": end, "snippets": [title]}
    })
    .to_string()
}

const SESSION: &str = "stale-on-sync";

/// A real repository holding `alpha.txt`, `beta.txt` and `gamma.txt` (committed on 1
/// February), a Claude Code session on 1 March that edited alpha (records 1-2) then beta
/// (records 3-4) there, and an archive whose Claude source is that session's folder, synced
/// once: (the folder, the repository, the archive).
struct Case {
    tmp: tempfile::TempDir,
    repo: PathBuf,
    cairn: Cairn,
}

impl Case {
    fn new() -> Case {
        let tmp = tempfile::tempdir().unwrap();
        let repo = tmp.path().join("repo");
        std::fs::create_dir_all(&repo).unwrap();
        let repo = std::fs::canonicalize(&repo).unwrap();
        let feb = "2026-02-01T00:00:00Z";
        git_at(&repo, &["init", "-q", "-b", "main"], feb);
        for f in ["alpha.txt", "beta.txt", "gamma.txt"] {
            std::fs::write(repo.join(f), "port = 3000\n").unwrap();
        }
        git_at(&repo, &["add", "-A"], feb);
        git_at(&repo, &["commit", "-q", "-m", "init"], feb);

        let mut lines = Vec::new();
        let mut n = 0;
        let mut push = |mut v: serde_json::Value| {
            n += 1;
            v.as_object_mut().unwrap().extend(
                json!({"sessionId": SESSION, "cwd": repo, "gitBranch": "main", "version": "2.1.39",
                    "uuid": format!("{SESSION}-{n}"),
                    "timestamp": format!("2026-03-01T10:00:{n:02}.000Z")})
                .as_object()
                .unwrap()
                .clone(),
            );
            lines.push(v.to_string());
        };
        push(json!({"type": "user", "message": {"role": "user",
            "content": "Move the dev server to port 4173 in both configs"}}));
        for (i, file) in ["alpha.txt", "beta.txt"].iter().enumerate() {
            let id = format!("toolu_{i}");
            push(
                json!({"type": "assistant", "message": {"id": format!("msg_{i}"),
                "role": "assistant", "model": "m",
                "content": [{"type": "tool_use", "id": id, "name": "Edit",
                    "input": {"file_path": repo.join(file), "old_string": "port = 3000",
                        "new_string": "port = 4173"}}]}}),
            );
            push(
                json!({"type": "user", "message": {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": id,
                    "content": "The file has been updated."}]}}),
            );
        }
        push(
            json!({"type": "assistant", "message": {"id": "msg_done", "role": "assistant",
            "model": "m", "content": [{"type": "text", "text": "Both configs now use port 4173."}]}}),
        );
        let claude = tmp.path().join("claude");
        let file = claude.join("p").join(format!("{SESSION}.jsonl"));
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(&file, lines.join("\n") + "\n").unwrap();

        let data = tmp.path().join("data");
        Cairn::open(&data)
            .unwrap()
            .set_source_dirs(Agent::Claude, vec![claude.display().to_string()])
            .unwrap();
        let case = Case {
            cairn: Cairn::open(&data).unwrap(),
            tmp,
            repo,
        };
        assert_eq!(case.sync().sessions_added, 1);
        case
    }

    /// A plain sync (Claude Code's source only, so nothing of the real home is read).
    fn sync(&self) -> SyncReport {
        let report = self
            .cairn
            .sync(
                &SyncOptions {
                    agents: vec![Agent::Claude],
                },
                &Quiet,
            )
            .unwrap();
        assert!(report.warnings.is_empty(), "{:?}", report.warnings);
        report
    }

    /// Import `line` (a trusted entry); its id.
    fn import(&self, line: &str) -> String {
        let report = self.cairn.recall_import(line, false).unwrap();
        assert_eq!((report.imported, report.errors.len()), (1, 0), "{report:?}");
        let got = self.cairn.recall_get(&entry_id(&self.cairn, line)).unwrap();
        assert!(got.is_trusted(), "{got:?}");
        got.id
    }

    /// Each repository's place as the check left it: (root, head, checked_at).
    fn places(&self) -> Vec<(String, String, String)> {
        let db = Connection::open(self.tmp.path().join("data/cairn.db")).unwrap();
        db.prepare("SELECT root, head, checked_at FROM recall_stale_checks ORDER BY root")
            .unwrap()
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .unwrap()
            .map(Result::unwrap)
            .collect()
    }

    /// Whether entry `id` is flagged stale, and its note.
    fn stale(&self, id: &str) -> (bool, Option<String>) {
        let e = self.cairn.recall_get(id).unwrap();
        (e.stale, e.stale_note)
    }
}

/// The id an import gave the entry with `line`'s title (the only one with it).
fn entry_id(cairn: &Cairn, line: &str) -> String {
    let title = serde_json::from_str::<serde_json::Value>(line).unwrap()["title"]
        .as_str()
        .unwrap()
        .to_owned();
    let listed = cairn
        .recall_list(&cairn_core::recall::store::Filters::default())
        .unwrap();
    let found: Vec<_> = listed.into_iter().filter(|e| e.title == title).collect();
    assert_eq!(found.len(), 1, "{found:?}");
    found[0].id.clone()
}

/// A commit changing a file an entry cites is noticed by the next plain sync, which says what
/// it flagged; a commit changing only files no entry cites flags nothing; and a sync after
/// which no HEAD moved reads no history (the repository's place is left exactly as it was: a
/// check that read it writes the time it did).
#[test]
fn a_plain_sync_flags_an_entry_a_commit_made_stale_and_reads_nothing_when_nothing_moved() {
    let case = Case::new();
    // Both files (records 0-5), and beta alone (records 3-4).
    let both = case.import(&entry("both", 0, 5, "Both configs use port 4173"));
    let beta = case.import(&entry("beta", 3, 4, "Beta uses port 4173"));

    // The first check reads each entry's history since its evidence: nothing changed.
    let first = case.sync();
    assert_eq!(first.stale_flagged, None, "{first:?}");
    let init = git_at(&case.repo, &["rev-parse", "HEAD"], "2026-02-01T00:00:00Z");
    let places = case.places();
    assert_eq!(places.len(), 1, "{places:?}");
    assert_eq!(
        (places[0].0.as_str(), places[0].1.as_str()),
        (case.repo.to_str().unwrap(), init.as_str())
    );

    // No commit since: HEAD is where the check left it, so no log is read.
    assert_eq!(case.sync().stale_flagged, None);
    assert_eq!(
        case.places(),
        places,
        "a sync with no new commit read history"
    );

    // A commit that changes only a file no entry cites: read, nothing flagged.
    let gamma = commit(
        &case.repo,
        "gamma.txt",
        "port = 5000\n",
        "gamma moves on",
        "2026-04-01T09:00:00Z",
    );
    assert_eq!(case.sync().stale_flagged, None);
    assert_eq!(case.places()[0].1, gamma);
    assert_eq!(case.stale(&both), (false, None));
    assert_eq!(case.stale(&beta), (false, None));

    // A commit that changes alpha: the entry citing it is out of service after a plain sync,
    // and the sync says so; the one citing beta alone stands.
    let alpha = commit(
        &case.repo,
        "alpha.txt",
        "port = 5173\n",
        "alpha moves on",
        "2026-04-02T09:00:00Z",
    );
    let report = case.sync();
    assert_eq!(
        report.stale_flagged,
        Some(Flagged {
            trusted: 1,
            untrusted: 0
        }),
        "{report:?}"
    );
    let json = serde_json::to_value(&report).unwrap();
    assert_eq!(
        json["stale_flagged"],
        json!({"trusted": 1, "untrusted": 0}),
        "{json}"
    );
    assert_eq!(
        case.stale(&both),
        (
            true,
            Some(format!(
                "alpha.txt changed in {} (\"alpha moves on\") after this was recorded",
                &alpha[..7]
            ))
        )
    );
    assert!(!case.cairn.recall_get(&both).unwrap().is_trusted());
    assert_eq!(case.stale(&beta), (false, None));
    let read = case.places();
    assert_eq!(read[0].1, alpha);

    // Nothing moved again: nothing read, nothing said (the JSON has no such field then).
    let quiet = case.sync();
    assert_eq!(quiet.stale_flagged, None);
    assert!(
        serde_json::to_value(&quiet)
            .unwrap()
            .get("stale_flagged")
            .is_none()
    );
    assert_eq!(case.places(), read);
}

/// A person accepts a flagged entry again: the next syncs (and `--check-stale`) read only the
/// commits since, so the commit it was flagged for does not take it out of service again.
#[test]
fn an_entry_accepted_again_is_not_flagged_again_for_the_same_commit() {
    let case = Case::new();
    let both = case.import(&entry("both", 0, 5, "Both configs use port 4173"));
    case.sync();
    commit(
        &case.repo,
        "alpha.txt",
        "port = 5173\n",
        "alpha moves on",
        "2026-04-02T09:00:00Z",
    );
    assert_eq!(case.sync().stale_flagged.map(|f| f.total()), Some(1));
    case.cairn.recall_accept(&both, None).unwrap();
    assert_eq!(case.sync().stale_flagged, None);
    assert_eq!(case.cairn.recall_check_stale().unwrap().total(), 0);
    assert!(case.cairn.recall_get(&both).unwrap().is_trusted());
    // A later commit changing beta is news again.
    commit(
        &case.repo,
        "beta.txt",
        "port = 6000\n",
        "beta moves on",
        "2026-04-03T09:00:00Z",
    );
    assert_eq!(case.sync().stale_flagged.map(|f| f.total()), Some(1));
}

/// An entry made after the repository's place was kept (here: after the commit changing its
/// file was read, HEAD not moving since) has never been checked: the next sync reads its whole
/// history since its evidence.
#[test]
fn an_entry_made_after_the_last_check_is_read_in_full_though_head_has_not_moved() {
    let case = Case::new();
    case.import(&entry("beta", 3, 4, "Beta uses port 4173"));
    case.sync();
    commit(
        &case.repo,
        "alpha.txt",
        "port = 5173\n",
        "alpha moves on",
        "2026-04-02T09:00:00Z",
    );
    assert_eq!(case.sync().stale_flagged, None, "beta alone is cited");
    let alpha = case.import(&entry("alpha", 1, 2, "Alpha uses port 4173"));
    assert_eq!(
        case.sync().stale_flagged,
        Some(Flagged {
            trusted: 1,
            untrusted: 0
        })
    );
    assert!(case.stale(&alpha).0);
}

/// A repository that vanished: the sync succeeds and flags nothing, and leaves the
/// repository's place where it was, so once it is back the next sync reads the commits since.
#[test]
fn a_repository_that_vanished_leaves_the_sync_whole_and_its_place_as_it_was() {
    let case = Case::new();
    let both = case.import(&entry("both", 0, 5, "Both configs use port 4173"));
    case.sync();
    let before = case.places();
    assert_eq!(before.len(), 1, "{before:?}");
    commit(
        &case.repo,
        "alpha.txt",
        "port = 5173\n",
        "alpha moves on",
        "2026-04-02T09:00:00Z",
    );
    let away = case.tmp.path().join("moved-away");
    std::fs::rename(&case.repo, &away).unwrap();
    let report = case.sync();
    assert_eq!(report.stale_flagged, None);
    assert_eq!(case.places(), before);
    assert_eq!(case.stale(&both), (false, None));
    assert_eq!(case.cairn.recall_check_stale().unwrap().total(), 0);

    std::fs::rename(&away, &case.repo).unwrap();
    assert_eq!(case.sync().stale_flagged.map(|f| f.total()), Some(1));
    assert!(case.stale(&both).0);
}

/// An archive from before migration 50 (no places kept): the migration makes the table, and
/// the first sync reads every entry's history once, flagging what an older commit changed.
#[test]
fn an_archive_from_before_migration_50_reads_every_entry_once_at_its_first_sync() {
    let mut case = Case::new();
    let both = case.import(&entry("both", 0, 5, "Both configs use port 4173"));
    commit(
        &case.repo,
        "alpha.txt",
        "port = 5173\n",
        "alpha moves on",
        "2026-04-02T09:00:00Z",
    );
    let data = case.tmp.path().join("data");
    {
        let conn = Connection::open(data.join("cairn.db")).unwrap();
        conn.execute_batch("DROP TABLE recall_stale_checks; PRAGMA user_version = 49;")
            .unwrap();
    }
    case.cairn = Cairn::open(&data).unwrap();
    let version: i64 = Connection::open(data.join("cairn.db"))
        .unwrap()
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .unwrap();
    assert!(version >= 50, "migration 50 did not run: {version}");
    assert!(case.places().is_empty());
    assert_eq!(case.sync().stale_flagged.map(|f| f.total()), Some(1));
    assert!(case.stale(&both).0);
    assert_eq!(case.places().len(), 1);
}

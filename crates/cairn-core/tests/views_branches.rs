//! The Branches page and repository-scoped skim: two repositories that both have a `main`
//! stay apart, and the linked worktrees of one repository are one entry.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use std::path::{Path, PathBuf};
use std::process::Command;

use cairn_core::Cairn;
use cairn_core::git::targets::Target;
use cairn_core::views::skim::SkimQuery;
use serde_json::json;

fn git(dir: &Path, args: &[&str]) {
    git_dated(dir, None, args);
}

/// `git` as if run at `date` (the reflog keeps the committer's time).
fn git_at(dir: &Path, date: &str, args: &[&str]) {
    git_dated(dir, Some(date), args);
}

fn git_dated(dir: &Path, date: Option<&str>, args: &[&str]) {
    let mut cmd = Command::new("git");
    cmd.arg("-C")
        .arg(dir)
        .args(args)
        .env("GIT_AUTHOR_NAME", "T")
        .env("GIT_AUTHOR_EMAIL", "t@example.invalid")
        .env("GIT_COMMITTER_NAME", "T")
        .env("GIT_COMMITTER_EMAIL", "t@example.invalid");
    if let Some(date) = date {
        cmd.env("GIT_AUTHOR_DATE", date)
            .env("GIT_COMMITTER_DATE", date);
    }
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn repo(path: &Path) -> PathBuf {
    std::fs::create_dir_all(path).unwrap();
    git(path, &["init", "-q", "-b", "main"]);
    std::fs::write(path.join("README"), "hi\n").unwrap();
    git(path, &["add", "README"]);
    git(path, &["commit", "-q", "-m", "init"]);
    std::fs::canonicalize(path).unwrap()
}

/// A read-only Claude session in `cwd` on `branch`, captured through the hook.
fn session(cairn: &Cairn, transcripts: &Path, id: &str, cwd: &Path, branch: &str) {
    session_at(cairn, transcripts, id, cwd, branch, jiff::Timestamp::now());
}

/// [`session`], its records written at `at`.
fn session_at(
    cairn: &Cairn,
    transcripts: &Path,
    id: &str,
    cwd: &Path,
    branch: &str,
    at: jiff::Timestamp,
) {
    let path = transcripts.join(format!("{id}.jsonl"));
    let now = at.strftime("%Y-%m-%dT%H:%M:%S%.3fZ").to_string();
    let common = json!({"sessionId": id, "cwd": cwd, "gitBranch": branch, "timestamp": now, "version": "2.1.39"});
    let mut lines = String::new();
    for (n, mut v) in [
        json!({"type": "user", "message": {"role": "user", "content": format!("look around {id}")}}),
        json!({"type": "assistant", "message": {"id": format!("msg_{id}"), "role": "assistant", "model": "m", "content": [{"type": "text", "text": "Looked."}]}}),
    ]
    .into_iter()
    .enumerate()
    {
        let obj = v.as_object_mut().unwrap();
        obj.extend(common.as_object().unwrap().clone());
        obj.insert("uuid".into(), json!(format!("{id}-{n}")));
        lines.push_str(&format!("{v}\n"));
    }
    std::fs::write(&path, lines).unwrap();
    let input =
        json!({"session_id": id, "transcript_path": path, "cwd": cwd, "hook_event_name": "Stop"});
    cairn
        .hook(
            &input.to_string(),
            Some(cairn_core::archive::Agent::Claude),
            cwd,
        )
        .unwrap();
}

/// An archive under `root` that reads Claude transcripts from `root/claude`, and that folder.
fn claude_archive(root: &Path) -> (Cairn, PathBuf) {
    let transcripts = root.join("claude");
    std::fs::create_dir_all(&transcripts).unwrap();
    let data = root.join("data");
    support::read_from(&data, cairn_core::archive::Agent::Claude, &transcripts);
    (Cairn::open(&data).unwrap(), transcripts)
}

/// The previews of the sessions a skim of `branch` lists in the repository at `root`, weak
/// links included, sorted.
fn previews_on(cairn: &Cairn, branch: &str, root: &Path) -> Vec<String> {
    let mut found: Vec<String> = cairn
        .skim(&SkimQuery {
            target: Target::branch(branch),
            include_weak: true,
            limit: None,
            repo_root: Some(root.to_string_lossy().into_owned()),
            unplaced: false,
            project: None,
            published_in: None,
            agent: None,
        })
        .unwrap()
        .sessions
        .iter()
        .map(|s| s.previews.concat())
        .collect();
    found.sort();
    found
}

fn skim_keys(cairn: &Cairn, root: Option<&Path>) -> usize {
    skim_main(cairn, root, false, None)
}

/// How many sessions a skim of `main` lists in `root` (with `unplaced`), or of `project`.
fn skim_main(cairn: &Cairn, root: Option<&Path>, unplaced: bool, project: Option<&str>) -> usize {
    cairn
        .skim(&SkimQuery {
            target: Target::branch("main"),
            include_weak: true,
            limit: None,
            repo_root: root.map(|r| r.to_string_lossy().into_owned()),
            unplaced,
            project: project.map(str::to_owned),
            published_in: None,
            agent: None,
        })
        .unwrap()
        .sessions
        .len()
}

#[test]
fn repositories_stay_apart_and_worktrees_fold_into_their_repository() {
    let tmp = tempfile::tempdir().unwrap();
    let alpha = repo(&tmp.path().join("alpha"));
    let beta = repo(&tmp.path().join("beta"));
    let wt = tmp.path().join("alpha-wt");
    git(
        &alpha,
        &[
            "worktree",
            "add",
            "-q",
            "-b",
            "feature",
            wt.to_str().unwrap(),
        ],
    );
    let wt = std::fs::canonicalize(wt).unwrap();

    let (cairn, transcripts) = claude_archive(tmp.path());
    session(&cairn, &transcripts, "a1", &alpha, "main");
    session(&cairn, &transcripts, "a2", &wt, "feature");
    session(&cairn, &transcripts, "b1", &beta, "main");
    session(&cairn, &transcripts, "b2", &beta, "main");

    let repos = cairn.branches(None).unwrap();
    let mut names: Vec<(&str, u32)> = repos
        .iter()
        .map(|r| (r.name.as_str(), r.session_count))
        .collect();
    names.sort();
    assert_eq!(names, vec![("alpha", 2), ("beta", 2)], "{repos:#?}");

    let alpha_entry = repos.iter().find(|r| r.name == "alpha").unwrap();
    assert_eq!(
        alpha_entry.root.as_deref(),
        Some(alpha.to_string_lossy().as_ref()),
        "the main worktree is the repository's root"
    );
    let mut branches: Vec<&str> = alpha_entry
        .branches
        .iter()
        .map(|b| b.name.as_str())
        .collect();
    branches.sort();
    assert_eq!(branches, vec!["feature", "main"]);
    let beta_main = &repos.iter().find(|r| r.name == "beta").unwrap().branches;
    assert_eq!(beta_main.len(), 1);
    assert_eq!(beta_main[0].weak_sessions + beta_main[0].sessions, 2);
    assert_eq!(beta_main[0].turns, 2);

    // `main` is one branch key in two repositories: unscoped skim sees both, scoped skim one.
    assert_eq!(skim_keys(&cairn, None), 3);
    assert_eq!(skim_keys(&cairn, Some(&alpha)), 1);
    assert_eq!(skim_keys(&cairn, Some(&beta)), 2);
    // A linked worktree's root names the same repository.
    assert_eq!(skim_keys(&cairn, Some(&wt)), 1);

    // A limited skim reads only the kept sessions' turns, and is the full skim's most recently
    // active sessions, turns, previews and counts alike.
    let skim = |limit| {
        cairn
            .skim(&SkimQuery {
                target: Target::branch("main"),
                include_weak: true,
                limit,
                repo_root: None,
                unplaced: false,
                project: None,
                published_in: None,
                agent: None,
            })
            .unwrap()
    };
    let full = skim(None);
    assert!(full.sessions.iter().all(|s| !s.turns.is_empty()));
    for limit in 1..=3 {
        let mut expected = full.sessions.clone();
        expected
            .sort_by(|a, b| (&b.updated_at, &a.session_key).cmp(&(&a.updated_at, &b.session_key)));
        expected.truncate(limit);
        expected.sort_by(|a, b| {
            (a.weak, &a.started_at, &a.session_key).cmp(&(b.weak, &b.started_at, &b.session_key))
        });
        let limited = skim(Some(limit as u32));
        assert_eq!(limited.sessions, expected, "limit {limit}");
        assert_eq!(
            limited.coverage.showing_turns,
            expected.iter().map(|s| s.turns.len() as u32).sum::<u32>()
        );
    }
}

#[test]
fn a_branch_of_sessions_in_no_repository_lists_only_those_of_its_project() {
    let tmp = tempfile::tempdir().unwrap();
    let alpha = repo(&tmp.path().join("alpha"));
    let notes = tmp.path().join("notes");
    std::fs::create_dir_all(&notes).unwrap();
    let (cairn, transcripts) = claude_archive(tmp.path());
    session(&cairn, &transcripts, "a1", &alpha, "main");
    // The agent says `main`, but its folder is no repository.
    session(&cairn, &transcripts, "n1", &notes, "main");

    let repos = cairn.branches(None).unwrap();
    let loose = repos
        .iter()
        .find(|r| r.root.is_none())
        .expect("a group without a root");
    assert_eq!(loose.project.as_deref(), Some("notes"), "{repos:#?}");
    assert_eq!(loose.session_count, 1);
    let placed = repos.iter().find(|r| r.root.is_some()).unwrap();
    assert_eq!(
        placed.project, None,
        "a repository's group is named by its root"
    );

    // The row says one session; its skim shows that one, not alpha's `main` too.
    assert_eq!(skim_main(&cairn, None, false, Some("notes")), 1);
    assert_eq!(skim_main(&cairn, None, false, Some("other")), 0);
    assert_eq!(skim_main(&cairn, None, false, None), 2);
    // A repository's skim keeps it only when asked (the CLI's rule), never a root's group.
    assert_eq!(skim_main(&cairn, Some(&alpha), false, None), 1);
    assert_eq!(skim_main(&cairn, Some(&alpha), true, None), 2);

    // A session of no repository and no project (an import whose folder was dropped) is a group
    // of its own, and an empty project skims that group alone.
    let db = rusqlite::Connection::open(tmp.path().join("data").join("cairn.db")).unwrap();
    db.execute(
        "UPDATE sessions SET project = NULL WHERE id = \
         (SELECT id FROM sessions WHERE project = 'notes')",
        [],
    )
    .unwrap();
    let repos = cairn.branches(None).unwrap();
    let bare = repos
        .iter()
        .find(|r| r.root.is_none())
        .expect("a group without a root");
    assert_eq!((bare.project.as_deref(), bare.session_count), (None, 1));
    assert_eq!(skim_main(&cairn, None, false, Some("")), 1);
    assert_eq!(skim_main(&cairn, None, false, Some("notes")), 0);
}

/// A Codex rollout of one exchange in `cwd` on `branch`, captured through the hook.
fn codex_session(cairn: &Cairn, transcripts: &Path, id: &str, cwd: &Path, branch: &str) {
    let now = jiff::Timestamp::now()
        .strftime("%Y-%m-%dT%H:%M:%S%.3fZ")
        .to_string();
    let lines = [
        json!({"timestamp": now, "type": "session_meta", "payload": {"id": id, "timestamp": now, "cwd": cwd,
            "originator": "codex_cli_rs", "cli_version": "0.146.0", "source": "cli", "git": {"branch": branch}}}),
        json!({"timestamp": now, "type": "event_msg", "payload": {"type": "user_message", "message": "look around"}}),
        json!({"timestamp": now, "type": "response_item", "payload": {"type": "message", "role": "assistant",
            "content": [{"type": "output_text", "text": "Looked."}]}}),
    ];
    let path = transcripts.join(format!("rollout-{id}.jsonl"));
    std::fs::write(&path, lines.map(|l| format!("{l}\n")).concat()).unwrap();
    let input = json!({"session_id": id, "transcript_path": path, "cwd": cwd});
    cairn
        .hook(
            &input.to_string(),
            Some(cairn_core::archive::Agent::Codex),
            cwd,
        )
        .unwrap();
}

#[test]
fn the_branch_list_and_the_agent_counts_follow_one_agent() {
    use cairn_core::archive::Agent;
    let tmp = tempfile::tempdir().unwrap();
    let alpha = repo(&tmp.path().join("alpha"));
    let beta = repo(&tmp.path().join("beta"));
    let claude = tmp.path().join("claude");
    let codex = tmp.path().join("codex");
    std::fs::create_dir_all(&claude).unwrap();
    std::fs::create_dir_all(&codex).unwrap();
    let data = tmp.path().join("data");
    support::read_from(&data, Agent::Claude, &claude);
    support::read_from(&data, Agent::Codex, &codex);
    let cairn = Cairn::open(&data).unwrap();
    session(&cairn, &claude, "a1", &alpha, "main");
    session(&cairn, &claude, "a2", &alpha, "main");
    session(&cairn, &claude, "b1", &beta, "main");
    codex_session(&cairn, &codex, "x1", &alpha, "main");

    let counts = || -> Vec<(Agent, u32)> {
        cairn
            .agent_counts()
            .unwrap()
            .into_iter()
            .map(|c| (c.agent, c.sessions))
            .collect()
    };
    assert_eq!(counts(), vec![(Agent::Claude, 3), (Agent::Codex, 1)]);

    let shape = |agent| {
        let mut out: Vec<(String, u32, Vec<String>)> = cairn
            .branches(agent)
            .unwrap()
            .into_iter()
            .map(|r| {
                let mut names: Vec<String> = r.branches.into_iter().map(|b| b.name).collect();
                names.sort();
                (r.name, r.session_count, names)
            })
            .collect();
        out.sort();
        out
    };
    let s = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    assert_eq!(
        shape(None),
        vec![
            ("alpha".into(), 3, s(&["main"])),
            ("beta".into(), 1, s(&["main"]))
        ]
    );
    // Only Codex's work: beta is gone, alpha counts one session.
    assert_eq!(
        shape(Some(Agent::Codex)),
        vec![("alpha".into(), 1, s(&["main"]))]
    );
    assert_eq!(
        shape(Some(Agent::Claude)),
        vec![
            ("alpha".into(), 2, s(&["main"])),
            ("beta".into(), 1, s(&["main"]))
        ]
    );
    assert!(shape(Some(Agent::Gemini)).is_empty());

    // A newer Cairn sharing the data dir wrote a session of an agent this build does not know:
    // it is counted and filtered under `atif`, where the lists badge it, and under no other.
    rusqlite::Connection::open(data.join("cairn.db"))
        .unwrap()
        .execute(
            "UPDATE sessions SET agent = 'zed' WHERE agent = 'codex'",
            [],
        )
        .unwrap();
    assert_eq!(counts(), vec![(Agent::Claude, 3), (Agent::Atif, 1)]);
    assert_eq!(
        shape(Some(Agent::Atif)),
        vec![("alpha".into(), 1, s(&["main"]))]
    );
    assert!(shape(Some(Agent::Codex)).is_empty());
}

/// What is checked out when a session long over is first read says nothing of it: it is not
/// "ran while feat/x was checked out". A session read while it runs is.
#[test]
fn a_session_long_over_is_not_linked_to_the_branch_checked_out_when_it_is_read() {
    let tmp = tempfile::tempdir().unwrap();
    let alpha = repo(&tmp.path().join("alpha"));
    git(&alpha, &["checkout", "-q", "-b", "feat/x"]);
    let (cairn, transcripts) = claude_archive(tmp.path());
    let march = "2026-03-01T10:00:00Z".parse().unwrap();
    // Both say they ran on `main` (Claude records it); only the live one ran on feat/x.
    session_at(&cairn, &transcripts, "old", &alpha, "main", march);
    session(&cairn, &transcripts, "live", &alpha, "main");
    let skim = |branch: &str| previews_on(&cairn, branch, &alpha);
    let on_x = skim("feat/x");
    assert_eq!(on_x.len(), 1, "{on_x:?}");
    assert!(on_x[0].contains("look around live"), "{on_x:?}");
    assert_eq!(skim("main").len(), 2, "what each agent recorded stays");
}

/// A session long over, first read today, ran on what its folder's HEAD reflog had checked out
/// then (weak, "ran on"), not on what is checked out today; a session read while it runs is
/// placed by its capture's snapshot alone.
#[test]
fn a_session_long_over_ran_on_what_the_reflog_had_checked_out() {
    let tmp = tempfile::tempdir().unwrap();
    let alpha = tmp.path().join("alpha");
    std::fs::create_dir_all(&alpha).unwrap();
    let alpha = std::fs::canonicalize(&alpha).unwrap();
    git_at(
        &alpha,
        "2025-01-01T09:00:00Z",
        &["init", "-q", "-b", "main"],
    );
    std::fs::write(alpha.join("README"), "hi\n").unwrap();
    git_at(&alpha, "2025-01-01T09:00:00Z", &["add", "README"]);
    git_at(
        &alpha,
        "2025-01-01T09:00:00Z",
        &["commit", "-q", "-m", "init"],
    );
    git_at(
        &alpha,
        "2025-02-01T09:00:00Z",
        &["checkout", "-q", "-b", "feat/old"],
    );
    git_at(&alpha, "2025-02-02T09:00:00Z", &["checkout", "-q", "main"]);
    git_at(
        &alpha,
        "2025-02-02T09:00:00Z",
        &["branch", "-q", "-D", "feat/old"],
    );
    git_at(
        &alpha,
        "2025-03-01T09:00:00Z",
        &["checkout", "-q", "--detach"],
    );
    git_at(&alpha, "2025-03-01T10:00:00Z", &["checkout", "-q", "main"]);
    git(&alpha, &["checkout", "-q", "-b", "feat/now"]);
    let (cairn, transcripts) = claude_archive(tmp.path());
    // No branch recorded (an agent that writes none): only the reflog can place them.
    let at = |ts: &str| ts.parse::<jiff::Timestamp>().unwrap();
    session_at(
        &cairn,
        &transcripts,
        "feb",
        &alpha,
        "",
        at("2025-02-01T12:00:00Z"),
    );
    session_at(
        &cairn,
        &transcripts,
        "mar",
        &alpha,
        "",
        at("2025-03-01T12:00:00Z"),
    );
    session_at(
        &cairn,
        &transcripts,
        "dec24",
        &alpha,
        "",
        at("2024-12-01T12:00:00Z"),
    );
    session(&cairn, &transcripts, "live", &alpha, "");
    let skim = |branch: &str| previews_on(&cairn, branch, &alpha);
    let feat_old = skim("feat/old");
    assert_eq!(feat_old.len(), 1, "{feat_old:?}");
    assert!(feat_old[0].contains("look around feb"), "{feat_old:?}");
    // March ran on main (back from a detached HEAD); December 2024 predates the reflog and is
    // placed nowhere. (Dates of 2025: the sessions must be over by the time the test runs.)
    let main = skim("main");
    assert_eq!(main.len(), 1, "{main:?}");
    assert!(main[0].contains("look around mar"), "{main:?}");
    let now = skim("feat/now");
    assert_eq!(now.len(), 1, "{now:?}");
    assert!(now[0].contains("look around live"), "{now:?}");

    let db = rusqlite::Connection::open(tmp.path().join("data").join("cairn.db")).unwrap();
    let details: Vec<(String, String)> = db
        .prepare(
            "SELECT target_key, detail FROM links WHERE evidence = 'ran_on_branch' ORDER BY target_key",
        )
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(
        details.len(),
        3,
        "one link each, the live one its snapshot's: {details:?}"
    );
    // feat/now (the live session's snapshot), feat/old and main (the reflog's).
    assert!(!details[0].1.contains("HEAD reflog"), "{details:?}");
    assert!(details[1].1.contains("HEAD reflog"), "{details:?}");
    assert!(details[2].1.contains("HEAD reflog"), "{details:?}");

    // A session that ran on another machine (an imported trajectory, here) is not placed by
    // this machine's reflog, though its folder has the same path here.
    db.execute_batch(
        "UPDATE sessions SET agent = 'atif' WHERE session_id = 'feb';
         INSERT INTO link_pending (session_id) SELECT id FROM sessions WHERE session_id = 'feb';",
    )
    .unwrap();
    cairn
        .sync(
            &cairn_core::SyncOptions::default(),
            &cairn_core::archive::capture::Quiet,
        )
        .unwrap();
    assert!(skim("feat/old").is_empty());
    assert_eq!(skim("main").len(), 1, "the others keep theirs");
}

/// A migration that queues every session for a relink (0038) leaves the backlog to the captures
/// that follow: a hook takes up only a few sessions of it beside its own (an agent waits on its
/// hook), a sync the rest.
#[test]
fn a_hook_relinks_a_few_sessions_of_the_backlog_and_a_sync_the_rest() {
    let tmp = tempfile::tempdir().unwrap();
    let alpha = repo(&tmp.path().join("alpha"));
    let (cairn, transcripts) = claude_archive(tmp.path());
    for n in 0..30 {
        session(&cairn, &transcripts, &format!("s{n}"), &alpha, "main");
    }
    let db = rusqlite::Connection::open(tmp.path().join("data").join("cairn.db")).unwrap();
    let pending = || -> usize {
        db.query_row("SELECT count(*) FROM link_pending", [], |r| {
            r.get::<_, i64>(0)
        })
        .map(|n| usize::try_from(n).unwrap())
        .unwrap()
    };
    assert_eq!(pending(), 0);
    db.execute(
        "INSERT INTO link_pending (session_id) SELECT id FROM sessions",
        [],
    )
    .unwrap();
    assert_eq!(pending(), 30);
    // One more turn of s0, through its hook: s0 and 16 of the others.
    session(&cairn, &transcripts, "s0", &alpha, "main");
    assert_eq!(pending(), 30 - 1 - cairn_core::git::HOOK_BACKLOG);
    cairn
        .sync(
            &cairn_core::SyncOptions::default(),
            &cairn_core::archive::capture::Quiet,
        )
        .unwrap();
    assert_eq!(pending(), 0);
}

/// A linked worktree's sessions are its repository's project (the list, `--project`, Recall's
/// scope and the session-start brief all read it); an archive that named them after the
/// worktree's folder is put right by migration 40, Recall's entries of that name with them.
#[test]
fn a_linked_worktrees_sessions_are_their_repositorys_project() {
    // Short names: a path run of 20 characters or more may read as a high-entropy secret and
    // be stored redacted (a random temporary folder's name in it).
    let tmp = tempfile::Builder::new()
        .prefix("t")
        .rand_bytes(3)
        .tempdir()
        .unwrap();
    let alpha = repo(&tmp.path().join("alpha"));
    let wt = tmp.path().join("cart");
    git(
        &alpha,
        &[
            "worktree",
            "add",
            "-q",
            "-b",
            "fix-cart",
            wt.to_str().unwrap(),
        ],
    );
    let wt = std::fs::canonicalize(wt).unwrap();
    let (cairn, transcripts) = claude_archive(tmp.path());
    session(&cairn, &transcripts, "main-1", &alpha, "main");
    session(&cairn, &transcripts, "wt-1", &wt, "fix-cart");
    let projects = |cairn: &Cairn| -> Vec<Option<String>> {
        let mut p: Vec<Option<String>> = cairn
            .sessions(&cairn_core::views::sessions::SessionQuery::default())
            .unwrap()
            .into_iter()
            .map(|s| s.project)
            .collect();
        p.sort();
        p
    };
    assert_eq!(
        projects(&cairn),
        [Some("alpha".into()), Some("alpha".into())]
    );

    // An archive from before: the worktree's session and a Recall entry under its folder's name.
    let db_path = tmp.path().join("data").join("cairn.db");
    let db = rusqlite::Connection::open(&db_path).unwrap();
    db.execute_batch(
        "UPDATE sessions SET project = 'cart' WHERE session_id = 'wt-1';
         INSERT INTO recall_entries (id, type, scope, title, body, project, created_at, updated_at)
             VALUES ('e1', 'fact', 'project', 'Carts', 'Carts expire', 'cart', 'x', 'x');
         INSERT INTO recall_entries (id, type, scope, title, body, project, created_at, updated_at)
             VALUES ('e2', 'fact', 'project', 'Other', 'Not a worktree', 'beta', 'x', 'x');
         PRAGMA user_version = 39;",
    )
    .unwrap();
    drop(db);
    drop(cairn);
    let cairn = Cairn::open(tmp.path().join("data")).unwrap();
    assert_eq!(
        projects(&cairn),
        [Some("alpha".into()), Some("alpha".into())]
    );
    let db = rusqlite::Connection::open(&db_path).unwrap();
    let entry_projects: Vec<(String, String)> = db
        .prepare("SELECT id, project FROM recall_entries ORDER BY id")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(
        entry_projects,
        [("e1".into(), "alpha".into()), ("e2".into(), "beta".into())]
    );
}

//! The agent work behind a PR, through git: `cairn publish --full` carries each related
//! session's redacted transcript under `refs/cairn/`; a teammate's `cairn pull` (a local bare
//! repository is the remote, with the real git binary) makes it a session of their archive that
//! `sessions`, `show`, `search`, `export` and `skim '#123'` read like their own, marked with its
//! publisher, never re-published by them; `--summary-md` writes the PR description's block.
//! Teammates' transcripts are hostile input: forged publishers, bombs, escape sequences, unknown
//! versions and a claim on the puller's own session are each refused whole, the pull going on.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::branch::{Transcript, key_of};
use crate::support::{Env, bare_remote, git, git_with};

const SECRET: &str = "ghp_EXAMPLEq7Xr9Kd2Lm4Np6Qs8Tv0Wy2Za4Bc6";

/// A bare remote with `main`, and the publisher's clone of it with a git identity.
fn team(root: &Path) -> (PathBuf, PathBuf) {
    let remote = bare_remote(root);
    let a = root.join("a");
    git(
        root,
        &["clone", "-q", remote.to_str().unwrap(), a.to_str().unwrap()],
    );
    let a = std::fs::canonicalize(a).unwrap();
    git(&a, &["config", "user.name", "Ann Publisher"]);
    git(&a, &["config", "user.email", "ann@example.invalid"]);
    std::fs::write(a.join("README.md"), "hi\n").unwrap();
    git(&a, &["add", "."]);
    git(&a, &["commit", "-q", "-m", "init"]);
    git(&a, &["push", "-q", "origin", "main"]);
    (remote, a)
}

/// The publisher's session on branch `shared`: a secret and absolute paths in it, an edit, a
/// commit and a test run.
fn work_on_shared(env: &Env, a: &Path) {
    git(a, &["checkout", "-q", "-b", "shared"]);
    let mut t = Transcript::new(env, "s-full", a, "shared");
    t.user(&format!(
        "add {} using token {SECRET}",
        a.join("feature.txt").display()
    ));
    t.edit("feature.txt", "zanzibar feature\n");
    t.run_git(&["add", "feature.txt"]);
    t.run_git(&["commit", "-m", "Add feature"]);
    t.say(&format!(
        "Committed {}; the tests pass.",
        a.join("feature.txt").display()
    ));
    t.hook(env);
    git(a, &["push", "-q", "origin", "shared"]);
}

/// The publisher's archive with [`work_on_shared`] published in full and pushed: the archive,
/// the bare remote and the publisher's clone.
fn shared_in_full() -> (Env, PathBuf, PathBuf) {
    let env = Env::new();
    let (remote, a) = team(env.root.path());
    work_on_shared(&env, &a);
    let a_str = a.to_str().unwrap();
    env.ok(&["-C", a_str, "publish", "shared", "--full"]);
    env.ok(&["-C", a_str, "push"]);
    (env, remote, a)
}

/// A teammate's clone of `remote` (their own archive `env`).
fn clone(env: &Env, remote: &Path) -> PathBuf {
    let b = env.root.path().join("b");
    git(
        env.root.path(),
        &["clone", "-q", remote.to_str().unwrap(), b.to_str().unwrap()],
    );
    std::fs::canonicalize(b).unwrap()
}

/// Every string under key `name`, anywhere in `v`.
fn strings_at(v: &Value, name: &str, out: &mut Vec<String>) {
    match v {
        Value::Array(a) => a.iter().for_each(|x| strings_at(x, name, out)),
        Value::Object(o) => o.iter().for_each(|(k, x)| {
            if k == name
                && let Some(s) = x.as_str()
            {
                out.push(s.to_owned());
            }
            strings_at(x, name, out)
        }),
        _ => {}
    }
}

fn all_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(all_files(&p));
        } else {
            out.push(p);
        }
    }
    out
}

#[test]
fn a_teammates_full_session_reads_like_a_local_one_and_is_never_republished() {
    let env = Env::new();
    let (remote, a) = team(env.root.path());
    work_on_shared(&env, &a);
    let a_str = a.to_str().unwrap();

    let dry = env.json(&["-C", a_str, "publish", "shared", "--full", "--dry-run"]);
    assert_eq!(dry["full"], true, "{dry:#}");
    assert_eq!(dry["transcripts"], 1);
    assert_eq!(git(&a, &["for-each-ref", "refs/cairn/"]), "");
    let published = env.json(&["-C", a_str, "publish", "shared", "--full"]);
    assert_eq!(published["transcripts"], 1, "{published:#}");
    assert_eq!(
        published["publisher"],
        "Ann Publisher <ann@example.invalid>"
    );
    let human = env.ok(&["-C", a_str, "publish", "shared", "--full"]);
    assert!(
        human.contains("In full: 1 redacted transcript ("),
        "{human}"
    );
    assert_eq!(env.json(&["-C", a_str, "push"])["pushed"], 1);
    let commit = git(
        &remote,
        &["for-each-ref", "--format=%(objectname)", "refs/cairn/"],
    );
    let files = git(&remote, &["ls-tree", "--name-only", commit.trim()]);
    assert_eq!(files.trim(), "session.json\ntranscript.json.zst");

    // The teammate pulls: the session is theirs to read, marked as Ann's.
    let teammate = Env::new();
    let b = clone(&teammate, &remote);
    let b_str = b.to_str().unwrap();
    let pulled = teammate.json(&["-C", b_str, "pull"]);
    assert_eq!(pulled["sessions_imported"], 1, "{pulled:#}");
    assert_eq!(pulled["transcripts_imported"], 1, "{pulled:#}");
    assert!(
        pulled["skipped"].as_array().unwrap().is_empty(),
        "{pulled:#}"
    );
    // What arrived has no secret and no absolute path of the publisher's machine.
    for f in all_files(&teammate.data()) {
        let bytes = std::fs::read(&f).unwrap();
        let text = String::from_utf8_lossy(&bytes);
        assert!(!text.contains(SECRET), "secret in {}", f.display());
        assert!(!text.contains(a_str), "publisher's path in {}", f.display());
    }

    let sessions = teammate.json(&["sessions"]);
    let list = sessions.as_array().unwrap();
    assert_eq!(list.len(), 1, "{sessions:#}");
    assert_eq!(
        list[0]["published_by"],
        "Ann Publisher <ann@example.invalid>"
    );
    let key = list[0]["session_key"].as_str().unwrap().to_owned();
    // It shows the agent Ann ran, not the format it travelled in.
    assert_eq!(list[0]["agent"], "atif");
    assert_eq!(list[0]["ran_by"], "claude", "{sessions:#}");
    // Listed under the repository it was pulled into (its folder left Ann's machine relative).
    assert_eq!(list[0]["project"], "b", "{sessions:#}");
    let human = teammate.ok(&["sessions"]);
    assert!(human.contains("published by Ann Publisher"), "{human}");
    assert!(
        human.contains("  claude  ") && !human.contains("atif"),
        "{human}"
    );

    let shown = teammate.json(&["show", &key]);
    assert_eq!(shown["status"], "published");
    assert_eq!(shown["ran_by"], "claude");
    assert_eq!(
        shown["published_by"]["publisher"],
        "Ann Publisher <ann@example.invalid>"
    );
    assert_eq!(shown["published_by"]["pulled_from"], "origin");
    assert!(!shown["turns"].as_array().unwrap().is_empty(), "{shown:#}");
    let human = teammate.ok(&["show", &key]);
    // "1 turn of" or "N turns of": the count's own noun.
    assert!(
        human.contains(" turn of claude session") || human.contains(" turns of claude session"),
        "{human}"
    );
    assert!(
        human.contains("published by Ann Publisher <ann@example.invalid>"),
        "{human}"
    );
    assert!(
        human.contains("pulled from origin (a teammate's session"),
        "{human}"
    );

    let hits = teammate.json(&["search", "zanzibar"]);
    assert!(
        hits.to_string().contains(&key),
        "the pulled session is searchable: {hits:#}"
    );
    // Each hit says whose text it is.
    let mut by = Vec::new();
    strings_at(&hits, "published_by", &mut by);
    assert!(
        !by.is_empty()
            && by
                .iter()
                .all(|p| p == "Ann Publisher <ann@example.invalid>"),
        "{hits:#}"
    );
    let human = teammate.ok(&["search", "zanzibar"]);
    assert!(
        human.contains("(published by Ann Publisher <ann@example.invalid>, a teammate's text)"),
        "{human}"
    );
    // Search hits and every agent filter take the agent Ann ran, not `atif`.
    let mut agents = Vec::new();
    strings_at(&hits, "agent", &mut agents);
    assert!(!agents.is_empty(), "{hits:#}");
    assert!(agents.iter().all(|a| a == "claude"), "{hits:#}");
    let as_claude = teammate.json(&["search", "zanzibar", "--agent", "claude"]);
    assert!(as_claude.to_string().contains(&key), "{as_claude:#}");
    let as_atif = teammate.json(&["search", "zanzibar", "--agent", "atif"]);
    assert!(!as_atif.to_string().contains(&key), "{as_atif:#}");
    let listed = |agent: &str| {
        teammate
            .json(&["sessions", "--agent", agent])
            .as_array()
            .unwrap()
            .len()
    };
    assert_eq!((listed("claude"), listed("atif")), (1, 0));
    // It is placed in the repository it was pulled into (its document came through this
    // repository's refs), so the branch list shows it there, not under "(no repository)".
    let db = rusqlite::Connection::open(teammate.data().join("cairn.db")).unwrap();
    let (root, branch): (String, Option<String>) = db
        .query_row(
            "SELECT r.root, s.git_branch FROM sessions s JOIN repos r ON r.id = s.repo_id
             WHERE s.session_key = ?1",
            [&key],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!(Path::new(&root), b.as_path());
    assert_eq!(branch.as_deref(), Some("shared"));
    let md = teammate.ok(&["export", &key, "--format", "md"]);
    assert!(md.contains("zanzibar"), "{md}");

    // Skim of the branch shows the teammate's session with its publisher and its whole session.
    let v = teammate.json(&["-C", b_str, "skim", "branch", "shared"]);
    let s = &v["sessions"][0];
    assert_eq!(v["sessions"].as_array().unwrap().len(), 1, "{v:#}");
    assert_eq!(s["untrusted"], true);
    assert_eq!(s["published_by"], "Ann Publisher <ann@example.invalid>");
    assert_eq!(s["archive_key"], key.as_str());
    assert_eq!(s["agent"], "claude");
    let human = teammate.ok(&["-C", b_str, "skim", "branch", "shared"]);
    assert!(
        human.contains("status: published by Ann Publisher <ann@example.invalid> "),
        "{human}"
    );
    assert!(
        human.contains(&format!("whole session: cairn show {key}")),
        "{human}"
    );

    // A second pull changes nothing.
    let again = teammate.json(&["-C", b_str, "pull"]);
    assert_eq!(
        (
            again["sessions_imported"].as_u64(),
            again["transcripts_imported"].as_u64(),
            again["unchanged"].as_u64()
        ),
        (Some(0), Some(0), Some(1)),
        "{again:#}"
    );
    assert_eq!(teammate.json(&["sessions"]).as_array().unwrap().len(), 1);

    // Nothing of Ann's is ever re-published by the teammate, even on their checkout of the
    // branch holding the commit her session made.
    git(&b, &["checkout", "-q", "shared"]);
    teammate.ok(&["sync"]);
    let republished = teammate.json(&["-C", b_str, "publish", "shared", "--full"]);
    assert_eq!(republished["sessions"], 0, "{republished:#}");
    assert_eq!(git(&b, &["for-each-ref", "refs/cairn/sessions/"]), "");
    assert_eq!(teammate.json(&["-C", b_str, "push"])["pushed"], 0);
}

/// `cairn skim '#123'` (and the PR's URL) on a reviewer's machine: every teammate's published
/// work on the PR, in the order it happened.
#[test]
fn skim_of_a_pr_shows_every_teammates_work_in_time_order() {
    let root = tempfile::tempdir().unwrap();
    let remote = bare_remote(root.path());
    // Two teammates' documents for pull request 123, planted as a publisher's Cairn writes them.
    let doc = |n: u32, started: &str, title: &str| {
        let key = format!("sha256-{n:032x}");
        let turn = format!("sha256-{:032x}", n + 100);
        let d = json!({
            "schema": "cairn.published-session.v1", "published_at": "2026-03-02T10:00:00Z",
            "target_keys": ["pull-request:#123"],
            "session": {
                "session_key": key, "status": "published", "agent": "claude", "title": title,
                "project": "app", "started_at": started, "updated_at": started,
                "turn_count": 1, "record_count": 2, "related_turn_count": 1, "weak": false,
                "why_related": [{"evidence": "pr_created", "confidence": 0.95, "target_key": "pull-request:#123",
                    "turn_key": turn, "turn_index": 0, "ordinal": 1, "commit": null, "reason": "opened PR #123"}],
                "previews": ["user: work"], "turns": []
            }
        });
        plant(&remote, &key, &d, None);
    };
    doc(2, "2026-03-01T12:00:00Z", "Bob fixes review comments");
    doc(1, "2026-03-01T09:00:00Z", "Ann starts the feature");
    let reviewer = Env::new();
    let b = clone(&reviewer, &remote);
    let b_str = b.to_str().unwrap();
    assert_eq!(
        reviewer.json(&["-C", b_str, "pull"])["sessions_imported"],
        2
    );
    for target in ["#123", "https://github.com/o/r/pull/123"] {
        let v = reviewer.json(&["-C", b_str, "skim", target]);
        let titles: Vec<&str> = v["sessions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["title"].as_str().unwrap())
            .collect();
        assert_eq!(
            titles,
            ["Ann starts the feature", "Bob fixes review comments"],
            "{target}: {v:#}"
        );
    }
    let out = reviewer.run(&["-C", b_str, "skim", "#abc"]);
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("names no pull request"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn summary_md_is_a_block_for_the_pr_description() {
    let env = Env::new();
    let (_remote, a) = team(env.root.path());
    work_on_shared(&env, &a);
    let a_str = a.to_str().unwrap();
    let md = env.ok(&["-C", a_str, "publish", "shared", "--summary-md"]);
    // It describes; it writes nothing.
    assert_eq!(git(&a, &["for-each-ref", "refs/cairn/"]), "");
    let key = key_of(&env, "s-full");
    assert!(md.contains(&format!("(cairn://session/{key})")), "{md}");
    let dated = regex::Regex::new(r"\d{4}-\d{2}-\d{2}").unwrap();
    let md = dated.replace_all(&md, "DATE").replace(&key, "KEY");
    insta::assert_snapshot!("publish_summary_md", md);
    let v = env.json(&["-C", a_str, "publish", "shared", "--summary-md"]);
    assert!(
        v["markdown"]
            .as_str()
            .unwrap()
            .starts_with("### Agent work")
    );
    // With --full the links are the keys a teammate's pull gives the sessions.
    let full = env.ok(&["-C", a_str, "publish", "shared", "--full", "--summary-md"]);
    assert!(!full.contains(&key), "{full}");
    assert!(
        full.contains("the whole redacted sessions are published"),
        "{full}"
    );
}

// ---- hostile transcripts

/// Plant `doc` as `session.json` (and `transcript`, compressed bytes, as `transcript.json.zst`)
/// of a commit on `refs/cairn/sessions/<key>` in `repo`.
fn plant(repo: &Path, key: &str, doc: &Value, transcript: Option<&[u8]>) {
    let blob = |bytes: &[u8]| git_with(repo, &["hash-object", "-w", "--stdin"], Some(bytes));
    let mut entries = format!(
        "100644 blob {}\tsession.json\n",
        blob(doc.to_string().as_bytes()).trim()
    );
    if let Some(t) = transcript {
        entries.push_str(&format!(
            "100644 blob {}\ttranscript.json.zst\n",
            blob(t).trim()
        ));
    }
    let tree = git_with(repo, &["mktree"], Some(entries.as_bytes()));
    let commit = git(repo, &["commit-tree", tree.trim(), "-m", "cairn publish"]);
    git(
        repo,
        &[
            "update-ref",
            &format!("refs/cairn/sessions/{key}"),
            commit.trim(),
        ],
    );
}

/// A bare remote on `main` under `root`, and a puller with a clone of it.
fn remote_and_puller(root: &Path) -> (PathBuf, Env, PathBuf) {
    let remote = bare_remote(root);
    let puller = Env::new();
    let b = clone(&puller, &remote);
    (remote, puller, b)
}

/// A metadata document for `key` on branch `feat`.
fn doc(key: &str) -> Value {
    json!({
        "schema": "cairn.published-session.v1", "published_at": "2026-03-01T10:00:00Z",
        "target_keys": ["ref:refs/heads/feat"],
        "session": {
            "session_key": key, "status": "published", "agent": "claude", "title": "Teammate work",
            "project": "app", "started_at": "2026-03-01T09:00:00Z", "updated_at": "2026-03-01T09:30:00Z",
            "turn_count": 1, "record_count": 2, "related_turn_count": 1, "weak": false,
            "why_related": [], "previews": [], "turns": []
        }
    })
}

/// A transcript envelope for `key`, published by `publisher`.
fn envelope(key: &str, publisher: &str, text: &str) -> Value {
    json!({
        "schema": "cairn.published-transcript.v1", "session_key": key, "publisher": publisher,
        "published_at": "2026-03-01T10:00:00Z",
        "trajectory": {
            "schema_version": "ATIF-v1.4", "session_id": key,
            "agent": {"name": "claude-code", "version": "2.1"},
            "steps": [
                {"step_id": 1, "source": "user", "message": text, "timestamp": "2026-03-01T09:00:00Z"},
                {"step_id": 2, "source": "agent", "message": "done", "timestamp": "2026-03-01T09:01:00Z"}
            ]
        }
    })
}

fn zst(v: &Value) -> Vec<u8> {
    zstd::bulk::compress(v.to_string().as_bytes(), 3).unwrap()
}

fn key(n: u32) -> String {
    format!("sha256-{n:032x}")
}

const ESCAPES: &str =
    "\u{1b}]52;c;ZWNobyBwd25lZA==\u{7}\u{1b}[2J\u{9b}31m\u{202e}txt\u{202c}\r\u{8}";

fn inert(text: &str) {
    for c in text.chars() {
        let bidi = matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}');
        assert!(
            !((c.is_control() && c != '\n' && c != '\t') || bidi),
            "{c:?} in {text}"
        );
    }
}

/// A teammate's document and transcript may hold secrets (a hand-made ref, another tool's):
/// nothing pulled stores one under the data dir, in the database or in the kept trajectory, and
/// no view shows one.
#[test]
fn a_teammates_secrets_are_redacted_before_anything_is_stored_or_shown() {
    let root = tempfile::tempdir().unwrap();
    let (remote, puller, b) = remote_and_puller(root.path());
    let secret = format!("ghp_{}", "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8");
    let k = key(21);
    let mut d = doc(&k);
    d["session"]["title"] = json!(format!("deploy with {secret}"));
    d["session"]["previews"] = json!([format!("user: the token is {secret}")]);
    plant(
        &remote,
        &k,
        &d,
        Some(&zst(&envelope(
            &k,
            "Ann",
            &format!("use {secret} for the deploy"),
        ))),
    );
    let b_str = b.to_str().unwrap();
    let pulled = puller.json(&["-C", b_str, "pull"]);
    assert_eq!(pulled["transcripts_imported"], 1, "{pulled:#}");
    for f in all_files(&puller.data()) {
        let bytes = std::fs::read(&f).unwrap();
        let plain = zstd::decode_all(&bytes[..]).unwrap_or(bytes);
        assert!(
            !String::from_utf8_lossy(&plain).contains(&secret),
            "the secret is in {}",
            f.display()
        );
    }
    for args in [
        &["-C", b_str, "skim", "branch", "feat"][..],
        &["sessions"],
        &["--json", "sessions"],
    ] {
        let out = puller.ok(args);
        assert!(!out.contains(&secret), "{args:?}: {out}");
    }
    let skim = puller.ok(&["-C", b_str, "skim", "branch", "feat"]);
    assert!(skim.contains("[REDACTED:github-pat]"), "{skim}");
}

#[test]
fn hostile_transcripts_are_refused_whole_and_the_pull_goes_on() {
    let root = tempfile::tempdir().unwrap();
    let (remote, puller, b) = remote_and_puller(root.path());
    // The puller has a session of their own; a teammate's ref claims its key.
    git(&b, &["config", "user.name", "Bea"]);
    let mut t = Transcript::new(&puller, "s-mine", &b, "main");
    t.user("my own private work");
    t.say("done");
    t.hook(&puller);
    let mine = key_of(&puller, "s-mine");

    let good = key(1);
    plant(
        &remote,
        &good,
        &doc(&good),
        Some(&zst(&envelope(
            &good,
            "Ann <ann@example.invalid>",
            &format!("hostile {ESCAPES} text"),
        ))),
    );
    let mut refused: Vec<(String, &str)> = Vec::new();
    let mut crafted = |n: u32, why: &'static str, transcript: Vec<u8>| {
        plant(&remote, &key(n), &doc(&key(n)), Some(&transcript));
        refused.push((key(n), why));
    };
    crafted(
        2,
        "the publisher is not a printable name",
        zst(&envelope(&key(2), &format!("Ann{ESCAPES}"), "x")),
    );
    crafted(
        3,
        "is one this Cairn cannot read (it reads cairn.published-transcript.v1): update Cairn",
        zst(&json!({"schema": "cairn.published-transcript.v9", "future": true})),
    );
    let mut bomb = envelope(&key(4), "Ann", "x");
    bomb["trajectory"]["notes"] = json!("a".repeat(33 * 1024 * 1024));
    crafted(
        4,
        "decompresses to more than the 33554432 bytes",
        zst(&bomb),
    );
    let mut huge = vec![0u8; 9 * 1024 * 1024];
    huge[..4].copy_from_slice(&[0x28, 0xb5, 0x2f, 0xfd]);
    crafted(5, "more than the 8388608 a document may have", huge);
    crafted(
        6,
        "not the ref's own key",
        zst(&envelope(&key(1), "Ann", "x")),
    );
    crafted(
        7,
        "not a zstd stream",
        b"{\"schema\": \"cairn.published-transcript.v1\"}".to_vec(),
    );
    // A document and transcript for the puller's own session: refused, the session untouched.
    plant(
        &remote,
        &mine,
        &doc(&mine),
        Some(&zst(&envelope(&mine, "Mallory", "I rewrote your session"))),
    );
    refused.push((
        mine.clone(),
        "summary imported, full transcript not: it is of session",
    ));

    let b_str = b.to_str().unwrap();
    let pulled = puller.json(&["-C", b_str, "pull"]);
    assert_eq!(pulled["transcripts_imported"], 1, "{pulled:#}");
    let skipped = pulled["skipped"].as_array().unwrap();
    for (k, why) in &refused {
        let s = skipped
            .iter()
            .find(|s| s["ref"] == format!("refs/cairn/sessions/{k}"))
            .unwrap_or_else(|| panic!("{k} ({why}) not reported: {pulled:#}"));
        assert!(s["reason"].as_str().unwrap().contains(why), "{why}: {s}");
        // Each document was read whole and only its transcript refused: counted among the
        // documents imported, and the reason says so.
        let summary_in = s["reason"]
            .as_str()
            .unwrap()
            .starts_with("summary imported, full transcript not: ");
        assert!(summary_in, "{s}");
    }
    let human = puller.ok(&["-C", b_str, "pull"]);
    inert(&human);
    // The puller's own session is as it was, and still theirs.
    let list = puller.json(&["sessions"]);
    let own = list
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["session_key"] == mine.as_str())
        .unwrap();
    assert!(own["published_by"].is_null(), "{own}");
    assert!(
        !puller
            .json(&["show", &mine])
            .to_string()
            .contains("rewrote")
    );
    // The accepted one reads inert in every view.
    let theirs = list
        .as_array()
        .unwrap()
        .iter()
        .find(|s| !s["published_by"].is_null())
        .unwrap()["session_key"]
        .as_str()
        .unwrap()
        .to_owned();
    for args in [
        vec!["sessions"],
        vec!["show", theirs.as_str()],
        vec!["search", "hostile"],
        vec!["-C", b_str, "skim", "branch", "feat"],
    ] {
        inert(&puller.ok(&args));
    }

    // A forged publisher: the same session, now claiming Mallory published it.
    let forged = zst(&envelope(
        &good,
        "Mallory <ann@example.invalid>",
        "replaced",
    ));
    let mut d = doc(&good);
    d["published_at"] = json!("2026-03-03T10:00:00Z");
    let parent = git(
        &remote,
        &["rev-parse", &format!("refs/cairn/sessions/{good}")],
    );
    let blob = |bytes: &[u8]| {
        git_with(&remote, &["hash-object", "-w", "--stdin"], Some(bytes))
            .trim()
            .to_owned()
    };
    let tree = git_with(
        &remote,
        &["mktree"],
        Some(
            format!(
                "100644 blob {}\tsession.json\n100644 blob {}\ttranscript.json.zst\n",
                blob(d.to_string().as_bytes()),
                blob(&forged)
            )
            .as_bytes(),
        ),
    );
    let commit = git(
        &remote,
        &["commit-tree", tree.trim(), "-p", parent.trim(), "-m", "x"],
    );
    git(
        &remote,
        &[
            "update-ref",
            &format!("refs/cairn/sessions/{good}"),
            commit.trim(),
        ],
    );
    let again = puller.json(&["-C", b_str, "pull"]);
    let s = again["skipped"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["ref"] == format!("refs/cairn/sessions/{good}"))
        .unwrap_or_else(|| panic!("forged publisher not refused: {again:#}"));
    assert!(
        s["reason"].as_str().unwrap().contains(
            "was published by Ann <ann@example.invalid>; a transcript naming another publisher"
        ),
        "{s}"
    );
    assert!(!puller.ok(&["show", &theirs]).contains("replaced"));
}

// ---- where a pull reads from

/// A bare repository holding one teammate's full session.
fn published_remote(root: &Path) -> (PathBuf, String) {
    let remote = bare_remote(root);
    let k = key(1);
    plant(
        &remote,
        &k,
        &doc(&k),
        Some(&zst(&envelope(
            &k,
            "Ann <ann@example.invalid>",
            "teammate work",
        ))),
    );
    (std::fs::canonicalize(remote).unwrap(), k)
}

/// `cairn pull` takes a URL or a path as `git fetch` does, keeps what it fetched apart from any
/// configured remote's refs, and records where the session came from without credentials.
#[test]
fn pull_takes_a_configured_remote_a_url_or_a_path() {
    let root = tempfile::tempdir().unwrap();
    let (remote, k) = published_remote(root.path());
    let remote_str = remote.to_str().unwrap().to_owned();
    let file_url = format!("file://{remote_str}");
    for (arg, shown) in [
        (remote_str.clone(), remote_str.clone()),
        (file_url.clone(), file_url.clone()),
    ] {
        let env = Env::new();
        let b = env.root.path().join("b");
        std::fs::create_dir(&b).unwrap();
        git(&b, &["init", "-q", "-b", "main"]);
        let b_str = b.to_str().unwrap();
        let pulled = env.json(&["-C", b_str, "pull", &arg]);
        assert_eq!(pulled["transcripts_imported"], 1, "{arg}: {pulled:#}");
        assert_eq!(pulled["remote"], shown.as_str());
        let refs = git(&b, &["for-each-ref", "--format=%(refname)", "refs/"]);
        assert!(
            refs.lines().count() == 1
                && refs.starts_with("refs/cairn/fetched/")
                && refs.trim().ends_with(&format!("/sessions/{k}")),
            "{refs}"
        );
        let list = env.json(&["sessions"]);
        let theirs = list[0]["session_key"].as_str().unwrap().to_owned();
        let shown_json = env.json(&["show", &theirs]);
        assert_eq!(shown_json["published_by"]["pulled_from"], shown.as_str());
        // Again: unchanged.
        let again = env.json(&["-C", b_str, "pull", &arg]);
        assert_eq!(again["unchanged"], 1, "{again:#}");
        assert_eq!(again["transcripts_imported"], 0, "{again:#}");
    }
    // A relative path reads from the repository's root.
    let env = Env::new();
    let b = root.path().join("rel");
    std::fs::create_dir(&b).unwrap();
    git(&b, &["init", "-q", "-b", "main"]);
    let pulled = env.json(&["-C", b.to_str().unwrap(), "pull", "../remote.git"]);
    assert_eq!(pulled["transcripts_imported"], 1, "{pulled:#}");
}

/// Hostile places to pull from: each refused before git reaches anything, nothing written, no
/// command run.
#[test]
fn pull_refuses_options_command_transports_and_paths_that_name_no_repository() {
    let root = tempfile::tempdir().unwrap();
    let (remote, _) = published_remote(root.path());
    let env = Env::new();
    let b = clone(&env, &remote);
    let b_str = b.to_str().unwrap();
    let marker = root.path().join("pwned");
    let m = marker.to_str().unwrap();
    // A remote whose URL runs a command, in a repository whose config allows that transport.
    git(
        &b,
        &["remote", "add", "evil", &format!("ext::sh -c touch% {m}")],
    );
    git(&b, &["config", "protocol.ext.allow", "always"]);
    let not_a_repo = tempfile::tempdir().unwrap();
    let cases: Vec<(String, &str)> = vec![
        (format!("--upload-pack=touch {m}"), "read as an option"),
        ("-oProxyCommand=x:app".to_owned(), "read as an option"),
        (format!("ext::sh -c touch% {m}"), "transport `ext::`"),
        ("fd::0".to_owned(), "transport `fd::`"),
        ("evil".to_owned(), "its URL uses the transport `ext::`"),
        (
            format!("ssh://-oProxyCommand=touch%20{m}/app"),
            "as an option",
        ),
        ("gopher://example.invalid/app".to_owned(), "gopher://"),
        (
            "../../../nowhere/at/all".to_owned(),
            "no folder is at that path",
        ),
        (
            not_a_repo.path().to_str().unwrap().to_owned(),
            "is not a git repository",
        ),
        ("origin\u{1b}[2J".to_owned(), "printable"),
        (" origin".to_owned(), "name a remote"),
    ];
    for (arg, why) in cases {
        let out = env.run(&["-C", b_str, "pull", "--", &arg]);
        assert!(!out.status.success(), "{arg:?} accepted");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(why), "{arg:?}: {stderr}");
        inert(&stderr);
        assert!(!marker.exists(), "{arg:?} ran a command");
        assert_eq!(git(&b, &["for-each-ref", "refs/cairn/"]), "", "{arg:?}");
    }
    assert!(env.json(&["sessions"]).as_array().unwrap().is_empty());
}

// ---- a pull cut short

/// A transcript that could not be captured (here the pulled folder cannot be written; a kill
/// at that point leaves the same state) is taken again by the next pull, not left behind its
/// already-stored document until the teammate publishes again.
#[test]
fn a_transcript_not_captured_is_taken_by_the_next_pull() {
    let root = tempfile::tempdir().unwrap();
    let (remote, _) = published_remote(root.path());
    let env = Env::new();
    let b = clone(&env, &remote);
    let b_str = b.to_str().unwrap();
    let pulled_dir = env.data().join("pulled");
    std::fs::create_dir_all(env.data()).unwrap();
    std::fs::write(&pulled_dir, "in the way").unwrap();
    let first = env.json(&["-C", b_str, "pull"]);
    assert_eq!(first["sessions_imported"], 1, "{first:#}");
    assert_eq!(first["transcripts_imported"], 0, "{first:#}");
    assert_eq!(first["skipped"].as_array().unwrap().len(), 1, "{first:#}");
    std::fs::remove_file(&pulled_dir).unwrap();
    let second = env.json(&["-C", b_str, "pull"]);
    assert_eq!(second["transcripts_imported"], 1, "{second:#}");
    assert_eq!(env.json(&["sessions"]).as_array().unwrap().len(), 1);
    let third = env.json(&["-C", b_str, "pull"]);
    assert_eq!(
        (
            third["unchanged"].as_u64(),
            third["transcripts_imported"].as_u64()
        ),
        (Some(1), Some(0)),
        "{third:#}"
    );
}

/// `cairn pull` SIGKILLed at seeded random points: the next pull always completes it (every
/// teammate's session in the archive, whole), and the one after changes nothing.
#[test]
fn pull_killed_at_random_points_completes_on_the_next_pull() {
    use crate::harden::{Rng, Window, kill_after, quiet, rounds};
    let root = tempfile::tempdir().unwrap();
    let (remote, _) = published_remote(root.path());
    let n = 12;
    for i in 2..=n {
        let k = key(i);
        plant(
            &remote,
            &k,
            &doc(&k),
            Some(&zst(&envelope(
                &k,
                "Ann <ann@example.invalid>",
                &format!("work {i}"),
            ))),
        );
    }
    let clean = Env::new();
    let b = clone(&clean, &remote);
    let started = std::time::Instant::now();
    let first = clean.json(&["-C", b.to_str().unwrap(), "pull"]);
    let clean_run = started.elapsed();
    assert_eq!(first["transcripts_imported"], n, "{first:#}");

    let mut rng = Rng(0x5EED_0019);
    let mut window = Window::new(clean_run);
    let (mut tried, mut killed) = (0, 0);
    for round in 0..rounds(4) {
        let env = Env::new();
        let b = clone(&env, &remote);
        let b_str = b.to_str().unwrap();
        tried += 1;
        if kill_after(quiet(&env, &["-C", b_str, "pull"]), window.next(&mut rng)) {
            killed += 1;
            window.landed();
        } else {
            window.missed();
        }
        env.json(&["-C", b_str, "pull"]);
        let sessions = env.json(&["sessions"]);
        assert_eq!(
            sessions.as_array().unwrap().len(),
            n as usize,
            "round {round}: {sessions:#}"
        );
        assert!(
            sessions
                .as_array()
                .unwrap()
                .iter()
                .all(|s| s["record_count"] == 2 && s["published_by"] == "Ann <ann@example.invalid>"),
            "round {round}: {sessions:#}"
        );
        let again = env.json(&["-C", b_str, "pull"]);
        assert_eq!(again["unchanged"], n, "round {round}: {again:#}");
        assert_eq!(again["transcripts_imported"], 0, "round {round}: {again:#}");
    }
    eprintln!("pull kill points: {tried} tried, {killed} landed while running");
}

// ---- insights

/// A teammate's pulled session is left out of generated insights unless asked for: its text
/// would otherwise reach the puller's LLM. The preview says which.
#[test]
fn insights_leave_teammates_sessions_out_unless_asked() {
    let root = tempfile::tempdir().unwrap();
    let remote = bare_remote(root.path());
    let k = key(1);
    plant(
        &remote,
        &k,
        &doc(&k),
        Some(&zst(&envelope(
            &k,
            "Ann <ann@example.invalid>",
            "quokka teammate plan",
        ))),
    );
    let env = Env::new();
    let b = clone(&env, &remote);
    let mut t = Transcript::new(&env, "s-own", &b, "main");
    t.user("my own wombat work");
    t.say("done");
    t.hook(&env);
    assert_eq!(
        env.json(&["-C", b.to_str().unwrap(), "pull"])["transcripts_imported"],
        1
    );
    let wide = ["--since", "2020-01-01", "--until", "2030-01-01"];
    let run = |extra: &[&str]| {
        let mut args = vec!["insights", "generate", "--dry-run"];
        args.extend_from_slice(&wide);
        args.extend_from_slice(extra);
        (env.json(&args), env.ok(&args))
    };

    let (v, human) = run(&[]);
    let prompt = v["prompt"].as_str().unwrap();
    assert!(prompt.contains("wombat"), "own work is in: {prompt}");
    assert!(
        !prompt.contains("quokka"),
        "a teammate's text reached the prompt"
    );
    assert_eq!(v["sessions_total"], 1, "{v:#}");
    assert_eq!(v["teammates_sessions"], 1);
    assert!(
        human.contains("1 pulled session left out (--teammates includes them"),
        "{human}"
    );

    let (v, human) = run(&["--teammates"]);
    let prompt = v["prompt"].as_str().unwrap();
    assert!(
        prompt.contains("quokka") && prompt.contains("wombat"),
        "{prompt}"
    );
    assert_eq!(v["sessions_total"], 2, "{v:#}");
    assert_eq!(v["slice"]["teammates"], true);
    assert!(
        v["slice_label"]
            .as_str()
            .unwrap()
            .contains("with teammates' sessions")
    );
    assert!(
        human.contains("1 pulled session included: their redacted text goes to the generator"),
        "{human}"
    );
}

/// More refs than one pull takes, most of them refused every time: a teammate's new document
/// still arrives (refs not fetched before go first), and no pull keeps saying "pull again".
#[test]
fn refs_refused_every_time_never_hold_back_a_new_document() {
    let root = tempfile::tempdir().unwrap();
    let (remote, puller, b) = remote_and_puller(root.path());
    // One document whose key is not its ref's, under 2,100 refs (each refused: not its key).
    plant(&remote, &key(1), &doc(&key(1)), None);
    let junk = git(
        &remote,
        &["rev-parse", &format!("refs/cairn/sessions/{}", key(1))],
    );
    let refs: String = (1_000..3_100u32)
        .map(|n| format!("update refs/cairn/sessions/{} {}\n", key(n), junk.trim()))
        .collect();
    git_with(&remote, &["update-ref", "--stdin"], Some(refs.as_bytes()));
    let good = key(9_999_999);
    plant(&remote, &good, &doc(&good), None);

    let b_str = b.to_str().unwrap();
    let mut imported = false;
    for _ in 0..3 {
        puller.json(&["-C", b_str, "pull"]);
        let list = puller.json(&["-C", b_str, "skim", "branch", "feat"]);
        if list.to_string().contains(&good) {
            imported = true;
            break;
        }
    }
    assert!(imported, "the new document never arrived");
    let last = puller.json(&["-C", b_str, "pull"]);
    assert!(
        !last.to_string().contains("pull again for the rest"),
        "{last:#}"
    );
}

/// The session keys of `env`'s archive.
fn keys(env: &Env) -> Vec<String> {
    env.json(&["sessions"])
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["session_key"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn a_forgotten_session_leaves_the_remote_at_the_next_push_and_no_pull_brings_it_back() {
    let env = Env::new();
    let (remote, a) = team(env.root.path());
    work_on_shared(&env, &a);
    let a_str = a.to_str().unwrap();
    env.ok(&["-C", a_str, "publish", "shared", "--full"]);
    let first = env.json(&["-C", a_str, "push"]);
    assert_eq!(
        (first["pushed"].as_u64(), first["unchanged"].as_u64()),
        (Some(1), Some(0))
    );
    let again = env.json(&["-C", a_str, "push"]);
    assert_eq!(
        (again["pushed"].as_u64(), again["unchanged"].as_u64()),
        (Some(0), Some(1))
    );

    // A teammate forgets the session they pulled: their next pull leaves it out.
    let teammate = Env::new();
    let b = clone(&teammate, &remote);
    let b_str = b.to_str().unwrap();
    assert_eq!(
        teammate.json(&["-C", b_str, "pull"])["transcripts_imported"],
        1
    );
    let pulled = keys(&teammate);
    assert_eq!(pulled.len(), 1);
    let skim = teammate.json(&["-C", b_str, "skim", "branch", "shared"]);
    assert_eq!(skim["sessions"].as_array().unwrap().len(), 1, "{skim:#}");
    let plan = teammate.json(&["forget", &pulled[0], "--dry-run"]);
    assert_eq!(
        (
            &plan["would_remove"]["published"],
            &plan["would_remove"]["pulled"]
        ),
        (&json!(0), &json!(1)),
        "{plan:#}"
    );
    assert_ne!(git(&b, &["for-each-ref", "refs/cairn/remotes/"]), "");
    teammate.ok(&["forget", &pulled[0], "--yes"]);
    let pull = teammate.json(&["-C", b_str, "pull"]);
    assert_eq!(
        (
            pull["sessions_imported"].as_u64(),
            pull["forgotten"].as_u64()
        ),
        (Some(0), Some(1)),
        "{pull:#}"
    );
    assert!(keys(&teammate).is_empty());
    let skim = teammate.json(&["-C", b_str, "skim", "branch", "shared"]);
    assert_eq!(skim["sessions"], json!([]), "the document shows: {skim:#}");
    // Nor does the fetched copy (the whole transcript) stay in the clone.
    assert_eq!(git(&b, &["for-each-ref", "refs/cairn/"]), "");

    // The publisher forgets it: the preview says where its copies are, and the next push
    // deletes them; their own pull does not bring it back meanwhile.
    let own = keys(&env);
    assert_eq!(own.len(), 1);
    let plan = env.json(&["forget", &own[0], "--dry-run"]);
    assert_eq!(plan["would_remove"]["published"], 1, "{plan:#}");
    let said = env.ok(&["forget", &own[0], "--yes"]);
    assert!(
        said.contains("The next `cairn push` in the repository deletes the copies"),
        "{said}"
    );
    let pull = env.json(&["-C", a_str, "pull"]);
    assert_eq!(
        (
            pull["transcripts_imported"].as_u64(),
            pull["forgotten"].as_u64()
        ),
        (Some(0), Some(1)),
        "{pull:#}"
    );
    assert!(keys(&env).is_empty());
    let push = env.json(&["-C", a_str, "push"]);
    assert_eq!(
        (
            push["withdrawn"].as_u64(),
            push["pushed"].as_u64(),
            push["not_own"].as_u64()
        ),
        (Some(1), Some(0), Some(0)),
        "{push:#}"
    );
    assert_eq!(git(&remote, &["for-each-ref", "refs/cairn/"]), "");
    // Its own pull had fetched its document too: no copy stays anywhere under refs/cairn/.
    assert_eq!(git(&a, &["for-each-ref", "refs/cairn/"]), "");
    // A third clone's pull finds nothing to import.
    let late = Env::new();
    let c = late.root.path().join("c");
    git(
        late.root.path(),
        &["clone", "-q", remote.to_str().unwrap(), c.to_str().unwrap()],
    );
    assert_eq!(
        late.json(&["-C", c.to_str().unwrap(), "pull"])["sessions_imported"],
        0
    );
}

#[test]
fn a_push_the_remote_refuses_names_the_ref_and_the_way_back() {
    let (env, remote, a) = shared_in_full();
    let a_str = a.to_str().unwrap();
    // Someone moves the published ref on at the remote; the publisher publishes again.
    let refname = git(
        &remote,
        &["for-each-ref", "--format=%(refname)", "refs/cairn/"],
    );
    let refname = refname.trim();
    let old = git(&remote, &["rev-parse", refname]);
    let tree = git(&remote, &["rev-parse", &format!("{}^{{tree}}", old.trim())]);
    let moved = git_with(
        &remote,
        &[
            "-c",
            "user.name=M",
            "-c",
            "user.email=m@x.invalid",
            "commit-tree",
            tree.trim(),
            "-p",
            old.trim(),
            "-m",
            "moved",
        ],
        None,
    );
    git(&remote, &["update-ref", refname, moved.trim()]);
    git(&a, &["commit", "-q", "--allow-empty", "-m", "more"]);
    env.ok(&["-C", a_str, "publish", "shared", "--full"]);
    let out = env.run(&["-C", a_str, "push"]);
    assert_eq!(out.status.code(), Some(1));
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(said.contains(&format!("  {refname}: rejected (")), "{said}");
    assert!(
        said.contains("moved it on there") && said.contains("git push --force"),
        "{said}"
    );
}

/// A forgotten session stays forgotten when its transcript turns up under a new name (a copy,
/// a move): not captured again, so not published again, and its withdrawal stands.
#[test]
fn a_forgotten_session_copied_under_a_new_name_stays_forgotten() {
    let (env, remote, a) = shared_in_full();
    let a_str = a.to_str().unwrap();
    let key = keys(&env).remove(0);
    env.ok(&["forget", &key, "--yes"]);
    let transcript = std::fs::read_dir(env.claude().join("-repo"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .unwrap();
    std::fs::copy(&transcript, transcript.with_file_name("again.jsonl")).unwrap();
    env.ok(&["sync"]);
    assert!(keys(&env).is_empty(), "{:?}", keys(&env));
    env.ok(&["-C", a_str, "publish", "shared", "--full"]);
    let push = env.json(&["-C", a_str, "push"]);
    assert_eq!(push["withdrawn"], 1, "{push:#}");
    assert!(!git(&remote, &["for-each-ref", "refs/cairn/"]).contains(&key));
}

/// Forgotten with --allow-reimport: the preview says the copies stay, and a push keeps them.
#[test]
fn a_session_forgotten_with_allow_reimport_keeps_its_copies() {
    let (env, remote, a) = shared_in_full();
    let a_str = a.to_str().unwrap();
    let key = keys(&env).remove(0);
    let plan = env.json(&["forget", &key, "--dry-run", "--allow-reimport"]);
    assert_eq!(plan["would_remove"]["published"], 1, "{plan:#}");
    let said = env.ok(&["forget", &key, "--yes", "--allow-reimport"]);
    assert!(
        said.contains("Their copies stay in the repository and at the remote"),
        "{said}"
    );
    env.json(&["-C", a_str, "push"]);
    assert!(git(&remote, &["for-each-ref", "refs/cairn/"]).contains(&key));
}

/// A remote that refuses to delete a forgotten session's copy: the push says so, ref by ref,
/// does the rest, and exits 1.
#[test]
fn a_withdrawal_the_remote_refuses_is_named_and_the_rest_is_done() {
    let (env, remote, a) = shared_in_full();
    let a_str = a.to_str().unwrap();
    let hook = remote.join("hooks/update");
    std::fs::write(
        &hook,
        "#!/bin/sh\ncase \"$3\" in 0000000000000000000000000000000000000000) echo 'no deletions here' >&2; exit 1;; esac\n",
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755)).unwrap();
    let key = keys(&env).remove(0);
    env.ok(&["forget", &key, "--yes"]);
    let out = env.run(&["--json", "-C", a_str, "push"]);
    assert_eq!(out.status.code(), Some(1));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let refused = &report["refused"][0];
    assert!(
        refused["ref"].as_str().unwrap().ends_with(&key),
        "{report:#}"
    );
    assert!(
        refused["reason"]
            .as_str()
            .unwrap()
            .contains("stays at origin"),
        "{report:#}"
    );
    // This clone keeps no copy all the same.
    assert_eq!(git(&a, &["for-each-ref", "refs/cairn/sessions/"]), "");
    let human = env.run(&["-C", a_str, "push"]);
    let said = String::from_utf8_lossy(&human.stdout);
    assert!(said.contains("origin refused 1 ref:"), "{said}");
}

/// Ann forgets a session she published in full and pushes: the ref leaves the remote. Bea, who
/// pulled it, drops it at her next pull: the session, its search hits, its skim card and its
/// copy under `pulled/`. Nothing keeps it out: published again, it is pulled again.
#[test]
fn a_session_its_publisher_withdrew_leaves_the_teammates_archive_at_the_next_pull() {
    let (env, remote, a) = shared_in_full();
    let a_str = a.to_str().unwrap();

    let teammate = Env::new();
    let b = clone(&teammate, &remote);
    let b_str = b.to_str().unwrap();
    assert_eq!(
        teammate.json(&["-C", b_str, "pull"])["transcripts_imported"],
        1
    );
    assert_eq!(teammate.json(&["sessions"]).as_array().unwrap().len(), 1);
    let pulled_dir = teammate.data().join("pulled");
    assert_eq!(all_files(&pulled_dir).len(), 1);

    env.ok(&["forget", "s-full", "--yes"]);
    env.json(&["-C", a_str, "push"]);
    assert_eq!(git(&remote, &["for-each-ref", "refs/cairn/"]), "");

    let again = teammate.json(&["-C", b_str, "pull"]);
    assert_eq!(again["withdrawn"], 1, "{again:#}");
    let human = teammate.ok(&["-C", b_str, "pull"]);
    assert!(!human.contains("Dropped"), "once: {human}");
    assert_eq!(
        teammate.json(&["sessions"]),
        json!([]),
        "the pulled session is gone"
    );
    assert_eq!(teammate.json(&["search", "zanzibar"]), json!([]));
    assert!(
        all_files(&pulled_dir).is_empty(),
        "{:?}",
        all_files(&pulled_dir)
    );
    assert_eq!(git(&b, &["for-each-ref", "refs/cairn/"]), "");
    let skim = teammate.json(&["-C", b_str, "skim", "branch", "shared"]);
    assert!(!skim.to_string().contains("Ann Publisher"), "{skim:#}");
}

//! What `publish`, `push` and `pull` tell a person about what they did not do: sessions left
//! out of a publish because their repository is not known, a teammate's transcript refused for
//! good (said once, not retried, not counted again) or for now (retried), a remote with nothing
//! published, a push with nothing to push.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::branch::{Transcript, key_of, repo};
use crate::support::{Env, bare_remote, git, git_with};

/// A folder name the redactor takes for a GitHub token.
const TOKEN_DIR: &str = "ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8";

/// A session in `cwd` on branch `feature`, captured, and linked to `feature` by the person.
fn linked_session(env: &Env, id: &str, cwd: &Path, repo: &Path) {
    let mut t = Transcript::new(env, id, cwd, "feature");
    t.user("build the feature");
    t.say("Built it.");
    t.hook(env);
    let key = key_of(env, id);
    env.ok(&[
        "-C",
        repo.to_str().unwrap(),
        "link",
        &key,
        "--to",
        "feature",
    ]);
}

#[test]
fn publish_says_how_many_linked_sessions_it_left_out_for_want_of_a_repository_and_why() {
    let env = Env::new();
    let repo = repo(env.root.path());
    git(&repo, &["checkout", "-q", "-b", "feature"]);
    // A clone under a folder whose name looks like a secret: kept redacted, so its repository
    // cannot be told; and a folder that is in no repository at all.
    let hidden = env.root.path().join(TOKEN_DIR);
    std::fs::create_dir_all(&hidden).unwrap();
    let clone = hidden.join("repo");
    git(
        env.root.path(),
        &[
            "clone",
            "-q",
            repo.to_str().unwrap(),
            clone.to_str().unwrap(),
        ],
    );
    let loose = env.root.path().join("loose");
    std::fs::create_dir_all(&loose).unwrap();
    linked_session(&env, "s-hidden", &clone, &repo);
    linked_session(&env, "s-loose", &loose, &repo);
    let r = repo.to_str().unwrap();

    let dry = env.json(&["-C", r, "publish", "feature", "--dry-run"]);
    assert_eq!(
        (
            dry["sessions"].as_u64(),
            dry["unplaced_left_out"].as_u64(),
            dry["unplaced_redacted"].as_u64()
        ),
        (Some(0), Some(2), Some(1)),
        "{dry:#}"
    );
    let human = env.ok(&["-C", r, "publish", "feature", "--dry-run"]);
    assert!(
        human.contains("Left out 2 sessions linked to it whose repository is not known")
            && human.contains("1 had their folder's name redacted"),
        "{human}"
    );
    assert!(!human.contains(TOKEN_DIR), "{human}");

    // Only the redacted one: the reason is that one.
    let env2 = Env::new();
    let repo2 = crate::branch::repo(env2.root.path());
    git(&repo2, &["checkout", "-q", "-b", "feature"]);
    let hidden2 = env2.root.path().join(TOKEN_DIR);
    std::fs::create_dir_all(&hidden2).unwrap();
    linked_session(&env2, "s-hidden", &hidden2, &repo2);
    let human = env2.ok(&["-C", repo2.to_str().unwrap(), "publish", "feature"]);
    assert!(
        human.contains("Left out 1 session linked to it whose repository is not known: their folder's name was redacted"),
        "{human}"
    );
}

// ---- a teammate's transcript refused

/// Plant `doc` as `session.json` and `transcript` (compressed) on `refs/cairn/sessions/<key>`
/// of the bare `remote`, on top of what the ref held.
fn plant(remote: &Path, key: &str, doc: &Value, transcript: &Value) {
    let blob = |bytes: &[u8]| {
        git_with(remote, &["hash-object", "-w", "--stdin"], Some(bytes))
            .trim()
            .to_owned()
    };
    let packed = zstd::bulk::compress(transcript.to_string().as_bytes(), 3).unwrap();
    let entries = format!(
        "100644 blob {}\tsession.json\n100644 blob {}\ttranscript.json.zst\n",
        blob(doc.to_string().as_bytes()),
        blob(&packed)
    );
    let tree = git_with(remote, &["mktree"], Some(entries.as_bytes()));
    let refname = format!("refs/cairn/sessions/{key}");
    let mut args = vec!["commit-tree", tree.trim(), "-m", "cairn publish"];
    let parent = git_with(
        remote,
        &["for-each-ref", "--format=%(objectname)", &refname],
        None,
    );
    let parent = parent.trim().to_owned();
    if !parent.is_empty() {
        args.extend(["-p", parent.as_str()]);
    }
    let commit = git(remote, &args);
    git(remote, &["update-ref", &refname, commit.trim()]);
}

fn doc(key: &str, published_at: &str) -> Value {
    json!({
        "schema": "cairn.published-session.v1", "published_at": published_at,
        "target_keys": ["ref:refs/heads/feat"],
        "session": {
            "session_key": key, "status": "published", "agent": "claude", "title": "Teammate work",
            "project": "app", "started_at": "2026-03-01T09:00:00Z", "updated_at": "2026-03-01T09:30:00Z",
            "turn_count": 1, "record_count": 2, "related_turn_count": 1, "weak": false,
            "why_related": [], "previews": [], "turns": []
        }
    })
}

/// A transcript envelope whose trajectory has `steps`.
fn envelope(key: &str, steps: Value) -> Value {
    json!({
        "schema": "cairn.published-transcript.v1", "session_key": key,
        "publisher": "Ann <ann@example.invalid>", "published_at": "2026-03-01T10:00:00Z",
        "trajectory": {
            "schema_version": "ATIF-v1.4", "session_id": key,
            "agent": {"name": "claude-code", "version": "2.1"},
            "steps": steps
        }
    })
}

fn good_steps() -> Value {
    json!([
        {"step_id": 1, "source": "user", "message": "start the server", "timestamp": "2026-03-01T09:00:00Z"},
        {"step_id": 2, "source": "agent", "message": "started", "timestamp": "2026-03-01T09:01:00Z"}
    ])
}

/// A bare remote under `root`, and a puller's archive with a clone of it.
fn remote_and_puller(root: &Path) -> (PathBuf, Env, PathBuf) {
    let remote = bare_remote(root);
    let puller = Env::new();
    let b = puller.root.path().join("b");
    git(
        puller.root.path(),
        &["clone", "-q", remote.to_str().unwrap(), b.to_str().unwrap()],
    );
    let b = std::fs::canonicalize(b).unwrap();
    (remote, puller, b)
}

fn pulled_files(env: &Env) -> Vec<String> {
    std::fs::read_dir(env.data().join("pulled"))
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect()
}

fn counts(v: &Value) -> (u64, u64, u64, usize) {
    (
        v["sessions_imported"].as_u64().unwrap(),
        v["unchanged"].as_u64().unwrap(),
        v["transcripts_imported"].as_u64().unwrap(),
        v["skipped"].as_array().unwrap().len(),
    )
}

/// A transcript the importer refuses (a step with no source) is said once with its reason,
/// counted as nothing imported after, never tried again until published again, and leaves no
/// copy under `pulled/`; published again fixed, it is taken.
#[test]
fn a_transcript_refused_for_good_is_said_once_and_not_tried_again() {
    let root = tempfile::tempdir().unwrap();
    let (remote, puller, b) = remote_and_puller(root.path());
    let key = "sha256-00000000000000000000000000000001";
    let mut steps = good_steps();
    steps
        .as_array_mut()
        .unwrap()
        .push(json!({"step_id": 3, "message": "no source"}));
    plant(
        &remote,
        key,
        &doc(key, "2026-03-01T10:00:00Z"),
        &envelope(key, steps),
    );
    let b_str = b.to_str().unwrap();

    let first = puller.json(&["-C", b_str, "pull"]);
    assert_eq!(counts(&first), (1, 0, 0, 1), "{first:#}");
    let reason = first["skipped"][0]["reason"].as_str().unwrap();
    assert!(
        reason.starts_with("summary imported, full transcript not: ")
            && reason.contains("has no source")
            && reason.contains("not tried again until it is published again")
            && !reason.contains("pulled/"),
        "{reason}"
    );
    assert_eq!(pulled_files(&puller), Vec::<String>::new());
    for _ in 0..2 {
        let again = puller.json(&["-C", b_str, "pull"]);
        assert_eq!(counts(&again), (0, 1, 0, 0), "{again:#}");
        let human = puller.ok(&["-C", b_str, "pull"]);
        assert!(!human.contains("no source"), "{human}");
    }
    assert_eq!(pulled_files(&puller), Vec::<String>::new());

    // Published again, readable: taken.
    plant(
        &remote,
        key,
        &doc(key, "2026-03-02T10:00:00Z"),
        &envelope(key, good_steps()),
    );
    let fixed = puller.json(&["-C", b_str, "pull"]);
    assert_eq!(counts(&fixed), (1, 0, 1, 0), "{fixed:#}");
    assert_eq!(pulled_files(&puller).len(), 1);
}

/// A capture that fails for a reason of this machine's (here `pulled/` cannot be made) is tried
/// again at each pull, said each time, and the document it came with is not counted again.
#[test]
fn a_transcript_not_captured_for_now_is_tried_again_and_counted_once() {
    let root = tempfile::tempdir().unwrap();
    let (remote, puller, b) = remote_and_puller(root.path());
    let key = "sha256-00000000000000000000000000000002";
    plant(
        &remote,
        key,
        &doc(key, "2026-03-01T10:00:00Z"),
        &envelope(key, good_steps()),
    );
    let b_str = b.to_str().unwrap();
    std::fs::create_dir_all(puller.data()).unwrap();
    std::fs::write(puller.data().join("pulled"), "in the way").unwrap();

    let first = puller.json(&["-C", b_str, "pull"]);
    assert_eq!(counts(&first), (1, 0, 0, 1), "{first:#}");
    let again = puller.json(&["-C", b_str, "pull"]);
    assert_eq!(counts(&again), (0, 0, 0, 1), "{again:#}");
    assert!(
        again["skipped"][0]["reason"]
            .as_str()
            .unwrap()
            .contains("the next pull tries again"),
        "{again:#}"
    );
    std::fs::remove_file(puller.data().join("pulled")).unwrap();
    let taken = puller.json(&["-C", b_str, "pull"]);
    assert_eq!(counts(&taken), (0, 0, 1, 0), "{taken:#}");
    let after = puller.json(&["-C", b_str, "pull"]);
    assert_eq!(counts(&after), (0, 1, 0, 0), "{after:#}");
}

// ---- what a pull, a push, a skim and a resume of a teammate's session say

/// A pull from a remote nobody published to says so; a push with nothing published says to
/// publish first.
#[test]
fn an_empty_remote_and_an_empty_push_say_what_to_do() {
    let root = tempfile::tempdir().unwrap();
    let (_remote, env, b) = remote_and_puller(root.path());
    let b_str = b.to_str().unwrap();
    let pulled = env.ok(&["-C", b_str, "pull"]);
    assert!(
        pulled.contains("origin has no published sessions (no refs/cairn/sessions/*)"),
        "{pulled}"
    );
    let pushed = env.ok(&["-C", b_str, "push"]);
    assert!(
        pushed.contains(
            "Nothing of yours is published in this repository yet: `cairn publish <branch>` first"
        ),
        "{pushed}"
    );
}

/// A teammate's session shared as a summary only: skim says so instead of pointing at `show`,
/// which has nothing of it. One shared in full: `resume` names it as typed and says whose it
/// is and where it came from.
#[test]
fn a_teammates_summary_and_a_pulled_session_say_what_they_are() {
    let root = tempfile::tempdir().unwrap();
    let (remote, puller, b) = remote_and_puller(root.path());
    let b_str = b.to_str().unwrap();
    let summary = "sha256-00000000000000000000000000000003";
    let blob = |bytes: &[u8]| {
        git_with(&remote, &["hash-object", "-w", "--stdin"], Some(bytes))
            .trim()
            .to_owned()
    };
    let entries = format!(
        "100644 blob {}\tsession.json\n",
        blob(doc(summary, "2026-03-01T10:00:00Z").to_string().as_bytes())
    );
    let tree = git_with(&remote, &["mktree"], Some(entries.as_bytes()));
    let commit = git(
        &remote,
        &["commit-tree", tree.trim(), "-m", "cairn publish"],
    );
    git(
        &remote,
        &[
            "update-ref",
            &format!("refs/cairn/sessions/{summary}"),
            commit.trim(),
        ],
    );
    puller.ok(&["-C", b_str, "pull"]);
    let skim = puller.ok(&["-C", b_str, "skim", "branch", "feat"]);
    assert!(
        skim.contains("only its summary was shared: its publisher shares the whole session with `cairn publish --full`")
            && skim.contains("This is a skim of teammates' summaries")
            && !skim.contains("--turn <turn>"),
        "{skim}"
    );

    let full = "sha256-00000000000000000000000000000004";
    plant(
        &remote,
        full,
        &doc(full, "2026-03-01T10:00:00Z"),
        &envelope(full, good_steps()),
    );
    let pulled = puller.json(&["-C", b_str, "pull"]);
    assert_eq!(pulled["transcripts_imported"], 1, "{pulled:#}");
    let skim = puller.ok(&["-C", b_str, "skim", "branch", "feat"]);
    assert!(
        skim.contains("(not for a teammate's session shared as a summary only)"),
        "{skim}"
    );
    let theirs = puller.json(&["sessions"])[0]["session_key"]
        .as_str()
        .unwrap()
        .to_owned();
    let out = puller.run(&["resume", &theirs]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!("cannot resume {theirs}: it is a teammate's session, pulled from origin and published by Ann <ann@example.invalid>"))
            && !err.contains(full)
            && !err.contains("imported"),
        "{err}"
    );
}

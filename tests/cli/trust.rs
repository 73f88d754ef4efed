//! Nothing that arrives is trusted: teammates' published refs and transcript fields, run
//! through the real binary. A crafted `refs/cairn/sessions/*` document is checked and refused
//! whole (the pull goes on); a pull never overwrites the user's own refs nor forces a rewritten
//! one; `push` sends only the user's own documents; skim shows a teammate's session only in
//! the repository it was pulled into, marked untrusted; a timestamp that is not RFC 3339 is
//! unknown, never printed or sliced; and every view, human and JSON, is inert on a terminal
//! whatever escape sequences a transcript, a document or a model planted.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::{Value, json};

use crate::support::{Env, bare_remote};

/// Each hostile sequence planted, by name. Every one is concatenated into every hostile text.
const SEQUENCES: [(&str, &str); 12] = [
    (
        "OSC 52 clipboard write",
        "\u{1b}]52;c;ZWNobyBwd25lZA==\u{7}",
    ),
    (
        "OSC 0 window title, ST-terminated",
        "\u{1b}]0;pwned\u{1b}\\",
    ),
    (
        "OSC 8 hyperlink",
        "\u{1b}]8;;https://evil.invalid\u{7}link\u{1b}]8;;\u{7}",
    ),
    ("CSI clear screen and colour", "\u{1b}[2J\u{1b}[31m"),
    ("CSI cursor up and erase line", "\u{1b}[1A\u{1b}[2K"),
    ("DCS status request", "\u{1b}P$qm\u{1b}\\"),
    ("C1 CSI (8-bit)", "\u{9b}31m"),
    ("C1 OSC with C1 ST", "\u{9d}0;pwned\u{9c}"),
    ("C1 NEL", "\u{85}"),
    ("bidi RLO override", "\u{202e}txt.exe\u{202c}"),
    ("bidi RLI isolate", "\u{2067}x\u{2069}"),
    ("CR and BS", "\r\u{8}"),
];

/// A timestamp that is not ASCII: `cairn sessions` used to slice it by byte and exit 101.
const NON_ASCII_TIME: &str = "2099-01-01é000000";

/// Now, as an agent would stamp a line written `secs` seconds ago (links need recent work).
fn ago(secs: i64) -> String {
    jiff::Timestamp::now()
        .checked_sub(jiff::SignedDuration::from_secs(secs))
        .unwrap()
        .strftime("%Y-%m-%dT%H:%M:%S%.3fZ")
        .to_string()
}

fn evil(word: &str) -> String {
    let all: String = SEQUENCES.iter().map(|(_, s)| *s).collect();
    format!("{word} {all} zebra")
}

/// [`crate::support::git_with`], its output trimmed.
fn git_with(dir: &Path, args: &[&str], input: Option<&[u8]>) -> String {
    crate::support::git_with(dir, args, input).trim().to_owned()
}

fn git(dir: &Path, args: &[&str]) -> String {
    git_with(dir, args, None)
}

/// A bare "team" remote with one commit on `main`, and the user's clone of it (`origin`).
fn team(root: &Path) -> (PathBuf, PathBuf) {
    let remote = bare_remote(root);
    let work = root.join("work");
    git(
        root,
        &[
            "clone",
            "-q",
            remote.to_str().unwrap(),
            work.to_str().unwrap(),
        ],
    );
    std::fs::write(work.join("README.md"), "hi\n").unwrap();
    git(&work, &["add", "."]);
    git(&work, &["commit", "-q", "-m", "init"]);
    git(&work, &["push", "-q", "origin", "main"]);
    (remote, std::fs::canonicalize(work).unwrap())
}

/// A session key of the right shape, numbered.
fn key(n: u32) -> String {
    format!("sha256-{n:032x}")
}

/// A document as `cairn publish` writes it, for the session `key` on branch `feat`.
fn doc(key: &str) -> Value {
    let turn = format!("sha256-{:0>32}", "7");
    json!({
        "schema": "cairn.published-session.v1", "published_at": "2026-03-01T10:00:00.000Z",
        "target_keys": ["ref:refs/heads/feat"],
        "session": {
            "session_key": key, "status": "published", "agent": "claude", "title": "Teammate work",
            "project": "app", "started_at": "2026-03-01T09:00:00Z", "updated_at": "2026-03-01T09:30:00Z",
            "turn_count": 1, "record_count": 4, "related_turn_count": 1, "weak": false,
            "why_related": [{"evidence": "edit_committed", "confidence": 0.9, "target_key": "ref:refs/heads/feat",
                "turn_key": turn, "turn_index": 0, "ordinal": 3, "commit": "1a2b3c4", "reason": "edited app.txt, committed in 1a2b3c4"}],
            "previews": ["user: add the thing", "assistant: added"],
            "turns": [{"turn_key": turn, "turn_index": 0, "started_at": "2026-03-01T09:00:00Z", "related": true,
                "record_count": 4, "tool_call_count": 1, "tool_names": ["Edit"], "labels": ["implemented"],
                "previews": ["user: add the thing"]}]
        }
    })
}

/// Write `bytes` as `session.json` of a commit on `refname` in `repo` (after `parent` if given);
/// returns the commit.
fn plant_bytes(repo: &Path, refname: &str, bytes: &[u8], parent: Option<&str>) -> String {
    let blob = git_with(repo, &["hash-object", "-w", "--stdin"], Some(bytes));
    let tree = git_with(
        repo,
        &["mktree"],
        Some(format!("100644 blob {blob}\tsession.json\n").as_bytes()),
    );
    let mut args = vec!["commit-tree", tree.as_str(), "-m", "cairn publish"];
    if let Some(p) = parent {
        args.extend(["-p", p]);
    }
    let commit = git(repo, &args);
    git(repo, &["update-ref", refname, &commit]);
    commit
}

fn plant(repo: &Path, refname: &str, doc: &Value) -> String {
    plant_bytes(repo, refname, doc.to_string().as_bytes(), None)
}

fn refs(repo: &Path, prefix: &str) -> Vec<String> {
    let out = git(
        repo,
        &["for-each-ref", "--format=%(refname) %(objectname)", prefix],
    );
    out.lines().map(str::to_owned).collect()
}

fn skim_keys(v: &Value) -> Vec<String> {
    v["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["session_key"].as_str().unwrap().to_owned())
        .collect()
}

/// No control character but newline and tab, no bidi control.
fn inert(text: &str) -> Result<(), String> {
    for (i, c) in text.char_indices() {
        let bidi = matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}');
        if (c.is_control() && c != '\n' && c != '\t') || bidi {
            let around: String = text[..i]
                .chars()
                .rev()
                .take(60)
                .collect::<Vec<_>>()
                .into_iter()
                .rev()
                .chain(text[i..].chars().take(60))
                .collect();
            return Err(format!("{c:?} at {i}: {around:?}"));
        }
    }
    Ok(())
}

#[test]
fn a_crafted_ref_is_refused_whole_and_the_pull_goes_on() {
    let env = Env::new();
    let (remote, work) = team(env.root.path());
    let good = key(1);
    // Accepted: hostile status is ignored, never read.
    let mut status = doc(&good);
    status["session"]["status"] = json!(format!("local-only {}", evil("status")));
    plant(&remote, &format!("refs/cairn/sessions/{good}"), &status);
    let mut refused = Vec::new();
    let mut crafted = |n: u32, what: &str, change: &dyn Fn(&mut Value)| {
        let mut d = doc(&key(n));
        change(&mut d);
        plant(&remote, &format!("refs/cairn/sessions/{}", key(n)), &d);
        refused.push((key(n), what.to_owned()));
    };
    crafted(2, "a label is not one of", &|d| {
        d["session"]["turns"][0]["labels"] = json!([evil("label")])
    });
    crafted(3, "updated_at is not an RFC 3339", &|d| {
        d["session"]["updated_at"] = json!(NON_ASCII_TIME)
    });
    crafted(4, "started_at is not an RFC 3339", &|d| {
        d["session"]["turns"][0]["started_at"] = json!("2026-03-01T09:00:00Z\u{1b}]0;x\u{7}")
    });
    crafted(5, "not the ref's own key", &|d| {
        d["session"]["session_key"] = json!(key(1))
    });
    crafted(6, "unknown field `cwd`", &|d| {
        d["session"]["cwd"] = json!("/home/teammate/secret")
    });
    crafted(7, "1001 turns", &|d| {
        let t = d["session"]["turns"][0].clone();
        d["session"]["turns"] = json!(vec![t; 1001]);
    });
    // An oversized blob: never read.
    let mut huge = doc(&key(8)).to_string().into_bytes();
    huge.resize(3 * 1024 * 1024, b' ');
    plant_bytes(
        &remote,
        &format!("refs/cairn/sessions/{}", key(8)),
        &huge,
        None,
    );
    refused.push((key(8), "more than the 2097152 a document may have".into()));
    // Names that are not session keys: not fetched at all.
    for name in [
        "sha256-0123",
        "SHA256-0123456789ABCDEF0123456789ABCDEF",
        "evil\u{9b}31m\u{202e}",
    ] {
        plant(
            &remote,
            &format!("refs/cairn/sessions/{name}"),
            &doc(&key(9)),
        );
    }

    let pulled = env.json(&["-C", work.to_str().unwrap(), "pull"]);
    assert_eq!(pulled["sessions_imported"], 1, "{pulled:#}");
    let skipped = pulled["skipped"].as_array().unwrap();
    for (k, why) in &refused {
        let s = skipped
            .iter()
            .find(|s| s["ref"] == format!("refs/cairn/sessions/{k}"))
            .unwrap_or_else(|| panic!("{k} ({why}) not reported: {pulled:#}"));
        assert!(s["reason"].as_str().unwrap().contains(why), "{s}");
    }
    assert_eq!(
        skipped
            .iter()
            .filter(|s| s["reason"].as_str().unwrap().contains("not a session key"))
            .count(),
        3,
        "{pulled:#}"
    );
    // Only valid names were fetched, into the remote's own namespace.
    let fetched = refs(&work, "refs/cairn/");
    assert!(
        fetched
            .iter()
            .all(|r| r.starts_with("refs/cairn/remotes/origin/sessions/sha256-")),
        "{fetched:?}"
    );
    // The human report names each ref, cleaned.
    let human = env.ok(&["-C", work.to_str().unwrap(), "pull"]);
    inert(&human).unwrap();
    assert!(human.contains("(1 unchanged)"), "{human}");
    assert!(
        human.contains("refs/cairn/sessions/evil: not a Cairn session ref"),
        "{human}"
    );

    // Skim: the accepted one shows as published and untrusted, whatever its document said.
    let v = env.json(&["-C", work.to_str().unwrap(), "skim", "branch", "feat"]);
    assert_eq!(skim_keys(&v), [good], "{v:#}");
    let s = &v["sessions"][0];
    assert_eq!(s["status"], "published");
    assert_eq!(s["untrusted"], true);
    assert_eq!(s["pulled_from"], "origin");
    let human = env.ok(&["-C", work.to_str().unwrap(), "skim", "branch", "feat"]);
    inert(&human).unwrap();
    assert!(
        human.contains("status: published by a teammate, pulled from origin (untrusted text"),
        "{human}"
    );
}

#[test]
fn too_many_documents_wait_for_the_next_pull() {
    let env = Env::new();
    let (remote, work) = team(env.root.path());
    let one = plant(
        &remote,
        &format!("refs/cairn/sessions/{}", key(1)),
        &doc(&key(1)),
    );
    // 2001 refs pointing at one commit: one document is its own key's, the rest are refused.
    let mut lines = String::new();
    for n in 2..=2001 {
        lines.push_str(&format!("create refs/cairn/sessions/{} {one}\n", key(n)));
    }
    git_with(&remote, &["update-ref", "--stdin"], Some(lines.as_bytes()));
    let pulled = env.json(&["-C", work.to_str().unwrap(), "pull"]);
    assert_eq!(pulled["sessions_imported"], 1);
    let skipped = pulled["skipped"].as_array().unwrap();
    assert_eq!(skipped.len(), 100, "listed skips are capped");
    assert!(
        skipped.iter().any(|s| s["reason"]
            .as_str()
            .unwrap()
            .contains("1 more new or changed documents than the 2000 one pull imports")),
        "{skipped:#?}"
    );
    // 1 over the limit + 1999 refused for carrying another ref's key.
    assert_eq!(
        skipped.len() as u64 + pulled["skipped_more"].as_u64().unwrap(),
        2000
    );
    assert_eq!(refs(&work, "refs/cairn/remotes/origin/").len(), 2000);
}

#[test]
fn pull_never_overwrites_own_refs_nor_forces_a_rewritten_one() {
    let env = Env::new();
    let (remote, work) = team(env.root.path());
    // The user's own published ref, and a teammate's document under the same name remotely.
    let mine = key(1);
    let own_ref = format!("refs/cairn/sessions/{mine}");
    let own = plant(&work, &own_ref, &doc(&mine));
    let mut theirs = doc(&mine);
    theirs["session"]["title"] = json!("overwritten by a teammate");
    plant(&remote, &own_ref, &theirs);
    // A teammate's own session, which they will rewrite.
    let other = key(2);
    let other_ref = format!("refs/cairn/sessions/{other}");
    let first = plant(&remote, &other_ref, &doc(&other));
    // Even a configured force refspec over refs/cairn/* is not used.
    git(
        &work,
        &[
            "config",
            "--add",
            "remote.origin.fetch",
            "+refs/cairn/*:refs/cairn/*",
        ],
    );

    let w = work.to_str().unwrap();
    let pulled = env.json(&["-C", w, "pull"]);
    assert_eq!(pulled["sessions_imported"], 2, "{pulled:#}");
    assert_eq!(
        refs(&work, "refs/cairn/sessions/"),
        [format!("{own_ref} {own}")],
        "the user's own ref was overwritten"
    );
    assert_eq!(
        git(
            &work,
            &[
                "rev-parse",
                &format!("refs/cairn/remotes/origin/sessions/{other}")
            ]
        ),
        first
    );

    // The teammate rewrites history (a commit that does not descend from the first).
    let mut rewritten = doc(&other);
    rewritten["session"]["title"] = json!("rewritten");
    let second = plant(&remote, &other_ref, &rewritten);
    assert_ne!(first, second);
    let pulled = env.json(&["-C", w, "pull"]);
    assert_eq!(pulled["sessions_imported"], 0, "{pulled:#}");
    let skipped = pulled["skipped"].as_array().unwrap();
    assert!(
        skipped.iter().any(|s| s["ref"] == other_ref
            && s["reason"].as_str().unwrap().contains("not a fast-forward")),
        "{pulled:#}"
    );
    assert_eq!(
        git(
            &work,
            &[
                "rev-parse",
                &format!("refs/cairn/remotes/origin/sessions/{other}")
            ]
        ),
        first,
        "a rewritten ref was forced"
    );
    // A fast-forward of the first is taken.
    let mut next = doc(&other);
    next["session"]["title"] = json!("continued");
    let third = plant_bytes(
        &remote,
        &other_ref,
        next.to_string().as_bytes(),
        Some(&first),
    );
    let pulled = env.json(&["-C", w, "pull"]);
    assert_eq!(pulled["sessions_imported"], 1, "{pulled:#}");
    assert_eq!(
        git(
            &work,
            &[
                "rev-parse",
                &format!("refs/cairn/remotes/origin/sessions/{other}")
            ]
        ),
        third
    );
    let v = env.json(&["-C", w, "skim", "branch", "feat"]);
    let titles: Vec<&str> = v["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["title"].as_str().unwrap())
        .collect();
    assert!(titles.contains(&"continued"), "{titles:?}");

    // What to pull from is checked: a configured remote, a URL or a path, never an option.
    for bad in ["--upload-pack=touch pwned", "nowhere", "../x", "a/b"] {
        let out = env.run(&["-C", w, "pull", "--", bad]);
        assert_eq!(out.status.code(), Some(1), "{bad}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("remote"), "{bad}: {err}");
    }
    assert!(!work.join("pwned").exists());
}

#[test]
fn push_sends_only_the_users_own_documents() {
    let env = Env::new();
    let (remote, work) = team(env.root.path());
    let w = work.to_str().unwrap();
    // The user's own session, captured and published here.
    git(&work, &["checkout", "-q", "-b", "feat"]);
    let dir = env.claude().join("-work");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(work.join("app.txt"), "v1\n").unwrap();
    let lines = [
        json!({"type":"user","sessionId":"mine-1","cwd":work,"gitBranch":"feat","timestamp":ago(60),
               "uuid":"u1","message":{"role":"user","content":"add app.txt"}}),
        json!({"type":"assistant","sessionId":"mine-1","cwd":work,"gitBranch":"feat","timestamp":ago(50),
               "uuid":"u2","message":{"id":"m1","role":"assistant","content":[{"type":"tool_use","id":"t1","name":"Edit",
               "input":{"file_path":work.join("app.txt"),"old_string":"","new_string":"v1\n"}}]}}),
    ];
    let text: Vec<String> = lines.iter().map(Value::to_string).collect();
    std::fs::write(dir.join("mine-1.jsonl"), text.join("\n") + "\n").unwrap();
    git(&work, &["add", "app.txt"]);
    git(&work, &["commit", "-q", "-m", "Add app"]);
    env.ok(&["sync"]);
    let published = env.json(&["-C", w, "publish", "feat"]);
    assert_eq!(published["sessions"], 1, "{published:#}");
    let mine = published["documents"][0]["session"]["session_key"]
        .as_str()
        .unwrap()
        .to_owned();

    // A teammate's document pulled the new way, and one an older Cairn force-fetched into
    // refs/cairn/sessions/.
    plant(
        &remote,
        &format!("refs/cairn/sessions/{}", key(1)),
        &doc(&key(1)),
    );
    env.ok(&["-C", w, "pull"]);
    plant(
        &work,
        &format!("refs/cairn/sessions/{}", key(2)),
        &doc(&key(2)),
    );
    // A teammate's pulled session is never published as the user's own either.
    let again = env.json(&["-C", w, "publish", "feat", "--dry-run"]);
    assert_eq!(again["sessions"], 1, "{again:#}");

    let elsewhere = env.root.path().join("elsewhere.git");
    git(
        env.root.path(),
        &["init", "-q", "--bare", elsewhere.to_str().unwrap()],
    );
    git(
        &work,
        &["remote", "add", "elsewhere", elsewhere.to_str().unwrap()],
    );
    let pushed = env.json(&["-C", w, "push", "elsewhere"]);
    assert_eq!(
        (pushed["pushed"].as_u64(), pushed["not_own"].as_u64()),
        (Some(1), Some(1))
    );
    let sent: Vec<String> = refs(&elsewhere, "refs/")
        .into_iter()
        .map(|r| r.split(' ').next().unwrap().to_owned())
        .collect();
    assert_eq!(sent, [format!("refs/cairn/sessions/{mine}")]);
    let human = env.ok(&["-C", w, "push", "elsewhere"]);
    assert!(human.contains("Left out 1 ref"), "{human}");

    // A path or a URL, as git takes them, without configuring a remote: only the own ref goes.
    for (name, url) in [("by-path.git", false), ("by-url.git", true)] {
        let bare = env.root.path().join(name);
        git(
            env.root.path(),
            &["init", "-q", "--bare", bare.to_str().unwrap()],
        );
        let bare = std::fs::canonicalize(bare).unwrap();
        let place = if url {
            format!("file://{}", bare.display())
        } else {
            bare.display().to_string()
        };
        let pushed = env.json(&["-C", w, "push", &place]);
        assert_eq!(
            (pushed["pushed"].as_u64(), pushed["not_own"].as_u64()),
            (Some(1), Some(1)),
            "{place}: {pushed:#}"
        );
        assert_eq!(pushed["remote"], place.as_str());
        let sent: Vec<String> = refs(&bare, "refs/")
            .into_iter()
            .map(|r| r.split(' ').next().unwrap().to_owned())
            .collect();
        assert_eq!(sent, [format!("refs/cairn/sessions/{mine}")], "{place}");
    }
    // What git would read as an option, or a transport that runs a command: refused, nothing run.
    let marker = env.root.path().join("pwned");
    let m = marker.to_str().unwrap();
    for (place, why) in [
        (format!("--receive-pack=touch {m}"), "read as an option"),
        (format!("--exec=touch {m}"), "read as an option"),
        (format!("ext::sh -c touch% {m}"), "transport `ext::`"),
        ("nowhere/at/all".to_owned(), "no folder is at that path"),
    ] {
        let out = env.run(&["-C", w, "push", "--", &place]);
        assert!(!out.status.success(), "{place:?} accepted");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains("cannot push to"), "{place:?}: {stderr}");
        assert!(stderr.contains(why), "{place:?}: {stderr}");
        assert!(!marker.exists(), "{place:?} ran a command");
    }
}

#[test]
fn skim_shows_a_teammates_session_only_in_the_repository_it_was_pulled_into() {
    let env = Env::new();
    let (remote, work) = team(env.root.path());
    plant(
        &remote,
        &format!("refs/cairn/sessions/{}", key(1)),
        &doc(&key(1)),
    );
    let w = work.to_str().unwrap();
    env.ok(&["-C", w, "pull"]);
    // Another repository with a `feat` branch of its own.
    let other = env.root.path().join("other");
    git(
        env.root.path(),
        &["init", "-q", "-b", "feat", other.to_str().unwrap()],
    );
    std::fs::write(other.join("x"), "x\n").unwrap();
    git(&other, &["add", "."]);
    git(&other, &["commit", "-q", "-m", "x"]);
    let o = other.to_str().unwrap();
    assert_eq!(
        skim_keys(&env.json(&["-C", o, "skim", "branch", "feat"])),
        Vec::<String>::new()
    );
    assert!(
        env.ok(&["-C", o, "skim"])
            .contains("No related agent sessions found.")
    );
    // Outside any repository, with an explicit target: none either.
    let nowhere = env.root.path().join("nowhere");
    std::fs::create_dir_all(&nowhere).unwrap();
    assert_eq!(
        skim_keys(&env.json(&["-C", nowhere.to_str().unwrap(), "skim", "branch", "feat"])),
        Vec::<String>::new()
    );
    // In the repository it was pulled into, and in a linked worktree of it: shown.
    assert_eq!(
        skim_keys(&env.json(&["-C", w, "skim", "branch", "feat"])),
        [key(1)]
    );
    let linked = env.root.path().join("linked");
    git(
        &work,
        &[
            "worktree",
            "add",
            "-q",
            "-b",
            "feat",
            linked.to_str().unwrap(),
        ],
    );
    assert_eq!(
        skim_keys(&env.json(&["-C", linked.to_str().unwrap(), "skim"])),
        [key(1)]
    );
}

#[test]
fn timestamps_that_are_not_rfc3339_are_unknown_and_never_panic() {
    let env = Env::new();
    let dir = env.claude().join("-p");
    std::fs::create_dir_all(&dir).unwrap();
    let at = |ts: &str, uuid: &str, text: &str| {
        json!({"type":"user","sessionId":"times-1","cwd":"/p","timestamp":ts,"uuid":uuid,
               "message":{"role":"user","content":text}})
        .to_string()
    };
    let lines = [
        at(NON_ASCII_TIME, "u1", "first"),
        at("2026-01-01T00:00:02Z\u{1b}]0;pwned\u{7}", "u2", "second"),
        at("2026-01-01T00:00:03Z", "u3", "third"),
    ];
    std::fs::write(dir.join("times-1.jsonl"), lines.join("\n") + "\n").unwrap();
    let sync = env.json(&["sync"]);
    let warnings = sync["warnings"].as_array().unwrap();
    assert_eq!(warnings.len(), 1, "{sync:#}");
    assert!(
        warnings[0]["message"]
            .as_str()
            .unwrap()
            .contains("is not RFC 3339"),
        "{sync:#}"
    );
    let check = |args: &[&str]| {
        let out = env.run(args);
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let text = String::from_utf8(out.stdout).unwrap();
        inert(&text).unwrap();
        text
    };
    let human = check(&["sessions"]);
    assert!(human.contains("1 warning"), "{human}");
    let turn = check(&["show", "times-1", "--turn", "1"]);
    assert!(turn.contains(" unknown "), "{turn}");
    assert!(!turn.contains("pwned"), "{turn}");
    let v = env.json(&["show", "times-1", "--turn", "1"]);
    assert_eq!(v["records"][0]["timestamp"], Value::Null, "{v:#}");

    // An archive from before timestamps were checked may hold anything: reading never
    // slices it, never prints it raw.
    let db = rusqlite::Connection::open(env.data().join("cairn.db")).unwrap();
    db.execute_batch(&format!(
        "UPDATE sessions SET started_at = '{NON_ASCII_TIME}', updated_at = '{NON_ASCII_TIME}';
         UPDATE turns SET started_at = '{NON_ASCII_TIME}';
         UPDATE records SET timestamp = '2026-01-01T00:00:0\u{1b}[2J\u{202e}';"
    ))
    .unwrap();
    drop(db);
    for args in [
        vec!["sessions"],
        vec!["search", "third"],
        vec!["show", "times-1"],
        vec!["show", "times-1", "--turn", "2"],
    ] {
        let text = check(&args);
        // Shown nowhere as a time; the parse warnings `show` lists after the turns quote the
        // value the transcript held, as the sync that found it did.
        let shown = text.split("parse warning").next().unwrap_or_default();
        assert!(!shown.contains("2099"), "{args:?}: {text}");
    }
}

/// One environment holding hostile text in every field a transcript, a teammate's document, a
/// recall import and a model's answer can carry; every view, human and JSON.
#[test]
fn every_view_is_inert_whatever_a_transcript_a_ref_or_a_model_planted() {
    use crate::fake_llm::{FakeLlm, Reply};
    let env = Env::new();
    let (remote, work) = team(env.root.path());
    let w = work.to_str().unwrap().to_owned();
    git(&work, &["checkout", "-q", "-b", "feat"]);

    // A transcript with hostile text everywhere, that edits a file later committed on `feat`.
    let dir = env.claude().join("-work");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(work.join("widget.txt"), "w\n").unwrap();
    let base = |ts: &str, uuid: &str| {
        json!({"sessionId":"evil-1","cwd":work,"gitBranch":format!("feat{}", evil("")),"timestamp":ts,
               "uuid":uuid,"version":evil("2.1"),"entrypoint":evil("cli")})
    };
    let with = |mut v: Value, extra: Value| {
        v.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        v.to_string()
    };
    let lines = [
        with(
            base(&ago(60), "u0"),
            json!({"type":"custom-title","customTitle":evil("title")}),
        ),
        with(
            base(NON_ASCII_TIME, "u1"),
            json!({"type":"user","message":{"role":"user","content":evil("prompt")}}),
        ),
        with(
            base(&format!("{}\u{1b}]0;pwned\u{7}", ago(50)), "u2"),
            json!({"type":"assistant","message":{"id":"m1","role":"assistant","model":evil("model"),
                "content":[{"type":"text","text":evil("answer")},
                           {"type":"tool_use","id":evil("toolu"),"name":evil("Edit"),
                            "input":{"file_path":work.join("widget.txt"),"old_string":"","new_string":evil("content")}}]}}),
        ),
        with(
            base(&ago(40), "u3"),
            json!({"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":evil("toolu"),"content":evil("output")}]}}),
        ),
        with(
            base(&ago(30), "u4"),
            json!({"type":"assistant","message":{"id":"m2","role":"assistant","content":[
                {"type":"tool_use","id":"t2","name":"Bash","input":{"command":evil("echo")}}]}}),
        ),
        with(
            base(&ago(20), "u5"),
            json!({"type":"user","message":{"role":"user","content":evil("implemented and tested")}}),
        ),
    ];
    std::fs::write(dir.join("evil-1.jsonl"), lines.join("\n") + "\n").unwrap();
    std::fs::copy(
        crate::support::fixtures().join("claude/short.jsonl"),
        dir.join("short.jsonl"),
    )
    .unwrap();
    git(&work, &["add", "widget.txt"]);
    git(&work, &["commit", "-q", "-m", "Add widget"]);

    // A teammate's documents: one with hostile text in every text field (accepted, cleaned),
    // refused ones with hostile identifiers and names.
    let mut accepted = doc(&key(1));
    let s = &mut accepted["session"];
    s["status"] = json!(evil("status"));
    s["title"] = json!(evil("teammate title"));
    s["project"] = json!(evil("project"));
    s["previews"] = json!([
        format!("user: {}", evil("tp")),
        format!("assistant: {}", evil("ta"))
    ]);
    s["why_related"][0]["reason"] = json!(evil("reason"));
    // Tool names are capped at 128 characters: the sequences one per name.
    s["turns"][0]["tool_names"] = json!(
        SEQUENCES
            .iter()
            .map(|(_, seq)| format!("tool{seq}"))
            .collect::<Vec<_>>()
    );
    s["turns"][0]["previews"] = json!([format!("user: {}", evil("turn"))]);
    plant(
        &remote,
        &format!("refs/cairn/sessions/{}", key(1)),
        &accepted,
    );
    let mut labels = doc(&key(2));
    labels["session"]["turns"][0]["labels"] = json!([evil("label")]);
    plant(&remote, &format!("refs/cairn/sessions/{}", key(2)), &labels);
    let mut times = doc(&key(3));
    times["session"]["updated_at"] = json!(NON_ASCII_TIME);
    plant(&remote, &format!("refs/cairn/sessions/{}", key(3)), &times);
    let mut field = doc(&key(4));
    field["session"][format!("x{}", evil(""))] = json!(1);
    plant(&remote, &format!("refs/cairn/sessions/{}", key(4)), &field);
    plant(
        &remote,
        "refs/cairn/sessions/evil\u{9b}31m\u{202e}\u{85}name",
        &doc(&key(5)),
    );

    // Recall entries imported from JSONL: every text field hostile.
    let small = "55604662-cf2a-4331-851a-ec234028f8ca";
    let entry = json!({"candidate_id": "evil", "session_id": small, "type": "warning", "scope": "project",
        "title": evil("title"), "body": evil("body"), "trigger": evil("when"), "uncertainty": evil("maybe"),
        "project": evil("project"), "cwd": evil("/cwd"), "git_branch": evil("branch"), "agent": evil("agent"),
        "model": evil("model"), "transferable": true, "provenance_ok": true, "label": "correct",
        "evidence": {"ordinal_start": 0, "ordinal_end": 1, "snippets": [evil("snippet")]}});
    let file = env.root.path().join("evil.jsonl");
    std::fs::write(&file, format!("{entry}\n")).unwrap();
    // One the import refuses, whose error names its hostile tool id (its own id is plain: a
    // hostile one is refused first, and then the tool id would go unread).
    let mut refused = entry.clone();
    refused["candidate_id"] = json!("refused-1");
    refused["evidence"]["tool_use_ids"] = json!(["tool\u{202e}\u{2066}x\u{2069}"]);
    let refused_file = env.root.path().join("refused.jsonl");
    std::fs::write(&refused_file, format!("{refused}\n")).unwrap();

    // A model's answers: a report from a stand-in agent CLI, and an extraction server whose
    // every reply is an error full of escape sequences.
    let bin = env.root.path().join("bin-claude");
    let answer = json!({"type":"result","is_error":false,"result":format!("# {}\n\n{}", evil("report"), evil("body")),
        "modelUsage":{evil("model"):{}}});
    std::fs::write(
        &bin,
        format!("#!/bin/sh\ncat > /dev/null\ncat <<'EOF'\n{answer}\nEOF\n"),
    )
    .unwrap();
    std::fs::set_permissions(&bin, std::fs::Permissions::from_mode(0o755)).unwrap();
    let fake = FakeLlm::start(Some("k"));
    fake.fail_after(
        0,
        Some(Reply::json(
            400,
            json!({"error": {"message": evil("server says")}}),
        )),
    );
    std::fs::write(
        env.data().join("config.toml"),
        format!(
            "[agent.claude]\nbinary = \"{}\"\n\n[recall.extract]\nenabled = true\nmodel = \"m\"\n\n\
             [recall.extract.servers.local]\nendpoint = \"{}\"\napi_key_env = \"CAIRN_TEST_LLM_KEY\"\n",
            bin.display(),
            fake.url()
        ),
    )
    .unwrap();

    let run = |args: &[&str]| -> Output {
        env.command()
            .env("CAIRN_TEST_LLM_KEY", "k")
            .args(args)
            .output()
            .unwrap()
    };
    let file = file.to_str().unwrap().to_owned();
    let refused_file = refused_file.to_str().unwrap().to_owned();
    // In order: each view that writes runs before the views that read what it wrote.
    let views: Vec<Vec<&str>> = vec![
        vec!["sync"],
        vec!["-C", &w, "pull"],
        vec!["recall", "import", &file, "--yes"],
        vec!["recall", "import", &refused_file, "--dry-run"],
        vec![
            "insights",
            "generate",
            "--since",
            "2020-01-01",
            "--until",
            "2030-01-01",
            "--automation",
            "include",
        ],
        vec!["recall", "extract", "run", "--limit", "1"],
        vec!["sessions"],
        vec!["sessions", "--keys"],
        vec!["search", "zebra"],
        vec!["search", "zebra", "--keys"],
        vec!["show", "evil-1"],
        vec!["show", "evil-1", "--keys"],
        vec!["show", "evil-1", "--turn", "0"],
        vec!["show", "evil-1", "--turn", "1", "--keys"],
        vec!["-C", &w, "skim"],
        vec!["-C", &w, "skim", "branch", "feat", "--include-weak"],
        vec!["-C", &w, "publish", "feat", "--dry-run"],
        vec!["-C", &w, "publish", "feat"],
        vec!["-C", &w, "push"],
        vec!["doctor"],
        vec!["recall", "list"],
        vec![
            "recall",
            "query",
            "zebra",
            "--scores",
            "--evidence",
            "--summary",
            "--context",
        ],
        vec!["recall", "get", "evil", "--evidence"],
        vec!["recall", "brief", "zebra", "--include-unreviewed"],
        vec!["recall", "review"],
        vec!["recall", "stats"],
        vec!["recall", "extract", "status"],
        vec!["insights", "list"],
        vec!["insights", "get", "1"],
    ];
    let mut invocations = 0;
    let mut shown = String::new();
    for args in &views {
        for json_out in [false, true] {
            let mut all: Vec<&str> = if json_out { vec!["--json"] } else { Vec::new() };
            all.extend_from_slice(args);
            let out = run(&all);
            invocations += 1;
            let stdout = String::from_utf8(out.stdout).unwrap();
            let stderr = String::from_utf8(out.stderr).unwrap();
            assert_ne!(out.status.code(), Some(101), "{all:?} panicked: {stderr}");
            // Failing on purpose: extraction against a server that only errs, a refused import.
            let expect_ok = !(args.contains(&"run") || args.contains(&refused_file.as_str()));
            if expect_ok {
                assert!(out.status.success(), "{all:?} failed: {stderr}{stdout}");
            }
            if let Err(e) = inert(&stdout) {
                panic!("{all:?} printed {e}");
            }
            if let Err(e) = inert(&stderr) {
                panic!("{all:?} printed on stderr {e}");
            }
            if json_out && out.status.success() {
                let _: Value = serde_json::from_str(&stdout)
                    .unwrap_or_else(|e| panic!("{all:?}: not JSON ({e}): {stdout}"));
            }
            shown.push_str(&stdout);
        }
    }
    // The hostile text did reach the views (cleaned), so the checks above were not vacuous.
    for seen in [
        "title",
        "prompt",
        "answer",
        "teammate title",
        "reason",
        "snippet",
        "report",
        "untrusted text",
        "server says",
        "zebra",
    ] {
        assert!(shown.contains(seen), "{seen:?} never shown");
    }
    eprintln!(
        "hostile views: {} escape sequences (+ a non-ASCII timestamp) planted in every field, {} view invocations ({} views x human/JSON)",
        SEQUENCES.len(),
        invocations,
        views.len()
    );
}

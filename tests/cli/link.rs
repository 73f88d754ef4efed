//! `cairn link` / `cairn unlink`: a person's word on what a session is related to, which every
//! later hook, sync and full relink keeps.

use serde_json::Value;

use crate::branch::{Transcript, key_of, repo, sessions_of, skim};
use crate::support::{Env, git, run_while_locked};

/// Run `cairn --json args…` as the person `ana`; the JSON answer, or the failure's stderr.
fn as_ana(env: &Env, args: &[&str]) -> Result<Value, String> {
    let out = env
        .command()
        .env("USER", "ana")
        .arg("--json")
        .args(args)
        .output()
        .unwrap();
    if out.status.success() {
        Ok(serde_json::from_slice(&out.stdout).unwrap())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).into_owned())
    }
}

fn evidence_of(skim: &Value, key: &str) -> Vec<String> {
    skim["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["session_key"] == key)
        .map(|s| {
            s["why_related"]
                .as_array()
                .unwrap()
                .iter()
                .map(|w| w["evidence"].as_str().unwrap().to_owned())
                .collect()
        })
        .unwrap_or_default()
}

/// Drop what association carried over, so the next hook rebuilds every link from scratch (as
/// after an upgrade or a snapshot that arrived out of order).
fn force_rebuild(env: &Env) {
    let conn = rusqlite::Connection::open(env.data().join("cairn.db")).unwrap();
    conn.execute("DELETE FROM association_state", []).unwrap();
}

#[test]
fn a_persons_link_and_unlink_survive_hooks_syncs_and_full_relinks() {
    let env = Env::new();
    let repo = repo(env.root.path());
    git(&repo, &["checkout", "-q", "-b", "feature"]);
    let mut work = Transcript::new(&env, "s-work", &repo, "feature");
    work.user("add a login page");
    work.edit("login.txt", "login form\n");
    work.run_git(&["add", "login.txt"]);
    work.run_git(&["commit", "-m", "Add login page"]);
    work.say("Committed.");
    work.hook(&env);
    git(&repo, &["checkout", "-q", "main"]);
    let mut talk = Transcript::new(&env, "s-talk", &repo, "main");
    talk.user("how should the login page look?");
    talk.say("A form with two fields.");
    talk.hook(&env);
    let work_key = key_of(&env, "s-work");
    let talk_key = key_of(&env, "s-talk");
    assert_eq!(
        sessions_of(&skim(&env, &["branch", "feature"])),
        vec![work_key.clone()]
    );

    // "belongs here": the planning session belongs to the feature.
    let linked = as_ana(
        &env,
        &[
            "link",
            "s-talk",
            "--to",
            "feature",
            "--reason",
            "planned the login page",
        ],
    )
    .unwrap();
    let link = &linked["link"];
    assert_eq!(link["action"], "link");
    assert_eq!(link["session_key"], talk_key.as_str());
    assert_eq!(link["target_key"], "ref:refs/heads/feature");
    assert_eq!(link["made_by"], "ana");
    assert_eq!(link["reason"], "planned the login page");
    assert!(link["made_at"].as_str().unwrap().contains('T'));
    // Said again without a reason: the reason given before stays.
    let again = as_ana(&env, &["link", "s-talk", "--to", "feature"]).unwrap();
    assert_eq!(again["link"]["reason"], "planned the login page");
    // A branch the repository lacks is linked, with a note; one it has, without.
    let repo_arg = repo.to_str().unwrap();
    for (branch, noted) in [("featrue", true), ("feature", false)] {
        let out = env
            .command()
            .env("USER", "ana")
            .args(["-C", repo_arg, "link", "s-talk", "--to", branch])
            .output()
            .unwrap();
        assert!(out.status.success());
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(
            err.contains(&format!("has no branch named {branch}")),
            noted,
            "{branch}: {err}"
        );
    }
    env.ok(&["unlink", "s-talk", "--to", "featrue"]);
    // "not related": the work session is said not to be the feature's (the person knows better).
    let unlinked = as_ana(&env, &["unlink", &work_key, "--to", "feature"]).unwrap();
    assert_eq!(unlinked["link"]["action"], "unlink");
    assert!(unlinked["link"]["links_removed"].as_u64().unwrap() >= 1);

    let check = |when: &str| {
        let v = skim(&env, &["branch", "feature"]);
        assert_eq!(sessions_of(&v), vec![talk_key.clone()], "{when}");
        assert_eq!(evidence_of(&v, &talk_key)[0], "person", "{when}");
        let why = &v["sessions"][0]["why_related"][0];
        assert_eq!(why["confidence"], 1.0, "{when}");
        let reason = why["reason"].as_str().unwrap();
        assert!(
            reason.contains("linked by ana") && reason.contains("planned the login page"),
            "{when}: {reason}"
        );
    };
    check("right after");
    // A hook that adds records relinks incrementally.
    work.say("One more thing about the login page.");
    work.hook(&env);
    talk.say("Also a remember-me box.");
    talk.hook(&env);
    check("after incremental relinks");
    // A full rebuild of every link from records and snapshots.
    force_rebuild(&env);
    work.say("again");
    work.hook(&env);
    talk.say("again");
    talk.hook(&env);
    check("after full relinks");
    env.ok(&["sync"]);
    check("after a sync");

    // `show` lists the session's links with the person's first, and the corrections.
    let shown = env.json(&["show", "s-talk"]);
    assert_eq!(shown["links"][0]["evidence"], "person");
    assert_eq!(shown["links"][0]["target_key"], "ref:refs/heads/feature");
    assert_eq!(shown["corrections"][0]["made_by"], "ana");
    let shown = env.json(&["show", "s-work"]);
    assert!(
        shown["links"]
            .as_array()
            .unwrap()
            .iter()
            .all(|l| l["target_key"] != "ref:refs/heads/feature"),
        "{shown}"
    );
    assert_eq!(shown["corrections"][0]["action"], "unlink");
    let human = env.ok(&["show", "s-work"]);
    assert!(
        human.contains("not related to branch feature: unlinked by"),
        "{human}"
    );

    // The person changes their mind: a link replaces the unlink, and relinks add the
    // automatic evidence back beside it.
    let said = env.ok(&["link", "s-work", "--to", "feature"]);
    // Named as the person named it, never by its internal key.
    assert!(
        said.starts_with("Linked session s-work to branch feature") && !said.contains("sha256-"),
        "{said}"
    );
    force_rebuild(&env);
    work.say("later");
    work.hook(&env);
    let v = skim(&env, &["branch", "feature"]);
    let evidence = evidence_of(&v, &work_key);
    assert_eq!(evidence[0], "person", "{evidence:?}");
    assert!(
        evidence.contains(&"commit_by_session".to_owned()),
        "{evidence:?}"
    );
}

#[test]
fn unlinking_a_pull_request_by_number_hides_it_on_any_branch() {
    let env = Env::new();
    let repo = repo(env.root.path());
    let mut t = Transcript::new(&env, "s-pr", &repo, "main");
    t.user("link this to the PR");
    t.say("ok");
    t.hook(&env);
    as_ana(
        &env,
        &["link", "s-pr", "--to", "#42", "--reason", "reviewed there"],
    )
    .unwrap();
    let v = skim(&env, &["review", "42"]);
    assert_eq!(sessions_of(&v), vec![key_of(&env, "s-pr")]);
    as_ana(
        &env,
        &["unlink", "s-pr", "--to", "https://github.com/o/r/pull/42"],
    )
    .unwrap();
    assert!(sessions_of(&skim(&env, &["review", "42"])).is_empty());
}

#[test]
fn hostile_link_arguments_are_refused_or_cleaned() {
    let env = Env::new();
    let repo = repo(env.root.path());
    let mut t = Transcript::new(&env, "s-h", &repo, "main");
    t.user("hi");
    t.say("hello");
    t.hook(&env);
    let long_target = "x".repeat(10_000);
    for to in [
        "",
        "a..b",
        "-rf",
        "feat\u{1b}]0;pwned\u{7}",
        "feat\u{202e}evil",
        "with space",
        "#notanumber",
        long_target.as_str(),
    ] {
        let err = as_ana(&env, &["link", "s-h", "--to", to]).unwrap_err();
        let report: Value = serde_json::from_str(&err).unwrap();
        assert_eq!(report["kind"], "invalid", "{to:?}: {err}");
        assert!(
            !err.contains('\u{1b}') && !err.contains('\u{202e}'),
            "{err:?}"
        );
    }
    let err = as_ana(&env, &["link", "no-such-session", "--to", "main"]).unwrap_err();
    assert!(err.contains("not_found"), "{err}");

    // A reason is one printable line of at most 500 characters; a hostile USER is cleaned too.
    let reason = format!(
        "fine\u{1b}[2J\u{1b}]8;;http://x\u{7}\nnext{}",
        "y".repeat(20_000)
    );
    let out = env
        .command()
        .env("USER", "ana\u{1b}[31m\u{202e}")
        .args(["--json", "link", "s-h", "--to", "main", "--reason", &reason])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let stored = v["link"]["reason"].as_str().unwrap();
    assert!(stored.starts_with("fine next"), "{stored:?}");
    assert!(stored.chars().count() <= 501, "{}", stored.chars().count());
    assert!(!stored.chars().any(char::is_control));
    assert_eq!(v["link"]["made_by"], "ana");
    let human = env.ok(&["show", "s-h"]);
    assert!(!human.contains('\u{1b}') && !human.contains('\u{202e}'));
    // No account name in the environment (a launcher that sets none): the home folder's name.
    let anonymous = env.json(&["link", "s-h", "--to", "feature"]);
    assert_eq!(anonymous["link"]["made_by"], "home");
}

/// A session linked from another repository's folder is kept by the branch's name, but skim
/// lists it where it ran: the link says so, and where.
#[test]
fn a_link_made_from_another_repository_says_where_skim_lists_the_session() {
    let env = Env::new();
    let beta = repo(&env.root.path().join("beta"));
    let alpha = repo(&env.root.path().join("alpha"));
    git(&beta, &["checkout", "-q", "-b", "feature"]);
    let mut t = Transcript::new(&env, "s-beta", &beta, "feature");
    t.user("fix the login");
    t.say("Done.");
    t.hook(&env);
    let link_from = |dir: &std::path::Path| {
        env.run(&[
            "-C",
            dir.to_str().unwrap(),
            "link",
            "s-beta",
            "--to",
            "main",
        ])
    };
    let out = link_from(&alpha);
    assert!(out.status.success(), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!("note: the session ran in {}", beta.display()))
            && err.contains("--all-repos"),
        "{err}"
    );
    // From its own repository, no such note.
    let out = link_from(&beta);
    assert!(
        !String::from_utf8_lossy(&out.stderr).contains("ran in"),
        "{out:?}"
    );
}

/// A person's link rests on no turn: it is their word that the whole session belongs. Skim
/// counts every turn of it related, and says so, never "0 directly related turns".
#[test]
fn a_session_linked_by_hand_has_every_turn_related() {
    let env = Env::new();
    let repo = repo(env.root.path());
    git(&repo, &["checkout", "-q", "-b", "feature"]);
    git(&repo, &["checkout", "-q", "main"]);
    let mut talk = Transcript::new(&env, "s-plan", &repo, "main");
    talk.user("how should the login page look?");
    talk.say("A form with two fields.");
    talk.user("and a remember-me box?");
    talk.say("Yes, below the fields.");
    talk.hook(&env);
    assert!(sessions_of(&skim(&env, &["branch", "feature"])).is_empty());
    as_ana(&env, &["link", "s-plan", "--to", "feature"]).unwrap();

    let v = skim(&env, &["branch", "feature"]);
    let s = &v["sessions"][0];
    let turns = s["turns"].as_array().unwrap();
    assert_eq!(turns.len(), 2, "{s}");
    assert!(turns.iter().all(|t| t["related"] == true), "{s}");
    assert_eq!(s["related_turn_count"], 2, "{s}");
    assert_eq!(v["coverage"]["related_turn_count"], 2, "{v}");
    // The latest related turn's words preview the session.
    let previews = s["previews"].as_array().unwrap();
    assert!(
        previews
            .iter()
            .any(|p| p.as_str().unwrap().contains("remember-me")),
        "{s}"
    );
    let human = env.ok(&["skim", "branch", "feature"]);
    assert!(
        human.contains("1 related session, 2 turns total, 2 directly related turns."),
        "{human}"
    );
}

/// A link or unlink waits for the capture lock (a rebuild from the copies holds it as long as
/// it runs) and says so on stderr, as a forget does, instead of failing after a silent wait.
#[test]
fn a_link_and_an_unlink_say_they_wait_for_the_capture_lock() {
    let env = Env::new();
    let repo = repo(env.root.path());
    let mut t = Transcript::new(&env, "s-wait", &repo, "main");
    t.user("link this to the PR");
    t.say("ok");
    t.hook(&env);
    for (word, done) in [
        ("link", "Linked session s-wait"),
        ("unlink", "Unlinked session s-wait"),
    ] {
        let (line, out) = run_while_locked(&env, &[word, "s-wait", "--to", "#42"]);
        assert!(
            line.starts_with("Waiting for another Cairn process to let go of the archive"),
            "{word}: {line}"
        );
        assert!(line.contains("capture.lock"), "{word}: {line}");
        assert!(
            line.trim_end()
                .ends_with(&format!("the {word} runs once it does.")),
            "{word}: {line}"
        );
        assert!(out.status.success(), "{word}: {out:?}");
        assert!(
            String::from_utf8_lossy(&out.stdout).starts_with(done),
            "{word}: {out:?}"
        );
    }
}

//! Branch context: throwaway repositories built with git, sessions captured through
//! `cairn hook` as an agent would, then `cairn skim` / `cairn show`.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};

use crate::support::{Env, bare_remote, git};

/// A repository with one commit on `main`.
pub(crate) fn repo(root: &Path) -> PathBuf {
    let dir = root.join("repo");
    std::fs::create_dir_all(&dir).unwrap();
    git(&dir, &["init", "-q", "-b", "main"]);
    std::fs::write(dir.join("README.md"), "hello\n").unwrap();
    git(&dir, &["add", "."]);
    git(&dir, &["commit", "-q", "-m", "init"]);
    std::fs::canonicalize(dir).unwrap()
}

/// A Claude Code transcript written line by line, as the agent would.
pub(crate) struct Transcript {
    path: PathBuf,
    session: String,
    cwd: PathBuf,
    branch: String,
    n: usize,
    /// Seconds the transcript's clock is behind today's (a session from last year).
    back: i64,
}

impl Transcript {
    pub(crate) fn new(env: &Env, session: &str, cwd: &Path, branch: &str) -> Transcript {
        let dir = env.claude().join("-repo");
        std::fs::create_dir_all(&dir).unwrap();
        Transcript {
            path: dir.join(format!("{session}.jsonl")),
            session: session.into(),
            cwd: cwd.into(),
            branch: branch.into(),
            n: 0,
            back: 0,
        }
    }

    /// The transcript's records dated `secs` before now.
    pub(crate) fn dated_back(mut self, secs: i64) -> Transcript {
        self.back = secs;
        self
    }

    fn line(&mut self, mut v: Value) {
        self.n += 1;
        let now = (jiff::Timestamp::now() - jiff::SignedDuration::from_secs(self.back))
            .strftime("%Y-%m-%dT%H:%M:%S%.3fZ")
            .to_string();
        let extra = json!({"sessionId": self.session, "cwd": self.cwd, "gitBranch": self.branch,
            "uuid": format!("{}-{}", self.session, self.n), "timestamp": now, "version": "2.1.39"});
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

    pub(crate) fn user(&mut self, text: &str) {
        self.line(json!({"type": "user", "message": {"role": "user", "content": text}}));
    }

    pub(crate) fn say(&mut self, text: &str) {
        let id = format!("msg_{}", self.n);
        self.line(json!({"type": "assistant", "message": {"id": id, "role": "assistant", "model": "claude-test", "content": [{"type": "text", "text": text}]}}));
    }

    fn tool(&mut self, name: &str, input: Value, output: &str) {
        let id = format!("toolu_{}_{}", self.session, self.n);
        self.line(json!({"type": "assistant", "message": {"id": format!("msg_{}", self.n), "role": "assistant", "content": [{"type": "tool_use", "id": id, "name": name, "input": input}]}}));
        self.line(json!({"type": "user", "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": id, "content": output}]}}));
    }

    /// Edit a file for real and record the Edit tool call.
    pub(crate) fn edit(&mut self, rel: &str, content: &str) {
        let path = self.cwd.join(rel);
        std::fs::write(&path, content).unwrap();
        self.tool(
            "Edit",
            json!({"file_path": path, "old_string": "", "new_string": content}),
            "The file has been updated.",
        );
    }

    /// Run a git command for real and record it as a Bash call with its output.
    pub(crate) fn run_git(&mut self, args: &[&str]) {
        let out = Command::new("git")
            .arg("-C")
            .arg(&self.cwd)
            .args(args)
            .env("GIT_AUTHOR_NAME", "Agent")
            .env("GIT_AUTHOR_EMAIL", "agent@example.invalid")
            .env("GIT_COMMITTER_NAME", "Agent")
            .env("GIT_COMMITTER_EMAIL", "agent@example.invalid")
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        self.tool(
            "Bash",
            json!({"command": format!("git {}", args.join(" "))}),
            &text,
        );
    }

    /// The Stop hook fires.
    pub(crate) fn hook(&self, env: &Env) {
        let input = json!({"session_id": self.session, "transcript_path": self.path, "cwd": self.cwd, "hook_event_name": "Stop"});
        let out = env.run_with_stdin(&["hook", "--agent", "claude"], input.to_string().as_bytes());
        assert!(
            out.status.success(),
            "hook failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

pub(crate) fn skim(env: &Env, args: &[&str]) -> Value {
    let mut all = vec!["skim"];
    all.extend_from_slice(args);
    env.json(&all)
}

pub(crate) fn sessions_of(v: &Value) -> Vec<String> {
    v["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["session_key"].as_str().unwrap().to_owned())
        .collect()
}

pub(crate) fn key_of(env: &Env, session: &str) -> String {
    let list = env.json(&["sessions"]);
    list.as_array()
        .unwrap()
        .iter()
        .find(|s| s["session_id"] == session)
        .unwrap()["session_key"]
        .as_str()
        .unwrap()
        .to_owned()
}

/// On a new branch `feature` of `repo`, session `id` edits a file in one turn and commits it
/// in the next, a hook capturing after each.
pub(crate) fn edit_then_commit(env: &Env, repo: &Path, id: &str) {
    git(repo, &["checkout", "-q", "-b", "feature"]);
    let mut t = Transcript::new(env, id, repo, "feature");
    t.user("add a login page");
    t.edit("login.txt", "login form\n");
    t.say("I added login.txt.");
    t.hook(env);
    t.user("commit it");
    t.run_git(&["add", "login.txt"]);
    t.run_git(&["commit", "-m", "Add login page"]);
    t.say("Committed.");
    t.hook(env);
}

#[test]
fn edit_then_commit_across_turns_is_related_with_its_evidence() {
    let env = Env::new();
    let repo = repo(env.root.path());
    edit_then_commit(&env, &repo, "s-edit-commit");

    let key = key_of(&env, "s-edit-commit");
    let v = skim(&env, &["branch", "feature"]);
    assert_eq!(v["target_key"], "ref:refs/heads/feature");
    assert_eq!(sessions_of(&v), vec![key.clone()]);
    let s = &v["sessions"][0];
    let evidence: Vec<&str> = s["why_related"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["evidence"].as_str().unwrap())
        .collect();
    assert!(evidence.contains(&"commit_by_session"), "{evidence:?}");
    assert!(evidence.contains(&"environment_promotion"), "{evidence:?}");
    assert!(
        s["why_related"][0]["reason"]
            .as_str()
            .unwrap()
            .contains("Add login page")
    );
    // Only the turn with the commit is directly related, not every turn.
    let related: Vec<bool> = s["turns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["related"].as_bool().unwrap())
        .collect();
    assert_eq!(related, vec![false, true]);
    assert_eq!(v["coverage"]["related_turn_count"], 1);
    // The default target is the branch checked out in -C.
    let default = env.json(&["-C", repo.to_str().unwrap(), "skim"]);
    assert_eq!(default["target_key"], "ref:refs/heads/feature");
    // main got nothing.
    assert!(sessions_of(&skim(&env, &["branch", "main"])).is_empty());
}

#[test]
fn a_skim_in_a_repository_lists_its_own_sessions_not_another_repositorys_branch_of_that_name() {
    let env = Env::new();
    let one = repo(&env.root.path().join("one"));
    let two = repo(&env.root.path().join("two"));
    edit_then_commit(&env, &one, "s-one");
    edit_then_commit(&env, &two, "s-two");
    let (k1, k2) = (key_of(&env, "s-one"), key_of(&env, "s-two"));
    let sorted = |v: &Value| {
        let mut keys = sessions_of(v);
        keys.sort();
        keys
    };
    let mut both = vec![k1.clone(), k2.clone()];
    both.sort();
    let at = |dir: &Path, args: &[&str]| {
        let mut all = vec!["-C", dir.to_str().unwrap(), "skim"];
        all.extend_from_slice(args);
        env.json(&all)
    };

    // Outside any repository, every repository's `feature`.
    assert_eq!(sorted(&skim(&env, &["branch", "feature"])), both);
    // In one: its own, by name, by default target and from a folder inside it.
    assert_eq!(
        sessions_of(&at(&one, &["branch", "feature"])),
        vec![k1.clone()]
    );
    assert_eq!(sessions_of(&at(&one, &[])), vec![k1.clone()]);
    std::fs::create_dir_all(two.join("src")).unwrap();
    assert_eq!(sessions_of(&at(&two.join("src"), &[])), vec![k2.clone()]);
    // It says how many it left out, and --all-repos lifts it.
    let hidden = |v: &Value| v["coverage"]["other_repo_sessions_hidden"].clone();
    assert_eq!(hidden(&at(&one, &["branch", "feature"])), 1);
    let all = at(&one, &["branch", "feature", "--all-repos"]);
    assert_eq!(sorted(&all), both);
    assert_eq!(hidden(&all), 0);
    // A worktree of `one` no session ran in yet finds its sibling's session.
    let wt = env.root.path().join("one-wt");
    git(
        &one,
        &["worktree", "add", "-q", wt.to_str().unwrap(), "main"],
    );
    assert_eq!(sessions_of(&at(&wt, &["branch", "feature"])), vec![k1]);
    // A repository no session ran in lists none, and says where they are.
    let three = repo(&env.root.path().join("three"));
    assert!(sessions_of(&at(&three, &["branch", "feature"])).is_empty());
    let human = env.ok(&["-C", three.to_str().unwrap(), "skim", "branch", "feature"]);
    assert!(
        human.contains(
            "2 sessions of other repositories have a target of this name: add --all-repos to see them."
        ),
        "{human}"
    );
    // A session Cairn could not place in any repository (its folder is gone) may have run in
    // any: every repository's skim lists it, as the agent said its branch.
    let gone = env.root.path().join("gone");
    let mut t = Transcript::new(&env, "s-gone", &gone, "feature");
    t.user("tidy the readme");
    t.say("Tidied.");
    env.ok(&["sync"]);
    let k3 = key_of(&env, "s-gone");
    let weak = |dir: &Path| at(dir, &["branch", "feature", "--include-weak"]);
    assert!(sessions_of(&weak(&three)).contains(&k3));
    assert!(sessions_of(&weak(&one)).contains(&k3));
    // The human layout too.
    let human = env.ok(&["-C", two.to_str().unwrap(), "skim", "branch", "feature"]);
    assert!(human.contains("showing 1 related session"), "{human}");
}

#[test]
fn edits_committed_by_a_person_after_the_session_count_without_hooks() {
    let env = Env::new();
    let repo = repo(env.root.path());
    git(&repo, &["checkout", "-q", "-b", "topic"]);
    let mut t = Transcript::new(&env, "s-no-hooks", &repo, "topic");
    t.user("fix the parser");
    t.edit("parser.txt", "fixed\n");
    t.say("Fixed the parser; please commit.");
    // The person commits later; Cairn only ever sees the transcript through `sync`.
    git(&repo, &["add", "parser.txt"]);
    git(&repo, &["commit", "-q", "-m", "Fix parser"]);
    env.ok(&["sync"]);
    let v = skim(&env, &["branch", "topic"]);
    let why = &v["sessions"][0]["why_related"][0];
    assert_eq!(why["evidence"], "edit_committed");
    let reason = why["reason"].as_str().unwrap();
    assert!(
        reason.starts_with("edited parser.txt, committed in "),
        "{reason}"
    );
    // The human layout says why in one line and prints no keys.
    let human = env.ok(&["skim", "branch", "topic"]);
    assert!(
        human.contains("why: edited parser.txt, committed in"),
        "{human}"
    );
    assert!(!human.contains("sha256-"));
}

/// A branch forked from `topic` after the session's work was committed there holds that
/// commit, but did none of it: its skim does not list the session, `topic`'s and a branch that
/// merged the work in do.
#[test]
fn a_branch_created_after_the_work_was_committed_is_not_related_to_it() {
    let env = Env::new();
    let repo = repo(env.root.path());
    git(&repo, &["branch", "release"]);
    git(&repo, &["checkout", "-q", "-b", "topic"]);
    let mut t = Transcript::new(&env, "s-forked", &repo, "topic");
    t.user("fix the parser");
    t.edit("parser.txt", "the parser reads every line now\n");
    t.say("Fixed the parser; please commit.");
    git(&repo, &["add", "parser.txt"]);
    git(&repo, &["commit", "-q", "-m", "Fix parser"]);
    git(&repo, &["branch", "forked-later"]);
    let wt = env.root.path().join("wt-later");
    git(
        &repo,
        &[
            "worktree",
            "add",
            "-q",
            "-b",
            "worktree-later",
            wt.to_str().unwrap(),
            "topic",
        ],
    );
    git(&repo, &["checkout", "-q", "release"]);
    git(
        &repo,
        &["merge", "-q", "--no-ff", "-m", "Merge topic", "topic"],
    );
    env.ok(&["sync"]);
    assert_eq!(edit_evidence(&env, "topic").len(), 1);
    assert_eq!(edit_evidence(&env, "release").len(), 1, "merged in");
    for later in ["forked-later", "worktree-later"] {
        let v = skim(&env, &["branch", later]);
        assert!(sessions_of(&v).is_empty(), "{later}: {v}");
    }

    // When every branch holding the work forked after it (the branch it was made on was reset
    // away), they keep it: the work is theirs now.
    let mut t = Transcript::new(&env, "s-kept", &repo, "release");
    t.user("tidy the lexer");
    t.edit("lexer.txt", "the lexer keeps its comments now\n");
    t.say("Tidied; please commit.");
    git(&repo, &["add", "lexer.txt"]);
    git(&repo, &["commit", "-q", "-m", "Tidy lexer"]);
    git(&repo, &["switch", "-q", "-c", "keeper"]);
    git(&repo, &["switch", "-q", "release"]);
    git(&repo, &["reset", "-q", "--hard", "HEAD~1"]);
    env.ok(&["sync"]);
    assert_eq!(edit_evidence(&env, "keeper").len(), 1);
}

#[test]
fn edit_and_commit_in_one_turn_in_a_linked_worktree_relate_only_to_its_branch() {
    let env = Env::new();
    let repo = repo(env.root.path());
    let wt = env.root.path().join("wt");
    git(
        &repo,
        &[
            "worktree",
            "add",
            "-q",
            "-b",
            "wt-branch",
            wt.to_str().unwrap(),
        ],
    );
    let wt = std::fs::canonicalize(wt).unwrap();
    let mut t = Transcript::new(&env, "s-worktree", &wt, "wt-branch");
    t.user("add docs and commit");
    t.edit("docs.txt", "docs\n");
    t.run_git(&["add", "docs.txt"]);
    t.run_git(&["commit", "-m", "Add docs"]);
    t.say("Done.");
    t.hook(&env);
    let key = key_of(&env, "s-worktree");
    assert_eq!(
        sessions_of(&skim(&env, &["branch", "wt-branch"])),
        vec![key]
    );
    assert!(sessions_of(&skim(&env, &["branch", "main"])).is_empty());
    assert!(sessions_of(&skim(&env, &["branch", "main", "--include-weak"])).is_empty());
}

#[test]
fn a_read_only_session_is_only_a_weak_link() {
    let env = Env::new();
    let repo = repo(env.root.path());
    let mut t = Transcript::new(&env, "s-read-only", &repo, "main");
    t.user("what does README say?");
    t.tool(
        "Read",
        json!({"file_path": repo.join("README.md")}),
        "hello",
    );
    t.say("It says hello.");
    t.hook(&env);
    let key = key_of(&env, "s-read-only");
    let strict = skim(&env, &["branch", "main"]);
    assert!(sessions_of(&strict).is_empty());
    assert_eq!(strict["coverage"]["weak_sessions_hidden"], 1);
    let weak = skim(&env, &["branch", "main", "--include-weak"]);
    assert_eq!(sessions_of(&weak), vec![key]);
    assert_eq!(weak["sessions"][0]["weak"], true);
    let human = env.ok(&["skim", "branch", "main"]);
    assert!(
        human.contains("No related agent sessions found.") && human.contains("--include-weak"),
        "{human}"
    );
    // Publish leaves it out too, and says so rather than "0 sessions" alone.
    let repo_str = repo.to_str().unwrap();
    let dry = env.json(&["-C", repo_str, "publish", "branch", "main", "--dry-run"]);
    assert_eq!(
        (dry["sessions"].as_u64(), dry["weak_left_out"].as_u64()),
        (Some(0), Some(1))
    );
    let said = env.ok(&["-C", repo_str, "publish", "branch", "main", "--dry-run"]);
    assert!(
        said.contains("Left out 1 session that only ran while it was checked out"),
        "{said}"
    );
}

#[test]
fn two_concurrent_sessions_on_two_branches_in_one_workspace_each_get_their_own() {
    let env = Env::new();
    let repo = repo(env.root.path());
    // A GitButler-style workspace: branches a and b applied at once, HEAD on the workspace ref.
    git(&repo, &["branch", "a"]);
    git(&repo, &["branch", "b"]);
    git(&repo, &["checkout", "-q", "-b", "gitbutler/workspace"]);
    let gb = repo.join(".git/gitbutler");
    std::fs::create_dir_all(&gb).unwrap();
    std::fs::write(
        gb.join("virtual_branches.toml"),
        "[branches.one]\nname = \"a\"\nin_workspace = true\n\n[branches.two]\nname = \"b\"\nin_workspace = true\n",
    )
    .unwrap();
    let mut s1 = Transcript::new(&env, "s-lane-a", &repo, "gitbutler/workspace");
    let mut s2 = Transcript::new(&env, "s-lane-b", &repo, "gitbutler/workspace");
    s1.user("work on a");
    s1.edit("a.txt", "a\n");
    s2.user("work on b");
    s2.edit("b.txt", "b\n");
    s1.hook(&env);
    s2.hook(&env);
    // GitButler commits each lane's file to its branch (plumbing: a commit per branch).
    for (branch, file) in [("a", "a.txt"), ("b", "b.txt")] {
        let blob = git(&repo, &["hash-object", "-w", file]).trim().to_owned();
        let base_tree = git(&repo, &["rev-parse", &format!("{branch}^{{tree}}")])
            .trim()
            .to_owned();
        let index = env.root.path().join(format!("index-{branch}"));
        let with_index = |args: &[&str]| {
            let out = Command::new("git")
                .arg("-C")
                .arg(&repo)
                .args(args)
                .env("GIT_INDEX_FILE", &index)
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
            String::from_utf8(out.stdout).unwrap()
        };
        with_index(&["read-tree", &base_tree]);
        with_index(&[
            "update-index",
            "--add",
            "--cacheinfo",
            &format!("100644,{blob},{file}"),
        ]);
        let tree = with_index(&["write-tree"]).trim().to_owned();
        let commit = git(
            &repo,
            &[
                "commit-tree",
                &tree,
                "-p",
                branch,
                "-m",
                &format!("lane {branch}"),
            ],
        )
        .trim()
        .to_owned();
        git(
            &repo,
            &["update-ref", &format!("refs/heads/{branch}"), &commit],
        );
    }
    s1.say("a is committed");
    s2.say("b is committed");
    s1.hook(&env);
    s2.hook(&env);
    let k1 = key_of(&env, "s-lane-a");
    let k2 = key_of(&env, "s-lane-b");
    assert_eq!(sessions_of(&skim(&env, &["branch", "a"])), vec![k1]);
    assert_eq!(sessions_of(&skim(&env, &["branch", "b"])), vec![k2]);
}

#[test]
fn a_pr_created_with_gh_shows_under_skim_review_by_number_and_url() {
    let env = Env::new();
    let repo = repo(env.root.path());
    git(&repo, &["checkout", "-q", "-b", "feat/pr"]);
    let mut t = Transcript::new(&env, "s-pr", &repo, "feat/pr");
    t.user("open a PR");
    t.tool(
        "Bash",
        json!({"command": "gh pr create --fill"}),
        "Creating pull request for feat/pr into main in o/r\n\nhttps://github.com/o/r/pull/77\n",
    );
    t.say("Opened https://github.com/o/r/pull/77");
    t.hook(&env);
    let key = key_of(&env, "s-pr");
    for value in [
        "77",
        "#77",
        "https://github.com/o/r/pull/77",
        "pull-request:ref:refs/heads/feat/pr#77",
    ] {
        assert_eq!(
            sessions_of(&skim(&env, &["review", value])),
            vec![key.clone()],
            "{value}"
        );
    }
    assert!(sessions_of(&skim(&env, &["review", "78"])).is_empty());
}

#[test]
fn relinking_drops_links_without_evidence() {
    let env = Env::new();
    let repo = repo(env.root.path());
    let mut t = Transcript::new(&env, "s-stale", &repo, "main");
    t.user("look around");
    t.say("Looked.");
    t.hook(&env);
    // A stale link nothing supports (an index entry from an older build, say).
    let conn = rusqlite::Connection::open(env.data().join("cairn.db")).unwrap();
    conn.execute(
        "INSERT INTO links (session_id, target_kind, target_key, evidence, strong, confidence, detail)
         SELECT id, 'branch', 'ref:refs/heads/other', 'commit_by_session', 1, 1.0, 'stale' FROM sessions",
        [],
    )
    .unwrap();
    t.say("more");
    t.hook(&env);
    assert!(sessions_of(&skim(&env, &["branch", "other"])).is_empty());
}

#[test]
fn show_lists_turns_and_a_turns_records_by_key_or_index() {
    let env = Env::new();
    let repo = repo(env.root.path());
    let mut t = Transcript::new(&env, "s-show", &repo, "main");
    t.user("first question");
    t.say("first answer");
    t.user("second question");
    t.tool("Bash", json!({"command": "echo hi"}), "hi");
    t.say("second answer");
    t.hook(&env);
    let timeline = env.json(&["show", "s-show"]);
    assert_eq!(timeline["coverage"]["total_turns"], 2);
    let turn_key = timeline["turns"][1]["turn_key"]
        .as_str()
        .unwrap()
        .to_owned();
    let by_key = env.json(&["show", "s-show", "--turn", &turn_key]);
    let by_index = env.json(&["show", "s-show", "--turn", "1"]);
    assert_eq!(by_key, by_index);
    assert_eq!(by_key["coverage"]["total_records"], 4);
    let limited = env.json(&["show", "s-show", "--turn", "1", "--limit", "2"]);
    assert_eq!(limited["coverage"]["showing_records"], 2);
    assert_eq!(limited["coverage"]["has_more_before"], true);
    assert!(limited["records"][0].get("record_hash").is_none());
    let human = env.ok(&["show", "s-show"]);
    assert!(!human.contains("sha256"));
    let human = normalise_times(&human);
    insta::assert_snapshot!("show_timeline_human", human);
    // A turn's records are on the person's clock, as the session's header is.
    let in_tokyo = |args: &[&str]| {
        let out = env
            .command()
            .env("TZ", "Asia/Tokyo")
            .args(args)
            .output()
            .unwrap();
        String::from_utf8(out.stdout).unwrap()
    };
    let header = in_tokyo(&["show", "s-show"]);
    let records = in_tokyo(&["show", "s-show", "--turn", "1"]);
    let clock = regex::Regex::new(r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}").unwrap();
    let first = |s: &str| clock.find(s).map(|m| m.as_str().to_owned());
    assert!(
        first(&records).is_some() && !records.contains("Z "),
        "{records}"
    );
    assert!(
        header.contains(&first(&records).unwrap()[..13]),
        "{header}\n{records}"
    );
    let human = normalise_times(&env.ok(&["show", "s-show", "--turn", "1"]));
    insta::assert_snapshot!("show_turn_human", human);
    assert!(!human.contains("left out"), "the whole turn shown: {human}");
    let cut = env.ok(&["show", "s-show", "--turn", "1", "--limit", "2"]);
    assert!(
        cut.contains(
            "(its first 2 records left out, the prompt with them: --limit 4 shows the whole turn)"
        ),
        "{cut}"
    );
    let err = env.run(&["show", "nope"]);
    assert_eq!(err.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&err.stderr).contains("cairn sessions"));
}

/// A skim that finds nothing for a name the repository has no branch of says so (a typo);
/// one for a branch that exists but has no sessions does not.
#[test]
fn skim_of_a_branch_the_repository_lacks_says_so() {
    let env = Env::new();
    let repo = repo(env.root.path());
    git(&repo, &["branch", "quiet"]);
    env.ok(&["sync"]);
    let at = |branch: &str| env.ok(&["-C", repo.to_str().unwrap(), "skim", "branch", branch]);
    let typo = at("nosuchbranch");
    assert!(typo.contains("No related agent sessions found."), "{typo}");
    assert!(typo.contains("has no branch named nosuchbranch"), "{typo}");
    let quiet = at("quiet");
    assert!(!quiet.contains("has no branch named"), "{quiet}");
}

#[test]
fn skim_human_layout() {
    let env = Env::new();
    let repo = repo(env.root.path());
    git(&repo, &["checkout", "-q", "-b", "layout"]);
    let mut t = Transcript::new(&env, "s-layout", &repo, "layout");
    t.user("implement the widget");
    t.edit("widget.txt", "w\n");
    t.run_git(&["add", "widget.txt"]);
    t.run_git(&["commit", "-m", "Add widget"]);
    t.say("I implemented the widget and committed it. What's next?");
    t.hook(&env);
    let human = env.ok(&["skim", "branch", "layout"]);
    let human = normalise_times(&human);
    let human = regex_replace(&human, r"[0-9a-f]{7}", "<sha>");
    insta::assert_snapshot!("skim_human", human);
    assert!(!human.contains("sha256-"), "no key unless asked: {human}");

    // Asked for keys: the session's and each turn's, as `show` takes them.
    let json: serde_json::Value =
        serde_json::from_str(&env.ok(&["--json", "skim", "branch", "layout"])).unwrap();
    let session = &json["sessions"][0];
    let keyed = env.ok(&["--keys", "skim", "branch", "layout"]);
    let session_key = session["session_key"].as_str().unwrap();
    assert!(
        keyed.contains(&format!("  session {session_key}\n")),
        "{keyed}"
    );
    let turn_key = session["turns"][0]["turn_key"].as_str().unwrap();
    assert!(keyed.contains(&format!("- #0 {turn_key} ")), "{keyed}");
    assert!(keyed.contains("with the keys above."), "{keyed}");
    env.ok(&["show", session_key, "--turn", turn_key]);
}

fn normalise_times(s: &str) -> String {
    let s = regex_replace(s, r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z", "<time>");
    regex_replace(&s, r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}(:\d{2})?", "<time>")
}

fn regex_replace(s: &str, pattern: &str, with: &str) -> String {
    regex::Regex::new(pattern)
        .unwrap()
        .replace_all(s, with)
        .into_owned()
}

#[test]
fn publish_in_one_clone_pull_in_another_without_paths_or_secrets() {
    let env = Env::new();
    let root = env.root.path();
    let remote = bare_remote(root);
    let a = root.join("a");
    git(
        root,
        &["clone", "-q", remote.to_str().unwrap(), a.to_str().unwrap()],
    );
    let a = std::fs::canonicalize(a).unwrap();
    std::fs::write(a.join("README.md"), "hi\n").unwrap();
    git(&a, &["add", "."]);
    git(
        &a,
        &[
            "-c",
            "user.name=T",
            "-c",
            "user.email=t@example.invalid",
            "commit",
            "-q",
            "-m",
            "init",
        ],
    );
    git(&a, &["push", "-q", "origin", "main"]);
    git(&a, &["checkout", "-q", "-b", "shared"]);
    let secret = "ghp_EXAMPLEq7Xr9Kd2Lm4Np6Qs8Tv0Wy2Za4Bc6";
    let mut t = Transcript::new(&env, "s-publish", &a, "shared");
    t.user(&format!(
        "add {} using token {secret}",
        a.join("feature.txt").display()
    ));
    t.edit("feature.txt", "f\n");
    t.run_git(&["add", "feature.txt"]);
    t.run_git(&["commit", "-m", "Add feature"]);
    t.say(&format!("Committed {}.", a.join("feature.txt").display()));
    t.hook(&env);

    let a_str = a.to_str().unwrap();
    let dry = env.json(&["-C", a_str, "publish", "shared", "--dry-run"]);
    assert_eq!(
        (dry["dry_run"].as_bool(), dry["sessions"].as_u64()),
        (Some(true), Some(1))
    );
    // Another repository with a branch of the same name publishes none of this one's sessions
    // (`shared` of every repository is one branch key).
    let other = std::fs::canonicalize(root).unwrap().join("other");
    git(
        root,
        &["init", "-q", "-b", "shared", other.to_str().unwrap()],
    );
    let elsewhere = env.json(&[
        "-C",
        other.to_str().unwrap(),
        "publish",
        "shared",
        "--dry-run",
    ]);
    assert_eq!(elsewhere["sessions"], 0, "{elsewhere}");
    assert_eq!(
        git(&a, &["for-each-ref", "refs/cairn/"]),
        "",
        "a dry run writes nothing"
    );

    let published = env.json(&["-C", a_str, "publish", "branch", "shared"]);
    assert_eq!(published["sessions"], 1);
    let pushed = env.json(&["-C", a_str, "push"]);
    assert_eq!(pushed["pushed"], 1);

    // What left the machine: no absolute path, no secret.
    let refs = git(
        &remote,
        &["for-each-ref", "--format=%(objectname)", "refs/cairn/"],
    );
    assert_eq!(refs.lines().count(), 1);
    for commit in refs.lines() {
        let doc = git(
            &remote,
            &["cat-file", "blob", &format!("{commit}:session.json")],
        );
        assert!(
            !doc.contains(a_str) && !doc.contains(root.to_str().unwrap()),
            "absolute path in {doc}"
        );
        assert!(!doc.contains(secret), "secret in {doc}");
        assert!(
            doc.contains("feature.txt"),
            "repo-relative path kept: {doc}"
        );
    }

    // A teammate with their own archive pulls and sees the session as published.
    let teammate = Env::new();
    let b = teammate.root.path().join("b");
    git(
        root,
        &["clone", "-q", remote.to_str().unwrap(), b.to_str().unwrap()],
    );
    let pulled = teammate.json(&["-C", b.to_str().unwrap(), "pull"]);
    assert_eq!(pulled["sessions_imported"], 1);
    // Shown in the repository it was pulled into, as a teammate's text.
    let v = teammate.json(&["-C", b.to_str().unwrap(), "skim", "branch", "shared"]);
    assert_eq!(v["sessions"].as_array().unwrap().len(), 1);
    assert_eq!(v["sessions"][0]["status"], "published");
    assert_eq!(v["sessions"][0]["untrusted"], true);
    assert_eq!(v["sessions"][0]["session_key"], key_of(&env, "s-publish"));
    // And the publisher's own skim now says published too.
    assert_eq!(
        skim(&env, &["branch", "shared"])["sessions"][0]["status"],
        "published"
    );
}

/// `cairn why` at the front door: a line to the turn whose edit wrote it, a commit to its
/// session with the link and the lines, JSON like every command; hostile targets fail as an
/// `ErrorReport` on stderr with nothing on stdout.
#[test]
fn why_traces_a_line_and_a_commit_to_the_turn_that_wrote_them() {
    let env = Env::new();
    let repo = repo(env.root.path());
    git(&repo, &["checkout", "-q", "-b", "feature"]);
    let mut t = Transcript::new(&env, "s-why", &repo, "feature");
    t.user("add a login page");
    t.say("Looking at the layout first.");
    t.hook(&env);
    t.user("now write it");
    t.edit(
        "login.txt",
        "login form with a remember-me box\nsubmit button\n",
    );
    t.say("Done.");
    t.run_git(&["add", "login.txt"]);
    t.run_git(&["commit", "-m", "Add login page"]);
    t.hook(&env);
    let key = key_of(&env, "s-why");
    let dir = repo.to_str().unwrap();

    let v = env.json(&["why", "-C", dir, "login.txt:1"]);
    assert_eq!(v["kind"], "lines");
    assert_eq!(v["path"], "login.txt");
    assert_eq!(v["commits"][0]["subject"], "Add login page");
    let s = &v["sessions"][0];
    assert_eq!(s["session_key"], key.as_str());
    assert_eq!(s["turns"][0]["evidence"], "wrote_line");
    assert_eq!(s["turns"][0]["turn_index"], 1, "the second turn wrote it");
    assert_eq!(s["turns"][0]["lines"], json!([1]));

    let head = git(&repo, &["rev-parse", "HEAD"]);
    let v = env.json(&["why", "-C", dir, head.trim()]);
    assert_eq!(v["kind"], "commit");
    let kinds: Vec<&str> = v["sessions"][0]["evidence"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["kind"].as_str().unwrap())
        .collect();
    assert!(kinds.contains(&"commit_by_session"), "{kinds:?}");
    assert!(kinds.contains(&"wrote_lines"), "{kinds:?}");
    let text = env.ok(&["why", "-C", dir, "HEAD"]);
    assert!(text.contains("Add login page"), "{text}");
    assert!(text.contains("wrote_lines"), "{text}");

    // A description ranks sessions (the session-level search).
    let v = env.json(&["why", "-C", dir, "remember-me box"]);
    assert_eq!(v["kind"], "description");
    assert_eq!(v["sessions"][0]["session_key"], key.as_str());
    // Ranked without figures: relative search scores are no confidence (JSON keeps them).
    assert!(
        v["sessions"][0]["confidence"].as_f64().unwrap() > 0.0,
        "{v}"
    );
    let text = env.ok(&["why", "-C", dir, "remember-me box"]);
    assert!(text.starts_with(" 1.  "), "{text}");
    assert!(text.contains("search: found by"), "{text}");
    assert!(!text.contains("0.50"), "{text}");
    // A commit's answer keeps its confidence.
    assert!(env.ok(&["why", "-C", dir, "HEAD"]).contains(" 1. 1.00"));
    let v = env.json(&["search", "--sessions", "login.txt"]);
    assert_eq!(v[0]["session_key"], key.as_str());
    assert!(
        v[0]["match_reasons"]
            .as_array()
            .unwrap()
            .contains(&json!("paths")),
        "{v}"
    );

    // Hostile targets: out of the repository, a range too large, a missing commit.
    std::fs::write(env.root.path().join("secret.txt"), "x\n").unwrap();
    for target in [
        "../secret.txt:1",
        "login.txt:1-99999999",
        "0123456789abcdef",
    ] {
        let out = env.run(&["--json", "why", "-C", dir, target]);
        assert_eq!(out.status.code(), Some(1), "{target}");
        assert!(out.stdout.is_empty(), "{target}");
        let report: Value = serde_json::from_slice(&out.stderr).unwrap();
        assert!(
            report["kind"] == "invalid" || report["kind"] == "not_found",
            "{target}: {report}"
        );
    }
    // Control sequences are never printed back.
    let out = env.run(&["why", "-C", dir, "\u{1b}]0;owned\u{7} login"]);
    assert!(out.status.success());
    assert!(!out.stdout.contains(&0x1b) && !out.stderr.contains(&0x1b));
}

// ---- links: an edit links to the commit carrying what it wrote, in the session's own time

/// `git` with the commit dated at `at` (seconds since the epoch): a scripted repository whose
/// clock disagrees with the transcript's, or history from last year.
fn git_dated(dir: &Path, at: i64, args: &[&str]) {
    let date = format!("@{at} +0000");
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .env("GIT_AUTHOR_NAME", "Test")
        .env("GIT_AUTHOR_EMAIL", "test@example.invalid")
        .env("GIT_COMMITTER_NAME", "Test")
        .env("GIT_COMMITTER_EMAIL", "test@example.invalid")
        .env("GIT_AUTHOR_DATE", &date)
        .env("GIT_COMMITTER_DATE", &date)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn now_secs() -> i64 {
    jiff::Timestamp::now().as_second()
}

const YEAR: i64 = 365 * 24 * 3600;

/// The `edit_committed` evidence of the one session skim relates to `branch`.
fn edit_evidence(env: &Env, branch: &str) -> Vec<Value> {
    let v = skim(env, &["branch", branch]);
    assert_eq!(sessions_of(&v).len(), 1, "{v}");
    v["sessions"][0]["why_related"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|w| w["evidence"] == "edit_committed")
        .cloned()
        .collect()
}

fn head_of(repo: &Path, rev: &str) -> String {
    git(repo, &["rev-parse", rev]).trim().to_owned()
}

#[test]
fn an_initial_commit_dated_after_an_edit_does_not_carry_a_session_that_wrote_other_text() {
    let env = Env::new();
    let repo = env.root.path().join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    let repo = std::fs::canonicalize(repo).unwrap();
    // The repository's clock runs ahead of the transcript's: its initial commit, which adds
    // README.md, is dated after the session's edit of README.md.
    let ahead = now_secs() + 1800;
    git(&repo, &["init", "-q", "-b", "main"]);
    std::fs::write(
        repo.join("README.md"),
        "hello\nA scripted demo repository\n",
    )
    .unwrap();
    git(&repo, &["add", "."]);
    git_dated(&repo, ahead, &["commit", "-q", "-m", "init"]);
    git(&repo, &["checkout", "-q", "-b", "feature/login"]);
    std::fs::write(repo.join("login.txt"), "login form\n").unwrap();
    git(&repo, &["add", "."]);
    git_dated(&repo, ahead + 60, &["commit", "-q", "-m", "login"]);
    git(&repo, &["checkout", "-q", "main"]);
    let wt = env.root.path().join("wt");
    git(
        &repo,
        &["worktree", "add", "-q", "-b", "docs", wt.to_str().unwrap()],
    );
    let wt = std::fs::canonicalize(wt).unwrap();

    // In the other worktree, a session only rewrites README.md.
    let mut t = Transcript::new(&env, "s-readme", &wt, "docs");
    t.user("document how to run it");
    t.edit(
        "README.md",
        "# Demo\nRun the development server with make serve\n",
    );
    t.say("Documented.");
    t.hook(&env);
    // The initial commit touched README.md within the window, but holds none of what the
    // session wrote: no branch is related through it.
    for branch in ["feature/login", "main"] {
        assert!(
            sessions_of(&skim(&env, &["branch", branch])).is_empty(),
            "{branch}"
        );
    }

    // The person commits the session's README on docs: that commit carries it, and is named.
    git(&wt, &["commit", "-q", "-am", "Document serving"]);
    t.say("Thanks for committing.");
    t.hook(&env);
    let docs = head_of(&wt, "HEAD");
    let evidence = edit_evidence(&env, "docs");
    assert_eq!(evidence.len(), 1, "{evidence:?}");
    assert_eq!(evidence[0]["commit"], docs.as_str());
    assert_eq!(evidence[0]["confidence"], 0.9);
    let reason = evidence[0]["reason"].as_str().unwrap();
    assert!(
        reason.starts_with(&format!(
            "wrote 1 line of README.md, committed in {}",
            &docs[..7]
        )),
        "{reason}"
    );
    assert!(sessions_of(&skim(&env, &["branch", "feature/login"])).is_empty());
}

#[test]
fn an_edit_with_nothing_to_compare_links_by_path_and_time_at_a_lower_confidence() {
    let env = Env::new();
    let repo = repo(env.root.path());
    git(&repo, &["checkout", "-q", "-b", "topic"]);
    std::fs::write(repo.join("lib.rs"), "fn main() {\n").unwrap();
    git(&repo, &["add", "."]);
    git_dated(&repo, now_secs() - 7200, &["commit", "-q", "-m", "start"]);
    let mut t = Transcript::new(&env, "s-brace", &repo, "topic");
    t.user("close the function");
    // Only a closing brace: too plain to tell which commit holds it.
    t.edit("lib.rs", "}\n");
    t.say("Closed it.");
    git(&repo, &["commit", "-q", "-am", "Close main"]);
    env.ok(&["sync"]);
    let commit = head_of(&repo, "HEAD");
    let evidence = edit_evidence(&env, "topic");
    assert_eq!(evidence.len(), 1, "{evidence:?}");
    assert_eq!(evidence[0]["commit"], commit.as_str());
    assert_eq!(evidence[0]["confidence"], 0.6);
    let reason = evidence[0]["reason"].as_str().unwrap();
    assert!(
        reason.starts_with(&format!("edited lib.rs, committed in {}", &commit[..7]))
            && reason.contains("by path and time only"),
        "{reason}"
    );
}

#[test]
fn a_session_from_a_year_ago_links_to_its_commit_as_well_as_today_s() {
    let env = Env::new();
    let repo = repo(env.root.path());
    let year_ago = now_secs() - YEAR;

    // Last year: a session edits on old-work, the person commits a minute later; the hook that
    // relinks it (one session, reading only its paths' history) comes after the commit.
    git(&repo, &["checkout", "-q", "-b", "old-work"]);
    let mut old = Transcript::new(&env, "s-last-year", &repo, "old-work").dated_back(YEAR);
    old.user("write the release notes");
    old.edit("notes.txt", "Release notes for the spring version\n");
    old.say("Written; please commit.");
    git(&repo, &["add", "notes.txt"]);
    git_dated(&repo, year_ago + 60, &["commit", "-q", "-m", "Notes"]);
    let old_commit = head_of(&repo, "HEAD");
    old.say("Committed, thanks.");
    old.hook(&env);

    // Today: the same on new-work, found by a sync (many sessions, shared history reads).
    git(&repo, &["checkout", "-q", "main"]);
    git(&repo, &["checkout", "-q", "-b", "new-work"]);
    let mut new = Transcript::new(&env, "s-today", &repo, "new-work");
    new.user("write the changelog");
    new.edit("changelog.txt", "Changelog for the autumn version\n");
    new.say("Written; please commit.");
    git(&repo, &["add", "changelog.txt"]);
    git(&repo, &["commit", "-q", "-m", "Changelog"]);
    let new_commit = head_of(&repo, "HEAD");
    env.ok(&["sync"]);

    for (branch, commit, session) in [
        ("old-work", &old_commit, "s-last-year"),
        ("new-work", &new_commit, "s-today"),
    ] {
        let v = skim(&env, &["branch", branch]);
        assert_eq!(sessions_of(&v), vec![key_of(&env, session)], "{branch}");
        let evidence = edit_evidence(&env, branch);
        assert_eq!(evidence.len(), 1, "{branch}: {evidence:?}");
        assert_eq!(evidence[0]["commit"], commit.as_str(), "{branch}");
        assert_eq!(evidence[0]["confidence"], 0.9, "{branch}");
    }

    // A sync that relinks both at once (as after an upgrade) gives the same links.
    let store = env.data().join("cairn.db");
    let conn = rusqlite::Connection::open(&store).unwrap();
    conn.execute("DELETE FROM association_state", []).unwrap();
    conn.execute(
        "INSERT INTO link_pending (session_id) SELECT id FROM sessions",
        [],
    )
    .unwrap();
    drop(conn);
    env.ok(&["sync"]);
    for (branch, commit) in [("old-work", &old_commit), ("new-work", &new_commit)] {
        let evidence = edit_evidence(&env, branch);
        assert_eq!(evidence.len(), 1, "{branch}: {evidence:?}");
        assert_eq!(evidence[0]["commit"], commit.as_str(), "{branch}");
    }
}

#[test]
fn an_imported_trajectory_from_last_year_links_to_its_commit() {
    let env = Env::new();
    let repo = repo(env.root.path());
    git(&repo, &["checkout", "-q", "-b", "imported-work"]);
    let year_ago = now_secs() - YEAR;
    let at = |secs: i64| {
        jiff::Timestamp::from_second(year_ago + secs)
            .unwrap()
            .to_string()
    };
    let file = repo.join("parser.rs");
    let text = "fn parse_header(line: &str) -> Option<Header> {\n";
    std::fs::write(&file, text).unwrap();
    git(&repo, &["add", "parser.rs"]);
    git_dated(
        &repo,
        year_ago + 120,
        &["commit", "-q", "-m", "Parse headers"],
    );
    let commit = head_of(&repo, "HEAD");
    let trajectory = json!({
        "schema_version": "ATIF-v1.4",
        "session_id": "teammate-last-year",
        "agent": {"name": "claude-code", "version": "2.0.0"},
        "extra": {"cairn": {"cwd": repo, "started_at": at(0)}},
        "steps": [
            {"step_id": 1, "source": "user", "message": "parse the headers", "timestamp": at(0)},
            {"step_id": 2, "source": "agent", "message": "", "timestamp": at(30),
             "tool_calls": [{"tool_call_id": "call-1", "function_name": "Write",
                             "arguments": {"file_path": file, "content": text}}],
             "extra": {"cairn": {"kind": "tool_call", "tool_kind": "file_edit",
                                 "file_paths": [file]}}},
            {"step_id": 3, "source": "agent", "message": "Done.", "timestamp": at(60)}
        ]
    });
    let path = env.root.path().join("teammate.atif.json");
    std::fs::write(&path, trajectory.to_string()).unwrap();
    let imported = env.json(&["import", path.to_str().unwrap()]);
    let key = imported["session_key"].as_str().unwrap();
    let v = skim(&env, &["branch", "imported-work"]);
    assert_eq!(sessions_of(&v), vec![key.to_owned()]);
    let evidence = edit_evidence(&env, "imported-work");
    assert_eq!(evidence.len(), 1, "{evidence:?}");
    assert_eq!(evidence[0]["commit"], commit.as_str());
    assert_eq!(evidence[0]["confidence"], 0.9);
}

// ---- why3: `cairn why --write-notes`

/// `cairn why --write-notes` at the front door: nothing without the flag, a dry run that
/// prints the note and writes nothing, the attribution of a commit with a binary file (the
/// binary file never attributed), no transcript text by default, and with --with-messages the
/// session's messages redacted (no secret, no absolute path, no tool output).
#[test]
fn why_write_notes_records_attribution_and_redacted_messages_only_when_asked() {
    let env = Env::new();
    let repo = repo(env.root.path());
    git(&repo, &["checkout", "-q", "-b", "feature"]);
    let secret = "ghp_EXAMPLEq7Xr9Kd2Lm4Np6Qs8Tv0Wy2Za4Bc6";
    let mut t = Transcript::new(&env, "s-notes", &repo, "feature");
    t.user(&format!(
        "write {} with token {secret}",
        repo.join("login.txt").display()
    ));
    t.edit(
        "login.txt",
        "login form with a remember-me box\nsubmit button\n",
    );
    std::fs::write(repo.join("logo.png"), b"\x89PNG\r\n\x1a\n\0\0\0binary\0").unwrap();
    t.run_git(&["add", "login.txt", "logo.png"]);
    t.run_git(&["commit", "-m", "Add login page"]);
    t.say("Committed the login page.");
    t.hook(&env);
    let key = key_of(&env, "s-notes");
    let dir = repo.to_str().unwrap();
    let notes = |repo: &Path| git(repo, &["notes", "--ref=refs/notes/ai", "list"]);

    // `why` alone never writes.
    env.ok(&["why", "-C", dir, "HEAD"]);
    assert_eq!(notes(&repo), "");
    // A dry run prints the note and writes nothing.
    let text = env.ok(&["why", "-C", dir, "--write-notes", "--dry-run", "main..HEAD"]);
    assert!(text.contains("would write: 2 of 2 added lines"), "{text}");
    // The summary names the session's agent, not its internal key (`--keys` for that).
    let summary = text.lines().find(|l| l.contains("would write:")).unwrap();
    assert!(
        summary.contains("by claude session (2 lines)") && !summary.contains("sha256-"),
        "{summary}"
    );
    assert!(text.contains("    | login.txt\n"), "{text}");
    assert!(text.contains("1 note would be written"), "{text}");
    assert_eq!(notes(&repo), "");
    // --with-messages and --dry-run only go with --write-notes.
    let out = env.run(&["why", "-C", dir, "--with-messages", "HEAD"]);
    assert_eq!(out.status.code(), Some(2));

    let v = env.json(&["why", "-C", dir, "--write-notes", "main..HEAD"]);
    let c = &v["commits"][0];
    assert_eq!(c["action"], "written");
    assert_eq!(c["binary_files"], 1);
    assert_eq!(c["sessions"][0]["session_key"], key.as_str());
    let head = git(&repo, &["rev-parse", "HEAD"]);
    let note = git(
        &repo,
        &["notes", "--ref=refs/notes/ai", "show", head.trim()],
    );
    assert!(note.starts_with("login.txt\n  "), "{note}");
    assert!(note.contains(" 1-2\n---\n"), "{note}");
    assert!(!note.contains("logo.png"), "{note}");
    assert!(note.contains("\"messages\": []"), "{note}");
    assert!(
        !note.contains(secret) && !note.contains("remember-me"),
        "{note}"
    );
    // `why` reads it back.
    let v = env.json(&["why", "-C", dir, "HEAD"]);
    let kinds: Vec<&str> = v["sessions"][0]["evidence"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["kind"].as_str().unwrap())
        .collect();
    assert!(kinds.contains(&"ai_note"), "{kinds:?}");

    // With messages: the prompt, the answer and the calls, redacted for leaving; Cairn's own
    // note is replaced.
    let v = env.json(&["why", "-C", dir, "--write-notes", "--with-messages", "HEAD"]);
    assert_eq!(v["commits"][0]["action"], "replaced");
    let note = git(
        &repo,
        &["notes", "--ref=refs/notes/ai", "show", head.trim()],
    );
    let meta: Value = serde_json::from_str(note.split_once("\n---\n").unwrap().1).unwrap();
    let prompts = meta["prompts"].as_object().unwrap();
    let messages = prompts.values().next().unwrap()["messages"]
        .as_array()
        .unwrap();
    let types: Vec<&str> = messages
        .iter()
        .map(|m| m["type"].as_str().unwrap())
        .collect();
    assert_eq!(types.first(), Some(&"user"), "{types:?}");
    assert!(
        types.contains(&"tool_use") && types.contains(&"assistant"),
        "{types:?}"
    );
    assert!(
        messages
            .iter()
            .any(|m| m["name"] == "Edit" && m["input"]["new_string"].is_string()),
        "{messages:?}"
    );
    assert!(!note.contains(secret), "a secret left: {note}");
    assert!(!note.contains(dir), "an absolute path left: {note}");
    assert!(
        !note.contains("The file has been updated."),
        "a tool's output left: {note}"
    );
    assert!(messages[0]["text"].as_str().unwrap().contains("login.txt"));
}

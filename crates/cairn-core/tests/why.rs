//! `why`: from a commit, a line or a description back to the session and turn behind it.
//!
//! The session is a real one (`tests/fixtures/claude/ae4a77f8-….jsonl`: 67 edits and 6 writes,
//! six commits on `spotter-4te`), moved into a repository built here: its working directory
//! becomes the test's repository and its day becomes yesterday (association reads 90 days of
//! history). Its edits are replayed in order for real, failed ones skipped, and committed where
//! the session committed, with the session's subjects and times; files it edited but did not
//! create start in a base commit holding what its edits replaced.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use cairn_core::Cairn;
use cairn_core::archive::Agent;
use cairn_core::views::why::{EDITED_ELSEWHERE, WhyAnswer, WhyKind, WhyQuery};
use serde_json::Value;

const FIXTURE: &str = "claude/ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl";
/// The fixture session's own id (Claude Code's session UUID).
const SESSION_ID: &str = "ae4a77f8-aedd-4bc1-888f-c94edc91af04";
const ORIGINAL_CWD: &str = "/home/USER/projects/spotter-worktrees/spotter-4te";
const ORIGINAL_DAY: &str = "2026-02-12T";
/// A line the session's Write of `liveview_otel.ex` created.
const WRITTEN: &str = "defmodule SpotterWeb.Telemetry.LiveviewOtel do";

fn git_at(dir: &Path, args: &[&str], when: Option<&str>) -> String {
    let mut cmd = Command::new("git");
    cmd.arg("-C")
        .arg(dir)
        .args(args)
        .env("GIT_AUTHOR_NAME", "T")
        .env("GIT_AUTHOR_EMAIL", "t@example.invalid")
        .env("GIT_COMMITTER_NAME", "T")
        .env("GIT_COMMITTER_EMAIL", "t@example.invalid");
    if let Some(w) = when {
        cmd.env("GIT_AUTHOR_DATE", w).env("GIT_COMMITTER_DATE", w);
    }
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

/// One step of the replay: an edit that succeeded, or a commit the session made.
enum Step {
    Write {
        path: String,
        content: String,
    },
    Edit {
        path: String,
        old: String,
        new: String,
        all: bool,
    },
    Commit {
        subject: String,
        when: String,
    },
}

/// The session's successful edits and its commits, in order, from the moved transcript.
fn steps(transcript: &str) -> Vec<Step> {
    let lines: Vec<Value> = transcript
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    let mut failed = std::collections::HashSet::new();
    for v in &lines {
        for c in v
            .pointer("/message/content")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if c["type"] == "tool_result" && c["is_error"] == true {
                failed.insert(c["tool_use_id"].as_str().unwrap_or("").to_owned());
            }
        }
    }
    let commit_line = regex::Regex::new(r"^\[spotter-4te [0-9a-f]{7}\] (.+)$").unwrap();
    let mut steps = Vec::new();
    for v in &lines {
        for c in v
            .pointer("/message/content")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let s = |k: &str| c["input"][k].as_str().unwrap_or("").to_owned();
            match (c["type"].as_str(), c["name"].as_str()) {
                (Some("tool_use"), Some("Write"))
                    if !failed.contains(c["id"].as_str().unwrap()) =>
                {
                    steps.push(Step::Write {
                        path: s("file_path"),
                        content: s("content"),
                    });
                }
                (Some("tool_use"), Some("Edit")) if !failed.contains(c["id"].as_str().unwrap()) => {
                    steps.push(Step::Edit {
                        path: s("file_path"),
                        old: s("old_string"),
                        new: s("new_string"),
                        all: c["input"]["replace_all"] == true,
                    });
                }
                (Some("tool_result"), _) => {
                    let text = match &c["content"] {
                        Value::String(t) => t.clone(),
                        other => other.to_string(),
                    };
                    if let Some(m) = text.lines().next().and_then(|l| commit_line.captures(l)) {
                        steps.push(Step::Commit {
                            subject: m[1].to_owned(),
                            when: v["timestamp"].as_str().unwrap().to_owned(),
                        });
                    }
                }
                _ => {}
            }
        }
    }
    steps
}

struct World {
    _tmp: tempfile::TempDir,
    repo: PathBuf,
    cairn: Cairn,
    session_key: String,
    /// What the sessions list names the session by (it has no title).
    first_prompt: Option<String>,
    /// The session's commits by subject.
    commits: BTreeMap<String, String>,
    /// The day the replayed session ran (`YYYY-MM-DDT`: yesterday).
    day: String,
}

/// The repository, the replayed session and the archive that captured it.
fn world() -> World {
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("spotter-4te");
    std::fs::create_dir_all(&repo).unwrap();
    let repo = std::fs::canonicalize(&repo).unwrap();
    let yesterday = jiff::Timestamp::now() - jiff::SignedDuration::from_hours(24);
    let day = yesterday.strftime("%Y-%m-%dT").to_string();
    let original = std::fs::read_to_string(support::fixtures().join(FIXTURE)).unwrap();
    let moved = original
        .replace(ORIGINAL_CWD, repo.to_str().unwrap())
        .replace(ORIGINAL_DAY, &day);
    let steps = steps(&moved);

    // What the files held before the session: the text its edits replaced, where the session
    // did not write it first.
    let mut now: BTreeMap<String, String> = BTreeMap::new();
    let mut base: BTreeMap<String, String> = BTreeMap::new();
    for step in &steps {
        match step {
            Step::Write { path, content } => {
                now.insert(path.clone(), content.clone());
            }
            Step::Edit {
                path,
                old,
                new,
                all,
            } => {
                let text = now.entry(path.clone()).or_default();
                if !text.contains(old.as_str()) {
                    let b = base.entry(path.clone()).or_default();
                    b.push_str(old);
                    b.push('\n');
                    text.push_str(old);
                    text.push('\n');
                }
                *text = if *all {
                    text.replace(old.as_str(), new)
                } else {
                    text.replacen(old.as_str(), new, 1)
                };
            }
            Step::Commit { .. } => {}
        }
    }
    git_at(&repo, &["init", "-q", "-b", "spotter-4te"], None);
    std::fs::write(repo.join("README.md"), "spotter\n").unwrap();
    for (path, text) in &base {
        let p = Path::new(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    let before = format!("{day}10:00:00Z");
    git_at(&repo, &["add", "-A"], None);
    git_at(&repo, &["commit", "-q", "-m", "base"], Some(&before));

    let mut commits = BTreeMap::new();
    for step in &steps {
        match step {
            Step::Write { path, content } => {
                std::fs::create_dir_all(Path::new(path).parent().unwrap()).unwrap();
                std::fs::write(path, content).unwrap();
            }
            Step::Edit {
                path,
                old,
                new,
                all,
            } => {
                let mut text = std::fs::read_to_string(path).unwrap_or_default();
                if !text.contains(old.as_str()) {
                    // The base holds every replaced text, but an earlier edit may have changed
                    // it: the replaced text is put back at the end, as in the base.
                    text.push_str(old);
                    text.push('\n');
                }
                let text = if *all {
                    text.replace(old.as_str(), new)
                } else {
                    text.replacen(old.as_str(), new, 1)
                };
                std::fs::write(path, text).unwrap();
            }
            Step::Commit { subject, when } => {
                git_at(&repo, &["add", "-A"], None);
                git_at(
                    &repo,
                    &["commit", "-q", "--allow-empty", "-m", subject],
                    Some(when),
                );
                commits.insert(subject.clone(), git_at(&repo, &["rev-parse", "HEAD"], None));
            }
        }
    }
    assert_eq!(commits.len(), 6, "the session's six commits");

    let transcripts = tmp.path().join("claude/-spotter");
    std::fs::create_dir_all(&transcripts).unwrap();
    let file = transcripts.join("ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl");
    std::fs::write(&file, &moved).unwrap();
    let cairn = Cairn::open(tmp.path().join("data")).unwrap();
    support::capture(&cairn, &[support::main_file(Agent::Claude, &file)]);
    let listed = cairn
        .sessions(&Default::default())
        .unwrap()
        .into_iter()
        .next()
        .unwrap();
    assert_eq!(
        listed.title, None,
        "the fixture session has no title of its own"
    );
    assert!(listed.first_prompt.is_some());
    World {
        _tmp: tmp,
        repo,
        cairn,
        session_key: listed.session_key,
        first_prompt: listed.first_prompt,
        commits,
        day,
    }
}

fn why(w: &World, target: &str) -> WhyAnswer {
    ask(w, target).unwrap_or_else(|e| panic!("why {target}: {e}"))
}

/// `why` on `target` in the world's repository, refused or answered.
fn ask(w: &World, target: &str) -> cairn_core::Result<WhyAnswer> {
    w.cairn.why(
        &w.repo,
        &WhyQuery {
            target: target.into(),
            ..WhyQuery::default()
        },
    )
}

/// The line number of the first line of `path` equal to `text`.
fn line_of(w: &World, path: &str, text: &str) -> u32 {
    let body = std::fs::read_to_string(w.repo.join(path)).unwrap();
    let n = body
        .lines()
        .position(|l| l == text)
        .unwrap_or_else(|| panic!("{text:?} in {path}"));
    u32::try_from(n + 1).unwrap()
}

/// The tool name and input of the record an answer names as evidence.
fn record(w: &World, ordinal: u32) -> (String, String) {
    let r = w.cairn.records(&w.session_key, ordinal, ordinal).unwrap();
    let r = r.first().expect("the evidence record exists");
    (
        r.tool_name.clone().unwrap_or_default(),
        r.tool_input.clone().unwrap_or_default(),
    )
}

#[test]
fn why_answers_from_commits_lines_and_descriptions() {
    let w = world();
    assert!(w.day.ends_with('T'));

    // Every commit of the session: the session first, with the turns whose edits wrote it.
    for (subject, id) in &w.commits {
        let a = why(&w, id);
        assert_eq!(a.kind, WhyKind::Commit);
        assert_eq!(a.commits[0].subject, *subject);
        let top = &a.sessions[0];
        assert_eq!(top.session_key, w.session_key, "{subject}");
        // Named as the sessions list names it: the session has no title, so its first request.
        assert_eq!(top.title, w.first_prompt, "{subject}");
        assert!(top.confidence >= 0.9, "{subject}: {top:?}");
        assert!(
            top.evidence.iter().any(|e| e.kind == "wrote_lines"),
            "{subject}: {:?}",
            top.evidence
        );
        let wrote = top
            .turns
            .iter()
            .find(|t| t.evidence == "wrote_lines")
            .unwrap();
        let (tool, _) = record(&w, wrote.ordinal);
        assert!(tool == "Edit" || tool == "Write", "{tool}");
    }
    // An abbreviated id and a revision name are commits too.
    let last =
        &w.commits["feat: add OTEL regression tests and tracing documentation (spotter-4te)"];
    assert_eq!(why(&w, &last[..9]).commits[0].id, *last);
    assert_eq!(why(&w, "HEAD").commits[0].id, *last);
    // A branch named with a slash, which is no file here, is the branch.
    git_at(&w.repo, &["branch", "feature/otel"], None);
    let branch = why(&w, "feature/otel");
    assert_eq!(branch.kind, WhyKind::Commit);
    assert_eq!(branch.commits[0].id, *last);
    // A path that is neither is still refused as a file.
    let gone = ask(&w, "lib/no_such_file.ex").unwrap_err().to_string();
    assert!(gone.contains("no_such_file"), "{gone}");

    // A line a Write created: the Write is named, with the line.
    let path = "lib/spotter_web/telemetry/liveview_otel.ex";
    let n = line_of(&w, path, WRITTEN);
    let a = why(&w, &format!("{path}:{n}"));
    assert_eq!(a.kind, WhyKind::Lines);
    let turn = &a.sessions[0].turns[0];
    assert_eq!(turn.evidence, "wrote_line");
    assert_eq!(turn.lines, vec![n]);
    let (tool, input) = record(&w, turn.ordinal);
    assert_eq!(tool, "Write");
    assert!(input.contains(WRITTEN));

    // A line an Edit wrote (the hooks controller test, edited four times): the Edit whose new
    // text holds it.
    let path = "test/spotter_web/controllers/hooks_controller_test.exs";
    let body = std::fs::read_to_string(w.repo.join(path)).unwrap();
    let (n, text) = body
        .lines()
        .enumerate()
        .find(|(_, l)| l.contains("traceparent"))
        .map(|(i, l)| (u32::try_from(i + 1).unwrap(), l.to_owned()))
        .unwrap();
    let a = why(&w, &format!("./{path}:{n}-{n}"));
    let turn = &a.sessions[0].turns[0];
    assert_eq!(turn.evidence, "wrote_line", "{a:?}");
    let (tool, input) = record(&w, turn.ordinal);
    assert_eq!(tool, "Edit");
    let input: Value = serde_json::from_str(&input).unwrap();
    assert!(
        input["new_string"].as_str().unwrap().contains(text.trim()),
        "the Edit's new text holds {text:?}"
    );

    // A Git AI authorship log (refs/notes/ai) naming the session by its agent's id is read
    // as evidence, for the commit and for a line it attributes; a note that is not one, or
    // names no session here, adds nothing.
    let traced =
        &w.commits["feat: trace LiveView interactions and TerminalChannel lifecycle (spotter-4te)"];
    let n = line_of(&w, "lib/spotter_web/telemetry/liveview_otel.ex", WRITTEN);
    let note = format!(
        "lib/spotter_web/telemetry/liveview_otel.ex\n  0123456789abcdef 1-{n}\n  fedcba9876543210 {m}\n---\n{{\"schema_version\":\"authorship/3.0.0\",\"base_commit_sha\":\"{traced}\",\"prompts\":{{\"0123456789abcdef\":{{\"agent_id\":{{\"tool\":\"claude\",\"id\":\"ae4a77f8-aedd-4bc1-888f-c94edc91af04\",\"model\":\"claude-opus-4-6\"}},\"messages\":[],\"total_additions\":{n},\"total_deletions\":0,\"accepted_lines\":{n},\"overriden_lines\":0}},\"fedcba9876543210\":{{\"agent_id\":{{\"tool\":\"cursor\",\"id\":\"not-in-this-archive\"}},\"messages\":[]}}}}}}\n",
        m = n + 1
    );
    git_at(
        &w.repo,
        &["notes", "--ref=refs/notes/ai", "add", "-m", &note, traced],
        None,
    );
    let noted = |a: &WhyAnswer| {
        a.sessions
            .iter()
            .filter(|s| s.evidence.iter().any(|e| e.kind == "ai_note"))
            .map(|s| s.session_key.clone())
            .collect::<Vec<_>>()
    };
    assert_eq!(noted(&why(&w, traced)), vec![w.session_key.clone()]);
    let path = "lib/spotter_web/telemetry/liveview_otel.ex";
    assert_eq!(
        noted(&why(&w, &format!("{path}:{n}"))),
        vec![w.session_key.clone()]
    );
    assert!(
        noted(&why(&w, &format!("{path}:{}", n + 1))).is_empty(),
        "line {} is the other session's",
        n + 1
    );
    let other =
        &w.commits["feat: add OTEL regression tests and tracing documentation (spotter-4te)"];
    for bad in [
        "not an authorship log",
        "x\n---\n{\"schema_version\":\"authorship/9.0.0\",\"prompts\":{}}",
        "---\n{broken",
    ] {
        git_at(
            &w.repo,
            &[
                "notes",
                "--ref=refs/notes/ai",
                "add",
                "-f",
                "-m",
                bad,
                other,
            ],
            None,
        );
        assert!(noted(&why(&w, other)).is_empty(), "{bad}");
    }

    // A line a person changed after the agent: blame names the person's commit; the session is
    // still there, by the path it edited, with a lower confidence than a line it wrote.
    let path = "lib/spotter_web/telemetry/liveview_otel.ex";
    let body = std::fs::read_to_string(w.repo.join(path)).unwrap();
    let changed = body.replacen(
        WRITTEN,
        "defmodule SpotterWeb.Telemetry.LiveViewOtel do # renamed",
        1,
    );
    std::fs::write(w.repo.join(path), changed).unwrap();
    let later = jiff::Timestamp::now()
        .strftime("%Y-%m-%dT%H:%M:%SZ")
        .to_string();
    git_at(
        &w.repo,
        &["commit", "-q", "-am", "rename the module"],
        Some(&later),
    );
    let person = git_at(&w.repo, &["rev-parse", "HEAD"], None);
    let n = line_of(
        &w,
        path,
        "defmodule SpotterWeb.Telemetry.LiveViewOtel do # renamed",
    );
    let a = why(&w, &format!("{path}:{n}"));
    assert_eq!(a.commits[0].id, person);
    let s = &a.sessions[0];
    assert_eq!(s.session_key, w.session_key);
    assert_eq!(s.turns[0].evidence, "edited_path");
    assert!(s.confidence < 0.9, "{s:?}");
    let (tool, _) = record(&w, s.turns[0].ordinal);
    assert!(tool == "Edit" || tool == "Write");
    // Uncommitted text: no commit; the session that edited the file, by the path.
    let mut body = std::fs::read_to_string(w.repo.join(path)).unwrap();
    body.push_str("# a note nobody committed\n");
    std::fs::write(w.repo.join(path), &body).unwrap();
    let n = u32::try_from(body.lines().count()).unwrap();
    let a = why(&w, &format!("{path}:{n}"));
    assert_eq!(a.uncommitted_lines, vec![n]);
    assert!(a.commits.is_empty());
    assert_eq!(a.sessions[0].turns[0].evidence, "edited_path");
    git_at(&w.repo, &["checkout", "--", path], None);

    // A squashed commit (the whole branch as one commit on another branch, made after the
    // capture, so no link names it): found by the lines the session's edits wrote.
    let base = git_at(&w.repo, &["rev-list", "--max-parents=0", "HEAD"], None);
    git_at(&w.repo, &["checkout", "-q", "-b", "squashed", &base], None);
    git_at(&w.repo, &["merge", "-q", "--squash", "spotter-4te"], None);
    git_at(&w.repo, &["commit", "-q", "-m", "squash"], Some(&later));
    let squash = git_at(&w.repo, &["rev-parse", "HEAD"], None);
    let a = why(&w, &squash);
    let s = &a.sessions[0];
    assert_eq!(s.session_key, w.session_key);
    assert!(
        s.evidence.iter().all(|e| e.kind == "wrote_lines"),
        "{:?}",
        s.evidence
    );
    assert!(s.turns.len() > 10, "many turns wrote it: {}", s.turns.len());
    git_at(&w.repo, &["checkout", "-q", "spotter-4te"], None);

    // A description: the session-level search ranks the session first.
    let a = why(
        &w,
        "propagate traceparent headers in the plugin hook scripts",
    );
    assert_eq!(a.kind, WhyKind::Description);
    assert_eq!(a.sessions[0].session_key, w.session_key);
    assert_eq!(a.sessions[0].title, w.first_prompt);
    assert!(a.sessions[0].confidence <= 0.5);
    // The shown turns carry their snippet (filled after ranking, for the shown hits only).
    let words = [
        "propagate",
        "traceparent",
        "headers",
        "plugin",
        "hook",
        "scripts",
    ];
    let search_turns: Vec<_> = a.sessions[0]
        .turns
        .iter()
        .filter(|t| t.evidence == "search")
        .collect();
    assert!(!search_turns.is_empty(), "{:?}", a.sessions[0].turns);
    for t in search_turns {
        let detail = t.detail.to_lowercase();
        assert!(
            words.iter().any(|w| detail.contains(w)),
            "a snippet shows a matched word: {:?}",
            t.detail
        );
    }
}

/// A file traced on a branch that holds none of the session's edits (the "Why?" of a session's
/// edited file, with another branch checked out): the session is named at the lowest
/// confidence by its last edit of the file, never as having written it; a file no session
/// touched still has no answer.
#[test]
fn a_version_no_session_wrote_names_the_sessions_that_edited_the_file_elsewhere() {
    let w = world();
    let base = git_at(&w.repo, &["rev-list", "--max-parents=0", "HEAD"], None);
    git_at(&w.repo, &["checkout", "-q", "-b", "before", &base], None);
    std::fs::write(w.repo.join("NOTES.txt"), "a person's notes\n").unwrap();
    git_at(&w.repo, &["add", "NOTES.txt"], None);
    git_at(&w.repo, &["commit", "-q", "-m", "notes"], None);

    let files = git_at(&w.repo, &["ls-tree", "-r", "--name-only", "HEAD"], None);
    let mut named = 0;
    for path in files
        .lines()
        .filter(|f| !["README.md", "NOTES.txt"].contains(f))
    {
        let a = why(&w, path);
        assert_eq!(a.kind, WhyKind::Lines);
        assert_eq!(a.sessions.len(), 1, "{path}: {:?}", a.sessions);
        let s = &a.sessions[0];
        assert_eq!(s.session_key, w.session_key);
        assert!(
            s.evidence
                .iter()
                .all(|e| e.kind == "edited_elsewhere" && e.confidence == EDITED_ELSEWHERE),
            "{path}: {:?}",
            s.evidence
        );
        assert_eq!(s.confidence, EDITED_ELSEWHERE);
        let [turn] = s.turns.as_slice() else {
            panic!("{path}: one turn, the last edit: {:?}", s.turns)
        };
        assert!(turn.lines.is_empty(), "no line is given to it");
        let (_, input) = record(&w, turn.ordinal);
        assert!(
            input.contains(path),
            "{path}: the evidence edits it: {input}"
        );
        named += 1;
    }
    assert!(named > 0, "the base holds files the session edited");
    assert!(why(&w, "NOTES.txt").sessions.is_empty());
}

#[test]
fn hostile_targets_are_refused_before_git_sees_them() {
    let w = world();
    let ask = |target: &str| ask(&w, target);
    let kind = |target: &str| ask(target).unwrap_err().kind();
    use cairn_core::ErrorKind;
    // Paths out of the repository, by `..`, absolute or through a symlink.
    assert_eq!(
        kind("../../../../../../../../etc/passwd:1"),
        ErrorKind::Invalid
    );
    let outside = w.repo.parent().unwrap().join("outside.txt");
    std::fs::write(&outside, "secret\n").unwrap();
    assert_eq!(kind("../outside.txt:1"), ErrorKind::Invalid);
    assert_eq!(
        kind(&format!("{}:1", outside.display())),
        ErrorKind::Invalid
    );
    std::os::unix::fs::symlink(&outside, w.repo.join("link.txt")).unwrap();
    assert_eq!(kind("link.txt:1"), ErrorKind::Invalid);
    assert_eq!(kind(".git/config:1"), ErrorKind::Invalid);
    // Ranges: zero, backwards, huge, past the end of the file.
    for bad in [
        "README.md:0",
        "README.md:5-2",
        "README.md:1-4000000000",
        "README.md:99999999999",
    ] {
        assert_eq!(kind(bad), ErrorKind::Invalid, "{bad}");
    }
    // A line past the end says how many the file has, not git's "fatal: …"; a range that runs
    // past it is the lines it has; a number past any file's says so.
    let past = ask("README.md:4000-4001").unwrap_err().to_string();
    assert!(
        past.contains("README.md has no line 4000 (it has"),
        "{past}"
    );
    assert!(!past.contains("fatal"), "{past}");
    let has = std::fs::read_to_string(w.repo.join("README.md"))
        .unwrap()
        .lines()
        .count();
    let runs_past = ask(&format!("README.md:1-{}", has + 50)).unwrap();
    assert_eq!(runs_past.kind, WhyKind::Lines);
    let huge = ask("README.md:99999999999").unwrap_err().to_string();
    assert!(huge.contains("past the end of any file"), "{huge}");
    // Options and control sequences never reach git as options; a description is cleaned.
    assert_eq!(kind("--output=/tmp/x"), ErrorKind::NotFound);
    assert_eq!(ask("--help").unwrap().kind, WhyKind::Description);
    assert_eq!(ask("-p").unwrap().kind, WhyKind::Description);
    let a = ask("\u{1b}[31mHEAD\u{7}").unwrap();
    assert_eq!(a.kind, WhyKind::Description);
    assert!(
        !a.query.contains('\u{1b}') && !a.query.contains('\u{7}'),
        "{:?}",
        a.query
    );
    assert_eq!(kind("README.md\u{1b}[2J:1"), ErrorKind::Invalid);
    // A commit that does not exist, by id or by a revision written with steps.
    assert_eq!(kind("0123456789abcdef"), ErrorKind::NotFound);
    assert_eq!(kind("HEAD~999"), ErrorKind::NotFound);
    assert_eq!(kind("no-such-branch^"), ErrorKind::NotFound);
    // Outside any repository, a commit or a path cannot be traced; a description still is.
    let plain = tempfile::tempdir().unwrap();
    let elsewhere = |target: &str| {
        w.cairn.why(
            plain.path(),
            &WhyQuery {
                target: target.into(),
                ..WhyQuery::default()
            },
        )
    };
    assert_eq!(
        elsewhere("0123456789abcdef").unwrap_err().kind(),
        ErrorKind::Invalid
    );
    for target in ["src/a.rs:3", "HEAD", "HEAD~2", "main^"] {
        assert_eq!(
            elsewhere(target).unwrap_err().kind(),
            ErrorKind::Invalid,
            "{target}"
        );
    }
    assert_eq!(
        elsewhere("trace context").unwrap().kind,
        WhyKind::Description
    );
}

// ---- why3: --write-notes

/// The notes of `base..HEAD`, with each commit id written as its subject (the replayed commits
/// are dated yesterday, so their ids change every day).
fn normalised(w: &World, text: &str) -> String {
    let mut out = text.to_owned();
    for (subject, id) in &w.commits {
        out = out.replace(id.as_str(), &format!("<{subject}>"));
    }
    out
}

fn notes_ref_commits(w: &World) -> String {
    git_at(&w.repo, &["rev-list", "--count", "refs/notes/ai"], None)
}

/// The spotter session's six commits get Git AI authorship notes that name its lines (the
/// golden file shows them whole), which `why` then reads back as `ai_note` evidence; a dry run
/// writes nothing, a second run changes nothing, another tool's note is never replaced and
/// Cairn's own is restored when it differs.
#[test]
fn notes_written_for_a_range_are_read_back_as_evidence() {
    use cairn_core::views::why::notes::NoteAction;
    let w = world();
    let base = git_at(&w.repo, &["rev-list", "--max-parents=0", "HEAD"], None);
    let range = format!("{base}..HEAD");

    let dry = w.cairn.write_notes(&w.repo, &range, false, true).unwrap();
    assert_eq!(dry.commits.len(), 6);
    assert!(
        git_at(&w.repo, &["notes", "--ref=refs/notes/ai", "list"], None).is_empty(),
        "a dry run writes nothing"
    );
    let written = w.cairn.write_notes(&w.repo, &range, false, false).unwrap();
    let mut golden = String::new();
    for (d, c) in dry.commits.iter().zip(&written.commits) {
        assert_eq!(c.action, NoteAction::Written, "{c:?}");
        assert_eq!(d.action, NoteAction::Written);
        assert_eq!(c.sessions.len(), 1);
        assert_eq!(c.sessions[0].session_key, w.session_key);
        assert!(c.attributed > 0 && c.attributed <= c.added, "{c:?}");
        let note = git_at(
            &w.repo,
            &["notes", "--ref=refs/notes/ai", "show", &c.commit],
            None,
        );
        // What the dry run showed is what was written, byte for byte.
        assert_eq!(d.note.as_deref().map(str::trim_end), Some(note.as_str()));
        // Attribution only: no transcript text leaves by default.
        assert!(note.contains("\"messages\": []"), "{note}");
        // The prompt record names the session as Claude Code does (its session UUID, hashed
        // by the standard's rule), and carries Cairn's key beside it.
        let meta: Value = serde_json::from_str(note.split_once("---\n").unwrap().1).unwrap();
        let prompts = meta["prompts"].as_object().unwrap();
        assert_eq!(prompts.len(), 1, "{note}");
        let (hash, record) = prompts.iter().next().unwrap();
        assert_eq!(record["agent_id"]["id"], SESSION_ID, "{note}");
        assert_eq!(
            hash,
            &cairn_core::git::notes::session_hash("claude", SESSION_ID)
        );
        assert_eq!(
            record["custom_attributes"]["session_keys"],
            w.session_key.as_str()
        );
        golden.push_str(&format!("== {}\n{note}\n", normalised(&w, &c.subject)));
    }
    insta::assert_snapshot!("why_notes_spotter", normalised(&w, &golden));

    // Read back: each commit, and a line the session's Write created, name the session by note.
    let noted = |a: &WhyAnswer| {
        a.sessions
            .iter()
            .filter(|s| s.evidence.iter().any(|e| e.kind == "ai_note"))
            .map(|s| s.session_key.clone())
            .collect::<Vec<_>>()
    };
    for id in w.commits.values() {
        assert_eq!(noted(&why(&w, id)), vec![w.session_key.clone()], "{id}");
    }
    let path = "lib/spotter_web/telemetry/liveview_otel.ex";
    let n = line_of(&w, path, WRITTEN);
    assert_eq!(
        noted(&why(&w, &format!("{path}:{n}"))),
        vec![w.session_key.clone()]
    );

    // A note Cairn wrote before it wrote agents' ids (its session key as the id, hashed with
    // it, no keys attribute) still names the session, and a new run replaces it.
    let first = &written.commits[0].commit;
    let current = git_at(
        &w.repo,
        &["notes", "--ref=refs/notes/ai", "show", first],
        None,
    );
    let new_hash = cairn_core::git::notes::session_hash("claude", SESSION_ID);
    let old_hash = cairn_core::git::notes::session_hash("claude", &w.session_key);
    let old_scheme = current
        .replace(&new_hash, &old_hash)
        .replace(SESSION_ID, &w.session_key)
        .replace(
            &format!(",\n        \"session_keys\": \"{}\"", w.session_key),
            "",
        );
    assert!(
        !old_scheme.contains(SESSION_ID) && !old_scheme.contains("session_keys"),
        "{old_scheme}"
    );
    git_at(
        &w.repo,
        &[
            "notes",
            "--ref=refs/notes/ai",
            "add",
            "-f",
            "-m",
            &old_scheme,
            first,
        ],
        None,
    );
    assert_eq!(noted(&why(&w, first)), vec![w.session_key.clone()]);
    let upgraded = w.cairn.write_notes(&w.repo, &range, false, false).unwrap();
    assert_eq!(upgraded.commits[0].action, NoteAction::Replaced);
    assert_eq!(
        git_at(
            &w.repo,
            &["notes", "--ref=refs/notes/ai", "show", first],
            None
        ),
        current
    );

    // Again: nothing changes, not even the notes ref.
    let before = notes_ref_commits(&w);
    let again = w.cairn.write_notes(&w.repo, &range, false, false).unwrap();
    assert!(
        again
            .commits
            .iter()
            .all(|c| c.action == NoteAction::Unchanged)
    );
    assert_eq!(notes_ref_commits(&w), before);

    // Another tool's note on one commit is left as it is; Cairn's own, changed, is restored.
    let (foreign, own) = (&written.commits[0].commit, &written.commits[1].commit);
    let theirs = "src/x.rs\n  0123456789abcdef 1\n---\n{\"schema_version\":\"authorship/3.0.0\",\"base_commit_sha\":\"x\",\"prompts\":{\"0123456789abcdef\":{\"agent_id\":{\"tool\":\"cursor\",\"id\":\"c-1\",\"model\":\"m\"},\"messages\":[]}}}";
    git_at(
        &w.repo,
        &[
            "notes",
            "--ref=refs/notes/ai",
            "add",
            "-f",
            "-m",
            theirs,
            foreign,
        ],
        None,
    );
    let mine = git_at(
        &w.repo,
        &["notes", "--ref=refs/notes/ai", "show", own],
        None,
    );
    let stale = mine.replacen("\"total_deletions\": 0", "\"total_deletions\": 7", 1);
    assert_ne!(stale, mine);
    git_at(
        &w.repo,
        &[
            "notes",
            "--ref=refs/notes/ai",
            "add",
            "-f",
            "-m",
            &stale,
            own,
        ],
        None,
    );
    let third = w.cairn.write_notes(&w.repo, &range, false, false).unwrap();
    let action = |id: &str| {
        third
            .commits
            .iter()
            .find(|c| c.commit == id)
            .map(|c| (c.action, c.reason.clone()))
            .unwrap()
    };
    let (a, reason) = action(foreign);
    assert_eq!(a, NoteAction::Skipped);
    assert!(reason.unwrap().contains("another tool's note"));
    assert_eq!(
        git_at(
            &w.repo,
            &["notes", "--ref=refs/notes/ai", "show", foreign],
            None
        ),
        theirs
    );
    assert_eq!(action(own).0, NoteAction::Replaced);
    assert_eq!(
        git_at(
            &w.repo,
            &["notes", "--ref=refs/notes/ai", "show", own],
            None
        ),
        mine
    );
}

/// Ranges that are not ranges, do not exist or are too long are refused before anything is
/// written, each with its reason; a single commit is a range of one.
#[test]
fn write_notes_refuses_hostile_ranges() {
    use cairn_core::ErrorKind;
    let w = world();
    let kind = |range: &str| {
        w.cairn
            .write_notes(&w.repo, range, false, true)
            .map(|r| r.commits.len())
            .map_err(|e| (e.kind(), e.to_string()))
    };
    for (range, want) in [
        ("--output=/tmp/x", ErrorKind::Invalid),
        ("-n1", ErrorKind::Invalid),
        ("HEAD...HEAD~2", ErrorKind::Invalid),
        ("", ErrorKind::Invalid),
        ("no-such-branch..HEAD", ErrorKind::NotFound),
        ("HEAD..0123456789abcdef", ErrorKind::NotFound),
        ("HEAD~1..--all", ErrorKind::NotFound),
        ("HEAD\u{1b}[2J", ErrorKind::NotFound),
    ] {
        let err = kind(range).expect_err(range);
        assert_eq!(err.0, want, "{range:?}: {}", err.1);
        assert!(!err.1.contains('\u{1b}'), "{:?}", err.1);
    }
    assert_eq!(kind("HEAD").unwrap(), 1);
    assert_eq!(
        kind("HEAD~2..").unwrap(),
        2,
        "an empty side is HEAD, as in git"
    );
    assert!(
        git_at(&w.repo, &["notes", "--ref=refs/notes/ai", "list"], None).is_empty(),
        "nothing written"
    );

    // More commits than one run takes: refused with the cap and a narrower range to try.
    let head = git_at(&w.repo, &["rev-parse", "HEAD"], None);
    let mut stream = String::new();
    for i in 0..=cairn_core::views::why::notes::MAX_COMMITS {
        stream.push_str(&format!(
            "commit refs/heads/long\nmark :{m}\ncommitter T <t@example.invalid> {t} +0000\ndata 2\nc\n{from}\n",
            m = i + 1,
            t = 1_700_000_000 + i,
            from = if i == 0 { format!("from {head}\n") } else { String::new() },
        ));
    }
    let mut child = Command::new("git")
        .args(["-C", w.repo.to_str().unwrap(), "fast-import", "--quiet"])
        .stdin(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write as _;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stream.as_bytes())
        .unwrap();
    assert!(child.wait().unwrap().success());
    let err = kind("HEAD..long").unwrap_err();
    assert_eq!(err.0, ErrorKind::Invalid);
    assert!(
        err.1.contains("501 commits") && err.1.contains("at most 500"),
        "{}",
        err.1
    );
}

/// In a shallow clone blame names the cut's commit for every line written at or before it,
/// whoever wrote it: such lines are explained by no one (never by the cut commit's sessions),
/// and a question about them alone says to fetch the rest. Lines written after the cut are
/// answered as in a full clone.
#[test]
fn lines_from_before_a_shallow_clone_s_cut_are_not_pinned_on_it() {
    let w = world();
    let file = git_at(&w.repo, &["ls-files"], None)
        .lines()
        .find(|p| {
            std::fs::read_to_string(w.repo.join(p))
                .is_ok_and(|t| !t.is_empty() && t.ends_with('\n'))
        })
        .expect("a tracked text file")
        .to_owned();
    let mut text = std::fs::read_to_string(w.repo.join(&file)).unwrap();
    text.push_str("a line a person added later\n");
    std::fs::write(w.repo.join(&file), &text).unwrap();
    git_at(&w.repo, &["commit", "-q", "-am", "later"], None);
    let late = u32::try_from(text.lines().count()).unwrap();

    let clone = w._tmp.path().join("shallow");
    let url = format!("file://{}", w.repo.display());
    git_at(
        w._tmp.path(),
        &["clone", "-q", "--depth", "2", &url, clone.to_str().unwrap()],
        None,
    );
    let ask = |target: String| {
        w.cairn.why(
            &clone,
            &WhyQuery {
                target,
                ..WhyQuery::default()
            },
        )
    };
    let refused = ask(format!("{file}:1")).unwrap_err().to_string();
    assert!(
        refused.contains("shallow") && refused.contains("--unshallow"),
        "{refused}"
    );
    let answered = ask(format!("{file}:{late}")).unwrap();
    assert_eq!(answered.commits.len(), 1, "{answered:?}");
    assert_eq!(answered.commits[0].subject, "later");
}

/// A file not committed yet (a session just wrote it) is explained as uncommitted lines are,
/// not refused with git blame's own error; a line past its end is refused saying so.
#[test]
fn a_file_not_committed_yet_is_explained_not_refused() {
    let w = world();
    std::fs::write(w.repo.join("fresh.txt"), "one\ntwo\n").unwrap();
    let ask = |target: &str| ask(&w, target);
    for target in ["fresh.txt", "fresh.txt:2"] {
        let answer = ask(target).unwrap_or_else(|e| panic!("{target}: {e}"));
        assert!(answer.commits.is_empty(), "{target}: {answer:?}");
    }
    let past = ask("fresh.txt:9").unwrap_err().to_string();
    assert!(past.contains("has no line 9 (it has 2 lines)"), "{past}");
    // A last line without its newline is a line.
    std::fs::write(
        w.repo.join("unended.txt"),
        "one
two",
    )
    .unwrap();
    assert!(ask("unended.txt:2").is_ok());
    let past = ask("unended.txt:3").unwrap_err().to_string();
    assert!(past.contains("(it has 2 lines)"), "{past}");
    // A name with a space is a path when it names a file, not words to search for.
    std::fs::write(w.repo.join("my notes.txt"), "one\n").unwrap();
    let spaced = ask("my notes.txt:1").unwrap();
    assert_eq!(spaced.kind, WhyKind::Lines, "{spaced:?}");
    assert_eq!(ask("my notes about it").unwrap().kind, WhyKind::Description);
}

/// Another tool's note that names a session but gives it no line is no evidence for it.
#[test]
fn a_note_giving_a_session_no_line_is_no_evidence() {
    let w = world();
    let note = serde_json::json!({
        "schema_version": "authorship/3.0.0",
        "base_commit_sha": "x",
        "prompts": {"0123456789abcdef": {
            "agent_id": {"tool": "claude", "id": w.session_key},
            "messages": [],
            "custom_attributes": {"session_keys": w.session_key}
        }}
    });
    git_at(
        &w.repo,
        &[
            "notes",
            "--ref=ai",
            "add",
            "-f",
            "-m",
            &format!("---\n{note}"),
            "HEAD",
        ],
        None,
    );
    let answer = why(&w, "HEAD");
    let notes: Vec<_> = answer
        .sessions
        .iter()
        .flat_map(|s| &s.evidence)
        .filter(|e| e.kind == "ai_note")
        .collect();
    assert!(notes.is_empty(), "{notes:?}");
}

//! The session-start brief follows a repository, not its folder name: two clients' `api`
//! repositories are one project by name, and a note learnt in one must not be injected into an
//! agent working in the other (`recall::memory::recorded_here`). Worktrees and clones of the
//! repository still get it; a note whose repository is gone from disk is served by name, as
//! before. Built on real git repositories and real captured sessions.

use std::path::{Path, PathBuf};
use std::process::Command;

use cairn_core::Cairn;
use cairn_core::archive::Agent;
use cairn_core::recall::model::{EntryType, ReviewState, Scope, Status, Surface};
use serde_json::json;

use crate::support::{self, git};

const ORIGIN_A: &str = "https://git.example.com/client-a/api.git";
const ORIGIN_B: &str = "https://git.example.com/client-b/api.git";
const LEFT_OUT_ONE: &str = "1 note from another repository also named api is left out.";

/// A repository named `api` under `parent`, on `main` with one commit, and `origin` when given.
fn repo(parent: &Path, origin: Option<&str>) -> PathBuf {
    let dir = parent.join("api");
    std::fs::create_dir_all(&dir).unwrap();
    git(&dir, &["init", "-q", "-b", "main"]);
    git(&dir, &["commit", "-q", "--allow-empty", "-m", "init"]);
    if let Some(url) = origin {
        git(&dir, &["remote", "add", "origin", url]);
    }
    std::fs::canonicalize(dir).unwrap()
}

/// Two clients' repositories, both `api`, each with a captured Claude session and one note a
/// person reviewed, learnt in that session.
struct World {
    tmp: tempfile::TempDir,
    data: PathBuf,
    a: PathBuf,
    b: PathBuf,
}

impl World {
    fn new() -> World {
        let tmp = tempfile::tempdir().unwrap();
        // Short folders: the capture's redactor reads a long run of the temp dir's random name
        // and what follows as a secret, and would store a session's folder as a marker.
        let a = repo(&tmp.path().join("a"), Some(ORIGIN_A));
        let b = repo(&tmp.path().join("b"), Some(ORIGIN_B));
        let data = tmp.path().join("data");
        let cairn = Cairn::open(&data).unwrap();
        let transcripts = tmp.path().join("transcripts");
        std::fs::create_dir_all(&transcripts).unwrap();
        for (id, cwd) in [("in-a", &a), ("in-b", &b)] {
            let path = transcripts.join(format!("{id}.jsonl"));
            std::fs::write(&path, transcript(id, cwd)).unwrap();
            support::capture(&cairn, &[support::main_file(Agent::Claude, &path)]);
        }
        let notes = [
            note("a-note", "in-a", "Client A deploys with the blue pipeline"),
            note("b-note", "in-b", "Client B pins the ORM to 4.2"),
        ];
        let report = cairn.recall_import(&notes.join("\n"), false).unwrap();
        assert_eq!(report.imported, 2, "{report:?}");
        assert_eq!(cairn.recall_get("a-note").unwrap().project, "api");
        assert_eq!(cairn.recall_get("b-note").unwrap().project, "api");
        World { tmp, data, a, b }
    }

    /// What the hook injects for a session starting in `dir`: the note ids and the text.
    fn brief(&self, dir: &Path) -> Option<(Vec<String>, String)> {
        let input = json!({"cwd": dir, "hook_event_name": "SessionStart"}).to_string();
        Cairn::session_start_brief(&self.data, &input, dir)
            .unwrap()
            .map(|b| {
                let mut ids = b.entry_ids;
                ids.sort();
                (ids, b.text)
            })
    }

    fn ids(&self, dir: &Path) -> Vec<String> {
        self.brief(dir).map(|(ids, _)| ids).unwrap_or_default()
    }

    /// Another repository named `api`, under `parent` (a folder of the temp dir).
    fn another(&self, parent: &str, origin: Option<&str>) -> PathBuf {
        repo(&self.tmp.path().join(parent), origin)
    }
}

/// A Claude session of one prompt and one answer that ran in `cwd`.
fn transcript(id: &str, cwd: &Path) -> String {
    let base = json!({"sessionId": id, "cwd": cwd, "gitBranch": "main",
        "timestamp": "2026-03-01T10:00:00.000Z", "version": "2.1.39"});
    let records = [
        json!({"type": "user", "uuid": format!("{id}-0"),
            "message": {"role": "user", "content": format!("how do we ship {id}")}}),
        json!({"type": "assistant", "uuid": format!("{id}-1"),
            "message": {"id": format!("msg_{id}"), "role": "assistant", "model": "m",
                "content": [{"type": "text", "text": "Like this."}]}}),
    ];
    records
        .iter()
        .map(|r| {
            let mut line = r.as_object().unwrap().clone();
            line.extend(base.as_object().unwrap().clone());
            format!("{}\n", serde_json::Value::Object(line))
        })
        .collect()
}

fn note(id: &str, session: &str, title: &str) -> String {
    json!({"candidate_id": id, "session_id": session, "type": "decision", "scope": "project",
        "title": title, "body": format!("{title}."), "transferable": true, "provenance_ok": true,
        "label": "correct", "evidence": {"ordinal_start": 0, "ordinal_end": 1}})
    .to_string()
}

fn strings(ids: &[&str]) -> Vec<String> {
    ids.iter().map(|s| (*s).to_owned()).collect()
}

/// A note learnt in client A's `api` reaches sessions there and not in client B's `api`, whose
/// brief says in one line that another repository's note was left out.
#[test]
fn a_note_stays_in_the_repository_it_was_learnt_in() {
    let w = World::new();
    let (ids, text) = w.brief(&w.a).unwrap();
    assert_eq!(ids, strings(&["a-note"]));
    assert!(text.contains("blue pipeline"), "{text}");
    assert!(text.ends_with(LEFT_OUT_ONE), "{text}");

    let (ids, text) = w.brief(&w.b.join(".")).unwrap();
    assert_eq!(ids, strings(&["b-note"]));
    assert!(!text.contains("blue pipeline"), "{text}");
    assert!(
        text.starts_with("Reviewed notes from past sessions in api (branch main):"),
        "{text}"
    );
    assert!(text.ends_with(LEFT_OUT_ONE), "{text}");

    // A third `api` with no note of its own gets nothing: not even the line.
    let c = w.another("home", Some("git@git.example.com:someone/api.git"));
    assert_eq!(w.brief(&c), None);
    // Nor does one with no remote at all.
    let d = w.another("scratch", None);
    assert_eq!(w.brief(&d), None);
}

/// A linked worktree of A and a second clone of A (its origin spelt another way) are A: its
/// note is theirs.
#[test]
fn worktrees_and_clones_of_the_repository_get_its_notes() {
    let w = World::new();
    let wt = w.tmp.path().join("worktrees/fix-login");
    git(
        &w.a,
        &[
            "worktree",
            "add",
            "-q",
            "-b",
            "fix-login",
            wt.to_str().unwrap(),
        ],
    );
    let (ids, text) = w.brief(&wt).unwrap();
    assert_eq!(ids, strings(&["a-note"]), "{text}");
    assert!(text.contains("(branch fix-login)"), "{text}");

    for (parent, url) in [
        ("laptop", "git@git.example.com:client-a/api"),
        (
            "desktop",
            "ssh://deploy@GIT.example.com:22/client-a/api.git/",
        ),
    ] {
        let clone = w.another(parent, Some(url));
        assert_eq!(w.ids(&clone), strings(&["a-note"]), "{url}");
    }
    // Client B's worktree is B's.
    let b_wt = w.tmp.path().join("worktrees/b-hotfix");
    git(
        &w.b,
        &[
            "worktree",
            "add",
            "-q",
            "-b",
            "hotfix",
            b_wt.to_str().unwrap(),
        ],
    );
    assert_eq!(w.ids(&b_wt), strings(&["b-note"]));
}

/// A note whose repository is gone from disk (deleted, or a link to itself now) is served by its
/// project's name, as every note was before the rule: nothing on disk says it is elsewhere.
#[test]
fn a_note_whose_repository_is_gone_is_served_by_name() {
    let w = World::new();
    assert_eq!(w.ids(&w.b), strings(&["b-note"]));
    std::fs::remove_dir_all(&w.a).unwrap();
    let (ids, text) = w.brief(&w.b).unwrap();
    assert_eq!(ids, strings(&["a-note", "b-note"]));
    assert!(!text.contains("left out"), "{text}");

    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(&w.a, &w.a).unwrap();
        assert_eq!(w.ids(&w.b), strings(&["a-note", "b-note"]));
    }
}

/// A reviewed `api` note `id` learnt in `sessions` (their first two records), last updated at
/// `at`, written straight into the archive at `data`.
fn insert_note(data: &Path, id: &str, title: &str, sessions: &[&str], at: &str) {
    let conn = rusqlite::Connection::open(data.join("cairn.db")).unwrap();
    insert_note_in(&conn, id, title, sessions, at);
}

/// [`insert_note`] through `conn`.
fn insert_note_in(conn: &rusqlite::Connection, id: &str, title: &str, sessions: &[&str], at: &str) {
    let row = |session: &str| -> i64 {
        conn.query_row(
            "SELECT id FROM sessions WHERE session_id = ?1",
            [session],
            |r| r.get(0),
        )
        .unwrap()
    };
    let mut evidence = Vec::new();
    for session in sessions {
        evidence.extend(
            cairn_core::recall::evidence::bind(conn, row(session), session, 0, 1, &[], "").unwrap(),
        );
    }
    let entry = cairn_core::recall::store::NewEntry {
        id: id.into(),
        entry_type: EntryType::Fact,
        scope: Scope::Project,
        status: Status::Accepted,
        review_state: ReviewState::HumanReviewed,
        title: title.into(),
        body: format!("{title}."),
        trigger: String::new(),
        confidence: None,
        uncertainty: String::new(),
        project: "api".into(),
        cwd: String::new(),
        git_branch: "main".into(),
        agent: "claude".into(),
        source_session_id: Some(row(sessions[0])),
        source_episode_id: String::new(),
        source_run_id: String::new(),
        extractor_method: String::new(),
        model: String::new(),
        label: String::new(),
        transferable: true,
        provenance_ok: true,
        supersedes_entry_id: String::new(),
        evidence,
    };
    cairn_core::recall::store::insert(conn, &entry, at).unwrap();
}

/// A note learnt in both repositories belongs to both; one learnt only in A stays out of B.
#[test]
fn a_note_learnt_in_both_repositories_is_served_in_both() {
    let w = World::new();
    insert_note(
        &w.data,
        "both",
        "Both clients run Postgres 16",
        &["in-a", "in-b"],
        "2026-03-02T00:00:00.000Z",
    );
    assert_eq!(w.ids(&w.a), strings(&["a-note", "both"]));
    assert_eq!(w.ids(&w.b), strings(&["b-note", "both"]));
}

/// Sixty notes of client B's `api`, all newer than any of A's, do not hide A's three: the
/// session-start brief in A and an agent's Recall question there (no words, and words that
/// every note matches, B's best) each answer with A's notes, and count B's as left out. The
/// rule is applied while reading, not to a first page that B's notes fill.
#[test]
fn many_newer_notes_of_another_repository_do_not_hide_this_ones() {
    let w = World::new();
    for (id, day) in [("a-older", "02"), ("a-oldest", "01")] {
        let title = format!("Client A rule {id}");
        let at = format!("2026-01-{day}T00:00:00.000Z");
        insert_note(&w.data, id, &title, &["in-a"], &at);
    }
    for i in 0..60 {
        let title = format!("Client B client client rule {i}");
        let at = format!("2099-01-01T00:00:{:02}.000Z", i % 60);
        insert_note(&w.data, &format!("b-{i:02}"), &title, &["in-b"], &at);
    }
    let mine = strings(&["a-note", "a-older", "a-oldest"]);

    let (ids, text) = w.brief(&w.a).unwrap();
    assert_eq!(ids, mine, "{text}");
    assert!(
        text.ends_with("61 notes from another repository also named api are left out."),
        "{text}"
    );

    let cairn = Cairn::open(&w.data).unwrap();
    let reach = cairn_core::recall::memory::Reach {
        project: Some("api".into()),
        branch: Some("main".into()),
        root: Some(w.a.clone()),
    };
    for words in ["", "client"] {
        let req = cairn_core::recall::QueryRequest {
            text: words.into(),
            filters: cairn_core::recall::store::Filters {
                trusted_only: true,
                limit: Some(5),
                ..Default::default()
            },
            ..Default::default()
        };
        let answer = cairn
            .agent_recall_applying(&req, &reach, Surface::Query, None)
            .unwrap();
        let mut ids: Vec<String> = answer
            .response
            .results
            .iter()
            .map(|r| r.entry.id.clone())
            .collect();
        ids.sort();
        assert_eq!(ids, mine, "{words:?}");
        assert_eq!(answer.stopped_after, None, "{words:?}");
        assert!(answer.elsewhere >= 60, "{words:?}: {}", answer.elsewhere);
    }
}

/// Reading for notes that apply here is bounded: the brief reads at most 1,000 of the
/// project's notes, an agent's question at most 500 ranked ones. Where the bound leaves the
/// answer short, it says so, and how many were read.
#[test]
fn reading_stops_at_its_bound_and_says_so() {
    let w = World::new();
    insert_note(
        &w.data,
        "a-newest",
        "Client A rule newest",
        &["in-a"],
        "2100-01-01T00:00:00.000Z",
    );
    let mut conn = rusqlite::Connection::open(w.data.join("cairn.db")).unwrap();
    let tx = conn.transaction().unwrap();
    for i in 0..1_000 {
        let at = format!("2099-01-01T00:{:02}:{:02}.000Z", i / 60, i % 60);
        let title = format!("Client B rule {i}");
        insert_note_in(&tx, &format!("b-{i:04}"), &title, &["in-b"], &at);
    }
    tx.commit().unwrap();
    drop(conn);

    let (ids, text) = w.brief(&w.a).unwrap();
    assert_eq!(ids, strings(&["a-newest"]), "{text}");
    assert!(
        text.ends_with(
            "999 notes from another repository also named api are left out. Only the first 1000 of api's notes were read; this repository may have more."
        ),
        "{text}"
    );

    let cairn = Cairn::open(&w.data).unwrap();
    let reach = cairn_core::recall::memory::Reach {
        project: Some("api".into()),
        branch: Some("main".into()),
        root: Some(w.a.clone()),
    };
    let req = cairn_core::recall::QueryRequest {
        filters: cairn_core::recall::store::Filters {
            trusted_only: true,
            limit: Some(5),
            ..Default::default()
        },
        ..Default::default()
    };
    let answer = cairn
        .agent_recall_applying(&req, &reach, Surface::Query, None)
        .unwrap();
    let ids: Vec<&str> = answer
        .response
        .results
        .iter()
        .map(|r| r.entry.id.as_str())
        .collect();
    assert_eq!(ids, ["a-newest"]);
    assert_eq!(answer.stopped_after, Some(500));
    assert_eq!(
        answer.left_out().line("api").as_deref(),
        Some(
            "499 notes from another repository also named api are left out. Only the first 500 of api's notes were read; this repository may have more."
        )
    );
}

/// A folder whose `.git` file names A's git dir, or the git dir of A's real linked worktree,
/// claims to be A; A's git dir does not name it back, so it is not A and A's notes stay out of
/// it (whether its folder is called `api` or something else). A worktree `git worktree add`
/// made is still A's.
#[test]
fn a_git_file_claiming_another_repository_gets_none_of_its_notes() {
    let w = World::new();
    let wt = w.tmp.path().join("worktrees/real");
    git(
        &w.a,
        &["worktree", "add", "-q", "-b", "real", wt.to_str().unwrap()],
    );
    assert_eq!(w.ids(&wt), strings(&["a-note"]));

    let a_git = w.a.join(".git");
    let claims = [a_git.join("worktrees/real"), a_git.clone()];
    for (parent, name) in [("evil", "api"), ("evil2", "tools")] {
        let forged = w.tmp.path().join(parent).join(name);
        std::fs::create_dir_all(&forged).unwrap();
        for claim in &claims {
            std::fs::write(
                forged.join(".git"),
                format!("gitdir: {}\n", claim.display()),
            )
            .unwrap();
            let ids = w.ids(&forged);
            assert!(
                !ids.contains(&"a-note".to_owned()),
                "{forged:?} {claim:?}: {ids:?}"
            );
        }
    }
    // The real worktree is untouched by the forgeries.
    assert_eq!(w.ids(&wt), strings(&["a-note"]));
}

/// Hostile git files around the repositories cost a capped read at most and never fail the
/// hook: a config of a gigabyte, a remote URL with control characters, a `.git` file pointing
/// outside the repository, a config that is a link to itself, a FIFO. None makes a repository
/// the same as A, so A's note stays out; the repository's own notes are still served.
#[test]
fn hostile_git_files_neither_stall_the_hook_nor_let_a_note_through() {
    let w = World::new();
    // B's config is a gigabyte (sparse): not read, so B has no URL and is not A.
    let config = w.b.join(".git/config");
    std::fs::remove_file(&config).unwrap();
    std::fs::File::create(&config)
        .unwrap()
        .set_len(1 << 30)
        .unwrap();
    let (ids, text) = w.brief(&w.b).unwrap();
    assert_eq!(ids, strings(&["b-note"]));
    assert!(text.ends_with(LEFT_OUT_ONE), "{text}");
    // A's brief reads B as a folder it cannot place: B's note stays out of A.
    assert_eq!(w.ids(&w.a), strings(&["a-note"]));

    // A's URL with a control character in it names no repository: not A's clone.
    let bell = w.another("bell", None);
    std::fs::write(
        bell.join(".git/config"),
        "[core]\n\tbare = false\n[remote \"origin\"]\n\turl = https://git.example.com/client-a/\u{7}api.git\n",
    )
    .unwrap();
    assert_eq!(w.brief(&bell), None);

    // `.git` files pointing outside any repository.
    for (parent, gitdir) in [("root", "/"), ("nowhere", "/nonexistent/place/.git")] {
        let dir = w.tmp.path().join(parent).join("api");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(".git"), format!("gitdir: {gitdir}\n")).unwrap();
        assert_eq!(w.brief(&dir), None, "{gitdir}");
    }

    #[cfg(unix)]
    {
        // A config that is a symlink to itself.
        let looped = w.another("looped", None);
        let config = looped.join(".git/config");
        std::fs::remove_file(&config).unwrap();
        std::os::unix::fs::symlink(&config, &config).unwrap();
        assert_eq!(w.brief(&looped), None);

        // A FIFO as config: never opened to wait on.
        let piped = w.another("piped", None);
        let config = piped.join(".git/config");
        std::fs::remove_file(&config).unwrap();
        let made = Command::new("mkfifo").arg(&config).status().unwrap();
        assert!(made.success());
        assert_eq!(w.brief(&piped), None);
    }
}

/// Beside the two `api` repositories, a repository named `shop` with a captured session, and
/// notes learnt there of every scope, each reviewed by a person but one: `shop-global` (global),
/// one of each narrower scope, and `shop-draft`, a global one whose accept was taken back
/// (unreviewed). Client A's `api` has a global note of its own, `a-global`.
fn with_shop(w: &World) -> PathBuf {
    let parent = w.tmp.path().join("s");
    let shop = parent.join("shop");
    std::fs::create_dir_all(&shop).unwrap();
    git(&shop, &["init", "-q", "-b", "main"]);
    git(&shop, &["commit", "-q", "--allow-empty", "-m", "init"]);
    let shop = std::fs::canonicalize(shop).unwrap();
    let cairn = Cairn::open(&w.data).unwrap();
    let path = w.tmp.path().join("transcripts/in-shop.jsonl");
    std::fs::write(&path, transcript("in-shop", &shop)).unwrap();
    support::capture(&cairn, &[support::main_file(Agent::Claude, &path)]);
    let scoped = |id: &str, session: &str, scope: &str, title: &str| {
        json!({"candidate_id": id, "session_id": session, "type": "preference", "scope": scope,
            "title": title, "body": format!("{title}."), "transferable": true,
            "provenance_ok": true, "label": "correct",
            "evidence": {"ordinal_start": 0, "ordinal_end": 1}})
        .to_string()
    };
    let mut notes = vec![
        scoped(
            "shop-global",
            "in-shop",
            "global",
            "Prefer pnpm over npm everywhere",
        ),
        scoped(
            "shop-draft",
            "in-shop",
            "global",
            "Prefer yarn over pnpm everywhere",
        ),
        scoped(
            "a-global",
            "in-a",
            "global",
            "Answer in British English everywhere",
        ),
    ];
    for scope in ["project", "repository", "branch", "file", "tool", "agent"] {
        let title = format!("Shop pnpm rule of scope {scope}");
        notes.push(scoped(&format!("shop-{scope}"), "in-shop", scope, &title));
    }
    let report = cairn.recall_import(&notes.join("\n"), false).unwrap();
    assert_eq!(report.imported, 9, "{report:?}");
    cairn
        .recall_unaccept("shop-draft", ReviewState::UnreviewedAuto)
        .unwrap();
    assert_eq!(cairn.recall_get("shop-global").unwrap().project, "shop");
    assert_eq!(cairn.recall_get("shop-branch").unwrap().git_branch, "main");
    shop
}

/// What the hook injects in `dir`, its note ids in the brief's order, and its text.
fn brief_in_order(w: &World, dir: &Path) -> (Vec<String>, String) {
    let input = json!({"cwd": dir, "hook_event_name": "SessionStart"}).to_string();
    let b = Cairn::session_start_brief(&w.data, &input, dir)
        .unwrap()
        .unwrap();
    (b.entry_ids, b.text)
}

/// A note a person accepted as global in `shop` reaches a session in every repository, after
/// that repository's own notes, saying where it was learnt; nothing of `shop` scoped narrower
/// than global (project, repository, branch, file, tool, agent), and no global note nobody
/// reviewed, ever does. A global note of client A's `api` reaches client B's `api` too (the
/// same-name rule keeps out only what is scoped to its repository), as one of `api`'s own.
#[test]
fn a_global_note_reaches_every_repository_after_its_own() {
    let w = World::new();
    let shop = with_shop(&w);

    let (ids, text) = brief_in_order(&w, &w.a);
    assert_eq!(
        ids,
        strings(&["a-global", "a-note", "shop-global"]),
        "{text}"
    );
    assert!(
        text.contains("Prefer pnpm over npm everywhere (global, from shop)"),
        "{text}"
    );
    assert!(
        !text.contains("Shop pnpm rule") && !text.contains("yarn"),
        "{text}"
    );
    // The same-name rule still leaves client B's note out, and only it.
    assert!(text.ends_with(LEFT_OUT_ONE), "{text}");

    let (ids, text) = brief_in_order(&w, &w.b);
    assert_eq!(
        ids,
        strings(&["a-global", "b-note", "shop-global"]),
        "{text}"
    );
    assert!(!text.contains("English everywhere (global"), "{text}");
    assert!(text.ends_with(LEFT_OUT_ONE), "{text}");

    // In `shop`, its global note is one of its own (not labelled), every scope of it served,
    // and client A's global note comes after them (with room for all of them).
    std::fs::write(
        w.data.join("config.toml"),
        "[recall]\nsession_start_tokens = 4000\n",
    )
    .unwrap();
    let (ids, text) = brief_in_order(&w, &shop);
    assert_eq!(ids.last().map(String::as_str), Some("a-global"), "{text}");
    assert_eq!(ids.len(), 8, "{ids:?}");
    assert!(!ids.contains(&"shop-draft".to_owned()), "{ids:?}");
    assert!(!text.contains("(global, from shop)"), "{text}");
    assert!(
        text.contains("Answer in British English everywhere (global, from api)"),
        "{text}"
    );
}

/// An agent's Recall question and brief through the MCP tools' path (`agent_recall_applying`)
/// serve the same: the repository's own first, then the global notes of other projects in
/// the room they leave, nothing narrower and nothing unreviewed of another project, even when
/// the agent asks for unreviewed notes too.
#[test]
fn an_agent_s_question_gets_global_notes_after_the_repository_s_own() {
    let w = World::new();
    with_shop(&w);
    let cairn = Cairn::open(&w.data).unwrap();
    let reach = cairn_core::recall::memory::Reach {
        project: Some("api".into()),
        branch: Some("main".into()),
        root: Some(w.a.clone()),
    };
    let ask = |words: &str, limit: u32, trusted_only: bool, context: bool| {
        let req = cairn_core::recall::QueryRequest {
            text: words.into(),
            filters: cairn_core::recall::store::Filters {
                trusted_only,
                limit: Some(limit),
                ..Default::default()
            },
            context,
            ..Default::default()
        };
        cairn
            .agent_recall_applying(&req, &reach, Surface::Query, None)
            .unwrap()
    };
    let ids = |a: &cairn_core::recall::memory::Answer| -> Vec<String> {
        a.response
            .results
            .iter()
            .map(|r| r.entry.id.clone())
            .collect()
    };
    for trusted_only in [true, false] {
        let answer = ask("", 10, trusted_only, false);
        let got = ids(&answer);
        assert_eq!(got.len(), 3, "{got:?}");
        assert_eq!(got[2], "shop-global", "{got:?}");
        assert_eq!(answer.elsewhere, 1, "{got:?}");
        // Words only shop's narrower notes and its draft match.
        let answer = ask("pnpm", 10, trusted_only, false);
        assert_eq!(ids(&answer), strings(&["shop-global"]));
    }
    // Within the same limit: the repository's own fill it first.
    assert_eq!(ids(&ask("", 2, true, false)).len(), 2);
    assert!(!ids(&ask("", 2, true, false)).contains(&"shop-global".to_owned()));
    // A brief names where the global note came from.
    let brief = ask("", 10, true, true);
    let text = &brief.response.context.as_ref().unwrap().text;
    assert!(
        text.contains("Prefer pnpm over npm everywhere (global, from shop)"),
        "{text}"
    );
}

/// The CLI's `recall query`/`brief` and the window's queries (`Cairn::recall_query`) follow
/// the same rule when they ask for a project: its entries, then the trusted global entries of
/// other projects; a filter narrower than a project (a scope, a branch) keeps them out, and
/// asking for every project is as before.
#[test]
fn a_query_for_a_project_gets_global_notes_of_others_after_its_own() {
    let w = World::new();
    with_shop(&w);
    let cairn = Cairn::open(&w.data).unwrap();
    let query = |words: &str, filters: cairn_core::recall::store::Filters, context: bool| {
        let req = cairn_core::recall::QueryRequest {
            text: words.into(),
            filters,
            context,
            ..Default::default()
        };
        let resp = cairn.recall_query(&req, Surface::Query).unwrap();
        let ids: Vec<String> = resp.results.iter().map(|r| r.entry.id.clone()).collect();
        (ids, resp)
    };
    let api = |f: cairn_core::recall::store::Filters| cairn_core::recall::store::Filters {
        project: Some("api".into()),
        ..f
    };
    let (ids, _) = query("pnpm", api(Default::default()), false);
    assert_eq!(ids, strings(&["shop-global"]));
    let (ids, _) = query("", api(Default::default()), false);
    assert_eq!(ids.len(), 4, "{ids:?}");
    assert_eq!(
        ids.last().map(String::as_str),
        Some("shop-global"),
        "{ids:?}"
    );
    // A brief for `api` (the CLI's `recall brief --project api`): labelled.
    let (_, resp) = query(
        "pnpm",
        api(cairn_core::recall::store::Filters {
            trusted_only: true,
            ..Default::default()
        }),
        true,
    );
    let text = &resp.context.unwrap().text;
    assert!(text.contains("everywhere (global, from shop)"), "{text}");
    // Narrower than a project: only `api`'s own.
    for narrow in [
        cairn_core::recall::store::Filters {
            scope: Some(Scope::Project),
            ..Default::default()
        },
        cairn_core::recall::store::Filters {
            git_branch: Some("main".into()),
            ..Default::default()
        },
    ] {
        let (ids, _) = query("pnpm", api(narrow), false);
        assert!(ids.is_empty(), "{ids:?}");
    }
    // Every project: shop's own notes, as they are, and its draft too (not trusted-only).
    let (ids, _) = query("pnpm", Default::default(), false);
    assert!(ids.contains(&"shop-project".to_owned()), "{ids:?}");
    assert!(ids.contains(&"shop-draft".to_owned()), "{ids:?}");
}

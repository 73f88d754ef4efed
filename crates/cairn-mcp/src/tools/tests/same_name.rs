//! `recall_query` and `recall_brief` answer for the repository the server runs in, not for every
//! repository of its folder name: two clients' `api` are one project by name, and a note learnt
//! in one stays out of the other's answers (saying how many were left out), while a clone of the
//! repository gets it and `all_repos` still reaches every note.

use super::*;

const LEFT_OUT_ONE: &str = "1 note from another repository also named api is left out.";
const LEFT_OUT_TWO: &str = "2 notes from another repository also named api are left out.";

/// A repository named `api` under `parent`, with `origin`.
fn api_repo(parent: &Path, origin: &str) -> PathBuf {
    let dir = parent.join("api");
    std::fs::create_dir_all(&dir).unwrap();
    git(&dir, &["init", "-q", "-b", "main"]);
    git(&dir, &["commit", "-q", "--allow-empty", "-m", "init"]);
    git(&dir, &["remote", "add", "origin", origin]);
    std::fs::canonicalize(dir).unwrap()
}

struct Clients {
    tmp: tempfile::TempDir,
    a: PathBuf,
    b: PathBuf,
}

impl Clients {
    /// Client A's and client B's `api`, each with a captured session and a reviewed note from it.
    fn new() -> Clients {
        let tmp = tempfile::tempdir().unwrap();
        // Short folders: a long run of the temp dir's random name reads as a secret to capture.
        let a = api_repo(
            &tmp.path().join("a"),
            "https://git.example.com/client-a/api.git",
        );
        let b = api_repo(
            &tmp.path().join("b"),
            "https://git.example.com/client-b/api.git",
        );
        let (data, claude) = (tmp.path().join("data"), tmp.path().join("claude"));
        std::fs::create_dir_all(&claude).unwrap();
        Cairn::open(&data)
            .unwrap()
            .set_source_dirs(Agent::Claude, vec![claude.display().to_string()])
            .unwrap();
        let cairn = Cairn::open(&data).unwrap();
        claude_session(&cairn, &claude, "in-a", &a);
        claude_session(&cairn, &claude, "in-b", &b);
        let notes: String = [
            ("a-note", "in-a", "Client A deploys with the blue pipeline"),
            ("b-note", "in-b", "Client B pins the ORM"),
        ]
        .iter()
        .map(|(id, session, title)| {
            format!(
                "{}\n",
                json!({"candidate_id": id, "session_id": session, "type": "decision",
                    "scope": "project", "title": title, "body": format!("{title}."),
                    "transferable": true, "provenance_ok": true, "label": "correct",
                    "evidence": {"ordinal_start": 0, "ordinal_end": 0}})
            )
        })
        .collect();
        let report = cairn.recall_import(&notes, false).unwrap();
        assert_eq!(report.imported, 2, "{report:?}");
        assert_eq!(cairn.recall_get("a-note").unwrap().project, "api");
        Clients { tmp, a, b }
    }

    fn server_in(&self, dir: &Path) -> Server {
        let cairn = Cairn::open_for_agents(self.tmp.path().join("data")).unwrap();
        Server::new(Arc::new(crate::Session::new(cairn, dir)))
    }
}

#[test]
fn recall_leaves_out_another_repositorys_notes_of_the_same_name() {
    let c = Clients::new();
    let b = c.server_in(&c.b);
    let query = |v: Value| body(b.recall_query(args(v).unwrap()));
    let brief = |v: Value| body(b.recall_brief(args(v).unwrap()));

    let here = query(json!({}));
    assert_eq!(entry_ids(&here), ["b-note"], "{here}");
    assert_eq!(here["left_out"], LEFT_OUT_ONE, "{here}");
    // Named by its own name or its root's path, it is still this repository; a path elsewhere
    // is a project by name.
    assert_eq!(entry_ids(&query(json!({"repo": "api"}))), ["b-note"]);
    assert_eq!(entry_ids(&query(json!({"repo": c.b}))), ["b-note"]);
    assert_eq!(
        entry_ids(&query(json!({"repo": c.a}))),
        ["a-note", "b-note"]
    );
    let packed = brief(json!({}));
    assert_eq!(entry_ids(&packed), ["b-note"], "{packed}");
    let text = packed["text"].as_str().unwrap();
    assert!(!text.contains("blue pipeline"), "{text}");
    assert!(text.ends_with(LEFT_OUT_ONE), "{text}");
    assert_eq!(packed["left_out"], LEFT_OUT_ONE, "{packed}");

    // Every project, asked for: every note, nothing left out.
    let every = query(json!({"all_repos": true}));
    assert_eq!(entry_ids(&every), ["a-note", "b-note"], "{every}");
    assert!(every.get("left_out").is_none(), "{every}");
    let every = brief(json!({"all_repos": true}));
    assert_eq!(entry_ids(&every), ["a-note", "b-note"], "{every}");

    // In A, A's note and not B's.
    let a = c.server_in(&c.a);
    let here = body(a.recall_query(args(json!({})).unwrap()));
    assert_eq!(entry_ids(&here), ["a-note"], "{here}");
    assert_eq!(here["left_out"], LEFT_OUT_ONE, "{here}");
}

#[test]
fn a_clone_of_the_repository_gets_its_notes_and_a_stranger_is_told_why_it_gets_none() {
    let c = Clients::new();
    let clone = api_repo(
        &c.tmp.path().join("laptop"),
        "git@git.example.com:client-a/api",
    );
    let server = c.server_in(&clone);
    let here = body(server.recall_query(args(json!({})).unwrap()));
    assert_eq!(entry_ids(&here), ["a-note"], "{here}");
    let packed = body(server.recall_brief(args(json!({})).unwrap()));
    assert!(
        packed["text"].as_str().unwrap().contains("blue pipeline"),
        "{packed}"
    );

    let stranger = api_repo(
        &c.tmp.path().join("home"),
        "https://git.example.com/me/api.git",
    );
    let server = c.server_in(&stranger);
    let none = body(server.recall_query(args(json!({})).unwrap()));
    assert_eq!(none["entries"], json!([]), "{none}");
    let hint = none["hint"].as_str().unwrap();
    assert!(hint.starts_with(LEFT_OUT_TWO), "{hint}");
    let packed = body(server.recall_brief(args(json!({})).unwrap()));
    assert_eq!(packed["text"], "", "{packed}");
    assert!(
        packed["hint"].as_str().unwrap().starts_with(LEFT_OUT_TWO),
        "{packed}"
    );
    assert_eq!(packed["left_out"], LEFT_OUT_TWO, "{packed}");
}

/// Sixty notes of client B's `api`, imported after A's (so newer) and matching the words asked
/// better, do not hide A's three from an agent in A: `recall_query` (no words, and words every
/// note matches) and `recall_brief` answer with A's notes and count B's as left out.
#[test]
fn many_newer_notes_of_another_repository_do_not_hide_this_ones() {
    let c = Clients::new();
    let cairn = Cairn::open(c.tmp.path().join("data")).unwrap();
    let import = |notes: Vec<(String, &str, String)>| {
        let lines: String = notes
            .iter()
            .map(|(id, session, title)| {
                format!(
                    "{}\n",
                    json!({"candidate_id": id, "session_id": session, "type": "decision",
                        "scope": "project", "title": title, "body": format!("{title}."),
                        "transferable": true, "provenance_ok": true, "label": "correct",
                        "evidence": {"ordinal_start": 0, "ordinal_end": 0}})
                )
            })
            .collect();
        let report = cairn.recall_import(&lines, false).unwrap();
        assert_eq!(report.imported, notes.len() as u32, "{report:?}");
    };
    import(
        ["a-older", "a-oldest"]
            .iter()
            .map(|id| (id.to_string(), "in-a", format!("Client A rule {id}")))
            .collect(),
    );
    // Imported last, and named to come first among notes updated in the same instant.
    import(
        (0..60)
            .map(|i| {
                let title = format!("Client B client client rule {i}");
                (format!("0b-{i:02}"), "in-b", title)
            })
            .collect(),
    );
    drop(cairn);
    let mine = ["a-note", "a-older", "a-oldest"];
    let left_out = "61 notes from another repository also named api are left out.";

    let a = c.server_in(&c.a);
    for asked in [json!({}), json!({"query": "client", "mode": "lexical"})] {
        let here = body(a.recall_query(args(asked.clone()).unwrap()));
        assert_eq!(entry_ids(&here), mine, "{asked}: {here}");
        assert_eq!(here["left_out"], left_out, "{asked}: {here}");
    }
    let packed = body(a.recall_brief(args(json!({})).unwrap()));
    assert_eq!(entry_ids(&packed), mine, "{packed}");
    assert!(
        packed["text"].as_str().unwrap().ends_with(left_out),
        "{packed}"
    );
}

//! What the session-start brief keeps when its budget holds few notes: the branch's own (the
//! entries scoped to the branch checked out) before the wider ones, whichever branch those were
//! learnt on and however new they are; and when notes that apply did not fit, its last line
//! says how many and what serves them. Built on a real git repository and the real Claude
//! fixture `short.jsonl`, captured as if it ran there.

use std::path::PathBuf;

use cairn_core::Cairn;
use cairn_core::archive::Agent;
use serde_json::json;

use crate::support::{self, git};

const BRANCH: &str = "feature/login";
const SESSION: &str = "55604662-cf2a-4331-851a-ec234028f8ca";
const WARNING: &str = "feature/login: start postgres before phx.server";

/// A repository `shop` on [`BRANCH`], the fixture session captured as run there, and five
/// notes a person reviewed, all learnt on that branch: one warning scoped to the branch, the
/// oldest, and four long project-wide procedures after it.
struct Shop {
    _tmp: tempfile::TempDir,
    data: PathBuf,
    repo: PathBuf,
}

impl Shop {
    fn new() -> Shop {
        let tmp = tempfile::tempdir().unwrap();
        let repo = tmp.path().join("shop");
        std::fs::create_dir_all(&repo).unwrap();
        git(&repo, &["init", "-q", "-b", BRANCH]);
        git(&repo, &["commit", "-q", "--allow-empty", "-m", "init"]);
        let repo = std::fs::canonicalize(repo).unwrap();
        let data = tmp.path().join("data");
        let cairn = Cairn::open(&data).unwrap();
        let transcript = std::fs::read_to_string(support::fixtures().join("claude/short.jsonl"))
            .unwrap()
            .replace("/home/marco/projects/spotter", &repo.display().to_string())
            .replace(
                r#""gitBranch":"master""#,
                &format!(r#""gitBranch":"{BRANCH}""#),
            );
        let path = tmp.path().join(format!("{SESSION}.jsonl"));
        std::fs::write(&path, transcript).unwrap();
        support::capture(&cairn, &[support::main_file(Agent::Claude, &path)]);
        let note = |id: &str, scope: &str, title: &str, body: &str| {
            json!({"candidate_id": id, "session_id": SESSION, "type": "procedure",
                "scope": scope, "git_branch": BRANCH, "title": title, "body": body,
                "transferable": true, "provenance_ok": true, "label": "correct",
                "evidence": {"ordinal_start": 0, "ordinal_end": 3}})
            .to_string()
        };
        let mut notes = vec![note(
            "warning",
            "branch",
            WARNING,
            "On this branch mix phx.server fails without the dev database; run docker compose up db first.",
        )];
        for i in 0..4 {
            let step = format!("Step {i}: a long project-wide procedure sentence. ");
            notes.push(note(
                &format!("procedure-{i}"),
                "project",
                &format!("Project-wide procedure {i}"),
                &step.repeat(20),
            ));
        }
        let report = cairn.recall_import(&notes.join("\n"), false).unwrap();
        assert_eq!(report.imported, 5, "{report:?}");
        drop(cairn);
        // The warning is the oldest note, each procedure newer than the one before.
        let db = rusqlite::Connection::open(data.join("cairn.db")).unwrap();
        for (i, id) in [
            "warning",
            "procedure-0",
            "procedure-1",
            "procedure-2",
            "procedure-3",
        ]
        .iter()
        .enumerate()
        {
            let at = format!("2026-03-0{}T10:00:00.000Z", i + 1);
            let n = db
                .execute(
                    "UPDATE recall_entries SET updated_at = ?1 WHERE id = ?2",
                    rusqlite::params![at, id],
                )
                .unwrap();
            assert_eq!(n, 1, "{id}");
        }
        Shop {
            _tmp: tmp,
            data,
            repo,
        }
    }

    /// The brief a session starting in the repository gets, with `tokens` its budget.
    fn brief(&self, tokens: u32) -> (Vec<String>, String) {
        std::fs::write(
            self.data.join("config.toml"),
            format!("[recall]\nsession_start_tokens = {tokens}\n"),
        )
        .unwrap();
        let input = json!({"cwd": self.repo, "hook_event_name": "SessionStart"}).to_string();
        let b = Cairn::session_start_brief(&self.data, &input, &self.repo)
            .unwrap()
            .expect("a brief");
        (b.entry_ids, b.text)
    }
}

/// The default budget holds two of the five notes: the branch's warning is one of them, and
/// first, though four project-wide notes learnt on the same branch are newer.
#[test]
fn the_branch_s_own_note_comes_first_in_a_small_brief() {
    let shop = Shop::new();
    let (ids, text) = shop.brief(300);
    assert!(ids.len() < 5, "{text}");
    assert_eq!(ids[0], "warning", "{text}");
    let warning = text.find(WARNING).expect("the warning is in the brief");
    let first_procedure = text.find("Project-wide procedure").unwrap_or(text.len());
    assert!(warning < first_procedure, "{text}");
    // The project-wide ones follow newest first.
    if ids.len() > 1 {
        assert_eq!(ids[1], "procedure-3", "{text}");
    }
}

/// Notes that apply but did not fit are counted in the brief's last line, with what serves
/// them; a brief that holds them all has no such line.
#[test]
fn a_brief_that_left_notes_out_for_its_budget_says_how_many_and_where_they_are() {
    let shop = Shop::new();
    let (ids, text) = shop.brief(300);
    let more = 5 - ids.len();
    let last = text.lines().last().unwrap();
    assert_eq!(
        last,
        format!(
            "{more} more note{} that apply did not fit: `recall_query` (Cairn's MCP tools) or `cairn recall list --project shop --trusted-only` gives {}.",
            if more == 1 { "" } else { "s" },
            if more == 1 { "it" } else { "them" },
        ),
        "{text}"
    );
    // The line is within the budget.
    assert!(text.len() <= 300 * 4, "{} bytes", text.len());

    let (ids, text) = shop.brief(4_000);
    assert_eq!(ids.len(), 5, "{text}");
    assert!(!text.contains("did not fit"), "{text}");
    assert!(text.ends_with("End of Cairn recall"), "{text}");
}

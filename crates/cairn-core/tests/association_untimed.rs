//! Sessions whose transcripts carry no record times: Cursor's agent transcripts and Aider's
//! chat history (the real fixtures, `tests/fixtures/cursor/` and `tests/fixtures/aider/`, see
//! their SOURCES.md). A first read by a sync comes whenever the person first syncs, months
//! after the session perhaps: what is checked out then says nothing of what the session ran on,
//! so it links no branch. A capture made as the session is written links what is checked out:
//! a hook's, or one reading what the agent added since a capture within the hour. One reading
//! what was added since a capture long before does not.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::{self, git};

use std::io::Write as _;
use std::path::Path;

use cairn_core::Cairn;
use cairn_core::archive::Agent;
use serde_json::json;

/// Cursor's project slug of a folder: every character that is not a letter or digit as `-`.
fn slug(p: &Path) -> String {
    p.to_str()
        .unwrap()
        .trim_start_matches('/')
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect()
}

/// Every link of the Cursor and Aider sessions: (agent, session id, target, evidence, detail).
fn links(data: &Path) -> Vec<(String, String, String, String, String)> {
    let conn = rusqlite::Connection::open(data.join("cairn.db")).unwrap();
    let mut stmt = conn
        .prepare(
            "SELECT s.agent, coalesce(s.session_id, ''), l.target_key, l.evidence, l.detail
             FROM links l JOIN sessions s ON s.id = l.session_id
             WHERE s.agent IN ('cursor', 'aider')
             ORDER BY s.agent, s.session_id, l.target_key, l.evidence",
        )
        .unwrap();
    stmt.query_map([], |r| {
        Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
    })
    .unwrap()
    .map(Result::unwrap)
    .collect()
}

fn append(path: &Path, text: &str) {
    std::fs::OpenOptions::new()
        .append(true)
        .open(path)
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
}

#[test]
fn an_untimed_session_links_a_branch_only_from_a_capture_made_as_it_ran() {
    let root = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(root.path()).unwrap();
    let repo = root.join("src/gamma");
    std::fs::create_dir_all(&repo).unwrap();
    git(&repo, &["init", "-q", "-b", "main"]);
    git(&repo, &["commit", "-q", "--allow-empty", "-m", "init"]);
    git(&repo, &["branch", "feat/dark-mode"]);
    std::fs::write(repo.join(".gitignore"), ".aider*\n").unwrap();

    // Cursor's agent transcripts, in the project folder that names the repository.
    let fixtures = support::fixtures();
    let projects = root.join("cursor-projects");
    let transcripts = projects.join(slug(&repo)).join("agent-transcripts");
    std::fs::create_dir_all(&transcripts).unwrap();
    for entry in std::fs::read_dir(fixtures.join("cursor/-tmp-repo/agent-transcripts")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "jsonl") {
            std::fs::copy(&path, transcripts.join(path.file_name().unwrap())).unwrap();
        }
    }
    // Aider's history, in the repository it ran in.
    let history = repo.join(".aider.chat.history.md");
    std::fs::copy(
        fixtures.join("aider/Aquaticat-Monochromatic/.aider.chat.history.md"),
        &history,
    )
    .unwrap();

    let data = root.join("data");
    support::read_from(&data, Agent::Cursor, &projects);
    let cairn = Cairn::open(&data).unwrap();
    let found = || {
        let mut files = support::found(Agent::Cursor, &projects);
        files.extend(support::found(Agent::Aider, &history));
        files
    };

    // 1. The first sync, with `main` checked out: the sessions are read, no branch is claimed.
    support::capture(&cairn, &found());
    let sessions = support::count(
        &data,
        "SELECT count(*) FROM sessions WHERE agent IN ('cursor', 'aider') AND cwd IS NOT NULL",
    );
    assert!(
        sessions >= 2,
        "{sessions} sessions placed in the repository"
    );
    let records_with_times = support::count(
        &data,
        "SELECT count(*) FROM records r JOIN sessions s ON s.id = r.session_id
         WHERE s.agent IN ('cursor', 'aider') AND r.timestamp IS NOT NULL",
    );
    assert_eq!(records_with_times, 0, "the fixtures carry no record times");
    assert_eq!(links(&data), [], "a first read claims no branch");

    // 2. The agent goes on, on another branch, and its hook captures what it wrote: live.
    git(&repo, &["checkout", "-q", "feat/dark-mode"]);
    let small = transcripts.join("small.jsonl");
    append(
        &small,
        "{\"role\":\"user\",\"message\":{\"content\":[{\"type\":\"text\",\"text\":\"Now the dark mode.\"}]}}\n",
    );
    let payload = json!({"transcript_path": small, "cwd": repo, "hook_event_name": "stop"});
    cairn
        .hook(&payload.to_string(), Some(Agent::Cursor), &repo)
        .unwrap()
        .unwrap();

    // 3. Another session grows and a sync (or the desktop's watcher) reads it minutes after
    // the first read: it was written in between, so it ran with this branch checked out.
    let test_session = transcripts.join("test-session.jsonl");
    append(
        &test_session,
        "{\"role\":\"user\",\"message\":{\"content\":[{\"type\":\"text\",\"text\":\"And the tests.\"}]}}\n",
    );
    support::capture(&cairn, &found());

    // 4. Aider's history grows after a capture long before (the first read made to look a
    // day old): when in that day it was written, nothing says.
    rusqlite::Connection::open(data.join("cairn.db"))
        .unwrap()
        .execute(
            "UPDATE captures SET captured_at = '2020-01-01T00:00:00.000Z'
             WHERE session_id IN (SELECT id FROM sessions WHERE agent = 'aider')",
            [],
        )
        .unwrap();
    append(
        &history,
        "\n# aider chat started at 2026-01-01 10:00:00\n\n#### add a dark mode toggle\n\nAdded it.\n",
    );
    let grown = support::capture(&cairn, &found());
    assert!(grown.records_added > 0, "{grown:?}");

    let got = links(&data);
    let linked: Vec<(&str, &str)> = got
        .iter()
        .map(|(agent, id, ..)| (agent.as_str(), id.as_str()))
        .collect();
    assert_eq!(
        linked,
        [("cursor", "small"), ("cursor", "test-session")],
        "{got:#?}"
    );
    for (_, _, target, evidence, detail) in &got {
        assert_eq!(target, "ref:refs/heads/feat/dark-mode");
        assert_eq!(evidence, "ran_on_branch");
        assert_eq!(detail, "ran while feat/dark-mode was checked out");
    }
    insta::assert_json_snapshot!("untimed_links", got);
}

//! A repository's skim lists the sessions Cairn could place in no repository (they may have
//! run there), and marks each as such, in the CLI's lines, its JSON and the MCP server's
//! answer: a session whose folder was gone when it was captured is not presented as one that
//! ran in this repository.

use serde_json::json;

use crate::support::{Env, fixtures, git, mcp_call};

const GONE: &str = "55604662-cf2a-4331-851a-ec234028f8ca";
const HERE: &str = "55604662-cf2a-4331-851a-0000000000aa";

/// A repository on `master`, short.jsonl captured as it is (its folder,
/// `/home/marco/projects/spotter`, is none here) and once more as run inside the repository.
fn env_with_repo() -> (Env, std::path::PathBuf) {
    let env = Env::new();
    let repo = env.root.path().join("spotter");
    std::fs::create_dir_all(&repo).unwrap();
    git(&repo, &["init", "-q", "-b", "master"]);
    git(&repo, &["commit", "-q", "--allow-empty", "-m", "init"]);
    let repo = std::fs::canonicalize(repo).unwrap();
    let text = std::fs::read_to_string(fixtures().join("claude/short.jsonl")).unwrap();
    let dir = env.claude().join("-home-marco-projects-spotter");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join(format!("{GONE}.jsonl")), &text).unwrap();
    let here = text
        .replace(GONE, HERE)
        .replace("/home/marco/projects/spotter", repo.to_str().unwrap());
    std::fs::write(dir.join(format!("{HERE}.jsonl")), here).unwrap();
    env.ok(&["sync"]);
    (env, repo)
}

const SAID: &str = "ran in: no repository Cairn could tell";

#[test]
fn a_skim_marks_the_session_it_could_place_in_no_repository() {
    let (env, repo) = env_with_repo();
    let at = repo.to_str().unwrap();
    let v = env.json(&["-C", at, "skim", "master", "--include-weak"]);
    let sessions = v["sessions"].as_array().unwrap();
    assert_eq!(sessions.len(), 2, "{v}");
    let marked: Vec<bool> = sessions
        .iter()
        .map(|s| s["unplaced"].as_bool().unwrap_or(false))
        .collect();
    assert_eq!(marked.iter().filter(|m| **m).count(), 1, "{v}");
    let gone = sessions.iter().find(|s| s["unplaced"] == true).unwrap();
    assert_eq!(gone["session_key"], key_of(&env, GONE), "{v}");

    let human = env.ok(&["-C", at, "skim", "master", "--include-weak"]);
    assert_eq!(human.matches(SAID).count(), 1, "{human}");
}

/// The key of the session whose agent's id is `id`.
fn key_of(env: &Env, id: &str) -> serde_json::Value {
    let list = env.json(&["sessions"]);
    list.as_array()
        .unwrap()
        .iter()
        .find(|s| s["session_id"] == id)
        .unwrap_or_else(|| panic!("{list}"))["session_key"]
        .clone()
}

#[test]
fn the_mcp_skim_marks_it_too() {
    let (env, repo) = env_with_repo();
    let answer = mcp_call(
        &env,
        &repo,
        "skim",
        &json!({"target": "master", "include_weak": true}),
    );
    let sessions = answer["sessions"]
        .as_array()
        .unwrap_or_else(|| panic!("{answer}"));
    assert_eq!(sessions.len(), 2, "{answer}");
    let marked: Vec<&serde_json::Value> = sessions
        .iter()
        .filter(|s| s["unplaced"].as_bool().unwrap())
        .collect();
    assert_eq!(marked.len(), 1, "{answer}");
    let key = key_of(&env, GONE);
    let key = key.as_str().unwrap();
    assert_eq!(
        marked[0]["address"],
        format!("cairn://session/{key}"),
        "{answer}"
    );
}

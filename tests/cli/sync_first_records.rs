//! A transcript read first when it held nothing Cairn keeps (Claude Code writes a
//! `file-history-snapshot` line before the first prompt) is new to a person when its records
//! arrive: no list showed it before, so a later sync counts it as a new session, not an
//! updated one.

use crate::support::{Env, fixtures};

const ID: &str = "55604662-cf2a-4331-851a-ec234028f8ca";

/// short.jsonl's first line (a `file-history-snapshot`), the lines after it but the last, and
/// its last line.
fn parts() -> (String, String, String) {
    let whole = std::fs::read_to_string(fixtures().join("claude/short.jsonl")).unwrap();
    let lines: Vec<&str> = whole.lines().collect();
    assert!(lines[0].contains("file-history-snapshot"), "{}", lines[0]);
    let n = lines.len();
    (
        format!("{}\n", lines[0]),
        lines[1..n - 1].iter().map(|l| format!("{l}\n")).collect(),
        format!("{}\n", lines[n - 1]),
    )
}

/// The session's file in `env`'s Claude folder, holding `text`.
fn write(env: &Env, text: &str) {
    let dir = env.claude().join("-home-marco-projects-spotter");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join(format!("{ID}.jsonl")), text).unwrap();
}

#[test]
fn a_file_first_read_empty_counts_as_new_when_its_records_arrive() {
    let env = Env::new();
    let (first, middle, last) = parts();
    write(&env, &first);
    let report = env.json(&["sync"]);
    assert_eq!(report["sessions_added"], 0, "{report}");
    assert_eq!(report["sessions_updated"], 0, "{report}");
    assert_eq!(
        report["nothing_to_read"].as_array().unwrap().len(),
        1,
        "{report}"
    );

    // The agent goes on writing: the prompt and what followed.
    write(&env, &format!("{first}{middle}"));
    let report = env.json(&["sync"]);
    assert_eq!(report["sessions_added"], 1, "{report}");
    assert_eq!(report["sessions_updated"], 0, "{report}");
    let claude = &report["agents"][0];
    assert_eq!(claude["agent"], "claude", "{report}");
    assert_eq!(claude["sessions_added"], 1, "{report}");
    assert_eq!(claude["sessions_updated"], 0, "{report}");

    // Once it holds records, more of them update it.
    write(&env, &format!("{first}{middle}{last}"));
    let report = env.json(&["sync"]);
    assert_eq!(report["sessions_added"], 0, "{report}");
    assert_eq!(report["sessions_updated"], 1, "{report}");
}

#[test]
fn the_human_summary_says_new_for_it() {
    let env = Env::new();
    let (first, middle, _) = parts();
    write(&env, &first);
    env.ok(&["sync"]);
    write(&env, &format!("{first}{middle}"));
    let human = env.ok(&["sync"]);
    assert!(human.contains("1 new session"), "{human}");
    assert!(human.contains("0 updated"), "{human}");
}

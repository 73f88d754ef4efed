//! What a transcript itself says about git: commits the session made (`git commit` output),
//! branches it pushed, pull requests it opened (`gh pr create` output, Claude's `pr-link`
//! records), branches it switched to, files it edited, and the branch each record was written
//! on. Pure functions over stored records; the repository is consulted later, in `associate`.

use std::collections::BTreeSet;
use std::sync::OnceLock;

use regex::Regex;

use super::written;

/// The parts of a stored record evidence is read from (the archive's typed read).
pub use crate::archive::store::EvidenceRecord;

/// One piece of evidence found in a transcript.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Found {
    /// `git commit` printed `[<branch> <sha>] subject`.
    Commit {
        branch: Option<String>,
        short_id: String,
        subject: String,
        ordinal: i64,
        turn_index: i64,
    },
    /// `git push` printed `<local> -> <remote>`.
    Push {
        branch: String,
        ordinal: i64,
        turn_index: i64,
    },
    /// A pull request URL printed by `gh pr create` (or recorded by Claude Code).
    PullRequest {
        number: u32,
        url: String,
        ordinal: i64,
        turn_index: i64,
    },
    /// `git checkout -b x` / `git switch -c x` ran successfully.
    Checkout {
        branch: String,
        ordinal: i64,
        turn_index: i64,
    },
    /// A file edit (path as the agent wrote it), with where it happened and the keys of the
    /// distinctive lines it wrote to that path ([`super::written`]).
    Edit {
        path: String,
        cwd: Option<String>,
        ordinal: i64,
        turn_index: i64,
        timestamp: Option<String>,
        written: Vec<u64>,
    },
    /// The branch recorded on the session's records (first record that names it).
    BranchRecorded {
        branch: String,
        ordinal: i64,
        turn_index: i64,
    },
}

fn commit_re() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(r"(?m)^\[(detached HEAD|[^\]\s]+)(?: \(root-commit\))? ([0-9a-f]{7,40})\] (.*)$")
            .unwrap_or_else(|_| unreachable_regex())
    })
}

fn push_re() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(r"(?m)^\s*(?:\*\s+\[new branch\]|\+?\s*[0-9a-f]{7,40}\.\.\.?[0-9a-f]{7,40})\s+(\S+)\s+->\s+(\S+)")
            .unwrap_or_else(|_| unreachable_regex())
    })
}

fn pr_url_re() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(r"https?://[^\s/]+/[^\s]+?/(?:pull|merge_requests)/(\d+)")
            .unwrap_or_else(|_| unreachable_regex())
    })
}

fn checkout_re() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(r"git\s+(?:checkout\s+-[bB]|switch\s+(?:-c|--create|-C))\s+([A-Za-z0-9._/\-]+)")
            .unwrap_or_else(|_| unreachable_regex())
    })
}

/// The patterns above are constants; a failure to compile them is a bug caught by the tests.
fn unreachable_regex() -> Regex {
    #[allow(clippy::expect_used)]
    Regex::new("$^").expect("the empty regex compiles")
}

/// The command string of an exec tool call's input.
fn command_of(input: &str) -> String {
    let Ok(v) = serde_json::from_str::<serde_json::Value>(input) else {
        return input.to_owned();
    };
    match v.get("command").or_else(|| v.get("cmd")) {
        Some(serde_json::Value::String(s)) => s.clone(),
        Some(serde_json::Value::Array(argv)) => argv
            .iter()
            .filter_map(|a| a.as_str())
            .collect::<Vec<_>>()
            .join(" "),
        _ => String::new(),
    }
}

/// Everything the records of one session say about git, in record order.
pub fn scan(records: &[EvidenceRecord]) -> Vec<Found> {
    scan_with(records, &mut std::collections::HashMap::new())
}

/// [`scan`] of a session's records from some point on: `commands` holds the commands of the git
/// calls scanned before (by call id) whose results may be among `records`, and gains the
/// commands of the calls in `records`.
pub fn scan_with(
    records: &[EvidenceRecord],
    commands: &mut std::collections::HashMap<String, String>,
) -> Vec<Found> {
    let mut found = Vec::new();
    let mut branches_seen: BTreeSet<String> = BTreeSet::new();
    for r in records {
        // A name no repository could have (control sequences, invisible characters: what a
        // hostile transcript writes) is no branch to link to: shown cleaned, `feat<ESC>]0;x`
        // would read as the real branch `feat`.
        if let Some(b) = r
            .git_branch
            .as_deref()
            .filter(|b| !b.is_empty() && *b != "HEAD")
            .filter(|b| super::targets::Target::branch(b).check().is_ok())
            && branches_seen.insert(b.to_owned())
        {
            found.push(Found::BranchRecorded {
                branch: b.to_owned(),
                ordinal: r.ordinal,
                turn_index: r.turn_index,
            });
        }
        match r.kind.as_str() {
            "tool_call" => {
                if r.tool_kind.as_deref() == Some("file_edit") {
                    let added = written::added_by_edit(
                        r.tool_input.as_deref(),
                        r.tool_kind.as_deref(),
                        &r.file_paths,
                    );
                    for path in &r.file_paths {
                        found.push(Found::Edit {
                            path: path.clone(),
                            cwd: r.cwd.clone(),
                            ordinal: r.ordinal,
                            turn_index: r.turn_index,
                            timestamp: r.timestamp.clone(),
                            written: written::written_to(path, &r.file_paths, &added)
                                .iter()
                                .map(|l| written::key(l))
                                .collect(),
                        });
                    }
                }
                if r.tool_kind.as_deref() == Some("exec")
                    && let (Some(id), Some(input)) = (&r.call_id, &r.tool_input)
                {
                    commands.insert(id.clone(), command_of(input));
                }
            }
            "tool_result" => {
                let Some(text) = r.text.as_deref() else {
                    continue;
                };
                let command = r
                    .call_id
                    .as_deref()
                    .and_then(|id| commands.get(id))
                    .map(String::as_str)
                    .unwrap_or("");
                if command.contains("git") && command.contains("commit") {
                    for c in commit_re().captures_iter(text) {
                        let branch = c
                            .get(1)
                            .map(|m| m.as_str())
                            .filter(|b| *b != "detached HEAD")
                            .map(str::to_owned);
                        found.push(Found::Commit {
                            branch,
                            short_id: c[2].to_owned(),
                            subject: c[3].trim().to_owned(),
                            ordinal: r.ordinal,
                            turn_index: r.turn_index,
                        });
                    }
                }
                if command.contains("git") && command.contains("push") {
                    for c in push_re().captures_iter(text) {
                        found.push(Found::Push {
                            branch: c[1].to_owned(),
                            ordinal: r.ordinal,
                            turn_index: r.turn_index,
                        });
                    }
                }
                if (command.contains("gh pr create") || command.contains("glab mr create"))
                    && let Some(c) = pr_url_re().captures(text)
                    && let Ok(number) = c[1].parse()
                {
                    found.push(Found::PullRequest {
                        number,
                        url: c[0].to_owned(),
                        ordinal: r.ordinal,
                        turn_index: r.turn_index,
                    });
                }
                if let Some(c) = checkout_re().captures(command) {
                    found.push(Found::Checkout {
                        branch: c[1].to_owned(),
                        ordinal: r.ordinal,
                        turn_index: r.turn_index,
                    });
                }
            }
            "event" if r.source_event_kind == "claude:pr-link" => {
                if let Some(text) = r.text.as_deref()
                    && let Some(c) = pr_url_re().captures(text)
                    && let Ok(number) = c[1].parse()
                {
                    found.push(Found::PullRequest {
                        number,
                        url: c[0].to_owned(),
                        ordinal: r.ordinal,
                        turn_index: r.turn_index,
                    });
                }
            }
            _ => {}
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_recorded_branch_no_repository_could_have_is_not_found() {
        let record = |branch: &str| EvidenceRecord {
            git_branch: Some(branch.to_owned()),
            kind: "message".into(),
            ..EvidenceRecord::default()
        };
        let found = scan(&[
            record("feat\u{1b}]0;TITLE\u{7}\u{1b}[41m\u{202e}"),
            record("br\u{200b}zw"),
            record("feature/ok"),
        ]);
        let branches: Vec<&str> = found
            .iter()
            .filter_map(|f| match f {
                Found::BranchRecorded { branch, .. } => Some(branch.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(branches, ["feature/ok"]);
    }

    fn call(ordinal: i64, id: &str, command: &str) -> EvidenceRecord {
        EvidenceRecord {
            ordinal,
            kind: "tool_call".into(),
            tool_name: Some("Bash".into()),
            tool_kind: Some("exec".into()),
            call_id: Some(id.into()),
            tool_input: Some(serde_json::json!({"command": command}).to_string()),
            ..Default::default()
        }
    }

    fn result(ordinal: i64, id: &str, text: &str) -> EvidenceRecord {
        EvidenceRecord {
            ordinal,
            kind: "tool_result".into(),
            call_id: Some(id.into()),
            text: Some(text.into()),
            ..Default::default()
        }
    }

    #[test]
    fn commits_pushes_prs_and_checkouts() {
        let records = vec![
            call(0, "a", "git checkout -b feature/login"),
            result(1, "a", "Switched to a new branch 'feature/login'"),
            call(2, "b", "git add -A && git commit -m 'Add login'"),
            result(
                3,
                "b",
                "[feature/login 1a2b3c4] Add login\n 1 file changed, 3 insertions(+)",
            ),
            call(4, "c", "git push -u origin feature/login"),
            result(
                5,
                "c",
                "To github.com:o/r.git\n * [new branch]      feature/login -> feature/login\n",
            ),
            call(6, "d", "gh pr create --fill"),
            result(
                7,
                "d",
                "Creating pull request for feature/login into main in o/r\n\nhttps://github.com/o/r/pull/42\n",
            ),
            call(8, "e", "git commit --allow-empty -m first"),
            result(9, "e", "[main (root-commit) abcdef0] first"),
        ];
        let found = scan(&records);
        assert!(found.contains(&Found::Checkout {
            branch: "feature/login".into(),
            ordinal: 1,
            turn_index: 0
        }));
        assert!(found.contains(&Found::Commit {
            branch: Some("feature/login".into()),
            short_id: "1a2b3c4".into(),
            subject: "Add login".into(),
            ordinal: 3,
            turn_index: 0
        }));
        assert!(found.contains(&Found::Push {
            branch: "feature/login".into(),
            ordinal: 5,
            turn_index: 0
        }));
        assert!(found.contains(&Found::PullRequest {
            number: 42,
            url: "https://github.com/o/r/pull/42".into(),
            ordinal: 7,
            turn_index: 0
        }));
        assert!(found.iter().any(|f| matches!(f, Found::Commit { branch: Some(b), short_id, .. } if b == "main" && short_id == "abcdef0")));
    }

    #[test]
    fn output_that_only_looks_like_a_commit_is_ignored_without_a_commit_command() {
        let records = vec![
            call(0, "a", "cat notes.txt"),
            result(1, "a", "[main 1a2b3c4] not really"),
        ];
        assert!(scan(&records).is_empty());
    }

    #[test]
    fn codex_argv_commands_and_recorded_branches() {
        let mut r = EvidenceRecord {
            ordinal: 0,
            kind: "tool_call".into(),
            tool_kind: Some("exec".into()),
            call_id: Some("x".into()),
            tool_input: Some(r#"{"command":["bash","-lc","git commit -am wip"]}"#.into()),
            git_branch: Some("topic".into()),
            ..Default::default()
        };
        let res = EvidenceRecord {
            git_branch: Some("topic".into()),
            ..result(1, "x", "[topic 0123abc] wip")
        };
        r.turn_index = 0;
        let found = scan(&[r, res]);
        assert_eq!(
            found[0],
            Found::BranchRecorded {
                branch: "topic".into(),
                ordinal: 0,
                turn_index: 0
            }
        );
        assert!(matches!(&found[1], Found::Commit { branch: Some(b), .. } if b == "topic"));
    }
}

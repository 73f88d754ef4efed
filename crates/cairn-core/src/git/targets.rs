//! Targets (what skim and publish ask about) and their keys, normalised as agentlog does:
//! a branch `main` is `ref:refs/heads/main`, a GitButler review `gitbutler-review:<id>`, a pull
//! request `pull-request:<branch key>#<n>`, a change `gitbutler-change:<id>`. Cairn also accepts a
//! bare PR number (`123`, `#123`) or a PR URL for a review, matched by number.

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "lowercase")]
pub enum TargetKind {
    Branch,
    Review,
    Change,
}

impl TargetKind {
    pub fn as_str(self) -> &'static str {
        match self {
            TargetKind::Branch => "branch",
            TargetKind::Review => "review",
            TargetKind::Change => "change",
        }
    }

    pub fn parse(s: &str) -> Option<TargetKind> {
        match s {
            "branch" => Some(TargetKind::Branch),
            "review" => Some(TargetKind::Review),
            "change" => Some(TargetKind::Change),
            _ => None,
        }
    }
}

/// A normalised target.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct Target {
    pub kind: TargetKind,
    pub key: String,
    /// For a pull request given by number or URL: the number (matched on any branch).
    pub pr_number: Option<u32>,
}

impl Target {
    pub fn branch(name: &str) -> Target {
        Target {
            kind: TargetKind::Branch,
            key: branch_key(name),
            pr_number: None,
        }
    }

    pub fn pull_request(branch: &str, number: u32) -> Target {
        Target {
            kind: TargetKind::Review,
            key: format!("pull-request:{}#{number}", branch_key(branch)),
            pr_number: Some(number),
        }
    }

    pub fn change(id: &str) -> Target {
        Target {
            kind: TargetKind::Change,
            key: format!("gitbutler-change:{id}"),
            pr_number: None,
        }
    }

    /// The branch name of a branch target (`ref:refs/heads/x` → `x`).
    pub fn branch_name(&self) -> Option<&str> {
        match self.kind {
            TargetKind::Branch => self.key.strip_prefix("ref:refs/heads/"),
            _ => None,
        }
    }

    /// Normalise what a person typed.
    pub fn parse(kind: TargetKind, value: &str) -> Result<Target> {
        let value = value.trim();
        if value.is_empty() {
            return Err(Error::Invalid(format!(
                "{} target value is required",
                kind.as_str()
            )));
        }
        Ok(match kind {
            TargetKind::Branch => Target {
                kind,
                key: branch_key(value),
                pr_number: None,
            },
            TargetKind::Review => {
                let v = value.strip_prefix("review:").unwrap_or(value);
                if let Some(n) = pr_number_of(v) {
                    Target {
                        kind,
                        key: format!("pull-request:#{n}"),
                        pr_number: Some(n),
                    }
                } else if v.starts_with("gitbutler-review:") || v.starts_with("pull-request:") {
                    let pr_number = v.rsplit_once('#').and_then(|(_, n)| n.parse().ok());
                    Target {
                        kind,
                        key: v.to_owned(),
                        pr_number,
                    }
                } else {
                    Target {
                        kind,
                        key: format!("gitbutler-review:{v}"),
                        pr_number: None,
                    }
                }
            }
            TargetKind::Change => {
                let v = value.strip_prefix("change-id:").unwrap_or(value);
                let key = if v.starts_with("gitbutler-change:") {
                    v.to_owned()
                } else {
                    format!("gitbutler-change:{v}")
                };
                Target {
                    kind,
                    key,
                    pr_number: None,
                }
            }
        })
    }
}

/// `main`, `branch:main`, `refs/heads/main`, `ref:refs/heads/main` → `ref:refs/heads/main`.
pub fn branch_key(value: &str) -> String {
    let v = value.strip_prefix("branch:").unwrap_or(value);
    if v.starts_with("ref:") {
        v.to_owned()
    } else if v.starts_with("refs/") {
        format!("ref:{v}")
    } else {
        format!("ref:refs/heads/{v}")
    }
}

/// A PR given as `123`, `#123` or a forge URL (`…/pull/123`, `…/merge_requests/123`).
pub fn pr_number_of(value: &str) -> Option<u32> {
    let v = value.trim().trim_start_matches('#');
    if !v.is_empty() && v.chars().all(|c| c.is_ascii_digit()) {
        return v.parse().ok();
    }
    if value.starts_with("http://") || value.starts_with("https://") {
        let mut parts = value.trim_end_matches('/').rsplit('/');
        let number = parts.next()?;
        let kind = parts.next()?;
        if matches!(kind, "pull" | "pulls" | "merge_requests") {
            return number.split(['?', '#']).next()?.parse().ok();
        }
    }
    None
}

/// agentlog's test for a path that may be shown or published: relative, no `..`, no empty or
/// `.` components, no backslash or colon, no redaction marker.
pub fn is_public_repo_path(p: &str) -> bool {
    !p.is_empty()
        && !p.starts_with('/')
        && !p.starts_with('~')
        && !p.contains('\\')
        && !p.contains(':')
        && !p.contains("[local path]")
        && !p.contains("[REDACTED")
        && !p.contains('\u{2039}')
        && p.split('/').all(|c| !c.is_empty() && c != "." && c != "..")
}

/// The target of the branch checked out in `repo`: a GitButler workspace's own `gitbutler/*`
/// branch names no one branch, and a detached HEAD none at all, so both ask for a target.
pub fn checked_out(repo: &super::repo::Repo) -> Result<Target> {
    use super::repo::Head;
    match repo.head()? {
        Head::Branch { name, .. } if !name.starts_with("gitbutler/") => Ok(Target::branch(&name)),
        Head::Branch { .. } => Err(Error::Invalid(format!(
            "{} is a GitButler workspace with several branches; pass one: cairn skim branch <name>",
            repo.root.display()
        ))),
        Head::Detached { commit } => Err(Error::Invalid(format!(
            "HEAD is detached at {} in {}; pass a target: cairn skim branch <name>",
            &commit[..commit.len().min(7)],
            repo.root.display()
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn branch_forms_normalise_alike() {
        for v in [
            "main",
            "branch:main",
            "refs/heads/main",
            "ref:refs/heads/main",
        ] {
            assert_eq!(
                Target::parse(TargetKind::Branch, v).unwrap().key,
                "ref:refs/heads/main"
            );
        }
    }

    #[test]
    fn reviews_accept_numbers_and_urls() {
        for v in [
            "123",
            "#123",
            "https://github.com/o/r/pull/123",
            "https://gitlab.com/o/r/-/merge_requests/123/",
        ] {
            let t = Target::parse(TargetKind::Review, v).unwrap();
            assert_eq!(t.pr_number, Some(123), "{v}");
        }
        let full = Target::parse(TargetKind::Review, "pull-request:ref:refs/heads/main#1").unwrap();
        assert_eq!(
            (full.key.as_str(), full.pr_number),
            ("pull-request:ref:refs/heads/main#1", Some(1))
        );
        assert_eq!(
            Target::parse(TargetKind::Review, "review-1").unwrap().key,
            "gitbutler-review:review-1"
        );
        assert_eq!(
            Target::parse(TargetKind::Change, "change-id:abc")
                .unwrap()
                .key,
            "gitbutler-change:abc"
        );
        assert!(Target::parse(TargetKind::Branch, " ").is_err());
    }

    #[test]
    fn public_paths() {
        for ok in ["src/lib.rs", "a", "docs/x.md"] {
            assert!(is_public_repo_path(ok), "{ok}");
        }
        for bad in [
            "../x",
            "~/x",
            "C:\\x",
            "src/../x",
            "src//x",
            "./x",
            "x/",
            "/abs",
            "[REDACTED:path]",
        ] {
            assert!(!is_public_repo_path(bad), "{bad}");
        }
    }
}

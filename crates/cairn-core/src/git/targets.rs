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

/// The head branch key of a `pull-request:<branch key>#<n>` key (`ref:refs/heads/x`).
pub fn pr_head_branch(key: &str) -> Option<String> {
    let (branch, _) = key.strip_prefix("pull-request:")?.rsplit_once('#')?;
    branch.starts_with("ref:").then(|| branch.to_owned())
}

/// A target key as a person names the target (`branch main`, `review #12 (main)`, `change
/// abc`, `commit 1a2b3c4d5e6f`): what human output shows, and what `cairn skim` takes back
/// (its kind, then its value). A key of no kind Cairn knows is shown as it is.
pub fn label(key: &str) -> String {
    if let Some(branch) = key.strip_prefix("ref:refs/heads/") {
        return format!("branch {branch}");
    }
    if let Some(pr) = key.strip_prefix("pull-request:") {
        return match pr.rsplit_once('#') {
            Some((branch, n)) => match branch.strip_prefix("ref:refs/heads/") {
                Some(b) => format!("review #{n} ({b})"),
                None => format!("review #{n}"),
            },
            None => format!("review {pr}"),
        };
    }
    if let Some(id) = key.strip_prefix("gitbutler-review:") {
        return format!("review {id}");
    }
    if let Some(id) = key.strip_prefix("gitbutler-change:") {
        return format!("change {id}");
    }
    if let Some(sha) = key.strip_prefix("commit:") {
        return format!("commit {}", sha.get(..12).unwrap_or(sha));
    }
    if let Some(r) = key.strip_prefix("ref:") {
        return format!("branch {r}");
    }
    key.to_owned()
}

/// A target key longer than this is refused (a branch name rarely passes 100).
pub const TARGET_MAX_CHARS: usize = 256;

impl Target {
    /// What a person named with `cairn link --to`: `#123` or a PR URL (a review, matched by
    /// number), `review:<id>`, `change:<id>` (or `change-id:`, `gitbutler-change:`), else a
    /// branch (`main`, `branch:main`, `refs/heads/main`). Checked with [`Target::check`].
    pub fn parse_to(value: &str) -> Result<Target> {
        let v = value.trim();
        let target = if v.starts_with('#') || v.starts_with("http://") || v.starts_with("https://")
        {
            if pr_number_of(v).is_none() {
                return Err(Error::Invalid(format!(
                    "{:?} names no pull request; write #123 or the PR's URL",
                    crate::text::one_line(v, 80)
                )));
            }
            Target::parse(TargetKind::Review, v)?
        } else if let Some(review) = v.strip_prefix("review:") {
            Target::parse(TargetKind::Review, review)?
        } else if let Some(change) = v.strip_prefix("change:") {
            Target::parse(TargetKind::Change, change)?
        } else if v.starts_with("change-id:") || v.starts_with("gitbutler-change:") {
            Target::parse(TargetKind::Change, v)?
        } else {
            Target::parse(TargetKind::Branch, v)?
        };
        target.check()?;
        Ok(target)
    }

    /// Refuse a target no repository could have: too long, a control or bidi character, white
    /// space, or (for a branch) a name git would refuse (`..`, `~^:?*[\\`, a leading `-`, …).
    /// For targets that arrive from outside (a command line, the window) before they are stored.
    pub fn check(&self) -> Result<()> {
        let bad = |why: &str| {
            Err(Error::Invalid(format!(
                "{} target {:?} {why}",
                self.kind.as_str(),
                crate::text::one_line(&self.key, 80)
            )))
        };
        if self.key.chars().count() > TARGET_MAX_CHARS {
            return bad(&format!("is longer than {TARGET_MAX_CHARS} characters"));
        }
        // Nor anything a reader does not see (`br<ZWSP>zw` was linked, then shown as `brzw`,
        // which names another branch) or that reorders what they see. The joiners and
        // variation selectors an emoji or a script is written with (`dev/👩‍💻`, `fix-☕️`, a
        // Persian name's ZWNJ), beside the characters they shape, are part of a name git
        // takes, and are kept.
        let chars: Vec<char> = self.key.chars().collect();
        let hides = |i: usize, c: char| {
            // A joiner or selector between two ASCII characters shapes nothing: `fix<ZWJ>x`
            // reads as `fixx`.
            let non_ascii = |j: Option<&char>| j.is_some_and(|c| !c.is_ascii());
            crate::text::is_ignorable(c)
                && !non_ascii(i.checked_sub(1).and_then(|p| chars.get(p)))
                && !non_ascii(chars.get(i + 1))
        };
        if chars.iter().enumerate().any(|(i, &c)| {
            c.is_control()
                || c.is_whitespace()
                || crate::text::is_invisible_break(c)
                || crate::text::is_bidi_control(c)
                || hides(i, c)
        }) {
            return bad("has white space, control or invisible characters");
        }
        if self.pr_number == Some(0) {
            return bad("names pull request 0, which no forge numbers");
        }
        let prefix = match self.kind {
            TargetKind::Branch => "ref:refs/",
            TargetKind::Review => "",
            TargetKind::Change => "gitbutler-change:",
        };
        let Some(name) = self.key.strip_prefix(prefix) else {
            return bad("is not a target key of its kind");
        };
        let git_refuses = name == "heads/HEAD"
            || name.ends_with('.')
            || name.contains("..")
            || name.contains("@{")
            || name.contains(['~', '^', ':', '?', '*', '[', '\\'])
            // git refuses a leading `-` on the branch name (`git check-ref-format --branch`),
            // not on a later part of it (`feature/-wip` is a branch).
            || name.strip_prefix("heads/").unwrap_or(name).starts_with('-')
            || name.split('/').any(|part| {
                part.is_empty() || part.starts_with('.') || part.ends_with(".lock")
            });
        if self.kind == TargetKind::Branch && git_refuses {
            return bad("is not a branch name git accepts");
        }
        if self.kind != TargetKind::Branch && name.is_empty() {
            return bad("is empty");
        }
        Ok(())
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
    fn a_key_is_labelled_as_a_person_names_the_target() {
        for (key, want) in [
            ("ref:refs/heads/feature/x", "branch feature/x"),
            ("pull-request:ref:refs/heads/main#12", "review #12 (main)"),
            ("pull-request:#42", "review #42"),
            ("gitbutler-review:r1", "review r1"),
            ("gitbutler-change:abc", "change abc"),
            ("commit:1a2b3c4d5e6f7a8b9c0d", "commit 1a2b3c4d5e6f"),
            ("something-else", "something-else"),
        ] {
            assert_eq!(label(key), want, "{key}");
        }
    }

    #[test]
    fn a_branch_name_git_takes_is_taken_and_one_that_hides_or_reorders_is_not() {
        for name in [
            "feature/-wip",
            "fix-☕\u{fe0f}",
            "dev/👩\u{200d}💻",
            "نام\u{200c}ها",
        ] {
            assert!(Target::branch(name).check().is_ok(), "{name}");
        }
        for name in [
            "-wip",
            "br\u{200b}zw",
            "feat\u{202e}x",
            "a..b",
            "x.lock",
            "a/.b",
        ] {
            assert!(Target::branch(name).check().is_err(), "{name}");
        }
    }

    /// `cairn link --to` refuses what names no target a repository could have: an invisible
    /// character (linked, then shown as another branch's name), `HEAD`, pull request 0.
    #[test]
    fn link_targets_no_repository_could_have_are_refused() {
        for bad in ["br\u{200b}zw", "fix\u{200d}x", "HEAD", "#0", "a\u{ad}b"] {
            assert!(Target::parse_to(bad).is_err(), "{bad:?}");
        }
        for good in [
            "main",
            "feature/login",
            "#12",
            "https://github.com/o/r/pull/5",
        ] {
            assert!(Target::parse_to(good).is_ok(), "{good}");
        }
    }

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
    fn link_targets_name_their_kind_and_refuse_what_git_would() {
        let cases = [
            ("main", TargetKind::Branch, "ref:refs/heads/main", None),
            (
                "feature/login",
                TargetKind::Branch,
                "ref:refs/heads/feature/login",
                None,
            ),
            ("#42", TargetKind::Review, "pull-request:#42", Some(42)),
            (
                "https://github.com/o/r/pull/7",
                TargetKind::Review,
                "pull-request:#7",
                Some(7),
            ),
            (
                "review:r-1",
                TargetKind::Review,
                "gitbutler-review:r-1",
                None,
            ),
            (
                "change:abc",
                TargetKind::Change,
                "gitbutler-change:abc",
                None,
            ),
            (
                "change-id:abc",
                TargetKind::Change,
                "gitbutler-change:abc",
                None,
            ),
        ];
        for (v, kind, key, pr) in cases {
            let t = Target::parse_to(v).unwrap();
            assert_eq!(
                (t.kind, t.key.as_str(), t.pr_number),
                (kind, key, pr),
                "{v}"
            );
        }
        let long = "a".repeat(TARGET_MAX_CHARS + 1);
        for bad in [
            "",
            "  ",
            "#",
            "#x",
            "https://example.com/not-a-pr",
            "a..b",
            "-rf",
            "x.lock",
            "a b",
            "feat\u{1b}[31m",
            "feat\u{202e}x",
            "ma~in",
            "ma^in",
            "we:ird",
            "a*",
            "x@{1}",
            "trailing/",
            "change:",
            "review:",
            long.as_str(),
        ] {
            assert!(Target::parse_to(bad).is_err(), "{bad:?}");
        }
        // A target from the window is checked as well.
        let forged = Target {
            kind: TargetKind::Branch,
            key: "gitbutler-change:x".into(),
            pr_number: None,
        };
        assert!(forged.check().is_err());
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

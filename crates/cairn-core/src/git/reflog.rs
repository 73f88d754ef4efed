//! What a worktree had checked out, and when: its HEAD reflog (`<git dir>/logs/HEAD`).
//!
//! A session first read long after it ended (an import of last month's transcripts, a first
//! `cairn sync`) had no capture while it ran, so no snapshot says which branch its folder was
//! on. Git kept that: every checkout, switch and rebase's return writes a line to the reflog of
//! the worktree's HEAD with its time. [`HeadLog::on_between`] reads the branches HEAD was on
//! over a span of time from it; association links them as `ran_on_branch` (weak).
//!
//! A branch's own reflog begins with its creation (`branch: Created from main`): [`created`]
//! tells a branch that did work from one that only forked after it was done.
//!
//! Only what the default `files` ref storage writes is read: a repository with `reftable`
//! storage has no `logs/HEAD` and gets nothing here. Nothing before the first entry kept
//! (`git gc` expires entries after 90 days by default) is guessed.

use std::collections::HashSet;
use std::io::{BufRead, Read, Seek, SeekFrom};
use std::path::Path;

use super::repo::Repo;

/// At most this much of a reflog's end is read: a reflog `git gc` keeps is far smaller; one
/// never expired keeps its latest entries, which are what a recent session needs.
const MAX_READ: u64 = 8 << 20;

/// A branch prefix GitButler's own workspace commit lives on: not work of its own.
const WORKSPACE_PREFIX: &str = "gitbutler/";

/// HEAD's moves between branches in one worktree, oldest first.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct HeadLog {
    /// The time of the first entry read: what HEAD was on before it is not known.
    since: i64,
    moves: Vec<Move>,
    /// The branch HEAD is on now (none: detached, or not known).
    now: Option<String>,
}

/// HEAD went from one branch to another (none: a detached HEAD, or not a branch).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Move {
    at: i64,
    from: Option<String>,
    to: Option<String>,
}

impl HeadLog {
    /// The HEAD reflog of `repo`'s worktree, or none when it has none (reftable storage, a
    /// reflog switched off, a repository never checked out).
    pub fn read(repo: &Repo) -> Option<HeadLog> {
        let text = tail(&repo.git_dir.join("logs").join("HEAD"))?;
        let refs = Refs::of(repo);
        let now = crate::archive::project::small_file(&repo.git_dir.join("HEAD")).and_then(|h| {
            h.trim()
                .strip_prefix("ref: refs/heads/")
                .and_then(|b| refs.branch(b))
        });
        HeadLog::parse(&text, &refs, now)
    }

    fn parse(text: &str, refs: &Refs, now: Option<String>) -> Option<HeadLog> {
        let mut since = None;
        let mut moves = Vec::new();
        for line in text.lines() {
            let Some((at, message)) = entry(line) else {
                continue;
            };
            since.get_or_insert(at);
            if let Some((from, to)) = moved(message) {
                moves.push(Move {
                    at,
                    from: from.and_then(|f| refs.branch(f)),
                    to: refs.branch(to),
                });
            }
        }
        // Entries are written in time order; a clock set back leaves them out of it.
        moves.sort_by_key(|m| m.at);
        Some(HeadLog {
            since: since?,
            moves,
            now,
        })
    }

    /// The branches HEAD was on at some time from `start` to `end` (seconds since the epoch),
    /// in the order it came to them, each with when it first was in that span; nothing for a
    /// span the reflog does not reach.
    pub fn on_between(&self, start: i64, end: i64) -> Vec<(String, i64)> {
        let start = start.max(self.since);
        if end < start {
            return Vec::new();
        }
        let split = self.moves.partition_point(|m| m.at <= start);
        let at_start = match split.checked_sub(1) {
            Some(last) => self.moves[last].to.clone(),
            None => match self.moves.first() {
                Some(next) => next.from.clone(),
                None => self.now.clone(),
            },
        };
        let mut seen = HashSet::new();
        at_start
            .map(|b| (b, start))
            .into_iter()
            .chain(
                self.moves[split..]
                    .iter()
                    .take_while(|m| m.at <= end)
                    .filter_map(|m| Some((m.to.clone()?, m.at))),
            )
            .filter(|(b, _)| seen.insert(b.clone()))
            .collect()
    }
}

/// Where and when a branch began in this repository.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Created {
    /// Seconds since the epoch.
    pub at: i64,
    /// The commit it was created at.
    pub commit: String,
}

/// When and at which commit `branch` was created here, from the first entry of its reflog when
/// that entry is its creation; none when its reflog is gone, was cut by `git gc` (its first
/// entry is then a later update) or the branch came from elsewhere.
pub fn created(repo: &Repo, branch: &str) -> Option<Created> {
    // A name git lists never climbs out of `refs/heads`; one that would is not read.
    if branch
        .split('/')
        .any(|part| part.is_empty() || part == "." || part == "..")
    {
        return None;
    }
    let path = repo
        .common_dir
        .join("logs")
        .join("refs")
        .join("heads")
        .join(branch);
    let mut first = String::new();
    std::io::BufReader::new(open_file(&path)?.take(4096))
        .read_line(&mut first)
        .ok()?;
    let (at, message) = entry(first.trim_end_matches('\n'))?;
    let commit = first.split(' ').nth(1)?;
    let is_object = commit.len() >= 40 && commit.chars().all(|c| c.is_ascii_hexdigit());
    (message.starts_with("branch: Created from") && is_object).then(|| Created {
        at,
        commit: commit.to_owned(),
    })
}

/// `path` opened for reading when it is a regular file (a FIFO put there would block the read).
fn open_file(path: &Path) -> Option<std::fs::File> {
    if !std::fs::symlink_metadata(path).ok()?.is_file() {
        return None;
    }
    std::fs::File::open(path).ok()
}

/// The last [`MAX_READ`] bytes of `path`, from its first whole line.
fn tail(path: &Path) -> Option<String> {
    let mut file = open_file(path)?;
    let len = file.metadata().ok()?.len();
    let from = len.saturating_sub(MAX_READ);
    file.seek(SeekFrom::Start(from)).ok()?;
    let mut bytes = Vec::new();
    file.take(MAX_READ).read_to_end(&mut bytes).ok()?;
    if from > 0 {
        let first = bytes
            .iter()
            .position(|&b| b == b'\n')
            .map_or(bytes.len(), |i| i + 1);
        bytes.drain(..first);
    }
    Some(String::from_utf8_lossy(&bytes).into_owned())
}

/// One reflog line, `<old> <new> <name> <<email>> <seconds> <zone>\t<message>`: its time and
/// message. Git takes `<` and `>` out of names but not tabs, so the message begins at the first
/// tab after `> <seconds> <zone>`.
fn entry(line: &str) -> Option<(i64, &str)> {
    line.match_indices('\t').find_map(|(at, _)| {
        let (_, when) = line[..at].rsplit_once('>')?;
        let mut parts = when.split_whitespace();
        let seconds = parts.next()?.parse().ok()?;
        let zone = parts.next()?;
        let zone_ok = zone.len() == 5
            && zone.starts_with(['+', '-'])
            && zone[1..].chars().all(|c| c.is_ascii_digit());
        (zone_ok && parts.next().is_none()).then(|| (seconds, &line[at + 1..]))
    })
}

/// What a message says HEAD moved from and to, when it moved between refs: a checkout or
/// switch, a rebase returning to its branch (which left none: HEAD was detached while it ran),
/// a rename of the branch HEAD was on.
fn moved(message: &str) -> Option<(Option<&str>, &str)> {
    if let Some(rest) = message.strip_prefix("checkout: moving from ") {
        let (from, to) = rest.rsplit_once(" to ")?;
        return Some((Some(from), to));
    }
    if let Some((_, to)) = message.split_once(": returning to refs/heads/")
        && message.starts_with("rebase")
    {
        return Some((None, to));
    }
    // `git rebase <upstream> <branch>` with the branch up to date: it only checks it out.
    if let Some(to) = message.strip_prefix("rebase: checkout ") {
        return Some((None, to));
    }
    if let Some(rest) = message.strip_prefix("Branch: renamed refs/heads/") {
        let (from, to) = rest.split_once(" to refs/heads/")?;
        return Some((Some(from), to));
    }
    None
}

/// The repository's refs, to tell a branch checked out from a tag, a remote branch or a commit
/// (`checkout: moving from main to v1.2` left HEAD detached).
#[derive(Debug, Default)]
struct Refs {
    heads: HashSet<String>,
    /// Tags and remote-tracking branches, as a checkout names them (`v1.2`, `origin/main`).
    others: HashSet<String>,
    /// The remotes those branches are of (`origin`): `origin/gone`, pruned since, is no branch.
    remotes: HashSet<String>,
}

impl Refs {
    fn of(repo: &Repo) -> Refs {
        let mut refs = Refs::default();
        let out = repo
            .git(&[
                "for-each-ref",
                "--format=%(refname)",
                "refs/heads",
                "refs/tags",
                "refs/remotes",
            ])
            .unwrap_or_default();
        for name in out.lines() {
            if let Some(head) = name.strip_prefix("refs/heads/") {
                refs.heads.insert(head.to_owned());
            } else if let Some(other) = name.strip_prefix("refs/tags/") {
                refs.others.insert(other.to_owned());
            } else if let Some(other) = name.strip_prefix("refs/remotes/") {
                if let Some((remote, _)) = other.split_once('/') {
                    refs.remotes.insert(remote.to_owned());
                }
                refs.others.insert(other.to_owned());
            }
        }
        refs
    }

    /// `name` as a branch HEAD was on, or none: a commit (an abbreviated id too), a tag, a
    /// remote branch (of a remote this repository has, pruned since too), a revision
    /// (`HEAD~2`), a pseudo-ref (`FETCH_HEAD`), GitButler's workspace. A name that is none of
    /// these and no branch today was a branch since deleted (a merged feature branch).
    fn branch(&self, name: &str) -> Option<String> {
        let name = name.trim();
        if name.is_empty() || name.starts_with(WORKSPACE_PREFIX) {
            return None;
        }
        if self.heads.contains(name) {
            return Some(name.to_owned());
        }
        let revision = name == "HEAD"
            || name.contains("@{")
            || name
                .chars()
                .any(|c| c.is_whitespace() || c.is_control() || "~^:?*[\\".contains(c));
        // Git abbreviates an id to 4 digits at the least.
        let commit = name.len() >= 4 && name.chars().all(|c| c.is_ascii_hexdigit());
        let pseudo =
            name.ends_with("HEAD") && name.chars().all(|c| c.is_ascii_uppercase() || c == '_');
        let remote = name
            .split_once('/')
            .is_some_and(|(first, _)| self.remotes.contains(first));
        (!revision && !commit && !pseudo && !remote && !self.others.contains(name))
            .then(|| name.to_owned())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refs(heads: &[&str], others: &[&str]) -> Refs {
        Refs {
            heads: heads.iter().map(|s| (*s).to_owned()).collect(),
            others: others.iter().map(|s| (*s).to_owned()).collect(),
            remotes: others
                .iter()
                .filter_map(|o| Some(o.split_once('/')?.0.to_owned()))
                .collect(),
        }
    }

    fn line(at: i64, message: &str) -> String {
        format!(
            "{z} {z} A Person <a@example.com> {at} +0100\t{message}\n",
            z = "0".repeat(40)
        )
    }

    fn names(on: Vec<(String, i64)>) -> Vec<String> {
        on.into_iter().map(|(b, _)| b).collect()
    }

    fn log(entries: &[(i64, &str)], refs: &Refs, now: Option<&str>) -> HeadLog {
        let text: String = entries.iter().map(|(at, m)| line(*at, m)).collect();
        HeadLog::parse(&text, refs, now.map(str::to_owned)).expect("entries")
    }

    #[test]
    fn the_branch_at_a_time_is_the_last_checkout_before_it() {
        let refs = refs(&["main", "feat"], &[]);
        let log = log(
            &[
                (100, "clone: from https://example.com/r.git"),
                (200, "checkout: moving from main to feat"),
                (300, "commit: work"),
                (400, "checkout: moving from feat to main"),
            ],
            &refs,
            Some("main"),
        );
        assert_eq!(names(log.on_between(150, 180)), ["main"]);
        assert_eq!(names(log.on_between(250, 350)), ["feat"]);
        assert_eq!(
            log.on_between(150, 450),
            [("main".to_owned(), 150), ("feat".to_owned(), 200)]
        );
        assert_eq!(names(log.on_between(500, 600)), ["main"]);
    }

    #[test]
    fn nothing_before_the_reflog_begins() {
        let refs = refs(&["main"], &[]);
        let log = log(&[(1000, "commit (initial): first")], &refs, Some("main"));
        assert!(log.on_between(10, 900).is_empty());
        assert_eq!(names(log.on_between(10, 1100)), ["main"]);
    }

    #[test]
    fn a_tag_a_remote_branch_or_a_commit_is_no_branch() {
        let refs = refs(&["main"], &["v1.2", "origin/main"]);
        let log = log(
            &[
                (100, "commit (initial): first"),
                (200, "checkout: moving from main to v1.2"),
                (300, "checkout: moving from v1.2 to origin/main"),
                (
                    400,
                    "checkout: moving from origin/main to 0123456789abcdef0123456789abcdef01234567",
                ),
                (
                    500,
                    "checkout: moving from 0123456789abcdef0123456789abcdef01234567 to HEAD~2",
                ),
                (600, "checkout: moving from HEAD~2 to gitbutler/workspace"),
                (
                    610,
                    "checkout: moving from gitbutler/workspace to FETCH_HEAD",
                ),
                (620, "checkout: moving from FETCH_HEAD to 75d62"),
                (630, "checkout: moving from 75d62 to origin/pruned-since"),
            ],
            &refs,
            None,
        );
        assert_eq!(names(log.on_between(150, 700)), ["main"]);
        assert!(log.on_between(250, 700).is_empty());
    }

    #[test]
    fn a_deleted_branch_is_still_the_branch_it_was() {
        let refs = refs(&["main"], &[]);
        let log = log(
            &[
                (100, "commit (initial): first"),
                (200, "checkout: moving from main to fix/crash"),
                (300, "checkout: moving from fix/crash to main"),
            ],
            &refs,
            Some("main"),
        );
        assert_eq!(names(log.on_between(210, 220)), ["fix/crash"]);
    }

    #[test]
    fn a_rebase_returns_to_its_branch_and_a_rename_moves_head() {
        let refs = refs(&["main", "feat", "topic", "rb"], &[]);
        // `git rebase main feat` run on main: HEAD leaves main for feat through the rebase.
        let log = log(
            &[
                (100, "commit (initial): first"),
                (200, "rebase (start): checkout main"),
                (210, "rebase (pick): work"),
                (220, "rebase (finish): returning to refs/heads/feat"),
                (300, "Branch: renamed refs/heads/feat to refs/heads/topic"),
                (400, "rebase: checkout rb"),
            ],
            &refs,
            Some("rb"),
        );
        // Before the rebase the log does not say where HEAD was (the rebase's return names only
        // where it went).
        assert!(log.on_between(150, 160).is_empty());
        assert_eq!(names(log.on_between(225, 230)), ["feat"]);
        assert_eq!(names(log.on_between(250, 350)), ["feat", "topic"]);
        assert_eq!(names(log.on_between(410, 420)), ["rb"]);
    }

    #[test]
    fn no_checkout_at_all_is_the_branch_of_today() {
        let refs = refs(&["main"], &[]);
        let log = log(
            &[(100, "commit (initial): first"), (200, "commit: more")],
            &refs,
            Some("main"),
        );
        assert_eq!(names(log.on_between(150, 160)), ["main"]);
        let detached = HeadLog::parse(&line(100, "commit (initial): first"), &refs, None);
        assert!(detached.expect("an entry").on_between(150, 160).is_empty());
    }

    #[test]
    fn a_branch_was_created_where_its_first_entry_says_and_only_then() {
        let tmp = tempfile::tempdir().expect("tmp");
        let repo = Repo {
            root: tmp.path().to_owned(),
            git_dir: tmp.path().join(".git"),
            common_dir: tmp.path().join(".git"),
        };
        let heads = repo.common_dir.join("logs/refs/heads");
        std::fs::create_dir_all(heads.join("fix")).expect("dirs");
        let sha = "ab".repeat(20);
        let write = |name: &str, message: &str| {
            let line = format!(
                "{} {sha} A <a@example.com> 500 +0000\t{message}\n",
                "0".repeat(40)
            );
            std::fs::write(heads.join(name), line.repeat(2)).expect("write");
        };
        write("fix/crash", "branch: Created from main");
        write("cut", "commit: a later update, the creation expired");
        assert_eq!(
            created(&repo, "fix/crash"),
            Some(Created {
                at: 500,
                commit: sha.clone()
            })
        );
        assert_eq!(created(&repo, "cut"), None);
        assert_eq!(created(&repo, "missing"), None);
        std::fs::write(tmp.path().join("outside"), "x").expect("write");
        assert_eq!(created(&repo, "../../../outside"), None);
        assert_eq!(created(&repo, "fix//crash"), None);
    }

    #[test]
    fn hostile_lines_are_skipped() {
        let refs = refs(&["main", "feat"], &[]);
        let text = format!(
            "garbage\n\t\n>\tno time\nx y z <e> notanumber +0000\tcheckout: moving from main to feat\n{}{}\u{1b}[2J\n",
            line(100, "checkout: moving from main to feat"),
            line(200, "checkout: moving from feat to ma\u{7}in"),
        );
        let log = HeadLog::parse(&text, &refs, None).expect("two entries");
        assert_eq!(names(log.on_between(150, 250)), ["feat"]);
        // A tab in a committer's name (git keeps it) does not cut the line there.
        let tabbed = format!(
            "{z} {z} A\tB <a@example.com> 300 +0000\tcheckout: moving from main to feat\n",
            z = "0".repeat(40)
        );
        let log = HeadLog::parse(&tabbed, &refs, None).expect("an entry");
        assert_eq!(names(log.on_between(310, 320)), ["feat"]);
        assert!(HeadLog::parse("no entries\n", &refs, None).is_none());
    }
}

//! A git repository, read through the `git` command (the one every machine with a repository
//! already has; it knows worktrees, alternates and every config the user set).
//!
//! Every call runs with `GIT_OPTIONAL_LOCKS=0` (a status never takes the index lock from under
//! the user's own git), `LC_ALL=C` (parseable output), no pager or prompts, and
//! `core.fsmonitor` off: the directory comes from a transcript or a hook payload, and a
//! repository's own config could name a command that `git status` would otherwise run.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::error::{Error, Result};

/// An opened repository with a worktree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Repo {
    /// The worktree root (a linked worktree's own root, not the main one).
    pub root: PathBuf,
    /// `.git` of this worktree (for a linked worktree: `<common>/worktrees/<name>`).
    pub git_dir: PathBuf,
    /// The shared git dir (where refs and objects live).
    pub common_dir: PathBuf,
}

/// Where HEAD points.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Head {
    /// On a branch (`refs/heads/<name>`), with its commit unless the branch is unborn.
    Branch {
        name: String,
        commit: Option<String>,
    },
    /// A detached HEAD at a commit.
    Detached { commit: String },
}

/// One commit, with what Cairn needs to link work to it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommitInfo {
    pub id: String,
    /// Committer time, seconds since the epoch.
    pub time: i64,
    pub subject: String,
    /// A `change-id` header (jj, GitButler) or a `Change-Id:` trailer (Gerrit).
    pub change_id: Option<String>,
    /// Paths the commit changed (renames give both paths), repo-relative.
    pub files: Vec<String>,
}

fn git_error(dir: &Path, message: impl Into<String>) -> Error {
    Error::Git {
        dir: dir.to_owned(),
        message: message.into(),
    }
}

/// `git -C dir args…` with Cairn's environment (see the module docs).
fn git_command(dir: &Path, args: &[&str]) -> Command {
    let mut cmd = Command::new("git");
    cmd.args(["-c", "core.fsmonitor=false", "-C"])
        .arg(dir)
        .args(args)
        .env("GIT_OPTIONAL_LOCKS", "0")
        .env("LC_ALL", "C")
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("GIT_PAGER", "cat")
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE");
    // An identity set in the environment would win over the `-c user.*` a caller passes.
    for var in [
        "GIT_AUTHOR_NAME",
        "GIT_AUTHOR_EMAIL",
        "GIT_COMMITTER_NAME",
        "GIT_COMMITTER_EMAIL",
    ] {
        cmd.env_remove(var);
    }
    cmd
}

/// Run git in `dir` and return stdout, or an error carrying git's own message.
pub fn run_git(dir: &Path, args: &[&str]) -> Result<String> {
    run_git_input(dir, args, None)
}

/// [`run_git`] with `input` written to git's stdin (by a second thread, so a large output
/// cannot block the write).
fn run_git_input(dir: &Path, args: &[&str], input: Option<String>) -> Result<String> {
    let out = run_git_raw(dir, args, input.map(String::into_bytes))?;
    git_output(dir, verb(args), out)
}

/// The subcommand in `args` (after any `-c key=value` pairs), for messages.
pub(crate) fn verb<'a>(args: &[&'a str]) -> &'a str {
    let mut rest = args;
    while let [flag, _, tail @ ..] = rest {
        if *flag != "-c" {
            break;
        }
        rest = tail;
    }
    rest.first().copied().unwrap_or("")
}

/// Run git in `dir` with `input` (if any) on stdin and return its whole output, whatever its
/// exit status: for commands whose output is bytes (`cat-file --batch`) or whose partial
/// success matters (a fetch that refused some refs). Fails only when git cannot run.
pub(crate) fn run_git_raw(
    dir: &Path,
    args: &[&str],
    input: Option<Vec<u8>>,
) -> Result<std::process::Output> {
    let mut cmd = git_command(dir, args);
    cmd.stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .stdin(if input.is_some() {
            std::process::Stdio::piped()
        } else {
            std::process::Stdio::null()
        });
    let mut child = cmd
        .spawn()
        .map_err(|e| git_error(dir, format!("cannot run git ({e}); is git installed?")))?;
    let writer = match (input, child.stdin.take()) {
        (Some(bytes), Some(mut stdin)) => Some(std::thread::spawn(move || {
            use std::io::Write as _;
            // A failed write shows up as git's own error below.
            let _ = stdin.write_all(&bytes);
        })),
        _ => None,
    };
    let out = child
        .wait_with_output()
        .map_err(|e| git_error(dir, format!("cannot run git ({e}); is git installed?")))?;
    if let Some(w) = writer {
        let _ = w.join();
    }
    Ok(out)
}

/// A failed git's message, as [`run_git`] reports it: its `fatal:`/`error:` line, else the
/// first line of its stderr.
pub(crate) fn git_failure(dir: &Path, verb: &str, out: &std::process::Output) -> Error {
    let stderr = String::from_utf8_lossy(&out.stderr);
    let first = stderr
        .lines()
        .find(|l| l.starts_with("fatal:") || l.starts_with("error:"))
        .or_else(|| stderr.lines().find(|l| !l.trim().is_empty()))
        .unwrap_or("git failed");
    git_error(dir, format!("git {verb}: {}", first.trim()))
}

/// `git for-each-ref` listing the local branches and their heads ([`parse_branches`]).
pub const BRANCHES_ARGS: &[&str] = &[
    "for-each-ref",
    "--format=%(refname:short)%00%(objectname)",
    "refs/heads",
];

/// [`BRANCHES_ARGS`]' output: `(branch, head)` pairs.
pub fn parse_branches(out: &str) -> Vec<(String, String)> {
    out.lines()
        .filter_map(|l| l.split_once('\0'))
        .map(|(n, c)| (n.to_owned(), c.to_owned()))
        .collect()
}

/// Start `git -C dir args…` without waiting for it (no stdin); collect it with
/// [`Running::finish`]. Lets independent reads run side by side.
pub fn start_git(dir: &Path, args: &[&str]) -> Running {
    let child = git_command(dir, args)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn();
    Running {
        dir: dir.to_owned(),
        verb: verb(args).to_owned(),
        child,
    }
}

/// A git command started with [`start_git`]: it runs while the caller does other work.
#[derive(Debug)]
pub struct Running {
    dir: PathBuf,
    verb: String,
    child: std::io::Result<std::process::Child>,
}

impl Running {
    /// Wait for the command and return its stdout, as [`run_git`] would.
    pub fn finish(self) -> Result<String> {
        let dir = self.dir;
        let out = self
            .child
            .and_then(std::process::Child::wait_with_output)
            .map_err(|e| git_error(&dir, format!("cannot run git ({e}); is git installed?")))?;
        git_output(&dir, &self.verb, out)
    }
}

/// stdout of a finished git command, or an error carrying git's first line of stderr.
fn git_output(dir: &Path, verb: &str, out: std::process::Output) -> Result<String> {
    if !out.status.success() {
        return Err(git_failure(dir, verb, &out));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Whether `dir` or a folder above it holds a `.git` (a worktree's folder, or the file of a
/// linked worktree). Without one no worktree contains `dir`, so no git process is started to
/// look for it (a sync reads many sessions whose folders are in no repository). A relative
/// `dir` is in none: a session's folder comes from its transcript, and `.` or `../x` there
/// would name the folder Cairn happens to run in, not one the agent worked in.
pub fn may_be_in_worktree(dir: &Path) -> bool {
    dir.is_absolute() && dir.ancestors().any(|d| d.join(".git").exists())
}

impl Repo {
    /// The repository containing `dir`. A bare repository is refused: Cairn links sessions to
    /// the work in a worktree.
    pub fn discover(dir: &Path) -> Result<Repo> {
        let out = run_git(
            dir,
            &[
                "rev-parse",
                "--is-bare-repository",
                "--absolute-git-dir",
                "--git-common-dir",
                "--show-toplevel",
            ],
        )
        .map_err(|_| {
            // Named as a person finds it: `.` says nothing when the command ran elsewhere.
            let shown = std::path::absolute(dir).unwrap_or_else(|_| dir.to_owned());
            let why = if dir.is_dir() {
                "no git repository found here; use -C to choose a repository"
            } else if dir.exists() {
                "a file, not a folder; use -C to choose a repository"
            } else {
                "no such folder; use -C to choose a repository"
            };
            git_error(&shown, why)
        })?;
        let mut lines = out.lines();
        let bare = lines.next() == Some("true");
        if bare {
            return Err(git_error(
                dir,
                "bare repositories are not supported: run Cairn in a worktree of this repository (git worktree add)",
            ));
        }
        let git_dir = PathBuf::from(lines.next().unwrap_or_default());
        let common = lines.next().unwrap_or_default();
        let root = PathBuf::from(lines.next().unwrap_or_default());
        if root.as_os_str().is_empty() {
            return Err(git_error(
                dir,
                "this directory is inside .git, not a worktree; use -C to choose one",
            ));
        }
        let common_dir = if Path::new(common).is_absolute() {
            PathBuf::from(common)
        } else {
            dir.join(common)
        };
        let common_dir = std::fs::canonicalize(&common_dir).unwrap_or(common_dir);
        Ok(Repo {
            root,
            git_dir,
            common_dir,
        })
    }

    pub fn git(&self, args: &[&str]) -> Result<String> {
        run_git(&self.root, args)
    }

    /// The roots of every worktree of this repository (this one's too), as git lists them
    /// (NUL-separated, so any folder name reads whole); a bare main folder is not one. Empty
    /// when git cannot say (a git older than 2.36 has no `-z` here).
    pub fn worktree_roots(&self) -> Vec<PathBuf> {
        let Ok(list) = self.git(&["worktree", "list", "--porcelain", "-z"]) else {
            return Vec::new();
        };
        list.split("\0\0")
            .filter(|record| !record.split('\0').any(|field| field == "bare"))
            .filter_map(|record| record.split('\0').next()?.strip_prefix("worktree "))
            .map(PathBuf::from)
            .collect()
    }

    pub fn head(&self) -> Result<Head> {
        let symbolic = self.git(&["symbolic-ref", "-q", "HEAD"]).ok();
        let commit = self
            .git(&["rev-parse", "-q", "--verify", "HEAD^{commit}"])
            .ok()
            .map(|s| s.trim().to_owned());
        match symbolic.map(|s| s.trim().to_owned()) {
            Some(r) if r.starts_with("refs/heads/") => Ok(Head::Branch {
                name: r.trim_start_matches("refs/heads/").to_owned(),
                commit: commit.filter(|c| !c.is_empty()),
            }),
            _ => match commit {
                Some(c) if !c.is_empty() => Ok(Head::Detached { commit: c }),
                _ => Err(git_error(&self.root, "HEAD points nowhere")),
            },
        }
    }

    /// Local branches and the commits they point at.
    pub fn branches(&self) -> Result<Vec<(String, String)>> {
        self.git(BRANCHES_ARGS).map(|out| parse_branches(&out))
    }

    /// Paths with uncommitted changes in the worktree (modified, added, deleted, untracked).
    pub fn dirty_paths(&self) -> Result<Vec<String>> {
        let out = self.git(&[
            "status",
            "--porcelain=v1",
            "-z",
            "--untracked-files=all",
            "--no-renames",
        ])?;
        let mut paths: Vec<String> = out
            .split('\0')
            .filter(|e| e.len() > 3)
            .map(|e| e[3..].to_owned())
            .collect();
        paths.sort();
        paths.dedup();
        Ok(paths)
    }

    /// Commits reachable from `tips` and not from `exclude`, newest first, with changed paths.
    /// `since` limits by committer time (seconds since the epoch).
    pub fn commits(
        &self,
        tips: &[&str],
        exclude: &[&str],
        since: Option<i64>,
        limit: Option<usize>,
    ) -> Result<Vec<CommitInfo>> {
        self.commits_touching(tips, exclude, (since, None), limit, &[])
    }

    /// [`Repo::commits`] made within `window` (committer time `(since, until)`, each bound
    /// optional) and limited to the commits that touch one of `paths` (repo-relative, taken
    /// literally), each listing only those of its files; every commit when `paths` is empty.
    /// Only the commits in the window are diffed: the cost follows the window, not how much
    /// history came after it.
    pub fn commits_touching(
        &self,
        tips: &[&str],
        exclude: &[&str],
        window: (Option<i64>, Option<i64>),
        limit: Option<usize>,
        paths: &[&str],
    ) -> Result<Vec<CommitInfo>> {
        let (since, until) = window;
        if tips.is_empty() {
            return Ok(Vec::new());
        }
        let mut args: Vec<String> = vec![
            "log".into(),
            "-z".into(),
            "--no-renames".into(),
            "--name-only".into(),
            "--format=%x1e%H%x1f%ct%x1f%s%x1f%(trailers:key=Change-Id,valueonly,separator=%x2c)%x1f%B".into(),
        ];
        if let Some(s) = since {
            args.push(format!("--since=@{s}"));
        }
        if let Some(u) = until {
            args.push(format!("--until=@{u}"));
        }
        if let Some(n) = limit {
            args.push(format!("--max-count={n}"));
        }
        args.extend(tips.iter().map(|t| (*t).to_owned()));
        args.extend(exclude.iter().map(|e| format!("^{e}")));
        args.push("--".into());
        args.extend(paths.iter().map(|p| format!(":(literal){p}")));
        let refs: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = self.git(&refs)?;
        let mut commits = Vec::new();
        for chunk in out
            .split('\u{1e}')
            .filter(|c| !c.trim_matches('\0').trim().is_empty())
        {
            let mut fields = chunk.splitn(5, '\u{1f}');
            let id = fields.next().unwrap_or_default().trim().to_owned();
            let time = fields
                .next()
                .and_then(|t| t.trim().parse().ok())
                .unwrap_or(0);
            let subject = fields.next().unwrap_or_default().to_owned();
            let trailer = fields.next().unwrap_or_default().trim().to_owned();
            let rest = fields.next().unwrap_or_default();
            // The body ends where the NUL-separated file list starts.
            let (_, files) = rest.split_once('\0').unwrap_or((rest, ""));
            let files: Vec<String> = files
                .split('\0')
                .map(|f| f.trim_start_matches('\n').to_owned())
                .filter(|f| !f.is_empty())
                .collect();
            if id.len() < 40 {
                continue;
            }
            commits.push(CommitInfo {
                id,
                time,
                subject,
                change_id: (!trailer.is_empty())
                    .then(|| trailer.split(',').next().unwrap_or_default().to_owned()),
                files,
            });
        }
        // Headers are not in `log` output: jj and GitButler write `change-id` there. One more
        // git for all of them (one per commit made a hook in a busy repository spawn hundreds).
        let missing: Vec<&str> = commits
            .iter()
            .filter(|c| c.change_id.is_none())
            .map(|c| c.id.as_str())
            .collect();
        if !missing.is_empty() {
            let headers = self.change_id_headers(&missing);
            for c in commits.iter_mut().filter(|c| c.change_id.is_none()) {
                c.change_id = headers.get(&c.id).cloned();
            }
        }
        Ok(commits)
    }

    /// The `change-id` headers of these commits (those that have one), from their raw form.
    fn change_id_headers(&self, ids: &[&str]) -> std::collections::HashMap<String, String> {
        let mut input = ids.join("\n");
        input.push('\n');
        let raw = run_git_input(
            &self.root,
            &["log", "--no-walk=unsorted", "--stdin", "--pretty=raw"],
            Some(input),
        )
        .unwrap_or_default();
        let mut out = std::collections::HashMap::new();
        let mut current: Option<&str> = None;
        let mut in_headers = false;
        for line in raw.lines() {
            if let Some(id) = line.strip_prefix("commit ") {
                current = id.split_whitespace().next();
                in_headers = true;
            } else if line.is_empty() {
                in_headers = false;
            } else if in_headers
                && let (Some(id), Some(v)) = (current, line.strip_prefix("change-id "))
            {
                out.insert(id.to_owned(), v.trim().to_owned());
            }
        }
        out
    }

    /// The full id of a (possibly abbreviated) commit, if it exists here.
    pub fn resolve_commit(&self, rev: &str) -> Option<String> {
        if rev.is_empty() || !rev.chars().all(|c| c.is_ascii_hexdigit()) {
            return None;
        }
        self.git(&["rev-parse", "-q", "--verify", &format!("{rev}^{{commit}}")])
            .ok()
            .map(|s| s.trim().to_owned())
            .filter(|s| s.len() >= 40)
    }

    /// Local branches that contain `commit`.
    pub fn branches_containing(&self, commit: &str) -> Vec<String> {
        self.git(&["branch", "--format=%(refname:short)", "--contains", commit])
            .map(|o| {
                o.lines()
                    .map(|l| l.trim().to_owned())
                    .filter(|l| !l.is_empty())
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Whether a local branch named `name` exists.
    pub fn has_branch(&self, name: &str) -> bool {
        let full = format!("refs/heads/{name}");
        self.git(&["show-ref", "--verify", "--quiet", "--", &full])
            .is_ok()
    }

    /// Whether commit `ancestor` is `descendant` or one of its ancestors.
    pub fn is_ancestor(&self, ancestor: &str, descendant: &str) -> bool {
        self.git(&["merge-base", "--is-ancestor", ancestor, descendant])
            .is_ok()
    }

    /// Make an absolute path repo-relative, if it is inside this worktree.
    pub fn relative(&self, path: &str) -> Option<String> {
        let p = Path::new(path);
        if !p.is_absolute() {
            return crate::git::targets::is_public_repo_path(path).then(|| path.to_owned());
        }
        let rel: PathBuf = match p.strip_prefix(&self.root) {
            Ok(rel) => rel.to_path_buf(),
            Err(_) => {
                // Symlinked homes and the like: compare canonical forms. The path may not exist
                // any more, so canonicalise its longest existing ancestor.
                let canonical_root = std::fs::canonicalize(&self.root).ok()?;
                let mut existing = p.to_path_buf();
                let mut tail = Vec::new();
                while !existing.exists() {
                    tail.push(existing.file_name()?.to_owned());
                    existing = existing.parent()?.to_path_buf();
                }
                let mut full = std::fs::canonicalize(&existing).ok()?;
                for part in tail.iter().rev() {
                    full.push(part);
                }
                full.strip_prefix(&canonical_root).ok()?.to_path_buf()
            }
        };
        let s = rel.to_str()?.replace('\\', "/");
        crate::git::targets::is_public_repo_path(&s).then_some(s)
    }
}

/// One line of `git blame`: the commit that last changed it and the line's text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlameLine {
    /// The line number in the file as blamed (1-based).
    pub line: u32,
    /// The commit that wrote the line; `None` for a line not committed yet.
    pub commit: Option<String>,
    /// The line's number in that commit's version of the file.
    pub orig_line: u32,
    /// The path of the file in that commit (it may have been renamed since).
    pub path: String,
    pub text: String,
}

/// The most lines one blame reads (a range asks for a passage, not a file's history).
pub const MAX_BLAME_LINES: u32 = 2000;

/// Lines a commit added, per repo-relative path (its first parent's diff for a merge).
pub type AddedLines = Vec<(String, Vec<String>)>;

impl Repo {
    /// A revision a person named (a commit id, `HEAD~2`, a branch), as a full commit id. The
    /// name is refused before git sees it unless it reads as a revision: no option, no control
    /// character, no path or range syntax git would act on.
    pub fn resolve_rev(&self, rev: &str) -> Result<Option<String>> {
        let ok = !rev.is_empty()
            && rev.len() <= 256
            && !rev.starts_with('-')
            && !rev.contains("..")
            && rev.chars().all(|c| {
                c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '/' | '~' | '^' | '@')
            });
        if !ok {
            return Ok(None);
        }
        Ok(self
            .git(&[
                "rev-parse",
                "-q",
                "--verify",
                "--end-of-options",
                &format!("{rev}^{{commit}}"),
            ])
            .ok()
            .map(|s| s.trim().to_owned())
            .filter(|s| s.len() >= 40))
    }

    /// A file a person named (relative to `base`, or absolute) as a path inside this worktree,
    /// repo-relative. Symlinks and `..` are resolved first, so nothing outside the worktree (or
    /// inside `.git`) is ever handed to git.
    pub fn file_inside(&self, base: &Path, input: &str) -> Result<String> {
        if input.is_empty() || input.chars().any(char::is_control) {
            return Err(Error::Invalid(format!(
                "{:?} is not a file name (it is empty or holds control characters)",
                crate::text::printable(input)
            )));
        }
        let joined = if Path::new(input).is_absolute() {
            PathBuf::from(input)
        } else {
            base.join(input)
        };
        let canonical = std::fs::canonicalize(&joined).map_err(|_| {
            Error::NotFound(format!(
                "{}: no such file in {}",
                crate::text::printable(input),
                self.root.display()
            ))
        })?;
        let root = std::fs::canonicalize(&self.root).map_err(|e| Error::Read {
            path: self.root.clone(),
            source: e,
        })?;
        let outside = || {
            Error::Invalid(format!(
                "{} is outside the repository at {}",
                crate::text::printable(input),
                root.display()
            ))
        };
        let rel = canonical.strip_prefix(&root).map_err(|_| outside())?;
        let rel = rel.to_str().ok_or_else(outside)?.replace('\\', "/");
        if rel.split('/').next() == Some(".git") || !canonical.is_file() {
            return Err(Error::Invalid(format!(
                "{} is not a file of the worktree at {}",
                crate::text::printable(input),
                root.display()
            )));
        }
        if !crate::git::targets::is_public_repo_path(&rel) {
            return Err(outside());
        }
        Ok(rel)
    }

    /// Whether the repo-relative `path` (taken literally) is tracked: in the index.
    pub fn is_tracked(&self, path: &str) -> Result<bool> {
        let out = self.git(&["ls-files", "-z", "--", &format!(":(literal){path}")])?;
        Ok(!out.is_empty())
    }

    /// The commits where a shallow clone's history is cut (`<common dir>/shallow`): blame
    /// names one for every line written at or before it, by whoever wrote it.
    pub fn shallow_commits(&self) -> std::collections::HashSet<String> {
        std::fs::read_to_string(self.common_dir.join("shallow"))
            .map(|text| text.lines().map(|l| l.trim().to_owned()).collect())
            .unwrap_or_default()
    }

    /// What names this repository the same in every clone of it, for a team archive: the root
    /// commit its default branch's first parents lead to. The default branch is the one a clone
    /// names (`origin/HEAD`), else the branch checked out: a worktree on an orphan branch (a
    /// site's `gh-pages`) of a clone still names the repository as its siblings do, and so does
    /// a branch cut before another project's history was merged in (that merge adds a root, on
    /// a second parent). `None` for a shallow clone (its cut-off commit looks like a root, but
    /// another clone's differs), a history with no commit yet, or git failing.
    pub fn identity(&self) -> Option<String> {
        if !self.shallow_commits().is_empty() {
            return None;
        }
        ["refs/remotes/origin/HEAD", "HEAD"].iter().find_map(|tip| {
            let out = self
                .git(&["rev-list", "--first-parent", "--max-parents=0", tip, "--"])
                .ok()?;
            let root = out.lines().next()?.trim();
            (root.len() >= 40 && root.bytes().all(|b| b.is_ascii_hexdigit()))
                .then(|| root.to_owned())
        })
    }

    /// One commit with its subject, time and paths.
    pub fn commit_info(&self, id: &str) -> Result<CommitInfo> {
        self.commits(&[id], &[], None, Some(1))?
            .into_iter()
            .next()
            .ok_or_else(|| git_error(&self.root, format!("no commit {id}")))
    }

    /// The lines each path gained in commit `id` (no external diff or text conversion runs).
    pub fn added_lines(&self, id: &str) -> Result<AddedLines> {
        let out = self.git(&[
            "-c",
            "core.quotePath=false",
            "show",
            "--format=",
            "--no-color",
            "--no-ext-diff",
            "--no-textconv",
            "--no-renames",
            "--diff-merges=first-parent",
            "--unified=0",
            id,
            "--",
        ])?;
        Ok(parse_added(&out))
    }

    /// The lines commit `id` added, each with its number in the commit's version of the file
    /// (its first parent's diff for a merge). Binary files and paths git has to quote (control
    /// characters, `"`, `\\`) are counted, not listed; no external diff or text conversion runs.
    pub fn added_lines_numbered(&self, id: &str) -> Result<NumberedDiff> {
        let out = self.git(&[
            "-c",
            "core.quotePath=false",
            "show",
            "--format=",
            "--no-color",
            "--no-ext-diff",
            "--no-textconv",
            "--no-renames",
            "--diff-merges=first-parent",
            "--unified=0",
            "--end-of-options",
            id,
            "--",
        ])?;
        Ok(parse_numbered(&out))
    }

    /// The lines each of `paths` (repo-relative, taken literally) gained in each commit of `ids`,
    /// by commit: one `git log` for all of them (no external diff or text conversion runs).
    pub fn added_lines_of(
        &self,
        ids: &[&str],
        paths: &[&str],
    ) -> Result<std::collections::HashMap<String, AddedLines>> {
        let mut out = std::collections::HashMap::new();
        if ids.is_empty() || paths.is_empty() {
            return Ok(out);
        }
        let mut args: Vec<String> = [
            "-c",
            "core.quotePath=false",
            "log",
            "--no-walk=unsorted",
            "--stdin",
            "--format=%x1e%H",
            "--no-color",
            "--no-ext-diff",
            "--no-textconv",
            "--no-renames",
            "--diff-merges=first-parent",
            "--patch",
            "--unified=0",
            "--",
        ]
        .map(str::to_owned)
        .to_vec();
        args.extend(paths.iter().map(|p| format!(":(literal){p}")));
        let refs: Vec<&str> = args.iter().map(String::as_str).collect();
        let mut input = ids.join("\n");
        input.push('\n');
        let text = run_git_input(&self.root, &refs, Some(input))?;
        for chunk in text.split('\u{1e}') {
            let (id, diff) = chunk.split_once('\n').unwrap_or((chunk, ""));
            let id = id.trim();
            if id.len() >= 40 {
                out.insert(id.to_owned(), parse_added(diff));
            }
        }
        Ok(out)
    }

    /// Blame lines `start..=end` of the repo-relative `path` at `rev` (HEAD when `None`, which
    /// includes uncommitted changes of the worktree).
    pub fn blame(
        &self,
        rev: Option<&str>,
        path: &str,
        start: u32,
        end: u32,
    ) -> Result<Vec<BlameLine>> {
        if start == 0 || end < start || end - start >= MAX_BLAME_LINES {
            return Err(Error::Invalid(format!(
                "line range {start}-{end}: lines count from 1, the end may not come before the start, and at most {MAX_BLAME_LINES} lines are blamed at once"
            )));
        }
        let range = format!("{start},{end}");
        // Unquoted names, so a non-ASCII one matches the path an edit wrote.
        let mut args = vec![
            "-c",
            "core.quotePath=false",
            "blame",
            "--no-textconv",
            "--line-porcelain",
            "-L",
            &range,
        ];
        if let Some(rev) = rev {
            args.push(rev);
        }
        args.push("--");
        args.push(path);
        Ok(parse_blame(&self.git(&args)?))
    }
}

/// `git show --unified=0` (or `git log --patch --unified=0`) output as the lines each path
/// gained, read as [`parse_numbered`] reads it (a name with a space, a content line that reads
/// `+++ x`); a path the commit only took lines from is listed with none.
fn parse_added(diff: &str) -> AddedLines {
    read_diff(diff)
        .files
        .into_iter()
        .map(|(path, lines)| (path, lines.into_iter().map(|(_, text)| text).collect()))
        .collect()
}

/// What a commit added, numbered ([`Repo::added_lines_numbered`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NumberedDiff {
    /// Per repo-relative path (in diff order): (line number in the commit's version, text).
    pub files: Vec<(String, Vec<(u32, String)>)>,
    /// Binary files the commit changed.
    pub binary: u32,
    /// Paths left out because git quoted them (control characters, `"` or `\\` in the name).
    pub unusual: u32,
}

/// `git show --unified=0` output as numbered added lines.
fn parse_numbered(diff: &str) -> NumberedDiff {
    let mut out = read_diff(diff);
    out.files.retain(|(_, lines)| !lines.is_empty());
    out
}

/// A `--unified=0` diff as each file's numbered added lines, files that gained none included.
fn read_diff(diff: &str) -> NumberedDiff {
    let mut out = NumberedDiff::default();
    // The file being read (None: deleted, quoted or binary) and the next new-side line.
    let mut current: Option<usize> = None;
    let mut next = 0u32;
    // Between `diff --git` and the first hunk (an added line `++ x` reads `+++ x` in a hunk).
    let mut header = false;
    for line in diff.lines() {
        if line.starts_with("diff --git ") {
            current = None;
            header = true;
        } else if header && line.starts_with("Binary files ") && line.ends_with(" differ") {
            out.binary += 1;
        } else if let Some(path) = line.strip_prefix("+++ ").filter(|_| header) {
            // git ends a name holding a space with a tab, and quotes unusual ones.
            let path = path.strip_suffix('\t').unwrap_or(path);
            if path.starts_with('"') {
                out.unusual += 1;
            } else if let Some(p) = path.strip_prefix("b/") {
                out.files.push((p.to_owned(), Vec::new()));
                current = Some(out.files.len() - 1);
            }
        } else if let Some(rest) = line.strip_prefix("@@ ") {
            header = false;
            // `@@ -a[,b] +c[,d] @@`: added lines count from c.
            next = rest
                .split(' ')
                .find_map(|w| w.strip_prefix('+'))
                .and_then(|w| w.split(',').next())
                .and_then(|n| n.parse().ok())
                .unwrap_or(0);
        } else if let (Some(text), Some(i)) = (line.strip_prefix('+'), current)
            && next > 0
        {
            out.files[i].1.push((next, text.to_owned()));
            next += 1;
        }
    }
    out
}

/// `git blame --line-porcelain` output as lines.
fn parse_blame(out: &str) -> Vec<BlameLine> {
    let mut lines = Vec::new();
    let mut commit: Option<String> = None;
    let mut number = 0u32;
    let mut orig = 0u32;
    let mut path = String::new();
    for l in out.lines() {
        if let Some(text) = l.strip_prefix('\t') {
            lines.push(BlameLine {
                line: number,
                commit: commit.take().filter(|c| c.bytes().any(|b| b != b'0')),
                orig_line: orig,
                path: std::mem::take(&mut path),
                text: text.to_owned(),
            });
        } else if let Some(p) = l.strip_prefix("filename ") {
            p.clone_into(&mut path);
        } else if commit.is_none() {
            let mut parts = l.split(' ');
            if let (Some(id), Some(o), Some(n)) = (parts.next(), parts.next(), parts.next())
                && id.len() >= 40
                && id.bytes().all(|b| b.is_ascii_hexdigit())
            {
                commit = Some(id.to_owned());
                orig = o.parse().unwrap_or(0);
                number = n.parse().unwrap_or(0);
            }
        }
    }
    lines
}

/// Tests' git: runs `git -C dir args…` with a fixed author, optionally feeding `input`, and
/// returns its trimmed stdout; panics when git fails.
#[cfg(test)]
pub(crate) mod testing {
    use super::git_command;
    use std::path::Path;

    #[allow(clippy::unwrap_used)]
    pub(crate) fn git(dir: &Path, args: &[&str], input: Option<&str>) -> String {
        let mut cmd = git_command(dir, args);
        cmd.env("GIT_AUTHOR_NAME", "T")
            .env("GIT_AUTHOR_EMAIL", "t@example.invalid")
            .env("GIT_COMMITTER_NAME", "T")
            .env("GIT_COMMITTER_EMAIL", "t@example.invalid");
        if let Some(text) = input {
            use std::io::Write as _;
            let mut child = cmd
                .stdin(std::process::Stdio::piped())
                .stdout(std::process::Stdio::piped())
                .spawn()
                .unwrap();
            child
                .stdin
                .take()
                .unwrap()
                .write_all(text.as_bytes())
                .unwrap();
            let out = child.wait_with_output().unwrap();
            return String::from_utf8(out.stdout).unwrap().trim().to_owned();
        }
        let out = cmd.output().unwrap();
        assert!(out.status.success(), "{args:?}");
        String::from_utf8(out.stdout).unwrap().trim().to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::testing::git;
    use super::*;

    /// A transcript's relative folder names no repository, even run inside one (the tests run
    /// in this project's worktree).
    #[test]
    fn a_relative_folder_is_in_no_worktree() {
        let here = std::env::current_dir().unwrap();
        assert!(may_be_in_worktree(&here), "the tests run in a worktree");
        for relative in [".", "..", "src", "../.."] {
            assert!(!may_be_in_worktree(Path::new(relative)), "{relative}");
        }
    }

    /// Every worktree of a repository, from the main one or a linked one, a folder name with
    /// a space in it read whole (and, listed from the main one, a newline).
    #[test]
    fn worktree_roots_lists_every_worktree() {
        let dir = tempfile::tempdir().unwrap();
        let main = dir.path().join("main");
        std::fs::create_dir(&main).unwrap();
        git(&main, &["init", "-q", "-b", "main"], None);
        git(
            &main,
            &["commit", "-q", "--allow-empty", "-m", "first"],
            None,
        );
        let linked = dir.path().join("linked odd");
        git(
            &main,
            &[
                "worktree",
                "add",
                "-q",
                "-b",
                "fix",
                linked.to_str().unwrap(),
            ],
            None,
        );
        let odd = dir.path().join("line\nbreak");
        git(
            &main,
            &["worktree", "add", "-q", "-b", "odd", odd.to_str().unwrap()],
            None,
        );
        let canon = |p: &Path| std::fs::canonicalize(p).unwrap();
        for from in [&main, &linked] {
            let mut roots: Vec<PathBuf> = Repo::discover(from)
                .unwrap()
                .worktree_roots()
                .iter()
                .map(|p| canon(p))
                .collect();
            roots.sort();
            let mut want = vec![canon(&main), canon(&linked), canon(&odd)];
            want.sort();
            assert_eq!(roots, want, "from {}", from.display());
        }
    }

    /// A repository's identity is its root commit, the same in a clone and a worktree, another
    /// in another repository; a shallow clone and a repository with no commit have none.
    #[test]
    fn a_clone_shares_the_identity_a_shallow_clone_has_none() {
        let dir = tempfile::tempdir().unwrap();
        let make = |name: &str, text: &str| {
            let repo = dir.path().join(name);
            std::fs::create_dir(&repo).unwrap();
            git(&repo, &["init", "-q", "-b", "main"], None);
            std::fs::write(repo.join("a"), text).unwrap();
            git(&repo, &["add", "a"], None);
            git(&repo, &["commit", "-q", "-m", "first"], None);
            std::fs::write(repo.join("a"), format!("{text} more")).unwrap();
            git(&repo, &["commit", "-qam", "second"], None);
            repo
        };
        let one = make("one", "one");
        let two = make("two", "two");
        let id = |p: &Path| Repo::discover(p).unwrap().identity();
        let root = git(&one, &["rev-list", "--max-parents=0", "HEAD"], None);
        assert_eq!(id(&one), Some(root.clone()));
        assert_ne!(id(&two), id(&one));

        let clone = dir.path().join("clone");
        git(
            dir.path(),
            &[
                "clone",
                "-q",
                one.to_str().unwrap(),
                clone.to_str().unwrap(),
            ],
            None,
        );
        assert_eq!(id(&clone), Some(root.clone()));
        let wt = dir.path().join("wt");
        git(
            &one,
            &["worktree", "add", "-q", "-b", "side", wt.to_str().unwrap()],
            None,
        );
        assert_eq!(id(&wt), Some(root.clone()));

        // Another project's history merged in adds a root on a second parent (whichever is
        // smaller), and a branch cut before the merge does not see it: both name `one`.
        let other = dir.path().join("other");
        std::fs::create_dir(&other).unwrap();
        git(&other, &["init", "-q", "-b", "main"], None);
        std::fs::write(other.join("b"), "other").unwrap();
        git(&other, &["add", "b"], None);
        git(&other, &["commit", "-q", "-m", "other"], None);
        git(&one, &["checkout", "-q", "-b", "release"], None);
        git(&one, &["checkout", "-q", "main"], None);
        git(
            &one,
            &["fetch", "-q", other.to_str().unwrap(), "main:imported"],
            None,
        );
        git(
            &one,
            &[
                "merge",
                "-q",
                "--allow-unrelated-histories",
                "-m",
                "import other",
                "imported",
            ],
            None,
        );
        assert_eq!(id(&one), Some(root.clone()));
        git(&one, &["checkout", "-q", "release"], None);
        assert_eq!(id(&one), Some(root.clone()));
        git(&one, &["checkout", "-q", "main"], None);
        // A clone's worktree on an orphan branch names the repository by the default branch.
        let pages = dir.path().join("pages");
        git(
            &clone,
            &["worktree", "add", "-q", "--detach", pages.to_str().unwrap()],
            None,
        );
        git(&pages, &["checkout", "-q", "--orphan", "gh-pages"], None);
        std::fs::write(pages.join("index.html"), "site").unwrap();
        git(&pages, &["add", "index.html"], None);
        git(&pages, &["commit", "-q", "-m", "site"], None);
        assert_eq!(id(&pages), Some(root));

        let shallow = dir.path().join("shallow");
        let url = format!("file://{}", one.display());
        git(
            dir.path(),
            &[
                "clone",
                "-q",
                "--depth",
                "1",
                &url,
                shallow.to_str().unwrap(),
            ],
            None,
        );
        assert_eq!(id(&shallow), None, "its cut-off commit is no root");

        let empty = dir.path().join("empty");
        std::fs::create_dir(&empty).unwrap();
        git(&empty, &["init", "-q"], None);
        assert_eq!(id(&empty), None);
    }

    /// Outside a repository the error names the folder in full (not `.`), and says when the
    /// folder itself does not exist (a mistyped `-C`).
    #[test]
    fn no_repository_names_the_folder_looked_in() {
        let dir = tempfile::tempdir().unwrap();
        let inside = dir.path().join("plain");
        std::fs::create_dir(&inside).unwrap();
        let msg = Repo::discover(&inside).err().unwrap().to_string();
        assert!(msg.contains(&*inside.to_string_lossy()), "{msg}");
        assert!(msg.contains("no git repository found here"), "{msg}");
        let missing = inside.join("nope");
        let msg = Repo::discover(&missing).err().unwrap().to_string();
        assert!(
            msg.contains(&*missing.to_string_lossy()) && msg.contains("no such folder"),
            "{msg}"
        );
        // A file given for the folder is said to be one.
        let file = inside.join("notes.txt");
        std::fs::write(&file, "x").unwrap();
        let msg = Repo::discover(&file).err().unwrap().to_string();
        assert!(msg.contains("a file, not a folder"), "{msg}");
        // A relative folder is named from where the command ran.
        let here = std::env::current_dir().unwrap();
        let msg = Repo::discover(Path::new("no-such-folder-here"))
            .err()
            .unwrap()
            .to_string();
        assert!(
            msg.contains(&*here.join("no-such-folder-here").to_string_lossy()),
            "{msg}"
        );
    }

    /// A repository's own config may name a program for `core.fsmonitor`, which `git status`
    /// would run; Cairn reads repositories that transcripts name, so it never lets it run.
    #[cfg(unix)]
    #[test]
    fn added_lines_are_numbered_in_the_commits_version() {
        let diff = "diff --git a/src/a.rs b/src/a.rs\n\
index 1..2 100644\n\
--- a/src/a.rs\n\
+++ b/src/a.rs\n\
@@ -3,0 +4,2 @@ fn x() {\n\
+let a = 1;\n\
+++ not a header\n\
@@ -10 +12 @@\n\
-old\n\
+new\n\
\\ No newline at end of file\n\
diff --git a/img.png b/img.png\n\
new file mode 100644\n\
Binary files /dev/null and b/img.png differ\n\
diff --git a/my file.rs b/my file.rs\n\
--- a/my file.rs\t\n\
+++ b/my file.rs\t\n\
@@ -0,0 +1 @@\n\
+x\n\
diff --git \"a/q\\\"x\" \"b/q\\\"x\"\n\
--- \"a/q\\\"x\"\n\
+++ \"b/q\\\"x\"\n\
@@ -0,0 +1 @@\n\
+hidden\n\
diff --git a/gone.rs b/gone.rs\n\
--- a/gone.rs\n\
+++ /dev/null\n\
@@ -1 +0,0 @@\n\
-bye\n";
        let n = parse_numbered(diff);
        assert_eq!(
            n.files,
            vec![
                (
                    "src/a.rs".to_owned(),
                    vec![
                        (4, "let a = 1;".to_owned()),
                        (5, "++ not a header".to_owned()),
                        (12, "new".to_owned())
                    ]
                ),
                ("my file.rs".to_owned(), vec![(1, "x".to_owned())]),
            ]
        );
        assert_eq!((n.binary, n.unusual), (1, 1));
        // The unnumbered reading is the same.
        assert_eq!(
            parse_added(diff),
            vec![
                (
                    "src/a.rs".to_owned(),
                    vec![
                        "let a = 1;".to_owned(),
                        "++ not a header".to_owned(),
                        "new".to_owned()
                    ]
                ),
                ("my file.rs".to_owned(), vec!["x".to_owned()]),
            ]
        );
        // A path that only lost lines is listed with none.
        let shrunk = "diff --git a/s.rs b/s.rs\n--- a/s.rs\n+++ b/s.rs\n@@ -2 +1,0 @@\n-gone\n";
        assert_eq!(parse_added(shrunk), vec![("s.rs".to_owned(), vec![])]);
    }

    /// Names with a space or beyond ASCII are read as the edits wrote them, by the lines a
    /// commit added and by blame.
    #[test]
    fn names_with_spaces_and_accents_are_read_as_written() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("repo");
        std::fs::create_dir(&root).unwrap();
        git(&root, &["init", "-q", "-b", "main"], None);
        std::fs::write(root.join("my file.txt"), "one\n").unwrap();
        std::fs::write(root.join("café.txt"), "deux\n").unwrap();
        git(&root, &["add", "."], None);
        git(
            &root,
            &[
                "-c",
                "user.name=T",
                "-c",
                "user.email=t@example.invalid",
                "commit",
                "-q",
                "-m",
                "x",
            ],
            None,
        );
        let repo = Repo::discover(&root).unwrap();
        let mut added = repo.added_lines("HEAD").unwrap();
        added.sort();
        assert_eq!(
            added,
            vec![
                ("café.txt".to_owned(), vec!["deux".to_owned()]),
                ("my file.txt".to_owned(), vec!["one".to_owned()]),
            ]
        );
        let blamed = repo.blame(None, "café.txt", 1, 1).unwrap();
        assert_eq!(blamed[0].path, "café.txt");
    }

    #[test]
    fn a_repository_config_cannot_make_status_run_a_program() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("repo");
        std::fs::create_dir(&root).unwrap();
        git(&root, &["init", "-q", "-b", "main"], None);
        let marker = dir.path().join("ran");
        let hook = dir.path().join("monitor.sh");
        std::fs::write(&hook, format!("#!/bin/sh\ntouch '{}'\n", marker.display())).unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755)).unwrap();
        git(
            &root,
            &["config", "core.fsmonitor", &hook.to_string_lossy()],
            None,
        );
        std::fs::write(root.join("f"), "x").unwrap();
        let repo = Repo::discover(&root).unwrap();
        repo.dirty_paths().unwrap();
        start_git(&root, &["status", "--porcelain=v2"])
            .finish()
            .unwrap();
        assert!(
            !marker.exists(),
            "git status ran the repository's fsmonitor program"
        );
    }

    /// With paths, only the commits touching one of them, each listing only those files; a path
    /// is taken literally (a `*` in it is no glob).
    #[test]
    fn commits_touching_paths_lists_only_those_commits_and_files() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        git(root, &["init", "-q", "-b", "main"], None);
        for (files, subject) in [
            (&["a", "b"][..], "a and b"),
            (&["b"][..], "b only"),
            (&["*"][..], "star"),
            (&["c", "a"][..], "c and a"),
        ] {
            for f in files {
                let old = std::fs::read_to_string(root.join(f)).unwrap_or_default();
                std::fs::write(root.join(f), format!("{old}{subject}\n")).unwrap();
                git(root, &["add", "--", f], None);
            }
            git(root, &["commit", "-qm", subject], None);
        }
        let repo = Repo::discover(root).unwrap();
        let all = repo.commits(&["main"], &[], None, None).unwrap();
        assert_eq!(all.len(), 4);
        let got = repo
            .commits_touching(&["main"], &[], (None, None), None, &["a"])
            .unwrap();
        let seen: Vec<(&str, Vec<&str>)> = got
            .iter()
            .map(|c| {
                (
                    c.subject.as_str(),
                    c.files.iter().map(String::as_str).collect(),
                )
            })
            .collect();
        assert_eq!(seen, vec![("c and a", vec!["a"]), ("a and b", vec!["a"])]);
        let star = repo
            .commits_touching(&["main"], &[], (None, None), None, &["*"])
            .unwrap();
        assert_eq!(star.len(), 1);
        assert_eq!(star[0].subject, "star");
    }

    /// Change ids come from a `Change-Id:` trailer or a `change-id` header (jj, GitButler); the
    /// headers of many commits are read by one git run, each given to its own commit.
    #[test]
    fn change_ids_from_trailers_and_headers_of_many_commits() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        git(root, &["init", "-q", "-b", "main"], None);
        std::fs::write(root.join("a"), "a").unwrap();
        git(root, &["add", "a"], None);
        git(root, &["commit", "-qm", "plain"], None);
        git(
            root,
            &[
                "commit",
                "-q",
                "--allow-empty",
                "-m",
                "trailer\n\nChange-Id: I1234",
            ],
            None,
        );
        // Two commits with a `change-id` header, written as raw objects.
        let tree = git(root, &["rev-parse", "HEAD^{tree}"], None);
        let mut parent = git(root, &["rev-parse", "HEAD"], None);
        let mut headers = Vec::new();
        for (i, change) in ["zzzkqqqk", "yyylpppl"].iter().enumerate() {
            let raw = format!(
                "tree {tree}\nparent {parent}\nauthor T <t@example.invalid> 1700000000 +0000\n\
                 committer T <t@example.invalid> 1700000000 +0000\nchange-id {change}\n\nheader {i}\n"
            );
            parent = git(
                root,
                &["hash-object", "-t", "commit", "--stdin", "-w"],
                Some(&raw),
            );
            headers.push((parent.clone(), change.to_string()));
        }
        git(root, &["update-ref", "refs/heads/main", &parent], None);
        let repo = Repo::discover(root).unwrap();
        let commits = repo.commits(&["main"], &[], None, None).unwrap();
        assert_eq!(commits.len(), 4);
        let by_subject = |s: &str| {
            commits
                .iter()
                .find(|c| c.subject == s)
                .unwrap()
                .change_id
                .clone()
        };
        assert_eq!(by_subject("plain"), None);
        assert_eq!(by_subject("trailer").as_deref(), Some("I1234"));
        for (id, change) in &headers {
            let c = commits.iter().find(|c| &c.id == id).unwrap();
            assert_eq!(c.change_id.as_deref(), Some(change.as_str()));
        }
    }
}

//! A session's project: the name of the git repository it ran in, one name for every worktree
//! of it (a linked worktree's folder is named after its branch or task, not its project), else
//! the name of its folder.

use std::path::Path;

/// The project of a session that ran in `cwd`.
pub fn of_cwd(cwd: &str) -> String {
    let path = Path::new(cwd);
    match root_of(path) {
        Some(root) => of_root(root),
        None => path
            .file_name()
            .map_or_else(|| cwd.to_owned(), |n| n.to_string_lossy().into_owned()),
    }
}

/// The worktree root around `dir`: the nearest ancestor holding `.git` (a folder, or a linked
/// worktree's file).
pub fn root_of(dir: &Path) -> Option<&Path> {
    dir.ancestors().find(|a| a.join(".git").exists())
}

/// The project of the worktree at `root`: its main worktree's folder name for a linked worktree
/// (the repository's name for one of a bare repository, `.git` taken off), else its own.
pub fn of_root(root: &Path) -> String {
    main_name(root).unwrap_or_else(|| {
        root.file_name().map_or_else(
            || root.to_string_lossy().into_owned(),
            |n| n.to_string_lossy().into_owned(),
        )
    })
}

/// The project of a session that ran in `cwd` when that is inside a linked worktree found on
/// disk now; none otherwise (what a session elsewhere, or whose folder is gone, was named stays).
pub fn of_linked_worktree(cwd: &str) -> Option<String> {
    main_name(root_of(Path::new(cwd))?)
}

/// The git dir of the worktree at `root`: its `.git` folder, or the one its `.git` file names
/// (`gitdir: <path>`, a linked worktree's or a submodule's), read without running git. Made
/// canonical; `None` when what the file names is not a folder in a plausible place
/// ([`plausible_dir`]). This is where the worktree's `HEAD` is read; whether the folder it
/// names owns the worktree is [`common_dir_of`]'s question.
pub fn git_dir_of(root: &Path) -> Option<std::path::PathBuf> {
    let dot = root.join(".git");
    if dot.is_dir() {
        return plausible_dir(&dot);
    }
    let text = small_file(&dot)?;
    plausible_dir(&root.join(gitdir_line(&text)?))
}

/// The path a `.git` file's one line names (`gitdir: <path>`): `None` for anything else, an
/// empty path, or one holding a control character (NUL included, which no path may hold).
fn gitdir_line(text: &str) -> Option<&str> {
    let path = text.trim().strip_prefix("gitdir:")?.trim();
    (!path.is_empty() && !path.contains(char::is_control)).then_some(path)
}

/// Folders no repository lives in: the kernel's views of processes, devices and drivers. A
/// `gitdir:` into them (`/proc/self/cwd`, `/dev/fd/0`) names something other than a repository
/// and would make the reads that follow read whatever it is.
const NOT_REPOSITORIES: [&str; 3] = ["/proc", "/sys", "/dev"];

/// `path` made canonical when it is a folder outside [`NOT_REPOSITORIES`], both as written
/// (its `..` taken off by name: `../../proc/self`) and once its links are followed
/// (`/proc/self/cwd` is a real folder): a link loop, a FIFO, a file or a path into the kernel's
/// folders is `None`. Canonicalising and asking what it is open nothing, so nothing here waits.
fn plausible_dir(path: &Path) -> Option<std::path::PathBuf> {
    let kernel = |p: &Path| NOT_REPOSITORIES.iter().any(|k| p.starts_with(k));
    if kernel(&lexical(path)) {
        return None;
    }
    let path = std::fs::canonicalize(path).ok()?;
    if kernel(&path) {
        return None;
    }
    std::fs::metadata(&path).ok()?.is_dir().then_some(path)
}

/// `path` with its `.` and `..` components resolved by name, as a shell's `cd` does (`..` at
/// the root stays at the root).
pub(crate) fn lexical(path: &Path) -> std::path::PathBuf {
    let mut out = std::path::PathBuf::new();
    for c in path.components() {
        match c {
            std::path::Component::CurDir => {}
            std::path::Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// A small file's text (`HEAD`, a `.git` file, `commondir`): a regular file of at most 4 KiB
/// ([`crate::atomic::read_capped`]), so a hostile one cannot make a hook read for long, nor a
/// FIFO planted there make it wait.
pub fn small_file(path: &Path) -> Option<String> {
    let bytes = crate::atomic::read_capped(path, 4096).ok()?;
    String::from_utf8(bytes).ok()
}

/// The most of a repository's `config` read for its remote: git writes a few hundred bytes,
/// and a larger file is not read at all (a hostile one of a gigabyte costs one `stat`).
const MAX_CONFIG: u64 = 64 * 1024;

/// The common git dir of the worktree at `root`, the one every worktree of a repository shares:
/// its `.git` folder, or, for a `.git` file, the git dir it names when that git dir names this
/// worktree back ([`owned_git_dir`]) and, for a linked worktree, the common dir its `commondir`
/// names. Made canonical, so two paths to one repository compare equal. `None` when it cannot
/// be read (no `.git`, a `gitdir:` naming nothing, a symlink loop) or when the other side does
/// not agree: a `.git` file is a claim anyone can write, and taking it alone would let a
/// repository pass for a worktree of another one (and be served that one's notes).
pub fn common_dir_of(root: &Path) -> Option<std::path::PathBuf> {
    let dot = root.join(".git");
    if dot.is_dir() {
        // The worktree's own folder, not a link to another repository's (which would make it
        // pass for that one as a `.git` file naming it would).
        let git_dir = plausible_dir(&dot)?;
        if git_dir != std::fs::canonicalize(root).ok()?.join(".git") {
            return None;
        }
        // A `commondir` in a worktree's own `.git` folder says it shares another repository's
        // refs, which nothing there can confirm: git writes one only in `worktrees/<name>`.
        return match crate::atomic::read_capped(&git_dir.join("commondir"), 0) {
            Err(crate::atomic::Unread::Missing) => Some(git_dir),
            _ => None,
        };
    }
    owned_git_dir(root).map(|(_, common)| common)
}

/// For a worktree whose `.git` is a file: the git dir it names and that git dir's common dir,
/// when the git dir agrees that it serves this worktree, as git itself records it. A linked
/// worktree's git dir is `<common>/worktrees/<name>`, its `commondir` leads to `<common>`, and
/// its `gitdir` file names this worktree's `.git` file (`git worktree add` writes it, `git
/// worktree repair` mends it after a move); a submodule's (or a separated one's) git dir has
/// no `commondir` and names this worktree as `core.worktree` in its `config`. Each read is a
/// capped read of a regular file.
fn owned_git_dir(root: &Path) -> Option<(std::path::PathBuf, std::path::PathBuf)> {
    let dot = root.join(".git");
    let git_dir = git_dir_of(root)?;
    let here = std::fs::canonicalize(&dot).ok()?;
    match small_file(&git_dir.join("commondir")) {
        Some(text) => {
            let common = plausible_dir(&git_dir.join(text.trim()))?;
            let back = gitdir_back(&git_dir)?;
            let listed = git_dir.parent() == Some(common.join("worktrees").as_path());
            (listed && back == here).then_some((git_dir, common))
        }
        None => {
            let bytes = crate::atomic::read_capped(&git_dir.join("config"), MAX_CONFIG).ok()?;
            let worktree = core_worktree_in(&String::from_utf8_lossy(&bytes))?;
            let worktree = std::fs::canonicalize(git_dir.join(worktree)).ok()?;
            (worktree.join(".git") == here).then(|| (git_dir.clone(), git_dir))
        }
    }
}

/// The `.git` file a linked worktree's git dir says it serves (its `gitdir` file: an absolute
/// path, or one relative to the git dir as `worktree.useRelativePaths` writes it), canonical.
fn gitdir_back(git_dir: &Path) -> Option<std::path::PathBuf> {
    let text = small_file(&git_dir.join("gitdir"))?;
    let path = text.trim_end_matches(['\n', '\r']);
    if path.is_empty() || path.contains(char::is_control) {
        return None;
    }
    std::fs::canonicalize(git_dir.join(path)).ok()
}

/// The URL of the `origin` remote of the repository whose common git dir is `common`, else of
/// the first remote with a URL, read from its `config` without running git. Not followed:
/// `include` files and `insteadOf` rewrites (two clones configured alike still read alike).
/// `None` when there is no remote, the file is not a regular file of at most 64 KiB, or the URL
/// holds a control character.
pub fn remote_url(common: &Path) -> Option<String> {
    let bytes = crate::atomic::read_capped(&common.join("config"), MAX_CONFIG).ok()?;
    remote_url_in(&String::from_utf8_lossy(&bytes))
}

/// [`remote_url`] of a config file's text.
fn remote_url_in(text: &str) -> Option<String> {
    let mut remote: Option<String> = None;
    let mut first: Option<String> = None;
    for line in text.lines() {
        let line = line.trim_start();
        if line.starts_with('[') {
            remote = remote_section(line);
            continue;
        }
        let Some(name) = &remote else { continue };
        let Some((key, value)) = line.split_once('=') else {
            continue;
        };
        if !key.trim().eq_ignore_ascii_case("url") {
            continue;
        }
        let Some(url) = config_value(value) else {
            continue;
        };
        if name == "origin" {
            return Some(url);
        }
        first.get_or_insert(url);
    }
    first
}

/// The `worktree` of the `[core]` section of a config file's text (what git writes in a
/// submodule's git dir: the worktree it serves, relative to that git dir); the last one wins,
/// as in git. `None` when there is none or it is not a value git would read.
fn core_worktree_in(text: &str) -> Option<String> {
    let mut core = false;
    let mut found = None;
    for line in text.lines() {
        let line = line.trim_start();
        if let Some(inner) = line.strip_prefix('[') {
            core = inner
                .split_once(']')
                .is_some_and(|(name, _)| name.trim().eq_ignore_ascii_case("core"));
            continue;
        }
        if !core {
            continue;
        }
        let Some((key, value)) = line.split_once('=') else {
            continue;
        };
        if key.trim().eq_ignore_ascii_case("worktree") {
            found = config_value(value);
        }
    }
    found
}

/// The remote a section header names (`[remote "origin"]`, or the old `[remote.origin]`);
/// `None` for any other section.
fn remote_section(line: &str) -> Option<String> {
    let inner = line.strip_prefix('[')?;
    let end = inner.find(|c: char| c == ']' || c == '"' || c.is_whitespace())?;
    let (section, rest) = inner.split_at(end);
    if let Some((name, sub)) = section.split_once('.') {
        // The old form: the subsection is case-insensitive, so git lowercases it.
        return (name.eq_ignore_ascii_case("remote") && rest.starts_with(']') && !sub.is_empty())
            .then(|| sub.to_ascii_lowercase());
    }
    if !section.eq_ignore_ascii_case("remote") {
        return None;
    }
    let mut chars = rest.trim_start().strip_prefix('"')?.chars();
    let mut name = String::new();
    loop {
        match chars.next()? {
            '"' => break,
            '\\' => name.push(chars.next()?),
            c => name.push(c),
        }
    }
    chars.as_str().starts_with(']').then_some(name)
}

/// A config value as git reads it: quotes taken off, `\\` escapes read, a `#` or `;` outside
/// quotes starting a comment, whitespace around it dropped. `None` for a value git would refuse
/// (an open quote, an unknown escape, a line continued) or one holding a control character.
fn config_value(raw: &str) -> Option<String> {
    let mut out = String::new();
    let mut space = String::new();
    let mut quoted = false;
    let mut chars = raw.trim_start().chars();
    while let Some(c) = chars.next() {
        let c = match c {
            '\\' => match chars.next()? {
                'n' => '\n',
                't' => '\t',
                'b' => '\u{8}',
                e @ ('"' | '\\') => e,
                _ => return None,
            },
            '"' => {
                quoted = !quoted;
                continue;
            }
            '#' | ';' if !quoted => break,
            c if c.is_whitespace() && !quoted => {
                space.push(c);
                continue;
            }
            c => c,
        };
        out.push_str(&space);
        space.clear();
        out.push(c);
    }
    (!quoted && !out.is_empty() && !out.chars().any(char::is_control)).then_some(out)
}

/// A remote URL in the form every clone of one repository shares, whichever way it was cloned:
/// `https://user@host:port/path.git/`, `ssh://git@host/path` and `git@host:path` all read
/// `host/path` (scheme, user, port, `.git` and slashes taken off, the host lowercased); a local
/// path or `file://` URL reads as its path. `None` for an empty URL, a relative path (it names
/// a different repository from each clone) or one with a control character.
pub fn normalised_url(url: &str) -> Option<String> {
    let url = url.trim();
    if url.chars().any(char::is_control) {
        return None;
    }
    let (host, path) = if let Some((scheme, rest)) = url.split_once("://") {
        if scheme.is_empty()
            || !scheme
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
        {
            return None;
        }
        let (authority, path) = rest.split_once('/').unwrap_or((rest, ""));
        (without_port(without_user(authority)), path)
    } else if let Some((authority, path)) = url
        .split_once(':')
        .filter(|(before, _)| !before.contains('/') && before.len() > 1)
    {
        // scp-like `[user@]host:path`; `C:` would be a drive, `./a:b` a path.
        (without_user(authority), path)
    } else if url.starts_with('/') {
        ("", url)
    } else {
        return None;
    };
    let path = path.trim_matches('/');
    let path = path
        .strip_suffix(".git")
        .unwrap_or(path)
        .trim_end_matches('/');
    (!path.is_empty()).then(|| format!("{}/{path}", host.to_ascii_lowercase()))
}

fn without_user(authority: &str) -> &str {
    authority
        .rsplit_once('@')
        .map_or(authority, |(_, host)| host)
}

fn without_port(host: &str) -> &str {
    if let Some(v6) = host.strip_prefix('[') {
        return v6.split_once(']').map_or(host, |(h, _)| h);
    }
    match host.rsplit_once(':') {
        Some((h, port)) if port.chars().all(|c| c.is_ascii_digit()) => h,
        _ => host,
    }
}

/// A linked worktree's `.git` file says `gitdir: <common dir>/worktrees/<name>`: the name of the
/// repository that common dir is, read from the path as the file spells it, once that git dir
/// agrees it serves this worktree ([`owned_git_dir`]). None for anything else (a main worktree,
/// a submodule's `gitdir: …/modules/<name>`, an unreadable or hostile file, a claim the git dir
/// does not confirm): the worktree is then named by its own folder.
fn main_name(root: &Path) -> Option<String> {
    if !root.join(".git").is_file() {
        return None;
    }
    let text = small_file(&root.join(".git"))?;
    let named = root.join(gitdir_line(&text)?);
    let worktrees = named.parent()?;
    if worktrees.file_name()? != "worktrees" {
        return None;
    }
    let (git_dir, _) = owned_git_dir(root)?;
    if git_dir.parent()?.file_name()? != "worktrees" {
        return None;
    }
    let common = worktrees.parent()?;
    let name = common.file_name()?.to_str()?;
    let name = if name == ".git" {
        common.parent()?.file_name()?.to_str()?
    } else {
        name.strip_suffix(".git").unwrap_or(name)
    };
    (!name.is_empty() && name != "." && name != "..").then(|| name.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(path: &Path, text: &str) {
        std::fs::create_dir_all(path.parent().expect("parent")).expect("dirs");
        std::fs::write(path, text).expect("write");
    }

    /// A linked worktree at `wt` of the repository whose common dir is `common`, as `git
    /// worktree add` lays it out: `wt/.git` names `<common>/worktrees/<name>` (as `gitdir`,
    /// absolute unless given), which names `wt/.git` back and leads to `common`.
    fn linked(common: &Path, name: &str, wt: &Path, gitdir: Option<&str>) {
        let git_dir = common.join("worktrees").join(name);
        write(&git_dir.join("commondir"), "../..\n");
        write(
            &git_dir.join("gitdir"),
            &format!("{}\n", wt.join(".git").display()),
        );
        let named = gitdir.map_or_else(|| git_dir.display().to_string(), str::to_owned);
        write(&wt.join(".git"), &format!("gitdir: {named}\n"));
    }

    #[test]
    fn a_linked_worktree_is_its_repositorys_project() {
        let tmp = tempfile::tempdir().expect("tmp");
        let main = tmp.path().join("shop");
        let wt = tmp.path().join("wt").join("fix-cart");
        linked(&main.join(".git"), "fix-cart", &wt, None);
        let inside = wt.join("src");
        std::fs::create_dir_all(&inside).expect("dirs");
        assert_eq!(of_cwd(inside.to_str().expect("utf-8")), "shop");
        assert_eq!(of_cwd(main.to_str().expect("utf-8")), "shop");

        // A bare repository's worktree: the repository's name without `.git`.
        let bare_wt = tmp.path().join("b1");
        linked(&tmp.path().join("api.git"), "b1", &bare_wt, None);
        assert_eq!(of_root(&bare_wt), "api");
        // A relative gitdir, as `git worktree add --relative-paths` writes (both ways).
        let rel = tmp.path().join("rel");
        linked(
            &main.join(".git"),
            "rel",
            &rel,
            Some("../shop/.git/worktrees/rel"),
        );
        write(
            &main.join(".git/worktrees/rel/gitdir"),
            "../../../../rel/.git\n",
        );
        assert_eq!(of_root(&rel), "shop");
    }

    /// A `.git` file is a claim: a folder that names another repository's worktree git dir, or
    /// its `.git` folder, is not that repository unless the git dir names the folder back. It
    /// keeps its own name and has no common dir, so it shares nothing with the repository.
    #[test]
    fn a_git_file_the_repository_does_not_confirm_is_not_its_worktree() {
        let tmp = tempfile::tempdir().expect("tmp");
        let main = tmp.path().join("shop");
        let wt = tmp.path().join("wt");
        linked(&main.join(".git"), "wt", &wt, None);
        let common = common_dir_of(&main).expect("main");
        assert_eq!(common_dir_of(&wt), Some(common.clone()));

        let forged = tmp.path().join("evil");
        for claim in [
            main.join(".git/worktrees/wt"),
            main.join(".git"),
            main.join(".git/worktrees"),
        ] {
            write(
                &forged.join(".git"),
                &format!("gitdir: {}\n", claim.display()),
            );
            assert_eq!(common_dir_of(&forged), None, "{claim:?}");
            assert_eq!(of_root(&forged), "evil", "{claim:?}");
        }
        // A git dir that names the forged folder but is not listed under its common dir's
        // `worktrees` (a folder the forger made, pointing at the repository).
        let own = forged.join("own-git-dir");
        write(&own.join("commondir"), &format!("{}\n", common.display()));
        write(
            &own.join("gitdir"),
            &format!("{}\n", forged.join(".git").display()),
        );
        write(&forged.join(".git"), "gitdir: own-git-dir\n");
        assert_eq!(common_dir_of(&forged), None);
        // A `.git` folder whose `commondir` names the repository.
        std::fs::remove_file(forged.join(".git")).expect("rm");
        write(
            &forged.join(".git/commondir"),
            &format!("{}\n", common.display()),
        );
        assert_eq!(common_dir_of(&forged), None);
        #[cfg(unix)]
        {
            // A `.git` that is a link to the repository's.
            std::fs::remove_dir_all(forged.join(".git")).expect("rm");
            std::os::unix::fs::symlink(main.join(".git"), forged.join(".git")).expect("link");
            assert_eq!(common_dir_of(&forged), None);
            assert_eq!(of_root(&forged), "evil");
        }

        // A submodule is confirmed by `core.worktree` in its git dir's config.
        let sub = main.join("lib");
        let modules = main.join(".git/modules/lib");
        write(&sub.join(".git"), "gitdir: ../.git/modules/lib\n");
        write(
            &modules.join("config"),
            "[core]\n\tbare = false\n\tworktree = ../../../lib\n",
        );
        let git_dir = std::fs::canonicalize(&modules).expect("canonical");
        assert_eq!(common_dir_of(&sub), Some(git_dir));
        assert_eq!(of_root(&sub), "lib");
        // Another folder naming that submodule's git dir is not it.
        let other = tmp.path().join("other");
        write(
            &other.join(".git"),
            &format!("gitdir: {}\n", modules.display()),
        );
        assert_eq!(common_dir_of(&other), None);
    }

    /// A `gitdir:` naming no plausible git dir is refused by a look at the path, never by
    /// opening what is there: the kernel's folders, a FIFO, a file, a relative path climbing
    /// out of everything, a line with a control character in it.
    #[test]
    fn a_gitdir_naming_no_plausible_place_is_refused_without_waiting() {
        let tmp = tempfile::tempdir().expect("tmp");
        let dir = tmp.path().join("h");
        std::fs::create_dir_all(&dir).expect("dirs");
        let up = "../".repeat(64);
        let mut claims = vec![
            "/proc/self/cwd".to_owned(),
            "/proc/self".to_owned(),
            "/dev/fd/0".to_owned(),
            "/sys".to_owned(),
            format!("{up}proc/self"),
            format!("{up}dev"),
            "file".to_owned(),
            "/nonexistent/.git".to_owned(),
            "a\u{0}b".to_owned(),
        ];
        write(&dir.join("file"), "x");
        #[cfg(unix)]
        {
            let made = std::process::Command::new("mkfifo")
                .arg(dir.join("fifo"))
                .status()
                .expect("mkfifo");
            assert!(made.success());
            claims.push("fifo".to_owned());
        }
        for claim in claims {
            write(&dir.join(".git"), &format!("gitdir: {claim}\n"));
            assert_eq!(git_dir_of(&dir), None, "{claim:?}");
            assert_eq!(common_dir_of(&dir), None, "{claim:?}");
            assert_eq!(of_root(&dir), "h", "{claim:?}");
        }
        #[cfg(unix)]
        {
            // The `.git` file itself a FIFO.
            std::fs::remove_file(dir.join(".git")).expect("rm");
            let made = std::process::Command::new("mkfifo")
                .arg(dir.join(".git"))
                .status()
                .expect("mkfifo");
            assert!(made.success());
            assert_eq!(git_dir_of(&dir), None);
            assert_eq!(common_dir_of(&dir), None);
        }
    }

    #[test]
    fn a_submodule_or_a_hostile_git_file_keeps_the_folders_name() {
        let tmp = tempfile::tempdir().expect("tmp");
        let sub = tmp.path().join("lib");
        write(&sub.join(".git"), "gitdir: ../.git/modules/lib\n");
        assert_eq!(of_root(&sub), "lib");
        for hostile in [
            "",
            "gitdir:",
            "not a git file",
            "gitdir: /worktrees/x",
            "gitdir: ../worktrees/..",
            &"x".repeat(10_000),
        ] {
            let dir = tmp.path().join("h");
            write(&dir.join(".git"), hostile);
            assert_eq!(of_root(&dir), "h", "{hostile:?}");
        }
        assert_eq!(of_cwd("/"), "/");
        assert_eq!(of_cwd("/nonexistent/folder"), "folder");
    }

    /// Every way of spelling one remote reads the same; another path, host or a local path
    /// reads differently, and what names no remote reads as none.
    #[test]
    fn a_remote_url_reads_the_same_however_it_was_cloned() {
        let one = normalised_url("https://github.com/acme/api.git");
        assert_eq!(one.as_deref(), Some("github.com/acme/api"));
        for same in [
            "https://github.com/acme/api",
            "https://user:token@github.com/acme/api.git/",
            "http://GitHub.com:443/acme/api/",
            "git@github.com:acme/api.git",
            "github.com:acme/api",
            "ssh://git@github.com/acme/api.git",
            "ssh://git@github.com:22/acme/api",
            "git://github.com/acme/api.git",
            "  https://github.com/acme/api.git  ",
        ] {
            assert_eq!(normalised_url(same), one, "{same}");
        }
        for other in [
            "https://github.com/acme/api-v2.git",
            "https://github.com/other/api.git",
            "https://gitlab.com/acme/api.git",
            "/srv/git/acme/api.git",
        ] {
            assert_ne!(normalised_url(other), one, "{other}");
        }
        assert_eq!(
            normalised_url("file:///srv/git/api.git"),
            normalised_url("/srv/git/api")
        );
        assert_eq!(
            normalised_url("ssh://[::1]:2222/srv/api.git").as_deref(),
            Some("::1/srv/api")
        );
        for none in [
            "",
            "   ",
            "../api.git",
            "api",
            "C:/repos/api",
            "https://github.com/",
            "https://github.com/acme/\u{1b}]0;x\u{7}api.git",
            "https://github.com/acme/api\n.git",
            "a b://host/path",
        ] {
            assert_eq!(normalised_url(none), None, "{none:?}");
        }
    }

    #[test]
    fn the_remote_is_origin_else_the_first_one_with_a_url() {
        let config = "[core]\n\tbare = false\n\turl = not-a-remote\n\
            [remote \"upstream\"]\n\turl = https://example.com/up.git\n\
            [branch \"main\"]\n\tremote = origin\n\
            [remote \"origin\"]\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n\
            \tURL = \"git@example.com:team/api.git\" # the team's\n\
            \turl = https://example.com/second.git\n";
        assert_eq!(
            remote_url_in(config).as_deref(),
            Some("git@example.com:team/api.git")
        );
        let no_origin =
            "[remote \"b\"]\n\tfetch = x\n[remote \"a\"]\n\turl = https://example.com/a\n";
        assert_eq!(
            remote_url_in(no_origin).as_deref(),
            Some("https://example.com/a")
        );
        // The old section form, its name case-insensitive.
        assert_eq!(
            remote_url_in("[remote.Origin]\nurl=/srv/api.git\n").as_deref(),
            Some("/srv/api.git")
        );
        // A quoted subsection with an escape in it.
        assert_eq!(
            remote_url_in("[remote \"a\\\"b\"]\n url = x:y ; comment\n").as_deref(),
            Some("x:y")
        );
        for none in [
            "",
            "[remote \"origin\"]\n\tfetch = x\n",
            "[remote \"origin\"]\n\turl = \"open quote\n",
            "[remote \"origin\"]\n\turl = bad\\qescape\n",
            "[remote \"origin\"]\n\turl = https://e.com/a\\nb\n",
            "[remote \"origin\"]\n\turl = https://e.com/\u{1b}[31ma\n",
            "[remote \"origin\"\n\turl = https://e.com/a\n",
            "[remotes \"origin\"]\n\turl = https://e.com/a\n",
            "url = https://e.com/a\n",
        ] {
            assert_eq!(remote_url_in(none), None, "{none:?}");
        }
    }

    /// A linked worktree and its main worktree share one common dir; a config over the cap, a
    /// FIFO or a loop of links is no remote, read without waiting.
    #[test]
    fn the_common_dir_and_the_remote_come_from_capped_reads() {
        let tmp = tempfile::tempdir().expect("tmp");
        let main = tmp.path().join("shop");
        let wt = tmp.path().join("wt");
        linked(&main.join(".git"), "wt", &wt, None);
        let common = common_dir_of(&main).expect("common dir");
        assert_eq!(common_dir_of(&wt), Some(common.clone()));
        assert_eq!(common_dir_of(&tmp.path().join("nowhere")), None);

        let config = common.join("config");
        write(&config, "[remote \"origin\"]\n\turl = https://e.com/shop\n");
        assert_eq!(remote_url(&common).as_deref(), Some("https://e.com/shop"));
        let padded = format!(
            "{}[remote \"origin\"]\n\turl = https://e.com/shop\n",
            "# pad\n".repeat(20_000)
        );
        write(&config, &padded);
        assert_eq!(remote_url(&common), None);
        // Bytes that are not text around the section are read leniently; a URL holding a NUL
        // or an escape names no remote.
        let mut noisy = vec![0u8, 0xff, 0xfe, b'\n'];
        noisy.extend_from_slice(b"[remote \"origin\"]\n\turl = https://e.com/shop\n");
        noisy.extend(std::iter::repeat_n(0x80u8, 1000));
        std::fs::write(&config, &noisy).expect("write");
        assert_eq!(remote_url(&common).as_deref(), Some("https://e.com/shop"));
        for url in ["https://e.com/\0shop", "https://e.com/\u{1b}[2Jshop"] {
            write(&config, &format!("[remote \"origin\"]\n\turl = {url}\n"));
            assert_eq!(remote_url(&common), None, "{url:?}");
        }
        // A thousand remotes fit under the cap and are walked once; `origin` last still wins.
        let many: String = (0..1000)
            .map(|i| format!("[remote \"r{i}\"]\n\turl = https://e.com/r{i}\n"))
            .chain(["[remote \"origin\"]\n\turl = https://e.com/shop\n".to_owned()])
            .collect();
        assert!(many.len() < MAX_CONFIG as usize);
        write(&config, &many);
        assert_eq!(remote_url(&common).as_deref(), Some("https://e.com/shop"));
        std::fs::remove_file(&config).expect("rm");
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(&config, &config).expect("loop");
            assert_eq!(remote_url(&common), None);
            std::fs::remove_file(&config).expect("rm");
            let made = std::process::Command::new("mkfifo")
                .arg(&config)
                .status()
                .expect("mkfifo");
            assert!(made.success());
            assert_eq!(remote_url(&common), None);
            assert_eq!(small_file(&config), None);
        }
    }
}

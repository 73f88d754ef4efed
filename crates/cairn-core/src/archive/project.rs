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
/// (`gitdir: <path>`, a linked worktree's or a submodule's), read without running git.
pub fn git_dir_of(root: &Path) -> Option<std::path::PathBuf> {
    let dot = root.join(".git");
    if dot.is_dir() {
        return Some(dot);
    }
    let text = small_file(&dot)?;
    Some(root.join(text.trim().strip_prefix("gitdir:")?.trim()))
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
/// its git dir, or for a linked worktree the dir that git dir's `commondir` file names. Made
/// canonical, so two paths to one repository compare equal. `None` when it cannot be read (no
/// `.git`, a `gitdir:` naming nothing, a symlink loop).
pub fn common_dir_of(root: &Path) -> Option<std::path::PathBuf> {
    let git_dir = git_dir_of(root)?;
    let common = match small_file(&git_dir.join("commondir")) {
        Some(text) => git_dir.join(text.trim()),
        None => git_dir,
    };
    std::fs::canonicalize(common).ok().filter(|p| p.is_dir())
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
/// repository that common dir is. None for anything else (a main worktree, a submodule's
/// `gitdir: …/modules/<name>`, an unreadable or hostile file).
fn main_name(root: &Path) -> Option<String> {
    if !root.join(".git").is_file() {
        return None;
    }
    let gitdir = git_dir_of(root)?;
    let worktrees = gitdir.parent()?;
    if worktrees.file_name()? != "worktrees" {
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

    #[test]
    fn a_linked_worktree_is_its_repositorys_project() {
        let tmp = tempfile::tempdir().expect("tmp");
        let main = tmp.path().join("shop");
        std::fs::create_dir_all(main.join(".git/worktrees/fix-cart")).expect("dirs");
        let wt = tmp.path().join("wt").join("fix-cart");
        write(
            &wt.join(".git"),
            &format!(
                "gitdir: {}\n",
                main.join(".git/worktrees/fix-cart").display()
            ),
        );
        let inside = wt.join("src");
        std::fs::create_dir_all(&inside).expect("dirs");
        assert_eq!(of_cwd(inside.to_str().expect("utf-8")), "shop");
        assert_eq!(of_cwd(main.to_str().expect("utf-8")), "shop");

        // A bare repository's worktree: the repository's name without `.git`.
        let bare_wt = tmp.path().join("b1");
        write(
            &bare_wt.join(".git"),
            &format!(
                "gitdir: {}\n",
                tmp.path().join("api.git/worktrees/b1").display()
            ),
        );
        assert_eq!(of_root(&bare_wt), "api");
        // A relative gitdir, as `git worktree add --relative-paths` writes.
        let rel = tmp.path().join("rel");
        write(&rel.join(".git"), "gitdir: ../shop/.git/worktrees/rel\n");
        assert_eq!(of_root(&rel), "shop");
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
        std::fs::create_dir_all(main.join(".git/worktrees/wt")).expect("dirs");
        write(&main.join(".git/worktrees/wt/commondir"), "../..\n");
        let wt = tmp.path().join("wt");
        write(
            &wt.join(".git"),
            &format!("gitdir: {}\n", main.join(".git/worktrees/wt").display()),
        );
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

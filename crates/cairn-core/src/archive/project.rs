//! A session's project: the name of the git repository it ran in, one name for every worktree
//! of it (a linked worktree's folder is named after its branch or task, not its project), else
//! the name of its folder.

use std::io::Read;
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

/// A small file's text (`HEAD`, a `.git` file): at most 4 KiB, so a hostile one cannot make
/// a hook read for long.
pub fn small_file(path: &Path) -> Option<String> {
    let mut text = String::new();
    std::fs::File::open(path)
        .ok()?
        .take(4096)
        .read_to_string(&mut text)
        .ok()?;
    Some(text)
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
}

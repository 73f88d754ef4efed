//! Private by default: the data dir and everything Cairn writes in it belong to its owner alone.
//!
//! Directories are created 0700 and files 0600. The mode is given when the file or directory is
//! created, so no umask can widen it (a umask only ever removes bits). SQLite creates the
//! database's `-wal` and `-shm` files with the database file's own mode, which is why
//! [`crate::store::Store::open`] creates `cairn.db` through [`open_options`] first.
//!
//! An archive written by an older Cairn (or touched by other tools since) is tightened when it is
//! opened for writing: group and other permissions are removed, nothing is ever added, and
//! symlinks are never followed. What could not be tightened (a data dir owned by someone else, a
//! read-only one) is left as it is and named by `cairn doctor` ([`loose_entries`]).

use std::fs::{self, OpenOptions};
use std::io;
use std::path::{Path, PathBuf};

/// Mode of the directories Cairn creates.
pub const DIR_MODE: u32 = 0o700;
/// Mode of the files Cairn creates.
pub const FILE_MODE: u32 = 0o600;
/// Permission bits of group and others.
const OPEN_BITS: u32 = 0o077;

/// `create_dir_all` whose new directories are 0700 (existing ones are left as they are).
pub fn create_dir_all(path: &Path) -> io::Result<()> {
    let mut builder = fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        builder.mode(DIR_MODE);
    }
    builder.create(path)
}

/// Options that create a missing file 0600; add `read`, `write`, `append`… as needed.
pub fn open_options() -> OpenOptions {
    let mut options = OpenOptions::new();
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(FILE_MODE);
    }
    options
}

/// The permission bits of `path` itself (a symlink is not followed: `None` for one, and for a
/// path that does not exist).
fn mode(path: &Path) -> Option<u32> {
    let meta = fs::symlink_metadata(path).ok()?;
    if meta.file_type().is_symlink() {
        return None;
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        Some(meta.permissions().mode() & 0o7777)
    }
    #[cfg(not(unix))]
    {
        Some(0)
    }
}

/// Whether group or others have any permission on `path` (never true for a symlink).
pub fn is_open(path: &Path) -> bool {
    mode(path).is_some_and(|m| m & OPEN_BITS != 0)
}

/// Remove group and other permissions from `path` (a symlink is left alone). Returns whether
/// anything changed.
pub fn tighten(path: &Path) -> io::Result<bool> {
    let Some(mode) = mode(path).filter(|m| m & OPEN_BITS != 0) else {
        return Ok(false);
    };
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(path, fs::Permissions::from_mode(mode & !OPEN_BITS))?;
    }
    let _ = mode;
    Ok(true)
}

/// The data dir itself when `dir` is a symlink to it (its modes are the ones that matter).
pub fn resolved(dir: &Path) -> PathBuf {
    fs::canonicalize(dir).unwrap_or_else(|_| dir.to_owned())
}

/// Tighten the data dir (resolved when it is a symlink) and what it holds: the dir itself and its
/// direct entries always (a handful of stats), every file below them too when `deep`. Best
/// effort: the entries that could not be changed are returned (the caller logs them; `doctor`
/// names them).
pub fn tighten_data_dir(dir: &Path, deep: bool) -> Vec<(PathBuf, io::Error)> {
    let mut failed = Vec::new();
    let walk = walkdir::WalkDir::new(resolved(dir))
        .follow_links(false)
        .max_depth(if deep { usize::MAX } else { 1 });
    for entry in walk.into_iter().flatten() {
        if let Err(e) = tighten(entry.path()) {
            failed.push((entry.path().to_owned(), e));
        }
    }
    failed
}

/// Every entry under `dir` (itself included, resolved when it is a symlink; symlinks below it
/// skipped) that group or others can reach,
/// with its permission bits, in walk order.
pub fn loose_entries(dir: &Path) -> Vec<(PathBuf, u32)> {
    walkdir::WalkDir::new(resolved(dir))
        .follow_links(false)
        .sort_by_file_name()
        .into_iter()
        .flatten()
        .filter_map(|e| {
            let m = mode(e.path())?;
            (m & OPEN_BITS != 0).then(|| (e.path().to_owned(), m))
        })
        .collect()
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn mode_of(path: &Path) -> u32 {
        fs::symlink_metadata(path).unwrap().permissions().mode() & 0o7777
    }

    #[test]
    fn creates_private_dirs_and_files() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("a/b");
        create_dir_all(&dir).unwrap();
        assert_eq!(mode_of(&dir), 0o700);
        assert_eq!(mode_of(&root.path().join("a")), 0o700);
        let file = dir.join("f");
        open_options().write(true).create(true).open(&file).unwrap();
        assert_eq!(mode_of(&file), 0o600);
    }

    #[test]
    fn tightening_removes_group_and_other_bits_only_and_skips_symlinks() {
        let root = tempfile::tempdir().unwrap();
        let data = root.path().join("data");
        fs::create_dir_all(data.join("retained/claude")).unwrap();
        let outside = root.path().join("outside");
        fs::write(&outside, "x").unwrap();
        fs::set_permissions(&outside, fs::Permissions::from_mode(0o644)).unwrap();
        std::os::unix::fs::symlink(&outside, data.join("link")).unwrap();
        let db = data.join("cairn.db");
        let copy = data.join("retained/claude/k.g0.jsonl.zst");
        for (path, mode) in [
            (&data, 0o755),
            (&data.join("retained"), 0o775),
            (&data.join("retained/claude"), 0o755),
            (&db, 0o664),
            (&copy, 0o444),
        ] {
            if path.is_dir() {
                fs::set_permissions(path, fs::Permissions::from_mode(mode)).unwrap();
            } else {
                fs::write(path, "x").unwrap();
                fs::set_permissions(path, fs::Permissions::from_mode(mode)).unwrap();
            }
        }
        assert_eq!(loose_entries(&data).len(), 5, "{:?}", loose_entries(&data));

        // Shallow: the dir and its direct entries.
        assert!(tighten_data_dir(&data, false).is_empty());
        assert_eq!(mode_of(&data), 0o700);
        assert_eq!(mode_of(&db), 0o600);
        assert_eq!(mode_of(&data.join("retained")), 0o700);
        assert_eq!(mode_of(&copy), 0o444);
        // Deep: everything; a read-only file stays read-only (nothing is added).
        assert!(tighten_data_dir(&data, true).is_empty());
        assert_eq!(mode_of(&copy), 0o400);
        assert_eq!(mode_of(&data.join("retained/claude")), 0o700);
        assert!(loose_entries(&data).is_empty());
        // The symlink's target, outside the data dir, is untouched.
        assert_eq!(mode_of(&outside), 0o644);

        // A data dir reached through a symlink is the one tightened.
        let link = root.path().join("data-link");
        std::os::unix::fs::symlink(&data, &link).unwrap();
        fs::set_permissions(&data, fs::Permissions::from_mode(0o755)).unwrap();
        assert_eq!(
            loose_entries(&link),
            vec![(data.canonicalize().unwrap(), 0o755)]
        );
        assert!(tighten_data_dir(&link, false).is_empty());
        assert_eq!(mode_of(&data), 0o700);
    }
}

//! Reading a file from outside ([`read_capped`]: a regular file only, never more than a cap)
//! and replacing a file the user owns (an agent's settings, Cairn's `config.toml`) so that a
//! crash, a full disk or a second writer never leaves half of it, and nothing about it but its
//! content changes.
//!
//! A symlink is resolved and its target written (a settings file kept in a dotfiles repository
//! stays a link), the file keeps its mode, and the new content goes through a temp file created
//! beside the target with `create_new` (never an existing file, whatever its name), written,
//! flushed to disk, then renamed over the target; the directory is flushed too, so the rename
//! itself survives a power cut.

use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// Why [`read_capped`] read nothing.
#[derive(Debug)]
pub enum Unread {
    Missing,
    /// A FIFO, a device, a socket or a folder.
    NotRegular,
    /// At least this many bytes, more than the cap.
    TooLarge(u64),
    Io(io::Error),
}

/// The bytes of the regular file at `path` (through its symlinks), at most `max`. The open
/// does not wait on a FIFO, the file is checked once open (a swap after a check of the path is
/// no way around it), and no more than `max + 1` bytes are ever read (`/dev/zero` behind a
/// link, a file growing while it is read).
pub fn read_capped(path: &Path, max: u64) -> Result<Vec<u8>, Unread> {
    use std::io::Read;
    let mut open = fs::OpenOptions::new();
    open.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        // A FIFO with no writer would block the open; a regular file ignores the flag.
        open.custom_flags(rustix::fs::OFlags::NONBLOCK.bits() as i32);
    }
    let file = open.open(path).map_err(|e| match e.kind() {
        io::ErrorKind::NotFound => Unread::Missing,
        _ => Unread::Io(e),
    })?;
    let meta = file.metadata().map_err(Unread::Io)?;
    if !meta.is_file() {
        return Err(Unread::NotRegular);
    }
    if meta.len() > max {
        return Err(Unread::TooLarge(meta.len()));
    }
    let mut bytes = Vec::new();
    file.take(max + 1)
        .read_to_end(&mut bytes)
        .map_err(Unread::Io)?;
    if bytes.len() as u64 > max {
        return Err(Unread::TooLarge(bytes.len() as u64));
    }
    Ok(bytes)
}

/// How many symlinks [`resolve`] follows before giving up (Linux's own limit).
const MAX_LINKS: usize = 40;

/// A failed replace: the file it was writing and why.
#[derive(Debug)]
pub struct Failed {
    pub path: PathBuf,
    pub source: io::Error,
}

impl Failed {
    fn at(path: &Path) -> impl FnOnce(io::Error) -> Failed + '_ {
        move |source| Failed {
            path: path.to_owned(),
            source,
        }
    }
}

/// The file `path` names once every symlink along the way is followed: the file to write. A
/// dangling link gives the (missing) file it points to; a loop is an error.
pub fn resolve(path: &Path) -> io::Result<PathBuf> {
    let mut path = path.to_owned();
    for _ in 0..MAX_LINKS {
        match fs::symlink_metadata(&path) {
            Ok(meta) if meta.file_type().is_symlink() => {
                let target = fs::read_link(&path)?;
                path = match path.parent() {
                    Some(dir) => dir.join(target),
                    None => target,
                };
            }
            Ok(_) => return Ok(path),
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(path),
            Err(e) => return Err(e),
        }
    }
    Err(io::Error::other(format!(
        "{}: more than {MAX_LINKS} symlinks (a loop?)",
        path.display()
    )))
}

/// Replace the content of the file at `path` (following symlinks) with `bytes`. The file keeps
/// its mode; a new file gets `new_mode`. Returns the file written.
pub fn replace(path: &Path, bytes: &[u8], new_mode: u32) -> Result<PathBuf, Failed> {
    let target = resolve(path).map_err(Failed::at(path))?;
    let dir = match target.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_owned(),
        _ => PathBuf::from("."),
    };
    let mode = match fs::metadata(&target) {
        Ok(meta) => permissions_of(&meta),
        Err(e) if e.kind() == io::ErrorKind::NotFound => new_mode,
        Err(e) => return Err(Failed::at(&target)(e)),
    };
    let (tmp, mut file) = create_temp(&dir, &target, mode).map_err(Failed::at(&dir))?;
    let written = file
        .write_all(bytes)
        .and_then(|_| set_mode(&file, mode))
        .and_then(|_| file.sync_all());
    drop(file);
    if let Err(e) = written {
        let _ = fs::remove_file(&tmp);
        return Err(Failed::at(&tmp)(e));
    }
    if let Err(e) = fs::rename(&tmp, &target) {
        let _ = fs::remove_file(&tmp);
        return Err(Failed::at(&target)(e));
    }
    // The rename is durable once the directory is; a file system that cannot sync a directory
    // (some network file systems) has already done what it can.
    if let Ok(d) = fs::File::open(&dir) {
        let _ = d.sync_all();
    }
    sweep_stale(&dir, &target);
    Ok(target)
}

/// How old a temp file of ours must be before a later write takes it for a killed write's.
const STALE: std::time::Duration = std::time::Duration::from_secs(10 * 60);

/// Remove what killed writes of `target` left beside it: `.<name>.cairn-….tmp` files (this
/// module's, and the settings backups' written the same way) older than [`STALE`]. They hold
/// the file's content, secrets included, and nothing else would ever remove them.
fn sweep_stale(dir: &Path, target: &Path) {
    let Some(name) = target.file_name().map(|n| n.to_string_lossy().into_owned()) else {
        return;
    };
    let prefix = format!(".{name}.cairn-");
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let file_name = entry.file_name();
        let file_name = file_name.to_string_lossy();
        if !(file_name.starts_with(&prefix) && file_name.ends_with(".tmp")) {
            continue;
        }
        let stale = entry
            .metadata()
            .ok()
            .filter(fs::Metadata::is_file)
            .and_then(|m| m.modified().ok())
            .and_then(|t| t.elapsed().ok())
            .is_some_and(|age| age > STALE);
        if stale {
            let _ = fs::remove_file(entry.path());
        }
    }
}

/// A fresh temp file beside `target`: `.<name>.cairn-<pid>-<n>.tmp`, created with `create_new`
/// (never an existing file or a planted symlink) and `mode`.
fn create_temp(dir: &Path, target: &Path, mode: u32) -> io::Result<(PathBuf, fs::File)> {
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let pid = std::process::id();
    let mut last = None;
    for n in 0..100u32 {
        let tmp = dir.join(format!(".{name}.cairn-{pid}-{n}.tmp"));
        let mut options = fs::OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            options.mode(mode & 0o777);
        }
        match options.open(&tmp) {
            Ok(file) => return Ok((tmp, file)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => last = Some(e),
            Err(e) => return Err(e),
        }
    }
    Err(last.unwrap_or_else(|| io::Error::other("no free temp file name")))
}

#[cfg(unix)]
fn permissions_of(meta: &fs::Metadata) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    meta.permissions().mode() & 0o7777
}

#[cfg(not(unix))]
fn permissions_of(_: &fs::Metadata) -> u32 {
    0o644
}

/// Set exactly `mode` (the umask narrowed the one given at creation).
#[cfg(unix)]
fn set_mode(file: &fs::File, mode: u32) -> io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    file.set_permissions(fs::Permissions::from_mode(mode))
}

#[cfg(not(unix))]
fn set_mode(_: &fs::File, _: u32) -> io::Result<()> {
    Ok(())
}

#[cfg(all(test, unix))]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    /// A write sweeps what killed writes of the same file left beside it (their content is the
    /// file's, secrets included), once they are old enough to be no live write's; nothing else.
    #[test]
    fn a_write_sweeps_a_killed_writes_leftovers() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("settings.json");
        fs::write(&target, "{}").unwrap();
        let leftover = |name: &str, age: std::time::Duration| {
            let path = dir.path().join(name);
            let file = fs::File::create(&path).unwrap();
            file.set_modified(std::time::SystemTime::now() - age)
                .unwrap();
            path
        };
        let hour = std::time::Duration::from_secs(3600);
        let old_write = leftover(".settings.json.cairn-4242-0.tmp", hour);
        let old_backup = leftover(".settings.json.cairn-backup-4242.tmp", hour);
        let live = leftover(".settings.json.cairn-4343-0.tmp", std::time::Duration::ZERO);
        let other = leftover(".other.json.cairn-4242-0.tmp", hour);
        let mine = leftover("notes.tmp", hour);
        replace(&target, b"{\"a\": 1}", 0o600).unwrap();
        assert!(!old_write.exists() && !old_backup.exists());
        assert!(live.exists() && other.exists() && mine.exists());
        assert_eq!(fs::read_to_string(&target).unwrap(), "{\"a\": 1}");
    }

    fn mode_of(path: &Path) -> u32 {
        fs::metadata(path).unwrap().permissions().mode() & 0o7777
    }

    #[test]
    fn writes_through_symlinks_and_keeps_the_mode() {
        let root = tempfile::tempdir().unwrap();
        let dotfiles = root.path().join("dotfiles");
        let home = root.path().join("home");
        fs::create_dir_all(&dotfiles).unwrap();
        fs::create_dir_all(&home).unwrap();
        let real = dotfiles.join("settings.json");
        fs::write(&real, "old").unwrap();
        fs::set_permissions(&real, fs::Permissions::from_mode(0o640)).unwrap();
        // A relative link to a relative link.
        std::os::unix::fs::symlink("../dotfiles/settings.json", home.join("middle")).unwrap();
        std::os::unix::fs::symlink("middle", home.join("settings.json")).unwrap();

        let written = replace(&home.join("settings.json"), b"new", 0o600).unwrap();
        assert_eq!(
            fs::canonicalize(&written).unwrap(),
            fs::canonicalize(&real).unwrap()
        );
        assert!(
            fs::symlink_metadata(home.join("settings.json"))
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(fs::read_to_string(&real).unwrap(), "new");
        assert_eq!(mode_of(&real), 0o640);
        // No temp file is left behind, in either directory.
        for dir in [&dotfiles, &home] {
            let names: Vec<_> = fs::read_dir(dir)
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .filter(|n| n.contains("cairn"))
                .collect();
            assert!(names.is_empty(), "{names:?}");
        }
    }

    #[test]
    fn a_new_file_gets_the_new_mode_and_a_dangling_link_its_target() {
        let root = tempfile::tempdir().unwrap();
        let new = root.path().join("new.toml");
        replace(&new, b"x", 0o600).unwrap();
        assert_eq!(mode_of(&new), 0o600);
        let target = root.path().join("target.json");
        std::os::unix::fs::symlink(&target, root.path().join("link.json")).unwrap();
        replace(&root.path().join("link.json"), b"y", 0o600).unwrap();
        assert_eq!(fs::read_to_string(&target).unwrap(), "y");
    }

    #[test]
    fn a_planted_temp_name_is_never_written_through() {
        let root = tempfile::tempdir().unwrap();
        let victim = root.path().join("victim");
        fs::write(&victim, "keep").unwrap();
        let pid = std::process::id();
        // Someone guessed the first temp name and planted a symlink there.
        std::os::unix::fs::symlink(
            &victim,
            root.path().join(format!(".s.json.cairn-{pid}-0.tmp")),
        )
        .unwrap();
        replace(&root.path().join("s.json"), b"{}", 0o600).unwrap();
        assert_eq!(fs::read_to_string(&victim).unwrap(), "keep");
        assert_eq!(
            fs::read_to_string(root.path().join("s.json")).unwrap(),
            "{}"
        );
    }

    #[test]
    fn symlink_loops_are_an_error() {
        let root = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink("b", root.path().join("a")).unwrap();
        std::os::unix::fs::symlink("a", root.path().join("b")).unwrap();
        let err = replace(&root.path().join("a"), b"x", 0o600).unwrap_err();
        assert!(err.source.to_string().contains("symlinks"), "{:?}", err);
    }
}

//! The databases a rebuild from the copies set aside (`cairn reindex --from-copies` gives the
//! old `cairn.db` the name `cairn.db.damaged-<UTC time>`, or `…-<time>-<n>` when that is taken,
//! with its `-wal` and `-shm` beside it: `facade/rebuild.rs`, `swap_in`). The rebuild never
//! deletes them: they are the person's evidence of the damage, and what `.recover` reads. But
//! each holds every session the archive held then, forgotten ones too, so doctor names them
//! and a forget reaches into them ([`crate::Cairn::forget`]).
//!
//! A rebuild that did not finish (killed, or stopped by a full disk) leaves what it was making
//! instead: `cairn.db.rebuilding` with its `-wal` and `-shm`, or `cairn.db.rebuilt`, whole but
//! never put in place (no `cairn.db.swap` beside it). Those are no one's evidence, only a
//! half-made copy of the archive, yet they hold the text of every session read into them, so
//! doctor names them too ([`unfinished`]), and whoever holds the capture lock next removes them
//! ([`remove_unfinished`]: the next rebuild, a forget, a sync's sweep). A rebuild holds that
//! lock from before it makes the file to its swap, so the lock held is the proof that no
//! rebuild is writing the file removed.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use super::{Check, Status, check as made, quoted, shown, space};
use crate::archive::capture::{CaptureLock, LockGuard};
use crate::archive::store::DB_FILE;
use crate::store::{REBUILT, SWAP_MARK};

/// Where a rebuild from the copies makes the new database, until it is whole.
pub(crate) const BUILDING: &str = "cairn.db.rebuilding";

/// One database set aside, as found in the data dir.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SetAside {
    /// The database file (its `-wal` and `-shm` sit beside it under the same name).
    pub path: PathBuf,
    /// The file, its `-wal` and its `-shm`, in bytes.
    pub bytes: u64,
    /// When the file last changed (the rebuild's swap, or a forget's removal in it).
    pub modified: Option<SystemTime>,
}

/// The databases set aside in `data_dir`, by name. A name that is a hard link to the live
/// `cairn.db` (a rebuild stopped before its swap left it; the next rebuild takes it away) is the
/// archive itself, not a copy of it, and is left out.
pub(crate) fn list(data_dir: &Path) -> Vec<SetAside> {
    let prefix = format!("{DB_FILE}.damaged-");
    let Ok(entries) = std::fs::read_dir(data_dir) else {
        return Vec::new();
    };
    let live = file_id(&data_dir.join(DB_FILE));
    let mut found: Vec<SetAside> = entries
        .flatten()
        .filter_map(|entry| {
            let name = entry.file_name().to_string_lossy().into_owned();
            if !name.starts_with(&prefix) || name.ends_with("-wal") || name.ends_with("-shm") {
                return None;
            }
            let path = entry.path();
            if live.is_some() && file_id(&path) == live {
                return None;
            }
            found_with_sides(path)
        })
        .collect();
    found.sort_by(|a, b| a.path.cmp(&b.path));
    found
}

/// `path` with `suffix` after its name (SQLite's `-wal`, `-shm`).
pub(crate) fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(suffix);
    PathBuf::from(name)
}

/// The file at `path` with its `-wal` and `-shm`, when the file is there.
fn found_with_sides(path: PathBuf) -> Option<SetAside> {
    let meta = std::fs::metadata(&path).ok().filter(|m| m.is_file())?;
    let side = |suffix: &str| std::fs::metadata(with_suffix(&path, suffix)).map_or(0, |m| m.len());
    Some(SetAside {
        bytes: meta.len() + side("-wal") + side("-shm"),
        modified: meta.modified().ok(),
        path,
    })
}

/// What a rebuild from the copies that did not finish left in `data_dir`: the database it was
/// making (`cairn.db.rebuilding`), and a whole rebuilt one no swap is putting in place
/// (`cairn.db.rebuilt` without `cairn.db.swap`: with the mark, the next open of the archive
/// puts it in place, so it is no leftover). A rebuild under way makes the same files: only the
/// capture lock tells them apart (see [`unfinished_check`]).
pub(crate) fn unfinished(data_dir: &Path) -> Vec<SetAside> {
    let mut found: Vec<SetAside> = found_with_sides(data_dir.join(BUILDING))
        .into_iter()
        .collect();
    if !data_dir.join(SWAP_MARK).exists() {
        found.extend(found_with_sides(data_dir.join(REBUILT)));
    }
    found
}

/// Remove what a rebuild that did not finish left ([`unfinished`]), each file with its `-wal`
/// and `-shm`. `_held` is the capture lock, held by the caller: a rebuild holds it while it
/// makes these files, so none of them is being written. Returns the databases removed, or the
/// file that would not go and why.
pub(crate) fn remove_unfinished(
    data_dir: &Path,
    held: &LockGuard<'_>,
) -> Result<Vec<PathBuf>, (PathBuf, std::io::Error)> {
    remove_unfinished_where(data_dir, held, &|_| true)
}

/// [`remove_unfinished`] of the files `chosen` takes only (a forget's plan names those it
/// deletes); a stray `-wal` or `-shm` goes with `cairn.db.rebuilding` only when that is chosen.
pub(crate) fn remove_unfinished_where(
    data_dir: &Path,
    _held: &LockGuard<'_>,
    chosen: &dyn Fn(&Path) -> bool,
) -> Result<Vec<PathBuf>, (PathBuf, std::io::Error)> {
    let mut removed = Vec::new();
    for left in unfinished(data_dir).into_iter().filter(|a| chosen(&a.path)) {
        for file in [
            with_suffix(&left.path, "-wal"),
            with_suffix(&left.path, "-shm"),
            left.path.clone(),
        ] {
            match std::fs::remove_file(&file) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err((file, e)),
                _ => {}
            }
        }
        removed.push(left.path);
    }
    // A `-wal` or `-shm` whose database is gone already (a stop between two removals).
    for suffix in ["-wal", "-shm"]
        .into_iter()
        .filter(|_| chosen(&data_dir.join(BUILDING)))
    {
        let side = with_suffix(&data_dir.join(BUILDING), suffix);
        match std::fs::remove_file(&side) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err((side, e)),
            _ => {}
        }
    }
    if !removed.is_empty() {
        crate::store::sync_dir(data_dir);
    }
    Ok(removed)
}

/// The check of what a rebuild that did not finish left ([`unfinished`]). `busy`: another
/// process held the capture lock when doctor looked, so a rebuild may be making these files
/// now. `archive_missing`: the data dir holds no `cairn.db` (then a whole `cairn.db.rebuilt`
/// can stand in its place, which is said). `None` when there are none.
pub(crate) fn unfinished_check(
    found: &[SetAside],
    busy: bool,
    now: SystemTime,
    archive_missing: bool,
) -> Option<Check> {
    if found.is_empty() {
        return None;
    }
    let each = described(found, now);
    // With no archive beside it, a whole rebuilt one saves running the rebuild again.
    let whole = found
        .iter()
        .find(|a| a.path.file_name().is_some_and(|n| n == REBUILT))
        .filter(|_| archive_missing && !busy)
        .map(|a| {
            let db = a.path.with_file_name(DB_FILE);
            format!(
                " With no {DB_FILE} here, the whole rebuilt one can take its place instead: `mv {} {}`",
                quoted(&a.path),
                quoted(&db)
            )
        })
        .unwrap_or_default();
    let rm: Vec<String> = found
        .iter()
        .flat_map(|a| {
            [
                quoted(&a.path),
                quoted(&with_suffix(&a.path, "-wal")),
                quoted(&with_suffix(&a.path, "-shm")),
            ]
        })
        .collect();
    let detail = if busy {
        format!(
            "{}: a rebuild from the copies makes it, and another process holds the archive's lock now, so one may be under way (or a capture is). Once no `cairn reindex --from-copies` runs, run `cairn doctor` again: a rebuild that did not finish left it, and the next sync, forget or rebuild removes it",
            each.join(", ")
        )
    } else {
        format!(
            "{}: left by a rebuild from the copies that did not finish (killed, or stopped). It is no archive's, only a half-made copy, but holds the text of every session read into it, forgotten ones too. The next `cairn sync`, `cairn forget` or `cairn reindex --from-copies` removes it; to remove it now: `rm -f {}`.{whole}",
            each.join(", "),
            rm.join(" ")
        )
    };
    Some(made("unfinished rebuild", Status::Warn, detail))
}

/// Doctor's check of what a rebuild that did not finish left in `data_dir`
/// ([`unfinished_check`]), the capture lock tried (and let go at once) to tell a rebuild
/// under way from one that stopped. Made whether or not `cairn.db` is there: a rebuild of a
/// lost archive leaves the same files.
pub(crate) fn check_unfinished(data_dir: &Path, now: SystemTime) -> Option<Check> {
    let found = unfinished(data_dir);
    if found.is_empty() {
        return None;
    }
    let busy = lock_held_elsewhere(data_dir);
    unfinished_check(&found, busy, now, archive_missing(data_dir))
}

/// Whether `data_dir` holds no archive and none is on its way into place: no `cairn.db` with
/// anything in it, and no rebuilt one a swap is putting there ([`swap_pending`]).
pub(crate) fn archive_missing(data_dir: &Path) -> bool {
    !std::fs::metadata(data_dir.join(DB_FILE)).is_ok_and(|m| m.len() > 0)
        && swap_pending(data_dir).is_none()
}

/// A whole rebuilt database a swap is putting in `cairn.db`'s place (`cairn.db.rebuilt` with
/// `cairn.db.swap` beside it: a rebuild stopped mid-swap). Whoever opens the archive for writing
/// next finishes the swap ([`crate::store::finish_swap`]).
pub(crate) fn swap_pending(data_dir: &Path) -> Option<SetAside> {
    if !data_dir.join(SWAP_MARK).exists() {
        return None;
    }
    found_with_sides(data_dir.join(REBUILT))
}

/// The check of a rebuilt archive waiting to be put in place ([`swap_pending`]) where the data
/// dir holds no `cairn.db`: what doctor read as no archive is that one. `None` when there is
/// none.
pub(crate) fn swap_pending_check(data_dir: &Path, now: SystemTime) -> Option<Check> {
    let rebuilt = swap_pending(data_dir)?;
    Some(made(
        "rebuilt archive",
        Status::Warn,
        format!(
            "{}: a rebuild from the copies made it and stopped while putting it in {DB_FILE}'s place. The next command that writes to the archive (`cairn sync`) puts it there; delete nothing",
            described(std::slice::from_ref(&rebuilt), now).join(", ")
        ),
    ))
}

/// Whether another process holds the capture lock of `data_dir` now (tried, and let go at
/// once): a rebuild may be making the files [`unfinished`] lists. Creates nothing: with no lock
/// file, no process holds the lock.
pub(crate) fn lock_held_elsewhere(data_dir: &Path) -> bool {
    data_dir.join("capture.lock").exists()
        && CaptureLock::open(data_dir).is_ok_and(|lock| {
            matches!(
                lock.try_lock(data_dir, "a capture or a reindex"),
                Err(crate::error::Error::Locked { .. })
            )
        })
}

/// Each file as a person reads it: its path, size and age.
fn described(found: &[SetAside], now: SystemTime) -> Vec<String> {
    found
        .iter()
        .map(|a| {
            let age = a
                .modified
                .and_then(|m| now.duration_since(m).ok())
                .map_or_else(|| "age unknown".to_owned(), age);
            format!("{} ({}, {age})", shown(&a.path), space::bytes(a.bytes))
        })
        .collect()
}

/// Which file `path` is (device and inode), where the platform says.
fn file_id(path: &Path) -> Option<(u64, u64)> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt as _;
        std::fs::metadata(path).ok().map(|m| (m.dev(), m.ino()))
    }
    #[cfg(not(unix))]
    {
        let _ = path;
        None
    }
}

/// The check of the databases set aside: none is fine; each one is named with its size and
/// age, and the fix (delete it once the rebuilt archive is checked). With no archive beside them
/// (`archive_missing`: `cairn.db` lost after the rebuild), they may hold the only copy of what
/// only a database kept: then no deletion is suggested, only how to carry it into a new
/// archive. `None` when there are none.
pub(crate) fn check(found: &[SetAside], now: SystemTime, archive_missing: bool) -> Option<Check> {
    if found.is_empty() {
        return None;
    }
    let each = described(found, now);
    if archive_missing {
        let newest = found
            .iter()
            .max_by_key(|a| a.modified)
            .map_or_else(String::new, |a| quoted(&a.path));
        let db = found
            .first()
            .map_or_else(String::new, |a| quoted(&a.path.with_file_name(DB_FILE)));
        return Some(made(
            "set-aside databases",
            Status::Warn,
            format!(
                "{} a rebuild from the copies set aside: {}, and no {DB_FILE} beside them. They may hold the only copy of what only the archive's database kept (Recall's reviewed entries, forget tombstones, your links), and every session it held, forgotten ones too: keep them. To carry what one still reads into a new archive, copy it into place (its -wal too, as {DB_FILE}-wal, when one is beside it) and rebuild from the retained copies: `cp {newest} {db}`, then `cairn reindex --from-copies`",
                crate::text::plural(found.len(), "database"),
                each.join(", "),
            ),
        ));
    }
    let rm: Vec<String> = found.iter().map(|a| quoted(&a.path)).collect();
    Some(made(
        "set-aside databases",
        Status::Warn,
        format!(
            "{} a rebuild from the copies set aside: {}. Each still holds every session the archive held when it was set aside (a forget removes its sessions there too when the file reads cleanly, and names the file when it cannot). Once the rebuilt archive is checked (`cairn reindex --from-copies` said what it carried over and what it could not), delete them: `rm {}` (with any -wal and -shm beside them)",
            crate::text::plural(found.len(), "database"),
            each.join(", "),
            rm.join(" "),
        ),
    ))
}

/// How long ago, for a person: minutes, hours or days.
fn age(d: std::time::Duration) -> String {
    let s = d.as_secs();
    if s < 3600 {
        format!("{} old", crate::text::plural((s / 60).max(1), "minute"))
    } else if s < 86_400 {
        format!("{} old", crate::text::plural(s / 3600, "hour"))
    } else {
        format!("{} old", crate::text::plural(s / 86_400, "day"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    /// The swap's names are found (the `-wal` and `-shm` counted with their database), other
    /// files are not, and the check names each with its size, age and the fix.
    #[test]
    fn the_swap_names_are_listed_with_size_age_and_fix() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::fs::write(d.join(DB_FILE), b"live").unwrap();
        std::fs::write(d.join("cairn.db-wal"), b"live log").unwrap();
        std::fs::write(d.join("cairn.db.damaged-20250101T000000Z"), vec![0u8; 3000]).unwrap();
        std::fs::write(
            d.join("cairn.db.damaged-20250101T000000Z-wal"),
            vec![0u8; 100],
        )
        .unwrap();
        std::fs::write(d.join("cairn.db.damaged-20250101T000000Z-2"), b"x").unwrap();
        std::fs::write(d.join("cairn.db.rebuilding"), b"x").unwrap();
        let found = list(d);
        let names: Vec<String> = found
            .iter()
            .map(|a| a.path.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        assert_eq!(
            names,
            [
                "cairn.db.damaged-20250101T000000Z",
                "cairn.db.damaged-20250101T000000Z-2"
            ]
        );
        assert_eq!(found[0].bytes, 3100);
        let later = found[0].modified.unwrap() + Duration::from_secs(3 * 86_400 + 5);
        let c = check(&found, later, false).unwrap();
        assert_eq!(c.status, Status::Warn);
        assert!(c.detail.starts_with("2 databases a rebuild"), "{c:?}");
        assert!(c.detail.contains("3.0 KiB, 3 days old"), "{c:?}");
        assert!(
            c.detail.contains(&format!(
                "rm '{}'",
                d.join("cairn.db.damaged-20250101T000000Z").display()
            )),
            "{c:?}"
        );
        assert!(check(&[], later, false).is_none());
    }

    /// What a rebuild that did not finish left is listed (the half-built file with its `-wal`
    /// counted, a rebuilt one no swap is putting in place), a rebuilt one the next open swaps
    /// in is not; the check says what it is and, only when no one holds the lock, the `rm`.
    #[test]
    fn a_rebuild_that_did_not_finish_is_listed_and_a_swap_is_not() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::fs::write(d.join(DB_FILE), b"live").unwrap();
        assert!(unfinished(d).is_empty());
        std::fs::write(d.join(BUILDING), vec![0u8; 2048]).unwrap();
        std::fs::write(d.join("cairn.db.rebuilding-wal"), vec![0u8; 1024]).unwrap();
        std::fs::write(d.join(REBUILT), b"whole").unwrap();
        let found = unfinished(d);
        let names: Vec<String> = found
            .iter()
            .map(|a| a.path.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, [BUILDING, REBUILT]);
        assert_eq!(found[0].bytes, 3072);
        let later = found[0].modified.unwrap() + Duration::from_secs(2 * 3600 + 1);
        let c = unfinished_check(&found, false, later, false).unwrap();
        assert_eq!(c.status, Status::Warn);
        assert!(c.detail.contains("3.0 KiB, 2 hours old"), "{c:?}");
        assert!(c.detail.contains("did not finish"), "{c:?}");
        assert!(
            c.detail.contains(&format!(
                "rm -f '{}' '{}-wal'",
                d.join(BUILDING).display(),
                d.join(BUILDING).display()
            )),
            "{c:?}"
        );
        let busy = unfinished_check(&found, true, later, false).unwrap();
        assert!(
            busy.detail.contains("may be under way") && !busy.detail.contains("rm -f"),
            "{busy:?}"
        );
        // With the swap's mark, the next open puts the rebuilt database in place.
        std::fs::write(d.join(SWAP_MARK), b"aside").unwrap();
        assert_eq!(unfinished(d).len(), 1);
        assert!(unfinished_check(&[], false, later, false).is_none());
    }

    /// A name that is a hard link to the live database (a rebuild stopped before its swap) is
    /// the archive itself, not a database set aside.
    #[cfg(unix)]
    #[test]
    fn a_link_to_the_live_database_is_not_set_aside() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::fs::write(d.join(DB_FILE), b"live").unwrap();
        std::fs::hard_link(d.join(DB_FILE), d.join("cairn.db.damaged-20250101T000000Z")).unwrap();
        assert!(list(d).is_empty());
    }
}

//! The databases a rebuild from the copies set aside (`cairn reindex --from-copies` gives the
//! old `cairn.db` the name `cairn.db.damaged-<UTC time>`, or `…-<time>-<n>` when that is taken,
//! with its `-wal` and `-shm` beside it: `facade/rebuild.rs`, `swap_in`). The rebuild never
//! deletes them: they are the person's evidence of the damage, and what `.recover` reads. But
//! each holds every session the archive held then, forgotten ones too, so doctor names them
//! and a forget reaches into them ([`crate::Cairn::forget`]).

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use super::{Check, Status, check as made, quoted, space};
use crate::archive::store::DB_FILE;

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
            let meta = std::fs::metadata(&path).ok().filter(|m| m.is_file())?;
            if live.is_some() && file_id(&path) == live {
                return None;
            }
            let side = |suffix: &str| {
                let mut name = path.as_os_str().to_owned();
                name.push(suffix);
                std::fs::metadata(PathBuf::from(name)).map_or(0, |m| m.len())
            };
            Some(SetAside {
                bytes: meta.len() + side("-wal") + side("-shm"),
                modified: meta.modified().ok(),
                path,
            })
        })
        .collect();
    found.sort_by(|a, b| a.path.cmp(&b.path));
    found
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
/// age, and the fix (delete it once the rebuilt archive is checked). `None` when there are none.
pub(crate) fn check(found: &[SetAside], now: SystemTime) -> Option<Check> {
    if found.is_empty() {
        return None;
    }
    let each: Vec<String> = found
        .iter()
        .map(|a| {
            let age = a
                .modified
                .and_then(|m| now.duration_since(m).ok())
                .map_or_else(|| "age unknown".to_owned(), age);
            format!("{} ({}, {age})", a.path.display(), space::bytes(a.bytes))
        })
        .collect();
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
        let c = check(&found, later).unwrap();
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
        assert!(check(&[], later).is_none());
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

//! The data dir's check: can capture write there, and is there room for it to.
//!
//! A full disk and a read-only archive look alike from a failed write, but their fixes differ
//! (free space, or fix a mount or a mode), so doctor writes a small file and says which it met.
//! What it measured is [`Facts`]; [`check`] decides from those alone, so every case is tested on
//! made-up numbers (a full file system is not something a test can make).

use std::path::{Path, PathBuf};

use super::{Check, Status, check as made};
use crate::archive::store::DB_FILE;
use crate::error::NoRoom;

/// How far the WAL grows before a checkpoint copies it into `cairn.db` and starts it over: the
/// writer's `wal_autocheckpoint` (8,192 pages) of 4 KiB pages (`store.rs`).
pub(crate) const WAL_GROWTH: u64 = 8192 * 4096;

/// Room a sync needs beside the WAL: the retained copies it appends and the full-text index
/// segments it merges (a batch of 2,000 records is a few MiB of both; this leaves room for many).
pub(crate) const HEADROOM: u64 = 64 << 20;

/// What doctor found of the data dir.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Facts {
    pub dir: PathBuf,
    /// What writing a file there met.
    pub probe: Probe,
    /// Bytes this user may still write on the data dir's file system (`statvfs`: blocks
    /// available to unprivileged users × fragment size); `None` when it could not be asked.
    pub free: Option<u64>,
    /// `cairn.db`, `cairn.db-wal` and everything under `retained/`, in bytes.
    pub db: u64,
    pub wal: u64,
    pub retained: u64,
    /// The archive opened read-only (its database would not open for writing).
    pub opened_read_only: bool,
    /// Why that open failed, when it was for lack of room.
    pub no_room: Option<NoRoom>,
}

/// What a write in the data dir met.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Probe {
    Wrote,
    /// ENOSPC, EDQUOT, EFBIG.
    NoRoom(NoRoom),
    /// EROFS: the file system is mounted read-only.
    ReadOnlyFs,
    /// EACCES, EPERM: this user may not write there.
    Denied,
    /// Anything else, as the OS said it.
    Failed(String),
}

impl Probe {
    /// The outcome a failed write's error stands for.
    pub(crate) fn of_error(e: &std::io::Error) -> Probe {
        use std::io::ErrorKind;
        if let Some(why) = NoRoom::of_io(e) {
            return Probe::NoRoom(why);
        }
        match e.kind() {
            ErrorKind::ReadOnlyFilesystem => Probe::ReadOnlyFs,
            ErrorKind::PermissionDenied => Probe::Denied,
            _ => Probe::Failed(e.to_string()),
        }
    }
}

/// Below this much free space a sync may run out: the WAL grows by [`WAL_GROWTH`] (or is
/// already `wal` long) before a checkpoint copies it into `cairn.db`, which can grow by as
/// much, and [`HEADROOM`] for the retained copies and the index beside them.
pub(crate) fn low_space(wal: u64) -> u64 {
    wal.max(WAL_GROWTH)
        .saturating_mul(2)
        .saturating_add(HEADROOM)
}

/// Measure the data dir `dir`: write a probe file there (removed at once), ask the file system
/// for its free space, add up Cairn's own files.
pub(crate) fn measure(dir: &Path, opened_read_only: bool, no_room: Option<NoRoom>) -> Facts {
    let size = |name: &str| std::fs::metadata(dir.join(name)).map_or(0, |m| m.len());
    Facts {
        dir: dir.to_owned(),
        probe: probe(dir),
        free: free_space(dir),
        db: size(DB_FILE),
        wal: size(&format!("{DB_FILE}-wal")),
        retained: tree_size(&dir.join("retained")),
        opened_read_only,
        no_room,
    }
}

/// Write one page (what a commit writes at the least) to a new file in `dir` and make it
/// durable, then remove it. Made durable because some file systems (NFS, some quota setups)
/// report no room only when the data is written back.
fn probe(dir: &Path) -> Probe {
    use std::io::Write as _;
    let path = dir.join(format!(".doctor-probe-{}", std::process::id()));
    let written = crate::private::open_options()
        .write(true)
        .create_new(true)
        .open(&path)
        .and_then(|mut f| {
            let wrote = f.write_all(&[0u8; 4096]).and_then(|()| f.sync_all());
            if let Err(e) = std::fs::remove_file(&path) {
                tracing::warn!("cannot remove doctor's probe {}: {e}", path.display());
            }
            wrote
        });
    match written {
        Ok(()) => Probe::Wrote,
        Err(e) => Probe::of_error(&e),
    }
}

#[cfg(unix)]
fn free_space(dir: &Path) -> Option<u64> {
    let stat = rustix::fs::statvfs(dir).ok()?;
    Some(stat.f_bavail.saturating_mul(stat.f_frsize))
}

#[cfg(not(unix))]
fn free_space(_dir: &Path) -> Option<u64> {
    None
}

/// The bytes of the files under `dir` (links not followed).
fn tree_size(dir: &Path) -> u64 {
    walkdir::WalkDir::new(dir)
        .follow_links(false)
        .into_iter()
        .flatten()
        .filter(|e| e.file_type().is_file())
        .filter_map(|e| e.metadata().ok())
        .map(|m| m.len())
        .sum()
}

/// `bytes` for a person, to one decimal in the largest unit it fills.
pub(crate) fn bytes(n: u64) -> String {
    const UNITS: [&str; 4] = ["KiB", "MiB", "GiB", "TiB"];
    if n < 1024 {
        return crate::text::plural(n, "byte");
    }
    let mut value = n as f64 / 1024.0;
    let mut unit = 0;
    while value >= 1024.0 && unit < UNITS.len() - 1 {
        value /= 1024.0;
        unit += 1;
    }
    format!("{value:.1} {}", UNITS[unit])
}

/// The data dir's check, decided from what was measured.
pub(crate) fn check(f: &Facts) -> Check {
    let dir = f.dir.display();
    let free = match f.free {
        Some(n) => format!("{} free", bytes(n)),
        None => "free space unknown".to_owned(),
    };
    let held = format!(
        "{DB_FILE} {}, {DB_FILE}-wal {}, retained/ {}",
        bytes(f.db),
        bytes(f.wal),
        bytes(f.retained)
    );
    let no_room = match &f.probe {
        Probe::NoRoom(why) => Some(*why),
        _ => f.no_room,
    };
    if let Some(why) = no_room {
        // A file-size limit is no full disk, but the same "no room" to the writes.
        let lead = match why {
            NoRoom::FileSizeLimit => "no room to write, not a read-only archive",
            NoRoom::DiskFull | NoRoom::Quota => {
                "disk full, not a read-only archive: no room to write"
            }
        };
        return made(
            "data dir",
            Status::Fail,
            format!(
                "{dir}: {lead} ({why}), {free} on its file system; Cairn holds {held}. Reading works; capture, forget and reindex cannot write until there is room. {} (Cairn's own files are its history: deleting them loses it), then run `cairn sync`; or move the data dir to a larger disk (--data-dir, CAIRN_DATA_DIR)",
                why.fix()
            ),
        );
    }
    let read_only = match &f.probe {
        Probe::ReadOnlyFs => Some(format!(
            "{dir} is on a read-only file system: reading works, capture does not ({free}: not a full disk). Remount it writable, or use another data dir (--data-dir, CAIRN_DATA_DIR)"
        )),
        Probe::Denied => Some(format!(
            "your user may not write in {dir}: reading works, capture does not ({free}: not a full disk). Make it and its files yours and writable (`chmod u+w`, or `sudo chown -R $USER` on it), or use another data dir (--data-dir, CAIRN_DATA_DIR)"
        )),
        _ if f.opened_read_only => Some(format!(
            "{dir}: the archive opened read-only, so reading works and capture does not, though a file can be written there ({free}: not a full disk); make {DB_FILE}, {DB_FILE}-wal and {DB_FILE}-shm your user's and writable (`chmod u+w`)"
        )),
        _ => None,
    };
    if let Some(detail) = read_only {
        return made("data dir", Status::Warn, detail);
    }
    if let Probe::Failed(why) = &f.probe {
        return made(
            "data dir",
            Status::Warn,
            format!(
                "{dir}: a test write there failed ({}), so capture may fail too ({free})",
                crate::text::one_line(why, 300)
            ),
        );
    }
    let least = low_space(f.wal);
    match f.free {
        Some(n) if n < least => made(
            "data dir",
            Status::Warn,
            format!(
                "{dir}: low on space, {} free on its file system, under the {} a sync can need (the WAL grows by {} before a checkpoint copies it into {DB_FILE}, which can grow as much, with room for the retained copies beside it); Cairn holds {held}. Free space on that disk, or remove old sessions with `cairn forget --before <date>` (it gives their space back)",
                bytes(n),
                bytes(least),
                bytes(f.wal.max(WAL_GROWTH)),
            ),
        ),
        _ => made("data dir", Status::Ok, format!("{dir} ({free})")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts(probe: Probe, free: Option<u64>) -> Facts {
        Facts {
            dir: "/data".into(),
            probe,
            free,
            db: 3 << 30,
            wal: 40 << 20,
            retained: 900 << 20,
            opened_read_only: false,
            no_room: None,
        }
    }

    /// Each errno a failed write can give is what it means: room, a mount, a permission.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_failed_write_is_told_by_its_errno() {
        let of = |errno| Probe::of_error(&std::io::Error::from_raw_os_error(errno));
        assert_eq!(of(28), Probe::NoRoom(NoRoom::DiskFull)); // ENOSPC
        assert_eq!(of(122), Probe::NoRoom(NoRoom::Quota)); // EDQUOT
        assert_eq!(of(27), Probe::NoRoom(NoRoom::FileSizeLimit)); // EFBIG
        assert_eq!(of(30), Probe::ReadOnlyFs); // EROFS
        assert_eq!(of(13), Probe::Denied); // EACCES
        assert_eq!(of(1), Probe::Denied); // EPERM
        assert!(matches!(of(5), Probe::Failed(_))); // EIO
    }

    /// A write that finds no room fails the check as a full disk, with the free bytes, Cairn's
    /// own files and the fix; never as read-only.
    #[test]
    fn no_room_fails_as_a_full_disk_naming_the_sizes_and_the_fix() {
        let c = check(&facts(Probe::NoRoom(NoRoom::DiskFull), Some(0)));
        assert_eq!(c.status, Status::Fail);
        for said in [
            "disk full",
            "the disk is full",
            "0 bytes free",
            "cairn.db 3.0 GiB",
            "cairn.db-wal 40.0 MiB",
            "retained/ 900.0 MiB",
            "Free space on that disk",
            "`cairn sync`",
        ] {
            assert!(c.detail.contains(said), "{said}: {}", c.detail);
        }
        assert!(!c.detail.contains("chmod"), "{}", c.detail);
        // The open already found no room (the database would not open writable): the same,
        // even when a small probe still fit.
        let mut opened = facts(Probe::Wrote, Some(2048));
        opened.opened_read_only = true;
        opened.no_room = Some(NoRoom::Quota);
        let c = check(&opened);
        assert_eq!(c.status, Status::Fail);
        assert!(c.detail.contains("quota"), "{}", c.detail);
    }

    /// Read-only is said as read-only, with its own fix, and as not a full disk.
    #[test]
    fn a_read_only_data_dir_is_not_a_full_disk() {
        for (probe, fix) in [
            (Probe::ReadOnlyFs, "Remount it writable"),
            (Probe::Denied, "chmod u+w"),
        ] {
            let c = check(&facts(probe, Some(50 << 30)));
            assert_eq!(c.status, Status::Warn);
            assert!(c.detail.contains("reading works, capture does not"));
            assert!(c.detail.contains(fix), "{}", c.detail);
            assert!(c.detail.contains("not a full disk"), "{}", c.detail);
            assert!(c.detail.contains("50.0 GiB free"), "{}", c.detail);
        }
        let mut opened = facts(Probe::Wrote, Some(50 << 30));
        opened.opened_read_only = true;
        let c = check(&opened);
        assert_eq!(c.status, Status::Warn);
        assert!(c.detail.contains("opened read-only"), "{}", c.detail);
    }

    /// Below twice the WAL's growth (or its present size) and 64 MiB, a warning; above it, ok
    /// with the free space said.
    #[test]
    fn little_room_left_warns_and_plenty_is_ok() {
        assert_eq!(low_space(0), 128 << 20);
        assert_eq!(low_space(1 << 30), (2 << 30) + (64 << 20));
        let c = check(&facts(Probe::Wrote, Some(100 << 20)));
        assert_eq!(c.status, Status::Warn);
        assert!(c.detail.contains("low on space"), "{}", c.detail);
        assert!(c.detail.contains("cairn forget --before"), "{}", c.detail);
        // A WAL grown large needs room to be copied back.
        let mut big_wal = facts(Probe::Wrote, Some(1 << 30));
        big_wal.wal = 3 << 30;
        let c = check(&big_wal);
        assert_eq!(c.status, Status::Warn, "{}", c.detail);
        assert!(c.detail.contains("cairn.db-wal 3.0 GiB"), "{}", c.detail);
        let c = check(&facts(Probe::Wrote, Some(200 << 20)));
        assert_eq!(c.status, Status::Ok);
        assert_eq!(c.detail, "/data (200.0 MiB free)");
        let c = check(&facts(Probe::Wrote, None));
        assert_eq!(c.status, Status::Ok);
    }

    /// The probe leaves nothing behind, and a real data dir measures.
    #[test]
    fn measuring_writes_nothing_that_stays() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(DB_FILE), [0u8; 100]).unwrap();
        std::fs::create_dir(dir.path().join("retained")).unwrap();
        std::fs::write(dir.path().join("retained/a.zst"), [0u8; 30]).unwrap();
        let f = measure(dir.path(), false, None);
        assert_eq!(f.probe, Probe::Wrote);
        assert_eq!((f.db, f.wal, f.retained), (100, 0, 30));
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 2);
        #[cfg(unix)]
        assert!(f.free.is_some());
    }
}

//! Who holds a lock file: the process, its command line and whether it is stopped, as the
//! system says. A wait for the capture lock can then name what it waits for (a `cairn sync`
//! stopped with Ctrl-Z holds the lock until it goes on or ends) instead of "another process".
//!
//! Only Linux says (`/proc/locks`); elsewhere [`LockHolder::of`] is `None` and a front door
//! says what it said before.

use std::path::Path;

/// The most of a holder's command line shown: enough for `cairn sync --data-dir <dir>`.
const COMMAND_CHARS: usize = 80;

/// The process that holds a lock file, as the system names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LockHolder {
    pub pid: u32,
    /// Its command line: the program's file name and its arguments joined by spaces, secrets
    /// redacted, made printable and cut ([`COMMAND_CHARS`]). Another user's process may name
    /// anything in its arguments (a `--password=…`, an escape sequence), so it leaves here only
    /// as a person may be shown it; a front door still cleans it as every field it prints.
    pub command: String,
    /// Stopped (Ctrl-Z, `SIGSTOP`): it holds the lock until it is continued or ends.
    pub stopped: bool,
}

impl LockHolder {
    /// The process holding the lock file `lock`; `None` when the system cannot say (not Linux,
    /// `/proc` not mounted, the lock let go meanwhile, a holder in another pid namespace).
    pub fn of(lock: &Path) -> Option<LockHolder> {
        #[cfg(target_os = "linux")]
        {
            use std::os::unix::fs::MetadataExt as _;
            let meta = std::fs::metadata(lock).ok()?;
            let locks = std::fs::read_to_string("/proc/locks").ok()?;
            let pid = holder_pid(&locks, meta.dev(), meta.ino())?;
            let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            Some(LockHolder {
                pid,
                command: command_line(&cmdline),
                stopped: is_stopped(&stat),
            })
        }
        #[cfg(not(target_os = "linux"))]
        {
            let _ = lock;
            None
        }
    }
}

/// The pid holding a lock on the file of device `dev` and inode `ino`, read from the text of
/// Linux's `/proc/locks` (`1: FLOCK  ADVISORY  WRITE 4242 08:01:1234 0 EOF`; the device as
/// hex major and minor). A line marked `->` is a process waiting for the lock, not holding it;
/// pid 0 is a holder outside this process's pid namespace, which cannot be named.
#[cfg(any(target_os = "linux", test))]
fn holder_pid(locks: &str, dev: u64, ino: u64) -> Option<u32> {
    // Linux's dev_t: the major number's bits are 8..20 and 32..44, the minor's 0..8 and 20..32.
    let major = ((dev >> 8) & 0xfff) | ((dev >> 32) & !0xfff);
    let minor = (dev & 0xff) | ((dev >> 12) & !0xff);
    locks.lines().find_map(|line| {
        let fields: Vec<&str> = line.split_whitespace().collect();
        if fields.get(1) == Some(&"->") {
            return None;
        }
        let (pid, place) = (fields.get(4)?, fields.get(5)?);
        let mut parts = place.split(':');
        let ma = u64::from_str_radix(parts.next()?, 16).ok()?;
        let mi = u64::from_str_radix(parts.next()?, 16).ok()?;
        let inode: u64 = parts.next()?.parse().ok()?;
        let pid: u32 = (ma == major && mi == minor && inode == ino).then(|| pid.parse().ok())??;
        (pid != 0).then_some(pid)
    })
}

/// A process's command line from `/proc/<pid>/cmdline` (arguments split by NUL): the program's
/// file name and its arguments joined by spaces, through the redactor and made printable, then
/// cut. Redacted whole, not argument by argument: `--password hunter2` is two arguments.
#[cfg(any(target_os = "linux", test))]
fn command_line(raw: &[u8]) -> String {
    let text = String::from_utf8_lossy(raw);
    let mut args = text.split('\0').filter(|a| !a.is_empty());
    let program = args.next().map_or("", |p| {
        Path::new(p)
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or(p)
    });
    let line = std::iter::once(program)
        .chain(args)
        .collect::<Vec<_>>()
        .join(" ");
    let shown =
        crate::archive::redact::Redactor::global().redact_printable(&line, "", &mut Vec::new());
    crate::text::excerpt(&shown, COMMAND_CHARS)
}

/// Whether `/proc/<pid>/stat` says the process is stopped (`T`, or `t` under a debugger). The
/// state follows the command name in parentheses, which may itself hold `)`.
#[cfg(any(target_os = "linux", test))]
fn is_stopped(stat: &str) -> bool {
    stat.rfind(')')
        .and_then(|at| stat[at + 1..].split_whitespace().next())
        .is_some_and(|state| state == "T" || state == "t")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The holder of a lock is read from `/proc/locks` by the file's device and inode; a
    /// process waiting for the lock (`->`) is not its holder, nor is pid 0 (one the system
    /// does not name here).
    #[test]
    fn the_lock_holder_is_found_by_device_and_inode() {
        let locks = "1: FLOCK  ADVISORY  WRITE 777 08:01:99 0 EOF\n\
                     2: FLOCK  ADVISORY  WRITE 4242 fd:02:1234 0 EOF\n\
                     2: -> FLOCK  ADVISORY  WRITE 5151 fd:02:1234 0 EOF\n\
                     3: FLOCK  ADVISORY  WRITE 0 fd:02:77 0 EOF\n";
        // Device fd:02 as Linux's dev_t encodes it.
        let dev = (0xfd << 8) | 0x02;
        assert_eq!(holder_pid(locks, dev, 1234), Some(4242));
        assert_eq!(holder_pid(locks, dev, 99), None);
        assert_eq!(holder_pid(locks, (0x08 << 8) | 0x01, 99), Some(777));
        assert_eq!(holder_pid(locks, dev, 77), None);
        assert_eq!(
            command_line(b"/usr/local/bin/cairn\0sync\0--data-dir\0/d\0"),
            "cairn sync --data-dir /d"
        );
        assert!(is_stopped("4242 (cairn (x) y) T 1 2 3"));
        assert!(!is_stopped("4242 (cairn) S 1 2 3"));
    }

    /// A command line is another process's text: a password in its arguments is redacted
    /// (given as one argument or two), an escape sequence never reaches the line, and a long
    /// one is cut.
    #[test]
    fn a_holders_command_line_is_redacted_printable_and_cut() {
        let shown = command_line(b"/usr/bin/mysqldump\0--password=hunter2xyz\0-h\0db\0");
        assert!(!shown.contains("hunter2xyz"), "{shown}");
        assert!(shown.contains("[REDACTED"), "{shown}");
        let shown = command_line(b"mysql\0--password\0s3cr3t-pw\0-h\0db\0");
        assert!(!shown.contains("s3cr3t-pw"), "{shown}");
        let shown = command_line(b"cairn\0sync\0\x1b]0;owned\x07\x1b[2J\0");
        assert!(
            !shown.contains('\u{1b}') && !shown.contains('\u{7}'),
            "{shown:?}"
        );
        assert!(shown.starts_with("cairn sync"), "{shown}");
        let long = format!("cairn\0sync\0--data-dir\0/{}\0", "d".repeat(200));
        let cut = command_line(long.as_bytes());
        assert!(cut.ends_with('…'), "{cut}");
        assert_eq!(cut.chars().count(), COMMAND_CHARS + 1, "{cut}");
    }
}

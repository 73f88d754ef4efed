//! A core error as the window says it. The core words its messages and hints for the command
//! line (`--data-dir`, `cairn doctor`, "run the command again"); the window has no flags and no
//! command to run again, so the errors whose fix names one are said here in the window's
//! terms: the folder to change, the page that shows the check, the button to press. Every other
//! error crosses as the core reports it ([`ErrorReport::from`]).

use std::path::{Path, PathBuf};

use cairn_core::{Error, ErrorKind, ErrorReport};

/// Where the window shows the archive's health checks and the recovery steps doctor gives.
const DATA_SETTINGS: &str = "Settings › Data and retention";
/// Where the window names the program an agent CLI runs (`[agent.<name>] binary`).
const AGENT_SETTINGS: &str = "Settings › Agent programs";

/// `e` as the window shows it: its kind, a message, and a fix the window can act on.
pub fn report(e: &Error) -> ErrorReport {
    let core = ErrorReport::from(e);
    match e {
        Error::ReadOnly { dir } => ErrorReport {
            message: format!(
                "{} is read-only: Cairn can show what the archive holds but cannot change it",
                dir.display()
            ),
            hint: Some(format!(
                "Make the folder and its files writable for your user ({}), then press Try again in the read-only notice at the top of the window.",
                chmod("-R u+w", dir)
            )),
            ..core
        },
        Error::Read { path, source } | Error::Write { path, source }
            if source.kind() == std::io::ErrorKind::PermissionDenied =>
        {
            denied(path, matches!(e, Error::Write { .. }), source, core)
        }
        Error::DiskFull { dir, file, why } => ErrorReport {
            message: format!(
                "cannot write to the data dir {}: {why} (writing {}); nothing stored before this was lost",
                dir.display(),
                file.display()
            ),
            hint: Some(format!("{}, then try again.", why.fix())),
            ..core
        },
        Error::Db { path, .. } => match core.kind {
            ErrorKind::ReadOnly => ErrorReport {
                hint: Some(format!(
                    "Make {} and its folder writable for your user ({}), then try again.",
                    path.display(),
                    chmod("u+w", path.parent().unwrap_or(path))
                )),
                ..core
            },
            ErrorKind::Corrupt => corrupt(core),
            _ => core,
        },
        Error::Corrupt { .. } => corrupt(core),
        // An agent CLI the generator could not start: the window names the program in Settings,
        // where the CLI says to edit config.toml by hand.
        Error::Generator { what, message } if message.starts_with("not found on PATH") => {
            ErrorReport {
                message: format!(
                    "{what}: not found on the PATH this app sees (an app started from the desktop may not see your shell's)"
                ),
                hint: Some(format!(
                    "Name the program in {AGENT_SETTINGS}, or pick another generator."
                )),
                ..core
            }
        }
        Error::ModelMissing { .. } => ErrorReport {
            // The CLI's way around a missing model is a flag; the window searches by words by
            // itself when meaning is unavailable.
            message: core.message.replace(
                "Lexical search (--mode lexical) works without it",
                "Search by words works without it",
            ),
            ..core
        },
        _ => core,
    }
}

/// A damaged archive: the window's own check of it says what is damaged and how to recover
/// (doctor's recipe), where the CLI says to run `cairn doctor` or `cairn reindex`.
fn corrupt(core: ErrorReport) -> ErrorReport {
    ErrorReport {
        hint: Some(format!(
            "{DATA_SETTINGS} checks the archive, says what is damaged and how to recover."
        )),
        ..core
    }
}

/// Permission denied reading or writing `path`. A file that does not exist yet (the archive's
/// database on a first run) cannot be what is at fault: the folder it would be made in is, and
/// it is what the message names, with the fix.
fn denied(path: &Path, write: bool, source: &std::io::Error, core: ErrorReport) -> ErrorReport {
    let may = if write { "write" } else { "read" };
    if path.exists() {
        return ErrorReport {
            hint: Some(format!(
                "Make {} {}able for your user ({}), then try again.",
                path.display(),
                may,
                chmod(if write { "u+rw" } else { "u+r" }, path)
            )),
            ..core
        };
    }
    let folder = nearest_existing(path);
    let name = path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    ErrorReport {
        message: format!(
            "cannot {} {name} in {}: your user may not {} that folder ({source})",
            if write { "create" } else { "read" },
            folder.display(),
            if write { "write to" } else { "read" }
        ),
        hint: Some(format!(
            "Make {} readable and writable for your user ({}), then try again.",
            folder.display(),
            chmod("u+rwx", &folder)
        )),
        ..core
    }
}

/// The nearest folder on `path`'s way that exists (the place a missing file would be made).
fn nearest_existing(path: &Path) -> PathBuf {
    path.ancestors()
        .skip(1)
        .find(|p| !p.as_os_str().is_empty() && p.exists())
        .unwrap_or_else(|| path.parent().unwrap_or(path))
        .to_path_buf()
}

/// A `chmod` line for `path`, quoted for a POSIX shell, in backticks (the window shows it as
/// code).
fn chmod(mode: &str, path: &Path) -> String {
    let quoted = path.display().to_string().replace('\'', "'\\''");
    format!("`chmod {mode} '{quoted}'`")
}

#[cfg(test)]
mod tests {
    use super::*;
    use cairn_core::error::NoRoom;

    fn denied_io() -> std::io::Error {
        std::io::Error::from(std::io::ErrorKind::PermissionDenied)
    }

    /// The first run on a data dir the user cannot write: the database does not exist, so the
    /// folder is named, with the command that fixes it; nothing names a flag.
    #[test]
    fn a_file_that_cannot_be_made_names_its_folder_and_the_fix() {
        let tmp = tempfile::tempdir().unwrap();
        let data = tmp.path().join("data");
        std::fs::create_dir(&data).unwrap();
        let e = Error::Write {
            path: data.join("cairn.db"),
            source: denied_io(),
        };
        let r = report(&e);
        let folder = data.display().to_string();
        assert_eq!(r.kind, ErrorKind::Io);
        assert!(
            r.message
                .starts_with(&format!("cannot create cairn.db in {folder}: ")),
            "{}",
            r.message
        );
        let hint = r.hint.unwrap();
        assert!(
            hint.contains(&format!("`chmod u+rwx '{folder}'`")),
            "{hint}"
        );
        assert!(!hint.contains("cairn.db"), "{hint}");

        // A file that exists is itself at fault.
        let db = data.join("cairn.db");
        std::fs::write(&db, "").unwrap();
        let e = Error::Write {
            path: db.clone(),
            source: denied_io(),
        };
        let r = report(&e);
        assert_eq!(r.message, e.to_string());
        assert!(
            r.hint
                .unwrap()
                .contains(&format!("`chmod u+rw '{}'`", db.display()))
        );
    }

    /// The errors whose core hint names a flag or a CLI command get the window's fix.
    #[test]
    fn no_hint_names_a_flag_or_a_command_line() {
        let dir = PathBuf::from("/srv/it's/data");
        let errors = [
            Error::ReadOnly { dir: dir.clone() },
            Error::DiskFull {
                dir: dir.clone(),
                file: dir.join("cairn.db"),
                why: NoRoom::DiskFull,
            },
            Error::Corrupt {
                path: dir.join("retained/x.zst"),
                what: "bad frame".into(),
            },
            Error::ModelMissing {
                looked: vec![dir.join("models")],
            },
            Error::Generator {
                what: "claude".into(),
                message: "not found on PATH: install it, or set `[agent.claude] binary = \"/path/to/claude\"` in the data dir's config.toml, or choose another generator (`cairn recall extract doctor` lists those at hand)".into(),
            },
        ];
        for e in &errors {
            let core = ErrorReport::from(e);
            let r = report(e);
            assert_eq!(r.kind, core.kind);
            let said = format!("{} {}", r.message, r.hint.clone().unwrap_or_default());
            for cli in [
                "--data-dir",
                "CAIRN_DATA_DIR",
                "cairn doctor",
                "cairn recall",
                "config.toml",
                "--mode",
                "run the command",
            ] {
                assert!(!said.contains(cli), "{e:?} says {cli}: {said}");
            }
        }
        let r = report(&Error::ReadOnly { dir: dir.clone() });
        assert!(r.message.contains("cannot change it"), "{}", r.message);
        assert!(!r.message.contains("capture"), "{}", r.message);
        assert!(
            r.hint
                .unwrap()
                .contains(r"`chmod -R u+w '/srv/it'\''s/data'`"),
            "quoted for a shell"
        );
        let r = report(&errors[2]);
        assert!(r.hint.unwrap().starts_with(DATA_SETTINGS));
        let r = report(&errors[4]);
        assert!(r.hint.unwrap().contains(AGENT_SETTINGS));
    }
}

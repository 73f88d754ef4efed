//! A data dir whose name is not UTF-8 (a folder named in another encoding, on Linux): doctor and
//! forget show its name saying so, and the `rm` each gives names the file itself, byte for byte,
//! not the lossy name, which is another folder's.

use std::process::{Command, Output};

use crate::support::{Env, check, succeeded};

/// The command in `text` that starts after `before` and runs to the next backquote, or to the
/// end of its line.
fn command_in(text: &str, before: &str) -> String {
    let at = text
        .find(before)
        .unwrap_or_else(|| panic!("no {before:?} in {text}"))
        + before.len();
    let rest = &text[at..];
    let end = rest.find(['`', '\n']).unwrap_or(rest.len());
    rest[..end].to_owned()
}

/// Run `line` in bash in `dir`; it must succeed.
fn bash(line: &str, dir: &std::path::Path) {
    let ran = Command::new("bash")
        .args(["-c", line])
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(ran.status.success(), "{line}: {ran:?}");
}

#[cfg(target_os = "linux")]
#[test]
fn commands_name_a_data_dir_that_is_not_utf8_byte_for_byte() {
    use std::os::unix::ffi::OsStrExt as _;
    let env = Env::new().with_fixtures();
    let data = env
        .root
        .path()
        .join(std::ffi::OsStr::from_bytes(b"da\xffta"));
    let cairn = |args: &[&str]| -> Output {
        env.command()
            .env("CAIRN_DATA_DIR", &data)
            .args(args)
            .output()
            .unwrap()
    };
    let ok = |args: &[&str]| succeeded(cairn(args), &format!("cairn {args:?}"));
    ok(&["sync"]);
    ok(&["reindex", "--from-copies", "--force"]);
    let aside = std::fs::read_dir(&data)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            name.starts_with("cairn.db.damaged-")
                && !name.ends_with("-wal")
                && !name.ends_with("-shm")
        })
        .unwrap();
    // The folder the lossy name names, holding a file of the same name: it must stay.
    let decoy = env
        .root
        .path()
        .join("da\u{FFFD}ta")
        .join(aside.file_name().unwrap());
    std::fs::create_dir_all(decoy.parent().unwrap()).unwrap();
    std::fs::write(&decoy, b"not the set-aside database").unwrap();

    // Doctor: the name says it is not UTF-8; the `rm` deletes the file itself.
    let doctor: serde_json::Value = serde_json::from_str(&ok(&["--json", "doctor"])).unwrap();
    let listed = check(&doctor, "set-aside databases")["detail"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        listed.contains("da\u{FFFD}ta/cairn.db.damaged-") && listed.contains("not UTF-8"),
        "{listed}"
    );
    let doctors_rm = command_in(&listed, "delete them: `");
    let archive = check(&doctor, "archive")["detail"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(archive.contains("not UTF-8"), "{archive}");

    // Forget: a set-aside database it may not write is named with the `rm` that deletes it.
    rusqlite::Connection::open(&aside)
        .unwrap()
        .execute_batch("PRAGMA user_version = 3")
        .unwrap();
    let id = "1af7fc5e-8455-4414-9ccd-011d40f70b2a";
    let planned = ok(&["forget", id, "--dry-run"]);
    assert!(
        planned.contains("cannot be cleaned of them") && planned.contains("not UTF-8"),
        "{planned}"
    );
    let line = planned
        .lines()
        .find(|l| l.contains("rm -f"))
        .unwrap_or_else(|| panic!("no rm in {planned}"));
    assert!(
        line.contains("in bash or zsh (its name holds characters a terminal does not show, or bytes that are not UTF-8"),
        "{line}"
    );
    let forgets_rm = format!("rm -f{}", command_in(line, "rm -f"));
    let done = ok(&["forget", id, "--yes"]);
    assert!(done.contains(&forgets_rm), "{done}");

    let wal = {
        let mut name = aside.clone().into_os_string();
        name.push("-wal");
        std::path::PathBuf::from(name)
    };
    std::fs::write(&wal, b"").unwrap();
    bash(&forgets_rm, env.root.path());
    assert!(!aside.exists() && !wal.exists(), "{forgets_rm}");
    assert!(decoy.exists(), "{forgets_rm} deleted {}", decoy.display());
    std::fs::write(&aside, b"set aside again").unwrap();
    bash(&doctors_rm, env.root.path());
    assert!(!aside.exists(), "{doctors_rm}");
    assert!(decoy.exists(), "{doctors_rm} deleted {}", decoy.display());
    assert!(data.join("cairn.db").exists());
}

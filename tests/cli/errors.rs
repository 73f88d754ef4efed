//! A failed command run with `--json` says what failed as the core `ErrorReport` (the shape the
//! desktop gets) on stderr, with the exit code a person sees; stdout stays empty.

use cairn_core::{ErrorKind, ErrorReport};

use crate::support::Env;

/// Run with `--json`, expect failure with `code`, and read the report from stderr.
fn failed(env: &Env, args: &[&str], code: i32) -> ErrorReport {
    let mut all = vec!["--json"];
    all.extend_from_slice(args);
    let out = env.run(&all);
    assert_eq!(out.status.code(), Some(code), "{all:?}");
    assert!(out.stdout.is_empty(), "{all:?} printed on stdout");
    let stderr = String::from_utf8(out.stderr).unwrap();
    // CLI.md: an error is one line on stderr, as JSON too.
    assert_eq!(stderr.lines().count(), 1, "{all:?}: {stderr}");
    serde_json::from_str(&stderr)
        .unwrap_or_else(|e| panic!("{all:?}: not a report ({e}): {stderr}"))
}

#[test]
fn json_failures_are_error_reports_with_the_usual_exit_code() {
    let env = Env::new();
    env.ok(&["sync"]);

    // A cause the error already quotes is said once (the io error of a file that is not there).
    let gone = env.home().join("no-such-trajectory.json");
    let unread = failed(&env, &["import", gone.to_str().unwrap()], 1);
    assert!(
        unread.message.contains("no-such-trajectory.json"),
        "{unread:?}"
    );
    assert_eq!(
        unread.message.matches("No such file or directory").count(),
        1,
        "{unread:?}"
    );

    let missing = failed(&env, &["show", "no-such-session"], 1);
    assert_eq!(missing.kind, ErrorKind::NotFound);
    assert!(missing.message.contains("no-such-session"), "{missing:?}");

    // Arguments the core checks together, and values clap refuses (a usage error keeps exit
    // code 2), with the values it takes as the hint.
    let bad = failed(
        &env,
        &[
            "recall",
            "query",
            "x",
            "--trusted-only",
            "--status",
            "archived",
        ],
        1,
    );
    assert_eq!(bad.kind, ErrorKind::Invalid);
    assert!(bad.message.contains("--trusted-only"), "{bad:?}");
    let closed = failed(&env, &["recall", "query", "x", "--type", "rumour"], 2);
    assert_eq!(closed.kind, ErrorKind::Invalid);
    assert!(closed.message.contains("rumour"), "{closed:?}");
    assert!(
        closed
            .hint
            .as_deref()
            .is_some_and(|h| h.contains("open_question")),
        "{closed:?}"
    );
    // A time bound that is no date is refused, not compared as text (which found nothing and
    // said nothing); a day or an RFC 3339 time in any offset is read.
    // A usage error (exit 2), as every command with a time bound says it; the words and spans
    // a person writes (`yesterday`, `7d`) are read, as `insights generate` reads them.
    for (args, value) in [
        (&["search", "phoenix", "--since"][..], "last tuesday"),
        (&["search", "phoenix", "--until"][..], "2026-13-45"),
        (&["forget", "--before"][..], ""),
        (&["recall", "extract", "preview", "--since"][..], "7days"),
    ] {
        let mut args = args.to_vec();
        args.push(value);
        let bad = failed(&env, &args, 2);
        assert_eq!(bad.kind, ErrorKind::Invalid);
        assert!(
            bad.message.contains(&format!("'{value}'")) && bad.message.contains("YYYY-MM-DD"),
            "{bad:?}"
        );
    }
    for since in ["yesterday", "today", "7d", "2w"] {
        env.ok(&["search", "phoenix", "--since", since]);
    }
    env.ok(&[
        "search",
        "phoenix",
        "--since",
        "2026-02-10",
        "--until",
        "2026-02-11T01:00:00+02:00",
    ]);

    let usage = failed(&env, &["recall", "query", "x", "--mode", "nope"], 2);
    assert_eq!(usage.kind, ErrorKind::Invalid);
    assert!(usage.message.contains("--mode"), "{usage:?}");
    assert!(
        usage.hint.as_deref().is_some_and(|h| h.contains("hybrid")),
        "{usage:?}"
    );

    // What clap found missing is named, not only its heading; a command without its
    // subcommand is refused as one (clap prints the command's help), with the choices.
    let missing = failed(&env, &["search"], 2);
    assert!(
        missing.message.contains("not provided") && missing.message.contains("<QUERY>"),
        "{missing:?}"
    );
    let bare = failed(&env, &[], 2);
    assert_eq!(bare.message, "`cairn` needs a subcommand");
    assert!(
        bare.hint
            .as_deref()
            .is_some_and(|h| h.contains("sync") && !h.contains("help")),
        "{bare:?}"
    );
    let bare = failed(&env, &["recall", "extract"], 2);
    assert_eq!(bare.message, "`cairn recall extract` needs a subcommand");
    assert!(
        bare.hint
            .as_deref()
            .is_some_and(|h| h.contains("preview") && h.contains("doctor")),
        "{bare:?}"
    );

    // An archive that does not read back: the core's kind and its fix.
    std::fs::write(env.data().join("cairn.db"), b"not a database, not at all").unwrap();
    let corrupt = failed(&env, &["sessions"], 1);
    assert_eq!(corrupt.kind, ErrorKind::Corrupt);
    // No check can open a file that is no database: the hint is the way back, not `doctor`,
    // and the message does not blame FTS5 (the first thing that touched the file).
    assert!(
        corrupt.hint.as_deref().is_some_and(|h| h.contains("aside")
            && h.contains("cairn sync")
            && !h.contains("doctor")),
        "{corrupt:?}"
    );
    assert!(
        corrupt.message.contains("not a database") && !corrupt.message.contains("FTS5"),
        "{corrupt:?}"
    );
    // Without --json the same failure is one line, its hint after it, for a person.
    let human = env.run(&["sessions"]);
    assert_eq!(human.status.code(), Some(1));
    let stderr = String::from_utf8(human.stderr).unwrap();
    assert!(
        stderr.starts_with("cairn: cannot open the archive")
            && stderr.contains("; hint: ")
            && stderr.contains("aside")
            && stderr.trim_end().lines().count() == 1,
        "{stderr}"
    );
    // `doctor` runs all the same, fails the archive check with the same way back (not the
    // recovery recipe: nothing of a file that is no database can be recovered) and writes
    // nothing.
    let doctor = env.run(&["doctor"]);
    assert_eq!(doctor.status.code(), Some(1));
    let report = String::from_utf8(doctor.stdout).unwrap();
    let archive = report
        .lines()
        .find(|l| l.contains(" archive "))
        .unwrap_or_else(|| panic!("{report}"));
    assert!(
        archive.starts_with("FAIL")
            && archive.contains("not a database")
            && archive.contains("aside")
            && !archive.contains(".recover"),
        "{archive}"
    );
    assert_eq!(
        std::fs::read(env.data().join("cairn.db")).unwrap(),
        b"not a database, not at all"
    );
}

#[test]
fn help_is_not_an_error_under_json() {
    let out = Env::new().run(&["--json", "--help"]);
    assert_eq!(out.status.code(), Some(0));
    assert!(String::from_utf8(out.stdout).unwrap().contains("Usage"));
}

/// An error told to a stderr nobody reads any more (`cairn … 2>&1 | head -1`) exits 1 like any
/// error; it panicked (exit 101) on the broken pipe.
#[test]
fn an_error_on_a_closed_stderr_exits_1_not_in_a_panic() {
    let env = Env::new();
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let out = env
        .command()
        .args(["show", "no-such-session"])
        .stderr(writer)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
}

/// A reader that stops early (`cairn --json sessions | head -c 5`) is no failure, in JSON as in
/// text: exit 0, nothing on stderr.
#[test]
fn a_closed_pipe_is_not_an_error() {
    let env = Env::new().with_fixtures();
    env.ok(&["sync"]);
    for json in [true, false] {
        let mut cmd = env.command();
        if json {
            cmd.arg("--json");
        }
        let mut child = cmd
            .args(["search", "the", "--limit", "200"])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        // Closed before the answer is written: its first write fails with a broken pipe.
        drop(child.stdout.take());
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "json {json}: {stderr}");
        assert!(stderr.is_empty(), "json {json}: {stderr}");
    }
}

/// A `--data-dir` (or `$CAIRN_DATA_DIR`) that holds no archive, given to a command that only reads, is refused and
/// left as it was (a typo answered "No matches." and left an empty archive behind); `sync`
/// makes one there, as it always has.
#[test]
fn a_read_in_a_data_dir_without_an_archive_is_refused_and_makes_none() {
    let env = Env::new();
    let typo = env.root.path().join("dtaa");
    let typo_arg = typo.to_str().unwrap();
    for args in [
        &["search", "foo"][..],
        &["sessions"][..],
        &["show", "abc"][..],
        &["skim", "branch", "main"][..],
        &["export", "abc"][..],
        &["why", "retry the login"][..],
        &["recall", "query", "port"][..],
        &["recall", "list"][..],
        &["insights", "list"][..],
        // Commands that change what the archive holds need one too.
        &["forget", "--project", "x", "--dry-run"][..],
        &["link", "abc", "--to", "main"][..],
        &["unlink", "abc", "--to", "main"][..],
        &["reindex"][..],
        &["recall", "review"][..],
        &["recall", "extract", "status"][..],
        &["insights", "generate", "--since", "2026-01-01"][..],
        &["embeddings", "build"][..],
    ] {
        let mut all = vec!["--data-dir", typo_arg];
        all.extend(args);
        let out = env.run(&all);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
        assert!(
            err.contains("holds no archive") && err.contains("check --data-dir"),
            "{err}"
        );
        assert!(!typo.exists(), "{args:?} made {typo_arg}");
    }
    // Named by $CAIRN_DATA_DIR instead: the same, the variable named.
    let out = env
        .command()
        .env("CAIRN_DATA_DIR", &typo)
        .args(["sessions"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("holds no archive") && err.contains("check $CAIRN_DATA_DIR"),
        "{err}"
    );
    assert!(!typo.exists());
    env.ok(&["--data-dir", typo_arg, "sync"]);
    assert!(typo.join("cairn.db").exists());
    env.ok(&["--data-dir", typo_arg, "sessions"]);
}

/// Every command, argument and option says what it is in `-h`: a person reading the help of
/// any command finds no bare name.
#[test]
fn every_command_and_option_has_help() {
    let env = Env::new();
    let command = regex::Regex::new(r"^  (\S+)\s*(.*)$").unwrap();
    let option = regex::Regex::new(r"^ {1,5}(-\S.*?|<\S+>|\[\S+\])(\s{2,}(.*))?$").unwrap();
    let mut bare = Vec::new();
    let mut todo = vec![Vec::<String>::new()];
    let mut seen = 0;
    while let Some(path) = todo.pop() {
        seen += 1;
        let mut args: Vec<&str> = path.iter().map(String::as_str).collect();
        args.push("-h");
        let help = env.ok(&args);
        let lines: Vec<&str> = help.lines().collect();
        let mut section = "";
        for (i, line) in lines.iter().enumerate() {
            if let Some(name) = line.strip_suffix(':').filter(|_| !line.starts_with(' ')) {
                section = name;
                continue;
            }
            // A description clap puts on the next line, indented further.
            let next_says = lines
                .get(i + 1)
                .is_some_and(|n| n.starts_with("        ") && !n.trim().is_empty());
            match section {
                "Commands" => {
                    if let Some(c) = command.captures(line) {
                        if &c[1] == "help" {
                            continue;
                        }
                        if c[2].trim().is_empty() {
                            bare.push(format!("{} {}", path.join(" "), &c[1]));
                        }
                        let mut sub = path.clone();
                        sub.push(c[1].to_owned());
                        todo.push(sub);
                    }
                }
                "Options" | "Arguments" => {
                    if let Some(c) = option.captures(line)
                        && c.get(3).is_none_or(|d| d.as_str().trim().is_empty())
                        && !next_says
                    {
                        bare.push(format!("{}: {}", path.join(" "), c[1].trim()));
                    }
                }
                _ => {}
            }
        }
    }
    assert!(seen > 40, "only {seen} commands read");
    assert!(bare.is_empty(), "without help:\n{}", bare.join("\n"));
}

/// Output that cannot be written (a full disk behind a redirect) is named as the output, with
/// what to do, not as a bare "No space left on device"; a closed pipe is still no error.
#[test]
fn an_output_that_cannot_be_written_is_named_as_the_output() {
    let env = Env::new().with_fixtures();
    env.ok(&["sync"]);
    for json in [false, true] {
        let mut cmd = env.command();
        if json {
            cmd.arg("--json");
        }
        let out = cmd
            .arg("sessions")
            .stdout(std::fs::File::create("/dev/full").unwrap())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1), "{out:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("cannot write to standard output: No space left on device")
                && err.contains("free some space where the output goes"),
            "{err}"
        );
        if json {
            let report: serde_json::Value = serde_json::from_str(err.trim()).unwrap();
            assert_eq!(report["kind"], "no_room", "{report}");
        }
    }
}

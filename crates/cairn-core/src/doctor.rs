//! `cairn doctor`: is capture set up, and is anything about to lose history?

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::archive::Agent;
use crate::archive::discover::{self, DirAccess, DirOrigin, SourceDir};
use crate::config::Config;

pub(crate) mod endpoints;
pub(crate) mod recall;
pub(crate) mod set_aside;
pub(crate) mod space;
pub(crate) mod warnings;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Ok,
    Warn,
    Fail,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct Check {
    pub name: String,
    pub status: Status,
    pub detail: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct DoctorReport {
    pub checks: Vec<Check>,
}

impl DoctorReport {
    pub fn worst(&self) -> Status {
        if self.checks.iter().any(|c| c.status == Status::Fail) {
            Status::Fail
        } else if self.checks.iter().any(|c| c.status == Status::Warn) {
            Status::Warn
        } else {
            Status::Ok
        }
    }
}

/// What a doctor run may do beyond reading: by default nothing.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DoctorOptions {
    /// Connect to each model server `config.toml` names, to say whether anything answers there
    /// (`cairn doctor --probe`; [`endpoints::connect`]). Off by default: doctor contacts no one
    /// unless asked.
    pub probe: bool,
}

fn check(name: impl Into<String>, status: Status, detail: impl Into<String>) -> Check {
    Check {
        name: name.into(),
        status,
        detail: detail.into(),
    }
}

/// Checks that need no database: source dirs, hooks, MCP registrations.
/// `archive`: the data dir doctor checks when it is not at its default place.
/// `repositories`: the roots of the repositories the archive knows (where captured sessions
/// ran), in each of which a sync reads Aider's and Crush's files.
pub(crate) fn environment_checks(
    config: &Config,
    home: Option<&Path>,
    archive: Option<&Path>,
    repositories: &[PathBuf],
) -> Vec<Check> {
    let mut checks = Vec::new();
    // Agents with a transcript folder here: a hook missing for any other is no warning.
    let mut used = std::collections::BTreeSet::new();
    for agent in Agent::ALL {
        if !config.agent_enabled(agent) {
            checks.push(check(
                format!("{agent} sources"),
                Status::Ok,
                "disabled in config.toml",
            ));
            continue;
        }
        let dirs = discover::source_dirs(config, agent);
        // Aider and Crush keep their files in each repository, not under the home dir.
        let in_repositories = discover::in_repository(agent, Path::new("")).is_some();
        if in_repositories {
            let held = discover::in_repositories(agent, repositories, &mut Vec::new()).len();
            if held > 0 {
                used.insert(agent);
            }
            checks.push(repository_sources(
                agent,
                repositories.len(),
                held,
                dirs.len(),
            ));
        }
        for dir in dirs {
            let (status, detail, found) =
                source_dir(&dir, &discover::access(&dir.path), in_repositories);
            if found {
                used.insert(agent);
            }
            checks.push(check(format!("{agent} source dir"), status, detail));
            if agent == Agent::Hermes
                && let Some(survey) = crate::archive::sources::hermes::state_db_survey(&dir.path)
            {
                checks.push(hermes_state_db(survey));
            }
        }
    }
    if let Some(home) = home {
        for agent in crate::hooks::HOOKED {
            let unused = if !config.agent_enabled(agent) {
                Some("Cairn does not read it (disabled in config.toml)")
            } else if !used.contains(&agent) {
                Some("no transcript folder of it was found on this machine")
            } else {
                None
            };
            checks.push(hook_check(
                &crate::hooks::status(agent, home, archive),
                unused,
            ));
        }
        for agent in crate::hooks::mcp_config::MCP_AGENTS {
            checks.push(mcp_check(
                &crate::hooks::mcp_config::status(agent, home, None, archive),
                archive,
            ));
        }
    }
    checks
}

/// What a sync reads of an agent that keeps its file in each repository it works in (Aider's
/// history, Crush's database): that file in every repository captured sessions ran in
/// (`known`, of which `held` hold one), and in each folder named in the environment or
/// `config.toml` (`named`, each checked on a line of its own).
fn repository_sources(agent: Agent, known: usize, held: usize, named: usize) -> Check {
    let (var, file) = match agent {
        Agent::Crush => (crate::archive::sources::crush::ENV_DIRS, ".crush/crush.db"),
        _ => (
            crate::archive::sources::aider::ENV_DIRS,
            ".aider.chat.history.md",
        ),
    };
    let folders = if named == 1 {
        "folder".to_owned()
    } else {
        format!("{named} folders")
    };
    let more = if named == 0 {
        format!(
            "name more repositories (or folders of them) in ${var} or [sources.{agent}] dirs (Settings › Transcript folders)"
        )
    } else {
        format!("and those in the {folders} below (${var} or [sources.{agent}] dirs)")
    };
    let detail = match (known, held) {
        (0, _) if named == 0 => format!(
            "none set, and no repository known yet: a sync reads the {file} of each repository a captured session ran in; name repositories (or folders of them) in ${var} or [sources.{agent}] dirs (Settings › Transcript folders) to read theirs now"
        ),
        (0, _) => format!(
            "no repository known from captured sessions yet; a sync reads the {file} in the {folders} below (${var} or [sources.{agent}] dirs), and in each repository a captured session ran in"
        ),
        (1, held) => format!(
            "a sync reads the {file} of the repository captured sessions ran in ({}); {more}",
            if held == 0 {
                "it holds none"
            } else {
                "it holds one"
            }
        ),
        (known, held) => format!(
            "a sync reads the {file} of each of the {known} repositories captured sessions ran in ({}); {more}",
            match held {
                0 => "none holds one".to_owned(),
                1 => "1 holds one".to_owned(),
                n => format!("{n} hold one"),
            }
        ),
    };
    check(format!("{agent} sources"), Status::Ok, detail)
}

/// The check of one source dir: its status, what to say (for one that is there, how many
/// transcript files it holds), and whether a folder of the agent's is there (readable or not:
/// a hook is then worth having). `access` is what the file system said of it; `file_ok`: a
/// file there is a source too (an in-repository agent's history).
fn source_dir(dir: &SourceDir, access: &DirAccess, file_ok: bool) -> (Status, String, bool) {
    let agent = dir.agent;
    let path = dir.path.display();
    let origin = match dir.origin {
        DirOrigin::Config => "config.toml",
        DirOrigin::Env => "environment",
        DirOrigin::Default => "default",
    };
    // A link that leads nowhere (to itself, in a loop, or to a folder gone) is there but
    // unreadable: not the same as an agent never used.
    // A link to a folder this user may not read is not one of those.
    let dangling = match access {
        DirAccess::Absent => true,
        DirAccess::Unreadable(why) => !why.denied,
        DirAccess::Dir | DirAccess::File => false,
    } && std::fs::symlink_metadata(&dir.path)
        .is_ok_and(|m| m.file_type().is_symlink());
    // How many transcripts a sync would find there, by the walk a sync makes: a folder that
    // exists but holds none (the wrong one named) reads differently from one that holds many.
    let seen = || match discover::walk(dir, &mut Vec::new()).len() {
        0 => "no transcript file in it".to_owned(),
        n => format!("{} found", crate::text::plural(n, "transcript file")),
    };
    match access {
        DirAccess::Dir => (Status::Ok, format!("{path} ({origin}): {}", seen()), true),
        DirAccess::File if file_ok => (Status::Ok, format!("{path} ({origin}): {}", seen()), true),
        _ if dangling => (
            Status::Warn,
            format!(
                "{path} is a link that leads to no folder (a loop, or its target gone): {agent}'s transcripts there cannot be read; point it at the folder, or remove it ({origin})"
            ),
            false,
        ),
        // Whatever named it: a folder the OS will not show may hold every transcript.
        DirAccess::Unreadable(why) => (
            Status::Fail,
            format!("{} ({origin})", why.message(agent, &dir.path)),
            true,
        ),
        _ if dir.origin == DirOrigin::Default => (
            Status::Ok,
            format!("{path} not present: {agent} not used on this machine? ({origin})"),
            false,
        ),
        _ => (
            Status::Warn,
            format!("{path} does not exist ({origin}); fix the path or remove the setting"),
            false,
        ),
    }
}

/// An agent's cleanup against what Cairn captured: a warning when it deletes uncaptured
/// transcripts within seven days (with the command that captures them) or its setting is off.
pub(crate) fn retention_check(c: &crate::archive::retention::RetentionCheck) -> Check {
    let name = format!("{} retention", c.agent);
    let who = crate::archive::retention::agent_name(c.agent);
    let settings = crate::text::one_line(&c.settings, 300);
    if c.expiring > 0 {
        let first = c
            .soonest
            .as_deref()
            .and_then(|t| t.get(..10))
            .unwrap_or("soon");
        return check(
            name,
            Status::Warn,
            format!(
                "{who}: {}; {} file{} Cairn has not captured go within 7 days (the first on {first}). Capture them now: `{}`",
                c.rule,
                c.expiring,
                if c.expiring == 1 { "" } else { "s" },
                c.command
            ),
        );
    }
    if let Some(problem) = &c.problem {
        return check(name, Status::Warn, crate::text::one_line(problem, 600));
    }
    check(
        name,
        Status::Ok,
        format!(
            "{who}: {} ({settings}); nothing it deletes within 7 days is left uncaptured",
            c.rule
        ),
    )
}

/// Whether the agent's user config registers Cairn's MCP server (`cairn mcp install`), and
/// for this archive (`archive`: its data dir when not at the default place).
fn mcp_check(status: &crate::hooks::mcp_config::McpStatus, archive: Option<&Path>) -> Check {
    let agent = status.agent;
    let path = status.path.display();
    let named = |dir: Option<&Path>| match dir {
        Some(dir) => format!("the archive in {}", shown(dir)),
        None => "the archive at the default place".to_owned(),
    };
    match (&status.problem, &status.command) {
        (Some(problem), _) => check(format!("{agent} mcp"), Status::Warn, problem.clone()),
        (None, Some(_)) if status.other_archive => check(
            format!("{agent} mcp"),
            Status::Warn,
            format!(
                "the `cairn` server in {path} serves {}, not this one ({}); run `cairn mcp install --agent {agent}` with this archive to point it here",
                named(status.data_dir.as_deref()),
                named(archive)
            ),
        ),
        (None, Some(command)) => check(
            format!("{agent} mcp"),
            Status::Ok,
            format!(
                "the `cairn` server in {path} runs {command} on {}",
                named(archive)
            ),
        ),
        (None, None) => check(
            format!("{agent} mcp"),
            Status::Ok,
            format!(
                "not registered in {path}; the agent can query Cairn itself once you run `cairn mcp install --agent {agent}`"
            ),
        ),
    }
}

/// A hook's state; one not installed is a warning only for an agent used here (`unused` says
/// why one is not: no transcript folder of it found, or disabled), since only then are its
/// sessions captured late.
fn hook_check(status: &crate::hooks::HookStatus, unused: Option<&str>) -> Check {
    let agent = status.agent;
    if let Some(problem) = &status.problem {
        return check(
            format!("{agent} hook"),
            Status::Warn,
            crate::text::one_line(problem, 600),
        );
    }
    if status.other_archive {
        return check(
            format!("{agent} hook"),
            Status::Warn,
            format!(
                "installed in {}, but it captures into another archive than this one; run `cairn hooks install --agent {agent}` with this archive to capture here",
                status.path.display()
            ),
        );
    }
    if let Some(why) = status.not_running.as_deref().filter(|_| status.installed) {
        return check(
            format!("{agent} hook"),
            Status::Warn,
            format!(
                "installed in {}, but it does not run: {}",
                status.path.display(),
                crate::text::one_line(why, 600)
            ),
        );
    }
    if status.installed {
        let memory = if status.memory {
            "with memory at session start"
        } else {
            "memory at session start is off (`cairn hooks install` turns it on)"
        };
        check(
            format!("{agent} hook"),
            Status::Ok,
            format!("installed in {}; {memory}", status.path.display()),
        )
    } else if let Some(why) = unused {
        check(
            format!("{agent} hook"),
            Status::Ok,
            format!("not installed in {}; {why}", status.path.display()),
        )
    } else {
        check(
            format!("{agent} hook"),
            Status::Warn,
            format!(
                "not installed in {}; sessions are captured only by `cairn sync` (run `cairn hooks install --agent {agent}`)",
                status.path.display()
            ),
        )
    }
}

/// What `PRAGMA quick_check` finds wrong in the database at `db` (on a connection of its own, so
/// a long check holds up no other reader), `None` when nothing. It reads every page: a
/// damaged one can sit unnoticed for months in a part of the archive that is seldom read.
pub(crate) fn damage(db: &Path) -> Option<String> {
    let store = match crate::store::Store::open_read_only(db) {
        Ok(s) => s,
        Err(e) => return Some(e.to_string()),
    };
    let problems: rusqlite::Result<Vec<String>> = store
        .conn()
        .prepare("PRAGMA quick_check(20)")
        .and_then(|mut s| s.query_map([], |r| r.get(0))?.collect());
    match problems {
        Ok(p) if p.len() == 1 && p[0] == "ok" => None,
        Ok(p) => Some(p.join("; ")),
        Err(e) => Some(e.to_string()),
    }
}

/// The archive check's failure when the database is damaged: what was found, and the fix.
pub(crate) fn damaged(db: &Path, problems: &str) -> Check {
    let dir = db.parent().unwrap_or(db);
    check(
        "archive",
        Status::Fail,
        format!(
            "{} is damaged (quick_check: {}). Run `cairn reindex --from-copies`: it rebuilds the archive from the retained copies, those of transcripts the agents deleted too, and moves the damaged file aside (never deletes it), carrying over what only the database held (Recall's entries with your reviews, forget tombstones, your links) as far as it still reads and naming what it could not; then `cairn sync` reads what the transcripts gained since. It reads each table up to its first damaged page; SQLite's `.recover` reads past them: to try that instead, copy the data dir aside first (`cp -a {} {}`) and recover what SQLite still can read (`sqlite3 {} .recover | sqlite3 recovered.db`, then put recovered.db in place of cairn.db and delete cairn.db-wal and cairn.db-shm)",
            shown(db),
            crate::text::excerpt(problems, 400),
            quoted(dir),
            quoted(&set_aside::with_suffix(dir, ".bak")),
            quoted(db),
        ),
    )
}

/// What Hermes's `state.db` holds that Cairn does not read: the sessions no session document
/// holds (a Hermes that writes the database alone), which are not captured.
fn hermes_state_db(
    survey: Result<crate::archive::sources::hermes::StateDbSurvey, String>,
) -> Check {
    match survey {
        Ok(s) if s.without_document == 0 => check(
            "hermes state.db",
            Status::Ok,
            format!(
                "{}: {} also in the session documents Cairn reads",
                s.db.display(),
                if s.sessions == 1 {
                    "its session is".to_owned()
                } else {
                    format!("all {} sessions are", s.sessions)
                }
            ),
        ),
        Ok(s) => check(
            "hermes state.db",
            Status::Warn,
            format!(
                "{}: {} of {} {} no session document, and Cairn does not read this database yet, \
                 so {} not captured",
                s.db.display(),
                s.without_document,
                crate::text::plural(s.sessions, "session"),
                if s.without_document == 1 {
                    "has"
                } else {
                    "have"
                },
                if s.without_document == 1 {
                    "it is"
                } else {
                    "they are"
                },
            ),
        ),
        Err(e) => check(
            "hermes state.db",
            Status::Warn,
            format!(
                "{} (Hermes's session database: only counted, to say what Cairn does not read)",
                crate::text::one_line(&e, 300)
            ),
        ),
    }
}

/// Whether every session reads as this build's parsers read it; those read before their
/// agent's transcripts last changed may read differently now, which a reindex shows and puts
/// right. `read`: (read before, by agent; sessions read from a transcript).
pub(crate) fn older_reads(
    read: rusqlite::Result<(Vec<(String, u64)>, u64)>,
    revision: i64,
) -> Check {
    let read = read.map(|(by_agent, sessions)| {
        let older: u64 = by_agent.iter().map(|(_, n)| n).sum();
        let agents: Vec<String> = by_agent
            .iter()
            .map(|(agent, n)| format!("{} {n}", crate::text::one_line(agent, 40)))
            .collect();
        (older, agents.join(", "), sessions)
    });
    match read {
        Ok((0, _, sessions)) => check(
            "parsers",
            Status::Ok,
            if sessions == 1 {
                format!("the session reads as this build's parsers (revision {revision}) read it")
            } else {
                format!(
                    "all {sessions} sessions read as this build's parsers (revision {revision}) read them"
                )
            },
        ),
        Ok((older, agents, sessions)) => {
            let (were, them) = if older == 1 {
                ("was", "it")
            } else {
                ("were", "them")
            };
            check(
                "parsers",
                Status::Warn,
                format!(
                    "{older} of {} ({agents}) {were} read by an older Cairn, whose parsers may \
                     have misread {them} or its redaction rules missed a secret; \
                     `cairn reindex --outdated --dry-run` says what reading {them} again would \
                     change, `cairn reindex --outdated` does it (Settings › Data and retention › \
                     Read again)",
                    crate::text::plural(sessions, "session"),
                ),
            )
        }
        Err(e) => check("parsers", Status::Fail, e.to_string()),
    }
}

/// In place of the archive's checks when the data dir holds none: what is missing and what
/// makes it. A warning, not a failure: a fresh machine is not broken, but nothing is captured.
pub(crate) fn no_archive(data_dir: &Path) -> Check {
    let made = if data_dir.is_dir() {
        "exists"
    } else {
        "does not exist yet"
    };
    check(
        "archive",
        Status::Warn,
        format!(
            "{} {made} and holds no archive ({} is missing or empty): nothing is captured there. `cairn sync`, with the same --data-dir or $CAIRN_DATA_DIR, makes it (or check the one you meant); doctor created nothing",
            shown(data_dir),
            crate::store::DB_FILE,
        ),
    )
}

/// Whether the archive can be rebuilt from its retained copies (`cairn reindex`): every
/// session read from a transcript has each generation's copy, whole. `lacking`: how many
/// sessions were looked at, and those that cannot be read again with why.
pub(crate) fn retained_copies(lacking: crate::Result<(u64, Vec<(i64, String)>)>) -> Check {
    match lacking {
        Ok((sessions, lacking)) if lacking.is_empty() => check(
            "retained copies",
            Status::Ok,
            format!(
                "{} can be read again from {} (`cairn reindex`)",
                crate::text::plural(sessions, "session"),
                if sessions == 1 {
                    "its copy"
                } else {
                    "their copies"
                }
            ),
        ),
        Ok((sessions, lacking)) => check(
            "retained copies",
            Status::Warn,
            format!(
                "{} of {} cannot be read again (their records stay as they are): {}",
                lacking.len(),
                crate::text::plural(sessions, "session"),
                lacking.first().map_or("", |(_, why)| why.as_str())
            ),
        ),
        Err(e) => check("retained copies", Status::Fail, e.to_string()),
    }
}

/// Retained copies of forgotten transcripts still on disk: a forget stopped after its commit.
pub(crate) fn forgotten_copies_left(files: u64) -> Check {
    check(
        "forgotten copies",
        Status::Warn,
        format!(
            "{} of forgotten sessions still on disk (a forget was stopped before it deleted them): \
             `cairn sync` or the next `cairn forget` deletes them",
            crate::text::plural(files, "retained copy")
        ),
    )
}

/// Files and directories under the data dir that group or others can read: the archive holds
/// every transcript Cairn captured. A writable open tightens them; what is left is what could
/// not be (owned by someone else, a read-only data dir).
pub(crate) fn permissions(data_dir: &Path) -> Check {
    let loose = crate::private::loose_entries(data_dir);
    if loose.is_empty() {
        return check(
            "data dir permissions",
            Status::Ok,
            format!("{} and everything in it: owner only", shown(data_dir)),
        );
    }
    let shown: Vec<String> = loose
        .iter()
        .take(5)
        .map(|(path, mode)| format!("{} (mode {mode:o})", shown(path)))
        .collect();
    let more = match loose.len() {
        n if n > shown.len() => format!(" and {} more", n - shown.len()),
        _ => String::new(),
    };
    check(
        "data dir permissions",
        Status::Warn,
        format!(
            "readable by other users: {}{more}; the archive holds every captured transcript. Fix: `chmod -R go-rwx {}`",
            shown.join(", "),
            quoted(&crate::private::resolved(data_dir))
        ),
    )
}

/// `path` as one shell word for the commands a fix suggests: the path itself, byte for byte,
/// never its cleaned form nor its lossy one (either would name another file). Each run of UTF-8
/// text is written as [`crate::text::shell_quoted`] writes it (`$'…'` where a terminal would not
/// show it as it is); each byte that is not UTF-8 (a folder named in another encoding) as a
/// `$'\xNN'` part of the same word, which bash and zsh read back as that byte.
pub(crate) fn quoted(path: &Path) -> String {
    #[cfg(unix)]
    {
        use std::fmt::Write as _;
        use std::os::unix::ffi::OsStrExt as _;
        let mut word = String::new();
        // Whether the word ends with the `$'…'` part of bytes that are not UTF-8, which the
        // next such bytes join.
        let mut in_bytes = false;
        for chunk in path.as_os_str().as_bytes().utf8_chunks() {
            if !chunk.valid().is_empty() {
                word.push_str(&crate::text::shell_quoted(chunk.valid()));
                in_bytes = false;
            }
            if !chunk.invalid().is_empty() {
                if in_bytes {
                    word.pop();
                } else {
                    word.push_str("$'");
                }
                in_bytes = true;
                for b in chunk.invalid() {
                    let _ = write!(word, "\\x{b:02x}");
                }
                word.push('\'');
            }
        }
        if word.is_empty() {
            word.push_str("''");
        }
        word
    }
    #[cfg(not(unix))]
    {
        crate::text::shell_quoted(&path.to_string_lossy())
    }
}

/// `path` as a person reads it: the path itself when it is UTF-8 text; else its lossy form
/// (each run of bytes that are not text shown as U+FFFD), saying so, since that is not the
/// file's name and typing it names another file. A fix's command names it with [`quoted`].
pub(crate) fn shown(path: &Path) -> String {
    match path.to_str() {
        Some(text) => text.to_owned(),
        None => format!(
            "{} (a name that is not UTF-8: each \u{FFFD} stands for bytes that are not text)",
            path.to_string_lossy()
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fix's command names the file itself: a folder whose name holds an escape sequence is
    /// written with it escaped, never as the folder its cleaned name would be.
    #[test]
    fn a_fix_names_the_file_not_its_cleaned_name() {
        assert_eq!(quoted(Path::new("/h/data/cairn.db")), "'/h/data/cairn.db'");
        let odd = quoted(Path::new("/h/da\u{1b}[31mta/cairn.db"));
        assert_eq!(odd, "$'/h/da\\x1b\\x5b\\x33\\x31\\x6dta/cairn.db'");
        assert_eq!(crate::text::printable(&odd), odd);
    }

    /// A folder named in another encoding than UTF-8: its command names it byte for byte (the
    /// bytes that are not text as `$'\xNN'` parts of the same word), and its shown name says it
    /// is not the file's.
    #[cfg(unix)]
    #[test]
    fn a_name_that_is_not_utf8_is_quoted_byte_for_byte() {
        use std::os::unix::ffi::OsStrExt as _;
        let odd = Path::new(std::ffi::OsStr::from_bytes(b"/h/da\xff\xfeta/cairn.db"));
        assert_eq!(quoted(odd), "'/h/da'$'\\xff\\xfe''ta/cairn.db'");
        assert_eq!(
            shown(odd),
            "/h/da\u{FFFD}\u{FFFD}ta/cairn.db (a name that is not UTF-8: each \u{FFFD} stands for bytes that are not text)"
        );
        assert_eq!(shown(Path::new("/h/data")), "/h/data");
    }

    /// A source dir the OS will not show fails, in the words a sync warns with, and counts as
    /// used (a hook is worth having there); a missing default one is an agent not used here.
    /// The file system's answer is given (as root, mode 000 hides nothing).
    #[test]
    fn an_unreadable_source_dir_fails_and_a_missing_one_is_an_agent_not_used() {
        let dir = SourceDir {
            agent: Agent::Claude,
            path: "/home/ann/.claude/projects".into(),
            origin: DirOrigin::Default,
        };
        let why = discover::Unreadable {
            blocked: "/home/ann/.claude".into(),
            denied: true,
            error: "Permission denied (os error 13)".into(),
        };
        let (status, detail, used) = source_dir(&dir, &DirAccess::Unreadable(why.clone()), false);
        assert_eq!((status, used), (Status::Fail, true));
        assert!(
            detail.starts_with(&why.message(Agent::Claude, &dir.path)),
            "{detail}"
        );
        assert!(detail.contains("sudo chown -R $USER"), "{detail}");
        let (status, detail, used) = source_dir(&dir, &DirAccess::Absent, false);
        assert_eq!((status, used), (Status::Ok, false));
        assert!(detail.contains("not present"), "{detail}");
        let (status, _, used) = source_dir(&dir, &DirAccess::Dir, false);
        assert_eq!((status, used), (Status::Ok, true));
    }

    /// Aider has no home folder: with no repositories named, doctor says how to name them; a
    /// history file named directly is a source that exists.
    #[test]
    fn aider_without_sources_says_how_to_name_them() {
        let config = Config::default();
        if std::env::var_os(crate::archive::sources::aider::ENV_DIRS).is_some() {
            return; // the machine names its own; nothing to check
        }
        let checks = environment_checks(&config, None, None, &[]);
        let aider = checks
            .iter()
            .find(|c| c.name == "aider sources")
            .expect("a line for aider");
        assert!(
            aider.detail.contains("AIDER_HISTORY_DIRS"),
            "{}",
            aider.detail
        );
    }

    /// With no folder named, Aider and Crush are still read in every repository a captured
    /// session ran in (what `Cairn::discover` does): doctor says so, with how many there are and
    /// how many hold the file, not "none set".
    #[test]
    fn in_repository_agents_say_what_a_sync_reads() {
        let repos = tempfile::tempdir().unwrap();
        let roots: Vec<PathBuf> = ["a", "b", "c"]
            .iter()
            .map(|n| repos.path().join(n))
            .collect();
        for root in &roots {
            std::fs::create_dir_all(root.join(".crush")).unwrap();
        }
        std::fs::write(roots[0].join(".aider.chat.history.md"), "# aider chat\n").unwrap();
        std::fs::write(roots[1].join(".crush/crush.db"), b"").unwrap();
        std::fs::write(roots[2].join(".crush/crush.db"), b"").unwrap();
        let checks = environment_checks(&Config::default(), None, None, &roots);
        let line = |agent: &str| {
            checks
                .iter()
                .find(|c| c.name == format!("{agent} sources"))
                .map(|c| c.detail.clone())
                .expect("a line")
        };
        for (agent, file, held) in [
            (Agent::Aider, ".aider.chat.history.md", "(1 holds one)"),
            (Agent::Crush, ".crush/crush.db", "(2 hold one)"),
        ] {
            let detail = line(&agent.to_string());
            // A machine naming its own folders in the environment says them too.
            if discover::source_dirs(&Config::default(), agent).is_empty() {
                assert!(!detail.contains("none set"), "{detail}");
                assert!(
                    detail.contains(&format!(
                        "a sync reads the {file} of each of the 3 repositories captured sessions ran in {held}"
                    )),
                    "{detail}"
                );
            }
        }
        let one = repository_sources(Agent::Aider, 1, 0, 2);
        assert!(
            one.detail
                .contains("of the repository captured sessions ran in (it holds none)")
                && one.detail.contains("the 2 folders below"),
            "{}",
            one.detail
        );
    }
}

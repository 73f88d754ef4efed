//! `cairn team …`: the team archive in PostgreSQL. Flags, calls into `Cairn`, rendering; the
//! connection string's rules (no password on the command line, TLS off loopback) are the core's.

use std::io::Write;

use anyhow::Result;
use cairn_core::Cairn;
use cairn_core::team::{
    Server, TeamInit, TeamMembership, TeamPushReport, TeamRecallHit, TeamRepoScope, TeamSearchHit,
    TeamShow, TeamSkim,
};
use clap::{Args, Subcommand};

use crate::render::{self, clean, line, plural};

#[derive(Subcommand)]
pub enum TeamCommand {
    /// Set up the team archive in a database, once, as the database's owner (or a superuser):
    /// creates schema `cairn` and its tables, or brings them up to date. The tables' owner can
    /// read and write past row-level security, so no teammate's role may own them (pushes and
    /// reads refuse an archive one does). The archive is the team's alone: the tables and
    /// CONNECT on the database go to the team's role (`<database>_members`, made here when this
    /// role may create roles, else an administrator makes it first), never to PUBLIC; a
    /// teammate is a login role that is a member of it.
    Init {
        #[command(flatten)]
        at: At,
    },
    /// Add a teammate: make their login role a member of the team's role, as an administrator
    /// (a superuser, a role with CREATEROLE, or one holding the team's role WITH ADMIN OPTION).
    /// The name is the role as the server keeps it (`\du` in psql): one PostgreSQL would fold
    /// (capitals), cut (64 bytes or more) or that holds a control character is refused. A
    /// member already is left as is. With --create, the login role is made too, with a
    /// password typed at the prompt (or standard input's first line when piped): the server is
    /// sent its SCRAM-SHA-256 verifier, never the password, and neither is printed.
    Grant {
        /// The teammate's login role.
        role: String,
        #[command(flatten)]
        at: At,
        /// Make the login role (it must not exist yet) with a password read from the prompt
        /// or standard input, and add it to the team in the same transaction.
        #[arg(long)]
        create: bool,
        /// Refused: a password on the command line shows in the process list and the shell's
        /// history (type it at --create's prompt, or pipe it).
        #[arg(long, hide = true, value_name = "PASSWORD")]
        password: Option<String>,
    },
    /// Take a teammate out of the team: they can no longer connect, read or push. What they
    /// pushed stays in the team archive for the team (a superuser deletes it: the command
    /// prints the SQL); what they read stays on their machine. A role not in the team is left
    /// as is.
    Revoke {
        /// The teammate's login role.
        role: String,
        #[command(flatten)]
        at: At,
    },
    /// Mirror this archive (redacted: sessions, turns, records, links, trusted Recall entries)
    /// into the team's PostgreSQL database; only what changed since the last push there. The
    /// database's owner sets it up first (`cairn team init`). Your rows are owned by your
    /// database role.
    Push {
        #[command(flatten)]
        at: At,
        /// Show a progress bar even when stderr is not a terminal.
        #[arg(long)]
        progress: bool,
    },
    /// Search every teammate's records (PostgreSQL full text, web-search syntax: words,
    /// "a phrase", -not, or).
    Search {
        /// What to find.
        query: String,
        #[command(flatten)]
        at: At,
        /// At most this many hits.
        #[arg(long, default_value_t = 20)]
        limit: u32,
    },
    /// A branch or a PR (`#123`, a PR URL) across everyone who pushed, oldest session first.
    /// In a repository (-C), the sessions pushed from its clones (and those pushed with no
    /// repository known); --all-repos: every repository's. When more sessions match than
    /// --limit, the most recent are shown and the earlier ones counted as left out; --skip
    /// reads them a page at a time.
    Skim {
        /// A branch name, `#123` or a PR's URL.
        target: String,
        #[command(flatten)]
        at: At,
        /// Most sessions shown (at most 500).
        #[arg(long, default_value_t = cairn_core::team::read::MAX_LIMIT)]
        limit: u32,
        /// Pass over this many of the most recent sessions first (the next page: the number
        /// shown before).
        #[arg(long, default_value_t = 0)]
        skip: u32,
        /// Sessions of every repository with a target of this name, not only -C's clones'
        /// (what a skim outside any repository lists).
        #[arg(long)]
        all_repos: bool,
    },
    /// A teammate's session: its key, its first 8+ characters, or the agent's own session id.
    Show {
        /// The session's key, its first 8 characters or more, or the agent's session id.
        session: String,
        /// The publisher (database role), when two teammates' sessions match.
        #[arg(long)]
        publisher: Option<String>,
        #[command(flatten)]
        at: At,
    },
    /// Connect (read-only) and say as whom, what the team archive holds, and whether it is the
    /// team's alone: a warning when every role on the server may still connect to the
    /// database or read its tables (an archive `cairn team init` has not brought up).
    Status {
        #[command(flatten)]
        at: At,
    },
    /// Keep the team archive's password in the OS keyring (the Secret Service on Linux, the
    /// keychain on macOS), filed under USER@HOST:PORT/DB, so no variable has to hold it. Read
    /// from the terminal without echo, or from standard input's first line when piped. Tried
    /// against the server first: a password it refuses is not kept. Replaces a kept one.
    Login {
        #[command(flatten)]
        at: At,
        /// Keep it without trying it (the server is not reachable from here now).
        #[arg(long)]
        no_check: bool,
    },
    /// Forget the password the OS keyring keeps for the team archive.
    Logout {
        #[command(flatten)]
        at: At,
    },
    /// The team's trusted Recall entries matching a question or keywords.
    Recall {
        /// The question or keywords.
        query: String,
        #[command(flatten)]
        at: At,
        /// At most this many entries.
        #[arg(long, default_value_t = 10)]
        limit: u32,
    },
}

#[derive(Args)]
pub struct At {
    /// The team archive: postgres://USER@HOST[:PORT]/DATABASE (default: $CAIRN_TEAM_URL, else
    /// [team] in config.toml, which the desktop's Settings → Team writes). The password comes
    /// from CAIRN_TEAM_URL, else PGPASSWORD (with [team]: the variable its `password_env`
    /// names), else the OS keyring (`cairn team login`); never from this flag.
    #[arg(long = "to", visible_alias = "from", value_name = "URL")]
    url: Option<String>,
}

impl At {
    fn server(&self, cairn: &Cairn) -> Result<Server> {
        Ok(cairn.team_server(self.url.as_deref())?)
    }
}

/// `dir`: the folder of `-C`, whose repository a team skim reads; `keys`: print whole session
/// keys in human output (else each session's handle, [`handle`]).
pub fn run(
    command: TeamCommand,
    cairn: &Cairn,
    dir: &std::path::Path,
    json: bool,
    keys: bool,
    out: &mut impl Write,
) -> Result<()> {
    match command {
        TeamCommand::Init { at } => {
            let done = cairn.team_init(&at.server(cairn)?)?;
            if json {
                render::json(out, &done)?;
            } else {
                init(out, &done)?;
            }
        }
        TeamCommand::Grant {
            role,
            at,
            create,
            password,
        } => {
            if password.is_some() {
                // Not repeated: the message must not show it again.
                anyhow::bail!(
                    "refusing a password on the command line: it would show in the process list and shell history; `cairn team grant NAME --create` asks for it, or reads it from standard input's first line when piped"
                );
            }
            let server = at.server(cairn)?;
            let done = if create {
                // A name the core would refuse is refused before anyone types a password.
                cairn_core::team::members::check_name(&server, &role)?;
                let password = read_new_password(&server, &role)?;
                cairn.team_grant_new(&server, &role, &password)?
            } else {
                cairn.team_grant(&server, &role)?
            };
            if json {
                render::json(out, &done)?;
            } else {
                granted(out, &done)?;
            }
        }
        TeamCommand::Revoke { role, at } => {
            let done = cairn.team_revoke(&at.server(cairn)?, &role)?;
            if json {
                render::json(out, &done)?;
            } else {
                revoked(out, &done)?;
            }
        }
        TeamCommand::Push { at, progress } => {
            let server = at.server(cairn)?;
            let bar =
                render::CountBar::new(render::shows_progress(progress, json), "pushing sessions");
            let report = cairn.team_push(&server, &mut |done, total| {
                bar.set(u64::from(done), u64::from(total))
            })?;
            bar.done();
            if json {
                render::json(out, &report)?;
            } else {
                push(out, &report)?;
            }
        }
        TeamCommand::Search { query, at, limit } => {
            let hits = cairn.team_search(&at.server(cairn)?, &query, limit)?;
            warn(&hits.warnings);
            if json {
                render::json(out, &hits.rows)?;
            } else {
                search(out, &hits.rows, keys)?;
            }
        }
        TeamCommand::Skim {
            target,
            at,
            limit,
            skip,
            all_repos,
        } => {
            let repo = (!all_repos).then_some(dir);
            let skim = cairn.team_skim(&at.server(cairn)?, &target, limit, skip, repo)?;
            warn(&skim.warnings);
            if json {
                render::json(out, &skim)?;
            } else {
                skim_text(out, &skim, skip, keys)?;
            }
        }
        TeamCommand::Show {
            session,
            publisher,
            at,
        } => {
            let show = cairn.team_show(&at.server(cairn)?, &session, publisher.as_deref())?;
            warn(&show.warnings);
            if json {
                render::json(out, &show)?;
            } else {
                show_text(out, &show, keys)?;
            }
        }
        TeamCommand::Status { at } => {
            let status = cairn.team_status(&at.server(cairn)?)?;
            if json {
                render::json(out, &status)?;
            } else {
                status_text(out, &status)?;
            }
        }
        TeamCommand::Login { at, no_check } => {
            let server = at.server(cairn)?;
            let password = read_password(&server)?;
            let done = cairn.team_remember(&server, &password, !no_check)?;
            if json {
                render::json(out, &done)?;
            } else {
                writeln!(
                    out,
                    "{} the password for {} in {} (as {}){}",
                    if done.replaced { "replaced" } else { "kept" },
                    clean(&done.server),
                    clean(&done.store),
                    clean(&done.account),
                    if done.checked {
                        ""
                    } else {
                        "; not tried against the server"
                    }
                )?;
            }
        }
        TeamCommand::Logout { at } => {
            let server = at.server(cairn)?;
            let forgotten = cairn.team_forget(&server)?;
            let store = cairn_core::team::keyring::store_name();
            if json {
                render::json(
                    out,
                    &serde_json::json!({
                        "server": server.display(),
                        "account": server.account(),
                        "store": store,
                        "forgotten": forgotten,
                    }),
                )?;
            } else {
                if forgotten {
                    writeln!(
                        out,
                        "forgot the password {store} kept for {}: it keeps none for it now",
                        clean(server.display())
                    )?;
                } else {
                    writeln!(
                        out,
                        "{store} kept no password for {}",
                        clean(server.display())
                    )?;
                }
                writeln!(
                    out,
                    "the next `cairn team` command takes the password from {} (with none set, the server is asked without one); `cairn team login` keeps one again",
                    clean(server.password_variables())
                )?;
            }
        }
        TeamCommand::Recall { query, at, limit } => {
            let hits = cairn.team_recall(&at.server(cairn)?, &query, limit)?;
            warn(&hits.warnings);
            if json {
                render::json(out, &hits.rows)?;
            } else {
                recall(out, &hits.rows)?;
            }
        }
    }
    Ok(())
}

/// What a read says of the team archive itself (an archive every role on the server may read),
/// once a command, on stderr: `--json`'s standard output stays the document (`skim` and `show`
/// carry them as `warnings`).
fn warn(warnings: &[String]) {
    for w in warnings {
        say_err!("warning: {}", render::warning(w));
    }
}

/// `cairn team grant`'s lines: what changed, and the team after.
fn granted(out: &mut impl Write, r: &TeamMembership) -> Result<()> {
    let who = line(&cairn_core::team::schema::sql_name(&r.role), 60);
    let team = line(&cairn_core::team::schema::sql_name(&r.team_role), 80);
    if r.created {
        writeln!(
            out,
            "made the login role {who} with the password given (the server holds its SCRAM-SHA-256 verifier) and added it to the team (role {team}) at {}",
            clean(&r.server)
        )?;
    } else if r.changed {
        writeln!(
            out,
            "added {who} to the team (role {team}) at {}",
            clean(&r.server)
        )?;
    } else {
        writeln!(
            out,
            "{who} is already in the team (role {team}): nothing changed"
        )?;
    }
    // What the server answers, not what a grant usually means: the team's role may have lost
    // CONNECT on the database since `cairn team init` granted it.
    if r.may_connect {
        writeln!(
            out,
            "{who} may connect, read every teammate's records and push their own"
        )?;
        if let Some(url) = r.push_url.as_deref().filter(|_| r.changed) {
            writeln!(
                out,
                "next: {who} runs `cairn team push --to {}` with {} password",
                clean(url),
                if r.created { "the" } else { "their own" }
            )?;
        }
    } else {
        writeln!(
            out,
            "{who} may not connect to the team's database yet: CONNECT on it is not granted to {team}; the database's owner runs `cairn team init --to …` again, which grants it"
        )?;
    }
    members_line(out, &r.members)
}

/// `cairn team revoke`'s lines: what changed, what the role can still reach, and what stays.
fn revoked(out: &mut impl Write, r: &TeamMembership) -> Result<()> {
    let who = line(&cairn_core::team::schema::sql_name(&r.role), 60);
    let team = line(&cairn_core::team::schema::sql_name(&r.team_role), 80);
    if r.changed {
        writeln!(
            out,
            "took {who} out of the team (role {team}) at {}",
            clean(&r.server)
        )?;
    } else {
        writeln!(out, "{who} was not a member of {team}: nothing changed")?;
    }
    if !r.member {
        if r.changed && r.may_connect {
            writeln!(
                out,
                "{who} can no longer read the team archive or push to it, but may still connect to its database (CONNECT granted to it or to PUBLIC)"
            )?;
        } else if r.changed {
            writeln!(
                out,
                "{who} can no longer connect to the team archive, read it or push to it"
            )?;
        }
    } else if r.through.is_empty() {
        writeln!(
            out,
            "{who} still reads the team archive: a superuser needs no grant"
        )?;
    } else {
        writeln!(
            out,
            "{who} is still in the team through {}: revoke those too, or it keeps reading and pushing",
            r.through
                .iter()
                .map(|g| line(g, 60))
                .collect::<Vec<_>>()
                .join(", ")
        )?;
    }
    let pushed = match (r.sessions_pushed, r.entries_pushed) {
        (Some(0), Some(0)) => {
            writeln!(out, "{who} pushed nothing to the team archive")?;
            return members_line(out, &r.members);
        }
        (Some(s), Some(e)) => format!(
            "the {} and {} {who} pushed stay",
            plural(s, "session"),
            plural(e, "trusted Recall entry")
        ),
        _ => format!("what {who} pushed stays"),
    };
    writeln!(
        out,
        "{pushed} in the team archive for the team to read, unless forgotten: only a superuser can delete them now{}",
        r.delete_sql
            .as_deref()
            // Whole, to be run as printed: built from Cairn's table names and a checked role.
            .map(|sql| format!(" ({})", clean(sql)))
            .unwrap_or_default()
    )?;
    writeln!(
        out,
        "on {who}'s machine, their own archive and what they pulled through git (`cairn pull`) stay; team reads were never copied there"
    )?;
    members_line(out, &r.members)
}

fn members_line(out: &mut impl Write, members: &[String]) -> Result<()> {
    if members.is_empty() {
        writeln!(out, "members: none")?;
    } else {
        writeln!(
            out,
            "members: {}",
            members
                .iter()
                .map(|m| line(m, 60))
                .collect::<Vec<_>>()
                .join(", ")
        )?;
    }
    Ok(())
}

/// The password `cairn team login` keeps: typed at the terminal without echo, or the first line
/// of standard input when it is not a terminal. Never echoed, never printed.
fn read_password(server: &Server) -> Result<String> {
    use std::io::{BufRead, IsTerminal};
    let line = if std::io::stdin().is_terminal() {
        rpassword::prompt_password(format!("password for {}: ", clean(server.display())))?
    } else {
        let mut line = String::new();
        std::io::stdin().lock().read_line(&mut line)?;
        line
    };
    Ok(line.trim_end_matches(['\n', '\r']).to_owned())
}

/// The password `cairn team grant --create` makes the role with: typed twice at the terminal
/// without echo (the two must match), or the first line of standard input when it is not a
/// terminal. Never echoed, never printed, never on the command line.
fn read_new_password(server: &Server, role: &str) -> Result<String> {
    use std::io::IsTerminal;
    if !std::io::stdin().is_terminal() {
        return read_password(server);
    }
    let first = rpassword::prompt_password(format!(
        "password for the new role {} at {}: ",
        line(role, 60),
        clean(server.display())
    ))?;
    let again = rpassword::prompt_password("the same again: ")?;
    if first != again {
        anyhow::bail!("the two passwords differ: nothing was made");
    }
    Ok(first)
}

fn init(out: &mut impl Write, r: &TeamInit) -> Result<()> {
    writeln!(
        out,
        "{} the team archive at {} (schema version {}), owned by {}",
        if r.created { "Created" } else { "Checked" },
        clean(&r.server),
        r.version,
        line(&r.owner, 60)
    )?;
    if r.owner != r.role {
        writeln!(
            out,
            "(you are {}: only {} can change the tables)",
            line(&r.role, 60),
            line(&r.owner, 60)
        )?;
    }
    let team = line(&cairn_core::team::schema::sql_name(&r.team_role), 80);
    writeln!(
        out,
        "The team is role {team}{}: only its members, {} and superusers may connect, read and push",
        if r.team_role_created {
            " (created now)"
        } else {
            ""
        },
        line(&r.owner, 60)
    )?;
    let names = |roles: &[String]| {
        roles
            .iter()
            .map(|m| line(m, 60))
            .collect::<Vec<_>>()
            .join(", ")
    };
    if r.members.is_empty() {
        writeln!(out, "members: none yet")?;
    } else {
        writeln!(out, "members: {}", names(&r.members))?;
    }
    if !r.added.is_empty() {
        writeln!(
            out,
            "added to the team (they were granted CONNECT before the team had a role): {}",
            names(&r.added)
        )?;
    }
    if !r.outside.is_empty() {
        writeln!(
            out,
            "may connect but are not in the team, so read nothing: {} (an administrator adds them: GRANT {team} TO {};)",
            names(&r.outside),
            r.outside
                .iter()
                .map(|m| line(&cairn_core::team::schema::sql_name(m), 60))
                .collect::<Vec<_>>()
                .join(", ")
        )?;
    }
    writeln!(
        out,
        "Add a teammate as an administrator: `cairn team grant NAME --create` (asks for their \
         password; `cairn team grant NAME` for a role that exists), or in SQL CREATE ROLE NAME \
         LOGIN PASSWORD '…' IN ROLE {team}; then `cairn team push --to postgres://NAME@…` \
         (docs/SECURITY.md, \"The team archive\")"
    )?;
    Ok(())
}

fn status_text(out: &mut impl Write, s: &cairn_core::team::read::TeamStatus) -> Result<()> {
    let c = &s.check;
    let from = match &c.password_from {
        cairn_core::team::PasswordSource::Url => "the connection string".to_owned(),
        cairn_core::team::PasswordSource::Variable(name) => line(name, 60),
        cairn_core::team::PasswordSource::Keyring => "the OS keyring".to_owned(),
        cairn_core::team::PasswordSource::None => "nowhere".to_owned(),
    };
    writeln!(
        out,
        "{} as {} ({}), {}; password from {from}",
        clean(&c.server),
        line(&c.publisher, 60),
        if c.tls { "TLS" } else { "no TLS" },
        line(&c.server_version, 60)
    )?;
    match &c.archive {
        None => writeln!(
            out,
            "no team archive yet: the database's owner sets it up with `cairn team init`"
        )?,
        Some(id) => writeln!(
            out,
            "team archive {}: schema version {}, {}; {} from {}",
            line(id, 60),
            s.version.map_or("?".into(), |v| v.to_string()),
            match (&s.team_role, &s.team_role_refused) {
                (Some(r), _) => format!("the team is role {}", line(r, 60)),
                (None, Some(_)) => "no team's role it can use".to_owned(),
                (None, None) => "no team's role".to_owned(),
            },
            plural(c.sessions, "session"),
            plural(c.publishers, "publisher")
        )?,
    }
    if let Some(refused) = &s.team_role_refused {
        // The record is the database owner's to rewrite: never shown as the team's role.
        writeln!(
            out,
            "warning: cairn.meta records {} as the team's role, and it is refused: {}",
            line(&cairn_core::team::schema::sql_name(&refused.role), 80),
            render::warning(&refused.message)
        )?;
        if let Some(hint) = &refused.hint {
            writeln!(out, "  what to do: {}", render::warning(hint))?;
        }
    }
    let fix = "the database's owner runs `cairn team init`, which keeps it to the team's role \
               (docs/SECURITY.md, \"The team archive\")";
    if s.public_connect {
        writeln!(
            out,
            "warning: every role on this server may connect to the database (PUBLIC holds CONNECT): {fix}"
        )?;
    }
    if s.public_tables {
        writeln!(
            out,
            "warning: every role that connects may read the team's records and write Recall entries into them (PUBLIC holds the tables): {fix}"
        )?;
    }
    Ok(())
}

fn push(out: &mut impl Write, r: &TeamPushReport) -> Result<()> {
    writeln!(
        out,
        "pushed {} ({}, {}, {}) to {} as {}; {} unchanged",
        plural(r.sessions_pushed, "session"),
        plural(r.turns_pushed, "turn"),
        plural(r.records_pushed, "record"),
        plural(r.links_pushed, "link"),
        clean(&r.server),
        clean(&r.publisher),
        r.sessions_unchanged
    )?;
    if r.sessions_withdrawn > 0 {
        writeln!(
            out,
            "withdrew {} forgotten here since the last push",
            plural(r.sessions_withdrawn, "session")
        )?;
    }
    if r.entries_pushed > 0 || r.entries_withdrawn > 0 {
        writeln!(
            out,
            "Recall: {} pushed, {} withdrawn",
            plural(r.entries_pushed, "trusted entry"),
            r.entries_withdrawn
        )?;
    }
    for key in &r.sessions_refused {
        writeln!(
            out,
            "not sent: session {} (a secret survived redaction; see `cairn doctor`)",
            clean(key)
        )?;
    }
    Ok(())
}

/// A teammate's session as human output names it: the start of its key, as much as `cairn team
/// show` takes (the whole key with `--keys`; the team archive keeps no agent session id).
fn handle(key: &str, keys: bool) -> String {
    const SHOWN: usize = "sha256-".len() + 8;
    match key.get(..SHOWN) {
        Some(start) if !keys && key.starts_with("sha256-") && key.len() > SHOWN => clean(start),
        _ => line(key, 80),
    }
}

fn search(out: &mut impl Write, hits: &[TeamSearchHit], keys: bool) -> Result<()> {
    if hits.is_empty() {
        writeln!(out, "no match in the team archive")?;
    }
    for h in hits {
        writeln!(
            out,
            "{}  {}  {}#{}  {}",
            render::short_time(h.timestamp.as_deref()),
            line(&h.publisher, 40),
            handle(&h.session_key, keys),
            h.ordinal.map_or("-".into(), |o| o.to_string()),
            line(h.title.as_deref().unwrap_or(""), 60)
        )?;
        writeln!(out, "    {}", line(&render::marked(&h.snippet), 200))?;
    }
    Ok(())
}

fn skim_text(out: &mut impl Write, s: &TeamSkim, skip: u32, keys: bool) -> Result<()> {
    writeln!(
        out,
        "{}: {} from {}",
        if keys {
            line(&s.target, 200)
        } else {
            line(&cairn_core::git::targets::label(&s.target), 200)
        },
        plural(s.matched, "session"),
        if s.publishers.is_empty() {
            "nobody".to_owned()
        } else {
            s.publishers
                .iter()
                .map(|p| line(p, 40))
                .collect::<Vec<_>>()
                .join(", ")
        }
    )?;
    match s.repo_scope {
        TeamRepoScope::Every | TeamRepoScope::One => {}
        TeamRepoScope::ServerKeepsNone => writeln!(
            out,
            "every repository's sessions: the team archive keeps no session's repository yet \
             (the next `cairn team push` by the schema's owner adds it)"
        )?,
        TeamRepoScope::Unnamed => writeln!(
            out,
            "every repository's sessions: this clone is shallow or has no commit, so its \
             repository has no name to keep to (`git fetch --unshallow` gives it one)"
        )?,
    }
    let shown = s.sessions.len() as u64;
    if skip > 0 {
        write!(
            out,
            "showing {} after the {} most recent of {}",
            plural(shown, "session"),
            skip,
            s.matched
        )?;
        if s.left_out > 0 {
            write!(
                out,
                ": {} earlier left out (--skip {} for the next page)",
                s.left_out,
                u64::from(skip) + shown
            )?;
        }
        writeln!(out)?;
    } else if s.left_out > 0 {
        writeln!(
            out,
            "showing the {} most recent of {}: {} earlier left out (--skip {} for the next page; --limit, at most {})",
            shown,
            s.matched,
            s.left_out,
            shown,
            cairn_core::team::read::MAX_LIMIT
        )?;
    }
    for k in &s.sessions {
        let x = &k.session;
        // A branch or PR names no repository: the project tells two teams' `main` apart.
        let project = x
            .project
            .as_deref()
            .filter(|p| !p.is_empty())
            .map(|p| format!("  ({})", line(p, 60)))
            .unwrap_or_default();
        writeln!(
            out,
            "\n{}  {}  {}  {}{project}",
            render::short_time(x.started_at.as_deref()),
            line(&x.publisher, 40),
            handle(&x.session_key, keys),
            line(x.title.as_deref().unwrap_or(""), 80)
        )?;
        for w in &k.why {
            writeln!(
                out,
                "  why: {} {}{}",
                line(&w.evidence, 40),
                line(&cairn_core::git::targets::label(&w.target_key), 120),
                w.commit
                    .as_deref()
                    .map(|c| format!(" {}", line(c, 40)))
                    .unwrap_or_default()
            )?;
        }
        for t in &k.turns {
            writeln!(
                out,
                "  turn {}: {}",
                t.turn_index.map_or("?".into(), |i| i.to_string()),
                line(t.preview.as_deref().unwrap_or(""), 120)
            )?;
        }
    }
    Ok(())
}

fn show_text(out: &mut impl Write, s: &TeamShow, keys: bool) -> Result<()> {
    let x = &s.session;
    writeln!(
        out,
        "{}  by {}  {}  {}",
        handle(&x.session_key, keys),
        line(&x.publisher, 40),
        line(&x.agent, 20),
        line(x.title.as_deref().unwrap_or(""), 120)
    )?;
    for r in &s.records {
        let head = format!(
            "#{} {}{}",
            r.ordinal.map_or("?".into(), |o| o.to_string()),
            line(&r.kind, 20),
            r.role
                .as_deref()
                .map(|x| format!(" ({})", line(x, 20)))
                .unwrap_or_default()
        );
        writeln!(out, "\n{head}")?;
        if let Some(tool) = &r.tool_name {
            writeln!(out, "tool: {}", line(tool, 80))?;
        }
        for text in [&r.text, &r.tool_input].into_iter().flatten() {
            writeln!(out, "{}", clean(text))?;
        }
        if r.cut {
            writeln!(out, "[cut]")?;
        }
    }
    if s.truncated {
        writeln!(
            out,
            "\n(more records than shown; use --json and the key to read on)"
        )?;
    }
    Ok(())
}

fn recall(out: &mut impl Write, hits: &[TeamRecallHit]) -> Result<()> {
    if hits.is_empty() {
        writeln!(out, "no trusted entry in the team archive matches")?;
    }
    for h in hits {
        writeln!(
            out,
            "[{}] {}  ({}, by {})",
            line(&h.entry_type, 20),
            line(&h.title, 120),
            line(&h.scope, 20),
            line(&h.publisher, 40)
        )?;
        writeln!(out, "    {}", line(&h.body, 300))?;
    }
    Ok(())
}

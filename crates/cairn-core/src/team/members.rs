//! Who is in the team, changed by an administrator: `cairn team grant <role>` makes a login role
//! a member of the team's role (`cairn.meta.team_role`, [`super::schema::team_role_for`]), and
//! `cairn team revoke <role>` takes it out. The same two statements the docs give an
//! administrator to run by hand, without writing them: the role named is checked here, then
//! passed to the server as one quoted identifier, never spliced as SQL a person typed.
//!
//! A name PostgreSQL would have changed when the role was made (`CREATE ROLE Ben` makes `ben`;
//! a name of 64 bytes or more is cut to 63) is refused with the name the server would hold, so
//! `Ben` never quietly names a role other than the one the administrator thinks of; so is one
//! holding a control or an invisible character, which no message could show as typed.
//!
//! Each change is idempotent: granting a member, or revoking a role that is not one, changes
//! nothing and says so. Revoking keeps the rows the teammate pushed (row-level security binds
//! even the tables' owner; only a superuser deletes another role's rows), and the result says
//! how many stay and the SQL that would delete them.
//!
//! `cairn team grant <role> --create` ([`create`]) makes the teammate's login role too, with a
//! password the administrator types: the server is sent only a SCRAM-SHA-256 verifier computed
//! here (what `\password` in psql sends), so the password itself is in no statement, no
//! server log and no `pg_stat_activity`; the verifier is printed nowhere either.
//!
//! After a grant, the result carries the connection string the teammate pushes with
//! ([`Server::url_as`]): this server's hosts, port and database with their user, never a
//! password, so the CLI and the desktop say the same and build nothing themselves.

use serde::{Deserialize, Serialize};

use super::conn::Conn;
use super::schema::{self, quote_ident, sql_name};
use super::server::Server;
use crate::error::{ErrorKind, Result};

/// The longest role name PostgreSQL keeps whole (`NAMEDATALEN - 1` bytes).
const MAX_NAME: usize = 63;

/// What `cairn team grant` or `cairn team revoke` found and did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct TeamMembership {
    /// The address, without credentials.
    pub server: String,
    /// The team's role.
    pub team_role: String,
    /// The role granted or revoked, as the server names it.
    pub role: String,
    /// Whether the role is in the team after this run: a member of the team's role directly or
    /// through another role (a superuser counts as one: it reads without a grant).
    pub member: bool,
    /// Whether this run changed anything (`false`: it already was, or was not, a member).
    pub changed: bool,
    /// Whether this run made the login role itself (`cairn team grant --create`).
    pub created: bool,
    /// Roles through which it is still in the team after a revoke (a group it belongs to).
    pub through: Vec<String>,
    /// Sessions and trusted Recall entries the role pushed, which stay in the team archive for
    /// the team to read whatever its membership (`None` when this role may not count them).
    pub sessions_pushed: Option<i64>,
    pub entries_pushed: Option<i64>,
    /// After a revoke, what a superuser runs to delete what the role pushed (`None` when it
    /// pushed nothing, or after a grant).
    pub delete_sql: Option<String>,
    /// The team's direct members after this run.
    pub members: Vec<String>,
    /// Whether the role may connect to the team's database after this run, as the server
    /// answers (`CONNECT` through the team's role, a grant of its own, or `PUBLIC`'s): a member
    /// whose team's role lost `CONNECT` cannot read or push until the owner's `cairn team
    /// init` grants it again.
    pub may_connect: bool,
    /// After a grant: the connection string the teammate pushes with (`cairn team push --to
    /// …`), this server's address with their user, no password ([`Server::url_as`]).
    pub push_url: Option<String>,
}

/// A refused administrator's command (`init`, grant, revoke) as it crosses to the desktop:
/// [`crate::ErrorReport`]'s kind, message and hint, and the SQL that clears it as its own field
/// (`None` when there is none), so Settings → Team offers the statement to copy without
/// reading the hint's wording.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct AdminError {
    pub kind: ErrorKind,
    pub message: String,
    pub hint: Option<String>,
    /// The statement whoever the hint names runs, whole.
    pub sql: Option<String>,
}

impl From<crate::error::Error> for AdminError {
    fn from(e: crate::error::Error) -> AdminError {
        let sql = match &e {
            crate::error::Error::Team { sql, .. } => sql.clone(),
            _ => None,
        };
        let report = crate::ErrorReport::from(&e);
        AdminError {
            kind: report.kind,
            message: report.message,
            hint: report.hint,
            sql,
        }
    }
}

impl From<crate::ErrorReport> for AdminError {
    /// An error from before the command reached the core (the archive would not open).
    fn from(r: crate::ErrorReport) -> AdminError {
        AdminError {
            kind: r.kind,
            message: r.message,
            hint: r.hint,
            sql: None,
        }
    }
}

/// What [`change`] does to the role named.
enum Action<'a> {
    Grant,
    Revoke,
    /// Make the login role with this SCRAM-SHA-256 verifier, then grant it.
    Create {
        verifier: &'a str,
    },
}

/// Make `role` a member of the team's role at `server`.
pub fn grant(server: &Server, role: &str) -> Result<TeamMembership> {
    change(server, role, Action::Grant)
}

/// Take `role` out of the team's role at `server`.
pub fn revoke(server: &Server, role: &str) -> Result<TeamMembership> {
    change(server, role, Action::Revoke)
}

/// The longest password [`create`] takes, in bytes (as `cairn team login` does).
pub const MAX_PASSWORD: usize = 4096;

/// Make `role` a login role with `password`, a member of the team's role, in one transaction:
/// both or neither. The server gets the SCRAM-SHA-256 verifier of the password (a random salt,
/// 4096 iterations, as PostgreSQL's own), never the password; a role that exists already is
/// refused (its password is its own business: `grant` without `--create` adds it).
pub fn create(server: &Server, role: &str, password: &str) -> Result<TeamMembership> {
    if password.is_empty() {
        return Err(server.fail(
            ErrorKind::Invalid,
            "the password is empty: a login role needs one".into(),
            Some("type it at the prompt, or pipe it alone on standard input's first line".into()),
        ));
    }
    if password.len() > MAX_PASSWORD || password.contains(['\0', '\n', '\r']) {
        // Not repeated: the message must not show it.
        return Err(server.fail(
            ErrorKind::Invalid,
            format!(
                "the password holds a line break or NUL, or is longer than {MAX_PASSWORD} bytes"
            ),
            Some("give it alone on one line".into()),
        ));
    }
    let verifier = postgres_protocol::password::scram_sha_256(password.as_bytes());
    change(
        server,
        role,
        Action::Create {
            verifier: &verifier,
        },
    )
}

/// Refuse a role name the server would not keep as written, or that a message cannot show:
/// empty, longer than PostgreSQL keeps, holding an upper-case ASCII letter (PostgreSQL folds
/// them in a name typed without quotes, so `Ben` is usually meant as `ben`), holding a
/// control or invisible character, or a backslash (see [`quote_literal`]).
pub fn check_name(server: &Server, name: &str) -> Result<()> {
    let shown = crate::text::one_line(name, 80);
    let refuse =
        |message: String, hint: String| Err(server.fail(ErrorKind::Invalid, message, Some(hint)));
    if name.is_empty() {
        return refuse(
            "no role named".into(),
            "name the teammate's login role: `cairn team grant ana`".into(),
        );
    }
    if name.chars().any(char::is_control) || !crate::text::hidden(name).is_empty() {
        return refuse(
            format!(
                "the role name {shown:?} holds a control or invisible character, which no message shows as typed"
            ),
            "give the name as `\\du` in psql lists it, without control characters; a role that truly holds one is granted by hand in SQL".into(),
        );
    }
    if name.contains('\\') {
        // The DELETE a revoke prints carries the name as a string literal, which a server
        // with `standard_conforming_strings = off` reads a backslash in as an escape: `x\'`
        // would end the literal there and run the rest.
        return refuse(
            format!(
                "the role name {shown:?} holds a backslash, which Cairn does not put in SQL it prints"
            ),
            "a role whose name holds a backslash is granted or revoked by hand in SQL".into(),
        );
    }
    if name.len() > MAX_NAME {
        return refuse(
            format!(
                "the role name {shown:?} is {} bytes long: PostgreSQL keeps {MAX_NAME} and cuts the rest",
                name.len()
            ),
            "give the name as the server keeps it (`\\du` in psql lists it)".into(),
        );
    }
    if name.bytes().any(|b| b.is_ascii_uppercase()) {
        let folded = name.to_ascii_lowercase();
        return refuse(
            format!(
                "the role name {shown:?} holds capitals: PostgreSQL folds a name typed without quotes to lower case (CREATE ROLE {shown} made {})",
                sql_name(&folded)
            ),
            format!(
                "give the name as the server keeps it: `{}`; a role whose name truly holds capitals (made quoted) is granted by hand in SQL",
                crate::text::one_line(&folded, 80)
            ),
        );
    }
    Ok(())
}

/// The shared work of [`grant`], [`revoke`] and [`create`]: the name checked, the team's role
/// read from the archive, the role found (or, to create, found absent), the membership changed
/// when it must be, what stays read back.
fn change(server: &Server, role: &str, action: Action<'_>) -> Result<TeamMembership> {
    let grant = !matches!(action, Action::Revoke);
    check_name(server, role)?;
    let mut client = server.connect(false)?;
    let team = team_role(server, &mut client)?;
    let shown = crate::text::one_line(&sql_name(role), 80);
    let team_shown = crate::text::one_line(&sql_name(&team), 80);
    if role == team {
        return Err(server.fail(
            ErrorKind::Invalid,
            format!("{shown} is the team's role itself"),
            Some("name a teammate's login role".into()),
        ));
    }
    let found = client
        .query(
            "SELECT rolcanlogin FROM pg_catalog.pg_roles WHERE rolname = $1",
            &[&role],
        )
        .map_err(|e| server.error(e, "cannot read the role"))?;
    let found = found
        .first()
        .map(|r| r.try_get::<_, bool>(0).unwrap_or(false));
    let statement = match (&action, found) {
        (Action::Create { .. }, Some(_)) => {
            return Err(server.fail(
                ErrorKind::Conflict,
                format!("the role {shown} exists already: nothing was made or changed"),
                Some(format!(
                    "add it as it is with `cairn team grant {}` (without --create); its password is changed by the role itself or an administrator, not here",
                    crate::text::shell_quoted(role)
                )),
            ));
        }
        (Action::Create { verifier }, None) => {
            // One simple query is one transaction: the role is made and granted, or neither.
            // The verifier is base64 and `$:` only, quoted as a literal all the same.
            Some(format!(
                "CREATE ROLE {} LOGIN PASSWORD {}; GRANT {} TO {}",
                quote_ident(role),
                quote_literal(verifier),
                quote_ident(&team),
                quote_ident(role)
            ))
        }
        (_, None) => {
            return Err(server.fail(
                ErrorKind::NotFound,
                format!("no role {shown} on this server"),
                Some(if grant {
                    format!(
                        "make it and add it in one step: `cairn team grant {} --create` (asks for its password), or an administrator runs CREATE ROLE {shown} LOGIN PASSWORD '…' IN ROLE {team_shown}; (docs/SECURITY.md, \"The team archive\")",
                        crate::text::shell_quoted(role)
                    )
                } else {
                    "check the name (`\\du` in psql lists the roles); a role that is gone is in no team".into()
                }),
            ));
        }
        (Action::Grant, Some(can_login)) => {
            let was = direct_member(server, &mut client, &team, role)?;
            if !can_login && !was {
                // A group granted the team brings in every member it has and will have,
                // unseen here.
                return Err(server.fail(
                    ErrorKind::Refused,
                    format!(
                        "{shown} cannot log in: granting the team to it would let every role that is (or becomes) a member of it read and push, not one teammate"
                    ),
                    Some(format!(
                        "grant each teammate's login role (`cairn team grant NAME`); to add a group on purpose, an administrator runs GRANT {team_shown} TO {shown};"
                    )),
                ));
            }
            (!was).then(|| format!("GRANT {} TO {}", quote_ident(&team), quote_ident(role)))
        }
        (Action::Revoke, Some(_)) => {
            let was = direct_member(server, &mut client, &team, role)?;
            was.then(|| format!("REVOKE {} FROM {}", quote_ident(&team), quote_ident(role)))
        }
    };
    let created = matches!(action, Action::Create { .. });
    if let Some(sql) = &statement {
        client.batch_execute(sql).map_err(|e| {
            let e = if e.code() == Some(&tokio_postgres::error::SqlState::INSUFFICIENT_PRIVILEGE) {
                let (team_whole, whole) = (schema::whole_name(&team), schema::whole_name(role));
                let (verb, who) = match &action {
                    Action::Grant => (
                        format!("GRANT {team_whole} TO {whole};"),
                        format!("a superuser, a role with CREATEROLE, or one granted {team_shown} WITH ADMIN OPTION"),
                    ),
                    Action::Revoke => (
                        format!("REVOKE {team_whole} FROM {whole};"),
                        format!("a superuser, a role with CREATEROLE, or one granted {team_shown} WITH ADMIN OPTION"),
                    ),
                    // The password stays with whoever makes the role: the SQL leaves it out.
                    Action::Create { .. } => (
                        format!("CREATE ROLE {whole} LOGIN PASSWORD '…' IN ROLE {team_whole};"),
                        "a superuser or a role with CREATEROLE".to_owned(),
                    ),
                };
                server.fail_with_sql(
                    ErrorKind::Refused,
                    format!(
                        "this role may not {} ({})",
                        if created {
                            "create roles"
                        } else {
                            "change who is in the team"
                        },
                        crate::text::one_line(&e.to_string(), 200)
                    ),
                    format!(
                        "run it as {who} (--to postgres://ADMIN@…), or have one run: {verb}"
                    ),
                    verb,
                )
            } else if created {
                server.error(e, "cannot make the teammate's role")
            } else {
                server.error(e, "cannot change the team's members")
            };
            // A server's message never quotes a statement; whatever it says, not the verifier.
            match &action {
                Action::Create { verifier } => hide(e, verifier),
                _ => e,
            }
        })?;
    }
    let through = if grant {
        Vec::new()
    } else {
        through(server, &mut client, &team, role)?
    };
    let member = client
        .query_one(
            "SELECT pg_catalog.pg_has_role($1::text::name, $2::text::name, 'MEMBER')",
            &[&role, &team],
        )
        .and_then(|r| Ok(r.try_get(0)?))
        .map_err(|e| server.error(e, "cannot read the team's members"))?;
    let may_connect = client
        .query_one(
            "SELECT pg_catalog.has_database_privilege($1::text::name, pg_catalog.current_database(), 'CONNECT')",
            &[&role],
        )
        .and_then(|r| Ok(r.try_get(0)?))
        .map_err(|e| server.error(e, "cannot read who may connect"))?;
    let sessions_pushed = count(&mut client, "cairn.sessions", role);
    let entries_pushed = count(&mut client, "cairn.recall_entries", role);
    let delete_sql = (!grant && (sessions_pushed.unwrap_or(1) > 0 || entries_pushed.unwrap_or(1) > 0))
        .then(|| {
            let who = quote_literal(role);
            format!(
                "DELETE FROM cairn.sessions WHERE publisher = {who}; DELETE FROM cairn.recall_entries WHERE publisher = {who};"
            )
        });
    let names = |v: Vec<String>| -> Vec<String> {
        v.iter().map(|s| crate::text::one_line(s, 120)).collect()
    };
    Ok(TeamMembership {
        server: server.display().to_owned(),
        team_role: crate::text::one_line(&team, 120),
        role: crate::text::one_line(role, 120),
        member,
        changed: statement.is_some(),
        created,
        through: names(through),
        sessions_pushed,
        entries_pushed,
        delete_sql,
        members: names(schema::members(server, &mut client, &team)?),
        may_connect,
        push_url: grant.then(|| server.url_as(role)),
    })
}

/// `e` with `secret` cut out of its message and hint.
fn hide(e: crate::error::Error, secret: &str) -> crate::error::Error {
    let cut = |t: String| t.replace(secret, "[REDACTED]");
    match e {
        crate::error::Error::Team {
            server,
            message,
            kind,
            hint,
            sql,
        } => crate::error::Error::Team {
            server,
            message: cut(message),
            kind,
            hint: hint.map(cut),
            sql: sql.map(cut),
        },
        other => other,
    }
}

/// The team's role as the archive records it, once [`schema::check_team_role`] shows it is one
/// (the record is the database owner's to rewrite, and whatever the role holds every member
/// gets). An archive must be there at version 2 or later: before, the team had no role (every
/// role on the server read it), and only the owner's `cairn team init` makes one.
fn team_role(server: &Server, client: &mut Conn) -> Result<String> {
    let owner = |client: &mut Conn| -> Result<String> {
        Ok(crate::text::one_line(
            &schema::may_init(server, client)?.1,
            80,
        ))
    };
    let meta = schema::meta(server, client)?;
    match meta {
        Some(m) if m.version >= 2 => {
            schema::check_not_newer(server, m.version)?;
            let recorded: Option<String> = client
                .query_one("SELECT team_role::text FROM cairn.meta", &[])
                .and_then(|r| Ok(r.try_get(0)?))
                .map_err(|e| server.error(e, "cannot read cairn.meta"))?;
            let team = match recorded {
                Some(team) => team,
                None => {
                    let db: String = client
                        .query_one("SELECT pg_catalog.current_database()::text", &[])
                        .and_then(|r| Ok(r.try_get(0)?))
                        .map_err(|e| server.error(e, "cannot read the database's name"))?;
                    schema::team_role_for(&db)
                }
            };
            // The database's owner may have rewritten the record: believed only when the
            // catalog shows a role a teammate may safely be given.
            schema::check_team_role(server, client, &team)?;
            Ok(team)
        }
        Some(m) => Err(server.fail(
            ErrorKind::Refused,
            format!(
                "its schema is version {}: the team has no role yet, and every role on the server may read it",
                m.version
            ),
            Some(format!(
                "the database's owner ({}) runs `cairn team init` first, which makes the team's role",
                owner(client)?
            )),
        )),
        None => Err(server.fail(
            ErrorKind::NotFound,
            "holds no team archive yet".into(),
            Some(format!(
                "the database's owner ({}) sets it up once with `cairn team init`, which names the team's role",
                owner(client)?
            )),
        )),
    }
}

/// Whether `role` is granted `team` directly (what a grant adds and a revoke takes away).
fn direct_member(server: &Server, client: &mut Conn, team: &str, role: &str) -> Result<bool> {
    client
        .query_one(
            "SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_auth_members a
                 JOIN pg_catalog.pg_roles t ON t.oid = a.roleid
                 JOIN pg_catalog.pg_roles m ON m.oid = a.member
                 WHERE t.rolname = $1 AND m.rolname = $2)",
            &[&team, &role],
        )
        .and_then(|r| Ok(r.try_get(0)?))
        .map_err(|e| server.error(e, "cannot read the team's members"))
}

/// The team's direct members that `role` belongs to: after a revoke, it is still in the team
/// through them.
fn through(server: &Server, client: &mut Conn, team: &str, role: &str) -> Result<Vec<String>> {
    let rows = client
        .query(
            "SELECT g.rolname::text FROM pg_catalog.pg_auth_members a
             JOIN pg_catalog.pg_roles t ON t.oid = a.roleid
             JOIN pg_catalog.pg_roles g ON g.oid = a.member
             JOIN pg_catalog.pg_roles r ON r.rolname = $2
             WHERE t.rolname = $1 AND g.oid <> r.oid
               AND pg_catalog.pg_has_role(r.oid, g.oid, 'MEMBER')
             ORDER BY 1",
            &[&team, &role],
        )
        .map_err(|e| server.error(e, "cannot read the team's members"))?;
    Ok(rows.iter().filter_map(|r| r.try_get(0).ok()).collect())
}

/// How many rows of `table` `role` published, `None` when this role may not read the table (an
/// administrator outside the team who is not the owner). `table` is one of Cairn's own names.
fn count(client: &mut Conn, table: &str, role: &str) -> Option<i64> {
    client
        .query_one(
            &format!("SELECT count(*) FROM {table} WHERE publisher = $1"),
            &[&role],
        )
        .and_then(|r| Ok(r.try_get(0)?))
        .ok()
}

/// `text` as an SQL string literal, its quotes doubled. Only names [`check_name`] accepted
/// reach it, which hold no backslash: the literal reads the same whether the server running
/// it has `standard_conforming_strings` on or off.
fn quote_literal(text: &str) -> String {
    format!("'{}'", text.replace('\'', "''"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn server() -> Server {
        Server::resolve(
            Some("postgres://admin@127.0.0.1:5432/team"),
            None,
            None,
            &|_| Ok(None),
        )
        .unwrap()
    }

    /// A name the server would not keep as typed is refused, saying what it would keep; one
    /// it keeps, whatever its quotes or semicolons, passes (it is sent as one identifier).
    #[test]
    fn a_role_name_the_server_would_change_or_a_message_hide_is_refused() {
        let s = server();
        for (name, says) in [
            ("Ben", "`ben`"),
            ("ana\u{1b}[31m", "control or invisible"),
            ("ana\nbob", "control or invisible"),
            ("a\u{202e}na", "control or invisible"),
            ("", "name the teammate"),
            ("x\\';drop role ben;--", "backslash"),
        ] {
            let e = check_name(&s, name).unwrap_err();
            let all = format!("{e} {}", e.hint().unwrap_or_default());
            assert!(all.contains(says), "{name:?}: {all}");
            assert!(
                !all.contains('\u{1b}') && !all.contains('\u{202e}'),
                "{all}"
            );
        }
        let long = "a".repeat(64);
        assert!(
            check_name(&s, &long)
                .unwrap_err()
                .to_string()
                .contains("64 bytes")
        );
        assert!(check_name(&s, &"a".repeat(63)).is_ok());
        for fine in ["ben", "ana\";drop role x;--", "émile", "o'brien", "a b"] {
            assert!(check_name(&s, fine).is_ok(), "{fine}");
        }
        assert_eq!(quote_literal("o'brien"), "'o''brien'");
    }
}

//! The team archive's PostgreSQL schema, which Cairn migrates itself: schema `cairn`, its
//! version in `cairn.meta`, one step per version, applied in one transaction under an advisory
//! lock (two runs at once apply it once). A database whose schema is newer than this binary
//! knows is refused.
//!
//! Ownership is the server's to enforce, not the client's: every table has a `publisher`
//! column defaulting to `current_user`, row-level security is forced, and the policies let
//! anyone connected read every row but insert, update or delete only rows whose publisher is
//! themselves. A teammate's push cannot touch another's rows, whatever client it runs. The
//! tables' owner and a superuser can, though (an owner can turn the security off, or make a
//! table run code as whoever reads or writes it), so the schema is made by the database's
//! owner (`cairn team init`, [`init`]), never by a teammate's push ([`for_push`]); every
//! connection refuses a schema another role owns a part of before it reads it
//! ([`check_owners`]), then tables changed in ways it can see ([`check_intact`]);
//! docs/SECURITY.md.
//!
//! Who reads and writes at all is the team's role ([`team_role_for`], named after the database,
//! one nobody logs in as): from version 2 the schema and its tables are granted to it alone, not
//! to `PUBLIC`, and `cairn team init` takes `CONNECT` on the database from `PUBLIC` (which
//! PostgreSQL gives every new database) and grants it to the team's role. A teammate is a login
//! role that is a member of it; any other role on the server can neither connect nor read.
//!
//! Full text: records are indexed with the `simple` configuration (lower-casing, no stemming,
//! no stop words), the closest PostgreSQL has to the local archive's FTS5 `unicode61`; Recall
//! entries with `english` (Snowball's English stemmer, as the local Recall analyzer stems).

use super::conn::Conn;

use super::server::Server;
use crate::error::{ErrorKind, Result};

/// The schema version this binary writes and reads.
pub const VERSION: i32 = 2;

/// An advisory lock key for migrations: "cairn-schema" as a number.
const MIGRATE_LOCK: i64 = 0x6361_6972_6e5f_7363;

const STEP_1: &str = r#"
CREATE SCHEMA IF NOT EXISTS cairn;
CREATE TABLE cairn.meta (
    singleton   boolean PRIMARY KEY DEFAULT true CHECK (singleton),
    version     integer NOT NULL,
    archive_id  uuid NOT NULL DEFAULT gen_random_uuid(),
    created_at  timestamptz NOT NULL DEFAULT now()
);
INSERT INTO cairn.meta (version) VALUES (1);

CREATE TABLE cairn.sessions (
    publisher     text NOT NULL DEFAULT current_user,
    session_key   text NOT NULL,
    agent         text NOT NULL,
    parent_key    text,
    relation      text,
    title         text,
    project       text,
    cwd           text,
    git_branch    text,
    model         text,
    started_at    text,
    updated_at    text,
    record_count  bigint NOT NULL DEFAULT 0,
    turn_count    bigint NOT NULL DEFAULT 0,
    pushed_at     timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (publisher, session_key)
);
CREATE INDEX sessions_started ON cairn.sessions (started_at);
CREATE INDEX sessions_key ON cairn.sessions (session_key);

CREATE TABLE cairn.turns (
    publisher       text NOT NULL DEFAULT current_user,
    session_key     text NOT NULL,
    turn_index      bigint NOT NULL,
    turn_key        text NOT NULL,
    first_ordinal   bigint NOT NULL,
    last_ordinal    bigint NOT NULL,
    record_count    bigint NOT NULL DEFAULT 0,
    tool_call_count bigint NOT NULL DEFAULT 0,
    started_at      text,
    ended_at        text,
    preview         text,
    PRIMARY KEY (publisher, session_key, turn_index),
    FOREIGN KEY (publisher, session_key) REFERENCES cairn.sessions ON DELETE CASCADE
);

CREATE TABLE cairn.records (
    publisher    text NOT NULL DEFAULT current_user,
    session_key  text NOT NULL,
    ordinal      bigint NOT NULL,
    turn_index   bigint,
    ts           text,
    kind         text NOT NULL,
    role         text,
    body         text,
    tool_name    text,
    tool_kind    text,
    tool_input   text,
    exit_code    bigint,
    outcome      text,
    file_paths   text,
    retracted    boolean NOT NULL DEFAULT false,
    cut          boolean NOT NULL DEFAULT false,
    search       tsvector GENERATED ALWAYS AS (
                     to_tsvector('simple'::regconfig, left(coalesce(body, '') || ' ' || coalesce(tool_input, ''), 500000))
                 ) STORED,
    PRIMARY KEY (publisher, session_key, ordinal),
    FOREIGN KEY (publisher, session_key) REFERENCES cairn.sessions ON DELETE CASCADE
);
CREATE INDEX records_search ON cairn.records USING gin (search);

CREATE TABLE cairn.links (
    publisher    text NOT NULL DEFAULT current_user,
    session_key  text NOT NULL,
    target_kind  text NOT NULL,
    target_key   text NOT NULL,
    pr_number    bigint,
    evidence     text NOT NULL,
    strong       boolean NOT NULL,
    confidence   double precision NOT NULL,
    ordinal      bigint,
    commit_id    text,
    FOREIGN KEY (publisher, session_key) REFERENCES cairn.sessions ON DELETE CASCADE
);
CREATE INDEX links_session ON cairn.links (publisher, session_key);
CREATE INDEX links_target ON cairn.links (target_key);
CREATE INDEX links_pr ON cairn.links (pr_number) WHERE pr_number IS NOT NULL;

CREATE TABLE cairn.recall_entries (
    publisher    text NOT NULL DEFAULT current_user,
    entry_id     text NOT NULL,
    entry_type   text NOT NULL,
    scope        text NOT NULL,
    title        text NOT NULL,
    body         text NOT NULL,
    project      text NOT NULL DEFAULT '',
    git_branch   text NOT NULL DEFAULT '',
    agent        text NOT NULL DEFAULT '',
    session_key  text,
    updated_at   text NOT NULL,
    search       tsvector GENERATED ALWAYS AS (
                     setweight(to_tsvector('english'::regconfig, left(title, 10000)), 'A') ||
                     setweight(to_tsvector('english'::regconfig, left(body, 200000)), 'B')
                 ) STORED,
    PRIMARY KEY (publisher, entry_id)
);
CREATE INDEX recall_search ON cairn.recall_entries USING gin (search);

DO $$
DECLARE t text;
BEGIN
    FOREACH t IN ARRAY ARRAY['sessions', 'turns', 'records', 'links', 'recall_entries'] LOOP
        EXECUTE format('ALTER TABLE cairn.%I ENABLE ROW LEVEL SECURITY', t);
        EXECUTE format('ALTER TABLE cairn.%I FORCE ROW LEVEL SECURITY', t);
        EXECUTE format('CREATE POLICY read_all ON cairn.%I FOR SELECT USING (true)', t);
        EXECUTE format('CREATE POLICY insert_own ON cairn.%I FOR INSERT WITH CHECK (publisher = current_user)', t);
        EXECUTE format('CREATE POLICY update_own ON cairn.%I FOR UPDATE USING (publisher = current_user) WITH CHECK (publisher = current_user)', t);
        EXECUTE format('CREATE POLICY delete_own ON cairn.%I FOR DELETE USING (publisher = current_user)', t);
    END LOOP;
END $$;

GRANT USAGE ON SCHEMA cairn TO PUBLIC;
GRANT SELECT ON cairn.meta TO PUBLIC;
GRANT SELECT, INSERT, UPDATE, DELETE ON cairn.sessions, cairn.turns, cairn.records, cairn.links,
    cairn.recall_entries TO PUBLIC;
"#;

/// Version 1 to 2: the team archive is the team's alone. Version 1 granted the schema and the
/// tables to `PUBLIC`, and PostgreSQL lets `PUBLIC` connect to a new database, so any login role
/// on the server read every record and wrote "trusted" Recall under its own name. Now they are
/// granted to the team's role ([`table_grants`]), recorded in `cairn.meta.team_role` (a renamed
/// database keeps its team; the name is set by a bound parameter after the step).
fn step_2(team: &str) -> String {
    format!(
        "ALTER TABLE cairn.meta ADD COLUMN team_role text;\n{}",
        table_grants(team)
    )
}

/// The schema and its tables taken from `PUBLIC` and granted to the team's role `team` (quoted
/// by [`quote_ident`]): what version 2 is, applied again by every `cairn team init` (the role
/// may have been dropped and made again, which loses its grants).
fn table_grants(team: &str) -> String {
    let team = quote_ident(team);
    format!(
        "REVOKE ALL ON SCHEMA cairn FROM PUBLIC;
         REVOKE ALL ON ALL TABLES IN SCHEMA cairn FROM PUBLIC;
         GRANT USAGE ON SCHEMA cairn TO {team};
         GRANT SELECT ON cairn.meta TO {team};
         GRANT SELECT, INSERT, UPDATE, DELETE ON cairn.sessions, cairn.turns, cairn.records,
             cairn.links, cairn.recall_entries TO {team};"
    )
}

/// The step taking the schema from version `from` to `from + 1`, for the team's role `team`;
/// `None` past the last.
fn step(from: i32, team: &str) -> Option<String> {
    match from {
        0 => Some(STEP_1.to_owned()),
        1 => Some(step_2(team)),
        _ => None,
    }
}

/// The longest name PostgreSQL keeps (`NAMEDATALEN - 1` bytes); a longer one is cut.
const MAX_NAME: usize = 63;

/// The team's role of database `database`: `<database>_members`. Roles belong to the whole
/// server and databases do not, so the name carries the database's: two team archives on one
/// server are two teams. A name longer than PostgreSQL keeps is cut and ends with a hash of the
/// whole database name instead, so two long names sharing a start stay two roles.
pub fn team_role_for(database: &str) -> String {
    let whole = format!("{database}_members");
    if whole.len() <= MAX_NAME {
        return whole;
    }
    use sha2::Digest;
    let tag = hex::encode(&sha2::Sha256::digest(database.as_bytes())[..4]);
    let tail = format!("_{tag}_members");
    let mut cut = MAX_NAME - tail.len();
    while !database.is_char_boundary(cut) {
        cut -= 1;
    }
    format!("{}{tail}", &database[..cut])
}

/// Refuse to treat `team` as the team's role unless the catalog shows it is one: a role nobody
/// logs in as, with none of the attributes that reach past one database (SUPERUSER, CREATEROLE,
/// CREATEDB, REPLICATION, BYPASSRLS), not one of PostgreSQL's predefined `pg_*` roles, a member
/// of no other role, and owning or granted nothing in another database. Whatever is granted the
/// team's role is handed to every teammate (`cairn team grant`), and `cairn.meta.team_role` is
/// the database owner's to rewrite, who need not be trusted with more than their database: an
/// owner who pointed it at a superuser or at `pg_read_server_files` would otherwise have the
/// administrator's next grant make a teammate one. The name is not required to be
/// [`team_role_for`] the database's: a renamed database keeps the role it recorded, which these
/// checks still bind. Nothing is changed; the refusal names the role and what is wrong.
pub(crate) fn check_team_role(server: &Server, client: &mut Conn, team: &str) -> Result<()> {
    let shown = crate::text::one_line(&sql_name(team), 80);
    let found = client
        .query(
            "SELECT r.rolcanlogin, r.rolsuper, r.rolcreaterole, r.rolcreatedb, r.rolreplication,
                    r.rolbypassrls,
                    ARRAY(SELECT g.rolname::text FROM pg_catalog.pg_auth_members a
                          JOIN pg_catalog.pg_roles g ON g.oid = a.roleid
                          WHERE a.member = r.oid ORDER BY 1),
                    EXISTS (SELECT 1 FROM pg_catalog.pg_shdepend d, pg_catalog.pg_database here
                            WHERE here.datname = pg_catalog.current_database()
                              AND d.refclassid = 'pg_catalog.pg_authid'::pg_catalog.regclass
                              AND d.refobjid = r.oid
                              AND CASE WHEN d.dbid = 0
                                       THEN NOT (d.classid = 'pg_catalog.pg_database'::pg_catalog.regclass
                                                 AND d.objid = here.oid)
                                       ELSE d.dbid <> here.oid END)
             FROM pg_catalog.pg_roles r WHERE r.rolname = $1",
            &[&team],
        )
        .map_err(|e| server.error(e, "cannot read the team's role"))?;
    let Some(row) = found.first() else {
        let sql = format!("CREATE ROLE {} NOLOGIN;", whole_name(team));
        return Err(server.fail_with_sql(
            ErrorKind::NotFound,
            format!("the team's role {shown} does not exist on this server"),
            format!(
                "an administrator (a role that may create roles) runs: {sql} then the database's owner runs `cairn team init` again"
            ),
            sql,
        ));
    };
    // A value that cannot be read counts as the worst case: refused.
    let flag = |i: usize| row.try_get::<_, bool>(i).unwrap_or(true);
    let mut wrong: Vec<String> = [
        (0, "can log in"),
        (1, "is a superuser"),
        (2, "may create roles (CREATEROLE)"),
        (3, "may create databases (CREATEDB)"),
        (4, "may replicate the whole server (REPLICATION)"),
        (5, "bypasses row-level security (BYPASSRLS)"),
    ]
    .into_iter()
    .filter(|&(i, _)| flag(i))
    .map(|(_, what)| what.to_owned())
    .collect();
    if team.starts_with("pg_") {
        wrong.push("is one of PostgreSQL's predefined roles".into());
    }
    let groups: Vec<String> = row.try_get(6).unwrap_or_else(|_| vec!["?".into()]);
    if !groups.is_empty() {
        wrong.push(format!(
            "is a member of {}",
            groups
                .iter()
                .map(|g| crate::text::one_line(&sql_name(g), 80))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    if flag(7) {
        wrong.push("owns or is granted something in another database".into());
    }
    if wrong.is_empty() {
        return Ok(());
    }
    Err(server.fail_with_sql(
        ErrorKind::Refused,
        format!(
            "the team's role {shown} {}: every teammate granted it would hold that too, so nothing was changed",
            wrong.join(", ")
        ),
        "the team's role is one nobody logs in as, granted nothing but this archive; if cairn.meta.team_role was changed, the database's owner runs UPDATE cairn.meta SET team_role = NULL; (the role is then named after the database) and `cairn team init` again, and finds out who changed it (docs/SECURITY.md, \"The team archive\")".into(),
        "UPDATE cairn.meta SET team_role = NULL;".into(),
    ))
}

/// `name` as SQL a person copies ([`sql_name`] on one line, control characters shown inert,
/// never cut: a role name is at most 63 bytes).
pub(crate) fn whole_name(name: &str) -> String {
    crate::text::printable(&sql_name(name))
}

/// `name` as an SQL identifier, always quoted (a quote in it doubled), so any role or database
/// name is one identifier.
pub(crate) fn quote_ident(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

/// `name` as a person types it in SQL: bare when PostgreSQL would read it unchanged (lower-case
/// letters, digits and underscores, not starting with a digit), else quoted.
pub fn sql_name(name: &str) -> String {
    let bare = name
        .bytes()
        .enumerate()
        .all(|(i, b)| b == b'_' || b.is_ascii_lowercase() || (i > 0 && b.is_ascii_digit()));
    // Reserved words a role could be named (a quoted one is an identifier; a bare one is not).
    const RESERVED: [&str; 12] = [
        "all",
        "current_role",
        "current_user",
        "default",
        "group",
        "none",
        "order",
        "public",
        "select",
        "session_user",
        "table",
        "user",
    ];
    if bare && !name.is_empty() && !RESERVED.contains(&name) {
        name.to_owned()
    } else {
        quote_ident(name)
    }
}

/// What the server holds: its schema version and the team archive's id.
#[derive(Debug, Clone)]
pub struct Meta {
    pub version: i32,
    pub archive_id: String,
}

/// Read the server's schema version and archive id, `None` when no Cairn schema is there.
pub fn meta(server: &Server, client: &mut Conn) -> Result<Option<Meta>> {
    let exists: bool = client
        .query_one("SELECT to_regclass('cairn.meta') IS NOT NULL", &[])
        .and_then(|r| Ok(r.try_get(0)?))
        .map_err(|e| server.error(e, "cannot read the schema"))?;
    if !exists {
        return Ok(None);
    }
    // Before anything of the schema is read: its owner's objects can run code as the reader.
    check_owners(server, client)?;
    let row = client
        .query_one("SELECT version, archive_id::text FROM cairn.meta", &[])
        .map_err(|e| server.error(e, "cannot read cairn.meta"))?;
    let version: i32 = row.try_get(0).map_err(|e| server.error(e, "cairn.meta"))?;
    let archive_id: String = row.try_get(1).map_err(|e| server.error(e, "cairn.meta"))?;
    Ok(Some(Meta {
        version,
        archive_id,
    }))
}

/// The tables a teammate's rows live in, each under row-level security.
const OWNED_TABLES: [&str; 5] = ["sessions", "turns", "records", "links", "recall_entries"];

/// What `cairn team init` found and did.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct TeamInit {
    /// The address, without credentials.
    pub server: String,
    /// Whether this run created the schema (else it was there).
    pub created: bool,
    pub version: i32,
    pub archive_id: String,
    /// The role owning schema `cairn` and its tables: the one that can read past row-level
    /// security, so the database's owner, never a teammate who pushes.
    pub owner: String,
    /// The role this connection is.
    pub role: String,
    /// The team's role: the schema, its tables and `CONNECT` on the database are granted to it
    /// alone; a teammate is a member ([`team_role_for`]).
    pub team_role: String,
    /// Whether this run created the team's role.
    pub team_role_created: bool,
    /// Its members (the roles granted it directly).
    pub members: Vec<String>,
    /// Roles this run made members: those an archive of version 1 let connect by a grant of
    /// their own (the way teammates were added before the team's role).
    pub added: Vec<String>,
    /// Roles granted `CONNECT` on the database of their own that are not members: they may
    /// connect but read and write nothing (an administrator adds them, or not).
    pub outside: Vec<String>,
}

/// Create the team archive's schema, or bring it and its additions up to date, as the role
/// connected, which must be the database's owner or a superuser (the roles [`check_owners`]
/// trusts): a table's owner can make it run code as whoever reads or writes it. It also makes the
/// archive the team's alone: the schema and tables are granted to the team's role, and
/// `CONNECT` on the database is taken from `PUBLIC` and given to that role ([`apply`]).
/// Teammates need only be members of it.
pub fn init(server: &Server) -> Result<TeamInit> {
    let mut client = server.connect(false)?;
    let may = may_init(server, &mut client)?;
    if !may.0 {
        return Err(server.fail(
            ErrorKind::Refused,
            format!(
                "only the database's owner ({}) or a superuser sets the team archive up: the role that makes it owns its tables, and a table's owner can write past every teammate's ownership",
                crate::text::one_line(&may.1, 80)
            ),
            Some(format!(
                "run `cairn team init` as {}; teammates need only be members of the team's role",
                crate::text::one_line(&may.1, 80)
            )),
        ));
    }
    let done = migrate(server, &mut client)?;
    repo_column(server, &mut client, true)?;
    check_intact(server, &mut client)?;
    let row = client
        .query_one(
            "SELECT pg_catalog.pg_get_userbyid(n.nspowner)::text, current_user::text
             FROM pg_catalog.pg_namespace n WHERE n.nspname = 'cairn'",
            &[],
        )
        .map_err(|e| server.error(e, "cannot read the schema's owner"))?;
    let name = |i: usize| -> Result<String> {
        row.try_get::<_, String>(i)
            .map(|s| crate::text::one_line(&s, 120))
            .map_err(|e| server.error(e, "cannot read the schema's owner"))
    };
    let names = |v: Vec<String>| -> Vec<String> {
        v.iter().map(|s| crate::text::one_line(s, 120)).collect()
    };
    Ok(TeamInit {
        server: server.display().to_owned(),
        created: done.created,
        version: done.meta.version,
        archive_id: crate::text::printable(&done.meta.archive_id),
        owner: name(0)?,
        role: name(1)?,
        team_role: crate::text::one_line(&done.team, 120),
        team_role_created: done.team_created,
        members: names(members(server, &mut client, &done.team)?),
        added: names(done.added),
        outside: names(outside(server, &mut client, &done.team)?),
    })
}

/// The roles granted the team's role `team` directly, by name.
pub(crate) fn members(server: &Server, client: &mut Conn, team: &str) -> Result<Vec<String>> {
    let rows = client
        .query(
            "SELECT m.rolname::text FROM pg_catalog.pg_auth_members a
             JOIN pg_catalog.pg_roles m ON m.oid = a.member
             JOIN pg_catalog.pg_roles t ON t.oid = a.roleid
             WHERE t.rolname = $1 ORDER BY 1",
            &[&team],
        )
        .map_err(|e| server.error(e, "cannot read the team's members"))?;
    Ok(rows.iter().filter_map(|r| r.try_get(0).ok()).collect())
}

/// The roles granted `CONNECT` on this database of their own (not through the team's role, not
/// `PUBLIC`) that are not members of `team`, leaving out the database's owner and superusers,
/// who need no grant.
fn outside(server: &Server, client: &mut Conn, team: &str) -> Result<Vec<String>> {
    let rows = client
        .query(
            "SELECT DISTINCT r.rolname::text
             FROM pg_catalog.pg_database d, pg_catalog.aclexplode(d.datacl) a,
                  pg_catalog.pg_roles r
             WHERE d.datname = pg_catalog.current_database() AND a.privilege_type = 'CONNECT'
               AND r.oid = a.grantee AND r.oid <> d.datdba AND NOT r.rolsuper
               AND r.rolname <> $1
               AND NOT EXISTS (SELECT 1 FROM pg_catalog.pg_roles t
                               WHERE t.rolname = $1
                                 AND pg_catalog.pg_has_role(r.oid, t.oid, 'MEMBER'))
             ORDER BY 1",
            &[&team],
        )
        .map_err(|e| server.error(e, "cannot read who may connect"))?;
    Ok(rows.iter().filter_map(|r| r.try_get(0).ok()).collect())
}

/// Whether the role connected may set the team archive up (the database's owner, or a
/// superuser), and the database owner's name.
pub(crate) fn may_init(server: &Server, client: &mut Conn) -> Result<(bool, String)> {
    client
        .query_one(
            "SELECT d.datdba = r.oid OR r.rolsuper, pg_catalog.pg_get_userbyid(d.datdba)::text
             FROM pg_catalog.pg_database d, pg_catalog.pg_roles r
             WHERE d.datname = pg_catalog.current_database() AND r.rolname = current_user",
            &[],
        )
        .and_then(|r| Ok((r.try_get(0)?, r.try_get(1)?)))
        .map_err(|e| server.error(e, "cannot read the database's owner"))
}

/// The schema a push writes to: there, at this binary's version (an older one is refused,
/// naming the owner whose `cairn team init` brings it up), and intact. A push never creates or
/// migrates it: its creator would own the tables, and a migration grants them.
pub fn for_push(server: &Server, client: &mut Conn) -> Result<Meta> {
    let meta = match meta(server, client)? {
        None => {
            // Only the database's owner may set it up: a teammate is told to ask them, by name.
            let hint = match may_init(server, client)? {
                (true, _) => format!(
                    "set it up once with `cairn team init --to {}` (this role owns the \
                     database), then add teammates to the team's role it names",
                    server.display()
                ),
                (false, owner) => format!(
                    "ask the database's owner ({}) to set it up once with `cairn team init`: \
                     only they may (the tables' owner can write past everyone's ownership); \
                     then push again",
                    crate::text::one_line(&owner, 80)
                ),
            };
            return Err(server.fail(
                ErrorKind::NotFound,
                "holds no team archive yet".into(),
                Some(hint),
            ));
        }
        Some(m) if m.version == VERSION => m,
        Some(m) => {
            check_not_newer(server, m.version)?;
            // Only `cairn team init` migrates: the step grants the tables to the team's role,
            // which only the database's owner (or a superuser) may do, and a role may have to
            // be made first. Pushing into a version-1 archive would write into tables every
            // role on the server reads.
            let owner = may_init(server, client)?.1;
            return Err(server.fail(
                ErrorKind::Refused,
                format!(
                    "its schema is version {}, older than this Cairn's ({VERSION}): in it, every role on the server may read and write the team's tables",
                    m.version
                ),
                Some(format!(
                    "the database's owner ({}) brings it up with `cairn team init`, which grants the tables to the team's role alone; then push again",
                    crate::text::one_line(&owner, 80)
                )),
            ));
        }
    };
    check_intact(server, client)?;
    Ok(meta)
}

/// The roles trusted to own the team archive: the database's owner and superusers. A role that
/// owns a table can run code as whoever reads or writes it (a policy, a default, a trigger, a
/// view in its place), so every connection refuses a schema `cairn` any other role owns a part
/// of: the schema, a table, a view, a sequence or a function in it.
fn check_owners(server: &Server, client: &mut Conn) -> Result<()> {
    let rows = client
        .query(
            "WITH db AS (SELECT d.datdba FROM pg_catalog.pg_database d
                         WHERE d.datname = pg_catalog.current_database()),
                  ns AS (SELECT n.oid, n.nspowner FROM pg_catalog.pg_namespace n
                         WHERE n.nspname = 'cairn'),
                  owners AS (
                      SELECT nspowner AS owner FROM ns
                      UNION SELECT c.relowner FROM pg_catalog.pg_class c, ns
                            WHERE c.relnamespace = ns.oid
                      UNION SELECT p.proowner FROM pg_catalog.pg_proc p, ns
                            WHERE p.pronamespace = ns.oid
                      UNION SELECT t.typowner FROM pg_catalog.pg_type t, ns
                            WHERE t.typnamespace = ns.oid)
             SELECT pg_catalog.pg_get_userbyid(o.owner)::text,
                    pg_catalog.pg_get_userbyid(db.datdba)::text
             FROM owners o, db
             WHERE o.owner <> db.datdba
               AND NOT EXISTS (SELECT 1 FROM pg_catalog.pg_roles r
                               WHERE r.oid = o.owner AND r.rolsuper)",
            &[],
        )
        .map_err(|e| server.error(e, "cannot read who owns the schema"))?;
    let Some(first) = rows.first() else {
        return Ok(());
    };
    let name =
        |i: usize| crate::text::one_line(&first.try_get::<_, String>(i).unwrap_or_default(), 80);
    Err(server.fail(
        ErrorKind::Refused,
        format!(
            "its schema is owned in part by {}, not by the database's owner ({}): whoever owns it can run code as every teammate who pushes or reads; refusing",
            name(0),
            name(1)
        ),
        Some(
            "an archive a teammate's push set up (before `cairn team init`) is set up again by the database's owner (docs/SECURITY.md, \"Moving a team archive a teammate set up\")"
                .into(),
        ),
    ))
}

/// Refuse a schema whose tables are no longer what Cairn made: a table whose row-level
/// security is off or not forced, or that holds a trigger or a rule (a trigger runs as the
/// teammate whose write fires it, and could write rows in their name). Only the tables' owner
/// (or a superuser) can make such a change.
pub fn check_intact(server: &Server, client: &mut Conn) -> Result<()> {
    let names: Vec<String> = OWNED_TABLES.iter().map(|t| (*t).to_owned()).collect();
    let rows = client
        .query(
            "SELECT c.relname::text, c.relkind::text, c.relrowsecurity, c.relforcerowsecurity,
                    (SELECT count(*) FROM pg_catalog.pg_trigger t
                     WHERE t.tgrelid = c.oid AND NOT t.tgisinternal),
                    (SELECT count(*) FROM pg_catalog.pg_rewrite r WHERE r.ev_class = c.oid),
                    pg_catalog.pg_get_userbyid(c.relowner)::text
             FROM pg_catalog.pg_class c
             JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
             WHERE n.nspname = 'cairn' AND c.relname = ANY($1)",
            &[&names],
        )
        .map_err(|e| server.error(e, "cannot read the tables' settings"))?;
    let mut wrong = Vec::new();
    let mut owner = String::new();
    for table in OWNED_TABLES {
        let Some(row) = rows
            .iter()
            .find(|r| r.try_get::<_, String>(0).ok().as_deref() == Some(table))
        else {
            wrong.push(format!("cairn.{table} is missing"));
            continue;
        };
        let kind: String = row.try_get(1).unwrap_or_default();
        let secured: bool = row.try_get(2).unwrap_or(false);
        let forced: bool = row.try_get(3).unwrap_or(false);
        let triggers: i64 = row.try_get(4).unwrap_or(1);
        let rules: i64 = row.try_get(5).unwrap_or(1);
        if owner.is_empty() {
            owner = crate::text::one_line(&row.try_get::<_, String>(6).unwrap_or_default(), 120);
        }
        if kind != "r" {
            wrong.push(format!("cairn.{table} is no longer a table"));
        }
        if !secured || !forced {
            wrong.push(format!("cairn.{table}'s row-level security is off"));
        }
        if triggers > 0 {
            wrong.push(format!("cairn.{table} has a trigger"));
        }
        if rules > 0 {
            wrong.push(format!("cairn.{table} has a rule"));
        }
    }
    if wrong.is_empty() {
        return Ok(());
    }
    Err(server.fail(
        ErrorKind::Refused,
        format!(
            "its tables were changed outside Cairn ({}): refusing to read or write through them",
            wrong.join("; ")
        ),
        Some(format!(
            "their owner ({owner}) can write past every teammate's ownership: ask the \
             database's owner to look (docs/SECURITY.md, \"The team archive\")"
        )),
    ))
}

/// What [`migrate`] did.
struct Migrated {
    meta: Meta,
    /// This call created the schema (of two at once, one did: the other waited for its lock,
    /// then found it there).
    created: bool,
    /// The team's role, and whether this call created it.
    team: String,
    team_created: bool,
    /// Roles made members of it (an upgrade from version 1: those granted `CONNECT` then).
    added: Vec<String>,
}

/// Bring the server's schema to [`VERSION`] and the database's grants to the team's alone.
fn migrate(server: &Server, client: &mut Conn) -> Result<Migrated> {
    // A session lock taken before the transaction begins, so that the transaction's reads of
    // the catalog start after a teammate's migration committed (a lock taken inside it would
    // leave its first catalog snapshot from before the wait).
    client
        .execute("SELECT pg_advisory_lock($1)", &[&MIGRATE_LOCK])
        .map_err(|e| server.error(e, "cannot lock the schema"))?;
    let migrated = apply(server, client);
    let unlocked = client.execute("SELECT pg_advisory_unlock($1)", &[&MIGRATE_LOCK]);
    let (created, team, team_created, added) = migrated?;
    unlocked.map_err(|e| server.error(e, "cannot unlock the schema"))?;
    let meta = meta(server, client)?.ok_or_else(|| {
        server.fail(
            ErrorKind::Internal,
            "the schema vanished after migrating".into(),
            None,
        )
    })?;
    Ok(Migrated {
        meta,
        created,
        team,
        team_created,
        added,
    })
}

/// Under the migration lock, in one transaction: read the version (another `init` may have
/// migrated while we waited); find the team's role (the one recorded, else the database's
/// [`team_role_for`]) and make it when it is missing and this role may, else refuse saying the
/// SQL an administrator runs; apply the missing steps; take `CONNECT` on the database from
/// `PUBLIC` and grant it to the team's role. An upgrade from version 1 makes members of the
/// roles that version let connect by a grant of their own (the teammates of then), where this
/// role may grant the team's role; the others are left for an administrator ([`outside`]).
/// Returns whether it created the schema, the team's role, whether it created that, and the
/// members it added.
fn apply(server: &Server, client: &mut Conn) -> Result<(bool, String, bool, Vec<String>)> {
    let mut tx = client
        .transaction()
        .map_err(|e| server.error(e, "cannot begin"))?;
    let exists: bool = tx
        .query_one("SELECT to_regclass('cairn.meta') IS NOT NULL", &[])
        .and_then(|r| Ok(r.try_get(0)?))
        .map_err(|e| server.error(e, "cannot read the schema"))?;
    let mut version: i32 = if exists {
        tx.query_one("SELECT version FROM cairn.meta", &[])
            .and_then(|r| Ok(r.try_get(0)?))
            .map_err(|e| server.error(e, "cannot read cairn.meta"))?
    } else {
        0
    };
    check_not_newer(server, version)?;
    let from = version;
    let recorded: Option<String> = if version >= 2 {
        tx.query_one("SELECT team_role::text FROM cairn.meta", &[])
            .and_then(|r| Ok(r.try_get(0)?))
            .map_err(|e| server.error(e, "cannot read cairn.meta"))?
    } else {
        None
    };
    let facts = tx
        .query_one(
            "SELECT pg_catalog.current_database()::text, r.rolsuper OR r.rolcreaterole
             FROM pg_catalog.pg_roles r WHERE r.rolname = current_user",
            &[],
        )
        .map_err(|e| server.error(e, "cannot read who this is"))?;
    let database: String = facts
        .try_get(0)
        .map_err(|e| server.error(e, "cannot read the database's name"))?;
    let may_create: bool = facts
        .try_get(1)
        .map_err(|e| server.error(e, "cannot read this role's rights"))?;
    let team = recorded.unwrap_or_else(|| team_role_for(&database));
    let shown = sql_name(&team);
    let found = tx
        .query(
            "SELECT 1 FROM pg_catalog.pg_roles WHERE rolname = $1",
            &[&team],
        )
        .map_err(|e| server.error(e, "cannot read the team's role"))?;
    let team_created = match found.first() {
        Some(_) => {
            // Everything granted below goes to it, and through it to every teammate.
            check_team_role(server, &mut tx, &team)?;
            false
        }
        None if may_create => {
            tx.batch_execute(&format!("CREATE ROLE {} NOLOGIN", quote_ident(&team)))
                .map_err(|e| server.error(e, "cannot create the team's role"))?;
            true
        }
        None => {
            // Nothing is changed: the administrator makes the role, and the teammates of a
            // version-1 archive are named so that none loses the archive.
            let before = if from == 1 {
                connectors(server, &mut tx)?
            } else {
                Vec::new()
            };
            let add = if before.is_empty() {
                String::new()
            } else {
                format!(
                    " GRANT {} TO {};",
                    whole_name(&team),
                    before
                        .iter()
                        .map(|r| whole_name(r))
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            };
            // The statement whole (a name is at most 63 bytes; never cut to fit a line).
            let sql = format!("CREATE ROLE {} NOLOGIN;{add}", whole_name(&team));
            return Err(server.fail_with_sql(
                ErrorKind::Refused,
                format!(
                    "the team's role {} does not exist, and this role may not create roles",
                    crate::text::one_line(&shown, 80)
                ),
                format!(
                    "an administrator (a role that may create roles) runs: {sql} then run `cairn team init` again (docs/SECURITY.md, \"The team archive\")"
                ),
                sql,
            ));
        }
    };
    while let Some(sql) = step(version, &team) {
        tx.batch_execute(&sql).map_err(|e| {
            server.error(
                e,
                &format!("cannot migrate the team schema to version {}", version + 1),
            )
        })?;
        version += 1;
        tx.execute("UPDATE cairn.meta SET version = $1", &[&version])
            .map_err(|e| server.error(e, "cannot record the schema version"))?;
    }
    if from < 2 {
        tx.execute("UPDATE cairn.meta SET team_role = $1", &[&team])
            .map_err(|e| server.error(e, "cannot record the team's role"))?;
    }
    // Every run: PostgreSQL lets `PUBLIC` connect to a new database; the team connects through
    // its role. (The database's owner and superusers connect without a grant.)
    tx.batch_execute(&format!(
        "{tables}
         REVOKE CONNECT ON DATABASE {db} FROM PUBLIC; GRANT CONNECT ON DATABASE {db} TO {team};",
        tables = table_grants(&team),
        db = quote_ident(&database),
        team = quote_ident(&team)
    ))
    .map_err(|e| server.error(e, "cannot keep the database to the team"))?;
    let mut added = Vec::new();
    if from == 1 {
        for role in connectors(server, &mut tx)? {
            // Each in a savepoint: a role this one may not grant the team to is left out (and
            // listed for an administrator), the rest of the migration kept.
            tx.batch_execute("SAVEPOINT member")
                .map_err(|e| server.error(e, "cannot add a member"))?;
            let grant = format!("GRANT {} TO {}", quote_ident(&team), quote_ident(&role));
            match tx.batch_execute(&grant) {
                Ok(()) => added.push(role),
                Err(_) => tx
                    .batch_execute("ROLLBACK TO SAVEPOINT member")
                    .map_err(|e| server.error(e, "cannot add a member"))?,
            }
        }
    }
    tx.commit()
        .map_err(|e| server.error(e, "cannot commit the schema"))?;
    Ok((!exists, team, team_created, added))
}

/// The roles granted `CONNECT` on this database of their own: the teammates of a version-1
/// archive, which said to grant each one that. The database's owner, superusers and `PUBLIC`
/// left out.
fn connectors(server: &Server, client: &mut Conn) -> Result<Vec<String>> {
    let rows = client
        .query(
            "SELECT DISTINCT r.rolname::text
             FROM pg_catalog.pg_database d, pg_catalog.aclexplode(d.datacl) a,
                  pg_catalog.pg_roles r
             WHERE d.datname = pg_catalog.current_database() AND a.privilege_type = 'CONNECT'
               AND r.oid = a.grantee AND r.oid <> d.datdba AND NOT r.rolsuper
             ORDER BY 1",
            &[],
        )
        .map_err(|e| server.error(e, "cannot read who may connect"))?;
    Ok(rows.iter().filter_map(|r| r.try_get(0).ok()).collect())
}

/// Additions to the schema that every build reads and writes as before: a build that knows
/// one uses it when the server has it, one that does not never names it. They are not steps
/// of [`VERSION`] (a version above a teammate's build locks them out until they update), and
/// only the tables' owner can make them (`cairn team init`, or a push of theirs): another
/// role's push goes on without.
///
/// `cairn.sessions.repo`: the repository a session ran in, as every clone names it
/// ([`crate::git::repo::Repo::identity`]); a team skim in a repository lists its sessions
/// (and those with none).
/// Added in a transaction that waits at most a few seconds for the table's lock: a teammate's
/// long read holds it, and every statement after a waiting `ALTER` would queue behind it.
const REPO_COLUMN: &str = "BEGIN;
     SET LOCAL lock_timeout = '3s';
     ALTER TABLE cairn.sessions ADD COLUMN IF NOT EXISTS repo text;
     COMMIT;";

/// Whether `cairn.sessions` has the `repo` column ([`REPO_COLUMN`]); with `add`, it is added
/// first when this role may (a role that may not is told so in the log, not failed).
pub fn repo_column(server: &Server, client: &mut Conn, add: bool) -> Result<bool> {
    let has = |client: &mut Conn| -> Result<bool> {
        client
            .query_one(
                "SELECT EXISTS (SELECT 1 FROM information_schema.columns
                 WHERE table_schema = 'cairn' AND table_name = 'sessions' AND column_name = 'repo')",
                &[],
            )
            .and_then(|r| Ok(r.try_get(0)?))
            .map_err(|e| server.error(e, "cannot read the schema"))
    };
    let present = has(client)?;
    if present || !add {
        return Ok(present);
    }
    let added = client.batch_execute(REPO_COLUMN);
    if added.is_err() {
        // The failed transaction is still open on this connection.
        let _ = client.batch_execute("ROLLBACK");
    }
    match added {
        Ok(()) => Ok(true),
        Err(e) if e.code() == Some(&tokio_postgres::error::SqlState::INSUFFICIENT_PRIVILEGE) => {
            tracing::warn!(
                "team archive: sessions are pushed without their repository until the schema's owner runs `cairn team init` (this role may not add the column)"
            );
            Ok(false)
        }
        Err(e) if e.code() == Some(&tokio_postgres::error::SqlState::LOCK_NOT_AVAILABLE) => {
            tracing::warn!(
                "team archive: sessions are pushed without their repository this time (a teammate's read held the table; the next push adds the column)"
            );
            Ok(false)
        }
        Err(e) => Err(server.error(e, "cannot add the sessions' repository column")),
    }
}

/// Refuse a server whose schema is newer than this binary.
pub fn check_not_newer(server: &Server, version: i32) -> Result<()> {
    if version > VERSION {
        return Err(server.fail(
            ErrorKind::TooNew,
            format!("its schema is version {version}, newer than this Cairn knows ({VERSION})"),
            Some("update Cairn".into()),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The team's role is named after the database; a name PostgreSQL would cut is cut here,
    /// at a character, ending with a hash of the whole name: two long names that share their
    /// first 63 bytes are two teams.
    #[test]
    fn the_team_role_is_named_after_the_database_and_fits_a_name() {
        assert_eq!(team_role_for("team"), "team_members");
        let long_a = format!("{}a", "é".repeat(40));
        let long_b = format!("{}b", "é".repeat(40));
        let (a, b) = (team_role_for(&long_a), team_role_for(&long_b));
        assert!(a.len() <= MAX_NAME && b.len() <= MAX_NAME, "{a} {b}");
        assert!(a.ends_with("_members") && a.starts_with("éé"), "{a}");
        assert_ne!(a, b);
        assert_eq!(team_role_for(&long_a), a, "the same every time");
    }

    /// What a person pastes into psql names the role exactly: bare only when PostgreSQL reads
    /// it unchanged, else quoted with its quotes doubled.
    #[test]
    fn names_are_quoted_unless_they_read_unchanged() {
        assert_eq!(sql_name("team_members"), "team_members");
        assert_eq!(sql_name("Ana"), "\"Ana\"");
        assert_eq!(sql_name("a b\"c"), "\"a b\"\"c\"");
        assert_eq!(sql_name("1ana"), "\"1ana\"");
        assert_eq!(sql_name("user"), "\"user\"");
        assert_eq!(sql_name("public"), "\"public\"");
        assert_eq!(quote_ident("x"), "\"x\"");
    }
}

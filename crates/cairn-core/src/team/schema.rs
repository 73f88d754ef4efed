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
//! Full text: records are indexed with the `simple` configuration (lower-casing, no stemming,
//! no stop words), the closest PostgreSQL has to the local archive's FTS5 `unicode61`; Recall
//! entries with `english` (Snowball's English stemmer, as the local Recall analyzer stems).

use super::conn::Conn;

use super::server::Server;
use crate::error::{ErrorKind, Result};

/// The schema version this binary writes and reads.
pub const VERSION: i32 = 1;

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

/// The steps, in order: step `i` takes the schema from version `i` to `i + 1`.
const STEPS: &[&str] = &[STEP_1];

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
}

/// Create the team archive's schema, or bring it and its additions up to date, as the role
/// connected, which must be the database's owner or a superuser (the roles [`check_owners`]
/// trusts): a table's owner can make it run code as whoever reads or writes it. Teammates need
/// only `CONNECT` after it.
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
                "run `cairn team init` as {}; teammates need only CONNECT",
                crate::text::one_line(&may.1, 80)
            )),
        ));
    }
    let (meta, created) = migrate(server, &mut client)?;
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
    Ok(TeamInit {
        server: server.display().to_owned(),
        created,
        version: meta.version,
        archive_id: crate::text::printable(&meta.archive_id),
        owner: name(0)?,
        role: name(1)?,
    })
}

/// Whether the role connected may set the team archive up (the database's owner, or a
/// superuser), and the database owner's name.
fn may_init(server: &Server, client: &mut Conn) -> Result<(bool, String)> {
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

/// The schema a push writes to: there, at this binary's version (an older one is brought up
/// when this role may), and intact. A push never creates it: its creator would own the tables.
pub fn for_push(server: &Server, client: &mut Conn) -> Result<Meta> {
    let meta = match meta(server, client)? {
        None => {
            // Only the database's owner may set it up: a teammate is told to ask them, by name.
            let hint = match may_init(server, client)? {
                (true, _) => format!(
                    "set it up once with `cairn team init --to {}` (this role owns the \
                     database), then teammates need only CONNECT",
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
            migrate(server, client)
                .map_err(|e| match e {
                    crate::Error::Team {
                        server,
                        message,
                        kind: ErrorKind::Refused,
                        ..
                    } => crate::Error::Team {
                        server,
                        message,
                        kind: ErrorKind::Refused,
                        hint: Some(
                            "the schema is older than this Cairn: its owner brings it up with \
                         `cairn team init`"
                                .into(),
                        ),
                    },
                    other => other,
                })?
                .0
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

/// Bring the server's schema to [`VERSION`]; returns its meta, and whether this call created
/// it (of two at once, one did: the other waited for its lock, then found it there).
pub fn migrate(server: &Server, client: &mut Conn) -> Result<(Meta, bool)> {
    if let Some(m) = meta(server, client)?
        && m.version == VERSION
    {
        return Ok((m, false));
    }
    // A session lock taken before the transaction begins, so that the transaction's reads of
    // the catalog start after a teammate's migration committed (a lock taken inside it would
    // leave its first catalog snapshot from before the wait).
    client
        .execute("SELECT pg_advisory_lock($1)", &[&MIGRATE_LOCK])
        .map_err(|e| server.error(e, "cannot lock the schema"))?;
    let migrated = apply(server, client);
    let unlocked = client.execute("SELECT pg_advisory_unlock($1)", &[&MIGRATE_LOCK]);
    let created = migrated?;
    unlocked.map_err(|e| server.error(e, "cannot unlock the schema"))?;
    let meta = meta(server, client)?.ok_or_else(|| {
        server.fail(
            ErrorKind::Internal,
            "the schema vanished after migrating".into(),
            None,
        )
    })?;
    Ok((meta, created))
}

/// Under the migration lock: read the version (a teammate may have migrated while we waited),
/// apply the missing steps, in one transaction. True when it created the schema.
fn apply(server: &Server, client: &mut Conn) -> Result<bool> {
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
    while (version as usize) < STEPS.len() {
        tx.batch_execute(STEPS[version as usize]).map_err(|e| {
            server.error(
                e,
                &format!("cannot migrate the team schema to version {}", version + 1),
            )
        })?;
        version += 1;
        tx.execute("UPDATE cairn.meta SET version = $1", &[&version])
            .map_err(|e| server.error(e, "cannot record the schema version"))?;
    }
    tx.commit()
        .map_err(|e| server.error(e, "cannot commit the schema"))?;
    Ok(!exists)
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

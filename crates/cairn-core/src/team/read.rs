//! The team archive's reads: search, skim a branch or PR across everyone, show a teammate's
//! session, Recall over the team's trusted entries. Read-only connections.
//!
//! Every row is a teammate's and so hostile: any column may hold control sequences, megabytes,
//! or (if the tables' owner altered them) another type. So every column is selected as text,
//! cut on the server (`left(…, n)`: a huge field never crosses the wire whole), then read here
//! through [`cell`] — [`crate::text::printable`], the one cleaning function, then the redactor —
//! numbers parsed from that text (anything else is `None`), timestamps kept only when RFC 3339.

use serde::{Deserialize, Serialize};
use tokio_postgres::Row;

use super::conn::Conn;
use super::schema;
use super::server::Server;
use crate::error::{ErrorKind, Result};
use crate::git::targets::{self, Target, TargetKind};

/// Longest field shown whole (bytes); longer ones are cut on the server.
pub const SHOW_CAP: usize = 16 * 1024;
/// Longest title, preview, name.
const SHORT_CAP: usize = 500;
/// Most rows of any list.
pub const MAX_LIMIT: u32 = 500;
/// Records `show` returns at most.
pub const SHOW_RECORDS: u32 = 5_000;
/// Turns `skim` returns per session at most.
pub const SKIM_TURNS: i64 = 200;
/// Links `skim` returns per session at most (those that tie it to the target).
const SKIM_WHY: i64 = 50;
/// A start time as Cairn stores it (RFC 3339 in UTC); anything else sorts as unknown.
const RFC3339_UTC: &str = r"^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])T([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](\.[0-9]{1,9})?Z$";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct TeamSession {
    /// Who pushed it: the PostgreSQL role that owns its rows.
    pub publisher: String,
    pub session_key: String,
    pub agent: String,
    pub title: Option<String>,
    pub project: Option<String>,
    pub git_branch: Option<String>,
    pub model: Option<String>,
    pub started_at: Option<String>,
    pub updated_at: Option<String>,
    pub turn_count: Option<i64>,
    pub record_count: Option<i64>,
    pub pushed_at: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct TeamSearchHit {
    pub publisher: String,
    pub session_key: String,
    pub title: Option<String>,
    pub ordinal: Option<i64>,
    pub turn_index: Option<i64>,
    pub kind: String,
    pub role: Option<String>,
    pub timestamp: Option<String>,
    /// The matching passage, terms between `**`.
    pub snippet: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct TeamWhy {
    pub target_key: String,
    pub evidence: String,
    pub strong: bool,
    pub confidence: Option<f64>,
    pub commit: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct TeamTurn {
    pub turn_index: Option<i64>,
    pub started_at: Option<String>,
    pub record_count: Option<i64>,
    pub tool_call_count: Option<i64>,
    pub preview: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct TeamSkimSession {
    pub session: TeamSession,
    pub why: Vec<TeamWhy>,
    pub turns: Vec<TeamTurn>,
}

/// A branch or PR across everyone who pushed, in the order the sessions started (unknown
/// start first). At most the skim's limit of sessions: the most recent ones.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct TeamSkim {
    pub target: String,
    /// Everyone with a session linked to the target, shown or left out.
    pub publishers: Vec<String>,
    pub sessions: Vec<TeamSkimSession>,
    /// Sessions linked to the target, shown or not.
    pub matched: u32,
    /// The sessions older than those shown, not shown because more than the limit matched.
    pub left_out: u32,
    /// Whose repository's sessions these are.
    pub repo_scope: TeamRepoScope,
    /// What the reader should know of the team archive itself ([`Reader::warnings`]).
    #[serde(default)]
    pub warnings: Vec<String>,
}

/// Which repositories' sessions a team skim lists: a branch or PR number names no repository.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "snake_case")]
pub enum TeamRepoScope {
    /// Every repository's: none was asked for.
    Every,
    /// The repository asked for, and the sessions pushed with no repository known (which may
    /// be its own).
    One,
    /// Every repository's although one was asked for: the server keeps no session's repository
    /// yet (its schema's owner's next push adds the column).
    ServerKeepsNone,
    /// Every repository's although one was asked for: it cannot be named (a shallow clone, whose
    /// first commit is cut off, or a repository with no commit yet).
    Unnamed,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct TeamRecord {
    pub ordinal: Option<i64>,
    pub turn_index: Option<i64>,
    pub timestamp: Option<String>,
    pub kind: String,
    pub role: Option<String>,
    pub text: Option<String>,
    pub tool_name: Option<String>,
    pub tool_input: Option<String>,
    pub outcome: Option<String>,
    pub exit_code: Option<i64>,
    /// Cut: by the publisher's push or at [`SHOW_CAP`] here.
    pub cut: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct TeamShow {
    pub session: TeamSession,
    pub why: Vec<TeamWhy>,
    pub turns: Vec<TeamTurn>,
    pub records: Vec<TeamRecord>,
    /// More records than [`SHOW_RECORDS`] exist.
    pub truncated: bool,
    /// What the reader should know of the team archive itself ([`Reader::warnings`]).
    #[serde(default)]
    pub warnings: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct TeamRecallHit {
    pub publisher: String,
    pub entry_id: String,
    #[serde(rename = "type")]
    pub entry_type: String,
    pub scope: String,
    pub title: String,
    pub body: String,
    pub project: String,
    pub git_branch: String,
    pub session_key: Option<String>,
    pub updated_at: Option<String>,
}

/// What "Test connection" found: the server answered, as whom, and what it holds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct TeamCheck {
    /// The address, without credentials.
    pub server: String,
    pub tls: bool,
    /// The role this connection is: the publisher of what a push sends.
    pub publisher: String,
    /// `PostgreSQL 15.x …`, first line, cleaned.
    pub server_version: String,
    /// The team archive's id, `None` when no push has created it yet.
    pub archive: Option<String>,
    /// Sessions and publishers the team archive holds (those this role may read).
    pub sessions: i64,
    pub publishers: i64,
    /// Where the password came from (never the password).
    pub password_from: super::PasswordSource,
}

/// Connect read-only and say what is there. A database without Cairn's schema is not an
/// error (`cairn team init` creates it); one with a newer schema than this binary reads, or
/// tables changed outside Cairn, is.
pub fn check(server: &Server) -> Result<TeamCheck> {
    let mut client = server.connect(true)?;
    let row = client
        .query_one("SELECT current_user::text, left(version(), 200)", &[])
        .map_err(|e| server.error(e, "cannot ask who this is"))?;
    let publisher = cell(&row, 0, SHORT_CAP).unwrap_or_default();
    let server_version = cell(&row, 1, SHORT_CAP)
        .map(|v| v.split(" on ").next().unwrap_or_default().to_owned())
        .unwrap_or_default();
    let meta = schema::meta(server, &mut client)?;
    let (mut sessions, mut publishers) = (0, 0);
    if let Some(m) = &meta {
        schema::check_not_newer(server, m.version)?;
        schema::check_intact(server, &mut client)?;
        let counts = client
            .query_one(
                "SELECT count(*)::text, count(DISTINCT publisher)::text FROM cairn.sessions",
                &[],
            )
            .map_err(|e| server.error(e, "cannot count sessions"))?;
        sessions = number(&counts, 0).unwrap_or(0);
        publishers = number(&counts, 1).unwrap_or(0);
    }
    Ok(TeamCheck {
        server: server.display().to_owned(),
        tls: server.tls(),
        publisher,
        server_version,
        archive: meta.map(|m| crate::text::printable(&m.archive_id)),
        sessions,
        publishers,
        password_from: server.password_source().clone(),
    })
}

/// What `cairn team status` found: [`TeamCheck`], and whether the team archive is the team's
/// alone (docs/SECURITY.md, "The team archive"): whether every role on the server may connect
/// to the database, or read and write its tables (schema version 1 granted them to `PUBLIC`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TeamStatus {
    #[serde(flatten)]
    pub check: TeamCheck,
    /// The schema's version, `None` when no team archive is there yet.
    pub version: Option<i32>,
    /// The team's role the tables are granted to (schema version 2 and later), once the
    /// catalog shows it is one ([`super::schema::check_team_role`], the check `init`, grant and
    /// revoke make); `None` when the recorded role fails it ([`TeamStatus::team_role_refused`]).
    pub team_role: Option<String>,
    /// Why the role `cairn.meta` records (or, with none recorded, the one named after the
    /// database) is refused as the team's, and what to do: the database's owner may rewrite
    /// the record, and a role that fails the check is never presented as the team's.
    pub team_role_refused: Option<TeamRoleRefused>,
    /// `PUBLIC` (every role on the server) may connect to the database.
    pub public_connect: bool,
    /// `PUBLIC` holds a privilege on a table of schema `cairn`.
    pub public_tables: bool,
}

/// A recorded team's role the catalog check refuses: the role as recorded (cleaned), what is
/// wrong with it, what to do, and the SQL that sets the record back.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TeamRoleRefused {
    pub role: String,
    pub message: String,
    pub hint: Option<String>,
    pub sql: Option<String>,
}

/// [`check`], then what the catalog says of who may connect and read (readable by any role
/// that connects). The version and the team's role are read from `cairn.meta` as far as this
/// role may, and the role checked as grant and revoke check it before presenting it.
pub fn status(server: &Server) -> Result<TeamStatus> {
    let check = check(server)?;
    let mut client = server.connect(true)?;
    let (public_connect, public_tables) = open_to_all(server, &mut client)?;
    let (mut version, mut team_role, mut team_role_refused) = (None, None, None);
    if check.archive.is_some() {
        // `check` read the schema's owners and tables first; the version is read again here with
        // the team's role, which version 1 has no column for (so it is read through the row).
        let row = client
            .query_one(
                "SELECT m.version::text, pg_catalog.to_jsonb(m) ->> 'team_role' FROM cairn.meta m",
                &[],
            )
            .map_err(|e| server.error(e, "cannot read cairn.meta"))?;
        version = number(&row, 0).and_then(|v| i32::try_from(v).ok());
        if version.is_some_and(|v| v >= 2) {
            // The check reads the role's raw name; what is shown is cleaned.
            let raw: Option<String> = row.try_get(1).ok().flatten();
            let raw = match raw {
                Some(r) => r,
                None => {
                    let db: String = client
                        .query_one("SELECT pg_catalog.current_database()::text", &[])
                        .and_then(|r| Ok(r.try_get(0)?))
                        .map_err(|e| server.error(e, "cannot read the database's name"))?;
                    super::schema::team_role_for(&db)
                }
            };
            let shown = crate::text::one_line(&raw, SHORT_CAP);
            match super::schema::check_team_role(server, &mut client, &raw) {
                Ok(()) => team_role = Some(shown),
                Err(e) => {
                    team_role_refused = Some(TeamRoleRefused {
                        role: shown,
                        hint: e.hint(),
                        sql: match &e {
                            crate::error::Error::Team { sql, .. } => sql.clone(),
                            _ => None,
                        },
                        message: match e {
                            crate::error::Error::Team { message, .. } => message,
                            other => other.to_string(),
                        },
                    });
                }
            }
        } else {
            team_role = cell(&row, 1, SHORT_CAP);
        }
    }
    Ok(TeamStatus {
        check,
        version,
        team_role,
        team_role_refused,
        public_connect,
        public_tables,
    })
}

/// Whether `PUBLIC` (every role on the server) may connect to the database, and whether it
/// holds a privilege on a table of schema `cairn`; read from the catalog, which any role that
/// connects may read.
fn open_to_all(server: &Server, client: &mut Conn) -> Result<(bool, bool)> {
    let row = client
        .query_one(
            "SELECT (d.datacl IS NULL OR EXISTS (
                        SELECT 1 FROM pg_catalog.aclexplode(d.datacl) a
                        WHERE a.grantee = 0 AND a.privilege_type = 'CONNECT'))::text,
                    EXISTS (SELECT 1 FROM pg_catalog.pg_class c
                            JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace,
                            pg_catalog.aclexplode(c.relacl) a
                            WHERE n.nspname = 'cairn' AND a.grantee = 0)::text
             FROM pg_catalog.pg_database d WHERE d.datname = pg_catalog.current_database()",
            &[],
        )
        .map_err(|e| server.error(e, "cannot read who may connect"))?;
    Ok((flag(&row, 0), flag(&row, 1)))
}

/// What a read of an archive older than [`schema::VERSION`] says once: version 1 granted the
/// tables to `PUBLIC`, so while it stands every role on the server may read what the team
/// pushed and write Recall entries the team's reads trust. Reads still work (a teammate must
/// not lose the archive while the owner has not upgraded); the warning says who fixes it.
/// Nothing when an administrator already took `PUBLIC`'s grants by hand.
fn old_schema_warning(server: &Server, client: &mut Conn, version: i32) -> Result<Option<String>> {
    if version >= schema::VERSION {
        return Ok(None);
    }
    let (connect, tables) = open_to_all(server, client)?;
    if !tables {
        return Ok(None);
    }
    let owner = crate::text::one_line(&schema::may_init(server, client)?.1, 80);
    Ok(Some(format!(
        "the team archive at {} is schema version {version}: every role on the server{} may read the team's records and write Recall entries into it; the database's owner ({owner}) runs `cairn team init` to keep it to the team's role",
        server.display(),
        if connect { "" } else { " that may connect" }
    )))
}

/// Rows read from the team archive with what the reader should know of the archive itself
/// ([`Reader::warnings`]): for the reads whose result is a list.
#[derive(Debug, Clone, PartialEq)]
pub struct Warned<T> {
    pub rows: T,
    pub warnings: Vec<String>,
}

/// A read-only connection to a team archive whose schema this binary reads.
pub struct Reader<'a> {
    server: &'a Server,
    client: Conn,
    warnings: Vec<String>,
}

impl<'a> Reader<'a> {
    pub fn open(server: &'a Server) -> Result<Reader<'a>> {
        let mut client = server.connect(true)?;
        match schema::meta(server, &mut client)? {
            None => Err(server.fail(
                ErrorKind::NotFound,
                "holds no team archive yet".into(),
                Some(
                    "the database's owner sets it up once (`cairn team init`), then teammates push to it"
                        .into(),
                ),
            )),
            Some(m) => {
                schema::check_not_newer(server, m.version)?;
                schema::check_intact(server, &mut client)?;
                let warnings = old_schema_warning(server, &mut client, m.version)?
                    .into_iter()
                    .collect();
                Ok(Reader {
                    server,
                    client,
                    warnings,
                })
            }
        }
    }

    /// What every read through this connection should say once besides its rows: that the
    /// archive is open to every role on the server (an archive of schema version 1), and who
    /// brings it up.
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    fn query(
        &mut self,
        sql: &str,
        params: &[&(dyn tokio_postgres::types::ToSql + Sync)],
        what: &str,
    ) -> Result<Vec<Row>> {
        self.client
            .query(sql, params)
            .map_err(|e| self.server.error(e, what))
    }

    /// Records matching `query` (PostgreSQL's web-search syntax over the `simple`
    /// configuration), best first.
    pub fn search(&mut self, query: &str, limit: u32) -> Result<Vec<TeamSearchHit>> {
        let limit = i64::from(limit.clamp(1, MAX_LIMIT));
        let sql = format!(
            "SELECT r.publisher::text, r.session_key::text, {title}, r.ordinal::text, r.turn_index::text,
                    left(r.kind::text, 40), left(r.role::text, 40), left(r.ts::text, 64),
                    left(ts_headline('simple', translate(left(coalesce(r.body::text, '') || ' ' || coalesce(r.tool_input::text, ''), 20000), $4::text, ''), q,
                        $3::text), 2000),
                    (coalesce(r.body, '') = '' AND r.tool_input IS NOT NULL)::text
             FROM cairn.records r
             JOIN cairn.sessions s ON s.publisher = r.publisher AND s.session_key = r.session_key,
                  websearch_to_tsquery('simple', $1) q
             WHERE r.search @@ q AND NOT r.retracted
             ORDER BY ts_rank(r.search, q) DESC, r.ts DESC NULLS LAST
             LIMIT $2",
            title = short("s.title")
        );
        // The local search's match marks, not `**`; a teammate's row that holds the marks
        // itself has them taken out first, so only the server's highlights are marks.
        let (start, end) = (
            crate::archive::store::MATCH_START,
            crate::archive::store::MATCH_END,
        );
        let options =
            format!("StartSel={start}, StopSel={end}, MaxWords=30, MinWords=12, MaxFragments=1");
        let marks = format!("{start}{end}");
        let rows = self.query(&sql, &[&query, &limit, &options, &marks], "cannot search")?;
        Ok(rows
            .iter()
            .map(|r| TeamSearchHit {
                publisher: cell(r, 0, SHORT_CAP).unwrap_or_default(),
                session_key: cell(r, 1, SHORT_CAP).unwrap_or_default(),
                title: cell(r, 2, SHORT_CAP),
                ordinal: number(r, 3),
                turn_index: number(r, 4),
                kind: cell(r, 5, SHORT_CAP).unwrap_or_default(),
                role: cell(r, 6, SHORT_CAP),
                timestamp: time(r, 7),
                snippet: {
                    let snippet = cell(r, 8, 4000).unwrap_or_default();
                    // A tool call's passage is of its stored JSON: read as the local search
                    // reads it (`command: ls · description: List`), not as punctuation.
                    let snippet = if cell(r, 9, 8).as_deref() == Some("true") {
                        crate::archive::store::readable_input(snippet.trim())
                    } else {
                        snippet
                    };
                    // Cleaned as a local search's snippet is (a link's address cut at its
                    // start), then cut, a redaction marker the cut split closed again.
                    crate::text::closed_marker(&crate::text::excerpt(
                        &crate::archive::store::shown_snippet(&snippet),
                        400,
                    ))
                },
            })
            .collect())
    }

    /// The sessions linked to a branch or a PR (`#123`, a PR URL, `review:…`), from everyone,
    /// oldest first. When more than `limit` (at most [`MAX_LIMIT`]) match, the most recent
    /// `limit` are kept and the earlier ones counted in [`TeamSkim::left_out`]; `skip` passes over
    /// that many of the most recent first, so the earlier ones can be read a page at a time.
    ///
    /// With `repo` (a repository's identity, [`crate::git::repo::Repo::identity`]), only the
    /// sessions pushed with that repository or with none (pushed before the server kept it, or
    /// from no repository): a branch or PR number names no repository.
    ///
    /// A fixed number of statements whatever the number of sessions, in one read-only snapshot:
    /// the sessions (chosen and ordered on the server), the first [`SKIM_TURNS`] turns of each,
    /// the links that tie each to the target, and who published.
    pub fn skim(
        &mut self,
        target: &str,
        limit: u32,
        skip: u32,
        repo: Option<&str>,
    ) -> Result<TeamSkim> {
        let t = parse_target(target)?;
        let pr = t.pr_number.map(i64::from);
        let keys = self.matching_keys(&t)?;
        // A server without the column holds no session's repository: nothing to leave out.
        let scoped =
            repo.is_some() && super::schema::repo_column(self.server, &mut self.client, false)?;
        let repo_scope = match (repo, scoped) {
            (None, _) => TeamRepoScope::Every,
            (Some(_), true) => TeamRepoScope::One,
            (Some(_), false) => TeamRepoScope::ServerKeepsNone,
        };
        let repo = repo.filter(|_| scoped);
        // The session `s`'s repository is `$p`'s, or unknown.
        let in_repo = |p: u8| {
            if scoped {
                format!("(${p}::text IS NULL OR s.repo IS NULL OR s.repo = ${p})")
            } else {
                format!("(${p}::text IS NULL OR TRUE)")
            }
        };
        let limit = i64::from(limit.clamp(1, MAX_LIMIT));
        let skip = i64::from(skip);
        let server = self.server;
        let mut tx = self
            .client
            .snapshot()
            .map_err(|e| server.error(e, "cannot begin"))?;
        // `picked`: the sessions shown, numbered newest first (`rn`, from `skip` + 1), with how
        // many matched; `$n` is the placeholder of `skip` in the statement it starts.
        // A start time that is not RFC 3339 in UTC, or is more than a day ahead of the server's
        // clock, counts as unknown, which is oldest: a teammate cannot crowd the others out by
        // dating sessions in the future.
        let picked = |n: u8, r: u8| {
            format!(
            "WITH matched AS (
                 SELECT DISTINCT publisher, session_key FROM cairn.links
                 WHERE target_key = ANY($1) OR ($2::int8 IS NOT NULL AND pr_number = $2)
             ), timed AS (
                 SELECT s.publisher, s.session_key,
                        CASE WHEN s.started_at::text ~ '{RFC3339_UTC}'
                              AND s.started_at::text <= to_char((now() + interval '1 day') AT TIME ZONE 'UTC',
                                                          'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"')
                             THEN s.started_at::text END AS t
                 FROM cairn.sessions s
                 JOIN matched m ON m.publisher = s.publisher AND m.session_key = s.session_key
                 WHERE {scope}
             ), picked AS (
                 SELECT publisher, session_key,
                        row_number() OVER (ORDER BY t DESC NULLS LAST, publisher DESC, session_key DESC) AS rn,
                        count(*) OVER () AS matched
                 FROM timed
                 ORDER BY t DESC NULLS LAST, publisher DESC, session_key DESC
                 LIMIT $3 OFFSET ${n}
             )",
            scope = in_repo(r)
        )
        };
        let rows = tx
            .query(
                &format!(
                    "{picked}
                     SELECT p.rn::text, p.matched::text, {cols}
                     FROM picked p
                     JOIN cairn.sessions s ON s.publisher = p.publisher AND s.session_key = p.session_key
                     ORDER BY p.rn",
                    picked = picked(4, 5),
                    cols = session_columns()
                ),
                &[&keys, &pr, &limit, &skip, &repo],
            )
            .map_err(|e| server.error(e, "cannot read the sessions"))?;
        let matched = match rows.first() {
            Some(r) => number(r, 1).unwrap_or(0).max(0),
            // Skipped past the last: the rows that would count them are gone.
            None if skip > 0 => tx
                .query_one(
                    &format!(
                        "SELECT count(*)::text FROM (
                         SELECT DISTINCT l.publisher, l.session_key FROM cairn.links l
                         JOIN cairn.sessions s ON s.publisher = l.publisher AND s.session_key = l.session_key
                         WHERE (l.target_key = ANY($1) OR ($2::int8 IS NOT NULL AND l.pr_number = $2))
                           AND {scope}
                     ) x",
                        scope = in_repo(3)
                    ),
                    &[&keys, &pr, &repo],
                )
                .map_err(|e| server.error(e, "cannot count the sessions"))
                .map(|r| number(&r, 0).unwrap_or(0))?,
            None => 0,
        };
        let mut sessions: Vec<TeamSkimSession> = rows
            .iter()
            .map(|r| TeamSkimSession {
                session: session_of(r, 2),
                why: Vec::new(),
                turns: Vec::new(),
            })
            .collect();
        // `rn` as an index into `sessions` (which is in `rn` order).
        let at = |r: &Row| {
            number(r, 0)
                .and_then(|n| usize::try_from(n - 1 - skip).ok())
                .filter(|&i| i < sessions.len())
        };
        let turns = tx
            .query(
                &format!(
                    "{picked}
                     SELECT p.rn::text, {turn_cols}
                     FROM picked p
                     CROSS JOIN LATERAL (
                         SELECT * FROM cairn.turns t
                         WHERE t.publisher = p.publisher AND t.session_key = p.session_key
                         ORDER BY t.turn_index LIMIT $4
                     ) t
                     ORDER BY p.rn, t.turn_index",
                    picked = picked(5, 6),
                    turn_cols = turn_columns()
                ),
                &[&keys, &pr, &limit, &SKIM_TURNS, &skip, &repo],
            )
            .map_err(|e| server.error(e, "cannot read turns"))?;
        let placed: Vec<(usize, TeamTurn)> = turns
            .iter()
            .filter_map(|r| Some((at(r)?, turn_of(r, 1))))
            .collect();
        let links = tx
            .query(
                &format!(
                    "{picked}
                     SELECT p.rn::text, {key}, left(l.evidence::text, 64), l.strong::text,
                            l.confidence::text, left(l.commit_id::text, 80)
                     FROM picked p
                     CROSS JOIN LATERAL (
                         SELECT * FROM cairn.links l
                         WHERE l.publisher = p.publisher AND l.session_key = p.session_key
                           AND (l.target_key = ANY($1) OR ($2::int8 IS NOT NULL AND l.pr_number = $2))
                         ORDER BY l.strong DESC, l.confidence DESC LIMIT $4
                     ) l
                     ORDER BY p.rn, l.strong DESC, l.confidence DESC",
                    picked = picked(5, 6),
                    key = short("l.target_key")
                ),
                &[&keys, &pr, &limit, &SKIM_WHY, &skip, &repo],
            )
            .map_err(|e| server.error(e, "cannot read links"))?;
        let whys: Vec<(usize, TeamWhy)> = links
            .iter()
            .filter_map(|r| Some((at(r)?, why_of(r, 1))))
            .collect();
        let everyone = tx
            .query(
                &format!(
                    "SELECT DISTINCT left(l.publisher::text, 500) FROM cairn.links l
                     JOIN cairn.sessions s ON s.publisher = l.publisher AND s.session_key = l.session_key
                     WHERE (l.target_key = ANY($1) OR ($2::int8 IS NOT NULL AND l.pr_number = $2))
                       AND {scope}
                     ORDER BY 1 LIMIT 1000",
                    scope = in_repo(3)
                ),
                &[&keys, &pr, &repo],
            )
            .map_err(|e| server.error(e, "cannot read who published"))?;
        tx.commit().map_err(|e| server.error(e, "cannot end"))?;
        for (i, turn) in placed {
            sessions[i].turns.push(turn);
        }
        for (i, why) in whys {
            sessions[i].why.push(why);
        }
        sessions.reverse();
        let mut publishers: Vec<String> = everyone
            .iter()
            .filter_map(|r| cell(r, 0, SHORT_CAP))
            .collect();
        publishers.sort();
        publishers.dedup();
        let shown = sessions.len() as i64;
        Ok(TeamSkim {
            target: t.key,
            publishers,
            matched: u32::try_from(matched).unwrap_or(u32::MAX),
            left_out: u32::try_from((matched - skip - shown).max(0)).unwrap_or(u32::MAX),
            sessions,
            repo_scope,
            warnings: self.warnings.clone(),
        })
    }

    /// The target keys whose links count for `t`, as local skim counts them: for a PR, also its
    /// head branch (`pull-request:ref:refs/heads/x#12` → `ref:refs/heads/x`), learnt from any
    /// teammate's link that carries the PR's number; work proven on the head branch counts for
    /// the PR.
    fn matching_keys(&mut self, t: &Target) -> Result<Vec<String>> {
        let mut keys = vec![t.key.clone()];
        if t.kind == TargetKind::Review {
            keys.extend(targets::pr_head_branch(&t.key));
            if let Some(n) = t.pr_number {
                let rows = self.query(
                    "SELECT DISTINCT target_key::text FROM cairn.links
                     WHERE pr_number = $1 AND length(target_key) <= 600 LIMIT 100",
                    &[&i64::from(n)],
                    "cannot read links",
                )?;
                for r in &rows {
                    // Raw (not cleaned): compared with keys on the server, never printed.
                    if let Ok(Some(key)) = r.try_get::<_, Option<String>>(0) {
                        keys.extend(targets::pr_head_branch(&key));
                        keys.push(key);
                    }
                }
            }
        }
        keys.sort();
        keys.dedup();
        Ok(keys)
    }

    /// One session: its key (or a prefix of 8 characters or more, or the agent's own session
    /// id), narrowed to `publisher` when two teammates pushed sessions that match. Under another
    /// publisher than `publisher` asked for, the error says whose it is.
    pub fn show(&mut self, session: &str, publisher: Option<&str>) -> Result<TeamShow> {
        let session = session.trim();
        if session.len() < 8 {
            return Err(self.server.fail(
                ErrorKind::Invalid,
                "a session is named by its key, at least its first 8 characters, or the agent's session id".into(),
                Some("copy it from `cairn team search` or `cairn team skim`".into()),
            ));
        }
        let ids = self.find(session, publisher)?;
        let (publisher, key) = match ids.as_slice() {
            [] => {
                if let Some(asked) = publisher {
                    // Pushed by someone else: say by whom, rather than that it is not there.
                    let mut others: Vec<String> = self
                        .find(session, None)?
                        .into_iter()
                        .map(|f| f.shown.0)
                        .collect();
                    others.dedup();
                    if let Some(first) = others.first() {
                        return Err(self.server.fail(
                            ErrorKind::NotFound,
                            format!(
                                "no session {} by {} in the team archive; it was pushed by {}",
                                crate::text::one_line(session, 80),
                                crate::text::one_line(asked, 80),
                                others.join(", ")
                            ),
                            Some(format!("--publisher {first}, or leave --publisher out")),
                        ));
                    }
                }
                return Err(self.server.fail(
                    ErrorKind::NotFound,
                    format!(
                        "no session {} in the team archive",
                        crate::text::one_line(session, 80)
                    ),
                    None,
                ));
            }
            [one] => one.raw.clone(),
            many => {
                let names: Vec<String> = many
                    .iter()
                    .map(|f| format!("{}/{}", f.shown.0, f.shown.1))
                    .collect();
                // Keys are the agents' session ids hashed: two publishers may share one.
                let whole = many.iter().all(|f| f.raw.1 == many[0].raw.1);
                let hint = if whole {
                    format!("name the publisher too: --publisher {}", many[0].shown.0)
                } else {
                    "give more of the key, or --publisher".to_owned()
                };
                return Err(self.server.fail(
                    ErrorKind::Conflict,
                    format!("{} sessions match: {}", many.len(), names.join(", ")),
                    Some(hint),
                ));
            }
        };
        let Some(s) = self.session_row(&publisher, &key)? else {
            return Err(self.server.fail(
                ErrorKind::NotFound,
                format!("session {} is gone", clean(&key, SHORT_CAP)),
                None,
            ));
        };
        let turns = self.turns(&publisher, &key, 100_000)?;
        let why = self
            .query(
                &format!(
                    "SELECT {key}, left(evidence::text, 64), strong::text, confidence::text, left(commit_id::text, 80)
                     FROM cairn.links WHERE publisher = $1 AND session_key = $2 LIMIT 1000",
                    key = short("target_key")
                ),
                &[&publisher, &key],
                "cannot read links",
            )?
            .iter()
            .map(|r| why_of(r, 0))
            .collect();
        let limit = i64::from(SHOW_RECORDS) + 1;
        let cap = SHOW_CAP as i64;
        // Ordered by the table's column, qualified: a bare `ordinal` names the output column
        // `ordinal::text`, which sorts 0, 1, 10, 11, …, 2 (and the limit keeps the wrong ones).
        let rows = self.query(
            "SELECT r.ordinal::text, r.turn_index::text, left(r.ts::text, 64), left(r.kind::text, 40),
                    left(r.role::text, 40), left(r.body::text, $4::int4), left(r.tool_name::text, 200),
                    left(r.tool_input::text, $4::int4), left(r.outcome::text, 40), r.exit_code::text,
                    r.cut::text, (length(r.body::text) > $4 OR length(r.tool_input::text) > $4)::text
             FROM cairn.records r
             WHERE r.publisher = $1 AND r.session_key = $2 AND NOT r.retracted
             ORDER BY r.ordinal LIMIT $3",
            &[&publisher, &key, &limit, &(cap as i32)],
            "cannot read records",
        )?;
        let truncated = rows.len() as i64 == limit;
        let records = rows
            .iter()
            .take(SHOW_RECORDS as usize)
            .map(|r| TeamRecord {
                ordinal: number(r, 0),
                turn_index: number(r, 1),
                timestamp: time(r, 2),
                kind: cell(r, 3, SHORT_CAP).unwrap_or_default(),
                role: cell(r, 4, SHORT_CAP),
                text: cell(r, 5, SHOW_CAP),
                tool_name: cell(r, 6, SHORT_CAP),
                tool_input: cell(r, 7, SHOW_CAP),
                outcome: cell(r, 8, SHORT_CAP),
                exit_code: number(r, 9),
                cut: flag(r, 10) || flag(r, 11),
            })
            .collect();
        Ok(TeamShow {
            session: s,
            why,
            turns,
            records,
            truncated,
            warnings: self.warnings.clone(),
        })
    }

    /// The sessions `session` names (a key, its first 8 characters or more, or the agent's own
    /// session id), narrowed to `publisher`: at most 10, by publisher and key.
    fn find(&mut self, session: &str, publisher: Option<&str>) -> Result<Vec<Found>> {
        let pattern = format!(
            "{}%",
            session
                .replace('\\', "\\\\")
                .replace('%', "\\%")
                .replace('_', "\\_")
        );
        // The rows are found, and read, by their key and publisher as stored; only what is
        // shown is cleaned. A key whose cleaning changes it (a hostile row's, with an escape
        // in it) is printed cleaned, and that form finds it too: it is looked for among the
        // keys and publishers cleaning would change.
        let found = self.query(
            "SELECT s.publisher::text, s.session_key::text FROM cairn.sessions s
             WHERE s.session_key LIKE $1 AND ($2::text IS NULL OR s.publisher = $2)
               AND length(s.session_key) <= 600 AND length(s.publisher) <= 600
             ORDER BY s.publisher, s.session_key LIMIT 10",
            &[&pattern, &publisher],
            "cannot find the session",
        )?;
        let mut ids: Vec<Found> = found.iter().filter_map(Found::of).collect();
        if ids.is_empty() && !session.starts_with("sha256-") {
            // The agent's own session id, as `cairn show` takes it: the team archive keeps only
            // its key, which is the id hashed with the agent's name, so each agent's key of it
            // is looked up among the rows of that agent.
            let (keys, agents): (Vec<String>, Vec<String>) = crate::agent::Agent::ALL
                .iter()
                .map(|a| {
                    (
                        crate::keys::session_key(*a, session.as_bytes()),
                        a.as_str().to_owned(),
                    )
                })
                .unzip();
            let by_id = self.query(
                "SELECT s.publisher::text, s.session_key::text FROM cairn.sessions s
                 JOIN unnest($1::text[], $2::text[]) AS k(key, agent)
                   ON s.session_key = k.key AND s.agent = k.agent
                 WHERE ($3::text IS NULL OR s.publisher = $3)
                   AND length(s.publisher) <= 600
                 ORDER BY s.publisher, s.session_key LIMIT 10",
                &[&keys, &agents, &publisher],
                "cannot find the session",
            )?;
            ids = by_id.iter().filter_map(Found::of).collect();
        }
        if ids.is_empty() {
            let unusual = self.query(
                "SELECT s.publisher::text, s.session_key::text FROM cairn.sessions s
                 WHERE (s.session_key ~ '[^ -~]' OR s.publisher ~ '[^ -~]')
                   AND length(s.session_key) <= 600 AND length(s.publisher) <= 600
                 ORDER BY s.publisher, s.session_key LIMIT 1000",
                &[],
                "cannot find the session",
            )?;
            ids = unusual
                .iter()
                .filter_map(Found::of)
                .filter(|f| {
                    f.shown.1.starts_with(session)
                        && publisher.is_none_or(|p| f.shown.0 == p || f.raw.0 == p)
                })
                .take(10)
                .collect();
        }
        Ok(ids)
    }

    /// The team's trusted Recall entries matching `query` (web-search syntax, `english`
    /// configuration), best first.
    pub fn recall(&mut self, query: &str, limit: u32) -> Result<Vec<TeamRecallHit>> {
        let limit = i64::from(limit.clamp(1, MAX_LIMIT));
        let rows = self.query(
            &format!(
                "SELECT publisher::text, left(entry_id::text, 200), left(entry_type::text, 40), left(scope::text, 40),
                        {title}, left(body::text, {cap}), {project}, {branch}, left(session_key::text, 200),
                        left(updated_at::text, 64)
                 FROM cairn.recall_entries, websearch_to_tsquery('english', $1) q
                 WHERE search @@ q
                 ORDER BY ts_rank_cd(search, q) DESC, updated_at DESC
                 LIMIT $2",
                title = short("title"),
                project = short("project"),
                branch = short("git_branch"),
                cap = SHOW_CAP
            ),
            &[&query, &limit],
            "cannot search Recall",
        )?;
        Ok(rows
            .iter()
            .map(|r| TeamRecallHit {
                publisher: cell(r, 0, SHORT_CAP).unwrap_or_default(),
                entry_id: cell(r, 1, SHORT_CAP).unwrap_or_default(),
                entry_type: cell(r, 2, SHORT_CAP).unwrap_or_default(),
                scope: cell(r, 3, SHORT_CAP).unwrap_or_default(),
                title: cell(r, 4, SHORT_CAP).unwrap_or_default(),
                body: cell(r, 5, SHOW_CAP).unwrap_or_default(),
                project: cell(r, 6, SHORT_CAP).unwrap_or_default(),
                git_branch: cell(r, 7, SHORT_CAP).unwrap_or_default(),
                session_key: cell(r, 8, SHORT_CAP),
                updated_at: time(r, 9),
            })
            .collect())
    }

    fn session_row(&mut self, publisher: &str, key: &str) -> Result<Option<TeamSession>> {
        let rows = self.query(
            &format!(
                "SELECT {cols} FROM cairn.sessions s WHERE s.publisher = $1 AND s.session_key = $2",
                cols = session_columns()
            ),
            &[&publisher, &key],
            "cannot read the session",
        )?;
        Ok(rows.first().map(|r| session_of(r, 0)))
    }

    fn turns(&mut self, publisher: &str, key: &str, limit: i64) -> Result<Vec<TeamTurn>> {
        let rows = self.query(
            &format!(
                "SELECT {cols} FROM cairn.turns t WHERE t.publisher = $1 AND t.session_key = $2
                 ORDER BY t.turn_index LIMIT $3",
                cols = turn_columns()
            ),
            &[&publisher, &key, &limit],
            "cannot read turns",
        )?;
        Ok(rows.iter().map(|r| turn_of(r, 0)).collect())
    }
}

/// A session's columns (table alias `s`), read back by [`session_of`].
fn session_columns() -> String {
    format!(
        "{publisher}, {key}, left(s.agent::text, 40), {title}, {project}, {branch}, {model},
         left(s.started_at::text, 64), left(s.updated_at::text, 64), s.turn_count::text, s.record_count::text,
         to_char(s.pushed_at::timestamptz AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"')",
        publisher = short("s.publisher"),
        key = short("s.session_key"),
        title = short("s.title"),
        project = short("s.project"),
        branch = short("s.git_branch"),
        model = short("s.model"),
    )
}

/// The columns of [`session_columns`], from column `at` on.
fn session_of(r: &Row, at: usize) -> TeamSession {
    TeamSession {
        publisher: cell(r, at, SHORT_CAP).unwrap_or_default(),
        session_key: cell(r, at + 1, SHORT_CAP).unwrap_or_default(),
        agent: cell(r, at + 2, SHORT_CAP).unwrap_or_default(),
        title: cell(r, at + 3, SHORT_CAP),
        project: cell(r, at + 4, SHORT_CAP),
        git_branch: cell(r, at + 5, SHORT_CAP),
        model: cell(r, at + 6, SHORT_CAP),
        started_at: time(r, at + 7),
        updated_at: time(r, at + 8),
        turn_count: number(r, at + 9),
        record_count: number(r, at + 10),
        pushed_at: time(r, at + 11),
    }
}

/// A turn's columns (table alias `t`), read back by [`turn_of`].
fn turn_columns() -> String {
    format!(
        "t.turn_index::text, left(t.started_at::text, 64), t.record_count::text, t.tool_call_count::text, {preview}",
        preview = short("t.preview")
    )
}

/// The columns of [`turn_columns`], from column `at` on.
fn turn_of(r: &Row, at: usize) -> TeamTurn {
    TeamTurn {
        turn_index: number(r, at),
        started_at: time(r, at + 1),
        record_count: number(r, at + 2),
        tool_call_count: number(r, at + 3),
        preview: cell(r, at + 4, SHORT_CAP),
    }
}

/// `left(col::text, SHORT_CAP)`: a short field, cut on the server.
fn short(col: &str) -> String {
    format!("left({col}::text, {SHORT_CAP})")
}

/// A branch (`main`, `refs/heads/x`) or a review (`#12`, a PR URL, `review:…`).
fn parse_target(value: &str) -> Result<Target> {
    let v = value.trim();
    if v.starts_with('#') || v.starts_with("review:") || targets::pr_number_of(v).is_some() {
        Target::parse(TargetKind::Review, v)
    } else {
        Target::parse(TargetKind::Branch, v)
    }
}

fn why_of(r: &Row, at: usize) -> TeamWhy {
    TeamWhy {
        target_key: cell(r, at, SHORT_CAP).unwrap_or_default(),
        evidence: cell(r, at + 1, SHORT_CAP).unwrap_or_default(),
        strong: flag(r, at + 2),
        confidence: cell(r, at + 3, 64)
            .and_then(|c| c.parse::<f64>().ok())
            // A confidence is a share: a row claiming 99 (anyone's text) is not 99 times sure.
            .filter(|c| (0.0..=1.0).contains(c)),
        commit: cell(r, at + 4, SHORT_CAP),
    }
}

/// Column `i` as clean text ([`clean`]). Anything that is not text (the query casts every
/// column) is `None`.
pub fn cell(r: &Row, i: usize, max: usize) -> Option<String> {
    let raw: Option<String> = r.try_get(i).ok().flatten();
    raw.map(|s| clean(&s, max))
}

/// A teammate's text as shown: [`crate::text::printable`], redacted (a teammate's Cairn
/// redacted what it pushed, but a row is anyone's text who can write the tables), at most
/// `max` bytes.
fn clean(raw: &str, max: usize) -> String {
    let mut s =
        crate::archive::redact::Redactor::global().redact_printable(raw, "", &mut Vec::new());
    if s.len() > max {
        let mut end = max;
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        s.truncate(end);
        s.push('…');
    }
    s
}

/// A session `show` found: its publisher and key as stored (what the next statements name)
/// and as shown.
struct Found {
    raw: (String, String),
    shown: (String, String),
}

impl Found {
    /// Columns 0 and 1 (publisher, key); `None` when either is not text.
    fn of(r: &Row) -> Option<Found> {
        let publisher: String = r.try_get(0).ok()?;
        let key: String = r.try_get(1).ok()?;
        Some(Found {
            shown: (clean(&publisher, SHORT_CAP), clean(&key, SHORT_CAP)),
            raw: (publisher, key),
        })
    }
}

fn number(r: &Row, i: usize) -> Option<i64> {
    cell(r, i, 64).and_then(|s| s.trim().parse().ok())
}

fn flag(r: &Row, i: usize) -> bool {
    cell(r, i, 16).is_some_and(|s| s == "true")
}

fn time(r: &Row, i: usize) -> Option<String> {
    cell(r, i, 64).and_then(|s| crate::text::rfc3339(&s).map(|c| c.into_owned()))
}

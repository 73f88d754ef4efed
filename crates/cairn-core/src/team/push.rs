//! `cairn team push`: mirror this machine's archive into the team archive.
//!
//! What leaves: sessions (no source paths; the cwd repo-relative or redacted), turns, records,
//! links, and the trusted Recall entries, every text through [`Redactor::outbound_text`] (escape
//! sequences out, secrets redacted, absolute paths repo-relative or `[REDACTED:path]`), a field
//! over [`FIELD_CAP`] cut, then a final scan of what is about to leave: a session in which the
//! scanner still finds a secret is not sent at all (the report names it).
//!
//! Incremental: `team_pushed_sessions` keeps, per team archive and publisher, each session's
//! signature ([`archive::TeamMark`] and its links' mark) and the last record id sent; a push
//! sends the sessions whose signature moved, and of those only the records after that id (and
//! the keyed records, revised in place). Each session goes in one server transaction, and the
//! local cursor moves only after it committed: a push killed anywhere leaves at most one session
//! to send again, and sending it again is an upsert of the same rows. A session pushed before
//! and forgotten here since is deleted from the team archive by the next push. Two pushes as the same
//! role at once are refused (a session advisory lock); teammates' pushes touch disjoint rows.

use rusqlite::{Connection, OptionalExtension, params};
use serde::{Deserialize, Serialize};
use tokio_postgres::types::ToSql;

use super::conn::Conn;
use super::schema;
use super::server::Server;
use crate::archive::redact::Redactor;
use crate::archive::store as archive;
use crate::error::{Error, ErrorKind, Result};
use crate::git::store as git;
use crate::recall::store as recall;

/// A text field longer than this (bytes, after redaction) is cut, and its record marked `cut`.
pub const FIELD_CAP: usize = 64 * 1024;
/// Records per server statement.
const BATCH: usize = 1000;

/// What a push did.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct TeamPushReport {
    /// The team archive, without credentials.
    pub server: String,
    /// The role the rows were pushed as: their owner on the server.
    pub publisher: String,
    pub sessions_pushed: u32,
    pub sessions_unchanged: u32,
    /// Sessions pushed before and gone from this archive since (`cairn forget`): deleted from
    /// the team archive with their turns, records and links.
    pub sessions_withdrawn: u32,
    /// Sessions not sent because the final scan still found a secret after redaction.
    pub sessions_refused: Vec<String>,
    pub turns_pushed: u64,
    pub records_pushed: u64,
    pub links_pushed: u64,
    pub entries_pushed: u32,
    /// Entries sent before and no longer trusted here: deleted from the team archive.
    pub entries_withdrawn: u32,
}

/// Progress: sessions done out of those to send.
pub type Progress<'a> = &'a mut dyn FnMut(u32, u32);

/// Push the archive on `conn` to `server`.
pub fn push(
    conn: &Connection,
    server: &Server,
    home: Option<&str>,
    now: &str,
    progress: Progress<'_>,
) -> Result<TeamPushReport> {
    let mut client = server.connect(false)?;
    let meta = schema::for_push(server, &mut client)?;
    let publisher: String = client
        .query_one("SELECT current_user::text", &[])
        .and_then(|r| Ok(r.try_get(0)?))
        .map_err(|e| server.error(e, "cannot read the current user"))?;
    let locked: bool = client
        .query_one(
            "SELECT pg_catalog.pg_try_advisory_lock(pg_catalog.hashtext('cairn-push'), pg_catalog.hashtext(current_user))",
            &[],
        )
        .and_then(|r| Ok(r.try_get(0)?))
        .map_err(|e| server.error(e, "cannot take the push lock"))?;
    if !locked {
        return Err(server.fail(
            ErrorKind::Locked,
            format!("another push as {publisher} is running"),
            Some("wait for it to finish, then push again".into()),
        ));
    }
    mirror(
        conn,
        server,
        &mut client,
        meta,
        publisher,
        home,
        now,
        progress,
    )
    .map_err(resumable)
}

/// A push that stopped on the way (the server went away, a statement failed) kept what it sent:
/// every session is sent in a transaction of its own and recorded here once committed.
fn resumable(e: Error) -> Error {
    match e {
        Error::Team {
            server,
            message,
            kind: kind @ (ErrorKind::Unavailable | ErrorKind::External | ErrorKind::Busy),
            hint,
            sql,
        } => Error::Team {
            server,
            message,
            kind,
            sql,
            hint: Some(format!(
                "{}the sessions sent before it are kept: `cairn team push` again sends the rest",
                hint.map(|h| format!("{h}; ")).unwrap_or_default()
            )),
        },
        other => other,
    }
}

/// Everything after the connection and the lock: withdraw, send what moved, then the entries.
#[allow(clippy::too_many_arguments)]
fn mirror(
    conn: &Connection,
    server: &Server,
    client: &mut Conn,
    meta: schema::Meta,
    publisher: String,
    home: Option<&str>,
    now: &str,
    progress: Progress<'_>,
) -> Result<TeamPushReport> {
    let mut report = TeamPushReport {
        server: server.display().to_owned(),
        publisher: publisher.clone(),
        ..TeamPushReport::default()
    };
    let cursor = Cursor {
        archive: meta.archive_id,
        publisher,
    };
    // Where the server can hold a session's repository, each is sent; a session pushed before
    // the column came gets it below, with no other row sent again.
    let with_repo = schema::repo_column(server, client, true)?;
    let mut identities = Identities::default();
    let db = crate::store::err_in(conn);

    // Which sessions moved since the last push, and which are gone from here.
    let marks = archive::team_marks(conn).map_err(db)?;
    let here: std::collections::HashSet<&str> =
        marks.iter().map(|m| m.session_key.as_str()).collect();
    for key in cursor.session_keys(conn).map_err(db)? {
        if here.contains(key.as_str()) {
            continue;
        }
        client
            .execute(
                "DELETE FROM cairn.sessions WHERE publisher = current_user AND session_key = $1",
                &[&key],
            )
            .map_err(|e| server.error(e, &format!("cannot withdraw session {key}")))?;
        cursor.forgot_session(conn, &key).map_err(db)?;
        report.sessions_withdrawn += 1;
    }
    let mut todo = Vec::new();
    // Sessions of which only the repository is new (the column came since their last push):
    // one statement per thousand, not a transaction each.
    let mut moved = Vec::new();
    for mark in marks {
        let links = git::links_mark(conn, mark.id).map_err(db)?;
        let base = format!("{}|{}|{links}", mark.signature, mark.max_record_id);
        let last = cursor.session(conn, &mark.session_key).map_err(db)?;
        let (signature, repo) = match with_repo {
            true => {
                // A repository none of whose worktrees is on disk now (or a clone made
                // shallow since) keeps the one sent: unknown is not "none".
                let repo = identities
                    .of(conn, mark.repo_id)
                    .map_err(db)?
                    .or_else(|| last.as_ref().and_then(|(sig, _)| sent_repo(sig)))
                    .map(str::to_owned);
                (
                    format!("repo:{}|{base}", repo.as_deref().unwrap_or("-")),
                    repo,
                )
            }
            false => (base.clone(), None),
        };
        match last {
            Some((sig, _)) if sig == signature => report.sessions_unchanged += 1,
            Some((sig, after)) if with_repo && only_repo_differs(&sig, &base) => {
                moved.push((mark.session_key, repo, signature, after));
            }
            last => todo.push((mark, signature, last.map_or(0, |(_, id)| id), repo)),
        }
    }
    for chunk in moved.chunks(BATCH) {
        send_repos(server, client, chunk)?;
        for (key, _, signature, after) in chunk {
            cursor
                .sent_session(conn, key, signature, *after, now)
                .map_err(db)?;
        }
        report.sessions_pushed += u32::try_from(chunk.len()).unwrap_or(u32::MAX);
    }
    let total = u32::try_from(todo.len()).unwrap_or(u32::MAX);
    let redactor = Redactor::global();
    for (done, (mark, signature, after, repo)) in todo.into_iter().enumerate() {
        progress(u32::try_from(done).unwrap_or(u32::MAX), total);
        let root = match mark.repo_id {
            Some(repo) => git::repo_root(conn, repo).map_err(db)?,
            None => None,
        };
        let mut out = Outbound::new(redactor, root.as_deref(), home);
        let mut batch = SessionBatch::read(conn, &mut out, mark.id, after).map_err(db)?;
        batch.repo = with_repo.then_some(repo);
        if let Some(rule) = out.leftover() {
            tracing::warn!(
                "team push: session {} not sent: the final scan still finds a {rule}",
                mark.session_key
            );
            report.sessions_refused.push(mark.session_key.clone());
            continue;
        }
        batch.send(server, client, &mut report)?;
        cursor
            .sent_session(conn, &mark.session_key, &signature, mark.max_record_id, now)
            .map_err(db)?;
        report.sessions_pushed += 1;
    }
    progress(total, total);
    push_entries(conn, server, client, &cursor, redactor, home, &mut report)?;
    cursor.finished(conn, &report, now).map_err(db)?;
    Ok(report)
}

/// The last finished push to a team archive (Settings → Team).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct LastPush {
    /// The team archive's id (`cairn.meta.archive_id` on the server), not its address.
    pub archive: String,
    pub publisher: String,
    pub finished_at: String,
    pub sessions_pushed: u32,
    pub sessions_unchanged: u32,
    pub sessions_withdrawn: u32,
    pub sessions_refused: u32,
    pub records_pushed: u64,
    pub entries_pushed: u32,
    /// Sessions of this archive the team archive holds as pushed by `publisher`.
    pub sessions_on_server: u32,
}

/// The last finished push from this archive: to `archive` when given, else to any.
pub fn last_push(conn: &Connection, archive: Option<&str>) -> rusqlite::Result<Option<LastPush>> {
    conn.prepare_cached(
        "SELECT p.archive, p.publisher, p.finished_at, p.sessions_pushed, p.sessions_unchanged,
                p.sessions_withdrawn, p.sessions_refused, p.records_pushed, p.entries_pushed,
                (SELECT count(*) FROM team_pushed_sessions s
                 WHERE s.archive = p.archive AND s.publisher = p.publisher)
         FROM team_pushes p WHERE ?1 IS NULL OR p.archive = ?1
         ORDER BY p.finished_at DESC LIMIT 1",
    )?
    .query_row([archive], |r| {
        Ok(LastPush {
            archive: r.get(0)?,
            publisher: r.get(1)?,
            finished_at: r.get(2)?,
            sessions_pushed: r.get(3)?,
            sessions_unchanged: r.get(4)?,
            sessions_withdrawn: r.get(5)?,
            sessions_refused: r.get(6)?,
            records_pushed: u64::try_from(r.get::<_, i64>(7)?).unwrap_or(0),
            entries_pushed: r.get(8)?,
            sessions_on_server: r.get(9)?,
        })
    })
    .optional()
}

/// Where the push has got to on one team archive, as one publisher (local tables of migrations 0021 and 0024).
struct Cursor {
    archive: String,
    publisher: String,
}

impl Cursor {
    fn finished(&self, conn: &Connection, r: &TeamPushReport, now: &str) -> rusqlite::Result<()> {
        conn.prepare_cached(
            "INSERT OR REPLACE INTO team_pushes (archive, publisher, finished_at, sessions_pushed,
                 sessions_unchanged, sessions_withdrawn, sessions_refused, records_pushed, entries_pushed)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
        )?
        .execute(params![
            self.archive,
            self.publisher,
            now,
            r.sessions_pushed,
            r.sessions_unchanged,
            r.sessions_withdrawn,
            u32::try_from(r.sessions_refused.len()).unwrap_or(u32::MAX),
            i64::try_from(r.records_pushed).unwrap_or(i64::MAX),
            r.entries_pushed,
        ])?;
        Ok(())
    }

    fn session(&self, conn: &Connection, key: &str) -> rusqlite::Result<Option<(String, i64)>> {
        conn.prepare_cached(
            "SELECT signature, last_record_id FROM team_pushed_sessions
             WHERE archive = ?1 AND publisher = ?2 AND session_key = ?3",
        )?
        .query_row(params![self.archive, self.publisher, key], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })
        .optional()
    }

    fn sent_session(
        &self,
        conn: &Connection,
        key: &str,
        signature: &str,
        last_record_id: i64,
        now: &str,
    ) -> rusqlite::Result<()> {
        conn.prepare_cached(
            "INSERT INTO team_pushed_sessions (archive, publisher, session_key, signature, last_record_id, pushed_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)
             ON CONFLICT (archive, publisher, session_key) DO UPDATE SET
                 signature = excluded.signature, last_record_id = excluded.last_record_id,
                 pushed_at = excluded.pushed_at",
        )?
        .execute(params![self.archive, self.publisher, key, signature, last_record_id, now])?;
        Ok(())
    }

    fn session_keys(&self, conn: &Connection) -> rusqlite::Result<Vec<String>> {
        conn.prepare_cached(
            "SELECT session_key FROM team_pushed_sessions WHERE archive = ?1 AND publisher = ?2",
        )?
        .query_map(params![self.archive, self.publisher], |r| r.get(0))?
        .collect()
    }

    fn forgot_session(&self, conn: &Connection, key: &str) -> rusqlite::Result<()> {
        conn.prepare_cached(
            "DELETE FROM team_pushed_sessions WHERE archive = ?1 AND publisher = ?2 AND session_key = ?3",
        )?
        .execute(params![self.archive, self.publisher, key])?;
        Ok(())
    }

    fn entries(&self, conn: &Connection) -> rusqlite::Result<Vec<(String, String)>> {
        conn.prepare_cached(
            "SELECT entry_id, updated_at FROM team_pushed_entries WHERE archive = ?1 AND publisher = ?2",
        )?
        .query_map(params![self.archive, self.publisher], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect()
    }

    fn sent_entry(
        &self,
        conn: &Connection,
        id: &str,
        updated_at: Option<&str>,
    ) -> rusqlite::Result<()> {
        match updated_at {
            Some(at) => conn
                .prepare_cached(
                    "INSERT INTO team_pushed_entries (archive, publisher, entry_id, updated_at)
                     VALUES (?1, ?2, ?3, ?4)
                     ON CONFLICT (archive, publisher, entry_id) DO UPDATE SET updated_at = excluded.updated_at",
                )?
                .execute(params![self.archive, self.publisher, id, at])?,
            None => conn
                .prepare_cached(
                    "DELETE FROM team_pushed_entries WHERE archive = ?1 AND publisher = ?2 AND entry_id = ?3",
                )?
                .execute(params![self.archive, self.publisher, id])?,
        };
        Ok(())
    }
}

/// The outbound redactor with a session's repository root, and what its final scan found.
struct Outbound<'a> {
    redactor: &'a Redactor,
    root: Option<&'a str>,
    home: Option<&'a str>,
    leftover: Option<&'static str>,
    /// Whether the last [`Outbound::text`] was cut at [`FIELD_CAP`].
    cut: bool,
}

impl<'a> Outbound<'a> {
    fn new(redactor: &'a Redactor, root: Option<&'a str>, home: Option<&'a str>) -> Outbound<'a> {
        Outbound {
            redactor,
            root,
            home,
            leftover: None,
            cut: false,
        }
    }

    /// `s` as it may leave: redacted, cut at [`FIELD_CAP`], and scanned once more.
    fn text(&mut self, s: &str) -> String {
        let mut findings = Vec::new();
        let mut t = self
            .redactor
            .outbound_text(s, self.root, self.home, &mut findings);
        self.cut = t.len() > FIELD_CAP;
        if self.cut {
            let mut end = FIELD_CAP;
            while !t.is_char_boundary(end) {
                end -= 1;
            }
            t.truncate(end);
        }
        if self.leftover.is_none()
            && let Some(f) = self.redactor.scan_text(&t).first()
        {
            self.leftover = Some(f.rule);
        }
        t
    }

    fn opt(&mut self, s: Option<&str>) -> Option<String> {
        s.map(|s| self.text(s))
    }

    fn leftover(&self) -> Option<&'static str> {
        self.leftover
    }
}

/// Whether a session's last pushed signature `sig` is its signature now but for the
/// repository in front (`repo:<id or ->|`, or none before the column came).
fn only_repo_differs(sig: &str, base: &str) -> bool {
    sig.strip_suffix(base).is_some_and(|front| {
        front.is_empty()
            || front
                .strip_prefix("repo:")
                .and_then(|f| f.strip_suffix('|'))
                .is_some_and(|id| id == "-" || id.bytes().all(|b| b.is_ascii_hexdigit()))
    })
}

/// The repository a session's last signature sent (`repo:<id>|…`), if it named one.
fn sent_repo(sig: &str) -> Option<&str> {
    let (id, _) = sig.strip_prefix("repo:")?.split_once('|')?;
    (id.len() >= 40 && id.bytes().all(|b| b.is_ascii_hexdigit())).then_some(id)
}

/// Set the repository of sessions pushed before (key, repository) in one transaction.
fn send_repos(
    server: &Server,
    client: &mut Conn,
    moved: &[(String, Option<String>, String, i64)],
) -> Result<()> {
    let keys: Vec<&str> = moved.iter().map(|(k, ..)| k.as_str()).collect();
    let repos: Vec<Option<&str>> = moved.iter().map(|(_, r, ..)| r.as_deref()).collect();
    client
        .execute(
            "UPDATE cairn.sessions s SET repo = u.repo
             FROM unnest($1::text[], $2::text[]) AS u(key, repo)
             WHERE s.publisher = current_user AND s.session_key = u.key",
            &[&keys, &repos],
        )
        .map_err(|e| server.error(e, "cannot set the sessions' repository"))?;
    Ok(())
}

/// Each repository's identity ([`crate::git::repo::Repo::identity`]), found once a push: by
/// the first of its worktrees still on disk; `None` when none is, or it has none.
#[derive(Default)]
struct Identities(std::collections::HashMap<i64, Option<String>>);

impl Identities {
    fn of(&mut self, conn: &Connection, repo: Option<i64>) -> rusqlite::Result<Option<&str>> {
        let Some(repo) = repo else {
            return Ok(None);
        };
        let found = match self.0.entry(repo) {
            std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
            std::collections::hash_map::Entry::Vacant(e) => e.insert(
                git::family_roots(conn, repo)?
                    .iter()
                    .map(std::path::Path::new)
                    .filter(|root| root.is_dir())
                    .find_map(|root| {
                        // Still this worktree: a folder whose `.git` went finds the
                        // repository around it (a home's dotfiles), which is another.
                        crate::git::repo::Repo::discover(root)
                            .ok()
                            .filter(|r| same_dir(&r.root, root))
                    })
                    .and_then(|r| r.identity()),
            ),
        };
        Ok(found.as_deref())
    }
}

fn same_dir(a: &std::path::Path, b: &std::path::Path) -> bool {
    a == b
        || matches!(
            (std::fs::canonicalize(a), std::fs::canonicalize(b)),
            (Ok(x), Ok(y)) if x == y
        )
}

/// One session's rows, redacted, ready to send.
struct SessionBatch {
    session: archive::TeamSessionRow,
    /// The session's repository, when the server has the column: `Some(None)` sends none.
    repo: Option<Option<String>>,
    turns: Vec<archive::TeamTurnRow>,
    records: Records,
    links: Vec<git::TeamLink>,
}

/// Records as columns, the shape `unnest` takes them in.
#[derive(Default)]
struct Records {
    ordinal: Vec<i64>,
    turn_index: Vec<Option<i64>>,
    ts: Vec<Option<String>>,
    kind: Vec<String>,
    role: Vec<Option<String>>,
    body: Vec<Option<String>>,
    tool_name: Vec<Option<String>>,
    tool_kind: Vec<Option<String>>,
    tool_input: Vec<Option<String>>,
    exit_code: Vec<Option<i64>>,
    outcome: Vec<Option<String>>,
    file_paths: Vec<Option<String>>,
    retracted: Vec<bool>,
    cut: Vec<bool>,
}

impl SessionBatch {
    fn read(
        conn: &Connection,
        out: &mut Outbound<'_>,
        session: i64,
        after: i64,
    ) -> rusqlite::Result<SessionBatch> {
        let mut s = archive::team_session(conn, session)?;
        s.title = out.opt(s.title.as_deref());
        s.project = out.opt(s.project.as_deref());
        s.cwd = out.opt(s.cwd.as_deref());
        s.git_branch = out.opt(s.git_branch.as_deref());
        s.model = out.opt(s.model.as_deref());
        let mut turns = archive::team_turns(conn, session)?;
        for t in &mut turns {
            t.preview = out.opt(t.preview.as_deref());
        }
        let mut records = Records::default();
        for r in archive::team_records(conn, session, after)? {
            let body = out.opt(r.text.as_deref());
            let mut cut = out.cut;
            let tool_input = out.opt(r.tool_input.as_deref());
            cut |= out.cut;
            records.ordinal.push(r.ordinal);
            records.turn_index.push(r.turn_index);
            records.ts.push(r.timestamp);
            records.kind.push(r.kind);
            records.role.push(r.role);
            records.body.push(body);
            records.tool_name.push(out.opt(r.tool_name.as_deref()));
            records.tool_kind.push(r.tool_kind);
            records.tool_input.push(tool_input);
            records.exit_code.push(r.exit_code);
            records.outcome.push(r.outcome);
            records.file_paths.push(out.opt(r.file_paths.as_deref()));
            records.retracted.push(r.retracted);
            records.cut.push(cut);
        }
        let mut links = git::team_links(conn, session)?;
        for l in &mut links {
            l.target_key = out.text(&l.target_key);
        }
        Ok(SessionBatch {
            session: s,
            repo: None,
            turns,
            records,
            links,
        })
    }

    /// Send in one transaction: the session upserted, its turns upserted, new records upserted
    /// in batches, its links replaced.
    fn send(&self, server: &Server, client: &mut Conn, report: &mut TeamPushReport) -> Result<()> {
        let key = &self.session.session_key;
        let err = |e| server.error(e, &format!("cannot push session {key}"));
        let mut tx = client.transaction().map_err(err)?;
        let s = &self.session;
        tx.execute(
            "INSERT INTO cairn.sessions (publisher, session_key, agent, parent_key, relation, title,
                 project, cwd, git_branch, model, started_at, updated_at, record_count, turn_count, pushed_at)
             VALUES (current_user, $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, now())
             ON CONFLICT (publisher, session_key) DO UPDATE SET
                 agent = EXCLUDED.agent, parent_key = EXCLUDED.parent_key, relation = EXCLUDED.relation,
                 title = EXCLUDED.title, project = EXCLUDED.project, cwd = EXCLUDED.cwd,
                 git_branch = EXCLUDED.git_branch, model = EXCLUDED.model,
                 started_at = EXCLUDED.started_at, updated_at = EXCLUDED.updated_at,
                 record_count = EXCLUDED.record_count, turn_count = EXCLUDED.turn_count,
                 pushed_at = now()",
            &[
                key, &s.agent, &s.parent_key, &s.relation, &s.title, &s.project, &s.cwd,
                &s.git_branch, &s.model, &s.started_at, &s.updated_at, &s.record_count, &s.turn_count,
            ],
        )
        .map_err(err)?;
        if let Some(repo) = &self.repo {
            tx.execute(
                "UPDATE cairn.sessions SET repo = $2 WHERE publisher = current_user AND session_key = $1",
                &[key, repo],
            )
            .map_err(err)?;
        }

        let t = &self.turns;
        let col = |f: fn(&archive::TeamTurnRow) -> i64| t.iter().map(f).collect::<Vec<i64>>();
        let opt = |f: fn(&archive::TeamTurnRow) -> Option<String>| {
            t.iter().map(f).collect::<Vec<Option<String>>>()
        };
        let turn_keys: Vec<String> = t.iter().map(|t| t.turn_key.clone()).collect();
        let params: [&(dyn ToSql + Sync); 10] = [
            key,
            &col(|t| t.turn_index),
            &turn_keys,
            &col(|t| t.first_ordinal),
            &col(|t| t.last_ordinal),
            &col(|t| t.record_count),
            &col(|t| t.tool_call_count),
            &opt(|t| t.started_at.clone()),
            &opt(|t| t.ended_at.clone()),
            &opt(|t| t.preview.clone()),
        ];
        tx.execute(
            "INSERT INTO cairn.turns (publisher, session_key, turn_index, turn_key, first_ordinal,
                 last_ordinal, record_count, tool_call_count, started_at, ended_at, preview)
             SELECT current_user, $1, * FROM unnest($2::int8[], $3::text[], $4::int8[], $5::int8[],
                 $6::int8[], $7::int8[], $8::text[], $9::text[], $10::text[])
             ON CONFLICT (publisher, session_key, turn_index) DO UPDATE SET
                 turn_key = EXCLUDED.turn_key, first_ordinal = EXCLUDED.first_ordinal,
                 last_ordinal = EXCLUDED.last_ordinal, record_count = EXCLUDED.record_count,
                 tool_call_count = EXCLUDED.tool_call_count, started_at = EXCLUDED.started_at,
                 ended_at = EXCLUDED.ended_at, preview = EXCLUDED.preview",
            &params,
        )
        .map_err(err)?;
        report.turns_pushed += t.len() as u64;

        let r = &self.records;
        let mut at = 0;
        while at < r.ordinal.len() {
            let end = (at + BATCH).min(r.ordinal.len());
            let range = at..end;
            let params: [&(dyn ToSql + Sync); 15] = [
                key,
                &&r.ordinal[range.clone()],
                &&r.turn_index[range.clone()],
                &&r.ts[range.clone()],
                &&r.kind[range.clone()],
                &&r.role[range.clone()],
                &&r.body[range.clone()],
                &&r.tool_name[range.clone()],
                &&r.tool_kind[range.clone()],
                &&r.tool_input[range.clone()],
                &&r.exit_code[range.clone()],
                &&r.outcome[range.clone()],
                &&r.file_paths[range.clone()],
                &&r.retracted[range.clone()],
                &&r.cut[range.clone()],
            ];
            tx.execute(
                "INSERT INTO cairn.records (publisher, session_key, ordinal, turn_index, ts, kind, role,
                     body, tool_name, tool_kind, tool_input, exit_code, outcome, file_paths, retracted, cut)
                 SELECT current_user, $1, * FROM unnest($2::int8[], $3::int8[], $4::text[], $5::text[],
                     $6::text[], $7::text[], $8::text[], $9::text[], $10::text[], $11::int8[], $12::text[],
                     $13::text[], $14::bool[], $15::bool[])
                 ON CONFLICT (publisher, session_key, ordinal) DO UPDATE SET
                     turn_index = EXCLUDED.turn_index, ts = EXCLUDED.ts, kind = EXCLUDED.kind,
                     role = EXCLUDED.role, body = EXCLUDED.body, tool_name = EXCLUDED.tool_name,
                     tool_kind = EXCLUDED.tool_kind, tool_input = EXCLUDED.tool_input,
                     exit_code = EXCLUDED.exit_code, outcome = EXCLUDED.outcome,
                     file_paths = EXCLUDED.file_paths, retracted = EXCLUDED.retracted, cut = EXCLUDED.cut",
                &params,
            )
            .map_err(err)?;
            at = end;
        }
        report.records_pushed += r.ordinal.len() as u64;
        // A session read again (`cairn reindex`) can end sooner than it did: the mirror keeps
        // no turn or record past its end.
        tx.execute(
            "DELETE FROM cairn.turns WHERE publisher = current_user AND session_key = $1
                 AND turn_index >= $2",
            &[key, &s.turn_count],
        )
        .map_err(err)?;
        tx.execute(
            "DELETE FROM cairn.records WHERE publisher = current_user AND session_key = $1
                 AND ordinal >= $2",
            &[key, &s.next_ordinal],
        )
        .map_err(err)?;

        tx.execute(
            "DELETE FROM cairn.links WHERE publisher = current_user AND session_key = $1",
            &[key],
        )
        .map_err(err)?;
        let l = &self.links;
        let params: [&(dyn ToSql + Sync); 9] = [
            key,
            &l.iter().map(|l| l.target_kind.clone()).collect::<Vec<_>>(),
            &l.iter().map(|l| l.target_key.clone()).collect::<Vec<_>>(),
            &l.iter().map(|l| l.pr_number).collect::<Vec<_>>(),
            &l.iter().map(|l| l.evidence.clone()).collect::<Vec<_>>(),
            &l.iter().map(|l| l.strong).collect::<Vec<_>>(),
            &l.iter().map(|l| l.confidence).collect::<Vec<_>>(),
            &l.iter().map(|l| l.ordinal).collect::<Vec<_>>(),
            &l.iter().map(|l| l.commit_id.clone()).collect::<Vec<_>>(),
        ];
        tx.execute(
            "INSERT INTO cairn.links (publisher, session_key, target_kind, target_key, pr_number,
                 evidence, strong, confidence, ordinal, commit_id)
             SELECT current_user, $1, * FROM unnest($2::text[], $3::text[], $4::int8[], $5::text[],
                 $6::bool[], $7::float8[], $8::int8[], $9::text[])",
            &params,
        )
        .map_err(err)?;
        report.links_pushed += l.len() as u64;
        tx.commit().map_err(err)
    }
}

/// Send the trusted entries changed since the last push; take back those no longer trusted.
fn push_entries(
    conn: &Connection,
    server: &Server,
    client: &mut Conn,
    cursor: &Cursor,
    redactor: &Redactor,
    home: Option<&str>,
    report: &mut TeamPushReport,
) -> Result<()> {
    let db = crate::store::err_in(conn);
    let sent: std::collections::HashMap<String, String> =
        cursor.entries(conn).map_err(db)?.into_iter().collect();
    let trusted = recall::trusted_marks(conn).map_err(db)?;
    let trusted_ids: std::collections::HashSet<&str> =
        trusted.iter().map(|(id, _)| id.as_str()).collect();
    for (id, updated_at) in &trusted {
        if sent.get(id) == Some(updated_at) {
            continue;
        }
        let Some(e) = recall::get(conn, id).map_err(db)? else {
            continue;
        };
        let mut out = Outbound::new(redactor, None, home);
        let title = out.text(&e.title);
        let body = out.text(&e.body);
        let project = out.text(&e.project);
        let branch = out.text(&e.git_branch);
        if let Some(rule) = out.leftover() {
            tracing::warn!("team push: entry {id} not sent: the final scan still finds a {rule}");
            continue;
        }
        client
            .execute(
                "INSERT INTO cairn.recall_entries (publisher, entry_id, entry_type, scope, title, body,
                     project, git_branch, agent, session_key, updated_at)
                 VALUES (current_user, $1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
                 ON CONFLICT (publisher, entry_id) DO UPDATE SET
                     entry_type = EXCLUDED.entry_type, scope = EXCLUDED.scope, title = EXCLUDED.title,
                     body = EXCLUDED.body, project = EXCLUDED.project, git_branch = EXCLUDED.git_branch,
                     agent = EXCLUDED.agent, session_key = EXCLUDED.session_key,
                     updated_at = EXCLUDED.updated_at",
                &[
                    id,
                    &e.entry_type.as_str(),
                    &e.scope.as_str(),
                    &title,
                    &body,
                    &project,
                    &branch,
                    &e.agent,
                    &e.source_session_key,
                    updated_at,
                ],
            )
            .map_err(|err| server.error(err, &format!("cannot push entry {id}")))?;
        cursor.sent_entry(conn, id, Some(updated_at)).map_err(db)?;
        report.entries_pushed += 1;
    }
    for id in sent.keys().filter(|id| !trusted_ids.contains(id.as_str())) {
        client
            .execute(
                "DELETE FROM cairn.recall_entries WHERE publisher = current_user AND entry_id = $1",
                &[id],
            )
            .map_err(|err| server.error(err, &format!("cannot withdraw entry {id}")))?;
        cursor.sent_entry(conn, id, None).map_err(db)?;
        report.entries_withdrawn += 1;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{only_repo_differs, sent_repo};

    /// Only a repository in front, or none, counts as "only the repository moved": a title
    /// that happens to hold `repo:` changes the base, never the front.
    #[test]
    fn only_a_repository_in_front_is_a_repository_change() {
        let base = "title|2026-01-01|main|4|2|9|0";
        assert!(only_repo_differs(base, base), "pushed before the column");
        assert!(only_repo_differs(&format!("repo:-|{base}"), base));
        assert!(only_repo_differs(&format!("repo:0a1b2c|{base}"), base));
        assert!(!only_repo_differs("title|2026-01-02|main|4|2|9|0", base));
        assert!(!only_repo_differs(&format!("x{base}"), base));
        assert!(!only_repo_differs(&format!("repo:zz|{base}"), base));
        assert!(!only_repo_differs(&format!("repo:a|b|{base}"), base));
        let titled = "repo:ab|x|2026|main|4|2|9|0";
        assert!(!only_repo_differs(titled, "x|2026|main|4|2|9|0|more"));
    }

    /// What a signature sent: a full commit id, never `-` or a title that starts like one.
    #[test]
    fn the_repository_a_signature_sent() {
        let id = "0123456789abcdef0123456789abcdef01234567";
        assert_eq!(sent_repo(&format!("repo:{id}|t|1")), Some(id));
        assert_eq!(sent_repo("repo:-|t|1"), None);
        assert_eq!(sent_repo("repo:abc|t|1"), None);
        assert_eq!(sent_repo(&format!("t|repo:{id}|1")), None);
        assert_eq!(sent_repo(&format!("repo:{id}")), None);
    }
}

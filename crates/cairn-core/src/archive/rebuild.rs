//! The archive rebuilt from its retained copies alone, when `cairn.db` is damaged or lost
//! (`cairn reindex --from-copies`; the facade's `rebuild` makes the new database and puts it in
//! place).
//!
//! The copies are the authority: each source's manifest ([`Manifest`], a frame in its copy)
//! says what the copies do not hold, and [`survey`] reads every one, naming and passing over
//! what cannot be trusted (not JSON, a field of the wrong type or value, a path with control
//! characters, an agent this build does not know, a copy with no manifest, a folder of no
//! agent); a manifest's session key is believed only when its own agent and ids make it
//! ([`derived_key`]). Its sessions are rebuilt one at a time by `capture::reindex::from_copies`,
//! which reads past damage in a copy to the frames after it.
//!
//! The archive's own rows that only the database held are carried over from the old one where
//! SQLite still reads them ([`carry`], [`carry_findings`], [`carry_published`]): the forget
//! tombstones (a forgotten session must not come back because the database was rebuilt), the
//! publishers of pulled transcripts, where redaction removed secrets, when this machine
//! published a session through git. The rooms above carry their own tables the same way, row
//! by row with [`copy_each`], and say what they leave behind ([`Carry`]). Migration 47
//! ([`describe_every_source`]) describes the copies of an archive from before manifests
//! existed.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use rusqlite::{Connection, OptionalExtension};

use super::Agent;
use super::capture::reindex;
use super::retain::{Manifest, ManifestSession, Retained};

/// One source to rebuild: its manifest and its copies by generation.
#[derive(Debug)]
pub struct Described {
    pub manifest: Manifest,
    pub copies: BTreeMap<u32, PathBuf>,
}

/// Something under `retained/` a rebuild passes over, and why.
#[derive(Debug, Clone)]
pub struct Passed {
    /// The file or folder (its path under the data dir).
    pub what: PathBuf,
    pub reason: String,
}

/// What the retained copies of a data dir can rebuild.
#[derive(Debug, Default)]
pub struct Survey {
    /// The sources, by session (all the sources of one session together), in the order they
    /// were first read.
    pub sessions: Vec<Vec<Described>>,
    pub passed: Vec<Passed>,
    /// Copies whose manifest names a session its own agent and ids do not make
    /// ([`derived_key`]): rebuilt as the session they do make, each named with why.
    pub rekeyed: Vec<Passed>,
    /// Bytes of copy to read.
    pub bytes: u64,
}

/// The session key a manifest's own agent and ids make, as capture makes one
/// (`capture::batch::identity`): a sub-agent's from its parent's id and its agent id, a
/// session's from the agent's own id, else from its transcript's path as the archive keeps
/// it. The manifest's agent is the copy's folder's ([`Manifest::problem`]).
pub fn derived_key(manifest: &Manifest) -> Option<String> {
    let agent = Agent::parse(&manifest.agent)?;
    let s = &manifest.session;
    let identity = if manifest.role == "subagent" {
        format!(
            "{}/subagents/agent-{}",
            s.id.as_deref().unwrap_or(&manifest.path),
            s.agent_id.as_deref().unwrap_or_default()
        )
    } else {
        s.id.clone().unwrap_or_else(|| manifest.path.clone())
    };
    Some(crate::keys::session_key(agent, identity.as_bytes()))
}

/// Read every manifest under `data_dir/retained`, grouping the sources by the session they
/// name.
pub fn survey(data_dir: &Path) -> crate::Result<Survey> {
    let inventory = Retained::new(data_dir).inventory()?;
    let mut out = Survey::default();
    out.passed.extend(
        inventory
            .strays
            .into_iter()
            .map(|(what, reason)| Passed { what, reason }),
    );
    let mut by_session: HashMap<String, Vec<Described>> = HashMap::new();
    for held in inventory.sources {
        let Some(newest) = held.copies.values().next_back().cloned() else {
            continue;
        };
        let mut manifest = match Retained::manifest_in(&held.copies, &held.agent, &held.source_key)
        {
            Ok(Some(Ok(m))) => m,
            Ok(Some(Err(reason))) => {
                out.passed.push(Passed {
                    what: newest,
                    reason,
                });
                continue;
            }
            Ok(None) => {
                out.passed.push(Passed {
                    what: newest,
                    reason: "no manifest in it says whose copy it is (a copy Cairn did not \
                             write, or one an older build wrote that migration 47 could not \
                             describe)"
                        .to_owned(),
                });
                continue;
            }
            Err(e) => {
                out.passed.push(Passed {
                    what: newest,
                    reason: e.to_string(),
                });
                continue;
            }
        };
        // A session key is believed only when the manifest's own agent and ids make it: a
        // key is a hash, so a manifest naming another agent's session (forged, or a copy from
        // elsewhere) cannot make it, and never takes that session's place. The copy is still
        // rebuilt, as the session its manifest does make (what a capture of its transcript
        // would have stored it as), and named: refusing it would lose lines that may be the
        // only copy left. Its claimed place in the archive's order is not believed either.
        if let Some(derived) = derived_key(&manifest)
            && derived != manifest.session.key
        {
            out.rekeyed.push(Passed {
                what: newest.clone(),
                reason: format!(
                    "its manifest names session {}, which its agent and ids do not make: \
                     rebuilt as session {derived}",
                    manifest.session.key
                ),
            });
            manifest.session.key = derived;
            manifest.session_row = None;
        }
        out.bytes += held
            .copies
            .values()
            .map(|c| std::fs::metadata(c).map_or(0, |m| m.len()))
            .sum::<u64>();
        by_session
            .entry(manifest.session.key.clone())
            .or_default()
            .push(Described {
                manifest,
                copies: held.copies,
            });
    }
    // Every key is made from its manifest's agent (above), so a session's sources are one
    // agent's: no copy of another agent's folder can claim a session and put its owner out.
    let mut sessions: Vec<Vec<Described>> = by_session.into_values().collect();
    for sources in &mut sessions {
        sources.sort_by(|a, b| {
            (&a.manifest.first_read, &a.manifest.path)
                .cmp(&(&b.manifest.first_read, &b.manifest.path))
        });
    }
    // In the order the archive made them (its rows', where the manifests say), then by when
    // they were first read.
    sessions.sort_by_cached_key(|s| {
        s.first().map(|d| {
            (
                s.iter()
                    .filter_map(|d| d.manifest.session_row)
                    .min()
                    .unwrap_or(i64::MAX),
                d.manifest.first_read.clone(),
                d.manifest.session.key.clone(),
            )
        })
    });
    out.sessions = sessions;
    Ok(out)
}

/// What [`carry`] took over of one kind of row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Carried {
    /// What the rows are, for a person.
    pub what: &'static str,
    pub rows: u64,
    /// Why the rest could not be read, when the damaged database stopped the copy.
    pub error: Option<String>,
}

impl Carried {
    /// `rows` of `what` carried, and the error that stopped the copy when one did.
    pub fn of(what: &'static str, (rows, error): (u64, Option<String>)) -> Carried {
        Carried { what, rows, error }
    }
}

/// What one room carried over from the old database (`<room>::…::carry_from`), and what it
/// left there, in plain words: a rebuild drops nothing without saying so.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Carry {
    pub carried: Vec<Carried>,
    /// What the old database held and the new one does not: how many, why, and what brings
    /// it back when something does.
    pub not_carried: Vec<String>,
}

/// The archive's tables a rebuild carries over, their columns, and what their rows are.
const CARRIED: &[(&str, &str, &str)] = &[
    (
        "forgotten_sources",
        "source_key, agent, allow_reimport, forgotten_at",
        "forget tombstones of transcript files",
    ),
    (
        "forgotten_sessions",
        "session_key, agent, forgotten_at",
        "forget tombstones of sessions",
    ),
    (
        "pulled_sources",
        "path, publisher, published_at, pulled_from",
        "publishers of pulled transcripts",
    ),
];

/// Copy the archive's rows that live only in the database from `old` (opened read-only, maybe
/// damaged) into `new`, table by table and row by row: what is read before a damaged page
/// stops the read is kept, and the error is named. Never fails.
pub fn carry(old: &Connection, new: &Connection) -> Vec<Carried> {
    CARRIED
        .iter()
        .map(|&(table, columns, what)| {
            let marks = (1..=columns.split(',').count())
                .map(|i| format!("?{i}"))
                .collect::<Vec<_>>()
                .join(", ");
            Carried::of(
                what,
                copy_each(
                    old,
                    &format!("SELECT {columns} FROM {table}"),
                    new,
                    &format!("INSERT OR IGNORE INTO {table} ({columns}) VALUES ({marks})"),
                ),
            )
        })
        .collect()
}

/// Run `write` on `new` with the values of each row `read` selects on `old`, in order, one row
/// at a time: what is read before a damaged page stops the read is written. Returns the rows
/// written and, when the copy stopped, why (as SQLite says it). The rooms' carries are made of
/// it, each over its own tables. Never fails.
pub fn copy_each(
    old: &Connection,
    read: &str,
    new: &Connection,
    write: &str,
) -> (u64, Option<String>) {
    let mut rows = 0;
    let copied = (|| -> rusqlite::Result<()> {
        let mut read = old.prepare(read)?;
        let n = read.column_count();
        let mut write = new.prepare(write)?;
        let mut found = read.query([])?;
        while let Some(row) = found.next()? {
            let values: Vec<rusqlite::types::Value> = (0..n)
                .map(|i| row.get(i))
                .collect::<rusqlite::Result<_>>()?;
            rows += write.execute(rusqlite::params_from_iter(values))? as u64;
        }
        Ok(())
    })();
    (rows, copied.err().map(|e| e.to_string()))
}

/// When this machine published its own sessions through git (`cairn publish`:
/// `sessions.published_at`), carried to the sessions rebuilt under the same keys: a forget of
/// one then still leaves the tombstone that makes `cairn publish` take its refs down. The
/// copies' manifests do not hold it. Never fails.
pub fn carry_published(old: &Connection, new: &Connection) -> Carried {
    Carried::of(
        "when this machine published its sessions through git (cairn publish)",
        copy_each(
            old,
            "SELECT session_key, published_at FROM sessions
             WHERE published_at IS NOT NULL AND publisher IS NULL",
            new,
            "UPDATE sessions SET published_at = ?2 WHERE session_key = ?1 AND publisher IS NULL",
        ),
    )
}

/// What redaction found where (rule and place, never the secret), carried from `old` for the
/// sources rebuilt in `new` (found by their keys: the row ids differ), row by row as far as
/// the old database reads; each session's count of them follows. Findings of a source not
/// rebuilt are dropped. Never fails.
pub fn carry_findings(old: &Connection, new: &Connection) -> Carried {
    let (rows, copied) = copy_each(
        old,
        "SELECT src.source_key, f.line_no, f.field, f.rule, f.confidence, f.start_byte,
                f.generation
         FROM secret_findings f JOIN sources src ON src.id = f.source_id",
        new,
        "INSERT OR IGNORE INTO secret_findings (session_id, source_id, line_no, field, rule,
            confidence, start_byte, generation)
         SELECT src.session_id, src.id, ?2, ?3, ?4, ?5, ?6, ?7
         FROM sources src WHERE src.source_key = ?1",
    );
    let counted = new.execute(
        "UPDATE sessions SET secret_count =
            (SELECT COUNT(*) FROM secret_findings f WHERE f.session_id = sessions.id)",
        [],
    );
    Carried {
        what: "where redaction removed secrets (rule and place)",
        rows,
        error: copied.or(counted.err().map(|e| e.to_string())),
    }
}

/// Every session of `old` (maybe damaged): row id to key, as far as it reads.
pub fn old_sessions(old: &Connection) -> rusqlite::Result<HashMap<i64, String>> {
    old.prepare("SELECT id, session_key FROM sessions")?
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect()
}

/// Each `(row id, session key)` of `old`'s sessions handed to `f` as read: those read before a
/// damaged page stops the read are handed over all the same.
pub fn each_session_key(old: &Connection, mut f: impl FnMut(i64, String)) -> rusqlite::Result<()> {
    let mut read = old.prepare("SELECT id, session_key FROM sessions")?;
    let mut rows = read.query([])?;
    while let Some(row) = rows.next()? {
        f(row.get(0)?, row.get(1)?);
    }
    Ok(())
}

/// The sources whose rows hold a redaction marker in their path or their session's facts (what
/// a reindex redacted, now or before the manifests followed the rows).
pub fn sources_with_marks(conn: &Connection) -> rusqlite::Result<Vec<i64>> {
    conn.prepare(
        "SELECT src.id FROM sources src JOIN sessions s ON s.id = src.session_id
         WHERE src.path || '|' || COALESCE(s.cwd, '') || '|' || COALESCE(s.title, '')
               || '|' || COALESCE(s.model, '') || '|' || COALESCE(s.git_branch, '')
               || '|' || COALESCE(s.provider, '') || '|'
               || COALESCE(s.tool_version, '') LIKE '%[REDACTED:%'",
    )?
    .query_map([], |r| r.get(0))?
    .collect()
}

/// The sources of the session with row id `session`.
pub fn sources_of_session(conn: &Connection, session: i64) -> rusqlite::Result<Vec<i64>> {
    conn.prepare_cached("SELECT id FROM sources WHERE session_id = ?1")?
        .query_map([session], |r| r.get(0))?
        .collect()
}

/// Whether the session with row id `session` was read from copies today's rules redact further
/// (`read_by = 0`).
pub fn redacted_further(conn: &Connection, session: i64) -> rusqlite::Result<bool> {
    conn.prepare_cached("SELECT read_by = 0 FROM sessions WHERE id = ?1")?
        .query_row([session], |r| r.get(0))
        .optional()
        .map(|r| r.unwrap_or(false))
}

/// A session row standing in for the forgotten session `key` (its key and agent, nothing
/// else), for a room that must treat what cites it as a forget does; `None` when no tombstone
/// names it. The caller deletes it with [`drop_stand_in`] in the same transaction.
pub fn stand_in_for_forgotten(
    conn: &Connection,
    key: &str,
    now: &str,
) -> rusqlite::Result<Option<i64>> {
    let made = conn.execute(
        "INSERT INTO sessions (session_key, agent, captured_at)
         SELECT session_key, agent, ?2 FROM forgotten_sessions WHERE session_key = ?1",
        rusqlite::params![key, now],
    )?;
    Ok((made == 1).then(|| conn.last_insert_rowid()))
}

/// Delete a row [`stand_in_for_forgotten`] made.
pub fn drop_stand_in(conn: &Connection, row: i64) -> rusqlite::Result<()> {
    conn.execute("DELETE FROM sessions WHERE id = ?1", [row])
        .map(drop)
}

/// The row of the session keyed `key`, when there is one.
pub fn session_row(conn: &Connection, key: &str) -> rusqlite::Result<Option<i64>> {
    conn.prepare_cached("SELECT id FROM sessions WHERE session_key = ?1")?
        .query_row([key], |r| r.get(0))
        .optional()
}

/// Every session's row, to queue for a relink once rebuilt, and the counts a report gives.
pub fn totals(conn: &Connection) -> rusqlite::Result<(u64, u64, u64, u64)> {
    conn.query_row(
        "SELECT (SELECT COUNT(*) FROM sessions), (SELECT COUNT(*) FROM sources),
                (SELECT COUNT(*) FROM records), (SELECT COUNT(*) FROM turns)",
        [],
        |r| {
            let n = |i| r.get::<_, i64>(i).map(|v| v.max(0) as u64);
            Ok((n(0)?, n(1)?, n(2)?, n(3)?))
        },
    )
}

/// A source as the archive's rows describe it: where its copies are, and the manifest they
/// are to hold ([`describe_every_source`], and a reindex's rewrite of a manifest after it
/// redacted the rows).
#[derive(Debug)]
pub(crate) struct ByRows {
    pub source: i64,
    pub agent: Agent,
    /// The current generation.
    pub generation: u32,
    /// How much of the current generation's copy the store committed.
    pub committed: u64,
    pub manifest: Manifest,
}

/// The rows a source's manifest is made from, `{first_read}` the time it was first read.
const BY_ROWS: &str = "SELECT src.agent, src.role, src.path, src.source_key, src.generation,
        s.session_key, src.id, src.retained_len, s.session_id, s.parent_key, s.relation,
        s.agent_id, {first_read}, s.cwd, s.title, s.model, s.git_branch, s.provider,
        s.tool_version, s.started_at, s.updated_at, s.cumulative_usage, s.id
    FROM sources src JOIN sessions s ON s.id = src.session_id";

/// The sources [`BY_ROWS`] reads, `first_read` (SQL) giving when each was first read, `tail`
/// (SQL) choosing and ordering them. A source of an agent this build does not know is left out.
fn by_rows(
    conn: &Connection,
    first_read: &str,
    tail: &str,
    params: impl rusqlite::Params,
) -> rusqlite::Result<Vec<ByRows>> {
    let sql = format!("{} {tail}", BY_ROWS.replace("{first_read}", first_read));
    let mut stmt = conn.prepare(&sql)?;
    let mut rows = stmt.query(params)?;
    let mut out = Vec::new();
    while let Some(r) = rows.next()? {
        let agent: String = r.get(0)?;
        let Some(agent) = Agent::parse(&agent) else {
            continue;
        };
        let (role, path, key): (String, String, String) = (r.get(1)?, r.get(2)?, r.get(3)?);
        let manifest = reindex::manifest_of(
            agent,
            &role,
            &path,
            &key,
            ManifestSession {
                key: r.get(5)?,
                id: r.get(8)?,
                parent_key: r.get(9)?,
                relation: r.get(10)?,
                agent_id: r.get(11)?,
                cwd: r.get(13)?,
                title: r.get(14)?,
                model: r.get(15)?,
                git_branch: r.get(16)?,
                provider: r.get(17)?,
                tool_version: r.get(18)?,
                started_at: r.get(19)?,
                updated_at: r.get(20)?,
                cumulative_usage: r.get(21)?,
            },
            &r.get::<_, String>(12)?,
            r.get(22)?,
        );
        out.push(ByRows {
            source: r.get(6)?,
            agent,
            generation: r.get::<_, i64>(4)?.clamp(0, i64::from(u32::MAX)) as u32,
            committed: r.get::<_, i64>(7)?.max(0) as u64,
            manifest,
        });
    }
    Ok(out)
}

/// The source at row `source` as its rows describe it now (first read when its session was:
/// a rewrite keeps the time its copy gives).
pub(crate) fn source_by_rows(conn: &Connection, source: i64) -> rusqlite::Result<Option<ByRows>> {
    Ok(by_rows(conn, "s.captured_at", "WHERE src.id = ?1", [source])?.pop())
}

/// Migration 47: the manifest of every source an older build retained, from its rows (the
/// session it belongs to now, first read when its first capture was), appended to its newest
/// copy (the current generation's committed length moving with it), where the copy's
/// committed bytes end ([`Retained::describe`]): an older generation's copy, or one whose row
/// records no length, has no committed length, and only a tail a crash cut off mid-frame is
/// cut from it; damage in it is kept, the manifest written after it. A source none of whose copies is there is passed over (a rebuild
/// could not read it anyway); a copy that cannot be written, or whose committed bytes end
/// inside a frame, is logged and passed over (the archive opens all the same; a rebuild names
/// the copy without a manifest). Running it again writes nothing new.
pub fn describe_every_source(conn: &Connection, data_dir: &Path) -> rusqlite::Result<u64> {
    let retained = Retained::new(data_dir);
    let first_read = "COALESCE((SELECT MIN(c.captured_at) FROM captures c
                                WHERE c.source_id = src.id), s.captured_at)";
    let mut described = Vec::new();
    for by in by_rows(conn, first_read, "ORDER BY src.id", [])? {
        let key = &by.manifest.source_key;
        let Some(newest) = (0..=by.generation)
            .rev()
            .find(|&g| retained.path(by.agent, key, g).exists())
        else {
            continue;
        };
        // Only the current generation's length is recorded (0: none); an older one's is not
        // known, and `describe` cuts nothing from it but a torn tail.
        let current = newest == by.generation;
        let committed = if current { by.committed } else { 0 };
        let copy = retained.path(by.agent, key, newest);
        match retained.describe(&copy, committed, &by.manifest) {
            Ok(Some(len)) if current => described.push((by.source, len)),
            Ok(_) => {}
            Err(e) => tracing::warn!("migration 47: no manifest for {key}: {e}"),
        }
    }
    let mut grown = conn.prepare("UPDATE sources SET retained_len = ?2 WHERE id = ?1")?;
    for (source, len) in &described {
        grown.execute(rusqlite::params![source, *len as i64])?;
    }
    let written = described.len() as u64;
    Ok(written)
}

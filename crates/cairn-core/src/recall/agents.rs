//! What agents tell Recall (through `cairn mcp`): proposed entries and feedback on entries they
//! used.
//!
//! A proposal is an ordinary `unreviewed_auto` entry, bound to evidence like an extracted one,
//! plus its provenance (agent, session, turn, the MCP server session and client) in
//! `recall_proposals`. It is never trusted until a person accepts it in the inbox. The same
//! proposal twice (same type, title and body once case and spacing are folded) is one entry.
//! Feedback (`helpful` or `wrong`) goes to `recall_feedback`, beside the query ledger.
//! Everything an agent sends is cleaned of control sequences and has its secrets redacted
//! before it is stored.

use rusqlite::{Connection, OptionalExtension, params};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::evidence;
use super::model::{Entry, EntryType, ReviewState, Scope, Status};
use super::store::{self, NewEntry};
use crate::archive::redact::Redactor;
use crate::archive::store::SessionFacts as SessionRow;
use crate::error::{Error, Result};

/// Longest title, body, trigger and note an agent may send (characters).
pub const MAX_TITLE: usize = 200;
pub const MAX_BODY: usize = 4000;
pub const MAX_TRIGGER: usize = 500;
pub const MAX_NOTE: usize = 1000;
/// At most this many evidence ranges per proposal, each at most this many records long.
pub const MAX_EVIDENCE: usize = 8;
pub const MAX_EVIDENCE_RECORDS: u32 = 200;

/// A range of records of an archived session (`cairn://session/<key>?record=N`, or N-M).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EvidenceRef {
    pub session: String,
    pub from: u32,
    pub to: u32,
}

/// Who is speaking: the agent, its own session and turn (as it knows them), and the MCP
/// server session and client that carried the call.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Speaker {
    pub agent: String,
    pub session: Option<String>,
    pub turn: Option<String>,
    pub server_session: String,
    pub client: String,
}

/// An entry an agent proposes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Proposal {
    pub entry_type: EntryType,
    pub scope: Option<Scope>,
    pub title: String,
    pub body: String,
    pub trigger: String,
    pub evidence: Vec<EvidenceRef>,
}

/// What became of a proposal.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Proposed {
    pub entry_id: String,
    /// True when the same proposal was already in the inbox (nothing new was written).
    pub duplicate: bool,
    pub review_state: ReviewState,
    /// Whether agents are served it as trusted (a duplicate of an entry a person accepted).
    pub trusted: bool,
}

/// Where an entry an agent proposed came from (the inbox shows it).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct ProposedBy {
    pub agent: String,
    /// The proposing session's key when it is in the archive, else what the agent called it.
    pub session_key: Option<String>,
    pub turn: Option<String>,
    /// `cairn://session/<key>` (with `?record=<first record of the turn>` when the turn is
    /// known), when the session is in the archive.
    pub link: Option<String>,
    /// The MCP client that sent it (`name version`, as the client said).
    pub client: String,
    pub proposed_at: String,
}

/// Cleaned, redacted, length-checked text from an agent. Empty stays empty.
fn agent_text(field: &str, text: &str, max: usize) -> Result<String> {
    let chars = crate::text::printable(text).trim().chars().count();
    if chars > max {
        return Err(Error::Invalid(format!(
            "`{field}` is {chars} characters; at most {max} are accepted"
        )));
    }
    let mut findings = Vec::new();
    Ok(Redactor::global()
        .redact_printable(text, field, &mut findings)
        .trim()
        .to_owned())
}

/// An agent-given identifier (session, turn, client, query id): one line, printable, at most
/// 200 chars, its secrets redacted (an agent may name itself or its session with anything).
pub(crate) fn agent_label(text: &str) -> String {
    // Redacted whole, then cut: a cut first could leave a secret's head the rules no longer
    // know.
    let redacted = Redactor::global().redact_printable(text, "label", &mut Vec::new());
    crate::text::one_line(&redacted, 200)
}

/// The same proposal is the same type, title and body, whatever the case and spacing.
fn dedupe_key(p: &Proposal, title: &str, body: &str) -> String {
    let mut h = Sha256::new();
    for part in [
        p.entry_type.as_str(),
        &crate::text::folded(title),
        &crate::text::folded(body),
    ] {
        h.update(part.as_bytes());
        h.update([0]);
    }
    hex::encode(h.finalize())
}

fn session_row(conn: &Connection, key_or_id: &str) -> Result<Option<SessionRow>> {
    crate::archive::store::session_facts(conn, key_or_id).map_err(crate::store::err_in(conn))
}

/// Store a proposal as an unreviewed entry with its provenance (or find the same one).
/// Call inside a transaction: nothing is written when any evidence range does not bind.
pub fn propose(conn: &Connection, p: &Proposal, who: &Speaker, now: &str) -> Result<Proposed> {
    let db = crate::store::err_in(conn);
    let title = agent_text("title", &p.title, MAX_TITLE)?;
    if crate::text::is_blank(&title) {
        return Err(Error::Invalid(
            "`title` is empty; give the entry a title".into(),
        ));
    }
    let body = agent_text("body", &p.body, MAX_BODY)?;
    if crate::text::is_blank(&body) {
        return Err(Error::Invalid(
            "`body` is empty; say what the entry claims".into(),
        ));
    }
    let trigger = agent_text("trigger", &p.trigger, MAX_TRIGGER)?;
    if p.evidence.is_empty() {
        return Err(Error::Invalid(
            "`evidence` is empty; cite at least one record (`cairn://session/<key>?record=N`) that supports the entry".into(),
        ));
    }
    if p.evidence.len() > MAX_EVIDENCE {
        return Err(Error::Invalid(format!(
            "`evidence` has {} ranges; at most {MAX_EVIDENCE} are accepted",
            p.evidence.len()
        )));
    }
    let mut bound = Vec::new();
    let mut first: Option<SessionRow> = None;
    for ev in &p.evidence {
        if ev.to < ev.from || ev.to - ev.from >= MAX_EVIDENCE_RECORDS {
            return Err(Error::Invalid(format!(
                "evidence records {}-{} of session {:?}: give an ascending range of at most {MAX_EVIDENCE_RECORDS} records",
                ev.from, ev.to, ev.session
            )));
        }
        let label = agent_label(&ev.session);
        let row = session_row(conn, &ev.session)?.ok_or_else(|| {
            Error::NotFound(format!(
                "session {label:?} (cited as evidence) is not in the archive; cite a session `search` or `skim` returned"
            ))
        })?;
        bound.extend(evidence::bind(
            conn,
            row.id,
            &row.key,
            ev.from,
            ev.to,
            &[],
            "",
        )?);
        first.get_or_insert(row);
    }
    let Some(first) = first else {
        return Err(Error::Invalid("`evidence` is empty".into()));
    };
    let key = dedupe_key(p, &title, &body);
    let existing: Option<String> = conn
        .prepare_cached("SELECT entry_id FROM recall_proposals WHERE dedupe_key = ?1")
        .map_err(db)?
        .query_row([&key], |r| r.get(0))
        .optional()
        .map_err(db)?;
    // The same proposal again is the entry it made, once its evidence is found to hold like
    // any proposal's (an address that names nothing is refused, not answered as a duplicate).
    if let Some(entry_id) = existing {
        let entry = store::get(conn, &entry_id).map_err(db)?;
        return Ok(Proposed {
            entry_id,
            duplicate: true,
            review_state: entry
                .as_ref()
                .map_or(ReviewState::UnreviewedAuto, |e| e.review_state),
            trusted: entry.as_ref().is_some_and(Entry::is_trusted),
        });
    }
    let proposer = who.session.as_deref().map(agent_label);
    let proposer_row = match &proposer {
        Some(s) => session_row(conn, s)?,
        None => None,
    };
    let agent = agent_label(&who.agent);
    let entry_id = format!("mcp-{}", &key[..16]);
    let entry = NewEntry {
        id: entry_id.clone(),
        entry_type: p.entry_type,
        scope: p.scope.unwrap_or(Scope::Project),
        status: Status::Accepted,
        review_state: ReviewState::UnreviewedAuto,
        title,
        body,
        trigger,
        confidence: None,
        uncertainty: String::new(),
        project: first.project,
        cwd: first.cwd,
        git_branch: first.branch,
        agent: if agent.is_empty() {
            first.agent
        } else {
            agent.clone()
        },
        source_session_id: Some(first.id),
        source_episode_id: String::new(),
        source_run_id: String::new(),
        extractor_method: "mcp".into(),
        model: String::new(),
        label: String::new(),
        transferable: false,
        provenance_ok: true,
        supersedes_entry_id: String::new(),
        evidence: bound,
    };
    store::insert(conn, &entry, now).map_err(db)?;
    conn.prepare_cached(
        "INSERT INTO recall_proposals (entry_id, agent, session_key, turn, server_session, client, dedupe_key, created_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
    )
    .map_err(db)?
    .execute(params![
        entry_id,
        agent,
        proposer_row.map(|r| r.key).or(proposer),
        who.turn.as_deref().map(agent_label),
        who.server_session,
        agent_label(&who.client),
        key,
        now
    ])
    .map_err(db)?;
    Ok(Proposed {
        entry_id,
        duplicate: false,
        review_state: ReviewState::UnreviewedAuto,
        trusted: false,
    })
}

/// Where an entry came from, when an agent proposed it.
pub fn proposed_by(conn: &Connection, entry_id: &str) -> Result<Option<ProposedBy>> {
    let db = crate::store::err_in(conn);
    type Row = (String, Option<String>, Option<String>, String, String);
    let row: Option<Row> = conn
        .prepare_cached(
            "SELECT agent, session_key, turn, client, created_at FROM recall_proposals WHERE entry_id = ?1",
        )
        .map_err(db)?
        .query_row([entry_id], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
        })
        .optional()
        .map_err(db)?;
    let Some((agent, session_key, turn, client, proposed_at)) = row else {
        return Ok(None);
    };
    let archived = match &session_key {
        Some(k) => session_row(conn, k)?,
        None => None,
    };
    let link = match archived {
        Some(s) => {
            let first_record = match &turn {
                Some(t) => first_record_of_turn(conn, s.id, t)?,
                None => None,
            };
            Some(match first_record {
                Some(n) => format!("cairn://session/{}?record={n}", s.key),
                None => format!("cairn://session/{}", s.key),
            })
        }
        None => None,
    };
    Ok(Some(ProposedBy {
        agent,
        session_key,
        turn,
        link,
        client,
        proposed_at,
    }))
}

fn first_record_of_turn(conn: &Connection, session: i64, turn: &str) -> Result<Option<u32>> {
    crate::archive::store::first_ordinal_of_turn(conn, session, turn)
        .map_err(crate::store::err_in(conn))
}

/// An agent's verdict on an entry it used.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    Helpful,
    Wrong,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Helpful => "helpful",
            Verdict::Wrong => "wrong",
        }
    }
}

/// Record feedback on an entry; returns the entry's feedback so far (helpful, wrong).
pub fn feedback(
    conn: &Connection,
    entry_id: &str,
    verdict: Verdict,
    note: &str,
    query_id: Option<&str>,
    who: &Speaker,
    now: &str,
) -> Result<(u32, u32)> {
    let db = crate::store::err_in(conn);
    if !store::exists(conn, entry_id).map_err(db)? {
        return Err(Error::NotFound(format!(
            "recall entry {:?}; give an id `recall_query` or `recall_brief` returned",
            agent_label(entry_id)
        )));
    }
    let note = agent_text("note", note, MAX_NOTE)?;
    if let Some(q) = query_id
        && !super::ledger::exists(conn, q).map_err(db)?
    {
        return Err(Error::Invalid(format!(
            "`query_id` {:?} is no query of this archive; give the `query_id` a `recall_query` or `recall_brief` answer returned, or leave it out",
            agent_label(q)
        )));
    }
    // One verdict per entry per server session: a second one replaces the first, so the
    // counts are of sessions, not of calls.
    conn.prepare_cached("DELETE FROM recall_feedback WHERE entry_id = ?1 AND server_session = ?2")
        .map_err(db)?
        .execute(params![entry_id, who.server_session])
        .map_err(db)?;
    conn.prepare_cached(
        "INSERT INTO recall_feedback (entry_id, verdict, note, query_id, agent, session_key, server_session, created_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
    )
    .map_err(db)?
    .execute(params![
        entry_id,
        verdict.as_str(),
        note,
        query_id.map(agent_label),
        agent_label(&who.agent),
        who.session.as_deref().map(agent_label),
        who.server_session,
        now
    ])
    .map_err(db)?;
    let f = feedback_counts(conn, Some(entry_id))?;
    Ok((f.helpful, f.wrong))
}

/// Agents' verdicts (`recall_feedback`, one per entry per server session), counted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct FeedbackCounts {
    pub helpful: u32,
    pub wrong: u32,
}

/// The feedback agents gave on `entry_id`, or on every entry with `None`.
pub fn feedback_counts(conn: &Connection, entry_id: Option<&str>) -> Result<FeedbackCounts> {
    let db = crate::store::err_in(conn);
    conn.prepare_cached(
        "SELECT COALESCE(SUM(verdict = 'helpful'), 0), COALESCE(SUM(verdict = 'wrong'), 0)
         FROM recall_feedback WHERE ?1 IS NULL OR entry_id = ?1",
    )
    .map_err(db)?
    .query_row([entry_id], |r| {
        Ok(FeedbackCounts {
            helpful: r.get::<_, i64>(0)?.max(0) as u32,
            wrong: r.get::<_, i64>(1)?.max(0) as u32,
        })
    })
    .map_err(db)
}

/// How agents used one entry: how often MCP queries showed it and packed it into a brief,
/// and how agents rated it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct AgentUsage {
    pub entry_id: String,
    pub title: String,
    pub shown: u32,
    pub packed: u32,
    pub helpful: u32,
    pub wrong: u32,
    /// The last time an agent was shown or rated it.
    pub last_used_at: Option<String>,
}

/// Entries agents used (through MCP) or rated, most recently used first.
pub fn usage(conn: &Connection, limit: u32) -> Result<Vec<AgentUsage>> {
    let db = crate::store::err_in(conn);
    let mut stmt = conn
        .prepare_cached(
            "WITH shown AS (
                SELECT x.entry_id, COUNT(*) AS shown, SUM(x.packed) AS packed, MAX(q.created_at) AS at
                FROM recall_query_exposures x JOIN recall_query_events q ON q.id = x.query_id
                WHERE q.via = 'mcp' GROUP BY x.entry_id),
             rated AS (
                SELECT entry_id, SUM(verdict = 'helpful') AS helpful, SUM(verdict = 'wrong') AS wrong,
                       MAX(created_at) AS at
                FROM recall_feedback GROUP BY entry_id),
             used AS (SELECT entry_id FROM shown UNION SELECT entry_id FROM rated)
             SELECT u.entry_id, COALESCE(e.title, ''), COALESCE(s.shown, 0), COALESCE(s.packed, 0),
                    COALESCE(r.helpful, 0), COALESCE(r.wrong, 0), MAX(COALESCE(s.at, ''), COALESCE(r.at, '')) AS last
             FROM used u LEFT JOIN shown s ON s.entry_id = u.entry_id
                  LEFT JOIN rated r ON r.entry_id = u.entry_id
                  LEFT JOIN recall_entries e ON e.id = u.entry_id
             ORDER BY last DESC, u.entry_id LIMIT ?1",
        )
        .map_err(db)?;
    let rows = stmt
        .query_map([limit], |r| {
            let last: String = r.get(6)?;
            Ok(AgentUsage {
                entry_id: r.get(0)?,
                title: r.get(1)?,
                shown: r.get::<_, i64>(2)?.max(0) as u32,
                packed: r.get::<_, i64>(3)?.max(0) as u32,
                helpful: r.get::<_, i64>(4)?.max(0) as u32,
                wrong: r.get::<_, i64>(5)?.max(0) as u32,
                last_used_at: (!last.is_empty()).then_some(last),
            })
        })
        .map_err(db)?;
    rows.collect::<rusqlite::Result<_>>().map_err(db)
}

#[cfg(test)]
mod tests {
    use super::agent_label;

    /// A secret near the end of a long label is redacted before the label is cut: its head
    /// is never kept.
    #[test]
    fn a_label_is_redacted_before_it_is_cut() {
        let token = format!("ghp_{}", "R4nd0mT0k3nF0rT3st1ngPurp0s3sXyZ1234");
        for pad in [150, 186, 195, 199] {
            let label = format!("{} {token}", "a".repeat(pad));
            let kept = agent_label(&label);
            assert!(!kept.contains("ghp_R4nd"), "{pad}: {kept}");
            assert!(kept.chars().count() <= 201, "{pad}");
        }
        assert_eq!(agent_label("claude\u{1b}[2J code"), "claude code");
    }
}

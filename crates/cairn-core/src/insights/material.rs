//! The material a report is written from: the slice's sessions as redacted excerpts, in a
//! character budget.
//!
//! Every report gets the aggregates (sessions by agent and project, turns, tool calls,
//! failures, the most used tools) and a header per session with its link. What else a session
//! block holds is the template's choice ([`Material`]). The budget is shared evenly: sessions
//! are written oldest first, each up to its share, and a session that does not fit in detail is
//! listed by its header only, so the model always knows what it was not shown.
//!
//! Every piece of transcript text passes the outbound redactor on its way in: secrets are
//! already gone from the archive, absolute paths become relative to the session's repository
//! or are removed. Links (`cairn://session/<key>?record=<n>`) let the report cite sessions.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use rusqlite::{Connection, OptionalExtension, params};
use sha2::{Digest, Sha256};

use super::slice::Slice;
use super::template::{Material, Template};
use crate::archive::redact::Redactor;
use crate::text::excerpt;

/// The default budget for material, in characters (about 20k tokens).
pub const DEFAULT_MAX_CHARS: usize = 80_000;
/// A session block never gets less than this, however many sessions share the budget.
const MIN_SESSION_CHARS: usize = 1_500;
const PROMPT_CHARS: usize = 600;
const ANSWER_CHARS: usize = 600;
const FAILURE_CHARS: usize = 300;
const MAX_FAILURES: usize = 12;
const MAX_RECALL: usize = 15;
const MAX_MISSES: usize = 30;

/// What [`build`] made.
#[derive(Debug, Clone)]
pub struct Built {
    pub text: String,
    /// Every session in the slice, in order (shown in detail or not).
    pub session_keys: Vec<String>,
    pub sessions_included: usize,
    /// How many pieces the outbound redactor changed (paths and secrets).
    pub redactions: usize,
    /// SHA-256 of `text`: what the report was made from.
    pub hash: String,
}

struct Outbound<'a> {
    home: Option<&'a str>,
    redactions: usize,
}

impl Outbound<'_> {
    fn text(&mut self, s: &str, repo_root: Option<&str>) -> String {
        let mut found = Vec::new();
        let out = Redactor::global().outbound_text(s, repo_root, self.home, &mut found);
        self.redactions += found.len();
        out
    }
}

struct SessionRow {
    key: String,
    agent: String,
    title: Option<String>,
    project: Option<String>,
    model: Option<String>,
    started: Option<String>,
    updated: Option<String>,
    turns: i64,
    repo_root: Option<String>,
    automated: bool,
}

/// Build the material for `template` over the sessions of `slice` (row ids, in order).
pub fn build(
    conn: &Connection,
    slice: &Slice,
    sessions: &[i64],
    template: &Template,
    max_chars: usize,
    home: Option<&str>,
) -> rusqlite::Result<Built> {
    let mut out = Outbound {
        home,
        redactions: 0,
    };
    let mut text = String::new();
    let _ = writeln!(text, "Slice: {}", slice.label());
    aggregates(conn, sessions, &mut text)?;
    if template.material.contains(&Material::RecallMisses) {
        recall_misses(conn, slice, &mut out, &mut text)?;
    }

    let mut keys = Vec::with_capacity(sessions.len());
    let mut included = 0;
    let mut headers_only = 0;
    for (n, &id) in sessions.iter().enumerate() {
        let row = session_row(conn, id)?;
        keys.push(row.key.clone());
        let left = max_chars.saturating_sub(text.len());
        let share = (left / (sessions.len() - n)).max(MIN_SESSION_CHARS);
        let header = header(&row, n + 1, &mut out);
        if left < header.len() + 200 {
            headers_only += 1;
            continue;
        }
        if left < MIN_SESSION_CHARS {
            text.push_str(&header);
            text.push_str("(not shown in detail: the material budget is spent)\n");
            continue;
        }
        let mut block = header;
        let root = row.repo_root.as_deref();
        if template.material.contains(&Material::Branches) {
            branches(conn, id, &mut block)?;
        }
        if template.material.contains(&Material::Recall) {
            recall(conn, id, &mut out, &mut block)?;
        }
        if template.material.contains(&Material::Failures) {
            failures(conn, id, root, &mut out, &mut block, share)?;
        }
        if template.material.contains(&Material::Turns) {
            turns(conn, id, &row.key, root, &mut out, &mut block, share)?;
        }
        text.push_str(&block);
        included += 1;
    }
    if headers_only > 0 {
        let _ = writeln!(
            text,
            "\n… and {headers_only} more sessions in the slice, not shown (the material budget is spent)."
        );
    }
    let hash = hex::encode(Sha256::digest(text.as_bytes()));
    Ok(Built {
        text,
        session_keys: keys,
        sessions_included: included,
        redactions: out.redactions,
        hash,
    })
}

fn session_row(conn: &Connection, id: i64) -> rusqlite::Result<SessionRow> {
    conn.query_row(
        &format!(
            "SELECT s.session_key, s.agent,
                COALESCE(s.title, (SELECT t.preview FROM turns t WHERE t.session_id = s.id ORDER BY t.turn_index LIMIT 1)),
                s.project, s.model, s.started_at, s.updated_at,
                s.turn_count, COALESCE(r.root, s.cwd), {}
             FROM sessions s LEFT JOIN repos r ON r.id = s.repo_id WHERE s.id = ?1",
            super::slice::AUTOMATED
        ),
        params![id],
        |r| {
            Ok(SessionRow {
                key: r.get(0)?,
                agent: r.get(1)?,
                title: r.get(2)?,
                project: r.get(3)?,
                model: r.get(4)?,
                started: r.get(5)?,
                updated: r.get(6)?,
                turns: r.get(7)?,
                repo_root: r.get(8)?,
                automated: r.get(9)?,
            })
        },
    )
}

fn header(row: &SessionRow, n: usize, out: &mut Outbound<'_>) -> String {
    let title = row
        .title
        .as_deref()
        .map(|t| out.text(&excerpt(t, 120), row.repo_root.as_deref()))
        .unwrap_or_else(|| "(untitled)".to_owned());
    let mut h = format!(
        "\n## Session {n}: {title}\nlink: cairn://session/{}\n",
        row.key
    );
    let mut facts = vec![row.agent.clone()];
    facts.extend(row.model.clone());
    if let Some(p) = &row.project {
        facts.push(format!("project {p}"));
    }
    if let Some(s) = &row.started {
        facts.push(format!(
            "{} → {}",
            day_time(s),
            row.updated.as_deref().map_or("?", day_time)
        ));
    }
    facts.push(format!("{} turns", row.turns));
    if row.automated {
        facts.push("automated".to_owned());
    }
    let _ = writeln!(h, "{}", facts.join(" · "));
    h
}

fn day_time(t: &str) -> &str {
    t.get(..16).unwrap_or(t)
}

fn aggregates(conn: &Connection, sessions: &[i64], text: &mut String) -> rusqlite::Result<()> {
    let _ = writeln!(text, "\n# Aggregates\nsessions: {}", sessions.len());
    if sessions.is_empty() {
        return Ok(());
    }
    let ids = sessions
        .iter()
        .map(i64::to_string)
        .collect::<Vec<_>>()
        .join(",");
    // Sub-agent sessions roll up into their parents.
    let family = format!(
        "SELECT id FROM sessions WHERE id IN ({ids}) UNION SELECT c.id FROM sessions c JOIN sessions p ON c.parent_key = p.session_key WHERE p.id IN ({ids})"
    );
    let count_by = |col: &str| -> rusqlite::Result<String> {
        let mut stmt = conn.prepare(&format!(
            "SELECT COALESCE({col}, '(none)'), COUNT(*) FROM sessions WHERE id IN ({ids}) GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT 10"
        ))?;
        let rows = stmt.query_map([], |r| {
            Ok(format!(
                "{} {}",
                r.get::<_, String>(0)?,
                r.get::<_, i64>(1)?
            ))
        })?;
        Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?.join(", "))
    };
    let _ = writeln!(text, "by agent: {}", count_by("agent")?);
    let _ = writeln!(text, "by project: {}", count_by("project")?);
    let (turns, calls, failures, edits): (i64, i64, i64, i64) = conn.query_row(
        &format!(
            "SELECT COUNT(*), COALESCE(SUM(tool_call_count), 0), COALESCE(SUM(failure_count), 0), COALESCE(SUM(edit_count), 0)
             FROM turns WHERE session_id IN ({family})"
        ),
        [],
        |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
    )?;
    let _ = writeln!(
        text,
        "turns: {turns} · tool calls: {calls} · failed tool calls: {failures} · file edits: {edits}"
    );
    let mut stmt = conn.prepare(&format!(
        "SELECT tool_name, COUNT(*), SUM(outcome = 'failed') FROM records r
         WHERE session_id IN ({family}) AND kind = 'tool_call' AND tool_name IS NOT NULL
         GROUP BY tool_name ORDER BY 2 DESC, 1 LIMIT 10"
    ))?;
    let tools = stmt
        .query_map([], |r| {
            Ok(format!(
                "{} {}",
                r.get::<_, String>(0)?,
                r.get::<_, i64>(1)?
            ))
        })?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    if !tools.is_empty() {
        let _ = writeln!(text, "most used tools: {}", tools.join(", "));
    }
    let (input, output): (i64, i64) = conn.query_row(
        &format!(
            "SELECT COALESCE(SUM(input), 0), COALESCE(SUM(output), 0) FROM token_usage WHERE session_id IN ({family})"
        ),
        [],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )?;
    if input + output > 0 {
        let _ = writeln!(text, "tokens: {input} in, {output} out");
    }
    Ok(())
}

fn branches(conn: &Connection, session: i64, block: &mut String) -> rusqlite::Result<()> {
    let mut stmt = conn.prepare_cached(
        "SELECT target_key, evidence, commit_id, pr_number FROM links
         WHERE session_id = ?1 AND strong = 1 ORDER BY confidence DESC, id",
    )?;
    let mut seen: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let rows = stmt.query_map(params![session], |r| {
        Ok((
            r.get::<_, String>(0)?,
            r.get::<_, String>(1)?,
            r.get::<_, Option<String>>(2)?,
            r.get::<_, Option<i64>>(3)?,
        ))
    })?;
    for row in rows {
        let (target, evidence, commit, pr) = row?;
        let name = target
            .trim_start_matches("ref:refs/heads/")
            .trim_start_matches("ref:")
            .to_owned();
        let mut why = evidence.replace('_', " ");
        if let Some(c) = commit {
            let _ = write!(why, " {}", c.get(..7).unwrap_or(&c));
        }
        if let Some(n) = pr {
            let _ = write!(why, " (PR #{n})");
        }
        let list = seen.entry(name).or_default();
        if !list.contains(&why) && list.len() < 4 {
            list.push(why);
        }
    }
    if !seen.is_empty() {
        let parts: Vec<String> = seen
            .into_iter()
            .map(|(b, why)| format!("{b} ({})", why.join("; ")))
            .collect();
        let _ = writeln!(block, "branches: {}", parts.join(", "));
    }
    Ok(())
}

fn recall(
    conn: &Connection,
    session: i64,
    out: &mut Outbound<'_>,
    block: &mut String,
) -> rusqlite::Result<()> {
    let mut stmt = conn.prepare_cached(
        "SELECT e.type, e.title, e.review_state, e.status FROM recall_entries e
         WHERE e.source_session_id = ?1
            OR EXISTS (SELECT 1 FROM recall_evidence v WHERE v.entry_id = e.id AND v.session_id = ?1)
         ORDER BY e.created_at LIMIT ?2",
    )?;
    let rows = stmt
        .query_map(params![session, MAX_RECALL as i64], |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, String>(2)?,
                r.get::<_, String>(3)?,
            ))
        })?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    if rows.is_empty() {
        block.push_str("recall entries citing this session: none\n");
        return Ok(());
    }
    block.push_str("recall entries citing this session:\n");
    for (kind, title, review, status) in rows {
        let _ = writeln!(
            block,
            "- [{kind}, {review}{}] {}",
            if status == "archived" {
                ", archived"
            } else {
                ""
            },
            out.text(&excerpt(&title, 200), None)
        );
    }
    Ok(())
}

fn recall_misses(
    conn: &Connection,
    slice: &Slice,
    out: &mut Outbound<'_>,
    text: &mut String,
) -> rusqlite::Result<()> {
    let mut stmt = conn.prepare(
        "SELECT query_text, COUNT(*) FROM recall_query_events
         WHERE result_count = 0 AND created_at >= COALESCE(?1, '') AND created_at < COALESCE(?2, '9999')
         GROUP BY query_text ORDER BY 2 DESC, MAX(created_at) DESC LIMIT ?3",
    )?;
    let rows = stmt
        .query_map(params![slice.since, slice.until, MAX_MISSES as i64], |r| {
            Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?))
        })?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    let _ = writeln!(
        text,
        "\n# Questions Recall could not answer in the slice: {}",
        rows.len()
    );
    for (q, n) in rows {
        let times = if n > 1 {
            format!(" ({n}×)")
        } else {
            String::new()
        };
        let _ = writeln!(text, "- {}{times}", out.text(&excerpt(&q, 200), None));
    }
    Ok(())
}

fn failures(
    conn: &Connection,
    session: i64,
    root: Option<&str>,
    out: &mut Outbound<'_>,
    block: &mut String,
    share: usize,
) -> rusqlite::Result<()> {
    let mut stmt = conn.prepare_cached(
        "SELECT r.ordinal, COALESCE(r.tool_name, c.tool_name), c.tool_input, r.text, r.exit_code
         FROM records r
         LEFT JOIN records c ON c.session_id = r.session_id AND c.call_id = r.call_id AND c.kind = 'tool_call'
         WHERE r.session_id = ?1 AND r.kind = 'tool_result' AND r.outcome = 'failed'
         ORDER BY r.ordinal",
    )?;
    let rows = stmt
        .query_map(params![session], |r| {
            Ok((
                r.get::<_, i64>(0)?,
                r.get::<_, Option<String>>(1)?,
                r.get::<_, Option<String>>(2)?,
                r.get::<_, Option<String>>(3)?,
                r.get::<_, Option<i64>>(4)?,
            ))
        })?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    if rows.is_empty() {
        return Ok(());
    }
    let key: String = conn.query_row(
        "SELECT session_key FROM sessions WHERE id = ?1",
        params![session],
        |r| r.get(0),
    )?;
    let _ = writeln!(block, "failed tool calls: {}", rows.len());
    let limit = block.len() + share / 2;
    for (i, (ordinal, tool, input, output, exit)) in rows.iter().enumerate() {
        if i == MAX_FAILURES || block.len() > limit {
            let _ = writeln!(block, "- … {} more not shown", rows.len() - i);
            break;
        }
        let call = input
            .as_deref()
            .map(|i| out.text(&excerpt(&call_text(i), 200), root))
            .unwrap_or_default();
        let result = output
            .as_deref()
            .map(|o| out.text(&excerpt(o, FAILURE_CHARS), root))
            .unwrap_or_default();
        let exit = exit.map(|c| format!(" exit {c}")).unwrap_or_default();
        let _ = writeln!(
            block,
            "- {} `{call}`{exit} → {result} (cairn://session/{key}?record={ordinal})",
            tool.as_deref().filter(|t| !t.is_empty()).unwrap_or("tool"),
        );
    }
    Ok(())
}

/// A tool call's input as a person would read it: the command line when there is one.
fn call_text(input: &str) -> String {
    let Ok(v) = serde_json::from_str::<serde_json::Value>(input) else {
        return input.to_owned();
    };
    for key in ["command", "cmd", "file_path", "path", "pattern", "query"] {
        match v.get(key) {
            Some(serde_json::Value::String(s)) => return s.clone(),
            Some(serde_json::Value::Array(parts)) => {
                let words: Vec<&str> = parts.iter().filter_map(|p| p.as_str()).collect();
                if !words.is_empty() {
                    return words.join(" ");
                }
            }
            _ => {}
        }
    }
    input.to_owned()
}

#[allow(clippy::too_many_arguments)]
fn turns(
    conn: &Connection,
    session: i64,
    key: &str,
    root: Option<&str>,
    out: &mut Outbound<'_>,
    block: &mut String,
    share: usize,
) -> rusqlite::Result<()> {
    let mut stmt = conn.prepare_cached(
        "SELECT t.id, t.turn_index, t.opening_ordinal, t.tool_names, t.tool_call_count, t.failure_count, t.edit_count,
            (SELECT text FROM records r WHERE r.session_id = t.session_id AND r.ordinal = t.opening_ordinal
               AND r.kind = 'message' AND r.role = 'user'),
            t.preview
         FROM turns t WHERE t.session_id = ?1 ORDER BY t.turn_index",
    )?;
    let mut answer = conn.prepare_cached(
        "SELECT text FROM records WHERE turn_id = ?1 AND kind = 'message' AND role = 'assistant'
            AND text IS NOT NULL AND trim(text) != '' ORDER BY ordinal DESC LIMIT 1",
    )?;
    let rows = stmt
        .query_map(params![session], |r| {
            Ok((
                r.get::<_, i64>(0)?,
                r.get::<_, i64>(1)?,
                r.get::<_, i64>(2)?,
                r.get::<_, String>(3)?,
                r.get::<_, i64>(4)?,
                r.get::<_, i64>(5)?,
                r.get::<_, i64>(6)?,
                r.get::<_, Option<String>>(7)?,
                r.get::<_, Option<String>>(8)?,
            ))
        })?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    let limit = block.len() + share;
    for (i, (id, index, opening, tools, calls, failed, edits, prompt, preview)) in
        rows.iter().enumerate()
    {
        if block.len() > limit {
            let _ = writeln!(block, "… {} more turns not shown", rows.len() - i);
            break;
        }
        let _ = writeln!(
            block,
            "### Turn {} (cairn://session/{key}?record={opening})",
            index + 1
        );
        if let Some(p) = prompt.as_deref().or(preview.as_deref()) {
            let _ = writeln!(block, "User: {}", out.text(&excerpt(p, PROMPT_CHARS), root));
        }
        if let Some(a) = answer
            .query_row(params![id], |r| r.get::<_, String>(0))
            .optional()?
        {
            let _ = writeln!(
                block,
                "Agent: {}",
                out.text(&excerpt(&a, ANSWER_CHARS), root)
            );
        }
        if *calls > 0 {
            let names: Vec<String> = serde_json::from_str(tools).unwrap_or_default();
            let _ = writeln!(
                block,
                "Tools: {calls} calls ({}), {edits} edits, {failed} failed",
                names.join(", ")
            );
        }
    }
    Ok(())
}

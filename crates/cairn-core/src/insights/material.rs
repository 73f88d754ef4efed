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

use rusqlite::Connection;
use sha2::{Digest, Sha256};

use super::slice::Slice;
use super::template::{Material, Template};
use crate::archive::redact::Redactor;
use crate::archive::store::{self as archive, TurnOutline};
use crate::git::store as git;
use crate::recall::store as recall;
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
    let s = archive::report_session(conn, id)?;
    // The session's repository root, else its working directory.
    let root = match s.repo {
        Some(repo) => git::repo_root(conn, repo)?,
        None => None,
    };
    Ok(SessionRow {
        key: s.key,
        agent: s.agent,
        title: s.title,
        project: s.project,
        model: s.model,
        started: s.started,
        updated: s.updated,
        turns: s.turns,
        repo_root: root.or(s.cwd),
        automated: s.automated,
    })
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
    let totals = archive::slice_totals(conn, sessions)?;
    let list = |counts: &[(String, i64)]| {
        counts
            .iter()
            .map(|(name, n)| format!("{name} {n}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let _ = writeln!(text, "by agent: {}", list(&totals.by_agent));
    let _ = writeln!(text, "by project: {}", list(&totals.by_project));
    let _ = writeln!(
        text,
        "turns: {} · tool calls: {} · failed tool calls: {} · file edits: {}",
        totals.turns, totals.tool_calls, totals.failures, totals.edits
    );
    if !totals.tools.is_empty() {
        let _ = writeln!(text, "most used tools: {}", list(&totals.tools));
    }
    let (input, output) = (totals.input_tokens, totals.output_tokens);
    if input + output > 0 {
        let _ = writeln!(text, "tokens: {input} in, {output} out");
    }
    Ok(())
}

fn branches(conn: &Connection, session: i64, block: &mut String) -> rusqlite::Result<()> {
    let mut seen: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for link in git::strong_links(conn, session)? {
        let (target, evidence, commit, pr) = (
            link.target_key,
            link.evidence,
            link.commit_id,
            link.pr_number,
        );
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
    let rows = recall::entries_citing_session(conn, session, MAX_RECALL)?;
    if rows.is_empty() {
        block.push_str("recall entries citing this session: none\n");
        return Ok(());
    }
    block.push_str("recall entries citing this session:\n");
    for recall::CitingEntry {
        kind,
        title,
        review_state: review,
        status,
    } in rows
    {
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
    let rows = recall::unanswered_questions(
        conn,
        slice.since.as_deref(),
        slice.until.as_deref(),
        MAX_MISSES,
    )?;
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
    let rows = archive::failed_results(conn, session)?;
    if rows.is_empty() {
        return Ok(());
    }
    let key = archive::session_key(conn, session)?;
    let _ = writeln!(block, "failed tool calls: {}", rows.len());
    let limit = block.len() + share / 2;
    for (i, row) in rows.iter().enumerate() {
        let (ordinal, tool, input, output, exit) = (
            row.ordinal,
            &row.tool_name,
            &row.tool_input,
            &row.text,
            row.exit_code,
        );
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
    let rows = archive::turn_outlines(conn, session)?;
    let limit = block.len() + share;
    for (i, turn) in rows.iter().enumerate() {
        let TurnOutline {
            id,
            turn_index: index,
            opening_ordinal: opening,
            tool_names: tools,
            tool_calls: calls,
            failures: failed,
            edits,
            prompt,
            preview,
        } = turn;
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
        if let Some(a) = archive::last_answer(conn, *id)? {
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

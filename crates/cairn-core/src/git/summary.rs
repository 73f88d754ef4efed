//! `cairn publish --summary-md`: a short Markdown block for a PR description, written from what
//! publishing shares (the redacted documents of [`super::publish::PublishReport`]) and nothing
//! else: sessions, turns, what was tested and committed, and `cairn://` links a reviewer who
//! runs `cairn pull` opens.
//!
//! Every text in it is the document's own, already through the outbound redactor; it is
//! cleaned again for Markdown (one line, no `|`, `[`, `]`, `<`, `>` or backticks that could
//! break out of a table cell, a link or inline code).

use std::fmt::Write as _;

use super::publish::PublishReport;
use crate::archive::Agent;
use crate::text::plural;

/// The Markdown block.
pub fn markdown(r: &PublishReport) -> String {
    let mut md = String::new();
    let target = cell(&typed(&r.target_key), 120);
    let _ = writeln!(md, "### Agent work behind this change");
    let _ = writeln!(md);
    if r.documents.is_empty() {
        let _ = writeln!(
            md,
            "No agent session recorded by Cairn is related to `{target}`."
        );
        return md;
    }
    let tested = count_label(r, "tested");
    let committed = count_label(r, "committed");
    let _ = writeln!(
        md,
        "{} and {} ({} directly related) for `{target}`; {} ran tests, {} committed.",
        plural(r.sessions, "session"),
        plural(r.turns, "turn"),
        r.related_turns,
        plural(tested, "turn"),
        plural(committed, "turn"),
    );
    let _ = writeln!(md);
    let _ = writeln!(
        md,
        "| Session | Agent | Turns | Tested | Committed | Latest |"
    );
    let _ = writeln!(md, "|---|---|---|---|---|---|");
    for d in &r.documents {
        let s = &d.session;
        let title = s
            .title
            .as_deref()
            .or_else(|| s.previews.iter().find_map(|p| p.strip_prefix("user: ")))
            .map(|t| cell(t, 80))
            .filter(|t| !t.is_empty())
            .unwrap_or_else(|| "Agent session".to_owned());
        // With --full a teammate's pull makes the session theirs to open under this key.
        let link = if r.full {
            crate::keys::session_key(Agent::Atif, s.session_key.as_bytes())
        } else {
            s.session_key.clone()
        };
        let turns_with = |label: &str| {
            s.turns
                .iter()
                .filter(|t| t.labels.iter().any(|l| l == label))
                .count()
        };
        let _ = writeln!(
            md,
            "| [{title}](cairn://session/{link}) | {} | {} ({} related) | {} | {} | {} |",
            s.agent.as_str(),
            s.turn_count,
            s.related_turn_count,
            turns_with("tested"),
            turns_with("committed"),
            s.updated_at
                .as_deref()
                .and_then(|t| t.get(..10))
                .unwrap_or("-"),
        );
    }
    let _ = writeln!(md);
    let how = if r.full {
        "the whole redacted sessions are published"
    } else {
        "their redacted summaries are published"
    };
    let _ = writeln!(
        md,
        "<sub>Recorded by Cairn; {how} under `refs/cairn/`. Reviewers: `cairn pull`, then `cairn skim '{target}'`.</sub>"
    );
    md
}

/// A target as a person types it to `cairn skim`: `#123`, a branch's name, else its key.
fn typed(key: &str) -> String {
    if let Some(n) = key
        .strip_prefix("pull-request:")
        .and_then(|k| k.rsplit_once('#'))
        .map(|(_, n)| n)
        .filter(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
    {
        return format!("#{n}");
    }
    key.strip_prefix("ref:refs/heads/")
        .unwrap_or(key)
        .to_owned()
}

fn count_label(r: &PublishReport, label: &str) -> u32 {
    r.documents
        .iter()
        .flat_map(|d| &d.session.turns)
        .filter(|t| t.labels.iter().any(|l| l == label))
        .count() as u32
}

/// One line of text safe in a table cell, a link's text and inline code.
fn cell(text: &str, max: usize) -> String {
    crate::text::one_line(text, max)
        .chars()
        .map(|c| match c {
            '|' | '[' | ']' | '<' | '>' | '`' => ' ',
            c => c,
        })
        .collect::<String>()
        .trim()
        .to_owned()
}

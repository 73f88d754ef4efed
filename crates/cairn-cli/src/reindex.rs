//! `cairn reindex`: sessions read again from their retained copies by this build's parsers;
//! with `--from-copies`, the archive database rebuilt from the copies alone.

use std::io::{IsTerminal, Write};
use std::path::Path;

use anyhow::Result;
use cairn_core::text::plural;
use cairn_core::{Cairn, RebuildReport, ReindexReport, ReindexRequest};

use crate::AgentArg;
use crate::render::{self, clean};

#[derive(clap::Args)]
pub struct ReindexArgs {
    /// A session key (`sha256-…`) or the agent's own session id; every session without one.
    session: Option<String>,
    /// Only the sessions read with this agent's parser: the transcripts it wrote (an imported
    /// trajectory is read as `atif`, whichever agent ran it).
    #[arg(long, value_enum)]
    agent: Option<AgentArg>,
    /// Only the sessions read before their agent's transcripts last changed, the ones `doctor`
    /// counts: reading again may change them, the others read as they were archived.
    #[arg(long)]
    outdated: bool,
    /// Read and compare, change nothing: what a reindex would change.
    #[arg(long)]
    dry_run: bool,
    /// Build a new archive database from the retained copies alone, for a cairn.db that is
    /// damaged or lost. The old database is moved aside, never deleted; what only it held
    /// (forget tombstones, a person's links, Recall's entries and reviews, reports, the team
    /// push record) is carried over from it where it still reads. Every session whose
    /// copy is kept comes back, those whose transcript is gone too. Captures wait for it (a
    /// sync under way stops and says to run it again); the app and MCP servers go on with the
    /// new database. A forget or link made while it runs may be missing from the new one.
    #[arg(long, conflicts_with_all = ["session", "agent", "outdated", "dry_run"])]
    pub from_copies: bool,
    /// With --from-copies: rebuild even when cairn.db is healthy (doctor finds nothing wrong
    /// in it), without asking.
    #[arg(long, requires = "from_copies")]
    force: bool,
    /// Show a progress bar even when stderr is not a terminal.
    #[arg(long)]
    progress: bool,
}

pub fn run(args: ReindexArgs, cairn: &Cairn, json: bool, out: &mut impl Write) -> Result<()> {
    let req = ReindexRequest {
        session: args.session,
        agent: args.agent.map(Into::into),
        outdated: args.outdated,
        dry_run: args.dry_run,
    };
    let bar = render::Bar::new(render::shows_progress(args.progress, json));
    let report = cairn.reindex(&req, &bar)?;
    bar.done();
    if json {
        render::json(out, &report)?;
    } else if req.outdated && report.sessions == 0 && report.skipped.is_empty() {
        // Stored text is still redacted again with today's rules; say so when it was.
        writeln!(
            out,
            "No session was read before its agent's transcripts last changed: none to read again."
        )?;
        describe_stored(out, &report)?;
        if report.dry_run {
            writeln!(out, "Nothing was changed (--dry-run).")?;
        }
    } else {
        describe(out, &report)?;
    }
    Ok(())
}

/// `cairn reindex --from-copies`: the archive in `data_dir` rebuilt from its retained copies,
/// without opening its database (it may not open).
pub fn rebuild(args: ReindexArgs, data_dir: &Path, json: bool, out: &mut impl Write) -> Result<()> {
    if !args.force
        && let Err(healthy) = Cairn::rebuild_wanted(data_dir)
    {
        // As `forget` asks: a terminal is asked, anything else is refused with the way on.
        if json || !std::io::stdin().is_terminal() {
            return Err(healthy.into());
        }
        writeln!(out, "{}", clean(&healthy.to_string()))?;
        if !render::confirm(out, "Rebuild it anyway?")? {
            writeln!(out, "Nothing was changed.")?;
            return Ok(());
        }
    }
    let bar = render::Bar::new(render::shows_progress(args.progress, json));
    let report = Cairn::rebuild_from_copies(data_dir, &bar)?;
    bar.done();
    if json {
        render::json(out, &report)?;
    } else {
        describe_rebuild(out, &report)?;
    }
    Ok(())
}

/// The copies a rebuild passed over listed at most (`--json` has every one).
const SKIPPED_SHOWN: usize = 20;

fn describe_rebuild(out: &mut impl Write, r: &RebuildReport) -> std::io::Result<()> {
    writeln!(
        out,
        "Rebuilt {} from the retained copies: {} ({}), {}, {}.",
        clean(&r.database),
        plural(r.sessions, "session"),
        plural(r.sources, "source"),
        plural(r.records, "record"),
        plural(r.turns, "turn"),
    )?;
    match r.moved_aside.split_first() {
        None => writeln!(out, "There was no old database to move aside.")?,
        Some((db, sides)) => {
            let sides: Vec<String> = sides.iter().map(|s| clean(s)).collect();
            writeln!(
                out,
                "The old database was moved aside, not deleted: {}{}",
                clean(db),
                if sides.is_empty() {
                    String::new()
                } else {
                    format!(" (with {})", sides.join(", "))
                }
            )?;
        }
    }
    // Room by room, each kind of row with its count, and every failure: nothing the old
    // database held goes unsaid.
    if !r.carried.is_empty() {
        writeln!(out, "Carried over from the old database:")?;
    }
    for c in &r.carried {
        let error = c
            .error
            .as_deref()
            .map(|e| {
                format!(
                    "; the rest is not readable in the old database: {}",
                    clean(e)
                )
            })
            .unwrap_or_default();
        writeln!(
            out,
            "  {}: {}: {}{error}",
            clean(&c.room),
            clean(&c.what),
            c.rows
        )?;
    }
    if !r.not_carried.is_empty() {
        writeln!(out, "Not carried over:")?;
    }
    for what in &r.not_carried {
        writeln!(out, "  {}", clean(what))?;
    }
    if r.forgotten > 0 {
        writeln!(
            out,
            "Forgotten: {} of forgotten sessions not rebuilt (the next sync deletes their copies).",
            plural(r.forgotten, "source")
        )?;
    }
    if r.copy_lines_to_redact > 0 {
        writeln!(
            out,
            "Secrets: {} of the retained copies {} what today's redaction rules remove: stored \
             redacted; `cairn reindex --outdated` writes the copies again without them.",
            plural(r.copy_lines_to_redact, "line"),
            held(false, r.copy_lines_to_redact)
        )?;
    }
    for (title, list) in [
        ("Rebuilt in part", &r.torn),
        ("Rebuilt as their own session", &r.rekeyed),
        ("Not rebuilt", &r.skipped),
    ] {
        if list.is_empty() {
            continue;
        }
        writeln!(out, "{title} ({}):", list.len())?;
        for s in list.iter().take(SKIPPED_SHOWN) {
            writeln!(out, "  {}: {}", clean(&s.copy), clean(&s.reason))?;
        }
        if list.len() > SKIPPED_SHOWN {
            writeln!(
                out,
                "  and {} more (--json lists each)",
                list.len() - SKIPPED_SHOWN
            )?;
        }
    }
    Ok(())
}

/// The sessions that read differently listed at most (`--json` has every one).
const CHANGED_SHOWN: usize = 20;

fn describe(out: &mut impl Write, r: &ReindexReport) -> std::io::Result<()> {
    let verb = if r.dry_run { "Would read" } else { "Read" };
    writeln!(
        out,
        "{verb} {} again from the retained copies: {} read differently now ({} changed, new or gone).",
        plural(r.sessions, "session"),
        r.sessions_changed,
        plural(r.records_changed, "record"),
    )?;
    if r.sessions > 0 {
        writeln!(
            out,
            "Records {} → {}, turns {} → {}.",
            r.records_before, r.records_after, r.turns_before, r.turns_after
        )?;
    }
    if r.evidence_revoked > 0 {
        writeln!(
            out,
            "Recall: {} {} back to unverified (records they cite read differently now).",
            plural(r.evidence_revoked, "entry"),
            if r.dry_run { "would go" } else { "went" }
        )?;
    }
    if r.copy_lines_redacted > 0 {
        writeln!(
            out,
            "Secrets: {} of the retained copies {} what today's redaction rules remove ({}).",
            plural(r.copy_lines_redacted, "line"),
            held(r.dry_run, r.copy_lines_redacted),
            if r.dry_run {
                "a reindex writes them again redacted"
            } else {
                "written again redacted, their records too"
            }
        )?;
    }
    describe_stored(out, r)?;
    if !r.changed.is_empty() {
        writeln!(
            out,
            "{}:",
            if r.dry_run {
                "Would read differently"
            } else {
                "Read differently"
            }
        )?;
        for c in r.changed.iter().take(CHANGED_SHOWN) {
            let title = c
                .title
                .as_deref()
                .map(|t| format!("  {}", render::line(t, 60)))
                .unwrap_or_default();
            let redacted = if c.copy_lines_redacted > 0 {
                format!(", {} redacted", plural(c.copy_lines_redacted, "line"))
            } else {
                String::new()
            };
            writeln!(
                out,
                "  {}{title}: {}{redacted}",
                clean(&c.handle),
                plural(c.records_changed, "record")
            )?;
        }
        if r.changed.len() > CHANGED_SHOWN {
            writeln!(
                out,
                "  and {} more (--json lists each)",
                r.changed.len() - CHANGED_SHOWN
            )?;
        }
    }
    if !r.skipped.is_empty() {
        writeln!(out, "Not read again ({}):", r.skipped.len())?;
        for s in &r.skipped {
            writeln!(out, "  {}: {}", clean(&s.session_key), clean(&s.reason))?;
        }
    }
    if r.dry_run {
        writeln!(out, "Nothing was changed (--dry-run).")?;
    }
    Ok(())
}

/// The rooms' stored text today's rules redact (Recall entries, reports, pulled trajectories):
/// a reindex redacts it whichever sessions it reads.
fn describe_stored(out: &mut impl Write, r: &ReindexReport) -> std::io::Result<()> {
    let stored: Vec<String> = [
        (r.recall_entries_redacted, "Recall entry"),
        (r.reports_redacted, "generated report"),
        (r.pulled_files_redacted, "pulled trajectory"),
    ]
    .into_iter()
    .filter(|(n, _)| *n > 0)
    .map(|(n, what)| plural(n, what))
    .collect();
    if !stored.is_empty() {
        writeln!(
            out,
            "Secrets: {} {} what today's redaction rules remove ({}).",
            in_words(&stored),
            held(
                r.dry_run,
                r.recall_entries_redacted
                    .saturating_add(r.reports_redacted)
                    .saturating_add(r.pulled_files_redacted)
            ),
            if r.dry_run {
                "a reindex redacts them"
            } else {
                "redacted"
            }
        )?;
    }
    Ok(())
}

/// `a`, `a and b`, `a, b and c`.
fn in_words(items: &[String]) -> String {
    match items.split_last() {
        None => String::new(),
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
    }
}

/// What `n` things hold (a dry run: now) or held (before the run redacted them).
fn held(dry_run: bool, n: u32) -> &'static str {
    match (dry_run, n) {
        (false, _) => "held",
        (true, 1) => "holds",
        (true, _) => "hold",
    }
}

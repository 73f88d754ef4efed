//! `cairn forget`: lists exactly what would go, asks, then has the core remove every byte.

use std::io::{IsTerminal, Write};

use anyhow::{Result, bail};
use cairn_core::{
    Cairn, ForgetPlan, ForgetRequest, ForgetSetAside, LiftRequest, Lifted, SetAsideFate,
};

use crate::AgentArg;
use crate::render::{self, clean};
use cairn_core::text::plural;

#[derive(clap::Args)]
// What to forget is said or nothing is: a usage error (exit 2) like any other missing argument.
#[command(group(
    clap::ArgGroup::new("what")
        .required(true)
        .multiple(true)
        .args(["session", "project", "before", "agent", "lift"])
))]
pub struct ForgetArgs {
    /// A session key (`sha256-…`) or the agent's own session id (its sub-agents go with it).
    session: Option<String>,
    /// Every session of this project.
    #[arg(long)]
    project: Option<String>,
    /// Every session last active before this day (YYYY-MM-DD, `today`, `yesterday`: its start
    /// on your clock), RFC 3339 time, or span back from now (`30d`, `2w`).
    #[arg(long, value_parser = crate::render::when)]
    before: Option<String>,
    /// Every session this agent ran, as `cairn sessions --agent` lists them (an imported
    /// trajectory under the agent that ran it).
    #[arg(long, value_enum)]
    agent: Option<AgentArg>,
    /// Do not ask (for scripts). Without it, the list is shown and a terminal is asked.
    #[arg(long, conflicts_with = "dry_run")]
    yes: bool,
    /// Only list what would go, and exit 0 (without it and --yes, a listing that is not
    /// answered in a terminal exits 1, since nothing was removed).
    #[arg(long)]
    dry_run: bool,
    /// Let the next sync import the same transcript files again (no tombstone).
    #[arg(long)]
    allow_reimport: bool,
    /// Undo past forgets as far as can be: take away their tombstones (every one, or with
    /// --agent and --since only those), so the next sync imports again the transcripts the
    /// agents still keep. What only the archive held went with the forget.
    #[arg(long, conflicts_with_all = ["session", "project", "before", "allow_reimport"])]
    lift: bool,
    /// With --lift: only tombstones laid on or after this day (YYYY-MM-DD, `today`,
    /// `yesterday`), RFC 3339 time, or span back from now (`30d`, `2w`).
    #[arg(long, requires = "lift", value_parser = crate::render::when)]
    since: Option<String>,
}

/// What `plan` takes: `heading` says whether it is to go ("Would forget") or went ("Removed").
/// The databases set aside are said here only before (after, [`set_aside`] says what became of
/// each).
fn describe(out: &mut impl Write, plan: &ForgetPlan, heading: &str) -> std::io::Result<()> {
    writeln!(out, "{heading} {}:", plural(plan.sessions.len(), "session"))?;
    for s in &plan.sessions {
        writeln!(
            out,
            "  {}  {:<7} {}",
            render::short_time(s.started_at.as_deref()),
            clean(&s.agent),
            clean(&cairn_core::text::one_line(
                s.title.as_deref().unwrap_or("(no prompt)"),
                70
            )),
        )?;
    }
    writeln!(
        out,
        "with {}, {}, {}, {}, {}.",
        plural(plan.turns, "turn"),
        plural(plan.records, "record"),
        plural(plan.retained_copies, "retained copy"),
        plural(plan.vectors, "vector"),
        plural(plan.links, "link")
    )?;
    if !plan.same_id_kept.is_empty() {
        writeln!(
            out,
            "Kept: {} with the same session id (an import or a teammate's copy); forget {} by key: {}",
            plural(plan.same_id_kept.len(), "other session"),
            if plan.same_id_kept.len() == 1 {
                "it"
            } else {
                "each"
            },
            plan.same_id_kept
                .iter()
                .map(|k| clean(k))
                .collect::<Vec<_>>()
                .join(", ")
        )?;
    }
    if plan.recall_evidence > 0 {
        writeln!(
            out,
            "Recall: {} revoked in {}:",
            plural(plan.recall_evidence, "evidence link"),
            plural(plan.recall_entries.len(), "entry")
        )?;
        for e in &plan.recall_entries {
            let fate = if e.deleted {
                "deleted: drawn from these sessions alone, never accepted".to_owned()
            } else if let Some(by) = &e.superseded_by {
                format!("replaced by {}: stays archived", clean(by))
            } else if e.stays_archived {
                "rejected: stays archived".to_owned()
            } else if let Some(back) = &e.hands_back_to {
                format!(
                    "accepted before: back to the inbox, unreviewed; {} is served again in its place",
                    clean(back)
                )
            } else if e.back_to_inbox {
                "accepted before: back to the inbox, unreviewed".to_owned()
            } else {
                "keeps its other evidence".to_owned()
            };
            writeln!(
                out,
                "  {} ({fate})",
                clean(&cairn_core::text::one_line(&e.title, 70))
            )?;
        }
    }
    for r in &plan.insight_reports {
        writeln!(
            out,
            "Report #{} {:?} read these sessions and is deleted too.",
            r.id,
            clean(&cairn_core::text::one_line(&r.title, 70))
        )?;
    }
    // What went beyond this machine is taken back by the command that sent it.
    let them = |n: u32| if n == 1 { "it" } else { "them" };
    if plan.published > 0 {
        let fate = if plan.allow_reimport {
            "Their copies stay in the repository and at the remote (--allow-reimport)".to_owned()
        } else {
            format!(
                "The next `cairn push` in the repository deletes the copies there and at the remote, so no pull brings {} back; a teammate who pulled a copy before drops it at their next pull",
                them(plan.published)
            )
        };
        writeln!(
            out,
            "Published through git: {}. {fate}.",
            plural(plan.published, "session"),
        )?;
    }
    if plan.pulled > 0 {
        let fate = if plan.allow_reimport {
            format!(
                "The next pull may bring {} back (--allow-reimport)",
                them(plan.pulled)
            )
        } else {
            format!(
                "The next pull or push in the repository deletes the copy fetched there; no pull brings {} back",
                them(plan.pulled)
            )
        };
        writeln!(
            out,
            "Pulled from a teammate: {}. {fate}.",
            plural(plan.pulled, "session")
        )?;
    }
    if plan.team_pushed > 0 {
        writeln!(
            out,
            "In the team archive: {}. The next `cairn team push` withdraws {}.",
            plural(plan.team_pushed, "session"),
            them(plan.team_pushed),
        )?;
    }
    if heading == WOULD {
        set_aside_planned(out, &plan.set_aside)?;
    }
    if plan.allow_reimport {
        writeln!(
            out,
            "The next sync may import these transcripts again (--allow-reimport)."
        )?;
    } else {
        writeln!(
            out,
            "A tombstone keeps the next sync from importing these transcripts again."
        )?;
    }
    Ok(())
}

/// The heading of a forget's list before it is confirmed.
const WOULD: &str = "Would forget";

/// The command that deletes a database set aside with its `-wal` and `-shm`: the core's
/// ([`ForgetSetAside::rm`]), which names the file itself byte for byte, never its cleaned or
/// lossy form (a folder `da\x1b[31mta` cleans to `data`, another folder; one whose name is not
/// UTF-8 shows as another name). When that takes `$'…'` words, which only bash and zsh read, the
/// line says so. Whatever is returned, [`clean`] leaves as it is.
fn rm_line(aside: &ForgetSetAside) -> String {
    let rm = &aside.rm;
    if rm.contains("$'") {
        format!(
            "in bash or zsh (its name holds characters a terminal does not show, or bytes that are not UTF-8, written as \\x escapes): {rm}"
        )
    } else {
        rm.clone()
    }
}

/// Before a forget is confirmed: the other databases it will reach (those a rebuild set aside
/// that hold the sessions, what a rebuild that did not finish left) and those it cannot clean,
/// each with the command that deletes it.
fn set_aside_planned(out: &mut impl Write, planned: &[ForgetSetAside]) -> std::io::Result<()> {
    let of = |fate: SetAsideFate| -> Vec<&ForgetSetAside> {
        planned.iter().filter(|a| a.fate == fate).collect()
    };
    let paths = |these: &[&ForgetSetAside]| {
        these
            .iter()
            .map(|a| clean(&a.path))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let removed = of(SetAsideFate::Removed);
    if !removed.is_empty() {
        writeln!(
            out,
            "Also removed from {} a rebuild set aside: {}.",
            plural(removed.len(), "database"),
            paths(&removed)
        )?;
    }
    let deleted = of(SetAsideFate::Deleted);
    if !deleted.is_empty() {
        writeln!(
            out,
            "Also deleted: {}, left by a rebuild from the copies that did not finish (a half-made copy of the archive).",
            paths(&deleted)
        )?;
    }
    let kept: Vec<&ForgetSetAside> = planned
        .iter()
        .filter(|a| matches!(a.fate, SetAsideFate::Holds | SetAsideFate::MayHold))
        .collect();
    if !kept.is_empty() {
        writeln!(
            out,
            "{} a rebuild set aside cannot be cleaned of them; delete {} once the rebuilt archive is checked:",
            plural(kept.len(), "database"),
            if kept.len() == 1 { "it" } else { "each" }
        )?;
        for a in kept {
            let held = match a.fate {
                SetAsideFate::MayHold => "may hold them".to_owned(),
                _ => format!("holds {}", plural(a.sessions, "session")),
            };
            writeln!(
                out,
                "  {} {held} ({}): {}",
                clean(&a.path),
                clean(a.why.as_deref().unwrap_or("")),
                rm_line(a)
            )?;
        }
    }
    Ok(())
}

/// What a lift takes away, `heading` "Would lift" or "Lifted".
fn describe_lift(out: &mut impl Write, lifted: &Lifted, heading: &str) -> std::io::Result<()> {
    writeln!(
        out,
        "{heading} the tombstones of {} and {}: the next `cairn sync` imports them again where the agent still keeps the transcripts.",
        plural(lifted.sessions, "forgotten session"),
        plural(lifted.files, "transcript file"),
    )?;
    if lifted.shared_kept > 0 {
        writeln!(
            out,
            "{} shared through git stay forgotten: no pull brings them back.",
            plural(lifted.shared_kept, "session"),
        )?;
    }
    Ok(())
}

/// `cairn forget --lift`: lists, asks as a forget does, then takes the tombstones away.
fn lift(args: ForgetArgs, cairn: &Cairn, json_out: bool, out: &mut impl Write) -> Result<()> {
    let req = LiftRequest {
        agent: args.agent.map(Into::into),
        since: crate::render::local_day(args.since, false),
    };
    let would = cairn.lift_preview(&req)?;
    let nothing = would.files == 0 && would.sessions == 0;
    let json = |lifted: &Lifted, dry: bool| serde_json::json!({ "dry_run": dry, "lifted": lifted });
    if args.dry_run || (nothing && !args.yes) {
        if json_out {
            render::json(out, &json(&would, args.dry_run))?;
        } else if nothing {
            writeln!(out, "No tombstone matches: nothing to lift.")?;
        } else {
            describe_lift(out, &would, "Would lift")?;
        }
        return Ok(());
    }
    if !args.yes {
        if json_out || !std::io::stdin().is_terminal() {
            if json_out {
                render::json(out, &json(&would, true))?;
            } else {
                describe_lift(out, &would, "Would lift")?;
            }
            out.flush()?;
            bail!("no tombstone was lifted: run again with --yes to lift them");
        }
        describe_lift(out, &would, "Would lift")?;
        if !render::confirm(out, "Lift them?")? {
            writeln!(out, "No tombstone was lifted.")?;
            return Ok(());
        }
    }
    let lifted = cairn.lift_forgotten(&req, &render::SaysItWaits("lift"))?;
    if json_out {
        render::json(out, &json(&lifted, false))?;
    } else {
        describe_lift(out, &lifted, "Lifted")?;
    }
    Ok(())
}

pub fn run(args: ForgetArgs, cairn: &Cairn, json_out: bool, out: &mut impl Write) -> Result<()> {
    if args.lift {
        return lift(args, cairn, json_out, out);
    }
    let req = ForgetRequest {
        session: args.session,
        project: args.project,
        // A day on the clock sessions are listed on.
        before: crate::render::local_day(args.before, false),
        agent: args.agent.map(Into::into),
        allow_reimport: args.allow_reimport,
    };
    let plan = cairn.forget_preview(&req)?;
    // What a dry run (or a forget waiting for --yes) would remove, with the counts CLI.md
    // names for forget's JSON at the top, as a forget done has them.
    let would = |plan: &ForgetPlan| {
        serde_json::json!({
            "dry_run": true,
            "sessions": plan.sessions.len(),
            "records": plan.records,
            "would_remove": plan,
        })
    };
    if args.dry_run {
        if json_out {
            render::json(out, &would(&plan))?;
        } else if plan.sessions.is_empty() {
            writeln!(out, "No session matches: nothing to forget.")?;
        } else {
            describe(out, &plan, WOULD)?;
        }
        return Ok(());
    }
    if plan.sessions.is_empty() && !args.yes {
        if json_out {
            render::json(
                out,
                &serde_json::json!({
                    "sessions": 0,
                    "records": 0,
                    "removed": plan,
                    "retained_files_deleted": 0,
                }),
            )?;
        } else {
            writeln!(out, "No session matches: nothing to forget.")?;
        }
        return Ok(());
    }
    if !args.yes {
        if json_out || !std::io::stdin().is_terminal() {
            if json_out {
                render::json(out, &would(&plan))?;
            } else {
                describe(out, &plan, WOULD)?;
            }
            out.flush()?;
            bail!("nothing was removed: run again with --yes to forget these sessions");
        }
        describe(out, &plan, WOULD)?;
        if !render::confirm(
            out,
            "Forget them? What only Cairn keeps of them cannot be brought back.",
        )? {
            writeln!(out, "Nothing was removed.")?;
            return Ok(());
        }
    }
    // Only what was listed goes, whatever a sync added meanwhile.
    let done = cairn.forget_planned(&req, &plan, &render::SaysItWaits("forget"))?;
    if json_out {
        render::json(
            out,
            // `removed` is the plan as carried out, whether or not anything matched.
            &serde_json::json!({
                "sessions": done.removed.sessions.len(),
                "records": done.removed.records,
                "removed": done.removed,
                "retained_files_deleted": done.retained_files_deleted,
                "db_bytes_before": done.db_bytes_before,
                "db_bytes_after": done.db_bytes_after,
                "set_aside": done.set_aside,
            }),
        )?;
    } else {
        if args.yes {
            describe(out, &done.removed, "Removed")?;
        }
        writeln!(
            out,
            "Forgot {} and {}; {} deleted; database {} → {} bytes.",
            plural(done.removed.sessions.len(), "session"),
            plural(done.removed.records, "record"),
            plural(done.retained_files_deleted, "retained file"),
            done.db_bytes_before,
            done.db_bytes_after
        )?;
        for aside in &done.set_aside {
            set_aside(out, aside)?;
        }
    }
    Ok(())
}

/// One line for a database a rebuild set aside that held forgotten sessions: removed there
/// too, or still there (or maybe), with why and the fix.
fn set_aside(out: &mut impl Write, aside: &ForgetSetAside) -> std::io::Result<()> {
    let path = clean(&aside.path);
    let why = clean(aside.why.as_deref().unwrap_or(""));
    let fix = format!(
        "delete it once the rebuilt archive is checked: {}",
        rm_line(aside)
    );
    match aside.fate {
        SetAsideFate::Removed => writeln!(
            out,
            "Also removed from {path}, the database a rebuild set aside ({} there).",
            plural(aside.sessions, "session")
        ),
        SetAsideFate::Holds => writeln!(
            out,
            "{path}, the database a rebuild set aside, still holds {} of them ({why}): {fix}",
            plural(aside.sessions, "session")
        ),
        SetAsideFate::MayHold => writeln!(
            out,
            "{path}, the database a rebuild set aside, may still hold them ({why}): {fix}"
        ),
        SetAsideFate::Deleted => writeln!(
            out,
            "Deleted {path}, left by a rebuild from the copies that did not finish."
        ),
    }
}

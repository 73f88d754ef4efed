//! `cairn link` and `cairn unlink`: a person's word on what a session is related to. Flags only;
//! the core parses and checks the target, stores the correction and keeps it across relinks.

use std::io::Write;

use anyhow::Result;
use cairn_core::Cairn;
use cairn_core::git::correct::{CorrectionAction, LinkCorrection};
use cairn_core::git::targets::Target;

use crate::render::{self, clean};

#[derive(clap::Args)]
pub struct LinkArgs {
    /// A session key (`sha256-…`) or the agent's own session id.
    session: String,
    /// The branch (`main`, `refs/heads/main`), pull request (`#123` or its URL), review
    /// (`review:<id>`) or change (`change:<id>`).
    #[arg(long, value_name = "TARGET")]
    to: String,
    /// Why, in a line: shown beside the link wherever it is listed.
    #[arg(long)]
    reason: Option<String>,
}

pub fn run(
    args: LinkArgs,
    action: CorrectionAction,
    cairn: &Cairn,
    dir: &std::path::Path,
    json: bool,
    out: &mut impl Write,
) -> Result<()> {
    let target = Target::parse_to(&args.to)?;
    // A rebuild from the copies holds the capture lock as long as it runs: the wait is said.
    let waits = render::SaysItWaits(match action {
        CorrectionAction::Link => "link",
        CorrectionAction::Unlink => "unlink",
    });
    let correction = cairn.correct_link(
        &args.session,
        &target,
        action,
        args.reason.as_deref(),
        Some(&waits),
    )?;
    // A branch the repository here does not have is linked all the same (it may be made
    // later, or live in another clone), but a typo should not pass unseen.
    if action == CorrectionAction::Link
        && let Some(name) = target.branch_name()
        && let Ok(repo) = cairn_core::git::repo::Repo::discover(dir)
        && !repo.has_branch(name)
    {
        eprintln!(
            "note: {} has no branch named {}; linked all the same (`cairn unlink` takes it back)",
            clean(&repo.root.display().to_string()),
            clean(name)
        );
    }
    // A link is kept by target name, but skim lists a session in the repository it ran in:
    // one linked from another repository's folder is shown there, not here.
    if action == CorrectionAction::Link
        && let Ok(here) = cairn_core::git::repo::Repo::discover(dir)
        && let Ok(session) = cairn.session(&args.session)
        && let Some(cwd) = session.cwd.as_deref()
        && let Ok(there) = cairn_core::git::repo::Repo::discover(std::path::Path::new(cwd))
        && there.common_dir != here.common_dir
    {
        eprintln!(
            "note: the session ran in {}, not in {}: `cairn skim` lists it from there (or here with --all-repos)",
            clean(&there.root.display().to_string()),
            clean(&here.root.display().to_string())
        );
    }
    if json {
        return render::json(out, &serde_json::json!({ "link": correction }));
    }
    // The session as the person named it: its key only when that is what they typed.
    human(out, &args.session, &correction)
}

fn human(out: &mut impl Write, named: &str, c: &LinkCorrection) -> Result<()> {
    let session = format!("session {}", clean(named.trim()));
    let target = clean(&cairn_core::git::targets::label(&c.target_key));
    match c.action {
        CorrectionAction::Link => {
            writeln!(out, "Linked {session} to {target} (evidence: person).")?;
        }
        CorrectionAction::Unlink => {
            let removed = match c.links_removed {
                0 => "no link was listed".to_owned(),
                1 => "1 link removed".to_owned(),
                n => format!("{n} links removed"),
            };
            writeln!(
                out,
                "Unlinked {session} from {target} ({removed}); syncs will not link it again."
            )?;
        }
    }
    writeln!(out, "{}", clean(&c.sentence()))?;
    Ok(())
}

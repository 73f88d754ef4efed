//! `cairn resume`: print the command that continues a session in its agent (default), or run
//! it (`--run`) in the session's folder, as an argument list, never through a shell.

use std::io::Write;

use anyhow::{Result, anyhow};
use cairn_core::Cairn;

use crate::render::{self, clean};

#[derive(clap::Args)]
pub struct ResumeArgs {
    /// A session key (`sha256-…`) or the agent's own session id.
    session: String,
    /// Run the command in the session's folder (the agent takes over this terminal).
    #[arg(long)]
    run: bool,
}

pub fn run(args: ResumeArgs, cairn: &Cairn, json: bool, out: &mut impl Write) -> Result<i32> {
    let resume = cairn.resume_command(&args.session)?;
    // The session as the person named it: another name (a pulled session's agent id is its
    // publisher's key) would be one they never saw.
    let handle = clean(args.session.trim());
    if !args.run {
        if json {
            render::json(out, &resume)?;
            return Ok(0);
        }
        // Stdout holds the command alone (`eval "$(cairn resume X)"`); what stands in its way
        // goes to stderr, and no command at all is an error.
        let Some(line) = &resume.shell else {
            return Err(anyhow!(
                "cannot resume {handle}: {}",
                clean(
                    resume
                        .problem
                        .as_deref()
                        .unwrap_or("its agent has no resume command")
                )
            ));
        };
        writeln!(out, "{}", clean(line))?;
        if let Some(problem) = &resume.problem {
            eprintln!("note: {}", clean(problem));
        }
        return Ok(0);
    }
    if !resume.runnable() {
        return Err(anyhow!(
            "cannot resume {handle}: {}",
            clean(resume.problem.as_deref().unwrap_or("no command"))
        ));
    }
    let (program, rest) = resume
        .argv
        .split_first()
        .ok_or_else(|| anyhow!("no command to run"))?;
    let mut command = std::process::Command::new(program);
    command.args(rest);
    if let Some(cwd) = &resume.cwd {
        command.current_dir(cwd);
    }
    let status = command.status().map_err(|e| {
        anyhow!(
            "cannot run {}: {e}; is {} installed and on PATH?",
            clean(program),
            clean(program)
        )
    })?;
    Ok(status.code().unwrap_or(1))
}

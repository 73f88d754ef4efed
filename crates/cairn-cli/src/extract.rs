//! `cairn recall extract …`: flags, calls into `Cairn`, rendering. No extraction rules here.

use std::io::Write;
use std::sync::Mutex;

use anyhow::Result;
use cairn_core::Cairn;
use cairn_core::recall::extract::{Event, ExtractProgress, RunOptions, Scope};
use clap::{Args, Subcommand};

use crate::render::{self, clean};
use cairn_core::text::plural;

#[derive(Subcommand)]
pub enum ExtractCommand {
    /// Size and cost of what `run` would send (nothing is sent).
    Preview {
        #[command(flatten)]
        scope: ScopeArgs,
        /// List every session with its units and characters.
        #[arg(long)]
        sessions: bool,
    },
    /// One extraction pass: read the sessions in scope and write unreviewed entries.
    Run {
        #[command(flatten)]
        scope: ScopeArgs,
        /// Report progress on stderr even when it is not a terminal.
        #[arg(long)]
        progress: bool,
    },
    /// Where extraction stands: the configured generation, coverage, generations, failures.
    Status,
    /// Serve the configured generation's entries (retires the active generation).
    Activate,
    /// Retire a generation: archive its unreviewed entries.
    Retire {
        /// Fingerprint, or a unique prefix of at least 6 characters.
        fingerprint: String,
        /// Needed to retire the active generation.
        #[arg(long)]
        force: bool,
    },
    /// List the generators at hand (agent CLIs on PATH, local servers, API-key variables by
    /// name; nothing is sent), then check the configured one with real calls: the server's
    /// models and one tiny extraction.
    Doctor,
}

#[derive(Args, Default)]
pub struct ScopeArgs {
    /// One session (key or the agent's id); skips the quiet period and the failure wait.
    #[arg(long)]
    session: Option<String>,
    /// Sessions active at or after this time (YYYY-MM-DD, RFC 3339, `today`, `yesterday`, or a
    /// span back from now such as `7d`).
    #[arg(long, value_parser = crate::render::when)]
    since: Option<String>,
    /// Sessions of this project.
    #[arg(long)]
    project: Option<String>,
    /// At most this many sessions, most recently active first (0 = all).
    #[arg(long, default_value_t = 0)]
    limit: u32,
}

impl ScopeArgs {
    fn scope(&self) -> Scope {
        Scope {
            session: self.session.clone(),
            // A day on the clock sessions are listed on, as search and forget read one.
            since: crate::render::local_day(self.since.clone(), false),
            project: self.project.clone(),
            limit: self.limit,
        }
    }
}

/// Sessions a pass leaves for later because an agent may still be writing them: said, or a
/// pass that read nothing of a session that just ended looks like one that found nothing.
fn waiting_quiet(out: &mut impl Write, n: u32, left: &str) -> Result<()> {
    if n > 0 {
        writeln!(
            out,
            "{} {left} for a later pass: active within [recall.extract] quiet_period (`--session <id>` reads one now)",
            plural(n, "session")
        )?;
    }
    Ok(())
}

/// The first 12 characters of a key or fingerprint, cleaned (never a byte slice).
fn short(fp: &str) -> String {
    clean(&fp.chars().take(12).collect::<String>())
}

/// Progress lines on stderr.
struct Lines {
    enabled: bool,
    state: Mutex<Counts>,
}

/// Sessions of a pass: how many it will read, how many were started (each start numbered
/// in turn, so sessions read side by side never share a number).
#[derive(Default)]
struct Counts {
    started: u32,
    total: u32,
}

impl ExtractProgress for Lines {
    fn event(&self, e: &Event) {
        if !self.enabled {
            return;
        }
        if let Some(line) = self.line(e) {
            say_err!("{line}");
        }
    }
}

impl Lines {
    /// The line an event prints, if any.
    fn line(&self, e: &Event) -> Option<String> {
        let mut st = self
            .state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let line = match e {
            Event::PassStarted {
                fingerprint,
                sessions,
            } => {
                st.total = *sessions;
                format!(
                    "extracting {} with generation {}",
                    plural(*sessions, "session"),
                    short(fingerprint)
                )
            }
            Event::SessionStarted {
                session_key,
                title,
                units_todo,
                ..
            } => {
                st.started += 1;
                format!(
                    "[{}/{}] {} {}: {}",
                    st.started,
                    st.total,
                    short(session_key),
                    render::line(title, render::TITLE_CHARS),
                    plural(*units_todo, "unit")
                )
            }
            Event::UnitDone {
                session_key,
                unit,
                units_total,
                entries,
            } => format!(
                "  {} unit {unit}/{units_total}: +{entries}",
                short(session_key)
            ),
            Event::SessionDone { .. } => return None,
            Event::SessionFailed { session_key, error } => {
                format!("  {} failed: {}", short(session_key), clean(error))
            }
            Event::Aborted { error } => format!("stopped: {}", clean(error)),
            Event::Activated { fingerprint } => {
                format!("generation {} activated", short(fingerprint))
            }
        };
        Some(line)
    }
}

/// `names` says a session as human output may: its agent's id, its key under `--keys`.
pub fn run(
    cmd: ExtractCommand,
    cairn: &Cairn,
    json_out: bool,
    names: &crate::recall::Names<'_>,
    out: &mut impl Write,
) -> Result<bool> {
    match cmd {
        ExtractCommand::Preview { scope, sessions } => {
            let p = cairn.recall_extract_preview(&scope.scope())?;
            if json_out {
                render::json(out, &p)?;
                return Ok(true);
            }
            match &p.fingerprint {
                Some(fp) => writeln!(out, "Model: {} (generation {})", clean(&p.model), short(fp))?,
                None => writeln!(
                    out,
                    "Model: not configured (every session counts as unread)"
                )?,
            }
            writeln!(
                out,
                "Would read: {}, {} (model calls before any splitting)",
                plural(p.sessions, "session"),
                plural(p.units, "unit")
            )?;
            waiting_quiet(out, p.waiting_quiet, "would be left")?;
            writeln!(
                out,
                "Characters: {}  ≈ input tokens: {}  output tokens at most: {}",
                p.chars, p.estimated_input_tokens, p.max_output_tokens
            )?;
            let shown = if sessions { p.sessions_list.len() } else { 10 };
            for s in p.sessions_list.iter().take(shown) {
                writeln!(
                    out,
                    "  {}  {}/{} units  {} chars  {}  {}",
                    names.session(&s.session_key),
                    s.units_todo,
                    s.units_total,
                    s.chars,
                    clean(&s.project),
                    render::line(&s.title, render::TITLE_CHARS)
                )?;
            }
            if p.sessions_list.len() > shown {
                writeln!(
                    out,
                    "  … {} more (--sessions lists all)",
                    p.sessions_list.len() - shown
                )?;
            }
        }
        ExtractCommand::Run { scope, progress } => {
            let lines = Lines {
                enabled: render::shows_progress(progress, json_out),
                state: Mutex::new(Counts::default()),
            };
            let r = cairn.recall_extract_run(
                &RunOptions {
                    scope: scope.scope(),
                    cancel: None,
                },
                &lines,
            )?;
            if json_out {
                render::json(out, &r)?;
            } else {
                writeln!(out, "Sessions: {} done, {} failed", r.sessions, r.failed)?;
                writeln!(out, "Units: {} ({} model calls)", r.units, r.calls)?;
                writeln!(out, "Entries: {} new", r.entries)?;
                if r.evidence_out_of_unit > 0 {
                    writeln!(
                        out,
                        "Evidence not as cited: {} (the model cited records outside the part of the session it was shown, or backwards; each is bound to that whole part with a note, so check it when you review)",
                        plural(r.evidence_out_of_unit, "entry")
                    )?;
                }
                writeln!(
                    out,
                    "Tokens: {} prompt, {} completion",
                    r.usage.prompt_tokens, r.usage.completion_tokens
                )?;
                if r.activated {
                    writeln!(out, "Generation activated: {}", short(&r.fingerprint))?;
                }
                for f in &r.failures {
                    writeln!(out, "failed {}: {}", clean(&f.session_key), clean(&f.error))?;
                }
                waiting_quiet(out, r.waiting_quiet, "left")?;
                if r.entries > 0 && r.staged {
                    // Review lists served entries: these are not, yet.
                    writeln!(
                        out,
                        "The new entries wait, staged, until generation {} has read every session (then they reach the review inbox, unreviewed): `cairn recall extract run` reads the rest, `cairn recall extract activate` publishes what it has now.",
                        short(&r.fingerprint)
                    )?;
                } else if r.entries > 0 {
                    writeln!(out, "Review the new entries with `cairn recall review`.")?;
                }
            }
            out.flush()?;
            unfinished(&r)?;
        }
        ExtractCommand::Status => {
            let s = cairn.recall_extract_status()?;
            if json_out {
                render::json(out, &s)?;
                return Ok(true);
            }
            writeln!(
                out,
                "Extraction: {}",
                if s.enabled { "enabled" } else { "disabled" }
            )?;
            if s.model.is_empty() {
                writeln!(out, "Model: not configured ([recall.extract] model)")?;
            } else {
                let dep = if s.deployment.is_empty() {
                    String::new()
                } else {
                    format!(" deployment {}", clean(&s.deployment))
                };
                writeln!(
                    out,
                    "Model: {}{dep} (profile {})",
                    clean(&s.model),
                    s.profile
                )?;
            }
            if let (Some(name), Some(endpoint)) = (&s.server, &s.endpoint) {
                writeln!(out, "Server: {} {}", clean(name), clean(endpoint))?;
            }
            writeln!(
                out,
                "Segmenter: {} max_window_chars={} concurrency={}",
                s.segmenter, s.max_window_chars, s.concurrency
            )?;
            if let Some(fp) = &s.fingerprint {
                let state = s.state.map_or("not started", |st| st.as_str());
                writeln!(out, "Generation: {} ({state})", clean(fp))?;
                writeln!(
                    out,
                    "Sessions: {} done, {} partial, {} failed, {} not started",
                    s.sessions_done, s.sessions_partial, s.sessions_failed, s.not_started
                )?;
                if s.sessions_empty > 0 {
                    // Counted apart, as a pass sends nothing of them: coverage reaches 100%
                    // without them, and `run` never numbers them.
                    writeln!(
                        out,
                        "Left out: {} with nothing to read (every record is one the model is not shown: a compaction's summary request, system-injected prompts, reasoning)",
                        plural(s.sessions_empty, "session")
                    )?;
                }
                let pct = if s.units_total == 0 {
                    0.0
                } else {
                    100.0 * f64::from(s.units_done) / f64::from(s.units_total)
                };
                if s.not_started > 0 {
                    // Units are counted when a session is started: the ones not started yet
                    // are in no total, so a percentage would overstate what is done.
                    writeln!(
                        out,
                        "Units: {} of {} in the sessions started so far; {} not started (`cairn recall extract preview` counts what is left)",
                        s.units_done,
                        s.units_total,
                        plural(s.not_started, "session")
                    )?;
                } else {
                    writeln!(out, "Units: {}/{} ({pct:.0}%)", s.units_done, s.units_total)?;
                }
                // By where they stand, in the words `cairn recall`, `review` and the desktop
                // use: trusted only once a person accepted them. States with none are not
                // named, but trusted and unreviewed always are.
                let mut states = vec![
                    format!("{} trusted (accepted by a person)", s.entries_trusted),
                    format!("{} unreviewed (in the review inbox)", s.entries_unreviewed),
                ];
                for (n, what) in [
                    (
                        s.entries_reviewed_untrusted,
                        "accepted but not trusted now (in the review inbox)",
                    ),
                    (
                        s.entries_staged,
                        "staged (in Recall once the generation is activated)",
                    ),
                    (s.entries_rejected, "rejected"),
                    (s.entries_archived, "archived (retired, replaced or merged)"),
                ] {
                    if n > 0 {
                        states.push(format!("{n} {what}"));
                    }
                }
                let stale = if s.entries_stale > 0 {
                    format!(
                        "; {} flagged stale (a cited file changed since; in the review inbox)",
                        s.entries_stale
                    )
                } else {
                    String::new()
                };
                writeln!(out, "Entries: {}: {}{stale}", s.entries, states.join(", "))?;
            }
            if let Some(r) = &s.last_run {
                writeln!(
                    out,
                    "Last run: {} sessions={} failed={} units={} entries={}{}{}",
                    clean(&r.started_at),
                    r.sessions,
                    r.failed,
                    r.units,
                    r.entries,
                    if r.activated { " activated" } else { "" },
                    r.aborted
                        .as_deref()
                        .map(|a| format!(" stopped: {}", clean(a)))
                        .unwrap_or_default()
                )?;
            }
            if !s.generations.is_empty() {
                writeln!(out, "Generations:")?;
                for g in &s.generations {
                    writeln!(
                        out,
                        "{} {}  {:8}  model={}  sessions={} units={}/{} entries={}",
                        if g.configured { "*" } else { " " },
                        short(&g.fingerprint),
                        g.state.as_str(),
                        clean(&g.model),
                        g.sessions_done,
                        g.units_done,
                        g.units_total,
                        g.entries
                    )?;
                }
            }
            for f in &s.failures {
                writeln!(out, "failed {}: {}", clean(&f.session_key), clean(&f.error))?;
            }
        }
        ExtractCommand::Activate => {
            let l = cairn.recall_extract_activate()?;
            if json_out {
                render::json(out, &l)?;
            } else {
                writeln!(
                    out,
                    "Activated {}: {} entries in the review inbox, unreviewed (trusted once a person accepts them).",
                    short(&l.fingerprint),
                    l.published
                )?;
                if let Some(prev) = &l.retired {
                    writeln!(
                        out,
                        "Retired {}: {} unreviewed entries archived.",
                        short(prev),
                        l.archived
                    )?;
                }
            }
        }
        ExtractCommand::Retire { fingerprint, force } => {
            let l = cairn.recall_extract_retire(&fingerprint, force)?;
            if json_out {
                render::json(out, &l)?;
            } else {
                writeln!(
                    out,
                    "Retired {}: {} unreviewed entries archived.",
                    short(&l.fingerprint),
                    l.archived
                )?;
            }
        }
        ExtractCommand::Doctor => return doctor(Ok(cairn), &cairn.config_path(), json_out, out),
    }
    Ok(true)
}

/// A pass that stopped early or failed sessions fails the command (exit 1, the reason on stderr
/// as every error is), after its report: a script or a scheduler must not take it for a
/// complete run.
fn unfinished(r: &cairn_core::recall::extract::RunReport) -> Result<()> {
    if let Some(e) = &r.aborted {
        return Err(cairn_core::Error::External(format!(
            "extraction stopped early: {e}; what was read is kept, and the next run goes on from there"
        ))
        .into());
    }
    if let Some(first) = r.failures.first() {
        return Err(cairn_core::Error::External(format!(
            "{} failed, the first {}: {}; `cairn recall extract status` lists them; each is tried again after `failure_backoff`, or at once with --session <key>",
            plural(r.failed, "session"),
            first.session_key,
            first.error
        ))
        .into());
    }
    Ok(())
}

/// `cairn recall extract doctor`: the generators at hand first (detection needs no
/// configuration), then the configured one checked with real calls, or why the configuration
/// cannot be used (naming the file and the fix). `cairn` is the archive, or why it could not be
/// opened (a config.toml that does not parse). Ok(false) when a check or the configuration
/// failed.
pub fn doctor(
    cairn: std::result::Result<&Cairn, &cairn_core::Error>,
    config_path: &std::path::Path,
    json_out: bool,
    out: &mut impl Write,
) -> Result<bool> {
    let generators = cairn_core::llm::detect::detect(&cairn_core::llm::detect::Probe::from_env());
    let checked = match cairn {
        Err(e) => Err(cairn_core::ErrorReport::from(e)),
        Ok(c) => c
            .extract_settings()
            .and_then(|s| {
                if s.is_configured() {
                    c.recall_extract_doctor().map(Some)
                } else {
                    Ok(None)
                }
            })
            .map_err(cairn_core::ErrorReport::from),
    };
    let (d, problem) = match checked {
        Ok(d) => (d, None),
        Err(e) => (None, Some(e)),
    };
    let configured = d.is_some();
    if json_out {
        #[derive(serde::Serialize)]
        struct Out<'a> {
            generators: &'a [cairn_core::llm::detect::DetectedGenerator],
            configured: bool,
            /// Why the configuration cannot be used, when it cannot.
            #[serde(skip_serializing_if = "Option::is_none")]
            config_error: Option<&'a cairn_core::ErrorReport>,
            #[serde(flatten)]
            doctor: Option<&'a cairn_core::recall::extract::ExtractDoctor>,
        }
        render::json(
            out,
            &Out {
                generators: &generators,
                configured,
                config_error: problem.as_ref(),
                doctor: d.as_ref(),
            },
        )?;
    } else {
        write_detected(out, &generators)?;
        match (&d, &problem) {
            (Some(d), _) => {
                write_doctor(out, d)?;
                // Checked and working, yet `run` would refuse: said here, not at the run.
                let off = cairn
                    .ok()
                    .and_then(|c| c.extract_settings().ok())
                    .is_some_and(|s| !s.enabled);
                if off {
                    writeln!(
                        out,
                        "\nExtraction is off: `cairn recall extract run` refuses until `enabled = true` is set under [recall.extract] in {} (a pass sends redacted transcript text to this generator).",
                        clean(&config_path.display().to_string())
                    )?;
                }
            }
            (None, Some(e)) => {
                writeln!(
                    out,
                    "\nThe configuration cannot be used: {}",
                    clean(&e.message)
                )?;
                writeln!(
                    out,
                    "Fix: {}",
                    clean(e.hint.as_deref().unwrap_or(
                        "correct it in the file named above, or pick a generator again in the desktop app (Settings → Recall extraction), which rewrites the section"
                    ))
                )?;
            }
            (None, None) => writeln!(
                out,
                "\nNo generator is configured: pick one in the desktop app (Settings → Recall extraction), or set `generator` (an agent CLI) or `model` and a server under [recall.extract] in {}, for example:\n\n  [recall.extract]\n  enabled = true\n  generator = \"claude\"          # an agent CLI on PATH; or, for a model server:\n  # model = \"qwen2.5-coder\"\n  # [recall.extract.servers.local]\n  # endpoint = \"http://127.0.0.1:11434/v1\"",
                clean(&config_path.display().to_string())
            )?,
        }
    }
    Ok(problem.is_none() && d.as_ref().is_none_or(|d| d.ok()))
}

fn write_detected(
    out: &mut dyn Write,
    generators: &[cairn_core::llm::detect::DetectedGenerator],
) -> Result<()> {
    use cairn_core::llm::detect::DetectedKind;
    writeln!(out, "Generators at hand (nothing was sent):")?;
    if generators.is_empty() {
        writeln!(
            out,
            "  none: install an agent CLI (claude, codex, gemini, copilot), start a local server (Ollama, LM Studio, llama.cpp, vLLM), or set an API-key variable"
        )?;
    }
    for g in generators {
        let kind = match g.kind {
            DetectedKind::Agent => "agent ",
            DetectedKind::Server => "server",
            DetectedKind::Key => "key   ",
        };
        let mut line = format!("  {kind} {}", clean(&g.label));
        if let Some(p) = &g.path {
            line.push_str(&format!(" at {}", clean(p)));
        }
        if let Some(e) = &g.endpoint {
            line.push_str(&format!(" {}", clean(e)));
        }
        if !g.models.is_empty() {
            let shown: Vec<String> = g.models.iter().take(5).map(|m| clean(m)).collect();
            let more = g.models.len().saturating_sub(5);
            line.push_str(&format!(" models: {}", shown.join(", ")));
            if more > 0 {
                line.push_str(&format!(" (+{more})"));
            }
        }
        if g.paid {
            line.push_str(" (paid API)");
        }
        writeln!(out, "{line}")?;
        if let Some(p) = &g.problem {
            writeln!(out, "         note: {}", clean(p))?;
        }
    }
    Ok(())
}

fn write_doctor(out: &mut dyn Write, d: &cairn_core::recall::extract::ExtractDoctor) -> Result<()> {
    writeln!(out)?;
    writeln!(out, "Model: {} (profile {})", clean(&d.model), d.profile)?;
    if !d.deployment.is_empty() {
        writeln!(out, "Deployment: {}", clean(&d.deployment))?;
    }
    writeln!(out, "Server: {} {}", clean(&d.server), clean(&d.endpoint))?;
    writeln!(
        out,
        "Segmenter: {} max_window_chars={}",
        d.segmenter, d.max_window_chars
    )?;
    writeln!(out, "Fingerprint: {}", clean(&d.fingerprint))?;
    for c in &d.checks {
        writeln!(
            out,
            "{} {}: {}",
            if c.ok { "ok  " } else { "FAIL" },
            clean(&c.name),
            clean(&c.detail)
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two sessions read side by side (concurrency 2) start before either is done: each start
    /// has its own number.
    #[test]
    fn sessions_started_side_by_side_are_numbered_apart() {
        let lines = Lines {
            enabled: true,
            state: Mutex::new(Counts::default()),
        };
        lines.line(&Event::PassStarted {
            fingerprint: "f".repeat(64),
            sessions: 4,
        });
        let start = |key: &str| Event::SessionStarted {
            session_key: key.to_owned(),
            title: "t".to_owned(),
            units_total: 3,
            units_todo: 3,
        };
        let a = lines.line(&start("aaaa")).unwrap_or_default();
        let b = lines.line(&start("bbbb")).unwrap_or_default();
        assert!(a.starts_with("[1/4] aaaa"), "{a}");
        assert!(b.starts_with("[2/4] bbbb"), "{b}");
    }
}

//! `cairn recall extract …`: flags, calls into `Cairn`, rendering. No extraction rules here.

use std::io::Write;
use std::sync::Mutex;

use anyhow::Result;
use cairn_core::Cairn;
use cairn_core::config::{GeneratorChoice, SetupChoice};
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
    /// Put the configured generation's entries into the review inbox (retires the active generation).
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
    /// Choose the generator and when passes run, test it with one tiny request, and write
    /// [recall.extract] in config.toml (comments and other keys kept). With no generator named
    /// it lists those at hand, numbered as doctor lists them, and asks which; without a
    /// terminal (or with --json) name one with --generator, --agent-cli or --endpoint.
    Setup(SetupArgs),
}

/// `cairn recall extract setup`'s choices: what the desktop's Settings → Recall extraction
/// form holds (`ExtractSetup`). Left out, a choice keeps what config.toml says, but for the key
/// variable under --endpoint: it was meant for the server named before, so it is dropped unless
/// --api-key-env names it again.
#[derive(Args)]
pub struct SetupArgs {
    /// A generator at hand, by its number or name in the list (`claude`, `ollama`,
    /// `OPENAI_API_KEY`): an agent CLI, a local server (its first model unless --model), or an
    /// API key's provider (needs --model).
    #[arg(long, value_name = "N|NAME", conflicts_with_all = ["agent_cli", "endpoint"])]
    generator: Option<String>,
    /// An agent CLI, whether or not it is on PATH now: claude, codex, gemini or copilot.
    #[arg(long, value_name = "NAME", value_parser = cairn_core::config::GENERATOR_AGENTS, conflicts_with = "endpoint")]
    agent_cli: Option<String>,
    /// An OpenAI-compatible server's base URL, e.g. http://127.0.0.1:11434/v1 (plain HTTP only
    /// to this machine, unless --allow-http); needs --model. A saved key variable is dropped unless --api-key-env
    /// names it again.
    #[arg(long, value_name = "URL", requires = "model")]
    endpoint: Option<String>,
    /// The model to ask: one the server serves; for an agent CLI, instead of its default.
    #[arg(long)]
    model: Option<String>,
    /// The *name* of the environment variable that holds the API key, never the key itself
    /// (Cairn keeps no key in config.toml).
    #[arg(long, value_name = "VAR", conflicts_with = "agent_cli")]
    api_key_env: Option<String>,
    /// When the desktop app runs passes: after-sync (the default), nightly or manual.
    #[arg(long, value_name = "WHEN", value_parser = schedule)]
    schedule: Option<cairn_core::config::Schedule>,
    /// A paid API's price in dollars per million input tokens, for preview's cost estimate.
    #[arg(long, value_name = "DOLLARS", value_parser = price)]
    input_price: Option<f64>,
    /// A paid API's price in dollars per million output tokens.
    #[arg(long, value_name = "DOLLARS", value_parser = price)]
    output_price: Option<f64>,
    /// Save it with extraction off (`run` refuses until setup runs again without --off).
    #[arg(long)]
    off: bool,
    /// Save without the test request.
    #[arg(long)]
    no_test: bool,
    /// Allow plain http:// to a server that is not this machine (the transcript text then
    /// crosses the network unencrypted: only for a network that is yours). Given for the
    /// server this setup names; a new --endpoint starts without it.
    #[arg(long, conflicts_with = "agent_cli")]
    allow_http: bool,
    /// Save --model though the server's model list does not name it (a server that answers
    /// to names it does not list); the test request then decides. A server that cannot be
    /// reached, or whose list cannot be read, does not stop the save: the output says the
    /// model went unchecked.
    #[arg(long, conflicts_with = "agent_cli")]
    model_unlisted: bool,
}

impl SetupArgs {
    /// Whether a choice besides the generator was made (the saved generator then stays).
    fn changes_something(&self) -> bool {
        self.model.is_some()
            || self.api_key_env.is_some()
            || self.schedule.is_some()
            || self.input_price.is_some()
            || self.output_price.is_some()
            || self.off
            || self.allow_http
            || self.model_unlisted
    }
}

/// `--schedule`: `after-sync` as typed on a command line, or as config.toml spells it.
fn schedule(typed: &str) -> Result<cairn_core::config::Schedule, String> {
    cairn_core::config::Schedule::parse(&typed.trim().replace('-', "_"))
        .ok_or_else(|| "pick after-sync, nightly or manual".to_owned())
}

/// A price: a number of dollars, 0 or more.
fn price(typed: &str) -> Result<f64, String> {
    typed
        .trim()
        .parse::<f64>()
        .ok()
        .filter(|p| p.is_finite() && *p >= 0.0)
        .ok_or_else(|| "a price is a number of dollars, 0 or more (e.g. 0.15)".to_owned())
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

/// Progress lines on stderr. `name` says a session as a person knows it (`Names::said`: no
/// key unless `--keys`); events come with no lock on the archive held, so it may read it.
struct Lines<'a> {
    enabled: bool,
    state: Mutex<Counts>,
    name: &'a (dyn Fn(&str) -> String + Sync),
}

/// Sessions of a pass: how many it will read, how many were started (each start numbered
/// in turn, so sessions read side by side never share a number), and the number each started
/// session's later lines go by.
#[derive(Default)]
struct Counts {
    started: u32,
    total: u32,
    numbers: std::collections::HashMap<String, u32>,
}

impl ExtractProgress for Lines<'_> {
    fn event(&self, e: &Event) {
        if !self.enabled {
            return;
        }
        if let Some(line) = self.line(e) {
            say_err!("{line}");
        }
    }
}

impl Lines<'_> {
    /// The line an event prints, if any.
    fn line(&self, e: &Event) -> Option<String> {
        // Read before the state is locked: sessions read side by side report meanwhile.
        let named = match e {
            Event::SessionStarted { session_key, .. }
            | Event::SessionFailed { session_key, .. } => (self.name)(session_key),
            _ => String::new(),
        };
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
                units_todo,
                ..
            } => {
                st.started += 1;
                let n = st.started;
                st.numbers.insert(session_key.clone(), n);
                format!(
                    "[{n}/{}] {named}: {}",
                    st.total,
                    plural(*units_todo, "unit")
                )
            }
            // A unit goes by its session's number: sessions read side by side interleave.
            Event::UnitDone {
                session_key,
                unit,
                units_total,
                entries,
            } => match st.numbers.get(session_key) {
                Some(n) => format!("  [{n}] unit {unit}/{units_total}: +{entries}"),
                None => format!("  unit {unit}/{units_total}: +{entries}"),
            },
            Event::SessionDone { .. } => return None,
            Event::SessionFailed { error, .. } => {
                format!("  {named} failed: {}", clean(error))
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
            let name = |key: &str| names.said(key);
            let lines = Lines {
                enabled: render::shows_progress(progress, json_out),
                state: Mutex::new(Counts::default()),
                name: &name,
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
                    writeln!(
                        out,
                        "failed {}: {}",
                        names.said(&f.session_key),
                        clean(&f.error)
                    )?;
                }
                waiting_quiet(out, r.waiting_quiet, "left")?;
                if r.entries > 0 && r.staged {
                    // Review lists the entries in Recall: these are not, yet.
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
            unfinished(&r, names)?;
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
                writeln!(
                    out,
                    "Model: not configured; `cairn recall extract setup` chooses one (in the desktop app, Settings → Recall extraction)"
                )?;
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
                writeln!(
                    out,
                    "failed {}: {}",
                    names.said(&f.session_key),
                    clean(&f.error)
                )?;
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
        ExtractCommand::Setup(args) => return setup(cairn, &args, json_out, out),
    }
    Ok(true)
}

/// A pass that stopped early or failed sessions fails the command (exit 1, the reason on stderr
/// as every error is), after its report: a script or a scheduler must not take it for a
/// complete run.
fn unfinished(
    r: &cairn_core::recall::extract::RunReport,
    names: &crate::recall::Names<'_>,
) -> Result<()> {
    if let Some(e) = &r.aborted {
        return Err(cairn_core::Error::External(format!(
            "extraction stopped early: {e}; what was read is kept, and the next run goes on from there"
        ))
        .into());
    }
    if let Some(first) = r.failures.first() {
        // The command that reads it again names it as a person types it back (its agent's
        // id); one without such an id is named by its key only under --keys.
        let again = match names.session(&first.session_key) {
            typed
                if typed.starts_with(|c: char| c.is_ascii_alphanumeric())
                    && !typed.contains(char::is_whitespace) =>
            {
                format!("--session {typed}")
            }
            _ => "--session <key> (`cairn sessions --keys` lists them)".to_owned(),
        };
        return Err(cairn_core::Error::External(format!(
            "{} failed, the first {}: {}; `cairn recall extract status` lists them; each is tried again after `failure_backoff`, or at once with {again}",
            plural(r.failed, "session"),
            names.said(&first.session_key),
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
                        "\nExtraction is off: `cairn recall extract run` refuses until {} turns it on (a pass sends redacted transcript text to this generator).",
                        cairn_core::recall::extract::config::SETUP_HOW
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
                        "correct it in the file named above, or pick a generator again with `cairn recall extract setup` or in the desktop app (Settings → Recall extraction), which rewrite the section"
                    ))
                )?;
            }
            (None, None) => write_example(out, &generators, config_path)?,
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
    for (n, g) in generators.iter().enumerate() {
        let kind = match g.kind {
            DetectedKind::Agent => "agent ",
            DetectedKind::Server => "server",
            DetectedKind::Key => "key   ",
        };
        // Numbered as `cairn recall extract setup --generator <n>` picks them.
        let mut line = format!("  {}. {kind} {}", n + 1, clean(&g.label));
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

/// With nothing configured: the command that sets up the first generator at hand (one without
/// a problem, if any) and what it would write, so the example is one this machine can run;
/// with nothing at hand, the flags that name one.
fn write_example(
    out: &mut dyn Write,
    generators: &[cairn_core::llm::detect::DetectedGenerator],
    config_path: &std::path::Path,
) -> Result<()> {
    use cairn_core::llm::detect::DetectedKind;
    let file = clean(&config_path.display().to_string());
    let Some((n, g)) = generators
        .iter()
        .enumerate()
        .find(|(_, g)| g.problem.is_none())
        .or_else(|| generators.iter().enumerate().next())
    else {
        writeln!(
            out,
            "\nNo generator is configured, and none is at hand. Name one with `cairn recall extract setup --agent-cli claude` (codex, gemini, copilot) or `cairn recall extract setup --endpoint <url> --model <model> [--api-key-env <VAR>]`, or pick one in the desktop app (Settings → Recall extraction); either writes [recall.extract] in {file}."
        )?;
        return Ok(());
    };
    let base = cairn_core::config::ExtractSetup {
        enabled: true,
        ..Default::default()
    };
    let mut setup = base.with_generator(&g.setup);
    // A hosted API's model is the person's to name.
    let model_flag = if g.kind == DetectedKind::Key {
        setup.model = "<model>".into();
        " --model <model>"
    } else {
        ""
    };
    let toml = cairn_core::config::write_extract_setup("", &setup).unwrap_or_default();
    writeln!(
        out,
        "\nNo generator is configured. `cairn recall extract setup` lists the ones above and asks which; `cairn recall extract setup --generator {}{model_flag}` (or `--generator {}`) sets up {} at once, tested with one tiny request, writing into {file}:\n",
        clean(&g.name),
        n + 1,
        clean(&g.label)
    )?;
    for line in toml.trim_end().lines() {
        if line.trim().is_empty() {
            writeln!(out)?;
        } else {
            writeln!(out, "  {}", clean(line))?;
        }
    }
    writeln!(
        out,
        "\nThe desktop app offers the same list in Settings → Recall extraction."
    )?;
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

/// The one way `setup` refuses: nothing written, the reason and what to type instead.
fn refused(message: String) -> anyhow::Error {
    cairn_core::Error::Invalid(message).into()
}

/// The flags that choose a generator without a question.
const CHOOSE_FLAGS: &str = "--generator <n|name> (a generator `cairn recall extract doctor` lists), --agent-cli <claude|codex|gemini|copilot>, or --endpoint <url> --model <model> [--api-key-env <VAR>]";

/// `cairn recall extract setup`: the generator chosen by a flag or asked for, the other choices
/// applied over what config.toml holds, one tiny test request (the desktop's Test), then
/// `[recall.extract]` written through the core, which checks it loads. Ok(true) once saved.
fn setup(cairn: &Cairn, a: &SetupArgs, json_out: bool, out: &mut impl Write) -> Result<bool> {
    use std::io::IsTerminal as _;
    // Before anything else: a key pasted where its variable's name goes is refused by the
    // flag's name and never repeated.
    if let Some(why) = a
        .api_key_env
        .as_deref()
        .and_then(Cairn::api_key_env_problem)
    {
        return Err(refused(format!("--api-key-env: {why}")));
    }
    // So is a key pasted into the endpoint or the model, before either is printed or sent.
    if let Some((flag, why)) = Cairn::setup_key_problem(
        a.endpoint.as_deref().unwrap_or_default(),
        a.model.as_deref().unwrap_or_default(),
    ) {
        return Err(refused(format!("--{flag}: {why}")));
    }
    let interactive = !json_out && std::io::stdin().is_terminal();
    let saved = cairn.recall_extract_setup()?;
    let configured = saved.generator != "endpoint" || !saved.endpoint.trim().is_empty();
    let generator = if let Some(agent) = &a.agent_cli {
        Some(GeneratorChoice::agent(agent))
    } else if let Some(url) = &a.endpoint {
        Some(GeneratorChoice::endpoint(url))
    } else if let Some(pick) = &a.generator {
        let found = cairn.recall_extract_detect();
        Some(picked(&found, pick)?.setup.clone())
    } else if interactive {
        let found = cairn.recall_extract_detect();
        match ask_generator(out, &found, &saved, configured)? {
            Asked::Keep => None,
            Asked::Take(g) => Some(g),
            Asked::Nothing => {
                writeln!(out, "Nothing was saved.")?;
                return Ok(true);
            }
        }
    } else if configured && a.changes_something() {
        None
    } else {
        return Err(refused(format!(
            "no generator was chosen and there is no terminal to ask on: pass {CHOOSE_FLAGS}"
        )));
    };
    // The core's one rule: a new generator starts blank (a key variable meant for the server
    // before is dropped unless named again), each flag given replaces what the file says.
    let mut chosen = saved.with_choice(&SetupChoice {
        generator,
        model: a.model.clone(),
        api_key_env: a.api_key_env.clone(),
        schedule: a.schedule,
        input_price_per_mtok: a.input_price,
        output_price_per_mtok: a.output_price,
        enabled: Some(!a.off),
    });
    if a.allow_http {
        chosen.allow_http = true;
    }
    // Refused here, by the flag that allows it, rather than by the loaded file's key.
    if chosen.generator == "endpoint"
        && let Some(why) =
            cairn_core::llm::Endpoint::plain_http_refusal(&chosen.endpoint, chosen.allow_http)
    {
        return Err(refused(format!("--endpoint: {}", clean(&why))));
    }
    // Said after the save: a setup refused before it drops nothing.
    let dropped = saved.api_key_env.trim();
    let dropped = (a.endpoint.is_some() && a.api_key_env.is_none() && !dropped.is_empty())
        .then(|| {
            format!(
                "api_key_env {} dropped: it was meant for the server saved before, and --endpoint names one anew; pass --api-key-env {} to keep it.",
                clean(dropped),
                clean(dropped)
            )
        });
    if chosen.generator == "endpoint" && chosen.model.trim().is_empty() {
        if !interactive {
            return Err(refused(format!(
                "--model: name the model {} should answer with",
                render::endpoint(&chosen.endpoint)
            )));
        }
        chosen.model = ask(
            out,
            "Which model? (the provider's or server's list names them)",
        )?;
    }
    let test = if a.no_test {
        None
    } else {
        if !json_out {
            // An agent CLI or a slow model can take a while over even this.
            writeln!(out, "Testing {} with one tiny request…", describe(&chosen))?;
            out.flush()?;
        }
        Some(cairn.recall_extract_test(&chosen, a.model_unlisted)?)
    };
    // The rule `cairn insights setup` follows too (the core's `EndpointCheck::rule`, applied
    // by the test above): a server that could not be reached was not probed, and is saved
    // unchecked, with a note saying so; one that answered must pass the probe.
    let checked = test.as_ref().and_then(|d| d.models.as_ref());
    let note = checked.and_then(|c| {
        c.note(
            "the test request",
            "`cairn recall extract doctor` checks it",
        )
        .map(|n| format!("Test: {}: {}.", clean(&c.endpoint), clean(&n)))
    });
    let reached = checked.is_none_or(|c| c.listing.reached());
    #[derive(serde::Serialize)]
    struct Out<'a> {
        saved: bool,
        config: String,
        setup: &'a cairn_core::config::ExtractSetup,
        /// The test request's checks; absent under --no-test.
        test: Option<&'a cairn_core::recall::extract::ExtractDoctor>,
        next: Vec<&'static str>,
    }
    let config = cairn.config_path().display().to_string();
    let shown = |s: &cairn_core::config::ExtractSetup| cairn_core::config::ExtractSetup {
        endpoint: if s.endpoint.is_empty() {
            String::new()
        } else {
            render::endpoint(&s.endpoint)
        },
        ..s.clone()
    };
    if let Some(d) = test.as_ref().filter(|d| reached && !d.ok()) {
        if json_out {
            let doc = Out {
                saved: false,
                config,
                setup: &shown(&chosen),
                test: Some(d),
                next: Vec::new(),
            };
            render::json(out, &doc)?;
        } else {
            write_checks(out, d)?;
        }
        out.flush()?;
        return Err(cairn_core::Error::External(
            "nothing was saved: the test request failed (its checks are above); fix what it says, or save it anyway with --no-test".into(),
        )
        .into());
    }
    let written = cairn.save_recall_extract_setup(&chosen)?;
    let next = if written.enabled {
        vec!["cairn recall extract preview", "cairn recall extract run"]
    } else {
        vec!["cairn recall extract preview"]
    };
    if json_out {
        let doc = Out {
            saved: true,
            config,
            setup: &shown(&written),
            test: test.as_ref(),
            next,
        };
        render::json(out, &doc)?;
        return Ok(true);
    }
    if let Some(d) = &test {
        write_checks(out, d)?;
    }
    if let Some(note) = note {
        writeln!(out, "{note}")?;
    }
    write_saved(out, &written, &config)?;
    if let Some(note) = dropped {
        writeln!(out, "{note}")?;
    }
    Ok(true)
}

/// The detected generator `pick` names: its number in the list (from 1) or its name.
fn picked<'a>(
    found: &'a [cairn_core::llm::detect::DetectedGenerator],
    pick: &str,
) -> Result<&'a cairn_core::llm::detect::DetectedGenerator> {
    let pick = pick.trim();
    let by_number = pick
        .parse::<usize>()
        .ok()
        .and_then(|n| n.checked_sub(1))
        .and_then(|i| found.get(i));
    let by_name = || {
        found
            .iter()
            .find(|g| g.name == pick)
            .or_else(|| found.iter().find(|g| g.name.eq_ignore_ascii_case(pick)))
    };
    by_number.or_else(by_name).ok_or_else(|| {
        let names: Vec<String> = found
            .iter()
            .enumerate()
            .map(|(i, g)| format!("{} {}", i + 1, clean(&g.name)))
            .collect();
        refused(format!(
            "{} is no generator at hand ({}); --agent-cli <name> or --endpoint <url> --model <model> sets up one that was not found",
            render::line(pick, 60),
            if names.is_empty() {
                "none was found".to_owned()
            } else {
                format!("found: {}", names.join(", "))
            }
        ))
    })
}

/// A line typed at the terminal after `question`, as `render::confirm` reads its answer.
fn ask(out: &mut impl Write, question: &str) -> std::io::Result<String> {
    use std::io::BufRead as _;
    write!(out, "{question} ")?;
    out.flush()?;
    let mut answer = String::new();
    std::io::stdin().lock().read_line(&mut answer)?;
    Ok(answer.trim().to_owned())
}

/// The answer to "Which one?": keep the generator saved, take one from the list, or nothing.
enum Asked {
    Keep,
    Take(GeneratorChoice),
    Nothing,
}

/// The generators at hand, numbered, and the person's pick; `Nothing` when they leave it
/// (Enter with nothing configured, or `q`). Enter keeps a configured generator.
fn ask_generator(
    out: &mut impl Write,
    found: &[cairn_core::llm::detect::DetectedGenerator],
    saved: &cairn_core::config::ExtractSetup,
    configured: bool,
) -> Result<Asked> {
    write_detected(out, found)?;
    if found.is_empty() && !configured {
        return Err(refused(format!(
            "nothing to pick from: name a generator with {CHOOSE_FLAGS}"
        )));
    }
    let keep = if configured {
        format!(", Enter keeps {}", describe(saved))
    } else {
        String::new()
    };
    let range = match found.len() {
        0 => "q".to_owned(),
        1 => "1".to_owned(),
        n => format!("1-{n}"),
    };
    let answer = ask(out, &format!("Which one? [{range}{keep}]"))?;
    match answer.as_str() {
        "" if configured => Ok(Asked::Keep),
        "" | "q" => Ok(Asked::Nothing),
        pick => Ok(Asked::Take(picked(found, pick)?.setup.clone())),
    }
}

/// A setup's generator in a few words: `claude`, `endpoint http://… (key in $VAR)`.
fn describe(s: &cairn_core::config::ExtractSetup) -> String {
    if s.generator != "endpoint" {
        return clean(&s.generator);
    }
    let key = if s.api_key_env.trim().is_empty() {
        String::new()
    } else {
        format!(" (key in ${})", clean(&s.api_key_env))
    };
    format!("endpoint {}{key}", render::endpoint(&s.endpoint))
}

/// The test request's checks, as doctor prints them.
fn write_checks(
    out: &mut impl Write,
    d: &cairn_core::recall::extract::ExtractDoctor,
) -> Result<()> {
    writeln!(out, "Test request ({} ms):", d.probe_ms)?;
    for c in &d.checks {
        writeln!(
            out,
            "  {} {}: {}",
            if c.ok { "ok  " } else { "FAIL" },
            clean(&c.name),
            clean(&c.detail)
        )?;
    }
    Ok(())
}

/// What `setup` wrote, and the commands that use it.
fn write_saved(
    out: &mut impl Write,
    s: &cairn_core::config::ExtractSetup,
    config: &str,
) -> Result<()> {
    writeln!(out, "Saved [recall.extract] in {}:", clean(config))?;
    writeln!(out, "  generator: {}", describe(s))?;
    let model = if s.model.trim().is_empty() {
        "the agent's default".to_owned()
    } else {
        render::line(&s.model, 200)
    };
    writeln!(out, "  model: {model}")?;
    let when = match s.schedule {
        cairn_core::config::Schedule::AfterSync => "after each sync",
        cairn_core::config::Schedule::Nightly => "nightly, around 03:00",
        cairn_core::config::Schedule::Manual => "only when asked",
    };
    writeln!(
        out,
        "  schedule: {} (the desktop app runs passes {when})",
        s.schedule.as_str()
    )?;
    if let (Some(i), Some(o)) = (s.input_price_per_mtok, s.output_price_per_mtok) {
        writeln!(out, "  prices: ${i} in, ${o} out per million tokens")?;
    }
    if s.enabled {
        writeln!(
            out,
            "  extraction: on (a pass sends redacted transcript text to this generator)"
        )?;
        writeln!(
            out,
            "Next: `cairn recall extract preview` shows what a pass would send; `cairn recall extract run` runs one."
        )?;
    } else {
        writeln!(
            out,
            "  extraction: off (`run` refuses until `cairn recall extract setup` runs again without --off)"
        )?;
        writeln!(
            out,
            "Next: `cairn recall extract preview` shows what a pass would send."
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two sessions read side by side (concurrency 2) start before either is done: each start
    /// has its own number, which its units go by; each is said by its name, never its key.
    #[test]
    fn sessions_started_side_by_side_are_numbered_apart() {
        let name = |key: &str| format!("session {}", key.to_uppercase());
        let lines = Lines {
            enabled: true,
            state: Mutex::new(Counts::default()),
            name: &name,
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
        assert_eq!(a, "[1/4] session AAAA: 3 units");
        assert_eq!(b, "[2/4] session BBBB: 3 units");
        let unit = lines.line(&Event::UnitDone {
            session_key: "aaaa".to_owned(),
            unit: 1,
            units_total: 3,
            entries: 2,
        });
        assert_eq!(unit.as_deref(), Some("  [1] unit 1/3: +2"));
        let failed = lines.line(&Event::SessionFailed {
            session_key: "cccc".to_owned(),
            error: "not JSON".to_owned(),
        });
        assert_eq!(failed.as_deref(), Some("  session CCCC failed: not JSON"));
    }
}

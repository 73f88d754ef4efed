//! `cairn insights …`: generated reports over a slice of sessions.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;

use anyhow::Result;
use cairn_core::Cairn;
use cairn_core::archive::Agent;
use cairn_core::config::InsightsEndpoint;
use cairn_core::insights::render::ExportFormat;
use cairn_core::insights::{Automation, GenerateRequest, Phase, SliceRequest};
use clap::Subcommand;

use crate::render::{self, clean};

#[derive(Subcommand)]
pub enum InsightsCommand {
    /// Write a report over a slice of sessions with an LLM (an [insights] endpoint or a local
    /// agent CLI). The same request over the same sessions returns the stored report.
    Generate {
        /// Start of the slice: YYYY-MM-DD, RFC 3339, `today`, `yesterday`, `7d`, `2w`
        /// (default: 7 days before its end).
        #[arg(long, value_parser = crate::render::when_as_typed)]
        since: Option<String>,
        /// End of the slice, inclusive for a date (default: now).
        #[arg(long, value_parser = crate::render::when_as_typed)]
        until: Option<String>,
        /// Only sessions of this project (a repository's folder name).
        #[arg(long)]
        project: Option<String>,
        /// Only sessions of this agent.
        #[arg(long, value_enum)]
        agent: Option<crate::AgentArg>,
        /// Only sessions related to this branch by their work (a commit, an edit, a person's
        /// link).
        #[arg(long)]
        branch: Option<String>,
        /// With --branch: also the sessions that only recorded the branch or ran while it was
        /// checked out (as `cairn sessions --branch` and `skim --include-weak` list them).
        #[arg(long, requires = "branch")]
        include_weak: bool,
        /// Scripted sessions (`claude -p`, `codex exec`): include, exclude (default) or only.
        #[arg(long, default_value = "exclude")]
        automation: String,
        /// Include teammates' sessions pulled here (`cairn pull`): their redacted text is
        /// then sent to the generator. Left out by default.
        #[arg(long)]
        teammates: bool,
        /// The report template (see `cairn insights templates`).
        #[arg(long, default_value = "weekly-summary")]
        template: String,
        /// endpoint, claude, codex, gemini or copilot (default: the [insights] endpoint when
        /// configured, else claude).
        #[arg(long)]
        generator: Option<String>,
        /// What to pay most attention to.
        #[arg(long)]
        focus: Option<String>,
        /// The report's title (default: the template's, with the slice's dates).
        #[arg(long)]
        title: Option<String>,
        /// Generate even if a stored report answers the same request.
        #[arg(long)]
        force: bool,
        /// Show what would be sent and stop: the slice and sizes (with --json, the prompt).
        #[arg(long)]
        dry_run: bool,
    },
    /// Stored reports, newest first.
    List {
        /// Words that must all appear in the title or the report.
        #[arg(long)]
        search: Option<String>,
        /// Only starred reports.
        #[arg(long)]
        starred: bool,
        /// At most this many reports.
        #[arg(long, default_value_t = 50)]
        limit: u32,
    },
    /// One report, as Markdown.
    Get {
        /// The report's number, as `cairn insights list` shows it.
        id: i64,
    },
    /// Write a report as md, html (one standalone file) or json.
    Export {
        /// The report's number, as `cairn insights list` shows it.
        id: i64,
        /// md, html or json. Default: what the -o file's name ends with, else md (json under
        /// --json without -o).
        #[arg(long, value_parser = report_format)]
        format: Option<String>,
        /// The file to write (default, and `-o -`: stdout; `-o .` picks a name in the current
        /// directory). An existing file is never replaced: the export goes beside it as
        /// `name (2).md`.
        #[arg(long, short)]
        output: Option<PathBuf>,
    },
    /// Star a report (--off to unstar).
    Star {
        /// The report's number, as `cairn insights list` shows it.
        id: i64,
        /// Unstar it instead.
        #[arg(long)]
        off: bool,
    },
    /// Give a report a new title.
    Rename {
        /// The report's number, as `cairn insights list` shows it.
        id: i64,
        /// The new title.
        title: String,
    },
    /// Delete a report (the sessions it read stay).
    Delete {
        /// The report's number, as `cairn insights list` shows it.
        id: i64,
    },
    /// The report templates, built-in and yours.
    Templates,
    /// Name the OpenAI-compatible endpoint that writes reports ([insights] endpoint, model and
    /// api_key_env in config.toml, comments and other keys kept), checked first by asking it
    /// for its models; or --clear it, and reports go to an agent CLI (`generate --generator`,
    /// claude by default).
    #[command(group(clap::ArgGroup::new("choice").required(true).args(["endpoint", "clear"])))]
    Setup {
        /// The server's OpenAI-compatible base URL, e.g. http://127.0.0.1:8080/v1 (plain HTTP
        /// only to this machine, unless --allow-http); needs --model.
        #[arg(long, value_name = "URL", requires = "model")]
        endpoint: Option<String>,
        /// The model to ask: one the server lists (see --model-unlisted).
        #[arg(long, requires = "endpoint")]
        model: Option<String>,
        /// Save --model though the server's model list does not name it (a server that answers
        /// to names it does not list); the first report then decides. A server that cannot be
        /// reached, or whose list cannot be read, does not stop the save: the output says the
        /// model went unchecked.
        #[arg(long, requires = "endpoint")]
        model_unlisted: bool,
        /// Allow plain http:// to a server that is not this machine (session text then crosses
        /// the network unencrypted: only for a network that is yours). Given for this
        /// --endpoint; one saved later without it takes it out.
        #[arg(long, requires = "endpoint")]
        allow_http: bool,
        /// The *name* of the environment variable that holds the API key, never the key
        /// itself (Cairn keeps no key in config.toml).
        #[arg(long, value_name = "VAR", requires = "endpoint")]
        api_key_env: Option<String>,
        /// Take the endpoint out: reports go to an agent CLI.
        #[arg(long, conflicts_with_all = ["endpoint", "model", "api_key_env"])]
        clear: bool,
        /// Save without asking the endpoint for its models.
        #[arg(long, conflicts_with = "clear")]
        no_test: bool,
    },
}

pub fn run(
    cmd: InsightsCommand,
    cairn: &Cairn,
    json_out: bool,
    out: &mut impl Write,
) -> Result<()> {
    match cmd {
        InsightsCommand::Generate {
            since,
            until,
            project,
            agent,
            branch,
            include_weak,
            automation,
            teammates,
            template,
            generator,
            focus,
            title,
            force,
            dry_run,
        } => {
            let agent = agent.map(Agent::from);
            let req = GenerateRequest {
                slice: SliceRequest {
                    since,
                    until,
                    project,
                    agent,
                    branch,
                    include_weak,
                    automation: Automation::parse(&automation)?,
                    teammates,
                },
                template,
                generator,
                focus,
                title,
                force,
            };
            if dry_run {
                let preview = cairn.insight_preview(&req)?;
                if json_out {
                    render::json(out, &preview)?;
                } else {
                    writeln!(out, "Slice: {}", clean(&preview.slice_label))?;
                    writeln!(
                        out,
                        "Sessions: {} ({} in detail)",
                        preview.sessions_total, preview.sessions_included
                    )?;
                    writeln!(
                        out,
                        "Prompt: {} characters, {} pieces redacted",
                        preview.prompt_chars, preview.redactions
                    )?;
                    if let Some(note) =
                        cairn_core::insights::branch_note(&preview.slice, preview.weak_sessions)
                    {
                        writeln!(out, "Branch: {}.", clean(&note))?;
                    }
                    writeln!(out, "Generator: {}", clean(&preview.generator.backend))?;
                    writeln!(out, "{}", teammates_line(&preview))?;
                    if let Some(id) = preview.cached_id {
                        writeln!(
                            out,
                            "Stored report {id} answers this (use --force to regenerate)"
                        )?;
                    }
                }
                return Ok(());
            }
            let tell = !json_out && std::io::stderr().is_terminal();
            let progress = |phase: Phase| {
                if tell {
                    let what = match phase {
                        Phase::Material => "Reading the sessions…",
                        Phase::CacheHit => "A stored report answers this (--force to regenerate).",
                        Phase::Generating => "Writing the report (this can take minutes)…",
                        Phase::Saving => "Saving…",
                    };
                    say_err!("{what}");
                }
            };
            let generated = cairn.insight_generate(&req, &progress)?;
            if json_out {
                render::json(out, &generated)?;
            } else {
                let i = &generated.insight;
                writeln!(out, "{}", clean(&i.content))?;
                writeln!(out)?;
                writeln!(
                    out,
                    "— report {} · {} · {}{} · {}",
                    i.id,
                    render::line(&i.title, render::TITLE_CHARS),
                    render::plural(i.sessions_total, "session"),
                    if generated.cached {
                        " · from the store"
                    } else {
                        ""
                    },
                    clean(&i.link)
                )?;
            }
        }
        InsightsCommand::List {
            search,
            starred,
            limit,
        } => {
            let list = cairn.insight_list(search.as_deref(), starred, limit)?;
            if json_out {
                render::json(out, &list)?;
            } else if list.is_empty() {
                writeln!(out, "No reports yet: cairn insights generate")?;
            } else {
                for i in &list {
                    writeln!(
                        out,
                        "{:>4} {} {}  {}  ({}, {}, {})",
                        i.id,
                        if i.starred { "★" } else { " " },
                        // The day on the person's clock, as every list shows times.
                        render::short_time(Some(&i.created_at))
                            .chars()
                            .take(10)
                            .collect::<String>(),
                        render::line(&i.title, render::TITLE_CHARS),
                        clean(&i.template_id),
                        render::plural(i.sessions_total, "session"),
                        clean(&i.generator)
                    )?;
                }
            }
        }
        InsightsCommand::Get { id } => {
            let i = cairn.insight_get(id)?;
            if json_out {
                render::json(out, &i)?;
            } else {
                writeln!(out, "# {}\n", render::line(&i.title, render::TITLE_CHARS))?;
                writeln!(out, "{}", clean(&i.content))?;
            }
        }
        InsightsCommand::Export { id, format, output } => {
            let place = crate::export::output_place(output)?;
            let format =
                crate::export::for_json_stdout(format.as_deref(), json_out, place.is_some())?;
            let named = crate::export::format_for(
                format.as_deref(),
                place.as_ref().and_then(|(_, name)| name.as_deref()),
            )?;
            // A report has no ATIF form: `x.atif.json` is JSON to it.
            let named = if format.is_none() && named == "atif" {
                "json".to_owned()
            } else {
                named
            };
            let format = ExportFormat::parse(&named)?;
            match place {
                None => out.write_all(cairn.insight_export(id, format)?.0.as_bytes())?,
                Some((dir, name)) => {
                    // Never over a file: an existing name gets ` (2)` (the desktop's rule).
                    let (path, _) = cairn.insight_export_into(id, format, &dir, name.as_deref())?;
                    if json_out {
                        render::json(out, &serde_json::json!({"id": id, "path": path}))?;
                    } else {
                        writeln!(out, "Wrote {}", clean(&path.display().to_string()))?;
                    }
                }
            }
        }
        InsightsCommand::Star { id, off } => {
            cairn.insight_star(id, !off)?;
            done(out, json_out, id, if off { "unstarred" } else { "starred" })?;
        }
        InsightsCommand::Rename { id, title } => {
            cairn.insight_rename(id, &title)?;
            done(out, json_out, id, "renamed")?;
        }
        InsightsCommand::Delete { id } => {
            cairn.insight_delete(id)?;
            done(out, json_out, id, "deleted")?;
        }
        InsightsCommand::Setup {
            endpoint,
            model,
            api_key_env,
            clear: _,
            no_test,
            model_unlisted,
            allow_http,
        } => {
            let chosen = endpoint.map(|endpoint| InsightsEndpoint {
                endpoint,
                model: model.unwrap_or_default(),
                api_key_env: api_key_env.unwrap_or_default(),
                allow_http,
            });
            let check = (!no_test).then_some(model_unlisted);
            setup(cairn, chosen.as_ref(), check, json_out, out)?;
        }
        InsightsCommand::Templates => {
            let templates = cairn.insight_templates()?;
            if json_out {
                render::json(out, &templates)?;
            } else {
                for t in &templates {
                    let origin = if t.source == "builtin" {
                        ""
                    } else {
                        " (yours)"
                    };
                    writeln!(
                        out,
                        "{:<22} {}{origin}",
                        clean(&t.id),
                        render::line(&t.title, render::TITLE_CHARS)
                    )?;
                    writeln!(out, "{:<22} {}", "", clean(&t.description))?;
                }
                writeln!(
                    out,
                    "\nAdd your own as Markdown with TOML front matter in {}",
                    clean(
                        &cairn_core::insights::template::user_dir(cairn.data_dir())
                            .display()
                            .to_string()
                    )
                )?;
            }
        }
    }
    Ok(())
}

/// `cairn insights setup`: the endpoint checked (`check`: `None` under `--no-test`, else
/// whether `--model-unlisted` was given) by the rule `cairn recall extract setup` follows too
/// (`EndpointCheck::rule`, in the core), then written through the core, which refuses what
/// would not load; or taken out when `chosen` is `None`.
fn setup(
    cairn: &Cairn,
    chosen: Option<&InsightsEndpoint>,
    check: Option<bool>,
    json_out: bool,
    out: &mut impl Write,
) -> Result<()> {
    // A key pasted where its variable's name goes: refused by the flag's name, never repeated.
    if let Some(why) = chosen.and_then(|e| Cairn::api_key_env_problem(&e.api_key_env)) {
        return Err(cairn_core::Error::Invalid(format!("--api-key-env: {why}")).into());
    }
    if let Some((flag, why)) = chosen.and_then(|e| Cairn::setup_key_problem(&e.endpoint, &e.model))
    {
        return Err(cairn_core::Error::Invalid(format!("--{flag}: {why}")).into());
    }
    // Refused by the flag that allows it, before anything is sent, rather than by the key the
    // loaded file would lack.
    if let Some(why) = chosen
        .and_then(|e| cairn_core::llm::Endpoint::plain_http_refusal(&e.endpoint, e.allow_http))
    {
        return Err(cairn_core::Error::Invalid(format!("--endpoint: {}", clean(&why))).into());
    }
    let check = match (chosen, check) {
        (Some(e), Some(model_unlisted)) => Some(cairn.insights_endpoint_test(e, model_unlisted)?),
        _ => None,
    };
    let saved = cairn.save_insights_endpoint(chosen)?;
    let config = cairn.config_path().display().to_string();
    if json_out {
        let mut doc = serde_json::json!({
            "config": config,
            "endpoint": saved.endpoint.as_deref().map(render::endpoint),
            "model": saved.model,
            "api_key_env": saved.api_key_env,
            "allow_http": saved.allow_http,
        });
        if let Some(c) = &check {
            doc["test"] = serde_json::to_value(c)?;
        }
        return render::json(out, &doc);
    }
    if let Some(c) = &check {
        match c.note(
            "the first report",
            "running this setup again checks it, or the first report does",
        ) {
            None => writeln!(
                out,
                "Test: {} answers and lists {}.",
                clean(&c.endpoint),
                render::line(&c.model, 200)
            )?,
            Some(note) => writeln!(out, "Test: {}: {}.", clean(&c.endpoint), clean(&note))?,
        }
    }
    match (&saved.endpoint, &saved.model) {
        (Some(endpoint), Some(model)) => {
            let key = saved
                .api_key_env
                .as_deref()
                .map(|v| format!(" (key in ${})", clean(v)))
                .unwrap_or_default();
            let http = if saved.allow_http {
                " (plain HTTP allowed)"
            } else {
                ""
            };
            writeln!(
                out,
                "Saved [insights] in {}: endpoint {}{http}{key}, model {}.",
                clean(&config),
                render::endpoint(endpoint),
                render::line(model, 200)
            )?;
            writeln!(
                out,
                "Next: `cairn insights generate --dry-run` shows what a report would send; `cairn insights generate` writes one with it."
            )?;
        }
        _ => {
            writeln!(
                out,
                "No [insights] endpoint in {}: reports go to an agent CLI (`cairn insights generate --generator claude|codex|gemini|copilot`, claude by default).",
                clean(&config)
            )?;
        }
    }
    Ok(())
}

/// clap's check of a report's `--format` (a usage error, exit 2, for a format there is not).
fn report_format(typed: &str) -> Result<String, String> {
    ExportFormat::parse(typed)
        .map(|_| typed.trim().to_ascii_lowercase())
        .map_err(|e| e.to_string())
}

fn done(out: &mut impl Write, json_out: bool, id: i64, what: &str) -> Result<()> {
    if json_out {
        render::json(out, &serde_json::json!({"id": id, "done": what}))
    } else {
        writeln!(out, "Report {id} {what}.")?;
        Ok(())
    }
}

/// What the preview says of teammates' pulled sessions: left out (and how to include them), or
/// included and so sent to the generator.
fn teammates_line(p: &cairn_core::insights::Preview) -> String {
    let n = p.teammates_sessions;
    let sessions = if n == 1 { "session" } else { "sessions" };
    match (n, p.slice.teammates) {
        (0, _) => "Teammates' sessions: none pulled in this slice.".to_owned(),
        (n, false) => format!(
            "Teammates' sessions: {n} pulled {sessions} left out (--teammates includes them, and sends their redacted text to the generator)."
        ),
        (n, true) => format!(
            "Teammates' sessions: {n} pulled {sessions} included: their redacted text goes to the generator."
        ),
    }
}

//! `cairn recall …`: flags, calls into `Cairn`, and rendering. No ranking or review rules here.

use std::collections::BTreeMap;
use std::io::Write;

use anyhow::{Result, bail};
use cairn_core::Cairn;
use cairn_core::recall::agents::FeedbackCounts;
use cairn_core::recall::model::{Entry, EntryType, ReviewState, Scope, Status, Surface};
use cairn_core::recall::output::{BriefDocument, Detail, QueryDocument};
use cairn_core::recall::rank::Ranked;
use cairn_core::recall::review::{Edit, ReviewChange};
use cairn_core::recall::store::{Filters, Here};
use cairn_core::recall::{Mode, QueryRequest, QueryResponse};
use cairn_core::semantic::vectors::VectorStore;
use clap::{Args, Subcommand};
use serde_json::json;

use crate::ModeArg;
use crate::render::{self, clean};

#[derive(Subcommand)]
pub enum RecallCommand {
    /// Import reviewed entries from JSONL (AgentsView's format). Atomic: all lines or none.
    Import {
        /// The JSONL file of entries, one per line.
        file: std::path::PathBuf,
        /// Report what would happen without writing.
        #[arg(long, conflicts_with = "yes")]
        dry_run: bool,
        /// Write the entries (required unless --dry-run).
        #[arg(long)]
        yes: bool,
    },
    /// Ranked entries for a question or keywords.
    Query {
        /// The question or keywords.
        text: String,
        /// lexical (BM25F), vector (by meaning; needs embeddings) or hybrid (both, fused).
        #[arg(long, value_enum, default_value_t = ModeArg::Lexical)]
        mode: ModeArg,
        /// Print each score's breakdown.
        #[arg(long)]
        scores: bool,
        /// Print each entry's evidence (session and record ordinals).
        #[arg(long)]
        evidence: bool,
        /// Print aggregate counts of the results.
        #[arg(long)]
        summary: bool,
        /// Also pack the results into a context block.
        #[arg(long)]
        context: bool,
        /// The context block's budget in bytes (with --context).
        #[arg(long)]
        max_bytes: Option<u32>,
        /// The context block's budget in tokens (with --context).
        #[arg(long)]
        max_tokens: Option<u32>,
        #[command(flatten)]
        filters: FilterArgs,
    },
    /// A packed briefing for a task: trusted entries only unless --include-unreviewed.
    Brief {
        /// The task at hand, in a few words.
        task: String,
        /// lexical, vector or hybrid (see `recall query`).
        #[arg(long, value_enum, default_value_t = ModeArg::Lexical)]
        mode: ModeArg,
        /// The brief's budget in bytes.
        #[arg(long)]
        max_bytes: Option<u32>,
        /// The brief's budget in tokens.
        #[arg(long)]
        max_tokens: Option<u32>,
        /// Include entries nobody has reviewed yet.
        #[arg(long)]
        include_unreviewed: bool,
        #[command(flatten)]
        filters: FilterArgs,
    },
    /// Entries, most recently updated first (ranked when --query is given).
    List {
        /// Rank the entries for these words instead.
        #[arg(long)]
        query: Option<String>,
        #[command(flatten)]
        filters: FilterArgs,
    },
    /// One entry, any status.
    Get {
        /// The entry's id, or the unique start of it (8 characters or more).
        id: String,
        /// Also print its evidence (session and record ordinals).
        #[arg(long)]
        evidence: bool,
    },
    /// Counts by type, scope, review state, project, agent, lifecycle.
    Stats {
        #[command(flatten)]
        filters: FilterArgs,
    },
    /// Model-backed extraction: distil sessions into unreviewed entries with evidence.
    Extract {
        #[command(subcommand)]
        command: crate::extract::ExtractCommand,
    },
    /// The review inbox; with a flag, act on one entry. An ID is the entry's id or the unique
    /// start of it (8 characters or more).
    Review {
        /// Lay one entry out for review: why it is here, its evidence quoted from the
        /// transcript, and accepted entries that say nearly the same.
        #[arg(long, value_name = "ID", conflicts_with_all = ["accept", "unaccept", "reject", "restore", "edit", "supersede", "merge", "check_stale"])]
        show: Option<String>,
        /// Accept the entry: reviewed by a person, trusted from now on (a rejected one is taken back).
        #[arg(long, value_name = "ID")]
        accept: Option<String>,
        /// Take an accept back: the entry is no longer trusted and waits in the inbox again, as
        /// unreviewed_auto (the state before an accept is not recorded; extraction and agents'
        /// proposals write that one). The window's Undo puts back the exact state it saw.
        #[arg(long, value_name = "ID", conflicts_with_all = ["accept", "edit"])]
        unaccept: Option<String>,
        /// Reject the entry: it is archived and no longer served. A replacement hands its place
        /// back to the entry it replaced.
        #[arg(long, value_name = "ID")]
        reject: Option<String>,
        /// Take a rejection back: the entry is where it was before (one never reviewed is in the
        /// inbox again).
        #[arg(long, value_name = "ID", conflicts_with = "reject")]
        restore: Option<String>,
        /// Edit the entry, then accept it.
        #[arg(long, value_name = "ID")]
        edit: Option<String>,
        /// The new title (with --edit).
        #[arg(long, requires = "edit")]
        title: Option<String>,
        /// The new body (with --edit).
        #[arg(long, requires = "edit")]
        body: Option<String>,
        /// The new trigger: when the entry applies (with --edit).
        #[arg(long, requires = "edit")]
        trigger: Option<String>,
        /// The new type (with --edit).
        #[arg(long = "type", requires = "edit", value_parser = one_of(EntryType::NAMES, EntryType::parse))]
        entry_type: Option<EntryType>,
        /// The new scope (with --edit): `branch` serves it only on the branch its session ran
        /// on, `project` in its repository, `global` everywhere.
        #[arg(long, requires = "edit", value_parser = one_of(Scope::NAMES, Scope::parse))]
        scope: Option<Scope>,
        /// Supersede an older entry with the one given by --with.
        #[arg(long, value_name = "OLD", requires = "with")]
        supersede: Option<String>,
        /// The entry that replaces the one given by --supersede.
        #[arg(long, value_name = "NEW")]
        with: Option<String>,
        /// Merge a duplicate into the entry given by --into.
        #[arg(long, value_name = "DUPLICATE", requires = "into")]
        merge: Option<String>,
        /// The entry a duplicate given by --merge is merged into.
        #[arg(long, value_name = "KEEP")]
        into: Option<String>,
        /// Flag entries whose cited files changed in later commits.
        #[arg(long)]
        check_stale: bool,
        /// How many queued entries to list.
        #[arg(long, default_value_t = 50)]
        limit: u32,
    },
}

/// A clap parser for one of Recall's closed sets: `--help` and a wrong value list `names`
/// (the core's wire strings), and the value is parsed by the core's own `parse`.
fn one_of<T: Clone + Send + Sync + 'static>(
    names: &'static [&'static str],
    parse: fn(&str) -> cairn_core::Result<T>,
) -> impl clap::builder::TypedValueParser<Value = T> {
    use clap::builder::TypedValueParser as _;
    clap::builder::PossibleValuesParser::new(names).try_map(move |s: String| parse(&s))
}

#[derive(Args, Default)]
pub struct FilterArgs {
    /// Only entries of this project (a repository's folder name).
    #[arg(long)]
    project: Option<String>,
    /// Only entries from sessions that ran in this folder.
    #[arg(long)]
    cwd: Option<String>,
    /// Only entries about this branch.
    #[arg(long)]
    git_branch: Option<String>,
    /// Only entries whose evidence comes from this agent's sessions.
    #[arg(long, value_enum)]
    agent: Option<crate::AgentArg>,
    /// Only entries of this type.
    #[arg(long = "type", value_parser = one_of(EntryType::NAMES, EntryType::parse))]
    entry_type: Option<EntryType>,
    /// Only entries of this scope.
    #[arg(long, value_parser = one_of(Scope::NAMES, Scope::parse))]
    scope: Option<Scope>,
    /// Only entries of this status.
    #[arg(long, value_parser = one_of(Status::NAMES, Status::parse))]
    status: Option<Status>,
    /// Only entries in this review state.
    #[arg(long, value_parser = one_of(ReviewState::NAMES, ReviewState::parse))]
    review_state: Option<ReviewState>,
    /// Only entries drawn from this session (its key or the agent's id).
    #[arg(long)]
    source_session_id: Option<String>,
    /// Only entries a person reviewed and whose evidence holds.
    #[arg(long)]
    trusted_only: bool,
    /// Only entries from the current directory (-C).
    #[arg(long, conflicts_with_all = ["cwd", "current_worktree"])]
    current_cwd: bool,
    /// Only entries from the branch checked out in -C.
    #[arg(long, conflicts_with_all = ["git_branch", "current_worktree"])]
    current_git_branch: bool,
    /// Only entries from the worktree of -C (its root and branch).
    #[arg(long, conflicts_with_all = ["cwd", "git_branch"])]
    current_worktree: bool,
    /// At most this many entries.
    #[arg(long)]
    limit: Option<u32>,
}

impl FilterArgs {
    fn build(&self, cairn: &Cairn, dir: &std::path::Path) -> Result<Filters> {
        let f = Filters {
            project: self.project.clone(),
            cwd: self.cwd.as_deref().map(expand_tilde),
            git_branch: self.git_branch.clone(),
            agent: self.agent.map(Into::into),
            entry_type: self.entry_type,
            scope: self.scope,
            status: self.status,
            review_state: self.review_state,
            source_session: self.source_session_id.clone(),
            source_run_id: None,
            trusted_only: self.trusted_only,
            stale: None,
            limit: self.limit,
        };
        let here = Here {
            cwd: self.current_cwd,
            git_branch: self.current_git_branch,
            worktree: self.current_worktree,
        };
        Ok(cairn.recall_filters_here(f, dir, here)?)
    }
}

fn expand_tilde(p: &str) -> String {
    match (p.strip_prefix("~/"), std::env::var_os("HOME")) {
        (Some(rest), Some(home)) => format!("{}/{rest}", home.to_string_lossy()),
        _ => p.to_owned(),
    }
}

pub fn run(
    cmd: Option<RecallCommand>,
    cairn: &Cairn,
    json_out: bool,
    keys: bool,
    dir: &std::path::Path,
    out: &mut impl Write,
) -> Result<bool> {
    let names = Names { cairn, keys };
    let Some(cmd) = cmd else {
        start_here(cairn, json_out, out)?;
        return Ok(true);
    };
    match cmd {
        RecallCommand::Extract { command } => {
            return crate::extract::run(command, cairn, json_out, &names, out);
        }
        RecallCommand::Import { file, dry_run, yes } => {
            if !dry_run && !yes {
                bail!(
                    "importing writes to the archive: pass --yes, or --dry-run to see what would happen"
                );
            }
            let report = cairn.recall_import_file(&file, dry_run)?;
            if json_out {
                render::json(out, &report)?;
            } else {
                let verb = if dry_run { "Would import" } else { "Imported" };
                writeln!(out, "{verb}: {}", report.imported)?;
                writeln!(out, "Skipped: {}", report.skipped.len())?;
                for i in &report.items {
                    let sup = i
                        .supersedes
                        .as_deref()
                        .map(|s| format!("  supersedes={}", clean(s)))
                        .unwrap_or_default();
                    writeln!(
                        out,
                        "{} {}  {}{sup}",
                        verb.to_lowercase(),
                        clean(&i.candidate_id),
                        render::line(&i.title, render::TITLE_CHARS)
                    )?;
                }
                for s in &report.skipped {
                    writeln!(
                        out,
                        "skipped line {} {}  reason={}",
                        s.line,
                        clean(s.candidate_id.as_deref().unwrap_or("-")),
                        clean(&s.reason)
                    )?;
                }
                for e in &report.errors {
                    writeln!(out, "error line {}: {}", e.line, clean(&e.message))?;
                }
                if !report.errors.is_empty() {
                    writeln!(
                        out,
                        "Nothing was imported: fix the lines above and run again (the import is all or nothing)."
                    )?;
                }
            }
            return Ok(report.errors.is_empty());
        }
        RecallCommand::Query {
            text,
            mode,
            scores,
            evidence,
            summary,
            context,
            max_bytes,
            max_tokens,
            filters,
        } => {
            let req = QueryRequest {
                text,
                mode: Mode::from(mode),
                filters: filters.build(cairn, dir)?,
                context,
                max_bytes,
                max_tokens,
                session_key: None,
            };
            let resp = cairn.recall_query(&req, Surface::Query)?;
            if json_out {
                let detail = Detail { scores, evidence };
                render::json(out, &QueryDocument::of(&resp, detail, summary))?;
            } else {
                render_results(out, &resp, scores, evidence, &names)?;
                if resp.results.is_empty() {
                    where_entries_come_from(out, cairn, resp.trusted_only)?;
                }
                if summary {
                    render_summary(out, &resp.results)?;
                }
                if let Some(c) = &resp.context {
                    writeln!(out)?;
                    writeln!(out, "{}", clean(&names.in_brief(&c.text)))?;
                }
            }
        }
        RecallCommand::Brief {
            task,
            mode,
            max_bytes,
            max_tokens,
            include_unreviewed,
            filters,
        } => {
            let mut f = filters.build(cairn, dir)?;
            f.trusted_only = !include_unreviewed;
            let req = QueryRequest {
                text: task.clone(),
                mode: Mode::from(mode),
                filters: f,
                context: true,
                max_bytes,
                max_tokens,
                session_key: std::env::var("CAIRN_SESSION_KEY").ok(),
            };
            let resp = cairn.recall_brief(&req, dir, Surface::Brief)?;
            if json_out {
                render::json(out, &BriefDocument::of(&task, &resp))?;
            } else {
                writeln!(out, "Task: {}", clean(&task))?;
                writeln!(out, "Trusted-only: {}", resp.trusted_only)?;
                writeln!(out)?;
                match resp.context.as_ref().filter(|p| !p.entry_ids.is_empty()) {
                    Some(p) => writeln!(out, "{}", clean(&names.in_brief(&p.text)))?,
                    None if resp.untrusted_matches > 0 => writeln!(
                        out,
                        "(no reviewed entries match; {} unreviewed do — review them with `cairn recall review`, or add --include-unreviewed)",
                        resp.untrusted_matches
                    )?,
                    None => {
                        writeln!(out, "(no relevant entries)")?;
                        // An empty Recall says where entries come from, as query and list do.
                        where_entries_come_from(out, cairn, resp.trusted_only)?;
                    }
                }
                // What this repository's brief left out as another repository's, as the hook's
                // and MCP's say it.
                if let Some(line) = &resp.left_out {
                    writeln!(out, "{}", clean(line))?;
                }
            }
        }
        RecallCommand::List { query, filters } => {
            let req = QueryRequest {
                text: query.unwrap_or_default(),
                filters: filters.build(cairn, dir)?,
                ..Default::default()
            };
            // A ranked listing is browsing, not a query: not recorded.
            let list = |req: &QueryRequest| -> Result<Vec<Entry>> {
                if req.text.trim().is_empty() {
                    Ok(cairn.recall_list(&req.filters)?)
                } else {
                    cairn_list_ranked(cairn, req)
                }
            };
            let mut entries = list(&req)?;
            // A project's listing ends with the trusted global entries of the other projects,
            // as every answer for one project does (`memory::global`).
            let project = req.filters.project.clone();
            if let Some(global) = cairn_core::recall::memory::global::request(&req) {
                let globals = list(&global)?;
                cairn_core::recall::memory::global::join_listed(&mut entries, globals, &req);
            }
            if json_out {
                render::json(out, &entries)?;
            } else {
                writeln!(out, "Trusted-only: {}", filters.trusted_only)?;
                for e in &entries {
                    // Where a global entry of another project was learnt, as a brief says it.
                    let label = project
                        .as_deref()
                        .and_then(|p| cairn_core::recall::memory::global::label(e, p));
                    match label {
                        Some(label) => {
                            let mut e = e.clone();
                            e.title = format!("{} {label}", e.title.trim_end());
                            render_entry(out, &e)?;
                        }
                        None => render_entry(out, e)?,
                    }
                }
                if entries.is_empty() {
                    writeln!(out, "No recall entries match.")?;
                    where_entries_come_from(out, cairn, filters.trusted_only)?;
                }
            }
        }
        RecallCommand::Get { id, evidence } => {
            let e = cairn.recall_get(&cairn.recall_entry_id(&id)?)?;
            if json_out {
                render::json(out, &e)?;
            } else {
                render_entry(out, &e)?;
                let feedback = cairn.recall_feedback(Some(&e.id))?;
                if feedback != FeedbackCounts::default() {
                    writeln!(out, "    agents' feedback: {}", feedback_said(feedback))?;
                }
                writeln!(out)?;
                for l in e.body.lines() {
                    writeln!(out, "  {}", clean(l))?;
                }
                if !e.trigger.is_empty() {
                    writeln!(
                        out,
                        "  when: {}",
                        render::line(&e.trigger, render::TITLE_CHARS)
                    )?;
                }
                if evidence {
                    for v in &e.evidence {
                        writeln!(
                            out,
                            "  evidence {}:{}-{}  {}",
                            names.session(&v.session_key),
                            v.ordinal_start,
                            v.ordinal_end,
                            snippet(&v.snippet)
                        )?;
                    }
                }
            }
        }
        RecallCommand::Stats { filters } => {
            let f = filters.build(cairn, dir)?;
            let s = cairn.recall_stats(&f)?;
            if json_out {
                render::json(out, &s)?;
            } else {
                writeln!(
                    out,
                    "Entries: {}  trusted: {}  stale: {}  with evidence: {}",
                    s.count, s.trusted, s.stale, s.with_evidence
                )?;
                writeln!(out, "Trusted-only: {}", f.trusted_only)?;
                writeln!(
                    out,
                    "Agents' feedback (every entry): {}",
                    feedback_said(cairn.recall_feedback(None)?)
                )?;
                for (name, map) in [
                    ("type", &s.by_type),
                    ("scope", &s.by_scope),
                    ("review state", &s.by_review_state),
                    ("project", &s.by_project),
                    ("agent", &s.by_agent),
                    ("lifecycle", &s.by_lifecycle),
                ] {
                    let parts: Vec<String> = map
                        .iter()
                        .map(|(k, v)| format!("{}={v}", clean(k)))
                        .collect();
                    writeln!(out, "  by {name}: {}", parts.join(" "))?;
                }
            }
        }
        RecallCommand::Review { show: Some(id), .. } => {
            let p = cairn.recall_proposal(&cairn.recall_entry_id(&id)?)?;
            let feedback = cairn.recall_feedback(Some(&p.entry.id))?;
            if json_out {
                render::json(out, &json!({ "proposal": p, "feedback": feedback }))?;
            } else {
                render_proposal(out, &p, feedback, &names)?;
            }
        }
        RecallCommand::Review {
            show: None,
            accept,
            unaccept,
            reject,
            restore,
            edit,
            title,
            body,
            trigger,
            entry_type,
            scope,
            supersede,
            with,
            merge,
            into,
            check_stale,
            limit,
        } => {
            let mut changed: Vec<ReviewChange> = Vec::new();
            if check_stale {
                let flagged = cairn.recall_check_stale()?;
                changed.push(ReviewChange::checked(flagged));
            }
            if let Some(id) = accept {
                let e = cairn.recall_accept(&cairn.recall_entry_id(&id)?, None)?;
                changed.push(ReviewChange::accepted(&e, false));
            }
            if let Some(id) = edit {
                let ed = Edit {
                    title,
                    body,
                    trigger,
                    entry_type,
                    scope,
                };
                let e = cairn.recall_accept(&cairn.recall_entry_id(&id)?, Some(&ed))?;
                changed.push(ReviewChange::accepted(&e, true));
            }
            if let Some(id) = unaccept {
                let u = cairn.recall_unaccept_handing_back(
                    &cairn.recall_entry_id(&id)?,
                    ReviewState::UnreviewedAuto,
                )?;
                changed.push(ReviewChange::Unaccept {
                    id: u.entry.id,
                    review_state: u.entry.review_state,
                    reinstated: u.reinstated.map(|e| e.id),
                });
            }
            if let Some(id) = reject {
                let r = cairn.recall_reject_handing_back(&cairn.recall_entry_id(&id)?)?;
                changed.push(ReviewChange::Reject {
                    id: r.entry.id,
                    status: r.entry.status,
                    reinstated: r.reinstated.map(|e| e.id),
                });
            }
            if let Some(id) = restore {
                let r = cairn.recall_restore_replacing(&cairn.recall_entry_id(&id)?)?;
                changed.push(ReviewChange::Restore {
                    trusted: r.entry.is_trusted(),
                    id: r.entry.id,
                    status: r.entry.status,
                    replaces: r.replaces.map(|e| e.id),
                });
            }
            if let (Some(old), Some(new)) = (supersede, with) {
                let (old, new) = (cairn.recall_entry_id(&old)?, cairn.recall_entry_id(&new)?);
                cairn.recall_supersede(&old, &new)?;
                changed.push(ReviewChange::Supersede { old, new });
            }
            if let (Some(dup), Some(keep)) = (merge, into) {
                let (dup, keep) = (cairn.recall_entry_id(&dup)?, cairn.recall_entry_id(&keep)?);
                let e = cairn.recall_merge(&dup, &keep)?;
                changed.push(ReviewChange::Merge {
                    duplicate: dup,
                    kept: e.id,
                });
            }
            if changed.is_empty() {
                let queue = cairn.recall_inbox(limit)?;
                // The inbox's size, not the page's: --limit only says how many are listed.
                let total = cairn.recall_inbox_len()?.max(queue.len() as u64);
                if json_out {
                    render::json(out, &json!({ "queue": queue, "total": total }))?;
                } else if total == 0 {
                    writeln!(out, "The review inbox is empty.")?;
                } else {
                    let entries = cairn_core::text::plural(total, "entry");
                    if queue.len() as u64 == total {
                        writeln!(out, "{entries} to review:")?;
                    } else {
                        writeln!(
                            out,
                            "{} of {entries} to review (--limit N lists more):",
                            queue.len()
                        )?;
                    }
                    for item in &queue {
                        let why = match item.reason {
                            cairn_core::recall::review::InboxReason::Unreviewed => "unreviewed",
                            cairn_core::recall::review::InboxReason::Stale => "stale",
                            cairn_core::recall::review::InboxReason::ProvenanceRevoked => {
                                "provenance revoked"
                            }
                        };
                        render_entry(out, &item.entry)?;
                        writeln!(out, "    inbox: {why}")?;
                    }
                    writeln!(out)?;
                    writeln!(
                        out,
                        "See one with --show ID (its evidence quoted, near-duplicates). {ACT}"
                    )?;
                }
            } else if json_out {
                render::json(out, &json!({ "changed": changed }))?;
            } else {
                for c in &changed {
                    writeln!(out, "{}", clean(&said(c)))?;
                }
            }
        }
    }
    Ok(true)
}

/// What a review action did, as a sentence (the JSON is for `--json`).
/// What a staleness check did, in words: the trusted entries it took out of service apart
/// from the unreviewed ones it only marked.
fn stale_said(trusted: u32, untrusted: u32) -> String {
    let plural = cairn_core::text::plural;
    let mut said = String::from("Checked the cited files of accepted entries: ");
    said.push_str(&match trusted {
        0 => "no trusted entry changed".to_owned(),
        n => format!(
            "{} changed since {} reviewed, no longer served and back in the review inbox",
            plural(n, "trusted entry"),
            if n == 1 { "it was" } else { "they were" }
        ),
    });
    if untrusted > 0 {
        said.push_str(&format!(
            "; {} already waiting for review marked stale",
            plural(untrusted, "entry")
        ));
    }
    said.push('.');
    said
}

fn said(change: &ReviewChange) -> String {
    match change {
        ReviewChange::CheckStale {
            trusted_returned,
            untrusted_marked,
            ..
        } => stale_said(*trusted_returned, *untrusted_marked),
        ReviewChange::Accept { id, .. } => {
            format!("Accepted {id}: reviewed by you, trusted from now on.")
        }
        ReviewChange::Edit { id, .. } => {
            format!("Edited and accepted {id}: trusted from now on.")
        }
        ReviewChange::Reject { id, reinstated, .. } => {
            let back = reinstated
                .as_deref()
                .map(|old| {
                    format!(" {old}, which it had replaced, is served in its place again (as it was before; `cairn recall get {old}` shows where it stands).")
                })
                .unwrap_or_default();
            format!(
                "Rejected {id}: archived, no longer offered as Recall (`--restore {id}` takes it back).{back}"
            )
        }
        ReviewChange::Restore {
            id,
            status,
            trusted,
            replaces,
        } => {
            let now = if *trusted {
                "trusted again"
            } else if *status == cairn_core::recall::model::Status::Accepted {
                "back in the review inbox"
            } else {
                "staged again with its extraction"
            };
            let again = replaces
                .as_deref()
                .map(|old| format!(" It replaces {old} again, which is archived."))
                .unwrap_or_default();
            format!("Took back the rejection of {id}: {now}.{again}")
        }
        ReviewChange::Unaccept {
            id,
            review_state,
            reinstated,
        } => {
            let back = reinstated
                .as_deref()
                .map(|old| {
                    format!(" {old}, which it had replaced, is served in its place again until {id} is accepted again.")
                })
                .unwrap_or_default();
            format!(
                "Took back the accept of {id}: {review_state}, no longer trusted, waiting in the review inbox (`--accept {id}` accepts it again).{back}"
            )
        }
        ReviewChange::Supersede { old, new } => {
            format!("{new} supersedes {old}, which is archived.")
        }
        ReviewChange::Merge { duplicate, kept } => {
            format!("Merged {duplicate} into {kept}: its evidence added, {duplicate} archived.")
        }
    }
}

const ACT: &str = "Act with --accept ID (--unaccept ID takes it back), --edit ID --title … --body …, --reject ID (--restore ID takes it back), --supersede OLD --with NEW, --merge DUP --into KEEP.";

/// One inbox entry for review: the entry, why, its evidence quoted, near-duplicates.
fn render_proposal(
    out: &mut impl Write,
    p: &cairn_core::recall::proposal::Proposal,
    feedback: FeedbackCounts,
    names: &Names,
) -> Result<()> {
    render_entry(out, &p.entry)?;
    writeln!(out, "    {}", snippet(&p.entry.body))?;
    writeln!(out, "Why:")?;
    for w in &p.why {
        writeln!(out, "    {}", clean(w))?;
    }
    if p.reason.is_none() {
        writeln!(out, "    Not in the inbox (reviewed, or archived).")?;
    }
    writeln!(out, "Agents' feedback: {}", feedback_said(feedback))?;
    writeln!(out, "Evidence:")?;
    if p.evidence.is_empty() {
        writeln!(out, "    none in the archive")?;
    }
    for ev in &p.evidence {
        let title = if ev.session_title.is_empty() {
            String::new()
        } else {
            format!(
                " “{}”",
                render::line(&ev.session_title, render::TITLE_CHARS)
            )
        };
        writeln!(
            out,
            "    session {}{title}, records {}-{}",
            names.session(&ev.session_key),
            ev.ordinal_start,
            ev.ordinal_end
        )?;
        if let Some(why) = &ev.changed {
            writeln!(out, "    ! the transcript changed: {}", clean(why))?;
        }
        for r in &ev.records {
            writeln!(out, "      [{}] {}:", r.ordinal, clean(&r.who))?;
            for l in clean(&r.text).lines() {
                writeln!(out, "        > {l}")?;
            }
        }
        if ev.more_records > 0 {
            writeln!(out, "      … {} more records in the range", ev.more_records)?;
        }
    }
    writeln!(out, "Near-duplicates ({}):", clean(&p.duplicate_basis))?;
    if p.duplicates.is_empty() {
        writeln!(out, "    none")?;
    }
    for d in &p.duplicates {
        let semantic = d
            .semantic
            .map(|s| format!(" vectors={s:.2}"))
            .unwrap_or_default();
        writeln!(
            out,
            "    {}  lexical={:.2}{semantic}  {}  {}",
            clean(&d.id),
            d.lexical,
            if d.trusted { "trusted" } else { "unreviewed" },
            render::line(&d.title, render::TITLE_CHARS)
        )?;
        // Trust stays where a person gave it: an entry a person reviewed is the one kept.
        let reviewed = p.entry.review_state == ReviewState::HumanReviewed;
        let (what, duplicate, keep) = if reviewed && !d.trusted {
            ("merge it into this one", &d.id, &p.entry.id)
        } else {
            ("merge into it", &p.entry.id, &d.id)
        };
        writeln!(
            out,
            "      {what}: cairn recall review --merge {} --into {}",
            clean(duplicate),
            clean(keep)
        )?;
    }
    writeln!(out)?;
    writeln!(out, "{ACT}")?;
    Ok(())
}

/// Agents' verdicts (MCP `recall_feedback`) in words.
fn feedback_said(f: FeedbackCounts) -> String {
    if f.helpful == 0 && f.wrong == 0 {
        return "none yet".to_owned();
    }
    format!("{} helpful, {} wrong", f.helpful, f.wrong)
}

/// How human output names a session: as a person types it back (its agent's id, see
/// `Cairn::session_handle`) or as a person knows it (its agent, start and what it was about),
/// its internal key only under `--keys` (CLI.md).
pub(crate) struct Names<'a> {
    pub(crate) cairn: &'a Cairn,
    pub(crate) keys: bool,
}

impl Names<'_> {
    /// The session as a person types it back: its agent's id when that names it alone, else
    /// (an id no shell passes as is, or shared) as a person knows it ([`Names::said`]).
    pub(crate) fn session(&self, key: &str) -> String {
        if self.keys {
            return clean(key);
        }
        match self.cairn.session_handle(key) {
            Ok(handle) if handle != key => clean(&handle),
            _ => self.said(key),
        }
    }

    /// The session as a person knows it: `claude session of 2026-02-10 22:57 "start phoenix in
    /// background"` (its title, else its first request, cut short); its key under `--keys`.
    pub(crate) fn said(&self, key: &str) -> String {
        if self.keys {
            return clean(key);
        }
        match self.cairn.session_name(key) {
            Ok(n) => session_said(&n),
            // Evidence may outlive what it cites (`cairn forget`): said so, not by its key.
            Err(_) => "a session no longer in the archive".to_owned(),
        }
    }

    /// A packed brief as human output prints it: each session its evidence cites said as a
    /// person knows it ([`Names::said`]), where agents and `--json` read its key.
    fn in_brief(&self, text: &str) -> String {
        let mut said: BTreeMap<String, String> = BTreeMap::new();
        cairn_core::recall::brief::name_sessions(text, &mut |key| {
            said.entry(key.to_owned())
                .or_insert_with(|| self.said(key))
                .clone()
        })
    }
}

/// `claude session of 2026-02-10 22:57 "what it was about"`: cleaned, on one line.
pub(crate) fn session_said(n: &cairn_core::archive::store::SessionName) -> String {
    let agent = render::line(n.ran_by.as_deref().unwrap_or(n.agent.as_str()), 40);
    let when = render::short_time(n.started_at.as_deref());
    match n.about.as_deref() {
        Some(about) => format!(
            "{agent} session of {when} \"{}\"",
            // A cut through a redaction marker closes it: `[REDACT…` reads as neither.
            cairn_core::text::closed_marker(&render::line(about, SAID_CHARS))
        ),
        None => format!("{agent} session of {when}"),
    }
}

/// How much of a session's title or first request names it in a line about something else.
const SAID_CHARS: usize = 50;

/// A ranked listing without recording (the facade records queries only).
fn cairn_list_ranked(cairn: &Cairn, req: &QueryRequest) -> Result<Vec<Entry>> {
    Ok(cairn
        .recall_rank(req)?
        .into_iter()
        .map(|r| r.entry)
        .collect())
}

fn snippet(s: &str) -> String {
    render::line(s, 220)
}

fn render_entry(out: &mut impl Write, e: &Entry) -> Result<()> {
    writeln!(
        out,
        "{}  {}  {}",
        clean(&e.id),
        e.entry_type,
        render::line(&e.title, render::TITLE_CHARS)
    )?;
    let ctx = [e.project.as_str(), e.agent.as_str()]
        .iter()
        .filter(|s| !s.is_empty())
        .copied()
        .collect::<Vec<_>>()
        .join(" ");
    if !ctx.is_empty() {
        writeln!(out, "    {}", clean(&ctx))?;
    }
    writeln!(out, "    {}", standing(e))?;
    let mut review = format!(
        "    review review_state={} transferable={} provenance_ok={} evidence={}",
        e.review_state,
        e.transferable,
        e.provenance_ok,
        e.evidence.len()
    );
    if e.stale {
        review.push_str(" stale=true");
    }
    writeln!(out, "{review}")?;
    if let Some(note) = e.provenance_note.as_deref().or(e.stale_note.as_deref()) {
        writeln!(out, "    note: {}", clean(note))?;
    }
    if e.lifecycle() != "active" {
        writeln!(
            out,
            "    lifecycle {} supersedes={} superseded_by={}",
            e.lifecycle(),
            clean(&e.supersedes_entry_id),
            clean(&e.superseded_by_entry_id)
        )?;
    }
    Ok(())
}

/// Where an entry stands, in words: whether agents are served it, and what changes that.
fn standing(e: &Entry) -> String {
    use cairn_core::recall::model::{ReviewState, Status};
    let id = clean(&e.id);
    if !e.superseded_by_entry_id.is_empty() {
        return format!(
            "replaced by {}: not served",
            clean(&e.superseded_by_entry_id)
        );
    }
    if e.status == Status::Archived {
        return format!(
            "archived (rejected, or its extraction retired): not served; if it was rejected, `cairn recall review --restore {id}` takes that back"
        );
    }
    if e.trusted {
        return "trusted: reviewed by a person, served to agents".to_owned();
    }
    if e.review_state == ReviewState::HumanReviewed {
        return format!(
            "reviewed, but not trusted now ({}): `cairn recall review --show {id}`",
            if e.stale {
                "a file it cites changed since; back in the review inbox until accepted again"
            } else if e.provenance_ok {
                "not transferable"
            } else {
                "its evidence changed or was forgotten"
            }
        );
    }
    if !e.provenance_ok {
        return format!(
            "unreviewed, its evidence changed or forgotten: it cannot be accepted as it is (`cairn recall review --show {id}` says why)"
        );
    }
    format!("unreviewed: not trusted until a person accepts it (`cairn recall review --show {id}`)")
}

/// `cairn recall` alone: what Recall holds, and the command to run next.
fn start_here(cairn: &Cairn, json_out: bool, out: &mut impl Write) -> Result<()> {
    let all = cairn.recall_stats(&cairn_core::recall::store::Filters::default())?;
    let inbox = cairn.recall_inbox_len()?;
    if json_out {
        render::json(
            out,
            &json!({ "entries": all.count, "trusted": all.trusted, "to_review": inbox }),
        )?;
        return Ok(());
    }
    let plural = cairn_core::text::plural;
    writeln!(
        out,
        "Recall: {}, {} trusted (served to agents), {} to review.",
        plural(all.count, "entry"),
        all.trusted,
        inbox
    )?;
    let next = if all.count == 0 {
        "Start with `cairn recall extract doctor` (what extraction needs), then `cairn recall extract run`; or bring reviewed entries with `cairn recall import <file>`."
    } else if inbox > 0 {
        "Next: `cairn recall review` lists what waits; `--show ID` lays one out, `--accept ID` trusts it."
    } else {
        "Next: `cairn recall brief \"<task>\"` shows what an agent is served; `cairn recall query <words>` searches."
    };
    writeln!(out, "{next}")?;
    writeln!(out, "Every command: `cairn recall --help`.")?;
    Ok(())
}

/// After an empty answer: where entries come from when Recall has none, or that they wait for
/// review when only trusted ones were asked for and none is.
fn where_entries_come_from(out: &mut impl Write, cairn: &Cairn, trusted_only: bool) -> Result<()> {
    let all = cairn.recall_stats(&cairn_core::recall::store::Filters::default())?;
    if all.count == 0 {
        writeln!(
            out,
            "Recall has no entries yet: `cairn recall extract run` distils them from your sessions (`cairn recall extract doctor` says what it needs), or `cairn recall import <file>` brings reviewed ones."
        )?;
    } else if trusted_only && all.trusted == 0 {
        let which = match all.count {
            1 => "The one entry is not trusted yet".to_owned(),
            n => format!("None of the {n} entries is trusted yet"),
        };
        writeln!(
            out,
            "{which}: `cairn recall review` lists what waits to be accepted."
        )?;
    }
    Ok(())
}

fn render_results(
    out: &mut impl Write,
    resp: &QueryResponse,
    scores: bool,
    evidence: bool,
    names: &Names,
) -> Result<()> {
    writeln!(out, "Trusted-only: {}", resp.trusted_only)?;
    crate::render::vectors_pending(out, VectorStore::Recall, resp.vectors_pending, resp.mode)?;
    if resp.results.is_empty() {
        writeln!(out, "No recall entries match.")?;
    }
    for r in &resp.results {
        render_entry(out, &r.entry)?;
        if scores {
            let b = &r.breakdown;
            if resp.mode != Mode::Lexical {
                let rank = |r: Option<u32>| r.map_or_else(|| "-".to_owned(), |r| r.to_string());
                writeln!(
                    out,
                    "    score={:.4} semantic={} lexical_rank={} vector_rank={} match={}",
                    r.score,
                    b.semantic
                        .map_or_else(|| "-".to_owned(), |c| format!("{c:.3}")),
                    rank(b.lexical_rank),
                    rank(b.vector_rank),
                    clean(&r.match_reasons.join(","))
                )?;
            }
            if resp.mode == Mode::Lexical || b.lexical_rank.is_some() {
                writeln!(
                    out,
                    "    {}={:.3} bm25f={:.3} (title={:.3} body={:.3} trigger={:.3} evidence={:.3}) phrase={:.2} recency={:.3} confidence={:.2} review={:.2} penalty={:.2} terms={}",
                    if resp.mode == Mode::Lexical {
                        "score"
                    } else {
                        "lexical"
                    },
                    b.total,
                    b.bm25f,
                    b.title,
                    b.body,
                    b.trigger,
                    b.evidence,
                    b.phrase,
                    b.recency,
                    b.confidence,
                    b.review,
                    b.penalty,
                    clean(&b.matched_terms.join(","))
                )?;
            }
        }
        if evidence {
            for v in &r.entry.evidence {
                let tool = v
                    .tool_use_id
                    .as_deref()
                    .map(|t| format!(" tool={}", clean(t)))
                    .unwrap_or_default();
                writeln!(
                    out,
                    "    evidence {}:{}-{}{tool}  {}",
                    names.session(&v.session_key),
                    v.ordinal_start,
                    v.ordinal_end,
                    snippet(&v.snippet)
                )?;
            }
        }
    }
    Ok(())
}

fn render_summary(out: &mut impl Write, results: &[Ranked]) -> Result<()> {
    let mut groups: BTreeMap<&str, BTreeMap<String, u32>> = BTreeMap::new();
    for r in results {
        let e = &r.entry;
        for (k, v) in [
            ("type", e.entry_type.as_str().to_owned()),
            ("scope", e.scope.as_str().to_owned()),
            ("review_state", e.review_state.as_str().to_owned()),
            ("project", e.project.clone()),
            ("lifecycle", e.lifecycle().to_string()),
        ] {
            *groups
                .entry(k)
                .or_default()
                .entry(if v.is_empty() { "(none)".into() } else { v })
                .or_insert(0) += 1;
        }
    }
    writeln!(out, "Summary of {} results:", results.len())?;
    for (k, m) in groups {
        let parts: Vec<String> = m.iter().map(|(v, n)| format!("{}={n}", clean(v))).collect();
        writeln!(out, "  {k}: {}", parts.join(" "))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use cairn_core::archive::Agent;
    use cairn_core::archive::store::SessionName;

    /// A request whose redaction marker falls across the cut is named with the marker closed,
    /// never `[REDACT…`, which reads as neither the secret's kind nor text.
    #[test]
    fn a_session_named_by_a_cut_request_keeps_its_redaction_marker_whole() {
        let name = SessionName {
            agent: Agent::Claude,
            ran_by: None,
            started_at: None,
            about: Some(format!(
                "{} [REDACTED:github_token] in the env",
                "use the token".repeat(3)
            )),
        };
        let said = super::session_said(&name);
        assert!(said.contains("[REDACTED]…"), "{said}");
        assert_eq!(
            said.matches('[').count(),
            said.matches(']').count(),
            "{said}"
        );
    }
}

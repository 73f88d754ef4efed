//! The [`Cairn`] facade's memory methods: the brief of trusted Recall entries an agent gets when
//! a session starts.

use std::path::Path;
use std::time::Duration;

use serde::Serialize;

use crate::archive::store::{DB_FILE, Store};
use crate::config::Config;
use crate::error::{Error, Result};
use crate::hooks::mcp_config::{self, McpInstall, McpStatus};
use crate::recall::{self, memory};
use crate::{AgentWriter, Cairn};

/// The most a session-start brief may take, whatever the config says (16 KB of text).
const MAX_TOKENS_CAP: u32 = 4000;

/// How long the session-start hook waits for a lock on the archive before giving up.
const BUSY: Duration = Duration::from_millis(20);

/// How many more ranked entries an agent's question reads first than it serves, so the entries
/// the branch and repository rules leave out do not leave a short page. When they still do and
/// more were there, the question is read once more as deep as a query may go
/// ([`recall::store::MAX_LIMIT`], 500 ranked entries): the bound on what one answer reads, said
/// in it when reached ([`memory::Answer::stopped_after`]).
const OVERREAD: u32 = 4;

/// What the SessionStart hook injects into a new agent session.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SessionStartBrief {
    /// The brief, redacted and cleaned of control sequences.
    pub text: String,
    /// The entries in it, in order.
    pub entry_ids: Vec<String>,
}

impl SessionStartBrief {
    /// What the hook prints: the JSON both Claude Code and Codex read from a SessionStart hook
    /// (`hookSpecificOutput.additionalContext`).
    pub fn hook_output(&self) -> String {
        serde_json::json!({
            "hookSpecificOutput": {
                "hookEventName": crate::hooks::SESSION_START,
                "additionalContext": self.text,
            }
        })
        .to_string()
    }
}

impl Cairn {
    /// Register `cli mcp` as the `cairn` MCP server of `agent`: in the user's config, or with
    /// `project` (a directory in a repository) in that repository's; with `--data-dir` when
    /// this archive is not at its default place. See [`crate::hooks::mcp_config`].
    pub fn mcp_install(
        &self,
        agent: crate::archive::Agent,
        project: Option<&Path>,
        cli: &Path,
        dry_run: bool,
    ) -> Result<McpInstall> {
        let project = project.map(project_root).transpose()?;
        let data_dir = self.data_dir_elsewhere();
        mcp_config::install(
            agent,
            &super::home()?,
            project.as_deref(),
            cli,
            data_dir.as_deref(),
            dry_run,
        )
    }

    /// Take Cairn's MCP server out of `agent`'s config (the user's, or `project`'s).
    pub fn mcp_uninstall(
        &self,
        agent: crate::archive::Agent,
        project: Option<&Path>,
        dry_run: bool,
    ) -> Result<McpInstall> {
        let project = project.map(project_root).transpose()?;
        mcp_config::uninstall(agent, &super::home()?, project.as_deref(), dry_run)
    }

    /// Whether each agent's user config registers Cairn's MCP server, and for this archive.
    pub fn mcp_status(&self) -> Vec<McpStatus> {
        let archive = self.data_dir_elsewhere();
        dirs::home_dir()
            .map(|home| {
                mcp_config::MCP_AGENTS
                    .iter()
                    .map(|a| mcp_config::status(*a, &home, None, archive.as_deref()))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// An agent's Recall query or brief (`req`) answered for `reach`: the project's entries
    /// that apply on its branch by [`memory::applies`], the rule the session-start brief uses
    /// (a branch-scoped entry on its own branch only, anything wider on every branch), and, when
    /// the reach names a repository on disk (`reach.root`), that were learnt there and not in
    /// another repository of the same name ([`memory::recorded_here`], counted in
    /// [`memory::Answer::elsewhere`]); then, in the room they leave, the trusted global entries
    /// of every other project, ranked among themselves ([`memory::global`]). A brief is headed
    /// by its project (or "every project") and branch, says whether its notes were reviewed,
    /// names where each global note of another project was learnt, and ends with the line
    /// saying how many another repository's were left out ([`memory::pack_headed`]); `req`'s own
    /// project and branch filters are replaced by `reach`.
    ///
    /// The query is recorded through `writer` as [`Cairn::agent_recall_query`] records one,
    /// before the rule narrows it: the ledger's ranked list holds what was read, and a brief's
    /// packed list is not recorded (the packing happens after).
    pub fn agent_recall_applying(
        &self,
        req: &recall::QueryRequest,
        reach: &memory::Reach,
        surface: recall::model::Surface,
        writer: Option<&mut AgentWriter>,
    ) -> Result<memory::Answer> {
        let want = req.filters.limit();
        let mut wide = req.clone();
        wide.context = false;
        wide.filters.project = reach.project.clone();
        wide.filters.git_branch = None;
        let branch = reach.branch.as_deref();
        let mut here = reach.root.as_deref().map(memory::origin::Here::new);
        // The rules need what no column holds (the branch rule could be SQL, the repository rule
        // reads the disk), so they run on ranked entries: a first read of `OVERREAD` times what
        // is asked, and when the rules leave it short while the ranking had more, one read as
        // deep as a query may go, whose answer replaces the first.
        let mut depth = want
            .saturating_mul(OVERREAD)
            .min(recall::store::MAX_LIMIT)
            .max(want);
        let (mut resp, elsewhere, stopped_after) = loop {
            wide.filters.limit = Some(depth);
            let mut resp = {
                let store = self.store();
                self.recall_answer_exact(&store, &wide)?
            };
            let ranked = resp.results.len();
            resp.results.retain(|r| memory::applies(&r.entry, branch));
            let elsewhere = match here.as_mut() {
                Some(here) => {
                    let store = self.store();
                    memory::keep_recorded_here(store.conn(), &mut resp.results, |r| &r.entry, here)?
                }
                None => 0,
            };
            let short = resp.results.len() < want as usize;
            let more = ranked >= depth as usize;
            if short && more && depth < recall::store::MAX_LIMIT {
                depth = recall::store::MAX_LIMIT;
                continue;
            }
            break (resp, elsewhere, (short && more).then_some(ranked as u32));
        };
        resp.results.truncate(want as usize);
        // Then what a person accepted as true everywhere, learnt under another project's name,
        // in the room the repository's own left (`memory::global`).
        let mut asked_here = wide.clone();
        asked_here.filters.limit = Some(want);
        if let Some(global) = memory::global::request(&asked_here) {
            let mut more = {
                let store = self.store();
                self.recall_answer_exact(&store, &global)?
            };
            more.results.retain(|r| memory::applies(&r.entry, branch));
            memory::global::join(&mut resp, more.results, &asked_here);
        }
        if resp.results.is_empty() && req.filters.trusted_only {
            // What a review would add here: the untrusted entries that apply.
            let mut open = wide.clone();
            open.filters.trusted_only = false;
            let mut untrusted = self.recall_rank(&open)?;
            untrusted.retain(|r| memory::applies(&r.entry, branch));
            if let Some(here) = here.as_mut() {
                let store = self.store();
                memory::keep_recorded_here(store.conn(), &mut untrusted, |r| &r.entry, here)?;
            }
            resp.untrusted_matches = untrusted.len() as u32;
        }
        if req.context {
            let max_bytes = req
                .max_bytes
                .map_or(recall::brief::DEFAULT_MAX_BYTES, |b| b as usize);
            let budget = match req.max_tokens {
                Some(t) => {
                    max_bytes.min((t as usize).saturating_mul(recall::brief::BYTES_PER_TOKEN))
                }
                None => max_bytes,
            };
            resp.context = Some(memory::pack_headed(
                &resp.results,
                reach.project.as_deref(),
                branch,
                budget,
                memory::LeftOut {
                    elsewhere,
                    stopped_after,
                },
            ));
        }
        resp.miss_reason = if resp.results.is_empty() {
            recall::model::MissReason::NoResults
        } else if resp
            .context
            .as_ref()
            .is_some_and(|c| c.entry_ids.is_empty())
        {
            recall::model::MissReason::ContextEmpty
        } else {
            recall::model::MissReason::None
        };
        // The ledger holds what the agent was answered: the entries that apply, as packed.
        if let Some(w) = writer {
            let mut asked = wide;
            asked.filters.limit = req.filters.limit;
            asked.context = req.context;
            Self::record_agent_query(w, &asked, &mut resp, surface);
        }
        Ok(memory::Answer {
            response: resp,
            elsewhere,
            stopped_after,
        })
    }

    /// [`Cairn::open_for_agents`] that serves what it cannot open: an archive there but too
    /// damaged or unreadable to open reads as an empty one in memory (read-only), with the
    /// error, so a server can answer every call with what is wrong instead of exiting.
    pub fn open_for_agents_despite(data_dir: &Path) -> Result<(Cairn, Option<Error>)> {
        let e = match Cairn::open_for_agents(data_dir) {
            Ok(cairn) => return Ok((cairn, None)),
            Err(e) => e,
        };
        let config = Config::load(data_dir).unwrap_or_default();
        let semantic = crate::semantic::Runtime::new(&config.embeddings, data_dir);
        let cairn = Cairn {
            store: std::sync::Mutex::new(Store::empty(&data_dir.join(DB_FILE))?),
            data_dir: data_dir.to_owned(),
            config,
            read_only: true,
            no_room: None,
            semantic,
        };
        Ok((cairn, Some(e)))
    }

    /// The brief for an agent session starting with the hook payload `input` (its `cwd` names
    /// where; `base_dir` when it does not): the trusted entries of that repository and branch
    /// ([`memory::entries`]; not those of another repository of the same name,
    /// [`memory::recorded_here`], which a last line counts), then the trusted global entries of
    /// every other project ([`memory::global`]), packed into
    /// `[recall] session_start_tokens` (default [`memory::DEFAULT_MAX_TOKENS`]), through the
    /// outbound redactor. `None` when nothing trusted applies there (nothing is said then, not
    /// even that another repository's notes were left out), outside a repository, or when the
    /// budget is 0.
    ///
    /// Made for a hook that runs before every session: the archive in `data_dir` is opened
    /// read-only (never created, migrated or tightened), a lock is waited for at most 20 ms,
    /// nothing is embedded and nothing is written (not even the ledger). Errors are for the
    /// caller to swallow: a broken archive must not stop the agent.
    pub fn session_start_brief(
        data_dir: &Path,
        input: &str,
        base_dir: &Path,
    ) -> Result<Option<SessionStartBrief>> {
        let payload: serde_json::Value = serde_json::from_str(input)
            .map_err(|e| crate::Error::Invalid(format!("failed to parse agent hook input: {e}")))?;
        let cwd = payload
            .get("cwd")
            .and_then(|v| v.as_str())
            .map(Path::new)
            .filter(|p| p.is_absolute())
            .unwrap_or(base_dir);
        let config = Config::load(data_dir)?;
        let max_tokens = config
            .recall
            .session_start_tokens
            .unwrap_or(memory::DEFAULT_MAX_TOKENS)
            .min(MAX_TOKENS_CAP);
        if max_tokens == 0 {
            return Ok(None);
        }
        let Some(place) = memory::place(cwd) else {
            return Ok(None);
        };
        let store = Store::open_read_only_waiting(&data_dir.join(DB_FILE), BUSY)?;
        let memory::Applying { entries, left_out } = memory::entries(store.conn(), &place)?;
        let trusted = entries.len();
        let packed = memory::pack(entries, &place, max_tokens, left_out);
        if packed.entry_ids.is_empty() {
            if trusted == 0 {
                return Ok(None);
            }
            // Notes to give and no room for one: said (on stderr, by the hook), not silent.
            return Err(crate::Error::Invalid(format!(
                "[recall] session_start_tokens = {max_tokens} in config.toml holds none of the {trusted} reviewed note{} for {}; raise it (the default is {})",
                if trusted == 1 { "" } else { "s" },
                place.project,
                memory::DEFAULT_MAX_TOKENS
            )));
        }
        let home = dirs::home_dir().map(|h| h.to_string_lossy().into_owned());
        let mut findings = Vec::new();
        let text = crate::archive::redact::Redactor::global().outbound_text(
            &packed.text,
            Some(&place.root.to_string_lossy()),
            home.as_deref(),
            &mut findings,
        );
        Ok(Some(SessionStartBrief {
            text,
            entry_ids: packed.entry_ids,
        }))
    }
}

/// The repository around `dir` (its worktree root), else `dir` itself: where a project's agent
/// config lives.
fn project_root(dir: &Path) -> Result<std::path::PathBuf> {
    let dir = std::fs::canonicalize(dir).map_err(|e| crate::Error::Read {
        path: dir.to_owned(),
        source: e,
    })?;
    // Outside a repository there is no project to configure: the config was written into
    // whatever folder the command ran in.
    memory::place(&dir).map(|p| p.root).ok_or_else(|| {
        crate::Error::Invalid(format!(
            "{} is not in a git repository, and --project writes the repository's own config; run it inside the repository (or -C <repo>), or leave out --project for your user's config",
            dir.display()
        ))
    })
}

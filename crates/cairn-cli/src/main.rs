//! `cairn`: the command-line front door. Parses flags, calls `cairn_core::Cairn`, renders the
//! result for a person (default) or a program (`--json`). No business logic lives here.

/// A line on stderr; a closed stderr (`2>&1 | head`) is not worth a panic, as `eprintln!`
/// makes it.
macro_rules! say_err {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}

mod export;
mod extract;
mod forget;
mod insights;
mod link;
mod mcp_install;
mod recall;
mod reindex;
mod render;
mod resume;
mod show;
mod team;

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result, anyhow, bail};
use cairn_core::archive::{Agent, recognise};
use cairn_core::semantic::vectors::VectorStore;
use cairn_core::views::search::SearchQuery;
use cairn_core::views::sessions::SessionQuery;
use cairn_core::{Cairn, ErrorKind, ErrorReport};
use clap::{Args, Parser, Subcommand, ValueEnum};

#[derive(Parser)]
#[command(
    name = "cairn",
    version,
    about = "Remember what coding agents did: capture, search and catch up on agent sessions."
)]
struct Cli {
    #[command(flatten)]
    global: Global,
    #[command(subcommand)]
    command: Command,
}

#[derive(Args)]
struct Global {
    /// Machine output: one JSON document on stdout.
    #[arg(long, global = true)]
    json: bool,
    /// The data dir (default: $CAIRN_DATA_DIR, else ~/.local/share/cairn).
    #[arg(long, global = true, value_name = "DIR")]
    data_dir: Option<PathBuf>,
    /// The repository to work in.
    #[arg(short = 'C', global = true, value_name = "DIR", default_value = ".")]
    dir: PathBuf,
    /// Print internal keys in human output.
    #[arg(long, global = true)]
    keys: bool,
}

/// An `--agent` value: the core's [`Agent`], named as it names itself (`claude`, `opencode`,
/// `atif`, …), from a list the core keeps, so a new agent needs no change here. A command that
/// can act for some agents only takes a subset: clap refuses the others (exit 2) and `--help`
/// lists only these (it offered all 28 where two have hooks).
macro_rules! agent_subset {
    ($(#[$doc:meta])* $name:ident = $list:expr) => {
        $(#[$doc])*
        #[derive(Clone, Copy)]
        pub(crate) struct $name(pub(crate) Agent);

        impl ValueEnum for $name {
            fn value_variants<'a>() -> &'a [Self] {
                static VARIANTS: std::sync::LazyLock<Vec<$name>> =
                    std::sync::LazyLock::new(|| $list.into_iter().map($name).collect());
                &VARIANTS
            }

            fn to_possible_value(&self) -> Option<clap::builder::PossibleValue> {
                Some(possible_agent(self.0))
            }
        }

        impl From<$name> for Agent {
            fn from(a: $name) -> Agent {
                a.0
            }
        }
    };
}

fn possible_agent(agent: Agent) -> clap::builder::PossibleValue {
    let value = clap::builder::PossibleValue::new(agent.as_str());
    match agent {
        Agent::Atif => value.help(
            "Sessions of agents this build has no reader for: a trajectory `cairn import` or \
             `cairn pull` brought in from such an agent, an agent only a newer Cairn reads \
             (a trajectory of an agent this build reads is listed under that agent)",
        ),
        _ => value,
    }
}

agent_subset! {
    /// `--agent` of the commands that read every agent's sessions.
    AgentArg = Agent::EVERY
}

agent_subset! {
    /// `--agent` of `hook`, `hooks` and `skills`: the agents Cairn installs its hook and skill
    /// for (CLI.md: `hook [--agent claude|codex]`).
    HookedAgentArg = cairn_core::hooks::HOOKED
}

agent_subset! {
    /// `--agent` of `mcp install|uninstall`: the agents whose MCP config Cairn knows.
    McpAgentArg = cairn_core::hooks::mcp_config::MCP_AGENTS
}

/// A `--limit` of a list that shows what it finds: 0 would show nothing and say nothing was
/// found ("No matches.") while there were matches, so it is a usage error. (Recall's filters
/// read 0 as "all", as AgentsView's do, and say so in their help.)
fn at_least_one() -> clap::builder::RangedI64ValueParser<u32> {
    clap::value_parser!(u32).range(1..)
}

/// `--mode`: how a search or Recall query ranks (the core's `Mode`).
#[derive(Clone, Copy, ValueEnum)]
pub(crate) enum ModeArg {
    Lexical,
    Vector,
    Hybrid,
}

impl From<ModeArg> for cairn_core::semantic::Mode {
    fn from(m: ModeArg) -> Self {
        use cairn_core::semantic::Mode;
        match m {
            ModeArg::Lexical => Mode::Lexical,
            ModeArg::Vector => Mode::Vector,
            ModeArg::Hybrid => Mode::Hybrid,
        }
    }
}

#[derive(Subcommand)]
enum Command {
    /// Discover transcripts under every enabled agent source dir and ingest what is new.
    Sync {
        /// Only these agents (repeatable).
        #[arg(long, value_enum)]
        agent: Vec<AgentArg>,
        /// Show a progress bar even when stderr is not a terminal.
        #[arg(long)]
        progress: bool,
    },
    /// Capture the transcript named by an agent hook's JSON on stdin. Silent on success; a path
    /// that is not a regular file inside the agent's source dirs is refused (a line on stderr,
    /// exit 0). On a SessionStart payload it captures nothing and prints the brief of trusted
    /// Recall entries for the session's repository and branch (nothing when none; exit 0 even
    /// when the archive is missing or broken).
    Hook {
        #[arg(long, value_enum)]
        agent: Option<HookedAgentArg>,
    },
    /// Manage the agents' capture hooks.
    Hooks {
        #[command(subcommand)]
        command: HooksCommand,
    },
    /// Install the skill that teaches agents to catch up with Cairn.
    Skills {
        #[command(subcommand)]
        command: SkillsCommand,
    },
    /// List sessions, newest first.
    Sessions {
        /// Only this agent's sessions (an imported trajectory under the agent that ran it).
        #[arg(long, value_enum)]
        agent: Option<AgentArg>,
        /// Only sessions that recorded this branch (`main`, `refs/heads/main`).
        #[arg(long)]
        branch: Option<String>,
        /// At most this many sessions, the most recently active.
        #[arg(long, value_parser = at_least_one())]
        limit: Option<u32>,
        /// Only sessions active at or after this time (RFC 3339), or from the start of this day
        /// on your clock (YYYY-MM-DD, as times are listed; `today`, `yesterday`), or this long
        /// ago (`7d`, `2w`).
        #[arg(long, value_parser = crate::render::when)]
        since: Option<String>,
        /// Only sessions begun before this time (RFC 3339), or up to the end of this day on your
        /// clock (YYYY-MM-DD, `today`, `yesterday`), or before this long ago (`7d`, `2w`).
        #[arg(long, value_parser = crate::render::when)]
        until: Option<String>,
    },
    /// Search what agents and people wrote and ran: full text (default), or by meaning over
    /// turns with --mode vector|hybrid (needs `cairn embeddings build --store sessions`).
    Search {
        /// Words to find (lexical: all must match; start with a quote for a raw FTS5
        /// expression), or a question (vector, hybrid: a turn is found by meaning only when
        /// close enough to it, a cosine of at least 0.2 with the built-in model).
        query: String,
        /// At most this many hits.
        #[arg(long, default_value_t = 20, value_parser = at_least_one())]
        limit: u32,
        /// How to match: words (lexical), meaning (vector) or both (hybrid).
        #[arg(long, value_enum, default_value_t = ModeArg::Lexical)]
        mode: ModeArg,
        /// Only this agent's sessions.
        #[arg(long, value_enum)]
        agent: Option<AgentArg>,
        /// Only sessions that recorded this branch.
        #[arg(long)]
        branch: Option<String>,
        /// Only sessions of this project (a repository's folder name).
        #[arg(long)]
        project: Option<String>,
        /// Only records at or after this time (RFC 3339), or from the start of this day on your
        /// clock (YYYY-MM-DD, as times are listed; `today`, `yesterday`), or this long ago
        /// (`7d`, `2w`).
        #[arg(long, value_parser = crate::render::when)]
        since: Option<String>,
        /// Only records before this time (RFC 3339), or up to the end of this day on your clock
        /// (YYYY-MM-DD, `today`, `yesterday`), or before this long ago (`7d`, `2w`).
        #[arg(long, value_parser = crate::render::when)]
        until: Option<String>,
        /// Rank sessions instead of records: by their best turns, the files they edited and
        /// the branches, reviews and commits they are linked to (any word may match).
        #[arg(long)]
        sessions: bool,
    },
    /// Why is this here: the agent sessions and turns behind a commit, lines of a file or a
    /// description, ranked, each with its evidence and a confidence. A line is traced through
    /// `git blame` to its commit, then to the edit that wrote its text.
    ///
    /// With --write-notes, record which lines of each commit of a range which session wrote as
    /// Git AI authorship notes (refs/notes/ai, the Git AI Standard), which other tools read and
    /// `git push origin refs/notes/ai` shares: the lines, the agent, the model and the session
    /// key, no transcript text unless --with-messages. Another tool's note is never replaced.
    #[command(
        after_help = "Examples: cairn why HEAD~1, cairn why src/auth.rs:40-52, cairn why \"retry the login\",\n          cairn why --write-notes --dry-run main..HEAD"
    )]
    Why {
        /// A commit (id, HEAD~1, a branch), <path>[:<line>[-<line>]] (relative to -C), or a
        /// description; with --write-notes, a range <from>..<to> or one commit.
        target: String,
        /// At most this many sessions.
        #[arg(long, default_value_t = 10, value_parser = at_least_one())]
        limit: u32,
        /// How a description is searched.
        #[arg(long, value_enum, default_value_t = ModeArg::Lexical)]
        mode: ModeArg,
        /// Write the line attribution of each commit of the range TARGET as git notes under
        /// refs/notes/ai (at most 500 commits; merges are left out).
        #[arg(long)]
        write_notes: bool,
        /// With --write-notes: also put each session's messages (prompts, answers and tool
        /// calls, never tool output) in its notes, through the outbound redactor and the final
        /// scan, as `publish --full` does. Notes travel with `git push` of refs/notes/ai.
        #[arg(long, requires = "write_notes")]
        with_messages: bool,
        /// With --write-notes: print each note that would be written, and write nothing.
        #[arg(long, requires = "write_notes")]
        dry_run: bool,
    },
    /// Sentence embeddings for semantic search (vector and hybrid modes).
    Embeddings {
        #[command(subcommand)]
        command: EmbeddingsCommand,
    },
    /// Check config.toml (first: doctor runs even when it does not load, and names the line),
    /// source dirs, the data dir (who can read it; every database page; what rebuilds left),
    /// what syncs could not read, the model servers configured, Recall, agents' retention
    /// settings and hooks. Contacts nothing unless --probe.
    Doctor {
        /// Also connect to each model server config.toml names (a TCP connection, nothing sent,
        /// 2 s at most each) to say whether anything answers there.
        #[arg(long)]
        probe: bool,
    },
    /// Serve the archive and Recall to one agent session as MCP tools over stdin/stdout
    /// (skim, show, search, why, recall_query, recall_brief, recall_propose, recall_feedback).
    /// Reads only, except proposals, feedback and the ledger of Recall queries. -C sets the
    /// repository `skim` defaults to. `cairn mcp install|uninstall` registers the server in
    /// an agent's config.
    Mcp {
        #[command(subcommand)]
        command: Option<mcp_install::McpCommand>,
    },
    /// Every session related to a branch, review (PR) or change, and every turn, abbreviated,
    /// in the order it happened. In a repository (-C): the sessions that ran in it (any of its
    /// worktrees; `main` of another repository is not this one's), and what teammates
    /// published there and `cairn pull` fetched. Without a target: the branch checked out in -C.
    #[command(
        after_help = "Examples: cairn skim, cairn skim '#123', cairn skim https://github.com/o/r/pull/123, cairn skim branch main, cairn skim review 42"
    )]
    Skim {
        /// `branch`, `review` or `change` followed by the value; or alone `#123`, a PR's URL,
        /// `review:<id>`, `change:<id>` or a branch name.
        kind: Option<String>,
        /// Branch name, PR number or URL, or change id.
        value: Option<String>,
        /// Also list sessions that only ran while the target was checked out.
        #[arg(long)]
        include_weak: bool,
        /// At most this many sessions (the most recently active).
        #[arg(long, value_parser = at_least_one())]
        limit: Option<u32>,
        /// Only this agent's sessions.
        #[arg(long, value_enum)]
        agent: Option<AgentArg>,
        /// Sessions of every repository with a target of this name, not only -C's (what a
        /// skim outside any repository lists).
        #[arg(long)]
        all_repos: bool,
    },
    /// Share the redacted metadata of the sessions related to a target under refs/cairn/; with
    /// --full, their redacted transcripts too, for teammates to `cairn pull`.
    #[command(
        after_help = "Examples: cairn publish main, cairn publish '#42' --full, cairn publish review 42, cairn publish change <id>, cairn publish '#42' --summary-md"
    )]
    Publish {
        /// A branch name, `#123` or a PR's URL, or `branch`, `review` or `change` followed by
        /// the value.
        branch_or_kind: String,
        /// The branch name, PR number or URL, or change id, after a kind.
        value: Option<String>,
        /// Also publish each session's redacted turns and records (compressed, under the same
        /// allowlist, redaction, final scan and size limits).
        #[arg(long)]
        full: bool,
        /// Show what would leave without writing anything.
        #[arg(long)]
        dry_run: bool,
        /// Print a short Markdown block for a PR description (sessions, turns, what was tested
        /// and committed, `cairn://` links) instead of the report; writes nothing unless
        /// combined with --full.
        #[arg(long)]
        summary_md: bool,
    },
    /// Push the sessions you published (refs/cairn/sessions/*) to a remote; never a
    /// teammate's, never forced.
    Push {
        /// A remote of this repository, a URL (https, ssh, git, file) or a path to a
        /// repository, as `git push` takes them. Transports that run commands (`ext::`) are
        /// refused.
        #[arg(default_value = "origin")]
        remote: String,
    },
    /// Fetch what teammates published on a remote (into refs/cairn/remotes/<remote>/, never
    /// forced) and import each document that passes the checks; skim shows them in this
    /// repository, marked as untrusted text. A session published with --full becomes a session
    /// of this archive (sessions, show, search, export), marked with who published it. What a
    /// publisher withdrew since (a forget, then a push) is dropped here.
    Pull {
        /// A remote of this repository, a URL (https, ssh, git, file) or a path to a
        /// repository, as `git fetch` takes them. Transports that run commands (`ext::`) are
        /// refused.
        #[arg(default_value = "origin")]
        remote: String,
    },
    /// Recall: distilled entries with evidence; query, brief, review, import. Alone: what
    /// Recall holds and where to start.
    Recall {
        #[command(subcommand)]
        command: Option<recall::RecallCommand>,
    },
    /// The team archive in PostgreSQL: push this archive to it; search, skim, show and Recall
    /// across everyone who pushed; an administrator's init, grant and revoke. Credentials from CAIRN_TEAM_URL, PGPASSWORD or the OS keyring
    /// (`cairn team login`), never from a flag or the data dir.
    Team {
        #[command(subcommand)]
        command: team::TeamCommand,
    },
    /// Generated insights: reports over a slice of sessions; generate, list, export.
    Insights {
        #[command(subcommand)]
        command: insights::InsightsCommand,
    },
    /// Export one session (or a range of its turns) to share: md, html, json or atif. Every
    /// byte passes the outbound redactor; the home directory is written as `~`; the export
    /// ends with what it left out.
    Export(export::ExportArgs),
    /// Read an ATIF trajectory (a teammate's `cairn export --format atif`, another tool's run)
    /// as a session: redacted like every transcript, listed (and filtered with --agent) as the
    /// agent the trajectory names and marked "imported", then skim, show and search read it
    /// like any other. Importing the same file again adds nothing.
    Import(export::ImportArgs),
    /// Remove sessions from the archive, every byte: rows, search index, vectors, retained
    /// copies, the Recall evidence and reports that quoted them. Lists what would go and asks
    /// first (--yes for scripts).
    Forget(forget::ForgetArgs),
    /// Read sessions again from their retained copies with this build's parsers, so what an
    /// older Cairn misread (a prompt taken for the model's words, an exit code missed, lines
    /// it skipped) is put right, even after the agent deleted the transcript. Recall entries
    /// whose cited records changed go back to unverified; links are rebuilt. A secret this
    /// build's redaction rules find that an older one let through is taken out of the copies,
    /// and out of what Recall, reports and pulled trajectories stored (all of them, whichever
    /// sessions are named). With --from-copies, a damaged or lost cairn.db is rebuilt from the
    /// retained copies alone, the old one moved aside.
    Reindex(reindex::ReindexArgs),
    /// Say a session belongs to a branch, PR or change: a link with evidence "person" (who,
    /// when, why) that ranks first and survives every sync and relink.
    #[command(
        after_help = "Examples: cairn link <session> --to feature/login --reason \"the login work\", cairn link <session> --to '#42'"
    )]
    Link(link::LinkArgs),
    /// Say a session is not related to a branch, PR or change: its links to it go, and no
    /// sync links it again (until `cairn link` says otherwise).
    Unlink(link::LinkArgs),
    /// The command that continues a session in its agent (`claude --resume <id>`, `codex resume
    /// <id>`, …) in the folder it ran in: printed, or run with --run. Says when the agent cannot
    /// resume or the folder is gone.
    Resume(resume::ResumeArgs),
    /// A session's turns, one turn's records, or the record a `cairn://session/…` link cites
    /// (in its turn, marked).
    Show(show::ShowArgs),
}

/// `--since` and `--until` as typed (each checked by [`render::when`]) as the core reads them:
/// a day from its start (`since`) or to its end (`until`) on the person's clock, the times and
/// spans as they are. An empty window is a usage error, said as typed: the core sees the end
/// of the --until day (the next day's start), and 'since 2026-02-12T00:00Z is not before until
/// 2026-02-12T00:00Z' would read wrong.
fn time_window(
    since: Option<String>,
    until: Option<String>,
) -> Result<(Option<String>, Option<String>), Usage> {
    let (from, to) = (
        render::local_day(since.clone(), false),
        render::local_day(until.clone(), true),
    );
    let at = |t: &Option<String>| t.as_deref().and_then(cairn_core::text::parse_rfc3339);
    if let (Some(a), Some(b)) = (at(&from), at(&to))
        && a >= b
    {
        return Err(Usage(format!(
            "--since {} is not before --until {}: nothing could match; swap them",
            render::clean(since.as_deref().unwrap_or_default()),
            render::clean(until.as_deref().unwrap_or_default())
        )));
    }
    Ok((from, to))
}

/// The target a command names: `kind value` (`branch main`, `review 42`, `change <id>`), or one
/// word (`#123`, a PR's URL, `review:<id>`, `change:<id>`, else a branch name).
fn target_of(
    command: &str,
    first: &str,
    value: Option<String>,
) -> Result<cairn_core::git::targets::Target> {
    use cairn_core::git::targets::{Target, TargetKind};
    match (TargetKind::parse(first), value) {
        (Some(kind), Some(value)) => Ok(Target::parse(kind, &value)?),
        (None, Some(_)) => Err(anyhow!(
            "unknown {command} target kind '{}'; use `cairn {command} <branch|#123|PR URL>` or `cairn {command} <branch|review|change> <value>`",
            cairn_core::text::one_line(first, 40)
        )),
        (Some(kind), None) if matches!(first, "branch" | "review" | "change") => Err(anyhow!(
            "`{}` target value is required, e.g. cairn {command} branch main",
            kind.as_str()
        )),
        (_, None) => Ok(Target::parse_to(first)?),
    }
}

#[derive(Subcommand)]
enum EmbeddingsCommand {
    /// Embed whatever lacks a current vector (Recall entries are also refreshed on every write
    /// when the local model is used; session turns only here).
    Build {
        /// recall, sessions or all.
        #[arg(long, default_value = "all", value_parser = ["recall", "sessions", "all"])]
        store: String,
        /// Drop every vector of the store and embed everything again.
        #[arg(long)]
        force: bool,
        /// Show a progress bar even when stderr is not a terminal.
        #[arg(long)]
        progress: bool,
    },
    /// The embedder and its fingerprint (or what keeps it from working: a local model not
    /// installed is said with every place it was looked for), and whether each store's vectors
    /// are fresh.
    Status,
}

#[derive(Subcommand)]
enum HooksCommand {
    /// Add `cairn hook` to the agent's settings (idempotent; keeps a backup; changes nothing
    /// else in the file, follows its symlink, keeps its mode; the diff hides `env` values).
    /// It captures after every turn and, as a session starts, gives the agent a short brief of
    /// the Recall entries a person accepted for that repository and branch (nothing until one
    /// is accepted).
    Install {
        #[arg(long, value_enum)]
        agent: HookedAgentArg,
        /// Capture only: no brief at session start (takes Cairn's session-start hook off).
        #[arg(long)]
        no_memory: bool,
        /// Show the change without writing it.
        #[arg(long)]
        dry_run: bool,
    },
    /// Take Cairn's hooks (capture and the brief at session start) out of the agent's settings,
    /// keeping a backup; other hooks and the rest of the file stay as they are. Sessions
    /// already captured stay in the archive, and `cairn sync` still reads new ones.
    Uninstall {
        #[arg(long, value_enum)]
        agent: HookedAgentArg,
        /// Show the change without writing it.
        #[arg(long)]
        dry_run: bool,
    },
}

#[derive(Subcommand)]
enum SkillsCommand {
    /// Write the Cairn skill where the agent looks for skills (idempotent; a skill file there
    /// that differs, one you edited, is kept in a backup beside it).
    Install {
        /// Which agents (default: Claude Code and Codex, the agents Cairn has a skill for).
        #[arg(long, value_enum)]
        agent: Vec<HookedAgentArg>,
        /// Show the change without writing it.
        #[arg(long)]
        dry_run: bool,
    },
    /// Take the Cairn skill away from the agents (a skill you edited is kept in a backup
    /// beside where it was).
    Uninstall {
        /// Which agents (default: Claude Code and Codex).
        #[arg(long, value_enum)]
        agent: Vec<HookedAgentArg>,
        /// Show the change without writing it.
        #[arg(long)]
        dry_run: bool,
    },
}

fn main() -> ExitCode {
    // SAFETY: the first statement of `main`: this process has no other thread yet.
    #[allow(unsafe_code)]
    unsafe {
        cairn_core::semantic::embed::set_thread_env_default();
    }
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => return usage_error(e),
    };
    let json = cli.global.json;
    let stdout_failed = std::cell::Cell::new(None);
    match run(cli, &stdout_failed) {
        Ok(code) => code,
        Err(err) => {
            // A closed pipe (`cairn search x | head`) is not an error, written as text or as
            // JSON (serde_json's error keeps the io error's kind, not the io error).
            if err.chain().any(|c| {
                c.downcast_ref::<std::io::Error>()
                    .is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe)
                    || c.downcast_ref::<serde_json::Error>()
                        .and_then(serde_json::Error::io_error_kind)
                        == Some(std::io::ErrorKind::BrokenPipe)
            }) {
                return ExitCode::SUCCESS;
            }
            let mut report = error_report(&err);
            if let Some(kind) = stdout_failed.get() {
                // A bare io error says what went wrong, not where: this was the output itself.
                report.message = format!("cannot write to standard output: {}", report.message);
                report.kind = if kind == std::io::ErrorKind::StorageFull {
                    ErrorKind::NoRoom
                } else {
                    ErrorKind::Io
                };
                report.hint = Some(
                    "free some space where the output goes, or send it elsewhere (a pipe, another file)"
                        .into(),
                );
            }
            print_error(&report, json);
            // CLI.md: 2 for a usage error, clap's or one a command finds itself.
            if err.chain().any(|c| c.is::<Usage>()) {
                ExitCode::from(2)
            } else {
                ExitCode::from(1)
            }
        }
    }
}

/// A command line the command itself refuses (arguments that are fine alone but not together):
/// a usage error, exit code 2, as clap's are.
#[derive(Debug)]
pub(crate) struct Usage(pub String);

impl std::fmt::Display for Usage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Usage {}

/// A failure as every front door tells it: the whole chain of context as the message, the kind
/// and the fix of the core error behind it. The CLI's own refusals (a missing `--yes`, a target
/// without its value) are input the user can correct. A cause its error already quotes
/// (`cannot read F: <the io error>`) is said once.
fn error_report(err: &anyhow::Error) -> ErrorReport {
    let mut message = String::new();
    for cause in err.chain().map(ToString::to_string) {
        if message.is_empty() {
            message = cause;
        } else if !message.ends_with(&cause) {
            message.push_str(": ");
            message.push_str(&cause);
        }
    }
    let core = err
        .chain()
        .find_map(|c| c.downcast_ref::<cairn_core::Error>());
    ErrorReport {
        kind: core.map_or(ErrorKind::Invalid, cairn_core::Error::kind),
        message,
        hint: core.and_then(cairn_core::Error::hint),
    }
}

/// On stderr, as CLI.md says errors go, so a failed command's stdout never holds a document a
/// script could take for an answer; the exit code says which stream to read. With `--json` it is
/// the core `ErrorReport` (`{kind, message, hint}`), the shape the desktop gets; otherwise one
/// line, and the hint below it.
fn print_error(report: &ErrorReport, json: bool) {
    if json {
        let mut err = std::io::stderr().lock();
        // Nothing is left to tell if stderr itself is gone.
        let _ = render::json_line(&mut err, report);
    } else {
        // One line (the CLI's contract): what failed, then what to do.
        match &report.hint {
            Some(hint) => say_err!(
                "cairn: {}; hint: {}",
                render::clean(&report.message),
                render::clean(hint)
            ),
            None => say_err!("cairn: {}", render::clean(&report.message)),
        }
    }
}

/// A command line clap refused: as clap prints it (exit 2), or as an `ErrorReport` when `--json`
/// was asked for. `--help` and `--version` are not errors and print as usual.
fn usage_error(e: clap::Error) -> ExitCode {
    let json = std::env::args_os()
        .skip(1)
        .take_while(|a| a != "--")
        .any(|a| a == "--json");
    if !json || !e.use_stderr() {
        e.exit();
    }
    let text = e.render().to_string();
    let (message, hint) = match e.kind() {
        clap::error::ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            missing_subcommand(&text)
        }
        // A bare `cairn`: said as every group without its subcommand is.
        clap::error::ErrorKind::MissingSubcommand => {
            use clap::CommandFactory;
            missing_subcommand(&Cli::command().render_help().to_string())
        }
        _ => clap_refusal(&text),
    };
    print_error(
        &ErrorReport::new(ErrorKind::Invalid, message).with_hint(hint),
        true,
    );
    ExitCode::from(u8::try_from(e.exit_code()).unwrap_or(2))
}

/// clap's refusal as one message and its advice: the first line with what it lists below it
/// (the arguments missing), then the values it accepts or its tip.
fn clap_refusal(text: &str) -> (String, String) {
    let mut lines = text.lines().map(str::trim);
    let mut message = lines
        .next()
        .unwrap_or_default()
        .trim_start_matches("error: ")
        .to_owned();
    let mut hint = None;
    for line in lines.by_ref() {
        if line.is_empty() || line.starts_with("Usage:") {
            break;
        }
        match line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            Some(values) => hint = Some(values.to_owned()),
            None if line.starts_with("tip: ") => {
                hint.get_or_insert_with(|| line.trim_start_matches("tip: ").to_owned());
            }
            None if message.ends_with(':') => {
                message.push(' ');
                message.push_str(line);
            }
            None => {
                message.push_str(", ");
                message.push_str(line);
            }
        }
    }
    let hint = hint.or_else(|| {
        lines
            .find_map(|l| l.strip_prefix("tip: "))
            .map(ToOwned::to_owned)
    });
    (
        message,
        hint.unwrap_or_else(|| "run with --help to see the usage".to_owned()),
    )
}

/// A command named without the subcommand it needs (`cairn recall`): clap prints its help,
/// which is no error message; said as one, with the subcommands to choose from.
fn missing_subcommand(help: &str) -> (String, String) {
    let command = help
        .lines()
        .find_map(|l| l.trim().strip_prefix("Usage: "))
        .and_then(|usage| {
            usage
                .split(" [")
                .next()
                .map(|c| c.split(" <").next().unwrap_or(c))
        })
        .unwrap_or("cairn")
        .trim()
        .to_owned();
    let subcommands: Vec<&str> = help
        .lines()
        .skip_while(|l| l.trim() != "Commands:")
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|name| *name != "help")
        .collect();
    (
        format!("`{command}` needs a subcommand"),
        format!("one of: {}", subcommands.join(", ")),
    )
}

fn data_dir(global: &Global) -> Result<PathBuf> {
    match &global.data_dir {
        Some(d) => Ok(d.clone()),
        None => Cairn::default_data_dir()
            .ok_or_else(|| anyhow!("no data dir: set CAIRN_DATA_DIR or pass --data-dir")),
    }
}

fn open(global: &Global) -> Result<Cairn> {
    let dir = data_dir(global)?;
    Cairn::open(&dir).with_context(|| format!("cannot open the archive in {}", dir.display()))
}

/// [`open`] for a command that works on what the archive holds (reads it, or changes what is
/// in it: forget, link, review, reindex, embeddings): a data dir a person named
/// (`--data-dir`, `$CAIRN_DATA_DIR`) that holds no archive is refused rather than made into an
/// empty one (a typo answered "No matches." and left a new archive behind). The default data
/// dir is opened as ever: empty on a fresh machine. [`open`] is for the commands that fill
/// an archive (sync, hook, import, pull, team) or set one up (hooks, skills, MCP install).
fn open_archive(global: &Global) -> Result<Cairn> {
    let named = match &global.data_dir {
        Some(dir) => Some((dir.clone(), true)),
        None => std::env::var_os("CAIRN_DATA_DIR")
            .filter(|d| !d.is_empty())
            .map(|d| (PathBuf::from(d), false)),
    };
    // A folder holding Cairn's config.toml is a data dir being set up, not a typo.
    if let Some((dir, by_flag)) = named
        && !dir.join(cairn_core::archive::store::DB_FILE).exists()
        && !dir.join(cairn_core::config::CONFIG_FILE).exists()
    {
        let shown = render::clean(&dir.display().to_string());
        let (check, sync) = if by_flag {
            ("--data-dir", format!("cairn --data-dir {shown} sync"))
        } else {
            ("$CAIRN_DATA_DIR", "cairn sync".to_owned())
        };
        bail!(
            "{shown} holds no archive ({} is missing): check {check}, or run `{sync}` to make one there",
            cairn_core::archive::store::DB_FILE,
        );
    }
    open(global)
}

/// Standard output, remembering the kind of the first write that failed (other than a closed
/// pipe), so the error names the output rather than a bare "No space left on device".
struct Stdout<'a> {
    inner: std::io::StdoutLock<'static>,
    failed: &'a std::cell::Cell<Option<std::io::ErrorKind>>,
}

impl Stdout<'_> {
    fn note<T>(&self, r: std::io::Result<T>) -> std::io::Result<T> {
        if let Err(e) = &r
            && e.kind() != std::io::ErrorKind::BrokenPipe
            && self.failed.get().is_none()
        {
            self.failed.set(Some(e.kind()));
        }
        r
    }
}

impl Write for Stdout<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let r = self.inner.write(buf);
        self.note(r)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        let r = self.inner.flush();
        self.note(r)
    }
}

fn run(cli: Cli, stdout_failed: &std::cell::Cell<Option<std::io::ErrorKind>>) -> Result<ExitCode> {
    let g = &cli.global;
    if let Command::Mcp { command: None } = cli.command {
        // Before stdout is locked below: the server writes it from its own threads.
        let dir = match &g.data_dir {
            Some(d) => d.clone(),
            None => Cairn::default_data_dir()
                .ok_or_else(|| anyhow!("no data dir: set CAIRN_DATA_DIR or pass --data-dir"))?,
        };
        cairn_mcp::serve_stdio(&dir, &g.dir)?;
        return Ok(ExitCode::SUCCESS);
    }
    let out = &mut Stdout {
        inner: std::io::stdout().lock(),
        failed: stdout_failed,
    };
    match cli.command {
        Command::Sync { agent, progress } => {
            let cairn = open(g)?;
            let opts = cairn_core::SyncOptions {
                agents: agent.into_iter().map(Agent::from).collect(),
            };
            let show_bar = render::shows_progress(progress, g.json);
            let bar = render::Bar::new(show_bar);
            let report = cairn.sync(&opts, &bar)?;
            bar.done();
            if g.json {
                render::json(out, &report)?;
            } else {
                render::sync_report(out, &report)?;
                if let Some(flagged) = report.stale_flagged {
                    writeln!(out, "{}", render::clean(&stale_flagged_said(flagged)))?;
                }
            }
        }
        Command::Hook { agent } => {
            // Read up to the payload's end, not stdin's: an agent that keeps the pipe open
            // must not hold its own start. Input that never completes is said and let go.
            let read = cairn_core::hooks::read_hook_input(
                std::io::stdin(),
                cairn_core::hooks::MAX_HOOK_INPUT,
                cairn_core::hooks::HOOK_INPUT_WAIT,
            )
            .context("cannot read the hook input on stdin")?;
            let input = match read {
                cairn_core::hooks::HookStdin::Read(input) => input,
                other => {
                    let why = other.why_not_read().unwrap_or_default();
                    say_err!("cairn: {}", render::clean(&why));
                    return Ok(ExitCode::SUCCESS);
                }
            };
            if cairn_core::hooks::is_session_start(&input) {
                session_start(g, &input, out)?;
                out.flush()?;
                return Ok(ExitCode::SUCCESS);
            }
            let agent = agent
                .map(Agent::from)
                .or_else(|| recognise::by_env(|name| std::env::var_os(name)));
            // Parsed before the archive opens: its git reads start now.
            let input = cairn_core::hooks::HookInput::parse_for(&input, agent)?;
            let cairn = open(g)?;
            match cairn.hook_parsed(input, agent, &g.dir) {
                // A path Cairn will not read is the payload's problem, not the agent's: say why
                // and let the agent go on (a non-zero exit shows as a failed hook).
                Err(refused @ cairn_core::Error::HookRefused { .. }) => {
                    say_err!("cairn: {}", render::clean(&refused.to_string()));
                }
                // Another capture held the lock past the hook's wait: the agent goes on, and
                // the next hook or sync reads what this turn wrote.
                Err(busy @ cairn_core::Error::Locked { .. }) => {
                    say_err!(
                        "cairn: {}; this turn is captured by the next hook or sync",
                        render::clean(&busy.to_string())
                    );
                }
                other => {
                    other?;
                }
            }
        }
        Command::Hooks {
            command:
                HooksCommand::Install {
                    agent,
                    no_memory,
                    dry_run,
                },
        } => {
            let cairn = open(g)?;
            let agent = Agent::from(agent);
            let exe = std::env::current_exe()
                .context("cannot find the cairn executable to put in the hook")?;
            let command = cairn.hook_command(&exe, agent);
            let result = cairn.install_hooks(agent, &command, !no_memory, dry_run)?;
            if g.json {
                render::json(out, &result)?;
            } else {
                render::hook_install(out, &result, !no_memory)?;
            }
            // Installed, but the agent will not run it: the install did not do what it is for.
            if let Some(why) = &result.not_running {
                out.flush()?;
                return Err(cairn_core::Error::Refused(format!(
                    "the hook is in place, but {agent} will not run it: {why}"
                ))
                .into());
            }
        }
        Command::Hooks {
            command: HooksCommand::Uninstall { agent, dry_run },
        } => {
            let cairn = open(g)?;
            let result = cairn.uninstall_hooks(Agent::from(agent), dry_run)?;
            if g.json {
                render::json(out, &result)?;
            } else {
                render::hook_uninstall(out, &result)?;
            }
        }
        Command::Mcp {
            command: Some(command),
        } => {
            let cairn = open(g)?;
            mcp_install::run(command, &cairn, g.json, &g.dir, out)?;
        }
        Command::Skills { command } => {
            let cairn = open(g)?;
            let (agent, dry_run, remove) = match command {
                SkillsCommand::Install { agent, dry_run } => (agent, dry_run, false),
                SkillsCommand::Uninstall { agent, dry_run } => (agent, dry_run, true),
            };
            let agents: Vec<Agent> = if agent.is_empty() {
                cairn_core::hooks::HOOKED.to_vec()
            } else {
                agent.into_iter().map(Agent::from).collect()
            };
            let mut results = Vec::new();
            for a in agents {
                results.push(if remove {
                    cairn.uninstall_skill(a, dry_run)?
                } else {
                    cairn.install_skill(a, dry_run)?
                });
            }
            if g.json {
                render::json(out, &results)?;
            } else {
                for r in &results {
                    let what = match (r.changed, r.dry_run, remove) {
                        (false, _, false) => "already up to date",
                        (true, true, false) => "would be written",
                        (true, false, false) => "written",
                        (false, _, true) => "not there: nothing to remove",
                        (true, true, true) => "would be removed",
                        (true, false, true) => "removed",
                    };
                    writeln!(
                        out,
                        "{} skill {what}: {}",
                        r.agent,
                        render::clean(&r.path.display().to_string())
                    )?;
                    render::backup(out, r.backup.as_deref())?;
                }
            }
        }
        Command::Forget(args) => {
            let cairn = open_archive(g)?;
            forget::run(args, &cairn, g.json, out)?;
        }
        // A rebuild opens no archive: the database it replaces may not open.
        Command::Reindex(args) if args.from_copies => {
            reindex::rebuild(args, &data_dir(g)?, g.json, out)?;
        }
        Command::Reindex(args) => {
            let cairn = open_archive(g)?;
            reindex::run(args, &cairn, g.json, out)?;
        }
        Command::Link(args) => {
            let cairn = open_archive(g)?;
            link::run(
                args,
                cairn_core::git::correct::CorrectionAction::Link,
                &cairn,
                &g.dir,
                g.json,
                out,
            )?;
        }
        Command::Unlink(args) => {
            let cairn = open_archive(g)?;
            link::run(
                args,
                cairn_core::git::correct::CorrectionAction::Unlink,
                &cairn,
                &g.dir,
                g.json,
                out,
            )?;
        }
        Command::Export(args) => {
            let cairn = open_archive(g)?;
            export::export(args, &cairn, g.json, out)?;
        }
        Command::Resume(args) => {
            let cairn = open_archive(g)?;
            let code = resume::run(args, &cairn, g.json, out)?;
            if code != 0 {
                return Ok(ExitCode::from(u8::try_from(code).unwrap_or(1)));
            }
        }
        Command::Import(args) => {
            let cairn = open(g)?;
            export::import(args, &cairn, g.json, out)?;
        }
        Command::Sessions {
            agent,
            branch,
            limit,
            since,
            until,
        } => {
            let filtered = agent.is_some()
                || branch.is_some()
                || limit == Some(0)
                || since.is_some()
                || until.is_some();
            let (since, until) = time_window(since, until)?;
            let cairn = open_archive(g)?;
            let q = SessionQuery {
                agent: agent.map(Agent::from),
                branch,
                limit,
                since,
                until,
            };
            let sessions = cairn.sessions(&q)?;
            if g.json {
                render::json(out, &sessions)?;
            } else if sessions.is_empty() && filtered {
                writeln!(
                    out,
                    "No session matches these filters; `cairn sessions` lists them all."
                )?;
            } else {
                render::sessions(out, &sessions, g.keys)?;
            }
        }
        Command::Search {
            query,
            limit,
            mode,
            agent,
            branch,
            project,
            since,
            until,
            sessions,
        } => {
            let (from, to) = time_window(since, until)?;
            let cairn = open_archive(g)?;
            let q = SearchQuery {
                text: query,
                agent: agent.map(Agent::from),
                branch,
                project,
                // Days on the clock the hits are listed on.
                since: from,
                until: to,
                // One more than shown says whether there are more, without counting them all.
                limit: Some(limit.saturating_add(1)),
                mode: mode.into(),
            };
            let shown = limit as usize;
            if sessions {
                let mut found = cairn.search_sessions(&q)?;
                let more = found.sessions.len() > shown;
                found.sessions.truncate(shown);
                if g.json {
                    render::json(out, &found.sessions)?;
                } else {
                    render::vectors_pending(
                        out,
                        VectorStore::Sessions,
                        found.vectors_pending,
                        q.mode,
                    )?;
                    render::session_hits(out, &found.sessions, g.keys)?;
                    render::more_hits(out, more, limit, "session")?;
                }
            } else {
                let mut answer = cairn.search_answer(&q)?;
                let more = answer.hits.len() > shown;
                answer.hits.truncate(shown);
                if g.json {
                    render::json(out, &answer.hits)?;
                } else {
                    render::vectors_pending(
                        out,
                        VectorStore::Sessions,
                        answer.vectors_pending,
                        answer.mode,
                    )?;
                    render::search(out, &answer, g.keys)?;
                    render::more_hits(out, more, limit, "hit")?;
                }
            }
        }
        Command::Why {
            target,
            write_notes: true,
            with_messages,
            dry_run,
            ..
        } => {
            let cairn = open_archive(g)?;
            let report = cairn.write_notes(&g.dir, &target, with_messages, dry_run)?;
            if g.json {
                render::json(out, &report)?;
            } else {
                render::notes(out, &report, g.keys)?;
            }
        }
        Command::Why {
            target,
            limit,
            mode,
            ..
        } => {
            let cairn = open_archive(g)?;
            let mode = mode.into();
            let answer = cairn.why(
                &g.dir,
                &cairn_core::views::why::WhyQuery {
                    target,
                    limit: Some(limit),
                    mode,
                },
            )?;
            if g.json {
                render::json(out, &answer)?;
            } else {
                render::vectors_pending(out, VectorStore::Sessions, answer.vectors_pending, mode)?;
                render::why(out, &answer, g.keys)?;
            }
        }
        Command::Skim {
            kind,
            value,
            include_weak,
            limit,
            agent,
            all_repos,
        } => {
            let cairn = open_archive(g)?;
            let target = match kind {
                Some(kind) => target_of("skim", &kind, value)?,
                None => cairn.default_target(&g.dir)?,
            };
            // Outside a repository, every repository's sessions (as with --all-repos).
            let repo = cairn_core::git::repo::Repo::discover(&g.dir).ok();
            let root = repo.as_ref().map(|r| r.root.to_string_lossy().into_owned());
            let branch = target.branch_name().map(str::to_owned);
            let view = cairn.skim(&cairn_core::views::skim::SkimQuery {
                target,
                include_weak,
                limit,
                repo_root: root.clone().filter(|_| !all_repos),
                unplaced: true,
                project: None,
                // Teammates' sessions only from the repository of -C (the same folder as
                // `repo_root`: found once).
                published_in: Some(root.unwrap_or_else(|| g.dir.to_string_lossy().into_owned())),
                agent: agent.map(Agent::from),
            })?;
            if g.json {
                render::json(out, &view)?;
            } else {
                render::skim(out, &view, g.keys)?;
                // Nothing found for a name that is no branch here: a typo, most likely.
                if let (true, Some(repo), Some(name)) =
                    (view.sessions.is_empty(), &repo, branch.as_deref())
                    && !repo.has_branch(name)
                {
                    writeln!(
                        out,
                        "{} has no branch named {}; `git branch` lists those it has.",
                        render::clean(&repo.root.display().to_string()),
                        render::clean(name)
                    )?;
                }
            }
        }
        Command::Publish {
            branch_or_kind,
            value,
            full,
            dry_run,
            summary_md,
        } => {
            let cairn = open(g)?;
            let target = target_of("publish", &branch_or_kind, value)?;
            // The summary alone writes nothing: it describes what publishing would share.
            let dry_run = dry_run || (summary_md && !full);
            let report = cairn.publish(&g.dir, &target, full, dry_run)?;
            if summary_md {
                let md = cairn_core::git::summary::markdown(&report);
                if g.json {
                    render::json(
                        out,
                        &serde_json::json!({ "markdown": md, "report": report }),
                    )?;
                } else {
                    write!(out, "{md}")?;
                }
            } else if g.json {
                render::json(out, &report)?;
            } else {
                render::publish(out, &report)?;
            }
        }
        Command::Push { remote } => {
            let cairn = open(g)?;
            let report = cairn.push(&g.dir, &remote)?;
            if g.json {
                render::json(out, &report)?;
            } else {
                render::push(out, &report)?;
            }
            // What the remote refused was listed; the exit code says the push is not whole.
            if !report.refused.is_empty() {
                out.flush()?;
                return Ok(ExitCode::FAILURE);
            }
        }
        Command::Pull { remote } => {
            let cairn = open(g)?;
            let report = cairn.pull(&g.dir, &remote)?;
            if g.json {
                render::json(out, &report)?;
            } else {
                render::pull(out, &report)?;
            }
        }
        Command::Show(args) => {
            let cairn = open_archive(g)?;
            show::run(args, &cairn, g.json, g.keys, out)?;
        }
        Command::Insights { command } => {
            let cairn = open_archive(g)?;
            insights::run(command, &cairn, g.json, out)?;
        }
        Command::Recall {
            command:
                Some(recall::RecallCommand::Extract {
                    command: extract::ExtractCommand::Doctor,
                }),
        } => {
            // What is at hand is listed even when config.toml does not load.
            let dir = data_dir(g)?;
            let opened = Cairn::open(&dir);
            let config = dir.join(cairn_core::config::CONFIG_FILE);
            if !extract::doctor(opened.as_ref(), &config, g.json, out)? {
                out.flush()?;
                return Ok(ExitCode::from(1));
            }
        }
        Command::Team { command } => {
            let cairn = open(g)?;
            team::run(command, &cairn, &g.dir, g.json, g.keys, out)?;
        }
        Command::Recall { command } => {
            let cairn = open_archive(g)?;
            if !recall::run(command, &cairn, g.json, g.keys, &g.dir, out)? {
                out.flush()?;
                return Ok(ExitCode::from(1));
            }
        }
        Command::Embeddings { command } => {
            let cairn = open_archive(g)?;
            match command {
                EmbeddingsCommand::Build {
                    store,
                    force,
                    progress,
                } => {
                    let stores = if store.trim() == "all" {
                        VectorStore::ALL.to_vec()
                    } else {
                        vec![VectorStore::parse(&store)?]
                    };
                    let show_bar = render::shows_progress(progress, g.json);
                    let mut reports = Vec::new();
                    for s in stores {
                        let bar =
                            render::CountBar::new(show_bar, &format!("embedding {}", s.unit()));
                        let report = cairn
                            .embeddings_build(s, force, &|done, total| bar.set(done, total))?;
                        bar.done();
                        if !g.json {
                            writeln!(
                                out,
                                "{}: embedded {}, {} stored ({:.1} s)",
                                s.as_str(),
                                s.count(report.embedded),
                                render::plural(report.vectors, "vector"),
                                report.seconds
                            )?;
                        }
                        reports.push(report);
                    }
                    if g.json {
                        render::json(out, &reports)?;
                    }
                }
                EmbeddingsCommand::Status => {
                    let status = cairn.embeddings_status()?;
                    if g.json {
                        render::json(out, &status)?;
                    } else {
                        render::embeddings_status(out, &status)?;
                    }
                }
            }
        }
        // Served above, before stdout is locked.
        Command::Mcp { command: None } => {}
        Command::Doctor { probe } => {
            let dir = data_dir(g)?;
            let options = cairn_core::doctor::DoctorOptions { probe };
            let report = Cairn::doctor_at_with(&dir, &options)
                .with_context(|| format!("cannot open the archive in {}", dir.display()))?;
            if g.json {
                render::json(out, &report)?;
            } else {
                render::doctor(out, &report)?;
            }
            if report.worst() == cairn_core::doctor::Status::Fail {
                out.flush()?;
                return Ok(ExitCode::from(1));
            }
        }
    }
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}

/// The one line a sync adds when its staleness check flagged entries (said only then): the
/// trusted ones it took out of service apart from those already waiting for review.
fn stale_flagged_said(f: cairn_core::recall::stale::Flagged) -> String {
    let mut parts = Vec::new();
    if f.trusted > 0 {
        parts.push(format!(
            "{} taken out of service (back in the review inbox)",
            render::plural(f.trusted, "trusted entry")
        ));
    }
    if f.untrusted > 0 {
        parts.push(format!(
            "{} waiting for review marked stale",
            render::plural(f.untrusted, "entry")
        ));
    }
    format!(
        "Recall: a new commit changed files entries cite: {} (`cairn recall review`).",
        parts.join(", ")
    )
}

/// The SessionStart hook: print the brief of trusted entries for the session's repository and
/// branch, or nothing. Whatever goes wrong (no archive, a broken or locked one, a bad config) is
/// one line on stderr and exit 0: memory must never stop an agent from starting.
fn session_start(g: &Global, input: &str, out: &mut impl Write) -> Result<()> {
    let brief = g
        .data_dir
        .clone()
        .or_else(Cairn::default_data_dir)
        .ok_or_else(|| cairn_core::Error::Invalid("no data dir".into()))
        .and_then(|dir| Cairn::session_start_brief(&dir, input, &g.dir));
    match brief {
        Ok(Some(brief)) => writeln!(out, "{}", brief.hook_output())?,
        Ok(None) => {}
        Err(e) => say_err!(
            "cairn: no memory brief for this session: {}",
            render::clean(&e.to_string())
        ),
    }
    Ok(())
}

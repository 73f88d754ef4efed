//! The tools: arguments (typed, with JSON schemas from these structs; their doc comments are
//! the descriptions a model reads), checks, the facade call, and the bounded answer.

use std::sync::Arc;

use cairn_core::archive::Agent;
use cairn_core::recall::agents::{EvidenceRef, Proposal, Speaker, Verdict};
use cairn_core::recall::model::{EntryType, Scope, Surface};
use cairn_core::recall::{self, Mode, QueryRequest};
use cairn_core::views::search::SearchQuery;
use cairn_core::views::skim::SkimQuery;
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResult, ContentBlock, Implementation, ServerCapabilities, ServerConfig};
use rmcp::{ErrorData, Peer, RoleServer, ServerHandler, tool, tool_handler, tool_router};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use cairn_core::recall::memory::Reach as AgentReach;

use crate::Session;
use crate::address::{self, Address, Page};
use crate::bound;
use crate::whole;

/// Proposals one server session may make (an agent that proposes more is looping).
pub const MAX_PROPOSALS: u32 = 20;
/// Feedback calls one server session may make.
pub const MAX_FEEDBACK: u32 = 100;

/// Page sizes: the default and the most one call may ask for.
const SKIM_LIMIT: (u32, u32) = (10, 50);
const SHOW_LIMIT: (u32, u32) = (20, 100);
const SEARCH_LIMIT: (u32, u32) = (20, 100);
const WHY_LIMIT: (u32, u32) = (5, 20);
const RECALL_LIMIT: (u32, u32) = (10, 50);
/// Turns listed per skimmed session: its related turns and its last ones, most recent first
/// kept.
const SKIM_TURNS: usize = 8;
/// A skimmed session's last turns, listed whether or not they are related.
const SKIM_LAST_TURNS: usize = 2;
/// A brief's default and largest token budget.
const BRIEF_TOKENS: (u32, u32) = (600, 8_000);

type Res = Result<CallToolResult, ErrorData>;

/// The key of an error's `data` marking it as the tool's answer rather than a JSON-RPC error
/// ([`Server::fail`] sets it, [`settle`] turns it into an `isError` result).
const TOOL_ERROR: &str = "cairn_tool_error";

/// The longest error message a client receives, in characters.
const MAX_ERROR: usize = 600;

/// A tool's outcome as the client receives it. A refusal of a tool the server has (a wrong
/// argument, an address that names nothing, a cap reached) and an error [`Server::fail`]
/// marked as the tool's answer become a result with `isError` whose text is the message: the
/// MCP spec (2025-11-25) puts input validation errors there, in front of the model, so it can
/// correct its call. A call of no such tool, and a fault in Cairn, stay JSON-RPC errors. Either
/// message is one clean line of at most [`MAX_ERROR`] characters: serde and rmcp quote what
/// the agent sent (`unknown variant`, `unknown field`) raw and whole, escape sequences
/// included, and rmcp hands arguments that do not deserialize back as an `isError` result of
/// its own, which is cut the same way.
fn settle<T: From<CallToolResult> + Refusal>(
    outcome: Result<T, ErrorData>,
    known_tool: bool,
) -> Result<T, ErrorData> {
    use rmcp::model::ErrorCode;
    let refused = |e: &ErrorData| {
        e.data.as_ref().and_then(|d| d.get(TOOL_ERROR)).is_some()
            || (known_tool
                && [
                    ErrorCode::INVALID_PARAMS,
                    ErrorCode::RESOURCE_NOT_FOUND,
                    ErrorCode::INVALID_REQUEST,
                ]
                .contains(&e.code))
    };
    match outcome {
        Err(e) if refused(&e) => Ok(CallToolResult::error(vec![ContentBlock::text(
            cairn_core::text::one_line(&e.message, MAX_ERROR),
        )])
        .into()),
        Err(mut e) => {
            e.message = cairn_core::text::one_line(&e.message, MAX_ERROR).into();
            Err(e)
        }
        Ok(mut answer) => {
            if let Some(refusal) = answer.refusal() {
                let text: String = refusal
                    .content
                    .iter()
                    .filter_map(|c| c.as_text().map(|t| t.text.as_str()))
                    .collect::<Vec<_>>()
                    .join(" ");
                refusal.content = vec![ContentBlock::text(cairn_core::text::one_line(
                    &text, MAX_ERROR,
                ))];
            }
            Ok(answer)
        }
    }
}

/// What a skim says to do next: read on with `show`; and when it found nothing, why (only
/// sessions that ran while the branch was checked out, hidden; no branch of that name here)
/// and what to call instead, so an empty list is not read as "nothing happened".
fn skim_hint(
    view: &cairn_core::views::skim::SkimView,
    branch: Option<&str>,
    empty: bool,
    cwd: &std::path::Path,
) -> String {
    const READ_ON: &str =
        "Abbreviated. `show` an address for a session's turns, a turn's records, or one record.";
    if !empty {
        return READ_ON.to_owned();
    }
    let weak = view.coverage.weak_sessions_hidden;
    if weak > 0 {
        return format!(
            "No session's work is known to have landed here; {weak} only ran while it was checked out: call `skim` again with `include_weak: true` to see them."
        );
    }
    if let Some(name) = branch
        && let Ok(repo) = cairn_core::git::repo::Repo::discover(cwd)
        && !repo.has_branch(name)
    {
        return format!(
            "This repository has no branch named {name}: check the name (a remote branch is no target; give its local name)."
        );
    }
    "No agent session related to it is in the archive.".to_owned()
}

/// The turns a skimmed session lists: its related turns and its last ones (where it ended
/// up, related or not), the most recent [`SKIM_TURNS`] of them, in order. The rest are
/// counted in `turns_not_listed`.
fn skim_turns(
    turns: &[cairn_core::views::skim::SkimTurn],
) -> Vec<&cairn_core::views::skim::SkimTurn> {
    let last = turns.len().saturating_sub(SKIM_LAST_TURNS);
    let chosen: Vec<_> = turns
        .iter()
        .enumerate()
        .filter(|(i, t)| t.related || *i >= last)
        .map(|(_, t)| t)
        .collect();
    chosen[chosen.len().saturating_sub(SKIM_TURNS)..].to_vec()
}

/// The answer as its text, with the lists [`bound::shrink`] cut named (`lists_cut`).
fn finish(mut body: Value, lists_cut: serde_json::Map<String, Value>) -> Res {
    if let Value::Object(map) = &mut body
        && !lists_cut.is_empty()
    {
        map.insert(bound::LISTS_CUT.into(), Value::Object(lists_cut));
    }
    let text =
        serde_json::to_string(&body).map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
    Ok(CallToolResult::success(vec![ContentBlock::text(text)]))
}

/// A tool call's answer as far as [`settle`] reads it: the result, when it is a refusal.
trait Refusal {
    fn refusal(&mut self) -> Option<&mut CallToolResult>;
}

impl Refusal for CallToolResult {
    fn refusal(&mut self) -> Option<&mut CallToolResult> {
        (self.is_error == Some(true)).then_some(self)
    }
}

impl Refusal for rmcp::model::CallToolResponse {
    fn refusal(&mut self) -> Option<&mut CallToolResult> {
        match self {
            rmcp::model::CallToolResponse::Complete(result) => result.refusal(),
            _ => None,
        }
    }
}

#[derive(Clone)]
pub struct Server {
    session: Arc<Session>,
    tool_router: ToolRouter<Self>,
}

impl Server {
    pub fn new(session: Arc<Session>) -> Server {
        Server {
            session,
            tool_router: Self::tool_router(),
        }
    }
}

/// An answer's list: its items under `key`, and the one field of an item that leaves whole
/// (not cut at [`bound::MAX_STRING`]; bounded by the answer's budget,
/// [`bound::Outbound::value_keeping`]), if any.
struct List<'a> {
    key: &'a str,
    items: Vec<Value>,
    whole: Option<&'a str>,
}

/// Where an answer's list goes on past what one answer holds.
enum Rest<'a> {
    /// At `next_cursor`, which the page's tool takes back as `cursor` with the same query
    /// (`more`: the source had more than this page).
    Cursor { page: &'a Page, more: bool },
    /// Nowhere: the tool takes no cursor (a brief, packed to its budget), so no answer offers
    /// one; what did not fit of the list's `of` items is counted in `lists_cut`.
    Counted { of: usize },
}

// ---- arguments ---------------------------------------------------------------------------

/// Retrieval mode.
#[derive(Debug, Clone, Copy, Default, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ModeArg {
    /// Words (default; fast, exact terms).
    #[default]
    Lexical,
    /// Words and meaning fused (needs embeddings built with `cairn embeddings build`).
    Hybrid,
    /// Meaning only (needs embeddings).
    Vector,
}

impl From<ModeArg> for Mode {
    fn from(m: ModeArg) -> Mode {
        match m {
            ModeArg::Lexical => Mode::Lexical,
            ModeArg::Hybrid => Mode::Hybrid,
            ModeArg::Vector => Mode::Vector,
        }
    }
}

#[derive(Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SkimArgs {
    /// What to catch up on: a branch name (`main`, `feature/login`), a pull request (`#123`,
    /// `123` or its URL), or a change id (`change:<id>`). Default: the branch checked out
    /// where this server runs.
    #[serde(default)]
    pub target: Option<String>,
    /// Also list sessions that only ran while the branch was checked out (weak links).
    #[serde(default)]
    pub include_weak: bool,
    /// Only this agent's sessions: `claude`, `codex`, `gemini`, `copilot`, `cursor`, … (the names
    /// `cairn sessions` shows).
    #[serde(default)]
    pub agent: Option<String>,
    /// Sessions per page (default 10, at most 50).
    #[serde(default, deserialize_with = "whole::limit::<1, 50, _>")]
    #[schemars(range(min = 1, max = 50))]
    pub limit: Option<u32>,
    /// `next_cursor` from the previous page.
    #[serde(default)]
    pub cursor: Option<String>,
}

#[derive(Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ShowArgs {
    /// A session key or the agent's session id, or an address: `cairn://session/<key>`,
    /// `cairn://session/<key>?turn=<turn key or index>`, `cairn://session/<key>?record=N`
    /// (or `record=N-M`), as `skim`, `search` and Recall evidence give them.
    pub address: String,
    /// A turn of the session (its key or index), when the address names only the session.
    #[serde(default)]
    pub turn: Option<String>,
    /// Items per page: turns of a session, records of a turn (default 20, at most 100).
    #[serde(default, deserialize_with = "whole::limit::<1, 100, _>")]
    #[schemars(range(min = 1, max = 100))]
    pub limit: Option<u32>,
    /// `next_cursor` from the previous page (pages go back in time).
    #[serde(default)]
    pub cursor: Option<String>,
}

#[derive(Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchArgs {
    /// Words to find in what agents and people wrote and ran (lexical: every word must match),
    /// or a question (hybrid, vector: only turns close to it in meaning come back, so a
    /// question about nothing in the archive finds nothing).
    pub query: String,
    #[serde(default)]
    pub mode: ModeArg,
    /// Only this agent's sessions: `claude`, `codex`, `gemini`, `copilot`, `cursor`, … (the names
    /// `cairn sessions` shows).
    #[serde(default)]
    pub agent: Option<String>,
    /// Only sessions of this project (the repository directory name or path).
    #[serde(default)]
    pub repo: Option<String>,
    /// Only sessions on this branch.
    #[serde(default)]
    pub branch: Option<String>,
    /// Only records at or after this time (`YYYY-MM-DD` or RFC 3339).
    #[serde(default)]
    pub since: Option<String>,
    /// Only records before this time (RFC 3339), or up to the end of this day (`YYYY-MM-DD`).
    #[serde(default)]
    pub until: Option<String>,
    /// Hits per page (default 20, at most 100).
    #[serde(default, deserialize_with = "whole::limit::<1, 100, _>")]
    #[schemars(range(min = 1, max = 100))]
    pub limit: Option<u32>,
    /// `next_cursor` from the previous page.
    #[serde(default)]
    pub cursor: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WhyArgs {
    /// What to explain: a commit (an id, `HEAD~1`, a branch), a file of the repository the
    /// server runs in with an optional line range (`src/auth.rs:40-52`), or a description.
    pub target: String,
    /// How a description is searched: lexical (default), vector or hybrid.
    #[serde(default)]
    pub mode: ModeArg,
    /// Sessions to return (default 5, at most 20).
    #[serde(default, deserialize_with = "whole::limit::<1, 20, _>")]
    #[schemars(range(min = 1, max = 20))]
    pub limit: Option<u32>,
}

/// A Recall entry type.
#[derive(Debug, Clone, Copy, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TypeArg {
    Fact,
    Decision,
    Procedure,
    DebuggingMethod,
    Warning,
    Preference,
    OpenQuestion,
}

impl From<TypeArg> for EntryType {
    fn from(t: TypeArg) -> EntryType {
        match t {
            TypeArg::Fact => EntryType::Fact,
            TypeArg::Decision => EntryType::Decision,
            TypeArg::Procedure => EntryType::Procedure,
            TypeArg::DebuggingMethod => EntryType::DebuggingMethod,
            TypeArg::Warning => EntryType::Warning,
            TypeArg::Preference => EntryType::Preference,
            TypeArg::OpenQuestion => EntryType::OpenQuestion,
        }
    }
}

/// Where a Recall entry applies.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ScopeArg {
    Global,
    Project,
    Repository,
    Branch,
    File,
    Tool,
    Agent,
}

impl From<ScopeArg> for Scope {
    fn from(s: ScopeArg) -> Scope {
        match s {
            ScopeArg::Global => Scope::Global,
            ScopeArg::Project => Scope::Project,
            ScopeArg::Repository => Scope::Repository,
            ScopeArg::Branch => Scope::Branch,
            ScopeArg::File => Scope::File,
            ScopeArg::Tool => Scope::Tool,
            ScopeArg::Agent => Scope::Agent,
        }
    }
}

#[derive(Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RecallQueryArgs {
    /// What you want to know ("how do we run the migrations?"); empty lists the most recent
    /// entries.
    #[serde(default)]
    pub query: String,
    #[serde(default)]
    pub mode: ModeArg,
    /// Also return entries no person has reviewed yet (marked `trusted: false`). Default:
    /// only trusted entries.
    #[serde(default)]
    pub include_untrusted: bool,
    /// Only entries of this type.
    #[serde(rename = "type", default)]
    pub entry_type: Option<TypeArg>,
    /// Another project's entries instead of this repository's (its directory name or path).
    /// Default: the repository this server runs in.
    #[serde(default)]
    pub repo: Option<String>,
    /// The entries as they apply on this branch (those scoped to it, and every wider one)
    /// instead of on the branch checked out where this server runs.
    #[serde(default)]
    pub branch: Option<String>,
    /// Entries of every project (each names its `project` and `branch`) instead of this
    /// repository's.
    #[serde(default)]
    pub all_repos: bool,
    /// Only entries whose evidence comes from this agent's sessions (`claude`, `codex`, …).
    #[serde(default)]
    pub agent: Option<String>,
    /// Your own session id, so your use of the entries is measured.
    #[serde(default)]
    pub session: Option<String>,
    /// Entries per page (default 10, at most 50).
    #[serde(default, deserialize_with = "whole::limit::<1, 50, _>")]
    #[schemars(range(min = 1, max = 50))]
    pub limit: Option<u32>,
    /// `next_cursor` from the previous page.
    #[serde(default)]
    pub cursor: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RecallBriefArgs {
    /// The task at hand, in a sentence; empty gives the most relevant recent entries.
    #[serde(default)]
    pub query: String,
    /// The brief's budget in tokens (default 600, at most 8000). Whatever it is, the brief
    /// stays within 24 KB of text (about 6,000 tokens), half the most an answer carries.
    #[serde(default, deserialize_with = "whole::max_tokens::<50, 8000, _>")]
    #[schemars(range(min = 50, max = 8000))]
    pub max_tokens: Option<u32>,
    #[serde(default)]
    pub mode: ModeArg,
    /// Also pack entries no person has reviewed yet. Default: only trusted entries.
    #[serde(default)]
    pub include_untrusted: bool,
    /// Another project's entries instead of this repository's (its directory name or path).
    /// Default: the repository this server runs in.
    #[serde(default)]
    pub repo: Option<String>,
    /// The entries as they apply on this branch (those scoped to it, and every wider one)
    /// instead of on the branch checked out where this server runs.
    #[serde(default)]
    pub branch: Option<String>,
    /// Entries of every project instead of this repository's (what a server started outside a
    /// repository briefs from without `repo`).
    #[serde(default)]
    pub all_repos: bool,
    /// Only entries whose evidence comes from this agent's sessions (`claude`, `codex`, …).
    #[serde(default)]
    pub agent: Option<String>,
    /// Your own session id, so your use of the entries is measured.
    #[serde(default)]
    pub session: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RecallProposeArgs {
    #[serde(rename = "type")]
    pub entry_type: TypeArg,
    /// One line saying what the entry is ("Run migrations with `make migrate`, not sqlx").
    pub title: String,
    /// The entry itself: what is true, decided, or to be done, and why. At most 4000 characters.
    pub body: String,
    /// When it applies ("before touching the schema").
    #[serde(default)]
    pub trigger: Option<String>,
    /// Where it applies (default `project`).
    #[serde(default)]
    pub scope: Option<ScopeArg>,
    /// Records that support it, as `cairn://session/<key>?record=N` or `…?record=N-M`
    /// (from `show`, `search` or `skim`); at least one, at most 8.
    pub evidence: Vec<String>,
    /// Your own session id (recorded as where the proposal came from).
    #[serde(default)]
    pub session: Option<String>,
    /// Your current turn (its key or index), if you know it.
    #[serde(default)]
    pub turn: Option<String>,
    /// Your agent's name (default: the MCP client's name).
    #[serde(default)]
    pub agent: Option<String>,
}

/// How an entry served you.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum VerdictArg {
    /// It was right and it helped.
    Helpful,
    /// It was wrong or misleading.
    Wrong,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RecallFeedbackArgs {
    /// The entry's `id`, as `recall_query` or `recall_brief` returned it.
    pub entry_id: String,
    pub verdict: VerdictArg,
    /// What was wrong or how it helped (optional, at most 1000 characters).
    #[serde(default)]
    pub note: Option<String>,
    /// The `query_id` of the answer that gave you the entry, if any.
    #[serde(default)]
    pub query_id: Option<String>,
    /// Your own session id.
    #[serde(default)]
    pub session: Option<String>,
}

// ---- helpers -----------------------------------------------------------------------------

fn invalid(msg: impl Into<String>) -> ErrorData {
    ErrorData::invalid_params(msg.into(), None)
}

fn page_size(
    tool: &str,
    asked: Option<u32>,
    (default, max): (u32, u32),
) -> Result<usize, ErrorData> {
    match asked {
        None => Ok(default as usize),
        // The argument's deserializer refuses these already, with the same words.
        Some(n) if n == 0 || n > max => Err(invalid(format!(
            "`limit` {n} is out of range for {tool}: expected {}",
            whole::expected("limit", 1, max),
        ))),
        Some(n) => Ok(n as usize),
    }
}

/// The page of `tool`'s result set for `args` that their `cursor` names.
fn page<A: Serialize>(
    tool: &'static str,
    args: &A,
    cursor: Option<&str>,
) -> Result<Page, ErrorData> {
    Page::of(tool, args, cursor).map_err(invalid)
}

/// Optional short text argument: trimmed, one line, bounded.
fn short(field: &str, v: Option<&str>) -> Result<Option<String>, ErrorData> {
    match v.map(str::trim).filter(|v| !v.is_empty()) {
        None => Ok(None),
        Some(v) if v.len() > 512 || address::unseen(v) => Err(invalid(format!(
            "`{field}` must be one line of at most 512 bytes without control or invisible characters"
        ))),
        Some(v) => Ok(Some(v.to_owned())),
    }
}

/// A core error's message as an agent can act on it: the core names the CLI's commands and
/// flags (`cairn sessions`, `cairn show <key>`, `-C`, `--mode lexical`), an agent has tools and
/// their arguments.
fn for_agents(msg: &str) -> String {
    const FIND: &str = "find sessions with the `skim` or `search` tool";
    const REPO: &str = "the server reads the repository it was started in (`cairn mcp -C <dir>`)";
    let mut m = msg
        .replace("--mode lexical", "`\"mode\": \"lexical\"`")
        .replace("find sessions with `cairn sessions` or `cairn skim`", FIND)
        .replace("list sessions with `cairn sessions`", FIND)
        .replace("find sessions with `cairn sessions`", FIND)
        .replace("use -C to choose a repository", REPO)
        .replace("use -C to choose one", REPO)
        .replace(
            "pass a target: cairn skim branch <name>",
            "pass `target` (a branch name, or a pull request as `#12`)",
        );
    // The core names the repository's root, which an agent's answer shows as `.` (every path
    // in it reads relative to the root): name the repository by what serves it instead.
    for (said, meant) in [
        (
            " is outside the repository at ",
            " is outside this repository",
        ),
        (": no such file in ", ": no such file in this repository"),
    ] {
        if let Some(at) = m.find(said) {
            let root_ends = m[at + said.len()..]
                .find("; ")
                .map_or(m.len(), |i| at + said.len() + i);
            m.replace_range(
                at..root_ends,
                &format!("{meant} (the one `cairn mcp -C <dir>` serves)"),
            );
        }
    }
    // `cairn show <key> [--turn <n>]`: the `show` tool on the session's address.
    while let Some(at) = m.find("`cairn show") {
        let Some(len) = m[at + 1..].find('`') else {
            break;
        };
        m.replace_range(
            at..at + len + 2,
            "`show` on the session's address (`cairn://session/<key>?turn=<n>`)",
        );
    }
    m
}

/// Optional project argument: a repository's directory name, or its path (a session's project
/// is its repository's directory name, so a path is read as its last folder).
fn project(field: &str, v: Option<&str>) -> Result<Option<String>, ErrorData> {
    Ok(short(field, v)?.map(|p| {
        let name = p.trim_end_matches('/');
        match name.rsplit_once('/') {
            Some((_, last)) => last.to_owned(),
            None if !name.is_empty() => name.to_owned(),
            None => p,
        }
    }))
}

/// Optional agent argument: one of the core's agent names (the list `--agent` takes in the
/// CLI), else an error naming them all.
fn agent(v: Option<&str>) -> Result<Option<Agent>, ErrorData> {
    match short("agent", v)? {
        None => Ok(None),
        Some(name) => Agent::parse(&name).map(Some).ok_or_else(|| {
            invalid(format!(
                "unknown agent {:?}; expected one of {}",
                cairn_core::text::one_line(&name, 40),
                Agent::EVERY.map(Agent::as_str).join(", ")
            ))
        }),
    }
}

impl Server {
    fn out(&self) -> &bound::Outbound {
        &self.session.outbound
    }

    /// A core error as the agent sees it (cleaned and redacted like answers). A wrong address
    /// or argument, and what the archive's state or the machine refuses (no vectors yet, no
    /// model, a lock, a failing endpoint), are the tool's own answer with `isError` (see
    /// [`settle`]), which the MCP spec puts in front of the model so it can act on it: the
    /// message and its hint say what to do instead. A fault in Cairn is a JSON-RPC error.
    fn fail(&self, e: cairn_core::Error) -> ErrorData {
        use cairn_core::error::ErrorKind;
        let kind = e.kind();
        let msg = match e.hint() {
            Some(hint) => format!("{e}; {hint}"),
            None => e.to_string(),
        };
        // The data dir named, as in [`Self::no_archive`]: an error about the archive's own
        // files (damaged, unreadable, no room) must say which folder.
        let msg = self.out().naming_dir(&for_agents(&msg), &self.data_dir());
        match kind {
            ErrorKind::NotFound => ErrorData::resource_not_found(msg, None),
            ErrorKind::Invalid => ErrorData::invalid_params(msg, None),
            // A fault in Cairn itself. A damaged or unreadable archive is the tool's answer
            // (below): the agent reads it and tells the person what to run.
            ErrorKind::Internal => ErrorData::internal_error(msg, None),
            _ => ErrorData::internal_error(msg, Some(json!({ TOOL_ERROR: kind }))),
        }
    }

    /// The data dir, as the outbound rule names it in an answer about the archive's own files
    /// ([`bound::Outbound::naming_dir`]).
    fn data_dir(&self) -> String {
        self.session.cairn.data_dir().display().to_string()
    }

    /// Why a server started on a data dir without an archive answers nothing: where it looked
    /// and what makes one (or that one was made since, and the server must start again).
    fn no_archive(&self) -> String {
        // Named whole (the outbound rule hides folders outside the repository): it is the
        // folder this agent's MCP config names, and what the person must check.
        let dir = self.data_dir();
        let text = if self.session.cairn.holds_no_archive() {
            format!(
                "no Cairn archive in {dir} ({} is missing), so there is no history to read yet: the person runs `cairn sync` to make it, or corrects the data dir in this agent's MCP config (`cairn mcp install`)",
                cairn_core::archive::store::DB_FILE
            )
        } else {
            format!(
                "the Cairn archive in {dir} was made after this server started; restart the MCP server (or the agent) to read it"
            )
        };
        cairn_core::text::one_line(&self.out().naming_dir(&text, &dir), MAX_ERROR)
    }

    /// Why a server started on an archive it could not open answers nothing: where, what
    /// went wrong, and that the person's `cairn doctor` says how to recover.
    fn unopened(&self, e: &cairn_core::Error) -> String {
        let dir = self.data_dir();
        let text = format!(
            "the Cairn archive in {dir} cannot be read ({e}), so there is no history to answer from: the person runs `cairn doctor` to see what is wrong and how to recover it, then restarts this MCP server"
        );
        cairn_core::text::one_line(&self.out().naming_dir(&text, &dir), MAX_ERROR)
    }

    /// The answer: `body` and each of `items` cleaned, redacted and cut as [`bound::Outbound`]
    /// does, the items under `key` cut to the byte budget, with `next_cursor` when more remain
    /// (`more`: the source had more than this `page`).
    fn answer(&self, page: &Page, body: Value, key: &str, items: Vec<Value>, more: bool) -> Res {
        let body = self.out().value(body);
        let list = List {
            key,
            items,
            whole: None,
        };
        self.answer_cleaned(body, list, Rest::Cursor { page, more })
    }

    /// [`Self::answer`] of a `body` already made outbound (one that carries a text whole beside
    /// what [`bound::Outbound::value`] cut: a brief's, [`bound::Outbound::packed`]), its list
    /// going on as `rest` says.
    fn answer_cleaned(&self, mut body: Value, list: List<'_>, rest: Rest<'_>) -> Res {
        let List { key, items, whole } = list;
        let mut lists_cut = serde_json::Map::new();
        // The body's own lists (a `why`'s commits) take at most half the answer.
        bound::shrink(&mut body, "", bound::MAX_BYTES / 2, &mut lists_cut);
        let head = serde_json::to_string(&body).map_or(0, |s| s.len());
        let budget = bound::MAX_BYTES.saturating_sub(head + 1024);
        // Each item leaves as the body does: cleaned, redacted, its strings cut (its `whole`
        // field only to what fits in the budget alone), its lists cut to what fits beside the
        // body; then measured.
        let item_cuts = std::cell::RefCell::new(serde_json::Map::new());
        let (kept, cut) = bound::fit(
            items.into_iter().enumerate().map(|(i, item)| {
                let mut v = match whole {
                    Some(field) => {
                        let mut v = self.out().value_keeping(item, field);
                        bound::fit_field(&mut v, field, budget);
                        v
                    }
                    None => self.out().value(item),
                };
                let at = format!("/{key}/{i}");
                bound::shrink(&mut v, &at, budget, &mut item_cuts.borrow_mut());
                v
            }),
            budget,
        );
        let listed = kept.len();
        let next = match rest {
            Rest::Cursor { page, more } => Some((cut || more).then(|| page.next(listed))),
            Rest::Counted { of } => {
                if listed < of {
                    lists_cut.insert(format!("/{key}"), Value::from((of - listed) as u64));
                }
                None
            }
        };
        if let Value::Object(map) = &mut body {
            map.insert(key.to_owned(), Value::Array(kept));
            if let Some(next) = next {
                map.insert(
                    "next_cursor".into(),
                    next.map_or(Value::Null, Value::String),
                );
            }
        }
        // Only the notes of the items this page kept.
        lists_cut.extend(
            item_cuts
                .into_inner()
                .into_iter()
                .filter(|(pointer, _)| body.pointer(pointer).is_some()),
        );
        finish(body, lists_cut)
    }

    fn single(&self, body: Value) -> Res {
        let mut body = self.out().value(body);
        let mut lists_cut = serde_json::Map::new();
        bound::shrink(&mut body, "", bound::MAX_BYTES, &mut lists_cut);
        finish(body, lists_cut)
    }

    /// Refuse an entry no agent is served: an archived one (a person rejected it, a newer one
    /// replaced it, its extraction was retired), where a verdict would measure nothing. An id
    /// that names no entry is the core's to refuse.
    fn served(&self, entry_id: &str) -> Result<(), ErrorData> {
        match self.session.cairn.recall_get(entry_id) {
            Ok(entry) if entry.status != cairn_core::recall::model::Status::Accepted => {
                Err(invalid(self.out().text(&format!(
                    "recall entry {entry_id} is archived (a person rejected it, or a newer entry replaced it) and is served to no agent; feedback on it is not recorded. Rate the entries `recall_query` or `recall_brief` give you now"
                ))))
            }
            _ => Ok(()),
        }
    }

    fn speaker(
        &self,
        peer: &Peer<RoleServer>,
        agent: Option<String>,
        session: Option<String>,
        turn: Option<String>,
    ) -> Speaker {
        let client = peer
            .peer_info()
            .map(|i| format!("{} {}", i.client_info.name, i.client_info.version))
            .unwrap_or_default();
        let client_name = peer
            .peer_info()
            .map(|i| i.client_info.name.clone())
            .unwrap_or_default();
        Speaker {
            agent: agent.unwrap_or(client_name),
            session,
            turn,
            server_session: self.session.id.clone(),
            client,
        }
    }

    fn entry_json(&self, r: &recall::rank::Ranked) -> Result<Value, ErrorData> {
        let e = &r.entry;
        let evidence = self
            .session
            .cairn
            .recall_evidence_state(&e.id)
            .map_err(|e| self.fail(e))?;
        let evidence: Vec<Value> = evidence
            .iter()
            .take(8)
            .map(|ev| {
                json!({
                    "address": if ev.ordinal_start == ev.ordinal_end {
                        address::record_link(&ev.session_key, ev.ordinal_start)
                    } else {
                        format!("cairn://session/{}?record={}-{}", ev.session_key, ev.ordinal_start, ev.ordinal_end)
                    },
                    "changed_since_cited": ev.changed,
                })
            })
            .collect();
        Ok(json!({
            "id": e.id,
            "type": e.entry_type.as_str(),
            "title": e.title,
            "body": e.body,
            "trigger": e.trigger,
            "trusted": e.is_trusted(),
            "review_state": e.review_state.as_str(),
            "stale": e.stale,
            "stale_note": e.stale_note,
            "provenance_ok": e.provenance_ok,
            "provenance_note": e.provenance_note,
            "project": e.project,
            "branch": e.git_branch,
            "updated_at": e.updated_at,
            "score": r.score,
            "evidence": evidence,
        }))
    }

    /// Which entries a Recall question is about: by default the repository this server runs
    /// in, on the branch checked out there; `repo` another project (on `branch`, when given),
    /// `branch` another branch, `all_repos` every project. `None` when there is nowhere to
    /// answer for (no repository here, none asked). Asked about this repository (by default,
    /// or as `repo` by its name or its root's path), it is this repository's entries: not those
    /// of another of the same name (`AgentReach::root`); another project, a path elsewhere, or
    /// every project is by name.
    fn reach(
        &self,
        repo: Option<&str>,
        branch: Option<&str>,
        all_repos: bool,
    ) -> Result<Option<AgentReach>, ErrorData> {
        let asked = repo.map(|r| r.trim().trim_end_matches('/'));
        let repo = project("repo", repo)?;
        let branch = short("branch", branch)?;
        let here = self.session.place.as_ref();
        let project = match (repo, all_repos) {
            (Some(_), true) => {
                return Err(invalid(
                    "give `repo` (one project) or `all_repos: true` (every project), not both",
                ));
            }
            (Some(p), false) => Some(p),
            (None, true) => None,
            (None, false) => match here {
                Some(h) => Some(h.project.clone()),
                None => return Ok(None),
            },
        };
        // The branch checked out here is this repository's, not another's.
        let here = here.filter(|h| project.as_ref() == Some(&h.project));
        let branch = branch.or_else(|| here.and_then(|h| h.branch.clone()));
        // A path is this repository only when it is its root.
        let mine = here.filter(|h| {
            asked.is_none_or(|r| !r.contains('/') || std::path::Path::new(r) == h.root)
        });
        Ok(Some(AgentReach {
            project,
            branch,
            root: mine.map(|h| h.root.clone()),
        }))
    }

    fn recall_filters(
        &self,
        include_untrusted: bool,
        entry_type: Option<TypeArg>,
        agent_name: Option<&str>,
        limit: usize,
    ) -> Result<recall::store::Filters, ErrorData> {
        Ok(recall::store::Filters {
            agent: agent(agent_name)?,
            entry_type: entry_type.map(Into::into),
            trusted_only: !include_untrusted,
            limit: Some(limit as u32),
            ..Default::default()
        })
    }
}

/// What an answer says it was answered for (`repo` null: every project).
fn reach_json(reach: &AgentReach) -> Value {
    json!({ "repo": reach.project, "branch": reach.branch })
}

/// The line an answer carries when entries of another repository of this one's name were left
/// out, or reading stopped at its bound short of the page, if either happened.
fn left_out(reach: &AgentReach, left: recall::memory::LeftOut) -> Option<String> {
    reach.project.as_deref().and_then(|p| left.line(p))
}

/// The hint of a Recall answer with no entry: why (entries of another repository of the same
/// name left out first, as `left` says), and what to try.
fn recall_empty_hint(
    reach: &AgentReach,
    has_query: bool,
    trusted_only: bool,
    untrusted: u32,
    left: recall::memory::LeftOut,
) -> String {
    let mut next = Vec::new();
    if has_query {
        next.push("other words (or an empty `query` for the most recent entries)".to_owned());
    }
    if trusted_only && untrusted > 0 {
        next.push(format!(
            "`include_untrusted: true` to see the {untrusted} unreviewed {} (a person accepts proposals with `cairn recall review`)",
            if untrusted == 1 { "entry" } else { "entries" }
        ));
    }
    if reach.project.is_some() {
        next.push("`repo` for another project, or `all_repos: true` for every project".to_owned());
    }
    let why = match (&reach.project, trusted_only && untrusted == 0 && !has_query) {
        (Some(p), true) => format!(
            "No entry a person reviewed applies to {p}{} yet (a person accepts proposals with `cairn recall review`).",
            reach
                .branch
                .as_deref()
                .map(|b| format!(" on branch {b}"))
                .unwrap_or_default()
        ),
        (Some(p), false) => format!(
            "No entry matches in {p}{}.",
            reach
                .branch
                .as_deref()
                .map(|b| format!(" on branch {b}"))
                .unwrap_or_default()
        ),
        (None, _) => "No entry matches in any project.".to_owned(),
    };
    let why = match left_out(reach, left) {
        Some(line) => format!("{line} {why}"),
        None => why,
    };
    if next.is_empty() {
        why
    } else {
        format!("{why} Try {}.", next.join("; "))
    }
}

/// The answer when the server runs outside a repository and the agent named none.
/// A session's agent as every answer names it: the one that ran it, as `search` filters and
/// names its hits (`COALESCE(ran_as, agent)`): an imported or pulled trajectory of one of
/// Cairn's agents is that agent, not `atif`. With it, the trajectory's own name of an agent
/// Cairn does not know (the session then stays `atif`).
fn shown_agent(agent: Agent, ran_by: Option<&str>) -> (&'static str, Option<&str>) {
    // `ran_by` is the core's reading of the trajectory's name already: one of Cairn's agents
    // by its own name, or a plain foreign one.
    let known = ran_by.and_then(Agent::parse);
    let shown = match known {
        Some(ran) if agent == Agent::Atif => ran,
        _ => agent,
    };
    (shown.as_str(), ran_by.filter(|_| known.is_none()))
}

fn nowhere(tool: &str) -> Res {
    let brief = tool == "recall_brief";
    let mut body = json!({
        "repo": Value::Null,
        "entries": [],
        "next_cursor": Value::Null,
        "hint": "This server does not run in a git repository, so there is no project to answer for: pass `repo` (a project's directory name), or `all_repos: true` for every project.",
    });
    if let (true, Value::Object(map)) = (brief, &mut body) {
        // A brief takes no cursor, so offers none.
        map.remove("next_cursor");
        map.insert("text".into(), Value::String(String::new()));
    }
    finish(body, serde_json::Map::new())
}

// ---- the tools ---------------------------------------------------------------------------

#[tool_router]
impl Server {
    /// Catch up on a branch, pull request or change.
    #[tool(
        description = "Catch up on a branch, pull request or change: the past agent sessions in this repository related to it (most recent first), why each is related (edited files that were committed, ran on the branch, …) with a confidence, and their turns abbreviated. Start here to learn what was already discussed, decided and tried. Without `target`, uses the branch checked out where this server runs; `agent` keeps one agent's sessions. Follow up with `show` on a session or turn address for detail.",
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    fn skim(&self, Parameters(a): Parameters<SkimArgs>) -> Res {
        let limit = page_size("skim", a.limit, SKIM_LIMIT)?;
        let page = page("skim", &a, a.cursor.as_deref())?;
        let offset = page.offset;
        let agent = agent(a.agent.as_deref())?;
        let cairn = &self.session.cairn;
        let target = match a.target.as_deref().map(str::trim).filter(|t| !t.is_empty()) {
            Some(t) => address::target(t).map_err(invalid)?,
            None => cairn
                .default_target(&self.session.cwd)
                .map_err(|e| self.fail_here(e))?,
        };
        let branch = target.branch_name().map(str::to_owned);
        let view = cairn
            .skim(&SkimQuery {
                target,
                include_weak: a.include_weak,
                limit: Some((offset + limit + 1) as u32),
                // `main` of another repository is not this one's.
                repo_root: self.session.outbound.repo_root.clone(),
                unplaced: true,
                project: None,
                // The same folder as `repo_root` when there is one: found once.
                published_in: Some(
                    self.session
                        .outbound
                        .repo_root
                        .clone()
                        .unwrap_or_else(|| self.session.cwd.to_string_lossy().into_owned()),
                ),
                agent,
            })
            .map_err(|e| self.fail(e))?;
        // The core keeps the most recently active sessions; in that order, a longer list
        // starts with the shorter one, so pages are stable.
        let mut ordered: Vec<&cairn_core::views::skim::SkimSession> =
            view.sessions.iter().collect();
        ordered.sort_by(|a, b| {
            b.updated_at
                .cmp(&a.updated_at)
                .then_with(|| a.session_key.cmp(&b.session_key))
        });
        let more = ordered.len() > offset + limit;
        let sessions: Vec<Value> = ordered
            .into_iter()
            .skip(offset)
            .take(limit)
            .map(|s| {
                let turns = skim_turns(&s.turns);
                let listed = turns.len();
                let turns_json: Vec<Value> = turns
                    .iter()
                    .map(|t| {
                        json!({
                            "address": address::turn_link(&s.session_key, t.turn_index),
                            "turn_index": t.turn_index,
                            "started_at": t.started_at,
                            "related": t.related,
                            "tool_names": t.tool_names.iter().take(8).collect::<Vec<_>>(),
                            "labels": t.labels,
                            "previews": t.previews.iter().take(2).collect::<Vec<_>>(),
                        })
                    })
                    .collect();
                json!({
                    "address": address::session_link(&s.session_key),
                    "agent": shown_agent(s.agent, s.ran_by.as_deref()).0,
                    "ran_by": shown_agent(s.agent, s.ran_by.as_deref()).1,
                    "title": s.title,
                    "project": s.project,
                    "untrusted": s.untrusted,
                    // Placed in no repository: listed since it may have run here, or anywhere.
                    "unplaced": s.unplaced,
                    "started_at": s.started_at,
                    "updated_at": s.updated_at,
                    "turn_count": s.turn_count,
                    "related_turn_count": s.related_turn_count,
                    "weak": s.weak,
                    "why_related": s.why_related.iter().take(5).map(|w| json!({
                        "reason": w.reason,
                        "confidence": w.confidence,
                        "address": w.ordinal.map(|o| address::record_link(&s.session_key, o)),
                    })).collect::<Vec<_>>(),
                    "turns": turns_json,
                    "turns_not_listed": s.turns.len() - listed,
                })
            })
            .collect();
        let body = json!({
            "target_kind": view.target_kind.as_str(),
            "target_key": view.target_key,
            "agent": agent.map(Agent::as_str),
            "weak_sessions_hidden": view.coverage.weak_sessions_hidden,
            // Related sessions of other repositories with a target of that name.
            "other_repo_sessions_hidden": view.coverage.other_repo_sessions_hidden,
            "hint": skim_hint(
                &view,
                branch.as_deref(),
                offset == 0 && sessions.is_empty(),
                &self.session.cwd,
            ),
        });
        self.answer(&page, body, "sessions", sessions, more)
    }

    /// One session, turn or record.
    #[tool(
        description = "Read the archive in detail: a session's turns, one turn's records (prompts, replies, tool calls and their results), or the records an address cites in their turn, with those around them up to `limit` (each marked `cited` or not; a range longer than `limit` comes `limit` records at a time, `next_records` the address of the rest), by the addresses `skim`, `search` and Recall evidence give (`cairn://session/<key>`, `…?turn=N`, `…?record=N`). More with `cursor` (`next_cursor` of the answer). A long text keeps its first 1,400 and last 560 characters (a log's end, where failures are), saying how many were cut between; a tool call's `tool_input` is the JSON object it was called with, every key kept and each long string in it cut the same way (shorter when the input is very large), or a string when it was not JSON; secrets are redacted.",
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    fn show(&self, Parameters(a): Parameters<ShowArgs>) -> Res {
        let limit = page_size("show", a.limit, SHOW_LIMIT)?;
        let page = page("show", &a, a.cursor.as_deref())?;
        let offset = page.offset;
        let addr: Address = address::parse(&a.address).map_err(invalid)?;
        let turn = match short("turn", a.turn.as_deref())? {
            Some(t) => Some(t),
            None => addr.turn.clone(),
        };
        let cairn = &self.session.cairn;
        if let Some((from, to)) = addr.records {
            // A range longer than `limit` comes a page at a time: this answer the first `limit`
            // of it, `next_records` the address of the rest (where `cairn show` prints the
            // turn's part whole: an agent's answer is bounded).
            let page_to = to.min(from.saturating_add(limit as u32 - 1));
            // The core's window of the turn around the cited records, as `cairn show` gives
            // it for the same address.
            let view = cairn
                .show_records(&addr.session, from, page_to, limit as u32)
                .map_err(|e| self.fail(e))?;
            // What the link cites that this answer does not hold: past the page, or past the
            // turn's end (the next turn's first record on).
            let rest = (view.cited_records.last < to).then(|| (view.cited_records.last + 1, to));
            let key = view.turn.session_key.clone();
            let index = view.turn.turn_index;
            // A range the byte budget cut goes on from the cursor's record, to its end.
            let items: Vec<Value> = view
                .turn
                .records
                .iter()
                .skip(offset)
                .map(|r| {
                    let mut v = self.record(r);
                    if let Value::Object(m) = &mut v {
                        m.insert(
                            "address".into(),
                            Value::String(address::record_link(&key, r.ordinal)),
                        );
                        m.insert("cited".into(), Value::Bool(view.cites(r.ordinal)));
                    }
                    v
                })
                .collect();
            let body = json!({
                "session_address": address::session_link(&key),
                "turn_address": address::turn_link(&key, index),
                "turn_index": index,
                "total_records": view.turn.coverage.total_records,
                "cited_records": view.cited_records,
                "has_more_before": view.turn.coverage.has_more_before,
                "has_more_after": view.has_more_after,
                // Cited records past the turn's end: the next turn's address shows them.
                "cited_after_turn": view.cited_after_turn.map(|r| json!({
                    "first": r.first,
                    "last": to,
                    "turn_address": address::turn_link(&key, index + 1),
                })),
                "next_records": rest.map(|(first, last)| json!({
                    "first": first,
                    "last": last,
                    "address": format!("{}?record={first}-{last}", address::session_link(&key)),
                })),
            });
            return self.answer(&page, body, "records", items, false);
        }
        if let Some(turn) = turn {
            let view = cairn
                .show_turn(&addr.session, &turn, (offset + limit) as u32)
                .map_err(|e| self.fail(e))?;
            let key = view.session_key.clone();
            let keep = view.records.len().saturating_sub(offset);
            let more = view.coverage.has_more_before;
            let items: Vec<Value> = view
                .records
                .iter()
                .take(keep)
                .rev()
                .map(|r| {
                    let mut v = self.record(r);
                    if let Value::Object(m) = &mut v {
                        m.insert(
                            "address".into(),
                            Value::String(address::record_link(&key, r.ordinal)),
                        );
                    }
                    v
                })
                .collect();
            let body = json!({
                "session_address": address::session_link(&key),
                "turn_index": view.turn_index,
                "turn_key": view.turn_key,
                "total_records": view.coverage.total_records,
                "order": "newest first",
            });
            return self.answer(&page, body, "records", items, more);
        }
        let view = cairn
            .show_session(&addr.session, (offset + limit) as u32)
            .map_err(|e| self.fail(e))?;
        let key = view.session_key.clone();
        let keep = view.turns.len().saturating_sub(offset);
        let more = view.coverage.has_more_before;
        let items: Vec<Value> = view
            .turns
            .iter()
            .take(keep)
            .rev()
            .map(|t| {
                json!({
                    "address": address::turn_link(&key, t.turn_index),
                    "turn_index": t.turn_index,
                    "started_at": t.started_at,
                    "records": format!("{}-{}", t.first_ordinal, t.last_ordinal),
                    "user": t.user_preview,
                    "assistant": t.assistant_preview,
                    "tool_calls": t.tool_call_count,
                    "edits": t.edit_count,
                    "failures": t.failure_count,
                    "tool_names": t.tool_names.iter().take(8).collect::<Vec<_>>(),
                    "related_targets": t.related_targets,
                })
            })
            .collect();
        let (agent, ran_by) = shown_agent(view.agent, view.ran_by.as_deref());
        let body = json!({
            "session_address": address::session_link(&key),
            "agent": agent,
            "ran_by": ran_by,
            "title": view.title,
            "started_at": view.started_at,
            "total_turns": view.coverage.total_turns,
            "order": "newest first",
        });
        self.answer(&page, body, "turns", items, more)
    }

    /// A record as `show` sends it: its tool call's input as the JSON it holds, bounded field
    /// by field ([`bound::Outbound::tool_input`]), never its text cut in half. The answer passes
    /// it through [`bound::Outbound::value`] again, which leaves it as it is: its strings are
    /// within the cut and its keys hold no hidden character.
    fn record(&self, r: &cairn_core::archive::store::RecordView) -> Value {
        let mut v = serde_json::to_value(r).unwrap_or(Value::Null);
        if let (Value::Object(m), Some(input)) = (&mut v, r.tool_input.as_deref()) {
            m.insert("tool_input".into(), self.out().tool_input(input));
        }
        v
    }

    /// Search the archive.
    #[tool(
        description = "Search everything agents and people wrote and ran in past sessions: prompts, replies, tool calls and their output. Lexical (default) matches every word; hybrid adds meaning (needs embeddings built; turns captured since the last build are found by words only, counted in `vectors_pending`). Filter by agent, repo, branch and dates. A hit's snippet marks the words that matched **like this**; each hit has an address to `show`.",
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    fn search(&self, Parameters(a): Parameters<SearchArgs>) -> Res {
        let limit = page_size("search", a.limit, SEARCH_LIMIT)?;
        let page = page("search", &a, a.cursor.as_deref())?;
        let offset = page.offset;
        if a.query.trim().is_empty() {
            return Err(invalid("`query` is empty; give words to find"));
        }
        if a.query.len() > 1_000 {
            return Err(invalid("`query` is longer than 1000 bytes"));
        }
        let agent = agent(a.agent.as_deref())?;
        let answer = self
            .session
            .cairn
            .search_answer(&SearchQuery {
                text: a.query.clone(),
                agent,
                branch: short("branch", a.branch.as_deref())?,
                project: project("repo", a.repo.as_deref())?,
                since: short("since", a.since.as_deref())?,
                until: short("until", a.until.as_deref())?,
                limit: Some((offset + limit + 1) as u32),
                mode: a.mode.into(),
            })
            .map_err(|e| self.fail(e))?;
        let more = answer.hits.len() > offset + limit;
        let items: Vec<Value> = answer
            .hits
            .iter()
            .skip(offset)
            .take(limit)
            .map(|h| {
                json!({
                    "address": address::record_link(&h.session_key, h.ordinal),
                    "agent": h.agent.as_str(),
                    "title": h.title,
                    "project": h.project,
                    "branch": h.git_branch,
                    "timestamp": h.timestamp,
                    "kind": h.kind,
                    "role": h.role,
                    "tool_name": h.tool_name,
                    // The core's private-use match marks, as a model reads emphasis.
                    "snippet": h.snippet.replace(
                        [
                            cairn_core::views::search::MATCH_START,
                            cairn_core::views::search::MATCH_END,
                        ],
                        "**",
                    ),
                    "score": h.score,
                    // When the agent took the record back (a rewind), as `show` gives it: a
                    // hit there is no part of the conversation as it stands.
                    "retracted_at": h.retracted_at,
                })
            })
            .collect();
        let mut body = json!({
            "mode": answer.mode.as_str(),
            "vectors_pending": answer.vectors_pending,
        });
        if items.is_empty() && offset == 0 {
            let filtered = a.agent.is_some()
                || a.repo.is_some()
                || a.branch.is_some()
                || a.since.is_some()
                || a.until.is_some();
            body["hint"] = Value::String(format!(
                "Nothing in the archive matches{}. Try fewer or other words{}{}.",
                if matches!(a.mode, ModeArg::Lexical) {
                    " every word"
                } else {
                    ""
                },
                if filtered {
                    ", or drop a filter (agent, repo, branch, since, until)"
                } else {
                    ""
                },
                if matches!(a.mode, ModeArg::Lexical) {
                    ", or `mode: \"hybrid\"` to search by meaning too (needs embeddings)"
                } else {
                    ""
                }
            ));
        }
        self.answer(&page, body, "hits", items, more)
    }

    /// Why is this here.
    #[tool(
        description = "Why is this here: the past agent sessions and turns behind a commit, lines of a file (`path:40-52`, traced through git blame to the edit that wrote them) or a description, ranked, each with its evidence (a link's, wrote_line, wrote_lines, edited_path, ai_note: a Git AI authorship note on the commit names the session, search) and a confidence. Turn and session addresses open with `show`.",
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    fn why(&self, Parameters(a): Parameters<WhyArgs>) -> Res {
        let limit = page_size("why", a.limit, WHY_LIMIT)?;
        let target = a.target.trim();
        if target.is_empty() {
            return Err(invalid(
                "`target` is empty; give a commit, a path with lines, or a description",
            ));
        }
        if target.len() > 1_000 || address::unseen(target) {
            return Err(invalid(
                "`target` must be one line of at most 1000 bytes without control or invisible characters",
            ));
        }
        let answer = self
            .session
            .cairn
            .why(
                &self.session.cwd,
                &cairn_core::views::why::WhyQuery {
                    target: target.to_owned(),
                    limit: Some(limit as u32),
                    mode: a.mode.into(),
                },
            )
            .map_err(|e| self.fail_here(e))?;
        let items: Vec<Value> = answer
            .sessions
            .iter()
            .map(|s| {
                json!({
                    "address": address::session_link(&s.session_key),
                    "agent": s.agent.as_str(),
                    "title": s.title,
                    "project": s.project,
                    "started_at": s.started_at,
                    "confidence": s.confidence,
                    "evidence": s.evidence,
                    "turns": s.turns.iter().take(10).map(|t| json!({
                        "address": address::record_link(&s.session_key, t.ordinal),
                        "turn_index": t.turn_index,
                        "evidence": t.evidence,
                        "detail": t.detail,
                        "confidence": t.confidence,
                        "lines": t.lines,
                    })).collect::<Vec<_>>(),
                })
            })
            .collect();
        let mut body = json!({
            "kind": answer.kind,
            "query": answer.query,
            "path": answer.path,
            "lines": answer.lines,
            "commits": answer.commits,
            "uncommitted_lines": answer.uncommitted_lines,
            "vectors_pending": answer.vectors_pending,
        });
        if items.is_empty() {
            // A description is looked up among the sessions of the repository the server runs
            // in, and everywhere when it runs outside one (`Cairn::why`).
            let hint = match (
                answer.kind == cairn_core::views::why::WhyKind::Description,
                self.session.outbound.repo_root.is_some(),
            ) {
                (true, true) => {
                    "No session of this repository matches the description (a description is looked up among the sessions of the repository the server runs in). Try other words, or `search`, which looks in every repository."
                }
                (true, false) => {
                    "No session in the archive matches the description (the server runs outside a git repository, so every repository's sessions were looked in). Try other words, or `mode: \"hybrid\"` to match by meaning too (needs embeddings)."
                }
                (false, _) => {
                    "No agent session in the archive is known to be behind it (it may predate the archive, or a person wrote it). Try `search` with words from it, `skim` for the branch's sessions, or a description of the change as `target`."
                }
            };
            body["hint"] = Value::String(hint.to_owned());
        }
        // `why` takes no cursor, so offers none: what the byte budget left out of its ranked
        // sessions is counted in `lists_cut`.
        let of = items.len();
        let list = List {
            key: "sessions",
            items,
            whole: None,
        };
        self.answer_cleaned(self.out().value(body), list, Rest::Counted { of })
    }

    /// Ask Recall.
    #[tool(
        description = "Ask the project's Recall memory: facts, decisions, procedures and warnings distilled from past sessions, each with evidence addresses into the transcript. By default, the repository this server runs in as it stands on the branch checked out: entries scoped to that branch and every repository-wide one (what the session-start brief serves), not those learnt in another repository of the same folder name (`left_out` says how many), then the trusted global entries of every other project in the room left; `repo`, `branch` or `all_repos` ask elsewhere, each entry naming its `project` and `branch`. Only entries a person reviewed (trusted) unless `include_untrusted`. Each entry's `body` arrives whole: a page holds fewer entries rather than cut one (`next_cursor` for the rest); only a body longer than an answer keeps its head and tail, saying how many characters were cut. Check `stale` (cited files changed since) and `changed_since_cited` on evidence before relying on an entry, and rate what you used with `recall_feedback`.",
        annotations(
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = false,
            open_world_hint = false
        )
    )]
    fn recall_query(&self, Parameters(a): Parameters<RecallQueryArgs>) -> Res {
        let limit = page_size("recall_query", a.limit, RECALL_LIMIT)?;
        let page = page("recall_query", &a, a.cursor.as_deref())?;
        let offset = page.offset;
        if a.query.len() > 1_000 {
            return Err(invalid("`query` is longer than 1000 bytes"));
        }
        let filters = self.recall_filters(
            a.include_untrusted,
            a.entry_type,
            a.agent.as_deref(),
            offset + limit + 1,
        )?;
        let Some(reach) = self.reach(a.repo.as_deref(), a.branch.as_deref(), a.all_repos)? else {
            return nowhere("recall_query");
        };
        let req = QueryRequest {
            text: a.query.clone(),
            mode: a.mode.into(),
            filters,
            session_key: short("session", a.session.as_deref())?,
            ..Default::default()
        };
        let cairn = &self.session.cairn;
        let answer = self
            .session
            .try_writer(|w| cairn.agent_recall_applying(&req, &reach, Surface::Query, w))
            .map_err(|e| self.fail(e))?;
        let resp = &answer.response;
        let more = resp.results.len() > offset + limit;
        let items = resp
            .results
            .iter()
            .skip(offset)
            .take(limit)
            .map(|r| self.entry_json(r))
            .collect::<Result<Vec<_>, _>>()?;
        let mut body = json!({
            "query_id": resp.query_id,
            "scope": reach_json(&reach),
            "trusted_only": resp.trusted_only,
            "untrusted_matches": resp.untrusted_matches,
            "vectors_pending": resp.vectors_pending,
        });
        if let Some(line) = left_out(&reach, answer.left_out()) {
            body["left_out"] = Value::String(line);
        }
        if items.is_empty() && offset == 0 {
            body["hint"] = Value::String(recall_empty_hint(
                &reach,
                !a.query.trim().is_empty(),
                resp.trusted_only,
                resp.untrusted_matches,
                answer.left_out(),
            ));
        }
        // An entry's body arrives whole: the entry is what the agent asked for, and a page
        // holds fewer entries (`next_cursor` for the rest) rather than cut one.
        let list = List {
            key: "entries",
            items,
            whole: Some("body"),
        };
        let rest = Rest::Cursor { page: &page, more };
        self.answer_cleaned(self.out().value(body), list, rest)
    }

    /// A packed brief.
    #[tool(
        description = "A short brief of what Recall knows for the task at hand, packed to your token budget (`max_tokens`, default 600): the best trusted entries as text, headed by the project and branch they are about, with their ids and evidence addresses. By default the repository this server runs in, on the branch checked out (entries scoped to that branch and every repository-wide one; not those learnt in another repository of the same folder name, which `left_out` and the brief's last line count), then the trusted global entries of every other project, each saying where it was learnt; `repo` and `branch` ask for another, `all_repos` briefs from every project. Unreviewed entries only with `include_untrusted`, after the trusted ones under a line saying so. Use at the start of a task; `recall_query` for more.",
        annotations(
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = false,
            open_world_hint = false
        )
    )]
    fn recall_brief(&self, Parameters(a): Parameters<RecallBriefArgs>) -> Res {
        let tokens = match a.max_tokens {
            None => BRIEF_TOKENS.0,
            // The argument's deserializer refuses these already, with the same words.
            Some(n) if !(50..=BRIEF_TOKENS.1).contains(&n) => {
                return Err(invalid(format!(
                    "`max_tokens` {n} is out of range: expected {}; use `recall_query` with a cursor for more",
                    whole::expected("max_tokens", 50, BRIEF_TOKENS.1)
                )));
            }
            Some(n) => n,
        };
        if a.query.len() > 1_000 {
            return Err(invalid("`query` is longer than 1000 bytes"));
        }
        let filters = self.recall_filters(
            a.include_untrusted,
            None,
            a.agent.as_deref(),
            RECALL_LIMIT.1 as usize,
        )?;
        let Some(reach) = self.reach(a.repo.as_deref(), a.branch.as_deref(), a.all_repos)? else {
            return nowhere("recall_brief");
        };
        let req = QueryRequest {
            text: a.query.clone(),
            mode: a.mode.into(),
            filters,
            context: true,
            // Bytes stay under the answer budget whatever the token budget.
            max_bytes: Some(bound::PACK_BYTES as u32),
            max_tokens: Some(tokens),
            session_key: short("session", a.session.as_deref())?,
        };
        let cairn = &self.session.cairn;
        let answer = self
            .session
            .try_writer(|w| cairn.agent_recall_applying(&req, &reach, Surface::Brief, w))
            .map_err(|e| self.fail(e))?;
        let resp = &answer.response;
        let (text, packed_ids, omitted) = match &resp.context {
            Some(p) => (p.text.clone(), p.entry_ids.clone(), p.omitted_ids.len()),
            None => (String::new(), Vec::new(), 0),
        };
        let entries = resp
            .results
            .iter()
            .filter(|r| packed_ids.contains(&r.entry.id))
            .map(|r| {
                let full = self.entry_json(r)?;
                Ok(json!({
                    "id": full["id"],
                    "trusted": full["trusted"],
                    "stale": full["stale"],
                    "evidence": full["evidence"],
                }))
            })
            .collect::<Result<Vec<_>, ErrorData>>()?;
        let mut body = json!({
            "query_id": resp.query_id,
            "scope": reach_json(&reach),
            "omitted": omitted,
            "trusted_only": resp.trusted_only,
            "untrusted_matches": resp.untrusted_matches,
        });
        if let Some(line) = left_out(&reach, answer.left_out()) {
            body["left_out"] = Value::String(line);
        }
        // Entries matched but none fit: say so, or an empty brief reads as "nothing known".
        if packed_ids.is_empty() && omitted > 0 {
            body["hint"] = Value::String(format!(
                "{omitted} matching {} did not fit in {tokens} tokens; ask again with a larger `max_tokens` (the default is {}), or use `recall_query`",
                if omitted == 1 { "entry" } else { "entries" },
                BRIEF_TOKENS.0
            ));
        } else if packed_ids.is_empty() {
            body["hint"] = Value::String(recall_empty_hint(
                &reach,
                !a.query.trim().is_empty(),
                resp.trusted_only,
                resp.untrusted_matches,
                answer.left_out(),
            ));
        }
        // The brief leaves whole, cleaned and redacted: it is packed to the agent's own
        // budget already, where the rule's cut of a long string would take its middle
        // entries. Its size in tokens is of the text sent.
        let mut body = self.out().value(body);
        let text = self.out().packed(&text);
        body["estimated_tokens"] = json!(text.len().div_ceil(recall::brief::BYTES_PER_TOKEN));
        body["text"] = Value::String(text);
        // The brief takes no cursor: what it packed is all it gives (`omitted` and its last
        // line count the rest, which `recall_query` pages through), so no answer offers one.
        let of = entries.len();
        let list = List {
            key: "entries",
            items: entries,
            whole: None,
        };
        self.answer_cleaned(body, list, Rest::Counted { of })
    }

    /// Propose an entry.
    #[tool(
        description = "Propose a Recall entry you learned in this session (a fact, decision, procedure, debugging method, warning, preference or open question), citing the records that support it. It lands unreviewed in the person's inbox and is never served as trusted until they accept it. The same proposal twice is one entry; a session may propose at most 20.",
        annotations(
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    fn recall_propose(
        &self,
        Parameters(a): Parameters<RecallProposeArgs>,
        peer: Peer<RoleServer>,
    ) -> Res {
        let mut evidence = Vec::with_capacity(a.evidence.len());
        if a.evidence.len() > cairn_core::recall::agents::MAX_EVIDENCE {
            return Err(invalid(format!(
                "`evidence` has {} addresses; at most {} are accepted",
                a.evidence.len(),
                cairn_core::recall::agents::MAX_EVIDENCE
            )));
        }
        for text in &a.evidence {
            let addr = address::parse(text).map_err(invalid)?;
            let Some((from, to)) = addr.records else {
                return Err(invalid(format!(
                    "evidence {:?} names no record; cite `cairn://session/<key>?record=N` (or `record=N-M`)",
                    cairn_core::text::one_line(text, 80)
                )));
            };
            evidence.push(EvidenceRef {
                session: addr.session,
                from,
                to,
            });
        }
        let who = self.speaker(
            &peer,
            short("agent", a.agent.as_deref())?,
            short("session", a.session.as_deref())?,
            short("turn", a.turn.as_deref())?,
        );
        let proposal = Proposal {
            entry_type: a.entry_type.into(),
            scope: a.scope.map(Into::into),
            title: a.title,
            body: a.body,
            trigger: a.trigger.unwrap_or_default(),
            evidence,
        };
        {
            let mut counts = self.session.counts();
            if counts.proposals >= MAX_PROPOSALS {
                return Err(ErrorData::invalid_request(
                    format!(
                        "this session already proposed {MAX_PROPOSALS} entries, the most one session may; ask the person to review the inbox"
                    ),
                    None,
                ));
            }
            // Taken before the write, so proposals sent at once cannot pass the cap together;
            // given back when the proposal is refused or was one already made.
            counts.proposals += 1;
        }
        let give_back = || {
            let mut counts = self.session.counts();
            counts.proposals = counts.proposals.saturating_sub(1);
        };
        let cairn = &self.session.cairn;
        let out = self
            .session
            .with_writer(|w| cairn.agent_propose(w, &proposal, &who))
            .map_err(|e| {
                give_back();
                self.fail(e)
            })?;
        if out.duplicate {
            give_back();
        }
        self.single(json!({
            "entry_id": out.entry_id,
            "duplicate": out.duplicate,
            "review_state": out.review_state.as_str(),
            "trusted": out.trusted,
            "note": if out.trusted {
                "A person already accepted this entry: it is served as trusted."
            } else {
                "Proposed for review: a person accepts or rejects it in Cairn's Recall inbox."
            },
        }))
    }

    /// Rate an entry.
    #[tool(
        description = "Tell Recall whether an entry you used was helpful or wrong (with a note saying why). It goes to the measurement ledger the person reviews; it does not change the entry.",
        annotations(
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    fn recall_feedback(
        &self,
        Parameters(a): Parameters<RecallFeedbackArgs>,
        peer: Peer<RoleServer>,
    ) -> Res {
        let entry_id =
            short("entry_id", Some(&a.entry_id))?.ok_or_else(|| invalid("`entry_id` is empty"))?;
        let query_id = short("query_id", a.query_id.as_deref())?;
        self.served(&entry_id)?;
        let who = self.speaker(&peer, None, short("session", a.session.as_deref())?, None);
        {
            let mut counts = self.session.counts();
            if counts.feedback >= MAX_FEEDBACK {
                return Err(ErrorData::invalid_request(
                    format!(
                        "this session already gave feedback {MAX_FEEDBACK} times, the most one session may"
                    ),
                    None,
                ));
            }
            // Taken before the write, so calls at once cannot pass the cap together; given back
            // below when the feedback is refused.
            counts.feedback += 1;
        }
        let verdict = match a.verdict {
            VerdictArg::Helpful => Verdict::Helpful,
            VerdictArg::Wrong => Verdict::Wrong,
        };
        let cairn = &self.session.cairn;
        let (helpful, wrong) = self
            .session
            .with_writer(|w| {
                cairn.agent_feedback(
                    w,
                    &entry_id,
                    verdict,
                    a.note.as_deref().unwrap_or(""),
                    query_id.as_deref(),
                    &who,
                )
            })
            .map_err(|e| {
                let mut counts = self.session.counts();
                counts.feedback = counts.feedback.saturating_sub(1);
                self.fail(e)
            })?;
        self.single(json!({
            "entry_id": entry_id,
            "recorded": verdict.as_str(),
            "helpful": helpful,
            "wrong": wrong,
        }))
    }
}

/// The methods this server answers (a client's notifications aside).
const ANSWERED: [&str; 7] = [
    "initialize",
    "ping",
    "tools/list",
    "tools/call",
    "resources/list",
    "resources/templates/list",
    "prompts/list",
];

impl Server {
    /// [`Self::fail`] of an error about the folder this server was started in (no repository
    /// there), naming that folder where the outbound rule hides every folder outside the
    /// repository: the agent's client started the server there, so it is no secret from the
    /// agent, and which folder it is is what the person checks (an MCP config that starts the
    /// server outside the project). Named as the data dir is, whole and through the outbound
    /// redactor ([`bound::Outbound::naming_dir`]); an error that names the data dir is
    /// [`Self::fail`]'s.
    fn fail_here(&self, e: cairn_core::Error) -> ErrorData {
        let here = std::path::absolute(&self.session.cwd)
            .unwrap_or_else(|_| self.session.cwd.clone())
            .display()
            .to_string();
        let text = match e.hint() {
            Some(hint) => format!("{e}; {hint}"),
            None => e.to_string(),
        };
        let names_here = text.contains(&here) && !text.contains(&self.data_dir());
        let mut err = self.fail(e);
        if names_here {
            err.message = self.out().naming_dir(&for_agents(&text), &here).into();
        }
        err
    }

    /// The tools' names, as `tools/list` gives them.
    fn tool_names(&self) -> String {
        let mut names: Vec<String> = self
            .tool_router
            .list_all()
            .into_iter()
            .map(|t| format!("`{}`", t.name))
            .collect();
        names.sort();
        names.join(", ")
    }

    /// A `tools/call` of a tool this server does not have: which tools it has.
    fn no_tool(&self, name: &str) -> ErrorData {
        ErrorData::invalid_params(
            self.out().text(&format!(
                "tool {:?} not found; the tools are {}",
                cairn_core::text::one_line(name, 60),
                self.tool_names()
            )),
            None,
        )
    }

    /// A request for a resource or a prompt, which this server has none of: -32601, as rmcp
    /// answers a method of a capability not advertised, but saying what the server offers.
    fn tools_only(&self, method: &str) -> ErrorData {
        ErrorData::new(
            rmcp::model::ErrorCode::METHOD_NOT_FOUND,
            format!(
                "Method not found: `{method}`; this server offers no resources or prompts, only tools: {}",
                self.tool_names()
            ),
            None,
        )
    }

    /// A `tools/call` whose params rmcp could not read: what the spec's shape is, and which
    /// part of `params` is not it.
    fn unreadable_call(&self, params: Option<&Value>) -> ErrorData {
        const SHAPE: &str = r#"{"name": "search", "arguments": {"query": "login"}}"#;
        let kind = |v: &Value| match v {
            Value::Null => "null",
            Value::Bool(_) => "a boolean",
            Value::Number(_) => "a number",
            Value::String(_) => "a string",
            Value::Array(_) => "an array",
            Value::Object(_) => "an object",
        };
        let msg = match params {
            Some(Value::Object(map)) => match (map.get("name"), map.get("arguments")) {
                (Some(Value::String(_)), Some(a)) if !a.is_object() && !a.is_null() => format!(
                    "`arguments` of `tools/call` must be an object of the tool's arguments by name (as in {SHAPE}), not {}",
                    kind(a)
                ),
                (Some(Value::String(_)), _) => {
                    format!("the params of `tools/call` do not read as the MCP spec's ({SHAPE})")
                }
                (name, _) => format!(
                    "`name` of `tools/call` must be a tool's name (as in {SHAPE}), not {}; the tools are {}",
                    name.map_or("missing", kind),
                    self.tool_names()
                ),
            },
            p => format!(
                "`tools/call` takes its params as an object (as in {SHAPE}), not {}",
                p.map_or("none", kind)
            ),
        };
        ErrorData::invalid_params(msg, None)
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for Server {
    async fn call_tool(
        &self,
        request: rmcp::model::CallToolRequestParams,
        context: rmcp::service::RequestContext<RoleServer>,
    ) -> Result<rmcp::model::CallToolResponse, ErrorData> {
        let known = self.tool_router.has_route(&request.name);
        if !known {
            return Err(self.no_tool(&request.name));
        }
        if self.session.no_archive {
            return Ok(CallToolResult::error(vec![ContentBlock::text(self.no_archive())]).into());
        }
        if let Some(e) = &self.session.unopened {
            return Ok(CallToolResult::error(vec![ContentBlock::text(self.unopened(e))]).into());
        }
        let call = rmcp::handler::server::tool::ToolCallContext::new(self, request, context);
        settle(self.tool_router.call(call).await, known)
    }

    async fn on_custom_request(
        &self,
        request: rmcp::model::CustomRequest,
        _context: rmcp::service::RequestContext<RoleServer>,
    ) -> Result<rmcp::model::CustomResult, ErrorData> {
        // rmcp hands a method it has on here when it cannot read its params as the spec's.
        if request.method == "tools/call" {
            return Err(self.unreadable_call(request.params.as_ref()));
        }
        if ANSWERED.contains(&request.method.as_str()) {
            return Err(ErrorData::invalid_params(
                format!(
                    "the params of `{}` are not the MCP spec's (an object of its fields)",
                    request.method
                ),
                None,
            ));
        }
        Err(ErrorData::new(
            rmcp::model::ErrorCode::METHOD_NOT_FOUND,
            self.out().text(&format!(
                "Method not found: this server has no method `{}`; it answers `initialize`, `ping`, `tools/list` and `tools/call`, and lists its resources and prompts: none",
                cairn_core::text::one_line(&request.method, 80)
            )),
            None,
        ))
    }

    // The server advertises tools only (`get_info`), and the spec asks a client to use only
    // what was advertised; but clients (Claude Desktop, Cursor) list resources and prompts on
    // connect whatever the capabilities say, and log rmcp's bare -32601 as a fault. Listing
    // nothing is the true answer, the one a client that keeps to the capabilities assumes
    // (the official TypeScript client returns these empty lists without asking); the
    // capabilities stay true, so no client is invited to look for more.
    async fn list_resources(
        &self,
        _request: Option<rmcp::model::PaginatedRequestParams>,
        _context: rmcp::service::RequestContext<RoleServer>,
    ) -> Result<rmcp::model::ListResourcesResult, ErrorData> {
        Ok(rmcp::model::ListResourcesResult::default())
    }

    async fn list_resource_templates(
        &self,
        _request: Option<rmcp::model::PaginatedRequestParams>,
        _context: rmcp::service::RequestContext<RoleServer>,
    ) -> Result<rmcp::model::ListResourceTemplatesResult, ErrorData> {
        Ok(rmcp::model::ListResourceTemplatesResult::default())
    }

    async fn list_prompts(
        &self,
        _request: Option<rmcp::model::PaginatedRequestParams>,
        _context: rmcp::service::RequestContext<RoleServer>,
    ) -> Result<rmcp::model::ListPromptsResult, ErrorData> {
        Ok(rmcp::model::ListPromptsResult::default())
    }

    // One resource or prompt by name: none exists, and the method is of a capability the
    // server does not advertise: -32601, saying what it offers instead.
    async fn read_resource(
        &self,
        _request: rmcp::model::ReadResourceRequestParams,
        _context: rmcp::service::RequestContext<RoleServer>,
    ) -> Result<rmcp::model::ReadResourceResponse, ErrorData> {
        Err(self.tools_only("resources/read"))
    }

    async fn get_prompt(
        &self,
        _request: rmcp::model::GetPromptRequestParams,
        _context: rmcp::service::RequestContext<RoleServer>,
    ) -> Result<rmcp::model::GetPromptResponse, ErrorData> {
        Err(self.tools_only("prompts/get"))
    }

    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("cairn", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "Cairn remembers what coding agents did in this project. Catch up on the branch with `skim`, read detail with `show`, find things with `search`, and ask the project's reviewed memory with `recall_brief` / `recall_query`. Propose what you learned with `recall_propose` (a person reviews it) and rate entries you used with `recall_feedback`. Answers stay under 48 KB: a long list is cut, `next_cursor` pages on, and `lists_cut` names each shorter list inside (its JSON pointer: how many items it left out); `show` a narrower address for the rest.",
            )
    }
}

#[cfg(test)]
mod tests;

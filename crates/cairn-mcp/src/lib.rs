//! `cairn mcp`: Cairn's archive and Recall as Model Context Protocol tools, served over stdio
//! to one agent session (the official Rust SDK, `rmcp`).
//!
//! The server only translates: arguments (checked here: types by their JSON schemas, sizes and
//! addresses by hand) become calls on the [`Cairn`] facade, and answers leave through
//! [`bound`] — every string cleaned and redacted, every list cut to a byte budget with a cursor
//! for more. Reads use a connection that refuses writes ([`Cairn::open_for_agents`]); a
//! proposal, feedback and the ledger of the agent's Recall queries go through one writer,
//! opened on first use. A rebuild of the archive by another process (`cairn reindex
//! --from-copies`) needs no restart: reads open the new database at the next call
//! (`Cairn`'s shared connection does), and the writer is opened again there.

#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used))]

pub mod address;
pub mod bound;
pub mod frame;
mod tools;
mod whole;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use cairn_core::{AgentWriter, Cairn};
use rmcp::ServiceExt;

pub use tools::{MAX_FEEDBACK, MAX_PROPOSALS, Server};

/// The server's state for one agent session.
pub struct Session {
    pub cairn: Cairn,
    /// The directory the agent started the server in (the default `skim` target's repository).
    pub cwd: PathBuf,
    pub outbound: bound::Outbound,
    /// This server session's id (recorded with proposals and feedback).
    pub id: String,
    /// The data dir held no archive when the server started: every tool says so instead of
    /// answering from an empty one.
    pub no_archive: bool,
    /// Why the archive there could not be opened (damaged, unreadable): every tool says so.
    pub unopened: Option<cairn_core::Error>,
    /// The repository the server runs in and the branch checked out there, as the
    /// session-start brief reads them: what Recall answers for by default.
    pub place: Option<cairn_core::recall::memory::Place>,
    writer: Mutex<Option<AgentWriter>>,
    counts: Mutex<Counts>,
}

#[derive(Default)]
struct Counts {
    proposals: u32,
    feedback: u32,
}

impl Session {
    pub fn new(cairn: Cairn, cwd: &Path) -> Session {
        let repo = cairn_core::git::repo::Repo::discover(cwd).ok();
        let repo_root = repo.as_ref().map(|r| r.root.to_string_lossy().into_owned());
        let worktrees = repo
            .as_ref()
            .map(|r| {
                r.worktree_roots()
                    .into_iter()
                    .map(|p| p.to_string_lossy().into_owned())
                    .filter(|p| Some(p) != repo_root.as_ref())
                    .collect()
            })
            .unwrap_or_default();
        Session {
            no_archive: cairn.holds_no_archive(),
            unopened: None,
            place: cairn_core::recall::memory::place(cwd),
            cairn,
            cwd: cwd.to_owned(),
            outbound: bound::Outbound {
                repo_root,
                worktrees,
                home: dirs_home(),
            },
            id: uuid::Uuid::new_v4().to_string(),
            writer: Mutex::new(None),
            counts: Mutex::new(Counts::default()),
        }
    }

    /// What this session has proposed and said so far (a poisoned lock still counts).
    fn counts(&self) -> std::sync::MutexGuard<'_, Counts> {
        self.counts
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Run `f` with the writer, opening it on first use.
    fn with_writer<T>(
        &self,
        f: impl FnOnce(&mut AgentWriter) -> cairn_core::Result<T>,
    ) -> cairn_core::Result<T> {
        let mut slot = self
            .writer
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if !slot.as_ref().is_some_and(AgentWriter::is_current) {
            *slot = Some(self.cairn.agent_writer()?);
        }
        match slot.as_mut() {
            Some(w) => f(w),
            None => Err(cairn_core::Error::Invalid("no writer".into())),
        }
    }

    /// The writer when one can be had (queries are recorded only then).
    fn try_writer<T>(&self, f: impl FnOnce(Option<&mut AgentWriter>) -> T) -> T {
        let mut slot = self
            .writer
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if !slot.as_ref().is_some_and(AgentWriter::is_current) && !self.cairn.is_read_only() {
            *slot = self.cairn.agent_writer().ok();
        }
        f(slot.as_mut())
    }
}

fn dirs_home() -> Option<String> {
    std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(|h| h.to_string_lossy().into_owned())
}

/// Serve one agent session on stdin/stdout until the client closes it. An archive that cannot
/// be opened is served too: every tool answers what is wrong ([`Session::unopened`]).
pub fn serve_stdio(data_dir: &Path, cwd: &Path) -> anyhow::Result<()> {
    let (cairn, unopened) = Cairn::open_for_agents_despite(data_dir)
        .map_err(|e| anyhow::anyhow!("cannot open the archive in {}: {e}", data_dir.display()))?;
    let mut session = Session::new(cairn, cwd);
    session.unopened = unopened;
    let session = Arc::new(session);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    runtime.block_on(async move {
        let clean = {
            let session = session.clone();
            move |text: &str| session.outbound.text(text)
        };
        let transport = frame::Framed::new(tokio::io::stdin(), tokio::io::stdout(), clean);
        let service = match Server::new(session).serve(transport).await {
            Ok(service) => service,
            // A client that left before the handshake ended nothing of ours.
            Err(rmcp::service::ServerInitializeError::ConnectionClosed(_)) => return Ok(()),
            Err(e) => return Err(anyhow::anyhow!("MCP handshake failed: {e}")),
        };
        service
            .waiting()
            .await
            .map_err(|e| anyhow::anyhow!("MCP session ended with an error: {e}"))?;
        Ok(())
    })
}

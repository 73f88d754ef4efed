//! The facade's part for agents that call Cairn themselves (`cairn mcp`): an archive opened
//! for reading only, and one writer for the few things an agent may write (a proposal, its
//! feedback, the ledger of its queries).

use std::path::PathBuf;

use crate::archive::store::Store;
use crate::recall::agents::{self, AgentUsage, Proposal, Proposed, Speaker, Verdict};
use crate::recall::evidence::{self, EvidenceState};
use crate::store::db_err;
use crate::{Cairn, Error, Result, recall};

/// The connection an agent session writes through (a proposal, feedback, its queries in the
/// ledger), separate from the read connection, which refuses writes.
pub struct AgentWriter {
    store: Store,
}

impl AgentWriter {
    /// False once a rebuild in another process has swapped a new database in since this writer
    /// opened: its commits are refused from then on; open another ([`Cairn::agent_writer`]).
    pub fn is_current(&self) -> bool {
        !self.store.moved()
    }
}

impl Cairn {
    /// Open the archive for an agent session: migrated like any open, then the shared
    /// connection refuses every write (`PRAGMA query_only`), so nothing a read tool does can
    /// change the archive. Writes go through [`Cairn::agent_writer`].
    ///
    /// A data dir that holds no archive (a first `cairn sync` not run yet, a mistyped
    /// `--data-dir` in an agent's MCP config) is not made into one: it reads as an empty archive
    /// kept in memory ([`Cairn::holds_no_archive`] says so, for the server to tell the agent).
    pub fn open_for_agents(data_dir: impl Into<PathBuf>) -> Result<Cairn> {
        let data_dir = data_dir.into();
        if !super::open::holds_archive(&data_dir) {
            return match Cairn::open_to_check(data_dir)? {
                (_, Some(config_error), _) => Err(config_error),
                (cairn, None, _) => Ok(cairn),
            };
        }
        let cairn = Cairn::open(data_dir)?;
        {
            let store = cairn.store();
            store
                .conn()
                .execute_batch("PRAGMA query_only = ON;")
                .map_err(|e| store.err(e))?;
        }
        Ok(cairn)
    }

    /// The writer of an agent session; an error when the archive cannot be written (read-only
    /// data dir, no room), which says what to do.
    pub fn agent_writer(&self) -> Result<AgentWriter> {
        self.writable()?;
        if self.is_read_only() {
            return Err(Error::Invalid(format!(
                "the archive in {} is read-only here; an agent can read it but not propose or rate entries",
                self.data_dir().display()
            )));
        }
        Ok(AgentWriter {
            store: self.writer()?,
        })
    }

    /// How long an agent's Recall answer waits to be written in the ledger.
    const LEDGER_WAIT: std::time::Duration = std::time::Duration::from_millis(250);

    /// A Recall query or brief asked by an agent: answered from the read connection, recorded
    /// in the ledger (marked `via = 'mcp'`) through `writer` when there is one.
    pub fn agent_recall_query(
        &self,
        req: &recall::QueryRequest,
        surface: recall::model::Surface,
        writer: Option<&mut AgentWriter>,
    ) -> Result<recall::QueryResponse> {
        let mut resp = {
            let store = self.store();
            self.recall_answer(&store, req)?
        };
        if let Some(w) = writer {
            Self::record_agent_query(w, req, &mut resp, surface);
        }
        Ok(resp)
    }

    /// Put what an agent was answered (`resp`, to `req`) in the ledger of Recall queries, and
    /// its line's id in the answer. The answer does not wait on the ledger: while a sync holds
    /// the write lock the line is skipped (no `query_id`), not queued for up to the writers' 30 s.
    pub(crate) fn record_agent_query(
        writer: &mut AgentWriter,
        req: &recall::QueryRequest,
        resp: &mut recall::QueryResponse,
        surface: recall::model::Surface,
    ) {
        let recorded = writer.store.waiting_at_most(Self::LEDGER_WAIT, |conn| {
            recall::ledger::record_response(conn, req, resp, surface, "mcp", &crate::clock::now())
        });
        match recorded {
            Ok(id) => resp.query_id = Some(id),
            Err(e) => tracing::warn!("recall ledger: {e}"),
        }
    }

    /// An entry an agent proposes: unreviewed, with its provenance; the same proposal twice
    /// is one entry. Nothing is written when the evidence does not bind.
    pub fn agent_propose(
        &self,
        writer: &mut AgentWriter,
        proposal: &Proposal,
        who: &Speaker,
    ) -> Result<Proposed> {
        let path = writer.store.path().to_owned();
        let tx = writer
            .store
            .conn_mut()
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(|e| db_err(&path, e))?;
        let out = agents::propose(&tx, proposal, who, &crate::clock::now())?;
        tx.commit().map_err(|e| db_err(&path, e))?;
        if !out.duplicate {
            self.refresh_on_write(&mut writer.store, &[&out.entry_id]);
        }
        Ok(out)
    }

    /// An agent's verdict on an entry it used; returns the entry's (helpful, wrong) so far.
    pub fn agent_feedback(
        &self,
        writer: &mut AgentWriter,
        entry_id: &str,
        verdict: Verdict,
        note: &str,
        query_id: Option<&str>,
        who: &Speaker,
    ) -> Result<(u32, u32)> {
        agents::feedback(
            writer.store.conn(),
            entry_id,
            verdict,
            note,
            query_id,
            who,
            &crate::clock::now(),
        )
    }

    /// Each cited range of an entry as its transcript stands now (changed since cited?).
    pub fn recall_evidence_state(&self, entry_id: &str) -> Result<Vec<EvidenceState>> {
        let store = self.store();
        evidence::check_entry(store.conn(), entry_id)
    }

    /// The entries agents used or rated, most recently first (the ledger's agent view).
    pub fn recall_agent_usage(&self, limit: u32) -> Result<Vec<AgentUsage>> {
        let store = self.store();
        agents::usage(store.conn(), limit)
    }
}

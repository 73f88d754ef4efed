//! The session list (`cairn sessions`, the desktop's session list): the archive's
//! (`archive::store` reads it).

use rusqlite::Connection;

use crate::archive::store as archive;
pub(crate) use crate::archive::store::count;
pub use crate::archive::store::{AgentCount, SessionQuery, SessionSummary};

/// Top-level sessions with at least one record, newest first. Sub-agent and compaction
/// sessions are counted on their parent instead of listed.
pub fn list(conn: &Connection, q: &SessionQuery) -> rusqlite::Result<Vec<SessionSummary>> {
    archive::list_sessions(conn, q)
}

/// The agents with sessions in the archive, most first: what an agent filter offers.
pub fn agents(conn: &Connection) -> rusqlite::Result<Vec<AgentCount>> {
    archive::agent_counts(conn)
}

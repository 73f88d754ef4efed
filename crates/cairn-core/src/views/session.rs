//! One session in detail: metadata, token usage, what its records are, its sub-agents and the
//! warnings met while reading it. All of it is the archive's (`archive::store` reads it).

use rusqlite::Connection;

use crate::archive::store as archive;
pub use crate::archive::store::{SessionDetail, SubagentSummary};

/// Find a session by `session_key` or by the agent's own session id (newest match wins).
pub fn resolve(conn: &Connection, key_or_id: &str) -> rusqlite::Result<Option<i64>> {
    archive::resolve_session(conn, key_or_id)
}

pub fn detail(conn: &Connection, id: i64) -> rusqlite::Result<SessionDetail> {
    archive::session_detail(conn, id)
}

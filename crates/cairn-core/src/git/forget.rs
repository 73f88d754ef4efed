//! Forgetting, git's part: the links of forgotten sessions to branches, reviews and commits,
//! the paths they edited, their association state and a person's corrections of their links.

use rusqlite::Connection;

const TABLES: [&str; 4] = [
    "links",
    "link_corrections",
    "session_edits",
    "association_state",
];

/// How many links `sessions` have.
pub fn links_of(conn: &Connection, sessions: &[i64]) -> rusqlite::Result<u64> {
    let mut stmt = conn.prepare_cached("SELECT COUNT(*) FROM links WHERE session_id = ?1")?;
    let mut n = 0u64;
    for &id in sessions {
        n += stmt.query_row([id], |r| r.get::<_, i64>(0))?.max(0) as u64;
    }
    Ok(n)
}

/// Remove git's rows of `sessions` (in the caller's transaction). Returns the links removed.
pub fn delete(conn: &Connection, sessions: &[i64]) -> rusqlite::Result<u64> {
    let mut links = 0u64;
    for &id in sessions {
        for table in TABLES {
            let n = conn.execute(&format!("DELETE FROM {table} WHERE session_id = ?1"), [id])?;
            if table == "links" {
                links += n as u64;
            }
        }
    }
    Ok(links)
}

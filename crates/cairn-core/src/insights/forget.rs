//! Forgetting, the insights room's part: a report that read a forgotten session may quote it,
//! so it goes with the session.

use rusqlite::Connection;

/// The reports (`id`, `title`) that read any of the sessions with `keys`.
pub fn reports_of(conn: &Connection, keys: &[String]) -> rusqlite::Result<Vec<(i64, String)>> {
    let mut stmt = conn.prepare_cached(
        "SELECT i.id, i.title FROM insights i JOIN insight_sessions s ON s.insight_id = i.id
         WHERE s.session_key = ?1",
    )?;
    let mut out: Vec<(i64, String)> = Vec::new();
    for key in keys {
        for row in stmt.query_map([key], |r| Ok((r.get(0)?, r.get(1)?)))? {
            let row = row?;
            if !out.iter().any(|(id, _)| *id == row.0) {
                out.push(row);
            }
        }
    }
    out.sort();
    Ok(out)
}

/// Remove the reports `ids` (in the caller's transaction).
pub fn delete(conn: &Connection, ids: &[i64]) -> rusqlite::Result<u64> {
    let mut n = 0u64;
    for &id in ids {
        conn.execute("DELETE FROM insight_sessions WHERE insight_id = ?1", [id])?;
        n += conn.execute("DELETE FROM insights WHERE id = ?1", [id])? as u64;
    }
    Ok(n)
}

//! Forgetting, the semantic room's part: the vectors of forgotten turns.

use rusqlite::Connection;

/// How many of `turns` have a vector.
pub fn vectors_of(conn: &Connection, turns: &[i64]) -> rusqlite::Result<u64> {
    let mut stmt = conn.prepare_cached("SELECT COUNT(*) FROM turn_vectors WHERE turn_id = ?1")?;
    let mut n = 0u64;
    for &id in turns {
        n += stmt.query_row([id], |r| r.get::<_, i64>(0))?.max(0) as u64;
    }
    Ok(n)
}

/// Remove the vectors of `turns` (in the caller's transaction). Returns how many went.
pub fn delete(conn: &Connection, turns: &[i64]) -> rusqlite::Result<u64> {
    let mut stmt = conn.prepare_cached("DELETE FROM turn_vectors WHERE turn_id = ?1")?;
    let mut n = 0u64;
    for &id in turns {
        n += stmt.execute([id])? as u64;
    }
    Ok(n)
}

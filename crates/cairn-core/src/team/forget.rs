//! Forgetting, the team archive's part: what a forget tells of the sessions a `cairn team push`
//! sent. It deletes nothing here: the next push withdraws from the team archive every session it
//! sent that this archive no longer has, and forgets its own mark of it then.

use rusqlite::Connection;

/// How many of the sessions keyed `keys` a team push sent (to any team archive).
pub fn pushed_among(conn: &Connection, keys: &[String]) -> rusqlite::Result<u64> {
    let mut stmt = conn.prepare_cached(
        "SELECT EXISTS (SELECT 1 FROM team_pushed_sessions WHERE session_key = ?1)",
    )?;
    let mut n = 0;
    for key in keys {
        n += u64::from(stmt.query_row([key], |r| r.get::<_, bool>(0))?);
    }
    Ok(n)
}

//! The lines of transcripts the parsers skipped or read in part (the `warnings` table, a
//! session's parse warnings), counted and named for doctor.

use rusqlite::Connection;

/// The files whose lines a sync could not read in full, newest first.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UnreadLines {
    /// Parse warnings in all.
    pub warnings: u64,
    /// Sessions holding one.
    pub sessions: u64,
    /// Each file's path (as the archive keeps it), its warning count, the first of its
    /// messages with its line, and the session that names it (what `cairn show` takes), for the
    /// first `named` files asked for; `files` counts them all.
    pub named: Vec<(String, u64, String, String)>,
    pub files: u64,
}

/// What the archive on `conn` keeps of the lines its syncs could not read, the `named` files
/// most recently warned about named.
pub fn unread_lines(conn: &Connection, named: usize) -> rusqlite::Result<UnreadLines> {
    let (warnings, sessions, files): (i64, i64, i64) = conn.query_row(
        "SELECT COUNT(*), COUNT(DISTINCT session_id), COUNT(DISTINCT path)
         FROM warnings WHERE session_id IS NOT NULL",
        [],
        |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
    )?;
    let mut listed = Vec::new();
    if warnings > 0 {
        let mut stmt = conn.prepare(
            "SELECT w.path, COUNT(*), MIN(w.session_id),
                    (SELECT COALESCE('line ' || x.line || ': ', '') || x.message FROM warnings x
                     WHERE x.path = w.path AND x.session_id IS NOT NULL
                     ORDER BY x.line IS NULL, x.line, x.id LIMIT 1)
             FROM warnings w WHERE w.session_id IS NOT NULL
             GROUP BY w.path ORDER BY MAX(w.created_at) DESC, w.path LIMIT ?1",
        )?;
        let rows = stmt.query_map([named as i64], |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, i64>(1)?,
                r.get::<_, i64>(2)?,
                r.get::<_, String>(3)?,
            ))
        })?;
        for row in rows {
            let (path, n, session, first) = row?;
            let handle = super::session_handle(conn, session)?;
            listed.push((path, count(n), first, handle));
        }
    }
    Ok(UnreadLines {
        warnings: count(warnings),
        sessions: count(sessions),
        named: listed,
        files: count(files),
    })
}

fn count(n: i64) -> u64 {
    u64::try_from(n).unwrap_or(0)
}

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

/// Keep the keys of `shared`, the sessions this forget removes that went through git (this
/// machine's own it published: `true`; pulled from a teammate: `false`), so `cairn pull` never
/// imports them again and `cairn push` takes an own one's refs down; and drop the teammate's
/// documents stored for them (a pulled session's document names it by the publisher's key).
pub fn remember_shared(
    conn: &Connection,
    shared: &[(String, bool)],
    now: &str,
) -> rusqlite::Result<()> {
    if shared.is_empty() {
        return Ok(());
    }
    let mut keep = conn.prepare_cached(
        "INSERT INTO forgotten_shared (session_key, own, forgotten_at) VALUES (?1, ?2, ?3)
         ON CONFLICT (session_key) DO UPDATE SET own = excluded.own, forgotten_at = excluded.forgotten_at",
    )?;
    for (key, own) in shared {
        keep.execute(rusqlite::params![key, own, now])?;
    }
    let documents: Vec<String> = conn
        .prepare("SELECT DISTINCT session_key FROM published_sessions")?
        .query_map([], |r| r.get(0))?
        .collect::<rusqlite::Result<_>>()?;
    let mut drop = conn.prepare_cached("DELETE FROM published_sessions WHERE session_key = ?1")?;
    for key in documents.iter().filter(|k| document_forgotten(shared, k)) {
        drop.execute([key])?;
    }
    Ok(())
}

/// Whether the document keyed `key` (a publisher's session key) is of a session in `forgotten`:
/// this machine's own (the same key), or pulled (the key its transcript was imported under).
pub fn document_forgotten(forgotten: &[(String, bool)], key: &str) -> bool {
    let pulled = crate::keys::session_key(crate::archive::Agent::Atif, key.as_bytes());
    forgotten.iter().any(|(k, _)| k == key || *k == pulled)
}

/// Every session shared through git this archive forgot (see [`remember_shared`]).
pub fn forgotten_shared(conn: &Connection) -> rusqlite::Result<Vec<(String, bool)>> {
    conn.prepare_cached("SELECT session_key, own FROM forgotten_shared")?
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect()
}

/// This machine publishes session `key` again (captured anew since it was forgotten): its
/// copies are no longer to be withdrawn.
pub fn shared_again(conn: &Connection, key: &str) -> rusqlite::Result<()> {
    conn.prepare_cached("DELETE FROM forgotten_shared WHERE session_key = ?1 AND own = 1")?
        .execute([key])?;
    Ok(())
}

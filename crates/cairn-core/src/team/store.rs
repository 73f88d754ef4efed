//! This archive's record of what its team pushes sent (migrations 0021 and 0024), as a
//! rebuild from the copies carries it over. Built with or without the `team` feature.
//!
//! The record is what makes a push a mirror: a session it sent and this archive no longer holds
//! (a forget) is withdrawn from the team archive by the next push only because the record names
//! it. A rebuild that dropped it would leave every session sent before on the server for good,
//! whatever the person forgets afterwards.

use rusqlite::Connection;

use crate::archive::rebuild::{Carried, Carry, copy_each, session_row};
use crate::recall;

/// Carry the push record from `old` (read-only, maybe damaged) into the rebuilt `new`, row by
/// row. Its keys are the team archive's id, the role and the session key or Recall entry id,
/// none of which a rebuild changes; the one row id it keeps, the last record a push sent of
/// each session, does change, so it is carried as 0: the next push sends each session whole
/// once more, an upsert of the rows the server holds. Sessions and entries sent before that
/// the new archive lacks are named: the next push takes them back from the team archive.
/// Never fails.
pub fn carry_from(old: &Connection, new: &Connection) -> Carry {
    let mut carry = Carry::default();
    carry.carried.push(Carried::of(
        "sessions a team push sent (cairn team push)",
        copy_each(
            old,
            "SELECT archive, publisher, session_key, signature, pushed_at
             FROM team_pushed_sessions",
            new,
            "INSERT OR IGNORE INTO team_pushed_sessions
                 (archive, publisher, session_key, signature, last_record_id, pushed_at)
             VALUES (?1, ?2, ?3, ?4, 0, ?5)",
        ),
    ));
    carry.carried.push(Carried::of(
        "Recall entries a team push sent",
        copy_each(
            old,
            "SELECT archive, publisher, entry_id, updated_at FROM team_pushed_entries",
            new,
            "INSERT OR IGNORE INTO team_pushed_entries (archive, publisher, entry_id, updated_at)
             VALUES (?1, ?2, ?3, ?4)",
        ),
    ));
    carry.carried.push(Carried::of(
        "the last team push to each team archive",
        copy_each(
            old,
            "SELECT archive, publisher, finished_at, sessions_pushed, sessions_unchanged,
                    sessions_withdrawn, sessions_refused, records_pushed, entries_pushed
             FROM team_pushes",
            new,
            "INSERT OR IGNORE INTO team_pushes (archive, publisher, finished_at, sessions_pushed,
                 sessions_unchanged, sessions_withdrawn, sessions_refused, records_pushed,
                 entries_pushed)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
        ),
    ));
    match keep_lost_on_server(new) {
        Ok(0) => {}
        Ok(n) => carry.not_carried.push(format!(
            "team archive: {} a push sent came back from no copy and were not forgotten;              the team archive keeps them (the next `cairn team push` does not take them back)",
            crate::text::plural(n, "session")
        )),
        Err(e) => carry.not_carried.push(format!(
            "team archive: which sessions a push sent the rebuild lost could not be read ({e})"
        )),
    }
    match gone(new) {
        Ok((0, 0)) => {}
        Ok((sessions, entries)) => {
            let (mut counts, mut why) = (Vec::new(), Vec::new());
            if sessions > 0 {
                counts.push(crate::text::plural(sessions, "session"));
                why.push("forgotten");
            }
            if entries > 0 {
                counts.push(crate::text::plural(entries, "Recall entry"));
                why.push("gone from Recall, or not readable in the old database");
            }
            carry.not_carried.push(format!(
                "team archive: of what a push sent, {} the rebuilt archive does not hold ({}): \
                 the next `cairn team push` takes them back from the team archive",
                counts.join(" and "),
                why.join("; ")
            ));
        }
        Err(e) => carry.not_carried.push(format!(
            "team archive: which of the sessions and entries a push sent the rebuilt archive \
             lacks could not be read ({e})"
        )),
    }
    carry
}

/// Take out of the carried record the sessions the rebuilt `conn` lacks that no forget took:
/// the damage lost them, and the team archive may hold the only copy left, which the next push
/// would otherwise withdraw as if forgotten. How many.
fn keep_lost_on_server(conn: &Connection) -> rusqlite::Result<u64> {
    let keys: Vec<String> = conn
        .prepare("SELECT DISTINCT session_key FROM team_pushed_sessions")?
        .query_map([], |r| r.get(0))?
        .collect::<rusqlite::Result<_>>()?;
    let mut lost = 0;
    for key in &keys {
        if session_row(conn, key)?.is_none()
            && !crate::archive::forget::is_forgotten_session(conn, key)?
        {
            conn.execute(
                "DELETE FROM team_pushed_sessions WHERE session_key = ?1",
                [key],
            )?;
            lost += 1;
        }
    }
    Ok(lost)
}

/// How many sessions and Recall entries the push record in `conn` names that `conn` does not
/// hold: a push withdraws them.
fn gone(conn: &Connection) -> rusqlite::Result<(u64, u64)> {
    let keys: Vec<String> = conn
        .prepare("SELECT DISTINCT session_key FROM team_pushed_sessions")?
        .query_map([], |r| r.get(0))?
        .collect::<rusqlite::Result<_>>()?;
    let mut sessions = 0;
    for key in &keys {
        sessions += u64::from(session_row(conn, key)?.is_none());
    }
    let ids: Vec<String> = conn
        .prepare("SELECT DISTINCT entry_id FROM team_pushed_entries")?
        .query_map([], |r| r.get(0))?
        .collect::<rusqlite::Result<_>>()?;
    let mut entries = 0;
    for id in &ids {
        entries += u64::from(!recall::store::exists(conn, id)?);
    }
    Ok((sessions, entries))
}

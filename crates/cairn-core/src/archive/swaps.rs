//! Retained copies a reindex rewrote, put in their place without a moment where the store and
//! the copy disagree for good (migration 0035, `retained_swaps`).
//!
//! A reindex that finds lines today's rules redact further writes the copy again beside the old
//! one ([`Retained::write_scrubbed`]) after listing it here unready ([`begin`]); the rebuild's
//! transaction, which gives the records the lines' new keys and the store the copy's new
//! length, marks it ready ([`ready`]); once that commits the new copy is renamed over the old
//! ([`finish`]). A crash before the commit leaves the old copy with the old records (the
//! unready row's file is removed by the next reindex, [`abandon`]); a crash after it leaves a
//! ready row, finished at the next open and by the capture writer before it appends to the copy
//! ([`finish_source`]), so nothing is ever added to a copy the store no longer describes.

use std::path::{Path, PathBuf};

use rusqlite::{Connection, OptionalExtension, params};

use super::Agent;
use super::retain::Retained;
use crate::error::Result;
use crate::store::db_err;

/// List the rewrite of a copy, before its file is written.
pub(crate) fn begin(conn: &Connection, source_id: i64, generation: u32) -> rusqlite::Result<()> {
    conn.prepare_cached(
        "INSERT OR REPLACE INTO retained_swaps (source_id, generation, ready) VALUES (?1, ?2, 0)",
    )?
    .execute(params![source_id, generation])?;
    Ok(())
}

/// Mark the rewrite of a copy ready to take its place, in the transaction that stores what
/// it says; `len`: its length, when it is the copy of the source's current generation (whose
/// length the store records).
pub(crate) fn ready(
    tx: &Connection,
    source_id: i64,
    generation: u32,
    len: Option<u64>,
) -> rusqlite::Result<()> {
    tx.prepare_cached(
        "UPDATE retained_swaps SET ready = 1 WHERE source_id = ?1 AND generation = ?2",
    )?
    .execute(params![source_id, generation])?;
    if let Some(len) = len {
        tx.prepare_cached("UPDATE sources SET retained_len = ?2 WHERE id = ?1")?
            .execute(params![source_id, i64::try_from(len).unwrap_or(i64::MAX)])?;
    }
    Ok(())
}

/// The copy a row of the table names.
fn copy_path(
    retained: &Retained,
    agent: &str,
    source_key: &str,
    generation: i64,
) -> Option<PathBuf> {
    let agent = Agent::parse(agent)?;
    let generation = u32::try_from(generation).ok()?;
    Some(retained.path(agent, source_key, generation))
}

/// Rewrites listed in the table, ready or not: `(source, generation, copy)`.
fn listed(
    conn: &Connection,
    ready: bool,
    data_dir: &Path,
) -> rusqlite::Result<Vec<(i64, i64, PathBuf)>> {
    let retained = Retained::new(data_dir);
    let rows: Vec<(i64, i64, String, String)> = conn
        .prepare_cached(
            "SELECT w.source_id, w.generation, s.agent, s.source_key
             FROM retained_swaps w JOIN sources s ON s.id = w.source_id WHERE w.ready = ?1",
        )?
        .query_map([ready], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))
        })?
        .collect::<rusqlite::Result<_>>()?;
    Ok(rows
        .into_iter()
        .filter_map(|(source, generation, agent, key)| {
            copy_path(&retained, &agent, &key, generation).map(|p| (source, generation, p))
        })
        .collect())
}

fn delete(conn: &Connection, source_id: i64, generation: i64) -> rusqlite::Result<()> {
    conn.prepare_cached("DELETE FROM retained_swaps WHERE source_id = ?1 AND generation = ?2")?
        .execute(params![source_id, generation])?;
    Ok(())
}

/// Put every ready rewrite in its copy's place (at open; after a reindex's commit). A rename
/// that fails stays listed for the next try, logged.
pub(crate) fn finish(conn: &mut Connection, data_dir: &Path) -> Result<()> {
    let db = data_dir.join(crate::store::DB_FILE);
    let e = |err| db_err(&db, err);
    let any: bool = conn
        .query_row(
            "SELECT EXISTS (SELECT 1 FROM retained_swaps WHERE ready = 1)",
            [],
            |r| r.get(0),
        )
        .map_err(e)?;
    if !any {
        return Ok(());
    }
    let retained = Retained::new(data_dir);
    for (source, generation, copy) in listed(conn, true, data_dir).map_err(e)? {
        match retained.swap_in(&copy) {
            Ok(_) => delete(conn, source, generation).map_err(e)?,
            Err(err) => tracing::warn!(
                copy = %copy.display(),
                error = %err,
                "rewritten retained copy not put in place yet; trying again later"
            ),
        }
    }
    Ok(())
}

/// Before the capture writer appends to a source's copy: a ready rewrite of it takes its place
/// first (a reindex stopped between its commit and the rename). In the writer's transaction.
pub(crate) fn finish_source(
    tx: &Connection,
    retained: &Retained,
    copy: &Path,
    source_id: i64,
    generation: u32,
) -> Result<()> {
    let e = crate::store::err_in(tx);
    let listed = tx
        .prepare_cached(
            "SELECT 1 FROM retained_swaps WHERE source_id = ?1 AND generation = ?2 AND ready = 1",
        )
        .map_err(e)?
        .query_row(params![source_id, generation], |_| Ok(()))
        .optional()
        .map_err(e)?;
    if listed.is_some() {
        retained.swap_in(copy)?;
        delete(tx, source_id, i64::from(generation)).map_err(e)?;
    }
    Ok(())
}

/// Whether a rewrite of a copy of the source is ready but not in place: its rename failed at
/// every try so far (the copy on disk is the old one, the store already describes the new).
pub(crate) fn waiting(conn: &Connection, source_id: i64) -> rusqlite::Result<bool> {
    conn.prepare_cached(
        "SELECT EXISTS (SELECT 1 FROM retained_swaps WHERE source_id = ?1 AND ready = 1)",
    )?
    .query_row([source_id], |r| r.get(0))
}

/// Remove the rewrites no transaction made ready (a reindex stopped before its commit). Only
/// under the capture lock, which every reindex holds while its rewrites are unready.
pub(crate) fn abandon(conn: &Connection, data_dir: &Path) -> Result<()> {
    let e = crate::store::err_in(conn);
    let retained = Retained::new(data_dir);
    for (source, generation, copy) in listed(conn, false, data_dir).map_err(e)? {
        retained.discard_scrubbed(&copy);
        delete(conn, source, generation).map_err(e)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::archive::retain::{Appended, RetainedLine};

    /// A store with one source whose copy holds `old`, and a rewrite of it holding `new` beside.
    fn copy_and_rewrite(dir: &Path) -> (Connection, PathBuf) {
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch(
            "CREATE TABLE sources (id INTEGER PRIMARY KEY, agent TEXT, source_key TEXT);
             INSERT INTO sources VALUES (1, 'claude', 'sha256-k');",
        )
        .unwrap();
        conn.execute_batch(include_str!("migrations/0035_retained_swaps.sql"))
            .unwrap();
        let retained = Retained::new(dir);
        let copy = retained.path(Agent::Claude, "sha256-k", 0);
        let encoded = Retained::encode(b"old\n", &[]).unwrap();
        assert_eq!(
            retained.append(&copy, 0, &encoded).unwrap(),
            Appended::Ok(encoded.len() as u64)
        );
        let line = RetainedLine {
            line_no: 0,
            text: b"new".to_vec(),
            record_hash: Some("sha256:n".into()),
        };
        begin(&conn, 1, 0).unwrap();
        retained.write_scrubbed(&copy, [Ok(line)]).unwrap();
        (conn, copy)
    }

    fn text(dir: &Path, copy: &Path) -> Vec<u8> {
        let lines = Retained::new(dir).read(copy, 0).unwrap();
        lines.into_iter().flat_map(|l| l.text).collect()
    }

    fn rows(conn: &Connection) -> i64 {
        conn.query_row("SELECT COUNT(*) FROM retained_swaps", [], |r| r.get(0))
            .unwrap()
    }

    /// Stopped between the rebuild's commit and the rename: the next open puts the rewrite in
    /// place, once; a second finish (or one after the file went) has nothing to do.
    #[test]
    fn a_ready_rewrite_takes_the_copys_place_at_the_next_finish() {
        let dir = tempfile::tempdir().unwrap();
        let (mut conn, copy) = copy_and_rewrite(dir.path());
        // Unready: an open leaves it (its reindex may still be running).
        finish(&mut conn, dir.path()).unwrap();
        assert_eq!(text(dir.path(), &copy), b"old");
        assert_eq!(rows(&conn), 1);
        ready(&conn, 1, 0, None).unwrap();
        finish(&mut conn, dir.path()).unwrap();
        assert_eq!(text(dir.path(), &copy), b"new");
        assert_eq!(rows(&conn), 0);
        assert!(!Retained::scrub_path(&copy).exists());
        // Listed again with no file beside (renamed already): the row just goes.
        begin(&conn, 1, 0).unwrap();
        ready(&conn, 1, 0, None).unwrap();
        finish(&mut conn, dir.path()).unwrap();
        assert_eq!(text(dir.path(), &copy), b"new");
        assert_eq!(rows(&conn), 0);
    }

    /// Stopped before the commit: the rewrite is removed and the copy stays as it was.
    #[test]
    fn an_unready_rewrite_is_abandoned() {
        let dir = tempfile::tempdir().unwrap();
        let (conn, copy) = copy_and_rewrite(dir.path());
        assert!(Retained::scrub_path(&copy).exists());
        abandon(&conn, dir.path()).unwrap();
        assert!(!Retained::scrub_path(&copy).exists());
        assert_eq!(text(dir.path(), &copy), b"old");
        assert_eq!(rows(&conn), 0);
    }

    /// The capture writer puts a ready rewrite in place before it appends to the copy, and
    /// leaves another generation's alone.
    #[test]
    fn the_writer_swaps_before_it_appends() {
        let dir = tempfile::tempdir().unwrap();
        let (conn, copy) = copy_and_rewrite(dir.path());
        ready(&conn, 1, 0, None).unwrap();
        let retained = Retained::new(dir.path());
        finish_source(&conn, &retained, &copy, 1, 1).unwrap();
        assert_eq!(text(dir.path(), &copy), b"old");
        finish_source(&conn, &retained, &copy, 1, 0).unwrap();
        assert_eq!(text(dir.path(), &copy), b"new");
        assert_eq!(rows(&conn), 0);
    }
}

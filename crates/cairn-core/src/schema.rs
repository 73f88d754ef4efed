//! The one ordered list of every room's migrations, and the opens that apply it.
//!
//! Each room keeps its migrations beside it (`archive/migrations/`, `git/migrations/`,
//! `recall/migrations/`, `semantic/migrations/`, `insights/migrations/`); the numbers are the
//! order they were released in, one sequence across rooms, and never change: an archive records
//! how far it has come as that number (`PRAGMA user_version`). The store floor
//! ([`crate::store`]) runs the list; it sits here, on the facade floor, because a step may run a
//! room's code (`0014` re-keys through `archive::rekey` and `recall::store`).

use std::path::Path;
use std::time::Duration;

use crate::archive::rekey;
use crate::error::Result;
use crate::store::{Migration, Schema, Store, sql};

/// Migrations in order; the index + 1 is the schema version they produce.
pub(crate) const MIGRATIONS: &[Migration] = &[
    sql(include_str!("archive/migrations/0001_archive.sql")),
    sql(include_str!("git/migrations/0002_git.sql")),
    sql(include_str!("git/migrations/0003_publish.sql")),
    sql(include_str!("recall/migrations/0004_recall.sql")),
    sql(include_str!("recall/migrations/0005_extract.sql")),
    sql(include_str!("semantic/migrations/0006_vectors.sql")),
    sql(include_str!("insights/migrations/0007_insights.sql")),
    sql(include_str!("archive/migrations/0008_association.sql")),
    sql(include_str!("archive/migrations/0009_checks.sql")),
    sql(include_str!("git/migrations/0010_incremental_links.sql")),
    sql(include_str!("archive/migrations/0011_link_pending.sql")),
    sql(include_str!(
        "archive/migrations/0012_unknown_timestamps.sql"
    )),
    sql(include_str!("git/migrations/0013_published_remotes.sql")),
    Migration {
        sql: include_str!("archive/migrations/0014_rekey_redacted_lines.sql"),
        then: Some(rekey_redacted_lines),
    },
    sql(include_str!("recall/migrations/0015_agent_proposals.sql")),
    sql(include_str!("archive/migrations/0016_more_agents.sql")),
    sql(include_str!(
        "recall/migrations/0017_trusted_by_project.sql"
    )),
    sql(include_str!("archive/migrations/0018_keyed_records.sql")),
    sql(include_str!("archive/migrations/0019_forget.sql")),
    sql(include_str!("git/migrations/0020_link_corrections.sql")),
    sql(include_str!("team/migrations/0021_team_push.sql")),
    sql(include_str!("archive/migrations/0022_pulled_sessions.sql")),
    Migration {
        sql: include_str!("git/migrations/0023_edits_written.sql"),
        then: Some(relink_every_session),
    },
    sql(include_str!("team/migrations/0024_team_pushes.sql")),
    Migration {
        sql: include_str!("archive/migrations/0025_ran_as.sql"),
        then: Some(set_ran_as),
    },
    sql(include_str!("archive/migrations/0026_records_vocab.sql")),
    sql(include_str!(
        "archive/migrations/0027_sessions_by_agent_id.sql"
    )),
    Migration {
        sql: include_str!("archive/migrations/0028_index_escaped_words.sql"),
        then: Some(reindex_escaped_inputs),
    },
    sql(include_str!("archive/migrations/0029_fts_takeouts.sql")),
    sql(include_str!("semantic/migrations/0030_vector_changes.sql")),
    sql(include_str!(
        "semantic/migrations/0031_turn_vectors_made.sql"
    )),
    sql(include_str!("archive/migrations/0032_turn_extents.sql")),
    sql(include_str!("archive/migrations/0033_reindexes.sql")),
    sql(include_str!("archive/migrations/0034_read_by.sql")),
    sql(include_str!("archive/migrations/0035_retained_swaps.sql")),
    sql(include_str!("archive/migrations/0036_call_pairs.sql")),
    sql(include_str!("archive/migrations/0037_sidecar_stamps.sql")),
    Migration {
        sql: include_str!("git/migrations/0038_live_snapshots.sql"),
        then: Some(relink_every_session),
    },
    Migration {
        sql: include_str!("git/migrations/0039_reflog_ran_on.sql"),
        then: Some(relink_every_session),
    },
    Migration {
        sql: include_str!("archive/migrations/0040_worktree_projects.sql"),
        then: Some(worktree_projects),
    },
    Migration {
        sql: include_str!("archive/migrations/0041_index_escaped_text.sql"),
        then: Some(reindex_escaped_text),
    },
    sql(include_str!("git/migrations/0042_forgotten_shared.sql")),
    sql(include_str!("recall/migrations/0043_rejections.sql")),
    sql(include_str!(
        "archive/migrations/0044_forgotten_sessions.sql"
    )),
    Migration {
        sql: include_str!("archive/migrations/0045_sealed_paths.sql"),
        then: Some(seal_kept_paths),
    },
    Migration {
        sql: include_str!("archive/migrations/0046_side_file_facts.sql"),
        then: Some(redact_session_facts),
    },
    Migration {
        sql: include_str!("archive/migrations/0047_source_manifests.sql"),
        then: Some(describe_sources),
    },
    Migration {
        sql: include_str!("archive/migrations/0048_index_cjk_and_emoji.sql"),
        then: Some(index_tails),
    },
    sql(include_str!("recall/migrations/0049_extract_readable.sql")),
    sql(include_str!("recall/migrations/0050_stale_checks.sql")),
    Migration {
        sql: include_str!("archive/migrations/0051_link_changed_from.sql"),
        then: Some(link_changed_from),
    },
];

/// Migration 0051's Rust half: the relink queue says where a session's records changed in
/// place (added only when absent: an archive wound back by hand may hold the column already).
fn link_changed_from(tx: &rusqlite::Transaction<'_>, _data_dir: &Path) -> Result<()> {
    crate::archive::store::add_changed_from(tx).map_err(crate::store::err_in(tx))
}

/// Migration 0048's Rust half: the records with a CJK word or an emoji are indexed again with
/// their tail, so a word inside a run of CJK text is found.
fn index_tails(tx: &rusqlite::Transaction<'_>, _data_dir: &Path) -> Result<()> {
    crate::archive::store::index_tails(tx)
        .map(drop)
        .map_err(crate::store::err_in(tx))
}

/// Migration 0047's Rust half: each source an older build retained is described beside its
/// copies, so the archive can be rebuilt from them alone.
fn describe_sources(tx: &rusqlite::Transaction<'_>, data_dir: &Path) -> Result<()> {
    crate::archive::rebuild::describe_every_source(tx, data_dir)
        .map(drop)
        .map_err(crate::store::err_in(tx))
}

/// Migration 0014's Rust half: the archive re-keys its records, sources and turns, and each room
/// above that stores record keys re-keys its own (Recall's evidence ranges).
fn rekey_redacted_lines(tx: &rusqlite::Transaction<'_>, data_dir: &Path) -> Result<()> {
    rekey::migrate(tx, data_dir, &[crate::recall::store::rekey_evidence])
}

/// Migrations 0023's, 0038's and 0039's Rust half: every session is relinked at the next
/// capture (by today's rules: 0023 and 0038 dropped the association state, so the relink
/// rebuilds every link; 0039 recomputes only the links a relink always recomputes).
fn relink_every_session(tx: &rusqlite::Transaction<'_>, _data_dir: &Path) -> Result<()> {
    crate::archive::store::queue_every_link(tx).map_err(crate::store::err_in(tx))
}

/// Migration 0040's Rust half: the sessions that ran in a linked worktree take its repository's
/// name as their project, and Recall's entries follow a name that no session keeps.
fn worktree_projects(tx: &rusqlite::Transaction<'_>, _data_dir: &Path) -> Result<()> {
    let db = crate::store::err_in(tx);
    for (old, new) in crate::archive::store::rename_worktree_projects(tx).map_err(db)? {
        crate::recall::store::rename_project(tx, &old, &new).map_err(db)?;
    }
    Ok(())
}

/// Migration 0045's Rust half: the paths of sources, warnings and pulled transcripts with a
/// secret in a folder or file name are kept sealed.
fn seal_kept_paths(tx: &rusqlite::Transaction<'_>, data_dir: &Path) -> Result<()> {
    crate::archive::store::seal_kept_paths(tx, data_dir)
        .map(drop)
        .map_err(crate::store::err_in(tx))
}

/// Migration 0046's Rust half: the session facts older builds took unredacted from the files
/// beside a transcript are redacted.
fn redact_session_facts(tx: &rusqlite::Transaction<'_>, _data_dir: &Path) -> Result<()> {
    crate::archive::store::redact_session_facts(tx)
        .map(drop)
        .map_err(crate::store::err_in(tx))
}

/// Migration 0025's Rust half: the imported and pulled sessions already here are filtered and
/// shown as the agent their trajectory names.
fn set_ran_as(tx: &rusqlite::Transaction<'_>, _data_dir: &Path) -> Result<()> {
    crate::archive::store::set_every_ran_as(tx).map_err(crate::store::err_in(tx))
}

/// Migration 0041's Rust half: the records whose text holds an escape sequence glued to a word
/// are indexed again as search reads them.
fn reindex_escaped_text(tx: &rusqlite::Transaction<'_>, _data_dir: &Path) -> Result<()> {
    crate::archive::store::reindex_escaped_text(tx)
        .map(drop)
        .map_err(crate::store::err_in(tx))
}

/// Migration 0028's Rust half: the tool inputs indexed with words glued to JSON escapes are
/// indexed again as search reads them.
fn reindex_escaped_inputs(tx: &rusqlite::Transaction<'_>, _data_dir: &Path) -> Result<()> {
    crate::archive::store::reindex_escaped_inputs(tx)
        .map(drop)
        .map_err(crate::store::err_in(tx))
}

/// Cairn's schema: the migrations, then what a killed writer of the retained copies may have
/// left unfinished.
const SCHEMA: Schema = Schema {
    steps: MIGRATIONS,
    after_open,
};

/// At every writable open: the copies' re-keying a killed migration 14 left, and the copies a
/// reindex rewrote and was stopped before putting in place.
fn after_open(conn: &mut rusqlite::Connection, data_dir: &Path) -> Result<()> {
    rekey::finish(conn, data_dir)?;
    crate::archive::swaps::finish(conn, data_dir)
}

/// The schema version this build writes.
pub const SCHEMA_VERSION: i64 = SCHEMA.version();

impl Store {
    /// Open (creating and migrating if needed) the database at `path`.
    pub fn open(path: &Path) -> Result<Store> {
        Store::open_with(path, &SCHEMA)
    }

    /// An empty archive in memory, named as `path` (see [`Store::empty_in_memory`]).
    pub(crate) fn empty(path: &Path) -> Result<Store> {
        Store::empty_in_memory(path, &SCHEMA)
    }

    /// Open an existing database without ever writing to it (a read-only data dir, say).
    pub fn open_read_only(path: &Path) -> Result<Store> {
        Store::open_read_only_waiting(path, Duration::from_secs(30))
    }

    /// [`Store::open_read_only`] that waits at most `busy` for a lock (a hook that must not
    /// hold up the agent), then fails.
    pub fn open_read_only_waiting(path: &Path, busy: Duration) -> Result<Store> {
        Store::open_read_only_known(path, SCHEMA_VERSION, busy)
    }
}

#[cfg(test)]
mod tests {
    use rusqlite::Connection;

    use super::*;
    use crate::store::DB_FILE;

    #[test]
    fn migrates_a_new_database_and_reopens_idempotently() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(DB_FILE);
        let store = Store::open(&path).unwrap();
        assert_eq!(store.schema_version().unwrap(), SCHEMA_VERSION);
        let mode: String = store
            .conn()
            .query_row("PRAGMA journal_mode", [], |r| r.get(0))
            .unwrap();
        assert_eq!(mode, "wal");
        drop(store);
        let again = Store::open(&path).unwrap();
        assert_eq!(again.schema_version().unwrap(), SCHEMA_VERSION);
    }

    /// Every earlier schema version migrates to the current one.
    #[test]
    fn migrates_from_every_earlier_version() {
        for start in 0..SCHEMA_VERSION {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join(DB_FILE);
            {
                let conn = Connection::open(&path).unwrap();
                for step in &MIGRATIONS[..start as usize] {
                    conn.execute_batch(step.sql).unwrap();
                }
                conn.pragma_update(None, "user_version", start).unwrap();
            }
            let store = Store::open(&path).unwrap();
            assert_eq!(
                store.schema_version().unwrap(),
                SCHEMA_VERSION,
                "from {start}"
            );
        }
    }

    /// The database is created 0600 and SQLite gives its `-wal` and `-shm` the same mode (the
    /// CLI's `a_fresh_data_dir_is_private_under_any_umask` checks it under umask 000).
    #[cfg(unix)]
    #[test]
    fn the_database_and_its_wal_and_shm_are_private() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(DB_FILE);
        let store = Store::open(&path).unwrap();
        store
            .conn()
            .execute_batch("CREATE TABLE t (x); INSERT INTO t VALUES (1);")
            .unwrap();
        for name in ["cairn.db", "cairn.db-wal", "cairn.db-shm"] {
            let mode = std::fs::metadata(dir.path().join(name))
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o600, "{name}: {mode:o}");
        }
    }

    #[test]
    fn refuses_a_newer_schema() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(DB_FILE);
        Connection::open(&path)
            .unwrap()
            .pragma_update(None, "user_version", 999)
            .unwrap();
        let err = Store::open(&path).err().unwrap();
        assert!(err.to_string().contains("newer Cairn"), "{err}");
    }
}

//! Recall's entries as the corpus of the `recall` vector store: one document per entry (title,
//! body and trigger), keyed in the matrix by the entry's rowid. Semantic sits below Recall, so
//! the facade hands this down to the vector build and search.

use rusqlite::{Connection, OptionalExtension};

use crate::semantic::corpus::{Corpus, Doc};
use crate::semantic::vectors::{VectorStore, recall_doc};

/// The corpus of Recall entries.
pub struct Entries;

fn doc(r: &rusqlite::Row<'_>) -> rusqlite::Result<Doc> {
    Ok(Doc {
        id: r.get(0)?,
        key: r.get(1)?,
        version: 0,
        text: recall_doc(
            &r.get::<_, String>(2)?,
            &r.get::<_, String>(3)?,
            &r.get::<_, String>(4)?,
        ),
    })
}

impl Corpus for Entries {
    fn store(&self) -> VectorStore {
        VectorStore::Recall
    }

    fn revision(&self, _conn: &Connection) -> rusqlite::Result<Option<i64>> {
        // Kept current by the triggers of migration 6.
        Ok(None)
    }

    fn index(&self, conn: &Connection) -> rusqlite::Result<Vec<(String, i64, i64)>> {
        conn.prepare_cached("SELECT id, rowid FROM recall_entries ORDER BY rowid")?
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, 0)))?
            .collect()
    }

    fn document(&self, conn: &Connection, id: &str) -> rusqlite::Result<Option<Doc>> {
        conn.prepare_cached(
            "SELECT id, rowid, title, body, trigger FROM recall_entries WHERE id = ?1",
        )?
        .query_row([id], doc)
        .optional()
    }

    fn current(&self, conn: &Connection, id: &str) -> rusqlite::Result<Option<(i64, i64)>> {
        conn.prepare_cached("SELECT rowid FROM recall_entries WHERE id = ?1")?
            .query_row([id], |r| Ok((r.get(0)?, 0)))
            .optional()
    }
}

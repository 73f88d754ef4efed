//! What a vector store embeds: a corpus of documents owned by another room. Semantic keeps the
//! vectors; the owning room says which documents exist, what their text is now, and how a
//! document is keyed in the matrix. The archive's turns are read here, through the archive's
//! typed reads (the archive is below); Recall, above, implements [`Corpus`] for its entries and
//! the facade hands it down.

use rusqlite::Connection;

use super::vectors::VectorStore;

/// One document of a corpus, as a vector build reads it.
#[derive(Debug, Clone, PartialEq)]
pub struct Doc {
    /// The document's id as the vector table stores it (an entry id, a turn id as text).
    pub id: String,
    /// The matrix row key a search returns (an entry's rowid, a turn id).
    pub key: i64,
    /// What the vector must have been made from besides the text (a turn's last ordinal; 0
    /// where the text alone decides).
    pub version: i64,
    pub text: String,
}

/// A corpus a vector store embeds.
pub trait Corpus: Sync {
    /// The store its vectors live in.
    fn store(&self) -> VectorStore;
    /// The corpus revision when the corpus keeps it itself (the archive's newest capture);
    /// `None` when the store's state row is kept current by triggers.
    fn revision(&self, conn: &Connection) -> rusqlite::Result<Option<i64>>;
    /// Every document's id, key and version, without text (counting what lacks a vector).
    fn index(&self, conn: &Connection) -> rusqlite::Result<Vec<(String, i64, i64)>>;
    /// Every document's key and version, sorted by key: [`Corpus::index`] without the ids, which
    /// a kept matrix checks its rows against after each capture (a corpus whose keys are its
    /// ids reads them as integers, not text).
    fn extents(&self, conn: &Connection) -> rusqlite::Result<Vec<(i64, i64)>> {
        let mut all: Vec<(i64, i64)> = self
            .index(conn)?
            .into_iter()
            .map(|(_, key, version)| (key, version))
            .collect();
        all.sort_unstable();
        Ok(all)
    }
    /// Document `id` as it is now (`None`: gone).
    fn document(&self, conn: &Connection, id: &str) -> rusqlite::Result<Option<Doc>>;
    /// Document `id`'s key and version as they are now, without its text (`None`: gone).
    fn current(&self, conn: &Connection, id: &str) -> rusqlite::Result<Option<(i64, i64)>>;
}

/// The archive's turns: one document per turn, its digest ([`super::digest::turn_digest`]:
/// request, outcome, files, commands), versioned by the turn's last ordinal (a turn that grew
/// needs a new vector).
pub struct Turns;

fn turn_doc(t: crate::archive::store::TurnText) -> Doc {
    Doc {
        id: t.id.to_string(),
        key: t.id,
        version: t.last_ordinal,
        text: super::digest::turn_digest(&t),
    }
}

impl Corpus for Turns {
    fn store(&self) -> VectorStore {
        VectorStore::Sessions
    }

    fn revision(&self, conn: &Connection) -> rusqlite::Result<Option<i64>> {
        crate::archive::store::revision(conn).map(Some)
    }

    fn index(&self, conn: &Connection) -> rusqlite::Result<Vec<(String, i64, i64)>> {
        Ok(crate::archive::store::turn_extents(conn)?
            .into_iter()
            .map(|(id, last)| (id.to_string(), id, last))
            .collect())
    }

    fn extents(&self, conn: &Connection) -> rusqlite::Result<Vec<(i64, i64)>> {
        // By turn id, which is also the key.
        crate::archive::store::turn_extents(conn)
    }

    fn document(&self, conn: &Connection, id: &str) -> rusqlite::Result<Option<Doc>> {
        let Ok(id) = id.parse::<i64>() else {
            return Ok(None);
        };
        Ok(crate::archive::store::turn_text(conn, id)?.map(turn_doc))
    }

    fn current(&self, conn: &Connection, id: &str) -> rusqlite::Result<Option<(i64, i64)>> {
        let Ok(id) = id.parse::<i64>() else {
            return Ok(None);
        };
        Ok(crate::archive::store::turn_extent(conn, id)?.map(|last| (id, last)))
    }
}

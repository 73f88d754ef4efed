//! How common a word is in the archive: the share of records the full-text index holds it in
//! (`records_fts_rows`, an fts5vocab table over `records_fts`, migration 0026).

use rusqlite::{Connection, OptionalExtension};

/// The share of records (0 to 1) whose text or tool input holds `word`, or `None` when the word
/// is not one token of the index (it has punctuation or a character outside ASCII letters and
/// digits, so the index splits or folds it: its share cannot be read from one row).
///
/// Counting reads the word's list of records in the index (FTS5 keeps no count), which is a
/// small part of what ranking a query with that word costs. The records counted against are the
/// highest record id, so forgotten records make a share smaller, never larger.
pub fn record_share(conn: &Connection, word: &str) -> rusqlite::Result<Option<f64>> {
    if word.is_empty() || !word.chars().all(|c| c.is_ascii_alphanumeric()) {
        return Ok(None);
    }
    let term = word.to_ascii_lowercase();
    let rows: i64 = conn
        .prepare_cached("SELECT COALESCE(max(id), 0) FROM records")?
        .query_row([], |r| r.get(0))?;
    if rows <= 0 {
        return Ok(Some(0.0));
    }
    let docs: Option<i64> = conn
        .prepare_cached("SELECT doc FROM records_fts_rows WHERE term = ?1")?
        .query_row([&term], |r| r.get(0))
        .optional()?;
    Ok(Some(docs.unwrap_or(0) as f64 / rows as f64))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_word_the_index_splits_or_folds_has_no_share() {
        // Answered before any table is read: an empty in-memory database will do.
        let conn = Connection::open_in_memory().unwrap();
        for word in ["src/auth.rs", "parse_config", "café", ""] {
            assert_eq!(record_share(&conn, word).unwrap(), None, "{word}");
        }
    }
}

//! How common a word is in the archive: the share of records the full-text index holds it in.

use rusqlite::Connection;

/// The share of records (0 to 1) whose text or tool input holds `word`, or `None` when the word
/// is not one token of the index (it has punctuation or a character outside ASCII letters and
/// digits, so the index splits or folds it: its share cannot be read from one row).
///
/// The count is the one the ranking takes for the word (FTS5 keeps none: counting reads the
/// word's list of records in the index), kept between queries by [`super::phrase_rows`], so the
/// any-word pass that follows ranks by it for free. The records counted against are the highest
/// record id, so forgotten records make a share smaller, never larger.
pub fn record_share(conn: &Connection, word: &str) -> rusqlite::Result<Option<f64>> {
    if word.is_empty() || !word.chars().all(|c| c.is_ascii_alphanumeric()) {
        return Ok(None);
    }
    let rows: i64 = conn
        .prepare_cached("SELECT COALESCE(max(id), 0) FROM records")?
        .query_row([], |r| r.get(0))?;
    if rows <= 0 {
        return Ok(Some(0.0));
    }
    // One token of ASCII letters and digits: the phrase of it holds exactly the records the
    // index lists for the term.
    let docs = super::phrase_rows(conn, &[&format!("\"{word}\"")])?;
    Ok(Some(
        docs.first().copied().unwrap_or(0) as f64 / rows as f64,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The share is the index's own count of the term (what `records_fts_rows` lists), in any
    /// case, before and after records are appended.
    #[test]
    fn a_share_is_the_index_s_count_of_the_term() {
        let dir = tempfile::tempdir().unwrap();
        let conn = super::super::fts::test_index(dir.path());
        let add = |text: &str, input: &str| super::super::fts::test_add(&conn, text, input);
        let vocab = |term: &str| -> f64 {
            let doc: i64 = conn
                .query_row(
                    "SELECT COALESCE((SELECT doc FROM records_fts_rows WHERE term = ?1), 0)",
                    [term],
                    |r| r.get(0),
                )
                .unwrap();
            let rows: i64 = conn
                .query_row("SELECT max(id) FROM records", [], |r| r.get(0))
                .unwrap();
            doc as f64 / rows as f64
        };
        add("Alpha beta", "alpha");
        add("gamma", "{\"cmd\":\"beta gamma\"}");
        for _ in 0..2 {
            for (word, term) in [
                ("alpha", "alpha"),
                ("ALPHA", "alpha"),
                ("beta", "beta"),
                ("x1", "x1"),
            ] {
                assert_eq!(
                    record_share(&conn, word).unwrap(),
                    Some(vocab(term)),
                    "{word}"
                );
            }
            add("beta x1", "");
        }
    }

    #[test]
    fn a_word_the_index_splits_or_folds_has_no_share() {
        // Answered before any table is read: an empty in-memory database will do.
        let conn = Connection::open_in_memory().unwrap();
        for word in ["src/auth.rs", "parse_config", "café", ""] {
            assert_eq!(record_share(&conn, word).unwrap(), None, "{word}");
        }
    }
}

//! The analysed full-text index of Recall entries and its corpus statistics.
//!
//! Each entry's title, body, trigger and evidence snippets are analysed (see
//! [`super::analyze`]) and stored in `recall_fts` as space-separated terms; FTS5 finds
//! candidates with the very terms the BM25F scorer counts. `recall_stats` keeps the number of
//! documents and the total terms per field (for average field lengths), `recall_lengths` each
//! entry's own, so updates and deletes keep the totals exact.

use rusqlite::{Connection, OptionalExtension, params};

use super::analyze::Analyzer;

/// The four indexed fields, in `recall_fts` column order.
pub const FIELDS: [&str; 4] = ["title", "body", "trigger", "evidence"];

/// The text of an entry to index.
pub struct IndexDoc<'a> {
    pub title: &'a str,
    pub body: &'a str,
    pub trigger: &'a str,
    pub evidence: &'a str,
}

/// Corpus-level statistics.
#[derive(Debug, Clone, Copy, Default)]
pub struct Stats {
    pub docs: f64,
    /// Average terms per field, in [`FIELDS`] order.
    pub avg_len: [f64; 4],
}

/// (Re)index one entry.
pub fn index(conn: &Connection, rowid: i64, doc: &IndexDoc<'_>) -> rusqlite::Result<()> {
    unindex(conn, rowid)?;
    let a = Analyzer::global();
    let fields = [
        a.terms(doc.title),
        a.terms(doc.body),
        a.terms(doc.trigger),
        a.terms(doc.evidence),
    ];
    let lens: Vec<i64> = fields.iter().map(|f| f.len() as i64).collect();
    let text: Vec<String> = fields.iter().map(|f| f.join(" ")).collect();
    conn.prepare_cached("INSERT INTO recall_fts (rowid, title, body, trigger, evidence) VALUES (?1, ?2, ?3, ?4, ?5)")?
        .execute(params![rowid, text[0], text[1], text[2], text[3]])?;
    conn.prepare_cached(
        "INSERT INTO recall_lengths (entry_rowid, title_terms, body_terms, trigger_terms, evidence_terms)
         VALUES (?1, ?2, ?3, ?4, ?5)",
    )?
    .execute(params![rowid, lens[0], lens[1], lens[2], lens[3]])?;
    conn.prepare_cached(
        "UPDATE recall_stats SET docs = docs + 1, title_terms = title_terms + ?1, body_terms = body_terms + ?2,
            trigger_terms = trigger_terms + ?3, evidence_terms = evidence_terms + ?4 WHERE singleton = 1",
    )?
    .execute(params![lens[0], lens[1], lens[2], lens[3]])?;
    Ok(())
}

/// Remove an entry from the index (no-op when it is not indexed).
pub fn unindex(conn: &Connection, rowid: i64) -> rusqlite::Result<()> {
    let old: Option<(i64, i64, i64, i64)> = conn
        .prepare_cached(
            "SELECT title_terms, body_terms, trigger_terms, evidence_terms FROM recall_lengths WHERE entry_rowid = ?1",
        )?
        .query_row([rowid], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
        .optional()?;
    let Some((t, b, g, e)) = old else {
        return Ok(());
    };
    conn.prepare_cached("DELETE FROM recall_fts WHERE rowid = ?1")?
        .execute([rowid])?;
    conn.prepare_cached("DELETE FROM recall_lengths WHERE entry_rowid = ?1")?
        .execute([rowid])?;
    conn.prepare_cached(
        "UPDATE recall_stats SET docs = docs - 1, title_terms = title_terms - ?1, body_terms = body_terms - ?2,
            trigger_terms = trigger_terms - ?3, evidence_terms = evidence_terms - ?4 WHERE singleton = 1",
    )?
    .execute(params![t, b, g, e])?;
    Ok(())
}

pub fn stats(conn: &Connection) -> rusqlite::Result<Stats> {
    conn.prepare_cached(
        "SELECT docs, title_terms, body_terms, trigger_terms, evidence_terms FROM recall_stats",
    )?
    .query_row([], |r| {
        let docs: i64 = r.get(0)?;
        let n = docs.max(1) as f64;
        let avg = |i: usize| -> rusqlite::Result<f64> {
            Ok((r.get::<_, i64>(i)?.max(0) as f64 / n).max(1.0))
        };
        Ok(Stats {
            docs: docs.max(0) as f64,
            avg_len: [avg(1)?, avg(2)?, avg(3)?, avg(4)?],
        })
    })
}

/// Documents containing each term (corpus-level document frequency).
pub fn doc_freqs(conn: &Connection, terms: &[String]) -> rusqlite::Result<Vec<f64>> {
    let mut stmt = conn.prepare_cached("SELECT doc FROM recall_fts_vocab WHERE term = ?1")?;
    terms
        .iter()
        .map(|t| {
            Ok(stmt
                .query_row([t], |r| r.get::<_, i64>(0))
                .optional()?
                .unwrap_or(0) as f64)
        })
        .collect()
}

/// An FTS5 expression matching any of `terms` (each quoted; they are already analysed).
pub fn match_any(terms: &[String]) -> String {
    terms
        .iter()
        .map(|t| format!("\"{}\"", t.replace('"', "\"\"")))
        .collect::<Vec<_>>()
        .join(" OR ")
}

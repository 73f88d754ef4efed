//! Recall's inverted index, built with the analyzer the ranker uses.
//!
//! Each entry's title, body, trigger and evidence snippets are analysed once (see
//! [`super::analyze`]). `recall_terms` keeps the analysed fields (for exact scoring and phrase
//! checks); `recall_postings` holds one row per (term, entry) with the term's *impact* in that
//! entry — its BM25F saturation `tf~ / (k1 + tf~)` in [0, 1), computed with the corpus averages
//! at indexing time — ordered so a query reads each term's strongest entries first and stops;
//! `recall_df` counts the entries holding each term; `recall_stats` the corpus size and terms per
//! field. Impacts only choose candidates: the ranker rescores them exactly with current averages,
//! so drift in the averages as the corpus grows never changes a final score.

use std::collections::BTreeMap;

use rusqlite::{Connection, OptionalExtension, params};

use super::analyze::Analyzer;

/// The four indexed fields.
pub const FIELDS: [&str; 4] = ["title", "body", "trigger", "evidence"];
/// BM25F parameters (see `rank`): saturation, field weights, length normalisation.
pub const K1: f64 = 1.2;
pub const WEIGHTS: [f64; 4] = [2.5, 1.0, 2.0, 0.6];
pub const B: [f64; 4] = [0.3, 0.75, 0.5, 0.75];

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
    /// Average terms per field, in [`FIELDS`] order (at least 1).
    pub avg_len: [f64; 4],
}

/// BM25F `tf~` of one term given its frequency and the field lengths of an entry.
pub fn weighted_tf(tf: &[f64; 4], len: &[f64; 4], avg_len: &[f64; 4]) -> f64 {
    (0..4)
        .filter(|&i| tf[i] > 0.0)
        .map(|i| WEIGHTS[i] * tf[i] / (1.0 - B[i] + B[i] * len[i] / avg_len[i]).max(0.01))
        .sum()
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
    let lens: [f64; 4] = [0, 1, 2, 3].map(|i| fields[i].len() as f64);
    conn.prepare_cached(
        "INSERT INTO recall_terms (entry_rowid, title, body, trigger, evidence) VALUES (?1, ?2, ?3, ?4, ?5)",
    )?
    .execute(params![rowid, fields[0].join(" "), fields[1].join(" "), fields[2].join(" "), fields[3].join(" ")])?;
    conn.prepare_cached(
        "UPDATE recall_stats SET docs = docs + 1, title_terms = title_terms + ?1, body_terms = body_terms + ?2,
            trigger_terms = trigger_terms + ?3, evidence_terms = evidence_terms + ?4 WHERE singleton = 1",
    )?
    .execute(params![lens[0], lens[1], lens[2], lens[3]])?;
    let s = stats(conn)?;
    let mut tfs: BTreeMap<&str, [f64; 4]> = BTreeMap::new();
    for (i, field) in fields.iter().enumerate() {
        for t in field {
            tfs.entry(t.as_str()).or_insert([0.0; 4])[i] += 1.0;
        }
    }
    let mut posting = conn.prepare_cached(
        "INSERT OR REPLACE INTO recall_postings (term, impact, entry_rowid) VALUES (?1, ?2, ?3)",
    )?;
    let mut df = conn.prepare_cached(
        "INSERT INTO recall_df (term, df) VALUES (?1, 1) ON CONFLICT (term) DO UPDATE SET df = df + 1",
    )?;
    for (term, tf) in &tfs {
        let w = weighted_tf(tf, &lens, &s.avg_len);
        posting.execute(params![term, w / (K1 + w), rowid])?;
        df.execute([term])?;
    }
    Ok(())
}

/// Remove an entry from the index (no-op when it is not indexed).
pub fn unindex(conn: &Connection, rowid: i64) -> rusqlite::Result<()> {
    let old: Option<[String; 4]> = conn
        .prepare_cached(
            "SELECT title, body, trigger, evidence FROM recall_terms WHERE entry_rowid = ?1",
        )?
        .query_row([rowid], |r| {
            Ok([r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?])
        })
        .optional()?;
    let Some(fields) = old else { return Ok(()) };
    let lens: [i64; 4] =
        [0, 1, 2, 3].map(|i| fields[i].split(' ').filter(|t| !t.is_empty()).count() as i64);
    let mut terms: Vec<&str> = fields
        .iter()
        .flat_map(|f| f.split(' '))
        .filter(|t| !t.is_empty())
        .collect();
    terms.sort_unstable();
    terms.dedup();
    let mut del =
        conn.prepare_cached("DELETE FROM recall_postings WHERE term = ?1 AND entry_rowid = ?2")?;
    let mut df = conn.prepare_cached("UPDATE recall_df SET df = df - 1 WHERE term = ?1")?;
    for t in &terms {
        del.execute(params![t, rowid])?;
        df.execute([t])?;
    }
    conn.prepare_cached("DELETE FROM recall_df WHERE df <= 0")?
        .execute([])?;
    conn.prepare_cached("DELETE FROM recall_terms WHERE entry_rowid = ?1")?
        .execute([rowid])?;
    conn.prepare_cached(
        "UPDATE recall_stats SET docs = docs - 1, title_terms = title_terms - ?1, body_terms = body_terms - ?2,
            trigger_terms = trigger_terms - ?3, evidence_terms = evidence_terms - ?4 WHERE singleton = 1",
    )?
    .execute(params![lens[0], lens[1], lens[2], lens[3]])?;
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

/// Entries holding each term (corpus-level document frequency).
pub fn doc_freqs(conn: &Connection, terms: &[String]) -> rusqlite::Result<Vec<f64>> {
    let mut stmt = conn.prepare_cached("SELECT df FROM recall_df WHERE term = ?1")?;
    terms
        .iter()
        .map(|t| {
            Ok(stmt
                .query_row([t], |r| r.get::<_, i64>(0))
                .optional()?
                .unwrap_or(0)
                .max(0) as f64)
        })
        .collect()
}

/// The `limit` entries where `term` has the highest impact, best first.
pub fn top_postings(
    conn: &Connection,
    term: &str,
    limit: usize,
) -> rusqlite::Result<Vec<(i64, f64)>> {
    let mut stmt = conn.prepare_cached(
        "SELECT entry_rowid, impact FROM recall_postings WHERE term = ?1 ORDER BY impact DESC LIMIT ?2",
    )?;
    let rows = stmt.query_map(params![term, limit as i64], |r| Ok((r.get(0)?, r.get(1)?)))?;
    rows.collect()
}

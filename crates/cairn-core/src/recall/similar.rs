//! Near-duplicates of an entry among the accepted entries, so a reviewer can merge a proposal
//! into what the corpus already says instead of accepting it twice.
//!
//! Two measures, each reported on its own:
//!
//! * **lexical**: cosine of TF-IDF vectors over the entries' analysed terms (title, body and
//!   trigger, as the index stores them; `idf = ln(1 + N / df)` from the index's document
//!   frequencies). Candidates come from the BM25F ranker queried with the entry's own title and
//!   body (its first [`super::analyze::MAX_QUERY_TERMS`] terms), so the work does not grow with
//!   the corpus.
//! * **semantic**: cosine of the stored sentence vectors, when the entry has one under the
//!   configured embedder's fingerprint (vectors of an edited text are dropped by trigger, so a
//!   stale vector is never compared). Every accepted entry's vector is compared (a brute-force
//!   scan, as vector search does).
//!
//! An entry is a near-duplicate when either measure reaches its threshold ([`LEXICAL_MIN`],
//! [`SEMANTIC_MIN`]); the strongest few are returned.

use std::collections::{BTreeMap, HashMap};

use rusqlite::{Connection, OptionalExtension};
use serde::{Deserialize, Serialize};

use super::model::{EntryType, ReviewState};
use super::store::Filters;
use crate::error::Result;
use crate::semantic::vectors::{recall_vector, recall_vectors};

/// Lexical cosine at or above which two entries are flagged.
pub const LEXICAL_MIN: f64 = 0.5;
/// Vector cosine at or above which two entries are flagged (all-MiniLM-L6-v2 puts paraphrases
/// of one statement above it and different statements about one topic below).
pub const SEMANTIC_MIN: f64 = 0.85;
/// Candidates read from each measure.
const CANDIDATES: usize = 20;
/// Near-duplicates returned at most.
pub const MAX_DUPLICATES: usize = 5;

/// An accepted entry that says nearly the same thing.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct NearDuplicate {
    pub id: String,
    pub title: String,
    #[serde(rename = "type")]
    pub entry_type: EntryType,
    pub review_state: ReviewState,
    pub trusted: bool,
    /// TF-IDF cosine over analysed terms, 0..=1.
    pub lexical: f64,
    /// Cosine of the sentence vectors, when both entries have one.
    pub semantic: Option<f64>,
}

impl NearDuplicate {
    /// The stronger of the two measures.
    pub fn similarity(&self) -> f64 {
        self.lexical.max(self.semantic.unwrap_or(0.0))
    }
}

/// How near-duplicates were found, in a reader's words (the measures are this module's).
pub fn basis(semantic: bool) -> String {
    if semantic {
        format!("by their words (similarity ≥ {LEXICAL_MIN}) or their meaning (≥ {SEMANTIC_MIN})")
    } else {
        format!(
            "by their words only (similarity ≥ {LEXICAL_MIN}): meaning needs vectors, not built for this entry"
        )
    }
}

/// The analysed terms of an entry's title, body and trigger, with their counts.
fn term_counts(conn: &Connection, rowid: i64) -> rusqlite::Result<HashMap<String, f64>> {
    let fields: Option<[String; 3]> = conn
        .prepare_cached("SELECT title, body, trigger FROM recall_terms WHERE entry_rowid = ?1")?
        .query_row([rowid], |r| Ok([r.get(0)?, r.get(1)?, r.get(2)?]))
        .optional()?;
    let mut out = HashMap::new();
    for t in fields
        .iter()
        .flatten()
        .flat_map(|f| f.split(' '))
        .filter(|t| !t.is_empty())
    {
        *out.entry(t.to_owned()).or_insert(0.0) += 1.0;
    }
    Ok(out)
}

/// TF-IDF weights of `counts`, unit length (empty when there are no terms).
fn tfidf(
    conn: &Connection,
    counts: &HashMap<String, f64>,
    docs: f64,
    idf_cache: &mut HashMap<String, f64>,
) -> rusqlite::Result<BTreeMap<String, f64>> {
    let mut df = conn.prepare_cached("SELECT df FROM recall_df WHERE term = ?1")?;
    let mut out = BTreeMap::new();
    for (t, tf) in counts {
        let idf = match idf_cache.get(t) {
            Some(v) => *v,
            None => {
                let d: f64 = df
                    .query_row([t], |r| r.get::<_, i64>(0))
                    .optional()?
                    .unwrap_or(0)
                    .max(1) as f64;
                let v = (1.0 + docs / d).ln();
                idf_cache.insert(t.clone(), v);
                v
            }
        };
        out.insert(t.clone(), tf * idf);
    }
    let norm = out.values().map(|w| w * w).sum::<f64>().sqrt();
    if norm > 0.0 {
        for w in out.values_mut() {
            *w /= norm;
        }
    }
    Ok(out)
}

fn cosine(a: &BTreeMap<String, f64>, b: &BTreeMap<String, f64>) -> f64 {
    a.iter()
        .filter_map(|(t, w)| b.get(t).map(|v| w * v))
        .sum::<f64>()
        .clamp(0.0, 1.0)
}

fn dot(a: &[f32], b: &[f32]) -> f64 {
    a.iter()
        .zip(b)
        .map(|(x, y)| f64::from(*x) * f64::from(*y))
        .sum::<f64>()
}

/// Near-duplicates of entry `id` among the other accepted entries, strongest first. With
/// `vector_fingerprint` (the Recall store fingerprint of the configured embedder), stored vectors
/// are compared too. Returns whether vectors took part.
pub fn near_duplicates(
    conn: &Connection,
    id: &str,
    vector_fingerprint: Option<&str>,
    now_secs: i64,
) -> Result<(Vec<NearDuplicate>, bool)> {
    let db = crate::store::err_in(conn);
    let Some((rowid, title, body, trigger)) = conn
        .prepare_cached("SELECT rowid, title, body, trigger FROM recall_entries WHERE id = ?1")
        .and_then(|mut s| {
            s.query_row([id], |r| {
                Ok((
                    r.get::<_, i64>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, String>(2)?,
                    r.get::<_, String>(3)?,
                ))
            })
            .optional()
        })
        .map_err(db)?
    else {
        return Ok((Vec::new(), false));
    };
    let filters = Filters {
        limit: Some(CANDIDATES as u32 + 1),
        ..Filters::default()
    };
    let query = format!("{title}\n{body}\n{trigger}");
    let mut candidates: BTreeMap<i64, Option<f64>> =
        super::rank::scored(conn, &query, &filters, now_secs, CANDIDATES + 1)?
            .into_iter()
            .map(|s| (s.rowid, None))
            .collect();
    let own_vector = match vector_fingerprint {
        Some(fp) => recall_vector(conn, id, fp)?.map(|v| (fp, v)),
        None => None,
    };
    if let Some((fp, own)) = &own_vector {
        let accepted = super::store::accepted_rowids(conn).map_err(db)?;
        let mut scored: Vec<(i64, f64)> = recall_vectors(conn, fp, own.len())?
            .into_iter()
            .filter(|(other, _)| other != id)
            .filter_map(|(other, v)| accepted.get(&other).map(|&row| (row, dot(own, &v))))
            .collect();
        scored.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        for (row, cos) in scored.into_iter().take(CANDIDATES) {
            candidates.insert(row, Some(cos));
        }
        // Lexical candidates get their cosine too, when they have a vector.
        for (row, cos) in candidates.iter_mut() {
            if cos.is_none()
                && let Some(other) = super::store::head_by_rowid(conn, *row).map_err(db)?
                && let Some(v) = recall_vector(conn, &other.id, fp)?
                && v.len() == own.len()
            {
                *cos = Some(dot(own, &v));
            }
        }
    }
    candidates.remove(&rowid);
    let docs = super::index::stats(conn).map_err(db)?.docs.max(1.0);
    let mut idf = HashMap::new();
    let own_terms =
        tfidf(conn, &term_counts(conn, rowid).map_err(db)?, docs, &mut idf).map_err(db)?;
    let mut out = Vec::new();
    for (row, semantic) in candidates {
        let terms =
            tfidf(conn, &term_counts(conn, row).map_err(db)?, docs, &mut idf).map_err(db)?;
        let lexical = cosine(&own_terms, &terms);
        let semantic = semantic.map(|c| c.clamp(-1.0, 1.0));
        if lexical < LEXICAL_MIN && semantic.is_none_or(|s| s < SEMANTIC_MIN) {
            continue;
        }
        let Some(e) = super::store::head_by_rowid(conn, row).map_err(db)? else {
            continue;
        };
        out.push(NearDuplicate {
            id: e.id,
            title: e.title,
            entry_type: e.entry_type,
            review_state: e.review_state,
            trusted: e.trusted,
            lexical,
            semantic,
        });
    }
    out.sort_by(|a, b| {
        b.similarity()
            .total_cmp(&a.similarity())
            .then_with(|| a.id.cmp(&b.id))
    });
    out.truncate(MAX_DUPLICATES);
    Ok((out, own_vector.is_some()))
}

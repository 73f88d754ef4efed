//! Which words of a session query its any-word pass ranks by: not those held by so many records
//! that FTS5 would score hundreds of thousands of matches for a word that barely moves the
//! ranking (bm25 weighs a word by how rare it is).

use rusqlite::Connection;

use crate::archive::store as archive;

/// A word held by more than this share of the archive's records is left out of the any-word
/// pass. Picked by measurement (bench/RESULTS.md, "common words"): over 109k turns it bounds
/// the pass's matches, and on the 40 MB corpus it leaves the top-5 retrieval where it was.
pub const COMMON_SHARE: f64 = 0.05;

/// The words of `terms` the any-word pass should search for, in their order: each held by at
/// most [`COMMON_SHARE`] of the records, or whose share the index cannot say (a path, an
/// identifier with punctuation). When every word is common, the rarest one alone, so a query of
/// common words still finds records by more than the all-words pass.
pub(super) fn ranking_words(conn: &Connection, terms: &[String]) -> rusqlite::Result<Vec<String>> {
    let mut shares = Vec::with_capacity(terms.len());
    for t in terms {
        shares.push(archive::record_share(conn, t)?);
    }
    let kept: Vec<String> = terms
        .iter()
        .zip(&shares)
        .filter(|(_, share)| share.is_none_or(|s| s <= COMMON_SHARE))
        .map(|(t, _)| t.clone())
        .collect();
    if !kept.is_empty() {
        return Ok(kept);
    }
    let rarest = terms
        .iter()
        .zip(&shares)
        .min_by(|a, b| {
            let (a, b) = (a.1.unwrap_or(0.0), b.1.unwrap_or(0.0));
            a.total_cmp(&b)
        })
        .map(|(t, _)| t.clone());
    Ok(rarest.into_iter().collect())
}

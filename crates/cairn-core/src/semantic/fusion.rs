//! Reciprocal Rank Fusion: `score(d) = Σ over rankings 1 / (k + rank(d))`, ranks 1-based,
//! k = 60 (the constant of the original paper, and AgentsView's). Only ranks matter, so a
//! BM25F score and a cosine need no calibration against each other. Ties break by key.

use std::collections::HashMap;
use std::hash::Hash;

pub const RRF_K: f64 = 60.0;

/// One fused item: its score and its 1-based rank in each input ranking (None when absent).
#[derive(Debug, Clone, PartialEq)]
pub struct Fused<K> {
    pub key: K,
    pub score: f64,
    pub ranks: Vec<Option<u32>>,
}

/// Fuse rankings (each best first, keys unique within a ranking). Output best first; equal
/// scores ordered by ascending key.
pub fn rrf<K: Clone + Eq + Hash + Ord>(rankings: &[Vec<K>]) -> Vec<Fused<K>> {
    let mut by_key: HashMap<K, Fused<K>> = HashMap::new();
    for (leg, ranking) in rankings.iter().enumerate() {
        for (i, key) in ranking.iter().enumerate() {
            let f = by_key.entry(key.clone()).or_insert_with(|| Fused {
                key: key.clone(),
                score: 0.0,
                ranks: vec![None; rankings.len()],
            });
            if f.ranks[leg].is_none() {
                let rank = i as u32 + 1;
                f.ranks[leg] = Some(rank);
                f.score += 1.0 / (RRF_K + f64::from(rank));
            }
        }
    }
    let mut out: Vec<Fused<K>> = by_key.into_values().collect();
    out.sort_by(|a, b| b.score.total_cmp(&a.score).then_with(|| a.key.cmp(&b.key)));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fuses_by_rank_and_breaks_ties_by_key() {
        let lexical = vec!["a", "b", "c"];
        let vector = vec!["c", "b", "d"];
        let f = rrf(&[lexical, vector]);
        let keys: Vec<&str> = f.iter().map(|x| x.key).collect();
        // b: 1/62 + 1/62; a and c: 1/61 + (c: 1/63); d: 1/63.
        assert_eq!(keys, vec!["c", "b", "a", "d"]);
        assert!((f[1].score - 2.0 / 62.0).abs() < 1e-12);
        assert_eq!(f[0].ranks, vec![Some(3), Some(1)]);
        assert_eq!(f[3].ranks, vec![None, Some(3)]);
        // Same ranks in mirrored legs: equal scores, ascending key.
        let f = rrf(&[vec!["y", "x"], vec!["x", "y"]]);
        assert_eq!(f[0].key, "x");
        assert_eq!(f[0].score, f[1].score);
    }

    #[test]
    fn a_key_repeated_within_one_ranking_counts_once() {
        let f = rrf(&[vec![1, 1, 2]]);
        assert_eq!(f.len(), 2);
        assert!((f[0].score - 1.0 / 61.0).abs() < 1e-12);
    }
}

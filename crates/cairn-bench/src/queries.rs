//! Archive search queries the way people type them: one to three distinctive words. Words are
//! drawn from the real transcripts' vocabulary between frequency ranks 30 and 3000 (the very
//! commonest words are what nobody searches for; the rarest may not occur in a generated corpus).

use crate::rng::Rng;
use crate::vocab::Vocab;

pub fn search_queries(vocab: &Vocab, seed: u64, n: usize) -> Vec<String> {
    let ranked = vocab.ranked();
    let lo = 30.min(ranked.len().saturating_sub(1));
    let hi = 3000.min(ranked.len());
    let pool: Vec<&str> = ranked[lo..hi.max(lo + 1)]
        .iter()
        .copied()
        .filter(|w| w.len() >= 3 && !w.chars().all(|c| c.is_ascii_digit()))
        .collect();
    let mut rng = Rng::new(seed ^ 0x5EA4C4);
    (0..n)
        .map(|_| {
            let words = match rng.below(10) {
                0..=4 => 1,
                5..=8 => 2,
                _ => 3,
            };
            (0..words)
                .map(|_| pool[rng.below(pool.len())])
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect()
}

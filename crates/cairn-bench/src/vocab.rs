//! Words with their frequencies, taken from the real transcripts in `tests/fixtures/`, so
//! generated text has the word distribution of real agent sessions.

use std::collections::HashMap;
use std::path::Path;

use crate::rng::Rng;

pub struct Vocab {
    words: Vec<String>,
    /// Cumulative frequencies, for sampling in proportion to use.
    cumulative: Vec<u64>,
}

impl Vocab {
    /// Count the words of every `.jsonl` file under `dir`.
    pub fn from_fixtures(dir: &Path) -> anyhow::Result<Vocab> {
        let mut counts: HashMap<String, u64> = HashMap::new();
        for entry in std::fs::read_dir(dir)? {
            let path = entry?.path();
            if path.extension().is_some_and(|e| e == "jsonl") {
                let text = std::fs::read_to_string(&path)?;
                for word in text
                    .split(|c: char| !c.is_alphanumeric() && c != '_')
                    .filter(|w| w.len() > 1 && w.len() < 24)
                {
                    *counts.entry(word.to_lowercase()).or_insert(0) += 1;
                }
            }
        }
        let mut pairs: Vec<(String, u64)> = counts.into_iter().collect();
        pairs.sort();
        let mut total = 0;
        let mut words = Vec::with_capacity(pairs.len());
        let mut cumulative = Vec::with_capacity(pairs.len());
        for (w, c) in pairs {
            total += c;
            words.push(w);
            cumulative.push(total);
        }
        anyhow::ensure!(!words.is_empty(), "no words found under {}", dir.display());
        Ok(Vocab { words, cumulative })
    }

    pub fn word(&self, rng: &mut Rng) -> &str {
        let total = self.cumulative.last().copied().unwrap_or(1);
        let target = rng.next_u64() % total;
        let i = self.cumulative.partition_point(|c| *c <= target);
        &self.words[i.min(self.words.len() - 1)]
    }

    pub fn sentence(&self, rng: &mut Rng, lo: usize, hi: usize) -> String {
        let n = rng.range(lo, hi);
        (0..n).map(|_| self.word(rng)).collect::<Vec<_>>().join(" ")
    }
}

impl Vocab {
    /// Words from most to least frequent.
    pub fn ranked(&self) -> Vec<&str> {
        let mut counts: Vec<(u64, &str)> = self
            .cumulative
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let prev = if i == 0 { 0 } else { self.cumulative[i - 1] };
                (c - prev, self.words[i].as_str())
            })
            .collect();
        counts.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(b.1)));
        counts.into_iter().map(|(_, w)| w).collect()
    }
}

//! Recall entries for ranking benchmarks: titles, bodies and triggers drawn from the real word
//! distribution, and queries made the way people ask (a few words of an entry, a few others).

use crate::rng::Rng;
use crate::vocab::Vocab;

pub struct GenEntry {
    pub title: String,
    pub body: String,
    pub trigger: String,
}

pub fn entries(vocab: &Vocab, seed: u64, n: usize) -> Vec<GenEntry> {
    let mut rng = Rng::new(seed);
    (0..n)
        .map(|_| GenEntry {
            title: vocab.sentence(&mut rng, 4, 10),
            body: vocab.sentence(&mut rng, 20, 80),
            trigger: if rng.chance(0.5) {
                vocab.sentence(&mut rng, 5, 12)
            } else {
                String::new()
            },
        })
        .collect()
}

/// Queries: three to six words taken from a random entry, plus up to two unrelated words.
pub fn queries(vocab: &Vocab, entries: &[GenEntry], seed: u64, n: usize) -> Vec<String> {
    let mut rng = Rng::new(seed ^ 0xABCD);
    (0..n)
        .map(|_| {
            let e = &entries[rng.below(entries.len())];
            let words: Vec<&str> = e.title.split(' ').chain(e.body.split(' ')).collect();
            let mut q: Vec<String> = (0..rng.range(3, 6))
                .map(|_| words[rng.below(words.len())].to_owned())
                .collect();
            for _ in 0..rng.below(3) {
                q.push(vocab.word(&mut rng).to_owned());
            }
            q.join(" ")
        })
        .collect()
}

//! Fresh text of a given length that reads like what agents write and tools print: runs of
//! words drawn by frequency from the real transcripts, mixed with windows of real tool output
//! and prose (code, logs, paths, escapes), broken into lines. Now and then a planted fake
//! credential, so the redactor meets secrets at a low, realistic rate.

use crate::rng::Rng;
use crate::vocab::Vocab;

/// One generated string in this many carries a planted fake secret.
const SECRET_EVERY: u64 = 4000;

pub struct TextGen {
    vocab: Vocab,
    /// Long real strings from the fixtures, concatenated (windows are sampled from it).
    pool: String,
}

impl TextGen {
    pub fn new(vocab: Vocab, pool: String) -> TextGen {
        TextGen { vocab, pool }
    }

    pub fn vocab(&self) -> &Vocab {
        &self.vocab
    }

    /// About `len` bytes of text (never more; at most a few bytes less at a char boundary).
    pub fn text(&self, rng: &mut Rng, len: usize) -> String {
        let mut out = String::with_capacity(len + 32);
        if rng.next_u64().is_multiple_of(SECRET_EVERY) && len > 80 {
            out.push_str("export AWS_ACCESS_KEY_ID=AKIA");
            for _ in 0..16 {
                let c = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"[rng.below(32)];
                out.push(c as char);
            }
            out.push('\n');
        }
        while out.len() < len {
            let want = len - out.len();
            if !self.pool.is_empty() && rng.chance(0.4) {
                let n = want.min(rng.range(48, 1024));
                self.window(rng, n, &mut out);
            } else {
                let words = rng.range(4, 16);
                for i in 0..words {
                    if i > 0 {
                        out.push(' ');
                    }
                    out.push_str(self.vocab.word(rng));
                    if out.len() >= len {
                        break;
                    }
                }
                out.push(if rng.chance(0.7) { '\n' } else { ' ' });
            }
        }
        cut(&mut out, len);
        out
    }

    fn window(&self, rng: &mut Rng, n: usize, out: &mut String) {
        let pool = self.pool.as_str();
        let mut start = rng.below(pool.len().saturating_sub(n).max(1));
        while !pool.is_char_boundary(start) {
            start -= 1;
        }
        let mut end = (start + n).min(pool.len());
        while !pool.is_char_boundary(end) {
            end -= 1;
        }
        out.push_str(&pool[start..end]);
    }
}

/// Truncate to at most `len` bytes at a char boundary.
pub fn cut(s: &mut String, len: usize) {
    if s.len() > len {
        let mut end = len;
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        s.truncate(end);
    }
}

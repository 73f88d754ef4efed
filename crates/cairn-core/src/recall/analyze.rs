//! The one analyzer Recall uses: for the full-text index (candidates) and for the BM25F scorer,
//! so a term that finds a candidate is the term that scores it.
//!
//! Text → terms:
//! 1. Split into runs of letters, digits and the identifier joiners `_ - . /` (so
//!    `src/recall/rank.rs`, `snake_case`, `kebab-case` and `pkg.Func` stay together at first).
//! 2. Split each run on the joiners and on lower→upper case changes (`parseJSONLine` → parse,
//!    json, line). A run that splits emits its parts *and* the whole identifier (joiners folded to
//!    `_`), so an exact identifier matches strongly and its parts still match.
//! 3. Fold: NFKD, combining marks removed, lower-cased (`Café` → `cafe`).
//! 4. CJK (Han, Kana, Hangul) has no spaces: overlapping character bigrams (the archive's
//!    full-text index splits them alike: `archive::store::cjk_pairs`).
//! 5. Stem English words with Snowball (`fixing`, `fixed` → `fix`); words with digits and
//!    identifiers are not stemmed.
//! 6. Drop stop words, including the boilerplate of questions as people type them ("how did we
//!    …", "what is the …"), so natural-language questions reduce to their content words.

use std::sync::OnceLock;

use rust_stemmers::{Algorithm, Stemmer};
use unicode_normalization::UnicodeNormalization;
use unicode_normalization::char::is_combining_mark;

use crate::archive::store::{cjk_pairs, is_cjk};

/// Terms longer than this are not indexed (base64 blobs, minified code).
const MAX_TERM_CHARS: usize = 64;
/// A query keeps at most this many distinct terms (the rarest matter most; see rank).
pub const MAX_QUERY_TERMS: usize = 24;

pub struct Analyzer {
    stemmer: Stemmer,
}

const STOP_WORDS: &[&str] = &[
    "a",
    "about",
    "above",
    "after",
    "again",
    "all",
    "also",
    "am",
    "an",
    "and",
    "any",
    "are",
    "as",
    "at",
    "be",
    "because",
    "been",
    "before",
    "being",
    "below",
    "between",
    "both",
    "but",
    "by",
    "can",
    "could",
    "did",
    "do",
    "does",
    "doing",
    "done",
    "down",
    "during",
    "each",
    "else",
    "ever",
    "few",
    "for",
    "from",
    "further",
    "get",
    "got",
    "had",
    "has",
    "have",
    "having",
    "he",
    "her",
    "here",
    "hers",
    "him",
    "his",
    "how",
    "i",
    "if",
    "in",
    "into",
    "is",
    "it",
    "its",
    "itself",
    "just",
    "know",
    "let",
    "me",
    "might",
    "more",
    "most",
    "much",
    "must",
    "my",
    "no",
    "nor",
    "not",
    "now",
    "of",
    "off",
    "on",
    "once",
    "one",
    "only",
    "or",
    "other",
    "our",
    "ours",
    "out",
    "over",
    "own",
    "please",
    "same",
    "shall",
    "she",
    "should",
    "so",
    "some",
    "such",
    "tell",
    "than",
    "that",
    "the",
    "their",
    "theirs",
    "them",
    "then",
    "there",
    "these",
    "they",
    "thing",
    "things",
    "this",
    "those",
    "through",
    "to",
    "too",
    "under",
    "until",
    "up",
    "us",
    "very",
    "was",
    "way",
    "we",
    "were",
    "what",
    "whats",
    "when",
    "where",
    "which",
    "while",
    "who",
    "whom",
    "why",
    "will",
    "with",
    "would",
    "you",
    "your",
    "yours",
    "yourself",
    "remember",
    "again",
    "anything",
    "something",
    "somewhere",
    "use",
    "used",
    "using",
    "want",
    "need",
    "needs",
    "there's",
    "it's",
    "we've",
    "didn't",
    "don't",
    "doesn't",
    "isn't",
];

impl Analyzer {
    pub fn global() -> &'static Analyzer {
        static A: OnceLock<Analyzer> = OnceLock::new();
        A.get_or_init(|| Analyzer {
            stemmer: Stemmer::create(Algorithm::English),
        })
    }

    /// Every term of `text`, in order (stop words removed). Used to index and to count.
    pub fn terms(&self, text: &str) -> Vec<String> {
        let mut out = Vec::new();
        self.each_term(text, &mut |t| out.push(t));
        out
    }

    /// The distinct terms of a query, in first-seen order, at most [`MAX_QUERY_TERMS`].
    pub fn query_terms(&self, text: &str) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        self.each_term(text, &mut |t| {
            if !out.contains(&t) && out.len() < MAX_QUERY_TERMS {
                out.push(t);
            }
        });
        out
    }

    fn each_term(&self, text: &str, emit: &mut dyn FnMut(String)) {
        for run in runs(text) {
            if run.chars().any(is_cjk) {
                cjk_terms(&run, emit);
                continue;
            }
            let parts = split_identifier(&run);
            let multi = parts.len() > 1;
            for part in &parts {
                if let Some(t) = self.word(part) {
                    emit(t);
                }
            }
            if multi {
                let whole: String = fold(&run)
                    .chars()
                    .map(|c| if matches!(c, '-' | '.' | '/') { '_' } else { c })
                    .collect::<String>()
                    .trim_matches('_')
                    .to_owned();
                if whole.chars().count() <= MAX_TERM_CHARS && whole.contains('_') {
                    emit(whole);
                }
            }
        }
    }

    /// One word part: folded, stemmed when it is an English word, dropped when a stop word.
    fn word(&self, part: &str) -> Option<String> {
        let folded = fold(part);
        if folded.is_empty() || folded.chars().count() > MAX_TERM_CHARS {
            return None;
        }
        if STOP_WORDS.contains(&folded.as_str()) {
            return None;
        }
        // Single letters carry nothing; short technical words (go, js, ts, py, rs, id) do.
        if folded.chars().count() == 1 && !folded.chars().all(|c| c.is_ascii_digit()) {
            return None;
        }
        if folded.chars().all(|c| c.is_alphabetic()) && folded.chars().count() > 3 {
            Some(self.stemmer.stem(&folded).into_owned())
        } else {
            Some(folded)
        }
    }
}

/// Runs of letters, digits and identifier joiners; joiners at the edges are trimmed.
fn runs(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    for c in text.chars() {
        if c.is_alphanumeric() || matches!(c, '_' | '-' | '.' | '/') {
            cur.push(c);
        } else if !cur.is_empty() {
            out.push(std::mem::take(&mut cur));
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out.into_iter()
        .map(|r| {
            r.trim_matches(|c| matches!(c, '_' | '-' | '.' | '/'))
                .to_owned()
        })
        .filter(|r| !r.is_empty())
        .collect()
}

/// Split on joiners and on case changes (`parseJSONLine` → `parse`, `JSON`, `Line`).
fn split_identifier(run: &str) -> Vec<String> {
    let mut parts = Vec::new();
    for piece in run.split(['_', '-', '.', '/']).filter(|p| !p.is_empty()) {
        let chars: Vec<char> = piece.chars().collect();
        let mut start = 0;
        for i in 1..chars.len() {
            let (prev, cur) = (chars[i - 1], chars[i]);
            let next_lower = chars.get(i + 1).is_some_and(|n| n.is_lowercase());
            let boundary = (prev.is_lowercase() && cur.is_uppercase())
                || (prev.is_uppercase() && cur.is_uppercase() && next_lower);
            if boundary {
                parts.push(chars[start..i].iter().collect());
                start = i;
            }
        }
        parts.push(chars[start..].iter().collect());
    }
    parts
}

/// NFKD, combining marks removed, lower-cased.
pub fn fold(s: &str) -> String {
    s.nfkd()
        .filter(|c| !is_combining_mark(*c))
        .flat_map(char::to_lowercase)
        .collect()
}

/// CJK runs as overlapping bigrams (a lone character as itself), as the archive's full-text
/// index splits them ([`cjk_pairs`]); non-CJK parts of the run are analysed as ordinary words
/// would be.
fn cjk_terms(run: &str, emit: &mut dyn FnMut(String)) {
    let mut chunk: Vec<char> = Vec::new();
    let mut other = String::new();
    let flush_cjk = |chunk: &mut Vec<char>, emit: &mut dyn FnMut(String)| {
        cjk_pairs(chunk, emit);
        chunk.clear();
    };
    for c in run.chars() {
        if is_cjk(c) {
            if !other.is_empty() {
                for t in Analyzer::global().terms(&std::mem::take(&mut other)) {
                    emit(t);
                }
            }
            chunk.push(c);
        } else {
            flush_cjk(&mut chunk, emit);
            other.push(c);
        }
    }
    flush_cjk(&mut chunk, emit);
    if !other.is_empty() {
        for t in Analyzer::global().terms(&other) {
            emit(t);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn terms(s: &str) -> Vec<String> {
        Analyzer::global().terms(s)
    }

    #[test]
    fn stems_and_drops_stop_words() {
        assert_eq!(
            terms("How did we fix the flaky login tests?"),
            vec!["fix", "flaki", "login", "test"]
        );
        assert_eq!(terms("fixing fixed fixes"), vec!["fix", "fix", "fix"]);
    }

    #[test]
    fn identifiers_split_and_keep_their_whole() {
        assert_eq!(terms("snake_case"), vec!["snake", "case", "snake_case"]);
        assert_eq!(terms("parseJSONLine"), vec!["pars", "json", "line"]);
        assert_eq!(
            terms("src/recall/rank.rs"),
            vec!["src", "recal", "rank", "rs", "src_recall_rank_rs"]
        );
        assert_eq!(terms("kebab-case"), vec!["kebab", "case", "kebab_case"]);
        assert_eq!(terms("sqlite_vec"), vec!["sqlite", "vec", "sqlite_vec"]);
        assert_eq!(terms("sha256 and utf8"), vec!["sha256", "utf8"]);
    }

    #[test]
    fn folds_case_and_diacritics() {
        assert_eq!(terms("Café RÉSUMÉ"), terms("cafe resume"));
        assert_eq!(fold("Straße"), "straße");
    }

    #[test]
    fn cjk_becomes_bigrams() {
        assert_eq!(terms("数据库连接"), vec!["数据", "据库", "库连", "连接"]);
        assert_eq!(
            terms("使用 sqlite 数据库"),
            vec!["使用", "sqlite", "数据", "据库"]
        );
    }

    #[test]
    fn short_technical_terms_survive() {
        assert_eq!(
            terms("go js ts py rs id a"),
            vec!["go", "js", "ts", "py", "rs", "id"]
        );
    }

    #[test]
    fn query_terms_are_distinct_and_capped() {
        let many: String = (0..100).map(|i| format!("word{i} ")).collect();
        assert_eq!(Analyzer::global().query_terms(&many).len(), MAX_QUERY_TERMS);
        assert_eq!(
            Analyzer::global().query_terms("test tests testing"),
            vec!["test"]
        );
    }
}

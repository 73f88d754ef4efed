//! The terms the full-text index holds after a column's own tokens: the words inside a run of
//! Chinese, Japanese or Korean text, a word glued to such a run, and emoji.
//!
//! The index's tokenizer (`unicode61`) reads a run of CJK characters with no space in it as one
//! token (`我们修复了登录错误` is one, and so is `启动app时确保环境变量`) and an emoji as a
//! separator, so no search for `登录`, `app` or `🚀` found them. A tokenizer of Cairn's own would
//! mend that only for the connections that register it: every other reader of the archive (a
//! hook, the MCP server, the desktop, an older build reading a newer archive, the sqlite3 shell)
//! would fail on the table with `no such tokenizer`. So the tokenizer stays, and each column is
//! indexed as its stored form, a space, then a tail of plain terms ([`tail`]), one group for each
//! word that needs one, in the text's order:
//!
//! - a word holding a CJK character: its CJK runs as overlapping pairs of characters (a run of
//!   one character as itself, [`cjk_pairs`]) and its other runs as they are, so `启动app时` is
//!   `启动 app 时`;
//! - a run of emoji: one term per emoji (`🚀` is `emoji1f680`), skin tones kept, joiners and
//!   variation selectors left out;
//! - between two groups, [`GROUP_BREAK`], a term no query asks for: a phrase never runs from one
//!   word's group into the next one's.
//!
//! The stored tokens keep their positions, which the index's snippets read back from the stored
//! text; the tail's have no place in it. Every reader keeps working: the tail is terms of the same
//! tokenizer, and a phrase of Cairn's finds them ([`in_index_terms`]: any two or more CJK
//! characters in a row of a word are a run of consecutive pairs in its group), ranked by bm25
//! with the others. The snippet of a record with a tail is cut here ([`Needles`]).
//!
//! A CJK search asks the tail alone, never the stored tokens, even for a word of one or two
//! characters that stands alone: where the tokenizer ends a token is its character tables' call,
//! and those are older than many emoji (it reads `🤖` or a skin tone as a letter, glued to the
//! word beside it), so the words here ([`pieces`]) are near its tokens, not always equal to them.
//! The tail and the query are cut by this module alike, which is all a match needs.

use std::borrow::Cow;

use unicode_normalization::UnicodeNormalization;
use unicode_normalization::char::is_combining_mark;

use super::super::{MATCH_END, MATCH_START};

/// The term between two groups of a tail: a private-use character (the tokenizer keeps those as
/// letters), next to the snippets' match marks; no text a person types holds it, and a query's
/// phrase that does reads it as a space ([`in_index_terms`]).
pub const GROUP_BREAK: char = '\u{E002}';

/// Whether `c` is a Han, Kana or Hangul character: scripts written without spaces between words,
/// whose runs the index reads as one token. Recall's analyzer splits the same characters.
pub fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x3040..=0x30FF      // Hiragana, Katakana
        | 0x3400..=0x4DBF    // CJK Extension A
        | 0x4E00..=0x9FFF    // CJK Unified Ideographs
        | 0xAC00..=0xD7AF    // Hangul syllables
        | 0xF900..=0xFAFF    // CJK compatibility
        | 0x20000..=0x2FA1F) // Extensions B+
}

/// A run of CJK characters as the terms that find any part of it: its overlapping pairs in order
/// (`数据库` → `数据`, `据库`), or a lone character as itself. Two or more characters in a row of
/// the run are the pairs in a row of it; one character alone is found only where it stands alone.
pub fn cjk_pairs(run: &[char], emit: &mut dyn FnMut(String)) {
    match run {
        [] => {}
        [one] => emit(one.to_string()),
        _ => {
            for pair in run.windows(2) {
                emit(pair.iter().collect());
            }
        }
    }
}

/// Whether `c` is an emoji (a character of the emoji and pictograph blocks that is no letter or
/// digit). The tokenizer reads most as separators, and those newer than its tables as letters
/// glued to the word beside; either way the tail holds a term of each, which a search asks.
fn is_emoji(c: char) -> bool {
    matches!(c as u32,
        0x1F000..=0x1FAFF    // pictographs, emoticons, transport, flags, skin tones
        | 0x2600..=0x27BF    // miscellaneous symbols, dingbats (✅ ❤ ✨)
        | 0x2300..=0x23FF    // technical (⌚ ⏰)
        | 0x2B00..=0x2BFF)   // arrows and shapes (⭐ ⬛)
        && !c.is_alphanumeric()
}

/// What joins or varies emoji without being one: the zero-width joiner, variation selectors, the
/// keycap and the tag characters of subdivision flags. Inside a run of emoji it keeps the run
/// whole and is no term.
fn is_emoji_joiner(c: char) -> bool {
    matches!(
        c as u32,
        0x200D | 0xFE0E | 0xFE0F | 0x20E3 | 0xE0020..=0xE007F
    )
}

/// Whether `c` is part of an emoji as the tail reads them: an emoji, or what joins or varies
/// one. A search's words keep these where they trim punctuation.
pub fn is_emoji_part(c: char) -> bool {
    is_emoji(c) || is_emoji_joiner(c)
}

/// Whether the tokenizer keeps `c` inside a word, near enough: letters, digits, combining marks
/// and the CJK characters (whose punctuation it splits at, in the tail's terms as in the query's
/// alike).
fn is_word_char(c: char) -> bool {
    c.is_alphanumeric() || is_cjk(c) || is_combining_mark(c)
}

/// A piece of text the tail reads: a word, or a run of emoji.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Piece<'a> {
    Word(&'a str),
    Emoji(&'a str),
}

/// Each word and run of emoji of `text`, in order, with the byte offset it starts at.
fn pieces(text: &str) -> Vec<(Piece<'_>, usize)> {
    let mut out = Vec::new();
    each_piece(text, |piece, at| out.push((piece, at)));
    out
}

/// [`pieces`] handed to `f` one by one (a tool's output may hold a million words).
fn each_piece<'a>(text: &'a str, mut f: impl FnMut(Piece<'a>, usize)) {
    // The current piece: where it started and whether it is a run of emoji.
    let mut open: Option<(usize, bool)> = None;
    let mut close = |open: Option<(usize, bool)>, end: usize| {
        if let Some((start, emoji)) = open {
            let s = &text[start..end];
            f(
                if emoji {
                    Piece::Emoji(s)
                } else {
                    Piece::Word(s)
                },
                start,
            );
        }
    };
    for (at, c) in text.char_indices() {
        let kind = if is_emoji(c) || (open.is_some_and(|o| o.1) && is_emoji_joiner(c)) {
            Some(true)
        } else if is_word_char(c) {
            Some(false)
        } else {
            None
        };
        match (open, kind) {
            (Some((_, was)), Some(now)) if was == now => {}
            (_, Some(now)) => {
                close(open, at);
                open = Some((at, now));
            }
            (_, None) => {
                close(open, at);
                open = None;
            }
        }
    }
    close(open, text.len());
}

/// Whether a word holds a CJK character.
fn holds_cjk(word: &str) -> bool {
    word.chars().any(is_cjk)
}

/// The runs of a word: each maximal stretch of CJK characters or of others, with whether it is
/// CJK and the byte offset in the word it starts at.
fn runs(word: &str) -> Vec<(&str, bool, usize)> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut cjk = None;
    for (at, c) in word.char_indices() {
        let now = is_cjk(c);
        if cjk.is_some_and(|was| was != now) {
            out.push((&word[start..at], !now, start));
            start = at;
        }
        cjk = Some(now);
    }
    if let Some(was) = cjk {
        out.push((&word[start..], was, start));
    }
    out
}

/// A word holding CJK as its group's terms: the pairs of its CJK runs, its other runs whole.
fn word_terms(word: &str, out: &mut Vec<String>) {
    for (run, cjk, _) in runs(word) {
        if cjk {
            let chars: Vec<char> = run.chars().collect();
            cjk_pairs(&chars, &mut |t| out.push(t));
        } else {
            out.push(run.to_owned());
        }
    }
}

/// A run of emoji as its group's terms: `emoji` and each one's code point in hex.
fn emoji_terms(run: &str, out: &mut Vec<String>) {
    out.extend(
        run.chars()
            .filter(|&c| is_emoji(c))
            .map(|c| format!("emoji{:x}", c as u32)),
    );
}

/// The group of terms a piece adds to the tail, if any (see the module's comment).
fn group(piece: Piece<'_>) -> Option<Vec<String>> {
    let mut terms = Vec::new();
    match piece {
        Piece::Word(w) if holds_cjk(w) => word_terms(w, &mut terms),
        Piece::Emoji(e) => emoji_terms(e, &mut terms),
        Piece::Word(_) => return None,
    }
    (!terms.is_empty()).then_some(terms)
}

/// The tail of a column whose indexed form is `indexed`: its groups in order, [`GROUP_BREAK`]
/// between two; `None` when no word or emoji of it needs one (all ASCII text, most of all).
pub fn tail(indexed: &str) -> Option<String> {
    if indexed.is_ascii() {
        return None;
    }
    let mut out = String::new();
    each_piece(indexed, |piece, _| {
        let Some(terms) = group(piece) else { return };
        if !out.is_empty() {
            out.push(' ');
            out.push(GROUP_BREAK);
            out.push(' ');
        }
        out.push_str(&terms.join(" "));
    });
    (!out.is_empty()).then_some(out)
}

/// Whether `text` holds anything a tail is made of: a CJK character or an emoji. Read a byte at
/// a time (a search asks it of every record it shows, tool outputs of a megabyte among them):
/// each of those characters is three or four bytes long in UTF-8, led by one of a few bytes, and
/// only a character so led is decoded.
pub fn has_tail_terms(text: &str) -> bool {
    let bytes = text.as_bytes();
    let led = |b: &u8| matches!(b, 0xE2..=0xED | 0xEF | 0xF0);
    let mut at = 0;
    while let Some(i) = bytes[at..].iter().position(led) {
        // A leading byte starts a character: `at + i` is a boundary.
        let Some(c) = text[at + i..].chars().next() else {
            return false;
        };
        if is_cjk(c) || is_emoji(c) {
            return true;
        }
        at += i + c.len_utf8();
    }
    false
}

/// The phrases the text of one query phrase is searched as, in the index's terms; `None` when it
/// holds no CJK character, emoji or [`GROUP_BREAK`] (it is searched as written). Otherwise one
/// phrase of the tail's terms when it is one word or one run of emoji, else one for each word and
/// run of it (all of them must match, in any order: a word's group and the next word's are never
/// next to each other in the tail, and a stored token never next to a group).
pub fn phrase_terms(body: &str) -> Option<Vec<String>> {
    if body.is_ascii() {
        return None;
    }
    let mut groups: Vec<String> = Vec::new();
    let mut any_tail = body.contains(GROUP_BREAK);
    for (piece, _) in pieces(body) {
        let terms = match piece {
            Piece::Word(w) if holds_cjk(w) => {
                any_tail = true;
                let mut t = Vec::new();
                word_terms(w, &mut t);
                t
            }
            Piece::Word(w) => vec![w.to_owned()],
            Piece::Emoji(e) => {
                any_tail = true;
                let mut t = Vec::new();
                emoji_terms(e, &mut t);
                t
            }
        };
        groups.push(terms.join(" "));
    }
    if !any_tail {
        return None;
    }
    if groups.is_empty() {
        groups.push(String::new());
    }
    Some(groups)
}

/// `body` as an FTS5 string.
fn quoted(body: &str) -> String {
    format!("\"{}\"", body.replace('"', "\"\""))
}

/// One string of an FTS5 expression: a quoted phrase or a bareword.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Part<'a> {
    /// A quoted phrase as written, quotes included (its text: [`unquoted`]).
    Quoted(&'a str),
    /// A bareword: ASCII letters, digits and `_`, and any character outside ASCII.
    Bare(&'a str),
    /// Anything else: white space, brackets, `:`, `*`, `^`, `+`, `,`, or an unclosed quote and
    /// the rest after it.
    Other(&'a str),
}

/// The parts of an FTS5 expression, in order; concatenated, they are the expression.
fn parts(expr: &str) -> Vec<Part<'_>> {
    let bare = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '\u{1a}' || !c.is_ascii();
    let mut out = Vec::new();
    let mut rest = expr;
    while let Some(c) = rest.chars().next() {
        let len = if c == '"' {
            // The phrase ends at a quote that is not doubled.
            let b = rest.as_bytes();
            let mut i = 1;
            let mut end = None;
            while i < b.len() {
                if b[i] == b'"' {
                    if b.get(i + 1) == Some(&b'"') {
                        i += 2;
                        continue;
                    }
                    end = Some(i + 1);
                    break;
                }
                i += 1;
            }
            match end {
                Some(end) => {
                    out.push(Part::Quoted(&rest[..end]));
                    end
                }
                None => {
                    out.push(Part::Other(rest));
                    rest.len()
                }
            }
        } else if bare(c) {
            let end = rest.find(|c: char| !bare(c)).unwrap_or(rest.len());
            out.push(Part::Bare(&rest[..end]));
            end
        } else {
            out.push(Part::Other(&rest[..c.len_utf8()]));
            c.len_utf8()
        };
        rest = &rest[len..];
    }
    out
}

/// The text of a quoted phrase as written (`"say ""hi"""` → `say "hi"`).
fn unquoted(phrase: &str) -> String {
    phrase[1..phrase.len() - 1].replace("\"\"", "\"")
}

/// FTS5's keywords, which a bareword that spells one is (not a word searched for).
fn keyword(word: &str) -> bool {
    matches!(word, "AND" | "OR" | "NOT" | "NEAR")
}

/// The FTS5 expression `expr` in the index's terms: each quoted phrase and bareword holding CJK,
/// emoji or a [`GROUP_BREAK`] written as [`phrase_terms`] gives it, the rest as it is. Where
/// one becomes several phrases (all must match), they stand in its place side by side: when the
/// expression is plain phrases joined by spaces or `OR` (what Cairn's searches build; `AND` binds
/// before `OR`, so `"a" OR "b c"` becomes `"a" OR "b" "c"`: `a`, or `b` and `c`), inside a `NEAR`
/// group, after `^` and before `*`; elsewhere in brackets.
pub fn in_index_terms(expr: &str) -> Cow<'_, str> {
    if expr.is_ascii() {
        return Cow::Borrowed(expr);
    }
    let parts = parts(expr);
    let plain = parts.iter().all(|p| match p {
        Part::Quoted(_) => true,
        Part::Bare(w) => *w == "OR",
        Part::Other(o) => o.trim().is_empty(),
    });
    let mut out = String::with_capacity(expr.len() * 2);
    let mut changed = false;
    // Whether each open bracket opened a NEAR group; the last bareword or other mark seen.
    let mut brackets: Vec<bool> = Vec::new();
    let mut last_word = "";
    let mut last_mark = ' ';
    for (i, part) in parts.iter().enumerate() {
        let rewritten = match *part {
            Part::Quoted(q) => phrase_terms(&unquoted(q)),
            Part::Bare(w) if !keyword(w) => phrase_terms(w),
            _ => None,
        };
        match (*part, rewritten) {
            (_, Some(phrases)) => {
                changed = true;
                let joined = phrases
                    .iter()
                    .map(|p| quoted(p))
                    .collect::<Vec<_>>()
                    .join(" ");
                let side_by_side = phrases.len() == 1
                    || plain
                    || brackets.last() == Some(&true)
                    || last_mark == '^'
                    || parts.get(i + 1) == Some(&Part::Other("*"));
                if side_by_side {
                    out.push_str(&joined);
                } else {
                    out.push('(');
                    out.push_str(&joined);
                    out.push(')');
                }
                last_mark = ' ';
            }
            (Part::Quoted(s), None) => {
                out.push_str(s);
                last_mark = ' ';
            }
            (Part::Bare(w), None) => {
                out.push_str(w);
                last_word = w;
                last_mark = ' ';
            }
            (Part::Other(o), None) => {
                out.push_str(o);
                match o {
                    "(" => brackets.push(last_word == "NEAR"),
                    ")" => {
                        brackets.pop();
                    }
                    _ => {}
                }
                if !o.trim().is_empty() {
                    last_mark = o.chars().next().unwrap_or(' ');
                    last_word = "";
                }
            }
        }
    }
    if changed {
        Cow::Owned(out)
    } else {
        Cow::Borrowed(expr)
    }
}

/// `s` compared as the tokenizer compares ASCII and Latin words: case and diacritics aside.
fn fold(s: &str) -> String {
    s.nfkd()
        .filter(|c| !is_combining_mark(*c))
        .flat_map(char::to_lowercase)
        .collect()
}

/// What a search's words find in a record's text, for the snippets the index cannot make. The
/// index cuts a snippet by its tokens' positions, and reads them back from the stored text,
/// where the tail's terms have no place: a window it picks around a match in the tail shows none
/// of the matches, and one that reaches past the stored tokens stops at its last match. So a
/// record with a tail has its snippet cut here ([`Needles::snippet`]), around the words of the
/// query as the tail and the tokenizer find them (a CJK run anywhere inside a word, other words
/// whole or glued to CJK, case and diacritics aside, emoji).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Needles {
    /// Runs of CJK characters, found anywhere inside a word's CJK runs, longest first.
    cjk: Vec<Vec<char>>,
    /// Other words, folded, found as a run of a word holding CJK, or as a whole word; each with
    /// its number among the needles (after the CJK runs').
    words: std::collections::HashMap<String, usize>,
    /// Emoji, each found wherever it stands (numbered after the words).
    emoji: Vec<char>,
}

/// A stretch of text a needle finds: its byte range and which needle.
#[derive(Debug, Clone, Copy)]
struct Found {
    start: usize,
    end: usize,
    needle: usize,
}

impl Needles {
    /// The needles of the FTS5 expression `expr` (as a person's search writes it, before
    /// [`in_index_terms`]): the words of its phrases and barewords.
    pub fn of(expr: &str) -> Needles {
        let mut cjk: Vec<Vec<char>> = Vec::new();
        let mut words: Vec<String> = Vec::new();
        let mut emoji: Vec<char> = Vec::new();
        for part in parts(expr) {
            let body = match part {
                Part::Quoted(q) => unquoted(q),
                Part::Bare(w) if !keyword(w) => w.to_owned(),
                _ => continue,
            };
            for (piece, _) in pieces(&body) {
                match piece {
                    Piece::Word(w) => {
                        for (run, is_cjk, _) in runs(w) {
                            if is_cjk {
                                cjk.push(run.chars().collect());
                            } else {
                                words.push(fold(run));
                            }
                        }
                    }
                    Piece::Emoji(e) => emoji.extend(e.chars().filter(|&c| is_emoji(c))),
                }
            }
        }
        // Longest first: where two start at one place, the longer is marked.
        cjk.sort_by_key(|r| std::cmp::Reverse(r.len()));
        cjk.dedup();
        emoji.sort_unstable();
        emoji.dedup();
        let mut by_word = std::collections::HashMap::new();
        for w in words {
            let next = cjk.len() + by_word.len();
            by_word.entry(w).or_insert(next);
        }
        Needles {
            cjk,
            words: by_word,
            emoji,
        }
    }

    /// Whether there is nothing to find.
    pub fn is_empty(&self) -> bool {
        self.cjk.is_empty() && self.words.is_empty() && self.emoji.is_empty()
    }

    /// Whether a record of this text and tool input has its snippet cut by the needles: it has
    /// a tail ([`has_tail_terms`]), and there is something to find.
    pub fn in_tail_of(&self, text: Option<&str>, tool_input: Option<&str>) -> bool {
        !self.is_empty() && [text, tool_input].into_iter().flatten().any(has_tail_terms)
    }

    /// Which word needle `word` is, if any: ASCII compared without case (no copy made of a word
    /// no needle is as long as), anything else folded.
    fn word(&self, word: &str, buf: &mut String) -> Option<usize> {
        if word.is_ascii() {
            buf.clear();
            buf.extend(word.chars().map(|c| c.to_ascii_lowercase()));
            self.words.get(buf.as_str()).copied()
        } else {
            self.words.get(&fold(word)).copied()
        }
    }

    /// What the needles find in `text`, in order, never overlapping: CJK runs inside words,
    /// words (whole, or a run of a word holding CJK), emoji.
    fn find(&self, text: &str) -> Vec<Found> {
        let mut out = Vec::new();
        let mut buf = String::new();
        let emoji_base = self.cjk.len() + self.words.len();
        each_piece(text, |piece, at| match piece {
            Piece::Word(w) if holds_cjk(w) => {
                for (run, is_cjk, off) in runs(w) {
                    let start = at + off;
                    if is_cjk {
                        self.cjk_found(run, start, &mut out);
                    } else if let Some(needle) = self.word(run, &mut buf) {
                        out.push(Found {
                            start,
                            end: start + run.len(),
                            needle,
                        });
                    }
                }
            }
            Piece::Word(w) => {
                if let Some(needle) = self.word(w, &mut buf) {
                    out.push(Found {
                        start: at,
                        end: at + w.len(),
                        needle,
                    });
                }
            }
            Piece::Emoji(e) => {
                for (off, c) in e.char_indices() {
                    if let Ok(i) = self.emoji.binary_search(&c) {
                        out.push(Found {
                            start: at + off,
                            end: at + off + c.len_utf8(),
                            needle: emoji_base + i,
                        });
                    }
                }
            }
        });
        out
    }

    /// The CJK needles found in `run` (starting at byte `start` of the text), leftmost first.
    fn cjk_found(&self, run: &str, start: usize, out: &mut Vec<Found>) {
        if self.cjk.is_empty() {
            return;
        }
        let chars: Vec<(usize, char)> = run.char_indices().collect();
        let mut i = 0;
        while i < chars.len() {
            let found = self.cjk.iter().enumerate().find(|(_, n)| {
                chars.len() - i >= n.len()
                    && chars[i..i + n.len()]
                        .iter()
                        .map(|(_, c)| *c)
                        .eq(n.iter().copied())
            });
            match found {
                Some((needle, n)) => {
                    let end = chars.get(i + n.len()).map_or(run.len(), |(b, _)| *b);
                    out.push(Found {
                        start: start + chars[i].0,
                        end: start + end,
                        needle,
                    });
                    i += n.len();
                }
                None => i += 1,
            }
        }
    }

    /// A snippet of `text` as the index cuts one (`…` where it is cut, each match marked), around
    /// the stretch where the needles find the most different things (the first such); with how
    /// many it finds there. `None` when they find nothing. The needles look in `read`, the form
    /// the index reads of `text` ([`super::indexed_text`], [`super::indexed_input`]: escapes
    /// glued to a word blanked, the same length and every other byte in its place), so a word
    /// after `\n` or a colour code is found and marked after it.
    pub fn snippet(&self, text: &str, read: &str) -> Option<(usize, String)> {
        if text.len() != read.len() {
            return None;
        }
        /// Characters kept before the first match, and in all.
        const BEFORE: usize = 24;
        const WIDTH: usize = 96;
        /// Matches tried as the first one of the snippet (a long output may hold thousands).
        const TRIED: usize = 64;
        let found = self.find(read);
        // The form read has `text`'s length and its characters where they were, an ASCII byte
        // blanked here and there: its boundaries are `text`'s, and the cut is measured on it.
        let shown = text;
        let text = read;
        // Cut where a word starts and ends, as the index cuts at its tokens: a cut inside a
        // word moves to the next word's start (never past the match) and to that word's end (a
        // few characters on at most). CJK text is cut anywhere: each character is a word or
        // part of one, and its runs are whole clauses.
        let window = |first: &Found| {
            let (s, e) = (first.start, first.end);
            let mut start = text[..s]
                .char_indices()
                .rev()
                .nth(BEFORE - 1)
                .map_or(0, |(b, _)| b);
            if text[..start].ends_with(is_word_char) && !text[start..].starts_with(is_cjk) {
                start = text[start..s]
                    .find(|c: char| !is_word_char(c))
                    .and_then(|w| text[start + w..s].find(is_word_char).map(|n| start + w + n))
                    .unwrap_or(start);
            }
            let mut end = text[start..]
                .char_indices()
                .nth(WIDTH)
                .map_or(text.len(), |(b, _)| start + b)
                .max(e);
            if text[..end].ends_with(|c: char| is_word_char(c) && !is_cjk(c)) {
                let rest = &text[end..];
                let word = rest.find(|c: char| !is_word_char(c)).unwrap_or(rest.len());
                if rest[..word].chars().count() <= BEFORE / 2 {
                    end += word;
                }
            }
            (start, end)
        };
        // The matches inside a window: they are in order, so a stretch of `found`.
        let inside = |start: usize, end: usize| {
            let from = found.partition_point(|f| f.start < start);
            let to = found.partition_point(|f| f.start < end);
            found[from..to].iter().filter(move |f| f.end <= end)
        };
        let mut best: Option<(usize, (usize, usize))> = None;
        let mut seen: Vec<usize> = Vec::new();
        for first in found.iter().take(TRIED) {
            let (start, end) = window(first);
            seen.clear();
            seen.extend(inside(start, end).map(|f| f.needle));
            seen.sort_unstable();
            seen.dedup();
            if best.is_none_or(|(n, _)| seen.len() > n) {
                best = Some((seen.len(), (start, end)));
            }
        }
        let (count, (start, end)) = best?;
        let ranges: Vec<(usize, usize)> = inside(start, end)
            .map(|f| (f.start - start, f.end - start))
            .collect();
        let mut out = String::new();
        if start > 0 {
            out.push('…');
        }
        marked(&shown[start..end], &ranges, &mut out);
        if end < text.len() {
            out.push('…');
        }
        Some((count, out))
    }
}

/// `text` onto `out` with each of `ranges` (in order, not overlapping) between the match marks.
fn marked(text: &str, ranges: &[(usize, usize)], out: &mut String) {
    let mut at = 0;
    for &(s, e) in ranges {
        out.push_str(&text[at..s]);
        out.push(MATCH_START);
        out.push_str(&text[s..e]);
        out.push(MATCH_END);
        at = e;
    }
    out.push_str(&text[at..]);
}

#[cfg(test)]
mod tests {
    use super::*;

    const B: char = GROUP_BREAK;

    #[test]
    fn a_tail_holds_the_pairs_of_cjk_words_the_words_glued_to_them_and_emoji() {
        for (text, want) in [
            (
                "我们修复了登录错误 and more",
                Some("我们 们修 修复 复了 了登 登录 录错 错误".to_owned()),
            ),
            (
                "启动app时确保环境变量 DOCKER",
                Some("启动 app 时确 确保 保环 环境 境变 变量".to_owned()),
            ),
            // A group per word, a break between.
            (
                "东京 日本語テキスト，한국어",
                Some(format!(
                    "东京 {B} 日本 本語 語テ テキ キス スト {B} 한국 국어"
                )),
            ),
            // A skin tone the tokenizer glues to the word after it: the word's group is there.
            ("👍🏽我们", Some(format!("emoji1f44d emoji1f3fd {B} 我们"))),
            // Every CJK word has a group, a short one too (see the module's comment).
            ("登录 东", Some(format!("登录 {B} 东"))),
            // A lone CJK character glued to a Latin word is a term of its own.
            ("v2版", Some("v2 版".to_owned())),
            // Emoji: one term each, a skin tone kept, joiners and selectors left out.
            (
                "ship 🚀 👍🏽 ❤\u{fe0f} 👨\u{200d}💻",
                Some(format!(
                    "emoji1f680 {B} emoji1f44d emoji1f3fd {B} emoji2764 {B} emoji1f468 emoji1f4bb"
                )),
            ),
            ("plain ASCII text", None),
            ("café naïve Straße", None),
        ] {
            assert_eq!(tail(text), want, "{text}");
        }
    }

    #[test]
    fn a_text_has_tail_terms_when_it_holds_cjk_or_an_emoji() {
        for (text, want) in [
            ("plain", false),
            ("café — “quoted” │ ─ →", false),
            ("✗ failed", true),
            ("ok ✅", true),
            ("ship 🚀", true),
            ("x 登录", true),
            ("한국어", true),
            ("ｶﾀｶﾅ", false),
        ] {
            assert_eq!(has_tail_terms(text), want, "{text}");
            assert_eq!(
                has_tail_terms(text),
                text.chars().any(|c| is_cjk(c) || is_emoji(c)),
                "{text}"
            );
        }
    }

    #[test]
    fn a_query_phrase_is_written_in_the_tails_terms_when_it_needs_them() {
        let some = |v: &[&str]| Some(v.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>());
        for (body, want) in [
            ("login", None),
            ("登录", some(&["登录"])),
            ("修复了", some(&["修复 复了"])),
            ("登录bug", some(&["登录 bug"])),
            // Words among others: each on its own.
            ("登录:修复", some(&["登录", "修复"])),
            ("修复了:bug", some(&["修复 复了", "bug"])),
            ("🚀", some(&["emoji1f680"])),
            ("🚀launch", some(&["emoji1f680", "launch"])),
            ("a\u{e002}b", some(&["a", "b"])),
            ("\u{e002}", some(&[""])),
        ] {
            assert_eq!(phrase_terms(body), want, "{body}");
        }
    }

    /// Each expression, written in the tail's terms, is one FTS5 reads: plain phrases stay plain,
    /// a phrase that becomes several is bracketed where a bare group would change the meaning.
    #[test]
    fn an_expression_is_written_in_the_tails_terms_and_stays_valid() {
        for (expr, want) in [
            ("\"login\" \"bug\"", "\"login\" \"bug\""),
            ("\"登录\" OR \"修复了\"", "\"登录\" OR \"修复 复了\""),
            ("\"a\" OR \"修复了:bug\"", "\"a\" OR \"修复 复了\" \"bug\""),
            (
                "\"a\" NOT \"修复了:bug\"",
                "\"a\" NOT (\"修复 复了\" \"bug\")",
            ),
            (
                "NEAR(\"修复了:bug\" \"x\", 5)",
                "NEAR(\"修复 复了\" \"bug\" \"x\", 5)",
            ),
            ("text : 修复了", "text : \"修复 复了\""),
            ("\"修复了:bug\"*", "\"修复 复了\" \"bug\"*"),
            ("^\"🚀x\"", "^\"emoji1f680\" \"x\""),
            ("\"say \"\"你好世界\"\"\"", "\"say\" \"你好 好世 世界\""),
            ("登录 AND bug", "\"登录\" AND bug"),
            ("\"unclosed 修复了", "\"unclosed 修复了"),
        ] {
            assert_eq!(in_index_terms(expr), want, "{expr}");
        }
        assert!(matches!(in_index_terms("\"a\" OR b*"), Cow::Borrowed(_)));
        let conn = rusqlite::Connection::open_in_memory().unwrap();
        conn.execute_batch(
            "CREATE VIRTUAL TABLE t USING fts5(text, tool_input);
             INSERT INTO t VALUES ('修复了 bug x', '');",
        )
        .unwrap();
        for expr in [
            "\"a\" NOT \"修复了:bug\"",
            "NEAR(\"修复了:bug\" \"x\", 5)",
            "text : 修复了",
            "\"修复了:bug\"*",
            "^\"🚀x\"",
            "\"a\" OR \"修复了:bug\"",
        ] {
            let rewritten = in_index_terms(expr);
            conn.query_row(
                "SELECT count(*) FROM t WHERE t MATCH ?1",
                [rewritten.as_ref()],
                |r| r.get::<_, i64>(0),
            )
            .unwrap_or_else(|e| panic!("{expr} as {rewritten}: {e}"));
        }
    }

    #[test]
    fn a_snippet_is_cut_around_what_the_words_find_and_marks_it() {
        let (s, e) = (MATCH_START, MATCH_END);
        let needles = Needles::of("\"登录\" \"bug\" \"🚀\"");
        assert_eq!(
            needles.snippet(
                "修复了登录bug 🚀 and a bugfix",
                "修复了登录bug 🚀 and a bugfix"
            ),
            Some((
                3,
                format!("修复了{s}登录{e}{s}bug{e} {s}🚀{e} and a bugfix")
            ))
        );
        // Cut where the most different words are found, at a Latin word's start.
        let long = format!(
            "{} 登录 bug{}",
            "lorem ipsum ".repeat(20),
            " dolor".repeat(30)
        );
        let (found, cut) = needles.snippet(&long, &long).unwrap();
        assert_eq!(found, 2);
        assert!(cut.starts_with("…ipsum lorem"), "{cut}");
        assert!(cut.ends_with("dolor…"), "{cut}");
        assert!(cut.contains(&format!("{s}登录{e} {s}bug{e}")), "{cut}");
        // Case and diacritics aside, as the tokenizer reads words.
        assert_eq!(
            Needles::of("\"CAFE\"").snippet("au café", "au café"),
            Some((1, format!("au {s}café{e}")))
        );
        assert_eq!(needles.snippet("nothing here", "nothing here"), None);
        // Found in the form the index reads, marked in the text as stored.
        let stored = "{\"cmd\":\"a\\nbug 登录\"}";
        let read = super::super::indexed_input(stored);
        assert_eq!(
            needles.snippet(stored, &read),
            Some((2, format!("{{\"cmd\":\"a\\n{s}bug{e} {s}登录{e}\"}}")))
        );
    }
}

//! What the full-text index (`records_fts`) holds of a record, and the writes that keep it so.
//!
//! A tool call's input is stored as JSON, where a line break inside a string is the two
//! characters `\n`. The index's tokenizer (`unicode61`) splits at the backslash and keeps the
//! `n` glued to the word after it, so the first word of every line of an edit, a written file
//! or a multi-line command was indexed as `nword` and no search for `word` found it. The index
//! is therefore given [`indexed_input`]: the input with each such escape blanked.
//!
//! The index reads its snippets back from the `records` table (it is an external-content
//! index), by token position. So the form indexed must split into exactly as many tokens as
//! the stored text does, in the same order: an escape is blanked only where its letter is glued
//! to a word (then it was part of that word's token, and blanking it leaves the word); an
//! escape standing alone (`\n\n`, `\n"`) stays, a token of its own in both.
//!
//! After those tokens, and only there, a column may hold more: a space, then its tail ([`tail`]:
//! the words inside runs of Chinese, Japanese or Korean text, words glued to such a run, emoji),
//! terms that have no place in the stored text, so they never move one of its tokens
//! ([`text_column`], [`input_column`]). Every write that adds a row to the index or takes one
//! out goes through this module, with the same form: FTS5 takes a row out by the exact values it
//! was given.

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;

use rusqlite::{Connection, params};

mod tail;
pub use tail::{
    GROUP_BREAK, Needles, cjk_pairs, has_tail_terms, in_index_terms, is_cjk, is_emoji_part,
    phrase_terms,
};

/// `input` as the index reads it: each JSON escape `\n`, `\t`, `\r`, `\b`, `\f` or `\uXXXX`
/// that is glued to an ASCII letter or digit after it replaced by as many spaces (the same
/// length, so the rest keeps its place). An escaped backslash (`\\n` is a backslash and an
/// `n`) is not an escape of the letter after it. Words glued to an escape by a non-ASCII
/// letter stay as they were (whether such a letter is a token character differs between
/// Unicode's tables and the tokenizer's, and a guess that is wrong would shift the tokens).
pub fn indexed_input(input: &str) -> Cow<'_, str> {
    let b = input.as_bytes();
    let Some(first) = b.iter().position(|&c| c == b'\\') else {
        return Cow::Borrowed(input);
    };
    let glued = |at: usize| b.get(at).is_some_and(u8::is_ascii_alphanumeric);
    let mut out = b.to_vec();
    let mut i = first;
    while i < b.len() {
        if b[i] != b'\\' {
            i += 1;
            continue;
        }
        let len = match b.get(i + 1) {
            Some(b'n' | b't' | b'r' | b'b' | b'f') => 2,
            Some(b'u')
                if b.get(i + 2..i + 6)
                    .is_some_and(|h| h.iter().all(u8::is_ascii_hexdigit)) =>
            {
                6
            }
            // `\\`, `\"`, `\/`, or a backslash that escapes nothing: not glued to a word.
            Some(_) => {
                i += 2;
                continue;
            }
            None => break,
        };
        if glued(i + len) {
            out[i..i + len].fill(b' ');
        }
        i += len;
    }
    // Only ASCII bytes were replaced, by ASCII spaces: still UTF-8.
    match String::from_utf8(out) {
        Ok(s) => Cow::Owned(s),
        Err(_) => Cow::Borrowed(input),
    }
}

/// `text` as the index reads it: each terminal escape sequence (`ESC [ … m`, a colour or a
/// cursor move, as coloured test and build output is full of) glued to the ASCII word after it
/// has its last parameter and final letter blanked, so `ESC[32mPASS` is indexed as `PASS`, not
/// `32mpass`, which no search finds. The tokenizer splits at the ESC and the `[` and at every
/// `;`, so the blanked part is exactly the escape's share of the word's token: the text keeps
/// its token count and order (what the index's snippets need, see the module's comment) and its
/// length. A sequence not glued to a word stays as it is (its parameters are tokens of their
/// own in both forms).
pub fn indexed_text(text: &str) -> Cow<'_, str> {
    let b = text.as_bytes();
    let Some(first) = memchr::memchr(0x1b, b) else {
        return Cow::Borrowed(text);
    };
    let mut out: Option<Vec<u8>> = None;
    let mut i = first;
    while i + 1 < b.len() {
        if b[i] != 0x1b || b[i + 1] != b'[' {
            i += 1;
            continue;
        }
        let (end, glued) = csi_end(&b[i + 2..]);
        let j = i + 2 + end;
        if glued {
            // The word's token starts where the run of ASCII letters and digits ending at the
            // final byte does (after the last `;`, `[` or other separator).
            let mut start = j;
            while start > i + 2 && b[start - 1].is_ascii_alphanumeric() {
                start -= 1;
            }
            out.get_or_insert_with(|| b.to_vec())[start..=j].fill(b' ');
        }
        i = j;
    }
    // Only ASCII bytes were replaced, by ASCII spaces: still UTF-8.
    match out.map(String::from_utf8) {
        Some(Ok(s)) => Cow::Owned(s),
        _ => Cow::Borrowed(text),
    }
}

/// Where the rest of a CSI escape sequence ends, `b` starting after its `ESC[` (or part way
/// through its parameters): the index of its final byte, past the parameters (0x30–0x3F) and
/// intermediates (0x20–0x2F); and whether that byte is an ASCII letter or digit with another
/// right after it, so that the tokenizer glues the sequence's tail to the word that follows.
fn csi_end(b: &[u8]) -> (usize, bool) {
    let mut j = 0;
    while b.get(j).is_some_and(|c| (0x30..=0x3f).contains(c)) {
        j += 1;
    }
    while b.get(j).is_some_and(|c| (0x20..=0x2f).contains(c)) {
        j += 1;
    }
    let glued = b.get(j).is_some_and(u8::is_ascii_alphanumeric)
        && b.get(j + 1).is_some_and(u8::is_ascii_alphanumeric);
    (j, glued)
}

/// A snippet of a record's text with each match that starts inside a terminal escape sequence
/// glued to the word (the index's token for `ESC[32mPASS` starts at the `32m`, after the `[`;
/// see [`indexed_text`]) started after the sequence, so the word is marked and the sequence
/// stays whole for the cleaning that removes it: `ESC[32m` then the marked `PASS`, not a
/// marked `32mPASS` whose sequence the mark broke open.
pub fn unglued_text_marks(snippet: &str) -> Cow<'_, str> {
    use super::search::MATCH_START;
    if !snippet.contains('\u{1b}') {
        return Cow::Borrowed(snippet);
    }
    let mut out = String::with_capacity(snippet.len());
    let mut rest = snippet;
    while let Some(at) = rest.find(MATCH_START) {
        let (before, after) = rest.split_at(at);
        let marked = &after[MATCH_START.len_utf8()..];
        // Inside a sequence: `ESC[` and only parameter or intermediate bytes up to the mark.
        let inside = before.rfind('\u{1b}').is_some_and(|esc| {
            let seq = &before.as_bytes()[esc + 1..];
            seq.first() == Some(&b'[') && seq[1..].iter().all(|c| (0x20..=0x3f).contains(c))
        });
        let (j, glued) = csi_end(marked.as_bytes());
        out.push_str(before);
        if inside && glued {
            // Only ASCII bytes were passed over: `j + 1` is a char boundary.
            out.push_str(&marked[..=j]);
            out.push(MATCH_START);
            rest = &marked[j + 1..];
        } else {
            out.push(MATCH_START);
            rest = marked;
        }
    }
    out.push_str(rest);
    Cow::Owned(out)
}

/// The longest stretch a snippet is widened back by ([`whole_first_word`]): a path's whole
/// length on Linux.
const WIDEN_AT_MOST: usize = 4096;

/// A widened first word longer than this, with no match in it, is left out of the snippet
/// rather than shown: it would push the match out of a one-line view.
const SHOWN_AT_MOST: usize = 200;

/// A snippet cut at its front (`…` first) inside a path, started where the path starts in the
/// record it was cut from, `sources` (the record's text and tool input). The tokenizer splits at
/// `/`, `\` and `:`, so the index cuts a path between two of its parts: `…ann/notes/plan.md` of
/// `/home/ann/notes/plan.md` reads as a relative path, and what cleans a path for an agent
/// ([`crate::archive::redact::Redactor::outbound_text`]) finds one by its start. Widened, the
/// snippet shows the path as the record has it, and is cleaned as the record would be; a path
/// too long to show whole before the match is left out (`… ` and the rest). A word ends at white
/// space or at punctuation no path has (quotes, brackets, `,;=|<>`); a first word that is no
/// path, or a snippet found in neither source, is returned as it is.
pub fn whole_first_word<'s>(snippet: &'s str, sources: &[&str]) -> Cow<'s, str> {
    use super::search::{MATCH_END, MATCH_START};
    let Some(rest) = snippet.strip_prefix('…') else {
        return Cow::Borrowed(snippet);
    };
    let body: String = rest
        .chars()
        .filter(|&c| c != MATCH_START && c != MATCH_END)
        .collect();
    let body = body.strip_suffix('…').unwrap_or(&body);
    if body.is_empty() {
        return Cow::Borrowed(snippet);
    }
    let Some((src, at)) = sources
        .iter()
        .find_map(|src| src.find(body).map(|at| (*src, at)))
    else {
        return Cow::Borrowed(snippet);
    };
    let ends_word = |c: char| {
        c.is_whitespace()
            || matches!(c, '"' | '\'' | '`' | ',' | ';' | '=' | '|' | '<' | '>')
            || matches!(c, '(' | ')' | '[' | ']' | '{' | '}')
    };
    let mut start = at;
    for (i, c) in src[..at].char_indices().rev() {
        if ends_word(c) || at - i > WIDEN_AT_MOST {
            break;
        }
        start = i;
    }
    let prefix = &src[start..at];
    // The snippet's own part of its first word (match marks and all).
    let tail_len = rest.find(ends_word).unwrap_or(rest.len());
    let tail = &rest[..tail_len];
    if prefix.is_empty() || !(prefix.contains(['/', '\\']) || tail.contains(['/', '\\'])) {
        return Cow::Borrowed(snippet);
    }
    if prefix.len() + tail.len() > SHOWN_AT_MOST && !tail.contains(MATCH_START) {
        return Cow::Owned(format!("…{}", &rest[tail_len..]));
    }
    let cut = if start == 0 { "" } else { "…" };
    Cow::Owned(format!("{cut}{prefix}{rest}"))
}

/// A snippet of a stored tool input (not of a record's text, where a backslash is text) with
/// each match that starts at a JSON escape glued to the word (the index's token for `\nword`
/// begins at the `n`) started after the escape, so the word is marked and the escape reads as
/// it is: `\n` then the marked `word`, not a marked `nword`.
pub fn unglued_marks(snippet: &str) -> String {
    use super::search::MATCH_START;
    let mut out = String::with_capacity(snippet.len());
    let mut rest = snippet;
    while let Some(at) = rest.find(MATCH_START) {
        let (before, after) = rest.split_at(at);
        out.push_str(before);
        let marked = &after[MATCH_START.len_utf8()..];
        let escape = match marked.as_bytes() {
            [b'n' | b't' | b'r' | b'b' | b'f', ..] => 1,
            [b'u', h @ ..] if h.len() >= 4 && h[..4].iter().all(u8::is_ascii_hexdigit) => 5,
            _ => 0,
        };
        // An odd run of backslashes before the mark: the last one escapes the letter (an even
        // run is escaped backslashes, and the letter is text).
        let backslashes = out.chars().rev().take_while(|&c| c == '\\').count();
        let moved = escape > 0
            && backslashes % 2 == 1
            && marked[escape..].starts_with(|c: char| c.is_ascii_alphanumeric());
        if moved {
            out.push_str(&marked[..escape]);
            out.push(MATCH_START);
            rest = &marked[escape..];
        } else {
            out.push(MATCH_START);
            rest = marked;
        }
    }
    out.push_str(rest);
    out
}

/// A snippet of a stored tool input (escapes not yet decoded) without the JSON punctuation
/// around its strings: `{"command":"ls","description":"List"}` reads `command: ls ·
/// description: List`. Only an unescaped quote is JSON's own (a quote in a string is `\"`), so
/// those quotes are dropped, a colon or comma next to one becomes `: ` or ` · `, a bracket that
/// opens before one (after `:`, `,`, a bracket, or at the start) is dropped, and so are closers
/// after one or after a number or literal, where they end the snippet or the member. Text inside
/// the strings is left as it is; a snippet that starts or ends inside a string reads the same.
pub fn without_json_punctuation(snippet: &str) -> String {
    let c: Vec<char> = snippet.chars().collect();
    let mut out = String::with_capacity(snippet.len());
    // Whether the character at `i` is JSON's own quote: not escaped by an odd run before it.
    let quote = |i: usize| {
        c.get(i) == Some(&'"') && c[..i].iter().rev().take_while(|&&b| b == '\\').count() % 2 == 0
    };
    let opener = |ch: char| matches!(ch, '{' | '[');
    let closer = |ch: char| matches!(ch, '}' | ']');
    let mut i = 0;
    while i < c.len() {
        let ch = c[i];
        if quote(i) {
            i += 1;
            // Closers right after a string, when they end the snippet or the member.
            let mut j = i;
            while c.get(j).copied().is_some_and(closer) {
                j += 1;
            }
            if j > i && matches!(c.get(j), None | Some(',' | '…')) {
                i = j;
            }
            match c.get(i) {
                Some(':') => {
                    out.push_str(": ");
                    i += 1;
                }
                Some(',') => {
                    out.push_str(" · ");
                    i += 1;
                }
                _ => {}
            }
            continue;
        }
        let after_structure = i == 0 || matches!(c[i - 1], ':' | ',' | '{' | '[') || quote(i - 1);
        let mut j = i;
        while c.get(j).copied().is_some_and(opener) {
            j += 1;
        }
        if j > i && after_structure && quote(j) {
            i = j;
            continue;
        }
        // Closers after a number, `true`, `false` or `null`, when they end the snippet or the
        // member.
        let mut j = i;
        while c.get(j).copied().is_some_and(closer) {
            j += 1;
        }
        if j > i
            && i > 0
            && c[i - 1].is_ascii_alphanumeric()
            && (j == c.len() || (c[j] == ',' && quote(j + 1)))
        {
            i = j;
            continue;
        }
        // A comma after a number, `true`, `false`, `null` or a closer, before the next key.
        if ch == ','
            && quote(i + 1)
            && i > 0
            && (c[i - 1].is_ascii_alphanumeric() || closer(c[i - 1]))
        {
            out.push_str(" · ");
            i += 1;
            continue;
        }
        out.push(ch);
        i += 1;
    }
    out
}

/// A snippet of a stored tool input as a person reads it: its JSON punctuation dropped
/// ([`without_json_punctuation`]), its escapes decoded ([`readable_escapes`]), then shown as
/// text ([`shown_snippet`]): a terminal escape written into the input (`\u001b]8;;http://…`, a
/// hyperlink) goes whole, where it read as ` ]8;;http://…`.
pub fn readable_input(snippet: &str) -> String {
    shown_snippet(&readable_escapes(&without_json_punctuation(snippet)))
}

/// A snippet of a stored tool input with the JSON escapes decoded (`\"` and `\\` to the
/// character, a line break, tab or other control character to a space, since a snippet is one
/// line), so a command reads `git commit -m "fix"`, not `-m \"fix\"`. The characters that open
/// or close a terminal escape sequence (ESC, BEL and the C1 controls) are decoded as
/// themselves, so [`shown_snippet`] takes each sequence out whole: as a space, the rest of a
/// hyperlink (`]8;;http://…`) stayed behind as text. A cut-off or unknown escape stays as
/// written; the match marks stay where they are.
pub fn readable_escapes(snippet: &str) -> String {
    let mut out = String::with_capacity(snippet.len());
    let mut chars = snippet.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.peek().copied() {
            Some(e @ ('"' | '\\' | '/')) => {
                chars.next();
                out.push(e);
            }
            Some('n' | 'r' | 't' | 'b' | 'f') => {
                chars.next();
                out.push(' ');
            }
            Some('u') => {
                let hex: String = chars.clone().skip(1).take(4).collect();
                match u32::from_str_radix(&hex, 16)
                    .ok()
                    .filter(|_| hex.len() == 4)
                {
                    Some(code) => {
                        chars.nth(4);
                        match char::from_u32(code)
                            .filter(|&c| !c.is_control() || opens_or_ends_escape(c))
                        {
                            Some(decoded) => out.push(decoded),
                            None => out.push(' '),
                        }
                    }
                    None => out.push(c),
                }
            }
            _ => out.push(c),
        }
    }
    out
}

/// ESC, BEL and the C1 controls (U+0080–U+009F): what a terminal escape sequence starts or
/// ends with, which [`crate::text::printable`] reads a whole sequence from.
fn opens_or_ends_escape(c: char) -> bool {
    matches!(c, '\u{1b}' | '\u{7}' | '\u{80}'..='\u{9f}')
}

/// A snippet (of a record's text, or a tool input's made readable) as a person reads it, for
/// the CLI, the MCP server and the window alike: terminal escape sequences taken out whole
/// ([`crate::text::printable`]), and the part of one the index's cut left without its start.
/// A snippet cut at its front may begin inside a control string: the rest of a hyperlink's
/// target (`…file://host/src/main.rs ESC\ main.rs`), which no terminal shows and the
/// cleaning cannot tell from text once its `ESC ]8;;` is cut away. Such a start (no white space,
/// up to the string's terminator: BEL, `ESC \` or ST) is left out. A snippet cut at its end
/// inside a control string keeps its `…`, and the match marks stay paired where a cut took
/// one of a pair.
pub fn shown_snippet(snippet: &str) -> String {
    let snippet = match snippet.strip_prefix('…') {
        Some(rest) => match cut_control_string(rest) {
            Some(after) => format!("…{after}"),
            None => snippet.to_owned(),
        },
        None => snippet.to_owned(),
    };
    let mut shown = crate::text::printable(&snippet);
    if snippet.ends_with('…') && !shown.ends_with('…') {
        shown.push('…');
    }
    paired_marks(&shown)
}

/// What follows the end of a control string that `text` starts inside of (its front cut
/// away): the text after its terminator, when what comes before that holds no white space and
/// no start of an escape. `None`: `text` starts as text.
fn cut_control_string(text: &str) -> Option<&str> {
    use super::search::{MATCH_END, MATCH_START};
    for (at, c) in text.char_indices() {
        match c {
            '\u{7}' | '\u{9c}' => return Some(&text[at + c.len_utf8()..]),
            '\u{1b}' => return text[at + 1..].strip_prefix('\\'),
            MATCH_START | MATCH_END => {}
            c if c.is_whitespace() || c.is_control() || c == '…' => return None,
            _ => {}
        }
    }
    None
}

/// `snippet` with every match mark paired: an end with no start open dropped, a start left open
/// closed at the end (cleaning or a cut can take one of a pair away).
fn paired_marks(snippet: &str) -> String {
    use super::search::{MATCH_END, MATCH_START};
    let mut out = String::with_capacity(snippet.len());
    let mut open = false;
    for c in snippet.chars() {
        match c {
            MATCH_START if open => {}
            MATCH_START => {
                open = true;
                out.push(c);
            }
            MATCH_END if !open => {}
            MATCH_END => {
                open = false;
                out.push(c);
            }
            c => out.push(c),
        }
    }
    if open {
        out.push(MATCH_END);
    }
    out
}

/// A form the index reads with its tail after it, if it has one.
fn with_tail(form: Cow<'_, str>) -> Cow<'_, str> {
    match tail::tail(&form) {
        Some(tail) => Cow::Owned(format!("{form} {tail}")),
        None => form,
    }
}

/// A record's text as the index is given it: [`indexed_text`]'s form, then its tail.
pub fn text_column(text: &str) -> Cow<'_, str> {
    with_tail(indexed_text(text))
}

/// A record's tool input as the index is given it: [`indexed_input`]'s form, then its tail.
pub fn input_column(input: &str) -> Cow<'_, str> {
    with_tail(indexed_input(input))
}

/// Add record `rowid` to the index, its text and input as the index reads them
/// ([`text_column`], [`input_column`]).
pub fn index_record(
    conn: &Connection,
    rowid: i64,
    text: Option<&str>,
    tool_input: Option<&str>,
) -> rusqlite::Result<()> {
    insert_indexed(
        conn,
        rowid,
        text.map(text_column).as_deref(),
        tool_input.map(input_column).as_deref(),
    )
}

/// Add record `rowid` to the index with exactly these values.
fn insert_indexed(
    conn: &Connection,
    rowid: i64,
    text: Option<&str>,
    indexed: Option<&str>,
) -> rusqlite::Result<()> {
    conn.prepare_cached("INSERT INTO records_fts (rowid, text, tool_input) VALUES (?1, ?2, ?3)")?
        .execute(params![rowid, text, indexed])
        .map(drop)
}

/// Take record `rowid` out of the index, given the text and input it was stored with; counted
/// in `fts_takeouts`, so the phrase counts kept for ranking start again ([`phrase_rows`]).
pub fn unindex_record(
    conn: &Connection,
    rowid: i64,
    text: Option<&str>,
    tool_input: Option<&str>,
) -> rusqlite::Result<()> {
    delete_indexed(
        conn,
        rowid,
        text.map(text_column).as_deref(),
        tool_input.map(input_column).as_deref(),
    )?;
    conn.prepare_cached("UPDATE fts_takeouts SET count = count + 1 WHERE id = 1")?
        .execute([])
        .map(drop)
}

/// Take every record of `session` out of the index (only those with a text or a tool input
/// were indexed: unindexing another would corrupt it), before its records are deleted.
pub fn unindex_session(conn: &Connection, session: i64) -> rusqlite::Result<()> {
    let mut indexed = conn.prepare_cached(
        "SELECT id, text, tool_input FROM records
         WHERE session_id = ?1 AND (text IS NOT NULL OR tool_input IS NOT NULL)",
    )?;
    let mut rows = indexed.query([session])?;
    while let Some(row) = rows.next()? {
        let (rowid, text, input): (i64, Option<String>, Option<String>) =
            (row.get(0)?, row.get(1)?, row.get(2)?);
        unindex_record(conn, rowid, text.as_deref(), input.as_deref())?;
    }
    Ok(())
}

/// What a phrase's count is kept under: its pieces between ASCII characters that are not
/// letters or digits, ASCII letters lowercased. The index's tokenizer splits at every such
/// character and folds ASCII case, so phrases with the same key hold the same tokens (`"Login"`
/// and `"login:"` share a count); anything else (other scripts, diacritics) is kept as written,
/// never merged on a guess.
pub(super) fn phrase_key(phrase: &str) -> String {
    phrase
        .split(|c: char| c.is_ascii() && !c.is_ascii_alphanumeric())
        .filter(|piece| !piece.is_empty())
        .map(str::to_ascii_lowercase)
        .collect::<Vec<_>>()
        .join(" ")
}

/// The row counts [`phrase_rows`] keeps for one database: the take-outs they were counted
/// under, and per phrase ([`phrase_key`]) its count and the newest record id it covers.
#[derive(Default)]
struct Kept {
    takeouts: i64,
    phrases: HashMap<String, (i64, i64)>,
}

/// Phrases kept per database, and databases kept per process; past either, the counts start again.
/// A phrase whose key is longer than [`MAX_KEPT_KEY`] bytes is counted every time, never kept
/// (a pasted paragraph must not hold memory), so the kept keys stay under 2 MiB a database.
const MAX_KEPT_PHRASES: usize = 8192;
const MAX_KEPT_KEY: usize = 256;
const MAX_KEPT_DATABASES: usize = 16;

static KEPT: Mutex<BTreeMap<String, Kept>> = Mutex::new(BTreeMap::new());

#[cfg(test)]
thread_local! {
    /// Phrases counted over the whole index, on this thread (tests only).
    static COUNTED_WHOLE: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// How many records hold each of `phrases` (plain quoted FTS5 phrases, as written), the counts
/// bm25 would take by visiting every such record on every query (`store::rank`).
///
/// They are kept per database file between calls, and stay exact: records only join the index
/// with ids above every id before them, so a kept count adds the records holding the phrase
/// among those appended since (a `rowid >` range FTS5 seeks to); a record leaving the index
/// (`unindex_record`, counted in `fts_takeouts`) makes every count start again. An in-memory
/// database keeps nothing. The counts are of the records up to the newest this call saw; the
/// ranking query that takes them reads the index again, so a commit landing in between makes
/// that one query's scores those of a moment earlier.
pub fn phrase_rows(conn: &Connection, phrases: &[&str]) -> rusqlite::Result<Vec<i64>> {
    let (takeouts, newest): (i64, i64) = conn
        .prepare_cached(
            "SELECT (SELECT count FROM fts_takeouts WHERE id = 1),
                    COALESCE((SELECT max(id) FROM records), 0)",
        )?
        .query_row([], |r| Ok((r.get(0)?, r.get(1)?)))?;
    // Each count stops at `newest`: a record another connection commits between these
    // statements is left for the next call to add, never counted twice. A whole count is taken
    // without bounds (a range over the whole list costs a third more) less the records past
    // `newest`, a seek to the end of the list.
    let range = |phrase: &str, after: i64| -> rusqlite::Result<i64> {
        conn.prepare_cached(
            "SELECT count(*) FROM records_fts
             WHERE records_fts MATCH ?1 AND rowid > ?2 AND rowid <= ?3",
        )?
        .query_row(params![phrase, after, newest], |r| r.get(0))
    };
    let count = |phrase: &str, after: Option<i64>| -> rusqlite::Result<i64> {
        if let Some(after) = after {
            return range(phrase, after);
        }
        #[cfg(test)]
        COUNTED_WHOLE.with(|c| c.set(c.get() + 1));
        let all: i64 = conn
            .prepare_cached("SELECT count(*) FROM records_fts WHERE records_fts MATCH ?1")?
            .query_row([phrase], |r| r.get(0))?;
        let past: i64 = conn
            .prepare_cached(
                "SELECT count(*) FROM records_fts WHERE records_fts MATCH ?1 AND rowid > ?2",
            )?
            .query_row(params![phrase, newest], |r| r.get(0))?;
        Ok(all - past)
    };
    let Some(db) = conn.path().filter(|p| !p.is_empty()).map(str::to_owned) else {
        return phrases.iter().map(|p| count(p, None)).collect();
    };
    let kept = |key: &str| {
        let all = KEPT.lock().ok()?;
        let k = all.get(&db).filter(|k| k.takeouts == takeouts)?;
        k.phrases.get(key).copied()
    };
    let mut out = Vec::with_capacity(phrases.len());
    for phrase in phrases {
        let key = phrase_key(phrase);
        let n = match kept(&key) {
            Some((n, upto)) if upto == newest => n,
            // Records appended since: add those holding it.
            Some((n, upto)) if upto < newest => n + count(phrase, Some(upto))?,
            // Nothing kept, or kept by a connection that sees newer records than this one.
            _ => count(phrase, None)?,
        };
        if key.len() > MAX_KEPT_KEY {
            out.push(n);
            continue;
        }
        if let Ok(mut all) = KEPT.lock() {
            if !all.contains_key(&db) && all.len() >= MAX_KEPT_DATABASES {
                all.clear();
            }
            let k = all.entry(db.clone()).or_default();
            if k.takeouts != takeouts || k.phrases.len() >= MAX_KEPT_PHRASES {
                k.phrases.clear();
                k.takeouts = takeouts;
            }
            k.phrases.insert(key, (n, newest));
        }
        out.push(n);
    }
    Ok(out)
}

/// Take record `rowid` out of the index given the exact values it was indexed with.
fn delete_indexed(
    conn: &Connection,
    rowid: i64,
    text: Option<&str>,
    indexed: Option<&str>,
) -> rusqlite::Result<()> {
    conn.prepare_cached(
        "INSERT INTO records_fts (records_fts, rowid, text, tool_input) VALUES ('delete', ?1, ?2, ?3)",
    )?
    .execute(params![rowid, text, indexed])
    .map(drop)
}

/// Migration 28: the records indexed before [`indexed_input`] whose input it changes, taken
/// out as they were indexed and put back as it reads them. Only inputs holding a backslash can
/// change; the others are not touched.
pub fn reindex_escaped_inputs(conn: &Connection) -> rusqlite::Result<u64> {
    let mut rows =
        conn.prepare("SELECT id, text, tool_input FROM records WHERE instr(tool_input, '\\') > 0")?;
    let mut changed = 0u64;
    let mut query = rows.query([])?;
    while let Some(row) = query.next()? {
        let (id, text, input): (i64, Option<String>, String) =
            (row.get(0)?, row.get(1)?, row.get(2)?);
        if let Cow::Owned(indexed) = indexed_input(&input) {
            // Indexed as stored, before this form existed; the text as it was indexed then
            // (raw: migration 41 gives it its own form).
            delete_indexed(conn, id, text.as_deref(), Some(&input))?;
            insert_indexed(conn, id, text.as_deref(), Some(&indexed))?;
            changed += 1;
        }
    }
    Ok(changed)
}

/// Migration 41: the records whose text holds an escape sequence glued to a word, indexed raw
/// before [`indexed_text`], taken out as they were indexed and put back in that form. Their
/// inputs were indexed as [`indexed_input`] reads them (migration 28 and every write since).
pub fn reindex_escaped_text(conn: &Connection) -> rusqlite::Result<u64> {
    let mut rows =
        conn.prepare("SELECT id, text, tool_input FROM records WHERE instr(text, char(27)) > 0")?;
    let mut changed = 0u64;
    let mut query = rows.query([])?;
    while let Some(row) = query.next()? {
        let (id, text, input): (i64, String, Option<String>) =
            (row.get(0)?, row.get(1)?, row.get(2)?);
        if let Cow::Owned(indexed) = indexed_text(&text) {
            let input = input.as_deref().map(indexed_input);
            delete_indexed(conn, id, Some(&text), input.as_deref())?;
            insert_indexed(conn, id, Some(&indexed), input.as_deref())?;
            changed += 1;
        }
    }
    if changed > 0 {
        // Phrase counts kept by another process start again.
        conn.execute("UPDATE fts_takeouts SET count = count + 1 WHERE id = 1", [])?;
    }
    Ok(changed)
}

/// Migration 48: the records whose text or tool input has a tail ([`text_column`],
/// [`input_column`]: a CJK character or an emoji), indexed without one before, taken out as they
/// were indexed and put back with it. Only a column holding a character outside ASCII can have a
/// tail, and SQLite finds those rows itself (a column's length in characters differs from its
/// length in bytes), so the others are read by the scan alone. Returns how many were put back.
pub fn index_tails(conn: &Connection) -> rusqlite::Result<u64> {
    let mut rows = conn.prepare(
        "SELECT id, text, tool_input FROM records
         WHERE length(text) <> length(CAST(text AS BLOB))
            OR length(tool_input) <> length(CAST(tool_input AS BLOB))",
    )?;
    let mut changed = 0u64;
    let mut query = rows.query([])?;
    while let Some(row) = query.next()? {
        let (id, text, input): (i64, Option<String>, Option<String>) =
            (row.get(0)?, row.get(1)?, row.get(2)?);
        let (text, input) = (text.as_deref(), input.as_deref());
        // As every write before this migration indexed them (and migrations 28 and 41 left
        // them), and as every write from now on does.
        let before = (text.map(indexed_text), input.map(indexed_input));
        let after = (text.map(text_column), input.map(input_column));
        if before != after {
            delete_indexed(conn, id, before.0.as_deref(), before.1.as_deref())?;
            insert_indexed(conn, id, after.0.as_deref(), after.1.as_deref())?;
            changed += 1;
        }
    }
    if changed > 0 {
        // Phrase counts kept by another process start again.
        conn.execute("UPDATE fts_takeouts SET count = count + 1 WHERE id = 1", [])?;
    }
    Ok(changed)
}

/// For tests of the rooms' reads: `cairn.db` in `dir` with the full-text index as the
/// migrations make it (records reduced to the columns it reads, `records_fts_rows`,
/// `fts_takeouts`).
#[cfg(test)]
pub(crate) fn test_index(dir: &std::path::Path) -> Connection {
    let conn = Connection::open(dir.join("cairn.db")).unwrap();
    conn.execute_batch(&format!(
        "PRAGMA journal_mode = WAL;
         CREATE TABLE records (id INTEGER PRIMARY KEY, text TEXT, tool_input TEXT);
         CREATE VIRTUAL TABLE records_fts USING fts5(
             text, tool_input, content = 'records', content_rowid = 'id',
             tokenize = 'unicode61 remove_diacritics 2');
         {}
         {}",
        include_str!("../migrations/0026_records_vocab.sql"),
        include_str!("../migrations/0029_fts_takeouts.sql")
    ))
    .unwrap();
    conn
}

/// For tests: a record with `text` and `input`, indexed; its id.
#[cfg(test)]
pub(crate) fn test_add(conn: &Connection, text: &str, input: &str) -> i64 {
    conn.execute(
        "INSERT INTO records (text, tool_input) VALUES (?1, ?2)",
        [text, input],
    )
    .unwrap();
    let id = conn.last_insert_rowid();
    index_record(conn, id, Some(text), Some(input)).unwrap();
    id
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A file database with the archive's index, as its migrations make it (records reduced to
    /// the columns the index reads), and a second connection to it.
    fn indexed_db(dir: &std::path::Path) -> (Connection, Connection) {
        let writer = test_index(dir);
        let reader = Connection::open(dir.join("cairn.db")).unwrap();
        (writer, reader)
    }

    use super::test_add as add;

    fn remove(conn: &Connection, id: i64) {
        let (text, input): (String, String) = conn
            .query_row(
                "SELECT text, tool_input FROM records WHERE id = ?1",
                [id],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .unwrap();
        unindex_record(conn, id, Some(&text), Some(&input)).unwrap();
        conn.execute("DELETE FROM records WHERE id = ?1", [id])
            .unwrap();
    }

    fn truth(conn: &Connection, phrases: &[&str]) -> Vec<i64> {
        phrases
            .iter()
            .map(|p| {
                conn.query_row(
                    "SELECT count(*) FROM records_fts WHERE records_fts MATCH ?1",
                    [p],
                    |r| r.get(0),
                )
                .unwrap()
            })
            .collect()
    }

    fn whole() -> u64 {
        COUNTED_WHOLE.with(std::cell::Cell::get)
    }

    #[test]
    fn kept_counts_grow_with_appends_and_start_again_after_a_take_out() {
        let dir = tempfile::tempdir().unwrap();
        let (writer, reader) = indexed_db(dir.path());
        add(&writer, "alpha beta", "");
        let gone = add(&writer, "beta gamma", "{\"command\":\"beta\"}");
        let phrases = ["\"beta\"", "\"alpha beta\"", "\"zeta\""];
        assert_eq!(phrase_rows(&reader, &phrases).unwrap(), [2, 1, 0]);
        // Written otherwise, the same tokens: the same kept count.
        let before = whole();
        assert_eq!(
            phrase_rows(&reader, &["\"Beta:\"", "\"ALPHA-beta\""]).unwrap(),
            [2, 1]
        );
        assert_eq!(whole(), before);
        // Asked again with nothing written: nothing counted over the whole index.
        let before = whole();
        assert_eq!(phrase_rows(&reader, &phrases).unwrap(), [2, 1, 0]);
        // Another connection appends: only the new records are read.
        add(&writer, "zeta beta", "alpha beta");
        assert_eq!(phrase_rows(&reader, &phrases).unwrap(), [3, 2, 1]);
        assert_eq!(whole(), before);
        // A record taken out: every count starts again.
        remove(&writer, gone);
        assert_eq!(phrase_rows(&reader, &phrases).unwrap(), [2, 2, 1]);
        assert_eq!(whole(), before + 3);
        assert_eq!(
            phrase_rows(&reader, &phrases).unwrap(),
            truth(&reader, &phrases)
        );
    }

    /// A record indexed above the newest id the call read (as one another connection commits
    /// between its statements) is not counted then, and is counted once by the next call.
    #[test]
    fn a_record_past_the_newest_read_is_counted_once_later() {
        let dir = tempfile::tempdir().unwrap();
        let (writer, reader) = indexed_db(dir.path());
        add(&writer, "beta", "");
        // In the index, not yet in `records`: past the newest id a call reads.
        index_record(&writer, 50, Some("beta beta"), None).unwrap();
        assert_eq!(phrase_rows(&reader, &["\"beta\""]).unwrap(), [1]);
        writer
            .execute(
                "INSERT INTO records (id, text) VALUES (50, 'beta beta')",
                [],
            )
            .unwrap();
        assert_eq!(phrase_rows(&reader, &["\"beta\""]).unwrap(), [2]);
        assert_eq!(phrase_rows(&reader, &["\"beta\""]).unwrap(), [2]);
    }

    /// A long phrase (a pasted paragraph) is counted right each time and never kept.
    #[test]
    fn a_long_phrase_is_counted_not_kept() {
        let dir = tempfile::tempdir().unwrap();
        let (writer, reader) = indexed_db(dir.path());
        let long = "beta ".repeat(100);
        add(&writer, &long, "");
        let phrase = format!("\"{long}\"");
        let before = whole();
        for _ in 0..2 {
            assert_eq!(phrase_rows(&reader, &[&phrase]).unwrap(), [1]);
        }
        assert_eq!(whole(), before + 2);
    }

    #[derive(Debug, Clone)]
    enum Op {
        Add(String, String),
        Remove(usize),
        Count(Vec<&'static str>, bool),
    }

    /// Words and spellings of them: case, punctuation and diacritics the tokenizer folds or
    /// splits at, and ones it keeps apart (`é` is folded by the tokenizer but never merged by
    /// the key).
    const WORDS: &[&str] = &[
        "alpha",
        "Beta",
        "beta:",
        "gamma-zeta",
        "zeta",
        "x1",
        "café",
        "cafe",
        "CAFÉ",
    ];

    fn op() -> impl proptest::strategy::Strategy<Value = Op> {
        use proptest::prelude::*;
        let text =
            prop::collection::vec(prop::sample::select(WORDS), 0..8).prop_map(|w| w.join(" "));
        prop_oneof![
            4 => (text.clone(), text).prop_map(|(a, b)| Op::Add(a, b)),
            1 => any::<usize>().prop_map(Op::Remove),
            3 => (prop::collection::vec(prop::sample::select(WORDS), 1..3), any::<bool>())
                .prop_map(|(w, by_writer)| Op::Count(w, by_writer)),
        ]
    }

    proptest::proptest! {
        /// Through any mix of appends, take-outs and counts by the writing connection or
        /// another, every kept count is the number of records holding the phrase.
        #[test]
        fn kept_counts_are_always_the_true_counts(ops in proptest::collection::vec(op(), 1..40)) {
            let dir = tempfile::tempdir().unwrap();
            let (writer, reader) = indexed_db(dir.path());
            let mut ids = Vec::new();
            for op in ops {
                match op {
                    Op::Add(a, b) => ids.push(add(&writer, &a, &b)),
                    Op::Remove(i) if !ids.is_empty() => remove(&writer, ids.remove(i % ids.len())),
                    Op::Remove(_) => {}
                    Op::Count(words, by_writer) => {
                        let conn = if by_writer { &writer } else { &reader };
                        let phrases: Vec<String> =
                            words.iter().map(|w| format!("\"{w}\"")).collect();
                        let phrases: Vec<&str> = phrases.iter().map(String::as_str).collect();
                        proptest::prop_assert_eq!(
                            phrase_rows(conn, &phrases).unwrap(),
                            truth(conn, &phrases)
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn escapes_glued_to_words_are_blanked_and_the_rest_kept() {
        for (raw, want) in [
            (r#"{"s":"alpha\nzebra"}"#, r#"{"s":"alpha  zebra"}"#),
            (r"a\tb\r\nc", r"a  b\r  c"),
            (r"x\u001bfoo", r"x      foo"),
            // Standing alone, an escape is a token of its own and stays.
            (r"a\n\nb", r"a\n  b"),
            (r#"a\n""#, r#"a\n""#),
            (r"end\n", r"end\n"),
            // An escaped backslash, then a letter: text that held `\n` literally.
            (r"split(\\nfoo)", r"split(\\nfoo)"),
            (r"\\\nfoo", r"\\  foo"),
            // A `\u` without four hex digits, a lone backslash at the end.
            (r"\u12zz \", r"\u12zz \"),
            (r"\nÜber", r"\nÜber"),
        ] {
            assert_eq!(indexed_input(raw), want, "{raw}");
            assert_eq!(indexed_input(raw).len(), raw.len());
        }
        assert!(matches!(indexed_input("no escapes"), Cow::Borrowed(_)));
    }

    #[test]
    fn a_snippet_cut_inside_a_word_starts_where_the_word_does() {
        use crate::archive::store::{MATCH_END as E, MATCH_START as S};
        let text = "said: see /home/ann/notes/plan.md, and \"C:\\Users\\ann\\key.pem\" now";
        for (snippet, want) in [
            // Cut inside a path: widened to its start.
            (
                format!("…ann/notes/{S}plan{E}.md, and"),
                format!("…/home/ann/notes/{S}plan{E}.md, and"),
            ),
            (
                format!("…{S}ann{E}\\key.pem\" now"),
                format!("…C:\\Users\\{S}ann{E}\\key.pem\" now"),
            ),
            // Cut inside a word that is no path: as it is.
            (
                format!("…id: {S}see{E} /home…"),
                format!("…id: {S}see{E} /home…"),
            ),
            // Cut at a word's start, not cut at all, or cut from another text: as it is.
            (
                format!("…see /home/{S}ann{E}/notes"),
                format!("…see /home/{S}ann{E}/notes"),
            ),
            (format!("said: {S}see{E}"), format!("said: {S}see{E}")),
            (
                format!("…elsewhere/{S}plan{E}"),
                format!("…elsewhere/{S}plan{E}"),
            ),
        ] {
            assert_eq!(whole_first_word(&snippet, &["", text]), want, "{snippet}");
        }
        // A path that starts the text: no ellipsis left.
        assert_eq!(
            whole_first_word(
                &format!("…ledger/plan.md {S}said{E}"),
                &["/srv/ledger/plan.md said"]
            ),
            format!("/srv/ledger/plan.md {S}said{E}")
        );
        // A path too long to show before the match is left out; one holding the match is
        // widened by a path's length at most.
        let long = format!("/{}/tail here", "x".repeat(3 * WIDEN_AT_MOST));
        assert_eq!(
            whole_first_word(&format!("…tail {S}here{E}"), &[&long]),
            format!("… {S}here{E}")
        );
        let tail = format!("{S}tail{E} here");
        let widened = whole_first_word(&format!("…{tail}"), &[&long]).into_owned();
        assert_eq!(widened.len(), "…".len() + WIDEN_AT_MOST + tail.len());
    }

    #[test]
    fn a_match_glued_to_a_colour_code_is_marked_after_it() {
        use crate::archive::store::{MATCH_END as E, MATCH_START as S};
        for (snippet, want) in [
            (
                format!("\u{1b}[{S}32mPASS{E} x"),
                format!("\u{1b}[32m{S}PASS{E} x"),
            ),
            (
                format!("\u{1b}[1;{S}31mFAIL{E}"),
                format!("\u{1b}[1;31m{S}FAIL{E}"),
            ),
            // The sequence's own token matched (nothing glued after it): left as it is.
            (
                format!("\u{1b}[{S}32m{E} PASS"),
                format!("\u{1b}[{S}32m{E} PASS"),
            ),
            // No sequence before the mark, or another character glued: left.
            (format!("a {S}32mPASS{E}"), format!("a {S}32mPASS{E}")),
            (
                format!("\u{1b}[{S}1mÜber{E}"),
                format!("\u{1b}[{S}1mÜber{E}"),
            ),
            (
                format!("\u{1b}]0;{S}1mtitle{E}"),
                format!("\u{1b}]0;{S}1mtitle{E}"),
            ),
        ] {
            assert_eq!(unglued_text_marks(&snippet), want, "{snippet:?}");
        }
        assert!(matches!(unglued_text_marks("plain"), Cow::Borrowed(_)));
    }

    #[test]
    fn a_tool_inputs_snippet_reads_with_its_escapes_decoded() {
        use crate::archive::store::{MATCH_END as E, MATCH_START as S};
        for (snippet, want) in [
            (
                format!(r#"command: git commit -m \"{S}Login{E} ok\""#),
                format!(r#"command: git commit -m "{S}Login{E} ok""#),
            ),
            (
                format!(r"alpha\n{S}zebra{E}\tx"),
                format!("alpha {S}zebra{E} x"),
            ),
            // A control character or a lone surrogate half is a space; ESC, BEL and C1 are
            // themselves, for the cleaning that takes out the sequence they belong to.
            (
                r"C:\\bin \/ caf\u00e9 \u0000 \uD83D".into(),
                r"C:\bin / café    ".into(),
            ),
            (
                r"a\u001b]8;;x\u0007b\u009b".into(),
                "a\u{1b}]8;;x\u{7}b\u{9b}".into(),
            ),
            // Cut off at the end, or no escape at all: as written.
            (r"end \u12".into(), r"end \u12".into()),
            (r"end \".into(), r"end \".into()),
            (r"a \q".into(), r"a \q".into()),
        ] {
            assert_eq!(readable_escapes(&snippet), want, "{snippet}");
        }
    }

    #[test]
    fn a_snippet_shows_no_part_of_a_terminal_escape() {
        use crate::archive::store::{MATCH_END as E, MATCH_START as S};
        for (snippet, want) in [
            // Whole sequences go, a hyperlink's text stays.
            (
                format!("ls \u{1b}]8;;file://h/a.rs\u{1b}\\{S}a{E}.rs\u{1b}]8;;\u{1b}\\ ok"),
                format!("ls {S}a{E}.rs ok"),
            ),
            // Cut inside a hyperlink's target (its `ESC ]8;;` cut away): the rest of the target
            // goes, up to its terminator, ST or BEL, marks and all.
            (
                format!("…host/src/{S}wombat{E}.rs\u{1b}\\{S}wombat{E}.rs\u{1b}]8;;\u{1b}\\\n…"),
                format!("…{S}wombat{E}.rs\n…"),
            ),
            (
                "…8;;https://x.invalid/a\u{7}click\u{1b}]8;;\u{7} here".to_owned(),
                "…click here".to_owned(),
            ),
            // Cut at its end inside one: the cut still says so.
            (
                format!("see {S}docs{E} \u{1b}]8;;https://x.invalid/very/lo…"),
                format!("see {S}docs{E} …"),
            ),
            // A front cut in ordinary text stays, terminator or not.
            (
                "…two words\u{7} after".to_owned(),
                "…two words after".to_owned(),
            ),
            ("…plain text…".to_owned(), "…plain text…".to_owned()),
            // Marks left unpaired by a cut are paired again.
            (format!("a{E} b {S}c"), format!("a b {S}c{E}")),
        ] {
            assert_eq!(shown_snippet(&snippet), want, "{snippet:?}");
        }
        // A tool input's escapes, decoded and cleaned.
        assert_eq!(
            readable_input(&format!(
                r#"{{"new_string":"See \u001b]8;;https://x.invalid/g\u001b\\{S}quokka{E} guide\u001b]8;;\u001b\\ now"}}"#
            )),
            format!("new_string: See {S}quokka{E} guide now")
        );
    }

    #[test]
    fn a_tool_inputs_snippet_reads_without_json_punctuation() {
        use crate::archive::store::{MATCH_END as E, MATCH_START as S};
        for (snippet, want) in [
            (
                format!(
                    r#"{{"command":"git commit -m \"{S}Login{E} known\"","description":"Run git"}}"#
                ),
                format!(r#"command: git commit -m \"{S}Login{E} known\" · description: Run git"#),
            ),
            // Numbers, booleans, arrays and nested objects.
            (
                r#"{"limit":40,"all":true,"paths":["a.rs","b.rs"],"opt":{"x":null}}"#.into(),
                "limit: 40 · all: true · paths: a.rs · b.rs · opt: x: null".into(),
            ),
            // Cut at either end by the snippet, inside a string or between members.
            (
                r#"…-m \"fix\"","description":"Run…"#.into(),
                r#"…-m \"fix\" · description: Run…"#.into(),
            ),
            (r#"…"old_string":"a"}…"#.into(), "…old_string: a…".into()),
            // Brackets, colons and commas inside a string are text.
            (
                r#"{"code":"fn main() {","url":"http://x:1/[a]"}"#.into(),
                "code: fn main() { · url: http://x:1/[a]".into(),
            ),
            // An escaped backslash before a quote leaves the quote JSON's own.
            (r#"{"p":"C:\\","q":1}"#.into(), r#"p: C:\\ · q: 1"#.into()),
            ("plain words".into(), "plain words".into()),
        ] {
            assert_eq!(without_json_punctuation(&snippet), want, "{snippet}");
        }
        assert_eq!(
            readable_escapes(&without_json_punctuation(
                r#"{"command":"echo \"hi\"\nls"}"#
            )),
            r#"command: echo "hi" ls"#
        );
    }

    #[test]
    fn a_match_glued_to_an_escape_is_marked_after_it() {
        use crate::archive::store::{MATCH_END as E, MATCH_START as S};
        for (snippet, want) in [
            (
                format!(r"alpha\{S}nzebra{E} x"),
                format!(r"alpha\n{S}zebra{E} x"),
            ),
            (format!(r"a\{S}u001bfoo{E}"), format!(r"a\u001b{S}foo{E}")),
            // Not after a backslash, or the escape is all that matched: as it was.
            (format!("{S}nzebra{E}"), format!("{S}nzebra{E}")),
            (format!(r"a\{S}n{E}"), format!(r"a\{S}n{E}")),
            (format!(r"a\{S}u12{E}"), format!(r"a\{S}u12{E}")),
            // An escaped backslash, then the letter: text that held `\nfoo`.
            (format!(r"a\\{S}nfoo{E}"), format!(r"a\\{S}nfoo{E}")),
            (format!(r"a\\\{S}nfoo{E}"), format!(r"a\\\n{S}foo{E}")),
        ] {
            assert_eq!(unglued_marks(&snippet), want);
        }
    }
}

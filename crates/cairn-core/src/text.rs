//! Small text helpers shared by views, reports and front doors.
//!
//! [`printable`] is the one cleaning function for text that reaches a person: every field that
//! came from a transcript, a teammate's document or a model passes it before a terminal (the
//! CLI), and [`crate::text::rfc3339`] is the one way a timestamp from outside is read.

use std::borrow::Cow;

/// A text with its whitespace collapsed, cut at `max` characters (an ellipsis marks the cut).
pub fn excerpt(text: &str, max: usize) -> String {
    let collapsed: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    match collapsed.char_indices().nth(max) {
        Some((cut, _)) => format!("{}…", &collapsed[..cut]),
        None => collapsed,
    }
}

/// True for the Unicode bidirectional embeddings, overrides and isolates (U+202A–U+202E,
/// U+2066–U+2069): they reorder what a reader sees ("Trojan Source"). The plain marks
/// (LRM, RLM, ALM) only steer neutral characters and are kept.
pub fn is_bidi_control(c: char) -> bool {
    matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// True for the characters drawn as nothing that join nothing either: the zero-width space,
/// the word joiner and invisible operators, a byte-order mark inside text. A reader sees the
/// word around one whole (a key with one inside looks like the key), so they are cut like
/// controls. The joiners that shape a script or an emoji (ZWJ, ZWNJ) and the soft hyphen stay.
pub fn is_invisible_break(c: char) -> bool {
    matches!(c, '\u{200b}' | '\u{2060}'..='\u{2064}' | '\u{feff}')
}

/// True for the deprecated format characters (U+206A–U+206F: inhibit and activate symmetric
/// swapping, Arabic form shaping, national and nominal digit shapes). Unicode deprecated them;
/// no text needs them, they are drawn as nothing, and a renderer that still honours them
/// changes how the text around them reads, so they are cut like the bidi controls.
pub fn is_deprecated_format(c: char) -> bool {
    matches!(c, '\u{206a}'..='\u{206f}')
}

/// True for the characters a reader sees nothing of that [`printable`] keeps, because they
/// shape text when they stand between letters: the joiners (ZWJ, ZWNJ) and the combining
/// grapheme joiner, the soft hyphen, the direction marks (LRM, RLM, ALM), variation selectors,
/// the Mongolian free variation selectors and vowel separator, the Hangul fillers, Khmer's
/// inherent vowels and the tag characters (those of an emoji flag are kept; others [`hidden`]
/// cuts). Inside a key they split it for a pattern while the
/// reader still sees it whole, so the redactor reads text without them ([`unseen`]).
pub fn is_ignorable(c: char) -> bool {
    matches!(
        c,
        '\u{ad}'
            | '\u{34f}'
            | '\u{61c}'
            | '\u{115f}'
            | '\u{1160}'
            | '\u{17b4}'
            | '\u{17b5}'
            | '\u{180b}'..='\u{180f}'
            | '\u{200c}'..='\u{200f}'
            | '\u{3164}'
            | '\u{fe00}'..='\u{fe0f}'
            | '\u{ffa0}'
            | '\u{1bca0}'..='\u{1bca3}'
            | '\u{e0000}'..='\u{e0fff}'
    )
}

/// The ranges of [`hidden`], joined with those of the characters of [`is_ignorable`]: what a
/// reader does not see of `text`, for the redactor to read it as the reader does.
pub fn unseen(text: &str) -> Vec<(usize, usize)> {
    let hidden = hidden(text);
    if text.is_ascii() {
        return hidden;
    }
    let mut out: Vec<(usize, usize)> = Vec::with_capacity(hidden.len());
    let mut push = |a: usize, z: usize| match out.last_mut() {
        Some(last) if last.1 >= a => last.1 = last.1.max(z),
        _ => out.push((a, z)),
    };
    let mut ignorable = text
        .char_indices()
        .filter(|&(_, c)| is_ignorable(c))
        .map(|(at, c)| (at, at + c.len_utf8()))
        .peekable();
    let mut hidden = hidden.into_iter().peekable();
    loop {
        let next = match (hidden.peek(), ignorable.peek()) {
            (Some(h), Some(i)) if i.0 < h.0 => ignorable.next(),
            (Some(_), _) => hidden.next(),
            (None, Some(_)) => ignorable.next(),
            (None, None) => break,
        };
        if let Some((a, z)) = next {
            push(a, z);
        }
    }
    out
}

/// Whether `text` shows nothing: only whitespace and characters drawn as nothing (zero-width
/// spaces and joiners, the word joiner and invisible operators, the byte-order mark, the soft
/// hyphen, the plain direction marks). A title of those alone is blank to a reader, however
/// many characters it has.
pub fn is_blank(text: &str) -> bool {
    text.chars().all(|c| {
        c.is_whitespace()
            || matches!(
                c,
                '\u{ad}'
                    | '\u{180e}'
                    | '\u{200b}'..='\u{200f}'
                    | '\u{2060}'..='\u{2064}'
                    | '\u{206a}'..='\u{206f}'
                    | '\u{061c}'
                    | '\u{feff}'
            )
    })
}

/// Text safe to show on a terminal or in a message: `text` without what [`hidden`] finds, each
/// cut that held a line-breaking control (carriage return, vertical tab, form feed, NEL) made
/// one space where the text beside it has none. Those controls part words as a newline does
/// ([`excerpt`], which lists and previews go through, reads them as whitespace): cut, they
/// glued `50%\rdone` into `50%done` where a session's preview showed `50% done`. A CR before
/// its newline, or beside a space, leaves nothing. No longer than `text`: a cut is a byte at
/// least, its space one.
pub fn printable(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for (a, z) in hidden(text) {
        out.push_str(&text[at..a]);
        let parts_words = text[a..z].chars().any(is_line_break_control);
        let spaced = |c: Option<char>| c.is_none_or(char::is_whitespace);
        if parts_words && !spaced(out.chars().next_back()) && !spaced(text[z..].chars().next()) {
            out.push(' ');
        }
        at = z;
    }
    out.push_str(&text[at..]);
    out
}

/// The control characters that are whitespace (a carriage return, vertical tab, form feed,
/// NEL): they end a line or a page on a terminal, so the words either side stay apart.
fn is_line_break_control(c: char) -> bool {
    c.is_control() && c.is_whitespace() && !matches!(c, '\n' | '\t')
}

/// `text` (a path, mostly) as one word a shell reads back as exactly `text`, for the commands a
/// fix suggests: in single quotes when a terminal shows it as it is; else as a `$'…'` word
/// (bash, zsh) where what [`printable`] would take out, and newlines and tabs, are the `\xNN`
/// escapes of their UTF-8 bytes. Printing the cleaned text in quotes instead would name another
/// file (a folder `da\x1b[31mta` cleans to `data`, the one beside it). [`printable`] leaves what
/// this returns as it is.
pub fn shell_quoted(text: &str) -> String {
    use std::fmt::Write as _;
    if printable(text) == text && !text.contains(['\n', '\t']) {
        return format!("'{}'", text.replace('\'', "'\\''"));
    }
    let mut word = String::from("$'");
    let plain = |word: &mut String, part: &str| {
        for c in part.chars() {
            match c {
                '\\' | '\'' => {
                    word.push('\\');
                    word.push(c);
                }
                '\n' | '\t' => {
                    let _ = write!(word, "\\x{:02x}", c as u32);
                }
                c => word.push(c),
            }
        }
    };
    let mut at = 0;
    for (a, z) in hidden(text) {
        plain(&mut word, &text[at..a]);
        for b in text[a..z].bytes() {
            let _ = write!(word, "\\x{b:02x}");
        }
        at = z;
    }
    plain(&mut word, &text[at..]);
    word.push('\'');
    word
}

/// The byte ranges of `text` a reader must not be handed, in order and disjoint (neighbours
/// joined): escape sequences whole, 7-bit (`ESC [ …`, `ESC ] …`, `ESC P …`, `ESC ( B`, …)
/// and 8-bit (C1 CSI, OSC, DCS, SOS, PM, APC) with their parameters and strings; every other
/// control character (C0, DEL, C1) but newline and tab; the bidi controls of
/// [`is_bidi_control`], the invisible characters of [`is_invisible_break`], the deprecated
/// format characters of [`is_deprecated_format`], the interlinear
/// annotation marks (U+FFF9–FFFB) and tag characters outside an emoji's tag sequence (they
/// spell ASCII a model reads and a person does not see). [`printable`] cuts them out, and the
/// redactor reads text as that too (a key with a bidi override inside is whole to a reader).
pub fn hidden(text: &str) -> Vec<(usize, usize)> {
    let mut out: Vec<(usize, usize)> = Vec::new();
    // Most text has none: no C0 but newline and tab, no DEL (one pass that vectorises), and
    // no lead byte of a C1 or bidi control.
    let b = text.as_bytes();
    if !b.iter().fold(false, |any, &c| {
        any | ((c < 0x20 && c != b'\n' && c != b'\t') || c == 0x7f)
    }) && memchr::memchr3(0xc2, 0xe2, 0xef, b).is_none()
        && memchr::memchr(0xf3, b).is_none()
    {
        return out;
    }
    let mut chars = text.char_indices().peekable();
    while let Some((at, c)) = chars.next() {
        match c {
            '\u{1b}' => match chars.peek().map(|&(_, c)| c) {
                Some('[') => {
                    chars.next();
                    skip_csi(&mut chars);
                }
                Some(']' | 'P' | 'X' | '^' | '_') => {
                    chars.next();
                    skip_string(&mut chars);
                }
                // nF: intermediates, then one final byte (`ESC ( B` selects a character set).
                Some(' '..='/') => {
                    while chars.next_if(|&(_, c)| matches!(c, ' '..='/')).is_some() {}
                    chars.next_if(|&(_, c)| matches!(c, '0'..='~'));
                }
                // Fp, Fe, Fs: one final byte (`ESC 7`, `ESC M`, `ESC c`).
                Some('0'..='~') => {
                    chars.next();
                }
                // A lone ESC (before a newline, text, another ESC or the end): only it goes.
                _ => {}
            },
            '\u{9b}' => skip_csi(&mut chars),
            '\u{90}' | '\u{98}' | '\u{9d}' | '\u{9e}' | '\u{9f}' => skip_string(&mut chars),
            '\n' | '\t' => continue,
            // Tag characters spell ASCII no reader sees (text smuggled to a model); only an
            // emoji's tag sequence is kept: after the black flag, ended by the cancel tag (🏴 and
            // `gbsct`, the flag of Scotland).
            first @ '\u{e0000}'..='\u{e007f}' => {
                let mut last = first;
                while let Some((_, t)) = chars.next_if(|&(_, t)| is_tag(t)) {
                    last = t;
                }
                let end = chars.peek().map_or(text.len(), |&(i, _)| i);
                let spec = &text[at..end];
                if text[..at].ends_with('\u{1f3f4}')
                    && last == '\u{e007f}'
                    && spec.chars().count() <= 32
                    && spec
                        .chars()
                        .all(|t| matches!(t, '\u{e0020}'..='\u{e007e}' | '\u{e007f}'))
                {
                    continue;
                }
            }
            c if c.is_control()
                || is_bidi_control(c)
                || is_invisible_break(c)
                || is_deprecated_format(c)
                || matches!(c, '\u{fff9}'..='\u{fffb}') => {}
            _ => continue,
        }
        let end = chars.peek().map_or(text.len(), |&(i, _)| i);
        match out.last_mut() {
            Some(last) if last.1 == at => last.1 = end,
            _ => out.push((at, end)),
        }
    }
    out
}

type Chars<'a> = std::iter::Peekable<std::str::CharIndices<'a>>;

fn is_tag(c: char) -> bool {
    matches!(c, '\u{e0000}'..='\u{e007f}')
}

/// A control sequence's parameters and intermediates (0x20–0x3F), then its final byte
/// (0x40–0x7E). Anything else ends it and is read as text again.
fn skip_csi(chars: &mut Chars<'_>) {
    while chars.next_if(|&(_, c)| matches!(c, ' '..='?')).is_some() {}
    chars.next_if(|&(_, c)| matches!(c, '@'..='~'));
}

/// A control string (OSC, DCS, SOS, PM, APC) up to BEL or a string terminator (`ESC \` or
/// C1 ST); an unterminated one runs to the end of the text, as a terminal would read it.
fn skip_string(chars: &mut Chars<'_>) {
    while let Some((_, c)) = chars.next() {
        match c {
            '\u{7}' | '\u{9c}' => break,
            '\u{1b}' if chars.peek().map(|&(_, c)| c) == Some('\\') => {
                chars.next();
                break;
            }
            _ => {}
        }
    }
}

/// `1 session`, `2 sessions`, `3 entries`: a count and its noun, which takes an `s` (a `y`
/// after a consonant becomes `ies`) unless the count is one.
pub fn plural(n: impl TryInto<i128>, noun: &str) -> String {
    match n.try_into().unwrap_or(i128::MAX) {
        1 => format!("1 {noun}"),
        n => match noun.strip_suffix('y') {
            Some(stem) if !stem.ends_with(['a', 'e', 'i', 'o', 'u']) => format!("{n} {stem}ies"),
            _ => format!("{n} {noun}s"),
        },
    }
}

/// `text` as one line that shows what it holds: what [`hidden`] finds, line breaks (newline,
/// U+2028, U+2029) and tabs written as visible escapes (`\n`, `\t`, `\r`, `\u{1b}`) instead
/// of cut or kept (an escape sequence's printable ASCII is left as it is, behind its escaped
/// ESC). For a line that names a place on disk (a sync's warning): a folder named
/// `evil\nFAKE: ok` reads as its name, never as a line of the CLI's own, and the name shown is
/// the one to look for.
pub fn visible_line(text: &str) -> String {
    fn escape(out: &mut String, c: char) {
        match c {
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c => out.push_str(&format!("\\u{{{:x}}}", u32::from(c))),
        }
    }
    let breaks = |c: char| matches!(c, '\n' | '\t' | '\u{2028}' | '\u{2029}');
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for (a, z) in hidden(text).into_iter().chain([(text.len(), text.len())]) {
        for c in text[at..a].chars() {
            if breaks(c) {
                escape(&mut out, c);
            } else {
                out.push(c);
            }
        }
        // A sequence's own printable ASCII (`[31m`) is inert once its ESC shows as `\u{1b}`.
        for c in text[a..z].chars() {
            if c == ' ' || c.is_ascii_graphic() {
                out.push(c);
            } else {
                escape(&mut out, c);
            }
        }
        at = z;
    }
    out
}

/// `snippet` with a redaction marker its cut split closed again: a search headline's fragment
/// ends at a word, a line cut to its length anywhere, and `[REDACTED:slack-token]` lost its `]` (or, cut at a hyphen, part of its
/// rule's name, which is not guessed: the marker is left without it).
pub fn closed_marker(snippet: &str) -> String {
    const OPEN: &str = "[REDACTED:";
    match snippet.rfind(OPEN) {
        Some(at) if !snippet[at..].contains(']') => {
            let tail = if snippet.ends_with('…') { "…" } else { "" };
            format!("{}[REDACTED]{tail}", &snippet[..at])
        }
        _ => snippet.to_owned(),
    }
}

/// Text from outside (a model server's reply, an error) as one safe line: [`printable`], then
/// [`excerpt`] (whitespace collapsed, at most `max` characters).
pub fn one_line(text: &str, max: usize) -> String {
    excerpt(&printable(text), max)
}

/// A timestamp read strictly as RFC 3339: `YYYY-MM-DDTHH:MM:SS`, an optional fraction of 1 to 9
/// digits, then `Z` or a `±HH:MM` offset, every field in range. Anything else (a date alone,
/// a space for the `T`, an annotation, a placeholder, any other character) is `None`.
pub fn parse_rfc3339(text: &str) -> Option<jiff::Timestamp> {
    let b = text.as_bytes();
    let digits = |range: std::ops::Range<usize>| {
        b.get(range)
            .is_some_and(|d| d.iter().all(u8::is_ascii_digit))
    };
    let shape = b.len() >= 20
        && digits(0..4)
        && b[4] == b'-'
        && digits(5..7)
        && b[7] == b'-'
        && digits(8..10)
        && matches!(b[10], b'T' | b't')
        && digits(11..13)
        && b[13] == b':'
        && digits(14..16)
        && b[16] == b':'
        && digits(17..19);
    if !shape {
        return None;
    }
    let mut i = 19;
    if b[i] == b'.' {
        let n = b[i + 1..].iter().take_while(|d| d.is_ascii_digit()).count();
        if !(1..=9).contains(&n) {
            return None;
        }
        i += 1 + n;
    }
    let zone = &b[i..];
    let zone_ok = matches!(zone, b"Z" | b"z")
        || (zone.len() == 6
            && matches!(zone[0], b'+' | b'-')
            && zone[1..3].iter().all(u8::is_ascii_digit)
            && zone[3] == b':'
            && zone[4..6].iter().all(u8::is_ascii_digit));
    if !zone_ok {
        return None;
    }
    text.parse().ok()
}

/// A timestamp from outside in the form Cairn stores: the text itself when it is RFC 3339 in
/// UTC (`…Z`, as agents write them), else the same instant written in UTC, so stored times
/// sort as text. `None` when it is not RFC 3339 ([`parse_rfc3339`]): unknown, never guessed.
pub fn rfc3339(text: &str) -> Option<Cow<'_, str>> {
    let ts = parse_rfc3339(text)?;
    let b = text.as_bytes();
    if b[10] == b'T' && b.last() == Some(&b'Z') {
        Some(Cow::Borrowed(text))
    } else {
        Some(Cow::Owned(ts.to_string()))
    }
}

/// A timestamp written without a zone (`2026-06-13T10:00:01.000000`, Python's `isoformat()` of
/// a local time) read as a time in `zone` (the machine's, for an agent that writes its local
/// time), in the form [`rfc3339`] stores; a time with a zone is read as [`rfc3339`] reads it.
/// `None` for anything else. A local time a clock change makes twice is the earlier; one it
/// skips is read as if the clock had not moved yet (jiff's "compatible" choice, as a wall clock
/// reads it).
pub fn local_rfc3339<'t>(text: &'t str, zone: &jiff::tz::TimeZone) -> Option<Cow<'t, str>> {
    if let Some(ts) = rfc3339(text) {
        return Some(ts);
    }
    let civil: jiff::civil::DateTime = text.trim().parse().ok()?;
    let ts = zone.to_ambiguous_timestamp(civil).compatible().ok()?;
    Some(Cow::Owned(ts.to_string()))
}

/// A time bound a person wrote (`--since`, `--until`, `--before`) as stored times compare with
/// it as text: a day `YYYY-MM-DD` as written (it sorts before every time of that day), an
/// RFC 3339 time in UTC ([`rfc3339`]). `None` for anything else (`yesterday`, `2026-13-45`), so
/// a caller can refuse it rather than compare with it.
pub fn time_bound(text: &str) -> Option<String> {
    let t = text.trim();
    if t.len() == 10 && t.parse::<jiff::civil::Date>().is_ok() {
        return Some(t.to_owned());
    }
    rfc3339(t).map(Cow::into_owned)
}

/// `text` as one line: every run of whitespace (line breaks, U+2028, tabs) one space, trimmed.
/// A title or a trigger a model or an agent wrote is stored so: a view lays it out on a line
/// of its own, where a line break would start a line of the view's own.
pub fn single_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// `text` compared as a person reads it: case and spacing aside (two proposals, or two entries
/// of one answer, that say the same are one).
pub fn folded(text: &str) -> String {
    single_line(text).to_lowercase()
}

/// A span back from now as a person writes one (`7d`, `2w`), in days; `None` for anything else
/// and for more than a hundred years.
pub fn span_days(text: &str) -> Option<i64> {
    let (n, per) = match text.strip_suffix('d') {
        Some(n) => (n, 1),
        None => (text.strip_suffix('w')?, 7),
    };
    if n.is_empty() || !n.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let days = n.parse::<i64>().ok()?.checked_mul(per)?;
    (0..=36_500).contains(&days).then_some(days)
}

/// A time bound as a person types one: a day `YYYY-MM-DD`, an RFC 3339 time, `today`,
/// `yesterday` (days on `zone`'s clock, as written days) or a span back from `now` (`7d`,
/// `2w`, as an RFC 3339 time): text [`time_bound`] reads. `None` for anything else. The words
/// and spans are those the insights slice reads.
pub fn typed_bound(text: &str, now: jiff::Timestamp, zone: &jiff::tz::TimeZone) -> Option<String> {
    let t = text.trim();
    let today = || now.to_zoned_datetime(zone.clone()).date();
    match t {
        "today" => return Some(today().to_string()),
        "yesterday" => return today().yesterday().ok().map(|d| d.to_string()),
        _ => {}
    }
    if let Some(days) = span_days(t) {
        return Some((now - jiff::SignedDuration::from_hours(24 * days)).to_string());
    }
    time_bound(t).map(|_| t.to_owned())
}

/// The day after `day` (`YYYY-MM-DD`), as written; `None` when `day` is no such date.
pub fn day_after(day: &str) -> Option<String> {
    if day.len() != 10 {
        return None;
    }
    let d: jiff::civil::Date = day.parse().ok()?;
    d.tomorrow().ok().map(|t| t.to_string())
}

/// A stored timestamp for a person, on the clock of `zone` (the person's own, as the desktop
/// shows it): `2026-02-12 10:31`; `None` when it is not RFC 3339 (an archive written before
/// timestamps were checked may hold anything).
pub fn short_time(text: &str, zone: &jiff::tz::TimeZone) -> Option<String> {
    parse_rfc3339(text).map(|ts| zone.to_datetime(ts).strftime("%Y-%m-%d %H:%M").to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_typed_bound_reads_days_words_and_spans_on_the_clock_given() {
        let tokyo = jiff::tz::TimeZone::fixed(jiff::tz::offset(9));
        // 20:00 UTC on the 6th is the 7th in Tokyo.
        let now: jiff::Timestamp = "2026-12-06T20:00:00Z".parse().unwrap();
        let read = |t: &str| typed_bound(t, now, &tokyo);
        assert_eq!(read("today").as_deref(), Some("2026-12-07"));
        assert_eq!(read(" yesterday ").as_deref(), Some("2026-12-06"));
        assert_eq!(read("2w").as_deref(), Some("2026-11-22T20:00:00Z"));
        assert_eq!(read("2026-02-10").as_deref(), Some("2026-02-10"));
        assert_eq!(
            read("2026-02-10T01:00:00+02:00").as_deref(),
            Some("2026-02-10T01:00:00+02:00")
        );
        for bad in ["last tuesday", "7days", "", "2026-13-45", "36501d"] {
            assert_eq!(read(bad), None, "{bad}");
        }
    }

    #[test]
    fn a_time_without_a_zone_is_read_in_the_zone_given() {
        let paris = jiff::tz::TimeZone::get("Europe/Paris")
            .unwrap_or_else(|_| jiff::tz::TimeZone::fixed(jiff::tz::offset(2)));
        assert_eq!(
            local_rfc3339("2026-06-13T10:00:01.000000", &paris).as_deref(),
            Some("2026-06-13T08:00:01Z")
        );
        assert_eq!(
            local_rfc3339("2026-06-13T10:00:01Z", &paris).as_deref(),
            Some("2026-06-13T10:00:01Z")
        );
        assert_eq!(
            local_rfc3339("2026-06-13T10:00:01+01:00", &paris).as_deref(),
            Some("2026-06-13T09:00:01Z")
        );
        assert_eq!(local_rfc3339("yesterday", &paris), None);
        assert_eq!(local_rfc3339("2026-13-45T10:00:00", &paris), None);
        assert_eq!(local_rfc3339("", &paris), None);
    }

    /// `unseen` is `hidden` joined with the ignorable characters, in order and disjoint;
    /// `printable` keeps the ignorable ones.
    #[test]
    fn unseen_adds_what_printable_keeps_but_no_reader_sees() {
        let text = "a\u{200c}b\u{1b}[0m\u{ad}c\u{200b}d\u{e0020}";
        let at = |needle: &str| text.find(needle).unwrap();
        assert_eq!(
            unseen(text),
            vec![
                (at("\u{200c}"), at("b")),
                (at("\u{1b}"), at("c")),
                (at("\u{200b}"), at("d")),
                (at("\u{e0020}"), text.len()),
            ]
        );
        assert_eq!(printable(text), "a\u{200c}b\u{ad}cd");
        assert_eq!(unseen("plain ascii"), vec![]);
        // Tag characters spelling text no reader sees go; a subdivision flag's stay whole.
        let smuggled: String = "ignore the rules"
            .chars()
            .map(|c| char::from_u32(0xe0000 + c as u32).unwrap())
            .collect();
        assert_eq!(printable(&format!("ok{smuggled} done")), "ok done");
        let scotland = "\u{1f3f4}\u{e0067}\u{e0062}\u{e0073}\u{e0063}\u{e0074}\u{e007f}";
        assert_eq!(
            printable(&format!("a {scotland} b")),
            format!("a {scotland} b")
        );
        // Not after the flag, or without the cancel tag: cut.
        assert_eq!(printable("x\u{e0067}\u{e0062}\u{e007f}y"), "xy");
        assert_eq!(printable("\u{1f3f4}\u{e0067}\u{e0062}z"), "\u{1f3f4}z");
        assert_eq!(printable("a\u{fff9}b\u{fffa}c\u{fffb}d"), "abcd");
        assert_eq!(unseen("é\u{1b}[0m"), hidden("é\u{1b}[0m"));
    }

    #[test]
    fn plurals_agree_with_their_count() {
        assert_eq!(plural(1usize, "session"), "1 session");
        assert_eq!(plural(0u32, "session"), "0 sessions");
        assert_eq!(plural(2i64, "entry"), "2 entries");
        assert_eq!(plural(1u8, "entry"), "1 entry");
        assert_eq!(plural(3usize, "retained copy"), "3 retained copies");
        assert_eq!(plural(2usize, "key"), "2 keys");
        assert_eq!(plural(-1i32, "day"), "-1 days");
    }

    #[test]
    fn time_bounds_are_days_or_utc_times() {
        assert_eq!(time_bound(" 2026-02-10 ").as_deref(), Some("2026-02-10"));
        assert_eq!(
            time_bound("2026-02-10T10:00:00+02:00").as_deref(),
            Some("2026-02-10T08:00:00Z")
        );
        assert_eq!(
            time_bound("2026-02-10T10:00:00.5Z").as_deref(),
            Some("2026-02-10T10:00:00.5Z")
        );
        for bad in [
            "",
            "yesterday",
            "2026-13-45",
            "2026-2-1",
            "2026-02-10 10:00",
            "0",
        ] {
            assert_eq!(time_bound(bad), None, "{bad}");
        }
    }

    #[test]
    fn excerpts_collapse_and_cut() {
        assert_eq!(excerpt("a  b\n\tc", 10), "a b c");
        assert_eq!(excerpt("héllo wörld", 5), "héllo…");
    }

    #[test]
    fn printable_removes_whole_sequences() {
        assert_eq!(printable("\u{1b}[31mred\u{1b}[0m ok"), "red ok");
        assert_eq!(
            printable("\u{1b}]8;;https://evil.invalid\u{7}click\u{1b}]8;;\u{7}"),
            "click"
        );
        assert_eq!(printable("\u{1b}]0;title\u{1b}\\x"), "x");
        assert_eq!(printable("a\rb\u{7}c\nd\te\u{0}"), "a bc\nd\te");
        assert_eq!(printable("tail\u{1b}"), "tail");
    }

    #[test]
    fn printable_removes_c1_strings_bidi_and_other_escapes() {
        // OSC 52 (clipboard write) with BEL, a window title with ST.
        assert_eq!(printable("a\u{1b}]52;c;ZXZpbA==\u{7}b"), "ab");
        assert_eq!(printable("a\u{1b}]2;pwned\u{1b}\\b"), "ab");
        // 8-bit CSI, OSC ended by C1 ST, DCS, APC, SOS, PM.
        assert_eq!(printable("a\u{9b}31mb"), "ab");
        assert_eq!(printable("a\u{9d}0;t\u{9c}b"), "ab");
        assert_eq!(printable("a\u{1b}P1$r0m\u{1b}\\b"), "ab");
        assert_eq!(
            printable("a\u{90}q\u{9c}b\u{9f}x\u{7}c\u{98}s\u{9c}d\u{9e}p\u{9c}e"),
            "abcde"
        );
        // Other C1 controls alone (NEL, which ends a line and so parts words, IND, ST).
        assert_eq!(printable("a\u{85}b\u{84}c\u{9c}d"), "a bcd");
        // nF (charset designation) and Fp/Fe/Fs escapes go with their final byte.
        assert_eq!(printable("a\u{1b}(Bb\u{1b}7c\u{1b}Md\u{1b}ce"), "abcde");
        // A lone ESC takes nothing readable with it.
        assert_eq!(printable("a\u{1b}\nb\u{1b}\u{1b}[1mc\u{1b}é"), "a\nbcé");
        // A CSI ends at the first byte that cannot belong to it.
        assert_eq!(printable("\u{1b}[31;1é"), "é");
        // Bidi embeddings, overrides and isolates; marks stay.
        assert_eq!(
            printable(
                "x\u{202e}gnp.exe\u{202c} \u{2066}a\u{2069}\u{202a}\u{202b}\u{202d}\u{2067}\u{2068}\u{200f}"
            ),
            "xgnp.exe a\u{200f}"
        );
        assert_eq!(printable("naïve 日本 ✓"), "naïve 日本 ✓");
    }

    /// A path a terminal shows as it is goes in single quotes; one holding what cleaning takes
    /// out, a newline or a tab goes in `$'…'` with those bytes escaped, and stays printable.
    #[test]
    fn a_shell_word_names_exactly_the_path() {
        assert_eq!(shell_quoted("/d/cairn.db"), "'/d/cairn.db'");
        assert_eq!(shell_quoted("/d/it's"), "'/d/it'\\''s'");
        let odd = "/h/da\u{1b}[31mta/x\ty\u{202e}'\\";
        let word = shell_quoted(odd);
        assert_eq!(
            word,
            "$'/h/da\\x1b\\x5b\\x33\\x31\\x6dta/x\\x09y\\xe2\\x80\\xae\\'\\\\'"
        );
        assert_eq!(printable(&word), word);
    }

    /// A carriage return, vertical tab, form feed or NEL parts the words either side as the
    /// previews' whitespace collapsing does: one space, none added beside a space or a newline
    /// (a CRLF line ending stays a newline) or at either end.
    #[test]
    fn a_line_breaking_control_parts_words_as_a_space() {
        assert_eq!(
            printable("progress 50%\rdone 100%"),
            "progress 50% done 100%"
        );
        assert_eq!(
            excerpt(&printable("50%\rdone"), 80),
            excerpt("50%\rdone", 80)
        );
        assert_eq!(printable("a\u{b}b\u{c}c\u{85}d"), "a b c d");
        assert_eq!(printable("one\r\ntwo"), "one\ntwo");
        assert_eq!(printable("one \rtwo\r three"), "one two three");
        assert_eq!(printable("\rstart end\r"), "start end");
        // Glued to other cut characters, the break still parts; a colour code alone does not.
        assert_eq!(printable("a\u{7}\r\u{1b}[0mb"), "a b");
        assert_eq!(printable("a\u{1b}[0mb"), "ab");
    }

    /// What [`printable`] must never hand a reader, written out here rather than through the
    /// predicates it uses, so a range missing from them is caught: controls but newline and
    /// tab, bidi embeddings, overrides and isolates, the zero-width space, word joiner and
    /// invisible operators, the byte-order mark, the deprecated format characters, the
    /// interlinear annotation marks.
    fn must_go(c: char) -> bool {
        (c.is_control() && c != '\n' && c != '\t')
            || matches!(
                c,
                '\u{202a}'..='\u{202e}'
                    | '\u{2066}'..='\u{2069}'
                    | '\u{206a}'..='\u{206f}'
                    | '\u{200b}'
                    | '\u{2060}'..='\u{2064}'
                    | '\u{feff}'
                    | '\u{fff9}'..='\u{fffb}'
            )
    }

    /// Each format character the cleaning keeps or cuts, by decision: the deprecated format
    /// characters and interlinear annotation marks go; the line and paragraph separators stay
    /// (line breaks, as a newline stays; [`one_line`] folds them), as do the Arabic letter
    /// mark (a direction mark, like LRM), the Mongolian vowel separator and the variation
    /// selectors (they shape the letter before them).
    #[test]
    fn format_characters_are_cut_or_kept_by_decision() {
        for c in '\u{206a}'..='\u{206f}' {
            assert_eq!(printable(&format!("a{c}b")), "ab", "{c:?}");
            assert!(is_blank(&format!(" {c} ")), "{c:?}");
        }
        assert_eq!(printable("a\u{fff9}b\u{fffa}c\u{fffb}d"), "abcd");
        let kept = "a\u{2028}b\u{2029}c\u{61c}d\u{180e}e\u{fe0f}f\u{e0100}";
        assert_eq!(printable(kept), kept);
        assert_eq!(one_line("a\u{2028}b\u{2029}c", 20), "a b c");
    }

    /// A line naming a folder shows its name with every line break and control as a visible
    /// escape: it stays one line, and says what the name holds.
    #[test]
    fn a_visible_line_escapes_what_would_break_or_drive_it() {
        assert_eq!(
            visible_line("cannot read /x/evil\nFAKE: ok\tend"),
            "cannot read /x/evil\\nFAKE: ok\\tend"
        );
        assert_eq!(
            visible_line("a\u{1b}[2Jb\r\u{2028}c\u{202e}d\u{206a}é"),
            "a\\u{1b}[2Jb\\r\\u{2028}c\\u{202e}d\\u{206a}é"
        );
        assert_eq!(visible_line("plain /home/ann"), "plain /home/ann");
        for c in visible_line("\u{1b}]0;t\u{7}\n\u{9b}1m\u{feff}").chars() {
            assert!(!must_go(c) && c != '\n', "{c:?}");
        }
    }

    /// Text mixing ordinary characters with every range [`must_go`] names, escape-sequence
    /// bytes, tag characters and the format characters that are kept, each drawn as a piece of
    /// its own (a regex alternation of classes is one class, where a few characters among
    /// every printable one are almost never drawn).
    fn hostile_text() -> impl proptest::strategy::Strategy<Value = String> {
        use proptest::strategy::Strategy;
        let piece = proptest::prop_oneof![
            "\\PC{1,4}",
            "[\\x00-\\x1f\\x7f-\\x9f]",
            "[\\u{200b}\\u{202a}-\\u{202e}\\u{2028}\\u{2029}\\u{2060}-\\u{206f}\\u{feff}\\u{fff9}-\\u{fffb}\\u{61c}\\u{180e}\\u{1f3f4}]",
            "[\\u{e0000}-\\u{e007f}]",
            "[\\[\\]P\\\\;0-9m]",
        ];
        proptest::collection::vec(piece, 0..40).prop_map(|pieces| pieces.concat())
    }

    proptest::proptest! {
        /// Whatever goes in, nothing [`must_go`] names comes out, and cleaning again changes
        /// nothing; a visible line holds neither those nor a line break.
        #[test]
        fn printable_output_is_always_inert(s in hostile_text()) {
            let out = printable(&s);
            for c in out.chars() {
                proptest::prop_assert!(!must_go(c), "{c:?} in {out:?}");
            }
            proptest::prop_assert_eq!(printable(&out), out.clone());
            for c in visible_line(&s).chars() {
                proptest::prop_assert!(!must_go(c) && !matches!(c, '\n' | '\u{2028}' | '\u{2029}'), "{c:?} in a visible line");
            }
        }

        /// Words parted by line-breaking controls (alone, in a CRLF, beside other controls or
        /// spaces) come out as the same words: none glued, none split.
        #[test]
        fn line_breaks_keep_words_apart(
            words in proptest::collection::vec("[a-z0-9%]{1,6}", 1..8),
            seps in proptest::collection::vec(
                proptest::sample::select(vec!["\r", "\u{b}", "\u{c}", "\u{85}", "\r\n", " \r", "\u{7}\r", "\r\u{1b}[1m"]),
                8,
            ),
        ) {
            let mut s = String::new();
            for (i, w) in words.iter().enumerate() {
                if i > 0 {
                    s.push_str(seps[i - 1]);
                }
                s.push_str(w);
            }
            let out = printable(&s);
            proptest::prop_assert_eq!(out.split_whitespace().collect::<Vec<_>>(), words.iter().map(String::as_str).collect::<Vec<_>>());
            proptest::prop_assert!(out.len() <= s.len());
        }

        #[test]
        fn inert_text_is_unchanged(s in "\\PC*") {
            let plain = s.chars().all(|c| !c.is_control() && !is_bidi_control(c));
            if plain {
                proptest::prop_assert_eq!(printable(&s), s);
            }
        }
    }

    #[test]
    fn timestamps_are_rfc3339_or_unknown() {
        for good in [
            "2026-02-12T10:31:05Z",
            "2026-02-12T10:31:05.123Z",
            "2026-02-12T10:31:05.123456789Z",
            "2026-02-12t10:31:05z",
            "2026-02-12T12:31:05+02:00",
            "2024-02-29T00:00:00Z",
        ] {
            assert!(parse_rfc3339(good).is_some(), "{good}");
        }
        for bad in [
            "2099-01-01\u{e9}000000",
            "2099-01-01é000000",
            "2026-02-12",
            "2026-02-12 10:31:05Z",
            "2026-02-12T10:31:05",
            "2026-02-12T10:31Z",
            "2026-02-12T10:31:05.Z",
            "2026-02-12T10:31:05.1234567890Z",
            "2026-02-12T10:31:05Z[Europe/Paris]",
            "2026-02-12T10:31:05+0200",
            "2026-13-12T10:31:05Z",
            "2023-02-29T00:00:00Z",
            "2026-02-12T25:31:05Z",
            "2026-02-12T10:31:05Z\u{1b}]0;x\u{7}",
            "\u{1b}[2J2026-02-12T10:31:05Z",
            "２０２６-02-12T10:31:05Z",
            "[trimmed for fixture]",
            "",
        ] {
            assert!(parse_rfc3339(bad).is_none(), "{bad:?}");
            assert!(rfc3339(bad).is_none(), "{bad:?}");
            assert_eq!(short_time(bad, &jiff::tz::TimeZone::UTC), None, "{bad:?}");
        }
        // UTC as agents write it is kept byte for byte; an offset is stored as the UTC instant.
        assert!(matches!(
            rfc3339("2026-02-12T10:31:05.120Z"),
            Some(Cow::Borrowed("2026-02-12T10:31:05.120Z"))
        ));
        assert_eq!(
            rfc3339("2026-02-12T12:31:05+02:00").as_deref(),
            Some("2026-02-12T10:31:05Z")
        );
        assert_eq!(
            rfc3339("2026-02-12t10:31:05z").as_deref(),
            Some("2026-02-12T10:31:05Z")
        );
        assert_eq!(
            short_time("2026-02-12T10:31:05.123Z", &jiff::tz::TimeZone::UTC).as_deref(),
            Some("2026-02-12 10:31")
        );
        // On the person's clock: three hours east, across midnight.
        let east = jiff::tz::TimeZone::fixed(jiff::tz::offset(3));
        assert_eq!(
            short_time("2026-02-12T22:31:05Z", &east).as_deref(),
            Some("2026-02-13 01:31")
        );
    }

    #[test]
    fn the_day_after_a_day() {
        assert_eq!(day_after("2026-02-28").as_deref(), Some("2026-03-01"));
        assert_eq!(day_after("2028-02-28").as_deref(), Some("2028-02-29"));
        assert_eq!(day_after("2026-12-31").as_deref(), Some("2027-01-01"));
        for not in ["2026-02-30", "2026-02-10T10:00:00Z", "tomorrow", ""] {
            assert_eq!(day_after(not), None, "{not}");
        }
    }

    #[test]
    fn hidden_ranges_are_what_printable_cuts_out() {
        assert_eq!(hidden("plain text\n\tok"), []);
        assert_eq!(hidden("\u{1b}[90m/home/x\u{1b}[39m"), [(0, 5), (12, 17)]);
        // Neighbours join; an OSC goes whole with its payload (printable drops it).
        assert_eq!(hidden("a\u{7}\u{202e}b"), [(1, 5)]);
        assert_eq!(hidden("x\u{1b}]8;;https://x.invalid\u{7}y"), [(1, 24)]);
        // A key split by a bidi override reads whole once it goes; a carriage return is a
        // hidden range too (the redactor reads the key whole, [`unseen`]) that the reader is
        // shown as a space.
        assert_eq!(printable("AKIA\u{202d}QRST"), "AKIAQRST");
        assert_eq!(printable("AKIA\rQRST\u{7f}"), "AKIA QRST");
        assert_eq!(hidden("AKIA\rQRST"), [(4, 5)]);
        assert_eq!(printable("AKIA\u{200b}QR\u{feff}ST\u{2060}"), "AKIAQRST");
        // Joiners that shape an emoji or a script stay.
        assert_eq!(printable("👩\u{200d}💻 \u{200c}"), "👩\u{200d}💻 \u{200c}");
        // Cut off and odd cases never panic or reach past the text.
        assert_eq!(hidden("x\u{1b}"), [(1, 2)]);
        assert_eq!(hidden("x\u{1b}[12;"), [(1, 6)]);
        assert_eq!(printable("é\u{1b}é"), "éé");
    }

    #[test]
    fn one_line_strips_sequences_collapses_and_bounds() {
        assert_eq!(one_line("bad\u{1b}[31m red\n\tline", 100), "bad red line");
        assert_eq!(one_line("abcdef", 3), "abc…");
    }
}

#[cfg(test)]
mod closed_marker_tests {
    use super::closed_marker;

    #[test]
    fn a_marker_a_headline_cut_inside_is_closed_without_guessing_its_rule() {
        for (snippet, want) in [
            ("use token [REDACTED:slack-token", "use token [REDACTED]"),
            ("use token [REDACTED:slack", "use token [REDACTED]"),
            (
                "[REDACTED:aws-key] and [REDACTED:path",
                "[REDACTED:aws-key] and [REDACTED]",
            ),
            (
                "[REDACTED:aws-key] then words",
                "[REDACTED:aws-key] then words",
            ),
            // Cut by the excerpt's own length: the ellipsis stays.
            ("a [REDACTED:slack-to…", "a [REDACTED]…"),
            ("no marker", "no marker"),
        ] {
            assert_eq!(closed_marker(snippet), want);
        }
    }
}

//! Small text helpers shared by views, reports and front doors.

/// A text with its whitespace collapsed, cut at `max` characters (an ellipsis marks the cut).
pub fn excerpt(text: &str, max: usize) -> String {
    let collapsed: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    match collapsed.char_indices().nth(max) {
        Some((cut, _)) => format!("{}…", &collapsed[..cut]),
        None => collapsed,
    }
}

/// Text safe to show on a terminal or in a message: terminal escape sequences (CSI such as
/// colours and cursor moves, OSC such as titles and hyperlinks) removed whole, and every other
/// control character except newline and tab dropped.
pub fn printable(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\u{1b}' => match chars.peek() {
                // CSI: parameters and intermediates, then one final byte in @..~.
                Some('[') => {
                    chars.next();
                    for c in chars.by_ref() {
                        if ('@'..='~').contains(&c) {
                            break;
                        }
                    }
                }
                // OSC: up to BEL or ST (ESC \).
                Some(']') => {
                    chars.next();
                    while let Some(c) = chars.next() {
                        if c == '\u{7}' {
                            break;
                        }
                        if c == '\u{1b}' && chars.peek() == Some(&'\\') {
                            chars.next();
                            break;
                        }
                    }
                }
                // Any other escape: drop it and the one character it introduces.
                Some(_) => {
                    chars.next();
                }
                None => {}
            },
            '\n' | '\t' => out.push(c),
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
    out
}

/// Byte ranges of the terminal escape sequences in `text` that carry no text of their own: CSI
/// (`ESC [` or U+009B, then parameter and intermediate bytes and one final byte: colours, cursor
/// moves) and two-byte `ESC x` sequences. OSC, DCS and other string sequences are left out:
/// their payload (a title, a hyperlink's URL) is text. What remains once these ranges are cut
/// out is what a terminal shows, so the redactor finds `ESC[90m/home/…ESC[39m` as a path.
pub fn control_sequences(text: &str) -> Vec<(usize, usize)> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while let Some(k) = memchr::memchr2(0x1b, 0xc2, &b[i..]) {
        let at = i + k;
        match (b[at], b.get(at + 1)) {
            (0x1b, Some(b'[')) | (0xc2, Some(0x9b)) => {}
            // OSC, DCS, SOS, PM, APC: kept whole (the ESC stays a boundary).
            (0x1b, Some(b']' | b'P' | b'X' | b'^' | b'_')) => {
                i = at + 1;
                continue;
            }
            (0x1b, Some(c)) if c.is_ascii() => {
                out.push((at, at + 2));
                i = at + 2;
                continue;
            }
            _ => {
                i = at + 1;
                continue;
            }
        }
        let mut z = at + 2;
        while z < b.len() && (0x20..=0x3f).contains(&b[z]) {
            z += 1;
        }
        if z < b.len() && (0x40..=0x7e).contains(&b[z]) {
            z += 1;
        }
        out.push((at, z));
        i = z;
    }
    out
}

/// Text from outside (a model server's reply, an error) as one safe line: [`printable`], then
/// [`excerpt`] (whitespace collapsed, at most `max` characters).
pub fn one_line(text: &str, max: usize) -> String {
    excerpt(&printable(text), max)
}

#[cfg(test)]
mod tests {
    use super::*;

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
        assert_eq!(printable("a\rb\u{7}c\nd\te\u{0}"), "abc\nd\te");
        assert_eq!(printable("tail\u{1b}"), "tail");
    }

    #[test]
    fn control_sequences_are_csi_and_two_byte_escapes_only() {
        let cut = |s: &str| {
            let mut out = String::new();
            let mut at = 0;
            for (a, z) in control_sequences(s) {
                out.push_str(&s[at..a]);
                at = z;
            }
            out + &s[at..]
        };
        assert_eq!(
            cut("\u{1b}[90m/home/USER/projects/x\u{1b}[39m ok"),
            "/home/USER/projects/x ok"
        );
        assert_eq!(cut("a\u{9b}1;2Hb\u{1b}7c\u{1b}(Bd"), "abcBd");
        // string sequences keep their payload (text the redactor must still see)
        let osc = "\u{1b}]8;;https://x.invalid/?t=1\u{7}link";
        assert_eq!(cut(osc), osc);
        // cut off and odd cases never panic or reach past the text
        assert_eq!(cut("x\u{1b}"), "x\u{1b}");
        assert_eq!(cut("x\u{1b}[12;"), "x");
        assert_eq!(cut("é\u{1b}é"), "é\u{1b}é");
    }

    #[test]
    fn one_line_strips_sequences_collapses_and_bounds() {
        assert_eq!(one_line("bad\u{1b}[31m red\n\tline", 100), "bad red line");
        assert_eq!(one_line("abcdef", 3), "abc…");
    }
}

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
}

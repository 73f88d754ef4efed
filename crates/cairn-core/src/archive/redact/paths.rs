//! Outbound paths: the absolute paths in text leaving the machine, found so the home directory
//! and the repository can be written in their short forms.

/// Absolute path tokens in `s`: `/a/b`, `~/…`, `C:\…`, at the start of the text or after
/// whitespace or an opening delimiter. Trailing sentence punctuation is not part of the token.
pub(super) fn absolute_paths(s: &str) -> Vec<(usize, usize)> {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        // A `file:///home/ann/x` URL holds a path after its `//`; a text cut short (a search
        // snippet, a preview) may start one right after its ellipsis.
        let starts = i == 0
            || b[i - 1].is_ascii_whitespace()
            || b"\"'`([{<=,:".contains(&b[i - 1])
            || (i >= 3 && (&b[i - 3..i] == b"://" || &b[i - 3..i] == "…".as_bytes()));
        let abs = match b[i] {
            b'/' => b.get(i + 1).is_some_and(|&c| c != b'/' && is_path_byte(c)),
            // `~/x`, and `~ann/x`: another person's home.
            b'~' => {
                let name = b[i + 1..]
                    .iter()
                    .take_while(|&&c| c.is_ascii_alphanumeric() || matches!(c, b'.' | b'_' | b'-'))
                    .count();
                b.get(i + 1 + name) == Some(&b'/')
            }
            c if c.is_ascii_alphabetic() => {
                b.get(i + 1) == Some(&b':')
                    && matches!(b.get(i + 2), Some(b'\\' | b'/'))
                    && b.get(i + 3).is_some_and(|&c| is_path_byte(c))
            }
            _ => false,
        };
        if !(starts && abs) {
            i += 1;
            continue;
        }
        let mut z = i + 1;
        while z < b.len() && is_path_byte(b[z]) {
            z += 1;
        }
        if let Some(close) = quoted_path_end(b, i, z) {
            z = close;
        }
        while z > i + 1 && matches!(b[z - 1], b'.' | b':' | b',') {
            z -= 1;
        }
        out.push((i, z));
        i = z.max(i + 1);
    }
    out
}

/// Where a quoted path with a space in it ends (`"/Users/ann/My Drive/plan.md"`): the path token
/// at `i..z` opens right after a quote and stops at a space, its closing quote is on the same
/// line, and what lies between still names folders (holds a `/` or `\`). A quote escaped for
/// JSON (`\"`) closes it before its backslash. `None` for anything else, so a quote that only
/// starts with a path (`"/usr/bin is where it lives"`) keeps its words.
pub(super) fn quoted_path_end(b: &[u8], i: usize, z: usize) -> Option<usize> {
    let quote = *b.get(i.checked_sub(1)?)?;
    if !matches!(quote, b'"' | b'\'' | b'`') || b.get(z) != Some(&b' ') {
        return None;
    }
    let rest = &b[z..];
    let close = z + rest.iter().position(|&c| c == quote || c == b'\n')?;
    if b[close] != quote || b[z..close].iter().any(u8::is_ascii_control) {
        return None;
    }
    let close = if b[close - 1] == b'\\' {
        close - 1
    } else {
        close
    };
    let between = &b[z..close];
    between
        .iter()
        .any(|&c| c == b'/' || c == b'\\')
        .then_some(close)
}

/// Where `dir` (an absolute folder, no trailing `/`) begins a path inside a longer token: each
/// occurrence followed by a separator (`/`, `\`, `:`) or the token's end and not already
/// covered by a path of `tokens` (from [`absolute_paths`]), to the end of its path.
pub(super) fn glued_paths(s: &str, dir: &str, tokens: &[(usize, usize)]) -> Vec<(usize, usize)> {
    let b = s.as_bytes();
    let mut out = Vec::new();
    for (a, _) in s.match_indices(dir) {
        let mut z = a + dir.len();
        if b.get(z)
            .is_some_and(|&c| !matches!(c, b'/' | b'\\' | b':') && is_path_byte(c))
            || tokens.iter().any(|&(x, y)| x <= a && a < y)
            || out.last().is_some_and(|&(_, y)| a < y)
        {
            continue;
        }
        while z < b.len() && is_path_byte(b[z]) {
            z += 1;
        }
        while z > a + dir.len() && matches!(b[z - 1], b'.' | b':' | b',') {
            z -= 1;
        }
        out.push((a, z));
    }
    out
}

pub(super) fn is_path_byte(c: u8) -> bool {
    !(c.is_ascii_whitespace() || c.is_ascii_control() || b"\"'`<>|()[]{},;*?".contains(&c))
}

/// `path` is `root` or below it.
pub(super) fn is_under(path: &str, root: &str) -> bool {
    path.strip_prefix(root)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
}

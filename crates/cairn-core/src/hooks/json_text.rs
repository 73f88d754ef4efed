//! Editing an agent's JSON settings as text, so that everything Cairn does not add stays byte
//! for byte as it was: key order, spacing, and numbers no `f64` can hold
//! (`18446744073709551617`). Parsing into a `serde_json::Value` and printing it again would
//! lose the last and reformat the rest.
//!
//! [`parse`] finds where each value lies in the text; the edits ([`Edit`]) insert members and
//! elements in the indentation style around them, or replace one value.
//!
//! Some agents read their settings as JSON with comments (Gemini CLI and Qwen Code strip `//`
//! and `/* */` comments before `JSON.parse`): [`parse_as`] with [`Syntax::Jsonc`] takes a comment
//! wherever whitespace may stand, and the edits keep every comment where it was. An addition
//! after a member whose line ends in a comment goes after that comment (the comma before it),
//! and a removal keeps every comment in the text it takes out ([`keeping_comments`]), so taking
//! off what was added gives the bytes back.

use serde_json::Value;

/// How deep [`parse`] descends before refusing (serde_json's own recursion limit).
const MAX_DEPTH: usize = 128;

/// A value and where it lies: `text[start..end]`.
#[derive(Debug, Clone)]
pub struct Node {
    pub start: usize,
    pub end: usize,
    pub kind: Kind,
}

#[derive(Debug, Clone)]
pub enum Kind {
    /// Members in text order: the key (decoded), the key's start, and the value.
    Object(Vec<(String, usize, Node)>),
    Array(Vec<Node>),
    String,
    /// A number, `true`, `false` or `null`.
    Scalar,
}

impl Node {
    /// The value of `key` (the last one when a key is repeated, as JavaScript's `JSON.parse`
    /// and serde_json read it).
    pub fn get(&self, key: &str) -> Option<&Node> {
        match &self.kind {
            Kind::Object(members) => members
                .iter()
                .rev()
                .find(|(k, _, _)| k == key)
                .map(|(_, _, v)| v),
            _ => None,
        }
    }

    pub fn elements(&self) -> Option<&[Node]> {
        match &self.kind {
            Kind::Array(items) => Some(items),
            _ => None,
        }
    }

    pub fn is_object(&self) -> bool {
        matches!(self.kind, Kind::Object(_))
    }

    /// The decoded string, for a string node.
    pub fn as_str(&self, text: &str) -> Option<String> {
        match self.kind {
            Kind::String => serde_json::from_str(&text[self.start..self.end]).ok(),
            _ => None,
        }
    }
}

/// Which JSON a settings file is read as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Syntax {
    /// RFC 8259 JSON, what `JSON.parse` and serde_json take.
    Json,
    /// JSON with `//` and `/* */` comments wherever whitespace may stand, what an agent that
    /// strips comments before `JSON.parse` reads (a trailing comma is still refused, as there).
    Jsonc,
}

/// The value `text` holds, with where each part of it lies. `text` must be one JSON value
/// (surrounding whitespace allowed); anything else is an error saying where it stopped.
#[cfg_attr(not(feature = "internals"), allow(dead_code))]
pub fn parse(text: &str) -> Result<Node, String> {
    parse_as(text, Syntax::Json)
}

/// [`parse`], comments taken as whitespace with [`Syntax::Jsonc`]. A `/*` comment never closed
/// is an error ([`UNCLOSED`]), though a comment stripper would take the rest of the file as
/// comment: what the person meant is not clear, so nothing is edited.
pub fn parse_as(text: &str, syntax: Syntax) -> Result<Node, String> {
    let mut p = Parser {
        b: text.as_bytes(),
        text,
        pos: 0,
        comments: syntax == Syntax::Jsonc,
    };
    p.ws()?;
    let node = p.value(0)?;
    p.ws()?;
    if p.pos != p.b.len() {
        return Err(format!("unexpected text at byte {}", p.pos));
    }
    Ok(node)
}

/// How a parse error for a `/*` comment that is never closed starts (its byte follows).
pub const UNCLOSED: &str = "unclosed comment at byte ";

struct Parser<'a> {
    b: &'a [u8],
    text: &'a str,
    pos: usize,
    comments: bool,
}

impl Parser<'_> {
    fn ws(&mut self) -> Result<(), String> {
        loop {
            match self.b.get(self.pos) {
                Some(b' ' | b'\t' | b'\n' | b'\r') => self.pos += 1,
                Some(b'/') if self.comments => match comment_end(self.text, self.pos) {
                    Some(Ok(end)) => self.pos = end,
                    Some(Err(())) => return Err(format!("{UNCLOSED}{}", self.pos)),
                    None => return Ok(()),
                },
                _ => return Ok(()),
            }
        }
    }

    fn eat(&mut self, c: u8) -> Result<(), String> {
        if self.b.get(self.pos) == Some(&c) {
            self.pos += 1;
            Ok(())
        } else {
            Err(format!("expected `{}` at byte {}", c as char, self.pos))
        }
    }

    fn value(&mut self, depth: usize) -> Result<Node, String> {
        if depth > MAX_DEPTH {
            return Err(format!("nested more than {MAX_DEPTH} levels deep"));
        }
        let start = self.pos;
        let kind =
            match self.b.get(self.pos) {
                Some(b'{') => {
                    self.pos += 1;
                    let mut members = Vec::new();
                    self.ws()?;
                    if self.b.get(self.pos) != Some(&b'}') {
                        loop {
                            self.ws()?;
                            let key_start = self.pos;
                            self.string()?;
                            let key = serde_json::from_str(&self.text[key_start..self.pos])
                                .map_err(|e| format!("bad key at byte {key_start}: {e}"))?;
                            self.ws()?;
                            self.eat(b':')?;
                            self.ws()?;
                            let value = self.value(depth + 1)?;
                            members.push((key, key_start, value));
                            self.ws()?;
                            if self.b.get(self.pos) == Some(&b',') {
                                self.pos += 1;
                            } else {
                                break;
                            }
                        }
                    }
                    self.eat(b'}')?;
                    Kind::Object(members)
                }
                Some(b'[') => {
                    self.pos += 1;
                    let mut items = Vec::new();
                    self.ws()?;
                    if self.b.get(self.pos) != Some(&b']') {
                        loop {
                            self.ws()?;
                            items.push(self.value(depth + 1)?);
                            self.ws()?;
                            if self.b.get(self.pos) == Some(&b',') {
                                self.pos += 1;
                            } else {
                                break;
                            }
                        }
                    }
                    self.eat(b']')?;
                    Kind::Array(items)
                }
                Some(b'"') => {
                    self.string()?;
                    Kind::String
                }
                Some(_) => {
                    while self.b.get(self.pos).is_some_and(|c| {
                        c.is_ascii_alphanumeric() || matches!(c, b'-' | b'+' | b'.')
                    }) {
                        self.pos += 1;
                    }
                    let token = &self.text[start..self.pos];
                    if !(matches!(token, "true" | "false" | "null") || is_number(token)) {
                        return Err(format!("unexpected value at byte {start}"));
                    }
                    Kind::Scalar
                }
                None => return Err("unexpected end of text".into()),
            };
        Ok(Node {
            start,
            end: self.pos,
            kind,
        })
    }

    /// Skip a string (the quotes included), its escapes checked against JSON's grammar. A lone
    /// surrogate (`\ud800`) is JSON, as JavaScript reads it: only a key must decode.
    fn string(&mut self) -> Result<(), String> {
        let start = self.pos;
        self.eat(b'"')?;
        loop {
            match self.b.get(self.pos) {
                Some(b'"') => {
                    self.pos += 1;
                    return Ok(());
                }
                Some(b'\\') => match self.b.get(self.pos + 1) {
                    Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') => self.pos += 2,
                    Some(b'u')
                        if self
                            .b
                            .get(self.pos + 2..self.pos + 6)
                            .is_some_and(|hex| hex.iter().all(u8::is_ascii_hexdigit)) =>
                    {
                        self.pos += 6;
                    }
                    _ => return Err(format!("bad escape in the string at byte {}", self.pos)),
                },
                Some(c) if *c < 0x20 => {
                    return Err(format!("control character in the string at byte {start}"));
                }
                Some(_) => self.pos += 1,
                None => return Err(format!("unterminated string at byte {start}")),
            }
        }
    }
}

/// Where the comment starting at byte `at` of `text` ends: `None` when no comment starts
/// there, `Err` for a `/*` never closed. A `//` comment ends before its line break (`\n`, or
/// the `\r\n` a file written on Windows has), a `/*` comment after its `*/`.
fn comment_end(text: &str, at: usize) -> Option<Result<usize, ()>> {
    let rest = &text[at..];
    if rest.starts_with("//") {
        let end = rest.find('\n').map_or(text.len(), |nl| at + nl);
        let end = if end > at + 2 && text.as_bytes()[end - 1] == b'\r' && end < text.len() {
            end - 1
        } else {
            end
        };
        Some(Ok(end))
    } else {
        rest.strip_prefix("/*")
            .map(|inside| inside.find("*/").map(|close| at + 2 + close + 2).ok_or(()))
    }
}

/// Where the comments of `text` lie, outside its strings: `(start, end)`, in order. A `/*` never
/// closed runs to the end. Nothing for text without comments, as any JSON is.
fn comments(text: &str) -> Vec<(usize, usize)> {
    let b = text.as_bytes();
    let mut found = Vec::new();
    let mut i = 0;
    let mut in_string = false;
    while i < b.len() {
        match b[i] {
            b'\\' if in_string => i += 2,
            b'"' => {
                in_string = !in_string;
                i += 1;
            }
            b'/' if !in_string => match comment_end(text, i) {
                Some(end) => {
                    let end = end.unwrap_or(text.len());
                    found.push((i, end));
                    i = end;
                }
                None => i += 1,
            },
            _ => i += 1,
        }
    }
    found
}

/// `text` with each comment's bytes turned to spaces (its line breaks kept): the same length and
/// lines, so what is found in it lies at the same place in `text`. `text` itself when it has
/// no comment.
pub fn blank(text: &str) -> std::borrow::Cow<'_, str> {
    let found = comments(text);
    if found.is_empty() {
        return text.into();
    }
    let mut out = text.as_bytes().to_vec();
    for (start, end) in found {
        for byte in &mut out[start..end] {
            if !matches!(byte, b'\n' | b'\r') {
                *byte = b' ';
            }
        }
    }
    // Whole characters became ASCII spaces: still UTF-8.
    String::from_utf8(out).map_or_else(|_| text.into(), Into::into)
}

/// A removal ([`remove`]) that keeps the comments in the text it takes out, each with the
/// whitespace before it, and a line break after a `//` comment that would otherwise run into
/// what follows: the inverse of an insert after a commented line, and no person's comment lost.
/// The removal itself for text without comments.
pub fn keeping_comments(text: &str, edit: Edit) -> Edit {
    let inside: Vec<(usize, usize)> = comments(text)
        .into_iter()
        .filter(|&(start, end)| start >= edit.start && end <= edit.end)
        .collect();
    if inside.is_empty() {
        return edit;
    }
    let eol = line_ending(text);
    let mut kept = String::new();
    // A `//` comment was kept last and its line not ended yet.
    let mut open_line = false;
    let mut last = edit.start;
    for (start, end) in inside {
        let before = &text[last..start];
        let pre = &before[before.trim_end_matches(is_space).len()..];
        if open_line && !pre.contains('\n') {
            kept.push_str(eol);
        }
        kept.push_str(pre);
        kept.push_str(&text[start..end]);
        open_line = text[start..].starts_with("//");
        last = end;
    }
    if open_line {
        let rest = &text[edit.end..];
        let after = rest.trim_start_matches([' ', '\t']);
        if !(after.is_empty() || after.starts_with('\n') || after.starts_with("\r\n")) {
            kept.push_str(eol);
            kept.push_str(&line_indent(text, edit.end + (rest.len() - after.len())));
        }
    }
    kept.push_str(&edit.with);
    Edit { with: kept, ..edit }
}

fn is_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\r')
}

/// JSON's number grammar, without a limit on size: `-?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?`.
fn is_number(token: &str) -> bool {
    let b = token.as_bytes();
    let mut i = usize::from(b.first() == Some(&b'-'));
    let digits = |i: &mut usize| {
        let start = *i;
        while b.get(*i).is_some_and(u8::is_ascii_digit) {
            *i += 1;
        }
        *i - start
    };
    match b.get(i) {
        Some(b'0') => i += 1,
        Some(c) if c.is_ascii_digit() => {
            digits(&mut i);
        }
        _ => return false,
    }
    if b.get(i) == Some(&b'.') {
        i += 1;
        if digits(&mut i) == 0 {
            return false;
        }
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(b.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        if digits(&mut i) == 0 {
            return false;
        }
    }
    i == b.len()
}

/// Replace `text[start..end]` with `with`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Edit {
    pub start: usize,
    pub end: usize,
    pub with: String,
}

/// Apply non-overlapping edits.
pub fn apply(text: &str, mut edits: Vec<Edit>) -> String {
    edits.sort_by_key(|e| e.start);
    let mut out =
        String::with_capacity(text.len() + edits.iter().map(|e| e.with.len()).sum::<usize>());
    let mut at = 0;
    for e in edits {
        out.push_str(&text[at..e.start]);
        out.push_str(&e.with);
        at = e.end;
    }
    out.push_str(&text[at..]);
    out
}

/// Replace a value with `value` (printed on one line).
pub fn replace(node: &Node, value: &Value) -> Edit {
    Edit {
        start: node.start,
        end: node.end,
        with: value.to_string(),
    }
}

/// Add members at the end of an object, in the layout of its existing members.
pub fn insert_members(text: &str, object: &Node, members: &[(&str, Value)]) -> Edit {
    let (existing, separator) = match &object.kind {
        Kind::Object(m) => (
            m.iter()
                .map(|(_, key_start, v)| (*key_start, v.end))
                .collect::<Vec<_>>(),
            // `": "`, `":"`: whatever the first member uses (not a comment there).
            m.first().and_then(|(_, key_start, v)| {
                let key_end = key_start + string_len(&text[*key_start..]);
                let separator = &text[key_end..v.start];
                separator
                    .chars()
                    .all(|c| c == ':' || is_space(c))
                    .then(|| separator.to_owned())
            }),
        ),
        _ => (Vec::new(), None),
    };
    let layout = Layout::of(text, object, &existing);
    let separator =
        separator.unwrap_or_else(|| if layout.multiline { ": " } else { ":" }.to_owned());
    let items: Vec<String> = members
        .iter()
        .map(|(key, value)| {
            let key = Value::String((*key).to_owned()).to_string();
            format!("{key}{separator}{}", layout.render(value))
        })
        .collect();
    layout.insert(text, object, &existing, &items)
}

/// Add an element at the end of an array, in the layout of its existing elements.
pub fn push_element(text: &str, array: &Node, value: &Value) -> Edit {
    let existing: Vec<(usize, usize)> = array
        .elements()
        .unwrap_or_default()
        .iter()
        .map(|n| (n.start, n.end))
        .collect();
    let layout = Layout::of(text, array, &existing);
    let item = layout.render(value);
    layout.insert(text, array, &existing, &[item])
}

/// Remove the `index`th child (member or element) of an object or array with the separator
/// before it (after it, for the first of several): the inverse of an insert at that place, so
/// removing what [`insert_members`] or [`push_element`] appended gives back the bytes before.
/// The last child leaves an empty `{}` or `[]`. `None` when there is no such child.
pub fn remove(container: &Node, index: usize) -> Option<Edit> {
    let spans: Vec<(usize, usize)> = match &container.kind {
        Kind::Object(m) => m.iter().map(|(_, k, v)| (*k, v.end)).collect(),
        Kind::Array(items) => items.iter().map(|n| (n.start, n.end)).collect(),
        _ => return None,
    };
    let &(start, end) = spans.get(index)?;
    let (start, end) = match (spans.len(), index) {
        (1, _) => (container.start + 1, container.end - 1),
        (_, 0) => (start, spans[1].0),
        _ => (spans[index - 1].1, end),
    };
    Some(Edit {
        start,
        end,
        with: String::new(),
    })
}

/// The byte length of the JSON string at the start of `s`, quotes included.
fn string_len(s: &str) -> usize {
    let b = s.as_bytes();
    let mut i = 1;
    while i < b.len() {
        match b[i] {
            b'"' => return i + 1,
            b'\\' => i += 2,
            _ => i += 1,
        }
    }
    b.len()
}

/// How a container's children are laid out.
struct Layout {
    multiline: bool,
    /// Indentation of the children (multi-line layouts).
    child_indent: String,
    /// The container's own line's indentation.
    own_indent: String,
    /// One level of indentation in this file.
    unit: String,
    /// Between a comma and the next child on one line (`""` or `" "`).
    inline_gap: String,
    /// The file's line ending.
    eol: &'static str,
}

impl Layout {
    fn of(text: &str, container: &Node, children: &[(usize, usize)]) -> Layout {
        // Read with the comments blanked out: what lies around them is the layout.
        let blanked = blank(text);
        let plain = blanked.as_ref();
        let own_indent = line_indent(text, container.start);
        let unit = indent_unit(text, plain);
        let eol = line_ending(text);
        let spaces = |s: &str| s.chars().take_while(|c| is_space(*c)).collect::<String>();
        match children.first() {
            Some(&(first, _)) => {
                let gap = &plain[container.start + 1..first];
                match gap.rfind('\n') {
                    Some(nl) => Layout {
                        multiline: true,
                        child_indent: spaces(&gap[nl + 1..]),
                        own_indent,
                        unit,
                        inline_gap: String::new(),
                        eol,
                    },
                    None => Layout {
                        multiline: false,
                        child_indent: String::new(),
                        own_indent,
                        unit,
                        // What follows the comma between two children, else what follows
                        // the opening bracket.
                        inline_gap: match children.get(1) {
                            Some(&(second, _)) => {
                                let between = &plain[children[0].1..second];
                                let after = between.find(',').map_or(0, |c| c + 1);
                                spaces(&text[children[0].1 + after..second])
                            }
                            None => spaces(&text[container.start + 1..first]),
                        },
                        eol,
                    },
                }
            }
            None => {
                // An empty container: multi-line when the file is.
                let multiline = text.trim_end().contains('\n');
                Layout {
                    multiline,
                    child_indent: format!("{own_indent}{unit}"),
                    own_indent,
                    unit,
                    inline_gap: String::new(),
                    eol,
                }
            }
        }
    }

    /// `value` printed for a child position.
    fn render(&self, value: &Value) -> String {
        if !self.multiline {
            return value.to_string();
        }
        let mut out = Vec::new();
        let formatter = serde_json::ser::PrettyFormatter::with_indent(self.unit.as_bytes());
        let mut ser = serde_json::Serializer::with_formatter(&mut out, formatter);
        serde::Serialize::serialize(value, &mut ser).unwrap_or(());
        String::from_utf8_lossy(&out).replace('\n', &format!("{}{}", self.eol, self.child_indent))
    }

    fn insert(
        &self,
        text: &str,
        container: &Node,
        children: &[(usize, usize)],
        items: &[String],
    ) -> Edit {
        match children.last() {
            Some(&(_, last_end)) => {
                let mut with = String::new();
                // The last child's line ends in a comment: the comma goes before it, the new
                // children after it (not into it, nor between the child and its comment).
                let end = if self.multiline {
                    line_comment_end(text, last_end).unwrap_or(last_end)
                } else {
                    last_end
                };
                for (i, item) in items.iter().enumerate() {
                    with.push(',');
                    if i == 0 {
                        with.push_str(&text[last_end..end]);
                    }
                    if self.multiline {
                        with.push_str(self.eol);
                        with.push_str(&self.child_indent);
                    } else {
                        with.push_str(&self.inline_gap);
                    }
                    with.push_str(item);
                }
                Edit {
                    start: last_end,
                    end,
                    with,
                }
            }
            None if !comments(&text[container.start..container.end]).is_empty() => {
                // Comments alone in the container stay, the children after them (the spaces
                // after the last one go, as an empty container's whitespace does; not those
                // that end a `//` comment, which are part of it).
                let inner = &text[container.start + 1..container.end - 1];
                let last = comments(inner).last().map_or(0, |&(_, end)| end);
                let inner = &inner[..inner.trim_end().len().max(last)];
                let with = if self.multiline {
                    let sep = format!(",{}{}", self.eol, self.child_indent);
                    format!(
                        "{inner}{eol}{}{}{eol}{}",
                        self.child_indent,
                        items.join(&sep),
                        self.own_indent,
                        eol = self.eol
                    )
                } else {
                    format!("{inner}{}", items.join(","))
                };
                Edit {
                    start: container.start + 1,
                    end: container.end - 1,
                    with,
                }
            }
            None => {
                let inner = if self.multiline {
                    let sep = format!(",{}{}", self.eol, self.child_indent);
                    format!(
                        "{eol}{}{}{eol}{}",
                        self.child_indent,
                        items.join(&sep),
                        self.own_indent,
                        eol = self.eol
                    )
                } else {
                    items.join(",")
                };
                // Whatever whitespace the empty container held is replaced.
                Edit {
                    start: container.start + 1,
                    end: container.end - 1,
                    with: inner,
                }
            }
        }
    }
}

/// The line ending `text` uses, as its first line break is written: `"\r\n"` or `"\n"`, so
/// lines added to a file written on Windows end like its own.
pub(super) fn line_ending(text: &str) -> &'static str {
    match text.find('\n') {
        Some(i) if text[..i].ends_with('\r') => "\r\n",
        _ => "\n",
    }
}

/// The whitespace that starts the line holding byte `at`.
fn line_indent(text: &str, at: usize) -> String {
    let line_start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    text[line_start..]
        .chars()
        .take_while(|c| *c == ' ' || *c == '\t')
        .collect()
}

/// The file's indentation step: the indentation of its first indented line, two spaces when it
/// has none. `plain` is `text` with its comments blanked ([`blank`]): a line that holds only a
/// comment (or a block comment's inner line) does not count.
fn indent_unit(text: &str, plain: &str) -> String {
    text.lines()
        .zip(plain.lines())
        .skip(1)
        .filter(|(line, blanked)| line == blanked || !blanked.trim().is_empty())
        .map(|(l, _)| {
            l.chars()
                .take_while(|c| *c == ' ' || *c == '\t')
                .collect::<String>()
        })
        .find(|i| !i.is_empty())
        .unwrap_or_else(|| "  ".to_owned())
}

/// Where the comments that end the line of byte `at` end, when nothing but spaces and comments
/// follows `at` on its line (and no comment runs on past it); `None` when there is no comment
/// there.
fn line_comment_end(text: &str, at: usize) -> Option<usize> {
    let mut pos = at;
    let mut found = None;
    loop {
        let rest = &text[pos..];
        let spaces = rest.len() - rest.trim_start_matches([' ', '\t']).len();
        pos += spaces;
        match comment_end(text, pos) {
            Some(Ok(end)) if !text[pos..end].contains('\n') => {
                pos = end;
                found = Some(end);
            }
            Some(_) => return None,
            None => {
                let rest = &text[pos..];
                let line_ends =
                    rest.is_empty() || rest.starts_with('\n') || rest.starts_with("\r\n");
                return found.filter(|_| line_ends);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn add_member(text: &str, key: &str, value: Value) -> String {
        let root = parse(text).unwrap();
        apply(text, vec![insert_members(text, &root, &[(key, value)])])
    }

    #[test]
    fn removing_what_was_appended_gives_the_bytes_back() {
        for before in [
            "{\n  \"a\": 1\n}\n",
            "{\"a\":1,\"b\":[2]}",
            "{\n\t\"a\": {\n\t\t\"x\": 1\n\t}\n}",
        ] {
            let after = add_member(
                before,
                "cairn",
                json!({"command": "/bin/cairn", "args": ["mcp"]}),
            );
            let root = parse(&after).unwrap();
            let Kind::Object(members) = &root.kind else {
                panic!()
            };
            let at = members.iter().position(|(k, _, _)| k == "cairn").unwrap();
            assert_eq!(apply(&after, vec![remove(&root, at).unwrap()]), before);
        }
        let text = r#"{"only": 1, "list": [1, 2, 3]}"#;
        let root = parse(text).unwrap();
        assert_eq!(
            apply(text, vec![remove(&root, 0).unwrap()]),
            r#"{"list": [1, 2, 3]}"#
        );
        let list = root.get("list").unwrap();
        assert_eq!(
            apply(text, vec![remove(list, 0).unwrap()]),
            r#"{"only": 1, "list": [2, 3]}"#
        );
        let one = parse("[ 7 ]").unwrap();
        assert_eq!(apply("[ 7 ]", vec![remove(&one, 0).unwrap()]), "[]");
        assert!(remove(&one, 1).is_none());
    }

    #[test]
    fn finds_values_and_keeps_big_numbers() {
        let text = r#"{"a": 18446744073709551617, "b": [1, {"c": "d\"e"}, 1e400, -0.5E+3, true, null], "a": -1.5e300}"#;
        let root = parse(text).unwrap();
        assert_eq!(
            &text[root.get("a").unwrap().start..root.get("a").unwrap().end],
            "-1.5e300"
        );
        let b = root.get("b").unwrap().elements().unwrap();
        assert_eq!(b[1].get("c").unwrap().as_str(text).unwrap(), "d\"e");
        for bad in [
            "",
            "{",
            "{\"a\" 1}",
            "[1,]",
            "{\"a\":1,}",
            "tru",
            "\"x",
            "{} x",
            "[01]",
            "[1.]",
            "[.5]",
            "[1e]",
            "[-]",
            "[+1]",
            "[0x10]",
            "[NaN]",
            "[\"a\nb\"]",
        ] {
            assert!(parse(bad).is_err(), "{bad:?}");
        }
        let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
        assert!(parse(&deep).is_err());
    }

    /// A string's escapes are JSON's: `"\q"` in a value made a settings file that is no JSON
    /// (agents refuse it) look valid, and an install wrote its hook into it.
    #[test]
    fn escapes_are_checked_in_values_too() {
        for bad in [
            r#"{"a": "\q"}"#,
            r#"["\x41"]"#,
            r#"["\u12"]"#,
            r#"["\u{0068}"]"#,
            r#"["\u00g0"]"#,
            r#"["\"]"#,
            "[\"\\\u{e9}\"]",
        ] {
            assert!(parse(bad).is_err(), "{bad}");
            assert!(serde_json::from_str::<&serde_json::value::RawValue>(bad).is_err());
        }
        for good in [
            r#"["\"\\\/\b\f\n\r\t\u00e9\uD83C\udf89"]"#,
            // JSON's grammar and JavaScript take a lone surrogate; only a key must decode.
            r#"{"a": "\ud800"}"#,
        ] {
            assert!(parse(good).is_ok(), "{good}");
        }
        assert!(parse(r#"{"\ud800": 1}"#).is_err());
    }

    #[test]
    fn inserts_in_the_files_own_layout() {
        // Two-space pretty JSON.
        let pretty = "{\n  \"model\": \"opus\",\n  \"n\": 18446744073709551617\n}\n";
        assert_eq!(
            add_member(pretty, "hooks", json!({"Stop": [1]})),
            "{\n  \"model\": \"opus\",\n  \"n\": 18446744073709551617,\n  \"hooks\": {\n    \"Stop\": [\n      1\n    ]\n  }\n}\n"
        );
        // Written on Windows: every added line ends in CRLF too (they ended in a bare LF).
        let crlf = pretty.replace('\n', "\r\n");
        assert_eq!(
            add_member(&crlf, "hooks", json!({"Stop": [1]})),
            add_member(pretty, "hooks", json!({"Stop": [1]})).replace('\n', "\r\n")
        );
        assert_eq!(
            add_member("{\r\n}\r\n", "b", json!(2)),
            "{\r\n  \"b\": 2\r\n}\r\n"
        );
        // Tabs.
        let tabs = "{\n\t\"a\": 1\n}";
        assert_eq!(
            add_member(tabs, "b", json!([2])),
            "{\n\t\"a\": 1,\n\t\"b\": [\n\t\t2\n\t]\n}"
        );
        // One line, compact.
        assert_eq!(
            add_member(r#"{"a":1}"#, "b", json!({"c": 2})),
            r#"{"a":1,"b":{"c":2}}"#
        );
        // One line with spaces.
        assert_eq!(
            add_member(r#"{ "a": 1 }"#, "b", json!(2)),
            r#"{ "a": 1, "b": 2 }"#
        );
        // Empty containers.
        assert_eq!(add_member("{}", "b", json!(2)), r#"{"b":2}"#);
        assert_eq!(add_member("{\n}\n", "b", json!(2)), "{\n  \"b\": 2\n}\n");
        let nested = "{\n  \"hooks\": {}\n}";
        let root = parse(nested).unwrap();
        let hooks = root.get("hooks").unwrap();
        assert_eq!(
            apply(
                nested,
                vec![insert_members(nested, hooks, &[("Stop", json!([]))])]
            ),
            "{\n  \"hooks\": {\n    \"Stop\": []\n  }\n}"
        );
    }

    /// JSON with comments (Gemini CLI's and Qwen Code's settings): a comment is taken where
    /// whitespace may stand and nowhere else, never inside a string; one never closed is
    /// refused; plain JSON reads as before.
    #[test]
    fn comments_are_whitespace_in_jsonc_only() {
        let text = "{\n  // a {\"brace\"}, 'quote' and /* inside\n  \"a\": \"http://x//y/*z*/\", /* } */\n  \"b\" /* : */ : [1 /* , */, 2] // end\n}\n";
        assert!(parse(text).is_err());
        let root = parse_as(text, Syntax::Jsonc).unwrap();
        assert_eq!(
            root.get("a").unwrap().as_str(text).unwrap(),
            "http://x//y/*z*/"
        );
        assert_eq!(root.get("b").unwrap().elements().unwrap().len(), 2);
        let plain: Value = serde_json::from_str(&blank(text)).unwrap();
        assert_eq!(plain, json!({"a": "http://x//y/*z*/", "b": [1, 2]}));
        assert_eq!(blank(text).len(), text.len());
        for bad in [
            "{\"a\": 1 /* never closed\n}",
            "{\"a\": 1} /*",
            "{\"a\": 1,}",
            "{\"a\": 1 / 2}",
            "{\"a\" // line\n: 1 /* ok */, // trailing\n}",
            "{\"a\": tr/**/ue}",
        ] {
            assert!(parse_as(bad, Syntax::Jsonc).is_err(), "{bad}");
        }
        assert!(
            parse_as("{\"a\": 1 /* x", Syntax::Jsonc)
                .unwrap_err()
                .starts_with(UNCLOSED)
        );
        for good in ["{} // end", "/**/{}", "{}\r\n// end\r\n", "[/*a*/1/*b*/]"] {
            assert!(parse_as(good, Syntax::Jsonc).is_ok(), "{good}");
        }
    }

    /// Adding after a member whose line ends in a comment puts the comma before the comment
    /// and the member after it; taking it off again gives back every byte, the comments where
    /// they were, in an object with only comments too.
    #[test]
    fn an_edit_keeps_every_comment_and_its_removal_gives_the_bytes_back() {
        for before in [
            "{\n  // my theme\n  \"theme\": \"dark\" // the only one\n}\n",
            "{\r\n  \"theme\": \"dark\" /* a */ // b\r\n}\r\n",
            "{\n  // nothing yet\n}\n",
            "{/* c */}",
            "{\"a\": 1 /* x */}",
            "{\n  \"a\": 1, // about a\n  \"b\": 2 /* spans\n  two lines */\n}",
        ] {
            let root = parse_as(before, Syntax::Jsonc).unwrap();
            let after = apply(
                before,
                vec![insert_members(
                    before,
                    &root,
                    &[("cairn", json!({"x": [1]}))],
                )],
            );
            let grown = parse_as(&after, Syntax::Jsonc).unwrap_or_else(|e| panic!("{e}: {after}"));
            let plain: Value = serde_json::from_str(&blank(&after)).unwrap();
            assert_eq!(plain["cairn"], json!({"x": [1]}), "{after}");
            for (start, end) in comments(before) {
                assert!(after.contains(&before[start..end]), "{after}");
            }
            let Kind::Object(members) = &grown.kind else {
                panic!()
            };
            let at = members.iter().position(|(k, _, _)| k == "cairn").unwrap();
            let removal = keeping_comments(&after, remove(&grown, at).unwrap());
            assert_eq!(apply(&after, vec![removal]), before, "{after:?}");
        }
        let before = "{\n  \"theme\": \"dark\" // the only one\n}\n";
        let root = parse_as(before, Syntax::Jsonc).unwrap();
        let after = apply(
            before,
            vec![insert_members(before, &root, &[("cairn", json!(1))])],
        );
        assert_eq!(
            after,
            "{\n  \"theme\": \"dark\", // the only one\n  \"cairn\": 1\n}\n"
        );
    }

    /// A removal never takes a comment with it: comments before, inside and after what goes
    /// stay, and a `//` comment does not run into the text that follows.
    #[test]
    fn a_removal_keeps_the_comments_in_what_it_takes() {
        let text = "{\n  \"a\": 1, // about a\n  \"b\": {\"c\": 2 /* in b */}\n}";
        let root = parse_as(text, Syntax::Jsonc).unwrap();
        let first = apply(
            text,
            vec![keeping_comments(text, remove(&root, 0).unwrap())],
        );
        assert_eq!(first, "{\n   // about a\n  \"b\": {\"c\": 2 /* in b */}\n}");
        let second = apply(
            text,
            vec![keeping_comments(text, remove(&root, 1).unwrap())],
        );
        assert_eq!(second, "{\n  \"a\": 1 // about a\n /* in b */\n}");
        for out in [first, second] {
            assert!(parse_as(&out, Syntax::Jsonc).is_ok(), "{out}");
        }
        // No comment: the removal as it was.
        let plain = "{\"a\": 1, \"b\": 2}";
        let root = parse(plain).unwrap();
        let edit = remove(&root, 1).unwrap();
        assert_eq!(keeping_comments(plain, edit.clone()), edit);
    }

    #[test]
    fn pushes_elements_and_replaces_values() {
        let text = "{\n    \"list\": [\n        {\"x\": 1}\n    ],\n    \"s\": \"old\"\n}";
        let root = parse(text).unwrap();
        let list = root.get("list").unwrap();
        let s = root.get("s").unwrap();
        let out = apply(
            text,
            vec![
                push_element(text, list, &json!({"y": 2})),
                replace(s, &json!("new")),
            ],
        );
        assert_eq!(
            out,
            "{\n    \"list\": [\n        {\"x\": 1},\n        {\n            \"y\": 2\n        }\n    ],\n    \"s\": \"new\"\n}"
        );
        let inline = r#"[1, 2]"#;
        let root = parse(inline).unwrap();
        assert_eq!(
            apply(inline, vec![push_element(inline, &root, &json!(3))]),
            "[1, 2, 3]"
        );
    }
}

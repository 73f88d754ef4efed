//! Editing an agent's JSON settings as text, so that everything Cairn does not add stays byte
//! for byte as it was: key order, spacing, and numbers no `f64` can hold
//! (`18446744073709551617`). Parsing into a `serde_json::Value` and printing it again would
//! lose the last and reformat the rest.
//!
//! [`parse`] finds where each value lies in the text; the edits ([`Edit`]) insert members and
//! elements in the indentation style around them, or replace one value.

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

/// The value `text` holds, with where each part of it lies. `text` must be one JSON value
/// (surrounding whitespace allowed); anything else is an error saying where it stopped.
pub fn parse(text: &str) -> Result<Node, String> {
    let mut p = Parser {
        b: text.as_bytes(),
        text,
        pos: 0,
    };
    p.ws();
    let node = p.value(0)?;
    p.ws();
    if p.pos != p.b.len() {
        return Err(format!("unexpected text at byte {}", p.pos));
    }
    Ok(node)
}

struct Parser<'a> {
    b: &'a [u8],
    text: &'a str,
    pos: usize,
}

impl Parser<'_> {
    fn ws(&mut self) {
        while self
            .b
            .get(self.pos)
            .is_some_and(|c| matches!(c, b' ' | b'\t' | b'\n' | b'\r'))
        {
            self.pos += 1;
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
                    self.ws();
                    if self.b.get(self.pos) != Some(&b'}') {
                        loop {
                            self.ws();
                            let key_start = self.pos;
                            self.string()?;
                            let key = serde_json::from_str(&self.text[key_start..self.pos])
                                .map_err(|e| format!("bad key at byte {key_start}: {e}"))?;
                            self.ws();
                            self.eat(b':')?;
                            self.ws();
                            let value = self.value(depth + 1)?;
                            members.push((key, key_start, value));
                            self.ws();
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
                    self.ws();
                    if self.b.get(self.pos) != Some(&b']') {
                        loop {
                            self.ws();
                            items.push(self.value(depth + 1)?);
                            self.ws();
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
            // `": "`, `":"`: whatever the first member uses.
            m.first().map(|(_, key_start, v)| {
                let key_end = key_start + string_len(&text[*key_start..]);
                text[key_end..v.start].to_owned()
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
    layout.insert(object, &existing, &items)
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
    layout.insert(array, &existing, &[item])
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
        let own_indent = line_indent(text, container.start);
        let unit = indent_unit(text);
        let eol = line_ending(text);
        match children.first() {
            Some(&(first, _)) => {
                let gap = &text[container.start + 1..first];
                match gap.rfind('\n') {
                    Some(nl) => Layout {
                        multiline: true,
                        child_indent: gap[nl + 1..].to_owned(),
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
                                let between = &text[children[0].1..second];
                                between[between.find(',').map_or(0, |c| c + 1)..].to_owned()
                            }
                            None => gap.to_owned(),
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

    fn insert(&self, container: &Node, children: &[(usize, usize)], items: &[String]) -> Edit {
        match children.last() {
            Some(&(_, last_end)) => {
                let mut with = String::new();
                for item in items {
                    with.push(',');
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
                    end: last_end,
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
/// has none.
fn indent_unit(text: &str) -> String {
    text.lines()
        .skip(1)
        .map(|l| {
            l.chars()
                .take_while(|c| *c == ' ' || *c == '\t')
                .collect::<String>()
        })
        .find(|i| !i.is_empty())
        .unwrap_or_else(|| "  ".to_owned())
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

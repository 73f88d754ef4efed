//! JSON text as serde_json writes it, from text an agent wrote, without building a value and
//! serialising it again.
//!
//! A database row's JSON column is parsed once (its parser needs the value), and the row's text
//! (its revision, its retained line, the redaction gate's input) used to be that value
//! serialised again: for Crush, the largest single cost of a row after redaction. An agent's
//! own compact JSON differs from serde_json's only in how it escapes (Go writes `<`, `>`, `&`
//! as `\u003c`, `\u003e`, `\u0026`), so rewriting its escapes gives the same bytes
//! [`serde_json::to_string`] would. Anything else that would differ (whitespace between
//! tokens, a number serde_json would print otherwise, a key written twice, of which the value
//! keeps one) is refused, and the caller serialises.
//!
//! The redaction relies on it: a row whose text the gate cannot clear is redacted by walking
//! its value, and its text is kept when the walk changed nothing, so the text must never hold
//! anything the value does not.

use std::borrow::Cow;

use serde_json::Value;

/// `raw`, the text `value` was parsed from, in the form `serde_json::to_string(value)` gives:
/// compact, each string escaped as serde_json escapes it (`"`, `\` and control characters
/// only). `None` when it cannot say so without serialising: whitespace between tokens, a
/// number that is not a plain integer, an escape that is not well formed, a key written twice
/// in an object (counted: `value` holds fewer keys than `raw` writes).
pub fn serde_form<'a>(raw: &'a str, value: &Value) -> Option<Cow<'a, str>> {
    let b = raw.as_bytes();
    let mut keys = 0usize;
    let mut out: Option<String> = None;
    // Bytes before `copied` are in `out` already (when it exists).
    let mut copied = 0;
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'"' => {
                i += 1;
                loop {
                    let at = i + memchr::memchr2(b'"', b'\\', b.get(i..)?)?;
                    if b[at] == b'"' {
                        i = at + 1;
                        keys += usize::from(b.get(i) == Some(&b':'));
                        break;
                    }
                    let (end, rewritten) = escape(b, at)?;
                    if let Some(new) = rewritten {
                        let s = out.get_or_insert_with(|| String::with_capacity(raw.len()));
                        s.push_str(&raw[copied..at]);
                        s.push_str(&new);
                        copied = end;
                    }
                    i = end;
                }
            }
            b'-' | b'0'..=b'9' => {
                let len = b[i..]
                    .iter()
                    .position(|c| !matches!(c, b'-' | b'0'..=b'9' | b'.' | b'e' | b'E' | b'+'))
                    .unwrap_or(b.len() - i);
                let number = &b[i..i + len];
                // An integer serde_json keeps as one (not `-0`, which it prints as `0`).
                let plain = number.iter().skip(1).all(u8::is_ascii_digit)
                    && number.len() <= 18
                    && number != b"-0"
                    && number != b"-";
                if !plain {
                    return None;
                }
                i += len;
            }
            b'{' | b'}' | b'[' | b']' | b':' | b',' => i += 1,
            b't' if b[i..].starts_with(b"true") => i += 4,
            b'f' if b[i..].starts_with(b"false") => i += 5,
            b'n' if b[i..].starts_with(b"null") => i += 4,
            _ => return None,
        }
    }
    if keys != keys_in(value) {
        return None;
    }
    Some(match out {
        None => Cow::Borrowed(raw),
        Some(mut s) => {
            s.push_str(&raw[copied..]);
            Cow::Owned(s)
        }
    })
}

/// How many keys the objects in `v` hold.
fn keys_in(v: &Value) -> usize {
    match v {
        Value::Object(m) => m.len() + m.values().map(keys_in).sum::<usize>(),
        Value::Array(a) => a.iter().map(keys_in).sum(),
        _ => 0,
    }
}

/// The escape starting at `b[at]` (a backslash inside a string): where it ends and, when
/// serde_json writes it otherwise, what it writes.
fn escape(b: &[u8], at: usize) -> Option<(usize, Option<String>)> {
    match *b.get(at + 1)? {
        b'"' | b'\\' | b'b' | b'f' | b'n' | b'r' | b't' => Some((at + 2, None)),
        b'/' => Some((at + 2, Some("/".to_owned()))),
        b'u' => {
            let (c, end) = unicode_escape(b, at)?;
            let mut written = String::new();
            match c {
                '"' => written.push_str("\\\""),
                '\\' => written.push_str("\\\\"),
                '\u{8}' => written.push_str("\\b"),
                '\u{c}' => written.push_str("\\f"),
                '\n' => written.push_str("\\n"),
                '\r' => written.push_str("\\r"),
                '\t' => written.push_str("\\t"),
                c if u32::from(c) < 0x20 => written.push_str(&format!("\\u{:04x}", u32::from(c))),
                c => written.push(c),
            }
            // The same escape serde_json would write (a control character in lower-case hex)
            // stays as it is.
            let same = written.as_bytes() == &b[at..end];
            Some((end, (!same).then_some(written)))
        }
        _ => None,
    }
}

/// The `\\uXXXX` escape starting at `b[at]` (a surrogate pair read as one character): what it
/// stands for and where it ends; `None` for bad hex or a lone surrogate. Shared with the
/// redactor, which reads text with such escapes decoded.
pub(crate) fn unicode_escape(b: &[u8], at: usize) -> Option<(char, usize)> {
    let unit = hex4(b, at + 2)?;
    match unit {
        0xD800..=0xDBFF => {
            if b.get(at + 6..at + 8)? != b"\\u" {
                return None;
            }
            let low = hex4(b, at + 8)?;
            if !(0xDC00..=0xDFFF).contains(&low) {
                return None;
            }
            let code = 0x10000 + ((u32::from(unit) - 0xD800) << 10) + (u32::from(low) - 0xDC00);
            Some((char::from_u32(code)?, at + 12))
        }
        0xDC00..=0xDFFF => None,
        _ => Some((char::from_u32(u32::from(unit))?, at + 6)),
    }
}

/// JSON an agent wrote, as every reader of it parses it: without a leading byte-order mark (a
/// Windows editor's save, or files joined) and with each lone surrogate's escape written as the
/// replacement character ([`without_lone_surrogates`]). A parser refuses either, and one
/// refusal lost a whole line, document or row.
pub fn readable(json: &[u8]) -> Cow<'_, [u8]> {
    without_lone_surrogates(json.strip_prefix(b"\xef\xbb\xbf").unwrap_or(json))
}

/// `json` parsed as [`readable`] makes it, a byte that is not UTF-8 read as U+FFFD (as a line's
/// are, where one such byte lost the whole value); with whether one was. Valid text is parsed
/// once.
pub fn parse_lossy(json: &[u8]) -> serde_json::Result<(Value, bool)> {
    let readable = readable(json);
    match serde_json::from_slice(&readable) {
        Ok(v) => Ok((v, false)),
        Err(e) => match String::from_utf8_lossy(&readable) {
            Cow::Owned(text) => serde_json::from_str(&text).map(|v| (v, true)),
            Cow::Borrowed(_) => Err(e),
        },
    }
}

/// [`readable`] of a text.
pub fn readable_str(json: &str) -> Cow<'_, str> {
    without_lone_surrogates_str(json.strip_prefix('\u{feff}').unwrap_or(json))
}

/// `json` with each escaped lone surrogate (`\ud83d` with no low half after it, or a low half
/// with no high half before it) written `\ufffd`, the replacement character, so that a strict
/// parser reads it. JavaScript writes such escapes for a string cut inside a surrogate pair
/// (Claude Code's truncated tool outputs hold them), and serde_json refuses the whole line or
/// document for one, which lost the record. The escape keeps its length, so every byte offset
/// holds; a pair, and `\\ud83d` (an escaped backslash, then text), are left as written.
pub fn without_lone_surrogates(json: &[u8]) -> Cow<'_, [u8]> {
    let finder = |needle: &[u8]| memchr::memmem::find(json, needle).is_some();
    if !finder(b"\\ud") && !finder(b"\\uD") {
        return Cow::Borrowed(json);
    }
    let surrogate = |at: usize, range: std::ops::RangeInclusive<u16>| {
        json.get(at..at + 2) == Some(b"\\u")
            && hex4(json, at + 2).is_some_and(|u| range.contains(&u))
    };
    let mut out: Option<Vec<u8>> = None;
    let mut i = 0;
    while i < json.len() {
        if json[i] != b'\\' {
            i += 1;
            continue;
        }
        if surrogate(i, 0xD800..=0xDBFF) && surrogate(i + 6, 0xDC00..=0xDFFF) {
            i += 12;
        } else if surrogate(i, 0xD800..=0xDFFF) {
            out.get_or_insert_with(|| json.to_vec())[i + 2..i + 6].copy_from_slice(b"fffd");
            i += 6;
        } else {
            // Any other escape, `\\` included, is two bytes (a `\u`'s digits are no escape).
            i += 2;
        }
    }
    out.map_or(Cow::Borrowed(json), Cow::Owned)
}

/// The whole JSON object that ends `line` after a record an interrupted write cut off: the
/// agent's next append went on after the cut, on the same line (`{"type":"user","mess{"type":…}`),
/// or after the NUL bytes a crash left in the file. It opens where no JSON value may (`{"`
/// right after a byte other than `[`, `,`, `:` or whitespace: in valid JSON an unescaped `{"`
/// is always an object's start), and the rest of the line parses. The first such place of the
/// first eight, `None` when none.
pub fn record_after_cut(line: &str) -> Option<&str> {
    let b = line.as_bytes();
    memchr::memmem::find_iter(b, b"{\"")
        .filter(|&p| {
            p > 0 && !matches!(b[p - 1], b'[' | b',' | b':' | b' ' | b'\t' | b'\r' | b'\n')
        })
        .take(8)
        .find(|&p| serde_json::from_slice::<serde::de::IgnoredAny>(&b[p..]).is_ok())
        .map(|p| &line[p..])
}

/// [`without_lone_surrogates`] of a text: only ASCII hex digits change, so it stays UTF-8.
pub fn without_lone_surrogates_str(json: &str) -> Cow<'_, str> {
    match without_lone_surrogates(json.as_bytes()) {
        Cow::Borrowed(_) => Cow::Borrowed(json),
        Cow::Owned(bytes) => Cow::Owned(
            String::from_utf8(bytes)
                .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned()),
        ),
    }
}

/// The four hex digits at `b[at..]`.
fn hex4(b: &[u8], at: usize) -> Option<u16> {
    let digits = std::str::from_utf8(b.get(at..at + 4)?).ok()?;
    if !digits.bytes().all(|c| c.is_ascii_hexdigit()) {
        return None;
    }
    u16::from_str_radix(digits, 16).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Valid JSON parses as it is; a byte that is not UTF-8 becomes U+FFFD (said), after a
    /// byte-order mark and beside a lone surrogate's escape; what is not JSON stays refused.
    #[test]
    fn bytes_that_are_not_utf8_are_read_as_replacements() {
        let parse = |b: &[u8]| parse_lossy(b).ok();
        assert_eq!(
            parse(br#"{"a":"caf\u00e9"}"#),
            Some((serde_json::json!({"a": "caf\u{e9}"}), false))
        );
        assert_eq!(
            parse(b"\xef\xbb\xbf{\"a\":\"caf\xe9 \\ud83d\"}"),
            Some((serde_json::json!({"a": "caf\u{fffd} \u{fffd}"}), true))
        );
        assert_eq!(parse(b"{\"a\":\"caf\xe9\""), None);
        assert_eq!(parse(b"\xff"), None);
    }

    #[test]
    fn a_whole_record_after_a_cut_one_is_found_and_nothing_else() {
        let whole = r#"{"type":"user","message":{"content":"b"}}"#;
        let cut = r#"{"type":"user","message":{"content":"a tool's outp"#;
        assert_eq!(record_after_cut(&format!("{cut}{whole}")), Some(whole));
        assert_eq!(record_after_cut(&format!("\0\0\0{whole}")), Some(whole));
        // Cut right after a string's end, or inside a number.
        assert_eq!(
            record_after_cut(&format!(r#"{{"a":"x"{whole}"#)),
            Some(whole)
        );
        assert_eq!(
            record_after_cut(&format!(r#"{{"a":12{whole}"#)),
            Some(whole)
        );
        // A valid line, a line cut with nothing after it, or a cut after a comma: none.
        assert_eq!(record_after_cut(whole), None);
        assert_eq!(record_after_cut(cut), None);
        assert_eq!(record_after_cut(&format!(r#"{{"a":1,{whole}"#)), None);
        // `{"` inside a string is escaped in JSON: `{\"` never starts one.
        assert_eq!(record_after_cut(r#"{"t":"x{\"a\":1}"#), None);
    }

    #[test]
    fn lone_surrogates_become_the_replacement_character_and_nothing_else_moves() {
        let fixed = |s: &str| without_lone_surrogates_str(s).into_owned();
        // Cut after the high half, at the end, or a low half alone; either case of hex.
        assert_eq!(fixed(r#"{"t":"a \ud83d b"}"#), r#"{"t":"a \ufffd b"}"#);
        assert_eq!(fixed(r#"{"t":"\uD83D"}"#), r#"{"t":"\ufffd"}"#);
        assert_eq!(fixed(r#"{"t":"\ude00x"}"#), r#"{"t":"\ufffdx"}"#);
        assert_eq!(
            fixed(r#"["\ud83d\ud83d\ude00"]"#),
            r#"["\ufffd\ud83d\ude00"]"#
        );
        // A pair, an escaped backslash before `ud83d`, other escapes: as written.
        for kept in [
            r#"{"t":"\ud83d\ude00"}"#,
            r#"{"t":"\\ud83d"}"#,
            r#"{"t":"\\\u0041\n"}"#,
            r#"{"t":"\u12"}"#,
            "no escape at all",
        ] {
            assert!(
                matches!(without_lone_surrogates_str(kept), Cow::Borrowed(_)),
                "{kept}"
            );
        }
        let v: Value = serde_json::from_str(&fixed(r#"{"t":"a \ud83d b"}"#)).unwrap();
        assert_eq!(v["t"], "a \u{fffd} b");
    }

    #[test]
    fn readable_json_has_no_byte_order_mark_and_no_lone_surrogate() {
        let doc = "\u{feff}{\"t\":\"a \\ud83d\"}";
        let want = r#"{"t":"a \ufffd"}"#;
        assert_eq!(readable_str(doc), want);
        assert_eq!(readable(doc.as_bytes()).as_ref(), want.as_bytes());
        // One mark is the file's; a second is text and left for the parser to refuse.
        assert_eq!(readable_str("\u{feff}\u{feff}[]"), "\u{feff}[]");
        // Nothing to change: borrowed.
        assert!(matches!(readable(b"[1]"), Cow::Borrowed(_)));
        assert!(matches!(
            readable(b"\xef\xbb\xbf[1]"),
            Cow::Borrowed(b"[1]")
        ));
    }

    /// What serde_json writes for `raw`'s value.
    fn serde(raw: &str) -> String {
        serde_json::from_str::<Value>(raw).unwrap().to_string()
    }

    /// [`serde_form`] of `raw` and the value parsed from it (`null` when it does not parse).
    fn form(raw: &str) -> Option<String> {
        let value = serde_json::from_str::<Value>(raw).unwrap_or(Value::Null);
        serde_form(raw, &value).map(Cow::into_owned)
    }

    #[test]
    fn go_escapes_become_serde_json_text() {
        for raw in [
            r#"[{"type":"text","data":{"text":"a \u003cb\u003e \u0026 c"}}]"#,
            r#"{"input":"{\"content\":\"\\u003cfile\\u003e\"}"}"#,
            r#"{"e":"\u00e9 \ud83d\ude00 \u001b[2J \u001B \u0008\u000c\u000a\u000d\u0009 \u0022 \u005c"}"#,
            r#"{"s":"a\/b \" \\ \n","n":-12,"z":0,"t":true,"f":false,"x":null,"a":[]}"#,
            r#""just a string""#,
            "123",
            "{}",
        ] {
            assert_eq!(form(raw), Some(serde(raw)), "{raw}");
        }
    }

    #[test]
    fn text_already_in_serde_form_is_borrowed() {
        let raw = r#"{"a":"<b> & \\u003c \"q\" \u001b","n":[1,2]}"#;
        let value: Value = serde_json::from_str(raw).unwrap();
        assert!(matches!(serde_form(raw, &value), Some(Cow::Borrowed(_))));
    }

    #[test]
    fn what_serde_json_would_write_otherwise_is_refused() {
        for raw in [
            r#"{"a": 1}"#,
            "[1,\n2]",
            "1.5",
            "1e3",
            "-0",
            "12345678901234567890",
            r#""\ud83d""#,
            r#""\udc00x""#,
            r#""\u12""#,
            r#""\x""#,
            r#""unterminated"#,
            // The value keeps one of the two: the text would hold what the value does not.
            r#"{"a":"secret","a":"x"}"#,
            r#"[{"k":{"a":1,"\u0061":2}}]"#,
        ] {
            assert_eq!(form(raw), None, "{raw}");
        }
    }

    /// Any value serde_json writes comes back unchanged, and the same value with every string's
    /// characters written as `\u` escapes (as Go and Python write some) comes back as
    /// serde_json's text.
    #[test]
    fn serde_form_agrees_with_serde_json() {
        use proptest::prelude::*;
        let strategy =
            proptest::collection::vec((any::<String>(), any::<i32>(), any::<bool>()), 0..6);
        proptest!(|(fields in strategy)| {
            let v: Value = fields
                .iter()
                .enumerate()
                .map(|(i, (s, n, b))| (format!("{s}{i}"), serde_json::json!([s, n, b, null])))
                .collect::<serde_json::Map<_, _>>()
                .into();
            let text = v.to_string();
            prop_assert_eq!(serde_form(&text, &v).map(Cow::into_owned), Some(text.clone()));
            let escaped: String = text
                .chars()
                .map(|c| match c {
                    '"' | '\\' | '[' | ']' | '{' | '}' | ',' | ':' | '-' => c.to_string(),
                    c if c.is_ascii_alphanumeric() => c.to_string(),
                    c => c
                        .encode_utf16(&mut [0; 2])
                        .iter()
                        .map(|u| format!("\\u{u:04X}"))
                        .collect(),
                })
                .collect();
            // Escaping structural characters' neighbours only inside strings keeps it JSON.
            if let Ok(parsed) = serde_json::from_str::<Value>(&escaped) {
                prop_assert_eq!(&parsed, &v);
                prop_assert_eq!(serde_form(&escaped, &v).map(Cow::into_owned), Some(text.clone()));
            }
        });
    }
}

//! Redaction properties over random text and random JSON with planted rule test values:
//! - it never grows a secret: the output is exactly the input with each finding's range replaced
//!   by its `[REDACTED:<rule>]` marker, so no byte of a secret is kept, moved or duplicated, and
//!   nothing outside the findings changes;
//! - it is idempotent, for `redact_text`, `redact_line` and the outbound redactor;
//! - a JSON line stays valid JSON with the same structure (same keys count, same array lengths);
//! - a rule's test value inside base64-encoded text is found, and the whole run redacted.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::borrow::Cow;

use cairn_core::archive::redact::{Redactor, marker};
use cairn_core::archive::secrets::rules;
use proptest::prelude::*;
use serde_json::Value;

fn r() -> &'static Redactor {
    Redactor::global()
}

fn base64(data: &[u8]) -> String {
    const A: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in data.chunks(3) {
        let mut acc = 0u32;
        for (i, &c) in chunk.iter().enumerate() {
            acc |= u32::from(c) << (16 - 8 * i);
        }
        for i in 0..4 {
            out.push(if i <= chunk.len() {
                A[((acc >> (18 - 6 * i)) & 63) as usize] as char
            } else {
                '='
            });
        }
    }
    out
}

fn filler() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-zA-Z0-9 ,.:=/_-]{0,30}",
        Just(" ".to_owned()),
        Just("\n".to_owned()),
        Just("password=".to_owned()),
        Just("token: ".to_owned()),
        Just("https://".to_owned()),
        Just("é漢🎉".to_owned()),
        "[0-9a-f]{40}",
        // JSON escapes left in text quoted twice, and a home folder written with them.
        Just(r"\u0026".to_owned()),
        Just(r"\/".to_owned()),
        Just(r"\/home\/dev\/notes".to_owned()),
    ]
}

/// Text made of fillers and rule test values.
fn text() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        3 => filler(),
        1 => (0..rules().len()).prop_map(|i| rules()[i].test_value.to_owned()),
    ];
    prop::collection::vec(piece, 0..10).prop_map(|v| v.concat())
}

fn json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<i32>().prop_map(Value::from),
        text().prop_map(Value::String),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::vec(
                (
                    prop_oneof![
                        Just("text".to_owned()),
                        Just("api_key".to_owned()),
                        Just("env".to_owned()),
                        text()
                    ],
                    inner
                ),
                0..4
            )
            .prop_map(|kv| Value::Object(kv.into_iter().collect())),
        ]
    })
}

/// The same shape: kinds, array lengths and key counts (key text may be redacted).
fn same_shape(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| same_shape(p, q))
        }
        (Value::Object(x), Value::Object(y)) => {
            // Two keys may redact to the same marker and merge; never more keys than before.
            y.len() <= x.len() && y.len() >= x.len().min(1)
        }
        (Value::String(_), Value::String(_)) => true,
        (x, y) => x == y,
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(crate::support::proptest_cases(384)))]

    #[test]
    fn redaction_replaces_exactly_the_findings_with_markers(s in text()) {
        let mut found = Vec::new();
        let out = r().redact_text(&s, "", &mut found);
        let mut ranges: Vec<_> = found.iter().map(|f| (f.start, f.end, f.rule)).collect();
        ranges.sort();
        let mut expected = String::new();
        let mut at = 0;
        for (start, end, rule) in &ranges {
            prop_assert!(*start >= at, "overlapping findings {:?}", ranges);
            expected.push_str(&s[at..*start]);
            expected.push_str(&marker(rule));
            at = *end;
        }
        expected.push_str(&s[at..]);
        prop_assert_eq!(out.as_ref(), expected.as_str());
        // So the output never holds more of a secret than the input did outside it.
        for (start, end, _) in &ranges {
            let secret = &s[*start..*end];
            if secret.len() >= 8 {
                prop_assert!(
                    out.matches(secret).count() < s.matches(secret).count(),
                    "{:?} kept in {:?}", secret, out
                );
            }
        }
    }

    #[test]
    fn every_planted_test_value_is_found(pre in filler(), i in 0..rules().len(), post in filler()) {
        let rule = &rules()[i];
        let s = format!("{pre} {} {post}", rule.test_value);
        let found = r().scan_text(&s);
        prop_assert!(!found.is_empty(), "{} not found in {:?}", rule.name, s);
    }

    #[test]
    fn redact_line_is_idempotent_and_keeps_json_shape(v in json()) {
        let line = serde_json::to_string(&v).unwrap();
        let once = r().redact_line(&line, &mut Vec::new()).into_owned();
        let parsed: Value = serde_json::from_str(&once).unwrap();
        prop_assert!(same_shape(&v, &parsed), "{} -> {}", line, once);
        let mut again = Vec::new();
        let twice = r().redact_line(&once, &mut again);
        prop_assert!(matches!(twice, Cow::Borrowed(_)), "second pass changed {}", once);
        prop_assert!(again.is_empty());
    }

    /// A long base64 run is decoded and scanned again: a page of text holding a rule's test
    /// value, encoded, is redacted whole, under a name no layer knows.
    #[test]
    fn base64_of_text_with_a_secret_is_redacted_whole(
        pre in filler(), i in 0..rules().len(), post in filler(), url_safe in any::<bool>()
    ) {
        let text = format!(
            "{pre} {} {post}\nThe rest of the file is plain configuration that says nothing \
             secret at all, long enough that its encoding is longer than a token could be.\n",
            rules()[i].test_value
        );
        let mut run = base64(text.as_bytes());
        if url_safe {
            run = run.trim_end_matches('=').replace('+', "-").replace('/', "_");
        }
        prop_assert!(run.len() > 200);
        let line = format!("BLOB_DATA: {run}\n");
        let mut found = Vec::new();
        let out = r().redact_text(&line, "", &mut found);
        prop_assert!(!out.contains(&run), "{} kept in {:?}", rules()[i].name, out);
        prop_assert!(!found.is_empty());
        prop_assert_eq!(r().redact_text(&out, "", &mut Vec::new()), out.clone());
    }

    #[test]
    fn outbound_text_is_idempotent_and_leaves_no_secret(s in text()) {
        let out = r().outbound_text(&s, Some("/work/repo"), Some("/home/dev"), &mut Vec::new());
        prop_assert!(r().scan_text(&out).iter().all(|f| f.rule == "path"), "{:?}", out);
        prop_assert!(!out.replace(r"\/", "/").contains("/home/dev"), "{:?} -> {:?}", s, out);
        let twice = r().outbound_text(&out, Some("/work/repo"), Some("/home/dev"), &mut Vec::new());
        prop_assert_eq!(twice, out);
    }
}

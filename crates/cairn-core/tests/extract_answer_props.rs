//! A model's extraction answer is hostile input (a model can return anything): properties of
//! the parser that takes it (`recall::extract::output::parse` and `evidence_range`) and of
//! `llm::generator::unfence`, which takes an agent CLI's answer out of its code fence first.
//! Answers are generated the way models write them (entries in any key order, compact or pretty,
//! text fields with terminal escapes, control and bidi characters between what they show, JSON
//! `\u` escapes, ordinals anywhere in `i64` and past it), then spoiled (cut off, fenced, prose
//! around, a key repeated, missing or unknown, values of the wrong type or out of range, nesting
//! past serde_json's limit):
//! - nothing panics; a refusal is a protocol error whose message is one printable line;
//! - a well-formed answer gives back every entry, in order, each with its fields: the text the
//!   model showed (escape sequences, controls and bidi controls gone, trimmed), its entities
//!   distinct and not blank, its confidence and its ordinals exactly as written;
//! - a cut-off answer is refused whole, never a part of its entries; so is one with prose
//!   around it, or fenced, unless an agent's answer is one fenced block (`unfence` then gives the
//!   same entries as the bare answer);
//! - every deviation from the schema (a repeated key included) refuses the whole answer, and a
//!   deviation of the schema names the entry; 100 entries are taken, 101 refused; a text field
//!   is measured by what it shows, so escape sequences do not push it past its cap;
//! - an ordinal is kept exactly when it is an integer `i64` holds, else the answer is refused;
//!   `evidence_range` gives the citation when it lies within the unit in order, and nothing
//!   otherwise (never clamped, widened or wrapped: an ordinal `2^32 + k` is not `k`).
//!
//! `PROPTEST_CASES` raises the case count (256; 48 for the cap of entries) for a long run.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fmt::Write as _;

use cairn_core::llm::LlmError;
use cairn_core::llm::generator::unfence;
use cairn_core::recall::extract::output::{RawEntry, evidence_range, parse};
use cairn_core::recall::extract::prompt::{
    MAX_BODY, MAX_ENTITIES, MAX_ENTITY, MAX_ENTRIES, MAX_TITLE, MAX_TRIGGER, TYPES,
};
use cairn_core::recall::model::EntryType;
use cairn_core::text::printable;
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;

use crate::support;

// ---- text fields ------------------------------------------------------------------------------

/// What `text::printable` removes whole: escape sequences (CSI, OSC with BEL or ST, DCS, nF,
/// Fp, 8-bit CSI and OSC), C0 and C1 controls but newline and tab, bidi controls. Not the
/// line-breaking controls (CR, VT, FF, NEL): a reader is shown a space for one between words.
const HIDDEN: &[&str] = &[
    "\u{1b}[31m",
    "\u{1b}[0m",
    "\u{1b}[2J",
    "\u{1b}[1;1H",
    "\u{1b}]0;pwned\u{7}",
    "\u{1b}]8;;https://x.test/\u{1b}\\",
    "\u{1b}P+q544e\u{1b}\\",
    "\u{1b}(B",
    "\u{1b}7",
    "\u{9b}2J",
    "\u{9d}0;t\u{9c}",
    "\u{0}",
    "\u{7}",
    "\u{8}",
    "\u{7f}",
    "\u{84}",
    "\u{202e}",
    "\u{202a}",
    "\u{2066}",
    "\u{2069}",
];

#[derive(Debug, Clone)]
enum Piece {
    Shown(String),
    Hidden(&'static str),
}

/// A text field as the model writes it: what it shows, with what is never shown in between.
#[derive(Debug, Clone)]
struct Text(Vec<Piece>);

impl Text {
    fn raw(&self) -> String {
        self.0
            .iter()
            .map(|p| match p {
                Piece::Shown(s) => s.as_str(),
                Piece::Hidden(h) => h,
            })
            .collect()
    }

    /// What the entry must hold: the shown text, trimmed.
    fn shown(&self) -> String {
        let all: String = self
            .0
            .iter()
            .filter_map(|p| match p {
                Piece::Shown(s) => Some(s.as_str()),
                Piece::Hidden(_) => None,
            })
            .collect();
        all.trim().to_owned()
    }
}

fn shown_piece() -> impl Strategy<Value = String> {
    prop_oneof![
        6 => "[a-zA-Z0-9 ,.:;!?()'/_#=+-]{1,12}",
        1 => prop::sample::select(vec![
            "é", "漢字", "🎉", "ß", "\"", "\\", "\n", "\t", "  ", "{\"a\":[1]}", "\\u001b", "Ω≈ç",
            "```", "```rust",
        ])
        .prop_map(str::to_owned),
    ]
}

fn piece() -> impl Strategy<Value = Piece> {
    prop_oneof![
        3 => shown_piece().prop_map(Piece::Shown),
        2 => prop::sample::select(HIDDEN).prop_map(Piece::Hidden),
    ]
}

/// Any text field, blank ones included (nothing shown, or only whitespace).
fn text(max: usize) -> impl Strategy<Value = Text> {
    prop::collection::vec(piece(), 0..max).prop_map(Text)
}

/// A text field that shows something.
fn shown_text(max: usize) -> impl Strategy<Value = Text> {
    (text(max), "[a-zA-Z0-9]{1,8}", any::<prop::sample::Index>()).prop_map(|(mut t, w, at)| {
        let i = at.index(t.0.len() + 1);
        t.0.insert(i, Piece::Shown(w));
        t
    })
}

/// A JSON string literal: control characters escaped, the rest raw or (`ascii`) `\u` escapes,
/// astral characters as surrogate pairs.
fn quote(s: &str, ascii: bool) -> String {
    let mut out = String::from('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            c if u32::from(c) < 0x20 || (ascii && !c.is_ascii()) => {
                let mut buf = [0u16; 2];
                for u in c.encode_utf16(&mut buf) {
                    write!(out, "\\u{u:04x}").unwrap();
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

// ---- entries and answers ----------------------------------------------------------------------

/// An entry as a model writes it.
#[derive(Debug, Clone)]
struct Gen {
    ty: EntryType,
    title: Text,
    body: Text,
    trigger: Text,
    /// The value, and how it is spelled.
    confidence: (f64, String),
    entities: Vec<Text>,
    first: i64,
    last: i64,
    /// The order the seven keys are written in.
    order: Vec<usize>,
}

const KEYS: [&str; 7] = [
    "type",
    "title",
    "body",
    "trigger",
    "confidence",
    "entities",
    "evidence",
];

/// Ordinals where they are, where they are not, and where a cast to `u32` would wrap them
/// into a unit (`2^32·k + x`).
fn ordinal() -> impl Strategy<Value = i64> {
    prop_oneof![
        6 => 0i64..2_000,
        1 => -2_000i64..0,
        1 => 0..=i64::from(u32::MAX),
        2 => (1i64..8, 0i64..2_000).prop_map(|(k, x)| (k << 32) + x),
        1 => (-8i64..0, 0i64..2_000).prop_map(|(k, x)| (k << 32) + x),
        1 => any::<i64>(),
        1 => prop::sample::select(vec![i64::MIN, i64::MAX, i64::MIN + 1, i64::MAX - 1]),
    ]
}

fn confidence() -> impl Strategy<Value = (f64, String)> {
    prop_oneof![
        4 => (0.0..=1.0f64).prop_map(|c| (c, serde_json::to_string(&c).unwrap())),
        1 => prop::sample::select(vec![
            (0.0, "0"),
            (0.0, "0.0"),
            (0.0, "0e0"),
            (0.0, "0E-7"),
            (1.0, "1"),
            (1.0, "1.0"),
            (1.0, "1E0"),
            (1.0, "10e-1"),
            (0.5, "5e-1"),
            (0.25, "0.250"),
        ])
        .prop_map(|(c, s)| (c, s.to_owned())),
    ]
}

fn entry() -> impl Strategy<Value = Gen> {
    (
        prop::sample::select(TYPES),
        shown_text(8),
        shown_text(12),
        text(6),
        confidence(),
        prop::collection::vec(text(4), 0..6),
        ordinal(),
        ordinal(),
        Just((0..7).collect::<Vec<usize>>()).prop_shuffle(),
    )
        .prop_map(
            |(ty, title, body, trigger, confidence, mut entities, first, last, order)| {
                // A model repeats an entity now and then.
                if let Some(e) = entities.first().cloned()
                    && entities.len() % 2 == 1
                {
                    entities.push(e);
                }
                Gen {
                    ty,
                    title,
                    body,
                    trigger,
                    confidence,
                    entities,
                    first,
                    last,
                    order,
                }
            },
        )
}

/// Layout: the whitespace between tokens, whether strings are ASCII with `\u` escapes, what
/// surrounds the answer.
#[derive(Debug, Clone)]
struct Style {
    gap: &'static str,
    colon: &'static str,
    ascii: bool,
    lead: &'static str,
    trail: &'static str,
}

fn style() -> impl Strategy<Value = Style> {
    (
        prop::sample::select(vec!["", " ", "\n  ", "\r\n\t", "\n"]),
        prop::sample::select(vec![":", ": ", " : ", ":\n"]),
        any::<bool>(),
        prop::sample::select(vec!["", "", "\n", "  \n", "\t"]),
        prop::sample::select(vec!["", "", "\n", "\n\n", " \r\n"]),
    )
        .prop_map(|(gap, colon, ascii, lead, trail)| Style {
            gap,
            colon,
            ascii,
            lead,
            trail,
        })
}

fn object(members: &[(String, String)], s: &Style) -> String {
    let inner: Vec<String> = members
        .iter()
        .map(|(k, v)| format!("{}{}{}{}", s.gap, quote(k, s.ascii), s.colon, v))
        .collect();
    format!("{{{}{}}}", inner.join(","), s.gap)
}

fn array(items: &[String], s: &Style) -> String {
    let inner: Vec<String> = items.iter().map(|i| format!("{}{i}", s.gap)).collect();
    format!("[{}{}]", inner.join(","), s.gap)
}

/// The entry's members, in its key order, as JSON text.
fn members(g: &Gen, s: &Style) -> Vec<(String, String)> {
    let value = |k: usize| match k {
        0 => quote(g.ty.as_str(), s.ascii),
        1 => quote(&g.title.raw(), s.ascii),
        2 => quote(&g.body.raw(), s.ascii),
        3 => quote(&g.trigger.raw(), s.ascii),
        4 => g.confidence.1.clone(),
        5 => {
            let items: Vec<String> = g
                .entities
                .iter()
                .map(|e| quote(&e.raw(), s.ascii))
                .collect();
            array(&items, s)
        }
        _ => object(
            &[
                ("first".to_owned(), g.first.to_string()),
                ("last".to_owned(), g.last.to_string()),
            ],
            s,
        ),
    };
    g.order
        .iter()
        .map(|&k| (KEYS[k].to_owned(), value(k)))
        .collect()
}

fn answer_of(entries: &[String], s: &Style) -> String {
    format!(
        "{}{}{}",
        s.lead,
        object(&[("entries".to_owned(), array(entries, s))], s),
        s.trail
    )
}

fn answer(gens: &[Gen], s: &Style) -> String {
    let entries: Vec<String> = gens.iter().map(|g| object(&members(g, s), s)).collect();
    answer_of(&entries, s)
}

// ---- checks -----------------------------------------------------------------------------------

/// A refusal: a schema error, its message one printable line of bounded length.
fn refused(content: &str, got: Result<Vec<RawEntry>, LlmError>) -> Result<String, TestCaseError> {
    match got {
        Ok(entries) => Err(TestCaseError::fail(format!(
            "taken ({} entries): {content:?}",
            entries.len()
        ))),
        Err(LlmError::Schema(m)) => {
            prop_assert!(!m.is_empty() && m.chars().count() <= 1_000, "{m:?}");
            prop_assert!(!m.chars().any(char::is_control), "{m:?}");
            Ok(m)
        }
        Err(e) => Err(TestCaseError::fail(format!(
            "not a schema error: {e:?} for {content:?}"
        ))),
    }
}

/// What any accepted entry holds, whatever the answer was.
fn sound(e: &RawEntry) -> Result<(), TestCaseError> {
    prop_assert!(TYPES.contains(&e.entry_type));
    for (what, v, max, blank_ok) in [
        ("title", &e.title, MAX_TITLE, false),
        ("body", &e.body, MAX_BODY, false),
        ("trigger", &e.trigger, MAX_TRIGGER, true),
    ] {
        prop_assert!(v.chars().count() <= max, "{what} past its cap");
        prop_assert!(blank_ok || !v.is_empty(), "a blank {what}");
        prop_assert_eq!(v.trim(), v.as_str(), "{} not trimmed", what);
        prop_assert_eq!(&printable(v), v, "{} not printable", what);
    }
    prop_assert!(e.confidence.is_finite() && (0.0..=1.0).contains(&e.confidence));
    prop_assert!(e.entities.len() <= MAX_ENTITIES);
    for (j, x) in e.entities.iter().enumerate() {
        prop_assert!(!x.is_empty() && x.chars().count() <= MAX_ENTITY);
        prop_assert_eq!(x.trim(), x.as_str());
        prop_assert_eq!(&printable(x), x);
        prop_assert!(!e.entities[..j].contains(x), "entity {:?} twice", x);
    }
    Ok(())
}

/// Parse anything: refused properly, or every entry sound.
fn outcome(content: &str) -> Result<Option<Vec<RawEntry>>, TestCaseError> {
    match parse(content) {
        Ok(entries) => {
            prop_assert!(entries.len() <= MAX_ENTRIES);
            for e in &entries {
                sound(e)?;
            }
            Ok(Some(entries))
        }
        Err(e) => {
            refused(content, Err(e))?;
            Ok(None)
        }
    }
}

/// Each generated entry came back with its fields.
fn same_entries(got: &[RawEntry], gens: &[Gen]) -> Result<(), TestCaseError> {
    prop_assert_eq!(got.len(), gens.len(), "entries lost or invented");
    for (e, g) in got.iter().zip(gens) {
        prop_assert_eq!(e.entry_type, g.ty);
        prop_assert_eq!(&e.title, &g.title.shown());
        prop_assert_eq!(&e.body, &g.body.shown());
        prop_assert_eq!(&e.trigger, &g.trigger.shown());
        // serde_json reads a float to within an ulp (no `float_roundtrip`), never further.
        prop_assert!(
            (e.confidence - g.confidence.0).abs() <= 1e-12,
            "confidence {} for {}",
            e.confidence,
            g.confidence.1
        );
        let mut want: Vec<String> = Vec::new();
        for x in &g.entities {
            let x = x.shown();
            if !x.is_empty() && !want.contains(&x) {
                want.push(x);
            }
        }
        prop_assert_eq!(&e.entities, &want);
        prop_assert_eq!(
            (e.first, e.last),
            (g.first, g.last),
            "ordinals not as written"
        );
    }
    Ok(())
}

/// `evidence_range`'s contract for the unit `start..=end`: the citation exactly as written when
/// it lies within the unit in order, else nothing (a reversed unit holds nothing).
fn in_unit(e: &RawEntry, start: u32, end: u32) -> Result<(), TestCaseError> {
    let got = evidence_range(e, start, end);
    let (s, t) = (i64::from(start), i64::from(end));
    let inside = s <= e.first && e.first <= e.last && e.last <= t;
    let want = inside.then_some((e.first as u32, e.last as u32));
    prop_assert_eq!(
        got,
        want,
        "cited {}..{} in unit {}..{}",
        e.first,
        e.last,
        start,
        end
    );
    Ok(())
}

// ---- spoiling an answer -----------------------------------------------------------------------

/// Values of the wrong type or out of range for each key (by `KEYS` index).
fn bad_values(key: usize) -> Vec<String> {
    let v: Vec<&str> = match key {
        0 => vec![
            "null",
            "5",
            "true",
            r#""rumour""#,
            r#""Fact""#,
            r#"" fact""#,
            r#""debugging-method""#,
            r#""""#,
            r#"["fact"]"#,
        ],
        1 => vec![
            "null",
            "5",
            "[]",
            "{}",
            r#""""#,
            r#""  \u001b[2J \t\u202e""#,
            r#""\ud800""#,
        ],
        2 => vec!["null", "1", r#""""#, r#"" \n\r ""#, r#"["b"]"#],
        3 => vec!["null", "0", "[]", "false"],
        4 => vec![
            r#""0.5""#,
            "null",
            "-0.01",
            "1.0000001",
            "2",
            "-1",
            "-1e-300",
            "1e400",
            "true",
            "[]",
        ],
        5 => vec![
            r#""a""#,
            "null",
            "{}",
            "[5]",
            "[null]",
            r#"["a", []]"#,
            r#"[{"name": "a"}]"#,
        ],
        _ => vec![
            "null",
            "[1, 2]",
            r#""1-2""#,
            "{}",
            r#"{"first": 1}"#,
            r#"{"last": 1}"#,
            r#"{"first": 1, "last": 2, "why": ""}"#,
            r#"{"first": "1", "last": 2}"#,
            r#"{"first": 1.0, "last": 2}"#,
            r#"{"first": 1, "last": 2.5}"#,
            r#"{"first": 1, "last": -0}"#,
            r#"{"first": 1, "last": 1e2}"#,
            r#"{"first": 1, "last": 9223372036854775808}"#,
            r#"{"first": -9223372036854775809, "last": 2}"#,
            r#"{"first": 18446744073709551616, "last": 2}"#,
            r#"{"first": null, "last": 2}"#,
        ],
    };
    let mut v: Vec<String> = v.into_iter().map(str::to_owned).collect();
    let long = |n: usize| format!("\"{}\"", "x".repeat(n));
    match key {
        1 => v.push(long(MAX_TITLE + 1)),
        2 => v.push(long(MAX_BODY + 1)),
        3 => v.push(long(MAX_TRIGGER + 1)),
        5 => {
            v.push(format!("[{}]", long(MAX_ENTITY + 1)));
            let many: Vec<String> = (0..=MAX_ENTITIES).map(|i| format!("\"e{i}\"")).collect();
            v.push(format!("[{}]", many.join(",")));
        }
        _ => {}
    }
    v
}

/// One way an entry breaks the schema.
#[derive(Debug, Clone)]
enum Spoil {
    /// A key the schema does not have.
    Unknown(String),
    /// A key left out.
    Missing(usize),
    /// A key written twice, both values valid: which one the parser would take is a guess.
    Repeated(usize),
    /// A value of the wrong type or out of range.
    Bad(usize, prop::sample::Index),
    /// A key of `evidence` written twice.
    RepeatedOrdinal(bool),
}

fn spoil() -> impl Strategy<Value = Spoil> {
    prop_oneof![
        prop::sample::select(vec!["extra", "Title", "evidence ", "notes", "first", ""])
            .prop_map(|k| Spoil::Unknown(k.to_owned())),
        (0usize..7).prop_map(Spoil::Missing),
        (0usize..7).prop_map(Spoil::Repeated),
        (0usize..7, any::<prop::sample::Index>()).prop_map(|(k, i)| Spoil::Bad(k, i)),
        any::<bool>().prop_map(Spoil::RepeatedOrdinal),
    ]
}

fn spoiled(g: &Gen, how: &Spoil, s: &Style) -> String {
    let mut m = members(g, s);
    let at = |m: &[(String, String)], k: usize| {
        m.iter()
            .position(|(name, _)| name == KEYS[k])
            .expect("every key is written")
    };
    match how {
        Spoil::Unknown(k) => m.insert(m.len() / 2, (k.clone(), "1".to_owned())),
        Spoil::Missing(k) => {
            let i = at(&m, *k);
            m.remove(i);
        }
        Spoil::Repeated(k) => {
            let i = at(&m, *k);
            let again = m[i].clone();
            m.push(again);
        }
        Spoil::Bad(k, pick) => {
            let values = bad_values(*k);
            let i = at(&m, *k);
            m[i].1 = values[pick.index(values.len())].clone();
        }
        Spoil::RepeatedOrdinal(first) => {
            let i = at(&m, 6);
            let (k, v) = if *first {
                ("first", g.first)
            } else {
                ("last", g.last)
            };
            m[i].1 = object(
                &[
                    ("first".to_owned(), g.first.to_string()),
                    ("last".to_owned(), g.last.to_string()),
                    (k.to_owned(), v.to_string()),
                ],
                s,
            );
        }
    }
    object(&m, s)
}

/// Every char boundary of `s` strictly inside it.
fn cut(s: &str, at: prop::sample::Index) -> &str {
    let bounds: Vec<usize> = (0..s.len()).filter(|&i| s.is_char_boundary(i)).collect();
    &s[..bounds[at.index(bounds.len())]]
}

/// Text that looks like an answer in pieces: JSON punctuation, keys, values, escapes, fences.
fn hostile_text() -> impl Strategy<Value = String> {
    let token = prop_oneof![
        Just("{".to_owned()),
        Just("}".to_owned()),
        Just("[".to_owned()),
        Just("]".to_owned()),
        Just(",".to_owned()),
        Just(":".to_owned()),
        Just("\"".to_owned()),
        Just("\"entries\":".to_owned()),
        prop::sample::select(KEYS.to_vec()).prop_map(|k| format!("\"{k}\":")),
        Just("\"first\":".to_owned()),
        Just("\"last\":".to_owned()),
        prop::sample::select(TYPES).prop_map(|t| format!("\"{}\"", t.as_str())),
        ordinal().prop_map(|n| n.to_string()),
        Just("9223372036854775808".to_owned()),
        Just("1e400".to_owned()),
        Just("0.5".to_owned()),
        Just("null".to_owned()),
        Just("\\u001b".to_owned()),
        Just("\\ud800".to_owned()),
        Just("```json\n".to_owned()),
        Just("```".to_owned()),
        prop::sample::select(HIDDEN).prop_map(str::to_owned),
        "\\PC{0,6}",
        " |\n|\t|\r\n",
    ];
    prop::collection::vec(token, 0..40).prop_map(|v| v.concat())
}

// ---- properties -------------------------------------------------------------------------------

proptest! {
    #![proptest_config(ProptestConfig::with_cases(support::proptest_cases(256)))]

    #[test]
    fn a_well_formed_answer_gives_back_every_entry(
        gens in prop::collection::vec(entry(), 0..8),
        s in style(),
    ) {
        let text = answer(&gens, &s);
        let got = parse(&text)
            .map_err(|e| TestCaseError::fail(format!("{e} for {text:?}")))?;
        same_entries(&got, &gens)?;
        for e in &got {
            sound(e)?;
        }
        // An agent's answer goes through `unfence` first; a bare one is left as it is.
        prop_assert_eq!(parse(unfence(&text)).ok(), Some(got));
    }

    #[test]
    fn ordinals_are_kept_exactly_and_taken_only_within_the_unit_never_wrapped(
        g in entry(),
        s in style(),
        units in prop::collection::vec((any::<u32>(), any::<u32>()), 1..6),
        near in (0u32..4_000, 0u32..4_000),
    ) {
        let text = answer(std::slice::from_ref(&g), &s);
        let e = parse(&text)
            .map_err(|e| TestCaseError::fail(format!("{e} for {text:?}")))?
            .remove(0);
        prop_assert_eq!((e.first, e.last), (g.first, g.last));
        let mut units = units;
        // Units near small ordinals, where a wrapped `2^32·k + x` would land.
        units.push((near.0.min(near.1), near.0.max(near.1)));
        units.push((0, u32::MAX));
        units.push((0, 0));
        for (start, end) in units {
            in_unit(&e, start, end)?;
            in_unit(&e, start.min(end), start.max(end))?;
        }
    }

    #[test]
    fn ordinals_past_i64_or_not_integers_refuse_the_answer(
        g in entry(),
        s in style(),
        which in any::<bool>(),
        spelled in prop_oneof![
            (i128::from(i64::MAX) + 1..=i128::from(u64::MAX) * 4).prop_map(|n| n.to_string()),
            (-(i128::from(u64::MAX) * 4)..i128::from(i64::MIN))
                .prop_map(|n| n.to_string()),
            (0i64..5_000).prop_map(|n| format!("{n}.0")),
            (0i64..50).prop_map(|n| format!("{n}e1")),
            (0i64..50).prop_map(|n| format!("{n}E+0")),
            Just("-0".to_owned()),
            (0i64..5_000).prop_map(|n| format!("\"{n}\"")),
        ],
    ) {
        let mut m = members(&g, &s);
        let i = m.iter().position(|(k, _)| k == "evidence").unwrap();
        let (first, last) = if which {
            (spelled.clone(), g.last.to_string())
        } else {
            (g.first.to_string(), spelled.clone())
        };
        m[i].1 = object(&[("first".to_owned(), first), ("last".to_owned(), last)], &s);
        let text = answer_of(&[object(&m, &s)], &s);
        refused(&text, parse(&text))?;
    }

    #[test]
    fn a_cut_off_answer_is_refused_whole(
        gens in prop::collection::vec(entry(), 1..6),
        s in style(),
        at in any::<prop::sample::Index>(),
        fenced in any::<bool>(),
    ) {
        let text = answer(&gens, &s);
        let whole = text.trim();
        let part = cut(whole, at);
        let m = refused(part, parse(part))?;
        prop_assert!(m.contains("not JSON"), "{m}");
        // An agent's answer cut off inside its fence keeps the fence: refused too.
        let agent = if fenced { format!("```json\n{whole}\n```") } else { whole.to_owned() };
        let agent_part = cut(&agent, at);
        refused(agent_part, parse(unfence(agent_part)))?;
    }

    #[test]
    fn only_a_whole_fenced_answer_is_unfenced_and_prose_is_refused(
        gens in prop::collection::vec(entry(), 0..4),
        s in style(),
        info in prop::sample::select(vec!["json", "", "JSON", "json5"]),
        around in prop::sample::select(vec![" ", "\n", "\n\n", "\t\n"]),
        prose in prop::sample::select(vec![
            "Here are the entries:",
            "Sure!",
            "```",
            "I found nothing worth keeping.",
            "{\"entries\": []}",
        ]),
        before in any::<bool>(),
    ) {
        let text = answer(&gens, &s);
        let bare = parse(&text).map_err(|e| TestCaseError::fail(e.to_string()))?;
        let fenced = format!("{around}```{info}\n{text}\n```{around}");
        // An endpoint's answer is never unfenced.
        refused(&fenced, parse(&fenced))?;
        prop_assert_eq!(parse(unfence(&fenced)).ok(), Some(bare.clone()));
        let with_prose = if before {
            format!("{prose}\n{fenced}")
        } else {
            format!("{fenced}\n{prose}")
        };
        refused(&with_prose, parse(unfence(&with_prose)))?;
        let bare_with_prose = if before {
            format!("{prose}\n{text}")
        } else {
            format!("{text}\n{prose}")
        };
        refused(&bare_with_prose, parse(unfence(&bare_with_prose)))?;
    }

    #[test]
    fn every_deviation_refuses_the_whole_answer(
        gens in prop::collection::vec(entry(), 1..5),
        s in style(),
        pick in any::<prop::sample::Index>(),
        how in spoil(),
    ) {
        let i = pick.index(gens.len());
        let entries: Vec<String> = gens
            .iter()
            .enumerate()
            .map(|(j, g)| if j == i { spoiled(g, &how, &s) } else { object(&members(g, &s), &s) })
            .collect();
        let text = answer_of(&entries, &s);
        let m = refused(&text, parse(&text))?;
        // A deviation JSON itself allows is reported at its entry.
        let is_json = serde_json::from_str::<serde_json::Value>(&text).is_ok();
        let repeated = matches!(how, Spoil::Repeated(_) | Spoil::RepeatedOrdinal(_));
        if is_json && !repeated {
            prop_assert!(m.contains(&format!("entries[{i}]")), "{m} (entry {i})");
        }
    }

    #[test]
    fn a_repeated_entries_key_is_refused_not_half_read(
        a in prop::collection::vec(entry(), 0..4),
        b in prop::collection::vec(entry(), 0..4),
        s in style(),
    ) {
        let render = |gens: &[Gen]| {
            let items: Vec<String> = gens.iter().map(|g| object(&members(g, &s), &s)).collect();
            array(&items, &s)
        };
        let text = object(
            &[("entries".to_owned(), render(&a)), ("entries".to_owned(), render(&b))],
            &s,
        );
        refused(&text, parse(&text))?;
    }

    #[test]
    fn a_text_field_is_measured_by_what_it_shows(
        g in entry(),
        field in 0usize..4,
        over in 0usize..2,
        hidden in prop::collection::vec(prop::sample::select(HIDDEN), 1..30),
        s in style(),
    ) {
        // Exactly the cap (or one more) shown, with escape sequences and controls between.
        let cap = [MAX_TITLE, MAX_BODY, MAX_TRIGGER, MAX_ENTITY][field];
        let mut pieces = Vec::new();
        let mut left = cap + over;
        for (k, &h) in hidden.iter().enumerate() {
            let n = if k + 1 == hidden.len() { left } else { left.min(cap / hidden.len()) };
            pieces.push(Piece::Shown("é".repeat(n)));
            pieces.push(Piece::Hidden(h));
            left -= n;
        }
        let t = Text(pieces);
        let mut g = g;
        match field {
            0 => g.title = t.clone(),
            1 => g.body = t.clone(),
            2 => g.trigger = t.clone(),
            _ => g.entities = vec![t.clone()],
        }
        let text = answer(std::slice::from_ref(&g), &s);
        if over == 0 {
            let e = parse(&text)
                .map_err(|e| TestCaseError::fail(format!("{e} at the cap")))?
                .remove(0);
            let got = match field {
                0 => &e.title,
                1 => &e.body,
                2 => &e.trigger,
                _ => &e.entities[0],
            };
            prop_assert_eq!(got.chars().count(), cap);
        } else {
            let m = refused(&text, parse(&text))?;
            prop_assert!(m.contains(&format!("longer than {cap} characters")), "{m}");
        }
    }

    #[test]
    fn nesting_past_the_limit_is_refused_without_overflow(
        depth in 1usize..20_000,
        objects in any::<bool>(),
        g in entry(),
        s in style(),
        key in 0usize..7,
    ) {
        let (open, close) = if objects { ("{\"a\":", "}") } else { ("[", "]") };
        let deep = format!("{}0{}", open.repeat(depth), close.repeat(depth));
        let mut m = members(&g, &s);
        m[key].1 = deep.clone();
        for text in [answer_of(&[object(&m, &s)], &s), deep] {
            refused(&text, parse(&text))?;
        }
    }

    #[test]
    fn any_text_is_refused_or_taken_sound(text in hostile_text()) {
        outcome(&text)?;
        outcome(unfence(&text))?;
        let inner = unfence(&text);
        prop_assert_eq!(unfence(inner), inner, "unfence is not idempotent");
        prop_assert!(text.contains(inner));
    }

    #[test]
    fn a_mangled_answer_is_refused_or_taken_sound(
        gens in prop::collection::vec(entry(), 1..4),
        s in style(),
        edits in prop::collection::vec(
            (any::<prop::sample::Index>(), any::<prop::sample::Index>(), 0usize..3),
            1..4,
        ),
        inserts in prop::collection::vec(
            prop_oneof![
                Just("\"".to_owned()), Just(",".to_owned()), Just("}".to_owned()),
                Just("]".to_owned()), Just("null".to_owned()), Just("-".to_owned()),
                Just("\\u0000".to_owned()), Just("99999999999999999999".to_owned()),
                prop::sample::select(HIDDEN).prop_map(str::to_owned),
            ],
            1..4,
        ),
    ) {
        let mut text = answer(&gens, &s);
        for (k, (at, len, op)) in edits.iter().enumerate() {
            let bounds: Vec<usize> =
                (0..=text.len()).filter(|&i| text.is_char_boundary(i)).collect();
            let a = bounds[at.index(bounds.len())];
            let b = bounds[(at.index(bounds.len()) + 1 + len.index(8)).min(bounds.len() - 1)];
            match op {
                0 => text.replace_range(a..b.max(a), ""),
                1 => text.insert_str(a, &inserts[k % inserts.len()]),
                _ => {
                    let piece = text[a..b.max(a)].to_owned();
                    text.insert_str(a, &piece);
                }
            }
        }
        if let Some(entries) = outcome(&text)? {
            // Whatever was taken, JSON holds exactly that many entries.
            let v: serde_json::Value = serde_json::from_str(text.trim()).unwrap();
            prop_assert_eq!(v["entries"].as_array().map(Vec::len), Some(entries.len()));
        }
    }

    #[test]
    fn evidence_range_keeps_to_the_unit_for_any_citation(
        first in ordinal(),
        last in ordinal(),
        start in any::<u32>(),
        end in any::<u32>(),
    ) {
        let e = RawEntry {
            entry_type: EntryType::Fact,
            title: "t".into(),
            body: "b".into(),
            trigger: String::new(),
            confidence: 0.5,
            entities: Vec::new(),
            first,
            last,
        };
        in_unit(&e, start, end)?;
        in_unit(&e, start.min(end), start.max(end))?;
        // The same citation moved by whole multiples of 2^32 lands elsewhere, never on it.
        let (s, t) = (start.min(end), start.max(end));
        if let (Some(f), Some(l)) = (first.checked_add(1 << 32), last.checked_add(1 << 32)) {
            let moved = RawEntry { first: f, last: l, ..e.clone() };
            // Taken, if at all, as written: never wrapped onto the first citation.
            if let Some((a, b)) = evidence_range(&moved, s, t) {
                prop_assert_eq!((i64::from(a), i64::from(b)), (f, l));
            }
        }
    }
}

proptest! {
    // Each case parses about a hundred entries: fewer cases by default.
    #![proptest_config(ProptestConfig::with_cases(support::proptest_cases(48)))]

    #[test]
    fn at_most_the_cap_of_entries_is_taken(
        n in (MAX_ENTRIES - 3)..=(MAX_ENTRIES + 3),
        g in entry(),
    ) {
        let s = Style { gap: "", colon: ":", ascii: false, lead: "", trail: "" };
        // Each one its own (the same entry twice in one answer is kept once).
        let entries: Vec<Gen> = (0..n)
            .map(|i| {
                let mut e = g.clone();
                e.title.0.push(Piece::Shown(format!(" {i}")));
                e
            })
            .collect();
        let text = answer(&entries, &s);
        if n <= MAX_ENTRIES {
            prop_assert_eq!(parse(&text).map(|e| e.len()).ok(), Some(n));
        } else {
            let m = refused(&text, parse(&text))?;
            prop_assert!(m.contains(&format!("more than {MAX_ENTRIES} entries")), "{m}");
        }
    }
}

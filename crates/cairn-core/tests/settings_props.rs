//! Agents' settings files are hostile (issue 14): properties of the text edits behind
//! `hooks install` and `mcp install|uninstall` (`hooks/json_text.rs`, `hooks/settings.rs`,
//! `hooks/mcp_config.rs`, reached through `mcp_config::internals`), over arbitrary text and over
//! generated settings in many layouts (two-space, four-space, tab, one line, CRLF, escaped keys,
//! repeated keys, numbers no `f64` holds, lone surrogates, wrong types):
//! - `json_text::parse` never panics and takes exactly the JSON serde_json's grammar takes (its
//!   `RawValue`), but for two deliberate refusals: more than 128 levels of nesting, and a key
//!   whose escapes decode to no string (a lone surrogate); every node's span is a JSON value
//!   serde_json reads as the value at that place, and a decoded string is serde_json's;
//! - appending to a container and removing what was appended gives the bytes back (an empty
//!   container's inner whitespace excepted);
//! - `with_hook` (the hooks install) refuses exactly the settings of the wrong shape, naming the
//!   file; otherwise its result is JSON that runs the hook where wanted and nowhere else, equals
//!   the settings before once Cairn's hooks are taken out of both, keeps every byte of the text
//!   before (when it held no Cairn hook), is installed already when installed twice, and taking
//!   the memory hook off again gives the bytes back (an empty `SessionStart` list goes);
//! - the MCP config edits (JSON `mcpServers.cairn`, Codex's TOML `[mcp_servers.cairn]`) refuse
//!   with the file named, or give a config that parses, runs `cairn mcp`, keeps every other
//!   value (and, for an install, every byte before); a second install changes nothing and an
//!   uninstall gives the bytes back (an emptied `mcpServers` goes, a `[mcp_servers]` stays, a TOML file
//!   gains its missing final newline); a TOML line edit is never fooled by a string, an array, a
//!   comment or a quoted key that looks like Cairn's table;
//! - what a diff shows (`hide_secrets`, and its TOML twin) keeps the line count and shows no
//!   value under an `env` key or a secret-sounding one.
//!
//! `PROPTEST_CASES` raises the case count (256) for a long run.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashMap;
use std::path::Path;

use cairn_core::archive::Agent;
use cairn_core::archive::redact::is_sensitive_key;
use cairn_core::hooks::mcp_config::internals as edit;
use cairn_core::hooks::{hook_command, is_cairn_hook_command};
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;
use serde_json::Value;
use serde_json::value::RawValue;

/// The file every edit is told it works on (errors must name it).
const FILE: &str = "/home/ann/.claude/settings.json";
const TOML_FILE: &str = "/home/ann/.codex/config.toml";

// ---- JSON documents as text -----------------------------------------------------------------

/// A JSON document as written: literals and keys keep their spelling (escapes, big numbers),
/// objects may repeat a key.
#[derive(Debug, Clone)]
enum J {
    Lit(String),
    Arr(Vec<J>),
    Obj(Vec<(String, J)>),
}

/// How a document is laid out.
#[derive(Debug, Clone)]
struct Style {
    unit: &'static str,
    nl: &'static str,
    colon: &'static str,
    gap: &'static str,
    /// Per container, in order (cycled): on several lines or on one.
    multiline: Vec<bool>,
    /// An empty container holds this.
    empty: &'static str,
    lead: &'static str,
    trail: &'static str,
}

fn style() -> impl Strategy<Value = Style> {
    (
        prop::sample::select(vec!["  ", "    ", "\t", " "]),
        prop::sample::select(vec!["\n", "\n", "\r\n"]),
        prop::sample::select(vec![": ", ":", " : "]),
        prop::sample::select(vec![" ", "", "\n"]),
        prop::collection::vec(any::<bool>(), 1..5),
        prop::sample::select(vec!["", "", " ", "\n"]),
        prop::sample::select(vec!["", "", " \n", "\t"]),
        prop::sample::select(vec!["", "\n", "\n\n", "\r\n", " "]),
    )
        .prop_map(
            |(unit, nl, colon, gap, multiline, empty, lead, trail)| Style {
                unit,
                nl,
                colon,
                gap,
                multiline,
                empty,
                lead,
                trail,
            },
        )
}

fn render(j: &J, s: &Style) -> String {
    fn go(j: &J, s: &Style, depth: usize, n: &mut usize, out: &mut String) {
        let (open, close, items): (char, char, Vec<(Option<&str>, &J)>) = match j {
            J::Lit(l) => {
                out.push_str(l);
                return;
            }
            J::Arr(items) => ('[', ']', items.iter().map(|v| (None, v)).collect()),
            J::Obj(members) => (
                '{',
                '}',
                members.iter().map(|(k, v)| (Some(k.as_str()), v)).collect(),
            ),
        };
        let multi = s.multiline[*n % s.multiline.len()];
        *n += 1;
        out.push(open);
        if items.is_empty() {
            out.push_str(s.empty);
            out.push(close);
            return;
        }
        for (i, (key, value)) in items.iter().enumerate() {
            if i > 0 {
                out.push(',');
                if !multi {
                    out.push_str(s.gap);
                }
            }
            if multi {
                out.push_str(s.nl);
                out.push_str(&s.unit.repeat(depth + 1));
            }
            if let Some(key) = key {
                out.push_str(key);
                out.push_str(s.colon);
            }
            go(value, s, depth + 1, n, out);
        }
        if multi {
            out.push_str(s.nl);
            out.push_str(&s.unit.repeat(depth));
        }
        out.push(close);
    }
    let mut out = s.lead.to_owned();
    go(j, s, 0, &mut 0, &mut out);
    out.push_str(s.trail);
    out
}

/// `s` as a JSON string literal, plain or with every character escaped.
fn lit(s: &str, escaped: bool) -> String {
    if !escaped {
        return Value::String(s.to_owned()).to_string();
    }
    let mut out = String::from("\"");
    for unit in s.encode_utf16() {
        out.push_str(&format!("\\u{unit:04x}"));
    }
    out.push('"');
    out
}

fn string_lit() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        6 => "[a-zA-Z0-9 /._-]{1,8}",
        1 => Just("é漢🎉".to_owned()),
        1 => Just(r"\u00e9".to_owned()),
        1 => Just(r"\/".to_owned()),
        1 => Just(r#"\""#.to_owned()),
        1 => Just(r"\\".to_owned()),
        1 => Just(r"\n\t\r\b\f".to_owned()),
        1 => Just(r"\u0000".to_owned()),
        1 => Just(r"\ud83c\udf89".to_owned()),
        1 => Just("\u{7f}\u{2028}\u{feff}".to_owned()),
        // JSON's grammar (and JavaScript) takes a lone surrogate; serde_json's `Value` does not.
        1 => Just(r"\ud800".to_owned()),
    ];
    prop::collection::vec(piece, 0..4).prop_map(|v| format!("\"{}\"", v.concat()))
}

fn number() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => any::<i64>().prop_map(|n| n.to_string()),
        1 => Just("18446744073709551617".to_owned()),
        1 => Just("-0".to_owned()),
        1 => Just("1.50".to_owned()),
        1 => Just("1E+2".to_owned()),
        1 => Just("-1.5e-300".to_owned()),
        // Past f64: JSON and JavaScript take it, serde_json's `Value` does not.
        1 => Just("1e400".to_owned()),
    ]
}

const KEYS: &[&str] = &[
    "hooks",
    "Stop",
    "SessionEnd",
    "SessionStart",
    "PreToolUse",
    "matcher",
    "command",
    "type",
    "env",
    "apiKey",
    "mcpServers",
    "cairn",
    "args",
    "model",
    "n",
];

fn key() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => (prop::sample::select(KEYS), prop::bool::weighted(0.1))
            .prop_map(|(k, escaped)| lit(k, escaped)),
        1 => "[a-z]{1,5}".prop_map(|k| lit(&k, false)),
    ]
}

fn leaf() -> impl Strategy<Value = J> {
    prop_oneof![
        1 => Just(J::Lit("null".to_owned())),
        1 => Just(J::Lit("true".to_owned())),
        1 => Just(J::Lit("false".to_owned())),
        2 => number().prop_map(J::Lit),
        3 => string_lit().prop_map(J::Lit),
    ]
}

fn any_json() -> impl Strategy<Value = J> {
    leaf().prop_recursive(4, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(J::Arr),
            prop::collection::vec((key(), inner), 0..4).prop_map(J::Obj),
        ]
    })
}

// ---- Settings with hooks ----------------------------------------------------------------------

/// Commands found in hooks: Cairn's (this path, a moved one, the other agent's, quoted), and
/// look-alikes that are the user's own.
const COMMANDS: &[&str] = &[
    "/usr/bin/cairn hook --agent claude",
    "/old/bin/cairn hook --agent claude",
    "cairn hook --agent codex",
    "/old/bin/cairn hook --agent codex",
    r"'/home/a b/it'\''s/cairn' hook --agent claude",
    "notify-send 'cairn hook done'",
    "/usr/bin/cairn-hook-helper",
    "echo hi",
    "",
];

/// Where the `cairn` being installed lives.
const CLIS: &[&str] = &[
    "/usr/bin/cairn",
    "/old/bin/cairn",
    "/home/a b/it's/cairn",
    "/opt/é 漢/cairn",
];

const EVENTS: &[&str] = &["Stop", "SessionEnd", "SessionStart", "PreToolUse"];

fn handler() -> impl Strategy<Value = J> {
    prop_oneof![
        8 => (
            prop::sample::select(COMMANDS),
            prop::bool::weighted(0.15),
            prop::option::weighted(0.2, number()),
        )
            .prop_map(|(command, escaped, timeout)| {
                let mut m = vec![
                    (lit("type", false), J::Lit(lit("command", false))),
                    (lit("command", escaped), J::Lit(lit(command, escaped))),
                ];
                if let Some(t) = timeout {
                    m.push((lit("timeout", false), J::Lit(t)));
                }
                J::Obj(m)
            }),
        1 => any_json(),
    ]
}

fn group() -> impl Strategy<Value = J> {
    prop_oneof![
        8 => (
            prop::option::weighted(0.4, string_lit()),
            prop::collection::vec(handler(), 0..3),
        )
            .prop_map(|(matcher, handlers)| {
                let mut m = Vec::new();
                if let Some(matcher) = matcher {
                    m.push((lit("matcher", false), J::Lit(matcher)));
                }
                m.push((lit("hooks", false), J::Arr(handlers)));
                J::Obj(m)
            }),
        1 => any_json(),
    ]
}

fn hooks_value() -> impl Strategy<Value = J> {
    let event = (prop::sample::select(EVENTS), prop::bool::weighted(0.1))
        .prop_map(|(e, escaped)| lit(e, escaped));
    let groups = prop_oneof![
        10 => prop::collection::vec(group(), 0..3).prop_map(J::Arr),
        1 => any_json(),
    ];
    // As an install left it: some events, each with Cairn's group (this path or another).
    let installed = (
        prop::sample::subsequence(EVENTS.to_vec(), 0..4),
        prop::sample::select(&COMMANDS[..5]),
    )
        .prop_map(|(events, command)| {
            let group = J::Obj(vec![(
                lit("hooks", false),
                J::Arr(vec![J::Obj(vec![
                    (lit("type", false), J::Lit(lit("command", false))),
                    (lit("command", false), J::Lit(lit(command, false))),
                ])]),
            )]);
            J::Obj(
                events
                    .into_iter()
                    .map(|e| (lit(e, false), J::Arr(vec![group.clone()])))
                    .collect(),
            )
        });
    prop_oneof![
        8 => prop::collection::vec((event, groups), 0..4).prop_map(J::Obj),
        4 => installed,
        1 => any_json(),
    ]
}

/// A value that must never be shown: unique, so finding it in a text means it was shown.
fn secret() -> impl Strategy<Value = String> {
    "[A-Za-z0-9]{14}".prop_map(|s| format!("Zq{s}"))
}

/// Under `env` or a secret-sounding key: a secret, a number, or a structure of them.
fn secret_value() -> impl Strategy<Value = J> {
    let leaf = prop_oneof![
        4 => (secret(), prop::bool::weighted(0.1)).prop_map(|(s, e)| J::Lit(lit(&s, e))),
        1 => Just(J::Lit("5432".to_owned())),
        1 => Just(J::Lit("true".to_owned())),
    ];
    leaf.prop_recursive(2, 8, 3, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..3).prop_map(J::Arr),
            prop::collection::vec(("[A-Z_]{1,8}".prop_map(|k| lit(&k, false)), inner), 0..3)
                .prop_map(J::Obj),
        ]
    })
}

fn env_value() -> impl Strategy<Value = J> {
    prop::collection::vec(
        (
            prop::sample::select(vec!["DB_PASS", "PGPORT", "ANTHROPIC_API_KEY", "X", "HOME"]),
            secret_value(),
        ),
        0..4,
    )
    .prop_map(|m| J::Obj(m.into_iter().map(|(k, v)| (lit(k, false), v)).collect()))
}

/// Settings as agents and people write them, and now and then of the wrong shape.
fn settings() -> impl Strategy<Value = J> {
    let member = prop_oneof![
        4 => (key(), any_json()),
        3 => hooks_value().prop_map(|h| (lit("hooks", false), h)),
        2 => env_value().prop_map(|e| (lit("env", false), e)),
        1 => (
            prop::sample::select(vec!["apiKey", "Authorization", "client_secret", "awsSecretAccessKey"]),
            secret_value(),
        )
            .prop_map(|(k, v)| (lit(k, false), v)),
        1 => (any::<bool>(), env_value()).prop_map(|(upper, e)| {
            (lit("mcp", false), J::Obj(vec![(lit("db", false), J::Obj(vec![(lit(if upper { "ENV" } else { "env" }, false), e)]))]))
        }),
    ];
    prop_oneof![
        14 => prop::collection::vec(member, 0..5).prop_map(J::Obj),
        1 => any_json(),
    ]
}

fn settings_text() -> impl Strategy<Value = String> {
    prop_oneof![
        20 => (settings(), style()).prop_map(|(j, s)| render(&j, &s)),
        1 => prop::sample::select(vec!["", "  \n", "\n\n"]).prop_map(str::to_owned),
    ]
}

/// Bytes that matter to the parser, spliced into a valid document to break it.
const SPLICE: &[&str] = &[
    "{", "}", "[", "]", "\"", "\\", ",", ":", " ", "\n", "\\u", "\\ud800", "\\q", "\u{0}",
    "\u{1f}", "\u{feff}", "//", "/*", "1e", "-", "01", "tru", "NaN", ",}", ",]", "\"\\",
];

/// A document with a few bytes spliced in, cut out, or its end cut off.
fn mutated() -> impl Strategy<Value = String> {
    let op = (
        0..3u8,
        any::<prop::sample::Index>(),
        prop::sample::select(SPLICE),
        1..8usize,
    );
    (settings_text(), prop::collection::vec(op, 1..4)).prop_map(|(mut text, ops)| {
        for (kind, at, splice, len) in ops {
            let mut at = at.index(text.len() + 1);
            while !text.is_char_boundary(at) {
                at -= 1;
            }
            match kind {
                0 => text.insert_str(at, splice),
                1 => {
                    let mut end = (at + len).min(text.len());
                    while !text.is_char_boundary(end) {
                        end += 1;
                    }
                    text.replace_range(at..end, "");
                }
                _ => text.truncate(at),
            }
        }
        text
    })
}

/// Whatever a file may hold: random text, broken documents, documents.
fn hostile_text() -> impl Strategy<Value = String> {
    prop_oneof![
        2 => any::<String>(),
        2 => "[\\[\\]{}\":,\\\\ 0-9a-z\n-]{0,40}",
        4 => mutated(),
        3 => settings_text(),
        1 => (1..200usize, prop::bool::ANY).prop_map(|(n, obj)| {
            if obj {
                format!("{}1{}", "{\"a\":".repeat(n), "}".repeat(n))
            } else {
                format!("{}{}", "[".repeat(n), "]".repeat(n))
            }
        }),
    ]
}

// ---- json_text against serde_json ----------------------------------------------------------

fn raw_ok(text: &str) -> bool {
    serde_json::from_str::<&RawValue>(text).is_ok()
}

/// A node, its span and its children hold to serde_json's reading of the same text; `value` is
/// serde_json's value at this place (`None` when serde_json's `Value` cannot hold the document,
/// or for a member a later one of the same key hides).
fn check_node(text: &str, node: &edit::Node, value: Option<&Value>) -> Result<(), TestCaseError> {
    prop_assert!(node.start <= node.end && node.end <= text.len());
    prop_assert!(text.is_char_boundary(node.start) && text.is_char_boundary(node.end));
    let span = &text[node.start..node.end];
    let raw = serde_json::from_str::<&RawValue>(span);
    prop_assert!(
        raw.is_ok_and(|r| r.get() == span),
        "span {:?} is not one JSON value",
        span
    );
    if let Some(value) = value {
        let read: Value = serde_json::from_str(span).unwrap();
        prop_assert_eq!(&read, value, "span {:?}", span);
    }
    match &node.kind {
        edit::Kind::Object(members) => {
            prop_assert!(span.starts_with('{'), "object {:?}", span);
            let mut at = node.start;
            for (i, (key, key_start, child)) in members.iter().enumerate() {
                prop_assert!(*key_start > at && child.start > *key_start && child.end < node.end);
                at = child.end;
                let key_text = serde_json::Deserializer::from_str(&text[*key_start..])
                    .into_iter::<&RawValue>()
                    .next()
                    .unwrap()
                    .unwrap();
                let decoded: String = serde_json::from_str(key_text.get()).unwrap();
                prop_assert_eq!(&decoded, key);
                let hidden = members[i + 1..].iter().any(|(k, _, _)| k == key);
                let child_value = match value {
                    Some(v) if !hidden => {
                        let v = v.get(key);
                        prop_assert!(v.is_some(), "{:?} not in serde_json's object", key);
                        v
                    }
                    _ => None,
                };
                if !hidden {
                    prop_assert!(std::ptr::eq(node.get(key).unwrap(), child));
                }
                check_node(text, child, child_value)?;
            }
            if let Some(v) = value {
                let keys: std::collections::BTreeSet<&str> =
                    members.iter().map(|(k, _, _)| k.as_str()).collect();
                prop_assert_eq!(keys.len(), v.as_object().unwrap().len());
            }
        }
        edit::Kind::Array(items) => {
            prop_assert!(span.starts_with('['));
            if let Some(v) = value {
                prop_assert_eq!(items.len(), v.as_array().unwrap().len());
            }
            let mut at = node.start;
            for (i, item) in items.iter().enumerate() {
                prop_assert!(item.start > at && item.end < node.end);
                at = item.end;
                check_node(text, item, value.map(|v| &v[i]))?;
            }
        }
        edit::Kind::String => {
            prop_assert!(span.starts_with('"'));
            prop_assert_eq!(node.as_str(text), serde_json::from_str::<String>(span).ok());
        }
        edit::Kind::Scalar => {
            prop_assert!(!span.starts_with(['"', '[', '{']), "scalar {:?}", span);
        }
    }
    Ok(())
}

/// `json_text::parse` on `text`: never a panic, JSON exactly, spans serde_json agrees with.
fn check_parse(text: &str) -> Result<(), TestCaseError> {
    let raw = raw_ok(text);
    match edit::parse(text) {
        Ok(root) => {
            prop_assert!(raw, "json_text took text that is not JSON: {:?}", text);
            let value = serde_json::from_str::<Value>(text).ok();
            check_node(text, &root, value.as_ref())?;
        }
        Err(e) if raw => {
            // The deliberate refusals: too deep, or a key no string can hold.
            let bad_key = e
                .strip_prefix("bad key at byte ")
                .and_then(|rest| rest.split(':').next()?.parse::<usize>().ok())
                .is_some_and(|at| {
                    let key = serde_json::Deserializer::from_str(&text[at..])
                        .into_iter::<&RawValue>()
                        .next();
                    matches!(key, Some(Ok(k)) if serde_json::from_str::<String>(k.get()).is_err())
                });
            prop_assert!(
                e.starts_with("nested more than") || bad_key,
                "json_text refused JSON ({}): {:?}",
                e,
                text
            );
        }
        Err(_) => {}
    }
    Ok(())
}

// ---- hooks install -----------------------------------------------------------------------------

/// The members of a JSON object, the last of a repeated key winning (as agents read them).
fn object(raw: &str) -> Option<HashMap<String, &RawValue>> {
    serde_json::from_str(raw).ok()
}

fn kind(raw: &RawValue) -> u8 {
    raw.get().as_bytes()[0]
}

/// `v` without any Cairn hook for `agent` on `events`, nor the groups, events and `hooks` that
/// held only Cairn's.
fn without_cairn_hooks(v: &Value, agent: Agent, events: &[&str]) -> Value {
    let mut v = v.clone();
    let Some(hooks) = v.get_mut("hooks").and_then(Value::as_object_mut) else {
        return v;
    };
    for event in events {
        let Some(groups) = hooks.get_mut(*event).and_then(Value::as_array_mut) else {
            continue;
        };
        groups.retain_mut(|group| {
            let Some(handlers) = group.get_mut("hooks").and_then(Value::as_array_mut) else {
                return true;
            };
            let before = handlers.len();
            handlers.retain(|h| {
                !h.get("command")
                    .and_then(Value::as_str)
                    .is_some_and(|c| is_cairn_hook_command(c, agent))
            });
            !(handlers.is_empty() && before > 0 && group.as_object().unwrap().len() == 1)
        });
        if groups.is_empty() {
            hooks.remove(*event);
        }
    }
    if hooks.is_empty() {
        v.as_object_mut().unwrap().remove("hooks");
    }
    v
}

/// How many handlers in the settings' hooks (on any event, hidden ones too) run Cairn's hook.
fn cairn_hooks(text: &str, agent: Agent) -> usize {
    let Ok(root) = edit::parse(text) else {
        return 0;
    };
    let Some(edit::Kind::Object(events)) = root.get("hooks").map(|h| &h.kind) else {
        return 0;
    };
    events
        .iter()
        .flat_map(|(_, _, groups)| groups.elements().unwrap_or_default())
        .filter_map(|g| g.get("hooks")?.elements())
        .flatten()
        .filter_map(|h| h.get("command")?.as_str(text))
        .filter(|c| is_cairn_hook_command(c, agent))
        .count()
}

/// Whether the text holds an empty container with whitespace inside (`{ }`, `[\n]`): an insert
/// into it replaces that whitespace.
fn blank_empty(text: &str) -> bool {
    let b = text.as_bytes();
    b.iter().enumerate().any(|(i, c)| {
        matches!(c, b'{' | b'[') && {
            let rest = &b[i + 1..];
            let n = rest.iter().take_while(|c| c.is_ascii_whitespace()).count();
            n > 0 && matches!(rest.get(n), Some(b'}' | b']'))
        }
    })
}

/// Whether `small` is `big` with bytes left out (so `big` only added to it).
fn is_subsequence(small: &str, big: &str) -> bool {
    let mut big = big.bytes();
    small.bytes().all(|c| big.any(|b| b == c))
}

fn check_with_hook(text: &str, agent: Agent, cli: &str, memory: bool) -> Result<(), TestCaseError> {
    let path = Path::new(FILE);
    // An archive elsewhere (its folder in the command) half the time.
    let elsewhere = cli.len() % 2 == 1;
    let command = hook_command(
        Path::new(cli),
        agent,
        elsewhere.then_some(Path::new("/srv/cairn data")),
    );
    let mut wanted: Vec<&str> = match agent {
        Agent::Claude => vec!["Stop", "SessionEnd"],
        _ => vec!["Stop"],
    };
    let mut drop = Vec::new();
    if memory {
        wanted.push("SessionStart");
    } else {
        drop.push("SessionStart");
    }
    let result = edit::with_hook(path, text, agent, &command, &wanted, &drop);

    // What it must refuse: text that is not JSON, or not an object, a `hooks` that is not an
    // object, a wanted event's value that is not an array.
    // JSON as serde_json's grammar reads it, and as json_text does (deeper than 128 levels and
    // undecodable keys refused on purpose).
    let parsed = raw_ok(text) && edit::parse(text).is_ok();
    let root = object(text);
    let hooks = root.as_ref().and_then(|r| r.get("hooks").copied());
    let refuse = if text.trim().is_empty() {
        None
    } else if !parsed {
        Some("not valid JSON")
    } else if root.is_none() {
        Some("must hold a JSON object")
    } else if hooks.is_some_and(|h| kind(h) != b'{') {
        Some("must be an object")
    } else if hooks.and_then(|h| object(h.get())).is_some_and(|h| {
        wanted
            .iter()
            .any(|e| h.get(*e).is_some_and(|g| kind(g) != b'['))
    }) {
        Some("must be an array")
    } else {
        None
    };
    let after = match (result, refuse) {
        (Err(e), Some(says)) => {
            let e = e.to_string();
            prop_assert!(e.contains(says) && e.contains(FILE), "{}", e);
            return Ok(());
        }
        (Err(e), None) => {
            return Err(TestCaseError::fail(format!("refused {text:?}: {e}")));
        }
        (Ok(_), Some(says)) => {
            return Err(TestCaseError::fail(format!("took {text:?}, which {says}")));
        }
        (Ok(after), None) => after,
    };
    let Some(after) = after else {
        // Nothing to do: the hook runs where wanted, and nowhere else.
        prop_assert!(edit::runs(path, text, &wanted, |c| c == command));
        prop_assert!(
            !edit::runs(path, text, &drop, |c| is_cairn_hook_command(c, agent)) || drop.is_empty()
        );
        return Ok(());
    };
    prop_assert!(raw_ok(&after), "not JSON after the install: {:?}", after);
    // What `hooks::install` checks before it writes.
    prop_assert!(
        edit::runs(path, &after, &wanted, |c| c == command),
        "the hook does not run: {:?}",
        after
    );
    if !drop.is_empty() {
        let any_cairn = |c: &str| is_cairn_hook_command(c, agent);
        let still = edit::parse(&after).ok().is_some_and(|root| {
            root.get("hooks")
                .and_then(|h| h.get("SessionStart"))
                .and_then(|g| g.elements())
                .into_iter()
                .flatten()
                .filter_map(|g| g.get("hooks")?.elements())
                .flatten()
                .filter_map(|h| h.get("command")?.as_str(&after))
                .any(|c| any_cairn(&c))
        });
        prop_assert!(!still, "Cairn's memory hook left on: {:?}", after);
    }
    // Everything else as it was.
    let mut touched = wanted.clone();
    touched.extend(&drop);
    if let (Ok(b), Ok(a)) = (
        serde_json::from_str::<Value>(if text.trim().is_empty() { "{}" } else { text }),
        serde_json::from_str::<Value>(&after),
    ) {
        prop_assert_eq!(
            without_cairn_hooks(&b, agent, &touched),
            without_cairn_hooks(&a, agent, &touched),
            "{:?} -> {:?}",
            text,
            after
        );
    }
    if cairn_hooks(text, agent) == 0 && !blank_empty(text) && !text.trim().is_empty() {
        prop_assert!(
            is_subsequence(text, &after),
            "bytes lost: {:?} -> {:?}",
            text,
            after
        );
    }
    // Installed twice: nothing to do.
    prop_assert_eq!(
        edit::with_hook(path, &after, agent, &command, &wanted, &drop).unwrap(),
        None,
        "a second install changed {:?}",
        after
    );
    // Memory on, then off again: the bytes of the settings with it off.
    let events_on: Vec<&str> = wanted
        .iter()
        .copied()
        .filter(|e| *e != "SessionStart")
        .chain(["SessionStart"])
        .collect();
    let events_off: Vec<&str> = events_on
        .iter()
        .copied()
        .filter(|e| *e != "SessionStart")
        .collect();
    let off = if memory {
        edit::with_hook(
            path,
            &after,
            agent,
            &command,
            &events_off,
            &["SessionStart"],
        )
        .unwrap()
        .unwrap_or(after.clone())
    } else {
        after.clone()
    };
    let Ok(on) = edit::with_hook(path, &off, agent, &command, &events_on, &[]) else {
        // `SessionStart` is not a list: memory cannot go on.
        return Ok(());
    };
    let on = on.unwrap_or(off.clone());
    let back = edit::with_hook(path, &on, agent, &command, &events_off, &["SessionStart"])
        .unwrap()
        .unwrap_or(on.clone());
    // Exactly, unless `SessionStart` held an empty list: Cairn's group was then its only one,
    // and the event goes with it (as when the install added the event).
    let empty_event = edit::parse(&off).ok().is_some_and(|root| {
        root.get("hooks")
            .and_then(|h| h.get("SessionStart"))
            .and_then(|g| g.elements())
            .is_some_and(<[edit::Node]>::is_empty)
    });
    if !empty_event {
        prop_assert_eq!(&back, &off, "memory off after on: {:?} -> {:?}", off, on);
    }
    Ok(())
}

// ---- what a diff shows -------------------------------------------------------------------------

/// The secrets planted under `env` and secret-sounding keys, decoded.
fn planted(j: &J, hidden: bool, out: &mut Vec<String>) {
    match j {
        J::Lit(l) => {
            if let Ok(s) = serde_json::from_str::<String>(l)
                && hidden
                && s.starts_with("Zq")
            {
                out.push(s);
            }
        }
        J::Arr(items) => items.iter().for_each(|i| planted(i, hidden, out)),
        J::Obj(members) => {
            for (k, v) in members {
                let k: String = serde_json::from_str(k).unwrap_or_default();
                let hide = hidden || k.eq_ignore_ascii_case("env") || is_sensitive_key(&k);
                planted(v, hide, out);
            }
        }
    }
}

/// Every value under an `env` key or a secret-sounding one is a marker.
fn all_hidden(v: &Value, hidden: bool) -> bool {
    match v {
        Value::Object(m) => m.iter().all(|(k, v)| {
            all_hidden(
                v,
                hidden || k.eq_ignore_ascii_case("env") || is_sensitive_key(k),
            )
        }),
        Value::Array(items) => items.iter().all(|v| all_hidden(v, hidden)),
        Value::String(s) if hidden => s.starts_with("[REDACTED:"),
        _ => !hidden,
    }
}

// ---- MCP configs -------------------------------------------------------------------------------

/// The agents whose MCP config is JSON: every one Cairn registers with but Codex (TOML).
fn mcp_json_agents() -> Vec<Agent> {
    cairn_core::hooks::mcp_config::MCP_AGENTS
        .into_iter()
        .filter(|a| *a != Agent::Codex)
        .collect()
}

/// An `mcpServers.cairn` entry: Cairn's (here, moved), someone else's, of the wrong shape.
fn server_entry() -> impl Strategy<Value = J> {
    prop_oneof![
        4 => (prop::sample::select(CLIS), any::<bool>(), prop::bool::weighted(0.1)).prop_map(
            |(cli, typed, escaped)| {
                let mut m = Vec::new();
                if typed {
                    m.push((lit("type", false), J::Lit(lit("stdio", false))));
                }
                m.push((lit("command", escaped), J::Lit(lit(cli, escaped))));
                m.push((lit("args", false), J::Arr(vec![J::Lit(lit("mcp", false))])));
                J::Obj(m)
            }
        ),
        1 => Just(J::Obj(vec![
            (lit("command", false), J::Lit(lit("npx", false))),
            (lit("args", false), J::Arr(vec![J::Lit(lit("mcp", false))])),
        ])),
        1 => any_json(),
    ]
}

fn mcp_servers() -> impl Strategy<Value = J> {
    let other = (
        prop::sample::select(vec!["db", "gh", "cairn2"]),
        env_value(),
    )
        .prop_map(|(name, env)| {
            (
                lit(name, false),
                J::Obj(vec![
                    (lit("command", false), J::Lit(lit("pg-mcp", false))),
                    (lit("env", false), env),
                ]),
            )
        });
    let member = prop_oneof![
        3 => other,
        2 => server_entry().prop_map(|e| (lit("cairn", false), e)),
    ];
    prop_oneof![
        10 => prop::collection::vec(member, 0..3).prop_map(J::Obj),
        1 => any_json(),
    ]
}

fn mcp_doc() -> impl Strategy<Value = J> {
    let member = prop_oneof![
        3 => (key(), any_json()),
        4 => mcp_servers().prop_map(|s| (lit("mcpServers", false), s)),
    ];
    prop_oneof![
        14 => prop::collection::vec(member, 0..4).prop_map(J::Obj),
        1 => any_json(),
    ]
}

fn mcp_text() -> impl Strategy<Value = String> {
    prop_oneof![
        20 => (mcp_doc(), style()).prop_map(|(j, s)| render(&j, &s)),
        1 => prop::sample::select(vec!["", " \n"]).prop_map(str::to_owned),
    ]
}

/// The `cairn` entry serde_json sees: `None` when absent, its command when Cairn's.
fn json_server(v: &Value) -> Result<Option<String>, ()> {
    let Some(servers) = v.get("mcpServers") else {
        return Ok(None);
    };
    let Some(entry) = servers.as_object().ok_or(())?.get("cairn") else {
        return Ok(None);
    };
    let command = entry.get("command").and_then(Value::as_str).ok_or(())?;
    let ours = Path::new(command).file_name().is_some_and(|n| n == "cairn")
        && entry.get("args") == Some(&serde_json::json!(["mcp"]));
    if ours {
        Ok(Some(command.to_owned()))
    } else {
        Err(())
    }
}

/// `v` without Cairn's server, nor an `mcpServers` left empty.
fn without_server(v: &Value) -> Value {
    let mut v = v.clone();
    if let Some(root) = v.as_object_mut() {
        let empty = root
            .get_mut("mcpServers")
            .and_then(Value::as_object_mut)
            .is_some_and(|s| {
                s.remove("cairn");
                s.is_empty()
            });
        if empty {
            root.remove("mcpServers");
        }
    }
    v
}

fn check_mcp_json(text: &str, agent: Agent, cli: &str) -> Result<(), TestCaseError> {
    let path = Path::new(FILE);
    let install = edit::json_edit(agent, path, text, Some(cli));
    let uninstall = edit::json_edit(agent, path, text, None);
    let before: Option<Value> = if text.trim().is_empty() {
        Some(serde_json::json!({}))
    } else if raw_ok(text) && edit::parse(text).is_ok() {
        serde_json::from_str(text).ok()
    } else {
        None
    };
    // What must be refused, as serde_json reads the file.
    let root = object(text);
    let servers = root.as_ref().and_then(|r| r.get("mcpServers").copied());
    let refuse = if text.trim().is_empty() {
        None
    } else if !raw_ok(text) || edit::parse(text).is_err() {
        Some("not valid JSON")
    } else if root.is_none() {
        Some("must hold a JSON object")
    } else if servers.is_some_and(|s| kind(s) != b'{') {
        Some("must be an object")
    } else if let Some(v) = &before {
        json_server(v).err().map(|()| "not Cairn's server")
    } else {
        // serde_json's `Value` cannot read it (1e400, a lone surrogate): no verdict here.
        if let (Err(e), _) | (_, Err(e)) = (&install, &uninstall) {
            prop_assert!(e.to_string().contains(FILE), "{}", e);
        }
        return Ok(());
    };
    // `cairn` twice in `mcpServers`: taking the last off would show the other, so an uninstall
    // may refuse.
    let twice = edit::parse(text).ok().is_some_and(|root| {
        matches!(root.get("mcpServers").map(|s| &s.kind), Some(edit::Kind::Object(m))
            if m.iter().filter(|(k, _, _)| k == "cairn").count() > 1)
    });
    for (verb, result) in [("install", &install), ("uninstall", &uninstall)] {
        match (result, refuse) {
            (Err(e), None) if twice && verb == "uninstall" => {
                prop_assert!(e.to_string().contains("by hand"), "{}", e);
                return Ok(());
            }
            (Err(e), Some(says)) => {
                let e = e.to_string();
                prop_assert!(e.contains(says) && e.contains(FILE), "{}: {}", verb, e);
            }
            (Err(e), None) => {
                return Err(TestCaseError::fail(format!("{verb} refused {text:?}: {e}")));
            }
            (Ok(_), Some(says)) => {
                return Err(TestCaseError::fail(format!(
                    "{verb} took {text:?}, which {says}"
                )));
            }
            (Ok(_), None) => {}
        }
    }
    if refuse.is_some() {
        return Ok(());
    }
    let before = before.unwrap();
    let present = json_server(&before).unwrap();
    // Install: Cairn's server, everything else as it was.
    let after = install.unwrap();
    prop_assert_eq!(after.is_none(), present.as_deref() == Some(cli));
    let after = after.unwrap_or(text.to_owned());
    prop_assert!(raw_ok(&after), "not JSON: {:?}", after);
    let a: Value = serde_json::from_str(&after).unwrap();
    prop_assert_eq!(json_server(&a), Ok(Some(cli.to_owned())), "{:?}", after);
    prop_assert_eq!(without_server(&a), without_server(&before), "{:?}", after);
    if present.is_none() && !text.trim().is_empty() && !blank_empty(text) {
        prop_assert!(
            is_subsequence(text, &after),
            "bytes lost: {:?} -> {:?}",
            text,
            after
        );
    }
    prop_assert_eq!(
        edit::json_edit(agent, path, &after, Some(cli)).unwrap(),
        None
    );
    // Uninstall: the rest as it was; after an install that added the server, the bytes before.
    let gone = edit::json_edit(agent, path, &after, None).unwrap().unwrap();
    prop_assert!(raw_ok(&gone), "not JSON: {:?}", gone);
    let g: Value = serde_json::from_str(&gone).unwrap();
    prop_assert_eq!(json_server(&g), Ok(None));
    prop_assert_eq!(without_server(&g), without_server(&before), "{:?}", gone);
    let emptied = before
        .get("mcpServers")
        .and_then(Value::as_object)
        .is_some_and(|s| s.is_empty());
    if present.is_none() && !text.trim().is_empty() && !emptied && !blank_empty(text) {
        prop_assert_eq!(&gone, text, "uninstall after install");
    }
    match uninstall.unwrap() {
        None => prop_assert!(present.is_none()),
        Some(u) => {
            let u: Value = serde_json::from_str(&u).unwrap();
            prop_assert_eq!(json_server(&u), Ok(None));
            prop_assert_eq!(without_server(&u), without_server(&before));
        }
    }
    Ok(())
}

// ---- Codex's TOML ------------------------------------------------------------------------------

/// Pieces of a Codex config; `@` stands for a secret, `%` for a Cairn path. Some look like
/// `[mcp_servers.cairn]` without being it (in a string, an array, a comment, a quoted key).
const TOML_PIECES: &[&str] = &[
    "model = \"gpt-5.1-codex\"\n",
    "# my servers\n",
    "# a \"\"\" in a comment\n",
    "# [mcp_servers.cairn]\n",
    "\n",
    "[features]\ncodex_hooks = true\n",
    "[mcp_servers]\n",
    "[mcp_servers.db]\ncommand = \"pg-mcp\"\nargs = [\"--x\"]\n",
    "[mcp_servers.db.env]\nPGPASSWORD = \"@\"\nPGPORT = \"@\"\n",
    "[mcp_servers.gh]\ncommand = \"gh-mcp\"\nenv = { GH_TOKEN = \"@\", X = \"@\" }\n",
    "[mcp_servers.gh2]\ncommand = \"gh-mcp\"\nenv = {\n  X = \"@\",\n}\n",
    "[mcp_servers.gh3]\nurl = \"https://x\"\nhttp_headers = { Authorization = \"Bearer @\" }\n",
    "[mcp_servers.dbx.env]\nPASSWORD = \"\"\"\n@\n\"\"\"\nY = '''\n@\n'''\n",
    "[mcp_servers.dby]\ncommand = \"x\"\nenv.X = \"@\"\n",
    "[mcp_servers.cairn]\ncommand = \"%\"\nargs = [\"mcp\"]\n",
    "[mcp_servers.cairn]\ncommand = \"%\" # moved\nargs = [\"mcp\"]\nstartup_timeout_sec = 20\n",
    "[mcp_servers.cairn]\nargs = [\"mcp\"]\ncommand = '%'\n\n[mcp_servers.cairn.env]\nX = \"@\"\n",
    "[ mcp_servers . \"cairn\" ]\ncommand = \"%\"\nargs = [ \"mcp\" ]\n",
    "[mcp_servers.cairn]\ncommand = \"npx\"\nargs = [\"mcp\"]\n",
    "[mcp_servers.cairn.env]\nCAIRN_DATA_DIR = \"/data\"\n",
    "[\"mcp_servers.cairn\"]\ncommand = \"%\"\nargs = [\"mcp\"]\n",
    "notes = \"\"\"\n[mcp_servers.cairn]\ncommand = \"%\"\n\"\"\"\n",
    "notes2 = '''\n[mcp_servers.cairn]\n'''\n",
    "list = [\n  [\"mcp_servers.cairn\"]\n]\n",
    "t = {\n  command = \"x\",\n}\n",
    "api_key = [\n  \"@\",\n]\n",
    "client_secret = \"\"\"\n@\n\"\"\"\n",
    "f = nan\n",
    "[[profiles]]\nname = \"a\"\n",
];

fn toml_text() -> impl Strategy<Value = String> {
    (
        prop::sample::subsequence((0..TOML_PIECES.len()).collect::<Vec<_>>(), 0..6),
        any::<prop::sample::Index>(),
        prop::sample::select(CLIS),
        secret(),
        prop::bool::weighted(0.2),
        prop::sample::select(vec!["", "", "\n", "\n\n", "  "]),
        prop::bool::weighted(0.15),
    )
        .prop_map(|(pieces, shuffle, cli, secret, crlf, tail, cut)| {
            let mut pieces: Vec<&str> = pieces.iter().map(|&i| TOML_PIECES[i]).collect();
            if !pieces.is_empty() {
                let n = pieces.len();
                pieces.rotate_left(shuffle.index(n));
            }
            let mut n = 0;
            let mut text = String::new();
            for c in pieces.concat().chars() {
                match c {
                    '@' => {
                        text.push_str(&format!("{secret}{n}"));
                        n += 1;
                    }
                    '%' => text.push_str(cli),
                    c => text.push(c),
                }
            }
            text.push_str(tail);
            if cut {
                // Without its last newline.
                text = text.trim_end_matches('\n').to_owned();
            }
            if crlf {
                text = text.replace('\n', "\r\n");
            }
            text
        })
}

/// The `cairn` server the TOML holds: `None` when absent, its command when Cairn's.
fn toml_server(doc: &toml::Table) -> Result<Option<String>, ()> {
    let Some(servers) = doc.get("mcp_servers") else {
        return Ok(None);
    };
    let Some(entry) = servers.as_table().ok_or(())?.get("cairn") else {
        return Ok(None);
    };
    let command = entry
        .get("command")
        .and_then(toml::Value::as_str)
        .ok_or(())?;
    let args = entry.get("args").and_then(toml::Value::as_array);
    let ours = Path::new(command).file_name().is_some_and(|n| n == "cairn")
        && args.is_some_and(|a| a.len() == 1 && a[0].as_str() == Some("mcp"));
    if ours {
        Ok(Some(command.to_owned()))
    } else {
        Err(())
    }
}

/// The document without Cairn's server, nor an `mcp_servers` left empty, compared as text
/// (`nan` is no value equal to itself).
fn toml_rest(doc: &toml::Table) -> String {
    let mut doc = doc.clone();
    let empty = doc
        .get_mut("mcp_servers")
        .and_then(toml::Value::as_table_mut)
        .is_some_and(|s| {
            s.remove("cairn");
            s.is_empty()
        });
    if empty {
        doc.remove("mcp_servers");
    }
    toml::to_string(&doc).unwrap_or_else(|e| format!("unprintable: {e}"))
}

fn check_toml(text: &str, cli: &str) -> Result<(), TestCaseError> {
    let path = Path::new(TOML_FILE);
    let install = edit::toml_edit(path, text, Some(cli));
    let uninstall = edit::toml_edit(path, text, None);
    for result in [&install, &uninstall] {
        if let Err(e) = result {
            prop_assert!(e.to_string().contains(TOML_FILE), "{}", e);
        }
    }
    let Ok(before) = text.parse::<toml::Table>() else {
        prop_assert!(install.is_err() && uninstall.is_err());
        return Ok(());
    };
    let Ok(present) = toml_server(&before) else {
        prop_assert!(install.is_err() && uninstall.is_err());
        return Ok(());
    };
    let check = |after: &str, want: Option<&str>| -> Result<(), TestCaseError> {
        let doc: toml::Table = after
            .parse()
            .map_err(|e| TestCaseError::fail(format!("not TOML ({e}): {after:?}")))?;
        prop_assert_eq!(
            toml_server(&doc),
            Ok(want.map(str::to_owned)),
            "{:?}",
            after
        );
        prop_assert_eq!(
            toml_rest(&doc),
            toml_rest(&before),
            "{:?} -> {:?}",
            text,
            after
        );
        Ok(())
    };
    // The server is in the document as a `[mcp_servers.cairn]` table of its own, or the
    // document holds it nowhere and takes one (no `mcp_servers` written inline or dotted): then
    // a line edit can do it.
    let inline = text.contains("mcp_servers =") || text.contains("\nmcp_servers.");
    let own_table =
        text.contains("[mcp_servers.cairn]") || text.contains("[ mcp_servers . \"cairn\" ]");
    let editable = !inline && (present.is_none() || own_table);
    match install {
        Ok(Some(after)) => {
            check(&after, Some(cli))?;
            if present.is_none() {
                prop_assert!(
                    after.starts_with(text),
                    "bytes lost: {:?} -> {:?}",
                    text,
                    after
                );
            } else {
                // Only the command's line changed.
                let (b, a): (Vec<&str>, Vec<&str>) =
                    (text.lines().collect(), after.lines().collect());
                prop_assert_eq!(a.len(), b.len());
                prop_assert_eq!(a.iter().zip(&b).filter(|(x, y)| x != y).count(), 1);
            }
            prop_assert!(edit::toml_edit(path, &after, Some(cli)).unwrap().is_none());
            let gone = edit::toml_edit(path, &after, None)
                .map_err(|e| TestCaseError::fail(format!("uninstall refused {after:?}: {e}")))?
                .unwrap();
            check(&gone, None)?;
            // A `[mcp_servers]` of the person's own, empty too, stays: install writes none.
            if present.is_none() && text.ends_with('\n') {
                prop_assert_eq!(&gone, text, "uninstall after install");
            }
        }
        Ok(None) => prop_assert_eq!(present.as_deref(), Some(cli)),
        Err(e) => {
            let e = e.to_string();
            prop_assert!(!editable, "install refused {:?}: {}", text, e);
            prop_assert!(e.contains("by hand"), "{}", e);
        }
    }
    match uninstall {
        Ok(Some(after)) => {
            check(&after, None)?;
            // No piece of Cairn's table holds a comment line: every one is a person's.
            for comment in text.lines().filter(|l| l.trim_start().starts_with('#')) {
                prop_assert_eq!(
                    after.lines().filter(|l| *l == comment).count(),
                    text.lines().filter(|l| *l == comment).count(),
                    "comment {:?} lost: {:?} -> {:?}",
                    comment,
                    text,
                    after
                );
            }
        }
        Ok(None) => prop_assert!(present.is_none()),
        Err(e) => {
            let e = e.to_string();
            prop_assert!(!editable, "uninstall refused {:?}: {}", text, e);
            prop_assert!(e.contains("by hand"), "{}", e);
        }
    }
    Ok(())
}

/// The secrets planted in a TOML config (`@`-made values are `Zq…<n>`).
fn toml_secrets(text: &str) -> Vec<&str> {
    text.match_indices("Zq")
        .map(|(at, _)| {
            let end = text[at..]
                .find(|c: char| !c.is_ascii_alphanumeric())
                .map_or(text.len(), |e| at + e);
            &text[at..end]
        })
        .collect()
}

// ---- JSON with comments (Gemini CLI, Qwen Code) ---------------------------------------------

/// What a comment may say: braces, quotes, another comment's opening, a server of its own.
const COMMENT_BODIES: &[&str] = &[
    "",
    " mine ",
    "{",
    "}",
    "\"",
    "'",
    "// nested",
    "/* open",
    "*",
    "\\",
    ",",
    "\"mcpServers\": {\"cairn\": {\"command\": \"x\"}}",
    "é ✓ 漢",
];

/// `text` as an agent that strips comments reads it (`strip-json-comments`, then
/// `JSON.parse`): each comment outside a string turned to spaces, its line breaks kept. Written
/// here apart from `json_text`, so the two are checked against each other.
fn stripped(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.char_indices().peekable();
    let mut in_string = false;
    while let Some((i, c)) = chars.next() {
        let rest = &text[i..];
        if in_string {
            out.push(c);
            if c == '\\' {
                if let Some((_, next)) = chars.next() {
                    out.push(next);
                }
            } else if c == '"' {
                in_string = false;
            }
        } else if rest.starts_with("//") || rest.starts_with("/*") {
            let end = if rest.starts_with("//") {
                rest.find('\n').unwrap_or(rest.len())
            } else {
                rest[2..].find("*/").map_or(rest.len(), |e| e + 4)
            };
            for c in rest[..end].chars() {
                out.push_str(&if c == '\n' {
                    "\n".to_owned()
                } else {
                    " ".repeat(c.len_utf8())
                });
            }
            while chars.peek().is_some_and(|(j, _)| *j < i + end) {
                chars.next();
            }
        } else {
            in_string = c == '"';
            out.push(c);
        }
    }
    out
}

/// `text` (JSON) with comments where whitespace may stand: after `{`, `[`, `,` and `:`, and at
/// both ends. Returns the text and the comments put in.
fn commented(text: &str, picks: &[(prop::sample::Index, bool, usize)]) -> (String, Vec<String>) {
    let mut places = vec![0, text.len()];
    let mut in_string = false;
    let mut escaped = false;
    for (i, c) in text.char_indices() {
        if in_string {
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                in_string = false;
            }
        } else if c == '"' {
            in_string = true;
        } else if matches!(c, '{' | '[' | ',' | ':') {
            places.push(i + 1);
        }
    }
    let mut at: Vec<(usize, String)> = picks
        .iter()
        .map(|(place, line, body)| {
            let body = COMMENT_BODIES[body % COMMENT_BODIES.len()];
            let comment = if *line {
                format!("//{body}")
            } else {
                format!("/*{body}*/")
            };
            (places[place.index(places.len())], comment)
        })
        .collect();
    at.sort_by_key(|(place, _)| std::cmp::Reverse(*place));
    let mut out = text.to_owned();
    let mut comments = Vec::new();
    for (place, comment) in at {
        let put = if comment.starts_with("//") {
            format!(" {comment}\n")
        } else {
            format!(" {comment} ")
        };
        out.insert_str(place, &put);
        comments.push(comment);
    }
    (out, comments)
}

/// The MCP config edits on a commented config of an agent that reads comments do what they do
/// on the config without them, and keep every comment; a plain-JSON agent refuses it, saying
/// it holds comments.
fn check_mcp_jsonc(
    plain: &str,
    text: &str,
    comments: &[String],
    cli: &str,
) -> Result<(), TestCaseError> {
    let path = Path::new(FILE);
    // The test's own stripper gives back the document the comments went into.
    prop_assert_eq!(
        serde_json::from_str::<Value>(&stripped(text)).ok(),
        serde_json::from_str::<Value>(plain).ok()
    );
    if !comments.is_empty() && edit::parse(plain).is_ok() {
        let e = edit::json_edit(Agent::Claude, path, text, Some(cli))
            .unwrap_err()
            .to_string();
        prop_assert!(e.contains("holds comments") && e.contains(FILE), "{}", e);
    }
    let value = |t: &str| serde_json::from_str::<Value>(&stripped(t)).ok();
    if stripped(text).trim().is_empty() && !text.trim().is_empty() {
        // Comments alone are no JSON value (`JSON.parse` refuses what is left): refused, not
        // taken for an empty file and overwritten.
        let e = edit::json_edit(Agent::Gemini, path, text, Some(cli)).unwrap_err();
        prop_assert!(
            e.to_string().contains("not valid JSON with comments"),
            "{}",
            e
        );
        return Ok(());
    }
    for agent in [Agent::Gemini, Agent::Qwen] {
        for launch in [Some(cli), None] {
            let want = edit::json_edit(agent, path, plain, launch);
            let got = edit::json_edit(agent, path, text, launch);
            match (&want, &got) {
                (Err(_), Err(e)) => prop_assert!(e.to_string().contains(FILE), "{}", e),
                (Ok(None), Ok(None)) => {}
                (Ok(Some(w)), Ok(Some(g))) => {
                    prop_assert!(edit::parse_as(g, edit::Syntax::Jsonc).is_ok(), "{:?}", g);
                    prop_assert_eq!(value(w), value(g), "{:?} -> {:?}", text, g);
                    for comment in comments {
                        prop_assert!(
                            g.matches(comment.as_str()).count()
                                >= text.matches(comment.as_str()).count(),
                            "{} lost: {:?} -> {:?}",
                            comment,
                            text,
                            g
                        );
                    }
                    if launch.is_some() {
                        // Taken off again: the bytes before when it is so without comments.
                        // (`cairn` named twice is refused both ways; an empty container's
                        // inner whitespace excepted, as without comments: a comment alone in
                        // one counts as that.)
                        let back = edit::json_edit(agent, path, g, None);
                        let plain_back = edit::json_edit(agent, path, w, None);
                        prop_assert_eq!(back.is_ok(), plain_back.is_ok(), "{:?}", g);
                        if let (Ok(back), Ok(Some(plain_back))) = (back, plain_back)
                            && plain_back == plain
                            && !blank_empty(&stripped(text))
                        {
                            prop_assert_eq!(back.as_deref(), Some(text), "{:?}", g);
                        }
                    }
                }
                _ => {
                    return Err(TestCaseError::fail(format!(
                        "{agent} {launch:?}: {want:?} without comments, {got:?} with: {text:?}"
                    )));
                }
            }
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(crate::support::proptest_cases(256)))]

    #[test]
    fn json_text_reads_exactly_json_and_its_spans_agree_with_serde_json(text in hostile_text()) {
        check_parse(&text)?;
    }

    #[test]
    fn appending_and_removing_gives_the_bytes_back(
        text in settings_text(),
        pick in any::<prop::sample::Index>(),
        added in any_json(),
        s in style(),
    ) {
        let Ok(root) = edit::parse(&text) else { return Ok(()) };
        let mut containers = Vec::new();
        fn walk<'a>(n: &'a edit::Node, out: &mut Vec<&'a edit::Node>) {
            match &n.kind {
                edit::Kind::Object(m) => {
                    out.push(n);
                    m.iter().for_each(|(_, _, v)| walk(v, out));
                }
                edit::Kind::Array(items) => {
                    out.push(n);
                    items.iter().for_each(|v| walk(v, out));
                }
                _ => {}
            }
        }
        walk(&root, &mut containers);
        if containers.is_empty() {
            return Ok(());
        }
        let node = containers[pick.index(containers.len())];
        let rendered = render(&added, &Style { lead: "", trail: "", ..s });
        let Ok(value) = serde_json::from_str::<Value>(&rendered) else { return Ok(()) };
        let (e, count) = match &node.kind {
            edit::Kind::Object(m) => (edit::insert_members(&text, node, &[("zz new", value)]), m.len()),
            edit::Kind::Array(items) => (edit::push_element(&text, node, &value), items.len()),
            _ => unreachable!(),
        };
        let grown = edit::apply(&text, vec![e]);
        prop_assert!(raw_ok(&grown), "{:?} -> {:?}", text, grown);
        prop_assert!(is_subsequence(&text, &grown) || count == 0);
        let grown_root = edit::parse(&grown).unwrap();
        // The same container in the grown text: the one starting where it started.
        let mut again = Vec::new();
        walk(&grown_root, &mut again);
        let grown_node = again.into_iter().find(|n| n.start == node.start).unwrap();
        let back = edit::apply(&grown, vec![edit::remove(grown_node, count).unwrap()]);
        let inner = &text[node.start + 1..node.end - 1];
        if count > 0 || inner.is_empty() {
            prop_assert_eq!(&back, &text);
        } else {
            // An empty container's whitespace is not kept.
            let mut expected = text.clone();
            expected.replace_range(node.start + 1..node.end - 1, "");
            prop_assert_eq!(&back, &expected);
        }
    }

    #[test]
    fn hooks_install_edits_only_cairns_hook(
        text in settings_text(),
        codex in prop::bool::weighted(0.3),
        cli in prop::sample::select(CLIS),
        memory in any::<bool>(),
    ) {
        let agent = if codex { Agent::Codex } else { Agent::Claude };
        check_with_hook(&text, agent, cli, memory)?;
    }

    #[test]
    fn hooks_install_on_hostile_text_refuses_or_holds(
        text in hostile_text(),
        cli in prop::sample::select(CLIS),
        memory in any::<bool>(),
    ) {
        check_with_hook(&text, Agent::Claude, cli, memory)?;
    }

    #[test]
    fn a_diff_keeps_the_lines_and_hides_every_env_value(
        text in prop_oneof![3 => settings_text(), 1 => mcp_text(), 2 => hostile_text()]
    ) {
        let hidden = edit::hide_secrets(&text);
        prop_assert_eq!(hidden.lines().count(), text.lines().count(), "{:?} -> {:?}", text, hidden);
        if edit::parse(&text).is_ok() && serde_json::from_str::<Value>(&text).is_ok() {
            prop_assert!(
                serde_json::from_str::<Value>(&hidden).is_ok_and(|h| all_hidden(&h, false)),
                "{:?} -> {:?}", text, hidden
            );
        }
    }

    #[test]
    fn a_diff_of_planted_settings_shows_none_of_them(j in prop_oneof![settings(), mcp_doc()], s in style()) {
        let text = render(&j, &s);
        let mut secrets = Vec::new();
        planted(&j, false, &mut secrets);
        let hidden = edit::hide_secrets(&text);
        let decoded = serde_json::from_str::<Value>(&hidden).map(|v| v.to_string()).unwrap_or_default();
        for secret in secrets {
            prop_assert!(
                !hidden.contains(&secret) && !decoded.contains(&secret),
                "{} shown: {:?} -> {:?}", secret, text, hidden
            );
        }
    }

    #[test]
    fn mcp_json_edits_only_cairns_server(
        text in mcp_text(),
        agent in prop::sample::select(mcp_json_agents()),
        cli in prop::sample::select(CLIS),
    ) {
        check_mcp_json(&text, agent, cli)?;
    }

    #[test]
    fn mcp_json_edits_on_hostile_text_refuse_or_hold(
        text in hostile_text(),
        cli in prop::sample::select(CLIS),
    ) {
        check_mcp_json(&text, Agent::Claude, cli)?;
    }

    #[test]
    fn mcp_edits_keep_comments_where_the_agent_reads_them(
        plain in mcp_text(),
        picks in prop::collection::vec((any::<prop::sample::Index>(), any::<bool>(), 0..64usize), 0..6),
        cli in prop::sample::select(CLIS),
    ) {
        let (text, comments) = commented(&plain, &picks);
        check_mcp_jsonc(&plain, &text, &comments, cli)?;
    }

    #[test]
    fn jsonc_edits_on_hostile_text_refuse_or_hold(
        text in prop_oneof![hostile_text(), "[{}\\[\\]\":,/*\n a-z0-9]{0,40}"],
        cli in prop::sample::select(CLIS),
    ) {
        // Whatever it holds: never a panic, a refusal names the file, and what is written
        // reads, comments stripped, as JSON.
        for launch in [Some(cli), None] {
            match edit::json_edit(Agent::Gemini, Path::new(FILE), &text, launch) {
                Err(e) => prop_assert!(e.to_string().contains(FILE), "{}", e),
                Ok(Some(after)) => {
                    prop_assert!(edit::parse_as(&after, edit::Syntax::Jsonc).is_ok(), "{:?} -> {:?}", text, after);
                    // serde_json takes no lone surrogate, which JavaScript (and json_text) does.
                    let before_reads = text.trim().is_empty()
                        || serde_json::from_str::<Value>(&stripped(&text)).is_ok();
                    if before_reads {
                        prop_assert!(serde_json::from_str::<Value>(&stripped(&after)).is_ok(), "{:?} -> {:?}", text, after);
                    }
                }
                Ok(None) => {}
            }
        }
    }

    #[test]
    fn codex_toml_edits_only_cairns_table(text in toml_text(), cli in prop::sample::select(CLIS)) {
        check_toml(&text, cli)?;
    }

    #[test]
    fn codex_toml_edits_on_hostile_text_never_panic(text in prop_oneof![any::<String>(), "[\\[\\]\"'=#a-z. \n]{0,60}"]) {
        check_toml(&text, "/usr/bin/cairn")?;
        let hidden = edit::hide_toml_secrets(&text);
        prop_assert_eq!(hidden.lines().count(), text.lines().count());
    }

    #[test]
    fn a_toml_diff_shows_no_env_value_or_secret(text in toml_text()) {
        let hidden = edit::hide_toml_secrets(&text);
        prop_assert_eq!(hidden.lines().count(), text.lines().count(), "{:?} -> {:?}", text, hidden);
        // Only TOML is ever diffed (the edits refuse anything else).
        if text.parse::<toml::Table>().is_ok() {
            for secret in toml_secrets(&text) {
                prop_assert!(!hidden.contains(secret), "{} shown: {:?} -> {:?}", secret, text, hidden);
            }
        }
    }
}

//! Every answer leaves through here: each string cleaned of control sequences and redacted by
//! the outbound redactor (`Redactor::outbound_text`, which applies `text::printable` first),
//! long strings cut, and lists cut to a byte budget with a cursor for the rest.

use cairn_core::archive::redact::Redactor;
use serde::Serialize;
use serde_json::{Map, Value};

/// The most one answer carries, in bytes of JSON.
pub const MAX_BYTES: usize = 48 * 1024;
/// The longest string in an answer, in characters (a record's text is cut here; `show` the
/// record for the rest is not offered: the archive keeps what the agent wrote, not more).
pub const MAX_STRING: usize = 2_000;

/// How strings leave: paths inside `repo_root` made relative, the rest of the file system hidden.
#[derive(Debug, Clone, Default)]
pub struct Outbound {
    pub repo_root: Option<String>,
    pub home: Option<String>,
}

impl Outbound {
    /// Redacted whole, then cut (cutting first could leave half a secret the rules no longer
    /// recognise).
    pub fn text(&self, s: &str) -> String {
        let mut findings = Vec::new();
        let out = Redactor::global().outbound_text(
            s,
            self.repo_root.as_deref(),
            self.home.as_deref(),
            &mut findings,
        );
        match out.char_indices().nth(MAX_STRING) {
            Some((cut, _)) => format!("{}…", &out[..cut]),
            None => out,
        }
    }

    /// A value with every string (keys too) cleaned and redacted. A string that holds JSON
    /// (a tool call's stored input) is cleaned inside: its escapes (`\u001b]0;…`) would give an
    /// agent that parses it the sequence itself.
    pub fn value(&self, v: Value) -> Value {
        match v {
            Value::String(s) => Value::String(self.json_text(&s).unwrap_or_else(|| self.text(&s))),
            Value::Array(items) => Value::Array(items.into_iter().map(|i| self.value(i)).collect()),
            Value::Object(map) => Value::Object(
                map.into_iter()
                    .map(|(k, v)| (self.text(&k), self.value(v)))
                    .collect::<Map<_, _>>(),
            ),
            other => other,
        }
    }

    /// `s` cleaned as the JSON object or array it holds, re-serialised and cut as
    /// [`Self::text`] cuts; `None` when it holds none.
    fn json_text(&self, s: &str) -> Option<String> {
        if !s.trim_start().starts_with(['{', '[']) {
            return None;
        }
        let inner: Value = serde_json::from_str(s).ok()?;
        let out = serde_json::to_string(&self.value(inner)).ok()?;
        Some(match out.char_indices().nth(MAX_STRING) {
            Some((cut, _)) => format!("{}…", &out[..cut]),
            None => out,
        })
    }

    pub fn serialize<T: Serialize>(&self, v: &T) -> Value {
        self.value(serde_json::to_value(v).unwrap_or(Value::Null))
    }
}

/// A page of items: as many of `items` as fit in `budget` bytes beside the rest of the
/// answer, in order (at least one, so a page always moves on). Items are taken one by one, so
/// each is cleaned only when it is reached. Returns the kept items and whether any
/// were left out for the budget.
pub fn fit(items: impl IntoIterator<Item = Value>, budget: usize) -> (Vec<Value>, bool) {
    let mut used = 0;
    let mut kept = Vec::new();
    for item in items {
        let size = serde_json::to_string(&item).map_or(usize::MAX, |s| s.len() + 1);
        if !kept.is_empty() && used + size > budget {
            return (kept, true);
        }
        used = used.saturating_add(size);
        kept.push(item);
    }
    (kept, false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_are_cleaned_redacted_and_cut() {
        let o = Outbound::default();
        let key = format!("AKIA{}", "ABCDEFGHIJKLMNOP");
        let v = o.value(serde_json::json!({
            "a": format!("\u{1b}[31mred\u{1b}[0m key {key}"),
            "b": ["x".repeat(MAX_STRING * 2)],
        }));
        let s = v.to_string();
        assert!(!s.contains('\u{1b}'), "{s}");
        assert!(!s.contains(&key), "{s}");
        assert!(s.contains("red"));
        assert!(v["b"][0].as_str().unwrap().chars().count() <= MAX_STRING + 1);
    }

    /// A tool call's input is stored JSON: the sequences its escapes spell are cleaned inside,
    /// so an agent parsing it gets none, and the string stays JSON.
    #[test]
    fn a_string_holding_json_is_cleaned_inside() {
        let o = Outbound::default();
        let input = r#"{"command":"printf '\u001b]0;pwned\u0007'","args":["\u001b[2Jx"]}"#;
        let out = o.value(Value::String(input.to_owned()));
        let text = out.as_str().unwrap();
        let parsed: Value = serde_json::from_str(text).unwrap();
        let mut all = String::new();
        for s in [&parsed["command"], &parsed["args"][0]] {
            all.push_str(s.as_str().unwrap());
        }
        assert!(!all.contains('\u{1b}') && !all.contains('\u{7}'), "{all:?}");
        assert!(all.contains("printf") && all.contains('x'), "{all:?}");
        // Text that only looks like JSON is cleaned as text.
        assert_eq!(o.value(Value::String("{not json".into())), "{not json");
    }

    #[test]
    fn fit_keeps_one_and_cuts_at_the_budget() {
        let items: Vec<Value> = (0..100)
            .map(|i| Value::String(format!("{i:0100}")))
            .collect();
        let (kept, cut) = fit(items.clone(), 1_000);
        assert!(cut);
        assert!(kept.len() < 10 && !kept.is_empty());
        let (kept, cut) = fit(items[..1].to_vec(), 10);
        assert_eq!(kept.len(), 1);
        assert!(!cut);
    }
}

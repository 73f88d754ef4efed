//! The Document read kind, the agent's side: a JSON document the agent rewrites in place (Gemini
//! CLI's legacy session file, an ATIF trajectory, a Cline task's `ui_messages.json`). The reader
//! (`capture::document`) reads it one level deep ([`Shallow`]): the list of units stays text, one
//! borrowed slice per unit, and each unit is parsed only when it is taken, so a long document is
//! never one tree of values in memory (a tree costs three to five times the document's bytes).

use serde::de::{Deserialize, Deserializer, MapAccess, Visitor};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::UnitParser;

/// One agent's parser for a document it rewrites in place. The reader splits the document into
/// a header and keyed units, redacts each, and gives the parser the header on every read and
/// only the units that changed. Every record a unit yields is keyed by the unit (the reader sets
/// [`super::Record::unit`]); the parser names which record of the unit it is in
/// [`super::Record::key`] so an updated unit updates its records in place.
pub trait DocumentParser: UnitParser {
    /// Where the document lists its units: the members to follow from its top level (none: the
    /// document itself is the list).
    fn units_at(&self) -> &'static [&'static str];

    /// The document without its units, and its units with their stable ids, in order, each
    /// parsed as it is taken.
    fn split<'d>(&self, doc: Shallow<'d>) -> (Value, KeyedUnits<'d>);
}

/// A document's units with their stable ids, in order, each parsed as it is taken.
pub type KeyedUnits<'d> = Box<dyn Iterator<Item = (String, Value)> + 'd>;

/// A document read down to its list of units: everything else parsed, the list kept as the text
/// of each unit.
#[derive(Debug)]
pub struct Shallow<'d> {
    /// The document, with `null` standing where the list of units was (when it was a list).
    pub doc: Value,
    /// The units, when the place they are listed held a list.
    pub units: Option<Units<'d>>,
}

impl<'d> Shallow<'d> {
    /// Read `text` down to the list at `path` (members followed from the top level). A member
    /// that is missing or of another type leaves `units` empty and the document as it is.
    ///
    /// # Errors
    /// When `text` is not one JSON value: every part of it is checked, the units' text too.
    pub fn read(text: &'d str, path: &[&str]) -> serde_json::Result<Shallow<'d>> {
        let mut units = None;
        let doc = read_at(text, path, &mut units)?;
        Ok(Shallow {
            doc,
            units: units.map(|list: Vec<&RawValue>| Units(list.into_iter())),
        })
    }
}

fn read_at<'d>(
    text: &'d str,
    path: &[&str],
    units: &mut Option<Vec<&'d RawValue>>,
) -> serde_json::Result<Value> {
    let opens = |c: u8| text.bytes().find(|b| !b.is_ascii_whitespace()) == Some(c);
    match path.split_first() {
        None if opens(b'[') => {
            *units = Some(serde_json::from_str(text)?);
            Ok(Value::Null)
        }
        Some((name, rest)) if opens(b'{') => {
            let Members(members) = serde_json::from_str(text)?;
            let mut out = Map::new();
            for (key, raw) in members {
                // A member named twice counts as its last, as a parsed object keeps it.
                let value = if key == *name {
                    *units = None;
                    read_at(raw.get(), rest, units)?
                } else {
                    serde_json::from_str(raw.get())?
                };
                out.insert(key, value);
            }
            Ok(Value::Object(out))
        }
        _ => serde_json::from_str(text),
    }
}

/// An object's members in the order written, each value still its text.
struct Members<'d>(Vec<(String, &'d RawValue)>);

impl<'de> Deserialize<'de> for Members<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Each;
        impl<'de> Visitor<'de> for Each {
            type Value = Members<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Members<'de>, A::Error> {
                let mut members = Vec::new();
                while let Some(member) = map.next_entry::<String, &'de RawValue>()? {
                    members.push(member);
                }
                Ok(Members(members))
            }
        }
        deserializer.deserialize_map(Each)
    }
}

/// A document's units, each parsed as it is taken.
#[derive(Debug, Clone)]
pub struct Units<'d>(std::vec::IntoIter<&'d RawValue>);

impl Iterator for Units<'_> {
    type Item = Value;

    fn next(&mut self) -> Option<Value> {
        // The text was checked when the document was read; what that check lets through and a
        // value cannot hold (a number past `f64`'s range, a lone surrogate escape) makes the
        // unit `null`, counted as a unit of an unknown shape, and the others are read.
        self.0
            .next()
            .map(|raw| serde_json::from_str(raw.get()).unwrap_or(Value::Null))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.0.size_hint()
    }
}

impl ExactSizeIterator for Units<'_> {}

/// A document's header and units as `parser` splits them, all taken at once (for tests).
#[cfg(test)]
pub(crate) fn split_value(
    parser: &dyn DocumentParser,
    doc: &Value,
    path: &[&str],
) -> (Value, Vec<(String, Value)>) {
    let text = doc.to_string();
    let shallow = Shallow::read(&text, path).expect("a JSON document");
    let (header, units) = parser.split(shallow);
    (header, units.collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    #[test]
    fn the_list_of_units_is_taken_out_and_the_rest_kept_in_order() {
        let text = r#"{"z": 1, "messages": [{"a": 1}, [2], "three"], "a": {"b": [1]}}"#;
        let read = Shallow::read(text, &["messages"]).unwrap();
        assert_eq!(
            read.doc.to_string(),
            r#"{"z":1,"messages":null,"a":{"b":[1]}}"#
        );
        let units: Vec<Value> = read.units.unwrap().collect();
        assert_eq!(units, vec![json!({"a": 1}), json!([2]), json!("three")]);
    }

    #[test]
    fn a_place_that_holds_no_list_leaves_the_document_whole() {
        for (text, path) in [
            (r#"{"messages": {"not": "a list"}}"#, &["messages"][..]),
            (r#"{"other": []}"#, &["messages"]),
            (r#"[1, 2]"#, &["messages"]),
            (r#"{"outer": 7}"#, &["outer", "messages"]),
            (r#""text""#, &[]),
        ] {
            let read = Shallow::read(text, path).unwrap();
            assert!(read.units.is_none(), "{text}");
            assert_eq!(
                read.doc,
                serde_json::from_str::<Value>(text).unwrap(),
                "{text}"
            );
        }
    }

    #[test]
    fn a_nested_list_and_a_whole_list_are_found() {
        let read = Shallow::read(
            r#"{"file": {"id": 1, "messages": [1, 2]}}"#,
            &["file", "messages"],
        )
        .unwrap();
        assert_eq!(read.doc, json!({"file": {"id": 1, "messages": null}}));
        assert_eq!(read.units.unwrap().len(), 2);
        let read = Shallow::read(" [ {\"a\": 1} ] ", &[]).unwrap();
        assert_eq!(read.doc, Value::Null);
        assert_eq!(
            read.units.unwrap().collect::<Vec<_>>(),
            vec![json!({"a": 1})]
        );
    }

    #[test]
    fn a_member_named_twice_counts_as_its_last() {
        let read = Shallow::read(r#"{"m": [1], "k": 1, "m": "x"}"#, &["m"]).unwrap();
        assert!(read.units.is_none());
        assert_eq!(read.doc, json!({"m": "x", "k": 1}));
        let read = Shallow::read(r#"{"m": "x", "m": [1, 2]}"#, &["m"]).unwrap();
        assert_eq!(read.units.unwrap().len(), 2);
    }

    #[test]
    fn a_broken_document_is_refused_even_inside_a_unit() {
        for text in [
            r#"{"messages": [{"a": 1}, {"a": }]}"#,
            r#"{"messages": [{"a": "\x"}]}"#,
            "{\"messages\": [\"a\u{1}b\"]}",
            r#"{"messages": [1, 2]"#,
            r#"{"messages": [1]} trailing"#,
            r#"[1, [2]"#,
        ] {
            assert!(Shallow::read(text, &["messages"]).is_err(), "{text}");
            assert!(Shallow::read(text, &[]).is_err(), "{text}");
        }
    }

    /// A unit nested past what a value may hold (serde_json's 128 levels) is read as `null`, and
    /// the units around it as they are; nesting far deeper does not exhaust the stack.
    #[test]
    fn a_unit_nested_too_deep_is_null_and_the_others_are_read() {
        for depth in [200, 100_000] {
            let deep = format!("{}{}", "[".repeat(depth), "]".repeat(depth));
            let text = format!(r#"{{"messages": [{{"a": 1}}, {deep}, 3]}}"#);
            let read = Shallow::read(&text, &["messages"]).expect("read");
            let units: Vec<Value> = read.units.unwrap().collect();
            assert_eq!(
                units,
                vec![json!({"a": 1}), Value::Null, json!(3)],
                "{depth}"
            );
        }
    }

    fn json_value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::from),
            any::<i64>().prop_map(Value::from),
            "[a-z\\\\\"\u{7f}-\u{20ac}]{0,6}".prop_map(Value::from),
        ];
        leaf.prop_recursive(3, 24, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(Value::from),
                prop::collection::vec(("[a-c]{1,2}", inner), 0..4)
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    proptest! {
        /// Read shallowly, a document is what parsing it whole gives: the units are the list's
        /// elements and the rest is the document with `null` in the list's place.
        #[test]
        fn shallow_is_whole(doc in json_value(), pretty in any::<bool>()) {
            let text = if pretty { serde_json::to_string_pretty(&doc).unwrap() } else { doc.to_string() };
            let read = Shallow::read(&text, &["m"]).unwrap();
            let mut want = doc.clone();
            let list = match want.get_mut("m") {
                Some(v @ Value::Array(_)) => Some(v.take()),
                _ => None,
            };
            prop_assert_eq!(&read.doc, &want);
            prop_assert_eq!(read.units.map(|u| Value::from(u.collect::<Vec<_>>())), list);
        }
    }
}

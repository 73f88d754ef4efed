//! Strict validation of a model's reply against [`super::prompt::schema`]: unknown or repeated
//! keys, nulls, wrong types, blank titles or bodies and out-of-range values are schema
//! violations ([`LlmError::Schema`]: the unit fails, not the pass), never silently repaired.
//! Every generator's answer (an endpoint's or an agent CLI's) passes here. Text fields keep only
//! what is printable ([`crate::text::printable`]: no escape sequences, control or bidi
//! characters), so an entry never carries a terminal sequence into a listing, and are redacted
//! before they are stored ([`RawEntry::redacted`]). What a violation quotes of the answer (a key,
//! a type) is quoted by [`crate::llm::quoted`], redacted: a model can echo a secret into the
//! very field that breaks the format, and the message is printed and stored.

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

use super::prompt::{
    MAX_BODY, MAX_ENTITIES, MAX_ENTITY, MAX_ENTRIES, MAX_TITLE, MAX_TRIGGER, TYPES,
};
use crate::llm::{LlmError, Outbound, quoted};
use crate::recall::model::EntryType;

/// One entry as the model returned it.
#[derive(Debug, Clone, PartialEq)]
pub struct RawEntry {
    pub entry_type: EntryType,
    pub title: String,
    pub body: String,
    pub trigger: String,
    pub confidence: f64,
    pub entities: Vec<String>,
    pub first: i64,
    pub last: i64,
}

fn violation(m: String) -> LlmError {
    LlmError::Schema(m)
}

fn exact_keys(o: &Map<String, Value>, keys: &[&str], at: &str) -> Result<(), LlmError> {
    if let Some(k) = o.keys().find(|k| !keys.contains(&k.as_str())) {
        return Err(violation(format!("{at} has an unknown key {}", quoted(k))));
    }
    if let Some(k) = keys.iter().find(|k| !o.contains_key(**k)) {
        return Err(violation(format!("{at} lacks {k:?}")));
    }
    Ok(())
}

fn string(v: &Value, at: &str, max: usize, non_blank: bool) -> Result<String, LlmError> {
    let s = v
        .as_str()
        .ok_or_else(|| violation(format!("{at} is not a string")))?;
    let s = crate::text::printable(s);
    let t = s.trim();
    if non_blank && crate::text::is_blank(t) {
        return Err(violation(format!("{at} is blank")));
    }
    if t.chars().count() > max {
        return Err(violation(format!("{at} is longer than {max} characters")));
    }
    Ok(t.to_owned())
}

/// A reply read as JSON whose objects repeat no key. serde_json keeps the last of a repeated key,
/// so `{"entries": [...], "entries": []}` would drop the first array unread; a model that writes
/// a key twice has not said which one it meant.
struct Distinct(Value);

impl<'de> Deserialize<'de> for Distinct {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(DistinctVisitor).map(Distinct)
    }
}

struct DistinctVisitor;

impl<'de> Visitor<'de> for DistinctVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_bool<E>(self, b: bool) -> Result<Value, E> {
        Ok(Value::Bool(b))
    }
    fn visit_i64<E>(self, n: i64) -> Result<Value, E> {
        Ok(Value::from(n))
    }
    fn visit_u64<E>(self, n: u64) -> Result<Value, E> {
        Ok(Value::from(n))
    }
    fn visit_f64<E>(self, n: f64) -> Result<Value, E> {
        Ok(Value::from(n))
    }
    fn visit_str<E>(self, s: &str) -> Result<Value, E> {
        Ok(Value::String(s.to_owned()))
    }
    fn visit_string<E>(self, s: String) -> Result<Value, E> {
        Ok(Value::String(s))
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        while let Some(Distinct(v)) = seq.next_element()? {
            items.push(v);
        }
        Ok(Value::Array(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut members = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            if members.contains_key(&key) {
                return Err(de::Error::custom(format_args!(
                    "the key {} is repeated",
                    quoted(&key)
                )));
            }
            let Distinct(v) = map.next_value()?;
            members.insert(key, v);
        }
        Ok(Value::Object(members))
    }
}

/// Parse and validate a reply.
pub fn parse(content: &str) -> Result<Vec<RawEntry>, LlmError> {
    // A byte-order mark some tools put before their output is no part of the JSON.
    let content = content.trim().trim_start_matches('\u{feff}').trim();
    let Distinct(v) = serde_json::from_str(content).map_err(|e| {
        if e.is_data() {
            violation(e.to_string())
        } else {
            violation(format!("not JSON ({e})"))
        }
    })?;
    let top = v
        .as_object()
        .ok_or_else(|| violation("the reply is not an object".into()))?;
    exact_keys(top, &["entries"], "the reply")?;
    let entries = top["entries"]
        .as_array()
        .ok_or_else(|| violation("entries is not an array".into()))?;
    if entries.len() > MAX_ENTRIES {
        return Err(violation(format!("more than {MAX_ENTRIES} entries")));
    }
    let mut out = Vec::with_capacity(entries.len());
    for (i, e) in entries.iter().enumerate() {
        let at = format!("entries[{i}]");
        let o = e
            .as_object()
            .ok_or_else(|| violation(format!("{at} is not an object")))?;
        exact_keys(
            o,
            &[
                "type",
                "title",
                "body",
                "trigger",
                "confidence",
                "entities",
                "evidence",
            ],
            &at,
        )?;
        let t = o["type"]
            .as_str()
            .ok_or_else(|| violation(format!("{at}.type is not a string")))?;
        let entry_type = TYPES
            .iter()
            .copied()
            .find(|x| x.as_str() == t)
            .ok_or_else(|| violation(format!("{at}.type {} is not allowed", quoted(t))))?;
        let confidence = o["confidence"]
            .as_f64()
            .filter(|c| c.is_finite() && (0.0..=1.0).contains(c))
            .ok_or_else(|| violation(format!("{at}.confidence is not a number from 0 to 1")))?;
        let ents = o["entities"]
            .as_array()
            .ok_or_else(|| violation(format!("{at}.entities is not an array")))?;
        if ents.len() > MAX_ENTITIES {
            return Err(violation(format!(
                "{at}.entities has more than {MAX_ENTITIES} items"
            )));
        }
        let mut entities = Vec::new();
        for (j, x) in ents.iter().enumerate() {
            let s = string(x, &format!("{at}.entities[{j}]"), MAX_ENTITY, false)?;
            if !s.is_empty() && !entities.contains(&s) {
                entities.push(s);
            }
        }
        let ev = o["evidence"]
            .as_object()
            .ok_or_else(|| violation(format!("{at}.evidence is not an object")))?;
        exact_keys(ev, &["first", "last"], &format!("{at}.evidence"))?;
        let int = |k: &str| {
            ev[k]
                .as_i64()
                .ok_or_else(|| violation(format!("{at}.evidence.{k} is not an integer")))
        };
        let title = string(&o["title"], &format!("{at}.title"), MAX_TITLE, true)?;
        let body = string(&o["body"], &format!("{at}.body"), MAX_BODY, true)?;
        let trigger = string(&o["trigger"], &format!("{at}.trigger"), MAX_TRIGGER, false)?;
        let (first, last) = (int("first")?, int("last")?);
        // The same entry twice in one answer is one entry (a model repeats itself).
        let said = |r: &RawEntry| {
            r.entry_type == entry_type
                && crate::text::folded(&r.title) == crate::text::folded(&title)
                && crate::text::folded(&r.body) == crate::text::folded(&body)
        };
        if out.iter().any(said) {
            continue;
        }
        out.push(RawEntry {
            entry_type,
            title,
            body,
            trigger,
            confidence,
            entities,
            first,
            last,
        });
    }
    Ok(out)
}

impl RawEntry {
    /// The entry with every text field cleaned ([`crate::recall::store::entry_text`]) before it is
    /// stored: the model may decode what the outbound redactor hid (a percent-encoded token, a
    /// path) or echo a secret planted in the transcript, and Recall shows entries to people and
    /// agents alike. Entities made equal by redaction are kept once.
    pub fn redacted(self, ob: &Outbound) -> RawEntry {
        let mut entities: Vec<String> = Vec::with_capacity(self.entities.len());
        for e in &self.entities {
            let e = ob.redact_answer(e);
            if !entities.contains(&e) {
                entities.push(e);
            }
        }
        RawEntry {
            title: crate::recall::store::entry_text(ob, &self.title),
            body: crate::recall::store::entry_text(ob, &self.body),
            trigger: crate::recall::store::entry_text(ob, &self.trigger),
            entities,
            ..self
        }
    }
}

/// The entry's evidence range: the records the model cited, when they lie within the unit it
/// was shown (`start..=end`) in order; `None` for anything else (records outside the unit,
/// negative, a reversed range), a protocol violation that is never repaired here. The pass keeps
/// such an entry bound to the whole unit with a note saying so ([`out_of_unit_note`]), shown
/// wherever a reviewer reads it, and counts it ([`super::run::RunReport::evidence_out_of_unit`]).
pub fn evidence_range(e: &RawEntry, start: u32, end: u32) -> Option<(u32, u32)> {
    let (first, last) = (u32::try_from(e.first).ok()?, u32::try_from(e.last).ok()?);
    (start <= first && first <= last && last <= end).then_some((first, last))
}

/// The note on an entry whose citation [`evidence_range`] refused: what the model cited, and
/// that its evidence is the whole part of the session it was shown.
pub fn out_of_unit_note(e: &RawEntry, start: u32, end: u32) -> String {
    format!(
        "{}, not within the records {start}-{end} it was shown; bound to all of those, so check which of them supports it",
        cited(e.first, e.last)
    )
}

/// What the model cited, in words: a range with a negative end (`-5-3` reads as neither) is
/// records outside the session, a range that ends before it starts is said as backwards, and
/// either quotes the numbers it gave.
fn cited(first: i64, last: i64) -> String {
    if first < 0 || last < 0 {
        format!("the model cited records outside the session (it gave {first} to {last})")
    } else if first > last {
        format!("the model cited records backwards (from {first} to {last})")
    } else {
        format!("the model cited records {first}-{last}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(extra: &str) -> String {
        format!(
            r#"{{"entries":[{{"type":"fact","title":" T ","body":"B","trigger":"","confidence":0.5,"entities":["a","a",""],"evidence":{{"first":3,"last":4}}{extra}}}]}}"#
        )
    }

    #[test]
    fn the_same_entry_twice_in_one_answer_is_one() {
        let one = r#"{"type":"fact","title":"Port 4000","body":"Held by X.","trigger":"","confidence":0.5,"entities":[],"evidence":{"first":0,"last":0}}"#;
        let again = one.replace("Port 4000", "port  4000");
        let other = one.replace("\"fact\"", "\"warning\"");
        let e = parse(&format!(r#"{{"entries":[{one},{again},{other}]}}"#)).unwrap();
        assert_eq!(e.len(), 2);
        assert_eq!(e[0].title, "Port 4000");
    }

    #[test]
    fn accepts_a_valid_reply_and_an_empty_one() {
        let e = parse(&entry("")).unwrap();
        assert_eq!(e[0].title, "T");
        assert_eq!(e[0].entities, ["a"]);
        assert!(parse(r#"{"entries": []}"#).unwrap().is_empty());
    }

    #[test]
    fn rejects_every_deviation() {
        for bad in [
            entry(r#","extra":1"#),
            r#"{"entries":[],"more":1}"#.to_owned(),
            entry("").replace("\"fact\"", "\"rumour\""),
            entry("").replace("\" T \"", "\"  \""),
            entry("").replace("\"B\"", "null"),
            entry("").replace("0.5", "1.5"),
            entry("").replace("\"first\":3", "\"first\":\"3\""),
            entry("").replace(",\"trigger\":\"\"", ""),
            "```json\n{\"entries\":[]}\n```".to_owned(),
            format!(
                r#"{{"entries":[{{"type":"fact","title":"{}","body":"b","trigger":"","confidence":0,"entities":[],"evidence":{{"first":0,"last":0}}}}]}}"#,
                "x".repeat(501)
            ),
        ] {
            let err = parse(&bad).unwrap_err();
            assert!(matches!(err, LlmError::Schema(_)), "{bad}: {err}");
        }
    }

    #[test]
    fn a_repeated_key_refuses_the_reply() {
        // serde_json alone keeps the last of a repeated key: the first array of entries (or the
        // first title, or ordinal) would be dropped without a word.
        let one = entry("");
        let array = &one["{\"entries\":".len()..one.len() - 1];
        for bad in [
            format!(r#"{{"entries":{array},"entries":[]}}"#),
            entry(r#","title":"U""#),
            entry("").replace(r#""last":4"#, r#""last":4,"first":9"#),
        ] {
            let err = parse(&bad).unwrap_err();
            assert!(matches!(err, LlmError::Schema(_)), "{bad}: {err}");
            assert!(err.to_string().contains("is repeated"), "{bad}: {err}");
        }
        // The same keys in other objects are no repetition.
        assert_eq!(
            parse(&format!(r#"{{"entries":{array}}}"#)).unwrap().len(),
            1
        );
    }

    #[test]
    fn control_sequences_never_reach_an_entry() {
        let hostile = entry("")
            .replace(
                "\" T \"",
                "\"\\u001b]0;pwned\\u0007Title\\u001b[31m red\\u202e\"",
            )
            .replace("\"B\"", "\"line one\\nline\\u0000 two\\u009b2J\"");
        let e = parse(&hostile).unwrap().remove(0);
        assert_eq!(e.title, "Title red");
        assert_eq!(e.body, "line one\nline two");
        // A title of nothing but a sequence is blank, so the reply is refused.
        let blank = entry("").replace("\" T \"", "\"\\u001b[2J\"");
        assert!(matches!(parse(&blank), Err(LlmError::Schema(_))));
        // So is one of characters drawn as nothing (zero-width, BOM, soft hyphen, marks).
        let unseen = entry("").replace("\" T \"", "\"\\u200b\\ufeff \\u00ad\\u2060\\u200e\"");
        let refused = parse(&unseen).unwrap_err().to_string();
        assert!(refused.contains("blank"), "{refused}");
        // A byte-order mark before the answer is no reason to refuse it.
        assert_eq!(parse(&format!("\u{feff}{}", entry(""))).unwrap().len(), 1);
        assert_eq!(
            parse(&format!("\n \u{feff}{}", entry(""))).unwrap().len(),
            1
        );
    }

    #[test]
    fn every_text_field_is_redacted_before_it_is_stored() {
        let ob = Outbound {
            repo_root: Some("/home/ann/repo".into()),
            home: Some("/home/ann".into()),
        };
        let token = "ghp_EXAMPLE00000000000000000000000000000";
        let pem = "-----BEGIN RSA PRIVATE KEY-----\\nMIIEowIBAAKCAQEAx7Hq2vN9pLzKjW3mR8tYbQ4cF6sD1eA0uG5hJ2kL9oP3iX7n\\n-----END RSA PRIVATE KEY-----";
        let hostile = entry("")
            .replace("\" T \"", &format!("\"Use token {token}\""))
            .replace(
                "\"B\"",
                &format!("\"AWS key AKIAIOSFODNN7EXAMPLE; read /home/ann/.ssh/id_rsa\\n{pem}\""),
            )
            .replace(
                "\"trigger\":\"\"",
                &format!("\"trigger\":\"export GITHUB_TOKEN={token}\""),
            )
            .replace(
                "\"a\",\"a\",\"\"",
                &format!("\"{token}\",\"/home/ann/projects/shop\",\"/home/ann/repo/src\""),
            );
        let e = parse(&hostile).unwrap().remove(0).redacted(&ob);
        let all = format!(
            "{}|{}|{}|{}",
            e.title,
            e.body,
            e.trigger,
            e.entities.join("|")
        );
        for leaked in [
            token,
            "AKIAIOSFODNN7EXAMPLE",
            "MIIEowIBAAKCAQEA",
            "/home/ann",
        ] {
            assert!(!all.contains(leaked), "{leaked} in {all}");
        }
        assert!(e.title.starts_with("Use token [REDACTED:"), "{}", e.title);
        assert!(e.entities.contains(&"src".to_owned()), "{:?}", e.entities);
    }

    /// A model that echoes a secret into the field that breaks the format: the violation says
    /// where, and quotes the field redacted, never a byte of the secret (a token cut to the
    /// quote's length would no longer be recognised, so it is redacted whole first).
    #[test]
    fn a_violation_never_quotes_a_secret_the_model_echoed() {
        let github = "ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8";
        let aws = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEYZ";
        let aws_json = aws.replace('/', "\\/");
        for (bad, says) in [
            (
                entry("").replace("\"fact\"", &format!("\"{github}\"")),
                "entries[0].type \"[REDACTED:",
            ),
            (
                entry(&format!(",\"{aws_json}\":1")),
                "entries[0] has an unknown key \"[REDACTED:",
            ),
            (
                format!(r#"{{"entries":[],"{github}":true}}"#),
                "the reply has an unknown key \"[REDACTED:",
            ),
            (
                entry("").replace(r#""last":4"#, &format!(r#""last":4,"{github}":4"#)),
                "entries[0].evidence has an unknown key \"[REDACTED:",
            ),
            (
                entry("").replace(r#""first":3"#, &format!(r#""first":"{github}""#)),
                "entries[0].evidence.first is not an integer",
            ),
            (
                entry(&format!(",\"{aws_json}\":1,\"{aws_json}\":2")),
                "the key \"[REDACTED:",
            ),
        ] {
            let err = parse(&bad).unwrap_err().to_string();
            assert!(err.contains(says), "{bad}: {err}");
            for secret in [github, aws] {
                // No run of the secret long enough to mean anything (its prefix aside).
                let tail = &secret[secret.len() - 12..];
                assert!(!err.contains(tail), "{secret} in {err}");
            }
        }
    }

    #[test]
    fn evidence_outside_the_unit_is_not_taken_as_cited() {
        let mut e = parse(&entry("")).unwrap().remove(0);
        assert_eq!(evidence_range(&e, 2, 9), Some((3, 4)));
        assert_eq!(evidence_range(&e, 3, 4), Some((3, 4)));
        // Partly outside, wholly outside, reversed, negative, huge: none is bound.
        for (first, last) in [
            (3, 15),
            (1, 4),
            (50, 60),
            (99_999, 100_000),
            (7, 5),
            (-1, 0),
            (-5, -1),
            (i64::MIN, i64::MAX),
            (i64::MAX, i64::MAX),
        ] {
            e.first = first;
            e.last = last;
            assert_eq!(evidence_range(&e, 2, 9), None, "{first}..{last}");
        }
    }

    /// A refused citation is said as the model gave it, in words a reviewer reads right: a
    /// negative end is outside the session (never "records -5-3"), a reversed range backwards.
    #[test]
    fn a_refused_citation_is_said_honestly() {
        let mut e = parse(&entry("")).unwrap().remove(0);
        for (first, last, said) in [
            (
                -5,
                3,
                "the model cited records outside the session (it gave -5 to 3), ",
            ),
            (
                2,
                -1,
                "the model cited records outside the session (it gave 2 to -1), ",
            ),
            (7, 5, "the model cited records backwards (from 7 to 5), "),
            (50, 60, "the model cited records 50-60, "),
        ] {
            e.first = first;
            e.last = last;
            let note = out_of_unit_note(&e, 2, 9);
            assert!(note.starts_with(said), "{note}");
            assert!(
                note.contains("not within the records 2-9 it was shown"),
                "{note}"
            );
            assert!(!note.contains("--") && !note.contains(" -5-"), "{note}");
        }
    }
}

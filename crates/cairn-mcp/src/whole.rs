//! Counts from agents. JSON Schema's `integer` is any number without a fraction, so `5.0`
//! counts as `5`: some models write every number as a float, and the schema the tools announce
//! allows it. A fraction, a number out of the field's range and anything that is not a number
//! are refused with one message naming the field and its real range, whichever way the value
//! was wrong.

use serde::de::{Deserialize, Deserializer, Error, Unexpected};
use serde_json::{Number, Value};

/// `#[serde(default, deserialize_with = "whole::limit::<1, 50, _>")]` on an `Option<u32>`
/// `limit`: a page size from `MIN` to `MAX`.
pub fn limit<'de, const MIN: u32, const MAX: u32, D: Deserializer<'de>>(
    d: D,
) -> Result<Option<u32>, D::Error> {
    within(d, "limit", MIN, MAX)
}

/// The same for `max_tokens`.
pub fn max_tokens<'de, const MIN: u32, const MAX: u32, D: Deserializer<'de>>(
    d: D,
) -> Result<Option<u32>, D::Error> {
    within(d, "max_tokens", MIN, MAX)
}

/// What a field takes, as an error says it.
pub fn expected(field: &str, min: u32, max: u32) -> String {
    format!("`{field}` to be a whole number from {min} to {max}")
}

fn within<'de, D: Deserializer<'de>>(
    d: D,
    field: &str,
    min: u32,
    max: u32,
) -> Result<Option<u32>, D::Error> {
    let expected = expected(field, min, max);
    let expected = expected.as_str();
    let n = match Option::<Value>::deserialize(d)? {
        None | Some(Value::Null) => return Ok(None),
        Some(Value::Number(n)) => n,
        Some(other) => return Err(D::Error::invalid_type(unexpected(&other), &expected)),
    };
    match count(&n) {
        Some(c) if (min..=max).contains(&c) => Ok(Some(c)),
        _ => Err(D::Error::invalid_value(shown(&n), &expected)),
    }
}

/// `n` as a count when it is a whole number within `u32`.
fn count(n: &Number) -> Option<u32> {
    if let Some(u) = n.as_u64() {
        return u32::try_from(u).ok();
    }
    if n.is_i64() {
        return None;
    }
    let f = n.as_f64()?;
    // Whole and in range: the conversion is exact.
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    (f.fract() == 0.0 && (0.0..=f64::from(u32::MAX)).contains(&f)).then_some(f as u32)
}

fn shown(n: &Number) -> Unexpected<'static> {
    if let Some(u) = n.as_u64() {
        Unexpected::Unsigned(u)
    } else if let Some(i) = n.as_i64() {
        Unexpected::Signed(i)
    } else {
        Unexpected::Float(n.as_f64().unwrap_or(f64::NAN))
    }
}

fn unexpected(v: &Value) -> Unexpected<'_> {
    match v {
        Value::Bool(b) => Unexpected::Bool(*b),
        Value::String(s) => Unexpected::Str(s),
        Value::Array(_) => Unexpected::Seq,
        Value::Object(_) => Unexpected::Map,
        Value::Null | Value::Number(_) => Unexpected::Other("this value"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;
    use serde_json::json;

    #[derive(Debug, Deserialize)]
    struct Args {
        #[serde(default, deserialize_with = "super::limit::<1, 50, _>")]
        limit: Option<u32>,
    }

    fn parsed(v: Value) -> Result<Option<u32>, String> {
        serde_json::from_value::<Args>(v)
            .map(|a| a.limit)
            .map_err(|e| e.to_string())
    }

    #[test]
    fn whole_numbers_in_range_pass_in_either_notation_and_the_rest_is_refused_alike() {
        assert_eq!(parsed(json!({})), Ok(None));
        assert_eq!(parsed(json!({ "limit": null })), Ok(None));
        assert_eq!(parsed(json!({ "limit": 5 })), Ok(Some(5)));
        assert_eq!(parsed(json!({ "limit": 5.0 })), Ok(Some(5)));
        assert_eq!(parsed(json!({ "limit": 1 })), Ok(Some(1)));
        assert_eq!(parsed(json!({ "limit": 50.0 })), Ok(Some(50)));
        // Every wrong value, below, above, a fraction or no number, says the one real range.
        for (bad, said) in [
            (json!(0), "integer `0`"),
            (json!(0.0), "floating point `0.0`"),
            (json!(51), "integer `51`"),
            (json!(5.5), "floating point `5.5`"),
            (json!(-1), "integer `-1`"),
            (json!(-1.0), "floating point `-1.0`"),
            (json!(4294967296u64), "integer `4294967296`"),
            (json!(1e300), "floating point"),
            (json!("ten"), "invalid type: string \"ten\""),
            (json!(true), "invalid type: boolean"),
            (json!([1]), "invalid type: sequence"),
        ] {
            let err = parsed(json!({ "limit": bad })).unwrap_err();
            assert!(
                err.contains(said) && err.contains("`limit` to be a whole number from 1 to 50"),
                "{bad}: {err}"
            );
        }
    }
}

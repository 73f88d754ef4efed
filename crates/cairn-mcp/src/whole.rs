//! Counts from agents. JSON Schema's `integer` is any number without a fraction, so `5.0`
//! counts as `5`: some models write every number as a float, and the schema the tools announce
//! allows it. A fraction, a negative number, a count past `u32` and anything that is not a
//! number are refused, each saying what was expected.

use serde::de::{Deserialize, Deserializer, Error, Unexpected};
use serde_json::{Number, Value};

const EXPECTED: &str = "a whole number from 0 to 4294967295";

/// `#[serde(default, deserialize_with = "whole::opt_u32")]` on an `Option<u32>` field.
pub fn opt_u32<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u32>, D::Error> {
    match Option::<Value>::deserialize(d)? {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) => count(&n).map(Some),
        Some(other) => Err(D::Error::invalid_type(unexpected(&other), &EXPECTED)),
    }
}

fn count<E: Error>(n: &Number) -> Result<u32, E> {
    if let Some(u) = n.as_u64() {
        return u32::try_from(u).map_err(|_| E::invalid_value(Unexpected::Unsigned(u), &EXPECTED));
    }
    if let Some(i) = n.as_i64() {
        return Err(E::invalid_value(Unexpected::Signed(i), &EXPECTED));
    }
    let f = n.as_f64().unwrap_or(f64::NAN);
    if f.fract() == 0.0 && (0.0..=f64::from(u32::MAX)).contains(&f) {
        // Whole and in range: the conversion is exact.
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        return Ok(f as u32);
    }
    Err(E::invalid_value(Unexpected::Float(f), &EXPECTED))
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
        #[serde(default, deserialize_with = "opt_u32")]
        limit: Option<u32>,
    }

    fn limit(v: Value) -> Result<Option<u32>, String> {
        serde_json::from_value::<Args>(v)
            .map(|a| a.limit)
            .map_err(|e| e.to_string())
    }

    #[test]
    fn whole_numbers_pass_in_either_notation_and_the_rest_is_refused() {
        assert_eq!(limit(json!({})), Ok(None));
        assert_eq!(limit(json!({ "limit": null })), Ok(None));
        assert_eq!(limit(json!({ "limit": 5 })), Ok(Some(5)));
        assert_eq!(limit(json!({ "limit": 5.0 })), Ok(Some(5)));
        assert_eq!(limit(json!({ "limit": 0.0 })), Ok(Some(0)));
        assert_eq!(limit(json!({ "limit": 4294967295.0 })), Ok(Some(u32::MAX)));
        for (bad, said) in [
            (json!(5.5), "floating point `5.5`"),
            (json!(-1), "integer `-1`"),
            (json!(-1.0), "floating point `-1.0`"),
            (json!(4294967296u64), "integer `4294967296`"),
            (json!(1e300), "floating point"),
            (json!("ten"), "invalid type: string \"ten\""),
            (json!(true), "invalid type: boolean"),
            (json!([1]), "invalid type: sequence"),
        ] {
            let err = limit(json!({ "limit": bad })).unwrap_err();
            assert!(err.contains(said) && err.contains(EXPECTED), "{bad}: {err}");
        }
    }
}

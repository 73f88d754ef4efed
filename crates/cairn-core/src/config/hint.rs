//! A hint for a key `config.toml` does not know: the known key it most likely means. The file
//! stays strict (an unknown key still stops it loading, so a typo never silently does nothing);
//! the message only says which key to write instead, where every command and `doctor` show it.

/// `; did you mean `x`? (…)` for serde's "unknown field `y`, expected one of `x`, …" message
/// (`message` is toml's, which carries serde's), when one known key is close enough to `y`.
pub(super) fn unknown_key(message: &str) -> Option<String> {
    let rest = message.split("unknown field `").nth(1)?;
    let (typed, rest) = rest.split_once('`')?;
    let expected = rest.split_once("expected")?.1;
    let known: Vec<&str> = expected.split('`').skip(1).step_by(2).collect();
    let best = closest(typed, &known)?;
    let how = match best {
        "timeout_secs" => " (whole seconds, e.g. timeout_secs = 600)",
        "timeout" => " (a duration, e.g. timeout = \"10m\")",
        _ => "",
    };
    Some(format!("; did you mean `{best}`{how}?"))
}

/// The known key `typed` most likely means: one that is it with a part added or left out
/// (`timeout` for `timeout_secs`, and back), else the nearest by edit distance when that is at
/// most a third of its length (at least 1).
fn closest<'a>(typed: &str, known: &[&'a str]) -> Option<&'a str> {
    let typed_l = typed.to_ascii_lowercase().replace('-', "_");
    let part_of = |k: &str| {
        k.strip_prefix(typed_l.as_str())
            .is_some_and(|r| r.starts_with('_'))
            || typed_l.strip_prefix(k).is_some_and(|r| r.starts_with('_'))
    };
    if let Some(k) = known.iter().find(|k| part_of(k) || **k == typed_l) {
        return Some(k);
    }
    let limit = (typed_l.chars().count() / 3).max(1);
    known
        .iter()
        .map(|k| (distance(&typed_l, k), *k))
        .filter(|(d, _)| *d <= limit)
        .min_by_key(|(d, _)| *d)
        .map(|(_, k)| k)
}

/// Edits (insert, delete, replace, swap two neighbours) turning `a` into `b`.
fn distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in d[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut best = (d[i - 1][j] + 1)
                .min(d[i][j - 1] + 1)
                .min(d[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(d[i - 2][j - 2] + 1);
            }
            d[i][j] = best;
        }
    }
    d[a.len()][b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn msg(typed: &str, known: &[&str]) -> String {
        let list: Vec<String> = known.iter().map(|k| format!("`{k}`")).collect();
        format!(
            "unknown field `{typed}`, expected one of {}",
            list.join(", ")
        )
    }

    const INSIGHTS: &[&str] = &[
        "endpoint",
        "model",
        "api_key_env",
        "allow_http",
        "timeout_secs",
        "max_prompt_chars",
    ];
    const SERVER: &[&str] = &["endpoint", "api_key_env", "timeout", "allow_http"];

    #[test]
    fn a_timeout_key_of_the_other_table_names_this_tables_own() {
        assert_eq!(
            unknown_key(&msg("timeout", INSIGHTS)).as_deref(),
            Some("; did you mean `timeout_secs` (whole seconds, e.g. timeout_secs = 600)?")
        );
        assert_eq!(
            unknown_key(&msg("timeout_secs", SERVER)).as_deref(),
            Some("; did you mean `timeout` (a duration, e.g. timeout = \"10m\")?")
        );
    }

    #[test]
    fn a_typo_names_the_nearest_key_and_a_stranger_none() {
        assert_eq!(
            unknown_key(&msg("modle", INSIGHTS)).as_deref(),
            Some("; did you mean `model`?")
        );
        assert_eq!(
            unknown_key(&msg("api-key-env", INSIGHTS)).as_deref(),
            Some("; did you mean `api_key_env`?")
        );
        assert_eq!(unknown_key(&msg("colour", INSIGHTS)), None);
        assert_eq!(unknown_key("expected a string"), None);
        // serde's shorter lists: one key, or two.
        assert_eq!(
            unknown_key("unknown field `dir`, expected `dirs`").as_deref(),
            Some("; did you mean `dirs`?")
        );
        assert_eq!(
            unknown_key("unknown field `enabld`, expected `dirs` or `enabled`").as_deref(),
            Some("; did you mean `enabled`?")
        );
    }
}

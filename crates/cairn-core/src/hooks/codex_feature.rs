//! Codex runs the hooks in `hooks.json` only with `codex_hooks = true` under `[features]` in
//! its `config.toml` (beside `hooks.json`). Installing Cairn's hook turns the feature on, so
//! nothing is left to edit by hand; a person who set it to `false` is asked, not overruled.
//!
//! The config is the user's: only that one key changes (toml_edit keeps every other byte), the
//! result must parse and hold everything it held before, and the write gets the hook
//! settings' care (a backup, a retry when Codex rewrites the file meanwhile).
//!
//! The key Cairn sets carries a comment saying so ([`MARK`]): an uninstall that leaves
//! `hooks.json` without hooks takes back what Cairn set ([`turned_off`]), and only that; a key
//! a person set (or an older Cairn, which wrote no mark) stays, and the uninstall says why.

use std::path::Path;

use super::settings;
use crate::error::{Error, Result};

/// Where the feature stands in a Codex `config.toml`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Feature {
    On,
    /// Not set: Codex's default, off.
    Unset,
    /// Set to `false` (or to something that is not `true`) by a person.
    Off,
    /// The file could not be read as TOML: why.
    Unreadable(String),
}

/// The feature's key under `[features]`.
const KEY: &str = "codex_hooks";

/// The comment after the key when Cairn set it: how an uninstall knows the key is Cairn's to
/// take back.
pub const MARK: &str = "# set by `cairn hooks install`; `cairn hooks uninstall` takes it back";

/// [`MARK`] when Cairn added the `[features]` table too: an uninstall takes that back as well
/// when it holds nothing else, and leaves a table the person wrote.
const MARK_TABLE: &str =
    "# set by `cairn hooks install`, with [features]; `cairn hooks uninstall` takes both back";

/// Where the feature stands in `text`, the config at `path`.
pub fn state(path: &Path, text: &str) -> Feature {
    let table = match text.parse::<toml::Table>() {
        Ok(t) => t,
        Err(e) => {
            return Feature::Unreadable(format!(
                "{} is not valid TOML ({})",
                path.display(),
                crate::text::one_line(e.message(), 200)
            ));
        }
    };
    match table.get("features") {
        None => Feature::Unset,
        Some(toml::Value::Table(features)) => match features.get(KEY) {
            None => Feature::Unset,
            Some(toml::Value::Boolean(true)) => Feature::On,
            Some(_) => Feature::Off,
        },
        Some(_) => Feature::Unreadable(format!(
            "`features` in {} is not a table, so Codex's `{KEY}` cannot be set under it; make it a [features] table with `{KEY} = true`",
            path.display()
        )),
    }
}

/// Why Codex will not run a hook installed beside the config at `path`, or none when it will.
pub fn not_running(path: &Path) -> Option<String> {
    match settings::read_text(path) {
        Ok(text) => why_not(path, &state(path, &text)),
        Err(e) => Some(e.to_string()),
    }
}

/// What `feature`, the state of the config at `path`, means for Cairn's hook: none when Codex
/// runs it.
pub fn why_not(path: &Path, feature: &Feature) -> Option<String> {
    match feature {
        Feature::On => None,
        Feature::Unset => Some(format!(
            "Codex runs hooks only with `{KEY} = true` under [features] in {}; run `cairn hooks install --agent codex` to turn it on",
            path.display()
        )),
        Feature::Off => Some(format!(
            "Codex hooks are switched off in {} (`{KEY}` under [features] is not true); set it to true for Cairn's hook to run",
            path.display()
        )),
        Feature::Unreadable(why) => Some(why.clone()),
    }
}

/// `text` with `codex_hooks = true` under `[features]` and nothing else changed; an error when
/// that cannot be done (then the person sets it by hand).
pub fn turned_on(path: &Path, text: &str) -> Result<String> {
    let by_hand = || {
        Error::Invalid(format!(
            "could not set `{KEY} = true` under [features] in {} without changing the rest of it; set it by hand",
            path.display()
        ))
    };
    let mut doc = text
        .parse::<toml_edit::DocumentMut>()
        .map_err(|_| by_hand())?;
    let mark = if doc.contains_key("features") {
        MARK
    } else {
        doc["features"] = toml_edit::table();
        MARK_TABLE
    };
    // Marked where a comment can follow the key: not in an inline table (`features = { … }`),
    // which ends on its line.
    let marked = doc["features"].is_table();
    let features = doc["features"].as_table_like_mut().ok_or_else(by_hand)?;
    features.insert(KEY, toml_edit::value(true));
    if marked && let Some(value) = features.get_mut(KEY).and_then(|k| k.as_value_mut()) {
        value.decor_mut().set_suffix(format!(" {mark}"));
    }
    let mut after = doc.to_string();
    // The lines toml_edit adds end in `\n`: a file of `\r\n` lines keeps them, and its BOM.
    if text.contains("\r\n") {
        after = after.replace("\r\n", "\n").replace('\n', "\r\n");
    }
    if text.starts_with('\u{feff}') && !after.starts_with('\u{feff}') {
        after.insert(0, '\u{feff}');
    }
    // What it held before, and the key: nothing else.
    let mut expected = text
        .trim_start_matches('\u{feff}')
        .parse::<toml::Table>()
        .map_err(|_| by_hand())?;
    let entry = expected
        .entry("features")
        .or_insert_with(|| toml::Value::Table(toml::Table::new()));
    entry
        .as_table_mut()
        .ok_or_else(by_hand)?
        .insert(KEY.to_owned(), toml::Value::Boolean(true));
    let got = after
        .trim_start_matches('\u{feff}')
        .parse::<toml::Table>()
        .map_err(|_| by_hand())?;
    if got != expected || state(path, &after) != Feature::On {
        return Err(by_hand());
    }
    Ok(after)
}

/// Whether the config's `codex_hooks` is the one Cairn set: `true`, with [`MARK`] after it.
pub fn set_by_cairn(text: &str) -> bool {
    cairns_mark(text).is_some()
}

/// The mark after the `codex_hooks = true` Cairn set, when it is there.
fn cairns_mark(text: &str) -> Option<&'static str> {
    let doc = text
        .trim_start_matches('\u{feff}')
        .parse::<toml_edit::DocumentMut>()
        .ok()?;
    let value = doc
        .get("features")
        .and_then(toml_edit::Item::as_table)
        .and_then(|features| features.get(KEY))
        .and_then(toml_edit::Item::as_value)
        .filter(|value| value.as_bool() == Some(true))?;
    let suffix = value.decor().suffix()?.as_str()?.trim();
    [MARK, MARK_TABLE].into_iter().find(|mark| *mark == suffix)
}

/// `text` without the `codex_hooks = true` Cairn set ([`set_by_cairn`]), and without the
/// `[features]` table Cairn added with it ([`MARK_TABLE`]) when that holds nothing else (no
/// key, no comment). An error when that cannot be done leaving the rest as it was.
pub fn turned_off(path: &Path, text: &str) -> Result<String> {
    let by_hand = || {
        Error::Invalid(format!(
            "could not take `{KEY} = true` out of [features] in {} without changing the rest of it; remove it by hand if no other hook needs it",
            path.display()
        ))
    };
    let bom = text.starts_with('\u{feff}');
    let body = text.trim_start_matches('\u{feff}');
    let Some(mark) = cairns_mark(body) else {
        return Err(by_hand());
    };
    let mut doc = body
        .parse::<toml_edit::DocumentMut>()
        .map_err(|_| by_hand())?;
    let features = doc["features"].as_table_mut().ok_or_else(by_hand)?;
    features.remove(KEY);
    let commented = |decor: &toml_edit::Decor| {
        [decor.prefix(), decor.suffix()]
            .into_iter()
            .flatten()
            .any(|raw| raw.as_str().is_none_or(|s| s.contains('#')))
    };
    if mark == MARK_TABLE && features.is_empty() && !commented(features.decor()) {
        doc.remove("features");
    }
    let mut after = doc.to_string();
    if text.contains("\r\n") {
        after = after.replace("\r\n", "\n").replace('\n', "\r\n");
    }
    if bom && !after.is_empty() {
        after.insert(0, '\u{feff}');
    }
    // What it held before without the key (and an emptied table): nothing else.
    let mut expected = body.parse::<toml::Table>().map_err(|_| by_hand())?;
    if let Some(toml::Value::Table(features)) = expected.get_mut("features") {
        features.remove(KEY);
        if features.is_empty() && !doc.contains_key("features") {
            expected.remove("features");
        }
    }
    let got = after
        .trim_start_matches('\u{feff}')
        .parse::<toml::Table>()
        .map_err(|_| by_hand())?;
    if got != expected || state(path, &after) != Feature::Unset {
        return Err(by_hand());
    }
    Ok(after)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn on(text: &str) -> String {
        turned_on(Path::new("config.toml"), text).expect("turned on")
    }

    #[test]
    fn the_key_is_added_and_nothing_else_moves() {
        let text = "# my settings\nmodel = \"o3\"  # fast\n\n[features]\nweb_search = true\n\n[mcp_servers.x]\ncommand = \"x\"\n";
        let after = on(text);
        assert!(
            after.starts_with("# my settings\nmodel = \"o3\"  # fast\n"),
            "{after}"
        );
        assert!(
            after.contains(&format!(
                "[features]\nweb_search = true\ncodex_hooks = true {MARK}\n"
            )),
            "{after}"
        );
        assert!(
            after.contains("[mcp_servers.x]\ncommand = \"x\"\n"),
            "{after}"
        );
        assert_eq!(state(Path::new("c"), &after), Feature::On);
    }

    /// What an install set, an uninstall takes back to the byte: the key, and a `[features]`
    /// table the install added. A key without Cairn's mark (a person's, an older Cairn's) is
    /// not Cairn's to take, nor a `[features]` that holds anything else or a comment.
    #[test]
    fn only_the_key_cairn_set_is_taken_back() {
        let p = Path::new("config.toml");
        for text in [
            "",
            "model = \"o3\"\n",
            "# my settings\nmodel = \"o3\"  # fast\n\n[features]\nweb_search = true\n\n[mcp_servers.x]\ncommand = \"x\"\n",
            "[features]\n# mine\n\n[x]\ny = 1\n",
            "features.web_search = true\n",
        ] {
            let after = on(text);
            assert!(set_by_cairn(&after), "{after}");
            assert_eq!(turned_off(p, &after).unwrap(), text, "{after}");
        }
        for theirs in [
            "[features]\ncodex_hooks = true\n",
            "[features]\ncodex_hooks = true # mine\n",
            &format!("[features]\ncodex_hooks = false {MARK}\n"),
            &format!("[features]\ncodex_hooks = true {MARK} and more\n"),
            "features = { codex_hooks = true }\n",
        ] {
            assert!(!set_by_cairn(theirs), "{theirs}");
            assert!(turned_off(p, theirs).is_err(), "{theirs}");
        }
        // In an inline table no comment can follow the key: set, unmarked, left to the person.
        let inline = on("features = { web_search = true }\n");
        assert!(!set_by_cairn(&inline), "{inline}");
    }

    #[test]
    fn an_empty_or_missing_file_gets_a_features_table() {
        let after = on("");
        assert_eq!(state(Path::new("c"), &after), Feature::On);
        let after = on("model = \"o3\"\n");
        assert!(after.starts_with("model = \"o3\"\n"), "{after}");
        assert!(after.contains("[features]"), "{after}");
    }

    #[test]
    fn an_inline_or_dotted_features_table_is_kept_in_its_form() {
        let after = on("features = { web_search = true }\n");
        assert_eq!(state(Path::new("c"), &after), Feature::On);
        assert!(after.contains("web_search = true"), "{after}");
        let after = on("features.web_search = true\n");
        assert_eq!(state(Path::new("c"), &after), Feature::On);
        assert!(after.contains("features.web_search = true"), "{after}");
    }

    #[test]
    fn crlf_lines_and_a_bom_are_kept() {
        let text = "\u{feff}model = \"o3\"\r\n[features]\r\nweb_search = true\r\n";
        let after = on(text);
        assert!(after.starts_with("\u{feff}model = \"o3\"\r\n"), "{after:?}");
        assert!(
            !after.replace("\r\n", "").contains('\n'),
            "no bare LF: {after:?}"
        );
        assert!(
            after.contains(&format!("codex_hooks = true {MARK}\r\n")),
            "{after:?}"
        );
        // Taken back: the bytes before.
        assert_eq!(turned_off(Path::new("c"), &after).unwrap(), text);
    }

    #[test]
    fn states_and_hostile_configs() {
        let p = Path::new("c");
        assert_eq!(state(p, ""), Feature::Unset);
        assert_eq!(state(p, "[features]\ncodex_hooks = true\n"), Feature::On);
        assert_eq!(state(p, "[features]\ncodex_hooks = false\n"), Feature::Off);
        assert_eq!(
            state(p, "[features]\ncodex_hooks = \"yes\"\n"),
            Feature::Off
        );
        assert!(matches!(state(p, "[features\n"), Feature::Unreadable(_)));
        // `features` that is no table cannot hold the key: refused, not replaced.
        assert!(matches!(
            state(p, "features = \"all\"\n"),
            Feature::Unreadable(_)
        ));
        assert!(matches!(
            state(p, "[[features]]\nx = 1\n"),
            Feature::Unreadable(_)
        ));
        assert!(turned_on(p, "features = \"all\"\n").is_err());
        assert!(turned_on(p, "[[features]]\nx = 1\n").is_err());
        assert!(turned_on(p, "not toml [\n").is_err());
    }
}

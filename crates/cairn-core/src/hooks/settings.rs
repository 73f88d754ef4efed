//! An agent's settings file as text: where Cairn's hook goes in it ([`with_hook`]), whether it is
//! there ([`runs`]), and what of it a person may be shown ([`hide_secrets`]).

use std::path::Path;

use serde_json::{Map, Value, json};

use super::is_cairn_hook_command;
use super::json_text::{self, Syntax};
use crate::archive::Agent;
use crate::error::{Error, Result};

/// Why the argument after a flag such as `--password` or `--api-key` is hidden.
pub(super) const SECRET_ARGUMENT: &str = "secret-argument";

/// Whether a command-line argument is a flag whose value is a secret (`--password`,
/// `--api-key`, `--token`; not `--token=x`, whose value the redactor reads in the word).
pub(super) fn names_a_secret(arg: &str) -> bool {
    arg.starts_with('-')
        && !arg.contains('=')
        && crate::archive::redact::is_sensitive_key(arg.trim_start_matches('-'))
}

/// Settings and MCP configs larger than this are refused (Claude Code's own `~/.claude.json`
/// stays far below it): reading and rewriting one is not something an install should do.
const MAX_CONFIG_BYTES: u64 = 32 << 20;

/// A settings file's or MCP config's text ("" when there is none). Only a regular file is
/// read, and no more than [`MAX_CONFIG_BYTES`] of it: a FIFO would hang `doctor` and the
/// desktop's Settings waiting for a writer, and `/dev/zero` would fill the memory.
pub(super) fn read_text(path: &Path) -> Result<String> {
    use crate::atomic::Unread;
    let bytes = match crate::atomic::read_capped(path, MAX_CONFIG_BYTES) {
        Ok(bytes) => bytes,
        Err(Unread::Missing) => return Ok(String::new()),
        Err(Unread::NotRegular) => {
            return Err(Error::Invalid(format!(
                "{} is not a regular file; move it aside, then run the command again",
                path.display()
            )));
        }
        Err(Unread::TooLarge(_)) => {
            return Err(Error::Invalid(format!(
                "{} is larger than {} MB, more than Cairn will edit; make the change by hand",
                path.display(),
                MAX_CONFIG_BYTES >> 20
            )));
        }
        Err(Unread::Io(source)) => {
            return Err(Error::Read {
                path: path.to_owned(),
                source,
            });
        }
    };
    String::from_utf8(bytes).map_err(|_| {
        Error::Invalid(format!(
            "{} is not UTF-8 text; fix it or move it aside, then run the command again",
            path.display()
        ))
    })
}

/// The settings file's values and where they lie, `None` for an empty file.
pub(super) fn parse_settings(path: &Path, text: &str) -> Result<Option<json_text::Node>> {
    parse_settings_as(path, text, Syntax::Json)
}

/// [`parse_settings`] for a file its agent reads as `syntax`: comments are taken where the agent
/// takes them, and refused, saying so, where it does not.
pub(super) fn parse_settings_as(
    path: &Path,
    text: &str,
    syntax: Syntax,
) -> Result<Option<json_text::Node>> {
    if text.trim().is_empty() {
        return Ok(None);
    }
    // Invisible in an editor, and no JSON reader the agents use takes it: named, or the person
    // looks for a fault at "line 1 column 1" that they cannot see.
    if text.starts_with('\u{feff}') {
        return Err(Error::Invalid(format!(
            "{} is not valid JSON: it starts with a byte-order mark (U+FEFF), which JSON does not allow; save it without one (UTF-8 without BOM), then run the command again",
            path.display()
        )));
    }
    let root = json_text::parse_as(text, syntax).map_err(|e| {
        let path = path.display();
        if let Some(at) = e
            .strip_prefix(json_text::UNCLOSED)
            .and_then(|at| at.parse::<usize>().ok())
        {
            let line = text[..at.min(text.len())].matches('\n').count() + 1;
            return Error::Invalid(format!(
                "{path} is not valid JSON: the `/*` comment on line {line} is never closed; close it with `*/` or take it out, then run the command again"
            ));
        }
        if syntax == Syntax::Json && json_text::parse_as(text, Syntax::Jsonc).is_ok() {
            return Error::Invalid(format!(
                "{path} is not valid JSON: it holds comments (`//` or `/* */`), which JSON does not allow; take them out (this agent's settings are plain JSON), then run the command again"
            ));
        }
        // serde_json's message says where (line and column) the file stops being JSON; with
        // comments blanked out, at the place it has in the file.
        let read = match syntax {
            Syntax::Json => text.into(),
            Syntax::Jsonc => json_text::blank(text),
        };
        let why = serde_json::from_str::<serde::de::IgnoredAny>(&read)
            .err()
            .map_or(e, |e| e.to_string());
        let with = if syntax == Syntax::Jsonc {
            " with comments"
        } else {
            ""
        };
        Error::Invalid(format!(
            "{path} is not valid JSON{with} ({why}); fix it or move it aside, then run the command again"
        ))
    })?;
    if !root.is_object() {
        return Err(Error::Invalid(format!(
            "{} must hold a JSON object",
            path.display()
        )));
    }
    Ok(Some(root))
}

/// The `command` strings of the handlers in an event's matcher groups.
fn commands(groups: &json_text::Node) -> impl Iterator<Item = &json_text::Node> {
    groups
        .elements()
        .unwrap_or_default()
        .iter()
        .filter_map(|group| group.get("hooks")?.elements())
        .flatten()
        .filter_map(|handler| handler.get("command"))
}

/// Whether the settings in `text` run, on each of `events`, a command `is` accepts. False for
/// settings that are empty or not JSON.
pub(super) fn runs(path: &Path, text: &str, events: &[&str], is: impl Fn(&str) -> bool) -> bool {
    let Ok(Some(root)) = parse_settings(path, text) else {
        return false;
    };
    events.iter().all(|event| {
        root.get("hooks")
            .and_then(|h| h.get(event))
            .is_some_and(|groups| commands(groups).any(|c| c.as_str(text).is_some_and(|c| is(&c))))
    })
}

/// The matcher group Cairn adds: every tool, one command.
fn group(command: &str) -> Value {
    json!({"hooks": [{"type": "command", "command": command}]})
}

/// `text` with Cairn's hook (`command`) on each of `events` and Cairn's hook for `agent` taken
/// off each of `drop`, or `None` when that is how it is already. Only what Cairn adds or takes
/// off changes: the rest of the file stays byte for byte as it was. A Cairn hook with another
/// path (the binary moved) is pointed at `command`.
pub(super) fn with_hook(
    path: &Path,
    text: &str,
    agent: Agent,
    command: &str,
    events: &[&str],
    drop: &[&str],
) -> Result<Option<String>> {
    // Cairn's hooks come off first: removals and additions found in one text can overlap
    // (taking off the only event in `hooks` empties the object the missing events go into).
    let current = without_hooks(path, text, agent, drop)?;
    let added = with_hook_added(path, &current, command, agent, events)?;
    Ok(added.or_else(|| (current != text).then(|| current.into_owned())))
}

/// `text` with every Cairn hook for `agent` taken off each of `events`, the rest of the file
/// byte for byte as it was. They come off one at a time, each from the text the last removal
/// left, as an event may hold Cairn's hook twice.
pub(super) fn without_hooks<'t>(
    path: &Path,
    text: &'t str,
    agent: Agent,
    events: &[&str],
) -> Result<std::borrow::Cow<'t, str>> {
    let mut current = std::borrow::Cow::Borrowed(text);
    loop {
        let Some(root) = parse_settings(path, &current)? else {
            break;
        };
        let Some(hooks) = root.get("hooks").filter(|h| h.is_object()) else {
            break;
        };
        let Some(edit) = events
            .iter()
            .find_map(|event| without_cairn(&current, hooks, event, agent))
        else {
            break;
        };
        current = json_text::apply(&current, vec![edit]).into();
    }
    Ok(current)
}

/// `after` (`before` with Cairn's hooks taken out) without its `hooks` object when taking
/// them out left it empty: the install added it, or it held Cairn's hooks alone. A `hooks`
/// that was empty before stays, as does one whose key is repeated (taking the last off would
/// uncover the one before it).
pub(super) fn without_emptied_hooks<'t>(
    path: &Path,
    before: &str,
    after: std::borrow::Cow<'t, str>,
) -> Result<std::borrow::Cow<'t, str>> {
    let members = |node: Option<&json_text::Node>| match node.map(|n| &n.kind) {
        Some(json_text::Kind::Object(m)) => Some(m.len()),
        _ => None,
    };
    let Some(root) = parse_settings(path, &after)? else {
        return Ok(after);
    };
    let json_text::Kind::Object(top) = &root.kind else {
        return Ok(after);
    };
    let was = parse_settings(path, before)?.and_then(|r| members(r.get("hooks")));
    let once = top.iter().filter(|(k, _, _)| k == "hooks").count() == 1;
    if members(root.get("hooks")) != Some(0) || was.is_none_or(|n| n == 0) || !once {
        return Ok(after);
    }
    let edit = top
        .iter()
        .position(|(k, _, _)| k == "hooks")
        .and_then(|at| json_text::remove(&root, at));
    Ok(match edit {
        Some(edit) => json_text::apply(&after, vec![edit]).into(),
        None => after,
    })
}

/// Whether the settings in `text` hold any hook command at all, on any event.
pub(super) fn any_hook(path: &Path, text: &str) -> bool {
    let Ok(Some(root)) = parse_settings(path, text) else {
        return false;
    };
    match root.get("hooks").map(|h| &h.kind) {
        Some(json_text::Kind::Object(events)) => events
            .iter()
            .any(|(_, _, groups)| commands(groups).next().is_some()),
        _ => false,
    }
}

/// `text` with Cairn's hook (`command`) on each of `events`, or `None` when it is there.
fn with_hook_added(
    path: &Path,
    text: &str,
    command: &str,
    agent: Agent,
    events: &[&str],
) -> Result<Option<String>> {
    // Every event's hooks, for a file (or a `hooks` object) that has none yet.
    let all_events = || -> Value {
        let hooks: Map<String, Value> = events
            .iter()
            .map(|e| (e.to_string(), json!([group(command)])))
            .collect();
        Value::Object(hooks)
    };
    let Some(root) = parse_settings(path, text)? else {
        let fresh = json!({ "hooks": all_events() });
        return Ok(Some(format!(
            "{}\n",
            serde_json::to_string_pretty(&fresh).unwrap_or_default()
        )));
    };
    let Some(hooks) = root.get("hooks") else {
        let edit = json_text::insert_members(text, &root, &[("hooks", all_events())]);
        return Ok(Some(json_text::apply(text, vec![edit])));
    };
    if !hooks.is_object() {
        return Err(Error::Invalid(format!(
            "`hooks` in {} must be an object",
            path.display()
        )));
    }
    let mut edits = Vec::new();
    let mut missing = Vec::new();
    for event in events {
        let Some(groups) = hooks.get(event) else {
            missing.push((*event, json!([group(command)])));
            continue;
        };
        if groups.elements().is_none() {
            return Err(Error::Invalid(format!(
                "`hooks.{event}` in {} must be an array",
                path.display()
            )));
        }
        let present: Vec<(&json_text::Node, String)> = commands(groups)
            .filter_map(|c| Some((c, c.as_str(text)?)))
            .collect();
        if present.iter().any(|(_, c)| c == command) {
            continue;
        }
        match present
            .iter()
            .find(|(_, c)| is_cairn_hook_command(c, agent))
        {
            Some((stale, _)) => edits.push(json_text::replace(stale, &json!(command))),
            None => edits.push(json_text::push_element(text, groups, &group(command))),
        }
    }
    if !missing.is_empty() {
        edits.push(json_text::insert_members(text, hooks, &missing));
    }
    Ok((!edits.is_empty()).then(|| json_text::apply(text, edits)))
}

/// The edit that takes the first Cairn hook for `agent` off `hooks[event]`: its handler, or its
/// matcher group when it is the group's only handler, or the whole event when that group is its
/// only one (the inverse of what an install adds).
fn without_cairn(
    text: &str,
    hooks: &json_text::Node,
    event: &str,
    agent: Agent,
) -> Option<json_text::Edit> {
    let json_text::Kind::Object(members) = &hooks.kind else {
        return None;
    };
    let at = members.iter().rposition(|(k, _, _)| k == event)?;
    let groups = &members[at].2;
    for (g, group) in groups.elements()?.iter().enumerate() {
        // A group of another shape holds no hook of Cairn's; the next may.
        let Some(handlers) = group.get("hooks").filter(|h| h.elements().is_some()) else {
            continue;
        };
        let Some(h) = handlers.elements()?.iter().position(|h| {
            h.get("command")
                .and_then(|c| c.as_str(text))
                .is_some_and(|c| is_cairn_hook_command(&c, agent))
        }) else {
            continue;
        };
        let group_members = match &group.kind {
            json_text::Kind::Object(m) => m.len(),
            _ => 0,
        };
        let only_handler = handlers.elements()?.len() == 1 && group_members == 1;
        // The event goes with its last group, unless its key is repeated: taking this one off
        // would uncover the one before it, which the agent does not read now.
        let once = members.iter().filter(|(k, _, _)| k == event).count() == 1;
        return match (only_handler, groups.elements()?.len()) {
            (true, 1) if once => json_text::remove(hooks, at),
            (true, _) => json_text::remove(groups, g),
            (false, _) => json_text::remove(handlers, h),
        };
    }
    None
}

/// What a person may see of a settings file: the values under any `env` key (the variables an
/// agent is started with: API keys, database URLs) and under secret-sounding keys
/// (`apiKey`, `Authorization`) are replaced by a marker, then the text goes through the
/// redactor. Lines keep their count, so a diff of two hidden texts lines up as the texts do.
pub(super) fn hide_secrets(text: &str) -> String {
    fn values(
        text: &str,
        node: &json_text::Node,
        hidden: Option<&'static str>,
        out: &mut Vec<json_text::Edit>,
    ) {
        match &node.kind {
            json_text::Kind::Object(members) => {
                for (key, _, value) in members {
                    let why = hidden.or_else(|| {
                        // Every value of `env` and of a server's `headers` (an API key under
                        // a custom name) is hidden, like a secret-sounding key's.
                        if key.eq_ignore_ascii_case("env")
                            || key.to_ascii_lowercase().contains("headers")
                        {
                            Some("env")
                        } else if crate::archive::redact::is_sensitive_key(key) {
                            Some(crate::archive::redact::SENSITIVE_KEY)
                        } else {
                            None
                        }
                    });
                    values(text, value, why, out);
                }
            }
            json_text::Kind::Array(items) => {
                let mut after_flag = false;
                for item in items {
                    let why = hidden.or(after_flag.then_some(SECRET_ARGUMENT));
                    values(text, item, why, out);
                    after_flag = matches!(item.kind, json_text::Kind::String)
                        && serde_json::from_str::<String>(&text[item.start..item.end])
                            .is_ok_and(|flag| names_a_secret(&flag));
                }
            }
            json_text::Kind::String | json_text::Kind::Scalar => {
                if let Some(rule) = hidden {
                    out.push(json_text::replace(
                        node,
                        &Value::String(crate::archive::redact::marker(rule)),
                    ));
                }
            }
        }
    }
    // Comments taken: a diff of a settings file with comments hides its values too.
    let masked = match json_text::parse_as(text, Syntax::Jsonc) {
        Ok(root) => {
            let mut edits = Vec::new();
            values(text, &root, None, &mut edits);
            json_text::apply(text, edits)
        }
        Err(_) => text.to_owned(),
    };
    let mut findings = Vec::new();
    crate::archive::redact::Redactor::global()
        .redact_text(&masked, "", &mut findings)
        .into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    const CMD: &str = "/usr/bin/cairn hook --agent claude";

    /// A password passed as the argument after its flag, and an API key in a server's
    /// `headers` under a name of its own, are hidden in a diff (both were shown).
    #[test]
    fn a_diff_hides_a_flags_secret_argument_and_every_header() {
        let text = r#"{"mcpServers": {"db": {"command": "pg", "args": ["--password", "Zq1plain", "--api-key", "Zq2", "--verbose", "kept", "--token=Zq3abcdefghijklmnopqrstuvwxyz012345"]},
  "web": {"url": "http://127.0.0.1:1", "headers": {"X-Custom-Auth": "Zq4"}}}}"#;
        let hidden = hide_secrets(text);
        assert!(
            !hidden.contains("Zq1") && !hidden.contains("Zq2") && !hidden.contains("Zq4"),
            "{hidden}"
        );
        assert!(
            hidden.contains("\"kept\"") && hidden.contains("\"--password\""),
            "{hidden}"
        );
    }

    fn settings(hooks: &str) -> String {
        format!("{{\n  \"hooks\": {{\n{hooks}\n  }}\n}}\n")
    }

    fn session_start(groups: usize) -> String {
        let group = format!(r#"{{"hooks": [{{"type": "command", "command": "{CMD}"}}]}}"#);
        format!("    \"SessionStart\": [{}]", vec![group; groups].join(", "))
    }

    /// Memory off (`hooks install --no-memory`) where Cairn's `SessionStart` hook is all
    /// `hooks` holds: its removal emptied the object the capture events were added to, and the
    /// two edits overlapped (a panic, or `{,"Stop": …}` when nothing stood before the `}`).
    #[test]
    fn memory_off_where_it_was_the_only_hook_leaves_json() {
        let path = Path::new("/h/.claude/settings.json");
        for text in [
            settings(&session_start(1)),
            settings(&session_start(1)).lines().map(str::trim).collect(),
            // Twice: both come off, else the install refuses (a Cairn hook left on).
            settings(&session_start(2)),
        ] {
            let after = with_hook(
                path,
                &text,
                Agent::Claude,
                CMD,
                &["Stop", "SessionEnd"],
                &["SessionStart"],
            )
            .unwrap()
            .unwrap();
            let v: Value = serde_json::from_str(&after).unwrap_or_else(|e| panic!("{e}: {after}"));
            let hooks = v["hooks"].as_object().unwrap();
            assert_eq!(
                hooks.keys().collect::<Vec<_>>(),
                ["Stop", "SessionEnd"],
                "{after}"
            );
            assert!(runs(path, &after, &["Stop", "SessionEnd"], |c| c == CMD));
        }
    }

    /// A `SessionStart` group whose `hooks` is not a list stopped the search for Cairn's hook
    /// after it: memory off left the hook on, and the install refused.
    #[test]
    fn a_group_of_another_shape_does_not_hide_cairns_hook() {
        let path = Path::new("/h/.claude/settings.json");
        let text = format!(
            r#"{{"hooks": {{"SessionStart": [{{"hooks": null}}, {{"hooks": [{{"type": "command", "command": "{CMD}"}}]}}]}}}}"#
        );
        let after = with_hook(path, &text, Agent::Claude, CMD, &[], &["SessionStart"])
            .unwrap()
            .unwrap();
        assert_eq!(after, r#"{"hooks": {"SessionStart": [{"hooks": null}]}}"#);
    }

    /// An event named twice: agents read the last, so taking that one off whole would make the
    /// first (here the user's own hook) run where it did not.
    #[test]
    fn a_repeated_event_is_emptied_not_uncovered() {
        let path = Path::new("/h/.claude/settings.json");
        let mine = r#"[{"hooks": [{"type": "command", "command": "echo mine"}]}]"#;
        let text = format!(
            r#"{{"hooks": {{"SessionStart": {mine}, "SessionStart": [{{"hooks": [{{"type": "command", "command": "{CMD}"}}]}}]}}}}"#
        );
        let after = with_hook(path, &text, Agent::Claude, CMD, &[], &["SessionStart"])
            .unwrap()
            .unwrap();
        assert_eq!(
            after,
            format!(r#"{{"hooks": {{"SessionStart": {mine}, "SessionStart": []}}}}"#)
        );
    }
}

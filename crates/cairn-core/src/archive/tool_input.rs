//! A tool call's input the way a person reads it in an export: an edit as a diff, a command as
//! its command line, anything else as JSON. The same reading as the desktop's `records.ts`.
//! Exports show it; `git::written` reads what an edit wrote from the same diff.

use serde_json::Value;

use super::store::RecordView;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sign {
    Add,
    Remove,
    Context,
    Hunk,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolInput {
    None,
    Command(String),
    Diff {
        path: Option<String>,
        lines: Vec<(Sign, String)>,
    },
    Json(String),
}

fn signed(text: &str, sign: Sign) -> Vec<(Sign, String)> {
    if text.is_empty() {
        return Vec::new();
    }
    text.strip_suffix('\n')
        .unwrap_or(text)
        .split('\n')
        .map(|l| (sign, l.to_owned()))
        .collect()
}

fn looks_like_patch(text: &str) -> bool {
    text.lines().any(|l| {
        l.starts_with("*** Begin Patch")
            || l.starts_with("--- ")
            || l.starts_with("diff --git")
            || l.starts_with("@@")
    })
}

fn patch_lines(patch: &str) -> Vec<(Sign, String)> {
    patch
        .split('\n')
        .map(|line| {
            if let Some(rest) = line.strip_prefix('+').filter(|_| !line.starts_with("+++")) {
                (Sign::Add, rest.to_owned())
            } else if let Some(rest) = line.strip_prefix('-').filter(|_| !line.starts_with("---")) {
                (Sign::Remove, rest.to_owned())
            } else if line.starts_with('@') || line.starts_with("***") {
                (Sign::Hunk, line.to_owned())
            } else {
                (
                    Sign::Context,
                    line.strip_prefix(' ').unwrap_or(line).to_owned(),
                )
            }
        })
        .collect()
}

/// How `record`'s tool input reads.
pub fn read(record: &RecordView) -> ToolInput {
    read_parts(
        record.tool_input.as_deref(),
        record.tool_kind.as_deref(),
        &record.file_paths,
    )
}

/// [`read`] from the record's parts: its tool input (JSON text), tool kind and file paths.
pub fn read_parts(
    tool_input: Option<&str>,
    tool_kind: Option<&str>,
    file_paths: &[String],
) -> ToolInput {
    let Some(raw) = tool_input else {
        return ToolInput::None;
    };
    let input: Value = serde_json::from_str(raw).unwrap_or_else(|_| Value::String(raw.to_owned()));
    let fields = match &input {
        Value::String(s) if looks_like_patch(s) => {
            return ToolInput::Diff {
                path: None,
                lines: patch_lines(s),
            };
        }
        Value::String(s) => return ToolInput::Json(s.clone()),
        Value::Object(map) => map,
        Value::Null => return ToolInput::None,
        other => return ToolInput::Json(other.to_string()),
    };
    let s = |k: &str| fields.get(k).and_then(Value::as_str);
    let path = s("file_path")
        .or_else(|| s("path"))
        .map(str::to_owned)
        .or_else(|| file_paths.first().cloned());
    if s("old_string").is_some() || s("new_string").is_some() {
        let mut lines = signed(s("old_string").unwrap_or(""), Sign::Remove);
        lines.extend(signed(s("new_string").unwrap_or(""), Sign::Add));
        return ToolInput::Diff { path, lines };
    }
    if let Some(edits) = fields.get("edits").and_then(Value::as_array) {
        let mut lines = Vec::new();
        for e in edits {
            let g = |k: &str| e.get(k).and_then(Value::as_str).unwrap_or("");
            lines.push((Sign::Hunk, "…".to_owned()));
            lines.extend(signed(g("old_string"), Sign::Remove));
            lines.extend(signed(g("new_string"), Sign::Add));
        }
        return ToolInput::Diff { path, lines };
    }
    if tool_kind == Some("file_edit")
        && let Some(content) = s("content")
    {
        return ToolInput::Diff {
            path,
            lines: signed(content, Sign::Add),
        };
    }
    for k in ["patch", "input"] {
        if let Some(text) = s(k).filter(|t| looks_like_patch(t)) {
            return ToolInput::Diff {
                path,
                lines: patch_lines(text),
            };
        }
    }
    let command = fields.get("command").or_else(|| fields.get("cmd"));
    let argv: Option<Vec<String>> = match command {
        Some(Value::String(c)) => Some(vec![c.clone()]),
        Some(Value::Array(a)) => Some(
            a.iter()
                .map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_owned))
                .collect(),
        ),
        _ => None,
    };
    if let Some(argv) = argv {
        if let Some(p) = argv.iter().find(|a| looks_like_patch(a)) {
            return ToolInput::Diff {
                path,
                lines: patch_lines(p),
            };
        }
        return ToolInput::Command(argv.join(" "));
    }
    ToolInput::Json(serde_json::to_string_pretty(&input).unwrap_or_else(|_| raw.to_owned()))
}

/// The diff as unified-diff text (`+`, `-`, ` ` and hunk lines).
pub fn diff_text(lines: &[(Sign, String)]) -> String {
    let mut out = String::new();
    for (sign, text) in lines {
        match sign {
            Sign::Add => out.push('+'),
            Sign::Remove => out.push('-'),
            Sign::Context => out.push(' '),
            Sign::Hunk => {}
        }
        out.push_str(text);
        out.push('\n');
    }
    out
}

/// A record's heading: "User", "Assistant", the tool's name, "Result of Bash", "Reasoning", ….
pub fn heading(r: &RecordView) -> String {
    match r.kind.as_str() {
        "message" => match (r.role.as_deref(), r.prompt_source.as_deref()) {
            (Some("user"), Some("system_injected")) => "Injected prompt".to_owned(),
            (Some("user"), Some("spawned_agent")) => "Prompt from parent agent".to_owned(),
            (Some("user"), _) => "User".to_owned(),
            (Some("assistant"), _) => "Assistant".to_owned(),
            (Some(role), _) => role.to_owned(),
            (None, _) => "Message".to_owned(),
        },
        "tool_call" => r
            .tool_name
            .clone()
            .unwrap_or_else(|| "Tool call".to_owned()),
        "tool_result" => r
            .tool_name
            .as_deref()
            .map_or_else(|| "Tool result".to_owned(), |t| format!("Result of {t}")),
        "reasoning" => "Reasoning".to_owned(),
        "event" if r.is_compaction => "Compaction summary".to_owned(),
        "event" => "Event".to_owned(),
        other => other.to_owned(),
    }
}

/// "exit 1", "failed", or None when nothing went wrong (a result that succeeded, or one
/// without an outcome).
pub fn outcome(r: &RecordView) -> Option<String> {
    match (r.exit_code, r.outcome.as_deref()) {
        (Some(code), _) if code != 0 => Some(format!("exit {code}")),
        (_, Some(o)) if o != crate::archive::Outcome::Succeeded.as_str() => Some(o.to_owned()),
        _ => None,
    }
}

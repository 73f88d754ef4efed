//! An export as Markdown that reads well pasted into a pull request: a header, one section per
//! turn, messages as they were written, tool calls and their output folded in `<details>`,
//! edits as `diff` blocks, and a closing note of what was left out.

use std::fmt::Write as _;

use super::tool_input::{self, ToolInput};
use super::{Document, RecordView};

/// A code fence longer than any backtick run in `text`, so the text cannot close it.
fn fence(text: &str) -> String {
    let mut longest = 0;
    let mut run = 0;
    for c in text.chars() {
        if c == '`' {
            run += 1;
            longest = longest.max(run);
        } else {
            run = 0;
        }
    }
    "`".repeat((longest + 1).max(3))
}

fn block(out: &mut String, lang: &str, text: &str) {
    let f = fence(text);
    let _ = writeln!(out, "{f}{lang}\n{}\n{f}", text.trim_end_matches('\n'));
}

/// Text in a `<summary>` or a table cell: one line, no HTML, no Markdown emphasis.
fn inline(text: &str) -> String {
    let one = crate::text::one_line(text, 120);
    let mut out = String::with_capacity(one.len());
    for c in one.chars() {
        match c {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '`' | '*' | '_' | '|' | '[' | ']' => {
                out.push('\\');
                out.push(c);
            }
            c => out.push(c),
        }
    }
    out
}

/// Markdown as an agent or a person wrote it, with every raw HTML tag outside code made
/// literal (`<x` → `&lt;x`): a viewer that renders HTML in Markdown runs none from a transcript.
/// Fenced blocks and inline code spans are left alone (they show `<` as it is).
fn defang(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut fence: Option<&str> = None;
    for line in text.split_inclusive('\n') {
        let trimmed = line.trim_start();
        let marker = ["```", "~~~"].into_iter().find(|m| trimmed.starts_with(m));
        match (fence, marker) {
            (None, Some(m)) => {
                fence = Some(m);
                out.push_str(line);
                continue;
            }
            (Some(f), Some(m)) if f == m => {
                fence = None;
                out.push_str(line);
                continue;
            }
            (Some(_), _) => {
                out.push_str(line);
                continue;
            }
            (None, None) => {}
        }
        let mut in_code = false;
        let mut chars = line.chars().peekable();
        while let Some(c) = chars.next() {
            match c {
                '`' => {
                    in_code = !in_code;
                    out.push(c);
                }
                '<' if !in_code
                    && chars.peek().is_some_and(|n| {
                        n.is_ascii_alphabetic() || matches!(n, '/' | '!' | '?')
                    }) =>
                {
                    out.push_str("&lt;");
                }
                c => out.push(c),
            }
        }
    }
    out
}

pub fn render(doc: &Document) -> String {
    let s = &doc.session;
    let mut out = String::new();
    let _ = writeln!(out, "# {}\n", inline(&doc.title()));
    // An imported or pulled session names the agent that ran it, not the format.
    let agent = s.ran_by.as_deref().unwrap_or(s.agent.as_str());
    let mut facts = vec![format!("**Agent:** {}", inline(agent))];
    if let Some(m) = &s.model {
        facts.push(format!("**Model:** {}", inline(m)));
    }
    if let Some(t) = &s.started_at {
        facts.push(format!("**Started:** {}", inline(t)));
    }
    if let Some(b) = &s.git_branch {
        facts.push(format!("**Branch:** {}", inline(b)));
    }
    if let Some(c) = &s.cwd {
        facts.push(format!("**Directory:** {}", inline(c)));
    }
    facts.push(format!(
        "**Session:** {}",
        inline(s.session_id.as_deref().unwrap_or(&s.session_key))
    ));
    let _ = writeln!(out, "{}\n", facts.join(" · "));
    for t in &doc.turns {
        let _ = writeln!(out, "## Turn {}\n", t.turn.turn_index);
        for r in &t.records {
            record(&mut out, r);
        }
    }
    let _ = writeln!(
        out,
        "---\n\n*Exported by Cairn. {}*",
        doc.left_out.sentence().replace('*', "\\*")
    );
    out
}

fn record(out: &mut String, r: &RecordView) {
    let heading = inline(&tool_input::heading(r));
    let text = r.text.as_deref().unwrap_or("");
    match r.kind.as_str() {
        "message" if !text.trim().is_empty() => {
            let _ = writeln!(out, "**{heading}**\n");
            let _ = writeln!(out, "{}\n", defang(text.trim_end()));
        }
        "tool_call" => {
            let input = tool_input::read(r);
            let what = match &input {
                ToolInput::Command(c) => format!(": {}", inline(c)),
                ToolInput::Diff { path: Some(p), .. } => format!(": {}", inline(p)),
                _ => String::new(),
            };
            let _ = writeln!(out, "<details><summary>{heading}{what}</summary>\n");
            match input {
                ToolInput::None => {}
                ToolInput::Command(c) => block(out, "sh", &c),
                ToolInput::Diff { lines, .. } => block(out, "diff", &tool_input::diff_text(&lines)),
                ToolInput::Json(j) => block(out, "json", &j),
            }
            let _ = writeln!(out, "\n</details>\n");
        }
        "tool_result" | "reasoning" => {
            let mut summary = heading;
            if let Some(o) = tool_input::outcome(r) {
                summary.push_str(&format!(" ({})", inline(&o)));
            }
            let _ = writeln!(out, "<details><summary>{summary}</summary>\n");
            if !text.is_empty() {
                block(out, "text", text);
            }
            let _ = writeln!(out, "\n</details>\n");
        }
        "event" if !text.trim().is_empty() => {
            let _ = writeln!(out, "<details><summary>{heading}</summary>\n");
            block(out, "text", text);
            let _ = writeln!(out, "\n</details>\n");
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fence_is_longer_than_any_backtick_run_inside() {
        assert_eq!(fence("plain"), "```");
        assert_eq!(fence("a ```` b"), "`````");
        let mut out = String::new();
        block(&mut out, "text", "```\nclosing?\n```");
        assert!(out.starts_with("````text\n"));
        assert!(out.ends_with("\n````\n"));
    }

    #[test]
    fn raw_tags_outside_code_become_text() {
        assert_eq!(
            defang("a <b>x</b> `Vec<u8>` <!-- c --> 1 < 2\n```\n<div>\n```\n<i>"),
            "a &lt;b>x&lt;/b> `Vec<u8>` &lt;!-- c --> 1 < 2\n```\n<div>\n```\n&lt;i>"
        );
    }

    #[test]
    fn inline_text_cannot_open_html_or_links() {
        assert_eq!(
            inline("<script>x</script> [a](b)\nnext"),
            "&lt;script&gt;x&lt;/script&gt; \\[a\\](b) next"
        );
    }
}

//! An export as one self-contained HTML page: styles inline, no script, no remote load (a
//! Content-Security-Policy that forbids both), light and dark by the reader's setting, tool
//! calls and output folded in `<details>`, edits as coloured diffs. Every transcript byte is
//! escaped: a transcript is hostile.

use std::fmt::Write as _;

use super::tool_input::{self, Sign, ToolInput};
use super::{Document, RETRACTED, RecordView};

const STYLE: &str = r#"
:root { color-scheme: light dark; --bg: #ffffff; --fg: #1f2328; --muted: #59636e; --line: #d1d9e0;
  --card: #f6f8fa; --user: #ddf4ff; --add: #dafbe1; --del: #ffebe9; --hunk: #eef1f4; }
@media (prefers-color-scheme: dark) {
  :root { --bg: #0d1117; --fg: #e6edf3; --muted: #9198a1; --line: #3d444d; --card: #151b23;
    --user: #0c2d4b; --add: #12361f; --del: #4a1d1d; --hunk: #1f2630; }
}
* { box-sizing: border-box; }
body { margin: 0 auto; max-width: 60rem; padding: 2rem 1.25rem; background: var(--bg); color: var(--fg);
  font: 15px/1.55 system-ui, -apple-system, "Segoe UI", sans-serif; }
h1 { font-size: 1.5rem; margin: 0 0 .5rem; }
h2 { font-size: 1.05rem; margin: 2rem 0 .75rem; padding-bottom: .25rem; border-bottom: 1px solid var(--line); }
.facts { color: var(--muted); margin: 0 0 1.5rem; }
.facts span + span::before { content: " · "; }
.msg { margin: .75rem 0; padding: .6rem .9rem; border-radius: 8px; background: var(--card); }
.msg.user { background: var(--user); }
.who { font-weight: 600; font-size: .85rem; color: var(--muted); margin-bottom: .25rem; }
.text { white-space: pre-wrap; overflow-wrap: anywhere; }
details { margin: .4rem 0; border: 1px solid var(--line); border-radius: 6px; }
summary { cursor: pointer; padding: .3rem .6rem; font-size: .9rem; color: var(--muted); }
summary code { color: var(--fg); }
.bad { color: #cf222e; font-weight: 600; }
pre { margin: 0; padding: .5rem .75rem; overflow-x: auto; font: 13px/1.45 ui-monospace, "SFMono-Regular", Menlo, monospace;
  border-top: 1px solid var(--line); }
.diff span { display: block; white-space: pre; }
.diff .add { background: var(--add); }
.diff .del { background: var(--del); }
.diff .hunk { background: var(--hunk); color: var(--muted); }
.retracted { opacity: .7; border-left: 3px dashed var(--muted); }
.gone { font-weight: 600; font-style: italic; color: var(--muted); }
.note { padding: .5rem .9rem; border-left: 3px dashed var(--muted); color: var(--muted); }
footer { margin-top: 2.5rem; padding-top: .75rem; border-top: 1px solid var(--line); color: var(--muted); font-size: .85rem; }
"#;

/// `text` with `&`, `<`, `>`, `"` and `'` escaped.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

pub fn render(doc: &Document) -> String {
    let s = &doc.session;
    let title = escape(&doc.title());
    let mut out = String::new();
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; img-src data:\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <meta name=\"generator\" content=\"Cairn\">\n<title>{title}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n<h1>{title}</h1>\n<p class=\"facts\">"
    );
    let mut fact = |label: &str, v: &str| {
        let _ = write!(out, "<span>{label} <b>{}</b></span>", escape(v));
    };
    // An imported or pulled session names the agent that ran it, not the format.
    fact("agent", s.ran_by.as_deref().unwrap_or(s.agent.as_str()));
    if let Some(m) = &s.model {
        fact("model", m);
    }
    if let Some(t) = &s.started_at {
        fact("started", t);
    }
    if let Some(b) = &s.git_branch {
        fact("branch", b);
    }
    if let Some(c) = &s.cwd {
        fact("in", c);
    }
    fact("session", s.session_id.as_deref().unwrap_or(&s.session_key));
    out.push_str("</p>\n");
    if let Some(note) = doc.retracted_note() {
        let _ = writeln!(out, "<p class=\"note\">{}</p>", escape(&note));
    }
    for t in &doc.turns {
        let _ = writeln!(
            out,
            "<section id=\"turn-{0}\">\n<h2>Turn {0}</h2>",
            t.turn.turn_index
        );
        for r in &t.records {
            record(&mut out, r);
        }
        out.push_str("</section>\n");
    }
    // The sub-agents the session started and its compactions, whole, after it (as ATIF
    // embeds them).
    for (n, sub) in doc.subagents.iter().enumerate() {
        let word = sub.role_word();
        let _ = writeln!(
            out,
            "<section id=\"subagent-{n}\" class=\"subagent\">\n<h2>{word}: {}</h2>",
            escape(&sub.title())
        );
        // Its own id only: a Claude sub-agent carries its parent's.
        if let Some(id) = sub.session.session_id.as_deref()
            && sub.session.session_id != s.session_id
        {
            let _ = writeln!(
                out,
                "<p class=\"facts\"><span>session <b>{}</b></span></p>",
                escape(id)
            );
        }
        for t in &sub.turns {
            let _ = writeln!(out, "<h3>{word} turn {}</h3>", t.turn.turn_index);
            for r in &t.records {
                record(&mut out, r);
            }
        }
        out.push_str("</section>\n");
    }
    let _ = write!(
        out,
        "<footer>Exported by Cairn. {}</footer>\n</body>\n</html>\n",
        code_spans(&escape(&doc.left_out.sentence()))
    );
    out
}

/// Escaped text with its `backticked` spans as `<code>` (the left-out sentence is written for
/// Markdown and the terminal too).
fn code_spans(escaped: &str) -> String {
    let parts: Vec<&str> = escaped.split('`').collect();
    // An odd count of backticks leaves the last one as it is.
    let pairs = (parts.len() - 1) / 2 * 2;
    let mut out = String::new();
    for (i, part) in parts.iter().enumerate() {
        match i {
            0 => {}
            i if i <= pairs && i % 2 == 1 => out.push_str("<code>"),
            i if i <= pairs => out.push_str("</code>"),
            _ => out.push('`'),
        }
        out.push_str(part);
    }
    out
}

fn record(out: &mut String, r: &RecordView) {
    let mut heading = escape(&tool_input::heading(r));
    // A record the agent took back: said in its heading (shown folded or not) and drawn apart.
    let retracted = r.retracted_at.is_some();
    if retracted {
        let _ = write!(heading, " <span class=\"gone\">({RETRACTED})</span>");
    }
    let (apart, apart_class) = if retracted {
        (" retracted", " class=\"retracted\"")
    } else {
        ("", "")
    };
    let text = r.text.as_deref().unwrap_or("");
    match r.kind.as_str() {
        "message" if !text.trim().is_empty() => {
            let class = if r.role.as_deref() == Some("user") {
                "msg user"
            } else {
                "msg"
            };
            let _ = writeln!(
                out,
                "<div class=\"{class}{apart}\"><div class=\"who\">{heading}</div><div class=\"text\">{}</div></div>",
                escape(text.trim_end())
            );
        }
        "tool_call" => {
            let input = tool_input::read(r);
            let what = match &input {
                ToolInput::Command(c) => {
                    format!(" <code>{}</code>", escape(&crate::text::one_line(c, 100)))
                }
                ToolInput::Diff { path: Some(p), .. } => format!(" <code>{}</code>", escape(p)),
                _ => String::new(),
            };
            let _ = write!(
                out,
                "<details{apart_class}><summary>{heading}{what}</summary>"
            );
            match input {
                ToolInput::None => {}
                ToolInput::Command(c) => {
                    let _ = write!(out, "<pre>{}</pre>", escape(&c));
                }
                ToolInput::Json(j) => {
                    let _ = write!(out, "<pre>{}</pre>", escape(&j));
                }
                ToolInput::Diff { lines, .. } => {
                    out.push_str("<pre class=\"diff\">");
                    for (sign, line) in lines {
                        let (class, mark) = match sign {
                            Sign::Add => ("add", "+"),
                            Sign::Remove => ("del", "-"),
                            Sign::Context => ("ctx", " "),
                            Sign::Hunk => ("hunk", ""),
                        };
                        let _ = write!(
                            out,
                            "<span class=\"{class}\">{mark}{}</span>",
                            escape(&line)
                        );
                    }
                    out.push_str("</pre>");
                }
            }
            out.push_str("</details>\n");
        }
        "tool_result" | "reasoning" | "event" => {
            if r.kind == "event" && text.trim().is_empty() {
                return;
            }
            let bad = tool_input::outcome(r)
                .map(|o| format!(" <span class=\"bad\">{}</span>", escape(&o)))
                .unwrap_or_default();
            let _ = writeln!(
                out,
                "<details{apart_class}><summary>{heading}{bad}</summary><pre>{}</pre></details>",
                escape(text)
            );
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaping_covers_attribute_and_element_breaks() {
        assert_eq!(
            escape(r#"<img src=x onerror='a()'>&"#),
            "&lt;img src=x onerror=&#39;a()&#39;&gt;&amp;"
        );
    }
}

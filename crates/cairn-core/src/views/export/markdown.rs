//! An export as Markdown that reads well pasted into a pull request: a header, one section per
//! turn, messages as they were written, tool calls and their output folded in `<details>`,
//! edits as `diff` blocks, and a closing note of what was left out.

use std::fmt::Write as _;

use super::tool_input::{self, ToolInput};
use super::{Document, RETRACTED, RecordView};

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

/// Whether a link may keep its address in exported Markdown: `http(s)`, or a `cairn://session/`
/// address of one of `sessions` (by key). Anything else (`javascript:`, `data:`, `file:`, a
/// relative path, another session, another `cairn://` place) loses its address.
pub(crate) fn link_allowed(url: &str, sessions: &[String]) -> bool {
    let url = url.trim();
    let lower = url.to_ascii_lowercase();
    if lower.starts_with("https://") || lower.starts_with("http://") {
        return true;
    }
    const SESSION: &str = "cairn://session/";
    if !lower.starts_with(SESSION) {
        return false;
    }
    // ASCII lowercasing keeps every byte where it was.
    let key = url[SESSION.len()..]
        .split(['?', '#', '/'])
        .next()
        .unwrap_or("");
    sessions.iter().any(|s| s == key)
}

/// Text for Markdown that shows as itself: every character Markdown or HTML gives a meaning
/// to is escaped.
fn literal(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '<' => out.push_str("&lt;"),
            '&' => out.push_str("&amp;"),
            '\\' | '`' | '*' | '_' | '[' | ']' | '(' | ')' | '!' | '#' | '|' | '~' | '>' => {
                out.push('\\');
                out.push(c);
            }
            '\n' => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

/// A link or an image being read, with the source range of what it encloses so far.
enum Open {
    Link {
        keep: bool,
        inner: Option<(usize, usize)>,
    },
    Image {
        alt: String,
    },
}

/// Markdown from outside (a transcript's message, a model's report) made inert for whatever
/// viewer renders it, the rest kept as written: raw HTML outside code is made literal (`<x` →
/// `&lt;x`), an image becomes its alt text (opening the file must fetch nothing), and a link
/// whose address `allowed` refuses keeps its text without the address (as does a reference
/// definition's). Code spans and fenced or indented blocks are left alone (they show `<` as it
/// is). Parsed with pulldown-cmark (CommonMark, as GitHub reads it); edits apply to the source.
///
/// What one pass makes literal can hold Markdown that reads as Markdown once it is text: a
/// line opening with `<script>` is an HTML block whole, links and all, so
/// `<script>…</script> [x](javascript:…)` kept a live link once its `<` was escaped. The text
/// is read again until a reading changes nothing (each edit takes away a tag or an address, so
/// that comes soon); text still changing after [`PASSES`] readings is made literal whole.
pub(crate) fn neutralise(text: &str, allowed: &dyn Fn(&str) -> bool) -> String {
    let mut now = neutralise_once(text, allowed);
    for _ in 1..PASSES {
        let next = neutralise_once(&now, allowed);
        if next == now {
            return now;
        }
        now = next;
    }
    literal(text)
}

/// How many readings [`neutralise`] gives a text before making it literal whole.
const PASSES: usize = 8;

/// One reading of [`neutralise`]: what it makes inert in `text` as `text` parses.
fn neutralise_once(text: &str, allowed: &dyn Fn(&str) -> bool) -> String {
    use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};
    let options =
        Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TASKLISTS;
    let mut edits: Vec<(usize, usize, String)> = Vec::new();
    let mut open: Vec<Open> = Vec::new();
    let mut in_code = false;
    let parser = Parser::new_ext(text, options).into_offset_iter();
    for (_, def) in parser.reference_definitions().iter() {
        if !allowed(&def.dest) {
            edits.push((def.span.start, def.span.end, String::new()));
        }
    }
    for (event, range) in parser {
        let ends_link = matches!(event, Event::End(TagEnd::Link));
        if !ends_link && let Some(Open::Link { inner, .. }) = open.last_mut() {
            *inner = Some(match *inner {
                Some((a, z)) => (a.min(range.start), z.max(range.end)),
                None => (range.start, range.end),
            });
        }
        match event {
            Event::Start(Tag::CodeBlock(_)) => in_code = true,
            Event::End(TagEnd::CodeBlock) => in_code = false,
            Event::Start(Tag::Link { dest_url, .. }) => open.push(Open::Link {
                keep: allowed(&dest_url),
                inner: None,
            }),
            Event::Start(Tag::Image { .. }) => open.push(Open::Image { alt: String::new() }),
            Event::End(TagEnd::Link) => {
                if let Some(Open::Link { keep: false, inner }) = open.pop() {
                    match inner {
                        Some((a, z)) => {
                            edits.push((range.start, a, String::new()));
                            edits.push((z, range.end, String::new()));
                        }
                        None => edits.push((range.start, range.end, String::new())),
                    }
                }
            }
            Event::End(TagEnd::Image) => {
                if let Some(Open::Image { alt }) = open.pop() {
                    edits.push((range.start, range.end, literal(alt.trim())));
                }
            }
            Event::Text(t) | Event::Code(t) if matches!(open.last(), Some(Open::Image { .. })) => {
                if let Some(Open::Image { alt }) = open.last_mut() {
                    alt.push_str(&t);
                }
            }
            Event::Html(_) | Event::InlineHtml(_) => {
                edits.push((range.start, range.end, text[range].replace('<', "&lt;")));
            }
            // A `<` another renderer might take for a tag: not HTML to pulldown-cmark, made
            // literal all the same (unless escaped already).
            Event::Text(_) if !in_code && text[range.clone()].contains('<') => {
                let src = &text[range.clone()];
                let mut out = String::with_capacity(src.len() + 8);
                let mut prev = ' ';
                for c in src.chars() {
                    if c == '<' && prev != '\\' {
                        out.push_str("&lt;");
                    } else {
                        out.push(c);
                    }
                    prev = c;
                }
                edits.push((range.start, range.end, out));
            }
            _ => {}
        }
    }
    // Apply in order; an edit inside one already applied (an image's own text) is dropped.
    edits.sort_by_key(|e| (e.0, std::cmp::Reverse(e.1)));
    let mut out = String::with_capacity(text.len() + text.len() / 8);
    let mut at = 0;
    for (a, z, with) in edits {
        if a < at {
            continue;
        }
        out.push_str(&text[at..a]);
        out.push_str(&with);
        at = z;
    }
    out.push_str(&text[at..]);
    out
}

/// A message as a block quote: its own Markdown still renders, inside the quote, so a heading or
/// a bold line of its own cannot pass for the export's turn headings and speaker labels, and a
/// fence it never closes ends with the quote instead of swallowing the rest of the export.
fn quoted(text: &str) -> String {
    text.lines()
        .map(|l| {
            if l.is_empty() {
                ">".to_owned()
            } else {
                format!("> {l}")
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
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
    if let Some(note) = doc.retracted_note() {
        let _ = writeln!(out, "*{}*\n", note.replace('*', "\\*"));
    }
    for t in &doc.turns {
        let _ = writeln!(out, "## Turn {}\n", t.turn.turn_index);
        for r in &t.records {
            record(&mut out, r, &s.session_key);
        }
    }
    // The sub-agents the session started and its compactions, whole, after it (as ATIF
    // embeds them).
    for sub in &doc.subagents {
        let key = &sub.session.session_key;
        let word = sub.role_word();
        let _ = writeln!(out, "## {word}: {}\n", inline(&sub.title()));
        // Its own id only: a Claude sub-agent carries its parent's.
        if let Some(id) = sub.session.session_id.as_deref()
            && sub.session.session_id != s.session_id
        {
            let _ = writeln!(out, "**Session:** {}\n", inline(id));
        }
        for t in &sub.turns {
            let _ = writeln!(out, "### {word} turn {}\n", t.turn.turn_index);
            for r in &t.records {
                record(&mut out, r, key);
            }
        }
    }
    let _ = writeln!(
        out,
        "---\n\n*Exported by Cairn. {}*",
        doc.left_out.sentence().replace('*', "\\*")
    );
    out
}

/// One record; `doc_key` is the exported session's key, the one `cairn://` address a message's
/// link may keep.
fn record(out: &mut String, r: &RecordView, doc_key: &str) {
    let mut heading = inline(&tool_input::heading(r));
    // Said in the heading every kind of record has, so it shows whether a reader unfolds
    // the record or not.
    if r.retracted_at.is_some() {
        heading.push_str(&format!(" ({RETRACTED})"));
    }
    let text = r.text.as_deref().unwrap_or("");
    match r.kind.as_str() {
        "message" if !text.trim().is_empty() => {
            let _ = writeln!(out, "**{heading}**\n");
            let keep = [doc_key.to_owned()];
            let allowed = |url: &str| link_allowed(url, &keep);
            let _ = writeln!(out, "{}\n", quoted(&neutralise(text.trim_end(), &allowed)));
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

    fn inert(text: &str) -> String {
        neutralise(text, &|u: &str| link_allowed(u, &["sha256-ok".to_owned()]))
    }

    #[test]
    fn raw_tags_outside_code_become_text() {
        assert_eq!(
            inert("a <b>x</b> `Vec<u8>` <!-- c --> 1 < 2\n```\n<div>\n```\n<i>"),
            "a &lt;b>x&lt;/b> `Vec<u8>` &lt;!-- c --> 1 &lt; 2\n```\n<div>\n```\n&lt;i>"
        );
        assert_eq!(
            inert("<script>alert(1)</script>\n\n<img src=x onerror=alert(2)>"),
            "&lt;script>alert(1)&lt;/script>\n\n&lt;img src=x onerror=alert(2)>"
        );
    }

    #[test]
    fn a_message_is_quoted_so_its_headings_and_open_fences_stay_inside_it() {
        use pulldown_cmark::{Event, Parser, Tag, TagEnd};
        let q = quoted("## Turn 9\n\n**Assistant**\n```\nnever closed");
        assert_eq!(q, "> ## Turn 9\n>\n> **Assistant**\n> ```\n> never closed");
        // What follows the quote is the export's again: one heading outside any quote.
        let doc = format!("{q}\n\n## Turn 1\n");
        let mut depth = 0;
        let mut outside = Vec::new();
        for event in Parser::new(&doc) {
            match event {
                Event::Start(Tag::BlockQuote(_)) => depth += 1,
                Event::End(TagEnd::BlockQuote(_)) => depth -= 1,
                Event::Text(t) if depth == 0 => outside.push(t.to_string()),
                _ => {}
            }
        }
        assert_eq!(outside, vec!["Turn 1".to_owned()]);
    }

    /// A link inside an HTML block (a line that opens with `<script>`) is a link once the
    /// block is made text: it loses its address as any other. Read back, the export holds no
    /// link but the allowed ones.
    #[test]
    fn a_link_inside_an_html_block_loses_its_address_too() {
        use pulldown_cmark::{Event, Parser, Tag};
        let hostile = "<script>alert(1)</script> <img src=x onerror=alert(2)> [link](javascript:alert(3)) clear\n\n\
                       <div>[d](data:text/html,x) [ok](https://example.org)</div>";
        let out = inert(hostile);
        assert!(
            !out.contains("](javascript:") && !out.contains("](data:"),
            "{out}"
        );
        let links: Vec<String> = Parser::new(&quoted(&out))
            .filter_map(|e| match e {
                Event::Start(Tag::Link { dest_url, .. }) => Some(dest_url.to_string()),
                _ => None,
            })
            .collect();
        assert_eq!(links, ["https://example.org"], "{out}");
        assert_eq!(inert(&out), out, "a second reading changes nothing");
    }

    #[test]
    fn images_become_their_alt_text_and_unsafe_links_lose_their_address() {
        assert_eq!(
            inert("see ![img *x*](http://evil.example/p.png) and ![](https://t/p.gif)"),
            "see img x and "
        );
        assert_eq!(
            inert(
                "[click](javascript:alert(1)) [c2](JaVaScRiPt:x) [d](data:text/html,hi) [f](file:///etc/passwd)"
            ),
            "click c2 d f"
        );
        assert_eq!(
            inert(
                "[ok](https://example.org) <https://example.org/a> [s](cairn://session/sha256-ok?record=3)"
            ),
            "[ok](https://example.org) <https://example.org/a> [s](cairn://session/sha256-ok?record=3)"
        );
        assert_eq!(
            inert(
                "[other](cairn://session/sha256-bad?record=1) [r](cairn://recall?tab=inbox) [rel](../x)"
            ),
            "other r rel"
        );
        assert_eq!(
            inert("[**bold** ![i](http://e/x.png)](javascript:x)"),
            "**bold** i"
        );
        // Reference-style links and images: the same rules, the bad definitions gone.
        let out =
            inert("[a][r] ![b][i]\n\n[r]: javascript:alert(1)\n[i]: http://evil.example/p.png\n");
        assert!(
            !out.contains("javascript") && !out.contains("](") && out.starts_with("a b"),
            "{out}"
        );
        assert!(!out.contains("!["), "{out}");
    }

    #[test]
    fn inline_text_cannot_open_html_or_links() {
        assert_eq!(
            inline("<script>x</script> [a](b)\nnext"),
            "&lt;script&gt;x&lt;/script&gt; \\[a\\](b) next"
        );
    }
}

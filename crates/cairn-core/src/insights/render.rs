//! Reports out: Markdown rendered to safe HTML (for the report view and the HTML export), and
//! the three export formats.
//!
//! A report is model output, and the model read transcripts: treat it as hostile. In the HTML,
//! raw HTML in the Markdown is shown as text, links keep only `http`, `https`, `mailto`, `cairn`
//! and in-page addresses (`cairn://` only of a session the report read: a model may invent one),
//! and images become their alt text (an image would fetch from the network when the report is
//! opened). The Markdown export is made inert the same way, and stricter on links: only
//! `http(s)` and `cairn://session/` addresses of the report's sessions. The HTML export is one
//! standalone file: styles inlined, and a Content-Security-Policy that allows no script and no
//! remote load.

use pulldown_cmark::{CowStr, Event, Options, Parser, Tag, TagEnd, html};
use serde::{Deserialize, Serialize};

use super::Insight;
use std::io::Write as _;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "lowercase")]
pub enum ExportFormat {
    Md,
    Html,
    Json,
}

impl ExportFormat {
    pub fn parse(s: &str) -> Result<ExportFormat> {
        match s {
            "md" | "markdown" => Ok(ExportFormat::Md),
            "html" => Ok(ExportFormat::Html),
            "json" => Ok(ExportFormat::Json),
            other => Err(Error::Invalid(format!(
                "unknown export format `{other}`: use md, html or json"
            ))),
        }
    }

    pub fn extension(self) -> &'static str {
        match self {
            ExportFormat::Md => "md",
            ExportFormat::Html => "html",
            ExportFormat::Json => "json",
        }
    }
}

fn safe_url(url: &str) -> bool {
    let u = url.trim().to_ascii_lowercase();
    u.starts_with('#')
        || ["https://", "http://", "mailto:", "cairn://"]
            .iter()
            .any(|s| u.starts_with(s))
}

/// Markdown → an HTML fragment with raw HTML escaped, unsafe links neutralised and images
/// replaced by their alt text.
pub fn html_fragment(markdown: &str) -> String {
    html_with(markdown, &safe_url)
}

/// A report's Markdown as an HTML fragment ([`html_fragment`]) whose `cairn://` links keep
/// their address only when they cite a session the report read, as the Markdown export keeps
/// them (a model may invent one, which would open nothing or another session).
pub fn report_html(insight: &Insight) -> String {
    use crate::views::export::markdown::link_allowed;
    let allowed = |url: &str| {
        safe_url(url)
            && (!url.trim().to_ascii_lowercase().starts_with("cairn://")
                || link_allowed(url, &insight.session_keys))
    };
    html_with(&insight.content, &allowed)
}

/// [`html_fragment`] keeping the links `allowed` passes.
fn html_with(markdown: &str, allowed: &dyn Fn(&str) -> bool) -> String {
    let options =
        Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TASKLISTS;
    let events = Parser::new_ext(markdown, options).map(|event| match event {
        Event::Html(s) | Event::InlineHtml(s) => Event::Text(s),
        Event::Start(Tag::Link {
            link_type,
            dest_url,
            title: _,
            id,
        }) if !allowed(&dest_url) => Event::Start(Tag::Link {
            link_type,
            dest_url: CowStr::Borrowed("#"),
            title: CowStr::Boxed(format!("address removed: {}", title_of(&dest_url)).into()),
            id,
        }),
        Event::Start(Tag::Image { .. }) => Event::Start(Tag::Emphasis),
        Event::End(TagEnd::Image) => Event::End(TagEnd::Emphasis),
        other => other,
    });
    let mut out = String::with_capacity(markdown.len() * 3 / 2);
    html::push_html(&mut out, events);
    out
}

/// What a link to a session the report did not read says in its place.
pub const UNREAD_SESSION: &str = "(session not in this report)";

/// A report's Markdown with every link to a `cairn://session/` the report did not read (one
/// forgotten since, or that never existed: a model may invent a key) turned into its text and
/// [`UNREAD_SESSION`]; a reference definition of such an address is dropped. Everything else
/// stays as the model wrote it, links to `sessions` included. A report is made and read
/// through this ([`super::write`], [`super::get`]), so its Markdown and JSON, its view and its
/// exports never open another session, or nothing, where the report seems to cite one.
pub fn unlink_unread_sessions(markdown: &str, sessions: &[String]) -> String {
    // Taking a link away can let the text around it read as a link anew: read again until
    // nothing changes.
    let mut now = unlink_once(markdown, sessions);
    for _ in 1..8 {
        let next = unlink_once(&now, sessions);
        if next == now {
            break;
        }
        now = next;
    }
    now
}

fn unlink_once(markdown: &str, sessions: &[String]) -> String {
    use crate::views::export::markdown::link_allowed;
    let unread = |url: &str| {
        url.trim()
            .to_ascii_lowercase()
            .starts_with("cairn://session/")
            && !link_allowed(url, sessions)
    };
    let options =
        Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TASKLISTS;
    let parser = Parser::new_ext(markdown, options).into_offset_iter();
    let mut edits: Vec<(usize, usize, String)> = Vec::new();
    for (_, def) in parser.reference_definitions().iter() {
        if unread(&def.dest) {
            edits.push((def.span.start, def.span.end, String::new()));
        }
    }
    // The link being read, when it goes: where its text starts and ends in the source.
    let mut open: Option<Option<(usize, usize)>> = None;
    for (event, range) in parser {
        match event {
            Event::Start(Tag::Link {
                link_type,
                dest_url,
                ..
            }) if unread(&dest_url) => {
                if link_type == pulldown_cmark::LinkType::Autolink {
                    // `<cairn://session/…>`: its text is the address itself.
                    edits.push((range.start, range.end, UNREAD_SESSION.to_owned()));
                } else {
                    open = Some(None);
                }
            }
            Event::End(TagEnd::Link) if open.is_some() => {
                let text = match open.take().flatten() {
                    Some((a, z)) => format!("{} {UNREAD_SESSION}", markdown[a..z].trim_end()),
                    None => UNREAD_SESSION.to_owned(),
                };
                edits.push((range.start, range.end, text));
            }
            _ => {
                if let Some(inner) = open.as_mut() {
                    *inner = Some(match *inner {
                        Some((a, z)) => (a.min(range.start), z.max(range.end)),
                        None => (range.start, range.end),
                    });
                }
            }
        }
    }
    edits.sort_by_key(|e| (e.0, std::cmp::Reverse(e.1)));
    let mut out = String::with_capacity(markdown.len());
    let mut at = 0;
    for (a, z, with) in edits {
        if a < at {
            continue;
        }
        out.push_str(&markdown[at..a]);
        out.push_str(&with);
        at = z;
    }
    out.push_str(&markdown[at..]);
    out
}

/// A report's Markdown as the words a person reads in it: its text, code and alt text, and raw
/// HTML as the text it is shown as, one block per line; never a link's or an image's address,
/// which the reader does not see (a `<…>` autolink's text is its address, and is read). What
/// `insights list --search` matches.
pub fn read_text(markdown: &str) -> String {
    let options =
        Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TASKLISTS;
    let mut out = String::with_capacity(markdown.len());
    for event in Parser::new_ext(markdown, options) {
        match event {
            Event::Text(t) | Event::Code(t) | Event::Html(t) | Event::InlineHtml(t) => {
                out.push_str(&t);
            }
            Event::SoftBreak | Event::HardBreak | Event::Rule | Event::End(_) => out.push('\n'),
            _ => {}
        }
    }
    out
}

fn title_of(url: &str) -> String {
    crate::text::excerpt(&crate::text::printable(url), 60)
}

/// The Markdown export: a title, a line saying what made it, then the report, made inert for
/// any viewer (`views::export::markdown::neutralise`): raw HTML shown as text, images as their
/// alt text, and links keeping their address only when it is `http(s)` or a `cairn://session/`
/// address of a session the report read (a model may invent one).
pub fn markdown(insight: &Insight) -> String {
    use crate::views::export::markdown::{link_allowed, neutralise};
    let allowed = |url: &str| link_allowed(url, &insight.session_keys);
    neutralise(
        &format!(
            "# {}\n\n> {}\n\n{}\n",
            crate::text::one_line(&insight.title, 300),
            provenance_line(insight),
            insight.content.trim()
        ),
        &allowed,
    )
}

fn provenance_line(i: &Insight) -> String {
    let generator = match &i.model {
        Some(m) => format!("{} ({m})", i.generator),
        None => i.generator.clone(),
    };
    let mut line = format!(
        "{} v{} · {} · generated by {} on {} · {} sessions",
        i.template_title,
        i.template_version,
        i.slice.label(),
        generator,
        i.created_at.get(..10).unwrap_or(&i.created_at),
        i.sessions_total,
    );
    if i.sessions_included < i.sessions_total {
        line.push_str(&format!(" ({} in detail)", i.sessions_included));
    }
    if let Some(f) = &i.focus {
        line.push_str(&format!(" · focus: {}", crate::text::excerpt(f, 200)));
    }
    line
}

const STYLE: &str = "
:root { color-scheme: light dark; --fg: #1d1f23; --bg: #ffffff; --muted: #5b6270; --line: #d9dce1; --accent: #2f6fdb; --code: #f3f4f6; }
@media (prefers-color-scheme: dark) { :root { --fg: #e4e6ea; --bg: #16181c; --muted: #9aa1ad; --line: #2d3138; --accent: #7aa7ff; --code: #22262c; } }
body { margin: 0; background: var(--bg); color: var(--fg); font: 15px/1.55 system-ui, -apple-system, 'Segoe UI', sans-serif; }
main { max-width: 46rem; margin: 0 auto; padding: 2.5rem 1.25rem 4rem; }
h1 { font-size: 1.6rem; line-height: 1.25; margin: 0 0 .5rem; }
h2 { font-size: 1.2rem; margin-top: 2rem; border-bottom: 1px solid var(--line); padding-bottom: .25rem; }
h3 { font-size: 1.05rem; margin-top: 1.5rem; }
.meta { color: var(--muted); font-size: .85rem; margin: 0 0 2rem; }
a { color: var(--accent); }
code, pre { font-family: ui-monospace, 'SF Mono', Menlo, Consolas, monospace; font-size: .88em; background: var(--code); border-radius: 4px; }
code { padding: .1em .3em; }
pre { padding: .75rem 1rem; overflow-x: auto; }
pre code { padding: 0; background: none; }
blockquote { margin: 1rem 0; padding: 0 1rem; border-left: 3px solid var(--line); color: var(--muted); }
table { border-collapse: collapse; margin: 1rem 0; }
th, td { border: 1px solid var(--line); padding: .35rem .6rem; text-align: left; vertical-align: top; }
";

/// The standalone HTML export.
pub fn html_document(insight: &Insight) -> String {
    let title = escape(insight.title.trim());
    format!(
        "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">\n\
         <meta name=\"generator\" content=\"Cairn\">\n<title>{title}</title>\n<style>{STYLE}</style>\n</head>\n\
         <body>\n<main>\n<h1>{title}</h1>\n<p class=\"meta\">{}</p>\n<article>\n{}</article>\n</main>\n</body>\n</html>\n",
        escape(&provenance_line(insight)),
        report_html(insight)
    )
}

fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
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

/// A report in one of the export formats. Every byte passes the outbound redactor first
/// (title, focus and content): an export is meant to leave the machine.
pub fn export(insight: &Insight, format: ExportFormat) -> Result<String> {
    let clean = outbound(insight);
    match format {
        ExportFormat::Md => Ok(markdown(&clean)),
        ExportFormat::Html => Ok(html_document(&clean)),
        ExportFormat::Json => serde_json::to_string_pretty(&clean)
            .map(|mut s| {
                s.push('\n');
                s
            })
            .map_err(|e| Error::Invalid(format!("cannot write the report as JSON: {e}"))),
    }
}

fn outbound(insight: &Insight) -> Insight {
    let home = dirs::home_dir().map(|h| h.to_string_lossy().into_owned());
    let redact = |s: &str| {
        crate::archive::redact::Redactor::global().outbound_text(
            s,
            None,
            home.as_deref(),
            &mut Vec::new(),
        )
    };
    let mut out = insight.clone();
    out.title = redact(&insight.title);
    out.content = redact(&insight.content);
    out.focus = insight.focus.as_deref().map(redact);
    out
}

/// The file name an export gets by default: `insight-<id>-<template>-<from>[-<to>].<ext>`.
pub fn file_name(insight: &Insight, format: ExportFormat) -> String {
    let day = |s: &Option<String>| {
        s.as_deref()
            .and_then(|t| t.get(..10))
            .map(|d| d.replace('-', ""))
    };
    let mut name = format!("insight-{}-{}", insight.id, insight.template_id);
    match (day(&insight.slice.since), day(&insight.slice.until)) {
        (Some(a), Some(b)) if a != b => name.push_str(&format!("-{a}-{b}")),
        (Some(a), _) | (None, Some(a)) => name.push_str(&format!("-{a}")),
        (None, None) => {}
    }
    let safe: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    format!("{safe}.{}", format.extension())
}

/// Write `bytes` to `dir/name`, or `dir/<stem> (2).<ext>` and so on when that exists: an
/// export never replaces a file. Creates `dir` if needed (0700); the export is 0600.
pub fn write_new(dir: &Path, name: &str, bytes: &[u8]) -> Result<PathBuf> {
    let write_err = |path: &Path, source| Error::Write {
        path: path.to_owned(),
        source,
    };
    crate::private::create_dir_all(dir).map_err(|e| write_err(dir, e))?;
    let (stem, ext) = match name.rsplit_once('.') {
        Some((stem, ext)) if !stem.is_empty() => (stem, Some(ext)),
        _ => (name, None),
    };
    for n in 1..=999u32 {
        let candidate = match (n, ext) {
            (1, _) => name.to_owned(),
            (_, Some(ext)) => format!("{stem} ({n}).{ext}"),
            (_, None) => format!("{stem} ({n})"),
        };
        let path = dir.join(candidate);
        // `create_new` fails when the file exists, so two exports never race onto one name.
        match crate::private::open_options()
            .write(true)
            .create_new(true)
            .open(&path)
        {
            Ok(mut file) => {
                file.write_all(bytes).map_err(|e| write_err(&path, e))?;
                return Ok(path);
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(write_err(&path, e)),
        }
    }
    Err(Error::Invalid(format!(
        "{} already holds 999 exports named {name}; move some away and export again",
        dir.display()
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hostile_markdown_renders_inert() {
        let md = "# Hi\n\n<script>alert(1)</script>\n\n[x](javascript:alert(1)) [y](JaVaScRiPt:alert(2)) [d](data:text/html,hi)\n\n\
                  <img src=x onerror=alert(3)>\n\n![tracker](https://evil.invalid/p.png)\n\n[s](cairn://session/sha256-00?record=3) [w](https://example.org)";
        let html = html_fragment(md);
        assert!(!html.contains("<script"), "{html}");
        assert!(html.contains("&lt;script&gt;"), "{html}");
        assert!(
            !html.to_ascii_lowercase().contains("href=\"javascript"),
            "{html}"
        );
        assert!(!html.contains("href=\"data:"), "{html}");
        assert!(!html.contains("<img"), "{html}");
        assert!(html.contains("<em>tracker</em>"), "{html}");
        assert!(
            html.contains("href=\"cairn://session/sha256-00?record=3\""),
            "{html}"
        );
        assert!(html.contains("href=\"https://example.org\""), "{html}");
    }

    #[test]
    fn the_markdown_export_is_inert_and_links_only_the_report_s_sessions() {
        let insight = Insight {
            id: 1,
            status: crate::insights::Status::Stored,
            title: "Week <script>t()</script>".into(),
            template_id: "t".into(),
            template_title: "T".into(),
            template_version: "1".into(),
            slice: super::super::slice::Slice {
                since: None,
                until: None,
                project: None,
                agent: None,
                branch: None,
                include_weak: false,
                automation: Default::default(),
                teammates: false,
            },
            focus: None,
            generator: "endpoint".into(),
            model: None,
            endpoint_hash: None,
            cache_key: String::new(),
            material_hash: String::new(),
            sessions_total: 1,
            sessions_included: 1,
            prompt_chars: 0,
            content: "<script>alert(1)</script>\n\n<img src=x onerror=alert(3)>\n\n\
                      [x](javascript:alert(1)) ![tracker](http://evil.invalid/p.png)\n\n\
                      [read](cairn://session/sha256-in?record=3) [made up](cairn://session/sha256-out) \
                      [w](https://example.org) `<b>` stays"
                .into(),
            starred: false,
            created_at: "2026-08-01T00:00:00Z".into(),
            elapsed_ms: 0,
            session_keys: vec!["sha256-in".into()],
            link: String::new(),
        };
        let md = export(&insight, ExportFormat::Md).unwrap();
        for gone in [
            "<script",
            "<img",
            "javascript:",
            "http://evil.invalid",
            "sha256-out",
            "![",
        ] {
            assert!(!md.contains(gone), "{gone} in {md}");
        }
        for kept in [
            "# Week &lt;script>",
            "&lt;img src=x",
            "tracker",
            "made up",
            "[read](cairn://session/sha256-in?record=3)",
            "[w](https://example.org)",
            "`<b>` stays",
        ] {
            assert!(md.contains(kept), "{kept} not in {md}");
        }
        // The HTML export and the report view keep the same links: a session the report did
        // not read loses its address there too.
        for html in [
            export(&insight, ExportFormat::Html).unwrap(),
            report_html(&insight),
        ] {
            assert!(
                !html.contains("href=\"cairn://session/sha256-out"),
                "{html}"
            );
            assert!(
                html.contains("href=\"cairn://session/sha256-in?record=3\""),
                "{html}"
            );
            assert!(html.contains("href=\"https://example.org\""), "{html}");
        }
    }

    #[test]
    fn only_links_to_unread_sessions_lose_their_address() {
        let read = vec!["sha256-in".to_owned()];
        let md = "[a](cairn://session/sha256-in?record=3) [b](cairn://session/sha256-out) \
                  [c](https://example.org) `[d](cairn://session/sha256-out)` <b>kept</b>\n\n\
                  [e][r] <cairn://session/sha256-out>\n\n[r]: cairn://session/sha256-out\n";
        let out = unlink_unread_sessions(md, &read);
        assert_eq!(
            out,
            format!(
                "[a](cairn://session/sha256-in?record=3) b {UNREAD_SESSION} \
                 [c](https://example.org) `[d](cairn://session/sha256-out)` <b>kept</b>\n\n\
                 e {UNREAD_SESSION} {UNREAD_SESSION}\n\n\n"
            )
        );
        // Read again, nothing changes.
        assert_eq!(unlink_unread_sessions(&out, &read), out);
    }

    #[test]
    fn formats_parse() {
        assert_eq!(ExportFormat::parse("markdown").unwrap(), ExportFormat::Md);
        assert!(
            ExportFormat::parse("pdf")
                .unwrap_err()
                .to_string()
                .contains("md, html or json")
        );
    }

    #[test]
    fn exports_never_replace_a_file() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("new");
        let first = write_new(&out, "insight-1-weekly.md", b"one").unwrap();
        let second = write_new(&out, "insight-1-weekly.md", b"two").unwrap();
        assert_eq!(first, out.join("insight-1-weekly.md"));
        assert_eq!(second, out.join("insight-1-weekly (2).md"));
        assert_eq!(std::fs::read_to_string(&first).unwrap(), "one");
        assert_eq!(std::fs::read_to_string(&second).unwrap(), "two");
        // A report holds transcript text: private, like the data dir it may be written into.
        use std::os::unix::fs::PermissionsExt;
        let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&second), 0o600);
        assert_eq!(mode(&out), 0o700);
    }
}

//! Human and JSON rendering. Every text printed for a person passes [`clean`] (or [`line`],
//! which calls it), so a transcript, a teammate's document or a model's answer that holds
//! terminal escape sequences or bidi controls cannot drive the reader's terminal; times pass
//! [`short_time`]/[`time`], which show only a strictly parsed RFC 3339 timestamp. JSON output
//! passes every string through [`clean`] too, and writes what a reader would still not see as
//! `\u` escapes ([`json`]), so `jq -r` on it is as inert on a terminal. A warning line shows
//! what its names hold as visible escapes instead ([`warning`]): it stays one line.

use std::io::Write;
use std::path::Path;
use std::sync::Mutex;

use anyhow::Result;
use cairn_core::archive::capture::{Progress, SyncReport, Warning};
use cairn_core::doctor::{DoctorReport, Status};
use cairn_core::text::{is_bidi_control, is_invisible_break};
use cairn_core::views::search::SearchAnswer;
use cairn_core::views::sessions::SessionSummary;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use serde::Serialize;

/// Safe for a terminal: escape sequences removed whole, other control characters dropped
/// except newline and tab, bidi controls dropped ([`cairn_core::text::printable`]).
pub fn clean(text: &str) -> String {
    cairn_core::text::printable(text)
}

/// Ask `question` on the terminal (` [y/N] ` after it) and read the answer from stdin: whether
/// it was yes. Callers ask only when stdin is a terminal (anything else is refused with the
/// flag that goes ahead).
pub fn confirm(out: &mut impl Write, question: &str) -> std::io::Result<bool> {
    use std::io::BufRead as _;
    write!(out, "{question} [y/N] ")?;
    out.flush()?;
    let mut answer = String::new();
    std::io::stdin().lock().read_line(&mut answer)?;
    Ok(matches!(answer.trim(), "y" | "Y" | "yes"))
}

/// A warning line as it is printed: [`clean`]'s set, newlines and tabs written as visible
/// escapes (`\n`, `\u{1b}`) instead of cut or kept ([`cairn_core::text::visible_line`]). A
/// warning names folders and files, and one named `evil\nFAKE: ok` must not print a line of
/// its own; the name shown is the one to look for.
pub fn warning(text: &str) -> String {
    cairn_core::text::visible_line(text)
}

/// Says on stderr that a person's write (a forget, a lift, a link or an unlink: the word it
/// holds) waits for the capture lock: a rebuild from the copies holds it for as long as it
/// runs, and a person's command must not hang silently.
pub struct SaysItWaits(pub &'static str);

impl Progress for SaysItWaits {
    fn waiting(&self, lock: &Path) {
        let file = warning(&lock.display().to_string());
        match held_by(lock) {
            Some(holder) => eprintln!(
                "Waiting for another Cairn process to let go of the archive: {file} is held by {holder}; the {} runs once it does.",
                self.0
            ),
            None => eprintln!(
                "Waiting for another Cairn process to let go of the archive (it holds {file}): a sync, a reindex or a rebuild from the copies, or the app's live capture; the {} runs once it does.",
                self.0
            ),
        }
    }
}

/// Who holds the lock file `lock`, for a line that waits on it: `process 4242 (`cairn sync`)`,
/// and when that process is stopped, what lets it go; `None` where the system does not say
/// (then the line names what usually holds it). The command line is another process's text:
/// the core redacted and cut it, and it is cleaned here as every printed field is.
fn held_by(lock: &Path) -> Option<String> {
    let holder = cairn_core::archive::capture::LockHolder::of(lock)?;
    let stopped = if holder.stopped {
        ", which is stopped: continue it (`fg` in its terminal) or end it"
    } else {
        ""
    };
    Some(format!(
        "process {} (`{}`){stopped}",
        holder.pid,
        clean(&holder.command)
    ))
}

/// The most of a title (a Recall entry's, a report's, a session's) a line shows: more than any
/// front door stores, so a title is cut only when something wrote a longer one.
pub const TITLE_CHARS: usize = 600;

/// One line: cleaned, whitespace collapsed, cut at `max` characters. Every field a model, an
/// agent or a transcript wrote that a view lays out as one line goes through it: a line break
/// in it would start a line of the view's own (`review_state=human_reviewed`).
pub fn line(text: &str, max: usize) -> String {
    cairn_core::text::one_line(text, max)
}

pub use cairn_core::text::plural;

/// Pretty JSON, every string in it (a key too) through [`clean`] as human output's fields are:
/// a title, a record's text, a path or a branch from a transcript or a teammate comes out as a
/// person reads it, so `jq -r` prints no escape sequence a teammate planted. Cairn's own
/// strings (keys, kinds, times) hold nothing cleaning removes; a record's newlines and tabs
/// stay, as they do on screen. The formatter would write a C1 or bidi control or an invisible
/// break as a `\u` escape, should one reach it.
pub fn json<T: Serialize>(out: &mut impl Write, value: &T) -> Result<()> {
    json_with(out, value, Some(serde_json::ser::PrettyFormatter::new()))
}

/// [`json`] on one line: an error on stderr, which CLI.md says is one line.
pub fn json_line<T: Serialize>(out: &mut impl Write, value: &T) -> Result<()> {
    json_with(out, value, None)
}

fn json_with<T: Serialize>(
    out: &mut impl Write,
    value: &T,
    pretty: Option<serde_json::ser::PrettyFormatter<'static>>,
) -> Result<()> {
    let mut value = serde_json::to_value(value)?;
    cleaned(&mut value);
    let mut ser = serde_json::Serializer::with_formatter(&mut *out, InertFormatter(pretty));
    value.serialize(&mut ser)?;
    writeln!(out)?;
    Ok(())
}

/// Every string of `value`, its objects' keys too, through [`clean`] (the fields of every
/// `--json` document: the core's types hold text from transcripts, teammates and models).
fn cleaned(value: &mut serde_json::Value) {
    use serde_json::Value;
    let dirty = |s: &str| !cairn_core::text::hidden(s).is_empty();
    match value {
        Value::String(s) if dirty(s) => *s = clean(s),
        Value::Array(items) => items.iter_mut().for_each(cleaned),
        Value::Object(fields) => {
            if fields.keys().any(|k| dirty(k)) {
                *fields = std::mem::take(fields)
                    .into_iter()
                    .map(|(k, v)| (clean(&k), v))
                    .collect();
            }
            fields.values_mut().for_each(cleaned);
        }
        _ => {}
    }
}

/// serde_json's pretty formatter (or its compact one, without), with C1 and bidi controls and
/// the invisible characters that hide inside a word (a zero-width space) in strings escaped:
/// the same string to a program, one a reader sees whole on a terminal.
struct InertFormatter(Option<serde_json::ser::PrettyFormatter<'static>>);

/// Each layout call goes to the pretty formatter when there is one, else to the compact one.
macro_rules! layout {
    ($($name:ident($($arg:ident: $ty:ty),*);)*) => {$(
        fn $name<W: ?Sized + Write>(&mut self, w: &mut W $(, $arg: $ty)*) -> std::io::Result<()> {
            match &mut self.0 {
                Some(pretty) => pretty.$name(w $(, $arg)*),
                None => serde_json::ser::CompactFormatter.$name(w $(, $arg)*),
            }
        }
    )*};
}

impl serde_json::ser::Formatter for InertFormatter {
    fn write_string_fragment<W: ?Sized + Write>(
        &mut self,
        writer: &mut W,
        fragment: &str,
    ) -> std::io::Result<()> {
        let mut start = 0;
        for (i, c) in fragment.char_indices() {
            if c.is_control() || is_bidi_control(c) || is_invisible_break(c) {
                writer.write_all(&fragment.as_bytes()[start..i])?;
                write!(writer, "\\u{:04x}", u32::from(c))?;
                start = i + c.len_utf8();
            }
        }
        writer.write_all(&fragment.as_bytes()[start..])
    }

    layout! {
        begin_array();
        end_array();
        begin_array_value(first: bool);
        end_array_value();
        begin_object();
        end_object();
        begin_object_key(first: bool);
        begin_object_value();
        end_object_value();
    }
}

/// `2026-02-12T10:31:05.123Z` → `2026-02-12 11:31` in Paris: the person's own clock (`$TZ`,
/// else the system's zone), as the desktop shows times; `unknown time` when absent or not
/// RFC 3339 (an archive from before timestamps were checked may hold anything). JSON keeps
/// the stored UTC time.
pub(crate) fn short_time(ts: Option<&str>) -> String {
    ts.and_then(|t| cairn_core::text::short_time(t, zone()))
        .unwrap_or_else(|| "unknown time".to_owned())
}

/// A search snippet as a terminal shows it: the core marks each match with private-use
/// characters, shown as brackets.
pub(crate) fn marked(snippet: &str) -> String {
    snippet
        .replace(cairn_core::views::search::MATCH_START, "[")
        .replace(cairn_core::views::search::MATCH_END, "]")
}

/// The person's clock: `$TZ`, else the system's zone.
fn zone() -> &'static jiff::tz::TimeZone {
    static ZONE: std::sync::OnceLock<jiff::tz::TimeZone> = std::sync::OnceLock::new();
    ZONE.get_or_init(jiff::tz::TimeZone::system)
}

/// A time bound a person typed, on the clock the lists show times on: a day (`YYYY-MM-DD`)
/// is the UTC instant that day starts on that clock (`end`: the next day's start, for a bound
/// that includes the day); anything else is passed on as typed (an RFC 3339 time names its
/// own zone; what is no time the core refuses, naming it).
pub(crate) fn local_day(typed: Option<String>, end: bool) -> Option<String> {
    let text = typed?;
    let Ok(day) = text.trim().parse::<jiff::civil::Date>() else {
        return Some(text);
    };
    let day = if end {
        match day.tomorrow() {
            Ok(next) => next,
            Err(_) => return Some(text),
        }
    } else {
        day
    };
    // A day that starts in a gap (a zone that skips midnight) starts at the gap's end.
    Some(
        zone()
            .to_ambiguous_timestamp(day.to_datetime(jiff::civil::Time::midnight()))
            .compatible()
            .map(|t| t.to_string())
            .unwrap_or(text),
    )
}

/// A time bound as a person types one on the command line (clap's value parser for
/// `--since`, `--until`, `--before`): a day `YYYY-MM-DD`, an RFC 3339 time, `today`,
/// `yesterday` (days on the person's clock) or a span back from now (`7d`, `2w`), as the
/// insights slice reads them; a day or an RFC 3339 time as the core reads it. Anything else is
/// a usage error (exit 2) naming what is read.
pub(crate) fn when(typed: &str) -> Result<String, String> {
    cairn_core::text::typed_bound(typed, jiff::Timestamp::now(), zone()).ok_or_else(|| {
        "not a date: write YYYY-MM-DD, an RFC 3339 time, `today`, `yesterday` or a span back from now such as `7d` or `2w`".to_owned()
    })
}

/// [`when`]'s check, the bound kept as typed: the insights slice reads `7d` itself, and keys
/// its stored reports by it (a span resolved to an instant would never be asked again).
pub(crate) fn when_as_typed(typed: &str) -> Result<String, String> {
    when(typed).map(|_| typed.trim().to_owned())
}

/// To the second, on the person's clock as every other time the CLI prints (a turn's records
/// printed UTC beside a session header on local time).
fn time(ts: Option<&str>) -> String {
    ts.and_then(cairn_core::text::parse_rfc3339).map_or_else(
        || "unknown".to_owned(),
        |at| {
            zone()
                .to_datetime(at)
                .strftime("%Y-%m-%d %H:%M:%S")
                .to_string()
        },
    )
}

pub fn sync_report(out: &mut impl Write, r: &SyncReport) -> Result<()> {
    let subagents = if r.subagents_added > 0 {
        format!(" (and {})", plural(r.subagents_added, "sub-agent"))
    } else {
        String::new()
    };
    // Forgotten transcripts still on disk are found and passed over: said, or new lines
    // written to them would vanish without a word.
    let forgotten = if r.forgotten_skipped > 0 {
        format!(
            " ({} passed over)",
            plural(r.forgotten_skipped, "forgotten file")
        )
    } else {
        String::new()
    };
    writeln!(
        out,
        "Scanned {}{forgotten}: {}{subagents}, {} updated, {} added ({:.1} MB read).",
        plural(r.files_scanned, "file"),
        plural(r.sessions_added, "new session"),
        r.sessions_updated,
        plural(r.records_added, "record"),
        r.bytes_read as f64 / 1_000_000.0
    )?;
    // Which agents those counts are of: one line each that changed.
    for a in &r.agents {
        let mut parts = Vec::new();
        if a.sessions_added > 0 {
            parts.push(plural(a.sessions_added, "new session"));
        }
        if a.subagents_added > 0 {
            parts.push(plural(a.subagents_added, "new sub-agent"));
        }
        if a.sessions_updated > 0 {
            parts.push(format!("{} updated", a.sessions_updated));
        }
        if a.records_added > 0 {
            parts.push(format!("{} added", plural(a.records_added, "record")));
        }
        if a.records_updated > 0 {
            parts.push(format!("{} rewritten", plural(a.records_updated, "record")));
        }
        writeln!(out, "  {}: {}", a.agent.as_str(), parts.join(", "))?;
    }
    nothing_to_read(out, &r.nothing_to_read)?;
    if !r.warnings.is_empty() {
        writeln!(out, "{}:", plural(r.warnings.len() as u64, "warning"))?;
        for w in &r.warnings {
            warning_line(out, w)?;
        }
    }
    if let Some(line) = &r.retention_warning {
        writeln!(out, "Warning: {}", warning(line))?;
    }
    Ok(())
}

/// How many of the files with nothing to read a sync's summary names; its JSON names all.
const NOTHING_TO_READ_NAMED: usize = 5;

/// The files a sync read for the first time that hold no record Cairn reads: named, since no
/// list shows a session of theirs and the counts leave them out.
fn nothing_to_read(out: &mut impl Write, paths: &[String]) -> Result<()> {
    match paths {
        [] => {}
        [one] => writeln!(
            out,
            "Nothing to read in {} (no record Cairn reads): no session listed.",
            warning(one)
        )?,
        many => {
            writeln!(
                out,
                "Nothing to read in {} (no record Cairn reads): no session listed.",
                plural(many.len() as u64, "file")
            )?;
            for path in many.iter().take(NOTHING_TO_READ_NAMED) {
                writeln!(out, "  {}", warning(path))?;
            }
            if many.len() > NOTHING_TO_READ_NAMED {
                writeln!(out, "  and {} more", many.len() - NOTHING_TO_READ_NAMED)?;
            }
        }
    }
    Ok(())
}

pub fn sessions(out: &mut impl Write, sessions: &[SessionSummary], keys: bool) -> Result<()> {
    if sessions.is_empty() {
        writeln!(
            out,
            "No sessions yet. Run `cairn sync` to import transcripts, or `cairn doctor` to see where Cairn looks."
        )?;
        return Ok(());
    }
    // The agent column is as wide as the longest name listed (`antigravity`, a teammate's
    // agent), so what follows starts in one column.
    let width = sessions
        .iter()
        .map(|s| ran_by(s.agent, s.ran_by.as_deref()).chars().count())
        .max()
        .unwrap_or(0)
        .max(6);
    for s in sessions {
        let place = match (&s.project, &s.git_branch) {
            (Some(p), Some(b)) => format!("{p} · {b}"),
            (Some(p), None) => p.clone(),
            (None, Some(b)) => b.clone(),
            (None, None) => "-".to_owned(),
        };
        let title = s
            .title
            .as_deref()
            .or(s.first_prompt.as_deref())
            .unwrap_or("(no prompt)");
        let mut extra = String::new();
        if s.subagent_count > 0 {
            extra.push_str(&format!(", {}", plural(s.subagent_count, "sub-agent")));
        }
        if s.warnings > 0 {
            extra.push_str(&format!(", {}", plural(s.warnings, "warning")));
        }
        if let Some(by) = &s.published_by {
            extra.push_str(&format!(", published by {}", line(by, 60)));
        } else if s.agent == cairn_core::archive::Agent::Atif {
            // A trajectory read with `cairn import`: not this machine's own transcript.
            extra.push_str(", imported");
        }
        writeln!(
            out,
            "{}  {:<width$}  {}  {}, {}{}",
            short_time(s.updated_at.as_deref()),
            ran_by(s.agent, s.ran_by.as_deref()),
            line(&place, 40),
            plural(s.turn_count, "turn"),
            plural(s.record_count, "record"),
            extra
        )?;
        writeln!(out, "    {}", line(title, 100))?;
        if keys {
            writeln!(out, "    {}", clean(&s.session_key))?;
        }
    }
    Ok(())
}

/// Sessions ranked by `search --sessions`.
pub fn session_hits(
    out: &mut impl Write,
    hits: &[cairn_core::views::search::SessionHit],
    keys: bool,
) -> Result<()> {
    if hits.is_empty() {
        writeln!(out, "No sessions match.")?;
        return Ok(());
    }
    for (i, h) in hits.iter().enumerate() {
        let title = h
            .title
            .as_deref()
            .or(h.project.as_deref())
            .unwrap_or("untitled session");
        writeln!(
            out,
            "{:>2}. {}  {} {}  ({})",
            i + 1,
            short_time(h.started_at.as_deref()),
            h.agent,
            line(title, 70),
            line(&h.match_reasons.join(", "), 40)
        )?;
        for t in &h.turns {
            let snippet = marked(&t.snippet);
            writeln!(out, "    #{} {}", t.ordinal, line(&snippet, 130))?;
        }
        if !h.paths.is_empty() {
            writeln!(out, "    edited {}", line(&h.paths.join(", "), 130))?;
        }
        if !h.links.is_empty() {
            writeln!(out, "    linked to {}", line(&h.links.join(", "), 130))?;
        }
        if keys {
            writeln!(out, "    {}", clean(&h.session_key))?;
        }
    }
    Ok(())
}

/// After a search's list cut at `--limit` (`more`: the search found one past it): that there
/// are more, and the flag that shows them. Not counted: a count is a second pass over every
/// match, which a common word makes as slow as the search.
pub fn more_hits(out: &mut impl Write, more: bool, limit: u32, noun: &str) -> Result<()> {
    if more {
        writeln!(
            out,
            "{} shown; more match (--limit {} shows more).",
            cairn_core::text::plural(limit, noun),
            limit.saturating_mul(2)
        )?;
    }
    Ok(())
}

/// `cairn why`: the commits, then each session with its evidence and turns.
pub fn why(out: &mut impl Write, a: &cairn_core::views::why::WhyAnswer, keys: bool) -> Result<()> {
    if let Some(path) = &a.path {
        let range = a
            .lines
            .map(|r| {
                if r.start == r.end {
                    format!(":{}", r.start)
                } else {
                    format!(":{}-{}", r.start, r.end)
                }
            })
            .unwrap_or_default();
        writeln!(out, "{}{range}", clean(path))?;
    }
    for c in &a.commits {
        let lines = if c.lines.is_empty() {
            String::new()
        } else {
            format!("  (lines {})", line_list(&c.lines))
        };
        writeln!(
            out,
            "commit {}  {}  {}{lines}",
            clean(&c.id[..c.id.len().min(10)]),
            short_time(c.time.as_deref()),
            line(&c.subject, 80)
        )?;
    }
    if !a.uncommitted_lines.is_empty() {
        writeln!(
            out,
            "not committed yet: lines {}",
            line_list(&a.uncommitted_lines)
        )?;
    }
    if a.sessions.is_empty() {
        writeln!(
            out,
            "No session explains this: no captured session is linked to it or edited it."
        )?;
        return Ok(());
    }
    // A description is searched, not traced: its figures are the search's scores relative to
    // the best, which read as a confidence they do not carry. The order says what they would.
    let searched = a.kind == cairn_core::views::why::WhyKind::Description;
    let figure = |c: f64| {
        if searched {
            String::new()
        } else {
            format!(" {c:.2}")
        }
    };
    for (i, s) in a.sessions.iter().enumerate() {
        let title = s
            .title
            .as_deref()
            .or(s.project.as_deref())
            .unwrap_or("untitled session");
        writeln!(
            out,
            "{:>2}.{}  {}  {} {}",
            i + 1,
            figure(s.confidence),
            short_time(s.started_at.as_deref()),
            s.agent,
            line(title, 70)
        )?;
        for e in &s.evidence {
            writeln!(
                out,
                "    {}{}: {}",
                clean(&e.kind),
                figure(e.confidence),
                line(&e.detail, 120)
            )?;
        }
        for t in s.turns.iter().take(5) {
            let at = t
                .turn_index
                .map_or_else(String::new, |i| format!("turn {i}, "));
            writeln!(
                out,
                "    → {at}record #{} ({}{}): {}",
                t.ordinal,
                clean(&t.evidence),
                figure(t.confidence),
                line(&t.detail, 110)
            )?;
        }
        if s.turns.len() > 5 {
            writeln!(
                out,
                "    … {} more turns (--json lists them)",
                s.turns.len() - 5
            )?;
        }
        if keys {
            writeln!(out, "    {}", clean(&s.session_key))?;
        }
    }
    Ok(())
}

/// `3, 5-9, 12`.
fn line_list(lines: &[u32]) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let start = lines[i];
        let mut end = start;
        while i + 1 < lines.len() && lines[i + 1] == end + 1 {
            i += 1;
            end = lines[i];
        }
        parts.push(if start == end {
            start.to_string()
        } else {
            format!("{start}-{end}")
        });
        i += 1;
    }
    parts.join(", ")
}

/// The line a search by meaning prints when `n` documents of `store` still wait for their
/// vectors: how `mode` treated them and the command that computes them. Nothing when none wait.
pub fn vectors_pending(
    out: &mut impl Write,
    store: cairn_core::semantic::vectors::VectorStore,
    n: u32,
    mode: cairn_core::semantic::Mode,
) -> Result<()> {
    if n == 0 {
        return Ok(());
    }
    let one = n == 1;
    writeln!(
        out,
        "{} {} for {} vector, so {} searched by words only{}: `{}` computes {}.",
        store.count(n),
        if one { "waits" } else { "wait" },
        if one { "its" } else { "their" },
        if one { "it is" } else { "they are" },
        if mode == cairn_core::semantic::Mode::Vector {
            " in hybrid mode and not at all here"
        } else {
            ""
        },
        store.build_command(),
        if one { "it" } else { "them" },
    )?;
    Ok(())
}

pub fn search(out: &mut impl Write, answer: &SearchAnswer, keys: bool) -> Result<()> {
    use cairn_core::semantic::Mode;
    let (hits, mode) = (&answer.hits, answer.mode);
    if hits.is_empty() {
        let why = match mode {
            Mode::Lexical => "No matches.",
            Mode::Hybrid => {
                "No matches: no record holds every word, and no turn is close enough in meaning."
            }
            Mode::Vector => "No turn is close enough in meaning.",
        };
        writeln!(out, "{why}")?;
        return Ok(());
    }
    for h in hits {
        let who = h.tool_name.as_deref().or(h.role.as_deref()).unwrap_or("-");
        let title = h
            .title
            .as_deref()
            .or(h.project.as_deref())
            .unwrap_or("untitled session");
        writeln!(
            out,
            "{}  {}  #{} {} {}{}{}",
            short_time(h.timestamp.as_deref()),
            line(title, 60),
            h.ordinal,
            clean(&h.kind),
            line(who, 30),
            if h.retracted_at.is_some() {
                " (retracted by the agent)"
            } else {
                ""
            },
            h.published_by
                .as_deref()
                .map(|p| format!(" (published by {}, a teammate's text)", line(p, 40)))
                .unwrap_or_default()
        )?;
        let snippet = marked(&h.snippet);
        writeln!(out, "    {}", line(&snippet, 140))?;
        if let Some(score) = h.score {
            writeln!(
                out,
                "    score={score:.4} match={}",
                line(&h.match_reasons.join(","), 80)
            )?;
        }
        if keys {
            writeln!(
                out,
                "    {} {}",
                clean(&h.session_key),
                clean(h.turn_key.as_deref().unwrap_or("-"))
            )?;
        }
    }
    Ok(())
}

/// Where the file an edit replaced was kept, if it was.
pub fn backup(out: &mut impl Write, backup: Option<&std::path::Path>) -> Result<()> {
    if let Some(b) = backup {
        writeln!(
            out,
            "Backup of the previous file: {}",
            clean(&b.display().to_string())
        )?;
    }
    Ok(())
}

/// What `hooks uninstall` did (or would do).
pub fn hook_uninstall(out: &mut impl Write, r: &cairn_core::hooks::HookInstall) -> Result<()> {
    let path = clean(&r.path.display().to_string());
    let agent = r.agent;
    match (r.changed, r.dry_run) {
        (false, _) => writeln!(
            out,
            "No Cairn hook for {agent} in {path}: nothing to remove."
        )?,
        (true, true) => {
            writeln!(
                out,
                "Would remove Cairn's {agent} hooks from {path} (dry run). Nothing written; the change:"
            )?;
            write!(out, "{}", clean(&r.diff))?;
        }
        (true, false) => {
            writeln!(out, "Removed Cairn's {agent} hooks from {path}.")?;
            backup(out, r.backup.as_deref())?;
            writeln!(
                out,
                "Sessions already captured stay; `cairn sync` still reads new ones."
            )?;
        }
    }
    for note in &r.notes {
        writeln!(out, "Note: {}", clean(note))?;
    }
    Ok(())
}

pub fn hook_install(
    out: &mut impl Write,
    r: &cairn_core::hooks::HookInstall,
    memory: bool,
) -> Result<()> {
    use cairn_core::hooks::HookChange;
    let path = clean(&r.path.display().to_string());
    let agent = r.agent;
    if !r.changed {
        let brief = if memory { "with" } else { "without" };
        writeln!(
            out,
            "The {agent} hook is already installed in {path}, {brief} the brief at session start."
        )?;
    } else {
        // One line per hook the change touches, saying what it does.
        for (change, what) in [
            (r.capture, "capture hook"),
            (r.memory, "session-start brief"),
        ] {
            let (done, verb, place) = match change {
                HookChange::Unchanged => continue,
                HookChange::Added => ("Added", "add", format!("to {path}")),
                HookChange::Updated => {
                    ("Updated", "update", format!("in {path} to run this cairn"))
                }
                HookChange::Removed => ("Removed", "remove", format!("from {path}")),
            };
            if r.dry_run {
                writeln!(out, "Would {verb} the {agent} {what} {place} (dry run).")?;
            } else {
                writeln!(out, "{done} the {agent} {what} {place}.")?;
            }
        }
        if r.dry_run {
            writeln!(out, "Nothing written; the change:")?;
            write!(out, "{}", clean(&r.diff))?;
        } else {
            backup(out, r.backup.as_deref())?;
        }
    }
    for note in &r.notes {
        writeln!(out, "Note: {}", clean(note))?;
    }
    Ok(())
}

/// `user` -> `assistant`, each cut to 120 characters.
fn summary(previews: &[String]) -> String {
    let side = |prefix: &str| {
        previews
            .iter()
            .find_map(|p| p.strip_prefix(prefix))
            .map(|t| line(t, 120))
    };
    match (side("user: "), side("assistant: ")) {
        (Some(u), Some(a)) => format!("{u} -> {a}"),
        (Some(u), None) => u,
        (None, Some(a)) => a,
        (None, None) => String::new(),
    }
}

/// The agent a session shows: the one that ran it for an imported or pulled trajectory (a
/// plain name, checked by the core), else the agent Cairn read it as.
fn ran_by(agent: cairn_core::archive::Agent, ran_by: Option<&str>) -> String {
    line(ran_by.unwrap_or(agent.as_str()), 40)
}

fn session_name(agent: &str, title: Option<&str>) -> String {
    match title {
        Some(t) => format!("{agent} session \"{}\"", line(t, 60)),
        None => format!("{agent} session"),
    }
}

pub fn skim(out: &mut impl Write, v: &cairn_core::views::skim::SkimView, keys: bool) -> Result<()> {
    // The target as skim takes it back (`branch main`), its key under --keys.
    let target = if keys {
        format!("{} {}", v.target_kind.as_str(), clean(&v.target_key))
    } else {
        clean(&cairn_core::git::targets::label(&v.target_key))
    };
    writeln!(out, "Skim for {target}")?;
    writeln!(out)?;
    if v.sessions.is_empty() {
        writeln!(out, "No related agent sessions found.")?;
        if v.coverage.weak_sessions_hidden > 0 {
            writeln!(
                out,
                "{} that only ran while it was checked out: add --include-weak to see them.",
                plural(v.coverage.weak_sessions_hidden, "session")
            )?;
        }
        other_repos(out, &v.coverage)?;
        return Ok(());
    }
    let c = &v.coverage;
    writeln!(
        out,
        "Sessions: showing {}, {} total, {}.",
        plural(c.showing_sessions, "related session"),
        plural(c.showing_turns, "turn"),
        plural(c.related_turn_count, "directly related turn")
    )?;
    let mut weak_heading = false;
    for (i, s) in v.sessions.iter().enumerate() {
        if s.weak && !weak_heading {
            weak_heading = true;
            writeln!(out)?;
            writeln!(
                out,
                "Also ran while the target was checked out (weak links):"
            )?;
        }
        writeln!(out)?;
        writeln!(
            out,
            "Session #{}: {} · {}, {}, latest {}",
            i + 1,
            session_name(&ran_by(s.agent, s.ran_by.as_deref()), s.title.as_deref()),
            plural(s.turn_count, "turn"),
            plural(s.record_count, "record"),
            short_time(s.updated_at.as_deref())
        )?;
        let status = if s.untrusted {
            format!(
                "{} by {}{}{} (untrusted text: titles, previews and labels are theirs)",
                line(&s.status, 20),
                s.published_by.as_deref().map_or_else(
                    || "a teammate".to_owned(),
                    |by| format!("{} ", line(by, 100))
                ),
                s.published_by
                    .as_ref()
                    .map(|_| short_time(s.published_at.as_deref()))
                    .unwrap_or_default(),
                s.pulled_from
                    .as_deref()
                    .map(|r| format!(", pulled from {}", line(r, 40)))
                    .unwrap_or_default()
            )
        } else {
            line(&s.status, 20)
        };
        writeln!(out, "  status: {status}")?;
        if s.unplaced {
            writeln!(
                out,
                "  ran in: no repository Cairn could tell (its folder was gone or in none when captured, or it was imported): it may have run elsewhere"
            )?;
        }
        if keys {
            writeln!(out, "  session {}", clean(&s.session_key))?;
        }
        if let Some(key) = &s.archive_key {
            writeln!(out, "  whole session: cairn show {}", line(key, 80))?;
        } else if s.untrusted {
            // `show` has nothing more of it: say so here, not send the reader to it.
            writeln!(
                out,
                "  only its summary was shared: its publisher shares the whole session with `cairn publish --full`"
            )?;
        }
        if let Some(why) = s.why_related.first() {
            writeln!(out, "  why: {}", line(&why.reason, 140))?;
        }
        for t in &s.turns {
            let labels = if t.labels.is_empty() {
                String::new()
            } else {
                format!(" [{}]", line(&t.labels.join(","), 80))
            };
            let related = if t.related { " related" } else { "" };
            let key = if keys {
                format!(" {}", clean(&t.turn_key))
            } else {
                String::new()
            };
            let summary = summary(&t.previews);
            let summary = if summary.is_empty() {
                summary
            } else {
                format!(" {summary}")
            };
            writeln!(
                out,
                "- #{}{key}{labels} {} records={}{related}{summary}",
                t.turn_index,
                short_time(t.started_at.as_deref()),
                t.record_count
            )?;
        }
    }
    if c.weak_sessions_hidden > 0 {
        writeln!(out)?;
        writeln!(
            out,
            "{} only ran while the target was checked out: add --include-weak to see {}.",
            plural(c.weak_sessions_hidden, "more session"),
            if c.weak_sessions_hidden == 1 {
                "it"
            } else {
                "them"
            }
        )?;
    }
    if c.other_repo_sessions_hidden > 0 {
        writeln!(out)?;
        other_repos(out, c)?;
    }
    writeln!(out)?;
    // Teammates' summaries have no turns to show: the pointer to `show` is for the others.
    let summaries = v
        .sessions
        .iter()
        .filter(|s| s.untrusted && s.archive_key.is_none())
        .count();
    if summaries == v.sessions.len() {
        writeln!(
            out,
            "This is a skim of teammates' summaries: only their publishers' `cairn publish --full` shares the whole sessions, which `cairn show` then opens."
        )?;
        return Ok(());
    }
    writeln!(
        out,
        "This is a skim: all related sessions and turns, abbreviated. For exact detail, use `cairn show <session> --turn <turn>` with the keys {}{}.",
        if keys {
            "above"
        } else {
            "from `cairn --keys skim` (or `cairn --json skim`)"
        },
        if summaries > 0 {
            " (not for a teammate's session shared as a summary only)"
        } else {
            ""
        }
    )?;
    Ok(())
}

/// The sessions of other repositories a scoped skim left out, and how to see them.
fn other_repos(out: &mut impl Write, c: &cairn_core::views::skim::SkimCoverage) -> Result<()> {
    let n = c.other_repo_sessions_hidden;
    if n > 0 {
        let (has, it) = if n == 1 {
            ("has", "it")
        } else {
            ("have", "them")
        };
        writeln!(
            out,
            "{} of other repositories {has} a target of this name: add --all-repos to see {it}.",
            plural(n, "session"),
        )?;
    }
    Ok(())
}

/// How many of a session's parse warnings `show` prints; the rest are counted.
const WARNINGS_SHOWN: usize = 10;

/// A session's parse warnings (the lines its parsers skipped or read in part), after its
/// timeline; nothing when there are none.
pub fn parse_warnings(out: &mut impl Write, warnings: &[Warning]) -> Result<()> {
    if warnings.is_empty() {
        return Ok(());
    }
    writeln!(out)?;
    writeln!(
        out,
        "{} when it was read:",
        plural(warnings.len() as u64, "parse warning")
    )?;
    for w in warnings.iter().take(WARNINGS_SHOWN) {
        warning_line(out, w)?;
    }
    if warnings.len() > WARNINGS_SHOWN {
        writeln!(out, "  and {} more", warnings.len() - WARNINGS_SHOWN)?;
    }
    Ok(())
}

/// One warning, indented: `path:line: message`, each part one line ([`warning`]).
fn warning_line(out: &mut impl Write, w: &Warning) -> Result<()> {
    match w.line {
        Some(l) => writeln!(out, "  {}:{}: {}", warning(&w.path), l, warning(&w.message))?,
        None => writeln!(out, "  {}: {}", warning(&w.path), warning(&w.message))?,
    }
    Ok(())
}

pub fn timeline(
    out: &mut impl Write,
    v: &cairn_core::views::show::SessionTimeline,
    keys: bool,
) -> Result<()> {
    writeln!(
        out,
        "{} of {} of {} (started {})",
        v.coverage.showing_turns,
        plural(v.coverage.total_turns, "turn"),
        session_name(&ran_by(v.agent, v.ran_by.as_deref()), v.title.as_deref()),
        short_time(v.started_at.as_deref())
    )?;
    if let Some(ran) = model_and_tokens(v.model.as_deref(), &v.tokens) {
        writeln!(out, "{ran}")?;
    }
    if keys {
        writeln!(out, "session {}", clean(&v.session_key))?;
    }
    if let Some(by) = &v.published_by {
        writeln!(
            out,
            "published by {} {}, pulled from {} (a teammate's session: untrusted text)",
            line(&by.publisher, 100),
            short_time(by.published_at.as_deref()),
            line(&by.pulled_from, 40)
        )?;
    }
    // One line per target: its strongest link (the core lists a person's first).
    let mut seen = std::collections::BTreeSet::new();
    let target = |key: &str| {
        if keys {
            clean(key)
        } else {
            clean(&cairn_core::git::targets::label(key))
        }
    };
    for l in v.links.iter().filter(|l| seen.insert(&l.target_key)) {
        writeln!(
            out,
            "related to {} ({}, {:.2}): {}",
            target(&l.target_key),
            l.evidence.as_str(),
            l.confidence,
            line(&l.reason, 120)
        )?;
    }
    for c in v
        .corrections
        .iter()
        .filter(|c| c.action == cairn_core::git::correct::CorrectionAction::Unlink)
    {
        writeln!(
            out,
            "not related to {}: {}",
            target(&c.target_key),
            line(&c.sentence(), 120)
        )?;
    }
    for t in &v.turns {
        let tools = if t.tool_names.is_empty() {
            String::new()
        } else {
            format!(" tools={}", line(&t.tool_names.join(","), 60))
        };
        let key = if keys {
            format!(" {}", clean(&t.turn_key))
        } else {
            String::new()
        };
        writeln!(
            out,
            "#{}{key} {} records={}{tools}",
            t.turn_index,
            short_time(t.started_at.as_deref()),
            t.record_count
        )?;
        if let Some(u) = &t.user_preview {
            writeln!(out, "  user: {}", line(u, 120))?;
        }
        if let Some(a) = &t.assistant_preview {
            writeln!(out, "  assistant: {}", line(a, 120))?;
        }
    }
    Ok(())
}

/// The model a session ran with and the tokens it used, as the window's session header gives
/// them (`model claude-opus-4 · tokens 1200 in, 340 out, 9000 cache read`); the cache and
/// reasoning counts only when there are some. `None` when neither is known: a format without
/// usage leaves every count 0, which says nothing.
fn model_and_tokens(model: Option<&str>, t: &cairn_core::archive::TokenUsage) -> Option<String> {
    let mut parts = Vec::new();
    if let Some(m) = model.filter(|m| !cairn_core::text::is_blank(m)) {
        parts.push(format!("model {}", line(m, 80)));
    }
    if !t.is_unknown() {
        let mut counts = vec![format!("{} in", t.input), format!("{} out", t.output)];
        for (n, what) in [
            (t.cache_read, "cache read"),
            (t.cache_creation, "cache write"),
            (t.reasoning, "reasoning"),
        ] {
            if n > 0 {
                counts.push(format!("{n} {what}"));
            }
        }
        parts.push(format!("tokens {}", counts.join(", ")));
    }
    (!parts.is_empty()).then(|| parts.join(" · "))
}

/// How a tool's result ended, for its record's line: ` failed (exit 101)`, ` could not run`,
/// ` exit 3` for a non-zero code the agent did not call a failure; nothing for a success or a
/// record that is no tool's result.
fn ended(r: &cairn_core::views::show::RecordView) -> String {
    use cairn_core::archive::Outcome;
    let code = r
        .exit_code
        .map(|c| format!(" (exit {c})"))
        .unwrap_or_default();
    match r.outcome.as_deref().and_then(Outcome::parse) {
        Some(Outcome::Failed) => format!(" failed{code}"),
        Some(Outcome::CouldNotExecute) => format!(" could not run{code}"),
        _ => match r.exit_code {
            Some(c) if c != 0 => format!(" exit {c}"),
            _ => String::new(),
        },
    }
}

/// One turn's records; `cited` (first and last ordinal), the records a link cites: marked
/// `>` (the others indented to match).
pub fn turn_records(
    out: &mut impl Write,
    session: &cairn_core::views::show::SessionTimeline,
    v: &cairn_core::views::show::TurnRecords,
    cited: Option<(u32, u32)>,
    keys: bool,
) -> Result<()> {
    let marked = match cited {
        Some((a, b)) if a == b => format!(", record #{a} marked >"),
        Some((a, b)) => format!(", records #{a}-#{b} marked >"),
        None => String::new(),
    };
    writeln!(
        out,
        "{} of {} of turn #{} of {}{marked}",
        v.coverage.showing_records,
        plural(v.coverage.total_records, "record"),
        v.turn_index,
        // An imported or pulled session names the agent that ran it, as its timeline does.
        session_name(
            &ran_by(session.agent, session.ran_by.as_deref()),
            session.title.as_deref()
        )
    )?;
    if keys {
        writeln!(
            out,
            "session {} turn {}",
            clean(&v.session_key),
            clean(&v.turn_key)
        )?;
    }
    if v.coverage.has_more_before {
        // The turn's prompt is its first record: say how to reach it. Around cited records,
        // those after them may be left out too: the first shown says how many come before.
        let before = match (cited, v.records.first()) {
            (Some(_), Some(first)) => first.turn_record_index,
            _ => v
                .coverage
                .total_records
                .saturating_sub(v.coverage.showing_records),
        };
        let whole = match cited {
            Some(_) => format!(
                "--turn {} --limit {}",
                v.turn_index, v.coverage.total_records
            ),
            None => format!("--limit {}", v.coverage.total_records),
        };
        writeln!(
            out,
            "(its first {} left out, the prompt with them: {whole} shows the whole turn)",
            plural(before, "record"),
        )?;
    }
    for r in &v.records {
        let who = r.tool_name.as_deref().or(r.role.as_deref()).unwrap_or("-");
        let body = r.text.as_deref().or(r.tool_input.as_deref()).unwrap_or("");
        let preview = if body.trim().is_empty() {
            String::new()
        } else {
            format!(" {}", line(body, 120))
        };
        let retracted = if r.retracted_at.is_some() {
            " (retracted by the agent)"
        } else {
            ""
        };
        let mark = match cited {
            Some((a, b)) if (a..=b).contains(&r.ordinal) => "> ",
            Some(_) => "  ",
            None => "",
        };
        writeln!(
            out,
            "{mark}#{} {} {} {}{}{retracted}{preview}",
            r.ordinal,
            time(r.timestamp.as_deref()),
            clean(&r.kind),
            line(who, 60),
            ended(r)
        )?;
    }
    Ok(())
}

/// `cairn why --write-notes`: one line a commit, each note in full with --dry-run, a summary.
pub fn notes(
    out: &mut impl Write,
    r: &cairn_core::views::why::notes::NotesReport,
    keys: bool,
) -> Result<()> {
    use cairn_core::views::why::notes::NoteAction;
    for c in &r.commits {
        let action = match (c.action, r.dry_run) {
            (NoteAction::Written, false) => "wrote",
            (NoteAction::Written, true) => "would write",
            (NoteAction::Replaced, false) => "replaced",
            (NoteAction::Replaced, true) => "would replace",
            (NoteAction::Unchanged, _) => "unchanged",
            (NoteAction::Nothing, _) => "no note",
            (NoteAction::Skipped, _) => "skipped",
        };
        let sessions = c
            .sessions
            .iter()
            .map(|s| {
                // The session's key only when asked (`--keys`), as everywhere a person reads.
                let key = if keys {
                    format!(" {}", line(&s.session_key, 60))
                } else {
                    " session".to_owned()
                };
                format!("{}{key} ({} lines)", clean(&s.agent), s.lines)
            })
            .collect::<Vec<_>>()
            .join(", ");
        writeln!(
            out,
            "{}  {action}: {} of {} added lines{}  {}",
            clean(&c.commit[..c.commit.len().min(10)]),
            c.attributed,
            c.added,
            if sessions.is_empty() {
                String::new()
            } else {
                format!(" by {sessions}")
            },
            line(&c.subject, 60)
        )?;
        if let Some(reason) = &c.reason {
            writeln!(out, "    {}", line(reason, 160))?;
        }
        if let Some(note) = &c.note {
            for l in note.lines() {
                writeln!(out, "    | {}", clean(l))?;
            }
        }
    }
    let n = |a| r.count(a) as u32;
    let done = if r.dry_run {
        "would be written"
    } else {
        "written"
    };
    writeln!(
        out,
        "{} {done}, {} replaced, {} unchanged, {} without a note, {} skipped{} ({}).",
        plural(n(NoteAction::Written), "note"),
        n(NoteAction::Replaced),
        n(NoteAction::Unchanged),
        n(NoteAction::Nothing),
        n(NoteAction::Skipped),
        if r.merges > 0 {
            format!(", {} left out", plural(r.merges, "merge"))
        } else {
            String::new()
        },
        clean(&r.notes_ref)
    )?;
    if !r.dry_run && n(NoteAction::Written) + n(NoteAction::Replaced) > 0 {
        writeln!(
            out,
            "Share them with `git push <remote> {}`.",
            clean(&r.notes_ref)
        )?;
    }
    Ok(())
}

pub fn publish(out: &mut impl Write, r: &cairn_core::git::publish::PublishReport) -> Result<()> {
    let verb = if r.dry_run { "Would share" } else { "Shared" };
    writeln!(
        out,
        "{verb} {} for {}",
        plural(r.sessions, "session"),
        clean(&cairn_core::git::targets::label(&r.target_key))
    )?;
    if r.weak_left_out > 0 {
        writeln!(
            out,
            "Left out {} that only ran while it was checked out (skim with --include-weak lists them): only sessions that worked on it are published.",
            plural(r.weak_left_out, "session")
        )?;
    }
    let unknown = r.unplaced_left_out;
    if unknown > 0 {
        let why = match r.unplaced_redacted {
            0 => "their folder was in no repository Cairn could read when they were captured (gone, or never one)".to_owned(),
            n if n == unknown => "their folder's name was redacted when they were captured (it looked like a secret), so their repository cannot be told".to_owned(),
            n => format!(
                "{n} had their folder's name redacted when they were captured (it looked like a secret), the others ran in no repository Cairn could read"
            ),
        };
        writeln!(
            out,
            "Left out {} linked to it whose repository is not known: {why}. A session is shared in its own repository's refs only.",
            plural(unknown, "session")
        )?;
    }
    if r.sessions == 0 {
        return Ok(());
    }
    writeln!(
        out,
        "Turns: {} total, {} directly related.",
        r.turns, r.related_turns
    )?;
    if r.full {
        writeln!(
            out,
            "In full: {} ({} compressed), published by {}.",
            plural(r.transcripts, "redacted transcript"),
            bytes_human(r.transcript_bytes),
            line(r.publisher.as_deref().unwrap_or("unknown"), 100)
        )?;
    }
    for (i, d) in r.documents.iter().enumerate() {
        let s = &d.session;
        writeln!(
            out,
            "Session #{}: {}, {} directly related, latest {}",
            i + 1,
            plural(s.turn_count, "turn"),
            s.related_turn_count,
            short_time(s.updated_at.as_deref())
        )?;
        if r.dry_run {
            if let Some(title) = &s.title {
                writeln!(out, "  title: {}", line(title, 100))?;
            }
            for w in s.why_related.iter().take(3) {
                writeln!(out, "  why: {}", line(&w.reason, 120))?;
            }
            for p in &s.previews {
                writeln!(out, "  {}", line(p, 120))?;
            }
        }
    }
    if r.dry_run {
        writeln!(
            out,
            "Dry run: nothing was written. The text above is exactly what would leave (see --json for all of it)."
        )?;
    } else {
        writeln!(
            out,
            "Written under refs/cairn/sessions/; share them with `cairn push` (or git push <remote> 'refs/cairn/sessions/*:refs/cairn/sessions/*')."
        )?;
    }
    Ok(())
}

/// A byte count a person reads: `812 B`, `4.2 KiB`, `3.1 MiB`.
fn bytes_human(n: u64) -> String {
    match n {
        0..1024 => format!("{n} B"),
        1024..1_048_576 => format!("{:.1} KiB", n as f64 / 1024.0),
        _ => format!("{:.1} MiB", n as f64 / 1_048_576.0),
    }
}

pub fn push(out: &mut impl Write, r: &cairn_core::git::publish::PushReport) -> Result<()> {
    writeln!(
        out,
        "Pushed {} to {} ({} unchanged).",
        plural(r.pushed, "published session ref"),
        clean(&r.remote),
        r.unchanged
    )?;
    if r.pushed + r.unchanged + r.withdrawn + r.not_own == 0 && r.refused.is_empty() {
        writeln!(
            out,
            "Nothing of yours is published in this repository yet: `cairn publish <branch>` first, then push."
        )?;
    }
    if r.withdrawn > 0 {
        writeln!(
            out,
            "Withdrew the copies of {} forgotten here (here and at {}).",
            plural(r.withdrawn, "session"),
            clean(&r.remote)
        )?;
    }
    if !r.refused.is_empty() {
        writeln!(
            out,
            "{} refused {}:",
            clean(&r.remote),
            plural(r.refused.len(), "ref")
        )?;
        for s in &r.refused {
            writeln!(out, "  {}: {}", line(&s.refname, 200), line(&s.reason, 300))?;
        }
    }
    if r.not_own > 0 {
        writeln!(
            out,
            "Left out {} under refs/cairn/sessions/ whose session this archive did not capture (a teammate's, fetched there by an older Cairn): only your own are pushed.",
            plural(r.not_own, "ref")
        )?;
    }
    Ok(())
}

pub fn pull(out: &mut impl Write, r: &cairn_core::git::publish::PullReport) -> Result<()> {
    writeln!(
        out,
        "Imported {} from {} ({} unchanged).",
        plural(r.sessions_imported, "published session"),
        clean(&r.remote),
        r.unchanged
    )?;
    let seen = r.sessions_imported + r.unchanged + r.forgotten + r.withdrawn + r.skipped_more;
    if seen == 0 && r.skipped.is_empty() {
        writeln!(
            out,
            "{} has no published sessions (no refs/cairn/sessions/*): teammates share theirs with `cairn publish` and `cairn push`.",
            clean(&r.remote)
        )?;
    }
    if r.transcripts_imported > 0 {
        writeln!(
            out,
            "{} in full: `cairn sessions`, `show`, `search` and `export` read them like your own, marked with their publisher.",
            plural(r.transcripts_imported, "session")
        )?;
    }
    if r.forgotten > 0 {
        writeln!(
            out,
            "Left out {} of sessions you forgot here (`cairn forget`).",
            plural(r.forgotten, "published session")
        )?;
    }
    if r.withdrawn > 0 {
        writeln!(
            out,
            "Dropped {} their publishers withdrew from {} (and the sessions pulled from them).",
            plural(r.withdrawn, "published session"),
            clean(&r.remote)
        )?;
    }
    let skipped = r.skipped.len() as u32 + r.skipped_more;
    if skipped > 0 {
        writeln!(out, "Skipped {}:", plural(skipped, "ref"))?;
        for s in &r.skipped {
            writeln!(out, "  {}: {}", line(&s.refname, 200), line(&s.reason, 300))?;
        }
        if r.skipped_more > 0 {
            writeln!(out, "  … and {} more", r.skipped_more)?;
        }
    }
    Ok(())
}

pub fn doctor(out: &mut impl Write, r: &DoctorReport) -> Result<()> {
    // The details start in one column, after the longest check's name.
    let width = r
        .checks
        .iter()
        .map(|c| clean(&c.name).chars().count())
        .max()
        .unwrap_or(0);
    for c in &r.checks {
        let mark = match c.status {
            Status::Ok => "ok  ",
            Status::Warn => "warn",
            Status::Fail => "FAIL",
        };
        // A detail names folders (a source dir that will not open): one line, as a warning.
        writeln!(
            out,
            "{mark}  {:<width$} {}",
            clean(&c.name),
            warning(&c.detail)
        )?;
    }
    Ok(())
}

/// Whether long work shows its progress: on a terminal unless the output is JSON, and wherever
/// it was asked for (`--progress`).
pub fn shows_progress(asked: bool, json: bool) -> bool {
    use std::io::IsTerminal as _;
    asked || (std::io::stderr().is_terminal() && !json)
}

/// Where a shown progress bar draws: on a terminal, in place; on a stderr that is no terminal
/// (a log, CI: the bar was asked for with `--progress`), as plain lines.
fn draw_target() -> ProgressDrawTarget {
    use std::io::IsTerminal as _;
    if std::io::stderr().is_terminal() {
        ProgressDrawTarget::stderr()
    } else {
        ProgressDrawTarget::term_like(Box::new(PlainLines::default()))
    }
}

/// A bar's redraws as plain lines on stderr, at most one a second and none that repeats the
/// last, and the final state when the bar goes: what a log can hold, without the cursor moves
/// and line clearing a terminal needs.
#[derive(Debug, Default)]
struct PlainLines {
    line: Mutex<String>,
    /// The last line written, and when.
    last: Mutex<Option<(String, std::time::Instant)>>,
    /// The newest line not written yet (it came within the second).
    held: Mutex<Option<String>>,
}

impl PlainLines {
    fn emit(&self, line: &str) {
        let line = line.trim();
        if line.is_empty() {
            return;
        }
        let (Ok(mut last), Ok(mut held)) = (self.last.lock(), self.held.lock()) else {
            return;
        };
        let due = last
            .as_ref()
            .is_none_or(|(_, at)| at.elapsed() >= std::time::Duration::from_secs(1));
        if last.as_ref().is_some_and(|(text, _)| text == line) {
            *held = None;
        } else if due {
            eprintln!("{line}");
            *last = Some((line.to_owned(), std::time::Instant::now()));
            *held = None;
        } else {
            *held = Some(line.to_owned());
        }
    }
}

impl Drop for PlainLines {
    fn drop(&mut self) {
        if let Ok(Some(line)) = self.held.get_mut().map(Option::take) {
            eprintln!("{line}");
        }
    }
}

impl indicatif::TermLike for PlainLines {
    fn width(&self) -> u16 {
        100
    }
    fn move_cursor_up(&self, _: usize) -> std::io::Result<()> {
        Ok(())
    }
    fn move_cursor_down(&self, _: usize) -> std::io::Result<()> {
        Ok(())
    }
    fn move_cursor_right(&self, _: usize) -> std::io::Result<()> {
        Ok(())
    }
    fn move_cursor_left(&self, _: usize) -> std::io::Result<()> {
        Ok(())
    }
    fn write_line(&self, s: &str) -> std::io::Result<()> {
        self.emit(s);
        Ok(())
    }
    fn write_str(&self, s: &str) -> std::io::Result<()> {
        if let Ok(mut line) = self.line.lock() {
            line.push_str(s);
        }
        Ok(())
    }
    fn clear_line(&self) -> std::io::Result<()> {
        if let Ok(mut line) = self.line.lock() {
            line.clear();
        }
        Ok(())
    }
    fn flush(&self) -> std::io::Result<()> {
        let line = self.line.lock().map(|mut l| std::mem::take(&mut *l));
        if let Ok(line) = line {
            self.emit(&line);
        }
        Ok(())
    }
}

/// A style with `template`, whose `{rate}` is a rate a person reads (`12.3/s`, not `12.3456/s`).
fn bar_style(template: &str) -> ProgressStyle {
    ProgressStyle::with_template(template)
        .unwrap_or_else(|_| ProgressStyle::default_bar())
        .with_key(
            "rate",
            |state: &indicatif::ProgressState, w: &mut dyn std::fmt::Write| {
                let _ = write!(w, "{:.1}/s", state.per_sec());
            },
        )
        .progress_chars("=> ")
}

/// A sync's or a reindex's progress over the bytes it reads, drawn on stderr when `enabled`.
pub struct Bar {
    bar: Mutex<Option<ProgressBar>>,
    enabled: bool,
    /// Whether the wait for another capture was said (once a run, bar or not).
    waited: std::sync::atomic::AtomicBool,
}

impl Bar {
    pub fn new(enabled: bool) -> Bar {
        Bar {
            bar: Mutex::new(None),
            enabled,
            waited: std::sync::atomic::AtomicBool::new(false),
        }
    }

    pub fn done(&self) {
        if let Some(bar) = self.bar.lock().ok().and_then(|mut b| b.take()) {
            finish(bar);
        }
    }
}

/// The end of a bar: cleared from a terminal (the report follows); in a log, its final state
/// is the last line (written as the bar goes).
fn finish(bar: ProgressBar) {
    use std::io::IsTerminal as _;
    if std::io::stderr().is_terminal() {
        bar.finish_and_clear();
    } else {
        bar.finish();
    }
}

impl Progress for Bar {
    fn start(&self, files: u64, bytes: u64) {
        if !self.enabled {
            return;
        }
        let bar = ProgressBar::with_draw_target(Some(bytes), draw_target());
        bar.set_style(bar_style(
            "{prefix} [{bar:30}] {bytes}/{total_bytes} ({bytes_per_sec}, {eta} left)",
        ));
        bar.set_prefix(format!("Syncing {files} files"));
        if let Ok(mut slot) = self.bar.lock() {
            *slot = Some(bar);
        }
    }

    fn advance(&self, bytes: u64) {
        if let Ok(slot) = self.bar.lock()
            && let Some(bar) = slot.as_ref()
        {
            bar.inc(bytes);
        }
    }

    /// One line on stderr, with or without a bar (`--json` too: stdout stays the document).
    fn waiting(&self, lock: &Path) {
        if self.waited.swap(true, std::sync::atomic::Ordering::Relaxed) {
            return;
        }
        let file = warning(&lock.display().to_string());
        let line = match held_by(lock) {
            Some(holder) => {
                format!("Waiting for another Cairn capture to finish: {file} is held by {holder}.")
            }
            None => format!(
                "Waiting for another Cairn capture to finish (it holds {file}): a sync, a reindex or the app's live capture; a `cairn sync` stopped with Ctrl-Z holds it until it goes on (`fg`) or ends."
            ),
        };
        match self.bar.lock().ok().as_deref().and_then(Option::as_ref) {
            Some(bar) => bar.println(line),
            None => eprintln!("{line}"),
        }
    }
}

/// A progress bar over a count of documents, drawn on stderr when `enabled`, from the first
/// count that has a total (not a `0/0` frame before the work is counted).
pub struct CountBar {
    bar: Mutex<Option<ProgressBar>>,
    drawn: std::sync::atomic::AtomicBool,
}

impl CountBar {
    pub fn new(enabled: bool, prefix: &str) -> CountBar {
        let bar = enabled.then(|| {
            let bar = ProgressBar::with_draw_target(Some(0), ProgressDrawTarget::hidden());
            bar.set_style(bar_style(
                "{prefix} [{bar:30}] {pos}/{len} ({rate}, {eta} left)",
            ));
            bar.set_prefix(prefix.to_owned());
            bar
        });
        CountBar {
            bar: Mutex::new(bar),
            drawn: std::sync::atomic::AtomicBool::new(false),
        }
    }

    pub fn set(&self, done: u64, total: u64) {
        if let Ok(slot) = self.bar.lock()
            && let Some(bar) = slot.as_ref()
        {
            bar.set_length(total);
            bar.set_position(done);
            if total > 0 && !self.drawn.swap(true, std::sync::atomic::Ordering::Relaxed) {
                bar.set_draw_target(draw_target());
            }
        }
    }

    pub fn done(&self) {
        if let Some(bar) = self.bar.lock().ok().and_then(|mut b| b.take()) {
            finish(bar);
        }
    }
}

pub fn embeddings_status(
    out: &mut impl Write,
    s: &cairn_core::semantic::EmbeddingsStatus,
) -> Result<()> {
    writeln!(
        out,
        "Embedder: {} (refreshed on write: {})",
        clean(&s.provider),
        if s.refresh_on_write { "yes" } else { "no" }
    )?;
    match (&s.fingerprint, &s.problem) {
        (Some(fp), _) => writeln!(out, "Fingerprint: {}", clean(fp))?,
        (None, Some(p)) => writeln!(out, "Problem: {}", clean(p))?,
        (None, None) => {}
    }
    for st in &s.stores {
        let state = if st.fresh { "fresh" } else { "STALE" };
        let pending = st.pending.map_or_else(
            || format!("unknown {}", st.store.unit()),
            |p| st.store.count(p),
        );
        writeln!(
            out,
            "{:<9} {state:<6} {}, {pending} pending, built {}",
            st.store.as_str(),
            plural(st.vectors, "vector"),
            st.built_at
                .as_deref()
                .map_or_else(|| "never".to_owned(), |t| time(Some(t)))
        )?;
        if !st.fresh {
            writeln!(out, "          refresh: {}", clean(&st.build_command))?;
        }
    }
    Ok(())
}

/// An endpoint's base URL as every endpoint is shown: a path or query that could name an
/// account redacted, and any secret in a URL that does not parse (`llm::Endpoint::shown`).
pub fn endpoint(url: &str) -> String {
    clean(&cairn_core::llm::Endpoint::shown(url))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[allow(clippy::unwrap_used)]
    fn doctor_details_start_in_one_column() {
        use cairn_core::doctor::Check;
        let check = |name: &str| Check {
            name: name.to_owned(),
            status: Status::Ok,
            detail: "d".to_owned(),
        };
        let report = DoctorReport {
            checks: vec![check("pi source dir"), check("antigravity source dir")],
        };
        let mut out = Vec::new();
        doctor(&mut out, &report).unwrap();
        let text = String::from_utf8(out).unwrap();
        let columns: Vec<usize> = text.lines().map(|l| l.rfind('d').unwrap()).collect();
        assert_eq!(columns, [29, 29], "{text}");
    }

    #[test]
    #[allow(clippy::unwrap_used)]
    fn session_rows_start_their_place_in_one_column() {
        let session = |agent: &str| -> SessionSummary {
            serde_json::from_value(serde_json::json!({
                "session_key": "k", "agent": agent, "session_id": null, "project": "p",
                "cwd": null, "git_branch": null, "title": "t", "model": null, "started_at": null,
                "updated_at": "2026-01-01T00:00:00Z", "turn_count": 1, "record_count": 2,
                "warnings": 0, "subagent_count": 0, "first_prompt": null
            }))
            .unwrap()
        };
        let mut out = Vec::new();
        sessions(&mut out, &[session("pi"), session("antigravity")], false).unwrap();
        let text = String::from_utf8(out).unwrap();
        let columns: Vec<usize> = text
            .lines()
            .filter(|l| !l.starts_with(' '))
            .map(|l| l.find("  p  ").unwrap())
            .collect();
        assert_eq!(columns, [29, 29], "{text}");
    }

    #[test]
    #[allow(clippy::unwrap_used)]
    fn json_cleans_every_string_and_key_as_human_output_does() {
        let mut out = Vec::new();
        let planted = serde_json::json!({
            "ti\u{1b}[1mtle": "ab\u{200b}cd\u{202e}\u{9b}1me\u{feff}\u{206a}",
            "text": "\u{1b}]0;pwned\u{7}line one\r\n\tline two\u{1b}[2J",
            "n": [1, "main\u{1b}[5m"],
        });
        json_line(&mut out, &planted).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert_eq!(
            text,
            "{\"title\":\"abcde\",\"text\":\"line one\\n\\tline two\",\"n\":[1,\"main\"]}\n"
        );
        // The formatter escapes what a reader would not see, should it reach it.
        let mut raw = Vec::new();
        let mut ser = serde_json::Serializer::with_formatter(&mut raw, InertFormatter(None));
        "a\u{200b}b\u{202e}".serialize(&mut ser).unwrap();
        assert_eq!(String::from_utf8(raw).unwrap(), "\"a\\u200bb\\u202e\"");
    }

    #[test]
    fn clean_strips_escape_sequences() {
        assert_eq!(clean("a\u{1b}[31mred\u{7}\r\nb\tc"), "ared\nb\tc");
        assert_eq!(line("  one\n two  ", 3), "one…");
    }
}

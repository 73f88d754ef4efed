//! Human and JSON rendering. Everything printed passes [`clean`], so a transcript that holds
//! terminal escape sequences cannot drive the reader's terminal.

use std::io::Write;
use std::sync::Mutex;

use anyhow::Result;
use cairn_core::archive::capture::{Progress, SyncReport};
use cairn_core::doctor::{DoctorReport, Status};
use cairn_core::views::search::SearchHit;
use cairn_core::views::sessions::SessionSummary;
use indicatif::{ProgressBar, ProgressStyle};
use serde::Serialize;

/// Drop control characters (ESC, BEL, CR…) except newline and tab.
pub fn clean(text: &str) -> String {
    text.chars()
        .filter(|c| !c.is_control() || *c == '\n' || *c == '\t')
        .collect()
}

/// One line: whitespace collapsed, cleaned, cut at `max` characters.
fn line(text: &str, max: usize) -> String {
    let collapsed = clean(&text.split_whitespace().collect::<Vec<_>>().join(" "));
    match collapsed.char_indices().nth(max) {
        Some((cut, _)) => format!("{}…", &collapsed[..cut]),
        None => collapsed,
    }
}

fn plural(n: u32, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

pub fn json<T: Serialize>(out: &mut impl Write, value: &T) -> Result<()> {
    serde_json::to_writer_pretty(&mut *out, value)?;
    writeln!(out)?;
    Ok(())
}

/// `2026-02-12T10:31:05.123Z` → `2026-02-12 10:31`.
fn short_time(ts: Option<&str>) -> String {
    match ts {
        Some(t) if t.len() >= 16 => format!("{} {}", &t[..10], &t[11..16]),
        Some(t) => t.to_owned(),
        None => "unknown time".to_owned(),
    }
}

pub fn sync_report(out: &mut impl Write, r: &SyncReport) -> Result<()> {
    writeln!(
        out,
        "Scanned {} files: {} new sessions, {} updated, {} records added ({:.1} MB read).",
        r.files_scanned,
        r.sessions_added,
        r.sessions_updated,
        r.records_added,
        r.bytes_read / 1_000_000.0
    )?;
    if !r.warnings.is_empty() {
        writeln!(out, "{} warnings:", r.warnings.len())?;
        for w in &r.warnings {
            match w.line {
                Some(l) => writeln!(out, "  {}:{}: {}", clean(&w.path), l, clean(&w.message))?,
                None => writeln!(out, "  {}: {}", clean(&w.path), clean(&w.message))?,
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
        writeln!(
            out,
            "{}  {:<6}  {}  {}, {}{}",
            short_time(s.updated_at.as_deref()),
            s.agent.as_str(),
            line(&place, 40),
            plural(s.turn_count, "turn"),
            plural(s.record_count, "record"),
            extra
        )?;
        writeln!(out, "    {}", line(title, 100))?;
        if keys {
            writeln!(out, "    {}", s.session_key)?;
        }
    }
    Ok(())
}

pub fn search(out: &mut impl Write, hits: &[SearchHit], keys: bool) -> Result<()> {
    if hits.is_empty() {
        writeln!(out, "No matches.")?;
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
            "{}  {}  #{} {} {}",
            short_time(h.timestamp.as_deref()),
            line(title, 60),
            h.ordinal,
            h.kind,
            line(who, 30)
        )?;
        writeln!(out, "    {}", line(&h.snippet, 140))?;
        if keys {
            writeln!(
                out,
                "    {} {}",
                h.session_key,
                h.turn_key.as_deref().unwrap_or("-")
            )?;
        }
    }
    Ok(())
}

pub fn hook_install(out: &mut impl Write, r: &cairn_core::hooks::HookInstall) -> Result<()> {
    let path = clean(&r.path.display().to_string());
    match (r.changed, r.dry_run) {
        (false, _) => writeln!(out, "The {} hook is already installed in {path}.", r.agent)?,
        (true, true) => {
            writeln!(
                out,
                "Would add the {} hook to {path} (dry run, nothing written):",
                r.agent
            )?;
            write!(out, "{}", clean(&r.diff))?;
        }
        (true, false) => {
            writeln!(out, "Added the {} hook to {path}.", r.agent)?;
            if let Some(b) = &r.backup {
                writeln!(
                    out,
                    "Backup of the previous file: {}",
                    clean(&b.display().to_string())
                )?;
            }
        }
    }
    for note in &r.notes {
        writeln!(out, "Note: {}", clean(note))?;
    }
    Ok(())
}

pub fn doctor(out: &mut impl Write, r: &DoctorReport) -> Result<()> {
    for c in &r.checks {
        let mark = match c.status {
            Status::Ok => "ok  ",
            Status::Warn => "warn",
            Status::Fail => "FAIL",
        };
        writeln!(out, "{mark}  {:<20} {}", clean(&c.name), clean(&c.detail))?;
    }
    Ok(())
}

/// A progress bar over bytes of transcript, drawn on stderr only when asked.
pub struct Bar {
    bar: Mutex<Option<ProgressBar>>,
    enabled: bool,
}

impl Bar {
    pub fn new(enabled: bool) -> Bar {
        Bar {
            bar: Mutex::new(None),
            enabled,
        }
    }

    pub fn done(&self) {
        if let Some(bar) = self.bar.lock().ok().and_then(|mut b| b.take()) {
            bar.finish_and_clear();
        }
    }
}

impl Progress for Bar {
    fn start(&self, files: u64, bytes: u64) {
        if !self.enabled {
            return;
        }
        let bar = ProgressBar::new(bytes);
        let style = ProgressStyle::with_template(
            "{prefix} [{bar:30}] {bytes}/{total_bytes} ({bytes_per_sec}, {eta} left)",
        )
        .unwrap_or_else(|_| ProgressStyle::default_bar())
        .progress_chars("=> ");
        bar.set_style(style);
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
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clean_strips_escape_sequences() {
        assert_eq!(clean("a\u{1b}[31mred\u{7}\r\nb\tc"), "a[31mred\nb\tc");
        assert_eq!(line("  one\n two  ", 3), "one…");
    }
}

//! One session (or a range of its turns) out of the archive, to share: Markdown, one
//! self-contained HTML page, Cairn's own view types as JSON, or an ATIF trajectory.
//!
//! An export is meant to leave the machine, so every string of the document passes the
//! outbound cleaning before any renderer sees it ([`Document::build`]): terminal escape
//! sequences and control characters removed, secrets redacted, the home directory written as
//! `~`. Tool output longer than [`ExportOptions::max_output_bytes`] is cut. The document says
//! what it left out ([`LeftOut`]): redactions by kind, outputs cut and their bytes.
//!
//! A secret no single string holds, split across two records (`AKIA…` ending one message and
//! the rest starting the next), is found by the scan extraction refuses such a session with
//! ([`crate::llm::outbound::joined_secrets`], over the records' text in the order a reader
//! reads it) and each piece is marked `[REDACTED:<rule>]` where it stands, in the records and
//! in their turn's previews: the export still works, and no reader can join the halves again.

mod atif;
mod html;
pub(crate) mod markdown;

use std::collections::BTreeMap;

use rusqlite::Connection;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::archive::redact::Redactor;
use crate::archive::sources::floor_char_boundary;
use crate::archive::store as archive;
pub(crate) use crate::archive::tool_input;
use crate::error::{Error, Result};
use crate::llm::outbound;

pub use super::session::SessionDetail;
pub use super::show::{RecordView, TimelineTurn};

/// Tool output longer than this is cut in an export unless the person raises the limit (the
/// archive itself keeps up to 16 KiB of each output).
pub const DEFAULT_MAX_OUTPUT_BYTES: usize = 4 * 1024;

/// The formats a session exports to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "lowercase")]
pub enum SessionExportFormat {
    Md,
    Html,
    Json,
    Atif,
}

impl SessionExportFormat {
    pub fn parse(s: &str) -> Result<SessionExportFormat> {
        match s.trim().to_ascii_lowercase().as_str() {
            "md" | "markdown" => Ok(SessionExportFormat::Md),
            "html" => Ok(SessionExportFormat::Html),
            "json" => Ok(SessionExportFormat::Json),
            "atif" => Ok(SessionExportFormat::Atif),
            other => Err(Error::Invalid(format!(
                "unknown export format `{}`: use md, html, json or atif",
                crate::text::one_line(other, 40)
            ))),
        }
    }

    /// The format a file name's ending asks for (`x.html`: html; `x.atif.json` or `x.atif`:
    /// atif; none for an ending no format has).
    pub fn for_file(name: &str) -> Option<SessionExportFormat> {
        let name = name.to_ascii_lowercase();
        [
            (".atif.json", SessionExportFormat::Atif),
            (".atif", SessionExportFormat::Atif),
            (".json", SessionExportFormat::Json),
            (".html", SessionExportFormat::Html),
            (".htm", SessionExportFormat::Html),
            (".md", SessionExportFormat::Md),
            (".markdown", SessionExportFormat::Md),
        ]
        .into_iter()
        .find(|(ending, _)| name.ends_with(ending))
        .map(|(_, format)| format)
    }

    /// Whether a file named `name` may hold this format: its ending asks for it, for none, or
    /// for JSON and this is ATIF (a trajectory is JSON).
    pub fn fits(self, name: &str) -> bool {
        match SessionExportFormat::for_file(name) {
            None => true,
            Some(SessionExportFormat::Json) => {
                matches!(self, SessionExportFormat::Json | SessionExportFormat::Atif)
            }
            Some(asked) => asked == self,
        }
    }

    /// The name [`SessionExportFormat::parse`] reads.
    pub fn name(self) -> &'static str {
        match self {
            SessionExportFormat::Md => "md",
            SessionExportFormat::Html => "html",
            SessionExportFormat::Json => "json",
            SessionExportFormat::Atif => "atif",
        }
    }

    /// The file name's ending: `.md`, `.html`, `.json`, `.atif.json`.
    pub fn extension(self) -> &'static str {
        match self {
            SessionExportFormat::Md => "md",
            SessionExportFormat::Html => "html",
            SessionExportFormat::Json => "json",
            SessionExportFormat::Atif => "atif.json",
        }
    }
}

/// What to export.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct ExportOptions {
    pub format: SessionExportFormat,
    /// First and last turn index to include (both included); all turns when absent.
    pub turns: Option<TurnRange>,
    /// Tool output past this many bytes is cut (0: the default).
    pub max_output_bytes: u32,
}

/// Turns `from..=to` by their index, as `show` numbers them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct TurnRange {
    pub from: u32,
    pub to: u32,
}

impl TurnRange {
    /// `3..7`, `3..=7` (both mean turns 3 to 7), `3..` (from 3), `..7`, or `5` (one turn).
    pub fn parse(s: &str) -> Result<TurnRange> {
        let bad = || {
            Error::Invalid(format!(
                "turn range `{}` is not A..B (for example 3..7, 3.. or 5)",
                crate::text::one_line(s, 40)
            ))
        };
        let num = |t: &str, default: u32| -> Result<u32> {
            let t = t.trim();
            if t.is_empty() {
                Ok(default)
            } else if t.bytes().all(|b| b.is_ascii_digit()) {
                t.parse().map_err(|_| {
                    Error::Invalid(format!(
                        "turn {} is past any session's last turn; `cairn show` lists a session's turns",
                        crate::text::one_line(t, 40)
                    ))
                })
            } else {
                Err(bad())
            }
        };
        let range = match s.split_once("..") {
            Some((a, b)) => TurnRange {
                from: num(a, 0)?,
                to: num(b.strip_prefix('=').unwrap_or(b), u32::MAX)?,
            },
            None => {
                let n = num(s, u32::MAX)?;
                if n == u32::MAX {
                    return Err(bad());
                }
                TurnRange { from: n, to: n }
            }
        };
        if range.from > range.to {
            return Err(Error::Invalid(format!(
                "turn range `{}` ends before it starts",
                crate::text::one_line(s, 40)
            )));
        }
        Ok(range)
    }
}

/// One turn of an export: the turn as `show` lists it and all its records.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct ExportTurn {
    pub turn: TimelineTurn,
    pub records: Vec<RecordView>,
}

/// What an export left out or changed, so its reader knows.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct LeftOut {
    /// Redaction markers in the exported text, by kind (`github-pat`, `path`, …): those made
    /// at capture and those made on the way out.
    pub redactions: BTreeMap<String, u32>,
    /// Tool outputs cut at `max_output_bytes`, and the bytes they lost.
    pub outputs_cut: u32,
    pub output_bytes_cut: u64,
    pub max_output_bytes: u32,
    /// Turns of the session not in this export (a turn range was asked for).
    pub turns_not_exported: u32,
    /// Whether the home directory was written as `~`.
    pub home_written_as_tilde: bool,
    /// Secrets split across two records (neither held it whole), each piece marked where it
    /// stands; their markers are counted in `redactions` too.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub secrets_split: u32,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

impl LeftOut {
    /// One paragraph for a person: what was redacted and cut, and how to get more.
    pub fn sentence(&self) -> String {
        let mut parts = Vec::new();
        if self.redactions.is_empty() {
            parts.push("No secrets were found to redact.".to_owned());
        } else {
            let kinds: Vec<String> = self
                .redactions
                .iter()
                .map(|(k, n)| format!("{k} ×{n}"))
                .collect();
            parts.push(format!("Redacted: {}.", kinds.join(", ")));
        }
        if self.outputs_cut > 0 {
            parts.push(format!(
                "{} cut at {} bytes ({} left out); raise the limit with `--max-output BYTES`.",
                crate::text::plural(self.outputs_cut, "tool output"),
                self.max_output_bytes,
                crate::text::plural(self.output_bytes_cut, "byte")
            ));
        }
        if self.turns_not_exported > 0 {
            parts.push(match self.turns_not_exported {
                1 => "1 turn of the session is not in this export.".to_owned(),
                n => format!("{n} turns of the session are not in this export."),
            });
        }
        if self.secrets_split > 0 {
            parts.push(match self.secrets_split {
                1 => "A secret split across two records is marked in each of them.".to_owned(),
                n => format!("{n} secrets split across records are marked in each of them."),
            });
        }
        if self.home_written_as_tilde {
            parts.push("The home directory is written as `~`.".to_owned());
        }
        parts.join(" ")
    }
}

/// How a record the agent took back (a rewind, a transcript written again without it) is
/// marked where it stands in Markdown and HTML, the words `cairn show` uses: a shared export
/// must not present what the agent retracted as what happened.
pub(crate) const RETRACTED: &str = "retracted by the agent";

/// The exported document: Cairn's view types, cleaned. `--format json` writes it as it is.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct Document {
    pub session: SessionDetail,
    pub turns: Vec<ExportTurn>,
    pub left_out: LeftOut,
    /// The session's sub-agent and compaction sessions, whole (ATIF embeds them as
    /// `subagent_trajectories`), in the order they started.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub subagents: Vec<Document>,
    /// The tokens of each model call the agent recorded, by the ordinal of the first record of
    /// its message that is the agent's own ([`archive::message_tokens_by_ordinal`]): ATIF's
    /// per-step `metrics`. Not part of the JSON export, whose records carry no usage.
    #[serde(skip)]
    pub step_tokens: BTreeMap<u32, crate::archive::TokenUsage>,
}

/// An export, rendered.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct SessionExport {
    pub format: SessionExportFormat,
    /// The file name it gets by default (`session-<agent>-<id>-<day>.<ext>`).
    pub file_name: String,
    pub text: String,
    pub left_out: LeftOut,
}

impl Document {
    /// Read session `session` (row id) with the turns asked for, cut long tool output and clean
    /// every string. `home` is written as `~` wherever it starts a path.
    pub fn build(
        conn: &Connection,
        session: i64,
        options: &ExportOptions,
        home: Option<&str>,
        db: impl Fn(rusqlite::Error) -> Error,
    ) -> Result<Document> {
        Self::build_with(conn, session, options, home, &db)
    }

    fn build_with(
        conn: &Connection,
        session: i64,
        options: &ExportOptions,
        home: Option<&str>,
        db: &dyn Fn(rusqlite::Error) -> Error,
    ) -> Result<Document> {
        let detail = archive::session_detail(conn, session).map_err(db)?;
        let range = options.turns.unwrap_or(TurnRange {
            from: 0,
            to: u32::MAX,
        });
        let max = match options.max_output_bytes {
            0 => DEFAULT_MAX_OUTPUT_BYTES,
            n => n as usize,
        };
        let mut left_out = LeftOut {
            max_output_bytes: u32::try_from(max).unwrap_or(u32::MAX),
            ..LeftOut::default()
        };
        let mut turns = Vec::new();
        let mut total = 0u32;
        for (id, turn) in archive::timeline_turns(conn, session, 0).map_err(db)? {
            total += 1;
            if turn.turn_index < range.from || turn.turn_index > range.to {
                continue;
            }
            let mut records = archive::records_of_turn(conn, id, 0, i64::MAX).map_err(db)?;
            for r in &mut records {
                if r.kind == "tool_result"
                    && let Some(text) = r.text.as_mut()
                    && text.len() > max
                {
                    let keep = floor_char_boundary(text, max);
                    left_out.outputs_cut += 1;
                    left_out.output_bytes_cut += (text.len() - keep) as u64;
                    let cut = text.len() - keep;
                    text.truncate(keep);
                    text.push_str(&format!("\n[… {cut} more bytes of output not exported]"));
                }
            }
            turns.push(ExportTurn { turn, records });
        }
        if options.turns.is_some() && turns.is_empty() {
            // An open end (`99..`) is said as typed, not as the largest number there is.
            let asked = if range.to == u32::MAX {
                format!("{}..", range.from)
            } else {
                format!("{}..{}", range.from, range.to)
            };
            return Err(Error::NotFound(format!(
                "no turn {asked} in this session (it has {total}); list its turns with `cairn show {}`",
                archive::session_handle(conn, session).map_err(db)?
            )));
        }
        left_out.turns_not_exported = total.saturating_sub(turns.len() as u32);
        // Sub-agents and compactions (the agent's own summary of the conversation so far, in a
        // transcript beside it) go whole (a turn range is the parent's), one level deep as
        // agents write them; what they left out is counted with the parent's.
        let mut subagents = Vec::new();
        if detail.relation.as_deref() != Some("subagent") {
            let whole = ExportOptions {
                turns: None,
                ..options.clone()
            };
            for sub in detail
                .subagents
                .iter()
                .filter(|s| matches!(s.relation.as_deref(), Some("subagent" | "compaction")))
            {
                let Some(id) = archive::resolve_session(conn, &sub.session_key).map_err(db)? else {
                    continue;
                };
                subagents.push(Document::build_with(conn, id, &whole, home, db)?);
            }
        }
        let step_tokens = archive::message_tokens_by_ordinal(conn, session).map_err(db)?;
        let doc = Document {
            session: detail,
            turns,
            left_out,
            subagents,
            step_tokens,
        };
        doc.cleaned(home)
    }

    /// Every string (and map key) through [`clean_text`]. Redaction markers are counted in
    /// the session and the records, not again in a turn's previews (they repeat its records).
    fn cleaned(self, home: Option<&str>) -> Result<Document> {
        let bad = |e: serde_json::Error| Error::Invalid(format!("cannot prepare the export: {e}"));
        let mut redactions = BTreeMap::new();
        let mut tilde = false;
        let mut clean = |v: &mut Value, count: bool| {
            walk_strings(v, &mut |s| {
                let (out, home_seen) = clean_text(s, home);
                tilde |= home_seen;
                if count {
                    count_markers(&out, &mut redactions);
                }
                out
            });
        };
        let mut session = serde_json::to_value(&self.session).map_err(bad)?;
        clean(&mut session, true);
        let mut turns = Vec::with_capacity(self.turns.len());
        for t in &self.turns {
            let mut turn = serde_json::to_value(&t.turn).map_err(bad)?;
            let mut records = serde_json::to_value(&t.records).map_err(bad)?;
            clean(&mut turn, false);
            clean(&mut records, true);
            turns.push(ExportTurn {
                turn: serde_json::from_value(turn).map_err(bad)?,
                records: serde_json::from_value(records).map_err(bad)?,
            });
        }
        let secrets_split = mark_split_secrets(&mut turns, &mut redactions);
        let mut left_out = LeftOut {
            redactions,
            home_written_as_tilde: tilde,
            secrets_split,
            ..self.left_out
        };
        // Sub-agents were cleaned when they were built; their counts join the parent's.
        for sub in &self.subagents {
            for (kind, n) in &sub.left_out.redactions {
                *left_out.redactions.entry(kind.clone()).or_default() += n;
            }
            left_out.outputs_cut += sub.left_out.outputs_cut;
            left_out.output_bytes_cut += sub.left_out.output_bytes_cut;
            left_out.home_written_as_tilde |= sub.left_out.home_written_as_tilde;
            left_out.secrets_split += sub.left_out.secrets_split;
        }
        Ok(Document {
            session: serde_json::from_value(session).map_err(bad)?,
            turns,
            left_out,
            subagents: self.subagents,
            step_tokens: self.step_tokens,
        })
    }

    /// How many of the exported records, its sub-agents' included, the agent took back.
    pub fn retracted_records(&self) -> usize {
        let own: usize = self
            .turns
            .iter()
            .map(|t| {
                t.records
                    .iter()
                    .filter(|r| r.retracted_at.is_some())
                    .count()
            })
            .sum();
        own + self
            .subagents
            .iter()
            .map(Document::retracted_records)
            .sum::<usize>()
    }

    /// One sentence, at the top of a Markdown or HTML export and in an ATIF trajectory's notes,
    /// saying that records the agent took back are in the export and how they are marked; none
    /// when there are none.
    pub(crate) fn retracted_note(&self) -> Option<String> {
        let n = self.retracted_records();
        let (is, them, they) = if n == 1 {
            ("is", "it", "It is")
        } else {
            ("are", "them", "They are")
        };
        (n > 0).then(|| {
            format!(
                "{} {is} marked \"{RETRACTED}\": the agent took {them} back after writing {them} \
                 (a rewind, or its transcript written again without {them}). {they} kept as \
                 written, no part of the conversation as it now stands.",
                crate::text::plural(n as u64, "record"),
            )
        })
    }

    /// What this document is to the session that embeds it, as a heading says it.
    pub(crate) fn role_word(&self) -> &'static str {
        match self.session.relation.as_deref() {
            Some("compaction") => "Compaction",
            _ => "Sub-agent",
        }
    }

    /// The session's title, else its first prompt (cut), else "Agent session".
    pub fn title(&self) -> String {
        self.session
            .title
            .clone()
            .or_else(|| {
                self.turns
                    .iter()
                    .find_map(|t| t.turn.user_preview.as_deref())
                    .map(|p| crate::text::excerpt(p, 100))
            })
            .filter(|t| !t.trim().is_empty())
            .unwrap_or_else(|| "Agent session".to_owned())
    }

    /// Render in `format`.
    pub fn render(&self, format: SessionExportFormat) -> Result<String> {
        let json = |v: &dyn erased::Json| {
            v.pretty()
                .map_err(|e| Error::Invalid(format!("cannot write the export as JSON: {e}")))
        };
        match format {
            SessionExportFormat::Md => Ok(markdown::render(self)),
            SessionExportFormat::Html => Ok(html::render(self)),
            SessionExportFormat::Json => json(self),
            SessionExportFormat::Atif => json(&atif::trajectory(self)),
        }
    }

    /// `session-<agent>-<short id>-<yyyymmdd>[-turns-a-b].<ext>`.
    pub fn file_name(&self, format: SessionExportFormat) -> String {
        let s = &self.session;
        let id: String = s
            .session_id
            .as_deref()
            .unwrap_or(&s.session_key)
            .chars()
            .filter(|c| c.is_ascii_alphanumeric())
            .take(8)
            .collect();
        let mut name = format!("session-{}-{id}", s.agent);
        if let Some(day) = s.started_at.as_deref().and_then(|t| t.get(..10)) {
            name.push('-');
            name.extend(day.chars().filter(char::is_ascii_digit));
        }
        if let (Some(a), Some(b)) = (self.turns.first(), self.turns.last())
            && self.left_out.turns_not_exported > 0
        {
            name.push_str(&format!(
                "-turns-{}-{}",
                a.turn.turn_index, b.turn.turn_index
            ));
        }
        format!("{name}.{}", format.extension())
    }
}

mod erased {
    //! Pretty JSON with a final newline, for the JSON and ATIF formats.
    pub trait Json {
        fn pretty(&self) -> serde_json::Result<String>;
    }
    impl<T: serde::Serialize> Json for T {
        fn pretty(&self) -> serde_json::Result<String> {
            serde_json::to_string_pretty(self).map(|mut s| {
                s.push('\n');
                s
            })
        }
    }
}

/// Session `session` (row id, key `session_key`) as the ATIF trajectory `publish --full`
/// carries: every turn, tool output cut at the archive's own 16 KiB, strings cleaned as an
/// export's are, and `session_id` set to the session key (what a teammate's pull checks).
pub fn trajectory_value(
    conn: &Connection,
    session: i64,
    session_key: &str,
    db: impl Fn(rusqlite::Error) -> Error,
) -> Result<Value> {
    let options = ExportOptions {
        format: SessionExportFormat::Atif,
        turns: None,
        max_output_bytes: 16 * 1024,
    };
    let doc = Document::build(conn, session, &options, None, db)?;
    let mut value: Value = serde_json::to_value(atif::trajectory(&doc))
        .map_err(|e| Error::Invalid(format!("cannot prepare the transcript: {e}")))?;
    value["session_id"] = Value::String(session_key.to_owned());
    Ok(value)
}

/// Text on its way out of an export: escape sequences and control characters removed
/// ([`crate::text::printable`]), secrets redacted, the home directory written as `~` where it
/// starts a path. Returns whether the home directory was seen.
pub fn clean_text(s: &str, home: Option<&str>) -> (String, bool) {
    let mut found = Vec::new();
    let redacted = Redactor::global().redact_printable(s, "", &mut found);
    match home
        .map(|h| h.trim_end_matches('/'))
        .filter(|h| h.len() > 1)
    {
        Some(h) if redacted.contains(h) => {
            let (out, seen) = tilde_home(&redacted, h);
            (out, seen)
        }
        _ => (redacted, false),
    }
}

/// `home` replaced by `~` wherever it is a whole path prefix (followed by `/`, `\`, a quote,
/// whitespace or the end), not inside a longer name (`/home/ann` in `/home/anna`).
fn tilde_home(s: &str, home: &str) -> (String, bool) {
    let mut out = String::with_capacity(s.len());
    let mut seen = false;
    let mut rest = s;
    while let Some(i) = rest.find(home) {
        let after = &rest[i + home.len()..];
        let whole = after.chars().next().is_none_or(|c| {
            matches!(c, '/' | '\\' | '"' | '\'' | '`' | ')' | ']' | ':' | ',') || c.is_whitespace()
        });
        out.push_str(&rest[..i]);
        if whole {
            out.push('~');
            seen = true;
        } else {
            out.push_str(home);
        }
        rest = after;
    }
    out.push_str(rest);
    (out, seen)
}

/// Where one piece of the conversation's text stands in an export: a record's text, or the
/// `n`th string of its tool input (the JSON it holds, as the writers decode it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Place {
    Text {
        turn: usize,
        record: usize,
    },
    Input {
        turn: usize,
        record: usize,
        n: usize,
    },
}

/// Find the secrets the cleaned records hold only when read one after another (a key ending
/// one message and going on in the next), with the scan extraction refuses such a session with
/// ([`outbound::joined_secrets`]), and mark each piece `[REDACTED:<rule>]` where it stands; a
/// piece is also marked in its turn's previews, which repeat the records' text. Returns how
/// many such secrets were marked; each marker made is counted in `redactions`.
fn mark_split_secrets(turns: &mut [ExportTurn], redactions: &mut BTreeMap<String, u32>) -> u32 {
    let mut places = Vec::new();
    let mut texts = Vec::new();
    for (t, turn) in turns.iter().enumerate() {
        for (r, record) in turn.records.iter().enumerate() {
            if let Some(text) = &record.text {
                places.push(Place::Text { turn: t, record: r });
                texts.push(text.clone());
            }
            if let Some(input) = &record.tool_input {
                match serde_json::from_str::<Value>(input) {
                    Ok(v) => {
                        let mut strings = Vec::new();
                        json_strings(&v, &mut strings);
                        for (n, s) in strings.into_iter().enumerate() {
                            places.push(Place::Input {
                                turn: t,
                                record: r,
                                n,
                            });
                            texts.push(s);
                        }
                    }
                    // Not JSON: the text as it stands (cleaned whole, shown whole).
                    Err(_) => {
                        places.push(Place::Input {
                            turn: t,
                            record: r,
                            n: usize::MAX,
                        });
                        texts.push(input.clone());
                    }
                }
            }
        }
    }
    let parts: Vec<&str> = texts.iter().map(String::as_str).collect();
    // Only a secret split across pieces: one a single string holds whole is the cleaning's.
    let split: Vec<outbound::JoinedSecret> = outbound::joined_secrets(&parts)
        .into_iter()
        .filter(|s| s.pieces.len() > 1)
        .collect();
    if split.is_empty() {
        return 0;
    }
    // Per piece of text, the ranges to mark (with their rule); per turn, the pieces' text.
    let mut marks: BTreeMap<usize, Vec<(std::ops::Range<usize>, &str)>> = BTreeMap::new();
    let mut in_turn: BTreeMap<usize, Vec<(String, &str)>> = BTreeMap::new();
    for secret in &split {
        for (i, range) in &secret.pieces {
            marks
                .entry(*i)
                .or_default()
                .push((range.clone(), secret.rule));
            let turn = match places[*i] {
                Place::Text { turn, .. } | Place::Input { turn, .. } => turn,
            };
            in_turn
                .entry(turn)
                .or_default()
                .push((texts[*i][range.clone()].to_owned(), secret.rule));
        }
    }
    let mut inputs: BTreeMap<(usize, usize), BTreeMap<usize, String>> = BTreeMap::new();
    for (i, ranges) in marks {
        let (marked, made) = mark(&texts[i], ranges);
        for rule in made {
            *redactions.entry(rule.to_owned()).or_default() += 1;
        }
        match places[i] {
            Place::Text { turn, record } => turns[turn].records[record].text = Some(marked),
            Place::Input { turn, record, n } => {
                inputs.entry((turn, record)).or_default().insert(n, marked);
            }
        }
    }
    for ((turn, record), strings) in inputs {
        let input = &mut turns[turn].records[record].tool_input;
        if let Some(whole) = strings.get(&usize::MAX) {
            *input = Some(whole.clone());
        } else if let Some(mut v) = input
            .as_deref()
            .and_then(|i| serde_json::from_str::<Value>(i).ok())
        {
            let mut n = 0;
            replace_json_strings(&mut v, &mut n, &strings);
            *input = Some(v.to_string());
        }
    }
    for (turn, pieces) in in_turn {
        let t = &mut turns[turn].turn;
        for preview in [&mut t.user_preview, &mut t.assistant_preview]
            .into_iter()
            .flatten()
        {
            for (piece, rule) in &pieces {
                if !piece.is_empty() {
                    *preview = preview.replace(piece.as_str(), &format!("[REDACTED:{rule}]"));
                }
            }
        }
    }
    u32::try_from(split.len()).unwrap_or(u32::MAX)
}

/// `text` with each of `ranges` replaced by its rule's marker (overlapping ranges as one), and
/// the rules of the markers made.
fn mark<'a>(
    text: &str,
    mut ranges: Vec<(std::ops::Range<usize>, &'a str)>,
) -> (String, Vec<&'a str>) {
    ranges.sort_by_key(|(r, _)| (r.start, std::cmp::Reverse(r.end)));
    let mut out = String::with_capacity(text.len());
    let mut made = Vec::new();
    let mut at = 0;
    for (range, rule) in ranges {
        if range.end <= at {
            continue;
        }
        let start = range.start.max(at);
        out.push_str(&text[at..start]);
        out.push_str(&format!("[REDACTED:{rule}]"));
        made.push(rule);
        at = range.end;
    }
    out.push_str(&text[at..]);
    (out, made)
}

/// The string values of `v` in document order (object keys left out): what a writer shows of a
/// tool input.
fn json_strings(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::String(s) => out.push(s.clone()),
        Value::Array(items) => items.iter().for_each(|i| json_strings(i, out)),
        Value::Object(map) => map.values().for_each(|i| json_strings(i, out)),
        _ => {}
    }
}

/// [`json_strings`]'s `n`th string replaced by `by[n]` where it has one (the same order).
fn replace_json_strings(v: &mut Value, n: &mut usize, by: &BTreeMap<usize, String>) {
    match v {
        Value::String(s) => {
            if let Some(new) = by.get(n) {
                *s = new.clone();
            }
            *n += 1;
        }
        Value::Array(items) => items
            .iter_mut()
            .for_each(|i| replace_json_strings(i, n, by)),
        Value::Object(map) => map
            .values_mut()
            .for_each(|i| replace_json_strings(i, n, by)),
        _ => {}
    }
}

/// Count `[REDACTED:kind]` markers in `s`.
fn count_markers(s: &str, into: &mut BTreeMap<String, u32>) {
    const OPEN: &str = "[REDACTED:";
    let mut rest = s;
    while let Some(i) = rest.find(OPEN) {
        rest = &rest[i + OPEN.len()..];
        if let Some(end) = rest.find(']') {
            let kind = &rest[..end];
            if !kind.is_empty()
                && kind.len() <= 64
                && kind
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
            {
                *into.entry(kind.to_owned()).or_default() += 1;
            }
        }
    }
}

fn walk_strings(v: &mut Value, f: &mut impl FnMut(&str) -> String) {
    match v {
        Value::String(s) => *s = f(s),
        Value::Array(items) => items.iter_mut().for_each(|i| walk_strings(i, f)),
        Value::Object(map) => {
            let old = std::mem::take(map);
            for (k, mut val) in old {
                match &mut val {
                    // A tool's input is JSON held as text, whose escapes (`\u001b`) decode to
                    // what cleaning removes once the Markdown and HTML writers read it: its
                    // strings are cleaned as the JSON it holds.
                    Value::String(text) if k == "tool_input" => {
                        match serde_json::from_str::<Value>(text) {
                            Ok(mut input) => {
                                walk_strings(&mut input, f);
                                *text = input.to_string();
                            }
                            Err(_) => *text = f(text),
                        }
                    }
                    _ => walk_strings(&mut val, f),
                }
                map.insert(f(&k), val);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn turn_ranges_read_as_people_write_them() {
        assert_eq!(
            TurnRange::parse("3..7").unwrap(),
            TurnRange { from: 3, to: 7 }
        );
        assert_eq!(
            TurnRange::parse("3..=7").unwrap(),
            TurnRange { from: 3, to: 7 }
        );
        assert_eq!(TurnRange::parse("5").unwrap(), TurnRange { from: 5, to: 5 });
        assert_eq!(
            TurnRange::parse("4..").unwrap(),
            TurnRange {
                from: 4,
                to: u32::MAX
            }
        );
        assert_eq!(
            TurnRange::parse("..2").unwrap(),
            TurnRange { from: 0, to: 2 }
        );
        for bad in ["7..3", "a..b", "", "-1..2", "1..2..3", "\u{1b}[31m1"] {
            assert!(TurnRange::parse(bad).is_err(), "{bad:?}");
        }
        for huge in ["99999999999", "3..99999999999"] {
            let e = TurnRange::parse(huge).unwrap_err().to_string();
            assert!(e.contains("past any session's last turn"), "{e}");
        }
    }

    #[test]
    fn overlapping_pieces_make_one_marker() {
        let (out, made) = mark(
            "id AKIAZ7Q4N2M8 end",
            vec![(3..15, "aws-access-key"), (5..9, "other"), (3..7, "other")],
        );
        assert_eq!(out, "id [REDACTED:aws-access-key] end");
        assert_eq!(made, ["aws-access-key"]);
    }

    #[test]
    fn home_becomes_tilde_only_as_a_whole_prefix() {
        let (out, seen) = clean_text(
            "cd /home/ann/repo && ls /home/anna; echo \"/home/ann\"",
            Some("/home/ann"),
        );
        assert_eq!(out, "cd ~/repo && ls /home/anna; echo \"~\"");
        assert!(seen);
        let (out, seen) = clean_text("ls /home/anna", Some("/home/ann/"));
        assert_eq!(out, "ls /home/anna");
        assert!(!seen);
    }

    #[test]
    fn cleaning_removes_escapes_and_secrets() {
        let (out, _) = clean_text(
            "\u{1b}]8;;http://x\u{7}link\u{1b}]8;;\u{7} token ghp_EXAMPLE00000000000000000000000000000",
            None,
        );
        assert_eq!(out, "link token [REDACTED:github-pat]");
        let mut kinds = BTreeMap::new();
        count_markers(&out, &mut kinds);
        count_markers("[REDACTED:path] [REDACTED:] [REDACTED:a b]", &mut kinds);
        assert_eq!(
            kinds,
            BTreeMap::from([("github-pat".to_owned(), 1), ("path".to_owned(), 1)])
        );
    }
}

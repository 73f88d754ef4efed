//! Segmentation `turns-v1`: a session's records become the units a model reads, one call each.
//!
//! * A visible **user** message is one *intent* unit: `USER MESSAGE (ordinal N):\n<content>`,
//!   range `[N, N]`.
//! * Consecutive visible **assistant-side** records (replies, tool calls, tool results) form a
//!   run; each is a block `[N] <LABEL>:\n<content>`. Runs are packed greedily into *action*
//!   units (blocks joined by a blank line); a unit is closed when the next block would push it
//!   past `max_window_chars` (code points; each block costs its length + 2). A block larger
//!   than the window is a unit of its own.
//! * A run also ends at an ordinal gap, so every unit's range is gap-free; hidden records
//!   (system-injected prompts, reasoning, events, sidechains, compaction summaries, blank text)
//!   keep their ordinals and do not break a run.
//!
//! The result is deterministic: progress cursors and entry ids index into it. The reference's
//! golden cases (`tests/fixtures/agentsview/recall/turnsv1_golden.json`) pin the algorithm.
//! Cairn's records are finer than AgentsView's messages — a tool call and its result are records
//! of their own — so they are rendered as their own blocks, with their inputs and outputs cut to
//! [`TOOL_CHARS`] (head and tail kept).

use sha2::{Digest, Sha256};

/// The segmenter's name (part of the generation fingerprint).
pub const SEGMENTER: &str = "turns-v1";
/// Most characters of one tool input or result shown to the model.
pub const TOOL_CHARS: usize = 2000;
/// Most characters of the user's request shown as context to the action units that follow it.
pub const CONTEXT_CHARS: usize = 1500;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    User,
    Assistant,
}

/// One record as the segmenter sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct Message {
    pub ordinal: u32,
    pub role: Role,
    /// Block header of assistant-side records: `ASSISTANT`, `TOOL CALL Bash`, `TOOL RESULT`.
    pub label: String,
    pub content: String,
    /// Not shown to the model (occupies its ordinal only).
    pub hidden: bool,
}

impl Message {
    fn visible(&self) -> Option<&str> {
        let t = self.content.trim();
        (!self.hidden && !t.is_empty()).then_some(t)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum UnitKind {
    Intent,
    ActionRun,
}

impl UnitKind {
    pub fn as_str(self) -> &'static str {
        match self {
            UnitKind::Intent => "intent",
            UnitKind::ActionRun => "action_run",
        }
    }
}

/// What one model call reads.
#[derive(Debug, Clone, PartialEq)]
pub struct Unit {
    pub kind: UnitKind,
    pub start: u32,
    pub end: u32,
    pub text: String,
    /// For action units: the user request they followed (cut to [`CONTEXT_CHARS`]), shown to
    /// the model for the "why" but never a source of entries.
    pub context: Option<String>,
}

impl Unit {
    /// SHA-256 over exactly what the model sees of this unit.
    pub fn digest(&self) -> String {
        let mut h = Sha256::new();
        for part in [
            self.kind.as_str(),
            &self.start.to_string(),
            &self.end.to_string(),
            &self.text.chars().count().to_string(),
            &self.text,
            self.context.as_deref().unwrap_or(""),
        ] {
            h.update(part.as_bytes());
            h.update([0u8]);
        }
        hex::encode(h.finalize())
    }

    pub fn chars(&self) -> usize {
        self.text.chars().count() + self.context.as_deref().map_or(0, |c| c.chars().count())
    }
}

/// Digest of a whole unit list (from the units' digests).
pub fn units_digest(digests: &[String]) -> String {
    let mut h = Sha256::new();
    for d in digests {
        h.update(d.as_bytes());
        h.update([b'\n']);
    }
    hex::encode(h.finalize())
}

/// Split `messages` (in ordinal order) into units.
pub fn segment(messages: &[Message], max_window_chars: usize) -> Vec<Unit> {
    let max = max_window_chars.max(1);
    let mut units = Vec::new();
    let mut run = Run::default();
    let mut last_ordinal: Option<u32> = None;
    let mut context: Option<String> = None;
    for m in messages {
        if last_ordinal.is_some_and(|l| m.ordinal != l.wrapping_add(1)) {
            run.flush(&mut units, &context);
        }
        last_ordinal = Some(m.ordinal);
        let Some(content) = m.visible() else { continue };
        match m.role {
            Role::User => {
                run.flush(&mut units, &context);
                let text = format!("USER MESSAGE (ordinal {}):\n{content}", m.ordinal);
                context = Some(cut(&text, CONTEXT_CHARS));
                units.push(Unit {
                    kind: UnitKind::Intent,
                    start: m.ordinal,
                    end: m.ordinal,
                    text,
                    context: None,
                });
            }
            Role::Assistant => {
                let block = format!("[{}] {}:\n{content}", m.ordinal, m.label);
                let cost = block.chars().count() + 2;
                if !run.blocks.is_empty() && run.cost + cost > max {
                    run.flush(&mut units, &context);
                }
                if run.blocks.is_empty() {
                    run.start = m.ordinal;
                }
                run.end = m.ordinal;
                run.cost += cost;
                run.blocks.push(block);
            }
        }
    }
    run.flush(&mut units, &context);
    units
}

#[derive(Default)]
struct Run {
    blocks: Vec<String>,
    cost: usize,
    start: u32,
    end: u32,
}

impl Run {
    fn flush(&mut self, units: &mut Vec<Unit>, context: &Option<String>) {
        if self.blocks.is_empty() {
            return;
        }
        units.push(Unit {
            kind: UnitKind::ActionRun,
            start: self.start,
            end: self.end,
            text: self.blocks.join("\n\n"),
            context: context.clone(),
        });
        *self = Run::default();
    }
}

/// At most `max` characters of `s`: head and tail kept, the middle replaced by a note.
pub fn cut(s: &str, max: usize) -> String {
    let n = s.chars().count();
    if n <= max {
        return s.to_owned();
    }
    let tail = max / 4;
    let head = max - tail;
    let h: String = s.chars().take(head).collect();
    let t: String = s.chars().skip(n - tail).collect();
    format!("{h}\n… [{} characters omitted] …\n{t}", n - head - tail)
}

/// A stored record, as [`from_records`] reads it: the archive's typed read of a session's records.
pub use crate::archive::store::RecordRow;

/// Map Cairn's records onto the segmenter's messages: user prompts (typed by a person, or the
/// task a parent agent gave) are user messages; assistant replies, tool calls and tool results
/// are the assistant side; everything else is hidden.
pub fn from_records(rows: &[RecordRow]) -> Vec<Message> {
    rows.iter().map(message).collect()
}

/// The ordinal of the last of `rows` a model is shown, `None` when it is shown none: then
/// [`segment`] makes no unit of them (every unit holds a shown record), and otherwise its last
/// unit ends there. Read from the end, so a session that ends in talk is decided by its last
/// records.
pub fn last_visible(rows: &[RecordRow]) -> Option<u32> {
    rows.iter()
        .rev()
        .map(message)
        .find(|m| m.visible().is_some())
        .map(|m| m.ordinal)
}

/// One record as the segmenter sees it (see [`from_records`]).
fn message(r: &RecordRow) -> Message {
    let text = r.text.clone().unwrap_or_default();
    let side = r.is_sidechain || r.is_compaction;
    let (role, label, content, hidden) = match (r.kind.as_str(), r.role.as_deref()) {
        ("message", Some("user")) => (
            Role::User,
            "USER MESSAGE".to_owned(),
            text,
            side || r.prompt_source.as_deref() == Some("system_injected"),
        ),
        ("message", Some("assistant")) => (Role::Assistant, "ASSISTANT".to_owned(), text, side),
        ("tool_call", _) => (
            Role::Assistant,
            format!("TOOL CALL {}", r.tool_name.as_deref().unwrap_or("tool")),
            cut(r.tool_input.as_deref().unwrap_or(""), TOOL_CHARS),
            side,
        ),
        ("tool_result", _) => (
            Role::Assistant,
            match r.outcome.as_deref() {
                Some("failed") => "TOOL RESULT (failed)".to_owned(),
                Some("could_not_execute") => "TOOL RESULT (could not run)".to_owned(),
                _ => "TOOL RESULT".to_owned(),
            },
            cut(&text, TOOL_CHARS),
            side,
        ),
        _ => (Role::Assistant, String::new(), String::new(), true),
    };
    Message {
        ordinal: r.ordinal,
        role,
        label,
        content,
        hidden,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(ordinal: u32, role: Role, content: &str) -> Message {
        Message {
            ordinal,
            role,
            label: "ASSISTANT".into(),
            content: content.into(),
            hidden: false,
        }
    }

    #[test]
    fn a_gap_ends_a_run() {
        let units = segment(
            &[
                m(0, Role::Assistant, "a"),
                m(1, Role::Assistant, "b"),
                m(5, Role::Assistant, "c"),
            ],
            1000,
        );
        let ranges: Vec<(u32, u32)> = units.iter().map(|u| (u.start, u.end)).collect();
        assert_eq!(ranges, [(0, 1), (5, 5)]);
    }

    #[test]
    fn action_units_carry_the_request_as_context() {
        let units = segment(
            &[
                m(0, Role::User, "fix the build"),
                m(1, Role::Assistant, "done"),
            ],
            1000,
        );
        assert_eq!(units[0].context, None);
        assert_eq!(
            units[1].context.as_deref(),
            Some("USER MESSAGE (ordinal 0):\nfix the build")
        );
        assert_ne!(units[0].digest(), units[1].digest());
        assert!(segment(&[], 10).is_empty());
    }

    #[test]
    fn cut_keeps_head_and_tail() {
        let s: String = "a".repeat(30) + &"z".repeat(10);
        let c = cut(&s, 20);
        assert!(
            c.starts_with(&"a".repeat(15)) && c.ends_with(&"z".repeat(5)),
            "{c}"
        );
        assert!(c.contains("[20 characters omitted]"));
        assert_eq!(cut("short", 20), "short");
    }

    #[test]
    fn records_map_to_roles() {
        let row = |ordinal, kind: &str, role: Option<&str>, ps: Option<&str>| RecordRow {
            ordinal,
            kind: kind.into(),
            role: role.map(Into::into),
            prompt_source: ps.map(Into::into),
            is_sidechain: false,
            is_compaction: false,
            text: Some(format!("t{ordinal}")),
            tool_name: Some("Bash".into()),
            tool_input: Some("{\"command\":\"ls\"}".into()),
            outcome: Some("failed".into()),
        };
        let msgs = from_records(&[
            row(0, "message", Some("user"), Some("human")),
            row(1, "message", Some("user"), Some("system_injected")),
            row(2, "tool_call", Some("assistant"), None),
            row(3, "tool_result", None, None),
            row(4, "reasoning", Some("assistant"), None),
        ]);
        let units = segment(&msgs, 10_000);
        assert_eq!(units.len(), 2);
        assert_eq!(
            units[1].text,
            "[2] TOOL CALL Bash:\n{\"command\":\"ls\"}\n\n[3] TOOL RESULT (failed):\nt3"
        );
        assert_eq!((units[1].start, units[1].end), (2, 3));
        // The last shown record ends the last unit; hidden records after it change nothing.
        let rows = [
            row(0, "message", Some("user"), Some("human")),
            row(1, "tool_call", Some("assistant"), None),
            row(2, "message", Some("user"), Some("system_injected")),
            row(3, "reasoning", Some("assistant"), None),
        ];
        let units = segment(&from_records(&rows), 10_000);
        assert_eq!(units.last().map(|u| u.end), Some(1));
        assert_eq!(last_visible(&rows), Some(1));
        assert_eq!(last_visible(&rows[2..]), None);
        assert!(segment(&from_records(&rows[2..]), 10_000).is_empty());
    }
}

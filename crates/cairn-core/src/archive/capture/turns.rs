//! Turns as the writer builds them from a batch's records: a person's prompt opens one, what the
//! agent did joins it, its previews and counts kept on the turn row.

use rusqlite::{OptionalExtension, params};

use super::PREVIEW_CHARS;
use crate::archive::{PromptSource, Record, RecordKind, ToolKind, sources};
use crate::keys;

/// Tracks the session's open turn while records are added, and writes its counters back.
pub(super) struct TurnWriter<'b> {
    session_row: i64,
    session_key: String,
    /// Every turn row the session has (each new one's index).
    count: i64,
    /// Turns opened by this writer.
    opened: i64,
    current: Option<TurnAcc>,
    /// The open turn's latest assistant text, made into its preview only when the turn is
    /// written (a turn can hold hundreds of assistant messages; only the last one shows).
    last_assistant: Option<&'b str>,
}

#[derive(Debug, Default)]
pub(super) struct TurnAcc {
    id: i64,
    opening_hash: String,
    first_ordinal: i64,
    last_ordinal: i64,
    record_count: i64,
    tool_call_count: i64,
    edit_count: i64,
    exec_count: i64,
    failure_count: i64,
    started_at: Option<String>,
    ended_at: Option<String>,
    preview: Option<String>,
    assistant_preview: Option<String>,
    tool_names: Vec<String>,
}

impl<'b> TurnWriter<'b> {
    pub(super) fn new(session_row: i64, session_key: &str) -> TurnWriter<'b> {
        TurnWriter {
            session_row,
            session_key: session_key.to_owned(),
            count: 0,
            opened: 0,
            current: None,
            last_assistant: None,
        }
    }

    pub(super) fn load(
        tx: &rusqlite::Connection,
        session_row: i64,
        session_key: &str,
    ) -> rusqlite::Result<TurnWriter<'b>> {
        let count: i64 = tx
            .prepare_cached("SELECT COUNT(*) FROM turns WHERE session_id = ?1")?
            .query_row([session_row], |r| r.get(0))?;
        let current = tx
            .prepare_cached(
                "SELECT t.id, r.record_hash, t.first_ordinal, t.last_ordinal, t.record_count, t.tool_call_count,
                        t.edit_count, t.exec_count, t.failure_count, t.started_at, t.ended_at, t.preview,
                        t.assistant_preview, t.tool_names
                 FROM turns t JOIN records r ON r.session_id = t.session_id AND r.ordinal = t.opening_ordinal
                 WHERE t.session_id = ?1 ORDER BY t.turn_index DESC LIMIT 1",
            )?
            .query_row(
                [session_row],
                |r| {
                    Ok(TurnAcc {
                        id: r.get(0)?,
                        opening_hash: r.get(1)?,
                        first_ordinal: r.get(2)?,
                        last_ordinal: r.get(3)?,
                        record_count: r.get(4)?,
                        tool_call_count: r.get(5)?,
                        edit_count: r.get(6)?,
                        exec_count: r.get(7)?,
                        failure_count: r.get(8)?,
                        started_at: r.get(9)?,
                        ended_at: r.get(10)?,
                        preview: r.get(11)?,
                        assistant_preview: r.get(12)?,
                        tool_names: serde_json::from_str(&r.get::<_, String>(13)?).unwrap_or_default(),
                    })
                },
            )
            .optional()?;
        Ok(TurnWriter {
            session_row,
            session_key: session_key.to_owned(),
            count,
            opened: 0,
            current,
            last_assistant: None,
        })
    }

    pub(super) fn current_id(&self) -> Option<i64> {
        self.current.as_ref().map(|t| t.id)
    }

    /// The turns this writer opened (each holds a record it added).
    pub(super) fn opened(&self) -> i64 {
        self.opened
    }

    /// A human prompt opens a turn; so does the first record of a session. Two human text
    /// blocks of one line belong to one turn.
    pub(super) fn opens_turn(&self, r: &Record, hash: &str) -> bool {
        match &self.current {
            None => true,
            Some(t) => {
                r.kind() == RecordKind::Message
                    && r.prompt_source == Some(PromptSource::Human)
                    && !r.is_sidechain
                    && t.opening_hash != hash
            }
        }
    }

    pub(super) fn open(
        &mut self,
        tx: &rusqlite::Connection,
        ordinal: i64,
        hash: &str,
        r: &Record,
    ) -> rusqlite::Result<i64> {
        self.flush(tx)?;
        let turn_key = keys::turn_key(&self.session_key, hash);
        tx.prepare_cached(
            "INSERT INTO turns (session_id, turn_index, turn_key, opening_ordinal, first_ordinal, last_ordinal, started_at)
             VALUES (?1, ?2, ?3, ?4, ?4, ?4, ?5)",
        )?
        .execute(params![self.session_row, self.count, turn_key, ordinal, r.timestamp])?;
        let id = tx.last_insert_rowid();
        self.count += 1;
        self.opened += 1;
        self.current = Some(TurnAcc {
            id,
            opening_hash: hash.to_owned(),
            first_ordinal: ordinal,
            last_ordinal: ordinal,
            ..TurnAcc::default()
        });
        Ok(id)
    }

    pub(super) fn add(&mut self, ordinal: i64, r: &'b Record) {
        let Some(t) = self.current.as_mut() else {
            return;
        };
        t.last_ordinal = t.last_ordinal.max(ordinal);
        t.record_count += 1;
        if r.kind() == RecordKind::ToolCall {
            t.tool_call_count += 1;
            if let Some(name) = &r.tool_name
                && !t.tool_names.contains(name)
            {
                t.tool_names.push(name.clone());
            }
            match r.tool_kind {
                Some(ToolKind::FileEdit) => t.edit_count += 1,
                Some(ToolKind::Exec) => t.exec_count += 1,
                _ => {}
            }
        }
        if matches!(
            r.outcome,
            Some(crate::archive::Outcome::Failed | crate::archive::Outcome::CouldNotExecute)
        ) {
            t.failure_count += 1;
        }
        if let Some(ts) = &r.timestamp {
            if t.started_at.as_deref().is_none_or(|s| ts.as_str() < s) {
                t.started_at = Some(ts.clone());
            }
            if t.ended_at.as_deref().is_none_or(|s| ts.as_str() > s) {
                t.ended_at = Some(ts.clone());
            }
        }
        if r.kind() == RecordKind::Message
            && r.role.as_deref() == Some("assistant")
            && let Some(text) = r.text.as_deref().filter(|t| !t.trim().is_empty())
        {
            self.last_assistant = Some(text);
        }
        let human = r.prompt_source == Some(PromptSource::Human);
        // The turn's prompt, as every view labels it: never the agent's own words (a
        // transcript may open with the assistant speaking).
        if (t.preview.is_none() || (human && ordinal == t.first_ordinal))
            && r.kind() == RecordKind::Message
            && r.role.as_deref() != Some("assistant")
            && let Some(text) = &r.text
        {
            t.preview = Some(prompt_preview(text));
        }
    }

    pub(super) fn flush(&mut self, tx: &rusqlite::Connection) -> rusqlite::Result<()> {
        let Some(t) = &mut self.current else {
            return Ok(());
        };
        if let Some(text) = self.last_assistant.take() {
            t.assistant_preview = Some(preview_of(text));
        }
        tx.prepare_cached(
            "UPDATE turns SET first_ordinal = ?2, last_ordinal = ?3, record_count = ?4, tool_call_count = ?5,
                edit_count = ?6, exec_count = ?7, failure_count = ?8, started_at = ?9, ended_at = ?10, preview = ?11,
                assistant_preview = ?12, tool_names = ?13
             WHERE id = ?1",
        )?
        .execute(params![
                t.id, t.first_ordinal, t.last_ordinal, t.record_count, t.tool_call_count, t.edit_count,
                t.exec_count, t.failure_count, t.started_at, t.ended_at, t.preview, t.assistant_preview,
                serde_json::to_string(&t.tool_names).unwrap_or_else(|_| "[]".to_owned())
            ])?;
        Ok(())
    }
}

/// First line-ish of a text, whitespace collapsed, cut at [`PREVIEW_CHARS`].
pub fn preview_of(text: &str) -> String {
    crate::text::excerpt(text, PREVIEW_CHARS)
}

/// A turn's preview of its first message: a slash command as the person typed it.
pub(super) fn prompt_preview(text: &str) -> String {
    preview_of(&sources::display_prompt(text))
}

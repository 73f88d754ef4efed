//! The writer's side of keyed records: a record whose source gave it a stable key (`unit` and
//! `key`, see [`crate::archive::Record`]) is inserted once, then updated in place when its
//! content changes (same row, same ordinal, so evidence links and turns stay valid) and marked
//! `retracted_at` when the agent drops it, never deleted.

use std::collections::BTreeSet;

use rusqlite::{OptionalExtension, params};

use super::{LineRecord, UnitEvent};
use crate::archive::{PromptSource, ToolKind};

/// What the keyed writes of one batch touched.
#[derive(Default)]
pub(super) struct KeyedWriter {
    /// Records updated in place.
    pub(super) updated: u32,
    /// Turns whose records changed or were retracted: their counters are recomputed.
    turns: BTreeSet<i64>,
    /// Records that came back less records retracted: what the session's count of records
    /// moves by besides the batch's new ones.
    live_delta: i64,
    /// Whether a record was retracted or came back: the session's turns are then counted
    /// again ([`live_turns`]), a turn whose records were all dropped no longer counting.
    liveness_changed: bool,
    /// The lowest ordinal updated, retracted or brought back in place: what was read of the
    /// session from there on no longer stands (`store::queue_link`). None when the batch only
    /// added records (one inserted retracted already is new, above anything read before).
    changed_from: Option<i64>,
}

/// The full-text index rows a batch adds: (rowid, text, tool input).
type Indexed<'b> = Vec<(i64, Option<&'b str>, Option<&'b str>)>;

impl KeyedWriter {
    /// `lr` was already stored under its key: update the row when its revision moved (or the
    /// unit was retracted and came back). The old full-text entry is removed here; the new one
    /// joins the batch's index rows. A batch that updated a record, or changed which records
    /// stand (one retracted or come back, here or in [`Self::apply`] and
    /// [`Self::stored_retracted`], see [`Self::liveness_changed`]), queues its session for a
    /// relink (`write.rs`, same transaction) even when it added nothing: that queue is how the
    /// rooms above hear of a record changed or dropped in place, the session's `next_ordinal`
    /// not moving (the facade's after-capture step checks Recall's evidence there and forgets
    /// what extraction's status kept of it).
    pub(super) fn update<'b>(
        &mut self,
        tx: &rusqlite::Connection,
        session_row: i64,
        lr: &'b LineRecord,
        indexed: &mut Indexed<'b>,
    ) -> rusqlite::Result<()> {
        let r = &lr.record;
        let stored = tx
            .prepare_cached(
                "SELECT id, revision, retracted_at IS NOT NULL, turn_id, text, tool_input, ordinal FROM records
                 WHERE session_id = ?1 AND record_hash = ?2 AND block = ?3",
            )?
            .query_row(params![session_row, lr.hash, r.block], |row| {
                Ok((
                    row.get::<_, i64>(0)?,
                    row.get::<_, Option<String>>(1)?,
                    row.get::<_, bool>(2)?,
                    row.get::<_, Option<i64>>(3)?,
                    row.get::<_, Option<String>>(4)?,
                    row.get::<_, Option<String>>(5)?,
                    row.get::<_, i64>(6)?,
                ))
            })
            .optional()?;
        let Some((id, revision, retracted, turn, old_text, old_input, ordinal)) = stored else {
            return Ok(());
        };
        // A record its source says was taken back (`Record::retracted_at`) stays so.
        let said = r.retracted_at.is_some();
        if revision == lr.revision && retracted == said {
            return Ok(()); // the same unit read again
        }
        // A row already queued for the index in this group (inserted, or updated once before)
        // holds no index entry: whatever it had was deleted when it was first queued.
        let pending = indexed.iter().rposition(|(rowid, ..)| *rowid == id);
        if pending.is_none() && (old_text.is_some() || old_input.is_some()) {
            crate::archive::store::unindex_record(
                tx,
                id,
                old_text.as_deref(),
                old_input.as_deref(),
            )?;
        }
        tx.prepare_cached(
            "UPDATE records SET line_no = ?2, timestamp = ?3, kind = ?4, role = ?5, source_event_kind = ?6,
                text = ?7, tool_name = ?8, tool_kind = ?9, tool_input = ?10, call_id = ?11, exit_code = ?12,
                outcome = ?13, prompt_source = ?14, file_paths = ?15, is_sidechain = ?16, is_compaction = ?17,
                message_id = ?18, cwd = ?19, git_branch = ?20, revision = ?21,
                retracted_at = CASE WHEN ?22 IS NULL THEN NULL ELSE coalesce(retracted_at, ?22) END
             WHERE id = ?1",
        )?
        .execute(params![
            id,
            lr.line_no as i64,
            r.timestamp,
            r.kind().as_str(),
            r.role,
            r.source_event_kind,
            r.text,
            r.tool_name,
            r.tool_kind.map(ToolKind::as_str),
            lr.tool_input,
            r.call_id,
            r.exit_code,
            r.outcome.map(|o| o.as_str()),
            r.prompt_source.map(PromptSource::as_str),
            lr.file_paths,
            r.is_sidechain,
            r.is_compaction,
            r.message_id,
            r.cwd,
            r.git_branch,
            lr.revision,
            r.retracted_at,
        ])?;
        // A row queued earlier in this group is not in the index yet: its pending entry is
        // replaced instead (an index delete of an entry it does not hold would corrupt it).
        if let Some(at) = pending {
            indexed.remove(at);
        }
        if r.text.is_some() || lr.tool_input.is_some() {
            indexed.push((id, r.text.as_deref(), lr.tool_input.as_deref()));
        }
        self.turns.extend(turn);
        if retracted != said {
            self.live_delta += if said { -1 } else { 1 };
            self.liveness_changed = true;
        }
        self.updated += 1;
        self.changed(ordinal);
        Ok(())
    }

    /// A record inserted retracted already (its source said so): its turn's counters and the
    /// session's counts leave it out, as they do a record a later read retracted.
    pub(super) fn stored_retracted(&mut self, turn: Option<i64>) {
        self.turns.extend(turn);
        self.live_delta -= 1;
        self.liveness_changed = true;
    }

    /// Apply a unit event: retract a dropped unit's records, or those records a unit read
    /// whole no longer has.
    pub(super) fn apply(
        &mut self,
        tx: &rusqlite::Connection,
        session_row: i64,
        event: &UnitEvent,
        now: &str,
    ) -> rusqlite::Result<()> {
        let (unit, kept) = match event {
            UnitEvent::Retract(unit) => (unit, "[]".to_owned()),
            UnitEvent::Version(unit, hashes) => (
                unit,
                serde_json::to_string(hashes).unwrap_or_else(|_| "[]".to_owned()),
            ),
        };
        let mut stmt = tx.prepare_cached(
            "UPDATE records SET retracted_at = ?3
             WHERE session_id = ?1 AND unit = ?2 AND retracted_at IS NULL
               AND record_hash NOT IN (SELECT value FROM json_each(?4))
             RETURNING turn_id, ordinal",
        )?;
        let retracted = stmt.query_map(params![session_row, unit, now, kept], |row| {
            Ok((row.get::<_, Option<i64>>(0)?, row.get::<_, i64>(1)?))
        })?;
        for row in retracted {
            let (turn, ordinal) = row?;
            self.turns.extend(turn);
            self.changed(ordinal);
            self.live_delta -= 1;
            self.liveness_changed = true;
        }
        if let UnitEvent::Retract(unit) = event {
            // A dropped message's tokens go with it (keyed by the unit, as the sources that
            // key records write them); a message that comes back brings its own again.
            tx.prepare_cached("DELETE FROM token_usage WHERE session_id = ?1 AND message_id = ?2")?
                .execute(params![session_row, unit])?;
        }
        Ok(())
    }

    /// How many more records of the session are live after this batch's retractions and
    /// returns (negative when more were dropped).
    pub(super) fn live_delta(&self) -> i64 {
        self.live_delta
    }

    /// A stored record at `ordinal` changed in place (rewritten, retracted or come back).
    fn changed(&mut self, ordinal: i64) {
        self.changed_from = Some(self.changed_from.map_or(ordinal, |o| o.min(ordinal)));
    }

    /// The lowest ordinal this batch changed in place, None when it changed none.
    pub(super) fn changed_from(&self) -> Option<i64> {
        self.changed_from
    }

    /// Whether a record was retracted or came back in this batch.
    pub(super) fn liveness_changed(&self) -> bool {
        self.liveness_changed
    }

    /// Recompute the counters and previews of the turns whose records changed, from their live
    /// records, as a fresh read of the same content would have made them (a turn whose every
    /// record was dropped counts none, and the session does not count it).
    pub(super) fn recount_turns(&self, tx: &rusqlite::Connection) -> rusqlite::Result<()> {
        for turn in &self.turns {
            recount_previews(tx, *turn)?;
            tx.prepare_cached(
                "UPDATE turns SET
                    record_count = (SELECT count(*) FROM records
                        WHERE turn_id = ?1 AND retracted_at IS NULL),
                    tool_call_count = (SELECT count(*) FROM records
                        WHERE turn_id = ?1 AND kind = 'tool_call' AND retracted_at IS NULL),
                    edit_count = (SELECT count(*) FROM records
                        WHERE turn_id = ?1 AND kind = 'tool_call' AND tool_kind = 'file_edit' AND retracted_at IS NULL),
                    exec_count = (SELECT count(*) FROM records
                        WHERE turn_id = ?1 AND kind = 'tool_call' AND tool_kind = 'exec' AND retracted_at IS NULL),
                    failure_count = (SELECT count(*) FROM records
                        WHERE turn_id = ?1 AND outcome IN ('failed', 'could_not_execute') AND retracted_at IS NULL)
                 WHERE id = ?1",
            )?
            .execute([turn])?;
        }
        Ok(())
    }
}

/// A turn's preview is its first message and its assistant preview its last assistant
/// message with words (what [`super::TurnWriter`] keeps as records arrive): a message that
/// grew or was dropped since changes them.
fn recount_previews(tx: &rusqlite::Connection, turn: i64) -> rusqlite::Result<()> {
    let first = tx
        .prepare_cached(
            "SELECT text FROM records
             WHERE turn_id = ?1 AND kind = 'message' AND text IS NOT NULL AND retracted_at IS NULL
             ORDER BY ordinal LIMIT 1",
        )?
        .query_row([turn], |r| r.get::<_, String>(0))
        .optional()?;
    let mut last = tx.prepare_cached(
        "SELECT text FROM records
         WHERE turn_id = ?1 AND kind = 'message' AND role = 'assistant' AND text IS NOT NULL
           AND retracted_at IS NULL
         ORDER BY ordinal DESC",
    )?;
    let mut assistant = None;
    for text in last.query_map([turn], |r| r.get::<_, String>(0))? {
        let text = text?;
        if !text.trim().is_empty() {
            assistant = Some(super::preview_of(&text));
            break;
        }
    }
    tx.prepare_cached("UPDATE turns SET preview = ?2, assistant_preview = ?3 WHERE id = ?1")?
        .execute(params![
            turn,
            first.as_deref().map(super::prompt_preview),
            assistant
        ])?;
    Ok(())
}

/// The session's turns as a fresh read of what its agent still holds counts them: those that
/// hold a live record (a rewound chat's dropped turns keep their rows, so a message that comes
/// back finds its turn, but are not counted). Their counters must be current
/// ([`KeyedWriter::recount_turns`]).
pub(super) fn live_turns(tx: &rusqlite::Connection, session_row: i64) -> rusqlite::Result<i64> {
    tx.prepare_cached("SELECT count(*) FROM turns WHERE session_id = ?1 AND record_count > 0")?
        .query_row([session_row], |r| r.get(0))
}

/// Whether the session holds any record (retracted or not).
pub(super) fn session_has_records(
    tx: &rusqlite::Connection,
    session_row: i64,
) -> rusqlite::Result<bool> {
    tx.prepare_cached("SELECT EXISTS (SELECT 1 FROM records WHERE session_id = ?1)")?
        .query_row([session_row], |r| r.get(0))
}

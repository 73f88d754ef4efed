//! The writer: one batch in one transaction under the capture lock, checked against the reading
//! position it was read from, with its session row, records, turns, token usage, findings,
//! warnings, retained copy and new position, all or nothing.

use std::path::Path;

use rusqlite::{OptionalExtension, TransactionBehavior, params};

use super::{Batch, Trigger, TurnWriter, UnitEvent, Warning, keyed};
use crate::archive::retain::{Appended, Retained};
use crate::archive::sources::FileRole;
use crate::archive::store::Store;
use crate::archive::{Agent, PromptSource, ToolKind, forget, sources, store, swaps};
use crate::error::Result;
use crate::store::db_err;

/// Result of committing one batch.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Commit {
    Done {
        session_key: String,
        session_row: i64,
        session_created: bool,
        /// The session had never held a record before this batch (a file first read empty,
        /// or made of lines Cairn keeps nothing of): to a person it is new once this batch
        /// adds its first ones, not updated.
        first_records: bool,
        records_added: u32,
        records_updated: u32,
        new_warnings: Vec<Warning>,
        /// The capture batch row, when records were added.
        capture_id: Option<i64>,
    },
    /// Another capture moved this file on since the batch was read: read it again.
    Conflict,
    /// The retained copy is shorter than recorded (lost or deleted): re-read the whole file.
    Reread,
    /// The source was forgotten and may not be imported again: nothing written.
    Forgotten,
}

/// Commits batches into the store under the capture lock.
pub(crate) struct Writer<'a> {
    store: &'a mut Store,
    retained: Retained,
    trigger: Trigger,
    now: String,
}

impl<'a> Writer<'a> {
    pub(crate) fn new(store: &'a mut Store, data_dir: &Path, trigger: Trigger) -> Writer<'a> {
        Writer {
            store,
            retained: Retained::new(data_dir),
            trigger,
            now: crate::clock::now(),
        }
    }

    /// Whether a reader's warning about a whole file belongs in this report: all do but one
    /// said at an earlier sync of a file still empty ([`Store::note_empty_file`]). When the
    /// archive cannot tell, it is said.
    pub(super) fn is_news(&self, w: &Warning) -> bool {
        w.message != store::EMPTY_FILE
            || w.line.is_some()
            || self
                .store
                .note_empty_file(&w.path, &self.now)
                .unwrap_or(true)
    }

    /// Commit one batch in its own transaction.
    pub(crate) fn commit(&mut self, batch: &Batch) -> Result<Commit> {
        let mut results = self.commit_group(std::slice::from_ref(batch))?;
        Ok(results.pop().unwrap_or(Commit::Conflict))
    }

    /// Commit several batches in one transaction (far cheaper than one each during a bulk
    /// sync). A batch that lost a race is detected before it writes anything and skipped.
    /// No savepoints: they make FTS5 flush its pending index on every batch.
    /// When the transaction fails (a full disk, say), the retained copies it appended to are
    /// cut back to the lengths the store still records.
    pub(crate) fn commit_group<B: std::borrow::Borrow<Batch>>(
        &mut self,
        batches: &[B],
    ) -> Result<Vec<Commit>> {
        let result = self.try_commit_group(batches);
        if result.is_err() {
            self.discard_uncommitted(batches);
        }
        result
    }

    /// After a rolled-back group: each batch's retained copy back to its committed length. A
    /// copy of an older generation than the store's is left alone (it holds committed lines).
    pub(super) fn discard_uncommitted<B: std::borrow::Borrow<Batch>>(&self, batches: &[B]) {
        for batch in batches {
            let batch = batch.borrow();
            let committed = self
                .store
                .conn()
                .query_row(
                    "SELECT generation, retained_len FROM sources WHERE path = ?1",
                    [&batch.path],
                    |r| Ok((r.get::<_, i64>(0)?, r.get::<_, i64>(1)?)),
                )
                .optional();
            let len = match committed {
                Ok(Some((generation, len))) if generation == i64::from(batch.generation) => {
                    len.max(0) as u64
                }
                Ok(Some((generation, _))) if generation > i64::from(batch.generation) => continue,
                Ok(_) => 0,
                Err(_) => continue, // the next append cuts it instead
            };
            let path = self
                .retained
                .path(batch.agent, &batch.source_key, batch.generation);
            self.retained.discard_uncommitted(&path, len);
        }
    }

    pub(super) fn try_commit_group<B: std::borrow::Borrow<Batch>>(
        &mut self,
        batches: &[B],
    ) -> Result<Vec<Commit>> {
        let path = self.store.path().to_owned();
        let e = |err| db_err(&path, err);
        let tx = self
            .store
            .conn_mut()
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(e)?;
        let mut results = Vec::with_capacity(batches.len());
        // Rows written by the group are indexed only when it ends (see below).
        let mut indexed = Vec::new();
        for batch in batches {
            results.push(commit_in(
                &tx,
                &self.retained,
                self.trigger,
                &self.now,
                batch.borrow(),
                &path,
                &mut indexed,
            )?);
        }
        // Index the new records after every other write of the group, from the text already in
        // memory (reading it back from the records table cost as much as a tenth of the
        // writer's time). FTS5 writes its pending index out at every statement savepoint, so
        // these single-row inserts (which open none) must not be interleaved with statements
        // that do.
        for (rowid, text, tool_input) in indexed {
            store::index_record(&tx, rowid, text, tool_input).map_err(e)?;
        }
        tx.commit().map_err(e)?;
        Ok(results)
    }
}

/// Store one batch inside an open transaction. Returns `Conflict`/`Reread` before writing
/// anything when the batch cannot be applied.
#[allow(clippy::too_many_arguments)]
pub(super) fn commit_in<'b>(
    tx: &rusqlite::Connection,
    retained: &Retained,
    trigger: Trigger,
    now: &str,
    batch: &'b Batch,
    path: &Path,
    indexed: &mut Vec<(i64, Option<&'b str>, Option<&'b str>)>,
) -> Result<Commit> {
    let e = |err| db_err(path, err);
    {
        // A source stored by its path as found, before the redaction rules saw a secret in it,
        // is found by its key and kept as the batch's path is from now on, the page the old
        // path leaves zeroed.
        let stale: Option<i64> = tx
            .prepare_cached(
                "SELECT id FROM sources WHERE source_key = ?2 AND path <> ?1
                   AND NOT EXISTS (SELECT 1 FROM sources WHERE path = ?1)",
            )
            .map_err(e)?
            .query_row(params![batch.path, batch.source_key], |r| r.get(0))
            .optional()
            .map_err(e)?;
        if let Some(id) = stale {
            tx.pragma_update(None, "secure_delete", true).map_err(e)?;
            let kept = tx
                .prepare_cached("UPDATE sources SET path = ?2 WHERE id = ?1")
                .and_then(|mut s| s.execute(params![id, batch.path]));
            tx.pragma_update(None, "secure_delete", false).map_err(e)?;
            kept.map_err(e)?;
        }
        let current = tx
            .prepare_cached("SELECT id, session_id, byte_offset, generation, retained_len FROM sources WHERE path = ?1")
            .map_err(e)?
            .query_row(
                params![batch.path],
                |r| Ok((r.get::<_, i64>(0)?, r.get::<_, i64>(1)?, r.get::<_, i64>(2)?, r.get::<_, i64>(3)?, r.get::<_, i64>(4)?)),
            )
            .optional()
            .map_err(e)?;
        let base_ok = match (current, batch.base.existed) {
            (None, false) => true,
            (Some((_, _, offset, generation, _)), true) => {
                offset as u64 == batch.base.byte_offset
                    && generation as u32 == batch.base.generation
            }
            _ => false,
        };
        if !base_ok {
            return Ok(Commit::Conflict);
        }
        // A session of a database is a source of its own, which a forget tombstones by itself
        // (the database file is not forgotten, so discovery keeps it).
        if current.is_none() && forget::is_forgotten(tx, &batch.source_key).map_err(e)? {
            return Ok(Commit::Forgotten);
        }
        // A forgotten session's transcript under another path (moved, archived, reached
        // through a new link): its file is tombstoned too, and nothing else is written. A file
        // first read before it named its session (a summary line, a copy caught mid-write)
        // holds a session keyed by its path: that goes the way of the forgotten one, and its
        // retained copy with the next sweep.
        if batch.identity.session_id.is_some()
            && forget::is_forgotten_session(tx, &batch.identity.session_key).map_err(e)?
        {
            if let Some((_, placeholder, ..)) = current {
                forget::delete(tx, &[placeholder], false, now).map_err(e)?;
            }
            forget::tombstone_source(tx, &batch.source_key, batch.agent.as_str(), now)
                .map_err(e)?;
            return Ok(Commit::Forgotten);
        }

        // The retained copy must hold what the store says it holds; if not, the whole file is
        // read again into a new generation. Checked before writing anything.
        let expected_len = match current {
            Some((.., generation, len)) if generation as u32 == batch.generation => len as u64,
            _ => 0,
        };
        let retained_path = retained.path(batch.agent, &batch.source_key, batch.generation);
        if let Some((source_row, .., generation, _)) = current
            && generation as u32 == batch.generation
        {
            swaps::finish_source(tx, retained, &retained_path, source_row, batch.generation)?;
        }
        if retained.is_short(&retained_path, expected_len) {
            return Ok(Commit::Reread);
        }

        // The session: fixed by the source once known, else by the batch's identity.
        let (session_row, session_created) = match current {
            Some((source_row, session_id, ..)) => (
                adopt_named_identity(tx, session_id, source_row, batch).map_err(e)?,
                false,
            ),
            None => upsert_session(tx, batch, now).map_err(e)?,
        };
        let session_key: String = tx
            .prepare_cached("SELECT session_key FROM sessions WHERE id = ?1")
            .map_err(e)?
            .query_row([session_row], |r| r.get(0))
            .map_err(e)?;
        update_session_meta(tx, session_row, batch, now).map_err(e)?;
        if batch.agent == Agent::Atif {
            store::set_ran_as(tx, session_row).map_err(e)?;
        }
        let source_row = match current {
            Some((id, ..)) => id,
            None => {
                tx.prepare_cached(
                    "INSERT INTO sources (source_key, session_id, agent, role, path, updated_at)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                )
                .map_err(e)?
                .execute(params![
                    batch.source_key,
                    session_row,
                    batch.agent.as_str(),
                    role_str(batch.role),
                    batch.path,
                    now
                ])
                .map_err(e)?;
                tx.last_insert_rowid()
            }
        };

        // A new source's copy opens with what a rebuild from the copies alone needs to know
        // of it (its manifest, a skippable frame).
        let opened;
        let encoded = match current {
            None => {
                opened = {
                    let mut frames = super::reindex::manifest_frame(batch, session_row, now);
                    frames.extend_from_slice(&batch.encoded);
                    frames
                };
                &opened
            }
            Some(_) => &batch.encoded,
        };
        let retained_len = match retained.append(&retained_path, expected_len, encoded)? {
            Appended::Ok(len) => len,
            // Checked before any write (see above), so nothing to undo here.
            Appended::Short { .. } => return Ok(Commit::Reread),
        };

        let (records_before, turns_before, mut next_ordinal): (i64, i64, i64) = tx
            .prepare_cached(
                "SELECT record_count, turn_count, next_ordinal FROM sessions WHERE id = ?1",
            )
            .map_err(e)?
            .query_row([session_row], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .map_err(e)?;
        let first_ordinal = next_ordinal;
        // The count of records is of live ones: a session whose agent dropped every record it
        // held counts none, yet keeps its turns, which the ordinals tell.
        let never_held = first_ordinal == 0;
        let mut turns = if never_held {
            // A session that never held a record has no turns yet.
            TurnWriter::new(session_row, &session_key)
        } else {
            TurnWriter::load(tx, session_row, &session_key).map_err(e)?
        };
        let mut added: u32 = 0;
        let mut keyed = keyed::KeyedWriter::default();
        // A session holding no record yet holds none of a unit's but those this batch adds:
        // the first version of each unit read here retracts nothing, so it is not applied (a
        // statement a unit, about as costly as inserting a record, on every first read).
        let mut fresh_units: Option<std::collections::HashSet<&str>> = (never_held
            && !keyed::session_has_records(tx, session_row).map_err(e)?)
        .then(std::collections::HashSet::new);
        {
            let mut insert = tx
                .prepare_cached(
                    "INSERT OR IGNORE INTO records (session_id, ordinal, turn_id, source_id, line_no, block,
                        record_hash, timestamp, kind, role, source_event_kind, text, tool_name, tool_kind,
                        tool_input, call_id, exit_code, outcome, prompt_source, file_paths, is_sidechain,
                        is_compaction, message_id, cwd, git_branch, unit, revision, retracted_at)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18,
                        ?19, ?20, ?21, ?22, ?23, ?24, ?25, ?26, ?27, ?28)",
                )
                .map_err(e)?;
            let mut set_turn = tx
                .prepare_cached("UPDATE records SET turn_id = ?1 WHERE id = ?2")
                .map_err(e)?;
            // The first record of each branch the agent recorded (what association reads).
            let mut add_branch = tx
                .prepare_cached(
                    "INSERT OR IGNORE INTO session_branches (session_id, git_branch, first_ordinal)
                     VALUES (?1, ?2, ?3)",
                )
                .map_err(e)?;
            let mut last_branch: Option<&str> = None;
            let mut events = batch.unit_events.iter().peekable();
            for (i, lr) in batch.records.iter().enumerate() {
                while let Some((_, event)) = events.next_if(|(at, _)| *at <= i) {
                    if !first_version(&mut fresh_units, event) {
                        keyed.apply(tx, session_row, event, now).map_err(e)?;
                    }
                }
                let r = &lr.record;
                let opens = turns.opens_turn(r, &lr.hash);
                let (tool_input, file_paths) = (&lr.tool_input, &lr.file_paths);
                let changed = insert
                    .execute(params![
                        session_row,
                        next_ordinal,
                        if opens { None } else { turns.current_id() },
                        source_row,
                        lr.line_no as i64,
                        r.block,
                        lr.hash,
                        r.timestamp,
                        r.kind().as_str(),
                        r.role,
                        r.source_event_kind,
                        r.text,
                        r.tool_name,
                        r.tool_kind.map(ToolKind::as_str),
                        tool_input,
                        r.call_id,
                        r.exit_code,
                        r.outcome.map(|o| o.as_str()),
                        r.prompt_source.map(PromptSource::as_str),
                        file_paths,
                        r.is_sidechain,
                        r.is_compaction,
                        r.message_id,
                        r.cwd,
                        r.git_branch,
                        r.unit,
                        lr.revision,
                        r.retracted_at,
                    ])
                    .map_err(e)?;
                if changed == 0 {
                    // Already stored: the same line read again, or a keyed record the agent
                    // may have rewritten since.
                    if lr.revision.is_some() {
                        keyed.update(tx, session_row, lr, indexed).map_err(e)?;
                    }
                    continue;
                }
                let rowid = tx.last_insert_rowid();
                if r.text.is_some() || tool_input.is_some() {
                    indexed.push((rowid, r.text.as_deref(), tool_input.as_deref()));
                }
                let turn_id = if opens {
                    let turn_id = turns.open(tx, next_ordinal, &lr.hash, r).map_err(e)?;
                    set_turn.execute(params![turn_id, rowid]).map_err(e)?;
                    Some(turn_id)
                } else {
                    turns.current_id()
                };
                if r.retracted_at.is_some() {
                    // Stored taken back already: its turn counts it out, as after a rewind.
                    keyed.stored_retracted(turn_id);
                }
                if let Some(branch) = r.git_branch.as_deref()
                    && last_branch != Some(branch)
                {
                    add_branch
                        .execute(params![session_row, branch, next_ordinal])
                        .map_err(e)?;
                    last_branch = Some(branch);
                }
                turns.add(next_ordinal, r);
                next_ordinal += 1;
                added += 1;
            }
            for (_, event) in events {
                if !first_version(&mut fresh_units, event) {
                    keyed.apply(tx, session_row, event, now).map_err(e)?;
                }
            }
        }
        turns.flush(tx).map_err(e)?;
        keyed.recount_turns(tx).map_err(e)?;

        for (message_id, u) in &batch.usage {
            tx.prepare_cached(
                "INSERT INTO token_usage (session_id, message_id, input, output, cache_creation, cache_read, reasoning)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
                 ON CONFLICT (session_id, message_id) DO UPDATE SET input = excluded.input,
                   output = excluded.output, cache_creation = excluded.cache_creation,
                   cache_read = excluded.cache_read, reasoning = excluded.reasoning",
            )
            .map_err(e)?
            .execute(params![session_row, message_id, stored_tokens(u.input), stored_tokens(u.output), stored_tokens(u.cache_creation), stored_tokens(u.cache_read), stored_tokens(u.reasoning)])
            .map_err(e)?;
        }
        let mut new_findings = 0;
        for (line_no, f) in &batch.findings {
            new_findings += tx
                .prepare_cached(
                    "INSERT OR IGNORE INTO secret_findings (session_id, source_id, line_no, field, rule, confidence, start_byte, generation)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                )
                .map_err(e)?
                // Rule and position only: the secret's length would narrow a guess.
                .execute(params![session_row, source_row, *line_no as i64, f.field, f.rule, f.confidence.as_str(), f.start as i64, batch.generation])
                .map_err(e)?;
        }
        let mut new_warnings = Vec::new();
        for (line_no, message) in &batch.warnings {
            let line = line_no.map(|l| l as i64 + 1);
            let n = tx
                .prepare_cached(
                    "INSERT OR IGNORE INTO warnings (session_id, path, line, message, created_at) VALUES (?1, ?2, ?3, ?4, ?5)",
                )
                .map_err(e)?
                .execute(params![session_row, batch.path, line, message, now])
                .map_err(e)?;
            if n > 0 {
                new_warnings.push(Warning {
                    path: batch.path.clone(),
                    line: line.map(|l| u32::try_from(l).unwrap_or(u32::MAX)),
                    message: message.clone(),
                });
            }
        }
        // What a fresh read of the agent's file as it is now would count: the records it still
        // holds and the turns holding one (a rewound chat's dropped turns no longer count).
        let record_count = records_before + i64::from(added) + keyed.live_delta();
        let turn_count = if keyed.liveness_changed() {
            keyed::live_turns(tx, session_row).map_err(e)?
        } else {
            turns_before + turns.opened()
        };
        tx.prepare_cached(
            "UPDATE sessions SET record_count = ?2, next_ordinal = ?3, turn_count = ?4,
                warning_count = warning_count + ?5, secret_count = secret_count + ?6
             WHERE id = ?1",
        )
        .map_err(e)?
        .execute(params![
            session_row,
            record_count.max(0),
            next_ordinal,
            turn_count,
            new_warnings.len() as i64,
            new_findings as i64
        ])
        .map_err(e)?;
        let mut capture_id = None;
        if added > 0 && trigger != Trigger::Reindex {
            tx.prepare_cached(
                "INSERT INTO captures (session_id, source_id, capture_kind, trigger, captured_at, first_ordinal, last_ordinal, records_added)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
            )
            .map_err(e)?
            .execute(params![
                    session_row,
                    source_row,
                    if never_held { "backfill" } else { "incremental" },
                    trigger.as_str(),
                    now,
                    first_ordinal,
                    next_ordinal - 1,
                    added
                ])
            .map_err(e)?;
            capture_id = Some(tx.last_insert_rowid());
        }
        if capture_id.is_some() || keyed.updated > 0 || keyed.liveness_changed() {
            // Relinked after this transaction; named here so that a process that dies before
            // then leaves the session for the next relink (migration 0011). Rewritten records
            // can name other files or commands: relink the session too. Retracted ones (a
            // rewind alone) change what it holds as much: the rooms above hear of both here
            // (Recall's evidence, what extraction read of it), with the lowest record changed
            // in place, whether or not the batch also added records (migration 0051).
            store::queue_link(tx, session_row, keyed.changed_from()).map_err(e)?;
        }
        tx.prepare_cached(
            "UPDATE sources SET size = ?2, mtime_ns = ?3, byte_offset = ?4, line_count = ?5, first_line_hash = ?6,
                last_line_start = ?7, last_line_hash = ?8, parser_state = ?9, generation = ?10, retained_len = ?11,
                missing_since = NULL, updated_at = ?12, sidecar_mtime_ns = COALESCE(?13, sidecar_mtime_ns)
             WHERE id = ?1",
        )
        .map_err(e)?
        .execute(params![
                source_row,
                batch.size as i64,
                batch.mtime_ns,
                batch.byte_offset as i64,
                batch.line_count as i64,
                batch.first_line_hash,
                batch.last_line_start.map(|v| v as i64),
                batch.last_line_hash,
                batch.parser_state,
                batch.generation,
                retained_len as i64,
                now,
                batch.sidecar_mtime_ns
            ])
        .map_err(e)?;
        Ok(Commit::Done {
            session_key,
            session_row,
            session_created,
            first_records: never_held && added > 0,
            records_added: added,
            records_updated: keyed.updated,
            new_warnings,
            capture_id,
        })
    }
}

/// Whether `event` is the first version of its unit in a batch of a session that held no
/// record before it (`fresh`: the units versioned so far, `None` when the session held
/// records). Such a version can retract nothing: every record of its unit stored so far came
/// with it. A unit versioned again in the batch (a line source's unit spread over lines) is
/// applied as always.
pub(super) fn first_version<'b>(
    fresh: &mut Option<std::collections::HashSet<&'b str>>,
    event: &'b UnitEvent,
) -> bool {
    match (fresh, event) {
        (Some(seen), UnitEvent::Version(unit, _)) => seen.insert(unit.as_str()),
        _ => false,
    }
}

pub(super) fn role_str(role: FileRole) -> &'static str {
    match role {
        FileRole::Main => "main",
        FileRole::Subagent => "subagent",
    }
}

/// Insert the batch's session if it is new; returns its row id and whether it was created.
pub(super) fn upsert_session(
    tx: &rusqlite::Connection,
    batch: &Batch,
    now: &str,
) -> rusqlite::Result<(i64, bool)> {
    let id = &batch.identity;
    let inserted = tx
        .prepare_cached(
            "INSERT OR IGNORE INTO sessions (session_key, agent, session_id, parent_key, relation, agent_id, captured_at, read_by)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
        )?
        .execute(params![id.session_key, batch.agent.as_str(), id.session_id, id.parent_key, id.relation, id.agent_id, now,
            sources::PARSERS_REVISION])?;
    let row = tx
        .prepare_cached("SELECT id FROM sessions WHERE session_key = ?1")?
        .query_row([&id.session_key], |r| r.get(0))?;
    Ok((row, inserted > 0))
}

/// A transcript's first lines may not name its session (file snapshots, summaries), so a file
/// first read that far got a session keyed by its path. When a later batch names the session,
/// that placeholder (still without records) takes the real identity, or, if another file already
/// holds the named session, hands its source over to it: reading a file in pieces ends where
/// reading it at once does. Returns the session row the batch belongs to.
pub(super) fn adopt_named_identity(
    tx: &rusqlite::Connection,
    session_row: i64,
    source_row: i64,
    batch: &Batch,
) -> rusqlite::Result<i64> {
    let id = &batch.identity;
    if batch.role != FileRole::Main || id.session_id.is_none() {
        return Ok(session_row);
    }
    let (key, named, records): (String, bool, i64) = tx
        .prepare_cached(
            "SELECT session_key, session_id IS NOT NULL, record_count FROM sessions WHERE id = ?1",
        )?
        .query_row([session_row], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?;
    if key == id.session_key || named || records > 0 {
        return Ok(session_row);
    }
    let holder: Option<i64> = tx
        .prepare_cached("SELECT id FROM sessions WHERE session_key = ?1")?
        .query_row([&id.session_key], |r| r.get(0))
        .optional()?;
    let Some(holder) = holder else {
        tx.prepare_cached(
            "UPDATE sessions SET session_key = ?2, parent_key = COALESCE(parent_key, ?3),
                relation = COALESCE(relation, ?4)
             WHERE id = ?1",
        )?
        .execute(params![
            session_row,
            id.session_key,
            id.parent_key,
            id.relation
        ])?;
        return Ok(session_row);
    };
    tx.prepare_cached("UPDATE sources SET session_id = ?2 WHERE id = ?1")?
        .execute([source_row, holder])?;
    for table in ["warnings", "secret_findings"] {
        tx.prepare_cached(&format!(
            "UPDATE {table} SET session_id = ?2 WHERE session_id = ?1"
        ))?
        .execute([session_row, holder])?;
    }
    tx.prepare_cached(
        "DELETE FROM sessions WHERE id = ?1 AND NOT EXISTS (SELECT 1 FROM sources WHERE session_id = ?1)",
    )?
    .execute([session_row])?;
    Ok(holder)
}

/// How far past the capture a session's time may be (clocks disagree a little).
pub(super) const CLOCK_SLACK: jiff::SignedDuration = jiff::SignedDuration::from_hours(24);

/// A time the session row may hold, captured at `now`: a time more than [`CLOCK_SLACK`] ahead
/// (a machine with a wrong clock, a hostile file dated 2999) would sort the session above
/// every other for years and keep it from ever looking idle, so it counts as `now`. Its
/// records keep what they say.
pub(super) fn not_ahead<'t>(ts: Option<&'t str>, now: &'t str) -> Option<&'t str> {
    let latest = now
        .parse::<jiff::Timestamp>()
        .ok()
        .and_then(|t| t.checked_add(CLOCK_SLACK).ok());
    ts.map(|t| match (t.parse::<jiff::Timestamp>(), latest) {
        (Ok(at), Some(latest)) if at > latest => now,
        _ => t,
    })
}

/// Fold what the batch learned about the session into its row.
pub(super) fn update_session_meta(
    tx: &rusqlite::Connection,
    session_row: i64,
    batch: &Batch,
    now: &str,
) -> rusqlite::Result<()> {
    let m = &batch.meta;
    // Sub-agent files carry the parent's metadata too; their own title stays empty.
    let usage = m
        .cumulative_usage
        .map(|u| serde_json::to_string(&u).unwrap_or_default());
    tx.prepare_cached(
        "UPDATE sessions SET
            session_id = COALESCE(session_id, ?2),
            title = COALESCE(?3, title),
            project = COALESCE(project, ?4),
            cwd = COALESCE(cwd, ?5),
            git_branch = COALESCE(git_branch, ?6),
            git_commit = COALESCE(git_commit, ?7),
            repository_url = COALESCE(repository_url, ?8),
            model = COALESCE(?9, model),
            provider = COALESCE(provider, ?10),
            tool_version = COALESCE(tool_version, ?11),
            thread_source = COALESCE(thread_source, ?12),
            started_at = CASE WHEN started_at IS NULL OR ?13 < started_at THEN COALESCE(?13, started_at) ELSE started_at END,
            updated_at = CASE WHEN updated_at IS NULL OR ?14 > updated_at THEN COALESCE(?14, updated_at) ELSE updated_at END,
            unknown_types = ?15,
            cumulative_usage = COALESCE(?16, cumulative_usage)
         WHERE id = ?1",
    )?
    .execute(params![
            session_row,
            batch.identity.session_id,
            m.title,
            batch.project,
            m.cwd,
            m.git_branch,
            m.git_commit,
            m.repository_url,
            m.model,
            m.provider,
            m.tool_version,
            m.thread_source,
            not_ahead(m.started_at.as_deref(), now),
            not_ahead(m.updated_at.as_deref(), now),
            serde_json::to_string(&m.unknown_types).unwrap_or_else(|_| "{}".to_owned()),
            usage,
        ])?;
    Ok(())
}

/// A message's token count as the store keeps it: capped at the bound the ATIF import reads
/// counts to ([`sources::atif::MAX_TOKENS`]), as a transcript may claim any 64-bit number. A
/// cast would turn a count past `i64::MAX` negative, and uncapped counts could overflow the
/// sums the session's and a report's totals take.
fn stored_tokens(n: u64) -> i64 {
    i64::try_from(n.min(sources::atif::MAX_TOKENS)).unwrap_or(i64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_counts_are_capped_not_wrapped() {
        assert_eq!(stored_tokens(0), 0);
        assert_eq!(stored_tokens(96_316), 96_316);
        let cap = i64::try_from(sources::atif::MAX_TOKENS).unwrap_or(i64::MAX);
        assert_eq!(stored_tokens(sources::atif::MAX_TOKENS + 1), cap);
        assert_eq!(stored_tokens(i64::MAX as u64 + 1), cap);
        assert_eq!(stored_tokens(u64::MAX), cap);
    }
}

//! The [`Cairn`] facade's reindex: sessions read again from their retained copies by today's
//! parsers ([`archive::capture::reindex`]), one transaction a session in which each room
//! brings its own rows along (vectors of the replaced turns dropped, association started over,
//! Recall's evidence found again by its anchor records), then the sessions relinked.

use serde::{Deserialize, Serialize};

use crate::archive::capture::{self, CaptureLock, Progress, reindex};
use crate::archive::store::Store;
use crate::archive::{self, Agent};
use crate::error::Result;
use crate::{Cairn, clock, git, insights, recall, semantic};

/// Which sessions to read again: one, an agent's, or every one.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct ReindexRequest {
    /// A session key or the agent's own session id.
    pub session: Option<String>,
    pub agent: Option<Agent>,
    /// Of those, only the sessions read before their agent's transcripts last changed (what
    /// `doctor` and Settings count): the ones reading again may change.
    #[serde(default)]
    pub outdated: bool,
    /// Read and rebuild, then roll back: what a reindex would change, changing nothing.
    pub dry_run: bool,
}

/// A session a reindex could not read again, and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct ReindexSkip {
    pub session_key: String,
    pub reason: String,
}

/// A session that reads differently now.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct ReindexChange {
    pub session_key: String,
    /// What a person types to name it (the agent's own id when it names it alone).
    pub handle: String,
    pub title: Option<String>,
    /// Its records that read differently now, are new or are gone.
    pub records_changed: u32,
    /// Recall entries citing it that went (or would go) back to unverified.
    pub evidence_revoked: u32,
    /// Lines of its retained copies today's rules redact further (a secret an older build let
    /// through): written again without it.
    pub copy_lines_redacted: u32,
}

/// What a reindex did (or, dry, would do).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct ReindexReport {
    /// Sessions read again.
    pub sessions: u32,
    /// Of those, sessions whose records read differently now.
    pub sessions_changed: u32,
    pub records_before: u32,
    pub records_after: u32,
    /// Records that read differently now, are new (lines the old parser skipped) or are gone.
    pub records_changed: u32,
    pub turns_before: u32,
    pub turns_after: u32,
    /// Recall entries whose cited records no longer say what they said: back to unverified.
    pub evidence_revoked: u32,
    /// Lines of the retained copies today's rules redact further (secrets older builds let
    /// through), written again without them (a dry run writes nothing).
    pub copy_lines_redacted: u32,
    /// Recall entries whose stored text (or evidence snippet) held such a secret: redacted.
    pub recall_entries_redacted: u32,
    /// Generated reports whose text held such a secret: redacted.
    pub reports_redacted: u32,
    /// Teammates' trajectories kept under `pulled/` that held such a secret: written again.
    pub pulled_files_redacted: u32,
    /// The sessions that read differently now, in the order they were first captured.
    pub changed: Vec<ReindexChange>,
    pub skipped: Vec<ReindexSkip>,
    pub dry_run: bool,
}

fn small(n: u64) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// The rooms' stored text redacted again with today's rules (counted only when `dry`), the
/// rows it changes rewritten over zeroed pages: Recall's entries and the reports, counted, and
/// what persons and agents typed (queries, notes, reasons), and extraction's stored failures.
/// Returns the entries and the reports changed, and whether anything was. Unless `dry`, the
/// archive's own paths and the session facts parsers took from files beside a transcript too
/// (what migrations 45 and 46 did, for secrets newer rules find).
fn redact_stored(
    store: &mut Store,
    data_dir: &std::path::Path,
    dry: bool,
    now: &str,
) -> rusqlite::Result<(u32, u32, bool)> {
    let conn = store.conn_mut();
    conn.pragma_update(None, "secure_delete", true)?;
    let redacted = conn.transaction().and_then(|tx| {
        let (entries, typed) = recall::store::redact_stored(&tx, !dry, now)?;
        let reports = insights::store::redact_stored(&tx, !dry)?;
        let reasons = git::correct::redact_stored(&tx, !dry)?;
        let failures = recall::extract::store::redact_stored(&tx, !dry)?;
        let own = if dry {
            0
        } else {
            archive::store::seal_kept_paths(&tx, data_dir)?
                + archive::store::redact_session_facts(&tx)?
        };
        tx.commit()?;
        Ok((
            entries,
            reports,
            entries > 0 || reports > 0 || typed > 0 || reasons > 0 || failures > 0 || own > 0,
        ))
    });
    conn.pragma_update(None, "secure_delete", false)?;
    redacted
}

/// After secrets left records: the full-text index's segments rewritten (a deleted entry's
/// words stay in an old segment until then) over zeroed pages, and the write-ahead log
/// emptied, so no old page holding them survives in either file.
fn erase_freed(store: &mut Store) -> rusqlite::Result<()> {
    let conn = store.conn_mut();
    conn.pragma_update(None, "secure_delete", true)?;
    let compacted = conn.transaction().and_then(|tx| {
        archive::forget::compact_index(&tx)?;
        tx.commit()
    });
    let checkpointed =
        compacted.and_then(|()| conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(())));
    conn.pragma_update(None, "secure_delete", false)?;
    checkpointed
}

impl Cairn {
    /// How many sessions read from a transcript here were read before their agent's
    /// transcripts last changed: those a reindex may put right.
    pub fn sessions_read_before(&self) -> Result<u32> {
        let store = self.store();
        let older = archive::store::outdated_count(store.conn()).map_err(|e| store.err(e))?;
        Ok(small(older))
    }

    /// Read the sessions `req` names again from their retained copies and store what today's
    /// parsers make of them. `progress` counts the copies' bytes.
    pub fn reindex(&self, req: &ReindexRequest, progress: &dyn Progress) -> Result<ReindexReport> {
        if !req.dry_run {
            self.writable()?;
        }
        let mut store = self.writer()?;
        let rows = {
            let session = match req.session.as_deref() {
                Some(s) => Some(self.session_row(&store, s)?),
                None => None,
            };
            archive::store::reindex_selection(store.conn(), session, req.agent, req.outdated)
                .map_err(|e| store.err(e))?
        };
        let mut report = ReindexReport {
            dry_run: req.dry_run,
            ..ReindexReport::default()
        };
        // Planned first for the totals the progress shows, then again for each session under
        // the capture lock, held only while that session is rebuilt: a hook waits for one
        // session at most, and what a capture stores meanwhile is in the copy read next.
        let mut plans = Vec::new();
        for (row, key) in rows {
            match reindex::plan(store.conn(), &self.data_dir, row)? {
                Ok(plan) => plans.push(plan),
                Err(reason) => report.skipped.push(ReindexSkip {
                    session_key: key,
                    reason,
                }),
            }
        }
        progress.start(
            plans.len() as u64,
            plans.iter().map(|p| p.bytes).sum::<u64>(),
        );
        let lock = CaptureLock::open(&self.data_dir)?;
        let now = clock::now();
        let mut touched = capture::Touched::default();
        let (mut before, mut after, mut changed) = (0u64, 0u64, 0u64);
        for planned in &plans {
            let held = lock.lock_telling(progress)?;
            let outcome = self.reindex_session(&mut store, planned, req.dry_run, &now)?;
            drop(held);
            progress.advance(planned.bytes);
            let (rebuilt, revoked, redacted) = match outcome {
                Ok(done) => done,
                Err(reason) => {
                    report.skipped.push(ReindexSkip {
                        session_key: planned.session_key().to_owned(),
                        reason,
                    });
                    continue;
                }
            };
            if !req.dry_run {
                touched.sessions.push(planned.row());
            }
            if rebuilt.records_changed > 0 || redacted > 0 {
                let conn = store.conn();
                let named = archive::store::session_handle(conn, planned.row())
                    .and_then(|h| Ok((h, archive::store::session_head(conn, planned.row())?)));
                let (handle, head) = named.map_err(|e| store.err(e))?;
                report.changed.push(ReindexChange {
                    session_key: planned.session_key().to_owned(),
                    handle,
                    title: head.title,
                    records_changed: small(rebuilt.records_changed),
                    evidence_revoked: revoked,
                    copy_lines_redacted: small(redacted),
                });
            }
            report.sessions += 1;
            report.sessions_changed += u32::from(rebuilt.records_changed > 0 || redacted > 0);
            report.copy_lines_redacted = report.copy_lines_redacted.saturating_add(small(redacted));
            report.turns_before += small(rebuilt.turns_before);
            report.turns_after += small(rebuilt.turns_after);
            report.evidence_revoked += revoked;
            before += rebuilt.records_before;
            after += rebuilt.records_after;
            changed += rebuilt.records_changed;
        }
        report.records_before = small(before);
        report.records_after = small(after);
        report.records_changed = small(changed);
        if !touched.sessions.is_empty() {
            archive::store::log_reindex(
                store.conn(),
                &now,
                touched.sessions.len() as u64,
                before,
                after,
            )
            .map_err(|e| store.err(e))?;
        }
        // Text the rooms stored from transcripts and model answers, redacted again as well.
        let (entries, reports, any) = redact_stored(&mut store, self.data_dir(), req.dry_run, &now)
            .map_err(|e| store.err(e))?;
        // The copies' manifests follow the rows: one that holds what the rows no longer hold
        // (a path kept sealed, a fact redacted, now or by an earlier reindex) is written
        // again from them, under the capture lock as a session's rewrite is.
        if !req.dry_run {
            let held = lock.lock_telling(progress)?;
            self.restate_manifests(&mut store, &touched.sessions)?;
            drop(held);
        }
        let pulled = self.redact_pulled(req.dry_run)?;
        report.pulled_files_redacted = pulled;
        report.recall_entries_redacted = entries;
        report.reports_redacted = reports;
        if !req.dry_run && (report.copy_lines_redacted > 0 || any) {
            erase_freed(&mut store).map_err(|e| store.err(e))?;
        }
        // Association starts over for each session; what it derives is rebuildable, so a
        // failure is logged by `link` and the sessions stay queued for the next relink. (A dry
        // run touched none, and relinks nothing another capture left queued either.)
        if !touched.sessions.is_empty() {
            self.link(&mut store, &touched, None, usize::MAX);
        }
        progress.finish();
        Ok(report)
    }

    /// Read one session again and rebuild it in its own transaction (rolled back when `dry`),
    /// the caller holding the capture lock. `Ok(Err(why))`: it is left as it is (its copy
    /// went or cannot be read, or its source changed, since it was planned). Also says how
    /// many copy lines today's rules redact further: their copies are written again beside
    /// the old ones first, and take their place once the rebuild has committed.
    fn reindex_session(
        &self,
        store: &mut Store,
        planned: &reindex::Plan,
        dry: bool,
        now: &str,
    ) -> Result<std::result::Result<(reindex::Rebuilt, u32, u64), String>> {
        let plan = match reindex::plan(store.conn(), &self.data_dir, planned.row())? {
            Ok(plan) => plan,
            Err(reason) => return Ok(Err(reason)),
        };
        let reread = match reindex::scan(&plan, &self.data_dir) {
            Ok(reread) => reread,
            Err(e) => return Ok(Err(format!("{e}; its records are left as they are"))),
        };
        // Under the capture lock no other reindex is between writing a copy and its commit:
        // an unready rewrite is one a stopped reindex left.
        archive::swaps::abandon(store.conn(), &self.data_dir)?;
        let written = if dry {
            Ok(Vec::new())
        } else {
            self.write_scrubbed(store, &reread)
        };
        // What the rewritten lines held leaves the database's pages too: freed pages are
        // zeroed while this session's old records are deleted.
        let scrubbing = !dry && !reread.scrubs.is_empty();
        let secure_delete = |store: &Store, on: bool| {
            store
                .conn()
                .pragma_update(None, "secure_delete", on)
                .map_err(|e| store.err(e))
        };
        if scrubbing {
            secure_delete(store, true)?;
        }
        let outcome = match written {
            Ok(lengths) => self.rebuild_session(store, &plan, &reread, &lengths, dry, now),
            Err(e) => Err(e),
        };
        if scrubbing {
            secure_delete(store, false)?;
        }
        if !dry && matches!(outcome, Ok(Ok(_))) {
            archive::swaps::finish(store.conn_mut(), &self.data_dir)?;
        } else {
            archive::swaps::abandon(store.conn(), &self.data_dir)?;
        }
        let redacted = reread.rewritten();
        Ok(outcome?.map(|(rebuilt, revoked)| (rebuilt, revoked, redacted)))
    }

    /// Write each copy that holds lines today's rules redact further again, beside the old
    /// one, listed first as a rewrite not yet ready, its manifest made again from the rows.
    /// Returns their lengths.
    fn write_scrubbed(&self, store: &Store, reread: &reindex::Reread) -> Result<Vec<u64>> {
        let retained = archive::retain::Retained::new(&self.data_dir);
        let mut lengths = Vec::with_capacity(reread.scrubs.len());
        for scrub in &reread.scrubs {
            let rows = archive::rebuild::source_by_rows(store.conn(), scrub.source_id)
                .map_err(|e| store.err(e))?;
            archive::swaps::begin(store.conn(), scrub.source_id, scrub.generation)
                .map_err(|e| store.err(e))?;
            lengths.push(retained.write_scrubbed_with(
                &scrub.copy,
                rows.as_ref().map(|r| &r.manifest),
                scrub.lines(&retained)?,
            )?);
        }
        Ok(lengths)
    }

    /// After the rows were redacted again ([`redact_stored`]): each copy of a source whose
    /// manifest is stale (it holds what today's rules redact, or another path or key than the
    /// rows now give) written again with the manifest its rows make, through the same swap as
    /// a rewritten copy (listed, written beside, made ready with the copy's new length in one
    /// transaction, then put in place). The sources looked at: those of the sessions read
    /// again (`sessions`), and every source whose rows hold a redaction marker (what a reindex
    /// redacted, now or before manifests followed the rows), so the copies of an archive
    /// whose rows are clean are not all read. A copy that cannot be read or written is
    /// logged and left for the next reindex. Returns how many copies were written again.
    fn restate_manifests(&self, store: &mut Store, sessions: &[i64]) -> Result<u64> {
        let conn = store.conn();
        let e = |err| store.err(err);
        let mut sources: std::collections::BTreeSet<i64> =
            archive::rebuild::sources_with_marks(conn)
                .map_err(e)?
                .into_iter()
                .collect();
        for &session in sessions {
            sources.extend(archive::rebuild::sources_of_session(conn, session).map_err(e)?);
        }
        let retained = archive::retain::Retained::new(&self.data_dir);
        // `(source, generation, new length when it is the current generation's)`.
        let mut written = Vec::new();
        for source in sources {
            let Some(rows) = archive::rebuild::source_by_rows(conn, source).map_err(e)? else {
                continue;
            };
            for generation in 0..=rows.generation {
                let copy = retained.path(rows.agent, &rows.manifest.source_key, generation);
                if !copy.exists() {
                    continue;
                }
                let current = generation == rows.generation;
                // Only the current generation's length is recorded; an older one is read whole.
                let committed = if current { rows.committed } else { 0 };
                let bytes = match retained.restate_manifest(&copy, committed, &rows.manifest) {
                    Ok(Some(bytes)) => bytes,
                    Ok(None) => continue,
                    Err(err) => {
                        tracing::warn!(copy = %copy.display(), error = %err,
                            "retained copy's manifest not written again");
                        continue;
                    }
                };
                archive::swaps::begin(conn, source, generation).map_err(e)?;
                match retained.write_beside(&copy, &bytes) {
                    Ok(len) => written.push((source, generation, current.then_some(len))),
                    Err(err) => tracing::warn!(copy = %copy.display(), error = %err,
                        "retained copy's manifest not written again"),
                }
            }
        }
        if !written.is_empty() {
            let path = store.path().to_owned();
            let db = crate::store::err_at(&path);
            let tx = store.conn_mut().transaction().map_err(db)?;
            for (source, generation, len) in &written {
                archive::swaps::ready(&tx, *source, *generation, *len).map_err(db)?;
            }
            tx.commit().map_err(db)?;
        }
        // What was listed but not made ready (a write that failed) is removed with its file.
        archive::swaps::abandon(store.conn(), &self.data_dir)?;
        archive::swaps::finish(store.conn_mut(), &self.data_dir)?;
        Ok(written.len() as u64)
    }

    /// The rebuild's transaction: the session's records replaced, each room bringing its rows
    /// along, the rewritten copies (`lengths`, from [`Cairn::write_scrubbed`]) made ready.
    fn rebuild_session(
        &self,
        store: &mut Store,
        plan: &reindex::Plan,
        reread: &reindex::Reread,
        lengths: &[u64],
        dry: bool,
        now: &str,
    ) -> Result<std::result::Result<(reindex::Rebuilt, u32), String>> {
        let path = store.path().to_owned();
        let db = crate::store::err_at(&path);
        let tx = store
            .conn_mut()
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(db)?;
        let row = plan.row();
        let turns = archive::forget::turn_ids(&tx, &[row]).map_err(db)?;
        semantic::forget::delete(&tx, &turns).map_err(db)?;
        let rebuilt = match reindex::rebuild(&tx, &self.data_dir, plan, reread, now)? {
            Ok(rebuilt) => rebuilt,
            Err(why) => return Ok(Err(why)),
        };
        for (scrub, &len) in reread.scrubs.iter().zip(lengths) {
            let current = scrub.current.then_some(len);
            archive::swaps::ready(&tx, scrub.source_id, scrub.generation, current).map_err(db)?;
        }
        git::associate::reset(&tx, row).map_err(db)?;
        archive::store::queue_link(&tx, row, None).map_err(db)?;
        // Evidence cites records by key: the keys of rewritten lines change first, then each
        // range is found again (a range over a redacted record reads differently: revoked).
        for (old, new) in &reread.rekeyed {
            recall::store::rekey_evidence(&tx, row, old, new).map_err(db)?;
        }
        let revoked = recall::evidence::verify_session(&tx, row, now)?;
        recall::extract::store::reread(&tx, row)?;
        if !reread.scrubs.is_empty() {
            recall::evidence::forget_digests(&tx, row)?;
        }
        if dry {
            tx.rollback().map_err(db)?;
        } else {
            tx.commit().map_err(db)?;
        }
        Ok(Ok((rebuilt, revoked)))
    }
}

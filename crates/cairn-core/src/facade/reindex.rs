//! The [`Cairn`] facade's reindex: sessions read again from their retained copies by today's
//! parsers ([`archive::capture::reindex`]), one transaction a session in which each room
//! brings its own rows along (vectors of the replaced turns dropped, association started over,
//! Recall's evidence found again by its anchor records), then the sessions relinked.

use serde::{Deserialize, Serialize};

use crate::archive::capture::{self, CaptureLock, Progress, reindex};
use crate::archive::store::Store;
use crate::archive::{self, Agent};
use crate::error::Result;
use crate::{Cairn, clock, git, recall, semantic};

/// Which sessions to read again: one, an agent's, or every one.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct ReindexRequest {
    /// A session key or the agent's own session id.
    pub session: Option<String>,
    pub agent: Option<Agent>,
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
    /// The sessions that read differently now, in the order they were first captured.
    pub changed: Vec<ReindexChange>,
    pub skipped: Vec<ReindexSkip>,
    pub dry_run: bool,
}

fn small(n: u64) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

impl Cairn {
    /// How many sessions read from a transcript here an older revision of the parsers read:
    /// those a reindex may put right.
    pub fn sessions_read_before(&self) -> Result<u32> {
        let store = self.store();
        let (older, _) =
            archive::store::read_before(store.conn(), archive::sources::PARSERS_REVISION)
                .map_err(|e| store.err(e))?;
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
            archive::store::reindex_selection(store.conn(), session, req.agent)
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
            let held = lock.lock()?;
            let outcome = self.reindex_session(&mut store, planned, req.dry_run, &now)?;
            drop(held);
            progress.advance(planned.bytes);
            let (rebuilt, revoked) = match outcome {
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
            if rebuilt.records_changed > 0 {
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
                });
            }
            report.sessions += 1;
            report.sessions_changed += u32::from(rebuilt.records_changed > 0);
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
        // Association starts over for each session; what it derives is rebuildable, so a
        // failure is logged by `link` and the sessions stay queued for the next relink. (A dry
        // run touched none, and relinks nothing another capture left queued either.)
        if !touched.sessions.is_empty() {
            self.link(&mut store, &touched, None);
        }
        progress.finish();
        Ok(report)
    }

    /// Read one session again and rebuild it in its own transaction (rolled back when `dry`),
    /// the caller holding the capture lock. `Ok(Err(why))`: it is left as it is (its copy
    /// went or cannot be read, or its source changed, since it was planned).
    fn reindex_session(
        &self,
        store: &mut Store,
        planned: &reindex::Plan,
        dry: bool,
        now: &str,
    ) -> Result<std::result::Result<(reindex::Rebuilt, u32), String>> {
        let plan = match reindex::plan(store.conn(), &self.data_dir, planned.row())? {
            Ok(plan) => plan,
            Err(reason) => return Ok(Err(reason)),
        };
        let batches = match reindex::read(&plan, &self.data_dir) {
            Ok(batches) => batches,
            Err(e) => return Ok(Err(format!("{e}; its records are left as they are"))),
        };
        let path = store.path().to_owned();
        let db = crate::store::err_at(&path);
        let tx = store
            .conn_mut()
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(db)?;
        let row = plan.row();
        let turns = archive::forget::turn_ids(&tx, &[row]).map_err(db)?;
        semantic::forget::delete(&tx, &turns).map_err(db)?;
        let rebuilt = match reindex::rebuild(&tx, &self.data_dir, &plan, &batches, now)? {
            Ok(rebuilt) => rebuilt,
            Err(why) => return Ok(Err(why)),
        };
        git::associate::reset(&tx, row).map_err(db)?;
        archive::store::queue_link(&tx, row).map_err(db)?;
        let revoked = recall::evidence::verify_session(&tx, row, now)?;
        if dry {
            tx.rollback().map_err(db)?;
        } else {
            tx.commit().map_err(db)?;
        }
        Ok(Ok((rebuilt, revoked)))
    }
}

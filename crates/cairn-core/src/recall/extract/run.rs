//! Extraction passes: pick the sessions in scope, segment them, ask the model about each unit
//! (splitting units that do not fit), and commit each unit's entries through the commit guard.
//! Sessions run `concurrency` at a time; units of one session run in order.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::config::Settings;
use super::output::{self, RawEntry};
use super::prompt::{self, Identity};
use super::segment::{self, Message, Unit};
use super::store::{self as xstore, Candidate, Commit, GenState, Progress};
use super::{Scope, ts_minus};
use crate::error::{Error, Result};
use crate::llm::{Ask, Generator, LlmError, Outbound, Usage, outbound};
use crate::recall::evidence;
use crate::recall::model::{ReviewState, Scope as EntryScope, Status};
use crate::recall::store::NewEntry;
use crate::store::Store;

/// At most this many model calls for one unit, splits included; past it the session fails.
pub const MAX_CALLS_PER_UNIT: u32 = 256;

/// A pass's options.
#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    pub scope: Scope,
    /// Set to stop the pass after the units in flight (progress stays resumable).
    pub cancel: Option<Arc<AtomicBool>>,
}

/// Progress of a pass, as it happens. Serialisable: the desktop forwards these as events.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Event {
    PassStarted {
        fingerprint: String,
        sessions: u32,
    },
    SessionStarted {
        session_key: String,
        title: String,
        units_total: u32,
        units_todo: u32,
    },
    UnitDone {
        session_key: String,
        unit: u32,
        units_total: u32,
        entries: u32,
    },
    SessionDone {
        session_key: String,
        entries: u32,
    },
    SessionFailed {
        session_key: String,
        error: String,
    },
    Aborted {
        error: String,
    },
    Activated {
        fingerprint: String,
    },
}

/// Receives [`Event`]s (from worker threads).
pub trait ExtractProgress: Sync {
    fn event(&self, _event: &Event) {}
}

/// No progress reporting.
pub struct Silent;
impl ExtractProgress for Silent {}

/// A failed session.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct SessionFailure {
    pub session_key: String,
    pub error: String,
}

/// What a pass did.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct RunReport {
    pub fingerprint: String,
    /// Sessions read to their end in this pass (sessions with nothing to read are not
    /// counted, as in [`super::Preview::sessions`]).
    pub sessions: u32,
    pub failed: u32,
    /// Units read (committed) in this pass.
    pub units: u32,
    /// New entries.
    pub entries: u32,
    /// New entries whose cited records lie outside the unit the model was shown (or run
    /// backwards): a protocol violation, so each is bound to the whole unit with a note saying
    /// so (its `provenance_note`, shown where a reviewer reads it), never silently.
    #[serde(default)]
    pub evidence_out_of_unit: u32,
    /// Model calls made (splits included).
    pub calls: u32,
    pub usage: Usage,
    pub activated: bool,
    /// The pass's generation is still building: what it wrote waits, staged, for the
    /// generation to cover every session (or for `activate`) before anyone is served it.
    pub staged: bool,
    /// Sessions in scope left for a later pass: active within `quiet_period`.
    pub waiting_quiet: u32,
    /// The endpoint-scoped error that stopped the pass, if one did.
    pub aborted: Option<String>,
    pub cancelled: bool,
    pub failures: Vec<SessionFailure>,
}

/// One pass over the sessions in scope.
pub struct Pass<'a> {
    pub db: &'a Mutex<Store>,
    pub settings: &'a Settings,
    pub identity: &'a Identity,
    /// Who answers: an endpoint or an agent CLI (see [`crate::llm::generator`]).
    pub generator: &'a (dyn Generator + Sync),
    pub progress: &'a dyn ExtractProgress,
    /// Told the ids of each unit's entries once they are committed (the facade's vector
    /// refresher embeds them on a connection of its own, off the pass's path).
    pub committed: &'a (dyn Fn(Vec<String>) + Sync),
    pub now: String,
}

fn lock(db: &Mutex<Store>) -> MutexGuard<'_, Store> {
    db.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The longest a failed session waits, unless `failure_backoff` itself is longer.
const MAX_BACKOFF_MS: i64 = 7 * 24 * 3_600_000;

/// How long a session that failed `failures` times in a row waits: `failure_backoff`, then twice
/// as long after each further failure, at most a week. A session whose answers are always
/// refused costs a call a week, not one an hour, and a pass over it still comes round.
pub(crate) fn backoff_ms(failure_backoff_ms: i64, failures: u32) -> i64 {
    let doublings = failures.saturating_sub(1).min(30);
    failure_backoff_ms
        .saturating_mul(1 << doublings)
        .min(MAX_BACKOFF_MS.max(failure_backoff_ms))
}

/// Whether a session needs work at `now`: never read, grown since it was read, or failed long
/// enough ago (an explicit `--session` skips the failure wait).
pub(crate) fn needs_work(
    c: &Candidate,
    now: &str,
    failure_backoff_ms: i64,
    explicit: bool,
) -> bool {
    match &c.progress {
        None => true,
        // Grown by what a model is shown (grown by records it is not shown alone, the row
        // still covers it: a failed session waits out its back-off all the same).
        Some(_) if !c.covered => true,
        Some(p) if p.state == "done" => false,
        Some(p) if p.state == "failed" => {
            explicit || p.updated_at <= ts_minus(now, backoff_ms(failure_backoff_ms, p.failures))
        }
        Some(_) => true,
    }
}

/// The units of `digests` that `begin` would keep (already read, unchanged).
pub(crate) fn kept(progress: Option<&Progress>, digests: &[String]) -> usize {
    progress.map_or(0, |p| {
        p.digests
            .iter()
            .zip(digests)
            .take(p.cursor as usize)
            .take_while(|(a, b)| a == b)
            .count()
    })
}

impl Pass<'_> {
    pub fn run(&self, opts: &RunOptions) -> Result<RunReport> {
        let s = self.settings;
        let fp = self.identity.fingerprint();
        let quiet_cutoff = ts_minus(&self.now, s.quiet_period_ms);
        let state = {
            let store = lock(self.db);
            xstore::ensure_generation(store.conn(), self.identity, &self.now)?
        };
        if state == GenState::Retired {
            return Err(Error::Conflict(format!(
                "generation {} was retired; change [recall.extract] (model, prompts, request) to start a new one",
                &fp[..12]
            )));
        }
        let explicit = opts.scope.session.is_some();
        let mut readable = {
            let store = lock(self.db);
            xstore::Readable::load(store.conn())?
        };
        let todo: Vec<Candidate> = {
            let store = lock(self.db);
            let cands = xstore::candidates(
                store.conn(),
                Some(&fp),
                &opts.scope,
                (!explicit).then_some(quiet_cutoff.as_str()),
                &mut readable,
            )?;
            if explicit && cands.is_empty() {
                return Err(Error::NotFound(format!(
                    "session {:?} (or it has no records, or it is a sub-agent session); find sessions with `cairn sessions`",
                    opts.scope.session.as_deref().unwrap_or_default()
                )));
            }
            let mut todo: Vec<Candidate> = cands
                .into_iter()
                .filter(|c| needs_work(c, &self.now, s.failure_backoff_ms, explicit))
                .collect();
            if opts.scope.limit > 0 {
                todo.truncate(opts.scope.limit as usize);
            }
            todo
        };
        let waiting_quiet = {
            let store = lock(self.db);
            let waiting = xstore::waiting_quiet(
                store.conn(),
                Some(&fp),
                &opts.scope,
                &quiet_cutoff,
                &mut readable,
            )?;
            // What the scan learnt spares the next status reading those sessions; a pass
            // does not stop for it.
            if let Err(e) = readable.save(store.conn()) {
                tracing::warn!("keeping where sessions have something to read: {e}");
            }
            waiting
        };
        self.progress.event(&Event::PassStarted {
            fingerprint: fp.clone(),
            sessions: todo.len() as u32,
        });
        let report = Mutex::new(RunReport {
            fingerprint: fp.clone(),
            waiting_quiet,
            ..Default::default()
        });
        let abort: Mutex<Option<String>> = Mutex::new(None);
        let next = AtomicUsize::new(0);
        let stop = || {
            abort
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .is_some()
                || opts
                    .cancel
                    .as_ref()
                    .is_some_and(|c| c.load(Ordering::Relaxed))
        };
        std::thread::scope(|scope| {
            for _ in 0..s.concurrency.min(todo.len()) {
                scope.spawn(|| {
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        if i >= todo.len() || stop() {
                            break;
                        }
                        self.session(&fp, &todo[i], &report, &abort, &stop);
                    }
                });
            }
        });
        let mut report = report.into_inner().unwrap_or_else(PoisonError::into_inner);
        report.aborted = abort.into_inner().unwrap_or_else(PoisonError::into_inner);
        report.cancelled = opts
            .cancel
            .as_ref()
            .is_some_and(|c| c.load(Ordering::Relaxed));
        if let Some(e) = &report.aborted {
            self.progress.event(&Event::Aborted { error: e.clone() });
        }
        let mut store = lock(self.db);
        let path = store.path().to_owned();
        let tx = store
            .conn_mut()
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(|e| crate::store::db_err(&path, e))?;
        if report.aborted.is_none()
            && !report.cancelled
            && xstore::state(&tx, &fp)? == Some(GenState::Building)
        {
            let r = xstore::readiness(&tx, &fp, &quiet_cutoff)?;
            // A generation replaces the served one once it covers every session. The first
            // one replaces nothing: what it read is served at once (Recall from the first
            // pass, however narrow), and the sessions it has not read join as passes read them.
            let covers = r.uncovered == 0 || !xstore::any_active(&tx)?;
            if r.partial == 0 && covers && r.publishable > 0 {
                xstore::activate(&tx, &fp, &quiet_cutoff, &self.now)?;
                report.activated = true;
            }
        }
        report.staged = xstore::state(&tx, &fp)? == Some(GenState::Building);
        xstore::log_run(
            &tx,
            &xstore::RunLog {
                fingerprint: fp.clone(),
                started_at: self.now.clone(),
                finished_at: Some(crate::clock::now()),
                sessions: report.sessions,
                failed: report.failed,
                units: report.units,
                entries: report.entries,
                activated: report.activated,
                aborted: report.aborted.clone(),
            },
        )?;
        tx.commit().map_err(|e| crate::store::db_err(&path, e))?;
        if report.activated {
            self.progress.event(&Event::Activated { fingerprint: fp });
        }
        Ok(report)
    }

    /// Read one session to its end (or until the pass stops).
    fn session(
        &self,
        fp: &str,
        cand: &Candidate,
        report: &Mutex<RunReport>,
        abort: &Mutex<Option<String>>,
        stop: &dyn Fn() -> bool,
    ) {
        let rep = || report.lock().unwrap_or_else(PoisonError::into_inner);
        let fail = |error: String| {
            // Redacted once more before it is stored, reported or shown: each part of a message
            // that quotes a model or a server is redacted where it is quoted, and this is the one
            // gate every failure passes, whatever wrote it.
            let error = crate::llm::redacted(&error);
            let now = crate::clock::now();
            {
                let store = lock(self.db);
                if let Err(e) = xstore::fail(store.conn(), fp, cand.id, &error, &now) {
                    tracing::warn!("recording an extraction failure: {e}");
                }
            }
            self.progress.event(&Event::SessionFailed {
                session_key: cand.key.clone(),
                error: error.clone(),
            });
            let mut r = rep();
            r.failed += 1;
            r.failures.push(SessionFailure {
                session_key: cand.key.clone(),
                error,
            });
        };
        let loaded = {
            let store = lock(self.db);
            xstore::session_info(store.conn(), cand.id)
                .and_then(|info| Ok((info, xstore::records(store.conn(), cand.id)?)))
        };
        let (info, rows) = match loaded {
            Ok(x) => x,
            Err(e) => return fail(e.to_string()),
        };
        let messages = segment::from_records(&rows);
        let units = segment::segment(&messages, self.settings.max_window_chars);
        let digests: Vec<String> = units.iter().map(Unit::digest).collect();
        let content_digest = segment::units_digest(&digests);
        let begun = {
            let mut store = lock(self.db);
            let now = crate::clock::now();
            let path = store.path().to_owned();
            let dbe = |e| crate::store::db_err(&path, e);
            store
                .conn_mut()
                .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
                .map_err(dbe)
                .and_then(|tx| {
                    let cursor = xstore::begin(
                        &tx,
                        fp,
                        cand.id,
                        &digests,
                        &content_digest,
                        info.next_ordinal,
                        &now,
                    )?;
                    tx.commit().map_err(dbe)?;
                    Ok(cursor)
                })
        };
        let cursor = match begun {
            Ok(c) => c,
            Err(e) => return fail(e.to_string()),
        };
        let total = units.len() as u32;
        if cursor >= total {
            // Nothing to read (no visible records, or only hidden ones were added): marked
            // done by `begin`, not counted as a session read.
            return;
        }
        // Fail closed before anything is sent: a secret split across two records.
        let visible: Vec<&str> = messages
            .iter()
            .filter(|m| !m.hidden)
            .map(|m| m.content.as_str())
            .collect();
        if let Err(e) = outbound::check_joined(&visible) {
            return fail(e.to_string());
        }
        self.progress.event(&Event::SessionStarted {
            session_key: cand.key.clone(),
            title: info.title.clone(),
            units_total: total,
            units_todo: total - cursor,
        });
        let ob = Outbound::for_root(info.root.as_deref());
        let mut new_entries = 0;
        for u in cursor..total {
            if stop() {
                return;
            }
            let unit = &units[u as usize];
            let mut calls = 0;
            let mut usage = Usage::default();
            let raw = self.distill(unit, &unit.text, &ob, &mut calls, &mut usage);
            {
                let mut r = rep();
                r.calls += calls;
                r.usage += usage;
            }
            let raw: Vec<RawEntry> = match raw {
                // What the model wrote is redacted before anything of it is stored.
                Ok(r) => r.into_iter().map(|e| e.redacted(&ob)).collect(),
                Err(e) if e.scope() == crate::llm::Scope::Endpoint => {
                    let mut a = abort.lock().unwrap_or_else(PoisonError::into_inner);
                    if a.is_none() {
                        *a = Some(crate::llm::redacted(&e.to_string()));
                    }
                    return;
                }
                Err(e) => {
                    return fail(format!(
                        "unit {} (records {}-{}): {e}",
                        u + 1,
                        unit.start,
                        unit.end
                    ));
                }
            };
            let committed = self.commit(
                fp,
                &info,
                &messages,
                unit,
                u,
                &digests[u as usize],
                &content_digest,
                &raw,
            );
            match committed {
                Ok((Commit::Written { new_entries: n, .. }, noted)) => {
                    new_entries += n;
                    {
                        let mut r = rep();
                        r.units += 1;
                        r.entries += n;
                        r.evidence_out_of_unit += noted;
                    }
                    self.progress.event(&Event::UnitDone {
                        session_key: cand.key.clone(),
                        unit: u + 1,
                        units_total: total,
                        entries: n,
                    });
                }
                // Another pass moved this session on; it owns it now.
                Ok((Commit::Conflict, _)) => return,
                Err(e) => return fail(e.to_string()),
            }
        }
        rep().sessions += 1;
        self.progress.event(&Event::SessionDone {
            session_key: cand.key.clone(),
            entries: new_entries,
        });
    }

    /// Ask the model about `text` (a unit or a piece of one); on overflow or truncation, halve
    /// it and ask about each half, down to a floor.
    fn distill(
        &self,
        unit: &Unit,
        text: &str,
        ob: &Outbound,
        calls: &mut u32,
        usage: &mut Usage,
    ) -> std::result::Result<Vec<RawEntry>, LlmError> {
        *calls += 1;
        if *calls > MAX_CALLS_PER_UNIT {
            return Err(LlmError::Reply(format!(
                "needed more than {MAX_CALLS_PER_UNIT} model calls after splitting"
            )));
        }
        let s = self.settings;
        let schema = prompt::schema();
        let ask = Ask {
            system: s.prompts.for_kind(unit.kind),
            user: &prompt::user_message(unit, text),
            schema: Some((prompt::SCHEMA_NAME, &schema)),
            temperature: Some(s.temperature),
            max_tokens: Some(s.max_tokens),
            extra_body: Some(&s.extra_body),
        };
        match self.generator.ask(&ask, ob) {
            Ok(answer) => {
                *usage += answer.usage;
                output::parse(&answer.content)
            }
            Err(e) if e.scope() == crate::llm::Scope::Split => {
                let floor = (s.max_window_chars / 8).clamp(1, 2000);
                if text.chars().count() <= floor {
                    // What to change: the reply's budget, or the model (its context).
                    return Err(LlmError::Reply(match e {
                        LlmError::Truncated => format!(
                            "the model's reply was cut off at max_tokens ({}) even for {floor} characters of transcript: raise [recall.extract] max_tokens",
                            s.max_tokens
                        ),
                        _ => format!(
                            "does not fit the model's context even split down to {floor} characters ({e}): choose a model with a larger context, or lower [recall.extract] max_window_chars"
                        ),
                    }));
                }
                let (a, b) = split_text(text);
                let mut out = self.distill(unit, a, ob, calls, usage)?;
                out.extend(self.distill(unit, b, ob, calls, usage)?);
                Ok(out)
            }
            Err(e) => Err(e),
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn commit(
        &self,
        fp: &str,
        info: &xstore::SessionInfo,
        messages: &[Message],
        unit: &Unit,
        u: u32,
        unit_digest: &str,
        content_digest: &str,
        raw: &[RawEntry],
    ) -> Result<(Commit, u32)> {
        let now = crate::clock::now();
        let mut store = lock(self.db);
        let path = store.path().to_owned();
        let dbe = |e| crate::store::db_err(&path, e);
        let tx = store
            .conn_mut()
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(dbe)?;
        let mut entries = Vec::with_capacity(raw.len());
        // Entries whose citation was not taken as written, and why.
        let mut notes: Vec<(String, String)> = Vec::new();
        for (j, r) in raw.iter().enumerate() {
            let id = entry_id(fp, &info.key, unit_digest, j);
            let cited = output::evidence_range(r, unit.start, unit.end)
                .filter(|&(a, b)| evidence::bind(&tx, info.id, &info.key, a, b, &[], "").is_ok());
            let (a, b) = match cited {
                Some(range) => range,
                None => {
                    notes.push((
                        id.clone(),
                        output::out_of_unit_note(r, unit.start, unit.end),
                    ));
                    (unit.start, unit.end)
                }
            };
            let snippet = snippet(messages, a, b);
            let bound = evidence::bind(&tx, info.id, &info.key, a, b, &[], &snippet)?;
            entries.push(NewEntry {
                id,
                entry_type: r.entry_type,
                scope: EntryScope::Project,
                status: Status::Archived,
                review_state: ReviewState::UnreviewedAuto,
                title: r.title.clone(),
                body: if r.entities.is_empty() {
                    r.body.clone()
                } else {
                    format!("{}\n\nEntities: {}", r.body, r.entities.join("; "))
                },
                trigger: r.trigger.clone(),
                confidence: Some(r.confidence),
                uncertainty: String::new(),
                project: info.project.clone(),
                cwd: info.cwd.clone(),
                git_branch: info.git_branch.clone(),
                agent: info.agent.clone(),
                source_session_id: Some(info.id),
                source_episode_id: format!("{}:{}-{}", unit.kind.as_str(), unit.start, unit.end),
                source_run_id: fp.to_owned(),
                extractor_method: segment::SEGMENTER.to_owned(),
                model: self.settings.model.clone(),
                label: String::new(),
                transferable: false,
                provenance_ok: true,
                supersedes_entry_id: String::new(),
                evidence: bound,
            });
        }
        let outcome = xstore::commit_unit(&tx, fp, info.id, u, content_digest, &entries, &now)?;
        if outcome != Commit::Conflict {
            for (id, note) in &notes {
                tx.execute(
                    "UPDATE recall_entries SET provenance_note = ?2 WHERE id = ?1",
                    rusqlite::params![id, note],
                )
                .map_err(dbe)?;
            }
        }
        if outcome == Commit::Conflict {
            tx.rollback().map_err(dbe)?;
        } else {
            tx.commit().map_err(dbe)?;
            drop(store);
            if !entries.is_empty() {
                (self.committed)(entries.into_iter().map(|e| e.id).collect());
            }
        }
        Ok((outcome, notes.len() as u32))
    }
}

/// Stable id of the `j`-th entry of a unit: the same unit content gives the same ids, a changed
/// unit new ones.
pub fn entry_id(fingerprint: &str, session_key: &str, unit_digest: &str, j: usize) -> String {
    let doc = serde_json::json!(["cairn-extract", fingerprint, session_key, unit_digest, j]);
    hex::encode(Sha256::digest(doc.to_string().as_bytes()))[..32].to_owned()
}

/// The cited records' text, one line, at most 300 characters (indexed as evidence).
fn snippet(messages: &[Message], a: u32, b: u32) -> String {
    let text: Vec<&str> = messages
        .iter()
        .filter(|m| !m.hidden && m.ordinal >= a && m.ordinal <= b)
        .map(|m| m.content.as_str())
        .collect();
    let one = text
        .join(" ")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    match one.char_indices().nth(300) {
        Some((i, _)) => format!("{}…", &one[..i]),
        None => one,
    }
}

/// Halve `text` near its middle, preferring a block boundary, then a line break.
pub fn split_text(text: &str) -> (&str, &str) {
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    let mid = chars.get(chars.len() / 2).map_or(text.len(), |c| c.0);
    let window = text.len() / 4;
    let near = |pat: &str| -> Option<usize> {
        let lo = mid.saturating_sub(window);
        let hi = (mid + window).min(text.len());
        text.match_indices(pat)
            .map(|(i, _)| i)
            .filter(|&i| i > 0 && i >= lo && i <= hi)
            .min_by_key(|&i| i.abs_diff(mid))
    };
    let at = near("\n\n[").or_else(|| near("\n")).unwrap_or(mid);
    let (a, b) = text.split_at(at);
    (a.trim_end(), b.trim_start())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_prefer_block_boundaries() {
        let t = "[1] ASSISTANT:\naaaa\n\n[2] ASSISTANT:\nbbbb\n\n[3] ASSISTANT:\ncccc";
        let (a, b) = split_text(t);
        assert!(b.starts_with("[2]") || b.starts_with("[3]"), "{b}");
        assert_eq!(format!("{a}\n\n{b}"), t);
        let (a, b) = split_text("abcdefgh");
        assert_eq!((a, b), ("abcd", "efgh"));
        let (a, b) = split_text("héllo wörld");
        assert!(!a.is_empty() && !b.is_empty());
    }

    #[test]
    fn entry_ids_are_stable_and_distinct() {
        assert_eq!(entry_id("f", "s", "d", 0), entry_id("f", "s", "d", 0));
        assert_ne!(entry_id("f", "s", "d", 0), entry_id("f", "s", "d", 1));
        assert_ne!(entry_id("f", "s", "d", 0), entry_id("f", "s", "e", 0));
        assert_eq!(entry_id("f", "s", "d", 0).len(), 32);
    }

    const HOUR: i64 = 3_600_000;

    #[test]
    fn the_wait_doubles_with_each_failure_up_to_a_week() {
        assert_eq!(backoff_ms(HOUR, 0), HOUR);
        assert_eq!(backoff_ms(HOUR, 1), HOUR);
        assert_eq!(backoff_ms(HOUR, 2), 2 * HOUR);
        assert_eq!(backoff_ms(HOUR, 4), 8 * HOUR);
        assert_eq!(backoff_ms(HOUR, 9), MAX_BACKOFF_MS);
        assert_eq!(backoff_ms(HOUR, u32::MAX), MAX_BACKOFF_MS);
        // A back-off set longer than a week is kept, never shortened.
        assert_eq!(backoff_ms(30 * 24 * HOUR, 3), 30 * 24 * HOUR);
        assert_eq!(backoff_ms(i64::MAX, 5), i64::MAX);
    }

    fn failed(failures: u32, at: &str) -> Candidate {
        Candidate {
            id: 1,
            key: "k".into(),
            next_ordinal: 10,
            covered: true,
            progress: Some(Progress {
                state: "failed".into(),
                cursor: 0,
                total: 1,
                digests: Vec::new(),
                content_digest: String::new(),
                covered_ordinal: 10,
                last_error: Some("prose".into()),
                failures,
                updated_at: at.into(),
            }),
        }
    }

    #[test]
    fn a_failed_session_waits_out_its_own_back_off() {
        let at = "2026-12-01T10:00:00.000Z";
        let later = |h: &str| format!("2026-12-01T{h}:00:00.001Z");
        // Once: an hour. Three times in a row: four hours.
        assert!(!needs_work(&failed(1, at), &later("10"), HOUR, false));
        assert!(needs_work(&failed(1, at), &later("11"), HOUR, false));
        assert!(!needs_work(&failed(3, at), &later("13"), HOUR, false));
        assert!(needs_work(&failed(3, at), &later("14"), HOUR, false));
        // Asked for by name, it does not wait; grown since, it is new input.
        assert!(needs_work(&failed(3, at), &later("10"), HOUR, true));
        let mut grown = failed(3, at);
        (grown.next_ordinal, grown.covered) = (11, false);
        assert!(needs_work(&grown, &later("10"), HOUR, false));
        // Grown by records a model is not shown alone: still covered, it waits.
        let mut noise = failed(3, at);
        noise.next_ordinal = 11;
        assert!(!needs_work(&noise, &later("10"), HOUR, false));
    }
}

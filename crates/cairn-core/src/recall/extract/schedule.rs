//! When extraction passes run, as a pure state machine. A daemon (the desktop app) tells the
//! [`Scheduler`] what happened — a sync finished, a pass finished — and asks what is due; the
//! scheduler never sleeps, spawns or reads a clock itself, so every rule is unit-tested.
//!
//! Rules:
//! * a **startup** full pass is due as soon as the scheduler exists;
//! * each finished sync makes an incremental pass due `debounce` later; more syncs in that
//!   window push it back (one pass per burst);
//! * a sync also schedules a **quiet** pass `quiet_period` (+ `debounce`) later, when the
//!   sessions it touched have gone idle and become eligible;
//! * the **backstop** runs a full pass every `backstop` after the last full pass; without a
//!   backstop, a catch-up incremental pass runs every `max(quiet_period, 1 min)`;
//! * passes never overlap: what falls due during a pass waits for its end (coalesced, never
//!   queued twice);
//! * a pass that failed at the endpoint (server down, key refused) holds every pass for
//!   `failure_backoff`; what was due stays due.

use std::time::{Duration, Instant};

use super::config::Settings;

/// The local hour nightly passes start at.
pub const NIGHTLY_HOUR: i8 = 3;

/// How long from `now` until the next [`NIGHTLY_HOUR`]:00 in `now`'s time zone (always in the
/// future, at most a day away); `None` if the calendar cannot say.
pub fn until_night(now: &jiff::ZonedDateTime) -> Option<Duration> {
    let night = |date: jiff::civil::Date| {
        date.at(NIGHTLY_HOUR, 0, 0, 0)
            .to_zoned_datetime(now.time_zone().clone())
            .ok()
    };
    let today = night(now.date())?;
    let at = if &today > now {
        today
    } else {
        night(now.date().tomorrow().ok()?)?
    };
    Some(now.duration_until(&at).unsigned_abs())
}

/// [`until_night`] from the current local time.
pub fn until_next_night() -> Option<Duration> {
    until_night(&jiff::ZonedDateTime::now())
}

/// The timing rules.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Policy {
    pub debounce: Duration,
    pub quiet_period: Duration,
    /// `None`: no backstop (catch-up incremental passes instead).
    pub backstop: Option<Duration>,
    pub failure_backoff: Duration,
}

/// How long after a sync burst the incremental pass starts.
pub const DEBOUNCE: Duration = Duration::from_secs(30);

impl Policy {
    pub fn from_settings(s: &Settings) -> Policy {
        let ms = |v: i64| Duration::from_millis(v.max(0) as u64);
        Policy {
            debounce: DEBOUNCE,
            quiet_period: ms(s.quiet_period_ms),
            backstop: s.backstop_interval_ms.map(ms),
            failure_backoff: ms(s.failure_backoff_ms),
        }
    }

    fn catch_up(&self) -> Duration {
        self.quiet_period.max(Duration::from_secs(60))
    }
}

/// What kind of pass to run. A full pass also revisits sessions that changed after they were
/// read; an incremental pass may stop at sessions already covered (both are correct; full is the
/// thorough one).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub enum PassKind {
    Incremental,
    Full,
}

/// How a pass ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Completed,
    /// The server or its configuration failed: back off.
    EndpointFailed,
    Cancelled,
}

impl Outcome {
    /// How a [`crate::Cairn::recall_extract_run`] call ended, for [`Scheduler::finished`]: a
    /// cancelled pass leaves its work due, a pass stopped by the server (or that could not
    /// start: configuration, lock, database) holds passes for the backoff.
    pub fn of(result: &crate::error::Result<super::RunReport>) -> Outcome {
        match result {
            Ok(r) if r.cancelled => Outcome::Cancelled,
            Ok(r) if r.aborted.is_some() => Outcome::EndpointFailed,
            Ok(_) => Outcome::Completed,
            Err(_) => Outcome::EndpointFailed,
        }
    }
}

/// The pass timer a daemon drives; see the module docs for the rules.
#[derive(Debug, Clone)]
pub struct Scheduler {
    policy: Policy,
    running: Option<(Instant, PassKind)>,
    full_due: Option<Instant>,
    sync_due: Option<Instant>,
    quiet_due: Option<Instant>,
    catch_up_due: Option<Instant>,
    hold_until: Option<Instant>,
}

impl Scheduler {
    /// A scheduler whose startup full pass is due at `now`.
    pub fn new(policy: Policy, now: Instant) -> Scheduler {
        Scheduler {
            policy,
            running: None,
            full_due: Some(now),
            sync_due: None,
            quiet_due: None,
            catch_up_due: None,
            hold_until: None,
        }
    }

    pub fn policy(&self) -> Policy {
        self.policy
    }

    pub fn is_running(&self) -> bool {
        self.running.is_some()
    }

    /// A sync finished at `now`.
    pub fn sync_completed(&mut self, now: Instant) {
        self.sync_due = Some(now + self.policy.debounce);
        self.quiet_due = Some(now + self.policy.quiet_period + self.policy.debounce);
    }

    /// The next pass and when it is due (not before a failure hold ends); `None` while a pass
    /// runs or when nothing is scheduled. A daemon sleeps until then.
    pub fn next_due(&self) -> Option<(Instant, PassKind)> {
        if self.running.is_some() {
            return None;
        }
        let incremental = [self.sync_due, self.quiet_due, self.catch_up_due]
            .into_iter()
            .flatten()
            .min();
        let (at, kind) = match (self.full_due, incremental) {
            (Some(f), Some(i)) if i < f => (i, PassKind::Incremental),
            (Some(f), _) => (f, PassKind::Full),
            (None, Some(i)) => (i, PassKind::Incremental),
            (None, None) => return None,
        };
        let at = self.hold_until.map_or(at, |h| h.max(at));
        // A full pass that is also due by then subsumes the incremental one.
        let kind = if self.full_due.is_some_and(|f| f <= at) {
            PassKind::Full
        } else {
            kind
        };
        Some((at, kind))
    }

    /// The pass to start now, if one is due; the scheduler then counts it as running.
    pub fn poll(&mut self, now: Instant) -> Option<PassKind> {
        let (at, kind) = self.next_due()?;
        if at > now {
            return None;
        }
        self.running = Some((now, kind));
        Some(kind)
    }

    /// The running pass ended at `now`.
    pub fn finished(&mut self, now: Instant, outcome: Outcome) {
        let Some((started, kind)) = self.running.take() else {
            return;
        };
        match outcome {
            Outcome::Completed => {
                let served = |due: &mut Option<Instant>| {
                    if due.is_some_and(|d| d <= started) {
                        *due = None;
                    }
                };
                served(&mut self.sync_due);
                served(&mut self.quiet_due);
                served(&mut self.catch_up_due);
                if kind == PassKind::Full {
                    self.full_due = self.policy.backstop.map(|b| now + b);
                }
                if self.policy.backstop.is_none() {
                    self.catch_up_due = Some(now + self.policy.catch_up());
                }
                self.hold_until = None;
            }
            Outcome::EndpointFailed => {
                self.hold_until = Some(now + self.policy.failure_backoff);
            }
            Outcome::Cancelled => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_nightly_pass_is_the_next_three_oclock() {
        let at = |s: &str| s.parse::<jiff::ZonedDateTime>().unwrap();
        let h = |d: Option<Duration>| d.unwrap().as_secs() / 60;
        assert_eq!(h(until_night(&at("2026-03-01T01:00:00+00:00[UTC]"))), 120);
        assert_eq!(
            h(until_night(&at("2026-03-01T03:00:00+00:00[UTC]"))),
            24 * 60
        );
        assert_eq!(
            h(until_night(&at("2026-03-01T22:30:00+00:00[UTC]"))),
            4 * 60 + 30
        );
    }

    const S: Duration = Duration::from_secs(1);

    fn policy() -> Policy {
        Policy {
            debounce: 30 * S,
            quiet_period: 600 * S,
            backstop: Some(3600 * S),
            failure_backoff: 1800 * S,
        }
    }

    #[test]
    fn starts_with_a_full_pass_then_waits_for_the_backstop() {
        let t0 = Instant::now();
        let mut s = Scheduler::new(policy(), t0);
        assert_eq!(s.poll(t0), Some(PassKind::Full));
        assert_eq!(s.poll(t0), None, "passes never overlap");
        s.finished(t0 + 10 * S, Outcome::Completed);
        assert_eq!(s.next_due(), Some((t0 + 3610 * S, PassKind::Full)));
        assert_eq!(s.poll(t0 + 3609 * S), None);
        assert_eq!(s.poll(t0 + 3610 * S), Some(PassKind::Full));
    }

    #[test]
    fn a_burst_of_syncs_makes_one_debounced_pass_and_one_quiet_pass() {
        let t0 = Instant::now();
        let mut s = Scheduler::new(policy(), t0);
        s.poll(t0);
        s.finished(t0, Outcome::Completed);
        for i in 0..5 {
            s.sync_completed(t0 + i * 10 * S);
        }
        // Debounced from the last sync (t0 + 40 s).
        assert_eq!(s.poll(t0 + 69 * S), None);
        assert_eq!(s.poll(t0 + 70 * S), Some(PassKind::Incremental));
        s.finished(t0 + 75 * S, Outcome::Completed);
        // The quiet pass: once the synced sessions have been idle for the quiet period.
        assert_eq!(s.next_due(), Some((t0 + 670 * S, PassKind::Incremental)));
        assert_eq!(s.poll(t0 + 670 * S), Some(PassKind::Incremental));
        s.finished(t0 + 671 * S, Outcome::Completed);
        assert_eq!(s.next_due().map(|d| d.1), Some(PassKind::Full));
    }

    #[test]
    fn what_falls_due_during_a_pass_runs_after_it() {
        let t0 = Instant::now();
        let mut s = Scheduler::new(policy(), t0);
        s.poll(t0);
        s.sync_completed(t0 + S);
        assert_eq!(s.poll(t0 + 100 * S), None);
        s.finished(t0 + 100 * S, Outcome::Completed);
        // The sync came after the pass started: its pass is still owed.
        assert_eq!(s.poll(t0 + 100 * S), Some(PassKind::Incremental));
    }

    #[test]
    fn an_endpoint_failure_holds_every_pass_for_the_backoff() {
        let t0 = Instant::now();
        let mut s = Scheduler::new(policy(), t0);
        s.poll(t0);
        s.finished(t0 + S, Outcome::EndpointFailed);
        s.sync_completed(t0 + 2 * S);
        assert_eq!(s.poll(t0 + 100 * S), None);
        // The failed full pass is retried first, after the hold.
        assert_eq!(s.next_due(), Some((t0 + 1801 * S, PassKind::Full)));
        assert_eq!(s.poll(t0 + 1801 * S), Some(PassKind::Full));
        s.finished(t0 + 1802 * S, Outcome::Completed);
        assert_eq!(
            s.poll(t0 + 1802 * S),
            None,
            "the sync was served by the full pass"
        );
    }

    #[test]
    fn without_a_backstop_catch_up_passes_follow_the_quiet_period() {
        let t0 = Instant::now();
        let mut p = policy();
        p.backstop = None;
        p.quiet_period = 10 * S;
        let mut s = Scheduler::new(p, t0);
        s.poll(t0);
        s.finished(t0, Outcome::Completed);
        // Paced by max(quiet period, 1 minute).
        assert_eq!(s.next_due(), Some((t0 + 60 * S, PassKind::Incremental)));
        s.poll(t0 + 60 * S);
        s.finished(t0 + 61 * S, Outcome::Completed);
        assert_eq!(s.next_due(), Some((t0 + 121 * S, PassKind::Incremental)));
    }

    #[test]
    fn outcomes_follow_the_run_report() {
        let ok = super::super::RunReport::default();
        assert_eq!(Outcome::of(&Ok(ok.clone())), Outcome::Completed);
        let stopped = super::super::RunReport {
            aborted: Some("HTTP 401".into()),
            ..ok.clone()
        };
        assert_eq!(Outcome::of(&Ok(stopped)), Outcome::EndpointFailed);
        let cancelled = super::super::RunReport {
            cancelled: true,
            ..ok
        };
        assert_eq!(Outcome::of(&Ok(cancelled)), Outcome::Cancelled);
        assert_eq!(
            Outcome::of(&Err(crate::Error::Invalid("x".into()))),
            Outcome::EndpointFailed
        );
    }

    #[test]
    fn a_cancelled_pass_leaves_its_work_due() {
        let t0 = Instant::now();
        let mut s = Scheduler::new(policy(), t0);
        s.poll(t0);
        s.finished(t0 + S, Outcome::Cancelled);
        assert_eq!(s.poll(t0 + S), Some(PassKind::Full));
    }
}

//! Model-backed extraction: sessions → units → a model → `unreviewed_auto` entries with
//! evidence.
//!
//! * [`config`]: `[recall.extract]` and its validation into [`Settings`].
//! * [`segment`]: the `turns-v1` segmenter over Cairn's records.
//! * [`prompt`]: prompts per unit kind, profiles, the strict reply schema, the generation
//!   fingerprint. [`output`]: strict validation of replies.
//! * [`run`]: passes (bounded parallelism, split recovery, the commit guard, progress events).
//! * [`store`]: generations (building → active → retired), progress, staged entries, the log.
//! * [`schedule`]: when a daemon should run passes (pure, unit-tested).
//!
//! Unlike AgentsView, sessions with secret findings are not excluded: their secrets were
//! redacted at ingest, every outgoing text passes the outbound redactor, and a re-scan refuses
//! to send on any hit (see [`crate::llm::outbound`]).

pub mod config;
pub mod output;
pub mod prompt;
pub mod run;
pub mod schedule;
pub mod segment;
pub mod store;

use rusqlite::Connection;
use serde::{Deserialize, Serialize};

pub use crate::config::ExtractConfig;
pub use config::Settings;
pub use run::{Event, ExtractProgress, RunOptions, RunReport, SessionFailure, Silent};
pub use store::{EntryStates, GenState, Generation, Lifecycle, ProjectCoverage, RunLog};

use crate::error::{Error, Result};
use crate::llm::{Ask, Generator, Usage};
use segment::Unit;

/// Which sessions a pass (or a preview) covers. All filters combine.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct Scope {
    /// One session (`session_key` or the agent's id). Skips the quiet period and the failure
    /// wait, never the outbound guard.
    pub session: Option<String>,
    /// Sessions active at or after this time (`YYYY-MM-DD` or RFC 3339).
    pub since: Option<String>,
    /// Sessions of this project.
    pub project: Option<String>,
    /// At most this many sessions (0 = all), most recently active first.
    pub limit: u32,
}

impl Scope {
    /// Reject malformed values with a message that says what to write.
    pub fn validate(&self) -> Result<()> {
        if let Some(since) = self.since.as_deref()
            && crate::text::time_bound(since).is_none()
        {
            return Err(Error::Invalid(format!(
                "--since {since:?} is not a date; write YYYY-MM-DD or an RFC 3339 time"
            )));
        }
        Ok(())
    }
}

/// `now` (Cairn's timestamp format) minus `ms`, in the same format.
pub(crate) fn ts_minus(now: &str, ms: i64) -> String {
    match now.parse::<jiff::Timestamp>() {
        Ok(t) => t
            .checked_sub(jiff::SignedDuration::from_millis(ms))
            .unwrap_or(t)
            .strftime("%Y-%m-%dT%H:%M:%S%.3fZ")
            .to_string(),
        Err(_) => now.to_owned(),
    }
}

/// What a run with the same scope would send.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
// Named apart from the insights preview in the desktop's TypeScript bindings.
#[serde(rename = "ExtractPreview")]
pub struct Preview {
    /// `None` when no model is configured (then every session counts as not read).
    pub fingerprint: Option<String>,
    pub model: String,
    pub max_window_chars: u32,
    pub sessions: u32,
    /// Units still to read (model calls, before any splitting).
    pub units: u32,
    /// Characters sent: prompts, units and context.
    pub chars: u64,
    /// ≈ chars / 4, plus the schema on every call.
    pub estimated_input_tokens: u64,
    /// Upper bound: units × max_tokens.
    pub max_output_tokens: u64,
    /// With `[recall.extract]` prices (a paid API): input at its price plus every unit's
    /// `max_tokens` of output, an upper bound in the prices' currency.
    pub max_cost: Option<f64>,
    /// At the pace of the last pass (its seconds per unit, `concurrency` at a time); `None`
    /// before any pass read a unit.
    pub estimated_seconds: Option<u64>,
    pub concurrency: u32,
    /// Sessions in scope a pass would leave for later: active within `quiet_period`.
    pub waiting_quiet: u32,
    pub sessions_list: Vec<SessionPreview>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename = "ExtractSessionPreview")]
pub struct SessionPreview {
    pub session_key: String,
    pub title: String,
    pub project: String,
    pub units_total: u32,
    pub units_todo: u32,
    pub chars: u64,
}

/// Characters per token used by estimates.
pub const CHARS_PER_TOKEN: u64 = 4;

/// Size and cost of what a run with `scope` would send (nothing is sent). `readable`: what is
/// known of where sessions have something to read, and learns more (see [`store::Readable`]).
pub fn preview(
    conn: &Connection,
    settings: &Settings,
    scope: &Scope,
    now: &str,
    readable: &mut store::Readable,
) -> Result<Preview> {
    scope.validate()?;
    let fingerprint = settings.fingerprint();
    let explicit = scope.session.is_some();
    let quiet_cutoff = ts_minus(now, settings.quiet_period_ms);
    let cands = store::candidates(
        conn,
        fingerprint.as_deref(),
        scope,
        (!explicit).then_some(quiet_cutoff.as_str()),
        readable,
    )?;
    if explicit && cands.is_empty() {
        return Err(Error::NotFound(format!(
            "session {:?} (or it has no records, or it is a sub-agent session); find sessions with `cairn sessions`",
            scope.session.as_deref().unwrap_or_default()
        )));
    }
    let schema_chars = prompt::schema().to_string().chars().count() as u64;
    let mut out = Preview {
        fingerprint: fingerprint.clone(),
        model: settings.model.clone(),
        max_window_chars: settings.max_window_chars as u32,
        concurrency: settings.concurrency as u32,
        waiting_quiet: store::waiting_quiet(
            conn,
            fingerprint.as_deref(),
            scope,
            &quiet_cutoff,
            readable,
        )?,
        ..Default::default()
    };
    for c in cands
        .iter()
        .filter(|c| run::needs_work(c, now, settings.failure_backoff_ms, explicit))
    {
        if scope.limit > 0 && out.sessions >= scope.limit {
            break;
        }
        let info = store::session_info(conn, c.id)?;
        let messages = segment::from_records(&store::records(conn, c.id)?);
        let units = segment::segment(&messages, settings.max_window_chars);
        let digests: Vec<String> = units.iter().map(Unit::digest).collect();
        let keep = run::kept(c.progress.as_ref(), &digests);
        let todo = &units[keep..];
        if todo.is_empty() {
            continue;
        }
        let chars: u64 = todo
            .iter()
            .map(|u| {
                (settings.prompts.for_kind(u.kind).chars().count()
                    + prompt::user_message(u, &u.text).chars().count()) as u64
            })
            .sum();
        out.sessions += 1;
        out.units += todo.len() as u32;
        out.chars += chars;
        out.estimated_input_tokens += chars.div_ceil(CHARS_PER_TOKEN)
            + todo.len() as u64 * schema_chars.div_ceil(CHARS_PER_TOKEN);
        out.max_output_tokens += todo.len() as u64 * u64::from(settings.max_tokens);
        out.sessions_list.push(SessionPreview {
            session_key: info.key,
            title: info.title,
            project: info.project,
            units_total: units.len() as u32,
            units_todo: todo.len() as u32,
            chars,
        });
    }
    out.max_cost = settings.prices.map(|(input, output)| {
        (out.estimated_input_tokens as f64 * input + out.max_output_tokens as f64 * output)
            / 1_000_000.0
    });
    out.estimated_seconds = store::last_run(conn)?.and_then(|r| {
        let started = r.started_at.parse::<jiff::Timestamp>().ok()?;
        let finished = r.finished_at?.parse::<jiff::Timestamp>().ok()?;
        let secs = finished.duration_since(started).as_secs_f64();
        (r.units > 0 && secs > 0.0).then(|| {
            // The last pass ran `concurrency` units at a time too.
            (secs / f64::from(r.units) * f64::from(out.units)).ceil() as u64
        })
    });
    Ok(out)
}

/// Where extraction stands (read-only): the configured generation, its coverage, every
/// generation, the last pass, recent failures.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct ExtractStatus {
    pub enabled: bool,
    pub model: String,
    pub deployment: String,
    pub profile: String,
    pub server: Option<String>,
    /// Redacted.
    pub endpoint: Option<String>,
    pub segmenter: String,
    pub max_window_chars: u32,
    pub concurrency: u32,
    /// The configured generation (`None` without a model).
    pub fingerprint: Option<String>,
    /// Its state; `None` until its first pass.
    pub state: Option<GenState>,
    pub sessions_done: u32,
    pub sessions_partial: u32,
    pub sessions_failed: u32,
    /// Eligible sessions not read yet (or grown since), quiet or not.
    pub not_started: u32,
    /// Eligible sessions with nothing a model would read ([`ProjectCoverage::empty`]): in none
    /// of the counts above, as a pass reads nothing of them.
    pub sessions_empty: u32,
    pub units_done: u32,
    pub units_total: u32,
    /// Entries the configured generation wrote, in any state: the sum of the six states
    /// `entries_trusted` to `entries_archived`.
    pub entries: u32,
    /// Published into Recall (not staged, not retired): reviewed or not, trusted or not.
    pub entries_published: u32,
    /// Accepted by a person and trusted now (served to agents) ([`store::EntryStates`]).
    pub entries_trusted: u32,
    /// Accepted by a person, not trusted now: back in the review inbox.
    pub entries_reviewed_untrusted: u32,
    /// In Recall, reviewed by no one: the review inbox.
    pub entries_unreviewed: u32,
    /// Waiting for the generation to be activated: in no list yet.
    pub entries_staged: u32,
    /// Rejected by a person.
    pub entries_rejected: u32,
    /// Archived otherwise: retired with their generation, replaced or merged.
    pub entries_archived: u32,
    /// Of the entries in Recall, those flagged stale (a file they cite changed since): back in
    /// the review inbox, and counted in their state above too (a trusted one stays trusted).
    pub entries_stale: u32,
    pub generations: Vec<Generation>,
    pub last_run: Option<RunLog>,
    pub failures: Vec<SessionFailure>,
    pub coverage: Vec<ProjectCoverage>,
}

/// Where extraction stands. `readable` reads (and learns) where the sessions no pass covers
/// have something to read; the caller stores what it learnt ([`store::Readable::save`]).
pub fn status(
    conn: &Connection,
    settings: &Settings,
    readable: &mut store::Readable,
) -> Result<ExtractStatus> {
    let fingerprint = settings.fingerprint();
    let generations = store::generations(conn, fingerprint.as_deref())?;
    let mut out = ExtractStatus {
        enabled: settings.enabled,
        model: settings.model.clone(),
        deployment: settings.deployment.clone(),
        profile: settings.profile.to_owned(),
        server: settings.server.as_ref().map(|(n, _)| n.clone()),
        endpoint: settings.server.as_ref().map(|(_, s)| s.endpoint.redacted()),
        segmenter: segment::SEGMENTER.to_owned(),
        max_window_chars: settings.max_window_chars as u32,
        concurrency: settings.concurrency as u32,
        fingerprint: fingerprint.clone(),
        last_run: store::last_run(conn)?,
        ..Default::default()
    };
    if let Some(fp) = &fingerprint {
        if let Some(g) = generations.iter().find(|g| &g.fingerprint == fp) {
            out.state = Some(g.state);
            out.units_done = g.units_done;
            out.units_total = g.units_total;
            out.entries = g.entries;
            out.entries_published = g.entries_published;
        }
        let states = store::entry_states(conn, fp)?;
        out.entries_trusted = states.trusted;
        out.entries_reviewed_untrusted = states.reviewed_untrusted;
        out.entries_unreviewed = states.unreviewed;
        out.entries_staged = states.staged;
        out.entries_rejected = states.rejected;
        out.entries_archived = states.archived;
        out.entries_stale = states.stale;
        out.coverage = store::coverage(conn, fp, readable)?;
        for c in &out.coverage {
            out.sessions_done += c.done;
            out.sessions_partial += c.partial;
            out.sessions_failed += c.failed;
            out.not_started += c.not_started;
            out.sessions_empty += c.empty;
        }
        out.failures = store::failures(conn, fp, 20)?
            .into_iter()
            .map(|(session_key, error)| SessionFailure { session_key, error })
            .collect();
    }
    out.generations = generations;
    Ok(out)
}

/// One doctor check.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct DoctorCheck {
    pub name: String,
    pub ok: bool,
    pub detail: String,
}

/// `extract doctor`: the settings, then real calls — `/models` and one tiny extraction.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct ExtractDoctor {
    pub model: String,
    pub deployment: String,
    pub server: String,
    pub endpoint: String,
    pub profile: String,
    pub segmenter: String,
    pub max_window_chars: u32,
    pub fingerprint: String,
    pub checks: Vec<DoctorCheck>,
    /// Entries the probe produced, when it worked.
    pub probe_entries: Option<u32>,
    /// What the probe sent (the user part; the extraction instructions and schema go with it).
    pub probe_request: String,
    /// What came back, printable and cut to 2,000 characters.
    pub probe_answer: Option<String>,
    /// How long the probe took, in milliseconds.
    pub probe_ms: u32,
    pub usage: Usage,
    /// An endpoint's `/models` answer as a setup reads it; absent for an agent CLI.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "specta", specta(optional))]
    pub models: Option<crate::llm::models::EndpointCheck>,
}

impl ExtractDoctor {
    pub fn ok(&self) -> bool {
        self.checks.iter().all(|c| c.ok)
    }
}

/// The probe's synthetic message: a standing preference any model should be able to record.
pub const PROBE_MESSAGE: &str = "USER MESSAGE (ordinal 0):\nRun the dev server on port 4173 from now on; port 3000 is taken by the API gateway.";

/// Run the doctor's calls: an endpoint's `/models`, read as `models` (its setup check,
/// [`crate::llm::models::EndpointCheck`]), then the probe through `generator` (one attempt).
/// A server that could not be reached is not probed: the probe could fare no better.
pub fn doctor(
    settings: &Settings,
    generator: &dyn Generator,
    models: Option<crate::llm::models::EndpointCheck>,
) -> ExtractDoctor {
    use crate::llm::models::ModelListing;
    let (server, _) = settings
        .server
        .as_ref()
        .map_or((String::new(), None), |(n, s)| (n.clone(), Some(s)));
    let mut d = ExtractDoctor {
        model: settings.model.clone(),
        deployment: settings.deployment.clone(),
        server,
        endpoint: models
            .as_ref()
            .map_or_else(|| generator.describe(), |c| c.endpoint.clone()),
        profile: settings.profile.to_owned(),
        segmenter: segment::SEGMENTER.to_owned(),
        max_window_chars: settings.max_window_chars as u32,
        fingerprint: settings.fingerprint().unwrap_or_default(),
        probe_request: PROBE_MESSAGE.to_owned(),
        ..Default::default()
    };
    let reached = models.as_ref().is_none_or(|c| c.listing.reached());
    d.checks.push(match &models {
        None => DoctorCheck {
            name: "generator".into(),
            ok: true,
            detail: format!(
                "{} answers (an agent CLI lists no models)",
                generator.describe()
            ),
        },
        // Read as `cairn insights setup` reads it, in the same words (cleaned, at most ten
        // named); here the probe below decides whatever the list says, unless the server
        // could not be reached or refused the key.
        Some(c) => DoctorCheck {
            name: "models".into(),
            ok: !matches!(
                c.listing,
                ModelListing::Unreachable { .. } | ModelListing::KeyRefused { .. }
            ),
            detail: match &c.listing {
                ModelListing::Listed => {
                    format!("{} is served", crate::text::one_line(&settings.model, 120))
                }
                ModelListing::Unreachable { why } | ModelListing::KeyRefused { why } => why.clone(),
                other => other.sentence(&settings.model, "the probe"),
            },
        },
    });
    d.models = models;
    if !reached {
        d.checks.push(DoctorCheck {
            name: "probe".into(),
            ok: false,
            detail: "not sent: the server could not be reached (see above)".into(),
        });
        return d;
    }
    let schema = prompt::schema();
    let ask = Ask {
        system: &settings.prompts.intent,
        user: PROBE_MESSAGE,
        schema: Some((prompt::SCHEMA_NAME, &schema)),
        temperature: Some(settings.temperature),
        max_tokens: Some(settings.max_tokens),
        extra_body: Some(&settings.extra_body),
    };
    let started = std::time::Instant::now();
    let ob = crate::llm::Outbound::for_root(None);
    let probe = generator.ask(&ask, &ob).and_then(|answer| {
        d.usage = answer.usage;
        // Shown as the doctor's answer: cleaned and redacted as a stored entry is.
        d.probe_answer = Some(crate::text::excerpt(
            &ob.redact_answer(&answer.content),
            2_000,
        ));
        output::parse(&answer.content)
    });
    d.probe_ms = u32::try_from(started.elapsed().as_millis()).unwrap_or(u32::MAX);
    d.checks.push(match probe {
        Ok(entries) => {
            d.probe_entries = Some(entries.len() as u32);
            DoctorCheck {
                name: "probe".into(),
                ok: true,
                detail: format!(
                    "a strict-schema extraction worked: {} entr{} ({} prompt + {} completion tokens)",
                    entries.len(),
                    if entries.len() == 1 { "y" } else { "ies" },
                    d.usage.prompt_tokens,
                    d.usage.completion_tokens
                ),
            }
        }
        Err(e) => DoctorCheck {
            name: "probe".into(),
            ok: false,
            detail: e.to_string(),
        },
    });
    d
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ts_minus_keeps_the_format() {
        assert_eq!(
            ts_minus("2026-02-10T22:03:51.807Z", 60_000),
            "2026-02-10T22:02:51.807Z"
        );
    }

    #[test]
    fn scope_rejects_a_bad_since() {
        let s = Scope {
            since: Some("last week".into()),
            ..Default::default()
        };
        assert!(s.validate().unwrap_err().to_string().contains("YYYY-MM-DD"));
        let s = Scope {
            since: Some("2026-01-01".into()),
            ..Default::default()
        };
        assert!(s.validate().is_ok());
    }
}

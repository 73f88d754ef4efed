//! The slice a report covers: a time range, a project, an agent, a branch, and whether
//! automated sessions (started by a script: `claude -p`, `codex exec`, the SDKs) count.
//!
//! Dates are read in the local time zone: `2026-11-23` as a `--since` is the start of that day,
//! as an `--until` the end of it (the day is included). RFC 3339 times and relative spans
//! (`7d`, `2w`, `today`, `yesterday`) work too. Bounds are resolved to UTC instants once, so a
//! stored report says exactly what it covered.

use jiff::{SignedDuration, Timestamp, ToSpan, ZonedDateTime, civil::Date, tz::TimeZone};
use rusqlite::Connection;
use serde::{Deserialize, Serialize};

use crate::archive::Agent;
use crate::archive::store as archive;
use crate::error::{Error, Result};
use crate::git::store as git;

/// Which sessions count by how they were started.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "lowercase")]
pub enum Automation {
    /// Sessions a person started, and scripted ones.
    Include,
    /// Only sessions a person started (the default).
    #[default]
    Exclude,
    /// Only scripted sessions.
    Only,
}

impl Automation {
    pub fn parse(s: &str) -> Result<Automation> {
        match s {
            "include" => Ok(Automation::Include),
            "exclude" => Ok(Automation::Exclude),
            "only" => Ok(Automation::Only),
            other => Err(Error::Invalid(format!(
                "unknown automation scope `{other}`: use include, exclude or only"
            ))),
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Automation::Include => "include",
            Automation::Exclude => "exclude",
            Automation::Only => "only",
        }
    }
}

/// The slice as asked for (strings as typed; see [`Slice::resolve`]).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct SliceRequest {
    pub since: Option<String>,
    pub until: Option<String>,
    pub project: Option<String>,
    pub agent: Option<Agent>,
    /// A branch name (`feature/login`) or branch key (`ref:refs/heads/feature/login`): only
    /// sessions related to it by strong evidence (a commit, an edit, a person's link).
    pub branch: Option<String>,
    /// With `branch`: also the sessions only weakly related to it, that recorded it or ran
    /// while it was checked out (`skim --include-weak`'s sessions). Off by default.
    #[serde(default)]
    pub include_weak: bool,
    #[serde(default)]
    pub automation: Automation,
    /// Include teammates' sessions pulled here (`cairn pull` of `publish --full`): their
    /// redacted text then goes to the generator. Off by default.
    #[serde(default)]
    pub teammates: bool,
}

/// A resolved slice: exact UTC bounds, normalised branch key. Stored with each report and
/// part of its cache key.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct Slice {
    /// Inclusive lower bound (RFC 3339, UTC).
    pub since: Option<String>,
    /// Exclusive upper bound (RFC 3339, UTC).
    pub until: Option<String>,
    pub project: Option<String>,
    pub agent: Option<Agent>,
    pub branch: Option<String>,
    /// The branch's weakly related sessions are in it (see [`SliceRequest::include_weak`]);
    /// never without a branch.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub include_weak: bool,
    pub automation: Automation,
    /// Teammates' pulled sessions are in it (see [`SliceRequest::teammates`]).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub teammates: bool,
}

/// When `--since` is not given: the last week.
const DEFAULT_DAYS: i64 = 7;

impl Slice {
    /// Resolve a request against `now` in time zone `tz`. Without `since`, the slice starts
    /// seven days before its end.
    pub fn resolve(req: &SliceRequest, now: &ZonedDateTime) -> Result<Slice> {
        let tz = now.time_zone();
        let until = match req
            .until
            .as_deref()
            .map(str::trim)
            .filter(|s| !s.is_empty())
        {
            Some(s) => parse_bound(s, now, tz, Bound::Until)?,
            None => now.timestamp(),
        };
        let since = match req
            .since
            .as_deref()
            .map(str::trim)
            .filter(|s| !s.is_empty())
        {
            Some(s) => parse_bound(s, now, tz, Bound::Since)?,
            None => until - SignedDuration::from_hours(24 * DEFAULT_DAYS),
        };
        if since >= until {
            return Err(Error::Invalid(format!(
                "the slice is empty: --since {} is not before --until {}",
                fmt(since),
                fmt(until)
            )));
        }
        let branch = req
            .branch
            .as_deref()
            .map(str::trim)
            .filter(|b| !b.is_empty())
            .map(|b| {
                if b.starts_with("ref:") {
                    b.to_owned()
                } else if b.starts_with("refs/") {
                    format!("ref:{b}")
                } else {
                    format!("ref:refs/heads/{b}")
                }
            });
        Ok(Slice {
            since: Some(fmt(since)),
            until: Some(fmt(until)),
            project: req
                .project
                .as_deref()
                .map(str::trim)
                .filter(|p| !p.is_empty())
                .map(str::to_owned),
            agent: req.agent,
            include_weak: req.include_weak && branch.is_some(),
            branch,
            automation: req.automation,
            teammates: req.teammates,
        })
    }

    /// One line for titles and headers: `2026-11-23 – 2026-11-30 · project shop · claude`.
    /// The days are local ([`Slice::label_in`] the system's time zone).
    pub fn label(&self) -> String {
        self.label_in(&TimeZone::system())
    }

    /// [`Slice::label`] with the days read in `tz`: the first day the slice covers and the
    /// last (`until` is exclusive, so the day of the instant before it), as `--since` and
    /// `--until` were given.
    pub fn label_in(&self, tz: &TimeZone) -> String {
        let day = |s: &Option<String>, before: bool| {
            s.as_deref().map(|t| match crate::text::parse_rfc3339(t) {
                Some(at) => {
                    let at = if before {
                        at - SignedDuration::from_nanos(1)
                    } else {
                        at
                    };
                    tz.to_datetime(at).date().to_string()
                }
                None => t.get(..10).unwrap_or(t).to_owned(),
            })
        };
        let mut parts = vec![match (day(&self.since, false), day(&self.until, true)) {
            (Some(a), Some(b)) if a == b => a,
            (Some(a), Some(b)) => format!("{a} – {b}"),
            (Some(a), None) => format!("since {a}"),
            (None, Some(b)) => format!("until {b}"),
            (None, None) => "all time".to_owned(),
        }];
        parts.push(match &self.project {
            Some(p) => format!("project {p}"),
            None => "all projects".to_owned(),
        });
        if let Some(a) = self.agent {
            parts.push(a.as_str().to_owned());
        }
        if let Some(b) = &self.branch {
            parts.push(format!(
                "branch {}{}",
                b.trim_start_matches("ref:refs/heads/"),
                if self.include_weak {
                    " with the sessions that only ran on it"
                } else {
                    ""
                }
            ));
        }
        match self.automation {
            Automation::Exclude => {}
            Automation::Include => parts.push("with automated sessions".to_owned()),
            Automation::Only => parts.push("automated sessions only".to_owned()),
        }
        if self.teammates {
            parts.push("with teammates' sessions".to_owned());
        }
        parts.join(" · ")
    }

    /// The top-level sessions in the slice (sub-agents count as part of their parent), oldest
    /// first: row ids.
    pub fn sessions(&self, conn: &Connection) -> rusqlite::Result<Vec<i64>> {
        self.sessions_with(conn, self.teammates, self.include_weak)
    }

    /// How many teammates' pulled sessions the slice would hold with them included, and left
    /// out as it is: what the preview says.
    pub fn teammates_in(&self, conn: &Connection) -> rusqlite::Result<u32> {
        let all = self.sessions_with(conn, true, self.include_weak)?.len();
        let own = self.sessions_with(conn, false, self.include_weak)?.len();
        Ok(all.saturating_sub(own) as u32)
    }

    /// How many sessions of the slice's time and filters are related to its branch only
    /// weakly (they recorded it, or ran while it was checked out): included when the slice
    /// asks for them, else left out. 0 without a branch.
    pub fn weak_in(&self, conn: &Connection) -> rusqlite::Result<u32> {
        if self.branch.is_none() {
            return Ok(0);
        }
        let all = self.sessions_with(conn, self.teammates, true)?.len();
        let strong = self.sessions_with(conn, self.teammates, false)?.len();
        Ok(all.saturating_sub(strong) as u32)
    }

    fn sessions_with(
        &self,
        conn: &Connection,
        teammates: bool,
        weak: bool,
    ) -> rusqlite::Result<Vec<i64>> {
        let linked = match &self.branch {
            Some(branch) if weak => {
                let mut ids: Vec<i64> =
                    git::target_links(conn, std::slice::from_ref(branch), None)?
                        .into_iter()
                        .map(|l| l.session_id)
                        .collect();
                ids.sort_unstable();
                ids.dedup();
                Some(ids)
            }
            Some(branch) => Some(git::sessions_strongly_linked(conn, branch)?),
            None => None,
        };
        archive::sessions_in_slice(
            conn,
            &archive::SessionSlice {
                since: self.since.as_deref(),
                until: self.until.as_deref(),
                project: self.project.as_deref(),
                agent: self.agent,
                linked: linked.as_deref(),
                automated: match self.automation {
                    Automation::Include => None,
                    Automation::Exclude => Some(false),
                    Automation::Only => Some(true),
                },
                teammates,
            },
        )
    }
}

#[derive(Clone, Copy, PartialEq)]
enum Bound {
    Since,
    Until,
}

fn fmt(t: Timestamp) -> String {
    t.strftime("%Y-%m-%dT%H:%M:%S%.3fZ").to_string()
}

fn parse_bound(s: &str, now: &ZonedDateTime, tz: &TimeZone, bound: Bound) -> Result<Timestamp> {
    let day_start = |d: Date| -> Result<Timestamp> {
        let d = if bound == Bound::Until {
            d.checked_add(1.day()).map_err(|e| bad(s, &e.to_string()))?
        } else {
            d
        };
        d.to_zoned_datetime(tz.clone())
            .map(|z| z.timestamp())
            .map_err(|e| bad(s, &e.to_string()))
    };
    let today = now.date();
    match s {
        "today" => return day_start(today),
        "yesterday" => {
            return day_start(today.yesterday().map_err(|e| bad(s, &e.to_string()))?);
        }
        _ => {}
    }
    if let Some(days) = crate::text::span_days(s) {
        return Ok(now.timestamp() - SignedDuration::from_hours(24 * days));
    }
    if let Ok(d) = s.parse::<Date>() {
        return day_start(d);
    }
    if let Ok(t) = s.parse::<Timestamp>() {
        return Ok(t);
    }
    Err(bad(
        s,
        "expected YYYY-MM-DD, an RFC 3339 time, `today`, `yesterday` or a span like `7d`/`2w`",
    ))
}

fn bad(s: &str, why: &str) -> Error {
    Error::Invalid(format!("cannot read the date `{s}`: {why}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn now() -> ZonedDateTime {
        "2026-11-30T15:00:00+01:00[Europe/Paris]".parse().unwrap()
    }

    fn resolve(since: Option<&str>, until: Option<&str>) -> Result<Slice> {
        Slice::resolve(
            &SliceRequest {
                since: since.map(str::to_owned),
                until: until.map(str::to_owned),
                ..SliceRequest::default()
            },
            &now(),
        )
    }

    #[test]
    fn days_are_local_and_until_includes_its_day() {
        let s = resolve(Some("2026-11-23"), Some("2026-11-29")).unwrap();
        assert_eq!(s.since.as_deref(), Some("2026-11-22T23:00:00.000Z"));
        assert_eq!(s.until.as_deref(), Some("2026-11-29T23:00:00.000Z"));
        assert_eq!(
            s.label_in(now().time_zone()),
            "2026-11-23 – 2026-11-29 · all projects"
        );
        // One day, given as both bounds, is that day.
        let s = resolve(Some("2026-08-01"), Some("2026-08-01")).unwrap();
        assert_eq!(s.label_in(now().time_zone()), "2026-08-01 · all projects");
        assert_eq!(
            s.label_in(&TimeZone::UTC),
            "2026-07-31 – 2026-08-01 · all projects",
            "the days are read in the zone asked for (in UTC, Paris's day spans two)"
        );
    }

    #[test]
    fn defaults_to_the_last_week_and_reads_spans() {
        let s = resolve(None, None).unwrap();
        assert_eq!(s.until.as_deref(), Some("2026-11-30T14:00:00.000Z"));
        assert_eq!(s.since.as_deref(), Some("2026-11-23T14:00:00.000Z"));
        let s = resolve(Some("2w"), None).unwrap();
        assert_eq!(s.since.as_deref(), Some("2026-11-16T14:00:00.000Z"));
        let s = resolve(Some("today"), None).unwrap();
        assert_eq!(s.since.as_deref(), Some("2026-11-29T23:00:00.000Z"));
        let s = resolve(Some("yesterday"), Some("yesterday")).unwrap();
        assert_eq!(
            (s.since.as_deref(), s.until.as_deref()),
            (
                Some("2026-11-28T23:00:00.000Z"),
                Some("2026-11-29T23:00:00.000Z")
            )
        );
    }

    #[test]
    fn bad_and_empty_ranges_say_why() {
        let e = resolve(Some("last tuesday"), None).unwrap_err().to_string();
        assert!(
            e.contains("`last tuesday`") && e.contains("YYYY-MM-DD"),
            "{e}"
        );
        let e = resolve(Some("2026-12-01"), Some("2026-11-01"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("slice is empty"), "{e}");
        assert!(Automation::parse("sometimes").is_err());
    }

    #[test]
    fn branches_become_keys() {
        let s = Slice::resolve(
            &SliceRequest {
                branch: Some("feature/login".into()),
                ..SliceRequest::default()
            },
            &now(),
        )
        .unwrap();
        assert_eq!(s.branch.as_deref(), Some("ref:refs/heads/feature/login"));
        assert!(s.label().ends_with("branch feature/login"));
    }
}

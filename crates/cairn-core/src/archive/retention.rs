//! Agents that delete their own transcripts: each one's cleanup setting, and which of its
//! transcript files Cairn has not captured yet and the agent will delete within a week.
//!
//! Claude Code deletes a transcript `cleanupPeriodDays` days (30 by default) after it was last
//! written, the next time it starts. Gemini CLI, when `general.sessionRetention.enabled` is
//! true, deletes sessions older than `maxAge` (`<n>h|d|w|m`, a month being 30 days). Other
//! agents keep their transcripts until the person deletes them.
//!
//! The settings files are the agents' and read as hostile input: at most [`MAX_SETTINGS_BYTES`],
//! any JSON type at any key, and every text taken from them cleaned before it is shown.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use serde::Serialize;

use crate::archive::Agent;
use crate::archive::discover::FoundFile;
use crate::archive::store::Positions;

/// How far ahead the warning looks.
pub const WARN_WITHIN: Duration = Duration::from_secs(7 * DAY);
/// A settings file larger than this is not read (the agents' own are a few KiB).
pub const MAX_SETTINGS_BYTES: u64 = 1 << 20;
const DAY: u64 = 86_400;
const CLAUDE_DEFAULT_DAYS: u64 = 30;
/// Longer than this is "forever" (and keeps the arithmetic in range).
const MAX_KEEP: Duration = Duration::from_secs(100 * 365 * DAY);

/// One agent's cleanup rule, as its settings file sets it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Policy {
    pub agent: Agent,
    /// The settings file the rule comes from (or would, when it is absent).
    pub settings: PathBuf,
    /// How long after its last write the agent keeps a transcript; `None`: forever.
    pub keep: Option<Duration>,
    /// The rule in words: "transcripts deleted 30 days after their last write (Claude Code's default)".
    pub rule: String,
    /// What is wrong with the setting (a wrong type, an unreadable file), cleaned.
    pub problem: Option<String>,
}

/// Where an agent's cleanup stands against what Cairn captured.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct RetentionCheck {
    pub agent: Agent,
    /// The agent's settings file.
    pub settings: String,
    /// The agent's rule in words.
    pub rule: String,
    /// What is wrong with the setting, when something is.
    pub problem: Option<String>,
    /// Transcript files Cairn has not captured (or not all of) that the agent deletes within
    /// seven days.
    pub expiring: u32,
    /// When the first of them goes (RFC 3339 UTC); in the past when the agent deletes it the
    /// next time it starts.
    pub soonest: Option<String>,
    /// The one command that captures them now.
    pub command: String,
}

/// The cleanup rules of the agents that have one, read from their settings files under `home`
/// (or the directories their variables name, read through `env`).
pub fn policies(env: impl Fn(&str) -> Option<PathBuf>, home: Option<&Path>) -> Vec<Policy> {
    let mut out = Vec::new();
    let claude_dir = env("CLAUDE_CONFIG_DIR").or_else(|| home.map(|h| h.join(".claude")));
    if let Some(dir) = claude_dir {
        out.push(claude(&dir.join("settings.json")));
    }
    let gemini_dir = crate::archive::sources::gemini::folder(&env, home).map(|(dir, _)| dir);
    if let Some(dir) = gemini_dir
        && let Some(policy) = gemini(&dir.join("settings.json"))
    {
        out.push(policy);
    }
    out
}

/// The settings file as JSON: `Ok(None)` when there is none, `Err` with the reason (cleaned)
/// when it cannot be used.
fn read_settings(path: &Path) -> Result<Option<serde_json::Value>, String> {
    use std::io::Read as _;
    // Checked before opening: opening a FIFO would wait for a writer.
    match std::fs::metadata(path) {
        Ok(meta) if meta.is_file() => {}
        Ok(_) => return Err(format!("{} is not a regular file", shown(path))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("cannot read {}: {e}", shown(path))),
    }
    let file =
        std::fs::File::open(path).map_err(|e| format!("cannot read {}: {e}", shown(path)))?;
    let mut bytes = Vec::new();
    file.take(MAX_SETTINGS_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read {}: {e}", shown(path)))?;
    if bytes.len() as u64 > MAX_SETTINGS_BYTES {
        return Err(format!(
            "{} is larger than {} KiB: not read",
            shown(path),
            MAX_SETTINGS_BYTES / 1024
        ));
    }
    serde_json::from_slice(&bytes).map(Some).map_err(|e| {
        // serde_json reads `1e400` as JSON it cannot hold, not as bad JSON.
        if e.to_string().starts_with("number out of range") {
            format!("{} holds a number too large to read ({e})", shown(path))
        } else {
            format!("{} is not valid JSON ({e})", shown(path))
        }
    })
}

fn shown(path: &Path) -> String {
    crate::text::one_line(&path.display().to_string(), 300)
}

/// A JSON value as a short, safe quote for a message.
fn quoted(value: &serde_json::Value) -> String {
    crate::text::one_line(&value.to_string(), 60)
}

/// Claude Code's `cleanupPeriodDays`: a whole number of days; 0 keeps nothing.
fn claude(settings: &Path) -> Policy {
    let default = |problem: Option<String>| Policy {
        agent: Agent::Claude,
        settings: settings.to_owned(),
        keep: Some(Duration::from_secs(CLAUDE_DEFAULT_DAYS * DAY)),
        rule: format!(
            "transcripts deleted {CLAUDE_DEFAULT_DAYS} days after their last write (Claude Code's default)"
        ),
        problem,
    };
    let value = match read_settings(settings) {
        Ok(Some(v)) => v,
        Ok(None) => return default(None),
        Err(problem) => {
            return default(Some(format!(
                "{problem}; Claude Code's default of {CLAUDE_DEFAULT_DAYS} days is assumed"
            )));
        }
    };
    let Some(days) = value.get("cleanupPeriodDays") else {
        return default(None);
    };
    let whole = days.as_u64().or_else(|| {
        days.as_f64()
            .filter(|d| d.fract() == 0.0 && (0.0..1e15).contains(d))
            .map(|d| d as u64)
    });
    match whole {
        None => default(Some(format!(
            "cleanupPeriodDays is {} in {}, not a whole number of days; Claude Code's default of {CLAUDE_DEFAULT_DAYS} days is assumed",
            quoted(days),
            shown(settings)
        ))),
        Some(0) => Policy {
            agent: Agent::Claude,
            settings: settings.to_owned(),
            keep: Some(Duration::ZERO),
            rule: "transcripts deleted as it starts (cleanupPeriodDays is 0)".into(),
            problem: Some(format!(
                "cleanupPeriodDays is 0 in {}: Claude Code keeps no transcripts, so only the hook captures sessions (`cairn hooks install --agent claude`)",
                shown(settings)
            )),
        },
        Some(days) => {
            let keep = days
                .checked_mul(DAY)
                .map(Duration::from_secs)
                .filter(|k| *k < MAX_KEEP);
            Policy {
                agent: Agent::Claude,
                settings: settings.to_owned(),
                keep,
                rule: match keep {
                    Some(_) => format!(
                        "transcripts deleted {days} days after their last write (cleanupPeriodDays)"
                    ),
                    None => format!("transcripts kept for good (cleanupPeriodDays is {days})"),
                },
                problem: None,
            }
        }
    }
}

/// Gemini CLI's `general.sessionRetention`: `None` when cleanup is off (its default) or the
/// file says nothing of it.
fn gemini(settings: &Path) -> Option<Policy> {
    let policy = |keep, rule: String, problem| Policy {
        agent: Agent::Gemini,
        settings: settings.to_owned(),
        keep,
        rule,
        problem,
    };
    let value = match read_settings(settings) {
        Ok(v) => v?,
        Err(problem) => {
            return Some(policy(
                None,
                "sessions kept or deleted as the unreadable settings say".into(),
                Some(problem),
            ));
        }
    };
    let retention = value.get("general")?.get("sessionRetention")?;
    if retention.get("enabled") != Some(&serde_json::Value::Bool(true)) {
        return None;
    }
    let Some(max_age) = retention.get("maxAge") else {
        return Some(policy(
            None,
            "sessions deleted by count only (general.sessionRetention has no maxAge)".into(),
            None,
        ));
    };
    match max_age.as_str().and_then(gemini_period) {
        Some(keep) => Some(policy(
            Some(keep),
            format!(
                "sessions deleted {} after their last update (general.sessionRetention.maxAge)",
                crate::text::one_line(max_age.as_str().unwrap_or_default(), 20)
            ),
            None,
        )),
        None => Some(policy(
            None,
            "sessions kept (Gemini CLI skips cleanup when maxAge is invalid)".into(),
            Some(format!(
                "general.sessionRetention.maxAge is {} in {}, not <number><h|d|w|m>",
                quoted(max_age),
                shown(settings)
            )),
        )),
    }
}

/// Gemini CLI's retention period: `<digits><h|d|w|m>`, more than zero.
fn gemini_period(text: &str) -> Option<Duration> {
    let unit = match text.chars().last()? {
        'h' => 3_600,
        'd' => DAY,
        'w' => 7 * DAY,
        'm' => 30 * DAY,
        _ => return None,
    };
    let digits = &text[..text.len() - 1];
    if digits.is_empty() || digits.len() > 9 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let n: u64 = digits.parse().ok()?;
    (n > 0).then(|| Duration::from_secs(n * unit))
}

/// Where `policy` stands: which of `files` (the agent's transcripts on disk) Cairn has not
/// captured whole (no reading position, or the file changed since) and expire before `now` +
/// [`WARN_WITHIN`]. A file whose source key is in `forgotten` (a person forgot it: sync passes
/// it over) is none of Cairn's to capture.
pub fn check(
    policy: &Policy,
    files: &[FoundFile],
    captured: &Positions,
    forgotten: &HashSet<String>,
    now: SystemTime,
) -> RetentionCheck {
    let mut expiring = 0u32;
    let mut soonest: Option<SystemTime> = None;
    if let Some(keep) = policy.keep {
        let horizon = now + WARN_WITHIN;
        for file in files.iter().filter(|f| f.agent == policy.agent) {
            let Ok(meta) = std::fs::metadata(&file.path) else {
                continue;
            };
            let Ok(modified) = meta.modified() else {
                continue;
            };
            let Some(expires) = modified.checked_add(keep) else {
                continue;
            };
            if expires >= horizon {
                continue;
            }
            let Ok(canonical) = std::fs::canonicalize(&file.path) else {
                continue;
            };
            if is_captured(&canonical, &meta, captured)
                || forgotten.contains(&crate::archive::store::source_key(file.agent, &canonical))
            {
                continue;
            }
            expiring += 1;
            soonest = Some(soonest.map_or(expires, |s| s.min(expires)));
        }
    }
    RetentionCheck {
        agent: policy.agent,
        settings: policy.settings.display().to_string(),
        rule: policy.rule.clone(),
        problem: policy.problem.clone(),
        expiring,
        soonest: soonest.and_then(rfc3339),
        command: command(&[policy.agent]),
    }
}

/// Whether Cairn's reading position covers the file at `canonical` as it is now.
fn is_captured(canonical: &Path, meta: &std::fs::Metadata, captured: &Positions) -> bool {
    captured
        .get(canonical.to_string_lossy().as_ref())
        .is_some_and(|s| {
            s.size == meta.len() && s.mtime_ns == crate::archive::capture::mtime_ns(meta)
        })
}

fn rfc3339(t: SystemTime) -> Option<String> {
    let ts = jiff::Timestamp::try_from(t).ok()?;
    Some(ts.strftime("%Y-%m-%dT%H:%M:%SZ").to_string())
}

/// The command that captures these agents' transcripts now.
pub fn command(agents: &[Agent]) -> String {
    let mut cmd = String::from("cairn sync");
    for agent in agents {
        cmd.push_str(" --agent ");
        cmd.push_str(agent.as_str());
    }
    cmd
}

/// The agents' names as people know them.
pub fn agent_name(agent: Agent) -> &'static str {
    match agent {
        Agent::Claude => "Claude Code",
        Agent::Gemini => "Gemini CLI",
        other => other.as_str(),
    }
}

/// One line for the end of a sync (and the desktop's banner) when any agent deletes
/// uncaptured transcripts within seven days: how many, whose, when the first goes, and the one
/// command that captures them all. `None` when nothing is at risk.
pub fn warning(checks: &[RetentionCheck]) -> Option<String> {
    let at_risk: Vec<&RetentionCheck> = checks.iter().filter(|c| c.expiring > 0).collect();
    if at_risk.is_empty() {
        return None;
    }
    let files: u32 = at_risk.iter().map(|c| c.expiring).sum();
    let whose: Vec<&str> = at_risk.iter().map(|c| agent_name(c.agent)).collect();
    let soonest = at_risk.iter().filter_map(|c| c.soonest.as_deref()).min();
    // A deletion whose day has come (cleanupPeriodDays 0, or a week the agent did not start
    // in) happens when the agent next starts: a date in the past would read as a mistake.
    let now = crate::clock::now();
    let first = match soonest {
        Some(t) if t <= now.as_str() => {
            "some are due already: gone when the agent next starts".to_owned()
        }
        Some(t) => format!("the first on {}", t.get(..10).unwrap_or(t)),
        None => "the first soon".to_owned(),
    };
    let agents: Vec<Agent> = at_risk.iter().map(|c| c.agent).collect();
    Some(format!(
        "{files} transcript file{} Cairn has not captured will be deleted by {} within 7 days ({first}); capture them now: {}",
        if files == 1 { "" } else { "s" },
        whose.join(" and "),
        command(&agents)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(text: &[u8]) -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("settings.json");
        std::fs::write(&path, text).unwrap();
        (dir, path)
    }

    fn days(p: &Policy) -> Option<u64> {
        p.keep.map(|k| k.as_secs() / DAY)
    }

    #[test]
    fn claude_reads_whole_days_and_falls_back_to_the_default() {
        for (text, want, problem) in [
            (&br#"{"cleanupPeriodDays": 10}"#[..], Some(10), false),
            (br#"{"cleanupPeriodDays": 10.0}"#, Some(10), false),
            (br#"{"model": "x"}"#, Some(30), false),
            (br#"{"cleanupPeriodDays": 0}"#, Some(0), true),
            (br#"{"cleanupPeriodDays": 3650}"#, Some(3650), false),
            // Past a century: kept for good (the community's "never").
            (br#"{"cleanupPeriodDays": 99999}"#, None, false),
            (br#"{"cleanupPeriodDays": 1e300}"#, Some(30), true),
            (
                br#"{"cleanupPeriodDays": 18446744073709551615}"#,
                None,
                false,
            ),
        ] {
            let (_dir, path) = settings(text);
            let p = claude(&path);
            assert_eq!(days(&p), want, "{}", String::from_utf8_lossy(text));
            assert_eq!(p.problem.is_some(), problem, "{p:?}");
        }
        let missing = claude(Path::new("/nonexistent/cairn/settings.json"));
        assert_eq!(days(&missing), Some(30));
        assert!(missing.problem.is_none());
    }

    /// Wrong types, broken JSON, a huge file, a directory, control sequences: the default
    /// applies, the problem is said, and nothing in it can drive a terminal.
    #[test]
    fn hostile_claude_settings_fall_back_and_say_why_cleanly() {
        let hostile: Vec<Vec<u8>> = vec![
            br#"{"cleanupPeriodDays": "7"}"#.to_vec(),
            br#"{"cleanupPeriodDays": -5}"#.to_vec(),
            br#"{"cleanupPeriodDays": 2.5}"#.to_vec(),
            br#"{"cleanupPeriodDays": true}"#.to_vec(),
            br#"{"cleanupPeriodDays": null}"#.to_vec(),
            br#"{"cleanupPeriodDays": [1, 2]}"#.to_vec(),
            br#"{"cleanupPeriodDays": {"days": 3}}"#.to_vec(),
            b"{\"cleanupPeriodDays\": \"\x1b]0;pwned\x07\x1b[2J\xe2\x80\xae7\"}".to_vec(),
            b"{\"cleanupPeriodDays\": 3".to_vec(),
            b"\xff\xfe\x00garbage".to_vec(),
            b"[1, 2, 3]".to_vec(),
            {
                let mut big = br#"{"cleanupPeriodDays": 3, "pad": ""#.to_vec();
                big.extend(std::iter::repeat_n(
                    b'a',
                    (MAX_SETTINGS_BYTES + 10) as usize,
                ));
                big.extend(br#""}"#);
                big
            },
        ];
        for text in hostile {
            let (_dir, path) = settings(&text);
            let p = claude(&path);
            assert_eq!(
                days(&p),
                Some(30),
                "{}",
                String::from_utf8_lossy(&text[..40.min(text.len())])
            );
            if text.starts_with(b"[") {
                // A JSON array has no key: nothing set, nothing wrong to say.
                continue;
            }
            let problem = p.problem.expect("a problem is said");
            assert!(
                !problem.contains('\x1b')
                    && !problem.contains('\x07')
                    && !problem.contains('\u{202e}'),
                "{problem:?}"
            );
            assert!(problem.len() < 800, "{problem}");
        }
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("settings.json")).unwrap();
        let p = claude(&dir.path().join("settings.json"));
        assert_eq!(days(&p), Some(30));
        assert!(p.problem.is_some());
        // A FIFO is refused without waiting for a writer.
        let fifo = dir.path().join("fifo.json");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        if made.is_ok_and(|s| s.success()) {
            let p = claude(&fifo);
            assert_eq!(days(&p), Some(30));
            assert!(p.problem.unwrap().contains("not a regular file"));
        }
    }

    #[test]
    fn gemini_reads_max_age_only_when_retention_is_enabled() {
        for (text, want) in [
            (&br#"{"general": {"sessionRetention": {"enabled": true, "maxAge": "30d"}}}"#[..], Some(Some(30))),
            (br#"{"general": {"sessionRetention": {"enabled": true, "maxAge": "2w"}}}"#, Some(Some(14))),
            (br#"{"general": {"sessionRetention": {"enabled": true, "maxAge": "1m"}}}"#, Some(Some(30))),
            (br#"{"general": {"sessionRetention": {"enabled": true, "maxAge": "48h"}}}"#, Some(Some(2))),
            (br#"{"general": {"sessionRetention": {"enabled": false, "maxAge": "1d"}}}"#, None),
            (br#"{"general": {"sessionRetention": {"enabled": "true", "maxAge": "1d"}}}"#, None),
            (br#"{"general": {"sessionRetention": {"maxAge": "1d"}}}"#, None),
            (br#"{"general": "x"}"#, None),
            (br#"{}"#, None),
            (br#"{"general": {"sessionRetention": {"enabled": true, "maxAge": "0d"}}}"#, Some(None)),
            (br#"{"general": {"sessionRetention": {"enabled": true, "maxAge": "30"}}}"#, Some(None)),
            (br#"{"general": {"sessionRetention": {"enabled": true, "maxAge": 30}}}"#, Some(None)),
            (br#"{"general": {"sessionRetention": {"enabled": true, "maxAge": "99999999999999d"}}}"#, Some(None)),
            (br#"{"general": {"sessionRetention": {"enabled": true, "maxAge": "\u001b[31m3d"}}}"#, Some(None)),
            (br#"{"general": {"sessionRetention": {"enabled": true, "maxAge": "\u0663d"}}}"#, Some(None)),
        ] {
            let (_dir, path) = settings(text);
            let got = gemini(&path);
            assert_eq!(got.as_ref().map(days), want, "{}", String::from_utf8_lossy(text));
            if let Some(p) = got {
                assert!(p.problem.iter().chain([&p.rule]).all(|t| !t.contains('\x1b')), "{p:?}");
            }
        }
    }

    fn found(path: &Path) -> FoundFile {
        FoundFile {
            agent: Agent::Claude,
            role: crate::archive::sources::FileRole::Main,
            path: path.to_owned(),
            parent_hint: None,
            agent_id: None,
        }
    }

    fn aged(dir: &Path, name: &str, age_days: u64) -> PathBuf {
        let path = dir.join(name);
        std::fs::write(&path, b"{}\n").unwrap();
        let file = std::fs::File::options().write(true).open(&path).unwrap();
        file.set_modified(SystemTime::now() - Duration::from_secs(age_days * DAY))
            .unwrap();
        path
    }

    /// Of files kept 10 days, those written 4 or more days ago go within the week; a file Cairn
    /// read as it is now is safe, one that grew since is not.
    #[test]
    fn only_uncaptured_files_that_go_within_the_week_are_counted() {
        let dir = tempfile::tempdir().unwrap();
        let old = aged(dir.path(), "old.jsonl", 8);
        let due = aged(dir.path(), "due.jsonl", 12);
        let fresh = aged(dir.path(), "fresh.jsonl", 1);
        let read = aged(dir.path(), "read.jsonl", 9);
        let grown = aged(dir.path(), "grown.jsonl", 9);
        let policy = Policy {
            agent: Agent::Claude,
            settings: dir.path().join("settings.json"),
            keep: Some(Duration::from_secs(10 * DAY)),
            rule: String::new(),
            problem: None,
        };
        let state = |path: &Path, size: u64| {
            let meta = std::fs::metadata(path).unwrap();
            let key = std::fs::canonicalize(path)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            crate::archive::store::SourceState {
                id: 1,
                source_key: String::new(),
                session_id: 1,
                path: key,
                size,
                mtime_ns: crate::archive::capture::mtime_ns(&meta),
                byte_offset: size,
                line_count: 1,
                first_line_hash: None,
                last_line_start: None,
                last_line_hash: None,
                parser_state: None,
                generation: 0,
                retained_len: 0,
                sidecar_mtime_ns: 0,
            }
        };
        let captured: Positions = [state(&read, 3), state(&grown, 1)].into_iter().collect();
        let files: Vec<FoundFile> = [&old, &due, &fresh, &read, &grown]
            .iter()
            .map(|p| found(p))
            .collect();
        let now = SystemTime::now();
        let c = check(&policy, &files, &captured, &HashSet::new(), now);
        assert_eq!(c.expiring, 3, "old, due (already past), grown");
        let soonest = crate::text::parse_rfc3339(c.soonest.as_deref().unwrap()).unwrap();
        let due_at = jiff::Timestamp::try_from(now - Duration::from_secs(2 * DAY)).unwrap();
        assert!(
            (soonest.as_second() - due_at.as_second()).abs() <= 2,
            "{soonest} {due_at}"
        );
        assert_eq!(c.command, "cairn sync --agent claude");
        let line = warning(&[c]).unwrap();
        assert!(line.starts_with("3 transcript files Cairn has not captured will be deleted by Claude Code within 7 days"), "{line}");
        // One is past its day: said as due, not as a date gone by.
        assert!(
            line.contains("(some are due already: gone when the agent next starts)"),
            "{line}"
        );
        assert!(
            line.ends_with("capture them now: cairn sync --agent claude"),
            "{line}"
        );
        // A file a person forgot is passed over by sync: not Cairn's to capture.
        let forgotten: HashSet<String> = [&old, &due]
            .iter()
            .map(|p| {
                crate::archive::store::source_key(Agent::Claude, &std::fs::canonicalize(p).unwrap())
            })
            .collect();
        assert_eq!(
            check(&policy, &files, &captured, &forgotten, now).expiring,
            1
        );
        // Kept for good: nothing goes.
        let forever = Policy {
            keep: None,
            ..policy
        };
        assert_eq!(
            check(&forever, &files, &captured, &HashSet::new(), now).expiring,
            0
        );
    }
}

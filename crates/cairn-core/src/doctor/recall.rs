//! Doctor's Recall checks: whether extraction is set up and on, how its last pass went and the
//! sessions it failed on (`recall extraction`), and what waits for a person in the review inbox,
//! stale entries apart (`recall review`). Read from `config.toml` and the archive: nothing is
//! contacted (`cairn recall extract doctor` tries the generator with real calls).

use super::{Check, Status, check};
use crate::recall::extract::{RunLog, Settings, config::SETUP_HOW};

/// Text kept in the archive that came from a model server or an agent CLI (a failure's error, a
/// pass's reason to stop), as doctor may print it: redacted with today's rules (older builds
/// stored it as it came), printable, on one line.
fn said(text: &str) -> String {
    let redacted =
        crate::archive::redact::Redactor::global().redact_printable(text, "error", &mut Vec::new());
    crate::text::one_line(&redacted, 200)
}

/// A stored time as a person reads it (minutes, UTC), or as stored when it does not parse.
fn when(stored: &str) -> String {
    crate::text::parse_rfc3339(stored).map_or_else(
        || crate::text::one_line(stored, 40),
        |t| t.strftime("%Y-%m-%d %H:%M UTC").to_string(),
    )
}

/// The extraction check. `settings`: `[recall.extract]` resolved, or why it does not resolve;
/// `last`: the last pass logged; `failed`: the sessions the configured generation failed on
/// now (how a person names each, and its error), newest first.
pub(crate) fn extraction_check(
    settings: &crate::Result<Settings>,
    last: Option<&RunLog>,
    failed: &[(String, String)],
) -> Check {
    let name = "recall extraction";
    let s = match settings {
        Ok(s) => s,
        Err(e) => {
            return check(
                name,
                Status::Warn,
                format!(
                    "{}; no pass runs until it is corrected ({SETUP_HOW})",
                    crate::text::one_line(&e.to_string(), 600)
                ),
            );
        }
    };
    if !s.enabled && !s.is_configured() {
        return check(
            name,
            Status::Ok,
            format!("not set up: no pass runs and nothing is sent; {SETUP_HOW} sets it up"),
        );
    }
    let who = match (s.agent, &s.server) {
        (Some(agent), _) => format!("the {} CLI answers", agent.as_str()),
        (None, Some((server, _))) => format!(
            "model {} on [recall.extract.servers.{server}]",
            crate::text::one_line(&s.model, 80)
        ),
        (None, None) => format!("model {}", crate::text::one_line(&s.model, 80)),
    };
    if !s.enabled {
        return check(
            name,
            Status::Ok,
            format!("set up ({who}) but off: no pass runs; {SETUP_HOW} turns it on"),
        );
    }
    if let Err(e) = s.runnable() {
        return check(
            name,
            Status::Warn,
            crate::text::one_line(&e.to_string(), 600),
        );
    }
    let mut status = Status::Ok;
    let mut parts = vec![format!("on: {who}")];
    match last {
        None => parts.push("no pass has run yet (`cairn recall extract run`)".into()),
        Some(r) => {
            let at = when(r.finished_at.as_deref().unwrap_or(&r.started_at));
            match r.aborted.as_deref().filter(|a| !a.is_empty()) {
                Some(why) => {
                    status = Status::Warn;
                    parts.push(format!("the last pass ({at}) stopped: {}", said(why)));
                }
                None => parts.push(format!(
                    "last pass {at}: {} read, {} failed, {}",
                    crate::text::plural(r.sessions, "session"),
                    r.failed,
                    crate::text::plural(r.entries, "new entry")
                )),
            }
        }
    }
    if let Some((session, error)) = failed.first() {
        status = Status::Warn;
        parts.push(format!(
            "{} failed and {} for a later pass; the newest, {}: {}. `cairn recall extract status` lists them, `cairn recall extract doctor` tries the generator",
            crate::text::plural(failed.len(), "session"),
            if failed.len() == 1 { "waits" } else { "wait" },
            crate::text::one_line(session, 80),
            said(error)
        ));
    }
    check(name, status, parts.join("; "))
}

/// The review check: `inbox` entries wait for a person (`cairn recall review`), `stale` of them
/// because a file they cite changed since (out of service until reviewed again: a warning, as
/// memory agents had is withheld); `trusted` entries serve agents.
pub(crate) fn review_check(inbox: crate::Result<u64>, stale: u32, trusted: u32) -> Check {
    let name = "recall review";
    let inbox = match inbox {
        Ok(n) => n,
        Err(e) => return check(name, Status::Fail, e.to_string()),
    };
    let serving = format!(
        "{} {} agents",
        crate::text::plural(trusted, "trusted entry"),
        if trusted == 1 { "serves" } else { "serve" }
    );
    if inbox == 0 {
        return check(
            name,
            Status::Ok,
            format!("the review inbox is empty; {serving}"),
        );
    }
    let (status, stale) = match stale {
        0 => (Status::Ok, String::new()),
        n => (
            Status::Warn,
            format!(
                ", {n} of them stale (a file {} changed since: out of service until reviewed again)",
                if n == 1 { "it cites" } else { "they cite" }
            ),
        ),
    };
    check(
        name,
        status,
        format!(
            "{} {} in the review inbox{stale}: `cairn recall review` (the desktop app's Inbox); {serving}",
            crate::text::plural(inbox, "entry"),
            if inbox == 1 { "waits" } else { "wait" },
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(text: &str) -> crate::Result<Settings> {
        let config: crate::config::Config = toml::from_str(text).unwrap();
        config
            .recall
            .extract
            .resolve(std::path::Path::new("/d/config.toml"))
    }

    /// Not set up, off, and on: each said, and on, the last pass and the failures, whose text
    /// is redacted before it is shown (an older build stored a server's error as it came).
    #[test]
    fn extraction_says_whether_it_runs_and_what_failed() {
        let none = extraction_check(&settings(""), None, &[]);
        assert_eq!(none.status, Status::Ok);
        assert!(none.detail.starts_with("not set up"), "{none:?}");
        let on = "[recall.extract]\nenabled = true\nmodel = \"qwen3\"\n\
                  [recall.extract.servers.local]\nendpoint = \"http://127.0.0.1:9/v1\"\n";
        let off = extraction_check(&settings(&on.replace("true", "false")), None, &[]);
        assert!(
            off.detail
                .starts_with("set up (model qwen3 on [recall.extract.servers.local]) but off"),
            "{off:?}"
        );
        let fresh = extraction_check(&settings(on), None, &[]);
        assert_eq!(fresh.status, Status::Ok, "{fresh:?}");
        assert!(fresh.detail.contains("no pass has run yet"), "{fresh:?}");
        let last = RunLog {
            fingerprint: "f".into(),
            started_at: "2026-03-01T10:00:00Z".into(),
            finished_at: Some("2026-03-01T10:05:00Z".into()),
            sessions: 4,
            failed: 1,
            units: 9,
            entries: 2,
            activated: false,
            aborted: None,
        };
        let key = format!("ghp_{}", "Zq8xW3vN5bT1kL7mP0aS9dF2gH4jK6cV8eR1");
        let failed = vec![("s-1".to_owned(), format!("HTTP 401: bad token {key}"))];
        let c = extraction_check(&settings(on), Some(&last), &failed);
        assert_eq!(c.status, Status::Warn, "{c:?}");
        assert!(
            c.detail.contains(
                "last pass 2026-03-01 10:05 UTC: 4 sessions read, 1 failed, 2 new entries"
            ) && c
                .detail
                .contains("1 session failed and waits for a later pass; the newest, s-1: HTTP 401"),
            "{c:?}"
        );
        assert!(!c.detail.contains(&key[4..20]), "{c:?}");
    }

    /// The inbox is counted; stale entries make it a warning.
    #[test]
    fn the_review_inbox_is_counted_and_stale_entries_warn() {
        let empty = review_check(Ok(0), 0, 3);
        assert_eq!(empty.status, Status::Ok);
        assert_eq!(
            empty.detail,
            "the review inbox is empty; 3 trusted entries serve agents"
        );
        let waiting = review_check(Ok(2), 1, 1);
        assert_eq!(waiting.status, Status::Warn);
        assert!(
            waiting
                .detail
                .starts_with("2 entries wait in the review inbox, 1 of them stale"),
            "{waiting:?}"
        );
    }
}

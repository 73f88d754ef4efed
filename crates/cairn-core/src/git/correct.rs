//! A person's corrections of a session's links (`cairn link`, `cairn unlink`, the skim
//! timeline's "belongs here" and "not related"), kept in `link_corrections` (migration
//! `0020_link_corrections`), which association never writes.
//!
//! - `link` adds a link with evidence [`Evidence::Person`] (strong, the highest confidence,
//!   origin `person`): a relink deletes only the links it recomputes, so it stays.
//! - `unlink` deletes every link of the session to the target and records that the person said
//!   so: association adds no link to that target again ([`hidden`] is checked on every insert).
//!
//! One correction per session and target: the latest word stands.

use rusqlite::{Connection, OptionalExtension, params};
use serde::{Deserialize, Serialize};

use super::associate::Evidence;
use super::targets::{Target, TargetKind};
use crate::error::{Error, Result};

/// At most this many characters of a reason are kept (whitespace collapsed to one line).
pub const REASON_MAX_CHARS: usize = 500;
/// Who made a correction: at most this many characters.
const PERSON_MAX_CHARS: usize = 64;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "lowercase")]
pub enum CorrectionAction {
    /// The session belongs to the target.
    Link,
    /// The session is not related to the target.
    Unlink,
}

impl CorrectionAction {
    pub fn as_str(self) -> &'static str {
        match self {
            CorrectionAction::Link => "link",
            CorrectionAction::Unlink => "unlink",
        }
    }
}

/// A person's word on one of a session's links.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct LinkCorrection {
    pub session_key: String,
    pub action: CorrectionAction,
    pub target_kind: TargetKind,
    pub target_key: String,
    /// A pull request given by number: the correction covers its links on any branch.
    pub pr_number: Option<u32>,
    /// Who said so (the account that ran the command or the window).
    pub made_by: String,
    /// When (RFC 3339).
    pub made_at: String,
    pub reason: Option<String>,
    /// Links of the session to the target this correction removed (an unlink's automatic links,
    /// or a link's earlier word): 0 when there was nothing to remove.
    pub links_removed: u32,
}

impl LinkCorrection {
    /// One line a person reads: "linked by ana on 2026-12-02: the login work".
    pub fn sentence(&self) -> String {
        let verb = match self.action {
            CorrectionAction::Link => "linked",
            CorrectionAction::Unlink => "unlinked",
        };
        let day = self.made_at.get(..10).unwrap_or(&self.made_at);
        match &self.reason {
            Some(r) => format!("{verb} by {} on {day}: {r}", self.made_by),
            None => format!("{verb} by {} on {day}", self.made_by),
        }
    }
}

/// The name a correction is made under: the account running Cairn (`$USER`, `$LOGNAME`,
/// `$USERNAME`, else the last folder of `$HOME`, as a service or a desktop launcher may set no
/// name), cleaned to one printable line; "unknown" when none is set.
pub fn person() -> String {
    let home_name = || {
        std::env::var_os("HOME").and_then(|h| {
            std::path::Path::new(&h)
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
        })
    };
    ["USER", "LOGNAME", "USERNAME"]
        .iter()
        .filter_map(|v| std::env::var(v).ok())
        .chain(std::iter::once_with(home_name).flatten())
        .map(|v| crate::text::one_line(&v, PERSON_MAX_CHARS))
        .find(|v| !v.is_empty())
        .unwrap_or_else(|| "unknown".to_owned())
}

/// What a person typed as a reason, as stored: one printable line of at most
/// [`REASON_MAX_CHARS`] characters, a secret in it redacted; empty is none.
pub fn clean_reason(reason: Option<&str>) -> Option<String> {
    reason
        .map(|r| {
            // Redacted whole before the cut, so no piece of a secret is left unrecognised.
            let redacted = crate::archive::redact::Redactor::global().redact_printable(
                r,
                "reason",
                &mut Vec::new(),
            );
            crate::text::one_line(&redacted, REASON_MAX_CHARS)
        })
        .filter(|r| !r.is_empty())
}

/// A reindex's part in the git room when it found secrets older rules let through: the reasons
/// persons gave for their corrections, redacted again (stored before reasons were). `apply`
/// false counts only. Returns how many changed.
pub(crate) fn redact_stored(conn: &Connection, apply: bool) -> rusqlite::Result<u32> {
    let changed = crate::archive::store::redact_columns(
        conn,
        "link_corrections",
        "session_id || char(0) || target_key",
        &["reason"],
        apply,
    )?;
    Ok(u32::try_from(changed.len()).unwrap_or(u32::MAX))
}

/// Record a person's word that `session` belongs to `target` ([`CorrectionAction::Link`]: a
/// strong link with evidence `person` that relinks keep) or is not related to it
/// ([`CorrectionAction::Unlink`]: its links to the target go, and association adds none
/// again). Replaces an earlier correction of the same target.
pub fn correct(
    conn: &Connection,
    session: i64,
    target: &Target,
    action: CorrectionAction,
    by: &str,
    reason: Option<&str>,
    now: &str,
) -> Result<LinkCorrection> {
    let db = crate::store::err_in(conn);
    let by = crate::text::one_line(by, PERSON_MAX_CHARS);
    let reason = clean_reason(reason);
    let session_key = crate::archive::store::session_key_of(conn, session)
        .map_err(db)?
        .ok_or_else(|| Error::NotFound(format!("session row {session}")))?;
    let removed = match action {
        // The person's earlier link to this target, if any (a new word replaces it).
        CorrectionAction::Link => conn
            .prepare_cached(
                "DELETE FROM links WHERE session_id = ?1 AND target_key = ?2 AND origin = 'person'",
            )
            .and_then(|mut s| s.execute(params![session, target.key]))
            .map_err(db)?,
        // Every link to the target (by number for a PR given by number).
        CorrectionAction::Unlink => conn
            .prepare_cached(
                "DELETE FROM links WHERE session_id = ?1
                 AND (target_key = ?2 OR (?3 IS NOT NULL AND pr_number = ?3))",
            )
            .and_then(|mut s| s.execute(params![session, target.key, target.pr_number]))
            .map_err(db)?,
    };
    // The same word said again without a reason keeps the reason given before.
    let reason: Option<String> = conn
        .prepare_cached(
            "INSERT INTO link_corrections (session_id, target_kind, target_key, pr_number, action,
            made_by, made_at, reason)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
         ON CONFLICT (session_id, target_key) DO UPDATE SET target_kind = excluded.target_kind,
            pr_number = excluded.pr_number, action = excluded.action, made_by = excluded.made_by,
            made_at = excluded.made_at,
            reason = COALESCE(excluded.reason,
                CASE WHEN link_corrections.action = excluded.action THEN link_corrections.reason END)
         RETURNING reason",
        )
        .and_then(|mut s| {
            s.query_row(
                params![
                    session,
                    target.kind.as_str(),
                    target.key,
                    target.pr_number,
                    action.as_str(),
                    by,
                    now,
                    reason,
                ],
                |r| r.get(0),
            )
        })
        .map_err(db)?;
    let correction = LinkCorrection {
        session_key,
        action,
        target_kind: target.kind,
        target_key: target.key.clone(),
        pr_number: target.pr_number,
        made_by: by,
        made_at: now.to_owned(),
        reason,
        links_removed: u32::try_from(removed).unwrap_or(u32::MAX),
    };
    if action == CorrectionAction::Link {
        insert_person_link(conn, session, &correction).map_err(db)?;
    }
    Ok(correction)
}

fn insert_person_link(conn: &Connection, session: i64, c: &LinkCorrection) -> rusqlite::Result<()> {
    conn.prepare_cached(
        "INSERT OR IGNORE INTO links (session_id, target_kind, target_key, pr_number, evidence,
            strong, confidence, detail, origin)
         VALUES (?1, ?2, ?3, ?4, ?5, 1, ?6, ?7, 'person')",
    )?
    .execute(params![
        session,
        c.target_kind.as_str(),
        c.target_key,
        c.pr_number,
        Evidence::Person.as_str(),
        Evidence::Person.confidence(),
        c.sentence(),
    ])?;
    Ok(())
}

/// Every correction of `session`, oldest first.
pub fn corrections_of(conn: &Connection, session: i64) -> rusqlite::Result<Vec<LinkCorrection>> {
    let key: Option<String> = crate::archive::store::session_key_of(conn, session)?;
    let Some(key) = key else {
        return Ok(Vec::new());
    };
    conn.prepare_cached(
        "SELECT action, target_kind, target_key, pr_number, made_by, made_at, reason
         FROM link_corrections WHERE session_id = ?1 ORDER BY made_at, target_key",
    )?
    .query_map([session], |r| {
        let action: String = r.get(0)?;
        let kind: String = r.get(1)?;
        Ok(LinkCorrection {
            session_key: key.clone(),
            action: if action == "unlink" {
                CorrectionAction::Unlink
            } else {
                CorrectionAction::Link
            },
            target_kind: TargetKind::parse(&kind).unwrap_or(TargetKind::Branch),
            target_key: r.get(2)?,
            pr_number: r
                .get::<_, Option<i64>>(3)?
                .and_then(|n| u32::try_from(n).ok()),
            made_by: r.get(4)?,
            made_at: r.get(5)?,
            reason: r.get(6)?,
            links_removed: 0,
        })
    })?
    .collect()
}

/// Whether the person said `session` is not related to the target `key` (or, for a pull
/// request, to its number): association must not link it.
pub fn hidden(
    conn: &Connection,
    session: i64,
    key: &str,
    pr_number: Option<u32>,
) -> rusqlite::Result<bool> {
    Ok(conn
        .prepare_cached(
            "SELECT 1 FROM link_corrections WHERE session_id = ?1 AND action = 'unlink'
             AND (target_key = ?2 OR (pr_number IS NOT NULL AND pr_number = ?3)) LIMIT 1",
        )?
        .query_row(params![session, key, pr_number], |_| Ok(()))
        .optional()?
        .is_some())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A reason is one printable line, cut to its limit, with a secret in it redacted.
    #[test]
    fn a_reason_is_one_clean_redacted_line() {
        assert_eq!(clean_reason(None), None);
        assert_eq!(clean_reason(Some("  ")), None);
        assert_eq!(
            clean_reason(Some("started there\nwith AKIAZ7QW3RT5YU8IOP2L")).as_deref(),
            Some("started there with [REDACTED:aws-access-key]")
        );
        let long = "x".repeat(REASON_MAX_CHARS * 2);
        let cut = clean_reason(Some(&long)).unwrap();
        assert!(cut.ends_with('…'), "{cut}");
        assert!(cut.chars().count() <= REASON_MAX_CHARS + 1, "{cut}");
    }
}

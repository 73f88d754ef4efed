//! Staleness: an entry whose evidence cites files that changed in later commits is flagged
//! for re-review (and shows in the inbox). Commits the source session itself made (or whose
//! edits it made) are not "later changes": they are what the evidence describes.

use std::collections::BTreeMap;
use std::path::Path;

use rusqlite::{Connection, params};

use crate::error::Result;
use crate::git::associate::RepoCache;

/// Check every accepted, not yet stale entry with cited files; returns how many became stale.
pub fn check(conn: &Connection, cache: &mut RepoCache, now: &str) -> Result<u32> {
    let db = crate::store::err_in(conn);
    let mut stmt = conn
        .prepare_cached(
            "SELECT e.id, e.source_session_id, r.root, v.files, v.recorded_at
             FROM recall_entries e
             JOIN recall_evidence v ON v.entry_id = e.id
             JOIN sessions s ON s.id = v.session_id
             JOIN repos r ON r.id = s.repo_id
             WHERE e.status = 'accepted' AND e.stale = 0 AND v.files != '[]' AND v.recorded_at IS NOT NULL",
        )
        .map_err(db)?;
    let rows: Vec<(String, Option<i64>, String, String, String)> = stmt
        .query_map([], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
        })
        .map_err(db)?
        .collect::<rusqlite::Result<_>>()
        .map_err(db)?;
    // Per entry: its repo, the files and the latest evidence time.
    let mut per_entry: BTreeMap<String, (Option<i64>, String, Vec<String>, String)> =
        BTreeMap::new();
    for (id, session, root, files, at) in rows {
        let files: Vec<String> = serde_json::from_str(&files).unwrap_or_default();
        let e = per_entry
            .entry(id)
            .or_insert((session, root, Vec::new(), at.clone()));
        e.2.extend(files);
        if at > e.3 {
            e.3 = at;
        }
    }
    let mut flagged = 0;
    for (id, (session, root, mut files, at)) in per_entry {
        files.sort();
        files.dedup();
        let Some(repo) = cache.repo_for(Path::new(&root)) else {
            continue;
        };
        let Ok(since) = at.parse::<jiff::Timestamp>() else {
            continue;
        };
        let mut args: Vec<String> = vec![
            "log".into(),
            "HEAD".into(),
            format!("--since=@{}", since.as_second() + 1),
            "--format=%H%x1f%s".into(),
            "--".into(),
        ];
        args.extend(files.iter().cloned());
        let refs: Vec<&str> = args.iter().map(String::as_str).collect();
        let Ok(out) = repo.git(&refs) else { continue };
        let own: Vec<String> = match session {
            Some(s) => conn
                .prepare_cached("SELECT DISTINCT commit_id FROM links WHERE session_id = ?1 AND commit_id IS NOT NULL")
                .map_err(db)?
                .query_map([s], |r| r.get(0))
                .map_err(db)?
                .collect::<rusqlite::Result<_>>()
                .map_err(db)?,
            None => Vec::new(),
        };
        let later = out
            .lines()
            .filter_map(|l| l.split_once('\u{1f}'))
            .find(|(c, _)| {
                !own.iter()
                    .any(|o| c.starts_with(o.as_str()) || o.starts_with(c))
            });
        if let Some((commit, subject)) = later {
            let note = format!(
                "{} changed in {} (\"{}\") after this was recorded",
                files.join(", "),
                &commit[..commit.len().min(7)],
                subject.trim()
            );
            flagged += conn
                .prepare_cached("UPDATE recall_entries SET stale = 1, stale_note = ?2, updated_at = ?3 WHERE id = ?1 AND stale = 0")
                .map_err(db)?
                .execute(params![id, note, now])
                .map_err(db)? as u32;
        }
    }
    Ok(flagged)
}

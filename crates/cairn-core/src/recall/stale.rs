//! Staleness: an entry whose evidence cites files that changed in later commits is flagged
//! for re-review (and shows in the inbox). Commits the source session itself made (or whose
//! edits it made) are not "later changes": they are what the evidence describes.

use std::collections::BTreeMap;
use std::path::Path;

use rusqlite::{Connection, params};
use serde::{Deserialize, Serialize};

use super::model::TRUSTED_SQL;
use crate::error::Result;
use crate::git::associate::RepoCache;

/// What a check flagged, by what each entry was before: a trusted entry flagged stale leaves
/// service and waits for a person again ([`super::model::Entry::is_trusted`]), while one
/// nobody had vouched for yet was in the inbox already and only gains the mark. Said apart, so
/// "3 flagged" never hides that a served note was taken back (or that none was).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct Flagged {
    /// Entries that were trusted (served to agents): no longer served, back in the inbox.
    pub trusted: u32,
    /// Entries already waiting for review (unreviewed, or reviewed but not trusted), now
    /// marked stale too.
    pub untrusted: u32,
}

impl Flagged {
    /// Every entry the check flagged.
    pub fn total(&self) -> u32 {
        self.trusted + self.untrusted
    }
}

/// One entry to check: its source session, the root of the repository its evidence ran in,
/// the files it cites, when its latest evidence was recorded, and whether it is trusted now.
struct Candidate {
    session: Option<i64>,
    root: String,
    files: Vec<String>,
    at: String,
    trusted: bool,
}

/// Check every accepted, not yet stale entry with cited files; says how many became stale.
pub fn check(conn: &Connection, cache: &mut RepoCache, now: &str) -> Result<Flagged> {
    let db = crate::store::err_in(conn);
    let mut stmt = conn
        .prepare_cached(&format!(
            "SELECT e.id, e.source_session_id, v.session_id, v.files, v.recorded_at, ({TRUSTED_SQL})
             FROM recall_entries e
             JOIN recall_evidence v ON v.entry_id = e.id
             WHERE e.status = 'accepted' AND e.stale = 0 AND v.files != '[]' AND v.recorded_at IS NOT NULL"
        ))
        .map_err(db)?;
    type Row = (String, Option<i64>, i64, String, String, bool);
    let rows: Vec<Row> = stmt
        .query_map([], |r| {
            Ok((
                r.get(0)?,
                r.get(1)?,
                r.get(2)?,
                r.get(3)?,
                r.get(4)?,
                r.get(5)?,
            ))
        })
        .map_err(db)?
        .collect::<rusqlite::Result<_>>()
        .map_err(db)?;
    // Per entry: its repo, the files, the latest evidence time, and whether it is trusted now.
    let mut per_entry: BTreeMap<String, Candidate> = BTreeMap::new();
    for (id, session, evidence_session, files, at, trusted) in rows {
        // The repository the evidence's session ran in (the archive knows which, git where).
        let Some(repo) = crate::archive::store::session_repo(conn, evidence_session).map_err(db)?
        else {
            continue;
        };
        let Some(root) = crate::git::store::repo_root(conn, repo).map_err(db)? else {
            continue;
        };
        let files: Vec<String> = serde_json::from_str(&files).unwrap_or_default();
        let e = per_entry.entry(id).or_insert(Candidate {
            session,
            root,
            files: Vec::new(),
            at: at.clone(),
            trusted,
        });
        e.files.extend(files);
        if at > e.at {
            e.at = at;
        }
    }
    let mut flagged = Flagged::default();
    for (
        id,
        Candidate {
            session,
            root,
            mut files,
            at,
            trusted,
        },
    ) in per_entry
    {
        files.sort();
        files.dedup();
        let Some(repo) = cache.repo_for(Path::new(&root)) else {
            continue;
        };
        let Ok(since) = at.parse::<jiff::Timestamp>() else {
            continue;
        };
        // Each later commit with the cited files it changed (`--name-only` lists only the
        // paths the pathspec names; `--no-renames`, so a file renamed away is named by its
        // cited path). Paths are literal: a cited `app/[id].tsx` is no glob.
        let mut args: Vec<String> = vec![
            "log".into(),
            "HEAD".into(),
            format!("--since=@{}", since.as_second() + 1),
            "-z".into(),
            "--name-only".into(),
            "--no-renames".into(),
            "--format=%x1e%H".into(),
            "--".into(),
        ];
        args.extend(files.iter().map(|f| format!(":(literal){f}")));
        let refs: Vec<&str> = args.iter().map(String::as_str).collect();
        let Ok(out) = repo.git(&refs) else { continue };
        let own: Vec<String> = match session {
            Some(s) => crate::git::store::session_commits(conn, s).map_err(db)?,
            None => Vec::new(),
        };
        let later: Vec<(String, Vec<String>)> = changes(&out)
            .into_iter()
            .filter(|(c, _)| {
                !own.iter()
                    .any(|o| c.starts_with(o.as_str()) || o.starts_with(c.as_str()))
            })
            .collect();
        // A merge lists no paths (git shows no diff of one here): a commit that names what it
        // changed is taken first, a merge only when no other commit changed the files.
        let Some((commit, changed)) = later
            .iter()
            .find(|(_, changed)| !changed.is_empty())
            .or(later.first())
        else {
            continue;
        };
        let named = if changed.is_empty() { &files } else { changed };
        let subject = repo
            .git(&["log", "-1", "--format=%s", commit.as_str()])
            .unwrap_or_default();
        let note = format!(
            "{} changed in {} (\"{}\") after this was recorded",
            named.join(", "),
            &commit[..commit.len().min(7)],
            subject.trim()
        );
        let n = conn
            .prepare_cached("UPDATE recall_entries SET stale = 1, stale_note = ?2, updated_at = ?3 WHERE id = ?1 AND stale = 0")
            .map_err(db)?
            .execute(params![id, note, now])
            .map_err(db)? as u32;
        if trusted {
            flagged.trusted += n;
        } else {
            flagged.untrusted += n;
        }
    }
    Ok(flagged)
}

/// The commits of `git log -z --name-only --format=%x1e%H` output, newest first, each with the
/// paths it lists. A NUL ends every path; a commit's line starts with RS then its hash (a path
/// cannot hold NUL, so one holding RS is still read as a path).
fn changes(out: &str) -> Vec<(String, Vec<String>)> {
    let mut commits: Vec<(String, Vec<String>)> = Vec::new();
    for token in out.split('\0') {
        let token = token.strip_prefix('\n').unwrap_or(token);
        match token.strip_prefix('\u{1e}') {
            Some(hash) if !hash.is_empty() && hash.chars().all(|c| c.is_ascii_hexdigit()) => {
                commits.push((hash.to_owned(), Vec::new()));
            }
            _ if token.is_empty() => {}
            _ => {
                if let Some((_, paths)) = commits.last_mut() {
                    paths.push(token.to_owned());
                }
            }
        }
    }
    commits
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn changes_reads_each_commit_with_its_paths() {
        let out = "\u{1e}aaaa\0\nsrc/a.rs\0b c.md\0\u{1e}bbbb\0\u{1e}cccc\0\nx\u{1e}y\0";
        assert_eq!(
            changes(out),
            vec![
                (
                    "aaaa".to_owned(),
                    vec!["src/a.rs".to_owned(), "b c.md".to_owned()]
                ),
                ("bbbb".to_owned(), vec![]),
                ("cccc".to_owned(), vec!["x\u{1e}y".to_owned()]),
            ]
        );
        assert!(changes("").is_empty());
    }
}

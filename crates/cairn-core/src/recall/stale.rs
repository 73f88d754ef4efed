//! Staleness: an entry whose evidence cites files that changed in later commits is flagged
//! for re-review (and shows in the inbox). Commits the source session itself made (or whose
//! edits it made) are not "later changes": they are what the evidence describes.
//!
//! Every sync checks (after it links what it captured), so a commit is noticed without anyone
//! asking; `cairn recall review --check-stale` and the desktop's button run the same check.
//! Each repository's place in its history is kept (`recall_stale_checks`: the HEAD last read,
//! and when): a repository whose HEAD has not moved costs one `git rev-parse`, and one that
//! moved has only the commits since read. An entry made after that place was kept has never
//! been checked, so its history since its evidence is read in full (once); a repository with
//! no place yet (the first check of an archive) has every entry read in full. Reading only the
//! commits since is also what lets a person's accept stand: an entry accepted again after it
//! was flagged is not flagged again for the commit it was flagged for.

use std::collections::BTreeMap;
use std::path::Path;

use rusqlite::{Connection, OptionalExtension, params};

use super::model::TRUSTED_SQL;
use crate::error::Result;
use crate::git::repo::run_git;

/// What a check flagged, trusted entries taken out of service apart from unreviewed ones
/// marked (defined with the sync report that carries it, on the archive's floor).
pub use crate::archive::capture::StaleFlagged as Flagged;

impl Flagged {
    /// Every entry the check flagged.
    pub fn total(&self) -> u32 {
        self.trusted + self.untrusted
    }
}

/// One entry to check: its source session, the files it cites, when its latest evidence was
/// recorded, when the entry was made, and whether it is trusted now.
struct Candidate {
    session: Option<i64>,
    files: Vec<String>,
    at: String,
    created_at: String,
    trusted: bool,
}

/// How far a repository's history was read: the HEAD then, and when (Cairn's clock).
struct Place {
    head: String,
    checked_at: String,
}

/// What one repository's check came to.
enum Looked {
    /// HEAD is where it was and no entry is new: nothing was read.
    Unmoved,
    /// Its history was read through to this HEAD.
    Read(String),
    /// Git could not read it (the repository vanished, HEAD names no commit, a log failed):
    /// its place stays where it was, so the next check reads the same commits again.
    Failed(String),
}

/// [`check`] in a transaction of its own, at Cairn's clock's now: what a sync runs once it
/// has linked what it captured. Immediate, so the entries it reads are the ones it marks.
pub fn check_now(conn: &mut Connection) -> Result<Flagged> {
    let path = crate::store::path_of(conn);
    let db = crate::store::err_at(&path);
    let tx = conn
        .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
        .map_err(db)?;
    // Taken inside the transaction: an entry another writer makes later is stamped later,
    // so it counts as not checked yet.
    let flagged = check(&tx, &crate::clock::now())?;
    tx.commit().map_err(db)?;
    Ok(flagged)
}

/// Check every accepted, not yet stale entry with cited files against the commits its
/// repository's HEAD gained since the last check (all commits after its evidence for an entry
/// no check has seen); says how many became stale. A repository git cannot read is logged
/// and passed over, its place kept, so a check never fails for it.
pub fn check(conn: &Connection, now: &str) -> Result<Flagged> {
    let db = crate::store::err_in(conn);
    let mut stmt = conn
        .prepare_cached(&format!(
            "SELECT e.id, e.source_session_id, v.session_id, v.files, v.recorded_at, e.created_at, ({TRUSTED_SQL})
             FROM recall_entries e
             JOIN recall_evidence v ON v.entry_id = e.id
             WHERE e.status = 'accepted' AND e.stale = 0 AND v.files != '[]' AND v.recorded_at IS NOT NULL"
        ))
        .map_err(db)?;
    type Row = (String, Option<i64>, i64, String, String, String, bool);
    let rows: Vec<Row> = stmt
        .query_map([], |r| {
            Ok((
                r.get(0)?,
                r.get(1)?,
                r.get(2)?,
                r.get(3)?,
                r.get(4)?,
                r.get(5)?,
                r.get(6)?,
            ))
        })
        .map_err(db)?
        .collect::<rusqlite::Result<_>>()
        .map_err(db)?;
    // By repository root, then entry: the files, the latest evidence time, and whether it is
    // trusted now. An entry's repository is the one its evidence's session ran in (the archive
    // knows which; git where).
    let mut by_root: BTreeMap<String, BTreeMap<String, Candidate>> = BTreeMap::new();
    for (id, session, evidence_session, files, at, created_at, trusted) in rows {
        let Some(repo) = crate::archive::store::session_repo(conn, evidence_session).map_err(db)?
        else {
            continue;
        };
        let Some(root) = crate::git::store::repo_root(conn, repo).map_err(db)? else {
            continue;
        };
        let files: Vec<String> = serde_json::from_str(&files).unwrap_or_default();
        let e = by_root
            .entry(root)
            .or_default()
            .entry(id)
            .or_insert(Candidate {
                session,
                files: Vec::new(),
                at: at.clone(),
                created_at,
                trusted,
            });
        e.files.extend(files);
        if at > e.at {
            e.at = at;
        }
    }
    let mut flagged = Flagged::default();
    for (root, entries) in by_root {
        let place = place(conn, &root)?;
        match check_repository(conn, &root, entries, place.as_ref(), now, &mut flagged)? {
            Looked::Unmoved => {}
            Looked::Read(head) => conn
                .prepare_cached(
                    "INSERT INTO recall_stale_checks (root, head, checked_at) VALUES (?1, ?2, ?3)
                     ON CONFLICT (root) DO UPDATE SET head = excluded.head, checked_at = excluded.checked_at",
                )
                .map_err(db)?
                .execute(params![root, head, now])
                .map(drop)
                .map_err(db)?,
            Looked::Failed(why) => tracing::warn!(
                "checking the recall entries of {root} for staleness failed ({why}); the next sync tries again"
            ),
        }
    }
    Ok(flagged)
}

/// Where the last check left `root`'s history, if one did.
fn place(conn: &Connection, root: &str) -> Result<Option<Place>> {
    conn.prepare_cached("SELECT head, checked_at FROM recall_stale_checks WHERE root = ?1")
        .and_then(|mut s| {
            s.query_row([root], |r| {
                Ok(Place {
                    head: r.get(0)?,
                    checked_at: r.get(1)?,
                })
            })
            .optional()
        })
        .map_err(crate::store::err_in(conn))
}

/// Check the entries of the repository at `root`, flagging (and counting in `flagged`) each
/// whose cited files a later commit changed.
fn check_repository(
    conn: &Connection,
    root: &str,
    entries: BTreeMap<String, Candidate>,
    place: Option<&Place>,
    now: &str,
    flagged: &mut Flagged,
) -> Result<Looked> {
    let dir = Path::new(root);
    // Its own `.git` first: git run in a folder that lost it would read an enclosing
    // repository's HEAD instead.
    if !dir.join(".git").exists() {
        return Ok(Looked::Failed("no git repository there any more".into()));
    }
    let head = match run_git(dir, &["rev-parse", "-q", "--verify", "HEAD^{commit}"]) {
        Ok(out) => out.trim().to_owned(),
        Err(e) => return Ok(Looked::Failed(e.to_string())),
    };
    // Since when each entry is read: entries the last check saw, only the commits HEAD gained
    // since (none when HEAD has not moved); the rest, everything after their evidence.
    let since = place.filter(|p| {
        // A place whose commit git no longer has (history rewritten, then pruned) cannot
        // bound a log: every entry is read in full. (Only a hash is ever written there; one
        // that is not is read as no place, never handed to git.)
        p.head == head
            || (!p.head.is_empty()
                && p.head.chars().all(|c| c.is_ascii_hexdigit())
                && run_git(dir, &["cat-file", "-e", &format!("{}^{{commit}}", p.head)]).is_ok())
    });
    let unread = |c: &Candidate| match since {
        Some(p) => c.created_at > p.checked_at || p.head != head,
        None => true,
    };
    if !entries.values().any(unread) {
        return Ok(Looked::Unmoved);
    }
    let db = crate::store::err_in(conn);
    for (id, c) in entries {
        if !unread(&c) {
            continue;
        }
        let seen = since.filter(|p| c.created_at <= p.checked_at);
        let note = match later_change(conn, dir, &c, seen.map(|p| p.head.as_str())) {
            Ok(Some(note)) => note,
            Ok(None) => continue,
            Err(e) => return Ok(Looked::Failed(e.to_string())),
        };
        let n = conn
            .prepare_cached("UPDATE recall_entries SET stale = 1, stale_note = ?2, updated_at = ?3 WHERE id = ?1 AND stale = 0")
            .map_err(db)?
            .execute(params![id, note, now])
            .map_err(db)? as u32;
        if c.trusted {
            flagged.trusted += n;
        } else {
            flagged.untrusted += n;
        }
    }
    Ok(Looked::Read(head))
}

/// The note for `c` if a commit after its evidence, and after `from` when given (a commit the
/// last check read through to), changed a file it cites, and its own session did not make it.
fn later_change(
    conn: &Connection,
    dir: &Path,
    c: &Candidate,
    from: Option<&str>,
) -> Result<Option<String>> {
    let Ok(since) = c.at.parse::<jiff::Timestamp>() else {
        return Ok(None);
    };
    let mut files = c.files.clone();
    files.sort();
    files.dedup();
    // Each later commit with the cited files it changed (`--name-only` lists only the paths
    // the pathspec names; `--no-renames`, so a file renamed away is named by its cited path).
    // Paths are literal: a cited `app/[id].tsx` is no glob.
    let mut args: Vec<String> = vec!["log".into(), "HEAD".into()];
    args.extend(from.map(|f| format!("^{f}")));
    args.extend([
        format!("--since=@{}", since.as_second() + 1),
        "-z".into(),
        "--name-only".into(),
        "--no-renames".into(),
        "--format=%x1e%H".into(),
        "--".into(),
    ]);
    args.extend(files.iter().map(|f| format!(":(literal){f}")));
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = run_git(dir, &refs)?;
    let own: Vec<String> = match c.session {
        Some(s) => {
            crate::git::store::session_commits(conn, s).map_err(crate::store::err_in(conn))?
        }
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
        return Ok(None);
    };
    let named = if changed.is_empty() { &files } else { changed };
    let subject = run_git(dir, &["log", "-1", "--format=%s", commit.as_str()]).unwrap_or_default();
    Ok(Some(format!(
        "{} changed in {} (\"{}\") after this was recorded",
        named.join(", "),
        &commit[..commit.len().min(7)],
        subject.trim()
    )))
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

//! Memory at session start: the trusted entries of one repository and branch, packed into the
//! short brief an agent's SessionStart hook injects ([`crate::Cairn::session_start_brief`]).
//!
//! It runs before every agent session, so it stays small and cheap: where the session is comes
//! from the files under `.git` (no git process), the entries from one indexed query, which
//! repository each came from from a few small files per folder its evidence ran in
//! ([`origin`]), nothing is embedded and nothing is written.

pub mod origin;

use std::path::{Path, PathBuf};

use rusqlite::Connection;

use super::brief::{self, Packed};
use super::model::{Entry, Scope, TRUSTED_SQL};
use super::rank::{Ranked, ScoreBreakdown};
use super::store;
use crate::error::Result;

/// Default budget of the session-start brief, in estimated tokens: a few entries, not a page.
pub const DEFAULT_MAX_TOKENS: u32 = 300;

/// At most this many trusted entries of the repository are read before packing.
const CANDIDATES: u32 = 50;

/// Where a session runs: its repository (named as capture names a session's project) and the
/// branch checked out there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Place {
    pub project: String,
    pub root: PathBuf,
    pub branch: Option<String>,
}

/// Where an agent's Recall question is answered for: a project's entries as they apply on a
/// branch ([`applies`]) in one repository ([`recorded_here`]), or every project's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reach {
    /// The project (as capture names a session's repository); `None`: every project.
    pub project: Option<String>,
    /// The branch the rule reads: entries scoped to another branch are left out.
    pub branch: Option<String>,
    /// The worktree root of the repository asked about, when it is one on disk: entries of
    /// `project` whose evidence ran only in another repository of that name are left out
    /// ([`recorded_here`]). `None`: the name alone decides (every project, or one named by a
    /// path elsewhere or by another name).
    pub root: Option<PathBuf>,
}

/// The repository around `cwd` (the nearest ancestor holding `.git`) and its branch, read from
/// `HEAD` without running git. `None` outside a repository. A relative `cwd` (`.`, the hook's
/// `-C` default) or one with `..` in it is read from the current folder, `..` taken off by name.
pub fn place(cwd: &Path) -> Option<Place> {
    let cwd = lexical(&std::path::absolute(cwd).ok()?);
    let root = crate::archive::project::root_of(&cwd)?;
    let project = crate::archive::project::of_root(root);
    Some(Place {
        project,
        root: root.to_owned(),
        branch: head_branch(root),
    })
}

/// `path` (absolute) with its `.` and `..` components resolved by name, as a shell's `cd` does.
pub(crate) fn lexical(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            std::path::Component::CurDir => {}
            std::path::Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// The branch `HEAD` names in the worktree at `root` (`.git` a directory, or a file pointing
/// at a linked worktree's git dir); `None` when detached or unreadable.
fn head_branch(root: &Path) -> Option<String> {
    let git_dir = crate::archive::project::git_dir_of(root)?;
    let head = crate::archive::project::small_file(&git_dir.join("HEAD"))?;
    head.trim()
        .strip_prefix("ref: refs/heads/")
        .filter(|b| !b.is_empty())
        .map(str::to_owned)
}

/// Whether an entry of the repository belongs in a session on `branch`: a branch-scoped entry
/// only on its own branch, anything wider (project, repository, file, …) on every branch. The
/// one rule of what applies where: the session-start brief and the MCP server's Recall tools
/// (`Cairn::agent_recall_applying`) both read entries through it.
pub fn applies(entry: &Entry, branch: Option<&str>) -> bool {
    entry.scope != Scope::Branch || branch.is_some_and(|b| entry.git_branch == b)
}

/// Whether an entry recorded under the name of the repository at `here` (its root, see
/// [`origin::Here`]) was learnt in that repository and not in another one of the same name
/// (two clients' `api`, a `docs` in every folder): the second rule of what applies where, read
/// by the same two callers as [`applies`], wherever they answer for one repository on disk.
///
/// It is decided by the folders the entry's evidence ran in, as they are on disk now: the entry
/// belongs when one of them is in this repository (the same worktree, another worktree of it,
/// or a clone with the same remote URL), and not when they are all in other repositories (or
/// folders) of its name. Folders that are gone (deleted, moved, another machine's) say nothing:
/// an entry whose evidence ran only there, or that has no evidence with a folder (an import
/// without one), keeps the rule by name alone and belongs, as every entry of the project did
/// before. One folder here is enough: an entry learnt in both repositories belongs to both.
pub fn recorded_here(conn: &Connection, entry: &Entry, here: &mut origin::Here) -> Result<bool> {
    let db = crate::store::err_in(conn);
    let mut elsewhere = false;
    for cwd in here.evidence_folders(conn, &entry.id).map_err(db)? {
        match here.verdict(&cwd, &entry.project) {
            origin::Verdict::Same => return Ok(true),
            origin::Verdict::Other => elsewhere = true,
            origin::Verdict::Gone => {}
        }
    }
    Ok(!elsewhere)
}

/// `items` without the entries [`recorded_here`] leaves out; how many those were.
pub fn keep_recorded_here<T>(
    conn: &Connection,
    items: &mut Vec<T>,
    entry: impl Fn(&T) -> &Entry,
    here: &mut origin::Here,
) -> Result<u32> {
    let mut kept = Vec::with_capacity(items.len());
    let mut left_out = 0u32;
    for item in items.drain(..) {
        if recorded_here(conn, entry(&item), here)? {
            kept.push(item);
        } else {
            left_out += 1;
        }
    }
    *items = kept;
    Ok(left_out)
}

/// The line an answer carries when [`recorded_here`] left `n` entries of `project` out: how
/// many, and why, so a brief without them does not read as all there is under that name.
pub fn elsewhere_line(n: u32, project: &str) -> String {
    let (notes, are) = if n == 1 {
        ("note", "is")
    } else {
        ("notes", "are")
    };
    format!("{n} {notes} from another repository also named {project} {are} left out.")
}

/// An agent's Recall answer for a [`Reach`] (`Cairn::agent_recall_applying`).
#[derive(Debug, Clone)]
pub struct Answer {
    pub response: super::QueryResponse,
    /// Entries of the project read and left out because their evidence ran only in another
    /// repository of its name ([`recorded_here`]); the answer says so in a line,
    /// [`elsewhere_line`].
    pub elsewhere: u32,
}

/// The trusted entries for a session at a place, and how many of the project's others were left
/// out as another repository's ([`recorded_here`]).
#[derive(Debug, Clone)]
pub struct Applying {
    pub entries: Vec<Entry>,
    pub elsewhere: u32,
}

/// The trusted entries for a session at `place`: those recorded on its branch first, then the
/// rest of the repository's, each group most recently updated first. Entries of its name learnt
/// in another repository are left out and counted ([`recorded_here`]).
pub fn entries(conn: &Connection, place: &Place) -> Result<Applying> {
    // Migration 17's partial index holds exactly the trusted entries, newest first per project:
    // the read is the first rows of one range. An archive not migrated yet (the hook never
    // migrates) reads through the project index instead, which visits every entry of the
    // project; by `updated_at` alone SQLite would walk every entry of every project.
    let db = crate::store::err_in(conn);
    let query = |index: &str| {
        format!(
            "SELECT e.id FROM recall_entries e INDEXED BY {index}
             WHERE e.project = ?1 AND {TRUSTED_SQL} ORDER BY e.updated_at DESC, e.id LIMIT ?2"
        )
    };
    let mut stmt = match conn.prepare(&query("recall_entries_trusted")) {
        Ok(stmt) => stmt,
        Err(_) => conn.prepare(&query("recall_entries_context")).map_err(db)?,
    };
    let ids = stmt
        .query_map(rusqlite::params![place.project, CANDIDATES], |r| {
            r.get::<_, String>(0)
        })
        .map_err(db)?
        .collect::<rusqlite::Result<Vec<String>>>()
        .map_err(db)?;
    let mut entries = Vec::with_capacity(ids.len());
    for id in ids {
        if let Some(e) = store::get(conn, &id).map_err(db)? {
            entries.push(e);
        }
    }
    let branch = place.branch.as_deref();
    entries.retain(|e| e.is_trusted() && applies(e, branch));
    let mut here = origin::Here::new(&place.root);
    let elsewhere = keep_recorded_here(conn, &mut entries, |e| e, &mut here)?;
    entries.sort_by_key(|e| branch.is_none_or(|b| e.git_branch != b));
    Ok(Applying { entries, elsewhere })
}

/// `entries` packed into `max_tokens`, headed by where the session is, ending with
/// [`elsewhere_line`] when `elsewhere` entries were left out. Empty when nothing fits.
pub fn pack(entries: Vec<Entry>, place: &Place, max_tokens: u32, elsewhere: u32) -> Packed {
    let ranked: Vec<Ranked> = entries
        .into_iter()
        .map(|entry| Ranked {
            entry,
            score: 0.0,
            breakdown: ScoreBreakdown::default(),
            match_reasons: Vec::new(),
        })
        .collect();
    let budget = (max_tokens as usize).saturating_mul(brief::BYTES_PER_TOKEN);
    pack_headed(
        &ranked,
        Some(&place.project),
        place.branch.as_deref(),
        budget,
        elsewhere,
    )
}

/// The line a brief starts with: which project (`None`: every project) and branch its notes
/// are about (a reader of the packed text sees no entry's project otherwise), and whether a
/// person reviewed them: `reviewed` and `unreviewed` say which kinds the brief holds (the
/// unreviewed ones come last, under [`brief::UNREVIEWED`]).
pub fn intro(
    project: Option<&str>,
    branch: Option<&str>,
    reviewed: bool,
    unreviewed: bool,
) -> String {
    let notes = match (reviewed, unreviewed) {
        (true, true) => "Notes",
        (false, true) => "Unreviewed notes",
        _ => "Reviewed notes",
    };
    let place = project.map_or_else(|| "every project".to_owned(), str::to_owned);
    let branch = branch.map(|b| format!(" (branch {b})")).unwrap_or_default();
    let order = if reviewed && unreviewed {
        ", reviewed ones first, then unreviewed ones"
    } else {
        ""
    };
    format!("{notes} from past sessions in {place}{branch}{order}:\n")
}

/// `ranked` packed into `max_bytes` (the intro and the last line included), headed by
/// [`intro`] and, when `elsewhere` entries of `project` were left out as another repository's,
/// ending with [`elsewhere_line`]. Empty when nothing fits.
pub fn pack_headed(
    ranked: &[Ranked],
    project: Option<&str>,
    branch: Option<&str>,
    max_bytes: usize,
    elsewhere: u32,
) -> Packed {
    let last = match project {
        Some(p) if elsewhere > 0 => format!("\n{}", elsewhere_line(elsewhere, p)),
        _ => String::new(),
    };
    // Room for the longest heading: which one fits the notes is known once they are packed.
    let room = intro(project, branch, true, true).len() + last.len();
    let mut packed = brief::pack(ranked, max_bytes.saturating_sub(room), None);
    if !packed.entry_ids.is_empty() {
        let trusted = |id: &String| {
            ranked
                .iter()
                .find(|r| &r.entry.id == id)
                .is_some_and(|r| r.entry.is_trusted())
        };
        let reviewed = packed.entry_ids.iter().any(trusted);
        let unreviewed = !packed.entry_ids.iter().all(trusted);
        let intro = intro(project, branch, reviewed, unreviewed);
        packed.text = format!("{intro}{}{last}", packed.text);
        packed.bytes = packed.text.len() as u32;
        packed.estimated_tokens = packed.text.len().div_ceil(brief::BYTES_PER_TOKEN) as u32;
    }
    packed
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ranked(id: &str, trusted: bool) -> Ranked {
        let state = if trusted {
            "human_reviewed"
        } else {
            "unreviewed_auto"
        };
        let entry: Entry = serde_json::from_value(serde_json::json!({
            "id": id, "type": "fact", "scope": "project", "status": "accepted",
            "review_state": state, "title": format!("Note {id}"), "body": "", "trigger": "",
            "confidence": null, "uncertainty": "", "project": "shop", "cwd": "", "git_branch": "",
            "agent": "", "source_session_key": null, "source_episode_id": "", "source_run_id": "",
            "extractor_method": "", "model": "", "transferable": true, "provenance_ok": true,
            "trusted": trusted, "provenance_note": null, "stale": false, "stale_note": null,
            "supersedes_entry_id": "", "superseded_by_entry_id": "", "created_at": "",
            "updated_at": "", "reviewed_at": null, "evidence": []
        }))
        .unwrap();
        Ranked {
            entry,
            score: 1.0,
            breakdown: ScoreBreakdown::default(),
            match_reasons: Vec::new(),
        }
    }

    /// A brief's first line says what it holds: "Reviewed notes" only when a person reviewed
    /// every one, and where they are from (every project when it is every project's).
    #[test]
    fn a_brief_s_heading_says_whether_its_notes_were_reviewed() {
        let head = |ranked: &[Ranked], project: Option<&str>| {
            let p = pack_headed(ranked, project, Some("main"), 4000, 0);
            p.text.lines().next().unwrap_or_default().to_owned()
        };
        let (t, u) = (ranked("t1", true), ranked("u1", false));
        assert_eq!(
            head(std::slice::from_ref(&t), Some("shop")),
            "Reviewed notes from past sessions in shop (branch main):"
        );
        let mixed = head(&[t.clone(), u.clone()], Some("shop"));
        assert!(!mixed.contains("Reviewed notes"), "{mixed}");
        assert!(mixed.contains("then unreviewed"), "{mixed}");
        assert_eq!(
            head(std::slice::from_ref(&u), Some("shop")),
            "Unreviewed notes from past sessions in shop (branch main):"
        );
        assert_eq!(
            head(&[t], None),
            "Reviewed notes from past sessions in every project (branch main):"
        );
        // The heading counts in the budget, whichever it is.
        let p = pack_headed(&[u], Some("shop"), None, 300, 0);
        assert!(p.bytes <= 300, "{}", p.bytes);
    }

    #[test]
    fn the_branch_comes_from_head_and_a_linked_worktree_file() {
        let dir = tempfile::tempdir().unwrap();
        let repo = dir.path().join("shop");
        std::fs::create_dir_all(repo.join(".git")).unwrap();
        std::fs::create_dir_all(repo.join("src/deep")).unwrap();
        std::fs::write(repo.join(".git/HEAD"), "ref: refs/heads/feat/cart\n").unwrap();
        let p = place(&repo.join("src/deep")).unwrap();
        assert_eq!(p.project, "shop");
        assert_eq!(p.branch.as_deref(), Some("feat/cart"));
        // A folder named through `..` is the folder it names (its name is not `..`).
        let p = place(&repo.join("src/..")).unwrap();
        assert_eq!(
            (p.project.as_str(), p.root.as_path()),
            ("shop", repo.as_path())
        );

        let wt = dir.path().join("shop-wt");
        std::fs::create_dir_all(repo.join(".git/worktrees/wt")).unwrap();
        std::fs::create_dir_all(&wt).unwrap();
        std::fs::write(
            wt.join(".git"),
            format!("gitdir: {}\n", repo.join(".git/worktrees/wt").display()),
        )
        .unwrap();
        std::fs::write(repo.join(".git/worktrees/wt/HEAD"), "ref: refs/heads/fix\n").unwrap();
        // A linked worktree is its repository's project, on its own branch.
        let p = place(&wt).unwrap();
        assert_eq!(
            (p.project.as_str(), p.branch.as_deref()),
            ("shop", Some("fix"))
        );

        std::fs::write(
            repo.join(".git/HEAD"),
            "0123456789abcdef0123456789abcdef01234567\n",
        )
        .unwrap();
        assert_eq!(place(&repo).unwrap().branch, None);
    }
}

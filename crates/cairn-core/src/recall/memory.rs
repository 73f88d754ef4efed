//! Memory at session start: the trusted entries of one repository and branch, then the trusted
//! global ones of every other ([`global`]), packed into the short brief an agent's SessionStart
//! hook injects ([`crate::Cairn::session_start_brief`]).
//!
//! It runs before every agent session, so it stays small and cheap: where the session is comes
//! from the files under `.git` (no git process), the entries from pages of one indexed query
//! (a bounded number), which repository each came from from a few small files per folder its
//! evidence ran in ([`origin`]), nothing is embedded and nothing is written.

pub mod global;
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

/// The brief holds at most this many trusted entries of the repository before packing (a
/// budget of a few hundred tokens packs far fewer), and reads the repository's entries this
/// many at a time.
const CANDIDATES: u32 = 50;

/// The most pages of [`CANDIDATES`] the brief reads looking for entries that apply here: 1,000
/// entries, a bound on what one hook may cost when another repository of the same name has
/// many newer notes. The brief says when it stopped there ([`LeftOut::stopped_after`]).
const MAX_PAGES: u32 = 20;

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
pub(crate) use crate::archive::project::lexical;

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
    applies_to(entry.scope, &entry.git_branch, branch)
}

/// [`applies`] of an entry's scope and branch, read before the entry is.
fn applies_to(scope: Scope, entry_branch: &str, branch: Option<&str>) -> bool {
    scope != Scope::Branch || branch.is_some_and(|b| entry_branch == b)
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
/// A global entry belongs everywhere ([`global::everywhere`]): it is never left out by this rule.
pub fn recorded_here(conn: &Connection, entry: &Entry, here: &mut origin::Here) -> Result<bool> {
    if global::everywhere(entry.scope) {
        return Ok(true);
    }
    recorded_here_by_id(conn, &entry.id, &entry.project, here)
}

/// [`recorded_here`] of the entry with id `id` and project `project`, read before the entry is.
fn recorded_here_by_id(
    conn: &Connection,
    id: &str,
    project: &str,
    here: &mut origin::Here,
) -> Result<bool> {
    let db = crate::store::err_in(conn);
    let mut elsewhere = false;
    for cwd in here.evidence_folders(conn, id).map_err(db)? {
        match here.verdict(&cwd, project) {
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

/// What an answer for one repository did not serve of its project's entries: those it read and
/// left out as another repository's, and whether it stopped reading at its bound before it had
/// as many as were asked for. Said in one line at its end, [`LeftOut::line`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LeftOut {
    /// Entries read and left out because their evidence ran only in another repository of the
    /// project's name ([`recorded_here`]).
    pub elsewhere: u32,
    /// When reading stopped at its bound with the answer short: how many of the project's
    /// entries were read (newest or best-ranked first). Entries after those were not looked at,
    /// so this repository may have more.
    pub stopped_after: Option<u32>,
}

impl LeftOut {
    /// The line saying what was left out of `project`'s entries ([`elsewhere_line`]) and where
    /// reading stopped; `None` when nothing was.
    pub fn line(&self, project: &str) -> Option<String> {
        let elsewhere = (self.elsewhere > 0).then(|| elsewhere_line(self.elsewhere, project));
        let stopped = self.stopped_after.map(|read| {
            format!(
                "Only the first {read} of {project}'s notes were read; this repository may have more."
            )
        });
        match (elsewhere, stopped) {
            (Some(a), Some(b)) => Some(format!("{a} {b}")),
            (a, b) => a.or(b),
        }
    }
}

/// An agent's Recall answer for a [`Reach`] (`Cairn::agent_recall_applying`).
#[derive(Debug, Clone)]
pub struct Answer {
    pub response: super::QueryResponse,
    /// Entries of the project read and left out because their evidence ran only in another
    /// repository of its name ([`recorded_here`]); the answer says so in a line,
    /// [`elsewhere_line`].
    pub elsewhere: u32,
    /// Set when the read stopped at its bound with fewer entries than asked for: how many
    /// ranked entries were read ([`LeftOut::stopped_after`]).
    pub stopped_after: Option<u32>,
}

impl Answer {
    /// What the answer left out, as its last line says it ([`LeftOut::line`]).
    pub fn left_out(&self) -> LeftOut {
        LeftOut {
            elsewhere: self.elsewhere,
            stopped_after: self.stopped_after,
        }
    }
}

/// The trusted entries for a session at a place, and what of the project's others was left out
/// ([`LeftOut`]).
#[derive(Debug, Clone)]
pub struct Applying {
    pub entries: Vec<Entry>,
    pub left_out: LeftOut,
}

/// The trusted entries for a session at `place`: those scoped to its branch first, then the
/// wider ones recorded on it, then the rest of the repository's, each group most recently
/// updated first, at most [`CANDIDATES`]; then the trusted global entries of other projects,
/// newest first, at most [`CANDIDATES`] more ([`global`]). A brief packs them in that order, so
/// a budget that holds few keeps the branch's own, and a global note takes the room the
/// repository's own leave.
/// Entries of its name learnt in another repository are left out and counted
/// ([`recorded_here`]).
///
/// The rule needs each entry's evidence folders, which no column holds, so it cannot narrow the
/// query itself; instead the entries are read a page at a time, newest first (keyset on
/// `updated_at, id`), until [`CANDIDATES`] apply here or none are left, so a repository's notes
/// are found behind any number of newer ones of another repository of its name, up to
/// [`MAX_PAGES`] pages. Stopping there with fewer is said ([`LeftOut::stopped_after`]).
pub fn entries(conn: &Connection, place: &Place) -> Result<Applying> {
    let db = crate::store::err_in(conn);
    // Migration 17's partial index holds exactly the trusted entries, newest first per project:
    // each page is the next rows of one range. An archive not migrated yet (the hook never
    // migrates) reads through the project index instead, which visits every entry of the
    // project each page; by `updated_at` alone SQLite would walk every entry of every project.
    let query = |index: &str, after: bool| {
        let after = if after {
            " AND e.updated_at <= ?3 AND (e.updated_at < ?3 OR e.id > ?4)"
        } else {
            ""
        };
        format!(
            "SELECT e.id, e.updated_at, e.scope, e.git_branch FROM recall_entries e INDEXED BY {index}
             WHERE e.project = ?1 AND {TRUSTED_SQL}{after} ORDER BY e.updated_at DESC, e.id LIMIT ?2"
        )
    };
    let row = |r: &rusqlite::Row<'_>| -> rusqlite::Result<Row> {
        Ok(Row {
            id: r.get(0)?,
            updated_at: r.get(1)?,
            scope: r.get(2)?,
            git_branch: r.get(3)?,
        })
    };
    let index = match conn.prepare(&query("recall_entries_trusted", false)) {
        Ok(_) => "recall_entries_trusted",
        Err(_) => "recall_entries_context",
    };
    let branch = place.branch.as_deref();
    let mut here = origin::Here::new(&place.root);
    let mut entries = Vec::new();
    let mut left_out = LeftOut::default();
    let mut read = 0u32;
    let mut after: Option<Row> = None;
    let mut ran_out = false;
    for _ in 0..MAX_PAGES {
        let mut rows = match &after {
            None => conn
                .prepare_cached(&query(index, false))
                .and_then(|mut stmt| {
                    stmt.query_map(rusqlite::params![place.project, CANDIDATES], row)?
                        .collect::<rusqlite::Result<Vec<_>>>()
                }),
            Some(last) => conn
                .prepare_cached(&query(index, true))
                .and_then(|mut stmt| {
                    let at = (&last.updated_at, &last.id);
                    stmt.query_map(
                        rusqlite::params![place.project, CANDIDATES, at.0, at.1],
                        row,
                    )?
                    .collect::<rusqlite::Result<Vec<_>>>()
                }),
        }
        .map_err(db)?;
        ran_out = rows.len() < CANDIDATES as usize;
        // Each rule is asked of the row before the entry is loaded: an entry left out costs its
        // evidence's folders (each looked at once a call), not a full read.
        for r in &rows {
            read += 1;
            let scope = Scope::parse(&r.scope).unwrap_or(Scope::Project);
            if !applies_to(scope, &r.git_branch, branch) {
                continue;
            }
            if !global::everywhere(scope)
                && !recorded_here_by_id(conn, &r.id, &place.project, &mut here)?
            {
                left_out.elsewhere += 1;
                continue;
            }
            if let Some(e) = store::get(conn, &r.id).map_err(db)?
                && e.is_trusted()
                && applies(&e, branch)
            {
                entries.push(e);
                if entries.len() >= CANDIDATES as usize {
                    break;
                }
            }
        }
        if ran_out || entries.len() >= CANDIDATES as usize {
            break;
        }
        after = rows.pop();
    }
    if !ran_out && entries.len() < CANDIDATES as usize {
        left_out.stopped_after = Some(read);
    }
    // What the branch has to itself first (every branch-scoped entry left is this branch's:
    // [`applies`]), then the wider ones learnt on it, then the rest; newest first in each.
    entries.sort_by_key(|e| {
        (
            e.scope != Scope::Branch,
            branch.is_none_or(|b| e.git_branch != b),
        )
    });
    // Then what a person accepted as true everywhere, learnt under another project's name.
    entries.extend(global::newest(conn, &place.project, CANDIDATES)?);
    Ok(Applying { entries, left_out })
}

/// What [`entries`] reads of an entry to page on and to apply [`applies`] before loading it.
struct Row {
    id: String,
    updated_at: String,
    scope: String,
    git_branch: String,
}

/// `entries` packed into `max_tokens`, headed by where the session is, ending with
/// [`LeftOut::line`] when anything was left out. Empty when nothing fits.
pub fn pack(entries: Vec<Entry>, place: &Place, max_tokens: u32, left_out: LeftOut) -> Packed {
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
        left_out,
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

/// The line a brief ends with when `n` entries that apply did not fit its budget: how many, and
/// what serves them (an agent with Cairn's MCP server, or the CLI), so a brief cut short is not
/// read as all there is.
pub fn more_line(n: usize, project: Option<&str>) -> String {
    let (notes, them) = if n == 1 {
        ("note", "it")
    } else {
        ("notes", "them")
    };
    let list = match project {
        Some(p) => format!(
            "cairn recall list --project {} --trusted-only",
            shell_word(p)
        ),
        None => "cairn recall list --trusted-only".to_owned(),
    };
    format!(
        "{n} more {notes} that apply did not fit: `recall_query` (Cairn's MCP tools) or `{list}` gives {them}."
    )
}

/// `word` as one shell word: as it is when it holds only characters no shell reads, else in
/// single quotes (a quote inside closed, escaped and reopened).
fn shell_word(word: &str) -> String {
    let plain =
        |c: char| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | '/' | '+' | '@');
    if !word.is_empty() && word.chars().all(plain) {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

/// `ranked` packed into `max_bytes` (the intro and the last line included), headed by
/// [`intro`] and ending with a line when anything that applies is not in it: entries that did
/// not fit ([`more_line`]), entries of `project` left out as another repository's or reading
/// stopped short ([`LeftOut::line`]). A global entry of another project says where it was
/// learnt ([`global::labelled`]). Empty when nothing fits.
pub fn pack_headed(
    ranked: &[Ranked],
    project: Option<&str>,
    branch: Option<&str>,
    max_bytes: usize,
    left_out: LeftOut,
) -> Packed {
    let elsewhere = project.and_then(|p| left_out.line(p));
    let labelled = global::labelled(ranked, project);
    let ranked = labelled.as_slice();
    let ending = |more: usize| {
        let more = (more > 0).then(|| more_line(more, project));
        let line = [more, elsewhere.clone()]
            .into_iter()
            .flatten()
            .collect::<Vec<_>>()
            .join(" ");
        if line.is_empty() {
            line
        } else {
            format!("\n{line}")
        }
    };
    // Room for the longest heading: which one fits the notes is known once they are packed.
    let heading = intro(project, branch, true, true).len();
    let mut last = ending(0);
    let mut packed = brief::pack(ranked, max_bytes.saturating_sub(heading + last.len()), None);
    if !packed.omitted_ids.is_empty() {
        // Packed again with room for the line saying how many did not fit (its count as long
        // as it can be). A budget that then holds no entry keeps what it held without it.
        let room = heading + ending(ranked.len()).len();
        let again = brief::pack(ranked, max_bytes.saturating_sub(room), None);
        if !again.entry_ids.is_empty() {
            last = ending(again.omitted_ids.len());
            packed = again;
        }
    }
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
            let p = pack_headed(ranked, project, Some("main"), 4000, LeftOut::default());
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
        let p = pack_headed(&[u], Some("shop"), None, 300, LeftOut::default());
        assert!(p.bytes <= 300, "{}", p.bytes);
    }

    /// Entries left out for the budget are counted in the last line, beside those left out as
    /// another repository's, and the line counts in the budget.
    #[test]
    fn the_last_line_counts_what_did_not_fit() {
        let many: Vec<Ranked> = (0..6).map(|i| ranked(&format!("t{i}"), true)).collect();
        let left = LeftOut {
            elsewhere: 2,
            stopped_after: None,
        };
        let p = pack_headed(&many, Some("my shop"), Some("main"), 520, left);
        let more = p.omitted_ids.len();
        assert!(more > 0 && !p.entry_ids.is_empty(), "{p:?}");
        assert_eq!(p.entry_ids.len() + more, many.len());
        let last = p.text.lines().last().unwrap();
        assert_eq!(
            last,
            format!(
                "{} {}",
                more_line(more, Some("my shop")),
                elsewhere_line(2, "my shop")
            )
        );
        assert!(last.contains("`cairn recall list --project 'my shop' --trusted-only`"));
        assert!(p.bytes <= 520, "{}", p.bytes);
        // All of them fit: no line.
        let p = pack_headed(&many, Some("shop"), None, 4000, LeftOut::default());
        assert!(p.omitted_ids.is_empty() && p.text.ends_with(brief::FOOTER));
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
        // What `git worktree add` writes beside: the way to the common dir, and the worktree's
        // `.git` named back (without which the worktree is not taken to be the repository's).
        std::fs::write(repo.join(".git/worktrees/wt/commondir"), "../..\n").unwrap();
        std::fs::write(
            repo.join(".git/worktrees/wt/gitdir"),
            format!("{}\n", wt.join(".git").display()),
        )
        .unwrap();
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

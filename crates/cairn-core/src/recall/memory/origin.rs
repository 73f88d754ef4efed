//! Which repository a Recall entry came from, told apart from another of the same folder name.
//!
//! A project is named after its repository's folder, so `api` of one client and `api` of
//! another are one project by name. What an entry was learnt in is known from its evidence: the
//! sessions it cites, and the folders they ran in. [`Here`] answers, for each such folder, whether
//! the repository there now is the one a session starts in, another, or gone; the rule that
//! turns those answers into "this entry belongs here" is [`super::recorded_here`].
//!
//! It runs in the session-start hook, so it reads only a few small files per folder (the
//! `.git` file, the git dir's `gitdir` or `config` that must name that file's worktree back
//! before it is believed, `commondir`, the `config`, each through a capped read of a regular
//! file), never runs git, and asks each question once per call.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use rusqlite::{Connection, OptionalExtension};

use crate::archive::project;

/// Where a session that an entry's evidence cites ran, as it stands on disk now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// In the repository a session starts in: the same worktree, another worktree of it (one
    /// common git dir), or another clone of it (one remote URL).
    Same,
    /// In a folder there now, of the entry's project name, that is not that repository.
    Other,
    /// Nowhere to look: the folder is gone, was never recorded, or what is there now has
    /// another name (the repository the session ran in was moved or deleted).
    Gone,
}

/// The repository at `root` and what the folders an answer's entries cite are, read once each
/// in one call (one brief, one MCP answer).
pub struct Here {
    root: PathBuf,
    /// `root`'s common git dir and normalised remote URL, read when first needed.
    identity: Option<Identity>,
    /// A session row's folder (`None`: not recorded).
    sessions: HashMap<i64, Option<String>>,
    /// A folder, as [`At`].
    folders: HashMap<String, At>,
    /// A worktree root: its project name and whether it is `root`'s repository.
    roots: HashMap<PathBuf, (String, bool)>,
}

#[derive(Debug, Clone)]
struct Identity {
    common: Option<PathBuf>,
    url: Option<String>,
}

/// What is at a session's folder now.
#[derive(Debug, Clone)]
enum At {
    Gone,
    /// A folder outside any repository, by its name.
    Folder(String),
    /// In the worktree with this root.
    Root(PathBuf),
}

impl Here {
    pub fn new(root: &Path) -> Here {
        Here {
            root: root.to_owned(),
            identity: None,
            sessions: HashMap::new(),
            folders: HashMap::new(),
            roots: HashMap::new(),
        }
    }

    /// The folders the evidence of entry `entry_id` ran in, each once, as the archive recorded
    /// them (sessions without one left out).
    pub fn evidence_folders(
        &mut self,
        conn: &Connection,
        entry_id: &str,
    ) -> rusqlite::Result<Vec<String>> {
        let sessions: Vec<i64> = conn
            .prepare_cached("SELECT DISTINCT session_id FROM recall_evidence WHERE entry_id = ?1")?
            .query_map([entry_id], |r| r.get(0))?
            .collect::<rusqlite::Result<_>>()?;
        let mut folders = Vec::new();
        for session in sessions {
            let cwd = match self.sessions.get(&session) {
                Some(cwd) => cwd.clone(),
                None => {
                    let cwd = crate::archive::store::session_cwd(conn, session)
                        .optional()?
                        .flatten()
                        .filter(|c| !c.is_empty());
                    self.sessions.insert(session, cwd.clone());
                    cwd
                }
            };
            if let Some(cwd) = cwd.filter(|c| !folders.contains(c)) {
                folders.push(cwd);
            }
        }
        Ok(folders)
    }

    /// Whether a session of project `project` that ran in `cwd` ran in this repository.
    pub fn verdict(&mut self, cwd: &str, project: &str) -> Verdict {
        let at = match self.folders.get(cwd) {
            Some(at) => at.clone(),
            None => {
                let at = at(cwd);
                self.folders.insert(cwd.to_owned(), at.clone());
                at
            }
        };
        match at {
            At::Gone => Verdict::Gone,
            At::Folder(name) if name == project => Verdict::Other,
            At::Folder(_) => Verdict::Gone,
            At::Root(root) => {
                let (name, same) = match self.roots.get(&root) {
                    Some(known) => known.clone(),
                    None => {
                        let known = (project::of_root(&root), self.same(&root));
                        self.roots.insert(root, known.clone());
                        known
                    }
                };
                if name != project {
                    Verdict::Gone
                } else if same {
                    Verdict::Same
                } else {
                    Verdict::Other
                }
            }
        }
    }

    /// Whether the worktree at `other` belongs to the repository at `self.root`: the same root,
    /// the same common git dir, or the same remote URL. A `.git` file the git dir it names does
    /// not confirm gives no common dir ([`project::common_dir_of`]), so a folder cannot pass for
    /// another repository's worktree by writing one.
    fn same(&mut self, other: &Path) -> bool {
        if other == self.root {
            return true;
        }
        let here = self.identity.get_or_insert_with(|| {
            let common = project::common_dir_of(&self.root);
            let url = common
                .as_deref()
                .and_then(project::remote_url)
                .as_deref()
                .and_then(project::normalised_url);
            Identity { common, url }
        });
        let common = project::common_dir_of(other);
        if common.is_some() && common == here.common {
            return true;
        }
        let Some(url) = here.url.as_deref() else {
            return false;
        };
        common
            .as_deref()
            .and_then(project::remote_url)
            .as_deref()
            .and_then(project::normalised_url)
            .is_some_and(|u| u == url)
    }
}

/// What is at `cwd` now. A relative path names nothing (it would be read from wherever the hook
/// runs); `..` is taken off by name, as [`super::place`] does.
fn at(cwd: &str) -> At {
    let path = Path::new(cwd);
    if !path.is_absolute() {
        return At::Gone;
    }
    let path = super::lexical(path);
    // `exists` follows symlinks: a loop of them is no folder.
    if !path.exists() {
        return At::Gone;
    }
    match project::root_of(&path) {
        Some(root) => At::Root(root.to_owned()),
        None => path
            .file_name()
            .map_or(At::Gone, |n| At::Folder(n.to_string_lossy().into_owned())),
    }
}

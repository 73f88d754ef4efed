//! `cairn why`: from a commit, a line of a file or a description back to the agent sessions and
//! turns that produced it, ranked, each with its evidence and a confidence.
//!
//! - A **commit**: the sessions its links name (`links.commit_id`: the session's own commit
//!   output, its edits committed), and the sessions that edited the commit's files before it;
//!   each session's edits are matched against the lines the commit added (whitespace
//!   normalised), and the turns whose edits wrote them are named.
//! - A **line range** of a file: `git blame` gives each line's commit; per commit as above, and
//!   per line the last edit before the commit that wrote that text (`wrote_line`); a line no
//!   edit wrote (a person changed it, or it is too plain to tell: `}`) falls back to the turn
//!   that last edited the path before the commit (`edited_path`, lower confidence). When
//!   nothing explains the version traced, the sessions that edited the file anyway (another
//!   branch, undone edits) are named by their last edit of it (`edited_elsewhere`, lowest).
//! - A **description**: the session-level search (`views::search::sessions`).
//! - Written down for others: [`Why::attribute`] gives each added line of a commit to the edit
//!   that wrote it, and [`notes`] records that as Git AI authorship notes (`--write-notes`).
//!
//! Evidence kinds and their confidence: a link's own (`commit_by_session` 1.0, `edit_committed`
//! 0.9, … see `git::associate`), `wrote_lines` 0.6 + 0.35 × the share of the commit's
//! distinctive added lines the session's edits wrote, `wrote_line` 0.9, `edited_path` 0.45,
//! `edited_elsewhere` 0.15;
//! a session's confidence combines its evidence as independent (1 − Π(1 − c)).

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};

use rusqlite::Connection;
use serde::{Deserialize, Serialize};

use crate::archive::Agent;
use crate::archive::store::{self as archive, EditRecord};
use crate::error::{Error, Result};
use crate::git::notes::AuthorshipLog;
use crate::git::repo::{BlameLine, Repo};
use crate::git::store as git;
use crate::git::written::{self, distinctive, normalise};
use crate::semantic::Mode;
use crate::views::search::{SearchHit, SessionHit};

pub mod notes;

/// How much later than a commit an edit may be timestamped and still be part of it (the same
/// allowance association makes for write-order jitter).
const EDIT_ORDER_SKEW_SECS: i64 = 120;
/// At most this many candidate sessions are read for edits (most confident first).
const MAX_CANDIDATES: usize = 200;
/// Files of a commit looked up for sessions that edited them.
const MAX_COMMIT_FILES: usize = 200;

/// A commit adding more lines than this is not attributed (`--write-notes` says so).
pub const MAX_ATTRIBUTED_LINES: u32 = 100_000;

pub const WROTE_LINE: f64 = 0.9;
/// A Git AI authorship log on the commit names the session (another tool's word for it).
pub const AI_NOTE: f64 = 0.95;
pub const EDITED_PATH: f64 = 0.45;
/// A session edited the file, but none of its edits is in the version traced (they are on
/// another branch, or were undone): related, not the answer.
pub const EDITED_ELSEWHERE: f64 = 0.15;

/// What to explain.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct WhyQuery {
    /// A commit (id, `HEAD~1`, a branch), `<path>[:<line>[-<line>]]`, or a description.
    pub target: String,
    /// At most this many sessions (default 10).
    pub limit: Option<u32>,
    /// How a description is searched: lexical (default), vector or hybrid.
    #[serde(default)]
    pub mode: Mode,
}

/// Where a front door that takes its place from outside (the desktop's Search, a deep link)
/// traces a question: a repository the archive knows (a root of `branches`), the folder an
/// archived session ran in, or nowhere (the target is a description).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum WhyPlace {
    Repo { root: String },
    Session { session_key: String },
    Nowhere,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "snake_case")]
pub enum WhyKind {
    Commit,
    Lines,
    Description,
}

/// The answer: the commits involved and the sessions, most confident first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct WhyAnswer {
    pub kind: WhyKind,
    /// The target as given (cleaned for printing).
    pub query: String,
    /// The file, repo-relative (lines).
    pub path: Option<String>,
    /// The first and last line asked about (lines).
    pub lines: Option<LineRange>,
    pub commits: Vec<WhyCommit>,
    pub sessions: Vec<WhySession>,
    /// Lines not committed yet (explained from every session that edited the file).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub uncommitted_lines: Vec<u32>,
    /// A description searched by meaning: turns that wait for their vector (captured since the
    /// last build), found by words alone. 0 otherwise.
    #[serde(default)]
    pub vectors_pending: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct LineRange {
    pub start: u32,
    pub end: u32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct WhyCommit {
    pub id: String,
    pub subject: String,
    /// Committer time (RFC 3339).
    pub time: Option<String>,
    /// The lines of the range this commit wrote last (lines).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub lines: Vec<u32>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct WhySession {
    pub session_key: String,
    pub agent: Agent,
    pub title: Option<String>,
    pub project: Option<String>,
    pub started_at: Option<String>,
    /// 0 to 1: how sure the evidence makes the answer.
    pub confidence: f64,
    pub evidence: Vec<WhyEvidence>,
    /// The turns that did it, most confident first.
    pub turns: Vec<WhyTurn>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct WhyEvidence {
    /// A link's evidence (`commit_by_session`, `edit_committed`, …), `wrote_lines`,
    /// `wrote_line`, `edited_path`, `edited_elsewhere` or `search`.
    pub kind: String,
    pub commit: Option<String>,
    pub detail: String,
    pub confidence: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct WhyTurn {
    pub turn_key: Option<String>,
    pub turn_index: Option<u32>,
    /// The record that is the evidence (`cairn://session/<key>?record=<ordinal>`).
    pub ordinal: u32,
    /// `wrote_line`, `wrote_lines`, `edited_path`, `edited_elsewhere`, a link's evidence, or
    /// `search`.
    pub evidence: String,
    pub detail: String,
    pub confidence: f64,
    /// The lines of the range this turn explains (lines).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub lines: Vec<u32>,
}

/// A repo-relative path and, per session (row id), the line numbers it wrote in the commit's
/// version of the file.
pub type AttributedFile = (String, Vec<(i64, Vec<u32>)>);

/// The lines of one commit each archived session wrote ([`Why::attribute`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CommitAttribution {
    /// In diff order.
    pub files: Vec<AttributedFile>,
    /// Lines the commit added to text files.
    pub added: u32,
    /// Binary files it changed (never attributed).
    pub binary: u32,
    /// Files left out for a name git has to quote.
    pub unusual: u32,
}

/// What a target names, before anything is read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    Commit(String),
    Lines {
        path: String,
        range: Option<(u32, u32)>,
    },
    Description(String),
}

/// A line asked about that `path`, of `has` lines, does not have.
fn no_line(path: &str, line: u32, has: impl TryInto<i128>) -> Error {
    Error::Invalid(format!(
        "{path} has no line {line} (it has {}); ask about a line it has",
        crate::text::plural(has, "line")
    ))
}

/// `<path>:<a>` or `<path>:<a>-<b>` split into the path and the range; a range that does not
/// read as one is an error (not a description), so a typo is not searched for.
pub fn split_range(input: &str) -> Result<(&str, Option<(u32, u32)>)> {
    let Some((path, spec)) = input.rsplit_once(':') else {
        return Ok((input, None));
    };
    if spec.is_empty() || !spec.chars().all(|c| c.is_ascii_digit() || c == '-') {
        return Ok((input, None));
    }
    let bad = || {
        Error::Invalid(format!(
            "line range {:?}: write <path>:<line> or <path>:<first>-<last>, lines counting from 1",
            crate::text::printable(spec)
        ))
    };
    let (a, b) = match spec.split_once('-') {
        Some((a, b)) => (a, b),
        None => (spec, spec),
    };
    let number = |n: &str| -> Result<u32> {
        n.parse().map_err(|_| match n.parse::<u128>() {
            Ok(_) => Error::Invalid(format!(
                "line {n} is past the end of any file (at most {})",
                u32::MAX
            )),
            Err(_) => bad(),
        })
    };
    let (a, b) = (number(a)?, number(b)?);
    if a == 0 || b < a {
        return Err(bad());
    }
    if b - a >= crate::git::repo::MAX_BLAME_LINES {
        return Err(Error::Invalid(format!(
            "line range {a}-{b} is {} lines; ask about at most {} at once",
            u64::from(b - a) + 1,
            crate::git::repo::MAX_BLAME_LINES
        )));
    }
    Ok((path, Some((a, b))))
}

/// Which kind of target `input` is, in the repository `repo` (when there is one) with paths
/// relative to `base`: a file of the worktree (with a range), else a revision, else a
/// description.
pub fn classify(input: &str, repo: Option<&Repo>, base: &Path) -> Result<Target> {
    let trimmed = input.trim();
    if trimmed.is_empty() {
        return Err(Error::Invalid(
            "nothing to explain: give a commit, <path>[:<line>[-<line>]] or a description".into(),
        ));
    }
    let one_word = !trimmed.chars().any(char::is_whitespace);
    let (path, range) = split_range(trimmed)?;
    // Several words name a path only when they name a file there (`my notes.md:3`).
    let looks_like_path = (one_word
        && (range.is_some() || path.contains('/') || Path::new(path).is_absolute()))
        || base.join(path).exists();
    // A commit id: 7 to 40 hex digits with a digit among them (`deadbeef`, `cafe` are words).
    let looks_like_id = one_word
        && (7..=40).contains(&trimmed.len())
        && trimmed.chars().all(|c| c.is_ascii_hexdigit())
        && trimmed.chars().any(|c| c.is_ascii_digit());
    let looks_like_rev = one_word && looks_like_rev(trimmed);
    let Some(repo) = repo else {
        if looks_like_path || looks_like_id || looks_like_rev {
            return Err(Error::Invalid(format!(
                "{} is not in a git repository, so {:?} cannot be traced; use -C to choose one",
                base.display(),
                crate::text::printable(trimmed)
            )));
        }
        return Ok(Target::Description(trimmed.to_owned()));
    };
    // A branch name with a slash (`feature/login`) that is no file here is the branch.
    if looks_like_path
        && one_word
        && range.is_none()
        && !base.join(path).exists()
        && let Some(id) = repo.resolve_rev(trimmed)?
    {
        return Ok(Target::Commit(id));
    }
    if looks_like_path {
        let rel = repo.file_inside(base, path)?;
        return Ok(Target::Lines { path: rel, range });
    }
    if one_word && let Some(id) = repo.resolve_rev(trimmed)? {
        return Ok(Target::Commit(id));
    }
    if looks_like_id || looks_like_rev {
        return Err(Error::NotFound(format!(
            "commit {} in {}; list commits with `git log`",
            crate::text::printable(trimmed),
            repo.root.display()
        )));
    }
    Ok(Target::Description(trimmed.to_owned()))
}

/// Whether a word is written as a revision rather than searched for: `HEAD` (and git's other
/// heads, `@`), or a name with `~`/`^` steps (`HEAD~2`, `main^`, `v1.2~3`). Such a word that
/// names no commit is an error, not a description.
fn looks_like_rev(word: &str) -> bool {
    let name = word.trim_end_matches(|c: char| c == '~' || c == '^' || c.is_ascii_digit());
    let steps = &word[name.len()..];
    matches!(
        word,
        "HEAD" | "@" | "FETCH_HEAD" | "ORIG_HEAD" | "MERGE_HEAD" | "CHERRY_PICK_HEAD"
    ) || (!name.is_empty() && steps.starts_with(['~', '^']))
}

/// An edit as `why` uses it: when, which repo-relative paths, which lines.
struct Edit<'a> {
    rec: &'a EditRecord,
    /// (repo-relative path, normalised added lines).
    files: Vec<(String, Vec<String>)>,
}

/// `path` (as an agent wrote it, relative to `cwd` when not absolute) as a path relative to one
/// of `roots`.
fn relative_to(roots: &[PathBuf], cwd: Option<&str>, path: &str) -> Option<String> {
    let p = Path::new(path);
    let full = if p.is_absolute() {
        p.to_path_buf()
    } else {
        Path::new(cwd?).join(p)
    };
    roots.iter().find_map(|root| {
        let rel = full.strip_prefix(root).ok()?.to_str()?.replace('\\', "/");
        crate::git::targets::is_public_repo_path(&rel).then_some(rel)
    })
}

fn epoch(ts: &str) -> Option<i64> {
    crate::text::parse_rfc3339(ts).map(|t| t.as_second())
}

/// The evidence gathered for one session.
#[derive(Default)]
struct Found {
    evidence: Vec<WhyEvidence>,
    /// Turn evidence by record ordinal.
    turns: BTreeMap<u32, WhyTurn>,
}

impl Found {
    fn turn(
        &mut self,
        e: &EditRecord,
        evidence: &str,
        detail: String,
        confidence: f64,
    ) -> &mut WhyTurn {
        let t = self.turns.entry(e.ordinal).or_insert_with(|| WhyTurn {
            turn_key: e.turn_key.clone(),
            turn_index: e.turn_index,
            ordinal: e.ordinal,
            evidence: evidence.to_owned(),
            detail: detail.clone(),
            confidence,
            lines: Vec::new(),
        });
        // What an edit wrote outranks a link of equal confidence resting on the same record.
        let content = evidence.starts_with("wrote_");
        if confidence > t.confidence
            || (confidence >= t.confidence && content && !t.evidence.starts_with("wrote_"))
        {
            t.evidence = evidence.to_owned();
            t.detail = detail;
            t.confidence = confidence;
        }
        t
    }
}

/// Everything one explanation reads: the archive, the repository and the roots of its
/// worktrees the archive knows.
pub struct Why<'a> {
    conn: &'a Connection,
    repo: &'a Repo,
    roots: Vec<PathBuf>,
    family: Vec<i64>,
    found: HashMap<i64, Found>,
    commits: Vec<WhyCommit>,
}

impl<'a> Why<'a> {
    pub fn new(conn: &'a Connection, repo: &'a Repo) -> rusqlite::Result<Why<'a>> {
        let mut roots = vec![repo.root.clone()];
        if let Ok(c) = std::fs::canonicalize(&repo.root) {
            roots.push(c);
        }
        let family = git::family_of(conn, repo)?;
        let places = git::repo_places(conn)?;
        for id in &family {
            if let Some(p) = places.get(id) {
                roots.push(PathBuf::from(&p.root));
            }
        }
        roots.dedup();
        Ok(Why {
            conn,
            repo,
            roots,
            family,
            found: HashMap::new(),
            commits: Vec::new(),
        })
    }

    /// Sessions that may have written `commit` (or, with `None`, uncommitted text of `paths`):
    /// its links, and the sessions that edited one of `paths` in this repository.
    fn candidates(&mut self, commit: Option<&str>, paths: &[String]) -> Result<Vec<i64>> {
        let db = crate::store::err_in(self.conn);
        let mut ids: Vec<i64> = Vec::new();
        if let Some(id) = commit {
            for link in git::commit_links(self.conn, id).map_err(db)? {
                let found = self.found.entry(link.session_id).or_default();
                let kind = link.evidence.clone();
                if !found
                    .evidence
                    .iter()
                    .any(|e| e.kind == kind && e.commit.as_deref() == Some(id))
                {
                    found.evidence.push(WhyEvidence {
                        kind,
                        commit: Some(id.to_owned()),
                        detail: link.detail.clone(),
                        confidence: link.confidence,
                    });
                }
                if let (Some(ordinal), Some(turn)) = (link.ordinal, link.turn_id) {
                    let place = archive::turn_places(self.conn, &[turn]).map_err(db)?;
                    let ordinal = archive::count(ordinal);
                    found.turns.entry(ordinal).or_insert_with(|| WhyTurn {
                        turn_key: place.get(&turn).map(|p| p.0.clone()),
                        turn_index: place.get(&turn).map(|p| archive::count(p.1)),
                        ordinal,
                        evidence: link.evidence.clone(),
                        detail: link.detail.clone(),
                        confidence: link.confidence,
                        lines: Vec::new(),
                    });
                }
                if !ids.contains(&link.session_id) {
                    ids.push(link.session_id);
                }
            }
        }
        for path in paths.iter().take(MAX_COMMIT_FILES) {
            for (session, written) in git::sessions_editing(self.conn, path).map_err(db)? {
                if ids.contains(&session) {
                    continue;
                }
                let repo = archive::session_repo(self.conn, session).map_err(db)?;
                let here = match repo {
                    Some(r) => self.family.contains(&r),
                    None => {
                        let cwd = archive::session_cwd(self.conn, session).map_err(db)?;
                        relative_to(&self.roots, cwd.as_deref(), &written).is_some()
                    }
                };
                if here {
                    ids.push(session);
                }
            }
        }
        ids.truncate(MAX_CANDIDATES);
        Ok(ids)
    }

    /// The sessions a Git AI authorship log on `commit` names (by their agent's session id, or
    /// in a note Cairn wrote before it wrote agents' ids, by session key), as `ai_note` evidence; with `lines`, only the sessions it gives one of those lines
    /// ((path, line in the commit's version), each with its line as asked).
    fn note_evidence(
        &mut self,
        commit: &str,
        lines: Option<&[(String, u32, u32)]>,
    ) -> Result<Option<AuthorshipLog>> {
        let Some(log) = self.repo.authorship_log(commit) else {
            return Ok(None);
        };
        let db = crate::store::err_in(self.conn);
        let short = &commit[..commit.len().min(7)];
        for s in &log.sessions {
            let asked: Vec<u32> = match lines {
                Some(ls) => ls
                    .iter()
                    .filter(|(p, orig, _)| log.attributes(p, *orig, &s.hash))
                    .map(|(_, _, n)| *n)
                    .collect(),
                None => Vec::new(),
            };
            if lines.is_some() && asked.is_empty() {
                continue;
            }
            let (count, paths) = log.line_count(&s.hash);
            // A prompt record with no line in the note attests nothing about the commit.
            if count == 0 {
                continue;
            }
            let agent = Agent::parse(&s.tool);
            for id in
                archive::sessions_of_note(self.conn, agent, &s.id, &s.session_keys).map_err(db)?
            {
                let detail = if asked.is_empty() {
                    format!(
                        "the git-ai note on {short} ({}) gives this session {count} lines of {}",
                        crate::text::one_line(&s.tool, 40),
                        crate::text::one_line(&paths.join(", "), 200)
                    )
                } else {
                    format!(
                        "the git-ai note on {short} ({}) gives this session line {}",
                        crate::text::one_line(&s.tool, 40),
                        asked
                            .iter()
                            .map(u32::to_string)
                            .collect::<Vec<_>>()
                            .join(", ")
                    )
                };
                let found = self.found.entry(id).or_default();
                if !found
                    .evidence
                    .iter()
                    .any(|e| e.kind == "ai_note" && e.commit.as_deref() == Some(commit))
                {
                    found.evidence.push(WhyEvidence {
                        kind: "ai_note".into(),
                        commit: Some(commit.to_owned()),
                        detail,
                        confidence: AI_NOTE,
                    });
                }
            }
        }
        Ok(Some(log))
    }

    /// The edits of `sessions` made before `before` (seconds; any time with `None`).
    fn edits<'r>(&self, records: &'r [EditRecord], before: Option<i64>) -> Vec<Edit<'r>> {
        records
            .iter()
            .filter_map(|rec| {
                let when = rec.timestamp.as_deref().and_then(epoch);
                if let (Some(w), Some(b)) = (when, before)
                    && w > b + EDIT_ORDER_SKEW_SECS
                {
                    return None;
                }
                let files: Vec<(String, Vec<String>)> = written::added_by_edit(
                    rec.record.tool_input.as_deref(),
                    rec.record.tool_kind.as_deref(),
                    &rec.record.file_paths,
                )
                .into_iter()
                .filter_map(|(path, lines)| {
                    let path = path.or_else(|| rec.record.file_paths.first().cloned())?;
                    Some((relative_to(&self.roots, rec.cwd.as_deref(), &path)?, lines))
                })
                .collect();
                let touched: Vec<String> = rec
                    .record
                    .file_paths
                    .iter()
                    .filter_map(|p| relative_to(&self.roots, rec.cwd.as_deref(), p))
                    .collect();
                let mut files = files;
                for p in touched {
                    if !files.iter().any(|(f, _)| *f == p) {
                        files.push((p, Vec::new()));
                    }
                }
                (!files.is_empty()).then_some(Edit { rec, files })
            })
            .collect()
    }

    /// Explain commit `id`: its links, and which sessions' edits wrote its added lines.
    pub fn commit(&mut self, id: &str) -> Result<()> {
        let info = self.repo.commit_info(id)?;
        self.commits.push(WhyCommit {
            id: info.id.clone(),
            subject: crate::text::printable(&info.subject),
            time: rfc3339(info.time),
            lines: Vec::new(),
        });
        self.note_evidence(&info.id, None)?;
        let added = self.repo.added_lines(id)?;
        let paths: Vec<String> = added.iter().map(|(p, _)| p.clone()).collect();
        let sessions = self.candidates(Some(&info.id), &paths)?;
        let db = crate::store::err_in(self.conn);
        let records = archive::edit_records(self.conn, &sessions).map_err(db)?;
        let edits = self.edits(&records, Some(info.time));
        // The commit's distinctive added lines, per path.
        let wanted: Vec<(&str, String)> = added
            .iter()
            .flat_map(|(p, lines)| {
                lines
                    .iter()
                    .map(|l| normalise(l))
                    .filter(|l| distinctive(l))
                    .map(move |l| (p.as_str(), l))
            })
            .collect();
        let short = &info.id[..info.id.len().min(7)];
        for &session in &sessions {
            let mine: Vec<&Edit<'_>> = edits
                .iter()
                .filter(|e| e.rec.session_id == session)
                .collect();
            // Each wanted line: the last edit of this session that wrote it.
            let mut by_edit: BTreeMap<u32, (&Edit<'_>, usize)> = BTreeMap::new();
            let mut matched = 0usize;
            for (path, line) in &wanted {
                let writer = mine.iter().rev().find(|e| {
                    e.files
                        .iter()
                        .any(|(p, lines)| p == path && lines.iter().any(|l| l == line))
                });
                if let Some(e) = writer {
                    matched += 1;
                    by_edit.entry(e.rec.ordinal).or_insert((e, 0)).1 += 1;
                }
            }
            let found = self.found.entry(session).or_default();
            if matched > 0 {
                let share = matched as f64 / wanted.len() as f64;
                let confidence = round(0.6 + 0.35 * share);
                found.evidence.push(WhyEvidence {
                    kind: "wrote_lines".into(),
                    commit: Some(info.id.clone()),
                    detail: format!(
                        "its edits wrote {matched} of the {} distinctive lines {short} added",
                        wanted.len()
                    ),
                    confidence,
                });
                for (e, n) in by_edit.values() {
                    let path = e.files.first().map_or("", |(p, _)| p.as_str());
                    let c = round(0.6 + 0.35 * (*n as f64 / wanted.len() as f64));
                    found.turn(
                        e.rec,
                        "wrote_lines",
                        format!(
                            "{} of {path} wrote {n} of the lines {short} added",
                            tool(e.rec)
                        ),
                        c,
                    );
                }
            } else if let Some(e) = mine
                .iter()
                .rev()
                .find(|e| e.files.iter().any(|(p, _)| paths.contains(p)))
            {
                let path = e
                    .files
                    .iter()
                    .find(|(p, _)| paths.contains(p))
                    .map_or("", |(p, _)| p.as_str());
                found.evidence.push(WhyEvidence {
                    kind: "edited_path".into(),
                    commit: Some(info.id.clone()),
                    detail: format!("edited {path} before {short}, but none of its edits wrote the lines {short} added"),
                    confidence: EDITED_PATH,
                });
                found.turn(
                    e.rec,
                    "edited_path",
                    format!(
                        "{} of {path}, the session's last edit of it before {short}",
                        tool(e.rec)
                    ),
                    EDITED_PATH,
                );
            }
        }
        Ok(())
    }

    /// Which lines of commit `id` each session wrote (what `--write-notes` records): per added
    /// line whose text is distinctive, the last edit before the commit (any candidate session)
    /// that wrote that text to that path; a plain line (`}`, a blank) joins the edit that wrote
    /// the line beside it when that edit wrote its text too. Lines no edit wrote are a person's,
    /// or unknown, and are not attributed.
    pub fn attribute(&mut self, id: &str) -> Result<CommitAttribution> {
        let info = self.repo.commit_info(id)?;
        let diff = self.repo.added_lines_numbered(&info.id)?;
        let added = diff.files.iter().map(|(_, l)| l.len()).sum::<usize>();
        let mut out = CommitAttribution {
            files: Vec::new(),
            added: u32::try_from(added).unwrap_or(u32::MAX),
            binary: diff.binary,
            unusual: diff.unusual,
        };
        if diff.files.is_empty() || out.added > MAX_ATTRIBUTED_LINES {
            return Ok(out);
        }
        let paths: Vec<String> = diff.files.iter().map(|(p, _)| p.clone()).collect();
        let sessions = self.candidates(Some(&info.id), &paths)?;
        let db = crate::store::err_in(self.conn);
        let records = archive::edit_records(self.conn, &sessions).map_err(db)?;
        let edits = self.edits(&records, Some(info.time));
        // The edits in the order they were made (the records come session by session).
        let mut order: Vec<usize> = (0..edits.len()).collect();
        order.sort_by_key(|&i| {
            let r = edits[i].rec;
            (r.timestamp.as_deref().and_then(epoch), r.ordinal)
        });
        for (path, lines) in &diff.files {
            // Each edit of this path, oldest first, with the (normalised) lines it wrote there.
            let written: Vec<(i64, HashSet<&str>)> = order
                .iter()
                .filter_map(|&i| {
                    let set: HashSet<&str> = edits[i]
                        .files
                        .iter()
                        .filter(|(p, _)| p == path)
                        .flat_map(|(_, ls)| ls.iter().map(String::as_str))
                        .collect();
                    (!set.is_empty()).then_some((edits[i].rec.session_id, set))
                })
                .collect();
            if written.is_empty() {
                continue;
            }
            let texts: Vec<String> = lines.iter().map(|(_, t)| normalise(t)).collect();
            let mut who: Vec<Option<usize>> = texts
                .iter()
                .map(|t| {
                    if !distinctive(t) {
                        return None;
                    }
                    written
                        .iter()
                        .rposition(|(_, set)| set.contains(t.as_str()))
                })
                .collect();
            // Plain lines join their neighbour's edit, both ways along a run of added lines.
            let next_to = |who: &mut Vec<Option<usize>>, i: usize, j: usize| {
                if who[i].is_none()
                    && lines[i].0.abs_diff(lines[j].0) == 1
                    && let Some(w) = who[j]
                    && written[w].1.contains(texts[i].as_str())
                {
                    who[i] = Some(w);
                }
            };
            for i in 1..lines.len() {
                next_to(&mut who, i, i - 1);
            }
            for i in (0..lines.len().saturating_sub(1)).rev() {
                next_to(&mut who, i, i + 1);
            }
            let mut per: Vec<(i64, Vec<u32>)> = Vec::new();
            for (i, w) in who.iter().enumerate() {
                let Some(w) = w else { continue };
                let session = written[*w].0;
                match per.iter_mut().find(|(s, _)| *s == session) {
                    Some((_, ls)) => ls.push(lines[i].0),
                    None => per.push((session, vec![lines[i].0])),
                }
            }
            if !per.is_empty() {
                out.files.push((path.clone(), per));
            }
        }
        Ok(out)
    }

    /// Explain lines of `path`: blame, then per commit the sessions, per line the edit that
    /// wrote it.
    pub fn lines(&mut self, path: &str, range: Option<(u32, u32)>) -> Result<Vec<u32>> {
        let (start, end) = match range {
            // A range past the file's end is the file's lines in it; one starting past the end
            // has none (git's own refusal names no fix).
            Some((start, end)) => {
                let has = self.line_count(path)?;
                if start > has {
                    return Err(no_line(path, start, has));
                }
                (start, end.min(has))
            }
            None => (
                1,
                self.line_count(path)?
                    .clamp(1, crate::git::repo::MAX_BLAME_LINES),
            ),
        };
        let blamed = if self.repo.is_tracked(path)? {
            self.repo.blame(None, path, start, end)?
        } else {
            // Not committed yet (a file a session just wrote): blame knows nothing of it, and
            // every line is explained as an uncommitted one.
            self.worktree_lines(path, start, end)?
        };
        // In a shallow clone, a line written before the cut is blamed on the cut's commit: who
        // wrote it is not known here, so it is explained by no one rather than wrongly.
        let cut = self.repo.shallow_commits();
        let (blamed, before_cut): (Vec<&BlameLine>, Vec<&BlameLine>) = blamed
            .iter()
            .partition(|b| b.commit.as_ref().is_none_or(|c| !cut.contains(c)));
        if blamed.is_empty() && !before_cut.is_empty() {
            return Err(Error::Invalid(format!(
                "the lines of {path} asked about were written before the history this clone has (it is shallow); fetch the rest with `git fetch --unshallow` and ask again"
            )));
        }
        let mut by_commit: BTreeMap<Option<String>, Vec<&BlameLine>> = BTreeMap::new();
        for b in blamed {
            by_commit.entry(b.commit.clone()).or_default().push(b);
        }
        let mut uncommitted = Vec::new();
        for (commit, lines) in by_commit {
            let (time, candidates) = match &commit {
                Some(id) => {
                    let info = self.repo.commit_info(id)?;
                    self.commits.push(WhyCommit {
                        id: info.id.clone(),
                        subject: crate::text::printable(&info.subject),
                        time: rfc3339(info.time),
                        lines: lines.iter().map(|b| b.line).collect(),
                    });
                    let mut paths: Vec<String> = lines.iter().map(|b| b.path.clone()).collect();
                    paths.dedup();
                    let asked: Vec<(String, u32, u32)> = lines
                        .iter()
                        .map(|b| (b.path.clone(), b.orig_line, b.line))
                        .collect();
                    self.note_evidence(id, Some(&asked))?;
                    (Some(info.time), self.candidates(Some(id), &paths)?)
                }
                None => {
                    uncommitted.extend(lines.iter().map(|b| b.line));
                    (None, self.candidates(None, &[path.to_owned()])?)
                }
            };
            let db = crate::store::err_in(self.conn);
            let records = archive::edit_records(self.conn, &candidates).map_err(db)?;
            let edits = self.edits(&records, time);
            let short = commit.as_deref().map_or_else(
                || "the worktree".to_owned(),
                |c| c[..c.len().min(7)].to_owned(),
            );
            for b in lines {
                let text = normalise(&b.text);
                // The edit that wrote this text last (any candidate session), else the last
                // edit of the file.
                let wrote = distinctive(&text)
                    .then(|| {
                        edits.iter().rev().find(|e| {
                            e.files
                                .iter()
                                .any(|(p, ls)| *p == b.path && ls.contains(&text))
                        })
                    })
                    .flatten();
                let (edit, kind, confidence, detail) = match wrote {
                    Some(e) => (
                        e,
                        "wrote_line",
                        WROTE_LINE,
                        format!(
                            "{} of {} wrote line {} ({short})",
                            tool(e.rec),
                            b.path,
                            b.line
                        ),
                    ),
                    None => {
                        let Some(e) = edits
                            .iter()
                            .rev()
                            .find(|e| e.files.iter().any(|(p, _)| *p == b.path))
                        else {
                            continue;
                        };
                        (
                            e,
                            "edited_path",
                            EDITED_PATH,
                            format!(
                                "{} of {}: the last edit of the file before {short}; no edit wrote line {} as it reads",
                                tool(e.rec),
                                b.path,
                                b.line
                            ),
                        )
                    }
                };
                let found = self.found.entry(edit.rec.session_id).or_default();
                if !found
                    .evidence
                    .iter()
                    .any(|x| x.kind == kind && x.commit == commit)
                {
                    found.evidence.push(WhyEvidence {
                        kind: kind.to_owned(),
                        commit: commit.clone(),
                        detail: match kind {
                            "wrote_line" => {
                                format!("its edits wrote lines of {} that {short} holds", b.path)
                            }
                            _ => format!("edited {} before {short}", b.path),
                        },
                        confidence,
                    });
                }
                found
                    .turn(edit.rec, kind, detail, confidence)
                    .lines
                    .push(b.line);
            }
        }
        if self.found.values().all(|f| f.evidence.is_empty()) {
            self.edited_elsewhere(path)?;
        }
        Ok(uncommitted)
    }

    /// When no session explains the version of `path` traced: the sessions that edited it all
    /// the same (on a branch not checked out, or in edits undone since), each by its last edit
    /// of the file, at [`EDITED_ELSEWHERE`]. Asked from a session's edited file, "nothing
    /// explains it" would read as "no session ever touched it".
    fn edited_elsewhere(&mut self, path: &str) -> Result<()> {
        let candidates = self.candidates(None, &[path.to_owned()])?;
        let db = crate::store::err_in(self.conn);
        let records = archive::edit_records(self.conn, &candidates).map_err(db)?;
        let edits = self.edits(&records, None);
        let mut last: BTreeMap<i64, &Edit> = BTreeMap::new();
        for e in edits
            .iter()
            .filter(|e| e.files.iter().any(|(p, _)| p == path))
        {
            last.insert(e.rec.session_id, e);
        }
        for (session, e) in last {
            let detail = format!(
                "it edited {path}, but the version here holds none of its edits (they are on another branch, or were undone)"
            );
            let found = self.found.entry(session).or_default();
            found.evidence.push(WhyEvidence {
                kind: "edited_elsewhere".to_owned(),
                commit: None,
                detail: detail.clone(),
                confidence: EDITED_ELSEWHERE,
            });
            found.turn(
                e.rec,
                "edited_elsewhere",
                format!("{} of {path}: its last edit of the file", tool(e.rec)),
                EDITED_ELSEWHERE,
            );
        }
        Ok(())
    }

    /// Lines `start..=end` of the worktree's `path` as blame gives an uncommitted line.
    fn worktree_lines(&self, path: &str, start: u32, end: u32) -> Result<Vec<BlameLine>> {
        let full = self.repo.root.join(path);
        let text = std::fs::read(&full).map_err(|e| Error::Read {
            path: full.clone(),
            source: e,
        })?;
        let text = String::from_utf8_lossy(&text);
        let has = text.lines().count();
        let lines: Vec<BlameLine> = text
            .lines()
            .zip(1u32..)
            .filter(|(_, n)| (start..=end).contains(n))
            .map(|(t, n)| BlameLine {
                line: n,
                commit: None,
                orig_line: n,
                path: path.to_owned(),
                text: t.to_owned(),
            })
            .collect();
        if lines.is_empty() {
            return Err(no_line(path, start, has));
        }
        Ok(lines)
    }

    fn line_count(&self, path: &str) -> Result<u32> {
        let full = self.repo.root.join(path);
        let text = std::fs::read(&full).map_err(|e| Error::Read {
            path: full.clone(),
            source: e,
        })?;
        // A last line without its newline is a line too.
        let lines = text.iter().filter(|b| **b == b'\n').count()
            + usize::from(text.last().is_some_and(|b| *b != b'\n'));
        Ok(u32::try_from(lines.max(1)).unwrap_or(u32::MAX))
    }

    /// The sessions found, most confident first, at most `limit`.
    pub fn finish(self, limit: usize) -> Result<(Vec<WhyCommit>, Vec<WhySession>)> {
        let db = crate::store::err_in(self.conn);
        let mut sessions = Vec::new();
        for (id, found) in self.found {
            if found.evidence.is_empty() {
                continue;
            }
            let card = archive::session_card(self.conn, id).map_err(db)?;
            let title = archive::session_heading(self.conn, id).map_err(db)?;
            let confidence = round(
                1.0 - found
                    .evidence
                    .iter()
                    .map(|e| 1.0 - e.confidence.clamp(0.0, 1.0))
                    .product::<f64>(),
            );
            let mut evidence = found.evidence;
            evidence.sort_by(|a, b| b.confidence.total_cmp(&a.confidence));
            let mut turns: Vec<WhyTurn> = found.turns.into_values().collect();
            // Turns that explain asked lines first, then by confidence.
            turns.sort_by(|a, b| {
                a.lines
                    .is_empty()
                    .cmp(&b.lines.is_empty())
                    .then(b.confidence.total_cmp(&a.confidence))
                    .then(a.ordinal.cmp(&b.ordinal))
            });
            for t in &mut turns {
                t.lines.sort_unstable();
                t.lines.dedup();
            }
            sessions.push(WhySession {
                session_key: card.key,
                agent: card.agent,
                title,
                project: card.project,
                started_at: card.started_at,
                confidence,
                evidence,
                turns,
            });
        }
        sessions.sort_by(|a, b| {
            b.confidence
                .total_cmp(&a.confidence)
                .then_with(|| b.started_at.cmp(&a.started_at))
                .then_with(|| a.session_key.cmp(&b.session_key))
        });
        sessions.truncate(limit);
        Ok((self.commits, sessions))
    }
}

/// A description's answer: the session-level search, its best turns as the evidence.
pub fn from_search(description: &str, hits: Vec<SessionHit>) -> Vec<WhySession> {
    let top = hits.first().map_or(1.0, |h| h.score).max(f64::MIN_POSITIVE);
    let terms = crate::views::search::session_terms(description);
    let mut sessions: Vec<WhySession> = hits
        .into_iter()
        .map(|h| {
            // Search ranks; it does not prove: at most 0.5, relative to the best hit, and
            // scaled by how many of the description's words the session matched (the best of
            // weak hits, found by one common word, is still a weak answer). A session found by
            // meaning shares no words by design: its rank alone says how sure.
            let coverage = if by_meaning(&h) {
                1.0
            } else {
                covered(&terms, &h)
            };
            let confidence = round(0.5 * coverage * h.score / top);
            let mut evidence = vec![WhyEvidence {
                kind: "search".into(),
                commit: None,
                detail: format!("found by {}", h.match_reasons.join(", ")),
                confidence,
            }];
            if !h.paths.is_empty() {
                evidence.push(WhyEvidence {
                    kind: "search".into(),
                    commit: None,
                    detail: format!("edited {}", h.paths.join(", ")),
                    confidence,
                });
            }
            let turns = h
                .turns
                .iter()
                .map(|t: &SearchHit| WhyTurn {
                    turn_key: t.turn_key.clone(),
                    turn_index: None,
                    ordinal: t.ordinal,
                    evidence: "search".into(),
                    detail: crate::text::one_line(
                        &t.snippet.replace(
                            [
                                crate::views::search::MATCH_START,
                                crate::views::search::MATCH_END,
                            ],
                            "",
                        ),
                        200,
                    ),
                    confidence,
                    lines: Vec::new(),
                })
                .collect();
            WhySession {
                session_key: h.session_key,
                agent: h.agent,
                title: h.title,
                project: h.project,
                started_at: h.started_at,
                confidence,
                evidence,
                turns,
            }
        })
        .collect();
    sessions.sort_by(|a, b| b.confidence.total_cmp(&a.confidence));
    sessions
}

/// Whether the vector leg found session hit `h`: one of its turns is there by meaning (the
/// turns leg's hits say `semantic`; a full-text one `keyword`).
fn by_meaning(h: &SessionHit) -> bool {
    h.turns
        .iter()
        .any(|t| t.match_reasons.iter().any(|r| r == "semantic"))
}

/// The share of `terms` (a description's words) that session hit `h` matched: a word marked in
/// one of its turns' snippets (or a word marked there beginning with its first four letters:
/// the index stems), or, for a word that names something (a path, an identifier, a commit), a
/// path or link it was found by. Each marked word counts for one term only: `configure` marked
/// once does not cover both `config` and `configuration`. 1 when the description has no words
/// to count.
fn covered(terms: &[String], h: &SessionHit) -> f64 {
    if terms.is_empty() {
        return 1.0;
    }
    let mut marked: Vec<String> = Vec::new();
    for t in &h.turns {
        let mut rest = t.snippet.as_str();
        while let Some(start) = rest.find(crate::views::search::MATCH_START) {
            rest = &rest[start + crate::views::search::MATCH_START.len_utf8()..];
            let end = rest
                .find(crate::views::search::MATCH_END)
                .unwrap_or(rest.len());
            let word = rest[..end].to_lowercase();
            if !marked.contains(&word) {
                marked.push(word);
            }
            rest = &rest[end..];
        }
    }
    let named: Vec<String> = h
        .paths
        .iter()
        .chain(&h.links)
        .map(|p| p.to_lowercase())
        .collect();
    let mut unused = vec![true; marked.len()];
    let mut matched = vec![false; terms.len()];
    for (i, term) in terms.iter().enumerate() {
        if crate::views::search::names_something(term)
            && named.iter().any(|n| n.contains(term.as_str()))
        {
            matched[i] = true;
        }
    }
    // Whole words first, so a stem takes only what no word took as itself.
    let stem_of = |term: &str| -> Option<String> {
        let stem: String = term.chars().take(4).collect();
        (stem.chars().count() == 4).then_some(stem)
    };
    for whole in [true, false] {
        for (i, term) in terms.iter().enumerate() {
            if matched[i] {
                continue;
            }
            let stem = stem_of(term);
            let found = (0..marked.len()).find(|&j| {
                unused[j]
                    && if whole {
                        &marked[j] == term
                    } else {
                        stem.as_ref()
                            .is_some_and(|s| marked[j].starts_with(s.as_str()))
                    }
            });
            if let Some(j) = found {
                unused[j] = false;
                matched[i] = true;
            }
        }
    }
    matched.iter().filter(|m| **m).count() as f64 / terms.len() as f64
}

fn tool(e: &EditRecord) -> String {
    e.record
        .tool_name
        .clone()
        .unwrap_or_else(|| "an edit".to_owned())
}

fn round(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

fn rfc3339(secs: i64) -> Option<String> {
    jiff::Timestamp::from_second(secs)
        .ok()
        .map(|t| t.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A session hit whose one turn's snippet marks `marked`, at fused score `score`.
    fn hit(key: &str, score: f64, marked: &[&str]) -> SessionHit {
        let snippet: String = marked
            .iter()
            .map(|w| {
                format!(
                    "{}{w}{} ",
                    crate::views::search::MATCH_START,
                    crate::views::search::MATCH_END
                )
            })
            .collect();
        serde_json::from_value(serde_json::json!({
            "session_key": key, "agent": "claude", "title": null, "project": null,
            "started_at": null, "score": score, "match_reasons": ["turns"],
            "turns": [{"session_key": key, "turn_key": "t", "ordinal": 0, "kind": "message",
                "role": "user", "tool_name": null, "timestamp": null, "agent": "claude",
                "title": null, "project": null, "git_branch": null, "snippet": snippet,
                "score": null, "match_reasons": [], "retracted_at": null, "published_by": null}]
        }))
        .unwrap()
    }

    /// The best hit of a description is not sure for being first: found by one common word of
    /// five, it is a weak answer, and one that matched every word ranks above it.
    #[test]
    fn a_description_s_answer_is_as_sure_as_the_words_it_matched() {
        let answer = from_search(
            "why does the kubernetes ingress break",
            vec![
                hit("by-one-word", 1.0, &["does"]),
                hit(
                    "every-word",
                    0.9,
                    &["why", "does", "kubernetes", "ingress", "breaks"],
                ),
            ],
        );
        assert_eq!(answer[0].session_key, "every-word", "{answer:?}");
        assert!(answer[0].confidence > 0.4, "{answer:?}");
        assert_eq!(answer[1].session_key, "by-one-word");
        assert!(answer[1].confidence <= 0.1, "{answer:?}");
        let alone = from_search(
            "nothing qqqzzz",
            vec![hit("by-one-word", 1.0, &["nothing"])],
        );
        assert_eq!(alone[0].confidence, 0.25);

        // Found by meaning, a session shares no words by design: its rank says how sure.
        let mut meant = hit("by-meaning", 1.0, &[]);
        meant.turns[0].match_reasons = vec!["semantic".to_owned()];
        let answer = from_search("why does the ingress break", vec![meant]);
        assert_eq!(answer[0].confidence, 0.5, "{answer:?}");

        // A plain word is no path: `fix` is in `prefix.rs` by accident; `prefix.rs` names it.
        let mut edited = hit("edited", 1.0, &[]);
        edited.match_reasons = vec!["paths".to_owned()];
        edited.paths = vec!["src/prefix.rs".to_owned()];
        let answer = from_search("fix the parser", vec![edited.clone()]);
        assert_eq!(answer[0].confidence, 0.0, "{answer:?}");
        let answer = from_search("fix prefix.rs", vec![edited]);
        assert_eq!(answer[0].confidence, 0.25, "{answer:?}");

        // One marked word covers one term, however many share its stem.
        let answer = from_search(
            "config configuration",
            vec![hit("one", 1.0, &["configure"])],
        );
        assert_eq!(answer[0].confidence, 0.25, "{answer:?}");
        let answer = from_search(
            "config configuration",
            vec![hit("two", 1.0, &["configure", "configured"])],
        );
        assert_eq!(answer[0].confidence, 0.5, "{answer:?}");
        // The same word marked in two turns is still one word.
        let mut twice = hit("twice", 1.0, &["configure"]);
        twice.turns.push(twice.turns[0].clone());
        let answer = from_search("config configuration", vec![twice]);
        assert_eq!(answer[0].confidence, 0.25, "{answer:?}");
    }

    #[test]
    fn ranges_read_or_refuse() {
        assert_eq!(split_range("src/a.rs").unwrap(), ("src/a.rs", None));
        assert_eq!(
            split_range("src/a.rs:7").unwrap(),
            ("src/a.rs", Some((7, 7)))
        );
        assert_eq!(
            split_range("src/a.rs:7-9").unwrap(),
            ("src/a.rs", Some((7, 9)))
        );
        // Not a range: the colon belongs to the text.
        assert_eq!(split_range("note: x").unwrap(), ("note: x", None));
        for bad in [
            "a.rs:0",
            "a.rs:9-7",
            "a.rs:1-",
            "a.rs:-3",
            "a.rs:1-2-3",
            "a.rs:99999999999",
        ] {
            assert!(split_range(bad).is_err(), "{bad}");
        }
        let huge = split_range("a.rs:1-4000000000").unwrap_err().to_string();
        assert!(huge.contains("at most"), "{huge}");
    }

    #[test]
    fn plain_lines_are_not_evidence() {
        assert_eq!(normalise("  let  x =\t1;  "), "let x = 1;");
        assert!(distinctive("let total = 1;"));
        for plain in ["}", "end", "*/", "});", "else {"] {
            assert!(!distinctive(plain), "{plain}");
        }
    }
}

//! `skim`: every session related to a branch, review or change, and every turn, abbreviated —
//! with why each session is related.
//!
//! Sessions come from links (see `git::associate`): by default only links with evidence of work
//! landing on the target; weak links ("ran while the branch was checked out") with
//! `include_weak`. A pull request also collects what its head branch's sessions did (PR
//! carry-over). A turn is `related` when a link rests on it, so `related_turn_count` says
//! something (agentlog marks every turn of a related session related); every turn of a
//! session a person linked by hand is, their link resting on the whole session.

use std::collections::{BTreeMap, BTreeSet};

use rusqlite::Connection;
use serde::{Deserialize, Serialize};

use super::sessions::count;
use crate::archive::Agent;
use crate::archive::store as archive;
use crate::git::associate::Evidence;
pub use crate::git::document::LABELS;
use crate::git::document::{DocAgent, DocSession, DocTurn, DocWhy, PublishedSession};
use crate::git::store as git;
use crate::git::targets::{self, Target, TargetKind};

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct SkimQuery {
    pub target: Target,
    /// Also list sessions that only ran while the target was checked out.
    pub include_weak: bool,
    /// At most this many sessions (the most recently active).
    pub limit: Option<u32>,
    /// Only sessions that ran in this repository: a worktree root (as `branches` lists them,
    /// one since removed too) or any folder in a worktree; sessions in any worktree of the
    /// same repository count. `main` of two repositories is one branch key: the desktop shows
    /// each repository's own, the CLI and MCP server the one they run in. None: every
    /// repository's.
    #[serde(default)]
    pub repo_root: Option<String>,
    /// With `repo_root`, also the sessions Cairn could not place in any repository (their
    /// folder gone or never one, an import from another machine): they may have run in this
    /// one, and a skim that left them out would hide them from every repository's. The
    /// desktop lists them under their project instead.
    #[serde(default)]
    pub unplaced: bool,
    /// Without `repo_root`: only the sessions no repository is recorded for, of this project
    /// (a group of the branch list without a root, [`crate::views::branches::RepoBranches::project`]);
    /// empty: of no project either (the group whose `project` is none).
    #[serde(default)]
    pub project: Option<String>,
    /// A directory in a git repository: also list the sessions teammates published there
    /// (fetched with `cairn pull` in any of its worktrees), and only those. Without it no
    /// teammate's session is listed.
    #[serde(default)]
    pub published_in: Option<String>,
    /// Only this agent's sessions (a teammate's too); none: every agent's.
    #[serde(default)]
    pub agent: Option<Agent>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct SkimView {
    pub target_kind: TargetKind,
    pub target_key: String,
    pub coverage: SkimCoverage,
    pub sessions: Vec<SkimSession>,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct SkimCoverage {
    pub showing_sessions: u32,
    pub showing_turns: u32,
    pub related_turn_count: u32,
    /// Sessions left out because they only have weak links (shown with `include_weak`).
    pub weak_sessions_hidden: u32,
    /// Sessions related to the target that ran outside the scope asked for: in another
    /// repository than `SkimQuery::repo_root`'s (the CLI lists them with `--all-repos`), or,
    /// for `SkimQuery::project`, anywhere but that project's folders of no repository. Counted
    /// as `weak_sessions_hidden` counts: weak ones only with `include_weak`.
    pub other_repo_sessions_hidden: u32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct SkimSession {
    pub session_key: String,
    /// `local-only` for what this machine captured and has not published, `published` for
    /// what it published and for what a teammate shared (then `untrusted` is true).
    pub status: String,
    /// True for a teammate's session, read from a document they published: its title,
    /// project, previews, labels, tool names and reasons are their text (checked for shape and
    /// cleaned of control sequences, but not verified). False for this machine's captures.
    #[serde(default)]
    pub untrusted: bool,
    /// The git remote a teammate's session was pulled from.
    #[serde(default)]
    pub pulled_from: Option<String>,
    /// Who published a teammate's session, as their transcript names them (`publish --full`;
    /// a claim, not verified), and when.
    #[serde(default)]
    pub published_by: Option<String>,
    #[serde(default)]
    pub published_at: Option<String>,
    /// The key of the teammate's whole session in this archive (`publish --full` pulled):
    /// what `show` opens.
    #[serde(default)]
    pub archive_key: Option<String>,
    /// True for this machine's session that Cairn could place in no repository (its folder
    /// gone or never one, an import from another machine), listed by a skim of a repository
    /// because it may have run there ([`SkimQuery::unplaced`]), or by one of every repository:
    /// it may as well have run anywhere else, and is marked so. Never set by a skim of the
    /// sessions of no repository ([`SkimQuery::project`]), where every one is such. The window
    /// lists these under their project, never in a repository's skim: not in its bindings.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    #[cfg_attr(feature = "specta", specta(skip))]
    pub unplaced: bool,
    pub agent: Agent,
    /// The agent that ran it when that is not `agent`, by its name: an imported trajectory's,
    /// or an agent a newer Cairn reads and this build does not (then `agent` is `atif`), from
    /// this archive or a teammate's document ([`crate::agent::stored`]).
    #[serde(default)]
    pub ran_by: Option<String>,
    pub title: Option<String>,
    pub project: Option<String>,
    pub started_at: Option<String>,
    pub updated_at: Option<String>,
    pub turn_count: u32,
    pub record_count: u32,
    pub related_turn_count: u32,
    /// True when every link to the target is weak.
    pub weak: bool,
    /// The evidence, strongest first.
    pub why_related: Vec<WhyRelated>,
    /// `user: …` and `assistant: …` from the related turns.
    pub previews: Vec<String>,
    pub turns: Vec<SkimTurn>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct WhyRelated {
    pub evidence: Evidence,
    pub confidence: f64,
    pub target_key: String,
    pub turn_key: Option<String>,
    pub turn_index: Option<u32>,
    /// The record the evidence rests on.
    pub ordinal: Option<u32>,
    pub commit: Option<String>,
    /// One line a person can read: "edited login.txt, committed in 1a2b3c4".
    pub reason: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct SkimTurn {
    pub turn_key: String,
    pub turn_index: u32,
    pub started_at: Option<String>,
    pub related: bool,
    pub record_count: u32,
    pub tool_call_count: u32,
    pub tool_names: Vec<String>,
    pub labels: Vec<String>,
    pub previews: Vec<String>,
}

/// The target keys whose links count for `target`, and the PR number to match if any.
fn matching_keys(
    conn: &Connection,
    target: &Target,
) -> rusqlite::Result<(Vec<String>, Option<u32>)> {
    let mut keys = vec![target.key.clone()];
    if target.kind == TargetKind::Review {
        // PR carry-over: work proven on the PR's head branch counts for the PR.
        keys.extend(targets::pr_head_branch(&target.key));
        if let Some(n) = target.pr_number {
            for key in git::pr_target_keys(conn, n)? {
                keys.extend(targets::pr_head_branch(&key));
                keys.push(key);
            }
        }
    }
    keys.sort();
    keys.dedup();
    Ok((keys, target.pr_number))
}

struct LinkRow {
    session_id: i64,
    evidence: Evidence,
    strong: bool,
    confidence: f64,
    target_key: String,
    turn_id: Option<i64>,
    turn_key: Option<String>,
    turn_index: Option<i64>,
    ordinal: Option<i64>,
    commit: Option<String>,
    detail: String,
}

/// Where the sessions a skim lists ran.
#[derive(Debug, Default, Clone, Copy)]
pub enum Within<'a> {
    /// Every repository, and sessions of none.
    #[default]
    Anywhere,
    /// These repositories (row ids, what [`SkimQuery::repo_root`] names), and with `unplaced`
    /// the sessions no repository is recorded for ([`SkimQuery::unplaced`]).
    Repos { repos: &'a [i64], unplaced: bool },
    /// Only the sessions no repository is recorded for, of this project, or of none
    /// ([`SkimQuery::project`]).
    Unplaced { project: Option<&'a str> },
}

impl Within<'_> {
    fn holds(&self, place: &archive::SessionPlaceRow) -> bool {
        match *self {
            Within::Anywhere => true,
            Within::Repos { repos, unplaced } => match place.repo_id {
                Some(repo) => repos.contains(&repo),
                None => unplaced,
            },
            Within::Unplaced { project } => {
                place.repo_id.is_none()
                    && place.project.as_deref().filter(|p| !p.is_empty()) == project
            }
        }
    }
}

/// The repositories a skim reads, resolved by the caller from the query's folders.
#[derive(Debug, Default)]
pub struct Scope<'a> {
    pub within: Within<'a>,
    /// The git common dir of the repository whose teammates' sessions to add (what
    /// [`SkimQuery::published_in`] names), or none.
    pub published: Option<&'a str>,
}

/// Every session related to `q.target` that ran where `scope` says, with its turns.
pub fn skim(conn: &Connection, q: &SkimQuery, scope: &Scope) -> rusqlite::Result<SkimView> {
    let (keys, pr_number) = matching_keys(conn, &q.target)?;
    let mut links = git::target_links(conn, &keys, pr_number)?;
    // Sessions of another repository with a link skim would show: strong, or weak when asked.
    let mut elsewhere: BTreeSet<i64> = BTreeSet::new();
    let ids: BTreeSet<i64> = links.iter().map(|l| l.session_id).collect();
    let session_places = archive::session_places(conn, &ids.into_iter().collect::<Vec<_>>())?;
    if !matches!(scope.within, Within::Anywhere) || q.agent.is_some() {
        links.retain(|l| {
            let Some(p) = session_places.get(&l.session_id) else {
                return false;
            };
            if q.agent.is_some_and(|a| p.agent != a) {
                return false;
            }
            let here = scope.within.holds(p);
            if !here && (l.strong || q.include_weak) {
                elsewhere.insert(l.session_id);
            }
            here
        });
    }
    let places = archive::turn_places(
        conn,
        &links.iter().filter_map(|l| l.turn_id).collect::<Vec<_>>(),
    )?;
    let rows: Vec<LinkRow> = links
        .into_iter()
        .map(|l| {
            let place = l.turn_id.and_then(|t| places.get(&t));
            LinkRow {
                session_id: l.session_id,
                evidence: Evidence::parse(&l.evidence).unwrap_or(Evidence::RanOnBranch),
                strong: l.strong,
                confidence: l.confidence,
                target_key: l.target_key,
                turn_id: l.turn_id,
                turn_key: place.map(|(key, _)| key.clone()),
                turn_index: place.map(|(_, index)| *index),
                ordinal: l.ordinal,
                commit: l.commit_id,
                detail: l.detail,
            }
        })
        .collect();

    let mut by_session: BTreeMap<i64, Vec<LinkRow>> = BTreeMap::new();
    for row in rows {
        by_session.entry(row.session_id).or_default().push(row);
    }
    let mut coverage = SkimCoverage {
        other_repo_sessions_hidden: u32::try_from(elsewhere.len()).unwrap_or(u32::MAX),
        ..SkimCoverage::default()
    };
    // Each session's row first, its turns only once the limit has kept it: an agent asking
    // for a page of ten should not pay for the turns of all 500 related sessions.
    let mut sessions = Vec::new();
    let mut local: BTreeMap<String, (i64, Vec<LinkRow>)> = BTreeMap::new();
    for (session_id, links) in by_session {
        let weak = links.iter().all(|l| !l.strong);
        if weak && !q.include_weak {
            coverage.weak_sessions_hidden += 1;
            continue;
        }
        let Some(mut s) = session_row(conn, session_id, &links, weak)? else {
            // A teammate's session pulled in full: it shows from their document below, in the
            // repository it was pulled into, marked as theirs; never as this machine's own
            // (which `publish` would re-publish).
            continue;
        };
        s.unplaced = !matches!(scope.within, Within::Unplaced { .. })
            && session_places
                .get(&session_id)
                .is_some_and(|p| p.repo_id.is_none());
        local.insert(s.session_key.clone(), (session_id, links));
        sessions.push(s);
    }
    // Sessions teammates published in this repository (pulled from refs/cairn) that this
    // machine never captured.
    let published = match scope.published {
        Some(repo) => crate::git::publish::published_for(conn, &keys, repo)?
            .into_iter()
            .map(|(doc, remote)| {
                let mut s = SkimSession::from_published(doc, &remote);
                // Its whole session, when the teammate published it in full and it was pulled.
                let pulled = crate::keys::session_key(Agent::Atif, s.session_key.as_bytes());
                if let Some(Some(by)) = archive::session_origin(conn, &pulled)? {
                    s.published_by = Some(by.publisher);
                    s.archive_key = Some(pulled);
                }
                Ok(s)
            })
            .collect::<rusqlite::Result<_>>()?,
        None => Vec::new(),
    };
    for published in published {
        if q.agent.is_some_and(|a| a != published.agent) {
            continue;
        }
        if published.weak && !q.include_weak {
            coverage.weak_sessions_hidden += 1;
            continue;
        }
        sessions.push(published);
    }
    // Most recently active first for the limit, then shown oldest first (the story in order).
    sessions.sort_by(|a, b| {
        b.updated_at
            .cmp(&a.updated_at)
            .then_with(|| a.session_key.cmp(&b.session_key))
    });
    if let Some(limit) = q.limit {
        sessions.truncate(limit as usize);
    }
    let kept: Vec<i64> = sessions
        .iter()
        .filter(|s| !s.untrusted)
        .filter_map(|s| local.get(&s.session_key).map(|(id, _)| *id))
        .collect();
    let mut turns = archive::turn_cards_of(conn, &kept)?;
    for s in &mut sessions {
        if let Some((id, links)) = (!s.untrusted).then(|| local.get(&s.session_key)).flatten() {
            add_turns(s, turns.remove(id).unwrap_or_default(), links);
        }
    }
    sessions.sort_by(|a, b| {
        (a.weak, &a.started_at, &a.session_key).cmp(&(b.weak, &b.started_at, &b.session_key))
    });
    coverage.showing_sessions = sessions.len() as u32;
    coverage.showing_turns = sessions.iter().map(|s| s.turns.len() as u32).sum();
    coverage.related_turn_count = sessions.iter().map(|s| s.related_turn_count).sum();
    Ok(SkimView {
        target_kind: q.target.kind,
        target_key: q.target.key.clone(),
        coverage,
        sessions,
    })
}

/// What `publish` writes for a target (see [`publishable`]).
pub struct Publishable {
    /// Each session as the fields a document may carry, with the target keys it is related to.
    pub sessions: Vec<(DocSession, Vec<String>)>,
    /// This machine's own sessions related by weak links alone: left out.
    pub weak_left_out: u32,
    /// This machine's own sessions related to the target by work, of no known repository:
    /// left out, since a document is shared in its repository's refs only.
    pub unplaced_left_out: u32,
    /// Of those, the ones whose folder was redacted at capture (its name looked like a
    /// secret): their repository cannot be told from what was kept.
    pub unplaced_redacted: u32,
}

/// The sessions `publish` writes for `target` in `repo`: this machine's own captures that ran in
/// it (any of its worktrees) and are related to the target (never a teammate's session pulled
/// here, never one of another repository's branch of the same name), each as the fields a
/// document may carry and the target keys it is related to; and how many more of its own are
/// related by weak links alone, or by work but in no repository known (left out).
pub fn publishable(
    conn: &Connection,
    target: &Target,
    repo: &crate::git::repo::Repo,
) -> rusqlite::Result<Publishable> {
    let family = git::family_of(conn, repo)?;
    let view = skim(
        conn,
        &SkimQuery {
            target: target.clone(),
            // Read with the weak ones, so those left out can be counted among this machine's own.
            include_weak: true,
            limit: None,
            repo_root: Some(repo.root.to_string_lossy().into_owned()),
            unplaced: false,
            project: None,
            published_in: None,
            agent: None,
        },
        &Scope {
            within: Within::Repos {
                repos: &family,
                unplaced: false,
            },
            published: None,
        },
    )?;
    let (weak, strong): (Vec<_>, Vec<_>) = view
        .sessions
        .into_iter()
        .filter(|s| !s.untrusted)
        .partition(|s| s.weak);
    let sessions = strong
        .into_iter()
        .map(|s| {
            let mut target_keys: Vec<String> =
                s.why_related.iter().map(|w| w.target_key.clone()).collect();
            target_keys.push(target.key.clone());
            target_keys.sort();
            target_keys.dedup();
            (s.into_doc(), target_keys)
        })
        .collect();
    // The sessions of no known repository that `publish` would otherwise share: their folder
    // was not in a repository when they were captured (gone, or never one), or its name was
    // redacted as a secret, so no repository can be told; either way none of them is this
    // repository's for sure.
    let unplaced = skim(
        conn,
        &SkimQuery {
            target: target.clone(),
            include_weak: false,
            limit: None,
            repo_root: None,
            unplaced: true,
            project: None,
            published_in: None,
            agent: None,
        },
        &Scope {
            within: Within::Repos {
                repos: &[],
                unplaced: true,
            },
            published: None,
        },
    )?;
    let (mut unplaced_left_out, mut unplaced_redacted) = (0, 0);
    for s in unplaced.sessions.iter().filter(|s| !s.untrusted && !s.weak) {
        unplaced_left_out += 1;
        let cwd = match archive::resolve_session(conn, &s.session_key)? {
            Some(id) => archive::session_cwd(conn, id)?,
            None => None,
        };
        if cwd.is_some_and(|c| c.contains("[REDACTED")) {
            unplaced_redacted += 1;
        }
    }
    Ok(Publishable {
        sessions,
        weak_left_out: weak.len() as u32,
        unplaced_left_out,
        unplaced_redacted,
    })
}

impl SkimSession {
    /// The session a teammate's skim shows: `published`, marked untrusted, with the remote it
    /// was pulled from. Call on a checked, normalised document.
    pub fn from_published(doc: PublishedSession, remote: &str) -> SkimSession {
        let s = doc.session;
        SkimSession {
            session_key: s.session_key,
            status: "published".to_owned(),
            untrusted: true,
            pulled_from: Some(remote.to_owned()),
            published_by: None,
            published_at: Some(doc.published_at),
            archive_key: None,
            unplaced: false,
            agent: s.agent.agent(),
            ran_by: s.agent.ran_by(),
            title: s.title,
            project: s.project,
            started_at: s.started_at,
            updated_at: s.updated_at,
            turn_count: s.turn_count,
            record_count: s.record_count,
            related_turn_count: s.related_turn_count,
            weak: s.weak,
            why_related: s
                .why_related
                .into_iter()
                .map(|w| WhyRelated {
                    evidence: w.evidence,
                    confidence: w.confidence,
                    target_key: w.target_key,
                    turn_key: w.turn_key,
                    turn_index: w.turn_index,
                    ordinal: w.ordinal,
                    commit: w.commit,
                    reason: w.reason,
                })
                .collect(),
            previews: s.previews,
            turns: s
                .turns
                .into_iter()
                .map(|t| SkimTurn {
                    turn_key: t.turn_key,
                    turn_index: t.turn_index,
                    started_at: t.started_at,
                    related: t.related,
                    record_count: t.record_count,
                    tool_call_count: t.tool_call_count,
                    tool_names: t.tool_names,
                    labels: t.labels,
                    previews: t.previews,
                })
                .collect(),
        }
    }

    /// The fields of this session a published document may carry, as they are: the document
    /// cleans and cuts them ([`PublishedSession::new`]).
    pub fn into_doc(self) -> DocSession {
        DocSession {
            session_key: self.session_key,
            status: "published".to_owned(),
            agent: DocAgent::Known(self.agent),
            title: self.title,
            project: self.project,
            started_at: self.started_at,
            updated_at: self.updated_at,
            turn_count: self.turn_count,
            record_count: self.record_count,
            related_turn_count: self.related_turn_count,
            weak: self.weak,
            why_related: self
                .why_related
                .into_iter()
                .map(|w| DocWhy {
                    evidence: w.evidence,
                    confidence: w.confidence,
                    target_key: w.target_key,
                    turn_key: w.turn_key,
                    turn_index: w.turn_index,
                    ordinal: w.ordinal,
                    commit: w.commit,
                    reason: w.reason,
                })
                .collect(),
            previews: self.previews,
            turns: self
                .turns
                .into_iter()
                .map(|t| DocTurn {
                    turn_key: t.turn_key,
                    turn_index: t.turn_index,
                    started_at: t.started_at,
                    related: t.related,
                    record_count: t.record_count,
                    tool_call_count: t.tool_call_count,
                    tool_names: t.tool_names,
                    labels: t.labels,
                    previews: t.previews,
                })
                .collect(),
        }
    }
}

/// A session's row and why it is related; its turns come with [`add_turns`]. `None` for a
/// teammate's session pulled here.
fn session_row(
    conn: &Connection,
    id: i64,
    links: &[LinkRow],
    weak: bool,
) -> rusqlite::Result<Option<SkimSession>> {
    let card = archive::session_card(conn, id)?;
    if card.pulled {
        return Ok(None);
    }
    let mut s = SkimSession {
        session_key: card.key,
        status: if card.published {
            "published"
        } else {
            "local-only"
        }
        .to_owned(),
        untrusted: false,
        pulled_from: None,
        published_by: None,
        published_at: None,
        archive_key: None,
        unplaced: false,
        agent: card.agent,
        ran_by: card.ran_by,
        title: card.title,
        project: card.project,
        started_at: card.started_at,
        updated_at: card.updated_at,
        turn_count: count(card.turn_count),
        record_count: count(card.record_count),
        related_turn_count: 0,
        weak,
        why_related: Vec::new(),
        previews: Vec::new(),
        turns: Vec::new(),
    };
    // Strongest evidence first, one entry per (evidence, turn, commit).
    let mut seen = BTreeSet::new();
    for l in links.iter().filter(|l| weak || l.strong) {
        if !seen.insert((l.evidence, l.turn_id, l.commit.clone())) {
            continue;
        }
        let turn_part = l
            .turn_index
            .map(|i| format!(" (turn #{i})"))
            .unwrap_or_default();
        s.why_related.push(WhyRelated {
            evidence: l.evidence,
            confidence: l.confidence,
            target_key: l.target_key.clone(),
            turn_key: l.turn_key.clone(),
            turn_index: l.turn_index.map(count),
            ordinal: l.ordinal.map(count),
            commit: l.commit.clone(),
            reason: format!("{}{turn_part}", l.detail),
        });
    }
    s.why_related.truncate(8);
    Ok(Some(s))
}

/// A session's turns (abbreviated, `related` where a counted link rests on one), its related
/// turn count and its latest related previews. A person's link (`cairn link`, "belongs here")
/// rests on no turn: it is their word that the whole session belongs to the target, so every
/// turn of it is related (a skim would otherwise count none of them).
fn add_turns(s: &mut SkimSession, turns: Vec<archive::TurnCard>, links: &[LinkRow]) {
    let counted = || links.iter().filter(|l| s.weak || l.strong);
    let whole = counted().any(|l| l.evidence == Evidence::Person);
    let related_turns: BTreeSet<i64> = counted().filter_map(|l| l.turn_id).collect();
    let mut latest_user = None;
    let mut latest_assistant = None;
    for archive::TurnCard {
        id: turn_id,
        turn_key,
        turn_index,
        started_at,
        record_count: records,
        tool_call_count: tools,
        tool_names,
        preview: user,
        assistant_preview: assistant,
    } in turns
    {
        let related = whole || related_turns.contains(&turn_id);
        let mut previews = Vec::new();
        if let Some(u) = user.as_deref().filter(|u| !u.trim().is_empty()) {
            previews.push(format!("user: {u}"));
        }
        if let Some(a) = assistant.as_deref().filter(|a| !a.trim().is_empty()) {
            previews.push(format!("assistant: {a}"));
        }
        if related {
            latest_user = user.clone().or(latest_user);
            latest_assistant = assistant.clone().or(latest_assistant);
        }
        let commits_here = links
            .iter()
            .any(|l| l.turn_id == Some(turn_id) && l.commit.is_some());
        s.turns.push(SkimTurn {
            turn_key,
            turn_index: count(turn_index),
            started_at,
            related,
            record_count: count(records),
            tool_call_count: count(tools),
            tool_names: serde_json::from_str(&tool_names).unwrap_or_default(),
            labels: labels(&previews.join(" "), commits_here),
            previews,
        });
    }
    s.related_turn_count = s.turns.iter().filter(|t| t.related).count() as u32;
    if let Some(u) = latest_user {
        s.previews.push(format!("user: {u}"));
    }
    if let Some(a) = latest_assistant {
        s.previews.push(format!("assistant: {a}"));
    }
}

/// agentlog's keyword labels, matched on whole words so "preview" is not "reviewed" and
/// "checkout" is not "tested"; plus `committed` when the turn made a commit.
pub fn labels(text: &str, committed: bool) -> Vec<String> {
    // One pass over the words (this runs for every turn a skim lists: thousands a call).
    const IMPLEMENTED: u8 = 1;
    const DECIDED: u8 = 1 << 1;
    const REVIEWED: u8 = 1 << 2;
    const TESTED: u8 = 1 << 3;
    const RENAMED: u8 = 1 << 4;
    const INSTALLED: u8 = 1 << 5;
    let lower = text.to_lowercase();
    let mut found = 0u8;
    for word in lower.split(|c: char| !c.is_alphanumeric() && c != '\'') {
        found |= match word {
            "implemented" | "implement" | "added" | "created" => IMPLEMENTED,
            "decision" | "decided" | "chose" | "picked" => DECIDED,
            "review" | "reviewed" | "findings" | "subagent" => REVIEWED,
            "test" | "tests" | "tested" | "testing" | "validation" | "validated" => TESTED,
            "renamed" => RENAMED,
            "install" | "installed" => INSTALLED,
            _ => 0,
        };
    }
    let phrase = |options: &[&str]| options.iter().any(|p| lower.contains(p));
    if phrase(&["command is now"]) {
        found |= RENAMED;
    }
    let mut out = Vec::new();
    let mut push = |cond: bool, label: &str| {
        if cond {
            out.push(label.to_owned());
        }
    };
    push(found & IMPLEMENTED != 0, "implemented");
    push(found & DECIDED != 0, "decided");
    push(found & REVIEWED != 0, "reviewed");
    push(found & TESTED != 0, "tested");
    push(found & RENAMED != 0, "renamed");
    push(found & INSTALLED != 0, "installed");
    push(committed, "committed");
    push(
        lower.contains("next") && phrase(&["what's next", "whats next", "next is", "next step"]),
        "next",
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_match_words_not_fragments() {
        assert_eq!(
            labels("user: preview the latest checkout", false),
            Vec::<String>::new()
        );
        assert_eq!(
            labels("assistant: I implemented it and the tests pass", true),
            vec!["implemented", "tested", "committed"]
        );
        assert!(labels("we cherry-pick this", false).is_empty());
        assert_eq!(
            labels("Decided to install ripgrep. What's next?", false),
            vec!["decided", "installed", "next"]
        );
    }

    #[test]
    fn each_keyword_gives_its_label_between_any_punctuation() {
        let cases = [
            ("implemented implement added created", "implemented"),
            ("decision decided chose picked", "decided"),
            ("review reviewed findings subagent", "reviewed"),
            ("test tests tested testing validation validated", "tested"),
            ("renamed", "renamed"),
            ("install installed", "installed"),
        ];
        for (words, label) in cases {
            for word in words.split(' ') {
                for text in [
                    word.to_owned(),
                    word.to_uppercase(),
                    format!("({word}),"),
                    format!("x-{word}/y"),
                ] {
                    assert_eq!(labels(&text, false), vec![label], "{text:?}");
                }
                assert!(labels(&format!("{word}s'"), false).is_empty(), "{word}");
                assert!(labels(&format!("pre{word}"), false).is_empty(), "{word}");
            }
        }
        assert_eq!(
            labels("the command is now `cairn x`", false),
            vec!["renamed"]
        );
        assert_eq!(labels("Next step: ship", false), vec!["next"]);
    }

    #[test]
    fn every_label_is_in_the_published_vocabulary() {
        let all = "implemented decided reviewed tested renamed installed what's next";
        assert_eq!(labels(all, true), LABELS);
    }
}

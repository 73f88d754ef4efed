//! The [`Cairn`] facade, reading the archive: sessions, skim, show, records, branches and search.

use std::path::Path;

use crate::archive::Agent;
use crate::archive::store::{self as archive, Store};
use crate::semantic::Mode;
use crate::semantic::vectors::VectorStore;
use crate::views::search::{SearchHit, SearchQuery};
use crate::views::sessions::{SessionQuery, SessionSummary};
use crate::{Cairn, Error, Result};
use crate::{git, views};

impl Cairn {
    /// Top-level sessions, newest first.
    pub fn sessions(&self, query: &SessionQuery) -> Result<Vec<SessionSummary>> {
        let (since, until) = time_window(&query.since, &query.until)?;
        let query = SessionQuery {
            branch: query.branch.as_deref().map(branch_filter),
            since,
            until,
            ..query.clone()
        };
        let store = self.store();
        views::sessions::list(store.conn(), &query).map_err(|e| store.err(e))
    }

    /// The agents with sessions in the archive and how many each has, most first: what the
    /// agent filters offer (an agent with nothing captured is not worth a button).
    pub fn agent_counts(&self) -> Result<Vec<views::sessions::AgentCount>> {
        let store = self.store();
        views::sessions::agents(store.conn()).map_err(|e| store.err(e))
    }

    /// One session in detail, by `session_key` or the agent's own session id.
    pub fn session(&self, key_or_id: &str) -> Result<views::session::SessionDetail> {
        let store = self.store();
        let id = views::session::resolve(store.conn(), key_or_id)
            .map_err(|e| store.err(e))?
            .ok_or_else(|| {
                Error::NotFound(format!(
                    "session {key_or_id:?}; list sessions with `cairn sessions`"
                ))
            })?;
        views::session::detail(store.conn(), id).map_err(|e| store.err(e))
    }

    /// What the parsers could not read of session `key_or_id`: the warnings its reads left,
    /// without the rest of [`Cairn::session`]'s detail.
    pub fn session_warnings(
        &self,
        key_or_id: &str,
    ) -> Result<Vec<crate::archive::capture::Warning>> {
        let store = self.store();
        let row = self.session_row(&store, key_or_id)?;
        crate::archive::store::session_warnings(store.conn(), row).map_err(|e| store.err(e))
    }

    /// What a person types to name session `key_or_id` again (see
    /// [`crate::archive::store::session_handle`]): its agent's id when that names it alone.
    pub fn session_handle(&self, key_or_id: &str) -> Result<String> {
        let store = self.store();
        let row = self.session_row(&store, key_or_id)?;
        crate::archive::store::session_handle(store.conn(), row).map_err(|e| store.err(e))
    }

    /// How a person knows session `key_or_id` without its key (see
    /// [`crate::archive::store::SessionName`]): its agent, start and title or first request.
    pub fn session_name(&self, key_or_id: &str) -> Result<archive::SessionName> {
        let store = self.store();
        let row = self.session_row(&store, key_or_id)?;
        archive::session_name(store.conn(), row).map_err(|e| store.err(e))
    }

    /// The command that continues session `key_or_id` in its agent, in its folder, and what
    /// stands in its way (`cairn resume`, the session page's "Resume" line).
    pub fn resume_command(&self, key_or_id: &str) -> Result<views::resume::ResumeCommand> {
        let detail = self.session(key_or_id)?;
        let mut command = views::resume::resume_command(&detail);
        if command.runnable() {
            let store = self.store();
            let files = crate::archive::store::main_source_paths(store.conn(), &detail.session_key)
                .map_err(|e| store.err(e))?;
            command.problem = views::resume::transcript_gone(&detail, &files);
        } else if detail.agent == crate::archive::Agent::Atif {
            let store = self.store();
            let row = self.session_row(&store, &detail.session_key)?;
            if let Some(by) = crate::archive::store::published_by_of(store.conn(), row)
                .map_err(|e| store.err(e))?
            {
                command.problem = Some(views::resume::pulled(&by));
            }
        }
        Ok(command)
    }

    pub(crate) fn session_row(&self, store: &Store, key_or_id: &str) -> Result<i64> {
        views::session::resolve(store.conn(), key_or_id)
            .map_err(|e| store.err(e))?
            .ok_or_else(|| {
                Error::NotFound(format!(
                    "session {key_or_id:?}; find sessions with `cairn sessions` or `cairn skim`"
                ))
            })
    }

    /// Every session related to a target, and every turn, abbreviated.
    /// With `repo_root`, only the sessions that ran in that folder's repository (a worktree
    /// removed since is found by the root it had; any other folder outside a repository finds
    /// none); without it, with `project`, only the sessions of no repository of that project.
    /// With `published_in`, sessions teammates published in that folder's repository are listed
    /// too (a folder outside any repository lists none).
    pub fn skim(&self, query: &views::skim::SkimQuery) -> Result<views::skim::SkimView> {
        let discover = |d: &str| git::repo::Repo::discover(Path::new(d)).ok();
        let own = query.repo_root.as_deref().map(|d| (d, discover(d)));
        let published = match (&query.published_in, &own) {
            (Some(p), Some((d, repo))) if p == d => repo.clone(),
            (Some(p), _) => discover(p),
            (None, _) => None,
        }
        .map(|r| r.common_dir.to_string_lossy().into_owned());
        let store = self.store();
        let err = |e| store.err(e);
        let repos = match &own {
            Some((_, Some(repo))) => Some(git::store::family_of(store.conn(), repo).map_err(err)?),
            Some((root, None)) => Some(git::store::repo_family(store.conn(), root).map_err(err)?),
            None => None,
        };
        let within = match (&repos, &query.project) {
            (Some(repos), _) => views::skim::Within::Repos {
                repos,
                unplaced: query.unplaced,
            },
            (None, Some(project)) => views::skim::Within::Unplaced {
                project: Some(project.as_str()).filter(|p| !p.is_empty()),
            },
            (None, None) => views::skim::Within::Anywhere,
        };
        let scope = views::skim::Scope {
            within,
            published: published.as_deref(),
        };
        views::skim::skim(store.conn(), query, &scope).map_err(err)
    }

    /// A session's last `limit` turns.
    pub fn show_session(
        &self,
        key_or_id: &str,
        limit: u32,
    ) -> Result<views::show::SessionTimeline> {
        let store = self.store();
        let row = self.session_row(&store, key_or_id)?;
        views::show::timeline(store.conn(), row, limit).map_err(|e| store.err(e))
    }

    /// The last `limit` records of one turn (by turn key or index).
    pub fn show_turn(
        &self,
        key_or_id: &str,
        turn: &str,
        limit: u32,
    ) -> Result<views::show::TurnRecords> {
        let store = self.store();
        let row = self.session_row(&store, key_or_id)?;
        let (turn_id, _, _) = views::show::resolve_turn(store.conn(), row, turn)
            .map_err(|e| store.err(e))?
            .ok_or_else(|| Error::NotFound(format!("turn {turn:?} in session {key_or_id:?}; list turns with `cairn show {key_or_id}`")))?;
        views::show::turn_records(store.conn(), row, turn_id, limit).map_err(|e| store.err(e))
    }

    /// Records of a session by ordinal range (anchors of evidence links).
    pub fn records(
        &self,
        key_or_id: &str,
        from: u32,
        to: u32,
    ) -> Result<Vec<views::show::RecordView>> {
        let store = self.store();
        let row = self.session_row(&store, key_or_id)?;
        views::show::records_range(store.conn(), row, from, to).map_err(|e| store.err(e))
    }

    /// The records a `cairn://session/<key>?record=N-M` link cites (`from` to `to`), in the
    /// turn holding `from`: a window of at least `limit` of its records around them, what the
    /// CLI's `show` and the MCP server's `show` tool both give for such a link.
    pub fn show_records(
        &self,
        key_or_id: &str,
        from: u32,
        to: u32,
        limit: u32,
    ) -> Result<views::show::CitedRecords> {
        let store = self.store();
        let row = self.session_row(&store, key_or_id)?;
        views::show::cited_records(store.conn(), row, (from, to), limit)
            .map_err(|e| store.err(e))?
            .ok_or_else(|| {
                Error::NotFound(format!(
                    "session {key_or_id:?} has no record {from}; list its turns with `cairn show {}`",
                    crate::text::printable(key_or_id)
                ))
            })
    }

    /// The index of the turn holding record `ordinal` of a session (for record anchors).
    pub fn turn_of_record(&self, key_or_id: &str, ordinal: u32) -> Result<Option<u32>> {
        let store = self.store();
        let row = self.session_row(&store, key_or_id)?;
        let turn = crate::archive::store::turn_of_record(store.conn(), row, ordinal)
            .map_err(|e| store.err(e))?;
        Ok(turn.map(views::sessions::count))
    }

    /// Repositories and branches with agent activity (of one agent's sessions, with `agent`).
    pub fn branches(&self, agent: Option<Agent>) -> Result<Vec<views::branches::RepoBranches>> {
        let store = self.store();
        views::branches::list(store.conn(), agent).map_err(|e| store.err(e))
    }

    /// Search the archive: full text over records (lexical), or by meaning over turns (vector,
    /// hybrid; needs the `sessions` vectors, see [`Cairn::embeddings_build`]). The hits alone;
    /// [`Cairn::search_answer`] says how they were found.
    pub fn search(&self, query: &SearchQuery) -> Result<Vec<SearchHit>> {
        self.search_answer(query).map(|a| a.hits)
    }

    /// [`Cairn::search`], with the mode that ran and how many turns wait for their vector.
    pub fn search_answer(&self, query: &SearchQuery) -> Result<views::search::SearchAnswer> {
        let query = &read_filters(query)?;
        something_to_find(query)?;
        let store = self.store();
        if query.mode.is_semantic() {
            let (mut hits, pending) = self.semantic_turns(&store, query)?;
            if let Some(expr) = views::search::fts_query(&query.text) {
                archive::fill_snippets(store.conn(), &expr, &mut hits)
                    .map_err(|e| search_error(&store, query, e))?;
            }
            Ok(views::search::SearchAnswer {
                hits,
                mode: query.mode,
                vectors_pending: pending,
            })
        } else {
            let hits = views::search::search(store.conn(), query)
                .map_err(|e| search_error(&store, query, e))?;
            Ok(views::search::SearchAnswer {
                hits,
                mode: Mode::Lexical,
                vectors_pending: 0,
            })
        }
    }

    /// The turns a vector or hybrid search ranks, their snippets left empty
    /// ([`views::search::fuse`]), and how many turns wait for their vector (left to the words).
    /// The query is embedded and scored against every vector on a thread of its own while the
    /// full-text leg runs on this one: on two cores that costs no wall time while the words
    /// take longer.
    fn semantic_turns(&self, store: &Store, query: &SearchQuery) -> Result<(Vec<SearchHit>, u32)> {
        let (matrix, pending) = self.usable_matrix(store, VectorStore::Sessions)?;
        let pending = u32::try_from(pending).unwrap_or(u32::MAX);
        let (lexical, scores) = std::thread::scope(|s| {
            let embedding = std::thread::Builder::new()
                .name("cairn-query-embed".into())
                .spawn_scoped(s, || {
                    let vector = self.semantic.embed_query(&query.text)?;
                    Ok::<_, Error>(matrix.scores(&vector))
                });
            let lexical = views::search::lexical_leg(store.conn(), query);
            let scores = match embedding {
                Ok(handle) => handle.join().unwrap_or_else(|_| {
                    Err(Error::External(
                        "the query's embedding failed (the model panicked); try --mode lexical"
                            .into(),
                    ))
                }),
                // The work went with the thread that could not start.
                Err(e) => Err(Error::External(format!(
                    "could not start a thread to embed the query ({e}); try --mode lexical"
                ))),
            };
            (lexical, scores)
        });
        let lexical = lexical.map_err(|e| search_error(store, query, e))?;
        let scores = scores?;
        let floor = self.semantic.embedder()?.similarity_floor();
        let hits = views::search::fuse(store.conn(), query, &matrix, &scores, lexical, floor)
            .map_err(|e| search_error(store, query, e))?;
        Ok((hits, pending))
    }

    /// Rank sessions for a query: by their best turns, the paths they edited and the targets
    /// they are linked to (see [`views::search::sessions`]).
    pub fn search_sessions(&self, query: &SearchQuery) -> Result<views::search::SessionSearch> {
        let query = &read_filters(query)?;
        something_to_find(query)?;
        let store = self.store();
        let (semantic, pending) = if query.mode.is_semantic() {
            let mut turns = query.clone();
            turns.limit = Some(500);
            let (hits, pending) = self.semantic_turns(&store, &turns)?;
            (Some(hits), pending)
        } else {
            (None, 0)
        };
        let sessions = views::search::sessions(store.conn(), query, semantic)
            .map_err(|e| search_error(&store, query, e))?;
        Ok(views::search::SessionSearch {
            sessions,
            vectors_pending: pending,
        })
    }

    /// Why is this here, from a description alone: the whole target is searched as words (no
    /// repository is consulted, so a commit id or a path is only text here). The desktop's
    /// Search asks this when no repository is chosen.
    pub fn why_described(&self, query: &views::why::WhyQuery) -> Result<views::why::WhyAnswer> {
        self.why_described_in(query, None)
    }

    /// [`Cairn::why_described`] among the sessions of `project` only, when given (a
    /// description asked in a repository is about that repository's work).
    fn why_described_in(
        &self,
        query: &views::why::WhyQuery,
        project: Option<String>,
    ) -> Result<views::why::WhyAnswer> {
        use views::why::{WhyAnswer, WhyKind};
        let text = query.target.trim();
        if text.is_empty() {
            return Err(Error::Invalid(
                "nothing to explain: give a commit, <path>[:<line>[-<line>]] or a description"
                    .into(),
            ));
        }
        let limit = query.limit.unwrap_or(10).clamp(1, 200);
        let found = self.search_sessions(&SearchQuery {
            text: text.to_owned(),
            limit: Some(limit),
            mode: query.mode,
            project,
            ..SearchQuery::default()
        })?;
        Ok(WhyAnswer {
            kind: WhyKind::Description,
            query: crate::text::printable(text),
            path: None,
            lines: None,
            commits: Vec::new(),
            sessions: views::why::from_search(text, found.sessions),
            uncommitted_lines: Vec::new(),
            vectors_pending: found.vectors_pending,
        })
    }

    /// Why is this here, traced at a place named from outside: git runs only in a repository
    /// the archive already knows (a listed root, or the folder an archived session ran in, read
    /// from the archive), so a deep link cannot point it at an arbitrary folder.
    pub fn why_at(
        &self,
        place: &views::why::WhyPlace,
        query: &views::why::WhyQuery,
    ) -> Result<views::why::WhyAnswer> {
        use views::why::WhyPlace;
        let dir = match place {
            WhyPlace::Nowhere => return self.why_described(query),
            WhyPlace::Repo { root } => {
                self.known_repo(root)?;
                root.clone()
            }
            WhyPlace::Session { session_key } => {
                self.session(session_key)?.cwd.ok_or_else(|| {
                    Error::NotFound(
                        "the session recorded no folder, so its files cannot be traced".into(),
                    )
                })?
            }
        };
        self.why(Path::new(&dir), query)
    }

    /// Refuse `root` (a repository named by the desktop's webview) unless it is one the
    /// archive knows: a root [`Cairn::branches`] lists. So git runs only where agents worked.
    pub fn known_repo(&self, root: &str) -> Result<()> {
        let known = self
            .branches(None)?
            .into_iter()
            .any(|r| r.root.as_deref() == Some(root));
        if !known {
            return Err(Error::NotFound(format!(
                "no repository with agent sessions at {}; pick one from Branches",
                crate::text::printable(root)
            )));
        }
        Ok(())
    }

    /// Why is this here: the sessions and turns behind a commit, lines of a file, or a
    /// description, ranked, with their evidence. `dir` is the repository (and the directory
    /// paths are relative to); a description needs none.
    pub fn why(&self, dir: &Path, query: &views::why::WhyQuery) -> Result<views::why::WhyAnswer> {
        use views::why::{Target, Why, WhyAnswer, WhyKind};
        let repo = git::repo::Repo::discover(dir).ok();
        let base = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_owned());
        let target = views::why::classify(&query.target, repo.as_ref(), &base)?;
        let limit = query.limit.unwrap_or(10).clamp(1, 200) as usize;
        let printable = crate::text::printable(query.target.trim());
        if let Target::Description(_) = target {
            // Before the store is taken: the search takes it. In a repository, among its
            // project's sessions.
            let project = repo
                .as_ref()
                .map(|r| crate::archive::project::of_root(&r.root));
            return self.why_described_in(query, project);
        }
        let store = self.store();
        let db = |e| store.err(e);
        match (target, repo.as_ref()) {
            (Target::Commit(id), Some(repo)) => {
                let mut why = Why::new(store.conn(), repo).map_err(db)?;
                why.commit(&id)?;
                let (commits, sessions) = why.finish(limit)?;
                Ok(WhyAnswer {
                    kind: WhyKind::Commit,
                    query: printable,
                    path: None,
                    lines: None,
                    commits,
                    sessions,
                    uncommitted_lines: Vec::new(),
                    vectors_pending: 0,
                })
            }
            (Target::Lines { path, range }, Some(repo)) => {
                let mut why = Why::new(store.conn(), repo).map_err(db)?;
                let uncommitted = why.lines(&path, range)?;
                let (commits, sessions) = why.finish(limit)?;
                Ok(WhyAnswer {
                    kind: WhyKind::Lines,
                    query: printable,
                    lines: range.map(|(start, end)| views::why::LineRange { start, end }),
                    path: Some(path),
                    commits,
                    sessions,
                    uncommitted_lines: uncommitted,
                    vectors_pending: 0,
                })
            }
            // A description was answered above.
            (Target::Description(_), _) | (_, None) => Err(Error::Invalid(format!(
                "{} is not in a git repository; use -C to choose one",
                dir.display()
            ))),
        }
    }
}

/// `query` with its `since` and `until` as stored times compare with them
/// ([`crate::text::time_bound`]; blank is none), or an error naming the one that is no date:
/// compared as written, `yesterday` or `2026-13-45` would find nothing and say nothing. A day
/// given as `until` counts whole (`--since 2026-03-01 --until 2026-03-01` is that day); a
/// `since` after the `until` is refused, since nothing could match. Its branch as sessions
/// record it ([`branch_filter`]).
fn read_filters(query: &SearchQuery) -> Result<SearchQuery> {
    let (since, until) = time_window(&query.since, &query.until)?;
    Ok(SearchQuery {
        since,
        until,
        branch: query.branch.as_deref().map(branch_filter),
        ..query.clone()
    })
}

/// A `since`/`until` pair as stored times compare with it (a search's, a session list's): each
/// read by [`crate::text::time_bound`], a day's `until` made the next day's start (compared
/// with `<`); an empty window refused.
fn time_window(
    since: &Option<String>,
    until: &Option<String>,
) -> Result<(Option<String>, Option<String>)> {
    let bound = |name: &str, value: &Option<String>| match value.as_deref().map(str::trim) {
        None | Some("") => Ok(None),
        Some(v) => crate::text::time_bound(v).map(Some).ok_or_else(|| {
            Error::Invalid(format!(
                "{name} {:?} is not a date; write YYYY-MM-DD or an RFC 3339 time",
                crate::text::one_line(v, 40)
            ))
        }),
    };
    let typed = (since, until);
    let since = bound("since", typed.0)?;
    // Compared with `<`: a day's bound is the next day.
    let until = bound("until", typed.1)?.map(|u| crate::text::day_after(&u).unwrap_or(u));
    if let (Some(s), Some(u)) = (&since, &until)
        && s >= u
    {
        return Err(Error::Invalid(format!(
            "since {} is not before until {}: nothing could match; swap them",
            crate::text::one_line(typed.0.as_deref().unwrap_or_default(), 40),
            crate::text::one_line(typed.1.as_deref().unwrap_or_default(), 40)
        )));
    }
    Ok((since, until))
}

/// A branch filter as sessions record it: its name, however it was written (`main`,
/// `refs/heads/main`, `ref:refs/heads/main`, `branch:main`, as `link --to` takes it).
fn branch_filter(written: &str) -> String {
    let written = written.trim();
    git::targets::Target::branch(written)
        .branch_name()
        .unwrap_or(written)
        .to_owned()
}

/// A blank query finds nothing by definition: said as such, not answered "no matches" (the
/// MCP tool and `why` already refused one). So does a search by words of only what the index
/// reads no word in (`-`, `→`, an emoji); a search by meaning takes any text.
fn something_to_find(query: &SearchQuery) -> Result<()> {
    if query.text.trim().is_empty() {
        return Err(Error::Invalid(
            "nothing to search for: give words to find (`cairn search \"login retry\"`)".into(),
        ));
    }
    if !query.mode.is_semantic() && views::search::fts_query(&query.text).is_none() {
        return Err(Error::Invalid(format!(
            "nothing to search for: “{}” holds no letter or digit, and the index keeps only words; give words to find, or search by meaning (--mode hybrid)",
            crate::text::one_line(&query.text, 100)
        )));
    }
    Ok(())
}

/// A search's database error for a person: FTS5's complaint about the query (a raw expression,
/// which a leading `"` makes) as an invalid query, saying how to search for plain words instead.
fn search_error(store: &Store, query: &SearchQuery, e: rusqlite::Error) -> Error {
    let raw = query.text.trim_start().starts_with('"');
    // Quoted as typed (not escaped): the words are the person's own.
    let typed = crate::text::one_line(&query.text, 100);
    match e {
        rusqlite::Error::SqliteFailure(_, Some(msg)) if raw || msg.contains("fts5") => {
            Error::Invalid(if raw {
                format!(
                    "cannot search for “{typed}”: {msg}; drop the leading quote to search for plain words"
                )
            } else {
                format!("cannot search for “{typed}”: {msg}")
            })
        }
        other => store.err(other),
    }
}

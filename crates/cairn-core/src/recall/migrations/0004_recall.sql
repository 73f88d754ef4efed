-- Migration 4: Recall. Entries distilled from sessions, their evidence (record ranges of the
-- source session with stable record ids and a content digest), the analysed full-text index the
-- ranker shares with candidate generation, corpus statistics for BM25F, and the measurement
-- ledger of queries.
CREATE TABLE recall_entries (
    id                      TEXT PRIMARY KEY,
    type                    TEXT NOT NULL CHECK (type IN ('fact', 'decision', 'procedure', 'debugging_method',
                                'warning', 'preference', 'open_question')),
    scope                   TEXT NOT NULL CHECK (scope IN ('global', 'project', 'repository', 'branch', 'file',
                                'tool', 'agent')),
    status                  TEXT NOT NULL DEFAULT 'accepted' CHECK (status IN ('accepted', 'archived')),
    review_state            TEXT NOT NULL DEFAULT 'unreviewed_auto' CHECK (review_state IN ('human_reviewed',
                                'unreviewed_auto', 'calibrated_auto', 'eval_raw')),
    title                   TEXT NOT NULL CHECK (length(trim(title)) > 0),
    body                    TEXT NOT NULL,
    trigger                 TEXT NOT NULL DEFAULT '',
    confidence              REAL CHECK (confidence IS NULL OR (confidence >= 0 AND confidence <= 1)),
    uncertainty             TEXT NOT NULL DEFAULT '',
    project                 TEXT NOT NULL DEFAULT '',
    cwd                     TEXT NOT NULL DEFAULT '',
    git_branch              TEXT NOT NULL DEFAULT '',
    agent                   TEXT NOT NULL DEFAULT '',
    source_session_id       INTEGER REFERENCES sessions(id) ON DELETE SET NULL,
    source_episode_id       TEXT NOT NULL DEFAULT '',
    source_run_id           TEXT NOT NULL DEFAULT '',
    extractor_method        TEXT NOT NULL DEFAULT '',
    model                   TEXT NOT NULL DEFAULT '',
    label                   TEXT NOT NULL DEFAULT '',
    transferable            INTEGER NOT NULL DEFAULT 0 CHECK (transferable IN (0, 1)),
    provenance_ok           INTEGER NOT NULL DEFAULT 0 CHECK (provenance_ok IN (0, 1)),
    provenance_note         TEXT,
    stale                   INTEGER NOT NULL DEFAULT 0 CHECK (stale IN (0, 1)),
    stale_note              TEXT,
    supersedes_entry_id     TEXT NOT NULL DEFAULT '',
    superseded_by_entry_id  TEXT NOT NULL DEFAULT '',
    created_at              TEXT NOT NULL,
    updated_at              TEXT NOT NULL,
    reviewed_at             TEXT,
    CHECK (review_state != 'human_reviewed' OR reviewed_at IS NOT NULL)
);
CREATE INDEX recall_entries_context ON recall_entries(project, cwd, git_branch, agent);
CREATE INDEX recall_entries_kind ON recall_entries(type, scope, status);
CREATE INDEX recall_entries_session ON recall_entries(source_session_id);
CREATE INDEX recall_entries_updated ON recall_entries(updated_at DESC, id);
CREATE INDEX recall_entries_review ON recall_entries(review_state, status);

CREATE TABLE recall_evidence (
    id                      INTEGER PRIMARY KEY,
    entry_id                TEXT NOT NULL REFERENCES recall_entries(id) ON DELETE CASCADE,
    session_id              INTEGER NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    ordinal_start           INTEGER NOT NULL CHECK (ordinal_start >= 0),
    ordinal_end             INTEGER NOT NULL,
    start_record            TEXT NOT NULL,
    end_record              TEXT NOT NULL,
    content_digest          TEXT NOT NULL,
    tool_use_id             TEXT,
    snippet                 TEXT NOT NULL DEFAULT '',
    files                   TEXT NOT NULL DEFAULT '[]',
    recorded_at             TEXT,
    CHECK (ordinal_end >= ordinal_start)
);
CREATE INDEX recall_evidence_entry ON recall_evidence(entry_id);
CREATE INDEX recall_evidence_session ON recall_evidence(session_id);

-- Recall's full-text index, over *analysed* text (recall::analyze), so candidate generation
-- and scoring use the same terms. `recall_terms` keeps each entry's analysed fields (space-
-- separated terms, for exact BM25F and phrase checks); `recall_postings` is the inverted index,
-- ordered by impact (the term's BM25F saturation in that entry) so a query reads only the best
-- entries of each term; `recall_df` counts entries per term; `recall_stats` keeps the corpus
-- size and total terms per field for average field lengths.
CREATE TABLE recall_terms (
    entry_rowid             INTEGER PRIMARY KEY,
    title                   TEXT NOT NULL,
    body                    TEXT NOT NULL,
    trigger                 TEXT NOT NULL,
    evidence                TEXT NOT NULL
);
CREATE TABLE recall_postings (
    term                    TEXT NOT NULL,
    impact                  REAL NOT NULL,
    entry_rowid             INTEGER NOT NULL,
    PRIMARY KEY (term, impact, entry_rowid)
) WITHOUT ROWID;
CREATE TABLE recall_df (
    term                    TEXT PRIMARY KEY,
    df                      INTEGER NOT NULL
) WITHOUT ROWID;
CREATE TABLE recall_stats (
    singleton               INTEGER PRIMARY KEY CHECK (singleton = 1),
    docs                    INTEGER NOT NULL,
    title_terms             INTEGER NOT NULL,
    body_terms              INTEGER NOT NULL,
    trigger_terms           INTEGER NOT NULL,
    evidence_terms          INTEGER NOT NULL
);
INSERT INTO recall_stats VALUES (1, 0, 0, 0, 0, 0);

-- The measurement ledger: every query, what it showed, and what was packed into a brief.
CREATE TABLE recall_query_events (
    id                      TEXT PRIMARY KEY,
    query_text              TEXT NOT NULL,
    surface                 TEXT NOT NULL CHECK (surface IN ('query', 'brief', 'ui')),
    filters_json            TEXT NOT NULL DEFAULT '{}',
    mode                    TEXT NOT NULL DEFAULT 'lexical',
    trusted_only            INTEGER NOT NULL CHECK (trusted_only IN (0, 1)),
    score_policy_version    TEXT NOT NULL,
    result_count            INTEGER NOT NULL CHECK (result_count >= 0),
    packed_count            INTEGER NOT NULL DEFAULT 0 CHECK (packed_count >= 0),
    top_score               REAL,
    miss_reason             TEXT NOT NULL DEFAULT '',
    session_key             TEXT,
    created_at              TEXT NOT NULL
);
CREATE INDEX recall_query_events_time ON recall_query_events(created_at DESC, id);
CREATE TABLE recall_query_exposures (
    query_id                TEXT NOT NULL REFERENCES recall_query_events(id) ON DELETE CASCADE,
    rank                    INTEGER NOT NULL CHECK (rank >= 1),
    entry_id                TEXT NOT NULL,
    score                   REAL NOT NULL,
    packed                  INTEGER NOT NULL CHECK (packed IN (0, 1)),
    PRIMARY KEY (query_id, rank)
) WITHOUT ROWID;
CREATE INDEX recall_query_exposures_entry ON recall_query_exposures(entry_id);

-- Migration 5: Recall extraction. Generations (one per fingerprint of model, segmenter,
-- prompts and request shape; at most one active, enforced by a partial unique index), progress
-- per (session, generation) with the digests of the units already read, the entries each
-- generation wrote (staged until their session is finished and the generation active), and a
-- log of passes.
CREATE TABLE recall_extract_generations (
    fingerprint             TEXT PRIMARY KEY,
    state                   TEXT NOT NULL DEFAULT 'building' CHECK (state IN ('building', 'active', 'retired')),
    model                   TEXT NOT NULL,
    deployment              TEXT NOT NULL DEFAULT '',
    segmenter               TEXT NOT NULL,
    params_json             TEXT NOT NULL,
    -- The fingerprinted document: prompt and schema hashes, request shape.
    identity_json           TEXT NOT NULL,
    created_at              TEXT NOT NULL,
    updated_at              TEXT NOT NULL,
    activated_at            TEXT,
    retired_at              TEXT
);
CREATE UNIQUE INDEX recall_extract_one_active ON recall_extract_generations(state) WHERE state = 'active';

CREATE TABLE recall_extract_progress (
    session_id              INTEGER NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    fingerprint             TEXT NOT NULL REFERENCES recall_extract_generations(fingerprint) ON DELETE CASCADE,
    state                   TEXT NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'partial', 'done', 'failed')),
    unit_cursor             INTEGER NOT NULL DEFAULT 0,
    units_total             INTEGER NOT NULL DEFAULT 0,
    -- JSON array of the units' digests, in order: a grown transcript re-reads only changed units.
    unit_digests            TEXT NOT NULL DEFAULT '[]',
    content_digest          TEXT NOT NULL DEFAULT '',
    -- sessions.next_ordinal when the units were derived (records are append-only).
    covered_ordinal         INTEGER NOT NULL DEFAULT 0,
    last_error              TEXT,
    failures                INTEGER NOT NULL DEFAULT 0,
    updated_at              TEXT NOT NULL,
    PRIMARY KEY (session_id, fingerprint),
    CHECK (unit_cursor >= 0 AND unit_cursor <= units_total)
) WITHOUT ROWID;
CREATE INDEX recall_extract_progress_state ON recall_extract_progress(fingerprint, state, updated_at);

CREATE TABLE recall_extract_entries (
    entry_id                TEXT PRIMARY KEY REFERENCES recall_entries(id) ON DELETE CASCADE,
    fingerprint             TEXT NOT NULL REFERENCES recall_extract_generations(fingerprint) ON DELETE CASCADE,
    session_id              INTEGER NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    unit_index              INTEGER NOT NULL,
    -- staged: written, not served yet; published: served (accepted); retired: archived with its
    -- generation; withdrawn: a reviewer rejected it before it was published.
    state                   TEXT NOT NULL DEFAULT 'staged' CHECK (state IN ('staged', 'published', 'retired', 'withdrawn'))
) WITHOUT ROWID;
CREATE INDEX recall_extract_entries_session ON recall_extract_entries(fingerprint, session_id, unit_index);

CREATE TABLE recall_extract_runs (
    id                      INTEGER PRIMARY KEY,
    fingerprint             TEXT NOT NULL,
    started_at              TEXT NOT NULL,
    finished_at             TEXT,
    sessions                INTEGER NOT NULL DEFAULT 0,
    failed                  INTEGER NOT NULL DEFAULT 0,
    units                   INTEGER NOT NULL DEFAULT 0,
    entries                 INTEGER NOT NULL DEFAULT 0,
    activated               INTEGER NOT NULL DEFAULT 0 CHECK (activated IN (0, 1)),
    -- Why the pass stopped early (endpoint-scoped failure, cancellation), if it did.
    aborted                 TEXT
);
CREATE INDEX recall_extract_runs_time ON recall_extract_runs(started_at DESC);

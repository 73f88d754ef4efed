-- Migration 1: the session archive.
-- Sessions are keyed by agentlog's session_key; a sub-agent session points at its parent by key
-- (the parent may be captured later, so no foreign key).
CREATE TABLE sessions (
    id              INTEGER PRIMARY KEY,
    session_key     TEXT NOT NULL UNIQUE,
    agent           TEXT NOT NULL CHECK (agent IN ('claude', 'codex')),
    session_id      TEXT,
    parent_key      TEXT,
    relation        TEXT CHECK (relation IN ('subagent', 'compaction', 'fork')),
    agent_id        TEXT,
    title           TEXT,
    project         TEXT,
    cwd             TEXT,
    git_branch      TEXT,
    git_commit      TEXT,
    repository_url  TEXT,
    model           TEXT,
    provider        TEXT,
    tool_version    TEXT,
    thread_source   TEXT,
    started_at      TEXT,
    updated_at      TEXT,
    record_count    INTEGER NOT NULL DEFAULT 0,
    turn_count      INTEGER NOT NULL DEFAULT 0,
    next_ordinal    INTEGER NOT NULL DEFAULT 0,
    warning_count   INTEGER NOT NULL DEFAULT 0,
    secret_count    INTEGER NOT NULL DEFAULT 0,
    unknown_types   TEXT NOT NULL DEFAULT '{}',
    -- Codex reports a running total; Claude's is the sum over token_usage rows.
    cumulative_usage TEXT,
    captured_at     TEXT NOT NULL
);
CREATE INDEX sessions_updated ON sessions(updated_at DESC);
CREATE INDEX sessions_parent ON sessions(parent_key);
CREATE INDEX sessions_branch ON sessions(git_branch);

-- One row per transcript file. The offset/hash columns make capture incremental and detect a
-- file that was truncated or rewritten; parser_state lets any process resume mid-file.
CREATE TABLE sources (
    id              INTEGER PRIMARY KEY,
    source_key      TEXT NOT NULL UNIQUE,
    session_id      INTEGER NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    agent           TEXT NOT NULL,
    role            TEXT NOT NULL CHECK (role IN ('main', 'subagent')),
    path            TEXT NOT NULL UNIQUE,
    size            INTEGER NOT NULL DEFAULT 0,
    mtime_ns        INTEGER NOT NULL DEFAULT 0,
    byte_offset     INTEGER NOT NULL DEFAULT 0,
    line_count      INTEGER NOT NULL DEFAULT 0,
    first_line_hash TEXT,
    last_line_start INTEGER,
    last_line_hash  TEXT,
    parser_state    TEXT,
    generation      INTEGER NOT NULL DEFAULT 0,
    retained_len    INTEGER NOT NULL DEFAULT 0,
    missing_since   TEXT,
    updated_at      TEXT NOT NULL
);
CREATE INDEX sources_session ON sources(session_id);

-- Conversation turns: a human prompt and everything until the next one.
CREATE TABLE turns (
    id              INTEGER PRIMARY KEY,
    session_id      INTEGER NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    turn_index      INTEGER NOT NULL,
    turn_key        TEXT NOT NULL UNIQUE,
    opening_ordinal INTEGER NOT NULL,
    first_ordinal   INTEGER NOT NULL,
    last_ordinal    INTEGER NOT NULL,
    record_count    INTEGER NOT NULL DEFAULT 0,
    tool_call_count INTEGER NOT NULL DEFAULT 0,
    edit_count      INTEGER NOT NULL DEFAULT 0,
    exec_count      INTEGER NOT NULL DEFAULT 0,
    failure_count   INTEGER NOT NULL DEFAULT 0,
    started_at      TEXT,
    ended_at        TEXT,
    preview         TEXT,
    UNIQUE (session_id, turn_index)
);

-- Records: the redacted content of transcript lines. `ordinal` is the per-session anchor that
-- evidence links point at; (record_hash, block) identifies a record across re-reads.
CREATE TABLE records (
    id              INTEGER PRIMARY KEY,
    session_id      INTEGER NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    ordinal         INTEGER NOT NULL,
    turn_id         INTEGER REFERENCES turns(id) ON DELETE SET NULL,
    source_id       INTEGER NOT NULL REFERENCES sources(id) ON DELETE CASCADE,
    line_no         INTEGER NOT NULL,
    block           INTEGER NOT NULL,
    record_hash     TEXT NOT NULL,
    timestamp       TEXT,
    kind            TEXT NOT NULL CHECK (kind IN ('message', 'tool_call', 'tool_result', 'reasoning', 'event')),
    role            TEXT,
    source_event_kind TEXT NOT NULL,
    text            TEXT,
    tool_name       TEXT,
    tool_kind       TEXT CHECK (tool_kind IN ('exec', 'file_edit', 'sub_agent', 'housekeeping', 'web_search', 'other')),
    tool_input      TEXT,
    call_id         TEXT,
    exit_code       INTEGER,
    outcome         TEXT CHECK (outcome IN ('succeeded', 'failed', 'could_not_execute')),
    prompt_source   TEXT CHECK (prompt_source IN ('human', 'spawned_agent', 'system_injected')),
    file_paths      TEXT,
    is_sidechain    INTEGER NOT NULL DEFAULT 0,
    is_compaction   INTEGER NOT NULL DEFAULT 0,
    message_id      TEXT,
    cwd             TEXT,
    git_branch      TEXT,
    UNIQUE (session_id, ordinal),
    UNIQUE (session_id, record_hash, block)
);
CREATE INDEX records_turn ON records(turn_id);
CREATE INDEX records_call ON records(session_id, call_id);

-- Full-text index over record text and tool input, kept in step by the capture writer.
CREATE VIRTUAL TABLE records_fts USING fts5(
    text, tool_input,
    content = 'records', content_rowid = 'id',
    tokenize = 'unicode61 remove_diacritics 2'
);
-- Flush the in-memory index every 16 MiB instead of every 1 MiB: fewer, larger segments to
-- merge during a bulk sync.
INSERT INTO records_fts (records_fts, rank) VALUES ('hashsize', 16777216);

-- Token usage, once per provider message id (a later line for the same id replaces it).
CREATE TABLE token_usage (
    session_id      INTEGER NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    message_id      TEXT NOT NULL,
    input           INTEGER NOT NULL,
    output          INTEGER NOT NULL,
    cache_creation  INTEGER NOT NULL,
    cache_read      INTEGER NOT NULL,
    reasoning       INTEGER NOT NULL,
    PRIMARY KEY (session_id, message_id)
) WITHOUT ROWID;

-- Each committed capture batch: what triggered it and which records it added.
CREATE TABLE captures (
    id              INTEGER PRIMARY KEY,
    session_id      INTEGER NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    source_id       INTEGER NOT NULL REFERENCES sources(id) ON DELETE CASCADE,
    capture_kind    TEXT NOT NULL CHECK (capture_kind IN ('backfill', 'incremental')),
    trigger         TEXT NOT NULL CHECK (trigger IN ('hook', 'sync')),
    captured_at     TEXT NOT NULL,
    first_ordinal   INTEGER,
    last_ordinal    INTEGER,
    records_added   INTEGER NOT NULL
);
CREATE INDEX captures_session ON captures(session_id);

-- Problems met while reading a file. Unique so a re-read does not repeat them.
CREATE TABLE warnings (
    id              INTEGER PRIMARY KEY,
    session_id      INTEGER REFERENCES sessions(id) ON DELETE CASCADE,
    path            TEXT NOT NULL,
    line            INTEGER,
    message         TEXT NOT NULL,
    created_at      TEXT NOT NULL,
    UNIQUE (path, line, message)
);
CREATE INDEX warnings_session ON warnings(session_id);

-- Secrets found at ingest: where and which rule, never the secret.
CREATE TABLE secret_findings (
    id              INTEGER PRIMARY KEY,
    session_id      INTEGER NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    source_id       INTEGER NOT NULL REFERENCES sources(id) ON DELETE CASCADE,
    line_no         INTEGER NOT NULL,
    field           TEXT NOT NULL,
    rule            TEXT NOT NULL,
    confidence      TEXT NOT NULL CHECK (confidence IN ('definite', 'candidate')),
    start_byte      INTEGER NOT NULL,
    end_byte        INTEGER NOT NULL,
    generation      INTEGER NOT NULL DEFAULT 0,
    UNIQUE (source_id, generation, line_no, field, start_byte)
);
CREATE INDEX secret_findings_session ON secret_findings(session_id);

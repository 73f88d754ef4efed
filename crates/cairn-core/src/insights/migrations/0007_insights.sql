-- Generated insights: Markdown reports over a slice of sessions, with what made them.

CREATE TABLE insights (
    id              INTEGER PRIMARY KEY,
    title           TEXT NOT NULL,
    template_id     TEXT NOT NULL,
    template_version TEXT NOT NULL,
    -- The slice as JSON (since, until, project, agent, branch, automation).
    slice           TEXT NOT NULL,
    focus           TEXT,
    -- `endpoint`, or the local agent CLI that wrote it (`claude`, `codex`, `gemini`, `copilot`).
    generator       TEXT NOT NULL,
    model           TEXT,
    -- SHA-256 of the endpoint URL (endpoint generator only): identity without the address.
    endpoint_hash   TEXT,
    cache_key       TEXT NOT NULL,
    material_hash   TEXT NOT NULL,
    sessions_total  INTEGER NOT NULL,
    sessions_included INTEGER NOT NULL,
    prompt_chars    INTEGER NOT NULL,
    content         TEXT NOT NULL,
    starred         INTEGER NOT NULL DEFAULT 0 CHECK (starred IN (0, 1)),
    created_at      TEXT NOT NULL,
    elapsed_ms      INTEGER NOT NULL
);
CREATE INDEX insights_created ON insights(created_at DESC);
CREATE INDEX insights_cache ON insights(cache_key);

-- The sessions a report read (its links may open only these).
CREATE TABLE insight_sessions (
    insight_id      INTEGER NOT NULL REFERENCES insights(id) ON DELETE CASCADE,
    session_key     TEXT NOT NULL,
    PRIMARY KEY (insight_id, session_key)
) WITHOUT ROWID;

-- Migration 15: what agents tell Recall through `cairn mcp`. A proposal is an ordinary
-- unreviewed entry plus where it came from (the agent, its session and turn, the MCP server
-- session and client that sent it) and a dedupe key, so the same proposal twice is one entry.
-- Feedback is an agent's verdict on an entry it used, for the measurement ledger; queries that
-- came through MCP are marked by `via` on the ledger's events.
CREATE TABLE recall_proposals (
    entry_id                TEXT PRIMARY KEY REFERENCES recall_entries(id) ON DELETE CASCADE,
    agent                   TEXT NOT NULL DEFAULT '',
    session_key             TEXT,
    turn                    TEXT,
    server_session          TEXT NOT NULL,
    client                  TEXT NOT NULL DEFAULT '',
    dedupe_key              TEXT NOT NULL UNIQUE,
    created_at              TEXT NOT NULL
);

CREATE TABLE recall_feedback (
    id                      INTEGER PRIMARY KEY,
    entry_id                TEXT NOT NULL REFERENCES recall_entries(id) ON DELETE CASCADE,
    verdict                 TEXT NOT NULL CHECK (verdict IN ('helpful', 'wrong')),
    note                    TEXT NOT NULL DEFAULT '',
    query_id                TEXT,
    agent                   TEXT NOT NULL DEFAULT '',
    session_key             TEXT,
    server_session          TEXT NOT NULL,
    created_at              TEXT NOT NULL
);
CREATE INDEX recall_feedback_entry ON recall_feedback(entry_id, created_at);

ALTER TABLE recall_query_events ADD COLUMN via TEXT NOT NULL DEFAULT '';

-- Migration 3: sharing through git. A session this machine published is marked; sessions
-- teammates published arrive as documents read from refs/cairn/sessions/* and show in skim.
ALTER TABLE sessions ADD COLUMN published_at TEXT;

CREATE TABLE published_sessions (
    session_key     TEXT PRIMARY KEY,
    repo_id         INTEGER REFERENCES repos(id) ON DELETE CASCADE,
    -- The document as published (already redacted for leaving the publisher's machine).
    document        TEXT NOT NULL,
    -- Target keys the publisher's links named: what skim matches on.
    target_keys     TEXT NOT NULL,
    ref_commit      TEXT NOT NULL,
    imported_at     TEXT NOT NULL
);

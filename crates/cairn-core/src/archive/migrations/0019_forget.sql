-- Migration 21: forgetting. A tombstone per forgotten transcript file, by its source key only
-- (a hash of the agent and the path: no path, no text), so the next sync does not import the
-- file again unless the person allowed it; the key also names the retained copies a forget
-- killed after its commit still has to remove.
CREATE TABLE forgotten_sources (
    source_key      TEXT PRIMARY KEY,
    agent           TEXT NOT NULL,
    allow_reimport  INTEGER NOT NULL DEFAULT 0 CHECK (allow_reimport IN (0, 1)),
    forgotten_at    TEXT NOT NULL
);

-- Migration 44: a forget tombstones the session, not only its files. A forgotten transcript
-- moved elsewhere (Codex archives a chat into archived_sessions/, ~/.claude becomes a link to
-- a dotfiles folder) has another path, so its file's tombstone (forgotten_sources, keyed by
-- path) missed it and the next sync imported the session again. The key only (a hash: no
-- text); a forget with --allow-reimport leaves no row.
CREATE TABLE forgotten_sessions (
    session_key     TEXT PRIMARY KEY,
    agent           TEXT NOT NULL,
    forgotten_at    TEXT NOT NULL
);

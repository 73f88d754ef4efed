-- Migration 42: what a forget leaves of the sessions shared through git. The key of a session
-- this machine published (`own`: `cairn push` deletes its refs here and at the remote), or pulled
-- from a teammate, and then forgot: `cairn pull` never imports either again (a forget with
-- --allow-reimport leaves no row). The key only (a hash: no text), as forgotten_sources keeps.
CREATE TABLE forgotten_shared (
    session_key     TEXT PRIMARY KEY,
    own             INTEGER NOT NULL CHECK (own IN (0, 1)),
    forgotten_at    TEXT NOT NULL
);

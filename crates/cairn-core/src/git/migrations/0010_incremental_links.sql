-- Migration: relinking after a capture reads only what the capture added.
--
-- Association (git/associate.rs) used to rebuild all of a session's links on every capture: it
-- re-read every evidence record and compared every pair of consecutive environment snapshots,
-- so a hook's cost grew with the length of the session. Links now carry their origin:
--   'record'   from the transcript (commits, pushes, PRs, checkouts, recorded branches), stored
--              once when the record is first associated;
--   'snapshot' from a capture's environment snapshot compared with the previous capture's,
--              stored once when that capture is first associated;
--   NULL       from the session's edits against git history (`edit_committed`, and the change
--              ids of those commits), which moves on without the transcript: recomputed on every
--              relink. Links from before this migration are NULL too; a session without an
--              `association_state` row is rebuilt from scratch, so they are replaced.
ALTER TABLE links ADD COLUMN origin TEXT CHECK (origin = 'record' OR origin = 'snapshot');

-- Files a session edited, as the agent wrote them (made repo-relative at relink time): the first
-- record that edited each (path, cwd). What `edit_committed` needs, without re-reading records.
CREATE TABLE session_edits (
    session_id      INTEGER NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    path            TEXT NOT NULL,
    cwd             TEXT,
    ordinal         INTEGER NOT NULL,
    turn_index      INTEGER NOT NULL,
    timestamp       TEXT
);
CREATE UNIQUE INDEX session_edits_key ON session_edits(session_id, path, ifnull(cwd, char(0)));

-- How far association has read each session, and what it carries over from one relink to the
-- next. `records_scanned` and `captures_compared` say what the last relink processed.
CREATE TABLE association_state (
    session_id          INTEGER PRIMARY KEY REFERENCES sessions(id) ON DELETE CASCADE,
    -- Records with an ordinal up to this one have been scanned for evidence.
    scanned_ordinal     INTEGER NOT NULL,
    -- The branch the session was last seen on (the target of a PR whose output names none).
    current_branch      TEXT,
    -- Git exec calls scanned whose result was not stored yet: [[call_id, command], …].
    pending_calls       TEXT NOT NULL DEFAULT '[]',
    -- Commits the session made itself (full ids when resolved): [id, …].
    own_commits         TEXT NOT NULL DEFAULT '[]',
    -- Captures up to this id have had their snapshot compared with the previous one.
    last_capture_id     INTEGER NOT NULL,
    -- The snapshot of the last capture compared, and its repository.
    prev_snapshot_id    INTEGER,
    prev_repo_id        INTEGER,
    records_scanned     INTEGER NOT NULL DEFAULT 0,
    captures_compared   INTEGER NOT NULL DEFAULT 0
);

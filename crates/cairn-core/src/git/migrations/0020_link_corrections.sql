-- Migration: a person corrects a session's links (`cairn link`, `cairn unlink`, the skim
-- timeline's "belongs here" / "not related").
--
-- A correction is kept in `link_corrections`, which association never writes: one per session
-- and target, the latest word of the person. `link` adds a link with evidence 'person' (origin
-- 'person', which relinks never delete); `unlink` hides every automatic link of the session to
-- that target, and association does not add one again.
--
-- SQLite cannot change a CHECK constraint in place, so `links` is rebuilt with 'person' added to
-- its evidence and origin. No table refers to `links`.
CREATE TABLE links_new (
    id              INTEGER PRIMARY KEY,
    session_id      INTEGER NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    target_kind     TEXT NOT NULL CHECK (target_kind IN ('branch', 'review', 'change')),
    target_key      TEXT NOT NULL,
    pr_number       INTEGER,
    evidence        TEXT NOT NULL CHECK (evidence IN ('commit_by_session', 'pr_created', 'pushed',
                        'edit_committed', 'environment_promotion', 'direct_transition',
                        'change_committed', 'branch_recorded', 'ran_on_branch', 'person')),
    strong          INTEGER NOT NULL CHECK (strong IN (0, 1)),
    confidence      REAL NOT NULL,
    turn_id         INTEGER REFERENCES turns(id) ON DELETE SET NULL,
    ordinal         INTEGER,
    commit_id       TEXT,
    detail          TEXT,
    origin          TEXT CHECK (origin IN ('record', 'snapshot', 'person')),
    UNIQUE (session_id, target_key, evidence, ordinal, commit_id)
);
INSERT INTO links_new (id, session_id, target_kind, target_key, pr_number, evidence, strong,
                       confidence, turn_id, ordinal, commit_id, detail, origin)
    SELECT id, session_id, target_kind, target_key, pr_number, evidence, strong,
           confidence, turn_id, ordinal, commit_id, detail, origin FROM links;
DROP TABLE links;
ALTER TABLE links_new RENAME TO links;
CREATE INDEX links_target ON links(target_key, strong);
CREATE INDEX links_pr ON links(pr_number) WHERE pr_number IS NOT NULL;
CREATE INDEX links_session ON links(session_id);

CREATE TABLE link_corrections (
    session_id      INTEGER NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    target_kind     TEXT NOT NULL CHECK (target_kind IN ('branch', 'review', 'change')),
    target_key      TEXT NOT NULL,
    -- A pull request given by number: the correction covers its links on any branch.
    pr_number       INTEGER,
    action          TEXT NOT NULL CHECK (action IN ('link', 'unlink')),
    made_by         TEXT NOT NULL,
    made_at         TEXT NOT NULL,
    reason          TEXT,
    PRIMARY KEY (session_id, target_key)
) WITHOUT ROWID;

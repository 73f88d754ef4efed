-- Migration 2: git context. Repositories seen in session cwds, environment snapshots taken per
-- capture batch, the branch heads and commits already snapshotted (so a snapshot only reads
-- what is new), pull requests, and the links that relate sessions to branches, reviews and
-- changes, each with the evidence it rests on.
CREATE TABLE repos (
    id              INTEGER PRIMARY KEY,
    root            TEXT NOT NULL UNIQUE,
    common_dir      TEXT NOT NULL,
    updated_at      TEXT NOT NULL
);

ALTER TABLE sessions ADD COLUMN repo_id INTEGER REFERENCES repos(id) ON DELETE SET NULL;

CREATE TABLE snapshots (
    id              INTEGER PRIMARY KEY,
    repo_id         INTEGER NOT NULL REFERENCES repos(id) ON DELETE CASCADE,
    taken_at        TEXT NOT NULL,
    status          TEXT NOT NULL CHECK (status IN ('complete', 'partial', 'failed')),
    error_kind      TEXT,
    head_branch     TEXT,
    head_commit     TEXT,
    -- Repo-relative dirty paths (at most 256) and how many there were.
    dirty_files     TEXT NOT NULL DEFAULT '[]',
    dirty_count     INTEGER NOT NULL DEFAULT 0,
    -- Branches: [{name, head, new_commits: [id…], reviews: [key…]}], plus GitButler stacks.
    branches        TEXT NOT NULL DEFAULT '[]',
    applied_count   INTEGER NOT NULL DEFAULT 1
);
CREATE INDEX snapshots_repo ON snapshots(repo_id, id);

ALTER TABLE captures ADD COLUMN snapshot_id INTEGER REFERENCES snapshots(id) ON DELETE SET NULL;

CREATE TABLE git_heads (
    repo_id         INTEGER NOT NULL REFERENCES repos(id) ON DELETE CASCADE,
    branch          TEXT NOT NULL,
    head            TEXT NOT NULL,
    PRIMARY KEY (repo_id, branch)
) WITHOUT ROWID;

CREATE TABLE git_commits (
    repo_id         INTEGER NOT NULL REFERENCES repos(id) ON DELETE CASCADE,
    commit_id       TEXT NOT NULL,
    time            INTEGER NOT NULL,
    change_id       TEXT,
    files           TEXT NOT NULL,
    PRIMARY KEY (repo_id, commit_id)
) WITHOUT ROWID;

CREATE TABLE git_prs (
    repo_id         INTEGER REFERENCES repos(id) ON DELETE CASCADE,
    branch          TEXT NOT NULL,
    number          INTEGER NOT NULL,
    url             TEXT,
    source          TEXT NOT NULL CHECK (source IN ('transcript', 'git-config', 'gitbutler', 'gh')),
    PRIMARY KEY (branch, number)
);

CREATE TABLE links (
    id              INTEGER PRIMARY KEY,
    session_id      INTEGER NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    target_kind     TEXT NOT NULL CHECK (target_kind IN ('branch', 'review', 'change')),
    target_key      TEXT NOT NULL,
    pr_number       INTEGER,
    evidence        TEXT NOT NULL CHECK (evidence IN ('commit_by_session', 'pr_created', 'pushed',
                        'edit_committed', 'environment_promotion', 'direct_transition',
                        'change_committed', 'branch_recorded', 'ran_on_branch')),
    strong          INTEGER NOT NULL CHECK (strong IN (0, 1)),
    confidence      REAL NOT NULL,
    turn_id         INTEGER REFERENCES turns(id) ON DELETE SET NULL,
    ordinal         INTEGER,
    commit_id       TEXT,
    detail          TEXT,
    UNIQUE (session_id, target_key, evidence, ordinal, commit_id)
);
CREATE INDEX links_target ON links(target_key, strong);
CREATE INDEX links_pr ON links(pr_number) WHERE pr_number IS NOT NULL;
CREATE INDEX links_session ON links(session_id);

-- Turn summaries that skim and show read without touching records: the last assistant message
-- and the tools used. Backfilled for turns captured before this migration.
ALTER TABLE turns ADD COLUMN assistant_preview TEXT;
ALTER TABLE turns ADD COLUMN tool_names TEXT NOT NULL DEFAULT '[]';
UPDATE turns SET
    assistant_preview = (SELECT substr(r.text, 1, 320) FROM records r
                         WHERE r.turn_id = turns.id AND r.kind = 'message' AND r.role = 'assistant'
                           AND r.text IS NOT NULL AND trim(r.text) != ''
                         ORDER BY r.ordinal DESC LIMIT 1),
    tool_names = COALESCE((SELECT json_group_array(name) FROM (
                         SELECT r.tool_name AS name, MIN(r.ordinal) AS first FROM records r
                         WHERE r.turn_id = turns.id AND r.kind = 'tool_call' AND r.tool_name IS NOT NULL
                         GROUP BY r.tool_name ORDER BY first)), '[]');

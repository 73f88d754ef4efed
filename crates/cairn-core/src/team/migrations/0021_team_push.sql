-- What `cairn team push` has sent to each team archive, so the next push sends only what changed.
-- `archive` is the team archive's own id (`cairn.meta.archive_id` on the server) and `publisher`
-- the role it was pushed as: no address, user name or credential of the server is kept here.
CREATE TABLE team_pushed_sessions (
    archive         TEXT NOT NULL,
    publisher       TEXT NOT NULL,
    session_key     TEXT NOT NULL,
    signature       TEXT NOT NULL,
    last_record_id  INTEGER NOT NULL,
    pushed_at       TEXT NOT NULL,
    PRIMARY KEY (archive, publisher, session_key)
) WITHOUT ROWID;

-- The trusted Recall entries sent, with the `updated_at` they had: an entry changed since is
-- sent again, one no longer trusted is taken back from the server.
CREATE TABLE team_pushed_entries (
    archive         TEXT NOT NULL,
    publisher       TEXT NOT NULL,
    entry_id        TEXT NOT NULL,
    updated_at      TEXT NOT NULL,
    PRIMARY KEY (archive, publisher, entry_id)
) WITHOUT ROWID;

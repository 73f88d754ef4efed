-- The last finished `cairn team push` to each team archive, per publisher: what Settings → Team
-- shows as the last push. Like migration 0021, keyed by the server's archive id and the role:
-- no address or credential of the server is kept here.
CREATE TABLE team_pushes (
    archive             TEXT NOT NULL,
    publisher           TEXT NOT NULL,
    finished_at         TEXT NOT NULL,
    sessions_pushed     INTEGER NOT NULL,
    sessions_unchanged  INTEGER NOT NULL,
    sessions_withdrawn  INTEGER NOT NULL,
    sessions_refused    INTEGER NOT NULL,
    records_pushed      INTEGER NOT NULL,
    entries_pushed      INTEGER NOT NULL,
    PRIMARY KEY (archive, publisher)
) WITHOUT ROWID;

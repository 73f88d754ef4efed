-- Migration 22: sessions a teammate published with `cairn publish --full` and this machine
-- pulled (`cairn pull`) live in the archive beside its own captures, read from the transcript
-- the pull stored under the data dir. `publisher` is who the document says published it (a
-- teammate's claim, shown as such) and `pulled_from` the git remote it came from; both are NULL
-- for this machine's own captures, which is what publish, push, the team push and Recall read.
-- `published_at` (migration 3) holds the publisher's time for a pulled session.
ALTER TABLE sessions ADD COLUMN publisher TEXT;
ALTER TABLE sessions ADD COLUMN pulled_from TEXT;
CREATE INDEX sessions_pulled ON sessions(publisher) WHERE publisher IS NOT NULL;

-- The transcript files a pull stored, with who published each. A pull writes its row before
-- capture reads the file, and the trigger marks the session in capture's own transaction: a
-- pulled session is never, even for a moment after a crash, taken for this machine's own.
CREATE TABLE pulled_sources (
    path            TEXT PRIMARY KEY,
    publisher       TEXT NOT NULL,
    published_at    TEXT,
    pulled_from     TEXT NOT NULL
);
CREATE TRIGGER sources_pulled AFTER INSERT ON sources
WHEN EXISTS (SELECT 1 FROM pulled_sources p WHERE p.path = NEW.path)
BEGIN
    UPDATE sessions SET
        publisher = (SELECT publisher FROM pulled_sources WHERE path = NEW.path),
        published_at = (SELECT published_at FROM pulled_sources WHERE path = NEW.path),
        pulled_from = (SELECT pulled_from FROM pulled_sources WHERE path = NEW.path)
    WHERE id = NEW.session_id;
END;

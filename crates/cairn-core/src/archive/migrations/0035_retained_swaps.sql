-- Migration 35: retained copies a reindex rewrote because today's redaction rules find a secret
-- in lines an older build's rules let through. The new copy is written beside the old one
-- (`<copy>.scrub`) before the rebuild's transaction, its row added here unready first; the
-- transaction marks it ready with the records' new keys, and the file is renamed over the copy
-- right after the commit. A ready row left by a crash is finished before anything appends to
-- or reads the copy again (at open, and by the capture writer); an unready one is a rebuild that
-- never committed, whose file the next reindex removes.
CREATE TABLE retained_swaps (
    source_id       INTEGER NOT NULL REFERENCES sources(id) ON DELETE CASCADE,
    generation      INTEGER NOT NULL,
    ready           INTEGER NOT NULL DEFAULT 0 CHECK (ready IN (0, 1)),
    PRIMARY KEY (source_id, generation)
) WITHOUT ROWID;

-- Migration 33: each run of `cairn reindex`, which stores sessions' records again from their
-- retained copies. No session is named (a forget leaves nothing of one here). The archive's
-- revision, what the vectors of turns are known complete for, counts these with the capture
-- batches: a reindex replaces turns without adding a capture batch.
CREATE TABLE reindexes (
    id              INTEGER PRIMARY KEY,
    reindexed_at    TEXT NOT NULL,
    sessions        INTEGER NOT NULL,
    records_before  INTEGER NOT NULL,
    records_after   INTEGER NOT NULL
);

-- Migration 29: how many times a record was taken out of the full-text index. A search keeps the
-- number of records holding each phrase it ranks by, and adds the records appended since
-- (`archive/store/fts.rs`, `phrase_rows`); a record taken out (forgotten, replaced, re-indexed)
-- can lower any count, so each take-out makes every kept count start again. `unindex_record`,
-- the only way a record leaves `records_fts` after this migration, adds one.
CREATE TABLE fts_takeouts (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    count INTEGER NOT NULL
);
INSERT INTO fts_takeouts (id, count) VALUES (1, 0);

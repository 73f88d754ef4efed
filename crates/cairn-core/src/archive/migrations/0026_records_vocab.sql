-- Migration 26: how many records hold each word of the full-text index (one row a word: `term`,
-- `doc` records holding it, `cnt` occurrences), read by the session search to leave out of its
-- any-word query the words in so many records that ranking by them costs more than it tells.
-- An fts5vocab table stores nothing: it reads records_fts's own index when asked.
CREATE VIRTUAL TABLE records_fts_rows USING fts5vocab(records_fts, row);

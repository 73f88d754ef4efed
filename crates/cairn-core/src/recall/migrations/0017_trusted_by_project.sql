-- Migration 17: the session-start brief's read. A new agent session asks for the newest
-- trusted entries of one repository; through the project index SQLite visited every entry of
-- the project in the table (5,900 rows, 11 ms at 100k entries) to test trust and sort by age.
-- This partial index holds only trusted entries, in the order the brief reads them, so the read
-- is the first 50 index rows. Its WHERE is `recall::model::TRUSTED_SQL` without the alias.
CREATE INDEX recall_entries_trusted ON recall_entries(project, updated_at DESC, id)
    WHERE status = 'accepted' AND review_state = 'human_reviewed'
      AND transferable = 1 AND provenance_ok = 1;

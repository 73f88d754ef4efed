-- Keyed records (issue 16). Agents that rewrite what they wrote (Gemini CLI's legacy session
-- documents, its JSONL re-appending a message with more tool results, `$rewindTo`) give each
-- record a stable key instead of the hash of its line. Such a record is updated in place when
-- its content changes (it keeps its ordinal, so evidence links and turns stay valid) and is
-- marked, never deleted, when the agent drops it.
--   unit          the agent's id of the unit the record came from (a message id); NULL for
--                 records identified by their line's content, as before
--   revision      digest of the stored fields of a keyed record, to tell an update from a re-read
--   retracted_at  when the agent removed the record's unit (a rewind, a rewritten document)
ALTER TABLE records ADD COLUMN unit TEXT;
ALTER TABLE records ADD COLUMN revision TEXT;
ALTER TABLE records ADD COLUMN retracted_at TEXT;
CREATE INDEX records_unit ON records(session_id, unit) WHERE unit IS NOT NULL;

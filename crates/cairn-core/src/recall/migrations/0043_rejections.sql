-- Migration 43: when a person rejected an entry. An entry is archived for other reasons too (a
-- newer one replaced it, its extraction generation was retired, it is staged and not yet
-- published): only a rejection is what the window's Undo (`recall_restore`) takes back. NULL for
-- every entry archived before this migration, so none of those can be restored by mistake.
ALTER TABLE recall_entries ADD COLUMN rejected_at TEXT;

-- Migration 12: no stored value confirms a guess of a redacted secret.
-- A line redaction changed is now keyed by the hash of its redacted form, not of the raw line
-- (which, beside the redacted line, let a dictionary test guesses of what was removed). The Rust
-- half of this migration (`archive::rekey::migrate`) re-keys the records, turns, evidence anchors
-- and sources' line hashes of existing archives; the retained copies' key frames are rewritten
-- from `retained_rekey` right after the commit, and again at any open until done.

-- A finding keeps its rule and position, not the secret's length.
ALTER TABLE secret_findings DROP COLUMN end_byte;

-- Keys still to write into a retained copy's skippable frames: (source, generation) names the
-- copy, line_no the frame row.
CREATE TABLE retained_rekey (
    source_id       INTEGER NOT NULL REFERENCES sources(id) ON DELETE CASCADE,
    generation      INTEGER NOT NULL,
    line_no         INTEGER NOT NULL,
    record_hash     TEXT NOT NULL,
    PRIMARY KEY (source_id, generation, line_no)
) WITHOUT ROWID;

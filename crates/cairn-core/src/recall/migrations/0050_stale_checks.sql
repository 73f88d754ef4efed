-- Migration 50: how far Recall's staleness check has read each repository's history. A sync
-- checks the accepted entries against the commits made since (`recall/stale.rs`), so it needs
-- the HEAD it last read: a repository whose HEAD is still that commit is passed over with one
-- `git rev-parse`. No row means never checked: the first check reads every entry's history once.
-- `IF NOT EXISTS`: an archive wound back to an older version by hand (as tests do) may still
-- hold the table, and what it says stays true of that history.
CREATE TABLE IF NOT EXISTS recall_stale_checks (
    -- The repository's root, as `repos.root` holds it (a rebuild renumbers repos, not roots).
    root        TEXT PRIMARY KEY,
    -- The commit HEAD named when the check last read the history through to it.
    head        TEXT NOT NULL,
    -- When (Cairn's clock): an entry made after this has not been checked against any commit
    -- yet, so its whole history since its evidence is read.
    checked_at  TEXT NOT NULL
);

-- Migration 13: a teammate's document is imported only after it passes the checks of
-- git/document.rs, and kept per repository (its git common dir: skim shows it there only) and
-- per remote (`cairn pull` fetches into refs/cairn/remotes/<remote>/…). What an older Cairn
-- imported was never checked and knew neither: it is dropped, and the next `cairn pull`
-- imports it again under the checks.
DROP TABLE published_sessions;

CREATE TABLE published_sessions (
    common_dir      TEXT NOT NULL,
    remote          TEXT NOT NULL,
    session_key     TEXT NOT NULL,
    -- The checked document, re-serialised (times normalised, texts cleaned).
    document        TEXT NOT NULL,
    -- Target keys the publisher's links named: what skim matches on.
    target_keys     TEXT NOT NULL,
    ref_commit      TEXT NOT NULL,
    imported_at     TEXT NOT NULL,
    PRIMARY KEY (common_dir, remote, session_key)
);

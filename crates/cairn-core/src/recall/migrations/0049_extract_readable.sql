-- Migration 49: where in each session a model would have something to read, kept for Recall
-- extraction's status (`cairn recall extract status`, the desktop's Settings, auto-activation's
-- readiness). Telling whether a session no pass has covered has anything to read took reading
-- and segmenting all its records, on every status, for every such session. A row says it once
-- for the records a session held then; it is read again only when the session's records have
-- moved past it (a capture appended, a reindex read them again). Filled as status asks, so an
-- archive upgraded to this version reads each session once, at its first status; a forgotten
-- session's row goes with it.
CREATE TABLE recall_extract_readable (
    session_id      INTEGER PRIMARY KEY REFERENCES sessions(id) ON DELETE CASCADE,
    -- `sessions.next_ordinal` when the records were read: the row speaks of the records below it.
    read_through    INTEGER NOT NULL,
    -- The ordinal of the last of them a model is shown; NULL when a model is shown none of them
    -- (a pass reads nothing of the session).
    last_visible    INTEGER
);

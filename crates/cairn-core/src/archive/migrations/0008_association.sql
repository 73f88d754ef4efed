-- Migration: what association reads on every capture, without scanning the session.
-- (Numbered 0008 to follow the other branches' 0005–0007; applied in list order, after 0007_insights.)
--
-- Association (git/associate.rs) re-reads a session's evidence on every capture: its edits, its
-- exec calls, Claude's PR links, and the first record of each branch the agent recorded. It used
-- to find them by reading every record of the session, so a hook on a 30 MB transcript spent
-- most of its time there. The partial index holds only the records that can be evidence; the
-- branches table is kept by the capture writer (one row per session and branch).
CREATE INDEX records_evidence ON records(session_id, ordinal)
    WHERE (kind = 'tool_call' AND tool_kind IN ('exec', 'file_edit'))
       OR (kind = 'event' AND source_event_kind = 'claude:pr-link');

CREATE TABLE session_branches (
    session_id      INTEGER NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    git_branch      TEXT NOT NULL,
    first_ordinal   INTEGER NOT NULL,
    PRIMARY KEY (session_id, git_branch)
) WITHOUT ROWID;

INSERT INTO session_branches (session_id, git_branch, first_ordinal)
    SELECT session_id, git_branch, MIN(ordinal) FROM records
    WHERE git_branch IS NOT NULL GROUP BY session_id, git_branch;

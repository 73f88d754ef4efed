-- Migration 27: sessions found by the agent's own session id. `show`, `why`, resume, the hooks
-- and the session search's cards name a session by its key or by that id (`session_key = ?1 OR
-- session_id = ?1`); without an index the second half read every session row.
CREATE INDEX sessions_agent_session ON sessions(session_id) WHERE session_id IS NOT NULL;

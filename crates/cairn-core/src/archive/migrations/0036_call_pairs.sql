-- Migration 36: a tool result belongs to the call of its id stored last before it (the first
-- call of that id when it comes before them all): an agent that numbers its calls per message
-- or per run repeats an id within one session. The call index carries the kind and the
-- ordinal, so a call's results, and the calls around it, are found as ranges of the index
-- without reading a record.
DROP INDEX records_call;
CREATE INDEX records_call ON records(session_id, call_id, kind, ordinal);

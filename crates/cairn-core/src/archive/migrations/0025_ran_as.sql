-- Migration 25: the agent a session is filtered by and shown as in search hits, skim, branches
-- and insights. For a session Cairn did not capture itself (`atif`: an ATIF import, a teammate's
-- transcript pulled with `cairn pull`) whose trajectory names one of Cairn's agents
-- (`agent.name`, kept as `provider`), that agent; NULL means the session's own `agent`.
-- Capture keeps it; the migration's Rust half sets it for the sessions already here.
ALTER TABLE sessions ADD COLUMN ran_as TEXT;

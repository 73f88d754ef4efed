-- Migration: what each edit wrote, so an edit is linked only to a commit that carries it.
--
-- `edit_committed` linked a session to any commit on a branch that touched a path it edited in
-- the time window, even one whose change had nothing the session wrote (a repository's initial
-- commit, dated after the edit by a disagreeing clock). Each edited path now keeps the keys of
-- the distinctive lines the session wrote to it (`git::written::key`, JSON array of numbers);
-- association requires the commit's change to that path to contain one of them and falls back
-- to path and time only, at a lower confidence, when the session wrote nothing to compare.
--
-- The keys come from the records, which association reads once per session: every session's
-- association state is dropped so its next relink rebuilds it (a person's links stay), and the
-- migration's Rust half queues every session for that relink (history is no longer read only
-- from 90 days before today, so older sessions may gain links too).
ALTER TABLE session_edits ADD COLUMN written TEXT NOT NULL DEFAULT '[]';
DELETE FROM association_state;

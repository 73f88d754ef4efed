-- Migration: sessions whose new records are stored but not yet linked to git.
--
-- A capture stores records in one transaction and relinks the sessions it touched in the next
-- (git::after_capture). A process killed, or a link that failed, between the two left those
-- sessions unlinked for good: the next sync found nothing new in their files, so nothing asked
-- for them to be relinked. The capture transaction now names each session it added records to
-- here, and the relink deletes the row in its own transaction; every relink also takes up the
-- sessions an earlier capture left here. A relink that fails counts an attempt against every
-- row it held, and a row is given up after a few (git::MAX_LINK_ATTEMPTS), so one session
-- whose relink always fails cannot keep every later relink failing with it.
CREATE TABLE link_pending (
    session_id      INTEGER PRIMARY KEY REFERENCES sessions(id) ON DELETE CASCADE,
    attempts        INTEGER NOT NULL DEFAULT 0
);

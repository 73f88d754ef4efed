-- Migration 47: each source's retained copy says what it is a copy of (a manifest, a skippable
-- zstd frame: the agent, the path as `sources.path` keeps it, the role, the read kind, the
-- session and its facts, when it was first read), so the archive can be rebuilt from the copies
-- alone when this database is damaged or lost (`cairn reindex --from-copies`). The capture
-- writer opens each new source's copy with one from now on; the Rust half
-- (`archive::rebuild::describe_every_source`) appends one to the newest copy of each source
-- already here, from its rows, passing over a source whose copies are gone. No table changes.
SELECT 1;

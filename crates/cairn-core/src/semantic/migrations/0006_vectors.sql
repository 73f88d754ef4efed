-- Migration 6: sentence embeddings for semantic search, beside what they embed.
--
-- `embedding_state` has one row per vector store (`recall`: entries; `sessions`: turns):
-- `corpus_revision` counts changes to the embedded text (kept by the triggers below for Recall;
-- the archive's is the newest `captures` id), `built_revision` the revision the stored vectors
-- were complete for, `fingerprint` the embedder that made them. A search runs only when both
-- match (fail closed); otherwise it says what is stale and how to refresh. `generation` counts
-- completed builds (in-memory copies of the vectors are keyed by it).
CREATE TABLE embedding_state (
    store               TEXT PRIMARY KEY CHECK (store IN ('recall', 'sessions')),
    corpus_revision     INTEGER NOT NULL DEFAULT 0,
    built_revision      INTEGER,
    fingerprint         TEXT NOT NULL DEFAULT '',
    dims                INTEGER NOT NULL DEFAULT 0,
    generation          INTEGER NOT NULL DEFAULT 0,
    built_at            TEXT
);
INSERT INTO embedding_state (store) VALUES ('recall'), ('sessions');

-- One vector per entry: little-endian f32 × dims, unit length, of
-- title + "\n\n" + body (+ "\n\n" + trigger when not empty); `content_hash` is the SHA-256 of
-- that text. Entries of every status are embedded, so status filters work in every mode.
CREATE TABLE recall_vectors (
    entry_id            TEXT PRIMARY KEY REFERENCES recall_entries(id) ON DELETE CASCADE,
    fingerprint         TEXT NOT NULL,
    content_hash        TEXT NOT NULL,
    vector              BLOB NOT NULL
);

-- A change to an entry's text drops its vector and moves the revision on; adding or deleting an
-- entry moves the revision on. Status and review changes do not touch the embedded text.
CREATE TRIGGER recall_entries_embed_insert AFTER INSERT ON recall_entries BEGIN
    UPDATE embedding_state SET corpus_revision = corpus_revision + 1 WHERE store = 'recall';
END;
CREATE TRIGGER recall_entries_embed_update AFTER UPDATE OF title, body, trigger ON recall_entries
WHEN old.title IS NOT new.title OR old.body IS NOT new.body OR old.trigger IS NOT new.trigger BEGIN
    DELETE FROM recall_vectors WHERE entry_id = new.id;
    UPDATE embedding_state SET corpus_revision = corpus_revision + 1 WHERE store = 'recall';
END;
CREATE TRIGGER recall_entries_embed_delete AFTER DELETE ON recall_entries BEGIN
    UPDATE embedding_state SET corpus_revision = corpus_revision + 1 WHERE store = 'recall';
END;

-- One vector per turn of the archive: the opening prompt's preview + "\n\n" + the last
-- assistant message's preview. `last_ordinal` is the turn's extent when it was embedded (a turn
-- that grew is embedded again). An empty `vector` marks a turn with no text to embed.
CREATE TABLE turn_vectors (
    turn_id             INTEGER PRIMARY KEY REFERENCES turns(id) ON DELETE CASCADE,
    last_ordinal        INTEGER NOT NULL,
    fingerprint         TEXT NOT NULL,
    content_hash        TEXT NOT NULL,
    vector              BLOB NOT NULL
);

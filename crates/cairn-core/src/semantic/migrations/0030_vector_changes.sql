-- Migration 30: which stored vectors changed, in order, so a matrix kept in memory
-- (`semantic/vectors.rs`, `MatrixCache`) reads only those rows after a build instead of every
-- vector of its store. Triggers log the document id of each vector written, replaced or deleted
-- (a cascade from a forgotten turn or a deleted entry included); `seq` only grows.
-- A completed build trims the log of its store to the newest changes and records in
-- `embedding_state.changes_trimmed` the newest `seq` it removed: a matrix that read the log up to
-- an older `seq` has lost changes and is loaded whole.
CREATE TABLE vector_changes (
    seq     INTEGER PRIMARY KEY AUTOINCREMENT,
    store   TEXT NOT NULL CHECK (store IN ('recall', 'sessions')),
    doc_id  TEXT NOT NULL
);
ALTER TABLE embedding_state ADD COLUMN changes_trimmed INTEGER NOT NULL DEFAULT 0;

CREATE TRIGGER turn_vectors_changed_insert AFTER INSERT ON turn_vectors BEGIN
    INSERT INTO vector_changes (store, doc_id) VALUES ('sessions', CAST(new.turn_id AS TEXT));
END;
CREATE TRIGGER turn_vectors_changed_update AFTER UPDATE ON turn_vectors BEGIN
    INSERT INTO vector_changes (store, doc_id) VALUES ('sessions', CAST(new.turn_id AS TEXT));
END;
CREATE TRIGGER turn_vectors_changed_delete AFTER DELETE ON turn_vectors BEGIN
    INSERT INTO vector_changes (store, doc_id) VALUES ('sessions', CAST(old.turn_id AS TEXT));
END;
CREATE TRIGGER recall_vectors_changed_insert AFTER INSERT ON recall_vectors BEGIN
    INSERT INTO vector_changes (store, doc_id) VALUES ('recall', new.entry_id);
END;
CREATE TRIGGER recall_vectors_changed_update AFTER UPDATE ON recall_vectors BEGIN
    INSERT INTO vector_changes (store, doc_id) VALUES ('recall', new.entry_id);
END;
CREATE TRIGGER recall_vectors_changed_delete AFTER DELETE ON recall_vectors BEGIN
    INSERT INTO vector_changes (store, doc_id) VALUES ('recall', old.entry_id);
END;

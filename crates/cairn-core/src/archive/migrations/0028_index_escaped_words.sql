-- Migration 28: words after a JSON escape in a tool input become searchable. The index held
-- `nword` for the first word of each line of an edit, a written file or a multi-line command
-- (`\nword` in the stored JSON); the Rust half (`archive::store::reindex_escaped_inputs`)
-- takes each record whose input holds a backslash out of `records_fts` as it was indexed and
-- puts it back in the form `archive::store::indexed_input` gives. No table changes.
SELECT 1;

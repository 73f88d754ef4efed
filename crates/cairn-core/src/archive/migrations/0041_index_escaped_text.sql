-- Migration 41: words after a terminal escape sequence in a record's text become searchable.
-- Coloured output (`ESC[32mPASS`) was indexed as `32mpass`, which no search for PASS found;
-- the Rust half (`archive::store::reindex_escaped_text`) takes each record whose text holds an
-- escape out of `records_fts` as it was indexed and puts it back in the form
-- `archive::store::indexed_text` gives. No table changes.
SELECT 1;

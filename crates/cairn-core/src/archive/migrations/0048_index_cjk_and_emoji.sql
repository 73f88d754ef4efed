-- Migration 48: the words inside a run of Chinese, Japanese or Korean text, a word glued to such a
-- run and emoji become searchable. The index's tokenizer (`unicode61`) reads `我们修复了登录错误`
-- as one token and an emoji as a separator; each column is now indexed as its stored form, then a
-- tail of terms (CJK runs as overlapping character pairs, the words glued to them, one term per
-- emoji; `archive/store/fts/tail.rs`). The Rust half (`archive::store::index_tails`) takes each
-- record whose text or tool input has a tail out of `records_fts` as it was indexed and puts it
-- back with its tail. No table changes: every reader keeps the tokenizer it had.
SELECT 1;

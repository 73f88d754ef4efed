-- Migration 46: what parsers took from the files beside a transcript (Grok's summary.json,
-- Vibe's meta.json, Droid's settings, gptme's config.toml: a title, a working directory, a
-- branch, a model) was stored as read, unredacted, though it is stored and shown like the
-- transcript's own text. Capture now redacts those files as it reads them; the Rust half
-- (`archive::store::redact_session_facts`) redacts what older builds stored: sessions' facts,
-- records' cwd and the parsers' saved state. No table changes.
SELECT 1;

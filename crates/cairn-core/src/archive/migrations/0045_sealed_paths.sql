-- Migration 45: no byte of a secret under the data dir, a path's included, and nothing stored
-- derived from one. A transcript whose folder or file name holds what the redaction rules find
-- definite (a project folder named after a token) was kept with its path as found in sources,
-- warnings and pulled_sources, and its source key (the name of its retained copies) was a hash
-- of that path. Its Rust half (`archive::store::seal_kept_paths`) keeps those paths as capture
-- now does (`archive::store::at_rest`: each such part redacted, separators kept), gives each
-- source the kept path's key and renames its copies. No table changes.
SELECT 1;

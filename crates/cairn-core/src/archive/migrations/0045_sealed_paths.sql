-- Migration 45: no byte of a secret under the data dir, a path's included. A transcript whose
-- folder or file name holds what the redaction rules call a secret (a project folder named after
-- a token, an agent's folder for it) was kept with its path as found, in sources, warnings and
-- pulled_sources. Its Rust half (`archive::store::seal_kept_paths`) keeps those paths sealed:
-- the part with the secret redacted, the whole ending ` [sealed <tag>]`, as capture now stores
-- them (`archive::store::at_rest`). No table changes.
SELECT 1;

-- Migration 37: the newest mtime of the files a line transcript's session is described by
-- (`sources::sidecars`: Droid's settings, kiro-cli's metadata, Grok's summary.json, Vibe's
-- meta.json, gptme's config.toml, Posit Assistant's conversation.json and workspace.json) when
-- the transcript was last read. A change to them alone (a title an agent writes after the last
-- message) is then read, the transcript's lines not read again. 0 until the first read that
-- looks.
ALTER TABLE sources ADD COLUMN sidecar_mtime_ns INTEGER NOT NULL DEFAULT 0;

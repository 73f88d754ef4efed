-- Migration 12: timestamps are read strictly as RFC 3339 at ingest (text::rfc3339); anything
-- else is unknown. Archives written before kept whatever began with four digits and a dash
-- (`2099-01-01é000000`, escape sequences after a date). Those become unknown too: a value must
-- have the RFC 3339 shape and hold nothing but its own characters.
UPDATE records SET timestamp = NULL
WHERE timestamp IS NOT NULL
  AND (timestamp NOT GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9][Tt][0-9][0-9]:[0-9][0-9]:[0-9][0-9]*'
       OR timestamp GLOB '*[^0-9TtZz:.+-]*');
UPDATE turns SET started_at = NULL
WHERE started_at IS NOT NULL
  AND (started_at NOT GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9][Tt][0-9][0-9]:[0-9][0-9]:[0-9][0-9]*'
       OR started_at GLOB '*[^0-9TtZz:.+-]*');
UPDATE sessions SET started_at = NULL
WHERE started_at IS NOT NULL
  AND (started_at NOT GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9][Tt][0-9][0-9]:[0-9][0-9]:[0-9][0-9]*'
       OR started_at GLOB '*[^0-9TtZz:.+-]*');
UPDATE sessions SET updated_at = NULL
WHERE updated_at IS NOT NULL
  AND (updated_at NOT GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9][Tt][0-9][0-9]:[0-9][0-9]:[0-9][0-9]*'
       OR updated_at GLOB '*[^0-9TtZz:.+-]*');
UPDATE turns SET ended_at = NULL
WHERE ended_at IS NOT NULL
  AND (ended_at NOT GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9][Tt][0-9][0-9]:[0-9][0-9]:[0-9][0-9]*'
       OR ended_at GLOB '*[^0-9TtZz:.+-]*');

-- Migration 34: the parsers' revision that read each session (`archive::sources::PARSERS_REVISION`),
-- so sessions an older Cairn read are offered a reindex. Sessions stored before are revision 0.
ALTER TABLE sessions ADD COLUMN read_by INTEGER NOT NULL DEFAULT 0;

-- Migration 32: every turn's id and extent without its row. After each capture, a search by
-- meaning checks its kept vectors against every turn's extent (a turn that grew needs a new
-- vector) and counts the turns that wait. Through the table that read walks every turn's row,
-- previews included (about 25 ms over 109k turns); through this covering index, ids and extents
-- alone (about 10 ms).
CREATE INDEX turns_extent ON turns(id, last_ordinal);

-- Migration 31: what a build reads of the turns' vectors without their blobs. Finding the turns
-- that wait for a vector reads every turn's id and extent under a fingerprint; through the table
-- that is a pass over every stored vector (168 MB over 109k turns, about 60 ms, three times a
-- build), through this covering index a pass over ids (about 10 ms). The partial index counts the
-- turns that had no text to embed (an empty vector), so the store's vector count needs no blob.
CREATE INDEX turn_vectors_made ON turn_vectors(fingerprint, turn_id, last_ordinal);
CREATE INDEX turn_vectors_empty ON turn_vectors(fingerprint) WHERE length(vector) = 0;

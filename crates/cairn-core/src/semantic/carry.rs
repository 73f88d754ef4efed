//! A rebuild from the copies (`cairn reindex --from-copies`), the semantic room's part: its
//! vectors are not carried over, and the report says how many and what makes them again.
//!
//! A turn's vector is keyed by the turn's row id, which a rebuild does not keep, and is known
//! fresh against the archive's revision (its capture batches and reindexes), which a rebuild
//! starts again: carried, vectors could stand for turns that read differently now and still
//! pass as fresh. Recall's entries are carried (`recall::carry`), their vectors not: counted
//! there, made again by the same build. The
//! rebuilt archive's stores read as never built, so searches by meaning say so and name the
//! build, and the desktop waits for a person to start one (Settings → Search by meaning).

use rusqlite::Connection;

use crate::archive::rebuild::Carry;

use super::vectors::VectorStore;

/// What the old database (read-only, maybe damaged) held of the turns' vectors, said as left
/// behind. Carries nothing. Never fails.
pub fn carry_from(old: &Connection, _new: &Connection) -> Carry {
    let mut carry = Carry::default();
    let turns = old.query_row(
        "SELECT COUNT(*) FROM turn_vectors WHERE length(vector) > 0",
        [],
        |r| r.get::<_, i64>(0),
    );
    match turns {
        Ok(0) => {}
        Ok(n) => carry.not_carried.push(format!(
            "search by meaning: the vectors of {} (keyed by rows a rebuild makes anew); `{}` \
             (or Settings → Search by meaning) makes them again",
            VectorStore::Sessions.count(n),
            VectorStore::Sessions.build_command()
        )),
        Err(e) => carry.not_carried.push(format!(
            "search by meaning: the turns' vectors, not readable in the old database ({e}); \
             `{}` makes them again",
            VectorStore::Sessions.build_command()
        )),
    }
    carry
}

/// Recall's entries' vectors the old database held (Recall's carry says it), said as left behind with what makes them again.
pub fn recall_vectors_left(old: &Connection) -> Option<String> {
    let store = VectorStore::Recall;
    match old.query_row(
        "SELECT COUNT(*) FROM recall_vectors WHERE length(vector) > 0",
        [],
        |r| r.get::<_, i64>(0),
    ) {
        Ok(0) => None,
        Ok(n) => Some(format!(
            "search by meaning: the vectors of {} (made again from the carried entries' \
             text); `{}` (or Settings → Search by meaning) makes them again",
            store.count(n),
            store.build_command()
        )),
        Err(e) => Some(format!(
            "search by meaning: the Recall entries' vectors, not readable in the old database \
             ({e}); `{}` makes them again",
            store.build_command()
        )),
    }
}

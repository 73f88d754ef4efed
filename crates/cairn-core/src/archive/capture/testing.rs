//! What the capture kinds' tests share: the batches a read hands over, the reading position a
//! committed batch leaves, what a list of batches stores, and the contract of a read that is
//! cut short between its batches.

use super::{Batch, Commit, Msg, SourceState, Trigger, Writer};

/// Every batch `read` hands to the emit it is given.
pub(super) fn batches_of(read: impl FnOnce(&mut dyn FnMut(Msg) -> bool)) -> Vec<Batch> {
    let mut out = Vec::new();
    read(&mut |m| {
        if let Msg::Batch(b) = m {
            out.push(*b);
        }
        true
    });
    out
}

/// The stored position a committed batch leaves.
pub(super) fn state_after(b: &Batch) -> SourceState {
    SourceState {
        id: 1,
        source_key: b.source_key.clone(),
        session_id: 1,
        path: b.path.clone(),
        size: b.size,
        mtime_ns: b.mtime_ns,
        byte_offset: b.byte_offset,
        line_count: b.line_count,
        first_line_hash: None,
        last_line_start: None,
        last_line_hash: None,
        parser_state: Some(b.parser_state.clone()),
        generation: b.generation,
        retained_len: 0,
        sidecar_mtime_ns: b.sidecar_mtime_ns.unwrap_or(0),
    }
}

/// The keys of the records of `batches`, in order.
fn record_hashes(batches: &[&Batch]) -> Vec<String> {
    batches
        .iter()
        .flat_map(|b| b.records.iter().map(|r| r.hash.clone()))
        .collect()
}

/// Every record `batches` store, committed one after the other into a fresh archive, as
/// `(record hash, revision)` in hash order. Each must be stored (none refused as out of turn).
pub(super) fn stored(batches: &[&Batch]) -> Vec<(String, Option<String>)> {
    let data = tempfile::tempdir().unwrap();
    let mut store = crate::store::Store::open(&data.path().join("cairn.db")).unwrap();
    let mut writer = Writer::new(&mut store, data.path(), Trigger::Sync);
    for b in batches {
        let done = writer.commit(b).unwrap();
        assert!(matches!(done, Commit::Done { .. }), "{}", b.path);
    }
    drop(writer);
    let mut stmt = store
        .conn()
        .prepare("SELECT record_hash, revision FROM records ORDER BY record_hash")
        .unwrap();
    stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

/// A read by units handed over in `parts` (more than one batch) is chained base to base; the
/// read after a kill that followed `parts[0]` (`resumed`) is chained to what was stored, hands
/// the whole session over again (nothing lost), and with `parts[0]` stores exactly what the
/// whole read stores (nothing twice: the units taken again change nothing).
pub(super) fn assert_resumes(parts: &[&Batch], resumed: &[&Batch]) {
    assert!(parts.len() > 1, "{} batches", parts.len());
    for pair in parts.windows(2) {
        assert_eq!(
            (pair[1].base.existed, pair[1].base.byte_offset),
            (true, pair[0].byte_offset),
            "each batch starts where the one before ends"
        );
    }
    assert!(!resumed.is_empty(), "a read under way is made again");
    assert_eq!(
        (resumed[0].base.existed, resumed[0].base.byte_offset),
        (true, parts[0].byte_offset),
        "the read made again starts where the stored batch ends"
    );
    assert_eq!(record_hashes(resumed), record_hashes(parts), "nothing lost");
    let mut killed = vec![parts[0]];
    killed.extend(resumed.iter().copied());
    let once = stored(parts);
    assert!(!once.is_empty());
    assert_eq!(stored(&killed), once, "nothing twice");
}

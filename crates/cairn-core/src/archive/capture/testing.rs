//! What the capture kinds' tests share: the reading position a committed batch leaves, and
//! what a list of batches stores.

use super::{Batch, Commit, SourceState, Trigger, Writer};

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
    }
}

/// The keys of the records of `batches`, in order.
pub(super) fn record_hashes(batches: &[&Batch]) -> Vec<String> {
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

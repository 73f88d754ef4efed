//! Re-keying archives written before redacted lines were keyed by their redacted form
//! (migration `0014_rekey_redacted_lines`).
//!
//! Such an archive keys every line by the SHA-256 of the *raw* line, also the lines redaction
//! changed: with the redacted line beside it, a guess of a removed secret can be tested offline.
//! The migration gives each line that had a finding the key capture now gives it, the hash of
//! its redacted form as the retained copy holds it ([`keys::redacted_record_hash`]), and carries
//! the change everywhere a record hash went: records, the turn keys derived from opening
//! records, evidence anchors (`<record_hash>#<block>`) and the sources' first and last line
//! hashes. Evidence content digests are over redacted content and do not change.
//!
//! The retained copies list the old keys in their skippable frames. They are rewritten after the
//! migration commits, from the `retained_rekey` table ([`finish`], run at every open until the
//! table is empty), so a crash at any point leaves either the old archive or the new one plus a
//! list of exact edits still to make, never a copy whose keys the store cannot map back.
//!
//! A finding line whose text the copy cannot give (the copy deleted, or its lines out of step)
//! gets a random key: unconfirmable, consistent within the archive, only not reproducible by a
//! re-read of the source. A damaged copy is re-keyed as far as it reads, once: its lines cannot
//! be read by their numbers, so (of a source read once) each finding line's record gets a
//! random key by its position, and the key frames on both sides of the damage, which list lines
//! by number, get the same keys ([`Retained::set_keys`]); what does not read is never a reason
//! to try again at the next open.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use rusqlite::{Connection, Transaction, TransactionBehavior, params};

use super::Agent;
use super::redact::has_marker;
use super::retain::Retained;
use crate::error::Result;
use crate::keys;
use crate::store::db_err;

/// One retained copy to read: a source's generation that has findings.
struct Copy {
    source_id: i64,
    generation: i64,
    agent: String,
    source_key: String,
    session_id: i64,
    session_key: String,
    /// The source was never read again (generation 0 is its only one).
    only_generation: bool,
}

/// How a room above the archive re-keys the record keys it stores: `(session row, old key, new
/// key)`, in the migration's transaction.
pub(crate) type RekeyAbove = fn(&Connection, i64, &str, &str) -> rusqlite::Result<()>;

/// The Rust half of the migration, inside its transaction. `data_dir` holds `retained/`;
/// `above` are the rooms above that store record keys too (each re-keys its own tables).
pub(crate) fn migrate(tx: &Transaction<'_>, data_dir: &Path, above: &[RekeyAbove]) -> Result<()> {
    let db = data_dir.join(crate::store::DB_FILE);
    let e = |err| db_err(&db, err);
    let copies: Vec<Copy> = tx
        .prepare(
            "SELECT DISTINCT f.source_id, f.generation, src.agent, src.source_key, src.session_id,
                    s.session_key, src.generation = 0
             FROM secret_findings f JOIN sources src ON src.id = f.source_id
             JOIN sessions s ON s.id = src.session_id
             ORDER BY f.source_id, f.generation",
        )
        .map_err(e)?
        .query_map([], |r| {
            Ok(Copy {
                source_id: r.get(0)?,
                generation: r.get(1)?,
                agent: r.get(2)?,
                source_key: r.get(3)?,
                session_id: r.get(4)?,
                session_key: r.get(5)?,
                only_generation: r.get(6)?,
            })
        })
        .map_err(e)?
        .collect::<rusqlite::Result<_>>()
        .map_err(e)?;
    let retained = Retained::new(data_dir);
    // Per session: old key → new key.
    let mut remap: BTreeMap<(i64, String), HashMap<String, String>> = BTreeMap::new();
    for copy in &copies {
        let lines: Vec<i64> = tx
            .prepare_cached(
                "SELECT DISTINCT line_no FROM secret_findings WHERE source_id = ?1 AND generation = ?2",
            )
            .map_err(e)?
            .query_map([copy.source_id, copy.generation], |r| r.get(0))
            .map_err(e)?
            .collect::<rusqlite::Result<_>>()
            .map_err(e)?;
        // Read as far as it reads (`whole`: to the end). A copy with damage anywhere is
        // refused whole by the read, so none of its lines is taken by number.
        let read = Agent::parse(&copy.agent).and_then(|agent| {
            let path = retained.path(agent, &copy.source_key, copy.generation as u32);
            let mut whole = true;
            let lines: Vec<_> = match retained.lines(&path, 0, 0) {
                Ok(lines) => lines
                    .map_while(|line| line.map_err(|_| whole = false).ok())
                    .collect(),
                // There, but damaged: none of its lines is read by its number.
                Err(_) if path.exists() => {
                    whole = false;
                    Vec::new()
                }
                Err(_) => return None,
            };
            Some((lines, whole))
        });
        let Some((read, whole)) = read else {
            if copy.only_generation {
                rekey_by_position(tx, copy, &lines, &mut remap, &db)?;
            } else {
                tracing::warn!(
                    source = copy.source_id,
                    generation = copy.generation,
                    "retained copy missing: records of its redacted lines keep their old keys"
                );
            }
            continue;
        };
        let session = remap
            .entry((copy.session_id, copy.session_key.clone()))
            .or_default();
        for n in lines {
            let (old, new) = match usize::try_from(n).ok().and_then(|i| read.get(i)) {
                Some(line) => {
                    let Some(old) = &line.record_hash else {
                        continue;
                    };
                    let text = String::from_utf8_lossy(&line.text);
                    let new = if has_marker(&text) {
                        keys::redacted_record_hash(&line.text)
                    } else {
                        random_key()
                    };
                    (old.clone(), new)
                }
                // Not read (the copy is damaged), in a source read once: its record at that line
                // gets a random key, and the key frames that read, which list lines by number,
                // are given it too ([`finish`]), so no stored key of the line confirms a guess.
                None if !whole && copy.only_generation => {
                    let Some(old) = record_at(tx, copy.source_id, n).map_err(e)? else {
                        continue;
                    };
                    (old, random_key())
                }
                None => continue,
            };
            session.insert(old, new.clone());
            tx.prepare_cached(
                "INSERT OR REPLACE INTO retained_rekey (source_id, generation, line_no, record_hash)
                 VALUES (?1, ?2, ?3, ?4)",
            )
            .map_err(e)?
            .execute(params![copy.source_id, copy.generation, n, new])
            .map_err(e)?;
        }
    }
    for ((session_id, session_key), map) in &remap {
        for (old, new) in map {
            apply(tx, *session_id, session_key, old, new).map_err(e)?;
            for rekey in above {
                rekey(tx, *session_id, old, new).map_err(e)?;
            }
        }
    }
    Ok(())
}

/// The key of the record at line `n` of the source `source_id` (read once: its records' line
/// numbers are its copy's).
fn record_at(tx: &Transaction<'_>, source_id: i64, n: i64) -> rusqlite::Result<Option<String>> {
    use rusqlite::OptionalExtension as _;
    tx.prepare_cached(
        "SELECT record_hash FROM records WHERE source_id = ?1 AND line_no = ?2 LIMIT 1",
    )?
    .query_row([source_id, n], |r| r.get(0))
    .optional()
}

/// A copy is gone but the source was read once only: its records' line numbers are the finding
/// lines' own, so those records get random keys.
fn rekey_by_position(
    tx: &Transaction<'_>,
    copy: &Copy,
    lines: &[i64],
    remap: &mut BTreeMap<(i64, String), HashMap<String, String>>,
    db: &Path,
) -> Result<()> {
    let e = |err| db_err(db, err);
    let session = remap
        .entry((copy.session_id, copy.session_key.clone()))
        .or_default();
    for &n in lines {
        let old: Option<String> = tx
            .prepare_cached(
                "SELECT record_hash FROM records WHERE source_id = ?1 AND line_no = ?2 LIMIT 1",
            )
            .map_err(e)?
            .query_row([copy.source_id, n], |r| r.get(0))
            .ok();
        if let Some(old) = old {
            session.insert(old, random_key());
        }
    }
    Ok(())
}

/// Replace `old` by `new` everywhere the archive stores it for one session.
fn apply(
    tx: &Connection,
    session_id: i64,
    session_key: &str,
    old: &str,
    new: &str,
) -> rusqlite::Result<()> {
    // Two lines that redact to the same text get one key; a record already holding it makes the
    // other unique with its row id (still nothing a guess can be checked against).
    tx.prepare_cached(
        "UPDATE OR IGNORE records SET record_hash = ?3 WHERE session_id = ?1 AND record_hash = ?2",
    )?
    .execute(params![session_id, old, new])?;
    tx.prepare_cached(
        "UPDATE records SET record_hash = ?3 || '~' || id WHERE session_id = ?1 AND record_hash = ?2",
    )?
    .execute(params![session_id, old, new])?;
    for column in ["first_line_hash", "last_line_hash"] {
        tx.prepare_cached(&format!(
            "UPDATE sources SET {column} = ?3 WHERE session_id = ?1 AND {column} = ?2"
        ))?
        .execute(params![session_id, old, new])?;
    }
    // Turns opened by a re-keyed record.
    let turns: Vec<(i64, String)> = tx
        .prepare_cached(
            "SELECT t.id, r.record_hash FROM turns t
             JOIN records r ON r.session_id = t.session_id AND r.ordinal = t.opening_ordinal
             WHERE t.session_id = ?1 AND (r.record_hash = ?2 OR r.record_hash LIKE ?2 || '~%')",
        )?
        .query_map(params![session_id, new], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<rusqlite::Result<_>>()?;
    for (turn, hash) in turns {
        tx.prepare_cached("UPDATE OR IGNORE turns SET turn_key = ?2 WHERE id = ?1")?
            .execute(params![turn, keys::turn_key(session_key, &hash)])?;
    }
    Ok(())
}

/// A key nothing can be checked against: the hash of 32 random bytes.
fn random_key() -> String {
    let mut bytes = Vec::with_capacity(32);
    bytes.extend_from_slice(uuid::Uuid::new_v4().as_bytes());
    bytes.extend_from_slice(uuid::Uuid::new_v4().as_bytes());
    keys::redacted_record_hash(&bytes)
}

/// A retained copy with keys still to write.
struct PendingCopy {
    agent: String,
    source_key: String,
    /// The source's current generation (whose copy's length the store records).
    current_generation: i64,
    keys: HashMap<u64, String>,
}

/// Write the keys `retained_rekey` still lists into the retained copies, under the store's write
/// lock (no capture appends meanwhile). Idempotent: a crash leaves the rows for the next open.
/// A copy that cannot be rewritten is reported and left for the next open.
pub(crate) fn finish(conn: &mut Connection, data_dir: &Path) -> Result<()> {
    let db = data_dir.join(crate::store::DB_FILE);
    let e = |err| db_err(&db, err);
    let pending: bool = conn
        .query_row("SELECT EXISTS (SELECT 1 FROM retained_rekey)", [], |r| {
            r.get(0)
        })
        .map_err(e)?;
    if !pending {
        return Ok(());
    }
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(e)?;
    // Per (source, generation): the copy's name, the source's current generation, the keys.
    let mut copies: BTreeMap<(i64, i64), PendingCopy> = BTreeMap::new();
    {
        let mut stmt = tx
            .prepare(
                "SELECT k.source_id, k.generation, src.agent, src.source_key, src.generation,
                        k.line_no, k.record_hash
                 FROM retained_rekey k JOIN sources src ON src.id = k.source_id",
            )
            .map_err(e)?;
        let mut rows = stmt.query([]).map_err(e)?;
        while let Some(r) = rows.next().map_err(e)? {
            let line_no: i64 = r.get(5).map_err(e)?;
            let key: String = r.get(6).map_err(e)?;
            let copy = match copies.entry((r.get(0).map_err(e)?, r.get(1).map_err(e)?)) {
                std::collections::btree_map::Entry::Occupied(o) => o.into_mut(),
                std::collections::btree_map::Entry::Vacant(v) => v.insert(PendingCopy {
                    agent: r.get(2).map_err(e)?,
                    source_key: r.get(3).map_err(e)?,
                    current_generation: r.get(4).map_err(e)?,
                    keys: HashMap::new(),
                }),
            };
            copy.keys.insert(line_no as u64, key);
        }
    }
    let retained = Retained::new(data_dir);
    for ((source, generation), copy) in copies {
        let Some(agent) = Agent::parse(&copy.agent) else {
            continue;
        };
        let path = retained.path(agent, &copy.source_key, generation as u32);
        match retained.set_keys(&path, &copy.keys) {
            Ok(len) => {
                // Damage is kept as it is, and is no reason to try again at the next open.
                if let Ok(damage) = Retained::damage(&path)
                    && !damage.is_empty()
                {
                    tracing::warn!(
                        copy = %path.display(),
                        damaged_runs = damage.len(),
                        "retained copy re-keyed as far as it reads: key frames inside its \
                         damaged bytes keep their old keys"
                    );
                }
                if let Some(len) = len.filter(|_| generation == copy.current_generation) {
                    tx.execute(
                        "UPDATE sources SET retained_len = ?2 WHERE id = ?1",
                        params![source, len as i64],
                    )
                    .map_err(e)?;
                }
                tx.execute(
                    "DELETE FROM retained_rekey WHERE source_id = ?1 AND generation = ?2",
                    params![source, generation],
                )
                .map_err(e)?;
            }
            Err(err) => tracing::warn!(
                copy = %path.display(),
                error = %err,
                "retained copy not re-keyed yet; trying again at the next open"
            ),
        }
    }
    tx.commit().map_err(e)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The old archive of `tests/fixtures/archive-v11`, its database still at schema 11.
    fn old_archive(dir: &Path) -> Connection {
        let fixture =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/archive-v11");
        let db =
            zstd::stream::decode_all(std::fs::File::open(fixture.join("cairn.db.zst")).unwrap())
                .unwrap();
        std::fs::write(dir.join(crate::store::DB_FILE), db).unwrap();
        let copies = dir.join("retained/claude");
        std::fs::create_dir_all(&copies).unwrap();
        for entry in std::fs::read_dir(fixture.join("retained/claude")).unwrap() {
            let entry = entry.unwrap();
            std::fs::copy(entry.path(), copies.join(entry.file_name())).unwrap();
        }
        Connection::open(dir.join(crate::store::DB_FILE)).unwrap()
    }

    fn frame_keys(dir: &Path) -> Vec<Option<String>> {
        let retained = Retained::new(dir);
        let path = std::fs::read_dir(dir.join("retained/claude"))
            .unwrap()
            .next()
            .unwrap()
            .unwrap()
            .path();
        retained
            .read(&path, 0)
            .unwrap()
            .into_iter()
            .map(|l| l.record_hash)
            .collect()
    }

    /// Stopped after the migration committed (a crash before the copies were rewritten): the
    /// store lists the exact keys still to write, and any later `finish` writes them, once.
    #[test]
    fn copies_are_rewritten_after_the_commit_from_the_pending_list() {
        let dir = tempfile::tempdir().unwrap();
        let mut conn = old_archive(dir.path());
        let before = frame_keys(dir.path());
        assert_eq!(before.iter().flatten().count(), 4);
        let tx = conn.transaction().unwrap();
        tx.execute_batch(include_str!("migrations/0014_rekey_redacted_lines.sql"))
            .unwrap();
        migrate(&tx, dir.path(), &[]).unwrap();
        tx.commit().unwrap();
        // Committed, copies untouched: four keys to write.
        assert_eq!(frame_keys(dir.path()), before);
        let pending: Vec<(i64, String)> = conn
            .prepare("SELECT line_no, record_hash FROM retained_rekey ORDER BY line_no")
            .unwrap()
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap()
            .map(Result::unwrap)
            .collect();
        assert_eq!(
            pending.iter().map(|p| p.0).collect::<Vec<_>>(),
            [0, 3, 6, 7]
        );
        // The records already carry the new keys.
        for (line, key) in &pending {
            let stored: String = conn
                .query_row(
                    "SELECT record_hash FROM records WHERE line_no = ?1",
                    [line],
                    |r| r.get(0),
                )
                .unwrap();
            assert_eq!(&stored, key);
        }
        finish(&mut conn, dir.path()).unwrap();
        let after = frame_keys(dir.path());
        for (line, key) in &pending {
            assert_eq!(after[*line as usize].as_ref(), Some(key));
        }
        let left: i64 = conn
            .query_row("SELECT COUNT(*) FROM retained_rekey", [], |r| r.get(0))
            .unwrap();
        assert_eq!(left, 0);
        // Nothing more to do.
        finish(&mut conn, dir.path()).unwrap();
        assert_eq!(frame_keys(dir.path()), after);
    }
}

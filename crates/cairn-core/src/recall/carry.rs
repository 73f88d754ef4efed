//! A rebuild from the copies (`cairn reindex --from-copies`), Recall's part: what a person and
//! the agents did in Recall lives in the database alone (the entries, the reviews, edits,
//! rejections and replacements written on them, their evidence, agents' proposals and
//! feedback, the query ledger, extraction's generations and progress), so it is carried from
//! the old database (read-only, maybe damaged) into the rebuilt one, row by row, as far as
//! SQLite still reads it. What is left behind is counted and said.
//!
//! Recall names its rows by keys a rebuild keeps: entries by their own ids (carried with their
//! row ids too, so an entry lists its evidence in the order it was cited), evidence by the
//! keys of its anchor records. The one thing a rebuild renumbers is the session rows, which
//! evidence, an entry's source session and extraction's progress point at: those are mapped
//! through the session keys. Evidence then follows its anchor records in the rebuilt sessions
//! ([`super::evidence::verify_session`], as a reindex does): a range that moved is renumbered,
//! one whose records read differently in the copies revokes its entry's provenance, never left
//! vouching for what the transcript no longer says. Evidence citing a session a forget
//! tombstoned is treated as that forget treats it ([`super::forget::revoke`]); evidence citing
//! a session no copy brought back cannot be checked, so its entry's provenance is revoked.
//!
//! Extraction's progress is carried, not reset: each session's progress keeps the digests of
//! the units already read, so the next pass reads again only the units that read differently
//! now (as after a reindex). Reset, it would read every session again and stage new entries for
//! what a person already reviewed or rejected.
//!
//! Recall's index (`recall_terms`, `recall_postings`, `recall_df`, `recall_stats`) is made
//! again from the carried entries. The entries' vectors for search by meaning are not carried
//! (the semantic room's, fresh only against a revision a rebuild starts again): counted, with
//! the command that makes them again.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use rusqlite::types::Value;
use rusqlite::{Connection, params};

use crate::archive::rebuild::{Carried, Carry};
use crate::text::plural;

/// A Recall table a rebuild carries, in an order that writes each row after the rows it names.
struct Table {
    name: &'static str,
    /// What its rows are, for a person (the report puts them under `recall`).
    what: &'static str,
    /// Carry each row's `rowid` too (an entry's: its index and its evidence's order use it).
    rowid: bool,
    /// The column holding a session row id, and whether a row whose session was not rebuilt
    /// is kept (the column emptied) or left behind.
    session: Option<(&'static str, Unrebuilt)>,
    /// Columns naming a row of another table (the table, its key column): a row whose
    /// referenced row the rebuilt archive does not hold is left behind.
    parents: &'static [(&'static str, &'static str, &'static str)],
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Unrebuilt {
    /// The row stays; the column is emptied (an entry keeps its words when its source
    /// session is gone, as a forget leaves it).
    Empty,
    /// The row is left behind (it is about the session alone).
    Leave,
}

const ENTRIES: Table = Table {
    name: "recall_entries",
    what: "entries, with their reviews, edits, rejections and replacements",
    rowid: true,
    session: Some(("source_session_id", Unrebuilt::Empty)),
    parents: &[],
};

const EVIDENCE: Table = Table {
    name: "recall_evidence",
    what: "evidence (record ranges of the rebuilt sessions)",
    rowid: false,
    session: Some(("session_id", Unrebuilt::Leave)),
    parents: &[("entry_id", "recall_entries", "id")],
};

/// The rest, after entries and evidence.
const OTHERS: &[Table] = &[
    Table {
        name: "recall_proposals",
        what: "what agents proposed (through cairn mcp)",
        rowid: false,
        session: None,
        parents: &[("entry_id", "recall_entries", "id")],
    },
    Table {
        name: "recall_feedback",
        what: "agents' feedback on entries",
        rowid: false,
        session: None,
        parents: &[("entry_id", "recall_entries", "id")],
    },
    Table {
        name: "recall_query_events",
        what: "the ledger's queries",
        rowid: false,
        session: None,
        parents: &[],
    },
    Table {
        name: "recall_query_exposures",
        what: "what each query in the ledger showed",
        rowid: false,
        session: None,
        parents: &[("query_id", "recall_query_events", "id")],
    },
    Table {
        name: "recall_extract_generations",
        what: "extraction generations",
        rowid: false,
        session: None,
        parents: &[],
    },
    Table {
        name: "recall_extract_progress",
        what: "extraction progress of each session",
        rowid: false,
        session: Some(("session_id", Unrebuilt::Leave)),
        parents: &[("fingerprint", "recall_extract_generations", "fingerprint")],
    },
    Table {
        name: "recall_extract_entries",
        what: "the entries each extraction generation wrote",
        rowid: false,
        session: Some(("session_id", Unrebuilt::Leave)),
        parents: &[
            ("entry_id", "recall_entries", "id"),
            ("fingerprint", "recall_extract_generations", "fingerprint"),
        ],
    },
    Table {
        name: "recall_extract_runs",
        what: "extraction passes",
        rowid: false,
        session: None,
        parents: &[],
    },
    // Carried, not read again: the entries keep the times the places are compared with, and a
    // check reading every history again would flag anew the entries a person accepted again
    // after they were flagged.
    Table {
        name: "recall_stale_checks",
        what: "how far the staleness check read each repository's history",
        rowid: false,
        session: None,
        parents: &[],
    },
];

/// Where a session of the old database is in the rebuilt one.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Rebuilt {
    /// Rebuilt, at this row.
    At(i64),
    /// Not rebuilt: a forget tombstoned it (its key).
    Forgotten(String),
    /// Not rebuilt: no copy brought it back, or the old database no longer reads its key.
    Lost(Option<String>),
}

/// The old database's sessions by row, and where each is in the rebuilt one.
struct Sessions<'a> {
    new: &'a Connection,
    keys: HashMap<i64, String>,
    /// Why the old database's sessions could not all be read.
    unreadable: Option<String>,
    seen: HashMap<i64, Rebuilt>,
}

impl<'a> Sessions<'a> {
    fn read(old: &Connection, new: &'a Connection) -> Sessions<'a> {
        let mut keys = HashMap::new();
        let unreadable = crate::archive::rebuild::each_session_key(old, |id, key| {
            keys.insert(id, key);
        })
        .err()
        .map(|e| e.to_string());
        Sessions {
            new,
            keys,
            unreadable,
            seen: HashMap::new(),
        }
    }

    fn of(&mut self, old_row: i64) -> rusqlite::Result<Rebuilt> {
        if let Some(found) = self.seen.get(&old_row) {
            return Ok(found.clone());
        }
        let found = match self.keys.get(&old_row) {
            None => Rebuilt::Lost(None),
            Some(key) => match crate::archive::rebuild::session_row(self.new, key)? {
                Some(row) => Rebuilt::At(row),
                None if crate::archive::forget::is_forgotten_session(self.new, key)? => {
                    Rebuilt::Forgotten(key.clone())
                }
                None => Rebuilt::Lost(Some(key.clone())),
            },
        };
        self.seen.insert(old_row, found.clone());
        Ok(found)
    }
}

/// The columns of `table` both databases have, in the rebuilt one's order: an old database of
/// an older schema lacks the newest (the rebuilt rows take their defaults).
fn shared_columns(
    old: &Connection,
    new: &Connection,
    table: &str,
) -> rusqlite::Result<Vec<String>> {
    let columns = |conn: &Connection| -> rusqlite::Result<Vec<String>> {
        conn.prepare("SELECT name FROM pragma_table_info(?1) ORDER BY cid")?
            .query_map([table], |r| r.get(0))?
            .collect()
    };
    let had = columns(old)?;
    Ok(columns(new)?
        .into_iter()
        .filter(|c| had.contains(c))
        .collect())
}

/// What one table's copy did.
#[derive(Debug, Default)]
struct Copied {
    rows: u64,
    /// Rows left behind because their session was not rebuilt ([`Unrebuilt::Leave`]).
    refused: u64,
    /// Rows not written: a row they name (an entry, a query, a generation) was not carried,
    /// or the row broke a constraint of the schema.
    orphaned: u64,
    error: Option<String>,
}

/// A row whose session was not rebuilt, as [`copy_table`] shows it to its caller.
struct Unmapped<'r> {
    columns: &'r [String],
    values: &'r [Value],
    /// The index of the session column in both.
    session_column: usize,
    session: &'r Rebuilt,
}

/// Copy `t` from `old` into `new` row by row, the session column mapped through `sessions`.
/// `notice` sees each row whose session was not rebuilt before the table's [`Unrebuilt`]
/// decides what becomes of it. Never fails: the error that stopped the copy is returned with
/// what was copied before it.
fn copy_table(
    old: &Connection,
    new: &Connection,
    t: &Table,
    sessions: &mut Sessions<'_>,
    notice: &mut dyn FnMut(&Unmapped<'_>),
) -> Copied {
    let mut out = Copied::default();
    let copied = (|| -> rusqlite::Result<()> {
        let mut columns = shared_columns(old, new, t.name)?;
        if t.rowid {
            columns.insert(0, "rowid".to_owned());
        }
        let position = |name: &str| columns.iter().position(|c| c == name);
        let session = t
            .session
            .and_then(|(column, unrebuilt)| position(column).map(|i| (i, unrebuilt)));
        let order = if t.rowid { " ORDER BY rowid" } else { "" };
        let mut read = old.prepare(&format!(
            "SELECT {} FROM {}{order}",
            columns.join(", "),
            t.name
        ))?;
        let mut write = new.prepare(&insert_sql(t, &columns))?;
        let mut found = read.query([])?;
        while let Some(row) = found.next()? {
            let mut values: Vec<Value> = (0..columns.len())
                .map(|i| row.get(i))
                .collect::<rusqlite::Result<_>>()?;
            if let Some((i, unrebuilt)) = session
                && let Value::Integer(old_row) = values[i]
            {
                match sessions.of(old_row)? {
                    Rebuilt::At(new_row) => values[i] = Value::Integer(new_row),
                    elsewhere => {
                        notice(&Unmapped {
                            columns: &columns,
                            values: &values,
                            session_column: i,
                            session: &elsewhere,
                        });
                        if unrebuilt == Unrebuilt::Leave {
                            out.refused += 1;
                            continue;
                        }
                        values[i] = Value::Null;
                    }
                }
            }
            match write.execute(rusqlite::params_from_iter(values))? {
                0 => out.orphaned += 1,
                n => out.rows += n as u64,
            }
        }
        Ok(())
    })();
    out.error = copied.err().map(|e| e.to_string());
    out
}

/// The insert of `t`'s `columns`, written only when every row it names is there.
fn insert_sql(t: &Table, columns: &[String]) -> String {
    let marks: Vec<String> = (1..=columns.len()).map(|i| format!("?{i}")).collect();
    let mut guards: Vec<String> = t
        .parents
        .iter()
        .filter_map(|(column, table, key)| {
            let i = columns.iter().position(|c| c == column)? + 1;
            Some(format!("EXISTS (SELECT 1 FROM {table} WHERE {key} = ?{i})"))
        })
        .collect();
    if guards.is_empty() {
        guards.push("1".to_owned());
    }
    format!(
        "INSERT OR IGNORE INTO {} ({}) SELECT {} WHERE {}",
        t.name,
        columns.join(", "),
        marks.join(", "),
        guards.join(" AND ")
    )
}

/// Evidence whose session was not rebuilt, by why.
#[derive(Default)]
struct Unanchored {
    /// Rows citing forgotten sessions, by the session's key: written again under a session
    /// row standing in for it, for the forget to revoke ([`forget_again`]).
    forgotten: BTreeMap<String, Vec<Vec<Value>>>,
    /// The column holding the session row in those rows.
    session_column: usize,
    /// The entries those rows belong to.
    forgotten_entries: BTreeSet<String>,
    /// Entries citing sessions no copy brought back, with the sessions' keys where known.
    lost: BTreeMap<String, BTreeSet<String>>,
    lost_rows: u64,
}

/// Carry Recall's tables from `old` (read-only, maybe damaged) into the rebuilt `new`, whose
/// sessions are all rebuilt and whose forget tombstones are carried (see the module's
/// comment), in one transaction. `now` stamps the entries whose provenance is revoked. Never
/// fails: what could not be read or written is named in the returned [`Carry`].
pub fn carry_from(old: &Connection, new: &Connection, now: &str) -> Carry {
    let mut carry = Carry::default();
    let tx = match new.unchecked_transaction() {
        Ok(tx) => tx,
        Err(e) => {
            carry.not_carried.push(format!(
                "Recall: entries, evidence and reviews, not carried: the rebuilt database \
                 refused the write ({e})"
            ));
            return carry;
        }
    };
    let mut sessions = Sessions::read(old, &tx);

    let entries = copy_table(old, &tx, &ENTRIES, &mut sessions, &mut |_| {});
    let mut unanchored = Unanchored::default();
    let evidence = copy_table(old, &tx, &EVIDENCE, &mut sessions, &mut |row| {
        // Evidence of an entry not carried is no one's.
        let entry = match row
            .columns
            .iter()
            .position(|c| c == "entry_id")
            .map(|e| &row.values[e])
        {
            Some(Value::Text(id)) if super::store::exists(&tx, id).unwrap_or(false) => id.clone(),
            _ => return,
        };
        match row.session {
            Rebuilt::Forgotten(key) => {
                unanchored.session_column = row.session_column;
                unanchored.forgotten_entries.insert(entry);
                unanchored
                    .forgotten
                    .entry(key.clone())
                    .or_default()
                    .push(row.values.to_vec());
            }
            Rebuilt::Lost(key) => {
                unanchored.lost_rows += 1;
                unanchored
                    .lost
                    .entry(entry)
                    .or_default()
                    .extend(key.clone());
            }
            Rebuilt::At(_) => {}
        }
    });
    for (t, copied) in [(&ENTRIES, &entries), (&EVIDENCE, &evidence)] {
        push(&mut carry, t, copied);
    }
    for t in OTHERS {
        let copied = copy_table(old, &tx, t, &mut sessions, &mut |_| {});
        push(&mut carry, t, &copied);
    }

    let forgotten_rows: usize = unanchored.forgotten.values().map(Vec::len).sum();
    if forgotten_rows > 0 {
        match forget_again(old, &tx, &unanchored, now) {
            Ok(()) => carry.not_carried.push(format!(
                "Recall: {} citing forgotten sessions, revoked as the forget does (an entry \
                 left with no evidence that no person accepted goes with them; one a person \
                 accepted goes back to the inbox)",
                plural(forgotten_rows, "evidence range")
            )),
            Err(e) => {
                carry.not_carried.push(format!(
                    "Recall: {} citing forgotten sessions, not carried ({e}); their entries' \
                     provenance is revoked",
                    plural(forgotten_rows, "evidence range")
                ));
                for entry in &unanchored.forgotten_entries {
                    unanchored.lost.entry(entry.clone()).or_default();
                }
            }
        }
    }
    if !unanchored.lost.is_empty() {
        let revoked = revoke_lost(&tx, &unanchored.lost, now);
        carry.not_carried.push(match revoked {
            Ok(n) => format!(
                "Recall: {} in sessions that were not rebuilt (no copy of them was left{}): \
                 provenance revoked on {}, untrusted until a person reviews them again",
                plural(unanchored.lost_rows, "evidence range"),
                match &sessions.unreadable {
                    Some(why) => format!(", or the old database no longer reads them: {why}"),
                    None => String::new(),
                },
                plural(n, "entry")
            ),
            Err(e) => format!(
                "Recall: {} in sessions that were not rebuilt; revoking their entries' \
                 provenance failed ({e})",
                plural(unanchored.lost_rows, "evidence range")
            ),
        });
    }

    // The evidence the damage hid: an entry left with none of it vouches for nothing.
    if let Some(why) = &evidence.error {
        let note =
            format!("provenance revoked: its evidence is not readable in the old database ({why})");
        match new_without_evidence(&tx, &note, now) {
            Ok(0) => {}
            Ok(n) => carry.not_carried.push(format!(
                "Recall: provenance revoked on {}: their evidence is not readable in the old \
                 database",
                plural(n, "entry")
            )),
            Err(e) => carry.not_carried.push(format!(
                "Recall: entries whose evidence is not readable in the old database, their \
                 provenance not revoked ({e})"
            )),
        }
    }
    match follow_anchors(&tx, now) {
        Ok(0) => {}
        Ok(n) => carry.not_carried.push(format!(
            "Recall: {} whose evidence reads differently in the retained copies: provenance \
             revoked, as a reindex does; untrusted until a person reviews them again",
            plural(n, "entry")
        )),
        Err(e) => carry
            .not_carried
            .push(match distrust_all(&tx, &e.to_string(), now) {
                Ok(n) => format!(
                    "Recall: the carried evidence could not be checked against the rebuilt \
                 sessions ({e}): provenance revoked on {}, untrusted until a person reviews \
                 them again",
                    plural(n, "entry")
                ),
                Err(again) => format!(
                    "Recall: the carried evidence could not be checked against the rebuilt \
                 sessions ({e}), nor its entries' provenance revoked ({again})"
                ),
            }),
    }
    if let Err(e) = index_again(&tx) {
        carry.not_carried.push(format!(
            "Recall: its search index could not be made again ({e}); `cairn recall` finds \
             only what was indexed"
        ));
    }
    if let Err(e) = tx.commit() {
        carry.carried.clear();
        carry.not_carried.push(format!(
            "Recall: entries, evidence and reviews, not carried: the rebuilt database refused \
             the write ({e})"
        ));
        return carry;
    }
    carry
        .not_carried
        .extend(crate::semantic::carry::recall_vectors_left(old));
    carry
}

/// `copied` of `t` in the report: the rows carried (and the error that stopped the copy), and
/// those left because what they name was not carried.
fn push(carry: &mut Carry, t: &Table, copied: &Copied) {
    carry.carried.push(Carried {
        what: t.what,
        rows: copied.rows,
        error: copied.error.clone(),
    });
    if copied.orphaned > 0 {
        carry.not_carried.push(format!(
            "Recall: {}: {} naming an entry, query or generation the rebuilt archive does not \
             hold",
            t.what,
            plural(copied.orphaned, "row")
        ));
    }
    if copied.refused > 0 && t.name != EVIDENCE.name {
        carry.not_carried.push(format!(
            "Recall: {}: {} about sessions that were not rebuilt",
            t.what,
            plural(copied.refused, "row")
        ));
    }
}

/// Evidence citing forgotten sessions, treated as the forget treats it: the forget works on
/// session rows, and the rebuilt archive has none for a forgotten session, so inside a
/// savepoint each such session gets a row standing in for it (its key and agent, nothing
/// else), the evidence is written citing it, [`super::forget::revoke`] revokes it, and the row
/// is deleted. Nothing of it stays: an error rolls the whole step back.
fn forget_again(
    old: &Connection,
    new: &Connection,
    unanchored: &Unanchored,
    now: &str,
) -> rusqlite::Result<()> {
    new.execute_batch("SAVEPOINT recall_forget_again")?;
    let done = (|| -> rusqlite::Result<()> {
        let columns = shared_columns(old, new, EVIDENCE.name)?;
        let mut write = new.prepare(&insert_sql(&EVIDENCE, &columns))?;
        let mut rows = Vec::new();
        for (key, evidence) in &unanchored.forgotten {
            let Some(row) = crate::archive::rebuild::stand_in_for_forgotten(new, key, now)? else {
                return Err(rusqlite::Error::QueryReturnedNoRows);
            };
            rows.push(row);
            for values in evidence {
                let mut values = values.clone();
                values[unanchored.session_column] = Value::Integer(row);
                write.execute(rusqlite::params_from_iter(values))?;
            }
        }
        super::forget::revoke(new, &rows, now)?;
        for row in rows {
            crate::archive::rebuild::drop_stand_in(new, row)?;
        }
        Ok(())
    })();
    match done {
        Ok(()) => new.execute_batch("RELEASE recall_forget_again"),
        Err(e) => {
            let _ =
                new.execute_batch("ROLLBACK TO recall_forget_again; RELEASE recall_forget_again");
            Err(e)
        }
    }
}

/// The entries citing sessions no copy brought back: their evidence there cannot be checked,
/// so their provenance is revoked, saying which sessions. Returns how many were revoked.
fn revoke_lost(
    new: &Connection,
    lost: &BTreeMap<String, BTreeSet<String>>,
    now: &str,
) -> rusqlite::Result<u64> {
    let mut revoke = new.prepare(
        "UPDATE recall_entries SET provenance_ok = 0, provenance_note = ?2, updated_at = ?3
         WHERE id = ?1 AND provenance_ok = 1",
    )?;
    let mut revoked = 0;
    for (entry, keys) in lost {
        let which = if keys.is_empty() {
            "a session".to_owned()
        } else {
            keys.iter()
                .map(String::as_str)
                .collect::<Vec<_>>()
                .join(", ")
        };
        let note = format!(
            "provenance revoked: the evidence it cites in {which} was not rebuilt from the \
             retained copies"
        );
        revoked += revoke.execute(params![entry, note, now])? as u64;
    }
    Ok(revoked)
}

/// Every rebuilt session's carried evidence checked against its records as a reindex checks
/// it ([`super::evidence::verify_session`]), and, in a session whose copies held lines today's
/// rules redact further, the digests of ranges that changed replaced
/// ([`super::evidence::forget_digests`]: one over the text the redaction removed would let a
/// guess of it be checked). Returns how many entries were revoked.
fn follow_anchors(new: &Connection, now: &str) -> crate::Result<u32> {
    let db = crate::store::err_in(new);
    let cited: Vec<i64> = new
        .prepare("SELECT DISTINCT session_id FROM recall_evidence ORDER BY session_id")
        .and_then(|mut s| s.query_map([], |r| r.get(0))?.collect())
        .map_err(db)?;
    let mut revoked = 0;
    for session in cited {
        let redacted_further =
            crate::archive::rebuild::redacted_further(new, session).map_err(db)?;
        revoked += super::evidence::verify_session(new, session, now)?;
        if redacted_further {
            super::evidence::forget_digests(new, session)?;
        }
    }
    Ok(revoked)
}

/// Entries trusted to their evidence that have none in the rebuilt archive: provenance
/// revoked with `note`. Returns how many.
fn new_without_evidence(new: &Connection, note: &str, now: &str) -> rusqlite::Result<u64> {
    Ok(new.execute(
        "UPDATE recall_entries SET provenance_ok = 0, provenance_note = ?1, updated_at = ?2
         WHERE provenance_ok = 1
           AND NOT EXISTS (SELECT 1 FROM recall_evidence v WHERE v.entry_id = recall_entries.id)",
        params![note, now],
    )? as u64)
}

/// When the carried evidence could not be checked (`why`): every entry that cites any has its
/// provenance revoked, as none of it is known to say what it said. Returns how many.
fn distrust_all(new: &Connection, why: &str, now: &str) -> rusqlite::Result<u64> {
    Ok(new.execute(
        "UPDATE recall_entries SET provenance_ok = 0, provenance_note = ?1, updated_at = ?2
         WHERE provenance_ok = 1
           AND EXISTS (SELECT 1 FROM recall_evidence v WHERE v.entry_id = recall_entries.id)",
        params![
            format!(
                "provenance revoked: its evidence could not be checked against the archive \
                 rebuilt from the copies ({why})"
            ),
            now
        ],
    )? as u64)
}

/// Recall's index made again from the carried entries and the evidence they kept.
fn index_again(new: &Connection) -> rusqlite::Result<()> {
    let ids: Vec<String> = new
        .prepare("SELECT id FROM recall_entries ORDER BY rowid")?
        .query_map([], |r| r.get(0))?
        .collect::<rusqlite::Result<_>>()?;
    for id in ids {
        super::store::reindex(new, &id)?;
    }
    Ok(())
}

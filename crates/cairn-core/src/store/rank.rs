//! `cairn_bm25(table, weights…)`: FTS5's `bm25` with each phrase's document count kept between
//! queries.
//!
//! FTS5 keeps no document frequency, so its `bm25` computes a phrase's IDF by visiting every row
//! the phrase is in, on every query: about 10 ms a common word over 1.5M records, most of a
//! session search's full-text leg (bench/RESULTS.md, "Where the full-text leg's time goes").
//! This function is the same formula in the same order of operations (k1 = 1.2, b = 0.75, the
//! per-column weights from its arguments, an IDF floored at 1e-6), so its scores are `bm25`'s
//! bit for bit; it only remembers each phrase's row count, keyed by the phrase's tokens, and
//! forgets them all whenever the database changes (SQLite's data version of `main`, which moves
//! with every write of this connection and every commit of another, in this process or not).
//!
//! The tokens are all a cached count is keyed by, so only a query made of plain quoted phrases
//! (`"a" "b c" OR "d"`: no prefix `*`, no column filter, no `NEAR`) may use it:
//! [`plain_phrases`] says which, and any other query ranks with `bm25`.
//!
//! FTS5's ranking functions are registered through its C API (`fts5_api.xCreateFunction`),
//! which rusqlite does not wrap; this module holds the workspace's only `unsafe` besides the
//! thread-count setter, each block with what makes it sound.
#![allow(unsafe_code)]

use std::collections::HashMap;
use std::ffi::{c_int, c_void};
use std::panic::AssertUnwindSafe;
use std::ptr;
use std::sync::Mutex;

use rusqlite::{Connection, ffi};

/// The function's SQL name.
pub const NAME: &str = "cairn_bm25";

/// BM25's constants, as FTS5's `bm25` has them.
const K1: f64 = 1.2;
const B: f64 = 0.75;

/// Phrases whose counts are kept; past it the cache starts again (a query names a few).
const MAX_CACHED: usize = 8192;

/// What one connection's function keeps: the connection, to ask whether the database changed,
/// and the counts.
struct Shared {
    db: *mut ffi::sqlite3,
    cache: Mutex<Cache>,
}

/// The phrases' row counts, and the state of the database they were counted in.
#[derive(Default)]
struct Cache {
    /// (`main`'s data version, the table's row count, its token total) when counted.
    state: (u32, i64, i64),
    /// A phrase's tokens (each followed by a 0 byte) → the rows holding it.
    rows: HashMap<Vec<u8>, i64>,
}

/// What one query computes on its first row (FTS5's per-query auxiliary data).
struct Query {
    idf: Vec<f64>,
    avgdl: f64,
    freq: Vec<f64>,
}

#[cfg(test)]
thread_local! {
    /// How many phrases were counted by visiting their rows, on this thread (tests only).
    static COUNTED: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// Register [`NAME`] on `conn`, once per connection (registering again adds a newer one that
/// shadows the first, with a cache of its own; both are freed when the connection closes).
pub fn register(conn: &Connection) -> rusqlite::Result<()> {
    let failed = |rc: c_int, what: &str| {
        rusqlite::Error::SqliteFailure(ffi::Error::new(rc), Some(format!("{NAME}: {what}")))
    };
    // SAFETY: `handle` is the live connection `conn` borrows for this whole function; the
    // statement is prepared, bound, stepped and finalized on it here and nowhere else. The
    // pointer bound is to `api`, a local that outlives the statement, under the type name FTS5
    // documents for handing out its API ("fts5_api_ptr"), with no destructor.
    let api = unsafe {
        let db = conn.handle();
        let mut stmt: *mut ffi::sqlite3_stmt = ptr::null_mut();
        let rc = ffi::sqlite3_prepare_v2(
            db,
            c"SELECT fts5(?1)".as_ptr(),
            -1,
            &mut stmt,
            ptr::null_mut(),
        );
        if rc != ffi::SQLITE_OK {
            return Err(failed(rc, "FTS5 is not available"));
        }
        let mut api: *mut ffi::fts5_api = ptr::null_mut();
        ffi::sqlite3_bind_pointer(
            stmt,
            1,
            (&raw mut api).cast::<c_void>(),
            c"fts5_api_ptr".as_ptr(),
            None,
        );
        ffi::sqlite3_step(stmt);
        ffi::sqlite3_finalize(stmt);
        api
    };
    if api.is_null() {
        return Err(failed(ffi::SQLITE_ERROR, "FTS5 gave no API"));
    }
    let shared = Box::into_raw(Box::new(Shared {
        // SAFETY: the connection's handle; the function (and so this copy) lives no longer than
        // the connection, whose closing destroys it.
        db: unsafe { conn.handle() },
        cache: Mutex::new(Cache::default()),
    }));
    // SAFETY: `api` is FTS5's API object of this connection, valid while the connection is open.
    // `shared` is a leaked Box that FTS5 owns from here: it hands it back to `score` as the
    // function's user data and to `drop_cache` (exactly once) when the function is replaced or
    // the connection closes; if registering fails, it was never handed over and is freed here.
    unsafe {
        let Some(create) = (*api).xCreateFunction else {
            drop(Box::from_raw(shared));
            return Err(failed(ffi::SQLITE_ERROR, "FTS5 cannot add functions"));
        };
        let rc = create(
            api,
            c"cairn_bm25".as_ptr(),
            shared.cast::<c_void>(),
            Some(bm25),
            Some(drop_cache),
        );
        if rc != ffi::SQLITE_OK {
            drop(Box::from_raw(shared));
            return Err(failed(rc, "FTS5 refused the function"));
        }
    }
    Ok(())
}

/// Whether the FTS5 expression `expr` is only plain quoted phrases, separated by spaces or
/// `OR` (what Cairn's own searches build): then a phrase's tokens say exactly which rows it
/// matches, and [`NAME`] may rank it.
pub fn plain_phrases(expr: &str) -> bool {
    let mut rest = expr.trim_start();
    if rest.is_empty() {
        return false;
    }
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix("OR ") {
            rest = after.trim_start();
            continue;
        }
        let Some(body) = rest.strip_prefix('"') else {
            return false;
        };
        // The phrase ends at a quote that is not doubled.
        let mut end = None;
        let mut chars = body.char_indices().peekable();
        while let Some((i, c)) = chars.next() {
            if c == '"' {
                if chars.peek().is_some_and(|&(_, n)| n == '"') {
                    chars.next();
                } else {
                    end = Some(i);
                    break;
                }
            }
        }
        let Some(end) = end else {
            return false;
        };
        rest = &body[end + 1..];
        // A phrase ends the expression or is followed by a space (not `*`, `:` or `+`).
        if !(rest.is_empty() || rest.starts_with(' ')) {
            return false;
        }
        rest = rest.trim_start();
    }
    true
}

/// FTS5's destructor of the function's user data.
unsafe extern "C" fn drop_cache(p: *mut c_void) {
    // SAFETY: `p` is the Box `register` leaked, handed back once by FTS5.
    drop(unsafe { Box::from_raw(p.cast::<Shared>()) });
}

/// FTS5's destructor of a query's auxiliary data.
unsafe extern "C" fn drop_query(p: *mut c_void) {
    // SAFETY: `p` is the Box `score` leaked into `xSetAuxdata`, handed back once by FTS5.
    drop(unsafe { Box::from_raw(p.cast::<Query>()) });
}

/// The count callback of `xQueryPhrase`: one more row holds the phrase.
unsafe extern "C" fn count_row(
    _api: *const ffi::Fts5ExtensionApi,
    _fts: *mut ffi::Fts5Context,
    n: *mut c_void,
) -> c_int {
    // SAFETY: `n` is the `i64` `phrase_rows` passes, alive for the whole `xQueryPhrase` call.
    unsafe { *n.cast::<i64>() += 1 };
    ffi::SQLITE_OK
}

/// The function FTS5 calls for each row ranked.
unsafe extern "C" fn bm25(
    api: *const ffi::Fts5ExtensionApi,
    fts: *mut ffi::Fts5Context,
    ctx: *mut ffi::sqlite3_context,
    n_val: c_int,
    values: *mut *mut ffi::sqlite3_value,
) {
    // Nothing may unwind into SQLite: a panic is an error of this row.
    // SAFETY: FTS5 passes its API, the query's context, the result context and `n_val`
    // argument values, all valid for this call.
    let scored = std::panic::catch_unwind(AssertUnwindSafe(|| unsafe {
        score(&*api, fts, n_val, values)
    }));
    // SAFETY: `ctx` is this call's result context.
    unsafe {
        match scored {
            Ok(Ok(s)) => ffi::sqlite3_result_double(ctx, -s),
            Ok(Err(rc)) => ffi::sqlite3_result_error_code(ctx, rc),
            Err(_) => ffi::sqlite3_result_error_code(ctx, ffi::SQLITE_INTERNAL),
        }
    }
}

/// `Err(rc)` unless `rc` is `SQLITE_OK`.
fn ok(rc: c_int) -> Result<(), c_int> {
    if rc == ffi::SQLITE_OK {
        Ok(())
    } else {
        Err(rc)
    }
}

/// The row's BM25 score (positive; `bm25` returns it negated), as `fts5Bm25Function` computes it.
///
/// # Safety
/// `api`, `fts`, `n_val` and `values` are what FTS5 passed to the function for this row.
unsafe fn score(
    api: &ffi::Fts5ExtensionApi,
    fts: *mut ffi::Fts5Context,
    n_val: c_int,
    values: *mut *mut ffi::sqlite3_value,
) -> Result<f64, c_int> {
    let missing = ffi::SQLITE_ERROR;
    let get_aux = api.xGetAuxdata.ok_or(missing)?;
    // SAFETY (every call below): `fts` is this query's context, valid for the call; the out
    // pointers are locals.
    let mut query = unsafe { get_aux(fts, 0) }.cast::<Query>();
    if query.is_null() {
        let fresh = Box::new(unsafe { first_row(api, fts)? });
        let set_aux = api.xSetAuxdata.ok_or(missing)?;
        query = Box::into_raw(fresh);
        // On failure FTS5 has already called `drop_query` on it.
        ok(unsafe { set_aux(fts, query.cast::<c_void>(), Some(drop_query)) })?;
    }
    // SAFETY: the query's data, owned by FTS5 until the query ends; only this function (one
    // row at a time, on the query's thread) touches it.
    let q = unsafe { &mut *query };
    q.freq.iter_mut().for_each(|f| *f = 0.0);
    let mut n_inst: c_int = 0;
    ok(unsafe { api.xInstCount.ok_or(missing)?(fts, &mut n_inst) })?;
    let inst = api.xInst.ok_or(missing)?;
    for i in 0..n_inst {
        let (mut phrase, mut column, mut offset): (c_int, c_int, c_int) = (0, 0, 0);
        ok(unsafe { inst(fts, i, &mut phrase, &mut column, &mut offset) })?;
        let weight = if n_val > column && column >= 0 {
            // SAFETY: `values` holds `n_val` values and `column` is below it.
            unsafe { ffi::sqlite3_value_double(*values.add(column as usize)) }
        } else {
            1.0
        };
        if let Some(f) = usize::try_from(phrase).ok().and_then(|p| q.freq.get_mut(p)) {
            *f += weight;
        }
    }
    let mut n_tok: c_int = 0;
    ok(unsafe { api.xColumnSize.ok_or(missing)?(fts, -1, &mut n_tok) })?;
    let d = f64::from(n_tok);
    let mut score = 0.0;
    for (idf, f) in q.idf.iter().zip(&q.freq) {
        score += idf * ((f * (K1 + 1.0)) / (f + K1 * (1.0 - B + B * d / q.avgdl)));
    }
    Ok(score)
}

/// A query's average row length and each phrase's IDF, its counts from the cache where the
/// table has not changed since they were taken.
///
/// # Safety
/// `api` and `fts` are what FTS5 passed to the function.
unsafe fn first_row(
    api: &ffi::Fts5ExtensionApi,
    fts: *mut ffi::Fts5Context,
) -> Result<Query, c_int> {
    let missing = ffi::SQLITE_ERROR;
    // SAFETY (every call below): `fts` is this query's context; out pointers are locals.
    let n_phrase = unsafe { api.xPhraseCount.ok_or(missing)?(fts) }.max(0) as usize;
    let (mut n_row, mut n_token) = (0i64, 0i64);
    ok(unsafe { api.xRowCount.ok_or(missing)?(fts, &mut n_row) })?;
    ok(unsafe { api.xColumnTotalSize.ok_or(missing)?(fts, -1, &mut n_token) })?;
    let avgdl = n_token as f64 / n_row as f64;
    // SAFETY: the user data is the `Shared` `register` handed over, alive while the function
    // is registered (which it is, as it is running).
    let shared = unsafe { &*api.xUserData.ok_or(missing)?(fts).cast::<Shared>() };
    let mut version: u32 = 0;
    // SAFETY: `shared.db` is the open connection running this query; the out pointer is a
    // local `u32`, the type SQLITE_FCNTL_DATA_VERSION writes.
    ok(unsafe {
        ffi::sqlite3_file_control(
            shared.db,
            c"main".as_ptr(),
            ffi::SQLITE_FCNTL_DATA_VERSION,
            (&raw mut version).cast::<c_void>(),
        )
    })?;
    let state = (version, n_row, n_token);
    let cache = &shared.cache;
    let mut idf = Vec::with_capacity(n_phrase);
    for i in 0..n_phrase {
        let key = unsafe { phrase_key(api, fts, i as c_int) }?;
        let known = key.as_ref().and_then(|k| {
            let c = cache.lock().ok()?;
            (c.state == state).then(|| c.rows.get(k).copied())?
        });
        let n_hit = match known {
            Some(n) => n,
            None => {
                let n = unsafe { phrase_rows(api, fts, i as c_int) }?;
                if let (Some(k), Ok(mut c)) = (key, cache.lock()) {
                    if c.state != state || c.rows.len() >= MAX_CACHED {
                        c.rows.clear();
                        c.state = state;
                    }
                    c.rows.insert(k, n);
                }
                n
            }
        };
        // As FTS5 computes it: log((N - n + 0.5) / (n + 0.5)), at least 1e-6.
        let v = (((n_row - n_hit) as f64 + 0.5) / (n_hit as f64 + 0.5)).ln();
        idf.push(if v <= 0.0 { 1e-6 } else { v });
    }
    Ok(Query {
        idf,
        avgdl,
        freq: vec![0.0; n_phrase],
    })
}

/// How many rows hold phrase `i`, by visiting them (what `bm25` does on every query).
///
/// # Safety
/// `api` and `fts` are what FTS5 passed to the function.
unsafe fn phrase_rows(
    api: &ffi::Fts5ExtensionApi,
    fts: *mut ffi::Fts5Context,
    i: c_int,
) -> Result<i64, c_int> {
    #[cfg(test)]
    COUNTED.with(|c| c.set(c.get() + 1));
    let mut n: i64 = 0;
    // SAFETY: `n` outlives the call, which invokes `count_row` with it once per row.
    ok(unsafe {
        api.xQueryPhrase.ok_or(ffi::SQLITE_ERROR)?(
            fts,
            i,
            (&raw mut n).cast::<c_void>(),
            Some(count_row),
        )
    })?;
    Ok(n)
}

/// Phrase `i`'s tokens, each followed by a 0 byte; `None` where FTS5 cannot say (then its
/// count is not cached).
///
/// # Safety
/// `api` and `fts` are what FTS5 passed to the function.
unsafe fn phrase_key(
    api: &ffi::Fts5ExtensionApi,
    fts: *mut ffi::Fts5Context,
    i: c_int,
) -> Result<Option<Vec<u8>>, c_int> {
    let (Some(size), Some(token)) = (api.xPhraseSize, api.xQueryToken) else {
        return Ok(None);
    };
    if api.iVersion < 3 {
        return Ok(None);
    }
    let mut key = Vec::new();
    // SAFETY: `fts` is this query's context; each token pointer FTS5 returns is valid for
    // `n` bytes until the query ends, and is copied at once.
    for t in 0..unsafe { size(fts, i) } {
        let (mut p, mut n): (*const std::ffi::c_char, c_int) = (ptr::null(), 0);
        ok(unsafe { token(fts, i, t, &mut p, &mut n) })?;
        if !p.is_null() && n > 0 {
            key.extend_from_slice(unsafe {
                std::slice::from_raw_parts(p.cast::<u8>(), n as usize)
            });
        }
        key.push(0);
    }
    Ok(Some(key))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table() -> Connection {
        let conn = Connection::open_in_memory().unwrap();
        register(&conn).unwrap();
        conn.execute_batch("CREATE VIRTUAL TABLE t USING fts5(text, tool_input);")
            .unwrap();
        conn
    }

    fn insert(conn: &Connection, rows: &[(&str, &str)]) {
        for (a, b) in rows {
            conn.execute("INSERT INTO t (text, tool_input) VALUES (?1, ?2)", [a, b])
                .unwrap();
        }
    }

    /// Every matching row's (rowid, bm25, cairn_bm25), with `weights` after the table.
    fn both(conn: &Connection, expr: &str, weights: &str) -> Vec<(i64, u64, u64)> {
        let sql = format!(
            "SELECT rowid, bm25(t{weights}), {NAME}(t{weights}) FROM t WHERE t MATCH ?1 ORDER BY rowid"
        );
        let mut stmt = conn.prepare(&sql).unwrap();
        stmt.query_map([expr], |r| {
            Ok((
                r.get(0)?,
                r.get::<_, f64>(1)?.to_bits(),
                r.get::<_, f64>(2)?.to_bits(),
            ))
        })
        .unwrap()
        .collect::<rusqlite::Result<_>>()
        .unwrap()
    }

    fn assert_same(conn: &Connection, expr: &str, weights: &str) -> usize {
        let rows = both(conn, expr, weights);
        for (id, a, b) in &rows {
            assert_eq!(
                a,
                b,
                "{expr} row {id}: bm25 {} against {}",
                f64::from_bits(*a),
                f64::from_bits(*b)
            );
        }
        rows.len()
    }

    fn counted() -> u64 {
        COUNTED.with(std::cell::Cell::get)
    }

    #[test]
    fn scores_are_bm25_s_bit_for_bit_and_counts_are_taken_once_per_database_state() {
        let conn = table();
        insert(
            &conn,
            &[
                ("alpha beta gamma", "{\"command\":\"ls alpha\"}"),
                ("beta beta delta", ""),
                ("alpha", "gamma gamma gamma delta"),
                ("epsilon zeta alpha beta", "alpha"),
            ],
        );
        assert_eq!(assert_same(&conn, "\"alpha\"", ""), 3);
        assert_eq!(assert_same(&conn, "\"alpha\" \"beta\"", ", 2.0, 0.5"), 2);
        assert_eq!(assert_same(&conn, "\"beta\" OR \"delta\"", ""), 4);
        assert_eq!(assert_same(&conn, "\"alpha beta\"", ""), 2);
        // The same words again: their counts come from the cache.
        let before = counted();
        assert_same(&conn, "\"alpha\" OR \"delta\"", "");
        assert_eq!(counted(), before, "no phrase counted again");
        // A write moves the data version: counted afresh, and still bm25's scores.
        insert(&conn, &[("alpha alpha omega", "beta")]);
        let before = counted();
        assert_eq!(assert_same(&conn, "\"alpha\" OR \"delta\"", ""), 5);
        assert_eq!(counted(), before + 2);
        conn.execute("DELETE FROM t WHERE rowid = 1", []).unwrap();
        assert_eq!(assert_same(&conn, "\"alpha\"", ", 1.0, 3.0"), 3);
    }

    /// A reader's counts are dropped when another connection commits (the desktop reads while
    /// a sync writes), even one that leaves the row count and token total as they were.
    #[test]
    fn another_connection_s_commit_is_seen() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.db");
        let writer = Connection::open(&path).unwrap();
        writer
            .execute_batch(
                "PRAGMA journal_mode = WAL; CREATE VIRTUAL TABLE t USING fts5(text, tool_input);",
            )
            .unwrap();
        insert(&writer, &[("alpha alpha beta", "")]);
        let reader = Connection::open(&path).unwrap();
        register(&reader).unwrap();
        assert_eq!(assert_same(&reader, "\"beta\" OR \"gamma\"", ""), 1);
        // The same row count and token total, other words.
        writer
            .execute(
                "UPDATE t SET text = 'gamma gamma gamma' WHERE rowid = 1",
                [],
            )
            .unwrap();
        let before = counted();
        assert_eq!(assert_same(&reader, "\"beta\" OR \"gamma\"", ""), 1);
        assert_eq!(counted(), before + 2, "both phrases counted again");
    }

    #[derive(Debug, Clone)]
    enum Op {
        Insert(String, String),
        Delete(usize),
        Query(Vec<Vec<&'static str>>, bool, Vec<u8>),
    }

    const WORDS: &[&str] = &["alpha", "beta", "gamma", "delta", "ab", "x1", "naïve", "zz"];

    fn op() -> impl proptest::strategy::Strategy<Value = Op> {
        use proptest::prelude::*;
        let text =
            prop::collection::vec(prop::sample::select(WORDS), 0..12).prop_map(|w| w.join(" "));
        let phrase = prop::collection::vec(prop::sample::select(WORDS), 1..3);
        prop_oneof![
            4 => (text.clone(), text).prop_map(|(a, b)| Op::Insert(a, b)),
            1 => any::<usize>().prop_map(Op::Delete),
            3 => (
                prop::collection::vec(phrase, 1..4),
                any::<bool>(),
                prop::collection::vec(0u8..5, 0..3)
            )
                .prop_map(|(p, or, w)| Op::Query(p, or, w)),
        ]
    }

    proptest::proptest! {
        /// Through any mix of inserts, deletes and queries (phrases of one or two words, any
        /// word or every word, column weights or none), every row's score is bm25's exactly.
        #[test]
        fn any_history_of_writes_and_queries_scores_as_bm25(
            ops in proptest::collection::vec(op(), 1..40)
        ) {
            let conn = table();
            let mut ids: Vec<i64> = Vec::new();
            for op in ops {
                match op {
                    Op::Insert(a, b) => {
                        insert(&conn, &[(&a, &b)]);
                        ids.push(conn.last_insert_rowid());
                    }
                    Op::Delete(i) if !ids.is_empty() => {
                        let id = ids.remove(i % ids.len());
                        conn.execute("DELETE FROM t WHERE rowid = ?1", [id]).unwrap();
                    }
                    Op::Delete(_) => {}
                    Op::Query(phrases, or, weights) => {
                        let expr = phrases
                            .iter()
                            .map(|p| format!("\"{}\"", p.join(" ")))
                            .collect::<Vec<_>>()
                            .join(if or { " OR " } else { " " });
                        proptest::prop_assert!(plain_phrases(&expr));
                        let weights: String =
                            weights.iter().map(|w| format!(", {}", f64::from(*w) / 2.0)).collect();
                        assert_same(&conn, &expr, &weights);
                    }
                }
            }
        }
    }

    /// Hostile query text (MCP arguments, a person's search) reaches the function only as
    /// quoted phrases: hundreds of them, quotes, control characters, astral and combining
    /// characters, a phrase of no token and a long one are scored as bm25 scores them.
    #[test]
    fn hostile_phrases_are_scored_as_bm25_scores_them() {
        let conn = table();
        insert(
            &conn,
            &[
                ("emoji 🎉 naïve café \u{1b}[31m red", "say \"hi\" to x"),
                ("word0 word1 word2", "word299 café"),
            ],
        );
        let mut phrases: Vec<String> = (0..300).map(|i| format!("\"word{i}\"")).collect();
        phrases.push("\"say \"\"hi\"\"\"".into());
        phrases.push("\"\u{1b}[31m red\"".into());
        phrases.push("\"🎉\"".into());
        phrases.push("\"...\"".into());
        phrases.push(format!("\"{}\"", "cafe\u{301} ".repeat(2000)));
        let expr = phrases.join(" OR ");
        assert!(plain_phrases(&expr));
        assert_eq!(assert_same(&conn, &expr, ""), 2);
    }

    #[test]
    fn only_plain_quoted_phrases_may_use_the_cache() {
        for plain in [
            "\"a\"",
            "\"a\" \"b c\"",
            "\"a\" OR \"b\"",
            "  \"say \"\"hi\"\"\" OR \"x\" ",
            "\"a*\"",
        ] {
            assert!(plain_phrases(plain), "{plain}");
        }
        for other in [
            "",
            "a",
            "\"a\"*",
            "\"a\" NEAR(\"b\")",
            "text : \"a\"",
            "\"a\" AND \"b\"",
            "\"a\" NOT \"b\"",
            "\"unclosed",
            "\"a\"+\"b\"",
            "(\"a\")",
            "^\"a\"",
        ] {
            assert!(!plain_phrases(other), "{other}");
        }
    }
}

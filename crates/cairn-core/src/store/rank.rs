//! `cairn_bm25(table, rows_0, …, rows_n-1)`: FTS5's `bm25`, each phrase's row count given.
//!
//! FTS5 keeps no document frequency, so its `bm25` computes a phrase's IDF by visiting every row
//! the phrase is in, on every query: about 10 ms a common word over 1.5M records, most of a
//! session search's full-text leg (bench/RESULTS.md, "Where the full-text leg's time goes").
//! This function is the same formula in the same order of operations (k1 = 1.2, b = 0.75, every
//! column weighing 1, an IDF floored at 1e-6) with the number of rows holding phrase `i` taken
//! from its `i`-th argument, so given the true counts its scores are `bm25`'s bit for bit. The
//! caller keeps those counts between queries (`archive::store::phrase_rows`); one count per
//! phrase is required, else the row is an error.
//!
//! Phrases are numbered in the order they are written, which is why only an expression of plain
//! quoted phrases (`"a" "b c" OR "d"`: no prefix `*`, no column filter, no `NEAR`, no brackets)
//! is ranked this way: [`phrases`] gives them, and any other query ranks with `bm25`.
//!
//! FTS5's ranking functions are registered through its C API (`fts5_api.xCreateFunction`),
//! which rusqlite does not wrap; this module holds the workspace's only `unsafe` besides the
//! thread-count setter, each block with what makes it sound.
#![allow(unsafe_code)]

use std::ffi::{c_int, c_void};
use std::panic::AssertUnwindSafe;
use std::ptr;

use rusqlite::{Connection, ffi};

/// The function's SQL name.
pub const NAME: &str = "cairn_bm25";

/// BM25's constants, as FTS5's `bm25` has them.
const K1: f64 = 1.2;
const B: f64 = 0.75;

/// What one query computes on its first row (FTS5's per-query auxiliary data).
struct Query {
    idf: Vec<f64>,
    avgdl: f64,
    freq: Vec<f64>,
}

/// Register [`NAME`] on `conn`, once per connection (registering again adds a newer one that
/// shadows the first).
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
            // A file that is no database (or a damaged one) fails here first: say that.
            if matches!(rc & 0xff, ffi::SQLITE_NOTADB | ffi::SQLITE_CORRUPT) {
                return Err(rusqlite::Error::SqliteFailure(ffi::Error::new(rc), None));
            }
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
    // SAFETY: `api` is FTS5's API object of this connection, valid while the connection is
    // open; the function keeps no user data.
    unsafe {
        let Some(create) = (*api).xCreateFunction else {
            return Err(failed(ffi::SQLITE_ERROR, "FTS5 cannot add functions"));
        };
        let rc = create(
            api,
            c"cairn_bm25".as_ptr(),
            ptr::null_mut(),
            Some(bm25),
            None,
        );
        if rc != ffi::SQLITE_OK {
            return Err(failed(rc, "FTS5 refused the function"));
        }
    }
    Ok(())
}

/// Whether the index's tokenizer (`unicode61`: letters, digits and private-use characters are
/// token characters, everything else separates) surely reads a token in `text`. A quoted word
/// it reads nothing in (`-`, `→`, an emoji) is a phrase FTS5 leaves out of its phrase count.
/// Close to the tokenizer's table but wider where unsure (Rust's alphanumerics also hold
/// symbols and vowel signs of the Alphabetic property, `Ⓐ`, `ा`, which the tokenizer may
/// separate at): a word this keeps may still be read as nothing, which [`phrases`] checks with
/// [`surely_token`].
pub fn holds_token(text: &str) -> bool {
    text.chars().any(|c| {
        c.is_ascii_alphanumeric()
            || (!c.is_ascii()
                && c.is_alphanumeric()
                && !matches!(c, '\u{300}'..='\u{36f}' | '\u{1ab0}'..='\u{1aff}'
                    | '\u{1dc0}'..='\u{1dff}' | '\u{20d0}'..='\u{20ff}' | '\u{fe20}'..='\u{fe2f}'))
    })
}

/// Whether the tokenizer surely reads `c` as part of a token: an ASCII letter or digit, or a
/// letter of the scripts whose blocks hold letters only where taken here (Latin, Greek,
/// Cyrillic, Hebrew, Arabic, kana, CJK ideographs, Hangul, fullwidth forms). Anything else may
/// be a symbol or a mark the tokenizer separates at.
fn surely_token(c: char) -> bool {
    c.is_ascii_alphanumeric()
        || matches!(c,
            '\u{c0}'..='\u{d6}' | '\u{d8}'..='\u{f6}' | '\u{f8}'..='\u{24f}'
            | '\u{388}'..='\u{3ff}' | '\u{400}'..='\u{481}' | '\u{48a}'..='\u{52f}'
            | '\u{5d0}'..='\u{5ea}' | '\u{621}'..='\u{64a}'
            | '\u{3041}'..='\u{3096}' | '\u{30a1}'..='\u{30fa}'
            | '\u{3400}'..='\u{4dbf}' | '\u{4e00}'..='\u{9fff}' | '\u{ac00}'..='\u{d7a3}'
            | '\u{f900}'..='\u{faff}' | '\u{ff10}'..='\u{ff19}' | '\u{ff21}'..='\u{ff3a}'
            | '\u{ff41}'..='\u{ff5a}')
}

/// The phrases of the FTS5 expression `expr`, in order, each as written (quotes included), when
/// it is only plain quoted phrases separated by spaces or `OR` (what Cairn's own searches build),
/// each surely read as tokens (FTS5 drops a phrase it reads nothing in, and [`NAME`] is given
/// one count per phrase it keeps: a phrase with a character the tokenizer may separate at,
/// beyond ASCII's, is not counted on here); `None` otherwise, which plain bm25 ranks.
pub fn phrases(expr: &str) -> Option<Vec<&str>> {
    let mut out = Vec::new();
    let mut rest = expr.trim_start();
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix("OR ") {
            if out.is_empty() {
                return None;
            }
            rest = after.trim_start();
            continue;
        }
        let body = rest.strip_prefix('"')?;
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
        let end = end?;
        let phrase = &body[..end];
        if !holds_token(phrase) || phrase.chars().any(|c| !c.is_ascii() && !surely_token(c)) {
            return None;
        }
        out.push(&rest[..end + 2]);
        rest = &body[end + 1..];
        // A phrase ends the expression or is followed by a space (not `*`, `:` or `+`).
        if !(rest.is_empty() || rest.starts_with(' ')) {
            return None;
        }
        rest = rest.trim_start();
    }
    (!out.is_empty()).then_some(out)
}

/// FTS5's destructor of a query's auxiliary data.
unsafe extern "C" fn drop_query(p: *mut c_void) {
    // SAFETY: `p` is the Box `score` leaked into `xSetAuxdata`, handed back once by FTS5.
    drop(unsafe { Box::from_raw(p.cast::<Query>()) });
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

/// The row's BM25 score (positive; `bm25` returns it negated), as `fts5Bm25Function` computes
/// it, every column weighing 1.
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
        let fresh = Box::new(unsafe { first_row(api, fts, n_val, values)? });
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
        if let Some(f) = usize::try_from(phrase).ok().and_then(|p| q.freq.get_mut(p)) {
            *f += 1.0;
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

/// A query's average row length and each phrase's IDF from the row counts given.
///
/// # Safety
/// `api`, `fts`, `n_val` and `values` are what FTS5 passed to the function.
unsafe fn first_row(
    api: &ffi::Fts5ExtensionApi,
    fts: *mut ffi::Fts5Context,
    n_val: c_int,
    values: *mut *mut ffi::sqlite3_value,
) -> Result<Query, c_int> {
    let missing = ffi::SQLITE_ERROR;
    // SAFETY (every call below): `fts` is this query's context; out pointers are locals.
    let n_phrase = unsafe { api.xPhraseCount.ok_or(missing)?(fts) };
    if n_phrase != n_val {
        // One count per phrase, or the scores would not be bm25's.
        return Err(ffi::SQLITE_MISUSE);
    }
    let (mut n_row, mut n_token) = (0i64, 0i64);
    ok(unsafe { api.xRowCount.ok_or(missing)?(fts, &mut n_row) })?;
    ok(unsafe { api.xColumnTotalSize.ok_or(missing)?(fts, -1, &mut n_token) })?;
    let avgdl = n_token as f64 / n_row as f64;
    let idf = (0..n_val.max(0) as usize)
        .map(|i| {
            // SAFETY: `values` holds `n_val` values and `i` is below it.
            let n_hit = unsafe { ffi::sqlite3_value_int64(*values.add(i)) };
            // As FTS5 computes it: log((N - n + 0.5) / (n + 0.5)), at least 1e-6.
            let v = (((n_row - n_hit) as f64 + 0.5) / (n_hit as f64 + 0.5)).ln();
            if v <= 0.0 { 1e-6 } else { v }
        })
        .collect::<Vec<_>>();
    Ok(Query {
        freq: vec![0.0; idf.len()],
        idf,
        avgdl,
    })
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

    /// Every matching row's (rowid, bm25, cairn_bm25 given each phrase's true row count).
    fn both(conn: &Connection, expr: &str) -> Vec<(i64, u64, u64)> {
        let phrases = phrases(expr).unwrap();
        let counts: Vec<i64> = phrases
            .iter()
            .map(|p| {
                conn.query_row("SELECT count(*) FROM t WHERE t MATCH ?1", [p], |r| r.get(0))
                    .unwrap()
            })
            .collect();
        let args: String = counts.iter().map(|n| format!(", {n}")).collect();
        let sql = format!(
            "SELECT rowid, bm25(t), {NAME}(t{args}) FROM t WHERE t MATCH ?1 ORDER BY rowid"
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

    fn assert_same(conn: &Connection, expr: &str) -> usize {
        let rows = both(conn, expr);
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

    #[test]
    fn given_the_true_counts_scores_are_bm25_s_bit_for_bit() {
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
        assert_eq!(assert_same(&conn, "\"alpha\""), 3);
        assert_eq!(assert_same(&conn, "\"alpha\" \"beta\""), 2);
        assert_eq!(assert_same(&conn, "\"beta\" OR \"delta\""), 4);
        assert_eq!(assert_same(&conn, "\"alpha beta\""), 2);
    }

    #[test]
    fn a_missing_or_extra_count_is_an_error_not_a_wrong_score() {
        let conn = table();
        insert(&conn, &[("alpha beta", "")]);
        for args in ["", ", 1", ", 1, 1, 1"] {
            let sql = format!("SELECT {NAME}(t{args}) FROM t WHERE t MATCH '\"alpha\" \"beta\"'");
            assert!(
                conn.query_row(&sql, [], |r| r.get::<_, f64>(0)).is_err(),
                "{args}"
            );
        }
    }

    /// Hostile query text (MCP arguments, a person's search) reaches the function only as
    /// quoted phrases: hundreds of them, quotes, control characters, accented letters and a
    /// long one are scored as bm25 scores them. A phrase that may hold no token (a symbol, a
    /// combining mark, a vowel sign alone) is not given to it (FTS5 leaves such a phrase out of
    /// an AND's phrase count): plain bm25 ranks that query.
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
        phrases.push(format!("\"{}\"", "café ".repeat(2000)));
        let expr = phrases.join(" OR ");
        assert_eq!(assert_same(&conn, &expr), 2);
        for empty in [
            "\"🎉\"",
            "\"...\"",
            "\"\u{301}\"",
            "\"-\"",
            "\"Ⓐ\"",
            "\"ा\"",
            "\"ⓐⓑ\"",
        ] {
            for joined in [" OR ", " "] {
                let expr = format!("\"word1\"{joined}{empty}");
                assert_eq!(super::phrases(&expr), None, "{expr}");
                let n: i64 = conn
                    .query_row(
                        "SELECT count(*) FROM t WHERE t MATCH ?1 ORDER BY bm25(t)",
                        [&expr],
                        |r| r.get(0),
                    )
                    .unwrap();
                assert_eq!(n, 1, "{expr}");
            }
        }
        assert!(holds_token("ж") && holds_token("登录") && holds_token("x-"));
    }

    #[derive(Debug, Clone)]
    enum Op {
        Insert(String, String),
        Delete(usize),
        Query(Vec<Vec<&'static str>>, bool),
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
            3 => (prop::collection::vec(phrase, 1..4), any::<bool>())
                .prop_map(|(p, or)| Op::Query(p, or)),
        ]
    }

    proptest::proptest! {
        /// Through any mix of inserts, deletes and queries (phrases of one or two words, any
        /// word or every word), every row's score is bm25's exactly when given the counts.
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
                    Op::Query(phrases, or) => {
                        let expr = phrases
                            .iter()
                            .map(|p| format!("\"{}\"", p.join(" ")))
                            .collect::<Vec<_>>()
                            .join(if or { " OR " } else { " " });
                        assert_same(&conn, &expr);
                    }
                }
            }
        }
    }

    #[test]
    fn only_plain_quoted_phrases_are_taken_apart() {
        for (plain, want) in [
            ("\"a\"", vec!["\"a\""]),
            ("\"a\" \"b c\"", vec!["\"a\"", "\"b c\""]),
            ("\"a\" OR \"b\"", vec!["\"a\"", "\"b\""]),
            (
                "  \"say \"\"hi\"\"\" OR \"x\" ",
                vec!["\"say \"\"hi\"\"\"", "\"x\""],
            ),
            ("\"a*\"", vec!["\"a*\""]),
        ] {
            assert_eq!(phrases(plain), Some(want), "{plain}");
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
            "OR \"a\"",
            "\"a\" OR",
        ] {
            assert_eq!(phrases(other), None, "{other}");
        }
    }
}

//! Words inside a run of Chinese, Japanese or Korean text are found, and so are a Latin word
//! glued to such a run and an emoji: the index's tokenizer reads `启动app时确保环境变量` as one
//! token and an emoji as nothing, and each record is indexed with a tail of terms for them
//! (`archive/store/fts/tail.rs`). Their hits rank by bm25 with the others and their snippets
//! mark the match; forgetting and reindexing take the tail out with the rest; migration 48
//! indexes an older archive's records again. And a query of a thousand words or more is answered,
//! never refused with SQL.
//!
//! Real text: iFlow's Chinese session (`tests/fixtures/iflow`). Japanese, Korean and emoji: a
//! synthetic Claude session (`tests/fixtures/cjk`, see its SOURCES.md).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use proptest::prelude::*;
use rusqlite::Connection;

use crate::support::{self, capture, main_file};
use cairn_core::archive::Agent;
use cairn_core::archive::capture::Quiet;
use cairn_core::archive::store::{
    MATCH_END as E, MATCH_START as S, RecordFilter, Store, in_index_terms, index_record,
    index_tails, indexed_input, indexed_text, input_column, search_records, text_column,
};
use cairn_core::views::search::SearchQuery;
use cairn_core::{Cairn, ForgetRequest, ReindexRequest};

const IFLOW: &str =
    "iflow/C--exp-docker-image-retagger/session-5de701fc-7454-4858-a249-95cac4fd3b51.jsonl";
const SYNTHETIC: &str = "cjk/claude/4c1d2e3f-5a6b-4c7d-8e9f-0a1b2c3d4e5f.jsonl";

fn archive(files: &[(Agent, &str)]) -> (tempfile::TempDir, Cairn) {
    let data = tempfile::tempdir().unwrap();
    let cairn = Cairn::open(data.path()).unwrap();
    let found: Vec<_> = files
        .iter()
        .map(|(agent, rel)| main_file(*agent, &support::fixtures().join(rel)))
        .collect();
    capture(&cairn, &found);
    (data, cairn)
}

/// Each hit of a search, as (ordinal, snippet).
fn hits(cairn: &Cairn, text: &str) -> Vec<(u32, String)> {
    cairn
        .search(&SearchQuery {
            text: text.into(),
            limit: Some(50),
            ..SearchQuery::default()
        })
        .unwrap()
        .into_iter()
        .map(|h| (h.ordinal, h.snippet))
        .collect()
}

fn marked(word: &str) -> String {
    format!("{S}{word}{E}")
}

/// How many rows of the index hold phrase `expr` (written as a person's search writes it), read
/// from the index alone: a row taken out with other values than it was put in with stays.
fn index_rows(data: &Path, expr: &str) -> i64 {
    let conn = Connection::open(data.join("cairn.db")).unwrap();
    conn.query_row(
        "SELECT count(*) FROM records_fts WHERE records_fts MATCH ?1",
        [in_index_terms(expr).as_ref()],
        |r| r.get(0),
    )
    .unwrap()
}

/// How many times the index holds `term` (one of the tail's, as it spells them), over every row:
/// read from the index's own lists, where a row put back under the same id after a take-out
/// that missed its tail would count twice.
fn term_instances(data: &Path, term: &str) -> i64 {
    let conn = Connection::open(data.join("cairn.db")).unwrap();
    conn.execute_batch(
        "CREATE VIRTUAL TABLE temp.held USING fts5vocab(main, records_fts, instance);",
    )
    .unwrap();
    conn.query_row(
        "SELECT count(*) FROM temp.held WHERE term = ?1",
        [term],
        |r| r.get(0),
    )
    .unwrap()
}

/// A real Chinese session: words inside longer runs (the prompt `启动app时确保环境变量` is one
/// token of the stored text), a Latin word glued to Chinese, words in a tool's output; each hit's
/// snippet marks the word where it stands.
#[test]
fn a_word_inside_a_chinese_run_is_found_in_a_real_session() {
    let (_data, cairn) = archive(&[(Agent::Iflow, IFLOW)]);
    let found = hits(&cairn, "环境变量");
    assert_eq!(
        found.first(),
        Some(&(
            0,
            format!(
                "启动app时确保{} DOCKER_API_VERSION=\"1.46\"",
                marked("环境变量")
            )
        )),
        "{found:#?}"
    );
    assert!(found.len() >= 3, "{found:#?}");
    for (ordinal, snippet) in &found {
        assert!(
            snippet.contains(&marked("环境变量")),
            "#{ordinal}: {snippet}"
        );
    }
    // The Latin word glued to the run, and two characters of it.
    let app = hits(&cairn, "app");
    assert!(
        app.contains(&(
            0,
            format!(
                "启动{}时确保环境变量 DOCKER_API_VERSION=\"1.46\"",
                marked("app")
            )
        )),
        "{app:#?}"
    );
    assert!(
        hits(&cairn, "确保")
            .iter()
            .any(|(o, s)| *o == 0 && s.contains(&marked("确保"))),
    );
    // Inside a tool's output (a source file's comment), and both words of a mixed query.
    let helper = hits(&cairn, "辅助函数");
    assert!(!helper.is_empty());
    assert!(
        helper
            .iter()
            .all(|(_, s)| s.contains(&format!("// {}：执行命令", marked("辅助函数")))),
        "{helper:#?}"
    );
    let mixed = hits(&cairn, "镜像 Docker");
    assert!(!mixed.is_empty());
    for (ordinal, snippet) in &mixed {
        assert!(
            snippet.contains(&marked("镜像")) && snippet.contains(&marked("Docker")),
            "#{ordinal}: {snippet}"
        );
    }
    // Not every pair of its characters: the words must stand in that order.
    assert!(hits(&cairn, "变量环境").is_empty());
    // The session search reads the same index.
    let sessions = cairn
        .search_sessions(&SearchQuery {
            text: "环境变量".into(),
            ..SearchQuery::default()
        })
        .unwrap()
        .sessions;
    assert_eq!(sessions.len(), 1);
    assert!(
        sessions[0].turns[0].snippet.contains(&marked("环境变量")),
        "{:?}",
        sessions[0].turns
    );
}

/// Japanese (kanji and kana in one run), Korean, Chinese in a tool input and its output, a Latin
/// word glued to Chinese; a query mixing CJK and Latin words; a whole quoted phrase.
#[test]
fn japanese_korean_and_glued_words_are_found_and_marked() {
    let (_data, cairn) = archive(&[(Agent::Claude, SYNTHETIC)]);
    for (query, ordinal, snippet) in [
        (
            "登录",
            0,
            format!(
                "我们修复了{}错误，然后部署了新版本 🚀 请确认 deploy 完成",
                marked("登录")
            ),
        ),
        (
            "日本語",
            1,
            format!(
                "好的，我先确认部署状态。{}テキストも検索できるようにしました。한국어 검색도 됩니다 👍🏽",
                marked("日本語")
            ),
        ),
        (
            "検索",
            1,
            format!(
                "好的，我先确认部署状态。日本語テキストも{}できるようにしました。한국어 {}도 됩니다 👍🏽",
                marked("検索"),
                "검색"
            ),
        ),
        (
            "검색",
            1,
            format!(
                "…本語テキストも検索できるようにしました。한국어 {}도 됩니다 👍🏽",
                marked("검색")
            ),
        ),
        (
            "修复了登录",
            0,
            format!(
                "我们{}错误，然后部署了新版本 🚀 请确认 deploy 完成",
                marked("修复了登录")
            ),
        ),
        (
            "登录 deploy",
            0,
            format!(
                "我们修复了{}错误，然后部署了新版本 🚀 请确认 {} 完成",
                marked("登录"),
                marked("deploy")
            ),
        ),
        (
            "\"部署了新版本\"",
            0,
            format!(
                "我们修复了登录错误，然后{} 🚀 请确认 deploy 完成",
                marked("部署了新版本")
            ),
        ),
    ] {
        let found = hits(&cairn, query);
        assert!(
            found.contains(&(ordinal, snippet.clone())),
            "{query}: want #{ordinal} {snippet:?}, got {found:#?}"
        );
    }
    // A tool input, read as its members, and the output it printed.
    let deployed = hits(&cairn, "部署完成");
    assert!(
        deployed.contains(&(
            2,
            format!(
                "command: echo \"{}\" && git log --oneline -1 · description: 确认部署是否完成",
                marked("部署完成")
            )
        )),
        "{deployed:#?}"
    );
    assert!(
        deployed.iter().any(|(o, _)| *o == 3),
        "the output: {deployed:#?}"
    );
    // `bug` is glued to `登录` in `登录bug`; `loginService` stands alone.
    let bug = hits(&cairn, "bug");
    let ordinals: Vec<u32> = bug.iter().map(|h| h.0).collect();
    for want in [3, 4, 5] {
        assert!(ordinals.contains(&want), "{bug:#?}");
    }
    assert!(
        bug.contains(&(
            5,
            format!("登录{} 还在吗？检查一下 loginService 的日志", marked("bug"))
        )),
        "{bug:#?}"
    );
    // A word is found where it stands, not pieced from two: `然后部` holds `然后` and `后部`,
    // which `我们修复了登录错误，然后` and `部署` do not hold in a row.
    assert!(hits(&cairn, "错误然后").is_empty());
    assert!(hits(&cairn, "登录日本").is_empty());
}

/// An emoji is a term of the index: the archive's search finds it (skin tones kept, so `👍🏽`
/// finds that one and `👍` every one) and marks it.
#[test]
fn an_emoji_is_found_by_the_archive_search() {
    let (data, _cairn) = archive(&[(Agent::Claude, SYNTHETIC)]);
    let store = Store::open_read_only(&data.path().join("cairn.db")).unwrap();
    let find = |expr: &str| -> Vec<(u32, String)> {
        search_records(store.conn(), expr, &RecordFilter::default(), 20)
            .unwrap()
            .into_iter()
            .map(|h| (h.ordinal, h.snippet))
            .collect()
    };
    assert_eq!(
        find("\"🚀\""),
        [(
            0,
            format!(
                "我们修复了登录错误，然后部署了新版本 {} 请确认 deploy 完成",
                marked("🚀")
            )
        )]
    );
    assert_eq!(
        find("\"✅\""),
        [(
            4,
            format!("部署已完成 {} 最新提交是「修复登录bug」。", marked("✅"))
        )]
    );
    assert_eq!(find("\"👍🏽\"").len(), 1);
    assert_eq!(find("\"👍\"").len(), 1);
    assert!(find("\"👍🏿\"").is_empty());
    assert!(find("\"🎉\"").is_empty());
}

/// The session search takes an emoji as a word too (its words were trimmed of everything but
/// letters and digits, and a lone emoji was nothing to look up).
#[test]
fn an_emoji_finds_its_session() {
    let (_data, cairn) = archive(&[(Agent::Claude, SYNTHETIC), (Agent::Iflow, IFLOW)]);
    let sessions = |text: &str| -> Vec<(String, Vec<u32>)> {
        cairn
            .search_sessions(&SearchQuery {
                text: text.into(),
                ..SearchQuery::default()
            })
            .unwrap()
            .sessions
            .into_iter()
            .map(|s| (s.session_key, s.turns.iter().map(|t| t.ordinal).collect()))
            .collect()
    };
    let rocket = sessions("🚀");
    assert_eq!(rocket.len(), 1, "{rocket:?}");
    assert_eq!(rocket[0].1, [0]);
    assert_eq!(sessions("(🚀)"), rocket, "punctuation around it is trimmed");
    assert_eq!(sessions("👍🏽").len(), 1);
    assert!(sessions("🎉").is_empty());
}

/// A CJK word's hits are ranked as FTS5's own bm25 ranks its phrase (the search ranks with
/// `cairn_bm25` given the phrase's record count: the same scores), with the other words of the
/// query.
#[test]
fn cjk_hits_rank_by_bm25_with_the_others() {
    let (data, cairn) = archive(&[(Agent::Claude, SYNTHETIC), (Agent::Iflow, IFLOW)]);
    let conn = Connection::open(data.path().join("cairn.db")).unwrap();
    // One query, record by record: the order the search gives is bm25's.
    for query in ["登录", "部署 登录", "登录 bug"] {
        let expr = cairn_core::views::search::fts_query(query).unwrap();
        let want: Vec<(String, u32)> = conn
            .prepare(
                "SELECT s.session_key, r.ordinal FROM records_fts
                 JOIN records r ON r.id = records_fts.rowid
                 JOIN sessions s ON s.id = r.session_id
                 WHERE records_fts MATCH ?1 ORDER BY bm25(records_fts), records_fts.rowid",
            )
            .unwrap()
            .query_map([in_index_terms(&expr).as_ref()], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap();
        assert!(want.len() > 1, "{query}: {want:?}");
        let got: Vec<(String, u32)> = cairn
            .search(&SearchQuery {
                text: query.into(),
                limit: Some(50),
                ..SearchQuery::default()
            })
            .unwrap()
            .into_iter()
            .map(|h| (h.session_key, h.ordinal))
            .collect();
        assert_eq!(got, want, "{query}");
    }
}

/// Forgetting a session takes its tails out of the index with its records: nothing in the index
/// holds its CJK words any more (a row taken out without its tail would leave them there), and
/// the index is whole.
#[test]
fn forgetting_a_session_takes_its_cjk_words_out_of_the_index() {
    let (data, cairn) = archive(&[(Agent::Claude, SYNTHETIC), (Agent::Iflow, IFLOW)]);
    for phrase in ["\"修复了登录\"", "\"日本語\"", "\"🚀\"", "\"bug\""] {
        assert!(index_rows(data.path(), phrase) > 0, "{phrase}");
    }
    let iflow_rows = index_rows(data.path(), "\"环境变量\"");
    let key = cairn
        .search_sessions(&SearchQuery {
            text: "日本語".into(),
            ..SearchQuery::default()
        })
        .unwrap()
        .sessions[0]
        .session_key
        .clone();
    cairn
        .forget(&ForgetRequest {
            session: Some(key),
            ..Default::default()
        })
        .unwrap();
    assert!(hits(&cairn, "修复了登录").is_empty());
    for phrase in [
        "\"修复了登录\"",
        "\"日本語\"",
        "\"🚀\"",
        "\"검색\"",
        "\"登录 bug\"",
    ] {
        assert_eq!(index_rows(data.path(), phrase), 0, "{phrase}");
    }
    for term in ["修复", "日本", "emoji1f680", "검색"] {
        assert_eq!(term_instances(data.path(), term), 0, "{term}");
    }
    // The other session's are left.
    assert_eq!(index_rows(data.path(), "\"环境变量\""), iflow_rows);
    assert!(!hits(&cairn, "环境变量").is_empty());
    index_is_whole(data.path());
}

/// A reindex takes a session's records out of the index and puts them back: its CJK words are
/// found once each, as before.
#[test]
fn a_reindexed_session_holds_its_cjk_words_once() {
    let (data, cairn) = archive(&[(Agent::Claude, SYNTHETIC)]);
    let before: Vec<i64> = ["\"修复了登录\"", "\"검색\"", "\"🚀\"", "\"bug\""]
        .iter()
        .map(|p| index_rows(data.path(), p))
        .collect();
    let terms = ["修复", "검색", "emoji1f680", "bug"];
    let held: Vec<i64> = terms
        .iter()
        .map(|t| term_instances(data.path(), t))
        .collect();
    assert!(held.iter().all(|&n| n > 0), "{held:?}");
    let key = cairn
        .search_sessions(&SearchQuery {
            text: "日本語".into(),
            ..SearchQuery::default()
        })
        .unwrap()
        .sessions[0]
        .session_key
        .clone();
    // As an older parser left it (a tool's result without its outcome), so the reindex reads
    // the session again and writes its records anew, not finding them the same and keeping them.
    let aged = Connection::open(data.path().join("cairn.db"))
        .unwrap()
        .execute(
            "UPDATE records SET outcome = NULL, exit_code = NULL WHERE kind = 'tool_result'",
            [],
        )
        .unwrap();
    assert!(aged > 0);
    let report = cairn
        .reindex(
            &ReindexRequest {
                session: Some(key),
                ..Default::default()
            },
            &Quiet,
        )
        .unwrap();
    assert_eq!(report.sessions, 1, "{report:?}");
    assert!(report.records_changed > 0, "{report:?}");
    let after: Vec<i64> = ["\"修复了登录\"", "\"검색\"", "\"🚀\"", "\"bug\""]
        .iter()
        .map(|p| index_rows(data.path(), p))
        .collect();
    assert_eq!(after, before);
    let held_after: Vec<i64> = terms
        .iter()
        .map(|t| term_instances(data.path(), t))
        .collect();
    assert_eq!(held_after, held);
    assert_eq!(hits(&cairn, "修复了登录").len(), 1);
    index_is_whole(data.path());
}

fn index_is_whole(data: &Path) {
    let conn = Connection::open(data.join("cairn.db")).unwrap();
    let ok: String = conn
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    assert_eq!(ok, "ok");
    conn.execute(
        "INSERT INTO records_fts (records_fts) VALUES ('integrity-check')",
        [],
    )
    .unwrap();
}

/// An archive indexed before migration 48 (every record as its stored form alone, as schema 47
/// wrote it) is indexed again with its tails at the next open: CJK words are found, the index is
/// whole, and the records without CJK or emoji are not touched.
#[test]
fn migration_48_indexes_an_older_archives_cjk_text_again() {
    let (data, cairn) = archive(&[(Agent::Claude, SYNTHETIC), (Agent::Iflow, IFLOW)]);
    let want = hits(&cairn, "环境变量");
    drop(cairn);
    let db = data.path().join("cairn.db");
    let with_tail: i64;
    {
        // As schema 47 left it: each record indexed in its stored form alone.
        let conn = Connection::open(&db).unwrap();
        let rows: Vec<(i64, Option<String>, Option<String>)> = conn
            .prepare("SELECT id, text, tool_input FROM records WHERE text IS NOT NULL OR tool_input IS NOT NULL")
            .unwrap()
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap();
        let mut changed = 0;
        for (id, text, input) in rows {
            let (text, input) = (text.as_deref(), input.as_deref());
            let now = (text.map(text_column), input.map(input_column));
            let then = (text.map(indexed_text), input.map(indexed_input));
            if now == then {
                continue;
            }
            changed += 1;
            conn.execute(
                "INSERT INTO records_fts (records_fts, rowid, text, tool_input) VALUES ('delete', ?1, ?2, ?3)",
                rusqlite::params![id, now.0, now.1],
            )
            .unwrap();
            conn.execute(
                "INSERT INTO records_fts (rowid, text, tool_input) VALUES (?1, ?2, ?3)",
                rusqlite::params![id, then.0, then.1],
            )
            .unwrap();
        }
        with_tail = changed;
        assert!(with_tail > 10, "{with_tail}");
        // Schema 47 had none of what later migrations made (49: extraction's readable rows).
        conn.execute_batch("DROP TABLE recall_extract_readable")
            .unwrap();
        conn.pragma_update(None, "user_version", 47).unwrap();
    }
    assert_eq!(index_rows(data.path(), "\"环境变量\""), 0);
    // Counted as the migration counts them: every record with a tail, no other.
    {
        let conn = Connection::open(&db).unwrap();
        conn.execute_batch("BEGIN").unwrap();
        assert_eq!(index_tails(&conn).unwrap(), with_tail as u64);
        conn.execute_batch("ROLLBACK").unwrap();
    }
    let cairn = Cairn::open(data.path()).unwrap();
    assert_eq!(hits(&cairn, "环境变量"), want);
    assert!(!hits(&cairn, "日本語").is_empty());
    index_is_whole(data.path());
    // Taken out as the migration put it in: forgetting leaves nothing behind.
    let key = cairn
        .search_sessions(&SearchQuery {
            text: "日本語".into(),
            ..SearchQuery::default()
        })
        .unwrap()
        .sessions[0]
        .session_key
        .clone();
    cairn
        .forget(&ForgetRequest {
            session: Some(key),
            ..Default::default()
        })
        .unwrap();
    assert_eq!(index_rows(data.path(), "\"日本語\""), 0);
}

/// A query of a thousand words or more is answered: repeated words are asked once, and past
/// the count the ranking function takes its phrases' counts for, bm25 counts them itself (the
/// same ranking). Before, 1,000 phrases were SQLite's limit on a function's arguments, and the
/// error quoted the whole statement.
#[test]
fn a_query_of_a_thousand_words_or_more_is_answered() {
    let (_data, cairn) = archive(&[(Agent::Iflow, IFLOW)]);
    let search = |text: &str| {
        cairn.search(&SearchQuery {
            text: text.into(),
            limit: Some(20),
            ..SearchQuery::default()
        })
    };
    let one = search("docker").unwrap();
    assert!(!one.is_empty());
    // The same word 1,200 times: the same answer as once.
    let repeated = vec!["docker"; 1200].join(" ");
    assert_eq!(search(&repeated).unwrap(), one);
    // 1,000 different words: none holds them all, and the answer says so without an error.
    let many: Vec<String> = (0..1000).map(|i| format!("w{i}")).collect();
    assert!(search(&many.join(" ")).unwrap().is_empty());
    // All of them but two are found nowhere; those two rank as they do alone.
    let words = format!("docker {} 环境变量", many.join(" "));
    let sessions = cairn
        .search_sessions(&SearchQuery {
            text: words.clone(),
            ..SearchQuery::default()
        })
        .unwrap()
        .sessions;
    assert_eq!(sessions.len(), 1);
    let why = cairn
        .why_described(&cairn_core::views::why::WhyQuery {
            target: words,
            limit: None,
            mode: Default::default(),
        })
        .unwrap();
    assert_eq!(why.sessions.len(), 1);
}

/// A statement SQLite will not prepare is reported by its message, never its text (a search's
/// statement is kilobytes of SQL).
#[test]
fn a_statement_sqlite_refuses_is_reported_without_its_text() {
    let data = tempfile::tempdir().unwrap();
    let store = Store::open(&data.path().join("cairn.db")).unwrap();
    let refused = store
        .conn()
        .prepare("SELECT cairn_bm25(records_fts, 1, 2) FROM records_fts WHERE nowhere = 1")
        .unwrap_err();
    let shown = cairn_core::ErrorReport::from(store.err(refused));
    assert!(
        shown.message.contains("no such column: nowhere"),
        "{shown:?}"
    );
    assert!(!shown.message.contains("SELECT"), "{shown:?}");
    // Nor does the chain of causes a front door walks (the CLI prints each).
    let err = store.err(
        store
            .conn()
            .prepare("SELECT * FROM records WHERE nowhere = 1")
            .unwrap_err(),
    );
    let mut cause: Option<&dyn std::error::Error> = Some(&err);
    while let Some(c) = cause {
        assert!(!c.to_string().contains("SELECT"), "{c}");
        cause = c.source();
    }
}

/// Chinese, Japanese (kanji, kana, the prolonged sound mark) and Korean characters.
const CJK: &[char] = &[
    '我', '们', '修', '复', '了', '登', '录', '错', '误', '部', '署', '日', '本', '語', 'テ', 'キ',
    'ス', 'ト', 'の', 'を', 'ー', '한', '국', '어', '검', '색', '一',
];

/// Characters of CJK text (Chinese, Japanese kana, Korean, and the CJK punctuation the tokenizer
/// splits at), Latin words, spaces and emoji, in any order.
fn cjk_text() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        4 => prop::sample::select(CJK.to_vec()).prop_map(String::from),
        1 => "[a-zA-Z0-9]{1,5}",
        // Separators, and characters the tokenizer's tables read otherwise than Unicode today:
        // a skin tone and emoji newer than them are letters to it, glued to the words beside.
        1 => prop::sample::select(vec![
            " ", "，", "。", "・", "ー", "゛", "\n", "🚀", "👍🏽", "🏽", "🤖", "🧠", "✅", "-",
            "\\n", "é", "\u{301}",
        ])
        .prop_map(String::from),
    ];
    prop::collection::vec(piece, 1..40).prop_map(|p| p.concat())
}

/// The tokens FTS5's `unicode61` (as `records_fts` configures it) makes of `text`, in order.
fn tokens(conn: &Connection, text: &str) -> Vec<String> {
    conn.execute("DELETE FROM t", []).unwrap();
    conn.execute("INSERT INTO t (x) VALUES (?1)", [text])
        .unwrap();
    conn.prepare_cached("SELECT term FROM v ORDER BY offset")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<rusqlite::Result<_>>()
        .unwrap()
}

fn one_index() -> Connection {
    let conn = Connection::open_in_memory().unwrap();
    conn.execute_batch(
        "CREATE TABLE records (id INTEGER PRIMARY KEY, text TEXT, tool_input TEXT);
         CREATE VIRTUAL TABLE records_fts USING fts5(
             text, tool_input, content = 'records', content_rowid = 'id',
             tokenize = 'unicode61 remove_diacritics 2');
         CREATE VIRTUAL TABLE t USING fts5(x, tokenize = 'unicode61 remove_diacritics 2');
         CREATE VIRTUAL TABLE v USING fts5vocab(t, instance);",
    )
    .unwrap();
    conn
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(support::proptest_cases(256)))]

    /// A column's indexed form splits into the stored form's tokens, in the same places, then
    /// the tail's: the index's snippets, read back from the stored text by position, mark the
    /// same words.
    #[test]
    fn the_stored_tokens_come_first_and_unmoved(text in cjk_text()) {
        let conn = one_index();
        let input = serde_json::to_string(&serde_json::json!({"command": text})).unwrap();
        for (stored, column, form) in [
            (&text, text_column(&text), indexed_text(&text)),
            (&input, input_column(&input), indexed_input(&input)),
        ] {
            let (own, all) = (tokens(&conn, &form), tokens(&conn, &column));
            prop_assert!(all.len() >= own.len(), "{:?}", stored);
            prop_assert_eq!(&all[..own.len()], &own[..], "{:?}", stored);
        }
    }

    /// Any two or more CJK letters in a row of a record's text or tool input find it, as the
    /// search writes the query (quoted, or a word of a plain query), and the index is whole.
    #[test]
    fn any_run_of_two_or_more_cjk_characters_finds_its_record(
        before in cjk_text(),
        run in prop::collection::vec(prop::sample::select(CJK.to_vec()), 2..10),
        after in cjk_text(),
        other in cjk_text(),
        pick in any::<prop::sample::Index>(),
        len in 2usize..8,
        in_input in any::<bool>(),
    ) {
        // A stretch of CJK characters somewhere in it, so there is always one to search for.
        let text = format!("{before}{}{after}", run.iter().collect::<String>());
        let conn = one_index();
        let input = serde_json::to_string(&serde_json::json!({"command": text})).unwrap();
        let (t, i) = if in_input { (other.as_str(), input.as_str()) } else { (text.as_str(), other.as_str()) };
        conn.execute("INSERT INTO records (id, text, tool_input) VALUES (1, ?1, ?2)", [t, i]).unwrap();
        index_record(&conn, 1, Some(t), Some(i)).unwrap();
        let chars: Vec<char> = text.chars().collect();
        // Every stretch of `len` characters, all CJK letters (not the kana's sound marks or
        // middle dot, which the tokenizer reads as separators): the picked one is searched for.
        let cjk = |c: char| cairn_core::archive::store::is_cjk(c) && c.is_alphanumeric();
        let len = len.min(run.len());
        let starts: Vec<usize> = (0..chars.len().saturating_sub(len - 1))
            .filter(|&s| chars[s..s + len].iter().all(|&c| cjk(c)))
            .collect();
        let start = starts[pick.index(starts.len())];
        let word: String = chars[start..start + len].iter().collect();
        // (A plain query of `ーー` alone is none: the query builder's own test of a word.)
        let plain = cairn_core::views::search::fts_query(&word);
        for expr in [Some(format!("\"{word}\"")), plain].into_iter().flatten() {
            let found: i64 = conn
                .query_row(
                    "SELECT count(*) FROM records_fts WHERE records_fts MATCH ?1",
                    [in_index_terms(&expr).as_ref()],
                    |r| r.get(0),
                )
                .unwrap();
            prop_assert_eq!(found, 1, "{:?} in {:?} (input: {})", word, text, in_input);
        }
        conn.execute("INSERT INTO records_fts (records_fts, rank) VALUES ('integrity-check', 0)", []).unwrap();
    }
}

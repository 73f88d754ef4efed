//! Shared helpers for the archive's integration tests: fixture paths, building source dirs,
//! and a canonical dump of an archive so two archives can be compared for equality.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

pub mod agent_dbs;
pub mod opencode_db;

use std::path::{Path, PathBuf};

use cairn_core::Cairn;
use cairn_core::archive::Agent;
use cairn_core::archive::capture::Quiet;
use cairn_core::archive::discover::{self, DirOrigin, FoundFile, SourceDir};
use cairn_core::archive::sources::FileRole;

/// `git -C dir args…` with a fixed author and committer, failing the test with git's message
/// when git fails; its stdout.
pub fn git(dir: &Path, args: &[&str]) -> String {
    let out = std::process::Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .env("GIT_AUTHOR_NAME", "Test")
        .env("GIT_AUTHOR_EMAIL", "test@example.invalid")
        .env("GIT_COMMITTER_NAME", "Test")
        .env("GIT_COMMITTER_EMAIL", "test@example.invalid")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Cases a property test runs: `default` (over whole fixture transcripts few, since each case
/// captures a transcript several times), or `PROPTEST_CASES` for a longer hunt.
pub fn proptest_cases(default: u32) -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

pub fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures")
}

/// Copy a file into `dir/rel`, creating parents.
pub fn copy_into(src: &Path, dir: &Path, rel: &str) -> PathBuf {
    let dst = dir.join(rel);
    std::fs::create_dir_all(dst.parent().unwrap()).unwrap();
    std::fs::copy(src, &dst).unwrap();
    dst
}

pub fn main_file(agent: Agent, path: &Path) -> FoundFile {
    FoundFile {
        agent,
        role: FileRole::Main,
        path: path.to_owned(),
        parent_hint: None,
        agent_id: None,
    }
}

/// A session document rewritten as `doc`, first caught half-written (a warning, nothing read or
/// lost), then whole: read once it is, adding `added` records and updating none.
pub fn torn_then_whole(
    cairn: &Cairn,
    data: &Path,
    files: &[FoundFile],
    path: &Path,
    doc: &serde_json::Value,
    added: u32,
) {
    let whole = serde_json::to_string_pretty(doc).unwrap();
    std::fs::write(path, &whole[..whole.len() / 2]).unwrap();
    let before = dump(data);
    let torn = capture(cairn, files);
    assert_eq!(torn.warnings.len(), 1, "{:?}", torn.warnings);
    assert_eq!(dump(data), before, "nothing read, nothing lost");
    std::fs::write(path, &whole).unwrap();
    let grown = capture(cairn, files);
    assert_eq!(
        (grown.records_added, grown.records_updated),
        (added, 0),
        "{grown:?}"
    );
    assert!(grown.warnings.is_empty(), "{:?}", grown.warnings);
}

/// What discovery finds for `agent` in the configured folder `dir` (no warnings allowed).
pub fn found(agent: Agent, dir: &Path) -> Vec<FoundFile> {
    let sd = SourceDir {
        agent,
        path: dir.to_owned(),
        origin: DirOrigin::Env,
    };
    let mut warnings = Vec::new();
    let files = discover::walk(&sd, &mut warnings);
    assert!(warnings.is_empty(), "{warnings:?}");
    files
}

/// One integer the query `sql` answers over the archive in `data`.
pub fn count(data: &Path, sql: &str) -> i64 {
    rusqlite::Connection::open(data.join("cairn.db"))
        .unwrap()
        .query_row(sql, [], |r| r.get(0))
        .unwrap()
}

/// The session keys of the archive in `data`, ordered by `order` (an SQL ORDER BY list).
pub fn session_keys(data: &Path, order: &str) -> Vec<String> {
    let conn = rusqlite::Connection::open(data.join("cairn.db")).unwrap();
    let mut stmt = conn
        .prepare(&format!(
            "SELECT session_key FROM sessions ORDER BY {order}"
        ))
        .unwrap();
    stmt.query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

/// (session id, kind, unit, text) of every live record, in session and ordinal order.
pub fn live_records(data: &Path) -> Vec<(String, String, String, String)> {
    let conn = rusqlite::Connection::open(data.join("cairn.db")).unwrap();
    let mut stmt = conn
        .prepare(
            "SELECT s.session_id, r.kind, coalesce(r.unit, ''), coalesce(r.text, '') FROM records r
             JOIN sessions s ON s.id = r.session_id WHERE r.retracted_at IS NULL
             ORDER BY s.session_id, r.ordinal",
        )
        .unwrap();
    stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

/// Fail when `got` is not `want`, naming the first line that differs (the dumps compared are
/// long: the whole of either would drown it).
pub fn same(got: &str, want: &str, what: &str) {
    if got == want {
        return;
    }
    let (g, w): (Vec<&str>, Vec<&str>) = (got.lines().collect(), want.lines().collect());
    let at = g
        .iter()
        .zip(&w)
        .position(|(a, b)| a != b)
        .unwrap_or(g.len().min(w.len()));
    let cut = |l: Option<&&str>| l.map_or("(none)".to_owned(), |l| l.chars().take(400).collect());
    panic!(
        "{what}: line {at} of {} differs (want {} lines)\n got: {}\nwant: {}",
        g.len(),
        w.len(),
        cut(g.get(at)),
        cut(w.get(at))
    );
}

/// The archive in `data` passes SQLite's integrity check, its full-text index FTS5's.
pub fn index_is_whole(data: &Path) {
    let db = rusqlite::Connection::open(data.join("cairn.db")).unwrap();
    let ok: String = db
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    assert_eq!(ok, "ok");
    db.execute(
        "INSERT INTO records_fts (records_fts) VALUES ('integrity-check')",
        [],
    )
    .unwrap();
}

/// Capture the given files into `cairn`.
pub fn capture(cairn: &Cairn, files: &[FoundFile]) -> cairn_core::archive::capture::SyncReport {
    cairn.capture_paths(files, &Quiet).unwrap()
}

/// Every file under `dir`, at any depth (none when it does not exist).
pub fn files_under(dir: &Path) -> Vec<PathBuf> {
    walkdir::WalkDir::new(dir)
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_file())
        .map(walkdir::DirEntry::into_path)
        .collect()
}

/// Every file under `dir` with its bytes, and each zstd file (a retained copy) decompressed too:
/// what a search for a secret's bytes must find nothing in.
pub fn every_byte_under(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    for entry in walkdir::WalkDir::new(dir) {
        let entry = entry.unwrap();
        if !entry.file_type().is_file() {
            continue;
        }
        let bytes = std::fs::read(entry.path()).unwrap();
        if entry.path().extension().is_some_and(|e| e == "zst") {
            out.push((
                format!("{} (decompressed)", entry.path().display()),
                zstd::stream::decode_all(&bytes[..]).unwrap(),
            ));
        }
        out.push((entry.path().display().to_string(), bytes));
    }
    out
}

/// A canonical, order-independent text dump of everything capture wrote: sessions, records
/// (per source in line order), turns and token usage. Two archives built from the same input
/// must dump identically.
pub fn dump(data_dir: &Path) -> String {
    let conn = rusqlite::Connection::open(data_dir.join("cairn.db")).unwrap();
    let mut out = String::new();
    let mut stmt = conn
        .prepare(
            "SELECT session_key, agent, session_id, relation, parent_key, title, cwd, git_branch, model,
                    started_at, updated_at, record_count, turn_count, warning_count, secret_count, unknown_types,
                    cumulative_usage
             FROM sessions ORDER BY session_key",
        )
        .unwrap();
    let rows = stmt
        .query_map([], |r| {
            let mut cols = Vec::new();
            for i in 0..17 {
                let v: rusqlite::types::Value = r.get(i)?;
                cols.push(format!("{v:?}"));
            }
            Ok(cols.join(" | "))
        })
        .unwrap();
    for row in rows {
        out.push_str(&row.unwrap());
        out.push('\n');
    }
    let mut stmt = conn
        .prepare(
            "SELECT s.session_key, src.path, r.line_no, r.block, r.record_hash, r.kind, r.role, r.text,
                    r.tool_name, r.tool_input, r.exit_code, r.outcome, r.prompt_source, r.file_paths, t.turn_key,
                    t.turn_index
             FROM records r JOIN sessions s ON s.id = r.session_id JOIN sources src ON src.id = r.source_id
             LEFT JOIN turns t ON t.id = r.turn_id
             ORDER BY s.session_key, src.path, r.line_no, r.block",
        )
        .unwrap();
    let rows = stmt
        .query_map([], |r| {
            let mut cols = Vec::new();
            for i in 0..16 {
                let v: rusqlite::types::Value = r.get(i)?;
                cols.push(format!("{v:?}"));
            }
            Ok(cols.join(" | "))
        })
        .unwrap();
    for row in rows {
        out.push_str(&row.unwrap());
        out.push('\n');
    }
    let mut stmt = conn
        .prepare(
            "SELECT s.session_key, t.turn_index, t.turn_key, t.record_count, t.tool_call_count, t.edit_count,
                    t.exec_count, t.failure_count, t.started_at, t.ended_at, t.preview
             FROM turns t JOIN sessions s ON s.id = t.session_id ORDER BY s.session_key, t.turn_index",
        )
        .unwrap();
    let rows = stmt
        .query_map([], |r| {
            let mut cols = Vec::new();
            for i in 0..11 {
                let v: rusqlite::types::Value = r.get(i)?;
                cols.push(format!("{v:?}"));
            }
            Ok(cols.join(" | "))
        })
        .unwrap();
    for row in rows {
        out.push_str(&row.unwrap());
        out.push('\n');
    }
    let mut stmt = conn
        .prepare(
            "SELECT s.session_key, u.message_id, u.input, u.output, u.cache_creation, u.cache_read
             FROM token_usage u JOIN sessions s ON s.id = u.session_id ORDER BY 1, 2",
        )
        .unwrap();
    let rows = stmt
        .query_map([], |r| {
            Ok(format!(
                "{} {} {} {} {} {}",
                r.get::<_, String>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, i64>(2)?,
                r.get::<_, i64>(3)?,
                r.get::<_, i64>(4)?,
                r.get::<_, i64>(5)?
            ))
        })
        .unwrap();
    for row in rows {
        out.push_str(&row.unwrap());
        out.push('\n');
    }
    out
}

/// Ordinals must be dense (0..n) per session and consistent with line order per source.
pub fn assert_ordinals_dense(data_dir: &Path) {
    let conn = rusqlite::Connection::open(data_dir.join("cairn.db")).unwrap();
    let bad: i64 = conn
        .query_row(
            "SELECT COUNT(*) FROM (SELECT session_id, COUNT(*) n, MIN(ordinal) lo, MAX(ordinal) hi
             FROM records GROUP BY session_id) WHERE lo != 0 OR hi != n - 1",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(bad, 0, "ordinals are not dense");
}

/// The built-in embedding model's dir. When it is not installed, `scripts/fetch-model.sh`
/// installs it (once per test binary), as `make test` does before the tests.
pub fn ensure_model() -> PathBuf {
    use cairn_core::semantic::embed::ModelSearch;
    static FETCH: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _one = FETCH
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let search = ModelSearch::for_process(Path::new("/nonexistent-cairn-data"));
    if let Ok(dir) = search.locate() {
        return dir;
    }
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/fetch-model.sh");
    let status = std::process::Command::new("bash")
        .arg(&script)
        .status()
        .expect("run scripts/fetch-model.sh");
    assert!(status.success(), "scripts/fetch-model.sh failed: {status}");
    search
        .locate()
        .expect("the embedding model is still missing after scripts/fetch-model.sh")
}

/// An archive of the real Claude fixtures with the Recall question set's entries imported.
pub fn recall_archive() -> (tempfile::TempDir, Cairn) {
    recall_archive_with_config("")
}

/// [`recall_archive`] in a data dir whose `config.toml` holds `config`.
pub fn recall_archive_with_config(config: &str) -> (tempfile::TempDir, Cairn) {
    let data = tempfile::tempdir().unwrap();
    if !config.is_empty() {
        std::fs::write(data.path().join("config.toml"), config).unwrap();
    }
    let cairn = Cairn::open(data.path()).unwrap();
    let sd = cairn_core::archive::discover::SourceDir {
        agent: Agent::Claude,
        path: fixtures().join("claude"),
        origin: cairn_core::archive::discover::DirOrigin::Env,
    };
    let files = cairn_core::archive::discover::walk(&sd, &mut Vec::new());
    cairn.capture_paths(&files, &Quiet).unwrap();
    let entries = std::fs::read_to_string(fixtures().join("recall/entries.jsonl")).unwrap();
    let report = cairn.recall_import(&entries, false).unwrap();
    assert!(report.errors.is_empty(), "{:?}", report.errors);
    (data, cairn)
}

/// Make `dir` the source dir of `agent` in the archive at `data` (written to its config.toml):
/// the hook reads only transcripts inside an agent's source dirs.
pub fn read_from(data: &Path, agent: Agent, dir: &Path) {
    Cairn::open(data)
        .unwrap()
        .set_source_dirs(agent, vec![dir.display().to_string()])
        .unwrap();
}

/// Each text's words hashed into `dims` buckets, normalised: vectors for tests that need an
/// embedder without loading the model (texts sharing words are near).
pub fn hashed_words(texts: &[&str], dims: usize) -> Vec<f32> {
    texts
        .iter()
        .flat_map(|t| {
            let mut v = vec![0.0f32; dims];
            for w in t.split_whitespace() {
                v[w.bytes().map(usize::from).sum::<usize>() % dims] += 1.0;
            }
            cairn_core::semantic::embed::normalize(&mut v);
            v
        })
        .collect()
}

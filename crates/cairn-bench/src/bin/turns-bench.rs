//! The `sessions` vector store of a synced archive: embedding throughput of its turn digests,
//! and the session-level search in process with the model warm (latency and retrieval).
//!
//! `cargo run --release -p cairn-bench --bin turns-bench -- --data DIR [--cases FILE]
//!  [--max-tokens N] [--static FILE [--center]] [--threads T] [--reembed] [--modes M,M]
//!  [--append-every N [--append-unbuilt]]`
//!
//! - DIR is a data dir `cairn sync` filled (used in place: `--reembed` drops its session vectors
//!   and embeds every turn again; without it only what lacks a current vector is embedded).
//! - Throughput: turns a second (wall) and a CPU-second, word pieces a CPU-second (the pieces
//!   counted are what the model reads: special tokens included, truncated), mean pieces a turn.
//! - FILE holds one JSON object a line, `{"query", "half", "answers": [session keys]}`
//!   (`bench/why_retrieval.py --dump-cases`): each query is asked through
//!   `Cairn::search_sessions` (what `cairn search --sessions` and `cairn why "<text>"` rank
//!   with), lexical then hybrid (or the `--modes` given, in their order), and the figure is how
//!   often a right session is in the first five; latencies p50/p95 per mode. With
//!   `--append-every N` a one-turn session is imported and embedded before every Nth query (not
//!   timed), so the archive changes between queries as while an agent works (it stays in DIR).
//!   With `--append-unbuilt` the new turns are not embedded: the queries run while the vectors
//!   catch up (a hook's capture before the next build), each new turn found by words alone.
//! - `--max-tokens N` embeds with the model reading at most N word pieces of a text (its own
//!   fingerprint: the store is embedded again under it). `CAIRN_MODEL_DIR` picks another model.
//! - `--static FILE [--center]` embeds with a static table distilled from the model instead
//!   ([`cairn_bench::static_embed`]; FILE caches the table, distilled when absent).
//! - `--query-every MS`: while the build runs, a query's embedding is asked every MS ms on
//!   another thread (a new text each time, as a person typing into the desktop's search would
//!   ask), and its latency reported (p50, p95, the longest).
//! - `--questions DIR` asks the questions of `tests/fixtures/meaning` (DIR) by meaning over
//!   turns, with no similarity floor, of an archive holding the fixtures its SOURCES.md names:
//!   how often a right turn is in the first five, and what each floor would keep (the table of
//!   bench/RESULTS.md "A floor for what meaning finds").

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use anyhow::{Context, Result};
use cairn_bench::cli::{arg, cpu_secs, flag, loadavg, pct};
use cairn_bench::static_embed::{self, StaticModel};
use cairn_core::Cairn;
use cairn_core::semantic::Mode;
use cairn_core::semantic::embed::{Embedder, InputKind, LocalModel, ModelSearch};
use cairn_core::semantic::vectors::VectorStore;
use cairn_core::views::search::SearchQuery;

/// An embedder, counting the word pieces (the local model's) of every document it embeds.
struct Counting {
    inner: Arc<dyn Embedder>,
    local: Arc<LocalModel>,
    pieces: AtomicU64,
    texts: AtomicU64,
}

impl Embedder for Counting {
    fn fingerprint(&self) -> &str {
        self.inner.fingerprint()
    }
    fn dims(&self) -> usize {
        self.inner.dims()
    }
    fn embed(&self, texts: &[&str], kind: InputKind) -> cairn_core::Result<Vec<f32>> {
        if kind == InputKind::Document {
            for t in texts {
                let n = self.local.token_ids(t)?.len() as u64;
                self.pieces.fetch_add(n, Ordering::Relaxed);
            }
            self.texts.fetch_add(texts.len() as u64, Ordering::Relaxed);
        }
        self.inner.embed(texts, kind)
    }
    fn refresh_on_write(&self) -> bool {
        self.inner.refresh_on_write()
    }
    fn describe(&self) -> String {
        self.inner.describe()
    }
}

#[derive(serde::Deserialize)]
struct Case {
    query: String,
    half: String,
    answers: Vec<String>,
}

fn main() -> Result<()> {
    // SAFETY: the first statement of `main`, before any other thread exists.
    #[allow(unsafe_code)]
    unsafe {
        cairn_core::semantic::embed::set_thread_env_default();
    }
    let data = PathBuf::from(arg("--data", ""));
    anyhow::ensure!(
        data.join(cairn_core::archive::store::DB_FILE).exists(),
        "--data must name a data dir `cairn sync` filled"
    );
    let threads: usize = arg("--threads", "0").parse()?;
    let max_tokens: usize = arg("--max-tokens", "0").parse()?;
    let cores = std::thread::available_parallelism().map_or(1, |c| c.get());
    println!("machine: {cores} cores, load average {}", loadavg());

    let cairn = Cairn::open(&data)?;
    let dir = ModelSearch::for_process(&data).locate()?;
    let t = Instant::now();
    let mut model = LocalModel::load(&dir, threads)?;
    if max_tokens > 0 {
        model = model.with_max_tokens(max_tokens)?;
    }
    println!(
        "model: {} (load {:.0} ms){}",
        model.describe(),
        t.elapsed().as_secs_f64() * 1000.0,
        if max_tokens > 0 {
            format!(", at most {max_tokens} word pieces a text")
        } else {
            String::new()
        }
    );
    let local = Arc::new(model);
    let inner: Arc<dyn Embedder> = match arg("--static", "").as_str() {
        "" => local.clone(),
        path => {
            let (cpu0, t0) = (cpu_secs(), Instant::now());
            let mut table = static_embed::load_or_distill(&local, Path::new(path))?;
            println!(
                "static table: {} rows in {:.1} s wall, {:.1} s CPU (distilled when {path} was absent)",
                table.len() / local.dims(),
                t0.elapsed().as_secs_f64(),
                cpu_secs() - cpu0
            );
            let tag = if flag("--center") {
                static_embed::center(&mut table, local.dims());
                "centred"
            } else {
                "plain"
            };
            Arc::new(StaticModel::new(local.clone(), table, tag))
        }
    };
    println!("embedder: {}", inner.describe());
    let counting = Arc::new(Counting {
        inner,
        local,
        pieces: AtomicU64::new(0),
        texts: AtomicU64::new(0),
    });
    cairn.set_embedder(counting.clone());

    // 1. Embedding throughput over the turn digests.
    let query_every: u64 = arg("--query-every", "0").parse()?;
    let building = std::sync::atomic::AtomicBool::new(true);
    let (cpu0, t0) = (cpu_secs(), Instant::now());
    let (report, mut query_ms) = std::thread::scope(|s| {
        let asker = (query_every > 0).then(|| {
            s.spawn(|| {
                let mut times = Vec::new();
                while building.load(Ordering::Relaxed) {
                    let text = format!("why did the build of module {} fail", times.len());
                    let t = Instant::now();
                    if counting.embed(&[&text], InputKind::Query).is_err() {
                        break;
                    }
                    times.push(t.elapsed().as_secs_f64() * 1000.0);
                    std::thread::sleep(std::time::Duration::from_millis(query_every));
                }
                times
            })
        });
        let report = cairn.embeddings_build(VectorStore::Sessions, flag("--reembed"), &|_, _| {});
        building.store(false, Ordering::Relaxed);
        let times = asker
            .map(|h| h.join().unwrap_or_default())
            .unwrap_or_default();
        (report, times)
    });
    let report = report?;
    let (wall, cpu) = (t0.elapsed().as_secs_f64(), cpu_secs() - cpu0);
    let turns = counting.texts.load(Ordering::Relaxed);
    let pieces = counting.pieces.load(Ordering::Relaxed);
    println!(
        "embed: {turns} turns ({} vectors stored) in {wall:.1} s wall, {cpu:.1} s CPU: {:.1} turns/s, {:.1} turns/CPU-s; {pieces} word pieces ({:.0} a turn), {:.0} word pieces/CPU-s; load {}",
        report.vectors,
        turns as f64 / wall.max(1e-9),
        turns as f64 / cpu.max(1e-9),
        pieces as f64 / (turns.max(1) as f64),
        pieces as f64 / cpu.max(1e-9),
        loadavg()
    );
    if !query_ms.is_empty() {
        let longest = query_ms.iter().copied().fold(0.0, f64::max);
        println!(
            "queries during the build: {}, embedding p50 {:.1} ms, p95 {:.1} ms, longest {longest:.1} ms",
            query_ms.len(),
            pct(&mut query_ms.clone(), 0.5),
            pct(&mut query_ms, 0.95),
        );
    }

    let questions_dir = arg("--questions", "");
    if !questions_dir.is_empty() {
        floors(&cairn, &data, Path::new(&questions_dir))?;
    }

    // 2. The session-level search, in process, the model warm.
    let cases_file = arg("--cases", "");
    if cases_file.is_empty() {
        return Ok(());
    }
    let text = std::fs::read_to_string(&cases_file)
        .with_context(|| format!("cannot read {cases_file}"))?;
    let cases: Vec<Case> = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(serde_json::from_str)
        .collect::<std::result::Result<_, _>>()?;
    // The modes in the order asked: the connection keeps each phrase's row count between
    // queries (`cairn_bm25`), so a mode asked first runs with none counted yet.
    let modes: Vec<Mode> = arg("--modes", "lexical,hybrid")
        .split(',')
        .map(|m| match m.trim() {
            "lexical" => Ok(Mode::Lexical),
            "hybrid" => Ok(Mode::Hybrid),
            "vector" => Ok(Mode::Vector),
            other => anyhow::bail!("--modes: unknown mode {other:?} (lexical, hybrid, vector)"),
        })
        .collect::<Result<_>>()?;
    // `--append-every N`: before every Nth query, a one-turn session is imported (an ATIF
    // trajectory, through the capture writer like a hook's capture): the archive changes
    // between queries as it does while an agent works.
    let append_every: usize = arg("--append-every", "0").parse()?;
    let build_appends = !flag("--append-unbuilt");
    let scratch = data.join("turns-bench-appends");
    if append_every > 0 {
        std::fs::create_dir_all(&scratch)?;
    }
    let mut asked = 0usize;
    let mut appends = Vec::new();
    // The query right after each append, timed apart as well.
    let mut after_append = Vec::new();
    // Turns the last query found waiting for their vector.
    let mut waiting = 0u32;
    for mode in modes {
        let mut times = Vec::new();
        let (mut full, mut half) = (0, 0);
        for c in &cases {
            for (q, hits) in [(&c.query, &mut full), (&c.half, &mut half)] {
                asked += 1;
                let appended = append_every > 0 && asked.is_multiple_of(append_every);
                if appended {
                    let file = scratch.join(format!("append-{asked}.json"));
                    std::fs::write(&file, appended_trajectory(asked))?;
                    let t = Instant::now();
                    cairn.import_atif(&file)?;
                    if build_appends {
                        // As after a sync: the new turn embedded.
                        cairn.embeddings_build(VectorStore::Sessions, false, &|_, _| {})?;
                    }
                    appends.push(t.elapsed().as_secs_f64() * 1000.0);
                }
                let t = Instant::now();
                let found = cairn.search_sessions(&SearchQuery {
                    text: q.clone(),
                    limit: Some(5),
                    mode,
                    ..SearchQuery::default()
                })?;
                times.push(t.elapsed().as_secs_f64() * 1000.0);
                if appended {
                    after_append.push(t.elapsed().as_secs_f64() * 1000.0);
                }
                waiting = found.vectors_pending;
                if found
                    .sessions
                    .iter()
                    .any(|h| c.answers.contains(&h.session_key))
                {
                    *hits += 1;
                }
            }
        }
        let n = cases.len().max(1);
        println!(
            "sessions {:7}: top-5 full {full}/{n} ({:.0}%), half {half}/{n} ({:.0}%); {} queries p50 {:.1} ms, p95 {:.1} ms; load {}",
            mode.as_str(),
            100.0 * full as f64 / n as f64,
            100.0 * half as f64 / n as f64,
            times.len(),
            pct(&mut times.clone(), 0.5),
            pct(&mut times, 0.95),
            loadavg()
        );
    }
    if !appends.is_empty() {
        let (loads, updates) = cairn.matrix_counts();
        println!(
            "appends: {} ({}) p50 {:.1} ms, p95 {:.1} ms; the query after each p50 {:.1} ms, p95 {:.1} ms; vector matrix read whole {loads}, updated from the change log {updates}; turns waiting for a vector at the last query {waiting}",
            appends.len(),
            if build_appends {
                "import + build"
            } else {
                "import alone, the vectors left to catch up"
            },
            pct(&mut appends.clone(), 0.5),
            pct(&mut appends, 0.95),
            pct(&mut after_append.clone(), 0.5),
            pct(&mut after_append, 0.95),
        );
    }
    Ok(())
}

#[derive(serde::Deserialize)]
struct Question {
    question: String,
    /// `<session>#<turn index>`: the agent's session id, or `aider` for the one Aider history.
    right: Vec<String>,
}

/// `--questions DIR`: the turns each question finds by meaning (every turn, nearest first, no
/// floor: the bench's embedder has none), then what each floor keeps of them.
fn floors(cairn: &Cairn, data: &Path, dir: &Path) -> Result<()> {
    let conn = rusqlite::Connection::open(data.join("cairn.db"))?;
    let key_of = |name: &str| -> Result<String> {
        let (session, index) = name
            .rsplit_once('#')
            .with_context(|| format!("{name}: not <session>#<turn index>"))?;
        conn.query_row(
            "SELECT t.turn_key FROM turns t JOIN sessions s ON s.id = t.session_id
             WHERE coalesce(s.session_id, s.agent) = ?1 AND t.turn_index = ?2",
            rusqlite::params![session, index.parse::<i64>()?],
            |r| r.get(0),
        )
        .with_context(|| format!("{name}: no such turn in {}", data.display()))
    };
    // Every turn with its cosine, nearest first.
    let ask = |text: &str| -> Result<Vec<(String, f64)>> {
        Ok(cairn
            .search(&SearchQuery {
                text: text.to_owned(),
                mode: Mode::Vector,
                limit: Some(10_000),
                ..SearchQuery::default()
            })?
            .into_iter()
            .filter_map(|h| Some((h.turn_key?, h.score?)))
            .collect())
    };
    let mut asked = Vec::new();
    for line in std::fs::read_to_string(dir.join("questions.jsonl"))?.lines() {
        if line.trim().is_empty() {
            continue;
        }
        let q: Question = serde_json::from_str(line)?;
        let right: Vec<String> = q.right.iter().map(|n| key_of(n)).collect::<Result<_>>()?;
        asked.push((ask(&q.question)?, right));
    }
    let mut off = Vec::new();
    for line in std::fs::read_to_string(dir.join("off_topic.txt"))?.lines() {
        if !line.trim().is_empty() {
            off.push(ask(line.trim())?);
        }
    }
    let top5 = asked
        .iter()
        .filter(|(hits, right)| hits.iter().take(5).any(|(k, _)| right.contains(k)))
        .count();
    println!(
        "questions: {} asked, a right turn in the first five for {top5}; {} off-topic",
        asked.len(),
        off.len()
    );
    println!(
        "| floor | questions whose best right turn stays | right turns kept | other turns a question | turns an off-topic question finds (mean, most) |"
    );
    println!("| ---: | ---: | ---: | ---: | ---: |");
    let n = asked.len().max(1) as f64;
    for floor in [f64::NEG_INFINITY, 0.1, 0.15, 0.18, 0.2, 0.25, 0.3] {
        let kept = |hits: &[(String, f64)]| hits.iter().filter(|(_, c)| *c >= floor).count();
        let mut answered = 0;
        let (mut right_kept, mut right_all, mut others) = (0, 0, 0);
        for (hits, right) in &asked {
            let is_right = |k: &String| right.contains(k);
            if hits.iter().any(|(k, c)| is_right(k) && *c >= floor) {
                answered += 1;
            }
            right_all += hits.iter().filter(|(k, _)| is_right(k)).count();
            right_kept += hits
                .iter()
                .filter(|(k, c)| is_right(k) && *c >= floor)
                .count();
            others += hits
                .iter()
                .filter(|(k, c)| !is_right(k) && *c >= floor)
                .count();
        }
        let off_found: Vec<usize> = off.iter().map(|h| kept(h)).collect();
        println!(
            "| {} | {answered}/{} | {right_kept}/{right_all} | {:.1} | {:.1}, {} |",
            if floor.is_finite() {
                format!("{floor:.2}")
            } else {
                "none".into()
            },
            asked.len(),
            others as f64 / n,
            off_found.iter().sum::<usize>() as f64 / off.len().max(1) as f64,
            off_found.iter().max().unwrap_or(&0)
        );
    }
    Ok(())
}

/// A one-turn trajectory for `--append-every`: a prompt and an answer of ordinary words.
fn appended_trajectory(n: usize) -> String {
    serde_json::json!({
        "schema_version": "ATIF-v1.4",
        "session_id": format!("turns-bench-append-{n}"),
        "agent": {"name": "claude-code", "version": "2.0.0"},
        "steps": [
            {"step_id": 1, "source": "user", "timestamp": "2026-12-04T10:00:00Z",
             "message": format!("check the spotter session {n} and fix the failing test")},
            {"step_id": 2, "source": "agent", "timestamp": "2026-12-04T10:00:30Z",
             "message": "The test failed because the session id was not passed; fixed and ran it."}
        ]
    })
    .to_string()
}

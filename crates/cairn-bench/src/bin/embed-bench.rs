//! Semantic Recall: embedding throughput of the built-in model and hybrid query latency over a
//! generated corpus (default 10 000 entries).
//!
//! `cargo run --release -p cairn-bench --bin embed-bench -- [--entries N] [--queries Q]
//!  [--threads T] [--cache DIR] [--reembed]`
//!
//! 1. Builds the corpus once into `<cache>/embed-<N>/` (seeded; the same entries as
//!    recall-bench), then embeds every entry with the local model and reports entries/s and
//!    tokens/s. A later run reuses the vectors unless `--reembed`.
//! 2. Times Q queries end to end through the facade, as the CLI and the desktop run them
//!    (freshness check, query embedding, brute-force cosine over the cached matrix, lexical leg,
//!    RRF, loading the entries, the ledger write): hybrid, vector and lexical, p50/p95/p99 in
//!    ms; the query embedding alone; and the first (cold) query of a process.
//!
//! The machine's load average is printed with the figures: on a shared machine it explains them.

use std::path::PathBuf;
use std::time::Instant;

use anyhow::{Context, Result};
use cairn_bench::cli::{arg, cpu_secs, flag, loadavg, pct};
use cairn_bench::{entries, vocab::Vocab};
use cairn_core::Cairn;
use cairn_core::archive::store::Store;
use cairn_core::recall::model::{EntryType, ReviewState, Scope, Status};
use cairn_core::recall::store::{Filters, NewEntry};
use cairn_core::recall::{Mode, QueryRequest};
use cairn_core::semantic::embed::{Embedder, InputKind, LocalModel, ModelSearch};
use cairn_core::semantic::vectors::{self, VectorStore};

fn main() -> Result<()> {
    // SAFETY: the first statement of `main`, before any other thread exists.
    #[allow(unsafe_code)]
    unsafe {
        cairn_core::semantic::embed::set_thread_env_default();
    }
    let n: usize = arg("--entries", "10000").parse()?;
    let q: usize = arg("--queries", "200").parse()?;
    let threads: usize = arg("--threads", "0").parse()?;
    let cache = PathBuf::from(arg("--cache", "bench/cache"));
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let cores = std::thread::available_parallelism().map_or(1, |c| c.get());
    println!("machine: {cores} cores, load average {}", loadavg());
    let vocab = Vocab::from_fixtures(&root.join("tests/fixtures/claude"))?;
    let generated = entries::entries(&vocab, 42, n);
    let data = cache.join(format!("embed-{n}"));
    std::fs::create_dir_all(&data).with_context(|| format!("cannot create {}", data.display()))?;
    let db = data.join(cairn_core::archive::store::DB_FILE);
    let fresh_corpus = !db.exists();
    let mut store = Store::open(&db)?;
    if fresh_corpus {
        let started = Instant::now();
        let tx = store.conn_mut().transaction()?;
        for (i, e) in generated.iter().enumerate() {
            let entry = NewEntry {
                id: format!("bench-{i:06}"),
                entry_type: EntryType::ALL[i % EntryType::ALL.len()],
                scope: Scope::Project,
                status: Status::Accepted,
                review_state: if i % 5 == 0 {
                    ReviewState::HumanReviewed
                } else {
                    ReviewState::UnreviewedAuto
                },
                title: e.title.clone(),
                body: e.body.clone(),
                trigger: e.trigger.clone(),
                confidence: Some((i % 10) as f64 / 10.0),
                uncertainty: String::new(),
                project: format!("project{}", i % 17),
                cwd: String::new(),
                git_branch: String::new(),
                agent: if i % 2 == 0 {
                    "claude".into()
                } else {
                    "codex".into()
                },
                source_session_id: None,
                source_episode_id: String::new(),
                source_run_id: String::new(),
                extractor_method: String::new(),
                model: String::new(),
                label: String::new(),
                transferable: true,
                provenance_ok: true,
                supersedes_entry_id: String::new(),
                evidence: Vec::new(),
            };
            cairn_core::recall::store::insert(&tx, &entry, "2026-11-01T00:00:00.000Z")?;
        }
        tx.commit()?;
        eprintln!(
            "built {n} entries in {:.1} s",
            started.elapsed().as_secs_f64()
        );
    }

    // 1. Embedding throughput.
    let dir = ModelSearch::for_process(&data).locate()?;
    let t = Instant::now();
    let model = LocalModel::load(&dir, threads)?;
    let load_ms = t.elapsed().as_secs_f64() * 1000.0;
    println!("model: {} (load {load_ms:.0} ms)", model.describe());
    let fingerprint = vectors::store_fingerprint(VectorStore::Recall, model.fingerprint());
    let state = vectors::state(store.conn(), &cairn_core::recall::corpus::Entries)?;
    if flag("--reembed") || !state.is_fresh(&fingerprint) {
        let tokens: usize = generated
            .iter()
            .map(|e| {
                let doc = vectors::recall_doc(&e.title, &e.body, &e.trigger);
                model.token_ids(&doc).map_or(0, |t| t.len())
            })
            .sum();
        let load_before = loadavg();
        let cpu_before = cpu_secs();
        let t = Instant::now();
        let report = vectors::build(
            store.conn_mut(),
            &cairn_core::recall::corpus::Entries,
            &model,
            flag("--reembed"),
            &|done, total| {
                if done % 2048 < 256 || done == total {
                    eprintln!("  embedded {done}/{total}");
                }
            },
        )?;
        let secs = t.elapsed().as_secs_f64();
        let cpu = cpu_secs() - cpu_before;
        println!(
            "embed {} entries: {secs:.1} s wall, {cpu:.1} s CPU, {:.0} entries/s, {:.0} tokens/s ({} tokens, {:.0} per entry; load average before {load_before}, after {})",
            report.embedded,
            f64::from(report.embedded) / secs,
            tokens as f64 / secs,
            tokens,
            tokens as f64 / n as f64,
            loadavg()
        );
        println!(
            "{}",
            serde_json::json!({"bench": "embed_entries", "entries": report.embedded, "seconds": secs,
                "entries_per_s": f64::from(report.embedded) / secs, "tokens_per_s": tokens as f64 / secs,
                "cpu_seconds": cpu,
                "threads": threads, "cores": cores, "loadavg": loadavg()})
        );
    } else {
        println!(
            "embed: vectors for {n} entries already built in {} (pass --reembed to measure again)",
            data.display()
        );
    }
    drop(store);

    // 2. Query latency through the facade.
    let cairn = Cairn::open(&data)?;
    let queries = entries::queries(&vocab, &generated, 7, q);
    let filters = Filters {
        limit: Some(20),
        ..Default::default()
    };
    let req = |text: &str, mode: Mode| QueryRequest {
        text: text.to_owned(),
        mode,
        filters: filters.clone(),
        ..Default::default()
    };
    let t = Instant::now();
    cairn.recall_query(
        &req(&queries[0], Mode::Hybrid),
        cairn_core::recall::model::Surface::Query,
    )?;
    let cold = t.elapsed().as_secs_f64() * 1000.0;
    println!("first hybrid query of a process (model load + vectors into memory): {cold:.0} ms");
    let mut embed_times = Vec::with_capacity(q);
    for text in &queries {
        let t = Instant::now();
        model.embed(&[text], InputKind::Query)?;
        embed_times.push(t.elapsed().as_secs_f64() * 1000.0);
    }
    println!(
        "query embedding alone: p50 {:.2} ms, p95 {:.2} ms",
        pct(&mut embed_times, 0.5),
        pct(&mut embed_times, 0.95)
    );
    // Uncached: the query cache is emptied before each query, so every query runs the model
    // (what a new question costs). Cached: the same queries again (what a repeated query, or a
    // re-run with other filters, costs).
    let runs = [
        ("hybrid", Mode::Hybrid, true),
        ("hybrid_cached", Mode::Hybrid, false),
        ("vector", Mode::Vector, true),
        ("vector_cached", Mode::Vector, false),
        ("lexical", Mode::Lexical, false),
    ];
    for (name, mode, uncached) in runs {
        let load_before = loadavg();
        let mut times = Vec::with_capacity(q);
        let mut hits = 0;
        let mut cpu = 0.0;
        for text in &queries {
            if uncached {
                cairn.clear_query_cache();
            } else {
                // The same text asked just before: its embedding is cached.
                cairn.recall_query(&req(text, mode), cairn_core::recall::model::Surface::Query)?;
            }
            let cpu_before = cpu_secs();
            let t = Instant::now();
            let r =
                cairn.recall_query(&req(text, mode), cairn_core::recall::model::Surface::Query)?;
            times.push(t.elapsed().as_secs_f64() * 1000.0);
            hits += usize::from(!r.results.is_empty());
            cpu += cpu_secs() - cpu_before;
        }
        let cpu_ms = cpu * 1000.0 / q as f64;
        let (p50, p95, p99) = (
            pct(&mut times, 0.5),
            pct(&mut times, 0.95),
            pct(&mut times, 0.99),
        );
        println!(
            "recall {name} over {n} entries, {q} queries ({hits} with results): p50 {p50:.2} ms, p95 {p95:.2} ms, p99 {p99:.2} ms, CPU {cpu_ms:.2} ms per query (load average before {load_before}, after {})",
            loadavg()
        );
        println!(
            "{}",
            serde_json::json!({"bench": format!("recall_{name}"), "entries": n, "queries": q,
                "p50_ms": p50, "p95_ms": p95, "p99_ms": p99, "cpu_ms_per_query": cpu_ms,
                "loadavg": loadavg()})
        );
    }
    Ok(())
}

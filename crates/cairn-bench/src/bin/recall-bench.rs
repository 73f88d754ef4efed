//! Recall lexical query latency over a generated corpus (default 100 000 entries).
//!
//! `cargo run --release -p cairn-bench --bin recall-bench -- [--entries N] [--queries Q] [--cache DIR]`
//! Builds the corpus once into the cache dir (seeded), then times Q queries and prints
//! p50/p95/p99 in milliseconds (also as one JSON line).

use std::path::PathBuf;
use std::time::Instant;

use anyhow::{Context, Result};
use cairn_bench::cli::arg;
use cairn_bench::{entries, vocab::Vocab};
use cairn_core::archive::store::Store;
use cairn_core::recall::model::{EntryType, ReviewState, Scope, Status};
use cairn_core::recall::store::{Filters, NewEntry};

fn main() -> Result<()> {
    let n: usize = arg("--entries", "100000").parse()?;
    let q: usize = arg("--queries", "300").parse()?;
    let cache = PathBuf::from(arg("--cache", "bench/cache"));
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let vocab = Vocab::from_fixtures(&root.join("tests/fixtures/claude"))?;
    let generated = entries::entries(&vocab, 42, n);
    let db = cache.join(format!("recall-{n}.db"));
    std::fs::create_dir_all(&cache)
        .with_context(|| format!("cannot create {}", cache.display()))?;
    let fresh = !db.exists();
    let mut store = Store::open(&db)?;
    if fresh {
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
    let queries = entries::queries(&vocab, &generated, 7, q);
    let now = jiff::Timestamp::now().as_second();
    let filters = Filters {
        limit: Some(20),
        ..Default::default()
    };
    // Warm the page cache with one pass, then measure.
    for query in queries.iter().take(20) {
        cairn_core::recall::rank::rank(store.conn(), query, &filters, now)?;
    }
    let mut times: Vec<f64> = Vec::with_capacity(q);
    let mut hits = 0;
    for query in &queries {
        let t = Instant::now();
        let r = cairn_core::recall::rank::rank(store.conn(), query, &filters, now)?;
        times.push(t.elapsed().as_secs_f64() * 1000.0);
        hits += usize::from(!r.is_empty());
    }
    times.sort_by(f64::total_cmp);
    let pct = |p: f64| times[((times.len() as f64 * p) as usize).min(times.len() - 1)];
    println!(
        "recall lexical over {n} entries, {q} queries ({hits} with results): p50 {:.2} ms, p95 {:.2} ms, p99 {:.2} ms",
        pct(0.50),
        pct(0.95),
        pct(0.99)
    );
    println!(
        "{}",
        serde_json::json!({"bench": "recall_lexical", "entries": n, "queries": q, "p50_ms": pct(0.5), "p95_ms": pct(0.95), "p99_ms": pct(0.99)})
    );
    Ok(())
}

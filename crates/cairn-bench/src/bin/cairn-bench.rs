//! `cairn-bench`: the generator and in-process measurements behind `make bench`
//! (`scripts/bench.sh` drives it; see `bench/README.md`).
//!
//! ```text
//! cairn-bench corpus --out DIR --mb N --sessions N [--seed S] [--related N] [--codex-share F]
//! cairn-bench append --corpus DIR --fraction F [--seed S]     one turn onto F of the transcripts
//! cairn-bench session --projects DIR --bytes N --cwd DIR [--branch B] [--seed S]
//! cairn-bench append-file --file F [--seed S]                 one turn onto one transcript
//! cairn-bench queries --n N [--seed S]                        search queries, one per line
//! cairn-bench fts --data DIR [--queries N] [--seed S]         archive search latency, in process
//! cairn-bench skim --data DIR --branch B [--runs N]           skim latency, in process
//! cairn-bench describe                                        what the model learned
//! ```
//! Every command prints one JSON document on stdout.

use std::path::PathBuf;
use std::time::Instant;

use anyhow::{Context, Result, bail};
use cairn_bench::corpus::{Generator, Spec};
use cairn_bench::queries::search_queries;
use serde_json::json;

struct Args(Vec<String>);

impl Args {
    fn get(&self, name: &str) -> Option<&str> {
        self.0
            .iter()
            .position(|a| a == name)
            .and_then(|i| self.0.get(i + 1))
            .map(String::as_str)
    }
    fn req(&self, name: &str) -> Result<&str> {
        self.get(name)
            .with_context(|| format!("{name} is required"))
    }
    fn num<T: std::str::FromStr>(&self, name: &str, default: T) -> Result<T>
    where
        T::Err: std::fmt::Display,
    {
        match self.get(name) {
            None => Ok(default),
            Some(v) => v.parse().map_err(|e| anyhow::anyhow!("{name} {v}: {e}")),
        }
    }
}

fn fixtures() -> PathBuf {
    std::env::var_os("CAIRN_FIXTURES").map_or_else(
        || PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures"),
        PathBuf::from,
    )
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

/// CPU time of this thread so far, in milliseconds (from /proc, ns resolution).
fn thread_cpu_ms() -> f64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse::<f64>().ok())
        .map_or(f64::NAN, |ns| ns / 1e6)
}

fn main() -> Result<()> {
    let all: Vec<String> = std::env::args().skip(1).collect();
    let Some(cmd) = all.first().cloned() else {
        bail!("usage: cairn-bench corpus|append|session|append-file|queries|fts|skim|describe …");
    };
    let a = Args(all[1..].to_vec());
    let seed: u64 = a.num("--seed", 7)?;
    match cmd.as_str() {
        "describe" => {
            let g = Generator::from_fixtures(&fixtures())?;
            println!("{}", json!({"model": g.describe()}));
        }
        "corpus" => {
            let out = PathBuf::from(a.req("--out")?);
            let mb: f64 = a.num("--mb", 100.0)?;
            let mut spec = Spec::new(seed, (mb * 1e6) as u64, a.num("--sessions", 200)?);
            spec.related = a.num("--related", 0)?;
            spec.codex_share = a.num("--codex-share", spec.codex_share)?;
            if out.exists() && std::fs::read_dir(&out)?.next().is_some() {
                bail!("{} is not empty", out.display());
            }
            std::fs::create_dir_all(&out)?;
            let g = Generator::from_fixtures(&fixtures())?;
            let started = Instant::now();
            let stats = g.write_corpus(&spec, &out)?;
            let doc =
                json!({"spec": spec, "stats": stats, "seconds": started.elapsed().as_secs_f64()});
            std::fs::write(out.join("corpus.json"), doc.to_string())?;
            println!("{doc}");
        }
        "append" => {
            let corpus = PathBuf::from(a.req("--corpus")?);
            let g = Generator::from_fixtures(&fixtures())?;
            let (files, bytes) = g.append_to_corpus(&corpus, a.num("--fraction", 0.01)?, seed)?;
            println!("{}", json!({"files": files, "bytes": bytes}));
        }
        "session" => {
            let g = Generator::from_fixtures(&fixtures())?;
            let path = g.claude_session(
                seed,
                a.num("--bytes", 1_000_000usize)?,
                a.req("--cwd")?,
                a.get("--branch").unwrap_or("main"),
                &PathBuf::from(a.req("--projects")?),
            )?;
            let size = std::fs::metadata(&path)?.len();
            println!("{}", json!({"path": path, "bytes": size}));
        }
        "append-file" => {
            let g = Generator::from_fixtures(&fixtures())?;
            let path = PathBuf::from(a.req("--file")?);
            let bytes = g.append_turn(&path, seed)?;
            println!("{}", json!({"path": path, "bytes": bytes}));
        }
        "queries" => {
            let g = Generator::from_fixtures(&fixtures())?;
            for q in search_queries(g.vocab(), seed, a.num("--n", 200)?) {
                println!("{q}");
            }
        }
        "fts" => {
            let data = PathBuf::from(a.req("--data")?);
            let n: usize = a.num("--queries", 200)?;
            let limit: u32 = a.num("--limit", 20)?;
            let g = Generator::from_fixtures(&fixtures())?;
            let queries = search_queries(g.vocab(), seed, n);
            let cairn = cairn_core::Cairn::open(&data)?;
            let records: i64 = count_records(&data)?;
            let run = |q: &str| {
                cairn.search(&cairn_core::views::search::SearchQuery {
                    text: q.to_owned(),
                    limit: Some(limit),
                    ..Default::default()
                })
            };
            // One pass to warm the page cache, then the measured pass.
            for q in queries.iter().take(20) {
                run(q)?;
            }
            let mut wall = Vec::with_capacity(n);
            let mut cpu = Vec::with_capacity(n);
            let mut hits = 0usize;
            for q in &queries {
                let (t, c) = (Instant::now(), thread_cpu_ms());
                let r = run(q)?;
                cpu.push(thread_cpu_ms() - c);
                wall.push(t.elapsed().as_secs_f64() * 1000.0);
                hits += usize::from(!r.is_empty());
            }
            wall.sort_by(f64::total_cmp);
            cpu.sort_by(f64::total_cmp);
            println!(
                "{}",
                json!({"bench": "archive_fts", "records": records, "queries": n, "with_hits": hits,
                       "p50_ms": percentile(&wall, 0.5), "p95_ms": percentile(&wall, 0.95),
                       "max_ms": percentile(&wall, 1.0),
                       "cpu_p50_ms": percentile(&cpu, 0.5), "cpu_p95_ms": percentile(&cpu, 0.95)})
            );
        }
        "skim" => {
            let data = PathBuf::from(a.req("--data")?);
            let branch = a.req("--branch")?;
            let runs: usize = a.num("--runs", 30)?;
            // `--repo DIR`: scoped to DIR's repository as the CLI and MCP skim are (sessions of
            // no repository kept).
            let repo = a.get("--repo").map(str::to_owned);
            let cairn = cairn_core::Cairn::open(&data)?;
            let q = cairn_core::views::skim::SkimQuery {
                target: cairn_core::git::targets::Target::branch(branch),
                include_weak: false,
                limit: None,
                unplaced: repo.is_some(),
                repo_root: repo.clone(),
                project: None,
                published_in: None,
                agent: None,
            };
            let first = cairn.skim(&q)?;
            let mut wall = Vec::with_capacity(runs);
            let mut cpu = Vec::with_capacity(runs);
            for _ in 0..runs {
                let (t, c) = (Instant::now(), thread_cpu_ms());
                std::hint::black_box(cairn.skim(&q)?);
                cpu.push(thread_cpu_ms() - c);
                wall.push(t.elapsed().as_secs_f64() * 1000.0);
            }
            wall.sort_by(f64::total_cmp);
            cpu.sort_by(f64::total_cmp);
            println!(
                "{}",
                json!({"bench": "skim", "branch": branch, "repo": repo, "sessions": first.coverage.showing_sessions,
                       "turns": first.coverage.showing_turns, "runs": runs,
                       "p50_ms": percentile(&wall, 0.5), "p95_ms": percentile(&wall, 0.95),
                       "cpu_p50_ms": percentile(&cpu, 0.5), "cpu_p95_ms": percentile(&cpu, 0.95)})
            );
        }
        other => bail!("unknown command {other}"),
    }
    Ok(())
}

fn count_records(data: &std::path::Path) -> Result<i64> {
    let store = cairn_core::archive::store::Store::open_read_only(
        &data.join(cairn_core::archive::store::DB_FILE),
    )?;
    Ok(store
        .conn()
        .query_row("SELECT COUNT(*) FROM records", [], |r| r.get(0))?)
}

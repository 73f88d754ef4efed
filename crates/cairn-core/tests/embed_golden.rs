//! The built-in embedding model against the Python reference (sentence-transformers): the same
//! tokens, the same vectors (first 16 dims, sums) and the same cosines, within float tolerance.
//! tests/fixtures/embed/SOURCES.md says how the golden file was made.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use cairn_core::semantic::embed::{Embedder, InputKind, LocalModel};
use cairn_core::semantic::vectors::dot;
use serde::Deserialize;

#[derive(Deserialize)]
struct Golden {
    sentences: Vec<Sentence>,
    cosines: Vec<Pair>,
}

#[derive(Deserialize)]
struct Sentence {
    text: String,
    tokens: usize,
    first_ids: Vec<u32>,
    first: Vec<f32>,
    sum: f32,
    abs_sum: f32,
}

#[derive(Deserialize)]
struct Pair {
    a: usize,
    b: usize,
    cosine: f32,
}

/// float32 on different kernels (torch vs candle's gemm) differs in the last bits; a recipe
/// mistake (CLS pooling, padding in the mean, no normalisation, wrong truncation) moves values
/// by 1e-2 and more.
const TOL: f32 = 2e-4;

#[test]
fn local_model_matches_sentence_transformers() {
    let dir = support::ensure_model();
    let model = LocalModel::load(&dir, 2).unwrap();
    assert_eq!(model.dims(), 384);
    let golden: Golden = serde_json::from_str(
        &std::fs::read_to_string(support::fixtures().join("embed/golden.json")).unwrap(),
    )
    .unwrap();
    let texts: Vec<&str> = golden.sentences.iter().map(|s| s.text.as_str()).collect();
    // One batch of all (mixed lengths, so padding is exercised) …
    let all = model.embed(&texts, InputKind::Document).unwrap();
    assert_eq!(all.len(), texts.len() * 384);
    for (i, s) in golden.sentences.iter().enumerate() {
        let ids = model.token_ids(&s.text).unwrap();
        assert_eq!(ids.len(), s.tokens, "token count of {:?}", s.text);
        assert_eq!(
            &ids[..s.first_ids.len()],
            &s.first_ids[..],
            "tokens of {:?}",
            s.text
        );
        let v = &all[i * 384..(i + 1) * 384];
        let norm = dot(v, v).sqrt();
        assert!((norm - 1.0).abs() < 1e-5, "norm {norm} of {:?}", s.text);
        for (d, (got, want)) in v.iter().zip(&s.first).enumerate() {
            assert!(
                (got - want).abs() < TOL,
                "dim {d} of {:?}: {got} vs reference {want}",
                s.text
            );
        }
        let sum: f32 = v.iter().sum();
        let abs_sum: f32 = v.iter().map(|x| x.abs()).sum();
        assert!((sum - s.sum).abs() < 384.0 * TOL, "sum of {:?}", s.text);
        assert!(
            (abs_sum - s.abs_sum).abs() < 384.0 * TOL,
            "abs sum of {:?}",
            s.text
        );
        // … and each alone (no padding) gives the same vector.
        let alone = model.embed(&[&s.text], InputKind::Query).unwrap();
        let drift = alone
            .iter()
            .zip(v)
            .map(|(a, b)| (a - b).abs())
            .fold(0f32, f32::max);
        assert!(drift < 1e-4, "batching changed {:?} by {drift}", s.text);
    }
    for p in &golden.cosines {
        let (a, b) = (
            &all[p.a * 384..(p.a + 1) * 384],
            &all[p.b * 384..(p.b + 1) * 384],
        );
        let c = dot(a, b);
        assert!(
            (c - p.cosine).abs() < TOL,
            "cosine({}, {}) = {c}, reference {}",
            p.a,
            p.b,
            p.cosine
        );
    }
    // An empty text has no meaning to embed: a zero vector (never similar to anything).
    let empty = model.embed(&["", "  "], InputKind::Document).unwrap();
    assert!(empty.iter().all(|x| *x == 0.0));
    // The token-id entry (for distilling a static table) is the same model: the texts' own ids
    // give their vectors, in one batch of mixed lengths.
    let ids: Vec<Vec<u32>> = texts.iter().map(|t| model.token_ids(t).unwrap()).collect();
    let by_ids = model.embed_ids(&ids).unwrap();
    let drift = by_ids
        .iter()
        .zip(&all)
        .map(|(a, b)| (a - b).abs())
        .fold(0f32, f32::max);
    assert!(drift < 1e-4, "embed_ids drifted by {drift}");
    assert!(model.vocab_size() >= 30_000, "{}", model.vocab_size());
}

/// The name and nice value of each of this process's threads whose name starts with `prefix`
/// (Linux's `/proc/self/task/<tid>/comm` and `stat`, field 19).
#[cfg(target_os = "linux")]
fn threads_nice(prefix: &str) -> Vec<(String, i32)> {
    let mut out = Vec::new();
    for task in std::fs::read_dir("/proc/self/task").unwrap() {
        let dir = task.unwrap().path();
        // A thread may end between the listing and the reads.
        let (Ok(comm), Ok(stat)) = (
            std::fs::read_to_string(dir.join("comm")),
            std::fs::read_to_string(dir.join("stat")),
        ) else {
            continue;
        };
        if !comm.starts_with(prefix) {
            continue;
        }
        // Fields from 3 (the state) on follow the name's closing parenthesis.
        let fields: Vec<&str> = stat[stat.rfind(')').unwrap() + 1..]
            .split_whitespace()
            .collect();
        out.push((comm.trim().to_owned(), fields[19 - 3].parse().unwrap()));
    }
    out
}

/// Embedding batches is background work: the batch threads run at nice 10 at least, so a long
/// build yields the CPU to a person's own work, while a query's thread keeps the priority of the
/// thread that loaded the model.
#[cfg(target_os = "linux")]
#[test]
fn batches_run_at_a_lower_priority_than_queries() {
    let mine = rustix::process::getpriority_process(Some(rustix::thread::gettid())).unwrap();
    assert!(
        mine < 10,
        "this test needs a priority above nice 10, not {mine}"
    );
    let model = LocalModel::load(&support::ensure_model(), 2).unwrap();
    model
        .embed(&["one text", "and another"], InputKind::Document)
        .unwrap();
    model.embed(&["a query"], InputKind::Query).unwrap();
    // Every model this test binary loaded so far (tests run side by side) is counted.
    let threads = threads_nice("cairn-embed-");
    let (query, batch): (Vec<_>, Vec<_>) = threads
        .iter()
        .partition(|(name, _)| name.as_str() == "cairn-embed-que");
    assert!(!query.is_empty() && batch.len() >= 2, "{threads:?}");
    assert!(batch.iter().all(|(_, nice)| *nice >= 10), "{threads:?}");
    assert!(query.iter().all(|(_, nice)| *nice < 10), "{threads:?}");
}

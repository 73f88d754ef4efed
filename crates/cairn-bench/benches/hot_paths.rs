//! Criterion benches of the hot paths: parse + redact a real transcript line by line, and the
//! whole capture of it into a fresh archive (parse, redact, insert, FTS, retained copy).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use criterion::{Criterion, Throughput, criterion_group, criterion_main};

fn fixture(name: &str) -> String {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/claude");
    std::fs::read_to_string(root.join(name)).unwrap()
}

fn redact_lines(c: &mut Criterion) {
    let text = fixture("ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl");
    let redactor = cairn_core::archive::redact::Redactor::global();
    let mut g = c.benchmark_group("archive");
    g.throughput(Throughput::Bytes(text.len() as u64));
    g.bench_function("redact_line/claude-2.7MB", |b| {
        b.iter(|| {
            let mut findings = Vec::new();
            for line in text.lines() {
                std::hint::black_box(redactor.redact_line(line, &mut findings));
            }
        })
    });
    g.bench_function("parse_line/claude-2.7MB", |b| {
        b.iter(|| {
            let mut parser = cairn_core::archive::sources::parser_for(
                cairn_core::archive::Agent::Claude,
                cairn_core::archive::sources::FileRole::Main,
                None,
            )
            .unwrap();
            let mut out = cairn_core::archive::sources::LineOutput::default();
            for line in text.lines() {
                let _ = parser.parse_line(line, &mut out);
                out.records.clear();
                out.usage.clear();
            }
        })
    });
    g.finish();
}

/// Cold capture of one real 2.7 MB transcript into an empty archive: what `sync` does per file.
fn capture_cold(c: &mut Criterion) {
    let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures/claude/ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl");
    let len = std::fs::metadata(&src).unwrap().len();
    let mut g = c.benchmark_group("archive");
    g.throughput(Throughput::Bytes(len));
    g.sample_size(10);
    g.bench_function("capture_cold/claude-2.7MB", |b| {
        b.iter_batched(
            || {
                let dir = tempfile::tempdir().unwrap();
                let file = dir
                    .path()
                    .join("projects/p/ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl");
                std::fs::create_dir_all(file.parent().unwrap()).unwrap();
                std::fs::copy(&src, &file).unwrap();
                let cairn = cairn_core::Cairn::open(dir.path().join("data")).unwrap();
                (dir, file, cairn)
            },
            |(dir, file, cairn)| {
                let found = cairn_core::archive::discover::FoundFile {
                    agent: cairn_core::archive::Agent::Claude,
                    role: cairn_core::archive::sources::FileRole::Main,
                    path: file,
                    parent_hint: None,
                    agent_id: None,
                };
                let report = cairn
                    .capture_paths(&[found], &cairn_core::archive::capture::Quiet)
                    .unwrap();
                std::hint::black_box(report);
                drop(cairn);
                drop(dir);
            },
            criterion::BatchSize::PerIteration,
        )
    });
    g.finish();
}

criterion_group!(benches, redact_lines, capture_cold);
criterion_main!(benches);

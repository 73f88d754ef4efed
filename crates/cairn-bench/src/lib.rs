//! Seeded generators for Cairn's benchmarks. The same seed gives the same bytes, so every figure
//! in `bench/RESULTS.md` can be reproduced.
//!
//! - [`corpus`]: real-shaped Claude Code and Codex transcripts, whole corpora on disk
//!   ([`claude`] and [`codex`] learn the shapes from `tests/fixtures/`; [`template`] turns a real
//!   line into a new one; [`text`] writes the free text);
//! - [`entries`]: Recall entries and queries;
//! - [`queries`]: archive search queries;
//! - [`cli`]: what the benchmark binaries share (flags, load, CPU seconds, percentiles);
//! - [`static_embed`]: a static embedder distilled from the local model (`turns-bench --static`).

pub mod claude;
pub mod cli;
pub mod codex;
pub mod corpus;
pub mod entries;
pub mod queries;
pub mod rng;
pub mod static_embed;
pub mod template;
pub mod text;
pub mod vocab;

//! Seeded generators for Cairn's benchmarks. The same seed gives the same bytes, so every figure
//! in `bench/RESULTS.md` can be reproduced.

pub mod entries;
pub mod rng;
pub mod vocab;

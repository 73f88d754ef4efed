//! libFuzzer entry point of the `analyze` target; the body (and its invariants) is
//! `cairn_fuzz::analyze`, shared with the stable driver.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| cairn_fuzz::analyze(data));

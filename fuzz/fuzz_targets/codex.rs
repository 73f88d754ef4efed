//! libFuzzer entry point of the `codex` target; the body (and its invariants) is
//! `cairn_fuzz::codex`, shared with the stable driver.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| cairn_fuzz::codex(data));

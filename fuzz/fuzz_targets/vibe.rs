//! libFuzzer entry point of the `vibe` target; the body (and its invariants) is
//! `cairn_fuzz::vibe`, shared with the stable driver.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| cairn_fuzz::vibe(data));

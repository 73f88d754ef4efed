//! libFuzzer entry point of the `kimi` target; the body (and its invariants) is
//! `cairn_fuzz::kimi`, shared with the stable driver.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| cairn_fuzz::kimi(data));

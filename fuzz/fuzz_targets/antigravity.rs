//! libFuzzer entry point of the `antigravity` target; the body (and its invariants) is
//! `cairn_fuzz::antigravity`, shared with the stable driver.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| cairn_fuzz::antigravity(data));

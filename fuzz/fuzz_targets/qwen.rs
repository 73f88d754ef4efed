//! libFuzzer entry point of the `qwen` target; the body (and its invariants) is
//! `cairn_fuzz::qwen`, shared with the stable driver.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| cairn_fuzz::qwen(data));

//! libFuzzer entry point of the `grok` target; the body (and its invariants) is
//! `cairn_fuzz::grok`, shared with the stable driver.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| cairn_fuzz::grok(data));

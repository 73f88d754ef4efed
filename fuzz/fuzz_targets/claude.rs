//! libFuzzer entry point of the `claude` target; the body (and its invariants) is
//! `cairn_fuzz::claude`, shared with the stable driver.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| cairn_fuzz::claude(data));

//! libFuzzer entry point of the `retained_copy` target; the body (and its invariants) is
//! `cairn_fuzz::retained_copy`, shared with the stable driver.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| cairn_fuzz::retained_copy(data));

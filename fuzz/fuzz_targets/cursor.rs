//! libFuzzer entry point of the `cursor` target; the body (and its invariants) is
//! `cairn_fuzz::cursor`, shared with the stable driver.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| cairn_fuzz::cursor(data));

//! libFuzzer entry point of the `posit` target; the body (and its invariants) is
//! `cairn_fuzz::posit`, shared with the stable driver.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| cairn_fuzz::posit(data));

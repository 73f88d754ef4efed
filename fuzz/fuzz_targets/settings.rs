//! libFuzzer entry point of the `settings` target; the body (and its invariants) is
//! `cairn_fuzz::settings`, shared with the stable driver.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| cairn_fuzz::settings(data));

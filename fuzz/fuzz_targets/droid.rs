//! libFuzzer entry point of the `droid` target; the body (and its invariants) is
//! `cairn_fuzz::droid`, shared with the stable driver.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| cairn_fuzz::droid(data));

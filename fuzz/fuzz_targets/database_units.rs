//! libFuzzer entry point of the `database_units` target; the body (and its invariants) is
//! `cairn_fuzz::database_units`, shared with the stable driver.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| cairn_fuzz::database_units(data));

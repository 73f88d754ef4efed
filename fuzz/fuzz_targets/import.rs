//! libFuzzer entry point of the `import` target; the body (and its invariants) is
//! `cairn_fuzz::import`, shared with the stable driver.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| cairn_fuzz::import(data));

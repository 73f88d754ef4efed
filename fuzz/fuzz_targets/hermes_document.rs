//! libFuzzer entry point of the `hermes_document` target; the body (and its invariants) is
//! `cairn_fuzz::hermes_document`, shared with the stable driver.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| cairn_fuzz::hermes_document(data));

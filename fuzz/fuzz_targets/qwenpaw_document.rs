//! libFuzzer entry point of the `qwenpaw_document` target; the body (and its invariants) is
//! `cairn_fuzz::qwenpaw_document`, shared with the stable driver.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| cairn_fuzz::qwenpaw_document(data));

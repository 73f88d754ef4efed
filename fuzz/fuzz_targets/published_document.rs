//! libFuzzer entry point of the `published_document` target; the body (and its invariants) is
//! `cairn_fuzz::published_document`, shared with the stable driver.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| cairn_fuzz::published_document(data));

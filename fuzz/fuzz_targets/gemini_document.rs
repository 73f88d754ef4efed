//! libFuzzer entry point of the `gemini_document` target; the body (and its invariants) is
//! `cairn_fuzz::gemini_document`, shared with the stable driver.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| cairn_fuzz::gemini_document(data));

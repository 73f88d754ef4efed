//! libFuzzer entry point of the `gemini` target; the body (and its invariants) is
//! `cairn_fuzz::gemini`, shared with the stable driver.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| cairn_fuzz::gemini(data));

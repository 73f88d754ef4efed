//! libFuzzer entry point of the `ai_note` target; the body (and its invariants) is
//! `cairn_fuzz::ai_note`, shared with the stable driver.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| cairn_fuzz::ai_note(data));

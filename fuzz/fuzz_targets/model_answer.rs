//! libFuzzer entry point of the `model_answer` target; the body (and its invariants) is
//! `cairn_fuzz::model_answer`, shared with the stable driver.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| cairn_fuzz::model_answer(data));

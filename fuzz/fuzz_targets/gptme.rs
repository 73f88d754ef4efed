//! libFuzzer entry point of the `gptme` target; the body (and its invariants) is
//! `cairn_fuzz::gptme`, shared with the stable driver.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| cairn_fuzz::gptme(data));

//! libFuzzer entry point of the `copilot` target; the body (and its invariants) is
//! `cairn_fuzz::copilot`, shared with the stable driver.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| cairn_fuzz::copilot(data));

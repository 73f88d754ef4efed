//! libFuzzer entry point of the `iflow` target; the body (and its invariants) is
//! `cairn_fuzz::iflow`, shared with the stable driver.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| cairn_fuzz::iflow(data));

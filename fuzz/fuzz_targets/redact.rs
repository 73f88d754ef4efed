//! libFuzzer entry point of the `redact` target; the body (and its invariants) is
//! `cairn_fuzz::redact`, shared with the stable driver.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| cairn_fuzz::redact(data));

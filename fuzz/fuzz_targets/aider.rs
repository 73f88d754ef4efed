//! libFuzzer entry point of the `aider` target; the body (and its invariants) is
//! `cairn_fuzz::aider`, shared with the stable driver.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| cairn_fuzz::aider(data));

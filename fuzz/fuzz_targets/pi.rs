//! libFuzzer entry point of the `pi` target; the body (and its invariants) is `cairn_fuzz::pi`,
//! shared with the stable driver.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| cairn_fuzz::pi(data));

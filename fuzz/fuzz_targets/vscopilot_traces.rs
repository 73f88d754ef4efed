//! libFuzzer entry point of the `vscopilot_traces` target; the body (and its invariants) is
//! `cairn_fuzz::vscopilot_traces`, shared with the stable driver.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| cairn_fuzz::vscopilot_traces(data));

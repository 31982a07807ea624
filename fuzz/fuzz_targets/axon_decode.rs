//! Fuzz target: see `fuzz/bodies/axon_decode.rs`.
#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "../bodies/axon_decode.rs"]
mod body;

fuzz_target!(|data: &[u8]| body::axon_decode(data));

//! Fuzz target: see `fuzz/bodies/tether_decode.rs`.
#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "../bodies/tether_decode.rs"]
mod body;

fuzz_target!(|data: &[u8]| body::tether_decode(data));

//! Fuzz target: see `fuzz/bodies/kameo_decode.rs`.
#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "../bodies/kameo_decode.rs"]
mod body;

fuzz_target!(|data: &[u8]| body::kameo_decode(data));

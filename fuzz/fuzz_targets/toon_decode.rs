//! Fuzz target: see `fuzz/bodies/toon_decode.rs`.
#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "../bodies/toon_decode.rs"]
mod body;

fuzz_target!(|data: &[u8]| body::toon_decode(data));

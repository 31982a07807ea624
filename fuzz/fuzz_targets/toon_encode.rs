//! Fuzz target: see `fuzz/bodies/toon_encode.rs`.
#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "../bodies/toon_encode.rs"]
mod body;

fuzz_target!(|data: &[u8]| body::toon_encode(data));

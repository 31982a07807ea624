//! Fuzz target: see `fuzz/bodies/kado_decode.rs`.
#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "../bodies/kado_decode.rs"]
mod body;

fuzz_target!(|data: &[u8]| body::kado_decode(data));

//! Fuzz target: see `fuzz/bodies/tokens_long.rs`.
#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "../bodies/tokens_long.rs"]
mod body;

fuzz_target!(|data: &[u8]| body::tokens_long(data));

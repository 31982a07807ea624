//! Fuzz target: see `fuzz/bodies/tokenizer_json.rs`.
#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "../bodies/tokenizer_json.rs"]
mod body;

fuzz_target!(|data: &[u8]| body::tokenizer_json(data));

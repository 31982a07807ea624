//! Fuzz target: see `fuzz/bodies/cli_run.rs`.
#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "../bodies/cli_run.rs"]
mod body;

fuzz_target!(|data: &[u8]| body::cli_run(data));

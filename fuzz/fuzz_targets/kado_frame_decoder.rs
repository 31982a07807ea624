//! Kado frame streams fed in arbitrary chunks give exactly the frames and
//! errors of feeding them whole. The body lives in `fuzz/bodies/` so that
//! `core/tests/fuzz_corpus.rs` replays the committed seeds on stable.
#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "../bodies/kado_frame_decoder.rs"]
mod body;

fuzz_target!(|data: &[u8]| body::kado_frame_decoder(data));

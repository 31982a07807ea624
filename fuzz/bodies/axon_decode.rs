//! AXON decoding and a session on arbitrary bytes: must return, never panic.
//!
//! Shared by the cargo-fuzz target and `core/tests/fuzz_corpus.rs`, which
//! replays the committed seeds (`fuzz/corpus-seed/axon_decode/`) on stable.

use polywire::axon::{self, DecodeOptions, Session, SessionConfig, StreamType};

pub fn axon_decode(data: &[u8]) {
    if let Ok(env) = axon::decode_with(data, &DecodeOptions { fill_defaults: false, ..DecodeOptions::default() }) {
        // Whatever decodes encodes, and decodes back to the same message.
        let bytes = axon::encode(&env).expect("a decoded message encodes");
        assert_eq!(axon::decode_with(&bytes, &DecodeOptions { fill_defaults: false, ..DecodeOptions::default() }).ok(), Some(env));
    }
    let _ = axon::decode(data);
    if let Ok(mut s) = Session::new(SessionConfig::new("ed25519.b600306cfa76723fdec395e53a9b3d9f")) {
        let _ = s.receive(data, StreamType::Bidirectional, 1);
        let _ = s.receive(data, StreamType::Unidirectional, 2);
        let _ = s.receive(data, StreamType::Bidirectional, 3);
    }
}

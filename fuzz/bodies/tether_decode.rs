//! Tether decoders on arbitrary bytes: must return Ok or Err, never panic,
//! overflow the stack or allocate beyond the input's size.
//!
//! Shared by the cargo-fuzz target and `core/tests/fuzz_corpus.rs`, which
//! replays the committed seeds (`fuzz/corpus-seed/tether_decode/`) on stable.

use polywire::tether::{self, Options};

pub fn tether_decode(data: &[u8]) {
    let utf8 = Options::default();
    let latin1 = Options::latin1();
    if let Ok(v) = tether::decode_with(data, &utf8) {
        // Whatever decodes re-encodes to the same bytes.
        assert_eq!(tether::encode_with(&v, &utf8).ok().as_deref(), Some(data));
    }
    let _ = tether::decode_with(data, &latin1);
    let _ = tether::decode_answer_with(data, &utf8);
    let _ = tether::decode_message_send_with(data, &latin1);
    let _ = tether::decode_frame(data, &utf8);
    if let Ok(s) = std::str::from_utf8(data) {
        let _ = tether::from_hex(s);
        let _ = tether::read_tool_result(data, &utf8);
    }
}

//! Kado frames: `decode`, `decompress` and the streaming `FrameDecoder` on
//! arbitrary bytes must return (an error or a value), never panic, and the
//! streaming decoder must agree with `decode` on the first frame.
//!
//! Shared by the cargo-fuzz target and `core/tests/fuzz_corpus.rs`, which
//! replays the committed seeds (`fuzz/corpus-seed/kado_decode/`) on stable.

use polywire::kado::{self, FrameDecoder};

pub fn kado_decode(data: &[u8]) {
    let whole = kado::decode(data);
    let _ = kado::decompress(data);
    let _ = kado::decode_raw(data);

    // Feed in two uneven pieces; the first frame must match `decode_raw`.
    let cut = data.first().map_or(0, |&b| b as usize).min(data.len());
    let mut d = FrameDecoder::with_max_frame_size(1 << 20);
    d.push(&data[..cut]);
    let mut first = d.next_frame();
    if matches!(first, Ok(None)) {
        d.push(&data[cut..]);
        first = d.next_frame();
    }
    if let (Ok(Some(f)), Ok((h, p))) = (&first, kado::decode_raw(data)) {
        assert_eq!(f.header, h);
        assert_eq!(&f.payload[..], &p[..]);
    }
    if whole.is_ok() {
        assert!(matches!(first, Ok(Some(_))));
    }
}

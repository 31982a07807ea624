//! Body of the `kado_frame_decoder` fuzz target, shared with
//! `core/tests/fuzz_corpus.rs` (which replays `fuzz/corpus-seed/` on stable):
//! feeding a Kado frame stream to `FrameDecoder` in arbitrary chunks gives
//! exactly the frames and the error that feeding it whole gives.
//!
//! Input: byte 0 is a seed for the chunk sizes, byte 1 picks the frame-size
//! limit, the rest is the stream.

use polywire::kado::{FrameDecoder, RawFrame};

/// Every frame the decoder yields, then how it stopped (`Ok(())` when it
/// wants more input, else its error), then the `finish()` verdict.
type Outcome = (Vec<RawFrame>, Result<(), polywire::Error>, Result<(), polywire::Error>);

fn drain(d: &mut FrameDecoder, frames: &mut Vec<RawFrame>) -> Result<(), polywire::Error> {
    loop {
        match d.next_frame() {
            Ok(Some(f)) => frames.push(f),
            Ok(None) => return Ok(()),
            Err(e) => return Err(e),
        }
    }
}

fn feed(stream: &[u8], max: usize, mut chunk: impl FnMut() -> usize) -> Outcome {
    let mut d = FrameDecoder::with_max_frame_size(max);
    let mut frames = Vec::new();
    let mut rest = stream;
    let mut stop = Ok(());
    while !rest.is_empty() {
        let n = chunk().clamp(1, rest.len());
        d.push(&rest[..n]);
        rest = &rest[n..];
        stop = drain(&mut d, &mut frames);
        if stop.is_err() {
            break;
        }
    }
    if stop.is_ok() {
        stop = drain(&mut d, &mut frames);
    }
    let fin = if stop.is_ok() { d.finish() } else { Ok(()) };
    (frames, stop, fin)
}

pub fn kado_frame_decoder(data: &[u8]) {
    let [seed, limit, stream @ ..] = data else { return };
    let max = match limit % 4 {
        0 => polywire::kado::DEFAULT_MAX_FRAME_SIZE,
        1 => 64,
        2 => 1 << 12,
        _ => 32 + usize::from(*limit),
    };
    let whole = feed(stream, max, || usize::MAX);
    let mut x = u64::from(*seed) | 1;
    let chunked = feed(stream, max, || {
        // xorshift: chunk sizes from 1 to 64, skewed small.
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        1 + (x % 64) as usize >> (x >> 60)
    });
    let bytewise = feed(stream, max, || 1);
    assert_eq!(whole, chunked, "chunked feeding differs from whole");
    assert_eq!(whole, bytewise, "byte-by-byte feeding differs from whole");
}

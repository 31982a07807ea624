//! Long pieces merged a window at a time (`core/src/tokens_long.rs`) on
//! arbitrary bytes: the first two bytes choose the window (16 to 527 bytes,
//! so that even short inputs span many windows) and the margin before its
//! end (0 to 63 bytes); the rest, repeated to at least 600 bytes when the
//! third byte is odd (runs, which the windows remember), is the piece. When
//! the windows hold to the end, their tokens must be those of merging the
//! piece whole (the heap merge, itself held to tiktoken by `tokens_count`),
//! for both encodings; giving up is allowed (the count then merges whole).
//!
//! Shared by the cargo-fuzz target and `core/tests/fuzz_corpus.rs`, which
//! replays the committed seeds (`fuzz/corpus-seed/tokens_long/`) on stable.

use polywire::tokens::{windows_and_whole, Encoding};

pub fn tokens_long(data: &[u8]) {
    let [w, m, rest @ ..] = data else { return };
    let window = 16 + usize::from(*w) * 2;
    let margin = usize::from(*m) % 64;
    let mut piece = rest.to_vec();
    if rest.first().is_some_and(|b| b % 2 == 1) {
        while !rest.is_empty() && piece.len() < 600 {
            piece.extend_from_slice(rest);
        }
    }
    if piece.is_empty() {
        return;
    }
    for e in Encoding::ALL {
        let (windows, whole) = windows_and_whole(e, &piece, window, margin);
        assert_eq!(whole.last().copied(), Some(piece.len()), "{e:?} whole merge");
        if let Some(windows) = windows {
            assert_eq!(windows, whole, "{e:?} windows of {window} bytes, margin {margin}");
        }
    }
}

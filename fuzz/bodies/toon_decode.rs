//! Any bytes, any options: the TOON decoder returns a value or an error,
//! never panics; what strict mode accepts, non-strict mode decodes alike.
//! The first byte picks the options (indent, path expansion).
//!
//! Shared by the cargo-fuzz target and `core/tests/fuzz_corpus.rs`, which
//! replays the committed seeds (`fuzz/corpus-seed/toon_decode/`) on stable.

use polywire::toon::decode::{decode_bytes, DecodeOptions, ExpandPaths};

pub fn toon_decode(data: &[u8]) {
    let Some((&flags, text)) = data.split_first() else {
        return;
    };
    let indent = usize::from(flags & 3) + 1;
    let expand_paths = if flags & 4 != 0 { ExpandPaths::Safe } else { ExpandPaths::Off };
    let strict = decode_bytes(text, &DecodeOptions { indent, strict: true, expand_paths });
    let lax = decode_bytes(text, &DecodeOptions { indent, strict: false, expand_paths });
    if let Ok(v) = strict {
        assert_eq!(lax.ok(), Some(v));
    }
}

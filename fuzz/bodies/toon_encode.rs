//! Any JSON document, any options: the TOON encoder returns text or an error,
//! never panics. The first byte picks the options.
//!
//! Shared by the cargo-fuzz target and `core/tests/fuzz_corpus.rs`, which
//! replays the committed seeds (`fuzz/corpus-seed/toon_encode/`) on stable.

use polywire::toon::encode::{encode_value, EncodeOptions, KeyFolding};
use polywire::toon::Delimiter;

pub fn toon_encode(data: &[u8]) {
    let Some((&flags, json)) = data.split_first() else {
        return;
    };
    let Ok(value) = polywire::json::parse(json, Default::default()) else {
        return;
    };
    let opts = EncodeOptions {
        indent: usize::from(flags & 7),
        delimiter: [Delimiter::Comma, Delimiter::Tab, Delimiter::Pipe][usize::from(flags >> 3 & 3) % 3],
        key_folding: if flags & 0x20 != 0 { KeyFolding::Safe } else { KeyFolding::Off },
        flatten_depth: if flags & 0x40 != 0 { 2 } else { usize::MAX },
    };
    let _ = encode_value(&value, &opts);
}

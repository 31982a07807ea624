//! Any bytes, any options: the TOON decoder returns a value or an error,
//! never panics; what strict mode accepts, non-strict mode decodes alike.
//! The first byte picks the options.
#![no_main]

use libfuzzer_sys::fuzz_target;
use polywire::toon::decode::{decode_bytes, DecodeOptions};

fuzz_target!(|data: &[u8]| {
    let Some((&flags, text)) = data.split_first() else {
        return;
    };
    let indent = usize::from(flags & 3) + 1;
    let strict = decode_bytes(text, &DecodeOptions { indent, strict: true, ..Default::default() });
    let lax = decode_bytes(text, &DecodeOptions { indent, strict: false, ..Default::default() });
    if let Ok(v) = strict {
        assert_eq!(lax.ok(), Some(v));
    }
});

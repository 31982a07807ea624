//! Any text, any options: the TOON event decoder (the reference's
//! `decodeStreamSync`) ends as `decode` does, with the same error or with
//! events; and decoding a stream's lines so far (cut at a line the first
//! byte picks) reports no more events than the whole text, and no error the
//! whole text does not have. Never a panic. (The property tests in
//! `core/src/toon/decode.rs` check the events themselves.)
//!
//! Shared by the cargo-fuzz target and `core/tests/fuzz_corpus.rs`, which
//! replays the committed seeds (`fuzz/corpus-seed/toon_events/`) on stable.

use polywire::toon::decode::{decode, decode_events, DecodeOptions, Input};

pub fn toon_events(data: &[u8]) {
    let Some((&flags, bytes)) = data.split_first() else {
        return;
    };
    let Ok(text) = std::str::from_utf8(bytes) else {
        return;
    };
    let opts = DecodeOptions { indent: usize::from(flags & 3) + 1, strict: flags & 4 != 0, ..Default::default() };
    let mut all = 0usize;
    let whole = decode_events(text, &opts, Input::Whole, &mut |_| all += 1);
    let value = decode(text, &opts);
    assert_eq!(whole.as_ref().err().map(|e| (e.code(), e.line(), e.column())), value.as_ref().err().map(|e| (e.code(), e.line(), e.column())));
    let lines: Vec<&str> = text.split('\n').collect();
    let cut = usize::from(flags >> 3) % lines.len() + 1;
    let mut some = 0usize;
    let so_far = decode_events(&lines[..cut].join("\n"), &opts, Input::SoFar, &mut |_| some += 1);
    assert!(some <= all);
    if let Err(e) = so_far {
        assert_eq!(whole.err().map(|w| (w.code(), w.line())), Some((e.code(), e.line())));
    }
}

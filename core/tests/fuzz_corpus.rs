//! Replays the committed fuzz corpora (`fuzz/corpus-seed/<target>/`) through
//! the fuzz targets' bodies (`fuzz/bodies/`), on stable, as ordinary tests:
//! `cargo fuzz` needs nightly, CI does not.

use std::path::PathBuf;

#[path = "../../fuzz/bodies/axon_decode.rs"]
mod axon_decode;
#[path = "../../fuzz/bodies/kado_decode.rs"]
mod kado_decode;
#[path = "../../fuzz/bodies/kado_frame_decoder.rs"]
mod kado_frame_decoder;
#[path = "../../fuzz/bodies/kameo_decode.rs"]
mod kameo_decode;
#[path = "../../fuzz/bodies/tether_decode.rs"]
mod tether_decode;
#[cfg(feature = "tokens")]
#[path = "../../fuzz/bodies/tokenizer_json.rs"]
mod tokenizer_json;
#[cfg(feature = "tokens")]
#[path = "../../fuzz/bodies/tokens_count.rs"]
mod tokens_count;
#[cfg(feature = "tokens")]
#[path = "../../fuzz/bodies/tokens_long.rs"]
mod tokens_long;
#[path = "../../fuzz/bodies/toon_decode.rs"]
mod toon_decode;
#[path = "../../fuzz/bodies/toon_encode.rs"]
mod toon_encode;
#[path = "../../fuzz/bodies/toon_events.rs"]
mod toon_events;
#[path = "../../fuzz/bodies/toon_roundtrip.rs"]
mod toon_roundtrip;

fn replay(target: &str, body: fn(&[u8])) {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../fuzz/corpus-seed").join(target);
    let mut files: Vec<_> =
        std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())).map(|e| e.expect("dir entry").path()).collect();
    files.sort();
    assert!(!files.is_empty(), "no seeds in {}", dir.display());
    for f in files {
        let data = std::fs::read(&f).expect("seed");
        let r = std::panic::catch_unwind(|| body(&data));
        assert!(r.is_ok(), "{} fails", f.display());
    }
}

// One test per target, named after it: its committed corpus through its body.
macro_rules! replay_each {
    ($($target:ident),* $(,)?) => {
        $(
            #[test]
            fn $target() {
                replay(stringify!($target), $target::$target);
            }
        )*
    };
}

replay_each!(
    axon_decode,
    kado_decode,
    kado_frame_decoder,
    kameo_decode,
    tether_decode,
    toon_decode,
    toon_encode,
    toon_events,
    toon_roundtrip,
);

#[cfg(feature = "tokens")]
#[test]
fn tokens_count() {
    replay("tokens_count", tokens_count::tokens_count);
}

#[cfg(feature = "tokens")]
#[test]
fn tokens_long() {
    replay("tokens_long", tokens_long::tokens_long);
}

#[cfg(feature = "tokens")]
#[test]
fn tokenizer_json() {
    replay("tokenizer_json", tokenizer_json::tokenizer_json);
}

/// The round-trip property on stable, over inputs a seeded generator makes
/// (cargo-fuzz explores beyond them with coverage feedback).
#[test]
fn toon_roundtrip_random_inputs() {
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    for _ in 0..20_000 {
        let len = (next() % 300) as usize;
        let data: Vec<u8> = (0..len).map(|_| next() as u8).collect();
        toon_roundtrip::toon_roundtrip(&data);
    }
}

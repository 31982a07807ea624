//! polywire: byte-exact codecs for the wire formats of agent systems.
//!
//! One module per format; every codec returns the crate's one [`Error`] type,
//! which carries the format, a stable code, the position and a message.
//!
//! - [`kado`]: Kado frames ("TOON protocol": 18-byte header, JSON payload, RLE).
//! - [`toon`]: TOON text (Token-Oriented Object Notation).
//! - [`tether`]: Tether, Caffeine's tagged 32-bit object encoding.
//! - [`axon`]: AXON agent messaging: the v2 and axon/1 envelopes, identities,
//!   and (feature `axon-peer`) a peer over QUIC.
//! - [`kameo`]: the Kameo remote-actor protocol.
//! - [`tokens`] (feature `tokens`): exact token counts (tiktoken's BPE
//!   encodings, Hugging Face `tokenizer.json`).
//! - [`json`]: the `JSON.stringify`-exact JSON layer the others share.
//!
//! Hot paths use SSE2 (and AVX2 where the processor has it) on x86_64. The
//! feature `portable` (or `RUSTFLAGS="--cfg polywire_portable"`) forces the
//! portable code that every other processor runs, so it is tested on x86_64
//! too (CI does, with the feature: unlike a cfg in RUSTFLAGS, it rebuilds only
//! polywire's own crates).

/// Whether this build runs the x86_64 SIMD paths (false on other processors
/// and with the feature `portable`); CI checks that its portable builds are.
pub const SIMD: bool = cfg!(all(target_arch = "x86_64", not(any(polywire_portable, feature = "portable"))));

pub mod axon;
pub mod error;
pub mod json;
pub mod kado;
pub mod kameo;
pub mod tether;
#[cfg(feature = "tokens")]
pub mod tokens;
pub mod toon;

pub use error::{Error, Format, Position, Result};

#[cfg(test)]
mod tests {
    /// Run by scripts/test-portable.sh: a build with the feature `portable`
    /// (or the cfg) has the SIMD paths off, a default x86_64 build has them on.
    #[test]
    fn portable_paths_are_on() {
        let portable = cfg!(any(polywire_portable, feature = "portable"));
        assert_eq!(super::SIMD, cfg!(target_arch = "x86_64") && !portable);
    }
}

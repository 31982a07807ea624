//! Token counting on arbitrary text (the bytes as UTF-8, invalid sequences
//! replaced): for both built-in encodings, polywire's token ids, count and
//! pieces must equal tiktoken's (`tiktoken-rs`'s `encode_ordinary`, which
//! runs tiktoken's own regex with fancy-regex and its merge loop). This holds
//! the hand-written pre-tokenizer and the memoised merges to the reference on
//! whatever a fuzzer reaches, and nothing may panic.
//!
//! Shared by the cargo-fuzz target and `core/tests/fuzz_corpus.rs`, which
//! replays the committed seeds (`fuzz/corpus-seed/tokens_count/`) on stable.

use polywire::tokens::{Bpe, Encoding};

pub fn tokens_count(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    for e in Encoding::ALL {
        let bpe = Bpe::get(e);
        let reference = match e {
            Encoding::O200kBase => tiktoken_rs::o200k_base_singleton(),
            Encoding::Cl100kBase => tiktoken_rs::cl100k_base_singleton(),
        };
        let want = reference.encode_ordinary(&text);
        assert_eq!(bpe.encode(&text).expect("memory"), want, "{e:?} token ids");
        assert_eq!(bpe.count(&text).expect("memory"), want.len(), "{e:?} count");
        // twice: the second count runs on the memo the first one filled
        assert_eq!(bpe.count(&text).expect("memory"), want.len(), "{e:?} count from the memo");
        assert_eq!(bpe.split(&text).concat(), text, "{e:?} pieces");
    }
}

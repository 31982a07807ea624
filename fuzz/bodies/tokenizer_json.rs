//! Hugging Face `tokenizer.json` files on arbitrary bytes: loading either
//! fails with `LLM_INVALID_TOKENIZER` or gives a tokenizer that counts a few
//! texts or fails with an error; nothing may panic or hang (the patterns a
//! file brings are checked at load and timed while they run).
//!
//! Shared by the cargo-fuzz target and `core/tests/fuzz_corpus.rs`, which
//! replays the committed seeds (`fuzz/corpus-seed/tokenizer_json/`) on stable.

use polywire::tokens::HfTokenizer;

pub fn tokenizer_json(data: &[u8]) {
    // polywire turns a panic inside the tokenizers crate into an error
    // (catch_unwind), which libfuzzer's panic hook would report as a crash
    // before it is caught; a panic that escapes still fails the target.
    #[cfg(fuzzing)]
    {
        static QUIET: std::sync::Once = std::sync::Once::new();
        QUIET.call_once(|| std::panic::set_hook(Box::new(|_| {})));
    }
    match HfTokenizer::from_bytes(data) {
        Err(e) => assert_eq!(e.code(), "LLM_INVALID_TOKENIZER", "{e}"),
        Ok(t) => {
            for text in ["", "Hello, world! hello", "  a\\n\\tb 123 é中😀", &"a".repeat(300)] {
                if let Err(e) = t.count(text) {
                    assert!(["LLM_TOKENIZE_FAILED", "LLM_TOKENIZER_TOO_SLOW"].contains(&e.code()), "{e}");
                }
            }
        }
    }
}

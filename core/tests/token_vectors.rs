//! vectors/token_counts.json: token counts as OpenAI's tiktoken gives them
//! (`encode_ordinary`), for o200k_base and cl100k_base.

use polywire::tokens::{count_tokens, Bpe, Encoding};

#[test]
fn counts_equal_tiktokens_on_every_vector() {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../vectors/token_counts.json")).unwrap();
    let doc: serde_json::Value = serde_json::from_str(&text).unwrap();
    let cases = doc["cases"].as_array().unwrap();
    assert!(cases.len() > 2000);
    let mut bad = Vec::new();
    for case in cases {
        let t = case["text"].as_str().unwrap();
        for e in Encoding::ALL {
            let want = case[e.name()].as_u64().unwrap() as usize;
            let got = count_tokens(t, e).expect("counts");
            if got != want {
                bad.push(format!("{}: {got} != {want} for {t:?}", e.name()));
            }
            // The token ids' count, too (the same merges without the memo).
            assert_eq!(Bpe::get(e).encode(t).expect("tokens").len(), got);
        }
    }
    assert!(bad.is_empty(), "{} mismatches:\n{}", bad.len(), bad.join("\n"));
}

//! Exact token counts for `polywire/llm` (`polywire::tokens`). The choice of
//! rendering is in `llm.js`; texts cross as strings (napi writes a lone
//! surrogate as U+FFFD, which is what the tokenizers count for it).

use napi_derive::napi;
use polywire::tokens::Tokenizer;

use crate::errors::{IntoNapi, Result};

pub(crate) fn tokenizer(encoding: Option<String>) -> Result<Tokenizer> {
    Tokenizer::from_name(encoding.as_deref().unwrap_or("o200k_base")).napi()
}

/// The number of tokens of `text`.
#[napi(js_name = "llmCountTokens")]
pub fn count_tokens(text: String, encoding: Option<String>) -> Result<u32> {
    let n = tokenizer(encoding)?.count(&text).napi()?;
    Ok(u32::try_from(n).unwrap_or(u32::MAX))
}

/// The numbers of tokens of several texts (large ones on two threads).
#[napi(js_name = "llmCountMany")]
pub fn count_many(texts: Vec<String>, encoding: Option<String>) -> Result<Vec<u32>> {
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let counts = tokenizer(encoding)?.count_many(&refs).napi()?;
    Ok(counts.into_iter().map(|n| u32::try_from(n).unwrap_or(u32::MAX)).collect())
}

/// The encoding's name, once it (or the tokenizer.json file) is loaded.
#[napi(js_name = "llmCheckEncoding")]
pub fn check_encoding(encoding: String) -> Result<String> {
    Ok(tokenizer(Some(encoding))?.name().into_owned())
}

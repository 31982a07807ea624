//! Exact token counts for `polywire/llm` (`polywire::tokens`). The choice of
//! rendering is in `llm.js`; texts cross as strings (napi writes a lone
//! surrogate as U+FFFD, which is what the tokenizers count for it).

use napi::bindgen_prelude::*;
use napi::sys;
use napi_derive::napi;
use polywire::tokens::Tokenizer;

use crate::errors::{invalid_arg, IntoNapi, Result};

pub(crate) fn tokenizer(encoding: Option<String>) -> Result<Tokenizer> {
    Tokenizer::from_name(encoding.as_deref().unwrap_or("o200k_base")).napi()
}

/// A JavaScript string as UTF-8 (a lone surrogate as U+FFFD, as N-API
/// writes it), in memory asked for fallibly: a text too long for the memory
/// left is `LLM_OUT_OF_MEMORY`, not an abort of the process.
fn read_text(env: &Env, text: &Unknown<'_>) -> Result<String> {
    let (env, v) = (env.raw(), text.value().value);
    let mut len = 0usize;
    // SAFETY: `v` is a live value of this call; a null buffer asks for the length.
    if unsafe { sys::napi_get_value_string_utf8(env, v, std::ptr::null_mut(), 0, &mut len) } != sys::Status::napi_ok {
        return Err(invalid_arg("LLM_INVALID_ARGUMENT", "expected a string".into()));
    }
    let mut buf: Vec<u8> = Vec::new();
    let cap = len.saturating_add(1);
    buf.try_reserve_exact(cap)
        .map_err(|_| invalid_arg("LLM_OUT_OF_MEMORY", format!("not enough memory to copy a text of {len} bytes to count its tokens")))?;
    let mut written = 0usize;
    // SAFETY: `buf` has room for `cap` bytes; N-API writes at most that many
    // (the last a NUL) and says how many it wrote before the NUL.
    if unsafe { sys::napi_get_value_string_utf8(env, v, buf.as_mut_ptr() as *mut _, cap, &mut written) } != sys::Status::napi_ok {
        return Err(invalid_arg("LLM_INVALID_ARGUMENT", "expected a string".into()));
    }
    // SAFETY: N-API wrote `written` initialised bytes.
    unsafe { buf.set_len(written.min(len)) };
    String::from_utf8(buf).map_err(|_| invalid_arg("LLM_INVALID_ARGUMENT", "the string did not convert to UTF-8".into()))
}

/// The number of tokens of `text`.
#[napi(js_name = "llmCountTokens", ts_args_type = "text: string, encoding?: string | undefined | null")]
pub fn count_tokens(env: &Env, text: Unknown<'_>, encoding: Option<String>) -> Result<u32> {
    let text = read_text(env, &text)?;
    let n = tokenizer(encoding)?.count_owned(text).napi()?;
    Ok(u32::try_from(n).unwrap_or(u32::MAX))
}

/// The numbers of tokens of several texts (large ones on two threads).
#[napi(js_name = "llmCountMany", ts_args_type = "texts: Array<string>, encoding?: string | undefined | null")]
pub fn count_many(env: &Env, texts: Vec<Unknown<'_>>, encoding: Option<String>) -> Result<Vec<u32>> {
    let texts = texts.iter().map(|t| read_text(env, t)).collect::<Result<Vec<String>>>()?;
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let counts = tokenizer(encoding)?.count_many(&refs).napi()?;
    Ok(counts.into_iter().map(|n| u32::try_from(n).unwrap_or(u32::MAX)).collect())
}

/// The encoding's name, once it (or the tokenizer.json file) is loaded.
#[napi(js_name = "llmCheckEncoding")]
pub fn check_encoding(encoding: String) -> Result<String> {
    Ok(tokenizer(Some(encoding))?.name().into_owned())
}

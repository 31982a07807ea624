//! The resumable TOON decoder (`polywire::toon::decode::StreamDecoder`) for
//! JavaScript: `ToonEventStream` gives `decodeStream` / `decodeStreamSync`
//! (toon.js) the events each line decides, `ToonJsonStream` gives the
//! `polywire -d` command (cli.js) the JSON text of the bytes it reads. Each
//! keeps its decoder between calls, so every line is read once and memory
//! stays bounded by the open structure and the longest line.

use super::{make_json_string, read_string, with_scratch, JsonWriter, Scratch};
use crate::errors::{invalid_arg, Result};
use crate::jsbuf::js_buffer;
use napi::bindgen_prelude::*;
use napi_derive::napi;
use polywire::toon::decode::{DecodeOptions, Event, JsonStream, StreamDecoder};
use polywire::Error;

fn decoder(indent: u32, strict: bool) -> Result<StreamDecoder> {
    let opts = DecodeOptions { indent: indent as usize, strict, ..Default::default() };
    StreamDecoder::new(&opts).map_err(|e| invalid_arg(e.code(), e.message().to_string()))
}

/// `"error":{code, message, line, column, source, offset}` (message with
/// its position, as the other native errors have it).
fn write_error(w: &mut JsonWriter<'_>, e: &Error, source: Option<String>) {
    w.out.extend_from_slice(b",\"error\":{\"code\":");
    w.string(e.code());
    w.out.extend_from_slice(b",\"message\":");
    w.string(&e.to_string());
    for (name, n) in [("line", e.line()), ("column", e.column()), ("offset", e.offset())] {
        w.out.extend_from_slice(format!(",\"{name}\":").as_bytes());
        match n {
            Some(n) => w.out.extend_from_slice(n.to_string().as_bytes()),
            None => w.out.extend_from_slice(b"null"),
        }
    }
    w.out.extend_from_slice(b",\"source\":");
    match source {
        Some(s) => w.string(&s),
        None => w.out.extend_from_slice(b"null"),
    }
    w.out.push(b'}');
}

/// The events of a stream's lines, for `decodeStream` / `decodeStreamSync`.
#[napi(js_name = "ToonEventStream")]
pub struct ToonEventStream {
    inner: StreamDecoder,
}

#[napi]
impl ToonEventStream {
    #[napi(constructor)]
    pub fn new(indent: u32, strict: bool) -> Result<Self> {
        Ok(ToonEventStream { inner: decoder(indent, strict)? })
    }

    /// One line (a newline in it is part of it): the events it decides, as
    /// JSON text `{"events":[...]}`, with `"error"` on a fault (after the
    /// events before it). A lone surrogate is `TOON_LONE_SURROGATE_INPUT`
    /// (toon.js maps them to stand-ins and calls again).
    #[napi]
    pub fn push_line<'env>(&mut self, env: &'env Env, line: Unknown<'env>) -> Result<Unknown<'env>> {
        let inner = &mut self.inner;
        with_scratch(|s| {
            let Scratch { input, output, wide, .. } = s;
            let text = unsafe { read_string(env.raw(), line.value().value, input, wide, true)? };
            events_json(env, output, inner, |d, on| d.push_line(text, on))
        })
    }

    /// The end of the lines: the events it decides, as `push_line` gives
    /// them.
    #[napi]
    pub fn finish<'env>(&mut self, env: &'env Env) -> Result<Unknown<'env>> {
        let inner = &mut self.inner;
        with_scratch(|s| events_json(env, &mut s.output, inner, |d, on| d.finish(on)))
    }
}

/// The events `step` reports, as JSON text for `JSON.parse`, then its
/// error if it fails.
fn events_json<'env>(
    env: &'env Env,
    output: &mut Vec<u8>,
    d: &mut StreamDecoder,
    step: impl FnOnce(&mut StreamDecoder, &mut dyn FnMut(Event<'_>)) -> polywire::Result<()>,
) -> Result<Unknown<'env>> {
    output.clear();
    output.extend_from_slice(b"{\"events\":[");
    let mut w = JsonWriter { src: "", out: output, non_ascii: false };
    let r = step(d, &mut |e| w.event(&e));
    if w.out.last() == Some(&b',') {
        w.out.pop();
    }
    w.out.push(b']');
    if let Err(e) = r {
        write_error(&mut w, &e, d.error_source(&e));
    }
    w.out.push(b'}');
    let non_ascii = w.non_ascii;
    unsafe { make_json_string(env, output, non_ascii) }
}

/// TOON bytes in, the document's JSON text out as the events come (as
/// `@toon-format/cli` writes it, `indent` spaces per level), for
/// `polywire -d` (the core's `JsonStream`). A fault does not throw: the text
/// before it is returned, then `failure` holds the error.
#[napi(js_name = "ToonJsonStream")]
pub struct ToonJsonStream {
    inner: JsonStream,
}

#[napi]
impl ToonJsonStream {
    /// `strict` also makes ill-formed UTF-8 an error (`TOON_INVALID_UTF8`
    /// with the byte `offset`); otherwise each ill-formed sequence reads as
    /// U+FFFD, as `TextDecoder` reads it.
    #[napi(constructor)]
    pub fn new(indent: u32, strict: bool) -> Result<Self> {
        let opts = DecodeOptions { indent: indent as usize, strict, ..Default::default() };
        Ok(ToonJsonStream { inner: JsonStream::new(&opts).map_err(|e| invalid_arg(e.code(), e.message().to_string()))? })
    }

    /// The JSON text the bytes complete.
    #[napi]
    pub fn feed<'env>(&mut self, env: &'env Env, chunk: &[u8]) -> Result<BufferSlice<'env>> {
        self.inner.feed(chunk, false);
        self.inner.take(|b| js_buffer(env, b))
    }

    /// The rest of the JSON text, at the end of the input (the final
    /// newline is the caller's).
    #[napi]
    pub fn finish<'env>(&mut self, env: &'env Env) -> Result<BufferSlice<'env>> {
        self.inner.feed(&[], true);
        self.inner.take(|b| js_buffer(env, b))
    }

    /// The fault, once there is one: JSON text `{code, message, line,
    /// column, source, offset}`.
    #[napi(getter)]
    pub fn failure(&self) -> Option<String> {
        let (e, source) = self.inner.failure()?;
        let mut text = Vec::new();
        write_error(&mut JsonWriter { src: "", out: &mut text, non_ascii: false }, e, source);
        // (`,"error":{...}` without its lead.)
        Some(String::from_utf8_lossy(text.get(9..).unwrap_or_default()).into_owned())
    }

    /// Characters of the TOON text read (without a leading BOM).
    #[napi(getter)]
    pub fn input_chars(&self) -> f64 {
        self.inner.input_chars() as f64
    }

    /// Characters of the JSON text written.
    #[napi(getter)]
    pub fn output_chars(&self) -> f64 {
        self.inner.output_chars() as f64
    }

    /// Bytes of text the decoder has gone through (read, searched, moved):
    /// linear in the input, whatever its pieces.
    #[napi(getter)]
    pub fn scanned(&self) -> f64 {
        self.inner.scanned() as f64
    }
}

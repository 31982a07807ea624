//! Kado frames for Node. Payload JSON is transcoded: JavaScript runs
//! `JSON.stringify`/`JSON.parse` (exact by definition, and faster than
//! building values through N-API), Rust does framing, RLE and validation.

use crate::errors::{invalid_arg, to_napi, IntoNapi, Result};
use napi::bindgen_prelude::*;
use napi::JsString;
use napi_derive::napi;
use polywire::kado::{self, Header, MessageType, HEADER_SIZE};
use std::borrow::Cow;

fn message_type(t: u32) -> Result<MessageType> {
    u8::try_from(t).ok().and_then(MessageType::from_u8).ok_or_else(|| {
        invalid_arg("KADO_UNKNOWN_TYPE", format!("unknown message type {t} (expected 1..=8, INSTRUCTION to CONTEXT_RESPONSE)"))
    })
}

/// A decompression bound from JavaScript (`maxSize`, checked there): at most
/// 16 MiB unless the caller chose otherwise. RLE expands up to 85x, so every
/// decompressing entry point is bounded.
fn max_size(m: Option<f64>) -> Result<usize> {
    match m {
        None => Ok(kado::DEFAULT_MAX_FRAME_SIZE),
        Some(m) if m.is_finite() && m >= 0.0 && m.fract() == 0.0 && m <= 9007199254740991.0 => Ok(m as usize),
        Some(m) => Err(invalid_arg("KADO_INVALID_ARGUMENT", format!("maxSize must be a non-negative integer, got {m}"))),
    }
}

/// A napi failure (creating a JavaScript value) as a coded error.
#[cold]
fn napi_fail(e: napi::Error) -> napi::Error<crate::errors::Code> {
    invalid_arg("KADO_INTERNAL", e.reason.clone())
}

/// A Buffer whose memory V8 owns (a copy): V8 counts it and frees it with
/// the Buffer during garbage collection. A Rust allocation handed over as an
/// external buffer is freed by a finalizer that runs only when the event
/// loop turns, so a synchronous loop kept every one alive.
pub(crate) fn v8_buffer<'e>(env: &'e Env, data: &[u8]) -> Result<BufferSlice<'e>> {
    BufferSlice::copy_from(env, data).map_err(napi_fail)
}

fn timestamp(ts: Option<Either<f64, BigInt>>) -> Result<u64> {
    match ts {
        None => Ok(kado::now_ms()),
        Some(Either::A(f)) => {
            if f.is_finite() && f >= 0.0 && f.fract() == 0.0 && f <= 18446744073709549568.0 {
                Ok(f as u64)
            } else {
                Err(invalid_arg("KADO_INVALID_ARGUMENT", format!("timestamp must be a non-negative integer, got {f}")))
            }
        }
        Some(Either::B(b)) => {
            let (signed, v, lossless) = b.get_u64();
            if signed || !lossless {
                Err(invalid_arg("KADO_INVALID_ARGUMENT", "timestamp must fit in a u64".into()))
            } else {
                Ok(v)
            }
        }
    }
}

/// Complete a frame in a buffer the caller allocated: `frame` holds 18
/// bytes of room for the header, then the JSON payload. Compresses in place
/// when the TypeScript encoder would, writes the header and returns the
/// frame's length (at most `frame.length`). The caller allocating from its
/// buffer pool is much cheaper than handing a Rust allocation to V8.
#[napi(js_name = "kadoFinishFrame")]
pub fn finish_frame(mut frame: BufferSlice<'_>, msg_type: u32, sequence_id: u32, timestamp_ms: Option<Either<f64, BigInt>>) -> Result<u32> {
    let t = message_type(msg_type)?;
    let ts = timestamp(timestamp_ms)?;
    if frame.len() < HEADER_SIZE {
        return Err(invalid_arg("KADO_INVALID_ARGUMENT", format!("frame buffer shorter than {HEADER_SIZE} bytes")));
    }
    let frame: &mut [u8] = &mut frame;
    payload_depth(&frame[HEADER_SIZE..])?;
    SCRATCH.with(|cell| {
        let mut scratch = cell.try_borrow_mut().map_err(|_| invalid_arg("KADO_INVALID_ARGUMENT", "re-entrant call".into()))?;
        let mut buf = std::mem::take(&mut *scratch);
        buf.clear();
        // The payload is compressed into `buf` (a kept allocation) and copied
        // back only when compression applies; otherwise only the header is
        // written, in place.
        let payload_len = frame.len() - HEADER_SIZE;
        let mut n = frame.len();
        if payload_len > kado::COMPRESSION_THRESHOLD {
            buf.push(kado::MAGIC_COMPRESSED);
            kado::rle_encode_into(&frame[HEADER_SIZE..], &mut buf);
            if buf.len() - 1 < payload_len {
                frame[HEADER_SIZE..HEADER_SIZE + buf.len()].copy_from_slice(&buf);
                n = HEADER_SIZE + buf.len();
            }
        }
        if buf.capacity() <= 1 << 20 {
            *scratch = buf;
        }
        let header = Header::new(t, (n - HEADER_SIZE) as u32, ts, sequence_id);
        frame[..HEADER_SIZE].copy_from_slice(&header.to_bytes());
        Ok(n as u32)
    })
}

/// `JSON.stringify` nests without limit; the decoders (ours in every
/// language) refuse JSON nested deeper than `json::MAX_DEPTH`, so the
/// encoder refuses to write it, with the code Python's encoder gives.
fn payload_depth(json: &[u8]) -> Result<()> {
    if polywire::json::nests_deeper_than(json, polywire::json::MAX_DEPTH) {
        return Err(invalid_arg(
            "KADO_TOO_DEEP",
            format!("cannot encode the payload: nested deeper than {} levels, which the decoders refuse", polywire::json::MAX_DEPTH),
        ));
    }
    Ok(())
}

/// The depth check of `kadoFinishFrame`, for `encodePayload`.
#[napi(js_name = "kadoCheckPayloadDepth")]
pub fn check_payload_depth(json: &[u8]) -> Result<()> {
    payload_depth(json)
}

thread_local! {
    static SCRATCH: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
}

#[napi(js_name = "kadoEncodeHeader")]
pub fn encode_header<'e>(
    env: &'e Env,
    version: u32,
    msg_type: u32,
    payload_length: u32,
    sequence_id: u32,
    timestamp_ms: Option<Either<f64, BigInt>>,
) -> Result<BufferSlice<'e>> {
    if version != kado::TOON_VERSION as u32 {
        return Err(invalid_arg(
            "KADO_UNSUPPORTED_VERSION",
            format!("unsupported protocol version {version} (expected {})", kado::TOON_VERSION),
        ));
    }
    let t = message_type(msg_type)?;
    let ts = timestamp(timestamp_ms)?;
    v8_buffer(env, &Header::new(t, payload_length, ts, sequence_id).to_bytes())
}

/// A payload as it is on the wire (maybe compressed) -> its text,
/// decompressed and UTF-8 checked; offsets are within the payload.
#[napi(js_name = "kadoPayloadToText")]
pub fn payload_to_text<'e>(env: &'e Env, payload: &[u8], max: Option<f64>) -> Result<JsString<'e>> {
    let p = kado::decompress_limited(payload, max_size(max)?).napi()?;
    js_text(env, kado::host_payload_text(&p, 0).napi()?)
}

/// Validate a whole frame and return its payload as text (decompressed,
/// UTF-8 checked). The caller reads the header fields itself.
#[napi(js_name = "kadoPayloadText")]
pub fn payload_text<'e>(env: &'e Env, frame: &[u8], max: Option<f64>) -> Result<JsString<'e>> {
    let (_, payload) = kado::decode_raw_limited(frame, max_size(max)?).napi()?;
    let base = if matches!(payload, Cow::Borrowed(_)) { HEADER_SIZE } else { 0 };
    js_text(env, kado::host_payload_text(&payload, base).napi()?)
}

/// A JS string from checked text without an intermediate Rust `String`;
/// ASCII goes through the Latin-1 constructor, which V8 copies directly.
fn js_text<'e>(env: &'e Env, text: &str) -> Result<JsString<'e>> {
    let r = if text.is_ascii() { env.create_string_latin1(text.as_bytes()) } else { env.create_string(text) };
    r.map_err(|e| invalid_arg("KADO_INTERNAL", e.reason.clone()))
}

/// Validate a whole frame; return its payload decompressed, or `null` when
/// it travelled uncompressed (the caller then takes a view of its input).
#[napi(js_name = "kadoPayloadBytes")]
pub fn payload_bytes<'e>(env: &'e Env, frame: &[u8], max: Option<f64>) -> Result<Option<BufferSlice<'e>>> {
    match kado::decode_raw_limited(frame, max_size(max)?).napi()?.1 {
        Cow::Borrowed(_) => Ok(None),
        Cow::Owned(v) => v8_buffer(env, &v).map(Some),
    }
}

/// Error path of `JSON.parse` on a payload: locate the problem as a byte
/// offset, or, when the payload is valid apart from Python's `NaN` and
/// `Infinity` tokens, return it with those tokens replaced by `null` (what
/// `JSON.stringify` writes for them).
#[napi(js_name = "kadoRepairPayload")]
pub fn repair_payload(frame: &[u8], max: Option<f64>) -> Result<String> {
    let (_, payload) = kado::decode_raw_limited(frame, max_size(max)?).napi()?;
    let base = if matches!(payload, Cow::Borrowed(_)) { HEADER_SIZE } else { 0 };
    let text = kado::payload_str(&payload, base).napi()?;
    kado::parse_payload(text.as_bytes(), base, &mut polywire::json::ValueBuilder).napi()?;
    Ok(polywire::json::non_finite_to_null(text))
}

#[napi(js_name = "kadoCheckHeader")]
pub fn check_header(buf: &[u8]) -> Result<()> {
    kado::decode_header(buf).napi().map(|_| ())
}

#[napi(js_name = "kadoValidate")]
pub fn validate(buf: &[u8]) -> bool {
    kado::validate(buf)
}

/// `compress`; `null` when the input is returned unchanged (the caller
/// returns its own input, saving a copy).
#[napi(js_name = "kadoCompress")]
pub fn compress<'e>(env: &'e Env, data: &[u8]) -> Result<Option<BufferSlice<'e>>> {
    match kado::compress(data) {
        Cow::Borrowed(_) => Ok(None),
        Cow::Owned(v) => v8_buffer(env, &v).map(Some),
    }
}

/// `decompress`; `null` when the input has no magic byte.
#[napi(js_name = "kadoDecompress")]
pub fn decompress<'e>(env: &'e Env, data: &[u8], max: Option<f64>) -> Result<Option<BufferSlice<'e>>> {
    match kado::decompress_limited(data, max_size(max)?).napi()? {
        Cow::Borrowed(_) => Ok(None),
        Cow::Owned(v) => v8_buffer(env, &v).map(Some),
    }
}

/// One `FrameDecoder.feed` step, without state kept here: the JavaScript
/// `FrameDecoder` holds the bytes not yet consumed (`data`, at stream offset
/// `base`) and its failed state. (A native decoder object per JavaScript
/// decoder was freed by a finalizer that runs only when the event loop
/// turns: 200,000 decoders made in a synchronous loop held 285 MB.)
///
/// Returns `{ frames, consumed, error }`: the complete frames in `data` (as
/// objects: version, msgType, payloadLength, timestamp, sequenceId, offset,
/// compressed, payload: text, or a Buffer in raw mode), how many bytes they
/// took, and the error (`{ code, message }`) found after them, if any.
#[napi(js_name = "kadoStreamFeed")]
pub fn stream_feed<'e>(env: &'e Env, data: &[u8], base: f64, max_frame_size: f64, raw: bool) -> Result<Object<'e>> {
    let max = max_size(Some(max_frame_size))?;
    let base = if base.is_finite() && base >= 0.0 { base as u64 } else { 0 };
    let mut dec = kado::FrameDecoder::with_max_frame_size(max);
    dec.push(data);
    let mut frames = Vec::new();
    let mut error = None;
    loop {
        let f = match dec.next_frame() {
            Ok(Some(f)) => f,
            Ok(None) => break,
            Err(e) => {
                error = Some(e.shifted(base as usize));
                break;
            }
        };
        let offset = base + f.offset;
        let mut o = Object::new(env).map_err(napi_fail)?;
        if raw {
            o.set("payload", v8_buffer(env, &f.payload)?).map_err(napi_fail)?;
        } else {
            let b = if f.compressed { 0 } else { offset as usize + HEADER_SIZE };
            match kado::host_payload_text(&f.payload, b) {
                Ok(s) => o.set("payload", js_text(env, s)?).map_err(napi_fail)?,
                Err(e) => {
                    error = Some(e);
                    break;
                }
            }
        }
        let h = f.header;
        (|| -> napi::Result<()> {
            o.set("version", h.version as u32)?;
            o.set("msgType", h.msg_type as u32)?;
            o.set("payloadLength", h.payload_length)?;
            o.set("timestamp", h.timestamp as f64)?;
            o.set("sequenceId", h.sequence_id)?;
            o.set("offset", offset as f64)?;
            o.set("compressed", f.compressed)
        })()
        .map_err(napi_fail)?;
        frames.push(o);
    }
    let mut out = Object::new(env).map_err(napi_fail)?;
    (|| -> napi::Result<()> {
        out.set("consumed", (dec.position()) as f64)?;
        out.set("frames", frames)?;
        if let Some(e) = error {
            let mut eo = Object::new(env)?;
            eo.set("code", e.code())?;
            eo.set("message", e.to_string())?;
            out.set("error", eo)?;
        }
        Ok(())
    })()
    .map_err(napi_fail)?;
    Ok(out)
}

/// The error at the end of a stream that stopped inside a frame (`data`:
/// the bytes left over, at stream offset `base`), if any.
#[napi(js_name = "kadoStreamFinish")]
pub fn stream_finish(data: &[u8], base: f64, max_frame_size: f64) -> Result<()> {
    let base = if base.is_finite() && base >= 0.0 { base as usize } else { 0 };
    let mut dec = kado::FrameDecoder::with_max_frame_size(max_size(Some(max_frame_size))?);
    dec.push(data);
    // Parse the header, as the streaming decoder had, to name what is missing.
    dec.next_frame().map_err(|e| to_napi(e.shifted(base)))?;
    dec.finish().map_err(|e| to_napi(e.shifted(base)))
}

/// Error path of `JSON.parse` on a streamed payload: the payload with
/// Python's `NaN`/`Infinity` tokens replaced by `null` when that is all that
/// is wrong, else the JSON error at its stream offset.
#[napi(js_name = "kadoStreamRepairJson")]
pub fn stream_repair_json(payload: String, frame_offset: f64, compressed: bool) -> Result<String> {
    let base = if compressed || !(frame_offset.is_finite() && frame_offset >= 0.0) { 0 } else { frame_offset as usize + HEADER_SIZE };
    kado::parse_payload(payload.as_bytes(), base, &mut polywire::json::ValueBuilder).napi()?;
    Ok(polywire::json::non_finite_to_null(&payload))
}

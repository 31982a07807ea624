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
        invalid_arg(
            "KADO_UNKNOWN_TYPE",
            format!("unknown message type {t} (expected 1..=8, INSTRUCTION to CONTEXT_RESPONSE)"),
        )
    })
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

thread_local! {
    static SCRATCH: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
}

#[napi(js_name = "kadoEncodeHeader")]
pub fn encode_header(
    version: u32,
    msg_type: u32,
    payload_length: u32,
    sequence_id: u32,
    timestamp_ms: Option<Either<f64, BigInt>>,
) -> Result<Buffer> {
    if version != kado::TOON_VERSION as u32 {
        return Err(invalid_arg(
            "KADO_UNSUPPORTED_VERSION",
            format!("unsupported protocol version {version} (expected {})", kado::TOON_VERSION),
        ));
    }
    let t = message_type(msg_type)?;
    let ts = timestamp(timestamp_ms)?;
    Ok(Header::new(t, payload_length, ts, sequence_id).to_bytes().to_vec().into())
}

/// A payload as it is on the wire (maybe compressed) -> its text,
/// decompressed and UTF-8 checked; offsets are within the payload.
#[napi(js_name = "kadoPayloadToText")]
pub fn payload_to_text<'e>(env: &'e Env, payload: &[u8]) -> Result<JsString<'e>> {
    let p = kado::decompress(payload).napi()?;
    js_text(env, kado::host_payload_text(&p, 0).napi()?)
}

/// Validate a whole frame and return its payload as text (decompressed,
/// UTF-8 checked). The caller reads the header fields itself.
#[napi(js_name = "kadoPayloadText")]
pub fn payload_text<'e>(env: &'e Env, frame: &[u8]) -> Result<JsString<'e>> {
    let (_, payload) = kado::decode_raw(frame).napi()?;
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
pub fn payload_bytes(frame: &[u8]) -> Result<Option<Buffer>> {
    match kado::decode_raw(frame).napi()?.1 {
        Cow::Borrowed(_) => Ok(None),
        Cow::Owned(v) => Ok(Some(v.into())),
    }
}

/// Error path of `JSON.parse` on a payload: locate the problem as a byte
/// offset, or, when the payload is valid apart from Python's `NaN` and
/// `Infinity` tokens, return it with those tokens replaced by `null` (what
/// `JSON.stringify` writes for them).
#[napi(js_name = "kadoRepairPayload")]
pub fn repair_payload(frame: &[u8]) -> Result<String> {
    let (_, payload) = kado::decode_raw(frame).napi()?;
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
pub fn compress(data: &[u8]) -> Option<Buffer> {
    match kado::compress(data) {
        Cow::Borrowed(_) => None,
        Cow::Owned(v) => Some(v.into()),
    }
}

/// `decompress`; `null` when the input has no magic byte.
#[napi(js_name = "kadoDecompress")]
pub fn decompress(data: &[u8]) -> Result<Option<Buffer>> {
    match kado::decompress(data).napi()? {
        Cow::Borrowed(_) => Ok(None),
        Cow::Owned(v) => Ok(Some(v.into())),
    }
}

#[napi(object)]
pub struct KadoStreamFrame {
    pub version: u32,
    pub msg_type: u32,
    pub payload_length: u32,
    pub timestamp: f64,
    pub sequence_id: u32,
    /// Stream offset of the frame's first byte.
    pub offset: f64,
    /// Whether the payload travelled RLE-compressed.
    pub compressed: bool,
    /// The payload, decompressed: a `string` (UTF-8 checked) in text mode, a
    /// `Buffer` in raw mode.
    pub payload: Either<String, Buffer>,
}

/// Streaming decoder state; the JS `FrameDecoder` wraps it.
#[napi]
pub struct KadoFrameDecoder {
    inner: kado::FrameDecoder,
    raw: bool,
    pending: Option<polywire::Error>,
}

#[napi]
impl KadoFrameDecoder {
    #[napi(constructor)]
    pub fn new(max_frame_size: Option<f64>, raw: Option<bool>) -> Result<Self> {
        let max = match max_frame_size {
            None => kado::DEFAULT_MAX_FRAME_SIZE,
            Some(m) if m.is_finite() && m >= HEADER_SIZE as f64 && m.fract() == 0.0 => m as usize,
            Some(m) => {
                return Err(invalid_arg(
                    "KADO_INVALID_ARGUMENT",
                    format!("maxFrameSize must be an integer of at least {HEADER_SIZE}, got {m}"),
                ))
            }
        };
        Ok(KadoFrameDecoder { inner: kado::FrameDecoder::with_max_frame_size(max), raw: raw.unwrap_or(false), pending: None })
    }

    /// Feed a chunk; returns the frames it completed. An error found after
    /// some frames completed is thrown by the next call instead.
    #[napi]
    pub fn feed(&mut self, chunk: &[u8]) -> Result<Vec<KadoStreamFrame>> {
        if let Some(e) = self.pending.take() {
            return Err(to_napi(e));
        }
        self.inner.push(chunk);
        let mut out = Vec::new();
        loop {
            let f = match self.inner.next_frame() {
                Ok(Some(f)) => f,
                Ok(None) => break,
                Err(e) => return self.fail_after(out, e),
            };
            let payload = if self.raw {
                Either::B(f.payload.into())
            } else {
                let base = if f.compressed { 0 } else { f.offset as usize + HEADER_SIZE };
                match kado::host_payload_text(&f.payload, base) {
                    Ok(s) => Either::A(s.to_owned()),
                    Err(e) => return self.fail_after(out, e),
                }
            };
            let h = f.header;
            out.push(KadoStreamFrame {
                version: h.version as u32,
                msg_type: h.msg_type as u32,
                payload_length: h.payload_length,
                timestamp: h.timestamp as f64,
                sequence_id: h.sequence_id,
                offset: f.offset as f64,
                compressed: f.compressed,
                payload,
            });
        }
        Ok(out)
    }

    /// Error path of `JSON.parse` on a streamed payload: either the payload
    /// is valid apart from Python's `NaN`/`Infinity` tokens (returned with
    /// them replaced by `null`), or the decoder fails with the JSON error at
    /// its stream offset.
    #[napi]
    pub fn repair_json(&mut self, payload: String, frame_offset: f64, compressed: bool) -> Result<String> {
        let base = if compressed { 0 } else { frame_offset as usize + HEADER_SIZE };
        match kado::parse_payload(payload.as_bytes(), base, &mut polywire::json::ValueBuilder) {
            Ok(_) => Ok(polywire::json::non_finite_to_null(&payload)),
            Err(e) => {
                self.inner.fail(e.clone());
                Err(to_napi(e))
            }
        }
    }

    #[napi]
    pub fn finish(&self) -> Result<()> {
        if let Some(e) = &self.pending {
            return Err(to_napi(e.clone()));
        }
        self.inner.finish().napi()
    }

    #[napi(getter)]
    pub fn buffered(&self) -> f64 {
        self.inner.buffered() as f64
    }

    #[napi(getter)]
    pub fn position(&self) -> f64 {
        self.inner.position() as f64
    }

    #[napi(getter)]
    pub fn max_frame_size(&self) -> f64 {
        self.inner.max_frame_size() as f64
    }
}

impl KadoFrameDecoder {
    fn fail_after(&mut self, done: Vec<KadoStreamFrame>, e: polywire::Error) -> Result<Vec<KadoStreamFrame>> {
        self.inner.fail(e.clone());
        if done.is_empty() {
            Err(to_napi(e))
        } else {
            self.pending = Some(e);
            Ok(done)
        }
    }
}

//! Kado frames: the binary "TOON protocol" (Task Orchestration Over Node)
//! between the Kado orchestrator (TypeScript) and its ai-engine (Python).
//!
//! A frame is an 18-byte little-endian header — u8 version (1), u8 message
//! type (1..=8), u32 payload length (bytes on the wire), u64 timestamp (ms),
//! u32 sequence id — followed by the payload: UTF-8 JSON, RLE-compressed and
//! prefixed with the magic byte `0x5A` when that makes it smaller.
//!
//! Byte-exact with the upstream encoders (kado-autonomy/kado,
//! `packages/orchestrator/src/toon/*.ts`): JSON as `JSON.stringify` writes it
//! (see [`crate::json`]), compression only for payloads longer than
//! [`COMPRESSION_THRESHOLD`] and only when the RLE output is shorter than the
//! input. Stricter than the upstream decoders: versions, types, lengths, RLE
//! escapes, UTF-8 and JSON are all checked, and a compressed payload is always
//! decompressed (the upstream Python never decompresses).

use crate::error::{Error, Format, Result};
use crate::json::{self, Builder, ParseOptions};
use std::borrow::Cow;

pub const TOON_VERSION: u8 = 1;
pub const HEADER_SIZE: usize = 18;
/// The Python `struct` format of the header.
pub const HEADER_FORMAT: &str = "<BBIQI";
/// Payloads longer than this are offered to the RLE compressor by `encode`.
pub const COMPRESSION_THRESHOLD: usize = 1024;
/// First byte of a compressed payload.
pub const MAGIC_COMPRESSED: u8 = 0x5A;
/// RLE escape byte: `FF <byte> <count>`.
pub const RLE_ESCAPE: u8 = 0xFF;
/// Default limit on a frame (header + payload) and on a decompressed payload
/// in [`FrameDecoder`].
pub const DEFAULT_MAX_FRAME_SIZE: usize = 16 * 1024 * 1024;

/// The eight message types.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum MessageType {
    Instruction = 0x01,
    ToolCall = 0x02,
    ToolResult = 0x03,
    Status = 0x04,
    Error = 0x05,
    Heartbeat = 0x06,
    ContextRequest = 0x07,
    ContextResponse = 0x08,
}

impl MessageType {
    pub const ALL: [MessageType; 8] = [
        MessageType::Instruction,
        MessageType::ToolCall,
        MessageType::ToolResult,
        MessageType::Status,
        MessageType::Error,
        MessageType::Heartbeat,
        MessageType::ContextRequest,
        MessageType::ContextResponse,
    ];

    pub fn from_u8(v: u8) -> Option<MessageType> {
        match v {
            1..=8 => Some(Self::ALL[(v - 1) as usize]),
            _ => None,
        }
    }

    /// The upstream enum member name, e.g. `TOOL_CALL`.
    pub fn name(self) -> &'static str {
        match self {
            MessageType::Instruction => "INSTRUCTION",
            MessageType::ToolCall => "TOOL_CALL",
            MessageType::ToolResult => "TOOL_RESULT",
            MessageType::Status => "STATUS",
            MessageType::Error => "ERROR",
            MessageType::Heartbeat => "HEARTBEAT",
            MessageType::ContextRequest => "CONTEXT_REQUEST",
            MessageType::ContextResponse => "CONTEXT_RESPONSE",
        }
    }
}

/// A frame header as it is on the wire. `msg_type` is kept as the raw byte so
/// that [`Header::parse`] can read any header; [`Header::check`] validates it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    pub version: u8,
    pub msg_type: u8,
    pub payload_length: u32,
    pub timestamp: u64,
    pub sequence_id: u32,
}

impl Header {
    pub fn new(msg_type: MessageType, payload_length: u32, timestamp: u64, sequence_id: u32) -> Header {
        Header { version: TOON_VERSION, msg_type: msg_type as u8, payload_length, timestamp, sequence_id }
    }

    pub fn to_bytes(&self) -> [u8; HEADER_SIZE] {
        let mut b = [0u8; HEADER_SIZE];
        b[0] = self.version;
        b[1] = self.msg_type;
        b[2..6].copy_from_slice(&self.payload_length.to_le_bytes());
        b[6..14].copy_from_slice(&self.timestamp.to_le_bytes());
        b[14..18].copy_from_slice(&self.sequence_id.to_le_bytes());
        b
    }

    /// Read the 18 header bytes without judging them (the upstream
    /// `struct.unpack`). Fails only when fewer than 18 bytes are given.
    pub fn parse(buf: &[u8]) -> Result<Header> {
        let Some(b) = buf.get(..HEADER_SIZE) else {
            return Err(err("KADO_TRUNCATED_HEADER", format!("expected an {HEADER_SIZE}-byte header, found only {} bytes", buf.len()))
                .at(buf.len()));
        };
        Ok(Header {
            version: b[0],
            msg_type: b[1],
            payload_length: u32::from_le_bytes([b[2], b[3], b[4], b[5]]),
            timestamp: u64::from_le_bytes([b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13]]),
            sequence_id: u32::from_le_bytes([b[14], b[15], b[16], b[17]]),
        })
    }

    /// Check the version and the message type.
    pub fn check(&self) -> Result<MessageType> {
        if self.version != TOON_VERSION {
            return Err(err(
                "KADO_UNSUPPORTED_VERSION",
                format!("unsupported protocol version {} (expected {TOON_VERSION})", self.version),
            )
            .at(0));
        }
        MessageType::from_u8(self.msg_type).ok_or_else(|| {
            err("KADO_UNKNOWN_TYPE", format!("unknown message type {} (expected 1..=8, INSTRUCTION to CONTEXT_RESPONSE)", self.msg_type))
                .at(1)
        })
    }

    /// Total bytes of the frame on the wire.
    pub fn frame_len(&self) -> usize {
        HEADER_SIZE + self.payload_length as usize
    }
}

#[cold]
fn err(code: &'static str, message: impl Into<String>) -> Error {
    Error::new(Format::Kado, code, message)
}

/// Parse and validate a header (length, version, type).
pub fn decode_header(buf: &[u8]) -> Result<Header> {
    let h = Header::parse(buf)?;
    h.check()?;
    Ok(h)
}

/// The upstream `validate`: a whole frame is present with a known version and
/// type. Bytes after the frame are allowed.
pub fn validate(buf: &[u8]) -> bool {
    match decode_header(buf) {
        Ok(h) => buf.len() >= h.frame_len(),
        Err(_) => false,
    }
}

/// Milliseconds since the Unix epoch (what `Date.now()` gives).
pub fn now_ms() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64)
}

// ---------------------------------------------------------------- RLE

pub fn is_compressed(data: &[u8]) -> bool {
    data.first() == Some(&MAGIC_COMPRESSED)
}

/// Append the upstream RLE encoding of `data` to `out`: at each position the
/// run of equal bytes (at most 255) is measured; a run longer than 3, or any
/// run of 0xFF, is written `FF <byte> <count>`, otherwise its bytes verbatim.
pub fn rle_encode_into(data: &[u8], out: &mut Vec<u8>) {
    out.reserve(data.len());
    let n = data.len();
    let mut i = 0;
    let mut literal = 0;
    // Equivalent to the upstream loop (which measures the run at every
    // position and copies runs of 1-3 verbatim) but copies literal stretches
    // in bulk: a run of fewer than 4 bytes can never contain the start of a
    // run of 4 or more of the same byte.
    while i < n {
        let byte = data[i];
        let run_start = byte == RLE_ESCAPE || (i + 3 < n && data[i + 1] == byte && data[i + 2] == byte && data[i + 3] == byte);
        if !run_start {
            i += 1;
            continue;
        }
        out.extend_from_slice(&data[literal..i]);
        let count = run_length(&data[i..], byte);
        out.extend_from_slice(&[RLE_ESCAPE, byte, count as u8]);
        i += count;
        literal = i;
    }
    out.extend_from_slice(&data[literal..]);
}

/// Length of the run of `byte` at the start of `data`, at most 255; eight
/// bytes at a time, since long runs are what RLE is for.
#[inline]
fn run_length(data: &[u8], byte: u8) -> usize {
    let limit = data.len().min(255);
    let pattern = u64::from_ne_bytes([byte; 8]);
    let mut count = 1;
    while count + 8 <= limit {
        let mut w = [0u8; 8];
        w.copy_from_slice(&data[count..count + 8]);
        if u64::from_ne_bytes(w) != pattern {
            break;
        }
        count += 8;
    }
    while count < limit && data[count] == byte {
        count += 1;
    }
    count
}

/// Append the RLE decoding of `data` (without the magic byte) to `out`,
/// rejecting a truncated `FF` escape and a zero count, and stopping with an
/// error once more than `limit` bytes would be produced. Offsets are into
/// `data`.
pub fn rle_decode_into(data: &[u8], out: &mut Vec<u8>, limit: usize) -> Result<()> {
    let start_len = out.len();
    out.reserve(data.len().min(limit));
    let n = data.len();
    let mut i = 0;
    while i < n {
        // Copy the literal run up to the next escape in one go.
        let lit_end = data[i..].iter().position(|&b| b == RLE_ESCAPE).map_or(n, |p| i + p);
        if lit_end > i {
            if out.len() - start_len + (lit_end - i) > limit {
                return Err(too_large(limit));
            }
            out.extend_from_slice(&data[i..lit_end]);
            i = lit_end;
            continue;
        }
        if i + 2 >= n {
            return Err(
                err("KADO_INVALID_RLE", format!("truncated RLE escape: expected `FF <byte> <count>`, found {} byte(s)", n - i)).at(i)
            );
        }
        let (byte, count) = (data[i + 1], data[i + 2] as usize);
        if count == 0 {
            return Err(err("KADO_INVALID_RLE", "RLE run with count 0 (expected a count of 1 to 255)").at(i + 2));
        }
        if out.len() - start_len + count > limit {
            return Err(too_large(limit));
        }
        out.resize(out.len() + count, byte);
        i += 3;
    }
    Ok(())
}

#[cold]
fn too_large(limit: usize) -> Error {
    err("KADO_FRAME_TOO_LARGE", format!("decompressed payload larger than the limit of {limit} bytes"))
}

/// The upstream `compress`: data shorter than [`COMPRESSION_THRESHOLD`] or
/// whose RLE encoding is not shorter is returned unchanged; otherwise the
/// magic byte followed by the RLE encoding.
pub fn compress(data: &[u8]) -> Cow<'_, [u8]> {
    if data.len() < COMPRESSION_THRESHOLD {
        return Cow::Borrowed(data);
    }
    let mut out = Vec::with_capacity(data.len());
    out.push(MAGIC_COMPRESSED);
    rle_encode_into(data, &mut out);
    if out.len() > data.len() {
        Cow::Borrowed(data)
    } else {
        Cow::Owned(out)
    }
}

/// The upstream `decompress`, strict: data without the magic byte is returned
/// unchanged; with it, the RLE body is decoded and checked. The output is
/// bounded by [`DEFAULT_MAX_FRAME_SIZE`] (RLE expands up to 85x, so an
/// unbounded decoder is a decompression bomb): past it, `KADO_FRAME_TOO_LARGE`
/// before anything beyond the limit is allocated.
pub fn decompress(data: &[u8]) -> Result<Cow<'_, [u8]>> {
    decompress_limited(data, DEFAULT_MAX_FRAME_SIZE)
}

/// [`decompress`] with a caller-chosen bound on the output size.
pub fn decompress_limited(data: &[u8], limit: usize) -> Result<Cow<'_, [u8]>> {
    if !is_compressed(data) {
        return Ok(Cow::Borrowed(data));
    }
    let mut out = Vec::new();
    rle_decode_into(&data[1..], &mut out, limit).map_err(|e| e.shifted(1))?;
    Ok(Cow::Owned(out))
}

// ---------------------------------------------------------------- frames

/// Frame an already serialized JSON payload: compress it when longer than
/// [`COMPRESSION_THRESHOLD`] and shorter that way, then prepend the header.
pub fn encode_frame(msg_type: MessageType, payload: &[u8], sequence_id: u32, timestamp: u64) -> Result<Vec<u8>> {
    let mut buf = Vec::with_capacity(HEADER_SIZE + payload.len());
    buf.extend_from_slice(&[0u8; HEADER_SIZE]);
    buf.extend_from_slice(payload);
    finish_frame(&mut buf, msg_type, sequence_id, timestamp)?;
    Ok(buf)
}

/// Complete a frame in place: `buf` holds [`HEADER_SIZE`] placeholder bytes
/// followed by the JSON payload (bindings serialize straight into it). The
/// payload is compressed when the encoder would, and the header written.
pub fn finish_frame(buf: &mut Vec<u8>, msg_type: MessageType, sequence_id: u32, timestamp: u64) -> Result<()> {
    let mut scratch = Vec::new();
    finish_frame_with(buf, &mut scratch, msg_type, sequence_id, timestamp)?;
    // A non-empty scratch holds the compressed frame.
    if !scratch.is_empty() {
        std::mem::swap(buf, &mut scratch);
    }
    Ok(())
}

/// [`finish_frame`] for callers that keep buffers between calls (a large
/// payload then costs no fresh allocation and page faults): the compressed
/// frame, when compression applies, is built in `scratch`. Returns the
/// finished frame, in `buf` or in `scratch`.
pub fn finish_frame_with<'a>(
    buf: &'a mut Vec<u8>,
    scratch: &'a mut Vec<u8>,
    msg_type: MessageType,
    sequence_id: u32,
    timestamp: u64,
) -> Result<&'a [u8]> {
    debug_assert!(buf.len() >= HEADER_SIZE);
    scratch.clear();
    let payload_len = buf.len().saturating_sub(HEADER_SIZE);
    let frame: &'a mut Vec<u8> = if payload_len > COMPRESSION_THRESHOLD {
        scratch.extend_from_slice(&[0u8; HEADER_SIZE]);
        scratch.push(MAGIC_COMPRESSED);
        rle_encode_into(&buf[HEADER_SIZE..], scratch);
        if scratch.len() - HEADER_SIZE - 1 < payload_len {
            scratch
        } else {
            scratch.clear();
            buf
        }
    } else {
        buf
    };
    let wire_len = frame.len() - HEADER_SIZE;
    let payload_length = u32::try_from(wire_len)
        .map_err(|_| err("KADO_PAYLOAD_TOO_LARGE", format!("payload of {wire_len} bytes does not fit the u32 length field")))?;
    let header = Header::new(msg_type, payload_length, timestamp, sequence_id);
    frame[..HEADER_SIZE].copy_from_slice(&header.to_bytes());
    Ok(frame)
}

/// Encode a value as a frame (JSON written as `JSON.stringify` would).
pub fn encode(msg_type: MessageType, value: &serde_json::Value, sequence_id: u32, timestamp: u64) -> Result<Vec<u8>> {
    let mut buf = Vec::with_capacity(HEADER_SIZE + 128);
    buf.extend_from_slice(&[0u8; HEADER_SIZE]);
    let json = json::to_vec(value).map_err(|e| e.in_format(Format::Kado))?;
    buf.extend_from_slice(&json);
    finish_frame(&mut buf, msg_type, sequence_id, timestamp)?;
    Ok(buf)
}

/// Validate a frame and return its header and its payload bytes, decompressed
/// (raw mode, for forwarding without parsing JSON). Bytes after the frame are
/// ignored. The decompressed payload is bounded by [`DEFAULT_MAX_FRAME_SIZE`].
pub fn decode_raw(buf: &[u8]) -> Result<(Header, Cow<'_, [u8]>)> {
    decode_raw_limited(buf, DEFAULT_MAX_FRAME_SIZE)
}

/// [`decode_raw`] with a caller-chosen bound on the decompressed payload.
pub fn decode_raw_limited(buf: &[u8], max_size: usize) -> Result<(Header, Cow<'_, [u8]>)> {
    let header = decode_header(buf)?;
    let end = header.frame_len();
    let Some(wire) = buf.get(HEADER_SIZE..end) else {
        return Err(err(
            "KADO_TRUNCATED_PAYLOAD",
            format!(
                "header declares a {}-byte payload but only {} bytes follow the header",
                header.payload_length,
                buf.len() - HEADER_SIZE
            ),
        )
        .at(buf.len()));
    };
    let payload = decompress_limited(wire, max_size).map_err(|e| e.shifted(HEADER_SIZE))?;
    Ok((header, payload))
}

/// Parse a payload's JSON with `builder`. `base` is added to error offsets
/// (the payload's position in the frame, when it was not compressed). Accepts
/// what both upstream encoders write, including Python's `json.dumps`
/// spacing, `\u` escapes and `NaN`/`Infinity`.
pub fn parse_payload<B: Builder>(payload: &[u8], base: usize, builder: &mut B) -> Result<B::Value, B::Error>
where
    B::Error: From<Error>,
{
    // UTF-8 is checked over the whole payload first (fast, and it makes the
    // error the same in every binding, whether or not the bad byte sits in a
    // string).
    payload_str(payload, base)?;
    let opts = ParseOptions { allow_nan: true, utf8_checked: true, ..Default::default() };
    match json::parse_with(payload, opts, builder) {
        Ok(v) => Ok(v),
        Err(e) => {
            // The builder's error type may be foreign (a Python exception):
            // tell a JSON error (reported as a Kado error at its frame
            // offset) from a builder error (passed through) by re-checking,
            // on this error path only.
            match json::validate(payload, opts) {
                Err(je) => Err(payload_error(je, base).into()),
                Ok(()) => Err(e),
            }
        }
    }
}

/// Re-label a JSON-layer error found in a payload as a Kado error.
#[cold]
pub fn payload_error(e: Error, base: usize) -> Error {
    let code = if e.code() == "JSON_INVALID_UTF8" { "KADO_INVALID_UTF8" } else { "KADO_INVALID_JSON" };
    let mut out = Error::new(Format::Kado, code, format!("invalid JSON payload: {}", e.message()));
    if let Some(o) = e.offset() {
        out = out.at(o + base);
    }
    out
}

/// The payload's JSON base offset within the frame for error reports: the
/// frame offset when the payload travelled uncompressed, 0 (an offset in the
/// decompressed payload) otherwise.
pub fn payload_base(wire_payload: &[u8]) -> usize {
    if is_compressed(wire_payload) {
        0
    } else {
        HEADER_SIZE
    }
}

/// A decoded frame: header and JSON payload.
#[derive(Debug, Clone, PartialEq)]
pub struct Message {
    pub header: Header,
    pub payload: serde_json::Value,
}

/// Decode and validate a whole frame into a header and a JSON value (the
/// decompressed payload bounded by [`DEFAULT_MAX_FRAME_SIZE`]).
pub fn decode(buf: &[u8]) -> Result<Message> {
    decode_limited(buf, DEFAULT_MAX_FRAME_SIZE)
}

/// [`decode`] with a caller-chosen bound on the decompressed payload.
pub fn decode_limited(buf: &[u8], max_size: usize) -> Result<Message> {
    let (header, payload) = decode_raw_limited(buf, max_size)?;
    let base = match payload {
        Cow::Borrowed(_) => HEADER_SIZE,
        Cow::Owned(_) => 0,
    };
    let value = parse_payload(&payload, base, &mut json::ValueBuilder)?;
    Ok(Message { header, payload: value })
}

/// Check that a payload is UTF-8, reporting the offset of the first bad byte
/// (for bindings that hand the payload on as text).
pub fn payload_str(payload: &[u8], base: usize) -> Result<&str> {
    std::str::from_utf8(payload)
        .map_err(|e| err("KADO_INVALID_UTF8", "invalid UTF-8 in payload (expected UTF-8 JSON text)").at(base + e.valid_up_to()))
}

/// A payload as text for a host that parses the JSON itself (Node's
/// `JSON.parse`): UTF-8 checked and, when the quick scan finds nesting past
/// the limit or surrogate escapes, fully validated, so that the host accepts
/// exactly the payloads the other bindings accept. The host's parser still
/// rejects other invalid JSON; its error path calls [`decode`]-style
/// validation for the offset.
pub fn host_payload_text(payload: &[u8], base: usize) -> Result<&str> {
    let text = payload_str(payload, base)?;
    if json::needs_full_check(payload) {
        json::validate(payload, ParseOptions { allow_nan: true, ..Default::default() }).map_err(|e| payload_error(e, base))?;
    }
    Ok(text)
}

// ---------------------------------------------------------------- streaming

/// One frame from a [`FrameDecoder`]: its header, its payload decompressed,
/// and the stream offset where it started.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RawFrame {
    pub header: Header,
    pub payload: Vec<u8>,
    /// Offset of the frame's first byte in the stream.
    pub offset: u64,
    /// Whether the payload travelled compressed.
    pub compressed: bool,
}

#[derive(Debug, Clone, Copy)]
enum State {
    Head,
    Data(Header),
}

/// Incremental decoder for byte streams (sockets, pipes): feed chunks of any
/// size and take complete frames in order.
///
/// Like tokio-util's `LengthDelimitedCodec`, it decodes a header first
/// (`Head`), checks the version, the type and the declared length against
/// `max_frame_size` before waiting for the payload (`Data`), and reports "need
/// more bytes" (`Ok(None)`) until a frame is whole. It never reserves memory
/// from a declared length: only bytes actually fed are buffered. After an
/// error it stays failed and reports the same error again, because a framing
/// error leaves no trustworthy place to resume.
#[derive(Debug, Clone)]
pub struct FrameDecoder {
    buf: Vec<u8>,
    start: usize,
    /// Stream offset of `buf[start]`.
    offset: u64,
    state: State,
    max_frame_size: usize,
    error: Option<Error>,
}

impl Default for FrameDecoder {
    fn default() -> Self {
        FrameDecoder::new()
    }
}

impl FrameDecoder {
    pub fn new() -> FrameDecoder {
        FrameDecoder::with_max_frame_size(DEFAULT_MAX_FRAME_SIZE)
    }

    /// `max_frame_size` bounds a frame on the wire (header + payload) and a
    /// payload after decompression.
    pub fn with_max_frame_size(max_frame_size: usize) -> FrameDecoder {
        FrameDecoder { buf: Vec::new(), start: 0, offset: 0, state: State::Head, max_frame_size, error: None }
    }

    pub fn max_frame_size(&self) -> usize {
        self.max_frame_size
    }

    /// Append bytes read from the stream.
    pub fn push(&mut self, chunk: &[u8]) {
        if self.error.is_some() {
            return;
        }
        if self.start > 0 && self.start == self.buf.len() {
            self.buf.clear();
            self.start = 0;
        } else if self.start > 4096 && self.start * 2 > self.buf.len() {
            self.buf.drain(..self.start);
            self.start = 0;
        }
        self.buf.extend_from_slice(chunk);
    }

    /// The next complete frame, `Ok(None)` when more bytes are needed.
    pub fn next_frame(&mut self) -> Result<Option<RawFrame>> {
        if let Some(e) = &self.error {
            return Err(e.clone());
        }
        match self.step() {
            Ok(f) => Ok(f),
            Err(e) => {
                self.error = Some(e.clone());
                Err(e)
            }
        }
    }

    fn step(&mut self) -> Result<Option<RawFrame>> {
        let avail = &self.buf[self.start..];
        let header = match self.state {
            State::Data(h) => h,
            State::Head => {
                if avail.len() < HEADER_SIZE {
                    return Ok(None);
                }
                let h = Header::parse(avail)?;
                h.check().map_err(|e| e.shifted(self.offset as usize))?;
                if h.frame_len() > self.max_frame_size {
                    return Err(err(
                        "KADO_FRAME_TOO_LARGE",
                        format!("frame of {} bytes declared, larger than the limit of {} bytes", h.frame_len(), self.max_frame_size),
                    )
                    .at(self.offset as usize + 2));
                }
                self.state = State::Data(h);
                h
            }
        };
        let len = header.frame_len();
        if avail.len() < len {
            return Ok(None);
        }
        let wire = &avail[HEADER_SIZE..len];
        let compressed = is_compressed(wire);
        let payload = if compressed {
            let mut out = Vec::new();
            rle_decode_into(&wire[1..], &mut out, self.max_frame_size).map_err(|e| e.shifted(self.offset as usize + HEADER_SIZE + 1))?;
            out
        } else {
            wire.to_vec()
        };
        let frame = RawFrame { header, payload, offset: self.offset, compressed };
        self.start += len;
        self.offset += len as u64;
        self.state = State::Head;
        Ok(Some(frame))
    }

    /// Put the decoder in the failed state (a binding found the payload's
    /// JSON invalid, say): later calls report `e`.
    pub fn fail(&mut self, e: Error) {
        self.error = Some(e);
    }

    pub fn error(&self) -> Option<&Error> {
        self.error.as_ref()
    }

    /// Bytes buffered that do not yet form a complete frame.
    pub fn buffered(&self) -> usize {
        self.buf.len() - self.start
    }

    /// Total bytes consumed as complete frames so far.
    pub fn position(&self) -> u64 {
        self.offset
    }

    /// Call at end of stream: an error if a partial frame is left over.
    pub fn finish(&self) -> Result<()> {
        if let Some(e) = &self.error {
            return Err(e.clone());
        }
        if self.buffered() > 0 {
            let code = if matches!(self.state, State::Head) { "KADO_TRUNCATED_HEADER" } else { "KADO_TRUNCATED_PAYLOAD" };
            return Err(err(code, format!("stream ended inside a frame, {} bytes left over", self.buffered()))
                .at(self.offset as usize + self.buffered()));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn header_roundtrip() {
        let h = Header::new(MessageType::ToolCall, 5, 1_700_000_000_000, 42);
        let b = h.to_bytes();
        assert_eq!(b[0], 1);
        assert_eq!(b[1], 2);
        assert_eq!(&b[2..6], &5u32.to_le_bytes());
        assert_eq!(decode_header(&b).unwrap(), h);
    }

    #[test]
    fn rle_matches_upstream_rules() {
        let mut out = Vec::new();
        rle_encode_into(&[1, 1, 1, 2, 2, 2, 2, 0xff, 3], &mut out);
        assert_eq!(out, vec![1, 1, 1, 0xff, 2, 4, 0xff, 0xff, 1, 3]);
        out.clear();
        rle_encode_into(&[7u8; 300], &mut out);
        assert_eq!(out, vec![0xff, 7, 255, 0xff, 7, 45]);
        let mut back = Vec::new();
        rle_decode_into(&out, &mut back, usize::MAX).unwrap();
        assert_eq!(back, vec![7u8; 300]);
    }

    #[test]
    fn rle_rejects_malformed() {
        let mut out = Vec::new();
        let e = rle_decode_into(&[1, 0xff, 2], &mut out, usize::MAX).unwrap_err();
        assert_eq!((e.code(), e.offset()), ("KADO_INVALID_RLE", Some(1)));
        let e = rle_decode_into(&[0xff, 2, 0], &mut out, usize::MAX).unwrap_err();
        assert_eq!((e.code(), e.offset()), ("KADO_INVALID_RLE", Some(2)));
        let e = rle_decode_into(&[0xff, 2, 200], &mut out, 100).unwrap_err();
        assert_eq!(e.code(), "KADO_FRAME_TOO_LARGE");
    }

    #[test]
    fn compress_threshold_and_gain() {
        assert!(matches!(compress(&[b'a'; 1023]), Cow::Borrowed(_)));
        let c = compress(&[b'a'; 1024]);
        assert_eq!(&c[..], &[MAGIC_COMPRESSED, 0xff, b'a', 255, 0xff, b'a', 255, 0xff, b'a', 255, 0xff, b'a', 255, 0xff, b'a', 4]);
        assert_eq!(&decompress(&c).unwrap()[..], &[b'a'; 1024][..]);
        let varied: Vec<u8> = (0..2000u32).map(|i| (i % 200) as u8).collect();
        assert!(matches!(compress(&varied), Cow::Borrowed(_)));
    }

    #[test]
    fn encode_decode_frames() {
        let v = json!({"instruction": "Write unit tests", "n": [1, 2.5, null]});
        let f = encode(MessageType::Instruction, &v, 7, 1234).unwrap();
        assert_eq!(&f[HEADER_SIZE..], br#"{"instruction":"Write unit tests","n":[1,2.5,null]}"#);
        let m = decode(&f).unwrap();
        assert_eq!(m.payload, v);
        assert_eq!(m.header.sequence_id, 7);
        assert_eq!(m.header.timestamp, 1234);
        // Large repetitive payload is compressed and comes back whole.
        let big = json!({"data": "x".repeat(5000)});
        let f = encode(MessageType::ToolResult, &big, 1, 0).unwrap();
        assert!(f.len() < 200);
        assert_eq!(f[HEADER_SIZE], MAGIC_COMPRESSED);
        assert_eq!(decode(&f).unwrap().payload, big);
        // Trailing bytes are ignored.
        let mut g = f.clone();
        g.extend_from_slice(b"junk");
        assert_eq!(decode(&g).unwrap().payload, big);
        assert!(validate(&g));
    }

    #[test]
    fn decode_errors_carry_offsets() {
        let f = encode(MessageType::Status, &json!({"a": 1}), 1, 0).unwrap();
        assert_eq!(decode(&f[..10]).unwrap_err().code(), "KADO_TRUNCATED_HEADER");
        assert_eq!(decode(&f[..20]).unwrap_err().code(), "KADO_TRUNCATED_PAYLOAD");
        let mut g = f.clone();
        g[0] = 2;
        assert_eq!(decode(&g).unwrap_err().code(), "KADO_UNSUPPORTED_VERSION");
        g[0] = 1;
        g[1] = 9;
        let e = decode(&g).unwrap_err();
        assert_eq!((e.code(), e.offset()), ("KADO_UNKNOWN_TYPE", Some(1)));
        let mut g = f.clone();
        g[HEADER_SIZE + 4] = b'!';
        let e = decode(&g).unwrap_err();
        assert_eq!((e.code(), e.offset()), ("KADO_INVALID_JSON", Some(HEADER_SIZE + 4)));
        let mut g = f.clone();
        g[HEADER_SIZE + 2] = 0xC3;
        let e = decode(&g).unwrap_err();
        assert_eq!((e.code(), e.offset()), ("KADO_INVALID_UTF8", Some(HEADER_SIZE + 2)));
    }

    #[test]
    fn python_default_json_is_accepted() {
        let payload = br#"{"a": 1, "b": "caf\u00e9", "c": NaN}"#;
        let f = encode_frame(MessageType::Status, payload, 1, 0).unwrap();
        let m = decode(&f).unwrap();
        assert_eq!(m.payload, json!({"a": 1, "b": "café", "c": null}));
    }

    #[test]
    fn frame_decoder_byte_by_byte() {
        let frames: Vec<Vec<u8>> = vec![
            encode(MessageType::Heartbeat, &json!({}), 1, 5).unwrap(),
            encode(MessageType::ToolResult, &json!({"data": "y".repeat(3000)}), 2, 6).unwrap(),
            encode(MessageType::Error, &json!({"code": "E"}), 3, 7).unwrap(),
        ];
        let stream: Vec<u8> = frames.concat();
        let mut d = FrameDecoder::new();
        let mut got = Vec::new();
        for b in &stream {
            d.push(std::slice::from_ref(b));
            while let Some(f) = d.next_frame().unwrap() {
                got.push(f);
            }
        }
        assert_eq!(got.len(), 3);
        assert_eq!(got[1].payload.len(), 3000 + 11);
        assert!(got[1].compressed);
        assert_eq!(got[2].offset as usize, frames[0].len() + frames[1].len());
        d.finish().unwrap();
    }

    #[test]
    fn frame_decoder_checks_size_from_header_and_stays_failed() {
        let mut d = FrameDecoder::with_max_frame_size(100);
        let h = Header::new(MessageType::Status, 1_000_000, 0, 1).to_bytes();
        d.push(&h);
        let e = d.next_frame().unwrap_err();
        assert_eq!(e.code(), "KADO_FRAME_TOO_LARGE");
        d.push(&encode(MessageType::Status, &json!(1), 1, 0).unwrap());
        assert_eq!(d.next_frame().unwrap_err(), e);
        assert!(d.buffered() <= HEADER_SIZE);
    }
}

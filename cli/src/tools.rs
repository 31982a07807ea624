//! `polywire kado dump` and `polywire tether hex|unhex`.

use std::ffi::OsStr;

use polywire::kado::{self, FrameDecoder, MessageType, HEADER_SIZE};
use polywire::tether;

use crate::io::{Input, Output};
use crate::value::JsBuilder;
use crate::{Ctx, Fail};

fn codec(e: polywire::Error) -> Fail {
    Fail::codec(e.to_string(), &e)
}

/// `polywire kado dump`: each frame of a capture as one JSON line, as the
/// frames come (a live stream flows: what a read completes is written).
/// The frames before a fault are written to standard output, then the
/// fault (a file named by `-o` is left as it was).
pub(crate) fn kado_dump(ctx: &mut Ctx<'_>, input: Option<&OsStr>, output: Option<&OsStr>) -> Result<(), Fail> {
    let mut input = Input::open(input, &ctx.std)?;
    let mut out = Output::new(output, ctx.stdout, &ctx.std, input.id.as_ref())?;
    let mut decoder = FrameDecoder::new();
    let mut lines = Vec::new();
    loop {
        let chunk = input.read_chunk(ctx.stdin)?;
        let n = chunk.len();
        decoder.push(chunk);
        let fault = loop {
            match decoder.next_frame() {
                Ok(Some(frame)) => {
                    if let Err(e) = dump_line(&frame, &mut lines) {
                        decoder.fail(e.clone());
                        break Some(e);
                    }
                }
                Ok(None) => break None,
                Err(e) => break Some(e),
            }
        };
        let fault = fault.or_else(|| if n == 0 { decoder.finish().err() } else { None });
        if !lines.is_empty() {
            out.write(&lines)?;
            lines.clear();
        }
        if let Some(e) = fault {
            if out.path().is_none() {
                out.finish()?;
            }
            return Err(codec(e));
        }
        if n == 0 {
            return out.finish();
        }
    }
}

/// One frame's line: `{"offset":...,"payload":...}` and a newline. The
/// payload is written as `JSON.stringify` writes the value `JSON.parse`
/// makes of it (JavaScript's key order and numbers).
fn dump_line(frame: &kado::RawFrame, out: &mut Vec<u8>) -> polywire::Result<()> {
    let base = if frame.compressed { 0 } else { frame.offset as usize + HEADER_SIZE };
    let payload = kado::parse_payload(&frame.payload, base, &mut JsBuilder::default())?;
    let json = payload.to_json()?;
    let h = &frame.header;
    let name = MessageType::from_u8(h.msg_type).map_or("", MessageType::name);
    let head = format!(
        "{{\"offset\":{},\"version\":{},\"type\":{},\"typeName\":\"{name}\",\"payloadLength\":{},\"timestamp\":{},\"sequenceId\":{},\"compressed\":{},\"payload\":",
        frame.offset, h.version, h.msg_type, h.payload_length, h.timestamp, h.sequence_id, frame.compressed
    );
    out.extend_from_slice(head.as_bytes());
    out.extend_from_slice(&json);
    out.extend_from_slice(b"}\n");
    Ok(())
}

/// `polywire tether hex`: the input's bytes as lowercase hex, on one line.
pub(crate) fn tether_hex(ctx: &mut Ctx<'_>, input: Option<&OsStr>, output: Option<&OsStr>) -> Result<(), Fail> {
    let mut input = Input::open(input, &ctx.std)?;
    let mut out = Output::new(output, ctx.stdout, &ctx.std, input.id.as_ref())?;
    let data = input.read_all(ctx.stdin)?;
    let mut hex = tether::to_hex(&data);
    hex.push('\n');
    out.write(hex.as_bytes())?;
    out.finish()
}

/// `polywire tether unhex`: hex text (spaces and line ends around it
/// ignored) to bytes; whole 32-bit words unless `words` is false.
pub(crate) fn tether_unhex(ctx: &mut Ctx<'_>, input: Option<&OsStr>, output: Option<&OsStr>, words: bool) -> Result<(), Fail> {
    let mut input = Input::open(input, &ctx.std)?;
    let mut out = Output::new(output, ctx.stdout, &ctx.std, input.id.as_ref())?;
    let raw = input.read_all(ctx.stdin)?;
    let text = String::from_utf8_lossy(&raw);
    let text = text.trim_matches([' ', '\t', '\r', '\n']);
    let data = if words { tether::from_hex(text) } else { tether::from_hex_bytes(text) }.map_err(codec)?;
    out.write(&data)?;
    out.finish()
}

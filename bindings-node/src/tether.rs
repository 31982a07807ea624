//! Tether for Node. Values cross the boundary as JSON text holding a flat
//! *tape*: the value's tokens in prefix order, one JSON array element each,
//! exactly as the Tether bytes are laid out (an Array is its header token,
//! the negative number `-1 - n`, followed by its n elements' tokens).
//! Scalars are JSON scalars: a non-negative integer is a SmallInteger, `true`/`false`, `null` is
//! nil, a string is a String; the rest are pairs `["y", name]` (Symbol),
//! `["b", hex]` (ByteArray), `["u", uuid]`, `["p", hash]` and `["i",
//! digits]` (an integer too large for a JS number). The tape never nests
//! deeper than two JSON levels, so neither side recurses and no Array's
//! contents are copied once per enclosing level: both directions are
//! linear in the value's size. `tether.js` maps JavaScript values to the
//! tape and back with explicit stacks; Rust does all encoding, decoding and
//! validation.

use crate::errors::{invalid_arg, Code, IntoNapi, Result};
use crate::jsbuf::js_buffer;
use napi::bindgen_prelude::*;
use napi_derive::napi;
use polywire::json::{self, ParseOptions};
use polywire::tether::{self, Options, Text, Uuid, Value};
use polywire::{Error, Format};
use serde_json::Value as J;

#[cold]
fn tether_error(code: &'static str, msg: String) -> Error {
    Error::new(Format::Tether, code, msg)
}

fn options(latin1: Option<bool>, max_depth: Option<u32>) -> Options {
    Options {
        text: if latin1.unwrap_or(false) { Text::Latin1 } else { Text::Utf8 },
        max_depth: max_depth.map_or(tether::DEFAULT_MAX_DEPTH, |d| d as usize),
    }
}

#[cold]
fn bad_tape(what: impl std::fmt::Display) -> Error {
    tether_error("TETHER_UNSUPPORTED_TYPE", format!("not a Tether value tape: {what}"))
}

fn parse_tape(text: &str) -> polywire::Result<Vec<J>> {
    match json::parse(text.as_bytes(), ParseOptions::default()) {
        Ok(J::Array(tokens)) => Ok(tokens),
        Ok(_) => Err(bad_tape("expected a JSON array")),
        Err(e) => Err(tether_error(
            "TETHER_UNENCODABLE_CHARACTER",
            format!("a string cannot be encoded ({}); lone UTF-16 surrogates have no UTF-8 form", e.message()),
        )),
    }
}

enum Token {
    Scalar(Value),
    Open(usize),
}

fn integer_token(n: &serde_json::Number) -> polywire::Result<Value> {
    if let Some(u) = n.as_u64() {
        Value::integer(i128::from(u))
    } else if let Some(i) = n.as_i64() {
        Value::integer(i128::from(i))
    } else {
        Err(tether::integer_out_of_range(n))
    }
}

fn token(t: &J) -> polywire::Result<Token> {
    Ok(Token::Scalar(match t {
        J::Number(n) => match n.as_i64() {
            Some(i) if i < 0 => return usize::try_from(-1 - i).map(Token::Open).map_err(|_| bad_tape(t)),
            _ => integer_token(n)?,
        },
        J::Bool(b) => Value::Bool(*b),
        J::Null => Value::Nil,
        J::String(s) => Value::String(s.clone()),
        J::Array(pair) => match (pair.first().and_then(J::as_str), pair.get(1)) {
            (Some("y"), Some(J::String(s))) => Value::Symbol(s.clone()),
            (Some("b"), Some(J::String(h))) => Value::ByteArray(tether::from_hex_bytes(h)?),
            (Some("u"), Some(J::String(u))) => Value::Uuid(Uuid::parse(u).ok_or_else(|| bad_tape(t))?),
            (Some("p"), Some(J::Number(n))) => Value::Proxy(n.as_u64().and_then(|h| u32::try_from(h).ok()).ok_or_else(|| bad_tape(t))?),
            (Some("i"), Some(J::String(digits))) => match digits.parse::<i128>() {
                Ok(i) => Value::integer(i)?,
                Err(_) => return Err(tether::integer_out_of_range(digits)),
            },
            _ => return Err(bad_tape(t)),
        },
        J::Object(_) => return Err(bad_tape(t)),
    }))
}

/// Tape -> one value, with an explicit stack of open Arrays.
fn tape_value(tape: &[J], max_depth: usize) -> polywire::Result<Value> {
    struct Open {
        items: Vec<Value>,
        left: usize,
    }
    let mut stack: Vec<Open> = Vec::new();
    let mut tokens = tape.iter();
    loop {
        let t = tokens.next().ok_or_else(|| bad_tape("it ends inside a value"))?;
        let mut v = match token(t)? {
            Token::Open(n) => {
                if stack.len() >= max_depth {
                    return Err(tether_error(
                        "TETHER_TOO_DEEP",
                        format!("Arrays nested deeper than {max_depth} levels (raise maxDepth if this is intended)"),
                    ));
                }
                if n > tokens.len() {
                    return Err(bad_tape(format!("an Array of {n} elements with {} tokens left", tokens.len())));
                }
                if n > 0 {
                    stack.push(Open { items: Vec::with_capacity(n.min(1 << 12)), left: n });
                    continue;
                }
                Value::Array(Vec::new())
            }
            Token::Scalar(v) => v,
        };
        loop {
            let Some(top) = stack.last_mut() else {
                if tokens.len() > 0 {
                    return Err(bad_tape(format!("{} tokens after the value", tokens.len())));
                }
                return Ok(v);
            };
            top.items.push(v);
            top.left -= 1;
            if top.left > 0 {
                break;
            }
            match stack.pop() {
                Some(done) => v = Value::Array(done.items),
                None => return Err(bad_tape("unbalanced")),
            }
        }
    }
}

/// Append the tape of `values` (each a root, or, with `header`, the elements
/// of one Array of that many elements) without recursion.
fn write_tape(out: &mut Vec<u8>, header: Option<usize>, values: &[Value]) {
    out.push(b'[');
    let mut first = true;
    let mut sep = |out: &mut Vec<u8>| {
        if !std::mem::take(&mut first) {
            out.push(b',');
        }
    };
    if let Some(n) = header {
        sep(out);
        write_header(out, n);
    }
    let mut stack: Vec<std::slice::Iter<'_, Value>> = Vec::new();
    let mut cur = values.iter();
    loop {
        let Some(v) = cur.next() else {
            match stack.pop() {
                Some(outer) => {
                    cur = outer;
                    continue;
                }
                None => break,
            }
        };
        sep(out);
        match v {
            Value::SmallInteger(n) => out.extend_from_slice(n.to_string().as_bytes()),
            Value::Bool(true) => out.extend_from_slice(b"true"),
            Value::Bool(false) => out.extend_from_slice(b"false"),
            Value::Nil => out.extend_from_slice(b"null"),
            Value::String(s) => json::write_str(out, s),
            Value::Symbol(s) => {
                out.extend_from_slice(b"[\"y\",");
                json::write_str(out, s);
                out.push(b']');
            }
            Value::ByteArray(b) => {
                out.extend_from_slice(b"[\"b\",\"");
                out.extend_from_slice(tether::to_hex(b).as_bytes());
                out.extend_from_slice(b"\"]");
            }
            Value::Uuid(u) => out.extend_from_slice(format!("[\"u\",\"{u}\"]").as_bytes()),
            Value::Proxy(h) => out.extend_from_slice(format!("[\"p\",{h}]").as_bytes()),
            Value::Array(items) => {
                write_header(out, items.len());
                stack.push(std::mem::replace(&mut cur, items.iter()));
            }
        }
    }
    out.push(b']');
}

fn write_header(out: &mut Vec<u8>, n: usize) {
    out.push(b'-');
    out.extend_from_slice((n as u128 + 1).to_string().as_bytes());
}

fn tape_text(header: Option<usize>, values: &[Value]) -> String {
    let mut out = Vec::with_capacity(64);
    write_tape(&mut out, header, values);
    // write_tape writes JSON text from valid UTF-8 strings only.
    String::from_utf8(out).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

fn value_arg(tape: &str, opts: &Options) -> Result<Value> {
    tape_value(&parse_tape(tape).napi()?, opts.max_depth).napi()
}

fn arguments_arg(tape: &str, opts: &Options) -> Result<Vec<Value>> {
    match value_arg(tape, opts)?.into_array() {
        Ok(items) => Ok(items),
        Err(other) => Ok(vec![other]),
    }
}

fn uuid_arg(uuid: Option<String>) -> Result<Option<Uuid>> {
    match uuid {
        None => Ok(None),
        Some(s) => Uuid::parse(&s).map(Some).ok_or_else(|| invalid_arg("TETHER_UNSUPPORTED_TYPE", format!("{s:?} is not a UUID"))),
    }
}

fn exposure_hash_arg(what: &str, h: f64) -> Result<u32> {
    if h.is_finite() && h.fract() == 0.0 && (0.0..=tether::MAX_EXPOSURE_HASH as f64).contains(&h) {
        Ok(h as u32)
    } else {
        Err(invalid_arg(
            "TETHER_EXPOSURE_HASH_RANGE",
            format!(
                "{what} exposure hash {h} is out of range: it must be an integer 0..={} (0x{:08x})",
                tether::MAX_EXPOSURE_HASH,
                tether::MAX_EXPOSURE_HASH
            ),
        ))
    }
}

fn uuid_json(out: &mut String, u: Option<&Uuid>) {
    match u {
        Some(u) => {
            out.push('"');
            out.push_str(&u.to_string());
            out.push('"');
        }
        None => out.push_str("null"),
    }
}

fn buffer<'e>(env: &'e Env, bytes: &[u8]) -> std::result::Result<BufferSlice<'e>, napi::Error<Code>> {
    js_buffer(env, bytes)
}

#[napi(js_name = "tetherEncode")]
pub fn encode<'e>(env: &'e Env, tape: String, latin1: Option<bool>, max_depth: Option<u32>) -> Result<BufferSlice<'e>> {
    let opts = options(latin1, max_depth);
    buffer(env, &tether::encode_with(&value_arg(&tape, &opts)?, &opts).napi()?)
}

/// The value's tape.
#[napi(js_name = "tetherDecode")]
pub fn decode(data: &[u8], latin1: Option<bool>, max_depth: Option<u32>) -> Result<String> {
    let v = tether::decode_with(data, &options(latin1, max_depth)).napi()?;
    Ok(tape_text(None, std::slice::from_ref(&v)))
}

#[napi(js_name = "tetherEncodeMessageSend")]
pub fn encode_message_send<'e>(
    env: &'e Env,
    receiver: f64,
    selector: String,
    arguments_tape: String,
    uuid: Option<String>,
    latin1: Option<bool>,
    max_depth: Option<u32>,
) -> Result<BufferSlice<'e>> {
    let opts = options(latin1, max_depth);
    let send = tether::MessageSend {
        uuid: uuid_arg(uuid)?.unwrap_or_else(Uuid::new_v4),
        receiver: exposure_hash_arg("the receiver's", receiver)?,
        selector,
        arguments: arguments_arg(&arguments_tape, &opts)?,
    };
    buffer(env, &tether::encode_message_send_with(&send, &opts).napi()?)
}

/// `{"uuid", "receiver", "selector", "arguments": <the arguments Array's tape>}`.
#[napi(js_name = "tetherDecodeMessageSend")]
pub fn decode_message_send(data: &[u8], latin1: Option<bool>, max_depth: Option<u32>) -> Result<String> {
    let m = tether::decode_message_send_with(data, &options(latin1, max_depth)).napi()?;
    let mut out = String::from("{\"uuid\":");
    uuid_json(&mut out, Some(&m.uuid));
    out.push_str(&format!(",\"receiver\":{},\"selector\":", m.receiver));
    let mut sel = Vec::new();
    json::write_str(&mut sel, &m.selector);
    out.push_str(&String::from_utf8_lossy(&sel));
    out.push_str(",\"arguments\":");
    out.push_str(&tape_text(Some(m.arguments.len()), &m.arguments));
    out.push('}');
    Ok(out)
}

#[napi(js_name = "tetherEncodeAnswer")]
pub fn encode_answer<'e>(
    env: &'e Env,
    tape: String,
    uuid: Option<String>,
    latin1: Option<bool>,
    max_depth: Option<u32>,
) -> Result<BufferSlice<'e>> {
    let opts = options(latin1, max_depth);
    let v = value_arg(&tape, &opts)?;
    buffer(env, &tether::encode_answer_with(&v, uuid_arg(uuid)?, &opts).napi()?)
}

/// `{"uuid": string | null, "result": <tape>}`.
#[napi(js_name = "tetherDecodeAnswer")]
pub fn decode_answer(data: &[u8], latin1: Option<bool>, max_depth: Option<u32>) -> Result<String> {
    let a = tether::decode_answer_with(data, &options(latin1, max_depth)).napi()?;
    let mut out = String::from("{\"uuid\":");
    uuid_json(&mut out, a.uuid.as_ref());
    out.push_str(",\"result\":");
    out.push_str(&tape_text(None, std::slice::from_ref(&a.result)));
    out.push('}');
    Ok(out)
}

#[napi(js_name = "tetherEncodeHandshake")]
pub fn encode_handshake<'e>(env: &'e Env, exposure_hash: f64) -> Result<BufferSlice<'e>> {
    let h = exposure_hash_arg("the handshake's", exposure_hash)?;
    buffer(env, &tether::encode_handshake(h).napi()?)
}

#[napi(js_name = "tetherDecodeHandshake")]
pub fn decode_handshake(data: &[u8]) -> Result<u32> {
    tether::decode_handshake(data).napi()
}

#[napi(js_name = "tetherToHex")]
pub fn to_hex(data: &[u8]) -> String {
    tether::to_hex(data)
}

#[napi(js_name = "tetherFromHex")]
pub fn from_hex<'e>(env: &'e Env, hex: String, words: Option<bool>) -> Result<BufferSlice<'e>> {
    let b = if words.unwrap_or(true) { tether::from_hex(&hex) } else { tether::from_hex_bytes(&hex) };
    buffer(env, &b.napi()?)
}

/// The `send` tool's arguments as JSON text.
#[napi(js_name = "tetherToolArguments")]
pub fn tool_arguments(
    receiver_tape: String,
    selector: String,
    arguments_tape: String,
    latin1: Option<bool>,
    max_depth: Option<u32>,
) -> Result<String> {
    let opts = options(latin1, max_depth);
    let receiver = value_arg(&receiver_tape, &opts)?;
    let args = arguments_arg(&arguments_tape, &opts)?;
    let t = tether::tool_arguments(&receiver, &selector, &args, &opts).napi()?;
    // The core writes the JSON; it is ASCII hex and a JSON-escaped selector.
    Ok(String::from_utf8_lossy(&t.to_json()).into_owned())
}

/// The result's tape.
#[napi(js_name = "tetherDecodeResultHex")]
pub fn decode_result_hex(hex: String, latin1: Option<bool>, max_depth: Option<u32>) -> Result<String> {
    let v = tether::decode_result_hex(&hex, &options(latin1, max_depth)).napi()?;
    Ok(tape_text(None, std::slice::from_ref(&v)))
}

/// The result's tape.
#[napi(js_name = "tetherReadToolResult")]
pub fn read_tool_result(output: String, latin1: Option<bool>, max_depth: Option<u32>) -> Result<String> {
    let v = tether::read_tool_result(output.as_bytes(), &options(latin1, max_depth)).napi()?;
    Ok(tape_text(None, std::slice::from_ref(&v)))
}

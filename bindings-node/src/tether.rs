//! Tether for Node. Values cross the boundary as JSON text in a typed
//! notation (`{"int": 3}`, `{"symbol": "+"}`, `{"bytes": "<hex>"}`, ...; the
//! same notation as `vectors/tether.json`): `tether.js` maps JavaScript values
//! to it and back, Rust does all encoding, decoding and validation.

use crate::errors::{invalid_arg, IntoNapi, Result};
use napi::bindgen_prelude::*;
use napi_derive::napi;
use polywire::json::{self, ParseOptions};
use polywire::tether::{self, Options, Text, Uuid, Value};
use polywire::{Error, Format};
use serde_json::{json, Value as J};

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

fn parse_typed(text: &str, max_depth: usize) -> polywire::Result<J> {
    // The typed notation takes two JSON levels per Array.
    let opts = ParseOptions { max_depth: 2 * max_depth.min(4096) + 4, ..ParseOptions::default() };
    json::parse(text.as_bytes(), opts).map_err(|e| {
        if e.code() == "JSON_TOO_DEEP" {
            return tether_error("TETHER_TOO_DEEP", format!("Arrays nested deeper than {max_depth} levels"));
        }
        tether_error(
            "TETHER_UNENCODABLE_CHARACTER",
            format!("a string cannot be encoded ({}); lone UTF-16 surrogates have no UTF-8 form", e.message()),
        )
    })
}

/// Typed notation -> value.
fn from_typed(v: &J, depth: usize, max_depth: usize) -> polywire::Result<Value> {
    let bad = || tether_error("TETHER_UNSUPPORTED_TYPE", format!("not a typed Tether value: {v}"));
    let (k, x) = v.as_object().and_then(|o| o.iter().next()).ok_or_else(bad)?;
    Ok(match (k.as_str(), x) {
        ("int", J::Number(n)) => match n.as_i64() {
            Some(i) => Value::integer(i128::from(i))?,
            None => match n.as_u64() {
                Some(u) => Value::integer(i128::from(u))?,
                None => return Err(tether::integer_out_of_range(n)),
            },
        },
        ("int", J::String(digits)) => match digits.parse::<i128>() {
            Ok(i) => Value::integer(i)?,
            Err(_) => return Err(tether::integer_out_of_range(digits)),
        },
        ("bool", J::Bool(b)) => Value::Bool(*b),
        ("nil", _) => Value::Nil,
        ("string", J::String(s)) => Value::String(s.clone()),
        ("symbol", J::String(s)) => Value::Symbol(s.clone()),
        ("bytes", J::String(h)) => Value::ByteArray(tether::from_hex_bytes(h)?),
        ("uuid", J::String(u)) => Value::Uuid(Uuid::parse(u).ok_or_else(bad)?),
        ("proxy", J::Number(n)) => Value::Proxy(n.as_u64().and_then(|h| u32::try_from(h).ok()).ok_or_else(bad)?),
        ("array", J::Array(items)) => {
            if depth >= max_depth {
                return Err(tether_error(
                    "TETHER_TOO_DEEP",
                    format!("Arrays nested deeper than {max_depth} levels (is the array circular?)"),
                ));
            }
            Value::Array(items.iter().map(|i| from_typed(i, depth + 1, max_depth)).collect::<polywire::Result<_>>()?)
        }
        _ => return Err(bad()),
    })
}

/// Value -> typed notation.
fn to_typed(v: &Value) -> J {
    match v {
        Value::SmallInteger(n) => json!({ "int": n }),
        Value::Bool(b) => json!({ "bool": b }),
        Value::Nil => json!({ "nil": null }),
        Value::String(s) => json!({ "string": s }),
        Value::Symbol(s) => json!({ "symbol": s }),
        Value::ByteArray(b) => json!({ "bytes": tether::to_hex(b) }),
        Value::Array(items) => json!({ "array": items.iter().map(to_typed).collect::<Vec<_>>() }),
        Value::Uuid(u) => json!({ "uuid": u.to_string() }),
        Value::Proxy(h) => json!({ "proxy": h }),
    }
}

fn value_arg(typed: &str, opts: &Options) -> Result<Value> {
    from_typed(&parse_typed(typed, opts.max_depth).napi()?, 0, opts.max_depth).napi()
}

fn arguments_arg(typed: &str, opts: &Options) -> Result<Vec<Value>> {
    match value_arg(typed, opts)? {
        Value::Array(items) => Ok(items),
        other => Ok(vec![other]),
    }
}

fn uuid_arg(uuid: Option<String>) -> Result<Option<Uuid>> {
    match uuid {
        None => Ok(None),
        Some(s) => Uuid::parse(&s)
            .map(Some)
            .ok_or_else(|| invalid_arg("TETHER_UNSUPPORTED_TYPE", format!("{s:?} is not a UUID"))),
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

fn typed_text(v: &J) -> String {
    v.to_string()
}

#[napi(js_name = "tetherEncode")]
pub fn encode(typed: String, latin1: Option<bool>, max_depth: Option<u32>) -> Result<Buffer> {
    let opts = options(latin1, max_depth);
    Ok(tether::encode_with(&value_arg(&typed, &opts)?, &opts).napi()?.into())
}

#[napi(js_name = "tetherDecode")]
pub fn decode(data: &[u8], latin1: Option<bool>, max_depth: Option<u32>) -> Result<String> {
    let v = tether::decode_with(data, &options(latin1, max_depth)).napi()?;
    Ok(typed_text(&to_typed(&v)))
}

#[napi(js_name = "tetherEncodeMessageSend")]
pub fn encode_message_send(
    receiver: f64,
    selector: String,
    arguments_typed: String,
    uuid: Option<String>,
    latin1: Option<bool>,
    max_depth: Option<u32>,
) -> Result<Buffer> {
    let opts = options(latin1, max_depth);
    let send = tether::MessageSend {
        uuid: uuid_arg(uuid)?.unwrap_or_else(Uuid::new_v4),
        receiver: exposure_hash_arg("the receiver's", receiver)?,
        selector,
        arguments: arguments_arg(&arguments_typed, &opts)?,
    };
    Ok(tether::encode_message_send_with(&send, &opts).napi()?.into())
}

/// `{"uuid", "receiver", "selector", "arguments": [typed]}`.
#[napi(js_name = "tetherDecodeMessageSend")]
pub fn decode_message_send(data: &[u8], latin1: Option<bool>, max_depth: Option<u32>) -> Result<String> {
    let m = tether::decode_message_send_with(data, &options(latin1, max_depth)).napi()?;
    Ok(typed_text(&json!({
        "uuid": m.uuid.to_string(),
        "receiver": m.receiver,
        "selector": m.selector,
        "arguments": m.arguments.iter().map(to_typed).collect::<Vec<_>>(),
    })))
}

#[napi(js_name = "tetherEncodeAnswer")]
pub fn encode_answer(typed: String, uuid: Option<String>, latin1: Option<bool>, max_depth: Option<u32>) -> Result<Buffer> {
    let opts = options(latin1, max_depth);
    let v = value_arg(&typed, &opts)?;
    Ok(tether::encode_answer_with(&v, uuid_arg(uuid)?, &opts).napi()?.into())
}

/// `{"uuid": string | null, "result": typed}`.
#[napi(js_name = "tetherDecodeAnswer")]
pub fn decode_answer(data: &[u8], latin1: Option<bool>, max_depth: Option<u32>) -> Result<String> {
    let a = tether::decode_answer_with(data, &options(latin1, max_depth)).napi()?;
    Ok(typed_text(&json!({ "uuid": a.uuid.map(|u| u.to_string()), "result": to_typed(&a.result) })))
}

#[napi(js_name = "tetherEncodeHandshake")]
pub fn encode_handshake(exposure_hash: f64) -> Result<Buffer> {
    let h = exposure_hash_arg("the handshake's", exposure_hash)?;
    Ok(tether::encode_handshake(h).napi()?.to_vec().into())
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
pub fn from_hex(hex: String, words: Option<bool>) -> Result<Buffer> {
    let b = if words.unwrap_or(true) { tether::from_hex(&hex) } else { tether::from_hex_bytes(&hex) };
    Ok(b.napi()?.into())
}

/// The `send` tool's arguments as JSON text.
#[napi(js_name = "tetherToolArguments")]
pub fn tool_arguments(receiver_typed: String, selector: String, arguments_typed: String, latin1: Option<bool>) -> Result<String> {
    let opts = options(latin1, None);
    let receiver = value_arg(&receiver_typed, &opts)?;
    let args = arguments_arg(&arguments_typed, &opts)?;
    let t = tether::tool_arguments(&receiver, &selector, &args, &opts).napi()?;
    // The core writes the JSON; it is ASCII hex and a JSON-escaped selector.
    Ok(String::from_utf8_lossy(&t.to_json()).into_owned())
}

#[napi(js_name = "tetherDecodeResultHex")]
pub fn decode_result_hex(hex: String, latin1: Option<bool>) -> Result<String> {
    let v = tether::decode_result_hex(&hex, &options(latin1, None)).napi()?;
    Ok(typed_text(&to_typed(&v)))
}

#[napi(js_name = "tetherReadToolResult")]
pub fn read_tool_result(output: String, latin1: Option<bool>) -> Result<String> {
    let v = tether::read_tool_result(output.as_bytes(), &options(latin1, None)).napi()?;
    Ok(typed_text(&to_typed(&v)))
}

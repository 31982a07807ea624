//! Kameo for Node. Values cross the boundary as JSON text with a few tagged
//! one-entry objects for what JSON lacks (`JSON.stringify` with a replacer
//! and `JSON.parse` with a reviver run in `kameo.js`; Rust parses and writes
//! the text with the core JSON layer):
//!
//! - `{"\u0000b": "<base64>"}`: bytes (a `Uint8Array` in JavaScript);
//! - `{"\u0000n": "<decimal>"}`: an integer beyond ±(2^53-1) (a `BigInt`);
//! - `{"\u0000f": "NaN" | "Infinity" | "-Infinity"}`: a non-finite number;
//! - `{"\u0000m": [[key, value], ...]}`: a map whose keys are not all
//!   distinct strings (a `Map`).

use crate::errors::{invalid_arg, IntoNapi, Result};
use crate::kado::v8_buffer;
use napi::bindgen_prelude::*;
use napi_derive::napi;
use polywire::json::{self, Builder, ParseOptions};
use polywire::kameo::{self as pk, msgpack, ActorId, ActorRegistration, PeerId, Value};
use std::vec::Drain;

const TAG_BYTES: &str = "\u{0}b";
const TAG_BIGINT: &str = "\u{0}n";
const TAG_FLOAT: &str = "\u{0}f";
const TAG_MAP: &str = "\u{0}m";
const SAFE_INTEGER: i128 = (1 << 53) - 1;

fn bad_value(message: String) -> polywire::Error {
    polywire::Error::new(polywire::Format::Kameo, "KAMEO_INVALID_VALUE", message)
}

// ---------------------------------------------------------------- base64

const B64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

fn base64_encode(out: &mut Vec<u8>, data: &[u8]) {
    for chunk in data.chunks(3) {
        let b = [chunk[0], *chunk.get(1).unwrap_or(&0), *chunk.get(2).unwrap_or(&0)];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        let chars = [(n >> 18) & 63, (n >> 12) & 63, (n >> 6) & 63, n & 63].map(|i| B64[i as usize]);
        let keep = chunk.len() + 1;
        out.extend_from_slice(&chars[..keep]);
        out.extend(std::iter::repeat_n(b'=', 4 - keep));
    }
}

/// Standard base64 as `Buffer#toString('base64')` writes it (padding optional).
fn base64_decode(text: &str) -> polywire::Result<Vec<u8>> {
    let text = text.trim_end_matches('=');
    let mut out = Vec::with_capacity(text.len() * 3 / 4);
    let (mut acc, mut bits) = (0u32, 0u32);
    for c in text.bytes() {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return Err(bad_value(format!("invalid base64 character {:?} in bytes", c as char))),
        };
        acc = (acc << 6) | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
        }
    }
    Ok(out)
}

// ---------------------------------------------------------------- JSON -> Value

struct ValueBuilder;

impl Builder for ValueBuilder {
    type Value = Value;
    type Key = String;
    type Error = polywire::Error;

    fn null(&mut self) -> polywire::Result<Value> {
        Ok(Value::Nil)
    }
    fn bool(&mut self, b: bool) -> polywire::Result<Value> {
        Ok(Value::Bool(b))
    }
    // Plain JSON numbers here come from JavaScript numbers (BigInts come
    // tagged), and JSON.stringify writes a double beyond 2^53 as its
    // shortest round-tripping digits, not its value: 2^60 arrives as
    // 1152921504606847000 and -2^63 as -9223372036854776000. Such digits
    // are read back as the double they name, whose integer value is exact
    // (else 2^60 was sent as 2^60 + 24, and -2^63 was refused).
    fn int(&mut self, i: i64) -> polywire::Result<Value> {
        const EXACT: u64 = 1 << 53;
        if i.unsigned_abs() <= EXACT {
            Ok(Value::Int(i.into()))
        } else {
            Ok(Value::Int((i as f64) as i128))
        }
    }
    // Beyond MessagePack's integers (-2^63 ..= 2^64 - 1) such a double is
    // sent as the float it is, as one written with an exponent (1e21) was.
    fn big_int(&mut self, digits: &str) -> polywire::Result<Value> {
        match digits.parse::<f64>() {
            Ok(f) if f.is_finite() && (-9223372036854775808.0..18446744073709551616.0).contains(&f) => Ok(Value::Int(f as i128)),
            Ok(f) if f.is_finite() => Ok(Value::F64(f)),
            _ => Err(bad_value(format!("integer {digits} is out of range"))),
        }
    }
    fn float(&mut self, f: f64) -> polywire::Result<Value> {
        Ok(Value::F64(f))
    }
    fn string(&mut self, s: &str) -> polywire::Result<Value> {
        Ok(Value::Str(s.to_owned()))
    }
    fn key(&mut self, s: &str) -> polywire::Result<String> {
        Ok(s.to_owned())
    }
    fn array(&mut self, items: Drain<'_, Value>) -> polywire::Result<Value> {
        Ok(Value::Array(items.collect()))
    }
    fn object(&mut self, mut entries: Drain<'_, (String, Value)>) -> polywire::Result<Value> {
        if entries.len() == 1 {
            if let Some((k, v)) = entries.next() {
                if k.starts_with('\u{0}') {
                    return untag(&k, v);
                }
                return Ok(Value::Map(vec![(Value::Str(k), v)]));
            }
        }
        Ok(Value::Map(entries.map(|(k, v)| (Value::Str(k), v)).collect()))
    }
}

fn untag(tag: &str, v: Value) -> polywire::Result<Value> {
    match (tag, v) {
        (TAG_BYTES, Value::Str(s)) => base64_decode(&s).map(Value::Bytes),
        (TAG_BIGINT, Value::Str(s)) => s.parse::<i128>().map(Value::Int).map_err(|_| bad_value(format!("BigInt {s} is out of range"))),
        (TAG_FLOAT, Value::Str(s)) => match s.as_str() {
            "NaN" => Ok(Value::F64(f64::NAN)),
            "Infinity" => Ok(Value::F64(f64::INFINITY)),
            "-Infinity" => Ok(Value::F64(f64::NEG_INFINITY)),
            _ => Err(bad_value(format!("bad non-finite number {s:?}"))),
        },
        (TAG_MAP, Value::Array(pairs)) => pairs
            .into_iter()
            .map(|p| match p {
                Value::Array(mut kv) if kv.len() == 2 => {
                    let v = kv.pop().unwrap_or(Value::Nil);
                    let k = kv.pop().unwrap_or(Value::Nil);
                    Ok((k, v))
                }
                _ => Err(bad_value("a Map entry must be a [key, value] pair".into())),
            })
            .collect::<polywire::Result<_>>()
            .map(Value::Map),
        (t, v) => Ok(Value::Map(vec![(Value::Str(t.to_owned()), v)])),
    }
}

fn parse(text: &str) -> Result<Value> {
    json::parse_with(text.as_bytes(), ParseOptions::default(), &mut ValueBuilder).napi()
}

// ---------------------------------------------------------------- Value -> JSON

fn write_tagged(out: &mut Vec<u8>, tag: &str, body: impl FnOnce(&mut Vec<u8>)) {
    out.push(b'{');
    json::write_str(out, tag);
    out.push(b':');
    body(out);
    out.push(b'}');
}

fn write(out: &mut Vec<u8>, v: &Value) {
    match v {
        Value::Nil => out.extend_from_slice(b"null"),
        Value::Bool(b) => out.extend_from_slice(if *b { b"true" } else { b"false" }),
        Value::Int(i) if (-SAFE_INTEGER..=SAFE_INTEGER).contains(i) => json::write_i64(out, *i as i64),
        Value::Int(i) => write_tagged(out, TAG_BIGINT, |out| json::write_str(out, &i.to_string())),
        Value::F32(f) => write_float(out, f64::from(*f)),
        Value::F64(f) => write_float(out, *f),
        Value::Str(s) => json::write_str(out, s),
        Value::Bytes(b) => write_tagged(out, TAG_BYTES, |out| {
            out.push(b'"');
            base64_encode(out, b);
            out.push(b'"');
        }),
        Value::Array(items) => {
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write(out, item);
            }
            out.push(b']');
        }
        Value::Map(entries) => {
            let mut seen = std::collections::HashSet::new();
            let plain = entries.iter().all(|(k, _)| matches!(k, Value::Str(s) if !s.starts_with('\u{0}') && seen.insert(s.as_str())));
            if plain {
                out.push(b'{');
                for (i, (k, item)) in entries.iter().enumerate() {
                    if i > 0 {
                        out.push(b',');
                    }
                    if let Value::Str(s) = k {
                        json::write_str(out, s);
                    }
                    out.push(b':');
                    write(out, item);
                }
                out.push(b'}');
            } else {
                write_tagged(out, TAG_MAP, |out| {
                    out.push(b'[');
                    for (i, (k, item)) in entries.iter().enumerate() {
                        if i > 0 {
                            out.push(b',');
                        }
                        out.push(b'[');
                        write(out, k);
                        out.push(b',');
                        write(out, item);
                        out.push(b']');
                    }
                    out.push(b']');
                });
            }
        }
    }
}

fn write_float(out: &mut Vec<u8>, f: f64) {
    if f.is_finite() {
        json::write_f64(out, f);
    } else {
        let s = if f.is_nan() {
            "NaN"
        } else if f > 0.0 {
            "Infinity"
        } else {
            "-Infinity"
        };
        write_tagged(out, TAG_FLOAT, |out| json::write_str(out, s));
    }
}

fn to_text(v: &Value) -> String {
    let mut out = Vec::with_capacity(128);
    write(&mut out, v);
    // only valid UTF-8 was written (string literals come from Rust strings)
    String::from_utf8(out).unwrap_or_default()
}

// ---------------------------------------------------------------- messaging

#[napi(js_name = "kameoEncodeRequest")]
pub fn encode_request<'e>(env: &'e Env, value_json: String) -> Result<BufferSlice<'e>> {
    v8_buffer(env, &pk::encode_request_value(&parse(&value_json)?).napi()?)
}

#[napi(js_name = "kameoDecodeRequest")]
pub fn decode_request(data: &[u8]) -> Result<String> {
    Ok(to_text(&pk::decode_request_value(data).napi()?))
}

#[napi(js_name = "kameoEncodeResponse")]
pub fn encode_response<'e>(env: &'e Env, value_json: String) -> Result<BufferSlice<'e>> {
    v8_buffer(env, &pk::encode_response_value(&parse(&value_json)?).napi()?)
}

#[napi(js_name = "kameoDecodeResponse")]
pub fn decode_response(data: &[u8]) -> Result<String> {
    Ok(to_text(&pk::decode_response_value(data).napi()?))
}

// ---------------------------------------------------------------- ids and registry

fn peer(v: &Value, name: &str) -> Result<Option<PeerId>> {
    match v {
        Value::Nil => Ok(None),
        p => pk::peer_id_from_value(p, name).napi().map(Some),
    }
}

fn sequence(v: &Value) -> Result<u64> {
    v.as_u64().ok_or_else(|| invalid_arg("KAMEO_INVALID_VALUE", format!("sequence_id: expected an integer in 0..2^64, got {}", v.kind())))
}

/// `[sequence_id, peer_id]` as tagged JSON -> the actor id.
fn actor_id_arg(args_json: &str) -> Result<ActorId> {
    match parse(args_json)? {
        Value::Array(a) if a.len() == 2 => Ok(ActorId::new(sequence(&a[0])?, peer(&a[1], "peer_id")?)),
        _ => Err(invalid_arg("KAMEO_INVALID_VALUE", "expected [sequence_id, peer_id]".into())),
    }
}

/// `args_json`: `[sequence_id, peer_id, remote_id]`.
#[napi(js_name = "kameoEncodeRegistration")]
pub fn encode_registration<'e>(env: &'e Env, args_json: String) -> Result<BufferSlice<'e>> {
    match parse(&args_json)? {
        Value::Array(a) if a.len() == 3 => {
            let id = ActorId::new(sequence(&a[0])?, peer(&a[1], "peer_id")?);
            let remote_id = a[2].as_str().ok_or_else(|| invalid_arg("KAMEO_INVALID_VALUE", "remote_id: expected a string".into()))?;
            v8_buffer(env, &ActorRegistration::new(id, remote_id).to_bytes())
        }
        _ => Err(invalid_arg("KAMEO_INVALID_VALUE", "expected [sequence_id, peer_id, remote_id]".into())),
    }
}

#[napi(js_name = "kameoDecodeRegistration")]
pub fn decode_registration(data: &[u8]) -> Result<String> {
    let reg = ActorRegistration::from_bytes(data).napi()?;
    let mut v = pk::actor_id_to_value(&reg.actor_id);
    if let Value::Map(entries) = &mut v {
        entries.push((Value::str("remote_id"), Value::Str(reg.remote_id)));
    }
    Ok(to_text(&v))
}

#[napi(js_name = "kameoActorIdToBytes")]
pub fn actor_id_to_bytes<'e>(env: &'e Env, args_json: String) -> Result<BufferSlice<'e>> {
    v8_buffer(env, &actor_id_arg(&args_json)?.to_bytes())
}

#[napi(js_name = "kameoActorIdFromBytes")]
pub fn actor_id_from_bytes(data: &[u8]) -> Result<String> {
    Ok(to_text(&pk::actor_id_to_value(&ActorId::from_bytes(data).napi()?)))
}

#[napi(js_name = "kameoMetadataKey")]
pub fn metadata_key(actor_name: String, peer_id: String) -> Result<String> {
    Ok(pk::metadata_key(&actor_name, &PeerId::from_base58(&peer_id).napi()?))
}

/// `[actor_name, peer_id]`.
#[napi(js_name = "kameoParseMetadataKey")]
pub fn parse_metadata_key(key: &[u8]) -> Result<Vec<String>> {
    let (name, peer) = pk::parse_metadata_key(key).napi()?;
    Ok(vec![name, peer.to_base58()])
}

#[napi(js_name = "kameoProviderKey")]
pub fn provider_key<'e>(env: &'e Env, actor_name: String) -> Result<BufferSlice<'e>> {
    v8_buffer(env, &pk::provider_key(&actor_name))
}

#[napi(js_name = "kameoPeerIdFromPublicKey")]
pub fn peer_id_from_public_key(key: &[u8]) -> Result<String> {
    Ok(PeerId::from_public_key(key).napi()?.to_base58())
}

#[napi(js_name = "kameoPeerIdToBytes")]
pub fn peer_id_to_bytes<'e>(env: &'e Env, peer_id: String) -> Result<BufferSlice<'e>> {
    v8_buffer(env, &PeerId::from_base58(&peer_id).napi()?.to_bytes())
}

#[napi(js_name = "kameoPeerIdFromBytes")]
pub fn peer_id_from_bytes(data: &[u8]) -> Result<String> {
    Ok(PeerId::from_bytes(data).napi()?.to_base58())
}

#[napi(js_name = "kameoRemoteMessageId")]
pub fn remote_message_id(
    crate_name: String,
    crate_major: f64,
    module_path: String,
    message_type: String,
    actor_type: String,
    impl_generics: Option<String>,
) -> Result<String> {
    if !(crate_major.is_finite() && crate_major >= 0.0 && crate_major.fract() == 0.0 && crate_major <= 9007199254740991.0) {
        return Err(invalid_arg("KAMEO_INVALID_VALUE", format!("crateMajor must be a non-negative integer, got {crate_major}")));
    }
    Ok(pk::remote_message_id(
        &crate_name,
        crate_major as u64,
        &module_path,
        &message_type,
        &actor_type,
        impl_generics.as_deref().unwrap_or(""),
    ))
}

#[napi(js_name = "kameoRemoteActorId")]
pub fn remote_actor_id(module_path: String, ident: String) -> String {
    pk::remote_actor_id(&module_path, &ident)
}

// ---------------------------------------------------------------- MessagePack

#[napi(js_name = "kameoPack")]
pub fn pack<'e>(env: &'e Env, value_json: String) -> Result<BufferSlice<'e>> {
    // V8-owned memory (see `v8_buffer`): a synchronous loop of packs stays flat.
    v8_buffer(env, &msgpack::pack(&parse(&value_json)?).napi()?)
}

#[napi(js_name = "kameoUnpack")]
pub fn unpack(data: &[u8]) -> Result<String> {
    Ok(to_text(&msgpack::unpack(data).napi()?))
}

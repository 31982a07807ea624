//! "axon/1": the envelopes of AXON protocol version 1, the protocol upstream
//! hwbehrens/axon speaks since v0.3.0 (v0.7.2 and main), with upstream HEAD's
//! exact rules (`axon/src/message/envelope.rs`).
//!
//! A message is one JSON object sent alone on its own QUIC stream (the
//! stream's FIN ends it), at most [`MAX_MESSAGE_SIZE`] bytes, on a connection
//! whose ALPN is [`ALPN`]:
//!
//! ```json
//! {"id":"<uuid v4>","kind":"request","ref":"<uuid, optional>","payload":{…}}
//! ```
//!
//! [`decode`] accepts exactly what upstream's `decode` + `validate` accept
//! (the same serde shape: `id`, `kind` and `payload` required, `ref` absent,
//! null or a UUID, `from`/`to` strings or null and otherwise ignored, unknown
//! fields ignored, duplicate known fields refused, the object's fields also
//! accepted as a JSON array in their order; UUIDs in any spelling the `uuid`
//! crate parses), then checks upstream's rules in its order: a non-nil id,
//! a UUID v4 id, a payload that is a JSON object. One difference, by design:
//! a kind upstream does not know is kept as the string it was (upstream
//! collapses it to `"unknown"`). Every error is an [`Error`] of format Axon
//! with the code `invalid_envelope` and upstream's message (serde's, for
//! the shape, with the byte offset where it points).
//!
//! [`encode`] writes `{"id","kind","ref"?,"payload"}` compactly, `ref` only
//! when set and the payload's text as it is; `from`/`to` are never written
//! (the receiver takes them from the TLS identity).

use crate::error::{Error, Format, Result};
use serde::de::{self, Deserialize, Deserializer};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

/// The ALPN protocol id of a connection that speaks this protocol.
pub const ALPN: &[u8] = b"axon/1";
/// Largest message, in bytes (upstream's `MAX_MESSAGE_SIZE`).
pub const MAX_MESSAGE_SIZE: usize = 65_536;
/// The kinds upstream knows. Others are kept as they are.
pub const KINDS: [&str; 4] = ["request", "response", "message", "error"];
/// The code of every error of this module.
pub const INVALID_ENVELOPE: &str = "invalid_envelope";

#[cold]
fn invalid(message: impl Into<String>) -> Error {
    Error::new(Format::Axon, INVALID_ENVELOPE, message)
}

/// An axon/1 envelope.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Envelope {
    /// The message id, a UUID written lowercase with hyphens.
    pub id: String,
    /// `request`, `response`, `message`, `error` or any other string.
    pub kind: String,
    /// The id of the request this answers (a UUID), if any.
    pub ref_id: Option<String>,
    /// The payload's JSON text (as received: not re-formatted).
    pub payload: String,
}

impl Envelope {
    /// A new envelope with a fresh UUID v4 id.
    pub fn new(kind: &str, payload: &Map<String, Value>) -> Envelope {
        Envelope { id: super::v2::new_id(), kind: kind.to_owned(), ref_id: None, payload: payload_text(payload) }
    }

    /// Whether it is a `request` (it goes on a bidirectional stream and is
    /// answered there).
    pub fn is_request(&self) -> bool {
        self.kind == "request"
    }

    /// Whether it answers a request (`response` or `error`).
    pub fn is_response(&self) -> bool {
        self.kind == "response" || self.kind == "error"
    }

    /// Whether upstream knows its kind.
    pub fn is_known_kind(&self) -> bool {
        KINDS.contains(&self.kind.as_str())
    }

    /// Upstream's `validate`, in its order: a non-nil id, a UUID v4 id, a
    /// payload that is a JSON object. `ref` is not checked (any UUID).
    pub fn validate(&self) -> Result<()> {
        let id = parse_uuid(&self.id).map_err(invalid)?;
        if id == [0; 16] {
            return Err(invalid("message id must be non-nil"));
        }
        if id[6] >> 4 != 4 {
            return Err(invalid("message id must be UUID v4"));
        }
        if !self.payload.trim_start().starts_with('{') {
            return Err(invalid("payload must be a JSON object"));
        }
        Ok(())
    }

    /// The payload as a JSON object.
    pub fn payload_object(&self) -> Result<Map<String, Value>> {
        match serde_json::from_str::<Value>(&self.payload) {
            Ok(Value::Object(m)) => Ok(m),
            Ok(_) => Err(invalid("payload must be a JSON object")),
            Err(e) => Err(serde_error(e, self.payload.as_bytes())),
        }
    }
}

/// The compact JSON text of a payload object.
pub fn payload_text(payload: &Map<String, Value>) -> String {
    // A map of JSON values always serializes.
    serde_json::to_string(payload).unwrap_or_else(|_| "{}".into())
}

/// A `request` with a fresh id.
pub fn request(payload: &Map<String, Value>) -> Envelope {
    Envelope::new("request", payload)
}

/// A `message` with a fresh id.
pub fn message(payload: &Map<String, Value>) -> Envelope {
    Envelope::new("message", payload)
}

/// A `response` to `request`: a fresh id, `ref` = the request's id.
pub fn response_to(request: &Envelope, payload: &Map<String, Value>) -> Envelope {
    Envelope { ref_id: Some(request.id.clone()), ..Envelope::new("response", payload) }
}

/// The payload of an `error`, keys in upstream's order.
pub fn error_payload(code: &str, message: &str, retryable: bool) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("code".into(), Value::String(code.into()));
    m.insert("message".into(), Value::String(message.into()));
    m.insert("retryable".into(), Value::Bool(retryable));
    m
}

/// An `error` reply to `request`: `{"code","message","retryable"}`.
pub fn error_to(request: &Envelope, code: &str, message: &str, retryable: bool) -> Envelope {
    Envelope { ref_id: Some(request.id.clone()), ..Envelope::new("error", &error_payload(code, message, retryable)) }
}

// ---------------------------------------------------------------- decode

/// The kind as upstream's derive reads it (`deserialize_enum`: a string, or a
/// one-key object whose value is null), its name kept.
struct WireKind(String);

impl<'de> Deserialize<'de> for WireKind {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct V;
        impl<'de> de::Visitor<'de> for V {
            type Value = WireKind;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("enum MessageKind")
            }
            fn visit_enum<A: de::EnumAccess<'de>>(self, data: A) -> std::result::Result<WireKind, A::Error> {
                let (name, variant): (String, A::Variant) = data.variant()?;
                de::VariantAccess::unit_variant(variant)?;
                Ok(WireKind(name))
            }
        }
        d.deserialize_enum("MessageKind", &KINDS, V)
    }
}

/// A UUID as upstream reads one (`uuid` 1.21's `Uuid::from_str`, whose
/// rules and messages later versions changed): 32 hex digits, or the 36-char
/// hyphenated form alone, in braces, or after a lowercase `urn:uuid:`.
struct WireUuid([u8; 16]);

impl<'de> Deserialize<'de> for WireUuid {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct V;
        impl<'de> de::Visitor<'de> for V {
            type Value = WireUuid;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a formatted UUID string")
            }
            fn visit_str<E: de::Error>(self, s: &str) -> std::result::Result<WireUuid, E> {
                parse_uuid(s).map(WireUuid).map_err(E::custom)
            }
        }
        d.deserialize_str(V)
    }
}

fn hex_digits(s: &[u8], out: &mut [u8]) -> Option<()> {
    let nibble = |c: u8| (c as char).to_digit(16).map(|d| d as u8);
    for (i, o) in out.iter_mut().enumerate() {
        *o = (nibble(s[2 * i])? << 4) | nibble(s[2 * i + 1])?;
    }
    Some(())
}

fn parse_hyphenated(s: &[u8]) -> Option<[u8; 16]> {
    if s.len() != 36 || [8, 13, 18, 23].iter().any(|&i| s[i] != b'-') {
        return None;
    }
    let mut bytes = [0u8; 16];
    let mut out = 0;
    for (start, len) in [(0, 4), (9, 2), (14, 2), (19, 2), (24, 6)] {
        hex_digits(&s[start..start + 2 * len], &mut bytes[out..out + len])?;
        out += len;
    }
    Some(bytes)
}

fn parse_uuid_bytes(b: &[u8]) -> Option<[u8; 16]> {
    match b.len() {
        32 => {
            let mut bytes = [0u8; 16];
            hex_digits(b, &mut bytes).map(|()| bytes)
        }
        36 => parse_hyphenated(b),
        38 if b[0] == b'{' && b[37] == b'}' => parse_hyphenated(&b[1..37]),
        45 if b.starts_with(b"urn:uuid:") => parse_hyphenated(&b[9..]),
        _ => None,
    }
}

/// Why `s` is not a UUID, in `uuid` 1.21's words.
fn uuid_error(s: &str) -> String {
    let (inner, offset, simple) = if s.len() >= 2 && s.starts_with('{') && s.ends_with('}') {
        (&s[1..s.len() - 1], 1, false)
    } else if let Some(rest) = s.strip_prefix("urn:uuid:") {
        (rest, 9, false)
    } else {
        (s, 0, true)
    };
    let mut hyphens = Vec::new();
    for (i, c) in inner.char_indices() {
        if c == '-' {
            hyphens.push(i);
        } else if !c.is_ascii_hexdigit() {
            return format!(
                "invalid character: expected an optional prefix of `urn:uuid:` followed by [0-9a-fA-F-], found `{c}` at {}",
                i + offset + 1
            );
        }
    }
    if hyphens.is_empty() && simple {
        return format!("invalid length: expected length 32 for simple format, found {}", s.len());
    }
    if hyphens.len() != 4 {
        return format!("invalid group count: expected 5, found {}", hyphens.len() + 1);
    }
    const STARTS: [usize; 5] = [0, 9, 14, 19, 24];
    const LENGTHS: [usize; 5] = [8, 4, 4, 4, 12];
    for g in 0..4 {
        if hyphens[g] != STARTS[g + 1] - 1 {
            return format!("invalid group length in group {g}: expected {}, found {}", LENGTHS[g], hyphens[g].wrapping_sub(STARTS[g]));
        }
    }
    format!("invalid group length in group 4: expected 12, found {}", s.len().saturating_sub(STARTS[4]))
}

fn parse_uuid(s: &str) -> std::result::Result<[u8; 16], String> {
    parse_uuid_bytes(s.as_bytes()).ok_or_else(|| format!("UUID parsing failed: {}", uuid_error(s)))
}

fn uuid_text(bytes: &[u8; 16]) -> String {
    crate::tether::Uuid(*bytes).to_string()
}

mod wire {
    use super::{WireKind, WireUuid};
    use serde_json::value::RawValue;

    /// The wire shape, as upstream's `Envelope` derives it (its name is in
    /// serde's messages: "expected struct Envelope").
    #[derive(serde::Deserialize)]
    pub(super) struct Envelope<'a> {
        pub id: WireUuid,
        pub kind: WireKind,
        #[serde(rename = "ref", default)]
        pub ref_id: Option<WireUuid>,
        #[serde(borrow)]
        pub payload: &'a RawValue,
        #[serde(default)]
        #[allow(dead_code)]
        pub from: Option<String>,
        #[serde(default)]
        #[allow(dead_code)]
        pub to: Option<String>,
    }
}

/// A serde_json error: its message without the position, and the byte offset.
fn serde_error(e: serde_json::Error, data: &[u8]) -> Error {
    let text = e.to_string();
    let suffix = format!(" at line {} column {}", e.line(), e.column());
    let message = text.strip_suffix(&suffix).unwrap_or(&text).to_owned();
    if e.line() == 0 {
        return invalid(message);
    }
    let mut start = 0;
    for _ in 1..e.line() {
        match memchr::memchr(b'\n', &data[start..]) {
            Some(i) => start += i + 1,
            None => break,
        }
    }
    invalid(message).at((start + e.column().saturating_sub(1)).min(data.len()))
}

fn check_size(n: usize) -> Result<()> {
    if n > MAX_MESSAGE_SIZE {
        return Err(invalid(format!("message size {n} exceeds maximum {MAX_MESSAGE_SIZE}")));
    }
    Ok(())
}

/// Read an envelope as upstream's `decode` does (size, then shape), without
/// `validate`: what the transport does first, to answer an unknown kind on a
/// bidirectional stream before it validates.
pub fn parse(data: &[u8]) -> Result<Envelope> {
    check_size(data.len())?;
    let wire: wire::Envelope<'_> = serde_json::from_slice(data).map_err(|e| serde_error(e, data))?;
    Ok(Envelope {
        id: uuid_text(&wire.id.0),
        kind: wire.kind.0,
        ref_id: wire.ref_id.map(|r| uuid_text(&r.0)),
        payload: wire.payload.get().to_owned(),
    })
}

/// Decode and validate one message (upstream's `decode` then `validate`).
pub fn decode(data: &[u8]) -> Result<Envelope> {
    let env = parse(data)?;
    env.validate()?;
    Ok(env)
}

// ---------------------------------------------------------------- encode

fn write_str(out: &mut Vec<u8>, s: &str) {
    // serde_json writes a str as JSON text; into a Vec it cannot fail.
    let _ = serde_json::to_writer(&mut *out, s);
}

/// Encode an envelope for the wire: validated first (a UUID v4 id, a `ref`
/// that is a UUID, a payload that is one JSON object), ids written lowercase
/// with hyphens; more than [`MAX_MESSAGE_SIZE`] bytes is an error.
pub fn encode(env: &Envelope) -> Result<Vec<u8>> {
    env.validate()?;
    let id = parse_uuid(&env.id).map_err(invalid)?;
    let ref_id = match &env.ref_id {
        Some(r) => Some(parse_uuid(r).map_err(|e| invalid(format!("ref: {e}")))?),
        None => None,
    };
    let payload: &RawValue = serde_json::from_str(&env.payload).map_err(|e| serde_error(e, env.payload.as_bytes()).shifted(0))?;
    let mut out = Vec::with_capacity(env.payload.len() + env.kind.len() + 100);
    out.extend_from_slice(b"{\"id\":\"");
    out.extend_from_slice(uuid_text(&id).as_bytes());
    out.extend_from_slice(b"\",\"kind\":");
    write_str(&mut out, &env.kind);
    if let Some(r) = ref_id {
        out.extend_from_slice(b",\"ref\":\"");
        out.extend_from_slice(uuid_text(&r).as_bytes());
        out.push(b'"');
    }
    out.extend_from_slice(b",\"payload\":");
    out.extend_from_slice(payload.get().as_bytes());
    out.push(b'}');
    check_size(out.len())?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const ID: &str = "6fc0ec4f-e59f-4bea-9d57-0d9fdd1108f1";

    fn msg(e: Error) -> String {
        e.message().to_owned()
    }

    #[test]
    fn upstream_shapes() {
        let ok = decode(format!(r#"{{"id":"{ID}","kind":"message","payload":{{}}}}"#).as_bytes()).unwrap();
        assert_eq!((ok.kind.as_str(), ok.ref_id.as_deref(), ok.payload.as_str()), ("message", None, "{}"));
        // Unknown fields, from/to (ignored), ref null, other UUID spellings.
        let e = decode(
            br#"{"id":"{6FC0EC4F-E59F-4BEA-9D57-0D9FDD1108F1}","kind":"future_kind_v99","ref":null,
                "from":"x","to":null,"extra_field":[1],"payload": {"a":1} }"#,
        )
        .unwrap();
        assert_eq!((e.id.as_str(), e.kind.as_str(), e.payload.as_str()), (ID, "future_kind_v99", r#"{"a":1}"#));
        let urn = decode(br#"{"id":"urn:uuid:6fc0ec4f-e59f-4bea-9d57-0d9fdd1108f1","kind":"request","payload":{}}"#).unwrap();
        assert_eq!(urn.id, ID);
        assert!(decode(br#"{"id":"URN:uuid:6fc0ec4f-e59f-4bea-9d57-0d9fdd1108f1","kind":"request","payload":{}}"#).is_err());
        let simple = decode(br#"{"id":"6FC0EC4FE59F4BEA9D570D9FDD1108F1","kind":"request","payload":{}}"#).unwrap();
        assert_eq!(simple.id, ID);
        // serde's other forms: a one-key object kind, the fields as an array.
        assert_eq!(decode(format!(r#"{{"id":"{ID}","kind":{{"request":null}},"payload":{{}}}}"#).as_bytes()).unwrap().kind, "request");
        assert_eq!(decode(format!(r#"["{ID}","error","{ID}",{{}}]"#).as_bytes()).unwrap().ref_id.as_deref(), Some(ID));
        // Errors, upstream's text.
        assert_eq!(msg(decode(b"").unwrap_err()), "EOF while parsing a value");
        assert_eq!(msg(decode(b"this is not json{{{").unwrap_err()), "expected ident");
        assert_eq!(msg(decode(br#"{"id":"550e8400-e29b-41d4-a716-446655440000"}"#).unwrap_err()), "missing field `kind`");
        assert_eq!(msg(decode(br#"{"id":"550e8400-e29b-41d4-a716-446655440000","kind":123,"payload":{}}"#).unwrap_err()), "expected value");
        let dup = decode(format!(r#"{{"id":"{ID}","id":"{ID}","kind":"message","payload":{{}}}}"#).as_bytes());
        assert_eq!(msg(dup.unwrap_err()), "duplicate field `id`");
        assert!(decode(format!(r#"{{"id":"{ID}","kind":"message","payload":{{}},"from":5}}"#).as_bytes()).is_err());
        let nil = format!(r#"{{"id":"{}","kind":"message","payload":{{}}}}"#, "00000000-0000-0000-0000-000000000000");
        assert_eq!(msg(decode(nil.as_bytes()).unwrap_err()), "message id must be non-nil");
        let v1 = r#"{"id":"f81d4fae-7dec-11d0-a765-00a0c91e6bf6","kind":"message","payload":{}}"#;
        assert_eq!(msg(decode(v1.as_bytes()).unwrap_err()), "message id must be UUID v4");
        let arr = format!(r#"{{"id":"{ID}","kind":"message","payload":[1,2,3]}}"#);
        assert!(parse(arr.as_bytes()).is_ok());
        assert_eq!(msg(decode(arr.as_bytes()).unwrap_err()), "payload must be a JSON object");
        let e = decode(br#"{"id":"nope","kind":"message","payload":{}}"#).unwrap_err();
        assert!(msg(e.clone()).starts_with("UUID parsing failed: "), "{e}");
        assert_eq!(e.offset(), Some(11));
    }

    #[test]
    fn size_limits() {
        let head = format!(r#"{{"id":"{ID}","kind":"message","payload":{{"data":""#);
        let fill = MAX_MESSAGE_SIZE - head.len() - 3;
        let exact = format!("{head}{}\"}}}}", "a".repeat(fill));
        assert_eq!(exact.len(), MAX_MESSAGE_SIZE);
        let env = decode(exact.as_bytes()).unwrap();
        assert_eq!(encode(&env).unwrap(), exact.as_bytes());
        let over = format!("{head}{}\"}}}}", "a".repeat(fill + 1));
        assert_eq!(msg(decode(over.as_bytes()).unwrap_err()), "message size 65537 exceeds maximum 65536");
        let big = Envelope { payload: format!(r#"{{"data":"{}"}}"#, "x".repeat(65_536)), ..env };
        assert!(msg(encode(&big).unwrap_err()).starts_with("message size "));
    }

    #[test]
    fn builders_and_encode() {
        let mut p = Map::new();
        p.insert("question".into(), Value::String("hello".into()));
        let req = request(&p);
        assert_eq!(parse_uuid(&req.id).unwrap()[6] >> 4, 4);
        let bytes = encode(&req).unwrap();
        assert_eq!(
            String::from_utf8(bytes.clone()).unwrap(),
            format!(r#"{{"id":"{}","kind":"request","payload":{{"question":"hello"}}}}"#, req.id)
        );
        assert_eq!(decode(&bytes).unwrap(), req);
        let err = error_to(&req, "unhandled", "no", false);
        let text = String::from_utf8(encode(&err).unwrap()).unwrap();
        assert!(
            text.ends_with(&format!(
                r#","kind":"error","ref":"{}","payload":{{"code":"unhandled","message":"no","retryable":false}}}}"#,
                req.id
            )),
            "{text}"
        );
        assert_eq!(response_to(&req, &p).ref_id.as_deref(), Some(req.id.as_str()));
        let bad = Envelope { payload: "{".into(), ..req.clone() };
        assert!(encode(&bad).is_err());
        let not_v4 = Envelope { id: "f81d4fae-7dec-11d0-a765-00a0c91e6bf6".into(), ..req };
        assert_eq!(msg(encode(&not_v4).unwrap_err()), "message id must be UUID v4");
    }
}

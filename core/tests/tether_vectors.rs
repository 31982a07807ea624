//! Runs the shared vectors in `vectors/tether.json` (also run by the Python
//! and Node tests).

use polywire::tether::{self, Answer, MessageSend, Options, Text, Uuid, Value};
use serde_json::Value as J;

fn vectors() -> J {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../vectors/tether.json");
    serde_json::from_slice(&std::fs::read(path).expect("vectors/tether.json")).expect("valid JSON")
}

fn unhex(s: &str) -> Vec<u8> {
    tether::from_hex_bytes(s).expect("vector hex")
}

/// The typed-value notation of the vectors file.
fn typed(v: &J) -> polywire::Result<Value> {
    let (k, x) = v.as_object().and_then(|o| o.iter().next()).expect("typed value");
    Ok(match k.as_str() {
        "int" => Value::integer(x.as_i64().expect("int") as i128)?,
        "bool" => Value::Bool(x.as_bool().expect("bool")),
        "nil" => Value::Nil,
        "symbol" => Value::Symbol(x.as_str().expect("symbol").into()),
        "string" => Value::String(x.as_str().expect("string").into()),
        "bytes" => Value::ByteArray(unhex(x.as_str().expect("bytes"))),
        "array" => Value::Array(x.as_array().expect("array").iter().map(typed).collect::<Result<_, _>>()?),
        "uuid" => Value::Uuid(Uuid::parse(x.as_str().expect("uuid")).expect("uuid text")),
        "proxy" => Value::Proxy(x.as_u64().expect("proxy") as u32),
        other => panic!("unknown typed value {other}"),
    })
}

fn opts(v: &J) -> Options {
    match v.get("text").and_then(J::as_str) {
        Some("latin1") => Options::latin1(),
        Some("utf8") | None => Options::default(),
        Some(other) => panic!("unknown text option {other}"),
    }
}

fn name(v: &J) -> String {
    v.get("name").map_or_else(|| v.to_string(), |n| n.as_str().unwrap_or("").to_string())
}

#[test]
fn values_encode_and_decode() {
    let doc = vectors();
    let list = doc["values"].as_array().unwrap();
    assert!(list.len() >= 30);
    for v in list {
        let o = opts(v);
        let value = typed(&v["value"]).unwrap();
        let bytes = unhex(v["hex"].as_str().unwrap());
        assert_eq!(tether::encode_with(&value, &o).unwrap(), bytes, "encode {}", name(v));
        assert_eq!(tether::decode_with(&bytes, &o).unwrap(), value, "decode {}", name(v));
        assert_eq!(tether::to_hex(&bytes), v["hex"].as_str().unwrap());
        // ASCII text is the same in both text forms; other text is not.
        let other = Options { text: if o.text == Text::Utf8 { Text::Latin1 } else { Text::Utf8 }, ..o };
        let ascii = !v["hex"].as_str().unwrap().is_empty() && !format!("{:?}", value).chars().any(|c| !c.is_ascii());
        if ascii {
            assert_eq!(tether::decode_with(&bytes, &other).unwrap(), value, "{} in the other text form", name(v));
        } else {
            assert_ne!(tether::decode_with(&bytes, &other).ok(), Some(value.clone()), "{}", name(v));
        }
    }
}

#[test]
fn message_sends() {
    let doc = vectors();
    for v in doc["message_sends"].as_array().unwrap() {
        let o = opts(v);
        let send = MessageSend {
            uuid: Uuid::parse(v["uuid"].as_str().unwrap()).unwrap(),
            receiver: v["receiver"].as_u64().unwrap() as u32,
            selector: v["selector"].as_str().unwrap().into(),
            arguments: v["arguments"].as_array().unwrap().iter().map(|a| typed(a).unwrap()).collect(),
        };
        let bytes = unhex(v["hex"].as_str().unwrap());
        assert_eq!(tether::decode_message_send_with(&bytes, &o).unwrap(), send, "decode {}", name(v));
        let encoded = tether::encode_message_send_with(&send, &o).unwrap();
        if v["encode"].as_bool().unwrap() {
            assert_eq!(encoded, bytes, "encode {}", name(v));
        } else {
            assert_ne!(encoded, bytes, "{} is decode-only", name(v));
            assert_eq!(tether::decode_message_send_with(&encoded, &o).unwrap(), send);
        }
        assert_eq!(tether::decode_frame(&bytes, &o).unwrap(), tether::Frame::MessageSend(send));
    }
}

#[test]
fn answers() {
    let doc = vectors();
    for v in doc["answers"].as_array().unwrap() {
        let o = opts(v);
        let answer = Answer { uuid: v["uuid"].as_str().map(|u| Uuid::parse(u).unwrap()), result: typed(&v["result"]).unwrap() };
        let bytes = unhex(v["hex"].as_str().unwrap());
        assert_eq!(tether::decode_answer_with(&bytes, &o).unwrap(), answer, "decode {}", name(v));
        assert_eq!(tether::encode_answer_with(&answer.result, answer.uuid, &o).unwrap(), bytes, "encode {}", name(v));
    }
}

#[test]
fn handshakes() {
    let doc = vectors();
    for v in doc["handshakes"].as_array().unwrap() {
        let hash = v["exposure_hash"].as_u64().unwrap() as u32;
        let bytes = unhex(v["hex"].as_str().unwrap());
        assert_eq!(tether::encode_handshake(hash).unwrap().to_vec(), bytes);
        assert_eq!(tether::decode_handshake(&bytes).unwrap(), hash);
        assert_eq!(tether::decode_frame(&bytes, &Options::default()).unwrap(), tether::Frame::Handshake(hash));
    }
}

#[test]
fn tool_helpers() {
    let doc = vectors();
    for v in doc["tool_arguments"].as_array().unwrap() {
        let receiver = typed(&v["receiver"]).unwrap();
        let args: Vec<Value> = v["arguments"].as_array().unwrap().iter().map(|a| typed(a).unwrap()).collect();
        let t = tether::tool_arguments(&receiver, v["selector"].as_str().unwrap(), &args, &Options::default()).unwrap();
        assert_eq!(String::from_utf8(t.to_json()).unwrap(), v["json"].as_str().unwrap(), "{}", name(v));
    }
    for v in doc["tool_results"].as_array().unwrap() {
        let got = tether::read_tool_result(v["json"].as_str().unwrap().as_bytes(), &Options::default()).unwrap();
        assert_eq!(got, typed(&v["result"]).unwrap(), "{}", name(v));
    }
    for v in doc["hex"].as_array().unwrap() {
        let bytes = tether::from_hex(v["hex"].as_str().unwrap()).unwrap();
        assert_eq!(tether::to_hex(&bytes), v["bytes"].as_str().unwrap());
    }
}

#[test]
fn errors() {
    let doc = vectors();
    let list = doc["errors"].as_array().unwrap();
    assert!(list.len() >= 30);
    for v in list {
        let o = opts(v);
        let input = &v["input"];
        let text = || input.as_str().unwrap();
        let result: polywire::Result<()> = match v["op"].as_str().unwrap() {
            "encode" => typed(input).and_then(|x| tether::encode_with(&x, &o)).map(drop),
            "decode" => tether::decode_with(&unhex(text()), &o).map(drop),
            "decode_answer" => tether::decode_answer_with(&unhex(text()), &o).map(drop),
            "decode_message_send" => tether::decode_message_send_with(&unhex(text()), &o).map(drop),
            "decode_handshake" => tether::decode_handshake(&unhex(text())).map(drop),
            "from_hex" => tether::from_hex(text()).map(drop),
            "from_hex_bytes" => tether::from_hex_bytes(text()).map(drop),
            "read_tool_result" => tether::read_tool_result(text().as_bytes(), &o).map(drop),
            other => panic!("unknown op {other}"),
        };
        let e = result.expect_err(&name(v));
        assert_eq!(e.code(), v["code"].as_str().unwrap(), "{}: {e}", name(v));
        assert_eq!(e.offset(), v["offset"].as_u64().map(|o| o as usize), "{}: {e}", name(v));
        assert_eq!(e.format(), polywire::Format::Tether);
        if let Some(p) = v.get("message_starts_with").and_then(J::as_str) {
            assert!(e.message().starts_with(p), "{}: {e}", name(v));
        }
        if let Some(p) = v.get("message_contains").and_then(J::as_str) {
            assert!(e.message().contains(p), "{}: {e}", name(v));
        }
    }
}

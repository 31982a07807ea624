//! The shared Kado vectors (vectors/kado.json, bytes produced by the upstream
//! TypeScript and Python code) run against the core codec.

use polywire::kado::{self, FrameDecoder, MessageType};
use serde_json::Value;

fn vectors() -> Value {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../vectors/kado.json");
    serde_json::from_str(&std::fs::read_to_string(path).expect("vectors/kado.json")).expect("valid JSON")
}

fn hex(s: &str) -> Vec<u8> {
    (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).expect("hex")).collect()
}

/// The payload a vector describes (encoder input, decoder output), expanding
/// `payload_gen`.
fn payload_of(v: &Value) -> (Value, Value) {
    if let Some(gen) = v.get("payload_gen") {
        let value = match gen["kind"].as_str().unwrap() {
            "repeat" => {
                let text = gen["unit"].as_str().unwrap().repeat(gen["count"].as_u64().unwrap() as usize);
                serde_json::json!({ gen["key"].as_str().unwrap(): text })
            }
            "nested_arrays" => {
                let depth = gen["depth"].as_u64().unwrap() as usize;
                let text = format!("{}{}", "[".repeat(depth), "]".repeat(depth));
                polywire::json::parse(text.as_bytes(), Default::default()).unwrap()
            }
            other => panic!("unknown payload_gen kind {other}"),
        };
        (value.clone(), value)
    } else {
        (v["payload"].clone(), v["decoded"].clone())
    }
}

/// Numbers compared by value (1 == 1.0), everything else structurally.
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => x.len() == y.len() && x.iter().zip(y).all(|(p, q)| same(p, q)),
        (Value::Object(x), Value::Object(y)) => x.len() == y.len() && x.iter().all(|(k, p)| y.get(k).is_some_and(|q| same(p, q))),
        _ => a == b,
    }
}

#[test]
fn frames_encode_byte_identical_to_upstream_typescript() {
    let v = vectors();
    for f in v["frames"].as_array().unwrap() {
        let name = f["name"].as_str().unwrap();
        let (input, decoded) = payload_of(f);
        let t = MessageType::from_u8(f["type"].as_u64().unwrap() as u8).unwrap();
        let bytes = kado::encode(t, &input, f["sequence_id"].as_u64().unwrap() as u32, f["timestamp"].as_u64().unwrap()).unwrap();
        assert_eq!(bytes, hex(f["frame"].as_str().unwrap()), "encode {name}");
        let m = kado::decode(&bytes).unwrap();
        assert!(same(&m.payload, &decoded), "decode {name}");
        assert_eq!(m.header.sequence_id as u64, f["sequence_id"].as_u64().unwrap());
        assert_eq!(kado::is_compressed(&bytes[kado::HEADER_SIZE..]), f["compressed"].as_bool().unwrap(), "{name}");
    }
}

#[test]
fn frames_from_upstream_python_decode() {
    let v = vectors();
    for f in v["python_frames"].as_array().unwrap() {
        let name = f["name"].as_str().unwrap();
        let m = kado::decode(&hex(f["frame"].as_str().unwrap())).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(same(&m.payload, &f["payload"]), "{name}: {}", m.payload);
        assert_eq!(m.header.msg_type as u64, f["type"].as_u64().unwrap());
    }
}

#[test]
fn rle_matches_upstream() {
    let v = vectors();
    for r in v["rle"].as_array().unwrap() {
        let name = r["name"].as_str().unwrap();
        let input = hex(r["input"].as_str().unwrap());
        let expected = hex(r["compressed"].as_str().unwrap());
        assert_eq!(kado::compress(&input).as_ref(), &expected[..], "compress {name}");
        assert_eq!(kado::decompress(&expected).unwrap().as_ref(), &input[..], "decompress {name}");
    }
}

#[test]
fn error_vectors_report_code_and_offset() {
    let v = vectors();
    for e in v["errors"].as_array().unwrap() {
        let name = e["name"].as_str().unwrap();
        let err = kado::decode(&hex(e["frame"].as_str().unwrap())).expect_err(name);
        assert_eq!(err.code(), e["code"].as_str().unwrap(), "{name}: {err}");
        assert_eq!(err.offset(), Some(e["offset"].as_u64().unwrap() as usize), "{name}: {err}");
    }
    for e in v["rle_errors"].as_array().unwrap() {
        let name = e["name"].as_str().unwrap();
        let err = kado::decompress(&hex(e["input"].as_str().unwrap())).expect_err(name);
        assert_eq!(err.code(), e["code"].as_str().unwrap(), "{name}: {err}");
        assert_eq!(err.offset(), Some(e["offset"].as_u64().unwrap() as usize), "{name}: {err}");
    }
}

#[test]
fn stream_of_all_vector_frames_in_odd_chunks() {
    let v = vectors();
    let frames: Vec<Vec<u8>> = v["frames"].as_array().unwrap().iter().map(|f| hex(f["frame"].as_str().unwrap())).collect();
    let stream = frames.concat();
    for chunk in [1usize, 7, 18, 1000, stream.len()] {
        let mut d = FrameDecoder::new();
        let mut got = Vec::new();
        for c in stream.chunks(chunk) {
            d.push(c);
            while let Some(f) = d.next_frame().unwrap() {
                got.push(f);
            }
        }
        d.finish().unwrap();
        assert_eq!(got.len(), frames.len(), "chunk size {chunk}");
        let mut offset = 0u64;
        for (f, wire) in got.iter().zip(&frames) {
            assert_eq!(f.offset, offset);
            let (h, p) = kado::decode_raw(wire).unwrap();
            assert_eq!((f.header, &f.payload[..]), (h, p.as_ref()));
            offset += wire.len() as u64;
        }
    }
}

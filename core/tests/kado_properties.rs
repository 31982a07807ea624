//! Property tests: encode then decode is the identity on JSON values;
//! compress then decompress is the identity on bytes; the decoders never
//! panic on arbitrary input, and a stream split anywhere decodes the same.

use polywire::kado::{self, FrameDecoder, MessageType};
use proptest::prelude::*;
use serde_json::Value;

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        (-1e300f64..1e300).prop_map(Value::from),
        ".*".prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 64, 8, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..8).prop_map(Value::Array),
            prop::collection::vec(("[a-z0-9]{0,6}", inner), 0..8).prop_map(|kv| Value::Object(kv.into_iter().collect())),
        ]
    })
}

fn num_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => x.len() == y.len() && x.iter().zip(y).all(|(p, q)| num_eq(p, q)),
        (Value::Object(x), Value::Object(y)) => x.len() == y.len() && x.iter().all(|(k, p)| y.get(k).is_some_and(|q| num_eq(p, q))),
        _ => a == b,
    }
}

proptest! {
    #[test]
    fn encode_decode_identity(v in json_value(), t in 1u8..=8, seq in any::<u32>(), ts in any::<u64>()) {
        let f = kado::encode(MessageType::from_u8(t).unwrap(), &v, seq, ts).unwrap();
        let m = kado::decode(&f).unwrap();
        prop_assert!(num_eq(&m.payload, &v));
        prop_assert_eq!((m.header.msg_type, m.header.sequence_id, m.header.timestamp), (t, seq, ts));
    }

    #[test]
    fn compress_decompress_identity(data in prop::collection::vec(prop_oneof![Just(0u8), Just(0xff), any::<u8>()], 0..4000)) {
        let c = kado::compress(&data);
        prop_assert!(c.len() <= data.len());
        let d = kado::decompress(&c).unwrap_or_else(|_| c.clone());
        // Uncompressed data that happens to start with the magic byte is
        // ambiguous by design of the format (a JSON payload never starts
        // with 'Z'); everything else comes back whole.
        if !(kado::is_compressed(&data) && c.as_ref() == &data[..]) {
            prop_assert_eq!(d.as_ref(), &data[..]);
        }
    }

    #[test]
    fn decoders_never_panic(data in prop::collection::vec(any::<u8>(), 0..300)) {
        let _ = kado::decode(&data);
        let _ = kado::decompress(&data);
        let mut d = FrameDecoder::with_max_frame_size(1 << 16);
        d.push(&data);
        while let Ok(Some(_)) = d.next_frame() {}
    }

    #[test]
    fn stream_split_anywhere(values in prop::collection::vec(json_value(), 1..5), cut in any::<prop::sample::Index>()) {
        let frames: Vec<Vec<u8>> = values.iter().enumerate()
            .map(|(i, v)| kado::encode(MessageType::Status, v, i as u32, 0).unwrap()).collect();
        let stream = frames.concat();
        let at = cut.index(stream.len() + 1);
        let mut d = FrameDecoder::new();
        let mut n = 0;
        for part in [&stream[..at], &stream[at..]] {
            d.push(part);
            while let Some(f) = d.next_frame().unwrap() {
                prop_assert_eq!(f.header.sequence_id as usize, n);
                n += 1;
            }
        }
        prop_assert_eq!(n, frames.len());
    }
}

/// The upstream `simpleRLEEncode` loop, transcribed literally from
/// compression.ts, as the reference for the faster encoder in the core.
fn upstream_rle_encode(data: &[u8]) -> Vec<u8> {
    let mut result = Vec::new();
    let mut i = 0;
    while i < data.len() {
        let byte = data[i];
        let mut count = 1;
        while i + count < data.len() && data[i + count] == byte && count < 255 {
            count += 1;
        }
        if count > 3 || byte == 0xff {
            result.extend_from_slice(&[0xff, byte, count as u8]);
        } else {
            for _ in 0..count {
                result.push(byte);
            }
        }
        i += count;
    }
    result
}

proptest! {
    #[test]
    fn rle_encoder_equals_upstream_loop(data in prop::collection::vec(prop_oneof![Just(b'a'), Just(0xff), Just(b' '), any::<u8>()], 0..2000)) {
        let mut ours = Vec::new();
        kado::rle_encode_into(&data, &mut ours);
        prop_assert_eq!(ours, upstream_rle_encode(&data));
    }
}

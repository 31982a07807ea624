//! Nesting bounded by `max_depth` and memory, never by the native stack:
//! every case runs on a thread with a 256 KiB stack, where the old recursive
//! decoder, encoder and derived drop overflowed within a few thousand levels.

use polywire::tether::{self, Options, Value};

const LEVELS: usize = 1_000_000;
const SMALL_STACK: usize = 256 * 1024;

fn on_small_stack<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    std::thread::Builder::new().stack_size(SMALL_STACK).spawn(f).expect("spawn").join().expect("no overflow or panic")
}

/// `levels` Arrays of one element around `inner`, as Tether bytes.
fn nested_bytes(levels: usize, inner: &[u8]) -> Vec<u8> {
    let mut b = Vec::with_capacity(levels * 8 + inner.len());
    for _ in 0..levels {
        b.extend_from_slice(&tether::ARRAY_TAG.to_be_bytes());
        b.extend_from_slice(&1u32.to_be_bytes());
    }
    b.extend_from_slice(inner);
    b
}

fn nested_value(levels: usize) -> Value {
    let mut v = Value::SmallInteger(7);
    for _ in 0..levels {
        v = Value::Array(vec![v]);
    }
    v
}

fn depth_of(mut v: &Value) -> usize {
    let mut d = 0;
    while let Value::Array(items) = v {
        d += 1;
        match items.first() {
            Some(x) => v = x,
            None => break,
        }
    }
    d
}

#[test]
fn million_levels_decode_and_encode_with_raised_limit() {
    on_small_stack(|| {
        let bytes = nested_bytes(LEVELS, &0x4000_0007u32.to_be_bytes());
        let opts = Options { max_depth: LEVELS, ..Options::default() };
        let v = tether::decode_with(&bytes, &opts).expect("decodes");
        assert_eq!(depth_of(&v), LEVELS);
        assert_eq!(tether::encode_with(&v, &opts).expect("encodes"), bytes);
        let (v2, used) = tether::decode_prefix(&bytes, &opts).expect("prefix");
        assert_eq!(used, bytes.len());
        drop(v2);
        // One level short of the limit: a typed error, both ways.
        let tight = Options { max_depth: LEVELS - 1, ..Options::default() };
        assert_eq!(tether::decode_with(&bytes, &tight).unwrap_err().code(), "TETHER_TOO_DEEP");
        assert_eq!(tether::encode_with(&v, &tight).unwrap_err().code(), "TETHER_TOO_DEEP");
        drop(v);
    });
}

#[test]
fn million_levels_in_frames() {
    on_small_stack(|| {
        let opts = Options { max_depth: LEVELS + 1, ..Options::default() };
        let mut answer = tether::ANSWER_TAG.to_be_bytes().to_vec();
        answer.extend(nested_bytes(LEVELS, &tether::NIL_TAG.to_be_bytes()));
        let a = tether::decode_answer_with(&answer, &opts).expect("answer");
        assert_eq!(depth_of(&a.result), LEVELS);
        assert_eq!(tether::encode_answer_with(&a.result, None, &opts).unwrap(), answer);
        let send = tether::MessageSend::new(1, "x:", vec![nested_value(LEVELS - 1)]);
        let b = tether::encode_message_send_with(&send, &opts).expect("send");
        let back = tether::decode_message_send_with(&b, &opts).expect("decode send");
        assert_eq!(depth_of(&back.arguments[0]), LEVELS - 1);
        let hex = tether::to_hex(&answer);
        let r = tether::decode_result_hex(&hex, &opts).expect("hex");
        assert_eq!(depth_of(&r), LEVELS);
    });
}

#[test]
fn deep_value_drops_and_errors_without_recursion() {
    on_small_stack(|| {
        // Built and dropped without ever encoding.
        drop(nested_value(LEVELS));
        // A deep, complete first element, then truncated input: the error
        // path drops the partial tree.
        let mut b = vec![];
        b.extend_from_slice(&tether::ARRAY_TAG.to_be_bytes());
        b.extend_from_slice(&2u32.to_be_bytes());
        b.extend(nested_bytes(LEVELS, &tether::NIL_TAG.to_be_bytes()));
        b.extend_from_slice(&[0x40, 0]);
        let opts = Options { max_depth: LEVELS + 1, ..Options::default() };
        assert_eq!(tether::decode_with(&b, &opts).unwrap_err().code(), "TETHER_TRUNCATED");
        // Wide and deep together.
        let mut v = Value::Array((0..1000).map(|_| Value::Nil).collect());
        for _ in 0..(LEVELS / 2) {
            v = Value::Array(vec![Value::Nil, v, Value::Array(vec![Value::Nil])]);
        }
        let opts = Options { max_depth: LEVELS, ..Options::default() };
        let enc = tether::encode_with(&v, &opts).unwrap();
        let back = tether::decode_with(&enc, &opts).unwrap();
        assert_eq!(tether::encode_with(&back, &opts).unwrap(), enc);
    });
}

#[test]
fn into_array() {
    assert_eq!(Value::Array(vec![Value::Nil]).into_array(), Ok(vec![Value::Nil]));
    assert_eq!(Value::Nil.into_array(), Err(Value::Nil));
}

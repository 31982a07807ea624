//! Property tests: round trips, and no panic on arbitrary input.

use polywire::tether::{self, Answer, MessageSend, Options, Text, Uuid, Value, MAX_EXPOSURE_HASH, MAX_SMALL_INTEGER};
use proptest::prelude::*;

fn latin1_string() -> impl Strategy<Value = String> {
    proptest::collection::vec(0u8..=255, 0..12).prop_map(|b| b.into_iter().map(char::from).collect())
}

fn value(text: Text) -> impl Strategy<Value = Value> {
    let s: BoxedStrategy<String> = match text {
        Text::Utf8 => any::<String>().boxed(),
        Text::Latin1 => latin1_string().boxed(),
    };
    let leaf = prop_oneof![
        (0..=MAX_SMALL_INTEGER).prop_map(Value::SmallInteger),
        any::<bool>().prop_map(Value::Bool),
        Just(Value::Nil),
        s.clone().prop_map(Value::Symbol),
        s.prop_map(Value::String),
        proptest::collection::vec(any::<u8>(), 0..16).prop_map(Value::ByteArray),
        any::<[u8; 16]>().prop_map(|b| Value::Uuid(Uuid(b))),
        (0..=MAX_EXPOSURE_HASH).prop_map(Value::Proxy),
    ];
    leaf.prop_recursive(4, 32, 6, |inner| proptest::collection::vec(inner, 0..6).prop_map(Value::Array))
}

proptest! {
    #[test]
    fn utf8_roundtrip(v in value(Text::Utf8)) {
        let b = tether::encode(&v).unwrap();
        prop_assert_eq!(b.len() % 4 == 0, tether::to_hex(&b).len() % 8 == 0);
        prop_assert_eq!(tether::decode(&b).unwrap(), v.clone());
        let (back, used) = tether::decode_prefix(&b, &Options::default()).unwrap();
        prop_assert_eq!(back, v);
        prop_assert_eq!(used, b.len());
        prop_assert_eq!(tether::from_hex_bytes(&tether::to_hex(&b)).unwrap(), b);
    }

    #[test]
    fn latin1_roundtrip(v in value(Text::Latin1)) {
        let o = Options::latin1();
        let b = tether::encode_with(&v, &o).unwrap();
        prop_assert_eq!(tether::decode_with(&b, &o).unwrap(), v);
    }

    #[test]
    fn frames_roundtrip(
        uuid in any::<[u8; 16]>(),
        receiver in 0..=MAX_EXPOSURE_HASH,
        selector in "[a-zA-Z+*/<>=-][a-zA-Z0-9:]{0,12}",
        arguments in proptest::collection::vec(value(Text::Utf8), 0..4),
        wire in any::<bool>(),
    ) {
        let m = MessageSend { uuid: Uuid(uuid), receiver, selector, arguments };
        let b = tether::encode_message_send(&m).unwrap();
        prop_assert_eq!(tether::decode_message_send(&b).unwrap(), m.clone());
        let result = Value::Array(m.arguments.clone());
        let a = Answer { uuid: wire.then_some(m.uuid), result };
        let b = tether::encode_answer(&a.result, a.uuid).unwrap();
        prop_assert_eq!(tether::decode_answer(&b).unwrap(), a);
    }

    #[test]
    fn arbitrary_bytes_never_panic(b in proptest::collection::vec(any::<u8>(), 0..64)) {
        let o = Options::default();
        let _ = tether::decode(&b);
        let _ = tether::decode_with(&b, &Options::latin1());
        let _ = tether::decode_answer(&b);
        let _ = tether::decode_message_send(&b);
        let _ = tether::decode_handshake(&b);
        let _ = tether::decode_frame(&b, &o);
    }

    #[test]
    fn word_soup_never_panics(words in proptest::collection::vec(prop_oneof![
        Just(0x2000_0008u32), Just(0x2000_0005), Just(0x2000_0004), Just(0x2000_0011), Just(0x2000_001B),
        Just(0x2000_001D), Just(0x2000_0007), Just(0x2000_0021), 0u32..64, 0x4000_0000u32..0x4000_0010,
        any::<u32>(),
    ], 0..24)) {
        let b: Vec<u8> = words.iter().flat_map(|w| w.to_be_bytes()).collect();
        let _ = tether::decode(&b);
        let _ = tether::decode_answer(&b);
        let _ = tether::decode_message_send(&b);
    }

    #[test]
    fn hex_never_panics(s in "\\PC{0,20}") {
        let _ = tether::from_hex(&s);
        let _ = tether::from_hex_bytes(&s);
        let _ = tether::read_tool_result(s.as_bytes(), &Options::default());
    }
}

#[test]
fn deep_nesting_is_bounded() {
    // A million nested Arrays: rejected at the limit, not a stack overflow.
    let mut b = Vec::new();
    for _ in 0..1_000_000 {
        b.extend_from_slice(&0x2000_0008u32.to_be_bytes());
        b.extend_from_slice(&1u32.to_be_bytes());
    }
    b.extend_from_slice(&0x2000_0003u32.to_be_bytes());
    let e = tether::decode(&b).unwrap_err();
    assert_eq!(e.code(), "TETHER_TOO_DEEP");
    assert_eq!(e.offset(), Some(tether::DEFAULT_MAX_DEPTH * 8));
}

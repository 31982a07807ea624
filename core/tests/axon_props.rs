//! Property tests: round trips, and no panic on arbitrary input.

use polywire::axon::{self, DecodeOptions, Envelope, Kind, Session, SessionConfig, StreamType};
use proptest::prelude::*;
use serde_json::{json, Map, Value};

const A: &str = "ed25519.fe812c12f3ab4ce6ac5db69ac352f906";
const B: &str = "ed25519.b600306cfa76723fdec395e53a9b3d9f";

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        (-1e6f64..1e6).prop_map(Value::from),
        "\\PC{0,8}".prop_map(Value::from),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            proptest::collection::btree_map("[a-z_]{1,6}", inner, 0..4).prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// Valid payloads for each kind, with extra unknown fields.
fn envelope() -> impl Strategy<Value = Envelope> {
    (
        0usize..13,
        any::<[u8; 16]>(),
        1u64..u64::MAX,
        proptest::option::of(any::<[u8; 16]>()),
        "\\PC{0,12}",
        json_value(),
        any::<u32>(),
        any::<bool>(),
        proptest::collection::btree_map("x_[a-z]{1,4}", json_value(), 0..3),
    )
        .prop_map(|(k, id, ts, r, text, data, n, flag, extra)| {
            let kind = Kind::ALL[k];
            let mut p: Map<String, Value> = match kind {
                Kind::Hello => json!({"protocol_versions": [1, n % 256], "features": [text]}),
                Kind::Ping | Kind::Discover => json!({}),
                Kind::Pong => json!({"status": "busy", "uptime_secs": ts, "active_tasks": n}),
                Kind::Query => json!({"question": text, "max_tokens": n}),
                Kind::Response => json!({"data": data, "summary": text, "truncated": flag}),
                Kind::Delegate => json!({"task": text, "context": data, "report_back": flag}),
                Kind::Ack => json!({"accepted": flag, "estimated_ms": ts}),
                Kind::Result => json!({"status": "partial", "outcome": text, "data": data}),
                Kind::Notify => json!({"topic": text, "data": data, "importance": "high"}),
                Kind::Cancel => json!({"reason": text}),
                Kind::Capabilities => json!({"tools": [text], "max_concurrent_tasks": n}),
                Kind::Error => json!({"code": "overloaded", "message": text, "retryable": flag}),
            }
            .as_object()
            .cloned()
            .unwrap();
            p.extend(extra);
            Envelope {
                v: 1,
                id: polywire::tether::Uuid(id).to_string(),
                from: A.into(),
                to: B.into(),
                ts,
                kind,
                ref_id: r.map(|r| polywire::tether::Uuid(r).to_string()),
                payload: p,
            }
        })
}

proptest! {
    #[test]
    fn encode_decode_roundtrip(env in envelope()) {
        let bytes = axon::encode(&env).unwrap();
        let raw = DecodeOptions { fill_defaults: false, ..DecodeOptions::default() };
        prop_assert_eq!(axon::decode_with(&bytes, &raw).unwrap(), env.clone());
        let filled = axon::decode(&bytes).unwrap();
        prop_assert_eq!(axon::encode(&axon::decode(&axon::encode(&filled).unwrap()).unwrap()).unwrap(), axon::encode(&filled).unwrap());
        // Another JSON reader sees the same payload, keys sorted as a
        // BTreeMap orders them. (The crate's parser, not serde_json's: its
        // default float parsing can be one ULP off.)
        let reread = polywire::json::parse(&bytes, Default::default()).unwrap();
        prop_assert_eq!(&reread["payload"], &Value::Object(env.payload.clone()));
        let keys: Vec<&String> = reread["payload"].as_object().unwrap().keys().collect();
        let mut sorted = keys.clone();
        sorted.sort();
        prop_assert_eq!(keys, sorted);
    }

    #[test]
    fn arbitrary_bytes_never_panic(b in proptest::collection::vec(any::<u8>(), 0..200)) {
        let _ = axon::decode(&b);
        let mut s = Session::new(SessionConfig::new(B)).unwrap();
        let _ = s.receive(&b, StreamType::Bidirectional, 1);
        let _ = s.receive(&b, StreamType::Unidirectional, 2);
    }

    #[test]
    fn arbitrary_json_never_panics(v in json_value(), kind in 0usize..13) {
        let body = serde_json::to_vec(&json!({"v": 1, "id": "6fc0ec4f-e59f-4bea-9d57-0d9fdd1108f1", "from": A, "to": B,
            "ts": 1, "kind": Kind::ALL[kind].as_str(), "payload": v})).unwrap();
        let _ = axon::decode(&body);
        let _ = axon::encode_value(&v);
        let mut s = Session::new(SessionConfig::new(B)).unwrap();
        let _ = s.receive(&body, StreamType::Bidirectional, 1);
    }
}

//! Property tests of the Kameo codec: round trips of arbitrary messages,
//! values and payloads, and no panics on arbitrary or mutated input.

mod kameo_common;

use polywire::kameo::{
    self as pk, msgpack, ActorId, ActorStopReason, PanicError, PanicReason, PeerId, RemoteSendError, SwarmRequest, SwarmResponse, Value,
};
use proptest::prelude::*;
use std::time::Duration;

fn peer_id() -> impl Strategy<Value = PeerId> {
    prop_oneof![
        any::<[u8; 32]>().prop_map(|k| PeerId::from_ed25519_public_key(&k)),
        proptest::collection::vec(any::<u8>(), 0..=64).prop_map(|d| PeerId::from_multihash(0x12, &d).unwrap()),
        proptest::collection::vec(any::<u8>(), 0..=42).prop_map(|d| PeerId::from_multihash(0, &d).unwrap()),
    ]
}

fn actor_id() -> impl Strategy<Value = ActorId> {
    (any::<u64>(), proptest::option::of(peer_id())).prop_map(|(s, p)| ActorId::new(s, p))
}

fn duration() -> impl Strategy<Value = Option<Duration>> {
    proptest::option::of((any::<u64>(), 0u32..1_000_000_000).prop_map(|(s, n)| Duration::new(s, n)))
}

fn text() -> impl Strategy<Value = String> {
    prop_oneof![".{0,12}", "[a-z_:]{0,40}"]
}

fn stop_reason() -> impl Strategy<Value = ActorStopReason> {
    let leaf = prop_oneof![
        Just(ActorStopReason::Normal),
        Just(ActorStopReason::SupervisorRestart),
        Just(ActorStopReason::Killed),
        Just(ActorStopReason::PeerDisconnected),
        (text(), 0usize..8).prop_map(|(err, r)| ActorStopReason::Panicked(PanicError { err, reason: PanicReason::ALL[r] })),
    ];
    leaf.prop_recursive(8, 16, 1, |inner| (actor_id(), inner).prop_map(|(id, r)| ActorStopReason::LinkDied { id, reason: Box::new(r) }))
}

fn request() -> impl Strategy<Value = SwarmRequest> {
    let payload = || proptest::collection::vec(any::<u8>(), 0..64);
    prop_oneof![
        (actor_id(), text(), text(), payload(), duration(), duration(), any::<bool>()).prop_map(
            |(actor_id, a, m, payload, mt, rt, immediate)| SwarmRequest::Ask {
                actor_id,
                actor_remote_id: a,
                message_remote_id: m,
                payload,
                mailbox_timeout: mt,
                reply_timeout: rt,
                immediate
            }
        ),
        (actor_id(), text(), text(), payload(), duration(), any::<bool>()).prop_map(|(actor_id, a, m, payload, mt, immediate)| {
            SwarmRequest::Tell { actor_id, actor_remote_id: a, message_remote_id: m, payload, mailbox_timeout: mt, immediate }
        }),
        (actor_id(), text(), actor_id(), text()).prop_map(|(actor_id, a, sibling_id, s)| SwarmRequest::Link {
            actor_id,
            actor_remote_id: a,
            sibling_id,
            sibling_remote_id: s
        }),
        (actor_id(), text(), actor_id()).prop_map(|(actor_id, a, sibling_id)| SwarmRequest::Unlink {
            actor_id,
            actor_remote_id: a,
            sibling_id
        }),
        (actor_id(), actor_id(), text(), stop_reason()).prop_map(|(d, n, r, reason)| SwarmRequest::SignalLinkDied {
            dead_actor_id: d,
            notified_actor_id: n,
            notified_actor_remote_id: r,
            stop_reason: reason
        }),
    ]
}

fn send_error<E: std::fmt::Debug + Clone + 'static>(handler: Option<BoxedStrategy<E>>) -> BoxedStrategy<RemoteSendError<E>> {
    let units = prop_oneof![
        Just("ActorNotRunning"),
        Just("ActorStopped"),
        Just("BadActorType"),
        Just("MailboxFull"),
        Just("ReplyTimeout"),
        Just("SwarmNotBootstrapped"),
        Just("DialFailure"),
        Just("NetworkTimeout"),
        Just("ConnectionClosed"),
        Just("UnsupportedProtocols"),
    ]
    .prop_map(|n| RemoteSendError::unit_from_name(n).unwrap());
    let strings = (
        prop_oneof![
            Just("SerializeMessage"),
            Just("DeserializeMessage"),
            Just("SerializeReply"),
            Just("SerializeHandlerError"),
            Just("DeserializeHandlerError")
        ],
        text(),
    )
        .prop_map(|(n, s)| RemoteSendError::string_variant(n).unwrap()(s));
    let structs = prop_oneof![
        text().prop_map(|a| RemoteSendError::UnknownActor { actor_remote_id: a }),
        (text(), text()).prop_map(|(a, m)| RemoteSendError::UnknownMessage { actor_remote_id: a, message_remote_id: m }),
    ];
    match handler {
        Some(h) => prop_oneof![units, strings, structs, h.prop_map(RemoteSendError::HandlerError)].boxed(),
        None => prop_oneof![units, strings, structs].boxed(),
    }
}

fn response() -> impl Strategy<Value = SwarmResponse> {
    let bytes = || proptest::collection::vec(any::<u8>(), 0..64);
    let unit_result = || prop_oneof![Just(Ok(())), send_error(None).prop_map(Err)];
    prop_oneof![
        bytes().prop_map(|b| SwarmResponse::Ask(Ok(b))),
        send_error(Some(bytes().boxed())).prop_map(|e| SwarmResponse::Ask(Err(e))),
        unit_result().prop_map(SwarmResponse::Tell),
        unit_result().prop_map(SwarmResponse::Link),
        unit_result().prop_map(SwarmResponse::Unlink),
        unit_result().prop_map(SwarmResponse::SignalLinkDied),
        send_error(None).prop_map(SwarmResponse::OutboundFailure),
    ]
}

fn value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Nil),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|i| Value::Int(i.into())),
        any::<u64>().prop_map(|i| Value::Int(i.into())),
        any::<f64>().prop_filter("NaN != NaN", |f| !f.is_nan()).prop_map(Value::F64),
        any::<f32>().prop_filter("NaN != NaN", |f| !f.is_nan()).prop_map(Value::F32),
        ".{0,40}".prop_map(Value::Str),
        proptest::collection::vec(any::<u8>(), 0..300).prop_map(Value::Bytes),
    ];
    leaf.prop_recursive(4, 64, 20, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..20).prop_map(Value::Array),
            proptest::collection::vec((inner.clone(), inner), 0..20).prop_map(Value::Map),
        ]
    })
}

/// Flip, overwrite, insert or cut bytes of a valid encoding.
fn mutated(bytes: Vec<u8>) -> impl Strategy<Value = Vec<u8>> {
    let len = bytes.len().max(1);
    proptest::collection::vec((0..len, any::<u8>(), 0u8..4), 1..4).prop_map(move |edits| {
        let mut b = bytes.clone();
        for (i, x, op) in edits {
            let i = i.min(b.len());
            match op {
                0 if i < b.len() => b[i] ^= x,
                1 if i < b.len() => b[i] = x,
                2 => b.insert(i, x),
                _ => b.truncate(i),
            }
        }
        b
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn requests_round_trip(req in request()) {
        let bytes = pk::encode_request(&req);
        // the hand-written writer and serde's derives through cbor4ii agree
        prop_assert_eq!(&pk::paths::encode_request_serde(&req), &bytes);
        prop_assert_eq!(&pk::paths::encode_request_handwritten(&req), &bytes);
        prop_assert_eq!(pk::paths::decode_request_handwritten(&bytes).unwrap(), (req.clone(), bytes.len()));
        prop_assert_eq!(pk::decode_request_prefix(&bytes).unwrap(), (req.clone(), bytes.len()));
        let v = pk::request_to_value(&req);
        prop_assert_eq!(pk::request_from_value(&v).unwrap(), req.clone());
        prop_assert_eq!(pk::encode_request_value(&v).unwrap(), bytes.clone());
        // the value survives MessagePack too (bindings may ship it around)
        prop_assert_eq!(msgpack::unpack(&msgpack::pack(&v).unwrap()).unwrap(), v);
    }

    #[test]
    fn responses_round_trip(resp in response()) {
        let bytes = pk::encode_response(&resp);
        prop_assert_eq!(&pk::paths::encode_response_handwritten(&resp), &bytes);
        prop_assert_eq!(pk::paths::decode_response_handwritten(&bytes).unwrap(), (resp.clone(), bytes.len()));
        prop_assert_eq!(pk::decode_response_prefix(&bytes).unwrap(), (resp.clone(), bytes.len()));
        let v = pk::response_to_value(&resp);
        prop_assert_eq!(pk::response_from_value(&v).unwrap(), resp);
        prop_assert_eq!(pk::encode_response_value(&v).unwrap(), bytes);
    }

    #[test]
    fn mutated_requests_never_panic(bytes in request().prop_map(|r| pk::encode_request(&r)).prop_flat_map(mutated)) {
        // cbor4ii and the hand-written reader (which explains its
        // rejections) judge every input alike
        prop_assert_eq!(
            pk::decode_request_prefix(&bytes).ok(),
            pk::paths::decode_request_handwritten(&bytes).ok()
        );
        if let Ok((req, used)) = pk::decode_request_prefix(&bytes) {
            prop_assert!(used <= bytes.len());
            // a decoded request re-encodes and decodes to itself
            prop_assert_eq!(pk::decode_request(&pk::encode_request(&req)).unwrap(), req);
        }
    }

    #[test]
    fn mutated_responses_never_panic(bytes in response().prop_map(|r| pk::encode_response(&r)).prop_flat_map(mutated)) {
        prop_assert_eq!(
            pk::decode_response_prefix(&bytes).ok(),
            pk::paths::decode_response_handwritten(&bytes).ok()
        );
        if let Ok(resp) = pk::decode_response(&bytes) {
            prop_assert_eq!(pk::decode_response(&pk::encode_response(&resp)).unwrap(), resp);
        }
    }

    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
        prop_assert_eq!(pk::decode_request_prefix(&bytes).ok(), pk::paths::decode_request_handwritten(&bytes).ok());
        prop_assert_eq!(pk::decode_response_prefix(&bytes).ok(), pk::paths::decode_response_handwritten(&bytes).ok());
        let _ = pk::ActorRegistration::from_bytes(&bytes);
        let _ = PeerId::from_bytes(&bytes);
        let _ = ActorId::from_bytes(&bytes);
        let _ = msgpack::unpack(&bytes);
        let _ = pk::parse_metadata_key(&bytes);
    }

    #[test]
    fn registrations_round_trip(id in actor_id(), remote_id in text()) {
        let reg = pk::ActorRegistration::new(id, remote_id);
        prop_assert_eq!(pk::ActorRegistration::from_bytes(&reg.to_bytes()).unwrap(), reg);
    }

    #[test]
    fn mutated_registrations_never_panic(bytes in (actor_id(), text()).prop_map(|(i, r)| pk::ActorRegistration::new(i, r).to_bytes()).prop_flat_map(mutated)) {
        if let Ok(reg) = pk::ActorRegistration::from_bytes(&bytes) {
            prop_assert_eq!(pk::ActorRegistration::from_bytes(&reg.to_bytes()).unwrap(), reg);
        }
    }

    #[test]
    fn peer_ids_round_trip(p in peer_id()) {
        prop_assert_eq!(PeerId::from_bytes(p.as_bytes()).unwrap(), p.clone());
        prop_assert_eq!(PeerId::from_base58(&p.to_base58()).unwrap(), p.clone());
        let key = pk::metadata_key("actor", &p);
        prop_assert_eq!(pk::parse_metadata_key(key.as_bytes()).unwrap(), ("actor".to_owned(), p));
    }

    #[test]
    fn base58_round_trip(bytes in proptest::collection::vec(any::<u8>(), 0..80)) {
        prop_assert_eq!(pk::ids::base58_decode(&pk::ids::base58_encode(&bytes)).unwrap(), bytes);
    }

    #[test]
    fn msgpack_round_trip(v in value()) {
        let bytes = msgpack::pack(&v).unwrap();
        prop_assert_eq!(msgpack::unpack(&bytes).unwrap(), v);
    }

    #[test]
    fn mutated_msgpack_never_panics(bytes in value().prop_map(|v| msgpack::pack(&v).unwrap()).prop_flat_map(mutated)) {
        if let Ok(v) = msgpack::unpack(&bytes) {
            // Compared as bytes: a float NaN is never equal to itself as a value.
            let once = msgpack::pack(&v).unwrap();
            prop_assert_eq!(msgpack::pack(&msgpack::unpack(&once).unwrap()).unwrap(), once);
        }
    }
}

#[test]
fn deep_inputs_are_refused_without_exhausting_the_stack() {
    // 100k nested arrays as an unknown field, as a payload and as MessagePack
    let mut unknown = vec![0xA1, 0x64];
    unknown.extend_from_slice(b"Tell");
    unknown.push(0xA1);
    unknown.push(0x61);
    unknown.push(b'x');
    unknown.extend(std::iter::repeat_n(0x81u8, 100_000));
    assert_eq!(pk::decode_request(&unknown).unwrap_err().code(), "KAMEO_DEPTH_LIMIT");
    // indefinite text strings nested as chunks of each other
    let mut req = vec![0xA1, 0x64];
    req.extend_from_slice(b"Tell");
    req.push(0xA1);
    req.push(0x6F);
    req.extend_from_slice(b"actor_remote_id");
    req.extend(std::iter::repeat_n(0x7Fu8, 100_000));
    assert_eq!(pk::decode_request(&req).unwrap_err().code(), "KAMEO_DEPTH_LIMIT");
    let deep_pack: Vec<u8> = std::iter::repeat_n(0x91u8, 100_000).collect();
    assert_eq!(msgpack::unpack(&deep_pack).unwrap_err().code(), "KAMEO_DEPTH_LIMIT");
    // a deep Value is refused by pack and by stop_reason_from_value
    let mut v = Value::Nil;
    for _ in 0..300 {
        v = Value::Array(vec![v]);
    }
    assert_eq!(msgpack::pack(&v).unwrap_err().code(), "KAMEO_DEPTH_LIMIT");
    let mut r = Value::str("Killed");
    for _ in 0..300 {
        r = Value::variant("LinkDied", Value::map([("id", Value::map([("sequence_id", Value::Int(0))])), ("reason", r)]));
    }
    assert_eq!(pk::stop_reason_from_value(&r, "r").unwrap_err().code(), "KAMEO_DEPTH_LIMIT");
}

#[test]
fn huge_lengths_are_checked_before_allocating() {
    // arrays, byte/text strings and (ignored) maps claiming 2^64-1 items
    let huge = [0xFF; 8];
    for (field, head) in [("payload", 0x9B), ("actor_id", 0x5B), ("actor_remote_id", 0x7B), ("unknown", 0xBB)] {
        let mut req = vec![0xA1, 0x64];
        req.extend_from_slice(b"Tell");
        req.extend_from_slice(&[0xA1, 0x60 + field.len() as u8]);
        req.extend_from_slice(field.as_bytes());
        req.push(head);
        req.extend_from_slice(&huge);
        assert_eq!(pk::decode_request(&req).unwrap_err().code(), "KAMEO_EOF", "{field}");
    }
    assert_eq!(msgpack::unpack(&[0xDF, 0xFF, 0xFF, 0xFF, 0xFF]).unwrap_err().code(), "KAMEO_MSGPACK_EOF");
    assert_eq!(msgpack::unpack(&[0xC6, 0xFF, 0xFF, 0xFF, 0xFF]).unwrap_err().code(), "KAMEO_MSGPACK_EOF");
}

#[test]
fn value_shape_errors_name_the_path() {
    let peer = PeerId::from_ed25519_public_key(&[1; 32]);
    let good = pk::request_to_value(&SwarmRequest::ask(ActorId::new(1, Some(peer)), "a", "m", vec![1]));
    assert!(pk::request_from_value(&good).is_ok());
    let cases: Vec<(Value, &str)> = vec![
        (Value::str("Ask"), "Ask"),
        (Value::variant("Ask", Value::map([("actor_id", Value::Nil)])), "Ask.actor_id"),
        (Value::variant("Shout", Value::Nil), "Shout"),
        (Value::Int(1), "SwarmRequest"),
        (
            Value::variant(
                "Tell",
                Value::map([
                    ("actor_id", Value::map([("sequence_id", Value::Int(-1))])),
                    ("actor_remote_id", Value::str("a")),
                    ("message_remote_id", Value::str("m")),
                    ("payload", Value::Bytes(vec![])),
                    ("immediate", Value::Bool(false)),
                ]),
            ),
            "Tell.actor_id.sequence_id",
        ),
        (
            Value::variant(
                "Tell",
                Value::map([
                    ("actor_id", Value::map([("sequence_id", Value::Int(0)), ("peer_id", Value::str("nope0"))])),
                    ("actor_remote_id", Value::str("a")),
                    ("message_remote_id", Value::str("m")),
                    ("payload", Value::Bytes(vec![])),
                    ("immediate", Value::Bool(false)),
                ]),
            ),
            "Tell.actor_id.peer_id",
        ),
    ];
    for (v, path) in cases {
        let e = pk::request_from_value(&v).unwrap_err();
        assert_eq!(e.code(), "KAMEO_INVALID_VALUE");
        assert!(e.message().contains(path), "{e} should name {path}");
    }
    // payloads are bytes, not arrays; nanos below one second; () is nil
    let mut tell = pk::request_to_value(&SwarmRequest::tell(ActorId::new(1, None), "a", "m", vec![]));
    if let Value::Map(outer) = &mut tell {
        if let Value::Map(fields) = &mut outer[0].1 {
            fields[3].1 = Value::Array(vec![]);
        }
    }
    assert!(pk::request_from_value(&tell).unwrap_err().message().contains("payload"));
    let nanos = Value::variant(
        "Tell",
        Value::map([
            ("actor_id", Value::map([("sequence_id", Value::Int(0))])),
            ("actor_remote_id", Value::str("a")),
            ("message_remote_id", Value::str("m")),
            ("payload", Value::Bytes(vec![])),
            ("mailbox_timeout", Value::map([("secs", Value::Int(0)), ("nanos", Value::Int(1_000_000_000))])),
            ("immediate", Value::Bool(false)),
        ]),
    );
    assert!(pk::request_from_value(&nanos).unwrap_err().message().contains("nanos"));
    let tell_ok_list = Value::variant("Tell", Value::variant("Ok", Value::Array(vec![])));
    assert_eq!(pk::response_from_value(&tell_ok_list).unwrap_err().code(), "KAMEO_INVALID_VALUE");
    let tell_handler = Value::variant("Tell", Value::variant("Err", Value::variant("HandlerError", Value::Bytes(vec![]))));
    assert_eq!(pk::response_from_value(&tell_handler).unwrap_err().code(), "KAMEO_INVALID_VALUE");
    let unit_as_map = Value::variant("Tell", Value::variant("Err", Value::variant("MailboxFull", Value::Nil)));
    assert_eq!(pk::response_from_value(&unit_as_map).unwrap_err().code(), "KAMEO_INVALID_VALUE");
}

//! The two implementations of polywire's Kameo messaging CBOR on the same
//! messages, model <-> bytes: serde's derives on kameo's declarations through
//! cbor4ii (what libp2p's request-response cbor codec runs; `polywire::kameo`
//! uses it) and the hand-written writer and reader (`pk::paths::*_handwritten`,
//! which now only explain rejected inputs), with kameo's own types through
//! cbor4ii for reference and the cost of the bindings' `Value` conversion.
//! Then MessagePack: polywire's packer against `rmp_serde::to_vec_named` /
//! `from_slice` (what kameo packs payloads with) on a `serde_json::Value`.
//!
//! Run: cargo bench -p kameo-parity --bench codec

use std::borrow::Cow;
use std::hint::black_box;
use std::time::{Duration, Instant};

use kameo::actor::ActorId as KActorId;
use kameo::remote::messaging::{SwarmRequest as KReq, SwarmResponse as KResp};
use polywire::kameo as pk;

fn time(label: &str, bytes: usize, mut f: impl FnMut()) -> f64 {
    for _ in 0..1000 {
        f();
    }
    let mut best = f64::MAX;
    for _ in 0..7 {
        let n = 20_000;
        let t = Instant::now();
        for _ in 0..n {
            f();
        }
        best = best.min(t.elapsed().as_secs_f64() / n as f64);
    }
    println!("  {label:<44} {:>8.0} ns  {:>7.0} MB/s", best * 1e9, bytes as f64 / best / 1e6);
    best
}

fn main() {
    let peer: libp2p::PeerId = "12D3KooWEyoppNCUx8Yx66oV9fJnriXwCcXwDDUA2kj6vnc6iDEp".parse().unwrap();
    let payload = rmp_serde::to_vec_named(&serde_json::json!({"amount": 5, "note": "x".repeat(200), "tags": [1, 2, 3]})).unwrap();
    let kreq = KReq::Ask {
        actor_id: KActorId::new_with_peer_id(42, peer),
        actor_remote_id: Cow::Borrowed("my_app::Counter"),
        message_remote_id: Cow::Borrowed("my_app::Inc"),
        payload: payload.clone(),
        mailbox_timeout: Some(Duration::from_millis(1500)),
        reply_timeout: None,
        immediate: false,
    };
    let wire = cbor4ii::serde::to_vec(Vec::new(), &kreq).unwrap();
    let ours = pk::encode_request(&pk::decode_request(&wire).unwrap());
    assert_eq!(ours, wire, "the two encoders agree");
    let kresp: KResp = KResp::Ask(Ok(payload.clone()));
    let resp_wire = cbor4ii::serde::to_vec(Vec::new(), &kresp).unwrap();

    let req = pk::decode_request(&wire).unwrap();
    assert_eq!(pk::paths::encode_request_handwritten(&req), wire);
    println!("SwarmRequest::Ask ({} bytes)", wire.len());
    let hand_enc = time("hand-written encode (model -> bytes)", wire.len(), || {
        black_box(pk::paths::encode_request_handwritten(black_box(&req)));
    });
    let serde_enc = time("serde + cbor4ii encode (model -> bytes)", wire.len(), || {
        black_box(pk::paths::encode_request_serde(black_box(&req)));
    });
    time("  kameo's own type through cbor4ii", wire.len(), || {
        black_box(cbor4ii::serde::to_vec(Vec::new(), black_box(&kreq)).unwrap());
    });
    let hand_dec = time("hand-written decode (bytes -> model)", wire.len(), || {
        black_box(pk::paths::decode_request_handwritten(black_box(&wire)).unwrap());
    });
    let serde_dec = time("serde + cbor4ii decode (bytes -> model)", wire.len(), || {
        black_box(pk::decode_request_prefix(black_box(&wire)).unwrap());
    });
    time("  kameo's own type through cbor4ii", wire.len(), || {
        black_box(cbor4ii::serde::from_slice::<KReq>(black_box(&wire)).unwrap());
    });
    let v = pk::request_to_value(&req);
    time("Value -> model (the bindings' extra step)", wire.len(), || {
        black_box(pk::request_from_value(black_box(&v)).unwrap());
    });
    time("model -> Value", wire.len(), || {
        black_box(pk::request_to_value(black_box(&req)));
    });
    println!("  encode: hand-written / serde = {:.2}; decode: hand-written / serde = {:.2}", hand_enc / serde_enc, hand_dec / serde_dec);

    let resp = pk::decode_response(&resp_wire).unwrap();
    assert_eq!(pk::paths::encode_response_handwritten(&resp), resp_wire);
    println!("SwarmResponse::Ask(Ok) ({} bytes)", resp_wire.len());
    let hand_enc = time("hand-written encode (model -> bytes)", resp_wire.len(), || {
        black_box(pk::paths::encode_response_handwritten(black_box(&resp)));
    });
    let serde_enc = time("serde + cbor4ii encode (model -> bytes)", resp_wire.len(), || {
        black_box(pk::paths::encode_response_serde(black_box(&resp)));
    });
    time("  kameo's own type through cbor4ii", resp_wire.len(), || {
        black_box(cbor4ii::serde::to_vec(Vec::new(), black_box(&kresp)).unwrap());
    });
    let hand_dec = time("hand-written decode (bytes -> model)", resp_wire.len(), || {
        black_box(pk::paths::decode_response_handwritten(black_box(&resp_wire)).unwrap());
    });
    let serde_dec = time("serde + cbor4ii decode (bytes -> model)", resp_wire.len(), || {
        black_box(pk::decode_response_prefix(black_box(&resp_wire)).unwrap());
    });
    time("  kameo's own type through cbor4ii", resp_wire.len(), || {
        black_box(cbor4ii::serde::from_slice::<KResp>(black_box(&resp_wire)).unwrap());
    });
    println!("  encode: hand-written / serde = {:.2}; decode: hand-written / serde = {:.2}", hand_enc / serde_enc, hand_dec / serde_dec);

    let doc = serde_json::json!({"id": 7, "name": "counter", "tags": ["a", "b", "c"], "score": 0.5,
        "items": (0..20).map(|i| serde_json::json!({"k": i, "v": format!("value {i}"), "ok": i % 2 == 0})).collect::<Vec<_>>()});
    let packed = rmp_serde::to_vec_named(&doc).unwrap();
    let pv = pk::msgpack::unpack(&packed).unwrap();
    assert_eq!(pk::msgpack::pack(&pv).unwrap(), packed, "the two packers agree");
    println!("MessagePack document ({} bytes)", packed.len());
    let enc = time("polywire pack (Value -> bytes)", packed.len(), || {
        black_box(pk::msgpack::pack(black_box(&pv)).unwrap());
    });
    let senc = time("rmp_serde::to_vec_named (serde_json::Value)", packed.len(), || {
        black_box(rmp_serde::to_vec_named(black_box(&doc)).unwrap());
    });
    let dec = time("polywire unpack (bytes -> Value)", packed.len(), || {
        black_box(pk::msgpack::unpack(black_box(&packed)).unwrap());
    });
    let sdec = time("rmp_serde::from_slice (serde_json::Value)", packed.len(), || {
        black_box(rmp_serde::from_slice::<serde_json::Value>(black_box(&packed)).unwrap());
    });
    println!("  pack: polywire / rmp_serde = {:.2}; unpack: polywire / rmp_serde = {:.2}", enc / senc, dec / sdec);
}

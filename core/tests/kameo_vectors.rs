//! Runs `vectors/kameo.json` (bytes written and verdicts given by kameo
//! 0.22.2 itself, see kameo-parity) against polywire's Kameo codec.

mod kameo_common;

use kameo_common::{from_json, hex, to_json, unhex, vectors_path};
use polywire::kameo::{self as pk, msgpack};
use serde_json::Value as J;

fn vectors() -> J {
    let text = std::fs::read_to_string(vectors_path()).expect("vectors/kameo.json");
    serde_json::from_str(&text).expect("valid JSON")
}

fn section<'a>(v: &'a J, name: &str) -> &'a Vec<J> {
    let items = v[name].as_array().unwrap_or_else(|| panic!("section {name}"));
    assert!(!items.is_empty(), "section {name} is empty");
    items
}

fn s<'a>(j: &'a J, key: &str) -> &'a str {
    j[key].as_str().unwrap_or_else(|| panic!("{key} in {j}"))
}

#[test]
fn header() {
    let v = vectors();
    assert_eq!(v["format"], "kameo");
    assert!(s(&v, "how").contains("kameo"));
    assert_eq!(s(&v, "messaging_protocol"), pk::MESSAGING_PROTOCOL);
    assert_eq!(s(&v, "registry_protocol"), pk::REGISTRY_PROTOCOL);
}

#[test]
fn requests_encode_and_decode() {
    let v = vectors();
    for c in section(&v, "requests") {
        let value = from_json(&c["value"]);
        let bytes = unhex(s(c, "hex"));
        assert_eq!(hex(&pk::encode_request_value(&value).unwrap()), s(c, "hex"), "{}", c["name"]);
        let decoded = pk::decode_request_value(&bytes).unwrap();
        assert_eq!(to_json(&decoded), c["value"], "{}", c["name"]);
    }
}

#[test]
fn responses_encode_and_decode() {
    let v = vectors();
    for c in section(&v, "responses") {
        let value = from_json(&c["value"]);
        let bytes = unhex(s(c, "hex"));
        assert_eq!(hex(&pk::encode_response_value(&value).unwrap()), s(c, "hex"), "{}", c["name"]);
        assert_eq!(to_json(&pk::decode_response_value(&bytes).unwrap()), c["value"], "{}", c["name"]);
    }
}

#[test]
fn decode_verdicts_match_kameo() {
    let v = vectors();
    let (mut ok, mut rejected) = (0, 0);
    for c in section(&v, "decode") {
        let name = s(c, "name");
        let input = unhex(s(c, "hex"));
        let result = match s(c, "kind") {
            "request" => pk::decode_request_value(&input),
            _ => pk::decode_response_value(&input),
        };
        match s(c, "kameo") {
            "ok" => {
                let value = result.unwrap_or_else(|e| panic!("{name}: kameo accepts, we reject: {e}"));
                if let Some(expected) = c.get("value") {
                    assert_eq!(&to_json(&value), expected, "{name}");
                }
                let canonical = match s(c, "kind") {
                    "request" => pk::encode_request_value(&value).unwrap(),
                    _ => pk::encode_response_value(&value).unwrap(),
                };
                assert_eq!(hex(&canonical), s(c, "canonical_hex"), "{name}");
                ok += 1;
            }
            verdict => {
                let err = result.expect_err(name);
                assert_eq!(err.code(), s(c, "error"), "{name} ({verdict}): {err}");
                assert_eq!(err.format(), polywire::Format::Kameo);
                rejected += 1;
            }
        }
    }
    assert!(ok > 10 && rejected > 10);
}

#[test]
fn registrations() {
    let v = vectors();
    for c in section(&v, "registrations") {
        let seq = from_json(&c["sequence_id"]).as_u64().unwrap();
        let peer = c["peer_id"].as_str().map(|p| pk::PeerId::from_base58(p).unwrap());
        let reg = pk::ActorRegistration::new(pk::ActorId::new(seq, peer), s(c, "remote_id"));
        assert_eq!(hex(&reg.to_bytes()), s(c, "hex"), "{}", c["name"]);
        assert_eq!(pk::ActorRegistration::from_bytes(&unhex(s(c, "hex"))).unwrap(), reg);
    }
    for c in section(&v, "registration_decode") {
        let result = pk::ActorRegistration::from_bytes(&unhex(s(c, "hex")));
        match s(c, "kameo") {
            "ok" => {
                let reg = result.unwrap();
                assert_eq!(Some(reg.actor_id.sequence_id), from_json(&c["sequence_id"]).as_u64());
                assert_eq!(reg.actor_id.peer_id.map(|p| p.to_base58()).as_deref(), c["peer_id"].as_str());
                assert_eq!(reg.remote_id, s(c, "remote_id"));
            }
            _ => assert_eq!(result.unwrap_err().code(), s(c, "error"), "{}", c["name"]),
        }
    }
}

#[test]
fn peer_ids_and_keys() {
    let v = vectors();
    for c in section(&v, "peer_ids") {
        if let Some(key) = c.get("ed25519_public_key") {
            let key: [u8; 32] = unhex(key.as_str().unwrap()).try_into().unwrap();
            let p = pk::PeerId::from_ed25519_public_key(&key);
            assert_eq!(p.to_base58(), s(c, "base58"));
            assert_eq!(hex(p.as_bytes()), s(c, "hex"));
            continue;
        }
        let input = unhex(s(c, "input_hex"));
        match c.get("error") {
            None => {
                let p = pk::PeerId::from_bytes(&input).unwrap();
                assert_eq!(p.to_base58(), s(c, "base58"));
                assert_eq!(hex(p.as_bytes()), s(c, "hex"));
                assert_eq!(pk::PeerId::from_base58(s(c, "base58")).unwrap(), p);
            }
            Some(code) => assert_eq!(pk::PeerId::from_bytes(&input).unwrap_err().code(), code),
        }
    }
    for c in section(&v, "keys") {
        let peer = pk::PeerId::from_base58(s(c, "peer_id")).unwrap();
        assert_eq!(hex(&pk::provider_key(s(c, "actor_name"))), s(c, "provider_key_hex"));
        assert_eq!(pk::metadata_key(s(c, "actor_name"), &peer), s(c, "metadata_key"));
    }
}

#[test]
fn remote_ids() {
    let v = vectors();
    for c in section(&v, "remote_ids") {
        let id = match s(c, "kind") {
            "message" => pk::remote_message_id(
                s(c, "crate_name"),
                c["crate_major"].as_u64().unwrap(),
                s(c, "module_path"),
                s(c, "message_type"),
                s(c, "actor_type"),
                s(c, "impl_generics"),
            ),
            _ => pk::remote_actor_id(s(c, "module_path"), s(c, "ident")),
        };
        assert_eq!(id, s(c, "id"));
    }
}

#[test]
fn msgpack_pack_and_unpack() {
    let v = vectors();
    for c in section(&v, "msgpack") {
        let value = from_json(&c["value"]);
        assert_eq!(hex(&msgpack::pack(&value).unwrap()), s(c, "hex"), "{}", c["name"]);
        assert_eq!(msgpack::unpack(&unhex(s(c, "hex"))).unwrap(), value, "{}", c["name"]);
    }
}

//! AXON details where upstream v0.2.0 (hwbehrens/axon) is the rule: which
//! UUID spellings its `uuid` crate accepts, and the order of its checks.

use polywire::axon::decode;

const FROM: &str = "ed25519.0123456789abcdef0123456789abcdef";
const TO: &str = "ed25519.fedcba9876543210fedcba9876543210";

fn message(id: &str, kind: &str, payload: &str) -> Vec<u8> {
    format!(r#"{{"v":1,"id":"{id}","from":"{FROM}","to":"{TO}","ts":1771108000000,"kind":"{kind}","payload":{payload}}}"#).into_bytes()
}

#[test]
fn message_ids_in_exactly_the_uuid_crates_forms() {
    // `uuid::Uuid::parse_str`: 32 hex digits, or hyphenated alone, braced or as a URN.
    for id in [
        "6fc0ec4f-e59f-4bea-9d57-0d9fdd1108f1",
        "6FC0EC4F-E59F-4BEA-9D57-0D9FDD1108F1",
        "6fc0ec4fe59f4bea9d570d9fdd1108f1",
        "{6fc0ec4f-e59f-4bea-9d57-0d9fdd1108f1}",
        "urn:uuid:6fc0ec4f-e59f-4bea-9d57-0d9fdd1108f1",
    ] {
        let env = decode(&message(id, "ping", "{}")).unwrap_or_else(|e| panic!("{id}: {e}"));
        assert_eq!(env.id, "6fc0ec4f-e59f-4bea-9d57-0d9fdd1108f1");
    }
    for id in [
        "{6fc0ec4fe59f4bea9d570d9fdd1108f1}",
        "urn:uuid:6fc0ec4fe59f4bea9d570d9fdd1108f1",
        "urn:uuid:{6fc0ec4f-e59f-4bea-9d57-0d9fdd1108f1}",
        "6fc0ec4f-e59f-4bea-9d57-0d9fdd1108f",
        "6fc0ec4f-e59f-4bea-9d57_0d9fdd1108f1",
    ] {
        let e = decode(&message(id, "ping", "{}")).expect_err(id);
        assert_eq!(e.code(), "invalid_envelope", "{id}");
    }
}

#[test]
fn an_unknown_kind_is_unknown_kind_whatever_the_payload() {
    // Upstream's envelope takes any JSON value as the payload; the kind is
    // checked before the payload's shape.
    let id = "6fc0ec4f-e59f-4bea-9d57-0d9fdd1108f1";
    for payload in ["{}", "[]", "1", "null", "\"x\""] {
        assert_eq!(decode(&message(id, "shout", payload)).expect_err(payload).code(), "unknown_kind", "{payload}");
    }
    // A known kind still needs an object (stricter than upstream, which reads
    // an empty payload struct from an array).
    for payload in ["[]", "1", "null"] {
        assert_eq!(decode(&message(id, "ping", payload)).expect_err(payload).code(), "invalid_envelope", "{payload}");
    }
}

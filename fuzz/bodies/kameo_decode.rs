//! Kameo: the request, response, registration, peer-id and MessagePack
//! decoders on arbitrary bytes must return (an error or a value), never
//! panic or exhaust the stack, and whatever decodes must re-encode to bytes
//! that decode to the same value. The messaging decoders (cbor4ii through
//! serde) and the hand-written reader that explains their rejections must
//! judge every input alike, and the two encoders write the same bytes.
//!
//! Shared by the cargo-fuzz target and `core/tests/fuzz_corpus.rs`, which
//! replays the committed seeds (`fuzz/corpus-seed/kameo_decode/`) on stable.

use polywire::kameo::{self as pk, msgpack};

pub fn kameo_decode(data: &[u8]) {
    assert_eq!(pk::decode_request_prefix(data).ok(), pk::paths::decode_request_handwritten(data).ok());
    assert_eq!(pk::decode_response_prefix(data).ok(), pk::paths::decode_response_handwritten(data).ok());
    if let Ok((req, used)) = pk::decode_request_prefix(data) {
        assert!(used <= data.len());
        let again = pk::encode_request(&req);
        assert_eq!(pk::paths::encode_request_serde(&req), again);
        assert_eq!(pk::decode_request(&again).unwrap(), req);
        assert_eq!(pk::request_from_value(&pk::request_to_value(&req)).unwrap(), req);
    }
    if let Ok(resp) = pk::decode_response(data) {
        let again = pk::encode_response(&resp);
        assert_eq!(pk::paths::encode_response_handwritten(&resp), again);
        assert_eq!(pk::decode_response(&again).unwrap(), resp);
        assert_eq!(pk::response_from_value(&pk::response_to_value(&resp)).unwrap(), resp);
    }
    if let Ok(reg) = pk::ActorRegistration::from_bytes(data) {
        assert_eq!(pk::ActorRegistration::from_bytes(&reg.to_bytes()).unwrap(), reg);
    }
    if let Ok(p) = pk::PeerId::from_bytes(data) {
        assert_eq!(pk::PeerId::from_base58(&p.to_base58()).unwrap(), p);
    }
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = pk::PeerId::from_base58(text);
    }
    let _ = pk::parse_metadata_key(data);
    if let Ok(v) = msgpack::unpack(data) {
        let again = msgpack::pack(&v).unwrap();
        // NaN payloads compare unequal; compare the bytes of the second round
        assert_eq!(msgpack::pack(&msgpack::unpack(&again).unwrap()).unwrap(), again);
    }
}

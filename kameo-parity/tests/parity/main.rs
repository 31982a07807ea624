//! Proof that polywire's Kameo codec is byte-identical to kameo 0.22.2.
//!
//! Every request, response, registration, id and payload below is built on
//! both sides: polywire's bytes must equal what kameo writes through
//! libp2p's request-response cbor codec (or `ActorRegistration::into_bytes`,
//! or `rmp_serde::to_vec_named`), and kameo must read polywire's bytes back
//! to the same value. Hand-made and randomly mutated inputs must be accepted
//! or rejected by both alike (polywire errors where kameo panics).
//!
//! The test also produces `vectors/kameo.json` for the Python and Node
//! tests: it fails when the committed file differs from what kameo produces
//! now; run with `KAMEO_WRITE_VECTORS=1` to rewrite it.

#[path = "../../../core/tests/kameo_common/mod.rs"]
mod common;

mod cases;
mod kameo_side;
mod msgpack_cases;

use common::{hex, to_json};
use kameo_side::*;
use polywire::kameo as pk;
use serde_json::{json, Value as J};

const HOW: &str = "Produced by `cargo test -p kameo-parity` (kameo-parity/tests/parity/) with kameo =0.22.2 \
(features remote, macros), libp2p 0.56's request-response cbor codec (cbor4ii 0.3) and rmp-serde 1.3: \
every hex string is what the real crate wrote (or, for decode cases, the input given to it together with \
kameo's verdict: ok, error or panic); values are serde's externally tagged shape in the JSON form of \
core/tests/kameo_common/mod.rs. Regenerate with KAMEO_WRITE_VECTORS=1.";

/// Inputs longer than this stay out of the vectors file and the mutations.
const MAX_VECTOR_INPUT: usize = 4096;

#[test]
fn requests_match_kameo_and_vectors() {
    quiet_kameo_panics();
    let mut vectors = Vec::new();

    let mut requests = Vec::new();
    for (name, req) in cases::requests() {
        let ours = pk::encode_request(&req);
        let theirs = k_write_request(k_request(&req).expect("kameo can build every request case"));
        assert_eq!(hex(&ours), hex(&theirs), "request {name}: bytes differ");
        match k_read_request(&ours) {
            Outcome::Ok(v) => assert_eq!(p_request(&v), req, "request {name}: kameo reads ours differently"),
            other => panic!("request {name}: kameo rejects our bytes: {other:?}"),
        }
        assert_eq!(pk::decode_request(&theirs).unwrap(), req, "request {name}: we read kameo's differently");
        let value = pk::request_to_value(&req);
        assert_eq!(pk::request_from_value(&value).unwrap(), req);
        requests.push(json!({"name": name, "value": to_json(&value), "hex": hex(&theirs)}));
    }
    vectors.push(("requests", J::Array(requests)));

    let mut responses = Vec::new();
    for (name, resp) in cases::responses() {
        let ours = pk::encode_response(&resp);
        let theirs = k_write_response(k_response(&resp).expect("kameo can build every response case"));
        assert_eq!(hex(&ours), hex(&theirs), "response {name}: bytes differ");
        match k_read_response(&ours) {
            Outcome::Ok(v) => assert_eq!(p_response(&v), resp, "response {name}: kameo reads ours differently"),
            other => panic!("response {name}: kameo rejects our bytes: {other:?}"),
        }
        assert_eq!(pk::decode_response(&theirs).unwrap(), resp, "response {name}: we read kameo's differently");
        let value = pk::response_to_value(&resp);
        assert_eq!(pk::response_from_value(&value).unwrap(), resp);
        responses.push(json!({"name": name, "value": to_json(&value), "hex": hex(&theirs)}));
    }
    vectors.push(("responses", J::Array(responses)));

    // Stop reasons kameo cannot write (an `err` without its reason prefix)
    // but reads: decode direction only.
    for (name, req) in cases::decode_only_requests() {
        assert!(k_request(&req).is_none(), "{name} should not be constructible in kameo");
        let ours = pk::encode_request(&req);
        match k_read_request(&ours) {
            Outcome::Ok(v) => assert_eq!(p_request(&v), req, "request {name}"),
            other => panic!("request {name}: kameo rejects our bytes: {other:?}"),
        }
    }

    let mut decode = Vec::new();
    for (name, kind, input) in cases::decode_cases() {
        let entry = check_decode_agreement(name, kind, &input);
        // the 1 MiB size-limit cases are checked here but kept out of the file
        if input.len() <= MAX_VECTOR_INPUT {
            decode.push(entry);
        }
    }
    vectors.push(("decode", J::Array(decode)));

    vectors.push(("registrations", registrations()));
    vectors.push(("registration_decode", registration_decode()));
    vectors.push(("peer_ids", peer_ids()));
    vectors.push(("keys", keys()));
    vectors.push(("remote_ids", remote_ids()));
    vectors.push(("msgpack", msgpack_cases::msgpack()));

    write_or_compare_vectors(vectors);
}

/// Both decoders must agree on `input`: the same value, or both reject
/// (kameo by error or panic). Returns the vector entry.
fn check_decode_agreement(name: &str, kind: &str, input: &[u8]) -> J {
    let (verdict, value, ours_err) = match kind {
        "request" => {
            let ours = pk::decode_request(input);
            match (k_read_request(input), &ours) {
                (Outcome::Ok(k), Ok(o)) => {
                    assert_eq!(&p_request(&k), o, "decode {name}: values differ");
                    ("ok", Some(pk::request_to_value(o)), None)
                }
                (Outcome::Ok(k), Err(e)) => panic!("decode {name}: kameo accepts ({k:?}), we reject: {e}"),
                (k, Ok(o)) => panic!("decode {name}: kameo rejects ({k:?}), we accept {o:?}"),
                (Outcome::Err(_), Err(e)) => ("error", None, Some(e.code())),
                (Outcome::Panic, Err(e)) => ("panic", None, Some(e.code())),
            }
        }
        _ => {
            let ours = pk::decode_response(input);
            match (k_read_response(input), &ours) {
                (Outcome::Ok(k), Ok(o)) => {
                    assert_eq!(&p_response(&k), o, "decode {name}: values differ");
                    ("ok", Some(pk::response_to_value(o)), None)
                }
                (Outcome::Ok(k), Err(e)) => panic!("decode {name}: kameo accepts ({k:?}), we reject: {e}"),
                (k, Ok(o)) => panic!("decode {name}: kameo rejects ({k:?}), we accept {o:?}"),
                (Outcome::Err(_), Err(e)) => ("error", None, Some(e.code())),
                (Outcome::Panic, Err(e)) => ("panic", None, Some(e.code())),
            }
        }
    };
    let mut entry = json!({"name": name, "kind": kind, "hex": hex(input), "kameo": verdict});
    if let Some(v) = value {
        // what both sides write back for the decoded value
        let canonical = if kind == "request" {
            let req = pk::request_from_value(&v).unwrap();
            let ours = pk::encode_request(&req);
            if let Some(k) = k_request(&req) {
                assert_eq!(hex(&k_write_request(k)), hex(&ours), "decode {name}: re-encodings differ");
            }
            ours
        } else {
            let resp = pk::response_from_value(&v).unwrap();
            let ours = pk::encode_response(&resp);
            assert_eq!(hex(&k_write_response(k_response(&resp).unwrap())), hex(&ours), "decode {name}");
            ours
        };
        entry["canonical_hex"] = json!(hex(&canonical));
        // JSON parsers limit nesting (serde_json to 128): very deep values
        // are checked through canonical_hex alone.
        let j = to_json(&v);
        if json_depth(&j) <= 100 {
            entry["value"] = j;
        }
    }
    if let Some(code) = ours_err {
        entry["error"] = json!(code);
    }
    entry
}

fn json_depth(j: &J) -> usize {
    match j {
        J::Array(a) => 1 + a.iter().map(json_depth).max().unwrap_or(0),
        J::Object(m) => 1 + m.values().map(json_depth).max().unwrap_or(0),
        _ => 0,
    }
}

/// Random mutations of every valid encoding must be judged alike.
#[test]
fn mutated_inputs_are_judged_alike() {
    quiet_kameo_panics();
    let mut rng = XorShift(0x9E37_79B9_7F4A_7C15);
    let mut seeds: Vec<(&str, Vec<u8>)> = Vec::new();
    for (_, r) in cases::requests() {
        seeds.push(("request", pk::encode_request(&r)));
    }
    for (_, r) in cases::responses() {
        seeds.push(("response", pk::encode_response(&r)));
    }
    for (_, kind, input) in cases::decode_cases() {
        if input.len() <= MAX_VECTOR_INPUT {
            seeds.push((kind, input));
        }
    }
    let (mut accepted, mut total) = (0, 0);
    for round in 0..60 {
        for (kind, seed) in &seeds {
            let input = mutate(&mut rng, seed, round);
            let ok = match *kind {
                "request" => agree_request(&input),
                _ => agree_response(&input),
            };
            accepted += usize::from(ok);
            total += 1;
        }
    }
    // The mutations must exercise both outcomes.
    assert!(accepted > total / 20 && accepted < total * 19 / 20, "{accepted} of {total} accepted");
}

fn agree_request(input: &[u8]) -> bool {
    match (k_read_request(input), pk::decode_request(input)) {
        (Outcome::Ok(k), Ok(o)) => {
            assert_eq!(p_request(&k), o, "input {}", hex(input));
            true
        }
        (Outcome::Ok(k), Err(e)) => panic!("kameo accepts {k:?}, we reject ({e}): {}", hex(input)),
        (k, Ok(o)) => panic!("kameo rejects ({k:?}), we accept {o:?}: {}", hex(input)),
        _ => false,
    }
}

fn agree_response(input: &[u8]) -> bool {
    match (k_read_response(input), pk::decode_response(input)) {
        (Outcome::Ok(k), Ok(o)) => {
            assert_eq!(p_response(&k), o, "input {}", hex(input));
            true
        }
        (Outcome::Ok(k), Err(e)) => panic!("kameo accepts {k:?}, we reject ({e}): {}", hex(input)),
        (k, Ok(o)) => panic!("kameo rejects ({k:?}), we accept {o:?}: {}", hex(input)),
        _ => false,
    }
}

pub struct XorShift(pub u64);

impl XorShift {
    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n.max(1) as u64) as usize
    }
}

/// One of several structure-aware edits: flip a bit, set a byte to an
/// interesting head byte, insert or delete a byte, truncate, append junk.
fn mutate(rng: &mut XorShift, seed: &[u8], round: usize) -> Vec<u8> {
    const HEADS: [u8; 24] = [
        0x00, 0x17, 0x18, 0x19, 0x1a, 0x1b, 0x1c, 0x20, 0x40, 0x5f, 0x60, 0x7f, 0x80, 0x9f, 0xa0, 0xa1, 0xbf, 0xc0, 0xc2, 0xf4, 0xf6, 0xf7,
        0xf9, 0xff,
    ];
    let mut b = seed.to_vec();
    if b.is_empty() {
        b.push(0xA1);
    }
    let edits = 1 + round % 3;
    for _ in 0..edits {
        let i = rng.below(b.len());
        match rng.below(6) {
            0 => b[i] ^= 1 << rng.below(8),
            1 => b[i] = HEADS[rng.below(HEADS.len())],
            2 => b.insert(i, HEADS[rng.below(HEADS.len())]),
            3 if b.len() > 1 => {
                b.remove(i);
            }
            4 => b.truncate(i),
            _ => b.push(rng.next_u64() as u8),
        }
        if b.is_empty() {
            b.push(0xA1);
        }
    }
    b
}

fn registrations() -> J {
    let mut out = Vec::new();
    for (name, reg) in cases::registrations() {
        let ours = reg.to_bytes();
        let theirs = k_registration(&reg).into_bytes();
        assert_eq!(hex(&ours), hex(&theirs), "registration {name}");
        let back = kameo::remote::registry::ActorRegistration::from_bytes(&ours).expect("kameo reads ours");
        assert_eq!(p_actor_id(&back.actor_id), reg.actor_id, "registration {name}");
        assert_eq!(back.remote_id, reg.remote_id, "registration {name}");
        assert_eq!(pk::ActorRegistration::from_bytes(&theirs).unwrap(), reg);
        out.push(json!({
            "name": name,
            "sequence_id": to_json(&pk::Value::from(reg.actor_id.sequence_id)),
            "peer_id": reg.actor_id.peer_id.as_ref().map(|p| p.to_base58()),
            "remote_id": reg.remote_id,
            "hex": hex(&theirs),
        }));
    }
    J::Array(out)
}

fn registration_decode() -> J {
    quiet_kameo_panics();
    let mut out = Vec::new();
    let mut inputs: Vec<(String, Vec<u8>)> = cases::registration_decode_cases();
    let mut rng = XorShift(0xD1B5_4A32_D192_ED03);
    let seeds: Vec<Vec<u8>> = cases::registrations().iter().map(|(_, r)| r.to_bytes()).collect();
    let mut mutated = Vec::new();
    for round in 0..40 {
        for s in &seeds {
            mutated.push(mutate(&mut rng, s, round));
        }
    }
    for m in &mutated {
        inputs.push((String::new(), m.clone()));
    }
    for (name, input) in inputs {
        let ours = pk::ActorRegistration::from_bytes(&input);
        let theirs = k_read_registration(&input);
        let verdict = match (&theirs, &ours) {
            (Outcome::Ok((id, rid)), Ok(o)) => {
                assert_eq!(id, &o.actor_id, "registration {}", hex(&input));
                assert_eq!(rid, &o.remote_id);
                "ok"
            }
            (Outcome::Ok(k), Err(e)) => panic!("kameo accepts {k:?}, we reject ({e}): {}", hex(&input)),
            (k, Ok(o)) => panic!("kameo rejects ({k:?}), we accept {o:?}: {}", hex(&input)),
            (Outcome::Err(_), Err(_)) => "error",
            (Outcome::Panic, Err(_)) => "panic",
        };
        if !name.is_empty() {
            let mut e = json!({"name": name, "hex": hex(&input), "kameo": verdict});
            match &ours {
                Ok(o) => {
                    e["sequence_id"] = to_json(&pk::Value::from(o.actor_id.sequence_id));
                    e["peer_id"] = json!(o.actor_id.peer_id.as_ref().map(|p| p.to_base58()));
                    e["remote_id"] = json!(o.remote_id);
                }
                Err(err) => e["error"] = json!(err.code()),
            }
            out.push(e);
        }
    }
    J::Array(out)
}

fn peer_ids() -> J {
    let mut out = Vec::new();
    for seed in [[0u8; 32], [1; 32], [0xAB; 32], std::array::from_fn(|i| i as u8)] {
        let kp = libp2p::identity::Keypair::ed25519_from_bytes(seed).expect("ed25519 secret");
        let public = kp.public();
        let theirs = public.to_peer_id();
        let raw: [u8; 32] = public.clone().try_into_ed25519().expect("ed25519").to_bytes();
        let ours = pk::PeerId::from_ed25519_public_key(&raw);
        assert_eq!(ours.as_bytes(), &theirs.to_bytes()[..]);
        assert_eq!(ours.to_base58(), theirs.to_base58());
        assert_eq!(pk::PeerId::from_public_key_protobuf(&public.encode_protobuf()).unwrap(), ours);
        assert_eq!(pk::PeerId::from_public_key(&public.encode_protobuf()).unwrap(), ours);
        assert_eq!(pk::PeerId::from_base58(&theirs.to_base58()).unwrap(), ours);
        out.push(json!({
            "ed25519_public_key": hex(&raw),
            "base58": theirs.to_base58(),
            "hex": hex(&theirs.to_bytes()),
        }));
    }
    // sha2-256 and odd identity ids, through libp2p's own parser
    for bytes in cases::peer_id_bytes() {
        let theirs = libp2p::PeerId::from_bytes(&bytes);
        let ours = pk::PeerId::from_bytes(&bytes);
        match (&theirs, &ours) {
            (Ok(t), Ok(o)) => {
                assert_eq!(o.as_bytes(), &t.to_bytes()[..], "{}", hex(&bytes));
                assert_eq!(o.to_base58(), t.to_base58());
                out.push(json!({"input_hex": hex(&bytes), "base58": t.to_base58(), "hex": hex(&t.to_bytes())}));
            }
            (Err(_), Err(e)) => out.push(json!({"input_hex": hex(&bytes), "error": e.code()})),
            _ => panic!("peer id {}: libp2p {theirs:?}, ours {ours:?}", hex(&bytes)),
        }
    }
    // random bytes and base58 text
    let mut rng = XorShift(0x2545_F491_4F6C_DD1D);
    let alphabet = b"123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz0OIl+";
    for _ in 0..3000 {
        let mut bytes: Vec<u8> = (0..rng.below(80)).map(|_| rng.next_u64() as u8).collect();
        if rng.below(2) == 0 && bytes.len() > 2 {
            bytes[0] = [0x00, 0x12, 0x13, 0x80, 0x92][rng.below(5)];
            bytes[1] = (bytes.len() - 2) as u8 ^ (rng.below(4) == 0) as u8;
        }
        let theirs = libp2p::PeerId::from_bytes(&bytes).map(|p| p.to_bytes()).ok();
        let ours = pk::PeerId::from_bytes(&bytes).map(|p| p.to_bytes()).ok();
        assert_eq!(theirs, ours, "peer id bytes {}", hex(&bytes));
        let text: String = (0..rng.below(110)).map(|_| alphabet[rng.below(alphabet.len())] as char).collect();
        let theirs = text.parse::<libp2p::PeerId>().map(|p| p.to_bytes()).ok();
        let ours = pk::PeerId::from_base58(&text).map(|p| p.to_bytes()).ok();
        assert_eq!(theirs, ours, "peer id text {text}");
        let theirs = bs58_via_libp2p(&bytes);
        assert_eq!(pk::ids::base58_encode(&bytes), theirs);
        assert_eq!(pk::ids::base58_decode(&theirs).unwrap(), bytes);
    }
    J::Array(out)
}

/// libp2p's base58 (bs58) of arbitrary bytes, through an identity-less
/// route: `PeerId` only prints valid multihashes, so use bs58 directly.
fn bs58_via_libp2p(bytes: &[u8]) -> String {
    bs58::encode(bytes).into_string()
}

fn keys() -> J {
    let mut out = Vec::new();
    for (name, peer) in cases::key_cases() {
        let kpeer = libp2p::PeerId::from_bytes(peer.as_bytes()).unwrap();
        let provider = libp2p::kad::RecordKey::new(&name.as_bytes());
        assert_eq!(pk::provider_key(name), provider.to_vec());
        // kameo's registry: format!("{}:meta:{}", name, self.local_peer_id)
        let meta = format!("{}:meta:{}", name, kpeer);
        assert_eq!(pk::metadata_key(name, &peer), meta);
        assert_eq!(pk::parse_metadata_key(meta.as_bytes()).unwrap(), (name.to_owned(), peer.clone()));
        out.push(json!({
            "actor_name": name,
            "peer_id": kpeer.to_base58(),
            "provider_key_hex": hex(&provider.to_vec()),
            "metadata_key": meta,
        }));
    }
    J::Array(out)
}

fn remote_ids() -> J {
    let mut out = Vec::new();
    for case in cases::remote_message_ids() {
        let ours = pk::remote_message_id(
            case.crate_name,
            case.crate_major,
            case.module_path,
            case.message_type,
            case.actor_type,
            case.impl_generics,
        );
        assert_eq!(ours, case.kameo_id, "remote message id of {} for {}", case.message_type, case.actor_type);
        out.push(json!({
            "kind": "message",
            "crate_name": case.crate_name,
            "crate_major": case.crate_major,
            "module_path": case.module_path,
            "message_type": case.message_type,
            "actor_type": case.actor_type,
            "impl_generics": case.impl_generics,
            "id": case.kameo_id,
        }));
    }
    for (module_path, ident, kameo_id) in cases::remote_actor_ids() {
        assert_eq!(pk::remote_actor_id(module_path, ident), kameo_id);
        out.push(json!({"kind": "actor", "module_path": module_path, "ident": ident, "id": kameo_id}));
    }
    J::Array(out)
}

fn write_or_compare_vectors(sections: Vec<(&str, J)>) {
    let mut doc = serde_json::Map::new();
    doc.insert("format".into(), json!("kameo"));
    doc.insert("kameo_version".into(), json!("0.22.2"));
    doc.insert("how".into(), json!(HOW));
    doc.insert("messaging_protocol".into(), json!(pk::MESSAGING_PROTOCOL));
    doc.insert("registry_protocol".into(), json!(pk::REGISTRY_PROTOCOL));
    for (k, v) in sections {
        doc.insert(k.into(), v);
    }
    // One line per vector: readable diffs without the indentation that
    // deeply nested stop reasons would get from pretty printing.
    let mut text = String::from("{\n");
    let n = doc.len();
    for (i, (k, v)) in doc.iter().enumerate() {
        text += &format!("  {}: ", J::String(k.clone()));
        match v {
            J::Array(items) => {
                text += "[\n";
                for (j, item) in items.iter().enumerate() {
                    text += &format!("    {}{}\n", item, if j + 1 < items.len() { "," } else { "" });
                }
                text += "  ]";
            }
            other => text += &other.to_string(),
        }
        text += if i + 1 < n { ",\n" } else { "\n" };
    }
    text += "}\n";
    serde_json::from_str::<J>(&text).expect("the vectors file is JSON");
    let path = common::vectors_path();
    if std::env::var_os("KAMEO_WRITE_VECTORS").is_some() {
        std::fs::write(&path, &text).unwrap();
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == text,
        "vectors/kameo.json differs from what kameo produces now; rerun with KAMEO_WRITE_VECTORS=1 and review the diff"
    );
}

/// Differential run over a directory of inputs (e.g. a cargo-fuzz corpus of
/// `fuzz/fuzz_targets/kameo_decode.rs`): each file is judged as a request,
/// a response and a registration by both sides.
/// `KAMEO_PARITY_CORPUS=dir cargo test -p kameo-parity -- --ignored`
#[test]
#[ignore = "needs KAMEO_PARITY_CORPUS=<dir>"]
fn corpus_inputs_are_judged_alike() {
    quiet_kameo_panics();
    let dir = std::env::var_os("KAMEO_PARITY_CORPUS").expect("KAMEO_PARITY_CORPUS=<dir of inputs>");
    let mut n = 0;
    for entry in std::fs::read_dir(dir).expect("corpus dir") {
        let input = std::fs::read(entry.expect("entry").path()).expect("input");
        agree_request(&input);
        agree_response(&input);
        let theirs = k_read_registration(&input);
        match (theirs, pk::ActorRegistration::from_bytes(&input)) {
            (Outcome::Ok((id, rid)), Ok(o)) => assert_eq!((id, rid), (o.actor_id, o.remote_id)),
            (Outcome::Ok(k), Err(e)) => panic!("kameo accepts {k:?}, we reject ({e}): {}", hex(&input)),
            (k, Ok(o)) if !matches!(k, Outcome::Ok(_)) => panic!("kameo rejects ({k:?}), we accept {o:?}"),
            _ => {}
        }
        n += 1;
    }
    assert!(n > 0, "empty corpus");
    println!("{n} inputs judged alike");
}

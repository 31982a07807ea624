//! Runs the shared vectors in `vectors/axon.json` (also run by the Python
//! and Node tests).

use polywire::axon::{self, DecodeOptions, Envelope, ErrorCode, Inbound, Kind, Session, SessionConfig, StreamType};
use serde_json::Value as J;
use std::collections::HashMap;

fn vectors() -> J {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../vectors/axon.json");
    serde_json::from_slice(&std::fs::read(path).expect("vectors/axon.json")).expect("valid JSON")
}

fn s(v: &J) -> &str {
    v.as_str().expect("string")
}

fn keep_as_sent() -> DecodeOptions {
    DecodeOptions { fill_defaults: false, ..DecodeOptions::default() }
}

#[test]
fn messages_decode_and_encode_as_upstream() {
    let doc = vectors();
    let list = doc["messages"].as_array().unwrap();
    assert!(list.len() >= 30);
    for m in list {
        let name = s(&m["name"]);
        let body = s(&m["json"]).as_bytes();
        let env = axon::decode(body).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(env.to_value(), m["decoded"], "decoded {name}");
        // Encoding the message as sent gives upstream's bytes.
        let as_sent = axon::decode_with(body, &keep_as_sent()).unwrap();
        let bytes = axon::encode(&as_sent).unwrap();
        assert_eq!(String::from_utf8(bytes.clone()).unwrap(), s(&m["encoded"]), "encoded {name}");
        assert_eq!(axon::encode_value(&serde_json::from_slice(body).unwrap()).unwrap(), bytes, "{name}");
        // The encoded form decodes to the same message; with defaults it is stable.
        assert_eq!(axon::decode(&bytes).unwrap(), env, "{name}");
        let again = axon::encode(&env).unwrap();
        assert_eq!(axon::encode(&axon::decode(&again).unwrap()).unwrap(), again, "{name}");
    }
}

#[test]
fn errors_carry_the_protocol_codes() {
    let doc = vectors();
    let list = doc["errors"].as_array().unwrap();
    assert!(list.len() >= 50);
    for e in list {
        let name = s(&e["name"]);
        let body = match e["json"].as_str() {
            Some(b) => b.to_owned(),
            None => format!(
                r#"{{"v":1,"id":"6fc0ec4f-e59f-4bea-9d57-0d9fdd1108f1","from":"ed25519.fe812c12f3ab4ce6ac5db69ac352f906","to":"ed25519.b600306cfa76723fdec395e53a9b3d9f","ts":1,"kind":"notify","payload":{{"topic":"t","data":"{}"}}}}"#,
                "x".repeat(e["notify_data_repeat"].as_u64().unwrap() as usize)
            ),
        };
        let err = axon::decode(body.as_bytes()).expect_err(name);
        assert_eq!(err.code(), s(&e["code"]), "{name}: {err}");
        assert_eq!(err.format(), polywire::Format::Axon);
        assert!(ErrorCode::of(&err).is_some());
        if let Some(c) = e.get("message_contains").and_then(J::as_str) {
            assert!(err.message().contains(c), "{name}: {err}");
        }
        // JSON-level checks also apply when encoding from JSON.
        if let Ok(v) = serde_json::from_str::<J>(&body) {
            if body.len() <= axon::MAX_MESSAGE_SIZE && !name.contains("duplicate") {
                assert_eq!(axon::encode_value(&v).unwrap_err().code(), s(&e["code"]), "encode {name}");
            }
        }
    }
}

#[test]
fn agent_ids_match_upstream() {
    let doc = vectors();
    for a in doc["agent_ids"].as_array().unwrap() {
        let seed = polywire::tether::from_hex(s(&a["seed"])).unwrap();
        let key = polywire::tether::from_hex(s(&a["public_key"])).unwrap();
        assert_eq!(axon::public_key_from_seed(&seed).unwrap().to_vec(), key);
        assert_eq!(axon::agent_id(&key).unwrap(), s(&a["agent_id"]));
        assert_eq!(axon::agent_id_from_seed(&seed).unwrap(), s(&a["agent_id"]));
    }
}

#[test]
fn negotiation_and_kinds() {
    let doc = vectors();
    let bytes = |v: &J| -> Vec<u8> { v.as_array().unwrap().iter().map(|x| x.as_u64().unwrap() as u8).collect() };
    for n in doc["negotiation"].as_array().unwrap() {
        let got = axon::negotiate(&bytes(&n["local"]), &bytes(&n["remote"]));
        match n.get("selected") {
            Some(v) => assert_eq!(got.unwrap() as u64, v.as_u64().unwrap()),
            None => assert_eq!(got.unwrap_err().code(), s(&n["code"])),
        }
    }
    let names = |ks: &[Kind]| -> J { ks.iter().map(|k| k.as_str()).collect::<Vec<_>>().into() };
    let table = doc["kinds"].as_array().unwrap();
    assert_eq!(table.len(), 13);
    for k in table {
        let kind = Kind::parse(s(&k["kind"])).unwrap();
        assert_eq!(kind.is_required(), k["required"].as_bool().unwrap(), "{kind}");
        assert_eq!(kind.expects_response(), k["expects_response"].as_bool().unwrap(), "{kind}");
        assert_eq!(names(kind.response_kinds()), k["response_kinds"], "{kind}");
        assert_eq!(names(kind.later_responses()), k.get("later_responses").cloned().unwrap_or(J::Array(vec![])), "{kind}");
        assert_eq!(kind.stream().as_str(), s(&k["stream"]), "{kind}");
    }
}

fn envelope(v: &J) -> Envelope {
    Envelope::from_value(v, &keep_as_sent()).unwrap()
}

fn payload(v: &J) -> serde_json::Map<String, J> {
    v.as_object().unwrap().clone()
}

#[test]
fn reply_builders() {
    let doc = vectors();
    for r in doc["replies"].as_array().unwrap() {
        let name = s(&r["name"]);
        let got = axon::reply_with(
            &envelope(&r["request"]),
            Kind::parse(s(&r["kind"])).unwrap(),
            payload(&r["payload"]),
            s(&r["id"]).into(),
            r["ts"].as_u64().unwrap(),
        );
        match r.get("encoded") {
            Some(want) => assert_eq!(String::from_utf8(axon::encode(&got.unwrap()).unwrap()).unwrap(), s(want), "{name}"),
            None => assert_eq!(got.unwrap_err().code(), s(&r["code"]), "{name}"),
        }
    }
    for r in doc["error_replies"].as_array().unwrap() {
        let got = axon::error_reply_with(
            &envelope(&r["request"]),
            ErrorCode::parse(s(&r["code"])).unwrap(),
            s(&r["message"]),
            r["retryable"].as_bool().unwrap(),
            s(&r["id"]).into(),
            r["ts"].as_u64().unwrap(),
        );
        assert_eq!(String::from_utf8(axon::encode(&got).unwrap()).unwrap(), s(&r["encoded"]));
    }
}

fn want_str(want: &J, key: &str, saved: &HashMap<String, String>) -> Option<String> {
    want.get(key).and_then(J::as_str).map(|t| saved.iter().fold(t.to_owned(), |acc, (k, v)| acc.replace(&format!("{{{k}}}"), v)))
}

#[test]
fn sessions() {
    let doc = vectors();
    for scenario in doc["sessions"].as_array().unwrap() {
        let name = s(&scenario["name"]);
        let c = &scenario["config"];
        let mut config = SessionConfig::new(s(&c["local_id"]));
        if let Some(v) = c.get("protocol_versions") {
            config.protocol_versions = v.as_array().unwrap().iter().map(|x| x.as_u64().unwrap() as u8).collect();
        }
        if let Some(p) = c.get("expected_peer") {
            config.expected_peer = p.as_str().map(str::to_owned);
        }
        let mut session = Session::new(config).unwrap();
        let mut saved: HashMap<String, String> = HashMap::new();
        let fill =
            |t: &str, saved: &HashMap<String, String>| saved.iter().fold(t.to_owned(), |acc, (k, v)| acc.replace(&format!("{{{k}}}"), v));
        for (i, step) in scenario["steps"].as_array().unwrap().iter().enumerate() {
            let at = format!("{name}, step {i}");
            let want = &step["expect"];
            if let Some(body) = step.get("receive") {
                let stream = match s(&step["stream"]) {
                    "bidirectional" => StreamType::Bidirectional,
                    _ => StreamType::Unidirectional,
                };
                let got = session.receive(fill(s(body), &saved).as_bytes(), stream, step["now"].as_u64().unwrap());
                match (s(&want["action"]), &got) {
                    ("deliver", Inbound::Deliver { envelope, in_reply_to }) => {
                        assert_eq!(Some(envelope.id.clone()), want_str(want, "id", &saved), "{at}");
                        assert_eq!(in_reply_to.as_ref().map(|p| p.id.clone()), want_str(want, "in_reply_to", &saved), "{at}");
                    }
                    ("respond", Inbound::Respond { reply, delivered }) => {
                        assert_eq!(reply.kind.as_str(), s(&want["kind"]), "{at}: {reply:?}");
                        assert_eq!(reply.ref_id, want_str(want, "ref", &saved), "{at}");
                        assert_eq!(reply.from, session.local_id(), "{at}");
                        axon::encode(reply).unwrap();
                        if let Some(code) = want_str(want, "code", &saved) {
                            assert_eq!(reply.payload["code"], J::from(code), "{at}");
                        }
                        if let Some(m) = want_str(want, "message", &saved) {
                            assert_eq!(reply.payload["message"], J::from(m), "{at}");
                        }
                        if let Some(v) = want.get("selected_version") {
                            assert_eq!(&reply.payload["selected_version"], v, "{at}");
                        }
                        if let Some(d) = want_str(want, "delivered", &saved) {
                            assert_eq!(delivered.as_ref().map(|e| e.id.clone()), Some(d), "{at}");
                        }
                    }
                    ("dropped", Inbound::Dropped { reason, message }) => {
                        assert_eq!(reason.as_str(), s(&want["reason"]), "{at}: {message}");
                        assert!(!message.is_empty());
                    }
                    (w, g) => panic!("{at}: expected {w}, got {g:?}"),
                }
            } else if let Some(env) = step.get("send") {
                let got = session.send(&envelope(env), step["now"].as_u64().unwrap());
                match want.get("route") {
                    Some(r) => assert_eq!(got.unwrap_or_else(|e| panic!("{at}: {e}")).route.as_str(), s(r), "{at}"),
                    None => assert_eq!(got.unwrap_err().code(), s(&want["error"]), "{at}"),
                }
            } else if let Some(to) = step.get("hello") {
                let out = session.hello(s(to), step["now"].as_u64().unwrap()).unwrap();
                assert_eq!(out.route.as_str(), s(&want["route"]), "{at}");
                let sent = axon::decode(&out.bytes).unwrap();
                assert_eq!(sent.kind, Kind::Hello);
                saved.insert(s(&step["save"]).into(), sent.id);
            } else if let Some(now) = step.get("expire") {
                let gone: Vec<J> = session.expire(now.as_u64().unwrap()).into_iter().map(|p| J::from(p.id)).collect();
                assert_eq!(J::Array(gone), want["expired"], "{at}");
            } else {
                panic!("{at}: unknown step");
            }
            if let Some(r) = want.get("ready") {
                assert_eq!(session.is_ready(), r.as_bool().unwrap(), "{at}");
            }
            if let Some(p) = want_str(want, "peer", &saved) {
                assert_eq!(session.peer(), Some(p.as_str()), "{at}");
            }
            if let Some(v) = want.get("version") {
                assert_eq!(session.version().map(u64::from), v.as_u64(), "{at}");
            }
            if let Some(n) = want.get("pending") {
                assert_eq!(session.pending().count() as u64, n.as_u64().unwrap(), "{at}");
            }
        }
    }
}

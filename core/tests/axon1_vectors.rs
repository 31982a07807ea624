//! Runs `vectors/axon1.json`: upstream HEAD's own verdicts on axon/1
//! envelopes (its `axon::message::decode`, `validate` and `wire_encode`, run
//! outside the repository; the file's `how` says how). Also run by the
//! Python and Node tests.
//!
//! polywire's `parse` is upstream's `decode` (same message), `validate` its
//! `validate`, `encode` its `wire_encode` (same bytes) — with one deliberate
//! difference: an unknown kind keeps its string where upstream says
//! `unknown` (and then writes `"unknown"`).

use polywire::axon::axon1;
use serde_json::Value as J;

fn input(case: &J) -> Vec<u8> {
    match (case.get("input"), case.get("input_hex")) {
        (Some(J::String(s)), _) => s.as_bytes().to_vec(),
        (_, Some(J::String(h))) => (0..h.len()).step_by(2).map(|i| u8::from_str_radix(&h[i..i + 2], 16).unwrap()).collect(),
        _ => panic!("a case without input: {case}"),
    }
}

/// Upstream's message without serde_json's " at line L column C".
fn bare(error: &str) -> &str {
    match error.rfind(" at line ") {
        Some(i) if error[i..].contains(" column ") => &error[..i],
        _ => error,
    }
}

#[test]
fn envelopes_as_upstream_decodes_validates_and_encodes_them() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../vectors/axon1.json");
    let doc: J = serde_json::from_slice(&std::fs::read(path).expect("vectors/axon1.json")).unwrap();
    let cases = doc["cases"].as_array().unwrap();
    assert_eq!(cases.len() as u64, doc["count"].as_u64().unwrap());
    assert!(cases.len() >= 300);
    let (mut ok, mut refused) = (0, 0);
    for case in cases {
        let name = case["name"].as_str().unwrap();
        let data = input(case);
        assert_eq!(data.len() as u64, case["input_len"].as_u64().unwrap(), "{name}");
        let parsed = axon1::parse(&data);
        let stage = case.get("stage").and_then(J::as_str);
        if stage == Some("decode") {
            let e = parsed.expect_err(name);
            assert_eq!(e.message(), bare(case["error"].as_str().unwrap()), "{name}");
            assert_eq!(e.code(), "invalid_envelope");
            refused += 1;
            continue;
        }
        let env = parsed.unwrap_or_else(|e| panic!("{name}: {e}"));
        let upstream_kind = case["kind"].as_str().unwrap();
        if axon1::KINDS.contains(&env.kind.as_str()) {
            assert_eq!(env.kind, upstream_kind, "{name}");
        } else {
            assert_eq!(upstream_kind, "unknown", "{name}: {}", env.kind);
        }
        if stage == Some("validate") {
            let e = env.validate().expect_err(name);
            assert_eq!(e.message(), case["error"].as_str().unwrap(), "{name}");
            assert!(axon1::decode(&data).is_err(), "{name}");
            refused += 1;
            continue;
        }
        assert_eq!(case["ok"], J::Bool(true), "{name}");
        env.validate().unwrap_or_else(|e| panic!("{name}: {e}"));
        let decoded = axon1::decode(&data).unwrap();
        assert_eq!(decoded, env, "{name}");
        match (case.get("encoded"), case.get("encode_error")) {
            (Some(J::String(wire)), _) => {
                let bytes = axon1::encode(&env).unwrap_or_else(|e| panic!("{name}: {e}"));
                if upstream_kind == "unknown" {
                    // Upstream writes "unknown"; polywire the kind it read.
                    let ours = String::from_utf8(bytes).unwrap();
                    let kind = serde_json::to_string(&env.kind).unwrap();
                    assert_eq!(ours.replacen(&format!("\"kind\":{kind}"), "\"kind\":\"unknown\"", 1), *wire, "{name}");
                } else {
                    assert_eq!(String::from_utf8(bytes).unwrap(), *wire, "{name}");
                    // What upstream sends decodes to the same envelope.
                    assert_eq!(axon1::decode(wire.as_bytes()).unwrap(), env, "{name}");
                }
            }
            (_, Some(J::String(e))) => {
                assert_eq!(axon1::encode(&env).unwrap_err().message(), e.as_str(), "{name}");
            }
            _ => panic!("{name}: neither encoded nor encode_error"),
        }
        ok += 1;
    }
    assert!(ok > 100 && refused > 100, "{ok} accepted, {refused} refused");
}

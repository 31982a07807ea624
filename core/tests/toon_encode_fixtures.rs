//! Runs every encode case of the TOON spec v4.0 conformance fixtures, as
//! `vectors/toon_spec.json` holds them (the reference `@toon-format/toon`
//! 4.4.0's output for each fixture input; it equals the fixture's expected
//! text for all 173), and requires byte-equal output.

use polywire::json::{self, ParseOptions};
use polywire::toon::encode::{encode_value, EncodeOptions, KeyFolding};
use polywire::toon::Delimiter;
use serde_json::Value;

const SPEC_VECTORS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../vectors/toon_spec.json");

fn options(case: &Value) -> EncodeOptions {
    let mut opts = EncodeOptions::default();
    if let Some(o) = case.get("options") {
        if let Some(d) = o.get("delimiter").and_then(Value::as_str) {
            let mut chars = d.chars();
            opts.delimiter = chars.next().and_then(Delimiter::from_char).expect("known delimiter");
            assert!(chars.next().is_none(), "one-character delimiter");
        }
        if let Some(n) = o.get("indentSize").and_then(Value::as_u64) {
            opts.indent = n as usize;
        }
        for k in o.as_object().expect("options object").keys() {
            assert!(matches!(k.as_str(), "delimiter" | "indentSize"), "unhandled option {k}");
        }
    }
    opts
}

#[test]
fn encode_fixtures_byte_equal() {
    // The JSON layer parses numbers exactly as JSON.parse does.
    let doc =
        json::parse(&std::fs::read(SPEC_VECTORS).expect("read vectors/toon_spec.json"), ParseOptions::default()).expect("parse vectors");
    let mut total = 0;
    let mut failures = Vec::new();
    for case in doc["encode"].as_array().expect("encode cases") {
        total += 1;
        let name = case["name"].as_str().unwrap_or("?");
        let expected = case["expected"].as_str().expect("expected string");
        match encode_value(&case["input"], &options(case)) {
            Ok(got) if got == expected => {}
            Ok(got) => {
                failures.push(format!("{}: {name}\n  expected: {expected:?}\n  got:      {got:?}", case["file"].as_str().unwrap_or("?")))
            }
            Err(e) => failures.push(format!("{name}: error {e:?}")),
        }
    }
    assert!(failures.is_empty(), "{} of {total} cases differ:\n{}", failures.len(), failures.join("\n"));
    assert_eq!(total, 173, "expected the 173 cases of spec v4.0");
}

/// `vectors/toon_encode.json`: outputs of the reference on random documents
/// (see its "how" field), shared with the Python and Node binding tests.
#[test]
fn encode_vectors_byte_equal() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../vectors/toon_encode.json");
    let file = json::parse(&std::fs::read(path).expect("read vectors"), ParseOptions::default()).expect("parse vectors");
    let cases = file["cases"].as_array().expect("cases array");
    assert!(cases.len() >= 200, "expected the vector set, found {} cases", cases.len());
    let mut failures = Vec::new();
    for (i, case) in cases.iter().enumerate() {
        let input =
            json::parse(case["input_json"].as_str().expect("input_json").as_bytes(), ParseOptions::default()).expect("input parses");
        let o = &case["options"];
        let mut opts = EncodeOptions {
            delimiter: o["delimiter"].as_str().and_then(|d| d.chars().next()).and_then(Delimiter::from_char).expect("delimiter"),
            indent: o["indent"].as_u64().expect("indent") as usize,
            ..EncodeOptions::default()
        };
        if let Some(k) = o.get("keyFolding") {
            opts.key_folding = if k == "safe" { KeyFolding::Safe } else { KeyFolding::Off };
        }
        if let Some(d) = o.get("flattenDepth").and_then(Value::as_u64) {
            opts.flatten_depth = d as usize;
        }
        let expected = case["expected"].as_str().expect("expected");
        match encode_value(&input, &opts) {
            Ok(got) if got == expected => {}
            Ok(got) => failures.push(format!("case {i}: {}\n  expected: {expected:?}\n  got:      {got:?}", case["input_json"])),
            Err(e) => failures.push(format!("case {i}: error {e:?}")),
        }
    }
    assert!(failures.is_empty(), "{} of {} vectors differ:\n{}", failures.len(), cases.len(), failures.join("\n"));
}

//! Runs every decode case of the TOON spec v4.0 conformance fixtures, as
//! `vectors/toon_spec.json` holds them (inputs and options from the fixtures,
//! expected results from the reference `@toon-format/toon` 4.4.0; see its
//! "how"), through `polywire::toon::decode`.
//!
//! Expected values must be equal (numbers compared numerically, object keys
//! as sets); where the reference throws, polywire must fail with the
//! reference's message on the reference's line. Four v4.0 cases are decoded
//! differently by the 4.4 reference, which this crate follows (spec 4.1 made
//! malformed bracket headers errors in both modes): the fixtures call them
//! valid, the vectors record the reference's error.

use polywire::toon::decode::{decode, DecodeOptions};
use serde_json::Value;

const SPEC_VECTORS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../vectors/toon_spec.json");

/// JSON equality with numbers compared as doubles (the reference's numbers
/// are doubles; the decoder hands out i64 or f64) and object keys as sets.
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => x.len() == y.len() && x.iter().zip(y).all(|(p, q)| same(p, q)),
        (Value::Object(x), Value::Object(y)) => x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w))),
        _ => a == b,
    }
}

fn options(test: &Value) -> DecodeOptions {
    let mut opts = DecodeOptions::default();
    if let Some(o) = test.get("options").and_then(Value::as_object) {
        for (k, v) in o {
            match k.as_str() {
                "strict" => opts.strict = v.as_bool().expect("strict is a boolean"),
                "indentSize" => opts.indent = v.as_u64().expect("indentSize is a number") as usize,
                other => panic!("unknown fixture option {other}"),
            }
        }
    }
    opts
}

#[test]
fn spec_v4_decode_fixtures() {
    let doc: Value = serde_json::from_slice(&std::fs::read(SPEC_VECTORS).expect("read vectors/toon_spec.json")).expect("vectors JSON");
    let mut cases = 0;
    let mut errors = 0;
    let mut changed_seen = 0;
    let mut failures = Vec::new();
    for test in doc["decode"].as_array().expect("decode cases") {
        cases += 1;
        let what = format!("{} / {}", test["file"].as_str().unwrap_or("?"), test["name"].as_str().unwrap_or("?"));
        let input = test["input"].as_str().expect("input");
        let got = decode(input, &options(test));
        if let Some(message) = test.get("error").and_then(Value::as_str) {
            errors += 1;
            if test["fixture_should_error"] == false {
                changed_seen += 1;
            }
            let line = test["line"].as_u64().map(|n| n as usize);
            match &got {
                Err(e) if e.message().starts_with(message) && e.line() == line => {}
                _ => failures.push(format!("{what}: expected the error {message:?} on line {line:?}, got {got:?}")),
            }
            continue;
        }
        match got {
            Ok(v) if same(&v, &test["expected"]) => {}
            other => failures.push(format!("{what}: input {input:?}\n  expected {}\n  got {other:?}", test["expected"])),
        }
    }
    assert!(failures.is_empty(), "{} of {cases} fixture cases fail:\n{}", failures.len(), failures.join("\n"));
    assert_eq!((cases, errors, changed_seen), (343, 83, 4), "(cases, error cases, 4.4 changes) seen");
}

#[test]
fn comparison_is_not_vacuous() {
    assert!(same(&serde_json::json!({"a": [1, 2.0]}), &serde_json::json!({"a": [1.0, 2]})));
    assert!(!same(&serde_json::json!({"a": 1}), &serde_json::json!({"a": "1"})));
    assert!(!same(&serde_json::json!({"a": 1}), &serde_json::json!({"a": 1, "b": 2})));
    assert!(!same(&serde_json::json!([1, 2]), &serde_json::json!([2, 1])));
}

/// `vectors/toon_decode.json`: texts decoded by the reference 4.4.0 (see its
/// "how" field). Values must be equal; errors must be at the reference's
/// line, with a message starting with the reference's.
#[test]
fn reference_vectors() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../vectors/toon_decode.json");
    let doc: Value = serde_json::from_slice(&std::fs::read(path).expect("read vectors")).expect("vectors JSON");
    assert!(doc["how"].as_str().is_some_and(|h| !h.is_empty()), "vectors say how they were made");
    let cases = doc["cases"].as_array().expect("cases");
    assert!(cases.len() > 1000, "{} vectors", cases.len());
    let mut failures = Vec::new();
    for case in cases {
        let input = case["input"].as_str().expect("input");
        let opts = DecodeOptions {
            strict: case["strict"].as_bool().expect("strict"),
            indent: case["indent"].as_u64().expect("indent") as usize,
            ..Default::default()
        };
        let got = decode(input, &opts);
        let ok = match (&got, case.get("value"), case["error"].as_str()) {
            (Ok(v), Some(want), None) => same(v, want),
            (Err(e), None, Some(msg)) => e.message().starts_with(msg) && e.line() == case["line"].as_u64().map(|l| l as usize),
            _ => false,
        };
        if !ok {
            failures.push(format!(
                "{input:?} strict={} indent={}\n  reference {}\n  got {got:?}",
                opts.strict,
                opts.indent,
                case.get("value").unwrap_or(&case["error"])
            ));
        }
    }
    assert!(failures.is_empty(), "{} of {} vectors differ:\n{}", failures.len(), cases.len(), failures.join("\n"));
}

mod round_trip {
    use super::same;
    use polywire::json::Builder;
    use polywire::toon::decode::{decode, decode_with, DecodeOptions, ExpandPaths};
    use polywire::toon::encode::{encode_value, EncodeOptions, KeyFolding};
    use polywire::toon::Delimiter;
    use proptest::prelude::*;
    use serde_json::Value;
    use std::vec::Drain;

    /// Strings and keys full of what TOON must quote or escape.
    fn text() -> impl Strategy<Value = String> {
        let atom = prop::sample::select(vec![
            "a", "Ada", " ", "x y", ",", "|", "\t", ":", "\"", "\\", "#", "-", "- x", "[", "]", "{", "}", "true", "null", "05", "1e3",
            "-0", "1.5", "\n", "\r", "\u{1}", "é", "😀", "\u{feff}", "\u{a0}", ".", "0", "",
        ]);
        prop::collection::vec(atom, 0..4).prop_map(|v| v.concat())
    }

    fn json() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(Value::from),
            (-1000i64..1000).prop_map(Value::from),
            any::<f64>().prop_filter("finite", |f| f.is_finite()).prop_map(Value::from),
            text().prop_map(Value::String),
        ];
        leaf.prop_recursive(5, 64, 6, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
                prop::collection::vec((text(), inner.clone()), 0..5).prop_map(|kv| Value::Object(kv.into_iter().collect())),
                // Uniform rows, so that tabular and keyed forms appear.
                (prop::collection::vec(text(), 1..3), prop::collection::vec(prop::collection::vec(inner, 3), 1..4)).prop_map(
                    |(keys, rows)| {
                        let rows: Vec<Value> = rows
                            .into_iter()
                            .map(|r| {
                                Value::Object(
                                    keys.iter()
                                        .cloned()
                                        .zip(r.into_iter().map(|v| if v.is_object() || v.is_array() { Value::Null } else { v }))
                                        .collect(),
                                )
                            })
                            .collect();
                        Value::Array(rows)
                    }
                ),
            ]
        })
    }

    /// Writes JSON text in the order the builder calls come.
    #[derive(Default)]
    struct Writer {
        out: String,
        comma: bool,
    }

    impl Writer {
        fn put(&mut self, open: bool, text: &str) -> polywire::Result<()> {
            if std::mem::replace(&mut self.comma, !open) {
                self.out.push(',');
            }
            self.out.push_str(text);
            Ok(())
        }
    }

    impl Builder for Writer {
        type Value = ();
        type Key = ();
        type Error = polywire::Error;
        fn null(&mut self) -> polywire::Result<()> {
            self.put(false, "null")
        }
        fn bool(&mut self, v: bool) -> polywire::Result<()> {
            self.put(false, if v { "true" } else { "false" })
        }
        fn int(&mut self, i: i64) -> polywire::Result<()> {
            self.put(false, &i.to_string())
        }
        fn big_int(&mut self, digits: &str) -> polywire::Result<()> {
            self.put(false, digits)
        }
        fn float(&mut self, f: f64) -> polywire::Result<()> {
            self.put(false, &serde_json::to_string(&f).unwrap_or_default())
        }
        fn string(&mut self, s: &str) -> polywire::Result<()> {
            self.put(false, &serde_json::to_string(s).unwrap_or_default())
        }
        fn key(&mut self, s: &str) -> polywire::Result<()> {
            self.put(true, &format!("{}:", serde_json::to_string(s).unwrap_or_default()))
        }
        fn key_again(&mut self, _: &(), s: &str) -> polywire::Result<()> {
            self.key(s)
        }
        fn key_ahead(&mut self, _: &str) -> polywire::Result<()> {
            Ok(())
        }
        fn array(&mut self, _: Drain<'_, ()>) -> polywire::Result<()> {
            self.out.push(']');
            self.comma = true;
            Ok(())
        }
        fn object(&mut self, _: Drain<'_, ((), ())>) -> polywire::Result<()> {
            self.out.push('}');
            self.comma = true;
            Ok(())
        }
        fn begin_array(&mut self) -> polywire::Result<()> {
            self.put(true, "[")
        }
        fn begin_object(&mut self) -> polywire::Result<()> {
            self.put(true, "{")
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 1000, ..ProptestConfig::default() })]

        /// What the encoder writes, the strict decoder reads back.
        #[test]
        fn encode_then_decode(v in json(), indent in 1usize..5, delim in 0usize..3) {
            let delimiter = [Delimiter::Comma, Delimiter::Tab, Delimiter::Pipe][delim];
            let text = encode_value(&v, &EncodeOptions { indent, delimiter, ..Default::default() }).expect("encodes");
            let back = decode(&text, &DecodeOptions { indent, ..Default::default() });
            prop_assert!(back.as_ref().is_ok_and(|b| same(b, &v)), "{v}\n{text}\n{back:?}");
            // Every builder call comes in document order (brackets on
            // `begin_*`, a table's keys written on `key_again`): JSON text
            // written as the calls come is the value.
            let mut w = Writer::default();
            decode_with(&text, &DecodeOptions { indent, ..Default::default() }, &mut w).expect("decodes");
            let written: Value = serde_json::from_str(&w.out).expect("JSON in document order");
            prop_assert!(same(&written, &v), "{v}\n{text}\n{}", w.out);
        }

        /// Key folding on encode and path expansion on decode undo each
        /// other, for documents without dots in their keys (a literal
        /// `a.b` key is expanded too, in the reference as here).
        #[test]
        fn fold_then_expand(v in json(), chains in prop::collection::vec((prop::sample::select(vec!["a", "b", "x_1"]), 1usize..4, any::<bool>()), 0..4)) {
            fn has_dotted_key(v: &Value) -> bool {
                match v {
                    Value::Object(m) => m.iter().any(|(k, v)| k.contains('.') || has_dotted_key(v)),
                    Value::Array(a) => a.iter().any(has_dotted_key),
                    _ => false,
                }
            }
            prop_assume!(!has_dotted_key(&v));
            // Chains of single-key objects, which fold into dotted keys.
            let mut v = v;
            if let Value::Object(map) = &mut v {
                for (k, len, leaf_object) in chains {
                    let mut node = if leaf_object { serde_json::json!({"m": [1, "x"]}) } else { Value::from(1) };
                    for i in 0..len {
                        node = serde_json::json!({ format!("s{i}"): node });
                    }
                    map.insert(k.to_string(), node);
                }
            }
            let text = encode_value(&v, &EncodeOptions { key_folding: KeyFolding::Safe, ..Default::default() }).expect("encodes");
            let back = decode(&text, &DecodeOptions { expand_paths: ExpandPaths::Safe, ..Default::default() });
            prop_assert!(back.as_ref().is_ok_and(|b| same(b, &v)), "{v}\n{text}\n{back:?}");
        }
    }
}

/// `vectors/toon_decode_expand.json`: path expansion (spec v3) as the
/// reference 2.3.1 does it (see its "how" field).
#[test]
fn path_expansion_vectors() {
    use polywire::toon::decode::ExpandPaths;
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../vectors/toon_decode_expand.json");
    let doc: Value = serde_json::from_slice(&std::fs::read(path).expect("read vectors")).expect("vectors JSON");
    assert!(doc["how"].as_str().is_some_and(|h| !h.is_empty()), "vectors say how they were made");
    let cases = doc["cases"].as_array().expect("cases");
    assert!(cases.len() > 300, "{} vectors", cases.len());
    let mut failures = Vec::new();
    for case in cases {
        let input = case["input"].as_str().expect("input");
        let opts =
            DecodeOptions { strict: case["strict"].as_bool().expect("strict"), expand_paths: ExpandPaths::Safe, ..Default::default() };
        let got = decode(input, &opts);
        let ok = match (&got, case.get("value"), case["error"].as_str()) {
            (Ok(v), Some(want), None) => same(v, want),
            (Err(e), None, Some(msg)) => e.message().starts_with(msg) && e.line() == case["line"].as_u64().map(|l| l as usize),
            _ => false,
        };
        if !ok {
            failures.push(format!(
                "{input:?} strict={}\n  reference {}\n  got {got:?}",
                opts.strict,
                case.get("value").unwrap_or(&case["error"])
            ));
        }
    }
    assert!(failures.is_empty(), "{} of {} vectors differ:\n{}", failures.len(), cases.len(), failures.join("\n"));
}

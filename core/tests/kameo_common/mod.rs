//! Shared by the kameo tests here and in `kameo-parity`: the JSON form of
//! [`Value`]s in `vectors/kameo.json` and hex helpers.
//!
//! JSON null/bool/string/array/object map to themselves; an integer beyond
//! ±(2^53-1) is `{"$int": "<decimal>"}`; bytes are `{"$bytes": "<hex>"}`;
//! floats are `{"$f64": x}` / `{"$f32": x}`; a map whose keys are not all
//! plain strings is `{"$map": [[key, value], ...]}`.
#![allow(dead_code)]

use polywire::kameo::Value;
use serde_json::{json, Map, Value as J};

pub fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

pub fn unhex(s: &str) -> Vec<u8> {
    let s: String = s.chars().filter(|c| !c.is_whitespace()).collect();
    assert_eq!(s.len() & 1, 0, "odd hex length: {s}");
    (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).expect("hex")).collect()
}

const SAFE: i128 = (1 << 53) - 1;

fn plain_key(k: &Value) -> Option<&str> {
    match k {
        Value::Str(s) if !s.starts_with('$') => Some(s),
        _ => None,
    }
}

pub fn to_json(v: &Value) -> J {
    match v {
        Value::Nil => J::Null,
        Value::Bool(b) => J::Bool(*b),
        Value::Int(i) if (-SAFE..=SAFE).contains(i) => json!(*i as i64),
        Value::Int(i) => json!({"$int": i.to_string()}),
        Value::F32(f) => json!({"$f32": f}),
        Value::F64(f) => json!({"$f64": f}),
        Value::Str(s) => J::String(s.clone()),
        Value::Bytes(b) => json!({"$bytes": hex(b)}),
        Value::Array(items) => J::Array(items.iter().map(to_json).collect()),
        Value::Map(entries) => {
            let mut keys = std::collections::HashSet::new();
            if entries.iter().all(|(k, _)| plain_key(k).is_some_and(|k| keys.insert(k.to_owned()))) {
                let mut m = Map::new();
                for (k, v) in entries {
                    m.insert(plain_key(k).unwrap_or_default().to_owned(), to_json(v));
                }
                J::Object(m)
            } else {
                json!({"$map": entries.iter().map(|(k, v)| json!([to_json(k), to_json(v)])).collect::<Vec<_>>()})
            }
        }
    }
}

pub fn from_json(j: &J) -> Value {
    match j {
        J::Null => Value::Nil,
        J::Bool(b) => Value::Bool(*b),
        J::Number(n) => Value::Int(n.as_i64().map(i128::from).or(n.as_u64().map(i128::from)).expect("integer")),
        J::String(s) => Value::Str(s.clone()),
        J::Array(items) => Value::Array(items.iter().map(from_json).collect()),
        J::Object(m) => {
            if m.len() == 1 {
                let (k, v) = m.iter().next().expect("one entry");
                match k.as_str() {
                    "$int" => return Value::Int(v.as_str().expect("digits").parse().expect("integer")),
                    "$bytes" => return Value::Bytes(unhex(v.as_str().expect("hex"))),
                    "$f64" => return Value::F64(v.as_f64().expect("float")),
                    "$f32" => return Value::F32(v.as_f64().expect("float") as f32),
                    "$map" => {
                        return Value::Map(v.as_array().expect("entries").iter().map(|e| (from_json(&e[0]), from_json(&e[1]))).collect())
                    }
                    _ => {}
                }
            }
            Value::Map(m.iter().map(|(k, v)| (Value::Str(k.clone()), from_json(v))).collect())
        }
    }
}

pub fn vectors_path() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../vectors/kameo.json")
}

//! MessagePack payloads: polywire's `pack` of a value must equal
//! `rmp_serde::to_vec_named` of the Rust data it mirrors, `rmp_serde` must
//! read polywire's bytes back, and `unpack` must read rmp_serde's.

use super::common::{hex, to_json};
use polywire::kameo::msgpack::{pack, unpack};
use polywire::kameo::Value;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value as J};
use std::collections::BTreeMap;
use std::fmt::Debug;

#[derive(Serialize, Deserialize, Debug, PartialEq)]
enum Mode {
    Fast,
    Slow(u8),
    Custom { level: i8 },
    Pair(u8, String),
}

#[derive(Serialize, Deserialize, Debug, PartialEq)]
struct Unit;

#[derive(Serialize, Deserialize, Debug, PartialEq)]
struct Meters(u16);

#[derive(Serialize, Deserialize, Debug, PartialEq)]
struct Inner {
    name: String,
    ratio: f64,
}

#[derive(Serialize, Deserialize, Debug, PartialEq)]
struct Inc {
    amount: u32,
}

#[derive(Serialize, Deserialize, Debug, PartialEq)]
struct Everything {
    amount: u32,
    by: i64,
    label: String,
    tags: Vec<String>,
    modes: Vec<Mode>,
    maybe: Option<u8>,
    none: Option<u8>,
    unit: (),
    pair: (u8, String),
    nested: Inner,
    #[serde(with = "serde_bytes")]
    blob: Vec<u8>,
    raw: Vec<u8>,
    small: f32,
    map: BTreeMap<u32, bool>,
    flag: bool,
    unit_struct: Unit,
    big: u64,
    neg: i64,
    newtype: Meters,
    letter: char,
}

fn s(x: &str) -> Value {
    Value::str(x)
}

fn i(x: i128) -> Value {
    Value::Int(x)
}

fn everything() -> (Everything, Value) {
    let rust = Everything {
        amount: 5,
        by: -3,
        label: "zähler 🦀".into(),
        tags: vec!["a".into(), "".into()],
        modes: vec![Mode::Fast, Mode::Slow(200), Mode::Custom { level: -100 }, Mode::Pair(1, "x".into())],
        maybe: Some(7),
        none: None,
        unit: (),
        pair: (255, "y".into()),
        nested: Inner { name: "n".into(), ratio: 0.1 },
        blob: vec![0, 1, 255],
        raw: vec![0, 1, 255],
        small: 1.5,
        map: BTreeMap::from([(1, true), (300, false)]),
        flag: true,
        unit_struct: Unit,
        big: u64::MAX,
        neg: i64::MIN,
        newtype: Meters(65535),
        letter: 'é',
    };
    let value = Value::map([
        ("amount", i(5)),
        ("by", i(-3)),
        ("label", s("zähler 🦀")),
        ("tags", Value::Array(vec![s("a"), s("")])),
        (
            "modes",
            Value::Array(vec![
                s("Fast"),
                Value::variant("Slow", i(200)),
                Value::variant("Custom", Value::map([("level", i(-100))])),
                Value::variant("Pair", Value::Array(vec![i(1), s("x")])),
            ]),
        ),
        ("maybe", i(7)),
        ("none", Value::Nil),
        ("unit", Value::Nil),
        ("pair", Value::Array(vec![i(255), s("y")])),
        ("nested", Value::map([("name", s("n")), ("ratio", Value::F64(0.1))])),
        ("blob", Value::Bytes(vec![0, 1, 255])),
        ("raw", Value::Array(vec![i(0), i(1), i(255)])),
        ("small", Value::F32(1.5)),
        ("map", Value::Map(vec![(i(1), Value::Bool(true)), (i(300), Value::Bool(false))])),
        ("flag", Value::Bool(true)),
        ("unit_struct", Value::Array(vec![])),
        ("big", Value::Int(u64::MAX as i128)),
        ("neg", Value::Int(i64::MIN as i128)),
        ("newtype", i(65535)),
        ("letter", s("é")),
    ]);
    (rust, value)
}

fn check<T: Serialize + DeserializeOwned + PartialEq + Debug>(name: &str, rust: T, value: Value, out: Option<&mut Vec<J>>) {
    let theirs = rmp_serde::to_vec_named(&rust).expect("rmp_serde writes it");
    let ours = pack(&value).expect("we pack it");
    assert_eq!(hex(&ours), hex(&theirs), "msgpack {name}: bytes differ");
    assert_eq!(unpack(&theirs).expect("we unpack rmp_serde's bytes"), value, "msgpack {name}");
    let back: T = rmp_serde::from_slice(&ours).expect("rmp_serde reads ours");
    assert_eq!(back, rust, "msgpack {name}");
    if let Some(out) = out {
        out.push(json!({"name": name, "value": to_json(&value), "hex": hex(&theirs)}));
    }
}

pub fn msgpack() -> J {
    let mut out = Vec::new();
    let (rust, value) = everything();
    check("struct_with_every_kind", rust, value, Some(&mut out));
    check("inc", Inc { amount: 5 }, Value::map([("amount", i(5))]), Some(&mut out));
    check("unit_variant", Mode::Fast, s("Fast"), Some(&mut out));
    check("newtype_variant", Mode::Slow(3), Value::variant("Slow", i(3)), Some(&mut out));
    check("struct_variant", Mode::Custom { level: 9 }, Value::variant("Custom", Value::map([("level", i(9))])), Some(&mut out));
    check("tuple_variant", Mode::Pair(1, "z".into()), Value::variant("Pair", Value::Array(vec![i(1), s("z")])), Some(&mut out));
    check("none", Option::<u8>::None, Value::Nil, Some(&mut out));
    check("unit", (), Value::Nil, Some(&mut out));
    check("unit_struct", Unit, Value::Array(vec![]), Some(&mut out));
    check("string_reply", "insufficient funds".to_owned(), s("insufficient funds"), Some(&mut out));
    check("result_ok", Result::<u8, String>::Ok(1), Value::variant("Ok", i(1)), Some(&mut out));
    check("result_err", Result::<u8, String>::Err("no".into()), Value::variant("Err", s("no")), Some(&mut out));
    check("f64", -2.5f64, Value::F64(-2.5), Some(&mut out));
    check("f32", 0.25f32, Value::F32(0.25), Some(&mut out));
    check("bool", false, Value::Bool(false), Some(&mut out));
    for v in [0u64, 127, 128, 255, 256, 65535, 65536, u32::MAX as u64, u32::MAX as u64 + 1, u64::MAX] {
        check(&format!("u64_{v}"), v, Value::Int(v as i128), Some(&mut out));
    }
    for v in [-1i64, -32, -33, -128, -129, -32768, -32769, i32::MIN as i64, i32::MIN as i64 - 1, i64::MIN, 5] {
        check(&format!("i64_{v}"), v, Value::Int(v as i128), Some(&mut out));
    }
    for n in [0usize, 31, 32, 255, 256] {
        check(&format!("str_{n}"), "x".repeat(n), Value::Str("x".repeat(n)), Some(&mut out));
    }
    for n in [65535usize, 65536] {
        check(&format!("str_{n}"), "x".repeat(n), Value::Str("x".repeat(n)), None);
    }
    for n in [0usize, 255, 256] {
        check(&format!("bin_{n}"), serde_bytes::ByteBuf::from(vec![7u8; n]), Value::Bytes(vec![7; n]), Some(&mut out));
    }
    for n in [65535usize, 65536] {
        check(&format!("bin_{n}"), serde_bytes::ByteBuf::from(vec![7u8; n]), Value::Bytes(vec![7; n]), None);
    }
    for n in [15usize, 16] {
        check(&format!("array_{n}"), vec![true; n], Value::Array(vec![Value::Bool(true); n]), Some(&mut out));
        let m: BTreeMap<u8, ()> = (0..n as u8).map(|k| (k, ())).collect();
        let v = Value::Map((0..n as i128).map(|k| (i(k), Value::Nil)).collect());
        check(&format!("map_{n}"), m, v, Some(&mut out));
    }
    for n in [65535usize, 65536] {
        check(&format!("array_{n}"), vec![0u8; n], Value::Array(vec![i(0); n]), None);
    }
    J::Array(out)
}

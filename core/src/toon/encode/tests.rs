//! The encoder's unit tests (the spec fixtures and the vectors are in
//! `core/tests/`).

use super::scalars::{push_f64, push_quoted, push_string};
#[cfg(all(target_arch = "x86_64", not(any(polywire_portable, feature = "portable"))))]
use super::scalars::{push_long_string_avx2, push_long_string_sse2};
use super::*;
use crate::toon::syntax::{any_in_table, is_safe_unquoted, quote_table_for};

use serde_json::json;

fn enc(v: serde_json::Value) -> String {
    encode_value(&v, &EncodeOptions::default()).expect("encodes")
}

fn enc_with(v: serde_json::Value, delimiter: Delimiter, indent: usize) -> String {
    let opts = EncodeOptions { delimiter, indent, ..EncodeOptions::default() };
    encode_value(&v, &opts).expect("encodes")
}

#[test]
fn quote_scans_agree_with_the_tables() {
    // Every byte value at every offset of lengths around the 8-byte
    // steps, for each delimiter.
    for delim in [b',', b'\t', b'|'] {
        let table = quote_table_for(delim);
        for len in 1..40 {
            for at in 0..len {
                for byte in 0..=255u8 {
                    let mut b = vec![b'a'; len];
                    b[at] = byte;
                    let expected = table[byte as usize];
                    assert_eq!(any_in_table(&b, table), expected, "{delim} {len} {at} {byte}");
                }
            }
        }
    }
}

/// `push_string` as the reference decides and escapes, without the
/// one-pass path for long strings.
fn push_string_slowly(out: &mut String, s: &str, delim: u8) {
    if is_safe_unquoted(s, quote_table_for(delim)) {
        out.push_str(s);
    } else {
        push_quoted(out, s);
    }
}

#[test]
fn long_strings_in_one_pass_agree_with_the_scans() {
    // Every ASCII character and some wider ones, at every offset of
    // lengths around the 16- and 32-byte steps, after some text, for each
    // delimiter; and strings that need quotes only for their ends or
    // for looking like a number.
    let chars = (0u8..0x80).map(char::from).chain(['\u{e9}', '\u{20ac}', '\u{1f600}', '\u{feff}']);
    let chars: Vec<char> = chars.collect();
    for delim in [b',', b'\t', b'|'] {
        let check = |s: &str| {
            let (mut fast, mut slow) = ("ab".to_owned(), "ab".to_owned());
            push_string(&mut fast, s, quote_table_for(delim), delim);
            push_string_slowly(&mut slow, s, delim);
            assert_eq!(fast, slow, "{delim} {s:?}");
            // Each vector width on its own, whichever `push_string` took.
            #[cfg(all(target_arch = "x86_64", not(any(polywire_portable, feature = "portable"))))]
            {
                if s.len() >= 16 {
                    let mut sse2 = "ab".to_owned();
                    push_long_string_sse2(&mut sse2, s, delim);
                    assert_eq!(sse2, slow, "SSE2 {delim} {s:?}");
                }
                if s.len() >= 32 && std::is_x86_feature_detected!("avx2") {
                    let mut avx2 = "ab".to_owned();
                    // SAFETY: AVX2 is present.
                    unsafe { push_long_string_avx2(&mut avx2, s, delim) };
                    assert_eq!(avx2, slow, "AVX2 {delim} {s:?}");
                }
            }
        };
        for len in (1..50).chain(60..70) {
            for at in 0..len {
                for &c in &chars {
                    let mut s: String = "a".repeat(at);
                    s.push(c);
                    s.push_str(&"a".repeat(len - at - 1));
                    check(&s);
                    // A second character to escape after the first.
                    s.push('"');
                    check(&s);
                }
            }
        }
        for s in [
            "-aaaaaaaaaaaaaaaaaa",
            " aaaaaaaaaaaaaaaaaa",
            "aaaaaaaaaaaaaaaaaa ",
            "#aaaaaaaaaaaaaaaaaa",
            "1234567890123456789",
            "-1.5e+123456789012",
            "12345678901234567a",
        ] {
            check(s);
        }
    }
}

#[test]
fn root_forms() {
    assert_eq!(enc(json!({})), "");
    assert_eq!(enc(json!([])), "[]");
    assert_eq!(enc(json!("")), "\"\"");
    assert_eq!(enc(json!("\u{feff}x")), "\"\u{feff}x\"");
    assert_eq!(enc(json!({"k": "\u{feff}x"})), "k: \u{feff}x");
    assert_eq!(enc(json!(null)), "null");
    assert_eq!(enc(json!([1, "a"])), "[2]: 1,a");
}

#[test]
fn numbers_in_ecmascript_form() {
    let v: serde_json::Value = crate::json::parse(
        b"[1.0, -0.0, 1e21, 1e20, 1e-7, 0.000001, 5e-324, 18446744073709551615, -9223372036854775808]",
        Default::default(),
    )
    .expect("parses");
    assert_eq!(enc(v), "[9]: 1,0,1e+21,100000000000000000000,1e-7,0.000001,5e-324,18446744073709551615,-9223372036854775808");
    let mut out = String::new();
    push_f64(&mut out, f64::NAN);
    push_f64(&mut out, f64::NEG_INFINITY);
    push_f64(&mut out, -0.0);
    assert_eq!(out, "nullnull0");
}

/// `push_f64` against ryu-js (ECMAScript Number-to-string) after the
/// reference's normalisation.
fn check_f64(f: f64) {
    let expected = if !f.is_finite() {
        "null".to_owned()
    } else if f == 0.0 {
        "0".to_owned()
    } else {
        ryu_js::Buffer::new().format_finite(f).to_owned()
    };
    let mut out = String::new();
    push_f64(&mut out, f);
    assert_eq!(out, expected, "{f:e} ({:#x})", f.to_bits());
}

#[test]
fn integers_at_the_edges_of_the_integer_path() {
    for base in [1i64 << 53, 1 << 60, 1_000_000_000_000_000_000, i64::MAX] {
        for d in -4..=4 {
            let f = base.saturating_add(d) as f64;
            check_f64(f);
            check_f64(-f);
            check_f64(f64::from_bits(f.to_bits() + 1));
            check_f64(f64::from_bits(f.to_bits() - 1));
        }
    }
    for f in [1e21, 1e22, -1e21, 9.999999999999999e20, 2f64.powi(63), -(2f64.powi(63)), 0.5, -0.0, f64::MIN_POSITIVE] {
        check_f64(f);
    }
}

proptest::proptest! {
    #[test]
    fn push_f64_is_ecmascript(bits: u64, int in -(1i64 << 55)..(1i64 << 55)) {
        check_f64(f64::from_bits(bits));
        check_f64(int as f64);
    }
}

#[test]
fn string_quoting() {
    let cases = [
        ("a b", "a b"),
        (" a", "\" a\""),
        ("a\t", "\"a\\t\""),
        ("true", "\"true\""),
        ("True", "True"),
        ("-1e+5", "\"-1e+5\""),
        ("+1.5E3", "\"+1.5E3\""),
        ("05", "\"05\""),
        ("1.", "1."),
        (".5", ".5"),
        ("1e", "1e"),
        ("-x", "\"-x\""),
        ("#x", "\"#x\""),
        ("x#", "x#"),
        ("a:b", "\"a:b\""),
        ("a,b", "\"a,b\""),
        ("a|b", "a|b"),
        ("[x]", "\"[x]\""),
        ("q\"\\", "\"q\\\"\\\\\""),
        ("\u{1}\u{8}\u{c}\r\n\u{7f}", "\"\\u0001\\u0008\\u000c\\r\\n\u{7f}\""),
        ("日本 😀", "日本 😀"),
    ];
    for (s, want) in cases {
        assert_eq!(enc(json!({ "k": s })), format!("k: {want}"), "{s:?}");
    }
    assert_eq!(enc_with(json!(["a|b", "a,b"]), Delimiter::Pipe, 2), "[2|]: \"a|b\"|a,b");
    assert_eq!(enc_with(json!(["a\tb", "a,b"]), Delimiter::Tab, 2), "[2\t]: \"a\\tb\"\ta,b");
}

#[test]
fn key_quoting() {
    assert_eq!(enc(json!({"a.b_1": 1, "1a": 2, "": 3, "a-b": 4, "é": 5})), "a.b_1: 1\n\"1a\": 2\n\"\": 3\n\"a-b\": 4\n\"é\": 5");
}

#[test]
fn keys_in_javascript_order() {
    assert_eq!(
        enc(json!({"b": 1, "10": 2, "a": 3, "2": 4, "01": 5, "4294967295": 6})),
        "\"2\": 4\n\"10\": 2\nb: 1\na: 3\n\"01\": 5\n\"4294967295\": 6"
    );
    // Tabular fields follow the first row's JavaScript order too.
    assert_eq!(enc(json!([{"x": 1, "1": 2}, {"1": 3, "x": 4}])), "[2]{\"1\",x}:\n  2,1\n  3,4");
}

#[test]
fn tabular_rows_in_any_key_order() {
    assert_eq!(enc(json!({"t": [{"a": 1, "b": 2}, {"b": 3, "a": 4}]})), "t[2]{a,b}:\n  1,2\n  4,3");
    // A missing or extra key, or a non-primitive cell, breaks the table.
    assert_eq!(enc(json!([{"a": 1}, {"b": 1}])), "[2]:\n  - a: 1\n  - b: 1");
    assert_eq!(enc(json!([{"a": 1}, {"a": [1]}])), "[2]:\n  - a: 1\n  - a[1]: 1");
}

#[test]
fn nested_field_groups_and_keyed_objects() {
    assert_eq!(
        enc_with(json!({"o": [{"id": 1, "c": {"n": "A", "k": 1}}, {"id": 2, "c": {"k": 2, "n": "B"}}]}), Delimiter::Pipe, 1),
        "o[2|]{id|c{n|k}}:\n 1|A|1\n 2|B|2"
    );
    assert_eq!(enc(json!({"s": {"x": {"h": "a", "p": 1}, "y": {"h": "b", "p": 2}}})), "s[2:]{h,p}:\n  x: a,1\n  y: b,2");
    assert_eq!(enc_with(json!({"x": {"p": 1}, "y": {"p": 2}}), Delimiter::Tab, 2), "[2:\t]{p}:\n  x: 1\n  y: 2");
    // One entry, or an empty object value: ordinary nesting.
    assert_eq!(enc(json!({"s": {"x": {"p": 1}}})), "s:\n  x:\n    p: 1");
    assert_eq!(enc(json!({"s": {"x": {"p": 1}, "y": {}}})), "s:\n  x:\n    p: 1\n  y:");
}

#[test]
fn list_items() {
    assert_eq!(
        enc(json!([1, [2, 3], [], {}, {"a": [{"b": 1}, {"b": 2}], "c": 1}, [[1], {"d": 1}]])),
        "[6]:\n  - 1\n  - [2]: 2,3\n  - [0]:\n  -\n  - a[2]{b}:\n      1\n      2\n    c: 1\n  - [2]:\n    - [1]: 1\n    - d: 1"
    );
    assert_eq!(enc(json!([[1, 2], []])), "[2]:\n  - [2]: 1,2\n  - [0]:");
    assert_eq!(enc(json!([{"a": []}, {"a": {}}])), "[2]:\n  - a: []\n  - a:");
}

#[test]
fn indent_option() {
    let v = json!({"a": {"b": [{"c": 1, "d": [1]}]}});
    assert_eq!(enc_with(v.clone(), Delimiter::Comma, 0), "a:\nb[1]:\n- c: 1\nd[1]: 1");
    assert_eq!(enc_with(v, Delimiter::Comma, 3), "a:\n   b[1]:\n      - c: 1\n         d[1]: 1");
    let e = encode_value(&json!(1), &EncodeOptions { indent: MAX_INDENT + 1, ..Default::default() }).expect_err("indent too large");
    assert_eq!(e.code(), "TOON_INVALID_OPTION");
}

#[test]
fn depth_is_bounded() {
    // Debug builds take about 2.7 KiB of stack per level (release about
    // 0.5 KiB): more than the 2 MiB of a test thread at MAX_DEPTH.
    std::thread::Builder::new().stack_size(32 << 20).spawn(depth_is_bounded_body).expect("spawn").join().expect("no panic");
}

fn depth_is_bounded_body() {
    fn nested(levels: usize, object: bool) -> serde_json::Value {
        let mut v = json!(1);
        for _ in 0..levels {
            v = if object {
                serde_json::Value::Object([("k".to_string(), v)].into_iter().collect())
            } else {
                serde_json::Value::Array(vec![json!(0), v])
            };
        }
        v
    }
    // `levels` containers around a leaf: the innermost sits at level
    // `levels - 1`.
    for object in [true, false] {
        assert!(encode_value(&nested(MAX_DEPTH, object), &EncodeOptions::default()).is_ok());
        let e = encode_value(&nested(MAX_DEPTH + 1, object), &EncodeOptions::default()).expect_err("too deep");
        assert_eq!(e.code(), "TOON_TOO_DEEP");
    }
    // Deep uniform rows recurse through nested field groups.
    let mut row = json!(1);
    for _ in 0..MAX_DEPTH + 5 {
        row = serde_json::Value::Object([("k".to_string(), row)].into_iter().collect());
    }
    let e = encode_value(&json!([row, row]), &EncodeOptions::default()).expect_err("too deep");
    assert_eq!(e.code(), "TOON_TOO_DEEP");
}

fn fold(v: serde_json::Value, flatten_depth: usize) -> String {
    let opts = EncodeOptions { key_folding: KeyFolding::Safe, flatten_depth, ..EncodeOptions::default() };
    encode_value(&v, &opts).expect("encodes")
}

#[test]
fn key_folding() {
    let m = usize::MAX;
    assert_eq!(fold(json!({"a": {"b": {"c": 1}}}), m), "a.b.c: 1");
    assert_eq!(fold(json!({"a": {"b": {"c": {}}}}), m), "a.b.c:");
    assert_eq!(fold(json!({"a": {"b": [1, 2]}}), m), "a.b[2]: 1,2");
    assert_eq!(fold(json!({"a": {"b": {"c": {"d": 1}}}}), 2), "a.b:\n  c:\n    d: 1");
    assert_eq!(fold(json!({"a": {"b": {"c": {"d": 1}}}}), 3), "a.b.c:\n  d: 1");
    assert_eq!(fold(json!({"a": {"b": 1}}), 1), "a:\n  b: 1");
    // Segments must be identifiers (no dots, nothing quoted).
    assert_eq!(fold(json!({"a": {"b.c": {"d": 1}}}), m), "a:\n  b.c:\n    d: 1");
    assert_eq!(fold(json!({"a": {"x-y": 1}}), m), "a:\n  \"x-y\": 1");
    // No fold onto a sibling key, nor onto a dotted root key at that path.
    assert_eq!(fold(json!({"a": {"b": 1}, "a.b": 2}), m), "a:\n  b: 1\na.b: 2");
    assert_eq!(fold(json!({"x.a.b": 1, "x": {"y": 1, "a": {"b": 2}}}), m), "x.a.b: 1\nx:\n  y: 1\n  a:\n    b: 2");
    assert_eq!(fold(json!({"x.a.b": 1, "y": {"y": 1, "a": {"b": 2}}}), m), "x.a.b: 1\ny:\n  y: 1\n  a.b: 2");
    // The remaining depth shrinks along a folded chain only.
    assert_eq!(fold(json!({"a": {"b": {"c": 1, "d": {"e": {"f": 1}}}}}), 2), "a.b:\n  c: 1\n  d:\n    e:\n      f: 1");
    assert_eq!(fold(json!({"a": {"c": 1, "d": {"e": {"f": 1}}}}), 2), "a:\n  c: 1\n  d.e:\n    f: 1");
    // A folded key takes v4 forms like any key.
    assert_eq!(fold(json!({"a": {"b": {"x": {"p": 1}, "y": {"p": 2}}}}), m), "a.b[2:]{p}:\n  x: 1\n  y: 2");
    // In list items the first key stays; the others fold, with every
    // key of the item as a sibling.
    assert_eq!(fold(json!([{"a": {"b": 1}, "c": {"d": 1}, "z": 1}, 1]), m), "[2]:\n  - a:\n      b: 1\n    c.d: 1\n    z: 1\n  - 1");
    assert_eq!(fold(json!([{"a.b": 1, "a": {"b": 2}}, 1]), m), "[2]:\n  - a.b: 1\n    a:\n      b: 2\n  - 1");
    // Off by default.
    assert_eq!(enc(json!({"a": {"b": 1}})), "a:\n  b: 1");
}

#[test]
fn folding_depth_is_bounded() {
    std::thread::Builder::new().stack_size(32 << 20).spawn(folding_depth_is_bounded_body).expect("spawn").join().expect("no panic");
}

fn folding_depth_is_bounded_body() {
    let mut v = json!(1);
    for _ in 0..MAX_DEPTH + 1 {
        v = serde_json::Value::Object([("k".to_string(), v)].into_iter().collect());
    }
    let opts = EncodeOptions { key_folding: KeyFolding::Safe, ..EncodeOptions::default() };
    let e = encode_value(&v, &opts).expect_err("too deep");
    assert_eq!(e.code(), "TOON_TOO_DEEP");
    let inner = v["k"].clone();
    let text = encode_value(&inner, &opts).expect("at the limit");
    assert_eq!(text.len(), "k".len() * MAX_DEPTH + (MAX_DEPTH - 1) + ": 1".len());
}

/// Strings starting with `raw:` stand for raw text (as the reference's
/// `rawString` would be returned by a replacer).
#[derive(Clone)]
struct Rawish<'a>(&'a serde_json::Value);

impl<'a> EncodeValue<'a> for Rawish<'a> {
    type Error = Error;
    fn kind(&self) -> Result<Kind<'_>> {
        match self.0.as_str().and_then(|s| s.strip_prefix("raw:")) {
            Some(raw) => Ok(Kind::Raw(raw)),
            None => (&self.0).kind(),
        }
    }
    fn array_len(&self) -> usize {
        (&self.0).array_len()
    }
    fn array_items(&self) -> impl Iterator<Item = Result<Self>> + '_ {
        self.0.as_array().into_iter().flatten().map(|v| Ok(Rawish(v)))
    }
    fn object_len(&self) -> usize {
        (&self.0).object_len()
    }
    fn object_entries(&self) -> impl Iterator<Item = Result<(&'a str, Self)>> + '_ {
        self.0.as_object().into_iter().flatten().map(|(k, v)| Ok((k.as_str(), Rawish(v))))
    }
    fn object_get(&self, key: &str) -> Result<Option<Self>> {
        Ok(self.0.get(key).map(Rawish))
    }
}

#[test]
fn raw_text_is_a_verbatim_primitive() {
    // Expected texts from the reference with a replacer returning
    // `rawString(value.slice(4))` for such strings.
    let cases = [
        (json!([{"a": "raw:x,y"}, {"a": "raw:"}]), "[2]{a}:\n  x,y\n  "),
        (json!({"k": "raw:\"q\"", "l": ["raw:1", "b"]}), "k: \"q\"\nl[2]: 1,b"),
        (json!("raw:"), ""),
        (json!("raw:\u{feff}z"), "\u{feff}z"),
        (json!({"m": {"x": {"p": "raw:1"}, "y": {"p": 2}}}), "m[2:]{p}:\n  x: 1\n  y: 2"),
    ];
    for (v, want) in cases {
        assert_eq!(encode(&Rawish(&v), &EncodeOptions::default()).expect("encodes"), want, "{v}");
    }
}

/// A handle whose values change between walks (as a Python object may
/// while user code runs): the encoder must fail cleanly, not panic.
#[derive(Clone)]
/// A value whose strings turn into objects after `.2` calls of `kind`.
struct Shifty<'a>(&'a serde_json::Value, &'a std::cell::Cell<usize>, usize);

impl<'a> EncodeValue<'a> for Shifty<'a> {
    type Error = Error;
    fn kind(&self) -> Result<Kind<'_>> {
        self.1.set(self.1.get() + 1);
        if self.1.get() > self.2 && self.0.is_string() {
            return Ok(Kind::Object);
        }
        (&self.0).kind()
    }
    fn array_len(&self) -> usize {
        self.0.as_array().map_or(0, Vec::len)
    }
    fn array_items(&self) -> impl Iterator<Item = Result<Self>> + '_ {
        self.0.as_array().into_iter().flatten().map(|v| Ok(Shifty(v, self.1, self.2)))
    }
    fn object_len(&self) -> usize {
        self.0.as_object().map_or(0, serde_json::Map::len)
    }
    fn object_entries(&self) -> impl Iterator<Item = Result<(&'a str, Self)>> + '_ {
        self.0.as_object().into_iter().flatten().map(|(k, v)| Ok((k.as_str(), Shifty(v, self.1, self.2))))
    }
    fn object_get(&self, key: &str) -> Result<Option<Self>> {
        Ok(self.0.get(key).map(|v| Shifty(v, self.1, self.2)))
    }
}

/// Tables written in one pass take their text back when a later row
/// does not fit (expected texts from the reference 4.4.0's `encode`).
#[test]
fn one_pass_tables_roll_back() {
    let cases = [
        ("[{\"a\":1,\"b\":2},{\"a\":3}]", "[2]:\n  - a: 1\n    b: 2\n  - a: 3"),
        ("[{\"a\":1},{\"a\":{\"x\":1}}]", "[2]:\n  - a: 1\n  - a:\n      x: 1"),
        ("[{\"a\":1},2]", "[2]:\n  - a: 1\n  - 2"),
        ("[{\"a\":1,\"b\":2},{\"b\":3,\"a\":4}]", "[2]{a,b}:\n  1,2\n  4,3"),
        ("{\"k\":[{\"a\":1},{\"a\":[1]}],\"z\":1}", "k[2]:\n  - a: 1\n  - a[1]: 1\nz: 1"),
        (
            "[{\"x\":[{\"a\":1},{\"b\":2}],\"y\":[{\"a\":1},{\"a\":2}]}]",
            "[1]:\n  - x[2]:\n      - a: 1\n      - b: 2\n    y[2]{a}:\n      1\n      2",
        ),
        ("[{\"a\":1},{\"a\":1,\"b\":2}]", "[2]:\n  - a: 1\n  - a: 1\n    b: 2"),
        ("{\"t\":[{\"a\":\"x\"},{\"b\":\"y\"}]}", "t[2]:\n  - a: x\n  - b: y"),
        ("[{\"a\":1},{\"a\":{}}]", "[2]:\n  - a: 1\n  - a:"),
        ("[{\"a\":{\"p\":1}},{\"a\":2}]", "[2]:\n  - a:\n      p: 1\n  - a: 2"),
        ("[{\"a\":1},[1]]", "[2]:\n  - a: 1\n  - [1]: 1"),
        ("[{\"a\":{\"x\":1}},{\"a\":{\"y\":1}}]", "[2]:\n  - a:\n      x: 1\n  - a:\n      y: 1"),
        ("[{\"a\":{\"x\":1},\"b\":2},{\"a\":{\"x\":3},\"b\":4}]", "[2]{a{x},b}:\n  1,2\n  3,4"),
        ("[{\"a\":{\"x\":1}},{\"a\":{\"x\":{\"z\":1}}}]", "[2]:\n  - a:\n      x: 1\n  - a:\n      x:\n        z: 1"),
        ("[{\"a\":{\"x\":{\"z\":1}}},{\"a\":{\"x\":{\"z\":2}}}]", "[2]{a{x{z}}}:\n  1\n  2"),
        ("[{\"a\":{\"x\":1}},{\"a\":{}}]", "[2]:\n  - a:\n      x: 1\n  - a:"),
        ("[{\"a\":{\"x\":1,\"y\":2}},{\"a\":{\"y\":3,\"x\":4}}]", "[2]{a{x,y}}:\n  1,2\n  4,3"),
        ("[{\"a\":{\"x\":1}},{\"a\":{\"x\":1,\"y\":2}}]", "[2]:\n  - a:\n      x: 1\n  - a:\n      x: 1\n      y: 2"),
        ("[{\"a\":{\"x\":1}},{\"a\":5}]", "[2]:\n  - a:\n      x: 1\n  - a: 5"),
        ("[{\"k\":[{\"a\":{\"b\":1},\"c\":2}]}]", "[1]:\n  - k[1]{a{b},c}:\n      1,2"),
    ];
    for (input, expected) in cases {
        let v: serde_json::Value = serde_json::from_str(input).expect("json");
        assert_eq!(enc(v), expected, "{input}");
    }
}

/// Objects with array-index keys make the walk start over with keys
/// scanned first (expected texts from the reference 4.4.0's `encode`).
#[test]
fn index_keys_restart_the_walk() {
    let cases = [
        ("{\"a\":{\"b\":1,\"1\":2,\"0\":3},\"2\":\"x\"}", "\"2\": x\na:\n  \"0\": 3\n  \"1\": 2\n  b: 1"),
        (
            "[{\"x\":1,\"10\":2,\"9\":3},{\"y\":{\"b\":1,\"0\":[1,2]}}]",
            "[2]:\n  - \"9\": 3\n    \"10\": 2\n    x: 1\n  - y:\n      \"0\"[2]: 1,2\n      b: 1",
        ),
        ("{\"k\":[{\"b\":1,\"0\":2},{\"b\":3,\"0\":4}]}", "k[2]{\"0\",b}:\n  2,1\n  4,3"),
        ("{\"01\":1,\"4294967295\":2,\"4294967294\":3,\"z\":4}", "\"4294967294\": 3\n\"01\": 1\n\"4294967295\": 2\nz: 4"),
        (
            "{\"a\":{\"b\":{\"c\":{\"5\":1,\"d\":2}}},\"e\":[{\"f\":{\"3\":1,\"g\":2}}]}",
            "a:\n  b:\n    c:\n      \"5\": 1\n      d: 2\ne[1]{f{\"3\",g}}:\n  1,2",
        ),
    ];
    for (input, expected) in cases {
        let v: serde_json::Value = serde_json::from_str(input).expect("json");
        assert_eq!(enc(v), expected, "{input}");
    }
}

/// `json_into` writes what `JSON.stringify(JSON.parse(input))` does
/// (expected texts from Node 20).
#[test]
fn json_into_writes_json_stringify_text() {
    let cases = [
        (r#"{"a":{"b":1,"1":2,"0":3},"2":"x"}"#, r#"{"2":"x","a":{"0":3,"1":2,"b":1}}"#),
        (
            r#"[1.5,-0,1e21,1e-7,123456789012345680000,0.1,-2.5e-300,"q\"\\\n\u0001\u001f\u007f\u2028é😀",true,false,null,[],{}]"#,
            "[1.5,0,1e+21,1e-7,123456789012345680000,0.1,-2.5e-300,\"q\\\"\\\\\\n\\u0001\\u001f\u{7f}\u{2028}é😀\",true,false,null,[],{}]",
        ),
        (r#"{"4294967294":3,"01":1,"4294967295":2,"z":[{"y":{}}]}"#, r#"{"4294967294":3,"01":1,"4294967295":2,"z":[{"y":{}}]}"#),
    ];
    for (input, expected) in cases {
        let v: serde_json::Value = serde_json::from_str(input).expect("json");
        let mut out = Vec::new();
        json_into(&&v, &mut out).expect("json_into");
        assert_eq!(String::from_utf8(out).expect("utf-8"), expected, "{input}");
    }
    let mut deep = serde_json::Value::Null;
    for _ in 0..MAX_DEPTH + 1 {
        deep = serde_json::Value::Array(vec![deep]);
    }
    let e = json_into(&&deep, &mut Vec::new()).expect_err("too deep");
    assert_eq!(e.code(), "TOON_TOO_DEEP");
}

#[test]
fn changing_values_fail_cleanly() {
    // Whenever the change happens, the encoder writes what it sees or
    // fails cleanly; some change points fall between a check and the
    // write that relies on it.
    let v = json!([{"a": "x"}, {"a": "y"}, {"a": {"b": "z"}}, ["p", "q"]]);
    let mut changed = 0;
    for after in 0..40 {
        let calls = std::cell::Cell::new(0);
        match encode(&Shifty(&v, &calls, after), &EncodeOptions::default()) {
            Ok(_) => {}
            Err(e) => {
                assert_eq!(e.code(), "TOON_VALUE_CHANGED");
                changed += 1;
            }
        }
    }
    assert!(changed > 0, "no change point was caught");
}

fn reindent(text: &str, from: usize, to: usize) -> String {
    text.split('\n')
        .map(|l| {
            let n = l.len() - l.trim_start_matches(' ').len();
            format!("{}{}", " ".repeat(n / from * to), &l[n..])
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Null, booleans, integers, any double and strings matching `strings`.
fn arb_primitive(strings: &'static str) -> impl proptest::strategy::Strategy<Value = serde_json::Value> + Clone {
    use proptest::prelude::*;
    prop_oneof![
        Just(serde_json::Value::Null),
        any::<bool>().prop_map(serde_json::Value::Bool),
        any::<i64>().prop_map(|i| json!(i)),
        any::<f64>().prop_map(|f| json!(f)),
        strings.prop_map(serde_json::Value::String),
    ]
}

fn arb_json() -> impl proptest::strategy::Strategy<Value = serde_json::Value> {
    use proptest::prelude::*;
    arb_primitive("[ a-c1:,|\"\\-#\t\n\u{1}é]{0,6}").prop_recursive(5, 64, 6, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..5).prop_map(serde_json::Value::Array),
            proptest::collection::vec(("[a-c]|[a-c1. ]{0,3}", inner), 0..5)
                .prop_map(|e| serde_json::Value::Object(e.into_iter().collect())),
        ]
    })
}

/// A `serde_json::Value` that offers [`EncodeValue::rendered_table`]
/// for every array it can (as the Node binding's packed reader does),
/// written ahead with `tables`' delimiter.
#[derive(Clone, Copy)]
struct Rendered<'a> {
    v: &'a serde_json::Value,
    tables: &'a Tables,
}

/// The rendered rows by the address of their array, and the delimiter.
struct Tables(std::collections::HashMap<usize, (String, Vec<u32>, usize)>, Delimiter);

impl Tables {
    fn new(v: &serde_json::Value, delimiter: Delimiter) -> Tables {
        let mut t = Tables(Default::default(), delimiter);
        t.render(v);
        t
    }

    fn render(&mut self, v: &serde_json::Value) {
        match v {
            serde_json::Value::Array(rows) => {
                rows.iter().for_each(|r| self.render(r));
                let Some(first) = rows.first() else { return };
                if !rows.iter().all(|r| same_shape(r, first)) {
                    return;
                }
                let cells = CellWriter::new(self.1);
                let (mut text, mut ends, mut columns) = (String::new(), Vec::new(), 0);
                for row in rows {
                    let start = text.len();
                    columns = write_leaves(row, &cells, &mut text, &mut true);
                    debug_assert!(text.len() >= start);
                    ends.push(text.len() as u32);
                }
                self.0.insert(v as *const _ as usize, (text, ends, columns));
            }
            serde_json::Value::Object(m) => m.values().for_each(|v| self.render(v)),
            _ => {}
        }
    }
}

/// Whether `row` is a table row of `first`'s shape: non-empty objects
/// with the same keys (no array index) in the same order, holding
/// primitives or (field groups) such objects in the same places.
fn same_shape(row: &serde_json::Value, first: &serde_json::Value) -> bool {
    let (Some(r), Some(f)) = (row.as_object(), first.as_object()) else { return false };
    !f.is_empty()
        && r.len() == f.len()
        && r.iter().zip(f).all(|((rk, rv), (fk, fv))| {
            rk == fk
                && array_index(rk).is_none()
                && match (rv, fv) {
                    (serde_json::Value::Object(_), serde_json::Value::Object(_)) => same_shape(rv, fv),
                    (serde_json::Value::Array(_), _) | (_, serde_json::Value::Array(_)) => false,
                    (serde_json::Value::Object(_), _) | (_, serde_json::Value::Object(_)) => false,
                    _ => true,
                }
        })
}

/// Writes the primitives of a row, depth first; their number.
fn write_leaves(row: &serde_json::Value, cells: &CellWriter, out: &mut String, first: &mut bool) -> usize {
    match row {
        serde_json::Value::Object(m) => m.values().map(|v| write_leaves(v, cells, out, first)).sum(),
        v => {
            if !std::mem::replace(first, false) {
                cells.delimit(out);
            }
            cells.primitive(out, &v.kind().unwrap()).unwrap();
            1
        }
    }
}

impl<'a> EncodeValue<'a> for Rendered<'a> {
    type Error = Error;
    fn kind(&self) -> Result<Kind<'_>> {
        self.v.kind()
    }
    fn array_len(&self) -> usize {
        self.v.array_len()
    }
    fn array_items(&self) -> impl Iterator<Item = Result<Self>> + '_ {
        self.v.as_array().into_iter().flatten().map(|v| Ok(Rendered { v, ..*self }))
    }
    fn object_len(&self) -> usize {
        self.v.object_len()
    }
    fn object_entries(&self) -> impl Iterator<Item = Result<(&'a str, Self)>> + '_ {
        let map: Option<&'a serde_json::Map<String, serde_json::Value>> = self.v.as_object();
        map.into_iter().flatten().map(|(k, v)| Ok((k.as_str(), Rendered { v, ..*self })))
    }
    fn object_get(&self, key: &str) -> Result<Option<Self>> {
        Ok(self.v.as_object().and_then(|m| m.get(key)).map(|v| Rendered { v, ..*self }))
    }
    fn rendered_table(&self) -> Option<RenderedTable<'_>> {
        let (text, ends, columns) = self.tables.0.get(&(self.v as *const _ as usize))?;
        Some(RenderedTable { columns: *columns, delimiter: self.tables.1, text, row_ends: ends })
    }
}

fn arb_rows() -> impl proptest::strategy::Strategy<Value = serde_json::Value> {
    use proptest::prelude::*;
    // Mostly primitives; now and then a container, so that some arrays
    // are not tables.
    let primitive = arb_primitive("[ a1:,|\"\t-]{0,4}");
    let cell = prop_oneof![
        5 => primitive.clone(),
        1 => Just(json!({})),
        1 => Just(json!([1])),
        // Field groups, mostly of one shape.
        2 => (primitive.clone(), primitive.clone()).prop_map(|(x, y)| json!({"g": x, "h": {"i": y}})),
        1 => primitive.prop_map(|x| json!({"g": x})),
    ];
    let keys = proptest::sample::subsequence(vec!["a", "b", "1", "c d", ""], 0..4);
    (keys, proptest::collection::vec(proptest::collection::vec(cell, 4), 0..4), 0usize..4).prop_map(|(keys, rows, context)| {
        let rows: Vec<serde_json::Value> = rows
            .into_iter()
            .map(|cells| serde_json::Value::Object(keys.iter().zip(cells).map(|(k, v)| (k.to_string(), v)).collect()))
            .collect();
        let table = serde_json::Value::Array(rows);
        match context {
            0 => table,
            1 => json!({"t": table, "n": 1}),
            2 => json!([table, 1]),
            _ => json!([{"first": table, "then": 2}]),
        }
    })
}

proptest::proptest! {
    /// Tables written from `rendered_table` are the tables the rows
    /// give; rows rendered with another delimiter are walked instead.
    #[test]
    fn rendered_tables_write_what_the_rows_do(
        v in arb_rows(),
        pipe in proptest::bool::ANY,
        rendered_pipe in proptest::bool::ANY,
        folding in proptest::bool::ANY,
    ) {
        let delimiter = |pipe| if pipe { Delimiter::Pipe } else { Delimiter::Comma };
        let opts = EncodeOptions {
            delimiter: delimiter(pipe),
            key_folding: if folding { KeyFolding::Safe } else { KeyFolding::Off },
            ..EncodeOptions::default()
        };
        let tables = Tables::new(&v, delimiter(rendered_pipe));
        proptest::prop_assert_eq!(encode(&Rendered { v: &v, tables: &tables }, &opts), encode_value(&v, &opts));
    }
}

#[test]
fn rendered_rows_are_copied_as_they_are() {
    // Rows that differ from the values show which the encoder wrote.
    let v = json!({"t": [{"a": 1, "b": "x"}, {"a": 2, "b": "y"}]});
    let mut tables = Tables::new(&v, Delimiter::Comma);
    let (text, ends, _) = tables.0.values_mut().next().unwrap();
    assert_eq!((text.as_str(), ends.as_slice()), ("1,x2,y", &[3, 6][..]));
    *text = "9,\"q\"8,z".to_owned();
    *ends = vec![5, 8];
    let opts = EncodeOptions::default();
    assert_eq!(encode(&Rendered { v: &v, tables: &tables }, &opts).unwrap(), "t[2]{a,b}:\n  9,\"q\"\n  8,z");
    // A row end beyond the text: an error, not a panic.
    tables.0.values_mut().next().unwrap().1 = vec![5, 99];
    assert!(encode(&Rendered { v: &v, tables: &tables }, &opts).is_err());
    // A row count other than the array's: the rows are walked.
    tables.0.values_mut().next().unwrap().1 = vec![5];
    assert_eq!(encode(&Rendered { v: &v, tables: &tables }, &opts).unwrap(), "t[2]{a,b}:\n  1,x\n  2,y");
}

proptest::proptest! {
    /// Content never starts with a space, so the indent option only
    /// scales each line's leading spaces; lines never end in a newline
    /// or carry a raw control character other than a tab delimiter.
    #[test]
    fn indent_only_scales_leading_spaces(
        v in arb_json(),
        pipe in proptest::bool::ANY,
        folding in proptest::bool::ANY,
        flatten_depth in 0usize..5,
    ) {
        let mut opts = EncodeOptions {
            delimiter: if pipe { Delimiter::Pipe } else { Delimiter::Tab },
            indent: 2,
            key_folding: if folding { KeyFolding::Safe } else { KeyFolding::Off },
            flatten_depth: if flatten_depth == 4 { usize::MAX } else { flatten_depth },
        };
        let two = encode_value(&v, &opts).expect("encodes");
        opts.indent = 4;
        let four = encode_value(&v, &opts).expect("encodes");
        proptest::prop_assert_eq!(reindent(&two, 2, 4), four);
        proptest::prop_assert!(!two.ends_with('\n'));
        proptest::prop_assert!(!two.bytes().any(|b| b < 0x20 && b != b'\n' && b != b'\t'));
    }
}

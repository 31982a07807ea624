//! The decoder's unit and property tests (the spec fixtures, the vectors
//! and the fuzz corpora are replayed by `core/tests/`).

use super::lines::{find2, find_byte, is_data_row, plain_cells, split_row, Cells, PlainCell};
use super::scalars::number_form;
use super::*;
use crate::json::QuickNumber;

use serde_json::json;

fn d(s: &str) -> Result<serde_json::Value> {
    decode(s, &DecodeOptions::default())
}

fn lax(s: &str) -> Result<serde_json::Value> {
    decode(s, &DecodeOptions { strict: false, ..Default::default() })
}

#[test]
fn basic_forms() {
    assert_eq!(d("").unwrap(), json!({}));
    assert_eq!(d("a: 1\nb: x y\nc: \"q\\n\"").unwrap(), json!({"a": 1, "b": "x y", "c": "q\n"}));
    assert_eq!(d("a:\n  b: true\n  c: null").unwrap(), json!({"a": {"b": true, "c": null}}));
    assert_eq!(d("[3]: 1,a,\"b\"").unwrap(), json!([1, "a", "b"]));
    assert_eq!(d("t[2]{x,y}:\n  1,2\n  3,4").unwrap(), json!({"t": [{"x": 1, "y": 2}, {"x": 3, "y": 4}]}));
    assert_eq!(d("l[2]:\n  - a: 1\n    b: 2\n  - x").unwrap(), json!({"l": [{"a": 1, "b": 2}, "x"]}));
    assert_eq!(d("m[1:]{v,g{a}}:\n  k: 1,2").unwrap(), json!({"m": {"k": {"v": 1, "g": {"a": 2}}}}));
    assert_eq!(d("hello").unwrap(), json!("hello"));
    assert_eq!(d("[]").unwrap(), json!([]));
}

#[test]
fn numbers() {
    let v = d("[9]: 42,-0,1.5,1e3,05,1e999,9223372036854775807,9223372036854775808,-0.0").unwrap();
    assert_eq!(v, json!([42, 0, 1.5, 1000.0, "05", "1e999", 9223372036854775807i64, 9223372036854775808.0, 0.0]));
    assert!(v[1].is_i64());
    assert!(v[3].is_f64());
    assert_eq!(v[8].as_f64().map(f64::is_sign_positive), Some(true));
}

#[test]
fn errors_carry_code_and_position() {
    let e = d("a:\n   b: 1").unwrap_err();
    assert_eq!((e.code(), e.line(), e.column()), ("TOON_INDENTATION", Some(2), Some(4)));
    assert_eq!(e.message(), "Indentation must be exact multiple of 2, but found 3 spaces");
    let e = d("a[3]: 1,2").unwrap_err();
    assert_eq!(e.code(), "TOON_LENGTH_MISMATCH");
    assert_eq!(e.message(), "Expected 3 inline-form values, but got 2");
    let e = d("x: 1\ny: \"a\\qb\"").unwrap_err();
    assert_eq!((e.code(), e.line(), e.column()), ("TOON_INVALID_ESCAPE", Some(2), Some(6)));
    let e = d("a: 1\na: 2").unwrap_err();
    assert_eq!(e.code(), "TOON_DUPLICATE_KEY");
    assert_eq!(lax("a: 1\na: 2").unwrap(), json!({"a": 2}));
    // A repeated empty field name goes unreported, as in the reference.
    assert_eq!(d("t[1]{\"\",\"\",a,a}:\n  1,2,3,4").unwrap(), json!({"t": [{"": 2, "a": 4}]}));
    assert_eq!(d("t[1]{a,a,\"\",\"\"}:\n  1,2,3,4").unwrap_err().code(), "TOON_DUPLICATE_FIELD");
    let e = d("a[2]:\n  - 1\n\n  - 2").unwrap_err();
    assert_eq!((e.code(), e.line(), e.column()), ("TOON_BLANK_LINE", Some(3), None));
}

#[test]
fn declared_length_does_not_allocate() {
    let e = d("a[999999999999]:\n  - 1").unwrap_err();
    assert_eq!(e.message(), "Expected 999999999999 list-form items, but got 1");
    let e = d(&format!("a[1{}]: x", "0".repeat(400))).unwrap_err();
    assert_eq!(e.message(), "Expected Infinity inline-form values, but got 1");
}

#[test]
fn nesting_is_bounded() {
    let mut s = String::new();
    for i in 0..MAX_DEPTH + 5 {
        s.push_str(&"  ".repeat(i));
        s.push_str("a:\n");
    }
    assert_eq!(d(&s).unwrap_err().code(), "TOON_TOO_DEEP");
    let (_, events) = events::tests::events_of(&s, &DecodeOptions::default(), Input::Whole);
    assert_eq!(events.unwrap_err().code(), "TOON_TOO_DEEP");
    let mut s = String::new();
    for i in 0..MAX_DEPTH - 1 {
        s.push_str(&"  ".repeat(i));
        s.push_str("a:\n");
    }
    assert!(d(&s).is_ok());
    let f = format!("t[1]{{{}x{}}}:\n  1", "a{".repeat(100), "}".repeat(100));
    assert_eq!(d(&f).unwrap_err().code(), "TOON_TOO_DEEP");
}

#[test]
fn path_expansion() {
    let x = |s: &str, strict: bool| decode(s, &DecodeOptions { strict, expand_paths: ExpandPaths::Safe, ..Default::default() });
    assert_eq!(x("a.b.c: 1\na.b.d: 2\na.e: 3", true).unwrap(), json!({"a": {"b": {"c": 1, "d": 2}, "e": 3}}));
    assert_eq!(x("data.meta.items[2]: a,b", true).unwrap(), json!({"data": {"meta": {"items": ["a", "b"]}}}));
    assert_eq!(x("t[1]{a.b,c}:\n  1,2", true).unwrap(), json!({"t": [{"a": {"b": 1}, "c": 2}]}));
    assert_eq!(x("a-b.c: 1\n1a.b: 2\na..b: 3", true).unwrap(), json!({"a-b.c": 1, "1a.b": 2, "a..b": 3}));
    assert_eq!(d("a.b: 1").unwrap(), json!({"a.b": 1}));
    // Keys written in quotes stay literal wherever they are.
    assert_eq!(
        x("\"a.b\": 1\n\"c.d\"[1]: 2\nt[1]{\"e.f\"}:\n  3\nk[1:]{v}:\n  \"g.h\": 4", true).unwrap(),
        json!({"a.b": 1, "c.d": [2], "t": [{"e.f": 3}], "k": {"g.h": {"v": 4}}})
    );
    let e = x("a.b: 1\na: 2", true).unwrap_err();
    assert_eq!((e.code(), e.line()), ("TOON_EXPANSION_CONFLICT", None));
    assert!(e.message().starts_with("Path expansion conflict at key \"a\": cannot merge object with number"));
    let e = x("a: 1\na.b: 2", true).unwrap_err();
    assert!(e.message().starts_with("Path expansion conflict at segment \"a\": expected object but found number"));
    assert_eq!(x("a.b: 1\na: 2", false).unwrap(), json!({"a": 2}));
    assert_eq!(x("a: 1\na.b: 2", false).unwrap(), json!({"a": {"b": 2}}));
    let deep = format!("{}: 1", vec!["a"; EXPAND_MAX_DEPTH].join("."));
    assert_eq!(x(&deep, true).unwrap_err().code(), "TOON_TOO_DEEP");
    let ok = format!("{}: 1", vec!["a"; EXPAND_MAX_DEPTH - 1].join("."));
    assert_eq!(x(&ok, true).unwrap().pointer(&format!("/{}", vec!["a"; EXPAND_MAX_DEPTH - 1].join("/"))), Some(&json!(1)));
    let mut lines = String::new();
    for i in 0..EXPAND_MAX_DEPTH + 1 {
        lines.push_str(&format!("{}a:\n", "  ".repeat(i)));
    }
    assert_eq!(x(&lines, true).unwrap_err().code(), "TOON_TOO_DEEP");
    assert!(d(&lines).is_ok());
}

#[test]
fn bytes_input() {
    let e = decode_bytes(b"a: 1\nb: x\xffy", &DecodeOptions::default()).unwrap_err();
    assert_eq!((e.code(), e.line(), e.column()), ("TOON_INVALID_UTF8", Some(2), Some(5)));
    assert_eq!(decode_bytes("\u{feff}a: é".as_bytes(), &DecodeOptions::default()).unwrap(), json!({"a": "é"}));
}

#[test]
fn find2_matches_naive() {
    // Every length around the word and hand-over boundaries, the
    // matches at every place, and bytes with the high bit set.
    for len in 0..80usize {
        for at in 0..=len {
            for (a, b) in [(b':', b'"'), (b'"', b'\\'), (b'\n', b'\n'), (0xC3, b','), (0x80, 0x80)] {
                let mut hay: Vec<u8> = (0..len).map(|i| [b'x', 0xA9, b' ', 0x7F, 0x01][i % 5]).collect();
                if at < len {
                    hay[at] = b;
                    if at + 3 < len {
                        hay[at + 3] = a;
                    }
                }
                let naive = hay.iter().position(|&c| c == a || c == b);
                assert_eq!(find2(&hay, a, b), naive, "{len} {at} {a} {b}");
            }
        }
    }
}

#[test]
fn find_byte_matches_naive() {
    let long = format!("{}\n{}\n\n{}", "x".repeat(70), "y".repeat(31), "z".repeat(40));
    for hay in [&b"abcdefgh\nijklmnopqrstuvwxyz\n0123456789"[..], long.as_bytes(), b"", b"\n", "é\n😀\n".as_bytes()] {
        for from in 0..=hay.len() + 1 {
            let naive = hay.get(from..).and_then(|r| r.iter().position(|&c| c == b'\n')).map(|p| p + from);
            assert_eq!(find_byte(hay, from, b'\n'), naive, "{from}");
        }
    }
}

mod props {
    use super::*;
    use proptest::prelude::*;

    /// Lines of TOON-ish tokens: keys, headers, field lists, list
    /// markers, quotes, escapes, delimiters, comments.
    fn toonish() -> impl Strategy<Value = String> {
        let token = prop::sample::select(vec![
            "a", "b", "k", "\"k\"", "\"a b\"", ":", ": ", " ", ",", "|", "\t", "[2]", "[1]", "[0]", "[2:]", "[2|]", "[1\t]", "{a,b}",
            "{a}", "{g{x}}", "- ", "-", "1", "-0", "1e5", "05", "x", "\"", "\\n", "\\u00e9", "\\ud800", "#", "[]", "{", "}", "[", "]",
            "\r", "é", "😀", "\u{feff}",
        ]);
        let indent = prop::sample::select(vec!["", "", "  ", "    ", "      ", " ", "   ", "\t", "  \t"]);
        let line = (indent, prop::collection::vec(token, 0..7)).prop_map(|(i, t)| format!("{i}{}", t.concat()));
        prop::collection::vec(line, 0..8).prop_map(|l| l.join("\n"))
    }

    fn opts(strict: bool, indent: usize) -> DecodeOptions {
        DecodeOptions { strict, indent, ..Default::default() }
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

        #[test]
        fn never_panics_and_errors_are_placed(text in toonish(), strict: bool, indent in 1usize..5) {
            if let Err(e) = decode(&text, &opts(strict, indent)) {
                prop_assert!(e.code().starts_with("TOON_"));
                let lines = text.split('\n').count();
                prop_assert!(e.line().is_some_and(|l| l >= 1 && l <= lines), "{e:?} for {lines} lines");
                prop_assert!(!e.message().is_empty());
            }
        }

        /// Strict mode only adds checks: what it accepts, non-strict
        /// mode decodes to the same value (true of the reference on the
        /// differential corpus).
        #[test]
        fn strict_acceptance_implies_same_lax_value(text in toonish(), indent in 1usize..5) {
            if let Ok(v) = decode(&text, &opts(true, indent)) {
                prop_assert_eq!(decode(&text, &opts(false, indent)).ok(), Some(v));
            }
        }

        /// The event stream describes the value `decode` gives, or ends
        /// with its error; the lines so far give a prefix of it, and an
        /// error there is the whole text's error.
        #[test]
        fn events_agree_with_decode(text in toonish(), strict: bool, indent in 1usize..5, seed: u64) {
            use super::super::events::tests::{as_doubles, assert_streams_agree, events_of, value_of};
            let o = opts(strict, indent);
            // Given in pieces, byte by byte or line by line: the same.
            assert_streams_agree(&text, &o, seed);
            let (all, r) = events_of(&text, &o, Input::Whole);
            match decode(&text, &o) {
                Ok(v) => {
                    prop_assert_eq!(r.as_ref().ok(), Some(&Progress::Done));
                    prop_assert_eq!(value_of(&all), Some(as_doubles(v)));
                }
                Err(e) => {
                    let got = r.as_ref().err().map(|g| (g.code(), g.line(), g.column(), g.message().to_string()));
                    prop_assert_eq!(got, Some((e.code(), e.line(), e.column(), e.message().to_string())));
                }
            }
            let lines: Vec<&str> = text.split('\n').collect();
            for n in 1..=lines.len() {
                let (some, rs) = events_of(&lines[..n].join("\n"), &o, Input::SoFar);
                prop_assert!(some.len() <= all.len() && some[..] == all[..some.len()], "{:?}", &lines[..n]);
                match rs {
                    Ok(p) => prop_assert_eq!(p, Progress::NeedsMore),
                    Err(e) => {
                        prop_assert_eq!(some.len(), all.len());
                        let whole = r.as_ref().err().map(|g| (g.code(), g.line(), g.column()));
                        prop_assert_eq!(whole, Some((e.code(), e.line(), e.column())));
                    }
                }
            }
        }

        /// Doubling every indentation and the indent size changes nothing
        /// but the numbers in messages.
        #[test]
        fn indentation_scales(text in toonish(), strict: bool) {
            let doubled: Vec<String> = text
                .split('\n')
                .map(|l| {
                    let n = l.len() - l.trim_start_matches(' ').len();
                    format!("{}{}", " ".repeat(2 * n), &l[n..])
                })
                .collect();
            let a = decode(&text, &opts(strict, 2));
            let b = decode(&doubled.join("\n"), &opts(strict, 4));
            prop_assert_eq!(a.as_ref().ok(), b.as_ref().ok());
            prop_assert_eq!(a.map_err(|e| (e.code(), e.line())).err(), b.map_err(|e| (e.code(), e.line())).err());
        }

        /// The value read while checking a number's form is the one the
        /// general parsers give: `i64` for an integer literal, else the
        /// correctly rounded double with `-0.0` as `0.0`.
        #[test]
        fn quick_numbers_are_exact(
            text in "-?(0|[1-9][0-9]{0,20})(\\.[0-9]{1,24})?([eE][+-]?[0-9]{1,3})?",
        ) {
            let (integer, quick) = number_form(text.as_bytes()).expect("matches the number grammar");
            prop_assert_eq!(integer, !text.contains(['.', 'e', 'E']));
            match quick {
                Some(QuickNumber::Int(i)) => prop_assert_eq!(Ok(i), text.parse::<i64>()),
                Some(QuickNumber::Float(f)) => {
                    let want = text.parse::<f64>().expect("a decimal");
                    prop_assert_eq!(f.to_bits(), if want == 0.0 { 0.0f64 } else { want }.to_bits());
                }
                None => {}
            }
        }

        /// One scan gives what `is_data_row` and `Cells` give.
        #[test]
        fn split_row_is_data_row_and_cells(
            text in "[ab:,|\t\"\\\\ ]{0,24}",
            delim in prop::sample::select(vec![b',', b'|', b'\t']),
        ) {
            let mut cells = Vec::new();
            let row = split_row(&text, delim, &mut cells);
            prop_assert_eq!(row, is_data_row(&text, delim));
            if row {
                prop_assert_eq!(cells, Cells::new(&text, delim).collect::<Vec<_>>());
            }
        }

        /// `plain_cells` gives `split_row`'s cells and verdict, and a
        /// number cell is one `number_form` reads whole, as it read it.
        #[test]
        fn plain_cells_are_split_row(
            text in "[0-9ab:.eE+,|\t\"\\ -]{0,24}",
            delim in prop::sample::select(vec![b',', b'|', b'\t']),
        ) {
            let (mut cells, mut plain) = (Vec::new(), Vec::new());
            let row = split_row(&text, delim, &mut cells);
            prop_assert_eq!(plain_cells(&text, delim, &mut plain), row);
            if row {
                let texts: Vec<&str> = plain.iter().map(|c| match *c {
                    PlainCell::Number(t, _) | PlainCell::Token(t) => t,
                }).collect();
                prop_assert_eq!(&texts, &cells);
                for c in &plain {
                    if let PlainCell::Number(t, n) = *c {
                        prop_assert_eq!(number_form(t.as_bytes()), Some((n.integer, n.quick)));
                    }
                }
            }
        }

        #[test]
        fn bytes_agree_with_text(bytes in prop::collection::vec(any::<u8>(), 0..64), strict: bool) {
            let got = decode_bytes(&bytes, &opts(strict, 2));
            match std::str::from_utf8(&bytes) {
                Ok(text) => prop_assert_eq!(got, decode(text, &opts(strict, 2))),
                Err(_) => prop_assert_eq!(got.map_err(|e| e.code()), Err("TOON_INVALID_UTF8")),
            }
        }
    }
}

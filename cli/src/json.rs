//! JSON input as JavaScript's `JSON.parse` reads it (the reference CLI is a
//! Node program; see [`crate::value`]), with the core's parser
//! (`polywire::json`); a syntax error is then located by [`json_error`],
//! which names it as V8 does, with its line and column.

use polywire::json::ParseOptions;

use crate::value::{JsBuilder, Value};
use crate::Fail;

/// The TOON encoder's error for a value nested too deeply (what encoding
/// the document would report).
pub(crate) fn too_deep() -> Fail {
    let mut deep = Value::Null;
    for _ in 0..=polywire::toon::encode::MAX_DEPTH {
        deep = Value::Array(vec![deep]);
    }
    match polywire::toon::encode::encode(&&deep, &Default::default()) {
        Err(e) => Fail::codec(e.to_string(), &e),
        Ok(_) => Fail::error("JSON nested too deeply"),
    }
}

/// Parse the JSON input text.
pub(crate) fn parse_json(text: &str) -> Result<Value, Fail> {
    // One level more than the encoder takes: what is deeper fails there,
    // with its message.
    let opts = ParseOptions { allow_nan: false, max_depth: polywire::toon::encode::MAX_DEPTH + 1, utf8_checked: true };
    polywire::json::parse_with(text.as_bytes(), opts, &mut JsBuilder::default()).map_err(|e| json_failure(text, &e))
}

fn json_failure(text: &str, e: &polywire::Error) -> Fail {
    if let Some((index, message)) = json_error(text) {
        let (line, column) = line_column(text, index);
        return Fail::codec(format!("Failed to parse JSON at line {line}, column {column}: {message}"), e);
    }
    match (e.code(), e.offset()) {
        ("JSON_TOO_DEEP", _) => too_deep(),
        ("JSON_LONE_SURROGATE", Some(at)) => {
            let (line, column) = line_column(text, at);
            let escape = text.get(at..at + 6).unwrap_or("\\u");
            Fail::codec(
                format!(
                    "Failed to parse JSON at line {line}, column {column}: Unpaired surrogate '{escape}' in string \
                     (text holds whole characters only: a high surrogate escape followed by a low one)"
                ),
                e,
            )
        }
        _ => Fail::codec(format!("Failed to parse JSON: {e}"), e),
    }
}

/// 1-based line and column (in characters) of byte `index` of `text`.
pub(crate) fn line_column(text: &str, index: usize) -> (usize, usize) {
    let before = &text.as_bytes()[..index.min(text.len())];
    let line_start = before.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    let line = 1 + before.iter().filter(|&&b| b == b'\n').count();
    let column = 1 + text[line_start..index.min(text.len())].chars().count();
    (line, column)
}

// ------------------------------------------------------------ locating an error

const END_OF_INPUT: &str = "Unexpected end of JSON input";

fn ws(t: &[u8], mut i: usize) -> usize {
    while i < t.len() && matches!(t[i], b' ' | b'\t' | b'\n' | b'\r') {
        i += 1;
    }
    i
}

fn digits(t: &[u8], mut i: usize) -> usize {
    while i < t.len() && t[i].is_ascii_digit() {
        i += 1;
    }
    i
}

fn token(text: &str, i: usize) -> String {
    let c = text[i..].chars().next().unwrap_or('\u{fffd}');
    if (c as u32) < 0x20 {
        format!("Unexpected token '\\u{:04x}'", c as u32)
    } else {
        format!("Unexpected token '{c}'")
    }
}

type Found = (usize, String);

/// `(byte index, message)` of the first error of `text` as JSON, named as
/// V8's `JSON.parse` names it; `None` if `text` is JSON.
pub(crate) fn json_error(text: &str) -> Option<Found> {
    let t = text.as_bytes();
    let n = t.len();
    let end = || Some((n, END_OF_INPUT.to_owned()));
    let mut stack: Vec<u8> = Vec::new();
    let mut i = ws(t, 0);
    #[derive(PartialEq)]
    enum State {
        Value,
        Key,
        After,
    }
    let mut state = State::Value;
    loop {
        match state {
            State::Value => {
                if i >= n {
                    return end();
                }
                let c = t[i];
                if c == b'{' || c == b'[' {
                    i = ws(t, i + 1);
                    if i < n && t[i] == if c == b'{' { b'}' } else { b']' } {
                        i += 1;
                        state = State::After;
                        continue;
                    }
                    stack.push(c);
                    if c == b'[' {
                        continue;
                    }
                    if i >= n {
                        return end();
                    }
                    if t[i] != b'"' {
                        return Some((i, "Expected property name or '}'".to_owned()));
                    }
                    state = State::Key;
                    continue;
                }
                if c == b'"' {
                    match scan_string(t, i) {
                        Ok(j) => i = j,
                        Err(f) => return Some(f),
                    }
                    state = State::After;
                    continue;
                }
                if c == b'-' || c.is_ascii_digit() {
                    match scan_number(t, i) {
                        Ok(j) => i = j,
                        Err(f) => return Some(f),
                    }
                    state = State::After;
                    continue;
                }
                let literal: &[u8] = match c {
                    b't' => b"true",
                    b'f' => b"false",
                    b'n' => b"null",
                    _ => return Some((i, token(text, i))),
                };
                for (j, &ch) in literal.iter().enumerate() {
                    if i + j >= n {
                        return end();
                    }
                    if t[i + j] != ch {
                        return Some((i + j, token(text, i + j)));
                    }
                }
                i += literal.len();
                state = State::After;
            }
            State::Key => {
                match scan_string(t, i) {
                    Ok(j) => i = ws(t, j),
                    Err(f) => return Some(f),
                }
                if i >= n {
                    return end();
                }
                if t[i] != b':' {
                    return Some((i, "Expected ':' after property name".to_owned()));
                }
                i = ws(t, i + 1);
                state = State::Value;
            }
            State::After => {
                i = ws(t, i);
                let Some(&open) = stack.last() else {
                    return (i < n).then(|| (i, "Unexpected non-whitespace character after JSON".to_owned()));
                };
                if i >= n {
                    return end();
                }
                let close = if open == b'{' { b'}' } else { b']' };
                let c = t[i];
                if c == close {
                    stack.pop();
                    i += 1;
                } else if c != b',' {
                    let m =
                        if close == b'}' { "Expected ',' or '}' after property value" } else { "Expected ',' or ']' after array element" };
                    return Some((i, m.to_owned()));
                } else {
                    i = ws(t, i + 1);
                    if close == b']' {
                        state = State::Value;
                    } else if i >= n {
                        return end();
                    } else if t[i] != b'"' {
                        return Some((i, "Expected double-quoted property name".to_owned()));
                    } else {
                        state = State::Key;
                    }
                }
            }
        }
    }
}

/// The end of the string starting (at its quote) at `i`, or its error.
fn scan_string(t: &[u8], mut i: usize) -> Result<usize, Found> {
    let n = t.len();
    let unterminated = || (n, "Unterminated string in JSON".to_owned());
    i += 1;
    loop {
        while i < n && t[i] != b'"' && t[i] != b'\\' && t[i] >= 0x20 {
            i += 1;
        }
        if i >= n {
            return Err(unterminated());
        }
        match t[i] {
            b'"' => return Ok(i + 1),
            b'\\' => {}
            _ => return Err((i, "Bad control character in string literal".to_owned())),
        }
        if i + 1 >= n {
            return Err(unterminated());
        }
        match t[i + 1] {
            b'u' => {
                if let Some(j) = (i + 2..i + 6).find(|&j| j >= n || !t[j].is_ascii_hexdigit()) {
                    return Err(if j >= n { unterminated() } else { (j, "Bad Unicode escape".to_owned()) });
                }
                i += 6;
            }
            b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => i += 2,
            _ => return Err((i + 1, "Bad escaped character".to_owned())),
        }
    }
}

/// The end of the number starting at `i`, or its error.
fn scan_number(t: &[u8], mut i: usize) -> Result<usize, Found> {
    let n = t.len();
    if t[i] == b'-' {
        i += 1;
    }
    if i < n && t[i] == b'0' {
        i += 1;
    } else if i < n && (b'1'..=b'9').contains(&t[i]) {
        i = digits(t, i);
    } else {
        return Err((i, "No number after minus sign".to_owned()));
    }
    if i < n && t[i] == b'.' {
        let j = digits(t, i + 1);
        if j == i + 1 {
            return Err((j, "Unterminated fractional number".to_owned()));
        }
        i = j;
    }
    if i < n && (t[i] == b'e' || t[i] == b'E') {
        i += 1;
        if i < n && (t[i] == b'+' || t[i] == b'-') {
            i += 1;
        }
        let j = digits(t, i);
        if j == i {
            return Err((i, "Exponent part is missing a number".to_owned()));
        }
        i = j;
    }
    Ok(i)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// tests-py/test_cli.py's test_json_error_finds_what_json_refuses (cli.py's
    /// json_error, now here): one character changed, json_error agrees with
    /// a JSON parser (the core's) on whether the text is JSON.
    #[test]
    fn json_error_finds_what_json_refuses() {
        let mut x = 7u64;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let alphabet: Vec<char> = "{}[],:\"\\\u{1}-.eE ".chars().collect();
        for text in [r#"{"a": [1, 2.5e-3, "x\u00e9", true, false, null, {}]}"#, "[]", "\"s\"", "-0.1E+2"] {
            assert_eq!(json_error(text), None, "{text}");
            let chars: Vec<char> = text.chars().collect();
            for _ in 0..400 {
                let i = (next() % chars.len() as u64) as usize;
                let mut bad = chars.clone();
                bad[i] = alphabet[(next() % alphabet.len() as u64) as usize];
                let bad: String = bad.into_iter().collect();
                let ok = polywire::json::validate(bad.as_bytes(), ParseOptions::default()).is_ok();
                assert_eq!(json_error(&bad).is_none(), ok, "{bad}");
            }
        }
    }

    fn message(text: &str) -> String {
        let (i, m) = json_error(text).expect("an error");
        let (l, c) = line_column(text, i);
        format!("line {l}, column {c}: {m}")
    }

    #[test]
    fn errors_are_named_as_v8_names_them() {
        assert_eq!(message(r#"{"a": [1,2,}"#), "line 1, column 12: Unexpected token '}'");
        assert_eq!(message("{\n  \"a\": 1\n  \"b\": 2\n}"), "line 3, column 3: Expected ',' or '}' after property value");
        assert_eq!(message(""), "line 1, column 1: Unexpected end of JSON input");
        assert_eq!(message("[1, NaN]"), "line 1, column 5: Unexpected token 'N'");
        assert_eq!(message(r#"{"a": 1} x"#), "line 1, column 10: Unexpected non-whitespace character after JSON");
        assert_eq!(message("[\"😀\", x]"), "line 1, column 7: Unexpected token 'x'");
        assert_eq!(message("[\"a\u{1}\"]"), "line 1, column 4: Bad control character in string literal");
        assert_eq!(message("\u{feff}{}"), "line 1, column 1: Unexpected token '\u{feff}'");
        assert_eq!(message("[\u{1}]"), "line 1, column 2: Unexpected token '\\u0001'");
        assert_eq!(message("[-]"), "line 1, column 3: No number after minus sign");
        assert_eq!(message("[1.]"), "line 1, column 4: Unterminated fractional number");
        assert_eq!(message("[1e+]"), "line 1, column 5: Exponent part is missing a number");
        assert_eq!(message(r#"["\x"]"#), "line 1, column 4: Bad escaped character");
        assert_eq!(message(r#"["\u12g4"]"#), "line 1, column 7: Bad Unicode escape");
        assert_eq!(message(r#"{"a" 1}"#), "line 1, column 6: Expected ':' after property name");
        assert_eq!(message("{1}"), "line 1, column 2: Expected property name or '}'");
        assert_eq!(message(r#"{"a":1,}"#), "line 1, column 8: Expected double-quoted property name");
    }

    #[test]
    fn numbers_as_json_parse_reads_them() {
        let v =
            parse_json(r#"{"a": 12345678901234567890, "b": 1.0, "c": -0, "d": 9007199254740993, "e": 9007199254740992, "a": 2}"#).unwrap();
        assert_eq!(String::from_utf8(v.to_json().unwrap()).unwrap(), r#"{"a":2,"b":1,"c":0,"d":9007199254740992,"e":9007199254740992}"#);
        let v = parse_json("[12345678901234567890, 1e400, -1e400]").unwrap();
        assert_eq!(String::from_utf8(v.to_json().unwrap()).unwrap(), "[12345678901234567000,null,null]");
    }

    /// tests-py/test_cli.py's test_numbers_as_javascript_writes_them (cli.py's
    /// js_number, now the core's writer): numbers written in JSON text are
    /// `String(x)` of JavaScript, the form TOON writes them in.
    #[test]
    fn numbers_are_written_as_javascript_writes_them() {
        let known = [
            (0.1, "0.1"),
            (1e21, "1e+21"),
            (1e20, "100000000000000000000"),
            (1e-7, "1e-7"),
            (1e-6, "0.000001"),
            (5e-324, "5e-324"),
            (1.7976931348623157e308, "1.7976931348623157e+308"),
            (123456789012345680000.0, "123456789012345680000"),
            (9007199254740992.0, "9007199254740992"),
            (-1.5, "-1.5"),
            (-0.0, "0"),
        ];
        let written = |x: f64| {
            let mut out = Vec::new();
            polywire::json::write_f64(&mut out, x);
            String::from_utf8(out).unwrap()
        };
        let toon = |x: f64| polywire::toon::encode::encode(&&Value::Float(x), &Default::default()).unwrap();
        for (x, text) in known {
            assert_eq!(written(x), text);
            assert_eq!(toon(x), text);
        }
        let mut s = 3u64;
        for _ in 0..3000 {
            s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let x = f64::from_bits(s);
            if x.is_finite() {
                assert_eq!(written(x), toon(x), "{x:e}");
            }
        }
    }

    #[test]
    fn a_lone_surrogate_is_refused_with_its_place() {
        let e = match parse_json("{\n  \"a\": \"x\\udc00y\"}") {
            Err(Fail::Error { message, .. }) => message,
            other => panic!("{other:?}"),
        };
        assert!(e.starts_with("Failed to parse JSON at line 2, column 10: Unpaired surrogate '\\udc00' in string"), "{e}");
    }
}

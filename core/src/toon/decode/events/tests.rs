//! The event decoder's tests, and the helpers the decoder's property tests
//! (`../tests.rs`) share: events as owned values, streams given in pieces,
//! the value a stream of events describes.

use super::super::{decode, JsonStream, JsonWriter, StreamDecoder, Utf8Decoder, MAX_DEPTH};
use super::*;
use serde_json::{json, Map, Value};

/// The events of `text` (owned, for comparing) and how it ended.
pub(in crate::toon::decode) fn events_of(text: &str, opts: &DecodeOptions, input: Input) -> (Vec<Event<'static>>, Result<Progress>) {
    let mut out = Vec::new();
    let r = decode_events(text, opts, input, &mut |e| out.push(owned(e)));
    (out, r)
}

/// How a stream ended: the error's code, line, column, message and
/// the source line the decoder gives for it.
pub(in crate::toon::decode) type Ending = Option<(&'static str, Option<usize>, Option<usize>, String)>;

fn ending(r: &Result<impl Sized>) -> Ending {
    r.as_ref().err().map(|e| (e.code(), e.line(), e.column(), e.message().to_string()))
}

/// The events of `text` given to a [`StreamDecoder`] in pieces whose
/// lengths `cut` picks (a piece may end inside a character: it is then
/// fed as bytes, through [`Utf8Decoder`]), or line by line (`cut`
/// `None`), and how it ended, with the source line of its error.
pub(in crate::toon::decode) fn stream_events_of(
    text: &str,
    opts: &DecodeOptions,
    mut cut: Option<&mut dyn FnMut() -> usize>,
) -> (Vec<Event<'static>>, Ending, Option<String>) {
    let mut out = Vec::new();
    let mut d = match StreamDecoder::new(opts) {
        Ok(d) => d,
        Err(e) => return (out, ending(&Err::<(), _>(e)), None),
    };
    let mut on = |e: Event<'_>| out.push(owned(e));
    let r = match cut.as_mut() {
        None => text.split('\n').try_for_each(|line| d.push_line(line, &mut on)).and_then(|()| {
            // (push_line ends each line: the text's last one too, which
            // the whole text ends with no `\n` after.)
            d.finish(&mut on)
        }),
        Some(cut) => {
            let mut utf8 = Utf8Decoder::new(false);
            let (mut rest, mut piece) = (text.as_bytes(), String::new());
            loop {
                if rest.is_empty() {
                    break d.finish(&mut on);
                }
                let (a, b) = rest.split_at(cut().clamp(1, rest.len()));
                rest = b;
                piece.clear();
                if utf8.decode(a, rest.is_empty(), &mut piece).is_err() {
                    panic!("valid UTF-8");
                }
                if let Err(e) = d.feed(&piece, &mut on) {
                    break Err(e);
                }
            }
        }
    };
    let source = r.as_ref().err().and_then(|e| d.error_source(e));
    (out, ending(&r), source)
}

/// The line `n` of `text` as the reference reports it.
pub(in crate::toon::decode) fn source_of(text: &str, n: usize) -> Option<String> {
    let l = text.split('\n').nth(n.checked_sub(1)?)?;
    let l = l.strip_suffix('\r').unwrap_or(l);
    Some(if n == 1 { l.strip_prefix('\u{feff}').unwrap_or(l) } else { l }.to_string())
}

/// Whole, in pieces cut at random (seeded), in pieces of one byte, line
/// by line: the same events, the same error, and the error's source line.
pub(in crate::toon::decode) fn assert_streams_agree(text: &str, opts: &DecodeOptions, seed: u64) {
    let (all, r) = events_of(text, opts, Input::Whole);
    let want = ending(&r);
    let want_source = r.as_ref().err().filter(|e| e.code() != "TOON_BLANK_LINE").and_then(|e| source_of(text, e.line()?));
    let mut x = seed | 1;
    let mut random = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        // Mostly short pieces, now and then a long one.
        if x % 8 == 0 {
            (x >> 8) as usize % 200
        } else {
            (x >> 8) as usize % 9 + 1
        }
    };
    let mut one = || 1;
    let mut modes: [(&str, Option<&mut dyn FnMut() -> usize>); 3] =
        [("random", Some(&mut random)), ("bytes", Some(&mut one)), ("lines", None)];
    for (mode, cut) in modes.iter_mut() {
        let (got, end, source) = stream_events_of(text, opts, cut.as_deref_mut());
        assert_eq!(got, all, "{mode} {text:?} {opts:?}");
        assert_eq!(end, want, "{mode} {text:?} {opts:?}");
        assert_eq!(source, want_source, "{mode} {text:?} {opts:?}");
    }
}

fn owned(e: Event<'_>) -> Event<'static> {
    match e {
        Event::StartObject => Event::StartObject,
        Event::EndObject => Event::EndObject,
        Event::StartArray { length } => Event::StartArray { length },
        Event::EndArray => Event::EndArray,
        // (Leaked: test data only.)
        Event::Key(k) => Event::Key(Box::leak(k.to_string().into_boxed_str())),
        Event::Primitive(Primitive::String(s)) => Event::Primitive(Primitive::String(Cow::Owned(s.into_owned()))),
        Event::Primitive(Primitive::Null) => Event::Primitive(Primitive::Null),
        Event::Primitive(Primitive::Bool(b)) => Event::Primitive(Primitive::Bool(b)),
        Event::Primitive(Primitive::Number { value, text }) => {
            Event::Primitive(Primitive::Number { value, text: Box::leak(text.to_string().into_boxed_str()) })
        }
    }
}

/// The value the events describe (the reference's
/// `buildValueFromEvents`: a repeated key keeps its place and takes the
/// last value), numbers as doubles.
pub(in crate::toon::decode) fn value_of(events: &[Event<'_>]) -> Option<Value> {
    fn one(it: &mut std::slice::Iter<'_, Event<'_>>) -> Option<Value> {
        Some(match it.next()? {
            Event::StartObject => {
                let mut m = Map::new();
                loop {
                    match it.next()? {
                        Event::EndObject => break Value::Object(m),
                        Event::Key(k) => {
                            let v = one(it)?;
                            m.insert(k.to_string(), v);
                        }
                        _ => return None,
                    }
                }
            }
            Event::StartArray { .. } => {
                let mut items = Vec::new();
                loop {
                    let mut peek = it.clone();
                    if let Some(Event::EndArray) = peek.next() {
                        *it = peek;
                        break Value::Array(items);
                    }
                    items.push(one(it)?);
                }
            }
            Event::Primitive(Primitive::Null) => Value::Null,
            Event::Primitive(Primitive::Bool(b)) => Value::Bool(*b),
            Event::Primitive(Primitive::Number { value, .. }) => json!(value),
            Event::Primitive(Primitive::String(s)) => Value::String(s.to_string()),
            _ => return None,
        })
    }
    let mut it = events.iter();
    let v = one(&mut it)?;
    it.next().is_none().then_some(v)
}

/// `v` with every number as a double (as events have them).
pub(in crate::toon::decode) fn as_doubles(v: Value) -> Value {
    match v {
        Value::Number(n) => json!(n.as_f64().unwrap_or(f64::NAN)),
        Value::Array(a) => Value::Array(a.into_iter().map(as_doubles).collect()),
        Value::Object(m) => Value::Object(m.into_iter().map(|(k, v)| (k, as_doubles(v))).collect()),
        v => v,
    }
}

fn strict() -> DecodeOptions {
    DecodeOptions::default()
}

fn strict_opts() -> DecodeOptions {
    DecodeOptions::default()
}

use Event::{EndArray as EA, EndObject as EO, StartObject as SO};

fn sa(length: f64) -> Event<'static> {
    Event::StartArray { length }
}

fn k(s: &'static str) -> Event<'static> {
    Event::Key(s)
}

/// A number event (its token is the shortest form, as in these texts).
fn n(x: f64) -> Event<'static> {
    Event::Primitive(Primitive::Number { value: x, text: Box::leak(x.to_string().into_boxed_str()) })
}

fn s(x: &'static str) -> Event<'static> {
    Event::Primitive(Primitive::String(Cow::Borrowed(x)))
}

#[test]
fn events_in_document_order() {
    let cases: Vec<(&str, Vec<Event<'static>>)> = vec![
        ("", vec![SO, EO]),
        ("hello", vec![s("hello")]),
        ("[]", vec![sa(0.0), EA]),
        ("a:\n  b: 1\nc: []", vec![SO, k("a"), SO, k("b"), n(1.0), EO, k("c"), sa(0.0), EA, EO]),
        ("[2]: x,\"y\\n\"", vec![sa(2.0), s("x"), s("y\n"), EA]),
        ("t[1]{a,g{b}}:\n  1,2", vec![SO, k("t"), sa(1.0), SO, k("a"), n(1.0), k("g"), SO, k("b"), n(2.0), EO, EO, EA, EO]),
        (
            "m[1:]{v}:\n  e: -0",
            vec![SO, k("m"), SO, k("e"), SO, k("v"), Event::Primitive(Primitive::Number { value: 0.0, text: "-0" }), EO, EO, EO],
        ),
        (
            "l[3]:\n  - r[1]{x}:\n      7\n    y: 1\n  - z: 2\n  -",
            vec![
                SO,
                k("l"),
                sa(3.0),
                SO,
                k("r"),
                sa(1.0),
                SO,
                k("x"),
                n(7.0),
                EO,
                EA,
                k("y"),
                n(1.0),
                EO,
                SO,
                k("z"),
                n(2.0),
                EO,
                SO,
                EO,
                EA,
                EO,
            ],
        ),
    ];
    for (text, want) in cases {
        let (got, r) = events_of(text, &strict(), Input::Whole);
        assert_eq!(r.unwrap(), Progress::Done, "{text:?}");
        assert_eq!(got, want, "{text:?}");
    }
}

#[test]
fn events_before_a_fault_then_its_error() {
    // As the reference 4.4.0 yields them (run on these texts).
    let (got, r) = events_of("a[3]: 1,2", &strict(), Input::Whole);
    assert_eq!(got, vec![SO, k("a"), sa(3.0)]);
    assert_eq!(r.unwrap_err().message(), "Expected 3 inline-form values, but got 2");
    let (got, r) = events_of("a[1]{x}:\n  1\n  2", &strict(), Input::Whole);
    assert_eq!(got, vec![SO, k("a"), sa(1.0), SO, k("x"), n(1.0), EO]);
    assert_eq!(r.unwrap_err().message(), "Expected 1 tabular rows, but found more");
    // A row is read whole before its object is reported.
    let (got, r) = events_of("t[2]{a,b}:\n  1,2\n  3,\"x", &strict(), Input::Whole);
    assert_eq!(got, vec![SO, k("t"), sa(2.0), SO, k("a"), n(1.0), k("b"), n(2.0), EO]);
    assert_eq!(r.unwrap_err().code(), "TOON_UNTERMINATED_STRING");
    // Non-strict: the declared length, whatever came.
    let (got, r) = events_of("a[3]: 1,2", &DecodeOptions { strict: false, ..strict() }, Input::Whole);
    assert_eq!(got, vec![SO, k("a"), sa(3.0), n(1.0), n(2.0), EA, EO]);
    assert_eq!(r.unwrap(), Progress::Done);
}

#[test]
fn lines_so_far() {
    let text = "a: 1\nb[2]:\n  - x\n  - y\nc: 2";
    let (all, _) = events_of(text, &strict(), Input::Whole);
    let lines: Vec<&str> = text.split('\n').collect();
    let mut last = 0;
    for n in 1..=lines.len() {
        let (got, r) = events_of(&lines[..n].join("\n"), &strict(), Input::SoFar);
        assert_eq!(r.unwrap(), Progress::NeedsMore);
        assert_eq!(got[..], all[..got.len()]);
        assert!(got.len() >= last);
        last = got.len();
    }
    // As in the reference, the first line waits for the second (a root
    // primitive is a lone line); `b: 2` is decided by its own line.
    assert_eq!(events_of("a: 1", &strict(), Input::SoFar).0, vec![]);
    assert_eq!(events_of("a: 1\nb: 2", &strict(), Input::SoFar).0, vec![SO, k("a"), n(1.0), k("b"), n(2.0)]);
    assert_eq!(last, all.len() - 1);
    assert_eq!(value_of(&all), Some(as_doubles(json!({"a": 1, "b": ["x", "y"], "c": 2}))));
}

/// (Nested objects: `decode`'s `nesting_is_bounded` checks both.)
#[test]
fn nested_lists_are_bounded() {
    let list = format!("{}x", (0..MAX_DEPTH + 5).map(|i| format!("{}- [1]:\n", "  ".repeat(i))).collect::<String>());
    assert_eq!(events_of(&list, &strict(), Input::Whole).1.unwrap_err().code(), decode(&list, &strict()).unwrap_err().code());
}

#[test]
fn streams_in_pieces_agree() {
    let texts = [
        "",
        "\n",
        "hello",
        "hello\n",
        "[]",
        "a: 1",
        "a:\n  b: 1\nc: []",
        "\u{feff}a: 1\nb: \"\u{e9}\"\n",
        "# comment\n\n  \na: 1\n# c\n\nb[2]: x,y",
        "t[2]{a,g{b}}:\n  1,2\n  3,4",
        "m[2:]{v}:\n  e: -0\n  f: 1",
        "l[3]:\n  - r[1]{x}:\n      7\n    y: 1\n  - z: 2\n  -",
        "a[3]: 1,2",
        "a[1]{x}:\n  1\n  2",
        "a[2]:\n  - 1\n\n  - 2",
        "a[3]:\n  - x: 1\n    y:\n      z: 2\n  - 2",
        "a:\n   b: 1",
        "a: 1\na: 2",
        "k:\n\tx: 1",
        "[2]:\n  - a\n  - b\nc: 1",
        "x\ny",
        "a: \"unterminated",
        "rows[3]{id,name}:\n  1,Ada\n  2,Bob\r\n  3,\"C\\\"d\"\nafter: true",
    ];
    for (i, text) in texts.iter().enumerate() {
        for strict in [true, false] {
            for indent in [1, 2, 4] {
                let o = DecodeOptions { strict, indent, ..strict_opts() };
                assert_streams_agree(text, &o, i as u64 * 7919 + indent as u64);
            }
        }
    }
}

/// A list whose length is checked at the last item's line once the
/// next line has come, after the text of that item was let go: the
/// error still names its line, column and text.
#[test]
fn errors_name_lines_let_go() {
    let filler: String = (0..400).map(|i| format!("    f{i}: {}\n", "x".repeat(20))).collect();
    let text = format!("a[3]:\n  - k: 1\n{filler}  - k: 2\n{filler}b: 1\n");
    let (_, r) = events_of(&text, &strict_opts(), Input::Whole);
    let e = r.unwrap_err();
    assert_eq!((e.code(), e.line(), e.column()), ("TOON_LENGTH_MISMATCH", Some(803), Some(5)));
    let mut d = StreamDecoder::new(&strict_opts()).unwrap();
    let mut n = 0;
    let mut r = Ok(());
    for line in text.split_inclusive('\n') {
        r = d.feed(line, &mut |_| n += 1);
        if r.is_err() {
            break;
        }
    }
    let r = r.and_then(|()| d.finish(&mut |_| n += 1));
    let got = r.unwrap_err();
    assert_eq!((got.code(), got.line(), got.column()), (e.code(), e.line(), e.column()));
    assert!(d.buffered() < 10_000, "{}", d.buffered());
    assert_eq!(d.error_source(&got).as_deref(), Some("    f399: xxxxxxxxxxxxxxxxxxxx"));
}

/// Text is read once, whatever the pieces: the work doubles with the
/// input, and what is held stays the longest line and a little more.
#[test]
fn work_is_linear_and_memory_bounded() {
    fn doc(n: usize) -> String {
        let mut t = String::from("meta:\n  name: bench\n  tags[3]: a,b,c\nrows[");
        t.push_str(&format!("{n}]{{id,name,score}}:\n"));
        for i in 0..n {
            t.push_str(&format!("  {i},user{i},{}.5\n", i % 97));
        }
        t.push_str(&format!("items[{n}]:\n"));
        for i in 0..n {
            t.push_str(&format!("  - id: {i}\n    tags[2]: x,y\n    note: \"{}\"\n", "n".repeat(i % 50)));
        }
        t.push_str(&format!("long: {}\n", "z".repeat(200_000)));
        t
    }
    let run = |text: &str, piece: usize| {
        let mut d = StreamDecoder::new(&strict_opts()).unwrap();
        let (mut events, mut held) = (0usize, 0usize);
        for chunk in text.as_bytes().chunks(piece) {
            d.feed(std::str::from_utf8(chunk).unwrap(), &mut |_| events += 1).unwrap();
            held = held.max(d.buffered());
        }
        d.finish(&mut |_| events += 1).unwrap();
        (d.scanned(), events, held)
    };
    let (small, big) = (doc(20_000), doc(40_000));
    for piece in [1, 7, 4096, 1 << 20] {
        let (s1, e1, h1) = run(&small, piece);
        let (s2, e2, h2) = run(&big, piece);
        assert!(e2 > e1 * 19 / 10);
        let ratio = (s2 - 200_000) as f64 / (s1 - 200_000) as f64;
        assert!((1.9..2.1).contains(&ratio), "piece {piece}: {s1} then {s2}");
        // A few times the input at most, whatever the pieces: the text
        // given, the lines read, what is kept when letting go.
        assert!(s2 <= 3 * big.len() as u64, "piece {piece}: {s2} for {}", big.len());
        // The longest line (200 kB), a piece, and what is let go in bulk.
        let bound = 200_000 + piece + 2 * 4096 + 200;
        assert!(h1 <= bound && h2 <= bound, "piece {piece}: held {h1}, {h2}");
    }
}

#[test]
fn json_text_as_the_reference_cli_writes_it() {
    let json = |text: &str, indent: usize| {
        let mut w = JsonWriter::new(indent);
        let mut out = Vec::new();
        decode_events(text, &strict_opts(), Input::Whole, &mut |e| w.event(&e, &mut out)).unwrap();
        String::from_utf8(out).unwrap()
    };
    let text = "a: 1\nb[2]:\n  - x\n  - c: []\n    d:\ne:\nf[0]:\ng: \"q\\\"\\n\"\nh[2]: 1.50,-2e-7";
    assert_eq!(
        json(text, 2),
        "{\n  \"a\": 1,\n  \"b\": [\n    \"x\",\n    {\n      \"c\": [],\n      \"d\": {}\n    }\n  ],\n  \"e\": {},\n  \"f\": [],\n  \"g\": \"q\\\"\\n\",\n  \"h\": [\n    1.5,\n    -2e-7\n  ]\n}"
    );
    assert_eq!(json(text, 0), r#"{"a":1,"b":["x",{"c":[],"d":{}}],"e":{},"f":[],"g":"q\"\n","h":[1.5,-2e-7]}"#);
    assert_eq!(json("", 2), "{}");
    assert_eq!(json("x", 3), "\"x\"");
    assert_eq!(json("[2]: 1,2", 1), "[\n 1,\n 2\n]");
}

#[test]
fn json_stream_converts_bytes_in_pieces() {
    let run = |bytes: &[u8], strict: bool| {
        let mut j = JsonStream::new(&DecodeOptions { strict, ..strict_opts() }).unwrap();
        let mut out = Vec::new();
        for b in bytes.chunks(3) {
            j.feed(b, false);
            j.take(|t| out.extend_from_slice(t));
        }
        j.feed(&[], true);
        j.take(|t| out.extend_from_slice(t));
        let fault = j.failure().map(|(e, source)| (e.code(), e.offset(), e.line(), source));
        (String::from_utf8(out).unwrap(), fault, j.input_chars(), j.output_chars())
    };
    let (json, fault, chars, out_chars) = run("\u{feff}k: é\nl[2]: 1,2".as_bytes(), true);
    assert_eq!((json.as_str(), fault), ("{\n  \"k\": \"é\",\n  \"l\": [\n    1,\n    2\n  ]\n}", None));
    assert_eq!((chars, out_chars), (14, json.chars().count() as u64));
    // Ill-formed UTF-8: a fault at its byte in strict mode (after the text
    // before it), U+FFFD otherwise.
    let (json, fault, ..) = run(b"a: 1\nb: \xff\n", true);
    assert_eq!((json.as_str(), fault), ("", Some(("TOON_INVALID_UTF8", Some(8), None, None))));
    let (json, fault, ..) = run(b"a: 1\nb: \xff\n", false);
    assert_eq!((json.as_str(), fault), ("{\n  \"a\": 1,\n  \"b\": \"\u{fffd}\"\n}", None));
    // A TOON fault names its line, with its text.
    let (_, fault, ..) = run(b"a: 1\nb[2]: 1\nc: 2", true);
    assert_eq!(fault, Some(("TOON_LENGTH_MISMATCH", None, Some(2), Some("b[2]: 1".to_string()))));
}

#[test]
fn utf8_in_pieces_as_a_text_decoder_reads_it() {
    let mut x = 0x2545_f491_4f6c_dd1du64;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let alphabet: &[&[u8]] = &[
        b"a",
        b"\n",
        "\u{e9}".as_bytes(),
        "\u{20ac}".as_bytes(),
        "\u{1f600}".as_bytes(),
        b"\xff",
        b"\xe2\x82",
        b"\xed\xa0\x80",
        b"\xf0\x9f",
        b"\xc0\xaf",
    ];
    for _ in 0..3000 {
        let mut bytes = Vec::new();
        for _ in 0..next() % 12 {
            bytes.extend_from_slice(alphabet[next() as usize % alphabet.len()]);
        }
        for replace in [false, true] {
            let mut d = Utf8Decoder::new(replace);
            let mut out = String::new();
            let mut rest = &bytes[..];
            let got = loop {
                let n = (next() % 4) as usize;
                let (a, b) = rest.split_at(n.min(rest.len()));
                rest = b;
                let got = d.decode(a, rest.is_empty(), &mut out);
                if got.is_err() || rest.is_empty() {
                    break got;
                }
            };
            if replace {
                assert_eq!(got, Ok(()));
                assert_eq!(out, String::from_utf8_lossy(&bytes), "{bytes:?}");
            } else {
                match std::str::from_utf8(&bytes) {
                    Ok(s) => assert_eq!((got, out.as_str()), (Ok(()), s)),
                    Err(e) => {
                        assert_eq!(got, Err(e.valid_up_to()), "{bytes:?}");
                        assert_eq!(out.as_bytes(), &bytes[..e.valid_up_to()]);
                    }
                }
            }
        }
    }
}

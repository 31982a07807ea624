//! The resumable TOON event decoder (`StreamDecoder`) against the
//! whole-text walk (`decode_events`): every decode case of the spec v4.0
//! fixtures (`vectors/toon_spec.json`) and of the reference vectors
//! (`vectors/toon_decode.json`), and documents encoded from random values
//! then mutated, given in pieces cut at random, one byte at a time and line
//! by line, must give the same events, the same error (code, line, column,
//! message) and the error's source line.

use polywire::toon::decode::{decode_events, DecodeOptions, Event, Input, Primitive, StreamDecoder};
use polywire::toon::encode::{encode_value, EncodeOptions};
use polywire::toon::Delimiter;
use serde_json::{json, Value};

/// An event as text (owned, comparable).
fn show(e: Event<'_>) -> String {
    match e {
        Event::StartObject => "{".into(),
        Event::EndObject => "}".into(),
        Event::StartArray { length } => format!("[{length}"),
        Event::EndArray => "]".into(),
        Event::Key(k) => format!("k{k:?}"),
        Event::Primitive(Primitive::Null) => "null".into(),
        Event::Primitive(Primitive::Bool(b)) => b.to_string(),
        Event::Primitive(Primitive::Number { value, text }) => format!("n{value:?}/{text}"),
        Event::Primitive(Primitive::String(s)) => format!("s{s:?}"),
    }
}

type Ending = Option<(&'static str, Option<usize>, Option<usize>, String)>;

fn ending(r: &polywire::Result<impl Sized>) -> Ending {
    r.as_ref().err().map(|e| (e.code(), e.line(), e.column(), e.message().to_string()))
}

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// The events of `text` streamed in pieces of `cut()` bytes (at a
/// character boundary at or after), or line by line when `cut` is `None`.
fn streamed(text: &str, opts: &DecodeOptions, cut: Option<&mut dyn FnMut() -> usize>) -> (Vec<String>, Ending, Option<String>) {
    let mut out = Vec::new();
    let mut d = StreamDecoder::new(opts).expect("options");
    let mut on = |e: Event<'_>| out.push(show(e));
    let r = match cut {
        None => text.split('\n').try_for_each(|l| d.push_line(l, &mut on)),
        Some(cut) => {
            let mut rest = text;
            let mut r = Ok(());
            while !rest.is_empty() && r.is_ok() {
                let mut n = cut().clamp(1, rest.len());
                while !rest.is_char_boundary(n) {
                    n += 1;
                }
                let (a, b) = rest.split_at(n);
                rest = b;
                r = d.feed(a, &mut on);
            }
            r
        }
    };
    let r = r.and_then(|()| d.finish(&mut on));
    let source = r.as_ref().err().and_then(|e| d.error_source(e));
    (out, ending(&r), source)
}

fn source_of(text: &str, n: usize) -> Option<String> {
    let l = text.split('\n').nth(n.checked_sub(1)?)?;
    let l = l.strip_suffix('\r').unwrap_or(l);
    Some(if n == 1 { l.strip_prefix('\u{feff}').unwrap_or(l) } else { l }.to_string())
}

/// Whole against streamed three ways; `None` when they agree.
fn disagreement(text: &str, opts: &DecodeOptions, rng: &mut Rng) -> Option<String> {
    let mut all = Vec::new();
    let r = decode_events(text, opts, Input::Whole, &mut |e| all.push(show(e)));
    let want = ending(&r);
    let want_source = r.as_ref().err().filter(|e| e.code() != "TOON_BLANK_LINE").and_then(|e| source_of(text, e.line()?));
    let mut seed = rng.next();
    let mut random = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        if seed % 5 == 0 {
            (seed >> 9) as usize % 300
        } else {
            (seed >> 9) as usize % 11 + 1
        }
    };
    let mut one = || 1;
    for (mode, got) in [
        ("random pieces", streamed(text, opts, Some(&mut random))),
        ("bytes", streamed(text, opts, Some(&mut one))),
        ("lines", streamed(text, opts, None)),
    ] {
        if got != (all.clone(), want.clone(), want_source.clone()) {
            return Some(format!(
                "{mode}: {text:?} strict={} indent={}\n  whole {all:?} {want:?} {want_source:?}\n  got   {got:?}",
                opts.strict, opts.indent
            ));
        }
    }
    None
}

fn vectors(path: &str) -> Value {
    let path = format!("{}/../vectors/{path}", env!("CARGO_MANIFEST_DIR"));
    serde_json::from_slice(&std::fs::read(&path).expect("read vectors")).expect("vectors JSON")
}

#[test]
fn spec_fixtures_in_pieces() {
    let doc = vectors("toon_spec.json");
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let (mut cases, mut failures) = (0, Vec::new());
    for test in doc["decode"].as_array().expect("decode cases") {
        let input = test["input"].as_str().expect("input");
        let mut opts = DecodeOptions::default();
        if let Some(o) = test.get("options").and_then(Value::as_object) {
            opts.strict = o.get("strict").and_then(Value::as_bool).unwrap_or(true);
            opts.indent = o.get("indentSize").and_then(Value::as_u64).unwrap_or(2) as usize;
        }
        for strict in [opts.strict, !opts.strict] {
            cases += 1;
            failures.extend(disagreement(input, &DecodeOptions { strict, ..opts }, &mut rng));
        }
    }
    assert!(failures.is_empty(), "{} of {cases}:\n{}", failures.len(), failures.join("\n"));
    assert_eq!(cases, 686);
}

#[test]
fn reference_vectors_in_pieces() {
    let doc = vectors("toon_decode.json");
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    let mut failures = Vec::new();
    let cases = doc["cases"].as_array().expect("cases");
    for case in cases {
        let opts = DecodeOptions {
            strict: case["strict"].as_bool().expect("strict"),
            indent: case["indent"].as_u64().expect("indent") as usize,
            ..Default::default()
        };
        failures.extend(disagreement(case["input"].as_str().expect("input"), &opts, &mut rng));
    }
    assert!(failures.is_empty(), "{} of {}:\n{}", failures.len(), cases.len(), failures.join("\n"));
}

/// A random JSON value: the shapes TOON has forms for (tables, nested
/// objects, lists of objects, arrays of arrays), with text that needs
/// quoting now and then.
fn value(rng: &mut Rng, depth: usize) -> Value {
    let strings = ["a", "Ada", "b c", "x,y", "q\"t", "", "1", "-", "é😀", "k: v", "[1]", "#", " lead", "tab\there"];
    let leaf = |rng: &mut Rng| match rng.below(6) {
        0 => Value::Null,
        1 => json!(rng.below(2) == 0),
        2 => json!(rng.below(1000) as i64 - 500),
        3 => json!(rng.below(10_000) as f64 / 8.0),
        _ => json!(strings[rng.below(strings.len())]),
    };
    if depth > 3 || rng.below(4) == 0 {
        return leaf(rng);
    }
    match rng.below(5) {
        0 => Value::Array((0..rng.below(5)).map(|_| leaf(rng)).collect()),
        1 => {
            let keys: Vec<String> = (0..rng.below(4) + 1).map(|i| format!("f{i}")).collect();
            Value::Array((0..rng.below(6)).map(|_| Value::Object(keys.iter().map(|k| (k.clone(), leaf(rng))).collect())).collect())
        }
        2 => Value::Array((0..rng.below(4)).map(|_| value(rng, depth + 1)).collect()),
        _ => Value::Object((0..rng.below(5)).map(|i| (format!("{}{i}", strings[rng.below(3)]), value(rng, depth + 1))).collect()),
    }
}

/// `text` with a line dropped, repeated, re-indented, blanked or cut.
fn mutate(text: &str, rng: &mut Rng) -> String {
    let mut lines: Vec<String> = text.split('\n').map(str::to_string).collect();
    let i = rng.below(lines.len());
    match rng.below(6) {
        0 => {
            lines.remove(i);
        }
        1 => {
            let l = lines[i].clone();
            lines.insert(i, l);
        }
        2 => lines[i] = format!(" {}", lines[i]),
        3 => lines.insert(i, String::new()),
        4 => {
            let cut = rng.below(lines[i].len() + 1);
            let mut c = cut;
            while !lines[i].is_char_boundary(c) {
                c -= 1;
            }
            lines[i].truncate(c);
        }
        _ => lines[i] = format!("{}\t", lines[i].replacen("  ", "\t", 1)),
    }
    lines.join("\n")
}

#[test]
fn random_documents_in_pieces() {
    let mut rng = Rng(0x1234_5678_9abc_def1);
    let (mut failures, mut faults, mut events) = (Vec::new(), 0, 0);
    for n in 0..1500 {
        let v = value(&mut rng, 0);
        let indent = [1, 2, 4][rng.below(3)];
        let delimiter = [Delimiter::Comma, Delimiter::Tab, Delimiter::Pipe][rng.below(3)];
        let opts = EncodeOptions { indent, delimiter, ..Default::default() };
        let text = encode_value(&v, &opts).expect("encodes");
        let text = if n % 2 == 1 { mutate(&text, &mut rng) } else { text };
        for strict in [true, false] {
            let o = DecodeOptions { strict, indent, ..Default::default() };
            faults += usize::from(decode_events(&text, &o, Input::Whole, &mut |_| events += 1).is_err());
            failures.extend(disagreement(&text, &o, &mut rng));
        }
    }
    // Faults of many kinds, and documents of some size.
    assert!(faults > 300 && events > 30_000, "{faults} faults, {events} events");
    assert!(failures.is_empty(), "{}:\n{}", failures.len(), failures.iter().take(5).cloned().collect::<Vec<_>>().join("\n"));
}

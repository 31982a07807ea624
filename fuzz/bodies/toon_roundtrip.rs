//! Body of the `toon_roundtrip` fuzz target, shared with
//! `core/tests/fuzz_corpus.rs` (which replays `fuzz/corpus-seed/` on stable):
//! a value generated from the input bytes, encoded with options picked by
//! the input, decodes back to the same value.
//!
//! Input: byte 0 picks the options (indent 1-8, the delimiter, key folding
//! and its depth: unbounded, 0, 2 or 3 segments), the rest drives the value
//! generator. The generator leans
//! on what TOON's quoting and layout must get right: strings that look like
//! numbers, booleans, null, list markers or headers; delimiters, colons,
//! quotes, escapes and spaces at the edges; keys that need quotes; uniform
//! arrays of objects (tables), arrays of arrays, empty containers in lists.
//!
//! The property: `decode(encode(v, opts), strict, same indent)` equals `v`,
//! numbers compared by value (the encoder writes `-0` as `0` and `1.0` as
//! `1`, as the reference does). With key folding on, keys contain no dots
//! and the text decodes with path expansion, which must undo the folding;
//! with it off, keys may contain dots and decode literally.

use polywire::toon::decode::{decode, DecodeOptions, ExpandPaths};
use polywire::toon::encode::{encode_value, EncodeOptions, KeyFolding};
use polywire::toon::Delimiter;
use serde_json::{Map, Number, Value};

/// Pieces of strings and keys: each alone or glued to others.
const PIECES: &[&str] = &[
    "",
    " ",
    "a",
    "B",
    "x1",
    "_y",
    "true",
    "false",
    "null",
    "-",
    "-1",
    "0",
    "05",
    "1.5",
    "1e5",
    "-0",
    ".5",
    "1.",
    ",",
    "|",
    "\t",
    ":",
    "\"",
    "\\",
    "[",
    "]",
    "{",
    "}",
    "#",
    "\n",
    "\r",
    "é",
    "😀",
    "a b",
    "- ",
    "[3]",
    "\u{1}",
    "\u{7f}",
    "=",
    "'",
    "a.b",
    "x\u{2028}y",
    "  ",
];

struct Gen<'a> {
    data: &'a [u8],
    pos: usize,
    /// Values still to be made: bounds the size of what one input builds.
    budget: usize,
    dotted_keys: bool,
}

impl Gen<'_> {
    fn byte(&mut self) -> u8 {
        let b = self.data.get(self.pos).copied().unwrap_or(0);
        self.pos += 1;
        b
    }

    fn exhausted(&self) -> bool {
        self.pos >= self.data.len() || self.budget == 0
    }

    fn text(&mut self) -> String {
        let n = self.byte() % 4;
        let mut s = String::new();
        for _ in 0..n {
            s.push_str(PIECES[usize::from(self.byte()) % PIECES.len()]);
        }
        s
    }

    fn key(&mut self) -> String {
        let b = self.byte();
        let k = if b < 160 {
            // Mostly identifiers, so that tables and folding happen.
            ["a", "b", "c", "id", "name", "x_1", "_"][usize::from(b) % 7].to_owned()
        } else {
            self.text()
        };
        if self.dotted_keys {
            k
        } else {
            k.replace('.', "_")
        }
    }

    fn number(&mut self) -> Value {
        let b = self.byte();
        let n = match b % 8 {
            0 => Number::from(i64::from(self.byte()) - 128),
            1 => Number::from(i64::from_le_bytes(self.bytes8())),
            2 => Number::from(u64::from_le_bytes(self.bytes8())),
            3 => Number::from([u64::MAX, i64::MIN as u64, 1 << 53, (1 << 53) + 1][usize::from(self.byte() % 4)]),
            4 => {
                let f = [-0.0, 0.1 + 0.2, 1e21, 1e-7, 1.5e300, 5e-324, -123.456, 1e20][usize::from(self.byte() % 8)];
                return Number::from_f64(f).map_or(Value::Null, Value::Number);
            }
            _ => return Number::from_f64(f64::from_le_bytes(self.bytes8())).map_or(Value::Null, Value::Number),
        };
        Value::Number(n)
    }

    fn bytes8(&mut self) -> [u8; 8] {
        std::array::from_fn(|_| self.byte())
    }

    fn primitive(&mut self) -> Value {
        match self.byte() % 4 {
            0 => Value::Null,
            1 => Value::Bool(self.byte() & 1 == 1),
            2 => self.number(),
            _ => Value::String(self.text()),
        }
    }

    fn object(&mut self, depth: usize, len: usize) -> Value {
        let mut m = Map::new();
        for _ in 0..len {
            let k = self.key();
            let v = self.value(depth + 1);
            m.insert(k, v);
        }
        Value::Object(m)
    }

    fn value(&mut self, depth: usize) -> Value {
        if self.exhausted() || depth > 6 {
            return self.primitive();
        }
        self.budget -= 1;
        let b = self.byte();
        let len = usize::from(self.byte() % 5);
        match b % 8 {
            0..=2 => self.primitive(),
            3 => Value::Array((0..len).map(|_| self.primitive()).collect()),
            4 => {
                // Rows with the same keys (a table), now and then one that
                // differs or holds a nested value (no table then).
                let keys: Vec<String> = (0..1 + len % 3).map(|_| self.key()).collect();
                let rows = 1 + usize::from(self.byte() % 4);
                let rows = (0..rows)
                    .map(|_| {
                        let mut m = Map::new();
                        for k in &keys {
                            let v = if self.byte() < 16 { self.value(depth + 1) } else { self.primitive() };
                            m.insert(k.clone(), v);
                        }
                        if self.byte() < 24 {
                            m.insert(self.key(), self.primitive());
                        }
                        Value::Object(m)
                    })
                    .collect();
                Value::Array(rows)
            }
            5 | 6 => self.object(depth, len),
            _ => Value::Array((0..len).map(|_| self.value(depth + 1)).collect()),
        }
    }
}

/// Equal as JSON values, numbers by value (`-0 == 0`, `1.0 == 1`), object
/// keys in any order. Recursion is bounded by the generator's depth.
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (x.as_i64(), y.as_i64(), x.as_u64(), y.as_u64()) {
            (Some(i), Some(j), _, _) => i == j,
            (_, _, Some(i), Some(j)) => i == j,
            _ => x.as_f64() == y.as_f64(),
        },
        (Value::Array(x), Value::Array(y)) => x.len() == y.len() && x.iter().zip(y).all(|(p, q)| same(p, q)),
        (Value::Object(x), Value::Object(y)) => x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w))),
        _ => a == b,
    }
}

pub fn toon_roundtrip(data: &[u8]) {
    let Some((&flags, rest)) = data.split_first() else { return };
    let folding = flags & 0x20 != 0;
    let opts = EncodeOptions {
        indent: usize::from(flags & 7) + 1,
        delimiter: [Delimiter::Comma, Delimiter::Tab, Delimiter::Pipe][usize::from(flags >> 3 & 3) % 3],
        key_folding: if folding { KeyFolding::Safe } else { KeyFolding::Off },
        flatten_depth: [usize::MAX, 0, 2, 3][usize::from(flags >> 6)],
    };
    let mut g = Gen { data: rest, pos: 0, budget: 64, dotted_keys: !folding };
    let value = g.value(0);
    let text = encode_value(&value, &opts).expect("a generated value encodes");
    let expand_paths = if folding { ExpandPaths::Safe } else { ExpandPaths::Off };
    let back = decode(&text, &DecodeOptions { indent: opts.indent, strict: true, expand_paths })
        .unwrap_or_else(|e| panic!("{opts:?}: the encoder's text does not decode: {e}\nvalue: {value}\ntext:\n{text}"));
    assert!(same(&value, &back), "{opts:?}: round trip differs\nvalue: {value}\ntext:\n{text}\nback:  {back}");
}

//! TOON text for Node.
//!
//! Values cross the boundary packed ([`pack`] for encoding, [`pack_decode`]
//! for decoding, with the figures that chose them in `bindings-node/lib/toon.js`):
//! flat ops, doubles and one joined string, which [`pack::PackEncoder`]
//! reads into a flat [`Arena`] that the core encoder walks, and which
//! [`pack_decode::PackDecoder`] writes from the core decoder's calls.
//! The JSON route takes what the packed one does not: [`JsonReader`] reads
//! `JSON.stringify`'s text into the same arena, and [`DirectJson`] writes
//! the decoder's calls as ASCII JSON for `JSON.parse`. Strings cross N-API as
//! UTF-16 converted here ([`utf16_to_utf8`], [`utf8_to_utf16`]).
//! `toonEncodeDirect` / `toonDecodeDirect` are the direct N-API variants,
//! kept for the measurement that compares the routes.

use crate::errors::{invalid_arg, IntoNapi, Result};
use napi::bindgen_prelude::*;
use napi::sys;
use napi_derive::napi;
use polywire::json::{self, array_index, Builder, QuickNumber};
use polywire::toon::decode::{decode_with, DecodeOptions, Event, ExpandPaths, Primitive};
use polywire::toon::encode::{encode_into, EncodeOptions, EncodeValue, KeyFolding, Kind, RenderedTable, MAX_DEPTH};
use polywire::toon::Delimiter;
use polywire::{Error, Format};
use std::vec::Drain;

mod pack;
mod pack_decode;
mod stream;

// ---------------------------------------------------------------- arena

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Span {
    start: usize,
    len: usize,
}

#[derive(Clone, Copy, Debug)]
enum Node {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    /// A string in the arena's own text (it was unescaped, or built).
    Str(Span),
    /// A string that is a slice of the source text: not copied.
    SrcStr(Span),
    /// A number literal of `JSON.stringify`'s text: the encoder writes it as
    /// it stands (it is in ECMAScript form already).
    Num(Span),
    /// Verbatim text (the reference's `rawString`).
    Raw(Span),
    Array {
        start: usize,
        len: usize,
    },
    Object {
        start: usize,
        len: usize,
        index_keys: bool,
    },
    /// An array of objects that all have the same keys in the same order
    /// (no array index among them) holding primitives or field groups
    /// (objects of the same kind, the same in every row), known as such
    /// when read (`pack.rs`), and its rows written then: an array like
    /// [`Node::Array`] (item ids at `items[start..start + len]`) of `cols`
    /// cells a row whose rows are `arena.table_text[text..]` up to the ends
    /// `arena.row_ends[ends..ends + len]` (relative to `text`), what the
    /// encoder's `rendered_table` hands out. Only the first row is an
    /// ordinary object; the others have its keys, each holding
    /// [`Node::Unread`].
    Table {
        start: u32,
        len: u32,
        cols: u32,
        text: u32,
        ends: u32,
    },
    /// A cell of a [`Node::Table`] row after the first, which was written
    /// but not kept: the encoder only reads one when it walks the rows
    /// after all, and then fails with `TOON_TABLE_UNREAD` (`pack.rs` then
    /// reads the value again without tables).
    Unread,
}

/// An object key: a span of the arena's text or (`src`) of the source text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Key {
    span: Span,
    src: bool,
}

/// A JSON value in flat vectors, for the encoder: nodes, array items (node
/// ids), object entries (key, node id) and one buffer holding the strings
/// that are not slices of the source text. Built by [`JsonReader`] or
/// [`pack::PackEncoder`] with no allocation per value.
#[derive(Default)]
struct Arena {
    nodes: Vec<Node>,
    items: Vec<usize>,
    entries: Vec<(Key, usize)>,
    /// The shape of the rows of the [`Node::Table`] that `pack.rs` reads.
    table_shape: Vec<(usize, usize)>,
    /// The rows of the [`Node::Table`]s, written, and where each ends.
    table_text: String,
    row_ends: Vec<u32>,
    /// The delimiter the rows were written with.
    table_delimiter: Delimiter,
    text: String,
    /// With raw strings: the marker key of a raw-string placeholder object
    /// (`{"<key>": index}`) and the raw texts by index.
    raw_key: Option<String>,
    raws: Vec<String>,
    /// The JSON reader's work stacks, kept between calls.
    reader_values: Vec<usize>,
    reader_entries: Vec<(Key, usize)>,
}

/// `s` as a span of `src`, if it is a slice of it.
#[inline]
fn span_in(src: &str, s: &str) -> Option<Span> {
    let start = (s.as_ptr() as usize).checked_sub(src.as_ptr() as usize)?;
    (start.checked_add(s.len())? <= src.len()).then_some(Span { start, len: s.len() })
}

/// How a TOON number literal goes into JSON text for `JSON.parse`.
#[derive(Clone, Copy, PartialEq)]
enum LiteralInJson {
    /// As it stands: `JSON.parse` reads it as the reference does.
    Text,
    /// `0`: a negative zero, which the reference reads as 0.
    Zero,
    /// Read first (`json::javascript_number`): an exponent (it could
    /// overflow to infinity, which stays a string, or underflow to `-0`),
    /// or longer than 300 bytes (likewise).
    Read,
}

/// [`LiteralInJson`] for `text`; `quick`, when the decoder read the literal
/// already (no exponent, at most 18 digits), spares the scans.
#[inline]
fn literal_in_json(text: &str, quick: Option<QuickNumber>) -> LiteralInJson {
    let zero = match quick {
        Some(QuickNumber::Int(i)) => i == 0,
        Some(QuickNumber::Float(f)) => f == 0.0,
        None => false,
    };
    match quick {
        Some(_) if zero && text.starts_with('-') => LiteralInJson::Zero,
        Some(_) => LiteralInJson::Text,
        None => {
            let b = text.as_bytes();
            // `| 0x20` folds 'E' to 'e' and leaves digits, '.' and '-' as they are.
            if b.len() > 300 || b.iter().any(|&c| c | 0x20 == b'e') {
                LiteralInJson::Read
            } else if b.first() == Some(&b'-') && !b.iter().any(|c| matches!(c, b'1'..=b'9')) {
                LiteralInJson::Zero
            } else {
                LiteralInJson::Text
            }
        }
    }
}

#[inline]
fn slice(s: &str, span: Span) -> &str {
    // Spans are made on char boundaries of the string they index.
    s.get(span.start..span.start + span.len).unwrap_or_default()
}

impl Arena {
    #[inline]
    fn span(&mut self, s: &str) -> Span {
        let start = self.text.len();
        self.text.push_str(s);
        Span { start, len: s.len() }
    }

    #[inline]
    fn push(&mut self, n: Node) -> usize {
        self.nodes.push(n);
        self.nodes.len() - 1
    }

    #[inline]
    fn key_str<'s>(&'s self, src: &'s str, k: Key) -> &'s str {
        if k.src {
            slice(src, k.span)
        } else {
            slice(&self.text, k.span)
        }
    }

    /// Empty but for the first `text` bytes of the text (the packed
    /// route's strings, converted before reading).
    fn reset_to(&mut self, text: usize) {
        self.nodes.clear();
        self.items.clear();
        self.entries.clear();
        self.text.truncate(text);
        self.table_text.clear();
        self.row_ends.clear();
    }

    fn reset(&mut self) {
        self.reset_to(0);
        self.raw_key = None;
        self.raws.clear();
    }
}

/// Writes arena values as JSON text in ASCII: characters beyond ASCII are
/// `\u` escapes, so the text becomes a one-byte JavaScript string copied
/// byte for byte (V8 decodes UTF-8 several times slower than `JSON.parse`
/// reads escapes). Planes 15 and 16 (private use) stay UTF-8: `toon.js`
/// finds its lone-surrogate stand-ins there in the text.
struct JsonWriter<'a> {
    src: &'a str,
    out: &'a mut Vec<u8>,
    /// Whether a character beyond ASCII was written as UTF-8.
    non_ascii: bool,
}

const HEX: &[u8; 16] = b"0123456789abcdef";

/// Index of the first byte at or after `from` that a JSON string cannot
/// hold as it is here: a control character, `"`, `\` or a non-ASCII byte.
#[inline]
fn find_escape(bytes: &[u8], from: usize) -> usize {
    let mut i = from;
    while let Some(chunk) = bytes.get(i..i + 8) {
        let mut w = [0u8; 8];
        w.copy_from_slice(chunk);
        let m = special_bytes(u64::from_le_bytes(w));
        if m != 0 {
            return i + (m.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    while let Some(&b) = bytes.get(i) {
        if b < 0x20 || b == b'"' || b == b'\\' || b >= 0x80 {
            break;
        }
        i += 1;
    }
    i
}

/// Strings up to this long are written by [`write_short`].
const SHORT: usize = 1024;

/// Bits set (in the high bit of each byte) where a word of eight bytes
/// holds a byte that [`find_escape`] stops at; the lowest is exact.
#[inline]
fn special_bytes(x: u64) -> u64 {
    const LO: u64 = 0x0101_0101_0101_0101;
    const HI: u64 = 0x8080_8080_8080_8080;
    let quote = x ^ (LO * b'"' as u64);
    let slash = x ^ (LO * b'\\' as u64);
    (x.wrapping_sub(LO * 0x20) | quote.wrapping_sub(LO) & !quote | slash.wrapping_sub(LO) & !slash | x) & HI
}

/// Writes the escape of ASCII byte `b` (a control character, `"` or `\\`)
/// at `d` and returns the position after it; `None` for a non-ASCII byte.
///
/// # Safety
/// `d` must have room for six bytes.
#[inline(always)]
unsafe fn escape_at(b: u8, d: *mut u8) -> Option<*mut u8> {
    let esc = match b {
        b'"' => b'"',
        b'\\' => b'\\',
        b'\n' => b'n',
        b'\r' => b'r',
        b'\t' => b't',
        0x08 => b'b',
        0x0c => b'f',
        0x80.. => return None,
        _ => 0,
    };
    if esc == 0 {
        for (j, c) in [b'\\', b'u', b'0', b'0', HEX[(b >> 4) as usize], HEX[(b & 15) as usize]].into_iter().enumerate() {
            *d.add(j) = c;
        }
        Some(d.add(6))
    } else {
        *d = b'\\';
        *d.add(1) = esc;
        Some(d.add(2))
    }
}

/// Writes `hay[..len]` as a JSON string literal at `dst` and returns its
/// length, or returns `None` (having written garbage) if it is not ASCII.
/// Bytes of `hay` past `len` may be read, never written out.
///
/// # Safety
/// `len <= hay.len()`, and `dst` must have room for `len * 6 + 18` bytes:
/// whole words are copied, up to fifteen bytes past the end of what is kept.
#[inline]
unsafe fn write_short(hay: &[u8], len: usize, dst: *mut u8) -> Option<usize> {
    let src = hay.as_ptr();
    let readable = hay.len();
    let mut d = dst;
    *d = b'"';
    d = d.add(1);
    let mut i = 0;
    while i < len {
        let b;
        #[cfg(all(target_arch = "x86_64", not(any(polywire_portable, feature = "portable"))))]
        if i + 16 <= readable {
            use std::arch::x86_64::*;
            // SSE2 (every x86-64): one compare for control characters and
            // non-ASCII bytes together (both are below 0x20 as signed bytes).
            let v = _mm_loadu_si128(src.add(i) as *const __m128i);
            _mm_storeu_si128(d as *mut __m128i, v);
            let special = _mm_or_si128(
                _mm_cmplt_epi8(v, _mm_set1_epi8(0x20)),
                _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8(b'"' as i8)), _mm_cmpeq_epi8(v, _mm_set1_epi8(b'\\' as i8))),
            );
            let mut m = _mm_movemask_epi8(special) as u32;
            let rest = len - i;
            if rest < 16 {
                m &= (1u32 << rest) - 1;
            }
            if m == 0 {
                let k = rest.min(16);
                i += k;
                d = d.add(k);
                continue;
            }
            let k = m.trailing_zeros() as usize;
            i += k;
            d = d.add(k);
            b = *src.add(i);
            (i, d) = match escape_at(b, d) {
                Some(d) => (i + 1, d),
                None => return None,
            };
            continue;
        }
        if i + 8 <= readable {
            let x = (src.add(i) as *const u64).read_unaligned();
            (d as *mut u64).write_unaligned(x);
            let mut m = special_bytes(u64::from_le(x));
            let rest = len - i;
            if rest < 8 {
                // Only the string's own bytes count.
                m &= (1u64 << (rest * 8)) - 1;
            }
            if m == 0 {
                let k = rest.min(8);
                i += k;
                d = d.add(k);
                continue;
            }
            let k = (m.trailing_zeros() / 8) as usize;
            i += k;
            d = d.add(k);
            b = *src.add(i);
        } else {
            b = *src.add(i);
            if !(b < 0x20 || b == b'"' || b == b'\\' || b >= 0x80) {
                *d = b;
                d = d.add(1);
                i += 1;
                continue;
            }
        }
        d = escape_at(b, d)?;
        i += 1;
    }
    *d = b'"';
    d = d.add(1);
    Some(d.offset_from(dst) as usize)
}

impl JsonWriter<'_> {
    #[inline]
    fn u_escape(&mut self, unit: u32) {
        self.out.extend_from_slice(&[
            b'\\',
            b'u',
            HEX[(unit >> 12 & 15) as usize],
            HEX[(unit >> 8 & 15) as usize],
            HEX[(unit >> 4 & 15) as usize],
            HEX[(unit & 15) as usize],
        ]);
    }

    /// `s` as a JSON string literal.
    #[inline]
    fn string(&mut self, s: &str) {
        self.string_in(s, Span { start: 0, len: s.len() });
    }

    /// The string `span` of `base`: bytes of `base` after it may be read
    /// (a word at a time).
    #[inline]
    fn string_in(&mut self, base: &str, span: Span) {
        let Some(hay) = base.as_bytes().get(span.start..) else { return self.string("") };
        if span.len <= SHORT && span.len <= hay.len() {
            self.out.reserve(span.len * 6 + 18);
            let len = self.out.len();
            // SAFETY: `span.len <= hay.len()`, and the room `write_short`
            // needs was just reserved; it wrote the bytes it counts.
            if let Some(n) = unsafe { write_short(hay, span.len, self.out.as_mut_ptr().add(len)) } {
                unsafe { self.out.set_len(len + n) };
                return;
            }
        }
        self.string_any(slice(base, span));
    }

    /// Bytes of the source copied as they are (short ones without a call
    /// to `memcpy`).
    #[inline]
    fn bytes(&mut self, b: &[u8]) {
        if b.len() <= 24 {
            self.out.reserve(24);
            let len = self.out.len();
            // SAFETY: reserved above.
            unsafe {
                let dst = self.out.as_mut_ptr().add(len);
                for (i, &c) in b.iter().enumerate() {
                    *dst.add(i) = c;
                }
                self.out.set_len(len + b.len());
            }
        } else {
            self.out.extend_from_slice(b);
        }
    }

    /// [`JsonWriter::string`] for any string (long, or not ASCII).
    #[cold]
    fn string_any(&mut self, s: &str) {
        let bytes = s.as_bytes();
        self.out.reserve(bytes.len() + 2);
        self.out.push(b'"');
        let mut start = 0;
        loop {
            let i = find_escape(bytes, start);
            self.out.extend_from_slice(bytes.get(start..i).unwrap_or_default());
            let Some(&b) = bytes.get(i) else { break };
            if b < 0x80 {
                let esc = match b {
                    b'"' => b'"',
                    b'\\' => b'\\',
                    b'\n' => b'n',
                    b'\r' => b'r',
                    b'\t' => b't',
                    0x08 => b'b',
                    0x0c => b'f',
                    _ => 0,
                };
                if esc == 0 {
                    self.u_escape(b as u32);
                } else {
                    self.out.extend_from_slice(&[b'\\', esc]);
                }
                start = i + 1;
                continue;
            }
            // `i` is where a character starts: every earlier stop ended one.
            let Some(c) = s.get(i..).and_then(|t| t.chars().next()) else { break };
            let cp = c as u32;
            if cp >= 0xF0000 {
                self.out.extend_from_slice(bytes.get(i..i + c.len_utf8()).unwrap_or_default());
                self.non_ascii = true;
            } else if cp >= 0x10000 {
                let v = cp - 0x10000;
                self.u_escape(0xD800 + (v >> 10));
                self.u_escape(0xDC00 + (v & 0x3FF));
            } else {
                self.u_escape(cp);
            }
            start = i + c.len_utf8();
        }
        self.out.push(b'"');
    }

    /// One decode event as the reference's event object, and a comma.
    fn event(&mut self, e: &Event<'_>) {
        match e {
            Event::StartObject => self.out.extend_from_slice(b"{\"type\":\"startObject\"},"),
            Event::EndObject => self.out.extend_from_slice(b"{\"type\":\"endObject\"},"),
            Event::EndArray => self.out.extend_from_slice(b"{\"type\":\"endArray\"},"),
            Event::StartArray { length } => {
                self.out.extend_from_slice(b"{\"type\":\"startArray\",\"length\":");
                if length.is_finite() {
                    json::write_f64(self.out, *length);
                } else {
                    // A declared length beyond the doubles: JSON.parse reads
                    // `1e999` as Infinity, the reference's length.
                    self.out.extend_from_slice(b"1e999");
                }
                self.out.extend_from_slice(b"},");
            }
            Event::Key(k) => {
                self.out.extend_from_slice(b"{\"type\":\"key\",\"key\":");
                self.string(k);
                self.out.extend_from_slice(b"},");
            }
            Event::Primitive(p) => {
                self.out.extend_from_slice(b"{\"type\":\"primitive\",\"value\":");
                match p {
                    Primitive::Null => self.out.extend_from_slice(b"null"),
                    Primitive::Bool(true) => self.out.extend_from_slice(b"true"),
                    Primitive::Bool(false) => self.out.extend_from_slice(b"false"),
                    Primitive::Number { value, .. } => json::write_f64(self.out, *value),
                    Primitive::String(s) => self.string(s),
                }
                self.out.extend_from_slice(b"},");
            }
        }
    }
}

/// Writes the JSON text of the document being decoded as the builder calls
/// come (they come in document order: `Builder::begin_*`), for the JSON
/// route (`toonDecodeJson`: texts the packed route does not take). Number
/// literals are kept as text where `JSON.parse` reads them as the reference
/// does ([`literal_in_json`]).
struct DirectJson<'a> {
    w: JsonWriter<'a>,
    /// A value was written last: the next item or key needs a comma.
    comma: bool,
}

impl DirectJson<'_> {
    #[inline]
    fn value(&mut self) {
        if std::mem::replace(&mut self.comma, true) {
            self.w.out.push(b',');
        }
    }

    #[inline]
    fn open(&mut self, bracket: u8) {
        if std::mem::take(&mut self.comma) {
            self.w.out.push(b',');
        }
        self.w.out.push(bracket);
    }

    #[inline]
    fn close(&mut self, bracket: u8) {
        self.w.out.push(bracket);
        self.comma = true;
    }

    /// `s` as a JSON string: read within the source text when it is a
    /// slice of it (whole words may then be read past its end).
    #[inline]
    fn text(&mut self, s: &str) {
        match span_in(self.w.src, s) {
            Some(span) => self.w.string_in(self.w.src, span),
            None => self.w.string(s),
        }
    }

    fn number_text(&mut self, text: &str, negative_zero: bool) -> polywire::Result<Option<()>> {
        self.value();
        if negative_zero {
            self.w.out.push(b'0');
        } else {
            self.w.bytes(text.as_bytes());
        }
        Ok(Some(()))
    }
}

impl Builder for DirectJson<'_> {
    type Value = ();
    type Key = ();
    type Error = Error;

    #[inline]
    fn null(&mut self) -> polywire::Result<()> {
        self.value();
        self.w.out.extend_from_slice(b"null");
        Ok(())
    }
    #[inline]
    fn bool(&mut self, b: bool) -> polywire::Result<()> {
        self.value();
        self.w.out.extend_from_slice(if b { b"true" } else { b"false" });
        Ok(())
    }
    #[inline]
    fn int(&mut self, i: i64) -> polywire::Result<()> {
        self.value();
        json::write_i64(self.w.out, i);
        Ok(())
    }
    fn big_int(&mut self, digits: &str) -> polywire::Result<()> {
        // JavaScript numbers: beyond i64 a literal is a double.
        self.float(digits.parse::<f64>().unwrap_or(f64::NAN))
    }
    #[inline]
    fn float(&mut self, f: f64) -> polywire::Result<()> {
        self.value();
        json::write_f64(self.w.out, f);
        Ok(())
    }
    #[inline]
    fn string(&mut self, s: &str) -> polywire::Result<()> {
        self.value();
        self.text(s);
        Ok(())
    }
    #[inline]
    fn key(&mut self, s: &str) -> polywire::Result<()> {
        if std::mem::take(&mut self.comma) {
            self.w.out.push(b',');
        }
        self.text(s);
        self.w.out.push(b':');
        Ok(())
    }
    #[inline]
    fn key_again(&mut self, _: &(), s: &str) -> polywire::Result<()> {
        self.key(s)
    }
    #[inline]
    fn key_ahead(&mut self, _: &str) -> polywire::Result<()> {
        Ok(())
    }
    #[inline]
    fn begin_array(&mut self) -> polywire::Result<()> {
        self.open(b'[');
        Ok(())
    }
    #[inline]
    fn begin_object(&mut self) -> polywire::Result<()> {
        self.open(b'{');
        Ok(())
    }
    #[inline]
    fn array(&mut self, _: Drain<'_, ()>) -> polywire::Result<()> {
        self.close(b']');
        Ok(())
    }
    #[inline]
    fn object(&mut self, _: Drain<'_, ((), ())>) -> polywire::Result<()> {
        self.close(b'}');
        Ok(())
    }

    /// The literal as text where `JSON.parse` reads it as the reference
    /// does, else read here ([`literal_in_json`]).
    #[inline]
    fn number_value(&mut self, text: &str, integer: bool, quick: Option<QuickNumber>) -> polywire::Result<Option<()>> {
        match literal_in_json(text, quick) {
            LiteralInJson::Text => self.number_text(text, false),
            LiteralInJson::Zero => self.number_text(text, true),
            LiteralInJson::Read => json::javascript_number(self, text, integer),
        }
    }

    fn number_token(&mut self, text: &str, integer: bool) -> polywire::Result<Option<()>> {
        self.number_value(text, integer, None)
    }
}

/// An arena and the text its spans point into.
struct ArenaDoc<'a> {
    arena: &'a Arena,
    src: &'a str,
}

/// A node of an arena, as the core encoder walks it. (Two words, so that
/// handles and the walk's results built from them move in registers.)
#[derive(Clone, Copy)]
struct ArenaVal<'a> {
    doc: &'a ArenaDoc<'a>,
    id: usize,
}

impl<'a> std::ops::Deref for ArenaVal<'a> {
    type Target = ArenaDoc<'a>;
    #[inline(always)]
    fn deref(&self) -> &ArenaDoc<'a> {
        self.doc
    }
}

impl<'a> ArenaVal<'a> {
    #[inline]
    fn node(&self) -> Node {
        self.arena.nodes.get(self.id).copied().unwrap_or(Node::Null)
    }
    #[inline]
    fn at(&self, id: usize) -> Self {
        ArenaVal { id, ..*self }
    }
    #[inline]
    fn entries(&self) -> &'a [(Key, usize)] {
        match self.node() {
            Node::Object { start, len, .. } => self.arena.entries.get(start..start + len).unwrap_or_default(),
            _ => &[],
        }
    }
    #[inline]
    fn key(&self, k: Key) -> &'a str {
        self.arena.key_str(self.src, k)
    }
    /// The [`Kind`] of a node (for a table's cells, without a handle).
    #[inline(always)]
    fn kind_of(&self, node: Node) -> Kind<'a> {
        match node {
            Node::Null => Kind::Null,
            Node::Bool(b) => Kind::Bool(b),
            Node::Int(i) => Kind::Int(i),
            Node::Float(f) => Kind::Float(f),
            // JSON.stringify's text of a number: the encoder's text of it.
            Node::Num(s) => Kind::BigInt(slice(self.src, s)),
            Node::Str(s) => Kind::Str(slice(&self.arena.text, s)),
            Node::SrcStr(s) => Kind::Str(slice(self.src, s)),
            Node::Raw(s) => Kind::Raw(slice(&self.arena.text, s)),
            Node::Array { .. } | Node::Table { .. } => Kind::Array,
            Node::Object { .. } => Kind::Object,
            // Not reached: `kind` answers for it.
            Node::Unread => Kind::Null,
        }
    }
}

impl<'a> EncodeValue<'a> for ArenaVal<'a> {
    type Error = Error;

    #[inline(always)]
    fn kind(&self) -> polywire::Result<Kind<'_>> {
        match self.node() {
            Node::Unread => Err(table_unread()),
            node => Ok(self.kind_of(node)),
        }
    }

    #[inline]
    fn array_len(&self) -> usize {
        match self.node() {
            Node::Array { len, .. } => len,
            Node::Table { len, .. } => len as usize,
            _ => 0,
        }
    }

    fn array_items(&self) -> impl Iterator<Item = polywire::Result<Self>> + '_ {
        let items: &'a [usize] = match self.node() {
            Node::Array { start, len } => self.arena.items.get(start..start + len).unwrap_or_default(),
            Node::Table { start, len, .. } => self.arena.items.get(start as usize..start as usize + len as usize).unwrap_or_default(),
            _ => &[],
        };
        items.iter().map(|&id| Ok(self.at(id)))
    }

    #[inline]
    fn object_len(&self) -> usize {
        match self.node() {
            Node::Object { len, .. } => len,
            _ => 0,
        }
    }

    fn object_entries(&self) -> impl Iterator<Item = polywire::Result<(&'a str, Self)>> + '_ {
        self.entries().iter().map(|&(k, v)| Ok((self.key(k), self.at(v))))
    }

    fn object_get(&self, key: &str) -> polywire::Result<Option<Self>> {
        Ok(self.entries().iter().find(|&&(k, _)| self.key(k) == key).map(|&(_, v)| self.at(v)))
    }

    fn rendered_table(&self) -> Option<RenderedTable<'_>> {
        let Node::Table { len, cols, text, ends, .. } = self.node() else {
            return None;
        };
        let (len, ends) = (len as usize, ends as usize);
        Some(RenderedTable {
            columns: cols as usize,
            delimiter: self.arena.table_delimiter,
            text: self.arena.table_text.get(text as usize..)?,
            row_ends: self.arena.row_ends.get(ends..ends + len)?,
        })
    }

    #[inline]
    fn object_has_index_key(&self) -> polywire::Result<bool> {
        Ok(matches!(self.node(), Node::Object { index_keys: true, .. }))
    }
}

// ---------------------------------------------------------------- JSON in (encode)

/// Reads the JSON text that `JSON.stringify` wrote into an [`Arena`], for
/// the encoder: strings without escapes stay spans of the text, numbers
/// stay text ([`Node::Num`]: `JSON.stringify` writes them in ECMAScript
/// form, which is what the encoder would write), objects note whether a
/// key is an array index, and raw-string placeholders become raw strings.
/// Any JSON is read correctly; what `JSON.stringify` never writes is only
/// an error (`JSON_SYNTAX`).
struct JsonReader<'a> {
    input: &'a [u8],
    src: &'a str,
    pos: usize,
    arena: &'a mut Arena,
    values: Vec<usize>,
    entries: Vec<(Key, usize)>,
}

#[cold]
fn json_syntax(pos: usize) -> Error {
    Error::new(Format::Json, "JSON_SYNTAX", "expected JSON text as JSON.stringify writes it").at(pos)
}

#[cold]
fn json_lone_surrogate(pos: usize, unit: u32) -> Error {
    Error::new(Format::Json, "JSON_LONE_SURROGATE", format!("expected no lone surrogate (found \\u{unit:04x})")).at(pos)
}

#[cold]
fn json_too_deep() -> Error {
    json_error_to_toon(Error::new(Format::Json, "JSON_TOO_DEEP", "nesting too deep"))
}

impl<'a> JsonReader<'a> {
    fn read(src: &'a str, arena: &'a mut Arena) -> polywire::Result<usize> {
        let values = std::mem::take(&mut arena.reader_values);
        let entries = std::mem::take(&mut arena.reader_entries);
        let mut r = JsonReader { input: src.as_bytes(), src, pos: 0, arena, values, entries };
        r.ws();
        let v = r.value(0);
        r.ws();
        r.values.clear();
        r.entries.clear();
        r.arena.reader_values = std::mem::take(&mut r.values);
        r.arena.reader_entries = std::mem::take(&mut r.entries);
        let v = v?;
        if r.pos != r.input.len() {
            return Err(json_syntax(r.pos));
        }
        Ok(v)
    }

    #[inline]
    fn ws(&mut self) {
        while matches!(self.input.get(self.pos), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.pos += 1;
        }
    }

    /// The next byte after optional whitespace (`JSON.stringify` writes none).
    #[inline]
    fn peek(&mut self) -> Option<u8> {
        match self.input.get(self.pos) {
            Some(b' ' | b'\t' | b'\n' | b'\r') => {
                self.ws();
                self.input.get(self.pos).copied()
            }
            b => b.copied(),
        }
    }

    #[inline]
    fn literal(&mut self, word: &[u8], node: Node) -> polywire::Result<usize> {
        if self.input.get(self.pos..self.pos + word.len()) != Some(word) {
            return Err(json_syntax(self.pos));
        }
        self.pos += word.len();
        Ok(self.arena.push(node))
    }

    /// Inlined into the container loops: most values are primitives, read
    /// without a call; containers recurse through `object`/`array`.
    #[inline(always)]
    fn value(&mut self, depth: usize) -> polywire::Result<usize> {
        match self.peek() {
            Some(b'"') => {
                let node = match self.string()? {
                    (span, true) => Node::SrcStr(span),
                    (span, false) => Node::Str(span),
                };
                Ok(self.arena.push(node))
            }
            Some(b'{') => self.object(depth),
            Some(b'[') => self.array(depth),
            Some(b't') => self.literal(b"true", Node::Bool(true)),
            Some(b'f') => self.literal(b"false", Node::Bool(false)),
            Some(b'n') => self.literal(b"null", Node::Null),
            Some(b'-' | b'0'..=b'9') => self.number(),
            _ => Err(json_syntax(self.pos)),
        }
    }

    fn number(&mut self) -> polywire::Result<usize> {
        let input = self.input;
        let start = self.pos;
        let mut i = start;
        let digits = |mut i: usize| {
            while matches!(input.get(i), Some(b'0'..=b'9')) {
                i += 1;
            }
            i
        };
        if input.get(i) == Some(&b'-') {
            i += 1;
        }
        match input.get(i) {
            Some(b'0') => i += 1,
            Some(b'1'..=b'9') => i = digits(i + 1),
            _ => return Err(json_syntax(i)),
        }
        let mut plain = true;
        if input.get(i) == Some(&b'.') {
            plain = false;
            if !matches!(input.get(i + 1), Some(b'0'..=b'9')) {
                return Err(json_syntax(i + 1));
            }
            i = digits(i + 1);
        }
        if matches!(input.get(i), Some(b'e' | b'E')) {
            plain = false;
            i += 1;
            if matches!(input.get(i), Some(b'+' | b'-')) {
                i += 1;
            }
            if !matches!(input.get(i), Some(b'0'..=b'9')) {
                return Err(json_syntax(i));
            }
            i = digits(i);
        }
        self.pos = i;
        let span = Span { start, len: i - start };
        // Every number JSON.stringify writes is in ECMAScript form already;
        // `-0` (which it never writes) is `0`, as the reference has it.
        let node = if plain && input.get(start..i) == Some(b"-0") { Node::Int(0) } else { Node::Num(span) };
        Ok(self.arena.push(node))
    }

    /// A string at the opening quote: a span of the source (`true`) when it
    /// has no escape, else of the arena's text.
    #[inline]
    fn string(&mut self) -> polywire::Result<(Span, bool)> {
        let start = self.pos + 1;
        let i = json::find_special(self.input, start);
        if self.input.get(i) == Some(&b'"') {
            self.pos = i + 1;
            return Ok((Span { start, len: i - start }, true));
        }
        self.escaped_string(start, i).map(|s| (s, false))
    }

    #[cold]
    fn escaped_string(&mut self, start: usize, mut i: usize) -> polywire::Result<Span> {
        let input = self.input;
        let text_start = self.arena.text.len();
        let mut run = start;
        loop {
            match input.get(i) {
                Some(b'"') => {
                    self.arena.text.push_str(self.src.get(run..i).ok_or_else(|| json_syntax(run))?);
                    self.pos = i + 1;
                    return Ok(Span { start: text_start, len: self.arena.text.len() - text_start });
                }
                Some(b'\\') => {
                    self.arena.text.push_str(self.src.get(run..i).ok_or_else(|| json_syntax(run))?);
                    i = self.escape(i)?;
                    run = i;
                }
                _ => return Err(json_syntax(i)),
            }
            i = json::find_special(input, i);
        }
    }

    fn hex4(&self, i: usize) -> polywire::Result<u32> {
        let h = self.input.get(i..i + 4).ok_or_else(|| json_syntax(i))?;
        let s = std::str::from_utf8(h).map_err(|_| json_syntax(i))?;
        if !h.iter().all(u8::is_ascii_hexdigit) {
            return Err(json_syntax(i));
        }
        u32::from_str_radix(s, 16).map_err(|_| json_syntax(i))
    }

    /// The escape at `i` (the backslash) into the arena's text; the index after it.
    fn escape(&mut self, i: usize) -> polywire::Result<usize> {
        let ch = match self.input.get(i + 1) {
            Some(b'"') => '"',
            Some(b'\\') => '\\',
            Some(b'/') => '/',
            Some(b'b') => '\u{8}',
            Some(b'f') => '\u{c}',
            Some(b'n') => '\n',
            Some(b'r') => '\r',
            Some(b't') => '\t',
            Some(b'u') => {
                let hi = self.hex4(i + 2)?;
                let (cp, next) = if (0xD800..0xDC00).contains(&hi) {
                    let lo = if self.input.get(i + 6..i + 8) == Some(b"\\u") { self.hex4(i + 8)? } else { 0 };
                    if !(0xDC00..0xE000).contains(&lo) {
                        return Err(json_lone_surrogate(i, hi));
                    }
                    (0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00), i + 12)
                } else if (0xDC00..0xE000).contains(&hi) {
                    return Err(json_lone_surrogate(i, hi));
                } else {
                    (hi, i + 6)
                };
                self.arena.text.push(char::from_u32(cp).ok_or_else(|| json_syntax(i))?);
                return Ok(next);
            }
            _ => return Err(json_syntax(i)),
        };
        self.arena.text.push(ch);
        Ok(i + 2)
    }

    #[inline(never)]
    fn array(&mut self, depth: usize) -> polywire::Result<usize> {
        if depth >= MAX_DEPTH {
            return Err(json_too_deep());
        }
        self.pos += 1; // '['
        let base = self.values.len();
        if self.peek() == Some(b']') {
            self.pos += 1;
        } else {
            loop {
                let v = self.value(depth + 1)?;
                self.values.push(v);
                match self.peek() {
                    Some(b',') => self.pos += 1,
                    Some(b']') => {
                        self.pos += 1;
                        break;
                    }
                    _ => return Err(json_syntax(self.pos)),
                }
            }
        }
        let start = self.arena.items.len();
        self.arena.items.extend(self.values.drain(base..));
        let len = self.arena.items.len() - start;
        Ok(self.arena.push(Node::Array { start, len }))
    }

    #[inline(never)]
    fn object(&mut self, depth: usize) -> polywire::Result<usize> {
        if depth >= MAX_DEPTH {
            return Err(json_too_deep());
        }
        self.pos += 1; // '{'
        let base = self.entries.len();
        let mut index_keys = false;
        if self.peek() == Some(b'}') {
            self.pos += 1;
        } else {
            loop {
                if self.peek() != Some(b'"') {
                    return Err(json_syntax(self.pos));
                }
                let (span, src) = self.string()?;
                let key = Key { span, src };
                // The first byte, read without slicing the text, says whether
                // the key may be an array index.
                let first = if src { self.input.get(span.start) } else { self.arena.text.as_bytes().get(span.start) };
                if span.len > 0 && matches!(first, Some(b'0'..=b'9')) && array_index(self.arena.key_str(self.src, key)).is_some() {
                    index_keys = true;
                }
                if self.peek() != Some(b':') {
                    return Err(json_syntax(self.pos));
                }
                self.pos += 1;
                let v = self.value(depth + 1)?;
                self.entries.push((key, v));
                match self.peek() {
                    Some(b',') => self.pos += 1,
                    Some(b'}') => {
                        self.pos += 1;
                        break;
                    }
                    _ => return Err(json_syntax(self.pos)),
                }
            }
        }
        let start = self.arena.entries.len();
        self.arena.entries.extend(self.entries.drain(base..));
        let len = self.arena.entries.len() - start;
        if len == 1 && self.arena.raw_key.is_some() {
            if let Some(raw) = self.raw_placeholder(start) {
                return Ok(raw);
            }
        }
        Ok(self.arena.push(Node::Object { start, len, index_keys }))
    }

    /// `{"<raw key>": n}` stands for raw string `n`.
    #[cold]
    fn raw_placeholder(&mut self, entry: usize) -> Option<usize> {
        let &(k, v) = self.arena.entries.get(entry)?;
        if Some(self.arena.key_str(self.src, k)) != self.arena.raw_key.as_deref() {
            return None;
        }
        let n = match self.arena.nodes.get(v).copied()? {
            Node::Num(n) => slice(self.src, n).parse::<usize>().ok()?,
            Node::Int(n) => usize::try_from(n).ok()?,
            _ => return None,
        };
        let raw = self.arena.raws.get(n)?.clone();
        self.arena.entries.truncate(entry);
        let span = self.arena.span(&raw);
        Some(self.arena.push(Node::Raw(span)))
    }
}

// ---------------------------------------------------------------- options

fn delimiter(code: u32) -> Result<Delimiter> {
    char::from_u32(code)
        .and_then(Delimiter::from_char)
        .ok_or_else(|| invalid_arg("TOON_INVALID_OPTION", format!("invalid delimiter U+{code:04X} (expected ',', '\\t' or '|')")))
}

fn encode_options(indent: u32, delim: u32, key_folding: bool, flatten_depth: f64) -> Result<EncodeOptions> {
    Ok(EncodeOptions {
        indent: indent as usize,
        delimiter: delimiter(delim)?,
        key_folding: if key_folding { KeyFolding::Safe } else { KeyFolding::Off },
        flatten_depth: if flatten_depth.is_finite() && flatten_depth >= 0.0 { flatten_depth as usize } else { usize::MAX },
    })
}

fn json_error_to_toon(e: Error) -> Error {
    // Nesting is the only JSON failure that a value JSON.stringify wrote can
    // cause; report it as the encoder does. Lone surrogates keep their code
    // (the JavaScript side then reports them as the reference does).
    if e.code() == "JSON_TOO_DEEP" {
        Error::new(
            Format::Toon,
            "TOON_TOO_DEEP",
            format!("expected values nested at most {MAX_DEPTH} levels deep (is the value circular?)"),
        )
    } else {
        e
    }
}

// ---------------------------------------------------------------- strings in and out

/// UTF-16 (a JavaScript string) to UTF-8 into `out` (cleared); a lone
/// surrogate becomes U+FFFD, as N-API's own conversion does. Runs of ASCII
/// go eight units at a time (V8 converts two-byte strings to UTF-8 several
/// times slower).
/// Returns whether there was a lone surrogate.
fn utf16_to_utf8(src: &[u16], out: &mut Vec<u8>) -> bool {
    out.clear();
    utf16_push_utf8(src, out)
}

/// [`utf16_to_utf8`] appending to `out`.
fn utf16_push_utf8(src: &[u16], out: &mut Vec<u8>) -> bool {
    let mut lone = false;
    // Each unit gives at most three bytes (a surrogate pair: four for two);
    // `encode_utf8` is handed four bytes of room even for the last unit.
    out.reserve(src.len() * 3 + 4);
    let mut i = 0;
    let mut n = out.len();
    let dst = out.as_mut_ptr();
    // SAFETY: at most `3 * src.len()` bytes are written, all reserved (and
    // the four-byte room given to `encode_utf8` too); reads stay within `src`.
    unsafe {
        while i < src.len() {
            #[cfg(all(target_arch = "x86_64", not(any(polywire_portable, feature = "portable"))))]
            {
                use std::arch::x86_64::*;
                while i + 8 <= src.len() {
                    let v = _mm_loadu_si128(src.as_ptr().add(i) as *const __m128i);
                    let high = _mm_and_si128(v, _mm_set1_epi16(0xFF80u16 as i16));
                    if _mm_movemask_epi8(_mm_cmpeq_epi16(high, _mm_setzero_si128())) != 0xFFFF {
                        break;
                    }
                    _mm_storel_epi64(dst.add(n) as *mut __m128i, _mm_packus_epi16(v, v));
                    i += 8;
                    n += 8;
                }
                if i >= src.len() {
                    break;
                }
            }
            let c = *src.get_unchecked(i) as u32;
            i += 1;
            if c < 0x80 {
                *dst.add(n) = c as u8;
                n += 1;
                continue;
            }
            let cp = if (0xD800..0xDC00).contains(&c) {
                match src.get(i) {
                    Some(&lo) if (0xDC00..0xE000).contains(&(lo as u32)) => {
                        i += 1;
                        0x10000 + ((c - 0xD800) << 10) + (lo as u32 - 0xDC00)
                    }
                    _ => {
                        lone = true;
                        0xFFFD
                    }
                }
            } else if (0xDC00..0xE000).contains(&c) {
                lone = true;
                0xFFFD
            } else {
                c
            };
            let ch = char::from_u32(cp).unwrap_or('\u{FFFD}');
            n += ch.encode_utf8(std::slice::from_raw_parts_mut(dst.add(n), 4)).len();
        }
        out.set_len(n);
    }
    lone
}

/// UTF-8 to UTF-16 into `out` (cleared); runs of ASCII go sixteen bytes at
/// a time.
fn utf8_to_utf16(s: &str, out: &mut Vec<u16>) {
    let b = s.as_bytes();
    out.clear();
    // Never more units than bytes; `encode_utf16` is handed two units of
    // room even for the last character.
    out.reserve(b.len() + 2);
    let dst = out.as_mut_ptr();
    let mut i = 0;
    let mut n = 0;
    // SAFETY: at most `b.len()` units are written, all reserved (and the
    // two-unit room given to `encode_utf16` too); reads stay within `b`,
    // and `i` is always at a char boundary.
    unsafe {
        while i < b.len() {
            #[cfg(all(target_arch = "x86_64", not(any(polywire_portable, feature = "portable"))))]
            {
                use std::arch::x86_64::*;
                while i + 16 <= b.len() {
                    let v = _mm_loadu_si128(b.as_ptr().add(i) as *const __m128i);
                    if _mm_movemask_epi8(v) != 0 {
                        break;
                    }
                    let zero = _mm_setzero_si128();
                    _mm_storeu_si128(dst.add(n) as *mut __m128i, _mm_unpacklo_epi8(v, zero));
                    _mm_storeu_si128(dst.add(n + 8) as *mut __m128i, _mm_unpackhi_epi8(v, zero));
                    i += 16;
                    n += 16;
                }
                if i >= b.len() {
                    break;
                }
            }
            let c = *b.get_unchecked(i);
            if c < 0x80 {
                *dst.add(n) = c as u16;
                n += 1;
                i += 1;
                continue;
            }
            let Some(ch) = s.get(i..).and_then(|t| t.chars().next()) else { break };
            i += ch.len_utf8();
            n += ch.encode_utf16(std::slice::from_raw_parts_mut(dst.add(n), 2)).len();
        }
        out.set_len(n);
    }
}

// ---------------------------------------------------------------- entry points

/// Buffers kept between calls: a large document then costs no fresh
/// allocation (and no page faults) on every call.
#[derive(Default)]
struct Scratch {
    input: Vec<u8>,
    output: Vec<u8>,
    /// UTF-16 text on its way in or out.
    wide: Vec<u16>,
    /// A second UTF-16 text in (the packed route's wide strings).
    wide_in: Vec<u16>,
    arena: Arena,
}

thread_local! {
    static SCRATCH: std::cell::RefCell<Scratch> = std::cell::RefCell::new(Scratch::default());
}

/// Run `f` with the cleared scratch buffers; big ones are dropped after.
fn with_scratch<R>(f: impl FnOnce(&mut Scratch) -> R) -> R {
    SCRATCH.with(|cell| match cell.try_borrow_mut() {
        Ok(mut s) => {
            s.arena.reset();
            s.input.clear();
            s.output.clear();
            let r = f(&mut s);
            const KEEP: usize = 8 << 20;
            if s.input.capacity() > KEEP
                || s.output.capacity() > KEEP
                || s.wide.capacity() > KEEP / 2
                || s.wide_in.capacity() > KEEP / 2
                || s.arena.text.capacity() > KEEP
                || s.arena.nodes.capacity() > KEEP / 16
            {
                *s = Scratch::default();
            }
            r
        }
        Err(_) => f(&mut Scratch::default()),
    })
}

/// A [`Node::Unread`] cell was asked for.
#[cold]
fn table_unread() -> Error {
    Error::new(Format::Toon, TABLE_UNREAD, "expected a table's rows to be written as read (the value is read again)")
}

/// The code of [`table_unread`].
const TABLE_UNREAD: &str = "TOON_TABLE_UNREAD";

#[cold]
fn napi_status(what: &str) -> napi::Error<crate::errors::Code> {
    invalid_arg("TOON_NAPI", format!("N-API call failed: {what}"))
}

/// Read a JavaScript string as UTF-8 into `buf`. A lone surrogate is an
/// error `TOON_LONE_SURROGATE_INPUT` with `strict` (the JavaScript side then
/// maps them and calls again: cheaper than checking every string there
/// first), else U+FFFD. The string is
/// copied out as UTF-16 and converted here: for a two-byte string that is
/// several times faster than N-API's UTF-8 conversion, and about as fast
/// for a one-byte one.
unsafe fn read_string<'b>(
    env: sys::napi_env,
    v: sys::napi_value,
    buf: &'b mut Vec<u8>,
    wide: &mut Vec<u16>,
    strict: bool,
) -> Result<&'b str> {
    read_utf16(env, v, wide)?;
    if utf16_to_utf8(wide, buf) && strict {
        return Err(invalid_arg("TOON_LONE_SURROGATE_INPUT", "the text holds a lone surrogate".into()));
    }
    // Well-formed by construction; checked all the same.
    std::str::from_utf8(buf).map_err(|_| napi_status("string is not UTF-8"))
}

/// A JavaScript string's UTF-16 units, copied into `wide`.
unsafe fn read_utf16(env: sys::napi_env, v: sys::napi_value, wide: &mut Vec<u16>) -> Result<()> {
    read_units(wide, |buf, cap, written| sys::napi_get_value_string_utf16(env, v, buf, cap, written))
}

/// Read a JavaScript string that holds only characters below U+0100 as
/// Latin-1 bytes into `bytes` (one byte per unit; a wider character would
/// come out truncated to its low byte).
unsafe fn read_latin1(env: sys::napi_env, v: sys::napi_value, bytes: &mut Vec<u8>) -> Result<()> {
    read_units(bytes, |buf, cap, written| sys::napi_get_value_string_latin1(env, v, buf as *mut _, cap, written))
}

/// A string's code units copied into `buf` by `get` (a
/// `napi_get_value_string_*` with its buffer, capacity and count written):
/// asked for the length first, which costs nothing.
unsafe fn read_units<T>(buf: &mut Vec<T>, get: impl Fn(*mut T, usize, *mut usize) -> sys::napi_status) -> Result<()> {
    let mut units = 0usize;
    if get(std::ptr::null_mut(), 0, &mut units) != sys::Status::napi_ok {
        return Err(invalid_arg("TOON_INVALID_ARGUMENT", "expected a string".into()));
    }
    let cap = units.checked_add(1).ok_or_else(|| napi_status("string too long"))?;
    buf.clear();
    buf.reserve(cap);
    let mut written = 0usize;
    if get(buf.as_mut_ptr(), cap, &mut written) != sys::Status::napi_ok {
        return Err(napi_status("read string"));
    }
    buf.set_len(written.min(units));
    Ok(())
}

/// A JavaScript string from UTF-8 text: copied as Latin-1 when it is ASCII
/// (no UTF-8 decoding in V8, a one-byte string, which JSON.parse reads fastest).
/// Other text is converted to UTF-16 here (V8's UTF-8 decoding is slower).
unsafe fn make_string<'env>(env: &'env Env, text: &str, wide: &mut Vec<u16>) -> Result<Unknown<'env>> {
    match create_string(env.raw(), text, wide) {
        Some(v) => Ok(Unknown::from_raw_unchecked(env.raw(), v)),
        None => Err(napi_status("create string")),
    }
}

/// [`make_string`]'s string (`wide` is scratch for the UTF-16); `None` when
/// N-API fails.
unsafe fn create_string(env: sys::napi_env, text: &str, wide: &mut Vec<u16>) -> Option<sys::napi_value> {
    let mut v = std::ptr::null_mut();
    let status = if text.is_ascii() {
        sys::napi_create_string_latin1(env, text.as_ptr() as *const _, text.len() as isize, &mut v)
    } else {
        utf8_to_utf16(text, wide);
        sys::napi_create_string_utf16(env, wide.as_ptr(), wide.len() as isize, &mut v)
    };
    (status == sys::Status::napi_ok).then_some(v)
}

/// A JavaScript string from JSON text that [`JsonWriter`] wrote: ASCII
/// unless `non_ascii`, so copied byte for byte as Latin-1. (An external
/// string, `node_api_create_external_string_latin1`, made no measurable
/// difference: same page faults, and the copy is about 1% of a decode.)
unsafe fn make_json_string<'env>(env: &'env Env, text: &[u8], non_ascii: bool) -> Result<Unknown<'env>> {
    let mut v = std::ptr::null_mut();
    let status = if non_ascii {
        sys::napi_create_string_utf8(env.raw(), text.as_ptr() as *const _, text.len() as isize, &mut v)
    } else {
        sys::napi_create_string_latin1(env.raw(), text.as_ptr() as *const _, text.len() as isize, &mut v)
    };
    if status != sys::Status::napi_ok {
        return Err(napi_status("create string"));
    }
    Ok(Unknown::from_raw_unchecked(env.raw(), v))
}

/// Encode the value that `json` (written by `JSON.stringify`) holds. With
/// `rawKey`, objects `{"<rawKey>": n}` stand for verbatim text `raws[n]`.
#[napi(js_name = "toonEncodeJson")]
#[allow(clippy::too_many_arguments)]
pub fn encode_json<'env>(
    env: &'env Env,
    json: Unknown<'env>,
    indent: u32,
    delimiter: u32,
    key_folding: bool,
    flatten_depth: f64,
    raw_key: Option<String>,
    raws: Option<Vec<String>>,
) -> Result<Unknown<'env>> {
    let opts = encode_options(indent, delimiter, key_folding, flatten_depth)?;
    with_scratch(|s| {
        let Scratch { input, output, wide, arena, .. } = s;
        arena.raw_key = raw_key;
        arena.raws = raws.unwrap_or_default();
        let json = unsafe { read_string(env.raw(), json.value().value, input, wide, false)? };
        let root = JsonReader::read(json, arena).napi()?;
        // The encoder appends to a String; reuse the output buffer as one.
        let mut out = String::from_utf8(std::mem::take(output)).unwrap_or_default();
        let doc = ArenaDoc { arena, src: json };
        let r = encode_into(&ArenaVal { doc: &doc, id: root }, &opts, &mut out).napi();
        let made = r.and_then(|()| unsafe { make_string(env, &out, wide) });
        *output = out.into_bytes();
        made
    })
}

fn decode_options(indent: u32, strict: bool, expand_paths: bool) -> DecodeOptions {
    DecodeOptions { indent: indent as usize, strict, expand_paths: if expand_paths { ExpandPaths::Safe } else { ExpandPaths::Off } }
}

/// Decode TOON text to JSON text (for `JSON.parse`): the JSON route, for
/// texts the packed route does not take (`toon.js`: lone surrogates, lines
/// holding newlines, texts over 64 MB).
#[napi(js_name = "toonDecodeJson")]
pub fn decode_json<'env>(env: &'env Env, text: Unknown<'env>, indent: u32, strict: bool, expand_paths: bool) -> Result<Unknown<'env>> {
    decode_json_with(env, text, &decode_options(indent, strict, expand_paths))
}

fn decode_json_with<'env>(env: &'env Env, text: Unknown<'env>, opts: &DecodeOptions) -> Result<Unknown<'env>> {
    with_scratch(|s| {
        let Scratch { input, output, wide, .. } = s;
        let text = unsafe { read_string(env.raw(), text.value().value, input, wide, true)? };
        // JSON is about as long as TOON (tables repeat their keys per row).
        output.reserve(text.len() + text.len() / 2 + 16);
        let mut d = DirectJson { w: JsonWriter { src: text, out: output, non_ascii: false }, comma: false };
        decode_with(text, opts, &mut d).napi()?;
        let non_ascii = d.w.non_ascii;
        unsafe { make_json_string(env, output, non_ascii) }
    })
}

// ---------------------------------------------------------------- direct N-API (benchmark only)

#[cold]
fn napi_fail(what: &str) -> Error {
    Error::new(Format::Toon, "TOON_NAPI", format!("N-API call failed: {what}"))
}

/// Read a plain JSON-model JavaScript value into an arena through N-API.
unsafe fn read_js(env: sys::napi_env, v: sys::napi_value, arena: &mut Arena, depth: usize) -> polywire::Result<usize> {
    let mut t = 0;
    if sys::napi_typeof(env, v, &mut t) != sys::Status::napi_ok {
        return Err(napi_fail("typeof"));
    }
    match t {
        sys::ValueType::napi_string => {
            let mut len = 0;
            sys::napi_get_value_string_utf8(env, v, std::ptr::null_mut(), 0, &mut len);
            let start = arena.text.len();
            let buf = arena.text.as_mut_vec();
            buf.resize(start + len + 1, 0);
            let mut written = 0;
            sys::napi_get_value_string_utf8(env, v, buf.as_mut_ptr().add(start) as *mut _, len + 1, &mut written);
            buf.truncate(start + written);
            let span = Span { start, len: written };
            Ok(arena.push(Node::Str(span)))
        }
        sys::ValueType::napi_number => {
            let mut f = 0.0;
            sys::napi_get_value_double(env, v, &mut f);
            if f.fract() == 0.0 && f.abs() < 9.0e15 {
                Ok(arena.push(Node::Int(f as i64)))
            } else {
                Ok(arena.push(Node::Float(f)))
            }
        }
        sys::ValueType::napi_boolean => {
            let mut b = false;
            sys::napi_get_value_bool(env, v, &mut b);
            Ok(arena.push(Node::Bool(b)))
        }
        sys::ValueType::napi_object => {
            if depth >= MAX_DEPTH {
                return Err(napi_fail("too deep"));
            }
            let mut is_array = false;
            sys::napi_is_array(env, v, &mut is_array);
            if is_array {
                let mut n = 0u32;
                sys::napi_get_array_length(env, v, &mut n);
                let mut ids = Vec::with_capacity(n as usize);
                for i in 0..n {
                    let mut item = std::ptr::null_mut();
                    sys::napi_get_element(env, v, i, &mut item);
                    ids.push(read_js(env, item, arena, depth + 1)?);
                }
                let start = arena.items.len();
                arena.items.extend(ids);
                Ok(arena.push(Node::Array { start, len: n as usize }))
            } else {
                let mut keys = std::ptr::null_mut();
                sys::napi_get_all_property_names(
                    env,
                    v,
                    sys::KeyCollectionMode::own_only,
                    sys::KeyFilter::enumerable | sys::KeyFilter::skip_symbols,
                    sys::KeyConversion::numbers_to_strings,
                    &mut keys,
                );
                let mut n = 0u32;
                sys::napi_get_array_length(env, keys, &mut n);
                let mut entries = Vec::with_capacity(n as usize);
                for i in 0..n {
                    let mut k = std::ptr::null_mut();
                    sys::napi_get_element(env, keys, i, &mut k);
                    let kid = read_js(env, k, arena, depth + 1)?;
                    let Node::Str(span) = arena.nodes[kid] else { return Err(napi_fail("key")) };
                    arena.nodes.pop();
                    let mut val = std::ptr::null_mut();
                    sys::napi_get_property(env, v, k, &mut val);
                    entries.push((Key { span, src: false }, read_js(env, val, arena, depth + 1)?));
                }
                let start = arena.entries.len();
                let index_keys = entries.iter().any(|&(k, _)| array_index(slice(&arena.text, k.span)).is_some());
                arena.entries.extend(entries);
                Ok(arena.push(Node::Object { start, len: n as usize, index_keys }))
            }
        }
        _ => Ok(arena.push(Node::Null)),
    }
}

/// Benchmark only: encode a plain JSON-model value read through N-API.
#[napi(js_name = "toonEncodeDirect")]
pub fn encode_direct(env: Env, value: Unknown, indent: u32, delimiter: u32) -> Result<String> {
    let opts = encode_options(indent, delimiter, false, f64::INFINITY)?;
    let mut arena = Arena::default();
    let root = unsafe { read_js(env.raw(), value.value().value, &mut arena, 0) }.napi()?;
    let mut out = String::new();
    let doc = ArenaDoc { arena: &arena, src: "" };
    encode_into(&ArenaVal { doc: &doc, id: root }, &opts, &mut out).napi()?;
    Ok(out)
}

/// Builds JavaScript values directly through N-API.
struct JsBuilder {
    env: sys::napi_env,
}

impl JsBuilder {
    #[inline]
    fn check(s: sys::napi_status, what: &str) -> polywire::Result<()> {
        if s == sys::Status::napi_ok {
            Ok(())
        } else {
            Err(napi_fail(what))
        }
    }
    #[inline]
    fn string_value(&self, s: &str) -> polywire::Result<sys::napi_value> {
        let mut v = std::ptr::null_mut();
        Self::check(unsafe { sys::napi_create_string_utf8(self.env, s.as_ptr() as *const _, s.len() as isize, &mut v) }, "string")?;
        Ok(v)
    }
}

impl Builder for JsBuilder {
    type Value = sys::napi_value;
    type Key = (sys::napi_value, bool);
    type Error = Error;

    fn null(&mut self) -> polywire::Result<sys::napi_value> {
        let mut v = std::ptr::null_mut();
        Self::check(unsafe { sys::napi_get_null(self.env, &mut v) }, "null")?;
        Ok(v)
    }
    fn bool(&mut self, b: bool) -> polywire::Result<sys::napi_value> {
        let mut v = std::ptr::null_mut();
        Self::check(unsafe { sys::napi_get_boolean(self.env, b, &mut v) }, "bool")?;
        Ok(v)
    }
    fn int(&mut self, i: i64) -> polywire::Result<sys::napi_value> {
        self.float(i as f64)
    }
    fn big_int(&mut self, digits: &str) -> polywire::Result<sys::napi_value> {
        self.float(digits.parse::<f64>().unwrap_or(f64::NAN))
    }
    fn float(&mut self, f: f64) -> polywire::Result<sys::napi_value> {
        let mut v = std::ptr::null_mut();
        Self::check(unsafe { sys::napi_create_double(self.env, f, &mut v) }, "number")?;
        Ok(v)
    }
    fn string(&mut self, s: &str) -> polywire::Result<sys::napi_value> {
        self.string_value(s)
    }
    fn key(&mut self, s: &str) -> polywire::Result<(sys::napi_value, bool)> {
        Ok((self.string_value(s)?, s == "__proto__"))
    }
    fn array(&mut self, items: Drain<'_, sys::napi_value>) -> polywire::Result<sys::napi_value> {
        let mut a = std::ptr::null_mut();
        Self::check(unsafe { sys::napi_create_array_with_length(self.env, items.len(), &mut a) }, "array")?;
        for (i, item) in items.enumerate() {
            Self::check(unsafe { sys::napi_set_element(self.env, a, i as u32, item) }, "element")?;
        }
        Ok(a)
    }
    fn object(&mut self, entries: Drain<'_, ((sys::napi_value, bool), sys::napi_value)>) -> polywire::Result<sys::napi_value> {
        let mut o = std::ptr::null_mut();
        Self::check(unsafe { sys::napi_create_object(self.env, &mut o) }, "object")?;
        for ((k, proto), v) in entries {
            if proto {
                // Never through the `__proto__` setter: an own data property.
                let desc = sys::napi_property_descriptor {
                    utf8name: std::ptr::null(),
                    name: k,
                    method: None,
                    getter: None,
                    setter: None,
                    value: v,
                    attributes: sys::PropertyAttributes::writable
                        | sys::PropertyAttributes::enumerable
                        | sys::PropertyAttributes::configurable,
                    data: std::ptr::null_mut(),
                };
                Self::check(unsafe { sys::napi_define_properties(self.env, o, 1, &desc) }, "define")?;
            } else {
                Self::check(unsafe { sys::napi_set_property(self.env, o, k, v) }, "property")?;
            }
        }
        Ok(o)
    }
}

/// Benchmark only: decode TOON text to JavaScript values built through N-API.
#[napi(js_name = "toonDecodeDirect")]
pub fn decode_direct<'env>(env: &'env Env, text: String, indent: u32, strict: bool) -> Result<Unknown<'env>> {
    let opts = DecodeOptions { indent: indent as usize, strict, expand_paths: ExpandPaths::Off };
    let v = decode_with(&text, &opts, &mut JsBuilder { env: env.raw() }).napi()?;
    Ok(unsafe { Unknown::from_raw_unchecked(env.raw(), v) })
}

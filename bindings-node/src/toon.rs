//! TOON text for Node.
//!
//! Values cross the boundary as JSON text, both ways (measured faster than
//! building or reading JavaScript values through N-API; the figures are in
//! `bindings-node/toon.js`): the JavaScript side runs `JSON.stringify` /
//! `JSON.parse`, Rust parses the JSON into a flat [`Arena`] that the core
//! encoder walks, and writes decoded TOON as JSON from the same kind of
//! arena. `toonEncodeDirect` / `toonDecodeDirect` are the direct N-API
//! variants, kept for the benchmark that made that choice.

use crate::errors::{invalid_arg, IntoNapi, Result};
use napi::bindgen_prelude::*;
use napi::sys;
use napi_derive::napi;
use polywire::json::{self, array_index, Builder, ParseOptions};
use polywire::toon::decode::{decode_with, DecodeOptions, ExpandPaths};
use polywire::toon::encode::{encode_into, EncodeOptions, EncodeValue, Kind, KeyFolding, MAX_DEPTH};
use polywire::toon::Delimiter;
use polywire::{Error, Format};
use std::borrow::Cow;
use std::vec::Drain;

// ---------------------------------------------------------------- arena

#[derive(Clone, Copy, Debug)]
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
    Str(Span),
    /// Verbatim text (the reference's `rawString`).
    Raw(Span),
    Array { start: usize, len: usize },
    Object { start: usize, len: usize, index_keys: bool },
}

/// A JSON value in flat vectors: nodes, array items (node ids), object
/// entries (key, node id) and one buffer holding every string. Built bottom
/// up through [`json::Builder`] with no allocation per value.
#[derive(Default)]
struct Arena {
    nodes: Vec<Node>,
    items: Vec<usize>,
    entries: Vec<(Span, usize)>,
    text: String,
    /// With raw strings: the marker key of a raw-string placeholder object
    /// (`{"<key>": index}`) and the raw texts by index.
    raw_key: Option<String>,
    raws: Vec<String>,
}

impl Arena {
    #[inline]
    fn span(&mut self, s: &str) -> Span {
        let start = self.text.len();
        self.text.push_str(s);
        Span { start, len: s.len() }
    }

    #[inline]
    fn str(&self, s: Span) -> &str {
        // Spans are made by `span`, on char boundaries of `text`.
        self.text.get(s.start..s.start + s.len).unwrap_or_default()
    }

    #[inline]
    fn push(&mut self, n: Node) -> usize {
        self.nodes.push(n);
        self.nodes.len() - 1
    }

    /// Write node `id` as JSON text (keys in their order; the caller's
    /// `JSON.parse` applies JavaScript's).
    fn write_json(&self, id: usize, out: &mut Vec<u8>) {
        match self.nodes.get(id).copied().unwrap_or(Node::Null) {
            Node::Null => out.extend_from_slice(b"null"),
            Node::Bool(true) => out.extend_from_slice(b"true"),
            Node::Bool(false) => out.extend_from_slice(b"false"),
            Node::Int(i) => json::write_i64(out, i),
            Node::Float(f) => json::write_f64(out, f),
            Node::Str(s) | Node::Raw(s) => json::write_str(out, self.str(s)),
            Node::Array { start, len } => {
                out.push(b'[');
                for (i, &item) in self.items[start..start + len].iter().enumerate() {
                    if i > 0 {
                        out.push(b',');
                    }
                    self.write_json(item, out);
                }
                out.push(b']');
            }
            Node::Object { start, len, .. } => {
                out.push(b'{');
                for (i, &(k, v)) in self.entries[start..start + len].iter().enumerate() {
                    if i > 0 {
                        out.push(b',');
                    }
                    json::write_str(out, self.str(k));
                    out.push(b':');
                    self.write_json(v, out);
                }
                out.push(b'}');
            }
        }
    }

    /// Write node `id` as the reference's decode events (`startObject`,
    /// `key`, `primitive`, ...), in document order, as JSON objects each
    /// followed by a comma.
    fn write_events(&self, id: usize, out: &mut Vec<u8>) {
        match self.nodes.get(id).copied().unwrap_or(Node::Null) {
            Node::Array { start, len } => {
                out.extend_from_slice(b"{\"type\":\"startArray\",\"length\":");
                json::write_u64(out, len as u64);
                out.extend_from_slice(b"},");
                for &item in &self.items[start..start + len] {
                    self.write_events(item, out);
                }
                out.extend_from_slice(b"{\"type\":\"endArray\"},");
            }
            Node::Object { start, len, .. } => {
                out.extend_from_slice(b"{\"type\":\"startObject\"},");
                for &(k, v) in &self.entries[start..start + len] {
                    out.extend_from_slice(b"{\"type\":\"key\",\"key\":");
                    json::write_str(out, self.str(k));
                    out.extend_from_slice(b"},");
                    self.write_events(v, out);
                }
                out.extend_from_slice(b"{\"type\":\"endObject\"},");
            }
            _ => {
                out.extend_from_slice(b"{\"type\":\"primitive\",\"value\":");
                self.write_json(id, out);
                out.extend_from_slice(b"},");
            }
        }
    }
}

impl Builder for Arena {
    type Value = usize;
    type Key = Span;
    type Error = Error;

    #[inline]
    fn null(&mut self) -> polywire::Result<usize> {
        Ok(self.push(Node::Null))
    }
    #[inline]
    fn bool(&mut self, b: bool) -> polywire::Result<usize> {
        Ok(self.push(Node::Bool(b)))
    }
    #[inline]
    fn int(&mut self, i: i64) -> polywire::Result<usize> {
        Ok(self.push(Node::Int(i)))
    }
    fn big_int(&mut self, digits: &str) -> polywire::Result<usize> {
        // JavaScript numbers: beyond i64 a literal is a double.
        let f = digits.parse::<f64>().unwrap_or(f64::NAN);
        Ok(self.push(Node::Float(f)))
    }
    #[inline]
    fn float(&mut self, f: f64) -> polywire::Result<usize> {
        Ok(self.push(Node::Float(f)))
    }
    #[inline]
    fn string(&mut self, s: &str) -> polywire::Result<usize> {
        let span = self.span(s);
        Ok(self.push(Node::Str(span)))
    }
    #[inline]
    fn key(&mut self, s: &str) -> polywire::Result<Span> {
        Ok(self.span(s))
    }
    fn array(&mut self, items: Drain<'_, usize>) -> polywire::Result<usize> {
        let start = self.items.len();
        self.items.extend(items);
        let len = self.items.len() - start;
        Ok(self.push(Node::Array { start, len }))
    }
    fn object(&mut self, entries: Drain<'_, (Span, usize)>) -> polywire::Result<usize> {
        let start = self.entries.len();
        self.entries.extend(entries);
        let len = self.entries.len() - start;
        if len == 1 && self.raw_key.is_some() {
            if let Some(raw) = self.raw_placeholder(start) {
                return Ok(raw);
            }
        }
        let mut index_keys = false;
        for &(k, _) in &self.entries[start..] {
            let b = self.text.as_bytes()[k.start..].first();
            if matches!(b, Some(b'0'..=b'9')) && k.len > 0 && array_index(self.str(k)).is_some() {
                index_keys = true;
                break;
            }
        }
        Ok(self.push(Node::Object { start, len, index_keys }))
    }
}

impl Arena {
    /// `{"<raw key>": n}` stands for raw string `n`.
    #[cold]
    fn raw_placeholder(&mut self, entry: usize) -> Option<usize> {
        let (k, v) = self.entries[entry];
        if Some(self.str(k)) != self.raw_key.as_deref() {
            return None;
        }
        let Node::Int(n) = self.nodes[v] else { return None };
        let raw = self.raws.get(usize::try_from(n).ok()?)?.clone();
        self.entries.truncate(entry);
        let span = self.span(&raw);
        Some(self.push(Node::Raw(span)))
    }
}

/// A node of an arena, as the core encoder walks it.
#[derive(Clone, Copy)]
struct ArenaVal<'a> {
    arena: &'a Arena,
    id: usize,
}

impl<'a> ArenaVal<'a> {
    #[inline]
    fn node(&self) -> Node {
        self.arena.nodes.get(self.id).copied().unwrap_or(Node::Null)
    }
    #[inline]
    fn at(&self, id: usize) -> Self {
        ArenaVal { arena: self.arena, id }
    }
    #[inline]
    fn entries(&self) -> &'a [(Span, usize)] {
        match self.node() {
            Node::Object { start, len, .. } => &self.arena.entries[start..start + len],
            _ => &[],
        }
    }
}

impl<'a> EncodeValue for ArenaVal<'a> {
    type Error = Error;

    #[inline]
    fn kind(&self) -> polywire::Result<Kind<'_>> {
        Ok(match self.node() {
            Node::Null => Kind::Null,
            Node::Bool(b) => Kind::Bool(b),
            Node::Int(i) => Kind::Int(i),
            Node::Float(f) => Kind::Float(f),
            Node::Str(s) => Kind::Str(Cow::Borrowed(self.arena.str(s))),
            Node::Raw(s) => Kind::Raw(Cow::Borrowed(self.arena.str(s))),
            Node::Array { .. } => Kind::Array,
            Node::Object { .. } => Kind::Object,
        })
    }

    #[inline]
    fn array_len(&self) -> usize {
        match self.node() {
            Node::Array { len, .. } => len,
            _ => 0,
        }
    }

    fn array_items(&self) -> impl Iterator<Item = polywire::Result<Self>> + '_ {
        let items: &'a [usize] = match self.node() {
            Node::Array { start, len } => &self.arena.items[start..start + len],
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

    fn object_entries(&self) -> impl Iterator<Item = polywire::Result<(Cow<'_, str>, Self)>> + '_ {
        self.entries().iter().map(|&(k, v)| Ok((Cow::Borrowed(self.arena.str(k)), self.at(v))))
    }

    fn object_get(&self, key: &str) -> polywire::Result<Option<Self>> {
        Ok(self.entries().iter().find(|&&(k, _)| self.arena.str(k) == key).map(|&(_, v)| self.at(v)))
    }

    #[inline]
    fn object_has_index_key(&self) -> polywire::Result<bool> {
        Ok(matches!(self.node(), Node::Object { index_keys: true, .. }))
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

// ---------------------------------------------------------------- entry points

/// Buffers kept between calls: a large document then costs no fresh
/// allocation (and no page faults) on every call.
#[derive(Default)]
struct Scratch {
    input: Vec<u8>,
    output: Vec<u8>,
    arena: Arena,
}

impl Arena {
    fn reset(&mut self) {
        self.nodes.clear();
        self.items.clear();
        self.entries.clear();
        self.text.clear();
        self.raw_key = None;
        self.raws.clear();
    }
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
            if s.input.capacity() > KEEP || s.output.capacity() > KEEP || s.arena.text.capacity() > KEEP || s.arena.nodes.capacity() > KEEP / 16 {
                *s = Scratch::default();
            }
            r
        }
        Err(_) => f(&mut Scratch::default()),
    })
}

#[cold]
fn napi_status(what: &str) -> napi::Error<crate::errors::Code> {
    invalid_arg("TOON_NAPI", format!("N-API call failed: {what}"))
}

/// Read a JavaScript string as UTF-8 into `buf` (lone surrogates become
/// U+FFFD; the JavaScript side maps them before calling).
unsafe fn read_string(env: sys::napi_env, v: sys::napi_value, buf: &mut Vec<u8>) -> Result<&str> {
    let mut len = 0usize;
    if sys::napi_get_value_string_utf8(env, v, std::ptr::null_mut(), 0, &mut len) != sys::Status::napi_ok {
        return Err(invalid_arg("TOON_INVALID_ARGUMENT", "expected a string".into()));
    }
    buf.clear();
    buf.reserve(len + 1);
    let mut written = 0usize;
    if sys::napi_get_value_string_utf8(env, v, buf.as_mut_ptr() as *mut _, len + 1, &mut written) != sys::Status::napi_ok {
        return Err(napi_status("read string"));
    }
    buf.set_len(written.min(len));
    // N-API writes well-formed UTF-8.
    std::str::from_utf8(buf).map_err(|_| napi_status("string is not UTF-8"))
}

/// A JavaScript string from UTF-8 text: copied as Latin-1 when it is ASCII
/// (no UTF-8 decoding in V8, a one-byte string, which JSON.parse reads fastest).
unsafe fn make_string<'env>(env: &'env Env, text: &[u8]) -> Result<Unknown<'env>> {
    let mut v = std::ptr::null_mut();
    let status = if text.is_ascii() {
        sys::napi_create_string_latin1(env.raw(), text.as_ptr() as *const _, text.len() as isize, &mut v)
    } else {
        sys::napi_create_string_utf8(env.raw(), text.as_ptr() as *const _, text.len() as isize, &mut v)
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
        let Scratch { input, output, arena } = s;
        arena.raw_key = raw_key;
        arena.raws = raws.unwrap_or_default();
        let json = unsafe { read_string(env.raw(), json.value().value, input)? };
        let popts = ParseOptions { utf8_checked: true, ..ParseOptions::default() };
        let root = json::parse_with(json.as_bytes(), popts, arena).map_err(json_error_to_toon).napi()?;
        // The encoder appends to a String; reuse the output buffer as one.
        let mut out = String::from_utf8(std::mem::take(output)).unwrap_or_default();
        let r = encode_into(&ArenaVal { arena, id: root }, &opts, &mut out).napi();
        let made = r.and_then(|()| unsafe { make_string(env, out.as_bytes()) });
        *output = out.into_bytes();
        made
    })
}

fn decode_options(indent: u32, strict: bool, expand_paths: bool) -> DecodeOptions {
    DecodeOptions {
        indent: indent as usize,
        strict,
        expand_paths: if expand_paths { ExpandPaths::Safe } else { ExpandPaths::Off },
    }
}

/// Decode TOON text to JSON text (for `JSON.parse`).
#[napi(js_name = "toonDecodeJson")]
pub fn decode_json<'env>(env: &'env Env, text: Unknown<'env>, indent: u32, strict: bool, expand_paths: bool) -> Result<Unknown<'env>> {
    let opts = decode_options(indent, strict, expand_paths);
    with_scratch(|s| {
        let Scratch { input, output, arena } = s;
        let text = unsafe { read_string(env.raw(), text.value().value, input)? };
        let root = decode_with(text, &opts, arena).napi()?;
        arena.write_json(root, output);
        unsafe { make_string(env, output) }
    })
}

/// Decode TOON text to the reference's event stream, as a JSON array.
#[napi(js_name = "toonDecodeEventsJson")]
pub fn decode_events_json<'env>(
    env: &'env Env,
    text: Unknown<'env>,
    indent: u32,
    strict: bool,
    expand_paths: bool,
) -> Result<Unknown<'env>> {
    let opts = decode_options(indent, strict, expand_paths);
    with_scratch(|s| {
        let Scratch { input, output, arena } = s;
        let text = unsafe { read_string(env.raw(), text.value().value, input)? };
        let root = decode_with(text, &opts, arena).napi()?;
        output.push(b'[');
        arena.write_events(root, output);
        if output.len() > 1 {
            output.pop(); // the last comma
        }
        output.push(b']');
        unsafe { make_string(env, output) }
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
                    entries.push((span, read_js(env, val, arena, depth + 1)?));
                }
                let start = arena.entries.len();
                let index_keys = entries.iter().any(|&(k, _)| array_index(arena.str(k)).is_some());
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
    encode_into(&ArenaVal { arena: &arena, id: root }, &opts, &mut out).napi()?;
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

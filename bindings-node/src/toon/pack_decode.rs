//! The packed route for decoding, the encoder's packed route in reverse:
//! the core decoder's builder calls (in document order) are written as ops,
//! numbers and one joined string, which `unpackValue` in
//! `bindings-node/lib/toon.js` turns into values with plain object and array
//! code.
//!
//! Why not JSON text and `JSON.parse`: for a small document of many objects
//! with different keys (a configuration), `JSON.parse` reads every key and
//! looks it up in V8's string table; here each key crosses once per table
//! life, as an id, and numbers cross as doubles. Measured on the config
//! dataset of bench/toon_bench.mjs (Node 20): building the value from the
//! ops takes about a third of `JSON.parse`'s time on the same value.
//!
//! Used for `decode` of texts up to [`PACKED_MAX`] bytes, where it measured
//! faster than the JSON and tape routes on every benchmark dataset (decode
//! ops/s against JSON.parse of the same value, same run: orders 1.04x,
//! analytics 1.23x, repos 1.00x, config 0.85x; the JSON/tape route gave
//! 0.73x, 0.88x, 0.58x and 0.55x). Texts with lone surrogates, longer texts
//! and `decodeFromLines` keep the JSON route.
//!
//! The ops are those of [`super::pack`] (`payload << 4 | tag`): first one
//! `P_KEY_NEW` per key new to the table (its text leads the joined string,
//! its id is the next one), then the value. Containers carry their count;
//! an object's entries are a key op (`P_KEY` by id, or `P_KEY_TEXT` with its
//! text in the string for a key the table does not keep) and the value.
//! Strings give their length in UTF-16 units.
//!
//! The key table (text to id) lives here; `toon.js` keeps the same ids
//! (id to string). A call that fails or stops takes back the keys it added,
//! so the two stay in step; when the table is full, or `toon.js` asks
//! (its side failed after a call), the table starts over and the result
//! says so (`HEAD_RESET`).

use super::pack::{
    typed_array_raw, with_state, KEY_CAP, P_ARR, P_FALSE, P_KEY, P_KEY_NEW, P_KEY_TEXT, P_NULL, P_NUM, P_OBJ, P_SHIFT, P_STR, P_TRUE,
};
use super::{decode_options, literal_in_json, make_string, read_string, LiteralInJson};
use crate::errors::{invalid_arg, IntoNapi, Result};
use napi::bindgen_prelude::*;
use napi::sys;
use napi_derive::napi;
use polywire::json::{self, Builder, QuickNumber};
use polywire::toon::decode::decode_with;
use polywire::{Error, Format};
use rustc_hash::FxHashMap;
use std::vec::Drain;

/// Keys longer than this (in bytes) are not kept in the table.
const KEY_MAX_LEN: usize = 64;

/// Longer texts go the JSON route (their ops could outgrow what a typed
/// array holds).
const PACKED_MAX: usize = 64 << 20;

/// Buffers kept between calls up to this many elements; larger ones (from a
/// large document) are let go after the call.
const KEEP: usize = 1 << 16;

/// The result header, in the first [`HEAD_LEN`] elements of the ops array
/// `toon.js` passes in (one typed array fewer to look up per call).
const HEAD_ROUTE: usize = 0;
const HEAD_OPS: usize = 1;
const HEAD_NUMS: usize = 2;
const HEAD_RESET: usize = 3;
const HEAD_PENDING: usize = 4;
const HEAD_NEW_KEYS: usize = 5;
const HEAD_LEN: usize = 6;

/// `HEAD_ROUTE`: the result is JSON text or a tape (see `decode_json`).
const ROUTE_JSON: i32 = 0;
/// `HEAD_ROUTE`: the result is the joined string of a packed value.
const ROUTE_PACKED: i32 = 1;

/// Whether a payload fits an op (ops are int32).
const P_MAX: usize = 1 << 27;

/// The decoding side of the packed route, kept between calls: the key table,
/// and a result whose ops did not fit the arrays `toon.js` passed.
#[derive(Default)]
pub(super) struct PackDecoder {
    ids: FxHashMap<Box<str>, u32>,
    /// Keys by id.
    names: Vec<Box<str>>,
    ops: Vec<i32>,
    nums: Vec<f64>,
    text: String,
    /// The open containers: the index of the container's op, its count so
    /// far, and whether it is an array.
    open: Vec<(usize, u32, bool)>,
    /// The new keys' text then `text`, and the new keys' ops (kept between
    /// calls, as the rest).
    joined: String,
    key_ops: Vec<i32>,
}

/// Decode `text` with state `state`. A document up to [`PACKED_MAX`] bytes
/// comes back packed: the joined string, with the header in `ops[..HEAD_LEN]`,
/// the ops after it and the numbers in `nums` (or kept for
/// [`pack_take`] when they do not fit). Any other comes back as
/// `toonDecodeJson` gives it, with the header's route `ROUTE_JSON`. `reset`
/// first empties the key table (`toon.js` lost its copy).
#[napi(js_name = "toonPackDecode")]
#[allow(clippy::too_many_arguments)]
pub fn pack_decode<'env>(
    env: &'env Env,
    state: u32,
    text: Unknown<'env>,
    indent: u32,
    strict: bool,
    expand_paths: bool,
    ops: Unknown<'env>,
    nums: Unknown<'env>,
    reset: bool,
) -> Result<Unknown<'env>> {
    with_state(state, |s| {
        let this = &mut s.dec;
        let raw = env.raw();
        // SAFETY: the buffers are JavaScript's, untouched during this call;
        // the pointers are not kept.
        let (ops_ptr, ops_len) = unsafe { typed_array_raw::<i32>(raw, ops.value().value, sys::TypedarrayType::int32_array)? };
        let (nums_ptr, nums_len) = unsafe { typed_array_raw::<f64>(raw, nums.value().value, sys::TypedarrayType::float64_array)? };
        if ops_len < HEAD_LEN {
            return Err(invalid_arg("TOON_INVALID_ARGUMENT", format!("expected room for a header of {HEAD_LEN}")));
        }
        // SAFETY: checked length.
        let head = unsafe { std::slice::from_raw_parts_mut(ops_ptr, HEAD_LEN) };
        head.fill(0);
        // Another instance's table (see `PackState`) starts afresh too.
        let reset = reset || s.dec_owner != state || this.names.len() >= KEY_CAP;
        s.dec_owner = state;
        if reset {
            this.ids.clear();
            this.names.clear();
        }
        head[HEAD_RESET] = i32::from(reset);
        let opts = decode_options(indent, strict, expand_paths);
        let packed = super::with_scratch(|s| -> Result<Option<usize>> {
            let text = unsafe { read_string(raw, text.value().value, &mut s.input, &mut s.wide, true)? };
            if text.len() > PACKED_MAX {
                return Ok(None);
            }
            let first_new = this.names.len();
            this.ops.clear();
            this.nums.clear();
            this.text.clear();
            this.open.clear();
            let mut w = PackWriter {
                ids: &mut this.ids,
                names: &mut this.names,
                ops: &mut this.ops,
                nums: &mut this.nums,
                text: &mut this.text,
                open: &mut this.open,
            };
            let r = decode_with(text, &opts, &mut w);
            if r.is_err() {
                // Take back the keys this call added: `toon.js` never sees them.
                for name in this.names.drain(first_new..) {
                    this.ids.remove(&name);
                }
            }
            match r {
                Ok(()) => Ok(Some(first_new)),
                Err(e) if e.code() == TOO_LONG => Ok(None),
                Err(e) => Err(e).napi(),
            }
        })?;
        let Some(first_new) = packed else {
            head[HEAD_ROUTE] = ROUTE_JSON;
            return super::decode_json_with(env, text, &opts);
        };
        // The new keys lead: their ops first, their text at the start.
        let new_keys = &this.names[first_new..];
        this.joined.clear();
        this.key_ops.clear();
        for k in new_keys {
            this.joined.push_str(k);
            this.key_ops.push(((utf16_len(k) as i32) << P_SHIFT) | P_KEY_NEW);
        }
        this.joined.push_str(&this.text);
        this.ops.splice(0..0, this.key_ops.iter().copied());
        head[HEAD_ROUTE] = ROUTE_PACKED;
        head[HEAD_OPS] = this.ops.len() as i32;
        head[HEAD_NUMS] = this.nums.len() as i32;
        head[HEAD_NEW_KEYS] = new_keys.len() as i32;
        // SAFETY: as above.
        let pending = unsafe { this.copy_out((ops_ptr, ops_len), (nums_ptr, nums_len)) };
        head[HEAD_PENDING] = i32::from(pending);
        let joined = unsafe { make_string(env, &this.joined, &mut Vec::new()) };
        if !pending {
            this.let_go();
        }
        joined
    })
}

/// Copy the pending ops and numbers of state `state` into `ops` (after the
/// header) and `nums`, made large enough after `toonPackDecode` said they
/// were not.
#[napi(js_name = "toonPackTake")]
pub fn pack_take(env: &Env, state: u32, ops: Unknown<'_>, nums: Unknown<'_>) -> Result<()> {
    with_state(state, |s| s.dec.take(env, ops, nums))
}

/// The builder: writes ops as the decoder's calls come.
struct PackWriter<'a> {
    ids: &'a mut FxHashMap<Box<str>, u32>,
    names: &'a mut Vec<Box<str>>,
    ops: &'a mut Vec<i32>,
    nums: &'a mut Vec<f64>,
    text: &'a mut String,
    open: &'a mut Vec<(usize, u32, bool)>,
}

/// A key as the builder hands it back: its id, or none (not kept: its text
/// is written at each use).
type KeyId = Option<u32>;

/// The length of `s` in UTF-16 units.
#[inline]
fn utf16_len(s: &str) -> usize {
    if s.is_ascii() {
        return s.len();
    }
    // One unit per character, two for those of four bytes: bytes that are
    // not continuation bytes, plus the four-byte leads.
    s.bytes().map(|b| usize::from((b as i8) >= -64) + usize::from(b >= 0xF0)).sum()
}

/// The error code of a document the ops cannot hold (a string or container
/// of 2^27 or more): it goes the JSON route.
const TOO_LONG: &str = "TOON_PACK_TOO_LONG";

#[cold]
fn too_long() -> Error {
    Error::new(Format::Toon, TOO_LONG, "a string or container too long for an op: decoded the JSON way")
}

impl PackWriter<'_> {
    /// A value (or a container's opening op) is about to be written: count it
    /// as an item of the open array.
    #[inline]
    fn item(&mut self) {
        if let Some(top) = self.open.last_mut().filter(|top| top.2) {
            top.1 += 1;
        }
    }

    #[inline]
    fn op(&mut self, tag: i32, payload: usize) {
        self.ops.push(((payload as i32) << P_SHIFT) | tag);
    }

    #[inline]
    fn leaf(&mut self, tag: i32) -> polywire::Result<()> {
        self.item();
        self.op(tag, 0);
        Ok(())
    }

    #[inline]
    fn number(&mut self, f: f64) -> polywire::Result<()> {
        self.item();
        self.nums.push(f);
        self.op(P_NUM, 0);
        Ok(())
    }

    /// `s` appended to the text; its length in UTF-16 units.
    #[inline]
    fn push_text(&mut self, s: &str) -> polywire::Result<usize> {
        let units = utf16_len(s);
        if units >= P_MAX {
            return Err(too_long());
        }
        self.text.push_str(s);
        Ok(units)
    }

    /// The id of key `s`, made when it is new and the table has room.
    #[inline]
    fn key_id(&mut self, s: &str) -> KeyId {
        if let Some(&id) = self.ids.get(s) {
            return Some(id);
        }
        if s.len() > KEY_MAX_LEN || self.names.len() >= KEY_CAP {
            return None;
        }
        let id = self.names.len() as u32;
        self.names.push(s.into());
        self.ids.insert(s.into(), id);
        Some(id)
    }

    /// An entry's key op.
    #[inline]
    fn key_op(&mut self, key: KeyId, s: &str) -> polywire::Result<()> {
        if let Some(top) = self.open.last_mut() {
            top.1 += 1;
        }
        match key {
            Some(id) => self.op(P_KEY, id as usize),
            None => {
                let units = self.push_text(s)?;
                self.op(P_KEY_TEXT, units);
            }
        }
        Ok(())
    }

    #[inline]
    fn begin(&mut self, tag: i32) {
        self.item();
        self.open.push((self.ops.len(), 0, tag == P_ARR));
        self.op(tag, 0);
    }

    #[inline]
    fn end(&mut self, tag: i32) -> polywire::Result<()> {
        let Some((at, count, _)) = self.open.pop() else {
            return Err(Error::new(Format::Toon, "TOON_INTERNAL", "a container closed that was not opened"));
        };
        if count as usize >= P_MAX {
            return Err(too_long());
        }
        if let Some(op) = self.ops.get_mut(at) {
            *op = ((count as i32) << P_SHIFT) | tag;
        }
        Ok(())
    }
}

impl Builder for PackWriter<'_> {
    type Value = ();
    type Key = KeyId;
    type Error = Error;

    #[inline]
    fn null(&mut self) -> polywire::Result<()> {
        self.leaf(P_NULL)
    }
    #[inline]
    fn bool(&mut self, b: bool) -> polywire::Result<()> {
        self.leaf(if b { P_TRUE } else { P_FALSE })
    }
    #[inline]
    fn int(&mut self, i: i64) -> polywire::Result<()> {
        // Correctly rounded, as `JSON.parse` reads the literal.
        self.number(i as f64)
    }
    fn big_int(&mut self, digits: &str) -> polywire::Result<()> {
        // JavaScript numbers: beyond i64 a literal is a double.
        self.number(digits.parse::<f64>().unwrap_or(f64::NAN))
    }
    #[inline]
    fn float(&mut self, f: f64) -> polywire::Result<()> {
        self.number(f)
    }
    #[inline]
    fn string(&mut self, s: &str) -> polywire::Result<()> {
        self.item();
        let units = self.push_text(s)?;
        self.op(P_STR, units);
        Ok(())
    }
    #[inline]
    fn key(&mut self, s: &str) -> polywire::Result<KeyId> {
        let key = self.key_id(s);
        self.key_op(key, s)?;
        Ok(key)
    }
    #[inline]
    fn key_again(&mut self, key: &KeyId, s: &str) -> polywire::Result<KeyId> {
        self.key_op(*key, s)?;
        Ok(*key)
    }
    #[inline]
    fn key_ahead(&mut self, s: &str) -> polywire::Result<KeyId> {
        Ok(self.key_id(s))
    }
    #[inline]
    fn begin_array(&mut self) -> polywire::Result<()> {
        self.begin(P_ARR);
        Ok(())
    }
    #[inline]
    fn begin_object(&mut self) -> polywire::Result<()> {
        self.begin(P_OBJ);
        Ok(())
    }
    #[inline]
    fn array(&mut self, _: Drain<'_, ()>) -> polywire::Result<()> {
        self.end(P_ARR)
    }
    #[inline]
    fn object(&mut self, _: Drain<'_, (KeyId, ())>) -> polywire::Result<()> {
        self.end(P_OBJ)
    }

    /// The double `JSON.parse` would give for the text `decode_json` writes
    /// ([`literal_in_json`]).
    #[inline]
    fn number_value(&mut self, text: &str, integer: bool, quick: Option<QuickNumber>) -> polywire::Result<Option<()>> {
        match literal_in_json(text, quick) {
            LiteralInJson::Zero => self.number(0.0).map(Some),
            LiteralInJson::Text => {
                let f = match quick {
                    Some(QuickNumber::Int(i)) => i as f64,
                    Some(QuickNumber::Float(f)) => f,
                    // At most 300 bytes and no exponent: finite.
                    None => text.parse::<f64>().unwrap_or(f64::NAN),
                };
                self.number(f).map(Some)
            }
            LiteralInJson::Read => json::javascript_number(self, text, integer),
        }
    }

    fn number_token(&mut self, text: &str, integer: bool) -> polywire::Result<Option<()>> {
        self.number_value(text, integer, None)
    }
}

impl PackDecoder {
    /// See [`pack_take`].
    fn take(&mut self, env: &Env, ops: Unknown<'_>, nums: Unknown<'_>) -> Result<()> {
        // SAFETY: as in `decode`.
        let ops = unsafe { typed_array_raw::<i32>(env.raw(), ops.value().value, sys::TypedarrayType::int32_array)? };
        let nums = unsafe { typed_array_raw::<f64>(env.raw(), nums.value().value, sys::TypedarrayType::float64_array)? };
        if unsafe { self.copy_out(ops, nums) } {
            return Err(invalid_arg("TOON_INVALID_ARGUMENT", "expected arrays large enough for the pending result".into()));
        }
        self.let_go();
        Ok(())
    }

    /// Lets go of buffers a large document made large.
    fn let_go(&mut self) {
        if self.ops.capacity() > KEEP
            || self.nums.capacity() > KEEP
            || self.text.capacity() > KEEP * 4
            || self.joined.capacity() > KEEP * 4
            || self.open.capacity() > KEEP
        {
            *self = PackDecoder { ids: std::mem::take(&mut self.ids), names: std::mem::take(&mut self.names), ..PackDecoder::default() };
        }
    }

    /// Copies the ops (after the header) and numbers into the typed arrays'
    /// buffers when they fit; whether they did not (they are then kept for
    /// `take`).
    ///
    /// SAFETY: the pointers and lengths are those of live typed arrays.
    unsafe fn copy_out(&mut self, (ops_ptr, ops_len): (*mut i32, usize), (nums_ptr, nums_len): (*mut f64, usize)) -> bool {
        if self.ops.len() > ops_len.saturating_sub(HEAD_LEN) || self.nums.len() > nums_len {
            return true;
        }
        std::ptr::copy_nonoverlapping(self.ops.as_ptr(), ops_ptr.add(HEAD_LEN), self.ops.len());
        std::ptr::copy_nonoverlapping(self.nums.as_ptr(), nums_ptr, self.nums.len());
        false
    }
}

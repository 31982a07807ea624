//! The packed route for encoding: a plain JavaScript value walked once in
//! JavaScript (`packObject` and friends in `bindings-node/toon.js`) into a
//! flat array of ops and numbers and one string, read here into an
//! [`Arena`] for the core encoder.
//!
//! Why not `JSON.stringify`: it formats every double as text (about 80 ns
//! each in V8, most of its time on number-heavy data), writes every key of
//! every object again, and the JSON text must then be read back here. The
//! walk hands numbers over as doubles (formatted here, `ShortDecimal` or
//! `ryu_js`), keys as ids into a table kept between calls, and strings as one
//! string (a rope of them). Measured on the benchmark datasets (Node 20): the walk
//! takes 0.3-0.6x the time of `JSON.stringify` plus the plainness check it
//! replaces, and reading the arrays here less than reading the JSON text.
//!
//! The input:
//! * `ops` (`Float64Array`): 8-byte slots, one per value and per object
//!   key, holding an op `payload * 16 + tag` (see the `P_*` tags) as an
//!   int32 in the slot's first four bytes (written through an `Int32Array`
//!   view), each number op followed by a slot holding the number as a
//!   double. Containers give their count; their items (for objects: key
//!   op, value ops) follow. (One array rather than int32 ops beside a
//!   number array: the walk then keeps a single position, in a local, which
//!   measured 20-30% faster than two positions in module variables. Ops as
//!   int32 rather than doubles: converting and checking a double took a
//!   fifth of this reader's time.)
//! * `text`: the strings and new keys, in walk order, concatenated; each string
//!   op gives its length in UTF-16 units.
//!
//! Keys: the first time a short key is met it comes as `P_KEY_NEW` and joins
//! the [`PackEncoder`]'s table under the next id (the JavaScript side
//! numbers it the same way); afterwards it comes as `P_KEY` with that id.
//! The JavaScript side clears its numbering (and passes `reset`) whenever a
//! call did not end here successfully, so the two never drift apart.
//!
//! The input is checked as it is read (counts against what is left, ids and
//! lengths against the table and the text, nesting depth), so malformed
//! arrays give `TOON_PACKED`, never a panic or an allocation ahead of data.

use super::{encode_options, json_too_deep, make_string, read_latin1, read_utf16, slice, utf16_push_utf8, utf16_to_utf8, with_scratch, Arena, ArenaDoc, ArenaVal, Key, Node, Span, TABLE_UNREAD};
use crate::errors::{invalid_arg, IntoNapi, Result};
use napi::bindgen_prelude::*;
use napi::sys;
use napi_derive::napi;
use polywire::json::array_index;
use polywire::toon::encode::{encode_into, CellWriter, MAX_DEPTH};
use polywire::{Error, Format};

pub(super) const P_NULL: i32 = 0;
pub(super) const P_FALSE: i32 = 1;
pub(super) const P_TRUE: i32 = 2;
pub(super) const P_NUM: i32 = 3;
pub(super) const P_STR: i32 = 4;
pub(super) const P_ARR: i32 = 5;
pub(super) const P_OBJ: i32 = 6;
/// A key met for the first time: its text follows; it joins the table.
pub(super) const P_KEY_NEW: i32 = 7;
/// A key of the table, by id.
pub(super) const P_KEY: i32 = 8;
/// A key not kept in the table (long, or the table is full): its text follows.
pub(super) const P_KEY_TEXT: i32 = 9;
/// A string of the wide text (see [`pack_encode`]): the walk sends long
/// strings with characters beyond U+00FF there, so that the rest can
/// come as Latin-1.
pub(super) const P_STR_WIDE: i32 = 10;
pub(super) const P_SHIFT: u32 = 4;

/// Keys a table holds at most (the JavaScript side's `PACK_KEY_CAP`).
pub(super) const KEY_CAP: usize = 4096;

/// Columns of a table read as a [`Node::Table`] at most (wider ones are
/// read entry by entry).
const TABLE_MAX_COLS: usize = 64;

#[cold]
fn malformed(op: usize, what: &str) -> Error {
    Error::new(Format::Toon, "TOON_PACKED", format!("malformed packed value: {what} (op {op})"))
}

#[cold]
fn lone_surrogate(op: usize) -> Error {
    // The JavaScript side answers this code by taking the JSON route, whose
    // normalisation throws the reference's TypeError.
    Error::new(Format::Json, "JSON_LONE_SURROGATE", format!("expected no lone surrogate (string of op {op})"))
}

/// Keys met so far, as UTF-8, by id.
#[derive(Default)]
struct KeyTable {
    text: String,
    /// Span in `text` and whether the key is an array index, by id.
    keys: Vec<(Span, bool)>,
}

/// The encoding side of the packed route, kept between calls: the key table.
#[derive(Default)]
pub(super) struct PackEncoder {
    table: KeyTable,
}

/// The packed routes' state of one `toon.js` instance: its key tables.
#[derive(Default)]
pub(super) struct PackState {
    enc: PackEncoder,
    pub(super) dec: super::pack_decode::PackDecoder,
}

thread_local! {
    /// By id: each `toon.js` instance (module loads in this thread) has its
    /// own, so its key numbering and Rust's stay one pair.
    static PACK_STATES: std::cell::RefCell<Vec<PackState>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Run `f` with the state `id`.
pub(super) fn with_state<R>(id: u32, f: impl FnOnce(&mut PackState) -> Result<R>) -> Result<R> {
    PACK_STATES.with(|states| {
        let mut states = states.try_borrow_mut().map_err(|_| invalid_arg("TOON_INVALID_ARGUMENT", "packed state in use".into()))?;
        let state = states.get_mut(id as usize).ok_or_else(|| invalid_arg("TOON_INVALID_ARGUMENT", format!("no packed state {id}")))?;
        f(state)
    })
}

/// A new packed-route state for a `toon.js` instance; its id. (Plain
/// functions and an id, not a class: a class method costs about 160 ns more
/// per call in napi-rs, a fifth of encoding a small object.)
#[napi(js_name = "toonPackState")]
pub fn pack_state() -> u32 {
    PACK_STATES.with(|states| {
        let mut states = states.borrow_mut();
        states.push(PackState::default());
        (states.len() - 1) as u32
    })
}

/// Encode the packed value of state `state`: `ops[..opCount]` (numbers
/// inline), `text` and `wideText` (the strings of `P_STR_WIDE` ops, when
/// there are any); `reset` first forgets the key table (the JavaScript
/// side's numbering was cleared). With `textOneByte`, `text` holds no
/// character beyond U+00FF and is read as Latin-1.
#[napi(js_name = "toonPackEncode")]
#[allow(clippy::too_many_arguments)]
pub fn pack_encode<'env>(
    env: &'env Env,
    state: u32,
    ops: Unknown<'env>,
    op_count: u32,
    text: Unknown<'env>,
    reset: bool,
    indent: u32,
    delimiter: u32,
    key_folding: bool,
    flatten_depth: f64,
    wide_text: Option<Unknown<'env>>,
    text_one_byte: Option<bool>,
) -> Result<Unknown<'env>> {
    with_state(state, |s| {
        let this = &mut s.enc;
        let opts = encode_options(indent, delimiter, key_folding, flatten_depth)?;
        if reset {
            this.table.text.clear();
            this.table.keys.clear();
        }
        let raw = env.raw();
        // SAFETY: the slices live only during this call.
        let ops: &[f64] = unsafe { typed_array(raw, ops.value().value, sys::TypedarrayType::float64_array, op_count)? };
        with_scratch(|s| {
            let super::Scratch { input, output, wide, wide_in, arena } = s;
            // Text that is all ASCII is converted in one go (most is, and
            // converting string by string costs a call per string).
            let ascii = if text_one_byte == Some(true) {
                // Half the bytes of UTF-16, and V8 flattens a one-byte rope
                // with plain copies (the rope of a two-byte one is widened
                // piece by piece).
                unsafe { read_latin1(raw, text.value().value, input)? };
                wide.clear();
                if input.is_ascii() {
                    // SAFETY: ASCII is UTF-8.
                    arena.text.push_str(unsafe { std::str::from_utf8_unchecked(input) });
                    true
                } else {
                    wide.extend(input.iter().map(|&b| u16::from(b)));
                    false
                }
            } else {
                unsafe { read_utf16(raw, text.value().value, wide)? };
                let ascii = all_ascii(wide);
                if ascii {
                    // SAFETY: `utf16_to_utf8` writes well-formed UTF-8 only.
                    utf16_to_utf8(wide, unsafe { arena.text.as_mut_vec() });
                }
                ascii
            };
            let text_len = if ascii { arena.text.len() } else { wide.len() };
            wide_in.clear();
            if let Some(w) = wide_text {
                unsafe { read_utf16(raw, w.value().value, wide_in)? };
            }
            arena.table_delimiter = opts.delimiter;
            let marks = (arena.text.len(), this.table.keys.len(), this.table.text.len());
            let mut out = String::from_utf8(std::mem::take(output)).unwrap_or_default();
            let mut tables = true;
            let r = loop {
                let mut r = PackReader { ops, pos: 0, text: wide, text_len, at: 0, ascii, wide: wide_in, wide_at: 0, tables, table: &mut this.table, arena };
                let root = r.value(0, true);
                let ended = r.pos == ops.len() && r.at == r.text_len && r.wide_at == r.wide.len();
                let root = root.napi()?;
                if !ended {
                    return Err(malformed(ops.len(), "data left over")).napi();
                }
                let doc = ArenaDoc { arena, src: &this.table.text };
                let r = encode_into(&ArenaVal { doc: &doc, id: root }, &opts, &mut out);
                match r {
                    // The encoder walked a table's rows after all (a table
                    // nested near the depth limit): read again without
                    // tables, from where the text was converted.
                    Err(e) if tables && e.code() == TABLE_UNREAD => {
                        tables = false;
                        out.clear();
                        arena.reset_to(marks.0);
                        this.table.keys.truncate(marks.1);
                        this.table.text.truncate(marks.2);
                    }
                    r => break r.napi(),
                }
            };
            let made = r.and_then(|()| unsafe { make_string(env, &out, wide) });
            *output = out.into_bytes();
            made
        })
    })
}

/// Reads ops into an arena (see the module documentation).
struct PackReader<'a> {
    ops: &'a [f64],
    pos: usize,
    /// The text of the strings and keys (empty when `ascii`: the arena's
    /// text holds it then), its length in units, and the position in it.
    text: &'a [u16],
    text_len: usize,
    at: usize,
    /// The text of the `P_STR_WIDE` strings, and the position in it.
    wide: &'a [u16],
    wide_at: usize,
    /// Whether the text is all ASCII: the arena's text then holds all of
    /// it, converted at once, and a string is a span of it where it lies.
    ascii: bool,
    /// Whether arrays of rows are read as [`Node::Table`]s.
    tables: bool,
    table: &'a mut KeyTable,
    arena: &'a mut Arena,
}

/// Whether every unit is below 0x80 (vectorised: an OR of the units).
fn all_ascii(units: &[u16]) -> bool {
    let mut chunks = units.chunks_exact(32);
    for c in &mut chunks {
        if c.iter().fold(0, |a, &u| a | u) >= 0x80 {
            return false;
        }
    }
    chunks.remainder().iter().fold(0, |a, &u| a | u) < 0x80
}

/// The next `len` UTF-16 units of `text` from `*at`, converted and appended
/// to `out`; their span there. (A function of the fields it uses, so that
/// the reader's other fields stay free meanwhile.)
#[inline]
fn piece(text: &[u16], at: &mut usize, len: usize, out: &mut String, op: usize) -> polywire::Result<Span> {
    let units = text.get(*at..at.saturating_add(len)).ok_or_else(|| malformed(op, "string beyond the text"))?;
    *at += len;
    let start = out.len();
    // SAFETY: `utf16_push_utf8` appends well-formed UTF-8 only.
    if utf16_push_utf8(units, unsafe { out.as_mut_vec() }) {
        return Err(lone_surrogate(op));
    }
    Ok(Span { start, len: out.len() - start })
}

impl PackReader<'_> {
    /// The next string of `len` units as a span of the arena's text.
    #[inline]
    fn string(&mut self, len: usize, op: usize) -> polywire::Result<Span> {
        if self.ascii {
            if len > self.text_len - self.at {
                return Err(malformed(op, "string beyond the text"));
            }
            let start = self.at;
            self.at += len;
            return Ok(Span { start, len });
        }
        piece(self.text, &mut self.at, len, &mut self.arena.text, op)
    }

    /// The next string of `len` units of the wide text, appended to the
    /// arena's text.
    #[inline]
    fn wide_string(&mut self, len: usize, op: usize) -> polywire::Result<Span> {
        piece(self.wide, &mut self.wide_at, len, &mut self.arena.text, op)
    }

    /// The next string of `len` units appended to the table's text: a new key.
    #[inline]
    fn table_key(&mut self, len: usize, op: usize) -> polywire::Result<Span> {
        if self.ascii {
            let span = self.string(len, op)?;
            let start = self.table.text.len();
            self.table.text.push_str(slice(&self.arena.text, span));
            return Ok(Span { start, len });
        }
        piece(self.text, &mut self.at, len, &mut self.table.text, op)
    }

    /// The op at `at`, if there is one and it is not negative.
    #[inline(always)]
    fn op_at(&self, at: usize) -> Option<i32> {
        let &x = self.ops.get(at)?;
        let [a, b, c, d, ..] = x.to_ne_bytes();
        let op = i32::from_ne_bytes([a, b, c, d]);
        (op >= 0).then_some(op)
    }

    /// The next op without moving past it.
    #[inline]
    fn peek_op(&mut self) -> polywire::Result<(usize, i32, usize)> {
        let op = self.next_op();
        self.pos -= usize::from(op.is_ok());
        op
    }

    #[inline]
    fn next_op(&mut self) -> polywire::Result<(usize, i32, usize)> {
        let at = self.pos;
        let &x = self.ops.get(at).ok_or_else(|| malformed(at, "ops end early"))?;
        // The int32 the walk wrote into the slot's first four bytes (an
        // `Int32Array` view at twice the index); the other four are stale.
        let [a, b, c, d, ..] = x.to_ne_bytes();
        let op = i32::from_ne_bytes([a, b, c, d]);
        if op < 0 {
            return Err(malformed(at, "negative op"));
        }
        self.pos += 1;
        Ok((at, op & ((1 << P_SHIFT) - 1), (op >> P_SHIFT) as usize))
    }

    /// The next value; an array as a [`Node::Table`] where it can be one and
    /// `table_ok` (the encoder writes arrays that are items of arrays as
    /// lists, walking their rows).
    fn value(&mut self, depth: usize, table_ok: bool) -> polywire::Result<usize> {
        let (at, tag, payload) = self.next_op()?;
        let node = match tag {
            P_NULL => Node::Null,
            P_FALSE => Node::Bool(false),
            P_TRUE => Node::Bool(true),
            P_NUM => {
                let &f = self.ops.get(self.pos).ok_or_else(|| malformed(at, "ops end before the number"))?;
                self.pos += 1;
                Node::Float(f)
            }
            P_STR => Node::Str(self.string(payload, at)?),
            P_STR_WIDE => Node::Str(self.wide_string(payload, at)?),
            P_ARR => return self.array(payload, depth, at, table_ok),
            P_OBJ => return self.object(payload, depth, at),
            _ => return Err(malformed(at, "expected a value")),
        };
        Ok(self.arena.push(node))
    }

    /// Checks a container's count against the ops left (each item takes at
    /// least one op) before anything is read for it.
    #[inline]
    fn check_count(&self, n: usize, per_item: usize, depth: usize, at: usize) -> polywire::Result<()> {
        if depth >= MAX_DEPTH {
            return Err(json_too_deep());
        }
        if n.saturating_mul(per_item) > self.ops.len() - self.pos {
            return Err(malformed(at, "count beyond the ops"));
        }
        Ok(())
    }

    // A container's slots are made when its count is read (the count was
    // checked against the ops left) and filled in place: its items are
    // contiguous even though nested containers append theirs meanwhile.

    #[inline(never)]
    fn array(&mut self, n: usize, depth: usize, at: usize, table_ok: bool) -> polywire::Result<usize> {
        self.check_count(n, 1, depth, at)?;
        // Rows are objects one level deeper (as `object` checks).
        if table_ok && self.tables && depth + 1 < MAX_DEPTH {
            if let Some(id) = self.table(n) {
                return Ok(id);
            }
        }
        let start = self.arena.items.len();
        self.arena.items.resize(start + n, 0);
        for i in start..start + n {
            let v = self.value(depth + 1, false)?;
            self.arena.items[i] = v;
        }
        Ok(self.arena.push(Node::Array { start, len: n }))
    }

    /// An array of `n` items read as a [`Node::Table`] when they are rows
    /// of one shape: objects with the same table keys (at most
    /// [`TABLE_MAX_COLS`], at least one, none an array index) in the same
    /// order, holding primitives only. Most arrays of objects are, and
    /// their rows are then written here as they are read
    /// ([`EncodeValue::rendered_table`]): no node per cell, no entries per
    /// row, and the encoder copies the rows rather than matching each row's
    /// entries to the header. On 2,000 analytics rows this took a fifth off
    /// the time spent here (235 to 186 µs; cells as nodes, handed to the
    /// encoder one by one, had already taken 27% off the instructions of
    /// reading every row as objects). Items of arrays are not tried: the
    /// encoder writes those as lists. `None` otherwise: at once when the
    /// first row does not fit
    /// (its ops are looked at first), else with everything read for it
    /// taken back (also the keys the table gained), so the items are read
    /// one by one as usual: at worst an array is read twice, never more
    /// (its nested containers are not tried here). Malformed ops also give
    /// `None`: the usual reading then reports them.
    ///
    /// [`EncodeValue::rendered_table`]: polywire::toon::encode::EncodeValue::rendered_table
    #[inline(never)]
    fn table(&mut self, n: usize) -> Option<usize> {
        if n == 0 {
            return None;
        }
        let op = self.op_at(self.pos)?;
        let cols = (op >> P_SHIFT) as usize;
        if op & ((1 << P_SHIFT) - 1) != P_OBJ || cols == 0 || cols > TABLE_MAX_COLS {
            return None;
        }
        // Each row takes an op and a key and a value op per column.
        if n.saturating_mul(1 + 2 * cols) > self.ops.len() - self.pos {
            return None;
        }
        // The first row's ops alone first, with nothing read: arrays of
        // objects that hold containers are common, and are then given up
        // without taking anything back.
        let mut p = self.pos + 1;
        for _ in 0..cols {
            let (key, value) = (self.op_at(p)?, self.op_at(p + 1)?);
            if !matches!(key & ((1 << P_SHIFT) - 1), P_KEY | P_KEY_NEW) {
                return None;
            }
            p += match value & ((1 << P_SHIFT) - 1) {
                P_NULL | P_FALSE | P_TRUE | P_STR | P_STR_WIDE => 2,
                P_NUM => 3,
                _ => return None,
            };
        }
        let arena = &*self.arena;
        // Node ids, positions and row ends are u32 in a table's node.
        let (cells, text) = (arena.nodes.len(), arena.table_text.len());
        if cells + cols + n + 2 > u32::MAX as usize
            || arena.items.len() + n > u32::MAX as usize
            || arena.row_ends.len() + n > u32::MAX as usize
            || text > u32::MAX as usize
        {
            return None;
        }
        let ends = arena.row_ends.len();
        let mark = (self.pos, self.at, arena.text.len(), self.table.keys.len(), self.table.text.len(), self.wide_at);
        let mut ids = std::mem::take(&mut self.arena.table_ids);
        ids.clear();
        let read = self.table_rows(n, cols, &mut ids);
        self.arena.table_ids = ids;
        if !matches!(read, Ok(true)) {
            (self.pos, self.at, self.wide_at) = (mark.0, mark.1, mark.5);
            self.arena.nodes.truncate(cells);
            self.arena.text.truncate(mark.2);
            self.arena.table_text.truncate(text);
            self.arena.row_ends.truncate(ends);
            self.table.keys.truncate(mark.3);
            self.table.text.truncate(mark.4);
            return None;
        }
        // The first row as an object of the cells read (the encoder takes
        // the header from it), the others with its keys and unread values.
        let Arena { nodes, entries, items, table_ids, .. } = &mut *self.arena;
        // (Every id is in the table: `key` read it.)
        let key = |id: usize| Key { span: self.table.keys.get(id).map_or(Span { start: 0, len: 0 }, |&(span, _)| span), src: true };
        let first = entries.len();
        entries.extend(table_ids.iter().enumerate().map(|(c, &id)| (key(id), cells + c)));
        let unread = nodes.len();
        nodes.push(Node::Unread);
        let rest = entries.len();
        entries.extend(table_ids.iter().map(|&id| (key(id), unread)));
        let rows = nodes.len();
        nodes.push(Node::Object { start: first, len: cols, index_keys: false });
        nodes.extend((1..n).map(|_| Node::Object { start: rest, len: cols, index_keys: false }));
        let start = items.len();
        items.extend(rows..rows + n);
        Some(self.arena.push(Node::Table { start: start as u32, len: n as u32, cols: cols as u32, text: text as u32, ends: ends as u32 }))
    }

    /// The rows of [`PackReader::table`], written to the arena's table text
    /// (each row's end noted), the first row's cells also as nodes, and in
    /// `ids` (empty) its key ids; false at the first op that does not fit.
    fn table_rows(&mut self, n: usize, cols: usize, ids: &mut Vec<usize>) -> polywire::Result<bool> {
        let cells = CellWriter::new(self.arena.table_delimiter);
        let base = self.arena.table_text.len();
        for r in 0..n {
            let (_, tag, payload) = self.next_op()?;
            if tag != P_OBJ || payload != cols {
                return Ok(false);
            }
            for c in 0..cols {
                if r == 0 {
                    // The first row's keys join the table as `key` has them.
                    let new = self.table.keys.len();
                    let (_, tag, payload) = self.peek_op()?;
                    if tag != P_KEY && tag != P_KEY_NEW {
                        return Ok(false);
                    }
                    let (_, index) = self.key()?;
                    if index {
                        return Ok(false);
                    }
                    ids.push(if tag == P_KEY { payload } else { new });
                } else {
                    let (_, tag, payload) = self.next_op()?;
                    if tag != P_KEY || Some(&payload) != ids.get(c) {
                        return Ok(false);
                    }
                }
                if c > 0 {
                    cells.delimit(&mut self.arena.table_text);
                }
                let (at, tag, payload) = self.next_op()?;
                let out = &mut self.arena.table_text;
                let node = match tag {
                    P_NULL => {
                        out.push_str("null");
                        Node::Null
                    }
                    P_FALSE => {
                        out.push_str("false");
                        Node::Bool(false)
                    }
                    P_TRUE => {
                        out.push_str("true");
                        Node::Bool(true)
                    }
                    P_NUM => {
                        let &f = self.ops.get(self.pos).ok_or_else(|| malformed(at, "ops end before the number"))?;
                        self.pos += 1;
                        cells.number(out, f);
                        Node::Float(f)
                    }
                    P_STR | P_STR_WIDE => {
                        let mark = self.arena.text.len();
                        let span = if tag == P_STR { self.string(payload, at)? } else { self.wide_string(payload, at)? };
                        let Arena { text, table_text, .. } = &mut *self.arena;
                        cells.string(table_text, slice(text, span));
                        // Only the first row's strings are kept (the others
                        // were appended only when not a span of ASCII text).
                        if r > 0 {
                            text.truncate(mark);
                        }
                        Node::Str(span)
                    }
                    _ => return Ok(false),
                };
                if r == 0 {
                    self.arena.nodes.push(node);
                }
            }
            let end = self.arena.table_text.len() - base;
            if end > u32::MAX as usize {
                return Ok(false);
            }
            self.arena.row_ends.push(end as u32);
        }
        Ok(true)
    }

    #[inline(never)]
    fn object(&mut self, n: usize, depth: usize, at: usize) -> polywire::Result<usize> {
        self.check_count(n, 2, depth, at)?;
        let start = self.arena.entries.len();
        let empty = Key { span: Span { start: 0, len: 0 }, src: false };
        self.arena.entries.resize(start + n, (empty, 0));
        let mut index_keys = false;
        for i in start..start + n {
            let (key, index) = self.key()?;
            index_keys |= index;
            let v = self.value(depth + 1, true)?;
            self.arena.entries[i] = (key, v);
        }
        Ok(self.arena.push(Node::Object { start, len: n, index_keys }))
    }

    /// The next key and whether it is an array index. Table keys are read
    /// from the document's `src` (the table's text), others from the
    /// arena's text.
    #[inline(always)]
    fn key(&mut self) -> polywire::Result<(Key, bool)> {
        let (at, tag, payload) = self.next_op()?;
        match tag {
            P_KEY => {
                let &(span, index) = self.table.keys.get(payload).ok_or_else(|| malformed(at, "unknown key id"))?;
                Ok((Key { span, src: true }, index))
            }
            P_KEY_NEW => {
                if self.table.keys.len() >= KEY_CAP {
                    return Err(malformed(at, "key table full"));
                }
                let span = self.table_key(payload, at)?;
                let index = array_index(slice(&self.table.text, span)).is_some();
                self.table.keys.push((span, index));
                Ok((Key { span, src: true }, index))
            }
            P_KEY_TEXT => {
                let span = self.string(payload, at)?;
                Ok((Key { span, src: false }, array_index(slice(&self.arena.text, span)).is_some()))
            }
            _ => Err(malformed(at, "expected a key")),
        }
    }
}

/// The data and length of a typed array argument of element type `want`.
///
/// SAFETY: the pointer is into the array's buffer, which JavaScript cannot
/// touch while this synchronous call runs; it must not be used after.
pub(super) unsafe fn typed_array_raw<T>(env: sys::napi_env, v: sys::napi_value, want: sys::napi_typedarray_type) -> Result<(*mut T, usize)> {
    let mut kind = 0;
    let mut n = 0usize;
    let mut data = std::ptr::null_mut();
    let mut buffer = std::ptr::null_mut();
    let mut offset = 0usize;
    if sys::napi_get_typedarray_info(env, v, &mut kind, &mut n, &mut data, &mut buffer, &mut offset) != sys::Status::napi_ok || kind != want {
        return Err(invalid_arg("TOON_INVALID_ARGUMENT", "expected the packed value's typed arrays".into()));
    }
    Ok((if n == 0 { std::ptr::NonNull::dangling().as_ptr() } else { data as *mut T }, n))
}

/// The first `len` elements of a typed array argument of element type `want`.
///
/// SAFETY: as [`typed_array_raw`]: the slice must not outlive the call.
unsafe fn typed_array<'a, T>(env: sys::napi_env, v: sys::napi_value, want: sys::napi_typedarray_type, len: u32) -> Result<&'a [T]> {
    let (data, n) = typed_array_raw::<T>(env, v, want)?;
    let len = len as usize;
    if len > n {
        return Err(invalid_arg("TOON_INVALID_ARGUMENT", format!("expected at most {n} elements used, got {len}")));
    }
    Ok(std::slice::from_raw_parts(data, len))
}


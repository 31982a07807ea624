//! The packed route for encoding: a plain JavaScript value walked once in
//! JavaScript (`packObject` and friends in `bindings-node/lib/toon.js`) into a
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

use super::{
    create_string, encode_options, json_too_deep, make_string, read_latin1, read_utf16, slice, utf16_push_utf8, utf16_to_utf8,
    with_scratch, Arena, ArenaDoc, ArenaVal, Key, Node, Span, TABLE_UNREAD,
};
use crate::errors::{invalid_arg, IntoNapi, Result};
use napi::bindgen_prelude::*;
use napi::sys;
use napi_derive::napi;
use polywire::json::array_index;
use polywire::toon::encode::{encode_into, json_into, CellWriter, EncodeOptions, MAX_DEPTH};
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

/// Cells (primitives) of a table row read as a [`Node::Table`] at most
/// (wider rows are read entry by entry), and how deep its field groups
/// may nest.
const TABLE_MAX_CELLS: usize = 64;
const TABLE_MAX_NEST: usize = 8;

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

/// The packed routes' state: the key tables. One per thread, not one per
/// `toon.js` instance: test runners and hot reload load the module afresh
/// without unloading the addon, and tables kept per instance were never
/// freed (85 KB each). Each instance has a token (`toonPackState`); a table
/// belongs to the token that last used it, and a call with another token
/// starts it afresh (encode: the JavaScript side is told to send every key
/// again; decode: the reset flag tells it to forget its copy).
#[derive(Default)]
pub(super) struct PackState {
    enc: PackEncoder,
    /// The token whose numbering `enc`'s table follows (0: none).
    enc_owner: u32,
    pub(super) dec: super::pack_decode::PackDecoder,
    /// The token whose numbering `dec`'s table follows (0: none).
    pub(super) dec_owner: u32,
}

thread_local! {
    static PACK_STATE: std::cell::RefCell<PackState> = std::cell::RefCell::new(PackState::default());
    static PACK_TOKENS: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
}

/// Run `f` with the thread's state (see [`PackState`] for `_token`'s role).
pub(super) fn with_state<R>(_token: u32, f: impl FnOnce(&mut PackState) -> Result<R>) -> Result<R> {
    PACK_STATE.with(|state| {
        let mut state = state.try_borrow_mut().map_err(|_| invalid_arg("TOON_INVALID_ARGUMENT", "packed state in use".into()))?;
        f(&mut state)
    })
}

/// The error code telling the JavaScript side that the encoder's key table
/// now follows another instance: it forgets its numbering and sends again.
pub(super) const PACK_STALE: &str = "TOON_PACK_STALE";

/// A token for a new `toon.js` instance (see [`PackState`]); never 0. (Plain
/// functions and a token, not a class: a class method costs about 160 ns
/// more per call in napi-rs, a fifth of encoding a small object.)
#[napi(js_name = "toonPackState")]
pub fn pack_state() -> u32 {
    PACK_TOKENS.with(|t| {
        let next = t.get().wrapping_add(1).max(1);
        t.set(next);
        next
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
    let opts = encode_options(indent, delimiter, key_folding, flatten_depth)?;
    with_state(state, |s| {
        let this = s.encoder(state, reset)?;
        let raw = env.raw();
        // SAFETY: the slices live only during this call.
        let ops: &[f64] = unsafe { typed_array(raw, ops.value().value, sys::TypedarrayType::float64_array, op_count)? };
        with_scratch(|s| {
            let super::Scratch { input, output, wide, wide_in, arena } = s;
            let packed = unsafe { load_text(raw, ops, text, wide_text, text_one_byte, input, wide, wide_in, arena)? };
            let mut out = String::from_utf8(std::mem::take(output)).unwrap_or_default();
            let r = encode_packed(&packed, &mut this.table, arena, &opts, &mut out);
            let made = r.and_then(|()| unsafe { make_string(env, &out, wide) });
            *output = out.into_bytes();
            made
        })
    })
}

impl PackState {
    /// The encoder for token `state`, its table forgotten when `reset`; an
    /// error when the table follows another instance and `reset` is not set.
    fn encoder(&mut self, state: u32, reset: bool) -> Result<&mut PackEncoder> {
        if self.enc_owner != state {
            if !reset {
                // The ops name keys by ids of another instance's table.
                return Err(invalid_arg(PACK_STALE, "the key table follows another instance: send the keys again".into()));
            }
            self.enc_owner = state;
        }
        if reset {
            self.enc.table.text.clear();
            self.enc.table.keys.clear();
        }
        Ok(&mut self.enc)
    }
}

/// The packed input of one call, its text loaded.
struct Packed<'a> {
    ops: &'a [f64],
    /// The UTF-16 text (empty when `ascii`: the arena's text holds it).
    text: &'a [u16],
    text_len: usize,
    ascii: bool,
    wide: &'a [u16],
}

/// Loads the strings' text (`text`, read as Latin-1 when `one_byte`, and
/// `wide_text`): text that is all ASCII is converted in one go into the
/// arena's text (most is, and converting string by string costs a call per
/// string); other text stays UTF-16 in `wide`, converted string by string
/// as the ops are read.
///
/// SAFETY: `raw` is the current call's environment and the values are its
/// arguments.
#[allow(clippy::too_many_arguments)]
unsafe fn load_text<'a>(
    raw: sys::napi_env,
    ops: &'a [f64],
    text: Unknown<'_>,
    wide_text: Option<Unknown<'_>>,
    one_byte: Option<bool>,
    input: &mut Vec<u8>,
    wide: &'a mut Vec<u16>,
    wide_in: &'a mut Vec<u16>,
    arena: &mut Arena,
) -> Result<Packed<'a>> {
    let ascii = if one_byte == Some(true) {
        // Half the bytes of UTF-16, and V8 flattens a one-byte rope
        // with plain copies (the rope of a two-byte one is widened
        // piece by piece).
        unsafe { read_latin1(raw, text.value().value, input)? };
        wide.clear();
        if input.is_ascii() {
            // SAFETY (both): ASCII is UTF-8. The arena's text is
            // empty here (the scratch was reset), so it takes the
            // bytes read in place of a copy of them (repos: 25 KB).
            if arena.text.is_empty() {
                std::mem::swap(unsafe { arena.text.as_mut_vec() }, input);
            } else {
                arena.text.push_str(unsafe { std::str::from_utf8_unchecked(input) });
            }
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
    Ok(Packed { ops, text: wide, text_len, ascii, wide: wide_in })
}

/// Where the arena's text and the key table stand before the ops are read,
/// to read them again from there.
type Marks = (usize, usize, usize);

fn marks(table: &KeyTable, arena: &Arena) -> Marks {
    (arena.text.len(), table.keys.len(), table.text.len())
}

fn rewind(marks: Marks, table: &mut KeyTable, arena: &mut Arena) {
    arena.reset_to(marks.0);
    table.keys.truncate(marks.1);
    table.text.truncate(marks.2);
}

/// Reads all the ops into the arena (arrays of rows as tables, written with
/// the arena's table delimiter, when `tables`); the root's id.
fn read_packed(p: &Packed<'_>, tables: bool, table: &mut KeyTable, arena: &mut Arena) -> Result<usize> {
    let mut r = PackReader {
        ops: p.ops,
        pos: 0,
        text: p.text,
        text_len: p.text_len,
        at: 0,
        ascii: p.ascii,
        wide: p.wide,
        wide_at: 0,
        tables,
        table,
        arena,
    };
    let root = r.value(0, true).napi()?;
    if !(r.pos == p.ops.len() && r.at == r.text_len && r.wide_at == r.wide.len()) {
        return Err(malformed(p.ops.len(), "data left over")).napi();
    }
    Ok(root)
}

/// Reads the ops and appends their TOON text to `out`.
fn encode_packed(p: &Packed<'_>, table: &mut KeyTable, arena: &mut Arena, opts: &EncodeOptions, out: &mut String) -> Result<()> {
    arena.table_delimiter = opts.delimiter;
    let marks = marks(table, arena);
    let mut tables = true;
    loop {
        let root = read_packed(p, tables, table, arena)?;
        let doc = ArenaDoc { arena, src: &table.text };
        match encode_into(&ArenaVal { doc: &doc, id: root }, opts, out) {
            // The encoder walked a table's rows after all (a table
            // nested near the depth limit): read again without
            // tables, from where the text was converted.
            Err(e) if tables && e.code() == TABLE_UNREAD => {
                tables = false;
                out.clear();
                rewind(marks, table, arena);
            }
            r => return r.napi(),
        }
    }
}

/// What `llmPackChoose` found: the index of the rendering with the fewest
/// tokens (the first of equals), its text, and every rendering's count.
#[napi(object, object_from_js = false)]
pub struct PackChoice {
    pub index: u32,
    #[napi(ts_type = "string")]
    pub text: ChoiceText,
    pub counts: Vec<u32>,
}

/// The chosen text, made a JavaScript string as [`make_string`] makes one:
/// copied as Latin-1 when it is ASCII, else converted to UTF-16 here (V8's
/// UTF-8 decoding took a tenth of `encodeForLlm` on repos).
pub struct ChoiceText(String);

impl ToNapiValue for ChoiceText {
    unsafe fn to_napi_value(env: sys::napi_env, val: Self) -> napi::Result<sys::napi_value> {
        create_string(env, &val.0, &mut Vec::new()).ok_or_else(|| napi::Error::from_reason("could not create the chosen text's string"))
    }
}

/// `encodeForLlm` over a packed value (as `toonPackEncode` takes it): each
/// of `formats` (`toon`, `toon-tab`, `toon-pipe`, `json`, `json-pretty`)
/// rendered from one reading of the ops each, and counted in `encoding`
/// (a [`CountSession`](polywire::tokens::CountSession): each text from
/// when it is made, on two threads), in one call. The JSON renderings
/// are `JSON.stringify`'s of the value the packed walk took (a plain value:
/// the walk gives up on anything else), so they are what `llm.js` would
/// get from `JSON.stringify` itself, with no text crossing over to be
/// counted and only the chosen one crossing back.
#[napi(js_name = "llmPackChoose")]
#[allow(clippy::too_many_arguments)]
pub fn pack_choose(
    env: &Env,
    state: u32,
    ops: Unknown<'_>,
    op_count: u32,
    text: Unknown<'_>,
    reset: bool,
    indent: u32,
    formats: Vec<String>,
    encoding: String,
    wide_text: Option<Unknown<'_>>,
    text_one_byte: Option<bool>,
) -> Result<PackChoice> {
    enum Render {
        Toon(EncodeOptions),
        Json(usize),
    }
    let renders = formats
        .iter()
        .map(|f| {
            Ok(match f.as_str() {
                "toon" => Render::Toon(encode_options(indent, u32::from(b','), false, f64::INFINITY)?),
                "toon-tab" => Render::Toon(encode_options(indent, u32::from(b'\t'), false, f64::INFINITY)?),
                "toon-pipe" => Render::Toon(encode_options(indent, u32::from(b'|'), false, f64::INFINITY)?),
                "json" => Render::Json(0),
                "json-pretty" => Render::Json(2),
                other => return Err(invalid_arg("LLM_INVALID_ARGUMENT", format!("expected a format name, got {other:?}"))),
            })
        })
        .collect::<Result<Vec<_>>>()?;
    let tokenizer = crate::llm::tokenizer(Some(encoding))?;
    with_state(state, |s| {
        let this = s.encoder(state, reset)?;
        let raw = env.raw();
        // SAFETY: the slices live only during this call.
        let ops: &[f64] = unsafe { typed_array(raw, ops.value().value, sys::TypedarrayType::float64_array, op_count)? };
        with_scratch(|s| {
            let super::Scratch { input, wide, wide_in, arena, .. } = s;
            let packed = unsafe { load_text(raw, ops, text, wide_text, text_one_byte, input, wide, wide_in, arena)? };
            let table = &mut this.table;
            let marks = marks(table, arena);
            // Each text is counted from when it is made, on the helper
            // thread too, while the next is made.
            let mut session = tokenizer.session();
            let mut compact: Option<Vec<u8>> = None;
            // JSON first (see `render_order`).
            for (k, &i) in polywire::tokens::render_order(&formats).iter().enumerate() {
                let render = &renders[i];
                let text = match render {
                    Render::Toon(opts) => {
                        // Each reading adds the keys met first to the table
                        // again: it starts from the same marks.
                        if k > 0 {
                            rewind(marks, table, arena);
                        }
                        let mut out = String::new();
                        encode_packed(&packed, table, arena, opts, &mut out)?;
                        out
                    }
                    Render::Json(indent) => {
                        if compact.is_none() {
                            if k > 0 {
                                rewind(marks, table, arena);
                            }
                            let root = read_packed(&packed, false, table, arena)?;
                            let doc = ArenaDoc { arena, src: &table.text };
                            let mut out = Vec::new();
                            json_into(&ArenaVal { doc: &doc, id: root }, &mut out).napi()?;
                            compact = Some(out);
                        }
                        let compact = compact.as_deref().unwrap_or_default();
                        let bytes = if *indent == 0 {
                            compact.to_vec()
                        } else {
                            let mut out = Vec::with_capacity(compact.len() * 2);
                            polywire::json::indent_compact(compact, *indent, &mut out);
                            out
                        };
                        // `json_into` writes strings of `&str`s and ASCII.
                        String::from_utf8(bytes).map_err(|_| invalid_arg("LLM_INVALID_ARGUMENT", "the JSON text is not UTF-8".into()))?
                    }
                };
                session.add_as(i, text);
            }
            let counts = session.finish().napi()?;
            let index = (0..counts.len()).min_by_key(|&i| (counts[i], i)).unwrap_or(0);
            let text = ChoiceText(session.take_text(index));
            Ok(PackChoice { index: index as u32, text, counts: counts.into_iter().map(|n| u32::try_from(n).unwrap_or(u32::MAX)).collect() })
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

/// The shape of a table's first row (the object node `id`, read as usual)
/// into `shape` (see [`PackReader::table_rows`]; the key ids are filled in
/// there), its cells written to
/// `out`; false when it cannot be a table row: a key not in the key table,
/// an array-index key, an empty object, an array.
#[allow(clippy::too_many_arguments)]
fn first_row(
    nodes: &[Node],
    entries: &[(Key, usize)],
    text: &str,
    id: usize,
    shape: &mut Vec<(usize, usize)>,
    cells: &CellWriter,
    out: &mut String,
    first: &mut bool,
) -> bool {
    let Some(&Node::Object { start, len, index_keys: false }) = nodes.get(id) else {
        return false;
    };
    let Some(row) = entries.get(start..start + len) else {
        return false;
    };
    for &(key, value) in row {
        if !key.src {
            return false;
        }
        match nodes.get(value) {
            Some(&Node::Object { len, .. }) => {
                shape.push((0, len));
                if !first_row(nodes, entries, text, value, shape, cells, out, first) {
                    return false;
                }
            }
            Some(&leaf) => {
                shape.push((0, 0));
                if !std::mem::replace(first, false) {
                    cells.delimit(out);
                }
                match leaf {
                    Node::Null => out.push_str("null"),
                    Node::Bool(b) => out.push_str(if b { "true" } else { "false" }),
                    Node::Float(f) => cells.number(out, f),
                    Node::Str(span) => cells.string(out, slice(text, span)),
                    _ => return false,
                }
            }
            None => return false,
        }
    }
    len > 0
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
            if let Some(id) = self.table(n, depth) {
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
    /// of one shape: objects with the same table keys (none an array
    /// index) in the same order, whose values are primitives or non-empty
    /// objects of the same kind (nested field groups), at most
    /// [`TABLE_MAX_CELLS`] primitives in all. Most arrays of objects are,
    /// and their rows are then written here as they are read
    /// ([`EncodeValue::rendered_table`]): no node per cell, no entries per
    /// row, and the encoder copies the rows rather than matching each row's
    /// entries to the header. On 2,000 analytics rows this took a fifth off
    /// the time spent here (235 to 186 µs; cells as nodes, handed to the
    /// encoder one by one, had already taken 27% off the instructions of
    /// reading every row as objects). Items of arrays are not tried: the
    /// encoder writes those as lists. `None` otherwise: at once when the
    /// first row does not fit (its ops are looked at first), else with
    /// everything read for it taken back (also the keys the table gained),
    /// so the items are read one by one as usual: at worst an array is read
    /// twice, never more (its nested containers are not tried here).
    /// Malformed ops also give `None`: the usual reading then reports them.
    ///
    /// [`EncodeValue::rendered_table`]: polywire::toon::encode::EncodeValue::rendered_table
    #[inline(never)]
    fn table(&mut self, n: usize, depth: usize) -> Option<usize> {
        if n == 0 {
            return None;
        }
        // The first row's ops alone first, with nothing read: arrays of
        // objects that hold arrays are common, and are then given up
        // without taking anything back.
        let mut leaves = 0;
        self.row_ops_fit(self.pos, 0, &mut leaves)?;
        let cols = (self.op_at(self.pos)? >> P_SHIFT) as usize;
        // Each row takes an op and a key and a value op per entry.
        if n.saturating_mul(1 + 2 * cols) > self.ops.len() - self.pos {
            return None;
        }
        let arena = &*self.arena;
        // Positions in the items, the row ends and the text are u32 in a
        // table's node.
        let (nodes, text) = (arena.nodes.len(), arena.table_text.len());
        if arena.items.len() + n > u32::MAX as usize || arena.row_ends.len() + n > u32::MAX as usize || text > u32::MAX as usize {
            return None;
        }
        let ends = arena.row_ends.len();
        let mark = (self.pos, self.at, arena.text.len(), self.table.keys.len(), self.table.text.len(), self.wide_at, arena.entries.len());
        let mut shape = std::mem::take(&mut self.arena.table_shape);
        shape.clear();
        let read = self.table_rows(n, depth, &mut shape);
        self.arena.table_shape = shape;
        let Ok(Some(first)) = read else {
            (self.pos, self.at, self.wide_at) = (mark.0, mark.1, mark.5);
            self.arena.nodes.truncate(nodes);
            self.arena.entries.truncate(mark.6);
            self.arena.text.truncate(mark.2);
            self.arena.table_text.truncate(text);
            self.arena.row_ends.truncate(ends);
            self.table.keys.truncate(mark.3);
            self.table.text.truncate(mark.4);
            return None;
        };
        // The first row is the object read (the encoder takes the header
        // from it); the others have its keys, each holding an unread value.
        let Arena { nodes, entries, items, .. } = &mut *self.arena;
        let Some(&Node::Object { start: keys, .. }) = nodes.get(first) else {
            return None;
        };
        let unread = nodes.len();
        nodes.push(Node::Unread);
        let rest = entries.len();
        entries.extend_from_within(keys..keys + cols);
        entries[rest..].iter_mut().for_each(|e| e.1 = unread);
        let rows = nodes.len();
        nodes.extend((1..n).map(|_| Node::Object { start: rest, len: cols, index_keys: false }));
        let start = items.len();
        items.push(first);
        items.extend(rows..rows + n - 1);
        Some(self.arena.push(Node::Table { start: start as u32, len: n as u32, cols: leaves as u32, text: text as u32, ends: ends as u32 }))
    }

    /// The end of the ops of the row object at `p` if they can make a table
    /// row (see [`PackReader::table`]), counting its primitives in `leaves`;
    /// `nest`: how deep in the row the object is.
    fn row_ops_fit(&self, mut p: usize, nest: usize, leaves: &mut usize) -> Option<usize> {
        let op = self.op_at(p)?;
        let count = (op >> P_SHIFT) as usize;
        if op & ((1 << P_SHIFT) - 1) != P_OBJ || count == 0 || nest > TABLE_MAX_NEST {
            return None;
        }
        p += 1;
        for _ in 0..count {
            if !matches!(self.op_at(p)? & ((1 << P_SHIFT) - 1), P_KEY | P_KEY_NEW) {
                return None;
            }
            p += 1;
            p = match self.op_at(p)? & ((1 << P_SHIFT) - 1) {
                P_NULL | P_FALSE | P_TRUE | P_STR | P_STR_WIDE => {
                    *leaves += 1;
                    p + 1
                }
                P_NUM => {
                    *leaves += 1;
                    p + 2
                }
                P_OBJ => self.row_ops_fit(p, nest + 1, leaves)?,
                _ => return None,
            };
            if *leaves > TABLE_MAX_CELLS {
                return None;
            }
        }
        Some(p)
    }

    /// The rows of [`PackReader::table`], written to the arena's table text
    /// (each row's end noted): the first row read as an ordinary object and
    /// its shape noted in `shape` (depth first, per entry: its key's id
    /// and, for a field group, its count, else 0), the others read against
    /// that shape. The first row's node; `None` at the first op or key that
    /// does not fit.
    fn table_rows(&mut self, n: usize, depth: usize, shape: &mut Vec<(usize, usize)>) -> polywire::Result<Option<usize>> {
        let cells = CellWriter::new(self.arena.table_delimiter);
        let base = self.arena.table_text.len();
        let (ops, new_keys) = (self.pos, self.table.keys.len());
        let first = self.value(depth + 1, false)?;
        let Arena { nodes, entries, text, table_text, .. } = &mut *self.arena;
        if !first_row(nodes, entries, text, first, shape, &cells, table_text, &mut true) {
            return Ok(None);
        }
        self.row_end(base)?;
        // The first row's keys by id, from its ops (in the order of its
        // entries, depth first): an id a `P_KEY` gives, or the next new one.
        let (mut p, mut new, mut keys) = (ops, new_keys, shape.iter_mut());
        while keys.len() > 0 {
            let Some(op) = self.op_at(p) else { break };
            p += 1;
            match op & ((1 << P_SHIFT) - 1) {
                P_KEY | P_KEY_NEW => {
                    let Some(entry) = keys.next() else { break };
                    entry.0 = if op & ((1 << P_SHIFT) - 1) == P_KEY {
                        (op >> P_SHIFT) as usize
                    } else {
                        new += 1;
                        new - 1
                    };
                }
                P_NUM => p += 1,
                _ => {}
            }
        }
        if keys.next().is_some() {
            return Ok(None);
        }
        let flat = shape.iter().all(|&(_, group)| group == 0);
        let cols = match self.arena.nodes.get(first) {
            Some(&Node::Object { len, .. }) => len,
            _ => return Ok(None),
        };
        for _ in 1..n {
            let fits = if flat { self.flat_row_cells(shape, &cells)? } else { self.row_cells(shape, &mut 0, cols, &cells, &mut true)? };
            if !fits {
                return Ok(None);
            }
            self.row_end(base)?;
        }
        Ok(Some(first))
    }

    /// Notes where a row ends (relative to the table's text at `base`).
    #[inline]
    fn row_end(&mut self, base: usize) -> polywire::Result<()> {
        let end = self.arena.table_text.len() - base;
        let end = u32::try_from(end).map_err(|_| malformed(self.pos, "table text beyond 4 GiB"))?;
        self.arena.row_ends.push(end);
        Ok(())
    }

    /// The cells of a row after the first, written from its ops, for a
    /// shape without field groups (most tables); false when the row does
    /// not have that shape.
    fn flat_row_cells(&mut self, shape: &[(usize, usize)], cells: &CellWriter) -> polywire::Result<bool> {
        let (_, tag, payload) = self.next_op()?;
        if tag != P_OBJ || payload != shape.len() {
            return Ok(false);
        }
        for (c, &(key, _)) in shape.iter().enumerate() {
            let (_, tag, id) = self.next_op()?;
            if tag != P_KEY || id != key {
                return Ok(false);
            }
            if c > 0 {
                cells.delimit(&mut self.arena.table_text);
            }
            if !self.cell(cells)? {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// The cells of a row after the first, written from its ops: an object
    /// of `count` entries whose keys are `shape`'s from `*at` on; false when
    /// it does not have that shape.
    fn row_cells(
        &mut self,
        shape: &[(usize, usize)],
        at: &mut usize,
        count: usize,
        cells: &CellWriter,
        first: &mut bool,
    ) -> polywire::Result<bool> {
        let (_, tag, payload) = self.next_op()?;
        if tag != P_OBJ || payload != count {
            return Ok(false);
        }
        for _ in 0..count {
            let Some(&(key, group)) = shape.get(*at) else {
                return Ok(false);
            };
            *at += 1;
            let (_, tag, id) = self.next_op()?;
            if tag != P_KEY || id != key {
                return Ok(false);
            }
            if group > 0 {
                if !self.row_cells(shape, at, group, cells, first)? {
                    return Ok(false);
                }
                continue;
            }
            if !std::mem::replace(first, false) {
                cells.delimit(&mut self.arena.table_text);
            }
            if !self.cell(cells)? {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// The next value op as a table cell written to the table's text;
    /// false when it is not a primitive.
    #[inline(always)]
    fn cell(&mut self, cells: &CellWriter) -> polywire::Result<bool> {
        let (op, tag, payload) = self.next_op()?;
        let out = &mut self.arena.table_text;
        match tag {
            P_NULL => out.push_str("null"),
            P_FALSE => out.push_str("false"),
            P_TRUE => out.push_str("true"),
            P_NUM => {
                let &f = self.ops.get(self.pos).ok_or_else(|| malformed(op, "ops end before the number"))?;
                self.pos += 1;
                cells.number(out, f);
            }
            P_STR if self.ascii => {
                let span = self.string(payload, op)?;
                let Arena { text, table_text, .. } = &mut *self.arena;
                // SAFETY: the span is within the text (`string` checked it
                // against the text's length, and the text only grows), and
                // the text is all ASCII, so every index is a char boundary.
                // (The checked slice cost about 10K instructions a call on
                // the repos benchmark.)
                cells.string(table_text, unsafe { text.get_unchecked(span.start..span.start + span.len) });
            }
            P_STR | P_STR_WIDE => {
                let mark = self.arena.text.len();
                let span = if tag == P_STR { self.string(payload, op)? } else { self.wide_string(payload, op)? };
                let Arena { text, table_text, .. } = &mut *self.arena;
                cells.string(table_text, slice(text, span));
                // Not kept: only appended when not a span of ASCII text.
                text.truncate(mark);
            }
            _ => return Ok(false),
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
pub(super) unsafe fn typed_array_raw<T>(
    env: sys::napi_env,
    v: sys::napi_value,
    want: sys::napi_typedarray_type,
) -> Result<(*mut T, usize)> {
    let mut kind = 0;
    let mut n = 0usize;
    let mut data = std::ptr::null_mut();
    let mut buffer = std::ptr::null_mut();
    let mut offset = 0usize;
    if sys::napi_get_typedarray_info(env, v, &mut kind, &mut n, &mut data, &mut buffer, &mut offset) != sys::Status::napi_ok || kind != want
    {
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

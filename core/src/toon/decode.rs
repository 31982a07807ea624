//! TOON decoder: TOON text to a value built through a [`json::Builder`], so a
//! binding creates its own objects directly with no intermediate tree.
//!
//! Behaviour follows the reference implementation `@toon-format/toon` 4.4.0
//! (spec v4) rule for rule, in strict and non-strict mode: which texts are
//! accepted, what they decode to, and which texts are rejected. Error
//! messages are the reference's (without its `Line N: ` prefix, since the
//! position is carried by the error), some followed by a parenthesised note
//! saying what was expected. The decoder reads the text line by line and
//! lazily, exactly as the reference's streaming decoder does, so when a text
//! has several faults the one reported is the one the reference reports.
//!
//! # Numbers
//!
//! A token is a number when it matches the spec grammar
//! `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?` and its value is finite
//! as a double (`1e999` stays the string `"1e999"`, as in the reference).
//! Number tokens go through [`Builder::number_token`] with their text, so a
//! builder may read them its own way (the Python binding keeps integers of
//! any size exact and honours `parse_int`/`parse_float`). The reference
//! turns every number into a JavaScript double; the default reading:
//! - a literal with no fraction and no exponent that fits an `i64` is handed
//!   to [`Builder::int`] exactly (`-0` gives `0`). Beyond 2^53 this keeps
//!   digits a double would round; a JavaScript binding converting the `i64`
//!   to a Number gets exactly the reference's value;
//! - any other number is handed to [`Builder::float`] as the double the
//!   reference computes (integer literals beyond the `i64` range included:
//!   the reference does not keep them exact, so [`Builder::big_int`] is never
//!   called); `-0.0` and exponents that underflow to `-0` give `0.0`.
//!
//! # Limits
//!
//! - Arrays and objects nest at most [`MAX_DEPTH`] deep ([`EXPAND_MAX_DEPTH`]
//!   with path expansion, counting the objects it creates) and field groups in a
//!   tabular header (`{a{b{c}}}`) at most [`MAX_FIELD_DEPTH`] deep; deeper
//!   input fails with `TOON_TOO_DEEP` (the reference's own limit is its call
//!   stack).
//! - A declared length (`[999999999]`) is never used to allocate: values are
//!   collected as the rows are read.
//! - Lines may be of any length; every line is scanned a small constant
//!   number of times, without allocating.
//!
//! # Path expansion
//!
//! [`ExpandPaths::Safe`] (spec v3 §13.4, opt-in; the 4.4 reference no
//! longer has it) follows `expandPathsSafe` of `@toon-format/toon` 2.3.1,
//! the last release with it: after decoding, every unquoted key whose
//! dot-separated segments all match `^[A-Za-z_][A-Za-z0-9_]*$` becomes
//! nested objects (in tabular rows too); objects meeting at one path are
//! merged deeply; any other meeting is a conflict, `TOON_EXPANSION_CONFLICT`
//! (no position, as in the reference) in strict mode and won by the later
//! value otherwise. One deliberate difference: 2.3.1 leaves only quoted keys
//! of `key: value` lines literal, and expands a quoted array-header key
//! (`"a.b"[2]: ...`) or a quoted field name; here every key written in quotes
//! stays literal, as the spec says and as round-tripping the encoder's key
//! folding needs. With expansion on, the value is first decoded into a
//! private tree, then expanded, then built with the caller's builder.
//!
//! # Layout
//!
//! This file holds the entry points, the options and the decoder's state;
//! the work is split by concern, as pydantic's `jiter` splits its parser:
//! `lines.rs` reads lines and their indentation and scans inside a line
//! (quotes, rows, cells), `headers.rs` parses array headers and field
//! lists, `scalars.rs` reads keys, strings, escapes, numbers and primitive
//! values, `structure.rs` walks objects and arrays, `errors.rs` makes every
//! error (codes, messages, positions) and runs the checks that raise them,
//! `keys.rs` tracks sibling keys for duplicates, `sink.rs` hands values to
//! the caller's builder and `expand.rs` does path expansion. `events.rs`
//! walks the same lines for the event stream, over the same scanner, and
//! `stream.rs` feeds it a stream as it comes. The rules the decoder shares
//! with the encoder are in `../syntax.rs`.

use std::collections::HashSet;

use self::errors::utf8_error;
use self::expand::{expand, replay, TreeBuilder};
use self::headers::FieldList;
use self::keys::SeenKeys;
use self::lines::{PlainCell, Reader};
use self::sink::Plain;
use crate::error::{Error, Format, Result};
use crate::json::{Builder, ValueBuilder};

mod errors;
mod events;
mod expand;
mod headers;
mod keys;
mod lines;
mod scalars;
mod sink;
mod stream;
mod structure;
#[cfg(test)]
mod tests;

pub use events::{decode_events, Event, Input, Primitive, Progress};
pub use stream::{JsonStream, JsonWriter, StreamDecoder, Utf8Decoder};

/// How deep arrays and objects may nest.
pub const MAX_DEPTH: usize = 1024;

/// How deep arrays and objects may nest when path expansion is on (the
/// expansion passes recurse over the tree, so the bound is lower).
pub const EXPAND_MAX_DEPTH: usize = 256;

/// How deep field groups may nest inside one tabular header
/// (`rows[1]{a{b{c}}}:` nests 3 deep).
pub const MAX_FIELD_DEPTH: usize = 64;

/// Whether dotted keys (`a.b: 1`) are expanded into nested objects (spec v3
/// `expandPaths`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum ExpandPaths {
    /// Keys are taken literally, as the 4.4 reference does.
    #[default]
    Off,
    /// Expand keys whose dot-separated segments are all identifiers.
    Safe,
}

/// Options of [`decode`]; the defaults are the reference's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct DecodeOptions {
    /// Spaces per indentation level (reference `indentSize`), at least 1.
    pub indent: usize,
    /// Strict mode: exact indentation, no tabs in indentation, declared
    /// lengths and widths checked, no blank lines inside arrays, no
    /// duplicate sibling keys.
    pub strict: bool,
    /// Path expansion (default off; see the module documentation).
    pub expand_paths: ExpandPaths,
}

impl Default for DecodeOptions {
    fn default() -> Self {
        DecodeOptions { indent: 2, strict: true, expand_paths: ExpandPaths::Off }
    }
}

/// Decode TOON text to a `serde_json::Value` (object key order kept;
/// non-strict duplicate keys keep the first position and the last value).
pub fn decode(text: &str, opts: &DecodeOptions) -> Result<serde_json::Value> {
    decode_with(text, opts, &mut ValueBuilder)
}

/// Decode TOON text, building the value with `b`.
///
/// Objects are handed over with their entries in document order. In
/// non-strict mode an object may repeat a key: the builder should keep the
/// first position and the last value, as a JavaScript object (and a Python
/// dict) does. (A JavaScript object also enumerates integer-like keys
/// first; that order is left to the builder's host.) Integers come through
/// [`Builder::int`], other numbers through [`Builder::float`]; see the
/// module documentation.
pub fn decode_with<B: Builder>(text: &str, opts: &DecodeOptions, b: &mut B) -> Result<B::Value, B::Error> {
    if opts.indent == 0 {
        return Err(Error::new(
            Format::Toon,
            "TOON_INVALID_OPTION",
            "indent must be at least 1 (expected the number of spaces per indentation level)",
        )
        .into());
    }
    if opts.expand_paths == ExpandPaths::Safe {
        let mut d = decoder(text, opts);
        d.max_depth = EXPAND_MAX_DEPTH;
        let tree = d.document(&mut TreeBuilder)?;
        let tree = expand(tree, opts.strict, 0)?;
        return replay(tree, b, &mut Vec::new(), &mut Vec::new());
    }
    decoder(text, opts).document(&mut Plain(b))
}

/// [`decode_with`] for a builder that itself rejects an object holding the
/// same key twice (in strict mode; e.g. one that builds a hash map and
/// compares its size with the entries'): sibling keys are then not
/// tracked here. The builder's error is not positioned, so a caller that
/// gets any error decodes again with [`decode_with`] for the error to
/// report: it finds the same fault, or a duplicate key before it. With
/// path expansion, the same as [`decode_with`].
pub fn decode_with_builder_checked_keys<B: Builder>(text: &str, opts: &DecodeOptions, b: &mut B) -> Result<B::Value, B::Error> {
    if opts.indent == 0 || opts.expand_paths == ExpandPaths::Safe {
        return decode_with(text, opts, b);
    }
    let mut d = decoder(text, opts);
    d.track_keys = false;
    d.document(&mut Plain(b))
}

fn decoder<'a, V, K>(text: &'a str, opts: &DecodeOptions) -> Decoder<'a, V, K> {
    // The work stacks start with room for a typical document (about a line
    // per 20 bytes, at most 64 values deep): growing them from empty cost
    // a few percent of decoding a small one.
    let room = (text.len() / 20).clamp(4, 64);
    Decoder {
        text,
        strict: opts.strict,
        r: Reader {
            text,
            pos: 0,
            number: 0,
            peeked: None,
            last: None,
            blanks: Vec::new(),
            indent: opts.indent,
            strict: opts.strict,
            more: false,
            joins: &[],
        },
        values: Vec::with_capacity(room),
        entries: Vec::with_capacity(room),
        pending: Vec::with_capacity(room),
        scratch: String::new(),
        cells: Vec::with_capacity(room),
        plain: Vec::new(),
        fields: FieldList::default(),
        field_keys: Vec::new(),
        keys_generation: 0,
        seen: SeenKeys { stack: Vec::with_capacity(room), owned: Vec::new(), big: HashSet::new(), next_id: 0 },
        track_keys: opts.strict,
        max_depth: MAX_DEPTH,
    }
}

/// Decode TOON given as bytes; bytes that are not UTF-8 fail with
/// `TOON_INVALID_UTF8` at their line and column.
pub fn decode_bytes(bytes: &[u8], opts: &DecodeOptions) -> Result<serde_json::Value> {
    decode_bytes_with(bytes, opts, &mut ValueBuilder)
}

/// [`decode_bytes`] building the value with `b`.
pub fn decode_bytes_with<B: Builder>(bytes: &[u8], opts: &DecodeOptions, b: &mut B) -> Result<B::Value, B::Error> {
    match std::str::from_utf8(bytes) {
        Ok(text) => decode_with(text, opts, b),
        Err(e) => Err(utf8_error(bytes, e.valid_up_to()).into()),
    }
}

/// The state of one decoding: the line reader, the stacks the values are
/// built on, and what is reused from line to line. Its methods are spread
/// by concern: the walk in `structure.rs`, [`Decoder::header`] in
/// `headers.rs`, [`Decoder::primitive`] in `scalars.rs`, errors and checks
/// in `errors.rs`.
struct Decoder<'a, V, K> {
    text: &'a str,
    strict: bool,
    r: Reader<'a>,
    /// Children of the arrays being built (each array drains its range).
    values: Vec<V>,
    /// Entries of the objects being built.
    entries: Vec<(K, V)>,
    /// Keys whose value is a frame still open on the stack.
    pending: Vec<K>,
    /// Unescaped text of the current quoted value.
    scratch: String,
    /// Cells of the current table row (kept to reuse its allocation).
    cells: Vec<&'a str>,
    /// The same, as [`plain_cells`](lines::plain_cells) reads them.
    plain: Vec<PlainCell<'a>>,
    /// The field list of the last tabular header.
    fields: FieldList<'a>,
    /// Keys made for `fields` (one per field, group names included), valid
    /// while `keys_generation` is the list's generation.
    field_keys: Vec<K>,
    keys_generation: u64,
    seen: SeenKeys<'a>,
    /// Whether sibling keys are tracked for duplicates (strict mode, unless
    /// the builder checks them: [`decode_with_builder_checked_keys`]).
    track_keys: bool,
    /// Nesting limit ([`MAX_DEPTH`] or [`EXPAND_MAX_DEPTH`]).
    max_depth: usize,
}

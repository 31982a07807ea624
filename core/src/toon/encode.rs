//! TOON encoder: a JSON-model value to TOON text, byte for byte as
//! `encode` of the reference `@toon-format/toon` 4.4.0 writes it (spec v4).
//!
//! The encoder is generic over [`EncodeValue`], a small read-only view of a
//! value (classify it, walk array items and object entries, look an entry up
//! by key), so a binding walks its own objects (Python dicts and lists, ...)
//! with no intermediate tree. [`encode_value`] encodes a `serde_json::Value`.
//!
//! Rules, as the reference applies them (its `normalizeValue` and encoders):
//! - Numbers in ECMAScript Number-to-string form (`1.0` -> `1`, `1e21` ->
//!   `1e+21`, `1e-7`), `-0` -> `0`, NaN and infinities -> `null`. Integers are
//!   written exactly, also beyond 2^53 and 64 bits ([`Kind::BigInt`]); the
//!   reference only sees JavaScript numbers there (a `BigInt` outside the safe
//!   range becomes a quoted string — a binding that wants that maps it to
//!   [`Kind::Str`]).
//! - Object keys in JavaScript enumeration order: keys that are array indices
//!   (canonical decimal integers below 2^32 - 1) first, ascending, then the
//!   others in their order — what the reference sees for the same document.
//! - Strings are quoted when empty, with leading or trailing space/tab, equal
//!   to `true`/`false`/`null`, numeric-like, starting with `-` or `#`, or
//!   containing `:`, `"`, `\`, brackets, braces, a C0 control or the active
//!   delimiter; a root string starting with U+FEFF is always quoted. Escapes
//!   are `\\ \" \n \r \t` and `\u00xx` for the other C0 controls.
//! - Keys are bare when they match `^[A-Za-z_][A-Za-z0-9_.]*$`, else quoted.
//! - Arrays: `key: []` when empty; `key[N]: a,b` when all items are
//!   primitives; `key[N]:` + `- [M]: ...` when all items are arrays of
//!   primitives; tabular `key[N]{f1,f2{g1,g2}}:` + rows when all items are
//!   objects with the same key set whose values are primitives or (nested
//!   field groups) uniform non-empty objects; otherwise `key[N]:` + `- `
//!   list items.
//! - Objects with at least two values, all uniform non-empty objects, take
//!   the keyed tabular form `key[N:]{f1,f2}:` + `entry: v1,v2` rows.
//! - The header carries the delimiter when it is not a comma: `[N|]`,
//!   `[N:\t]`; rows and inline arrays join with it.
//!
//! Lines are joined with `\n`, with no trailing newline; an empty root object
//! encodes to the empty string. Nesting is bounded by [`MAX_DEPTH`] (error
//! `TOON_TOO_DEEP`); the walk recurses, taking about 0.7 KiB of stack per
//! level in release builds (about 3 KiB in debug builds).
//!
//! Key folding ([`KeyFolding::Safe`], spec v3 §13.4) is not in the 4.x
//! reference; it follows `@toon-format/toon` 2.3.1 (which passes the v3
//! `key-folding` fixtures), with two choices where v3 and v4 meet or where
//! 2.3.1 falls short of the spec: a folded key takes its value in the v4
//! forms like any key (`a.b[2:]{p}:` for a keyed tabular value), and in a
//! list-item object the first key counts as a sibling of the others for
//! collision avoidance (2.3.1 forgets it and may write `- a.b: 1` followed
//! by a folded `a.b: 2`).
//!
//! Errors: `TOON_TOO_DEEP`, `TOON_INVALID_OPTION` (indent above
//! [`MAX_INDENT`]) and `TOON_VALUE_CHANGED` (a value changed between the
//! encoder's walks; impossible for `serde_json::Value`).
//!
//! # Layout
//!
//! This file holds the API: the options, [`Kind`] and [`EncodeValue`], the
//! entry points and the encoder's errors. The analysis of a value (which
//! form an array or object takes: tables, keyed tables, uniform arrays,
//! item shapes, key folding's collision sets) is in `analyze.rs`; the
//! writing is in `scalars.rs` (strings and numbers) and `writer.rs` (the
//! lines, headers and the walk that chooses a form and writes it). The
//! quoting and key rules it shares with the decoder are in `../syntax.rs`.

use self::analyze::for_each_entry;
use self::scalars::{push_f64, push_primitive, push_string};
use self::writer::Writer;
use super::Delimiter;
use crate::error::{Error, Format, Result};
use crate::json::array_index;
use crate::toon::syntax::quote_table_for;

mod analyze;
mod scalars;
#[cfg(test)]
mod tests;
mod writer;

/// Deepest value nesting the encoder walks (the root is level 0); a deeper
/// container fails with `TOON_TOO_DEEP`. It bounds the recursion (stack) and
/// the indentation width of a line (at most `2 * MAX_DEPTH * indent`).
pub const MAX_DEPTH: usize = 1024;

/// Largest `indent` accepted (`TOON_INVALID_OPTION` above it), so that an
/// option cannot make every line allocate without bound.
pub const MAX_INDENT: usize = 256;

/// Key folding (spec v3 §13.4, opt-in): collapse chains of single-key
/// objects into dotted keys such as `a.b.c: 1`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum KeyFolding {
    /// Standard nesting (the reference's only behaviour since 4.0).
    #[default]
    Off,
    /// Fold chains whose segments are identifiers (`^[A-Za-z_][A-Za-z0-9_]*$`)
    /// and whose folded key collides with no sibling key.
    Safe,
}

/// Encoder options; `Default` matches the reference's defaults.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EncodeOptions {
    /// Spaces per indentation level (default 2, at most [`MAX_INDENT`]).
    pub indent: usize,
    /// Delimiter of inline arrays, tabular rows and headers (default comma).
    pub delimiter: Delimiter,
    /// Key folding (default off).
    pub key_folding: KeyFolding,
    /// Most segments a folded key may have (default unbounded); only with
    /// [`KeyFolding::Safe`], and values below 2 fold nothing.
    pub flatten_depth: usize,
}

impl Default for EncodeOptions {
    fn default() -> Self {
        EncodeOptions { indent: 2, delimiter: Delimiter::Comma, key_folding: KeyFolding::Off, flatten_depth: usize::MAX }
    }
}

/// What a value is, as the encoder sees it. Strings (and big integer digits)
/// are borrowed from the value; a binding that must convert keeps the
/// converted text alive for the walk. (Borrowed only, so a `Kind` has no
/// drop glue: it is made and dropped once per value written.)
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Kind<'a> {
    Null,
    Bool(bool),
    Int(i64),
    UInt(u64),
    /// Written in ECMAScript form; `-0` as `0`, NaN and infinities as `null`.
    Float(f64),
    /// An integer beyond 64 bits as its decimal digits (with a leading `-`
    /// when negative), written as is, unquoted.
    BigInt(&'a str),
    Str(&'a str),
    /// Pre-formatted text written verbatim at a primitive position (the
    /// reference's `rawString`, typically returned by a replacer). It counts
    /// as a primitive for every array and table check. The reference rejects
    /// one holding a line that starts with `#` when it is made; a binding
    /// that offers it checks that.
    Raw(&'a str),
    Array,
    Object,
}

impl Kind<'_> {
    #[inline]
    pub(super) fn is_primitive(&self) -> bool {
        !matches!(self, Kind::Array | Kind::Object)
    }
}

/// A read-only view of a JSON-model value that the encoder walks.
///
/// `Self` is a cheap-to-clone handle (`&serde_json::Value`, a Python object
/// reference, ...); iterators hand out new handles.
///
/// For a binding, the reference's `normalizeValue` says what a host value
/// becomes: a `toJSON()` result replaces the value; `-0` -> 0, NaN and
/// infinities -> null (done here for [`Kind::Float`]); a `BigInt` in the
/// safe range -> number, outside -> decimal string; `Date` -> ISO string;
/// `Set` -> array; `Map` -> object with `String(key)` keys; plain objects ->
/// own enumerable keys; strings or keys holding a lone surrogate -> a
/// `TypeError`; anything else (`undefined`, functions, symbols, class
/// instances) -> null (an `undefined` property is kept, as null). The encoder walks a
/// container more than once (to classify it, then to write it), so iteration
/// must be repeatable; it never assumes that a second walk yields the same
/// number of items as `array_len`/`object_len` said (it does not panic if a
/// value changes under it, it writes what it sees or fails with
/// `TOON_VALUE_CHANGED`).
pub trait EncodeValue<'k>: Clone {
    /// The error type of the walk; the encoder's own errors convert into it.
    type Error: From<Error>;

    /// Classify the value. Called several times per value; keep it cheap
    /// for containers.
    fn kind(&self) -> Result<Kind<'_>, Self::Error>;

    /// Number of items of an array (0 for a non-array).
    fn array_len(&self) -> usize;

    /// The items of an array, in order (nothing for a non-array).
    fn array_items(&self) -> impl Iterator<Item = Result<Self, Self::Error>> + '_;

    /// Number of entries of an object (0 for a non-object).
    fn object_len(&self) -> usize;

    /// The entries of an object in insertion order (nothing for a
    /// non-object). Keys must be distinct. The encoder itself moves keys
    /// that are array indices first, as a JavaScript object orders them.
    fn object_entries(&self) -> impl Iterator<Item = Result<(&'k str, Self), Self::Error>> + '_;

    /// The value of the entry with this key, if any (for tabular rows whose
    /// keys come in another order than the first row's).
    fn object_get(&self, key: &str) -> Result<Option<Self>, Self::Error>;

    /// Whether some key of the object is an array index (a canonical decimal
    /// integer below 2^32 - 1, see [`crate::json::array_index`]); such
    /// objects are re-ordered. Override with a faster keys-only scan.
    fn object_has_index_key(&self) -> Result<bool, Self::Error> {
        for entry in self.object_entries() {
            let (k, _) = entry?;
            if array_index(k).is_some() {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// A fast path for tables, for a walk that writes cells as it reads
    /// them: when this is an array of objects that all have the same keys
    /// in the same order (at least one, none an array index) whose values
    /// are primitives or objects of the same kind (field groups, each of
    /// the same shape in every row), its rows' cells (the primitives, depth
    /// first) as [`CellWriter`] writes them.
    /// The encoder then copies the rows instead of walking them (the header
    /// still comes from the first item's entries) when it writes the array
    /// as a table with that delimiter; otherwise it walks the rows as
    /// usual. `None`, the default, when not known.
    #[inline]
    fn rendered_table(&self) -> Option<RenderedTable<'_>> {
        None
    }
}

/// The rows of a table written ahead of the encoding, by [`CellWriter`]
/// (see [`EncodeValue::rendered_table`]).
#[derive(Clone, Copy, Debug)]
pub struct RenderedTable<'a> {
    /// Cells in each row (the primitives of a row, field groups' included).
    pub columns: usize,
    /// The delimiter between cells (and the one the cells were quoted for).
    pub delimiter: Delimiter,
    /// The rows, one after another, without line breaks.
    pub text: &'a str,
    /// Where each row ends in `text`, one per row, in order.
    pub row_ends: &'a [u32],
}

/// Writes table cells exactly as the encoder writes them with one
/// delimiter, for walks that offer [`EncodeValue::rendered_table`].
#[derive(Clone, Copy, Debug)]
pub struct CellWriter {
    delimiter: Delimiter,
    delim_byte: u8,
    quote: &'static [bool; 256],
}

impl CellWriter {
    pub fn new(delimiter: Delimiter) -> Self {
        let delim_byte = delimiter.as_char() as u8;
        CellWriter { delimiter, delim_byte, quote: quote_table_for(delim_byte) }
    }

    pub fn delimiter(&self) -> Delimiter {
        self.delimiter
    }

    /// Appends the delimiter (between two cells of a row).
    #[inline]
    pub fn delimit(&self, out: &mut String) {
        out.push(self.delim_byte as char);
    }

    /// Appends a number in ECMAScript form (`-0` as `0`, NaN and infinities
    /// as `null`).
    #[inline]
    pub fn number(&self, out: &mut String, f: f64) {
        push_f64(out, f);
    }

    /// Appends a string, quoted where the encoder would quote it.
    #[inline]
    pub fn string(&self, out: &mut String, s: &str) {
        push_string(out, s, self.quote, self.delim_byte);
    }

    /// Appends any primitive; a container is an error.
    #[inline]
    pub fn primitive(&self, out: &mut String, kind: &Kind<'_>) -> Result<()> {
        push_primitive(out, kind, self.quote, self.delim_byte)
    }
}

impl<'a> EncodeValue<'a> for &'a serde_json::Value {
    type Error = Error;

    #[inline]
    fn kind(&self) -> Result<Kind<'_>> {
        use serde_json::Value;
        Ok(match *self {
            Value::Null => Kind::Null,
            Value::Bool(b) => Kind::Bool(*b),
            Value::Number(n) => {
                if let Some(i) = n.as_i64() {
                    Kind::Int(i)
                } else if let Some(u) = n.as_u64() {
                    Kind::UInt(u)
                } else {
                    Kind::Float(n.as_f64().unwrap_or(f64::NAN))
                }
            }
            Value::String(s) => Kind::Str(s.as_str()),
            Value::Array(_) => Kind::Array,
            Value::Object(_) => Kind::Object,
        })
    }

    #[inline]
    fn array_len(&self) -> usize {
        self.as_array().map_or(0, Vec::len)
    }

    fn array_items(&self) -> impl Iterator<Item = Result<Self>> + '_ {
        let items: &'a [serde_json::Value] = match *self {
            serde_json::Value::Array(a) => a.as_slice(),
            _ => &[],
        };
        items.iter().map(Ok)
    }

    #[inline]
    fn object_len(&self) -> usize {
        self.as_object().map_or(0, serde_json::Map::len)
    }

    fn object_entries(&self) -> impl Iterator<Item = Result<(&'a str, Self)>> + '_ {
        let map: Option<&'a serde_json::Map<String, serde_json::Value>> = self.as_object();
        map.into_iter().flat_map(|m| m.iter()).map(|(k, v)| Ok((k.as_str(), v)))
    }

    #[inline]
    fn object_get(&self, key: &str) -> Result<Option<Self>> {
        Ok(self.as_object().and_then(|m| m.get(key)))
    }

    fn object_has_index_key(&self) -> Result<bool> {
        Ok(self.as_object().is_some_and(|m| m.keys().any(|k| array_index(k).is_some())))
    }
}

/// Encode a `serde_json::Value` as TOON text.
pub fn encode_value(value: &serde_json::Value, opts: &EncodeOptions) -> Result<String> {
    encode(&value, opts)
}

/// Encode any [`EncodeValue`] as TOON text.
pub fn encode<'k, V: EncodeValue<'k>>(value: &V, opts: &EncodeOptions) -> Result<String, V::Error> {
    let mut out = String::with_capacity(256);
    encode_into(value, opts, &mut out)?;
    Ok(out)
}

/// Encode any [`EncodeValue`], appending the text to `out` (so a caller can
/// reuse one buffer). On error `out` holds a partial document.
pub fn encode_into<'k, V: EncodeValue<'k>>(value: &V, opts: &EncodeOptions, out: &mut String) -> Result<(), V::Error> {
    if opts.indent > MAX_INDENT {
        return Err(Error::new(
            Format::Toon,
            "TOON_INVALID_OPTION",
            format!("expected an indent of at most {MAX_INDENT} spaces, got {}", opts.indent),
        )
        .into());
    }
    let mut w = Writer {
        out,
        indent: opts.indent,
        delimiter: opts.delimiter,
        delim_byte: opts.delimiter.as_char() as u8,
        quote: quote_table_for(opts.delimiter.as_char() as u8),
        any_line: false,
        folding: opts.key_folding == KeyFolding::Safe,
        flatten_depth: opts.flatten_depth,
        root_dotted: None,
        prescan: false,
        restart: false,
        fields_sig: Vec::new(),
        fields_text: String::new(),
    };
    // Objects are first written in the order their entries come; one with
    // an array-index key (rare) stops the walk, which then starts over
    // with every object's keys scanned before it is written.
    let start = w.out.len();
    match w.root(value) {
        Err(_) if w.restart => {
            w.out.truncate(start);
            w.any_line = false;
            w.root_dotted = None;
            w.prescan = true;
            w.restart = false;
            w.root(value)
        }
        r => r,
    }
}

/// Append `JSON.stringify(value)` (compact) of the value the encoder sees:
/// the JSON rendering `encode_for_llm` weighs against the TOON text, made
/// from the same walk. Keys that are array indices come first, as the
/// encoder (and a JavaScript object) orders them; numbers are in ECMAScript
/// form (`-0` as `0`, NaN and infinities as `null`); a [`Kind::BigInt`]
/// as its digits; a [`Kind::Raw`] text as a JSON string of it (JSON has no
/// verbatim text). Nesting is bounded by [`MAX_DEPTH`], as for
/// [`encode_into`] (`TOON_TOO_DEEP`); the recursion is bounded by it.
pub fn json_into<'k, V: EncodeValue<'k>>(value: &V, out: &mut Vec<u8>) -> Result<(), V::Error> {
    json_value(value, 0, out)
}

fn json_value<'k, V: EncodeValue<'k>>(value: &V, nest: usize, out: &mut Vec<u8>) -> Result<(), V::Error> {
    match value.kind()? {
        Kind::Null => out.extend_from_slice(b"null"),
        Kind::Bool(b) => out.extend_from_slice(if b { b"true" } else { b"false" }),
        Kind::Int(i) => crate::json::write_i64(out, i),
        Kind::UInt(u) => crate::json::write_u64(out, u),
        Kind::Float(f) => crate::json::write_f64(out, f),
        Kind::BigInt(digits) => out.extend_from_slice(digits.as_bytes()),
        Kind::Str(s) | Kind::Raw(s) => crate::json::write_str(out, s),
        Kind::Array => {
            enter(nest)?;
            out.push(b'[');
            for (i, item) in value.array_items().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                json_value(&item?, nest + 1, out)?;
            }
            out.push(b']');
        }
        Kind::Object => {
            enter(nest)?;
            out.push(b'{');
            for_each_entry(value, |i, k, v| {
                if i > 0 {
                    out.push(b',');
                }
                crate::json::write_str(out, k);
                out.push(b':');
                json_value(&v, nest + 1, out)
            })?;
            out.push(b'}');
        }
    }
    Ok(())
}

// ---------------------------------------------------------------- errors

#[cold]
fn too_deep() -> Error {
    Error::new(Format::Toon, "TOON_TOO_DEEP", format!("expected values nested at most {MAX_DEPTH} levels deep (is the value circular?)"))
}

#[cold]
pub(super) fn value_changed() -> Error {
    Error::new(Format::Toon, "TOON_VALUE_CHANGED", "expected the value to stay unchanged while it is encoded")
}

#[inline]
pub(super) fn enter<E: From<Error>>(nest: usize) -> Result<(), E> {
    if nest >= MAX_DEPTH {
        Err(too_deep().into())
    } else {
        Ok(())
    }
}

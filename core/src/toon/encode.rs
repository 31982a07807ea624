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

use std::collections::HashSet;

use super::Delimiter;
use crate::error::{Error, Format, Result};
use crate::json::array_index;

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
        EncodeOptions {
            indent: 2,
            delimiter: Delimiter::Comma,
            key_folding: KeyFolding::Off,
            flatten_depth: usize::MAX,
        }
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
    fn is_primitive(&self) -> bool {
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
        map.into_iter()
            .flat_map(|m| m.iter())
            .map(|(k, v)| Ok((k.as_str(), v)))
    }

    #[inline]
    fn object_get(&self, key: &str) -> Result<Option<Self>> {
        Ok(self.as_object().and_then(|m| m.get(key)))
    }

    fn object_has_index_key(&self) -> Result<bool> {
        Ok(self
            .as_object()
            .is_some_and(|m| m.keys().any(|k| array_index(k).is_some())))
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

/// Whether an object key is an array index (re-ordered first).
#[inline]
fn is_index_key(k: &str) -> bool {
    k.as_bytes().first().is_some_and(u8::is_ascii_digit) && array_index(k).is_some()
}

// ------------------------------------------------------------ text pieces

/// Bytes that force a string value to be quoted wherever they appear,
/// whatever the delimiter: `:`, `"`, `\`, brackets, braces and C0 controls
/// (the tab delimiter is a C0 control too).
static QUOTE_ALWAYS: [bool; 256] = quote_table(0);

/// [`QUOTE_ALWAYS`] plus the delimiter, one table per delimiter: one
/// lookup per byte.
static QUOTE_COMMA: [bool; 256] = quote_table(b',');
static QUOTE_PIPE: [bool; 256] = quote_table(b'|');

const fn quote_table(delim: u8) -> [bool; 256] {
    let mut t = [false; 256];
    t[delim as usize] = true;
    let mut i = 0;
    while i < 0x20 {
        t[i] = true;
        i += 1;
    }
    t[b':' as usize] = true;
    t[b'"' as usize] = true;
    t[b'\\' as usize] = true;
    t[b'[' as usize] = true;
    t[b']' as usize] = true;
    t[b'{' as usize] = true;
    t[b'}' as usize] = true;
    t
}

/// The table of bytes that force quotes with `delim` active.
fn quote_table_for(delim: u8) -> &'static [bool; 256] {
    match delim {
        b',' => &QUOTE_COMMA,
        b'|' => &QUOTE_PIPE,
        // The tab is a C0 control.
        _ => &QUOTE_ALWAYS,
    }
}

/// Whether `s` matches `^[+-]?\d+(?:\.\d+)?(?:e[+-]?\d+)?$`i (the
/// reference's "numeric-like" strings, which must be quoted). Such a
/// string ends in a digit: most strings are told apart by that alone,
/// before a call.
#[inline(always)]
fn is_numeric_like(s: &[u8]) -> bool {
    matches!(s.last(), Some(b'0'..=b'9')) && matches_number(s)
}

/// [`is_numeric_like`] in full.
fn matches_number(s: &[u8]) -> bool {
    fn digits(s: &[u8], mut i: usize) -> usize {
        while i < s.len() && s[i].is_ascii_digit() {
            i += 1;
        }
        i
    }
    let mut i = usize::from(matches!(s.first(), Some(b'+' | b'-')));
    let j = digits(s, i);
    if j == i {
        return false;
    }
    i = j;
    if s.get(i) == Some(&b'.') {
        let j = digits(s, i + 1);
        if j == i + 1 {
            return false;
        }
        i = j;
    }
    if matches!(s.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(s.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        let j = digits(s, i);
        if j == i {
            return false;
        }
        i = j;
    }
    i == s.len()
}

/// The reference's `isSafeUnquoted`: whether a string value may be written
/// bare with the delimiter whose table is `quote` active. (On x86_64,
/// strings of 16 bytes or more take [`push_long_string`] instead.)
fn is_safe_unquoted(s: &str, quote: &[bool; 256]) -> bool {
    let b = s.as_bytes();
    let (Some(&first), Some(&last)) = (b.first(), b.last()) else {
        return false;
    };
    if matches!(first, b' ' | b'\t' | b'-' | b'#') || matches!(last, b' ' | b'\t') {
        return false;
    }
    if matches!(s, "true" | "false" | "null") || is_numeric_like(b) {
        return false;
    }
    !any_in_table(b, quote)
}

/// Whether some byte of `b` is marked in `table`: eight lookups per branch,
/// since most strings have none.
#[inline]
fn any_in_table(b: &[u8], table: &[bool; 256]) -> bool {
    let mut chunks = b.chunks_exact(8);
    for c in &mut chunks {
        let t = |i: usize| table[c[i] as usize];
        if t(0) | t(1) | t(2) | t(3) | t(4) | t(5) | t(6) | t(7) {
            return true;
        }
    }
    chunks.remainder().iter().any(|&c| table[c as usize])
}

/// `out.push_str(s)` for the short pieces the encoder mostly writes (keys,
/// cells, numbers): copied with two overlapping loads and stores instead of
/// a call to `memcpy`, which dominated for pieces of a few bytes.
#[inline(always)]
fn push_piece(out: &mut String, s: &str) {
    let n = s.len();
    if n > 16 {
        out.push_str(s);
        return;
    }
    out.reserve(16);
    // SAFETY: `n` bytes of valid UTF-8 are appended within the reserved
    // capacity; each load and store stays inside `s` and the spare capacity.
    unsafe {
        let v = out.as_mut_vec();
        let len = v.len();
        let src = s.as_ptr();
        let dst = v.as_mut_ptr().add(len);
        if n >= 8 {
            let a = std::ptr::read_unaligned(src as *const u64);
            let b = std::ptr::read_unaligned(src.add(n - 8) as *const u64);
            std::ptr::write_unaligned(dst as *mut u64, a);
            std::ptr::write_unaligned(dst.add(n - 8) as *mut u64, b);
        } else if n >= 4 {
            let a = std::ptr::read_unaligned(src as *const u32);
            let b = std::ptr::read_unaligned(src.add(n - 4) as *const u32);
            std::ptr::write_unaligned(dst as *mut u32, a);
            std::ptr::write_unaligned(dst.add(n - 4) as *mut u32, b);
        } else if n > 0 {
            // First, middle and last byte (some of them the same).
            *dst = *src;
            *dst.add(n / 2) = *src.add(n / 2);
            *dst.add(n - 1) = *src.add(n - 1);
        }
        v.set_len(len + n);
    }
}

/// The reference's `isValidUnquotedKey`: `^[A-Za-z_][A-Za-z0-9_.]*$`.
fn is_bare_key(s: &str) -> bool {
    let b = s.as_bytes();
    match b.first() {
        Some(c) if c.is_ascii_alphabetic() || *c == b'_' => {}
        _ => return false,
    }
    !any_in_table(&b[1..], &NOT_KEY_CHAR)
}

/// Bytes that may not follow the first character of a bare key.
static NOT_KEY_CHAR: [bool; 256] = {
    let mut t = [true; 256];
    let mut c = 0;
    while c < 256 {
        let b = c as u8;
        if b.is_ascii_alphanumeric() || b == b'_' || b == b'.' {
            t[c] = false;
        }
        c += 1;
    }
    t
};

/// A key segment that may be folded: `^[A-Za-z_][A-Za-z0-9_]*$`.
fn is_identifier_segment(s: &str) -> bool {
    is_bare_key(s) && !s.contains('.')
}

const HEX: &[u8; 16] = b"0123456789abcdef";

/// Append `s` quoted, escaped as the reference's `escapeString` does.
fn push_quoted(out: &mut String, s: &str) {
    out.reserve(s.len() + 2);
    out.push('"');
    push_escaped(out, s, 0);
}

/// The rest of a quoted string: `s` from `start` (a char boundary)
/// escaped, and the closing quote.
fn push_escaped(out: &mut String, s: &str, mut start: usize) {
    let bytes = s.as_bytes();
    loop {
        // The bytes to escape are JSON's (`"`, `\`, C0 controls): skip the
        // runs between them eight bytes at a time.
        let i = crate::json::find_special(bytes, start);
        // Every byte escaped is ASCII, so `start..i` lies on char boundaries.
        push_piece(out, &s[start..i]);
        let Some(&c) = bytes.get(i) else { break };
        match c {
            b'"' => out.push_str("\\\""),
            b'\\' => out.push_str("\\\\"),
            b'\n' => out.push_str("\\n"),
            b'\r' => out.push_str("\\r"),
            b'\t' => out.push_str("\\t"),
            _ => {
                out.push_str("\\u00");
                out.push(HEX[(c >> 4) as usize] as char);
                out.push(HEX[(c & 15) as usize] as char);
            }
        }
        start = i + 1;
    }
    out.push('"');
}

/// ECMAScript Number-to-string, after the reference's normalisation
/// (`-0` -> `0`, NaN and infinities -> `null`). The numbers most data
/// holds are written inline (by `push_small_number`), the rest in a call.
#[inline(always)]
fn push_f64(out: &mut String, f: f64) {
    // SAFETY: `push_small_number` appends ASCII only.
    if !crate::json::push_small_number(unsafe { out.as_mut_vec() }, f) {
        push_other_f64(out, f);
    }
}

/// [`push_f64`] of a number `push_small_number` declined.
#[inline(never)]
fn push_other_f64(out: &mut String, f: f64) {
    // SAFETY (all): `push_int` and `push` append ASCII only.
    // Integers below 2^53 in magnitude are their digits: a double that far
    // from zero names one integer, so no shorter form reads back as it.
    // (Beyond, ECMAScript writes the shortest digits padded with zeros.)
    // NaN and infinities fail the comparison.
    let i = f as i64;
    if i as f64 == f && i.unsigned_abs() < 1 << 53 {
        crate::json::push_int(unsafe { out.as_mut_vec() }, i < 0, i.unsigned_abs());
        return;
    }
    if !f.is_finite() {
        out.push_str("null");
    } else if f == 0.0 {
        out.push('0');
    } else if let Some(d) = crate::json::ShortDecimal::of(f) {
        d.push(unsafe { out.as_mut_vec() });
    } else {
        out.push_str(ryu_js::Buffer::new().format_finite(f));
    }
}

/// A string value or cell: unquoted where that reads back as the same
/// string (`quote`: the bytes that force quotes, `delim` among them).
#[inline]
fn push_string(out: &mut String, s: &str, quote: &[bool; 256], delim: u8) {
    #[cfg(all(target_arch = "x86_64", not(any(polywire_portable, feature = "portable"))))]
    if s.len() >= 16 {
        push_long_string(out, s, delim);
        return;
    }
    // Elsewhere `quote` covers the delimiter alone.
    #[cfg(any(not(target_arch = "x86_64"), polywire_portable, feature = "portable"))]
    let _ = delim;
    if is_safe_unquoted(s, quote) {
        push_piece(out, s);
    } else {
        push_quoted(out, s);
    }
}

/// [`push_string`] for a string of at least 16 bytes, in one pass instead
/// of three (the scan for bytes that force quotes, the scan for bytes to
/// escape, the copy): a vector of bytes a step (16 with SSE2, 32 with AVX2
/// for strings of 32 bytes or more where the processor has it) is copied
/// just after an opening quote while both kinds of byte are looked for.
/// Long strings are mostly free text, which usually needs quotes (a comma,
/// a colon) and seldom an escape, so the copy usually stands and is closed
/// with a quote. Without a byte that forces quotes it moves back over the
/// opening quote; at the first byte to escape, [`push_escaped`] goes on
/// from there. (AVX2: 22K fewer instructions per encode of the repos
/// benchmark, about 2% faster.)
#[cfg(all(target_arch = "x86_64", not(any(polywire_portable, feature = "portable"))))]
fn push_long_string(out: &mut String, s: &str, delim: u8) {
    if s.len() <= 32 {
        push_two_vector_string(out, s, delim)
    } else if std::is_x86_feature_detected!("avx2") {
        // SAFETY: AVX2 is present.
        unsafe { push_long_string_avx2(out, s, delim) }
    } else {
        push_long_string_sse2(out, s, delim)
    }
}

/// [`push_long_string`] for 16 to 32 bytes (dates, names, short URLs):
/// two overlapping vectors hold the string, so there is no loop. Both are
/// looked at before anything is written: a byte to escape sends the string
/// to [`push_quoted`]; otherwise it is written after an opening quote or
/// not, without a branch. (A third of the instructions of the loop.)
#[cfg(all(target_arch = "x86_64", not(any(polywire_portable, feature = "portable"))))]
#[inline(always)]
fn push_two_vector_string(out: &mut String, s: &str, delim: u8) {
    use std::arch::x86_64::*;
    let b = s.as_bytes();
    let n = b.len();
    debug_assert!((16..=32).contains(&n));
    // SAFETY: SSE2 is baseline on x86_64. The loads read b[..16] and
    // b[n - 16..]. The stores write 16 bytes at `q` and at `q + n - 16`, and
    // a quote at 0 and at `q + n`, all within the `n + 2` bytes reserved; the
    // length covers the quotes only when `q` is 1 (the one at 0 is
    // overwritten otherwise), and every byte of `s` copied.
    unsafe {
        let head = _mm_loadu_si128(b.as_ptr() as *const __m128i);
        let tail = _mm_loadu_si128(b.as_ptr().add(n - 16) as *const __m128i);
        // Bytes to escape, and other bytes that force quotes.
        let marks = |x: __m128i| {
            let eq = |c: u8| _mm_cmpeq_epi8(x, _mm_set1_epi8(c as i8));
            let control = _mm_cmpeq_epi8(_mm_max_epu8(x, _mm_set1_epi8(0x1F)), _mm_set1_epi8(0x1F));
            let escape = _mm_or_si128(control, _mm_or_si128(eq(b'"'), eq(b'\\')));
            // `[`/`{` and `]`/`}` differ only in bit 5.
            let folded = _mm_or_si128(x, _mm_set1_epi8(0x20));
            let brackets = _mm_or_si128(
                _mm_cmpeq_epi8(folded, _mm_set1_epi8(b'{' as i8)),
                _mm_cmpeq_epi8(folded, _mm_set1_epi8(b'}' as i8)),
            );
            (escape, _mm_or_si128(brackets, _mm_or_si128(eq(b':'), eq(delim))))
        };
        let ((escape_head, quote_head), (escape_tail, quote_tail)) = (marks(head), marks(tail));
        if _mm_movemask_epi8(_mm_or_si128(escape_head, escape_tail)) != 0 {
            push_quoted(out, s);
            return;
        }
        let quoted = _mm_movemask_epi8(_mm_or_si128(quote_head, quote_tail)) != 0 || long_string_forced(b);
        let q = usize::from(quoted);
        out.reserve(n + 2);
        let v = out.as_mut_vec();
        let start = v.len();
        let p = v.as_mut_ptr().add(start);
        *p = b'"';
        _mm_storeu_si128(p.add(q) as *mut __m128i, head);
        _mm_storeu_si128(p.add(q + n - 16) as *mut __m128i, tail);
        *p.add(q + n) = b'"';
        v.set_len(start + n + 2 * q);
    }
}

/// Whether a string of at least 16 bytes needs quotes for its ends or for
/// looking like a number (`is_safe_unquoted`'s other tests: "true",
/// "false" and "null" are shorter; a number starts with a digit or a sign,
/// and a leading `-` forces quotes anyway).
#[cfg(all(target_arch = "x86_64", not(any(polywire_portable, feature = "portable"))))]
#[inline(always)]
fn long_string_forced(b: &[u8]) -> bool {
    matches!(b[0], b' ' | b'\t' | b'-' | b'#')
        || matches!(b[b.len() - 1], b' ' | b'\t')
        || (matches!(b[0], b'0'..=b'9' | b'+') && is_numeric_like(b))
}

/// The body of [`push_long_string`] for one vector width: `$vector` the
/// type, `$width` its bytes, then its load, store, byte compare, byte
/// broadcast, or, unsigned byte maximum and byte mask intrinsics.
#[cfg(all(target_arch = "x86_64", not(any(polywire_portable, feature = "portable"))))]
macro_rules! push_long_string_body {
    ($out:ident, $s:ident, $delim:ident, $vector:ty, $width:expr, $load:ident, $store:ident, $cmpeq:ident, $set1:ident, $or:ident, $max:ident, $movemask:ident) => {{
        let b = $s.as_bytes();
        let n = b.len();
        debug_assert!(n >= $width);
        $out.reserve(n + 2);
        // SAFETY: the caller checked the vector instructions are present.
        // Loads read `$width` bytes inside `b` (the last one overlapping
        // the one before); stores write `$width` bytes within `start + 1 ..
        // start + 1 + n`, and the closing quote goes at `start + 1 + n`:
        // all inside the `n + 2` bytes reserved. The length covers only
        // bytes written: copies of `b` up to a char boundary (a byte to
        // escape is ASCII) and the quotes.
        unsafe {
            let v = $out.as_mut_vec();
            let start = v.len();
            let quote_at = v.as_mut_ptr().add(start);
            let dst = quote_at.add(1);
            *quote_at = b'"';
            // Once a byte that forces quotes is met, only bytes to escape
            // are looked for (free text usually has a comma early).
            let mut quoted = long_string_forced(b);
            let mut i = 0;
            while i < n {
                // The last step overlaps bytes already checked and copied.
                let at = if i + $width <= n { i } else { n - $width };
                let x = $load(b.as_ptr().add(at) as *const $vector);
                let eq = |c: u8| $cmpeq(x, $set1(c as i8));
                let control = $cmpeq($max(x, $set1(0x1F)), $set1(0x1F));
                $store(dst.add(at) as *mut $vector, x);
                let escape = $movemask($or(control, $or(eq(b'"'), eq(b'\\')))) as u32;
                if escape != 0 {
                    // Every byte to escape forces quotes too. The bytes
                    // before it are copied (an overlapping step finds none
                    // before `i`), and, being ASCII, it is at a char
                    // boundary.
                    let at = at + escape.trailing_zeros() as usize;
                    v.set_len(start + 1 + at);
                    push_escaped($out, $s, at);
                    return;
                }
                if !quoted {
                    // `[`/`{` and `]`/`}` differ only in bit 5.
                    let folded = $or(x, $set1(0x20));
                    let brackets = $or($cmpeq(folded, $set1(b'{' as i8)), $cmpeq(folded, $set1(b'}' as i8)));
                    quoted = $movemask($or(brackets, $or(eq(b':'), eq($delim)))) != 0;
                }
                i = at + $width;
            }
            if quoted {
                *dst.add(n) = b'"';
                v.set_len(start + n + 2);
            } else {
                std::ptr::copy(dst, quote_at, n);
                v.set_len(start + n);
            }
        }
    }};
}

/// [`push_long_string`] sixteen bytes a step (SSE2 is baseline on x86_64).
#[cfg(all(target_arch = "x86_64", not(any(polywire_portable, feature = "portable"))))]
fn push_long_string_sse2(out: &mut String, s: &str, delim: u8) {
    use std::arch::x86_64::*;
    push_long_string_body!(
        out, s, delim, __m128i, 16, _mm_loadu_si128, _mm_storeu_si128, _mm_cmpeq_epi8, _mm_set1_epi8, _mm_or_si128, _mm_max_epu8,
        _mm_movemask_epi8
    )
}

/// [`push_long_string`] 32 bytes a step, for strings of at least 32 bytes.
///
/// SAFETY: the processor must have AVX2.
#[cfg(all(target_arch = "x86_64", not(any(polywire_portable, feature = "portable"))))]
#[target_feature(enable = "avx2")]
unsafe fn push_long_string_avx2(out: &mut String, s: &str, delim: u8) {
    use std::arch::x86_64::*;
    push_long_string_body!(
        out, s, delim, __m256i, 32, _mm256_loadu_si256, _mm256_storeu_si256, _mm256_cmpeq_epi8, _mm256_set1_epi8, _mm256_or_si256,
        _mm256_max_epu8, _mm256_movemask_epi8
    )
}

/// A primitive value or cell; a container here means the value changed
/// since it was classified.
#[inline(always)]
fn push_primitive(out: &mut String, kind: &Kind<'_>, quote: &[bool; 256], delim: u8) -> Result<()> {
    match kind {
        Kind::Null => out.push_str("null"),
        Kind::Bool(true) => out.push_str("true"),
        Kind::Bool(false) => out.push_str("false"),
        // SAFETY (both): `push_int` appends ASCII only.
        Kind::Int(i) => crate::json::push_int(unsafe { out.as_mut_vec() }, *i < 0, i.unsigned_abs()),
        Kind::UInt(u) => crate::json::push_int(unsafe { out.as_mut_vec() }, false, *u),
        Kind::Float(f) => push_f64(out, *f),
        Kind::BigInt(d) | Kind::Raw(d) => out.push_str(d),
        Kind::Str(s) => push_string(out, s, quote, delim),
        Kind::Array | Kind::Object => return Err(value_changed()),
    }
    Ok(())
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

/// A line break and the indentation of a line, as one piece.
const NEWLINE_SPACES: &str = "\n                                                                ";

#[cold]
fn too_deep() -> Error {
    Error::new(
        Format::Toon,
        "TOON_TOO_DEEP",
        format!("expected values nested at most {MAX_DEPTH} levels deep (is the value circular?)"),
    )
}

#[cold]
fn value_changed() -> Error {
    Error::new(
        Format::Toon,
        "TOON_VALUE_CHANGED",
        "expected the value to stay unchanged while it is encoded",
    )
}

#[inline]
fn enter<E: From<Error>>(nest: usize) -> Result<(), E> {
    if nest >= MAX_DEPTH {
        Err(too_deep().into())
    } else {
        Ok(())
    }
}

// ------------------------------------------------------------ structure

/// A column of a tabular header: a leaf, or a nested field group (never
/// empty) whose leaves are written in place of the object.
#[derive(Debug)]
struct Field<'k> {
    name: &'k str,
    children: Vec<Field<'k>>,
}

/// Entries of an object in JavaScript enumeration order, handed to `f` with
/// their position.
fn for_each_entry<'k, V: EncodeValue<'k>>(
    obj: &V,
    mut f: impl FnMut(usize, &str, V) -> Result<(), V::Error>,
) -> Result<(), V::Error> {
    if obj.object_has_index_key()? {
        let mut entries = obj.object_entries().collect::<Result<Vec<_>, _>>()?;
        // Stable: non-index keys keep their relative order after the indices.
        entries.sort_by_key(|(k, _)| array_index(k).map_or(u64::MAX, u64::from));
        for (i, (k, v)) in entries.into_iter().enumerate() {
            f(i, k, v)?;
        }
    } else {
        for (i, entry) in obj.object_entries().enumerate() {
            let (k, v) = entry?;
            f(i, k, v)?;
        }
    }
    Ok(())
}

/// One item of [`EncodeValue::object_entries`].
type Entry<'a, V> = Result<(&'a str, V), <V as EncodeValue<'a>>::Error>;

/// The value of field `name` in `row`: the row's next entry when its key
/// matches (rows usually share the first row's key order), else a lookup.
#[inline]
fn field_value<'k, V: EncodeValue<'k>>(
    row: &V,
    next: Option<Entry<'k, V>>,
    name: &str,
) -> Result<Option<V>, V::Error> {
    if let Some(entry) = next {
        let (k, v) = entry?;
        // Rows built the same way usually share their key objects, so a
        // borrowed key often is the very text of the field name.
        if (k.as_ptr() == name.as_ptr() && k.len() == name.len()) || k == name {
            return Ok(Some(v));
        }
    }
    row.object_get(name)
}

#[derive(Clone, Copy, PartialEq)]
enum Column {
    Primitive,
    Object,
}

/// The reference's `extractTabularFields`: the header fields when `rows`
/// (all objects) share one non-empty key set (in any order) and every column
/// is all primitives or all non-empty objects that are themselves tabular.
fn tabular_fields<'k, V: EncodeValue<'k>>(rows: &[V], nest: usize) -> Result<Option<Vec<Field<'k>>>, V::Error> {
    enter(nest)?;
    let Some(first) = rows.first() else {
        return Ok(None);
    };
    let mut fields: Vec<Field<'k>> = Vec::with_capacity(first.object_len());
    if first.object_has_index_key()? {
        let mut keys = first.object_entries().map(|e| e.map(|(k, _)| k)).collect::<Result<Vec<_>, _>>()?;
        keys.sort_by_key(|k| array_index(k).map_or(u64::MAX, u64::from));
        fields.extend(keys.into_iter().map(|name| Field { name, children: Vec::new() }));
    } else {
        for entry in first.object_entries() {
            fields.push(Field { name: entry?.0, children: Vec::new() });
        }
    }
    if fields.is_empty() {
        return Ok(None);
    }
    let mut columns: Vec<Option<Column>> = vec![None; fields.len()];
    for row in rows {
        if row.object_len() != fields.len() {
            return Ok(None);
        }
        let mut entries = row.object_entries();
        for (field, column) in fields.iter().zip(columns.iter_mut()) {
            let Some(v) = field_value(row, entries.next(), field.name)? else {
                return Ok(None);
            };
            let this = match v.kind()? {
                Kind::Object if v.object_len() > 0 => Column::Object,
                Kind::Array | Kind::Object => return Ok(None),
                _ => Column::Primitive,
            };
            match column {
                None => *column = Some(this),
                Some(c) if *c == this => {}
                Some(_) => return Ok(None),
            }
        }
    }
    for (field, column) in fields.iter_mut().zip(&columns) {
        if *column != Some(Column::Object) {
            continue;
        }
        let mut values = Vec::with_capacity(rows.len());
        for row in rows {
            values.push(row.object_get(field.name)?.ok_or_else(value_changed)?);
        }
        match tabular_fields(&values, nest + 1)? {
            Some(children) => field.children = children,
            None => return Ok(None),
        }
    }
    Ok(Some(fields))
}

/// The header fields a table whose first row is `first` (at nesting level
/// `nest`) would have, when it can be one: see [`Writer::flat_table`].
/// `None` also for first rows the one-pass path leaves to
/// [`tabular_fields`]: objects with array-index keys (re-ordered) and
/// groups nested near [`MAX_DEPTH`] (which fail there).
fn flat_fields<'k, V: EncodeValue<'k>>(first: &V, nest: usize) -> Result<Option<Vec<Field<'k>>>, V::Error> {
    if nest + 2 >= MAX_DEPTH || !matches!(first.kind()?, Kind::Object) {
        return Ok(None);
    }
    let mut fields: Vec<Field<'k>> = Vec::with_capacity(first.object_len());
    for entry in first.object_entries() {
        let (k, v) = entry?;
        if is_index_key(k) {
            return Ok(None);
        }
        let children = match v.kind()? {
            Kind::Object if v.object_len() > 0 => match flat_fields(&v, nest + 1)? {
                Some(children) => children,
                None => return Ok(None),
            },
            Kind::Array | Kind::Object => return Ok(None),
            _ => Vec::new(),
        };
        fields.push(Field { name: k, children });
    }
    Ok((!fields.is_empty()).then_some(fields))
}

/// The cells a row of a table with these header fields has.
fn leaf_count(fields: &[Field<'_>]) -> usize {
    fields.iter().map(|f| if f.children.is_empty() { 1 } else { leaf_count(&f.children) }).sum()
}

/// An object in keyed tabular form: its values (the rows, in order) and the
/// header fields.
struct Keyed<'k, V> {
    rows: Vec<V>,
    fields: Vec<Field<'k>>,
}

/// The reference's `extractKeyedTabularFields`: an object whose (at least
/// two) values are all non-empty objects forming a table.
fn keyed_tabular<'k, V: EncodeValue<'k>>(obj: &V, nest: usize) -> Result<Option<Keyed<'k, V>>, V::Error> {
    let n = obj.object_len();
    if n < 2 {
        return Ok(None);
    }
    // Cheap order-free rejections first, without allocating: most objects
    // fail here. Every value must be a non-empty object, all of one size,
    // and (as `tabular_fields` requires of every row) no value of a row may
    // be an array or an empty object: checked on the first row met.
    let mut size = None;
    for entry in obj.object_entries() {
        let (_, v) = entry?;
        if !matches!(v.kind()?, Kind::Object) {
            return Ok(None);
        }
        let len = v.object_len();
        match size {
            None => {
                if len == 0 {
                    return Ok(None);
                }
                for cell in v.object_entries() {
                    let (_, c) = cell?;
                    match c.kind()? {
                        Kind::Array => return Ok(None),
                        Kind::Object if c.object_len() == 0 => return Ok(None),
                        _ => {}
                    }
                }
                size = Some(len);
            }
            Some(n) if n != len => return Ok(None),
            Some(_) => {}
        }
    }
    let mut rows = Vec::with_capacity(n);
    for_each_entry(obj, |_, _, v| {
        rows.push(v);
        Ok(())
    })?;
    let fields = match tabular_fields(&rows, nest + 1)? {
        Some(f) => f,
        None => return Ok(None),
    };
    Ok(Some(Keyed { rows, fields }))
}

/// What the items of a non-empty array are.
struct ItemShape {
    all_primitive: bool,
    all_array: bool,
    all_object: bool,
}

fn item_shape<'k, V: EncodeValue<'k>>(arr: &V) -> Result<ItemShape, V::Error> {
    let mut s = ItemShape { all_primitive: true, all_array: true, all_object: true };
    for item in arr.array_items() {
        let item = item?;
        match item.kind()? {
            Kind::Array => {
                s.all_primitive = false;
                s.all_object = false;
            }
            Kind::Object => {
                s.all_primitive = false;
                s.all_array = false;
            }
            _ => {
                s.all_array = false;
                s.all_object = false;
            }
        }
        if !(s.all_primitive || s.all_array || s.all_object) {
            break;
        }
    }
    Ok(s)
}

fn all_primitive<'k, V: EncodeValue<'k>>(arr: &V) -> Result<bool, V::Error> {
    for item in arr.array_items() {
        if !item?.kind()?.is_primitive() {
            return Ok(false);
        }
    }
    Ok(true)
}

// ------------------------------------------------------------ writer

struct Writer<'o> {
    out: &'o mut String,
    indent: usize,
    delimiter: Delimiter,
    delim_byte: u8,
    /// Bytes that force a string value to be quoted (delimiter included).
    quote: &'static [bool; 256],
    /// Whether a line was started (the next one is preceded by `\n`).
    any_line: bool,
    /// Key folding on (`KeyFolding::Safe`).
    folding: bool,
    /// `flatten_depth` option.
    flatten_depth: usize,
    /// With folding: the root object's keys that contain a dot, which no
    /// folded path under the root may equal (`None` when there are none).
    root_dotted: Option<HashSet<String>>,
    /// Whether objects are scanned for array-index keys before their
    /// entries are written (see [`encode_into`]).
    prescan: bool,
    /// Set when the walk stopped to start over with `prescan`.
    restart: bool,
    /// The field list last written in a table header (`{a,b,c{d}}`) and
    /// its fields ([`fields_signature`]): tables in a document usually
    /// repeat their header (a table per order, per feature flag), and the
    /// quoting checks of every name then run once.
    fields_sig: Vec<usize>,
    fields_text: String,
}

/// The identity of header fields: per field in preorder, the address and
/// length of its name and its number of children. Names are borrowed text
/// that stays in place, unchanged, for the whole walk (`'k`), so equal
/// addresses and lengths mean equal names, and an address and length kept
/// here can be read back as the name during the walk.
fn fields_signature(fields: &[Field<'_>], sig: &mut Vec<usize>) {
    for f in fields {
        sig.extend_from_slice(&[f.name.as_ptr() as usize, f.name.len(), f.children.len()]);
        fields_signature(&f.children, sig);
    }
}

/// Whether `fields` have the signature `sig` from `*at` on (advanced past it).
fn signature_matches(fields: &[Field<'_>], sig: &[usize], at: &mut usize) -> bool {
    for f in fields {
        match sig.get(*at..*at + 3) {
            Some(&[p, n, c]) if n == f.name.len() && c == f.children.len() => {
                // The same text, or equal text elsewhere (keys that are not
                // shared objects).
                // SAFETY: (p, n) is a name of this walk (see above).
                if p != f.name.as_ptr() as usize && unsafe { std::slice::from_raw_parts(p as *const u8, n) } != f.name.as_bytes() {
                    return false;
                }
            }
            _ => return false,
        }
        *at += 3;
        if !f.children.is_empty() && !signature_matches(&f.children, sig, at) {
            return false;
        }
    }
    true
}

/// Where an object's entries sit, for key folding (the reference 2.3.1's
/// `remainingDepth`, `pathPrefix` and `rootLiteralKeys` arguments).
#[derive(Clone, Copy)]
struct FoldCtx<'p> {
    /// Segments a folded key may still take.
    remaining: usize,
    /// Whether folded paths are checked against the root's dotted keys (in
    /// the root object's nesting, not inside arrays).
    root_chain: bool,
    /// Dotted path of the object from the root; empty means none (the
    /// reference tests it for truthiness).
    prefix: &'p str,
}

/// Dotted path of `key` under `prefix` (the reference's `currentPath`).
fn join_path(prefix: &str, key: &str) -> String {
    if prefix.is_empty() {
        key.to_owned()
    } else {
        format!("{prefix}.{key}")
    }
}

/// With folding: the object's keys that contain a dot (a folded key always
/// does, so only these can collide with one).
fn dotted_keys<'k, V: EncodeValue<'k>>(obj: &V) -> Result<Option<HashSet<String>>, V::Error> {
    let mut set: Option<HashSet<String>> = None;
    for entry in obj.object_entries() {
        let (k, _) = entry?;
        if k.contains('.') {
            set.get_or_insert_with(HashSet::new).insert(k.to_owned());
        }
    }
    Ok(set)
}

impl Writer<'_> {
    /// Start a line at `depth` indentation levels.
    #[inline(always)]
    fn line(&mut self, depth: usize) {
        let n = depth * self.indent;
        let from = usize::from(!self.any_line);
        if n < 16 && self.out.capacity() - self.out.len() >= 16 {
            // Most lines: the line break and up to 15 spaces as one 16-byte
            // store, of which the first `n + 1 - from` bytes are kept.
            self.any_line = true;
            let keep = n + 1 - from;
            // SAFETY: 16 bytes of spare capacity; the source bytes
            // `from..from + 16` lie inside NEWLINE_SPACES (65 bytes); the
            // kept bytes are ASCII.
            unsafe {
                let v = self.out.as_mut_vec();
                let len = v.len();
                std::ptr::copy_nonoverlapping(NEWLINE_SPACES.as_ptr().add(from), v.as_mut_ptr().add(len), 16);
                v.set_len(len + keep);
            }
            return;
        }
        self.line_any(depth);
    }

    #[inline(never)]
    fn line_any(&mut self, depth: usize) {
        let from = usize::from(!self.any_line);
        self.any_line = true;
        let mut n = depth * self.indent;
        let k = n.min(NEWLINE_SPACES.len() - 1);
        push_piece(self.out, &NEWLINE_SPACES[from..k + 1]);
        n -= k;
        while n > 0 {
            let k = n.min(NEWLINE_SPACES.len() - 1);
            self.out.push_str(&NEWLINE_SPACES[1..k + 1]);
            n -= k;
        }
    }

    /// Start a list item line (`- `) at `depth`.
    #[inline]
    fn item(&mut self, depth: usize) {
        self.line(depth);
        self.out.push_str("- ");
    }

    #[inline]
    fn key(&mut self, k: &str) {
        if is_bare_key(k) {
            push_piece(self.out, k);
        } else {
            push_quoted(self.out, k);
        }
    }

    /// Write a primitive; containers here mean the value changed since it
    /// was classified. Inlined: its prologue and epilogue (it saves many
    /// registers) cost as much as writing a short value.
    #[inline(always)]
    fn primitive(&mut self, kind: &Kind<'_>) -> Result<()> {
        push_primitive(self.out, kind, self.quote, self.delim_byte)
    }

    /// `key[N<:><delim>]{fields}:` (the reference's `formatHeader`).
    fn header(&mut self, key: Option<&str>, n: usize, fields: Option<&[Field<'_>]>, keyed: bool) {
        if let Some(k) = key {
            self.key(k);
        }
        self.out.push('[');
        // SAFETY: `push_int` appends ASCII only.
        crate::json::push_int(unsafe { self.out.as_mut_vec() }, false, n as u64);
        if keyed {
            self.out.push(':');
        }
        if self.delimiter != Delimiter::Comma {
            self.out.push(self.delim_byte as char);
        }
        self.out.push(']');
        if let Some(fields) = fields {
            self.fields(fields);
        }
        self.out.push(':');
    }

    /// `{a,b,c{d}}`, from [`Writer::fields_text`] when the last header
    /// had the same fields.
    fn fields(&mut self, fields: &[Field<'_>]) {
        let mut at = 0;
        if !self.fields_sig.is_empty() && signature_matches(fields, &self.fields_sig, &mut at) && at == self.fields_sig.len() {
            push_piece(self.out, &self.fields_text);
            return;
        }
        let start = self.out.len();
        self.field_list(fields);
        self.fields_sig.clear();
        fields_signature(fields, &mut self.fields_sig);
        self.fields_text.clear();
        self.fields_text.push_str(&self.out[start..]);
    }

    fn field_list(&mut self, fields: &[Field<'_>]) {
        self.out.push('{');
        for (i, f) in fields.iter().enumerate() {
            if i > 0 {
                self.out.push(self.delim_byte as char);
            }
            self.key(f.name);
            if !f.children.is_empty() {
                self.field_list(&f.children);
            }
        }
        self.out.push('}');
    }

    /// `key[N]: a,b,c` (`key[0]:` when empty) for an array of primitives.
    fn inline_array<'k, V: EncodeValue<'k>>(&mut self, key: Option<&str>, arr: &V) -> Result<(), V::Error> {
        let n = arr.array_len();
        self.header(key, n, None, false);
        if n > 0 {
            self.out.push(' ');
            for (i, item) in arr.array_items().enumerate() {
                if i > 0 {
                    self.out.push(self.delim_byte as char);
                }
                let item = item?;
                match item.kind() {
                    Err(e) => return Err(e),
                    Ok(ref kind) => self.primitive(kind)?,
                }
            }
        }
        Ok(())
    }

    /// The leaf cells of one tabular row, delimiter-separated.
    fn row_cells<'k, V: EncodeValue<'k>>(&mut self, row: &V, fields: &[Field<'_>], first: &mut bool) -> Result<(), V::Error> {
        let mut entries = row.object_entries();
        for field in fields {
            let v = field_value(row, entries.next(), field.name)?.ok_or_else(value_changed)?;
            if field.children.is_empty() {
                if !*first {
                    self.out.push(self.delim_byte as char);
                }
                *first = false;
                self.primitive(&v.kind()?)?;
            } else {
                self.row_cells(&v, &field.children, first)?;
            }
        }
        Ok(())
    }

    fn tabular_rows<'k, V: EncodeValue<'k>>(&mut self, rows: &[V], fields: &[Field<'_>], depth: usize) -> Result<(), V::Error> {
        for row in rows {
            self.line(depth);
            self.row_cells(row, fields, &mut true)?;
        }
        Ok(())
    }

    /// Tables in one pass. A table's header follows from its first row: a
    /// leaf per primitive value, a nested field group per non-empty object
    /// (whose own first-row fields follow the same rule); an array or empty
    /// object there means no table. So when the first item of `arr` (`n >
    /// 0` items) gives a header ([`flat_fields`]), the array is tabular
    /// exactly when every item has that same shape: the header and rows are
    /// written while that is checked, and at the first item that does not
    /// fit the text written is taken back and false returned (the caller
    /// then classifies the array as usual). Also false, with nothing
    /// written, when the first item gives no header. `list_item`: the
    /// header goes on a `- ` line at `depth` (the first entry of a
    /// list-item object), rows two levels deeper; else on a line at
    /// `depth`, rows one level deeper. `nest`: the array's nesting level.
    fn flat_table<'k, V: EncodeValue<'k>>(
        &mut self,
        key: Option<&str>,
        arr: &V,
        n: usize,
        depth: usize,
        list_item: bool,
        nest: usize,
    ) -> Result<bool, V::Error> {
        let Some(first) = arr.array_items().next() else {
            return Ok(false);
        };
        let first = first?;
        let Some(fields) = flat_fields(&first, nest + 1)? else {
            return Ok(false);
        };
        let (mark, any_line) = (self.out.len(), self.any_line);
        if list_item {
            self.item(depth);
        } else {
            self.line(depth);
        }
        self.header(key, n, Some(&fields), false);
        let row_depth = depth + if list_item { 2 } else { 1 };
        if let Some(table) = arr.rendered_table() {
            if table.columns == leaf_count(&fields) && table.delimiter == self.delimiter && table.row_ends.len() == n {
                self.rendered_rows(&table, row_depth)?;
                return Ok(true);
            }
        }
        let mut rows = 0;
        for row in arr.array_items() {
            let row = row?;
            self.line(row_depth);
            if !self.flat_cells(&row, &fields, &mut true)? {
                self.out.truncate(mark);
                self.any_line = any_line;
                return Ok(false);
            }
            rows += 1;
        }
        if rows != n {
            return Err(value_changed().into());
        }
        Ok(true)
    }

    /// The cells of one row of [`Writer::flat_table`] (of a nested field
    /// group when `fields` are its children); false when `row` does not
    /// have the shape of `fields`.
    fn flat_cells<'k, V: EncodeValue<'k>>(&mut self, row: &V, fields: &[Field<'_>], first: &mut bool) -> Result<bool, V::Error> {
        if !matches!(row.kind()?, Kind::Object) || row.object_len() != fields.len() {
            return Ok(false);
        }
        let mut entries = row.object_entries();
        for field in fields {
            let Some(v) = field_value(row, entries.next(), field.name)? else {
                return Ok(false);
            };
            if field.children.is_empty() {
                // Matched in place (not moved out of the `Result`): copies
                // of a just-built `Kind` stall on store forwarding.
                match v.kind() {
                    Err(e) => return Err(e),
                    Ok(ref kind) => {
                        if !kind.is_primitive() {
                            return Ok(false);
                        }
                        if !*first {
                            self.out.push(self.delim_byte as char);
                        }
                        *first = false;
                        self.primitive(kind)?;
                    }
                }
            } else if !self.flat_cells(&v, &field.children, first)? {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// The rows of a table the value wrote ahead
    /// ([`EncodeValue::rendered_table`]), each on its line.
    fn rendered_rows(&mut self, table: &RenderedTable<'_>, row_depth: usize) -> Result<()> {
        let mut start = 0;
        for &end in table.row_ends {
            let row = table.text.get(start..end as usize).ok_or_else(value_changed)?;
            self.line(row_depth);
            push_piece(self.out, row);
            start = end as usize;
        }
        Ok(())
    }

    /// `entry: v1,v2` rows of a keyed tabular object.
    fn keyed_rows<'k, V: EncodeValue<'k>>(&mut self, obj: &V, fields: &[Field<'_>], depth: usize) -> Result<(), V::Error> {
        for_each_entry(obj, |_, k, v| {
            self.line(depth);
            self.key(k);
            self.out.push_str(": ");
            self.row_cells(&v, fields, &mut true)
        })
    }

    fn root<'k, V: EncodeValue<'k>>(&mut self, v: &V) -> Result<(), V::Error> {
        match v.kind()? {
            Kind::Array => self.array(None, v, 0, 0),
            Kind::Object => {
                if let Some(Keyed { rows, fields }) = keyed_tabular(v, 0)? {
                    self.line(0);
                    self.header(None, rows.len(), Some(&fields), true);
                    self.keyed_rows(v, &fields, 1)
                } else {
                    if self.folding {
                        self.root_dotted = dotted_keys(v)?;
                    }
                    let ctx = FoldCtx {
                        remaining: self.flatten_depth,
                        root_chain: self.root_dotted.is_some(),
                        prefix: "",
                    };
                    self.object(v, 0, 0, ctx)
                }
            }
            Kind::Str(s) if s.starts_with('\u{feff}') => {
                // A leading BOM would be stripped by decoders: always quote.
                push_quoted(self.out, s);
                Ok(())
            }
            kind => Ok(self.primitive(&kind)?),
        }
    }

    /// Folding context of an object outside the root's nesting.
    fn fresh_ctx(&self) -> FoldCtx<'static> {
        FoldCtx { remaining: self.flatten_depth, root_chain: false, prefix: "" }
    }

    /// The entries of `obj` as `key: ...` lines at `depth`.
    ///
    /// In this and the following methods `nest` is the nesting level of the
    /// value handled (the root is 0), checked against [`MAX_DEPTH`] before a
    /// container is walked.
    fn object<'k, V: EncodeValue<'k>>(&mut self, obj: &V, depth: usize, nest: usize, ctx: FoldCtx<'_>) -> Result<(), V::Error> {
        enter(nest)?;
        let dotted = if self.folding { dotted_keys(obj)? } else { None };
        self.entries(obj, |w, _, k, v| w.entry(k, &v, depth, nest + 1, ctx, dotted.as_ref()))
    }

    /// [`for_each_entry`] for entries that are written: without `prescan`,
    /// in the object's own order, and an array-index key stops the walk to
    /// start over (`restart`).
    #[inline]
    fn entries<'k, V: EncodeValue<'k>>(
        &mut self,
        obj: &V,
        mut f: impl FnMut(&mut Self, usize, &str, V) -> Result<(), V::Error>,
    ) -> Result<(), V::Error> {
        if self.prescan {
            return for_each_entry(obj, |i, k, v| f(self, i, k, v));
        }
        for (i, entry) in obj.object_entries().enumerate() {
            let (k, v) = entry?;
            if is_index_key(k) {
                self.restart = true;
                return Err(Error::new(Format::Toon, "TOON_RESTART", "the walk starts over").into());
            }
            f(self, i, k, v)?;
        }
        Ok(())
    }

    /// One `key: value` entry (the reference's `encodeKeyValuePairLines`);
    /// `dotted` are the sibling keys containing a dot.
    fn entry<'k, V: EncodeValue<'k>>(
        &mut self,
        k: &str,
        v: &V,
        depth: usize,
        nest: usize,
        ctx: FoldCtx<'_>,
        dotted: Option<&HashSet<String>>,
    ) -> Result<(), V::Error> {
        // Matched in place: moving a just-built `Kind` out of the `Result`
        // stalls on store forwarding.
        match v.kind() {
            Err(e) => Err(e),
            Ok(ref kind) => match kind {
                Kind::Array => self.array(Some(k), v, depth, nest),
                Kind::Object => {
                    if self.folding && self.fold(k, v, depth, nest, ctx, dotted)? {
                        return Ok(());
                    }
                    if ctx.root_chain {
                        let path = join_path(ctx.prefix, k);
                        self.object_entry(k, v, depth, nest, FoldCtx { prefix: &path, ..ctx })
                    } else {
                        self.object_entry(k, v, depth, nest, ctx)
                    }
                }
                kind => {
                    self.line(depth);
                    self.key(k);
                    self.out.push_str(": ");
                    Ok(self.primitive(kind)?)
                }
            },
        }
    }

    /// An entry whose value is an object: keyed tabular, or `key:` and the
    /// object's entries below (with `ctx` as their folding context).
    fn object_entry<'k, V: EncodeValue<'k>>(
        &mut self,
        k: &str,
        v: &V,
        depth: usize,
        nest: usize,
        ctx: FoldCtx<'_>,
    ) -> Result<(), V::Error> {
        if let Some(Keyed { rows, fields }) = keyed_tabular(v, nest)? {
            self.line(depth);
            self.header(Some(k), rows.len(), Some(&fields), true);
            return self.keyed_rows(v, &fields, depth + 1);
        }
        self.line(depth);
        self.key(k);
        self.out.push(':');
        if v.object_len() > 0 {
            self.object(v, depth + 1, nest, ctx)?;
        }
        Ok(())
    }

    /// Key folding (spec v3 §13.4, as the reference 2.3.1's
    /// `tryFoldKeyChain`): when `v` starts a chain of single-key objects and
    /// every key of the chain (up to `ctx.remaining` segments) is an
    /// identifier, write the chain as one dotted key and return true. Not
    /// folded when the dotted key equals a sibling key or, under the root,
    /// a dotted root key at the same path. The dotted key then takes the
    /// value at the chain's end as any key does (array forms, keyed tabular).
    fn fold<'k, V: EncodeValue<'k>>(
        &mut self,
        k: &str,
        v: &V,
        depth: usize,
        nest: usize,
        ctx: FoldCtx<'_>,
        dotted: Option<&HashSet<String>>,
    ) -> Result<bool, V::Error> {
        if ctx.remaining < 2 || v.object_len() != 1 || !is_identifier_segment(k) {
            return Ok(false);
        }
        let mut folded = String::from(k);
        let mut segments = 1;
        let mut cur = v.clone();
        while segments < ctx.remaining {
            if !matches!(cur.kind()?, Kind::Object) || cur.object_len() != 1 {
                break;
            }
            // `cur` is at level `nest + segments - 1` and is walked here.
            enter(nest + segments - 1)?;
            let next = {
                let Some(entry) = cur.object_entries().next() else {
                    break;
                };
                let (nk, nv) = entry?;
                if !is_identifier_segment(nk) {
                    return Ok(false);
                }
                folded.push('.');
                folded.push_str(nk);
                nv
            };
            cur = next;
            segments += 1;
        }
        if segments < 2 || dotted.is_some_and(|d| d.contains(&folded)) {
            return Ok(false);
        }
        let path = if ctx.root_chain { join_path(ctx.prefix, &folded) } else { String::new() };
        if ctx.root_chain && self.root_dotted.as_ref().is_some_and(|r| r.contains(&path)) {
            return Ok(false);
        }
        let leaf_nest = nest + segments - 1;
        match cur.kind()? {
            Kind::Array => self.array(Some(&folded), &cur, depth, leaf_nest)?,
            Kind::Object => {
                let ctx = FoldCtx { remaining: ctx.remaining - segments, root_chain: ctx.root_chain, prefix: &path };
                self.object_entry(&folded, &cur, depth, leaf_nest, ctx)?;
            }
            kind => {
                self.line(depth);
                self.key(&folded);
                self.out.push_str(": ");
                self.primitive(&kind)?;
            }
        }
        Ok(true)
    }

    /// An array under `key` (root when `None`), header at `depth`.
    fn array<'k, V: EncodeValue<'k>>(&mut self, key: Option<&str>, arr: &V, depth: usize, nest: usize) -> Result<(), V::Error> {
        enter(nest)?;
        let n = arr.array_len();
        if n == 0 {
            self.line(depth);
            if let Some(k) = key {
                self.key(k);
                self.out.push_str(": []");
            } else {
                self.out.push_str("[]");
            }
            return Ok(());
        }
        if self.flat_table(key, arr, n, depth, false, nest)? {
            return Ok(());
        }
        let shape = item_shape(arr)?;
        if shape.all_primitive {
            self.line(depth);
            return self.inline_array(key, arr);
        }
        if shape.all_array {
            let mut inner_primitive = true;
            for item in arr.array_items() {
                if !all_primitive(&item?)? {
                    inner_primitive = false;
                    break;
                }
            }
            if inner_primitive {
                self.line(depth);
                self.header(key, n, None, false);
                for item in arr.array_items() {
                    self.item(depth + 1);
                    self.inline_array(None, &item?)?;
                }
                return Ok(());
            }
        }
        if shape.all_object {
            let rows = arr.array_items().collect::<Result<Vec<V>, _>>()?;
            if let Some(fields) = tabular_fields(&rows, nest + 1)? {
                self.line(depth);
                self.header(key, rows.len(), Some(&fields), false);
                return self.tabular_rows(&rows, &fields, depth + 1);
            }
            self.line(depth);
            self.header(key, n, None, false);
            for item in &rows {
                self.list_item(item, depth + 1, nest + 1)?;
            }
            return Ok(());
        }
        self.line(depth);
        self.header(key, n, None, false);
        for item in arr.array_items() {
            self.list_item(&item?, depth + 1, nest + 1)?;
        }
        Ok(())
    }

    /// One `- ` list item (the reference's `encodeListItemValueLines`).
    fn list_item<'k, V: EncodeValue<'k>>(&mut self, v: &V, depth: usize, nest: usize) -> Result<(), V::Error> {
        // Matched in place: moving a just-built `Kind` out of the `Result`
        // stalls on store forwarding.
        match v.kind() {
            Err(e) => Err(e),
            Ok(ref kind) => match kind {
                Kind::Array => {
                    enter(nest)?;
                    self.item(depth);
                    if all_primitive(v)? {
                        self.inline_array(None, v)
                    } else {
                        self.header(None, v.array_len(), None, false);
                        for item in v.array_items() {
                            self.list_item(&item?, depth + 1, nest + 1)?;
                        }
                        Ok(())
                    }
                }
                Kind::Object => self.object_item(v, depth, nest),
                kind => {
                    self.item(depth);
                    Ok(self.primitive(kind)?)
                }
            },
        }
    }

    /// An object as a list item: its first entry on the `- ` line, the rest
    /// below it (the reference's `encodeObjectAsListItemLines`). The first
    /// key is never folded; the others are, with all keys as siblings.
    fn object_item<'k, V: EncodeValue<'k>>(&mut self, obj: &V, depth: usize, nest: usize) -> Result<(), V::Error> {
        enter(nest)?;
        if obj.object_len() == 0 {
            self.line(depth);
            self.out.push('-');
            return Ok(());
        }
        let dotted = if self.folding { dotted_keys(obj)? } else { None };
        let ctx = self.fresh_ctx();
        self.entries(obj, |w, i, k, v| {
            if i == 0 {
                w.first_entry(k, &v, depth, nest + 1)
            } else {
                w.entry(k, &v, depth + 1, nest + 1, ctx, dotted.as_ref())
            }
        })
    }

    /// The first entry of a list-item object, on the `- ` line.
    fn first_entry<'k, V: EncodeValue<'k>>(&mut self, k: &str, v: &V, depth: usize, nest: usize) -> Result<(), V::Error> {
        // Matched in place: moving a just-built `Kind` out of the `Result`
        // stalls on store forwarding.
        match v.kind() {
            Err(e) => Err(e),
            Ok(ref kind) => match kind {
                Kind::Array => {
                    enter(nest)?;
                    let n = v.array_len();
                    if n == 0 {
                        self.item(depth);
                        self.key(k);
                        self.out.push_str(": []");
                        return Ok(());
                    }
                    if self.flat_table(Some(k), v, n, depth, true, nest)? {
                        return Ok(());
                    }
                    let shape = item_shape(v)?;
                    if shape.all_object {
                        let rows = v.array_items().collect::<Result<Vec<V>, _>>()?;
                        if let Some(fields) = tabular_fields(&rows, nest + 1)? {
                            self.item(depth);
                            self.header(Some(k), rows.len(), Some(&fields), false);
                            return self.tabular_rows(&rows, &fields, depth + 2);
                        }
                    }
                    self.item(depth);
                    if shape.all_primitive {
                        return self.inline_array(Some(k), v);
                    }
                    self.header(Some(k), n, None, false);
                    for item in v.array_items() {
                        self.list_item(&item?, depth + 2, nest + 1)?;
                    }
                    Ok(())
                }
                Kind::Object => {
                    if let Some(Keyed { rows, fields }) = keyed_tabular(v, nest)? {
                        self.item(depth);
                        self.header(Some(k), rows.len(), Some(&fields), true);
                        return self.keyed_rows(v, &fields, depth + 2);
                    }
                    self.item(depth);
                    self.key(k);
                    self.out.push(':');
                    if v.object_len() > 0 {
                        let ctx = self.fresh_ctx();
                        self.object(v, depth + 2, nest, ctx)?;
                    }
                    Ok(())
                }
                kind => {
                    self.item(depth);
                    self.key(k);
                    self.out.push_str(": ");
                    Ok(self.primitive(kind)?)
                }
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn enc(v: serde_json::Value) -> String {
        encode_value(&v, &EncodeOptions::default()).expect("encodes")
    }

    fn enc_with(v: serde_json::Value, delimiter: Delimiter, indent: usize) -> String {
        let opts = EncodeOptions { delimiter, indent, ..EncodeOptions::default() };
        encode_value(&v, &opts).expect("encodes")
    }

    #[test]
    fn quote_scans_agree_with_the_tables() {
        // Every byte value at every offset of lengths around the 8-byte
        // steps, for each delimiter.
        for delim in [b',', b'\t', b'|'] {
            let table = quote_table_for(delim);
            for len in 1..40 {
                for at in 0..len {
                    for byte in 0..=255u8 {
                        let mut b = vec![b'a'; len];
                        b[at] = byte;
                        let expected = table[byte as usize];
                        assert_eq!(any_in_table(&b, table), expected, "{delim} {len} {at} {byte}");
                    }
                }
            }
        }
    }

    /// `push_string` as the reference decides and escapes, without the
    /// one-pass path for long strings.
    fn push_string_slowly(out: &mut String, s: &str, delim: u8) {
        if is_safe_unquoted(s, quote_table_for(delim)) {
            out.push_str(s);
        } else {
            push_quoted(out, s);
        }
    }

    #[test]
    fn long_strings_in_one_pass_agree_with_the_scans() {
        // Every ASCII character and some wider ones, at every offset of
        // lengths around the 16- and 32-byte steps, after some text, for each
        // delimiter; and strings that need quotes only for their ends or
        // for looking like a number.
        let chars = (0u8..0x80).map(char::from).chain(['\u{e9}', '\u{20ac}', '\u{1f600}', '\u{feff}']);
        let chars: Vec<char> = chars.collect();
        for delim in [b',', b'\t', b'|'] {
            let check = |s: &str| {
                let (mut fast, mut slow) = ("ab".to_owned(), "ab".to_owned());
                push_string(&mut fast, s, quote_table_for(delim), delim);
                push_string_slowly(&mut slow, s, delim);
                assert_eq!(fast, slow, "{delim} {s:?}");
                // Each vector width on its own, whichever `push_string` took.
                #[cfg(all(target_arch = "x86_64", not(any(polywire_portable, feature = "portable"))))]
                {
                    if s.len() >= 16 {
                        let mut sse2 = "ab".to_owned();
                        push_long_string_sse2(&mut sse2, s, delim);
                        assert_eq!(sse2, slow, "SSE2 {delim} {s:?}");
                    }
                    if s.len() >= 32 && std::is_x86_feature_detected!("avx2") {
                        let mut avx2 = "ab".to_owned();
                        // SAFETY: AVX2 is present.
                        unsafe { push_long_string_avx2(&mut avx2, s, delim) };
                        assert_eq!(avx2, slow, "AVX2 {delim} {s:?}");
                    }
                }
            };
            for len in (1..50).chain(60..70) {
                for at in 0..len {
                    for &c in &chars {
                        let mut s: String = "a".repeat(at);
                        s.push(c);
                        s.push_str(&"a".repeat(len - at - 1));
                        check(&s);
                        // A second character to escape after the first.
                        s.push('"');
                        check(&s);
                    }
                }
            }
            for s in ["-aaaaaaaaaaaaaaaaaa", " aaaaaaaaaaaaaaaaaa", "aaaaaaaaaaaaaaaaaa ", "#aaaaaaaaaaaaaaaaaa", "1234567890123456789", "-1.5e+123456789012", "12345678901234567a"] {
                check(s);
            }
        }
    }

    #[test]
    fn root_forms() {
        assert_eq!(enc(json!({})), "");
        assert_eq!(enc(json!([])), "[]");
        assert_eq!(enc(json!("")), "\"\"");
        assert_eq!(enc(json!("\u{feff}x")), "\"\u{feff}x\"");
        assert_eq!(enc(json!({"k": "\u{feff}x"})), "k: \u{feff}x");
        assert_eq!(enc(json!(null)), "null");
        assert_eq!(enc(json!([1, "a"])), "[2]: 1,a");
    }

    #[test]
    fn numbers_in_ecmascript_form() {
        let v: serde_json::Value = crate::json::parse(
            b"[1.0, -0.0, 1e21, 1e20, 1e-7, 0.000001, 5e-324, 18446744073709551615, -9223372036854775808]",
            Default::default(),
        )
        .expect("parses");
        assert_eq!(
            enc(v),
            "[9]: 1,0,1e+21,100000000000000000000,1e-7,0.000001,5e-324,18446744073709551615,-9223372036854775808"
        );
        let mut out = String::new();
        push_f64(&mut out, f64::NAN);
        push_f64(&mut out, f64::NEG_INFINITY);
        push_f64(&mut out, -0.0);
        assert_eq!(out, "nullnull0");
    }

    /// `push_f64` against ryu-js (ECMAScript Number-to-string) after the
    /// reference's normalisation.
    fn check_f64(f: f64) {
        let expected = if !f.is_finite() {
            "null".to_owned()
        } else if f == 0.0 {
            "0".to_owned()
        } else {
            ryu_js::Buffer::new().format_finite(f).to_owned()
        };
        let mut out = String::new();
        push_f64(&mut out, f);
        assert_eq!(out, expected, "{f:e} ({:#x})", f.to_bits());
    }

    #[test]
    fn integers_at_the_edges_of_the_integer_path() {
        for base in [1i64 << 53, 1 << 60, 1_000_000_000_000_000_000, i64::MAX] {
            for d in -4..=4 {
                let f = base.saturating_add(d) as f64;
                check_f64(f);
                check_f64(-f);
                check_f64(f64::from_bits(f.to_bits() + 1));
                check_f64(f64::from_bits(f.to_bits() - 1));
            }
        }
        for f in [1e21, 1e22, -1e21, 9.999999999999999e20, 2f64.powi(63), -(2f64.powi(63)), 0.5, -0.0, f64::MIN_POSITIVE] {
            check_f64(f);
        }
    }

    proptest::proptest! {
        #[test]
        fn push_f64_is_ecmascript(bits: u64, int in -(1i64 << 55)..(1i64 << 55)) {
            check_f64(f64::from_bits(bits));
            check_f64(int as f64);
        }
    }

    #[test]
    fn string_quoting() {
        let cases = [
            ("a b", "a b"),
            (" a", "\" a\""),
            ("a\t", "\"a\\t\""),
            ("true", "\"true\""),
            ("True", "True"),
            ("-1e+5", "\"-1e+5\""),
            ("+1.5E3", "\"+1.5E3\""),
            ("05", "\"05\""),
            ("1.", "1."),
            (".5", ".5"),
            ("1e", "1e"),
            ("-x", "\"-x\""),
            ("#x", "\"#x\""),
            ("x#", "x#"),
            ("a:b", "\"a:b\""),
            ("a,b", "\"a,b\""),
            ("a|b", "a|b"),
            ("[x]", "\"[x]\""),
            ("q\"\\", "\"q\\\"\\\\\""),
            ("\u{1}\u{8}\u{c}\r\n\u{7f}", "\"\\u0001\\u0008\\u000c\\r\\n\u{7f}\""),
            ("日本 😀", "日本 😀"),
        ];
        for (s, want) in cases {
            assert_eq!(enc(json!({ "k": s })), format!("k: {want}"), "{s:?}");
        }
        assert_eq!(enc_with(json!(["a|b", "a,b"]), Delimiter::Pipe, 2), "[2|]: \"a|b\"|a,b");
        assert_eq!(enc_with(json!(["a\tb", "a,b"]), Delimiter::Tab, 2), "[2\t]: \"a\\tb\"\ta,b");
    }

    #[test]
    fn key_quoting() {
        assert_eq!(
            enc(json!({"a.b_1": 1, "1a": 2, "": 3, "a-b": 4, "é": 5})),
            "a.b_1: 1\n\"1a\": 2\n\"\": 3\n\"a-b\": 4\n\"é\": 5"
        );
    }

    #[test]
    fn keys_in_javascript_order() {
        assert_eq!(
            enc(json!({"b": 1, "10": 2, "a": 3, "2": 4, "01": 5, "4294967295": 6})),
            "\"2\": 4\n\"10\": 2\nb: 1\na: 3\n\"01\": 5\n\"4294967295\": 6"
        );
        // Tabular fields follow the first row's JavaScript order too.
        assert_eq!(
            enc(json!([{"x": 1, "1": 2}, {"1": 3, "x": 4}])),
            "[2]{\"1\",x}:\n  2,1\n  3,4"
        );
    }

    #[test]
    fn tabular_rows_in_any_key_order() {
        assert_eq!(
            enc(json!({"t": [{"a": 1, "b": 2}, {"b": 3, "a": 4}]})),
            "t[2]{a,b}:\n  1,2\n  4,3"
        );
        // A missing or extra key, or a non-primitive cell, breaks the table.
        assert_eq!(enc(json!([{"a": 1}, {"b": 1}])), "[2]:\n  - a: 1\n  - b: 1");
        assert_eq!(enc(json!([{"a": 1}, {"a": [1]}])), "[2]:\n  - a: 1\n  - a[1]: 1");
    }

    #[test]
    fn nested_field_groups_and_keyed_objects() {
        assert_eq!(
            enc_with(
                json!({"o": [{"id": 1, "c": {"n": "A", "k": 1}}, {"id": 2, "c": {"k": 2, "n": "B"}}]}),
                Delimiter::Pipe,
                1
            ),
            "o[2|]{id|c{n|k}}:\n 1|A|1\n 2|B|2"
        );
        assert_eq!(
            enc(json!({"s": {"x": {"h": "a", "p": 1}, "y": {"h": "b", "p": 2}}})),
            "s[2:]{h,p}:\n  x: a,1\n  y: b,2"
        );
        assert_eq!(enc_with(json!({"x": {"p": 1}, "y": {"p": 2}}), Delimiter::Tab, 2), "[2:\t]{p}:\n  x: 1\n  y: 2");
        // One entry, or an empty object value: ordinary nesting.
        assert_eq!(enc(json!({"s": {"x": {"p": 1}}})), "s:\n  x:\n    p: 1");
        assert_eq!(enc(json!({"s": {"x": {"p": 1}, "y": {}}})), "s:\n  x:\n    p: 1\n  y:");
    }

    #[test]
    fn list_items() {
        assert_eq!(
            enc(json!([1, [2, 3], [], {}, {"a": [{"b": 1}, {"b": 2}], "c": 1}, [[1], {"d": 1}]])),
            "[6]:\n  - 1\n  - [2]: 2,3\n  - [0]:\n  -\n  - a[2]{b}:\n      1\n      2\n    c: 1\n  - [2]:\n    - [1]: 1\n    - d: 1"
        );
        assert_eq!(enc(json!([[1, 2], []])), "[2]:\n  - [2]: 1,2\n  - [0]:");
        assert_eq!(enc(json!([{"a": []}, {"a": {}}])), "[2]:\n  - a: []\n  - a:");
    }

    #[test]
    fn indent_option() {
        let v = json!({"a": {"b": [{"c": 1, "d": [1]}]}});
        assert_eq!(enc_with(v.clone(), Delimiter::Comma, 0), "a:\nb[1]:\n- c: 1\nd[1]: 1");
        assert_eq!(enc_with(v, Delimiter::Comma, 3), "a:\n   b[1]:\n      - c: 1\n         d[1]: 1");
        let e = encode_value(&json!(1), &EncodeOptions { indent: MAX_INDENT + 1, ..Default::default() })
            .expect_err("indent too large");
        assert_eq!(e.code(), "TOON_INVALID_OPTION");
    }

    #[test]
    fn depth_is_bounded() {
        // Debug builds take about 2.7 KiB of stack per level (release about
        // 0.5 KiB): more than the 2 MiB of a test thread at MAX_DEPTH.
        std::thread::Builder::new()
            .stack_size(32 << 20)
            .spawn(depth_is_bounded_body)
            .expect("spawn")
            .join()
            .expect("no panic");
    }

    fn depth_is_bounded_body() {
        fn nested(levels: usize, object: bool) -> serde_json::Value {
            let mut v = json!(1);
            for _ in 0..levels {
                v = if object {
                    serde_json::Value::Object([("k".to_string(), v)].into_iter().collect())
                } else {
                    serde_json::Value::Array(vec![json!(0), v])
                };
            }
            v
        }
        // `levels` containers around a leaf: the innermost sits at level
        // `levels - 1`.
        for object in [true, false] {
            assert!(encode_value(&nested(MAX_DEPTH, object), &EncodeOptions::default()).is_ok());
            let e = encode_value(&nested(MAX_DEPTH + 1, object), &EncodeOptions::default()).expect_err("too deep");
            assert_eq!(e.code(), "TOON_TOO_DEEP");
        }
        // Deep uniform rows recurse through nested field groups.
        let mut row = json!(1);
        for _ in 0..MAX_DEPTH + 5 {
            row = serde_json::Value::Object([("k".to_string(), row)].into_iter().collect());
        }
        let e = encode_value(&json!([row, row]), &EncodeOptions::default()).expect_err("too deep");
        assert_eq!(e.code(), "TOON_TOO_DEEP");
    }

    fn fold(v: serde_json::Value, flatten_depth: usize) -> String {
        let opts = EncodeOptions { key_folding: KeyFolding::Safe, flatten_depth, ..EncodeOptions::default() };
        encode_value(&v, &opts).expect("encodes")
    }

    #[test]
    fn key_folding() {
        let m = usize::MAX;
        assert_eq!(fold(json!({"a": {"b": {"c": 1}}}), m), "a.b.c: 1");
        assert_eq!(fold(json!({"a": {"b": {"c": {}}}}), m), "a.b.c:");
        assert_eq!(fold(json!({"a": {"b": [1, 2]}}), m), "a.b[2]: 1,2");
        assert_eq!(fold(json!({"a": {"b": {"c": {"d": 1}}}}), 2), "a.b:\n  c:\n    d: 1");
        assert_eq!(fold(json!({"a": {"b": {"c": {"d": 1}}}}), 3), "a.b.c:\n  d: 1");
        assert_eq!(fold(json!({"a": {"b": 1}}), 1), "a:\n  b: 1");
        // Segments must be identifiers (no dots, nothing quoted).
        assert_eq!(fold(json!({"a": {"b.c": {"d": 1}}}), m), "a:\n  b.c:\n    d: 1");
        assert_eq!(fold(json!({"a": {"x-y": 1}}), m), "a:\n  \"x-y\": 1");
        // No fold onto a sibling key, nor onto a dotted root key at that path.
        assert_eq!(fold(json!({"a": {"b": 1}, "a.b": 2}), m), "a:\n  b: 1\na.b: 2");
        assert_eq!(fold(json!({"x.a.b": 1, "x": {"y": 1, "a": {"b": 2}}}), m), "x.a.b: 1\nx:\n  y: 1\n  a:\n    b: 2");
        assert_eq!(fold(json!({"x.a.b": 1, "y": {"y": 1, "a": {"b": 2}}}), m), "x.a.b: 1\ny:\n  y: 1\n  a.b: 2");
        // The remaining depth shrinks along a folded chain only.
        assert_eq!(
            fold(json!({"a": {"b": {"c": 1, "d": {"e": {"f": 1}}}}}), 2),
            "a.b:\n  c: 1\n  d:\n    e:\n      f: 1"
        );
        assert_eq!(fold(json!({"a": {"c": 1, "d": {"e": {"f": 1}}}}), 2), "a:\n  c: 1\n  d.e:\n    f: 1");
        // A folded key takes v4 forms like any key.
        assert_eq!(fold(json!({"a": {"b": {"x": {"p": 1}, "y": {"p": 2}}}}), m), "a.b[2:]{p}:\n  x: 1\n  y: 2");
        // In list items the first key stays; the others fold, with every
        // key of the item as a sibling.
        assert_eq!(
            fold(json!([{"a": {"b": 1}, "c": {"d": 1}, "z": 1}, 1]), m),
            "[2]:\n  - a:\n      b: 1\n    c.d: 1\n    z: 1\n  - 1"
        );
        assert_eq!(
            fold(json!([{"a.b": 1, "a": {"b": 2}}, 1]), m),
            "[2]:\n  - a.b: 1\n    a:\n      b: 2\n  - 1"
        );
        // Off by default.
        assert_eq!(enc(json!({"a": {"b": 1}})), "a:\n  b: 1");
    }

    #[test]
    fn folding_depth_is_bounded() {
        std::thread::Builder::new()
            .stack_size(32 << 20)
            .spawn(folding_depth_is_bounded_body)
            .expect("spawn")
            .join()
            .expect("no panic");
    }

    fn folding_depth_is_bounded_body() {
        let mut v = json!(1);
        for _ in 0..MAX_DEPTH + 1 {
            v = serde_json::Value::Object([("k".to_string(), v)].into_iter().collect());
        }
        let opts = EncodeOptions { key_folding: KeyFolding::Safe, ..EncodeOptions::default() };
        let e = encode_value(&v, &opts).expect_err("too deep");
        assert_eq!(e.code(), "TOON_TOO_DEEP");
        let inner = v["k"].clone();
        let text = encode_value(&inner, &opts).expect("at the limit");
        assert_eq!(text.len(), "k".len() * MAX_DEPTH + (MAX_DEPTH - 1) + ": 1".len());
    }

    /// Strings starting with `raw:` stand for raw text (as the reference's
    /// `rawString` would be returned by a replacer).
    #[derive(Clone)]
    struct Rawish<'a>(&'a serde_json::Value);

    impl<'a> EncodeValue<'a> for Rawish<'a> {
        type Error = Error;
        fn kind(&self) -> Result<Kind<'_>> {
            match self.0.as_str().and_then(|s| s.strip_prefix("raw:")) {
                Some(raw) => Ok(Kind::Raw(raw)),
                None => (&self.0).kind(),
            }
        }
        fn array_len(&self) -> usize {
            (&self.0).array_len()
        }
        fn array_items(&self) -> impl Iterator<Item = Result<Self>> + '_ {
            self.0.as_array().into_iter().flatten().map(|v| Ok(Rawish(v)))
        }
        fn object_len(&self) -> usize {
            (&self.0).object_len()
        }
        fn object_entries(&self) -> impl Iterator<Item = Result<(&'a str, Self)>> + '_ {
            self.0.as_object().into_iter().flatten().map(|(k, v)| Ok((k.as_str(), Rawish(v))))
        }
        fn object_get(&self, key: &str) -> Result<Option<Self>> {
            Ok(self.0.get(key).map(Rawish))
        }
    }

    #[test]
    fn raw_text_is_a_verbatim_primitive() {
        // Expected texts from the reference with a replacer returning
        // `rawString(value.slice(4))` for such strings.
        let cases = [
            (json!([{"a": "raw:x,y"}, {"a": "raw:"}]), "[2]{a}:\n  x,y\n  "),
            (json!({"k": "raw:\"q\"", "l": ["raw:1", "b"]}), "k: \"q\"\nl[2]: 1,b"),
            (json!("raw:"), ""),
            (json!("raw:\u{feff}z"), "\u{feff}z"),
            (json!({"m": {"x": {"p": "raw:1"}, "y": {"p": 2}}}), "m[2:]{p}:\n  x: 1\n  y: 2"),
        ];
        for (v, want) in cases {
            assert_eq!(encode(&Rawish(&v), &EncodeOptions::default()).expect("encodes"), want, "{v}");
        }
    }

    /// A handle whose values change between walks (as a Python object may
    /// while user code runs): the encoder must fail cleanly, not panic.
    #[derive(Clone)]
    /// A value whose strings turn into objects after `.2` calls of `kind`.
    struct Shifty<'a>(&'a serde_json::Value, &'a std::cell::Cell<usize>, usize);

    impl<'a> EncodeValue<'a> for Shifty<'a> {
        type Error = Error;
        fn kind(&self) -> Result<Kind<'_>> {
            self.1.set(self.1.get() + 1);
            if self.1.get() > self.2 && self.0.is_string() {
                return Ok(Kind::Object);
            }
            (&self.0).kind()
        }
        fn array_len(&self) -> usize {
            self.0.as_array().map_or(0, Vec::len)
        }
        fn array_items(&self) -> impl Iterator<Item = Result<Self>> + '_ {
            self.0.as_array().into_iter().flatten().map(|v| Ok(Shifty(v, self.1, self.2)))
        }
        fn object_len(&self) -> usize {
            self.0.as_object().map_or(0, serde_json::Map::len)
        }
        fn object_entries(&self) -> impl Iterator<Item = Result<(&'a str, Self)>> + '_ {
            self.0
                .as_object()
                .into_iter()
                .flatten()
                .map(|(k, v)| Ok((k.as_str(), Shifty(v, self.1, self.2))))
        }
        fn object_get(&self, key: &str) -> Result<Option<Self>> {
            Ok(self.0.get(key).map(|v| Shifty(v, self.1, self.2)))
        }
    }

    /// Tables written in one pass take their text back when a later row
    /// does not fit (expected texts from the reference 4.4.0's `encode`).
    #[test]
    fn one_pass_tables_roll_back() {
        let cases = [
            ("[{\"a\":1,\"b\":2},{\"a\":3}]", "[2]:\n  - a: 1\n    b: 2\n  - a: 3"),
            ("[{\"a\":1},{\"a\":{\"x\":1}}]", "[2]:\n  - a: 1\n  - a:\n      x: 1"),
            ("[{\"a\":1},2]", "[2]:\n  - a: 1\n  - 2"),
            ("[{\"a\":1,\"b\":2},{\"b\":3,\"a\":4}]", "[2]{a,b}:\n  1,2\n  4,3"),
            ("{\"k\":[{\"a\":1},{\"a\":[1]}],\"z\":1}", "k[2]:\n  - a: 1\n  - a[1]: 1\nz: 1"),
            ("[{\"x\":[{\"a\":1},{\"b\":2}],\"y\":[{\"a\":1},{\"a\":2}]}]", "[1]:\n  - x[2]:\n      - a: 1\n      - b: 2\n    y[2]{a}:\n      1\n      2"),
            ("[{\"a\":1},{\"a\":1,\"b\":2}]", "[2]:\n  - a: 1\n  - a: 1\n    b: 2"),
            ("{\"t\":[{\"a\":\"x\"},{\"b\":\"y\"}]}", "t[2]:\n  - a: x\n  - b: y"),
            ("[{\"a\":1},{\"a\":{}}]", "[2]:\n  - a: 1\n  - a:"),
            ("[{\"a\":{\"p\":1}},{\"a\":2}]", "[2]:\n  - a:\n      p: 1\n  - a: 2"),
            ("[{\"a\":1},[1]]", "[2]:\n  - a: 1\n  - [1]: 1"),
            ("[{\"a\":{\"x\":1}},{\"a\":{\"y\":1}}]", "[2]:\n  - a:\n      x: 1\n  - a:\n      y: 1"),
            ("[{\"a\":{\"x\":1},\"b\":2},{\"a\":{\"x\":3},\"b\":4}]", "[2]{a{x},b}:\n  1,2\n  3,4"),
            ("[{\"a\":{\"x\":1}},{\"a\":{\"x\":{\"z\":1}}}]", "[2]:\n  - a:\n      x: 1\n  - a:\n      x:\n        z: 1"),
            ("[{\"a\":{\"x\":{\"z\":1}}},{\"a\":{\"x\":{\"z\":2}}}]", "[2]{a{x{z}}}:\n  1\n  2"),
            ("[{\"a\":{\"x\":1}},{\"a\":{}}]", "[2]:\n  - a:\n      x: 1\n  - a:"),
            ("[{\"a\":{\"x\":1,\"y\":2}},{\"a\":{\"y\":3,\"x\":4}}]", "[2]{a{x,y}}:\n  1,2\n  4,3"),
            ("[{\"a\":{\"x\":1}},{\"a\":{\"x\":1,\"y\":2}}]", "[2]:\n  - a:\n      x: 1\n  - a:\n      x: 1\n      y: 2"),
            ("[{\"a\":{\"x\":1}},{\"a\":5}]", "[2]:\n  - a:\n      x: 1\n  - a: 5"),
            ("[{\"k\":[{\"a\":{\"b\":1},\"c\":2}]}]", "[1]:\n  - k[1]{a{b},c}:\n      1,2"),
        ];
        for (input, expected) in cases {
            let v: serde_json::Value = serde_json::from_str(input).expect("json");
            assert_eq!(enc(v), expected, "{input}");
        }
    }

    /// Objects with array-index keys make the walk start over with keys
    /// scanned first (expected texts from the reference 4.4.0's `encode`).
    #[test]
    fn index_keys_restart_the_walk() {
        let cases = [
            ("{\"a\":{\"b\":1,\"1\":2,\"0\":3},\"2\":\"x\"}", "\"2\": x\na:\n  \"0\": 3\n  \"1\": 2\n  b: 1"),
            ("[{\"x\":1,\"10\":2,\"9\":3},{\"y\":{\"b\":1,\"0\":[1,2]}}]", "[2]:\n  - \"9\": 3\n    \"10\": 2\n    x: 1\n  - y:\n      \"0\"[2]: 1,2\n      b: 1"),
            ("{\"k\":[{\"b\":1,\"0\":2},{\"b\":3,\"0\":4}]}", "k[2]{\"0\",b}:\n  2,1\n  4,3"),
            ("{\"01\":1,\"4294967295\":2,\"4294967294\":3,\"z\":4}", "\"4294967294\": 3\n\"01\": 1\n\"4294967295\": 2\nz: 4"),
            ("{\"a\":{\"b\":{\"c\":{\"5\":1,\"d\":2}}},\"e\":[{\"f\":{\"3\":1,\"g\":2}}]}", "a:\n  b:\n    c:\n      \"5\": 1\n      d: 2\ne[1]{f{\"3\",g}}:\n  1,2"),
        ];
        for (input, expected) in cases {
            let v: serde_json::Value = serde_json::from_str(input).expect("json");
            assert_eq!(enc(v), expected, "{input}");
        }
    }

    /// `json_into` writes what `JSON.stringify(JSON.parse(input))` does
    /// (expected texts from Node 20).
    #[test]
    fn json_into_writes_json_stringify_text() {
        let cases = [
            (r#"{"a":{"b":1,"1":2,"0":3},"2":"x"}"#, r#"{"2":"x","a":{"0":3,"1":2,"b":1}}"#),
            (
                r#"[1.5,-0,1e21,1e-7,123456789012345680000,0.1,-2.5e-300,"q\"\\\n\u0001\u001f\u007f\u2028é😀",true,false,null,[],{}]"#,
                "[1.5,0,1e+21,1e-7,123456789012345680000,0.1,-2.5e-300,\"q\\\"\\\\\\n\\u0001\\u001f\u{7f}\u{2028}é😀\",true,false,null,[],{}]",
            ),
            (r#"{"4294967294":3,"01":1,"4294967295":2,"z":[{"y":{}}]}"#, r#"{"4294967294":3,"01":1,"4294967295":2,"z":[{"y":{}}]}"#),
        ];
        for (input, expected) in cases {
            let v: serde_json::Value = serde_json::from_str(input).expect("json");
            let mut out = Vec::new();
            json_into(&&v, &mut out).expect("json_into");
            assert_eq!(String::from_utf8(out).expect("utf-8"), expected, "{input}");
        }
        let mut deep = serde_json::Value::Null;
        for _ in 0..MAX_DEPTH + 1 {
            deep = serde_json::Value::Array(vec![deep]);
        }
        let e = json_into(&&deep, &mut Vec::new()).expect_err("too deep");
        assert_eq!(e.code(), "TOON_TOO_DEEP");
    }

    #[test]
    fn changing_values_fail_cleanly() {
        // Whenever the change happens, the encoder writes what it sees or
        // fails cleanly; some change points fall between a check and the
        // write that relies on it.
        let v = json!([{"a": "x"}, {"a": "y"}, {"a": {"b": "z"}}, ["p", "q"]]);
        let mut changed = 0;
        for after in 0..40 {
            let calls = std::cell::Cell::new(0);
            match encode(&Shifty(&v, &calls, after), &EncodeOptions::default()) {
                Ok(_) => {}
                Err(e) => {
                    assert_eq!(e.code(), "TOON_VALUE_CHANGED");
                    changed += 1;
                }
            }
        }
        assert!(changed > 0, "no change point was caught");
    }

    fn reindent(text: &str, from: usize, to: usize) -> String {
        text.split('\n')
            .map(|l| {
                let n = l.len() - l.trim_start_matches(' ').len();
                format!("{}{}", " ".repeat(n / from * to), &l[n..])
            })
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// Null, booleans, integers, any double and strings matching `strings`.
    fn arb_primitive(strings: &'static str) -> impl proptest::strategy::Strategy<Value = serde_json::Value> + Clone {
        use proptest::prelude::*;
        prop_oneof![
            Just(serde_json::Value::Null),
            any::<bool>().prop_map(serde_json::Value::Bool),
            any::<i64>().prop_map(|i| json!(i)),
            any::<f64>().prop_map(|f| json!(f)),
            strings.prop_map(serde_json::Value::String),
        ]
    }

    fn arb_json() -> impl proptest::strategy::Strategy<Value = serde_json::Value> {
        use proptest::prelude::*;
        arb_primitive("[ a-c1:,|\"\\-#\t\n\u{1}é]{0,6}").prop_recursive(5, 64, 6, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..5).prop_map(serde_json::Value::Array),
                proptest::collection::vec(("[a-c]|[a-c1. ]{0,3}", inner), 0..5)
                    .prop_map(|e| serde_json::Value::Object(e.into_iter().collect())),
            ]
        })
    }

    /// A `serde_json::Value` that offers [`EncodeValue::rendered_table`]
    /// for every array it can (as the Node binding's packed reader does),
    /// written ahead with `tables`' delimiter.
    #[derive(Clone, Copy)]
    struct Rendered<'a> {
        v: &'a serde_json::Value,
        tables: &'a Tables,
    }

    /// The rendered rows by the address of their array, and the delimiter.
    struct Tables(std::collections::HashMap<usize, (String, Vec<u32>, usize)>, Delimiter);

    impl Tables {
        fn new(v: &serde_json::Value, delimiter: Delimiter) -> Tables {
            let mut t = Tables(Default::default(), delimiter);
            t.render(v);
            t
        }

        fn render(&mut self, v: &serde_json::Value) {
            match v {
                serde_json::Value::Array(rows) => {
                    rows.iter().for_each(|r| self.render(r));
                    let Some(first) = rows.first() else { return };
                    if !rows.iter().all(|r| same_shape(r, first)) {
                        return;
                    }
                    let cells = CellWriter::new(self.1);
                    let (mut text, mut ends, mut columns) = (String::new(), Vec::new(), 0);
                    for row in rows {
                        let start = text.len();
                        columns = write_leaves(row, &cells, &mut text, &mut true);
                        debug_assert!(text.len() >= start);
                        ends.push(text.len() as u32);
                    }
                    self.0.insert(v as *const _ as usize, (text, ends, columns));
                }
                serde_json::Value::Object(m) => m.values().for_each(|v| self.render(v)),
                _ => {}
            }
        }
    }

    /// Whether `row` is a table row of `first`'s shape: non-empty objects
    /// with the same keys (no array index) in the same order, holding
    /// primitives or (field groups) such objects in the same places.
    fn same_shape(row: &serde_json::Value, first: &serde_json::Value) -> bool {
        let (Some(r), Some(f)) = (row.as_object(), first.as_object()) else { return false };
        !f.is_empty()
            && r.len() == f.len()
            && r.iter().zip(f).all(|((rk, rv), (fk, fv))| {
                rk == fk
                    && array_index(rk).is_none()
                    && match (rv, fv) {
                        (serde_json::Value::Object(_), serde_json::Value::Object(_)) => same_shape(rv, fv),
                        (serde_json::Value::Array(_), _) | (_, serde_json::Value::Array(_)) => false,
                        (serde_json::Value::Object(_), _) | (_, serde_json::Value::Object(_)) => false,
                        _ => true,
                    }
            })
    }

    /// Writes the primitives of a row, depth first; their number.
    fn write_leaves(row: &serde_json::Value, cells: &CellWriter, out: &mut String, first: &mut bool) -> usize {
        match row {
            serde_json::Value::Object(m) => m.values().map(|v| write_leaves(v, cells, out, first)).sum(),
            v => {
                if !std::mem::replace(first, false) {
                    cells.delimit(out);
                }
                cells.primitive(out, &v.kind().unwrap()).unwrap();
                1
            }
        }
    }

    impl<'a> EncodeValue<'a> for Rendered<'a> {
        type Error = Error;
        fn kind(&self) -> Result<Kind<'_>> {
            self.v.kind()
        }
        fn array_len(&self) -> usize {
            self.v.array_len()
        }
        fn array_items(&self) -> impl Iterator<Item = Result<Self>> + '_ {
            self.v.as_array().into_iter().flatten().map(|v| Ok(Rendered { v, ..*self }))
        }
        fn object_len(&self) -> usize {
            self.v.object_len()
        }
        fn object_entries(&self) -> impl Iterator<Item = Result<(&'a str, Self)>> + '_ {
            let map: Option<&'a serde_json::Map<String, serde_json::Value>> = self.v.as_object();
            map.into_iter().flatten().map(|(k, v)| Ok((k.as_str(), Rendered { v, ..*self })))
        }
        fn object_get(&self, key: &str) -> Result<Option<Self>> {
            Ok(self.v.as_object().and_then(|m| m.get(key)).map(|v| Rendered { v, ..*self }))
        }
        fn rendered_table(&self) -> Option<RenderedTable<'_>> {
            let (text, ends, columns) = self.tables.0.get(&(self.v as *const _ as usize))?;
            Some(RenderedTable { columns: *columns, delimiter: self.tables.1, text, row_ends: ends })
        }
    }

    fn arb_rows() -> impl proptest::strategy::Strategy<Value = serde_json::Value> {
        use proptest::prelude::*;
        // Mostly primitives; now and then a container, so that some arrays
        // are not tables.
        let primitive = arb_primitive("[ a1:,|\"\t-]{0,4}");
        let cell = prop_oneof![
            5 => primitive.clone(),
            1 => Just(json!({})),
            1 => Just(json!([1])),
            // Field groups, mostly of one shape.
            2 => (primitive.clone(), primitive.clone()).prop_map(|(x, y)| json!({"g": x, "h": {"i": y}})),
            1 => primitive.prop_map(|x| json!({"g": x})),
        ];
        let keys = proptest::sample::subsequence(vec!["a", "b", "1", "c d", ""], 0..4);
        (keys, proptest::collection::vec(proptest::collection::vec(cell, 4), 0..4), 0usize..4).prop_map(|(keys, rows, context)| {
            let rows: Vec<serde_json::Value> = rows
                .into_iter()
                .map(|cells| serde_json::Value::Object(keys.iter().zip(cells).map(|(k, v)| (k.to_string(), v)).collect()))
                .collect();
            let table = serde_json::Value::Array(rows);
            match context {
                0 => table,
                1 => json!({"t": table, "n": 1}),
                2 => json!([table, 1]),
                _ => json!([{"first": table, "then": 2}]),
            }
        })
    }

    proptest::proptest! {
        /// Tables written from `rendered_table` are the tables the rows
        /// give; rows rendered with another delimiter are walked instead.
        #[test]
        fn rendered_tables_write_what_the_rows_do(
            v in arb_rows(),
            pipe in proptest::bool::ANY,
            rendered_pipe in proptest::bool::ANY,
            folding in proptest::bool::ANY,
        ) {
            let delimiter = |pipe| if pipe { Delimiter::Pipe } else { Delimiter::Comma };
            let opts = EncodeOptions {
                delimiter: delimiter(pipe),
                key_folding: if folding { KeyFolding::Safe } else { KeyFolding::Off },
                ..EncodeOptions::default()
            };
            let tables = Tables::new(&v, delimiter(rendered_pipe));
            proptest::prop_assert_eq!(encode(&Rendered { v: &v, tables: &tables }, &opts), encode_value(&v, &opts));
        }
    }

    #[test]
    fn rendered_rows_are_copied_as_they_are() {
        // Rows that differ from the values show which the encoder wrote.
        let v = json!({"t": [{"a": 1, "b": "x"}, {"a": 2, "b": "y"}]});
        let mut tables = Tables::new(&v, Delimiter::Comma);
        let (text, ends, _) = tables.0.values_mut().next().unwrap();
        assert_eq!((text.as_str(), ends.as_slice()), ("1,x2,y", &[3, 6][..]));
        *text = "9,\"q\"8,z".to_owned();
        *ends = vec![5, 8];
        let opts = EncodeOptions::default();
        assert_eq!(encode(&Rendered { v: &v, tables: &tables }, &opts).unwrap(), "t[2]{a,b}:\n  9,\"q\"\n  8,z");
        // A row end beyond the text: an error, not a panic.
        tables.0.values_mut().next().unwrap().1 = vec![5, 99];
        assert!(encode(&Rendered { v: &v, tables: &tables }, &opts).is_err());
        // A row count other than the array's: the rows are walked.
        tables.0.values_mut().next().unwrap().1 = vec![5];
        assert_eq!(encode(&Rendered { v: &v, tables: &tables }, &opts).unwrap(), "t[2]{a,b}:\n  1,x\n  2,y");
    }

    proptest::proptest! {
        /// Content never starts with a space, so the indent option only
        /// scales each line's leading spaces; lines never end in a newline
        /// or carry a raw control character other than a tab delimiter.
        #[test]
        fn indent_only_scales_leading_spaces(
            v in arb_json(),
            pipe in proptest::bool::ANY,
            folding in proptest::bool::ANY,
            flatten_depth in 0usize..5,
        ) {
            let mut opts = EncodeOptions {
                delimiter: if pipe { Delimiter::Pipe } else { Delimiter::Tab },
                indent: 2,
                key_folding: if folding { KeyFolding::Safe } else { KeyFolding::Off },
                flatten_depth: if flatten_depth == 4 { usize::MAX } else { flatten_depth },
            };
            let two = encode_value(&v, &opts).expect("encodes");
            opts.indent = 4;
            let four = encode_value(&v, &opts).expect("encodes");
            proptest::prop_assert_eq!(reindent(&two, 2, 4), four);
            proptest::prop_assert!(!two.ends_with('\n'));
            proptest::prop_assert!(!two.bytes().any(|b| b < 0x20 && b != b'\n' && b != b'\t'));
        }
    }
}

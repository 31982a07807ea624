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
use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::vec::Drain;

use crate::error::{Error, Format, Result};
use crate::json::{Builder, QuickNumber, ValueBuilder};

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

#[cold]
fn utf8_error(bytes: &[u8], bad: usize) -> Error {
    let before = bytes.get(..bad).unwrap_or_default();
    let line_start = before.iter().rposition(|&c| c == b'\n').map_or(0, |i| i + 1);
    let line = before.iter().filter(|&&c| c == b'\n').count() + 1;
    // The prefix up to `bad` is valid UTF-8 by definition of valid_up_to.
    let column = std::str::from_utf8(before.get(line_start..).unwrap_or_default()).map_or(1, |s| s.chars().count() + 1);
    let found = bytes.get(bad).copied().unwrap_or(0);
    Error::new(
        Format::Toon,
        "TOON_INVALID_UTF8",
        format!("invalid UTF-8 byte 0x{found:02x} (expected UTF-8 text)"),
    )
    .at_line(line, Some(column))
}

mod events;
mod stream;
pub use events::{decode_events, Event, Input, Primitive, Progress};
pub use stream::{JsonStream, JsonWriter, StreamDecoder, Utf8Decoder};

// ---------------------------------------------------------------- lines

/// One significant line (not blank, not a comment).
#[derive(Clone, Copy, Debug)]
struct Line<'a> {
    /// The line without indentation and trailing spaces (for a list item,
    /// what follows `- `).
    content: &'a str,
    /// Byte offset of the line's first byte (after a BOM), for columns.
    raw_start: usize,
    depth: usize,
    /// 1-based, counting every line of the text.
    number: usize,
}

/// Splits the text into lines on demand, as the reference's scanner does:
/// `\n` separates lines, one trailing `\r` is dropped, a BOM is skipped on
/// line 1, comment lines (`#` after spaces only) and blank lines are skipped
/// (blank ones remembered in strict mode for the blank-line rule).
struct Reader<'a> {
    text: &'a str,
    /// Start of the next unread line; past the end once all are read.
    pos: usize,
    number: usize,
    peeked: Option<Line<'a>>,
    /// The last line consumed by `next`.
    last: Option<Line<'a>>,
    /// Line numbers of blank lines seen so far (strict mode only), ascending.
    blanks: Vec<usize>,
    indent: usize,
    strict: bool,
    /// The text is the lines of a stream read so far, and more may follow:
    /// reading past its last line is [`need_more`], not the end.
    more: bool,
    /// Offsets of `\n` bytes that do not end a line, ascending (a stream's
    /// lines given one by one may hold `\n`, which the reference keeps in
    /// the line: [`StreamDecoder::push_line`]); those before `pos` are
    /// dropped as lines are read. Empty for a text.
    joins: &'a [usize],
}

/// The error a decoder of a stream's lines so far stops with when it needs
/// a line that has not come yet ([`NEED_MORE`]).
#[cold]
fn need_more(line: usize) -> Error {
    Error::new(Format::Toon, NEED_MORE, "expected more lines (the stream has not ended)").at_line(line + 1, None)
}

/// The code of [`need_more`]'s error.
pub(crate) const NEED_MORE: &str = "TOON_NEED_MORE";

impl<'a> Reader<'a> {
    /// The next line, read once and then held until consumed (the decoder
    /// peeks at each line a few times).
    #[inline]
    fn peek(&mut self) -> Result<Option<Line<'a>>> {
        if let Some(line) = self.peeked {
            return Ok(Some(line));
        }
        self.peeked = self.scan()?;
        Ok(self.peeked)
    }

    #[inline]
    fn next(&mut self) -> Result<Option<Line<'a>>> {
        let line = self.peek()?;
        self.peeked = None;
        if line.is_some() {
            self.last = line;
        }
        Ok(line)
    }

    #[inline(never)]
    fn scan(&mut self) -> Result<Option<Line<'a>>> {
        let text = self.text;
        let bytes = text.as_bytes();
        loop {
            if self.pos > bytes.len() {
                return if self.more { Err(need_more(self.number)) } else { Ok(None) };
            }
            let start = self.pos;
            let mut end = find_byte(bytes, start, b'\n').unwrap_or(bytes.len());
            if !self.joins.is_empty() {
                end = self.line_end(bytes, end);
            }
            self.pos = end + 1;
            self.number += 1;
            let mut s = start;
            let mut e = end;
            if self.number == 1 && bytes.get(s..e).is_some_and(|l| l.starts_with("\u{feff}".as_bytes())) {
                s += 3;
            }
            if e > s && bytes.get(e - 1) == Some(&b'\r') {
                e -= 1;
            }
            // Leading spaces (most indentation) eight at a time: the first
            // byte that is no space is the lowest nonzero byte of the word
            // XOR eight spaces. Then byte by byte, with tabs counted.
            let mut ws = s;
            while let Some(chunk) = bytes.get(ws..e).and_then(<[u8]>::first_chunk::<8>) {
                let other = u64::from_le_bytes(*chunk) ^ u64::from_le_bytes([b' '; 8]);
                if other != 0 {
                    ws += (other.trailing_zeros() / 8) as usize;
                    break;
                }
                ws += 8;
            }
            let mut first_tab = None;
            let mut tabs = 0;
            while ws < e {
                match bytes.get(ws) {
                    Some(b' ') => {}
                    Some(b'\t') => {
                        first_tab.get_or_insert(ws - s);
                        tabs += 1;
                    }
                    _ => break,
                }
                ws += 1;
            }
            // Strict mode measures indentation up to the first tab (and
            // rejects the line below); non-strict mode counts each tab as
            // one level and the spaces in units of `indent`.
            let indent = match (self.strict, first_tab) {
                (true, Some(t)) => t,
                _ => ws - s,
            };
            let tab_indent = if self.strict { 0 } else { tabs };
            let cs = s + indent;
            let mut ce = e;
            while ce > cs && bytes.get(ce - 1) == Some(&b' ') {
                ce -= 1;
            }
            if first_tab.is_none() && cs < ce && bytes.get(cs) == Some(&b'#') {
                continue; // comment line
            }
            // (Two spaces per level, the default, without a division.)
            let spaces = indent - tab_indent;
            let depth = if self.indent == 2 { spaces >> 1 } else { spaces / self.indent } + tab_indent;
            if cs == ce {
                if self.strict {
                    self.blanks.push(self.number);
                }
                continue;
            }
            if self.strict {
                if let Some(t) = first_tab {
                    return Err(Error::new(
                        Format::Toon,
                        "TOON_TAB_INDENT",
                        "Tabs are not allowed in indentation in strict mode (expected spaces)",
                    )
                    .at_line(self.number, Some(t + 1)));
                }
                if indent > 0 && depth * self.indent != indent {
                    return Err(Error::new(
                        Format::Toon,
                        "TOON_INDENTATION",
                        format!("Indentation must be exact multiple of {}, but found {indent} spaces", self.indent),
                    )
                    .at_line(self.number, Some(indent + 1)));
                }
            }
            let content = text.get(cs..ce).unwrap_or_default();
            return Ok(Some(Line { content, raw_start: s, depth, number: self.number }));
        }
    }

    /// The end of the line whose first `\n` is at `end`: the first `\n`
    /// from there that is no join.
    #[cold]
    fn line_end(&mut self, bytes: &[u8], mut end: usize) -> usize {
        while let Some((&j, rest)) = self.joins.split_first() {
            if j < end {
                self.joins = rest;
            } else if j == end {
                self.joins = rest;
                end = find_byte(bytes, end + 1, b'\n').unwrap_or(bytes.len());
            } else {
                break;
            }
        }
        end
    }

    /// The first blank line strictly between lines `start` and `end`.
    fn blank_between(&self, start: usize, end: usize) -> Option<usize> {
        let i = self.blanks.partition_point(|&n| n <= start);
        self.blanks.get(i).copied().filter(|&n| n < end)
    }
}

/// Index of the first `needle` at or after `from`.
#[inline]
fn find_byte(hay: &[u8], from: usize, needle: u8) -> Option<usize> {
    find2(hay.get(from..)?, needle, needle).map(|p| p + from)
}

/// How far [`find2`] looks a word at a time before handing over to
/// `memchr`.
const SHORT_SEARCH: usize = 32;

/// Index of the first `a` or `b` in `hay`. Lines, keys and cells are
/// mostly short, and on a few dozen bytes `memchr`'s setup costs more than
/// the search: the first [`SHORT_SEARCH`] bytes are looked at eight at a
/// time here (a word XOR the repeated byte has a zero byte where it
/// matched; the lowest flagged byte of the classic test is a true one).
#[inline]
fn find2(hay: &[u8], a: u8, b: u8) -> Option<usize> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    let n = hay.len();
    if n < 8 {
        return hay.iter().position(|&c| c == a || c == b);
    }
    let (pa, pb) = (ONES * u64::from(a), ONES * u64::from(b));
    let matches = |at: usize| {
        let w = hay.get(at..).and_then(<[u8]>::first_chunk::<8>).map_or(0, |c| u64::from_le_bytes(*c));
        let zero = |x: u64| x.wrapping_sub(ONES) & !x & HIGHS;
        zero(w ^ pa) | zero(w ^ pb)
    };
    let mut i = 0;
    while i + 8 <= n.min(SHORT_SEARCH) {
        let m = matches(i);
        if m != 0 {
            return Some(i + (m.trailing_zeros() / 8) as usize);
        }
        i += 8;
    }
    if n <= SHORT_SEARCH {
        if i == n {
            return None;
        }
        // The last eight bytes, overlapping those already looked at.
        let j = n - 8;
        let m = matches(j) & (!0u64 << ((i - j) * 8));
        return (m != 0).then(|| j + (m.trailing_zeros() / 8) as usize);
    }
    let rest = hay.get(i..)?;
    if a == b { memchr::memchr(a, rest) } else { memchr::memchr2(a, b, rest) }.map(|p| p + i)
}

// ---------------------------------------------------------------- tokens

/// An error found by a token-level helper: where it is (an address inside
/// the text), turned into a line and column by the decoder.
struct Syn {
    code: &'static str,
    msg: String,
    at: usize,
}

#[cold]
fn syn(code: &'static str, msg: impl Into<String>, s: &str, i: usize) -> Syn {
    Syn { code, msg: msg.into(), at: s.as_ptr() as usize + i }
}

/// `s[a..b]` for indices the scanners found on ASCII bytes (always char
/// boundaries); never panics.
#[inline]
fn sub(s: &str, a: usize, b: usize) -> &str {
    debug_assert!(s.is_char_boundary(a) && s.is_char_boundary(b), "slice {a}..{b} of {s:?}");
    s.get(a..b).unwrap_or_default()
}

#[inline]
fn from(s: &str, a: usize) -> &str {
    sub(s, a, s.len())
}

/// Trim ASCII spaces only (not tabs, not other whitespace). (A byte loop:
/// `trim_matches(' ')` goes through the generic char searcher, which shows
/// up in profiles since every token passes here.)
#[inline]
fn trim_spaces(s: &str) -> &str {
    let b = s.as_bytes();
    let mut start = 0;
    let mut end = b.len();
    while start < end && b[start] == b' ' {
        start += 1;
    }
    while end > start && b[end - 1] == b' ' {
        end -= 1;
    }
    sub(s, start, end)
}

/// Trim spaces and tabs (for the text quoted in header messages).
fn trim_ws(s: &str) -> &str {
    s.trim_matches([' ', '\t'])
}

/// Index of the `"` closing the quote at `start`; `\` skips the next byte.
fn find_closing_quote(s: &[u8], start: usize) -> Option<usize> {
    let mut i = start + 1;
    while i < s.len() {
        match s[i] {
            b'\\' if i + 1 < s.len() => i += 2,
            b'"' => return Some(i),
            _ => i += 1,
        }
    }
    None
}

/// Index of the first `ch` at or after `start` outside `"..."` sections
/// (quote state starts closed at `start`; inside quotes `\` skips the next
/// byte). `ch` is never `"` or `\`. Jumps from quote to quote with
/// `memchr` rather than looking at every byte.
fn find_unquoted(s: &[u8], ch: u8, start: usize) -> Option<usize> {
    debug_assert!(ch != b'"' && ch != b'\\');
    let mut i = start;
    loop {
        let j = i + find2(s.get(i..)?, ch, b'"')?;
        if s.get(j) == Some(&ch) {
            return Some(j);
        }
        i = quoted_end(s, j + 1)?;
    }
}

/// Index after the `"` closing a quoted section whose inside starts at
/// `i` (`\` skips the next byte); `None` when it is not closed.
#[inline]
fn quoted_end(s: &[u8], mut i: usize) -> Option<usize> {
    loop {
        let j = i + find2(s.get(i..)?, b'"', b'\\')?;
        if s.get(j) == Some(&b'"') {
            return Some(j + 1);
        }
        // A backslash: skip it and the byte after it (a last backslash
        // just ends the text).
        i = j + 2;
        if i > s.len() {
            return None;
        }
    }
}

/// Index of the `}` matching the `{` at `start`, braces in quotes ignored.
fn find_matching_brace(s: &[u8], start: usize) -> Option<usize> {
    let mut depth: isize = 0;
    let mut i = start;
    loop {
        let j = i + memchr::memchr3(b'{', b'}', b'"', s.get(i..)?)?;
        match s.get(j) {
            Some(b'{') => depth += 1,
            Some(b'}') => {
                depth -= 1;
                if depth == 0 {
                    return Some(j);
                }
            }
            _ => {
                i = quoted_end(s, j + 1)?;
                continue;
            }
        }
        i = j + 1;
    }
}

fn is_array_header_content(content: &str) -> bool {
    trim_spaces(content).starts_with('[') && find_unquoted(content.as_bytes(), b':', 0).is_some()
}

fn is_key_value_content(content: &str) -> bool {
    find_unquoted(content.as_bytes(), b':', 0).is_some()
}

/// A tabular row (rather than a `key: value` line): no unquoted colon, or
/// a delimiter before the first one. One scan that stops at whichever of
/// the two comes first.
fn is_data_row(content: &str, delim: u8) -> bool {
    let s = content.as_bytes();
    let mut in_quotes = false;
    let mut i = 0;
    while i < s.len() {
        let c = s[i];
        if c == b'\\' && in_quotes && i + 1 < s.len() {
            i += 2;
            continue;
        }
        if c == b'"' {
            in_quotes = !in_quotes;
        } else if !in_quotes {
            if c == delim {
                return true;
            }
            if c == b':' {
                return false;
            }
        }
        i += 1;
    }
    true
}

/// Split a tabular row into its cells in `out` (cleared first), as
/// [`Cells`] does; false (`out` then unspecified) when the line is no row
/// but a `key: value` line, as [`is_data_row`] tells: an unquoted colon
/// before the first delimiter. One scan for both.
fn split_row<'a>(content: &'a str, delim: u8, out: &mut Vec<&'a str>) -> bool {
    out.clear();
    let s = content.as_bytes();
    if s.is_empty() {
        return true;
    }
    let mut start = 0;
    let mut i = 0;
    while let Some(j) = find_row_byte(s, i, delim) {
        match s.get(j) {
            Some(&c) if c == delim => {
                out.push(sub(content, start, j));
                start = j + 1;
                i = j + 1;
            }
            Some(b':') => {
                if out.is_empty() {
                    return false;
                }
                i = j + 1;
            }
            // A quote: skip to its end (an unclosed one runs to the end of
            // the line, where no delimiter counts).
            _ => match quoted_end(s, j + 1) {
                Some(k) => i = k,
                None => break,
            },
        }
    }
    out.push(from(content, start));
    true
}

/// A cell of a row read by [`plain_cells`]: a number literal (read as it
/// was found) or any other token, untrimmed.
#[derive(Clone, Copy)]
enum PlainCell<'a> {
    Number(&'a str, NumberPrefix),
    Token(&'a str),
}

/// [`split_row`] in one pass that also reads each number as it finds it
/// (most cells of most tables): the same cells in `out`, and false for a
/// `key: value` line.
fn plain_cells<'a>(content: &'a str, delim: u8, out: &mut Vec<PlainCell<'a>>) -> bool {
    out.clear();
    let s = content.as_bytes();
    if s.is_empty() {
        return true;
    }
    let mut i = 0;
    loop {
        // A number right up to a delimiter or the end of the line.
        if let Some(n) = number_prefix(s.get(i..).unwrap_or_default()) {
            let end = i + n.end;
            match s.get(end) {
                None => {
                    out.push(PlainCell::Number(from(content, i), n));
                    return true;
                }
                Some(&c) if c == delim => {
                    out.push(PlainCell::Number(sub(content, i, end), n));
                    i = end + 1;
                    continue;
                }
                _ => {}
            }
        }
        // Any other cell: up to the next delimiter outside quotes (a colon
        // before the first one makes the line no row; an unclosed quote
        // runs to the end of the line).
        let mut j = i;
        loop {
            let Some(k) = find_row_byte(s, j, delim) else {
                out.push(PlainCell::Token(from(content, i)));
                return true;
            };
            match s.get(k) {
                Some(&c) if c == delim => {
                    out.push(PlainCell::Token(sub(content, i, k)));
                    i = k + 1;
                    break;
                }
                Some(b':') if out.is_empty() => return false,
                Some(b':') => j = k + 1,
                _ => match quoted_end(s, k + 1) {
                    Some(e) => j = e,
                    None => {
                        out.push(PlainCell::Token(from(content, i)));
                        return true;
                    }
                },
            }
        }
    }
}

/// The first `delim`, `"` or `:` at or after `i`: eight bytes at a time
/// (for each of the three, a word with a zero byte where the text has it;
/// the lowest flag is exact), then byte by byte.
#[inline(always)]
fn find_row_byte(s: &[u8], mut i: usize, delim: u8) -> Option<usize> {
    const ONES: u64 = u64::from_le_bytes([0x01; 8]);
    const HIGHS: u64 = u64::from_le_bytes([0x80; 8]);
    let zero_byte = |v: u64| v.wrapping_sub(ONES) & !v & HIGHS;
    let (d, q, c) = (u64::from(delim) * ONES, u64::from(b'"') * ONES, u64::from(b':') * ONES);
    while let Some(chunk) = s.get(i..).and_then(<[u8]>::first_chunk::<8>) {
        let x = u64::from_le_bytes(*chunk);
        let hit = zero_byte(x ^ d) | zero_byte(x ^ q) | zero_byte(x ^ c);
        if hit != 0 {
            return Some(i + (hit.trailing_zeros() / 8) as usize);
        }
        i += 8;
    }
    while let Some(&c) = s.get(i) {
        if c == delim || c == b'"' || c == b':' {
            return Some(i);
        }
        i += 1;
    }
    None
}

/// The cells of a delimited row: split at unquoted delimiters; an empty
/// row has no cell. Cells are returned untrimmed.
struct Cells<'a> {
    s: &'a str,
    pos: usize,
    done: bool,
    delim: u8,
}

impl<'a> Cells<'a> {
    fn new(s: &'a str, delim: u8) -> Self {
        Cells { s, pos: 0, done: s.is_empty(), delim }
    }
}

impl<'a> Iterator for Cells<'a> {
    type Item = &'a str;
    fn next(&mut self) -> Option<&'a str> {
        if self.done {
            return None;
        }
        let start = self.pos;
        match find_unquoted(self.s.as_bytes(), self.delim, start) {
            Some(i) => {
                self.pos = i + 1;
                Some(sub(self.s, start, i))
            }
            None => {
                self.done = true;
                Some(from(self.s, start))
            }
        }
    }
}

/// Resolve the escapes of a quoted string's inside (`\n \t \r \\ \"` and
/// `\uXXXX` outside the surrogate range), borrowing when there are none.
fn unescape<'s>(inner: &'s str, scratch: &'s mut String) -> Result<&'s str, Syn> {
    let b = inner.as_bytes();
    let Some(first) = find_byte(b, 0, b'\\') else { return Ok(inner) };
    scratch.clear();
    let mut run = 0;
    let mut i = first;
    while i < b.len() {
        if b[i] != b'\\' {
            i += 1;
            continue;
        }
        scratch.push_str(sub(inner, run, i));
        let Some(&next) = b.get(i + 1) else {
            return Err(syn(
                "TOON_INVALID_ESCAPE",
                "Invalid escape sequence: backslash at end of string (expected an escape character)",
                inner,
                i,
            ));
        };
        let ch = match next {
            b'n' => '\n',
            b't' => '\t',
            b'r' => '\r',
            b'\\' => '\\',
            b'"' => '"',
            b'u' => {
                let hex = b.get(i + 2..i + 6);
                match hex.and_then(parse_hex4) {
                    Some(unit) if !(0xD800..=0xDFFF).contains(&unit) => {
                        scratch.push(char::from_u32(unit).unwrap_or('\u{FFFD}'));
                        i += 6;
                        run = i;
                        continue;
                    }
                    _ => return Err(bad_unicode_escape(inner, i)),
                }
            }
            _ => {
                let c = from(inner, i + 1).chars().next().unwrap_or('\\');
                return Err(syn(
                    "TOON_INVALID_ESCAPE",
                    format!("Invalid escape sequence: \\{c} (expected one of \\n \\t \\r \\\\ \\\" \\uXXXX)"),
                    inner,
                    i,
                ));
            }
        };
        scratch.push(ch);
        i += 2;
        run = i;
    }
    scratch.push_str(from(inner, run));
    Ok(scratch.as_str())
}

fn parse_hex4(h: &[u8]) -> Option<u32> {
    let mut v = 0u32;
    for &c in h {
        v = v * 16 + (c as char).to_digit(16)?;
    }
    Some(v)
}

/// The reference's three messages for a bad `\u` escape at `i`, which
/// measure the four digits in UTF-16 units.
#[cold]
fn bad_unicode_escape(inner: &str, i: usize) -> Syn {
    let rest = from(inner, i + 2);
    let mut units = 0;
    let mut digits = String::new();
    for c in rest.chars() {
        if units >= 4 {
            break;
        }
        units += c.len_utf16();
        digits.push(if units > 4 { '\u{FFFD}' } else { c });
    }
    let msg = if units < 4 {
        format!("Invalid escape sequence: truncated \\u escape at \"\\u{digits}\" (expected 4 hex digits)")
    } else if digits.len() != 4 || !digits.bytes().all(|c| c.is_ascii_hexdigit()) {
        format!("Invalid escape sequence: \\u must be followed by 4 hex digits, got \"{digits}\"")
    } else {
        format!(
            "Invalid escape sequence: \\u{digits} is a lone surrogate. Supplementary code points MUST appear as literal UTF-8"
        )
    };
    syn("TOON_INVALID_ESCAPE", msg, inner, i)
}

/// The range of a quoted token's inside, checking it is one whole quoted
/// string (`token` starts with `"`).
fn quoted_inner(token: &str) -> Result<&str, Syn> {
    let b = token.as_bytes();
    let Some(close) = find_closing_quote(b, 0) else {
        return Err(syn(
            "TOON_UNTERMINATED_STRING",
            "Unterminated string: missing closing quote (expected '\"')",
            token,
            0,
        ));
    };
    if close != b.len() - 1 {
        return Err(syn(
            "TOON_TRAILING_CHARACTERS",
            "Unexpected characters after closing quote (expected the quoted string to end the token)",
            token,
            close + 1,
        ));
    }
    Ok(sub(token, 1, close))
}

/// A key or field name: a quoted string unescaped, or the trimmed token
/// taken literally (reference `parseStringLiteral`).
fn string_literal(token: &str) -> Result<Cow<'_, str>, Syn> {
    let t = trim_spaces(token);
    if !t.starts_with('"') {
        return Ok(Cow::Borrowed(t));
    }
    let inner = quoted_inner(t)?;
    let mut scratch = String::new();
    let s = unescape(inner, &mut scratch)?;
    if std::ptr::eq(s, inner) {
        Ok(Cow::Borrowed(inner))
    } else {
        Ok(Cow::Owned(scratch))
    }
}

/// The key at the start of a `key: ...` line and the index after its colon.
fn parse_key_token(content: &str) -> Result<(Cow<'_, str>, usize), Syn> {
    let b = content.as_bytes();
    if b.first() == Some(&b'"') {
        let Some(close) = find_closing_quote(b, 0) else {
            return Err(syn(
                "TOON_UNTERMINATED_STRING",
                "Unterminated quoted key (expected '\"')",
                content,
                0,
            ));
        };
        let inner = sub(content, 1, close);
        let mut scratch = String::new();
        let key = match unescape(inner, &mut scratch)? {
            s if std::ptr::eq(s, inner) => Cow::Borrowed(inner),
            _ => Cow::Owned(scratch),
        };
        let mut p = close + 1;
        while b.get(p) == Some(&b' ') {
            p += 1;
        }
        if b.get(p) != Some(&b':') {
            return Err(syn("TOON_MISSING_COLON", "Missing colon after key (expected ':')", content, p));
        }
        return Ok((key, p + 1));
    }
    let Some(colon) = find_unquoted(b, b':', 0) else {
        return Err(syn("TOON_MISSING_COLON", "Missing colon after key (expected ':')", content, b.len()));
    };
    Ok((Cow::Borrowed(trim_spaces(sub(content, 0, colon))), colon + 1))
}

/// The colon ending a plain key: `Some` when the content does not start
/// with a quote and its first `:`, `[` or `"` is a colon. Such a line is no
/// array header ([`parse_header`] gives `None`) and [`parse_key_token`]
/// takes the key up to that colon.
#[inline]
fn plain_key_colon(content: &str) -> Option<usize> {
    let b = content.as_bytes();
    if b.first() == Some(&b'"') {
        return None;
    }
    let i = b.iter().position(|&c| KEY_END[usize::from(c)])?;
    (b.get(i) == Some(&b':')).then_some(i)
}

/// `:`, `[` and `"`, for [`plain_key_colon`] (one lookup a byte).
static KEY_END: [bool; 256] = {
    let mut t = [false; 256];
    t[b':' as usize] = true;
    t[b'[' as usize] = true;
    t[b'"' as usize] = true;
    t
};

/// Does `t` match `-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?`? `Some(true)`
/// when it is an integer literal (no fraction, no exponent), with its
/// value when the same scan could read it exactly (see [`QuickNumber`]):
/// an integer of at most 18 digits, or a decimal without exponent whose
/// digits, read as one integer below 2^53, have at most 22 after the
/// point. That integer and the power of ten are then exact doubles, and
/// one IEEE division rounds their quotient correctly (Clinger's fast
/// path): the double `text.parse::<f64>()` gives. `-0` and `-0.0` give 0.
#[inline]
fn number_form(t: &[u8]) -> Option<(bool, Option<QuickNumber>)> {
    number_prefix(t).filter(|n| n.end == t.len()).map(|n| (n.integer, n.quick))
}

/// The longest prefix of `t` that is a number literal, as [`number_form`]
/// reads a whole token (a literal followed by anything else is read as far
/// as it goes: `1.` gives `1`, `1e` gives `1`, `05` gives `0`).
#[derive(Clone, Copy, Debug, PartialEq)]
struct NumberPrefix {
    end: usize,
    integer: bool,
    quick: Option<QuickNumber>,
}

#[inline]
fn number_prefix(t: &[u8]) -> Option<NumberPrefix> {
    let negative = t.first() == Some(&b'-');
    let start = usize::from(negative);
    // All digits are read into `m` (wrapping: it is only used when there
    // are at most 18, so below 10^18).
    let mut m: u64 = 0;
    let mut i = match t.get(start) {
        Some(b'0') => start + 1,
        Some(b'1'..=b'9') => read_digits(t, start, &mut m),
        _ => return None,
    };
    let int_digits = i - start;
    let mut fraction = 0;
    if t.get(i) == Some(&b'.') {
        let end = read_digits(t, i + 1, &mut m);
        if end > i + 1 {
            fraction = end - (i + 1);
            i = end;
        }
    }
    if matches!(t.get(i), Some(b'e' | b'E')) {
        let mut e = i + 1;
        if matches!(t.get(e), Some(b'+' | b'-')) {
            e += 1;
        }
        let end = read_digits(t, e, &mut 0);
        if end > e {
            return Some(NumberPrefix { end, integer: false, quick: None });
        }
    }
    let quick = if int_digits + fraction > 18 {
        None
    } else if fraction == 0 {
        // At most 18 digits: fits an i64.
        let v = m as i64;
        Some(QuickNumber::Int(if negative { -v } else { v }))
    } else if m < (1 << 53) {
        POW10.get(fraction).map(|&p| {
            let f = m as f64 / p;
            QuickNumber::Float(if negative && f != 0.0 { -f } else { f })
        })
    } else {
        None
    };
    Some(NumberPrefix { end: i, integer: fraction == 0, quick })
}

/// The index after the ASCII digits starting at `i`, accumulating them
/// into `m` (wrapping).
#[inline(always)]
fn read_digits(t: &[u8], mut i: usize, m: &mut u64) -> usize {
    while let Some(&c) = t.get(i) {
        let d = c.wrapping_sub(b'0');
        if d > 9 {
            break;
        }
        *m = m.wrapping_mul(10).wrapping_add(u64::from(d));
        i += 1;
    }
    i
}

/// Exact powers of ten as doubles (10^22 is the last one exact).
const POW10: [f64; 23] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19,
    1e20, 1e21, 1e22,
];

/// A number written the way JavaScript's `String(n)` writes it (for
/// declared lengths in messages).
fn js_number(n: f64) -> String {
    if n.is_infinite() {
        return "Infinity".into();
    }
    let mut out = Vec::new();
    crate::json::write_f64(&mut out, n);
    String::from_utf8(out).unwrap_or_default()
}

// ---------------------------------------------------------------- headers

/// One field of a tabular header, in a flat pre-order list: a field's
/// children follow it, up to `next`.
struct Field<'a> {
    name: Cow<'a, str>,
    /// Written in quotes (path expansion leaves it literal).
    quoted: bool,
    /// Index after this field's subtree (`index + 1` for a leaf).
    next: usize,
}

/// A parsed array header `key[N<:><delim>]{fields}: inline`.
struct Header<'a> {
    key: Option<Cow<'a, str>>,
    /// The key was written in quotes.
    key_quoted: bool,
    /// The declared length as the reference holds it (a double).
    length: f64,
    delim: u8,
    /// A field list is present (held in the [`FieldList`] given to
    /// [`parse_header`]; never empty).
    fields: bool,
    keyed: bool,
    inline: Option<&'a str>,
}

/// The field list of the last tabular header parsed. Arrays of objects that
/// each hold a table (orders with their items) repeat the same field list,
/// which is then parsed once: a header whose list is the same text, split
/// at the same delimiter, reuses it (its checks give the same outcome).
#[derive(Default)]
struct FieldList<'a> {
    /// The text between the braces and the delimiter it was split at
    /// (`None` until a list parses without error).
    src: Option<(&'a str, u8)>,
    fields: Vec<Field<'a>>,
    /// The first duplicate name, as [`duplicate_field`] finds it, when not
    /// the empty name.
    duplicate: Option<String>,
    /// Bumped at each new list (keys made for the fields follow it).
    generation: u64,
}

/// `Ok(None)` when the line is not an array header; an error when it is a
/// malformed one (reference `parseArrayHeaderLine` + `resolveArrayHeader`).
/// A field list goes to `list`.
/// The error for text in a header where nothing may stand: between the
/// bracket segment and `next` (its name and what is expected).
fn header_gap(content: &str, from: usize, to: usize, next: &str) -> Option<Syn> {
    let gap = sub(content, from, to);
    if gap.is_empty() {
        return None;
    }
    let t = trim_ws(gap);
    let what = if t.is_empty() { "whitespace".to_string() } else { format!("content \"{t}\"") };
    Some(syn("TOON_INVALID_HEADER", format!("Unexpected {what} between bracket segment and {next}"), content, from))
}

fn parse_header<'a>(content: &'a str, strict: bool, list: &mut FieldList<'a>) -> Result<Option<Header<'a>>, Syn> {
    let b = content.as_bytes();
    let bracket_start = if b.first() == Some(&b'"') {
        let Some(close) = find_closing_quote(b, 0) else { return Ok(None) };
        if b.get(close + 1) != Some(&b'[') {
            return Ok(None);
        }
        close + 1
    } else {
        // Most lines are `key: value`: when the first of `:`, `[` and `"`
        // is a colon (or there is none), no unquoted `[` comes before the
        // first unquoted colon, so the line is no header.
        if matches!(b.iter().find(|&&c| matches!(c, b':' | b'[' | b'"')), Some(b':') | None) {
            return Ok(None);
        }
        match find_unquoted(b, b'[', 0) {
            Some(i) => i,
            None => return Ok(None),
        }
    };
    match find_unquoted(b, b':', 0) {
        Some(c) if c >= bracket_start => {}
        _ => return Ok(None),
    }
    let invalid = |code, msg: String, at| Err(syn(code, msg, content, at));
    let Some(bracket_end) = find_unquoted(b, b']', bracket_start) else {
        return invalid(
            "TOON_INVALID_HEADER",
            "Unterminated bracket segment (expected ']')".into(),
            bracket_start,
        );
    };
    let mut brace_end = bracket_end + 1;
    // Only a `{` before the first colon after `]` can open a field list
    // (with a later one the colon below is that first colon, before it),
    // so it is looked for only up to there: an inline array's values are
    // not scanned for it.
    let brace_start = find_unquoted(b, b':', bracket_end)
        .and_then(|colon| find_unquoted(b.get(..colon).unwrap_or_default(), b'{', bracket_end));
    let mut matching_brace = None;
    if let Some(bs) = brace_start {
        if let Some(e) = header_gap(content, bracket_end + 1, bs, "field list (expected '{' right after ']')") {
            return Err(e);
        }
        matching_brace = find_matching_brace(b, bs);
        if let Some(end) = matching_brace {
            brace_end = end + 1;
        }
    }
    let Some(colon) = find_unquoted(b, b':', brace_end) else {
        return invalid(
            "TOON_MISSING_COLON",
            "Missing colon after array header (expected ':')".into(),
            brace_end.min(b.len()),
        );
    };
    if let Some(e) = header_gap(content, brace_end, colon, "colon (expected ':' right after the header)") {
        return Err(e);
    }
    let mut key = None;
    let key_quoted = b.first() == Some(&b'"');
    if bracket_start > 0 {
        let raw = sub(content, 0, bracket_start);
        if raw.ends_with([' ', '\t']) {
            return invalid(
                "TOON_INVALID_HEADER",
                "Unexpected whitespace between key and bracket segment (expected '[' right after the key)".into(),
                bracket_start - 1,
            );
        }
        key = Some(if raw.starts_with('"') { string_literal(raw)? } else { Cow::Borrowed(raw) });
    }
    let after_colon = trim_spaces(from(content, colon + 1));
    let seg = sub(content, bracket_start + 1, bracket_end);
    let (length, delim, keyed) = parse_bracket_segment(seg).map_err(|m| syn("TOON_INVALID_LENGTH", m, content, bracket_start + 1))?;
    let mut fields = false;
    if let Some(bs) = brace_start.filter(|&bs| bs < colon) {
        if let Some(be) = matching_brace.filter(|&be| be < colon) {
            let inner = sub(content, bs + 1, be);
            fields = true;
            if list.src != Some((inner, delim)) {
                for cand in [b',', b'\t', b'|'] {
                    if cand != delim && find_unquoted(inner.as_bytes(), cand, 0).is_some() {
                        return invalid(
                            "TOON_DELIMITER_MISMATCH",
                            format!(
                                "Header delimiter mismatch: bracket declares \"{}\" but field list contains unquoted \"{}\"",
                                show_delim(delim),
                                show_delim(cand)
                            ),
                            bs + 1,
                        );
                    }
                }
                list.src = None;
                list.fields.clear();
                parse_fields(inner, delim, &mut list.fields, 1)?;
                // The reference tests the first duplicate it finds for
                // truthiness, so when that one is the empty name
                // (`{"",""}`) it reports nothing.
                list.duplicate = duplicate_field(&list.fields, 0, list.fields.len()).filter(|d| !d.is_empty());
                list.src = Some((inner, delim));
                list.generation += 1;
            }
        }
    }
    let duplicate = if fields { list.duplicate.clone() } else { None };
    let dup_msg = |d: &str| format!("Duplicate field name \"{d}\" in field list (expected distinct names)");
    if keyed && !fields {
        return invalid(
            "TOON_INVALID_HEADER",
            "Keyed header requires a field list (expected {fields} after the bracket segment)".into(),
            bracket_start,
        );
    }
    if fields && !after_colon.is_empty() {
        return match duplicate {
            Some(d) => invalid("TOON_DUPLICATE_FIELD", dup_msg(&d), brace_start.unwrap_or(0)),
            None => invalid(
                "TOON_INVALID_HEADER",
                "Unexpected content after fields-bearing header colon (expected rows on the following lines)".into(),
                colon + 1,
            ),
        };
    }
    if strict {
        if let Some(d) = duplicate {
            return invalid("TOON_DUPLICATE_FIELD", dup_msg(&d), brace_start.unwrap_or(0));
        }
    }
    Ok(Some(Header {
        key,
        key_quoted,
        length,
        delim,
        fields,
        keyed,
        inline: (!after_colon.is_empty()).then_some(after_colon),
    }))
}

fn show_delim(d: u8) -> &'static str {
    match d {
        b'\t' => "\\t",
        b'|' => "|",
        _ => ",",
    }
}

/// `N`, `N:` (keyed), with an optional tab or pipe delimiter marker last.
fn parse_bracket_segment(seg: &str) -> Result<(f64, u8, bool), String> {
    let mut c = seg;
    let mut delim = b',';
    if let Some(rest) = c.strip_suffix('\t') {
        delim = b'\t';
        c = rest;
    } else if let Some(rest) = c.strip_suffix('|') {
        delim = b'|';
        c = rest;
    }
    let keyed = match c.strip_suffix(':') {
        Some(rest) => {
            c = rest;
            true
        }
        None => false,
    };
    let b = c.as_bytes();
    let ok = match b.first() {
        Some(b'0') => b.len() == 1,
        Some(b'1'..=b'9') => b.iter().all(u8::is_ascii_digit),
        _ => false,
    };
    if !ok {
        return Err(format!(
            "Invalid array length: \"{seg}\" (expected non-negative integer with no leading zeros)"
        ));
    }
    // Up to 15 digits the value is exact as a u64 and as a double.
    let length = if b.len() <= 15 {
        b.iter().fold(0u64, |n, &d| n * 10 + u64::from(d - b'0')) as f64
    } else {
        c.parse::<f64>().unwrap_or(f64::INFINITY)
    };
    Ok((length, delim, keyed))
}

/// Parse a field list (reference `parseFieldEntries`) into `out`.
fn parse_fields<'a>(content: &'a str, delim: u8, out: &mut Vec<Field<'a>>, depth: usize) -> Result<(), Syn> {
    let b = content.as_bytes();
    // Split at delimiters outside quotes and outside nested groups.
    let mut start = 0;
    let mut i = 0;
    let mut in_quotes = false;
    let mut braces: isize = 0;
    loop {
        let at_end = i >= b.len();
        if !at_end {
            let c = b[i];
            if c == b'\\' && in_quotes && i + 1 < b.len() {
                i += 2;
                continue;
            }
            if c == b'"' {
                in_quotes = !in_quotes;
                i += 1;
                continue;
            }
            if !in_quotes {
                if c == b'{' {
                    braces += 1;
                } else if c == b'}' {
                    braces -= 1;
                } else if c == delim && braces == 0 {
                    parse_field_entry(sub(content, start, i), delim, out, depth)?;
                    i += 1;
                    start = i;
                    continue;
                }
            }
            i += 1;
            continue;
        }
        return parse_field_entry(from(content, start), delim, out, depth);
    }
}

fn parse_field_entry<'a>(entry: &'a str, delim: u8, out: &mut Vec<Field<'a>>, depth: usize) -> Result<(), Syn> {
    let t = trim_spaces(entry);
    let tb = t.as_bytes();
    if t.is_empty() {
        return Err(syn(
            "TOON_INVALID_FIELDS",
            "Empty field name in field list (expected a name between delimiters)",
            entry,
            0,
        ));
    }
    let Some(gs) = find_unquoted(tb, b'{', 0) else {
        let name = string_literal(t)?;
        out.push(Field { name, quoted: t.starts_with('"'), next: out.len() + 1 });
        return Ok(());
    };
    let name_part = sub(t, 0, gs);
    if name_part.is_empty() {
        return Err(syn(
            "TOON_INVALID_FIELDS",
            "Missing field name before nested field group (expected name{...})",
            t,
            0,
        ));
    }
    if name_part.ends_with(' ') {
        return Err(syn(
            "TOON_INVALID_FIELDS",
            "Unexpected whitespace before nested field group (expected '{' right after the name)",
            t,
            gs - 1,
        ));
    }
    let Some(ge) = find_matching_brace(tb, gs) else {
        return Err(syn(
            "TOON_INVALID_FIELDS",
            "Unmatched brace in field list (expected '}')",
            t,
            gs,
        ));
    };
    if ge != tb.len() - 1 {
        return Err(syn(
            "TOON_INVALID_FIELDS",
            "Unexpected content after nested field group (expected a delimiter or the end of the list)",
            t,
            ge + 1,
        ));
    }
    if depth >= MAX_FIELD_DEPTH {
        return Err(syn(
            "TOON_TOO_DEEP",
            format!("field groups nested deeper than {MAX_FIELD_DEPTH} levels"),
            t,
            gs,
        ));
    }
    let index = out.len();
    out.push(Field { name: Cow::Borrowed(""), quoted: trim_spaces(name_part).starts_with('"'), next: 0 });
    // As in the reference, the group is parsed before the name.
    parse_fields(sub(t, gs + 1, ge), delim, out, depth + 1)?;
    let name = string_literal(name_part)?;
    let next = out.len();
    if let Some(f) = out.get_mut(index) {
        f.name = name;
        f.next = next;
    }
    Ok(())
}

/// The first repeated name among the siblings of `fields[start..end]`,
/// checked level by level in the reference's order.
fn duplicate_field(fields: &[Field<'_>], start: usize, end: usize) -> Option<String> {
    // Searched linearly while there are few (most lists), hashed beyond.
    let mut few: Vec<&str> = Vec::new();
    let mut many: Option<HashSet<&str>> = None;
    let mut i = start;
    while i < end {
        let f = fields.get(i)?;
        let fresh = match &mut many {
            Some(set) => set.insert(&f.name),
            None if few.contains(&&*f.name) => false,
            None => {
                few.push(&f.name);
                if few.len() > 16 {
                    many = Some(few.iter().copied().collect());
                }
                true
            }
        };
        if !fresh {
            return Some(f.name.to_string());
        }
        if f.next > i + 1 {
            if let Some(d) = duplicate_field(fields, i + 1, f.next) {
                return Some(d);
            }
        }
        i = f.next.max(i + 1);
    }
    None
}

fn count_leaves(fields: &[Field<'_>]) -> usize {
    fields.iter().enumerate().filter(|(i, f)| f.next == i + 1).count()
}

// ---------------------------------------------------------------- duplicate keys

/// The keys of the objects being decoded (strict mode), to reject duplicate
/// siblings. Small objects are searched linearly; an object that grows past
/// `LINEAR` keys also gets its keys in a hash set.
struct SeenKeys<'a> {
    /// The keys of the open objects, innermost last: a [`key_tag`] (compared
    /// first, the text only when it is equal) and the key.
    stack: Vec<(u64, SeenKey<'a>)>,
    /// Keys that are not slices of the text (unescaped ones).
    owned: Vec<Box<str>>,
    big: HashSet<(u64, Cow<'a, str>)>,
    next_id: u64,
}

/// A key of [`SeenKeys`]: a slice of the text, or an index into its
/// `owned` keys. (`Copy`, so the stack is pushed and cut without drops.)
#[derive(Clone, Copy)]
enum SeenKey<'a> {
    Text(&'a str),
    Owned(usize),
}

#[derive(Clone, Copy)]
struct SeenFrame {
    base: usize,
    id: u64,
    /// `owned.len()` when the object opened.
    owned: usize,
}

const LINEAR: usize = 16;

impl<'a> SeenKeys<'a> {
    fn begin(&mut self, strict: bool) -> Option<SeenFrame> {
        if !strict {
            return None;
        }
        self.next_id += 1;
        Some(SeenFrame { base: self.stack.len(), id: self.next_id, owned: self.owned.len() })
    }

    fn text(&self, k: SeenKey<'a>) -> &str {
        match k {
            SeenKey::Text(s) => s,
            SeenKey::Owned(i) => self.owned.get(i).map_or("", |s| s),
        }
    }

    fn cow(&self, k: SeenKey<'a>) -> Cow<'a, str> {
        match k {
            SeenKey::Text(s) => Cow::Borrowed(s),
            SeenKey::Owned(i) => Cow::Owned(self.owned.get(i).map_or_else(String::new, |s| s.to_string())),
        }
    }

    /// Record `key`; false when it is already there. (Takes the `Cow` to
    /// keep borrowed keys borrowed when storing them.)
    #[allow(clippy::ptr_arg)]
    fn insert(&mut self, f: SeenFrame, key: &Cow<'a, str>) -> bool {
        let n = self.stack.len() - f.base;
        let tag = key_tag(key.as_bytes());
        if n < LINEAR {
            let open = self.stack.get(f.base..).unwrap_or_default();
            if open.iter().any(|&(t, k)| t == tag && self.text(k) == key.as_ref()) {
                return false;
            }
        } else if !self.big.insert((f.id, key.clone())) {
            return false;
        }
        let k = match key {
            Cow::Borrowed(s) => SeenKey::Text(s),
            Cow::Owned(s) => {
                self.owned.push(s.as_str().into());
                SeenKey::Owned(self.owned.len() - 1)
            }
        };
        self.stack.push((tag, k));
        if n + 1 == LINEAR {
            let keys: Vec<Cow<'a, str>> =
                self.stack.get(f.base..).unwrap_or_default().iter().map(|&(_, k)| self.cow(k)).collect();
            for k in keys {
                self.big.insert((f.id, k));
            }
        }
        true
    }

    fn end(&mut self, f: Option<SeenFrame>) {
        let Some(f) = f else { return };
        if self.stack.len() - f.base >= LINEAR {
            let keys: Vec<Cow<'a, str>> =
                self.stack.get(f.base..).unwrap_or_default().iter().map(|&(_, k)| self.cow(k)).collect();
            for k in keys {
                self.big.remove(&(f.id, k));
            }
        }
        self.stack.truncate(f.base);
        self.owned.truncate(f.owned);
    }
}

/// A summary of a key (its length and first and last 8 bytes): different
/// tags mean different keys.
#[inline]
fn key_tag(b: &[u8]) -> u64 {
    let (x, y) = match (b.first_chunk::<8>(), b.last_chunk::<8>()) {
        (Some(f), Some(l)) => (u64::from_le_bytes(*f), u64::from_le_bytes(*l)),
        _ => (b.iter().fold(0u64, |v, &c| (v << 8) | u64::from(c)), 0),
    };
    x ^ y.rotate_left(23) ^ (b.len() as u64).rotate_left(55)
}

// ---------------------------------------------------------------- builders

/// A [`Builder`] that is also told which keys were written in quotes (only
/// path expansion cares).
trait Sink: Builder {
    fn quoted_key(&mut self, s: &str) -> Result<Self::Key, Self::Error>;
    /// [`Sink::quoted_key`] made ahead ([`Builder::key_ahead`]).
    #[inline]
    fn quoted_key_ahead(&mut self, s: &str) -> Result<Self::Key, Self::Error> {
        self.quoted_key(s)
    }
}

fn key_of<B: Sink>(b: &mut B, s: &str, quoted: bool) -> Result<B::Key, B::Error> {
    if quoted {
        b.quoted_key(s)
    } else {
        b.key(s)
    }
}

/// A caller's builder, for which quoted keys are plain keys.
struct Plain<'b, B>(&'b mut B);

impl<B: Builder> Builder for Plain<'_, B> {
    type Value = B::Value;
    type Key = B::Key;
    type Error = B::Error;
    #[inline]
    fn null(&mut self) -> Result<B::Value, B::Error> {
        self.0.null()
    }
    #[inline]
    fn bool(&mut self, v: bool) -> Result<B::Value, B::Error> {
        self.0.bool(v)
    }
    #[inline]
    fn int(&mut self, i: i64) -> Result<B::Value, B::Error> {
        self.0.int(i)
    }
    #[inline]
    fn big_int(&mut self, digits: &str) -> Result<B::Value, B::Error> {
        self.0.big_int(digits)
    }
    #[inline]
    fn float(&mut self, f: f64) -> Result<B::Value, B::Error> {
        self.0.float(f)
    }
    #[inline]
    fn string(&mut self, s: &str) -> Result<B::Value, B::Error> {
        self.0.string(s)
    }
    #[inline]
    fn key(&mut self, s: &str) -> Result<B::Key, B::Error> {
        self.0.key(s)
    }
    #[inline]
    fn key_again(&mut self, key: &B::Key, s: &str) -> Result<B::Key, B::Error> {
        self.0.key_again(key, s)
    }
    #[inline]
    fn array(&mut self, items: Drain<'_, B::Value>) -> Result<B::Value, B::Error> {
        self.0.array(items)
    }
    #[inline]
    fn object(&mut self, entries: Drain<'_, (B::Key, B::Value)>) -> Result<B::Value, B::Error> {
        self.0.object(entries)
    }
    #[inline]
    fn number_token(&mut self, text: &str, integer: bool) -> Result<Option<B::Value>, B::Error> {
        self.0.number_token(text, integer)
    }
    #[inline]
    fn number_value(&mut self, text: &str, integer: bool, quick: Option<QuickNumber>) -> Result<Option<B::Value>, B::Error> {
        self.0.number_value(text, integer, quick)
    }
    #[inline]
    fn begin_array(&mut self) -> Result<(), B::Error> {
        self.0.begin_array()
    }
    #[inline]
    fn begin_object(&mut self) -> Result<(), B::Error> {
        self.0.begin_object()
    }
    #[inline]
    fn key_ahead(&mut self, s: &str) -> Result<B::Key, B::Error> {
        self.0.key_ahead(s)
    }
}

impl<B: Builder> Sink for Plain<'_, B> {
    #[inline]
    fn quoted_key(&mut self, s: &str) -> Result<B::Key, B::Error> {
        self.0.key(s)
    }
    #[inline]
    fn quoted_key_ahead(&mut self, s: &str) -> Result<B::Key, B::Error> {
        self.0.key_ahead(s)
    }
}

// ---------------------------------------------------------------- path expansion

/// A decoded value held for path expansion (only then is a tree built).
enum Tree {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    /// A number token kept as text for the caller's
    /// [`Builder::number_token`] (`true`: an integer literal).
    Num(String, bool),
    Str(String),
    Array(Vec<Tree>),
    Object(Obj),
}

/// An object as JavaScript holds one: keys in first-insertion order, a
/// repeated key overwriting the value in place.
#[derive(Default)]
struct Obj {
    entries: Vec<(String, Tree)>,
    index: HashMap<String, usize>,
    /// Dotted keys that were written in quotes somewhere (left literal).
    quoted: HashSet<String>,
}

impl Obj {
    fn get(&self, k: &str) -> Option<&Tree> {
        self.index.get(k).and_then(|&i| self.entries.get(i)).map(|e| &e.1)
    }

    fn get_mut(&mut self, k: &str) -> Option<&mut Tree> {
        let i = *self.index.get(k)?;
        self.entries.get_mut(i).map(|e| &mut e.1)
    }

    fn set(&mut self, k: String, v: Tree) {
        if let Some(slot) = self.get_mut(&k) {
            *slot = v;
            return;
        }
        self.index.insert(k.clone(), self.entries.len());
        self.entries.push((k, v));
    }
}

impl Tree {
    /// JavaScript's `typeof`, for conflict messages.
    fn type_name(&self) -> &'static str {
        match self {
            Tree::Bool(_) => "boolean",
            Tree::Int(_) | Tree::Float(_) | Tree::Num(..) => "number",
            Tree::Str(_) => "string",
            Tree::Null | Tree::Array(_) | Tree::Object(_) => "object",
        }
    }
}

/// Builds a [`Tree`], remembering which dotted keys were quoted.
struct TreeBuilder;

impl Builder for TreeBuilder {
    type Value = Tree;
    type Key = (String, bool);
    type Error = Error;
    fn null(&mut self) -> Result<Tree> {
        Ok(Tree::Null)
    }
    fn bool(&mut self, v: bool) -> Result<Tree> {
        Ok(Tree::Bool(v))
    }
    fn int(&mut self, i: i64) -> Result<Tree> {
        Ok(Tree::Int(i))
    }
    fn big_int(&mut self, digits: &str) -> Result<Tree> {
        Ok(Tree::Float(digits.parse().unwrap_or(f64::NAN)))
    }
    fn float(&mut self, f: f64) -> Result<Tree> {
        Ok(Tree::Float(f))
    }
    fn number_token(&mut self, text: &str, integer: bool) -> Result<Option<Tree>> {
        // Finite as a double, else the token is a string (as by default).
        if text.parse::<f64>().is_ok_and(f64::is_finite) {
            Ok(Some(Tree::Num(text.to_owned(), integer)))
        } else {
            Ok(None)
        }
    }
    fn string(&mut self, s: &str) -> Result<Tree> {
        Ok(Tree::Str(s.to_owned()))
    }
    fn key(&mut self, s: &str) -> Result<(String, bool)> {
        Ok((s.to_owned(), false))
    }
    fn key_again(&mut self, key: &(String, bool), _: &str) -> Result<(String, bool)> {
        // A copy keeps whether it was quoted.
        Ok(key.clone())
    }
    fn array(&mut self, items: Drain<'_, Tree>) -> Result<Tree> {
        Ok(Tree::Array(items.collect()))
    }
    fn object(&mut self, entries: Drain<'_, ((String, bool), Tree)>) -> Result<Tree> {
        let mut obj = Obj::default();
        for ((k, quoted), v) in entries {
            if quoted && k.contains('.') {
                obj.quoted.insert(k.clone());
            }
            obj.set(k, v);
        }
        Ok(Tree::Object(obj))
    }
}

impl Sink for TreeBuilder {
    fn quoted_key(&mut self, s: &str) -> Result<(String, bool)> {
        Ok((s.to_owned(), true))
    }
}

/// `^[A-Za-z_][A-Za-z0-9_]*$`
fn is_identifier(s: &str) -> bool {
    let mut b = s.bytes();
    b.next().is_some_and(|c| c.is_ascii_alphabetic() || c == b'_') && b.all(|c| c.is_ascii_alphanumeric() || c == b'_')
}

#[cold]
fn too_deep_expanded() -> Error {
    Error::new(
        Format::Toon,
        "TOON_TOO_DEEP",
        format!("arrays and objects nested deeper than {EXPAND_MAX_DEPTH} levels after path expansion"),
    )
}

#[cold]
fn key_conflict(key: &str, existing: &Tree, new: &Tree) -> Error {
    Error::new(
        Format::Toon,
        "TOON_EXPANSION_CONFLICT",
        format!(
            "Path expansion conflict at key \"{key}\": cannot merge {} with {} (expected two objects, or strict off)",
            existing.type_name(),
            new.type_name()
        ),
    )
}

/// Expand the dotted keys of `t` (at nesting `level`) as the spec v3
/// reference (`@toon-format/toon` 2.3.1, `expandPathsSafe`) does: an
/// unquoted key whose dot-separated segments are all identifiers becomes
/// nested objects; objects meeting at one path merge deeply; any other
/// meeting is a conflict, an error in strict mode and otherwise won by the
/// later value.
fn expand(t: Tree, strict: bool, level: usize) -> Result<Tree> {
    match t {
        Tree::Array(items) => {
            if level >= EXPAND_MAX_DEPTH {
                return Err(too_deep_expanded());
            }
            let mut out = Vec::with_capacity(items.len());
            for item in items {
                out.push(expand(item, strict, level + 1)?);
            }
            Ok(Tree::Array(out))
        }
        Tree::Object(obj) => {
            if level >= EXPAND_MAX_DEPTH {
                return Err(too_deep_expanded());
            }
            let Obj { entries, quoted, .. } = obj;
            let mut out = Obj::default();
            for (key, value) in entries {
                if key.contains('.') && !quoted.contains(&key) {
                    let segments: Vec<&str> = key.split('.').collect();
                    if segments.iter().all(|s| is_identifier(s)) {
                        if level + segments.len() >= EXPAND_MAX_DEPTH {
                            return Err(too_deep_expanded());
                        }
                        let value = expand(value, strict, level + segments.len())?;
                        insert_path(&mut out, &segments, value, strict)?;
                        continue;
                    }
                }
                let value = expand(value, strict, level + 1)?;
                put(&mut out, key, value, strict)?;
            }
            Ok(Tree::Object(out))
        }
        other => Ok(other),
    }
}

/// Set `key` in `obj`, merging two objects and resolving other conflicts.
fn put(obj: &mut Obj, key: String, value: Tree, strict: bool) -> Result<()> {
    match obj.get_mut(&key) {
        None => obj.set(key, value),
        Some(Tree::Object(existing)) if matches!(value, Tree::Object(_)) => {
            if let Tree::Object(source) = value {
                merge(existing, source, strict)?;
            }
        }
        Some(existing) => {
            if strict {
                return Err(key_conflict(&key, existing, &value));
            }
            *existing = value;
        }
    }
    Ok(())
}

fn merge(target: &mut Obj, source: Obj, strict: bool) -> Result<()> {
    for (key, value) in source.entries {
        put(target, key, value, strict)?;
    }
    Ok(())
}

/// Insert `value` at `segments` under `obj`, creating the objects on the
/// way (a non-object in the way is a conflict).
fn insert_path(obj: &mut Obj, segments: &[&str], value: Tree, strict: bool) -> Result<()> {
    let Some((last, path)) = segments.split_last() else { return Err(internal()) };
    let mut node = obj;
    for &seg in path {
        let fresh = match node.get(seg) {
            None => true,
            Some(Tree::Object(_)) => false,
            Some(other) => {
                if strict {
                    return Err(Error::new(
                        Format::Toon,
                        "TOON_EXPANSION_CONFLICT",
                        format!(
                            "Path expansion conflict at segment \"{seg}\": expected object but found {}",
                            other.type_name()
                        ),
                    ));
                }
                true
            }
        };
        if fresh {
            node.set(seg.to_owned(), Tree::Object(Obj::default()));
        }
        node = match node.get_mut(seg) {
            Some(Tree::Object(o)) => o,
            _ => return Err(internal()),
        };
    }
    put(node, (*last).to_owned(), value, strict)
}

/// Build the expanded tree with the caller's builder.
fn replay<B: Builder>(
    t: Tree,
    b: &mut B,
    values: &mut Vec<B::Value>,
    entries: &mut Vec<(B::Key, B::Value)>,
) -> Result<B::Value, B::Error> {
    match t {
        Tree::Null => b.null(),
        Tree::Bool(v) => b.bool(v),
        Tree::Int(i) => b.int(i),
        Tree::Float(f) => b.float(f),
        Tree::Num(text, integer) => match b.number_token(&text, integer)? {
            Some(v) => Ok(v),
            None => b.string(&text),
        },
        Tree::Str(s) => b.string(&s),
        Tree::Array(items) => {
            b.begin_array()?;
            let base = values.len();
            for item in items {
                let v = replay(item, b, values, entries)?;
                values.push(v);
            }
            b.array(values.drain(base..))
        }
        Tree::Object(obj) => {
            b.begin_object()?;
            let base = entries.len();
            for (k, v) in obj.entries {
                let key = b.key(&k)?;
                let v = replay(v, b, values, entries)?;
                entries.push((key, v));
            }
            b.object(entries.drain(base..))
        }
    }
}

// ---------------------------------------------------------------- decoder

/// An object or list array whose lines are still being read.
enum Frame<'a> {
    /// Fields at one depth (the first line's, at least `min_depth`; fixed
    /// in advance for the root and for objects opened by a list item).
    Object {
        min_depth: usize,
        depth: Option<usize>,
        seen: Option<SeenFrame>,
        /// Where its entries start in `Decoder::entries`.
        base: usize,
        /// Nesting level of its values.
        level: usize,
    },
    /// `- item` lines at `item_depth`.
    List {
        length: f64,
        item_depth: usize,
        base_depth: usize,
        /// Where its items start in `Decoder::values`.
        base: usize,
        count: usize,
        /// First and last line numbers of its items (blank-line rule).
        start: Option<usize>,
        end: Option<usize>,
        /// The line a length mismatch is reported at.
        last: Line<'a>,
        level: usize,
    },
}

/// The 1-based column of byte `offset` of `text` on the line starting at
/// `line_start` (characters, as the reference counts them).
#[cold]
fn column_between(text: &str, line_start: usize, offset: usize) -> Option<usize> {
    text.get(line_start..offset).map(|s| s.chars().count() + 1)
}

#[cold]
fn internal() -> Error {
    Error::new(Format::Toon, "TOON_INTERNAL", "internal decoder error (expected a consistent frame stack)")
}

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
    /// The same, as [`plain_cells`] reads them.
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

impl<'a, V, K> Decoder<'a, V, K> {
    #[cold]
    fn error_at(&self, line: &Line<'a>, code: &'static str, msg: impl Into<String>, addr: usize) -> Error {
        let offset = addr.wrapping_sub(self.text.as_ptr() as usize);
        Error::new(Format::Toon, code, msg).at_line(line.number, column_between(self.text, line.raw_start, offset))
    }

    /// An error about a whole line (column of its content).
    #[cold]
    fn error(&self, line: &Line<'a>, code: &'static str, msg: impl Into<String>) -> Error {
        self.error_at(line, code, msg, line.content.as_ptr() as usize)
    }

    #[cold]
    fn syn_error(&self, line: &Line<'a>, e: Syn) -> Error {
        self.error_at(line, e.code, e.msg, e.at)
    }

    fn at<T>(&self, line: &Line<'a>, r: Result<T, Syn>) -> Result<T> {
        r.map_err(|e| self.syn_error(line, e))
    }

    #[cold]
    fn over_indented(&self, line: &Line<'a>, expected: usize) -> Error {
        self.error(
            line,
            "TOON_OVER_INDENTED",
            format!("Over-indented line: expected depth {expected}, but found {}", line.depth),
        )
    }

    fn check_depth_jump(&self, line: &Line<'a>, parent: usize) -> Result<()> {
        if self.strict && line.depth > parent + 1 {
            return Err(self.error(
                line,
                "TOON_DEPTH_JUMP",
                format!("Indentation depth jump: expected depth {}, but found {}", parent + 1, line.depth),
            ));
        }
        Ok(())
    }

    /// A container is about to open at nesting level `level` (0 = root).
    fn enter(&self, line: &Line<'a>, level: usize) -> Result<()> {
        if level >= self.max_depth {
            return Err(self.error(
                line,
                "TOON_TOO_DEEP",
                format!("arrays and objects nested deeper than {} levels", self.max_depth),
            ));
        }
        Ok(())
    }

    #[inline]
    fn check_count(&self, line: &Line<'a>, code: &'static str, actual: usize, expected: f64, what: &str) -> Result<()> {
        if actual as f64 != expected {
            return Err(self.count_error(line, code, actual, expected, what));
        }
        Ok(())
    }

    #[cold]
    fn count_error(&self, line: &Line<'a>, code: &'static str, actual: usize, expected: f64, what: &str) -> Error {
        self.error(line, code, format!("Expected {} {what}, but got {actual}", js_number(expected)))
    }

    fn check_no_blank(&self, start: Option<usize>, end: Option<usize>, what: &str) -> Result<()> {
        if let (Some(s), Some(e)) = (start, end) {
            if let Some(n) = self.r.blank_between(s, e) {
                return Err(Error::new(
                    Format::Toon,
                    "TOON_BLANK_LINE",
                    format!("Blank lines inside {what} are not allowed in strict mode (expected consecutive lines)"),
                )
                .at_line(n, None));
            }
        }
        Ok(())
    }

    #[allow(clippy::ptr_arg)] // the Cow is stored as is
    fn note_key(&mut self, frame: Option<SeenFrame>, key: &Cow<'a, str>, line: &Line<'a>) -> Result<()> {
        if let Some(f) = frame {
            if !self.seen.insert(f, key) {
                return Err(self.duplicate_key(line, key));
            }
        }
        Ok(())
    }

    #[cold]
    fn duplicate_key(&self, line: &Line<'a>, key: &str) -> Error {
        self.error(line, "TOON_DUPLICATE_KEY", format!("Duplicate sibling key \"{key}\" (expected unique keys in strict mode)"))
    }

    fn header(&mut self, line: &Line<'a>) -> Result<Option<Header<'a>>> {
        let r = parse_header(line.content, self.strict, &mut self.fields);
        self.at(line, r)
    }

    fn document<B: Sink<Value = V, Key = K>>(&mut self, b: &mut B) -> Result<V, B::Error> {
        let Some(first) = self.r.peek()? else {
            b.begin_object()?;
            return b.object(self.entries.drain(..0));
        };
        if first.depth != 0 {
            return Err(self.over_indented(&first, 0).into());
        }
        let mut stack: Vec<Frame<'a>> = Vec::new();
        if trim_spaces(first.content) == "[]" {
            self.r.next()?;
            b.begin_array()?;
            let v = b.array(self.values.drain(..0))?;
            self.assert_consumed()?;
            return Ok(v);
        }
        if is_array_header_content(first.content) {
            if let Some(h) = self.header(&first)? {
                self.r.next()?;
                let v = match self.array_from_header(b, &mut stack, &h, &first, 0, 0)? {
                    Some(v) => v,
                    None => self.run(b, &mut stack)?,
                };
                self.assert_consumed()?;
                return Ok(v);
            }
        }
        self.r.next()?;
        let following = self.r.peek()?;
        let key_value = is_key_value_content(first.content);
        if following.is_none() && !key_value {
            return self.primitive(b, first.content, &first);
        }
        if !key_value && following.is_some_and(|l| l.depth == 0) {
            return Err(self
                .error(
                    &first,
                    "TOON_ROOT_FORM",
                    "Top-level document must start with a key-value or array-header line",
                )
                .into());
        }
        let seen = self.seen.begin(self.track_keys);
        b.begin_object()?;
        stack.push(Frame::Object { min_depth: 0, depth: Some(0), seen, base: self.entries.len(), level: 1 });
        self.key_value(b, &mut stack, first, 0, seen, 1)?;
        self.run(b, &mut stack)
    }

    fn assert_consumed(&mut self) -> Result<()> {
        if let Some(line) = self.r.peek()? {
            return Err(self.error(
                &line,
                "TOON_TRAILING_CONTENT",
                "Unexpected content after the document root (expected the end of the document)",
            ));
        }
        Ok(())
    }

    /// Drive the open objects and list arrays on `stack` until the bottom
    /// one is complete, and return its value. (An explicit stack rather
    /// than recursion, so deep nesting costs heap, not call stack.)
    fn run<B: Sink<Value = V, Key = K>>(&mut self, b: &mut B, stack: &mut Vec<Frame<'a>>) -> Result<V, B::Error> {
        loop {
            let Some(top) = stack.last_mut() else {
                return Err(internal().into());
            };
            // Either the next line goes to the top frame, or it is complete.
            let mut finished = false;
            match top {
                Frame::Object { min_depth, depth, seen, level, .. } => {
                    let (min_depth, seen, level) = (*min_depth, *seen, *level);
                    match self.r.peek()? {
                        Some(line) if line.depth >= min_depth => {
                            let d = *depth.get_or_insert(line.depth);
                            if line.depth != d {
                                return Err(self.over_indented(&line, d).into());
                            }
                            self.r.next()?;
                            self.key_value(b, stack, line, d, seen, level)?;
                        }
                        _ => finished = true,
                    }
                }
                Frame::List { length, item_depth, base_depth, count, start, level, .. } => {
                    let (item_depth, level) = (*item_depth, *level);
                    let line = if !self.strict || (*count as f64) < *length {
                        self.r.peek()?.filter(|l| l.depth > *base_depth)
                    } else {
                        None
                    };
                    match line {
                        Some(line) => {
                            if line.depth != item_depth {
                                return Err(self.over_indented(&line, item_depth).into());
                            }
                            if line.content.starts_with("- ") || line.content == "-" {
                                start.get_or_insert(line.number);
                                if let Some(v) = self.list_item(b, stack, item_depth, level)? {
                                    self.deliver(stack, v)?;
                                }
                            } else {
                                finished = true;
                            }
                        }
                        None => finished = true,
                    }
                }
            }
            if finished {
                let Some(frame) = stack.pop() else { return Err(internal().into()) };
                let v = self.finish(b, frame)?;
                if stack.is_empty() {
                    return Ok(v);
                }
                self.deliver(stack, v)?;
            }
        }
    }

    /// Close a complete frame into its value.
    fn finish<B: Sink<Value = V, Key = K>>(&mut self, b: &mut B, frame: Frame<'a>) -> Result<V, B::Error> {
        match frame {
            Frame::Object { seen, base, .. } => {
                self.seen.end(seen);
                b.object(self.entries.drain(base.min(self.entries.len())..))
            }
            Frame::List { length, item_depth, base, count, start, end, last, .. } => {
                if self.strict {
                    self.check_count(&last, "TOON_LENGTH_MISMATCH", count, length, "list-form items")?;
                    self.check_no_blank(start, end, "list-form array")?;
                    if let Some(next) = self.r.peek()? {
                        if next.depth == item_depth && next.content.starts_with("- ") {
                            return Err(self
                                .error(
                                    &next,
                                    "TOON_LENGTH_MISMATCH",
                                    format!("Expected {} list-form items, but found more", js_number(length)),
                                )
                                .into());
                        }
                    }
                }
                b.array(self.values.drain(base.min(self.values.len())..))
            }
        }
    }

    /// Hand a finished value to the frame on top of the stack: an entry of
    /// an object (under the key waiting for it) or an item of a list.
    fn deliver(&mut self, stack: &mut [Frame<'a>], v: V) -> Result<()> {
        match stack.last_mut() {
            Some(Frame::Object { .. }) => {
                let Some(k) = self.pending.pop() else { return Err(internal()) };
                self.entries.push((k, v));
            }
            Some(Frame::List { count, end, last, .. }) => {
                self.values.push(v);
                *count += 1;
                if let Some(l) = self.r.last {
                    *end = Some(l.number);
                    *last = l;
                }
            }
            None => return Err(internal()),
        }
        Ok(())
    }

    /// Decode one `key: ...` line into an entry of the object on top of the
    /// stack, or open the frame that will build its value; `level` is the
    /// nesting level of the value.
    fn key_value<B: Sink<Value = V, Key = K>>(
        &mut self,
        b: &mut B,
        stack: &mut Vec<Frame<'a>>,
        line: Line<'a>,
        base_depth: usize,
        seen: Option<SeenFrame>,
        level: usize,
    ) -> Result<(), B::Error> {
        // Most lines are `key: value` with a plain key: then the line is no
        // header and the key ends at that colon, which one scan tells.
        let (key, end) = match plain_key_colon(line.content) {
            Some(colon) => (Cow::Borrowed(trim_spaces(sub(line.content, 0, colon))), colon + 1),
            None => return self.key_value_slow(b, stack, line, base_depth, seen, level),
        };
        self.key_value_rest(b, stack, line, key, end, base_depth, seen, level)
    }

    /// [`Self::key_value`] for lines that may be headers or have quoted keys.
    #[inline(never)]
    fn key_value_slow<B: Sink<Value = V, Key = K>>(
        &mut self,
        b: &mut B,
        stack: &mut Vec<Frame<'a>>,
        line: Line<'a>,
        base_depth: usize,
        seen: Option<SeenFrame>,
        level: usize,
    ) -> Result<(), B::Error> {
        if let Some(h) = self.header(&line)? {
            let Some(key) = &h.key else {
                let msg = if h.keyed {
                    "Keyless keyed header is only valid at the document root"
                } else {
                    "Keyless array header is only valid at the document root or as a list item"
                };
                return Err(self.error(&line, "TOON_KEYLESS_HEADER", msg).into());
            };
            self.note_key(seen, key, &line)?;
            let k = key_of(b, key, h.key_quoted)?;
            match self.array_from_header(b, stack, &h, &line, base_depth, level)? {
                Some(v) => self.entries.push((k, v)),
                None => self.pending.push(k),
            }
            return Ok(());
        }
        let (key, end) = self.at(&line, parse_key_token(line.content))?;
        self.key_value_rest(b, stack, line, key, end, base_depth, seen, level)
    }

    /// A `key: ...` line that is no header, its key parsed and ending at
    /// `end`.
    #[allow(clippy::too_many_arguments)]
    #[inline]
    fn key_value_rest<B: Sink<Value = V, Key = K>>(
        &mut self,
        b: &mut B,
        stack: &mut Vec<Frame<'a>>,
        line: Line<'a>,
        key: Cow<'a, str>,
        end: usize,
        base_depth: usize,
        seen: Option<SeenFrame>,
        level: usize,
    ) -> Result<(), B::Error> {
        let rest = trim_spaces(from(line.content, end));
        self.note_key(seen, &key, &line)?;
        let k = key_of(b, &key, line.content.starts_with('"'))?;
        let v = if rest.is_empty() {
            self.enter(&line, level)?;
            match self.r.peek()? {
                Some(next) if next.depth > base_depth => {
                    // A nested object: its fields are the deeper lines.
                    self.check_depth_jump(&next, base_depth)?;
                    b.begin_object()?;
                    self.pending.push(k);
                    let seen = self.seen.begin(self.track_keys);
                    stack.push(Frame::Object {
                        min_depth: base_depth + 1,
                        depth: None,
                        seen,
                        base: self.entries.len(),
                        level: level + 1,
                    });
                    return Ok(());
                }
                _ => {
                    b.begin_object()?;
                    b.object(self.entries.drain(..0))?
                }
            }
        } else if rest == "[]" {
            self.enter(&line, level)?;
            b.begin_array()?;
            b.array(self.values.drain(..0))?
        } else {
            self.primitive(b, rest, &line)?
        };
        self.entries.push((k, v));
        Ok(())
    }

    /// The depth of the lines under a header at `base_depth`.
    fn content_depth(&mut self, base_depth: usize) -> Result<usize> {
        match self.r.peek()? {
            Some(first) if first.depth > base_depth + 1 => {
                self.check_depth_jump(&first, base_depth)?;
                Ok(first.depth)
            }
            _ => Ok(base_depth + 1),
        }
    }

    /// The value under an array header: built at once (inline, tabular,
    /// keyed), or `None` with a list frame pushed on the stack.
    fn array_from_header<B: Sink<Value = V, Key = K>>(
        &mut self,
        b: &mut B,
        stack: &mut Vec<Frame<'a>>,
        h: &Header<'a>,
        line: &Line<'a>,
        base_depth: usize,
        level: usize,
    ) -> Result<Option<V>, B::Error> {
        if h.keyed {
            return self.keyed_object(b, h, line, base_depth, level).map(Some);
        }
        self.enter(line, level)?;
        b.begin_array()?;
        if let Some(inline) = h.inline {
            return self.inline_array(b, h, inline, line).map(Some);
        }
        if h.fields {
            return self.tabular_array(b, h, line, base_depth, level).map(Some);
        }
        let item_depth = self.content_depth(base_depth)?;
        stack.push(Frame::List {
            length: h.length,
            item_depth,
            base_depth,
            base: self.values.len(),
            count: 0,
            start: None,
            end: None,
            last: *line,
            level: level + 1,
        });
        Ok(None)
    }

    /// `key[N]: a,b,c`
    fn inline_array<B: Sink<Value = V, Key = K>>(
        &mut self,
        b: &mut B,
        h: &Header<'a>,
        inline: &'a str,
        line: &Line<'a>,
    ) -> Result<V, B::Error> {
        let base = self.values.len();
        for cell in Cells::new(inline, h.delim) {
            let v = self.primitive(b, cell, line)?;
            self.values.push(v);
        }
        if self.strict {
            let n = self.values.len() - base;
            self.check_count(line, "TOON_LENGTH_MISMATCH", n, h.length, "inline-form values")?;
        }
        b.array(self.values.drain(base..))
    }

    /// Run `f` with the field list of the current header and the keys made
    /// for its names (made once per list, then reused by every row of
    /// every table with the same list).
    fn with_fields<B: Sink<Value = V, Key = K>, T>(
        &mut self,
        b: &mut B,
        f: impl FnOnce(&mut Self, &mut B, &[Field<'a>], &[K]) -> Result<T, B::Error>,
    ) -> Result<T, B::Error> {
        let list = std::mem::take(&mut self.fields);
        let mut keys = std::mem::take(&mut self.field_keys);
        let mut r = Ok(());
        if self.keys_generation != list.generation || keys.len() != list.fields.len() {
            keys.clear();
            r = list.fields.iter().try_for_each(|f| {
                keys.push(if f.quoted { b.quoted_key_ahead(&f.name)? } else { b.key_ahead(&f.name)? });
                Ok(())
            });
            if r.is_ok() {
                self.keys_generation = list.generation;
            }
        }
        let r = r.and_then(|()| f(self, b, &list.fields, &keys));
        self.fields = list;
        self.field_keys = keys;
        r
    }

    /// `key[N]{f1,f2}:` followed by rows.
    fn tabular_array<B: Sink<Value = V, Key = K>>(
        &mut self,
        b: &mut B,
        h: &Header<'a>,
        header_line: &Line<'a>,
        base_depth: usize,
        level: usize,
    ) -> Result<V, B::Error> {
        let row_depth = self.content_depth(base_depth)?;
        self.with_fields(b, |d, b, fields, keys| {
            d.table_rows(b, h, fields, keys, header_line, base_depth, row_depth, level)
        })
    }

    #[allow(clippy::too_many_arguments)]
    fn table_rows<B: Sink<Value = V, Key = K>>(
        &mut self,
        b: &mut B,
        h: &Header<'a>,
        fields: &[Field<'a>],
        keys: &[K],
        header_line: &Line<'a>,
        base_depth: usize,
        row_depth: usize,
        level: usize,
    ) -> Result<V, B::Error> {
        let width = count_leaves(fields);
        // No nested groups (the usual table): rows take the short way.
        let flat = width == fields.len() && keys.len() == fields.len();
        let base = self.values.len();
        let mut count = 0usize;
        let (mut start, mut end) = (None, None);
        let mut last = *header_line;
        while !self.strict || (count as f64) < h.length {
            let Some(line) = self.r.peek()? else { break };
            if line.depth <= base_depth {
                break;
            }
            if line.depth != row_depth {
                return Err(self.over_indented(&line, row_depth).into());
            }
            if flat {
                // Numbers read while splitting.
                let mut plain = std::mem::take(&mut self.plain);
                match plain_cells(line.content, h.delim, &mut plain) {
                    false => {
                        self.plain = plain;
                        break;
                    }
                    true if plain.len() == width => {
                        start.get_or_insert(line.number);
                        end = Some(line.number);
                        last = line;
                        self.r.next()?;
                        let v = self.plain_row(b, fields, keys, &plain, &line, level + 1);
                        self.plain = plain;
                        self.values.push(v?);
                        count += 1;
                        continue;
                    }
                    // A count to report: the general way.
                    true => self.plain = plain,
                }
            }
            // Split once (which also tells a row from a `key: value`
            // line); the count is checked before any cell is used.
            let mut cells = std::mem::take(&mut self.cells);
            if !split_row(line.content, h.delim, &mut cells) {
                self.cells = cells;
                break;
            }
            start.get_or_insert(line.number);
            end = Some(line.number);
            last = line;
            self.r.next()?;
            if cells.len() != width {
                self.check_count(&line, "TOON_WIDTH_MISMATCH", cells.len(), width as f64, "tabular row values")?;
            }
            // (A row of a table without groups got here only to report its
            // count: `plain_row` reads the others.)
            let v = self.row_object(b, fields, keys, 0, fields.len(), &mut cells.iter().copied(), &line, level + 1);
            self.cells = cells;
            let v = v?;
            self.values.push(v);
            count += 1;
        }
        if self.strict {
            self.check_count(&last, "TOON_LENGTH_MISMATCH", count, h.length, "tabular rows")?;
            self.check_no_blank(start, end, "tabular array")?;
            if let Some(next) = self.r.peek()? {
                if next.depth == row_depth && !next.content.starts_with("- ") && is_data_row(next.content, h.delim) {
                    return Err(self
                        .error(
                            &next,
                            "TOON_LENGTH_MISMATCH",
                            format!("Expected {} tabular rows, but found more", js_number(h.length)),
                        )
                        .into());
                }
            }
        }
        b.array(self.values.drain(base..))
    }

    /// `key[N:]{f1,f2}:` followed by `entry: cells` lines: an object.
    fn keyed_object<B: Sink<Value = V, Key = K>>(
        &mut self,
        b: &mut B,
        h: &Header<'a>,
        header_line: &Line<'a>,
        base_depth: usize,
        level: usize,
    ) -> Result<V, B::Error> {
        let entry_depth = self.content_depth(base_depth)?;
        self.enter(header_line, level)?;
        b.begin_object()?;
        self.with_fields(b, |d, b, fields, keys| {
            d.keyed_entries(b, h, fields, keys, header_line, base_depth, entry_depth, level)
        })
    }

    #[allow(clippy::too_many_arguments)]
    fn keyed_entries<B: Sink<Value = V, Key = K>>(
        &mut self,
        b: &mut B,
        h: &Header<'a>,
        fields: &[Field<'a>],
        keys: &[K],
        header_line: &Line<'a>,
        base_depth: usize,
        entry_depth: usize,
        level: usize,
    ) -> Result<V, B::Error> {
        let width = count_leaves(fields);
        let frame = self.seen.begin(self.track_keys);
        let base = self.entries.len();
        let mut count = 0usize;
        let (mut start, mut end) = (None, None);
        let mut last = *header_line;
        while let Some(line) = self.r.peek()? {
            if line.depth <= base_depth {
                break;
            }
            if line.depth != entry_depth {
                return Err(self.over_indented(&line, entry_depth).into());
            }
            if !is_key_value_content(line.content) {
                return Err(self
                    .error(
                        &line,
                        "TOON_EXPECTED_ENTRY_ROW",
                        "Expected entry row inside keyed tabular object (a \"key: cells\" line)",
                    )
                    .into());
            }
            self.r.next()?;
            start.get_or_insert(line.number);
            end = Some(line.number);
            last = line;
            let (key, key_end) = self.at(&line, parse_key_token(line.content))?;
            self.note_key(frame, &key, &line)?;
            let k = key_of(b, &key, line.content.starts_with('"'))?;
            let cells_text = trim_spaces(from(line.content, key_end));
            let mut cells = std::mem::take(&mut self.cells);
            cells.clear();
            cells.extend(Cells::new(cells_text, h.delim));
            if cells.len() != width {
                self.check_count(&line, "TOON_WIDTH_MISMATCH", cells.len(), width as f64, "keyed entry cells")?;
            }
            let v = self.row_object(b, fields, keys, 0, fields.len(), &mut cells.iter().copied(), &line, level + 1);
            self.cells = cells;
            let v = v?;
            self.entries.push((k, v));
            count += 1;
        }
        if self.strict {
            self.check_count(&last, "TOON_LENGTH_MISMATCH", count, h.length, "keyed entries")?;
            self.check_no_blank(start, end, "keyed tabular object")?;
        }
        self.seen.end(frame);
        b.object(self.entries.drain(base..))
    }

    /// One row's object for a field list without groups (one cell per
    /// field, as [`plain_cells`] read them), as [`Self::row_object`] makes it.
    fn plain_row<B: Sink<Value = V, Key = K>>(
        &mut self,
        b: &mut B,
        fields: &[Field<'a>],
        keys: &[K],
        cells: &[PlainCell<'a>],
        line: &Line<'a>,
        level: usize,
    ) -> Result<V, B::Error> {
        self.enter(line, level)?;
        b.begin_object()?;
        let base = self.entries.len();
        for ((f, k), &cell) in fields.iter().zip(keys).zip(cells) {
            let k = b.key_again(k, &f.name)?;
            let v = match cell {
                // As `primitive` reads it (the cell is the literal alone).
                PlainCell::Number(text, n) => match b.number_value(text, n.integer, n.quick)? {
                    Some(v) => v,
                    None => b.string(text)?,
                },
                PlainCell::Token(t) => self.primitive(b, t, line)?,
            };
            self.entries.push((k, v));
        }
        b.object(self.entries.drain(base..))
    }

    /// One row's object: the fields `fields[start..end]` (one level) filled
    /// from the cells in order, nested groups as nested objects.
    #[allow(clippy::too_many_arguments)]
    fn row_object<B: Sink<Value = V, Key = K>>(
        &mut self,
        b: &mut B,
        fields: &[Field<'a>],
        keys: &[K],
        start: usize,
        end: usize,
        cells: &mut std::iter::Copied<std::slice::Iter<'_, &'a str>>,
        line: &Line<'a>,
        level: usize,
    ) -> Result<V, B::Error> {
        self.enter(line, level)?;
        b.begin_object()?;
        let base = self.entries.len();
        let mut i = start;
        while i < end {
            let Some(f) = fields.get(i) else { break };
            let k = match keys.get(i) {
                Some(k) => b.key_again(k, &f.name)?,
                None => key_of(b, &f.name, f.quoted)?,
            };
            let next = f.next.max(i + 1);
            let v = if next > i + 1 {
                self.row_object(b, fields, keys, i + 1, next, cells, line, level + 1)?
            } else {
                let cell = cells.next().unwrap_or_default();
                self.primitive(b, cell, line)?
            };
            self.entries.push((k, v));
            i = next;
        }
        b.object(self.entries.drain(base..))
    }

    /// One `- item` at `item_depth`: its value, or `None` when it opened
    /// frames on the stack that will deliver it.
    fn list_item<B: Sink<Value = V, Key = K>>(
        &mut self,
        b: &mut B,
        stack: &mut Vec<Frame<'a>>,
        item_depth: usize,
        level: usize,
    ) -> Result<Option<V>, B::Error> {
        let Some(line) = self.r.next()? else {
            return Err(internal().into());
        };
        let after = if line.content == "-" {
            ""
        } else if let Some(rest) = line.content.strip_prefix("- ") {
            rest.trim_start_matches(' ')
        } else {
            return Err(self
                .error(&line, "TOON_EXPECTED_LIST_ITEM", "Expected list item to start with \"- \"")
                .into());
        };
        if trim_spaces(after).is_empty() {
            self.enter(&line, level)?;
            b.begin_object()?;
            return b.object(self.entries.drain(..0)).map(Some);
        }
        if trim_spaces(after) == "[]" {
            self.enter(&line, level)?;
            b.begin_array()?;
            return b.array(self.values.drain(..0)).map(Some);
        }
        let item = Line { content: after, ..line };
        if is_array_header_content(after) {
            if let Some(h) = self.header(&item)? {
                if h.keyed || h.fields {
                    let msg = if h.keyed {
                        "Keyless keyed header is only valid at the document root"
                    } else {
                        "Keyless header with a field list is only valid at the document root"
                    };
                    return Err(self.error(&item, "TOON_KEYLESS_HEADER", msg).into());
                }
                return self.array_from_header(b, stack, &h, &item, item_depth, level);
            }
        }
        let header = self.header(&item)?;
        if let Some(h) = header.filter(|h| h.key.is_some() && h.fields) {
            // `- key[N]{fields}:` opens an object whose first field is the
            // table; its rows sit two levels below the hyphen, its other
            // fields one level below.
            self.enter(&item, level)?;
            let seen = self.seen.begin(self.track_keys);
            let key = h.key.clone().unwrap_or_default();
            self.note_key(seen, &key, &item)?;
            b.begin_object()?;
            stack.push(Frame::Object {
                min_depth: item_depth + 1,
                depth: Some(item_depth + 1),
                seen,
                base: self.entries.len(),
                level: level + 1,
            });
            let k = key_of(b, &key, h.key_quoted)?;
            match self.array_from_header(b, stack, &h, &item, item_depth + 1, level + 1)? {
                Some(v) => self.entries.push((k, v)),
                None => self.pending.push(k),
            }
            return Ok(None);
        }
        if is_key_value_content(after) {
            // `- key: ...` opens an object; its other fields sit one level
            // below the hyphen.
            self.enter(&item, level)?;
            let seen = self.seen.begin(self.track_keys);
            b.begin_object()?;
            stack.push(Frame::Object {
                min_depth: item_depth + 1,
                depth: Some(item_depth + 1),
                seen,
                base: self.entries.len(),
                level: level + 1,
            });
            self.key_value(b, stack, item, item_depth + 1, seen, level + 1)?;
            return Ok(None);
        }
        self.primitive(b, after, &item).map(Some)
    }

    /// A primitive token: quoted string, `true`/`false`/`null`, number, or
    /// else the trimmed text as a string.
    fn primitive<B: Sink<Value = V, Key = K>>(&mut self, b: &mut B, token: &'a str, line: &Line<'a>) -> Result<V, B::Error> {
        let t = trim_spaces(token);
        let tb = t.as_bytes();
        match tb.first() {
            None => return b.string(""),
            Some(b'"') => {
                let inner = self.at(line, quoted_inner(t))?;
                let mut scratch = std::mem::take(&mut self.scratch);
                let r = match unescape(inner, &mut scratch) {
                    Ok(s) => b.string(s),
                    Err(e) => Err(self.syn_error(line, e).into()),
                };
                self.scratch = scratch;
                return r;
            }
            Some(b't') if t == "true" => return b.bool(true),
            Some(b'f') if t == "false" => return b.bool(false),
            Some(b'n') if t == "null" => return b.null(),
            Some(b'-' | b'0'..=b'9') => {
                if let Some((integer, quick)) = number_form(tb) {
                    // The builder reads the literal (by default as the
                    // reference does); `None`: not finite, stays a string.
                    if let Some(v) = b.number_value(t, integer, quick)? {
                        return Ok(v);
                    }
                }
            }
            _ => {}
        }
        b.string(t)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn d(s: &str) -> Result<serde_json::Value> {
        decode(s, &DecodeOptions::default())
    }

    fn lax(s: &str) -> Result<serde_json::Value> {
        decode(s, &DecodeOptions { strict: false, ..Default::default() })
    }

    #[test]
    fn basic_forms() {
        assert_eq!(d("").unwrap(), json!({}));
        assert_eq!(d("a: 1\nb: x y\nc: \"q\\n\"").unwrap(), json!({"a": 1, "b": "x y", "c": "q\n"}));
        assert_eq!(d("a:\n  b: true\n  c: null").unwrap(), json!({"a": {"b": true, "c": null}}));
        assert_eq!(d("[3]: 1,a,\"b\"").unwrap(), json!([1, "a", "b"]));
        assert_eq!(d("t[2]{x,y}:\n  1,2\n  3,4").unwrap(), json!({"t": [{"x": 1, "y": 2}, {"x": 3, "y": 4}]}));
        assert_eq!(d("l[2]:\n  - a: 1\n    b: 2\n  - x").unwrap(), json!({"l": [{"a": 1, "b": 2}, "x"]}));
        assert_eq!(d("m[1:]{v,g{a}}:\n  k: 1,2").unwrap(), json!({"m": {"k": {"v": 1, "g": {"a": 2}}}}));
        assert_eq!(d("hello").unwrap(), json!("hello"));
        assert_eq!(d("[]").unwrap(), json!([]));
    }

    #[test]
    fn numbers() {
        let v = d("[9]: 42,-0,1.5,1e3,05,1e999,9223372036854775807,9223372036854775808,-0.0").unwrap();
        assert_eq!(
            v,
            json!([42, 0, 1.5, 1000.0, "05", "1e999", 9223372036854775807i64, 9223372036854775808.0, 0.0])
        );
        assert!(v[1].is_i64());
        assert!(v[3].is_f64());
        assert_eq!(v[8].as_f64().map(f64::is_sign_positive), Some(true));
    }

    #[test]
    fn errors_carry_code_and_position() {
        let e = d("a:\n   b: 1").unwrap_err();
        assert_eq!((e.code(), e.line(), e.column()), ("TOON_INDENTATION", Some(2), Some(4)));
        assert_eq!(e.message(), "Indentation must be exact multiple of 2, but found 3 spaces");
        let e = d("a[3]: 1,2").unwrap_err();
        assert_eq!(e.code(), "TOON_LENGTH_MISMATCH");
        assert_eq!(e.message(), "Expected 3 inline-form values, but got 2");
        let e = d("x: 1\ny: \"a\\qb\"").unwrap_err();
        assert_eq!((e.code(), e.line(), e.column()), ("TOON_INVALID_ESCAPE", Some(2), Some(6)));
        let e = d("a: 1\na: 2").unwrap_err();
        assert_eq!(e.code(), "TOON_DUPLICATE_KEY");
        assert_eq!(lax("a: 1\na: 2").unwrap(), json!({"a": 2}));
        // A repeated empty field name goes unreported, as in the reference.
        assert_eq!(d("t[1]{\"\",\"\",a,a}:\n  1,2,3,4").unwrap(), json!({"t": [{"": 2, "a": 4}]}));
        assert_eq!(d("t[1]{a,a,\"\",\"\"}:\n  1,2,3,4").unwrap_err().code(), "TOON_DUPLICATE_FIELD");
        let e = d("a[2]:\n  - 1\n\n  - 2").unwrap_err();
        assert_eq!((e.code(), e.line(), e.column()), ("TOON_BLANK_LINE", Some(3), None));
    }

    #[test]
    fn declared_length_does_not_allocate() {
        let e = d("a[999999999999]:\n  - 1").unwrap_err();
        assert_eq!(e.message(), "Expected 999999999999 list-form items, but got 1");
        let e = d(&format!("a[1{}]: x", "0".repeat(400))).unwrap_err();
        assert_eq!(e.message(), "Expected Infinity inline-form values, but got 1");
    }

    #[test]
    fn nesting_is_bounded() {
        let mut s = String::new();
        for i in 0..MAX_DEPTH + 5 {
            s.push_str(&"  ".repeat(i));
            s.push_str("a:\n");
        }
        assert_eq!(d(&s).unwrap_err().code(), "TOON_TOO_DEEP");
        let (_, events) = events::tests::events_of(&s, &DecodeOptions::default(), Input::Whole);
        assert_eq!(events.unwrap_err().code(), "TOON_TOO_DEEP");
        let mut s = String::new();
        for i in 0..MAX_DEPTH - 1 {
            s.push_str(&"  ".repeat(i));
            s.push_str("a:\n");
        }
        assert!(d(&s).is_ok());
        let f = format!("t[1]{{{}x{}}}:\n  1", "a{".repeat(100), "}".repeat(100));
        assert_eq!(d(&f).unwrap_err().code(), "TOON_TOO_DEEP");
    }

    #[test]
    fn path_expansion() {
        let x = |s: &str, strict: bool| decode(s, &DecodeOptions { strict, expand_paths: ExpandPaths::Safe, ..Default::default() });
        assert_eq!(x("a.b.c: 1\na.b.d: 2\na.e: 3", true).unwrap(), json!({"a": {"b": {"c": 1, "d": 2}, "e": 3}}));
        assert_eq!(x("data.meta.items[2]: a,b", true).unwrap(), json!({"data": {"meta": {"items": ["a", "b"]}}}));
        assert_eq!(x("t[1]{a.b,c}:\n  1,2", true).unwrap(), json!({"t": [{"a": {"b": 1}, "c": 2}]}));
        assert_eq!(x("a-b.c: 1\n1a.b: 2\na..b: 3", true).unwrap(), json!({"a-b.c": 1, "1a.b": 2, "a..b": 3}));
        assert_eq!(d("a.b: 1").unwrap(), json!({"a.b": 1}));
        // Keys written in quotes stay literal wherever they are.
        assert_eq!(
            x("\"a.b\": 1\n\"c.d\"[1]: 2\nt[1]{\"e.f\"}:\n  3\nk[1:]{v}:\n  \"g.h\": 4", true).unwrap(),
            json!({"a.b": 1, "c.d": [2], "t": [{"e.f": 3}], "k": {"g.h": {"v": 4}}})
        );
        let e = x("a.b: 1\na: 2", true).unwrap_err();
        assert_eq!((e.code(), e.line()), ("TOON_EXPANSION_CONFLICT", None));
        assert!(e.message().starts_with("Path expansion conflict at key \"a\": cannot merge object with number"));
        let e = x("a: 1\na.b: 2", true).unwrap_err();
        assert!(e.message().starts_with("Path expansion conflict at segment \"a\": expected object but found number"));
        assert_eq!(x("a.b: 1\na: 2", false).unwrap(), json!({"a": 2}));
        assert_eq!(x("a: 1\na.b: 2", false).unwrap(), json!({"a": {"b": 2}}));
        let deep = format!("{}: 1", vec!["a"; EXPAND_MAX_DEPTH].join("."));
        assert_eq!(x(&deep, true).unwrap_err().code(), "TOON_TOO_DEEP");
        let ok = format!("{}: 1", vec!["a"; EXPAND_MAX_DEPTH - 1].join("."));
        assert_eq!(x(&ok, true).unwrap().pointer(&format!("/{}", vec!["a"; EXPAND_MAX_DEPTH - 1].join("/"))), Some(&json!(1)));
        let mut lines = String::new();
        for i in 0..EXPAND_MAX_DEPTH + 1 {
            lines.push_str(&format!("{}a:\n", "  ".repeat(i)));
        }
        assert_eq!(x(&lines, true).unwrap_err().code(), "TOON_TOO_DEEP");
        assert!(d(&lines).is_ok());
    }

    #[test]
    fn bytes_input() {
        let e = decode_bytes(b"a: 1\nb: x\xffy", &DecodeOptions::default()).unwrap_err();
        assert_eq!((e.code(), e.line(), e.column()), ("TOON_INVALID_UTF8", Some(2), Some(5)));
        assert_eq!(decode_bytes("\u{feff}a: é".as_bytes(), &DecodeOptions::default()).unwrap(), json!({"a": "é"}));
    }

    #[test]
    fn find2_matches_naive() {
        // Every length around the word and hand-over boundaries, the
        // matches at every place, and bytes with the high bit set.
        for len in 0..80usize {
            for at in 0..=len {
                for (a, b) in [(b':', b'"'), (b'"', b'\\'), (b'\n', b'\n'), (0xC3, b','), (0x80, 0x80)] {
                    let mut hay: Vec<u8> = (0..len).map(|i| [b'x', 0xA9, b' ', 0x7F, 0x01][i % 5]).collect();
                    if at < len {
                        hay[at] = b;
                        if at + 3 < len {
                            hay[at + 3] = a;
                        }
                    }
                    let naive = hay.iter().position(|&c| c == a || c == b);
                    assert_eq!(find2(&hay, a, b), naive, "{len} {at} {a} {b}");
                }
            }
        }
    }

    #[test]
    fn find_byte_matches_naive() {
        let long = format!("{}\n{}\n\n{}", "x".repeat(70), "y".repeat(31), "z".repeat(40));
        for hay in [&b"abcdefgh\nijklmnopqrstuvwxyz\n0123456789"[..], long.as_bytes(), b"", b"\n", "é\n😀\n".as_bytes()] {
            for from in 0..=hay.len() + 1 {
                let naive = hay.get(from..).and_then(|r| r.iter().position(|&c| c == b'\n')).map(|p| p + from);
                assert_eq!(find_byte(hay, from, b'\n'), naive, "{from}");
            }
        }
    }

    mod props {
        use super::super::*;
        use proptest::prelude::*;

        /// Lines of TOON-ish tokens: keys, headers, field lists, list
        /// markers, quotes, escapes, delimiters, comments.
        fn toonish() -> impl Strategy<Value = String> {
            let token = prop::sample::select(vec![
                "a", "b", "k", "\"k\"", "\"a b\"", ":", ": ", " ", ",", "|", "\t", "[2]", "[1]", "[0]", "[2:]", "[2|]",
                "[1\t]", "{a,b}", "{a}", "{g{x}}", "- ", "-", "1", "-0", "1e5", "05", "x", "\"", "\\n", "\\u00e9",
                "\\ud800", "#", "[]", "{", "}", "[", "]", "\r", "é", "😀", "\u{feff}",
            ]);
            let indent = prop::sample::select(vec!["", "", "  ", "    ", "      ", " ", "   ", "\t", "  \t"]);
            let line = (indent, prop::collection::vec(token, 0..7)).prop_map(|(i, t)| format!("{i}{}", t.concat()));
            prop::collection::vec(line, 0..8).prop_map(|l| l.join("\n"))
        }

        fn opts(strict: bool, indent: usize) -> DecodeOptions {
            DecodeOptions { strict, indent, ..Default::default() }
        }

        proptest! {
            #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

            #[test]
            fn never_panics_and_errors_are_placed(text in toonish(), strict: bool, indent in 1usize..5) {
                if let Err(e) = decode(&text, &opts(strict, indent)) {
                    prop_assert!(e.code().starts_with("TOON_"));
                    let lines = text.split('\n').count();
                    prop_assert!(e.line().is_some_and(|l| l >= 1 && l <= lines), "{e:?} for {lines} lines");
                    prop_assert!(!e.message().is_empty());
                }
            }

            /// Strict mode only adds checks: what it accepts, non-strict
            /// mode decodes to the same value (true of the reference on the
            /// differential corpus).
            #[test]
            fn strict_acceptance_implies_same_lax_value(text in toonish(), indent in 1usize..5) {
                if let Ok(v) = decode(&text, &opts(true, indent)) {
                    prop_assert_eq!(decode(&text, &opts(false, indent)).ok(), Some(v));
                }
            }

            /// The event stream describes the value `decode` gives, or ends
            /// with its error; the lines so far give a prefix of it, and an
            /// error there is the whole text's error.
            #[test]
            fn events_agree_with_decode(text in toonish(), strict: bool, indent in 1usize..5, seed: u64) {
                use super::super::events::tests::{as_doubles, assert_streams_agree, events_of, value_of};
                let o = opts(strict, indent);
                // Given in pieces, byte by byte or line by line: the same.
                assert_streams_agree(&text, &o, seed);
                let (all, r) = events_of(&text, &o, Input::Whole);
                match decode(&text, &o) {
                    Ok(v) => {
                        prop_assert_eq!(r.as_ref().ok(), Some(&Progress::Done));
                        prop_assert_eq!(value_of(&all), Some(as_doubles(v)));
                    }
                    Err(e) => {
                        let got = r.as_ref().err().map(|g| (g.code(), g.line(), g.column(), g.message().to_string()));
                        prop_assert_eq!(got, Some((e.code(), e.line(), e.column(), e.message().to_string())));
                    }
                }
                let lines: Vec<&str> = text.split('\n').collect();
                for n in 1..=lines.len() {
                    let (some, rs) = events_of(&lines[..n].join("\n"), &o, Input::SoFar);
                    prop_assert!(some.len() <= all.len() && some[..] == all[..some.len()], "{:?}", &lines[..n]);
                    match rs {
                        Ok(p) => prop_assert_eq!(p, Progress::NeedsMore),
                        Err(e) => {
                            prop_assert_eq!(some.len(), all.len());
                            let whole = r.as_ref().err().map(|g| (g.code(), g.line(), g.column()));
                            prop_assert_eq!(whole, Some((e.code(), e.line(), e.column())));
                        }
                    }
                }
            }

            /// Doubling every indentation and the indent size changes nothing
            /// but the numbers in messages.
            #[test]
            fn indentation_scales(text in toonish(), strict: bool) {
                let doubled: Vec<String> = text
                    .split('\n')
                    .map(|l| {
                        let n = l.len() - l.trim_start_matches(' ').len();
                        format!("{}{}", " ".repeat(2 * n), &l[n..])
                    })
                    .collect();
                let a = decode(&text, &opts(strict, 2));
                let b = decode(&doubled.join("\n"), &opts(strict, 4));
                prop_assert_eq!(a.as_ref().ok(), b.as_ref().ok());
                prop_assert_eq!(a.map_err(|e| (e.code(), e.line())).err(), b.map_err(|e| (e.code(), e.line())).err());
            }

            /// The value read while checking a number's form is the one the
            /// general parsers give: `i64` for an integer literal, else the
            /// correctly rounded double with `-0.0` as `0.0`.
            #[test]
            fn quick_numbers_are_exact(
                text in "-?(0|[1-9][0-9]{0,20})(\\.[0-9]{1,24})?([eE][+-]?[0-9]{1,3})?",
            ) {
                let (integer, quick) = number_form(text.as_bytes()).expect("matches the number grammar");
                prop_assert_eq!(integer, !text.contains(['.', 'e', 'E']));
                match quick {
                    Some(QuickNumber::Int(i)) => prop_assert_eq!(Ok(i), text.parse::<i64>()),
                    Some(QuickNumber::Float(f)) => {
                        let want = text.parse::<f64>().expect("a decimal");
                        prop_assert_eq!(f.to_bits(), if want == 0.0 { 0.0f64 } else { want }.to_bits());
                    }
                    None => {}
                }
            }

            /// One scan gives what `is_data_row` and `Cells` give.
            #[test]
            fn split_row_is_data_row_and_cells(
                text in "[ab:,|\t\"\\\\ ]{0,24}",
                delim in prop::sample::select(vec![b',', b'|', b'\t']),
            ) {
                let mut cells = Vec::new();
                let row = split_row(&text, delim, &mut cells);
                prop_assert_eq!(row, is_data_row(&text, delim));
                if row {
                    prop_assert_eq!(cells, Cells::new(&text, delim).collect::<Vec<_>>());
                }
            }

            /// `plain_cells` gives `split_row`'s cells and verdict, and a
            /// number cell is one `number_form` reads whole, as it read it.
            #[test]
            fn plain_cells_are_split_row(
                text in "[0-9ab:.eE+,|\t\"\\ -]{0,24}",
                delim in prop::sample::select(vec![b',', b'|', b'\t']),
            ) {
                let (mut cells, mut plain) = (Vec::new(), Vec::new());
                let row = split_row(&text, delim, &mut cells);
                prop_assert_eq!(plain_cells(&text, delim, &mut plain), row);
                if row {
                    let texts: Vec<&str> = plain.iter().map(|c| match *c {
                        PlainCell::Number(t, _) | PlainCell::Token(t) => t,
                    }).collect();
                    prop_assert_eq!(&texts, &cells);
                    for c in &plain {
                        if let PlainCell::Number(t, n) = *c {
                            prop_assert_eq!(number_form(t.as_bytes()), Some((n.integer, n.quick)));
                        }
                    }
                }
            }

            #[test]
            fn bytes_agree_with_text(bytes in prop::collection::vec(any::<u8>(), 0..64), strict: bool) {
                let got = decode_bytes(&bytes, &opts(strict, 2));
                match std::str::from_utf8(&bytes) {
                    Ok(text) => prop_assert_eq!(got, decode(text, &opts(strict, 2))),
                    Err(_) => prop_assert_eq!(got.map_err(|e| e.code()), Err("TOON_INVALID_UTF8")),
                }
            }
        }
    }
}

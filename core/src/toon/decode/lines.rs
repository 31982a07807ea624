//! The line scanner: the text split into lines on demand, with their
//! indentation measured (depth, tabs, strict-mode checks) and comment and
//! blank lines skipped; and the scans inside a line that the rest of the
//! decoder builds on: byte searches, slicing and trimming, quoted sections,
//! braces, telling a header, a `key: value` line or a table row apart, and
//! splitting a row into its cells.

use super::errors::need_more;
use super::scalars::{number_prefix, NumberPrefix};
use crate::error::{Error, Format, Result};

// ---------------------------------------------------------------- lines

/// One significant line (not blank, not a comment).
#[derive(Clone, Copy, Debug)]
pub(super) struct Line<'a> {
    /// The line without indentation and trailing spaces (for a list item,
    /// what follows `- `).
    pub(super) content: &'a str,
    /// Byte offset of the line's first byte (after a BOM), for columns.
    pub(super) raw_start: usize,
    pub(super) depth: usize,
    /// 1-based, counting every line of the text.
    pub(super) number: usize,
}

/// Splits the text into lines on demand, as the reference's scanner does:
/// `\n` separates lines, one trailing `\r` is dropped, a BOM is skipped on
/// line 1, comment lines (`#` after spaces only) and blank lines are skipped
/// (blank ones remembered in strict mode for the blank-line rule).
pub(super) struct Reader<'a> {
    pub(super) text: &'a str,
    /// Start of the next unread line; past the end once all are read.
    pub(super) pos: usize,
    pub(super) number: usize,
    pub(super) peeked: Option<Line<'a>>,
    /// The last line consumed by `next`.
    pub(super) last: Option<Line<'a>>,
    /// Line numbers of blank lines seen so far (strict mode only), ascending.
    pub(super) blanks: Vec<usize>,
    pub(super) indent: usize,
    pub(super) strict: bool,
    /// The text is the lines of a stream read so far, and more may follow:
    /// reading past its last line is [`need_more`], not the end.
    pub(super) more: bool,
    /// Offsets of `\n` bytes that do not end a line, ascending (a stream's
    /// lines given one by one may hold `\n`, which the reference keeps in
    /// the line: [`StreamDecoder::push_line`](super::StreamDecoder::push_line)); those before `pos` are
    /// dropped as lines are read. Empty for a text.
    pub(super) joins: &'a [usize],
}

impl<'a> Reader<'a> {
    /// The next line, read once and then held until consumed (the decoder
    /// peeks at each line a few times).
    #[inline]
    pub(super) fn peek(&mut self) -> Result<Option<Line<'a>>> {
        if let Some(line) = self.peeked {
            return Ok(Some(line));
        }
        self.peeked = self.scan()?;
        Ok(self.peeked)
    }

    #[inline]
    pub(super) fn next(&mut self) -> Result<Option<Line<'a>>> {
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
    pub(super) fn blank_between(&self, start: usize, end: usize) -> Option<usize> {
        let i = self.blanks.partition_point(|&n| n <= start);
        self.blanks.get(i).copied().filter(|&n| n < end)
    }
}

/// Index of the first `needle` at or after `from`.
#[inline]
pub(super) fn find_byte(hay: &[u8], from: usize, needle: u8) -> Option<usize> {
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
pub(super) fn find2(hay: &[u8], a: u8, b: u8) -> Option<usize> {
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

// ---------------------------------------------------------------- inside a line

/// `s[a..b]` for indices the scanners found on ASCII bytes (always char
/// boundaries); never panics.
#[inline]
pub(super) fn sub(s: &str, a: usize, b: usize) -> &str {
    debug_assert!(s.is_char_boundary(a) && s.is_char_boundary(b), "slice {a}..{b} of {s:?}");
    s.get(a..b).unwrap_or_default()
}

#[inline]
pub(super) fn from(s: &str, a: usize) -> &str {
    sub(s, a, s.len())
}

/// Trim ASCII spaces only (not tabs, not other whitespace). (A byte loop:
/// `trim_matches(' ')` goes through the generic char searcher, which shows
/// up in profiles since every token passes here.)
#[inline]
pub(super) fn trim_spaces(s: &str) -> &str {
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
pub(super) fn trim_ws(s: &str) -> &str {
    s.trim_matches([' ', '\t'])
}

/// Index of the `"` closing the quote at `start`; `\` skips the next byte.
pub(super) fn find_closing_quote(s: &[u8], start: usize) -> Option<usize> {
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
pub(super) fn find_unquoted(s: &[u8], ch: u8, start: usize) -> Option<usize> {
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
pub(super) fn find_matching_brace(s: &[u8], start: usize) -> Option<usize> {
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

pub(super) fn is_array_header_content(content: &str) -> bool {
    trim_spaces(content).starts_with('[') && find_unquoted(content.as_bytes(), b':', 0).is_some()
}

pub(super) fn is_key_value_content(content: &str) -> bool {
    find_unquoted(content.as_bytes(), b':', 0).is_some()
}

// ---------------------------------------------------------------- rows

/// A tabular row (rather than a `key: value` line): no unquoted colon, or
/// a delimiter before the first one. One scan that stops at whichever of
/// the two comes first.
pub(super) fn is_data_row(content: &str, delim: u8) -> bool {
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
pub(super) fn split_row<'a>(content: &'a str, delim: u8, out: &mut Vec<&'a str>) -> bool {
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
pub(super) enum PlainCell<'a> {
    Number(&'a str, NumberPrefix),
    Token(&'a str),
}

/// [`split_row`] in one pass that also reads each number as it finds it
/// (most cells of most tables): the same cells in `out`, and false for a
/// `key: value` line.
pub(super) fn plain_cells<'a>(content: &'a str, delim: u8, out: &mut Vec<PlainCell<'a>>) -> bool {
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
pub(super) struct Cells<'a> {
    s: &'a str,
    pos: usize,
    done: bool,
    delim: u8,
}

impl<'a> Cells<'a> {
    pub(super) fn new(s: &'a str, delim: u8) -> Self {
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

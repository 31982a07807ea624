//! The CBOR layer: a writer that produces what `cbor4ii::serde::to_vec`
//! (cbor4ii 0.3, used by libp2p's request-response cbor codec) writes, and a
//! reader whose primitives behave exactly like cbor4ii's serde
//! `Deserializer` over a `SliceReader`, quirks included, so that the typed
//! decoders in [`super::model`] accept exactly what kameo accepts:
//!
//! - A length/argument head is checked with `byte & !(major << 5)`, so heads
//!   of some other major types pass: a byte string may start with an
//!   unsigned-integer head, a text string with an unsigned, negative or
//!   byte-string head, an array with an unsigned head, a map with an
//!   unsigned, negative or array head.
//! - Integers may be non-minimal, but only as wide as the target type
//!   (`0x19` is rejected for a `u8`, `0x1b` for a `u32`).
//! - Indefinite byte/text strings may nest, and their closing `0xFF` is left
//!   unread (a later `is_break` or trailing-byte tolerance absorbs it).
//! - A unit variant written as a one-entry map leaves its value unread.
//! - Nesting is limited by a depth budget of 256 with the same steps
//!   (enum, map, seq, `Some`, each indefinite chunk, each ignored item).
//!
//! Nothing allocates more than the input holds: lengths are checked
//! against the bytes present and recursion is bounded by the depth budget.

use super::err;
use crate::error::{Error, Result};
use std::borrow::Cow;

pub(crate) const MAJOR_UNSIGNED: u8 = 0;
pub(crate) const MAJOR_NEGATIVE: u8 = 1;
pub(crate) const MAJOR_BYTES: u8 = 2;
pub(crate) const MAJOR_TEXT: u8 = 3;
pub(crate) const MAJOR_ARRAY: u8 = 4;
pub(crate) const MAJOR_MAP: u8 = 5;
pub(crate) const MAJOR_TAG: u8 = 6;

const FALSE: u8 = 0xF4;
const TRUE: u8 = 0xF5;
const NULL: u8 = 0xF6;
const UNDEFINED: u8 = 0xF7;
const BREAK: u8 = 0xFF;
const EMPTY_ARRAY: u8 = 0x80;
const ONE_ENTRY_MAP: u8 = 0xA1;

/// cbor4ii's `SliceReader` recursion limit.
pub const MAX_DEPTH: usize = 256;

// ---------------------------------------------------------------- writer

/// Appends CBOR items the way cbor4ii's serde serializer writes them:
/// minimal heads, definite lengths.
pub(crate) struct Writer {
    pub(crate) out: Vec<u8>,
}

impl Writer {
    pub(crate) fn new() -> Writer {
        Writer { out: Vec::with_capacity(128) }
    }

    pub(crate) fn head(&mut self, major: u8, v: u64) {
        let m = major << 5;
        if v < 24 {
            self.out.push(m | v as u8);
        } else if v <= 0xFF {
            self.out.extend_from_slice(&[m | 0x18, v as u8]);
        } else if v <= 0xFFFF {
            self.out.push(m | 0x19);
            self.out.extend_from_slice(&(v as u16).to_be_bytes());
        } else if v <= 0xFFFF_FFFF {
            self.out.push(m | 0x1a);
            self.out.extend_from_slice(&(v as u32).to_be_bytes());
        } else {
            self.out.push(m | 0x1b);
            self.out.extend_from_slice(&v.to_be_bytes());
        }
    }

    pub(crate) fn map(&mut self, len: usize) {
        self.head(MAJOR_MAP, len as u64);
    }

    pub(crate) fn text(&mut self, s: &str) {
        self.head(MAJOR_TEXT, s.len() as u64);
        self.out.extend_from_slice(s.as_bytes());
    }

    /// `serialize_bytes`: a byte string.
    pub(crate) fn bytes(&mut self, b: &[u8]) {
        self.head(MAJOR_BYTES, b.len() as u64);
        self.out.extend_from_slice(b);
    }

    /// A `Vec<u8>` through serde: an array of integers.
    pub(crate) fn byte_seq(&mut self, b: &[u8]) {
        self.head(MAJOR_ARRAY, b.len() as u64);
        for &x in b {
            if x < 24 {
                self.out.push(x);
            } else {
                self.out.extend_from_slice(&[0x18, x]);
            }
        }
    }

    pub(crate) fn u64(&mut self, v: u64) {
        self.head(MAJOR_UNSIGNED, v);
    }

    pub(crate) fn bool(&mut self, b: bool) {
        self.out.push(if b { TRUE } else { FALSE });
    }

    pub(crate) fn null(&mut self) {
        self.out.push(NULL);
    }

    /// `()`: an empty array.
    pub(crate) fn unit(&mut self) {
        self.out.push(EMPTY_ARRAY);
    }

    /// A unit variant: its name as a text string.
    pub(crate) fn unit_variant(&mut self, name: &str) {
        self.text(name);
    }

    /// Start of a newtype or struct variant: `{name: ...}`.
    pub(crate) fn variant(&mut self, name: &str) {
        self.out.push(ONE_ENTRY_MAP);
        self.text(name);
    }
}

// ---------------------------------------------------------------- reader

/// A cursor with cbor4ii's decoding primitives and depth budget.
pub(crate) struct Reader<'a> {
    input: &'a [u8],
    pub(crate) pos: usize,
    depth_left: usize,
}

impl<'a> Reader<'a> {
    pub(crate) fn new(input: &'a [u8]) -> Reader<'a> {
        Reader { input, pos: 0, depth_left: MAX_DEPTH }
    }

    pub(crate) fn error_at(&self, at: usize, code: &'static str, message: impl Into<String>) -> Error {
        err(code, message).at(at)
    }

    fn eof(&self, what: &str, want: usize) -> Error {
        self.error_at(self.pos, "KAMEO_EOF", format!("expected {what}: {want} more byte(s) needed, {} left", self.input.len() - self.pos))
    }

    fn mismatch(&self, at: usize, what: &str, byte: u8) -> Error {
        self.error_at(at, "KAMEO_CBOR_TYPE", format!("expected {what}, found CBOR byte {byte:#04x}"))
    }

    pub(crate) fn peek(&self, what: &str) -> Result<u8> {
        self.input.get(self.pos).copied().ok_or_else(|| self.eof(what, 1))
    }

    fn pull(&mut self, what: &str) -> Result<u8> {
        let b = self.peek(what)?;
        self.pos += 1;
        Ok(b)
    }

    fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8]> {
        let rest = &self.input[self.pos..];
        if n > rest.len() {
            return Err(self.eof(what, n));
        }
        self.pos += n;
        Ok(&rest[..n])
    }

    fn take_array<const N: usize>(&mut self, what: &str) -> Result<[u8; N]> {
        let mut a = [0u8; N];
        a.copy_from_slice(self.take(N, what)?);
        Ok(a)
    }

    /// `Read::step_in`: spend one level of the depth budget.
    pub(crate) fn step_in(&mut self) -> Result<()> {
        if self.depth_left == 0 {
            return Err(self.error_at(self.pos, "KAMEO_DEPTH_LIMIT", format!("expected at most {MAX_DEPTH} levels of nesting")));
        }
        self.depth_left -= 1;
        Ok(())
    }

    pub(crate) fn step_out(&mut self) {
        self.depth_left += 1;
    }

    /// `TypeNum::decode_u8/u16/u32/u64`: the head argument of an item of
    /// `major` (with cbor4ii's masking), at most `width` bytes wide.
    fn head(&mut self, major: u8, width: usize, what: &str) -> Result<u64> {
        let at = self.pos;
        let byte = self.pull(what)?;
        let n = match byte & !(major << 5) {
            x @ 0..=0x17 => u64::from(x),
            0x18 if width >= 1 => u64::from(self.pull(what)?),
            0x19 if width >= 2 => u64::from(u16::from_be_bytes(self.take_array(what)?)),
            0x1a if width >= 4 => u64::from(u32::from_be_bytes(self.take_array(what)?)),
            0x1b if width >= 8 => u64::from_be_bytes(self.take_array(what)?),
            _ => return Err(self.mismatch(at, what, byte)),
        };
        Ok(n)
    }

    /// `decode_len`: `None` for the indefinite-length marker of `major`.
    fn len(&mut self, major: u8, what: &str) -> Result<Option<usize>> {
        let at = self.pos;
        if self.peek(what)? == (0x1F | (major << 5)) {
            self.pos += 1;
            return Ok(None);
        }
        let n = self.head(major, 8, what)?;
        usize::try_from(n)
            .map(Some)
            .map_err(|_| self.error_at(at, "KAMEO_LENGTH_OVERFLOW", format!("{what}: length {n} does not fit in memory")))
    }

    /// `decode_bytes`: a definite string is borrowed from the input; an
    /// indefinite one is gathered into `buf` chunk by chunk (chunks may be
    /// indefinite themselves), and its `0xFF` is not consumed.
    fn string_bytes(&mut self, major: u8, what: &str, buf: &mut Vec<u8>) -> Result<Option<&'a [u8]>> {
        match self.len(major, what)? {
            Some(len) => self.take(len, what).map(Some),
            None => {
                while self.peek(what)? != BREAK {
                    self.step_in()?;
                    if let Some(chunk) = self.string_bytes(major, what, buf)? {
                        buf.extend_from_slice(chunk);
                    }
                    self.step_out();
                }
                Ok(None)
            }
        }
    }

    /// `deserialize_str` / `deserialize_identifier`.
    pub(crate) fn str(&mut self, what: &str) -> Result<Cow<'a, str>> {
        let at = self.pos;
        let mut buf = Vec::new();
        let bad_utf8 = |r: &Self| r.error_at(at, "KAMEO_INVALID_UTF8", format!("expected {what} in valid UTF-8"));
        match self.string_bytes(MAJOR_TEXT, what, &mut buf)? {
            Some(b) => std::str::from_utf8(b).map(Cow::Borrowed).map_err(|_| bad_utf8(self)),
            None => String::from_utf8(buf).map(Cow::Owned).map_err(|_| bad_utf8(self)),
        }
    }

    /// `deserialize_bytes`.
    pub(crate) fn bytes(&mut self, what: &str) -> Result<Cow<'a, [u8]>> {
        let mut buf = Vec::new();
        Ok(match self.string_bytes(MAJOR_BYTES, what, &mut buf)? {
            Some(b) => Cow::Borrowed(b),
            None => Cow::Owned(buf),
        })
    }

    pub(crate) fn array_len(&mut self, what: &str) -> Result<Option<usize>> {
        self.len(MAJOR_ARRAY, what)
    }

    pub(crate) fn map_len(&mut self, what: &str) -> Result<Option<usize>> {
        self.len(MAJOR_MAP, what)
    }

    /// `dec::is_break`: consumes a `0xFF` when there is one.
    pub(crate) fn is_break(&mut self) -> Result<bool> {
        if self.peek("an item or a break")? == BREAK {
            self.pos += 1;
            Ok(true)
        } else {
            Ok(false)
        }
    }

    pub(crate) fn remaining(&self) -> usize {
        self.input.len() - self.pos
    }

    pub(crate) fn u64(&mut self, what: &str) -> Result<u64> {
        self.head(MAJOR_UNSIGNED, 8, what)
    }

    pub(crate) fn u32(&mut self, what: &str) -> Result<u32> {
        self.head(MAJOR_UNSIGNED, 4, what).map(|n| n as u32)
    }

    pub(crate) fn u8(&mut self, what: &str) -> Result<u8> {
        self.head(MAJOR_UNSIGNED, 1, what).map(|n| n as u8)
    }

    pub(crate) fn bool(&mut self, what: &str) -> Result<bool> {
        let at = self.pos;
        match self.peek(what)? {
            FALSE => {
                self.pos += 1;
                Ok(false)
            }
            TRUE => {
                self.pos += 1;
                Ok(true)
            }
            b => Err(self.mismatch(at, what, b)),
        }
    }

    /// `deserialize_unit`: exactly an empty definite array.
    pub(crate) fn unit(&mut self, what: &str) -> Result<()> {
        let at = self.pos;
        let b = self.pull(what)?;
        if b == EMPTY_ARRAY {
            Ok(())
        } else {
            Err(self.mismatch(at, what, b))
        }
    }

    /// `deserialize_option` head: `false` (and consumed) for null or
    /// undefined; `true` when a value follows (the caller steps in).
    pub(crate) fn option_is_some(&mut self, what: &str) -> Result<bool> {
        match self.peek(what)? {
            NULL | UNDEFINED => {
                self.pos += 1;
                Ok(false)
            }
            _ => Ok(true),
        }
    }

    /// `EnumAccessor::enum_` then the variant identifier: a text string
    /// (variant name alone), or `0xA1` followed by the name. The caller has
    /// stepped in and reads the variant's content, if any, next.
    pub(crate) fn variant(&mut self, what: &str) -> Result<(usize, Cow<'a, str>)> {
        let at = self.pos;
        let b = self.peek(what)?;
        if b >> 5 == MAJOR_TEXT {
        } else if b == ONE_ENTRY_MAP {
            self.pos += 1;
        } else {
            return Err(self.mismatch(at, what, b));
        }
        let name_at = self.pos;
        Ok((name_at, self.str(what)?))
    }

    /// `dec::IgnoredAny`: skip one item of any type (each nested item
    /// spends a level of the depth budget).
    pub(crate) fn ignored_any(&mut self) -> Result<()> {
        const WHAT: &str = "an ignored value";
        self.step_in()?;
        let at = self.pos;
        let byte = self.peek(WHAT)?;
        let major = byte >> 5;
        match major {
            MAJOR_UNSIGNED | MAJOR_NEGATIVE => {
                let extra = match byte & 0x1F {
                    0..=0x17 => 0,
                    0x18 => 1,
                    0x19 => 2,
                    0x1a => 4,
                    0x1b => 8,
                    _ => return Err(self.mismatch(at, WHAT, byte)),
                };
                self.take(1 + extra, WHAT)?;
            }
            MAJOR_BYTES | MAJOR_TEXT | MAJOR_ARRAY | MAJOR_MAP => match self.len(major, WHAT)? {
                Some(len) => match major {
                    MAJOR_BYTES | MAJOR_TEXT => {
                        self.take(len, WHAT)?;
                    }
                    _ => {
                        // every item takes at least one byte, so a huge
                        // count ends at the end of the input
                        for _ in 0..len {
                            self.ignored_any()?;
                            if major == MAJOR_MAP {
                                self.ignored_any()?;
                            }
                        }
                    }
                },
                None => {
                    while !self.is_break()? {
                        self.ignored_any()?;
                        if major == MAJOR_MAP {
                            self.ignored_any()?;
                        }
                    }
                }
            },
            MAJOR_TAG => {
                self.head(MAJOR_TAG, 8, WHAT)?;
                self.ignored_any()?;
            }
            _ => {
                let extra = match byte {
                    FALSE | TRUE | NULL | UNDEFINED => 0,
                    0xF9 => 2,
                    0xFA => 4,
                    0xFB => 8,
                    _ => {
                        return Err(self.error_at(
                            at,
                            "KAMEO_CBOR_UNSUPPORTED",
                            format!("expected a supported CBOR item, found {byte:#04x}"),
                        ))
                    }
                };
                self.take(1 + extra, WHAT)?;
            }
        }
        self.step_out();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writer_heads_are_minimal() {
        let mut w = Writer::new();
        for v in [0u64, 23, 24, 255, 256, 65535, 65536, u32::MAX as u64, u32::MAX as u64 + 1, u64::MAX] {
            w.u64(v);
        }
        assert_eq!(
            w.out,
            [
                &[0x00][..],
                &[0x17],
                &[0x18, 24],
                &[0x18, 255],
                &[0x19, 1, 0],
                &[0x19, 255, 255],
                &[0x1a, 0, 1, 0, 0],
                &[0x1a, 255, 255, 255, 255],
                &[0x1b, 0, 0, 0, 1, 0, 0, 0, 0],
                &[0x1b, 255, 255, 255, 255, 255, 255, 255, 255],
            ]
            .concat()
        );
    }

    #[test]
    fn heads_of_other_majors_pass_the_mask() {
        // a text string read from an unsigned, negative or byte-string head
        for head in [0x02u8, 0x22, 0x42, 0x62] {
            let input = [head, b'h', b'i'];
            assert_eq!(Reader::new(&input).str("s").unwrap(), "hi");
        }
        assert!(Reader::new(&[0x82, b'h', b'i']).str("s").is_err());
        // a byte string from an unsigned head, not from a text head
        assert_eq!(&*Reader::new(&[0x01, 7]).bytes("b").unwrap(), &[7]);
        assert!(Reader::new(&[0x61, 7]).bytes("b").is_err());
        // maps accept unsigned, negative and array heads
        for head in [0x01u8, 0x21, 0x81, 0xA1] {
            assert_eq!(Reader::new(&[head]).map_len("m").unwrap(), Some(1));
        }
        assert!(Reader::new(&[0x41]).map_len("m").is_err());
        assert!(Reader::new(&[0xC1]).map_len("m").is_err());
    }

    #[test]
    fn integer_width_limits() {
        assert_eq!(Reader::new(&[0x18, 200]).u8("u8").unwrap(), 200);
        assert!(Reader::new(&[0x19, 0, 1]).u8("u8").is_err());
        assert_eq!(Reader::new(&[0x1a, 0, 0, 0, 1]).u32("u32").unwrap(), 1);
        assert!(Reader::new(&[0x1b, 0, 0, 0, 0, 0, 0, 0, 1]).u32("u32").is_err());
        assert_eq!(Reader::new(&[0x1b, 0, 0, 0, 0, 0, 0, 0, 1]).u64("u64").unwrap(), 1);
        assert!(Reader::new(&[0x20]).u64("u64").is_err());
    }

    #[test]
    fn indefinite_strings_leave_the_break() {
        let input = [0x7F, 0x61, b'a', 0x7F, 0x61, b'b', 0xFF, 0xFF];
        let mut r = Reader::new(&input);
        assert_eq!(r.str("s").unwrap(), "ab");
        assert_eq!(r.pos, 6);
        assert!(Reader::new(&[0x7F, 0x61, b'a']).str("s").is_err());
        // chunks are concatenated before the UTF-8 check
        let input = [0x7F, 0x61, 0xC3, 0x61, 0xA9, 0xFF];
        assert_eq!(Reader::new(&input).str("s").unwrap(), "é");
    }

    #[test]
    fn ignored_any_and_depth() {
        let input = [0xC1, 0xBF, 0x01, 0x9F, 0xF9, 0, 0, 0xFF, 0xFF];
        let mut r = Reader::new(&input);
        r.ignored_any().unwrap();
        assert_eq!(r.pos, input.len());
        assert_eq!(Reader::new(&[0xF8, 1]).ignored_any().unwrap_err().code(), "KAMEO_CBOR_UNSUPPORTED");
        assert_eq!(Reader::new(&[0xFF]).ignored_any().unwrap_err().code(), "KAMEO_CBOR_UNSUPPORTED");
        let deep = vec![0x81; 300];
        assert_eq!(Reader::new(&deep).ignored_any().unwrap_err().code(), "KAMEO_DEPTH_LIMIT");
        let mut ok = vec![0x81; 255];
        ok.push(0);
        Reader::new(&ok).ignored_any().unwrap();
        let huge = [0x9B, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x00];
        assert_eq!(Reader::new(&huge).ignored_any().unwrap_err().code(), "KAMEO_EOF");
    }
}

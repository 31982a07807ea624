//! Scalars: quoted strings and their escapes, keys (quoted or plain), number
//! literals (the spec grammar, read in the same scan where that is exact),
//! and the primitive value a token stands for.

use std::borrow::Cow;

use super::errors::{bad_unicode_escape, syn, Syn};
use super::lines::{find_byte, find_closing_quote, find_unquoted, from, sub, trim_spaces, Line};
use super::sink::Sink;
use super::Decoder;
use crate::json::QuickNumber;

// ---------------------------------------------------------------- strings and keys

/// Resolve the escapes of a quoted string's inside (`\n \t \r \\ \"` and
/// `\uXXXX` outside the surrogate range), borrowing when there are none.
pub(super) fn unescape<'s>(inner: &'s str, scratch: &'s mut String) -> Result<&'s str, Syn> {
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

/// The range of a quoted token's inside, checking it is one whole quoted
/// string (`token` starts with `"`).
pub(super) fn quoted_inner(token: &str) -> Result<&str, Syn> {
    let b = token.as_bytes();
    let Some(close) = find_closing_quote(b, 0) else {
        return Err(syn("TOON_UNTERMINATED_STRING", "Unterminated string: missing closing quote (expected '\"')", token, 0));
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
pub(super) fn string_literal(token: &str) -> Result<Cow<'_, str>, Syn> {
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
pub(super) fn parse_key_token(content: &str) -> Result<(Cow<'_, str>, usize), Syn> {
    let b = content.as_bytes();
    if b.first() == Some(&b'"') {
        let Some(close) = find_closing_quote(b, 0) else {
            return Err(syn("TOON_UNTERMINATED_STRING", "Unterminated quoted key (expected '\"')", content, 0));
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
/// array header (`parse_header` in `headers.rs` gives `None`) and [`parse_key_token`]
/// takes the key up to that colon.
#[inline]
pub(super) fn plain_key_colon(content: &str) -> Option<usize> {
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

// ---------------------------------------------------------------- numbers

/// Does `t` match `-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?`? `Some(true)`
/// when it is an integer literal (no fraction, no exponent), with its
/// value when the same scan could read it exactly (see [`QuickNumber`]):
/// an integer of at most 18 digits, or a decimal without exponent whose
/// digits, read as one integer below 2^53, have at most 22 after the
/// point. That integer and the power of ten are then exact doubles, and
/// one IEEE division rounds their quotient correctly (Clinger's fast
/// path): the double `text.parse::<f64>()` gives. `-0` and `-0.0` give 0.
#[inline]
pub(super) fn number_form(t: &[u8]) -> Option<(bool, Option<QuickNumber>)> {
    number_prefix(t).filter(|n| n.end == t.len()).map(|n| (n.integer, n.quick))
}

/// The longest prefix of `t` that is a number literal, as [`number_form`]
/// reads a whole token (a literal followed by anything else is read as far
/// as it goes: `1.` gives `1`, `1e` gives `1`, `05` gives `0`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct NumberPrefix {
    pub(super) end: usize,
    pub(super) integer: bool,
    pub(super) quick: Option<QuickNumber>,
}

#[inline]
pub(super) fn number_prefix(t: &[u8]) -> Option<NumberPrefix> {
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
const POW10: [f64; 23] =
    [1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22];

// ---------------------------------------------------------------- primitives

impl<'a, V, K> Decoder<'a, V, K> {
    /// A primitive token: quoted string, `true`/`false`/`null`, number, or
    /// else the trimmed text as a string.
    pub(super) fn primitive<B: Sink<Value = V, Key = K>>(&mut self, b: &mut B, token: &'a str, line: &Line<'a>) -> Result<V, B::Error> {
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

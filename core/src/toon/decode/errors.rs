//! The decoder's errors in one place: the token-level error ([`Syn`], an
//! address in the text) and its conversion to a line and column, the
//! constructors of every other error, the helpers their messages use, and
//! the checks that raise them (indentation, nesting depth, declared counts,
//! blank lines, duplicate keys).

use std::borrow::Cow;

use super::expand::Tree;
use super::keys::SeenFrame;
use super::lines::{from, Line};
use super::{Decoder, EXPAND_MAX_DEPTH};
use crate::error::{Error, Format, Result};

/// An error found by a token-level helper: where it is (an address inside
/// the text), turned into a line and column by the decoder.
pub(super) struct Syn {
    code: &'static str,
    msg: String,
    at: usize,
}

#[cold]
pub(super) fn syn(code: &'static str, msg: impl Into<String>, s: &str, i: usize) -> Syn {
    Syn { code, msg: msg.into(), at: s.as_ptr() as usize + i }
}

/// The error a decoder of a stream's lines so far stops with when it needs
/// a line that has not come yet ([`NEED_MORE`]).
#[cold]
pub(super) fn need_more(line: usize) -> Error {
    Error::new(Format::Toon, NEED_MORE, "expected more lines (the stream has not ended)").at_line(line + 1, None)
}

/// The code of [`need_more`]'s error.
pub(crate) const NEED_MORE: &str = "TOON_NEED_MORE";

#[cold]
pub(super) fn utf8_error(bytes: &[u8], bad: usize) -> Error {
    let before = bytes.get(..bad).unwrap_or_default();
    let line_start = before.iter().rposition(|&c| c == b'\n').map_or(0, |i| i + 1);
    let line = before.iter().filter(|&&c| c == b'\n').count() + 1;
    // The prefix up to `bad` is valid UTF-8 by definition of valid_up_to.
    let column = std::str::from_utf8(before.get(line_start..).unwrap_or_default()).map_or(1, |s| s.chars().count() + 1);
    let found = bytes.get(bad).copied().unwrap_or(0);
    Error::new(Format::Toon, "TOON_INVALID_UTF8", format!("invalid UTF-8 byte 0x{found:02x} (expected UTF-8 text)"))
        .at_line(line, Some(column))
}

/// The 1-based column of byte `offset` of `text` on the line starting at
/// `line_start` (characters, as the reference counts them).
#[cold]
pub(super) fn column_between(text: &str, line_start: usize, offset: usize) -> Option<usize> {
    text.get(line_start..offset).map(|s| s.chars().count() + 1)
}

#[cold]
pub(super) fn internal() -> Error {
    Error::new(Format::Toon, "TOON_INTERNAL", "internal decoder error (expected a consistent frame stack)")
}

/// The reference's three messages for a bad `\u` escape at `i`, which
/// measure the four digits in UTF-16 units.
#[cold]
pub(super) fn bad_unicode_escape(inner: &str, i: usize) -> Syn {
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
        format!("Invalid escape sequence: \\u{digits} is a lone surrogate. Supplementary code points MUST appear as literal UTF-8")
    };
    syn("TOON_INVALID_ESCAPE", msg, inner, i)
}

/// A number written the way JavaScript's `String(n)` writes it (for
/// declared lengths in messages).
pub(super) fn js_number(n: f64) -> String {
    if n.is_infinite() {
        return "Infinity".into();
    }
    let mut out = Vec::new();
    crate::json::write_f64(&mut out, n);
    String::from_utf8(out).unwrap_or_default()
}

pub(super) fn show_delim(d: u8) -> &'static str {
    match d {
        b'\t' => "\\t",
        b'|' => "|",
        _ => ",",
    }
}

#[cold]
pub(super) fn too_deep_expanded() -> Error {
    Error::new(
        Format::Toon,
        "TOON_TOO_DEEP",
        format!("arrays and objects nested deeper than {EXPAND_MAX_DEPTH} levels after path expansion"),
    )
}

#[cold]
pub(super) fn key_conflict(key: &str, existing: &Tree, new: &Tree) -> Error {
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

impl<'a, V, K> Decoder<'a, V, K> {
    #[cold]
    pub(super) fn error_at(&self, line: &Line<'a>, code: &'static str, msg: impl Into<String>, addr: usize) -> Error {
        let offset = addr.wrapping_sub(self.text.as_ptr() as usize);
        Error::new(Format::Toon, code, msg).at_line(line.number, column_between(self.text, line.raw_start, offset))
    }

    /// An error about a whole line (column of its content).
    #[cold]
    pub(super) fn error(&self, line: &Line<'a>, code: &'static str, msg: impl Into<String>) -> Error {
        self.error_at(line, code, msg, line.content.as_ptr() as usize)
    }

    #[cold]
    pub(super) fn syn_error(&self, line: &Line<'a>, e: Syn) -> Error {
        self.error_at(line, e.code, e.msg, e.at)
    }

    pub(super) fn at<T>(&self, line: &Line<'a>, r: Result<T, Syn>) -> Result<T> {
        r.map_err(|e| self.syn_error(line, e))
    }

    #[cold]
    pub(super) fn over_indented(&self, line: &Line<'a>, expected: usize) -> Error {
        self.error(line, "TOON_OVER_INDENTED", format!("Over-indented line: expected depth {expected}, but found {}", line.depth))
    }

    pub(super) fn check_depth_jump(&self, line: &Line<'a>, parent: usize) -> Result<()> {
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
    pub(super) fn enter(&self, line: &Line<'a>, level: usize) -> Result<()> {
        if level >= self.max_depth {
            return Err(self.error(line, "TOON_TOO_DEEP", format!("arrays and objects nested deeper than {} levels", self.max_depth)));
        }
        Ok(())
    }

    #[inline]
    pub(super) fn check_count(&self, line: &Line<'a>, code: &'static str, actual: usize, expected: f64, what: &str) -> Result<()> {
        if actual as f64 != expected {
            return Err(self.count_error(line, code, actual, expected, what));
        }
        Ok(())
    }

    #[cold]
    pub(super) fn count_error(&self, line: &Line<'a>, code: &'static str, actual: usize, expected: f64, what: &str) -> Error {
        self.error(line, code, format!("Expected {} {what}, but got {actual}", js_number(expected)))
    }

    pub(super) fn check_no_blank(&self, start: Option<usize>, end: Option<usize>, what: &str) -> Result<()> {
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
    pub(super) fn note_key(&mut self, frame: Option<SeenFrame>, key: &Cow<'a, str>, line: &Line<'a>) -> Result<()> {
        if let Some(f) = frame {
            if !self.seen.insert(f, key) {
                return Err(self.duplicate_key(line, key));
            }
        }
        Ok(())
    }

    #[cold]
    pub(super) fn duplicate_key(&self, line: &Line<'a>, key: &str) -> Error {
        self.error(line, "TOON_DUPLICATE_KEY", format!("Duplicate sibling key \"{key}\" (expected unique keys in strict mode)"))
    }
}
